//! The per-exchange state the stream keeps between analysers: the request and response
//! heads. Drawn from a per-thread pool so that their lists keep their capacity from one
//! exchange to the next (no allocation per request once warm), and an idle connection
//! holds none. HAProxy counterpart: `struct http_txn` (include/haproxy/http_ana-t.h).

use std::cell::RefCell;

use crate::http::MsgHead;

/// Transactions kept per thread.
const POOL_MAX: usize = 256;

thread_local! {
    // Boxed on purpose: an exchange holds a pointer, not two heads, in its future.
    #[allow(clippy::vec_box)]
    static POOL: RefCell<Vec<Box<TxnData>>> = const { RefCell::new(Vec::new()) };
}

/// The heads of one exchange.
#[derive(Debug, Default)]
pub struct TxnData {
    pub req: MsgHead,
    pub res: MsgHead,
}

/// A [`TxnData`] drawn from the current thread's pool; returns itself on drop.
#[derive(Debug)]
pub struct Txn(Option<Box<TxnData>>);

impl Txn {
    /// Takes a cleared transaction whose heads may hold `arena_max` bytes of rewrites.
    pub fn take(arena_max: usize) -> Txn {
        let mut data = POOL.with(|p| p.borrow_mut().pop()).unwrap_or_default();
        data.req.reset();
        data.res.reset();
        data.req.arena_max = arena_max;
        data.res.arena_max = arena_max;
        Txn(Some(data))
    }
}

impl std::ops::Deref for Txn {
    type Target = TxnData;
    fn deref(&self) -> &TxnData {
        self.0.as_ref().expect("present until drop")
    }
}

impl std::ops::DerefMut for Txn {
    fn deref_mut(&mut self) -> &mut TxnData {
        self.0.as_mut().expect("present until drop")
    }
}

impl Drop for Txn {
    fn drop(&mut self) {
        if let Some(data) = self.0.take() {
            let _ = POOL.try_with(|p| {
                let mut p = p.borrow_mut();
                if p.len() < POOL_MAX {
                    p.push(data);
                }
            });
        }
    }
}
