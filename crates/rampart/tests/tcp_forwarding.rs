//! TCP mode seen from both ends: bytes forwarded exactly in both directions (small and
//! several megabytes), half-close in each direction, a refused server, round robin and a
//! server's `maxconn`. HAProxy counterpart: reg-tests/tcp-rules, balance/balance-rr.vtc.

mod netutil;

use std::io::{Read, Write};
use std::net::Shutdown;
use std::thread;
use std::time::{Duration, Instant};

use netutil::{echo_session, proxy, read_exact_within, tcp_listen_s1, wait_end, End, ManualServer};
use rampart_testkit::{closed_port, RawBackend, RawClient, Running, Step, TcpEchoBackend};

fn start_s1(s1: std::net::SocketAddr, extra_defaults: &str) -> Running {
    proxy().listener("fe1").backend("s1", s1).config(&tcp_listen_s1(extra_defaults)).start().expect("proxy starts")
}

/// Every byte value, several times, in an order that shows reordering or loss.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8 ^ (i / 251) as u8).collect()
}

#[test]
fn small_exchange_is_byte_exact_both_ways() {
    let echo = TcpEchoBackend::start();
    let proxy = start_s1(echo.addr(), "");
    let all_bytes: Vec<u8> = (0..=255u8).collect();

    let mut client = RawClient::connect(proxy.addr("fe1")).unwrap();
    client.send(&all_bytes).unwrap();
    assert_eq!(client.read_until([255u8]).unwrap(), all_bytes);
    client.send("\r\n\0tail").unwrap();
    client.shutdown_write().unwrap();
    assert_eq!(client.read_to_end().unwrap(), b"\r\n\0tail");

    let conns = echo.wait_finished(1);
    let mut expected = all_bytes.clone();
    expected.extend_from_slice(b"\r\n\0tail");
    assert_eq!(conns.len(), 1);
    assert_eq!(conns[0].received, expected);
    assert_eq!(conns[0].error, None);
}

#[test]
fn several_megabytes_stream_both_ways_at_once() {
    let echo = TcpEchoBackend::start();
    let proxy = start_s1(echo.addr(), "");
    let payload = pattern(8 * 1024 * 1024);

    let client = RawClient::connect(proxy.addr("fe1")).unwrap();
    let mut writer = client.stream().try_clone().unwrap();
    let sent = payload.clone();
    // Writing while reading: neither direction may wait for the other to finish.
    let sender = thread::spawn(move || {
        writer.write_all(&sent).unwrap();
        writer.shutdown(Shutdown::Write).unwrap();
    });
    let mut client = client;
    let back = client.read_to_end().unwrap();
    sender.join().unwrap();
    assert_eq!(back.len(), payload.len());
    assert!(back == payload, "the echo differs from what was sent");
    assert!(echo.wait_finished(1)[0].received == payload, "the server got other bytes than were sent");
}

#[test]
fn server_speaking_megabytes_first_reaches_the_client_exactly() {
    let big = pattern(3 * 1024 * 1024 + 17);
    let server = RawBackend::start(vec![Step::Send(big.clone()), Step::expect_until("thanks")]);
    let proxy = start_s1(server.addr(), "");

    let mut client = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    let got = read_exact_within(&mut client, big.len(), Duration::from_secs(10)).unwrap();
    assert!(got == big, "the client got other bytes than the server sent");
    client.write_all(b"thanks").unwrap();
    // The server ends its script, half-closes; the client sees the end.
    assert_eq!(wait_end(&mut client, Duration::from_secs(5)).0, End::Eof);
    assert_eq!(server.wait_finished(1)[0].error, None);
}

