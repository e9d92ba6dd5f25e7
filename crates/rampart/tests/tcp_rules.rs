//! `tcp-request connection|session|content` and `tcp-response content` rules through the
//! real binary, in TCP mode: what the client sees (bytes, reset or close), what the
//! servers see, and how long inspection waits. HTTP mode: `tcp_rules_http.rs`;
//! against haproxy: `tcp_rules_diff.rs`.
//! HAProxy counterpart: reg-tests/tcp-rules, configuration.txt §4.2 `tcp-request`.

mod netutil;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::thread::sleep;
use std::time::{Duration, Instant};

use netutil::{proxy, read_exact_within, tcp_defaults, wait_end, End};
use rampart_testkit::{RawBackend, Running, Step, TcpEchoBackend};

/// A ClientHello for `host` (SNI), as a browser's first record would carry it.
fn client_hello(host: &str) -> Vec<u8> {
    let mut ext = Vec::new();
    let mut push_ext = |ty: u16, data: &[u8]| {
        ext.extend_from_slice(&ty.to_be_bytes());
        ext.extend_from_slice(&(data.len() as u16).to_be_bytes());
        ext.extend_from_slice(data);
    };
    let mut sni = Vec::new();
    sni.extend_from_slice(&((host.len() + 3) as u16).to_be_bytes());
    sni.push(0);
    sni.extend_from_slice(&(host.len() as u16).to_be_bytes());
    sni.extend_from_slice(host.as_bytes());
    push_ext(0, &sni);
    push_ext(16, b"\x00\x0c\x02h2\x08http/1.1");
    let mut body = vec![3, 3];
    body.extend_from_slice(&[7; 32]);
    body.push(0);
    body.extend_from_slice(&[0, 2, 0x13, 0x01, 1, 0]);
    body.extend_from_slice(&(ext.len() as u16).to_be_bytes());
    body.extend_from_slice(&ext);
    let mut hs = vec![1];
    hs.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    hs.extend_from_slice(&body);
    let mut rec = vec![0x16, 3, 1];
    rec.extend_from_slice(&(hs.len() as u16).to_be_bytes());
    rec.extend_from_slice(&hs);
    rec
}

/// Starts the proxy with `body` after the TCP defaults; listeners and backends by name.
fn start(body: &str, listeners: &[&str], backends: &[(&str, SocketAddr)]) -> Running {
    let mut p = proxy().config(&format!("{}{body}", tcp_defaults("")));
    for l in listeners {
        p = p.listener(l);
    }
    for (name, addr) in backends {
        p = p.backend(name, *addr);
    }
    p.start().expect("proxy starts")
}

fn connect(proxy: &Running, listener: &str) -> TcpStream {
    netutil::connect(proxy.addr(listener), Duration::from_secs(5)).expect("connect")
}

/// Sends `data` and says what came back before the end, and how it ended.
fn exchange(proxy: &Running, listener: &str, data: &[u8]) -> (Vec<u8>, End) {
    let mut c = connect(proxy, listener);
    c.write_all(data).unwrap();
    read_until_end(&mut c, Duration::from_secs(3))
}

/// Everything received until the peer closes (or `wait` passes: `End::Open`).
fn read_until_end(c: &mut TcpStream, wait: Duration) -> (Vec<u8>, End) {
    use std::io::{ErrorKind, Read};
    let deadline = Instant::now() + wait;
    let mut got = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (got, End::Open);
        }
        c.set_read_timeout(Some(left)).unwrap();
        let mut buf = [0u8; 4096];
        match c.read(&mut buf) {
            Ok(0) => return (got, End::Eof),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return (got, End::Open),
            Err(_) => return (got, End::Reset),
        }
    }
}

const ONE_BACKEND: &str = "backend b\n  server s1 ${s1_addr}:${s1_port}\n";

