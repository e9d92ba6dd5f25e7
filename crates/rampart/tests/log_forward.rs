//! `log-forward` sections end to end: the real binary relays syslog messages received
//! over UDP (`dgram-bind`) and TCP (`bind`, octet-counted and LF-terminated framing)
//! to the section's `log` targets, here four UDP targets of the test (no format, rfc3164,
//! rfc5424, priority with an `err` level filter). Every line is asserted exactly (a date
//! the relay generates from its clock is a wildcard), and the same scenario runs
//! against haproxy, whose lines must fit the same patterns: byte-identical but for
//! those dates. Skipped against haproxy (with a visible line) when it is not installed;
//! `RAMPART_REQUIRE_HAPROXY=1` makes that a failure.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::Path;
use std::time::{Duration, Instant};

use rampart_testkit::{haproxy_or_skip, Proxy, Running};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// A date the relay takes from its clock: `Mmm dd hh:mm:ss` (local time).
const DATE: &str = "???????????????";
/// The same in RFC 5424 form: `yyyy-mm-ddThh:mm:ss.uuuuuu+hh:mm`.
const ISO: &str = "????????????????????????????????";

/// A port nobody uses right now (the proxy binds it next).
fn free_port(udp: bool) -> u16 {
    if udp {
        UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    } else {
        std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    }
}

struct Setup {
    udp: SocketAddr,
    tcp: SocketAddr,
    rx: UdpSocket,
}

fn config(s: &Setup) -> String {
    let rx = s.rx.local_addr().unwrap();
    format!(
        "global\n  log-tag ignored\n\
         log-forward relay\n  dgram-bind {}\n  bind {} name tcp\n  maxconn 4\n  timeout client 20s\n\
         \x20 log {rx} local3\n  log {rx} format rfc3164 local3\n  log {rx} format rfc5424 local3\n\
         \x20 log {rx} format priority local3 err\n",
        s.udp, s.tcp
    )
}

/// Lines received until `n` came or nothing came for a while.
fn collect(rx: &UdpSocket, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut buf = [0u8; 65536];
    while out.len() < n && Instant::now() < deadline {
        if let Ok(len) = rx.recv(&mut buf) {
            out.push(String::from_utf8_lossy(&buf[..len]).into_owned());
        }
    }
    // a line too many would show in the next step's lines
    out
}

/// Waits until the relay answers on UDP and TCP, then drains what the probes made.
fn wait_ready(s: &Setup, tx: &UdpSocket) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 4096];
    loop {
        tx.send_to(b"<14>probe", s.udp).unwrap();
        if s.rx.recv(&mut buf).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "the relay never answered on {}", s.udp);
    }
    while TcpStream::connect(s.tcp).is_err() {
        assert!(Instant::now() < deadline, "the relay never listened on {}", s.tcp);
        std::thread::sleep(Duration::from_millis(50));
    }
    while s.rx.recv(&mut buf).is_ok() {}
}

