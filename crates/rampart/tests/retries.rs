//! `retry-on` response conditions through the real binary: a request whose answer
//! meets a condition is sent again (to another server on the last retry with
//! `option redispatch`), only when it can be replayed (its body was whole when sent),
//! never after `disable-l7-retry`, and the last answer goes to the client when the
//! retries run out. Without any `retry-on` line, `option redispatch` sends an idempotent
//! request the server closed on before answering to another server (a rampart addition).

mod http_common;

use std::net::SocketAddr;
use std::thread;
use std::time::Duration;

use http_common::{binary, start_binary, PREAMBLE};
use rampart_testkit::{HttpBackend, RawBackend, RawClient, Reply, Running, Step};

/// `listen fe1` with `lines` over `s1` (failing) and `s2` (healthy), in that order.
fn start(lines: &str, s1: SocketAddr, s2: SocketAddr) -> Running {
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  balance roundrobin\n{lines}\
         \x20 server s1 ${{s1_addr}}:${{s1_port}}\n  server s2 ${{s2_addr}}:${{s2_port}}\n"
    );
    start_binary(binary(), &cfg, &[("s1", s1), ("s2", s2)])
}

fn answering(name: &str, status: u16) -> HttpBackend {
    HttpBackend::builder(name).reply(Reply::new(status).body(name.to_string())).start()
}

