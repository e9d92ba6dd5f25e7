//! One server's check task and one probe: the backend's check rules
//! (`check::tcpcheck`) run against the server with its settings, a connect taking at
//! most `inter` (or `timeout connect` when `timeout check` is set, whichever is
//! shorter), the rest `timeout check` (else what is left of `inter`), reading at most
//! `tune.bufsize` bytes. Nothing here blocks the thread.
//! HAProxy counterparts: `process_chk_conn()` (src/check.c), `tcpcheck_main()`
//! (src/tcpcheck.c).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::report;
use crate::check::agent::{Admin, AgentReply, AgentResult};
use crate::check::tcpcheck::Env;
use crate::check::CheckStatus;
use crate::check::Health;
use crate::check::Outcome;
use crate::proxy::{ProxyRt, Runtime, ServerRt};
use crate::server::OperState;

/// Runs the checks of server `srv` of backend `be` until the process stops, the first
/// one after `first`.
pub(super) async fn run(rt: Arc<Runtime>, be: usize, srv: usize, first: Duration) {
    let px = &rt.proxies[be];
    let server = &px.be.servers[srv];
    let Some(chk) = server.check.as_deref() else { return };
    let st = &server.state;
    let mut health = Health::new(chk.rise, chk.fall);
    let mut rng = Jitter::new(be, srv);
    let mut ramp = Ramp::default();
    tokio::time::sleep(first).await;
    while !rt.global.is_stopping() && !st.is_deleted() {
        // maintenance pauses the checks, as `disable health` stops them
        if st.is_maint() || !st.check_enabled(false) {
            tokio::time::sleep(chk.inter).await;
            continue;
        }
        let start = Instant::now();
        health.health = st.health_or(chk.rise);
        let out = probe(&rt, be, srv, &health).await;
        // the passive checks may have moved the counter meanwhile
        health.health = st.health_or(chk.rise);
        let was_down = st.oper() == OperState::Stopped;
        report::apply(px, srv, &mut health, out, start.elapsed(), chk.log_health_checks, false);
        st.store_health(health.health);
        if let Some(ss) = chk.slowstart {
            ramp.update(px, srv, was_down, ss);
        }
        let inter = health.interval(chk.inter, chk.fastinter, chk.downinter);
        let mut next = Instant::now() + rng.spread(inter, chk.spread);
        // `observe` may ask for the next check sooner (`fastinter`); a slow start
        // raises the weight on its own steps
        loop {
            let wake = ramp.next_step().map_or(next, |s| s.min(next));
            tokio::select! {
                () = tokio::time::sleep_until(wake) => {
                    if let Some(ss) = chk.slowstart {
                        ramp.step(px, srv, ss);
                    }
                    if Instant::now() >= next {
                        break;
                    }
                }
                () = st.check_wake.notified() => {
                    next = next.min(Instant::now() + chk.fastinter.unwrap_or(chk.inter));
                }
            }
        }
    }
}

/// A `slowstart` in progress: the weight goes from 1 to the configured one, raised
/// every MAX(1s, slowstart / 20) (HAProxy's warmup task).
#[derive(Debug, Default)]
struct Ramp {
    since: Option<Instant>,
    next: Option<Instant>,
}

impl Ramp {
    /// Starts a ramp when the server just came UP, stops it when it went DOWN.
    fn update(&mut self, px: &ProxyRt, srv: usize, was_down: bool, ss: Duration) {
        let st = &px.be.servers[srv].state;
        if was_down && st.oper() == OperState::Running {
            self.since = Some(Instant::now());
            self.step(px, srv, ss);
        } else if st.oper() == OperState::Stopped && self.since.take().is_some() {
            self.next = None;
            report::change_weight(px, srv, st.uweight());
        }
    }

    fn next_step(&self) -> Option<Instant> {
        self.next
    }

