//! Health checks at run time: one task per checked server, on the worker threads
//! (spread round-robin), probing the server every `inter`/`fastinter`/`downinter` and
//! moving it between UP, DOWN and NOLB with HAProxy's rise/fall rules and messages;
//! passive checks on traffic (`observe`), servers that track another's state, and the
//! administrative state changes the CLI, the stats page and agents ask for. What a
//! check is (settings, protocols, results) is `crate::check`'s.
//! HAProxy counterpart: check.c (`start_checks()`, `process_chk_conn()`,
//! `set_server_check_status()`), server.c (`srv_set_admin_flag()`, tracking).
//!
//! - `external`: external checks: the command run, bounded in time and number
//! - `probe`: one check: connect, and for HTTP checks an exchange, within the timeouts
//! - `report`: applying a result: counters, server state, messages
//! - `admin`: maintenance, drain, forced states and weights
//! - `resolve`: the maintenance for want of an address (DNS)
//! - `passive`: `observe`: traffic errors counted against a server
//! - `track`: servers that follow another server's state (`track`)

mod admin;
mod external;
mod passive;
mod probe;
mod report;
mod resolve;
mod track;

use std::sync::Arc;
use std::time::Duration;

pub use admin::{force_state, force_state_by, set_drain, set_maint, set_weight};
pub use passive::{observe, Event};
pub(crate) use report::sync_lb;
pub use resolve::{log_only, notice, set_resolution_maint};
pub use track::resolve_tracks;

use crate::check::Health;
use crate::proxy::Runtime;

/// Checks with an interval at least this long set the pace of the startup spread
/// (HAProxy's `SRV_CHK_INTER_THRES`).
const INTER_THRES: Duration = Duration::from_millis(1000);

/// The `status` of `show stat` for a server, as HAProxy words it: `MAINT`, `DRAIN`,
/// `UP`, `DOWN`, `NOLB`, the transitional `UP 1/3` / `DOWN 1/2`, or `no check`.
pub fn status_text(srv: &crate::proxy::ServerRt) -> String {
    use crate::server::OperState;
    let st = &srv.state;
    if st.is_resolution_maint() {
        return "MAINT (resolution)".into();
    }
    if st.is_maint() {
        return "MAINT".into();
    }
    if st.is_drain() {
        return "DRAIN".into();
    }
    let oper = st.oper();
    let Some(chk) = &srv.check else {
        return if oper == OperState::Stopped { "DOWN" } else { "no check" }.into();
    };
    let h = Health { health: st.health_or(chk.rise), rise: chk.rise, fall: chk.fall };
    let top = h.rise + h.fall - 1;
    match oper {
        OperState::Stopped if h.health > 0 => format!("DOWN {}/{}", h.health, h.rise),
        OperState::Stopped => "DOWN".into(),
        _ => {
            let word = if oper == OperState::Stopping { "NOLB" } else { "UP" };
            if h.health >= top {
                word.into()
            } else {
                format!("{word} {}/{}", h.health.saturating_sub(h.rise) + 1, h.fall)
            }
        }
    }
}

/// One check task to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scheduled {
    pub be: usize,
    pub srv: usize,
    /// The agent check (else the health check).
    pub agent: bool,
    /// Delay before its first probe.
    pub delay: Duration,
}

/// Where each check starts. As in HAProxy, check number `pos` of `n` (health check,
/// then agent check, server after server) starts after `pace * pos / n`, where `pace`
/// is the smallest interval of at least 1s among all checks, or the check's own
/// interval when longer, but never more than `max-spread-checks`.
pub fn schedule(rt: &Runtime) -> Vec<Scheduled> {
    let cap = rt.global.max_spread_checks;
    let mut all: Vec<(usize, usize, bool, Duration)> = Vec::new();
    for (b, px) in rt.proxies.iter().enumerate() {
        for (s, srv) in px.be.servers.iter().enumerate() {
            if let Some(c) = &srv.check {
                all.push((b, s, false, Health::new(c.rise, c.fall).interval(c.inter, c.fastinter, c.downinter)));
            }
            if let Some(a) = &srv.agent {
                all.push((b, s, true, a.inter));
            }
        }
    }
    let n = all.len() as u32;
    let min_inter = all.iter().map(|c| c.3).filter(|&i| i >= INTER_THRES).min();
    all.iter()
        .enumerate()
        .map(|(pos, &(be, srv, agent, inter))| {
            let pace = min_inter.unwrap_or_default().max(inter);
            let pace = cap.map_or(pace, |cap| pace.min(cap));
            Scheduled { be, srv, agent, delay: pace * pos as u32 / n.max(1) }
        })
        .collect()
}

/// Starts, on the current worker thread, the checks that fall to thread `thread` of
/// `nbthread` (every `nbthread`-th check of [`schedule`]).
pub fn spawn_for_thread(rt: &Arc<Runtime>, thread: usize, nbthread: usize) {
    // trackers only wait for their tracked server: all on the first thread
    if thread == 0 {
        for px in &rt.proxies {
            for srv in px.be.servers.iter() {
                if let Some(target) = srv.track {
                    track::ensure_follower(rt, target);
                }
            }
        }
    }
    for (i, c) in schedule(rt).into_iter().enumerate() {
        if i % nbthread.max(1) == thread {
            if c.agent {
                tokio::spawn(probe::run_agent(rt.clone(), c.be, c.srv, c.delay));
            } else {
                tokio::spawn(probe::run(rt.clone(), c.be, c.srv, c.delay));
            }
        }
    }
}

