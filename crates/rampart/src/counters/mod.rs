//! Event counters that every worker thread bumps without contention: one cache line per
//! thread, written only by its thread, summed when read (the soft-stop report now, the
//! stats later). HAProxy counterpart: the `cum_conn` fields of fe_counters/be_counters.
//!
//! - `stats`: the counters of a proxy and of a server ([`stats::ProxyStats`],
//!   [`stats::ServerStats`]) that `show stat`, the stats page and Prometheus read
//! - `rate`: event rates, sampled once a second
//! - `accept_rate`: the process-wide accept limit (`maxconnrate`, `maxsessrate`)
//! - `histogram`: latency histograms per backend and server
//! - `capture`: the last invalid request of each frontend (`show errors`)
//!
//! What is counted lives here, below the runtime model that holds it; how it is
//! counted on the proxies and reported is `crate::stats`'s.

pub mod accept_rate;
pub mod capture;
pub mod histogram;
pub mod rate;
pub mod stats;

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

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

/// Eight counters' shares of one thread, on one cache line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Line([AtomicU64; WORDS]);

const WORDS: usize = 8;

/// The per-thread words of a group of counters: thread slot `s` (see [`SLOT`]) owns
/// `stride` consecutive words starting on a line of its own, so no two threads write
/// the same cache line.
#[derive(Debug)]
struct Cells {
    lines: Box<[Line]>,
    /// Words per thread slot: the group's size rounded up to whole lines.
    stride: usize,
    /// Thread slots (worker threads + the shared slot 0).
    slots: usize,
}

impl Cells {
    fn new(threads: usize, counters: usize) -> Cells {
        let stride = counters.max(1).div_ceil(WORDS) * WORDS;
        let slots = threads + 1;
        Cells { lines: (0..slots * stride / WORDS).map(|_| Line::default()).collect(), stride, slots }
    }

    #[inline]
    fn word(&self, slot: usize, at: usize) -> &AtomicU64 {
        let w = slot * self.stride + at;
        &self.lines[w / WORDS].0[w % WORDS]
    }
}

/// A monotonic event count.
///
/// PERF: the counters of one owner (a server's, a proxy's) share their per-thread
/// cache lines ([`CounterGroup`]): a server's 18 counters take 3 lines per thread
/// instead of 18 (20 000 backends × 5 servers held 1.2 GB, mostly these).
#[derive(Debug)]
pub struct Counter {
    cells: Arc<Cells>,
    /// This counter's word in each thread's share of `cells`.
    at: usize,
    /// The total when the counter was last cleared (`clear counters all`): subtracted
    /// on read, so that clearing never writes a thread's slot.
    base: AtomicU64,
}

/// Hands out counters that share their cache lines (one group per owner).
pub struct CounterGroup {
    cells: Arc<Cells>,
    next: usize,
}

impl CounterGroup {
    /// Room for `counters` counters of `threads` worker threads.
    pub fn new(threads: usize, counters: usize) -> CounterGroup {
        CounterGroup { cells: Arc::new(Cells::new(threads, counters)), next: 0 }
    }

    /// The next counter of the group (panics past its room, the size it was made for
    /// rounded up to whole cache lines: a programming error that every test building
    /// the owner would catch).
    pub fn counter(&mut self) -> Counter {
        assert!(self.next < self.cells.stride, "counter group overflow");
        self.next += 1;
        Counter { cells: self.cells.clone(), at: self.next - 1, base: AtomicU64::new(0) }
    }
}

impl Counter {
    /// A counter alone in its group.
    pub fn new(threads: usize) -> Counter {
        CounterGroup::new(threads, 1).counter()
    }

    /// Counts one event.
    ///
    /// PERF: a plain load and store, no locked instruction: only the owning thread
    /// writes its slot. A thread without a slot of its own adds to the shared slot 0
    /// atomically.
    #[inline]
    pub fn inc(&self) {
        self.add(1);
    }

    /// Counts `n` events (bytes), as [`Counter::inc`] does one.
    #[inline]
    pub fn add(&self, n: u64) {
        let slot = SLOT.with(Cell::get);
        if slot > 0 && slot < self.cells.slots {
            let w = self.cells.word(slot, self.at);
            w.store(w.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
        } else {
            self.cells.word(0, self.at).fetch_add(n, Ordering::Relaxed);
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
        (0..self.cells.slots).map(|s| self.cells.word(s, self.at).load(Ordering::Relaxed)).sum()
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
    fn counters_of_a_group_keep_their_own_counts_on_every_thread() {
        let mut g = CounterGroup::new(2, 10);
        let cs: Vec<Counter> = (0..10).map(|_| g.counter()).collect();
        let cs = Arc::new(cs);
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let cs = cs.clone();
                std::thread::spawn(move || {
                    set_thread_slot(t);
                    for (i, c) in cs.iter().enumerate() {
                        c.add((i as u64 + 1) * (t as u64 + 1));
                    }
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        cs[9].inc(); // this thread has no slot: the shared one
        let got: Vec<u64> = cs.iter().map(Counter::get).collect();
        assert_eq!(got, vec![3, 6, 9, 12, 15, 18, 21, 24, 27, 31]);
        // two lines per thread slot (10 words rounded up to 16), three slots
        assert_eq!(cs[0].cells.lines.len(), 6);
        cs[4].clear();
        assert_eq!(cs[4].get(), 0);
        assert_eq!(cs[5].get(), 18);
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
