//! The testkit driving the installed haproxy in HTTP mode: launcher + HttpBackend /
//! RawBackend + RawClient, asserting the exact bytes each side saw. Skipped (with a note)
//! when haproxy is not installed.

use std::time::Duration;

use rampart_testkit::{
    closed_port, http_get, require_haproxy, Framing, HttpBackend, Proxy, RawBackend, RawClient, Reply, Running, Signal,
    StartError, Step,
};

const HTTP_CFG: &str = "\
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 1s
listen fe1
  bind fd@${fe1}
  server s1 ${s1_addr}:${s1_port}
";

fn start(haproxy: &std::path::Path, s1: std::net::SocketAddr) -> Running {
    Proxy::new(haproxy).listener("fe1").backend("s1", s1).config(HTTP_CFG).start().expect("haproxy starts")
}

/// [`HTTP_CFG`] with `option` lines added to `defaults`.
fn start_with(haproxy: &std::path::Path, s1: std::net::SocketAddr, defaults: &str) -> Running {
    let cfg = HTTP_CFG.replace("defaults\n", &format!("defaults\n{defaults}"));
    Proxy::new(haproxy).listener("fe1").backend("s1", s1).config(&cfg).start().expect("haproxy starts")
}

#[test]
fn request_and_response_bytes_through_haproxy() {
    let haproxy = require_haproxy!();
    let s1 = HttpBackend::builder("s1").reply(Reply::ok().header("X-Mixed-Case", "v").body("hello")).start();
    let proxy = start(&haproxy, s1.addr());

    let mut client = RawClient::connect(proxy.addr("fe1")).unwrap();
    client.send("GET /a?b=c HTTP/1.1\r\nHost: example\r\nX-Foo: Bar\r\nUser-Agent: t\r\n\r\n").unwrap();
    let resp = client.read_response().unwrap();

    // haproxy 2.6 lowercases header names on output, in both directions.
    let seen = s1.wait_requests(1);
    assert_eq!(seen[0].raw, b"GET /a?b=c HTTP/1.1\r\nhost: example\r\nx-foo: Bar\r\nuser-agent: t\r\n\r\n");
    assert_eq!((seen[0].method.as_str(), seen[0].path.as_str()), ("GET", "/a?b=c"));
    assert_eq!(seen[0].headers.names(), vec!["host", "x-foo", "user-agent"]);
    assert_eq!(resp.raw, b"HTTP/1.1 200 OK\r\nx-mixed-case: v\r\ncontent-length: 5\r\n\r\nhello");
    assert_eq!((resp.status, resp.reason.as_str(), resp.framing), (200, "OK", Framing::Length(5)));
    assert_eq!(resp.body, b"hello");

    // Keep-alive: the second request goes over the same server connection.
    let again = client.get("/second").unwrap();
    assert_eq!(again.body, b"hello");
    let seen = s1.wait_requests(2);
    assert_eq!(seen[1].path, "/second");
    assert_eq!((seen[1].conn, seen[1].seq), (seen[0].conn, 2));
    assert_eq!(seen[1].peer, seen[0].peer);
    assert_eq!(s1.connections(), 1);
}

