//! The rule engine against scripted local servers: several connections, variables
//! and formats, the expect options (`min-recv`, `!`, statuses, messages, status codes),
//! HTTP checks with several requests, and the helpers.

// The scripted servers run on std threads, off the request path: std mutexes are fine.
#![allow(clippy::disallowed_types)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use super::*;
use crate::sample::testutil::{config, runtime};

/// What a scripted server does on one connection.
#[derive(Clone)]
enum Step {
    /// Reads until these bytes were received (or the peer closes).
    Until(&'static [u8]),
    Write(&'static [u8]),
    /// Waits, then goes on.
    Sleep(u64),
}

/// A server running one script per connection, in order; it records what each
/// connection received.
struct Scripted {
    addr: SocketAddr,
    got: Arc<Mutex<Vec<Vec<u8>>>>,
    /// Connections accepted so far: each one's bytes are in `got` once its script ended.
    accepted: Arc<std::sync::atomic::AtomicUsize>,
}

impl Scripted {
    fn start(scripts: Vec<Vec<Step>>) -> Scripted {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr");
        let got = Arc::new(Mutex::new(Vec::new()));
        let rec = got.clone();
        let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            for script in scripts {
                let Ok((mut c, _)) = l.accept() else { return };
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut seen = Vec::new();
                for step in script {
                    match step {
                        Step::Until(pat) => read_until(&mut c, &mut seen, pat),
                        Step::Write(b) => {
                            let _ = c.write_all(b);
                        }
                        Step::Sleep(ms) => std::thread::sleep(Duration::from_millis(ms)),
                    }
                }
                rec.lock().unwrap().push(seen);
            }
        });
        Scripted { addr, got, accepted }
    }

