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

/// The idle connections of one thread, per server.
#[derive(Debug)]
pub struct Pool<C> {
    /// Indexed by `ServerRt::pool_key`.
    servers: Vec<Vec<Entry<C>>>,
    round: u64,
    /// Connections in all lists.
    len: usize,
}

impl<C> Default for Pool<C> {
    fn default() -> Self {
        Pool { servers: Vec::new(), round: 0, len: 0 }
    }
}

impl<C> Pool<C> {
    /// Takes the most recently parked connection to `server` opened for `key` that
    /// carried at least `min_uses` requests.
    pub fn take(&mut self, server: usize, min_uses: u32, key: &ConnKey) -> Option<Entry<C>> {
        let list = self.servers.get_mut(server)?;
        let pos = list.iter().rposition(|c| c.uses >= min_uses && c.key == *key)?;
        self.len -= 1;
        Some(list.remove(pos))
    }

    /// Parks a connection; when `server` has `max` connections here already, `conn`
    /// itself is closed (dropped), as HAProxy's `srv_add_to_idle_list()` refuses a
    /// connection beyond `pool-max-conn` and keeps those it has.
    pub fn put(&mut self, server: usize, conn: C, key: ConnKey, uses: u32, max: usize) {
        if self.servers.len() <= server {
            self.servers.resize_with(server + 1, Vec::new);
        }
        let list = &mut self.servers[server];
        if list.len() >= max {
            return;
        }
        list.push(Entry { conn, key, uses, round: self.round });
        self.len += 1;
    }

    /// Idle connections to `server`, whatever their key.
    pub fn count(&self, server: usize) -> usize {
        self.servers.get(server).map_or(0, Vec::len)
    }

    /// Idle connections to all servers.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Closes the connections that stayed idle for a whole purge round, and starts
    /// the next round.
    pub fn purge(&mut self) {
        let cutoff = self.round;
        self.retain(|c| c.round >= cutoff);
        self.round += 1;
    }

    /// Closes every idle connection to `server`.
    pub fn close_server(&mut self, server: usize) {
        if let Some(list) = self.servers.get_mut(server) {
            self.len -= list.len();
            list.clear();
        }
    }

    /// Keeps only the connections `keep` approves of (closes the others).
    pub fn retain(&mut self, mut keep: impl FnMut(&Entry<C>) -> bool) {
        let mut len = 0;
        for list in &mut self.servers {
            list.retain(&mut keep);
            len += list.len();
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
        p.put(1, "a", plain.clone(), 1, 10);
        p.put(1, "b", dst(80), 1, 10);
        p.put(1, "c", plain.clone(), 3, 10);
        p.put(2, "d", plain.clone(), 1, 10);
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
        p.put(1, "a", k.clone(), 1, 10);
        p.put(1, "b", dst(80), 1, 10);
        p.put(2, "c", k.clone(), 1, 10);
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
            p.put(0, c, k.clone(), 1, 2);
        }
        // the pool keeps the connections it has (HAProxy's rule), the newcomer closes
        assert_eq!(p.len(), 2);
        assert_eq!(p.take(0, 0, &k).map(|e| e.conn), Some("b"));
        assert_eq!(p.take(0, 0, &k).map(|e| e.conn), Some("a"));
        p.put(0, "x", k.clone(), 1, 0);
        assert_eq!(p.len(), 0);
    }

    #[test]
    fn purge_closes_what_stayed_idle_a_whole_round() {
        let mut p = Pool::default();
        let k = ConnKey::default();
        p.put(0, "old", k.clone(), 1, 10);
        p.purge();
        p.put(0, "new", k.clone(), 1, 10);
        assert_eq!(p.len(), 2);
        p.purge();
        assert_eq!(p.len(), 1);
        assert_eq!(p.take(0, 0, &k).map(|e| e.conn), Some("new"));
    }

    #[test]
    fn retain_and_try_map() {
        let mut p = Pool::default();
        let k = ConnKey::default();
        p.put(0, 1, k.clone(), 1, 10);
        p.put(3, 2, k.clone(), 1, 10);
        p.retain(|e| e.conn % 2 == 0);
        assert_eq!((p.len(), p.count(0), p.count(3)), (1, 0, 1));
        let e = p.take(3, 0, &k).unwrap();
        let e: Entry<String> = e.try_map(|c| Ok::<_, ()>(c.to_string())).unwrap();
        assert_eq!((e.conn.as_str(), e.uses), ("2", 1));
        assert!(Entry { conn: 1, key: k, uses: 1, round: 0 }.try_map(|_| Err::<u8, _>("gone")).is_err());
    }
}
