//! The runtime API: `stats socket` listeners (unix and TCP), the CLI sessions on them
//! and the commands they run (`show info`, `show stat`, `show servers state` ...), with
//! HAProxy 2.6's output byte for byte where tools parse it. The sockets are served by
//! the worker's main thread (the one that handles signals), never by the threads that
//! carry traffic. HAProxy counterpart: cli.c, stats.c, server.c (`show servers state`).
//!
//! - `socket`: bind the `stats socket` lines (mode, user, group), accept, one CLI
//!   session per connection (one-shot and `prompt` modes, `stats timeout`, `stats maxconn`)
//! - `cmd`: the command table with each command's level, the help, the dispatcher
//! - `process_cmd`: the commands about the process and the session (levels, `set
//!   maxconn`, `set timeout cli`, `show env`, `show info`, `show events`, `show peers`)
//! - `info`, `stat`, `servers`: what `show info`, `show stat`, `show servers state` and
//!   `show backend` print
//! - `mapcmd`: the map and ACL commands (`show map`, `add acl`, `set map`, `commit map` ...)
//! - `srvadd`: `add server`, `del server` (servers changed at run time)
//! - `srvcmd`: the server commands (`disable server`, `set server`, `set weight` ...)
//! - `table_cmd`: `show table`, `clear table`, `set table` (stick tables)
//! - `fields`: HAProxy's field lists for `show stat` and `show info`
//! - `counters`: the counters only the stats read (responses by class, maxima)
//! - `errors`: the last refused request of each frontend (`show errors`)
//! - `histogram`: latency histograms per backend and server (a rampart extension)
//! - `page`: the HTML statistics page (`stats uri`) and its `;csv`/`;json` exports;
//!   `admin`: its admin form (`stats admin if <cond>`)
//! - `prometheus`: `http-request use-service prometheus-exporter`
//! - `types`: [`Facts`] and the page settings ([`page::Page`]), held by the runtime model

pub mod admin;
pub mod cmd;
pub mod counters;
pub mod errors;
mod fields;
pub mod handover;
pub use crate::counters::histogram;
mod info;
mod mapcmd;
pub mod page;
mod process_cmd;
pub mod prometheus;
pub mod rates;
mod resolvers;
mod servers;
pub mod socket;
mod srvadd;
mod srvcmd;
mod srvdns;
mod stat;
mod table_cmd;
pub mod types;
mod varcmd;

use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use rampart_cfg::model::Config;

use crate::proxy::Runtime;

pub use counters::{ProxyStats, ServerStats};
pub use srvadd::MakeServer;
pub use srvcmd::{apply_weight, set_maxconn};
pub use srvdns::set_addr;
pub use stat::{object_fields, Object};
pub use types::Facts;

/// HAProxy's default `stats timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// HAProxy's default `stats maxconn`.
pub const DEFAULT_MAXCONN: u32 = 10;

impl Facts {
    pub fn new(cfg: &Config, nbthread: usize) -> Facts {
        let ulimit_n = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).map_or(0, |l| l.0);
        let started_unix = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        Facts {
            started: Instant::now(),
            started_unix,
            iids: proxy_ids(cfg),
            algos: cfg.proxies.iter().map(|p| p.balance.name()).collect(),
            node: cfg.global.node.clone().unwrap_or_else(page::host_name),
            description: cfg.global.description.clone(),
            nbthread,
            ulimit_n,
            listeners: crate::process::limits::listener_count(cfg) as u32,
            error_events: Default::default(),
            histograms: histogram::wanted(cfg),
            conn_rate: Default::default(),
            sess_rate: Default::default(),
        }
    }
}

