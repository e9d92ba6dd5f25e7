//! `resolvers <name>` sections: `nameserver` (UDP, `tcp@` for DNS over TCP),
//! `parse-resolv-conf`, `accepted_payload_size`, `resolve_retries`, `timeout
//! resolve|retry`, `hold <status> <period>`; the implicit `default` section 2.6 makes
//! from `/etc/resolv.conf`; the servers' references to the sections.
//!
//! HAProxy counterpart: `cfg_parse_resolvers()`, `parse_resolve_conf()`,
//! `resolvers_create_default()` and the server part of `resolvers_finalize_config()`
//! (src/resolvers.c). Messages are HAProxy's.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use crate::model::{Nameserver, Resolvers, DEFAULT_RESOLVERS};
use crate::span::Span;

use super::value::{atol, invalid_char, parse_time_ms, TimeError};
use super::{arg, Parser};

/// The file `parse-resolv-conf` and the implicit section read.
const RESOLV_CONF: &str = "/etc/resolv.conf";
/// DNS's largest UDP message (HAProxy's `DNS_MAX_UDP_MESSAGE`).
const MAX_UDP_MESSAGE: i64 = 65535;

/// `resolvers <name>`: the index of the new section, `None` when refused.
pub(super) fn open_resolvers(p: &mut Parser, words: &[String], span: &Span) -> Option<usize> {
    let name = arg(words, 1);
    if name.is_empty() {
        p.alert(span, "missing name for resolvers section.");
        return None;
    }
    if let Some(c) = invalid_char(name) {
        p.alert(span, format!("character '{c}' is not permitted in 'resolvers' name '{name}'."));
        return None;
    }
    if let Some(other) = p.resolvers.iter().find(|r| r.name == name) {
        let msg = format!("resolvers '{name}' has same name as another resolvers (declared at {}).", other.span);
        p.alert(span, msg);
        return None;
    }
    p.resolvers.push(Resolvers::new(name, span.clone()));
    Some(p.resolvers.len() - 1)
}

/// A line inside resolvers section `idx`.
pub(super) fn parse_resolvers_line(p: &mut Parser, idx: usize, words: &[String], span: &Span) {
    let result = match words[0].as_str() {
        "nameserver" => parse_nameserver(&mut p.resolvers[idx], words, span),
        "parse-resolv-conf" => match std::fs::read_to_string(RESOLV_CONF) {
            Ok(text) => {
                let warnings = add_resolv_conf(&mut p.resolvers[idx], &text);
                if !warnings.is_empty() {
                    p.warning(span, warnings.join("\n        "));
                }
                Ok(())
            }
            Err(_) => Err("failed to open /etc/resolv.conf.".to_owned()),
        },
        "hold" => parse_hold(&mut p.resolvers[idx], words),
        "accepted_payload_size" => parse_payload_size(&mut p.resolvers[idx], arg(words, 1)),
        "resolution_pool_size" => {
            Err("'resolution_pool_size' directive is not supported anymore (it never appeared in a stable release)."
                .to_owned())
        }
        "resolve_retries" if arg(words, 1).is_empty() => Err("'resolve_retries' expects <nb> as argument.".to_owned()),
        "resolve_retries" => {
            // atoi(), as HAProxy: a negative count sends one query
            p.resolvers[idx].resolve_retries = u32::try_from(atol(arg(words, 1))).unwrap_or(0);
            Ok(())
        }
        "timeout" => parse_timeout(&mut p.resolvers[idx], words),
        other => Err(format!("unknown keyword '{other}' in 'resolvers' section")),
    };
    if let Err(msg) = result {
        p.alert(span, msg);
    }
}

