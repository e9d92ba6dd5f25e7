use super::*;
use rampart_proto::h1::{parse_request, Head};

fn request(raw: &[u8]) -> MsgHead {
    let mut h1 = Head::default();
    assert_eq!(parse_request(raw, raw.len(), &mut h1), Ok(true));
    let mut msg = MsgHead { arena_max: 1024, ..MsgHead::default() };
    crate::h1::msg::fill(&mut msg, &h1);
    msg
}

fn fields_of(raw: &[u8]) -> Vec<(String, String)> {
    let msg = request(raw);
    let mut out = Vec::new();
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    request_fields(msg.view(raw), None, &mut Vec::new(), |n, v| out.push((s(n), s(v))));
    out
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
}

#[test]
fn a_request_gets_pseudo_headers_and_loses_its_hop_by_hop_fields() {
    let raw = b"POST /a?b=1 HTTP/1.1\r\nHost: h.test\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n\
        Keep-Alive: 5\r\nTransfer-Encoding: chunked\r\nTE: gzip, trailers\r\nX-Other: Y\r\n\r\n";
    let expect = pairs(&[
        (":method", "POST"),
        (":scheme", "https"),
        (":path", "/a?b=1"),
        ("host", "h.test"),
        ("te", "trailers"),
        ("x-other", "Y"),
    ]);
    assert_eq!(fields_of(raw), expect);
    let raw = b"GET http://a.test:81 HTTP/1.1\r\nHost: a.test:81\r\nTE: gzip\r\n\r\n";
    let expect = pairs(&[(":method", "GET"), (":scheme", "http"), (":authority", "a.test:81"), (":path", "/")]);
    assert_eq!(fields_of(raw), expect);
    let raw = b"GET / HTTP/1.0\r\n\r\n";
    assert_eq!(fields_of(raw), pairs(&[(":method", "GET"), (":scheme", "https"), (":path", "/")]));
}

#[test]
fn a_connect_sends_its_target_as_authority_and_an_upgrade_its_host() {
    let raw = b"CONNECT t.test:443 HTTP/1.1\r\nHost: t.test:443\r\nX-A: 1\r\n\r\n";
    assert_eq!(fields_of(raw), pairs(&[(":method", "CONNECT"), (":authority", "t.test:443"), ("x-a", "1")]));
    let raw = b"GET /ws HTTP/1.1\r\nHost: h.test\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    let msg = request(raw);
    let mut out = Vec::new();
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    request_fields(msg.view(raw), Some(b"websocket"), &mut Vec::new(), |n, v| out.push((s(n), s(v))));
    let expect = [
        (":method", "CONNECT"),
        (":scheme", "https"),
        (":authority", "h.test"),
        (":path", "/ws"),
        (":protocol", "websocket"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("sec-websocket-version", "13"),
    ];
    assert_eq!(out, pairs(&expect));
}

fn response(fields: &[(&str, &str)], end: bool, method: Method) -> Result<(MsgHead, Vec<u8>), BadResponse> {
    let (mut head, mut buf) = (MsgHead::default(), Vec::new());
    let list = fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes()));
    response_head(list, end, method, &mut buf, &mut head).map(|()| (head, buf))
}

#[test]
fn a_response_head_says_how_its_body_is_framed() {
    let (head, buf) =
        response(&[(":status", "200"), ("content-length", "5"), ("x-a", " b ")], false, Method::Get).expect("valid");
    assert_eq!((head.status, head.body, head.version), (200, BodyLen::Known(5), Version::Http11));
    let v = head.view(&buf);
    // no reason phrase: an HTTP/2 response reaches HTTP/1.1 clients as `200 `, as
    // haproxy 2.6 sends it
    assert_eq!(v.reason(), b"");
    assert_eq!(v.first(b"x-a"), Some(&b"b"[..]));
    let (head, _) = response(&[(":status", "200")], false, Method::Get).unwrap();
    assert_eq!(head.body, BodyLen::Unknown);
    let (head, _) = response(&[(":status", "200")], true, Method::Get).unwrap();
    assert_eq!(head.body, BodyLen::Known(0));
    let (head, _) = response(&[(":status", "200"), ("content-length", "5")], true, Method::Head).unwrap();
    assert_eq!(head.body, BodyLen::None);
    let (head, _) = response(&[(":status", "103")], false, Method::Get).unwrap();
    assert_eq!((head.status, head.body), (103, BodyLen::None));
}

#[test]
fn malformed_responses_are_refused() {
    assert!(response(&[("x-a", "1")], false, Method::Get).is_err());
    assert!(response(&[(":status", "2000")], false, Method::Get).is_err());
    assert!(response(&[(":status", "200"), ("connection", "close")], false, Method::Get).is_err());
    assert!(response(&[(":status", "200"), ("content-length", "3")], true, Method::Get).is_err());
    assert!(response(&[(":status", "200"), ("x", "a\r\nb")], false, Method::Get).is_err());
}

#[test]
fn trailers_become_a_chunked_trailer_section() {
    let mut out = Vec::new();
    push_trailers(&mut out, [(&b"grpc-status"[..], &b"0"[..]), (b"content-length", b"1"), (b"grpc-message", b"ok")]);
    assert_eq!(out, b"grpc-status: 0\r\ngrpc-message: ok\r\n");
}
