//! The worker's side of master-worker mode: what the master passed in the environment
//! (the channel, the listening sockets), the `READY` message once serving, the CLI
//! sessions the master routes to this worker (`@1 show info`), and leaving when the
//! master is gone. HAProxy counterpart: `mworker_accept_wrapper()` and the worker half
//! of src/mworker.c.

use std::os::fd::OwnedFd;
use std::sync::Arc;

use super::ipc::{self, Channel};
use super::state::{self, State};
use crate::stats::cmd::Level;

/// How this process was started, read (and removed) from the environment before any
/// thread exists, so that nothing it starts inherits it.
#[derive(Debug, Default)]
pub enum Role {
    /// Started by the user (or a daemon parent).
    #[default]
    Fresh,
    /// A worker: its channel to the master and the master's sockets (`(fd, key)`).
    Worker { ipc: OwnedFd, pool: Vec<(i32, String)> },
    /// A master re-executed for a reload: its records, its sockets, its program.
    Reexec { state: State, pool: Vec<(i32, String)>, exe: Option<String> },
}

impl Role {
    pub fn take_from_env() -> Role {
        let take = |name: &str| {
            let value = std::env::var(name).ok();
            std::env::remove_var(name);
            value
        };
        let (ipc, st, fds, exe) =
            (take(state::IPC_ENV), take(state::STATE_ENV), take(state::FDS_ENV), take(state::EXE_ENV));
        let pool = fds.as_deref().map(state::decode_fds).unwrap_or_default();
        if let Some(n) = ipc.and_then(|t| t.parse::<i32>().ok()) {
            if let Ok((ipc, ())) = crate::sys::adopt_inherited_fd(n, |_| Ok(())) {
                return Role::Worker { ipc, pool };
            }
        }
        match st.as_deref().and_then(State::decode) {
            Some(state) => Role::Reexec { state, pool, exe },
            None => Role::Fresh,
        }
    }

    /// The master's sockets this process inherited.
    pub fn pool(&self) -> &[(i32, String)] {
        match self {
            Role::Fresh => &[],
            Role::Worker { pool, .. } | Role::Reexec { pool, .. } => pool,
        }
    }

    pub fn is_worker(&self) -> bool {
        matches!(self, Role::Worker { .. })
    }
}

/// The worker's task on its main thread: tells the master it serves, then serves the
/// CLI sessions the master passes, and exits when the master is gone.
/// `early`: CLI sessions the master passed before (during the state takeover).
pub async fn serve_master(ipc: OwnedFd, cli: Arc<crate::stats::Cli>, early: Vec<OwnedFd>) {
    let Ok(ch) = Channel::new(ipc) else { return };
    let _ = ch.send(ipc::READY, None).await;
    for fd in early {
        serve_cli(fd, &cli);
    }
    loop {
        match ch.recv().await {
            Ok(msg) if msg.text == ipc::CLI => {
                let Some(fd) = msg.fd else { continue };
                serve_cli(fd, &cli);
            }
            Ok(msg) if !msg.text.is_empty() => {}
            // COMPAT: as HAProxy's workers, leave at once when the master is gone.
            _ => std::process::exit(0),
        }
    }
}

/// Serves one CLI session the master routed here.
fn serve_cli(fd: OwnedFd, cli: &Arc<crate::stats::Cli>) {
    let std = std::os::unix::net::UnixStream::from(fd);
    let _ = std.set_nonblocking(true);
    let Ok(conn) = tokio::net::UnixStream::from_std(std) else { return };
    let cli = cli.clone();
    tokio::spawn(async move { crate::stats::socket::session(conn, &cli, Level::Admin).await });
}
