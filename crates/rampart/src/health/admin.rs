//! Administrative changes of a server asked by the runtime API: maintenance (MAINT),
//! drain, a forced health or agent verdict, a new weight; each tells the balancer and
//! prints HAProxy's message.
//! HAProxy counterparts: `srv_adm_set_maint()`, `srv_adm_set_drain()`,
//! `srv_adm_set_ready()`, `srv_update_status()` (src/server.c).

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use rampart_cfg::Level;

use super::report::{self, available, emit, no_server_left, Reason};
use crate::log::level as log_level;
use crate::proxy::ProxyRt;
use crate::server::OperState;

fn label(px: &ProxyRt, srv: usize) -> String {
    let s = &px.be.servers[srv];
    format!("{}Server {}/{}", if s.backup { "Backup " } else { "" }, px.name, s.name)
}

/// `, N active and M backup servers online.[ Running on backup.]` and the queue part.
fn online(px: &ProxyRt, msg: &mut String) {
    let (act, bck) = available(px);
    let on_backup = if bck > 0 && act == 0 { " Running on backup." } else { "" };
    let _ =
        write!(msg, ". {act} active and {bck} backup servers online.{on_backup} 0 sessions requeued, 0 total in queue");
}

/// Puts server `srv` of `px` in maintenance (`disable server`, `set server ... state
/// maint`) or takes it out (`enable server`, `state ready`). Nothing happens when it
/// already is so.
pub fn set_maint(px: &ProxyRt, srv: usize, on: bool) {
    maint_change(px, srv, on);
    px.be.servers[srv].state.notify_trackers();
}

fn maint_change(px: &ProxyRt, srv: usize, on: bool) {
    let server = &px.be.servers[srv];
    let st = &server.state;
    if st.is_forced_maint() == on {
        return;
    }
    // already (or still) in maintenance through `track` or DNS: the flag alone changes
    if st.is_inherited_maint() || st.is_resolution_maint() {
        st.set_maint(on);
        return;
    }
    let before = available(px);
    if on {
        let was = st.oper();
        st.set_maint(true);
        // entering maintenance counts as going down for `on-marked-down`
        report::cut_sessions(px, srv, OperState::Stopped);
        // the checks pause: HAProxy's health counter drops to 0
        if server.check.is_some() {
            st.store_health(0);
        }
        report::sync_lb(px, srv);
        let mut msg = label(px, srv);
        if was == OperState::Stopped {
            msg.push_str(" was DOWN and now enters maintenance");
            emit(px, Level::Warning, log_level::NOTICE, &msg);
            return;
        }
        report::going_down_for_maint(px, srv, was, before, &msg, "");
        return;
    }
    // leaving maintenance: the checks start again from `rise` (UP)
    if let Some(c) = &server.check {
        st.store_health(c.rise);
        st.set_verdict(false, true);
    }
    st.set_oper(OperState::Running);
    st.set_maint(false);
    report::sync_lb(px, srv);
    report::cut_sessions(px, srv, OperState::Running);
    let word = if st.is_drain() { "DRAIN" } else { "READY" };
    let msg = format!("{} is UP/{word} (leaving forced maintenance)", label(px, srv));
    emit(px, Level::Warning, log_level::NOTICE, &msg);
    if st.is_drain() {
        let msg = format!("{} remains in forced drain mode", label(px, srv));
        emit(px, Level::Warning, log_level::NOTICE, &msg);
    }
}

/// Server `srv` of `px` enters (`on`) or leaves the maintenance of the server it
/// tracks (`via`: ` via <be>/<srv>`), as HAProxy's `srv_set_admin_flag()` with
/// `SRV_ADMF_IMAINT` reports it.
pub fn inherit_maint(px: &ProxyRt, srv: usize, on: bool, via: &str) {
    inherited_change(px, srv, on, via);
    px.be.servers[srv].state.notify_trackers();
}