/// Status and body of `GET path` on a new connection.
fn get(proxy: &Running, path: &str) -> (u16, String) {
    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    c.send(format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")).unwrap();
    let r = c.read_response().unwrap();
    (r.status, r.body_str())
}

/// Status and body of a `POST` with its whole body, on a new connection.
fn post(proxy: &Running) -> (u16, String) {
    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    c.send("POST /p HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello").unwrap();
    let r = c.read_response().unwrap();
    (r.status, r.body_str())
}

/// A POST whose body comes 300 ms after its head (so it is still on its way when the
/// request goes to the server, unless the proxy buffers it).
fn slow_post(proxy: &Running) -> (u16, String) {
    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    c.send("POST /p HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nConnection: close\r\n\r\n").unwrap();
    thread::sleep(Duration::from_millis(300));
    c.send("hello").unwrap();
    let r = c.read_response().unwrap();
    (r.status, r.body_str())
}

const REDISPATCH: &str = "  retries 1\n  option redispatch\n";

#[test]
fn a_503_is_retried_on_another_server() {
    let (s1, s2) = (answering("s1", 503), answering("s2", 200));
    let proxy = start(&format!("{REDISPATCH}  retry-on 503\n"), s1.addr(), s2.addr());
    for i in 0..6 {
        assert_eq!(get(&proxy, &format!("/{i}")), (200, "s2".into()));
    }
    // the redispatch moves the rotation on, so every request tries s1 first (haproxy too)
    assert_eq!(s1.requests().len(), 6);
    assert_eq!(s2.requests().len(), 6);
}

#[test]
fn a_status_not_listed_goes_to_the_client() {
    let (s1, s2) = (answering("s1", 500), answering("s2", 200));
    let proxy = start(&format!("{REDISPATCH}  retry-on 503 504\n"), s1.addr(), s2.addr());
    let got: Vec<(u16, String)> = (0..2).map(|i| get(&proxy, &format!("/{i}"))).collect();
    assert!(got.contains(&(500, "s1".into())), "{got:?}");
    assert_eq!(s2.requests().len(), 1);
}

#[test]
fn when_retries_run_out_the_last_answer_goes_to_the_client() {
    let (s1, s2) = (answering("s1", 503), answering("s2", 503));
    let proxy = start(&format!("{REDISPATCH}  retry-on all-retryable-errors\n"), s1.addr(), s2.addr());
    let (status, body) = get(&proxy, "/");
    assert_eq!(status, 503);
    assert!(body == "s1" || body == "s2", "the server's own 503, not rampart's: {body:?}");
    assert_eq!(s1.requests().len() + s2.requests().len(), 2, "one attempt and one retry");
}

#[test]
fn an_empty_response_is_retried() {
    let s1 = RawBackend::start(vec![Step::expect_head(), Step::Close]);
    let s2 = answering("s2", 200);
    let proxy = start(&format!("{REDISPATCH}  retry-on empty-response\n"), s1.addr(), s2.addr());
    for i in 0..4 {
        assert_eq!(get(&proxy, &format!("/{i}")), (200, "s2".into()));
    }
    assert_eq!(s1.wait_finished(4).len(), 4, "each request tried s1 first");
}

#[test]
fn a_response_timeout_is_retried() {
    let s1 = HttpBackend::builder("s1").reply(Reply::ok().delay(Duration::from_secs(3))).start();
    let s2 = answering("s2", 200);
    let lines = format!("{REDISPATCH}  timeout server 300ms\n  retry-on response-timeout\n");
    let proxy = start(&lines, s1.addr(), s2.addr());
    for i in 0..2 {
        assert_eq!(get(&proxy, &format!("/{i}")), (200, "s2".into()));
    }
}

#[test]
fn junk_is_retried_only_with_junk_response() {
    let s1 = RawBackend::start(vec![Step::expect_head(), Step::send("NOT HTTP AT ALL\r\n\r\n"), Step::Close]);
    let s2 = answering("s2", 200);
    let proxy = start(&format!("{REDISPATCH}  retry-on junk-response\n"), s1.addr(), s2.addr());
    assert_eq!([get(&proxy, "/a").0, get(&proxy, "/b").0], [200, 200]);
    let proxy = start(&format!("{REDISPATCH}  retry-on 503\n"), s1.addr(), s2.addr());
    let got = [get(&proxy, "/a").0, get(&proxy, "/b").0];
    assert!(got.contains(&502), "{got:?}");
}

#[test]
fn a_body_still_on_its_way_is_never_replayed() {
    let (s1, s2) = (answering("s1", 503), answering("s2", 200));
    let proxy = start(&format!("{REDISPATCH}  retry-on 503\n"), s1.addr(), s2.addr());
    let got = [slow_post(&proxy), slow_post(&proxy)];
    assert!(got.contains(&(503, "s1".into())), "the first attempt's answer stands: {got:?}");
    // buffered whole before it is sent, the same request can be replayed
    let lines = format!("{REDISPATCH}  option http-buffer-request\n  retry-on 503\n");
    let proxy = start(&lines, s1.addr(), s2.addr());
    assert_eq!([slow_post(&proxy), slow_post(&proxy)], [(200, "s2".into()), (200, "s2".into())]);
    assert!(s2.requests().iter().all(|r| r.body == b"hello"));
}

#[test]
fn disable_l7_retry_keeps_the_first_answer() {
    let (s1, s2) = (answering("s1", 503), answering("s2", 200));
    let lines = format!("{REDISPATCH}  retry-on 503\n  http-request disable-l7-retry if {{ path /no }}\n");
    let proxy = start(&lines, s1.addr(), s2.addr());
    let got = [get(&proxy, "/no"), get(&proxy, "/no")];
    assert!(got.contains(&(503, "s1".into())), "{got:?}");
}

/// A server that takes the request and closes (a reset: the request is not read whole).
fn closing_on_request() -> RawBackend {
    RawBackend::start(vec![Step::expect_until(b"\r\n"), Step::Close])
}

#[test]
fn without_retry_on_redispatch_replays_an_idempotent_request_the_server_closed_on() {
    let s1 = closing_on_request();
    let s2 = answering("s2", 200);
    let proxy = start(&format!("{REDISPATCH}  stats enable\n  stats uri /st\n"), s1.addr(), s2.addr());
    for i in 0..4 {
        assert_eq!(get(&proxy, &format!("/{i}")), (200, "s2".into()));
    }
    assert_eq!(s1.wait_finished(4).len(), 4, "each request tried s1 first");
    assert_eq!(s2.requests().len(), 4);
    // counted as retries and redispatches, as a `retry-on` one
    let (status, csv) = get(&proxy, "/st;csv");
    assert_eq!(status, 200, "{csv}");
    let header: Vec<&str> = csv.lines().next().unwrap().trim_start_matches("# ").split(',').collect();
    let row: Vec<&str> = csv.lines().find(|l| l.starts_with("fe1,BACKEND,")).unwrap().split(',').collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!((col("wretr"), col("wredis")), ("4", "4"), "{csv}");
    // a POST is not replayed: the server may have acted on it
    let got = [post(&proxy), post(&proxy)];
    assert!(got.iter().any(|r| r.0 == 502), "{got:?}");
    assert!(got.contains(&(200, "s2".into())), "{got:?}");
}

#[test]
fn an_explicit_retry_on_keeps_haproxys_502() {
    let s1 = closing_on_request();
    let s2 = answering("s2", 200);
    let proxy = start(&format!("{REDISPATCH}  retry-on conn-failure\n"), s1.addr(), s2.addr());
    let got = [get(&proxy, "/a"), get(&proxy, "/b")];
    assert!(got.iter().any(|r| r.0 == 502), "{got:?}");
    // and without `option redispatch`, no replay either
    let proxy = start("  retries 1\n", s1.addr(), s2.addr());
    let got = [get(&proxy, "/a"), get(&proxy, "/b")];
    assert!(got.iter().any(|r| r.0 == 502), "{got:?}");
}
