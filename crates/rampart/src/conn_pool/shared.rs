//! The pools of all threads, so that a thread with no suitable idle connection of its
//! own takes one from another thread's pool. Each thread's pool sits behind its own
//! lock, which only its thread takes in the usual case (one uncontended lock per take
//! or put); another thread only tries it (`try_lock`, skipping a busy pool), and
//! skips an empty pool without touching the lock at all.
//! HAProxy counterpart: the takeover loop of `conn_backend_get()` (src/backend.c),
//! `pool-low-conn`, `tune.idle-pool.shared`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, TryLockError};

use arc_swap::ArcSwapOption;

use super::pool::{Entry, Pool};
use super::ConnKey;

// PERF: one lock per take or put on the request path, taken by the pool's own thread
// only (uncontended: one atomic swap each way); another thread merely tries it, and
// only when its own pool had nothing that fits.
#[allow(clippy::disallowed_types)]
type Lock<T> = std::sync::Mutex<T>;

/// One thread's pool, reachable from the others.
#[derive(Debug)]
pub struct ThreadPool<C> {
    pool: Lock<Pool<C>>,
    /// Connections in `pool`, read without its lock: other threads skip an empty pool.
    idle: AtomicUsize,
}

impl<C> Default for ThreadPool<C> {
    fn default() -> Self {
        ThreadPool { pool: Lock::new(Pool::default()), idle: AtomicUsize::new(0) }
    }
}

impl<C> ThreadPool<C> {
    /// Runs `f` on the pool under its lock.
    pub fn with<R>(&self, f: impl FnOnce(&mut Pool<C>) -> R) -> R {
        let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        let r = f(&mut pool);
        self.idle.store(pool.len(), Ordering::Relaxed);
        r
    }

    /// [`ThreadPool::with`], unless another thread holds the lock (`None`).
    fn try_with<R>(&self, f: impl FnOnce(&mut Pool<C>) -> R) -> Option<R> {
        let mut pool = match self.pool.try_lock() {
            Ok(p) => p,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        let r = f(&mut pool);
        self.idle.store(pool.len(), Ordering::Relaxed);
        Some(r)
    }
}

/// The pools of the running threads.
#[derive(Debug)]
pub struct Registry<C> {
    pools: ArcSwapOption<Vec<Arc<ThreadPool<C>>>>,
}

impl<C> Registry<C> {
    pub const fn new() -> Registry<C> {
        Registry { pools: ArcSwapOption::const_empty() }
    }

    /// Idle connections in the pools of all threads (each pool's count as of its last
    /// change: no lock taken).
    pub fn idle_total(&self) -> usize {
        let pools = self.pools.load();
        pools.as_deref().into_iter().flatten().map(|p| p.idle.load(Ordering::Relaxed)).sum()
    }

    /// A new pool for the calling thread, visible to the others.
    pub fn join(&self) -> Arc<ThreadPool<C>> {
        let mine = Arc::new(ThreadPool::default());
        self.pools.rcu(|pools| {
            let mut pools = pools.as_deref().cloned().unwrap_or_default();
            pools.push(mine.clone());
            Some(Arc::new(pools))
        });
        mine
    }

    /// Hides `mine` from the other threads (its thread ends).
    pub fn leave(&self, mine: &Arc<ThreadPool<C>>) {
        self.pools.rcu(|pools| {
            let mut pools = pools.as_deref().cloned().unwrap_or_default();
            pools.retain(|p| !Arc::ptr_eq(p, mine));
            Some(Arc::new(pools))
        });
    }

    /// Closes the idle connections to `server` in the pools of every thread (each
    /// pool's lock taken in turn; a socket closed from another thread than its event
    /// loop's leaves that loop's registry, which tokio allows).
    pub fn close_server(&self, server: usize) {
        let pools = self.pools.load();
        for p in pools.as_deref().into_iter().flatten() {
            p.with(|pool| pool.close_server(server));
        }
    }

