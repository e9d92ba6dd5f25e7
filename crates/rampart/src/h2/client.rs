//! HTTP/2 messages in the client role (towards servers): the neutral request message to
//! header fields, and a response's decoded header fields (and trailers) to the neutral
//! message, with HAProxy 2.6's rules (`h2s_bck_make_req_headers()`,
//! `h2_make_htx_response()` of mux_h2.c and h2.c).
//!
//! A request becomes `:method`, `:scheme` (the target's, else `https`, as HAProxy 2.6
//! sends for an origin-form target whatever the connection), `:authority` (an
//! absolute-form target's authority, and then no `host` field; an origin-form request's
//! `Host` goes as a `host` field, as HAProxy 2.6 sends it; an extended CONNECT's
//! authority is its `Host`; a CONNECT's its target), `:path` (the path and query, `/`
//! when empty, `*` for `OPTIONS *`), then its fields in lower case without the connection-specific ones
//! (`connection` and the fields it names, `keep-alive`, `proxy-connection`,
//! `transfer-encoding`, `upgrade`; `te` only as `trailers`). A response's `:status`
//! becomes an HTTP/1.1 status line without a reason (`HTTP/1.1 200 `, as HAProxy 2.6's
//! `h2_make_htx_response()` leaves it empty), its fields the headers.

use rampart_proto::http::{HdrKind, Header, Slice};

use crate::http::{uri, BodyLen, Method, MsgHead, MsgView, Version};

/// Hands the request's fields, in order, to `emit` (name, value). `protocol`: an HTTP/1.1
/// upgrade to this protocol, sent as an extended CONNECT (RFC 8441 §4: `:method`
/// `CONNECT` and `:protocol`, with the `:scheme`, `:authority` and `:path` of any
/// request), as HAProxy converts it.
pub fn request_fields(
    req: MsgView<'_>,
    protocol: Option<&[u8]>,
    lower: &mut Vec<u8>,
    mut emit: impl FnMut(&[u8], &[u8]),
) {
    let head = req.head;
    emit(b":method", if protocol.is_some() { b"CONNECT" } else { req.method() });
    let target = req.target();
    // as HAProxy 2.6: the authority of an absolute-form target (an HTTP/2 client's
    // `:authority` comes as one); for an extended CONNECT, `Host` first; an
    // origin-form request's `Host` goes as a `host` field
    let absolute = Some(target.authority).filter(|a| !a.is_empty());
    let authority = match protocol {
        Some(_) => req.first(b"host").or(absolute),
        None => absolute,
    };
    let connect = head.method == Method::Connect && protocol.is_none();
    let send_host = authority.is_none() && !connect;
    if connect {
        emit(b":authority", req.uri());
    } else {
        // COMPAT: as HAProxy 2.6 (`h2s_bck_make_req_headers()`), an origin-form target
        // (an HTTP/1 client's) goes out with `https`, the browsers' default, even on
        // a cleartext connection (RFC 9113 §8.3.1 would say `http`); an HTTP/2
        // client's request keeps its own `:scheme`
        let scheme: &[u8] = match target.scheme {
            s if !s.is_empty() => s,
            _ => b"https",
        };
        emit(b":scheme", scheme);
        if let Some(a) = authority {
            emit(b":authority", a);
        }
        let path = match target.pathq {
            b"" => &b"/"[..],
            p => p,
        };
        emit(b":path", path);
        if let Some(p) = protocol {
            emit(b":protocol", p);
        }
    }
    let named = connection_tokens(req);
    for (i, name, value) in req.headers() {
        match head.headers[i].kind {
            HdrKind::Connection
            | HdrKind::KeepAlive
            | HdrKind::ProxyConnection
            | HdrKind::TransferEncoding
            | HdrKind::Upgrade => continue,
            HdrKind::Host if !send_host => continue,
            HdrKind::Te => {
                if uri::comma_items(value).any(|t| t.eq_ignore_ascii_case(b"trailers")) {
                    emit(b"te", b"trailers");
                }
                continue;
            }
            _ => {}
        }
        if named.iter().any(|t| t.eq_ignore_ascii_case(name)) {
            continue;
        }
        emit_lower(name, value, lower, &mut emit);
    }
}

/// The header names the `Connection` header lists (hop-by-hop, not forwarded).
fn connection_tokens<'a>(req: MsgView<'a>) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    for (i, _, value) in req.headers() {
        if req.head.headers[i].kind == HdrKind::Connection {
            out.extend(uri::comma_items(value).filter(|t| !t.is_empty()));
        }
    }
    out
}

