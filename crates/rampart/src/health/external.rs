//! Running an external check: the backend's `external-check command` with HAProxy's
//! arguments (`<proxy_address> <proxy_port> <server_address> <server_port>`) and
//! environment (`HAPROXY_*`, `PATH`, nothing else), given the check's time and then
//! terminated (SIGTERM; the child is reaped whatever happens). At most
//! [`MAX_CHILDREN`] commands run at once in the process; a check that cannot get a
//! slot in its time times out. Exit status 0 is `PROCOK`, anything else `PROCERR`
//! (its status as the code), a command still running at the end `PROCTOUT`.
//! HAProxy counterpart: `connect_proc_chk()`, `process_chk_proc()` (src/extcheck.c).

use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::process::Command;
use tokio::sync::Semaphore;

use crate::check::external::{ExternalCmd, NO_EXIT_STATUS};
use crate::check::{CheckStatus, Outcome};
use crate::proxy::{ProxyRt, ServerRt};

/// External check commands that may run at once in the process.
pub const MAX_CHILDREN: usize = 64;

/// How long a command told to stop (SIGTERM) has before it is killed.
const TERM_GRACE: Duration = Duration::from_secs(1);

fn slots() -> &'static Semaphore {
    static SLOTS: OnceLock<Semaphore> = OnceLock::new();
    SLOTS.get_or_init(|| Semaphore::new(MAX_CHILDREN))
}

/// What a run needs to know of the proxy and the server.
pub(super) struct Target<'a> {
    pub px: &'a ProxyRt,
    pub server: &'a ServerRt,
    /// HAProxy's ids of the proxy and the server.
    pub proxy_id: u32,
    pub server_id: u32,
}

/// Runs `cmd` for `t` within `limit`.
pub(super) async fn probe(cmd: &ExternalCmd, t: &Target<'_>, limit: Duration) -> Outcome {
    if !fork_allowed(cmd) {
        return refused_fork();
    }
    let deadline = tokio::time::Instant::now() + limit;
    let Ok(Ok(_slot)) = tokio::time::timeout_at(deadline, slots().acquire()).await.map_err(drop) else {
        return Outcome::new(CheckStatus::ProcTout, "");
    };
    let mut child = match command(cmd, t).spawn() {
        Ok(c) => c,
        Err(e) => {
            warn(&format!("Failed to exec process for external health check: {e}. Aborting."));
            return Outcome { status: CheckStatus::ProcErr, code: 255, desc: String::new() };
        }
    };
    match tokio::time::timeout_at(deadline, child.wait()).await {
        Ok(Ok(status)) => exited(status),
        Ok(Err(e)) => Outcome::new(CheckStatus::SockErr, e.to_string()),
        Err(_) => {
            if let Some(pid) = child.id() {
                warn(&format!("kill {pid}"));
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::SIGTERM);
            }
            // reaped in the background: SIGKILL if it ignores SIGTERM
            tokio::spawn(async move {
                if tokio::time::timeout(TERM_GRACE, child.wait()).await.is_err() {
                    let _ = child.kill().await;
                }
            });
            Outcome::new(CheckStatus::ProcTout, "")
        }
    }
}

/// The outcome of a command that exited.
fn exited(status: std::process::ExitStatus) -> Outcome {
    match status.code() {
        Some(0) => Outcome { status: CheckStatus::ProcOk, code: 0, desc: String::new() },
        Some(c) => Outcome { status: CheckStatus::ProcErr, code: c as u16, desc: String::new() },
        None => Outcome { status: CheckStatus::ProcErr, code: NO_EXIT_STATUS, desc: String::new() },
    }
}

/// COMPAT: without `insecure-fork-wanted`, HAProxy's workers set RLIMIT_NPROC to 0,
/// which stops fork() for every user but root (the kernel lets root past the limit).
/// rampart refuses the same runs instead of changing its own limits.
fn fork_allowed(cmd: &ExternalCmd) -> bool {
    cmd.fork_allowed || nix::unistd::geteuid().is_root()
}

fn refused_fork() -> Outcome {
    let err = nix::errno::Errno::EAGAIN.desc();
    warn(&format!(
        "Failed to fork process for external health check (likely caused by missing 'insecure-fork-wanted'): {err}. Aborting."
    ));
    Outcome::new(CheckStatus::SockErr, err)
}

/// The command with its arguments and environment.
fn command(cmd: &ExternalCmd, t: &Target<'_>) -> Command {
    let addr = t.server.addr.get();
    let (srv_addr, srv_port) = (addr.ip().to_string(), addr.port().to_string());
    let mut c = Command::new(&cmd.command);
    c.args([&cmd.proxy_addr, &cmd.proxy_port, &srv_addr, &srv_port])
        .env_clear()
        .env("PATH", &cmd.path)
        .env("HAPROXY_PROXY_NAME", &t.px.name)
        .env("HAPROXY_PROXY_ID", t.proxy_id.to_string())
        .env("HAPROXY_PROXY_ADDR", &cmd.proxy_env.0)
        .env("HAPROXY_PROXY_PORT", &cmd.proxy_env.1)
        .env("HAPROXY_SERVER_NAME", &t.server.name)
        .env("HAPROXY_SERVER_ID", t.server_id.to_string())
        .env("HAPROXY_SERVER_ADDR", &srv_addr)
        .env("HAPROXY_SERVER_PORT", &srv_port)
        .env("HAPROXY_SERVER_MAXCONN", t.server.maxconn.load(Ordering::Relaxed).to_string())
        .env("HAPROXY_SERVER_CURCONN", t.server.cur_conns.load(Ordering::Relaxed).to_string())
        .env("HAPROXY_SERVER_SSL", if cmd.ssl { "1" } else { "0" })
        .env("HAPROXY_SERVER_PROTO", cmd.server_proto)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    c
}

fn warn(msg: &str) {
    let line = format!("{}({}) : {msg}\n", rampart_cfg::Level::Warning.tag(), std::process::id());
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}
