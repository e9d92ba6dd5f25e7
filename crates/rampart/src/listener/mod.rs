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
    /// Adopted (`fd@N`) rather than bound here: never disconnected on pause.
    pub inherited: bool,
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
            let ts =
                |fd| ThreadSocket { proxy: b.proxy, family: b.family, backlog: b.backlog, inherited: b.inherited, fd };
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
    pub inherited: bool,
    pub fd: OwnedFd,
}

/// Why binding failed: one message per listener that could not be bound, worded as
/// HAProxy words it (`Binding [file:line] for frontend fe: cannot bind socket (Address
/// already in use) for [127.0.0.1:80]`).
#[derive(Debug)]
pub struct BindError(pub Vec<String>);

/// Which step of setting up a listening socket failed; decides HAProxy's wording.
#[derive(Debug)]
enum Step {
    Socket,
    ReuseAddr,
    Bind,
    Listen,
    Adopt,
}

/// Binds (or adopts) every listener of `cfg` for `nbthread` threads. Like HAProxy
/// (protocol_bind_all), a failed listener does not stop the others from being tried,
/// so that every failure is reported.
pub fn bind_all(cfg: &Config, nbthread: usize) -> Result<Listeners, BindError> {
    let mut out = Listeners::default();
    let mut errors = Vec::new();
    let mut adopted = HashSet::new();
    for (idx, px) in cfg.proxies.iter().enumerate() {
        if !px.cap.frontend {
            continue;
        }
        let kind = if px.cap.backend { "proxy" } else { "frontend" };
        let fe_backlog = px.backlog.or(px.maxconn).or(cfg.global.maxconn).unwrap_or(4096);
        for bind in &px.binds {
            let backlog = bind.backlog.unwrap_or(fe_backlog).min(i32::MAX as u32) as i32;
            for addr in &bind.addrs {
                let bound = match addr {
                    ListenAddr::Inet(sa) => (0..nbthread.max(1))
                        .map(|_| bind_inet(*sa, backlog, bind.v6only))
                        .collect::<Result<Vec<_>, _>>()
                        .map(|fds| (Family::Inet, fds)),
                    ListenAddr::Unix(path) => bind_unix(path, backlog).map(|fd| (Family::Unix, vec![fd])),
                    ListenAddr::Fd(n) => adopt(*n, &mut adopted).map(|(family, fd)| (family, vec![fd])),
                };
                match bound {
                    Ok((family, fds)) => {
                        let inherited = matches!(addr, ListenAddr::Fd(_));
                        out.sockets.push(BoundSocket { proxy: idx, family, backlog, inherited, fds });
                    }
                    Err((step, e)) => {
                        let what = if matches!(step, Step::Listen) { "Starting" } else { "Binding" };
                        errors.push(format!(
                            "{what} [{}] for {kind} {}: {}",
                            bind.span,
                            px.name,
                            failure_text(addr, &step, &e)
                        ));
                    }
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(BindError(errors))
    }
}

/// HAProxy's text for a failed step on `addr` (sock_inet.c, sock_unix.c, proto_tcp.c,
/// proto_uxst.c).
fn failure_text(addr: &ListenAddr, step: &Step, e: &io::Error) -> String {
    let err = errno_text(e);
    match addr {
        ListenAddr::Inet(sa) => {
            let what = match step {
                Step::Socket => format!("cannot create receiving socket ({err})"),
                Step::ReuseAddr => "cannot do so_reuseaddr".to_owned(),
                Step::Bind | Step::Adopt => format!("cannot bind socket ({err})"),
                // proto_tcp.c puts no " for" before the address of a listen() failure.
                Step::Listen => return format!("cannot listen to socket [{}:{}]", sa.ip(), sa.port()),
            };
            format!("{what} for [{}:{}]", sa.ip(), sa.port())
        }
        ListenAddr::Unix(path) => {
            let what = match step {
                Step::Socket => format!("cannot create receiving socket ({err})"),
                Step::Listen => "cannot listen to UNIX socket".to_owned(),
                _ => format!("cannot bind UNIX socket ({err})"),
            };
            format!("{what} [{}]", path.display())
        }
        ListenAddr::Fd(n) => format!("cannot use inherited socket ({err}) [fd {n}]"),
    }
}

/// The message part of an OS error, as strerror() prints it.
fn errno_text(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => nix::errno::Errno::from_raw(n).desc().to_string(),
        None => e.to_string(),
    }
}

type StepResult<T> = Result<T, (Step, io::Error)>;

fn at(step: Step) -> impl FnOnce(io::Error) -> (Step, io::Error) {
    move |e| (step, e)
}

/// `v6only` (`bind ... v6only` / `v4v6`) applies to IPv6 addresses only; `None` keeps
/// the system's default (`net.ipv6.bindv6only`).
fn bind_inet(sa: SocketAddr, backlog: i32, v6only: Option<bool>) -> StepResult<OwnedFd> {
    let sock =
        Socket::new(Domain::for_address(sa), Type::STREAM.nonblocking().cloexec(), None).map_err(at(Step::Socket))?;
    sock.set_reuse_address(true).map_err(at(Step::ReuseAddr))?;
    sock.set_reuse_port(true).map_err(at(Step::ReuseAddr))?;
    if let (true, Some(only)) = (sa.is_ipv6(), v6only) {
        sock.set_only_v6(only).map_err(at(Step::Bind))?;
    }
    sock.bind(&SockAddr::from(sa)).map_err(at(Step::Bind))?;
    sock.listen(backlog).map_err(at(Step::Listen))?;
    Ok(sock.into())
}

fn bind_unix(path: &Path, backlog: i32) -> StepResult<OwnedFd> {
    // COMPAT: like HAProxy, a socket file left by a previous process is replaced.
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        if meta.file_type().is_socket() {
            let _ = std::fs::remove_file(path);
        }
    }
    let sock = Socket::new(Domain::UNIX, Type::STREAM.nonblocking().cloexec(), None).map_err(at(Step::Socket))?;
    sock.bind(&SockAddr::unix(path).map_err(at(Step::Bind))?).map_err(at(Step::Bind))?;
    sock.listen(backlog).map_err(at(Step::Listen))?;
    Ok(sock.into())
}

/// Takes over inherited descriptor `n` (`fd@N`), once per process.
fn adopt(n: i32, adopted: &mut HashSet<i32>) -> StepResult<(Family, OwnedFd)> {
    if !adopted.insert(n) {
        return Err((Step::Adopt, io::Error::from_raw_os_error(libc::EBUSY)));
    }
    let fd = crate::sys::adopt_inherited_fd(n).map_err(at(Step::Adopt))?;
    let family = socket_family(&fd).map_err(at(Step::Adopt))?;
    Ok((family, fd))
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
