//! The process around the worker: startup messages, sizing and limits, daemon mode and
//! pidfile, chroot and privileges, and telling old processes to leave on a reload.
//! HAProxy counterpart: the parts of src/haproxy.c around `init()` and `main()` that are
//! not about the configuration or the event loop. The order they run in is in
//! `main.rs`; the worker (event loop, signals) is in `worker/`.
//!
//! - `msg`: `[ALERT]`/`[WARNING]`/`[NOTICE]` lines, quiet mode, per-file error summary
//! - `limits`: nbthread, global maxconn, RLIMIT_NOFILE and `-m`
//! - `identity`: `user`/`group` resolution, chroot, setgid/setuid, `set-dumpable`
//! - `daemon`: `-D` by re-execution, readiness pipe, stdio to /dev/null, pidfile
//! - `startup_log`: the messages `show startup-logs` shows

pub mod daemon;
pub mod identity;
pub mod limits;
pub mod msg;
pub mod startup_log;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use rampart_cfg::Config;

use crate::cli::OldPidsSignal;

/// The signal `-sf` (finish) or `-st` (terminate) sends.
pub fn oldpids_signal(which: OldPidsSignal) -> Signal {
    match which {
        OldPidsSignal::Finish => Signal::SIGUSR1,
        OldPidsSignal::Terminate => Signal::SIGTERM,
    }
}

/// Sends `sig` to every pid; returns how many received it (HAProxy's `tell_old_pids()`).
pub fn tell_old_pids(pids: &[i32], sig: Signal) -> usize {
    pids.iter().filter(|&&pid| kill(Pid::from_raw(pid), sig).is_ok()).count()
}

/// Gives the memory the startup freed (the lexed lines, the copies of `defaults`, the
/// parser's scratch) back to the system: the allocator keeps it otherwise, counted in
/// the resident memory for the life of the process (a hundred megabytes at 20 000
/// backends). HAProxy trims its heap after startup as well.
pub fn trim_startup_heap() {
    crate::sys::trim_heap();
}

/// `-N`: frontends that set no `maxconn` (neither themselves nor through `defaults`)
/// get this one instead of the global maxconn.
pub fn apply_default_maxpconn(cfg: &mut Config, maxpconn: u32) {
    for proxy in cfg.proxies.iter_mut().filter(|p| p.cap.frontend && p.maxconn.is_none()) {
        proxy.maxconn = Some(maxpconn);
    }
}

/// The C library's text for an errno (`No such file or directory`), without the
/// ` (os error N)` Rust appends, as HAProxy prints it.
pub fn strerror(err: &std::io::Error) -> String {
    match err.raw_os_error() {
        Some(code) => nix::errno::Errno::from_raw(code).desc().to_owned(),
        None => err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_of_sf_and_st() {
        assert_eq!(oldpids_signal(OldPidsSignal::Finish), Signal::SIGUSR1);
        assert_eq!(oldpids_signal(OldPidsSignal::Terminate), Signal::SIGTERM);
    }

    #[test]
    fn old_pids_that_do_not_exist_are_not_counted() {
        // SIGCONT is harmless to this process; pid 2^22+1 is above Linux's pid_max.
        let me = std::process::id() as i32;
        assert_eq!(tell_old_pids(&[4_194_305], Signal::SIGCONT), 0);
        assert_eq!(tell_old_pids(&[me, 4_194_305], Signal::SIGCONT), 1);
    }

    #[test]
    fn strerror_has_no_rust_suffix() {
        let err = std::io::Error::from_raw_os_error(2);
        assert_eq!(strerror(&err), "No such file or directory");
    }
}
