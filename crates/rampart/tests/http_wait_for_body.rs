//! `http-response wait-for-body` and the `res.body*` fetches through the real binary:
//! servers send the body slowly, in parts, and the rules after the wait must see all of
//! it (or what `at-least` asked for) while the client receives the response unchanged.
//! Past the time given the client gets a 504, as from HAProxy 2.6. HTTP/1 servers run
//! against haproxy 2.6 too when installed (`Differential`); an HTTP/2 server
//! (`proto h2`) is checked on rampart.

mod h2_server;
mod http_common;

use std::time::Duration;

use h2_server::{Answer, H2Server};
use http_common::{start, RAMPART};
use rampart_testkit::{Differential, RawBackend, RawClient, Running, Step};

const GLOBAL: &str = "\
global
  nbthread 1
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 1s
";

/// `GLOBAL` + `listen fe1` waiting for response bodies as `wait` says, then copying
/// what the rules see into headers.
fn cfg(wait: &str, server_opts: &str) -> String {
    format!(
        "{GLOBAL}listen fe1\n  bind fd@${{fe1}}\n  http-response wait-for-body {wait}\n\
         http-response set-header X-Len %[res.body_len]\n  http-response set-header X-Size %[res.body_size]\n\
         http-response set-header X-Body %[res.body]\n  server s1 ${{s1_addr}}:${{s1_port}}{server_opts}\n"
    )
}

/// A server answering every request with `head`, then the body `parts`, `gap_ms`
/// apart.
fn slow(head: &'static str, parts: &'static [&'static str], gap_ms: u64) -> impl Fn() -> RawBackend {
    move || {
        let mut script = vec![Step::expect_head(), Step::send(head)];
        for p in parts {
            script.push(Step::sleep_ms(gap_ms));
            script.push(Step::send(p));
        }
        RawBackend::start(script)
    }
}

/// What the client saw of one response: status, the headers the rules set, the body.
type Seen = Vec<String>;

fn get(proxy: &Running) -> Seen {
    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let r = c.read_response().unwrap();
    let h = |n: &str| r.headers.get(n).unwrap_or("-").to_string();
    vec![r.status.to_string(), h("x-len"), h("x-size"), h("x-body"), r.body_str()]
}

/// Runs `get` through haproxy (when installed, asserting both agree) and rampart;
/// returns rampart's view.
fn run(cfg: &str, backend: impl Fn() -> RawBackend + 'static) -> Seen {
    run_as(cfg, backend, true)
}

/// [`run`]; `servers_too`: the servers' views must agree too (else the clients' only).
fn run_as(cfg: &str, backend: impl Fn() -> RawBackend + 'static, servers_too: bool) -> Seen {
    let d = Differential::new(RAMPART).listener("fe1").config(cfg);
    let backend = std::rc::Rc::new(backend);
    let b2 = backend.clone();
    match d.backend("s1", move || b2()).run(get) {
        Some(cmp) if servers_too => {
            cmp.assert_same();
            cmp.rampart.client
        }
        Some(cmp) => {
            assert_eq!(cmp.haproxy.client, cmp.rampart.client, "the clients' views differ");
            cmp.rampart.client
        }
        None => {
            let be = backend();
            get(&start(cfg, &[("s1", be.addr())]))
        }
    }
}

#[test]
fn a_length_delimited_body_sent_in_parts_is_seen_whole() {
    let head = "HTTP/1.1 200 OK\r\nContent-Length: 18\r\n\r\n";
    let seen = run(&cfg("time 2s", ""), slow(head, &["first-", "second-", "third"], 100));
    assert_eq!(seen, ["200", "18", "18", "first-second-third", "first-second-third"]);
}

#[test]
fn a_chunked_body_is_seen_without_its_framing_and_forwarded_unchanged() {
    let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    let seen = run(&cfg("time 2s", ""), slow(head, &["4\r\nabcd\r\n", "3\r\nefg\r\n", "0\r\n\r\n"], 100));
    assert_eq!(seen, ["200", "7", "7", "abcdefg", "abcdefg"]);
}

#[test]
fn at_least_stops_the_wait_early_and_the_rest_still_reaches_the_client() {
    let head = "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n";
    let seen = run(&cfg("time 3s at-least 4", ""), slow(head, &["abcd", "efgh"], 400));
    assert_eq!(seen, ["200", "4", "8", "abcd", "abcdefgh"]);
}

#[test]
fn a_body_still_missing_past_the_time_gets_a_504() {
    let head = "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n";
    // COMPAT: HAProxy resets the server connection it gives up on, rampart closes it:
    // only what the client sees is compared
    let seen = run_as(&cfg("time 200ms", ""), slow(head, &["abcd", "efgh"], 1500), false);
    assert_eq!(seen[0], "504");
    assert_eq!(seen[1], "-", "no rule after the wait ran");
}

#[test]
fn a_response_without_the_rule_streams_as_before() {
    let cfg = format!(
        "{GLOBAL}listen fe1\n  bind fd@${{fe1}}\n  http-response set-header X-Len %[res.body_len]\n\
         server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let be = slow("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n", &["abcd", "efgh"], 300)();
    let proxy = start(&cfg, &[("s1", be.addr())]);
    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let t = c.read_response_timed().unwrap();
    // nothing waited: the head came before the server's second part
    let last = t.pieces.last().expect("body pieces").at;
    assert!(last.duration_since(t.head_at) >= Duration::from_millis(200), "the head was held back");
    assert_eq!(t.response.headers.get("x-len"), Some("0"));
    assert_eq!(t.response.body, b"abcdefgh");
}

#[test]
fn an_http2_servers_body_is_waited_for_too() {
    let srv = H2Server::start(100, |_| Answer {
        body: vec![b"one-".to_vec(), b"two-".to_vec(), b"three".to_vec()],
        spacing: Duration::from_millis(100),
        ..Answer::ok("")
    });
    let proxy = start(&cfg("time 2s", " proto h2"), &[("s1", srv.addr())]);
    let seen = get(&proxy);
    assert_eq!(seen, ["200", "13", "13", "one-two-three", "one-two-three"]);
}