#[test]
fn client_half_close_reaches_the_server_which_can_still_answer() {
    // The server reads until end of stream, then answers and closes.
    let server = RawBackend::start(vec![Step::ReadToEnd, Step::send("answer after your FIN")]);
    let proxy = start_s1(server.addr(), "");

    let mut client = RawClient::connect(proxy.addr("fe1")).unwrap();
    client.send("question").unwrap();
    client.shutdown_write().unwrap();
    assert_eq!(client.read_to_end().unwrap(), b"answer after your FIN");

    let conns = server.wait_finished(1);
    assert_eq!(conns[0].received, b"question");
    assert_eq!(conns[0].error, None, "the server saw the end of stream, then wrote");
}

#[test]
fn server_half_close_reaches_the_client_which_can_still_send() {
    let server = RawBackend::start(vec![
        Step::send("banner"),
        Step::ShutdownWrite,
        Step::expect_until("late data\n"),
        Step::ReadToEnd,
    ]);
    let proxy = start_s1(server.addr(), "");

    let mut client = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    let mut got = Vec::new();
    client.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"banner", "the client sees the server's FIN after its data");
    // Our direction is still open.
    client.write_all(b"late data\n").unwrap();
    client.shutdown(Shutdown::Write).unwrap();

    let conns = server.wait_finished(1);
    assert_eq!(conns[0].received, b"late data\n");
    assert_eq!(conns[0].error, None);
}

#[test]
fn refused_server_closes_the_client_after_the_retries() {
    // `retries 3` with a 100 ms connect timeout: three turn-arounds of MIN(1s, timeout
    // connect) between the four attempts, as HAProxy waits before retrying a server
    // that refused.
    let proxy = proxy()
        .listener("fe1")
        .backend("s1", closed_port())
        .config(&format!(
            "{}listen fe1\n  bind fd@${{fe1}}\n  retries 3\n  timeout connect 100ms\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
            netutil::tcp_defaults("")
        ))
        .start()
        .unwrap();

    let start = Instant::now();
    let mut client = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    client.write_all(b"anyone?").unwrap();
    let (end, _) = wait_end(&mut client, Duration::from_secs(5));
    let elapsed = start.elapsed();
    // Closed with a FIN: what the client had sent was read, not left to cause a reset.
    assert_eq!(end, End::Eof, "the client connection must be closed");
    assert!(elapsed >= Duration::from_millis(280), "closed after {elapsed:?}: the retries did not wait");
    assert!(elapsed < Duration::from_secs(2), "closed after {elapsed:?}");

    // And the proxy goes on serving.
    let mut again = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    assert_ne!(wait_end(&mut again, Duration::from_secs(5)).0, End::Open);
}

/// A stream that ends before its client did (here: a frontend without backend) closes
/// with a FIN, then reads and drops what the client still sends until the client closes,
/// as HAProxy does: bytes that cross the FIN draw no reset. (HAProxy's reg-test
/// checks/ssl-hello-check expects "empty response", not "Connection reset by peer",
/// from a check against such a frontend.)
#[test]
fn a_client_closed_first_may_still_send_without_a_reset() {
    let proxy = proxy()
        .listener("fe1")
        .config(&format!("{}frontend fe1\n  bind fd@${{fe1}}\n", netutil::tcp_defaults("")))
        .start()
        .unwrap();
    let mut client = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    assert_eq!(wait_end(&mut client, Duration::from_secs(5)).0, End::Eof, "closed with a FIN");
    // a closed socket would answer the first write with a reset, failing the second
    client.write_all(b"late").unwrap();
    thread::sleep(Duration::from_millis(100));
    client.write_all(b"later").expect("the proxy still reads: no reset");
}