#[test]
fn chunked_bodies_and_streamed_chunks() {
    let haproxy = require_haproxy!();
    let s1 = HttpBackend::builder("s1")
        .respond(|req| match req.path.as_str() {
            "/stream" => Reply::ok().chunks(["one", "two", "three"], Duration::from_millis(150)),
            _ => Reply::ok().body(req.body.clone()),
        })
        .start();
    // By default haproxy sends with MSG_MORE while a message is unfinished, which lets the
    // kernel hold a chunk up to 200 ms; `http-no-delay` is its switch for streaming.
    let proxy = start_with(&haproxy, s1.addr(), "  option http-no-delay\n");
    let mut client = RawClient::connect(proxy.addr("fe1")).unwrap();

    client
        .send("POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
        .unwrap();
    let echoed = client.read_response().unwrap();
    assert_eq!(echoed.body, b"abcde");
    let up = &s1.wait_requests(1)[0];
    assert_eq!(up.body, b"abcde");
    assert_eq!(up.headers.get("transfer-encoding"), Some("chunked"));
    // haproxy re-frames what it forwards: the two chunks arrive as one.
    assert_eq!(up.raw, b"POST /up HTTP/1.1\r\nhost: h\r\ntransfer-encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\n\r\n");

    client.send("GET /stream HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    let timed = client.read_response_timed().unwrap();
    assert_eq!(timed.response.framing, Framing::Chunked);
    assert_eq!(timed.response.chunks, vec![b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]);
    let data: Vec<&[u8]> = timed.pieces.iter().map(|p| p.data.as_slice()).collect();
    assert_eq!(data, vec![b"one".as_slice(), b"two", b"three"]);
    // Each chunk reached the client on its own, about 150 ms after the previous one.
    let gaps = timed.gaps();
    assert!(gaps[1] >= Duration::from_millis(100) && gaps[2] >= Duration::from_millis(100), "{gaps:?}");
}

#[test]
fn head_and_interim_responses() {
    let haproxy = require_haproxy!();
    let s1 = HttpBackend::start("s1");
    let proxy = start(&haproxy, s1.addr());
    let mut client = RawClient::connect(proxy.addr("fe1")).unwrap();

    client.send("HEAD / HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    let head = client.read_response_for("HEAD").unwrap();
    assert_eq!((head.status, head.headers.get("content-length")), (200, Some("2")));
    assert!(head.body.is_empty());

    // The backend answers `Expect: 100-continue` with a 100 before reading the body.
    client.send("PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc").unwrap();
    let put = client.read_response().unwrap();
    assert_eq!(put.interim.len(), 1);
    assert_eq!(
        (put.interim[0].status, put.interim[0].raw.as_slice()),
        (100, b"HTTP/1.1 100 Continue\r\n\r\n".as_slice())
    );
    assert_eq!((put.status, put.body.as_slice()), (200, b"s1".as_slice()));
    let seen = s1.wait_requests(2);
    assert_eq!((seen[0].method.as_str(), seen[1].method.as_str()), ("HEAD", "PUT"));
    assert_eq!(seen[1].body, b"abc");
}

#[test]
fn close_delimited_response_and_closing_backend() {
    let haproxy = require_haproxy!();
    let s1 = HttpBackend::builder("s1").respond(|_| Reply::ok().body("bye").until_close()).start();
    let proxy = start(&haproxy, s1.addr());

    let mut client = RawClient::connect(proxy.addr("fe1")).unwrap();
    client.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    let resp = client.read_response().unwrap();
    assert_eq!(resp.body, b"bye");
    assert!(!resp.headers.contains("content-length"));
    // The backend closed after its reply: the server connection is finished.
    assert!(s1.wait_idle(Duration::from_secs(2)));
}

#[test]
fn server_refusing_connections_gives_503() {
    let haproxy = require_haproxy!();
    // No retries: haproxy waits 1 s between connection attempts.
    let proxy = start_with(&haproxy, closed_port(), "  retries 0\n");
    let resp = http_get(proxy.addr("fe1"), "/");
    assert_eq!(resp.status, 503);
    assert!(resp.body_str().contains("503 Service Unavailable"), "{}", resp.body_str());
}

#[test]
fn raw_backend_sees_exact_bytes() {
    let haproxy = require_haproxy!();
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send("HTTP/1.1 200 OK\r\nX-Weird-CASE: 1\r\nContent-Length: 2\r\n\r\nok"),
    ]);
    let proxy = start(&haproxy, s1.addr());
    let mut client = RawClient::connect(proxy.addr("fe1")).unwrap();
    client.send("GET /raw HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    let resp = client.read_response().unwrap();
    assert_eq!(resp.raw, b"HTTP/1.1 200 OK\r\nx-weird-case: 1\r\ncontent-length: 2\r\n\r\nok");

    // The script ended with a half-close; haproxy closed its side in turn.
    let conns = s1.wait_finished(1);
    assert_eq!(conns.len(), 1);
    assert_eq!(conns[0].received, b"GET /raw HTTP/1.1\r\nhost: h\r\n\r\n");
    assert_eq!(conns[0].error, None);
}

#[test]
fn placeholders_and_environment_reach_the_config() {
    let haproxy = require_haproxy!();
    // `${fe1_port}` and `${testdir}` are filled in by the testkit; `${GREETING}` is left
    // for haproxy, which expands it from the environment.
    let cfg = "\
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 1s
frontend fe1
  bind fd@${fe1}
  http-request return status 200 content-type text/plain string \"${GREETING}:${fe1_port}:${testdir}\"
";
    let proxy = Proxy::new(&haproxy).listener("fe1").env("GREETING", "hi").config(cfg).start().unwrap();
    let resp = http_get(proxy.addr("fe1"), "/");
    let expected = format!("hi:{}:{}", proxy.addr("fe1").port(), proxy.dir().display());
    assert_eq!(resp.body_str(), expected);
    assert!(proxy.config().contains(&format!("bind fd@{}", proxy_fd(&proxy))));
}

/// The fd number written into the configuration (`bind fd@N`).
fn proxy_fd(proxy: &Running) -> String {
    let line = proxy.config().lines().find(|l| l.contains("fd@")).unwrap_or_default();
    line.rsplit('@').next().unwrap_or_default().to_string()
}

#[test]
fn start_fails_with_the_output_of_a_bad_config() {
    let haproxy = require_haproxy!();
    let err = match Proxy::new(&haproxy).listener("fe1").config("frontend fe1\n  bind fd@${fe1}\n  bogus\n").start() {
        Ok(_) => panic!("a bad configuration must not start"),
        Err(e) => e,
    };
    let StartError::Exited { status, output, config } = err else { panic!("expected Exited") };
    assert_eq!(status.code(), Some(1));
    assert!(output.contains("parsing [test.cfg:3] : unknown keyword 'bogus'"), "{output}");
    assert!(config.contains("bogus"));
}

#[test]
fn soft_stop_by_signal() {
    let haproxy = require_haproxy!();
    let s1 = HttpBackend::start("s1");
    let mut proxy = start(&haproxy, s1.addr());
    let addr = proxy.addr("fe1");
    assert!(proxy.pid() > 0);
    assert_eq!(proxy.wait_exit(Duration::from_millis(50)), None);
    proxy.signal(Signal::SIGUSR1).unwrap();
    let status = proxy.wait_exit(Duration::from_secs(5)).expect("soft stop ends the process");
    assert_eq!(status.code(), Some(0));
    assert!(proxy.signal(Signal::SIGUSR1).is_err(), "a reaped process must not be signalled");
    // The test process kept no copy of the listener: with the proxy gone, the port is closed.
    let refused = RawClient::connect(addr).err().map(|e| e.kind());
    assert_eq!(refused, Some(std::io::ErrorKind::ConnectionRefused));
}
