//! Coarse per-thread timers for I/O timeouts: a hashed timer wheel ticking every
//! [`TICK`], driven by one task per worker thread ([`run_wheel`]).
//!
//! PERF: arming and cancelling a timeout is a slab insert and remove in a thread-local
//! wheel: no clock read, no lock, no allocation once warm (tokio's timers take the
//! time driver's lock and read the clock for each timeout). Timeouts are rounded up to
//! the next tick, which is far below what `timeout` settings express.
//! HAProxy counterpart: the task/timer wheel of task.c (ticks in milliseconds).
//!
//! The wheel also wakes idle keep-alive connections when a soft stop begins.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// A proxy's timeouts, with HAProxy's fallbacks already applied (`proxy::ProxyRt`
/// holds them; the stream and the muxes arm this wheel's timers with them).
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub client: Option<Duration>,
    pub server: Option<Duration>,
    pub connect: Option<Duration>,
    /// Waiting in the queue for a server below its `maxconn` (`queue`, else `connect`).
    pub queue: Option<Duration>,
    /// Waiting for a complete request head (`http-request`, else `client`).
    pub http_request: Option<Duration>,
    /// Waiting for the next request on a kept-alive connection
    /// (`http-keep-alive`, else `http-request`, else `client`).
    pub http_keep_alive: Option<Duration>,
    pub tunnel: Option<Duration>,
    pub client_fin: Option<Duration>,
    pub server_fin: Option<Duration>,
    /// `option independent-streams`: this proxy's side of a tunnel times out on its
    /// own reads, whatever moves the other way (`splice::DirTimeouts::indep`).
    pub indep: bool,
}

/// Resolution of the wheel.
pub const TICK: Duration = Duration::from_millis(10);
/// Buckets of the wheel (a power of two): one turn spans `BUCKETS * TICK`.
const BUCKETS: usize = 512;
const NIL: u32 = u32::MAX;

struct Entry {
    waker: Option<Waker>,
    /// Tick at which the timer fires.
    deadline: u64,
    prev: u32,
    next: u32,
    /// Woken by a soft stop as well.
    wake_on_stop: bool,
    fired: bool,
}

struct Wheel {
    entries: Vec<Entry>,
    free: Vec<u32>,
    heads: Vec<u32>,
    stop_seen: bool,
}

impl Wheel {
    fn new() -> Wheel {
        Wheel { entries: Vec::new(), free: Vec::new(), heads: vec![NIL; BUCKETS], stop_seen: false }
    }

    fn insert(&mut self, deadline: u64, waker: Waker, wake_on_stop: bool) -> u32 {
        let entry = Entry { waker: Some(waker), deadline, prev: NIL, next: NIL, wake_on_stop, fired: false };
        let key = match self.free.pop() {
            Some(k) => {
                self.entries[k as usize] = entry;
                k
            }
            None => {
                self.entries.push(entry);
                (self.entries.len() - 1) as u32
            }
        };
        self.link(key);
        key
    }

    fn bucket(deadline: u64) -> usize {
        (deadline as usize) & (BUCKETS - 1)
    }

    fn link(&mut self, key: u32) {
        let b = Self::bucket(self.entries[key as usize].deadline);
        let head = self.heads[b];
        self.entries[key as usize].next = head;
        self.entries[key as usize].prev = NIL;
        if head != NIL {
            self.entries[head as usize].prev = key;
        }
        self.heads[b] = key;
    }

    fn unlink(&mut self, key: u32) {
        let (prev, next, deadline) = {
            let e = &self.entries[key as usize];
            (e.prev, e.next, e.deadline)
        };
        if prev != NIL {
            self.entries[prev as usize].next = next;
        } else {
            self.heads[Self::bucket(deadline)] = next;
        }
        if next != NIL {
            self.entries[next as usize].prev = prev;
        }
    }

    fn remove(&mut self, key: u32) {
        if !self.entries[key as usize].fired {
            self.unlink(key);
        }
        self.entries[key as usize].waker = None;
        self.free.push(key);
    }

    /// Fires the timers of bucket `now`, whose deadline has come.
    fn expire(&mut self, now: u64) {
        let mut key = self.heads[Self::bucket(now)];
        while key != NIL {
            let next = self.entries[key as usize].next;
            if self.entries[key as usize].deadline <= now {
                self.fire(key);
            }
            key = next;
        }
    }

    fn fire(&mut self, key: u32) {
        self.unlink(key);
        let e = &mut self.entries[key as usize];
        e.fired = true;
        if let Some(w) = e.waker.take() {
            w.wake();
        }
    }

    /// Fires every timer that asked to be woken by a soft stop.
    fn fire_stop_waiters(&mut self) {
        for key in 0..self.entries.len() as u32 {
            let e = &self.entries[key as usize];
            if e.wake_on_stop && !e.fired && e.waker.is_some() {
                self.fire(key);
            }
        }
    }
}

thread_local! {
    static WHEEL: RefCell<Wheel> = RefCell::new(Wheel::new());
    /// Ticks since the thread's wheel started.
    static NOW: Cell<u64> = const { Cell::new(0) };
    /// Whether this thread runs a wheel (timeouts are disabled otherwise, e.g. in tests
    /// that use the I/O helpers on a bare runtime).
    static RUNNING: Cell<bool> = const { Cell::new(false) };
}