/// One step: what is sent, and the lines expected of the four targets in order.
enum Send {
    Udp(&'static [u8]),
    Tcp(&'static [u8]),
}

const STEPS: &[(Send, &[&str])] = &[
    (
        Send::Udp(b"<134>1 2024-03-01T10:20:30.123456+01:00 host1 app 4242 ID47 [ex@1 a=\"b\"] hello5424"),
        &[
            "<134>1 2024-03-01T10:20:30.123456+01:00 host1 app 4242 ID47 [ex@1 a=\"b\"] hello5424",
            "<134>Mar  1 10:20:30 host1 app[4242]: hello5424",
            "<134>1 2024-03-01T10:20:30.123456+01:00 host1 app 4242 ID47 [ex@1 a=\"b\"] hello5424",
        ],
    ),
    (
        Send::Udp(b"<30>Jan  5 10:20:30 host1 app[123]: hello3164\n"),
        &[
            "<30>Jan  5 10:20:30 host1 app[123]: hello3164",
            "<30>Jan  5 10:20:30 host1 app[123]: hello3164",
            "<30>1 ????-01-05T10:20:30-00:00 host1 app 123 - - hello3164",
        ],
    ),
    (
        Send::Udp(b"no priority at all"),
        &[
            "no priority at all",
            "<152>{DATE} localhost no priority at all",
            "<152>1 {ISO} - - - - - no priority at all",
            "<152>no priority at all",
        ],
    ),
    (
        Send::Udp(b"<11>1 - - - - - - an error"),
        &["<11>an error", "<11>{DATE} localhost an error", "<11>1 - - - - - - an error", "<11>an error"],
    ),
    (Send::Udp(b"<13>1 bad"), &["<13>1 b", "<13>{DATE} localhost 1 b", "<13>1 {ISO} - - - - - 1 b"]),
    // the second half of HAProxy's reg-test log/log_forward.vtc: octet-counted messages
    // over TCP, relayed over UDP with their tag and pid
    (
        Send::Tcp(b"57 <134>1 2024-03-01T10:20:30Z h2 haproxy 4711 - - tcp octet"),
        &[
            "<134>1 2024-03-01T10:20:30Z h2 haproxy 4711 - - tcp octet",
            "<134>Mar  1 10:20:30 h2 haproxy[4711]: tcp octet",
            "<134>1 2024-03-01T10:20:30Z h2 haproxy 4711 - - tcp octet",
        ],
    ),
    (
        Send::Tcp(b"<14>Mar 11 10:20:30 h3 tg[5]: lf framed\r\n<9>Mar 11 10:20:31 h3 tg: second\n"),
        &[
            "<14>Mar 11 10:20:30 h3 tg[5]: lf framed",
            "<14>Mar 11 10:20:30 h3 tg[5]: lf framed",
            "<14>1 ????-03-11T10:20:30-00:00 h3 tg 5 - - lf framed",
            "<9>Mar 11 10:20:31 h3 tg: second",
            "<9>Mar 11 10:20:31 h3 tg: second",
            "<9>1 ????-03-11T10:20:31-00:00 h3 tg - - - second",
            "<9>second",
        ],
    ),
];

/// `pattern` with `{DATE}`/`{ISO}` expanded to wildcards; `?` matches any byte.
fn fits(pattern: &str, line: &str) -> bool {
    let p = pattern.replace("{DATE}", DATE).replace("{ISO}", ISO);
    p.len() == line.len() && p.bytes().zip(line.bytes()).all(|(a, b)| a == b'?' || a == b)
}

/// Runs the steps against `binary`; returns, per step, the lines received.
fn scenario(binary: &Path) -> Vec<Vec<String>> {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let s = Setup {
        udp: format!("127.0.0.1:{}", free_port(true)).parse().unwrap(),
        tcp: format!("127.0.0.1:{}", free_port(false)).parse().unwrap(),
        rx,
    };
    let proxy: Running = Proxy::new(binary).config(&config(&s)).start().expect("the relay starts");
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    wait_ready(&s, &tx);
    let mut tcp = TcpStream::connect(s.tcp).unwrap();
    let mut got = Vec::new();
    for (send, expected) in STEPS {
        match send {
            Send::Udp(m) => {
                tx.send_to(m, s.udp).unwrap();
            }
            Send::Tcp(m) => tcp.write_all(m).unwrap(),
        }
        got.push(collect(&s.rx, expected.len()));
    }
    // not a syslog stream: the connection closes, nothing is relayed
    let mut bad = TcpStream::connect(s.tcp).unwrap();
    bad.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    bad.write_all(b"hello\n").unwrap();
    let mut rest = Vec::new();
    assert!(matches!(bad.read_to_end(&mut rest), Ok(0)), "a bad stream is closed: {rest:?}");
    // the first connection still works
    tcp.write_all(b"26 <10>1 - - - - - - still up").unwrap();
    got.push(collect(&s.rx, 4));
    let mut buf = [0u8; 4096];
    let extra = s.rx.recv(&mut buf).ok().map(|n| String::from_utf8_lossy(&buf[..n]).into_owned());
    assert_eq!(extra, None, "no line more");
    drop(proxy);
    got
}

const LAST: &[&str] = &["<10>still up", "<10>{DATE} localhost still up", "<10>1 - - - - - - still up", "<10>still up"];

/// Whether `lines` are the `want` patterns, in any order: rampart sends the lines of
/// one event-loop turn grouped per target (one `sendmmsg` each), so two messages read
/// together reach this test's socket target by target (each target's own lines keep
/// their order).
fn same_lines(lines: &[&str], want: &[&str]) -> bool {
    let mut used = vec![false; want.len()];
    lines.len() == want.len()
        && lines.iter().all(|l| {
            let free = want.iter().enumerate().position(|(i, p)| !used[i] && fits(p, l));
            free.map(|i| used[i] = true).is_some()
        })
}

fn assert_lines(who: &str, got: &[Vec<String>]) {
    let expected = STEPS.iter().map(|(_, e)| *e).chain([LAST]);
    for (i, (lines, want)) in got.iter().zip(expected).enumerate() {
        let lines: Vec<&str> = lines.iter().map(|l| l.strip_suffix('\n').unwrap_or(l)).collect();
        assert!(same_lines(&lines, want), "{who}, step {i}:\n got {lines:#?}\n expected {want:#?}");
    }
    assert_eq!(got.len(), STEPS.len() + 1);
}

#[test]
fn udp_and_tcp_messages_are_relayed_with_their_metadata() {
    let got = scenario(Path::new(RAMPART));
    assert_lines("rampart", &got);
}

#[test]
fn haproxy_relays_the_same_lines() {
    let Some(haproxy) = haproxy_or_skip("log_forward::haproxy_relays_the_same_lines") else { return };
    let got = scenario(&haproxy);
    assert_lines("haproxy", &got);
}

/// `maxconn 1`: a second connection waits until the first closes; `timeout client`
/// closes an idle connection. (Rampart only: haproxy's listener with a backlog of 1
/// leaves the second connect() unanswered instead, which makes the timing untestable.)
#[test]
fn maxconn_and_timeout_client() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let s = Setup {
        udp: format!("127.0.0.1:{}", free_port(true)).parse().unwrap(),
        tcp: format!("127.0.0.1:{}", free_port(false)).parse().unwrap(),
        rx,
    };
    let cfg = format!(
        "log-forward relay\n  dgram-bind {}\n  bind {} backlog 16\n  maxconn 1\n  timeout client 2s\n  log {} local3\n",
        s.udp,
        s.tcp,
        s.rx.local_addr().unwrap()
    );
    let proxy = Proxy::new(RAMPART).config(&cfg).start().expect("the relay starts");
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    wait_ready(&s, &tx);
    // (the probe connection of wait_ready is gone: its slot is free again)
    std::thread::sleep(Duration::from_millis(200));
    let mut first = TcpStream::connect(s.tcp).unwrap();
    let started = Instant::now();
    first.write_all(b"<14>1 - h t 1 - - first\n").unwrap();
    assert_eq!(collect(&s.rx, 1), ["<14>1 - h t 1 - - first\n"]);
    let mut second = TcpStream::connect(s.tcp).unwrap();
    second.write_all(b"<14>1 - h t 2 - - second\n").unwrap();
    let mut buf = [0u8; 512];
    assert!(s.rx.recv(&mut buf).is_err(), "the second connection waits for the slot");
    // idle for longer than `timeout client`: the first connection is closed
    first.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut rest = Vec::new();
    assert!(matches!(first.read_to_end(&mut rest), Ok(0)), "closed after timeout client");
    let idle = started.elapsed();
    assert!(idle >= Duration::from_millis(1900) && idle < Duration::from_secs(4), "{idle:?}");
    assert_eq!(collect(&s.rx, 1), ["<14>1 - h t 2 - - second\n"], "then the second is served");
    drop(proxy);
}

/// HAProxy's reg-test log/log_forward.vtc: a frontend logs over UDP to `log-forward
/// syslog2tcp`, which writes to a ring (format rfc5424) whose server is the TCP `bind` of
/// `log-forward syslog2local`, which relays to the test's UDP receiver. The line must
/// keep the pid of the proxy that logged (`[^:\[ ]\[<pid>\]: .* "GET /client_c1 HTTP/1.1"`).
fn vtc_chain(binary: &Path) -> String {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let (udp, tcp) = (free_port(true), free_port(false));
    let be = rampart_testkit::HttpBackend::start("s1");
    let cfg = format!(
        "defaults\n  mode http\n  option httplog\n  timeout connect 5s\n  timeout client 5s\n  timeout server 5s\n\
         frontend fe1\n  bind fd@${{fe1}}\n  log 127.0.0.1:{udp} local0\n  default_backend be\n\
         backend be\n  server app1 ${{s1_addr}}:${{s1_port}}\n\
         ring myring\n  description \"My local buffer\"\n  format rfc5424\n  maxlen 1200\n  size 32764\n\
         \x20 timeout connect 5s\n  timeout server 10s\n  server mysyslogsrv 127.0.0.1:{tcp}\n\
         log-forward syslog2tcp\n  dgram-bind 127.0.0.1:{udp}\n  log ring@myring local0\n\
         log-forward syslog2local\n  bind 127.0.0.1:{tcp}\n  log {} local0\n",
        rx.local_addr().unwrap()
    );
    let proxy =
        Proxy::new(binary).listener("fe1").backend("s1", be.addr()).config(&cfg).start().expect("the proxy starts");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 4096];
    loop {
        // (the ring's connection to syslog2local may take a moment)
        rampart_testkit::http_get(proxy.addr("fe1"), "/client_c1");
        if let Ok(n) = rx.recv(&mut buf) {
            let line = String::from_utf8_lossy(&buf[..n]).into_owned();
            let pid = proxy.pid();
            let tagged = format!("[{pid}]: ");
            let at = line.find(&tagged).unwrap_or_else(|| panic!("no [{pid}]: in {line:?}"));
            assert!(at > 0 && !b":[ ".contains(&line.as_bytes()[at - 1]), "{line:?}");
            assert!(line.trim_end().ends_with("\"GET /client_c1 HTTP/1.1\""), "{line:?}");
            drop(proxy);
            return line.replace(&pid.to_string(), "PID");
        }
        assert!(Instant::now() < deadline, "nothing came through the chain");
    }
}

