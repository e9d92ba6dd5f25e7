//! From HTTP/2 header fields to the protocol-neutral message, and back: what the
//! HTTP/2 muxes of both roles do with a decoded header block, with HAProxy 2.6's rules
//! (`h2_make_htx_request()`, `h2_make_htx_response()`, the HTX to HEADERS encoding of
//! mux_h2.c).
//!
//! A request's pseudo-headers become its start line. With a scheme and an authority the
//! target is the absolute form `scheme://authority/path` (what `url` and the log line
//! show for an HTTP/2 request, as in HAProxy), and for `http`/`https` the scheme and
//! authority are marked to be left out on an HTTP/1 hop (`MsgHead::uri_cut`), which then
//! writes origin form. `:authority` becomes the `Host` header, replacing any `host`
//! field; `cookie` fields are joined into one header, as HTTP/1 needs them (RFC 9113
//! §8.2.3). A malformed request (RFC 9113 §8.1.1: upper case or invalid names, NUL, CR
//! or LF in values, connection-specific fields, misplaced, repeated, missing or unknown
//! pseudo-headers, an invalid `content-length`) is refused before any rule sees it:
//! [`Malformed`], a stream error for the mux.

use rampart_proto::http::{HdrKind, Header, Slice};

use crate::http::{BodyLen, Method, MsgHead, MsgView, Version};

/// A request whose stream becomes a tunnel once answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tunnel {
    /// CONNECT (RFC 9113 §8.5): a 2xx opens it.
    Connect,
    /// Extended CONNECT (RFC 8441): an upgrade, which a `101` (from an HTTP/1 server)
    /// or a `200` (from an HTTP/2 one) opens.
    Upgrade,
}

/// A request the rules never see: the reason, for traces and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

/// A `:method` that is not a token (RFC 9110 §9.1).
pub const BAD_METHOD: Malformed = Malformed("invalid :method");

/// A `:scheme` that is not a scheme (RFC 3986 §3.1: a letter, then letters, digits,
/// `+`, `-`, `.`), as HAProxy 2.6's `http_validate_scheme()` (reg-test
/// `h2_desync_attacks`: `http://localhost/?` as a scheme is a 400).
pub const BAD_SCHEME: Malformed = Malformed("invalid :scheme");

impl Malformed {
    /// Whether the client is answered `400 Bad Request` rather than the stream reset:
    /// HAProxy parses such a request and refuses it as it refuses an HTTP/1 one.
    pub fn answered_400(self) -> bool {
        self == BAD_METHOD || self == BAD_SCHEME
    }
}

/// The pseudo-headers of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pseudo {
    Method,
    Scheme,
    Authority,
    Path,
    /// RFC 8441's `:protocol` (extended CONNECT).
    Protocol,
}

/// A request head being built from its header block, field after field, into `buf`
/// (the bytes its slices point into) and `head`.
#[derive(Debug)]
pub struct ReqFields<'m> {
    buf: &'m mut Vec<u8>,
    head: &'m mut MsgHead,
    method: Option<Slice>,
    scheme: Option<Slice>,
    authority: Option<Slice>,
    path: Option<Slice>,
    protocol: Option<Slice>,
    /// A regular field was seen: no pseudo-header may follow.
    regular: bool,
    /// The `cookie` fields, joined at the end.
    cookies: Vec<Slice>,
    content_length: Option<u64>,
}

