//! Requests from HTTP/2 fields as HAProxy 2.6 turns them into its internal message,
//! and the HTTP/1 request line and headers an HTTP/1 server then gets.

use super::*;
use crate::h1::write::{write_request_head, ConnHdr, OutFraming, ReqOut};

/// The request the fields make (`end_stream`: no body follows), or why it is refused.
fn request(fields: &[(&str, &str)], end_stream: bool) -> Result<(MsgHead, Vec<u8>), Malformed> {
    let (mut buf, mut head) = (Vec::new(), MsgHead { arena_max: 1024, ..MsgHead::default() });
    let mut r = ReqFields::new(&mut buf, &mut head);
    for (n, v) in fields {
        r.field(n.as_bytes(), v.as_bytes())?;
    }
    r.finish(end_stream)?;
    Ok((head, buf))
}

/// What an HTTP/1 server receives for the request.
fn h1(head: &MsgHead, buf: &[u8]) -> String {
    let mut out = Vec::new();
    write_request_head(&mut out, head.view(buf), ReqOut { conn: ConnHdr::None, framing: OutFraming::AsIs });
    String::from_utf8(out).unwrap()
}

const GET: &[(&str, &str)] =
    &[(":method", "GET"), (":scheme", "https"), (":authority", "example.com"), (":path", "/a?b=1")];

#[test]
fn a_request_with_an_authority_has_an_absolute_target_and_goes_out_in_origin_form() {
    let (head, buf) = request(GET, true).unwrap();
    let view = head.view(&buf);
    assert_eq!(view.uri(), b"https://example.com/a?b=1");
    assert_eq!(view.target().path, b"/a");
    assert_eq!((head.method, head.version, head.body), (Method::Get, Version::Http2, BodyLen::None));
    assert_eq!(h1(&head, &buf), "GET /a?b=1 HTTP/1.1\r\nhost: example.com\r\n\r\n");
}

#[test]
fn values_are_trimmed_but_cookies() {
    let mut f = GET.to_vec();
    f.extend([("x-a", "  v a\t"), ("cookie", " c=1 ")]);
    let (head, buf) = request(&f, true).unwrap();
    assert_eq!(h1(&head, &buf), "GET /a?b=1 HTTP/1.1\r\nhost: example.com\r\nx-a: v a\r\ncookie:  c=1 \r\n\r\n");
}

#[test]
fn a_default_port_leaves_the_target_and_host() {
    let cases = [
        ("http", "h:80", "http://h/", "h"),
        ("http", "h:8080", "http://h:8080/", "h:8080"),
        ("https", "h:443", "https://h/", "h"),
        ("https", "h:80", "https://h:80/", "h:80"),
        ("https", "[::1]:443", "https://[::1]/", "[::1]"),
        ("https", "[::443]", "https://[::443]/", "[::443]"),
    ];
    for (scheme, auth, uri, host) in cases {
        let f = [(":method", "GET"), (":scheme", scheme), (":authority", auth), (":path", "/")];
        let (head, buf) = request(&f, true).unwrap();
        assert_eq!(head.view(&buf).uri(), uri.as_bytes(), "{scheme} {auth}");
        assert_eq!(h1(&head, &buf), format!("GET / HTTP/1.1\r\nhost: {host}\r\n\r\n"), "{scheme} {auth}");
    }
}

#[test]
fn the_authority_replaces_host_and_comes_first() {
    let mut f = GET.to_vec();
    f.extend([("user-agent", "t"), ("host", "other.example")]);
    let (head, buf) = request(&f, true).unwrap();
    assert_eq!(h1(&head, &buf), "GET /a?b=1 HTTP/1.1\r\nhost: example.com\r\nuser-agent: t\r\n\r\n");
}

#[test]
fn without_an_authority_the_path_is_the_target_and_host_stays() {
    let f = [(":method", "GET"), (":scheme", "http"), (":path", "/x"), ("host", "h")];
    let (head, buf) = request(&f, true).unwrap();
    assert_eq!(head.view(&buf).uri(), b"/x");
    assert_eq!(h1(&head, &buf), "GET /x HTTP/1.1\r\nhost: h\r\n\r\n");
}

