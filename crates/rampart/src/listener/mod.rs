//! Listening sockets: one `SO_REUSEPORT` socket per bind address per thread, or one
//! adopted socket (`fd@N`, a unix socket) that the threads share through `dup()`.
//! Everything is bound before anything else starts, so a bind error refuses startup.
//! HAProxy counterpart: listener.c, sock_inet.c, sock_unix.c, proto_tcp.c.
//!
//! - `accept`: the per-thread accept loop with maxconn, pause and stop.
//! - `log_forward`: the receivers of `log-forward` sections (UDP, TCP, TLS)

pub mod accept;
pub mod log_forward;

use std::collections::{HashMap, HashSet};
use std::io;
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::path::Path;

use rampart_cfg::model::ListenAddr;
use rampart_cfg::Config;
use socket2::{Domain, SockAddr, Socket, Type};

pub use crate::io::{socket_family, Family};

/// Every listening socket of a configuration, ready to be handed to the threads.
#[derive(Debug, Default)]
pub struct Listeners {
    pub sockets: Vec<BoundSocket>,
    /// The receivers of the `log-forward` sections ([`crate::log::forward`]).
    pub log_forward: Vec<ForwardSocket>,
    /// The local nodes' listeners of the replicating `peers` sections: the section's
    /// index in [`crate::proxy::Runtime::peers`] and its socket.
    pub peers: Vec<(usize, std::net::TcpListener)>,
}

/// A socket of a `log-forward` section.
#[derive(Debug)]
pub struct ForwardSocket {
    /// Index of the section in the configuration (and in `Runtime::log_forwards`).
    pub section: usize,
    pub kind: ForwardKind,
}

/// A `dgram-bind` (UDP) or `bind` (TCP) receiver, bound and non-blocking.
#[derive(Debug)]
pub enum ForwardKind {
    Udp(std::net::UdpSocket),
    /// With the index of its `bind` line in the section (for the line's TLS).
    Tcp(std::net::TcpListener, usize),
}

/// One bind address: its proxy and its socket(s).
#[derive(Debug)]
pub struct BoundSocket {
    /// Index of the proxy in the configuration.
    pub proxy: usize,
    /// Index of the address among the proxy's listeners, every address of its `bind`
    /// lines in order, as [`crate::proxy::FrontendRt::listeners`] lists them.
    pub listener: u32,
    pub family: Family,
    /// `backlog` passed to listen() (and to re-listen after a pause).
    pub backlog: i32,
    /// Adopted (`fd@N`, or passed by the master) rather than bound here: never
    /// disconnected on pause, since other processes may accept on it too.
    pub inherited: bool,
    /// What the master keys it by across reloads ([`addr_key`]); `None` for `fd@N`.
    pub key: Option<String>,
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
            let ts = |fd| ThreadSocket {
                proxy: b.proxy,
                listener: b.listener,
                family: b.family,
                backlog: b.backlog,
                inherited: b.inherited,
                fd,
            };
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
    /// See [`BoundSocket::listener`].
    pub listener: u32,
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
    /// `bind ... transparent`: IP_TRANSPARENT refused (no CAP_NET_ADMIN).
    Transparent,
    /// `bind ... interface <name>`: SO_BINDTODEVICE refused.
    Device(String),
    Bind,
    Listen,
    Adopt,
}

/// The inherited sockets of a configuration, adopted once before any bind attempt: a
/// retry (with `-sf`) takes a `dup()` of them again, rather than adopting numbers that
/// a failed attempt closed (and that may name another file since).
///
/// Two kinds: `fd@N` named by the configuration, and the sockets a master-worker master
/// holds across reloads (the pool), found by address: a `bind` whose address is in the
/// pool takes those sockets instead of binding, so that a reload never closes a
/// listening socket (connections waiting in its backlog would be reset).
#[derive(Debug, Default)]
pub struct Inherited {
    /// Each number named, with its socket, or the `errno` adopting it gave.
    fds: HashMap<i32, Result<(Family, OwnedFd), i32>>,
    /// Sockets passed by the master, by [`addr_key`].
    pool: HashMap<String, Vec<(Family, OwnedFd)>>,
    /// In the master: `fd@N` binds are left to the worker (the number stays open and
    /// is inherited as it is), so none is adopted or reported here.
    leave_fd_binds: bool,
}

