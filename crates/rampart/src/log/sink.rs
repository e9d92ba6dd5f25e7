//! Sending log lines: each target's syslog header, then a send that never blocks an
//! event loop. UDP and unix datagram sockets are non-blocking (a full socket buffer or
//! an absent receiver drops the line); stdout and stderr go through a bounded queue
//! that one writer thread drains (a full queue drops the line). Dropped lines are
//! counted ([`dropped_logs`], `DroppedLogs` of `show info`).
//! HAProxy counterpart: `__send_log()`, `update_log_hdr()` (src/log.c); its stdout
//! writes are non-blocking too.

use std::io::Write as _;
use std::net::UdpSocket;
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use super::target::{Dest, HdrFormat, Target};
use super::{batch, date};

/// Lines dropped because a target could not take them (process-wide).
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Lines dropped since the start: a full socket buffer, an absent receiver, a full
/// stdout/stderr queue (`DroppedLogs` in `show info`).
pub fn dropped_logs() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

fn drop_line() {
    drop_lines(1);
}

/// Counts `n` lines as dropped.
pub(super) fn drop_lines(n: u64) {
    DROPPED.fetch_add(n, Ordering::Relaxed);
}

/// Lines waiting for the stdout (and for the stderr) writer, at most.
const STD_QUEUE: u64 = 4096;

/// A stdout/stderr writer's queue: buffers of complete lines, and how many lines wait
/// in it (the bound is in lines, whatever the number of buffers).
#[derive(Debug)]
struct StdQueue {
    tx: SyncSender<(Vec<u8>, u64)>,
    waiting: AtomicU64,
}

impl StdQueue {
    /// Queues `n` lines in one buffer; `false` (nothing queued) when they would pass
    /// the bound or the writer is gone.
    fn push(&self, lines: Vec<u8>, n: u64) -> bool {
        if self.waiting.fetch_add(n, Ordering::Relaxed) + n > STD_QUEUE {
            self.waiting.fetch_sub(n, Ordering::Relaxed);
            return false;
        }
        if self.tx.try_send((lines, n)).is_err() {
            self.waiting.fetch_sub(n, Ordering::Relaxed);
            return false;
        }
        true
    }
}

