//! One server of a backend at run time, from a `server` line at startup or from the
//! CLI's `add server` later (`dynamic_server`, handed to the CLI by `main` since the
//! CLI sits below this layer).
//! HAProxy counterpart: the server part of check_config_validity() (cfgparse.c) and
//! `cli_parse_add_server()` (server.c).

use std::net::SocketAddr;
use std::sync::atomic::AtomicU32;
use std::sync::Arc;

use rampart_cfg::model::{BindProto, Config, Server, ServerAddr, ServerWs};
use rampart_cfg::{Diag, Level};

use crate::check as health_check;
use crate::counters::CounterSlab;
use crate::proxy::{Runtime, ServerRt};

/// Where a server is built: its backend and what it shares with the others.
pub(super) struct At<'a> {
    pub cfg: &'a Config,
    /// The backend's index.
    pub idx: usize,
    /// HAProxy's numeric server id (`puid`).
    pub sid: u32,
    /// Its key in the idle connection pools (unique across backends).
    pub pool_key: usize,
    /// Whether latency histograms are kept.
    pub timed: bool,
    /// A server of the backend has `on-marked-up shutdown-backup-sessions`.
    pub backups_cut: bool,
    /// Where `ca-file`/`crl-file` names are looked up before the disk: nowhere at
    /// startup, the CA store for `add server`.
    pub files: crate::tls::bind::FileLookup<'a>,
}

/// The runtime server of `srv`, its counters from `slab`; `None` when something is
/// refused (`alerts` says what).
pub(super) fn server_rt(
    at: &At<'_>,
    slab: &mut CounterSlab,
    srv: &Server,
    backend_checks: &Arc<health_check::TcpChk>,
    alerts: &mut Vec<Diag>,
    tls_warnings: &mut Vec<Diag>,
) -> Option<ServerRt> {
    let (cfg, idx) = (at.cfg, at.idx);
    let px = &cfg.proxies[idx];
    let (addr, unix) = match &srv.addr {
        ServerAddr::Inet(a) => (*a, None),
        ServerAddr::Unix(path) => {
            if srv.check.enabled || srv.check.agent {
                alerts.push(super::not_supported(&srv.span, "health checks of unix socket servers"));
                return None;
            }
            (SocketAddr::from(([0, 0, 0, 0], 0)), Some(path.clone()))
        }
    };
    let check = health_check::build(cfg, px, srv, addr, backend_checks).unwrap_or_else(|d| {
        alerts.push(d);
        None
    });
    let agent = health_check::build_agent(px, srv, addr).unwrap_or_else(|d| {
        alerts.push(d);
        None
    });
    let rules_tls = check.as_ref().is_some_and(|c| c.rules.needs_tls());
    let tls = crate::tls::client::build_with(cfg, idx, srv, addr, rules_tls, at.files, alerts, tls_warnings);
    let check = check.map(|mut c| {
        health_check::attach_tls(&mut c, srv, tls.as_ref(), alerts);
        c
    });
    let ws_apart = ws_apart(srv.proto, srv.ws, tls.as_ref().and_then(|t| t.traffic_alpn()));
    Some(ServerRt {
        name: srv.name.clone(),
        addr: crate::server::AddrCell::new(addr),
        dns: super::dns::server_dns(cfg, srv),
        unix,
        // as in HAProxy, a `minconn` above `maxconn` (or alone) is the maxconn
        maxconn: AtomicU32::new(match srv.maxconn {
            Some(m) if m >= srv.minconn => m,
            _ if srv.minconn > 0 => srv.minconn,
            m => m.unwrap_or(0),
        }),
        minconn: srv.minconn,
        maxqueue: srv.maxqueue,
        queue: Default::default(),
        pool_max_conn: srv.pool_max_conn,
        pool_low_conn: srv.pool_low_conn,
        pool_purge_delay: srv.pool_purge_delay,
        max_reuse: srv.max_reuse,
        redir: srv.redir.as_deref().map(Box::from),
        pool_shared: cfg.global.idle_pool_shared,
        backup: srv.backup,
        non_stick: srv.non_stick,
        disabled: srv.disabled,
        cookie: srv.cookie.as_deref().map(|c| c.as_bytes().into()),
        cur_conns: AtomicU32::new(0),
        pool_key: at.pool_key,
        stats: crate::stats::ServerStats::new(slab, srv.weight, at.sid, at.timed),
        send_proxy: srv.proxy,
        source: srv.source.or(px.source),
        socks4: srv.socks4,
        tfo: srv.tfo,
        shutdown_on_down: srv.check.shutdown_on_down,
        shutdown_backups_on_up: srv.check.shutdown_backups_on_up,
        sessions: {
            let always = srv.check.shutdown_on_down || (srv.backup && at.backups_cut);
            (always || crate::lua::loaded()).then(|| Box::new(crate::server::Sessions::new(always)))
        },
        port_offset: srv.port_offset,
        transparent: px.implicit_server.is_some() && px.dispatch.is_none(),
        hidden: px.implicit_server.is_some(),
        state: super::dns::initial_state(srv),
        check: check.map(Box::new),
        agent: agent.map(Box::new),
        track: None,
        rise_fall: (srv.check.rise.unwrap_or(2).max(1), srv.check.fall.unwrap_or(3).max(1)),
        tls: tls.map(Box::new),
        proto: srv.proto,
        ws: srv.ws,
        ws_apart,
    })
}

