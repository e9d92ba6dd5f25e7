//! The processes of `program` sections: started by the master (never by a worker),
//! started anew on a reload unless `no option start-on-reload`, stopped with the
//! master. The master's listening sockets are not passed to them.
//! HAProxy counterpart: `mworker_ext_launch_all()` (src/mworker-prog.c).

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use rampart_cfg::model::Program;

use super::ipc;
use super::state::Prog;

/// Starts program `prog`; `held` are the master's sockets, kept from it. `Err` is
/// the alert.
pub fn spawn(prog: &Program, held: &[(String, OwnedFd)], reloads: u32, now: u64) -> Result<Prog, String> {
    let Some((exe, args)) = prog.command.split_first() else {
        return Err(format!("The program section '{}' lacks a command to launch.", prog.name));
    };
    let mut cmd = Command::new(exe);
    cmd.args(args).stdin(Stdio::null());
    if let Some(group) = &prog.group {
        let gid = nix::unistd::Group::from_name(group)
            .ok()
            .flatten()
            .ok_or_else(|| format!("[{exe}.main()] Cannot find group id for '{group}'."))?;
        cmd.gid(gid.gid.as_raw());
    }
    if let Some(user) = &prog.user {
        let uid = nix::unistd::User::from_name(user)
            .ok()
            .flatten()
            .ok_or_else(|| format!("[{exe}.main()] Cannot find user id for '{user}'."))?;
        cmd.uid(uid.uid.as_raw());
    }
    // the sockets the workers inherit stay in the master: close-on-exec for this spawn
    // only (the master spawns on one thread, one child at a time)
    for (_, fd) in held {
        let _ = ipc::set_cloexec(fd.as_fd(), true);
    }
    let child = cmd.spawn();
    for (_, fd) in held {
        let _ = ipc::set_cloexec(fd.as_fd(), false);
    }
    let child = child.map_err(|e| format!("Cannot execute {exe}: {e}"))?;
    Ok(Prog { pid: child.id() as i32, name: prog.name.clone(), reloads, started: now, leaving: false })
}
