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

/// The per-thread words of one or more groups of counters. A group of `stride` words
/// (its size rounded up to whole lines) takes `slots * stride` consecutive words:
/// thread slot `s` (see [`SLOT`]) owns the `stride` words at `s * stride` from the
/// group's start, on lines of its own, so no two threads write the same cache line.
#[derive(Debug)]
struct Cells {
    lines: Box<[Line]>,
    /// Thread slots (worker threads + the shared slot 0).
    slots: usize,
}

impl Cells {
    fn new(slots: usize, lines: usize) -> Cells {
        Cells { lines: (0..lines).map(|_| Line::default()).collect(), slots }
    }

    #[inline]
    fn word(&self, w: usize) -> &AtomicU64 {
        &self.lines[w / WORDS].0[w % WORDS]
    }
}

/// Words per thread slot of a group of `counters`: whole lines.
fn stride_of(counters: usize) -> usize {
    counters.max(1).div_ceil(WORDS) * WORDS
}

/// A monotonic event count.
///
/// PERF: the counters of one owner (a server's, a proxy's) share their per-thread
/// cache lines ([`CounterGroup`]): a server's 18 counters take 3 lines per thread
/// instead of 18 (20 000 backends × 5 servers held 1.2 GB, mostly these); and the
/// groups built together share blocks of lines ([`CounterSlab`]).
#[derive(Debug)]
pub struct Counter {
    cells: Arc<Cells>,
    /// This counter's word in thread slot 0's share of `cells`.
    at: u32,
    /// Words from one thread slot's share to the next.
    stride: u32,
    /// The total when the counter was last cleared (`clear counters all`): subtracted
    /// on read, so that clearing never writes a thread's slot.
    base: AtomicU64,
}

/// Hands out counters that share their cache lines (one group per owner).
pub struct CounterGroup {
    cells: Arc<Cells>,
    /// The group's first word in `cells`.
    first: usize,
    stride: usize,
    next: usize,
}

impl CounterGroup {
    /// Room for `counters` counters of `threads` worker threads, in lines of its own.
    pub fn new(threads: usize, counters: usize) -> CounterGroup {
        let (slots, stride) = (threads + 1, stride_of(counters));
        let cells = Arc::new(Cells::new(slots, slots * stride / WORDS));
        CounterGroup { cells, first: 0, stride, next: 0 }
    }

    /// The next counter of the group (panics past its room, the size it was made for
    /// rounded up to whole cache lines: a programming error that every test building
    /// the owner would catch).
    pub fn counter(&mut self) -> Counter {
        assert!(self.next < self.stride, "counter group overflow");
        self.next += 1;
        let at = u32::try_from(self.first + self.next - 1).expect("counter slab within 32 GiB");
        Counter { cells: self.cells.clone(), at, stride: self.stride as u32, base: AtomicU64::new(0) }
    }
}

/// Lines per block of a [`CounterSlab`] (64 KiB).
const SLAB_LINES: usize = 1024;

/// Makes the counter groups of a whole runtime from shared blocks of lines.
///
/// PERF: one allocation per 64 KiB block instead of one aligned allocation (and its
/// `Arc`) per group: 20 000 backends of five servers made 160 000 groups, a tenth of
/// the time of `rampart -c`, and the allocator's padding of each.
pub struct CounterSlab {
    threads: usize,
    /// Lines of a new block, at least ([`SLAB_LINES`], or 0 for groups apart).
    block_lines: usize,
    block: Arc<Cells>,
    /// Lines of `block` handed out.
    used: usize,
}

impl CounterSlab {
    /// Groups for `threads` worker threads.
    pub fn new(threads: usize) -> CounterSlab {
        CounterSlab { threads, block_lines: SLAB_LINES, block: Arc::new(Cells::new(threads + 1, 0)), used: 0 }
    }

    /// A slab whose every group has lines of its own, as [`CounterGroup::new`] (for an
    /// owner made alone, as a server `add server` makes).
    pub fn apart(threads: usize) -> CounterSlab {
        CounterSlab { block_lines: 0, ..CounterSlab::new(threads) }
    }

    /// The worker threads the groups are made for.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// A group of `counters` counters ([`CounterGroup::new`]), in the current block.
    pub fn group(&mut self, counters: usize) -> CounterGroup {
        let (slots, stride) = (self.threads + 1, stride_of(counters));
        let lines = slots * stride / WORDS;
        if self.used + lines > self.block.lines.len() {
            self.block = Arc::new(Cells::new(slots, lines.max(self.block_lines)));
            self.used = 0;
        }
        let group = CounterGroup { cells: self.block.clone(), first: self.used * WORDS, stride, next: 0 };
        self.used += lines;
        group
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
            let w = self.word(slot);
            w.store(w.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
        } else {
            self.word(0).fetch_add(n, Ordering::Relaxed);
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

    /// This counter's word in thread slot `slot`'s share.
    #[inline]
    fn word(&self, slot: usize) -> &AtomicU64 {
        self.cells.word(self.at as usize + slot * self.stride as usize)
    }

    fn sum(&self) -> u64 {
        (0..self.cells.slots).map(|s| self.word(s).load(Ordering::Relaxed)).sum()
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
        assert_eq!(cs[9].stride, 16);
        cs[4].clear();
        assert_eq!(cs[4].get(), 0);
        assert_eq!(cs[5].get(), 18);
    }

    #[test]
    fn groups_of_a_slab_share_blocks_and_keep_their_own_lines() {
        let mut slab = CounterSlab::new(2);
        let mut a = slab.group(3);
        let mut b = slab.group(9);
        let (a0, a2) = (a.counter(), {
            a.counter();
            a.counter()
        });
        let bs: Vec<Counter> = (0..9).map(|_| b.counter()).collect();
        assert!(Arc::ptr_eq(&a0.cells, &bs[0].cells), "one block");
        // a: one line per slot (lines 0-2); b: two lines per slot, from line 3
        assert_eq!((a0.at, a2.at, a0.stride), (0, 2, 8));
        assert_eq!((bs[0].at, bs[8].at, bs[0].stride), (24, 32, 16));
        let lines = |c: &Counter| (0..3).map(|s| (c.at as usize + s * c.stride as usize) / WORDS).collect::<Vec<_>>();
        assert_eq!(lines(&a2), [0, 1, 2]);
        assert_eq!(lines(&bs[8]), [4, 6, 8]);
        std::thread::scope(|sc| {
            for t in 0..2 {
                let (a2, bs) = (&a2, &bs);
                sc.spawn(move || {
                    set_thread_slot(t);
                    a2.add(10);
                    bs.iter().for_each(|c| c.add(t as u64 + 1));
                });
            }
        });
        a2.inc();
        assert_eq!((a0.get(), a2.get()), (0, 21));
        assert!(bs.iter().all(|c| c.get() == 3));
        // a group larger than what is left of a block starts a new one
        let mut big = slab.group(8 * SLAB_LINES / 3);
        let c = big.counter();
        assert!(!Arc::ptr_eq(&c.cells, &a0.cells));
        assert_eq!(c.cells.lines.len(), 3 * stride_of(8 * SLAB_LINES / 3) / WORDS);
        assert!(c.cells.lines.len() > SLAB_LINES);
        let mut apart = CounterSlab::apart(1);
        let (x, y) = (apart.group(2).counter(), apart.group(2).counter());
        assert!(!Arc::ptr_eq(&x.cells, &y.cells));
        assert_eq!(x.cells.lines.len(), 2);
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