impl<'m> ReqFields<'m> {
    /// Starts a request in `head` (reset first) over `buf` (cleared).
    pub fn new(buf: &'m mut Vec<u8>, head: &'m mut MsgHead) -> ReqFields<'m> {
        buf.clear();
        head.reset();
        head.version = Version::Http2;
        ReqFields {
            buf,
            head,
            method: None,
            scheme: None,
            authority: None,
            path: None,
            protocol: None,
            regular: false,
            cookies: Vec::new(),
            content_length: None,
        }
    }

    /// Adds one decoded field.
    pub fn field(&mut self, name: &[u8], value: &[u8]) -> Result<(), Malformed> {
        check_value(value)?;
        if let Some(pseudo) = name.strip_prefix(b":") {
            return self.pseudo(pseudo, value);
        }
        check_name(name)?;
        self.regular = true;
        let kind = HdrKind::classify(name);
        match kind {
            // RFC 9113 §8.2.2: connection-specific fields make the request malformed
            HdrKind::Connection
            | HdrKind::ProxyConnection
            | HdrKind::KeepAlive
            | HdrKind::Upgrade
            | HdrKind::TransferEncoding => return Err(Malformed("connection-specific header field")),
            HdrKind::Te if value != b"trailers" => return Err(Malformed("te other than trailers")),
            // `:authority` wins: it becomes the Host header at the end
            HdrKind::Host if self.authority.is_some() => return Ok(()),
            // the same value again
            HdrKind::ContentLength if !self.content_length(value)? => return Ok(()),
            _ => {}
        }
        if name == b"cookie" {
            let v = self.push(value);
            self.cookies.push(v);
            return Ok(());
        }
        // RFC 9113 §8.2.1: leading and trailing whitespace is trimmed, as HAProxy does
        let value = value.trim_ascii();
        let (name, value) = (self.push(name), self.push(value));
        self.head.headers.push(Header { name, value, kind, drop: false });
        Ok(())
    }

    fn pseudo(&mut self, name: &[u8], value: &[u8]) -> Result<(), Malformed> {
        if self.regular {
            return Err(Malformed("pseudo-header after regular fields"));
        }
        let which = match name {
            b"method" => Pseudo::Method,
            b"scheme" => Pseudo::Scheme,
            b"authority" => Pseudo::Authority,
            b"path" => Pseudo::Path,
            b"protocol" => Pseudo::Protocol,
            b"status" => return Err(Malformed(":status in a request")),
            _ => return Err(Malformed("unknown pseudo-header")),
        };
        let v = self.push(value);
        let slot = match which {
            Pseudo::Method => &mut self.method,
            Pseudo::Scheme => &mut self.scheme,
            Pseudo::Authority => &mut self.authority,
            Pseudo::Path => &mut self.path,
            Pseudo::Protocol => &mut self.protocol,
        };
        if slot.replace(v).is_some() {
            return Err(Malformed("repeated pseudo-header"));
        }
        Ok(())
    }

    /// Reads a `content-length` value; `Ok(false)` for a repetition of the same value.
    fn content_length(&mut self, value: &[u8]) -> Result<bool, Malformed> {
        let digits = !value.is_empty() && value.len() <= 19 && value.iter().all(u8::is_ascii_digit);
        let n: u64 = match std::str::from_utf8(value).ok().filter(|_| digits).and_then(|v| v.parse().ok()) {
            Some(n) => n,
            None => return Err(Malformed("invalid content-length")),
        };
        match self.content_length.replace(n) {
            Some(prev) if prev != n => Err(Malformed("different content-length values")),
            Some(_) => Ok(false),
            None => Ok(true),
        }
    }

    /// Ends the header block: the start line, `Host` and `Cookie`, what is known of the
    /// body (`end_stream`: the HEADERS frame ended the stream). `Ok(Some(_))`: the stream
    /// becomes a tunnel once answered with a 2xx, without a body before: a CONNECT
    /// ([`Tunnel::Connect`]), or an extended CONNECT (RFC 8441, [`Tunnel::Upgrade`]),
    /// which the message carries as HTTP/1.1's upgrade, as HAProxy does: `GET` with
    /// `upgrade: <:protocol>` and `connection: upgrade`.
    pub fn finish(self, end_stream: bool) -> Result<Option<Tunnel>, Malformed> {
        let ReqFields { buf, head, method, scheme, mut authority, path, protocol, cookies, content_length, .. } = self;
        let method = method.ok_or(Malformed("missing :method"))?;
        let raw = |s: Slice| &buf[s.start as usize..s.end as usize];
        if !is_token(raw(method)) {
            return Err(BAD_METHOD);
        }
        head.method_raw = method;
        head.method = Method::from_bytes(raw(method));
        let tunnel = match (head.method, protocol) {
            (Method::Connect, Some(_)) => Some(Tunnel::Upgrade),
            (Method::Connect, None) => Some(Tunnel::Connect),
            // RFC 8441 §4: `:protocol` only with CONNECT
            (_, Some(_)) => return Err(Malformed(":protocol without CONNECT")),
            _ => None,
        };
        if let Some(proto) = protocol {
            // RFC 8441 §4: `:scheme`, `:path` and `:authority` as for any request
            if scheme.is_none() || path.is_none() || authority.is_none() {
                return Err(Malformed("extended CONNECT without :scheme, :path or :authority"));
            }
            head.method = Method::Get;
            head.method_raw = push(buf, b"GET");
            let (upgrade, connection) = (push(buf, b"upgrade"), push(buf, b"connection"));
            let token = push(buf, b"upgrade");
            head.headers.push(Header { name: upgrade, value: proto, kind: HdrKind::Upgrade, drop: false });
            head.headers.push(Header { name: connection, value: token, kind: HdrKind::Connection, drop: false });
        }
        let raw = |s: Slice| &buf[s.start as usize..s.end as usize];
        if head.method == Method::Connect {
            // RFC 9113 §8.5: the authority only
            if scheme.is_some() || path.is_some() {
                return Err(Malformed("CONNECT with :scheme or :path"));
            }
            head.uri = authority.ok_or(Malformed("CONNECT without :authority"))?;
        } else {
            let (scheme, path) = match (scheme, path) {
                (Some(s), Some(p)) => (s, p),
                (None, _) => return Err(Malformed("missing :scheme")),
                (_, None) => return Err(Malformed("missing :path")),
            };
            if !is_scheme(raw(scheme)) {
                return Err(BAD_SCHEME);
            }
            let p = raw(path);
            if p.is_empty() || (p[0] != b'/' && p != b"*") {
                return Err(Malformed("invalid :path"));
            }
            // RFC 3986 §6.3.2, as HAProxy: a default port is dropped from the target
            // and from Host
            authority = authority.map(|a| without_default_port(buf, scheme, a));
            target(buf, head, scheme, authority, path);
        }
        if let Some(auth) = authority {
            let name = push(buf, b"host");
            head.headers.insert(0, Header { name, value: auth, kind: HdrKind::Host, drop: false });
        }
        if let Some((first, rest)) = cookies.split_first() {
            head.headers.push(cookie_header(buf, *first, rest));
        }
        head.body = match content_length {
            // RFC 9113 §8.1.1: the DATA frames must add up to the announced length
            Some(n) if end_stream && n > 0 => return Err(Malformed("content-length without DATA")),
            _ if end_stream => BodyLen::None,
            // what follows the head of a tunnel's request is the tunnel's
            _ if tunnel.is_some() => BodyLen::None,
            Some(0) => BodyLen::None,
            Some(n) => BodyLen::Known(n),
            None => BodyLen::Unknown,
        };
        Ok(tunnel)
    }

    fn push(&mut self, bytes: &[u8]) -> Slice {
        push(self.buf, bytes)
    }
}

