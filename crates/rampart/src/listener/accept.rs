//! The accept loop of one listening socket on one thread: accept while the global,
//! frontend and listener (`bind ... maxconn`) limits allow, pause at the limit (the socket is not polled until a
//! connection ends), stop accepting on soft stop, and pause/resume on SIGTTOU/SIGTTIN.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::socket::Backlog;
use tokio::io::unix::AsyncFd;
use tokio::sync::watch;

use super::{Family, ThreadSocket};
use crate::proxy::Runtime;
use crate::session::{self, ConnSlot, Session};

/// Most connections accepted in one wake-up before letting other tasks run
/// (HAProxy `tune.maxaccept`).
const MAX_ACCEPT: usize = 64;

pub use crate::proxy::ListenState;

/// What the process (`all`, broadcast by the main thread) and the listener's
/// frontend (`own`, Lua's `Proxy:pause()` ...) ask of an accept loop.
struct States {
    all: watch::Receiver<ListenState>,
    /// Only when scripts are loaded: nothing else changes a frontend's own state.
    // PERF: waiting on two channels cost each accepted connection 1 200 instructions
    // (3.5 % of a connection per request), for what only a script can ask.
    own: Option<watch::Receiver<ListenState>>,
}

impl States {
    /// The stricter of both, marking them seen.
    fn current(&mut self) -> ListenState {
        let own = self.own.as_mut().map_or(ListenState::Running, |own| *own.borrow_and_update());
        (*self.all.borrow_and_update()).max(own)
    }

    /// Waits until either changes; `false` once the process's is gone.
    async fn changed(&mut self) -> bool {
        let Some(own) = self.own.as_mut() else { return self.all.changed().await.is_ok() };
        tokio::select! {
            r = self.all.changed() => r.is_ok(),
            // (the frontend's sender lives as long as the runtime)
            r = own.changed() => r.is_ok() || self.all.changed().await.is_ok(),
        }
    }
}

/// A listening socket of either family.
enum Listener {
    Tcp(AsyncFd<std::net::TcpListener>),
    Unix(AsyncFd<std::os::unix::net::UnixListener>),
}

impl Listener {
    fn new(sock: ThreadSocket) -> io::Result<Listener> {
        Ok(match sock.family {
            Family::Inet => Listener::Tcp(crate::sys::register_owned(std::net::TcpListener::from(sock.fd))?),
            Family::Unix => {
                Listener::Unix(crate::sys::register_owned(std::os::unix::net::UnixListener::from(sock.fd))?)
            }
        })
    }

    /// Leaves the event loop, keeping the socket open.
    fn deregister(self) -> OwnedFd {
        match self {
            Listener::Tcp(l) => l.into_inner().into(),
            Listener::Unix(l) => l.into_inner().into(),
        }
    }

    fn family(&self) -> Family {
        match self {
            Listener::Tcp(_) => Family::Inet,
            Listener::Unix(_) => Family::Unix,
        }
    }

    async fn readable(&self) -> io::Result<()> {
        match self {
            Listener::Tcp(l) => l.readable().await.map(|mut g| g.retain_ready()),
            Listener::Unix(l) => l.readable().await.map(|mut g| g.retain_ready()),
        }
    }

