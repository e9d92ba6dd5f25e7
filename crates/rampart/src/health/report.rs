//! Applying a check result to its server: the rise/fall counter, the last-check record,
//! the operational state, and HAProxy's messages on stderr.
//! HAProxy counterparts: `set_server_check_status()`, `check_notify_failure()`,
//! `check_notify_success()`, `check_notify_stopping()` (src/check.c),
//! `srv_update_status()`, `srv_append_status()` (src/server.c), `set_backend_down()`
//! (src/backend.c).

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rampart_cfg::Level;

use crate::log::level as log_level;

use crate::check::Health;
use crate::check::Outcome;
use crate::check::{CheckResult, CheckStatus};
use crate::proxy::ProxyRt;
use crate::server::{CheckReport, OperState};

/// Applies the result of a check of server `srv` of backend `px` (`agent`: of its
/// agent check, whose connection failures do not count against the server).
pub(super) fn apply(
    px: &ProxyRt,
    srv: usize,
    health: &mut Health,
    out: Outcome,
    duration: Duration,
    log_hc: bool,
    agent: bool,
) {
    let server = &px.be.servers[srv];
    let st = &server.state;
    let prev = if agent { st.last_agent_check() } else { st.last_check() };
    let prev_status = prev.map(|r| r.status);
    let result = out.status.result();
    let counts = !agent || out.status == CheckStatus::L7Sts;
    let moved = match result {
        CheckResult::Failed if health.health > 0 && counts => {
            st.count_failed_check();
            health.fail()
        }
        CheckResult::Failed => false,
        CheckResult::Passed | CheckResult::CondPass => health.pass(),
    };
    let report = CheckReport {
        status: out.status,
        code: out.code,
        duration,
        desc: out.desc,
        health: health.health,
        rise: health.rise,
        fall: health.fall,
    };
    if log_hc && (prev_status != Some(out.status) || moved) {
        let verdict = match result {
            CheckResult::Failed => "failed",
            CheckResult::Passed => "succeeded",
            CheckResult::CondPass => "conditionally succeeded",
        };
        let backup = if server.backup { "backup " } else { "" };
        let what = if agent { "Agent" } else { "Health" };
        let mut msg = format!("{what} check for {backup}server {}/{} {verdict}", px.name, server.name);
        append_check(&mut msg, &report);
        let _ = write!(msg, ", status: {}", health.status_text(st.eweight()));
        emit(px, Level::Warning, log_level::NOTICE, &msg);
        mail(px, log_level::INFO, &msg);
    }
    let reason = (!log_hc).then_some(&report);
    st.set_verdict(agent, health.is_up());
    let other_up = st.other_verdict(agent);
    let next = match result {
        CheckResult::Failed if health.health == 0 && counts => Some(OperState::Stopped),
        CheckResult::Passed if health.is_up() && other_up => Some(OperState::Running),
        CheckResult::CondPass if health.is_up() && other_up => Some(OperState::Stopping),
        _ => None,
    };
    let report_copy = reason.cloned().map(Reason::Check).unwrap_or(Reason::None);
    if agent {
        st.set_last_agent_check(report);
    } else {
        st.set_last_check(report);
    }
    if let Some(next) = next {
        change_state(px, srv, next, &report_copy);
    }
}

/// Why a server changes state, as the message says it.
#[derive(Debug)]
pub(super) enum Reason {
    /// Nothing (`option log-health-checks` already told).
    None,
    /// The check that decided.
    Check(CheckReport),
    /// ` via <backend>/<server>`: the tracked server changed.
    Via(String),
}

