//! Zero-copy forwarding with splice(2) through a pipe: socket -> pipe -> socket, the
//! bytes never enter user space. Used for TCP mode, tunnels and large bodies of known
//! length (PERFORMANCE.md: 0.23x HAProxy's CPU per MiB, where a copy loop costs more
//! than HAProxy). Pipes come from a per-thread pool and are only held while bytes are
//! in flight. HAProxy counterpart: pipe.c, raw_sock.c (raw_sock_to_pipe/from_pipe).

use std::cell::RefCell;
use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use nix::fcntl::{splice, OFlag, SpliceFFlags};
use tokio::io::Interest;
use tokio::sync::Notify;

use crate::io::{with_timeout, IoError, Sock};
use crate::timer::Timeouts;

/// Most bytes moved by one splice call (the default pipe capacity).
const SPLICE_MAX: usize = 64 * 1024;
/// `tune.pipesize`: the capacity new pipes are given (0: the system's default).
static PIPE_SIZE: AtomicUsize = AtomicUsize::new(0);

/// Sets the capacity of the pipes made from now on (`tune.pipesize`; `None`: the
/// system's default).
pub fn set_pipe_size(size: Option<usize>) {
    PIPE_SIZE.store(size.unwrap_or(0), Ordering::Relaxed);
}

/// `nosplice`: every forward copies through a buffer.
static DISABLED: AtomicBool = AtomicBool::new(false);

/// Turns splicing off (`nosplice`, HAProxy's `-dS`) or back on for the forwards that
/// start from now on.
pub fn set_disabled(off: bool) {
    DISABLED.store(off, Ordering::Relaxed);
}

/// Most bytes one splice call moves: the capacity of the pipes.
fn splice_max() -> usize {
    match PIPE_SIZE.load(Ordering::Relaxed) {
        0 => SPLICE_MAX,
        n => n,
    }
}
/// Empty pipes kept per thread.
const POOL_MAX: usize = 64;

thread_local! {
    static PIPES: RefCell<Vec<(OwnedFd, OwnedFd)>> = const { RefCell::new(Vec::new()) };
}

/// A pipe with `len` bytes in it. An empty pipe returns to the pool on drop; a pipe
/// still holding bytes is closed (its bytes belong to a dead transfer).
struct Pipe {
    fds: Option<(OwnedFd, OwnedFd)>,
    len: usize,
}

impl Pipe {
    fn take() -> io::Result<Pipe> {
        let fds = match PIPES.with(|p| p.borrow_mut().pop()) {
            Some(fds) => fds,
            None => new_pipe()?,
        };
        Ok(Pipe { fds: Some(fds), len: 0 })
    }

    fn read_end(&self) -> &OwnedFd {
        &self.fds.as_ref().expect("pipe present until drop").0
    }

    fn write_end(&self) -> &OwnedFd {
        &self.fds.as_ref().expect("pipe present until drop").1
    }
}

/// A new non-blocking pipe, of `tune.pipesize` when set. As in HAProxy, a size the
/// system refuses leaves the pipe at its default.
fn new_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let fds = nix::unistd::pipe2(OFlag::O_NONBLOCK | OFlag::O_CLOEXEC).map_err(io::Error::from)?;
    let size = PIPE_SIZE.load(Ordering::Relaxed);
    if size > 0 {
        let size = i32::try_from(size).unwrap_or(i32::MAX);
        let _ = nix::fcntl::fcntl(std::os::fd::AsRawFd::as_raw_fd(&fds.1), nix::fcntl::FcntlArg::F_SETPIPE_SZ(size));
    }
    Ok(fds)
}

impl Drop for Pipe {
    fn drop(&mut self) {
        if self.len == 0 {
            if let Some(fds) = self.fds.take() {
                let _ = PIPES.try_with(|p| {
                    let mut p = p.borrow_mut();
                    if p.len() < POOL_MAX {
                        p.push(fds);
                    }
                });
            }
        }
    }
}

/// Timeouts of one forwarding direction.
#[derive(Debug, Clone, Copy, Default)]
pub struct DirTimeouts {
    /// Inactivity allowed while waiting to read from the source.
    pub read: Option<Duration>,
    /// Inactivity allowed while waiting for the destination to accept bytes.
    pub write: Option<Duration>,
    /// Replaces `read` once the other direction has ended, i.e. once the source was
    /// sent a FIN: the source's half-closed timeout (`timeout client-fin` for the
    /// client, `server-fin` for the server), so that a peer told to close cannot keep
    /// the session forever. The clock restarts when the other direction ends.
    pub fin: Option<Duration>,
    /// `option independent-streams` on the source's proxy (the frontend for the
    /// client, the backend for the server): bytes moving the other way do not keep
    /// the read waiting, its timeout counts alone.
    pub indep: bool,
}