#[test]
fn other_schemes_keep_their_absolute_form() {
    let f = [(":method", "GET"), (":scheme", "ftp"), (":authority", "h"), (":path", "/f")];
    let (head, buf) = request(&f, true).unwrap();
    assert_eq!(h1(&head, &buf), "GET ftp://h/f HTTP/1.1\r\nhost: h\r\n\r\n");
}

#[test]
fn cookies_are_joined_into_one_header() {
    let mut f = GET.to_vec();
    f.extend([("cookie", "a=1"), ("accept", "*/*"), ("cookie", "b=2"), ("cookie", "c=3")]);
    let (head, buf) = request(&f, true).unwrap();
    assert_eq!(
        h1(&head, &buf),
        "GET /a?b=1 HTTP/1.1\r\nhost: example.com\r\naccept: */*\r\ncookie: a=1; b=2; c=3\r\n\r\n"
    );
}

#[test]
fn what_is_known_of_the_body() {
    let body = |extra: &[(&'static str, &'static str)], es: bool| {
        let mut f = GET.to_vec();
        f.extend_from_slice(extra);
        request(&f, es).map(|(h, _)| h.body)
    };
    assert_eq!(body(&[], true), Ok(BodyLen::None));
    assert_eq!(body(&[], false), Ok(BodyLen::Unknown));
    assert_eq!(body(&[("content-length", "12")], false), Ok(BodyLen::Known(12)));
    assert_eq!(body(&[("content-length", "0")], false), Ok(BodyLen::None));
    assert_eq!(body(&[("content-length", "5"), ("content-length", "5")], false), Ok(BodyLen::Known(5)));
    assert!(body(&[("content-length", "5")], true).is_err(), "a length but no DATA");
    assert!(body(&[("content-length", "5"), ("content-length", "6")], false).is_err());
    assert!(body(&[("content-length", "5a")], false).is_err());
    assert!(body(&[("content-length", "")], false).is_err());
}

#[test]
fn connect_takes_the_authority_alone() {
    let (head, buf) = request(&[(":method", "CONNECT"), (":authority", "h:443")], false).unwrap();
    assert_eq!((head.method, head.view(&buf).uri()), (Method::Connect, &b"h:443"[..]));
    assert!(request(&[(":method", "CONNECT"), (":authority", "h:443"), (":path", "/")], false).is_err());
    assert!(request(&[(":method", "CONNECT")], false).is_err());
}

#[test]
fn malformed_requests_are_refused() {
    let with = |extra: (&'static str, &'static str)| {
        let mut f = GET.to_vec();
        f.push(extra);
        request(&f, true).err()
    };
    assert_eq!(with(("Accept", "x")), Some(Malformed("invalid field name")));
    assert_eq!(with(("acc ept", "x")), Some(Malformed("invalid field name")));
    assert_eq!(with(("accept", "a\r\nb")), Some(Malformed("NUL, CR or LF in a field value")));
    assert_eq!(with(("accept", "a\0b")), Some(Malformed("NUL, CR or LF in a field value")));
    for hop in ["connection", "proxy-connection", "keep-alive", "upgrade", "transfer-encoding"] {
        assert_eq!(with((hop, "x")), Some(Malformed("connection-specific header field")), "{hop}");
    }
    assert_eq!(with(("te", "gzip")), Some(Malformed("te other than trailers")));
    assert_eq!(with(("te", "trailers")), None);
    assert_eq!(with((":path", "/again")), Some(Malformed("repeated pseudo-header")));
    let after = request(&[(":method", "GET"), ("accept", "x"), (":path", "/")], true).err();
    assert_eq!(after, Some(Malformed("pseudo-header after regular fields")));
    let status = request(&[(":status", "200"), (":method", "GET")], true).err();
    assert_eq!(status, Some(Malformed(":status in a request")));
    let protocol = request(&[(":protocol", "websocket"), (":method", "GET")], true).err();
    assert_eq!(protocol, Some(Malformed(":protocol without CONNECT")));
    let other = request(&[(":method", "GET"), (":foo", "bar")], true).err();
    assert_eq!(other, Some(Malformed("unknown pseudo-header")));
    assert_eq!(request(&[(":scheme", "https"), (":path", "/")], true).err(), Some(Malformed("missing :method")));
    assert_eq!(request(&[(":method", "GET"), (":path", "/")], true).err(), Some(Malformed("missing :scheme")));
    assert_eq!(request(&[(":method", "GET"), (":scheme", "http")], true).err(), Some(Malformed("missing :path")));
    let bad_path = |p| request(&[(":method", "GET"), (":scheme", "http"), (":path", p)], true).err();
    assert_eq!(bad_path(""), Some(Malformed("invalid :path")));
    assert_eq!(bad_path("a/b"), Some(Malformed("invalid :path")));
    assert_eq!(bad_path("*"), None);
}

