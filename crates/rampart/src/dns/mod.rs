//! Name resolution at run time: the `resolvers` sections' nameservers asked without
//! blocking an event loop, and the servers that follow DNS (`resolvers` on a server,
//! `server-template` filled from A/AAAA or SRV records). What the model holds of it
//! (sections, counters, a server's DNS settings) is `dns::types`, read by the stats and
//! the runtime API; the DNS messages themselves are `rampart_proto::dns`'s.
//! HAProxy counterpart: src/resolvers.c, src/dns.c, the resolution callbacks of
//! src/server.c.
//!
//! - `query`: one question to a section's nameservers (UDP/TCP, retries, validation)
//! - `pick`: reading an answer (CNAMEs, which address a server takes, SRV records)
//! - `follow`: the tasks that keep servers' addresses, ports, weights and states in
//!   step with DNS

mod follow;
mod pick;
mod query;
pub mod types;

use std::sync::Arc;

use crate::proxy::Runtime;

pub use follow::set_ip;

/// The address `name` resolves to, for `do-resolve`: the preferred family first, `None`
/// when the name gives none (or the nameservers do not answer). As HAProxy 2.6, a
/// valid answer a server following the same name (with the same preferred family) got
/// less than `hold valid` ago is used without a query; a name no server follows is
/// asked each time (HAProxy frees a resolution with its last requester).
pub async fn resolve_ip(rt: &Arc<Runtime>, res: usize, name: &str, prefer_v6: bool) -> Option<std::net::IpAddr> {
    let pick = |ips: &[std::net::IpAddr]| ips.iter().find(|ip| ip.is_ipv6() == prefer_v6).or(ips.first()).copied();
    if let Some(ips) = rt.resolvers[res].fresh_answer(name, prefer_v6) {
        return pick(&ips[..]);
    }
    let (ips, _) = follow::resolve(rt, res, name, prefer_v6).await.ok()?;
    pick(&ips[..])
}

/// How far apart the first questions of a section's tasks are sent: a thousand names
/// asked in the same instant got a thousand answers at once, more than a socket's
/// default receive buffer holds (answers lost, waited for until `timeout retry`). The
/// questions that follow keep the spacing (each is asked `timeout resolve` after the
/// previous answer).
const FIRST_QUESTIONS_APART: std::time::Duration = std::time::Duration::from_micros(50);

/// Starts, on the calling worker thread (the first one), one task per server name a
/// resolvers section follows: one per server, one per SRV request of a backend, each
/// section's first questions spread `FIRST_QUESTIONS_APART` apart.
pub fn spawn(rt: &Arc<Runtime>) {
    let mut started = vec![0u32; rt.resolvers.len()];
    let mut after = |res: usize| {
        let n = &mut started[res];
        *n += 1;
        FIRST_QUESTIONS_APART * (*n - 1)
    };
    for (b, px) in rt.proxies.iter().enumerate() {
        let mut srv_requests: Vec<(&str, usize)> = Vec::new();
        for (s, srv) in px.be.servers.iter().enumerate() {
            let Some(dns) = srv.dns.as_deref() else { continue };
            let Some(res) = dns.resolvers else { continue };
            if !dns.is_srv() {
                tokio::spawn(follow::run_host(rt.clone(), b, s, after(res)));
            } else if !srv_requests.contains(&(dns.conf_name.as_str(), res)) {
                srv_requests.push((dns.conf_name.as_str(), res));
                tokio::spawn(follow::run_srv(rt.clone(), b, s, after(res)));
            }
        }
    }
}

/// Gives the Lua HTTP client its resolver: the section `httpclient.resolvers.id` names
/// (`default` when not set), preferring the family `httpclient.resolvers.prefer` says
/// (IPv6 when not set, as a `do-resolve` without option). Without such a section, host
/// names are resolved by the system (HAProxy's client then resolves nothing).
pub fn install_httpclient_resolver(rt: &Arc<Runtime>) {
    let Some(settings) = crate::lua::settings() else { return };
    let name = settings.lua.httpclient_resolvers.as_deref().unwrap_or(rampart_cfg::model::DEFAULT_RESOLVERS);
    let Some(res) = rt.resolvers.iter().position(|r| r.conf.name == name) else { return };
    let prefer_v6 = settings.lua.httpclient_prefer_v6.unwrap_or(true);
    let rt = rt.clone();
    crate::lua::set_httpclient_resolver(Box::new(move |host| {
        let rt = rt.clone();
        Box::pin(async move { resolve_ip(&rt, res, &host, prefer_v6).await })
    }));
}