/// The header of a chained line, with what differs between runs masked: the date, the
/// program name (the default tag); the message (ports, timers) is left out.
fn chain_header(line: &str) -> String {
    let mut words: Vec<String> = line.split(' ').take(7).map(str::to_owned).collect();
    words[1] = "DATE".into();
    words[2] = words[2].split_once('[').map_or(words[2].clone(), |(_, pid)| format!("PROG[{pid}"));
    words.join(" ")
}

#[test]
fn the_reg_test_chain_keeps_the_pid_of_the_proxy_that_logged() {
    let line = vtc_chain(Path::new(RAMPART));
    assert_eq!(chain_header(&line), "<134>1 DATE PROG[PID]: - - - -", "{line:?}");
    let Some(haproxy) = haproxy_or_skip("log_forward::the_reg_test_chain_keeps_the_pid_of_the_proxy_that_logged")
    else {
        return;
    };
    let theirs = vtc_chain(&haproxy);
    assert_eq!(chain_header(&line), chain_header(&theirs), "{theirs:?}");
}

/// The first alert of `-c`, after its `(pid) : config : ` prefix.
fn first_alert(binary: &Path, cfg: &str) -> String {
    let out = rampart_testkit::check(binary, cfg);
    let line = out.stderr.lines().find(|l| l.starts_with("[ALERT]")).unwrap_or_default().to_owned();
    line.split_once(" : config : ").map_or(line.clone(), |(_, m)| m.to_owned())
}

