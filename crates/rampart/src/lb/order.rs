//! The servers of a `leastconn` or `prefix-affinity` backend ordered by load, so that
//! the least loaded pick is O(log n) instead of a scan of every server.
//! HAProxy counterpart: the ebtree of src/lb_fwlc.c (`fwlc_queue_srv`), which it
//! updates under the backend's lock on every connection change.
//!
//! A tournament tree over the servers in index order: each leaf holds a server's
//! [`leastconn::key`](super::leastconn::key), each inner node the smallest
//! `(key, server)` below it. It takes no lock: a stream start or end updates its
//! server's leaf and the nodes above it with compare-and-swap, so picks and updates go
//! on on every thread at once. Every node carries a version that each write bumps; a
//! writer recomputes a node from its children read *after* loading the node, and its
//! swap fails if anyone wrote the node meanwhile, so the last successful write of a
//! node always saw its children's latest values (no stale minimum survives a race).
//!
//! The streams per server are counted here ([`Loads`]), in chunks that never move, so
//! that a tree rebuilt for an added server loses no start or end (see
//! [`Order::refresh_all`]).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

use super::leastconn;

/// Servers a tree can order: the node packs the server index in 16 bits (larger
/// backends scan, as before).
pub const MAX_SERVERS: usize = 0xffff;

/// A node's key when no server below it is in the tables.
const NONE: u32 = u32::MAX;

/// `key` (32 bits) | `server` (16) | `version` (16): the upper 48 bits order nodes.
fn pack(key: u32, srv: usize, ver: u64) -> u64 {
    (u64::from(key) << 32) | ((srv as u64 & 0xffff) << 16) | (ver & 0xffff)
}

/// What orders two nodes: the key, then the server index.
fn rank(v: u64) -> u64 {
    v >> 16
}

fn key_of(v: u64) -> u32 {
    (v >> 32) as u32
}

fn srv_of(v: u64) -> usize {
    ((v >> 16) & 0xffff) as usize
}

/// The tree; its leaf `i` is server `i`.
#[derive(Debug)]
pub struct Order {
    /// Node 1 is the root, node `k` has children `2k` and `2k + 1`, leaves start at
    /// `cap`.
    nodes: Box<[AtomicU64]>,
    /// Leaves (a power of two).
    cap: usize,
}

impl Order {
    /// A tree for up to `n` servers (rounded up to a power of two), all out of it.
    pub fn new(n: usize) -> Order {
        let cap = n.next_power_of_two().max(2);
        Order { nodes: (0..2 * cap).map(|_| AtomicU64::new(pack(NONE, 0, 0))).collect(), cap }
    }

    /// Servers the tree can hold.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Recomputes server `i`'s leaf from its current `load` and `weight` (0: out of the
    /// tables), then the nodes above it. Both are read inside the retry loop.
    pub fn refresh(&self, i: usize, load: impl Fn() -> u32, weight: impl Fn() -> u32) {
        if i >= self.cap {
            return;
        }
        let mut k = self.cap + i;
        let changed = self.swap_in(k, || {
            let w = weight();
            if w == 0 {
                pack(NONE, i, 0)
            } else {
                pack(leastconn::key(load(), w).min(u64::from(NONE - 1)) as u32, i, 0)
            }
        });
        if !changed {
            return;
        }
        while k > 1 {
            k /= 2;
            let (l, r) = (&self.nodes[2 * k], &self.nodes[2 * k + 1]);
            let min = || {
                let (a, b) = (l.load(Ordering::SeqCst), r.load(Ordering::SeqCst));
                if rank(a) <= rank(b) {
                    a
                } else {
                    b
                }
            };
            if !self.swap_in(k, min) {
                return;
            }
        }
    }

    /// Stores `value()` (version aside) in node `k`, computed after loading the node
    /// and retried until no other write came between. Whether its rank changed (when
    /// it did not, the nodes above need nothing from this writer).
    fn swap_in(&self, k: usize, value: impl Fn() -> u64) -> bool {
        let node = &self.nodes[k];
        loop {
            let old = node.load(Ordering::SeqCst);
            let new = (value() & !0xffff) | ((old + 1) & 0xffff);
            if node.compare_exchange(old, new, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                return rank(old) != rank(new);
            }
        }
    }

    /// Recomputes every leaf of the first `n` servers (a new or grown tree).
    pub fn refresh_all(&self, n: usize, load: impl Fn(usize) -> u32, weight: impl Fn(usize) -> u32) {
        for i in 0..n.min(self.cap) {
            self.refresh(i, || load(i), || weight(i));
        }
    }