fn parse_nameserver(r: &mut Resolvers, words: &[String], span: &Span) -> Result<(), String> {
    let (name, addr) = (arg(words, 1), arg(words, 2));
    if addr.is_empty() {
        return Err("'nameserver' expects <name> and <addr>[:<port>] as arguments.".to_owned());
    }
    if let Some(c) = invalid_char(name) {
        return Err(format!("character '{c}' is not permitted in server name '{name}'."));
    }
    if let Some(other) = r.nameservers.iter().find(|n| n.name == name) {
        return Err(format!(
            "nameserver '{name}' has same name as another nameserver (declared at {}:{}).",
            other.file, other.line
        ));
    }
    let (addr, tcp) = super::addr::parse_dns_addr(addr).map_err(|e| format!("'nameserver {name}' : {e}"))?;
    r.nameservers.push(Nameserver {
        name: name.to_owned(),
        addr,
        tcp,
        file: span.file.to_string(),
        line: span.line as usize,
    });
    Ok(())
}

/// Adds the `nameserver` lines of a resolv.conf text (port 53, UDP) to `r`; the
/// warnings for the lines left out, as HAProxy words them.
pub(super) fn add_resolv_conf(r: &mut Resolvers, text: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let Some(rest) = line.strip_prefix("nameserver") else { continue };
        if !rest.is_empty() && !rest.starts_with([' ', '\t', '\r']) {
            continue;
        }
        let Some(address) = rest.split([' ', '\t', '\r']).find(|w| !w.is_empty()) else {
            warnings.push(format!("parsing [{RESOLV_CONF}:{n}] : nameserver line is missing address."));
            continue;
        };
        if let Some(other) = r.nameservers.iter().find(|ns| ns.name == address) {
            warnings.push(format!(
                "Parsing [{RESOLV_CONF}:{n}] : generated name for {RESOLV_CONF} nameserver '{address}' conflicts \
                 with another nameserver (declared at {}:{}), it appears to be a duplicate and will be excluded.",
                other.file, other.line
            ));
            continue;
        }
        let Ok(ip) = address.parse::<IpAddr>() else {
            warnings.push(format!(
                "parsing [{RESOLV_CONF}:{n}] : address '{address}' could not be recognized, nameserver will be excluded."
            ));
            continue;
        };
        r.nameservers.push(Nameserver {
            name: address.to_owned(),
            addr: SocketAddr::new(ip, 53),
            tcp: false,
            file: RESOLV_CONF.to_owned(),
            line: n,
        });
    }
    warnings
}

fn parse_hold(r: &mut Resolvers, words: &[String]) -> Result<(), String> {
    let (event, value) = (arg(words, 1), arg(words, 2));
    if value.is_empty() {
        return Err("'hold' expects an <event> and a <time> as arguments.\n\
             <event> can be either 'valid', 'nx', 'refused', 'timeout', or 'other'"
            .to_owned());
    }
    let d = time(value, &format!("<{event}> to <hold>"), "hold")?;
    let slot = match event {
        "nx" => &mut r.hold.nx,
        "other" => &mut r.hold.other,
        "refused" => &mut r.hold.refused,
        "timeout" => &mut r.hold.timeout,
        "valid" => &mut r.hold.valid,
        "obsolete" => &mut r.hold.obsolete,
        _ => {
            return Err(format!(
                "'hold' unknown <event>: '{event}', expects either 'nx', 'timeout', 'valid', 'obsolete' or 'other'."
            ))
        }
    };
    *slot = d;
    Ok(())
}

fn parse_payload_size(r: &mut Resolvers, value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("'accepted_payload_size' expects <nb> as argument.".to_owned());
    }
    let n = atol(value);
    if !(12..=MAX_UDP_MESSAGE).contains(&n) {
        return Err(format!("'accepted_payload_size' must be between 12 and 65535 inclusive (was {value})."));
    }
    r.accepted_payload_size = n as u16;
    Ok(())
}

fn parse_timeout(r: &mut Resolvers, words: &[String]) -> Result<(), String> {
    let (which, value) = (arg(words, 1), arg(words, 2));
    match which {
        "" => Err("'timeout' expects 'retry' or 'resolve' and <time> as arguments.".to_owned()),
        "retry" | "resolve" if value.is_empty() => Err(format!("'timeout {which}' expects <time> as argument.")),
        "retry" | "resolve" => {
            let d = time(value, &format!("<{value}> to <timeout {which}>"), &format!("timeout {which}"))?;
            if which == "retry" {
                r.timeout_retry = d;
            } else {
                r.timeout_resolve = d;
            }
            Ok(())
        }
        _ => Err(format!("'timeout' expects 'retry' or 'resolve' and <time> as arguments got '{which}'.")),
    }
}

