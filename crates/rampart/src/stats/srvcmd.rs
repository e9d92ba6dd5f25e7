//! The server commands of the CLI: `disable|enable server|health|agent`, `set server`,
//! `get weight`, `set weight`. Answers and errors are HAProxy 2.6's texts.
//! HAProxy counterpart: the `cli_parse_*` server handlers of server.c.

use crate::health as check;
use crate::proxy::ProxyRt;
use crate::server::OperState;

use super::admin::{set_admin_state, AdminState};
use super::cmd::Session;
use super::Cli;

/// The highest weight HAProxy accepts (`SRV_UWGHT_MAX`).
const MAX_WEIGHT: i64 = 256;

/// Finds `<backend>/<server>`; `Err` is HAProxy's message.
fn find<'a>(cli: &'a Cli, arg: Option<&str>) -> Result<(&'a ProxyRt, usize), String> {
    let Some((be, srv)) = arg.and_then(|a| a.split_once('/')) else {
        return Err("Require 'backend/server'.\n".to_owned());
    };
    let Some(px) = cli.find_proxy(be).map(|i| &cli.rt.proxies[i]).filter(|p| p.cap.backend) else {
        return Err("No such backend.\n".to_owned());
    };
    match super::srvadd::live_server(px, srv) {
        Some(i) => Ok((px, i)),
        None => Err("No such server.\n".to_owned()),
    }
}

/// `disable|enable server <b>/<s>`: maintenance on or off.
pub fn enable_server(cli: &Cli, _: &mut Session, words: &[&str]) -> String {
    match find(cli, words.get(2).copied()) {
        Ok((px, i)) => {
            check::set_maint(px, i, words[0] == "disable");
            String::new()
        }
        Err(e) => e,
    }
}

/// `disable|enable health|agent <b>/<s>`.
pub fn enable_check(cli: &Cli, _: &mut Session, words: &[&str]) -> String {
    let (px, i) = match find(cli, words.get(2).copied()) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let srv = &px.be.servers[i];
    let agent = words[1] == "agent";
    let on = words[0] == "enable";
    let configured = if agent { srv.agent.is_some() } else { srv.check.is_some() };
    if on && !configured {
        let what = if agent { "Agent" } else { "Health check" };
        return format!("{what} was not configured on this server, cannot enable.\n");
    }
    srv.state.set_check_enabled(agent, on);
    String::new()
}

/// `get weight <b>/<s>`: the current and the initial weight.
pub fn get_weight(cli: &Cli, _: &mut Session, words: &[&str]) -> String {
    match find(cli, words.get(2).copied()) {
        Ok((px, i)) => {
            let st = &px.be.servers[i].state;
            format!("{} (initial {})\n", st.eweight(), st.uweight())
        }
        Err(e) => e,
    }
}

/// `set weight <b>/<s> <w>[%]`.
pub fn set_weight(cli: &Cli, _: &mut Session, words: &[&str]) -> String {
    match find(cli, words.get(2).copied()) {
        Ok((px, i)) => apply_weight(px, i, words.get(3).copied()),
        Err(e) => e,
    }
}

/// `set server <b>/<s> state|weight|health|agent ...`.
pub fn set_server(cli: &Cli, _: &mut Session, words: &[&str]) -> String {
    let (px, i) = match find(cli, words.get(2).copied()) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let value = words.get(4).copied();
    match words.get(3).copied() {
        Some("weight") => apply_weight(px, i, value),
        Some("state") => set_state(px, i, value),
        Some("health") => set_health(px, i, value),
        Some("agent") => set_agent(px, i, value),
        Some("fqdn") => super::srvdns::set_fqdn(px, i, value),
        Some("addr") => {
            super::srvdns::set_addr(px, i, value, words.get(5).copied(), words.get(6).copied(), "stats socket command")
        }
        Some("ssl") => super::srvadd::set_ssl(px, i, value),
        Some(w @ ("agent-addr" | "agent-port" | "agent-send" | "check-addr" | "check-port")) => {
            format!("'set server <srv> {w}' is not supported yet.\n")
        }
        _ => "usage: set server <backend>/<server> addr | agent | agent-addr | agent-port | agent-send | \
              check-addr | check-port | fqdn | health | ssl | state | weight\n"
            .to_owned(),
    }
}

fn set_state(px: &ProxyRt, i: usize, value: Option<&str>) -> String {
    let state = match value {
        Some("ready") => AdminState::Ready,
        Some("drain") => AdminState::Drain,
        Some("maint") => AdminState::Maint,
        _ => return "'set server <srv> state' expects 'ready', 'drain' and 'maint'.\n".to_owned(),
    };
    set_admin_state(px, i, state);
    String::new()
}