impl DirTimeouts {
    fn read(&self, activity: &Activity) -> Option<Duration> {
        self.fin.filter(|_| activity.other_ended()).or(self.read)
    }
}

/// The two directions of a tunnel (TCP mode, or HTTP once upgraded): `(client to
/// server, server to client)`. As in HAProxy (stream.c, process_stream), `timeout
/// tunnel` (from the backend) supersedes the client and server timeouts, and once a
/// side was sent a FIN its read timeout becomes its half-closed timeout: `client-fin`
/// (frontend) for the client, `server-fin` (backend) for the server (stconn.c,
/// sc_app_shutw).
///
/// COMPAT: HAProxy also uses the half-closed timeout of a side to write to it once the
/// *other* side closed; here writes keep the client/server (or tunnel) timeout.
pub fn tunnel_timeouts(fe: &Timeouts, be: &Timeouts) -> (DirTimeouts, DirTimeouts) {
    let tunnel = be.tunnel;
    let (client, server) = (tunnel.or(fe.client), tunnel.or(be.server));
    let up = DirTimeouts { read: client, write: server, fin: fe.client_fin, indep: fe.indep };
    let down = DirTimeouts { read: server, write: client, fin: be.server_fin, indep: be.indep };
    (up, down)
}

/// The inactivity allowed in a tunnel carried by frames (a stream of an HTTP/2
/// connection on either side), where one loop waits for both directions: as
/// [`forward`] does for sockets (and HAProxy's stream for any tunnel), bytes moving
/// either way restart both clocks, so the shorter read timeout of the directions
/// still open applies; once a direction ended, the other one's `fin` timeout (if set)
/// replaces its read timeout. `None`: no limit.
pub fn frames_idle(up: &DirTimeouts, down: &DirTimeouts, up_open: bool, down_open: bool) -> Option<Duration> {
    let of = |t: &DirTimeouts, other_open: bool| if other_open { t.read } else { t.fin.or(t.read) };
    let limits = [up_open.then(|| of(up, down_open)), down_open.then(|| of(down, up_open))];
    limits.into_iter().flatten().flatten().min()
}

/// Activity shared by the two directions of a tunnel: a direction waiting for input
/// does not time out while the other one moves bytes.
#[derive(Debug, Default)]
pub struct Activity {
    moves: AtomicU64,
    /// Bytes moved, where the caller counts them ([`Activity::add`]): the response
    /// body bytes of an HTTP exchange, for its log line (`%B`).
    bytes: AtomicU64,
    ended: std::sync::atomic::AtomicBool,
    /// Wakes the other direction when one ends, so that it switches to its `fin`
    /// timeout while it waits.
    ended_notify: Notify,
}

impl Activity {
    /// Records that bytes moved.
    pub(crate) fn bump(&self) {
        self.moves.fetch_add(1, Ordering::Relaxed);
    }
    /// Counts `n` bytes moved.
    pub(crate) fn add(&self, n: u64) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }
    /// The bytes counted with [`Activity::add`].
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
    /// A counter that changes whenever bytes moved.
    pub(crate) fn get(&self) -> u64 {
        self.moves.load(Ordering::Relaxed)
    }
    /// Marks that one direction reached its end of stream.
    fn end(&self) {
        self.ended.store(true, Ordering::Relaxed);
        self.ended_notify.notify_waiters();
    }
    /// Whether a direction ended (seen by the other one: its peer half-closed).
    fn other_ended(&self) -> bool {
        self.ended.load(Ordering::Relaxed)
    }
}

