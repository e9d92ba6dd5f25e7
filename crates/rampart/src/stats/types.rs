//! What the runtime model keeps for the stats outputs: the process facts they report
//! ([`Facts`]) and a proxy's statistics page settings ([`Page`]). Records only; the
//! outputs that read them are the rest of `crate::stats`.

use std::time::Instant;

/// Facts about the process the stats outputs report, fixed when the runtime is built.
#[derive(Debug)]
pub struct Facts {
    pub started: Instant,
    /// Start time in seconds since the epoch (`Start_time_sec`).
    pub started_unix: u64,
    /// HAProxy's number of each proxy (`iid`): its `id`, else from 1, after a `GLOBAL`
    /// proxy when a stats socket exists.
    pub iids: Vec<u32>,
    /// `balance` of each proxy, as `show stat` names it (`algo`).
    pub algos: Vec<&'static str>,
    /// Global `node`, else the host name (`node`).
    pub node: String,
    /// Global `description` (`show info`'s `description`, shown only when set).
    pub description: Option<String>,
    /// Worker threads (`Nbthread`).
    pub nbthread: usize,
    /// The descriptor limit once the process was sized (`Ulimit-n`).
    pub ulimit_n: u64,
    /// Listening sockets of the configuration, stats sockets included (`Listeners`).
    pub listeners: u32,
    /// Refused messages captured so far (`show errors`).
    pub error_events: crate::counters::capture::Events,
    /// The latency histograms are recorded (a Prometheus exporter reads them).
    pub histograms: bool,
    /// Connections and sessions per second, all frontends (`ConnRate`, `SessRate`).
    pub conn_rate: crate::counters::rate::RateCell,
    pub sess_rate: crate::counters::rate::RateCell,
}

/// A proxy's statistics page, ready to answer.
#[derive(Debug)]
pub struct Page {
    pub(super) uri: Box<[u8]>,
    /// The `WWW-Authenticate` value; `None` when no account is configured (open page).
    pub(super) challenge: Option<Box<[u8]>>,
    /// `user:password` of each `stats auth` account.
    pub(super) accounts: Vec<Box<[u8]>>,
    pub(super) refresh: Option<u64>,
    pub(super) hide_version: bool,
    pub(super) show_legends: bool,
    /// `stats show-modules`.
    pub(super) show_modules: bool,
    /// `stats show-node`: the name to show (the host name when it was given none).
    pub(super) show_node: Option<String>,
    pub(super) show_desc: Option<String>,
    pub(super) scope: Vec<String>,
}
