//! Starting a child that inherits chosen listening sockets (VTest's `fd@${name}`), and
//! the scratch directory each run writes its configuration into.
//!
//! Rust opens every socket with `FD_CLOEXEC`, so by default a child inherits none. To pass
//! a pre-bound listener we clear the flag right before spawning and set it again right
//! after, without `unsafe` (no `pre_exec` hook): the child keeps the fd under the same
//! number, which the configuration names as `bind fd@N`.
//!
//! While the flag is clear, *any* process spawned by *any* thread of the test binary would
//! inherit the socket too. Test harnesses run tests as threads of one process, so another
//! test's proxy would then hold our listener open (it never closes when we drop it) or even
//! accept from it. Every testkit spawn therefore happens under [`SPAWN_LOCK`]: a spawn that
//! clears flags cannot overlap with another testkit spawn. Tests that start other programs
//! should use [`spawn_guarded`] for the same reason.

use std::io;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use nix::fcntl::{fcntl, FcntlArg, FdFlag};

use crate::sync::lock;

/// Serializes spawns that may clear `FD_CLOEXEC` (the testkit's only global state).
static SPAWN_LOCK: Mutex<()> = Mutex::new(());

/// Spawns `cmd` under the testkit's spawn lock, so it cannot inherit a listener that a
/// concurrent proxy start is passing to its own child. Use it for any helper process
/// (curl, openssl ...) started by a test that also uses [`Proxy`](crate::Proxy).
pub fn spawn_guarded(cmd: &mut Command) -> io::Result<Child> {
    spawn_inheriting(cmd, &[])
}

/// Spawns `cmd` so that it inherits `fds` (same numbers), under the spawn lock.
pub(crate) fn spawn_inheriting(cmd: &mut Command, fds: &[RawFd]) -> io::Result<Child> {
    let _guard = lock(&SPAWN_LOCK);
    let mut cleared = Vec::with_capacity(fds.len());
    let mut result = Ok(());
    for &fd in fds {
        result = set_cloexec(fd, false);
        if result.is_err() {
            break;
        }
        cleared.push(fd);
    }
    let child = result.and_then(|()| cmd.spawn());
    for fd in cleared {
        // Restoring can only fail for an fd we no longer own; nothing to undo then.
        let _ = set_cloexec(fd, true);
    }
    child
}

fn set_cloexec(fd: RawFd, on: bool) -> io::Result<()> {
    let mut flags = FdFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFD)?);
    flags.set(FdFlag::FD_CLOEXEC, on);
    fcntl(fd, FcntlArg::F_SETFD(flags))?;
    Ok(())
}

/// A scratch directory, removed on drop.
#[derive(Debug)]
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    /// Creates a fresh directory under the system temp dir. The name mixes the pid, the
    /// time and an attempt number; `create_dir` failing on an existing name makes it
    /// unique without any shared counter.
    pub fn new() -> io::Result<TempDir> {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
        let base = std::env::temp_dir();
        for attempt in 0..1000u32 {
            let path = base.join(format!("rampart-test-{}-{nanos:x}-{attempt}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir(path)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary directory name"))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
