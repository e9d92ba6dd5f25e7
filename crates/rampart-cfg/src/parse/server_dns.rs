//! What servers ask of DNS: the `resolvers`, `resolve-prefer`, `resolve-net`,
//! `resolve-opts` and `init-addr` options, the `server-template` range, and the
//! startup resolution of a server's name as `init-addr` orders it.
//!
//! HAProxy counterparts: `srv_parse_resolvers()`, `srv_parse_resolve_net()`,
//! `srv_parse_resolve_opts()`, `srv_parse_resolve_prefer()`, `srv_parse_init_addr()`,
//! `_srv_parse_tmpl_range()` and `srv_iterate_initaddr()` (src/server.c).

use std::net::{IpAddr, SocketAddr};

use crate::model::{InitAddr, Net, ServerAddr, ServerFqdn, ServerResolve};

use super::ctx::Ctx;
use super::value::atol;

/// HAProxy's `SRV_MAX_PREF_NET`.
const MAX_PREF_NET: usize = 5;

/// `<n>` (1 to n) or `<low>-<high>`, read with atoi() as HAProxy does.
pub(super) fn template_range(text: &str) -> Option<(u32, u32)> {
    // atoi() of the whole text, then of what follows its first '-', as HAProxy
    let (low, high) = match text.split_once('-') {
        Some((_, h)) => (atol(text), atol(h)),
        None => (1, atol(text)),
    };
    // as HAProxy, a low bound of 0 is accepted (a server named `<prefix>0`)
    if low < 0 || high < low || high > i64::from(i32::MAX) {
        return None;
    }
    Some((low as u32, high as u32))
}

/// Applies a DNS option of a server line; `None` when `word` is not one.
pub(super) fn apply_option(word: &str, value: &str, r: &mut ServerResolve) -> Option<Result<(), String>> {
    let result = match word {
        "resolvers" => {
            r.resolvers = Some(value.to_owned());
            Ok(())
        }
        "resolve-prefer" if matches!(value, "ipv4" | "ipv6") => {
            r.prefer_v6 = value == "ipv6";
            Ok(())
        }
        "resolve-prefer" => Err(format!("'{word}' expects either ipv4 or ipv6 as argument.")),
        "resolve-net" => parse_nets(word, value, &mut r.nets),
        "resolve-opts" => parse_opts(word, value, r),
        "init-addr" => parse_init_addr(word, value).map(|m| r.init_addr = m),
        _ => return None,
    };
    Some(result)
}

fn parse_nets(word: &str, value: &str, nets: &mut Vec<Net>) -> Result<(), String> {
    if value.is_empty() {
        return Err(format!("'{word}' expects a list of networks."));
    }
    for item in value.split(',').filter(|i| !i.is_empty()) {
        if nets.len() >= MAX_PREF_NET {
            return Err(format!("'{word}' exceed {MAX_PREF_NET} networks."));
        }
        nets.push(parse_net(item).ok_or_else(|| format!("'{word}' invalid network '{item}'."))?);
    }
    Ok(())
}

/// `<addr>[/<prefix>]`: IPv4 also with a dotted mask, IPv6 with a length.
fn parse_net(text: &str) -> Option<Net> {
    let (addr, mask) = match text.split_once('/') {
        Some((a, m)) => (a, Some(m)),
        None => (text, None),
    };
    let addr: IpAddr = addr.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let prefix = match mask {
        None => max,
        Some(m) => match m.parse::<u8>() {
            Ok(p) if p <= max => p,
            _ if addr.is_ipv4() => {
                let bits = u32::from(m.parse::<std::net::Ipv4Addr>().ok()?);
                let ones = bits.leading_ones();
                (bits.checked_shl(ones).unwrap_or(0) == 0).then_some(ones as u8)?
            }
            _ => return None,
        },
    };
    Some(Net { addr, prefix })
}

fn parse_opts(word: &str, value: &str, r: &mut ServerResolve) -> Result<(), String> {
    for opt in value.split(',').filter(|o| !o.is_empty()) {
        match opt {
            "allow-dup-ip" => r.allow_dup_ip = true,
            "ignore-weight" => r.ignore_weight = true,
            "prevent-dup-ip" => r.allow_dup_ip = false,
            _ => {
                return Err(format!(
                    "'{word}' : unknown resolve-opts option '{opt}', supported methods are 'allow-dup-ip', \
                     'ignore-weight', and 'prevent-dup-ip'."
                ))
            }
        }
    }
    Ok(())
}

