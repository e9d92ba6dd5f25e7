//! Servers following DNS at run time, one task per server name (on the first worker
//! thread): every `timeout resolve` the name is asked again; a new address is taken as
//! `resolve-prefer`, `resolve-net` and `resolve-opts` say, a name that stops resolving
//! for longer than its `hold` period puts the server in maintenance (drained: the
//! streams it serves finish) until it resolves again. A `server-template` filled from
//! SRV records runs one task for all its slots: each record target takes a free slot
//! with its port and weight, a target missing from the answers for longer than `hold
//! obsolete` frees its slot.
//! HAProxy counterparts: `snr_resolution_cb()`, `snr_update_srv_status()`,
//! `srv_update_addr()` (src/server.c), `resolv_check_response()` (src/resolvers.c).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rampart_proto::dns::{TYPE_A, TYPE_AAAA, TYPE_SRV};

use super::pick::{self, Pick, Prefs};
use super::query::{ask, Failure};
use super::types::{bump, names_changed};
use crate::proxy::{ProxyRt, Runtime};

/// One server whose name a resolvers section keeps resolving, from `first` on.
pub async fn run_host(rt: Arc<Runtime>, be: usize, srv: usize, first: Duration) {
    let Some((res, dns)) = follows(&rt, be, srv) else { return };
    tokio::time::sleep(first).await;
    let mut last_valid = Instant::now();
    let mut recent = Recent::default();
    let mut peers = Peers::default();
    loop {
        if let Some(host) = dns.hostname() {
            match resolve(&rt, res, &host, dns.prefer_v6).await {
                Ok((ips, ns)) => {
                    last_valid = Instant::now();
                    rt.resolvers[res].keep_answer(&host, dns.prefer_v6, &ips);
                    let held = recent.with(&host, &ips, rt.resolvers[res].conf.hold.obsolete, last_valid);
                    let peers = peers.of(&rt.proxies[be], srv, &host);
                    apply_ips(&rt, be, srv, &held, &host, (res, ns), peers);
                }
                Err(f) => {
                    rt.resolvers[res].forget_answer(&host, dns.prefer_v6);
                    recent = Recent::default();
                    failed(&rt, be, srv, res, f, last_valid, &host)
                }
            }
        }
        wait_next(&rt, res, Some(&dns.fqdn_changed)).await;
    }
}

/// The addresses a name's answers gave, with when each was last seen: as HAProxy keeps
/// an answer's records until they are older than `hold obsolete`
/// (`resolv_check_response()`), a server keeps its address while it is among them.
#[derive(Debug, Default)]
struct Recent {
    host: String,
    seen: Vec<(IpAddr, Instant)>,
}

impl Recent {
    /// The addresses of the answer `ips` (got at `now`), then those of earlier answers
    /// seen at most `obsolete` ago.
    fn with(&mut self, host: &str, ips: &[IpAddr], obsolete: Duration, now: Instant) -> Vec<IpAddr> {
        if self.host != host {
            // another name (`set server fqdn`): its own records
            self.host = host.to_owned();
            self.seen.clear();
        }
        self.seen.retain(|(ip, at)| !ips.contains(ip) && now.duration_since(*at) <= obsolete);
        let mut all = ips.to_vec();
        all.extend(self.seen.iter().map(|(ip, _)| *ip));
        self.seen.extend(ips.iter().map(|&ip| (ip, now)));
        all
    }
}

/// The other servers of a backend resolving the same name as one server (whose
/// addresses `prevent-dup-ip` avoids), looked for again only when a host name changed
/// somewhere (`types::names_changed`): a scan of the backend on each answer made
/// following many names cost the square of their number.
#[derive(Debug, Default)]
struct Peers {
    /// The names generation and the host name the list was made for.
    made_for: Option<(u64, Arc<String>)>,
    list: Vec<usize>,
}

impl Peers {
    fn of(&mut self, px: &ProxyRt, srv: usize, host: &Arc<String>) -> &[usize] {
        let generation = names_changed();
        if self.made_for.as_ref().is_none_or(|(g, h)| *g != generation || h != host) {
            self.list = same_name(px, srv, host);
            self.made_for = Some((generation, host.clone()));
        }
        &self.list
    }
}