    /// Accepts one connection on listener `li` of its frontend and starts serving it.
    /// `Ok(false)`: nothing pending.
    fn accept_one(&self, li: u32, slot: ConnSlot) -> io::Result<bool> {
        let res = match self {
            Listener::Tcp(l) => l.get_ref().accept().and_then(|(s, peer)| {
                s.set_nonblocking(true)?;
                s.set_nodelay(true)?;
                let s = tokio::net::TcpStream::from_std(s)?;
                let fd = s.as_raw_fd();
                session::start(s, Session::new(Some(peer), fd, l.as_raw_fd(), li, slot));
                Ok(())
            }),
            Listener::Unix(l) => l.get_ref().accept().and_then(|(s, _)| {
                s.set_nonblocking(true)?;
                let s = tokio::net::UnixStream::from_std(s)?;
                let fd = s.as_raw_fd();
                session::start(s, Session::new(None, fd, l.as_raw_fd(), li, slot));
                Ok(())
            }),
        };
        match res {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.clear_ready();
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    fn clear_ready(&self) {
        // A zero-cost poll that only clears the readiness tokio recorded.
        let _ = match self {
            Listener::Tcp(l) => {
                l.try_io(tokio::io::Interest::READABLE, |_| Err::<(), _>(io::ErrorKind::WouldBlock.into()))
            }
            Listener::Unix(l) => {
                l.try_io(tokio::io::Interest::READABLE, |_| Err::<(), _>(io::ErrorKind::WouldBlock.into()))
            }
        };
    }
}

/// Runs the accept loop of `sock` until the listeners stop.
pub async fn run(sock: ThreadSocket, rt: Arc<Runtime>, state: watch::Receiver<ListenState>) {
    let _open = OpenListener(rt.clone());
    let (fe, li, backlog) = (sock.proxy, sock.listener, sock.backlog);
    let own = crate::lua::loaded().then(|| rt.proxies[fe].fe.listen.subscribe());
    let mut state = States { all: state, own };
    let suspendable = sock.family == Family::Inet && !sock.inherited;
    let mut listener = match Listener::new(sock) {
        Ok(l) => l,
        Err(e) => return register_failed(&rt, fe, &e),
    };
    loop {
        let current = state.current();
        match current {
            ListenState::Stopped => return drain_backlog(&listener, &rt, fe, li),
            ListenState::Paused if suspendable => {
                // The socket leaves the event loop while disconnected: the hang-up it
                // reports then would stay recorded as readiness (tokio never clears a
                // closed state), and the accept loop would spin once resumed.
                let family = listener.family();
                let fd = listener.deregister();
                suspend(&fd);
                let changed = state.changed().await;
                relisten(&fd, backlog);
                if !changed {
                    return;
                }
                let sock = ThreadSocket { proxy: fe, listener: li, family, backlog, inherited: false, fd };
                listener = match Listener::new(sock) {
                    Ok(l) => l,
                    Err(e) => return register_failed(&rt, fe, &e),
                };
                continue;
            }
            ListenState::Paused => {
                if !state.changed().await {
                    return;
                }
                continue;
            }
            ListenState::Running => {}
        }
        tokio::select! {
            biased;
            changed = state.changed() => if !changed { return },
            ready = listener.readable() => {
                if ready.is_err() {
                    return;
                }
                accept_batch(&listener, &rt, fe, li, &mut state).await;
            }
        }
    }
}

/// Counts an accept loop as holding its socket until it returns.
struct OpenListener(Arc<Runtime>);

impl Drop for OpenListener {
    fn drop(&mut self) {
        self.0.global.listeners_open.fetch_sub(1, Ordering::SeqCst);
        self.0.global.listener_closed.notify_waiters();
    }
}

/// On stop, serves the connections the kernel already queued on this socket (closing
/// it would reset them), as far as `maxconn` allows.
fn drain_backlog(listener: &Listener, rt: &Arc<Runtime>, fe: usize, li: u32) {
    while let Some(slot) = ConnSlot::try_acquire(rt, fe, li) {
        if !matches!(listener.accept_one(li, slot), Ok(true)) {
            return;
        }
    }
}

fn register_failed(rt: &Runtime, fe: usize, e: &io::Error) {
    eprintln!("[ALERT]    ({}) : cannot register listener of proxy {}: {e}", std::process::id(), rt.proxies[fe].name);
}

/// Accepts up to [`MAX_ACCEPT`] pending connections, waiting for a free slot when at
/// `maxconn`.
async fn accept_batch(listener: &Listener, rt: &Arc<Runtime>, fe: usize, li: u32, state: &mut States) {
    let tls = rt.proxies[fe].fe.listeners.get(li as usize).is_some_and(|l| l.tls.is_some());
    for _ in 0..MAX_ACCEPT {
        // `maxconnrate` / `maxsessrate`: the connection waits in the backlog meanwhile
        if let Some(Err(pause)) = rt.global.accept_rate.as_ref().map(|r| r.check()) {
            tokio::time::sleep(pause).await;
            return;
        }
        // `maxsslrate`, on TLS listeners only
        if let (true, Err(pause)) = (tls, rt.global.ssl.check_rate()) {
            tokio::time::sleep(pause).await;
            return;
        }
        let slot = match ConnSlot::try_acquire(rt, fe, li) {
            Some(slot) => slot,
            None => {
                wait_for_slot(rt, fe, li, state).await;
                return;
            }
        };
        match listener.accept_one(li, slot) {
            Ok(true) => {
                if let Some(r) = &rt.global.accept_rate {
                    r.count();
                }
                if tls {
                    rt.global.ssl.count_rate();
                }
            }
            Ok(false) => return,
            Err(e) => {
                if is_resource_exhaustion(&e) {
                    // HAProxy pauses the listener shortly when out of fds or memory.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                return;
            }
        }
    }
    tokio::task::yield_now().await;
}

fn is_resource_exhaustion(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM))
}

/// Waits until a connection ends (global, frontend, or listener `li` at its
/// `maxconn`), or the listen state changes.
async fn wait_for_slot(rt: &Runtime, fe: usize, li: u32, state: &mut States) {
    let global = rt.global.conn_released.notified();
    let front = rt.proxies[fe].fe.conn_released.notified();
    tokio::pin!(global, front);
    global.as_mut().enable();
    front.as_mut().enable();
    if ConnSlot::available(rt, fe, li) {
        return;
    }
    tokio::select! {
        _ = global => {}
        _ = front => {}
        _ = state.changed() => {}
    }
}

/// Stops listening while keeping the socket and its port, so that connections are
/// refused meanwhile (Linux: shutdown(SHUT_RD) on a listening TCP socket; HAProxy's
/// tcp_suspend_receiver disconnects it the same way). Only for sockets bound here: like
/// HAProxy, an adopted (`fd@`) socket is not touched, as its port may not survive
/// (an automatically chosen port is released), and a unix socket cannot be re-listened;
/// those are only no longer polled, so connections wait in their backlog.
fn suspend(fd: &OwnedFd) {
    let _ = nix::sys::socket::shutdown(fd.as_raw_fd(), nix::sys::socket::Shutdown::Read);
}

fn relisten(fd: &OwnedFd, backlog: i32) {
    let _ = nix::sys::socket::listen(fd, Backlog::new(backlog).unwrap_or(Backlog::MAXCONN));
}
