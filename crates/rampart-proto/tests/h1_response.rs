//! Response heads and their framing (RFC 9112 §6.3 as HAProxy applies it), each input
//! also parsed as all its prefixes. Expected answers come from haproxy 2.6.12 (502 or
//! forwarded), except where a test name says `deviation`.

mod common;

use common::*;
use rampart_proto::h1::{parse_response, Framing, H1Error, HdrKind, Head, Method, Version};

const GET: Method = Method::Get;

#[test]
fn simple_200() {
    let buf = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nServer: s\r\n\r\nok";
    let h = resp_ok(buf, GET);
    assert_eq!((h.status, h.reason.get(buf), h.version), (200, &b"OK"[..], Version::Http11));
    assert_eq!(h.framing, Framing::Length(2));
    assert_eq!(h.len, buf.len() - 2);
    assert_eq!(kept(&h, buf), [("Content-Length", "2"), ("Server", "s")]);
    assert!(h.wants_keep_alive());
}

#[test]
fn reason_phrase() {
    let buf = b"HTTP/1.1 404  Not  Found \r\n\r\n";
    assert_eq!(resp_ok(buf, GET).reason.get(buf), b"Not  Found ");
    let buf = b"HTTP/1.1 200\r\n\r\n";
    assert_eq!(resp_ok(buf, GET).reason.get(buf), b"");
    let buf = b"HTTP/1.1 200 \r\n\r\n";
    assert_eq!(resp_ok(buf, GET).reason.get(buf), b"");
    let buf = b"HTTP/1.1 200 O\tK \xc3\xa9\r\n\r\n";
    assert_eq!(resp_ok(buf, GET).reason.get(buf), b"O\tK \xc3\xa9");
    // COMPAT: HAProxy forwards any byte but CR and LF in the reason; rampart answers 502
    // to control characters (RFC 9112 §4), which the client's parser may read otherwise
    for bad in [&b"HTTP/1.1 200 O\x01K\r\n\r\n"[..], b"HTTP/1.1 200 O\x00K\r\n\r\n", b"HTTP/1.1 200 O\x7fK\r\n\r\n"] {
        let e = resp_err(bad, GET);
        assert_eq!((e, e.status(false)), (H1Error::StartLine, 502), "{:?}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn status_codes() {
    assert_eq!(resp_ok(b"HTTP/1.1 999 X\r\n\r\n", GET).status, 999);
    assert_eq!(resp_ok(b"HTTP/1.1 600 X\r\n\r\n", GET).status, 600);
    let e = resp_err(b"HTTP/1.1 abc X\r\n\r\n", GET);
    assert_eq!((e, e.status(false)), (H1Error::StartLine, 502));
}

#[test]
fn deviation_status_not_three_digits() {
    // COMPAT: haproxy 2.6 forwards these (and frames them oddly); rampart answers 502
    for bad in [
        &b"HTTP/1.1 099 X\r\n\r\n"[..],
        b"HTTP/1.1 20 X\r\n\r\n",
        b"HTTP/1.1 0200 X\r\n\r\n",
        b"HTTP/1.1 1000 X\r\n\r\n",
    ] {
        assert_eq!(resp_err(bad, GET), H1Error::Status, "{:?}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn versions() {
    assert_eq!(resp_ok(b"HTTP/1.0 200 OK\r\n\r\n", GET).version, Version::Http10);
    assert_eq!(resp_ok(b"HTTP/2.0 200 OK\r\n\r\n", GET).version, Version::Http11);
    // HAProxy only checks `????/d.d` on responses
    assert_eq!(resp_ok(b"ABCD/1.1 200 OK\r\n\r\n", GET).version, Version::Http11);
    for bad in [&b"HTTP/11 200 OK\r\n\r\n"[..], b"http/1.1 200 OK\r\n\r\n", b"HTTP/1.1\r\n\r\n", b"HTTP/1.1 \r\n\r\n"] {
        assert_eq!(resp_err(bad, GET), H1Error::StartLine, "{:?}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn empty_lines_before_response() {
    let buf = b"\r\n\nHTTP/1.1 204 No Content\r\n\r\n";
    let h = resp_ok(buf, GET);
    assert_eq!((h.status, h.len), (204, buf.len()));
}

#[test]
fn header_syntax() {
    assert_eq!(resp_err(b"HTTP/1.1 200 OK\r\nX : a\r\n\r\n", GET), H1Error::HeaderSyntax);
    assert_eq!(resp_err(b"HTTP/1.1 200 OK\r\nX: a\x00b\r\n\r\n", GET), H1Error::HeaderSyntax);
    // COMPAT: haproxy 2.6 unfolds; rampart refuses (RFC 9112 §5.2 lets a proxy answer 502)
    assert_eq!(resp_err(b"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", GET), H1Error::HeaderSyntax);
}

// === framing ===

#[test]
fn body_until_close() {
    let h = resp_ok(b"HTTP/1.1 200 OK\r\n\r\nhello", GET);
    assert_eq!(h.framing, Framing::UntilClose);
    assert!(!h.wants_keep_alive());
}

#[test]
fn chunked_response() {
    let h = resp_ok(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", GET);
    assert_eq!(h.framing, Framing::Chunked);
    assert!(h.wants_keep_alive());
}

#[test]
fn te_chunked_with_content_length() {
    let buf = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n";
    let h = resp_ok(buf, GET);
    assert_eq!(h.framing, Framing::Chunked);
    assert!(h.cl_and_te && h.force_close);
    assert_eq!(kept(&h, buf), [("Transfer-Encoding", "chunked")]);
}

#[test]
fn deviation_other_codings_are_forwarded() {
    // COMPAT: haproxy 2.6 answers 502 to any coding but chunked; RFC 9112 §6.3 frames a
    // list ending in chunked by chunks, and one without chunked until the close.
    let buf = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n";
    let h = resp_ok(buf, GET);
    assert_eq!(h.framing, Framing::Chunked);
    assert_eq!(kept(&h, buf), [("Transfer-Encoding", "gzip, chunked")]);
    let buf = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello";
    let h = resp_ok(buf, GET);
    assert_eq!(h.framing, Framing::UntilClose);
    assert!(h.cl_and_te && !h.wants_keep_alive());
    assert_eq!(kept(&h, buf), [("Transfer-Encoding", "gzip")]);
}

#[test]
fn malformed_transfer_codings_are_502() {
    // chunked not last (RFC 9112 §6.1 lets a server close instead; rampart refuses the
    // ambiguity), chunked twice, empty elements, non-token codings
    for v in
        [&b"chunked, gzip"[..], b"chunked, chunked", b",chunked", b"chunked,", b"", b"gzip chunked", b"chunked;a=b"]
    {
        let mut buf = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: ".to_vec();
        buf.extend_from_slice(v);
        buf.extend_from_slice(b"\r\n\r\n");
        let e = resp_err(&buf, GET);
        assert_eq!((e, e.status(false)), (H1Error::TransferEncoding, 502), "{:?}", String::from_utf8_lossy(v));
    }
}

#[test]
fn identity_coding_is_502() {
    // RFC 9112 §7: `identity` is not a transfer coding; refused whatever the framing,
    // the status or the request method, as haproxy does
    for (buf, method) in [
        (&b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity, chunked\r\n\r\n"[..], GET),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nok", GET),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: IDENTITY\r\n\r\nok", GET),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: identity, chunked\r\n\r\n", GET),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity, chunked\r\n\r\n", Method::Head),
        (b"HTTP/1.1 204 No Content\r\nTransfer-Encoding: identity, chunked\r\n\r\n", GET),
        (b"HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: identity, chunked\r\n\r\n", GET),
        (b"HTTP/1.1 100 Continue\r\nTransfer-Encoding: identity, chunked\r\n\r\n", GET),
    ] {
        let e = resp_err(buf, method);
        assert_eq!((e, e.status(false)), (H1Error::Identity, 502), "{:?}", String::from_utf8_lossy(buf));
    }
    assert_eq!(
        resp_err(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, identity\r\n\r\n", GET),
        H1Error::TransferEncoding
    );
}

#[test]
fn deviation_empty_transfer_encoding_is_502() {
    // COMPAT: haproxy 2.6 reads the body until the close
    assert_eq!(resp_err(b"HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\n\r\nhello", GET), H1Error::TransferEncoding);
    assert_eq!(
        resp_err(b"HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\nContent-Length: 5\r\n\r\nhello", GET),
        H1Error::TransferEncoding
    );
}

#[test]
fn bad_content_length() {
    assert_eq!(resp_err(b"HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\n", GET), H1Error::ContentLength);
    // checked even where no body may follow
    assert_eq!(resp_err(b"HTTP/1.1 204 OK\r\nContent-Length: x\r\n\r\n", GET), H1Error::ContentLength);
    assert_eq!(resp_err(b"HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\n", Method::Head), H1Error::ContentLength);
}

#[test]
fn no_body_statuses() {
    for (buf, status) in [
        (&b"HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n"[..], 204),
        (b"HTTP/1.1 100 Continue\r\n\r\n", 100),
        (b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\nTransfer-Encoding: chunked\r\n\r\n", 103),
    ] {
        let h = resp_ok(buf, GET);
        assert_eq!((h.status, h.framing), (status, Framing::None));
        // HAProxy never forwards framing headers on 1xx and 204
        assert!(h
            .headers
            .iter()
            .filter(|f| matches!(f.kind, HdrKind::ContentLength | HdrKind::TransferEncoding))
            .all(|f| f.drop));
    }
}

#[test]
fn not_modified_keeps_its_content_length() {
    let buf = b"HTTP/1.1 304 Not Modified\r\nContent-Length: 3\r\n\r\n";
    let h = resp_ok(buf, GET);
    assert_eq!(h.framing, Framing::None);
    assert_eq!(kept(&h, buf), [("Content-Length", "3")]);
}

#[test]
fn response_to_head() {
    let buf = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n";
    let h = resp_ok(buf, Method::Head);
    assert_eq!(h.framing, Framing::None);
    assert_eq!(kept(&h, buf), [("Content-Length", "3")]);
    let h = resp_ok(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", Method::Head);
    assert_eq!(h.framing, Framing::None);
}

#[test]
fn response_to_connect() {
    assert_eq!(resp_ok(b"HTTP/1.1 200 Connection established\r\n\r\n", Method::Connect).framing, Framing::None);
    assert_eq!(resp_ok(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", Method::Connect).framing, Framing::None);
    assert_eq!(resp_ok(b"HTTP/1.1 407 Auth\r\nContent-Length: 5\r\n\r\n", Method::Connect).framing, Framing::Length(5));
    assert_eq!(resp_ok(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", GET).framing, Framing::Length(5));
}

#[test]
fn interim_then_final_response() {
    let buf = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let mut h = Head::default();
    assert_eq!(parse_response(buf, MAX, Method::Post, &mut h), Ok(true));
    assert_eq!((h.status, h.framing), (100, Framing::None));
    let rest = &buf[h.len..];
    assert_eq!(parse_response(rest, MAX, Method::Post, &mut h), Ok(true));
    assert_eq!((h.status, h.framing, &rest[h.len..]), (200, Framing::Length(2), &b"ok"[..]));
}

// === connection ===

#[test]
fn http10_response_keep_alive() {
    assert!(!resp_ok(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", GET).wants_keep_alive());
    assert!(resp_ok(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", GET).wants_keep_alive());
    let h = resp_ok(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n", GET);
    assert!(h.force_close && !h.wants_keep_alive());
}

#[test]
fn switching_protocols() {
    let buf = b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
        Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
    let h = resp_ok(buf, GET);
    assert_eq!((h.status, h.framing), (101, Framing::None));
    assert_eq!((h.upgrade, h.websocket), (Some(1), true));
    assert_eq!(h.headers[2].kind, HdrKind::SecWebSocketAccept);
    let e = resp_err(b"HTTP/1.1 101 Switching\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n", GET);
    assert_eq!(e, H1Error::WebSocket);
}

#[test]
fn upgrade_on_other_statuses_is_not_a_switch() {
    // HAProxy 2.6.12 checks no WebSocket handshake on a non-101 response
    let buf =
        b"HTTP/1.1 426 Upgrade Required\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 0\r\n\r\n";
    let h = resp_ok(buf, GET);
    assert_eq!((h.upgrade, h.websocket, h.framing), (None, false, Framing::Length(0)));
    assert_eq!(kept(&h, buf).len(), 3);
}

#[test]
fn upgrade_advertised_without_connection_upgrade_is_dropped() {
    let buf = b"HTTP/1.1 200 OK\r\nUpgrade: h2c\r\nContent-Length: 0\r\n\r\n";
    let h = resp_ok(buf, GET);
    assert_eq!(h.upgrade, None);
    assert_eq!(kept(&h, buf), [("Content-Length", "0")]);
}

#[test]
fn response_fields_not_checked_like_requests() {
    // several Host headers pass on responses; Expect means nothing there
    let buf = b"HTTP/1.1 200 OK\r\nHost: a\r\nHost: b\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n";
    let h = resp_ok(buf, GET);
    assert_eq!(kept(&h, buf).len(), 4);
    assert!(!h.expect_continue);
}

#[test]
fn response_too_large() {
    let buf = b"HTTP/1.1 200 OK\r\nX: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let mut h = Head::default();
    assert_eq!(parse_response(buf, 40, GET, &mut h), Err(H1Error::TooLarge));
    assert_eq!(parse_response(buf, buf.len(), GET, &mut h), Ok(true));
}

#[test]
fn header_name_longer_than_the_buffer_is_502() {
    let mut buf = b"HTTP/1.1 200 OK\r\nX-".to_vec();
    buf.extend_from_slice(&[b'n'; 3000]);
    buf.extend_from_slice(b": v\r\n\r\n");
    let mut h = Head::default();
    let e = parse_response(&buf, 2048, GET, &mut h).unwrap_err();
    assert_eq!((e, e.status(false)), (H1Error::TooLarge, 502));
}
