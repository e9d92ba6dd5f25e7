//! `log ring@<name>` and `ring` sections: httplog lines go to a ring whose server is a
//! TCP syslog receiver owned by the test. The receiver must get each line framed with
//! octet counting (`<len> <msg>`) and the ring's RFC 5424 header; after the receiver
//! is killed and restarted, forwarding resumes (lines written while it was away come
//! first). `show events` lists the ring and dumps its lines. Then the same
//! configuration through haproxy: the frames must have the same shape and header
//! fields (dates and pids aside). Skipped with a visible line without haproxy.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rampart_testkit::{Differential, HttpBackend, Normalize, Normalizer, Proxy};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// A TCP syslog receiver: with octet counting each frame, checked (`<len> ` then
/// exactly `len` bytes), goes to the channel as its message; else each line.
struct Syslog {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Syslog {
    fn start(listener: TcpListener, tx: Sender<String>) -> Syslog {
        Syslog::framed(listener, tx, true)
    }

    fn framed(listener: TcpListener, tx: Sender<String>, octet_count: bool) -> Syslog {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        listener.set_nonblocking(true).unwrap();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => read_frames(conn, &tx, &flag, octet_count),
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Syslog { stop, thread: Some(thread) }
    }

    /// Closes the connection and the listening socket.
    fn kill(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

fn read_frames(mut conn: TcpStream, tx: &Sender<String>, stop: &AtomicBool, octet_count: bool) {
    conn.set_nonblocking(false).unwrap();
    conn.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) {
        match conn.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => continue,
            Err(_) => return,
        }
        while let Some(lf) = buf.iter().position(|&c| c == b'\n').filter(|_| !octet_count) {
            let _ = tx.send(String::from_utf8_lossy(&buf[..lf]).into_owned());
            buf.drain(..=lf);
        }
        while let Some(sp) = buf.iter().position(|&c| c == b' ').filter(|_| octet_count) {
            let len: usize = std::str::from_utf8(&buf[..sp])
                .ok()
                .and_then(|l| l.parse().ok())
                .unwrap_or_else(|| panic!("not an octet-counting frame: {:?}", String::from_utf8_lossy(&buf)));
            if buf.len() < sp + 1 + len {
                break;
            }
            let msg = String::from_utf8_lossy(&buf[sp + 1..sp + 1 + len]).into_owned();
            buf.drain(..sp + 1 + len);
            let _ = tx.send(msg);
        }
    }
}

/// The next message containing `needle`, within 10 s.
fn wait_for(rx: &Receiver<String>, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(m) if m.contains(needle) => return m,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    panic!("no frame with {needle:?} arrived");
}

fn config(syslog: SocketAddr) -> String {
    config_framed(syslog, " log-proto octet-count")
}

/// With `proto` after the ring's `server` line.
fn config_framed(syslog: SocketAddr, proto: &str) -> String {
    format!(
        "global\n  log-tag px\n  stats socket ${{testdir}}/admin.sock level admin\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
         frontend fe\n  bind fd@${{fe}}\n  option httplog\n  log ring@r local0\n  default_backend be\n\
         backend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n\
         ring r\n  description \"My local buffer\"\n  format rfc5424\n  maxlen 1200\n  size 32764\n\
         \x20 timeout connect 5s\n  timeout server 10s\n  server syslog {syslog}{proto}\n"
    )
}

fn get(addr: SocketAddr, path: &str) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    assert!(out.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&out));
}

/// The fields of an RFC 5424 line that do not change between runs: PRI and version,
/// host, tag, msgid, structured data, then the httplog fields but times, dates and
/// the client port.
fn fields(msg: &str) -> Vec<String> {
    let words: Vec<&str> = msg.split(' ').collect();
    let mut out: Vec<String> = [0, 2, 3, 5, 6].iter().map(|&i| words.get(i).unwrap_or(&"").to_string()).collect();
    let body = &words[7.min(words.len())..];
    // client ip (port masked), frontend, backend/server, status, request line
    out.push(body.first().and_then(|c| c.rsplit_once(':')).map_or(String::new(), |(ip, _)| ip.to_owned()));
    for i in [2, 3, 5] {
        out.push(body.get(i).unwrap_or(&"").to_string());
    }
    out.extend(body.iter().skip_while(|w| !w.starts_with('"')).map(|w| w.to_string()));
    out
}

