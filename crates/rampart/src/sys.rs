//! The only `unsafe` of the daemon: small wrappers over system calls that std and nix
//! do not offer safely. Each states why it is sound, from what this module checks or
//! owns itself: no caller has a contract to keep. Also the process-wide system calls
//! of the `global` section that nix offers safely (CPU binding, the dumpable flag), so
//! that they stay in one place.
#![allow(unsafe_code)]

use std::collections::BTreeSet;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixListener;

/// Takes ownership of an inherited file descriptor named on the command line or in the
/// configuration (`fd@N`), once per process: `check` first sees it borrowed and must
/// accept it (the listener registry checks it is a listening socket), so a number that
/// is not what it should be (`fd@1` on a terminal) is refused without being closed.
///
/// A number adopted before, by any caller, is refused with `EBUSY`: once adopted, the
/// descriptor belongs to the `OwnedFd` returned, which may have closed it since, and the
/// number may now name another file.
pub fn adopt_inherited_fd<T>(
    fd: RawFd,
    check: impl FnOnce(BorrowedFd<'_>) -> io::Result<T>,
) -> io::Result<(OwnedFd, T)> {
    if fd < 0 {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    // The set is only touched at startup, before any thread of the runtime exists.
    #[allow(clippy::disallowed_types)] // not on the request path
    static ADOPTED: std::sync::Mutex<BTreeSet<RawFd>> = std::sync::Mutex::new(BTreeSet::new());
    let mut adopted = ADOPTED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if adopted.contains(&fd) {
        return Err(io::Error::from_raw_os_error(libc::EBUSY));
    }
    // Is it open? F_GETFD fails with EBADF otherwise.
    nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_GETFD).map_err(io::Error::from)?;
    // SAFETY: the descriptor is open (checked above) and nothing in this process owns
    // it (numbers are adopted once, and the registry above remembers every one); the
    // borrow ends with `check`, while the lock above keeps any other adoption out.
    let value = check(unsafe { BorrowedFd::borrow_raw(fd) })?;
    adopted.insert(fd);
    // SAFETY: as above: open, inherited from the parent process, owned by nothing in
    // this process, and recorded so that it is never adopted again.
    Ok((unsafe { OwnedFd::from_raw_fd(fd) }, value))
}

/// Descriptor owners that may be registered with the event loop: each owns its
/// descriptor, keeps it open until dropped, and always returns the same number.
/// Sealed: only the types below.
pub trait OwnsFd: AsRawFd + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

impl sealed::Sealed for std::net::TcpListener {}
impl OwnsFd for std::net::TcpListener {}
impl sealed::Sealed for UnixListener {}
impl OwnsFd for UnixListener {}
impl sealed::Sealed for OwnedFd {}
impl OwnsFd for OwnedFd {}

/// Registers a descriptor owner with the current thread's event loop, for readable
/// events only: a listening socket, or an owned descriptor (a thread's park set
/// registers a `dup` of its epoll descriptor).
pub fn register_owned<T: OwnsFd>(owner: T) -> io::Result<tokio::io::unix::AsyncFd<T>> {
    // SAFETY: `T` owns its descriptor (`OwnsFd` is sealed to std's TcpListener,
    // UnixListener and OwnedFd): it stays open and names the same file description
    // until the owner is dropped, which the AsyncFd does when it is dropped or gives
    // the owner back (`into_inner`); none of these types can change its number.
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(owner, tokio::io::Interest::READABLE) }
        .map_err(io::Error::from)
}

/// TCP options of a listening socket that std, nix and socket2 do not set.
#[derive(Debug, Clone, Copy)]
pub enum ListenTcpOpt {
    /// TCP_DEFER_ACCEPT: seconds the kernel waits for the first data before `accept()`
    /// returns the connection.
    DeferAccept,
    /// TCP_FASTOPEN: how many fast-open requests may wait for `accept()`.
    FastOpen,
    /// TCP_FASTOPEN_CONNECT (a connecting socket): the first data written may ride in
    /// the SYN.
    FastOpenConnect,
}

