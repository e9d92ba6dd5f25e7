//! The accept loop of one listening socket on one thread: accept while the global and
//! frontend `maxconn` allow, pause at the limit (the socket is not polled until a
//! connection ends), stop accepting on soft stop, and pause/resume on SIGTTOU/SIGTTIN.

use std::io;
use std::os::fd::AsRawFd;
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

/// What the listeners should be doing, broadcast by the main thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenState {
    Running,
    /// SIGTTOU: stop listening but keep the sockets (a new process may take the port).
    Paused,
    /// Soft or hard stop: close the listening sockets.
    Stopped,
}

/// A listening socket of either family.
enum Listener {
    Tcp(AsyncFd<std::net::TcpListener>),
    Unix(AsyncFd<std::os::unix::net::UnixListener>),
}

impl Listener {
    fn new(sock: ThreadSocket) -> io::Result<Listener> {
        Ok(match sock.family {
            Family::Inet => Listener::Tcp(crate::sys::register_readable(std::net::TcpListener::from(sock.fd))?),
            Family::Unix => {
                Listener::Unix(crate::sys::register_readable(std::os::unix::net::UnixListener::from(sock.fd))?)
            }
        })
    }

    fn raw_fd(&self) -> i32 {
        match self {
            Listener::Tcp(l) => l.get_ref().as_raw_fd(),
            Listener::Unix(l) => l.get_ref().as_raw_fd(),
        }
    }

    async fn readable(&self) -> io::Result<()> {
        match self {
            Listener::Tcp(l) => l.readable().await.map(|mut g| g.retain_ready()),
            Listener::Unix(l) => l.readable().await.map(|mut g| g.retain_ready()),
        }
    }

    /// Accepts one connection and starts serving it. `Ok(false)`: nothing pending.
    fn accept_one(&self, rt: &Arc<Runtime>, fe: usize, slot: ConnSlot) -> io::Result<bool> {
        let res = match self {
            Listener::Tcp(l) => l.get_ref().accept().and_then(|(s, peer)| {
                s.set_nonblocking(true)?;
                s.set_nodelay(true)?;
                let s = tokio::net::TcpStream::from_std(s)?;
                session::spawn(s, Session::new(rt.clone(), fe, Some(peer), slot));
                Ok(())
            }),
            Listener::Unix(l) => l.get_ref().accept().and_then(|(s, _)| {
                s.set_nonblocking(true)?;
                let s = tokio::net::UnixStream::from_std(s)?;
                session::spawn(s, Session::new(rt.clone(), fe, None, slot));
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
pub async fn run(sock: ThreadSocket, rt: Arc<Runtime>, mut state: watch::Receiver<ListenState>) {
    let (fe, backlog, family) = (sock.proxy, sock.backlog, sock.family);
    let listener = match Listener::new(sock) {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "[ALERT]    ({}) : cannot register listener of proxy {}: {e}",
                std::process::id(),
                rt.proxies[fe].name
            );
            return;
        }
    };
    loop {
        let current = *state.borrow_and_update();
        match current {
            ListenState::Stopped => return,
            ListenState::Paused => {
                pause(&listener, family);
                if state.changed().await.is_err() {
                    return;
                }
                resume(&listener, family, backlog);
                continue;
            }
            ListenState::Running => {}
        }
        tokio::select! {
            biased;
            changed = state.changed() => if changed.is_err() { return },
            ready = listener.readable() => {
                if ready.is_err() {
                    return;
                }
                accept_batch(&listener, &rt, fe, &mut state).await;
            }
        }
    }
}

/// Accepts up to [`MAX_ACCEPT`] pending connections, waiting for a free slot when at
/// `maxconn`.
async fn accept_batch(listener: &Listener, rt: &Arc<Runtime>, fe: usize, state: &mut watch::Receiver<ListenState>) {
    for _ in 0..MAX_ACCEPT {
        let slot = match ConnSlot::try_acquire(rt, fe) {
            Some(slot) => slot,
            None => {
                wait_for_slot(rt, fe, state).await;
                return;
            }
        };
        match listener.accept_one(rt, fe, slot) {
            Ok(true) => {}
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

/// Waits until a connection ends (global or frontend), or the listen state changes.
async fn wait_for_slot(rt: &Runtime, fe: usize, state: &mut watch::Receiver<ListenState>) {
    let global = rt.global.conn_released.notified();
    let front = rt.proxies[fe].fe.conn_released.notified();
    tokio::pin!(global, front);
    global.as_mut().enable();
    front.as_mut().enable();
    if ConnSlot::available(rt, fe) {
        return;
    }
    tokio::select! {
        _ = global => {}
        _ = front => {}
        _ = state.changed() => {}
    }
}

/// Stops listening while keeping the socket (Linux: shutdown(SHUT_RD) on a listening
/// TCP socket, as HAProxy pauses listeners); unix listeners just stop being polled.
fn pause(listener: &Listener, family: Family) {
    if family == Family::Inet {
        let _ = nix::sys::socket::shutdown(listener.raw_fd(), nix::sys::socket::Shutdown::Read);
    }
}

fn resume(listener: &Listener, family: Family, backlog: i32) {
    if family == Family::Inet {
        let backlog = Backlog::new(backlog).unwrap_or(Backlog::MAXCONN);
        let _ = match listener {
            Listener::Tcp(l) => nix::sys::socket::listen(l.get_ref(), backlog),
            Listener::Unix(l) => nix::sys::socket::listen(l.get_ref(), backlog),
        };
    }
}
