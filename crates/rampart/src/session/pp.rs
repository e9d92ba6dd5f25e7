//! Reading the PROXY protocol header a connection starts with (`bind ... accept-proxy`,
//! `tcp-request connection expect-proxy layer4`), before any other byte is read.
//! HAProxy counterpart: `conn_recv_proxy()` (src/connection.c), run as a handshake
//! before `conn_complete_session()`; the codec is `rampart_proto::pp`.
//!
//! The header is peeked (`MSG_PEEK`), decoded, then exactly its bytes are read, so the
//! mux finds the first request byte first. COMPAT: HAProxy fails a header that is not
//! whole in its first peek; here a partial header waits for the rest, bounded by
//! `timeout client` (a peer that closes mid-header is still refused as truncated).

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use nix::sys::socket::{recv, MsgFlags};
use rampart_proto::pp::{decode, Decoded, Header, PpError, V2_MAX_LEN};
use tokio::io::Interest;

use crate::io::Sock;

/// Why no header was taken. `Display` gives HAProxy's text (`conn_err_code_str()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PpFail {
    /// The client closed before sending anything (`CO_ER_PRX_EMPTY`).
    Empty,
    /// The socket failed (`CO_ER_PRX_ABORT`).
    Abort,
    /// `timeout client` struck first (`CO_ER_PRX_TIMEOUT`).
    Timeout,
    /// The client closed in the middle of a header (`CO_ER_PRX_TRUNCATED`).
    Truncated,
    /// Not a header, or a malformed one.
    Invalid(PpError),
}

impl std::fmt::Display for PpFail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PpFail::Empty => f.write_str("Connection closed while waiting for PROXY protocol header"),
            PpFail::Abort => f.write_str("Connection error while waiting for PROXY protocol header"),
            PpFail::Timeout => f.write_str("Timeout while waiting for PROXY protocol header"),
            PpFail::Truncated => f.write_str("Truncated PROXY protocol header received"),
            PpFail::Invalid(e) => e.fmt(f),
        }
    }
}

/// Waits for the header and takes it off the socket, within `timeout` (none: forever).
pub async fn read_header<S: Sock>(sock: &S, timeout: Option<Duration>) -> Result<Header, PpFail> {
    match timeout {
        Some(t) => tokio::time::timeout(t, read_loop(sock)).await.unwrap_or(Err(PpFail::Timeout)),
        None => read_loop(sock).await,
    }
}

/// Takes the header off the socket if it is whole there already (it usually comes
/// with the connection's first segment), without waiting and without the event loop:
/// `None` when it is not (nothing yet, a part, an error), for [`read_header`] to wait
/// and tell why. `Some(Err(_))` only when the bytes a peek showed could not be read.
pub fn try_read_header<S: Sock>(sock: &S) -> Option<Result<Header, PpFail>> {
    let fd = sock.as_raw_fd();
    match peek_step(fd) {
        Ok(Step::Done(h, n)) => Some(consume(fd, n).map(|()| h)),
        _ => None,
    }
}

/// What one peek found.
enum Step {
    Done(Header, usize),
    /// A partial header (the closure reports `WouldBlock` so the readiness is
    /// cleared and the task waits for more bytes or a close).
    Partial,
}

async fn read_loop<S: Sock>(sock: &S) -> Result<Header, PpFail> {
    let fd = sock.as_raw_fd();
    loop {
        sock.readable().await.map_err(|_| PpFail::Abort)?;
        let mut partial = false;
        let step = sock.try_io(Interest::READABLE, || match peek_step(fd)? {
            Step::Partial => {
                partial = true;
                Err(io::ErrorKind::WouldBlock.into())
            }
            done => Ok(done),
        });
        match step {
            Ok(Step::Done(h, n)) => return consume(fd, n).map(|()| h),
            Ok(Step::Partial) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if partial && peer_closed(sock) {
                    return Err(PpFail::Truncated);
                }
            }
            Err(e) => return Err(fail_of(&e)),
        }
    }
}

/// Whether the peer shut its side down (`POLLRDHUP`), so that no more bytes follow.
fn peer_closed<S: Sock>(sock: &S) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    // nix 0.29 does not name POLLRDHUP (a Linux extension), so `revents()` is `None`
    // exactly when the kernel reports it (the only bit asked for that it cannot name).
    let rdhup = PollFlags::from_bits_retain(libc::POLLRDHUP);
    let mut fds = [PollFd::new(sock.as_fd(), rdhup)];
    if poll(&mut fds, PollTimeout::ZERO).is_err() {
        return true;
    }
    fds[0].revents().is_none_or(|r| r.intersects(rdhup | PollFlags::POLLHUP | PollFlags::POLLERR))
}

