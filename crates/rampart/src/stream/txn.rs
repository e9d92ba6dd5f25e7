//! The per-exchange state the stream keeps between analysers: the request and response
//! heads, the head of a response rampart builds, the transaction's variables. Drawn
//! from a per-thread pool so that their lists keep their capacity from one exchange to
//! the next (no allocation per request once warm), and an idle connection
//! holds none. HAProxy counterpart: `struct http_txn` (include/haproxy/http_ana-t.h).

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::action::state::StreamState;
use crate::buf::{Poolable, Pooled, Spares};
use crate::http::MsgHead;
use crate::sample::vars::{Scope, VarStore};

/// The state of one exchange.
#[derive(Debug)]
pub struct TxnData {
    pub req: MsgHead,
    /// The server's response.
    pub res: MsgHead,
    /// A response rampart builds (error page, `deny`, `return`, redirect ...).
    pub synth: MsgHead,
    /// `txn.` variables.
    pub vars_txn: VarStore,
    /// `req.` then `res.` variables.
    pub vars_reqres: VarStore,
    /// Rendered values on their way into a head.
    pub scratch: Vec<u8>,
    /// `strict-mode`: a failed rewrite aborts the stream (HAProxy's default: on).
    pub strict: bool,
    /// Addresses, captures, unique id, early hints and timeouts of the stream.
    pub st: StreamState,
}

impl Default for TxnData {
    fn default() -> Self {
        TxnData {
            req: MsgHead::default(),
            res: MsgHead::default(),
            synth: MsgHead::default(),
            vars_txn: VarStore::new(Scope::Txn),
            vars_reqres: VarStore::new(Scope::Req),
            scratch: Vec::new(),
            strict: true,
            st: StreamState::default(),
        }
    }
}

/// Streams numbered so far in the process (HAProxy's `global.req_count`).
static STREAMS: AtomicU64 = AtomicU64::new(0);

/// Stream numbers a thread takes from [`STREAMS`] at a time.
const UNIQ_BATCH: u64 = 64;

thread_local! {
    /// The next number this thread hands out, and the end of its batch.
    static UNIQ: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// The next stream number (`uniq_id`, `%rt`): unique in the process.
///
/// PERF: each thread takes numbers by batches, so streams do not contend on one
/// counter. COMPAT: with several threads the numbers are unique but not in the order
/// the streams started, as HAProxy's one shared counter gives; with one thread they
/// are the same (0, 1, 2 ...).
pub fn next_uniq_id() -> u64 {
    UNIQ.with(|u| {
        let (mut next, mut end) = u.get();
        if next == end {
            next = STREAMS.fetch_add(UNIQ_BATCH, Ordering::Relaxed);
            end = next + UNIQ_BATCH;
        }
        u.set((next + 1, end));
        next
    })
}

/// A [`TxnData`] drawn from the current thread's pool; returns itself on drop.
pub type Txn = Pooled<TxnData>;

impl Pooled<TxnData> {
    /// Takes a cleared transaction whose heads may hold `arena_max` bytes of rewrites.
    pub fn fresh(arena_max: usize) -> Txn {
        let mut txn = Txn::take();
        let data = &mut *txn;
        for head in [&mut data.req, &mut data.res, &mut data.synth] {
            head.reset();
            head.arena_max = arena_max;
        }
        txn.strict = true;
        txn
    }
}

impl Poolable for TxnData {
    fn pool() -> &'static std::thread::LocalKey<RefCell<Spares<Box<Self>>>> {
        thread_local! {
            static TXNS: RefCell<Spares<Box<TxnData>>> = const { RefCell::new(Spares::new()) };
        }
        &TXNS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_numbers_are_unique_across_threads_and_in_order_within_one() {
        let mine: Vec<u64> = (0..100).map(|_| next_uniq_id()).collect();
        assert!(mine.windows(2).all(|w| w[1] == w[0] + 1 || w[1] % UNIQ_BATCH == 0), "{mine:?}");
        let theirs = std::thread::spawn(|| (0..100).map(|_| next_uniq_id()).collect::<Vec<_>>()).join().unwrap();
        assert!(theirs.iter().all(|n| !mine.contains(n)));
    }
}