#[test]
fn round_robin_takes_the_servers_in_turn() {
    let servers: Vec<RawBackend> =
        ["s1\n", "s2\n", "s3\n"].iter().map(|name| RawBackend::start(vec![Step::send(name), Step::Close])).collect();
    let proxy = proxy()
        .listener("fe1")
        .backend("s1", servers[0].addr())
        .backend("s2", servers[1].addr())
        .backend("s3", servers[2].addr())
        .config(&format!(
            "{}listen fe1\n  bind fd@${{fe1}}\n  balance roundrobin\n\
             server s1 ${{s1_addr}}:${{s1_port}}\n  server s2 ${{s2_addr}}:${{s2_port}}\n  server s3 ${{s3_addr}}:${{s3_port}}\n",
            netutil::tcp_defaults("")
        ))
        .start()
        .unwrap();

    let order: Vec<String> = (0..9)
        .map(|_| {
            let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
            String::from_utf8(c.read_to_end().unwrap()).unwrap()
        })
        .collect();
    // One full turn, repeated: whichever server starts, the sequence has period 3 and
    // covers the three servers.
    let mut first_turn = order[..3].to_vec();
    first_turn.sort();
    assert_eq!(first_turn, ["s1\n", "s2\n", "s3\n"], "{order:?}");
    assert_eq!(order[..3], order[3..6], "{order:?}");
    assert_eq!(order[..3], order[6..9], "{order:?}");
    for s in &servers {
        assert_eq!(s.wait_finished(3).len(), 3);
    }
}

#[test]
fn weights_share_connections_in_proportion() {
    let heavy = RawBackend::start(vec![Step::send("heavy"), Step::Close]);
    let light = RawBackend::start(vec![Step::send("light"), Step::Close]);
    let proxy = proxy()
        .listener("fe1")
        .backend("s1", heavy.addr())
        .backend("s2", light.addr())
        .config(&format!(
            "{}listen fe1\n  bind fd@${{fe1}}\n  balance roundrobin\n\
             server s1 ${{s1_addr}}:${{s1_port}} weight 3\n  server s2 ${{s2_addr}}:${{s2_port}} weight 1\n",
            netutil::tcp_defaults("")
        ))
        .start()
        .unwrap();
    let mut heavy_count = 0;
    for _ in 0..8 {
        let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
        if c.read_to_end().unwrap() == b"heavy" {
            heavy_count += 1;
        }
    }
    assert_eq!(heavy_count, 6, "weights 3:1 over 8 connections");
}

#[test]
fn server_maxconn_queues_the_next_connection_until_one_ends() {
    // One server taking one connection at a time: the second client waits in the queue
    // (not connected to the server) and is served as soon as the first leaves.
    let server = ManualServer::start();
    let proxy = proxy()
        .listener("fe1")
        .backend("s1", server.addr())
        .config(&format!(
            "{}listen fe1\n  bind fd@${{fe1}}\n  timeout queue 5s\n  server s1 ${{s1_addr}}:${{s1_port}} maxconn 1\n",
            netutil::tcp_defaults("")
        ))
        .start()
        .unwrap();

    let mut first = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    let mut first_srv = server.accept();
    first.write_all(b"one").unwrap();
    assert_eq!(read_exact_within(&mut first_srv, 3, Duration::from_secs(5)).unwrap(), b"one");

    let mut second = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    second.write_all(b"two").unwrap();
    assert!(
        netutil::accept_within(&server.listener, Duration::from_millis(300)).is_none(),
        "the server got a second connection beyond its maxconn"
    );
    assert_eq!(wait_end(&mut second, Duration::from_millis(100)).0, End::Open, "a queued client is not closed");

    // The first session ends: the queued one gets the server.
    drop(first);
    drop(first_srv);
    let mut second_srv = server.accept();
    assert_eq!(read_exact_within(&mut second_srv, 3, Duration::from_secs(5)).unwrap(), b"two");
    second_srv.write_all(b"served").unwrap();
    assert_eq!(read_exact_within(&mut second, 6, Duration::from_secs(5)).unwrap(), b"served");
}

