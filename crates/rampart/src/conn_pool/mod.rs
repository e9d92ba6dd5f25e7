//! Idle server connections, kept per thread and per server, each under the key of
//! what it was opened for ([`ConnKey`]: destination, SNI, PROXY header). A stream
//! takes a connection from its own thread's pool first (one uncontended lock); when
//! that has none that fits, it takes one over from another thread's pool and moves it
//! to its own event loop (`BackSock::rehome`). Most recently used first, so the
//! warmest connections are reused and the others age out.
//! HAProxy counterpart: the idle/safe connection lists of server.c and backend.c
//! (`http-reuse`, `conn_backend_get()`), `pool-purge-delay`, `pool-low-conn`.
//!
//! Invariant: a connection in a thread's pool is registered with that thread's event
//! loop, so each thread's close watcher ([`release_closed`]) and purge ([`purge`])
//! only ever look at their own pool.
//!
//! - `key`: [`ConnKey`]
//! - `pool`: one thread's lists (plain data, tested alone)
//! - `shared`: the pools of all threads, and the takeover
//! - `sock`: [`BackSock`], the socket of a server connection (plain or TLS)

mod key;
mod pool;
mod shared;
pub mod sock;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use key::ConnKey;
use shared::{Registry, ThreadPool};
pub use sock::{BackSock, PlainSock, TlsConn};

/// Idle connections all threads keep together, past which a connection is parked only
/// when its thread has none to its server (HAProxy's `pool_low_count`:
/// `tune.pool-low-fd-ratio`, 20 %, of the descriptors the process may use), and past
/// which none is parked (`pool_high_count`, `tune.pool-high-fd-ratio`, 25 %). Set at
/// startup by [`set_fd_budget`]; until then, what HAProxy's default `maxconn` gives.
static POOL_LOW: AtomicUsize = AtomicUsize::new(1640);
static POOL_HIGH: AtomicUsize = AtomicUsize::new(2050);
/// How often idle connections are checked for a close by their server, and the unit
/// in which `pool-purge-delay` rounds are counted (a delay is rounded up to it).
pub const WATCH_EVERY: Duration = Duration::from_millis(100);

/// A connection taken from the pool, registered with the calling thread's event loop.
pub type IdleConn = pool::Entry<BackSock>;

/// What a stream asks of the pool.
#[derive(Debug, Clone, Copy)]
pub struct Wanted<'a> {
    /// The server (`ServerRt::pool_key`).
    pub server: usize,
    /// What the connection must have been opened for.
    pub key: &'a ConnKey,
    /// Requests it must have carried already (`http-reuse aggressive`).
    pub min_uses: u32,
    /// Whether a connection may be taken from another thread's pool: `None` with
    /// `tune.idle-pool.shared off`, else the idle connections to the server all
    /// threads must keep together for that (`pool-low-conn`, 0 by default).
    pub takeover: Option<u32>,
}

static REGISTRY: Registry<BackSock> = Registry::new();

/// The calling thread's pool, in [`REGISTRY`] while the thread lives.
struct Local(Arc<ThreadPool<BackSock>>);

impl Drop for Local {
    fn drop(&mut self) {
        REGISTRY.leave(&self.0);
    }
}

thread_local! {
    static LOCAL: Local = Local(REGISTRY.join());
}

/// Runs `f` on this thread's pool (`None` while the thread ends).
fn with_local<R>(f: impl FnOnce(&Arc<ThreadPool<BackSock>>) -> R) -> Option<R> {
    LOCAL.try_with(|l| f(&l.0)).ok()
}

/// Takes an idle connection as `want` says, still alive: the most recently parked one
/// of this thread, else one of another thread, moved to this thread's event loop
/// (which needs a tokio runtime: outside one, none is taken over). Connections found
/// closed by their server on the way are dropped.
pub fn take(want: Wanted<'_>) -> Option<IdleConn> {
    with_local(|mine| {
        while let Some(idle) = mine.with(|p| p.take(want.server, want.min_uses, want.key)) {
            if idle.conn.idle_alive() {
                return Some(idle);
            }
        }
        let low = want.takeover?;
        tokio::runtime::Handle::try_current().ok()?;
        while let Some(idle) = REGISTRY.take_over(mine, want.server, want.min_uses, want.key, low) {
            // still registered with its old thread's loop, whose readiness is current
            if !idle.conn.idle_alive() {
                continue;
            }
            if let Ok(idle) = idle.try_map(BackSock::rehome) {
                return Some(idle);
            }
        }
        None
    })
    .flatten()
}

