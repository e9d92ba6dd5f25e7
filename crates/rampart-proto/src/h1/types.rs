//! The parsed HTTP/1 message head and its framing. Offsets point into the buffer the
//! head was parsed from.

/// Most headers a message may carry (HAProxy's `tune.http.maxhdr` default).
pub const MAX_HEADERS: usize = 101;

/// A byte range `[start, end)` in the parsed buffer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Slice {
    pub start: u32,
    pub end: u32,
}

impl Slice {
    #[inline]
    pub fn get<'b>(&self, buf: &'b [u8]) -> &'b [u8] {
        &buf[self.start as usize..self.end as usize]
    }
    #[inline]
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Version {
    Http10,
    #[default]
    Http11,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    #[default]
    Get,
    Head,
    Post,
    Put,
    Delete,
    Options,
    Connect,
    Trace,
    Patch,
    Other,
}

impl Method {
    /// Methods that can be replayed safely on another connection (RFC 9110 §9.2.2).
    pub fn is_idempotent(self) -> bool {
        matches!(self, Method::Get | Method::Head | Method::Put | Method::Delete | Method::Options | Method::Trace)
    }
}

/// How the body of a message is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// No body at all (requests without CL/TE; HEAD, 1xx, 204, 304 responses).
    #[default]
    None,
    /// `Content-Length: n` (n may be 0).
    Length(u64),
    /// `Transfer-Encoding: ..., chunked`.
    Chunked,
    /// Response without length: the body ends when the server closes.
    UntilClose,
}

/// Which well-known header a header is, found once during parsing so that the
/// runtime never compares names again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HdrKind {
    #[default]
    Other,
    Connection,
    ContentLength,
    TransferEncoding,
    KeepAlive,
    ProxyConnection,
    Te,
    Upgrade,
    Host,
    Expect,
    Trailer,
}

/// One header: offsets of its name and (trimmed) value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Header {
    pub name: Slice,
    pub value: Slice,
    pub kind: HdrKind,
    /// Set by the parser for headers the proxy must not forward as they are:
    /// `Content-Length` when `Transfer-Encoding` is present, and the headers named by
    /// `Connection` tokens. The runtime may set it too.
    pub drop: bool,
}

/// Tokens seen in `Connection` headers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnTokens {
    pub close: bool,
    pub keep_alive: bool,
    pub upgrade: bool,
}

/// A parsed request or response head. Reuse one per connection side: `headers` keeps
/// its capacity between messages.
#[derive(Debug, Clone, Default)]
pub struct Head {
    /// Length of the head in bytes, final CRLF included: the body starts here.
    pub len: usize,
    pub version: Version,
    // --- request line
    pub method: Method,
    pub method_raw: Slice,
    pub uri: Slice,
    // --- status line
    pub status: u16,
    pub reason: Slice,
    // ---
    pub headers: Vec<Header>,
    pub framing: Framing,
    pub conn: ConnTokens,
    /// `Expect: 100-continue` (requests only).
    pub expect_continue: bool,
    /// Index in `headers` of the `Upgrade` header, if any.
    pub upgrade: Option<u16>,
    /// The message had both `Content-Length` and `Transfer-Encoding: chunked`: framed by
    /// chunked, `Content-Length` marked `drop`, and (as HAProxy) the connection must be
    /// closed after this exchange.
    pub cl_and_te: bool,
}

impl Head {
    /// Clears for the next message, keeping the header list's capacity.
    pub fn reset(&mut self) {
        let mut headers = std::mem::take(&mut self.headers);
        headers.clear();
        *self = Head { headers, ..Head::default() };
    }

    /// Whether the sender wants the connection kept after this message: HTTP/1.1
    /// unless `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`.
    pub fn wants_keep_alive(&self) -> bool {
        match self.version {
            Version::Http11 => !self.conn.close,
            Version::Http10 => self.conn.keep_alive && !self.conn.close,
        }
    }
}

/// Why a head or body is invalid. The runtime answers 400 (request) or 502 (response).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H1Error {
    /// The request or status line is malformed, or the version is not HTTP/1.x.
    StartLine,
    /// A header name is not a token, has a space before the colon, or a field has a
    /// CR, LF or NUL where it must not.
    HeaderSyntax,
    /// More than [`MAX_HEADERS`] headers.
    TooManyHeaders,
    /// The head does not fit in the space allowed (`tune.bufsize - tune.maxrewrite`).
    TooLarge,
    /// Malformed `Content-Length`, or several that disagree.
    ContentLength,
    /// `Transfer-Encoding` whose last coding is not `chunked` (request), or another
    /// unusable transfer coding.
    TransferEncoding,
    /// A chunk size line or chunk delimiter is malformed.
    Chunk,
    /// A response status outside 100..=599.
    Status,
}