/// The socket or queue of a target.
#[derive(Debug)]
enum Out {
    Udp(UdpSocket),
    Unix(UnixOut),
    Std(&'static StdQueue),
    /// A ring, and the header its lines get: the target's facility with the ring's
    /// format (HAProxy ignores a `log ring@` line's own `format`).
    Ring(Arc<super::ring::Ring>, Box<Target>),
}

/// A unix datagram target. Its path is looked up at the first line, in the worker: under
/// `chroot`, inside it, as HAProxy sends each line to the path (`/dev/log` is then
/// `<chroot>/dev/log`); the runtime is built before the chroot.
#[derive(Debug)]
struct UnixOut {
    sock: UnixDatagram,
    path: std::path::PathBuf,
    /// Whether the socket is connected, decided at the first line. COMPAT: as HAProxy,
    /// a path where nobody listens yet (no syslog daemon) is not an error: lines are
    /// then sent to the path and dropped while nobody listens.
    connected: OnceLock<bool>,
}

impl UnixOut {
    fn connected(&self) -> bool {
        *self.connected.get_or_init(|| self.sock.connect(&self.path).is_ok())
    }
}

/// A target, opened.
#[derive(Debug)]
pub struct Sink {
    pub target: Target,
    out: Out,
    /// Lines seen, for `sample`.
    seen: AtomicU64,
}

/// What every line's header says about the process: `log-tag`, pid, host name.
#[derive(Debug, Clone)]
pub struct Ident {
    pub tag: Arc<str>,
    pub pid: u32,
    /// `log-send-hostname`.
    pub host: Option<Arc<str>>,
}

impl Ident {
    /// The program name (HAProxy's default tag), the pid, and `log-send-hostname`.
    pub fn new(tag: Option<&str>, send_hostname: Option<&str>) -> Ident {
        let prog = std::env::args()
            .next()
            .and_then(|a| std::path::Path::new(&a).file_name().map(|f| f.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "rampart".into());
        let host =
            send_hostname.map(|h| if h.is_empty() { crate::sample::fetch::internal::hostname() } else { h.to_owned() });
        Ident { tag: tag.unwrap_or(&prog).into(), pid: std::process::id(), host: host.map(Into::into) }
    }

    /// The same with another tag (a proxy's `log-tag`).
    pub fn with_tag(&self, tag: Option<&str>) -> Ident {
        Ident { tag: tag.map_or_else(|| self.tag.clone(), Into::into), ..self.clone() }
    }
}

/// Opens a target. `Err`: the alert to print (an unopenable socket).
pub fn open(target: Target) -> Result<Sink, String> {
    let name = target.name.clone();
    let fail = |e: std::io::Error| format!("log : cannot open log target '{name}': {e}");
    let out = match &target.dest {
        Dest::Udp(addr) => {
            let local: std::net::SocketAddr =
                if addr.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
            let sock = UdpSocket::bind(local).map_err(fail)?;
            sock.connect(addr).map_err(fail)?;
            sock.set_nonblocking(true).map_err(fail)?;
            Out::Udp(sock)
        }
        Dest::Unix(path) => {
            let sock = UnixDatagram::unbound().map_err(fail)?;
            sock.set_nonblocking(true).map_err(fail)?;
            Out::Unix(UnixOut { sock, path: path.clone(), connected: OnceLock::new() })
        }
        Dest::Stdout => Out::Std(std_queue(true)),
        Dest::Stderr => Out::Std(std_queue(false)),
        Dest::Ring(ring) => return Err(format!("log : ring '{ring}' is opened by name only")),
    };
    Ok(Sink { target, out, seen: AtomicU64::new(0) })
}

/// A `log ring@<name>` target writing to `ring`.
pub fn open_ring(target: Target, ring: Arc<super::ring::Ring>) -> Sink {
    let hdr = Box::new(Target { format: ring.format, explicit: true, sample: None, ..target.clone() });
    Sink { target, out: Out::Ring(ring, hdr), seen: AtomicU64::new(0) }
}

/// The queue of the stdout (or stderr) writer thread, started on first use.
fn std_queue(stdout: bool) -> &'static StdQueue {
    static OUT: OnceLock<StdQueue> = OnceLock::new();
    static ERR: OnceLock<StdQueue> = OnceLock::new();
    let cell = if stdout { &OUT } else { &ERR };
    cell.get_or_init(|| {
        let (tx, rx) = sync_channel::<(Vec<u8>, u64)>(STD_QUEUE as usize);
        let spawned = std::thread::Builder::new().name("rampart-log".into()).spawn(move || {
            for (lines, n) in rx {
                let r = if stdout {
                    std::io::stdout().lock().write_all(&lines)
                } else {
                    std::io::stderr().lock().write_all(&lines)
                };
                if let Some(q) = cell.get() {
                    q.waiting.fetch_sub(n, Ordering::Relaxed);
                }
                if r.is_err() {
                    drop_lines(n);
                }
            }
        });
        if spawned.is_err() {
            // no writer: every line is dropped (the receiver went with the closure)
            drop_line();
        }
        StdQueue { tx, waiting: AtomicU64::new(0) }
    })
}

impl Sink {
    /// The level a line at `level` is sent with, or `None` when this target does not
    /// take it (a level filter, `sample`).
    pub(super) fn admit(&self, level: u8) -> Option<u8> {
        let t = &self.target;
        if level > t.level {
            return None;
        }
        if let Some(s) = &t.sample {
            if !s.keeps(self.seen.fetch_add(1, Ordering::Relaxed)) {
                return None;
            }
        }
        Some(level.max(t.minlevel))
    }

    /// Appends the line of `msg` (no trailing newline) at `level` as this target sends
    /// it: header, message cut to `len`, newline.
    fn write_line(&self, ident: &Ident, level: u8, msg: &[u8], sd: &[u8], now: SystemTime, out: &mut Vec<u8>) {
        let start = out.len();
        header(out, &self.target, ident, level, sd, now);
        let room = self.target.maxlen.saturating_sub(out.len() - start + 1);
        out.extend_from_slice(&msg[..msg.len().min(room)]);
        out.push(b'\n');
    }

    /// Sends one line that `write` appends to a buffer: into this thread's batch when
    /// the thread batches and the target can wait there, else at once. For lines whose
    /// header is not [`header`]'s (`log-forward`'s relayed messages).
    pub fn send_with(self: &Arc<Self>, write: impl Fn(&mut Vec<u8>)) {
        if self.batchable() && batch::push(self, &write) {
            return;
        }
        SCRATCH.with(|b| {
            let Ok(mut buf) = b.try_borrow_mut() else { return };
            buf.clear();
            write(&mut buf);
            self.send_now(&buf);
        });
    }

