//! `peers <name>` sections: `peer`, `server`, `bind`, `default-bind`, `default-server`,
//! `table`, `disabled`, `enabled`; which node is the local one (`-L`, `localpeer`, the
//! host name); the `peers` argument of `stick-table`.
//!
//! HAProxy counterparts: `cfg_parse_peers()` (src/cfgparse.c), the peers part of
//! `check_config_validity()`. Messages are HAProxy 2.6's.

use crate::model::{BindSsl, ListenAddr, LogTarget, Peer, Peers, PeersBind, PeersTable, ServerAddr, ServerTls};
use crate::span::Span;

use super::value::invalid_char;
use super::{arg, not_yet, Modifier, Parser};

/// A section while it is parsed: what HAProxy keeps in statics across its lines.
#[derive(Debug, Default, Clone)]
pub(crate) struct PeersBuild {
    /// A `bind` line was seen (then `peer` lines are refused).
    bind_line: bool,
    /// A `peer` line was seen (then `bind` lines are refused).
    peer_line: bool,
    /// `backlog` of a `default-bind` line.
    default_backlog: Option<u32>,
    /// The TLS options of a `default-bind` line.
    default_bind_ssl: BindSsl,
    /// The TLS options of a `default-server` line.
    default_tls: ServerTls,
}

/// `peers <name>`: the index of the new section, `None` when refused.
pub(super) fn open_peers(p: &mut Parser, words: &[String], span: &Span) -> Option<usize> {
    let name = arg(words, 1);
    if name.is_empty() {
        p.alert(span, "missing name for peers section.");
        return None;
    }
    if words.len() > 2 {
        p.alert(span, super::too_many_args("peers", &words[2]));
        return None;
    }
    if let Some(c) = invalid_char(name) {
        p.alert(span, format!("character '{c}' is not permitted in 'peers' name '{name}'."));
        return None;
    }
    if let Some(other) = p.peers.iter().find(|s| s.name == name) {
        let msg = format!(
            "Parsing [{}:{}]: peers section '{name}' has the same name as another peers section declared at {}:{}.",
            span.file, span.line, other.span.file, other.span.line
        );
        p.diags.push(crate::diag::Diag::alert(None, msg));
    }
    p.peers.push(Peers {
        name: name.to_owned(),
        disabled: false,
        peers: Vec::new(),
        local: None,
        bind: None,
        tables: Vec::new(),
        logs: Vec::new(),
        span: span.clone(),
    });
    p.peers_build.push(PeersBuild::default());
    Some(p.peers.len() - 1)
}

/// A line inside peers section `idx` (`kwm`: it began with `no`, which only `log`
/// heeds, as in HAProxy).
pub(super) fn parse_peers_line(p: &mut Parser, idx: usize, words: &[String], kwm: Modifier, span: &Span) {
    let result = match words[0].as_str() {
        "peer" | "server" => parse_peer(p, idx, words, span),
        "bind" | "default-bind" => parse_bind(p, idx, words, span),
        "default-server" => {
            let mut tls = p.peers_build[idx].default_tls.clone();
            let r = server_options(&words[1..], &mut tls, span).map_err(|e| format!("'default-server' : {e}"));
            p.peers_build[idx].default_tls = tls;
            r
        }
        "table" => parse_table(p, idx, words, span),
        "disabled" => {
            p.peers[idx].disabled = true;
            Ok(())
        }
        "enabled" => {
            p.peers[idx].disabled = false;
            Ok(())
        }
        "log" => parse_log(p, idx, words, kwm, span),
        other => Err(format!("unknown keyword '{other}' in 'peers' section")),
    };
    if let Err(msg) = result {
        p.alert(span, msg);
    }
}

/// `log ...` / `no log`: checked as a proxy's `log` line.
fn parse_log(p: &mut Parser, idx: usize, words: &[String], kwm: Modifier, span: &Span) -> Result<(), String> {
    let args = &words[1..];
    super::log::check_log_args(args, kwm, false).map_err(|e| format!("log : {e}"))?;
    let logs = &mut p.peers[idx].logs;
    match kwm {
        Modifier::No => logs.clear(),
        _ => logs.push(LogTarget { args: args.to_vec(), span: span.clone() }),
    }
    Ok(())
}