/// The key of a bound address in the master's pool: `ipv4@127.0.0.1:80`,
/// `ipv6@[::1]:80`, `unix@/path`; `None` for `fd@N`.
pub fn addr_key(addr: &ListenAddr) -> Option<String> {
    match addr {
        ListenAddr::Inet(sa @ SocketAddr::V4(_)) => Some(format!("ipv4@{sa}")),
        ListenAddr::Inet(sa) => Some(format!("ipv6@{sa}")),
        ListenAddr::Unix(path) => Some(format!("unix@{}", path.display())),
        ListenAddr::Fd(_) => None,
    }
}

/// A socket a master passed: its key ([`addr_key`]), family and descriptor.
pub type Pooled = (String, Family, OwnedFd);

/// Adopts the sockets a master passed (`(number, key)`), each number once, checking
/// that each is a listening socket; a number that is not is left alone.
pub fn adopt_pool(pool: &[(i32, String)]) -> Vec<Pooled> {
    let mut out = Vec::new();
    for (n, key) in pool {
        if let Ok((fd, family)) = crate::sys::adopt_inherited_fd(*n, socket_family) {
            // close-on-exec again: only the master passes its sockets on, explicitly
            let flags = nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC);
            let _ = nix::fcntl::fcntl(std::os::fd::AsRawFd::as_raw_fd(&fd), flags);
            out.push((key.clone(), family, fd));
        }
    }
    out
}

/// The sockets fetched from an old process (`-x`, [`crate::io::xfer::fetch`]) that a
/// `bind` line may take, as a pool keyed like the master's ([`addr_key`]). As HAProxy's
/// `sock_find_compatible_fd()`, a socket is only offered to a bind with the same
/// options: rampart's binds have no `namespace`, `interface` or `transparent`, so a
/// socket with any of them, a datagram socket, or one that does not listen, is closed
/// here (`v6only` is matched per bind, [`Inherited::take_pooled`]).
pub fn xfer_pool(fetched: Vec<crate::io::xfer::Fetched>) -> Vec<Pooled> {
    let mut out = Vec::new();
    for f in fetched {
        if !f.meta.namespace.is_empty() || !f.meta.interface.is_empty() {
            continue;
        }
        let sock = socket2::SockRef::from(&f.fd);
        if !matches!(sock.r#type(), Ok(t) if t == Type::STREAM) || !sock.is_listener().unwrap_or(false) {
            continue;
        }
        let Ok(local) = sock.local_addr() else { continue };
        let addr = match (local.as_socket(), local.as_pathname()) {
            (Some(sa), _) if !sock.ip_transparent().unwrap_or(false) => ListenAddr::Inet(sa),
            (None, Some(path)) => ListenAddr::Unix(path.to_path_buf()),
            _ => continue,
        };
        let family = if matches!(addr, ListenAddr::Unix(_)) { Family::Unix } else { Family::Inet };
        if sock.set_nonblocking(true).is_err() {
            continue;
        }
        if let Some(key) = addr_key(&addr) {
            out.push((key, family, f.fd));
        }
    }
    out
}