fn parse_init_addr(word: &str, value: &str) -> Result<Vec<InitAddr>, String> {
    let mut out: Vec<InitAddr> = Vec::new();
    for m in value.split(',').filter(|m| !m.is_empty()) {
        let method = match m {
            "libc" => InitAddr::Libc,
            "last" => InitAddr::Last,
            "none" => InitAddr::None,
            _ => match m.parse::<IpAddr>() {
                Ok(ip) => {
                    if out.iter().any(|x| matches!(x, InitAddr::Ip(_))) {
                        return Err(format!("'{word}' : initial address already specified, cannot add '{m}'."));
                    }
                    InitAddr::Ip(ip)
                }
                Err(_) => {
                    return Err(format!(
                        "'{word}' : unknown init-addr method '{m}', supported methods are 'libc', 'last', 'none'."
                    ))
                }
            },
        };
        // HAProxy keeps each method once, in at most 4 slots
        if out.iter().any(|x| std::mem::discriminant(x) == std::mem::discriminant(&method)) || out.len() >= 4 {
            return Err(format!("'{word}' : too many init-addr methods when trying to add '{m}'"));
        }
        out.push(method);
    }
    Ok(out)
}

/// The methods tried at startup: as written, else `last,libc`, plus `none` when the
/// server has `resolvers` (it then never fails the startup).
pub(super) fn init_methods(r: &ServerResolve) -> Vec<InitAddr> {
    if !r.init_addr.is_empty() {
        return r.init_addr.clone();
    }
    let mut m = vec![InitAddr::Last, InitAddr::Libc];
    if r.resolvers.is_some() {
        m.push(InitAddr::None);
    }
    m
}

