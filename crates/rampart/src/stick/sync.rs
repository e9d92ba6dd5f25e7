//! What a replicated table keeps for the peers protocol: a counter of local updates
//! (each change of an entry made here takes the next number, kept in the entry), and
//! the wake-up of the peer sessions that push them.
//! HAProxy counterpart: `localupdate`, the `updates` tree and `stktable_touch_local()`
//! (src/stick_table.c), the sync task wake-up of src/peers.c.
//!
//! PERF: a table without `peers` has no `TableSync` (one branch where entries change);
//! with one, a change costs a shard lock and an ordered-map move, and wakes the
//! sessions once per batch they push (`pending`), never once per request.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// The replication state of one table.
#[derive(Debug)]
pub struct TableSync {
    /// The last update number given (0: none yet).
    localupdate: AtomicU64,
    /// Changes happened since the sessions were last woken.
    pending: AtomicBool,
    /// Wakes the peer sessions waiting for local changes (shared by the tables of a
    /// `peers` section).
    pub changed: Arc<tokio::sync::Notify>,
}

impl TableSync {
    pub fn new(changed: Arc<tokio::sync::Notify>) -> TableSync {
        TableSync { localupdate: AtomicU64::new(0), pending: AtomicBool::new(false), changed }
    }

    /// The last update number given.
    pub fn localupdate(&self) -> u64 {
        self.localupdate.load(Relaxed)
    }

    /// The number of a new local change.
    pub(super) fn next(&self) -> u64 {
        self.localupdate.fetch_add(1, Relaxed) + 1
    }

    /// Wakes the sessions, unless they were woken since they last pushed.
    pub(super) fn wake(&self) {
        if !self.pending.swap(true, Relaxed) {
            self.changed.notify_waiters();
        }
    }

    /// Called by a session before it pushes: later changes wake it again.
    pub fn rearm(&self) {
        self.pending.store(false, Relaxed);
    }
}
