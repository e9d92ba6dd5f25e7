//! `wait_end` (`WAIT_END`) and `last_rule_file`/`last_rule_line` through the real
//! binary: `tcp-request inspect-delay` + `tcp-request content accept if WAIT_END` holds
//! a TCP stream for the whole delay (unless the client ends its side first), lets a
//! complete HTTP request through at once and holds one whose body is still arriving
//! until its end (or the delay); `tcp-response content reject unless WAIT_END`
//! in an HTTP backend does not hold a complete response; the log line names the file
//! and line of the last rule that decided, received on a UDP syslog socket.
//!
//! The expectations are HAProxy 2.6.12's: `RAMPART_TEST_BINARY=/usr/sbin/haproxy cargo
//! test -p rampart --test wait_end_last_rule` runs the file against it.
//! HAProxy counterpart: reg-tests/log/last_rule.vtc, configuration.txt §7.3.5
//! `wait_end`, §7.3.2 `last_rule_file`.

mod netutil;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use rampart_testkit::{HttpBackend, RawBackend, Running, Step, TcpEchoBackend};

const TCP_ACCEPT: &str = "tcp-request content accept if WAIT_END";
const TCP_REJECT: &str = "tcp-request content reject if { req.payload(0,3) -m str BAD }";
const HTTP_ACCEPT: &str = "tcp-request content accept if { wait_end }";
const HTTP_DENY: &str = "http-request deny if { path /deny }";

fn config(syslog: SocketAddr) -> String {
    format!(
        "global\n  nbthread 1\n\
         defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         frontend tcp1\n  bind fd@${{tcp1}}\n  log {syslog} local0\n\
         \x20 log-format \"tcp lr=%[last_rule_file]:%[last_rule_line]\"\n\
         \x20 tcp-request inspect-delay 4s\n  {TCP_REJECT}\n  {TCP_ACCEPT}\n  default_backend echo\n\
         frontend http1\n  mode http\n  bind fd@${{http1}}\n  log {syslog} local0\n\
         \x20 log-format \"http lr=%[last_rule_file]:%[last_rule_line] st=%ST\"\n\
         \x20 tcp-request inspect-delay 2s\n  {HTTP_ACCEPT}\n  {HTTP_DENY}\n  default_backend web\n\
         backend echo\n  server e1 ${{e1_addr}}:${{e1_port}}\n\
         backend web\n  mode http\n  tcp-response inspect-delay 10s\n\
         \x20 tcp-response content reject unless WAIT_END\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    )
}

/// The 1-based line of `cfg` holding `rule`.
fn line_of(cfg: &str, rule: &str) -> usize {
    cfg.lines().position(|l| l.trim() == rule).expect("rule in config") + 1
}

struct Setup {
    proxy: Running,
    rx: UdpSocket,
    cfg: String,
    _echo: TcpEchoBackend,
    /// The HTTP server, kept alive with the proxy.
    _web: Box<dyn std::any::Any>,
}

fn setup() -> Setup {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let cfg = config(rx.local_addr().unwrap());
    let echo = TcpEchoBackend::start();
    // answers once it has a head, without waiting for a body the client may not send
    let web = RawBackend::start(vec![
        Step::expect_head(),
        Step::send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"),
    ]);
    let proxy = netutil::proxy()
        .config(&cfg)
        .listener("tcp1")
        .listener("http1")
        .backend("e1", echo.addr())
        .backend("s1", web.addr())
        .start()
        .expect("proxy starts");
    Setup { proxy, rx, cfg, _echo: echo, _web: Box::new(web) }
}

impl Setup {
    /// The next log line with `prefix` (syslog header cut off), waiting up to 5s.
    fn line(&self, prefix: &str) -> String {
        self.rx.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut buf = [0u8; 4096];
        while Instant::now() < deadline {
            if let Ok(n) = self.rx.recv(&mut buf) {
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                if let Some(at) = text.find(prefix) {
                    return text[at..].trim_end().to_owned();
                }
            }
        }
        panic!("no log line starting with {prefix:?}");
    }

    fn at(&self, rule: &str) -> String {
        format!("lr=test.cfg:{}", line_of(&self.cfg, rule))
    }
}

/// Sends `data` (then ends the client side when `shut`) and reads the echo of it;
/// returns what came back and how long that took.
fn echo(addr: SocketAddr, data: &[u8], shut: bool) -> (Vec<u8>, Duration) {
    let mut c = netutil::connect(addr, Duration::from_secs(5)).unwrap();
    let start = Instant::now();
    c.write_all(data).unwrap();
    if shut {
        c.shutdown(Shutdown::Write).unwrap();
    }
    let mut got = vec![0u8; data.len()];
    let read = c.read_exact(&mut got).map(|_| got).unwrap_or_default();
    (read, start.elapsed())
}

/// A POST whose 4-byte body follows the head after `body_after` (never: `None`): the
/// status and how long it took.
fn http_post(addr: SocketAddr, body_after: Option<Duration>) -> (Option<u16>, Duration) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let start = Instant::now();
    c.write_all(b"POST / HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 4\r\n\r\n").unwrap();
    if let Some(after) = body_after {
        std::thread::sleep(after);
        c.write_all(b"abcd").unwrap();
    }
    let mut got = [0u8; 12];
    let status = c.read_exact(&mut got).ok().and_then(|()| std::str::from_utf8(&got[9..12]).ok()?.parse().ok());
    (status, start.elapsed())
}