    /// Sets the weight for the time elapsed; ends the ramp at full weight.
    fn step(&mut self, px: &ProxyRt, srv: usize, ss: Duration) {
        let Some(since) = self.since else { return };
        let full = px.be.servers[srv].state.uweight();
        let elapsed = since.elapsed();
        if elapsed >= ss || full == 0 {
            report::change_weight(px, srv, full);
            self.since = None;
            self.next = None;
            return;
        }
        let w = (u128::from(full) * elapsed.as_millis()).div_ceil(ss.as_millis().max(1));
        report::change_weight(px, srv, (w as u32).clamp(1, full));
        self.next = Some(Instant::now() + (ss / 20).max(Duration::from_secs(1)));
    }
}

/// Runs the agent checks of server `srv` of backend `be` until the process stops.
pub(super) async fn run_agent(rt: Arc<Runtime>, be: usize, srv: usize, first: Duration) {
    let px = &rt.proxies[be];
    let server = &px.be.servers[srv];
    let Some(agent) = server.agent.as_deref() else { return };
    let log_hc = agent.log_health_checks;
    // HAProxy's agent rise and fall are 1: one answer decides
    let mut health = Health::new(1, 1);
    let connect = px.timeouts.connect.unwrap_or(agent.inter);
    tokio::time::sleep(first).await;
    while !rt.global.is_stopping() && !server.state.is_deleted() {
        if !server.state.check_enabled(true) {
            tokio::time::sleep(agent.inter).await;
            continue;
        }
        let start = Instant::now();
        let (result, conn) = crate::check::agent::probe(agent, connect, agent.inter, rt.bufsize).await;
        match result {
            AgentResult::Failed(out) => report::apply(px, srv, &mut health, out, start.elapsed(), log_hc, true),
            AgentResult::Incomplete => {}
            AgentResult::Reply(reply) => apply_agent_reply(px, server, srv, &mut health, &reply, start, log_hc),
        }
        drop(conn);
        tokio::time::sleep(agent.inter).await;
    }
}

/// Applies an agent's line: administrative state, weight, then health.
fn apply_agent_reply(
    px: &ProxyRt,
    server: &ServerRt,
    srv: usize,
    health: &mut Health,
    r: &AgentReply,
    start: Instant,
    log_hc: bool,
) {
    let st = &server.state;
    // HAProxy's order: weight, maxconn, administrative state, health
    if let Some(w) = r.weight(st.uweight()) {
        report::change_weight(px, srv, w);
    }
    if let Some(m) = r.maxconn {
        // streams queued for the new slots take them at their queue's next recheck
        server.maxconn.store(m, std::sync::atomic::Ordering::Relaxed);
    }
    // the same changes, with the same messages, as the runtime API's; as HAProxy's
    // srv_adm_set_drain/maint/ready(), each clears the other flag
    match r.admin {
        Some(Admin::Drain) => {
            super::admin::set_drain(px, srv, true);
            super::admin::set_maint(px, srv, false);
        }
        Some(Admin::Maint) => {
            super::admin::set_maint(px, srv, true);
            super::admin::set_drain(px, srv, false);
        }
        Some(Admin::Ready) => {
            super::admin::set_drain(px, srv, false);
            super::admin::set_maint(px, srv, false);
        }
        None => {}
    }
    if let Some(out) = r.outcome() {
        health.health = if out.status == CheckStatus::L7Ok { 1 } else { 0 };
        report::apply(px, srv, health, out, start.elapsed(), log_hc, true);
    }
}

/// One check of `server`: its backend's rules, within `inter` (HAProxy's timeouts, see
/// [`Env`]).
async fn probe(rt: &Runtime, be: usize, srv: usize, health: &Health) -> Outcome {
    let px = &rt.proxies[be];
    let server = &px.be.servers[srv];
    let Some(chk) = server.check.as_deref() else { return Outcome::new(CheckStatus::L4Ok, "") };
    // COMPAT: as HAProxy, a connect may take `inter`, or `timeout connect` when shorter
    // and `timeout check` is set.
    let connect = match (chk.timeout_check, px.timeouts.connect) {
        (Some(_), Some(c)) => c.min(chk.inter),
        _ => chk.inter,
    };
    if let Some(cmd) = &chk.external {
        let target = super::external::Target {
            px,
            server,
            proxy_id: rt.stats.iids.get(be).copied().unwrap_or(0),
            server_id: server.stats.sid,
        };
        return super::external::probe(cmd, &target, connect).await;
    }
    let state = (chk.rules.is_http() && chk.rules.send_state).then(|| server_state_header(px, server, health));
    let env = Env {
        host: rt,
        be,
        srv,
        addr: probe_addr(server, chk),
        start: Instant::now(),
        inter: chk.inter,
        connect,
        check: chk.timeout_check,
        bufsize: rt.bufsize,
        proxy_header: chk.proxy_header.as_deref(),
        send_proxy: &chk.rule_proxy_header,
        socks4: chk.socks4,
        srv_socks4: chk.srv_socks4,
        tls: &chk.tls,
        running: server.state.oper() != OperState::Stopped,
        state: state.as_deref(),
        h2: chk.h2,
    };
    chk.rules.run(&env).await
}

