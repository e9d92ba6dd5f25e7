//! Starting a worker and re-executing the master. rampart never forks a process that
//! has threads: a worker is this program started anew (std's spawn), told by its
//! environment that it is a worker; a reload replaces the master's program in place
//! (execv), keeping its pid (systemd's MAINPID, the pidfile) and its children.

use std::ffi::{CString, OsString};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use super::ipc;
use super::notify::NOTIFY_SOCKET;
use super::state::{self, encode_fds};

/// Starts a worker; returns its pid and the master's end of its channel. The held
/// sockets are not close-on-exec, so the worker inherits them; their numbers and keys
/// go in its environment.
pub fn worker(exe: &Path, argv: &[OsString], held: &[(String, OwnedFd)]) -> std::io::Result<(i32, OwnedFd)> {
    let (ours, theirs) = ipc::pair()?;
    // inherited by this child only: the master runs one spawn at a time, on one thread
    ipc::set_cloexec(theirs.as_fd(), false)?;
    let fds: Vec<(i32, String)> = held.iter().map(|(k, fd)| (fd.as_raw_fd(), k.clone())).collect();
    let mut cmd = Command::new(exe);
    if let Some(arg0) = argv.first() {
        cmd.arg0(arg0);
    }
    cmd.args(argv.iter().skip(1))
        .env(state::IPC_ENV, theirs.as_raw_fd().to_string())
        .env(state::FDS_ENV, encode_fds(&fds))
        .env_remove(NOTIFY_SOCKET)
        .stdin(Stdio::null());
    let child = cmd.spawn();
    drop(theirs);
    let child = child?;
    Ok((child.id() as i32, ours))
}

/// Replaces this program with a new master (same arguments), its records in the
/// environment. Signals are blocked across the exec (the new master unblocks them
/// once its handlers are in place): a reload signal meanwhile must not kill it.
/// Returns only on failure.
pub fn reexec(exe: &Path, argv: &[OsString], state_text: &str, fds: &str) -> String {
    std::env::set_var(state::STATE_ENV, state_text);
    std::env::set_var(state::FDS_ENV, fds);
    std::env::set_var(state::EXE_ENV, exe.as_os_str());
    let path = CString::new(exe.as_os_str().as_bytes());
    let args: Result<Vec<CString>, _> = argv.iter().map(|a| CString::new(a.as_bytes())).collect();
    let (Ok(path), Ok(args)) = (path, args) else {
        return "a NUL byte in the arguments".to_owned();
    };
    super::block_signals();
    let err = nix::unistd::execv(&path, &args).err();
    super::unblock_signals();
    for name in [state::STATE_ENV, state::FDS_ENV, state::EXE_ENV] {
        std::env::remove_var(name);
    }
    err.map_or_else(String::new, |e| e.desc().to_owned())
}