/// What the CLI reads besides the runtime: process settings fixed at startup, and the
/// CLI sessions.
#[derive(Debug)]
pub struct Cli {
    pub rt: Arc<Runtime>,
    /// `stats timeout`: how long a CLI session may stay idle.
    pub timeout: Duration,
    /// `stats maxconn`: CLI sessions served at once (per socket, as HAProxy).
    pub maxconn: u32,
    /// CLI sessions alive (all sockets).
    pub sessions: AtomicU32,
    /// CLI sessions accepted so far (HAProxy counts them in `CumConns`).
    pub cum_sessions: AtomicU64,
    /// The TLS binds' certificates and the pending `set ssl cert` transaction.
    pub certs: crate::tls::certs::Certs,
    /// The CA and CRL files and their pending `set ssl ca-file|crl-file` transactions.
    pub cafiles: crate::tls::castore::CaStore,
    /// The TLS binds' `tls-ticket-keys` files (`show tls-keys`, `set ssl tls-key`).
    pub ticket_keys: crate::tls::ticket_keys_cli::KeyFilesCli,
    /// The configuration, to compile what `set var` evaluates.
    pub cfg: Arc<Config>,
    /// Builds the servers of `add server` (set by `main`; without it the command is
    /// refused as not supported).
    pub make_server: Option<srvadd::MakeServer>,
    /// The listening sockets `_getsocks` hands out on a socket with `expose-fd
    /// listeners` (set by `main` after binding; emptied at soft stop).
    pub exported: crate::io::xfer::Exported,
}

/// Every TLS bind of `rt`, once each (the addresses of one `bind` line share one).
fn tls_binds(rt: &Runtime) -> Vec<Arc<crate::tls::bind::BindTls>> {
    let mut out: Vec<Arc<crate::tls::bind::BindTls>> = Vec::new();
    for px in &rt.proxies {
        for tls in px.fe.listeners.iter().filter_map(|l| l.tls.as_ref()) {
            if !out.iter().any(|o| Arc::ptr_eq(o, tls)) {
                out.push(tls.clone());
            }
        }
    }
    out
}

/// The chain verifiers of the servers of `rt` that verify certificates.
fn server_chains(rt: &Runtime) -> Vec<Arc<crate::tls::verifier::SwapChain>> {
    let servers = rt.proxies.iter().flat_map(|px| px.be.servers.iter());
    servers.filter_map(|s| s.tls.as_ref()?.chain.clone()).collect()
}

/// Every server's `crt` (`server ... crt`), once each.
fn server_crts(rt: &Runtime) -> Vec<Arc<crate::tls::server_crt::ServerCrt>> {
    let mut out: Vec<Arc<crate::tls::server_crt::ServerCrt>> = Vec::new();
    for px in &rt.proxies {
        for crt in px.be.servers.iter().filter_map(|s| s.tls.as_ref()?.crt.as_ref()) {
            if !out.iter().any(|o| Arc::ptr_eq(o, crt)) {
                out.push(crt.clone());
            }
        }
    }
    out
}

impl Cli {
    /// The CLI state for `rt`, built from its configuration.
    pub fn new(cfg: Arc<Config>, rt: Arc<Runtime>) -> Cli {
        Cli {
            timeout: cfg.global.stats_timeout.unwrap_or(DEFAULT_TIMEOUT),
            maxconn: cfg.global.stats_maxconn.unwrap_or(DEFAULT_MAXCONN),
            sessions: AtomicU32::new(0),
            cum_sessions: AtomicU64::new(0),
            certs: crate::tls::certs::Certs::new(tls_binds(&rt), server_crts(&rt)),
            cafiles: crate::tls::castore::CaStore::new(tls_binds(&rt), server_chains(&rt)),
            ticket_keys: crate::tls::ticket_keys_cli::KeyFilesCli::new(&tls_binds(&rt)),
            cfg,
            rt,
            make_server: None,
            exported: crate::io::xfer::Exported::default(),
        }
    }

    /// Seconds since the process started.
    pub fn uptime(&self) -> u64 {
        uptime(&self.rt)
    }

    /// HAProxy's id of proxy `idx`.
    pub fn iid(&self, idx: usize) -> u32 {
        iid(&self.rt, idx)
    }