fn parse_peer(p: &mut Parser, idx: usize, words: &[String], span: &Span) -> Result<(), String> {
    let (kw, name) = (words[0].as_str(), arg(words, 1));
    if kw == "peer" {
        if p.peers_build[idx].bind_line {
            return Err("mixing \"peer\" and \"bind\" line is forbidden".into());
        }
        p.peers_build[idx].peer_line = true;
    }
    let local = name == p.localpeer;
    if local {
        if let Some(other) = p.peers[idx].local.map(|i| &p.peers[idx].peers[i]) {
            return Err(format!(
                "'{kw} {name}' : local peer name already referenced at {}:{}. {name}",
                other.span.file, other.span.line
            ));
        }
    }
    if name.is_empty() {
        return Err(format!("'{kw}' expects <name> and <addr>[:<port>] as arguments."));
    }
    if let Some(c) = invalid_char(name) {
        return Err(format!("character '{c}' is not permitted in server name '{name}'."));
    }
    // `server <local name>` after a `bind` line takes no address
    let takes_addr = kw == "peer" || !local;
    let mut rest = &words[2.min(words.len())..];
    let mut addr = None;
    if takes_addr {
        if let Some(a) = rest.first() {
            addr = Some(peer_addr(kw, name, a)?);
            rest = &rest[1..];
        }
    }
    let mut tls = p.peers_build[idx].default_tls.clone();
    server_options(rest, &mut tls, span).map_err(|e| format!("'{kw} {name}' : {e}"))?;
    let sec = &mut p.peers[idx];
    sec.peers.push(Peer { name: name.to_owned(), addr, tls, span: span.clone() });
    if !local {
        return Ok(());
    }
    sec.local = Some(sec.peers.len() - 1);
    if kw == "peer" {
        let Some(sa) = addr else { return Ok(()) };
        if let Some(b) = &sec.bind {
            return Err(one_listener(b));
        }
        let backlog = p.peers_build[idx].default_backlog;
        // as HAProxy, a `peer` line's listener is plain: TLS needs a `bind` line
        let ssl = BindSsl::default();
        sec.bind = Some(PeersBind { addr: ListenAddr::Inet(sa), backlog, ssl, span: span.clone() });
    }
    Ok(())
}

fn one_listener(b: &PeersBind) -> String {
    format!(
        "One listener per \"peers\" section is authorized but another is already configured at [{}:{}].",
        b.span.file, b.span.line
    )
}

fn peer_addr(kw: &str, name: &str, text: &str) -> Result<std::net::SocketAddr, String> {
    let (addr, _) = super::addr::parse_server_target(text).map_err(|e| format!("'{kw} {name}' : {e}"))?;
    match addr {
        ServerAddr::Inet(sa) => Ok(sa),
        ServerAddr::Unix(_) => Err(format!("'{kw} {name}' : {}", not_yet("unix@"))),
    }
}

/// The options of `peer`, `server` and `default-server` lines: the TLS ones (how
/// this node connects to the others); the other server options are refused.
fn server_options(words: &[String], tls: &mut ServerTls, span: &Span) -> Result<(), String> {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        let Some(k) = crate::kw::server_option(w) else {
            return Err(format!("unknown keyword '{w}'."));
        };
        match super::server_ssl::apply_tls_option(w, arg(words, i + 1), tls, span) {
            Some(r) => r.map_err(|e| format!("{e}."))?,
            None => return Err(not_yet(w)),
        }
        i += 1 + k.args;
    }
    Ok(())
}

/// The `bind` options a peers listener honours besides the TLS ones; the others are
/// refused.
const BIND_OPTIONS: &[&str] = &["name", "backlog", "v4v6", "v6only", "mss", "defer-accept", "tfo", "tcp-ut"];