    /// Takes a connection to `server` opened for `key` that carried at least
    /// `min_uses` requests from the pool of another thread than `mine`'s, looking at
    /// the threads in turn from the one after it. With `low` above 0 (`pool-low-conn`)
    /// only when all threads together keep at least `low` idle connections to the
    /// server. The connection still belongs to its old thread's event loop.
    pub fn take_over(
        &self,
        mine: &Arc<ThreadPool<C>>,
        server: usize,
        min_uses: u32,
        key: &ConnKey,
        low: u32,
    ) -> Option<Entry<C>> {
        let pools = self.pools.load();
        let pools = pools.as_deref()?;
        let at = pools.iter().position(|p| Arc::ptr_eq(p, mine)).unwrap_or(0);
        if low > 0 {
            let idle: usize = pools.iter().map(|p| p.with(|pool| pool.count(server))).sum();
            if idle < low as usize {
                return None;
            }
        }
        let others = pools[at + 1..].iter().chain(&pools[..at]).filter(|p| !Arc::ptr_eq(p, mine));
        others
            .filter(|p| p.idle.load(Ordering::Relaxed) > 0)
            .find_map(|p| p.try_with(|pool| pool.take(server, min_uses, key)).flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_from_the_other_threads_in_turn() {
        let reg = Registry::new();
        let (a, b, c) = (reg.join(), reg.join(), reg.join());
        let k = ConnKey::default();
        b.with(|p| p.put(4, "b1", k.clone(), 1, 10, 50));
        c.with(|p| p.put(4, "c1", k.clone(), 1, 10, 50));
        a.with(|p| p.put(4, "a1", k.clone(), 1, 10, 50));
        // never its own pool; the thread after it first
        assert_eq!(reg.take_over(&a, 4, 0, &k, 0).map(|e| e.conn), Some("b1"));
        assert_eq!(reg.take_over(&a, 4, 0, &k, 0).map(|e| e.conn), Some("c1"));
        assert!(reg.take_over(&a, 4, 0, &k, 0).is_none());
        assert_eq!(reg.take_over(&c, 4, 0, &k, 0).map(|e| e.conn), Some("a1"));
        // the key and the uses must match
        b.with(|p| p.put(4, "b2", k.clone(), 1, 10, 50));
        let other = ConnKey { sni: Some("x".into()), ..ConnKey::default() };
        assert!(reg.take_over(&a, 4, 0, &other, 0).is_none());
        assert!(reg.take_over(&a, 4, 2, &k, 0).is_none());
        assert!(reg.take_over(&a, 5, 0, &k, 0).is_none());
        assert_eq!(b.idle.load(Ordering::Relaxed), 1);
        // a pool that left is no longer looked at
        reg.leave(&b);
        assert!(reg.take_over(&a, 4, 0, &k, 0).is_none());
    }

    #[test]
    fn pool_low_conn_needs_enough_idle_connections_in_all_threads() {
        let reg = Registry::new();
        let (a, b) = (reg.join(), reg.join());
        let k = ConnKey::default();
        let other = ConnKey { dst: Some("127.0.0.1:1".parse().unwrap()), ..ConnKey::default() };
        b.with(|p| p.put(0, "b1", k.clone(), 1, 10, 50));
        assert!(reg.take_over(&a, 0, 0, &k, 2).is_none());
        // any key counts, in any thread (the taker's own included)
        a.with(|p| p.put(0, "a1", other.clone(), 1, 10, 50));
        assert_eq!(reg.take_over(&a, 0, 0, &k, 2).map(|e| e.conn), Some("b1"));
    }

    #[test]
    fn a_busy_pool_is_skipped() {
        let reg = Registry::new();
        let (a, b) = (reg.join(), reg.join());
        let k = ConnKey::default();
        b.with(|p| p.put(0, "b1", k.clone(), 1, 10, 50));
        let held = b.pool.lock().unwrap();
        assert!(reg.take_over(&a, 0, 0, &k, 0).is_none());
        drop(held);
        assert_eq!(reg.take_over(&a, 0, 0, &k, 0).map(|e| e.conn), Some("b1"));
    }
}