/// Moves server `srv` to `next` and reports it as HAProxy does, when it changes and
/// the server is not in maintenance (which keeps its own state silent).
pub(super) fn change_state(px: &ProxyRt, srv: usize, next: OperState, reason: &Reason) {
    let server = &px.be.servers[srv];
    let st = &server.state;
    if st.oper() == next {
        return;
    }
    let before = available(px);
    let maint = st.is_maint();
    let prev = st.set_oper(next);
    sync_lb(px, srv);
    if maint {
        return;
    }
    cut_sessions(px, srv, next);
    let what = match next {
        OperState::Stopped => "DOWN",
        OperState::Running => "UP",
        OperState::Stopping => "stopping",
    };
    let backup = if server.backup { "Backup " } else { "" };
    let mut msg = format!("{backup}Server {}/{} is {what}", px.name, server.name);
    match reason {
        Reason::None => {}
        Reason::Check(r) => append_check(&mut msg, r),
        Reason::Via(v) => msg.push_str(v),
    }
    let (act, bck) = available(px);
    let on_backup = if bck > 0 && act == 0 { " Running on backup." } else { "" };
    if next == OperState::Stopped {
        let cur = server.cur_conns.load(Ordering::Relaxed);
        let _ = write!(
            msg,
            ". {act} active and {bck} backup servers left.{on_backup} {cur} sessions active, 0 requeued, 0 remaining in queue"
        );
    } else {
        let _ = write!(
            msg,
            ". {act} active and {bck} backup servers online.{on_backup} 0 sessions requeued, 0 total in queue"
        );
    }
    // HAProxy logs a server going DOWN as an alert, unless it was only stopping
    let level =
        if next == OperState::Stopped && prev != OperState::Stopping { log_level::ALERT } else { log_level::NOTICE };
    emit(px, Level::Warning, level, &msg);
    // as HAProxy, a server that starts stopping (NOLB) is not mailed
    if next != OperState::Stopping {
        mail(px, level, &msg);
    }
    if before.0 + before.1 > 0 && act + bck == 0 {
        no_server_left(px);
    }
}

/// Mails `msg` to the proxy's `email-alert` mailers when its level is low enough.
pub(super) fn mail(px: &ProxyRt, level: u8, msg: &str) {
    if let Some(ea) = &px.email_alert {
        ea.send(level, msg);
    }
}

/// `on-marked-down shutdown-sessions` when server `srv` goes DOWN, `on-marked-up
/// shutdown-backup-sessions` when it comes UP.
pub(super) fn cut_sessions(px: &ProxyRt, srv: usize, next: OperState) {
    let server = &px.be.servers[srv];
    match next {
        OperState::Stopped if server.shutdown_on_down => {
            if let Some(s) = &server.sessions {
                s.shutdown_all();
            }
        }
        OperState::Running if server.shutdown_backups_on_up => {
            for b in px.be.servers.iter().filter(|b| b.backup) {
                if let Some(s) = &b.sessions {
                    s.shutdown_all();
                }
            }
        }
        _ => {}
    }
}

/// Sets the effective weight of server `srv` (an agent's `<N>%`); as in HAProxy, the
/// backend reports having no server left when that was its last weight.
pub(super) fn change_weight(px: &ProxyRt, srv: usize, weight: u32) {
    let before = available(px);
    px.be.servers[srv].state.set_eweight(weight);
    let lb = if px.be.servers[srv].backup { px.be.lb_backup.as_deref() } else { Some(&px.be.lb) };
    if let Some(lb) = lb {
        lb.set_weight(srv, weight);
    }
    let (act, bck) = available(px);
    if before.0 + before.1 > 0 && act + bck == 0 {
        no_server_left(px);
    } else if act + bck > 0 {
        px.be.state.came_up();
    }
}

/// HAProxy's `set_backend_down()`: `backend 'b' has no server available!` on stderr,
/// `backend b has no server available!` in the logs at emergency level.
pub(super) fn no_server_left(px: &ProxyRt) {
    px.be.state.went_down();
    let kind = proxy_type(px);
    let _ = write_stderr(Level::Alert, &format!("{kind} '{}' has no server available!\n", px.name));
    if let Some(pl) = px.log.as_deref() {
        pl.loggers.send(log_level::EMERG, format!("{kind} {} has no server available!", px.name).as_bytes());
    }
}

/// Tells the balancer of server `srv` whether it is in rotation (its tables depend on
/// it for `hash-type map-based`); call after every state change of the server.
pub(crate) fn sync_lb(px: &ProxyRt, srv: usize) {
    let server = &px.be.servers[srv];
    let lb = if server.backup { px.be.lb_backup.as_deref() } else { Some(&px.be.lb) };
    if let Some(lb) = lb {
        lb.set_active(srv, server.state.is_up());
    }
    if server.state.counts_as_available() {
        px.be.state.came_up();
    }
}