/// Whether `s` is a URI scheme (RFC 3986 §3.1).
fn is_scheme(s: &[u8]) -> bool {
    s.first().is_some_and(u8::is_ascii_alphabetic)
        && s.iter().all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
}

/// Builds the target of a request with a `:scheme` and a `:path`: the absolute form
/// when there is an authority (the scheme and authority cut on HTTP/1 output for
/// `http` and `https`, HAProxy's normalized URI), else the path.
fn target(buf: &mut Vec<u8>, head: &mut MsgHead, scheme: Slice, authority: Option<Slice>, path: Slice) {
    let Some(auth) = authority else {
        head.uri = path;
        return;
    };
    let start = buf.len();
    let copy = |buf: &mut Vec<u8>, s: Slice| buf.extend_from_within(s.start as usize..s.end as usize);
    copy(buf, scheme);
    buf.extend_from_slice(b"://");
    copy(buf, auth);
    let prefix_end = buf.len();
    if &buf[path.start as usize..path.end as usize] != b"*" {
        copy(buf, path);
    }
    head.uri = Slice { start: start as u32, end: buf.len() as u32 };
    let s = &buf[scheme.start as usize..scheme.end as usize];
    if s.eq_ignore_ascii_case(b"http") || s.eq_ignore_ascii_case(b"https") {
        head.uri_cut = Slice { start: start as u32, end: prefix_end as u32 };
    }
}

/// `auth` without its port when the port is `scheme`'s default (80 for `http`, 443
/// for `https`).
fn without_default_port(buf: &[u8], scheme: Slice, auth: Slice) -> Slice {
    let raw = |s: Slice| &buf[s.start as usize..s.end as usize];
    let default: &[u8] = match raw(scheme) {
        s if s.eq_ignore_ascii_case(b"http") => b":80",
        s if s.eq_ignore_ascii_case(b"https") => b":443",
        _ => return auth,
    };
    let a = raw(auth);
    // the port follows the last ':' outside an IPv6 literal's brackets
    let colon = a.iter().rposition(|&b| b == b':');
    let bracket = a.iter().rposition(|&b| b == b']');
    match colon {
        Some(c) if bracket.is_none_or(|b| b < c) && &a[c..] == default => {
            Slice { start: auth.start, end: auth.start + c as u32 }
        }
        _ => auth,
    }
}

