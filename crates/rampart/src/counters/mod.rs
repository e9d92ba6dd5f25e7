//! Event counters that every worker thread bumps without contention: one cache line per
//! thread, written only by its thread, summed when read (the soft-stop report now, the
//! stats later). HAProxy counterpart: the `cum_conn` fields of fe_counters/be_counters.
//!
//! - `stats`: the counters of a proxy and of a server ([`stats::ProxyStats`],
//!   [`stats::ServerStats`]) that `show stat`, the stats page and Prometheus read
//! - `rate`: event rates, sampled once a second
//! - `histogram`: latency histograms per backend and server
//! - `capture`: the last invalid request of each frontend (`show errors`)
//!
//! What is counted lives here, below the runtime model that holds it; how it is
//! counted on the proxies and reported is `crate::stats`'s.

pub mod capture;
pub mod histogram;
pub mod rate;
pub mod stats;

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

thread_local! {
    /// This thread's slot in every [`Counter`]: worker thread `t` has slot `t + 1`;
    /// slot 0, shared by every other thread, is only ever added to atomically.
    static SLOT: Cell<usize> = const { Cell::new(0) };
}

/// Gives worker thread `thread` (0-based, below the `threads` the counters were made
/// for) its own slot.
pub fn set_thread_slot(thread: usize) {
    SLOT.with(|s| s.set(thread + 1));
}

/// This thread's slot: `t + 1` for worker thread `t`, 0 for any other thread (for
/// other per-thread shards, as `counters::histogram`'s).
#[inline]
pub fn thread_slot() -> usize {
    SLOT.with(Cell::get)
}

/// One thread's share of a counter, alone on its cache line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Slot(AtomicU64);

/// A monotonic event count.
#[derive(Debug)]
pub struct Counter {
    slots: Box<[Slot]>,
    /// The total when the counter was last cleared (`clear counters all`): subtracted
    /// on read, so that clearing never writes a thread's slot.
    base: AtomicU64,
}

impl Counter {
    pub fn new(threads: usize) -> Counter {
        Counter { slots: (0..=threads).map(|_| Slot::default()).collect(), base: AtomicU64::new(0) }
    }

    /// Counts one event.
    ///
    /// PERF: a plain load and store, no locked instruction: only the owning thread
    /// writes its slot. A thread without a slot of its own adds to the shared slot 0
    /// atomically.
    #[inline]
    pub fn inc(&self) {
        let slot = SLOT.with(Cell::get);
        match self.slots.get(slot) {
            Some(s) if slot > 0 => s.0.store(s.0.load(Ordering::Relaxed) + 1, Ordering::Relaxed),
            _ => {
                self.slots[0].0.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Counts `n` events (bytes), as [`Counter::inc`] does one.
    #[inline]
    pub fn add(&self, n: u64) {
        let slot = SLOT.with(Cell::get);
        match self.slots.get(slot) {
            Some(s) if slot > 0 => s.0.store(s.0.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed),
            _ => {
                self.slots[0].0.fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    /// The total over all threads (since the last [`Counter::clear`]).
    pub fn get(&self) -> u64 {
        self.sum().saturating_sub(self.base.load(Ordering::Relaxed))
    }

    /// Starts counting from 0 again.
    pub fn clear(&self) {
        self.base.store(self.sum(), Ordering::Relaxed);
    }

    fn sum(&self) -> u64 {
        self.slots.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
    }
}

/// Records `now` as the maximum if it is one.
///
/// PERF: a relaxed load per call; the store happens only while the maximum grows.
#[inline]
pub fn note_max(max: &AtomicU32, now: u32) {
    if now > max.load(Ordering::Relaxed) {
        max.fetch_max(now, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_maximum_only_grows() {
        let m = AtomicU32::new(0);
        note_max(&m, 3);
        note_max(&m, 2);
        assert_eq!(m.load(Ordering::Relaxed), 3);
        note_max(&m, 7);
        assert_eq!(m.load(Ordering::Relaxed), 7);
    }
    use std::sync::Arc;

    #[test]
    fn threads_count_in_their_own_slots_and_the_total_sums_them() {
        let c = Arc::new(Counter::new(3));
        let handles: Vec<_> = (0..3)
            .map(|t| {
                let c = c.clone();
                std::thread::spawn(move || {
                    set_thread_slot(t);
                    (0..1000).for_each(|_| c.inc());
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        c.inc(); // this thread: no slot of its own
        assert_eq!(c.get(), 3001);
        c.clear();
        assert_eq!(c.get(), 0);
        c.inc();
        assert_eq!(c.get(), 1);
    }

    #[test]
    fn a_slot_beyond_the_threads_falls_back_to_the_shared_one() {
        let c = Counter::new(2);
        std::thread::scope(|s| {
            s.spawn(|| {
                set_thread_slot(7);
                c.inc();
            });
        });
        assert_eq!(c.get(), 1);
    }
}
