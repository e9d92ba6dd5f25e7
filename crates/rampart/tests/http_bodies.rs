//! Message bodies through the real binary: Content-Length and chunked in both
//! directions, responses delimited by the close, messages that have no body (HEAD, 204,
//! 304, 1xx), `Expect: 100-continue`, and bodies of several megabytes, byte-exact.

mod http_common;

use std::io::Write;
use std::time::Duration;

use http_common::{client, listen_cfg, read_all, show, start, stays_open};
use rampart_testkit::{Framing, HttpBackend, RawBackend, Reply, Step};

/// A backend answering with the request body (and its framing in `X-Got`).
fn echo_backend() -> HttpBackend {
    HttpBackend::builder("s1")
        .respond(|req| {
            let framing = if req.headers.contains("transfer-encoding") { "chunked" } else { "length" };
            Reply::ok().header("X-Got", framing).body(req.body.clone())
        })
        .start()
}

#[test]
fn content_length_request_body() {
    let s1 = echo_backend();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world").unwrap();
    let resp = c.read_response().unwrap();
    assert_eq!(show(&resp.raw), "HTTP/1.1 200 OK\r\nx-got: length\r\ncontent-length: 11\r\n\r\nhello world");
    let seen = s1.wait_requests(1);
    assert_eq!(show(&seen[0].raw), "POST /up HTTP/1.1\r\nhost: a\r\ncontent-length: 11\r\n\r\nhello world");
}

#[test]
fn chunked_request_body() {
    let s1 = echo_backend();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
        .unwrap();
    let resp = c.read_response().unwrap();
    assert_eq!(resp.body, b"abcde");
    assert_eq!(resp.headers.get("x-got"), Some("chunked"));
    let seen = &s1.wait_requests(1)[0];
    assert_eq!(seen.raw_head_str(), "POST /up HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n");
    assert_eq!(seen.body, b"abcde");
    // Still usable afterwards: the end of the chunked body was found exactly.
    assert_eq!(c.get("/after").unwrap().status, 200);
    assert_eq!(s1.wait_requests(2)[1].conn, seen.conn);
}

#[test]
fn chunked_request_with_trailers() {
    let s1 = echo_backend();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nX-Sum: 1\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().body, b"x");
    let seen = &s1.wait_requests(1)[0];
    assert_eq!(seen.trailers.get("x-sum"), Some("1"));
}

#[test]
fn chunked_response_body() {
    let s1 = HttpBackend::builder("s1").reply(Reply::ok().body("hello").chunked()).start();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    let resp = c.get("/").unwrap();
    assert_eq!(resp.framing, Framing::Chunked);
    assert_eq!(show(&resp.raw), "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    // Keep-alive after a chunked response.
    assert_eq!(c.get("/again").unwrap().body, b"hello");
    assert_eq!(s1.connections(), 1);
}

#[test]
fn response_delimited_by_the_close() {
    let s1 =
        HttpBackend::builder("s1").reply(Reply::ok().header("X-A", "1").body("until the end").until_close()).start();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    // No length to give the client: the connection closes after the body.
    assert_eq!(show(&read_all(&mut c)), "HTTP/1.1 200 OK\r\nx-a: 1\r\nconnection: close\r\n\r\nuntil the end");
    assert_eq!(s1.connections(), 1);
}

#[test]
fn head_response_has_no_body() {
    let s1 = HttpBackend::builder("s1").reply(Reply::ok().body("0123456789")).start();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let resp = c.read_response_for("HEAD").unwrap();
    assert_eq!(show(&resp.raw), "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n");
    // The next response starts right after the head: no body bytes were relayed.
    assert_eq!(c.get("/").unwrap().body, b"0123456789");
    assert_eq!(s1.wait_requests(2)[0].raw_head_str(), "HEAD / HTTP/1.1\r\nhost: a\r\n\r\n");
}

#[test]
fn head_response_announcing_chunked_has_no_body() {
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
        Step::expect_head(),
        Step::send("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext"),
    ]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let resp = c.read_response_for("HEAD").unwrap();
    assert_eq!(show(&resp.raw), "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
    assert_eq!(c.get("/").unwrap().body, b"next");
}

#[test]
fn no_body_for_204_and_304() {
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        // A 204 with a Content-Length: the length is dropped, no body expected.
        Step::send("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nX-A: 1\r\n\r\n"),
        Step::expect_head(),
        // A 304 keeps its Content-Length (it describes the cached entity), no body.
        Step::send("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\nETag: \"x\"\r\n\r\n"),
        Step::expect_head(),
        Step::send("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nend"),
    ]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    let r204 = c.get("/a").unwrap();
    assert_eq!(show(&r204.raw), "HTTP/1.1 204 No Content\r\nx-a: 1\r\n\r\n");
    let r304 = c.get("/b").unwrap();
    assert_eq!(show(&r304.raw), "HTTP/1.1 304 Not Modified\r\ncontent-length: 10\r\netag: \"x\"\r\n\r\n");
    assert_eq!(c.get("/c").unwrap().body, b"end");
    let conns = s1.connections();
    assert_eq!(conns.len(), 1, "all three on one server connection");
}

