//! `dispatch <addr>:<port>` and `option transparent`: a backend without servers sends
//! every stream to a fixed address, or to the destination address of the client
//! connection as rules left it; in HTTP its server connections stay with their client
//! connection (never shared with another one), as HAProxy's private connections.
//! A server without address (`:80`, `0.0.0.0`) connects to the destination too.

mod http_common;

use std::io::{Read, Write};
use std::time::Duration;

use http_common::{client, listen_cfg, start, PREAMBLE};
use rampart_testkit::{HttpBackend, TcpEchoBackend};

/// Sends `GET path` twice on each of two client connections, returns the server
/// connection id of each request, by client: ([c1 first, c1 second], [c2 ...]).
fn two_clients_twice(proxy: &rampart_testkit::Running, be: &HttpBackend) -> (Vec<u64>, Vec<u64>) {
    let mut c1 = client(proxy);
    let mut c2 = client(proxy);
    for _ in 0..2 {
        assert_eq!(c1.get("/1").unwrap().status, 200);
        assert_eq!(c2.get("/2").unwrap().status, 200);
    }
    let seen = be.wait_requests(4);
    let by = |path: &str| seen.iter().filter(|r| r.path == path).map(|r| r.conn).collect::<Vec<_>>();
    (by("/1"), by("/2"))
}

#[test]
fn http_dispatch_keeps_one_server_connection_per_client() {
    let s1 = HttpBackend::start("s1");
    let cfg = listen_cfg("", "  dispatch ${s1_addr}:${s1_port}\n", &[]);
    let proxy = start(&cfg, &[("s1", s1.addr())]);
    let (one, two) = two_clients_twice(&proxy, &s1);
    assert!(one[0] == one[1] && two[0] == two[1] && one[0] != two[0], "{one:?} {two:?}");
    // a third client opens its own connection although two are idle by now
    let mut c3 = client(&proxy);
    assert_eq!(c3.get("/3").unwrap().status, 200);
    assert_eq!(s1.connections(), 3);
}

#[test]
fn http_transparent_connects_to_the_destination_rules_set() {
    let s1 = HttpBackend::start("s1");
    let lines = "  option transparent\n  http-request set-dst-port int(${s1_port})\n";
    let proxy = start(&listen_cfg("", lines, &[]), &[("s1", s1.addr())]);
    let (one, two) = two_clients_twice(&proxy, &s1);
    assert!(one[0] == one[1] && two[0] == two[1] && one[0] != two[0], "{one:?} {two:?}");
    assert_eq!(s1.connections(), 2);
}

#[test]
fn http_transparent_without_rules_connects_back_to_the_listener() {
    // no rule: the destination is the proxy's own listener, which answers the
    // looped-back request (marked by the first pass) with its `http-request return`
    let s1 = HttpBackend::start("s1");
    let lines = "  option transparent\n  http-request return status 203 if { req.hdr(x-loop) -m found }\n  \
                 http-request set-header x-loop 1\n";
    let proxy = start(&listen_cfg("", lines, &[]), &[("s1", s1.addr())]);
    assert_eq!(client(&proxy).get("/").unwrap().status, 203);
}

/// A TCP listener `fe1` whose backend is given by `lines`; the echo backend is `s1`.
fn tcp_cfg(lines: &str) -> String {
    format!("{PREAMBLE}listen fe1\n  mode tcp\n  bind fd@${{fe1}}\n{lines}")
}

fn echo_through(proxy: &rampart_testkit::Running) -> Vec<u8> {
    let mut c = std::net::TcpStream::connect(proxy.addr("fe1")).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(b"hello").unwrap();
    let mut buf = [0u8; 5];
    c.read_exact(&mut buf).unwrap();
    buf.to_vec()
}

#[test]
fn tcp_dispatch_forwards_to_the_address() {
    let echo = TcpEchoBackend::start();
    let proxy = start(&tcp_cfg("  dispatch ${s1_addr}:${s1_port}\n"), &[("s1", echo.addr())]);
    assert_eq!(echo_through(&proxy), b"hello");
    assert_eq!(echo_through(&proxy), b"hello");
}

#[test]
fn tcp_transparent_forwards_to_the_destination_rules_set() {
    let echo = TcpEchoBackend::start();
    let lines = "  option transparent\n  tcp-request connection set-dst-port int(${s1_port})\n";
    let proxy = start(&tcp_cfg(lines), &[("s1", echo.addr())]);
    assert_eq!(echo_through(&proxy), b"hello");
}

#[test]
fn misuse_is_reported_as_haproxy_does() {
    let frontend = format!("{PREAMBLE}frontend f\n  bind 127.0.0.1:0\n  dispatch 127.0.0.1:80\n  option transparent\n");
    let out = rampart_testkit::check(http_common::binary(), &frontend);
    let diags = out.diagnostics().join("\n");
    assert!(diags.contains("'dispatch' ignored because frontend 'f' has no backend capability."), "{diags}");
    assert!(diags.contains("'transparent' ignored because frontend 'f' has no backend capability."), "{diags}");
    let missing_port = format!("{PREAMBLE}backend b\n  dispatch 127.0.0.1\n");
    let out = rampart_testkit::check(http_common::binary(), &missing_port);
    let diags = out.diagnostics().join("\n");
    assert!(diags.contains("'dispatch' : missing port specification in '127.0.0.1'"), "{diags}");
}

#[test]
fn a_server_without_address_connects_to_the_client_destination() {
    // an unset variable expands to nothing (HAProxy's env_expand() on addresses), so
    // the server has no address: the listener's own IP (127.0.0.1) at the server's port
    let s1 = HttpBackend::start("s1");
    let lines = "  server s1 ${RAMPART_SURELY_UNSET_ADDR}:${s1_port}\n";
    let proxy = start(&listen_cfg("", lines, &[]), &[("s1", s1.addr())]);
    assert_eq!(client(&proxy).get("/a").unwrap().status, 200);
    assert_eq!(s1.wait_requests(1)[0].path, "/a");
}
