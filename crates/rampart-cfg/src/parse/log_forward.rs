//! `log-forward <name>` sections: syslog receivers (`dgram-bind` for UDP, `bind` for
//! TCP), the `log` targets their messages are relayed to, and the limits of the TCP
//! side (`maxconn`, `backlog`, `timeout client`).
//!
//! HAProxy counterpart: `cfg_parse_log_forward()` (src/log.c).

use crate::kw;
use crate::model::{DgramBind, ListenAddr, LogForward, LogTarget};
use crate::span::Span;

use super::addr::parse_listen_addrs;
use super::value::{atol, invalid_char, parse_time_ms, TimeError};
use super::{arg, not_yet, too_many_args, Modifier, Parser};

/// The `bind` options that make sense on a syslog TCP receiver; the others are refused.
const BIND_OPTIONS: &[&str] = &[
    "name",
    "backlog",
    "v4v6",
    "v6only",
    "mss",
    "defer-accept",
    "tfo",
    "tcp-ut",
    // TLS, as on a proxy's `bind` line (HAProxy's syslog over TLS)
    "ssl",
    "crt",
    "crt-list",
    "ca-file",
    "ca-verify-file",
    "ca-ignore-err",
    "crt-ignore-err",
    "crl-file",
    "verify",
    "ciphers",
    "ciphersuites",
    "curves",
    "ecdhe",
    "ssl-min-ver",
    "ssl-max-ver",
    "force-sslv3",
    "force-tlsv10",
    "force-tlsv11",
    "force-tlsv12",
    "force-tlsv13",
    "no-sslv3",
    "no-tlsv10",
    "no-tlsv11",
    "no-tlsv12",
    "no-tlsv13",
    "no-tls-tickets",
    "tls-ticket-keys",
    "strict-sni",
    "prefer-client-ciphers",
];
/// The `dgram-bind` options rampart honours (the name only names; the backlog of a
/// datagram socket is meaningless, as in HAProxy).
const DGRAM_OPTIONS: &[&str] = &["name", "backlog"];

/// `log-forward <name>`. Returns the index of the new section.
pub(super) fn open_log_forward(p: &mut Parser, words: &[String], span: &Span) -> Option<usize> {
    let name = arg(words, 1);
    if name.is_empty() {
        p.alert(span, "missing name for ip-forward section.");
        return None;
    }
    if let Some(extra) = words.get(2) {
        p.alert(span, too_many_args("log-forward", extra));
        return None;
    }
    if let Some(c) = invalid_char(name) {
        p.alert(span, format!("character '{c}' is not permitted in 'log-forward' name '{name}'."));
        return None;
    }
    // (HAProxy writes these two with `Parsing [file:line]:`, hence no span)
    if let Some(other) = p.log_forwards.iter().find(|l| l.name == name) {
        let msg = format!(
            "Parsing [{span}]: log-forward section '{name}' has the same name as another log-forward section \
             declared at {}.",
            other.span
        );
        p.diags.push(crate::diag::Diag::alert(None, msg));
    }
    if let Some(px) = p.proxies.iter().find(|b| b.px.name == name) {
        let msg = format!(
            "Parsing [{span}]: log forward section '{name}' has the same name as {} '{name}' declared at {}.",
            px.kind.type_str(),
            px.px.span
        );
        p.diags.push(crate::diag::Diag::alert(None, msg));
    }
    p.log_forwards.push(LogForward {
        name: name.to_owned(),
        dgram_binds: Vec::new(),
        binds: Vec::new(),
        logs: Vec::new(),
        maxconn: 10,
        backlog: 0,
        timeout_client: None,
        span: span.clone(),
    });
    Some(p.log_forwards.len() - 1)
}

/// A line inside a `log-forward` section.
pub(super) fn parse_log_forward_line(p: &mut Parser, idx: usize, words: &[String], kwm: Modifier, span: &Span) {
    let mut diags = Vec::new();
    let mut alert = |m: String| diags.push(crate::diag::Diag::alert(Some(span.clone()), m));
    let lf = &mut p.log_forwards[idx];
    match words[0].as_str() {
        "dgram-bind" => {
            if let Some(b) = dgram_bind(words, span, &mut alert) {
                lf.dgram_binds.push(b);
            }
        }
        "bind" => {
            if let Some(b) = tcp_bind(words, span, &mut alert) {
                lf.binds.push(b);
            }
        }
        "log" => match super::log::check_log_args(&words[1..], kwm, false) {
            Err(e) => alert(format!("log : {e}")),
            Ok(()) if kwm == Modifier::No => lf.logs.clear(),
            Ok(()) => lf.logs.push(LogTarget { args: words[1..].to_vec(), span: span.clone() }),
        },
        kw @ ("maxconn" | "backlog") => {
            if arg(words, 1).is_empty() {
                alert(format!("'{kw}' expects an integer argument."));
                return flush(p, diags);
            }
            // as HAProxy: atol(), the value is kept even with a word too many
            let value = u32::try_from(atol(arg(words, 1)).max(0)).unwrap_or(u32::MAX);
            if kw == "maxconn" {
                lf.maxconn = value;
            } else {
                lf.backlog = value;
            }
            if let Some(extra) = words.get(2) {
                alert(too_many_args(kw, extra));
            }
        }
        "timeout" => match timeout_client(words) {
            Ok(t) => lf.timeout_client = t,
            Err(msg) => alert(msg),
        },
        other => alert(format!("unknown keyword '{other}' in log-forward section.")),
    }
    flush(p, diags);
}

