//! The server connections in use by streams, kept only for servers that may have to
//! cut them: `on-marked-down shutdown-sessions` (the server went DOWN or into
//! maintenance) and the backup servers of a backend with `on-marked-up
//! shutdown-backup-sessions` (an active server came back). Cutting shuts the socket
//! down both ways, so the stream using it ends as if the server had closed.
//! HAProxy counterpart: `srv_shutdown_streams()`, `srv_shutdown_backup_streams()`
//! (src/server.c).

use std::collections::HashMap;
use std::net::Shutdown;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
// PERF: the lock is taken when a server connection is handed to a stream and when it
// is released, only for the servers that may have to cut their connections (not on
// the request path of any other server); a DOWN takes it once.
#[allow(clippy::disallowed_types)]
use std::sync::Mutex;

/// A server's connections in use, by registration number.
#[derive(Debug, Default)]
pub struct Sessions {
    next: AtomicU64,
    /// A duplicate of each connection's descriptor (closing it leaves the
    /// connection open; shutting it down ends the connection).
    #[allow(clippy::disallowed_types)]
    fds: Mutex<HashMap<u64, OwnedFd>>,
}

impl Sessions {
    /// Registers a connection; `None` when its descriptor cannot be duplicated (it is
    /// then not cut).
    pub fn add(&self, conn: &impl AsFd) -> Option<u64> {
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
        let s = Sessions::default();
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
