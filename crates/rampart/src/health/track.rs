//! `track [<backend>/]<server>`: a server without checks of its own follows the state
//! of another one (which checks, or tracks in turn), its maintenance included, with
//! HAProxy's ` via be/srv` messages.
//! HAProxy counterpart: `srv_apply_track()` and the tracker propagation of
//! `srv_set_running()` / `srv_set_stopped()` (src/server.c).

use std::sync::Arc;

use rampart_cfg::model::Config;
use rampart_cfg::Diag;

use super::report::{self, Reason};
use crate::proxy::{ProxyRt, Runtime};

/// Resolves the `track` of every server, with HAProxy's refusals.
pub fn resolve_tracks(cfg: &Config, proxies: &mut [ProxyRt], alerts: &mut Vec<Diag>) {
    let mut links = Vec::new();
    for (b, px) in cfg.proxies.iter().enumerate() {
        for (s, srv) in px.servers.iter().enumerate() {
            let Some(target) = &srv.check.track else { continue };
            let fail =
                |msg: String| Diag::alert(None, format!("[{}] : 'server {}/{}' : {msg}", srv.span, px.name, srv.name));
            if srv.check.enabled {
                alerts.push(fail("unable to enable checks and tracking at the same time!".into()));
                continue;
            }
            let (tb, sname) = match target.rsplit_once('/') {
                Some((p, s)) => match cfg.find_backend(p) {
                    Some(i) => (i, s),
                    None => {
                        alerts.push(fail(format!("unable to find required proxy '{p}' for tracking.")));
                        continue;
                    }
                },
                None => (b, target.as_str()),
            };
            let tpx = &cfg.proxies[tb];
            let Some(ts) = tpx.servers.iter().position(|x| x.name == sname) else {
                alerts.push(fail(format!("unable to find required server '{sname}' for tracking.")));
                continue;
            };
            let t = &tpx.servers[ts];
            if !t.check.enabled && !t.check.agent && t.check.track.is_none() {
                alerts.push(fail(format!(
                    "unable to use {}/{} for tracking as it does not have any check nor agent enabled.",
                    tpx.name, t.name
                )));
                continue;
            }
            links.push(((b, s), (tb, ts)));
        }
    }
    // as HAProxy, in configuration order, a chain is followed through the links
    // resolved so far: the link that closes a loop is the one refused
    let mut resolved: Vec<((usize, usize), (usize, usize))> = Vec::new();
    for &((b, s), target) in &links {
        let mut at = Some(target);
        let mut looped = false;
        while let Some(cur) = at {
            if cur == (b, s) {
                looped = true;
                break;
            }
            at = resolved.iter().find(|(from, _)| *from == cur).map(|(_, to)| *to);
        }
        if looped {
            let (px, srv) = (&cfg.proxies[b], &cfg.proxies[b].servers[s]);
            let (tpx, tsrv) = (&cfg.proxies[target.0], &cfg.proxies[target.0].servers[target.1]);
            alerts.push(Diag::alert(
                None,
                format!(
                    "[{}] : 'server {}/{}' : unable to track {}/{} as it belongs to a tracking chain looping back to {}/{}.",
                    srv.span, px.name, srv.name, tpx.name, tsrv.name, px.name, srv.name
                ),
            ));
            continue;
        }
        resolved.push(((b, s), target));
        if let Some(server) = proxies.get_mut(b).and_then(|p| p.be.servers.get_mut(s)) {
            server.track = Some(target);
        }
    }
}

/// Passes every state change of server `ts` of backend `tb` to the servers that track
/// it, until the process stops. One task per tracked server, so that its trackers hear
/// of a change in HAProxy's order ([`trackers`]); a tracker that changes wakes the task
/// of its own trackers in turn.
async fn run(rt: Arc<Runtime>, tb: usize, ts: usize) {
    let tsrv = &rt.proxies[tb].be.servers[ts];
    while !rt.global.is_stopping() {
        let changed = tsrv.state.changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        for (b, s) in trackers(&rt, (tb, ts)) {
            follow(&rt, b, s);
        }
        changed.await;
    }
}

/// Starts the task that follows server `target` for its trackers, unless it runs.
pub(super) fn ensure_follower(rt: &Arc<Runtime>, target: (usize, usize)) {
    let st = &rt.proxies[target.0].be.servers[target.1].state;
    if !st.claim_follower() {
        tokio::spawn(run(rt.clone(), target.0, target.1));
    }
}

/// The live servers that track `target`, in the order HAProxy walks its list of
/// trackers, where each new tracker goes first: the servers added at run time (the
/// newest first), then the configured ones, the last first.
fn trackers(rt: &Runtime, target: (usize, usize)) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    for (b, px) in rt.proxies.iter().enumerate() {
        let configured = px.be.servers.configured();
        for (s, srv) in px.be.servers.iter().enumerate() {
            if srv.track == Some(target) && !srv.state.is_deleted() {
                found.push((s < configured, b, s));
            }
        }
    }
    found.sort_by_key(|&(configured, b, s)| (configured, std::cmp::Reverse((b, s))));
    found.into_iter().map(|(_, b, s)| (b, s)).collect()
}

/// Brings server `srv` of backend `be` to the state of the server it tracks: its
/// maintenance, then its operational state, with HAProxy's ` via be/srv` messages.
pub(super) fn follow(rt: &Runtime, be: usize, srv: usize) {
    let px = &rt.proxies[be];
    let Some((tb, ts)) = px.be.servers[srv].track else { return };
    let (tpx, tsrv) = (&rt.proxies[tb], &rt.proxies[tb].be.servers[ts]);
    let via = format!(" via {}/{}", tpx.name, tsrv.name);
    let want = tsrv.state.oper();
    let maint = tsrv.state.is_maint();
    let st = &px.be.servers[srv].state;
    if maint && !st.is_inherited_maint() {
        super::admin::inherit_maint(px, srv, true, &via);
    }
    if st.oper() != want {
        report::change_state(px, srv, want, &Reason::Via(via.clone()));
    }
    if !maint && st.is_inherited_maint() {
        super::admin::inherit_maint(px, srv, false, &via);
    }
}
