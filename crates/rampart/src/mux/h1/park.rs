//! Parking of long-idle keep-alive connections.
//!
//! A client connection waiting for its next request costs a task and an event-loop
//! registration (about 0.9 KB). One that stays idle longer than [`PARK_AFTER`] is
//! parked instead: its socket leaves the event loop for this thread's park set (an
//! epoll instance of its own), its task ends, and what is left is one small slab entry
//! (the session and the socket), about a tenth of the cost. When the client sends its
//! next request the connection is unparked into a new task, on the same thread; when
//! `timeout http-keep-alive` expires or a soft stop begins, it is closed.
//!
//! PERF: busy connections never park (a request less than [`PARK_AFTER`] after the
//! previous one costs nothing more); a parked connection costs two `epoll_ctl` calls to
//! park and two to unpark. HAProxy has no equivalent (its idle connection is about 1.1 KB).

use std::cell::RefCell;
use std::os::fd::OwnedFd;
use std::time::Duration;

use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};

use super::H1Conn;
use crate::io::Parkable;
use crate::session::types::Session;
use crate::timer;

/// How long a keep-alive connection waits in its task before being parked.
pub const PARK_AFTER: Duration = Duration::from_millis(500);
/// How often parked connections are checked for their keep-alive timeout.
const SWEEP_EVERY: Duration = Duration::from_millis(100);

/// Brings a parked socket back into a task (monomorphized per socket type).
type Resume = fn(OwnedFd, Session, H1Conn);

struct Parked {
    fd: OwnedFd,
    sess: Session,
    conn: H1Conn,
    resume: Resume,
    /// Wheel tick after which the connection is closed (`None`: no keep-alive timeout).
    deadline: Option<u64>,
}

struct ParkSet {
    epoll: Epoll,
    slots: Vec<Option<Parked>>,
    free: Vec<usize>,
    /// Connections parked since the heap was last trimmed.
    parked_since_trim: usize,
    /// A soft stop was seen (the parked connections got their closing moment).
    stop_seen: bool,
}

/// Parked connections after which the freed task memory is returned to the system.
const TRIM_AFTER: usize = 256;

thread_local! {
    static PARK: RefCell<Option<ParkSet>> = const { RefCell::new(None) };
}

/// Whether this thread can park connections (its parker runs).
pub fn available() -> bool {
    PARK.with(|p| p.borrow().is_some())
}

/// Parks an idle connection; `left` is what remains of its keep-alive timeout. If the
/// park set cannot take it, the connection goes on in a new task at once.
#[allow(clippy::result_large_err, reason = "the error hands the connection back, once, on a rare path")]
pub fn park<S: Parkable>(sock: S, sess: Session, conn: H1Conn, left: Option<Duration>) {
    let Ok(fd) = sock.into_fd() else {
        return; // the socket failed: the connection closes
    };
    let deadline = left.map(|d| timer::now_tick() + timer::ticks(d));
    let parked = Parked { fd, sess, conn, resume: resume::<S>, deadline };
    if let Err(parked) = PARK.with(|p| insert(&mut p.borrow_mut(), parked)) {
        (parked.resume)(parked.fd, parked.sess, parked.conn);
    }
}

#[allow(clippy::result_large_err, reason = "the error hands the connection back, once, on a rare path")]
fn insert(set: &mut Option<ParkSet>, parked: Parked) -> Result<(), Parked> {
    let Some(set) = set.as_mut() else { return Err(parked) };
    let key = set.free.pop().unwrap_or_else(|| {
        set.slots.push(None);
        set.slots.len() - 1
    });
    let event = EpollEvent::new(EpollFlags::EPOLLIN | EpollFlags::EPOLLRDHUP, key as u64);
    if set.epoll.add(&parked.fd, event).is_err() {
        set.free.push(key);
        return Err(parked);
    }
    set.slots[key] = Some(parked);
    set.parked_since_trim += 1;
    Ok(())
}

fn resume<S: Parkable>(fd: OwnedFd, sess: Session, conn: H1Conn) {
    if let Ok(sock) = S::from_fd(fd) {
        drop(tokio::spawn(super::resume(sock, sess, conn)));
    }
}

