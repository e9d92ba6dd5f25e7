//! The only `unsafe` of the daemon: small wrappers over system calls that std and nix
//! do not offer safely. Each states why it is sound.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// Takes ownership of an inherited file descriptor named on the command line or in the
/// configuration (`fd@N`), after checking that it is open.
///
/// The caller must adopt each number at most once (the listener registry enforces it).
pub fn adopt_inherited_fd(fd: RawFd) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    // Is it open? F_GETFD fails with EBADF otherwise.
    nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_GETFD).map_err(io::Error::from)?;
    // SAFETY: the descriptor is open (checked above), it was inherited from the parent
    // process and nothing in this process has taken ownership of it: the registry
    // adopts each number once, and no other code creates descriptors from numbers.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Registers a listening socket with the current thread's event loop, for readable
/// events only.
pub fn register_listener<T: std::os::fd::AsRawFd>(listener: T) -> io::Result<tokio::io::unix::AsyncFd<T>> {
    // SAFETY: `T` is std's TcpListener or UnixListener: it owns its descriptor, which
    // stays open, unchanged, until the listener is dropped, and the AsyncFd owns the
    // listener, so the descriptor outlives the registration.
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(listener, tokio::io::Interest::READABLE) }
        .map_err(io::Error::from)
}