#[test]
fn response_fields_lead_with_the_status_and_leave_connection_fields_out() {
    let raw = b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nConnection: close\r\nKeep-Alive: x\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n";
    let mut h1 = rampart_proto::h1::Head::default();
    let parsed = rampart_proto::h1::parse_response(raw, raw.len(), rampart_proto::h1::Method::Get, &mut h1);
    assert_eq!(parsed, Ok(true));
    let mut res = MsgHead::default();
    crate::h1::msg::fill(&mut res, &h1);
    let mut got = Vec::new();
    response_fields(res.view(raw), &mut Vec::new(), |n, v| {
        got.push(format!("{}: {}", String::from_utf8_lossy(n), String::from_utf8_lossy(v)))
    });
    assert_eq!(got, [":status: 404", "content-type: text/plain", "x-a: 1"]);
}

#[test]
fn an_extended_connect_becomes_an_http1_upgrade() {
    let f = [
        (":method", "CONNECT"),
        (":protocol", "websocket"),
        (":scheme", "https"),
        (":authority", "a.test"),
        (":path", "/chat"),
    ];
    let (mut buf, mut head) = (Vec::new(), MsgHead { arena_max: 1024, ..MsgHead::default() });
    let mut r = ReqFields::new(&mut buf, &mut head);
    for (n, v) in f {
        r.field(n.as_bytes(), v.as_bytes()).unwrap();
    }
    assert_eq!(r.finish(false), Ok(Some(Tunnel::Upgrade)));
    assert_eq!((head.method, head.body), (Method::Get, BodyLen::None));
    assert_eq!(head.view(&buf).method(), b"GET");
    let out = {
        let mut out = Vec::new();
        let req = ReqOut { conn: ConnHdr::Upgrade, framing: OutFraming::AsIs };
        write_request_head(&mut out, head.view(&buf), req);
        String::from_utf8(out).unwrap()
    };
    assert_eq!(out, "GET /chat HTTP/1.1\r\nhost: a.test\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n");
    // RFC 8441 §4: the pseudo-headers of a request, all of them
    let no_path = request(
        &[(":method", "CONNECT"), (":protocol", "websocket"), (":scheme", "https"), (":authority", "a")],
        false,
    );
    assert_eq!(no_path.err(), Some(Malformed("extended CONNECT without :scheme, :path or :authority")));
}

#[test]
fn a_connect_has_no_body_whatever_follows() {
    let (mut buf, mut head) = (Vec::new(), MsgHead { arena_max: 1024, ..MsgHead::default() });
    let mut r = ReqFields::new(&mut buf, &mut head);
    r.field(b":method", b"CONNECT").unwrap();
    r.field(b":authority", b"a.test:443").unwrap();
    assert_eq!(r.finish(false), Ok(Some(Tunnel::Connect)));
    assert_eq!((head.method, head.body), (Method::Connect, BodyLen::None));
}

#[test]
fn a_method_that_is_not_a_token_is_answered_400() {
    let bad = request(&[(":method", "GET?"), (":scheme", "http"), (":path", "/")], true).err();
    assert_eq!(bad, Some(BAD_METHOD));
    assert!(BAD_METHOD.answered_400() && !Malformed("missing :path").answered_400());
}

#[test]
fn a_scheme_that_is_not_one_is_answered_400() {
    let bad = request(&[(":method", "GET"), (":scheme", "http://localhost/?"), (":path", "/")], true).err();
    assert_eq!(bad, Some(BAD_SCHEME));
    assert!(BAD_SCHEME.answered_400());
    for ok in ["http", "https", "coap+tcp", "a.b-c"] {
        assert!(request(&[(":method", "GET"), (":scheme", ok), (":path", "/")], true).is_ok(), "{ok}");
    }
    for bad in ["", "1http", "ht tp", "http:"] {
        let got = request(&[(":method", "GET"), (":scheme", bad), (":path", "/")], true).err();
        assert_eq!(got, Some(BAD_SCHEME), "{bad:?}");
    }
}