/// Emits a field with its name in lower case (HTTP/2 refuses upper case names).
fn emit_lower(name: &[u8], value: &[u8], lower: &mut Vec<u8>, emit: &mut impl FnMut(&[u8], &[u8])) {
    if name.iter().any(u8::is_ascii_uppercase) {
        lower.clear();
        lower.extend(name.iter().map(u8::to_ascii_lowercase));
        emit(lower, value);
    } else {
        emit(name, value);
    }
}

/// A response that cannot be forwarded (RFC 9113 §8.1.1), for traces and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadResponse(pub &'static str);

/// Fills `head` (reset first) and `buf` (cleared; the head's slices point into it) from
/// a response's decoded fields (`fields`: name, value, in order). `end_stream`: the
/// HEADERS ended the stream; `method`: the request's (a response to HEAD has no body).
pub fn response_head<'f>(
    fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
    end_stream: bool,
    method: Method,
    buf: &mut Vec<u8>,
    head: &mut MsgHead,
) -> Result<(), BadResponse> {
    buf.clear();
    head.reset();
    head.version = Version::Http11;
    let mut status = None;
    let mut length = None;
    for (name, value) in fields {
        if value.iter().any(|&c| c == 0 || c == b'\r' || c == b'\n') {
            return Err(BadResponse("NUL, CR or LF in a field value"));
        }
        if let Some(p) = name.strip_prefix(b":") {
            if p != b"status" || status.is_some() || !head.headers.is_empty() {
                return Err(BadResponse("unexpected pseudo-header"));
            }
            status = Some(parse_status(value)?);
            continue;
        }
        let kind = HdrKind::classify(name);
        match kind {
            HdrKind::Connection
            | HdrKind::KeepAlive
            | HdrKind::ProxyConnection
            | HdrKind::TransferEncoding
            | HdrKind::Upgrade => return Err(BadResponse("connection-specific header field")),
            HdrKind::ContentLength => {
                let n = parse_length(value)?;
                if length.replace(n).is_some_and(|prev| prev != n) {
                    return Err(BadResponse("different content-length values"));
                }
            }
            _ => {}
        }
        let value = value.trim_ascii();
        let (name, value) = (push(buf, name), push(buf, value));
        head.headers.push(Header { name, value, kind, drop: false });
    }
    let status = status.ok_or(BadResponse("missing :status"))?;
    head.status = status;
    // HTTP/2 has no reason phrase: as HAProxy 2.6, an HTTP/1.1 client gets none
    head.reason = push(buf, b"");
    let bodyless = method == Method::Head || matches!(status, 100..=199 | 204 | 304);
    head.body = match length {
        _ if bodyless => BodyLen::None,
        // RFC 9113 §8.1.1: the DATA frames must add up to the announced length
        Some(n) if end_stream && n > 0 => return Err(BadResponse("content-length without DATA")),
        Some(n) => BodyLen::Known(n),
        // an HTTP/1 client then sees `content-length: 0`, not a body until close
        None if end_stream => BodyLen::Known(0),
        None => BodyLen::Unknown,
    };
    Ok(())
}

/// A `:status` value: three digits.
fn parse_status(v: &[u8]) -> Result<u16, BadResponse> {
    match v {
        [a, b, c] if v.iter().all(u8::is_ascii_digit) => {
            Ok(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => Err(BadResponse("invalid :status")),
    }
}

/// A `content-length` value.
fn parse_length(v: &[u8]) -> Result<u64, BadResponse> {
    let digits = !v.is_empty() && v.len() <= 19 && v.iter().all(u8::is_ascii_digit);
    std::str::from_utf8(v)
        .ok()
        .filter(|_| digits)
        .and_then(|v| v.parse().ok())
        .ok_or(BadResponse("invalid content-length"))
}

fn push(buf: &mut Vec<u8>, bytes: &[u8]) -> Slice {
    let start = buf.len();
    buf.extend_from_slice(bytes);
    Slice { start: start as u32, end: buf.len() as u32 }
}

/// Appends trailer fields as an HTTP/1 chunked body's trailer section would carry them
/// (`name: value` lines; pseudo-headers and connection-specific fields left out).
pub fn push_trailers<'f>(out: &mut Vec<u8>, fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>) {
    for (name, value) in fields {
        if name.starts_with(b":") || HdrKind::classify(name).is_hop_or_framing() {
            continue;
        }
        if value.iter().any(|&c| c == b'\r' || c == b'\n' || c == 0) {
            continue;
        }
        out.extend_from_slice(name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