/// A time in milliseconds; `what` names the argument in the overflow messages, `kw`
/// the keyword in the bad-character one.
fn time(value: &str, what: &str, kw: &str) -> Result<Duration, String> {
    match parse_time_ms(value) {
        Ok(ms) => Ok(Duration::from_millis(u64::from(ms.ms))),
        Err(TimeError::Overflow) => {
            Err(format!("timer overflow in argument {what}, maximum value is 2147483647 ms (~24.8 days)."))
        }
        Err(TimeError::Underflow) => {
            Err(format!("timer underflow in argument {what}, minimum non-null value is 1 ms."))
        }
        Err(TimeError::BadChar(c)) => Err(format!("unexpected character '{c}' in argument to <{kw}>.")),
    }
}

/// After every section: the implicit `default` section (from `/etc/resolv.conf`, only
/// when it names a nameserver and no section has that name), then each server's
/// `resolvers` checked.
pub(super) fn finish(p: &mut Parser, httpclient: Option<&str>) {
    if !p.resolvers.iter().any(|r| r.name == DEFAULT_RESOLVERS) {
        if let Ok(text) = std::fs::read_to_string(RESOLV_CONF) {
            let mut r = Resolvers::new(DEFAULT_RESOLVERS, Span::default());
            r.implicit = true;
            add_resolv_conf(&mut r, &text);
            if !r.nameservers.is_empty() {
                p.resolvers.push(r);
            }
        }
    }
    let mut missing = Vec::new();
    for pb in &p.proxies {
        for s in &pb.px.servers {
            let Some(name) = &s.resolve.resolvers else { continue };
            if !p.resolvers.iter().any(|r| &r.name == name) {
                let msg = format!(
                    "{} '{}', server '{}': unable to find required resolvers '{name}'",
                    pb.kind.type_str(),
                    pb.px.name,
                    s.name
                );
                missing.push(crate::diag::Diag::alert(Some(s.span.clone()), msg));
            }
        }
    }
    // the HTTP client's section: an error only when `httpclient.resolvers.*` is set, as
    // HAProxy's `httpclient_resolve_init()` (its message names the client's proxy)
    if let Some(name) = httpclient {
        if !p.resolvers.iter().any(|r| r.name == name) {
            let msg = format!("Proxy '<HTTPCLIENT>': Can't find resolvers section '{name}' for do-resolve action.");
            missing.push(crate::diag::Diag::alert(None, msg));
        }
    }
    p.diags.extend(missing);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::add_resolv_conf;
    use crate::model::Resolvers;
    use crate::parse::tests::{alerts, parse_ok};

    #[test]
    fn section_keywords_and_defaults() {
        let cfg = parse_ok(
            "resolvers dns\n nameserver a 127.0.0.1:53\n nameserver b tcp@[::1]:5353\n nameserver c udp@10.0.0.1:53\n\
             accepted_payload_size 8192\n resolve_retries 5\n timeout resolve 2s\n timeout retry 300\n\
             hold valid 20s\n hold nx 1m\n hold obsolete 5s\n\
             resolvers other\n",
        );
        let r = &cfg.resolvers[0];
        assert_eq!(r.name, "dns");
        let ns: Vec<_> = r.nameservers.iter().map(|n| (n.name.as_str(), n.addr.to_string(), n.tcp)).collect();
        assert_eq!(
            ns,
            [("a", "127.0.0.1:53".into(), false), ("b", "[::1]:5353".into(), true), ("c", "10.0.0.1:53".into(), false)]
        );
        assert_eq!((r.accepted_payload_size, r.resolve_retries), (8192, 5));
        assert_eq!((r.timeout_resolve, r.timeout_retry), (Duration::from_secs(2), Duration::from_millis(300)));
        assert_eq!(
            (r.hold.valid, r.hold.nx, r.hold.obsolete),
            (Duration::from_secs(20), Duration::from_secs(60), Duration::from_secs(5))
        );
        let d = &cfg.resolvers[1];
        assert_eq!(
            (d.accepted_payload_size, d.resolve_retries, d.hold.valid, d.hold.other),
            (512, 3, Duration::from_secs(10), Duration::from_secs(30))
        );
    }

    #[test]
    fn section_errors() {
        let a = |line: &str| alerts(&format!("resolvers dns\n {line}\n"));
        assert_eq!(a("nameserver a"), ["'nameserver' expects <name> and <addr>[:<port>] as arguments."]);
        assert_eq!(a("nameserver a 127.0.0.1"), ["'nameserver a' : missing port specification in '127.0.0.1'"]);
        assert_eq!(
            a("accepted_payload_size 10"),
            ["'accepted_payload_size' must be between 12 and 65535 inclusive (was 10)."]
        );
        assert_eq!(
            a("hold bogus 1s"),
            ["'hold' unknown <event>: 'bogus', expects either 'nx', 'timeout', 'valid', 'obsolete' or 'other'."]
        );
        assert_eq!(
            a("timeout server 1s"),
            ["'timeout' expects 'retry' or 'resolve' and <time> as arguments got 'server'."]
        );
        assert_eq!(a("timeout retry 1x"), ["unexpected character 'x' in argument to <timeout retry>."]);
        assert_eq!(a("bogus"), ["unknown keyword 'bogus' in 'resolvers' section"]);
        assert_eq!(
            alerts("resolvers dns\nresolvers dns\n"),
            ["resolvers 'dns' has same name as another resolvers (declared at t.cfg:1)."]
        );
        assert_eq!(
            alerts("resolvers dns\n nameserver a 127.0.0.1:53\n nameserver a 127.0.0.2:53\n"),
            ["nameserver 'a' has same name as another nameserver (declared at t.cfg:2)."]
        );
        assert_eq!(
            alerts("backend b\n server s 127.0.0.1:80 resolvers nope\n"),
            ["backend 'b', server 's': unable to find required resolvers 'nope'"]
        );
    }

    #[test]
    fn do_resolve_action() {
        use crate::model::{HttpReqAction, VarScope};
        let cfg = parse_ok(
            "resolvers dns\n nameserver a 127.0.0.1:53\nfrontend f\n mode http\n bind :80\n\
             http-request do-resolve(txn.ip,dns,ipv4) hdr(host),lower\n http-request do-resolve(sess.x,dns) str(a)\n",
        );
        let rules = &cfg.proxies[0].rules.http_request;
        let HttpReqAction::DoResolve(d) = &rules[0].action else { panic!("do-resolve") };
        assert_eq!(
            (d.var.scope, d.var.name.as_str(), d.resolvers.as_str(), d.prefer_v6),
            (VarScope::Txn, "ip", "dns", false)
        );
        let HttpReqAction::DoResolve(d) = &rules[1].action else { panic!("do-resolve") };
        assert!(d.prefer_v6);
        let a = alerts("frontend f\n mode http\n bind :80\n http-request do-resolve(txn.ip,dns,ipv5) hdr(host)\n");
        assert!(a[0].contains("Can't parse 'do-resolve(txn.ip,dns,ipv5)'. Expects 'do-resolve(<varname>,<resolvers>[,<options>]) <expr>'. Available options are 'ipv4' and 'ipv6'"), "{a:?}");
    }

    #[test]
    fn resolv_conf_nameservers() {
        let mut r = Resolvers::new("default", Default::default());
        let w = add_resolv_conf(
            &mut r,
            "# x\nsearch lan\nnameserver 10.0.0.1\nnameserver\tfe80::1 # c\nnameserver\nnameserver bogus\nnameserver 10.0.0.1\nnameservers 1.1.1.1\n",
        );
        let ns: Vec<_> = r.nameservers.iter().map(|n| (n.name.as_str(), n.addr.to_string(), n.line)).collect();
        assert_eq!(ns, [("10.0.0.1", "10.0.0.1:53".into(), 3), ("fe80::1", "[fe80::1]:53".into(), 4)]);
        assert_eq!(w.len(), 3);
        assert_eq!(w[0], "parsing [/etc/resolv.conf:5] : nameserver line is missing address.");
    }
}
