//! Protocol-neutral pieces of an HTTP message head, shared by every codec (HTTP/1
//! today, HTTP/2 later) and by the runtime's message model: byte ranges into a buffer,
//! the method, the version, and header entries with their well-known kind.
//!
//! HAProxy counterpart: the HTX start-line and header blocks (include/haproxy/htx-t.h),
//! `enum http_meth_t` and `find_http_meth()` (src/http.c).
//!
//! A [`Slice`] points either into the receive buffer a codec parsed, or, once a rule
//! rewrote something, into the per-message arena of owned bytes (its high bit says
//! which): a message no rule touches is forwarded straight from the receive buffer.

/// A byte range `[start, end)` in the parsed buffer, or in the message's arena when
/// [`Slice::in_arena`] (the high bit of `start` is set). Buffers and arenas stay below
/// 2 GiB, so the bit is never an offset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Slice {
    pub start: u32,
    pub end: u32,
}

impl Slice {
    /// The bit of `start` marking a slice of the arena.
    pub const ARENA: u32 = 1 << 31;

    /// The bytes of a buffer slice. Panics (in debug builds) on an arena slice: use the
    /// message's resolver then.
    #[inline]
    pub fn get<'b>(&self, buf: &'b [u8]) -> &'b [u8] {
        debug_assert!(!self.in_arena(), "arena slice read as a buffer slice");
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
    /// A slice of the arena covering `[start, end)`.
    #[inline]
    pub fn arena(start: usize, end: usize) -> Slice {
        debug_assert!(end < Slice::ARENA as usize && start <= end);
        Slice { start: start as u32 | Slice::ARENA, end: end as u32 | Slice::ARENA }
    }
    #[inline]
    pub fn in_arena(&self) -> bool {
        self.start & Slice::ARENA != 0
    }
    /// The bytes this slice designates, in `buf` or in `arena`.
    #[inline]
    pub fn resolve<'b>(&self, buf: &'b [u8], arena: &'b [u8]) -> &'b [u8] {
        if self.in_arena() {
            &arena[(self.start & !Slice::ARENA) as usize..(self.end & !Slice::ARENA) as usize]
        } else {
            &buf[self.start as usize..self.end as usize]
        }
    }
    /// The sub-range `[from, to)` of this slice (offsets relative to its start).
    #[inline]
    pub fn sub(&self, from: usize, to: usize) -> Slice {
        debug_assert!(from <= to && to <= self.len());
        Slice { start: self.start + from as u32, end: self.start + to as u32 }
    }
}

/// The protocol version of a message. On an HTTP/1 connection it is classified as
/// HAProxy does (`H1_MF_VER_11`): any `HTTP/x.y` from 1.1 up (`HTTP/1.2`, `HTTP/2.0`
/// written in an HTTP/1 start line) is [`Version::Http11`], anything below (`HTTP/1.0`,
/// `HTTP/0.9`) is [`Version::Http10`]. [`Version::Http2`] and [`Version::Http3`] are
/// the messages of those protocols' muxes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Version {
    Http10,
    #[default]
    Http11,
    Http2,
    Http3,
}

impl Version {
    /// The version as `req.ver` returns it (`1.0`, `1.1`, `2.0`, `3.0`, as HAProxy).
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "1.0",
            Version::Http11 => "1.1",
            Version::Http2 => "2.0",
            Version::Http3 => "3.0",
        }
    }
}

/// The request method, recognised case-sensitively (`get` is [`Method::Other`], as in
/// HAProxy's `find_http_meth`).
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

    /// The method a token names (case-sensitive, as HAProxy's `find_http_meth`).
    pub fn from_bytes(m: &[u8]) -> Method {
        match m {
            b"GET" => Method::Get,
            b"HEAD" => Method::Head,
            b"POST" => Method::Post,
            b"PUT" => Method::Put,
            b"DELETE" => Method::Delete,
            b"OPTIONS" => Method::Options,
            b"CONNECT" => Method::Connect,
            b"TRACE" => Method::Trace,
            b"PATCH" => Method::Patch,
            _ => Method::Other,
        }
    }

    /// The canonical spelling of a known method (`None` for [`Method::Other`]).
    pub fn as_str(self) -> Option<&'static str> {
        Some(match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
            Method::Connect => "CONNECT",
            Method::Trace => "TRACE",
            Method::Patch => "PATCH",
            Method::Other => return None,
        })
    }
}

/// Which well-known header a header is, found once while parsing (or when a rule adds
/// it) so that the runtime never compares names again.
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
    /// `Sec-WebSocket-Key` (the request half of a WebSocket handshake).
    SecWebSocketKey,
    /// `Sec-WebSocket-Accept` (the response half of a WebSocket handshake).
    SecWebSocketAccept,
}

impl HdrKind {
    /// Finds the kind of a header by its name: a switch on the length, then one
    /// case-insensitive comparison.
    pub fn classify(name: &[u8]) -> HdrKind {
        let is = |s: &[u8]| name.eq_ignore_ascii_case(s);
        match name.len() {
            2 if is(b"te") => HdrKind::Te,
            4 if is(b"host") => HdrKind::Host,
            6 if is(b"expect") => HdrKind::Expect,
            7 if is(b"upgrade") => HdrKind::Upgrade,
            7 if is(b"trailer") => HdrKind::Trailer,
            10 if is(b"connection") => HdrKind::Connection,
            10 if is(b"keep-alive") => HdrKind::KeepAlive,
            14 if is(b"content-length") => HdrKind::ContentLength,
            16 if is(b"proxy-connection") => HdrKind::ProxyConnection,
            17 if is(b"transfer-encoding") => HdrKind::TransferEncoding,
            17 if is(b"sec-websocket-key") => HdrKind::SecWebSocketKey,
            20 if is(b"sec-websocket-accept") => HdrKind::SecWebSocketAccept,
            _ => HdrKind::Other,
        }
    }

    /// Headers that frame the message or manage the connection: the muxes write them
    /// for each hop, so a rule cannot add them (HAProxy's HTX output recomputes them
    /// too).
    pub fn is_hop_or_framing(self) -> bool {
        !matches!(self, HdrKind::Other | HdrKind::Host | HdrKind::Expect | HdrKind::Trailer)
            && !matches!(self, HdrKind::SecWebSocketKey | HdrKind::SecWebSocketAccept)
    }
}

/// One header: offsets of its name and (trimmed) value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Header {
    pub name: Slice,
    pub value: Slice,
    pub kind: HdrKind,
    /// Set by the parser for headers the proxy must not forward as they are:
    /// - `Content-Length` when `Transfer-Encoding` is present, repeated `Content-Length`
    ///   headers after the first (same value), and `Content-Length`/`Transfer-Encoding` of CONNECT requests and of 1xx/204
    ///   responses (HAProxy skips them on output);
    /// - hop-by-hop headers: `Keep-Alive`, `Proxy-Connection`, `TE`, `Upgrade` unless
    ///   the message carries `Connection: upgrade` (and, for a request, has no body),
    ///   and headers of kind `Other` named by
    ///   a `Connection` token (never a framing header: `Connection: content-length` does
    ///   not drop `Content-Length`).
    ///
    /// The runtime may set it too.
    pub drop: bool,
}
