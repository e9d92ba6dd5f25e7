//! Listening sockets: one `SO_REUSEPORT` socket per bind address per thread, or one
//! adopted socket (`fd@N`, a unix socket) that the threads share through `dup()`.
//! Everything is bound before anything else starts, so a bind error refuses startup.
//! HAProxy counterpart: listener.c, sock_inet.c, sock_unix.c, proto_tcp.c.
//!
//! - `accept`: the per-thread accept loop with maxconn, pause and stop.

pub mod accept;

use std::collections::HashSet;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rampart_cfg::model::ListenAddr;
use rampart_cfg::Config;
use socket2::{Domain, SockAddr, Socket, Type};

/// Every listening socket of a configuration, ready to be handed to the threads.
#[derive(Debug, Default)]
pub struct Listeners {
    pub sockets: Vec<BoundSocket>,
}

/// The family of a listening socket, which decides the stream type it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Inet,
    Unix,
}

/// One bind address: its proxy and its socket(s).
#[derive(Debug)]
pub struct BoundSocket {
    /// Index of the proxy in the configuration.
    pub proxy: usize,
    pub family: Family,
    /// `backlog` passed to listen() (and to re-listen after a pause).
    pub backlog: i32,
    /// One socket per thread (`SO_REUSEPORT`), or a single one shared by all threads.
    pub fds: Vec<OwnedFd>,
}

impl Listeners {
    /// Splits the sockets between `nbthread` threads: each thread gets its own
    /// `SO_REUSEPORT` socket, and a `dup()` of each shared one.
    pub fn into_threads(self, nbthread: usize) -> io::Result<Vec<Vec<ThreadSocket>>> {
        let mut threads: Vec<Vec<ThreadSocket>> = (0..nbthread.max(1)).map(|_| Vec::new()).collect();
        let n = threads.len();
        for b in self.sockets {
            let ts = |fd| ThreadSocket { proxy: b.proxy, family: b.family, backlog: b.backlog, fd };
            let mut fds = b.fds.into_iter();
            if fds.len() == 1 {
                let Some(fd) = fds.next() else { continue };
                for thread in threads.iter_mut().skip(1) {
                    thread.push(ts(fd.try_clone()?));
                }
                threads[0].push(ts(fd));
            } else {
                for (t, fd) in fds.enumerate() {
                    threads[t % n].push(ts(fd));
                }
            }
        }
        Ok(threads)
    }
}

/// A listening socket owned by one thread.
#[derive(Debug)]
pub struct ThreadSocket {
    pub proxy: usize,
    pub family: Family,
    pub backlog: i32,
    pub fd: OwnedFd,
}

/// Why a bind failed, already worded as HAProxy words it.
#[derive(Debug)]
pub struct BindError(pub String);

/// Binds (or adopts) every listener of `cfg` for `nbthread` threads. `maxconn` is the
/// global connection limit, the default backlog.
pub fn bind_all(cfg: &Config, nbthread: usize) -> Result<Listeners, BindError> {
    let mut out = Listeners::default();
    let mut adopted = HashSet::new();
    for (idx, px) in cfg.proxies.iter().enumerate() {
        if !px.cap.frontend {
            continue;
        }
        let kind = if px.cap.backend { "proxy" } else { "frontend" };
        let backlog = px.maxconn.or(cfg.global.maxconn).unwrap_or(4096).min(i32::MAX as u32) as i32;
        for bind in &px.binds {
            for addr in &bind.addrs {
                let fail = |e: io::Error| {
                    BindError(format!(
                        "Starting {kind} {}: cannot bind socket ({}) [{}]",
                        px.name,
                        errno_text(&e),
                        show(addr)
                    ))
                };
                let (family, fds) = match addr {
                    ListenAddr::Inet(sa) => {
                        let fds = (0..nbthread.max(1)).map(|_| bind_inet(*sa, backlog)).collect::<Result<Vec<_>, _>>();
                        (Family::Inet, fds.map_err(fail)?)
                    }
                    ListenAddr::Unix(path) => (Family::Unix, vec![bind_unix(path, backlog).map_err(fail)?]),
                    ListenAddr::Fd(n) => {
                        if !adopted.insert(*n) {
                            return Err(fail(io::Error::from_raw_os_error(libc::EBUSY)));
                        }
                        let fd = crate::sys::adopt_inherited_fd(*n).map_err(fail)?;
                        let family = socket_family(&fd).map_err(fail)?;
                        (family, vec![fd])
                    }
                };
                out.sockets.push(BoundSocket { proxy: idx, family, backlog, fds });
            }
        }
    }
    Ok(out)
}

fn show(addr: &ListenAddr) -> String {
    match addr {
        ListenAddr::Inet(sa) => sa.to_string(),
        ListenAddr::Unix(p) => format!("unix@{}", p.display()),
        ListenAddr::Fd(n) => format!("fd@{n}"),
    }
}

/// The message part of an OS error, as strerror() prints it.
fn errno_text(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => nix::errno::Errno::from_raw(n).desc().to_string(),
        None => e.to_string(),
    }
}

fn bind_inet(sa: SocketAddr, backlog: i32) -> io::Result<OwnedFd> {
    let sock = Socket::new(Domain::for_address(sa), Type::STREAM.nonblocking().cloexec(), None)?;
    sock.set_reuse_address(true)?;
    sock.set_reuse_port(true)?;
    sock.bind(&SockAddr::from(sa))?;
    sock.listen(backlog)?;
    Ok(sock.into())
}

fn bind_unix(path: &Path, backlog: i32) -> io::Result<OwnedFd> {
    // COMPAT: like HAProxy, a stale socket file left by a previous process is replaced.
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        if meta.file_type().is_socket() {
            let _ = std::fs::remove_file(path);
        }
    }
    let sock = Socket::new(Domain::UNIX, Type::STREAM.nonblocking().cloexec(), None)?;
    sock.bind(&SockAddr::unix(path)?)?;
    sock.listen(backlog)?;
    Ok(sock.into())
}

/// Checks that an adopted descriptor is a listening stream socket and returns its family.
fn socket_family(fd: &OwnedFd) -> io::Result<Family> {
    let borrowed = fd.as_fd();
    let sock = socket2::SockRef::from(&borrowed);
    if !sock.is_listener()? {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    sock.set_nonblocking(true)?;
    let local = sock.local_addr()?;
    Ok(if local.is_unix() { Family::Unix } else { Family::Inet })
}