/// Configuration errors of the section, worded as haproxy -c words them.
#[test]
fn section_errors_read_as_haproxy_check_prints_them() {
    let Some(haproxy) = haproxy_or_skip("log_forward::section_errors_read_as_haproxy_check_prints_them") else {
        return;
    };
    let sections = [
        "log-forward\n",
        "log-forward a b\n",
        "log-forward a/b\n",
        "frontend a\n  bind 127.0.0.1:18999\nlog-forward a\n  bind 127.0.0.1:18998\n",
        "log-forward a\n  bind 127.0.0.1:18997\nlog-forward a\n  bind 127.0.0.1:18996\n",
    ];
    let lines = [
        "dgram-bind 127.0.0.1:1514 foo",
        "dgram-bind 127.0.0.1:1514 name",
        "dgram-bind foo:1",
        "dgram-bind 127.0.0.1",
        "bind 127.0.0.1:2515 bogus",
        "log",
        "log 127.0.0.1 local9",
        "log 127.0.0.1 len 10 local0",
        "maxconn",
        "backlog",
        "maxconn 10 20",
        "timeout server 1s",
        "timeout client",
        "frobnicate",
    ];
    let cases = sections.iter().map(|s| s.to_string()).chain(lines.iter().map(|l| format!("log-forward x\n  {l}\n")));
    for cfg in cases {
        let theirs = first_alert(&haproxy, &cfg);
        assert!(!theirs.is_empty(), "haproxy accepts {cfg:?}");
        assert_eq!(first_alert(Path::new(RAMPART), &cfg), theirs, "{cfg:?}");
    }
}
