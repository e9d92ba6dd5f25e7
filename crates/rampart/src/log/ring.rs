//! Rings: named, bounded in-memory buffers of complete log lines (`ring` sections, and
//! HAProxy's built-in `buf0`), written by `log ring@<name>` targets from any worker
//! thread and read by the ring's forwarders (`ring_fwd`) and by `show events`.
//!
//! The buffer is accounted in bytes as HAProxy's ring is (each line costs its length,
//! the bytes of its varint-encoded length and one reader-count byte; one more byte
//! marks the tail), so that a `size` keeps as many lines here as there. A full ring
//! drops its oldest lines, except one a forwarder has not sent yet: then the new line
//! is refused and counted, and "N events dropped" is written before the next line that
//! fits (HAProxy's `sink_write()` / `sink_announce_dropped()`). Those losses are the
//! ring's own counter (`show events`), not `DroppedLogs`, as in HAProxy.
//!
//! HAProxy counterpart: src/ring.c (`ring_write()`), src/sink.c (`sink_write()`, the
//! `show events` command), include/haproxy/sink.h.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use rampart_cfg::model::{LogProto, Ring as RingCfg};
use tokio::sync::Notify;

use super::sink::{header, Ident};
use super::target::{level, HdrFormat, Target};

// PERF: one short lock per line written (the copy of an already formatted line), as
// HAProxy's ring takes its write lock; readers hold it only to copy a batch out.
#[allow(clippy::disallowed_types)]
type Lock<T> = std::sync::Mutex<T>;

/// HAProxy's built-in ring: `log ring@buf0` works without a `ring` section.
const BUF0_SIZE: usize = 1_048_576;

/// A forward server of a ring (`server` line).
#[derive(Debug, Clone)]
pub struct Forward {
    pub name: String,
    pub addr: std::net::SocketAddr,
    pub proto: LogProto,
    /// `send-proxy` (1), `send-proxy-v2` (2), or none (0).
    pub send_proxy: u8,
    /// `ssl`: the client configuration of the handshake that follows the connection
    /// (and its PROXY header); `None`: plain TCP.
    pub tls: Option<Arc<rustls::ClientConfig>>,
}

/// One ring.
#[derive(Debug)]
pub struct Ring {
    pub name: String,
    pub description: String,
    /// The header written before each line (`format`).
    pub format: HdrFormat,
    /// Lines are cut to this many bytes, header included.
    pub maxlen: usize,
    /// The buffer's bytes (HAProxy's accounting, see the module docs).
    pub size: usize,
    pub timeout_connect: Option<Duration>,
    pub timeout_server: Option<Duration>,
    /// One forwarder each, reader `i` of the buffer being server `i`.
    pub servers: Vec<Forward>,
    state: Lock<State>,
    /// Wakes reader `i` when a line arrives while it waits.
    wake: Vec<Notify>,
}

/// The lines and the readers' positions. Line `first` is the oldest kept; positions
/// are line numbers, never below `first`.
#[derive(Debug, Default)]
struct State {
    /// The kept lines' bytes, oldest first.
    data: VecDeque<u8>,
    /// Each kept line's length, oldest first.
    lens: VecDeque<u32>,
    first: u64,
    /// Bytes used in HAProxy's accounting (the tail marker included).
    used: usize,
    /// Per forwarder: the next line to send; `None` until its first connection (it
    /// then starts at the oldest kept line, as HAProxy's forwarder does).
    readers: Vec<Option<u64>>,
    /// Per forwarder: it waits for a line and must be woken.
    waiting: Vec<bool>,
    /// Lines refused since the last "events dropped" line went in.
    dropped: u64,
    /// Every line refused since the start (`show events`).
    dropped_total: u64,
}

/// Bytes of HAProxy's varint encoding of `v` (one byte below 240, then 7 bits more
/// per byte after a first one of 4).
fn varint_len(v: usize) -> usize {
    let mut len = 1;
    if v >= 240 {
        let mut v = (v - 240) >> 4;
        loop {
            len += 1;
            if v < 128 {
                break;
            }
            v = (v - 128) >> 7;
        }
    }
    len
}

/// What a line of `len` bytes costs in the buffer.
fn cost(len: usize) -> usize {
    varint_len(len) + len + 1
}