/// The current tick of this thread's wheel.
pub fn now_tick() -> u64 {
    NOW.with(|n| n.get())
}

/// How many ticks a timeout of `d` lasts (rounded up, plus one).
pub fn ticks(d: Duration) -> u64 {
    // Round up, plus one: the current tick is already partly elapsed.
    (d.as_nanos().div_ceil(TICK.as_nanos()) as u64).max(1) + 1
}

/// Drives this thread's wheel forever: advance one tick every [`TICK`], run `on_tick`
/// (work that must not wait for the loop to run dry, such as sending the batched log
/// lines), fire what is due, and on soft stop wake the idle connections. Spawn once per
/// worker thread.
pub async fn run_wheel(stopping: impl Fn() -> bool, on_tick: impl Fn()) {
    RUNNING.with(|r| r.set(true));
    let mut interval = tokio::time::interval(TICK);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    loop {
        interval.tick().await;
        let now = NOW.with(|n| {
            let v = n.get() + 1;
            n.set(v);
            v
        });
        on_tick();
        let stop = stopping();
        WHEEL.with(|w| {
            let mut w = w.borrow_mut();
            w.expire(now);
            if stop && !w.stop_seen {
                w.stop_seen = true;
                w.fire_stop_waiters();
            }
        });
    }
}

/// A timeout registered in the wheel; cancelled on drop.
#[derive(Debug)]
pub struct Timer {
    ticks: u64,
    key: Option<u32>,
    wake_on_stop: bool,
}

impl Timer {
    /// A timer expiring `d` from its first poll; `None` never expires.
    pub fn new(d: Option<Duration>) -> Option<Timer> {
        let d = d?;
        RUNNING.with(|r| r.get()).then(|| Timer { ticks: ticks(d), key: None, wake_on_stop: false })
    }

    /// A timer that only expires when a soft stop begins.
    pub fn stop_only() -> Option<Timer> {
        RUNNING.with(|r| r.get()).then_some(Timer { ticks: u64::MAX / 4, key: None, wake_on_stop: true })
    }

    /// Also expires when a soft stop begins (for idle keep-alive waits).
    pub fn or_stop(mut self) -> Timer {
        self.wake_on_stop = true;
        self
    }

    /// `Ready` once expired; registers the waker otherwise.
    pub fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        WHEEL.with(|w| {
            let mut w = w.borrow_mut();
            match self.key {
                None => {
                    let deadline = NOW.with(|n| n.get()) + self.ticks;
                    self.key = Some(w.insert(deadline, cx.waker().clone(), self.wake_on_stop));
                    if self.wake_on_stop && w.stop_seen {
                        return Poll::Ready(());
                    }
                    Poll::Pending
                }
                Some(key) => {
                    let e = &mut w.entries[key as usize];
                    if e.fired {
                        return Poll::Ready(());
                    }
                    if !e.waker.as_ref().is_some_and(|old| old.will_wake(cx.waker())) {
                        e.waker = Some(cx.waker().clone());
                    }
                    Poll::Pending
                }
            }
        })
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            let _ = WHEEL.try_with(|w| w.borrow_mut().remove(key));
        }
    }
}

/// The timeout of [`timeout`] expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed;

/// Runs `fut` until it completes or `d` elapses (`None`: no limit).
pub fn timeout<F: Future>(d: Option<Duration>, fut: F) -> Timeout<F> {
    Timeout { fut, timer: Timer::new(d) }
}

pin_project_lite::pin_project! {
    /// Future returned by [`timeout`].
    pub struct Timeout<F> {
        #[pin]
        fut: F,
        timer: Option<Timer>,
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(v) = this.fut.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        match this.timer {
            Some(t) => t.poll_expired(cx).map(|()| Err(Elapsed)),
            None => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_round_up() {
        assert_eq!(ticks(Duration::from_millis(1)), 2);
        assert_eq!(ticks(Duration::from_millis(10)), 2);
        assert_eq!(ticks(Duration::from_millis(11)), 3);
        assert_eq!(ticks(Duration::ZERO), 2);
    }

    #[test]
    fn wheel_fires_due_entries_and_survives_removal() {
        let mut w = Wheel::new();
        let waker = Waker::noop().clone();
        let a = w.insert(5, waker.clone(), false);
        let b = w.insert(5 + BUCKETS as u64, waker.clone(), false); // same bucket, next turn
        let c = w.insert(7, waker.clone(), true);
        w.expire(5);
        assert!(w.entries[a as usize].fired);
        assert!(!w.entries[b as usize].fired, "a later turn does not fire early");
        w.remove(c);
        w.fire_stop_waiters();
        w.remove(a);
        w.expire(5 + BUCKETS as u64);
        assert!(w.entries[b as usize].fired);
        w.remove(b);
        assert_eq!(w.free.len(), 3);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn timeout_expires_and_completes() {
        tokio::spawn(run_wheel(|| false, || ()));
        tokio::task::yield_now().await;
        let slow = timeout(Some(Duration::from_millis(30)), std::future::pending::<()>()).await;
        assert_eq!(slow, Err(Elapsed));
        let fast = timeout(Some(Duration::from_secs(5)), async { 7 }).await;
        assert_eq!(fast, Ok(7));
        let unlimited = timeout(None, async { 8 }).await;
        assert_eq!(unlimited, Ok(8));
    }
}
