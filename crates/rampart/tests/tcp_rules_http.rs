//! `tcp-request` rules on HTTP connections: the connection rules at accept, the content
//! rules per request before the `http-request` rules (the frontend's, then the
//! backend's after switching), on the parsed request. What they change (addresses,
//! variables, captures) is what the later rules and `option forwardfor` see.
//! HAProxy counterpart: reg-tests/tcp-rules, configuration.txt §4.2 `tcp-request content`.

mod http_common;

use http_common::{client, read_all, start, PREAMBLE};
use rampart_testkit::{HttpBackend, RawClient, Running};

fn get(c: &mut RawClient, path: &str, extra: &str) -> Option<u16> {
    c.send(format!("GET {path} HTTP/1.1\r\nHost: a\r\n{extra}\r\n")).unwrap();
    c.read_response().ok().map(|r| r.status)
}

fn start_with(body: &str, backends: &[(&str, std::net::SocketAddr)]) -> Running {
    start(&format!("{PREAMBLE}{body}"), backends)
}

#[test]
fn content_reject_closes_without_a_response_and_accept_ends_the_list() {
    let s1 = HttpBackend::start("s1");
    let proxy = start_with(
        "frontend fe1\n  bind fd@${fe1}\n\
         tcp-request content accept if { path /ok }\n\
         tcp-request content reject if { path_beg /x }\n\
         tcp-request content reject if { path /ok }\n  default_backend b\n\
         backend b\n  server s1 ${s1_addr}:${s1_port}\n",
        &[("s1", s1.addr())],
    );
    let mut c = client(&proxy);
    assert_eq!(get(&mut c, "/ok", ""), Some(200), "accept ends the list: the later reject does not run");
    assert_eq!(get(&mut c, "/other", ""), Some(200));
    // per request: the third request of the same connection is rejected
    c.send("GET /x HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(read_all(&mut c), b"");
    assert_eq!(s1.requests().len(), 2);
}

#[test]
fn backend_content_rules_run_after_switching_in_backends_and_listen() {
    let s1 = HttpBackend::start("s1");
    let s2 = HttpBackend::start("s2");
    let proxy = start_with(
        "frontend fe1\n  bind fd@${fe1}\n\
         tcp-request content set-var(txn.seen) str(fe)\n\
         use_backend b2 if { path_beg /b2 }\n  default_backend b1\n\
         backend b1\n  server s1 ${s1_addr}:${s1_port}\n\
         backend b2\n  tcp-request content reject unless { var(txn.seen) -m str fe }\n\
         tcp-request content reject if { req.hdr(x-deny) -m found }\n\
         http-request set-header x-checked %[var(txn.seen)]\n  server s2 ${s2_addr}:${s2_port}\n",
        &[("s1", s1.addr()), ("s2", s2.addr())],
    );
    let mut c = client(&proxy);
    assert_eq!(get(&mut c, "/b1", "x-deny: 1\r\n"), Some(200), "b1 has no rule");
    assert_eq!(get(&mut c, "/b2", ""), Some(200));
    assert_eq!(s2.wait_requests(1)[0].headers.get("x-checked"), Some("fe"));
    c.send("GET /b2 HTTP/1.1\r\nHost: a\r\nx-deny: 1\r\n\r\n").unwrap();
    assert_eq!(read_all(&mut c), b"");
    assert_eq!(s2.requests().len(), 1);

    let listen = start_with(
        "listen fe1\n  bind fd@${fe1}\n  tcp-request content reject if { method POST }\n  server s1 ${s1_addr}:${s1_port}\n",
        &[("s1", s1.addr())],
    );
    let mut c = client(&listen);
    assert_eq!(get(&mut c, "/", ""), Some(200));
    c.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n").unwrap();
    assert_eq!(read_all(&mut c), b"");
}

/// `set-src` changes the address `option forwardfor` sends and the rules see, for
/// this request only; `set-dst`/`set-dst-port` the local address they see.
#[test]
fn content_set_src_and_dst_reach_forwardfor_and_later_rules() {
    let s1 = HttpBackend::start("s1");
    let proxy = start_with(
        "frontend fe1\n  bind fd@${fe1}\n  option forwardfor\n\
         tcp-request content set-src req.hdr(x-real-ip) if { req.hdr(x-real-ip) -m found }\n\
         tcp-request content set-dst str(192.0.2.7)\n  tcp-request content set-dst-port int(8443)\n\
         http-request set-header x-dst %[dst]:%[dst_port]\n  http-request set-header x-src %[src]\n\
         default_backend b\n  backend b\n  server s1 ${s1_addr}:${s1_port}\n",
        &[("s1", s1.addr())],
    );
    let mut c = client(&proxy);
    assert_eq!(get(&mut c, "/", "x-real-ip: 203.0.113.9\r\n"), Some(200));
    assert_eq!(get(&mut c, "/", ""), Some(200));
    let reqs = s1.wait_requests(2);
    assert_eq!(reqs[0].headers.get("x-forwarded-for"), Some("203.0.113.9"));
    assert_eq!(reqs[0].headers.get("x-src"), Some("203.0.113.9"));
    assert_eq!(reqs[0].headers.get("x-dst"), Some("192.0.2.7:8443"));
    // the next request of the connection starts from the connection's address again
    assert_eq!(reqs[1].headers.get("x-forwarded-for"), Some("127.0.0.1"));
}

/// What the connection rules set lasts for the connection: its `sess.` variables and
/// its changed address, seen by every request.
#[test]
fn connection_rules_set_what_every_request_sees() {
    let s1 = HttpBackend::start("s1");
    let proxy = start_with(
        "frontend fe1\n  bind fd@${fe1}\n  option forwardfor\n\
         tcp-request connection set-var(sess.origin) str(conn-rule)\n\
         tcp-request connection set-src ipv4(198.51.100.1)\n\
         tcp-request session set-var(sess.count) int(1)\n\
         http-request set-header x-origin %[var(sess.origin)]-%[var(sess.count)]\n\
         default_backend b\n  backend b\n  server s1 ${s1_addr}:${s1_port}\n",
        &[("s1", s1.addr())],
    );
    let mut c = client(&proxy);
    assert_eq!(get(&mut c, "/1", ""), Some(200));
    assert_eq!(get(&mut c, "/2", ""), Some(200));
    for r in s1.wait_requests(2) {
        assert_eq!(r.headers.get("x-origin"), Some("conn-rule-1"), "{}", r.path);
        assert_eq!(r.headers.get("x-forwarded-for"), Some("198.51.100.1"), "{}", r.path);
    }
}

#[test]
fn captures_are_read_by_later_rules() {
    let s1 = HttpBackend::start("s1");
    let proxy = start_with(
        "frontend fe1\n  bind fd@${fe1}\n  tcp-request inspect-delay 1s\n\
         tcp-request content capture req.hdr(user-agent) len 5\n\
         http-request set-header x-ua %[capture.req.hdr(0)]\n\
         default_backend b\n  backend b\n  server s1 ${s1_addr}:${s1_port}\n",
        &[("s1", s1.addr())],
    );
    let mut c = client(&proxy);
    assert_eq!(get(&mut c, "/", "User-Agent: curl/8.0\r\n"), Some(200));
    assert_eq!(get(&mut c, "/", ""), Some(200));
    let reqs = s1.wait_requests(2);
    assert_eq!(reqs[0].headers.get("x-ua"), Some("curl/"));
    // a new request starts with empty slots
    assert_eq!(reqs[1].headers.get("x-ua"), Some(""));
}

#[test]
fn connection_reject_in_an_http_frontend_sends_nothing() {
    let s1 = HttpBackend::start("s1");
    let proxy = start_with(
        "frontend fe1\n  bind fd@${fe1}\n  tcp-request connection reject\n\
         default_backend b\n  backend b\n  server s1 ${s1_addr}:${s1_port}\n",
        &[("s1", s1.addr())],
    );
    let mut c = std::net::TcpStream::connect(proxy.addr("fe1")).unwrap();
    let mut buf = [0u8; 16];
    let got = std::io::Read::read(&mut c, &mut buf);
    assert!(matches!(got, Ok(0) | Err(_)), "no byte: {got:?}");
    assert!(s1.requests().is_empty());
}

/// `tcp-response content` rules of an HTTP backend run once the response arrived,
/// before the `http-response` rules; as in HAProxy 2.6 they see the stream (variables,
/// backend) but not the HTTP response.
#[test]
fn response_content_rules_run_before_the_http_response_rules() {
    let s1 = HttpBackend::builder("s1").reply(rampart_testkit::Reply::ok().header("Server", "s1").body("ok")).start();
    let proxy = start_with(
        "frontend fe1\n  bind fd@${fe1}\n  http-request set-var(txn.block) str(1) if { path /bad }\n\
         default_backend b\n\
         backend b\n  tcp-response content reject if { var(txn.block) -m found }\n\
         tcp-response content set-var(txn.be) be_name\n\
         tcp-response content set-var(txn.server) res.hdr(server)\n\
         http-response set-header x-be %[var(txn.be)]\n\
         http-response set-header x-server %[var(txn.server)]\n  server s1 ${s1_addr}:${s1_port}\n",
        &[("s1", s1.addr())],
    );
    let mut c = client(&proxy);
    c.send("GET /good HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let r = c.read_response().unwrap();
    assert_eq!((r.status, r.headers.get("x-be"), r.headers.get("x-server")), (200, Some("b"), Some("")));
    c.send("GET /bad HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(read_all(&mut c), b"");
}