/// The servers of `px` other than `srv` resolving `host` now, as HAProxy's
/// `snr_check_ip_callback()` compares them.
fn same_name(px: &ProxyRt, srv: usize, host: &str) -> Vec<usize> {
    let resolves = |i: usize| px.be.servers[i].dns.as_deref().and_then(|d| d.hostname());
    (0..px.be.servers.len())
        .filter(|&i| i != srv && resolves(i).is_some_and(|h| h.eq_ignore_ascii_case(host)))
        .collect()
}

/// The section a server follows and its DNS settings, when it does.
fn follows(rt: &Runtime, be: usize, srv: usize) -> Option<(usize, &crate::dns::types::SrvDns)> {
    let dns = rt.proxies[be].be.servers[srv].dns.as_deref()?;
    Some((dns.resolvers?, dns))
}

/// `<resolvers>/<nameserver>`: who changed an address, in the log line.
fn updater(rt: &Runtime, res: usize, ns: usize) -> String {
    let r = &rt.resolvers[res];
    format!("{}/{}", r.conf.name, r.conf.nameservers[ns].name)
}

/// Sleeps until the next resolution is due, `timeout resolve` after the last one ended
/// as in HAProxy 2.6's `process_resolvers()` (`hold valid` does not space them: it is how
/// long an answer is reused by `do-resolve`), or until `set server fqdn` changed the
/// name (`changed`).
async fn wait_next(rt: &Runtime, res: usize, changed: Option<&tokio::sync::Notify>) {
    let tick = rt.resolvers[res].conf.timeout_resolve.max(Duration::from_millis(10));
    match changed {
        Some(n) => {
            let _ = tokio::time::timeout(tick, n.notified()).await;
        }
        None => tokio::time::sleep(tick).await,
    }
}

/// The addresses of `host`: the preferred family asked first, the other one when the
/// first gives no valid answer (as HAProxy falls back from AAAA to A).
pub(super) async fn resolve(
    rt: &Arc<Runtime>,
    res: usize,
    host: &str,
    prefer_v6: bool,
) -> Result<(Vec<IpAddr>, usize), Failure> {
    let order = if prefer_v6 { [TYPE_AAAA, TYPE_A] } else { [TYPE_A, TYPE_AAAA] };
    let a = ask(rt, res, host, &order).await?;
    // (an answer without address was judged, and counted, as a failure in `query`)
    let ips = pick::addresses(&a.response).filter(|ips| !ips.is_empty()).ok_or(Failure::Other)?;
    if pick::via_cname(&a.response) {
        bump(&rt.resolvers[res].counters[a.ns].cname);
    }
    Ok((ips, a.ns))
}

/// A valid answer for server `srv` from nameserver `ns` of section `res`: the address it
/// takes (counted as that nameserver's `update`), and out of maintenance; `peers`: the
/// other servers of the backend resolving the same name.
fn apply_ips(
    rt: &Runtime,
    be: usize,
    srv: usize,
    ips: &[IpAddr],
    host: &str,
    (res, ns): (usize, usize),
    peers: &[usize],
) {
    let px = &rt.proxies[be];
    let server = &px.be.servers[srv];
    let Some(dns) = server.dns.as_deref() else { return };
    let current = Some(server.addr.ip()).filter(|ip| !ip.is_unspecified());
    let taken: Vec<IpAddr> =
        peers.iter().map(|&i| px.be.servers[i].addr.ip()).filter(|ip| !ip.is_unspecified()).collect();
    let in_net = |ip: IpAddr| dns.in_preferred_net(ip);
    let prefs = Prefs { prefer_v6: dns.prefer_v6, in_net: &in_net, allow_dup: dns.allow_dup_ip, taken: &taken };
    match pick::pick(ips, current, &prefs) {
        Pick::Keep => {}
        Pick::New(ip) => {
            bump(&rt.resolvers[res].counters[ns].update);
            set_ip(px, srv, ip, &updater(rt, res, ns));
        }
        Pick::NoIp => {
            crate::health::set_resolution_maint(px, srv, true, "No IP for server ", host);
            return;
        }
    }
    crate::health::set_resolution_maint(px, srv, false, "", host);
}

