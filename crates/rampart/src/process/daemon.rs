//! Daemon mode (`-D`, `daemon`), quiet detaching and the pidfile. HAProxy counterpart:
//! the `MODE_DAEMON` part of `main()` and `stdio_quiet()` in src/haproxy.c.
//!
//! HAProxy forks after binding. rampart does not fork (forking is `unsafe` in Rust and
//! only sound before any thread exists); it re-executes itself instead: the process
//! started by the user spawns the same program with the same arguments plus a marker
//! in the environment, and waits. The child loads the configuration, binds, writes the
//! pidfile, drops privileges, then detaches (new session, stdio on /dev/null) and says
//! "ready" on a pipe that is its stdin. The parent then exits 0, or, if the child died
//! first, exits with the child's status, so `rampart -D` still fails visibly on a bind
//! error. Until it is ready the child writes its alerts to the parent's stderr.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use nix::fcntl::OFlag;

/// Environment variable marking the re-executed daemon child.
pub const CHILD_ENV: &str = "RAMPART_DAEMON_CHILD";

/// The byte the child writes on its stdin pipe once it serves.
const READY: u8 = b'R';

/// In the child: whether this process is the daemon child. Removes the marker so that
/// nothing this process starts inherits it. Call before any thread is started.
pub fn take_child_marker() -> bool {
    let is_child = std::env::var_os(CHILD_ENV).is_some();
    if is_child {
        std::env::remove_var(CHILD_ENV);
    }
    is_child
}

/// In the parent: starts the daemon child (this program, same `argv`, started from
/// `cwd`) and waits until it is ready or gone. Returns the parent's exit status.
pub fn spawn_and_wait(argv: &[OsString], cwd: Option<&Path>) -> Result<i32, String> {
    let exe = std::env::current_exe().map_err(|e| format!("Cannot find the executable to start the daemon: {e}"))?;
    // Close-on-exec, so that only the copy that becomes the child's stdin survives in the child.
    let (ready_rx, ready_tx) =
        nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|e| format!("Cannot create a pipe: {}", e.desc()))?;
    let mut child = {
        // The command owns the write end; dropping it when this block ends leaves the
        // child as the only writer, so that the read below ends when the child does.
        let mut cmd = Command::new(&exe);
        if let Some(arg0) = argv.first() {
            cmd.arg0(arg0);
        }
        cmd.args(argv.iter().skip(1)).env(CHILD_ENV, "1").stdin(Stdio::from(ready_tx));
        if let Some(cwd) = cwd {
            cmd.current_dir(cwd);
        }
        cmd.spawn().map_err(|e| format!("Cannot start the daemon ({}): {e}", exe.display()))?
    };
    let mut byte = [0u8; 1];
    let mut rx = File::from(ready_rx);
    loop {
        match rx.read(&mut byte) {
            Ok(1) if byte[0] == READY => return Ok(0),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            _ => break,
        }
    }
    let status = child.wait().map_err(|e| format!("Cannot wait for the daemon: {e}"))?;
    Ok(status.code().unwrap_or(1))
}

/// In the daemon child, once it serves: leaves the parent's session, puts stdio on
/// `null` (opened with [`open_dev_null`] before any chroot) and tells the parent it may
/// exit.
pub fn detach_and_notify(null: &File) -> Result<(), String> {
    // Fails only if already a session leader, which is fine.
    let _ = nix::unistd::setsid();
    redirect(null, &[1, 2])?;
    // The parent may be gone (killed while waiting): nothing to tell then.
    let _ = nix::unistd::write(io::stdin().as_fd(), &[READY]);
    redirect(null, &[0])
}

/// Puts stdin, stdout and stderr on /dev/null (quiet mode once bound, as HAProxy does).
pub fn redirect_stdio_to_null() -> Result<(), String> {
    let null = open_dev_null()?;
    redirect(&null, &[0, 1, 2])
}

/// Opens /dev/null for the daemon's stdio; do it before a chroot hides it.
pub fn open_dev_null() -> Result<File, String> {
    OpenOptions::new().read(true).write(true).open("/dev/null").map_err(|_| "Cannot open /dev/null".to_owned())
}

fn redirect(target: &File, fds: &[i32]) -> Result<(), String> {
    for &fd in fds {
        nix::unistd::dup2(target.as_raw_fd(), fd).map_err(|e| format!("Cannot redirect fd {fd}: {}", e.desc()))?;
    }
    Ok(())
}

/// Creates `path` (mode 0644), replacing any old file. Created before the chroot and
/// filled once the process is ready ([`write_pid`]), so a failed start leaves it empty
/// rather than naming a process that is gone, as with HAProxy.
pub fn create_pidfile(path: &Path) -> io::Result<File> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    OpenOptions::new().write(true).create(true).truncate(true).mode(0o644).open(path)
}

/// Writes `pid` and a newline to a pidfile made by [`create_pidfile`], and closes it.
pub fn write_pid(mut file: File, pid: u32) -> io::Result<()> {
    file.write_all(format!("{pid}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pidfile_replaces_old_content() {
        let dir = std::env::temp_dir().join(format!("rampart-pidfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.pid");
        std::fs::write(&path, "999999 and some old garbage\n").unwrap();
        let file = create_pidfile(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "", "empty until written");
        write_pid(file, 1234).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "1234\n");
        assert!(create_pidfile(&dir.join("missing/r.pid")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
