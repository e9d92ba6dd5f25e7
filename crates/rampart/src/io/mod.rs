//! Socket I/O shared by the muxes: one trait over TCP and unix streams, and the few
//! waiting primitives every side uses (read some with a timeout, write all with a
//! timeout, splice through a pipe). `xfer`: listening sockets handed between processes
//! (`_getsocks`, `-x`). `cold`: a rarely taken future kept out of its caller's.
//!
//! PERF: every operation first tries the system call directly and only arms a timer
//! when it would block, so a request whose bytes are already there costs no timer.

pub mod cold;
pub mod socks4;
pub mod xfer;

use std::future::Future;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::time::Duration;

use tokio::io::Interest;
use tokio::net::{TcpStream, UnixStream};

/// What the proxy needs from a connected stream socket.
pub trait Sock: AsFd + AsRawFd + Send + Sync + Unpin + 'static {
    fn readable(&self) -> impl Future<Output = io::Result<()>> + Send;
    fn writable(&self) -> impl Future<Output = io::Result<()>> + Send;
    fn try_read_buf(&self, buf: &mut Vec<u8>) -> io::Result<usize>;
    fn try_write(&self, buf: &[u8]) -> io::Result<usize>;
    fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R>;
    fn poll_read_ready(&self, cx: &mut std::task::Context<'_>) -> std::task::Poll<io::Result<()>>;
    /// Readiness to write, for a task that drives its own writes (the HTTP/2 mux).
    fn poll_write_ready(&self, cx: &mut std::task::Context<'_>) -> std::task::Poll<io::Result<()>>;

    /// Sends bytes a layer above the socket still holds (TLS records): `Ok(())` once
    /// none is left, `WouldBlock` while the socket is full. Plain sockets hold none.
    fn try_flush(&self) -> io::Result<()> {
        Ok(())
    }
    /// Whether input already sits above the socket (decrypted TLS records), readable
    /// without the socket showing anything.
    fn buffered_input(&self) -> bool {
        false
    }
    /// Whether the bytes on the socket are the payload itself, so that splice(2) may
    /// move them (not for TLS).
    fn splices(&self) -> bool {
        true
    }
    /// Tells the peer the writing side ends, above the socket (TLS close_notify),
    /// before the socket's own FIN.
    fn close_notify(&self) {}
}

macro_rules! impl_sock {
    ($t:ty) => {
        impl Sock for $t {
            fn readable(&self) -> impl Future<Output = io::Result<()>> + Send {
                <$t>::readable(self)
            }
            fn writable(&self) -> impl Future<Output = io::Result<()>> + Send {
                <$t>::writable(self)
            }
            fn try_read_buf(&self, buf: &mut Vec<u8>) -> io::Result<usize> {
                <$t>::try_read_buf(self, buf)
            }
            fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
                <$t>::try_write(self, buf)
            }
            fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
                <$t>::try_io(self, interest, f)
            }
            fn poll_read_ready(&self, cx: &mut std::task::Context<'_>) -> std::task::Poll<io::Result<()>> {
                <$t>::poll_read_ready(self, cx)
            }
            fn poll_write_ready(&self, cx: &mut std::task::Context<'_>) -> std::task::Poll<io::Result<()>> {
                <$t>::poll_write_ready(self, cx)
            }
        }
    };
}
impl_sock!(TcpStream);
impl_sock!(UnixStream);

/// Why an I/O step did not complete.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The timeout of this phase expired.
    #[error("timeout")]
    Timeout,
    /// The peer closed (read returned 0) before what was expected arrived.
    #[error("connection closed by peer")]
    Closed,
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Runs `fut` under an optional timeout (coarse, see `timer`).
pub async fn with_timeout<T>(d: Option<Duration>, fut: impl Future<Output = io::Result<T>>) -> Result<T, IoError> {
    match crate::timer::timeout(d, fut).await {
        Ok(r) => Ok(r?),
        Err(_) => Err(IoError::Timeout),
    }
}

