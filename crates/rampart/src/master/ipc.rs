//! The channel between the master and each worker: a `SOCK_SEQPACKET` socket pair, so
//! that every message keeps its boundaries and may carry a descriptor (SCM_RIGHTS).
//! HAProxy counterpart: the `ipc_fd` socket pairs of src/mworker.c.
//!
//! Messages: the worker says [`READY`] once it serves; the master sends [`CLI`] with a
//! connected socket on which the worker serves one CLI session (the master CLI's
//! `@<n>` routing). The worker leaves when the master's end closes (the master is gone).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use nix::sys::socket::{self, AddressFamily, ControlMessage, MsgFlags, SockFlag, SockType};
use tokio::io::unix::AsyncFd;

/// Worker -> master: listening, the older workers may leave.
pub const READY: &str = "READY";
/// Master -> worker: serve a CLI session on the attached socket.
pub const CLI: &str = "CLI";
/// Worker -> master: a new worker asks for the state of the serving one. Master ->
/// worker: the answer, with a CLI session to the serving worker attached (none: there
/// is no serving worker). See `handover`.
pub const STATE: &str = "STATE";

/// A new channel: (master's end, worker's end), both close-on-exec.
pub fn pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let flags = SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK;
    Ok(socket::socketpair(AddressFamily::Unix, SockType::SeqPacket, None, flags)?)
}

/// A connected stream socket pair for one routed CLI session: (master's, worker's).
pub fn session_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let flags = SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK;
    Ok(socket::socketpair(AddressFamily::Unix, SockType::Stream, None, flags)?)
}

/// Sets or clears close-on-exec: the master passes some descriptors on to the
/// programs it runs.
pub fn set_cloexec(fd: BorrowedFd<'_>, on: bool) -> io::Result<()> {
    use nix::fcntl::{fcntl, FcntlArg, FdFlag};
    let flags = if on { FdFlag::FD_CLOEXEC } else { FdFlag::empty() };
    fcntl(fd.as_raw_fd(), FcntlArg::F_SETFD(flags))?;
    Ok(())
}

/// One end of a channel, in an event loop.
#[derive(Debug)]
pub struct Channel {
    fd: AsyncFd<OwnedFd>,
}

/// A message received: its text (empty: the peer closed) and its descriptor.
#[derive(Debug)]
pub struct Msg {
    pub text: String,
    pub fd: Option<OwnedFd>,
}

impl Channel {
    /// Registers `fd` with the current event loop (non-blocking from now on).
    pub fn new(fd: OwnedFd) -> io::Result<Channel> {
        let flags = nix::fcntl::fcntl(fd.as_raw_fd(), nix::fcntl::FcntlArg::F_GETFL)?;
        let flags = nix::fcntl::OFlag::from_bits_truncate(flags) | nix::fcntl::OFlag::O_NONBLOCK;
        nix::fcntl::fcntl(fd.as_raw_fd(), nix::fcntl::FcntlArg::F_SETFL(flags))?;
        Ok(Channel { fd: crate::sys::register_owned(fd)? })
    }

    /// The next message; an empty text once the peer closed.
    pub async fn recv(&self) -> io::Result<Msg> {
        loop {
            let mut guard = self.fd.readable().await?;
            let mut buf = [0u8; 256];
            match guard.try_io(|fd| crate::sys::recv_with_fd(fd.get_ref().as_fd(), &mut buf)) {
                Ok(Ok((n, fd))) => return Ok(Msg { text: String::from_utf8_lossy(&buf[..n]).into_owned(), fd }),
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
    }

    /// Sends `text`, with `fd` attached if any. (The descriptor is registered for
    /// reads only; a full socket buffer, rare with these few small messages, is
    /// waited out by polling.)
    pub async fn send(&self, text: &str, fd: Option<BorrowedFd<'_>>) -> io::Result<()> {
        loop {
            match send_now(self.fd.get_ref().as_fd(), text, fd) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => return r,
            }
        }
    }

    /// The descriptor (to pass it on across an exec).
    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.get_ref().as_fd()
    }
}

pub(crate) fn send_now(sock: BorrowedFd<'_>, text: &str, fd: Option<BorrowedFd<'_>>) -> io::Result<()> {
    let iov = [io::IoSlice::new(text.as_bytes())];
    let raw = fd.map(|f| [f.as_raw_fd()]);
    let cmsgs: Vec<ControlMessage<'_>> = raw.as_ref().map(|r| ControlMessage::ScmRights(r)).into_iter().collect();
    socket::sendmsg::<()>(sock.as_raw_fd(), &iov, &cmsgs, MsgFlags::MSG_NOSIGNAL, None)?;
    Ok(())
}
