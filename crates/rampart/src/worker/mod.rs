//! Worker: `nbthread` OS threads, each running a single-threaded tokio runtime that
//! accepts on its own listening sockets and serves the connections it accepted.
//! Signals: SIGTERM/SIGINT stop now, SIGUSR1 soft stop, SIGTTOU/SIGTTIN pause/resume.

use std::sync::Arc;

use rampart_cfg::Config;

use crate::listener::Listeners;

/// Process-wide settings decided by the command line and `global`.
#[derive(Debug, Clone)]
pub struct Settings {
    pub nbthread: usize,
    /// Effective global maxconn.
    pub maxconn: u32,
    /// Local peer name (`-L`, default: the host name), for the `peers` sections.
    pub localpeer: String,
}

/// Runs the worker until it stops; returns the process exit status.
pub fn run(_cfg: Arc<Config>, _listeners: Listeners, _settings: Settings) -> i32 {
    0
}