fn parse_bind(p: &mut Parser, idx: usize, words: &[String], span: &Span) -> Result<(), String> {
    let kw = words[0].as_str();
    let first_opt = if kw == "bind" { 2 } else { 1 };
    if kw == "bind" && p.peers_build[idx].peer_line {
        return Err("mixing \"peer\" and \"bind\" line is forbidden".into());
    }
    let mut backlog = None;
    let mut ssl = p.peers_build[idx].default_bind_ssl.clone();
    let mut i = first_opt;
    while let Some(w) = words.get(i) {
        let Some(k) = crate::kw::bind_option(w) else {
            return Err(format!("'{kw} {}' : unknown keyword '{w}'.", arg(words, 1)));
        };
        if super::ssl::is_bind_ssl_option(k.name) {
            let value = words.get(i + 1).filter(|v| k.args > 0 && !v.is_empty());
            super::ssl::apply_bind_ssl(&mut ssl, k.name, value)
                .map_err(|e| format!("'{kw} {}' : {e}", arg(words, 1)))?;
            i += 1 + k.args;
            continue;
        }
        if !BIND_OPTIONS.contains(&k.name) {
            return Err(format!("'{kw} {}' : {}", arg(words, 1), not_yet(w)));
        }
        if k.name == "backlog" {
            backlog = u32::try_from(super::value::atol(arg(words, i + 1))).ok().filter(|&n| n > 0);
        }
        i += 1 + k.args;
    }
    if kw == "default-bind" {
        p.peers_build[idx].default_backlog = backlog;
        p.peers_build[idx].default_bind_ssl = ssl;
        return Ok(());
    }
    let spec = arg(words, 1);
    let addrs = super::addr::parse_listen_addrs(spec).map_err(|e| format!("'{kw} {spec}' : {e}"))?;
    let addr = match addrs.as_slice() {
        [a @ (ListenAddr::Inet(_) | ListenAddr::Fd(_))] => a.clone(),
        [ListenAddr::Unix(_)] => return Err(format!("'{kw} {spec}' : {}", not_yet("unix@"))),
        _ => return Err(format!("'{kw} {spec}' : {}", not_yet("several addresses"))),
    };
    let sec = &mut p.peers[idx];
    if let Some(b) = &sec.bind {
        return Err(one_listener(b));
    }
    p.peers_build[idx].bind_line = true;
    let backlog = backlog.or(p.peers_build[idx].default_backlog);
    sec.bind = Some(PeersBind { addr, backlog, ssl, span: span.clone() });
    Ok(())
}

fn parse_table(p: &mut Parser, idx: usize, words: &[String], span: &Span) -> Result<(), String> {
    let name = arg(words, 1);
    if let Some(b) = p.proxies.iter().find(|b| b.px.name == name && b.px.stick_table.is_some()) {
        let px = &b.px;
        let sp = px.stick_table.as_ref().map(|t| t.span.clone()).unwrap_or_default();
        let cap = b.kind.type_str();
        return Err(format!(
            "stick-table name '{name}' conflicts with table declared in {cap} '{name}' at {}:{}.",
            sp.file, sp.line
        ));
    }
    let mut tail = vec![words[0].clone()];
    tail.extend_from_slice(&words[2.min(words.len())..]);
    let def = super::stick::table_def_in_peers(&tail, span)?;
    p.peers[idx].tables.push(PeersTable { name: name.to_owned(), def });
    Ok(())
}

/// `localpeer <name>` in `global`: the local node's name, unless `-L` gave it or a
/// `peers` section was already read.
pub(super) fn parse_localpeer(p: &mut Parser, words: &[String], span: &Span) {
    if words.len() > 2 {
        p.alert(span, super::too_many_args("localpeer", &words[2]));
        return;
    }
    let name = arg(words, 1);
    if name.is_empty() {
        p.alert(span, "'localpeer' expects a name as an argument.");
    } else if p.localpeer_cmdline {
        p.warning(span, "'localpeer' ignored since it is already set by using the '-L' command line argument.");
    } else if !p.peers.is_empty() {
        p.warning(span, "'localpeer' ignored since it is used after 'peers' section.");
    } else {
        p.localpeer = name.to_owned();
    }
}

/// `tune.peers.max-updates-at-once <n>` in `global` (HAProxy's `atoi()`, more than 0).
pub(super) fn parse_max_updates(p: &mut Parser, words: &[String], span: &Span) {
    if words.len() > 2 {
        p.alert(span, super::too_many_args(&words[0], &words[2]));
        return;
    }
    match u32::try_from(super::value::atol(arg(words, 1))) {
        Ok(n) if n > 0 => p.global.peers_max_updates = n,
        _ => p.alert(span, format!("'{}' expects an integer argument greater than 0.", words[0])),
    }
}