    /// The usable server with the lowest key; among equal keys, the first at or after
    /// `start` in index order, wrapping (the scan of [`leastconn::pick`] started at
    /// `start` picks the same). O(log n) plus the unusable servers met on the way.
    pub fn pick(&self, start: usize, usable: impl Fn(usize) -> bool) -> Option<usize> {
        // the root names the least loaded server: usable, it is the minimum
        let root = self.nodes[1].load(Ordering::Relaxed);
        let best = match key_of(root) != NONE && usable(srv_of(root)) {
            true => root,
            false => self.min_usable(1, u64::MAX, &usable)?,
        };
        let key = key_of(best);
        let at = |from: usize, to: usize| self.first_with(1, 0, self.cap, from, to, key, &usable);
        Some(at(start, self.cap).or_else(|| at(0, start.min(self.cap))).unwrap_or(srv_of(best)))
    }

    /// The smallest usable leaf below node `k` whose rank is below `bound`: descends the
    /// smaller child first, and the other only when it may still hold a smaller one.
    fn min_usable(&self, k: usize, bound: u64, usable: &impl Fn(usize) -> bool) -> Option<u64> {
        let v = self.nodes[k].load(Ordering::Relaxed);
        if key_of(v) == NONE || rank(v) >= bound {
            return None;
        }
        if k >= self.cap {
            return usable(k - self.cap).then_some(v);
        }
        let (a, b) = (self.nodes[2 * k].load(Ordering::Relaxed), self.nodes[2 * k + 1].load(Ordering::Relaxed));
        let (first, second) = if rank(a) <= rank(b) { (2 * k, 2 * k + 1) } else { (2 * k + 1, 2 * k) };
        let found = self.min_usable(first, bound, usable);
        let bound = found.map_or(bound, rank);
        match self.min_usable(second, bound, usable) {
            Some(v) => Some(v),
            None => found,
        }
    }

    /// The first usable server in `from..to` whose key is at most `key`, below node `k`
    /// which covers the servers `lo..hi`.
    #[allow(clippy::too_many_arguments)] // a range search: node, its range, the range sought
    fn first_with(
        &self,
        k: usize,
        lo: usize,
        hi: usize,
        from: usize,
        to: usize,
        key: u32,
        usable: &impl Fn(usize) -> bool,
    ) -> Option<usize> {
        if hi <= from || lo >= to || key_of(self.nodes[k].load(Ordering::Relaxed)) > key {
            return None;
        }
        if k >= self.cap {
            return usable(lo).then_some(lo);
        }
        let mid = lo + (hi - lo) / 2;
        self.first_with(2 * k, lo, mid, from, to, key, usable)
            .or_else(|| self.first_with(2 * k + 1, mid, hi, from, to, key, usable))
    }
}

/// Streams per server, as counted by [`Loads::add`]: chunk 0 holds servers 0..64,
/// chunk `c` the next `64 << (c - 1)`, allocated once and never moved.
#[derive(Debug, Default)]
pub struct Loads {
    chunks: [OnceLock<Box<[AtomicU32]>>; 11],
    /// Streams of all servers (HAProxy's `served` of the backend, for bounded loads).
    total: AtomicU64,
}

const CHUNK0: usize = 64;

/// (chunk, offset) of server `i`.
fn chunk_of(i: usize) -> (usize, usize) {
    if i < CHUNK0 {
        return (0, i);
    }
    let c = (usize::BITS - (i / CHUNK0).leading_zeros()) as usize;
    (c, i - (CHUNK0 << (c - 1)))
}

fn chunk_len(c: usize) -> usize {
    if c == 0 {
        CHUNK0
    } else {
        CHUNK0 << (c - 1)
    }
}

impl Loads {
    /// Makes room for servers `0..n` (at most [`MAX_SERVERS`]): allocates the chunks,
    /// off the request path.
    pub fn reserve(&self, n: usize) {
        if n == 0 {
            return;
        }
        let (last, _) = chunk_of(n.min(MAX_SERVERS) - 1);
        for (c, slot) in self.chunks.iter().enumerate().take(last + 1) {
            slot.get_or_init(|| (0..chunk_len(c)).map(|_| AtomicU32::new(0)).collect());
        }
    }

    fn counter(&self, i: usize) -> Option<&AtomicU32> {
        let (c, at) = chunk_of(i);
        self.chunks.get(c)?.get()?.get(at)
    }

    /// Streams server `i` serves now.
    pub fn get(&self, i: usize) -> u32 {
        self.counter(i).map_or(0, |c| c.load(Ordering::SeqCst))
    }

    /// One stream more (`up`) or less on server `i`.
    pub fn add(&self, i: usize, up: bool) {
        if let Some(c) = self.counter(i) {
            if up {
                c.fetch_add(1, Ordering::SeqCst);
                self.total.fetch_add(1, Ordering::Relaxed);
            } else {
                // an end without its start would wrap: keep 0
                if c.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| l.checked_sub(1)).is_ok() {
                    self.total.fetch_sub(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Streams of all servers.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests;