/// Sets an integer TCP option of a listening socket.
pub fn set_listen_tcp_opt(fd: BorrowedFd<'_>, opt: ListenTcpOpt, value: libc::c_int) -> io::Result<()> {
    let name = match opt {
        ListenTcpOpt::DeferAccept => libc::TCP_DEFER_ACCEPT,
        ListenTcpOpt::FastOpen => libc::TCP_FASTOPEN,
        ListenTcpOpt::FastOpenConnect => libc::TCP_FASTOPEN_CONNECT,
    };
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `fd` is borrowed, so it stays open for the call; the option value is a
    // c_int on this stack frame passed with its exact size, and setsockopt() only reads
    // it during the call.
    let r =
        unsafe { libc::setsockopt(fd.as_raw_fd(), libc::IPPROTO_TCP, name, std::ptr::from_ref(&value).cast(), len) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// [`set_listen_tcp_opt`] on any socket.
pub fn set_tcp_opt(fd: &impl std::os::fd::AsFd, opt: ListenTcpOpt, value: libc::c_int) -> io::Result<()> {
    set_listen_tcp_opt(fd.as_fd(), opt, value)
}

/// IP_TRANSPARENT (IPV6_TRANSPARENT on an IPv6 socket) on, so that a listening socket
/// accepts connections to addresses that are not local (`bind ... transparent`, needs
/// CAP_NET_ADMIN), as HAProxy's `sock_inet{4,6}_make_foreign()`.
pub fn set_transparent(fd: &impl std::os::fd::AsFd, v6: bool) -> io::Result<()> {
    let (level, name) =
        if v6 { (libc::SOL_IPV6, libc::IPV6_TRANSPARENT) } else { (libc::SOL_IP, libc::IP_TRANSPARENT) };
    let one: libc::c_int = 1;
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `fd` is borrowed, so it stays open for the call; the option value is a
    // c_int on this stack frame passed with its exact size, and setsockopt() only reads
    // it during the call.
    let r = unsafe { libc::setsockopt(fd.as_fd().as_raw_fd(), level, name, std::ptr::from_ref(&one).cast(), len) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
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

/// Receives one message on a unix socket with at most one descriptor attached
/// (SCM_RIGHTS), close-on-exec: the master-worker channel. Returns the bytes read (0:
/// the peer closed) and the descriptor, owned.
pub fn recv_with_fd(sock: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<(usize, Option<OwnedFd>)> {
    let mut space = nix::cmsg_space!([RawFd; 1]);
    let (n, fds) = recv_with_fds(sock, buf, &mut space, nix::sys::socket::MsgFlags::empty())?;
    // only the first is kept; any other is closed here
    Ok((n, fds.into_iter().next()))
}

/// Receives one message on a unix socket with the descriptors attached to it
/// (SCM_RIGHTS, as many as `space` holds), close-on-exec. Returns the bytes read (0:
/// the peer closed) and the descriptors, owned. `flags`: more `recvmsg` flags.
pub fn recv_with_fds(
    sock: BorrowedFd<'_>,
    buf: &mut [u8],
    space: &mut Vec<u8>,
    flags: nix::sys::socket::MsgFlags,
) -> io::Result<(usize, Vec<OwnedFd>)> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    let mut iov = [io::IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(sock.as_raw_fd(), &mut iov, Some(space), flags | MsgFlags::MSG_CMSG_CLOEXEC)?;
    let mut received = Vec::new();
    for cmsg in msg.cmsgs()? {
        if let ControlMessageOwned::ScmRights(fds) = cmsg {
            for fd in fds {
                // SAFETY: the kernel just installed this descriptor in this process for
                // this message (SCM_RIGHTS): it is open and nothing else refers to it.
                received.push(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
    }
    Ok((msg.bytes, received))
}

/// Binds the calling thread to `cpus` (`sched_setaffinity` on thread id 0, which names
/// the caller): `cpu-map`. Threads it creates afterwards start with the same binding.
/// Fails with `EINVAL` when none of the CPUs is online and allowed to the process
/// (its cgroup's cpuset).
pub fn bind_current_thread(cpus: impl IntoIterator<Item = usize>) -> io::Result<()> {
    let mut set = nix::sched::CpuSet::new();
    for cpu in cpus {
        // past CPU_SETSIZE: the configuration refuses such numbers already
        set.set(cpu).map_err(io::Error::from)?;
    }
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).map_err(io::Error::from)
}

/// Marks the process dumpable again (`prctl(PR_SET_DUMPABLE, 1)`): the kernel clears the
/// flag when the process changes its user or group, which stops core dumps and makes
/// `/proc/<pid>` files owned by root (`set-dumpable`).
pub fn set_dumpable() -> io::Result<()> {
    nix::sys::prctl::set_dumpable(true).map_err(io::Error::from)
}

/// Zeroed atomic words in an anonymous mapping of their own (the counters' per-thread
/// words, `counters::Cells`): the kernel gives a page memory only when something first
/// writes to it, so words never written (the per-thread counters of a server no
/// request reached) hold no resident memory. Memory from the allocator would not
/// do: it clears memory it reuses by writing zeros to it.
pub struct ZeroedWords {
    ptr: std::ptr::NonNull<std::sync::atomic::AtomicU64>,
    len: usize,
}

// SAFETY: the mapping belongs to this value alone and is only reached through shared
// references to atomics (`Deref`), which any thread may hold.
unsafe impl Send for ZeroedWords {}
// SAFETY: as above: `&ZeroedWords` only gives `&[AtomicU64]`, which is `Sync`.
unsafe impl Sync for ZeroedWords {}

impl ZeroedWords {
    /// `len` words, all 0 (no mapping for 0). A refused mapping is an allocation
    /// failure (the process aborts, as when the allocator runs out).
    pub fn new(len: usize) -> ZeroedWords {
        let layout = std::alloc::Layout::array::<u64>(len).expect("counter words within the address space");
        if len == 0 {
            return ZeroedWords { ptr: std::ptr::NonNull::dangling(), len };
        }
        // SAFETY: a new private anonymous mapping (no address asked, no descriptor):
        // the kernel returns pages no other object uses, zeroed and page-aligned.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                layout.size(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            std::alloc::handle_alloc_error(layout);
        }
        ZeroedWords { ptr: std::ptr::NonNull::new(p.cast()).expect("mmap without MAP_FIXED is never at 0"), len }
    }
}

impl std::ops::Deref for ZeroedWords {
    type Target = [std::sync::atomic::AtomicU64];

    fn deref(&self) -> &[std::sync::atomic::AtomicU64] {
        // SAFETY: `ptr` starts `len` words this value mapped readable and writable (or
        // is dangling with `len` 0), aligned for `AtomicU64`, mapped until `drop`; an
        // all-zero word is a valid `AtomicU64`, and the words are only ever written
        // through these atomics.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for ZeroedWords {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: the mapping `new` made, with its size; no reference into it
            // outlives `self` (`Deref` borrows it).
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len * 8) };
        }
    }
}

impl std::fmt::Debug for ZeroedWords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ZeroedWords({})", self.len)
    }
}
