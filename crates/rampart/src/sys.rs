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

/// Registers a descriptor with the current thread's event loop, for readable events
/// only: a listening socket, or a thread's park set (an epoll instance).
pub fn register_readable<T: std::os::fd::AsRawFd>(listener: T) -> io::Result<tokio::io::unix::AsyncFd<T>> {
    // SAFETY: `T` is std's TcpListener or UnixListener, which own their descriptor
    // (open and unchanged until dropped, and the AsyncFd owns them), or the epoll
    // descriptor of a park set, which lives in a thread-local for the whole life of the
    // thread, longer than this registration (owned by the same thread's task).
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(listener, tokio::io::Interest::READABLE) }
        .map_err(io::Error::from)
}

/// Returns freed heap memory to the system (glibc `malloc_trim`), as HAProxy does
/// after releasing many objects.
pub fn trim_heap() {
    // SAFETY: malloc_trim has no preconditions; it only walks glibc's own arenas
    // under their locks.
    unsafe {
        libc::malloc_trim(0);
    }
}
