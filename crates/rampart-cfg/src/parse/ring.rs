//! `ring <name>` sections: `description`, `format`, `maxlen`, `size`, `timeout
//! connect|server` and `server` lines (TCP syslog servers the ring's lines are
//! forwarded to, with `log-proto`, `send-proxy`, `send-proxy-v2`). `backing-file` is
//! refused (not supported yet).
//!
//! HAProxy counterpart: `cfg_parse_ring()` and `cfg_post_parse_ring()` (src/sink.c),
//! `srv_parse_log_proto()` (src/server.c). Messages are HAProxy's.

use crate::kw;
use crate::model::{LogProto, Ring, RingServer, ServerAddr, BUILTIN_SINKS, RING_DEFAULT_SIZE};
use crate::span::Span;

use super::log::FORMATS;
use super::value::{atol, invalid_char, parse_time_ms, TimeError};
use super::{arg, not_yet, Parser};

/// `ring <name>`: the index of the new section, `None` when the header is refused
/// (its lines are then skipped).
pub(super) fn open_ring(p: &mut Parser, words: &[String], span: &Span) -> Option<usize> {
    let name = arg(words, 1);
    if name.is_empty() {
        p.alert(span, "missing ring name.");
        return None;
    }
    if let Some(c) = invalid_char(name) {
        p.alert(span, format!("invalid ring name '{name}' (character '{c}' is not permitted)."));
        return None;
    }
    if BUILTIN_SINKS.contains(&name) || p.rings.iter().any(|r| r.name == name) {
        p.alert(span, format!("sink named '{name}' already exists."));
        return None;
    }
    p.rings.push(Ring {
        name: name.to_owned(),
        description: name.to_owned(),
        format: "raw".to_owned(),
        maxlen: RING_DEFAULT_SIZE,
        size: RING_DEFAULT_SIZE,
        timeout_connect: None,
        timeout_server: None,
        servers: Vec::new(),
        span: span.clone(),
    });
    Some(p.rings.len() - 1)
}

/// A line inside ring `idx`.
pub(super) fn parse_ring_line(p: &mut Parser, idx: usize, words: &[String], span: &Span) {
    let a1 = arg(words, 1);
    let result = match words[0].as_str() {
        "size" => parse_size(&mut p.rings[idx], a1),
        "maxlen" => match usize::try_from(atol(a1)) {
            Ok(n) if n > 0 => {
                p.rings[idx].maxlen = n;
                Ok(())
            }
            _ => Err(format!("invalid size '{a1}' for new sink buffer.")),
        },
        "format" if FORMATS.contains(&a1) => {
            p.rings[idx].format = a1.to_owned();
            Ok(())
        }
        "format" => Err(format!("unknown format '{a1}'.")),
        "description" if a1.is_empty() => Err("missing ring description text.".to_owned()),
        "description" => {
            p.rings[idx].description = a1.to_owned();
            Ok(())
        }
        "timeout" => parse_timeout(&mut p.rings[idx], words),
        "server" => parse_server(&mut p.rings[idx], words, span),
        "backing-file" => Err(not_yet("backing-file")),
        other => Err(format!("unknown statement '{other}'.")),
    };
    if let Err(msg) = result {
        p.alert(span, msg);
    }
}

/// `size <bytes>`. COMPAT: HAProxy warns about a size below the current one (16384
/// first) and still fails the load; rampart makes it the alert it amounts to.
fn parse_size(ring: &mut Ring, text: &str) -> Result<(), String> {
    let size = usize::try_from(atol(text)).unwrap_or(0);
    if size == 0 {
        return Err(format!("invalid size '{text}' for new sink buffer."));
    }
    if size < ring.size {
        return Err(format!(
            "ignoring new size '{size}' that is smaller than current size '{}' for ring '{}'.",
            ring.size, ring.name
        ));
    }
    ring.size = size;
    Ok(())
}

