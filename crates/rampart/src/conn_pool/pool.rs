//! One thread's idle connections: a list per server, most recently parked last, each
//! connection with the key it was opened for and the purge round it was parked in.
//! Plain data (no socket, no lock, generic over the connection) so that it is tested
//! on its own; [`super::shared`] puts one behind each thread's lock.
//! HAProxy counterpart: a server's per-thread `idle_conns`/`safe_conns` trees
//! (`srv_lookup_conn()`, `srv_add_to_idle_list()`, `srv_cleanup_idle_conns()`).

use super::ConnKey;

/// A connection waiting in the pool.
#[derive(Debug)]
pub struct Entry<C> {
    pub conn: C,
    /// What it was opened for: it serves only streams wanting the same.
    pub key: ConnKey,
    /// Requests it has carried (`http-reuse aggressive` wants one that was already
    /// reused: at least 2).
    pub uses: u32,
    /// The purge round during which it was parked.
    round: u64,
}

impl<C> Entry<C> {
    /// The same entry over the connection `f` makes of this one (moved to another
    /// thread's event loop).
    pub fn try_map<D, E>(self, f: impl FnOnce(C) -> Result<D, E>) -> Result<Entry<D>, E> {
        Ok(Entry { conn: f(self.conn)?, key: self.key, uses: self.uses, round: self.round })
    }
}

/// One server's idle connections in one thread, with its purge timer.
#[derive(Debug)]
struct ServerIdle<C> {
    /// Most recently parked last.
    conns: Vec<Entry<C>>,
    /// The current purge round.
    round: u64,
    /// The tick at which the current round ends; `None` while no round runs (armed
    /// when a connection is parked, as HAProxy arms a server's purge timer).
    round_end: Option<u64>,
    /// The server's `pool-purge-delay`, in ticks (at least one).
    delay: u64,
}

impl<C> Default for ServerIdle<C> {
    fn default() -> Self {
        ServerIdle { conns: Vec::new(), round: 0, round_end: None, delay: 1 }
    }
}

impl<C> ServerIdle<C> {
    /// Ends the round if it is due at `tick`: closes the connections parked before it
    /// began (idle for a whole round), and starts the next one while some remain.
    fn purge(&mut self, tick: u64) {
        if self.round_end.is_none_or(|end| tick < end) {
            return;
        }
        let cutoff = self.round;
        self.conns.retain(|c| c.round >= cutoff);
        self.round += 1;
        self.round_end = (!self.conns.is_empty()).then_some(tick + self.delay);
    }
}

/// The idle connections of one thread, per server.
#[derive(Debug)]
pub struct Pool<C> {
    /// Indexed by `ServerRt::pool_key`.
    servers: Vec<ServerIdle<C>>,
    /// Purge ticks seen so far ([`Pool::purge`]).
    tick: u64,
    /// Connections in all lists.
    len: usize,
}

impl<C> Default for Pool<C> {
    fn default() -> Self {
        Pool { servers: Vec::new(), tick: 0, len: 0 }
    }
}

impl<C> Pool<C> {
    /// Takes the most recently parked connection to `server` opened for `key` that
    /// carried at least `min_uses` requests.
    pub fn take(&mut self, server: usize, min_uses: u32, key: &ConnKey) -> Option<Entry<C>> {
        let list = &mut self.servers.get_mut(server)?.conns;
        let pos = list.iter().rposition(|c| c.uses >= min_uses && c.key == *key)?;
        self.len -= 1;
        Some(list.remove(pos))
    }

    /// Parks a connection; when `server` has `max` connections here already, `conn`
    /// itself is closed (dropped), as HAProxy's `srv_add_to_idle_list()` refuses a
    /// connection beyond `pool-max-conn` and keeps those it has. `delay`: the server's
    /// `pool-purge-delay` in purge ticks; the first connection parked while no purge
    /// round runs starts one.
    pub fn put(&mut self, server: usize, conn: C, key: ConnKey, uses: u32, max: usize, delay: u64) {
        if self.servers.len() <= server {
            self.servers.resize_with(server + 1, ServerIdle::default);
        }
        let srv = &mut self.servers[server];
        if srv.conns.len() >= max {
            return;
        }
        srv.delay = delay.max(1);
        if srv.round_end.is_none() {
            srv.round_end = Some(self.tick + srv.delay);
        }
        srv.conns.push(Entry { conn, key, uses, round: srv.round });
        self.len += 1;
    }

    /// Idle connections to `server`, whatever their key.
    pub fn count(&self, server: usize) -> usize {
        self.servers.get(server).map_or(0, |s| s.conns.len())
    }

    /// Idle connections to all servers.
    pub fn len(&self) -> usize {
        self.len
    }

    /// One purge tick passed: each server whose round ends now closes the connections
    /// that stayed idle for that whole round, and starts the next one.
    pub fn purge(&mut self) {
        self.tick += 1;
        let mut len = 0;
        for srv in &mut self.servers {
            srv.purge(self.tick);
            len += srv.conns.len();
        }
        self.len = len;
    }

    /// Closes every idle connection to `server`.
    pub fn close_server(&mut self, server: usize) {
        if let Some(srv) = self.servers.get_mut(server) {
            self.len -= srv.conns.len();
            srv.conns.clear();
        }
    }