/// Adopts every `fd@N` of `cfg`, each number once, checking that it is a listening
/// stream socket before taking it (so `bind fd@1` on a terminal leaves stdout open).
/// `pool`: the sockets a master passed ([`adopt_pool`]); in the master
/// (`leave_fd_binds`), `fd@N` binds are not adopted.
pub fn adopt_inherited(cfg: &Config, pool: Vec<Pooled>, leave_fd_binds: bool) -> Inherited {
    let mut out = Inherited { leave_fd_binds, ..Inherited::default() };
    for (key, family, fd) in pool {
        out.pool.entry(key).or_default().push((family, fd));
    }
    if leave_fd_binds {
        return out;
    }
    let numbers = cfg.proxies.iter().filter(|px| px.cap.frontend).flat_map(|px| &px.binds).flat_map(|b| &b.addrs);
    let peers = replicating_peers(cfg).filter_map(|s| s.bind.as_ref()).map(|b| &b.addr);
    for addr in numbers.chain(peers) {
        if let ListenAddr::Fd(n) = addr {
            out.fds.entry(*n).or_insert_with(|| {
                crate::sys::adopt_inherited_fd(*n, socket_family)
                    .map(|(fd, family)| (family, fd))
                    .map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL))
            });
        }
    }
    out
}

impl Inherited {
    /// A descriptor of inherited socket `n` for one bind line; a number named by two
    /// `bind` lines is refused the second time (`EBUSY`).
    fn take(&self, n: i32, used: &mut HashSet<i32>) -> StepResult<(Family, OwnedFd)> {
        if !used.insert(n) {
            return Err((Step::Adopt, io::Error::from_raw_os_error(libc::EBUSY)));
        }
        match self.fds.get(&n) {
            Some(Ok((family, fd))) => Ok((*family, fd.try_clone().map_err(at(Step::Adopt))?)),
            Some(Err(errno)) => Err((Step::Adopt, io::Error::from_raw_os_error(*errno))),
            None => Err((Step::Adopt, io::Error::from_raw_os_error(libc::EBADF))),
        }
    }

    /// `dup()`s of the pooled sockets of `addr` (passed by the master, or fetched with
    /// `-x`) whose `v6only` state is the one `bind` asks for; `None`: bind anew.
    fn take_pooled(
        &self,
        addr: &ListenAddr,
        bind: &rampart_cfg::model::Bind,
    ) -> Option<StepResult<(Family, Vec<OwnedFd>)>> {
        let list = self.pool.get(&addr_key(addr)?)?;
        let wanted = match addr {
            ListenAddr::Inet(SocketAddr::V6(_)) => Some(bind.v6only.unwrap_or_else(system_v6only)),
            _ => None,
        };
        let fits = |fd: &OwnedFd| wanted.is_none_or(|w| socket2::SockRef::from(fd).only_v6().ok() == Some(w));
        let list: Vec<_> = list.iter().filter(|(_, fd)| fits(fd)).collect();
        let family = list.first()?.0;
        let fds = list.iter().map(|(_, fd)| fd.try_clone()).collect::<io::Result<Vec<_>>>();
        Some(fds.map(|fds| (family, fds)).map_err(at(Step::Adopt)))
    }
}

/// Whether IPv6 sockets are v6-only unless told otherwise (`net.ipv6.bindv6only`).
fn system_v6only() -> bool {
    std::fs::read_to_string("/proc/sys/net/ipv6/bindv6only").is_ok_and(|v| v.trim() == "1")
}

/// A pooled TCP socket taken by a `bind` line gets the line's listening options and
/// backlog again, as HAProxy's `tcp_bind_listener()` sets them on a socket it took over
/// (the previous process may have had other ones). Best effort: the socket already
/// listens, and a refused option leaves it as the old process had it.
fn reapply_listen_options(fd: &OwnedFd, backlog: i32, bind: &rampart_cfg::model::Bind) {
    let sock = socket2::SockRef::from(fd);
    if let Some(mss) = bind.mss.and_then(|m| u32::try_from(m).ok()) {
        let _ = sock.set_mss(mss);
    }
    let _ = set_listen_options(&sock, backlog, bind);
    let _ = sock.listen(backlog);
}