/// Starts, on the current thread, the check, agent and tracking tasks of server `srv`
/// of backend `be` added at run time (`add server`); they end when it is deleted.
pub fn spawn_for_server(rt: &Arc<Runtime>, be: usize, srv: usize) {
    let server = &rt.proxies[be].be.servers[srv];
    if let Some(target) = server.track {
        track::follow(rt, be, srv);
        track::ensure_follower(rt, target);
    }
    if server.check.is_some() {
        tokio::spawn(probe::run(rt.clone(), be, srv, Duration::ZERO));
    }
    if server.agent.is_some() {
        tokio::spawn(probe::run_agent(rt.clone(), be, srv, Duration::ZERO));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_cfg::{parse_str, LexCtx};

    fn runtime(text: &str) -> Result<Runtime, Vec<String>> {
        let ctx = LexCtx { env: &|_| None, version: "2.6.12", features: &[] };
        let loaded = parse_str("t.cfg", text, &ctx);
        let cfg = loaded.config.unwrap_or_else(|| panic!("config refused: {:?}", loaded.diags.list));
        crate::build::build(&cfg, 100, 1).map_err(|d| d.into_iter().map(|d| d.message).collect())
    }

    const T: &str = "defaults\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n";

    #[test]
    fn first_checks_are_spread_over_the_smallest_long_interval() {
        let rt = runtime(&format!(
            "{T}backend b\n server s1 127.0.0.1:1 check inter 2s\n server s2 127.0.0.1:2 check inter 4s\n\
             server s3 127.0.0.1:3 check inter 100ms agent-check agent-port 9 agent-inter 1s\n server s4 127.0.0.1:4\n"
        ))
        .expect("builds");
        let got: Vec<(usize, bool, u128)> =
            schedule(&rt).iter().map(|c| (c.srv, c.agent, c.delay.as_millis())).collect();
        // four checks, pace = 1s (the agent's, the smallest of at least 1s), each check's
        // own interval when longer
        assert_eq!(got, [(0, false, 0), (1, false, 1000), (2, false, 500), (2, true, 750)]);
    }

    #[test]
    fn max_spread_checks_caps_the_spread_of_long_intervals() {
        let rt = runtime(&format!(
            "{T}backend b\n server s1 127.0.0.1:1 check inter 10s\n server s2 127.0.0.1:2 check inter 10s\n\
             server s3 127.0.0.1:3 check inter 10s\n server s4 127.0.0.1:4 check inter 10s\n"
        ))
        .expect("builds");
        let spread = |rt: &Runtime| schedule(rt).iter().map(|c| c.delay.as_millis()).collect::<Vec<_>>();
        assert_eq!(spread(&rt), [0, 2500, 5000, 7500]);
        let capped = runtime(&format!(
            "global\n max-spread-checks 2s\n{T}backend b\n server s1 127.0.0.1:1 check inter 10s\n\
             server s2 127.0.0.1:2 check inter 10s\n server s3 127.0.0.1:3 check inter 10s\n\
             server s4 127.0.0.1:4 check inter 10s\n"
        ))
        .expect("builds");
        assert_eq!(spread(&capped), [0, 500, 1000, 1500]);
    }

    #[test]
    fn track_refusals_as_haproxy_words_them() {
        let e = runtime(&format!(
            "{T}backend b\n server s 127.0.0.1:80 track s9\n server s2 127.0.0.1:80\n\
             server s3 127.0.0.1:80 track s2\n server s4 127.0.0.1:80 track x/s\n server s5 127.0.0.1:80 check track s3\n\
             server s6 127.0.0.1:80 track s7\n server s7 127.0.0.1:80 track s6\n"
        ))
        .unwrap_err();
        assert_eq!(
            e,
            [
                "[t.cfg:6] : 'server b/s' : unable to find required server 's9' for tracking.",
                "[t.cfg:8] : 'server b/s3' : unable to use b/s2 for tracking as it does not have any check nor agent enabled.",
                "[t.cfg:9] : 'server b/s4' : unable to find required proxy 'x' for tracking.",
                "[t.cfg:10] : 'server b/s5' : unable to enable checks and tracking at the same time!",
                "[t.cfg:12] : 'server b/s7' : unable to track b/s6 as it belongs to a tracking chain looping back to b/s7.",
            ]
        );
    }

    #[test]
    fn stats_status_as_haproxy_words_it() {
        use crate::server::OperState;
        let rt = runtime(&format!(
            "{T}backend b\n server s1 127.0.0.1:80 check rise 2 fall 3\n server s2 127.0.0.1:80\n\
             server s3 127.0.0.1:80 check disabled\n"
        ))
        .expect("builds");
        let srv = |i: usize| &rt.proxies[0].be.servers[i];
        assert_eq!(status_text(srv(0)), "UP 1/3", "a fresh server is one failure from DOWN");
        srv(0).state.store_health(4);
        assert_eq!(status_text(srv(0)), "UP");
        srv(0).state.store_health(1);
        srv(0).state.set_oper(OperState::Stopped);
        assert_eq!(status_text(srv(0)), "DOWN 1/2");
        srv(0).state.store_health(0);
        assert_eq!(status_text(srv(0)), "DOWN");
        srv(0).state.store_health(4);
        srv(0).state.set_oper(OperState::Stopping);
        assert_eq!(status_text(srv(0)), "NOLB");
        assert_eq!(status_text(srv(1)), "no check");
        assert_eq!(status_text(srv(2)), "MAINT");
        srv(1).state.set_drain(true);
        assert_eq!(status_text(srv(1)), "DRAIN");
    }
}
