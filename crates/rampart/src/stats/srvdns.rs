//! `set server <b>/<s> fqdn <name>` and `set server <b>/<s> addr <ip> [port <port>]`:
//! a server's name or address changed from the runtime API. Answers are HAProxy 2.6's.
//! HAProxy counterparts: `srv_update_fqdn()`, `srv_update_addr_port()` and their CLI
//! handler (src/server.c).

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;

use crate::proxy::ProxyRt;

/// HAProxy's `DNS_MAX_NAME_SIZE`.
const MAX_NAME: usize = 255;

/// `set server <b>/<s> fqdn <name>`: the name the server's resolvers resolve from now on.
pub fn set_fqdn(px: &ProxyRt, i: usize, value: Option<&str>) -> String {
    let srv = &px.be.servers[i];
    let Some(name) = value.filter(|v| !v.is_empty()) else {
        return "set server <b>/<s> fqdn requires a FQDN.\n".to_owned();
    };
    let Some(dns) = srv.dns.as_deref().filter(|d| d.resolvers.is_some()) else {
        return "set server <b>/<s> fqdn failed because no resolution is configured.\n".to_owned();
    };
    if dns.is_srv() {
        return "set server <b>/<s> fqdn failed because SRV resolution is configured.\n".to_owned();
    }
    let by = " by 'stats socket command'\n";
    let current = dns.hostname();
    if current.as_deref().is_some_and(|c| c == name) {
        return format!("no need to change the FDQN{by}");
    }
    let valid = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_');
    if name.len() > MAX_NAME || !valid {
        return format!("invalid fqdn '{name}'{by}");
    }
    let old = current.map_or_else(|| "(null)".to_owned(), |c| c.to_string());
    dns.set_hostname(Some(name.to_owned()));
    dns.fqdn_set.store(true, Ordering::Relaxed);
    dns.fqdn_changed.notify_one();
    format!("{}/{} changed its FQDN from {old} to {name}{by}", px.name, srv.name)
}

/// `set server <b>/<s> addr <ip> [port <port>]`: the server's address (and port), out of
/// the maintenance for want of an address. `updater` names who asked in the message
/// (`stats socket command`, `Lua script`), as HAProxy's `srv_update_addr_port()`.
pub fn set_addr(
    px: &ProxyRt,
    i: usize,
    addr: Option<&str>,
    kw: Option<&str>,
    port: Option<&str>,
    updater: &str,
) -> String {
    let srv = &px.be.servers[i];
    let Some(text) = addr.filter(|a| !a.is_empty()) else {
        return "set server <b>/<s> addr requires an address and optionally a port.\n".to_owned();
    };
    let by = &format!(" by '{updater}'\n");
    let Ok(ip) = text.parse::<IpAddr>() else { return format!("Invalid addr '{text}'{by}") };
    if srv.unix.is_some() {
        return format!(
            "Update for the current server address family is only supported through configuration file{by}"
        );
    }
    let port = if kw == Some("port") { port } else { None };
    if port.is_some_and(|p| p.starts_with(['+', '-'])) || (port.is_some() && srv.port_offset.is_some()) {
        return "'set server <srv> addr ... port' with a port map is not supported yet.\n".to_owned();
    }
    let cur = srv.addr.get();
    let mut msg = if cur.ip() == ip {
        "no need to change the addr".to_owned()
    } else {
        format!("IP changed from '{}' to '{text}'", cur.ip())
    };
    let mut new = SocketAddr::new(ip, cur.port());
    if let Some(p) = port {
        let digits = p.bytes().take_while(u8::is_ascii_digit).count();
        let Ok(n) = p[..digits].parse::<u16>() else {
            return format!("{msg}, problem converting port '{p}' to an int{by}");
        };
        if n == cur.port() {
            msg.push_str(", no need to change the port");
        } else {
            msg.push_str(&format!(", port changed from '{}' to '{n}'", cur.port()));
            new.set_port(n);
        }
    }
    if new != cur {
        srv.addr.set(new);
    }
    let host = srv.dns.as_deref().and_then(|d| d.hostname()).map_or_else(String::new, |h| h.to_string());
    crate::health::set_resolution_maint(px, i, false, "", &host);
    format!("{msg}{by}")
}
