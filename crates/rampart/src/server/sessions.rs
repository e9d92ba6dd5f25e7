//! The server connections in use by streams, kept only for servers that may have to
//! cut them: `on-marked-down shutdown-sessions` (the server went DOWN or into
//! maintenance), the backup servers of a backend with `on-marked-up
//! shutdown-backup-sessions` (an active server came back), and, once a Lua script
//! called `Server:shut_sess()` or `Proxy:shut_bcksess()` ([`track_for_lua`]), every
//! server of a configuration that loads scripts. Cutting shuts the socket down both
//! ways, so the stream using it ends as if the server had closed.
//! HAProxy counterpart: `srv_shutdown_streams()`, `srv_shutdown_backup_streams()`
//! (src/server.c).

use std::collections::HashMap;
use std::net::Shutdown;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
// PERF: the lock is taken when a server connection is handed to a stream and when it
// is released, only for the servers that may have to cut their connections (not on
// the request path of any other server); a DOWN takes it once.
#[allow(clippy::disallowed_types)]
use std::sync::Mutex;

/// Set once a Lua script cut a server's connections: from then on, the servers whose
/// [`Sessions`] wait for it register their connections too. PERF: until then (and in
/// every configuration without scripts) a server connection costs one relaxed load
/// here, no descriptor duplicate nor lock.
static LUA_CUTS: AtomicBool = AtomicBool::new(false);

/// A script called `Server:shut_sess()` or `Proxy:shut_bcksess()`: the servers start
/// keeping their connections in use, so that later calls cut them. COMPAT: HAProxy
/// reaches every stream of a server; here the connections handed out before a
/// script's first call are not cut by any call.
pub fn track_for_lua() {
    LUA_CUTS.store(true, Ordering::Relaxed);
}

/// A server's connections in use, by registration number.
#[derive(Debug, Default)]
pub struct Sessions {
    /// Registers connections from the start (the configuration cuts them), not only
    /// once a script asked ([`track_for_lua`]).
    always: bool,
    next: AtomicU64,
    /// A duplicate of each connection's descriptor (closing it leaves the
    /// connection open; shutting it down ends the connection).
    #[allow(clippy::disallowed_types)]
    fds: Mutex<HashMap<u64, OwnedFd>>,
}

impl Sessions {
    /// For a server the configuration may cut (`always`), or one only Lua scripts
    /// may (registering from their first cut).
    pub fn new(always: bool) -> Sessions {
        Sessions { always, ..Sessions::default() }
    }

    /// Registers a connection; `None` when it is not kept (a server only scripts may
    /// cut, before any did) or its descriptor cannot be duplicated (it is then not
    /// cut).
    pub fn add(&self, conn: &impl AsFd) -> Option<u64> {
        if !self.always && !LUA_CUTS.load(Ordering::Relaxed) {
            return None;
        }
        let fd = conn.as_fd().try_clone_to_owned().ok()?;
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.fds.lock().unwrap_or_else(|e| e.into_inner()).insert(id, fd);
        Some(id)
    }

    /// Forgets a connection (it ended, or went back to the idle pool).
    pub fn remove(&self, id: u64) {
        self.fds.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
    }

    /// Cuts every registered connection; returns how many.
    pub fn shutdown_all(&self) -> usize {
        let fds = self.fds.lock().unwrap_or_else(|e| e.into_inner());
        for fd in fds.values() {
            let _ = socket2::SockRef::from(fd).shutdown(Shutdown::Both);
        }
        fds.len()
    }

    /// Connections registered now.
    pub fn len(&self) -> usize {
        self.fds.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    use super::*;

    #[test]
    fn shutdown_ends_the_registered_connections_only() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = l.local_addr().unwrap();
        let a = TcpStream::connect(at).unwrap();
        let (mut a_peer, _) = l.accept().unwrap();
        let mut b = TcpStream::connect(at).unwrap();
        let (mut b_peer, _) = l.accept().unwrap();
        let s = Sessions::new(true);
        let ia = s.add(&a).unwrap();
        let ib = s.add(&b).unwrap();
        s.remove(ib);
        assert_eq!(s.len(), 1);
        assert_eq!(s.shutdown_all(), 1);
        let mut buf = [0u8; 4];
        assert_eq!(a_peer.read(&mut buf).unwrap(), 0, "the cut connection reads EOF");
        b.write_all(b"ok").unwrap();
        b_peer.read_exact(&mut buf[..2]).unwrap();
        assert_eq!(&buf[..2], b"ok");
        s.remove(ia);
        assert!(s.is_empty());
        drop(a);
    }
}
