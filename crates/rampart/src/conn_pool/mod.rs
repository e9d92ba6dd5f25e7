//! Idle server connections, per thread and per server, with no lock: a connection is
//! only ever used by the thread that created it. Most recently used first, so the
//! warmest connections are reused and the others age out.
//! HAProxy counterpart: the idle/safe connection lists of server.c and backend.c
//! (`http-reuse`), `pool-purge-delay`.

use std::cell::RefCell;
use std::time::Duration;

use crate::backend::BackSock;

/// Idle connections kept per server per thread.
const MAX_IDLE_PER_SERVER: usize = 256;
/// Idle connections not reused for this long are closed (HAProxy `pool-purge-delay`).
pub const PURGE_DELAY: Duration = Duration::from_secs(5);
/// How often idle connections are checked for a close by their server.
pub const WATCH_EVERY: Duration = Duration::from_millis(100);

/// A connection waiting in the pool.
#[derive(Debug)]
pub struct IdleConn {
    pub stream: BackSock,
    /// The SNI the TLS connection announced: it serves only streams wanting the same.
    pub sni: Option<Box<str>>,
    /// The purge round during which it was put back.
    round: u64,
    /// Requests this connection has carried (`http-reuse aggressive` wants at least 2:
    /// a connection that was already reused once).
    pub uses: u32,
    /// The server's TLS trust when it was parked (`ServerTlsRt::trust_epoch`): a
    /// connection verified before a `commit ssl ca-file` is not reused after it.
    pub epoch: u64,
}

#[derive(Default)]
struct Pool {
    /// Indexed by `ServerRt::pool_key`.
    servers: Vec<Vec<IdleConn>>,
    round: u64,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
}

/// Takes the most recently parked idle connection to server `key`, if any.
/// Only connections that carried at least `min_uses` requests and announced the SNI
/// `sni` are considered.
pub fn take(key: usize, min_uses: u32, sni: Option<&str>) -> Option<IdleConn> {
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        let list = p.servers.get_mut(key)?;
        let pos = list.iter().rposition(|c| c.uses >= min_uses && c.sni.as_deref() == sni)?;
        Some(list.remove(pos))
    })
}

/// Parks a connection for reuse. When the pool for that server is full (`max`, its
/// `pool-max-conn`, else [`MAX_IDLE_PER_SERVER`]) the oldest idle connection is
/// closed; with `max` 0 the connection itself is.
// COMPAT: HAProxy bounds `pool-max-conn` per process; rampart's pools are per thread,
// so the bound applies to each thread (the same with `nbthread 1`).
pub fn put(key: usize, stream: BackSock, sni: Option<Box<str>>, uses: u32, max: Option<u32>, epoch: u64) {
    let max = max.map_or(MAX_IDLE_PER_SERVER, |m| (m as usize).min(MAX_IDLE_PER_SERVER));
    if max == 0 {
        return;
    }
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        let round = p.round;
        if p.servers.len() <= key {
            p.servers.resize_with(key + 1, Vec::new);
        }
        let list = &mut p.servers[key];
        while list.len() >= max {
            list.remove(0);
        }
        list.push(IdleConn { stream, sni, round, uses, epoch });
    })
}

/// Closes the connections that stayed idle for a whole purge round. Called every
/// [`PURGE_DELAY`] by each thread.
pub fn purge() {
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        let cutoff = p.round;
        for list in &mut p.servers {
            list.retain(|c| c.round >= cutoff);
        }
        p.round += 1;
    })
}

/// Closes the idle connections on which the server sent something (its FIN, mostly).
/// Only a connection whose socket the event loop saw an event on costs a system call
/// (a peek, which also forgets a readiness left over from the last response). Called
/// every [`WATCH_EVERY`] by each thread, as HAProxy polls its idle connections.
pub fn release_closed() {
    POOL.with(|p| {
        for list in &mut p.borrow_mut().servers {
            list.retain(|c| c.stream.idle_alive());
        }
    })
}
