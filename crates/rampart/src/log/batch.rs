//! Log lines gathered per worker thread and sent together: one `sendmmsg(2)` per
//! connected datagram socket and per event-loop turn instead of one `send` per line,
//! and one buffer per turn for the stdout/stderr writer instead of one per line. A worker thread turns batching on ([`enable`]); its runtime flushes
//! before it parks ([`flush`], tokio's `on_thread_park`), its timer wheel flushes each
//! tick in case the loop never runs dry, and a batch that reaches [`MAX_LINES`] lines
//! or [`MAX_BYTES`] bytes goes at once. Other threads (the main thread, tests) send
//! each line directly. Lines the kernel refuses are dropped and counted as before.
//! HAProxy counterpart: none: `__send_log()` (src/log.c) makes one `sendmsg()` per
//! line and target.

use std::cell::{Cell, RefCell};
use std::io::IoSlice;
use std::sync::Arc;

use nix::errno::Errno;
use nix::sys::socket::{sendmmsg, ControlMessage, MsgFlags, MultiHeaders, SockaddrIn};

use super::sink::{self, Sink};

/// Lines gathered before they are sent at once, at most.
pub const MAX_LINES: usize = 64;
/// Bytes gathered before they are sent at once, at most (lines are cut to `len`).
pub const MAX_BYTES: usize = 256 * 1024;

/// One gathered line: which of the batch's sinks, and where its bytes are.
#[derive(Debug, Clone, Copy)]
struct Line {
    sink: u16,
    start: u32,
    end: u32,
}

/// A thread's gathered lines. Its vectors keep their capacity: once warm, gathering
/// a line allocates nothing.
struct Pending {
    /// The distinct sinks of the gathered lines (usually one).
    sinks: Vec<Arc<Sink>>,
    lines: Vec<Line>,
    bytes: Vec<u8>,
    /// `sendmmsg`'s message headers, allocated on the first flush.
    headers: Option<MultiHeaders<SockaddrIn>>,
}

thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(false) };
    static PENDING: RefCell<Pending> =
        const { RefCell::new(Pending { sinks: Vec::new(), lines: Vec::new(), bytes: Vec::new(), headers: None }) };
}

/// Gathers this thread's datagram lines from now on; its event loop must call
/// [`flush`] before it parks.
pub fn enable() {
    ENABLED.with(|e| e.set(true));
}

/// Whether this thread gathers its datagram lines.
pub fn enabled() -> bool {
    ENABLED.with(Cell::get)
}

/// Appends a line for `sink` built by `write` into the thread's batch (flushing first
/// when full). `false`: this thread does not batch (or is flushing), the caller sends.
pub fn push(sink: &Arc<Sink>, write: impl FnOnce(&mut Vec<u8>)) -> bool {
    if !enabled() {
        return false;
    }
    let full = PENDING.with(|p| {
        let Ok(mut p) = p.try_borrow_mut() else { return None };
        let idx = match p.sinks.iter().position(|s| Arc::ptr_eq(s, sink)) {
            Some(i) => i,
            None => {
                p.sinks.push(sink.clone());
                p.sinks.len() - 1
            }
        };
        let start = p.bytes.len();
        write(&mut p.bytes);
        let end = p.bytes.len();
        let (Ok(sink), Ok(start), Ok(end)) = (u16::try_from(idx), u32::try_from(start), u32::try_from(end)) else {
            p.bytes.truncate(start);
            return None;
        };
        p.lines.push(Line { sink, start, end });
        Some(p.lines.len() >= MAX_LINES || p.bytes.len() >= MAX_BYTES)
    });
    match full {
        Some(true) => {
            flush();
            true
        }
        Some(false) => true,
        None => false,
    }
}

/// Sends every gathered line of this thread: one `sendmmsg` per sink (more when a
/// call sends only part of its lines).
pub fn flush() {
    PENDING.with(|p| {
        let Ok(mut p) = p.try_borrow_mut() else { return };
        if p.lines.is_empty() {
            return;
        }
        let Pending { sinks, lines, bytes, headers } = &mut *p;
        let headers = headers.get_or_insert_with(|| MultiHeaders::preallocate(MAX_LINES, None));
        for (idx, s) in sinks.iter().enumerate() {
            let mine = lines.iter().filter(|l| usize::from(l.sink) == idx);
            send_all(s, headers, mine.map(|l| &bytes[l.start as usize..l.end as usize]));
        }
        sinks.clear();
        lines.clear();
        bytes.clear();
    });
}