/// Peeks and decodes: a small stack buffer first (every v1 line and most v2 headers
/// fit), the largest header allowed only when a v2 header announces more.
fn peek_step(fd: RawFd) -> io::Result<Step> {
    let mut small = [0u8; 256];
    let n = recv(fd, &mut small, MsgFlags::MSG_PEEK).map_err(io::Error::from)?;
    if n == 0 {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed"));
    }
    match decode(&small[..n]) {
        Decoded::Done(h, used) => Ok(Step::Done(h, used)),
        Decoded::Invalid(e) => Err(io::Error::new(io::ErrorKind::InvalidData, Invalid(e))),
        Decoded::Incomplete if n < small.len() => Ok(Step::Partial),
        Decoded::Incomplete => {
            let mut big = vec![0u8; V2_MAX_LEN];
            let n = recv(fd, &mut big, MsgFlags::MSG_PEEK).map_err(io::Error::from)?;
            match decode(&big[..n]) {
                Decoded::Done(h, used) => Ok(Step::Done(h, used)),
                Decoded::Invalid(e) => Err(io::Error::new(io::ErrorKind::InvalidData, Invalid(e))),
                Decoded::Incomplete => Ok(Step::Partial),
            }
        }
    }
}

/// A decode error carried through `io::Error`.
#[derive(Debug)]
struct Invalid(PpError);

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Invalid {}

fn fail_of(e: &io::Error) -> PpFail {
    if let Some(Invalid(pe)) = e.get_ref().and_then(|i| i.downcast_ref::<Invalid>()) {
        return PpFail::Invalid(*pe);
    }
    match e.kind() {
        io::ErrorKind::UnexpectedEof => PpFail::Empty,
        _ => PpFail::Abort,
    }
}

/// Reads exactly the `n` header bytes a peek showed.
fn consume(fd: RawFd, n: usize) -> Result<(), PpFail> {
    let mut small = [0u8; 256];
    let mut big = Vec::new();
    let buf = if n <= small.len() {
        &mut small[..n]
    } else {
        big.resize(n, 0);
        &mut big[..]
    };
    match recv(fd, buf, MsgFlags::empty()) {
        Ok(got) if got == n => Ok(()),
        _ => Err(PpFail::Abort),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    async fn pair() -> (tokio::net::TcpStream, tokio::net::TcpStream) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let c = tokio::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        (c, l.accept().await.unwrap().0)
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    #[test]
    fn takes_exactly_the_header_even_in_pieces() {
        rt().block_on(async {
            let (mut c, s) = pair().await;
            let t = tokio::spawn(async move {
                let h = read_header(&s, Some(Duration::from_secs(5))).await;
                let mut rest = Vec::new();
                s.readable().await.unwrap();
                let _ = s.try_read_buf(&mut rest);
                (h, rest)
            });
            c.write_all(b"PROXY TCP4 10.0.0.1 10.0.0.").await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            c.write_all(b"2 1234 80\r\nGET /").await.unwrap();
            let (h, rest) = t.await.unwrap();
            let h = h.unwrap();
            assert_eq!(h.tcp_addrs(), Some(("10.0.0.1:1234".parse().unwrap(), "10.0.0.2:80".parse().unwrap())));
            assert_eq!(rest, b"GET /");
        });
    }

    #[test]
    fn a_header_already_there_is_taken_without_waiting() {
        rt().block_on(async {
            let (mut c, s) = pair().await;
            assert!(try_read_header(&s).is_none(), "nothing sent yet");
            c.write_all(b"PROXY TCP4 10.0.0.1 10.0.0.").await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(try_read_header(&s).is_none(), "a part only");
            c.write_all(b"2 1234 80\r\nGET /").await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            let h = try_read_header(&s).unwrap().unwrap();
            assert_eq!(h.tcp_addrs(), Some(("10.0.0.1:1234".parse().unwrap(), "10.0.0.2:80".parse().unwrap())));
            let mut rest = Vec::new();
            s.readable().await.unwrap();
            let _ = s.try_read_buf(&mut rest);
            assert_eq!(rest, b"GET /");
            // not a header: left for `read_header` to refuse
            let (mut c, s) = pair().await;
            c.write_all(b"GET / HTTP/1.0\r\n\r\n").await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(try_read_header(&s).is_none());
            let got = read_header(&s, Some(Duration::from_secs(5))).await;
            assert_eq!(got, Err(PpFail::Invalid(PpError::NotHeader)));
        });
    }

    #[test]
    fn failures_are_told_apart() {
        rt().block_on(async {
            let cases: [(&[u8], PpFail); 3] = [
                (b"GET / HTTP/1.0\r\n\r\n", PpFail::Invalid(PpError::NotHeader)),
                (b"PROXY TCP4 1.2.3.4", PpFail::Truncated),
                (b"", PpFail::Empty),
            ];
            for (bytes, want) in cases {
                let (mut c, s) = pair().await;
                c.write_all(bytes).await.unwrap();
                c.shutdown().await.unwrap();
                assert_eq!(read_header(&s, Some(Duration::from_secs(5))).await, Err(want), "{bytes:?}");
            }
            let (_c, s) = pair().await;
            assert_eq!(read_header(&s, Some(Duration::from_millis(50))).await, Err(PpFail::Timeout));
        });
    }
}