    /// The ring of a `log ring@` target, with the target whose format is the ring's
    /// (what the headers of its lines follow).
    pub(super) fn ring_hdr(&self) -> Option<(&Arc<super::ring::Ring>, &Target)> {
        match &self.out {
            Out::Ring(r, hdr) => Some((r, hdr)),
            _ => None,
        }
    }

    /// The ring of a `log ring@` target.
    pub fn ring(&self) -> Option<&Arc<super::ring::Ring>> {
        match &self.out {
            Out::Ring(r, _) => Some(r),
            _ => None,
        }
    }

    /// The connected datagram socket lines can be batched on ([`super::batch`]).
    pub(super) fn batch_fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd as _;
        match &self.out {
            Out::Udp(s) => Some(s.as_raw_fd()),
            Out::Unix(u) if u.connected() => Some(u.sock.as_raw_fd()),
            Out::Unix(_) | Out::Std(_) | Out::Ring(..) => None,
        }
    }

    /// Whether lines to this target can wait in the thread's batch: datagram sockets
    /// that need no address per line, and the stdout/stderr queue.
    pub(super) fn batchable(&self) -> bool {
        match &self.out {
            Out::Unix(u) => u.connected(),
            Out::Ring(..) => false,
            Out::Udp(_) | Out::Std(_) => true,
        }
    }

    /// Hands `lines` (complete lines, `n` of them) to the stdout/stderr writer as one
    /// write; a full queue (4096 lines waiting) drops them all. `false`: not a stdout/stderr target.
    pub(super) fn send_std_batch(&self, lines: Vec<u8>, n: u64) -> bool {
        let Out::Std(q) = &self.out else { return false };
        if !q.push(lines, n) {
            drop_lines(n);
        }
        true
    }

    /// Sends one complete line now; a line that cannot go is counted as dropped.
    pub(super) fn send_now(&self, line: &[u8]) {
        let sent = match &self.out {
            Out::Udp(s) => s.send(line).is_ok(),
            Out::Unix(u) if u.connected() => u.sock.send(line).is_ok(),
            Out::Unix(u) => u.sock.send_to(line, &u.path).is_ok(),
            Out::Std(q) => q.push(line.to_vec(), 1),
            // (a ring counts its own losses, as HAProxy's sinks do)
            Out::Ring(r, _) => {
                r.write_raw(line.strip_suffix(b"\n").unwrap_or(line));
                true
            }
        };
        if !sent {
            drop_line();
        }
    }
}

/// Writes the syslog header of `t`'s format for a line at `level`; `sd` is the
/// structured data of an RFC 5424 header (`log-format-sd`; `-` when empty).
pub fn header(out: &mut Vec<u8>, t: &Target, ident: &Ident, level: u8, sd: &[u8], now: SystemTime) {
    let (secs, usec) = date::split(now);
    let pri = u32::from(t.facility) * 8 + u32::from(level);
    let pid = ident.pid;
    match t.format {
        HdrFormat::Rfc3164 | HdrFormat::Local => {
            out.push(b'<');
            super::format::decimal(out, pri.into());
            out.push(b'>');
            date::syslog(out, secs);
            out.push(b' ');
            let host = match (&ident.host, t.format, t.explicit) {
                (_, HdrFormat::Local, _) => None,
                (Some(h), _, _) => Some(&**h),
                (None, _, true) => Some("localhost"),
                (None, _, false) => None,
            };
            if let Some(h) = host {
                out.extend_from_slice(h.as_bytes());
                out.push(b' ');
            }
            out.extend_from_slice(ident.tag.as_bytes());
            out.push(b'[');
            super::format::decimal(out, pid.into());
            out.extend_from_slice(b"]: ");
        }
        HdrFormat::Rfc5424 => {
            let _ = write!(out, "<{pri}>1 ");
            date::iso(out, secs, usec);
            let host = ident.host.as_deref().unwrap_or("-");
            let _ = write!(out, " {host} {} {pid} - ", ident.tag);
            // as HAProxy, the structured data without its trailing spaces
            let end = sd.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1);
            out.extend_from_slice(if end == 0 { b"-" } else { &sd[..end] });
            out.push(b' ');
        }
        HdrFormat::Priority => {
            let _ = write!(out, "<{pri}>");
        }
        HdrFormat::Short => {
            let _ = write!(out, "<{level}>");
        }
        HdrFormat::Timed => {
            let _ = write!(out, "<{level}>");
            date::iso(out, secs, usec);
            out.push(b' ');
        }
        HdrFormat::Iso => {
            date::iso(out, secs, usec);
            out.push(b' ');
        }
        HdrFormat::Raw => {}
    }
}