/// `timeout connect|server <time>`. As HAProxy, another timeout name is ignored.
fn parse_timeout(ring: &mut Ring, words: &[String]) -> Result<(), String> {
    let (name, value) = (arg(words, 1), arg(words, 2));
    if name != "connect" && name != "server" {
        return Ok(());
    }
    if value.is_empty() {
        return Err(format!("'timeout {name}' expects <time> as argument."));
    }
    let ms = parse_time_ms(value).map_err(|e| match e {
        TimeError::Overflow => format!(
            "timer overflow in argument <{value}> to <timeout {name}>, maximum value is 2147483647 ms (~24.8 days)."
        ),
        TimeError::Underflow => {
            format!("timer underflow in argument <{value}> to <timeout {name}>, minimum non-null value is 1 ms.")
        }
        TimeError::BadChar(c) => format!("unexpected character '{c}' in argument to <timeout {name}>."),
    })?;
    if let Some(c) = ms.trailing {
        return Err(format!("unexpected character '{c}' in argument to <timeout {name}>."));
    }
    if name == "connect" {
        ring.timeout_connect = ms.duration();
    } else {
        ring.timeout_server = ms.duration();
    }
    Ok(())
}

const SERVER_ARGS: &str = "'server' expects <name> and <addr>[:<port>] as arguments.";

/// The TLS options of a `server` line that a ring server refuses: health checks do
/// not exist there, and `sni` is an expression evaluated on a stream, which a ring's
/// connection has not.
const RING_TLS_REFUSED: &[&str] = &["sni", "check-ssl", "no-check-ssl", "check-sni", "check-alpn"];

/// `server <name> <addr>[:port] [log-proto legacy|octet-count] [send-proxy|send-proxy-v2]`
/// and the TLS options of a proxy's `server` line (`ssl`, `verify`, `ca-file`, `crt`,
/// `ciphers`, versions, ...; not `sni` nor the `check-*` ones).
/// Other server options HAProxy takes are refused as not supported yet.
fn parse_server(ring: &mut Ring, words: &[String], span: &Span) -> Result<(), String> {
    let name = arg(words, 1);
    let ctx = format!("'server {}/{name}' : ", ring.name);
    if name.is_empty() {
        return Err(SERVER_ARGS.to_owned());
    }
    if let Some(c) = invalid_char(name) {
        return Err(format!("character '{c}' is not permitted in server name '{name}'."));
    }
    let text = arg(words, 2);
    if text.is_empty() {
        return Err(SERVER_ARGS.to_owned());
    }
    let addr = match super::addr::parse_server_target(text) {
        Ok((ServerAddr::Inet(a), None)) => a,
        Ok((ServerAddr::Inet(a), Some(_))) => a,
        Ok((ServerAddr::Unix(_), _)) => return Err(format!("{ctx}{}", not_yet("unix@ ring servers"))),
        Err(e) => return Err(format!("{ctx}{e}")),
    };
    let mut server = RingServer {
        name: name.to_owned(),
        addr,
        log_proto: LogProto::Legacy,
        send_proxy: 0,
        tls: Default::default(),
        span: span.clone(),
    };
    let mut i = 3;
    while i < words.len() {
        let w = words[i].as_str();
        if w == "log-proto" {
            server.log_proto = match arg(words, i + 1) {
                "legacy" => LogProto::Legacy,
                "octet-count" => LogProto::OctetCount,
                other => {
                    return Err(format!("{ctx}'log-proto' expects one of 'legacy' or 'octet-count' but got '{other}'."))
                }
            };
            i += 2;
            continue;
        }
        if w == "send-proxy" || w == "send-proxy-v2" {
            server.send_proxy = if w == "send-proxy" { 1 } else { 2 };
            i += 1;
            continue;
        }
        if let Some(k) = kw::server_option(w).filter(|_| !RING_TLS_REFUSED.contains(&w)) {
            if let Some(r) = super::server_ssl::apply_tls_option(w, arg(words, i + 1), &mut server.tls, span) {
                r.map_err(|e| format!("{ctx}{e}."))?;
                i += 1 + k.args;
                continue;
            }
        }
        return Err(match kw::server_option(w) {
            Some(_) => format!("{ctx}'{w}' is not supported yet in a 'ring' section."),
            None => format!("{ctx}unknown keyword '{w}'."),
        });
    }
    ring.servers.push(server);
    Ok(())
}