/// Reads what is available into the spare capacity of `buf` (at least one byte, or
/// `Ok(0)` at end of stream), waiting at most `timeout` for it.
pub async fn read_some<S: Sock>(s: &S, buf: &mut Vec<u8>, timeout: Option<Duration>) -> Result<usize, IoError> {
    loop {
        match try_read_some(s, buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => with_timeout(timeout, s.readable()).await?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// One read into the spare capacity of `buf`, without waiting (`WouldBlock` when
/// nothing is there).
///
/// PERF: a short read drained the socket, so the readiness the event loop recorded is
/// forgotten at once: the next wait (for the next keep-alive request, say) really
/// waits, instead of waking up for a read that would only return EAGAIN.
pub fn try_read_some<S: Sock>(s: &S, buf: &mut Vec<u8>) -> io::Result<usize> {
    if buf.len() == buf.capacity() {
        buf.reserve(4096);
    }
    let spare = buf.capacity() - buf.len();
    let n = s.try_read_buf(buf)?;
    if n > 0 && n < spare {
        clear_read_readiness(s);
    }
    Ok(n)
}

/// Writes all of `data`, waiting at most `timeout` each time the peer does not read.
pub async fn write_all<S: Sock>(s: &S, mut data: &[u8], timeout: Option<Duration>) -> Result<(), IoError> {
    while !data.is_empty() {
        match s.try_write(data) {
            Ok(0) => return Err(IoError::Closed),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => with_timeout(timeout, s.writable()).await?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    loop {
        match s.try_flush() {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => with_timeout(timeout, s.writable()).await?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Half-closes the write side (TLS close_notify, then FIN).
pub fn shutdown_write<S: Sock>(s: &S) {
    s.close_notify();
    let _ = nix::sys::socket::shutdown(s.as_raw_fd(), nix::sys::socket::Shutdown::Write);
}

/// Reads and drops what the peer already sent (at most `max` bytes, what HAProxy would
/// have read meanwhile), so that closing sends a FIN, not the reset the kernel sends
/// when unread bytes are left.
pub fn discard_input<S: Sock>(s: &S, max: usize) {
    let mut scratch = Vec::with_capacity(max.min(16 * 1024));
    let mut left = max;
    while left > 0 {
        scratch.clear();
        match s.try_read_buf(&mut scratch) {
            Ok(n) if n > 0 => left = left.saturating_sub(n),
            _ => return,
        }
    }
}

/// How long [`linger_close`] waits for the peer to close when no `timeout client`
/// bounds it.
pub const LINGER_LIMIT: Duration = Duration::from_secs(5);

/// Closes `s`, a connection rampart ends before its peer did, as HAProxy does: a FIN
/// first ([`shutdown_write`]), then what the peer still sends is read and dropped until
/// it closes too or `limit` passes. Bytes the peer sent just before seeing the FIN then
/// never turn the close into a reset (they would if the socket were closed at once).
/// HAProxy counterparts: the clean shutdown of `sc_app_shutw_conn()` (src/stconn.c),
/// and `mux_pt_detach()` keeping the connection until the peer closes (src/mux_pt.c).
pub async fn linger_close<S: Sock>(s: S, limit: Duration) {
    shutdown_write(&s);
    let deadline = tokio::time::Instant::now() + limit;
    let mut scratch = Vec::with_capacity(4096);
    loop {
        scratch.clear();
        match s.try_read_buf(&mut scratch) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                match tokio::time::timeout_at(deadline, s.readable()).await {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) | Err(_) => return,
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// Makes the coming close of `s` a reset (`SO_LINGER` 0), as HAProxy closes a
/// connection a `tcp-request connection reject` rule refused.
pub fn reset_on_close<S: Sock>(s: &S) {
    let _ = socket2::SockRef::from(s).set_linger(Some(Duration::ZERO));
}

/// Most bytes [`silent_drop`] reads and drops before closing.
const SILENT_DROP_DRAIN: usize = 64 * 1024;

/// Prepares the close of a client connection `silent-drop` asks for, as HAProxy does
/// (`tcp_exec_action_silent_drop()`, src/tcp_act.c): read what arrived and acknowledge
/// it at once (`TCP_QUICKACK`, so the client does not retransmit), then either put the
/// socket in repair mode, where closing sends nothing at all (needs `CAP_NET_ADMIN`),
/// or else make the close a reset sent with a TTL (hop limit) of 1, which dies at the
/// first router. The caller then drops the socket.
///
/// COMPAT: as in HAProxy, the TTL fallback cannot keep a client on the same host or
/// network from seeing the reset.
pub fn silent_drop<S: Sock>(s: &S) {
    discard_input(s, SILENT_DROP_DRAIN);
    let sock = socket2::SockRef::from(s);
    let _ = sock.set_quickack(true);
    if nix::sys::socket::setsockopt(s, nix::sys::socket::sockopt::TcpRepair, &1).is_ok() {
        return;
    }
    // the socket family decides which one applies; the other call fails harmlessly
    let _ = sock.set_ttl(1);
    let _ = sock.set_unicast_hops_v6(1);
    let _ = sock.set_linger(Some(Duration::ZERO));
}

/// `set-mark` / `set-tos`: the netfilter mark (`SO_MARK`, needs CAP_NET_ADMIN) and the
/// TOS byte (`IP_TOS`, or `IPV6_TCLASS` on an IPv6 socket that is not IPv4-mapped) of
/// a client socket. As HAProxy, a failure is not reported (nor fatal).
pub fn set_fc<S: Sock>(s: &S, mark: Option<u32>, tos: Option<u32>) {
    let sock = socket2::SockRef::from(s);
    let v6 = sock.local_addr().ok().and_then(|a| a.as_socket_ipv6()).filter(|a| a.ip().to_ipv4_mapped().is_none());
    set_sock_mark_tos(s, mark, tos, v6.is_some());
}

/// `SO_MARK` and `IP_TOS` (`IPV6_TCLASS` when `v6`) of a socket, before it connects
/// (`set-bc-mark`, `set-bc-tos`) or once accepted ([`set_fc`]). As HAProxy, a failure
/// (no CAP_NET_ADMIN for the mark) is not reported.
pub fn set_sock_mark_tos<S: std::os::fd::AsFd>(s: &S, mark: Option<u32>, tos: Option<u32>, v6: bool) {
    let sock = socket2::SockRef::from(s);
    if let Some(mark) = mark {
        let _ = sock.set_mark(mark);
    }
    let Some(tos) = tos else { return };
    if v6 {
        let _ = sock.set_tclass_v6(tos);
    } else {
        let _ = sock.set_tos(tos);
    }
}

/// Whether the socket has a pending event (data, FIN or error) already seen by the
/// event loop, without a system call. Used to discard dead idle server connections.
pub fn has_pending_event<S: Sock>(s: &S) -> bool {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    s.poll_read_ready(&mut cx).is_ready()
}

/// Forgets the read readiness the event loop recorded, without a system call, so that
/// [`has_pending_event`] later reports only events that arrive after this point.
/// Only sound right after a read that drained the socket (a short read), with no await
/// in between: an event that arrives later sets the readiness again, and a seen FIN
/// (read-closed) is never cleared by tokio.
pub fn clear_read_readiness<S: Sock>(s: &S) {
    let _ = s.try_io(Interest::READABLE, || Err::<(), _>(io::ErrorKind::WouldBlock.into()));
}

/// Whether bytes (or the end of the stream, or an error) are waiting to be read, checked
/// with a one-byte `MSG_PEEK`. When nothing is there, the stale read readiness tokio
/// kept from an earlier read is cleared, so the next `readable()` really waits.
pub fn input_pending<S: Sock>(s: &S) -> bool {
    if s.buffered_input() {
        return true;
    }
    let mut probe = [0u8; 1];
    match s.try_io(Interest::READABLE, || {
        nix::sys::socket::recv(s.as_raw_fd(), &mut probe, nix::sys::socket::MsgFlags::MSG_PEEK).map_err(io::Error::from)
    }) {
        Err(e) => e.kind() != io::ErrorKind::WouldBlock,
        Ok(_) => true,
    }
}

/// Whether the peer closed its side (or the connection failed), even with bytes still
/// waiting to be read, checked with a zero-timeout `poll(POLLRDHUP)` that leaves the
/// event loop's readiness alone.
pub fn peer_closed<S: Sock>(s: &S) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    // nix names no POLLRDHUP (and its `revents()` drops unknown bits): the only events
    // poll can report here are RDHUP (asked), HUP and ERR (always), each meaning closed.
    let mut fds = [PollFd::new(s.as_fd(), PollFlags::from_bits_retain(libc::POLLRDHUP))];
    matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0)
}

/// Resolves once the peer of `s` closed its side, checking every `every` (used only on
/// slow paths: while a stream waits in a queue or for a connection).
pub async fn peer_closes<S: Sock>(s: &S, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        if peer_closed(s) {
            return;
        }
    }
}

/// Confirms that an idle connection is still usable: no pending event, or a pending
/// event that turns out to be nothing (`EAGAIN`). Data or FIN mean it must be dropped.
pub fn idle_conn_alive<S: Sock>(s: &S) -> bool {
    !has_pending_event(s) || !input_pending(s)
}

/// The keep-alive settings of `option clitcpka`/`srvtcpka` (`None` when off).
pub fn keepalive(ka: &rampart_cfg::model::TcpKa) -> Option<socket2::TcpKeepalive> {
    if !ka.on {
        return None;
    }
    let mut k = socket2::TcpKeepalive::new();
    if let Some(d) = ka.idle {
        k = k.with_time(d);
    }
    if let Some(d) = ka.intvl {
        k = k.with_interval(d);
    }
    if let Some(n) = ka.cnt {
        k = k.with_retries(n);
    }
    Some(k)
}

/// Turns on TCP keep-alive probes (SO_KEEPALIVE and the TCP_KEEP* given); failures
/// (a unix socket) are ignored, as HAProxy ignores them.
pub fn set_keepalive<S: std::os::fd::AsFd>(s: &S, ka: &socket2::TcpKeepalive) {
    let _ = socket2::SockRef::from(s).set_tcp_keepalive(ka);
}

/// SO_RCVBUF/SO_SNDBUF as `tune.rcvbuf.*`/`tune.sndbuf.*` ask; failures are ignored,
/// as HAProxy ignores them.
pub fn set_sockbufs<S: std::os::fd::AsFd>(s: &S, rcv: Option<u32>, snd: Option<u32>) {
    let sock = socket2::SockRef::from(s);
    if let Some(n) = snd {
        let _ = sock.set_send_buffer_size(n as usize);
    }
    if let Some(n) = rcv {
        let _ = sock.set_recv_buffer_size(n as usize);
    }
}

// === parking ===

/// The socket types a connection can be parked with (`mux::h1::park`): their
/// descriptor leaves the event loop and comes back.
pub trait Parkable: Sock + Sized {
    /// Whether the connection's whole state is its descriptor (false for TLS, whose
    /// session state lives in the process): only then may it park.
    const PARKS: bool = true;
    fn into_fd(self) -> io::Result<OwnedFd>;
    fn from_fd(fd: OwnedFd) -> io::Result<Self>;
}

impl Parkable for tokio::net::TcpStream {
    fn into_fd(self) -> io::Result<OwnedFd> {
        Ok(self.into_std()?.into())
    }
    fn from_fd(fd: OwnedFd) -> io::Result<Self> {
        tokio::net::TcpStream::from_std(std::net::TcpStream::from(fd))
    }
}

impl Parkable for tokio::net::UnixStream {
    fn into_fd(self) -> io::Result<OwnedFd> {
        Ok(self.into_std()?.into())
    }
    fn from_fd(fd: OwnedFd) -> io::Result<Self> {
        tokio::net::UnixStream::from_std(std::os::unix::net::UnixStream::from(fd))
    }
}

// === listening sockets ===

/// The family of a listening socket, which decides the stream type it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Inet,
    Unix,
}

/// Checks that an inherited descriptor is a listening stream socket (and makes it
/// non-blocking); returns its family.
pub fn socket_family(fd: BorrowedFd<'_>) -> io::Result<Family> {
    let sock = socket2::SockRef::from(&fd);
    if !sock.is_listener()? {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    sock.set_nonblocking(true)?;
    let local = sock.local_addr()?;
    Ok(if local.is_unix() { Family::Unix } else { Family::Inet })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn keepalive_settings_reach_the_socket() {
        let ka = rampart_cfg::model::TcpKa {
            on: true,
            cnt: Some(4),
            idle: Some(Duration::from_secs(31)),
            intvl: Some(Duration::from_secs(7)),
        };
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        super::set_keepalive(&s, &super::keepalive(&ka).unwrap());
        let r = socket2::SockRef::from(&s);
        assert!(r.keepalive().unwrap());
        assert_eq!(r.keepalive_time().unwrap(), Duration::from_secs(31));
        assert_eq!(r.keepalive_interval().unwrap(), Duration::from_secs(7));
        assert_eq!(r.keepalive_retries().unwrap(), 4);
        assert!(super::keepalive(&rampart_cfg::model::TcpKa::default()).is_none());
    }
}
