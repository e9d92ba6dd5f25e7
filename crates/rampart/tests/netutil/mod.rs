//! Helpers shared by the black-box TCP, listener and process tests (`tcp_*.rs`,
//! `listener_*.rs`, `process_*.rs`): which binary runs, TCP-mode configurations with
//! short timeouts, and probes that tell whether a proxy serves, refuses or holds a
//! connection.
//!
//! Every test runs `rampart` (`CARGO_BIN_EXE_rampart`). Setting `RAMPART_TEST_BINARY`
//! runs the same tests against another binary, e.g. `RAMPART_TEST_BINARY=/usr/sbin/haproxy`
//! to check that a test asserts HAProxy's behaviour and not only rampart's.

// Each test file uses a different part of this module.
#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rampart_testkit::Proxy;

/// The binary under test: rampart, unless `RAMPART_TEST_BINARY`
/// ([`rampart_testkit::BINARY_ENV`]) names another one.
pub fn binary() -> PathBuf {
    rampart_testkit::binary_under_test(env!("CARGO_BIN_EXE_rampart"))
}

/// Whether the binary under test is HAProxy (for the rare place where only the wording
/// of a message differs).
pub fn testing_haproxy() -> bool {
    binary().file_name().is_some_and(|n| n.to_string_lossy().contains("haproxy"))
}

/// A [`Proxy`] of the binary under test.
pub fn proxy() -> Proxy {
    Proxy::new(binary())
}

/// `defaults` for TCP mode with the given extra lines (each already indented), and
/// timeouts short enough for tests but long enough not to fire by accident.
pub fn tcp_defaults(extra: &str) -> String {
    format!("defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n{extra}")
}

/// A TCP `listen fe1` on `fd@${fe1}` forwarding to server `s1`, under `tcp_defaults`.
pub fn tcp_listen_s1(extra_defaults: &str) -> String {
    format!("{}listen fe1\n  bind fd@${{fe1}}\n  server s1 ${{s1_addr}}:${{s1_port}}\n", tcp_defaults(extra_defaults))
}

/// A port nothing listens on right now (bound then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("free port")
}

/// Connects with a read timeout of `read_timeout`.
pub fn connect(addr: SocketAddr, read_timeout: Duration) -> std::io::Result<TcpStream> {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(read_timeout))?;
    s.set_nodelay(true)?;
    Ok(s)
}

/// What happened to a probe connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// The connection was refused (nothing listens).
    Refused,
    /// The echo came back.
    Echoed,
    /// Connected, but the echo did not come within the wait.
    Held,
    /// Connected, then closed (or reset) without the echo.
    Closed,
}

/// Sends a line to `addr` (an echo service behind a proxy) and says what happened
/// within `wait`.
pub fn probe_echo(addr: SocketAddr, wait: Duration) -> Probe {
    let mut s = match connect(addr, wait) {
        Ok(s) => s,
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => return Probe::Refused,
        // Accepted by the kernel, then reset: a listener closing or pausing meanwhile.
        Err(e) if e.kind() == ErrorKind::ConnectionReset => return Probe::Closed,
        Err(e) => panic!("connect {addr}: {e}"),
    };
    if s.write_all(b"probe\n").is_err() {
        return Probe::Closed;
    }
    match read_exact_within(&mut s, 6, wait) {
        Ok(got) if got == b"probe\n" => Probe::Echoed,
        Ok(got) => panic!("unexpected echo {got:?}"),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Probe::Held,
        Err(_) => Probe::Closed,
    }
}

/// Whether a connection to `addr` is refused (nothing listens there any more).
pub fn refused(addr: SocketAddr) -> bool {
    match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
        Ok(_) => false,
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => true,
        // Accepted by the kernel, then reset as the listener closed: not refused yet.
        Err(e) if e.kind() == ErrorKind::ConnectionReset => false,
        Err(e) => panic!("connect {addr}: {e}"),
    }
}

/// An open connection through the proxy to an echo server, checked to work.
pub fn echo_session(addr: SocketAddr) -> TcpStream {
    let mut s = connect(addr, Duration::from_secs(5)).expect("connect");
    s.write_all(b"hello\n").expect("send");
    assert_eq!(read_exact_within(&mut s, 6, Duration::from_secs(5)).expect("echo"), b"hello\n");
    s
}

/// Reads exactly `n` bytes, giving up after `wait`; `UnexpectedEof` if the peer closed.
pub fn read_exact_within(s: &mut TcpStream, n: usize, wait: Duration) -> std::io::Result<Vec<u8>> {
    let deadline = Instant::now() + wait;
    let mut out = vec![0u8; n];
    let mut got = 0;
    while got < n {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        s.set_read_timeout(Some(left))?;
        match s.read(&mut out[got..]) {
            Ok(0) => return Err(ErrorKind::UnexpectedEof.into()),
            Ok(k) => got += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// How a connection ended, seen by one of its ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// End of stream (FIN).
    Eof,
    /// Reset by the peer.
    Reset,
    /// Nothing within the wait: still open.
    Open,
}

/// Waits up to `wait` for the peer to close, discarding any data; returns how it ended
/// and when (time since the call).
pub fn wait_end(s: &mut TcpStream, wait: Duration) -> (End, Duration) {
    let start = Instant::now();
    let deadline = start + wait;
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            return (End::Open, start.elapsed());
        }
        match s.read(&mut buf) {
            Ok(0) => return (End::Eof, start.elapsed()),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return (End::Open, start.elapsed())
            }
            Err(_) => return (End::Reset, start.elapsed()),
        }
    }
}

/// Accepts one connection on `listener` within `wait` (the listener is made
/// non-blocking for the wait).
pub fn accept_within(listener: &TcpListener, wait: Duration) -> Option<TcpStream> {
    listener.set_nonblocking(true).ok()?;
    let deadline = Instant::now() + wait;
    loop {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).ok()?;
                return Some(s);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => return None,
        }
    }
}

/// A server that accepts connections and keeps them open, silent, until dropped: the
/// test reads and writes on the accepted sockets itself.
pub struct ManualServer {
    pub listener: TcpListener,
}

impl ManualServer {
    pub fn start() -> ManualServer {
        ManualServer { listener: TcpListener::bind("127.0.0.1:0").expect("bind") }
    }

    pub fn addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("local_addr")
    }

    /// The next connection from the proxy, within 5 s.
    pub fn accept(&self) -> TcpStream {
        let s = accept_within(&self.listener, Duration::from_secs(5)).expect("the proxy connects to the server");
        s.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        s
    }
}

/// Writes `data` then half-closes, ignoring errors (the peer may be gone).
pub fn send_and_shut(s: &mut TcpStream, data: &[u8]) {
    let _ = s.write_all(data);
    let _ = s.shutdown(Shutdown::Write);
}

/// Waits for `pid` to exit (it must be our child or already reaped elsewhere: this only
/// watches /proc); true if it did within `wait`.
pub fn wait_pid_gone(pid: i32, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    loop {
        let gone = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            // A zombie is gone as far as serving is concerned, but only once all
            // its threads are: the leader turns Z while the others may still be
            // exiting, holding the shared fd table (and the listening sockets).
            Ok(stat) => {
                stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z'))
                    && std::fs::read_dir(format!("/proc/{pid}/task")).map_or(true, |d| d.count() <= 1)
            }
        };
        if gone {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A scratch directory under the system temp dir, removed on drop.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        use std::sync::atomic::{AtomicU32, Ordering};
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("rampart-it-{name}-{}-{seq}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("write file");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
