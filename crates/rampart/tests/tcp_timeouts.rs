//! TCP-mode timeouts seen from the client and the server: `timeout connect` to a server
//! that never answers the handshake, `timeout client`/`server` on an idle session,
//! `timeout tunnel` superseding both, and `timeout client-fin`/`server-fin` once one side
//! half-closed. HAProxy counterpart: stream.c (process_stream's tunnel timeouts),
//! stconn.c (half-closed timeouts), configuration.txt `timeout *`.
//!
//! Margins are wide (the machine is small and shared): a lower bound checks that a
//! timeout did not fire early, an upper bound that it fired at all.

mod netutil;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use netutil::{echo_session, proxy, read_exact_within, send_and_shut, wait_end, End, ManualServer};
use rampart_testkit::{Running, TcpEchoBackend};
use socket2::{Domain, Socket, Type};

fn start(s1: SocketAddr, listen_extra: &str) -> Running {
    proxy()
        .listener("fe1")
        .backend("s1", s1)
        .config(&format!(
            "{}listen fe1\n  bind fd@${{fe1}}\n{listen_extra}  server s1 ${{s1_addr}}:${{s1_port}}\n",
            netutil::tcp_defaults("")
        ))
        .start()
        .expect("proxy starts")
}

/// A loopback listener that completes no handshake: backlog 0, never accepting, its
/// accept queue filled by the test. Further SYNs are dropped, so a connect hangs until
/// its own timeout, like an address behind a filtering firewall (only loopback may be
/// used here).
struct Blackhole {
    listener: Socket,
    _fillers: Vec<TcpStream>,
}

impl Blackhole {
    fn start() -> Blackhole {
        let listener = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
        listener.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into()).expect("bind");
        listener.listen(0).expect("listen");
        let addr = listener.local_addr().unwrap().as_socket().unwrap();
        let mut fillers = Vec::new();
        loop {
            match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
                Ok(s) => fillers.push(s),
                Err(_) => break,
            }
            assert!(fillers.len() < 16, "the accept queue of a backlog-0 listener never fills");
        }
        Blackhole { listener, _fillers: fillers }
    }

    fn addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap().as_socket().unwrap()
    }
}

#[test]
fn connect_timeout_closes_the_client_after_each_attempt_timed_out() {
    let hole = Blackhole::start();
    // Two attempts of 300 ms each (a timed-out attempt is retried at once).
    let proxy = start(hole.addr(), "  retries 1\n  timeout connect 300ms\n");

    let start = Instant::now();
    let mut client = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    client.write_all(b"hello?").unwrap();
    let (end, _) = wait_end(&mut client, Duration::from_secs(5));
    let elapsed = start.elapsed();
    assert_eq!(end, End::Eof, "the client must be closed once the connect timed out");
    assert!(elapsed >= Duration::from_millis(550), "closed after {elapsed:?}, before two connect timeouts");
    assert!(elapsed < Duration::from_millis(2500), "closed after {elapsed:?}");
}

#[test]
fn client_timeout_closes_an_idle_session() {
    let echo = TcpEchoBackend::start();
    let proxy = start(echo.addr(), "  timeout client 300ms\n");
    let mut client = echo_session(proxy.addr("fe1"));
    let (end, after) = wait_end(&mut client, Duration::from_secs(4));
    assert_ne!(end, End::Open, "idle past timeout client");
    assert!(after >= Duration::from_millis(250), "closed after {after:?}");
    assert!(after < Duration::from_millis(2000), "closed after {after:?}");
    assert!(echo.wait_idle(Duration::from_secs(2)), "the server connection is closed too");
}

#[test]
fn server_timeout_closes_an_idle_session() {
    let echo = TcpEchoBackend::start();
    let proxy = start(echo.addr(), "  timeout server 300ms\n");
    let mut client = echo_session(proxy.addr("fe1"));
    let (end, after) = wait_end(&mut client, Duration::from_secs(4));
    assert_ne!(end, End::Open, "idle past timeout server");
    assert!(after >= Duration::from_millis(250), "closed after {after:?}");
    assert!(after < Duration::from_millis(2000), "closed after {after:?}");
}

#[test]
fn traffic_keeps_a_session_alive_past_its_timeouts() {
    let echo = TcpEchoBackend::start();
    let proxy = start(echo.addr(), "  timeout client 400ms\n  timeout server 400ms\n");
    let mut client = echo_session(proxy.addr("fe1"));
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(1200) {
        std::thread::sleep(Duration::from_millis(100));
        client.write_all(b"tick\n").unwrap();
        assert_eq!(read_exact_within(&mut client, 5, Duration::from_secs(2)).unwrap(), b"tick\n");
    }
}