/// Moves bytes from `from` to `to` until `from` ends (then half-closes `to`) or `limit`
/// bytes were moved. Returns the number of bytes moved.
pub async fn forward<A: Sock, B: Sock>(
    from: &A,
    to: &B,
    limit: Option<u64>,
    t: DirTimeouts,
    activity: &Activity,
) -> Result<u64, IoError> {
    if !from.splices() || !to.splices() || DISABLED.load(Ordering::Relaxed) {
        return forward_copy(from, to, limit, t, activity).await;
    }
    let mut moved = 0u64;
    let mut pipe: Option<Pipe> = None;
    loop {
        let max = splice_max();
        let want = limit.map_or(max, |l| (l - moved).min(max as u64) as usize);
        if want == 0 && pipe.as_ref().is_none_or(|p| p.len == 0) {
            return Ok(moved);
        }
        let p = match &mut pipe {
            Some(p) if p.len > 0 => p,
            _ => {
                let p = match pipe.take() {
                    Some(p) => p,
                    None => Pipe::take()?,
                };
                match fill(from, &p, want) {
                    Ok(0) => {
                        if limit.is_some() {
                            return Err(IoError::Closed);
                        }
                        crate::io::shutdown_write(to);
                        activity.end();
                        return Ok(moved);
                    }
                    Ok(n) => {
                        activity.bump();
                        pipe.insert(p).len = n;
                        pipe.as_mut().expect("just inserted")
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        drop(p); // an empty pipe goes back to the pool while we wait
                        wait_input(from, &t, activity).await?;
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        };
        match drain(p, to) {
            Ok(n) => {
                p.len -= n;
                moved += n as u64;
                activity.bump();
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => with_timeout(t.write, to.writable()).await?,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Buffer size of [`forward_copy`].
const COPY_BUF: usize = 16 * 1024;

/// [`forward`] through a buffer, for a side whose socket bytes are not the payload
/// (TLS: the bytes must be decrypted or encrypted on their way). HAProxy counterpart:
/// the buffer path of `sc_conn_send()` / `sc_conn_recv()`.
async fn forward_copy<A: Sock, B: Sock>(
    from: &A,
    to: &B,
    limit: Option<u64>,
    t: DirTimeouts,
    activity: &Activity,
) -> Result<u64, IoError> {
    let mut moved = 0u64;
    let mut buf = Vec::with_capacity(COPY_BUF);
    loop {
        let want = limit.map_or(COPY_BUF, |l| (l - moved).min(COPY_BUF as u64) as usize);
        if want == 0 {
            return Ok(moved);
        }
        if want < buf.capacity() {
            // never read past the limit: the bytes after it belong to the next message
            buf = Vec::with_capacity(want);
        }
        buf.clear();
        match from.try_read_buf(&mut buf) {
            Ok(0) => {
                if limit.is_some() {
                    return Err(IoError::Closed);
                }
                crate::io::shutdown_write(to);
                activity.end();
                return Ok(moved);
            }
            Ok(n) => {
                activity.bump();
                crate::io::write_all(to, &buf, t.write).await?;
                moved += n as u64;
                activity.bump();
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_input(from, &t, activity).await?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Waits for input; a timeout only counts if the other direction was idle too (unless
/// `option independent-streams`: [`DirTimeouts::indep`]). When the
/// other direction ends meanwhile, the wait starts again under the `fin` timeout.
async fn wait_input<A: Sock>(from: &A, t: &DirTimeouts, activity: &Activity) -> Result<(), IoError> {
    loop {
        let seen = activity.get();
        let res = if t.fin.is_some() && !activity.other_ended() {
            // PERF: only a tunnel with a half-closed timeout registers for the end of
            // the other direction (registering takes the Notify's lock).
            let ended = activity.ended_notify.notified();
            tokio::pin!(ended);
            ended.as_mut().enable();
            if activity.other_ended() {
                continue;
            }
            tokio::select! {
                res = with_timeout(t.read(activity), from.readable()) => res,
                () = ended => continue,
            }
        } else {
            with_timeout(t.read(activity), from.readable()).await
        };
        match res {
            Err(IoError::Timeout) if !t.indep && activity.get() != seen => continue,
            other => return other,
        }
    }
}

fn fill<A: Sock>(from: &A, p: &Pipe, want: usize) -> io::Result<usize> {
    from.try_io(Interest::READABLE, || {
        splice(from, None, p.write_end(), None, want, SpliceFFlags::SPLICE_F_NONBLOCK | SpliceFFlags::SPLICE_F_MOVE)
            .map_err(io::Error::from)
    })
}

fn drain<B: Sock>(p: &Pipe, to: &B) -> io::Result<usize> {
    to.try_io(Interest::WRITABLE, || {
        splice(p.read_end(), None, to, None, p.len, SpliceFFlags::SPLICE_F_NONBLOCK | SpliceFFlags::SPLICE_F_MOVE)
            .map_err(io::Error::from)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frames_tunnel_waits_the_shorter_open_side_then_the_fin_timeouts() {
        let s = Duration::from_secs;
        let up = DirTimeouts { read: Some(s(10)), write: None, fin: Some(s(1)), indep: false };
        let down = DirTimeouts { read: Some(s(5)), write: None, fin: Some(s(2)), indep: false };
        assert_eq!(frames_idle(&up, &down, true, true), Some(s(5)));
        // the server ended: the client, sent its END_STREAM, has `client-fin`
        assert_eq!(frames_idle(&up, &down, true, false), Some(s(1)));
        // the client ended: the server has `server-fin`
        assert_eq!(frames_idle(&up, &down, false, true), Some(s(2)));
        let none = DirTimeouts::default();
        assert_eq!(frames_idle(&none, &none, true, true), None);
        assert_eq!(frames_idle(&none, &down, true, true), Some(s(5)));
        assert_eq!(frames_idle(&up, &none, false, true), None);
    }
}
