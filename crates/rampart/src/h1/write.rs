//! Message heads on their way out in HTTP/1: the neutral head (with whatever rules
//! rewrote, resolved from the receive buffer or the head's arena) written with
//! HAProxy's output rules: lowercase header names, hop-by-hop headers removed, the
//! `Connection` header recomputed for this hop, framing headers the mux's own.
//! HAProxy counterpart: h1_htx.c / mux_h1.c output (`h1_format_htx_*`).
//!
//! COMPAT: HAProxy 2.6 lowercases header names on HTTP/1 output; so does rampart.
//! Unlike HAProxy, headers named by `Connection` tokens, `Keep-Alive`,
//! `Proxy-Connection` and a non-upgrading `Upgrade` are not forwarded (RFC 9110 §7.6.1);
//! `TE` is forwarded as `te: trailers` when it names `trailers`, as HAProxy does.
//! A framing or hop-by-hop header added by a rule is not written: the mux writes the
//! framing of the message it actually sends (HAProxy recomputes them too).

use rampart_proto::h1::write::{push_chunk_size, push_header_lower, push_request_line, push_status_line, version_str};
use rampart_proto::h1::Version;
use rampart_proto::http::HdrKind;

use crate::http::MsgView;

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

/// How the body that follows the head is framed on this hop: the mux writes the
/// matching header when no header of the message says it any more (a rule deleted it)
/// or the message never had one (a synthetic response).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutFraming {
    /// Nothing to add (no body, until close, or a tunnel).
    AsIs,
    Length(u64),
    Chunked,
}

/// Appends the forwarded headers (not the start line, not the final CRLF); returns
/// whether a framing header (`Content-Length` or `Transfer-Encoding`) was written.
fn push_headers(out: &mut Vec<u8>, msg: MsgView<'_>, keep_upgrade: bool) -> bool {
    let mut framed = false;
    let arena = &msg.head.arena[..];
    for h in &msg.head.headers {
        if h.drop || h.kind == HdrKind::Connection || (h.kind == HdrKind::Upgrade && !keep_upgrade) {
            continue;
        }
        // a framing or hop-by-hop header a rule added is the mux's to decide
        if h.name.in_arena() && h.kind.is_hop_or_framing() && !msg.head.built {
            continue;
        }
        match h.kind {
            HdrKind::Te => {
                push_header_lower(out, b"te", b"trailers");
                continue;
            }
            HdrKind::ContentLength | HdrKind::TransferEncoding => framed = true,
            _ => {}
        }
        push_header_lower(out, h.name.resolve(msg.buf, arena), h.value.resolve(msg.buf, arena));
    }
    framed
}

fn push_framing(out: &mut Vec<u8>, framing: OutFraming, framed: bool) {
    if framed {
        return;
    }
    match framing {
        OutFraming::AsIs => {}
        OutFraming::Length(n) => {
            out.extend_from_slice(b"content-length: ");
            out.extend_from_slice(itoa_u64(n, &mut [0; 20]));
            out.extend_from_slice(b"\r\n");
        }
        OutFraming::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
    }
}

fn itoa_u64(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

/// What is added to a request on its way to the server by the mux itself.
#[derive(Debug, Clone, Copy)]
pub struct ReqOut {
    pub conn: ConnHdr,
    pub framing: OutFraming,
}

/// Writes the request head for the server into `out`.
pub fn write_request_head(out: &mut Vec<u8>, req: MsgView<'_>, extra: ReqOut) {
    let head = req.head;
    let uri = req.uri();
    if head.uri_cut.is_empty() {
        push_request_line(out, req.method(), uri, head.version);
    } else {
        // An absolute-form target loses its default port (`uri_cut`), as in HAProxy.
        let cut = (head.uri_cut.start - head.uri.start) as usize..(head.uri_cut.end - head.uri.start) as usize;
        out.extend_from_slice(req.method());
        out.push(b' ');
        out.extend_from_slice(&uri[..cut.start]);
        out.extend_from_slice(&uri[cut.end..]);
        out.push(b' ');
        out.extend_from_slice(version_str(head.version));
        out.extend_from_slice(b"\r\n");
    }
    let framed = push_headers(out, req, extra.conn == ConnHdr::Upgrade);
    push_framing(out, extra.framing, framed);
    out.extend_from_slice(extra.conn.line());
    out.extend_from_slice(b"\r\n");
}

/// Writes the response head for the client into `out`; the status line keeps the
/// version and reason of the message (the server's, as HAProxy does).
pub fn write_response_head(out: &mut Vec<u8>, res: MsgView<'_>, conn: ConnHdr, framing: OutFraming) {
    push_status_line(out, res.head.version, res.head.status, res.reason());
    let framed = push_headers(out, res, conn == ConnHdr::Upgrade);
    push_framing(out, framing, framed);
    out.extend_from_slice(conn.line());
    out.extend_from_slice(b"\r\n");
}

/// Appends one chunk of a chunked body (size line, data, CRLF).
pub fn push_chunk(out: &mut Vec<u8>, data: &[u8]) {
    push_chunk_size(out, data.len() as u64);
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
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
    use crate::http::MsgHead;
    use rampart_proto::h1::{parse_request, Head};

    fn parsed(raw: &[u8]) -> MsgHead {
        let mut h1 = Head::default();
        assert_eq!(parse_request(raw, raw.len(), &mut h1), Ok(true));
        let mut msg = MsgHead { arena_max: 1024, ..MsgHead::default() };
        super::super::msg::fill(&mut msg, &h1);
        msg
    }

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

    #[test]
    fn rewritten_heads_are_written_from_buffer_and_arena() {
        let raw = b"GET /a HTTP/1.1\r\nHost: h\r\nX-Old: 1\r\nContent-Length: 3\r\n\r\n";
        let mut msg = parsed(raw);
        msg.del_header(raw, b"x-old");
        msg.add_header(b"X-New", b"2").unwrap();
        msg.add_header(b"Transfer-Encoding", b"chunked").unwrap();
        msg.set_uri(b"/b?q").unwrap();
        let mut out = Vec::new();
        let extra = ReqOut { conn: ConnHdr::None, framing: OutFraming::Length(3) };
        write_request_head(&mut out, msg.view(raw), extra);
        assert_eq!(out, b"GET /b?q HTTP/1.1\r\nhost: h\r\ncontent-length: 3\r\nx-new: 2\r\n\r\n");
    }

    #[test]
    fn a_deleted_framing_header_is_written_back_by_the_mux() {
        let raw = b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n";
        let mut msg = parsed(raw);
        msg.del_header(raw, b"content-length");
        let mut out = Vec::new();
        write_request_head(&mut out, msg.view(raw), ReqOut { conn: ConnHdr::Close, framing: OutFraming::Length(3) });
        assert_eq!(out, b"POST / HTTP/1.1\r\nhost: h\r\ncontent-length: 3\r\nconnection: close\r\n\r\n");
    }
}