/// The `write-to` targets that cannot be (HAProxy 3.x's `stktable_init()` messages, the
/// `peers` sections' tables first): a missing table, a target that is itself a source,
/// another key type or key size.
fn write_to_errors(p: &Parser) -> Vec<String> {
    use crate::model::{StickKeyType, StickTableDef};
    let mut all: Vec<(String, &StickTableDef, Option<&Span>)> = Vec::new();
    for s in &p.peers {
        all.extend(s.tables.iter().map(|t| (s.table_id(t), &t.def, Some(&t.def.span))));
    }
    all.extend(p.proxies.iter().filter_map(|b| b.px.stick_table.as_ref().map(|d| (b.px.name.clone(), d, None))));
    let key_size = |k: StickKeyType| match k {
        StickKeyType::Ip | StickKeyType::Integer => 4,
        StickKeyType::Ipv6 => 16,
        StickKeyType::String(n) => n + 1,
        StickKeyType::Binary(n) => n,
    };
    let mut out = Vec::new();
    for (id, def, span) in &all {
        let Some(name) = def.write_to.as_deref() else { continue };
        let err = match all.iter().find(|(other, _, _)| other == name) {
            None => format!("write-to: table '{name}' doesn't exist"),
            Some((_, w, _)) if w.write_to.is_some() => {
                format!("write-to: table '{name}' is already used as a source table")
            }
            Some((_, w, _)) if w.key.name() != def.key.name() => format!(
                "write-to: cannot mix table types ('{name}' has '{}' type and '{id}' has '{}' type)",
                w.key.name(),
                def.key.name()
            ),
            Some((_, w, _)) if key_size(w.key) != key_size(def.key) => format!(
                "write-to: cannot mix key sizes ('{name}' has '{}' key_size and '{id}' has '{}' key_size)",
                key_size(w.key),
                key_size(def.key)
            ),
            Some(_) => continue,
        };
        out.push(match span {
            Some(s) => format!("Parsing [{}:{}]: failed to initialize '{id}' stick-table: {err}.", s.file, s.line),
            None => format!("Proxy '{id}': failed to initialize stick-table: {err}."),
        });
    }
    out
}