impl State {
    fn new(readers: usize) -> State {
        State { used: 1, readers: vec![None; readers], waiting: vec![false; readers], ..State::default() }
    }

    /// Appends `line`, dropping the oldest lines no reader still needs. `false`: the
    /// line cannot be kept (larger than the ring, or a reader holds the oldest line).
    fn push(&mut self, line: &[u8], size: usize) -> bool {
        let need = cost(line.len());
        if need + 1 > size {
            return false;
        }
        while size - self.used < need {
            let Some(&oldest) = self.lens.front() else { return false };
            if self.readers.contains(&Some(self.first)) {
                return false;
            }
            self.lens.pop_front();
            self.data.drain(..oldest as usize);
            self.used -= cost(oldest as usize);
            self.first += 1;
        }
        self.data.extend(line);
        self.lens.push_back(line.len() as u32);
        self.used += need;
        true
    }

    /// The byte offset in `data` of line number `n` (kept, or the next one).
    ///
    /// PERF: counted back from the end: a forwarder reads near the newest lines, and a
    /// ring of a megabyte holds thousands of them.
    fn offset(&self, n: u64) -> usize {
        let skip = (n - self.first) as usize;
        let after: usize = self.lens.iter().skip(skip).map(|&l| l as usize).sum();
        self.data.len() - after
    }
}

/// Appends bytes `start..start + len` of `d` to `out`.
fn copy_out(d: &VecDeque<u8>, start: usize, len: usize, out: &mut Vec<u8>) {
    let (a, b) = d.as_slices();
    let end = start + len;
    if start < a.len() {
        out.extend_from_slice(&a[start..end.min(a.len())]);
    }
    if end > a.len() {
        out.extend_from_slice(&b[start.saturating_sub(a.len())..end - a.len()]);
    }
}