/// A server that was not DOWN entered maintenance: `<head> is going DOWN for
/// maintenance<why>. N active and M backup servers left. ...`, then the backend's "no
/// server available" when it was the last one (`before`: [`available`] before the change).
pub(super) fn going_down_for_maint(
    px: &ProxyRt,
    srv: usize,
    was: OperState,
    before: (usize, usize),
    head: &str,
    why: &str,
) {
    let (act, bck) = available(px);
    let on_backup = if bck > 0 && act == 0 { " Running on backup." } else { "" };
    let cur = px.be.servers[srv].cur_conns.load(Ordering::Relaxed);
    let msg = format!(
        "{head} is going DOWN for maintenance{why}. {act} active and {bck} backup servers left.{on_backup} \
         {cur} sessions active, 0 requeued, 0 remaining in queue"
    );
    let level = if was == OperState::Stopping { log_level::NOTICE } else { log_level::ALERT };
    emit(px, Level::Warning, level, &msg);
    if before.0 + before.1 > 0 && act + bck == 0 {
        no_server_left(px);
    }
}

/// HAProxy's `srv_act` and `srv_bck`: active and backup servers UP with a weight.
pub(super) fn available(px: &ProxyRt) -> (usize, usize) {
    let servers = &px.be.servers;
    let count = |backup: bool| servers.iter().filter(|s| s.backup == backup && s.state.counts_as_available()).count();
    (count(false), count(true))
}

/// HAProxy's `proxy_type_str()`.
fn proxy_type(px: &ProxyRt) -> &'static str {
    match (px.cap.frontend, px.cap.backend) {
        (true, true) => "proxy",
        (false, true) => "backend",
        _ => "frontend",
    }
}

/// `, reason: <desc>[, code: N][, info: "..."], check duration: Nms`.
pub(super) fn append_check(msg: &mut String, r: &CheckReport) {
    let _ = write!(msg, ", reason: {}", r.status.description());
    if r.status.has_code() {
        // an external command killed by a signal has no exit status: HAProxy's -1
        if r.code == crate::check::external::NO_EXIT_STATUS {
            msg.push_str(", code: -1");
        } else {
            let _ = write!(msg, ", code: {}", r.code);
        }
    }
    if !r.desc.is_empty() {
        msg.push_str(", info: \"");
        ascii_encode(msg, &r.desc);
        msg.push('"');
    }
    // a passive check has no duration (HAProxy's -1)
    if r.status != CheckStatus::Hana {
        let _ = write!(msg, ", check duration: {}ms", r.duration.as_millis());
    }
}

/// HAProxy's `chunk_asciiencode()`: non-printable bytes, `<`, `>` and `"` as `<HH>`.
fn ascii_encode(out: &mut String, text: &str) {
    for b in text.bytes() {
        if (0x20..0x7f).contains(&b) && !matches!(b, b'"' | b'<' | b'>') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "<{b:02X}>");
        }
    }
}

/// A check message: a `[WARNING]` line on stderr (a closed stderr is ignored) and, at
/// `log_level`, a line in the proxy's logs, each ending with a period as HAProxy's.
pub(super) fn emit(px: &ProxyRt, level: Level, log_level: u8, msg: &str) {
    let _ = write_stderr(level, &format!("{msg}.\n"));
    if let Some(pl) = px.log.as_deref() {
        pl.loggers.send(log_level, format!("{msg}.").as_bytes());
    }
}

fn write_stderr(level: Level, text: &str) -> std::io::Result<()> {
    let line = format!("{}({}) : {text}", level.tag(), std::process::id());
    std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(status: CheckStatus, code: u16, desc: &str) -> CheckReport {
        CheckReport { status, code, duration: Duration::from_millis(3), desc: desc.into(), health: 0, rise: 2, fall: 3 }
    }

    #[test]
    fn reason_part_as_haproxy_prints_it() {
        let mut m = String::new();
        append_check(&mut m, &rep(CheckStatus::L4Con, 0, "Connection refused"));
        assert_eq!(m, ", reason: Layer4 connection problem, info: \"Connection refused\", check duration: 3ms");
        let mut m = String::new();
        append_check(&mut m, &rep(CheckStatus::L7Sts, 500, "Internal Server Error"));
        assert_eq!(m, ", reason: Layer7 wrong status, code: 500, info: \"Internal Server Error\", check duration: 3ms");
        let mut m = String::new();
        append_check(&mut m, &rep(CheckStatus::L7OkC, 404, ""));
        assert_eq!(m, ", reason: Layer7 check conditionally passed, code: 404, check duration: 3ms");
        let mut m = String::new();
        append_check(&mut m, &rep(CheckStatus::L7Rsp, 200, "a \"q\"\n"));
        assert_eq!(m, ", reason: Layer7 invalid response, info: \"a <22>q<22><0A>\", check duration: 3ms");
    }
}
