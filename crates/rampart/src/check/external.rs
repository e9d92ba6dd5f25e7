//! External checks (`option external-check`): what the command of a server's check
//! is run with, resolved from the configuration. The run itself (a child process
//! bounded in time and number) is `crate::health`'s.
//! HAProxy counterpart: `prepare_external_check()` (src/extcheck.c).

use std::ffi::OsString;

use rampart_cfg::model::{BindProto, ListenAddr, Mode, Proxy, Server};

/// The code of a command killed by a signal (HAProxy prints `code: -1`).
pub const NO_EXIT_STATUS: u16 = u16::MAX;

/// The command of one server's external check and what does not change between runs.
#[derive(Debug)]
pub struct ExternalCmd {
    /// `external-check command`.
    pub command: OsString,
    /// `<proxy_address> <proxy_port>`: the proxy's first inet or unix listener, else
    /// `NOT_USED`.
    pub proxy_addr: String,
    pub proxy_port: String,
    /// `HAPROXY_PROXY_ADDR` and `HAPROXY_PROXY_PORT`: the same, but empty without a
    /// listener (haproxy 2.6 leaves them so).
    pub proxy_env: (String, String),
    /// `PATH` (`external-check path`, else empty as HAProxy's default).
    pub path: String,
    /// `HAPROXY_SERVER_PROTO`: `tcp`, or the server's HTTP protocol (`h1` by default).
    pub server_proto: &'static str,
    /// `HAPROXY_SERVER_SSL`.
    pub ssl: bool,
    /// `global insecure-fork-wanted`: without it HAProxy's workers cannot fork.
    pub fork_allowed: bool,
}

impl ExternalCmd {
    /// The external check of server `srv` of `px`, `None` when the proxy runs another
    /// kind of check.
    pub fn build(px: &Proxy, srv: &Server, insecure_fork: bool) -> Option<ExternalCmd> {
        if !px.options.health.external {
            return None;
        }
        let command = px.options.external_check.command.clone()?;
        let first = px.binds.iter().flat_map(|b| &b.addrs).find(|a| !matches!(a, ListenAddr::Fd(_)));
        let (proxy_addr, proxy_port) = match first {
            Some(ListenAddr::Inet(a)) => (a.ip().to_string(), a.port().to_string()),
            Some(ListenAddr::Unix(p)) => (p.display().to_string(), "NOT_USED".to_owned()),
            _ => ("NOT_USED".to_owned(), "NOT_USED".to_owned()),
        };
        let proxy_env = if first.is_some() { (proxy_addr.clone(), proxy_port.clone()) } else { Default::default() };
        let server_proto = match (px.mode, srv.proto) {
            (Mode::Tcp, _) => "tcp",
            (Mode::Http, Some(BindProto::H2)) => "h2",
            (Mode::Http, Some(BindProto::Fcgi)) => "fcgi",
            (Mode::Http, Some(BindProto::None)) => "none",
            (Mode::Http, _) => "h1",
        };
        Some(ExternalCmd {
            command: command.into(),
            proxy_addr,
            proxy_port,
            proxy_env,
            path: px.options.external_check.path.clone().unwrap_or_default(),
            server_proto,
            ssl: srv.tls.ssl,
            fork_allowed: insecure_fork,
        })
    }
}