fn flush(p: &mut Parser, diags: Vec<crate::diag::Diag>) {
    p.diags.extend(diags);
}

/// `timeout client <time>`, the only timeout of the section.
fn timeout_client(words: &[String]) -> Result<Option<std::time::Duration>, String> {
    if arg(words, 1) != "client" {
        return Err(format!("unknown keyword 'timeout {}' in log-forward section.", arg(words, 1)));
    }
    let value = arg(words, 2);
    if value.is_empty() {
        return Err("missing timeout client value.".into());
    }
    let err = match parse_time_ms(value) {
        Ok(t) if t.trailing.is_none() => return Ok(t.duration()),
        // COMPAT: HAProxy 2.6 fails oddly here ("Could not open configuration file");
        // rampart names the character, as for a proxy's timeout.
        Ok(t) => format!("unexpected character '{}' in 'timeout client'", t.trailing.unwrap_or(' ')),
        Err(TimeError::BadChar(c)) => format!("unexpected character '{c}' in 'timeout client'"),
        Err(TimeError::Overflow) => format!(
            "timer overflow in argument '{value}' to 'timeout client' (maximum value is 2147483647 ms or ~24.8 days)"
        ),
        Err(TimeError::Underflow) => {
            format!("timer underflow in argument '{value}' to 'timeout client' (minimum non-null value is 1 ms)")
        }
    };
    Err(format!("timeout : {err}"))
}

/// `dgram-bind <addr>[,<addr>...] [options]`: IPv4/IPv6 UDP addresses.
fn dgram_bind(words: &[String], span: &Span, alert: &mut dyn FnMut(String)) -> Option<DgramBind> {
    let spec = arg(words, 1);
    let line = format!("'dgram-bind {spec}'");
    let mut addrs = Vec::new();
    for piece in spec.split(',').filter(|p| !p.is_empty()) {
        // a datagram receiver's address: `udp@` is what `ip@` is to a stream one
        let (text, bad_family) = match piece.split_once('@') {
            Some(("udp" | "ip", rest)) => (rest.to_owned(), false),
            Some(("udp4" | "ipv4", rest)) => (format!("ipv4@{rest}"), false),
            Some(("udp6" | "ipv6", rest)) => (format!("ipv6@{rest}"), false),
            Some((fam, _)) => (format!("{fam}@"), true),
            None if piece.starts_with('/') => ("unix@".to_owned(), true),
            None => (piece.to_owned(), false),
        };
        if bad_family {
            alert(format!("{line} : '{text}' addresses are not supported yet"));
            return None;
        }
        match parse_listen_addrs(&text) {
            Ok(list) => {
                for a in list {
                    match a {
                        ListenAddr::Inet(sa) => addrs.push(sa),
                        _ => {
                            alert(format!("{line} : unix and fd@ addresses are not supported yet"));
                            return None;
                        }
                    }
                }
            }
            Err(e) => {
                alert(format!("{line} : {e}"));
                return None;
            }
        }
    }
    let mut name = None;
    let mut i = 2;
    while let Some(word) = words.get(i) {
        let Some(k) = kw::bind_option(word) else {
            let msg = match kw::suggest_bind_option(word) {
                Some(best) => {
                    format!("unknown keyword '{word}' in 'log-forward' section; did you mean '{best}' maybe ?")
                }
                None => format!("unknown keyword '{word}' in 'log-forward' section."),
            };
            alert(msg);
            return None;
        };
        if !DGRAM_OPTIONS.contains(&k.name) {
            alert(format!("{line} : {}", not_yet(word)));
            return None;
        }
        let value = arg(words, i + 1);
        if k.name == "name" {
            if value.is_empty() {
                alert("'name' : missing name".into());
                return None;
            }
            name = Some(value.to_owned());
        }
        i += 1 + k.args;
    }
    Some(DgramBind { addrs, name, span: span.clone() })
}

/// `bind <addr> [options]`: a proxy's `bind` line, with the options that make sense on
/// a syslog TCP receiver, TLS included (no PROXY protocol, no generated certificates,
/// no ALPN yet).
fn tcp_bind(words: &[String], span: &Span, alert: &mut dyn FnMut(String)) -> Option<crate::model::Bind> {
    let ctx = format!("'bind {}' in section 'log-forward'", arg(words, 1));
    let mut i = 2;
    let mut refused = false;
    while let Some(word) = words.get(i) {
        let Some(k) = kw::bind_option(word) else { break };
        if !BIND_OPTIONS.contains(&k.name) {
            alert(format!("{ctx} : {}", not_yet(word)));
            refused = true;
        }
        i += 1 + k.args;
    }
    let bind = super::bind::bind_line(words, "log-forward", span, alert)?;
    if refused {
        return None;
    }
    if let Some(a) = bind.addrs.iter().find(|a| !matches!(a, ListenAddr::Inet(_))) {
        let what = if matches!(a, ListenAddr::Unix(_)) { "unix@" } else { "fd@" };
        alert(format!("{ctx} : '{what}' addresses are not supported yet"));
        return None;
    }
    Some(bind)
}

#[cfg(test)]
#[path = "log_forward_tests.rs"]
mod tests;