/// The end-of-configuration checks of each ring (HAProxy's `cfg_post_parse_ring()`
/// and the timeouts check its forward proxy gets).
pub(super) fn check_rings(rings: &mut [Ring], diags: &mut Vec<crate::diag::Diag>) {
    use crate::diag::Diag;
    for r in rings {
        if r.maxlen > r.size {
            diags.push(Diag::warning(
                None,
                format!("ring '{}' event max length '{}' exceeds size, forced to size '{}'.", r.name, r.maxlen, r.size),
            ));
            r.maxlen = r.size;
        }
        if !r.servers.is_empty() && (r.timeout_connect.is_none() || r.timeout_server.is_none()) {
            diags.push(Diag::warning(
                Some(r.span.clone()),
                format!(
                    "missing timeouts for backend '{}'.\n   | While not properly invalid, you will certainly encounter \
                     various problems\n   | with such a configuration. To fix this, please ensure that all \
                     following\n   | timeouts are set to a non-zero value: 'client', 'connect', 'server'.",
                    r.name
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::model::LogProto;
    use crate::parse::tests::{alerts, parse, parse_ok};

    /// The ring of HAProxy's reg-test log/log_forward.vtc.
    const REG_TEST_RING: &str = "ring myring\n  description \"My local buffer\"\n  format rfc5424\n  maxlen 1200\n\
        \x20 size 32764\n  timeout connect 5s\n  timeout server 10s\n  # syslog tcp server\n\
        \x20 server mysyslogsrv 127.0.0.1:2514\n";

    #[test]
    fn the_reg_test_ring_is_accepted_as_written() {
        let cfg = parse_ok(REG_TEST_RING);
        let r = &cfg.rings[0];
        assert_eq!(
            (r.name.as_str(), r.description.as_str(), r.format.as_str()),
            ("myring", "My local buffer", "rfc5424")
        );
        assert_eq!((r.maxlen, r.size), (1200, 32764));
        assert_eq!(
            (r.timeout_connect, r.timeout_server),
            (Some(Duration::from_secs(5)), Some(Duration::from_secs(10)))
        );
        assert_eq!(r.servers.len(), 1);
        assert_eq!(r.servers[0].name, "mysyslogsrv");
        assert_eq!(r.servers[0].addr, "127.0.0.1:2514".parse().unwrap());
        assert_eq!(r.servers[0].log_proto, LogProto::Legacy, "HAProxy 2.6's default framing");
    }

    #[test]
    fn defaults_and_log_proto() {
        let cfg = parse_ok(
            "ring r\n  server a 127.0.0.1:1 log-proto octet-count send-proxy\n  server b 127.0.0.1:2 log-proto legacy\n\
             \x20 server c 127.0.0.1:3 send-proxy-v2\n",
        );
        let r = &cfg.rings[0];
        assert_eq!((r.format.as_str(), r.size, r.maxlen, r.description.as_str()), ("raw", 16384, 16384, "r"));
        assert_eq!((r.timeout_connect, r.timeout_server), (None, None));
        assert_eq!(r.servers[0].log_proto, LogProto::OctetCount);
        assert_eq!(r.servers[1].log_proto, LogProto::Legacy);
        let proxies: Vec<u8> = r.servers.iter().map(|s| s.send_proxy).collect();
        assert_eq!(proxies, [1, 0, 2]);
    }

    #[test]
    fn tls_options_of_ring_servers() {
        let cfg = parse_ok(
            "ring r\n  server a 127.0.0.1:1 ssl verify none\n  server b 127.0.0.1:2 ssl ca-file ca.pem crt c.pem \
             verifyhost h ssl-min-ver TLSv1.3\n  server c 127.0.0.1:3\n",
        );
        let s = &cfg.rings[0].servers;
        assert_eq!((s[0].tls.ssl, s[0].tls.verify), (true, Some(false)));
        assert_eq!((s[1].tls.ca_file.as_deref(), s[1].tls.crt.as_deref()), (Some("ca.pem"), Some("c.pem")));
        assert_eq!((s[1].tls.verifyhost.as_deref(), s[1].tls.verify), (Some("h"), None));
        assert_eq!(s[1].tls.versions.min, Some(crate::model::TlsVersion::TlsV13));
        assert!(!s[2].tls.ssl);
        assert_eq!(
            alerts("ring r\n  server a 127.0.0.1:1 ssl verify maybe\n  server b 127.0.0.1:1 check-ssl\n"),
            [
                "'server r/a' : 'verify' : unknown verify method 'maybe', only 'none' and 'required' are supported.",
                "'server r/b' : 'check-ssl' is not supported yet in a 'ring' section.",
            ]
        );
    }

    #[test]
    fn haproxys_messages() {
        let text = "ring r\nring r\nring\nring a/b\nring buf0\nring s\n  size 4096\nring t\n  size 0\n  maxlen 0\n\
                    \x20 format xx\n  description\n  timeout connect\n  timeout connect 10x\n  backing-file /tmp/x\n\
                    \x20 foo bar\n  server c 127.0.0.1:1 log-proto foo\n  server d 127.0.0.1:1 ssl sni str(x)\n\
                    \x20 server f 127.0.0.1:1 bogus\n  server e 127.0.0.1:1 log-proto\n  timeout client 1s\n";
        assert_eq!(
            alerts(text),
            [
                "sink named 'r' already exists.",
                "missing ring name.",
                "invalid ring name 'a/b' (character '/' is not permitted).",
                "sink named 'buf0' already exists.",
                "ignoring new size '4096' that is smaller than current size '16384' for ring 's'.",
                "invalid size '0' for new sink buffer.",
                "invalid size '0' for new sink buffer.",
                "unknown format 'xx'.",
                "missing ring description text.",
                "'timeout connect' expects <time> as argument.",
                "unexpected character 'x' in argument to <timeout connect>.",
                "'backing-file' is not supported yet",
                "unknown statement 'foo'.",
                "'server t/c' : 'log-proto' expects one of 'legacy' or 'octet-count' but got 'foo'.",
                "'server t/d' : 'sni' is not supported yet in a 'ring' section.",
                "'server t/f' : unknown keyword 'bogus'.",
                "'server t/e' : 'log-proto' expects one of 'legacy' or 'octet-count' but got ''.",
            ]
        );
    }

    #[test]
    fn maxlen_above_size_is_cut_with_a_warning() {
        let (cfg, diags) = parse("ring u\n  size 20000\n  maxlen 30000\n");
        assert_eq!(cfg.rings[0].maxlen, 20000);
        let msgs: Vec<&str> = diags.list.iter().map(|d| d.message.as_str()).collect();
        assert!(msgs.contains(&"ring 'u' event max length '30000' exceeds size, forced to size '20000'."), "{msgs:?}");
    }

    #[test]
    fn a_ring_with_servers_needs_its_timeouts() {
        let (_, diags) = parse("ring z\n  server a 127.0.0.1:5\n");
        assert!(diags.list.iter().any(|d| d.message.starts_with("missing timeouts for backend 'z'.\n   | While")));
        let (_, diags) = parse("ring z\n  timeout connect 1s\n");
        assert!(diags.list.iter().all(|d| !d.message.starts_with("missing timeouts")));
    }
}