#[test]
fn server_maxconn_sends_the_overflow_to_another_server() {
    let s1 = TcpEchoBackend::start();
    let s2 = TcpEchoBackend::start();
    let proxy = proxy()
        .listener("fe1")
        .backend("s1", s1.addr())
        .backend("s2", s2.addr())
        .config(&format!(
            "{}listen fe1\n  bind fd@${{fe1}}\n  balance roundrobin\n\
             server s1 ${{s1_addr}}:${{s1_port}} maxconn 1\n  server s2 ${{s2_addr}}:${{s2_port}} maxconn 10\n",
            netutil::tcp_defaults("")
        ))
        .start()
        .unwrap();
    // Three sessions held open at once: s1 never has more than one.
    let sessions: Vec<_> = (0..3).map(|_| echo_session(proxy.addr("fe1"))).collect();
    assert_eq!(s1.connections().len(), 1, "s1 has maxconn 1");
    assert_eq!(s2.connections().len(), 2);
    drop(sessions);
}

#[test]
fn queued_connection_is_closed_after_timeout_queue() {
    let server = ManualServer::start();
    let proxy = proxy()
        .listener("fe1")
        .backend("s1", server.addr())
        .config(&format!(
            "{}listen fe1\n  bind fd@${{fe1}}\n  timeout queue 300ms\n  server s1 ${{s1_addr}}:${{s1_port}} maxconn 1\n",
            netutil::tcp_defaults("")
        ))
        .start()
        .unwrap();
    let _first = echo_session_manual(&proxy, &server);

    let start = Instant::now();
    let mut second = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    second.write_all(b"two").unwrap();
    let (end, _) = wait_end(&mut second, Duration::from_secs(4));
    let elapsed = start.elapsed();
    assert_eq!(end, End::Eof, "the queued client is closed once timeout queue expired");
    assert!(elapsed >= Duration::from_millis(250), "closed after {elapsed:?}");
    assert!(elapsed < Duration::from_millis(2000), "closed after {elapsed:?}");
    assert!(
        netutil::accept_within(&server.listener, Duration::from_millis(50)).is_none(),
        "a queued connection that timed out never reaches the server"
    );
}

#[test]
fn abortonclose_drops_a_queued_connection_whose_client_left() {
    let server = ManualServer::start();
    let proxy = proxy()
        .listener("fe1")
        .backend("s1", server.addr())
        .config(&format!(
            "{}listen fe1\n  bind fd@${{fe1}}\n  timeout queue 5s\n  option abortonclose\n  \
             server s1 ${{s1_addr}}:${{s1_port}} maxconn 1\n",
            netutil::tcp_defaults("")
        ))
        .start()
        .unwrap();
    let first = echo_session_manual(&proxy, &server);

    // Data then a FIN while queued: the client is gone, nothing goes to the server.
    let mut second = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    second.write_all(b"two").unwrap();
    second.shutdown(std::net::Shutdown::Write).unwrap();
    let (end, _) = wait_end(&mut second, Duration::from_secs(3));
    assert_eq!(end, End::Eof, "the client that left is closed while still queued");
    drop(first);
    assert!(
        netutil::accept_within(&server.listener, Duration::from_millis(300)).is_none(),
        "the aborted connection reached the server once it had room"
    );
}

/// One session through the proxy to a [`ManualServer`], both ends returned once a byte
/// went through.
fn echo_session_manual(proxy: &Running, server: &ManualServer) -> (std::net::TcpStream, std::net::TcpStream) {
    let mut client = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    let mut srv = server.accept();
    client.write_all(b"1").unwrap();
    assert_eq!(read_exact_within(&mut srv, 1, Duration::from_secs(5)).unwrap(), b"1");
    (client, srv)
}

/// A `listen fe1` with `lines` (each a whole indented line) and servers s1, s2.
fn start_two(s1: std::net::SocketAddr, s2: std::net::SocketAddr, lines: &str) -> Running {
    proxy()
        .listener("fe1")
        .backend("s1", s1)
        .backend("s2", s2)
        .config(&format!("{}listen fe1\n  bind fd@${{fe1}}\n{lines}", netutil::tcp_defaults("")))
        .start()
        .unwrap()
}

