//! The arguments of the CLI's `add server <backend>/<name> <addr>[:<port>] [options]`:
//! the subset of `server` options HAProxy 2.6 accepts for a server created at run
//! time, without `default-server` settings, as the same [`Server`] model the
//! configuration gives.
//! HAProxy counterpart: `cli_parse_add_server()` with `SRV_PARSE_DYNAMIC` and the
//! `dynamic_ok` flag of each server keyword (src/server.c, src/cfgparse-ssl.c).

use std::sync::Arc;

use crate::kw::{self, Support};
use crate::model::{Server, ServerFqdn};
use crate::span::Span;

use super::addr::{parse_server_target, parse_server_target_unresolved, server_target_name};
use super::ctx::ServerSettings;
use super::not_yet;

/// The server options HAProxy 2.6 accepts on `add server` (management.txt, "add
/// server"): `addr` and `port` are those of the checks.
pub const DYNAMIC_OPTIONS: &[&str] = &[
    "agent-addr",
    "agent-check",
    "agent-inter",
    "agent-port",
    "agent-send",
    "allow-0rtt",
    "alpn",
    "addr",
    "backup",
    "ca-file",
    "check",
    "check-alpn",
    "check-proto",
    "check-send-proxy",
    "check-sni",
    "check-ssl",
    "check-via-socks4",
    "ciphers",
    "ciphersuites",
    "crl-file",
    "crt",
    "disabled",
    "downinter",
    "enabled",
    "error-limit",
    "fall",
    "fastinter",
    "force-sslv3",
    "force-tlsv10",
    "force-tlsv11",
    "force-tlsv12",
    "force-tlsv13",
    "id",
    "inter",
    "maxconn",
    "maxqueue",
    "minconn",
    "no-ssl-reuse",
    "no-sslv3",
    "no-tlsv10",
    "no-tlsv11",
    "no-tlsv12",
    "no-tlsv13",
    "no-tls-tickets",
    "npn",
    "observe",
    "on-error",
    "on-marked-down",
    "on-marked-up",
    "pool-low-conn",
    "pool-max-conn",
    "pool-purge-delay",
    "port",
    "proto",
    "proxy-v2-options",
    "rise",
    "send-proxy",
    "send-proxy-v2",
    "send-proxy-v2-ssl",
    "send-proxy-v2-ssl-cn",
    "slowstart",
    "sni",
    "source",
    "ssl",
    "ssl-max-ver",
    "ssl-min-ver",
    "tfo",
    "tls-tickets",
    "track",
    "usesrc",
    "verify",
    "verifyhost",
    "weight",
    "ws",
];

/// A server for `add server`: `words` are the name, the address and the options.
/// `Err` holds HAProxy's messages, one per line, in the order HAProxy prints them.
pub fn parse_dynamic_server(words: &[String]) -> Result<Server, Vec<String>> {
    let name = words.first().map_or("", String::as_str);
    let Some(target) = words.get(1).filter(|a| !a.is_empty()) else {
        return Err(vec!["'server' expects <name> and <addr>[:<port>] as arguments.".into()]);
    };
    if let Some(c) = super::value::invalid_char(name) {
        return Err(vec![format!("character '{c}' is not permitted in server name '{name}'.")]);
    }
    let span = Span::new(Arc::from("CLI"), 0);
    let (addr, port_offset, fqdn) = dynamic_addr(target)?;
    let mut s = ServerSettings::default();
    apply_options(&words[2..], &mut s, name, &span)?;
    Ok(super::server::new_server(name.to_owned(), addr, port_offset, fqdn, s, span))
}

/// A literal address, or a name left unresolved (HAProxy gives a dynamic server the
/// `init-addr none` method: the name is kept, nothing resolves it).
fn dynamic_addr(word: &str) -> Result<(crate::model::ServerAddr, Option<i32>, Option<ServerFqdn>), Vec<String>> {
    let Some(name) = server_target_name(word) else {
        let (a, o) = parse_server_target(word).map_err(|e| vec![e])?;
        return Ok((a, o, None));
    };
    let (a, o) = parse_server_target_unresolved(word).map_err(|e| vec![e])?;
    Ok((a, o, Some(ServerFqdn { name, unresolved: true, template: None })))
}

/// Applies the options in order; the first refusal ends the parse, as in HAProxy.
fn apply_options(opts: &[String], s: &mut ServerSettings, srv: &str, span: &Span) -> Result<(), Vec<String>> {
    let mut i = 0;
    while let Some(word) = opts.get(i) {
        let Some(k) = kw::server_option(word) else {
            return Err(vec![format!("unknown keyword '{word}'.")]);
        };
        let value = opts.get(i + 1).map_or("", String::as_str);
        i += 1 + k.args;
        if !DYNAMIC_OPTIONS.contains(&word.as_str()) {
            return Err(vec![format!("'{word}' option is not accepted for dynamic server")]);
        }
        if k.support == Support::No || (word == "proto" && matches!(value, "fcgi" | "none")) {
            let what = if word == "proto" { format!("proto {value}") } else { word.to_owned() };
            return Err(vec![not_yet(&what)]);
        }
        let applied = match super::server_ssl::apply_shared_tls_option(word, value, &mut s.tls, span) {
            Some(r) => r,
            None => super::server::apply_server_option(word, value, s, srv),
        };
        applied.map_err(|e| vec![format!("{e}.")])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn dynamic_servers_parse_the_allowed_options() {
        let s =
            parse_dynamic_server(&words("s1 127.0.0.1:8080 weight 5 maxconn 10 check inter 2s rise 1 ssl verify none"))
                .unwrap();
        assert_eq!((s.name.as_str(), s.weight, s.maxconn), ("s1", 5, Some(10)));
        assert!(s.check.enabled && s.tls.ssl);
        assert_eq!(s.check.rise, Some(1));
    }

    #[test]
    fn dynamic_servers_refuse_as_haproxy() {
        let err = |l: &str| parse_dynamic_server(&words(l)).unwrap_err();
        assert_eq!(err("s1"), ["'server' expects <name> and <addr>[:<port>] as arguments."]);
        assert_eq!(err("s1 127.0.0.1:1 cookie a"), ["'cookie' option is not accepted for dynamic server"]);
        assert_eq!(err("s1 127.0.0.1:1 bogus"), ["unknown keyword 'bogus'."]);
        // HAProxy adds a period to the option's own message, hence two
        assert_eq!(err("s1 127.0.0.1:1 weight 300"), ["weight of server s1 is not within 0 and 256 (300).."]);
        assert!(err("s1 127.0.0.1:1 proto fcgi")[0].contains("not supported yet"));
    }

    #[test]
    fn a_name_stays_unresolved() {
        let s = parse_dynamic_server(&words("s1 example.invalid:80")).unwrap();
        assert!(s.fqdn.as_ref().is_some_and(|f| f.unresolved && f.name == "example.invalid"));
    }
}