#[test]
fn tunnel_timeout_supersedes_client_and_server_timeouts() {
    let echo = TcpEchoBackend::start();
    let proxy = start(echo.addr(), "  timeout client 200ms\n  timeout server 200ms\n  timeout tunnel 1200ms\n");
    let mut client = echo_session(proxy.addr("fe1"));
    // Idle for three client/server timeouts: still open.
    std::thread::sleep(Duration::from_millis(600));
    client.write_all(b"still\n").unwrap();
    assert_eq!(read_exact_within(&mut client, 6, Duration::from_secs(2)).unwrap(), b"still\n");
    // Then idle past the tunnel timeout: closed.
    let (end, after) = wait_end(&mut client, Duration::from_secs(4));
    assert_ne!(end, End::Open, "idle past timeout tunnel");
    assert!(after >= Duration::from_millis(1000), "closed after {after:?}, before the tunnel timeout");
    assert!(after < Duration::from_millis(3000), "closed after {after:?}");
}

#[test]
fn client_fin_bounds_a_client_that_does_not_close_after_the_server_did() {
    let server = ManualServer::start();
    let proxy = start(server.addr(), "  timeout client-fin 300ms\n");
    let mut client = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    let mut srv = server.accept();
    // The server says goodbye and half-closes; the client keeps its side open, silent.
    send_and_shut(&mut srv, b"bye\n");
    assert_eq!(read_exact_within(&mut client, 4, Duration::from_secs(2)).unwrap(), b"bye\n");
    let (end, after) = wait_end(&mut client, Duration::from_secs(4));
    assert_eq!(end, End::Eof, "the server's FIN is relayed");
    assert!(after < Duration::from_millis(200), "FIN relayed after {after:?}");
    // The client would still be allowed to send for timeout client-fin, then the proxy
    // closes the session: the server sees its end.
    let start = Instant::now();
    let (end, _) = wait_end(&mut srv, Duration::from_secs(4));
    let after = start.elapsed();
    assert_ne!(end, End::Open, "the session must end once timeout client-fin expired");
    assert!(after >= Duration::from_millis(200), "ended after {after:?}");
    assert!(after < Duration::from_millis(2000), "ended after {after:?}: timeout client (5s) was used");
}

#[test]
fn server_fin_bounds_a_server_that_does_not_close_after_the_client_did() {
    let server = ManualServer::start();
    let proxy = start(server.addr(), "  timeout server-fin 300ms\n");
    let mut client = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    let mut srv = server.accept();
    send_and_shut(&mut client, b"bye\n");
    assert_eq!(read_exact_within(&mut srv, 4, Duration::from_secs(2)).unwrap(), b"bye\n");
    let (end, after) = wait_end(&mut srv, Duration::from_secs(4));
    assert_eq!(end, End::Eof, "the client's FIN is relayed");
    assert!(after < Duration::from_millis(200), "FIN relayed after {after:?}");
    // The server neither answers nor closes: the proxy gives up after server-fin.
    let start = Instant::now();
    let (end, _) = wait_end(&mut client, Duration::from_secs(4));
    let after = start.elapsed();
    assert_ne!(end, End::Open, "the session must end once timeout server-fin expired");
    assert!(after >= Duration::from_millis(200), "ended after {after:?}");
    assert!(after < Duration::from_millis(2000), "ended after {after:?}: timeout server (5s) was used");
}

#[test]
fn client_fin_does_not_cut_a_server_still_answering_a_half_closed_client() {
    // client-fin is about the client side: a client that half-closed and waits for a
    // slow answer keeps the session for timeout server.
    let server = ManualServer::start();
    let proxy = start(server.addr(), "  timeout client-fin 200ms\n");
    let mut client = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    let mut srv = server.accept();
    send_and_shut(&mut client, b"question\n");
    assert_eq!(read_exact_within(&mut srv, 9, Duration::from_secs(2)).unwrap(), b"question\n");
    std::thread::sleep(Duration::from_millis(700));
    send_and_shut(&mut srv, b"late answer\n");
    assert_eq!(read_exact_within(&mut client, 12, Duration::from_secs(2)).unwrap(), b"late answer\n");
    assert_eq!(wait_end(&mut client, Duration::from_secs(2)).0, End::Eof);
}

#[test]
fn server_fin_does_not_cut_a_client_still_sending_to_a_half_closed_server() {
    let server = ManualServer::start();
    let proxy = start(server.addr(), "  timeout server-fin 200ms\n");
    let mut client = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    let mut srv = server.accept();
    send_and_shut(&mut srv, b"banner\n");
    assert_eq!(read_exact_within(&mut client, 7, Duration::from_secs(2)).unwrap(), b"banner\n");
    std::thread::sleep(Duration::from_millis(700));
    send_and_shut(&mut client, b"late upload\n");
    assert_eq!(read_exact_within(&mut srv, 12, Duration::from_secs(2)).unwrap(), b"late upload\n");
    assert_eq!(wait_end(&mut srv, Duration::from_secs(2)).0, End::Eof);
}