thread_local! {
    /// The line being written and an "events dropped" line: built without
    /// allocating once warm.
    static LINE: std::cell::RefCell<(Vec<u8>, Vec<u8>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

impl Ring {
    /// The ring of a `ring` section.
    pub fn from_cfg(r: &RingCfg) -> Ring {
        let format = HdrFormat::parse(&r.format).unwrap_or(HdrFormat::Raw);
        let servers: Vec<Forward> = r
            .servers
            .iter()
            .map(|s| Forward {
                name: s.name.clone(),
                addr: s.addr,
                proto: s.log_proto,
                send_proxy: s.send_proxy,
                tls: None,
            })
            .collect();
        let mut ring = Ring::new(&r.name, &r.description, format, r.size, r.maxlen.min(r.size));
        ring.timeout_connect = r.timeout_connect;
        ring.timeout_server = r.timeout_server;
        ring.state = Lock::new(State::new(servers.len()));
        ring.wake = servers.iter().map(|_| Notify::new()).collect();
        ring.servers = servers;
        ring
    }

    /// The ring of a `ring` section, its `server ... ssl` lines with their TLS
    /// configuration (`tls::client::ring_server`); alerts for the ones that cannot
    /// have it.
    pub fn from_cfg_tls(r: &RingCfg, cfg: &rampart_cfg::Config, alerts: &mut Vec<rampart_cfg::Diag>) -> Ring {
        let mut ring = Ring::from_cfg(r);
        for (fwd, s) in ring.servers.iter_mut().zip(&r.servers) {
            let ctx = format!("'server {}/{}' : ", r.name, s.name);
            match crate::tls::client::ring_server(cfg, &s.tls, &ctx) {
                Ok(tls) => fwd.tls = tls,
                Err(msgs) => {
                    let mut spans = std::iter::once(Some(s.span.clone())).chain(std::iter::repeat(None));
                    alerts.extend(msgs.into_iter().map(|m| rampart_cfg::Diag::alert(spans.next().flatten(), m)));
                }
            }
        }
        ring
    }

    /// HAProxy's built-in `buf0` (timed headers, 1 MB; its memory grows with use).
    pub fn buf0() -> Ring {
        Ring::new("buf0", "in-memory ring buffer", HdrFormat::Timed, BUF0_SIZE, 16384)
    }

    /// A ring without forwarders.
    pub fn new(name: &str, description: &str, format: HdrFormat, size: usize, maxlen: usize) -> Ring {
        Ring {
            name: name.to_owned(),
            description: description.to_owned(),
            format,
            // (line lengths are kept as u32)
            maxlen: maxlen.min(u32::MAX as usize),
            size,
            timeout_connect: None,
            timeout_server: None,
            servers: Vec::new(),
            state: Lock::new(State::new(0)),
            wake: Vec::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // a writer that panicked left whole lines: the ring stays usable
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes a log line: the ring's header (`hdr` gives the facility; its format is
    /// the ring's), then `msg`, the whole cut to `maxlen`. Never blocks on a reader:
    /// a line that cannot be kept is counted as dropped.
    pub fn log(&self, hdr: &Target, ident: &Ident, lvl: u8, msg: &[u8], sd: &[u8], now: SystemTime) {
        LINE.with(|b| {
            let Ok(mut b) = b.try_borrow_mut() else { return };
            let (line, note) = &mut *b;
            line.clear();
            header(line, hdr, ident, lvl, sd, now);
            line.extend_from_slice(msg);
            line.truncate(self.maxlen);
            let mut st = self.state();
            if st.dropped > 0 {
                // first say how many went missing, at their place in the sequence
                note.clear();
                header(note, hdr, ident, level::NOTICE, b"", now);
                let n = st.dropped;
                let _ = write!(VecWriter(note), "{n} event{} dropped", if n > 1 { "s" } else { "" });
                note.truncate(self.maxlen);
                if !st.push(note, self.size) {
                    st.dropped += 1;
                    st.dropped_total += 1;
                    return;
                }
                st.dropped = 0;
            }
            if st.push(line, self.size) {
                self.wake_readers(&mut st);
            } else {
                st.dropped += 1;
                st.dropped_total += 1;
            }
        });
    }

    /// Stores one complete line as is (no header, cut to `maxlen`); `false`: dropped.
    pub fn write_raw(&self, line: &[u8]) -> bool {
        let mut st = self.state();
        let kept = st.push(&line[..line.len().min(self.maxlen)], self.size);
        if kept {
            self.wake_readers(&mut st);
        } else {
            st.dropped += 1;
            st.dropped_total += 1;
        }
        kept
    }

    fn wake_readers(&self, st: &mut State) {
        for (w, n) in st.waiting.iter_mut().zip(&self.wake) {
            if std::mem::take(w) {
                n.notify_one();
            }
        }
    }

    /// Appends to `out`, framed for `proto`, the lines forwarder `reader` has not
    /// sent, until `out` holds `max` bytes or more; returns how many. With none, the
    /// forwarder is marked waiting: [`Ring::wait`] returns at the next line.
    pub fn read(&self, reader: usize, out: &mut Vec<u8>, max: usize, proto: LogProto) -> usize {
        let mut st = self.state();
        let first = st.first;
        let Some(slot) = st.readers.get_mut(reader) else { return 0 };
        let mut pos = *slot.get_or_insert(first);
        let mut off = st.offset(pos);
        let mut n = 0;
        while out.len() < max {
            let Some(&len) = st.lens.get((pos - st.first) as usize) else { break };
            let len = len as usize;
            if proto == LogProto::OctetCount {
                let _ = write!(VecWriter(out), "{len} ");
            }
            copy_out(&st.data, off, len, out);
            if proto == LogProto::Legacy {
                out.push(b'\n');
            }
            off += len;
            pos += 1;
            n += 1;
        }
        st.readers[reader] = Some(pos);
        if n == 0 {
            st.waiting[reader] = true;
        }
        n
    }

    /// Waits until a line arrives for `reader` (after a [`Ring::read`] that found none).
    pub async fn wait(&self, reader: usize) {
        if let Some(n) = self.wake.get(reader) {
            n.notified().await;
        }
    }

    /// Every kept line, each followed by a line feed (`show events <ring>`).
    pub fn dump(&self, out: &mut Vec<u8>) {
        let st = self.state();
        let mut off = 0;
        for &len in &st.lens {
            copy_out(&st.data, off, len as usize, out);
            out.push(b'\n');
            off += len as usize;
        }
    }

    /// Lines refused since the start.
    pub fn dropped_total(&self) -> u64 {
        self.state().dropped_total
    }
}

/// `fmt::Write` into a byte vector (numbers without an intermediate `String`).
struct VecWriter<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for VecWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// The rings of the running configuration (`buf0` first, then the sections').
static RINGS: std::sync::LazyLock<ArcSwap<Vec<Arc<Ring>>>> =
    std::sync::LazyLock::new(|| ArcSwap::from_pointee(Vec::new()));

/// Makes `rings` the ones `show events` and the forwarders use.
pub fn set_rings(rings: Vec<Arc<Ring>>) {
    RINGS.store(Arc::new(rings));
}

/// The rings of the running configuration.
pub fn rings() -> Arc<Vec<Arc<Ring>>> {
    RINGS.load_full()
}

/// `show events [<ring>] [-w] [-n]`. COMPAT: `-w` (wait for new lines) is refused;
/// `-n` alone (only lines to come) shows nothing, as HAProxy without `-w`.
pub fn show_events(args: &[&str]) -> String {
    show_events_of(&rings(), args)
}

/// `show events` over `rings`.
fn show_events_of(rings: &[Arc<Ring>], args: &[&str]) -> String {
    let Some(&name) = args.first() else {
        let mut out = String::from("Supported events sinks are listed below. Add -w(wait), -n(new). Any key to stop\n");
        let _ = writeln!(out, "    {:<10} : type=fd, 0 dropped, standard output (fd#1)", "stdout");
        let _ = writeln!(out, "    {:<10} : type=fd, 0 dropped, standard output (fd#2)", "stderr");
        for r in rings.iter() {
            let _ = writeln!(out, "    {:<10} : type=buffer, {} dropped, {}", r.name, r.dropped_total(), r.description);
        }
        return out;
    };
    if name == "stdout" || name == "stderr" {
        return "Nothing to report for this sink\n".into();
    }
    let Some(ring) = rings.iter().find(|r| r.name == name) else { return "No such event sink\n".into() };
    let mut seek_new = false;
    for &a in &args[1..] {
        match a {
            "-n" => seek_new = true,
            "-w" | "-nw" | "-wn" => return "'show events -w' (waiting for events) is not supported yet\n".into(),
            _ => return "unknown option\n".into(),
        }
    }
    let mut out = Vec::new();
    if !seek_new {
        ring.dump(&mut out);
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(r: &Ring) -> Vec<String> {
        let mut out = Vec::new();
        r.dump(&mut out);
        String::from_utf8(out).unwrap().lines().map(str::to_owned).collect()
    }

    #[test]
    fn varint_sizes_are_haproxys() {
        assert_eq!([varint_len(0), varint_len(239), varint_len(240)], [1, 1, 2]);
        // 240 + 16 * 128 - 1 is the largest two-byte value
        assert_eq!([varint_len(2287), varint_len(2288)], [2, 3]);
    }

    #[test]
    fn a_full_ring_without_readers_drops_its_oldest_lines() {
        // each 10-byte line costs 12 bytes; 1 byte of tail marker: 4 lines fit in 50
        let r = Ring::new("r", "r", HdrFormat::Raw, 50, 50);
        for i in 0..6 {
            assert!(r.write_raw(format!("line-{i:05}").as_bytes()));
        }
        assert_eq!(lines(&r), ["line-00002", "line-00003", "line-00004", "line-00005"]);
        assert_eq!(r.dropped_total(), 0);
        // a line larger than the ring can never be kept
        assert!(!r.write_raw(&[b'x'; 48]));
        assert_eq!(r.dropped_total(), 1);
        assert_eq!(lines(&r).len(), 4, "nothing was removed for it");
    }

    /// A ring section with one server.
    fn with_server(size: usize, maxlen: usize) -> rampart_cfg::model::Ring {
        rampart_cfg::model::Ring {
            name: "r".into(),
            description: "d".into(),
            format: "raw".into(),
            maxlen,
            size,
            timeout_connect: None,
            timeout_server: None,
            servers: vec![rampart_cfg::model::RingServer {
                name: "s".into(),
                addr: "127.0.0.1:1".parse().unwrap(),
                log_proto: LogProto::OctetCount,
                send_proxy: 0,
                tls: Default::default(),
                span: Default::default(),
            }],
            span: Default::default(),
        }
    }

    fn raw_target(r: &Ring) -> Target {
        let t = crate::log::target::parse(&["ring@r".into(), "local0".into()]).unwrap();
        Target { format: r.format, explicit: true, ..t }
    }

    #[test]
    fn a_reader_that_lags_makes_new_lines_drop_then_they_are_announced() {
        let cfg = with_server(50, 100);
        let r = Ring::from_cfg(&cfg);
        assert_eq!(r.maxlen, 50, "maxlen is at most the size");
        // before its first connection the forwarder holds nothing: the oldest go
        for i in 0..5 {
            r.write_raw(format!("early-{i:04}").as_bytes());
        }
        let mut out = Vec::new();
        assert_eq!(r.read(0, &mut out, 1 << 16, LogProto::OctetCount), 4);
        assert_eq!(out, b"10 early-000110 early-000210 early-000310 early-0004", "octet counting, no separator");
        // now it holds its place: with the ring full of unread lines, new ones drop
        for i in 0..6 {
            r.write_raw(format!("later-{i:04}").as_bytes());
        }
        assert_eq!(r.dropped_total(), 2);
        let target = raw_target(&r);
        let ident = Ident { tag: "t".into(), pid: 1, host: None };
        out.clear();
        assert_eq!(r.read(0, &mut out, 1 << 16, LogProto::Legacy), 4);
        assert_eq!(out, b"later-0000\nlater-0001\nlater-0002\nlater-0003\n");
        r.log(&target, &ident, 6, b"next", b"", SystemTime::now());
        out.clear();
        assert_eq!(r.read(0, &mut out, 1 << 16, LogProto::Legacy), 2);
        assert_eq!(out, b"2 events dropped\nnext\n", "the announcement first (format raw: no header)");
        assert_eq!(r.read(0, &mut out, 1 << 16, LogProto::Legacy), 0);
    }

    #[test]
    fn lines_get_the_rings_header_and_are_cut_to_maxlen() {
        let r = Ring::new("r", "r", HdrFormat::Rfc5424, 1000, 60);
        let hdr = raw_target(&r);
        let ident = Ident { tag: "haproxy".into(), pid: 42, host: None };
        let now = std::time::UNIX_EPOCH + Duration::from_micros(1_233_922_454_000_123);
        r.log(&hdr, &ident, 6, &[b'm'; 100], b"", now);
        let got = lines(&r);
        assert_eq!(got[0].len(), 60);
        assert!(got[0].starts_with("<134>1 2009-02-0"), "{}", got[0]);
        assert!(got[0].contains(" - haproxy 42 - - mmm"), "{}", got[0]);
    }

    #[test]
    fn a_waiting_reader_is_woken_by_the_next_line() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let r = Arc::new(Ring::from_cfg(&with_server(1000, 1000)));
        let mut out = Vec::new();
        assert_eq!(r.read(0, &mut out, 100, LogProto::Legacy), 0);
        let w = r.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            w.write_raw(b"hello");
        });
        rt.block_on(async { tokio::time::timeout(Duration::from_secs(5), r.wait(0)).await }).unwrap();
        assert_eq!(r.read(0, &mut out, 100, LogProto::Legacy), 1);
        assert_eq!(out, b"hello\n");
    }

    #[test]
    fn show_events_lists_the_sinks_and_dumps_a_ring() {
        let r = Arc::new(Ring::new("mine", "My local buffer", HdrFormat::Raw, 1000, 1000));
        r.write_raw(b"one");
        r.write_raw(b"two");
        let rings = vec![Arc::new(Ring::buf0()), r];
        let show_events = |args: &[&str]| show_events_of(&rings, args);
        let list = show_events(&[]);
        assert!(list.starts_with("Supported events sinks are listed below."), "{list}");
        assert!(list.contains("    buf0       : type=buffer, 0 dropped, in-memory ring buffer\n"), "{list}");
        assert!(list.contains("    mine       : type=buffer, 0 dropped, My local buffer\n"), "{list}");
        assert_eq!(show_events(&["mine"]), "one\ntwo\n");
        assert_eq!(show_events(&["mine", "-n"]), "");
        assert_eq!(show_events(&["nope"]), "No such event sink\n");
        assert!(show_events(&["mine", "-w"]).contains("not supported yet"));
        assert_eq!(show_events(&["mine", "-x"]), "unknown option\n");
    }
}