fn inherited_change(px: &ProxyRt, srv: usize, on: bool, via: &str) {
    let server = &px.be.servers[srv];
    let st = &server.state;
    if st.is_inherited_maint() == on {
        return;
    }
    if st.is_forced_maint() || st.is_resolution_maint() {
        st.set_inherited_maint(on);
        return;
    }
    let before = available(px);
    let was = st.oper();
    st.set_inherited_maint(on);
    report::sync_lb(px, srv);
    if on {
        report::cut_sessions(px, srv, OperState::Stopped);
        let (act, bck) = available(px);
        let on_backup = if bck > 0 && act == 0 { " Running on backup." } else { "" };
        let cur = server.cur_conns.load(Ordering::Relaxed);
        let msg = format!(
            "{} is going DOWN for maintenance{via}. {act} active and {bck} backup servers left.{on_backup} \
             {cur} sessions active, 0 requeued, 0 remaining in queue",
            label(px, srv)
        );
        let level = if was == OperState::Running { log_level::ALERT } else { log_level::NOTICE };
        emit(px, Level::Warning, level, &msg);
        if before.0 + before.1 > 0 && act + bck == 0 {
            no_server_left(px);
        }
        return;
    }
    report::cut_sessions(px, srv, st.oper());
    let msg = match st.oper() {
        OperState::Stopped => format!("{} is DOWN (leaving maintenance)", label(px, srv)),
        _ => {
            let word = if st.is_drain() { "DRAIN" } else { "READY" };
            format!("{} is UP/{word} (leaving maintenance)", label(px, srv))
        }
    };
    emit(px, Level::Warning, log_level::NOTICE, &msg);
}

/// Puts server `srv` of `px` in drain (`set server ... state drain`) or takes it out
/// (`state ready`).
pub fn set_drain(px: &ProxyRt, srv: usize, on: bool) {
    let st = &px.be.servers[srv].state;
    if st.is_drain() == on {
        return;
    }
    let before = available(px);
    st.set_drain(on);
    report::sync_lb(px, srv);
    if st.is_maint() || st.oper() != OperState::Running {
        return;
    }
    if on {
        let mut msg = format!("{} enters drain state", label(px, srv));
        online(px, &mut msg);
        emit(px, Level::Warning, log_level::NOTICE, &msg);
        report::mail(px, log_level::NOTICE, &msg);
        let (act, bck) = available(px);
        if before.0 + before.1 > 0 && act + bck == 0 {
            no_server_left(px);
        }
    } else {
        let msg = format!("{} is UP (leaving forced drain)", label(px, srv));
        emit(px, Level::Warning, log_level::NOTICE, &msg);
    }
}

/// `set server <b>/<s> health|agent up|stopping|down`: forces the verdict of the health
/// check (`agent`: of the agent) and the server's state, "changed from CLI".
pub fn force_state(px: &ProxyRt, srv: usize, agent: bool, next: OperState) {
    force_state_by(px, srv, agent, next, "CLI");
}

/// [`force_state`] for `by` (`CLI`, `Lua script`): the state changes "changed from
/// <by>".
pub fn force_state_by(px: &ProxyRt, srv: usize, agent: bool, next: OperState, by: &str) {
    let server = &px.be.servers[srv];
    let st = &server.state;
    let up = next != OperState::Stopped;
    if !agent {
        let (rise, fall) = server.check.as_deref().map_or(server.rise_fall, |c| (c.rise, c.fall));
        st.store_health(if up { rise + fall - 1 } else { 0 });
    }
    st.set_verdict(agent, up);
    let moved = st.oper() != next;
    report::change_state(px, srv, next, &Reason::Via(format!(", changed from {by}")));
    if moved && st.is_drain() && !st.is_maint() {
        let msg = format!("{} remains in forced drain mode", label(px, srv));
        emit(px, Level::Warning, log_level::NOTICE, &msg);
    }
}

/// Sets the weight of server `srv` (`set weight`, `set server ... weight`), telling the
/// balancer.
pub fn set_weight(px: &ProxyRt, srv: usize, weight: u32) {
    report::change_weight(px, srv, weight);
}