/// Moves server `srv` to `ip` (its port kept), as HAProxy's `srv_update_addr()`
/// reports it.
pub fn set_ip(px: &ProxyRt, srv: usize, ip: IpAddr, by: &str) {
    let server = &px.be.servers[srv];
    let old = server.addr.get();
    if old.ip() == ip {
        return;
    }
    server.addr.set(SocketAddr::new(ip, old.port()));
    let was = if old.ip().is_unspecified() { "(none)".to_owned() } else { old.ip().to_string() };
    crate::health::notice(px, &format!("{}/{} changed its IP from {was} to {ip} by {by}", px.name, server.name));
}

/// A failed resolution: the server enters maintenance once the last valid answer is
/// older than the failure's `hold` period.
fn failed(rt: &Runtime, be: usize, srv: usize, res: usize, f: Failure, last_valid: Instant, host: &str) {
    if last_valid.elapsed() < hold_of(rt, res, f) {
        return;
    }
    let px = &rt.proxies[be];
    crate::health::set_resolution_maint(px, srv, true, f.reason(), host);
}

fn hold_of(rt: &Runtime, res: usize, f: Failure) -> Duration {
    let h = &rt.resolvers[res].conf.hold;
    match f {
        Failure::Nx => h.nx,
        Failure::Refused => h.refused,
        Failure::Timeout => h.timeout,
        Failure::Other => h.other,
    }
}

// === SRV ===

/// One slot of a `server-template` filled from SRV records.
struct Slot {
    srv: usize,
    /// The record it holds (target, port), and when the record was last seen.
    holds: Option<(String, u16, Instant)>,
}

/// The servers of backend `be` resolving the SRV request of server `first` (a
/// `server-template` and any server naming the same request), from `start` on.
pub async fn run_srv(rt: Arc<Runtime>, be: usize, first: usize, start: Duration) {
    let Some((res, dns)) = follows(&rt, be, first) else { return };
    tokio::time::sleep(start).await;
    let name = dns.conf_name.clone();
    let px = &rt.proxies[be];
    let mut slots: Vec<Slot> = (0..px.be.servers.len())
        .filter(|&i| px.be.servers[i].dns.as_deref().is_some_and(|d| d.conf_name == name && d.resolvers == Some(res)))
        .map(|srv| Slot { srv, holds: restored(px, srv) })
        .collect();
    let mut last_valid = Instant::now();
    loop {
        match ask(&rt, res, &name, &[TYPE_SRV]).await {
            Ok(a) => {
                last_valid = Instant::now();
                let entries = pick::srv_entries(&a.response, dns.prefer_v6);
                fill_slots(&rt, be, res, &mut slots, &entries).await;
            }
            Err(f) if last_valid.elapsed() >= hold_of(&rt, res, f) => {
                for slot in &mut slots {
                    free_slot(&rt.proxies[be], slot);
                }
            }
            Err(_) => {}
        }
        wait_next(&rt, res, None).await;
    }
}

/// The record a slot holds at startup: the target and port `server-state-file` gave it
/// (HAProxy puts the server in the SRV request's tree of named servers, so that the
/// same target finds it again).
fn restored(px: &ProxyRt, srv: usize) -> Option<(String, u16, Instant)> {
    let server = &px.be.servers[srv];
    let host = server.dns.as_deref()?.hostname()?;
    Some((host.to_string(), server.addr.port(), Instant::now()))
}

/// Applies the records of one SRV answer to the slots.
async fn fill_slots(rt: &Arc<Runtime>, be: usize, res: usize, slots: &mut [Slot], entries: &[pick::SrvEntry]) {
    let px = &rt.proxies[be];
    let now = Instant::now();
    let obsolete = rt.resolvers[res].conf.hold.obsolete;
    // records still there refresh their slot; slots whose record is gone for longer
    // than `hold obsolete` are freed
    for slot in slots.iter_mut() {
        let Some((target, port, seen)) = &mut slot.holds else { continue };
        if entries.iter().any(|e| &e.target == target && e.port == *port) {
            *seen = now;
        } else if seen.elapsed() >= obsolete {
            free_slot(px, slot);
        }
    }
    for e in entries {
        let held = slots.iter().position(|s| s.holds.as_ref().is_some_and(|(t, p, _)| t == &e.target && *p == e.port));
        let Some(i) = held.or_else(|| slots.iter().position(|s| s.holds.is_none())) else { continue };
        if held.is_none() {
            take_slot(px, &mut slots[i], e, now);
        }
        fill_slot(rt, be, res, slots[i].srv, e).await;
    }
}

