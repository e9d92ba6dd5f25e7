//! Errors and synthetic responses: 503 after the connection retries (with HAProxy's
//! pause between attempts), 502 for an invalid or missing response, 504 when the server
//! is too slow, 408 for a request that does not arrive in time (also for a connection
//! that sends nothing, as haproxy 2.6 does), `errorfile`, and `http-request return`.
//! The page bytes are haproxy 2.6.12's; after each error the process keeps serving.
//!
//! As in haproxy, an error page produced after the request was read (502, 503, 504)
//! is a response like any other: the client connection stays open when the request
//! allows it, and closes (announcing it) when the request was not read completely.

mod http_common;

use std::time::{Duration, Instant};

use http_common::*;
use rampart_testkit::{closed_port, HttpBackend, RawClient, Reply, Running};

/// A backend whose answer depends on the path: `/garbage` gets an invalid response,
/// `/truncated` half a head, `/nothing` a close, `/slow` a late answer, else `200 ok`.
fn path_backend() -> HttpBackend {
    HttpBackend::builder("s1")
        .respond(|req| match req.path.as_str() {
            "/garbage" => Reply::raw("garbage\r\n\r\n").close(),
            "/truncated" => Reply::raw("HTTP/1.1 200 OK\r\nContent-Le").close(),
            "/nothing" => Reply::raw("").close(),
            "/slow" => Reply::ok().body("late").delay(Duration::from_millis(600)),
            _ => Reply::ok().body("ok"),
        })
        .start()
}

/// The proxy still answers on the same connection.
fn still_serves_on(c: &mut RawClient) {
    let resp = c.get("/after").unwrap();
    assert_eq!((resp.status, resp.body.as_slice()), (200, b"ok".as_slice()));
}

/// The proxy still answers new connections.
fn still_serves(proxy: &Running) {
    let mut c = client(proxy);
    still_serves_on(&mut c);
}