#[test]
fn interim_responses_are_relayed() {
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send(
            "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n\
             HTTP/1.1 102 Processing\r\n\r\n\
             HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        ),
    ]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    let resp = c.get("/").unwrap();
    let interim: Vec<(u16, String)> = resp.interim.iter().map(|i| (i.status, show(&i.raw))).collect();
    assert_eq!(
        interim,
        [
            (103, "HTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\n".to_string()),
            (102, "HTTP/1.1 102 Processing\r\n\r\n".to_string()),
        ]
    );
    assert_eq!(show(&resp.raw), "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
}

#[test]
fn expect_100_continue_is_relayed_and_the_body_forwarded() {
    let s1 = echo_backend();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    // A client that waits for the 100 before sending its body.
    c.send("PUT /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n").unwrap();
    assert_eq!(show(&c.read_until("\r\n\r\n").unwrap()), "HTTP/1.1 100 Continue\r\n\r\n");
    c.send("hello").unwrap();
    let resp = c.read_response().unwrap();
    assert_eq!((resp.status, resp.body.as_slice()), (200, b"hello".as_slice()));
    let seen = &s1.wait_requests(1)[0];
    assert_eq!(show(&seen.raw), "PUT /x HTTP/1.1\r\nhost: a\r\nexpect: 100-continue\r\ncontent-length: 5\r\n\r\nhello");
}

/// `len` bytes of a pattern that catches shifted, dropped and repeated blocks.
fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).max(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

#[test]
fn large_bodies_both_ways_are_byte_exact() {
    const LEN: usize = 4 * 1024 * 1024 + 7;
    let s1 = HttpBackend::builder("s1")
        .respond(|req| match req.path.as_str() {
            "/download" => Reply::ok().body(pattern(LEN, 2)),
            "/download-chunked" => Reply::ok().body(pattern(LEN, 3)).chunked(),
            _ => Reply::ok().body(format!("{}", req.body.len())),
        })
        .start();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);

    let up = pattern(LEN, 1);
    let mut head = format!("POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: {LEN}\r\n\r\n").into_bytes();
    head.extend_from_slice(&up);
    c.send(&head).unwrap();
    assert_eq!(c.read_response().unwrap().body_str(), LEN.to_string());

    // The same upload, chunked in uneven pieces.
    let mut chunked = b"POST /upload-chunked HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for piece in up.chunks(100_003) {
        write!(chunked, "{:x}\r\n", piece.len()).unwrap();
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    c.send(&chunked).unwrap();
    assert_eq!(c.read_response().unwrap().body_str(), LEN.to_string());

    let down = c.get("/download").unwrap();
    assert_eq!(down.framing, Framing::Length(LEN as u64));
    assert!(down.body == pattern(LEN, 2), "download differs");
    let down = c.get("/download-chunked").unwrap();
    assert_eq!(down.framing, Framing::Chunked);
    assert!(down.body == pattern(LEN, 3), "chunked download differs");

    let seen = s1.wait_requests(4);
    assert!(seen[0].body == up, "upload differs at the server");
    assert!(seen[1].body == up, "chunked upload differs at the server");
    assert!(seen.iter().all(|r| r.conn == 1), "one server connection for all");
    assert!(stays_open(&mut c, Duration::from_millis(50)));
}