/// A free slot takes record `e`: its name and port.
fn take_slot(px: &ProxyRt, slot: &mut Slot, e: &pick::SrvEntry, now: Instant) {
    let server = &px.be.servers[slot.srv];
    slot.holds = Some((e.target.clone(), e.port, now));
    if let Some(dns) = server.dns.as_deref() {
        let old = dns.hostname().map_or_else(|| "(null)".to_owned(), |h| h.to_string());
        dns.set_hostname(Some(e.target.clone()));
        dns.fqdn_set.store(true, std::sync::atomic::Ordering::Relaxed);
        let msg = format!("{}/{} changed its FQDN from {old} to {} by 'SRV record'", px.name, server.name, e.target);
        crate::health::log_only(px, &msg);
    }
    let a = server.addr.get();
    server.addr.set(SocketAddr::new(a.ip(), e.port));
}

/// Gives the slot of `srv` the address and weight of record `e`.
async fn fill_slot(rt: &Arc<Runtime>, be: usize, res: usize, srv: usize, e: &pick::SrvEntry) {
    let px = &rt.proxies[be];
    let server = &px.be.servers[srv];
    let prefer_v6 = server.dns.as_deref().is_some_and(|d| d.prefer_v6);
    let a = server.addr.get();
    if a.port() != e.port {
        server.addr.set(SocketAddr::new(a.ip(), e.port));
    }
    match e.addr {
        Some(ip) => {
            set_ip(px, srv, ip, "DNS additional record");
            crate::health::set_resolution_maint(px, srv, false, "", &e.target);
        }
        None => match resolve(rt, res, &e.target, prefer_v6).await {
            Ok((ips, ns)) => {
                rt.resolvers[res].keep_answer(&e.target, prefer_v6, &ips);
                apply_ips(rt, be, srv, &ips, &e.target, (res, ns), &same_name(px, srv, &e.target))
            }
            Err(_) => rt.resolvers[res].forget_answer(&e.target, prefer_v6),
        },
    }
    let ignore = server.dns.as_deref().is_some_and(|d| d.ignore_weight);
    let w = pick::srv_weight(e.weight);
    if !ignore && server.state.eweight() != w {
        crate::health::set_weight(px, srv, w);
    }
}

/// Frees a slot: maintenance ("entry removed from SRV record"), no name, no address.
fn free_slot(px: &ProxyRt, slot: &mut Slot) {
    let Some((target, _, _)) = slot.holds.take() else { return };
    let server = &px.be.servers[slot.srv];
    crate::health::set_resolution_maint(px, slot.srv, true, "entry removed from SRV record", &target);
    if let Some(dns) = server.dns.as_deref() {
        dns.set_hostname(None);
    }
    // and no port, as HAProxy's `resolv_srvrq_cleanup_srv()` (`show servers state`)
    let none = if server.addr.get().is_ipv4() { IpAddr::from([0, 0, 0, 0]) } else { IpAddr::from([0u16; 8]) };
    server.addr.set(SocketAddr::new(none, 0));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_kept_until_obsolete() {
        let (a, b) = (IpAddr::from([10, 0, 0, 1]), IpAddr::from([10, 0, 0, 2]));
        let t0 = Instant::now();
        let mut r = Recent::default();
        assert_eq!(r.with("x", &[a], Duration::from_secs(5), t0), [a]);
        // `a` left the answer: still there within `hold obsolete`
        assert_eq!(r.with("x", &[b], Duration::from_secs(5), t0 + Duration::from_secs(3)), [b, a]);
        assert_eq!(r.with("x", &[b], Duration::from_secs(5), t0 + Duration::from_secs(5)), [b, a]);
        assert_eq!(r.with("x", &[b], Duration::from_secs(5), t0 + Duration::from_secs(6)), [b]);
        // `hold obsolete 0s` (the default): gone at once
        let mut r = Recent::default();
        r.with("x", &[a], Duration::ZERO, t0);
        assert_eq!(r.with("x", &[b], Duration::ZERO, t0 + Duration::from_millis(1)), [b]);
        // another name starts over
        assert_eq!(r.with("y", &[a], Duration::from_secs(5), t0 + Duration::from_millis(2)), [a]);
    }
}
