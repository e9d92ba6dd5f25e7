//! The testkit driving the installed haproxy in TCP mode: echo with half-close in both
//! directions, a server that speaks first and closes. Skipped when haproxy is absent.

use std::io::Write;
use std::thread;
use std::time::Duration;

use rampart_testkit::{require_haproxy, Proxy, RawBackend, RawClient, Running, Step, TcpEchoBackend};

const TCP_CFG: &str = "\
defaults
  mode tcp
  timeout client 5s
  timeout server 5s
  timeout connect 1s
listen fe1
  bind fd@${fe1}
  server s1 ${s1_addr}:${s1_port}
";

fn start(haproxy: &std::path::Path, s1: std::net::SocketAddr) -> Running {
    Proxy::new(haproxy).listener("fe1").backend("s1", s1).config(TCP_CFG).start().expect("haproxy starts")
}

#[test]
fn echo_with_half_close() {
    let haproxy = require_haproxy!();
    let echo = TcpEchoBackend::start();
    let proxy = start(&haproxy, echo.addr());

    let mut client = RawClient::connect(proxy.addr("fe1")).unwrap();
    client.send("hello ").unwrap();
    assert_eq!(client.read_until("hello ").unwrap(), b"hello ");
    client.send("world").unwrap();
    // After our FIN the echo still arrives in full, then haproxy relays the server's FIN.
    client.shutdown_write().unwrap();
    assert_eq!(client.read_to_end().unwrap(), b"world");

    let conns = echo.wait_finished(1);
    assert_eq!(conns[0].received, b"hello world");
    assert_eq!(conns[0].error, None);
}

#[test]
fn large_echo_streams_both_ways() {
    let haproxy = require_haproxy!();
    let echo = TcpEchoBackend::start();
    let proxy = start(&haproxy, echo.addr());

    let payload: Vec<u8> = (0..512 * 1024u32).map(|i| (i % 251) as u8).collect();
    let client = RawClient::connect(proxy.addr("fe1")).unwrap();
    let mut writer = client.stream().try_clone().unwrap();
    let sent = payload.clone();
    let sender = thread::spawn(move || {
        writer.write_all(&sent).unwrap();
        writer.shutdown(std::net::Shutdown::Write).unwrap();
    });
    let mut client = client;
    let back = client.read_to_end().unwrap();
    sender.join().unwrap();
    assert_eq!(back.len(), payload.len());
    assert!(back == payload, "echo differs from what was sent");
}

#[test]
fn server_speaking_first_then_closing() {
    let haproxy = require_haproxy!();
    let banner = RawBackend::start(vec![Step::send("220 ready\r\n"), Step::Close]);
    let proxy = start(&haproxy, banner.addr());

    let mut client = RawClient::connect(proxy.addr("fe1")).unwrap();
    assert_eq!(client.read_until("\r\n").unwrap(), b"220 ready\r\n");
    assert!(client.is_closed_within(Duration::from_secs(2)), "the server's close must reach the client");
}

#[test]
fn open_connection_is_not_reported_closed() {
    let haproxy = require_haproxy!();
    let echo = TcpEchoBackend::start();
    let proxy = start(&haproxy, echo.addr());

    let mut client = RawClient::connect(proxy.addr("fe1")).unwrap();
    client.send("ping").unwrap();
    assert!(!client.is_closed_within(Duration::from_millis(200)));
    // What arrived while waiting is still there to read.
    assert_eq!(client.read_until("ping").unwrap(), b"ping");
}