    /// What each accepted connection received, once its script ended: the check may
    /// return (it had the bytes it expected) before the server thread recorded them.
    fn got(&self) -> Vec<String> {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let got = self.got.lock().unwrap();
            let done = got.len() >= self.accepted.load(std::sync::atomic::Ordering::SeqCst);
            if done || std::time::Instant::now() >= deadline {
                return got.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect();
            }
            drop(got);
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

fn read_until(c: &mut std::net::TcpStream, seen: &mut Vec<u8>, pat: &[u8]) {
    let mut chunk = [0u8; 4096];
    while memchr::memmem::find(seen, pat).is_none() {
        match c.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => seen.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Runs the checks of backend `b` (`rules`, then `server s <addr> check`) once.
fn check(rules: &str, addr: SocketAddr) -> Outcome {
    let cfg = config(&format!(
        "defaults\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n\
         backend b\n{rules}\n server s {addr} check\n"
    ));
    let rt = runtime(&cfg);
    let chk = rt.proxies[0].be.servers[0].check.as_deref().expect("check");
    let env = Env {
        host: &rt,
        be: 0,
        srv: 0,
        addr: chk.addr,
        start: Instant::now(),
        inter: Duration::from_millis(1500),
        connect: Duration::from_millis(1000),
        check: chk.timeout_check,
        bufsize: 16384,
        proxy_header: chk.proxy_header.as_deref(),
        send_proxy: &chk.rule_proxy_header,
        socks4: None,
        srv_socks4: None,
        tls: &chk.tls,
        running: true,
        state: None,
        h2: Some(false),
    };
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    tokio.block_on(chk.rules.run(&env))
}

fn out(status: CheckStatus, code: u16, desc: &str) -> Outcome {
    Outcome { status, code, desc: desc.into() }
}

#[test]
fn variables_and_formats() {
    let s = Scripted::start(vec![vec![Step::Until(b"\r\n"), Step::Write(b"hello back\r\n")]]);
    let o = check(
        " option tcp-check\n tcp-check set-var(check.greet) str(hello)\n\
         tcp-check send-lf \"%[var(check.greet)]\\r\\n\"\n tcp-check expect string-lf \"%[var(check.greet)] back\"\n",
        s.addr,
    );
    assert_eq!(o, out(CheckStatus::L7Ok, 0, "(tcp-check)"));
    assert_eq!(s.got(), ["hello\r\n"]);
}

#[test]
fn binary_formats_and_min_recv() {
    let s = Scripted::start(vec![vec![
        Step::Until(b"AB"),
        Step::Write(b"\x01\x02"),
        Step::Sleep(50),
        Step::Write(b"\x03"),
    ]]);
    let o = check(
        " option tcp-check\n tcp-check send-binary-lf \"%[str(4142)]\"\n tcp-check expect min-recv 3 binary 010203\n",
        s.addr,
    );
    assert_eq!(o, out(CheckStatus::L7Ok, 0, "(tcp-check)"));
    assert_eq!(s.got(), ["AB"]);
}

#[test]
fn several_connections() {
    let a = Scripted::start(vec![vec![Step::Until(b"one"), Step::Write(b"1")]]);
    let b = Scripted::start(vec![vec![Step::Write(b"banner")]]);
    let rules = format!(
        " option tcp-check\n tcp-check connect port {}\n tcp-check send one\n tcp-check expect string 1\n\
         tcp-check connect addr 127.0.0.1:{} linger\n tcp-check expect rstring ^ban\n",
        a.addr.port(),
        b.addr.port()
    );
    assert_eq!(check(&rules, a.addr), out(CheckStatus::L7Ok, 0, "(tcp-check)"));
    // the second connection is refused: the step names the rule
    let c = Scripted::start(vec![vec![Step::Until(b"one"), Step::Write(b"1")]]);
    let rules =
        format!(" option tcp-check\n tcp-check connect port {}\n tcp-check send one\n tcp-check expect string 1\n tcp-check connect port 1\n", c.addr.port());
    let o = check(&rules, c.addr);
    assert_eq!(o, out(CheckStatus::L4Con, 0, "Connection refused at step 4 of tcp-check (connect port 1)"));
}

#[test]
fn expect_messages_statuses_and_codes() {
    let s = Scripted::start(vec![vec![Step::Write(b"OK 250\r\n")]]);
    let o = check(
        " option tcp-check\n tcp-check expect string OK on-success \"got %[res.payload(0,2)]\" status-code int(42)\n",
        s.addr,
    );
    assert_eq!(o, out(CheckStatus::L7Ok, 42, "got OK"));
    let s = Scripted::start(vec![vec![Step::Write(b"NO thanks\r\n")]]);
    let o = check(
        " option tcp-check\n tcp-check expect min-recv 2 string OK error-status L7STS on-error \"said %[res.payload(0,2)]\" \
         comment greeting\n",
        s.addr,
    );
    assert_eq!(o, out(CheckStatus::L7Sts, 0, "said NO comment: greeting"));
    let s = Scripted::start(vec![vec![Step::Write(b"fine")]]);
    let o = check(" option tcp-check\n tcp-check expect string fine ok-status L6OK\n", s.addr);
    assert_eq!(o.status, CheckStatus::L6Ok);
}

#[test]
fn inverted_expects_wait_for_the_whole_reply() {
    // no ERR so far: an inverted string waits until the server closes
    let s = Scripted::start(vec![vec![Step::Write(b"all "), Step::Sleep(100), Step::Write(b"OK")]]);
    let o = check(" option tcp-check\n tcp-check expect ! string ERR\n tcp-check expect string OK\n", s.addr);
    assert_eq!(o, out(CheckStatus::L7Ok, 0, "(tcp-check)"));
    let s = Scripted::start(vec![vec![Step::Write(b"all "), Step::Sleep(100), Step::Write(b"ERR")]]);
    let o = check(" option tcp-check\n tcp-check expect ! string ERR\n tcp-check expect string OK\n", s.addr);
    assert_eq!(o, out(CheckStatus::L7Rsp, 0, "TCPCHK matched unwanted content 'ERR' at step 1"));
}

#[test]
fn timeouts_name_the_step_and_take_tout_status() {
    let s = Scripted::start(vec![vec![Step::Sleep(800)]]);
    let o = check(" timeout check 200ms\n option tcp-check\n tcp-check expect string x tout-status L6TOUT\n", s.addr);
    assert_eq!(o, out(CheckStatus::L6Tout, 0, " at step 1 of tcp-check (expect string 'x')"));
    let s = Scripted::start(vec![vec![Step::Until(b"x")]]);
    let o = check(" option tcp-check\n tcp-check send x\n tcp-check expect string y comment c\n", s.addr);
    assert_eq!(o, out(CheckStatus::L7Rsp, 0, "TCPCHK got an empty response at step 2 comment: 'c'"));
}

#[test]
fn http_checks_with_several_requests() {
    let s = Scripted::start(vec![
        vec![Step::Until(b"\r\n\r\n"), Step::Write(b"HTTP/1.1 200 OK\r\nx-next: /two\r\ncontent-length: 2\r\n\r\nok")],
        vec![Step::Until(b"\r\n\r\n"), Step::Write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")],
    ]);
    let rules = " option httpchk\n http-check connect\n http-check send meth GET uri /one ver HTTP/1.1\n\
                 http-check expect status 200\n http-check set-var(check.next) res.hdr(x-next)\n\
                 http-check connect\n http-check send meth GET uri-lf %[var(check.next)] hdr x-srv %[srv_name]\n\
                 http-check expect status 404\n";
    assert_eq!(check(rules, s.addr), out(CheckStatus::L7Ok, 404, ""));
    assert_eq!(s.got(), ["GET /one HTTP/1.1\r\nconnection: close\r\n\r\n", "GET /two HTTP/1.0\r\nx-srv: s\r\n\r\n",]);
}

#[test]
fn http_status_failures_and_disable_on_404() {
    let s = Scripted::start(vec![vec![
        Step::Until(b"\r\n\r\n"),
        Step::Write(b"HTTP/1.1 500 Oops\r\ncontent-length: 0\r\n\r\n"),
    ]]);
    let o = check(" option httpchk\n http-check expect status 200 comment health\n", s.addr);
    assert_eq!(o, out(CheckStatus::L7Sts, 500, "Oops comment: health"));
    let s = Scripted::start(vec![vec![
        Step::Until(b"\r\n\r\n"),
        Step::Write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"),
    ]]);
    let o = check(" option httpchk\n http-check disable-on-404\n", s.addr);
    assert_eq!(o, out(CheckStatus::L7OkC, 404, ""));
    let s = Scripted::start(vec![vec![Step::Until(b"\r\n\r\n")]]);
    let o = check(" option httpchk\n", s.addr);
    assert_eq!(o, out(CheckStatus::L7Rsp, 0, "TCPCHK got an empty response at step 2"));
}

#[test]
fn helpers() {
    assert_eq!(payload(b"220 mx ready\r\n", 4, true, true), "mx ready");
    assert_eq!(payload(b"-ERR nope\r\nmore", 0, false, true), "-ERR nope");
    assert_eq!(payload(b"ab", 4, true, true), "");
    assert_eq!(payload(b"E\0\0\0\x0bSFATAL\0C", 6, false, false), "FATAL");
    assert_eq!(leading_code(b"250-hello"), 250);
    assert_eq!(leading_code(b"xx"), 0);
    assert_eq!(hex(b"\x01\xab"), "01AB");
    assert_eq!(unhex(b"01ab"), Some(vec![1, 0xab]));
    assert_eq!(unhex(b"0g"), None);
    assert_eq!(Matcher::String(b"+OK".to_vec()).describe(), " (expect string '+OK')");
}
