//! Streams waiting for a connection slot on a server at its `maxconn`: one queue per
//! backend (any server will do) and one per server (a stream bound to that server by
//! `use-server` or a hash key). A freed slot is handed to the first waiter of the
//! server's queue or of its backend's, whichever came first, so queued streams are
//! served in arrival order, before any newcomer, within their priority class
//! (`set-priority-class`) and with their arrival shifted by `set-priority-offset`.
//! HAProxy counterpart: queue.c (`pendconn_add`, `process_srv_queue`,
//! `pendconn_process_next_strm`) and `srv_dynamic_maxconn()` (server.c).
//!
//! Not here: choosing a server (`lb/`, `backend::pick_server`), timeouts (the waiter,
//! `backend::assign_server`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use tokio::sync::oneshot;

// PERF: a lock, but only for streams that must wait (every usable server full) and for
// the release of a slot while someone waits: the fast path reads `len` only.
#[allow(clippy::disallowed_types)]
type Lock<T> = std::sync::Mutex<T>;

/// Where a queued stream stands: `set-priority-class` (lower first, -2047..=2047) and
/// `set-priority-offset` (milliseconds added to its arrival time, -524287..=524287).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Priority {
    pub class: i32,
    pub offset_ms: i32,
}

impl Priority {
    /// HAProxy's bounds for the two values (`set-priority-class`/`-offset` clamp to them).
    pub fn new(class: i64, offset_ms: i64) -> Priority {
        Priority { class: class.clamp(-0x7ff, 0x7ff) as i32, offset_ms: offset_ms.clamp(-0x7ffff, 0x7ffff) as i32 }
    }
}

/// Order of a queued stream: class first, then its (shifted) arrival, then a
/// sequence number that keeps equal arrivals first come, first served (one counter
/// for the process, so that tickets of a server's and its backend's queue compare).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ticket {
    class: i32,
    due_us: i64,
    seq: u64,
}

/// A queue of streams, each waiting for `T` (a connection slot).
#[derive(Debug)]
pub struct Queue<T> {
    /// Streams in the queue (`qcur`), readable without the lock.
    len: AtomicU32,
    /// Most streams ever in the queue (`qmax`).
    max: AtomicU32,
    /// Streams that left the queue with what they waited for (HAProxy's queue `idx`,
    /// for the positions `%sq`/`%bq`), wrapping.
    served: AtomicU32,
    inner: Lock<Inner<T>>,
}

#[derive(Debug)]
struct Inner<T> {
    waiting: BTreeMap<Ticket, oneshot::Sender<T>>,
}

/// The last sequence number handed to a queued stream.
static SEQ: AtomicU64 = AtomicU64::new(0);

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            len: AtomicU32::new(0),
            max: AtomicU32::new(0),
            served: AtomicU32::new(0),
            inner: Lock::new(Inner { waiting: BTreeMap::new() }),
        }
    }
}

/// Microseconds since the first queued stream of the process: the queue's clock.
fn now_us() -> i64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let epoch = *EPOCH.get_or_init(Instant::now);
    i64::try_from(epoch.elapsed().as_micros()).unwrap_or(i64::MAX / 2)
}