    /// Keeps only the connections `keep` approves of (closes the others).
    pub fn retain(&mut self, mut keep: impl FnMut(&Entry<C>) -> bool) {
        let mut len = 0;
        for srv in &mut self.servers {
            srv.conns.retain(&mut keep);
            len += srv.conns.len();
        }
        self.len = len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dst(port: u16) -> ConnKey {
        ConnKey { dst: Some(std::net::SocketAddr::from(([127, 0, 0, 1], port))), ..ConnKey::default() }
    }

    #[test]
    fn take_matches_server_key_and_uses() {
        let mut p = Pool::default();
        let plain = ConnKey::default();
        p.put(1, "a", plain.clone(), 1, 10, 1);
        p.put(1, "b", dst(80), 1, 10, 1);
        p.put(1, "c", plain.clone(), 3, 10, 1);
        p.put(2, "d", plain.clone(), 1, 10, 1);
        assert_eq!((p.len(), p.count(1), p.count(2), p.count(7)), (4, 3, 1, 0));
        assert!(p.take(0, 0, &plain).is_none());
        assert!(p.take(9, 0, &plain).is_none());
        assert!(p.take(1, 0, &dst(81)).is_none());
        // the most recent first, among those carrying enough requests
        assert_eq!(p.take(1, 2, &plain).map(|e| (e.conn, e.uses)), Some(("c", 3)));
        assert!(p.take(1, 2, &plain).is_none());
        assert_eq!(p.take(1, 0, &plain).map(|e| e.conn), Some("a"));
        assert_eq!(p.take(1, 0, &dst(80)).map(|e| e.conn), Some("b"));
        assert_eq!(p.take(2, 0, &plain).map(|e| e.conn), Some("d"));
        assert_eq!(p.len(), 0);
    }

    #[test]
    fn close_server_closes_that_server_only() {
        let mut p = Pool::default();
        let k = ConnKey::default();
        p.put(1, "a", k.clone(), 1, 10, 1);
        p.put(1, "b", dst(80), 1, 10, 1);
        p.put(2, "c", k.clone(), 1, 10, 1);
        p.close_server(1);
        p.close_server(9);
        assert_eq!((p.len(), p.count(1), p.count(2)), (1, 0, 1));
        assert!(p.take(1, 0, &k).is_none());
        assert_eq!(p.take(2, 0, &k).map(|e| e.conn), Some("c"));
    }

    #[test]
    fn put_refuses_a_connection_beyond_max() {
        let mut p = Pool::default();
        let k = ConnKey::default();
        for c in ["a", "b", "c"] {
            p.put(0, c, k.clone(), 1, 2, 1);
        }
        // the pool keeps the connections it has (HAProxy's rule), the newcomer closes
        assert_eq!(p.len(), 2);
        assert_eq!(p.take(0, 0, &k).map(|e| e.conn), Some("b"));
        assert_eq!(p.take(0, 0, &k).map(|e| e.conn), Some("a"));
        p.put(0, "x", k.clone(), 1, 0, 1);
        assert_eq!(p.len(), 0);
    }

    #[test]
    fn purge_closes_what_stayed_idle_a_whole_round() {
        let mut p = Pool::default();
        let k = ConnKey::default();
        p.put(0, "old", k.clone(), 1, 10, 1);
        p.purge();
        p.put(0, "new", k.clone(), 1, 10, 1);
        assert_eq!(p.len(), 2);
        p.purge();
        assert_eq!(p.len(), 1);
        assert_eq!(p.take(0, 0, &k).map(|e| e.conn), Some("new"));
    }

    #[test]
    fn each_server_purges_on_its_own_delay() {
        let mut p = Pool::default();
        let k = ConnKey::default();
        p.put(0, "fast", k.clone(), 1, 10, 2);
        p.put(1, "slow", k.clone(), 1, 10, 5);
        // the first round ends at tick 2 for server 0 and the connection survives it
        // (parked during that round); the second round closes it at tick 4
        let mut alive = Vec::new();
        for _ in 0..10 {
            p.purge();
            alive.push((p.count(0), p.count(1)));
        }
        assert_eq!(alive, [(1, 1), (1, 1), (1, 1), (0, 1), (0, 1), (0, 1), (0, 1), (0, 1), (0, 1), (0, 0)]);
        assert_eq!(p.len(), 0);
        // a new connection starts a new round from the current tick
        p.put(0, "again", k.clone(), 1, 10, 2);
        p.purge();
        p.purge();
        assert_eq!(p.count(0), 1);
        p.purge();
        p.purge();
        assert_eq!(p.count(0), 0);
    }

    #[test]
    fn retain_and_try_map() {
        let mut p = Pool::default();
        let k = ConnKey::default();
        p.put(0, 1, k.clone(), 1, 10, 1);
        p.put(3, 2, k.clone(), 1, 10, 1);
        p.retain(|e| e.conn % 2 == 0);
        assert_eq!((p.len(), p.count(0), p.count(3)), (1, 0, 1));
        let e = p.take(3, 0, &k).unwrap();
        let e: Entry<String> = e.try_map(|c| Ok::<_, ()>(c.to_string())).unwrap();
        assert_eq!((e.conn.as_str(), e.uses), ("2", 1));
        assert!(Entry { conn: 1, key: k, uses: 1, round: 0 }.try_map(|_| Err::<u8, _>("gone")).is_err());
    }
}
