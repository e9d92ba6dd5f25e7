//! The parsed HTTP/1 message head and its framing. Offsets point into the buffer the
//! head was parsed from. The protocol-neutral parts (slices, method, version, header
//! entries) come from [`crate::http`] and are re-exported here.

pub use crate::http::{HdrKind, Header, Method, Slice, Version};

/// Most header fields a message may carry. HAProxy's `tune.http.maxhdr` defaults to 101
/// but counts the end-of-headers marker in it, so 100 fields pass and 101 are refused
/// (checked against haproxy 2.6.12: 400 on a request, 502 on a response).
pub const MAX_HEADERS: usize = 100;

/// The header fields a message may carry (`tune.http.maxhdr` minus one), process-wide.
static MAX_FIELDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(MAX_HEADERS);

/// Sets the most header fields (and trailers) a message may carry, from now on:
/// `tune.http.maxhdr <n>` allows `n - 1` (HAProxy counts the start line in it).
pub fn set_max_headers(n: usize) {
    MAX_FIELDS.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// The most header fields a message may carry ([`MAX_HEADERS`] unless
/// [`set_max_headers`] said otherwise).
#[inline]
pub fn max_headers() -> usize {
    MAX_FIELDS.load(std::sync::atomic::Ordering::Relaxed)
}

/// How the body of a message is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// No body at all: requests without CL/TE, CONNECT requests; responses to HEAD,
    /// 1xx, 204 and 304. After a CONNECT 2xx or a 101 the connection becomes a tunnel,
    /// which the runtime handles.
    #[default]
    None,
    /// `Content-Length: n` (n may be 0).
    Length(u64),
    /// `Transfer-Encoding: ..., chunked`.
    Chunked,
    /// Response without length: the body ends when the server closes (also a
    /// response whose `Transfer-Encoding` does not list `chunked`, RFC 9112 §6.3).
    UntilClose,
}

/// Tokens seen in `Connection` headers (all of them, comma lists, case-insensitive).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnTokens {
    pub close: bool,
    pub keep_alive: bool,
    pub upgrade: bool,
}

/// A parsed request or response head. Reuse one per connection side: `headers` keeps
/// its capacity between messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    /// Length of the head in bytes, final CRLF included: the body starts here.
    pub len: usize,
    pub version: Version,
    // --- request line
    pub method: Method,
    pub method_raw: Slice,
    pub uri: Slice,
    /// The part of `uri` to leave out on output: the default `:port` of an
    /// absolute-form target (`http://a:80/x` is sent as `http://a/x`, and every `Host`
    /// value then points at the target's host), HAProxy's scheme-based normalization.
    /// Empty when nothing is left out.
    pub uri_cut: Slice,
    // --- status line
    pub status: u16,
    pub reason: Slice,
    // ---
    pub headers: Vec<Header>,
    pub framing: Framing,
    pub conn: ConnTokens,
    /// `Expect: 100-continue` (the first item of the first `Expect` header) in an
    /// HTTP/1.1 request with `Content-Length` or chunks, as `http_handle_expect_hdr`.
    pub expect_continue: bool,
    /// Index in `headers` of the (first) `Upgrade` header, set only when the message
    /// also carries `Connection: upgrade`, and: for a request, only without a body
    /// (HAProxy drops the upgrade of a request with a body, `h1_postparse_req_hdrs`);
    /// for a response, only on a 101.
    pub upgrade: Option<u16>,
    /// A WebSocket handshake: `Connection: upgrade` with an `Upgrade` header naming
    /// `websocket`. The parser has checked the `Sec-WebSocket-Key` (request) or that a
    /// `Sec-WebSocket-Accept` is present (response).
    pub websocket: bool,
    /// The message had both `Content-Length` and `Transfer-Encoding`: framed by
    /// chunked (or, for a response whose `Transfer-Encoding` lists no coding, until
    /// close), `Content-Length` marked `drop`, and (as HAProxy) the connection must be
    /// closed after this exchange ([`Head::force_close`] is set too).
    pub cl_and_te: bool,
    /// HAProxy closes the connection after this exchange whatever the `Connection`
    /// header says: `Transfer-Encoding` together with `Content-Length`, or
    /// `Transfer-Encoding` in an HTTP/1.0 response (`H1_MF_CONN_CLO` in src/h1.c; an
    /// HTTP/1.0 request with it is refused).
    pub force_close: bool,
    /// Set by the owner, kept by [`Head::reset`]: parse as HAProxy does with `option
    /// accept-invalid-http-request` (or `-response`): bytes >= 0x80 in the request
    /// target, any byte but CR, LF and `:` in header names, and any version made of
    /// version characters are let through.
    pub relax: bool,
    /// With `relax`: where the first byte let through is (HAProxy's `err_pos`), for
    /// `show errors`.
    pub err_pos: Option<u32>,
}

