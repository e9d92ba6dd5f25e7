//! HTTP/1 connection management through the real binary: keep-alive on both sides,
//! pipelining, HTTP/1.0 with and without keep-alive, `Connection: close`, and the
//! `option http-server-close` / `option httpclose` modes. Each test asserts what the
//! client received (exact bytes where they matter) and what the server received,
//! including which server connection carried each request.

mod http_common;

use std::time::Duration;

use http_common::{client, closes_soon, listen_cfg, read_all, show, start, stays_open};
use rampart_testkit::{HttpBackend, Reply};

#[test]
fn keep_alive_reuses_one_server_connection() {
    let s1 = HttpBackend::builder("s1").respond(|req| Reply::ok().body(req.path.clone())).start();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    for i in 1..=3 {
        c.send(format!("GET /{i} HTTP/1.1\r\nHost: a\r\n\r\n")).unwrap();
        let resp = c.read_response().unwrap();
        assert_eq!(show(&resp.raw), format!("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n/{i}"));
    }
    let seen = s1.wait_requests(3);
    assert_eq!(seen.len(), 3);
    for (i, req) in seen.iter().enumerate() {
        assert_eq!(req.raw_head_str(), format!("GET /{} HTTP/1.1\r\nhost: a\r\n\r\n", i + 1));
        assert_eq!((req.conn, req.seq), (1, i as u64 + 1), "one server connection, used in turn");
    }
    assert_eq!(s1.connections(), 1);
    assert!(stays_open(&mut c, Duration::from_millis(100)), "the client connection is kept");
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    // The first request is the slowest to answer: the answers must still come in order.
    let s1 = HttpBackend::builder("s1")
        .respond(|req| {
            let delay = if req.path == "/1" { Duration::from_millis(150) } else { Duration::ZERO };
            Reply::ok().body(format!("{}:{}", req.path, req.body_str())).delay(delay)
        })
        .start();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send(
        "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n\
         POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc\
         POST /3 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\n\
         GET /4 HTTP/1.1\r\nHost: a\r\n\r\n",
    )
    .unwrap();
    let bodies: Vec<String> = (0..4).map(|_| c.read_response().unwrap().body_str()).collect();
    assert_eq!(bodies, ["/1:", "/2:abc", "/3:de", "/4:"]);
    let seen = s1.wait_requests(4);
    let paths: Vec<&str> = seen.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/1", "/2", "/3", "/4"]);
    assert!(seen.iter().all(|r| r.conn == 1), "all on one server connection: {seen:?}");
}

#[test]
fn http10_without_keep_alive_closes_after_the_response() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("GET /old HTTP/1.0\r\nHost: a\r\n\r\n").unwrap();
    // The server answers in HTTP/1.1: the client is told the connection closes.
    assert_eq!(show(&read_all(&mut c)), "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\ns1");
    // The server side stays alive: HTTP/1.0 needs `connection: keep-alive` for that.
    let seen = s1.wait_requests(1);
    assert_eq!(seen[0].raw_head_str(), "GET /old HTTP/1.0\r\nhost: a\r\nconnection: keep-alive\r\n\r\n");
}

#[test]
fn http10_with_keep_alive_stays_open() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    for _ in 0..2 {
        c.send("GET / HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\n\r\n").unwrap();
        let resp = c.read_response().unwrap();
        assert_eq!(show(&resp.raw), "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\ns1");
    }
    assert!(stays_open(&mut c, Duration::from_millis(100)));
    let seen = s1.wait_requests(2);
    assert_eq!(seen[1].raw_head_str(), "GET / HTTP/1.0\r\nhost: a\r\nconnection: keep-alive\r\n\r\n");
    assert_eq!((seen[1].conn, seen[1].seq), (1, 2));
}