#[test]
fn redispatch_moves_the_last_retry_to_another_server() {
    let s2 = RawBackend::start(vec![Step::send("s2"), Step::Close]);
    let proxy = start_two(
        closed_port(),
        s2.addr(),
        "  retries 2\n  option redispatch\n  timeout connect 100ms\n\
         server s1 ${s1_addr}:${s1_port}\n  server s2 ${s2_addr}:${s2_port}\n",
    );
    // Whichever server the rotation starts with, every client ends up on s2.
    for _ in 0..2 {
        let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
        assert_eq!(c.read_to_end().unwrap(), b"s2");
    }
}

/// With round robin and two active servers any server will do: HAProxy redispatches at
/// the first failure instead of waiting a turn-around (MIN(1s, timeout connect)) per
/// retry on the refusing server.
#[test]
fn redispatch_is_immediate_when_any_server_will_do() {
    let s2 = RawBackend::start(vec![Step::send("s2"), Step::Close]);
    let proxy = start_two(
        closed_port(),
        s2.addr(),
        "  retries 3\n  option redispatch\n  timeout connect 5s\n\
         server s1 ${s1_addr}:${s1_port}\n  server s2 ${s2_addr}:${s2_port}\n",
    );
    for _ in 0..2 {
        let t = std::time::Instant::now();
        let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
        assert_eq!(c.read_to_end().unwrap(), b"s2");
        assert!(t.elapsed() < std::time::Duration::from_millis(800), "took {:?}", t.elapsed());
    }
}

#[test]
fn without_redispatch_the_retries_stay_on_the_refusing_server() {
    let s2 = RawBackend::start(vec![Step::send("s2"), Step::Close]);
    let proxy = start_two(
        closed_port(),
        s2.addr(),
        "  retries 2\n  timeout connect 100ms\n  server s1 ${s1_addr}:${s1_port}\n  server s2 ${s2_addr}:${s2_port}\n",
    );
    // Round robin: one of two clients lands on s1 and is closed without data.
    let got: Vec<Vec<u8>> = (0..2)
        .map(|_| {
            let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
            c.read_to_end().unwrap()
        })
        .collect();
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(sorted, [b"".to_vec(), b"s2".to_vec()], "{got:?}");
}

#[test]
fn backup_server_takes_over_only_when_no_active_server_is_enabled() {
    let active = RawBackend::start(vec![Step::send("active"), Step::Close]);
    let backup = RawBackend::start(vec![Step::send("backup"), Step::Close]);
    let proxy = start_two(
        active.addr(),
        backup.addr(),
        "  server s1 ${s1_addr}:${s1_port}\n  server s2 ${s2_addr}:${s2_port} backup\n",
    );
    for _ in 0..3 {
        assert_eq!(RawClient::connect(proxy.addr("fe1")).unwrap().read_to_end().unwrap(), b"active");
    }
    drop(proxy);
    let proxy = start_two(
        active.addr(),
        backup.addr(),
        "  server s1 ${s1_addr}:${s1_port} disabled\n  server s2 ${s2_addr}:${s2_port} backup\n",
    );
    for _ in 0..2 {
        assert_eq!(RawClient::connect(proxy.addr("fe1")).unwrap().read_to_end().unwrap(), b"backup");
    }
}

#[test]
fn a_full_active_server_queues_rather_than_using_the_backup() {
    let server = ManualServer::start();
    let backup = RawBackend::start(vec![Step::send("backup"), Step::Close]);
    let proxy = start_two(
        server.addr(),
        backup.addr(),
        "  timeout queue 5s\n  server s1 ${s1_addr}:${s1_port} maxconn 1\n  server s2 ${s2_addr}:${s2_port} backup\n",
    );
    let (first, first_srv) = echo_session_manual(&proxy, &server);
    let mut second = netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).unwrap();
    assert!(read_exact_within(&mut second, 1, Duration::from_millis(300)).is_err(), "sent to the backup");
    assert!(backup.connections().is_empty());
    drop((first, first_srv));
    let mut srv = server.accept();
    srv.write_all(b"active").unwrap();
    assert_eq!(read_exact_within(&mut second, 6, Duration::from_secs(5)).unwrap(), b"active");
}