/// Whether a WebSocket stream to a server with `proto`, `ws` and the `alpn` list of its
/// TLS traffic (`None`: no TLS or no list) needs a connection apart from the other
/// streams, spoken in the protocol `ws` names: HAProxy 2.6's `!srv_check_reuse_ws()`.
/// COMPAT: as in HAProxy 2.6, `ws auto` with an `alpn` list shares the connections of
/// other streams (a new connection offers `http/1.1` only, an HTTP/2 one in use takes
/// the stream as an extended CONNECT).
fn ws_apart(proto: Option<BindProto>, ws: ServerWs, alpn: Option<&[Vec<u8>]>) -> bool {
    let only = |list: &[Vec<u8>], p: &[u8]| list.len() == 1 && list[0] == p;
    match (proto, alpn) {
        (None, Some(list)) => match ws {
            ServerWs::Auto => false,
            ServerWs::H1 => !only(list, b"http/1.1"),
            ServerWs::H2 => !only(list, b"h2"),
        },
        _ => match ws {
            ServerWs::Auto => false,
            ServerWs::H1 => !matches!(proto, None | Some(BindProto::H1)),
            ServerWs::H2 => proto != Some(BindProto::H2),
        },
    }
}

/// A server `add server` asked for in backend `be`, with its id and pool key: built
/// as a configured one would be, but in forced maintenance with its checks disabled
/// (HAProxy starts a dynamic server so). `Err`: the messages, one per line.
pub fn dynamic_server(
    cfg: &Config,
    rt: &Runtime,
    be: usize,
    srv: &Server,
    sid: u32,
    pool_key: usize,
    files: crate::tls::bind::FileLookup<'_>,
) -> Result<ServerRt, Vec<String>> {
    let mut alerts = Vec::new();
    let mut shared = crate::action::compile::Shared {
        pats: Default::default(),
        userlists: Default::default(),
        proc_vars: Vec::new(),
        warnings: Vec::new(),
        files: Vec::new(),
        req_line: false,
        named_servers: Vec::new(),
        pat_acts: Vec::new(),
    };
    let checks = super::check_rules(cfg, be, &mut shared, &mut alerts);
    let at =
        At { cfg, idx: be, sid, pool_key, timed: crate::counters::histogram::wanted(cfg), backups_cut: false, files };
    let mut warnings = Vec::new();
    let mut slab = CounterSlab::apart(rt.stats.nbthread);
    let built = server_rt(&at, &mut slab, srv, &checks, &mut alerts, &mut warnings);
    let errors: Vec<String> = alerts.iter().filter(|d| d.level == Level::Alert).map(|d| d.message.clone()).collect();
    match built {
        Some(mut s) if errors.is_empty() => {
            // COMPAT: as HAProxy, the checks of a dynamic server speak PROXY and TLS
            // only when asked (`check-send-proxy`, `check-ssl`), not by inheritance
            if let Some(c) = s.check.as_mut() {
                if !srv.proxy.check {
                    c.proxy_header = None;
                }
                if !srv.tls.check_ssl {
                    c.tls.default = None;
                }
            }
            s.state.set_maint(true);
            s.state.set_check_enabled(false, false);
            s.state.set_check_enabled(true, false);
            Ok(s)
        }
        _ => Err(errors),
    }
}

#[cfg(test)]
mod ws_tests {
    use super::*;

    #[test]
    fn websocket_streams_apart_as_haproxy() {
        let (h1, h2) = (Some(BindProto::H1), Some(BindProto::H2));
        let both = [b"h2".to_vec(), b"http/1.1".to_vec()];
        let (h2_only, h1_only) = ([b"h2".to_vec()], [b"http/1.1".to_vec()]);
        assert!(!ws_apart(None, ServerWs::Auto, None));
        assert!(!ws_apart(h2, ServerWs::Auto, None));
        assert!(!ws_apart(None, ServerWs::Auto, Some(&both)));
        assert!(!ws_apart(None, ServerWs::H1, None));
        assert!(!ws_apart(h1, ServerWs::H1, None));
        assert!(ws_apart(h2, ServerWs::H1, None));
        assert!(ws_apart(None, ServerWs::H2, None));
        assert!(!ws_apart(h2, ServerWs::H2, None));
        assert!(ws_apart(None, ServerWs::H2, Some(&both)));
        assert!(!ws_apart(None, ServerWs::H2, Some(&h2_only)));
        assert!(ws_apart(None, ServerWs::H1, Some(&both)));
        assert!(!ws_apart(None, ServerWs::H1, Some(&h1_only)));
        // `proto` wins over the list
        assert!(!ws_apart(h2, ServerWs::H2, Some(&both)));
    }
}