    /// The proxy named `name`, or numbered so (`show stat <iid> ...`).
    pub fn find_proxy(&self, name: &str) -> Option<usize> {
        find_proxy(&self.rt, name)
    }
}

/// Seconds since the process started.
pub fn uptime(rt: &Runtime) -> u64 {
    rt.stats.started.elapsed().as_secs()
}

/// HAProxy's id of proxy `idx`.
pub fn iid(rt: &Runtime, idx: usize) -> u32 {
    rt.stats.iids[idx]
}

/// HAProxy's number of each proxy: the stats socket's `GLOBAL` proxy, when there is one,
/// takes the first place.
fn proxy_ids(cfg: &rampart_cfg::Config) -> Vec<u32> {
    let global = (!cfg.global.stats_sockets.is_empty()).then_some(None);
    let ids = rampart_cfg::model::haproxy_ids(global.into_iter().chain(cfg.proxies.iter().map(|p| p.id)));
    ids[ids.len() - cfg.proxies.len()..].to_vec()
}

/// The proxy named `name`, or numbered so (`show stat <iid> ...`).
pub fn find_proxy(rt: &Runtime, name: &str) -> Option<usize> {
    rt.proxies.iter().position(|p| p.name == name).or_else(|| {
        let iid: u32 = name.parse().ok()?;
        rt.stats.iids.iter().position(|&i| i == iid)
    })
}

/// One value of a stats field, typed as `show ... typed` prints it.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Str(String),
    Uint(u64),
    Sint(i64),
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Str(s) => f.write_str(s),
            Val::Uint(n) => write!(f, "{n}"),
            Val::Sint(n) => write!(f, "{n}"),
        }
    }
}

impl From<u64> for Val {
    fn from(n: u64) -> Val {
        Val::Uint(n)
    }
}

impl From<u32> for Val {
    fn from(n: u32) -> Val {
        Val::Uint(n.into())
    }
}

impl From<&str> for Val {
    fn from(s: &str) -> Val {
        Val::Str(s.to_owned())
    }
}

/// The JSON of a string value (HAProxy escapes quotes, backslashes and controls).
fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// HAProxy's JSON names of the tags letters (origin, nature, scope).
fn json_tags(tags: &str) -> [&'static str; 3] {
    let b = tags.as_bytes();
    let origin = match b.first() {
        Some(b'M') => "Metric",
        Some(b'S') => "Status",
        Some(b'K') => "Key",
        Some(b'C') => "Config",
        _ => "Product",
    };
    let nature = match b.get(1) {
        Some(b'A') => "Age",
        Some(b'a') => "Avg",
        Some(b'C') => "Counter",
        Some(b'D') => "Duration",
        Some(b'G') => "Gauge",
        Some(b'L') => "Limit",
        Some(b'M') => "Max",
        Some(b'N') => "Name",
        Some(b'R') => "Rate",
        Some(b'T') => "Time",
        _ => "Output",
    };
    let scope = match b.get(2) {
        Some(b'S') => "Service",
        Some(b's') => "System",
        Some(b'C') => "Cluster",
        _ => "Process",
    };
    [origin, nature, scope]
}

/// One field of a JSON dump: its position, name, tags and typed value.
fn json_field(out: &mut String, pos: usize, name: &str, desc: &str, val: &Val) {
    let (tags, ty) = desc.split_once(':').unwrap_or(("", "str"));
    let [origin, nature, scope] = json_tags(tags);
    out.push_str(&format!("\"field\":{{\"pos\":{pos},\"name\":"));
    json_str(out, name);
    out.push_str(&format!(
        "}},\"processNum\":1,\"tags\":{{\"origin\":\"{origin}\",\"nature\":\"{nature}\",\"scope\":\"{scope}\"}},\
         \"value\":{{\"type\":\"{ty}\",\"value\":"
    ));
    match val {
        Val::Str(s) => json_str(out, s),
        v => out.push_str(&v.to_string()),
    }
    out.push_str("}}");
}
