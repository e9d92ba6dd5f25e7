//! Tunnels: a WebSocket upgrade (`Connection: Upgrade` + `Upgrade: websocket`) answered
//! by `101 Switching Protocols` turns the exchange into a byte pipe in both directions,
//! as does a CONNECT answered by 2xx; `timeout tunnel` then governs idleness.

mod http_common;

use std::thread;
use std::time::{Duration, Instant};

use http_common::{client, listen_cfg, show, start, PREAMBLE};
use rampart_testkit::{RawBackend, RawClient, Step};

const UPGRADE_REQ: &str = "GET /chat HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
     Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

const SWITCHING: &str = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
     Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";

/// Sends the upgrade request and checks the 101 the client gets.
fn upgrade(c: &mut RawClient) {
    c.send(UPGRADE_REQ).unwrap();
    let resp = c.read_response().unwrap();
    // COMPAT: haproxy keeps the server's `Connection: Upgrade` line in place; rampart
    // recomputes the Connection header of each hop and writes it last (http/mod.rs).
    let expected = if http_common::testing_reference() {
        "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
    } else {
        "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nsec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nconnection: upgrade\r\n\r\n"
    };
    assert_eq!(show(&resp.raw), expected);
}

#[test]
fn websocket_upgrade_then_bytes_both_ways() {
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send(format!("{SWITCHING}hello")),
        Step::expect_until("ping"),
        Step::send("pong"),
        Step::expect_until("bye"),
        Step::send("ciao"),
    ]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    upgrade(&mut c);
    // Bytes the server sent right behind its 101 come first.
    assert_eq!(show(&c.read_until("hello").unwrap()), "hello");
    c.send("ping").unwrap();
    assert_eq!(show(&c.read_until("pong").unwrap()), "pong");
    c.send("bye").unwrap();
    // The server ends its script with a FIN: the client sees the end of the stream.
    assert_eq!(show(&c.read_to_end().unwrap()), "ciao");
    c.shutdown_write().unwrap();

    let conns = s1.wait_finished(1);
    let expected_head = if http_common::testing_reference() {
        "GET /chat HTTP/1.1\r\nhost: a\r\nconnection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n"
    } else {
        "GET /chat HTTP/1.1\r\nhost: a\r\nupgrade: websocket\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\nconnection: upgrade\r\n\r\n"
    };
    assert_eq!(conns[0].received_str(), format!("{expected_head}pingbye"));
    assert_eq!(conns[0].error, None);
}

#[test]
fn client_bytes_sent_with_the_upgrade_request_wait_for_the_101() {
    // Bytes right behind a body-less upgrade request belong to the new protocol: they
    // are held until the server switched, then forwarded.
    let s1 = RawBackend::start(vec![Step::expect_head(), Step::send(SWITCHING), Step::expect_until("early")]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send(format!("{UPGRADE_REQ}early")).unwrap();
    assert_eq!(c.read_response().unwrap().status, 101);
    c.shutdown_write().unwrap();
    let conns = s1.wait_finished(1);
    assert!(conns[0].received_str().ends_with("\r\n\r\nearly"), "{:?}", conns[0]);
    assert_eq!(conns[0].error, None);
}

#[test]
fn upgrade_declined_by_the_server_is_a_normal_exchange() {
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno"),
        Step::expect_head(),
        Step::send("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext"),
    ]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send(UPGRADE_REQ).unwrap();
    assert_eq!(show(&c.read_response().unwrap().raw), "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nno");
    assert_eq!(c.get("/").unwrap().body, b"next");
    assert_eq!(s1.connections().len(), 1);
}

#[test]
fn timeout_tunnel_closes_an_idle_tunnel() {
    let s1 = RawBackend::start(vec![Step::expect_head(), Step::send(SWITCHING), Step::ReadToEnd]);
    let cfg = listen_cfg("  timeout tunnel 300ms\n", "", &["s1"]);
    let proxy = start(&cfg, &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    upgrade(&mut c);
    let t = Instant::now();
    assert!(c.is_closed_within(Duration::from_secs(2)), "an idle tunnel is closed");
    let idle = t.elapsed();
    assert!(idle >= Duration::from_millis(250) && idle < Duration::from_millis(1500), "closed after {idle:?}");
    // The server side is closed too (haproxy resets it, rampart closes it).
    assert_eq!(s1.wait_finished(1).len(), 1);
}

#[test]
fn timeout_tunnel_overrides_client_and_server_timeouts() {
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send(SWITCHING),
        Step::expect_until("ping"),
        Step::send("pong"),
    ]);
    let cfg = format!(
        "{PREAMBLE}  timeout client 200ms\n  timeout server 200ms\n  timeout tunnel 5s\n\
         listen fe1\n  bind fd@${{fe1}}\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let proxy = start(&cfg, &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    upgrade(&mut c);
    // Idle for longer than the client and server timeouts.
    thread::sleep(Duration::from_millis(500));
    c.send("ping").unwrap();
    assert_eq!(show(&c.read_until("pong").unwrap()), "pong");
}

#[test]
fn connect_method_opens_a_tunnel() {
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send("HTTP/1.1 200 Connection established\r\n\r\n"),
        Step::expect_until("hello"),
        Step::send("world"),
    ]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("CONNECT backend.example:443 HTTP/1.1\r\nHost: backend.example:443\r\n\r\n").unwrap();
    let resp = c.read_response_for("CONNECT").unwrap();
    assert_eq!(show(&resp.raw), "HTTP/1.1 200 Connection established\r\n\r\n");
    c.send("hello").unwrap();
    assert_eq!(show(&c.read_to_end().unwrap()), "world");
    c.shutdown_write().unwrap();
    // As haproxy, the Host of a CONNECT to a default port loses the port.
    let conns = s1.wait_finished(1);
    assert_eq!(conns[0].received_str(), "CONNECT backend.example:443 HTTP/1.1\r\nhost: backend.example\r\n\r\nhello");
}
