//! Message heads on their way out: the parsed head (offsets into the receive buffer)
//! is written to the other side with HAProxy's rewrites: lowercase header names,
//! hop-by-hop headers removed, the `Connection` header recomputed for this hop,
//! `X-Forwarded-For` added. HAProxy counterpart: h1_htx.c / mux_h1.c output,
//! http_ana.c (forwardfor).
//!
//! COMPAT: HAProxy 2.6 lowercases header names on HTTP/1 output; so does rampart.
//! Unlike HAProxy, headers named by `Connection` tokens, `Keep-Alive`,
//! `Proxy-Connection` and a non-upgrading `Upgrade` are not forwarded (RFC 9110 §7.6.1);
//! `TE` is forwarded as `te: trailers` when it names `trailers`, as HAProxy does.

pub mod msg;
pub mod uri;

pub use msg::{BodyLen, MsgHead, MsgView, NoRoom};

use std::io::Write as _;
use std::net::IpAddr;

use rampart_proto::h1::write::{push_header_lower, push_request_line, push_status_line, version_str};
use rampart_proto::h1::{HdrKind, Head, Version};

/// The `Connection` header to emit on this hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnHdr {
    None,
    KeepAlive,
    Close,
    Upgrade,
}

impl ConnHdr {
    /// The header line to write (empty for [`ConnHdr::None`]).
    pub fn line(self) -> &'static [u8] {
        match self {
            ConnHdr::None => b"",
            ConnHdr::KeepAlive => b"connection: keep-alive\r\n",
            ConnHdr::Close => b"connection: close\r\n",
            ConnHdr::Upgrade => b"connection: upgrade\r\n",
        }
    }
}

/// Appends the forwarded headers of `head` (not the start line, not the final CRLF).
fn push_headers(out: &mut Vec<u8>, src: &[u8], head: &Head, keep_upgrade: bool) {
    for h in &head.headers {
        if h.drop || h.kind == HdrKind::Connection || (h.kind == HdrKind::Upgrade && !keep_upgrade) {
            continue;
        }
        if h.kind == HdrKind::Te {
            push_header_lower(out, b"te", b"trailers");
            continue;
        }
        push_header_lower(out, h.name.get(src), h.value.get(src));
    }
}

/// What is added to a request on its way to the server.
#[derive(Debug, Clone, Copy)]
pub struct ReqEdits<'a> {
    pub conn: ConnHdr,
    /// `option forwardfor`: header name (lowercase) and client address.
    pub forwarded_for: Option<(&'a str, IpAddr)>,
}

/// Writes the request head for the server into `out`.
pub fn write_request_head(out: &mut Vec<u8>, src: &[u8], head: &Head, edits: ReqEdits<'_>) {
    let uri = head.uri.get(src);
    if head.uri_cut.is_empty() {
        push_request_line(out, head.method_raw.get(src), uri, head.version);
    } else {
        // An absolute-form target loses its default port (`uri_cut`), as in HAProxy.
        let cut = (head.uri_cut.start - head.uri.start) as usize..(head.uri_cut.end - head.uri.start) as usize;
        out.extend_from_slice(head.method_raw.get(src));
        out.push(b' ');
        out.extend_from_slice(&uri[..cut.start]);
        out.extend_from_slice(&uri[cut.end..]);
        out.push(b' ');
        out.extend_from_slice(version_str(head.version));
        out.extend_from_slice(b"\r\n");
    }
    push_headers(out, src, head, edits.conn == ConnHdr::Upgrade);
    if let Some((name, ip)) = edits.forwarded_for {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        let _ = write!(out, "{ip}");
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(edits.conn.line());
    out.extend_from_slice(b"\r\n");
}

/// Writes the response head for the client into `out`; the status line keeps the
/// server's version and reason, as HAProxy does.
pub fn write_response_head(out: &mut Vec<u8>, src: &[u8], head: &Head, conn: ConnHdr) {
    push_status_line(out, head.version, head.status, head.reason.get(src));
    push_headers(out, src, head, conn == ConnHdr::Upgrade);
    out.extend_from_slice(conn.line());
    out.extend_from_slice(b"\r\n");
}

/// Whether `head` carries a header `name` (compared case-insensitively).
pub fn has_header(src: &[u8], head: &Head, name: &str) -> bool {
    head.headers.iter().any(|h| !h.drop && h.name.get(src).eq_ignore_ascii_case(name.as_bytes()))
}

/// The `Connection` header for a response, following HAProxy: an HTTP/1.1 response
/// announces `close` when the client connection will close; a kept-alive exchange
/// where either side spoke HTTP/1.0 announces `keep-alive`.
pub fn response_conn_hdr(req_version: Version, res_version: Version, keep_client: bool, upgrade: bool) -> ConnHdr {
    if upgrade {
        ConnHdr::Upgrade
    } else if keep_client {
        if req_version == Version::Http10 || res_version == Version::Http10 {
            ConnHdr::KeepAlive
        } else {
            ConnHdr::None
        }
    } else if res_version == Version::Http11 {
        ConnHdr::Close
    } else {
        ConnHdr::None
    }
}

/// The `Connection` header for a request: HTTP/1.0 needs `keep-alive` to keep the
/// server connection; HTTP/1.1 needs `close` when rampart will close it.
pub fn request_conn_hdr(version: Version, keep_server: bool, upgrade: bool) -> ConnHdr {
    match (upgrade, keep_server, version) {
        (true, _, _) => ConnHdr::Upgrade,
        (false, true, Version::Http10) => ConnHdr::KeepAlive,
        (false, false, Version::Http11) => ConnHdr::Close,
        _ => ConnHdr::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_connection_header_follows_haproxy() {
        use Version::*;
        // 1.0 client without keep-alive, 1.1 response: close announced.
        assert_eq!(response_conn_hdr(Http10, Http11, false, false), ConnHdr::Close);
        // 1.0 client with keep-alive.
        assert_eq!(response_conn_hdr(Http10, Http11, true, false), ConnHdr::KeepAlive);
        // 1.0 response closing: implicit.
        assert_eq!(response_conn_hdr(Http11, Http10, false, false), ConnHdr::None);
        assert_eq!(response_conn_hdr(Http11, Http11, true, false), ConnHdr::None);
    }

    #[test]
    fn request_connection_header_keeps_the_server_side_alive() {
        assert_eq!(request_conn_hdr(Version::Http10, true, false), ConnHdr::KeepAlive);
        assert_eq!(request_conn_hdr(Version::Http11, true, false), ConnHdr::None);
        assert_eq!(request_conn_hdr(Version::Http11, false, false), ConnHdr::Close);
        assert_eq!(request_conn_hdr(Version::Http11, true, true), ConnHdr::Upgrade);
    }
}