#[test]
fn http10_response_to_http11_client_announces_keep_alive() {
    let s1 = HttpBackend::builder("s1").reply(Reply::ok().version("HTTP/1.0").body("old")).start();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    for _ in 0..2 {
        let resp = c.get("/").unwrap();
        assert_eq!(show(&resp.raw), "HTTP/1.0 200 OK\r\ncontent-length: 3\r\nconnection: keep-alive\r\n\r\nold");
    }
    // The server closed after each HTTP/1.0 response: one connection per request.
    assert_eq!(s1.wait_requests(2).iter().map(|r| r.conn).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn connection_close_from_the_client() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").unwrap();
    assert_eq!(show(&read_all(&mut c)), "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\ns1");
    // The client's close is a hop-by-hop matter: the server connection stays open
    // (http_reuse.rs shows the next client reusing it).
    assert_eq!(s1.wait_requests(1)[0].raw_head_str(), "GET / HTTP/1.1\r\nhost: a\r\n\r\n");
    assert!(!s1.wait_idle(Duration::from_millis(100)), "the server connection is kept");
}

#[test]
fn server_closing_is_not_the_clients_business() {
    // A server that closes after each response (`Connection: close`): the client keeps
    // its connection, each request gets a new server connection.
    let s1 = HttpBackend::builder("s1").reply(Reply::ok().header("Connection", "close").body("x").close()).start();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    for _ in 0..2 {
        let resp = c.get("/").unwrap();
        assert_eq!(show(&resp.raw), "HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nx");
    }
    assert!(stays_open(&mut c, Duration::from_millis(100)));
    assert_eq!(s1.wait_requests(2).iter().map(|r| r.conn).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn http_server_close_keeps_the_client_and_closes_the_server() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("  option http-server-close\n", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    for _ in 0..2 {
        let resp = c.get("/").unwrap();
        assert_eq!(show(&resp.raw), "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\ns1");
    }
    assert!(stays_open(&mut c, Duration::from_millis(100)));
    let seen = s1.wait_requests(2);
    for req in &seen {
        assert_eq!(req.raw_head_str(), "GET / HTTP/1.1\r\nhost: rampart.test\r\nconnection: close\r\n\r\n");
    }
    assert_eq!(seen.iter().map(|r| r.conn).collect::<Vec<_>>(), [1, 2]);
    // An HTTP/1.0 request in this mode: nothing asks the server to keep the connection.
    c.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
    let resp = c.read_response().unwrap();
    assert_eq!(resp.headers.get("connection"), Some("keep-alive"));
    assert_eq!(s1.wait_requests(3)[2].raw_head_str(), "GET / HTTP/1.0\r\n\r\n");
}

#[test]
fn httpclose_closes_both_sides() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("  option httpclose\n", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(show(&read_all(&mut c)), "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\ns1");
    assert_eq!(s1.wait_requests(1)[0].raw_head_str(), "GET / HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n");
    assert!(s1.wait_idle(Duration::from_secs(2)), "the server connection is closed too");
}

#[test]
fn keep_alive_timeout_closes_an_idle_client() {
    let s1 = HttpBackend::start("s1");
    let cfg = listen_cfg("  timeout http-keep-alive 200ms\n", "", &["s1"]);
    let proxy = start(&cfg, &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    assert_eq!(c.get("/").unwrap().status, 200);
    let t = std::time::Instant::now();
    assert!(closes_soon(&mut c), "an idle keep-alive connection is closed");
    let waited = t.elapsed();
    assert!(waited >= Duration::from_millis(150), "closed after {waited:?}");
    // Silently: no 408 for a connection that was idle between requests.
    assert!(c.buffered().is_empty(), "unexpected bytes: {:?}", show(c.buffered()));
}

#[test]
fn a_connection_idle_long_enough_to_be_parked_serves_its_next_request() {
    // rampart parks a keep-alive connection idle for 500 ms (session::park); the next
    // request must find it as if nothing happened, pipelined bytes included.
    let s1 = HttpBackend::builder("s1").respond(|req| Reply::ok().body(req.path.clone())).start();
    let proxy = start(&listen_cfg("  timeout http-keep-alive 10s\n", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    assert_eq!(c.get("/1").unwrap().body, b"/1");
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(c.get("/2").unwrap().body, b"/2");
    std::thread::sleep(Duration::from_millis(800));
    c.send("GET /3 HTTP/1.1\r\nHost: a\r\n\r\nGET /4 HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().body, b"/3");
    assert_eq!(c.read_response().unwrap().body, b"/4");
    assert!(stays_open(&mut c, Duration::from_millis(100)), "still kept alive");
}

#[test]
fn keep_alive_timeout_also_closes_a_parked_connection() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("  timeout http-keep-alive 900ms\n", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    assert_eq!(c.get("/").unwrap().status, 200);
    let t = std::time::Instant::now();
    assert!(closes_soon(&mut c), "the parked connection is closed at its keep-alive timeout");
    let waited = t.elapsed();
    assert!(waited >= Duration::from_millis(800), "closed after {waited:?}");
    assert!(c.buffered().is_empty(), "unexpected bytes: {:?}", show(c.buffered()));
}

#[test]
fn a_tcp_frontend_switching_to_an_http_backend_speaks_http() {
    // As HAProxy: the stream is upgraded to HTTP when it reaches a backend in `mode http`
    // (header names lowercased on the way, the connection kept alive, HTTP errors).
    let s1 = HttpBackend::builder("s1").respond(|req| Reply::ok().body(req.path.clone())).start();
    let cfg = format!(
        "{}frontend fe1\n  mode tcp\n  bind fd@${{fe1}}\n  default_backend be\nbackend be\n  mode http\n  \
         server s1 ${{s1_addr}}:${{s1_port}}\n",
        http_common::PREAMBLE
    );
    let proxy = start(&cfg, &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("GET /a HTTP/1.1\r\nHost: h\r\nX-Case: V\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().body, b"/a");
    c.send("GET /b HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().body, b"/b");
    assert_eq!(s1.wait_requests(2)[0].raw_head_str(), "GET /a HTTP/1.1\r\nhost: h\r\nx-case: V\r\n\r\n");
    // An invalid request gets the HTTP answer, not a relayed byte stream.
    let mut bad = client(&proxy);
    bad.send("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n").unwrap();
    assert_eq!(read_all(&mut bad), http_common::PAGE_400);
}