impl Inherited {
    /// Whether it holds no socket from a master or an old process.
    pub fn pool_is_empty(&self) -> bool {
        self.pool.is_empty()
    }
}

/// Binds every listener of `cfg` for `nbthread` threads, taking the `fd@N` ones from
/// `inherited`. Like HAProxy (protocol_bind_all), a failed listener does not stop the
/// others from being tried, so that every failure is reported.
pub fn bind_all(cfg: &Config, nbthread: usize, inherited: &Inherited) -> Result<Listeners, BindError> {
    let mut out = Listeners::default();
    let mut errors = Vec::new();
    let mut used = HashSet::new();
    // `noreuseport`: one socket per address, shared by the threads
    let reuse_port = !cfg.global.noreuseport;
    for (idx, px) in cfg.proxies.iter().enumerate() {
        if !px.cap.frontend {
            continue;
        }
        let kind = if px.cap.backend { "proxy" } else { "frontend" };
        let fe_backlog = px.backlog.or(px.maxconn).or(cfg.global.maxconn).unwrap_or(4096);
        let mut listener = 0u32;
        for bind in &px.binds {
            let backlog = bind.backlog.unwrap_or(fe_backlog).min(i32::MAX as u32) as i32;
            for addr in &bind.addrs {
                if inherited.leave_fd_binds && matches!(addr, ListenAddr::Fd(_)) {
                    listener += 1;
                    continue;
                }
                let pooled = inherited.take_pooled(addr, bind);
                let from_pool = pooled.is_some();
                let bound = match addr {
                    _ if from_pool => pooled.unwrap_or_else(|| Err((Step::Adopt, io::ErrorKind::NotFound.into()))),
                    ListenAddr::Inet(sa) => (0..nbthread.max(1))
                        .take(if reuse_port { usize::MAX } else { 1 })
                        .map(|_| bind_inet(*sa, backlog, bind, reuse_port))
                        .collect::<Result<Vec<_>, _>>()
                        .map(|fds| (Family::Inet, fds)),
                    ListenAddr::Unix(path) => {
                        bind_unix(path, backlog, &bind.unix_perms).map(|fd| (Family::Unix, vec![fd]))
                    }
                    ListenAddr::Fd(n) => inherited.take(*n, &mut used).map(|(family, fd)| (family, vec![fd])),
                };
                listener += 1;
                match bound {
                    Ok((family, fds)) => {
                        if from_pool && family == Family::Inet {
                            fds.iter().for_each(|fd| reapply_listen_options(fd, backlog, bind));
                        }
                        let inherited = from_pool || matches!(addr, ListenAddr::Fd(_));
                        let (listener, key) = (listener - 1, addr_key(addr));
                        out.sockets.push(BoundSocket { proxy: idx, listener, family, backlog, inherited, key, fds });
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
    out.log_forward = bind_log_forwards(cfg, &mut errors);
    out.peers = bind_peers(cfg, inherited, &mut used, &mut errors);
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(BindError(errors))
    }
}

/// The `peers` sections that replicate (enabled, with a local node), in order.
pub fn replicating_peers(cfg: &Config) -> impl Iterator<Item = &rampart_cfg::model::Peers> {
    cfg.peers.iter().filter(|s| !s.disabled && s.local.is_some())
}

/// Binds the local node's listener of each replicating `peers` section (one socket,
/// served by the first thread); failures are worded as HAProxy words a proxy's.
fn bind_peers(
    cfg: &Config,
    inherited: &Inherited,
    used: &mut HashSet<i32>,
    errors: &mut Vec<String>,
) -> Vec<(usize, std::net::TcpListener)> {
    let mut out = Vec::new();
    for (i, s) in replicating_peers(cfg).enumerate() {
        let Some(b) = &s.bind else { continue };
        let backlog = b.backlog.unwrap_or(1024).clamp(1, i32::MAX as u32) as i32;
        let line = rampart_cfg::model::Bind {
            addrs: vec![b.addr.clone()],
            name: None,
            v6only: None,
            backlog: None,
            accept_proxy: false,
            mss: None,
            defer_accept: false,
            tfo: false,
            tcp_ut: None,
            ctx: String::new(),
            ssl: None,
            proto: None,
            id: None,
            maxconn: None,
            interface: None,
            transparent: false,
            nice: None,
            unix_perms: Default::default(),
            span: b.span.clone(),
        };
        let bound = match &b.addr {
            _ if inherited.leave_fd_binds && matches!(b.addr, ListenAddr::Fd(_)) => continue,
            ListenAddr::Inet(sa) => bind_inet(*sa, backlog, &line, !cfg.global.noreuseport),
            ListenAddr::Fd(n) => inherited.take(*n, used).map(|(_, fd)| fd),
            ListenAddr::Unix(_) => continue,
        };
        match bound {
            Ok(fd) => out.push((i, std::net::TcpListener::from(fd))),
            Err((step, e)) => {
                let what = if matches!(step, Step::Listen) { "Starting" } else { "Binding" };
                let text = failure_text(&b.addr, &step, &e);
                errors.push(format!("{what} [{}] for peers section {}: {text}", b.span, s.name));
            }
        }
    }
    out
}

/// Binds the receivers of the `log-forward` sections (one socket each, served by one
/// thread); failures are worded as a frontend's, as HAProxy words them.
fn bind_log_forwards(cfg: &Config, errors: &mut Vec<String>) -> Vec<ForwardSocket> {
    let mut out = Vec::new();
    for (section, lf) in cfg.log_forwards.iter().enumerate() {
        let mut fail = |span: &rampart_cfg::Span, sa: SocketAddr, (step, e): (Step, io::Error)| {
            let what = if matches!(step, Step::Listen) { "Starting" } else { "Binding" };
            let text = failure_text(&ListenAddr::Inet(sa), &step, &e);
            errors.push(format!("{what} [{span}] for frontend {}: {text}", lf.name));
        };
        for b in &lf.dgram_binds {
            for &sa in &b.addrs {
                match bind_udp(sa) {
                    Ok(sock) => out.push(ForwardSocket { section, kind: ForwardKind::Udp(sock) }),
                    Err(e) => fail(&b.span, sa, e),
                }
            }
        }
        for (line, b) in lf.binds.iter().enumerate() {
            let backlog = b.backlog.unwrap_or(if lf.backlog > 0 { lf.backlog } else { lf.maxconn });
            let backlog = backlog.clamp(1, i32::MAX as u32) as i32;
            for addr in &b.addrs {
                let ListenAddr::Inet(sa) = addr else { continue };
                match bind_inet(*sa, backlog, b, !cfg.global.noreuseport) {
                    Ok(fd) => out.push(ForwardSocket { section, kind: ForwardKind::Tcp(fd.into(), line) }),
                    Err(e) => fail(&b.span, *sa, e),
                }
            }
        }
    }
    out
}

/// A non-blocking UDP socket bound to `sa` (`SO_REUSEADDR` and `SO_REUSEPORT`, so that
/// a new process can bind it before the old one leaves).
fn bind_udp(sa: SocketAddr) -> StepResult<std::net::UdpSocket> {
    let sock =
        Socket::new(Domain::for_address(sa), Type::DGRAM.nonblocking().cloexec(), None).map_err(at(Step::Socket))?;
    sock.set_reuse_address(true).map_err(at(Step::ReuseAddr))?;
    sock.set_reuse_port(true).map_err(at(Step::ReuseAddr))?;
    sock.bind(&SockAddr::from(sa)).map_err(at(Step::Bind))?;
    Ok(sock.into())
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
                Step::Transparent => "cannot make receiving socket transparent".to_owned(),
                Step::Device(name) => format!("cannot bind receiver to device '{name}' ({err})"),
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
/// `mss` sets TCP_MAXSEG (negative: the system's value minus `|mss|`), as HAProxy's
/// `tcp_bind_listener()`, before `listen()`; `defer-accept`, `tfo` and `tcp-ut` set
/// their socket options as it does (the accepted connections inherit them).
/// `reuse_port`: `SO_REUSEPORT` is set (not with `noreuseport`).
fn bind_inet(sa: SocketAddr, backlog: i32, bind: &rampart_cfg::model::Bind, reuse_port: bool) -> StepResult<OwnedFd> {
    let (v6only, mss) = (bind.v6only, bind.mss);
    let sock =
        Socket::new(Domain::for_address(sa), Type::STREAM.nonblocking().cloexec(), None).map_err(at(Step::Socket))?;
    sock.set_reuse_address(true).map_err(at(Step::ReuseAddr))?;
    if reuse_port {
        sock.set_reuse_port(true).map_err(at(Step::ReuseAddr))?;
    }
    if let (true, Some(only)) = (sa.is_ipv6(), v6only) {
        sock.set_only_v6(only).map_err(at(Step::Bind))?;
    }
    if bind.transparent {
        crate::sys::set_transparent(&sock, sa.is_ipv6()).map_err(at(Step::Transparent))?;
    }
    if let Some(name) = &bind.interface {
        // COMPAT: HAProxy only warns and listens on every interface; listening wider
        // than the configuration says is refused here
        sock.bind_device(Some(name.as_bytes())).map_err(at(Step::Device(name.clone())))?;
    }
    sock.bind(&SockAddr::from(sa)).map_err(at(Step::Bind))?;
    if let Some(mss) = mss {
        let value = match u32::try_from(mss) {
            Ok(v) => v,
            Err(_) => sock.mss().map_err(at(Step::Bind))?.saturating_sub(mss.unsigned_abs()),
        };
        sock.set_mss(value).map_err(at(Step::Bind))?;
    }
    set_listen_options(&sock, backlog, bind).map_err(at(Step::Bind))?;
    sock.listen(backlog).map_err(at(Step::Listen))?;
    Ok(sock.into())
}

/// `defer-accept` (one second, as HAProxy), `tfo` (a queue as long as the backlog) and
/// `tcp-ut`.
fn set_listen_options(sock: &Socket, backlog: i32, bind: &rampart_cfg::model::Bind) -> io::Result<()> {
    use crate::sys::{set_listen_tcp_opt, ListenTcpOpt};
    use std::os::fd::AsFd;
    if bind.defer_accept {
        set_listen_tcp_opt(sock.as_fd(), ListenTcpOpt::DeferAccept, 1)?;
    }
    if bind.tfo {
        set_listen_tcp_opt(sock.as_fd(), ListenTcpOpt::FastOpen, backlog)?;
    }
    if let Some(ms) = bind.tcp_ut {
        sock.set_tcp_user_timeout(Some(std::time::Duration::from_millis(u64::from(ms))))?;
    }
    Ok(())
}

/// Binds a unix socket at `path`, then gives its file the mode and owner `unix-bind`
/// asked for, before listening (as HAProxy's `sock_unix_bind_receiver()`).
fn bind_unix(path: &Path, backlog: i32, perms: &rampart_cfg::model::UnixPerms) -> StepResult<OwnedFd> {
    // COMPAT: like HAProxy, a socket file left by a previous process is replaced.
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        if meta.file_type().is_socket() {
            let _ = std::fs::remove_file(path);
        }
    }
    let sock = Socket::new(Domain::UNIX, Type::STREAM.nonblocking().cloexec(), None).map_err(at(Step::Socket))?;
    sock.bind(&SockAddr::unix(path).map_err(at(Step::Bind))?).map_err(at(Step::Bind))?;
    if perms.is_set() {
        set_unix_perms(path, perms).map_err(at(Step::Bind))?;
    }
    sock.listen(backlog).map_err(at(Step::Listen))?;
    Ok(sock.into())
}

fn set_unix_perms(path: &Path, perms: &rampart_cfg::model::UnixPerms) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if perms.uid.is_some() || perms.gid.is_some() {
        let (uid, gid) = (perms.uid.map(nix::unistd::Uid::from_raw), perms.gid.map(nix::unistd::Gid::from_raw));
        nix::unistd::chown(path, uid, gid)?;
    }
    if let Some(mode) = perms.mode {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsRawFd, IntoRawFd};

    /// The first `bind` line of `opts` on 127.0.0.1, any port.
    fn bind_line(opts: &str) -> rampart_cfg::model::Bind {
        config(&format!("  bind 127.0.0.1:9 {opts}\n")).proxies[0].binds[0].clone()
    }

    const ANY: &str = "127.0.0.1:0";

    #[test]
    fn mss_is_set_on_the_listening_socket() {
        let sa: SocketAddr = ANY.parse().unwrap();
        let fd = bind_inet(sa, 8, &bind_line("mss 1200"), true).expect("bind");
        assert_eq!(socket2::SockRef::from(&fd).mss().unwrap(), 1200);
        let plain = bind_inet(sa, 8, &bind_line(""), true).expect("bind");
        let default = socket2::SockRef::from(&plain).mss().unwrap();
        let fd = bind_inet(sa, 8, &bind_line("mss -36"), true).expect("bind");
        assert_eq!(socket2::SockRef::from(&fd).mss().unwrap(), default - 36);
    }

    #[test]
    fn tcp_ut_and_tfo_are_set_on_the_listening_socket() {
        let sa: SocketAddr = ANY.parse().unwrap();
        let fd = bind_inet(sa, 8, &bind_line("tcp-ut 2500 tfo"), true).expect("bind");
        let ut = socket2::SockRef::from(&fd).tcp_user_timeout().unwrap();
        assert_eq!(ut, Some(std::time::Duration::from_millis(2500)));
        let plain = bind_inet(sa, 8, &bind_line(""), true).expect("bind");
        assert_eq!(socket2::SockRef::from(&plain).tcp_user_timeout().unwrap(), None);
    }

    /// With `defer-accept`, a connection that sent nothing is not handed to `accept()`;
    /// it is once data came.
    #[test]
    fn defer_accept_waits_for_data() {
        use std::io::Write;
        let sa: SocketAddr = ANY.parse().unwrap();
        for (opts, accepted_at_once) in [("defer-accept", false), ("", true)] {
            let listener = std::net::TcpListener::from(bind_inet(sa, 8, &bind_line(opts), true).expect("bind"));
            let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(100));
            let first = listener.accept();
            assert_eq!(first.is_ok(), accepted_at_once, "{opts:?}: {first:?}");
            if !accepted_at_once {
                client.write_all(b"x").unwrap();
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
                while listener.accept().is_err() {
                    assert!(std::time::Instant::now() < deadline, "never accepted after data");
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            }
        }
    }

    fn config(binds: &str) -> Config {
        let ctx = rampart_cfg::LexCtx { env: &|_| None, version: "2.6", features: &[] };
        let text = format!("defaults\n  mode tcp\nfrontend fe\n{binds}  default_backend be\nbackend be\n");
        rampart_cfg::parse_str("t.cfg", &text, &ctx).config.expect("the test configuration is valid")
    }

    #[test]
    fn listeners_are_numbered_in_their_frontend_in_order() {
        let dir = std::env::temp_dir().join(format!("rampart-li-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.sock"), dir.join("b.sock"));
        let cfg = config(&format!("  bind {} name a\n  bind {}\n", a.display(), b.display()));
        let bound = bind_all(&cfg, 2, &Inherited::default()).unwrap();
        assert_eq!(bound.sockets.iter().map(|b| b.listener).collect::<Vec<_>>(), [0, 1]);
        for t in &bound.into_threads(2).unwrap() {
            assert_eq!(t.iter().map(|s| s.listener).collect::<Vec<_>>(), [0, 1]);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_runtime_names_every_address_of_a_bind_line() {
        // not bound: the same order as bind_all's
        let cfg = config("  bind 127.0.0.1:18201-18202 name a\n  bind 127.0.0.1:18203\n");
        let rt = crate::build::build(&cfg, 10, 1).unwrap();
        let names: Vec<_> = rt.proxies[0].fe.listeners.iter().map(|l| l.name.as_deref()).collect();
        assert_eq!(names, [Some("a"), Some("a"), None]);
    }

    /// Whether descriptor `n` is still open.
    fn is_open(n: i32) -> bool {
        nix::fcntl::fcntl(n, nix::fcntl::FcntlArg::F_GETFD).is_ok()
    }

    /// One test, so that no other adoption in this process races with its numbers
    /// (adoption is once per number per process, and closed numbers are reused).
    #[test]
    fn inherited_descriptors() {
        // kept until the end: dropping it closes a number a later step could get again
        let _adopted = one_number_on_two_bind_lines_is_refused_the_second_time();
        an_inherited_descriptor_that_is_not_a_listener_is_left_open();
        an_inherited_listener_is_adopted_once_and_survives_a_retry();
    }

    fn an_inherited_descriptor_that_is_not_a_listener_is_left_open() {
        // what `bind fd@1` finds when stdout is a pipe or a terminal
        let (read, write) = nix::unistd::pipe().unwrap();
        let n = write.into_raw_fd();
        let cfg = config(&format!("  bind fd@{n}\n"));
        let inherited = adopt_inherited(&cfg, Vec::new(), false);
        let err = bind_all(&cfg, 1, &inherited).unwrap_err();
        assert!(
            err.0[0].contains(&format!("cannot use inherited socket (Socket operation on non-socket) [fd {n}]")),
            "{err:?}"
        );
        drop(inherited);
        assert!(is_open(n), "a refused descriptor must not be closed");
        drop(read);
        let _ = nix::unistd::close(n);
    }

    fn an_inherited_listener_is_adopted_once_and_survives_a_retry() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let n = listener.into_raw_fd();
        let cfg = config(&format!("  bind fd@{n}\n"));
        let inherited = adopt_inherited(&cfg, Vec::new(), false);
        // a failed attempt drops what it bound; the next one binds again
        for _ in 0..2 {
            let bound = bind_all(&cfg, 1, &inherited).unwrap();
            assert_eq!(bound.sockets.len(), 1);
            assert!(bound.sockets[0].inherited);
            drop(bound);
        }
        let bound = bind_all(&cfg, 1, &inherited).unwrap();
        drop(inherited);
        // the dup kept by the bound socket still accepts
        let _client = std::net::TcpStream::connect(addr).unwrap();
        let sock = socket2::SockRef::from(&bound.sockets[0].fds[0]);
        assert_eq!(sock.local_addr().unwrap().as_socket(), Some(addr));
        // the number itself is never adopted again in this process
        let again = adopt_inherited(&cfg, Vec::new(), false);
        let err = bind_all(&cfg, 1, &again).unwrap_err();
        assert!(err.0[0].contains("Device or resource busy"), "{err:?}");
        assert!(bound.sockets[0].fds[0].as_raw_fd() != n);
    }

    fn one_number_on_two_bind_lines_is_refused_the_second_time() -> Inherited {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let n = listener.into_raw_fd();
        let cfg = config(&format!("  bind fd@{n}\n  bind fd@{n}\n"));
        let inherited = adopt_inherited(&cfg, Vec::new(), false);
        let err = bind_all(&cfg, 1, &inherited).unwrap_err();
        assert_eq!(err.0.len(), 1, "{err:?}");
        assert!(err.0[0].contains("Device or resource busy"), "{err:?}");
        inherited
    }
}
