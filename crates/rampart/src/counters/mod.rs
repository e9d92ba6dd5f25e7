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

/// Words of a cache line.
const WORDS: usize = 8;

/// The per-thread words of one or more groups of counters, one region per thread
/// slot: thread slot `s` (see [`SLOT`]) owns the `stride` words from `s * stride`, on
/// cache lines of its own (`stride` is whole lines), and a group of `n` counters takes
/// the same `n` words in every region. No two threads write the same cache line; the
/// groups of one block share theirs within a thread's region.
///
/// PERF: the words are an anonymous mapping ([`crate::sys::ZeroedWords`]): a page of
/// a thread's region holds memory only once that thread counted something there, so
/// the counters of servers no request reached cost no resident memory (20 000
/// backends of five servers, two threads: 96 MB of lines, all zero).
#[derive(Debug)]
struct Cells {
    words: crate::sys::ZeroedWords,
    /// Thread slots (worker threads + the shared slot 0).
    slots: usize,
}

impl Cells {
    /// Regions of `stride` words for `slots` thread slots.
    fn new(slots: usize, stride: usize) -> Cells {
        Cells { words: crate::sys::ZeroedWords::new(slots * stride), slots }
    }
}

/// `counters` words rounded up to whole cache lines.
fn whole_lines(counters: usize) -> usize {
    counters.max(1).div_ceil(WORDS) * WORDS
}

/// A monotonic event count.
///
/// PERF: 16 bytes (no total kept aside: `clear` subtracts from the shared slot), and
/// the counters of a whole runtime share blocks of per-thread words ([`CounterSlab`]):
/// 20 000 backends × 5 servers held 1.2 GB with a line per counter and thread.
#[derive(Debug)]
pub struct Counter {
    cells: Arc<Cells>,
    /// This counter's word in thread slot 0's region of `cells`.
    at: u32,
    /// Words from one thread slot's region to the next.
    stride: u32,
}

/// Serializes [`Counter::clear`]s (two at once would both subtract the total): the
/// CLI's `clear counters`, never the request path.
#[allow(clippy::disallowed_types)]
static CLEARING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Hands out counters that share their cache lines (one group per owner).
pub struct CounterGroup {
    cells: Arc<Cells>,
    stride: usize,
    /// The word of the next counter in slot 0's region, and the end of the group's.
    next: usize,
    end: usize,
}

impl CounterGroup {
    /// Room for `counters` counters of `threads` worker threads, in lines of its own.
    pub fn new(threads: usize, counters: usize) -> CounterGroup {
        let stride = whole_lines(counters);
        CounterGroup { cells: Arc::new(Cells::new(threads + 1, stride)), stride, next: 0, end: counters }
    }

    /// The next counter of the group (panics past the room it was made for: a
    /// programming error that every test building the owner catches).
    pub fn counter(&mut self) -> Counter {
        assert!(self.next < self.end, "counter group overflow");
        self.next += 1;
        let at = u32::try_from(self.next - 1).expect("counter block within 32 GiB");
        let stride = u32::try_from(self.stride).expect("counter block within 32 GiB");
        Counter { cells: self.cells.clone(), at, stride }
    }
}

/// Words of a thread slot's region in a block of a [`CounterSlab`] (128 KiB).
const SLAB_WORDS: usize = 16 * 1024;

/// Makes the counter groups of a whole runtime from shared blocks of words.
///
/// PERF: one mapping per block instead of one aligned allocation (and its `Arc`) per
/// group: 20 000 backends of five servers made 160 000 groups, a tenth of the time of
/// `rampart -c`, and the allocator's padding of each.
pub struct CounterSlab {
    threads: usize,
    /// Words per thread slot of a new block, at least ([`SLAB_WORDS`], or 0 for
    /// groups apart).
    block_words: usize,
    block: Arc<Cells>,
    /// The region size of `block`, and the words of each region handed out.
    stride: usize,
    used: usize,
}

impl CounterSlab {
    /// Groups for `threads` worker threads.
    pub fn new(threads: usize) -> CounterSlab {
        let block = Arc::new(Cells::new(threads + 1, 0));
        CounterSlab { threads, block_words: SLAB_WORDS, block, stride: 0, used: 0 }
    }

    /// A slab whose every group has lines of its own, as [`CounterGroup::new`] (for an
    /// owner made alone, as a server `add server` makes).
    pub fn apart(threads: usize) -> CounterSlab {
        CounterSlab { block_words: 0, ..CounterSlab::new(threads) }
    }

    /// The worker threads the groups are made for.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// A group of `counters` counters ([`CounterGroup::new`]), in the current block.
    pub fn group(&mut self, counters: usize) -> CounterGroup {
        // a slab apart (`block_words` 0) starts a block per group
        if self.block_words == 0 || self.used + counters > self.stride {
            self.stride = whole_lines(counters).max(self.block_words);
            self.block = Arc::new(Cells::new(self.threads + 1, self.stride));
            self.used = 0;
        }
        let group =
            CounterGroup { cells: self.block.clone(), stride: self.stride, next: self.used, end: self.used + counters };
        self.used += counters;
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
        self.word().add(n);
    }

    /// The total over all threads (since the last [`Counter::clear`]).
    pub fn get(&self) -> u64 {
        self.word().get()
    }

    /// Starts counting from 0 again.
    pub fn clear(&self) {
        self.word().clear();
    }

    #[inline]
    fn word(&self) -> Word<'_> {
        Word { cells: &self.cells, at: self.at as usize, stride: self.stride as usize }
    }
}

