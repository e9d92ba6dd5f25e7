//! `show servers state [<backend>]` (the format `server-state-file` reads back,
//! version 1) and `show backend`. HAProxy counterpart: the servers-state and
//! show-backend handlers of proxy.c.

use std::fmt::Write as _;

use super::Cli;
use crate::proxy::ServerRt;
use crate::server::OperState;

/// The header of `show servers state`, version 1.
const STATE_HEADER: &str = "1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight \
srv_iweight srv_time_since_last_change srv_check_status srv_check_result srv_check_health srv_check_state \
srv_agent_state bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port \
srv_check_addr srv_agent_addr srv_agent_port\n";

/// `show servers state [<backend>]`; `Err` is HAProxy's message.
pub fn state(cli: &Cli, backend: Option<&str>) -> Result<String, String> {
    let only = match backend {
        Some(name) => {
            let idx = cli.find_proxy(name).filter(|&i| cli.rt.proxies[i].cap.backend);
            Some(idx.ok_or_else(|| "Can't find backend.\n".to_owned())?)
        }
        None => None,
    };
    let mut out = String::from(STATE_HEADER);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    for (idx, px) in cli.rt.proxies.iter().enumerate() {
        if !px.cap.backend || only.is_some_and(|o| o != idx) {
            continue;
        }
        for (i, srv) in px.be.servers.iter().enumerate().filter(|(_, s)| s.is_shown()) {
            let addr = srv.addr.get();
            let dns = srv.dns.as_deref();
            let fqdn = dns.and_then(|d| d.hostname()).map_or_else(|| "-".to_owned(), |h| h.to_string());
            let record = dns.filter(|d| d.is_srv()).map_or("-", |d| d.conf_name.as_str());
            // HAProxy's dump_server_addr(): "-" for a server without address
            let ip = if dns.is_some() && addr.ip().is_unspecified() { "-".to_owned() } else { addr.ip().to_string() };
            let _ = writeln!(
                out,
                "{} {} {} {} {ip} {} {fqdn} {} {record} {} {}",
                cli.iid(idx),
                px.name,
                srv.stats.sid,
                srv.name,
                state_columns(srv, now),
                addr.port(),
                use_ssl(cli, idx, i, srv),
                check_columns(srv),
            );
        }
    }
    Ok(out)
}

/// From `srv_op_state` to `srv_f_forced_id`: HAProxy's `next_state`, `next_admin`
/// flags (FMAINT 0x1, IMAINT 0x2, CMAINT 0x4, FDRAIN 0x8, RMAINT 0x20), user and initial weights, the seconds
/// since the last change, the check's status, result and health numbers, and the
/// check and agent `state` flags (CONFIGURED 0x2, ENABLED 0x4, PAUSED 0x8, AGENT 0x10).
fn state_columns(srv: &ServerRt, now: u64) -> String {
    let st = &srv.state;
    let maint = st.is_maint();
    let op = match st.oper() {
        _ if maint => 0,
        OperState::Stopped => 0,
        OperState::Running => 2,
        OperState::Stopping => 3,
    };
    let admin = u8::from(st.is_forced_maint())
        | if st.is_inherited_maint() { 2 } else { 0 }
        | if srv.disabled { 4 } else { 0 }
        | if st.is_drain() { 8 } else { 0 }
        | if st.is_resolution_maint() { 0x20 } else { 0 }
        | if srv.dns.as_deref().is_some_and(|d| d.fqdn_set_at_run_time()) { 0x40 } else { 0 };
    let since = now.saturating_sub(st.last_change());
    let (status, result, health, chk_state) = match &srv.check {
        Some(c) => {
            let last = st.last_check();
            let status = last.as_ref().map_or(1, |r| r.status.id());
            let result = last.as_ref().map_or(0, |r| r.status.result().id());
            let flags = if st.check_enabled(false) { 6 } else { 2 } | if maint { 8 } else { 0 };
            (status, result, if maint { 0 } else { st.health_or(c.rise) }, flags)
        }
        // without a check, only `disabled` pauses it (for good) and zeroes the health
        None if srv.disabled => (1, 0, st.health_or(0), 8),
        // HAProxy 2.6 zeroes the health of a server waiting for its address (RMAINT)
        None if st.is_resolution_maint() => (1, 0, 0, 0),
        None => (1, 0, st.health_or(srv.rise_fall.0), 0),
    };
    let agent_state = match &srv.agent {
        Some(_) if st.check_enabled(true) => 0x16,
        Some(_) => 0x12,
        None => 0,
    };
    format!(
        "{op} {admin} {} {} {since} {status} {result} {health} {chk_state} {agent_state} 0 0",
        st.eweight(),
        st.uweight()
    )
}

/// `srv_use_ssl`: HAProxy's `use_ssl`, 1 for TLS traffic, -1 after `no-ssl`, else 0.
fn use_ssl(cli: &Cli, px: usize, i: usize, srv: &ServerRt) -> i8 {
    match srv.tls.as_deref() {
        Some(t) => t.use_ssl(),
        None => {
            let conf = cli.cfg.proxies.get(px).and_then(|p| p.servers.get(i));
            if conf.is_some_and(|s| s.tls.no_ssl) {
                -1
            } else {
                0
            }
        }
    }
}

/// `srv_check_port srv_check_addr srv_agent_addr srv_agent_port`: as configured.
fn check_columns(srv: &ServerRt) -> String {
    let dash = |ip: Option<std::net::IpAddr>| ip.map_or_else(|| "-".to_owned(), |ip| ip.to_string());
    let (port, addr) = srv.check.as_deref().map_or((0, None), |c| (c.conf_port, c.conf_addr));
    let (agent_addr, agent_port) = srv.agent.as_deref().map_or((None, 0), |a| (a.conf_addr, a.addr.port()));
    format!("{port} {} {} {agent_port}", dash(addr), dash(agent_addr))
}

/// `show backend`: the backends' names.
pub fn backends(cli: &Cli) -> String {
    let mut out = String::from("# name\n");
    for px in cli.rt.proxies.iter().filter(|p| p.cap.backend) {
        out.push_str(&px.name);
        out.push('\n');
    }
    out
}
