//! The accept loop under every test backend: a listener on `127.0.0.1:0`, one thread that
//! accepts, one thread per connection running the backend's handler, and a stop that
//! unblocks all of them.
//!
//! Stopping sets a flag, wakes the blocked `accept` with a connection to itself and shuts
//! down every open connection so handler threads see end-of-stream and return.

use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::sync::lock;

/// Identity of one accepted connection, handed to the handler.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnInfo {
    /// Accept order within this backend, from 1.
    pub id: u64,
    /// The peer's address (the proxy's source address and port).
    pub peer: SocketAddr,
}

/// What a backend does with one connection; returns when the connection is done.
pub(crate) type Handler = Arc<dyn Fn(TcpStream, ConnInfo) + Send + Sync>;

/// State shared by the accept thread, the connection threads and the owner.
struct Shared {
    stop: AtomicBool,
    /// A clone of each open connection, so a stop can shut them down.
    open: Mutex<Vec<(u64, TcpStream)>>,
    accepted: AtomicU64,
    /// Handlers still running.
    active: AtomicU64,
}

/// A running accept loop; stopped on drop.
pub(crate) struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds `127.0.0.1:0` and starts accepting; `name` names the threads.
    ///
    /// # Panics
    /// If the loopback listener cannot be bound or the thread cannot be spawned.
    pub fn start(name: &str, handler: Handler) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("testkit: bind 127.0.0.1:0 for a backend");
        let addr = listener.local_addr().expect("testkit: local_addr of a backend listener");
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            open: Mutex::new(Vec::new()),
            accepted: AtomicU64::new(0),
            active: AtomicU64::new(0),
        });
        let loop_shared = Arc::clone(&shared);
        let thread_name = name.to_string();
        let accept = thread::Builder::new()
            .name(format!("{name}-accept"))
            .spawn(move || accept_loop(&listener, &loop_shared, &handler, &thread_name))
            .expect("testkit: spawn a backend accept thread");
        Server { addr, shared, accept: Some(accept) }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.shared.accepted.load(Ordering::SeqCst)
    }

    /// Waits until no handler is running (every accepted connection is finished).
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while self.shared.active.load(Ordering::SeqCst) > 0 {
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(2));
        }
        true
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(accept) = self.accept.take() {
            // Wake the blocked accept(); it sees the flag and returns, closing the listener.
            let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
            let _ = accept.join();
        }
        for (_, conn) in lock(&self.shared.open).drain(..) {
            let _ = conn.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>, handler: &Handler, name: &str) {
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        match conn {
            Ok(stream) => spawn_connection(stream, shared, handler, name),
            // EMFILE and friends: back off instead of spinning.
            Err(_) => thread::sleep(Duration::from_millis(5)),
        }
    }
}

fn spawn_connection(stream: TcpStream, shared: &Arc<Shared>, handler: &Handler, name: &str) {
    let id = shared.accepted.fetch_add(1, Ordering::SeqCst) + 1;
    let Ok(peer) = stream.peer_addr() else { return };
    let _ = stream.set_nodelay(true);
    if let Ok(clone) = stream.try_clone() {
        lock(&shared.open).push((id, clone));
    }
    shared.active.fetch_add(1, Ordering::SeqCst);
    let guard = ActiveGuard { shared: Arc::clone(shared), id };
    let handler = Arc::clone(handler);
    let spawned = thread::Builder::new().name(format!("{name}-conn{id}")).spawn(move || {
        let _guard = guard;
        handler(stream, ConnInfo { id, peer });
    });
    // If the thread could not start, the closure (and the guard in it) was dropped:
    // the connection is closed and no longer counted.
    drop(spawned);
}

/// Marks a connection finished when its handler returns or panics.
struct ActiveGuard {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        lock(&self.shared.open).retain(|(id, _)| *id != self.id);
        self.shared.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Closes a connection without losing what we sent: half-close our side, then read
/// (and discard) until the peer closes or `linger` passes. Dropping a socket with unread
/// input makes the kernel send a reset, which can destroy a response still in flight.
pub(crate) fn close_gracefully(stream: &TcpStream, linger: Duration) {
    use std::io::Read;
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(linger));
    let mut sink = [0u8; 4096];
    let deadline = Instant::now() + linger;
    let mut reader = stream;
    while Instant::now() < deadline {
        match reader.read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}