impl<T> Queue<T> {
    /// Streams waiting now.
    #[inline]
    pub fn len(&self) -> u32 {
        self.len.load(Ordering::SeqCst)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The most streams that waited at once.
    pub fn max(&self) -> u32 {
        self.max.load(Ordering::Relaxed)
    }

    /// Streams served from the queue so far (wrapping).
    pub fn served(&self) -> u32 {
        self.served.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<T>> {
        // a poisoned queue still holds valid entries: nothing panics while it is held
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues a stream; what it waits for comes through the receiver.
    pub fn push(&self, prio: Priority) -> (Ticket, oneshot::Receiver<T>) {
        let (tx, rx) = oneshot::channel();
        let mut q = self.lock();
        let seq = SEQ.fetch_add(1, Ordering::Relaxed) + 1;
        let ticket = Ticket { class: prio.class, due_us: now_us() + i64::from(prio.offset_ms) * 1000, seq };
        q.waiting.insert(ticket, tx);
        let len = self.len.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(len, Ordering::Relaxed);
        (ticket, rx)
    }

    /// Takes a stream out of the queue; `false` when it was no longer there (it was
    /// handed what it waited for meanwhile).
    pub fn cancel(&self, ticket: Ticket) -> bool {
        let mut q = self.lock();
        let found = q.waiting.remove(&ticket).is_some();
        if found {
            self.len.fetch_sub(1, Ordering::SeqCst);
        }
        found
    }

    fn head(q: &Inner<T>) -> Option<Ticket> {
        q.waiting.keys().next().copied()
    }

    fn pop(&self, q: &mut Inner<T>) -> Option<oneshot::Sender<T>> {
        let (_, tx) = q.waiting.pop_first()?;
        self.len.fetch_sub(1, Ordering::SeqCst);
        self.served.fetch_add(1, Ordering::Relaxed);
        Some(tx)
    }
}

/// Hands `value` to the first stream of `own` or `shared` (the earlier of the two
/// heads; `shared` is skipped when `None`). Gives `value` back when both are empty.
/// Streams that left meanwhile are skipped.
pub fn hand_over<T>(own: &Queue<T>, shared: Option<&Queue<T>>, mut value: T) -> Result<(), T> {
    loop {
        let mut a = own.lock();
        let mut b = shared.map(Queue::lock);
        let ha = Queue::head(&a);
        let hb = b.as_deref().and_then(Queue::head);
        let tx = match (ha, hb) {
            (None, None) => return Err(value),
            (Some(x), Some(y)) if y < x => b.as_deref_mut().and_then(|q| shared?.pop(q)),
            (Some(_), _) => own.pop(&mut a),
            (None, Some(_)) => b.as_deref_mut().and_then(|q| shared?.pop(q)),
        };
        drop((a, b));
        match tx {
            Some(tx) => match tx.send(value) {
                Ok(()) => return Ok(()),
                Err(back) => value = back,
            },
            None => return Err(value),
        }
    }
}

/// HAProxy's dynamic `maxconn` of a server (`srv_dynamic_maxconn`): with `minconn` and
/// a backend `fullconn`, the limit grows from `minconn` to `maxconn` as the backend's
/// load (`be_load`: its streams, queued or served) grows to `fullconn`.
pub fn dynamic_maxconn(maxconn: u32, minconn: u32, fullconn: u32, be_load: u32) -> u32 {
    if minconn == 0 || minconn >= maxconn || be_load >= fullconn {
        return maxconn;
    }
    let scaled = u64::from(maxconn) * u64::from(be_load) / u64::from(fullconn.max(1));
    (scaled as u32).max(minconn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiters_are_served_in_arrival_order() {
        let q: Queue<u32> = Queue::default();
        let mut rx: Vec<_> = (0..5).map(|_| q.push(Priority::default()).1).collect();
        assert_eq!((q.len(), q.max()), (5, 5));
        for v in 0..5 {
            assert_eq!(hand_over(&q, None, v), Ok(()));
        }
        assert_eq!(hand_over(&q, None, 9), Err(9));
        let got: Vec<u32> = rx.iter_mut().map(|r| r.try_recv().expect("granted")).collect();
        assert_eq!(got, [0, 1, 2, 3, 4]);
        assert_eq!((q.len(), q.max()), (0, 5));
    }

    #[test]
    fn class_then_offset_decide_the_order() {
        let q: Queue<u32> = Queue::default();
        let (_, mut late) = q.push(Priority::new(0, 0));
        let (_, mut urgent) = q.push(Priority::new(-1, 0));
        // an offset of -10 s puts it ahead of earlier streams of its class
        let (_, mut early) = q.push(Priority::new(0, -10_000));
        let (_, mut low) = q.push(Priority::new(5, -500_000));
        for v in 1..=4 {
            hand_over(&q, None, v).expect("a waiter");
        }
        let got = [urgent.try_recv(), early.try_recv(), late.try_recv(), low.try_recv()];
        assert_eq!(got.map(|r| r.expect("granted")), [1, 2, 3, 4]);
    }

    #[test]
    fn priority_values_are_clamped_as_haproxy_does() {
        assert_eq!(Priority::new(5000, -9_000_000), Priority { class: 2047, offset_ms: -524_287 });
        assert_eq!(Priority::new(-5000, 9_000_000), Priority { class: -2047, offset_ms: 524_287 });
    }

    #[test]
    fn the_earlier_of_the_two_heads_goes_first() {
        let own: Queue<u32> = Queue::default();
        let shared: Queue<u32> = Queue::default();
        let (_, mut s1) = shared.push(Priority::default());
        let (_, mut o1) = own.push(Priority::default());
        let (_, mut s2) = shared.push(Priority::default());
        for v in 1..=3 {
            hand_over(&own, Some(&shared), v).expect("a waiter");
        }
        assert_eq!((s1.try_recv(), o1.try_recv(), s2.try_recv()), (Ok(1), Ok(2), Ok(3)));
    }

    #[test]
    fn cancelled_and_departed_waiters_are_skipped() {
        let q: Queue<u32> = Queue::default();
        let (t1, _r1) = q.push(Priority::default());
        let (_, r2) = q.push(Priority::default());
        let (_, mut r3) = q.push(Priority::default());
        assert!(q.cancel(t1));
        assert!(!q.cancel(t1));
        drop(r2);
        assert_eq!(hand_over(&q, None, 7), Ok(()));
        assert_eq!(r3.try_recv(), Ok(7));
        assert!(q.is_empty());
    }

    #[test]
    fn dynamic_maxconn_grows_with_the_backend_load() {
        // no minconn: the plain maxconn
        assert_eq!(dynamic_maxconn(100, 0, 1000, 0), 100);
        assert_eq!(dynamic_maxconn(100, 10, 1000, 0), 10);
        assert_eq!(dynamic_maxconn(100, 10, 1000, 500), 50);
        assert_eq!(dynamic_maxconn(100, 10, 1000, 50), 10);
        assert_eq!(dynamic_maxconn(100, 10, 1000, 1000), 100);
        assert_eq!(dynamic_maxconn(100, 10, 1000, 5000), 100);
    }
}