fn set_health(px: &ProxyRt, i: usize, value: Option<&str>) -> String {
    if px.be.servers[i].track.is_some() {
        return "cannot change health on a tracking server.\n".to_owned();
    }
    let next = match value {
        Some("up") => OperState::Running,
        Some("stopping") => OperState::Stopping,
        Some("down") => OperState::Stopped,
        _ => return "'set server <srv> health' expects 'up', 'stopping', or 'down'.\n".to_owned(),
    };
    check::force_state(px, i, false, next);
    String::new()
}

fn set_agent(px: &ProxyRt, i: usize, value: Option<&str>) -> String {
    if px.be.servers[i].agent.is_none() {
        return "agent checks are not enabled on this server.\n".to_owned();
    }
    let next = match value {
        Some("up") => OperState::Running,
        Some("down") => OperState::Stopped,
        _ => return "'set server <srv> agent' expects 'up' or 'down'.\n".to_owned(),
    };
    check::force_state(px, i, true, next);
    String::new()
}

/// Parses and applies a weight as HAProxy's `server_parse_weight_change_request()`
/// does: `<w>` (0..256) or `<w>%` of the initial weight. Empty: done; else HAProxy's
/// message (also for Lua's `Server:set_weight()`).
pub fn apply_weight(px: &ProxyRt, i: usize, value: Option<&str>) -> String {
    let Some(text) = value else { return "Require <weight> or <weight%>.\n".to_owned() };
    let initial = px.be.servers[i].state.uweight();
    let w = match parse_weight(text, initial) {
        Ok(w) => w,
        Err(e) => return e.to_owned(),
    };
    if w != 0 && w != initial && !px.be.lb.dynamic_weights() {
        return "Backend is using a static LB algorithm and only accepts weights '0%' and '100%'.\n".to_owned();
    }
    check::set_weight(px, i, w);
    String::new()
}

/// Parses and applies a server's maxconn as HAProxy's
/// `server_parse_maxconn_change_request()` does (Lua's `Server:set_maxconn()`; the CLI's
/// `set maxconn server` is not there yet): `None` when done, else HAProxy's message.
/// A negative value reads as 0 (no limit; HAProxy stores it in a signed field). Queued
/// streams are not dispatched at once: a freed slot or the queue timeout moves them.
pub fn set_maxconn(px: &ProxyRt, i: usize, text: &str) -> Option<&'static str> {
    if text.is_empty() {
        return Some("Require <maxconn>.\n");
    }
    let t = text.trim_start();
    let (neg, rest) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    if end == 0 {
        return Some("maxconn string empty or preceded by garbage");
    }
    if end < rest.len() {
        return Some("Trailing garbage in maxconn string");
    }
    let n = if neg { 0 } else { rest[..end].parse::<u64>().unwrap_or(u64::MAX).min(u64::from(u32::MAX)) as u32 };
    px.be.servers[i].maxconn.store(n, std::sync::atomic::Ordering::Relaxed);
    None
}

/// A weight argument: `Err` is HAProxy's message (two have no final newline, as in
/// HAProxy).
fn parse_weight(text: &str, initial: u32) -> Result<u32, &'static str> {
    let (neg, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    if end == 0 {
        return Err("Empty weight string empty or preceded by garbage");
    }
    let n = rest[..end].parse::<i64>().unwrap_or(i64::MAX);
    let n = if neg { -n } else { n };
    match &rest[end..] {
        "%" if n < 0 => Err("Relative weight must be positive.\n"),
        "%" => Ok((i64::from(initial).saturating_mul(n) / 100).min(MAX_WEIGHT) as u32),
        _ if !(0..=MAX_WEIGHT).contains(&n) => Err("Absolute weight can only be between 0 and 256 inclusive.\n"),
        "" => Ok(n as u32),
        _ => Err("Trailing garbage in weight string"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_parse_as_haproxy() {
        assert_eq!(parse_weight("3", 1), Ok(3));
        assert_eq!(parse_weight("50%", 1), Ok(0));
        assert_eq!(parse_weight("50%", 10), Ok(5));
        assert_eq!(parse_weight("150%", 200), Ok(256));
        assert_eq!(parse_weight("-1%", 1), Err("Relative weight must be positive.\n"));
        assert_eq!(parse_weight("257", 1), Err("Absolute weight can only be between 0 and 256 inclusive.\n"));
        assert_eq!(parse_weight("-1", 1), Err("Absolute weight can only be between 0 and 256 inclusive.\n"));
        assert_eq!(parse_weight("abc", 1), Err("Empty weight string empty or preceded by garbage"));
        assert_eq!(parse_weight("3x", 1), Err("Trailing garbage in weight string"));
    }
}