/// One `cookie` header with every `cookie` field's value, joined with `; `.
fn cookie_header(buf: &mut Vec<u8>, first: Slice, rest: &[Slice]) -> Header {
    let name = push(buf, b"cookie");
    let value = if rest.is_empty() {
        first
    } else {
        let start = buf.len();
        buf.extend_from_within(first.start as usize..first.end as usize);
        for s in rest {
            buf.extend_from_slice(b"; ");
            buf.extend_from_within(s.start as usize..s.end as usize);
        }
        Slice { start: start as u32, end: buf.len() as u32 }
    };
    Header { name, value, kind: HdrKind::Other, drop: false }
}

fn push(buf: &mut Vec<u8>, bytes: &[u8]) -> Slice {
    let start = buf.len();
    buf.extend_from_slice(bytes);
    Slice { start: start as u32, end: buf.len() as u32 }
}

/// Whether `s` is a token (RFC 9110 §5.6.2).
fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&c| TCHAR[c as usize])
}

/// RFC 9110 `tchar`, by byte (PERF: one load a byte, where a search of the symbols
/// cost a dozen comparisons for each `-` of a name).
const TCHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~'
            );
        c += 1;
    }
    t
};

/// RFC 9113 §8.2.1: field names are lower case tokens (HAProxy checks the token
/// characters and refuses upper case).
fn check_name(name: &[u8]) -> Result<(), Malformed> {
    if !is_token(name) || name.iter().any(u8::is_ascii_uppercase) {
        return Err(Malformed("invalid field name"));
    }
    Ok(())
}

/// RFC 9113 §8.2.1: no NUL, CR or LF in a value (what an HTTP/1 hop could be split
/// with).
fn check_value(value: &[u8]) -> Result<(), Malformed> {
    if memchr::memchr3(0, b'\r', b'\n', value).is_some() {
        return Err(Malformed("NUL, CR or LF in a field value"));
    }
    Ok(())
}

/// The fields of a response head as an HTTP/2 HEADERS frame carries them: `:status`,
/// then the headers but the connection-specific ones, names in lower case (`emit`
/// gets each name and value; `lower` is scratch space for a name to lower).
pub fn response_fields(res: MsgView<'_>, lower: &mut Vec<u8>, emit: impl FnMut(&[u8], &[u8])) {
    response_fields_as(res, res.head.status, lower, emit);
}

/// [`response_fields`] with `:status` `status` instead of the head's: an extended
/// CONNECT is answered `200` where the HTTP/1 server said `101` (RFC 8441 §5).
pub fn response_fields_as(res: MsgView<'_>, status: u16, lower: &mut Vec<u8>, mut emit: impl FnMut(&[u8], &[u8])) {
    let s = status.min(999);
    let mut status = [0u8; 3];
    status[0] = b'0' + (s / 100) as u8;
    status[1] = b'0' + (s / 10 % 10) as u8;
    status[2] = b'0' + (s % 10) as u8;
    emit(b":status", &status);
    for (i, name, value) in res.headers() {
        let kind = res.head.headers[i].kind;
        let hop = matches!(
            kind,
            HdrKind::Connection
                | HdrKind::ProxyConnection
                | HdrKind::KeepAlive
                | HdrKind::TransferEncoding
                | HdrKind::Upgrade
                | HdrKind::Te
        );
        if hop {
            continue;
        }
        if name.iter().any(u8::is_ascii_uppercase) {
            // PERF: a usual name is lowered on the stack, without allocating
            let mut short = [0u8; 64];
            if let Some(to) = short.get_mut(..name.len()) {
                to.copy_from_slice(name);
                to.make_ascii_lowercase();
                emit(to, value);
                continue;
            }
            lower.clear();
            lower.extend(name.iter().map(u8::to_ascii_lowercase));
            emit(lower, value);
        } else {
            emit(name, value);
        }
    }
}

#[cfg(test)]
#[path = "msg_tests.rs"]
mod tests;
