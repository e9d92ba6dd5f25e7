//! `show servers state [<backend>]` (the format `server-state-file` reads back,
//! version 1) and `show backend`. HAProxy counterpart: the servers-state and
//! show-backend handlers of proxy.c.

use std::fmt::Write as _;

use super::Cli;

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
    let up = cli.uptime();
    for (idx, px) in cli.rt.proxies.iter().enumerate() {
        if !px.cap.backend || only.is_some_and(|o| o != idx) {
            continue;
        }
        for srv in &px.be.servers {
            // op_state 2 = running, 0 = stopped; admin_state 0x5 = forced and
            // configured maintenance (`disabled`); health = rise when running (no check:
            // the default rise of 2); check_state 0x8 = paused.
            let (op, admin, health, chk_state) = if srv.disabled { (0, 5, 0, 8) } else { (2, 0, 2, 0) };
            // the operational state and health counter the checks keep
            // TODO(#9): the admin and check-state flags of drain, maint set at run time
            let op = match srv.state.oper() {
                crate::server::OperState::Stopped => 0,
                crate::server::OperState::Running if !srv.disabled => 2,
                crate::server::OperState::Running => op,
                crate::server::OperState::Stopping => 3,
            };
            let health = srv.check.as_ref().map_or(health, |c| srv.state.health_or(c.rise));
            let w = srv.stats.weight;
            let _ = writeln!(
                out,
                "{} {} {} {} {} {op} {admin} {w} {w} {up} 1 0 {health} {chk_state} 0 0 0 - {} - 0 0 - - 0",
                cli.iid(idx),
                px.name,
                srv.stats.sid,
                srv.name,
                srv.addr.ip(),
                srv.addr.port(),
            );
        }
    }
    Ok(out)
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