#[test]
fn connection_reject_resets_before_any_byte_and_others_pass() {
    let echo = TcpEchoBackend::start();
    let proxy = start(
        &format!(
            "frontend fe1\n  bind fd@${{fe1}}\n  tcp-request connection reject if {{ src 127.0.0.1 }}\n  default_backend b\n\
             frontend fe2\n  bind fd@${{fe2}}\n  tcp-request connection reject if {{ src 10.0.0.0/8 }}\n  default_backend b\n\
             {ONE_BACKEND}"
        ),
        &["fe1", "fe2"],
        &[("s1", echo.addr())],
    );
    // the reset may come before the client even set its socket options
    let mut c = TcpStream::connect(proxy.addr("fe1")).unwrap();
    assert_eq!(wait_end(&mut c, Duration::from_secs(3)).0, End::Reset, "a refused connection is reset");
    netutil::echo_session(proxy.addr("fe2"));
    assert_eq!(echo.connections().len(), 1, "only the accepted connection reached the server");
}

#[test]
fn session_reject_closes_without_data() {
    let echo = TcpEchoBackend::start();
    let proxy = start(
        &format!("frontend fe1\n  bind fd@${{fe1}}\n  tcp-request session reject\n  default_backend b\n{ONE_BACKEND}"),
        &["fe1"],
        &[("s1", echo.addr())],
    );
    let mut c = connect(&proxy, "fe1");
    assert_eq!(wait_end(&mut c, Duration::from_secs(3)).0, End::Eof);
    assert!(echo.connections().is_empty());
}

#[test]
fn silent_drop_tells_the_client_nothing() {
    let echo = TcpEchoBackend::start();
    let proxy = start(
        &format!(
            "frontend fe1\n  bind fd@${{fe1}}\n  tcp-request connection silent-drop\n  default_backend b\n\
             frontend fe2\n  bind fd@${{fe2}}\n  tcp-request inspect-delay 2s\n\
             tcp-request content silent-drop if {{ req.payload(0,4) -m str DROP }}\n  default_backend b\n{ONE_BACKEND}"
        ),
        &["fe1", "fe2"],
        &[("s1", echo.addr())],
    );
    for (listener, data) in [("fe1", &b""[..]), ("fe2", b"DROP me")] {
        let mut c = connect(&proxy, listener);
        c.write_all(data).unwrap();
        let (got, end) = read_until_end(&mut c, Duration::from_millis(500));
        assert!(got.is_empty());
        // With CAP_NET_ADMIN the socket goes quiet (the client sees nothing); without,
        // the reset leaves with a TTL of 1, which loopback still delivers.
        assert_ne!(end, End::Eof, "{listener}: a silent drop is no FIN");
    }
    assert!(echo.connections().is_empty());
}

/// Content rules in a frontend, a backend and a listen section: `reject` closes
/// without data, nothing reaches the server; other bytes pass exactly.
#[test]
fn content_reject_in_frontend_backend_and_listen() {
    let echo = TcpEchoBackend::start();
    let rule = "  tcp-request inspect-delay 2s\n  tcp-request content reject if { req.payload(0,3) -m str BAD }\n";
    let proxy = start(
        &format!(
            "frontend fe1\n  bind fd@${{fe1}}\n{rule}  default_backend b\n\
             frontend fe2\n  bind fd@${{fe2}}\n  default_backend b2\n\
             backend b2\n{rule}  server s1 ${{s1_addr}}:${{s1_port}}\n\
             listen fe3\n  bind fd@${{fe3}}\n{rule}  server s1 ${{s1_addr}}:${{s1_port}}\n{ONE_BACKEND}"
        ),
        &["fe1", "fe2", "fe3"],
        &[("s1", echo.addr())],
    );
    for listener in ["fe1", "fe2", "fe3"] {
        assert_eq!(exchange(&proxy, listener, b"BAD request"), (Vec::new(), End::Eof), "{listener}");
        let mut c = connect(&proxy, listener);
        c.write_all(b"GOOD request").unwrap();
        assert_eq!(read_exact_within(&mut c, 12, Duration::from_secs(3)).unwrap(), b"GOOD request", "{listener}");
    }
    assert_eq!(echo.wait_finished(3).len(), 3, "only the good requests reached the server");
}