impl Head {
    /// Clears for the next message, keeping the header list's capacity and `relax`.
    pub fn reset(&mut self) {
        let mut headers = std::mem::take(&mut self.headers);
        headers.clear();
        *self = Head { headers, relax: self.relax, ..Head::default() };
    }

    /// Whether the sender wants the connection kept after this message: HTTP/1.1
    /// unless `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`; never
    /// after a body delimited by the close, nor when [`Head::force_close`] is set.
    pub fn wants_keep_alive(&self) -> bool {
        if self.force_close || self.framing == Framing::UntilClose {
            return false;
        }
        match self.version {
            Version::Http10 => self.conn.keep_alive && !self.conn.close,
            // an HTTP/1 head is never parsed as 2 or 3
            Version::Http11 | Version::Http2 | Version::Http3 => !self.conn.close,
        }
    }
}

/// Why a head or body is invalid. [`H1Error::status`] gives the answer HAProxy sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H1Error {
    /// The request or status line is malformed, or the version is not `HTTP/d.d`
    /// (a request without version, HTTP/0.9 style, is refused too).
    StartLine,
    /// A header name is not a token, has a space before the colon, or a field has a
    /// CR, LF, NUL or other control character where it must not; obsolete line folding.
    HeaderSyntax,
    /// More than [`max_headers`] headers (or trailers).
    TooManyHeaders,
    /// The head (or a chunk-size line, or the trailer section of a chunked body) does
    /// not fit in the space allowed (`tune.bufsize - tune.maxrewrite`).
    TooLarge,
    /// Malformed `Content-Length`, or several that disagree.
    ContentLength,
    /// Malformed `Transfer-Encoding`: an empty list element or value, a coding that is
    /// not a token (with `;name=token` parameters), `chunked` with parameters or applied
    /// twice, a coding after `chunked`, a request whose last coding is not `chunked`,
    /// or any `Transfer-Encoding` in an HTTP/1.0 request.
    TransferEncoding,
    /// `identity` in a `Transfer-Encoding` list that is otherwise valid (a request's
    /// ends with `chunked`): not a transfer coding (RFC 2616's "no coding", removed by
    /// RFC 7230); a recipient that still reads it so would frame the body by
    /// `Content-Length` or by the close, not by chunks. HAProxy refuses it: 422 to a
    /// request, 502 for a response.
    Identity,
    /// An HTTP/1.0 GET, HEAD or DELETE request with a body: HAProxy answers 413
    /// (unless `h1-accept-payload-with-any-method` is set, which the caller checks).
    PayloadForbidden,
    /// No `Host` in an HTTP/1.1 request, several `Host` headers (even equal), a value
    /// that is not `uri-host [ ":" port ]`, an empty one with an absolute-form or
    /// CONNECT target, or one that does not match the target's authority.
    Host,
    /// A request target in no form its method allows (RFC 9112 §3.2): `*` but with
    /// OPTIONS, CONNECT without `host:port`, neither origin nor absolute form, a
    /// fragment (`#`), user info (`user@`) or an invalid host or port in the authority.
    Target,
    /// A WebSocket handshake without a 24-byte `Sec-WebSocket-Key` (request) or
    /// without `Sec-WebSocket-Accept` (response).
    WebSocket,
    /// A chunk size line or chunk delimiter is malformed.
    Chunk,
    /// A response status that is not three digits from 100 to 999.
    Status,
}

impl H1Error {
    /// The status HAProxy answers with: on a request 400, 413 or 422; on a response
    /// always 502.
    // COMPAT: HAProxy answers 422 to a request with a coding other than chunked
    // (`gzip, chunked`); rampart forwards it (RFC 9112 §6.1 allows any coding list that
    // ends with chunked).
    pub fn status(self, is_request: bool) -> u16 {
        match (is_request, self) {
            (false, _) => 502,
            (true, H1Error::PayloadForbidden) => 413,
            (true, H1Error::Identity) => 422,
            (true, _) => 400,
        }
    }
}

impl std::fmt::Display for H1Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            H1Error::StartLine => "malformed start line",
            H1Error::HeaderSyntax => "malformed header field",
            H1Error::TooManyHeaders => "too many header fields",
            H1Error::TooLarge => "header section too large",
            H1Error::ContentLength => "invalid content-length",
            H1Error::TransferEncoding => "invalid transfer-encoding",
            H1Error::Identity => "identity is not a transfer-coding",
            H1Error::PayloadForbidden => "HTTP/1.0 GET/HEAD/DELETE request with a body",
            H1Error::Host => "missing, repeated or invalid host",
            H1Error::Target => "invalid request target",
            H1Error::WebSocket => "incomplete websocket handshake",
            H1Error::Chunk => "malformed chunked body",
            H1Error::Status => "invalid response status",
        })
    }
}

impl std::error::Error for H1Error {}