/// Sends `msgs` on `s`'s socket, [`MAX_LINES`] per system call; counts the lines the
/// kernel would not take as dropped. For stdout/stderr, the lines go to the writer
/// thread as one buffer (one allocation and one write per batch).
fn send_all<'a>(s: &Sink, headers: &mut MultiHeaders<SockaddrIn>, msgs: impl Iterator<Item = &'a [u8]>) {
    let Some(fd) = s.batch_fd() else {
        let (mut joined, mut n) = (Vec::new(), 0);
        for m in msgs {
            joined.extend_from_slice(m);
            n += 1;
        }
        if !s.send_std_batch(joined, n) {
            // (only stdout/stderr and connected sockets are batched)
            sink::drop_lines(n);
        }
        return;
    };
    let mut slices: [[IoSlice<'a>; 1]; MAX_LINES] = [[IoSlice::new(&[])]; MAX_LINES];
    let mut n = 0;
    for m in msgs {
        slices[n] = [IoSlice::new(m)];
        n += 1;
        if n == MAX_LINES {
            send_group(fd, headers, &slices[..n]);
            n = 0;
        }
    }
    if n > 0 {
        send_group(fd, headers, &slices[..n]);
    }
}

/// Sends one group of at most [`MAX_LINES`] lines. A full socket buffer drops what
/// remains; another error (a pending ICMP "port unreachable") costs one line and the
/// rest are tried again.
fn send_group(fd: std::os::fd::RawFd, headers: &mut MultiHeaders<SockaddrIn>, group: &[[IoSlice<'_>; 1]]) {
    const NO_ADDR: Option<SockaddrIn> = None;
    let addrs = [NO_ADDR; MAX_LINES];
    let no_cmsg: [ControlMessage<'_>; 0] = [];
    let mut done = 0;
    while done < group.len() {
        let rest = &group[done..];
        match sendmmsg(fd, headers, rest, &addrs[..rest.len()], no_cmsg, MsgFlags::MSG_DONTWAIT) {
            Ok(sent) => {
                let sent = sent.count();
                if sent == 0 {
                    sink::drop_lines(rest.len() as u64);
                    return;
                }
                done += sent;
            }
            Err(Errno::EAGAIN | Errno::ENOBUFS) => {
                sink::drop_lines(rest.len() as u64);
                return;
            }
            Err(Errno::EINTR) => {}
            Err(_) => {
                sink::drop_lines(1);
                done += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::sink::{dropped_logs, open, Ident, Loggers};
    use crate::log::target;
    use std::net::UdpSocket;
    use std::time::Duration;

    fn loggers(line: &str) -> Loggers {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        let sink = open(target::parse(&args).unwrap()).unwrap();
        Loggers { sinks: vec![Arc::new(sink)], ident: Ident { tag: "t".into(), pid: 1, host: None } }
    }

    fn receiver() -> UdpSocket {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        rx
    }

    /// Runs `f` on a fresh thread that batches (tests share threads otherwise).
    fn on_batching_thread(f: impl FnOnce() + Send + 'static) {
        std::thread::spawn(move || {
            enable();
            f();
        })
        .join()
        .unwrap();
    }

    #[test]
    fn lines_wait_for_the_flush_then_arrive_in_order() {
        let rx = receiver();
        let l = loggers(&format!("{} format raw local0", rx.local_addr().unwrap()));
        rx.set_nonblocking(true).unwrap();
        let rx = Arc::new(rx);
        let rx2 = rx.clone();
        on_batching_thread(move || {
            l.send(6, b"one");
            l.send(6, b"two");
            let mut buf = [0u8; 64];
            assert!(rx2.recv(&mut buf).is_err(), "nothing sent before the flush");
            flush();
        });
        rx.set_nonblocking(false).unwrap();
        let mut buf = [0u8; 64];
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"one\n");
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"two\n");
    }

    #[test]
    fn a_full_batch_goes_without_waiting_and_sinks_stay_apart() {
        let (rx1, rx2) = (receiver(), receiver());
        let l1 = loggers(&format!("{} format raw local0", rx1.local_addr().unwrap()));
        let l2 = loggers(&format!("{} format raw local0", rx2.local_addr().unwrap()));
        on_batching_thread(move || {
            for i in 0..MAX_LINES {
                let l = if i % 2 == 0 { &l1 } else { &l2 };
                l.send(6, format!("line {i}").as_bytes());
            }
            // no flush: the batch filled up
        });
        let mut buf = [0u8; 64];
        for i in (0..MAX_LINES).step_by(2) {
            let n = rx1.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], format!("line {i}\n").as_bytes());
            let n = rx2.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], format!("line {}\n", i + 1).as_bytes());
        }
    }

    #[test]
    fn a_port_without_receiver_costs_dropped_lines_only() {
        let port = receiver().local_addr().unwrap().port(); // closed again
        let l = loggers(&format!("127.0.0.1:{port} format raw local0"));
        let before = dropped_logs();
        on_batching_thread(move || {
            for _ in 0..3 {
                for _ in 0..10 {
                    l.send(6, b"nobody listens");
                }
                flush();
            }
        });
        assert!(dropped_logs() > before, "the ICMP errors count lines as dropped");
    }

    #[test]
    fn a_thread_that_does_not_batch_sends_at_once() {
        let rx = receiver();
        let l = loggers(&format!("{} format raw local0", rx.local_addr().unwrap()));
        assert!(!enabled());
        l.send(6, b"now");
        let mut buf = [0u8; 64];
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"now\n");
    }
}