/// The bytes the rules waited for go first, then the rest, in order and exactly.
#[test]
fn held_bytes_reach_the_server_first_and_exactly() {
    let echo = TcpEchoBackend::start();
    let proxy = start(
        &format!(
            "frontend fe1\n  bind fd@${{fe1}}\n  tcp-request inspect-delay 5s\n\
             tcp-request content accept if {{ req.len ge 5 }}\n  default_backend b\n{ONE_BACKEND}"
        ),
        &["fe1"],
        &[("s1", echo.addr())],
    );
    let mut c = connect(&proxy, "fe1");
    c.write_all(b"ab").unwrap();
    sleep(Duration::from_millis(150));
    assert!(echo.connections().is_empty(), "no server connection while the rules wait");
    let started = Instant::now();
    c.write_all(b"cdefg").unwrap();
    assert_eq!(read_exact_within(&mut c, 7, Duration::from_secs(3)).unwrap(), b"abcdefg");
    assert!(started.elapsed() < Duration::from_secs(2), "accepted as soon as 5 bytes were there");
    let tail: Vec<u8> = (0..200_000u32).map(|i| (i % 253) as u8).collect();
    c.write_all(&tail).unwrap();
    assert_eq!(read_exact_within(&mut c, tail.len(), Duration::from_secs(5)).unwrap(), tail);
}

#[test]
fn inspect_delay_expiry_decides_on_what_arrived() {
    let echo = TcpEchoBackend::start();
    let proxy = start(
        &format!(
            "frontend fe1\n  bind fd@${{fe1}}\n  tcp-request inspect-delay 400ms\n\
             tcp-request content reject unless {{ req.len ge 10 }}\n  default_backend b\n\
             frontend fe2\n  bind fd@${{fe2}}\n  tcp-request inspect-delay 400ms\n\
             tcp-request content accept if {{ req.payload(0,5) -m str HELLO }}\n\
             tcp-request content reject if {{ req.len gt 0 }}\n  default_backend b\n{ONE_BACKEND}"
        ),
        &["fe1", "fe2"],
        &[("s1", echo.addr())],
    );
    // too short: the rule misses until the delay, then rejects
    let started = Instant::now();
    assert_eq!(exchange(&proxy, "fe1", b"abc"), (Vec::new(), End::Eof));
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(350) && waited < Duration::from_secs(2), "waited {waited:?}");
    // nothing at all: the same once the delay expired
    let mut c = connect(&proxy, "fe1");
    assert_eq!(wait_end(&mut c, Duration::from_secs(3)).0, End::Eof);
    // the second list: a partial match waits, then the whole word is accepted
    let mut c = connect(&proxy, "fe2");
    c.write_all(b"HEL").unwrap();
    sleep(Duration::from_millis(100));
    c.write_all(b"LO").unwrap();
    assert_eq!(read_exact_within(&mut c, 5, Duration::from_secs(3)).unwrap(), b"HELLO");
    // a mismatch in the first bytes decides at once
    let started = Instant::now();
    assert_eq!(exchange(&proxy, "fe2", b"WORLD"), (Vec::new(), End::Eof));
    assert!(started.elapsed() < Duration::from_millis(300));
}

#[test]
fn client_timeout_during_inspection_closes() {
    let echo = TcpEchoBackend::start();
    let proxy = start(
        &format!(
            "frontend fe1\n  bind fd@${{fe1}}\n  timeout client 300ms\n  tcp-request inspect-delay 5s\n\
             tcp-request content accept if {{ req.len ge 10 }}\n  default_backend b\n{ONE_BACKEND}"
        ),
        &["fe1"],
        &[("s1", echo.addr())],
    );
    let mut c = connect(&proxy, "fe1");
    c.write_all(b"abc").unwrap();
    let (end, after) = wait_end(&mut c, Duration::from_secs(4));
    assert_eq!(end, End::Eof);
    assert!(after < Duration::from_secs(2), "closed by `timeout client`, not the delay: {after:?}");
    assert!(echo.connections().is_empty());
}