/// The checks once every file is read: each `stick-table ... peers <name>` names a
/// section; sections without a local node are removed (with HAProxy's warning).
pub(super) fn finish(p: &mut Parser) {
    let mut diags = Vec::new();
    for b in &p.proxies {
        let Some(name) = b.px.stick_table.as_ref().and_then(|t| t.peers.as_deref()) else { continue };
        match p.peers.iter().find(|s| s.name == name) {
            None => diags.push(format!("Proxy '{}': unable to find sync peers '{name}'.", b.px.name)),
            Some(s) if !s.disabled && s.peers.is_empty() && s.bind.is_none() && s.tables.is_empty() => {
                diags.push(format!(
                    "Proxy '{}': unable to find local peer '{}' in peers section '{name}'.",
                    b.px.name, p.localpeer
                ))
            }
            Some(_) => {}
        }
    }
    diags.extend(write_to_errors(p));
    for msg in diags {
        p.diags.push(crate::diag::Diag::alert(None, msg));
    }
    for i in 0..p.peers.len() {
        let s = &p.peers[i];
        if !s.disabled && s.local.is_none() {
            let msg = format!("Removing incomplete section 'peers {}' (no peer named '{}').", s.name, p.localpeer);
            p.diags.push(crate::diag::Diag::warning(None, msg));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{alerts, parse, parse_ok};

    #[test]
    fn sections_peers_and_tables() {
        let cfg = parse_ok(
            "peers p\n bind 127.0.0.1:10000 backlog 5\n server rampart-test\n server B 127.0.0.1:10001\n \
             table t type string len 20 size 1k expire 30s store gpc0,http_req_rate(10s)\n",
        );
        let s = &cfg.peers[0];
        assert_eq!(s.local, Some(0));
        assert_eq!(s.peers[1].addr, Some("127.0.0.1:10001".parse().unwrap()));
        assert_eq!(s.bind.as_ref().unwrap().backlog, Some(5));
        assert_eq!(s.table_id(&s.tables[0]), "p/t");
        let cfg = parse_ok("peers p\n peer rampart-test 127.0.0.1:10000\n peer B 127.0.0.1:10001\n disabled\n");
        assert!(cfg.peers[0].disabled);
        assert!(matches!(cfg.peers[0].bind.as_ref().unwrap().addr, crate::model::ListenAddr::Inet(_)));
    }

    #[test]
    fn tls_between_nodes() {
        let cfg = parse_ok(
            "peers p\n default-bind ssl-min-ver TLSv1.3\n bind 127.0.0.1:10000 ssl crt a.pem\n \
             default-server ssl verify none\n server rampart-test\n server B 127.0.0.1:10001 crt c.pem\n \
             server C 127.0.0.1:10002 no-ssl\n",
        );
        let s = &cfg.peers[0];
        let ssl = &s.bind.as_ref().unwrap().ssl;
        assert!(ssl.enabled);
        assert_eq!(ssl.crts, [std::path::PathBuf::from("a.pem")]);
        assert_eq!(ssl.options.min_ver, Some(crate::model::TlsVersion::TlsV13));
        let b = &s.peers[1].tls;
        assert_eq!((b.ssl, b.verify, b.crt.as_deref()), (true, Some(false), Some("c.pem")));
        assert!(!s.peers[2].tls.ssl);
        let cfg = parse_ok("peers p\n peer rampart-test 127.0.0.1:10000\n");
        assert!(!cfg.peers[0].bind.as_ref().unwrap().ssl.enabled);
    }

    #[test]
    fn max_updates_at_once() {
        use crate::parse::tests::parse_ok;
        assert_eq!(parse_ok("global\n tune.peers.max-updates-at-once 50\n").global.peers_max_updates, 50);
        assert_eq!(
            alerts("global\n tune.peers.max-updates-at-once 0\n"),
            ["'tune.peers.max-updates-at-once' expects an integer argument greater than 0."]
        );
    }

    #[test]
    fn haproxy_messages() {
        assert_eq!(
            alerts("peers p\n peer A 127.0.0.1:1\n bind :2\n"),
            ["mixing \"peer\" and \"bind\" line is forbidden"]
        );
        assert_eq!(alerts("peers p\n shards 3\n"), ["unknown keyword 'shards' in 'peers' section"]);
        assert_eq!(alerts("peers\n"), ["missing name for peers section."]);
        assert_eq!(alerts("peers p q\n"), ["'peers' cannot handle unexpected argument 'q'."]);
        assert_eq!(
            alerts("peers p\n peer rampart-test 127.0.0.1:1\n peer rampart-test 127.0.0.1:2\n"),
            ["'peer rampart-test' : local peer name already referenced at t.cfg:2. rampart-test"]
        );
        assert_eq!(
            alerts("peers p\n bind :1\n bind :2\n"),
            ["One listener per \"peers\" section is authorized but another is already configured at [t.cfg:2]."]
        );
        assert_eq!(alerts("peers p\n table t type ip\n"), ["table: missing size."]);
        assert_eq!(alerts("peers p\n table t type ip size 1 peers p\n"), ["table: unknown argument 'peers'."]);
        assert_eq!(alerts("peers p\n peer B 127.0.0.1:1 check\n"), ["'peer B' : 'check' is not supported yet"]);
        assert_eq!(alerts("peers p\n default-server nope\n"), ["'default-server' : unknown keyword 'nope'."]);
        assert_eq!(alerts("peers p\n bind :1 ssl accept-proxy\n"), ["'bind :1' : 'accept-proxy' is not supported yet"]);
        let (_, d) = parse("backend b\n stick-table type ip size 1k peers nope\n");
        assert!(d.list.iter().any(|d| d.message == "Proxy 'b': unable to find sync peers 'nope'."));
        assert_eq!(alerts("peers p\n log 127.0.0.1:514 local0 nope\n"), ["log : unknown optional log level 'nope'"]);
        assert!(alerts("peers p\n log global\n no log\n").is_empty());
    }

    #[test]
    fn write_to_targets_are_checked_as_haproxy_3() {
        let msgs = |cfg: &str| parse(cfg).1.list.iter().map(|d| d.message.clone()).collect::<Vec<_>>();
        let m = msgs("backend b\n stick-table type ip size 1k write-to nope\n");
        assert!(
            m.contains(&"Proxy 'b': failed to initialize stick-table: write-to: table 'nope' doesn't exist.".into()),
            "{m:?}"
        );
        let m =
            msgs("backend a\n stick-table type ip size 1k write-to b\nbackend b\n stick-table type string size 1k\n");
        let want = "Proxy 'a': failed to initialize stick-table: write-to: cannot mix table types ('b' has 'string' type and 'a' has 'ip' type).";
        assert!(m.contains(&want.into()), "{m:?}");
        let m = msgs(
            "backend a\n stick-table type ip size 1k write-to b\nbackend b\n stick-table type ip size 1k write-to a\n",
        );
        assert!(m.iter().any(|x| x.ends_with("write-to: table 'b' is already used as a source table.")), "{m:?}");
        let m = msgs("backend a\n stick-table type string len 8 size 1k write-to b\nbackend b\n stick-table type string len 9 size 1k\n");
        assert!(
            m.iter().any(|x| x.ends_with("cannot mix key sizes ('b' has '10' key_size and 'a' has '9' key_size).")),
            "{m:?}"
        );
        assert!(msgs("backend a\n stick-table type ip size 1k write-to b\nbackend b\n stick-table type ip size 1k\n")
            .is_empty());
    }
}