/// The counters of one owner (a server's), held by one handle and named by their
/// number ([`CounterSet::at`]).
///
/// PERF: 16 bytes for all of them: a [`Counter`] each took 16 (24 before), 288 bytes
/// per server (20 000 backends of five servers: 27 MB).
#[derive(Debug)]
pub struct CounterSet {
    cells: Arc<Cells>,
    /// The first counter's word in thread slot 0's region, and the region size.
    first: u32,
    stride: u32,
}

impl CounterSet {
    /// The counters of `group`, all of them (its room).
    pub fn new(group: CounterGroup) -> CounterSet {
        let first = u32::try_from(group.next).expect("counter block within 32 GiB");
        let stride = u32::try_from(group.stride).expect("counter block within 32 GiB");
        CounterSet { cells: group.cells, first, stride }
    }

    /// Counter `i` of the set (below the room of its group: the owner's constants).
    #[inline]
    pub fn at(&self, i: usize) -> CounterRef<'_> {
        CounterRef(Word { cells: &self.cells, at: self.first as usize + i, stride: self.stride as usize })
    }
}

/// One counter of a [`CounterSet`], as a [`Counter`] is used.
#[derive(Debug, Clone, Copy)]
pub struct CounterRef<'a>(Word<'a>);

impl CounterRef<'_> {
    /// [`Counter::inc`].
    #[inline]
    pub fn inc(self) {
        self.0.add(1);
    }

    /// [`Counter::add`].
    #[inline]
    pub fn add(self, n: u64) {
        self.0.add(n);
    }

    /// [`Counter::get`].
    pub fn get(self) -> u64 {
        self.0.get()
    }

    /// [`Counter::clear`].
    pub fn clear(self) {
        self.0.clear();
    }
}

/// Where one counter's words are: its word in slot 0's region of `cells`, and the
/// words from one slot's region to the next.
#[derive(Debug, Clone, Copy)]
struct Word<'a> {
    cells: &'a Cells,
    at: usize,
    stride: usize,
}

impl Word<'_> {
    #[inline]
    fn add(self, n: u64) {
        let slot = SLOT.with(Cell::get);
        if slot > 0 && slot < self.cells.slots {
            let w = self.slot(slot);
            w.store(w.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
        } else {
            self.slot(0).fetch_add(n, Ordering::Relaxed);
        }
    }

    fn get(self) -> u64 {
        // a read racing a clear may see the subtraction before a thread's word it
        // covered: never below 0
        u64::try_from(self.sum() as i64).unwrap_or(0)
    }

    /// Starts from 0 again: the total is taken from the shared slot, whose word alone
    /// other threads may write at once (atomically), so no thread's count is lost or
    /// written by another.
    fn clear(self) {
        let _one_at_a_time = CLEARING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.slot(0).fetch_sub(self.sum(), Ordering::Relaxed);
    }

    /// The counter's word in thread slot `slot`'s region.
    #[inline]
    fn slot(&self, slot: usize) -> &AtomicU64 {
        &self.cells.words[self.at + slot * self.stride]
    }

    /// The words of every slot, added modulo 2^64 (slot 0 may hold less than 0).
    fn sum(&self) -> u64 {
        (0..self.cells.slots).fold(0u64, |t, s| t.wrapping_add(self.slot(s).load(Ordering::Relaxed)))
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
        assert_eq!(cs[0].cells.words.len(), 48);
        assert_eq!(cs[9].stride, 16);
        cs[4].clear();
        assert_eq!(cs[4].get(), 0);
        assert_eq!(cs[5].get(), 18);
        // counting goes on from 0, in the threads' slots and the shared one
        std::thread::scope(|sc| {
            sc.spawn(|| {
                set_thread_slot(1);
                cs[4].add(4);
            });
        });
        cs[4].inc();
        assert_eq!(cs[4].get(), 5);
        cs[4].clear();
        cs[4].clear();
        assert_eq!(cs[4].get(), 0, "a second clear finds nothing more to subtract");
    }

    #[test]
    fn groups_of_a_slab_share_blocks_and_each_thread_keeps_its_own_lines() {
        let mut slab = CounterSlab::new(2);
        let mut a = slab.group(3);
        let mut b = slab.group(9);
        let (a0, a2) = (a.counter(), {
            a.counter();
            a.counter()
        });
        let bs: Vec<Counter> = (0..9).map(|_| b.counter()).collect();
        assert!(Arc::ptr_eq(&a0.cells, &bs[0].cells), "one block");
        // a region of SLAB_WORDS per thread slot; b follows a in each, unpadded
        let stride = SLAB_WORDS as u32;
        assert_eq!((a0.at, a2.at, a0.stride), (0, 2, stride));
        assert_eq!((bs[0].at, bs[8].at, bs[0].stride), (3, 11, stride));
        let lines = |c: &Counter| (0..3).map(|s| (c.at as usize + s * c.stride as usize) / WORDS).collect::<Vec<_>>();
        let region = SLAB_WORDS / WORDS;
        assert_eq!(lines(&a2), [0, region, 2 * region]);
        assert_eq!(lines(&bs[8]), [1, region + 1, 2 * region + 1]);
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
        let mut big = slab.group(SLAB_WORDS + 3);
        let c = big.counter();
        assert!(!Arc::ptr_eq(&c.cells, &a0.cells));
        assert_eq!(c.cells.words.len(), 3 * whole_lines(SLAB_WORDS + 3));
        // the next group does not fit what the big one left: a block of the usual size
        let d = slab.group(6).counter();
        assert!(!Arc::ptr_eq(&c.cells, &d.cells));
        assert_eq!((d.at, d.cells.words.len()), (0, 3 * SLAB_WORDS));
        let mut apart = CounterSlab::apart(1);
        let (x, y) = (apart.group(2).counter(), apart.group(2).counter());
        assert!(!Arc::ptr_eq(&x.cells, &y.cells));
        assert_eq!(x.cells.words.len(), 16);
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
