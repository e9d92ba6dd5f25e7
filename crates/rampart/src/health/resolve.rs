//! What name resolution changes in a server's state: the maintenance for want of an
//! address (HAProxy's `SRV_ADMF_RMAINT`), entered when its name stops resolving (or a
//! `server-template` slot loses its SRV record) and left when it resolves again, with
//! HAProxy's messages. Like every maintenance, it takes the server out of the balancer
//! and leaves the streams it serves to finish: drained, not cut.
//! HAProxy counterparts: `srv_set_admin_flag(SRV_ADMF_RMAINT)`, `srv_clr_admin_flag()`
//! and their reports in `srv_update_status()` (src/server.c).

use rampart_cfg::Level;

use super::report::{self, available, emit};
use crate::log::level as log_level;
use crate::proxy::ProxyRt;
use crate::server::OperState;

/// Server `srv` of `px` enters (`on`, with `reason`, e.g. "DNS NX status") or leaves
/// the maintenance for want of an address; `host` names it in the message. Nothing
/// happens when it already is so.
pub fn set_resolution_maint(px: &ProxyRt, srv: usize, on: bool, reason: &str, host: &str) {
    let server = &px.be.servers[srv];
    let st = &server.state;
    if st.is_resolution_maint() == on {
        return;
    }
    let other_maint = st.is_forced_maint() || st.is_inherited_maint();
    let before = available(px);
    let was = st.oper();
    st.set_resolution_maint(on);
    report::sync_lb(px, srv);
    st.notify_trackers();
    let label = format!("{}Server {}/{}", if server.backup { "Backup " } else { "" }, px.name, server.name);
    let why = if reason.is_empty() { String::new() } else { format!(" ({reason})") };
    if other_maint {
        if !on {
            let msg = format!("{label} ('{host}') resolves again but remains in maintenance");
            emit(px, Level::Warning, log_level::NOTICE, &msg);
        }
        return;
    }
    if on {
        if was == OperState::Stopped {
            emit(px, Level::Warning, log_level::NOTICE, &format!("{label} was DOWN and now enters maintenance{why}"));
            return;
        }
        report::going_down_for_maint(px, srv, was, before, &label, &why);
        return;
    }
    let (up, word) = match st.oper() {
        OperState::Stopped => ("DOWN", "READY"),
        _ => ("UP", if st.is_drain() { "DRAIN" } else { "READY" }),
    };
    emit(px, Level::Warning, log_level::NOTICE, &format!("{label} ('{host}') is {up}/{word} (resolves again)"));
}

/// A `[WARNING]` on stderr and a notice in the proxy's logs (an address change).
pub fn notice(px: &ProxyRt, msg: &str) {
    emit(px, Level::Warning, log_level::NOTICE, msg);
}

/// A notice in the proxy's logs only (a name an SRV record gave).
pub fn log_only(px: &ProxyRt, msg: &str) {
    if let Some(pl) = px.log.as_deref() {
        pl.loggers.send(log_level::NOTICE, format!("{msg}\n").as_bytes());
    }
}
