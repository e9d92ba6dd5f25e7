#![allow(dead_code)] // each target uses the request or the response half

//! What rampart forwards for a parsed head, written with rampart-proto's writers the
//! way the runtime's `http::write_request_head` / `write_response_head` do (no rule,
//! no `Connection` header of our own), and the comparison of a head with the second
//! strict parser's reading of those bytes (`rampart_testkit::strict`).

use rampart_proto::h1::write::{push_header_lower, push_request_line, push_status_line};
use rampart_proto::h1::{Framing, HdrKind, Head};
use rampart_testkit::strict::Msg;

/// The forwarded header lines: dropped ones, `Connection` and an `Upgrade` not
/// switching left out, `TE` written as `te: trailers`, names lowercased.
fn push_headers(out: &mut Vec<u8>, src: &[u8], head: &Head) {
    for h in head.headers.iter().filter(|h| is_forwarded(h, head)) {
        if h.kind == HdrKind::Te {
            push_header_lower(out, b"te", b"trailers");
        } else {
            push_header_lower(out, h.name.get(src), h.value.get(src));
        }
    }
}

fn is_forwarded(h: &rampart_proto::h1::Header, head: &Head) -> bool {
    !(h.drop || h.kind == HdrKind::Connection || (h.kind == HdrKind::Upgrade && head.upgrade.is_none()))
}

/// The request head as forwarded.
pub fn request_head(src: &[u8], head: &Head) -> Vec<u8> {
    let mut out = Vec::new();
    push_request_line(&mut out, head.method_raw.get(src), &target(src, head), head.version);
    push_headers(&mut out, src, head);
    out.extend_from_slice(b"\r\n");
    out
}

/// The response head as forwarded.
pub fn response_head(src: &[u8], head: &Head) -> Vec<u8> {
    let mut out = Vec::new();
    push_status_line(&mut out, head.version, head.status, head.reason.get(src));
    push_headers(&mut out, src, head);
    out.extend_from_slice(b"\r\n");
    out
}

/// The request target without the part the parser cut (a default port).
pub fn target(src: &[u8], head: &Head) -> Vec<u8> {
    let uri = head.uri.get(src);
    if head.uri_cut.is_empty() {
        return uri.to_vec();
    }
    let from = (head.uri_cut.start - head.uri.start) as usize;
    let to = (head.uri_cut.end - head.uri.start) as usize;
    [&uri[..from], &uri[to..]].concat()
}

/// Asserts the strict parser read `forwarded` (the head written above) as the same
/// head: start line, every forwarded header in order, same framing and length.
pub fn assert_same_head(src: &[u8], head: &Head, m: &Msg, forwarded: &[u8]) {
    assert_eq!(m.len, forwarded.len(), "the strict parser ends the head elsewhere");
    let want: Vec<(Vec<u8>, Vec<u8>)> = head
        .headers
        .iter()
        .filter(|h| is_forwarded(h, head))
        .map(|h| {
            let value = if h.kind == HdrKind::Te { b"trailers".to_vec() } else { h.value.get(src).to_vec() };
            (h.name.get(src).to_ascii_lowercase(), value)
        })
        .collect();
    let got: Vec<(Vec<u8>, Vec<u8>)> = m.headers.iter().map(|(n, v)| (n.as_bytes().to_vec(), v.clone())).collect();
    assert_eq!(got, want, "headers");
    let framing = match head.framing {
        Framing::None => "none",
        Framing::Length(_) => "length",
        Framing::Chunked => "chunked",
        Framing::UntilClose => "close",
    };
    // a bodyless response (HEAD, 1xx, 204, 304) keeps what its headers say
    if head.status == 0 || head.framing != Framing::None {
        assert_eq!(m.framing, framing, "framing");
    }
    if let Framing::Length(n) = head.framing {
        let cl = m.all("content-length");
        assert_eq!(cl.len(), 1, "one Content-Length forwarded");
        let digits = std::str::from_utf8(cl[0]).unwrap_or("x").trim_start_matches('0');
        assert_eq!(if digits.is_empty() { Some(0) } else { digits.parse().ok() }, Some(n), "Content-Length value");
    }
}