/// Resolves a server's name at startup as `init-addr` says: the address, its port
/// offset and its name (`unresolved` when it starts without address, in maintenance);
/// `None` when no method gave an address (reported).
pub(super) fn init_addr(
    cx: &mut Ctx<'_>,
    ctx: &str,
    addr: ServerAddr,
    offset: Option<i32>,
    mut fqdn: ServerFqdn,
    r: &ServerResolve,
) -> Option<(ServerAddr, Option<i32>, Option<ServerFqdn>)> {
    let ServerAddr::Inet(sa) = addr else { return Some((addr, offset, Some(fqdn))) };
    // an SRV record gives the port: the server's own is fixed, not mapped
    let offset = if fqdn.is_srv() { None } else { offset };
    let mut failed = false;
    for m in init_methods(r) {
        let ip = match m {
            // rampart keeps no server state across restarts yet: no last address
            InitAddr::Last => continue,
            InitAddr::Libc if fqdn.is_srv() => None,
            InitAddr::Libc => super::addr::resolve_libc(&fqdn.name),
            InitAddr::Ip(ip) => {
                if failed {
                    cx.warning(format!(
                        "{ctx}could not resolve address '{}', falling back to configured address.",
                        fqdn.name
                    ));
                }
                Some(ip)
            }
            InitAddr::None => {
                if failed {
                    cx.warning(format!("{ctx}could not resolve address '{}', disabling server.", fqdn.name));
                }
                fqdn.unresolved = true;
                return Some((ServerAddr::Inet(sa), offset, Some(fqdn)));
            }
        };
        match ip {
            Some(ip) => return Some((ServerAddr::Inet(SocketAddr::new(ip, sa.port())), offset, Some(fqdn))),
            None => failed = true,
        }
    }
    let what = if failed { "could not resolve address" } else { "no method found to resolve address" };
    cx.alert(format!("{ctx}{what} '{}'.", fqdn.name));
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::tests::{alerts, parse_ok, warnings};

    #[test]
    fn ranges_as_haproxy_reads_them() {
        assert_eq!(template_range("3"), Some((1, 3)));
        assert_eq!(template_range("2-5"), Some((2, 5)));
        assert_eq!(template_range("5-2"), None);
        assert_eq!(template_range("x"), None);
        assert_eq!(template_range("0-1"), Some((0, 1)));
        assert_eq!(template_range("-1-2"), None);
    }

    #[test]
    fn networks() {
        assert_eq!(parse_net("10.0.0.0/8"), Some(Net { addr: "10.0.0.0".parse().unwrap(), prefix: 8 }));
        assert_eq!(parse_net("10.0.0.0/255.255.0.0").map(|n| n.prefix), Some(16));
        assert_eq!(parse_net("10.0.0.0/255.0.255.0"), None);
        assert_eq!(parse_net("fd00::/8").map(|n| n.prefix), Some(8));
        assert_eq!(parse_net("fd00::/129"), None);
        let n = parse_net("10.1.0.0/16").unwrap();
        assert!(n.contains("10.1.2.3".parse().unwrap()) && !n.contains("10.2.0.1".parse().unwrap()));
        assert!(!n.contains("::1".parse().unwrap()));
    }

    #[test]
    fn server_dns_options() {
        let cfg = parse_ok(
            "resolvers dns\n nameserver a 127.0.0.1:53\nbackend b\n default-server resolvers dns init-addr none\n\
             server s1 127.0.0.1:80 resolve-prefer ipv4 resolve-net 10.0.0.0/8,fd00::/8 resolve-opts allow-dup-ip,ignore-weight\n\
             server s2 rampart-surely-unknown.invalid:8080\n\
             server s3 rampart-surely-unknown.invalid:8080 init-addr libc,10.1.2.3\n",
        );
        let s = &cfg.proxies[0].servers;
        let r = &s[0].resolve;
        assert_eq!((r.resolvers.as_deref(), r.prefer_v6, r.nets.len()), (Some("dns"), false, 2));
        assert!(r.allow_dup_ip && r.ignore_weight);
        assert_eq!(r.init_addr, [InitAddr::None]);
        assert_eq!(s[0].fqdn, None);
        let f = s[1].fqdn.as_ref().unwrap();
        assert_eq!((f.name.as_str(), f.unresolved), ("rampart-surely-unknown.invalid", true));
        assert_eq!(s[1].addr, ServerAddr::Inet("0.0.0.0:8080".parse().unwrap()));
        assert_eq!(s[2].addr, ServerAddr::Inet("10.1.2.3:8080".parse().unwrap()));
        assert!(!s[2].fqdn.as_ref().unwrap().unresolved);
        assert_eq!(
            warnings("backend b\n server s x.invalid:80 init-addr libc,none\n"),
            ["'server b/s' : could not resolve address 'x.invalid', disabling server."]
        );
    }

    #[test]
    fn server_dns_errors() {
        let a = |opts: &str| alerts(&format!("backend b\n server s 127.0.0.1:80 {opts}\n"));
        assert_eq!(
            a("resolve-prefer ipv5"),
            ["'server b/s' : 'resolve-prefer' expects either ipv4 or ipv6 as argument.."]
        );
        assert_eq!(a("resolve-net 10.0.0.0/33"), ["'server b/s' : 'resolve-net' invalid network '10.0.0.0/33'.."]);
        assert_eq!(
            a("resolve-opts foo"),
            ["'server b/s' : 'resolve-opts' : unknown resolve-opts option 'foo', supported methods are 'allow-dup-ip', 'ignore-weight', and 'prevent-dup-ip'.."]
        );
        assert_eq!(
            a("init-addr libc,bar"),
            ["'server b/s' : 'init-addr' : unknown init-addr method 'bar', supported methods are 'libc', 'last', 'none'.."]
        );
        assert_eq!(
            a("init-addr libc,libc"),
            ["'server b/s' : 'init-addr' : too many init-addr methods when trying to add 'libc'."]
        );
        assert_eq!(
            alerts("backend b\n server s x.invalid:80\n"),
            ["'server b/s' : could not resolve address 'x.invalid'."]
        );
        assert_eq!(
            alerts("backend b\n server s x.invalid:80 init-addr last\n"),
            ["'server b/s' : no method found to resolve address 'x.invalid'."]
        );
    }

    #[test]
    fn templates() {
        let cfg = parse_ok(
            "resolvers dns\n nameserver a 127.0.0.1:53\nbackend b\n\
             server-template web 3 _http._tcp.svc.local resolvers dns init-addr none weight 5\n\
             server-template app 4-5 app.invalid:8080 resolvers dns\n",
        );
        let s = &cfg.proxies[0].servers;
        let names: Vec<_> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["web1", "web2", "web3", "app4", "app5"]);
        let f = s[1].fqdn.as_ref().unwrap();
        assert_eq!(
            (f.name.as_str(), f.unresolved, f.template, f.is_srv()),
            ("_http._tcp.svc.local", true, Some(2), true)
        );
        assert_eq!((s[1].weight, s[1].port_offset), (5, None));
        assert_eq!(s[4].addr, ServerAddr::Inet("0.0.0.0:8080".parse().unwrap()));
        assert_eq!(
            alerts("backend b\n server-template w x y.invalid\n"),
            ["Wrong server-template number or range arg 'x'."]
        );
        assert_eq!(
            alerts("backend b\n server-template w 2\n"),
            ["'server-template' expects <prefix> <nb | range> <addr>[:<port>] as arguments."]
        );
    }
}