/// Runs this thread's park set forever: unparks connections whose client spoke,
/// closes those whose keep-alive timeout expired, and all of them on soft stop.
pub async fn run_parker(stopping: impl Fn() -> bool) {
    let epoll = match Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC) {
        Ok(e) => e,
        Err(_) => return, // parking stays unavailable; idle connections keep their task
    };
    // The event loop waits on a duplicate of the park set's epoll descriptor, which the
    // registration owns: the same epoll instance, readable when a parked socket is.
    let Ok(ready) = epoll.0.try_clone().and_then(crate::sys::register_owned) else {
        return; // parking stays unavailable
    };
    PARK.with(|p| {
        *p.borrow_mut() =
            Some(ParkSet { epoll, slots: Vec::new(), free: Vec::new(), parked_since_trim: 0, stop_seen: false })
    });
    let mut sweep = tokio::time::interval(SWEEP_EVERY);
    loop {
        tokio::select! {
            guard = ready.readable() => {
                let Ok(mut guard) = guard else { return };
                unpark_ready();
                guard.clear_ready();
            }
            _ = sweep.tick() => {
                close_expired(stopping());
                trim_if_many_parked();
            }
        }
    }
}

/// Unparks every connection with a pending event (data, or a close to notice).
fn unpark_ready() {
    let mut events = [EpollEvent::empty(); 64];
    loop {
        let ready: Vec<Parked> = PARK.with(|p| {
            let mut guard = p.borrow_mut();
            let Some(set) = guard.as_mut() else { return Vec::new() };
            let n = set.epoll.wait(&mut events, EpollTimeout::ZERO).unwrap_or(0);
            events[..n].iter().filter_map(|ev| set.take(ev.data() as usize)).collect()
        });
        if ready.is_empty() {
            return;
        }
        let more = ready.len() == events.len();
        for parked in ready {
            (parked.resume)(parked.fd, parked.sess, parked.conn);
        }
        if !more {
            return;
        }
    }
}

/// The tasks of parked connections were freed, but the allocator keeps their memory:
/// give it back once many connections parked (at most once per sweep).
fn trim_if_many_parked() {
    let trim = PARK.with(|p| {
        let mut guard = p.borrow_mut();
        let Some(set) = guard.as_mut() else { return false };
        let trim = set.parked_since_trim >= TRIM_AFTER;
        if trim {
            set.parked_since_trim = 0;
        }
        trim
    });
    if trim {
        crate::sys::trim_heap();
    }
}

/// Closes parked connections past their keep-alive timeout (all of them on soft stop).
fn close_expired(stopping: bool) {
    let now = timer::now_tick();
    let expired: Vec<Parked> = PARK.with(|p| {
        let mut guard = p.borrow_mut();
        let Some(set) = guard.as_mut() else { return Vec::new() };
        if stopping && !set.stop_seen {
            set.stop_seen = true;
            close_on_stop(set, now);
        }
        let keys: Vec<usize> = set
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.as_ref().is_some_and(|s| s.deadline.is_some_and(|d| d <= now)))
            .map(|(k, _)| k)
            .collect();
        keys.into_iter().filter_map(|k| set.take(k)).collect()
    });
    drop(expired); // closes the sockets and releases their maxconn slots
}

/// A soft stop began: each parked connection gets its closing moment, now by default,
/// a random one of the `close-spread-time` window, or none (`infinite`: its keep-alive
/// timeout still applies).
fn close_on_stop(set: &mut ParkSet, now: u64) {
    for parked in set.slots.iter_mut().flatten() {
        let close_at = match parked.sess.rt.global.stop_idle_delay() {
            Some(d) if d.is_zero() => now,
            Some(d) => now + timer::ticks(d),
            None => continue,
        };
        parked.deadline = Some(parked.deadline.map_or(close_at, |d| d.min(close_at)));
    }
}

impl ParkSet {
    fn take(&mut self, key: usize) -> Option<Parked> {
        let parked = self.slots.get_mut(key)?.take()?;
        let _ = self.epoll.delete(&parked.fd);
        self.free.push(key);
        Some(parked)
    }
}

#[cfg(test)]
mod tests {
    /// What a parked connection costs in the park set; the idle-connection benchmark
    /// measures the rest. A regression here is a regression per idle connection.
    #[test]
    fn a_parked_connection_stays_small() {
        assert!(std::mem::size_of::<super::Parked>() <= 120, "{}", std::mem::size_of::<super::Parked>());
    }
}
