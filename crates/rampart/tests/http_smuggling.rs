//! Request smuggling and malformed requests: every message two parties could frame
//! differently is refused with HAProxy's exact 400 page, the client connection is
//! closed, and nothing at all reaches the server (not even a connection). Each vector
//! was checked against haproxy 2.6.12; the one where rampart is stricter says so.
//!
//! A message with both `Content-Length` and `Transfer-Encoding: chunked` is not refused:
//! as HAProxy, rampart frames it by chunked, drops the length, and closes the client
//! connection after the response.

mod http_common;

use http_common::{client, listen_cfg, read_all, show, start, BODY_502, PAGE_400, PAGE_422};
use rampart_testkit::{HttpBackend, RawBackend, Running, Step};

/// A proxy in front of a raw backend that would answer anything with a 200.
fn proxy_with_raw_backend(extra_global: &str) -> (Running, RawBackend) {
    let s1 = RawBackend::start(vec![Step::expect_head(), Step::send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")]);
    let cfg = listen_cfg("", "", &["s1"]).replacen("global\n", &format!("global\n{extra_global}"), 1);
    (start(&cfg, &[("s1", s1.addr())]), s1)
}

/// What the first server connection received, once it is `expected` (the proxy keeps
/// the connection idle, so waiting for it to finish would take the backend's linger).
fn assert_received(s1: &RawBackend, expected: impl AsRef<[u8]>) {
    let expected = expected.as_ref();
    rampart_testkit::eventually!(
        s1.received().first().is_some_and(|r| r.len() >= expected.len()),
        "the server got {:?}",
        s1.received()
    );
    assert_eq!(show(&s1.received()[0]), show(expected));
}

/// Sends each vector on its own connection and asserts the 400 and the close; then
/// asserts the backend never saw a connection.
fn assert_all_refused(vectors: &[(&str, &[u8])]) {
    let (proxy, s1) = proxy_with_raw_backend("");
    for (what, request) in vectors {
        let mut c = client(&proxy);
        c.send(request).unwrap();
        let got = read_all(&mut c);
        assert_eq!(show(&got), show(PAGE_400), "{what}: {:?}", show(request));
    }
    // The proxy is still serving, and the server never heard of any of it.
    let mut c = client(&proxy);
    assert_eq!(c.get("/fine").unwrap().status, 200);
    let conns = s1.connections();
    assert_eq!(conns.len(), 1, "only the valid request reached the server: {conns:?}");
    assert!(conns[0].received.starts_with(b"GET /fine HTTP/1.1\r\n"), "{conns:?}");
}

#[test]
fn conflicting_or_malformed_content_length() {
    assert_all_refused(&[
        (
            "two different lengths",
            b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
        ),
        ("a list of different lengths", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 6\r\n\r\nhello!"),
        ("empty", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n"),
        ("sign", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\nhello"),
        ("negative", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\nhello"),
        ("hexadecimal", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x5\r\n\r\nhello"),
        ("two numbers", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1 2\r\n\r\nab"),
        ("overflow", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\nab"),
    ]);
}

#[test]
fn equal_content_lengths_are_merged() {
    let (proxy, s1) = proxy_with_raw_backend("");
    let mut c = client(&proxy);
    c.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\nContent-Length: 5\r\n\r\nhello").unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
    assert_received(&s1, "POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 5\r\n\r\nhello");
}

#[test]
fn transfer_encoding_not_ending_in_chunked() {
    assert_all_refused(&[
        ("chunked then gzip", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n"),
        ("gzip only", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\n"),
        ("identity", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n"),
        ("chunked twice", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n"),
        (
            "chunked in two headers",
            b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        ),
        ("unknown coding", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"),
    ]);
}

#[test]
fn identity_is_not_a_transfer_coding() {
    // RFC 9112 §7 knows no `identity` coding (RFC 7230 removed RFC 2616's). As haproxy
    // 2.6, a request listing it before chunked gets the mux's 422 and the connection
    // closes (a list that is invalid anyway keeps its 400, see above); nothing reaches
    // the server.
    let (proxy, s1) = proxy_with_raw_backend("");
    for request in [
        &b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n"[..],
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Identity\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n",
    ] {
        let mut c = client(&proxy);
        c.send(request).unwrap();
        assert_eq!(show(&read_all(&mut c)), show(PAGE_422), "{:?}", show(request));
    }
    let mut c = client(&proxy);
    assert_eq!(c.get("/fine").unwrap().status, 200);
    let conns = s1.connections();
    assert_eq!(conns.len(), 1, "only the valid request reached the server: {conns:?}");
    assert!(conns[0].received.starts_with(b"GET /fine HTTP/1.1\r\n"), "{conns:?}");
}

#[test]
fn identity_coding_in_a_response_is_502() {
    // As haproxy 2.6: whatever comes after it, the client gets the stream's 502.
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send("HTTP/1.1 200 OK\r\nTransfer-Encoding: identity, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"),
    ]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    let r = c.get("/").unwrap();
    assert_eq!((r.status, show(&r.body)), (502, BODY_502.to_owned()));
}

#[test]
fn invalid_chunk_framing() {
    assert_all_refused(&[
        (
            "chunk size not hex",
            b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
        ),
        (
            "chunk size overflow",
            b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
        ),
        (
            "data longer than its size",
            b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
        ),
        ("negative size", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n"),
    ]);
}

#[test]
fn control_characters_in_fields() {
    let mut vectors: Vec<(&str, &[u8])> = vec![
        ("CR in a value", b"GET / HTTP/1.1\r\nHost: a\r\nX-A: a\rb\r\n\r\n"),
        ("NUL in a name", b"GET / HTTP/1.1\r\nHost: a\r\n\x00X: 1\r\n\r\n"),
        ("DEL in a name", b"GET / HTTP/1.1\r\nHost: a\r\nX\x7fA: 1\r\n\r\n"),
        ("CR in the request line", b"GET /a\rb HTTP/1.1\r\nHost: a\r\n\r\n"),
        ("LF in the target", b"GET /a\nb HTTP/1.1\r\nHost: a\r\n\r\n"),
        ("control character in the method", b"G\x01T / HTTP/1.1\r\nHost: a\r\n\r\n"),
    ];
    if !http_common::testing_reference() {
        // COMPAT: haproxy 2.6 forwards NUL and other control characters in values (and
        // unfolds obsolete line folding); rampart refuses them (rampart-proto h1/head.rs).
        vectors.extend([
            ("NUL in a value", b"GET / HTTP/1.1\r\nHost: a\r\nX-A: a\x00b\r\n\r\n".as_slice()),
            ("control character in a value", b"GET / HTTP/1.1\r\nHost: a\r\nX-A: \x01b\r\n\r\n"),
            ("obsolete line folding", b"GET / HTTP/1.1\r\nHost: a\r\nX-A: a\r\n b\r\n\r\n"),
        ]);
    }
    assert_all_refused(&vectors);
}

#[test]
fn invalid_header_names() {
    assert_all_refused(&[
        ("space before the colon", b"GET / HTTP/1.1\r\nHost : a\r\n\r\n"),
        (
            "space before the colon of Transfer-Encoding",
            b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
        ),
        ("tab before the colon", b"GET / HTTP/1.1\r\nHost\t: a\r\n\r\n"),
        ("separator in the name", b"GET / HTTP/1.1\r\nHost: a\r\nX(A): 1\r\n\r\n"),
        ("space in the name", b"GET / HTTP/1.1\r\nHost: a\r\nX A: 1\r\n\r\n"),
        ("empty name", b"GET / HTTP/1.1\r\nHost: a\r\n: empty\r\n\r\n"),
        ("no colon", b"GET / HTTP/1.1\r\nHost: a\r\nX-A\r\n\r\n"),
        ("two different hosts", b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
    ]);
}

#[test]
fn non_http1_request_lines() {
    assert_all_refused(&[
        ("HTTP/0.9 (no version)", b"GET /\r\n\r\n"),
        ("other protocol", b"GET / FOO/1.1\r\nHost: a\r\n\r\n"),
        ("lowercase protocol", b"GET / http/1.1\r\nHost: a\r\n\r\n"),
        ("two-digit minor", b"GET / HTTP/1.10\r\nHost: a\r\n\r\n"),
        ("no minor", b"GET / HTTP/1\r\nHost: a\r\n\r\n"),
        ("trailing word", b"GET / HTTP/1.1 x\r\nHost: a\r\n\r\n"),
        ("space in the target", b"GET /a b HTTP/1.1\r\nHost: a\r\n\r\n"),
        ("binary garbage", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"),
    ]);
}

#[test]
fn http2_version_on_an_http1_connection_is_treated_as_http11() {
    // As haproxy: any HTTP/x.y from 1.1 up is HTTP/1.1 on the way out.
    let (proxy, s1) = proxy_with_raw_backend("");
    let mut c = client(&proxy);
    c.send("GET / HTTP/2.0\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
    assert_received(&s1, "GET / HTTP/1.1\r\nhost: a\r\n\r\n");
}

/// A request whose head is `len` bytes long, most of it in one header.
fn request_of_len(len: usize) -> Vec<u8> {
    let fixed = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: \r\n\r\n".len();
    format!("GET / HTTP/1.1\r\nHost: a\r\nX-Big: {}\r\n\r\n", "b".repeat(len - fixed)).into_bytes()
}

#[test]
fn heads_larger_than_bufsize_minus_maxrewrite_are_refused() {
    // Defaults: tune.bufsize 16384, tune.maxrewrite 1024, so at most 15360 bytes of head.
    // COMPAT: haproxy counts its internal representation of the head, which stops a
    // little earlier (15273 bytes for this shape); rampart counts the bytes received.
    assert_all_refused(&[("head of 15400 bytes", &request_of_len(15_400))]);
    let (proxy, s1) = proxy_with_raw_backend("");
    let mut c = client(&proxy);
    c.send(request_of_len(15_000)).unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
    assert_received(&s1, show(&request_of_len(15_000)).replace("X-Big", "x-big").replace("Host", "host"));
}

#[test]
fn a_larger_bufsize_accepts_larger_heads() {
    let (proxy, s1) = proxy_with_raw_backend("  tune.bufsize 32768\n");
    let mut c = client(&proxy);
    c.send(request_of_len(30_000)).unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
    assert_received(&s1, show(&request_of_len(30_000)).replace("X-Big", "x-big").replace("Host", "host"));
    let mut c = client(&proxy);
    c.send(request_of_len(32_000)).unwrap();
    assert_eq!(show(&read_all(&mut c)), show(PAGE_400));
}

#[test]
fn too_many_header_fields() {
    let many = |n: usize| {
        let mut req = "GET / HTTP/1.1\r\nHost: a\r\n".to_string();
        for i in 1..n {
            req.push_str(&format!("X-{i}: v\r\n"));
        }
        req + "\r\n"
    };
    assert_all_refused(&[("101 fields", many(101).as_bytes())]);
    let (proxy, _s1) = proxy_with_raw_backend("");
    let mut c = client(&proxy);
    c.send(many(100)).unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
}

#[test]
fn content_length_with_chunked_is_framed_by_chunked_then_closed() {
    let s1 = HttpBackend::builder("s1").respond(|req| rampart_testkit::Reply::ok().body(req.body.clone())).start();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    // The length (10) would swallow the start of a smuggled request; chunked says 5.
    c.send(
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n\
         5\r\nhello\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
    )
    .unwrap();
    // The response says the connection closes, and it does: nothing after it is served.
    assert_eq!(show(&read_all(&mut c)), "HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello");
    let seen = s1.wait_requests(1);
    assert_eq!(
        show(&seen[0].raw),
        "POST / HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
    );
    assert_eq!(s1.requests().len(), 1, "the smuggled request went nowhere");
}

#[test]
fn chunked_in_http10_is_refused() {
    rampart_only!();
    // COMPAT: haproxy 2.6 frames it by chunks and closes after the response; RFC 9112
    // §6.1 says such framing cannot be trusted (docs/COMPATIBILITY.md, "Stricter than HAProxy").
    assert_all_refused(&[(
        "Transfer-Encoding in HTTP/1.0",
        b"POST / HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
    )]);
}

#[test]
fn invalid_chunk_after_the_head_was_forwarded_gets_400() {
    // The head and a valid chunk went to the server; the next chunk size is garbage. No
    // response started: the client gets haproxy's 400 (as the stream sends it, lowercase,
    // closing), and the server never sees the invalid bytes.
    let s1 = RawBackend::start(vec![Step::expect_until("hello\r\n"), Step::ReadToEnd]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n").unwrap();
    rampart_testkit::eventually!(s1.received().first().is_some_and(|r| r.ends_with(b"hello\r\n")));
    c.send("zz\r\n").unwrap();
    let page = "HTTP/1.1 400 Bad request\r\ncontent-length: 90\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n\
                connection: close\r\n\r\n<html><body><h1>400 Bad request</h1>\nYour browser sent an invalid request.\n</body></html>\n";
    assert_eq!(show(&read_all(&mut c)), page);
    let conns = s1.wait_finished(1);
    assert_eq!(
        conns[0].received_str(),
        "POST / HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n"
    );
}