/// The targets of a proxy (or of `global`), with the identity their headers carry.
#[derive(Debug, Clone)]
pub struct Loggers {
    pub sinks: Vec<Arc<Sink>>,
    pub ident: Ident,
}

thread_local! {
    /// Scratch for headers: lines are built without allocating once warm.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Loggers {
    pub fn is_empty(&self) -> bool {
        self.sinks.is_empty()
    }

    /// Sends `msg` to every target: into this thread's batch for a datagram socket
    /// when the thread batches ([`super::batch`]), else at once.
    pub fn send(&self, level: u8, msg: &[u8]) {
        self.send_sd(level, msg, b"");
    }

    /// [`Loggers::send`] with the structured data of RFC 5424 headers (`log-format-sd`).
    pub fn send_sd(&self, level: u8, msg: &[u8], sd: &[u8]) {
        self.send_sd_at(level, msg, sd, SystemTime::now());
    }

    /// [`Loggers::send_sd`] with the date of the headers given: a stream's line is
    /// dated at its end, which the stream already read ([`super::date::wall`]).
    pub fn send_sd_at(&self, level: u8, msg: &[u8], sd: &[u8], now: SystemTime) {
        if self.sinks.is_empty() {
            return;
        }
        for s in &self.sinks {
            let Some(lvl) = s.admit(level) else { continue };
            if let Out::Ring(ring, hdr) = &s.out {
                // as HAProxy: the message cut to the target's `len`, then the ring's
                // header, the whole cut to the ring's `maxlen`
                ring.log(hdr, &self.ident, lvl, &msg[..msg.len().min(s.target.maxlen)], sd, now);
                continue;
            }
            if s.batchable() && batch::push(s, |out| s.write_line(&self.ident, lvl, msg, sd, now, out)) {
                continue;
            }
            SCRATCH.with(|b| {
                let Ok(mut buf) = b.try_borrow_mut() else { return };
                buf.clear();
                s.write_line(&self.ident, lvl, msg, sd, now, &mut buf);
                s.send_now(&buf);
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::target;

    fn tgt(line: &str) -> Target {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        target::parse(&args).unwrap()
    }

    fn hdr(line: &str, host: Option<&str>) -> String {
        hdr_sd(line, host, b"")
    }

    fn hdr_sd(line: &str, host: Option<&str>, sd: &[u8]) -> String {
        let ident = Ident { tag: "haproxy".into(), pid: 42, host: host.map(Into::into) };
        let mut out = Vec::new();
        // 2009-02-06 12:14:14.000123 UTC
        let now = std::time::UNIX_EPOCH + std::time::Duration::from_micros(1_233_922_454_000_123);
        header(&mut out, &tgt(line), &ident, 6, sd, now);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn headers_of_each_format() {
        if date::at(1_233_922_454, true).offset != 0 {
            return; // the expected texts are in UTC
        }
        assert_eq!(hdr("127.0.0.1 local0", None), "<134>Feb  6 12:14:14 haproxy[42]: ");
        assert_eq!(hdr("127.0.0.1 local0", Some("vm")), "<134>Feb  6 12:14:14 vm haproxy[42]: ");
        assert_eq!(hdr("127.0.0.1 format rfc3164 user", None), "<14>Feb  6 12:14:14 localhost haproxy[42]: ");
        assert_eq!(hdr("127.0.0.1 format local local7", Some("vm")), "<190>Feb  6 12:14:14 haproxy[42]: ");
        assert_eq!(
            hdr("127.0.0.1 format rfc5424 local1", None),
            "<142>1 2009-02-06T12:14:14.000123+00:00 - haproxy 42 - - "
        );
        assert_eq!(hdr("127.0.0.1 format short local2", None), "<6>");
        assert_eq!(hdr("127.0.0.1 format timed local3", None), "<6>2009-02-06T12:14:14.000123+00:00 ");
        assert_eq!(hdr("127.0.0.1 format iso local4", None), "2009-02-06T12:14:14.000123+00:00 ");
        assert_eq!(hdr("127.0.0.1 format priority local5", None), "<174>");
        assert_eq!(hdr("stdout local0", None), "");
        // `log-format-sd`: the structured data, its trailing spaces cut; only RFC 5424 has it
        assert_eq!(
            hdr_sd("127.0.0.1 format rfc5424 local1", None, b"[x@1 a=\"b\"]  "),
            "<142>1 2009-02-06T12:14:14.000123+00:00 - haproxy 42 - [x@1 a=\"b\"] "
        );
        assert_eq!(
            hdr_sd("127.0.0.1 format rfc5424 local1", None, b"  "),
            "<142>1 2009-02-06T12:14:14.000123+00:00 - haproxy 42 - - "
        );
        assert_eq!(
            hdr_sd("127.0.0.1 format rfc3164 user", None, b"[x]"),
            "<14>Feb  6 12:14:14 localhost haproxy[42]: "
        );
    }

    #[test]
    fn udp_lines_arrive_cut_to_len_and_levels_filter() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(2))).unwrap();
        let addr = rx.local_addr().unwrap();
        let sink = open(tgt(&format!("{addr} len 80 format raw local0 notice"))).unwrap();
        let ident = Ident { tag: "t".into(), pid: 1, host: None };
        let loggers = Loggers { sinks: vec![Arc::new(sink)], ident };
        loggers.send(6, b"info is above notice: not sent");
        loggers.send(3, &[b'x'; 200]);
        let mut got = [0u8; 512];
        let n = rx.recv(&mut got).unwrap();
        assert_eq!(n, 80);
        assert_eq!(&got[..n], [&[b'x'; 79][..], b"\n"].concat());
    }

    #[test]
    fn a_receiver_that_does_not_read_costs_dropped_lines_not_a_block() {
        let dir = std::env::temp_dir().join(format!("rampart-log-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("dgram.sock");
        let _ = std::fs::remove_file(&path);
        let rx = UnixDatagram::bind(&path).unwrap();
        let sink = open(tgt(&format!("unix@{} len 65535 format raw local0", path.display()))).unwrap();
        let loggers = Loggers { sinks: vec![Arc::new(sink)], ident: Ident { tag: "t".into(), pid: 1, host: None } };
        let before = dropped_logs();
        let big = vec![b'y'; 8000];
        let start = std::time::Instant::now();
        for _ in 0..2000 {
            loggers.send(6, &big);
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        assert!(dropped_logs() > before, "the receiver's queue filled up");
        let mut got = vec![0u8; 10_000];
        assert_eq!(rx.recv(&mut got).unwrap(), 8001, "the first lines arrived whole");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn the_stdout_queue_is_bounded_in_lines_not_in_buffers() {
        let (tx, _rx) = sync_channel(STD_QUEUE as usize);
        let q = StdQueue { tx, waiting: AtomicU64::new(0) };
        assert!(q.push(b"a\n".repeat(4000), 4000));
        assert!(!q.push(b"b\n".repeat(100), 100), "4100 lines would wait");
        assert!(q.push(b"c\n".repeat(96), 96));
        assert!(!q.push(b"d\n".to_vec(), 1));
        assert_eq!(q.waiting.load(Ordering::Relaxed), STD_QUEUE);
    }

    #[test]
    fn an_absent_unix_socket_is_not_an_error_at_startup() {
        let sink = open(tgt("/nonexistent/rampart/log.sock local0")).unwrap();
        let loggers = Loggers { sinks: vec![Arc::new(sink)], ident: Ident { tag: "t".into(), pid: 1, host: None } };
        let before = dropped_logs();
        loggers.send(6, b"lost");
        assert!(dropped_logs() > before);
    }

    #[test]
    fn a_unix_path_is_looked_up_at_the_first_line_not_when_opened() {
        // as under `chroot`: the runtime is built before it, lines are sent after
        let dir = std::env::temp_dir().join(format!("rampart-log-late-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("late.sock");
        let _ = std::fs::remove_file(&path);
        let sink = open(tgt(&format!("{} format raw local0", path.display()))).unwrap();
        let rx = UnixDatagram::bind(&path).unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(2))).unwrap();
        sink.send_now(b"first\n");
        assert!(sink.batch_fd().is_some(), "connected at the first line");
        let mut got = [0u8; 64];
        let n = rx.recv(&mut got).unwrap();
        assert_eq!(&got[..n], b"first\n");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