/// One HTTP/1.1 request on its own connection: the status and how long it took.
fn http_get(addr: SocketAddr, path: &str) -> (Option<u16>, Duration) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let start = Instant::now();
    c.write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes()).unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    let status = std::str::from_utf8(&got).ok().and_then(|t| t.get(9..12)).and_then(|s| s.parse().ok());
    (status, start.elapsed())
}

#[test]
fn tcp_mode_waits_for_the_whole_inspect_delay_unless_the_client_ends_first() {
    let s = setup();
    let tcp1 = s.proxy.addr("tcp1");
    let (got, took) = echo(tcp1, b"hello", false);
    assert_eq!(got, b"hello");
    assert!(took >= Duration::from_millis(3900), "held for the 4s delay: {took:?}");
    assert!(took < Duration::from_secs(7), "no longer than it: {took:?}");
    assert_eq!(s.line("tcp lr="), format!("tcp {}", s.at(TCP_ACCEPT)));

    // the client ended its side: the inspection is final at once
    let (got, took) = echo(tcp1, b"bye", true);
    assert_eq!(got, b"bye");
    assert!(took < Duration::from_secs(3), "no wait once the input ended: {took:?}");
    assert_eq!(s.line("tcp lr="), format!("tcp {}", s.at(TCP_ACCEPT)));

    // a rule above decides on the data at once, and is the one logged
    let start = Instant::now();
    let (got, _) = echo(tcp1, b"BADxx", false);
    assert!(got.is_empty(), "rejected");
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(s.line("tcp lr="), format!("tcp {}", s.at(TCP_REJECT)));
}

#[test]
fn http_mode_decides_at_once_on_a_complete_request_and_response() {
    let s = setup();
    let http1 = s.proxy.addr("http1");
    let (status, took) = http_get(http1, "/");
    assert_eq!(status, Some(200));
    assert!(took < Duration::from_millis(1500), "neither the 2s request nor the 10s response delay: {took:?}");
    // `tcp-response content reject unless WAIT_END` did not apply: the accept stays last
    assert_eq!(s.line("http lr="), format!("http {} st=200", s.at(HTTP_ACCEPT)));

    let (status, _) = http_get(http1, "/deny");
    assert_eq!(status, Some(403));
    assert_eq!(s.line("http lr="), format!("http {} st=403", s.at(HTTP_DENY)));
}

#[test]
fn no_final_rule_logs_no_value() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let web = HttpBackend::start("s1");
    let cfg = format!(
        "global\n  nbthread 1\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind fd@${{fe1}}\n  log {} local0\n\
         \x20 log-format \"none lr=%[last_rule_file]:%[last_rule_line]\"\n\
         \x20 http-request set-var(txn.p) path\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        rx.local_addr().unwrap()
    );
    let proxy = netutil::proxy().config(&cfg).listener("fe1").backend("s1", web.addr()).start().expect("starts");
    assert_eq!(http_get(proxy.addr("fe1"), "/").0, Some(200));
    let s = Setup { proxy, rx, cfg, _echo: TcpEchoBackend::start(), _web: Box::new(web) };
    assert_eq!(s.line("none lr="), "none lr=-:-");
}

#[test]
fn http_mode_waits_for_a_body_still_arriving_up_to_the_delay() {
    let s = setup();
    let http1 = s.proxy.addr("http1");
    let (status, took) = http_post(http1, Some(Duration::from_millis(300)));
    assert_eq!(status, Some(200));
    assert!(took >= Duration::from_millis(290), "held until the body came: {took:?}");
    assert!(took < Duration::from_millis(1500), "not for the whole delay: {took:?}");
    assert_eq!(s.line("http lr="), format!("http {} st=200", s.at(HTTP_ACCEPT)));
    // the body never comes: final once the 2s delay expired
    let (status, took) = http_post(http1, None);
    assert_eq!(status, Some(200));
    assert!(took >= Duration::from_millis(1900), "held for the delay: {took:?}");
    assert!(took < Duration::from_secs(4), "{took:?}");
}