/// The classic SNI routing configuration, with a ClientHello split across two writes.
#[test]
fn sni_routing_waits_for_the_client_hello() {
    let hello = client_hello("example.com");
    let other = client_hello("other.example");
    let tls = RawBackend::start(vec![Step::ExpectBytes(hello.len()), Step::send("from tls")]);
    let plain = RawBackend::start(vec![Step::ExpectBytes(3), Step::send("from plain")]);
    let proxy = start(
        "frontend fe1\n  bind fd@${fe1}\n  tcp-request inspect-delay 5s\n\
         tcp-request content accept if { req_ssl_hello_type 1 }\n\
         use_backend tls if { req_ssl_sni -i example.com }\n  default_backend plain\n\
         backend tls\n  server s ${tls_addr}:${tls_port}\n\
         backend plain\n  server s ${plain_addr}:${plain_port}\n",
        &["fe1"],
        &[("tls", tls.addr()), ("plain", plain.addr())],
    );
    let mut c = connect(&proxy, "fe1");
    c.write_all(&hello[..20]).unwrap();
    sleep(Duration::from_millis(100));
    c.write_all(&hello[20..]).unwrap();
    assert_eq!(read_exact_within(&mut c, 8, Duration::from_secs(3)).unwrap(), b"from tls");
    assert_eq!(tls.wait_finished(1)[0].received, hello);

    let mut c = connect(&proxy, "fe1");
    c.write_all(&other).unwrap();
    assert_eq!(read_exact_within(&mut c, 10, Duration::from_secs(3)).unwrap(), b"from plain");

    // not TLS: no hello to wait for, routed at once
    let started = Instant::now();
    let mut c = connect(&proxy, "fe1");
    c.write_all(b"GET").unwrap();
    assert_eq!(read_exact_within(&mut c, 10, Duration::from_secs(3)).unwrap(), b"from plain");
    assert!(started.elapsed() < Duration::from_secs(1));
}

/// Variables (set by connection and content rules), captures and changed addresses
/// are what later rules and `use_backend` see.
#[test]
fn variables_captures_and_addresses_reach_the_switching_rules() {
    let a = RawBackend::start(vec![Step::ExpectBytes(4), Step::send("A")]);
    let b = RawBackend::start(vec![Step::ExpectBytes(4), Step::send("B")]);
    let c_be = RawBackend::start(vec![Step::ExpectBytes(4), Step::send("C")]);
    let d = RawBackend::start(vec![Step::ExpectBytes(4), Step::send("D")]);
    let proxy = start(
        "frontend fe1\n  bind fd@${fe1}\n  tcp-request inspect-delay 2s\n\
         tcp-request connection set-var(sess.origin) str(conn)\n\
         tcp-request connection set-src str(10.9.9.9)\n\
         tcp-request session set-dst-port int(4444)\n\
         tcp-request content reject unless { var(sess.origin) -m str conn }\n\
         tcp-request content reject unless { src 10.9.9.9 }\n\
         tcp-request content reject unless { req.len ge 4 }\n\
         tcp-request content set-var(txn.key) req.payload(0,1)\n\
         tcp-request content capture req.payload(1,1) len 4\n\
         tcp-request content set-src str(10.1.1.1) if { req.payload(0,1) -m str s }\n\
         use_backend a if { var(txn.key) -m str a }\n\
         use_backend b if { capture.req.hdr(0) -m str b }\n\
         use_backend c if { src 10.1.1.1 }\n\
         use_backend d if { dst_port 4444 }\n\
         backend a\n  server s ${a_addr}:${a_port}\n\
         backend b\n  server s ${b_addr}:${b_port}\n\
         backend c\n  server s ${c_addr}:${c_port}\n\
         backend d\n  server s ${d_addr}:${d_port}\n",
        &["fe1"],
        &[("a", a.addr()), ("b", b.addr()), ("c", c_be.addr()), ("d", d.addr())],
    );
    for (data, want) in [(&b"a..."[..], "A"), (b"xb..", "B"), (b"s...", "C"), (b"zz..", "D")] {
        let mut c = connect(&proxy, "fe1");
        c.write_all(data).unwrap();
        let got = read_exact_within(&mut c, 1, Duration::from_secs(3)).unwrap();
        assert_eq!(String::from_utf8_lossy(&got), want, "for {:?}", String::from_utf8_lossy(data));
    }
}

