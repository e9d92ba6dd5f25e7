//! The test backends and the client on their own, without a proxy in between.

use std::io::ErrorKind;
use std::time::{Duration, Instant};

use rampart_testkit::{
    closed_port, http_get, Framing, HttpBackend, RawBackend, RawClient, Reply, Step, TcpEchoBackend,
};

#[test]
fn http_backend_default_reply_names_it() {
    let be = HttpBackend::start("alpha");
    let resp = http_get(be.addr(), "/x");
    assert_eq!(resp.raw, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nalpha");
    let seen = be.wait_requests(1);
    assert_eq!(seen[0].raw, b"GET /x HTTP/1.1\r\nHost: rampart.test\r\nConnection: close\r\n\r\n");
    assert_eq!(seen[0].headers.names(), vec!["Host", "Connection"]);
}

#[test]
fn http_backend_pipelining_keep_alive_and_connections() {
    let be = HttpBackend::builder("b").respond(|req| Reply::ok().body(format!("{} {}", req.method, req.path))).start();
    let mut c1 = RawClient::connect(be.addr()).unwrap();
    // Two pipelined requests in one write, the second with a chunked body and a trailer.
    c1.send(
        "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n\
         POST /2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nwiki\r\n0\r\nX-T: 1\r\n\r\n",
    )
    .unwrap();
    assert_eq!(c1.read_response().unwrap().body, b"GET /1");
    assert_eq!(c1.read_response().unwrap().body, b"POST /2");
    let mut c2 = RawClient::connect(be.addr()).unwrap();
    assert_eq!(c2.get("/3").unwrap().body, b"GET /3");

    let seen = be.wait_requests(3);
    assert_eq!(seen.iter().map(|r| (r.conn, r.seq)).collect::<Vec<_>>(), vec![(1, 1), (1, 2), (2, 1)]);
    assert_eq!(seen[1].body, b"wiki");
    assert_eq!(seen[1].trailers.get("x-t"), Some("1"));
    assert_eq!(
        seen[1].raw,
        b"POST /2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nwiki\r\n0\r\nX-T: 1\r\n\r\n"
    );
    assert_ne!(seen[0].peer, seen[2].peer);
    assert_eq!(be.connections(), 2);
}

#[test]
fn http_backend_closes_when_asked() {
    let be = HttpBackend::builder("b")
        .respond(|req| if req.path == "/close" { Reply::ok().close() } else { Reply::ok() })
        .start();
    // Reply::close
    let mut c = RawClient::connect(be.addr()).unwrap();
    assert_eq!(c.get("/close").unwrap().status, 200);
    assert!(c.is_closed_within(Duration::from_secs(2)));
    // HTTP/1.0 without keep-alive
    let mut c = RawClient::connect(be.addr()).unwrap();
    c.send("GET / HTTP/1.0\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
    assert!(c.is_closed_within(Duration::from_secs(2)));
    // HTTP/1.1 stays open
    let mut c = RawClient::connect(be.addr()).unwrap();
    assert_eq!(c.get("/").unwrap().status, 200);
    assert!(!c.is_closed_within(Duration::from_millis(100)));
}

#[test]
fn reply_framings_delay_and_raw() {
    let be = HttpBackend::builder("b")
        .respond(|req| match req.path.as_str() {
            "/chunked" => Reply::new(201).header("x-a", "1").body("abc").chunked(),
            "/close" => Reply::ok().body("until close").until_close(),
            "/empty" => Reply::new(204).without_body(),
            "/slow" => Reply::ok().delay(Duration::from_millis(200)),
            _ => Reply::raw("HTTP/1.1 299 Odd\r\nContent-Length: 1\r\n\r\nx"),
        })
        .start();
    let mut c = RawClient::connect(be.addr()).unwrap();
    let chunked = c.get("/chunked").unwrap();
    assert_eq!(
        chunked.raw,
        b"HTTP/1.1 201 Created\r\nx-a: 1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
    );
    assert_eq!((chunked.framing, chunked.body.as_slice()), (Framing::Chunked, b"abc".as_slice()));
    let empty = c.get("/empty").unwrap();
    assert_eq!(empty.raw, b"HTTP/1.1 204 No Content\r\n\r\n");
    let raw = c.get("/raw").unwrap();
    assert_eq!((raw.status, raw.reason.as_str(), raw.body.as_slice()), (299, "Odd", b"x".as_slice()));
    let start = Instant::now();
    assert_eq!(c.get("/slow").unwrap().status, 200);
    assert!(start.elapsed() >= Duration::from_millis(200));
    let close = c.get("/close").unwrap();
    assert_eq!((close.framing, close.body.as_slice()), (Framing::UntilClose, b"until close".as_slice()));
}

#[test]
fn streamed_chunks_arrive_apart() {
    let be = HttpBackend::builder("b").reply(Reply::ok().chunks(["a", "b", "c"], Duration::from_millis(80))).start();
    let mut c = RawClient::connect(be.addr()).unwrap();
    c.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    let timed = c.read_response_timed().unwrap();
    assert_eq!(timed.response.body, b"abc");
    let gaps = timed.gaps();
    assert_eq!(gaps.len(), 3);
    assert!(gaps[0] < Duration::from_millis(60), "the first chunk travels with the head: {gaps:?}");
    assert!(gaps[1] >= Duration::from_millis(70) && gaps[2] >= Duration::from_millis(70), "{gaps:?}");
}

#[test]
fn head_response_has_no_body() {
    let be = HttpBackend::start("named");
    let mut c = RawClient::connect(be.addr()).unwrap();
    c.send("HEAD / HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    let head = c.read_response_for("HEAD").unwrap();
    assert_eq!(head.raw, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
    // Nothing of a body followed: the next response parses cleanly.
    assert_eq!(c.get("/").unwrap().body, b"named");
}

#[test]
fn expect_continue_is_answered_unless_disabled() {
    let be = HttpBackend::start("b");
    let mut c = RawClient::connect(be.addr()).unwrap();
    c.send("PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n").unwrap();
    assert_eq!(c.read_until("\r\n\r\n").unwrap(), b"HTTP/1.1 100 Continue\r\n\r\n");
    c.send("hi").unwrap();
    let resp = c.read_response().unwrap();
    assert!(resp.interim.is_empty());
    assert_eq!(be.wait_requests(1)[0].body, b"hi");

    let quiet = HttpBackend::builder("q").no_continue().start();
    let mut c = RawClient::connect(quiet.addr()).unwrap();
    c.send("PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi").unwrap();
    let resp = c.read_response().unwrap();
    assert!(resp.interim.is_empty());
    assert_eq!(resp.body, b"q");
}

#[test]
fn raw_backend_runs_the_script_per_connection() {
    let be = RawBackend::start(vec![
        Step::expect_until("\n"),
        Step::send("one\n"),
        Step::ExpectBytes(3),
        Step::send("two\n"),
    ]);
    for _ in 0..2 {
        let mut c = RawClient::connect(be.addr()).unwrap();
        c.send("hello\n").unwrap();
        assert_eq!(c.read_until("\n").unwrap(), b"one\n");
        c.send("xyz").unwrap();
        assert_eq!(c.read_to_end().unwrap(), b"two\n", "script end closes the connection");
    }
    let conns = be.wait_finished(2);
    assert_eq!(conns.len(), 2);
    assert!(conns.iter().all(|c| c.received == b"hello\nxyz" && c.error.is_none()), "{conns:?}");
    assert_eq!((conns[0].conn, conns[1].conn), (1, 2));
}

#[test]
fn raw_backend_reports_a_script_cut_short() {
    let be = RawBackend::start(vec![Step::expect_head(), Step::send("never")]);
    let mut c = RawClient::connect(be.addr()).unwrap();
    c.send("GET / HTTP/1.1\r\n").unwrap();
    c.shutdown_write().unwrap();
    let conns = be.wait_finished(1);
    assert_eq!(conns[0].received, b"GET / HTTP/1.1\r\n");
    let error = conns[0].error.clone().unwrap_or_default();
    assert!(error.starts_with("step 0 (ExpectUntil"), "{error}");
    assert!(error.ends_with("peer closed before the delimiter"), "{error}");
}

#[test]
fn raw_backend_half_close_and_read_to_end() {
    let be = RawBackend::start(vec![Step::send("bye"), Step::ShutdownWrite, Step::ReadToEnd]);
    let mut c = RawClient::connect(be.addr()).unwrap();
    assert_eq!(c.read_to_end().unwrap(), b"bye");
    c.send("still writing").unwrap();
    c.shutdown_write().unwrap();
    let conns = be.wait_finished(1);
    assert_eq!(conns[0].received, b"still writing");
}

#[test]
fn echo_backend_half_close() {
    let be = TcpEchoBackend::start();
    let mut c = RawClient::connect(be.addr()).unwrap();
    c.send("abc").unwrap();
    c.shutdown_write().unwrap();
    assert_eq!(c.read_to_end().unwrap(), b"abc");
    assert_eq!(be.wait_finished(1)[0].received, b"abc");
}

#[test]
fn closed_port_refuses_and_dropped_backends_stop() {
    let err = RawClient::connect(closed_port()).err().map(|e| e.kind());
    assert_eq!(err, Some(ErrorKind::ConnectionRefused));

    let be = HttpBackend::start("gone");
    let addr = be.addr();
    let mut open = RawClient::connect(addr).unwrap();
    assert_eq!(open.get("/").unwrap().status, 200);
    drop(be);
    assert!(open.is_closed_within(Duration::from_secs(1)), "open connections are shut down");
    assert_eq!(RawClient::connect(addr).err().map(|e| e.kind()), Some(ErrorKind::ConnectionRefused));
}
