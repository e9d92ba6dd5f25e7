//! Listening sockets handed from a running process to the one replacing it, as HAProxy
//! 2.6 hands them: the new process (`-x <path>`) connects to the old one's stats socket,
//! sends `_getsocks`, and receives the descriptors (SCM_RIGHTS) with a record each
//! (`rampart_proto::xfer`); the old one answers only on a socket with `expose-fd
//! listeners`. Both sides work on blocking sockets with a one-second timeout per
//! system call, as HAProxy's. Either side may be HAProxy 2.6. HAProxy counterpart:
//! `_getsocks()` in src/cli.c, `sock_get_old_sockets()` in src/sock.c.
//!
//! Which fetched socket a `bind` line takes is the listener registry's business
//! (`listener::xfer_pool`); this module only moves descriptors.

use std::io::{self, IoSlice, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::time::Duration;

use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
use rampart_proto::xfer::{self, SockMeta, MAX_RECORD, MAX_SEND_FD};

/// How long each send or receive may block (HAProxy's one second).
pub const TIMEOUT: Duration = Duration::from_secs(1);

/// More sockets than this in an answer is taken for a broken peer (a bound for the
/// buffers; HAProxy's own limit is its `maxsock`).
const MAX_SOCKETS: i32 = 1 << 16;

/// The listening sockets this process hands out on `_getsocks`: `dup()`s of the
/// listeners' sockets, taken after binding. Emptied when a soft stop begins: a socket
/// no new process took must then close with the listener that owned it, not stay open
/// (and keep receiving connections nobody accepts) until the process exits.
#[derive(Debug, Default)]
pub struct Exported {
    // (not on the request path: read by `_getsocks`, cleared once at soft stop)
    #[allow(clippy::disallowed_types)]
    fds: std::sync::Mutex<Vec<OwnedFd>>,
}

impl Exported {
    pub fn new(fds: Vec<OwnedFd>) -> Self {
        #[allow(clippy::disallowed_types)]
        let fds = std::sync::Mutex::new(fds);
        Exported { fds }
    }

    /// Sets the sockets to hand out.
    pub fn set(&self, fds: impl IntoIterator<Item = OwnedFd>) {
        *self.fds.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = fds.into_iter().collect();
    }

    /// `dup()`s of the sockets to hand out (none once stopping).
    pub fn dups(&self) -> io::Result<Vec<OwnedFd>> {
        let fds = self.fds.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        fds.iter().map(OwnedFd::try_clone).collect()
    }

    /// Closes this process's references (at soft stop).
    pub fn clear(&self) {
        self.fds.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
    }
}

/// Answers `_getsocks` on `conn` (a `dup()` of the session's socket, which this
/// function makes blocking for the time of the transfer): the number of sockets, then
/// the sockets by batches of [`MAX_SEND_FD`], waiting for the peer's acknowledgement
/// after each full batch. With no socket, sends nothing (as HAProxy: the peer sees the
/// session close).
pub fn send(conn: &OwnedFd, socks: &[OwnedFd]) -> io::Result<()> {
    if socks.is_empty() {
        return Ok(());
    }
    let sock = socket2::SockRef::from(conn);
    sock.set_nonblocking(false)?;
    let sent = send_blocking(conn, &sock, socks);
    sock.set_nonblocking(true)?;
    sent
}

fn send_blocking(conn: &OwnedFd, sock: &socket2::SockRef<'_>, socks: &[OwnedFd]) -> io::Result<()> {
    sock.set_read_timeout(Some(TIMEOUT))?;
    sock.set_write_timeout(Some(TIMEOUT))?;
    let count = i32::try_from(socks.len()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    send_all_or_fail(conn, &count.to_ne_bytes(), &[])?;
    let mut records = Vec::with_capacity(MAX_SEND_FD * 10);
    for batch in socks.chunks(MAX_SEND_FD) {
        records.clear();
        for _ in batch {
            // rampart's listeners have neither a namespace nor an interface
            xfer::encode(&SockMeta::default(), &mut records).map_err(|_| io::ErrorKind::InvalidInput)?;
        }
        let raw: Vec<RawFd> = batch.iter().map(AsRawFd::as_raw_fd).collect();
        send_all_or_fail(conn, &records, &raw)?;
        if batch.len() == MAX_SEND_FD {
            let mut ack = [0u8; 4];
            if recv_some(conn, &mut ack)? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
    }
    Ok(())
}

/// One `sendmsg` carrying `bytes` and `fds`; a short write is an error (HAProxy's "Failed
/// to transfer sockets"): the descriptors went with the first byte.
fn send_all_or_fail(conn: &OwnedFd, bytes: &[u8], fds: &[RawFd]) -> io::Result<()> {
    let cmsgs = [ControlMessage::ScmRights(fds)];
    let cmsgs = if fds.is_empty() { &cmsgs[..0] } else { &cmsgs[..] };
    let iov = [IoSlice::new(bytes)];
    let n = loop {
        match sendmsg::<()>(conn.as_raw_fd(), &iov, cmsgs, MsgFlags::MSG_NOSIGNAL, None) {
            Err(nix::errno::Errno::EINTR) => continue,
            other => break other?,
        }
    };
    if n == bytes.len() {
        Ok(())
    } else {
        Err(io::ErrorKind::WriteZero.into())
    }
}

fn recv_some(conn: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match nix::sys::socket::recv(conn.as_raw_fd(), buf, MsgFlags::empty()) {
            Err(nix::errno::Errno::EINTR) => continue,
            other => return other.map_err(io::Error::from),
        }
    }
}

/// A socket received from an old process, with its record.
#[derive(Debug)]
pub struct Fetched {
    pub fd: OwnedFd,
    pub meta: SockMeta,
}

/// Fetches the listening sockets of the process serving the stats socket at `path`.
/// `Err` is the warning HAProxy prints for the same failure.
pub fn fetch(path: &Path) -> Result<Vec<Fetched>, String> {
    let connect_failed = || format!("Failed to connect to the old process socket '{}'", path.display());
    let mut conn = std::os::unix::net::UnixStream::connect(path).map_err(|_| connect_failed())?;
    let no_count = || "Failed to get the number of sockets to be transferred !".to_owned();
    conn.set_read_timeout(Some(TIMEOUT)).map_err(|_| no_count())?;
    conn.set_write_timeout(Some(TIMEOUT)).map_err(|_| no_count())?;
    conn.write_all(b"_getsocks\n").map_err(|_| no_count())?;
    let fd = OwnedFd::from(conn);
    let mut count = [0u8; 4];
    let mut space = nix::cmsg_space!([RawFd; 1]);
    match crate::sys::recv_with_fds(fd.as_fd(), &mut count, &mut space, MsgFlags::MSG_WAITALL) {
        Ok((4, _)) => {}
        _ => return Err(no_count()),
    }
    let count = i32::from_ne_bytes(count);
    if count == 0 {
        return Ok(Vec::new());
    }
    if !(1..=MAX_SOCKETS).contains(&count) {
        return Err(no_count());
    }
    receive(&fd, count as usize)
}

/// Receives `count` descriptors and their records, acknowledging each message.
fn receive(conn: &OwnedFd, count: usize) -> Result<Vec<Fetched>, String> {
    let mut fds: Vec<OwnedFd> = Vec::with_capacity(count);
    let mut records = Vec::new();
    let mut chunk = vec![0u8; MAX_SEND_FD * MAX_RECORD];
    let mut space = nix::cmsg_space!([RawFd; MAX_SEND_FD]);
    // (records may come after the last descriptor on a stream socket: read until they
    // parse, or the peer closes)
    while fds.len() < count || xfer::parse(&records, count).is_err() {
        let (n, got) = match crate::sys::recv_with_fds(conn.as_fd(), &mut chunk, &mut space, MsgFlags::empty()) {
            Ok((0, _)) => break,
            Ok(got) => got,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        // the acknowledgement the sender waits for after a full batch
        let ack = i32::try_from(fds.len()).unwrap_or(i32::MAX).to_ne_bytes();
        let _ = send_all_or_fail(conn, &ack, &[]);
        if fds.len() + got.len() > count {
            return Err("Got to many sockets !".into());
        }
        fds.extend(got);
        records.extend_from_slice(&chunk[..n]);
    }
    if fds.len() != count {
        return Err(format!("We didn't get the expected number of sockets (expecting {count} got {})", fds.len()));
    }
    let metas = xfer::parse(&records, count).map_err(|_| "Inconsistency while transferring sockets".to_owned())?;
    Ok(fds.into_iter().zip(metas).map(|(fd, meta)| Fetched { fd, meta }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::{UnixListener, UnixStream};

    /// A stand-in old process: answers one `_getsocks` with `socks`.
    fn serve_once(socks: Vec<OwnedFd>) -> (tempdir::Dir, std::thread::JoinHandle<()>) {
        let dir = tempdir::Dir::new();
        let listener = UnixListener::bind(dir.path.join("s")).unwrap();
        let t = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut line = [0u8; 10];
            io::Read::read_exact(&mut conn, &mut line).unwrap();
            assert_eq!(&line, b"_getsocks\n");
            send(&OwnedFd::from(conn), &socks).unwrap();
        });
        (dir, t)
    }

    mod tempdir {
        pub struct Dir {
            pub path: std::path::PathBuf,
        }
        impl Dir {
            pub fn new() -> Self {
                use std::sync::atomic::{AtomicU32, Ordering};
                static N: AtomicU32 = AtomicU32::new(0);
                let n = N.fetch_add(1, Ordering::Relaxed);
                let path = std::env::temp_dir().join(format!("rampart-xfer-{}-{n}", std::process::id()));
                std::fs::create_dir_all(&path).unwrap();
                Dir { path }
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.path);
            }
        }
    }

    fn local(fd: &OwnedFd) -> std::net::SocketAddr {
        socket2::SockRef::from(fd).local_addr().unwrap().as_socket().unwrap()
    }

    /// More sockets than a batch holds, so the acknowledgement is exercised; each
    /// arrives as the same socket (same address), in order.
    #[test]
    fn sockets_cross_in_batches_and_in_order() {
        let socks: Vec<OwnedFd> =
            (0..MAX_SEND_FD + 3).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap().into()).collect();
        let addrs: Vec<_> = socks.iter().map(local).collect();
        let (dir, t) = serve_once(socks);
        let got = fetch(&dir.path.join("s")).unwrap();
        t.join().unwrap();
        assert_eq!(got.iter().map(|f| local(&f.fd)).collect::<Vec<_>>(), addrs);
        assert!(got.iter().all(|f| f.meta == SockMeta::default()));
    }

    #[test]
    fn no_socket_to_hand_out_closes_the_session_and_fetch_fails_as_haproxy() {
        let (dir, t) = serve_once(Vec::new());
        let err = fetch(&dir.path.join("s")).unwrap_err();
        t.join().unwrap();
        assert_eq!(err, "Failed to get the number of sockets to be transferred !");
    }

    #[test]
    fn a_count_of_zero_is_an_empty_answer() {
        let (a, mut b) = UnixStream::pair().unwrap();
        b.write_all(&0i32.to_ne_bytes()).unwrap();
        let mut count = [0u8; 4];
        let mut space = nix::cmsg_space!([RawFd; 1]);
        let fd = OwnedFd::from(a);
        let (n, _) = crate::sys::recv_with_fds(fd.as_fd(), &mut count, &mut space, MsgFlags::MSG_WAITALL).unwrap();
        assert_eq!((n, i32::from_ne_bytes(count)), (4, 0));
    }

    #[test]
    fn nobody_listening_is_haproxys_connect_warning() {
        let dir = tempdir::Dir::new();
        let err = fetch(&dir.path.join("none")).unwrap_err();
        assert!(err.starts_with("Failed to connect to the old process socket '"), "{err}");
    }

    /// A peer announcing one socket and sending two is refused, and what came is closed.
    #[test]
    fn too_many_sockets_are_refused() {
        let (a, b) = UnixStream::pair().unwrap();
        let (a, b) = (OwnedFd::from(a), OwnedFd::from(b));
        let two: Vec<OwnedFd> = (0..2).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap().into()).collect();
        let raw: Vec<RawFd> = two.iter().map(AsRawFd::as_raw_fd).collect();
        let mut records = Vec::new();
        for _ in 0..2 {
            xfer::encode(&SockMeta::default(), &mut records).unwrap();
        }
        send_all_or_fail(&b, &records, &raw).unwrap();
        assert_eq!(receive(&a, 1).unwrap_err(), "Got to many sockets !");
    }
}