/// Where a check connects: as configured, but for a server that follows DNS without
/// its own check `addr`, its current address (and port, without a check `port`).
fn probe_addr(server: &ServerRt, chk: &crate::check::CheckRt) -> std::net::SocketAddr {
    if server.dns.is_none() || chk.conf_addr.is_some() {
        return chk.addr;
    }
    let now = server.addr.get();
    let port = if chk.conf_port != 0 { chk.addr.port() } else { now.port() };
    std::net::SocketAddr::new(now.ip(), port)
}

/// HAProxy's `X-Haproxy-Server-State` value (`httpchk_build_status_header()`).
fn server_state_header(px: &ProxyRt, server: &ServerRt, h: &Health) -> String {
    let st = &server.state;
    let oper = st.oper();
    let state = if oper != OperState::Stopped {
        let base = if oper == OperState::Stopping { "NOLB" } else { "UP" };
        if h.health == h.rise + h.fall - 1 {
            base.to_owned()
        } else {
            format!("{base} {}/{}", h.health.saturating_sub(h.rise) + 1, h.fall)
        }
    } else if h.health > 0 {
        format!("DOWN {}/{}", h.health, h.rise)
    } else {
        "DOWN".to_owned()
    };
    let servers = &px.be.servers;
    let total: u32 =
        servers.iter().filter(|s| s.state.is_up() && s.backup == server.backup).map(|s| s.state.eweight()).sum();
    let be_conns: u32 = servers.iter().map(|s| s.cur_conns.load(Ordering::Relaxed)).sum();
    let node = nix::unistd::gethostname().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default();
    format!(
        "{state}; address={}; port={}; name={}/{}; node={node}; weight={}/{total}; scur={}/{be_conns}; qcur=0",
        server.addr.ip(),
        server.addr.port(),
        px.name,
        server.name,
        st.eweight(),
        server.cur_conns.load(Ordering::Relaxed),
    )
}

/// A small xorshift generator for `spread-checks` (no need for a strong one).
struct Jitter(u64);

impl Jitter {
    fn new(be: usize, srv: usize) -> Jitter {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        Jitter(u64::from(nanos) ^ ((be as u64) << 32) ^ (srv as u64) ^ 0x9e37_79b9_7f4a_7c15)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `inter` moved by a random amount within +/- `percent`% (HAProxy's
    /// `spread-checks`).
    fn spread(&mut self, inter: Duration, percent: u32) -> Duration {
        if percent == 0 {
            return inter;
        }
        let range = inter.as_micros() as u64 * u64::from(percent) / 100;
        let offset = self.next() % (2 * range + 1);
        Duration::from_micros((inter.as_micros() as u64 + offset).saturating_sub(range))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_stays_within_the_percentage() {
        let mut j = Jitter::new(1, 2);
        let inter = Duration::from_millis(1000);
        assert_eq!(j.spread(inter, 0), inter);
        let mut seen = (Duration::MAX, Duration::ZERO);
        for _ in 0..1000 {
            let d = j.spread(inter, 10);
            assert!(d >= Duration::from_millis(900) && d <= Duration::from_millis(1100), "{d:?}");
            seen = (seen.0.min(d), seen.1.max(d));
        }
        assert!(seen.0 < Duration::from_millis(950) && seen.1 > Duration::from_millis(1050), "{seen:?}");
    }
}