/// Sets the idle budget of [`POOL_LOW`] and [`POOL_HIGH`] from `maxsock`, the
/// descriptors the process may use, and the two `tune.pool-*-fd-ratio` percentages, as
/// HAProxy computes its `pool_low_count` and `pool_high_count`.
pub fn set_fd_budget(maxsock: u64, low_ratio: u8, high_ratio: u8) {
    let count = |ratio: u8| usize::try_from((maxsock * u64::from(ratio)).div_ceil(100)).unwrap_or(usize::MAX);
    POOL_LOW.store(count(low_ratio), Ordering::Relaxed);
    POOL_HIGH.store(count(high_ratio), Ordering::Relaxed);
}

/// Parks a connection for reuse in this thread's pool, as HAProxy's
/// `srv_add_to_idle_list()` decides: not beyond the server's `pool-max-conn` (`max`;
/// unbounded without it), and within the descriptor budget: below [`POOL_LOW`] idle
/// connections in all, or below [`POOL_HIGH`] when this thread holds none to the server.
/// A connection not parked is closed: the idle ones stay.
// COMPAT: HAProxy bounds `pool-max-conn` per process; rampart's pools are per thread,
// so the bound applies to each thread (the same with `nbthread 1`). HAProxy weighs the
// budget against every descriptor in use (its `ha_used_fds`), and below the low mark
// also against the connections the server needed lately (`est_need_conns`); rampart
// weighs it against the idle connections only, so it may keep more of them while the
// process is busy (never more than `tune.pool-high-fd-ratio` of its descriptors), and
// does not close an idle connection to make room for a new one.
/// `purge_delay`: the server's `pool-purge-delay` (zero: no connection is kept, as in
/// HAProxy).
pub fn put(server: usize, stream: BackSock, key: ConnKey, uses: u32, max: Option<u32>, purge_delay: Duration) {
    if max == Some(0) || purge_delay.is_zero() {
        return;
    }
    let delay = u64::try_from(purge_delay.as_millis().div_ceil(WATCH_EVERY.as_millis())).unwrap_or(u64::MAX);
    let max = max.map_or(usize::MAX, |m| m as usize);
    let (low, high) = (POOL_LOW.load(Ordering::Relaxed), POOL_HIGH.load(Ordering::Relaxed));
    with_local(|mine| {
        let total = REGISTRY.idle_total();
        mine.with(|p| {
            if total < low || (total < high && p.count(server) == 0) {
                p.put(server, stream, key, uses, max, delay);
            }
        })
    });
}

/// Closes the idle connections to `server` (`ServerRt::pool_key`) of every thread, as
/// HAProxy's `srv_cleanup_connections()` does when a server's TLS setting changes.
pub fn close_server(server: usize) {
    REGISTRY.close_server(server);
}

/// Counts a purge tick in this thread's pool: the connections to a server whose purge
/// round ends now and that stayed idle for all of it are closed (HAProxy's
/// `srv_cleanup_idle_conns()` every `pool-purge-delay`). Called every [`WATCH_EVERY`]
/// by each thread.
pub fn purge() {
    with_local(|mine| mine.with(pool::Pool::purge));
}

/// Closes this thread's idle connections on which the server sent something (its FIN,
/// mostly). Only a connection whose socket the event loop saw an event on costs a
/// system call (a peek, which also forgets a readiness left over from the last
/// response). Called every [`WATCH_EVERY`] by each thread, as HAProxy polls its idle
/// connections.
pub fn release_closed() {
    with_local(|mine| mine.with(|p| p.retain(|c| c.conn.idle_alive())));
}

#[cfg(test)]
mod tests;