/// `tcp-response content` on the server's first bytes: reject, close, and a wait
/// for more bytes under `tcp-response inspect-delay`.
#[test]
fn response_rules_hold_the_servers_first_bytes() {
    let rules = "  tcp-response inspect-delay 2s\n\
                 tcp-response content reject if { res.payload(0,2) -m str NO }\n\
                 tcp-response content close if { res.payload(0,5) -m str CLOSE }\n\
                 tcp-response content accept if { res.len ge 6 }\n";
    let reject = RawBackend::start(vec![Step::send("NOPE, no data for you")]);
    let close = RawBackend::start(vec![Step::send("CLOSE now"), Step::sleep_ms(300), Step::send("never")]);
    let slow = RawBackend::start(vec![Step::send("he"), Step::sleep_ms(300), Step::send("llo world")]);
    let proxy = start(
        &format!(
            "listen fe1\n  bind fd@${{fe1}}\n{rules}  server s ${{r_addr}}:${{r_port}}\n\
             listen fe2\n  bind fd@${{fe2}}\n{rules}  server s ${{c_addr}}:${{c_port}}\n\
             listen fe3\n  bind fd@${{fe3}}\n{rules}  server s ${{s_addr}}:${{s_port}}\n"
        ),
        &["fe1", "fe2", "fe3"],
        &[("r", reject.addr()), ("c", close.addr()), ("s", slow.addr())],
    );
    assert_eq!(exchange(&proxy, "fe1", b"q"), (Vec::new(), End::Eof));
    let (got, end) = exchange(&proxy, "fe2", b"q");
    assert_eq!((String::from_utf8_lossy(&got).into_owned(), end), ("CLOSE now".to_owned(), End::Eof));
    let started = Instant::now();
    let mut c = connect(&proxy, "fe3");
    c.write_all(b"q").unwrap();
    assert_eq!(read_exact_within(&mut c, 11, Duration::from_secs(3)).unwrap(), b"hello world");
    assert!(started.elapsed() >= Duration::from_millis(250), "the first 2 bytes were held");
    assert_eq!(slow.wait_finished(1)[0].received, b"q");
}

/// While the response rules wait, the client's bytes still reach the server (a
/// protocol where the server speaks only after the second message works).
#[test]
fn request_bytes_flow_while_the_response_is_inspected() {
    let server = RawBackend::start(vec![Step::expect_until("two"), Step::send("answer")]);
    let proxy = start(
        "listen fe1\n  bind fd@${fe1}\n  tcp-response inspect-delay 3s\n\
         tcp-response content accept if { res.len ge 6 }\n  server s ${s1_addr}:${s1_port}\n",
        &["fe1"],
        &[("s1", server.addr())],
    );
    let mut c = connect(&proxy, "fe1");
    c.write_all(b"one ").unwrap();
    sleep(Duration::from_millis(100));
    c.write_all(b"two").unwrap();
    let started = Instant::now();
    assert_eq!(read_exact_within(&mut c, 6, Duration::from_secs(5)).unwrap(), b"answer");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_frontend_without_rules_connects_before_the_client_speaks() {
    let server = RawBackend::start(vec![Step::send("banner\n"), Step::expect_until("bye")]);
    let proxy = start(
        &format!("frontend fe1\n  bind fd@${{fe1}}\n  default_backend b\n{ONE_BACKEND}"),
        &["fe1"],
        &[("s1", server.addr())],
    );
    let mut c = connect(&proxy, "fe1");
    assert_eq!(read_exact_within(&mut c, 7, Duration::from_secs(3)).unwrap(), b"banner\n");
    c.write_all(b"bye").unwrap();
    assert_eq!(server.wait_finished(1)[0].received, b"bye");
}