fn socket_cmd(path: &std::path::Path, cmd: &str) -> String {
    let mut s = std::os::unix::net::UnixStream::connect(path).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(format!("{cmd}\n").as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

#[test]
fn httplog_lines_reach_a_tcp_syslog_server_through_a_ring_and_forwarding_resumes() {
    let s1 = HttpBackend::start("s1");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let syslog = listener.local_addr().unwrap();
    let (tx, rx) = channel();
    let receiver = Syslog::start(listener, tx.clone());
    let proxy = Proxy::new(RAMPART).listener("fe").backend("s1", s1.addr()).config(&config(syslog)).start().unwrap();
    let fe = proxy.addr("fe");

    get(fe, "/first");
    let msg = wait_for(&rx, "/first");
    let words: Vec<&str> = msg.split(' ').collect();
    // <local0.info>1 DATE host tag pid msgid sd, then the httplog line
    assert_eq!(words[0], "<134>1", "{msg}");
    assert!(words[1].starts_with("20") && words[1].contains('T'), "an ISO date: {msg}");
    assert_eq!(&words[2..4], ["-", "px"], "{msg}");
    assert!(words[4].parse::<u32>().is_ok(), "the pid: {msg}");
    assert_eq!(&words[5..7], ["-", "-"], "{msg}");
    assert!(words[7].starts_with("127.0.0.1:"), "{msg}");
    assert_eq!(&words[9..11], ["fe", "be/s1"], "{msg}");
    assert!(msg.ends_with(" \"GET /first HTTP/1.1\""), "{msg}");

    // the receiver goes away: lines wait in the ring, then follow on the new connection
    receiver.kill();
    std::thread::sleep(Duration::from_millis(300));
    get(fe, "/during");
    let listener = TcpListener::bind(syslog).expect("the receiver's port again");
    let receiver = Syslog::start(listener, tx);
    let during = wait_for(&rx, "/during");
    assert!(during.starts_with("<134>1 "), "{during}");
    get(fe, "/after");
    wait_for(&rx, "/after");

    // the stats socket: the list of sinks, then the ring's lines
    let sock = proxy.dir().join("admin.sock");
    let list = socket_cmd(&sock, "show events");
    assert!(list.contains("    r          : type=buffer, 0 dropped, My local buffer\n"), "{list}");
    let lines = socket_cmd(&sock, "show events r");
    let paths: Vec<&str> = ["/first", "/during", "/after"].into_iter().filter(|p| lines.contains(p)).collect();
    assert_eq!(paths, ["/first", "/during", "/after"], "{lines}");
    assert!(lines.lines().filter(|l| !l.is_empty()).all(|l| l.starts_with("<134>1 ")), "{lines}");
    receiver.kill();
}

/// The frames the proxy sent, reduced to what must match.
#[derive(Debug, Clone, PartialEq)]
struct Frames(Vec<Vec<String>>);

impl Normalize for Frames {
    fn normalize(&mut self, _: &Normalizer) {}
}

#[test]
fn ring_frames_match_haproxys() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let syslog = listener.local_addr().unwrap();
    let (tx, rx) = channel();
    let receiver = Syslog::start(listener, tx);
    let diff =
        Differential::new(RAMPART).listener("fe").backend("s1", || HttpBackend::start("s1")).config(&config(syslog));
    let cmp = diff.run(|proxy| {
        while rx.try_recv().is_ok() {}
        get(proxy.addr("fe"), "/diff");
        Frames(vec![fields(&wait_for(&rx, "/diff"))])
    });
    receiver.kill();
    let Some(cmp) = cmp else { return };
    assert_eq!(cmp.rampart.client, cmp.haproxy.client);
    assert_eq!(cmp.haproxy.client.0[0][0], "<134>1", "{:?}", cmp.haproxy.client);
}

#[test]
fn default_framing_is_a_line_feed_after_each_line_as_haproxy_26() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let syslog = listener.local_addr().unwrap();
    let (tx, rx) = channel();
    let receiver = Syslog::framed(listener, tx, false);
    let diff = Differential::new(RAMPART)
        .listener("fe")
        .backend("s1", || HttpBackend::start("s1"))
        .config(&config_framed(syslog, ""));
    let cmp = diff.run(|proxy| {
        while rx.try_recv().is_ok() {}
        get(proxy.addr("fe"), "/lf");
        Frames(vec![fields(&wait_for(&rx, "/lf"))])
    });
    receiver.kill();
    let Some(cmp) = cmp else { return };
    assert_eq!(cmp.rampart.client, cmp.haproxy.client);
    assert_eq!(cmp.haproxy.client.0[0][0], "<134>1", "{:?}", cmp.haproxy.client);
}

/// The text of an alert or warning line after its location (`parsing [f:l] : `,
/// `[f:l] : ` or none). COMPAT: the level is not compared: HAProxy prints the
/// too-small `size` as a warning yet fails the load; rampart makes it an alert.
fn message(line: &str) -> String {
    let text = line.split_once(" : config : ").map_or(line, |(_, m)| m);
    let text = text.strip_prefix("parsing ").unwrap_or(text);
    // (HAProxy writes `]: ` before some timer messages)
    match text.strip_prefix('[').and_then(|t| t.split_once("] : ").or_else(|| t.split_once("]: "))) {
        Some((_, m)) => m.to_owned(),
        None => text.to_owned(),
    }
}

#[test]
fn ring_section_errors_read_as_haproxys() {
    let cfg = "ring r\n  size 0\n  format xx\n  description\n  timeout connect\n  timeout server 10x\n\
               \x20 maxlen 0\n  foo\n  server a 127.0.0.1:1 log-proto nope\n  server b 127.0.0.1:1 bogus\n\
               ring r\nring a/b\nring buf0\nring s\n  size 4096\n";
    let Some((h, r)) = Differential::new(RAMPART).config(cfg).check() else { return };
    let texts = |o: &rampart_testkit::CheckOutput| -> Vec<String> {
        o.diagnostics().iter().map(|l| message(l.lines().next().unwrap_or(""))).collect()
    };
    assert_eq!(texts(&r), texts(&h), "\n=== haproxy ===\n{}\n=== rampart ===\n{}", h.stderr, r.stderr);
    assert_ne!(r.code, 0);
}