/// `timeout connect` and `retries` for a backend that refuses, next to a working one.
fn refusing_proxy(retries: u32, connect_ms: u64) -> (Running, HttpBackend) {
    let s1 = path_backend();
    let cfg = format!(
        "{PREAMBLE}frontend fe1\n  bind fd@${{fe1}}\n  default_backend dead\n\
         frontend fe2\n  bind fd@${{fe2}}\n  default_backend live\n\
         backend dead\n  retries {retries}\n  timeout connect {connect_ms}ms\n  server s0 ${{s0_addr}}:${{s0_port}}\n\
         backend live\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let proxy = rampart_testkit::Proxy::new(binary())
        .listener("fe1")
        .listener("fe2")
        .backend("s0", closed_port())
        .backend("s1", s1.addr())
        .config(&cfg)
        .start()
        .unwrap();
    (proxy, s1)
}

#[test]
fn connection_refused_gives_503_after_the_retries() {
    // 2 retries, each after MIN(1s, timeout connect) = 150 ms: at least 300 ms.
    let (proxy, _s1) = refusing_proxy(2, 150);
    let mut c = client(&proxy);
    let t = Instant::now();
    let resp = c.get("/").unwrap();
    let took = t.elapsed();
    assert_eq!(show(&resp.raw), show(&page_kept(HEAD_503, BODY_503)));
    assert!(took >= Duration::from_millis(280) && took < Duration::from_millis(1500), "503 after {took:?}");
    // The client connection stays: the next request is processed (and refused) too.
    assert_eq!(c.get("/again").unwrap().status, 503);
    let mut live = RawClient::connect(proxy.addr("fe2")).unwrap();
    still_serves_on(&mut live);
}

#[test]
fn no_retry_means_an_immediate_503() {
    let (proxy, _s1) = refusing_proxy(0, 1000);
    let mut c = client(&proxy);
    let t = Instant::now();
    assert_eq!(c.get("/").unwrap().status, 503);
    assert!(t.elapsed() < Duration::from_millis(500), "503 after {:?}", t.elapsed());
}

#[test]
fn error_pages_close_when_the_request_asks_or_is_incomplete() {
    let (proxy, _s1) = refusing_proxy(0, 1000);
    // HTTP/1.0 without keep-alive.
    let mut c = client(&proxy);
    c.send("GET / HTTP/1.0\r\n\r\n").unwrap();
    assert_eq!(show(&read_all(&mut c)), show(&page_closing(HEAD_503, BODY_503)));
    // HTTP/1.0 with keep-alive: announced and kept.
    let mut c = client(&proxy);
    c.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
    let resp = c.read_response().unwrap();
    assert_eq!(resp.headers.get("connection"), Some("keep-alive"));
    assert!(stays_open(&mut c, Duration::from_millis(100)));
    // A body not received yet: the connection cannot be reused.
    let mut c = client(&proxy);
    c.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc").unwrap();
    assert_eq!(show(&read_all(&mut c)), show(&page_closing(HEAD_503, BODY_503)));
    // HEAD: no body.
    let mut c = client(&proxy);
    c.send("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(show(&c.read_response_for("HEAD").unwrap().raw), HEAD_503.to_string() + "\r\n");
}

#[test]
fn invalid_or_missing_responses_give_502() {
    let s1 = path_backend();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    for path in ["/garbage", "/truncated", "/nothing"] {
        let mut c = client(&proxy);
        let resp = c.get(path).unwrap();
        assert_eq!(show(&resp.raw), show(&page_kept(HEAD_502, BODY_502)), "{path}");
        still_serves_on(&mut c);
    }
}

#[test]
fn server_timeout_gives_504() {
    let s1 = path_backend();
    let proxy = start(&listen_cfg("  timeout server 200ms\n", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    let t = Instant::now();
    let resp = c.get("/slow").unwrap();
    let took = t.elapsed();
    assert_eq!(show(&resp.raw), show(&page_kept(HEAD_504, BODY_504)));
    assert!(took >= Duration::from_millis(180) && took < Duration::from_millis(1000), "504 after {took:?}");
    still_serves_on(&mut c);
}

/// `listen fe1` over one server taking one request at a time (`maxconn 1`).
fn one_at_a_time(timeout_queue: &str) -> (Running, HttpBackend) {
    one_at_a_time_with(timeout_queue, "")
}

fn one_at_a_time_with(timeout_queue: &str, lines: &str) -> (Running, HttpBackend) {
    let s1 = path_backend();
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  timeout queue {timeout_queue}\n{lines}  \
         server s1 ${{s1_addr}}:${{s1_port}} maxconn 1\n"
    );
    (start(&cfg, &[("s1", s1.addr())]), s1)
}

/// Keeps the only server busy: a client whose `/slow` request the server is answering.
fn occupy_the_server(proxy: &Running, s1: &HttpBackend) -> RawClient {
    let mut first = client(proxy);
    first.send("GET /slow HTTP/1.1\r\nHost: rampart.test\r\n\r\n").unwrap();
    s1.wait_requests(1);
    first
}

/// The paths of the requests `s1` received, in order.
fn paths_seen(s1: &HttpBackend) -> Vec<String> {
    s1.requests().into_iter().map(|r| r.path).collect()
}

/// With the only server busy on a slow request, a second client sends its request,
/// half-closes and waits; returns it with the time it was queued at.
fn queue_a_half_closed_request(proxy: &Running, s1: &HttpBackend) -> (RawClient, RawClient, Instant) {
    let first = occupy_the_server(proxy, s1);
    let mut second = client(proxy);
    second.send("GET /queued HTTP/1.1\r\nHost: rampart.test\r\n\r\n").unwrap();
    second.shutdown_write().unwrap();
    (first, second, Instant::now())
}

#[test]
fn abortonclose_drops_a_queued_request_whose_client_left() {
    let (proxy, s1) = one_at_a_time_with("5s", "  option abortonclose\n");
    let (mut first, mut second, queued_at) = queue_a_half_closed_request(&proxy, &s1);
    assert!(second.is_closed_within(Duration::from_secs(3)), "the aborted client is not closed");
    assert_eq!(show(second.buffered()), "", "the aborted client gets no response");
    if !testing_reference() {
        // haproxy 2.6 notices when the stream leaves the queue; rampart at once.
        assert!(queued_at.elapsed() < Duration::from_millis(450), "closed after {:?}", queued_at.elapsed());
    }
    assert_eq!(first.read_response().unwrap().body, b"late");
    std::thread::sleep(Duration::from_millis(200));
    let paths = paths_seen(&s1);
    assert_eq!(paths, ["/slow"], "the aborted request never reached the server");
    still_serves(&proxy);
}

#[test]
fn without_abortonclose_a_half_closed_client_is_still_served() {
    let (proxy, s1) = one_at_a_time("5s");
    let (mut first, mut second, _) = queue_a_half_closed_request(&proxy, &s1);
    assert_eq!(first.read_response().unwrap().body, b"late");
    let resp = second.read_response().unwrap();
    assert_eq!((resp.status, resp.body.as_slice()), (200, b"ok".as_slice()));
    let paths = paths_seen(&s1);
    assert_eq!(paths, ["/slow", "/queued"]);
}

#[test]
fn a_request_finding_the_server_full_waits_in_the_queue() {
    let (proxy, s1) = one_at_a_time("5s");
    let mut first = occupy_the_server(&proxy, &s1);
    let t = Instant::now();
    let mut second = client(&proxy);
    let resp = second.get("/queued").unwrap();
    let took = t.elapsed();
    assert_eq!((resp.status, resp.body.as_slice()), (200, b"ok".as_slice()));
    assert!(took >= Duration::from_millis(300), "served after {took:?}, before the first request ended");
    assert_eq!(first.read_response().unwrap().body, b"late");
    let paths = paths_seen(&s1);
    assert_eq!(paths, ["/slow", "/queued"]);
}

#[test]
fn a_request_still_queued_at_timeout_queue_gets_503() {
    let (proxy, s1) = one_at_a_time("200ms");
    let mut first = occupy_the_server(&proxy, &s1);
    let t = Instant::now();
    let mut second = client(&proxy);
    let resp = second.get("/queued").unwrap();
    let took = t.elapsed();
    assert_eq!(show(&resp.raw), show(&page_kept(HEAD_503, BODY_503)));
    assert!(took >= Duration::from_millis(180) && took < Duration::from_millis(550), "503 after {took:?}");
    assert_eq!(first.read_response().unwrap().body, b"late");
    assert_eq!(s1.requests().len(), 1, "the queued request never reached the server");
    still_serves_on(&mut second);
}

#[test]
fn client_pausing_in_its_upload_gets_504_at_timeout_server() {
    // As haproxy: once the request is on its way, the server timeout governs; a body
    // that stops coming gets the 504, and the connection closes (the request is unfinished).
    let s1 = path_backend();
    let cfg = listen_cfg("  timeout client 100ms\n  timeout server 400ms\n", "", &["s1"]);
    let proxy = start(&cfg, &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    let t = Instant::now();
    c.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nhello").unwrap();
    assert_eq!(show(&read_all(&mut c)), show(&page_closing(HEAD_504, BODY_504)));
    let took = t.elapsed();
    assert!(took >= Duration::from_millis(350) && took < Duration::from_millis(1500), "504 after {took:?}");
    still_serves(&proxy);
}

#[test]
fn incomplete_request_at_timeout_http_request_gives_408() {
    let s1 = path_backend();
    let proxy = start(&listen_cfg("  timeout http-request 200ms\n", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    let t = Instant::now();
    c.send("GET / HTTP/1.1\r\nHost: a\r\n").unwrap();
    assert_eq!(show(&read_all(&mut c)), show(PAGE_408));
    let took = t.elapsed();
    assert!(took >= Duration::from_millis(180) && took < Duration::from_millis(1000), "408 after {took:?}");
    assert_eq!(s1.connections(), 0);
    still_serves(&proxy);
}

#[test]
fn connection_without_any_request_gets_408() {
    // haproxy 2.6 answers a connection that stays silent with a 408 too.
    let s1 = path_backend();
    let proxy = start(&listen_cfg("  timeout http-request 200ms\n", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    let t = Instant::now();
    assert_eq!(show(&read_all(&mut c)), show(PAGE_408));
    assert!(t.elapsed() >= Duration::from_millis(180), "408 after {:?}", t.elapsed());
    still_serves(&proxy);
}

#[test]
fn a_client_closing_before_its_request_gets_400() {
    // haproxy 2.6 without `option http-ignore-probes`: a connection ending before its
    // first request (empty or partial) is a bad request.
    let s1 = path_backend();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    for sent in ["", "\r\n", "GET / HTTP/1.1\r\nHo"] {
        let mut c = client(&proxy);
        c.send(sent).unwrap();
        c.shutdown_write().unwrap();
        assert_eq!(show(&read_all(&mut c)), show(PAGE_400), "after {sent:?}");
    }
    // Between two requests of a kept-alive connection, closing is normal: no answer.
    let mut c = client(&proxy);
    still_serves_on(&mut c);
    c.shutdown_write().unwrap();
    assert_eq!(read_all(&mut c), b"");
    assert_eq!(s1.connections(), 1);
    still_serves(&proxy);
}

#[test]
fn errorfile_replaces_stream_errors() {
    let files = Files::new("errorfile");
    let custom = files.write(
        "503.http",
        "HTTP/1.1 503 Come Back Later\r\nCache-Control: no-cache\r\nX-Custom: Yes\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nsorry\n",
    );
    let no_length = files.write("502.http", "HTTP/1.0 502 Broken\r\nX-Custom: Yes\r\n\r\nno length here\n");
    let silent = files.write("504.http", "");
    let ignored = files.write("400.http", "HTTP/1.1 400 Mine\r\nContent-Length: 0\r\n\r\n");
    let s1 = path_backend();
    let cfg = format!(
        "{PREAMBLE}  timeout server 200ms\n  errorfile 503 {custom}\n  errorfile 502 {no_length}\n  \
         errorfile 504 {silent}\n  errorfile 400 {ignored}\n\
         frontend fe1\n  bind fd@${{fe1}}\n  default_backend dead\n\
         frontend fe2\n  bind fd@${{fe2}}\n  default_backend live\n\
         backend dead\n  retries 0\n  server s0 ${{s0_addr}}:${{s0_port}}\n\
         backend live\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let proxy = rampart_testkit::Proxy::new(binary())
        .listener("fe1")
        .listener("fe2")
        .backend("s0", closed_port())
        .backend("s1", s1.addr())
        .config(&cfg)
        .start()
        .unwrap();

    // Headers are rewritten like any response's; the connection is kept.
    let mut c = client(&proxy);
    let resp = c.get("/").unwrap();
    assert_eq!(
        show(&resp.raw),
        "HTTP/1.1 503 Come Back Later\r\ncache-control: no-cache\r\nx-custom: Yes\r\ncontent-type: text/plain\r\ncontent-length: 6\r\n\r\nsorry\n"
    );
    assert!(stays_open(&mut c, Duration::from_millis(100)));

    // A page without a length ends with the connection.
    let mut c = RawClient::connect(proxy.addr("fe2")).unwrap();
    c.send("GET /garbage HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(show(&read_all(&mut c)), "HTTP/1.0 502 Broken\r\nx-custom: Yes\r\n\r\nno length here\n");

    // An empty errorfile: no answer at all, the connection closes.
    let mut c = RawClient::connect(proxy.addr("fe2")).unwrap();
    c.send("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(read_all(&mut c), b"");

    // The errors of the H1 mux keep their default page (haproxy 2.6 ignores errorfile there).
    let mut c = client(&proxy);
    c.send("GET / HTTP/1.1\r\nHost : a\r\n\r\n").unwrap();
    assert_eq!(show(&read_all(&mut c)), show(PAGE_400));

    let mut c = RawClient::connect(proxy.addr("fe2")).unwrap();
    still_serves_on(&mut c);
}

#[test]
fn backend_errorfile_wins_over_the_frontends() {
    let files = Files::new("errorfile-be");
    let fe_page = files.write("fe.http", "HTTP/1.1 503 Front\r\nContent-Length: 2\r\n\r\nfe");
    let be_page = files.write("be.http", "HTTP/1.1 503 Back\r\nContent-Length: 2\r\n\r\nbe");
    let cfg = format!(
        "{PREAMBLE}  retries 0\n\
         frontend fe1\n  bind fd@${{fe1}}\n  errorfile 503 {fe_page}\n  default_backend be1\n\
         frontend fe2\n  bind fd@${{fe2}}\n  errorfile 503 {fe_page}\n  default_backend be2\n\
         backend be1\n  errorfile 503 {be_page}\n  server s0 ${{s0_addr}}:${{s0_port}}\n\
         backend be2\n  server s0 ${{s0_addr}}:${{s0_port}}\n"
    );
    let proxy = rampart_testkit::Proxy::new(binary())
        .listener("fe1")
        .listener("fe2")
        .backend("s0", closed_port())
        .config(&cfg)
        .start()
        .unwrap();
    assert_eq!(rampart_testkit::http_get(proxy.addr("fe1"), "/").body, b"be");
    assert_eq!(rampart_testkit::http_get(proxy.addr("fe2"), "/").body, b"fe");
}

#[test]
fn http_request_return_as_in_the_quickstart() {
    let files = Files::new("return");
    let body_file = files.write("body.json", "{\"ok\":true}\n");
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  http-request return status 200 content-type text/plain string \"hello from app1\\n\"\n\
         listen fe2\n  bind fd@${{fe2}}\n  http-request return status 404 content-type application/json file {body_file} hdr X-Served-By app2 hdr Cache-Control no-store\n\
         listen fe3\n  bind fd@${{fe3}}\n  http-request return status 204 hdr X-Empty yes\n"
    );
    let proxy = rampart_testkit::Proxy::new(binary())
        .listener("fe1")
        .listener("fe2")
        .listener("fe3")
        .config(&cfg)
        .start()
        .unwrap();

    let mut c = client(&proxy);
    for _ in 0..2 {
        let resp = c.get("/").unwrap();
        assert_eq!(
            show(&resp.raw),
            "HTTP/1.1 200 OK\r\ncontent-length: 16\r\ncontent-type: text/plain\r\n\r\nhello from app1\n"
        );
    }
    c.send("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(
        show(&c.read_response_for("HEAD").unwrap().raw),
        "HTTP/1.1 200 OK\r\ncontent-length: 16\r\ncontent-type: text/plain\r\n\r\n"
    );
    c.send("GET / HTTP/1.0\r\n\r\n").unwrap();
    assert_eq!(
        show(&read_all(&mut c)),
        "HTTP/1.1 200 OK\r\ncontent-length: 16\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nhello from app1\n"
    );

    // The `hdr` headers come first, as haproxy writes them.
    let mut c = RawClient::connect(proxy.addr("fe2")).unwrap();
    let resp = c.get("/x").unwrap();
    assert_eq!(
        show(&resp.raw),
        "HTTP/1.1 404 Not Found\r\nx-served-by: app2\r\ncache-control: no-store\r\ncontent-length: 12\r\ncontent-type: application/json\r\n\r\n{\"ok\":true}\n"
    );

    let mut c = RawClient::connect(proxy.addr("fe3")).unwrap();
    let resp = c.get("/x").unwrap();
    assert_eq!(show(&resp.raw), "HTTP/1.1 204 No Content\r\nx-empty: yes\r\n\r\n");
    assert_eq!(c.get("/y").unwrap().status, 204, "kept alive");
}

#[test]
fn http_request_return_with_a_pending_body_closes() {
    let cfg = format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  http-request return status 200 content-type text/plain string done\n");
    let proxy = start(&cfg, &[]);
    // The whole body is here: the connection stays.
    let mut c = client(&proxy);
    c.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc").unwrap();
    assert_eq!(c.read_response().unwrap().body, b"done");
    assert!(stays_open(&mut c, Duration::from_millis(100)));
    // Not all of it: answered, then closed.
    let mut c = client(&proxy);
    c.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 30\r\n\r\nabc").unwrap();
    let got = read_all(&mut c);
    assert!(show(&got).contains("connection: close\r\n\r\ndone"), "{}", show(&got));
}

/// `http-request return` in a `listen` section that also has servers: the rule answers
/// and the server never hears of the request (as haproxy).
#[test]
fn http_request_return_in_a_listen_with_servers_answers_without_the_server() {
    let s1 = HttpBackend::start("s1");
    let cfg =
        listen_cfg("", "  http-request return status 403 content-type text/plain string \"from listen\"\n", &["s1"]);
    let proxy = start(&cfg, &[("s1", s1.addr())]);
    let resp = client(&proxy).get("/x").unwrap();
    assert_eq!((resp.status, resp.body.as_slice()), (403, &b"from listen"[..]));
    assert!(s1.requests().is_empty(), "the server got {:?}", s1.requests());
}

/// `http-request return` in a `backend`: haproxy runs backend rules after switching, so
/// the rule answers and the server never hears of the request.
#[test]
fn http_request_return_in_a_backend_answers_without_the_server() {
    let s1 = HttpBackend::start("s1");
    let cfg = format!(
        "{PREAMBLE}frontend fe1\n  bind fd@${{fe1}}\n  default_backend be\n\
         backend be\n  http-request return status 403 content-type text/plain string \"from backend\"\n\
         server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let proxy = start(&cfg, &[("s1", s1.addr())]);
    let resp = client(&proxy).get("/x").unwrap();
    assert_eq!((resp.status, resp.body.as_slice()), (403, &b"from backend"[..]));
    assert!(s1.requests().is_empty(), "the server got {:?}", s1.requests());
}
