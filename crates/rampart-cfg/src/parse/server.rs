//! `server <name> <addr> [options]` and `default-server [options]`.
//!
//! HAProxy counterparts: `parse_server()`, `_srv_parse_init()`, `_srv_parse_kw()` and the
//! `srv_parse_*()` keyword parsers (src/server.c, src/check.c). HAProxy prefixes these
//! messages with `'server <backend>/<name>' : ` and ends each option error with an
//! extra period (its `display_parser_err()`); we keep both.

use std::net::SocketAddr;

use crate::kw::{self, Support};
use crate::model::{Observe, OnError, Server, ServerFqdn};

use super::addr::{check_probe_addr, ServerTarget};
use super::ctx::{Ctx, ServerSettings};
use super::value::{atol, invalid_char, parse_time_ms, TimeError};
use super::{arg, not_yet};

pub(super) fn parse_server(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() {
        cx.alert("'server' not allowed in 'defaults' section.");
        return;
    }
    if !server_allowed(cx, "server") {
        return;
    }
    let name = arg(words, 1);
    if arg(words, 2).is_empty() {
        cx.alert("'server' expects <name> and <addr>[:<port>] as arguments.");
        return;
    }
    if let Some(c) = invalid_char(name) {
        cx.alert(format!("character '{c}' is not permitted in server name '{name}'."));
        return;
    }
    let Some(s) = server_settings(cx, &words[3..], name) else { return };
    if let Some(id) = s.id {
        if let Some(other) = cx.pb.px.servers.iter().find(|o| o.id == Some(id)) {
            let ctx = server_ctx(cx, name);
            let msg = format!("{ctx}'id' : custom id {id} already used at {} ('server {}').", other.span, other.name);
            cx.alert(msg);
            return;
        }
    }
    let Some((addr, port_offset, fqdn)) = server_addr(cx, &words[2], &s, name, None) else { return };
    let srv = new_server(name.to_owned(), addr, port_offset, fqdn, s, cx.span.clone());
    cx.pb.px.servers.push(srv);
}

/// `server-template <prefix> <n>|<low>-<high> <fqdn>[:<port>] [options]`: servers
/// `<prefix><low>` to `<prefix><high>`, all resolving the same name (an SRV request
/// gives each its own target, port and weight).
pub(super) fn parse_server_template(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() {
        cx.alert("'server-template' not allowed in 'defaults' section.");
        return;
    }
    if !server_allowed(cx, "server-template") {
        return;
    }
    let prefix = arg(words, 1);
    if arg(words, 3).is_empty() {
        cx.alert("'server-template' expects <prefix> <nb | range> <addr>[:<port>] as arguments.");
        return;
    }
    if let Some(c) = prefix.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'))) {
        cx.alert(format!("character '{c}' is not permitted in server-template prefix '{prefix}'."));
        return;
    }
    let Some((low, high)) = super::server_dns::template_range(arg(words, 2)) else {
        cx.alert(format!("Wrong server-template number or range arg '{}'.", arg(words, 2)));
        return;
    };
    let Some(s) = server_settings(cx, &words[4..], prefix) else { return };
    if s.id.is_some() {
        cx.alert(format!("{}{}", server_ctx(cx, prefix), not_yet("id on server-template")));
        return;
    }
    for n in low..=high {
        let name = format!("{prefix}{n}");
        let Some((addr, port_offset, fqdn)) = server_addr(cx, &words[3], &s, prefix, Some(n)) else { return };
        let srv = new_server(name, addr, port_offset, fqdn, s.clone(), cx.span.clone());
        cx.pb.px.servers.push(srv);
    }
}

/// What messages about server `name` of the current proxy start with.
///
/// PERF: made only for a message (it was made for every server line).
fn server_ctx(cx: &Ctx<'_>, name: &str) -> String {
    format!("'server {}/{name}' : ", cx.pb.px.name)
}

/// The options of a `server` line over the `default-server` ones; `None` when one was
/// refused (reported).
fn server_settings(cx: &mut Ctx<'_>, opts: &[String], name: &str) -> Option<ServerSettings> {
    let mut s = cx.pb.defsrv.clone();
    parse_server_options(cx, opts, &mut s, name, true).then_some(s)
}

/// The address of server `srv`'s line: a literal one, or a name resolved as
/// `init-addr` says (`template`: the server's number in its `server-template`).
fn server_addr(
    cx: &mut Ctx<'_>,
    word: &str,
    s: &ServerSettings,
    srv: &str,
    template: Option<u32>,
) -> Option<(crate::model::ServerAddr, Option<i32>, Option<ServerFqdn>)> {
    let (name, addr, offset) = match super::addr::server_target(word) {
        Ok(ServerTarget::Addr(a, o)) => return Some((a, o, None)),
        Ok(ServerTarget::Name(name, a, o)) => (name, a, o),
        Err(e) => {
            cx.alert(format!("{}{e}", server_ctx(cx, srv)));
            return None;
        }
    };
    let fqdn = ServerFqdn { name, unresolved: false, template };
    let ctx = server_ctx(cx, srv);
    super::server_dns::init_addr(cx, &ctx, addr, offset, fqdn, &s.resolve)
}

pub(super) fn new_server(
    name: String,
    addr: crate::model::ServerAddr,
    port_offset: Option<i32>,
    fqdn: Option<ServerFqdn>,
    s: ServerSettings,
    span: crate::span::Span,
) -> Server {
    Server {
        name,
        addr,
        weight: s.weight,
        maxconn: s.maxconn,
        minconn: s.minconn,
        maxqueue: s.maxqueue,
        pool_max_conn: s.pool_max_conn,
        pool_low_conn: s.pool_low_conn,
        pool_purge_delay: s.pool_purge_delay,
        max_reuse: s.max_reuse,
        redir: s.redir,
        backup: s.backup,
        non_stick: s.non_stick,
        disabled: s.disabled,
        id: s.id,
        check: s.check,
        proxy: s.proxy,
        source: s.source,
        socks4: s.socks4,
        tfo: s.tfo,
        port_offset,
        tls: s.tls,
        cookie: s.cookie,
        proto: s.proto,
        ws: s.ws,
        fqdn,
        resolve: s.resolve,
        span,
    }
}

/// The hidden server of a backend with `dispatch` or `option transparent` and no
/// `server` line (HAProxy connects such streams without a server): it is not shown in
/// statistics and takes no `default-server` setting. Its address is the dispatch one,
/// or unset (0.0.0.0:0) for `transparent`, which connects to each stream's destination.
pub(super) fn implicit_server(
    px: &mut crate::model::Proxy,
    span: &crate::span::Span,
    out: &mut Vec<crate::diag::Diag>,
) {
    if !px.cap.backend || !(px.dispatch.is_some() || px.options.transparent) {
        return;
    }
    if !px.servers.is_empty() {
        let what = if px.dispatch.is_some() { "dispatch" } else { "option transparent" };
        out.push(crate::diag::Diag::alert(Some(span.clone()), not_yet(&format!("{what} alongside server lines"))));
        return;
    }
    let s = ServerSettings::default();
    px.implicit_server = Some(Box::new(Server {
        name: String::new(),
        addr: crate::model::ServerAddr::Inet(px.dispatch.unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)))),
        weight: s.weight,
        maxconn: None,
        minconn: 0,
        maxqueue: 0,
        pool_max_conn: s.pool_max_conn,
        pool_low_conn: s.pool_low_conn,
        pool_purge_delay: s.pool_purge_delay,
        max_reuse: s.max_reuse,
        redir: s.redir,
        backup: false,
        non_stick: false,
        disabled: false,
        id: Some(1),
        check: s.check,
        proxy: s.proxy,
        source: None,
        socks4: None,
        tfo: false,
        port_offset: None,
        tls: s.tls,
        cookie: None,
        proto: None,
        ws: s.ws,
        fqdn: None,
        resolve: Default::default(),
        span: span.clone(),
    }));
}

pub(super) fn parse_default_server(cx: &mut Ctx<'_>, words: &[String]) {
    if !server_allowed(cx, "default-server") {
        return;
    }
    let mut s = cx.pb.defsrv.clone();
    // As in HAProxy, options before an error still apply.
    parse_server_options(cx, &words[1..], &mut s, "default-server", false);
    cx.pb.defsrv = s;
}

/// HAProxy's `failifnotcap(PR_CAP_BE)`: an alert, unlike most capability checks.
fn server_allowed(cx: &mut Ctx<'_>, what: &str) -> bool {
    if cx.cap().backend {
        return true;
    }
    let msg = format!(
        "'{what}' not allowed because {} '{}' has no backend capability.",
        cx.pb.kind.type_str(),
        cx.pb.px.name
    );
    cx.alert(msg);
    false
}

/// Parses options into `s`; `false` if one was refused (reported). A refused option
/// does not stop the others from being checked, so that one run lists every refusal of
/// the line; an unknown word does, since how many words it takes is unknown. `srv` is
/// the server name used inside messages (`with_addr`: a `server` line, whose messages
/// start with [`server_ctx`]).
fn parse_server_options(cx: &mut Ctx<'_>, opts: &[String], s: &mut ServerSettings, srv: &str, with_addr: bool) -> bool {
    // what messages start with: nothing on `default-server`
    let ctx = |cx: &Ctx<'_>| if with_addr { server_ctx(cx, srv) } else { String::new() };
    let mut ok = true;
    let mut i = 0;
    while let Some(word) = opts.get(i) {
        let Some(k) = kw::server_option(word) else {
            let hint = if with_addr { "" } else { " Hint: no address was expected for this server." };
            let ctx = ctx(cx);
            let msg = match kw::suggest_server_option(word) {
                Some(best) => format!("{ctx}unknown keyword '{word}'; did you mean '{best}' maybe ?{hint}"),
                None => format!("{ctx}unknown keyword '{word}'.{hint}"),
            };
            cx.alert(msg);
            return false;
        };
        let value = opts.get(i + 1).map_or("", String::as_str);
        i += 1 + k.args;
        if word == "id" && !with_addr {
            cx.alert("'id' option is not accepted in default-server sections");
            ok = false;
            continue;
        }
        if k.support == Support::No || (word == "proto" && value == "none") {
            let what = if word == "proto" { format!("proto {value}") } else { word.to_owned() };
            cx.alert(format!("{}{}", ctx(cx), not_yet(&what)));
            ok = false;
            continue;
        }
        let applied = match super::server_ssl::apply_shared_tls_option(word, value, &mut s.tls, cx.span) {
            Some(r) => r,
            None => super::server_dns::apply_option(word, value, &mut s.resolve)
                .unwrap_or_else(|| apply_option(word, value, s, srv)),
        };
        match applied {
            Ok(()) => cx.note(&format!("server {word}")),
            Err(e) => {
                // HAProxy's display_parser_err() appends a period to every option error.
                cx.alert(format!("{}{e}.", ctx(cx)));
                ok = false;
            }
        }
    }
    ok
}

/// `proto <mux>` on a server: HAProxy 2.6's multiplexer names (`h1`, `h2`, `fcgi`;
/// `none` is refused as not supported before this is called).
fn parse_proto(v: &str) -> Result<crate::model::BindProto, String> {
    use crate::model::BindProto;
    match v {
        "" => Err("'proto' :  missing value".into()),
        "h1" => Ok(BindProto::H1),
        "h2" => Ok(BindProto::H2),
        "fcgi" => Ok(BindProto::Fcgi),
        _ => Err(format!("'proto' :  unknown MUX protocol '{v}'")),
    }
}

/// `ws auto|h1|h2`, with HAProxy 2.6's message (also for a missing value: HAProxy
/// sees an empty word there).
fn parse_ws(v: &str) -> Result<crate::model::ServerWs, String> {
    use crate::model::ServerWs;
    match v {
        "auto" => Ok(ServerWs::Auto),
        "h1" => Ok(ServerWs::H1),
        "h2" => Ok(ServerWs::H2),
        _ => Err("'ws' has to be 'auto', 'h1' or 'h2'".into()),
    }
}

/// `check-proto <mux>`: `h1`, `h2` or `none` (`fcgi` is refused as not supported).
fn parse_check_proto(v: &str) -> Result<crate::model::BindProto, String> {
    use crate::model::BindProto;
    match v {
        "" => Err("'check-proto' : missing value".into()),
        "h1" => Ok(BindProto::H1),
        "h2" => Ok(BindProto::H2),
        "none" => Ok(BindProto::None),
        "fcgi" => Err("'check-proto fcgi' is not supported yet".into()),
        _ => Err(format!("'check-proto' :  unknown MUX protocol '{v}'")),
    }
}

/// The `<addr>:<port>` of `socks4` (a port is required).
fn parse_socks4(word: &str, value: &str) -> Result<SocketAddr, String> {
    if value.is_empty() {
        return Err(format!("'{word}' expects <addr>:<port> as argument."));
    }
    let addr = super::addr::parse_source_addr(value).map_err(|e| format!("'{word} {value}' : {e}"))?;
    if addr.port() == 0 {
        return Err(format!("'{word} {value}' : missing port specification in '{value}'"));
    }
    Ok(addr)
}

/// Applies one supported option; `Err` is HAProxy's message for it.
pub(super) fn apply_server_option(word: &str, value: &str, s: &mut ServerSettings, srv: &str) -> Result<(), String> {
    apply_option(word, value, s, srv)
}

fn apply_option(word: &str, value: &str, s: &mut ServerSettings, srv: &str) -> Result<(), String> {
    match word {
        "backup" => s.backup = true,
        "no-backup" => s.backup = false,
        "tfo" => s.tfo = true,
        "no-tfo" => s.tfo = false,
        "non-stick" => s.non_stick = true,
        "stick" => s.non_stick = false,
        "proto" => s.proto = Some(parse_proto(value)?),
        "ws" => s.ws = parse_ws(value)?,
        // HAProxy's message ends in a newline it trims before adding its period
        "cookie" if value.is_empty() => return Err(format!("'{word}' expects <value> as argument.")),
        "cookie" => s.cookie = Some(value.to_owned()),
        "disabled" => s.disabled = true,
        "enabled" => s.disabled = false,
        "send-proxy" => s.proxy.version = Some(1),
        "send-proxy-v2" => s.proxy.version = Some(2),
        "no-send-proxy" | "no-send-proxy-v2" => s.proxy.version = None,
        "send-proxy-v2-ssl" | "send-proxy-v2-ssl-cn" => {
            s.proxy.version = Some(2);
            s.proxy.ssl = true;
            s.proxy.ssl_cn |= word == "send-proxy-v2-ssl-cn";
        }
        // as HAProxy: the header itself goes too
        "no-send-proxy-v2-ssl" | "no-send-proxy-v2-ssl-cn" => {
            s.proxy.version = None;
            s.proxy.ssl = false;
            s.proxy.ssl_cn &= word == "no-send-proxy-v2-ssl";
        }
        "proxy-v2-options" => parse_pp2_options(value, &mut s.proxy)?,
        "check-send-proxy" => s.proxy.check = true,
        "source" => s.source = Some(super::addr::parse_source_addr(value).map_err(|e| format!("'source' : {e}"))?),
        "no-check-send-proxy" => s.proxy.check = false,
        "socks4" => s.socks4 = Some(parse_socks4(word, value)?),
        "check-via-socks4" => s.check.via_socks4 = true,
        "check-proto" => s.check.proto = Some(parse_check_proto(value)?),
        "on-marked-down" if value == "shutdown-sessions" => s.check.shutdown_on_down = true,
        "on-marked-down" => return Err(format!("'{word}' expects 'shutdown-sessions' but got '{value}'")),
        "on-marked-up" if value == "shutdown-backup-sessions" => s.check.shutdown_backups_on_up = true,
        "on-marked-up" => return Err(format!("'{word}' expects 'shutdown-backup-sessions' but got '{value}'")),
        "check" => s.check.enabled = true,
        "no-check" => s.check.enabled = false,
        "observe" => {
            s.check.observe = match value {
                "" => return Err(format!("'{word}' expects <mode> as argument.")),
                "none" => None,
                "layer4" => Some(Observe::Layer4),
                "layer7" => Some(Observe::Layer7),
                _ => return Err(format!("'{word}' expects one of 'none', 'layer4', 'layer7' but got '{value}'")),
            }
        }
        "error-limit" => {
            if value.is_empty() {
                return Err(format!("'{word}' expects an integer argument."));
            }
            s.check.error_limit = Some(
                u32::try_from(atol(value)).ok().filter(|&v| v > 0).ok_or_else(|| format!("{word} has to be > 0."))?,
            );
        }
        "on-error" => {
            s.check.on_error = Some(match value {
                "fastinter" => OnError::FastInter,
                "fail-check" => OnError::FailCheck,
                "sudden-death" => OnError::SuddenDeath,
                "mark-down" => OnError::MarkDown,
                _ => {
                    return Err(format!(
                "'{word}' expects one of 'fastinter', 'fail-check', 'sudden-death' or 'mark-down' but got '{value}'"
            ))
                }
            })
        }
        "slowstart" => s.check.slowstart = parse_slowstart(word, value, srv)?,
        "track" => {
            if value.is_empty() {
                return Err(format!("'{word}' expects [<proxy>/]<server> as argument."));
            }
            s.check.track = Some(value.to_owned());
        }
        "agent-check" => s.check.agent = true,
        "no-agent-check" => s.check.agent = false,
        "agent-inter" => s.check.agent_inter = Some(check_delay(word, value, srv)?),
        "agent-send" => s.check.agent_send = Some(value.to_owned()),
        "agent-port" => {
            let p = atol(value);
            if value.is_empty() || !(1..=65535).contains(&p) {
                return Err(format!("'{word}' expects a port number as argument."));
            }
            s.check.agent_port = Some(p as u16);
        }
        "agent-addr" => {
            if value.is_empty() {
                return Err(format!("'{word}' expects an address as argument."));
            }
            s.check.agent_addr = Some(value.to_owned());
        }
        "weight" => {
            let w = atol(value);
            if !(0..=256).contains(&w) {
                return Err(format!("weight of server {srv} is not within 0 and 256 ({w})."));
            }
            s.weight = w as u32;
        }
        "maxconn" => s.maxconn = u32::try_from(atol(value)).ok().filter(|&m| m > 0),
        // HAProxy reads both with atol() and no check: a negative value is 0 (off)
        "minconn" => s.minconn = u32::try_from(atol(value)).unwrap_or(0),
        "maxqueue" => s.maxqueue = u32::try_from(atol(value)).unwrap_or(0),
        "pool-max-conn" => {
            if value.is_empty() {
                return Err(format!("'{word}' expects <value> as argument."));
            }
            let n = atol(value);
            if n < -1 {
                return Err(format!("'{word}' must be >= -1"));
            }
            s.pool_max_conn = u32::try_from(n).ok();
        }
        "redir" => {
            if value.is_empty() {
                return Err(format!("'{word}' expects <prefix> as argument."));
            }
            s.redir = Some(value.to_owned());
        }
        "max-reuse" => {
            if value.is_empty() {
                return Err(format!("'{word}' expects <value> as argument."));
            }
            // HAProxy's atoi(): any negative value is "no limit"
            s.max_reuse = u32::try_from(atol(value).clamp(i32::MIN.into(), i32::MAX.into())).ok();
        }
        "pool-low-conn" => {
            if value.is_empty() {
                return Err(format!("'{word}' expects <value> as argument."));
            }
            // HAProxy's atoi() into an unsigned: a negative value is a huge one
            s.pool_low_conn = atol(value).clamp(i32::MIN.into(), i32::MAX.into()) as i32 as u32;
        }
        "pool-purge-delay" => s.pool_purge_delay = purge_delay(word, value)?,
        "id" => {
            if value.is_empty() {
                return Err("'id' : expects an integer argument".into());
            }
            let id = u32::try_from(atol(value)).ok().filter(|&v| v > 0 && v <= i32::MAX as u32);
            s.id = Some(id.ok_or("'id' : custom id has to be > 0")?);
        }
        "inter" => s.check.inter = Some(check_delay(word, value, srv)?),
        "fastinter" => s.check.fastinter = Some(check_delay(word, value, srv)?),
        "downinter" => s.check.downinter = Some(check_delay(word, value, srv)?),
        "rise" => s.check.rise = Some(positive(word, value)?),
        "fall" => s.check.fall = Some(positive(word, value)?),
        "port" => {
            if value.is_empty() {
                return Err(format!("'{word}' expects a port number as argument."));
            }
            // COMPAT: HAProxy stores any integer here; out-of-range values cannot work.
            s.check.port = u16::try_from(atol(value)).ok().filter(|&p| p > 0);
        }
        "addr" => {
            if value.is_empty() {
                return Err(format!("'{word}' expects <ipv4|ipv6> as argument."));
            }
            check_probe_addr(value).map_err(|e| format!("'{word}' : {e}"))?;
            s.check.addr = Some(value.to_owned());
        }
        _ => return Err(not_yet(word)),
    }
    Ok(())
}

/// `proxy-v2-options <opt>[,<opt>]*`.
fn parse_pp2_options(value: &str, p: &mut crate::model::SendProxy) -> Result<(), String> {
    for opt in value.split(',') {
        match opt {
            "authority" => p.authority = true,
            "unique-id" => p.unique_id = true,
            "crc32c" => p.crc32c = true,
            "ssl" => p.ssl = true,
            "cert-cn" => (p.ssl, p.ssl_cn) = (true, true),
            "ssl-cipher" => (p.ssl, p.ssl_cipher) = (true, true),
            "cert-sig" => (p.ssl, p.ssl_cert_sig) = (true, true),
            "cert-key" => (p.ssl, p.ssl_cert_key) = (true, true),
            _ => return Err(format!("'{opt}' : proxy v2 option not implemented")),
        }
    }
    Ok(())
}

/// `pool-purge-delay <delay>`: any time, 0 included (no idle connection kept).
fn purge_delay(word: &str, value: &str) -> Result<std::time::Duration, String> {
    if value.is_empty() {
        return Err(format!("'{word}' expects <value> as argument."));
    }
    match parse_time_ms(value) {
        Ok(ms) => Ok(std::time::Duration::from_millis(u64::from(ms.ms))),
        Err(TimeError::Overflow) => Err(format!(
            "timer overflow in argument '{value}' to '{word}' (maximum value is 2147483647 ms or ~24.8 days)"
        )),
        Err(TimeError::Underflow) => {
            Err(format!("timer underflow in argument '{value}' to '{word}' (minimum non-null value is 1 ms)"))
        }
        Err(TimeError::BadChar(c)) => Err(format!("unexpected character '{c}' in argument to <{word}>.")),
    }
}

fn check_delay(word: &str, value: &str, srv: &str) -> Result<std::time::Duration, String> {
    if value.is_empty() {
        return Err(format!("'{word}' expects a delay as argument."));
    }
    match parse_time_ms(value) {
        Ok(ms) => ms.duration().ok_or_else(|| format!("invalid value 0 for argument '{word}' of server {srv}.")),
        Err(TimeError::Overflow) => Err(format!(
            "timer overflow in argument <{value}> to <{word}> of server {srv}, maximum value is 2147483647 ms (~24.8 days)."
        )),
        Err(TimeError::Underflow) => Err(format!(
            "timer underflow in argument <{value}> to <{word}> of server {srv}, minimum non-null value is 1 ms."
        )),
        // COMPAT: HAProxy 2.6 names 'agent-inter' here whatever the keyword; we name the right one.
        Err(TimeError::BadChar(c)) => Err(format!("unexpected character '{c}' in '{word}' argument of server {srv}.")),
    }
}

/// `slowstart <time>`: whole seconds, rounded up; 0 turns it off.
fn parse_slowstart(word: &str, value: &str, srv: &str) -> Result<Option<std::time::Duration>, String> {
    match parse_time_ms(value) {
        Ok(ms) => {
            let secs = ms.duration().map_or(0, |d| d.as_millis().div_ceil(1000) as u64);
            Ok((secs > 0).then(|| std::time::Duration::from_secs(secs)))
        }
        Err(TimeError::Overflow) => Err(format!(
            "overflow in argument <{value}> to <{word}> of server {srv}, maximum value is 2147483647 ms (~24.8 days)."
        )),
        Err(TimeError::Underflow) => {
            Err(format!("underflow in argument <{value}> to <{word}> of server {srv}, minimum non-null value is 1 ms."))
        }
        Err(TimeError::BadChar(c)) => Err(format!("unexpected character '{c}' in '{word}' argument of server {srv}.")),
    }
}

fn positive(word: &str, value: &str) -> Result<u32, String> {
    if value.is_empty() {
        return Err(format!("'{word}' expects an integer argument."));
    }
    u32::try_from(atol(value)).ok().filter(|&v| v > 0).ok_or_else(|| format!("'{word}' has to be > 0."))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::model::ServerAddr;
    use crate::parse::tests::{alerts, parse_ok};

    #[test]
    fn server_options_and_defaults() {
        let cfg = parse_ok(
            "defaults\n default-server inter 3s fall 2\nbackend b\n default-server weight 7 check\n\
             server s1 127.0.0.1:8080\n server s2 127.0.0.1:8081 weight 3 maxconn 10 backup disabled rise 4 fastinter 1s downinter 5s port 9 addr 127.0.0.2\n",
        );
        let s = &cfg.proxies[0].servers;
        assert_eq!((s[0].weight, s[0].check.enabled, s[0].check.fall), (7, true, Some(2)));
        assert_eq!(s[0].check.inter, Some(Duration::from_secs(3)));
        assert_eq!(s[0].addr, ServerAddr::Inet("127.0.0.1:8080".parse().expect("addr")));
        assert_eq!((s[1].weight, s[1].maxconn, s[1].backup, s[1].disabled), (3, Some(10), true, true));
        assert_eq!((s[0].minconn, s[0].maxqueue), (0, 0));
        assert_eq!((s[1].check.rise, s[1].check.port), (Some(4), Some(9)));
        assert_eq!(s[1].check.fastinter, Some(Duration::from_secs(1)));
        assert_eq!(s[1].check.downinter, Some(Duration::from_secs(5)));
        assert_eq!(s[1].check.addr.as_deref(), Some("127.0.0.2"));
        assert_eq!(s[1].span.line, 6);
    }

    #[test]
    fn queue_limits() {
        let cfg = parse_ok(
            "backend b\n fullconn 40\n default-server maxqueue 4\n\
             server s1 127.0.0.1:1 maxconn 10 minconn 2\n server s2 127.0.0.1:2 maxqueue -3 minconn x\n",
        );
        let px = &cfg.proxies[0];
        assert_eq!(px.fullconn, 40);
        assert_eq!((px.servers[0].minconn, px.servers[0].maxqueue), (2, 4));
        // atol(): negative and non-numeric values are 0, as in HAProxy
        assert_eq!((px.servers[1].minconn, px.servers[1].maxqueue), (0, 0));
    }

    #[test]
    fn pool_max_conn() {
        let cfg = parse_ok(
            "backend b\n default-server pool-max-conn 4\n server s1 127.0.0.1:1\n server s2 127.0.0.1:2 pool-max-conn -1\n server s3 127.0.0.1:3 pool-max-conn 0\n",
        );
        let max: Vec<_> = cfg.proxies[0].servers.iter().map(|s| s.pool_max_conn).collect();
        assert_eq!(max, [Some(4), None, Some(0)]);
        let cfg = parse_ok(
            "backend b\n default-server pool-low-conn 3\n server s 127.0.0.1:1 pool-low-conn 2\n server t 127.0.0.1:2\n server u 127.0.0.1:3 pool-low-conn -1\n server v 127.0.0.1:4 pool-low-conn x\n",
        );
        let low: Vec<_> = cfg.proxies[0].servers.iter().map(|s| s.pool_low_conn).collect();
        // atoi() into an unsigned, as HAProxy: -1 never lets a thread take one over
        assert_eq!(low, [2, 3, u32::MAX, 0]);
        assert_eq!(
            alerts("backend b\n server s 127.0.0.1:1 pool-low-conn\n"),
            ["'server b/s' : 'pool-low-conn' expects <value> as argument.."]
        );
        assert_eq!(
            alerts("backend b\n server t 127.0.0.1:80 pool-max-conn -2\n server u 127.0.0.1:80 pool-max-conn\n"),
            [
                "'server b/t' : 'pool-max-conn' must be >= -1.",
                "'server b/u' : 'pool-max-conn' expects <value> as argument.."
            ]
        );
    }

    #[test]
    fn pool_purge_delay() {
        let cfg = parse_ok(
            "backend b\n default-server pool-purge-delay 2s\n server s1 127.0.0.1:1\n server s2 127.0.0.1:2 pool-purge-delay 0\n server s3 127.0.0.1:3 pool-purge-delay 250\n",
        );
        let delays: Vec<_> = cfg.proxies[0].servers.iter().map(|s| s.pool_purge_delay.as_millis()).collect();
        assert_eq!(delays, [2000, 0, 250]);
        let cfg = parse_ok("backend b\n server s 127.0.0.1:1\n");
        assert_eq!(cfg.proxies[0].servers[0].pool_purge_delay, std::time::Duration::from_secs(5));
        assert_eq!(
            alerts("backend b\n server s 127.0.0.1:1 pool-purge-delay\n server t 127.0.0.1:1 pool-purge-delay 3x\n"),
            [
                "'server b/s' : 'pool-purge-delay' expects <value> as argument..",
                "'server b/t' : unexpected character 'x' in argument to <pool-purge-delay>.."
            ]
        );
    }

    #[test]
    fn server_proxy_protocol_options() {
        let cfg = parse_ok(
            "backend b\n default-server send-proxy check-send-proxy\n server s1 127.0.0.1:1\n \
             server s2 127.0.0.1:2 send-proxy-v2 proxy-v2-options crc32c,authority,unique-id no-check-send-proxy\n \
             server s3 127.0.0.1:3 no-send-proxy disabled enabled\n",
        );
        let s = &cfg.proxies[0].servers;
        assert_eq!((s[0].proxy.version, s[0].proxy.check), (Some(1), true));
        let p = s[1].proxy;
        assert_eq!((p.version, p.crc32c, p.authority, p.unique_id, p.check), (Some(2), true, true, true, false));
        assert_eq!((s[2].proxy.version, s[2].disabled), (None, false));
        let cfg = parse_ok("backend b\n server s 127.0.0.1:1 source 127.0.0.9:0\n");
        assert_eq!(cfg.proxies[0].servers[0].source, Some("127.0.0.9:0".parse().unwrap()));
        assert_eq!(cfg.proxies[0].servers[0].proto, None);
        let cfg =
            parse_ok("backend b\n default-server proto h2\n server s 127.0.0.1:1\n server t 127.0.0.1:1 proto h1\n");
        let s = &cfg.proxies[0].servers;
        assert_eq!((s[0].proto, s[1].proto), (Some(crate::model::BindProto::H2), Some(crate::model::BindProto::H1)));
        let a = |opts: &str| alerts(&format!("backend b\n server s 127.0.0.1:80 {opts}\n"));
        assert_eq!(a("proxy-v2-options crc32c,bogus"), ["'server b/s' : 'bogus' : proxy v2 option not implemented."]);
        let cfg = parse_ok("backend b\n server s 127.0.0.1:80 send-proxy-v2 proxy-v2-options cert-sig,cert-key\n");
        let p = cfg.proxies[0].servers[0].proxy;
        assert_eq!((p.ssl, p.ssl_cert_sig, p.ssl_cert_key, p.ssl_cn), (true, true, true, false));
        let cfg = parse_ok(
            "backend b\n server s 127.0.0.1:80 send-proxy-v2-ssl-cn\n server t 127.0.0.1:80 proxy-v2-options ssl-cipher\n\
             server u 127.0.0.1:80 send-proxy-v2-ssl-cn no-send-proxy-v2-ssl\n",
        );
        let p: Vec<_> = cfg.proxies[0]
            .servers
            .iter()
            .map(|s| (s.proxy.version, s.proxy.ssl, s.proxy.ssl_cn, s.proxy.ssl_cipher))
            .collect();
        assert_eq!(p, [(Some(2), true, true, false), (None, true, false, true), (None, false, true, false)]);
    }

    #[test]
    fn server_errors() {
        let a = |opts: &str| alerts(&format!("backend b\n server s 127.0.0.1:80 {opts}\n"));
        assert_eq!(a("wieght 3"), ["'server b/s' : unknown keyword 'wieght'; did you mean 'weight' maybe ?"]);
        assert_eq!(a("id 0"), ["'server b/s' : 'id' : custom id has to be > 0."]);
        assert_eq!(a("id x"), ["'server b/s' : 'id' : custom id has to be > 0."]);
        assert_eq!(a("id"), ["'server b/s' : 'id' : expects an integer argument."]);
        assert_eq!(a("weight 300"), ["'server b/s' : weight of server s is not within 0 and 256 (300).."]);
        assert_eq!(a("inter 0"), ["'server b/s' : invalid value 0 for argument 'inter' of server s.."]);
        assert_eq!(a("inter"), ["'server b/s' : 'inter' expects a delay as argument.."]);
        assert_eq!(a("rise 0"), ["'server b/s' : 'rise' has to be > 0.."]);
        assert_eq!(a("ssl verify none npn h2"), ["'server b/s' : 'npn' is not supported yet"]);
        assert_eq!(a("proto none"), ["'server b/s' : 'proto none' is not supported yet"]);
        assert_eq!(a("proto h3"), ["'server b/s' : 'proto' :  unknown MUX protocol 'h3'."]);
        assert_eq!(a("check-proto h3"), ["'server b/s' : 'check-proto' :  unknown MUX protocol 'h3'."]);
        assert_eq!(a("check-proto"), ["'server b/s' : 'check-proto' : missing value."]);
        assert_eq!(a("check-proto fcgi"), ["'server b/s' : 'check-proto fcgi' is not supported yet."]);
        assert_eq!(a("ws h3"), ["'server b/s' : 'ws' has to be 'auto', 'h1' or 'h2'."]);
        assert_eq!(a("ws"), ["'server b/s' : 'ws' has to be 'auto', 'h1' or 'h2'."]);
        let cfg = parse_ok("backend b\n default-server ws h2\n server s 127.0.0.1:1\n server t 127.0.0.1:1 ws h1\n server u 127.0.0.1:1 ws auto\n");
        let s = &cfg.proxies[0].servers;
        use crate::model::ServerWs;
        assert_eq!((s[0].ws, s[1].ws, s[2].ws), (ServerWs::H2, ServerWs::H1, ServerWs::Auto));
        let cfg = parse_ok("backend b\n default-server check-proto h2\n server s 127.0.0.1:1\n server t 127.0.0.1:1 check-proto none\n");
        let s = &cfg.proxies[0].servers;
        assert_eq!(
            (s[0].check.proto, s[1].check.proto),
            (Some(crate::model::BindProto::H2), Some(crate::model::BindProto::None))
        );
        // every refusal of the line is reported, up to an unknown word
        assert_eq!(
            a("namespace x weight 300 check inter 0 tcp-ut 5 wieght 3"),
            [
                "'server b/s' : 'namespace' is not supported yet",
                "'server b/s' : weight of server s is not within 0 and 256 (300)..",
                "'server b/s' : invalid value 0 for argument 'inter' of server s..",
                "'server b/s' : 'tcp-ut' is not supported yet",
                "'server b/s' : unknown keyword 'wieght'; did you mean 'weight' maybe ?"
            ]
        );
        assert_eq!(a("check 1"), ["'server b/s' : unknown keyword '1'."]);
        assert_eq!(
            a("socks4 127.0.0.1"),
            ["'server b/s' : 'socks4 127.0.0.1' : missing port specification in '127.0.0.1'."]
        );
        assert_eq!(a("socks4"), ["'server b/s' : 'socks4' expects <addr>:<port> as argument.."]);
        assert_eq!(
            a("on-marked-down foo"),
            ["'server b/s' : 'on-marked-down' expects 'shutdown-sessions' but got 'foo'."]
        );
        assert_eq!(a("on-marked-up"), ["'server b/s' : 'on-marked-up' expects 'shutdown-backup-sessions' but got ''."]);
        let cfg = parse_ok(
            "backend b\n server s 127.0.0.1:80 on-marked-down shutdown-sessions on-marked-up shutdown-backup-sessions\n",
        );
        let c = &cfg.proxies[0].servers[0].check;
        assert!(c.shutdown_on_down && c.shutdown_backups_on_up);
        let cfg =
            parse_ok("backend b\n default-server socks4 127.0.0.2:1080\n server s 127.0.0.1:80 check-via-socks4\n");
        let srv = &cfg.proxies[0].servers[0];
        assert_eq!((srv.socks4, srv.check.via_socks4), (Some("127.0.0.2:1080".parse().unwrap()), true));
        assert_eq!(
            a("observe layer9"),
            ["'server b/s' : 'observe' expects one of 'none', 'layer4', 'layer7' but got 'layer9'."]
        );
        assert_eq!(a("error-limit 0"), ["'server b/s' : error-limit has to be > 0.."]);
        assert_eq!(
            a("slowstart 1x"),
            ["'server b/s' : unexpected character 'x' in 'slowstart' argument of server s.."]
        );
        let cfg = crate::parse::tests::parse_ok(
            "backend b\n server s 127.0.0.1:80 slowstart 1500\n server t 127.0.0.1:80 slowstart 0\n",
        );
        assert_eq!(cfg.proxies[0].servers[0].check.slowstart, Some(Duration::from_secs(2)));
        assert_eq!(cfg.proxies[0].servers[1].check.slowstart, None);
        assert_eq!(
            a("on-error x"),
            ["'server b/s' : 'on-error' expects one of 'fastinter', 'fail-check', 'sudden-death' or 'mark-down' but got 'x'."]
        );
        assert_eq!(
            alerts("backend b\n default-server wieght 3\n"),
            ["unknown keyword 'wieght'; did you mean 'weight' maybe ? Hint: no address was expected for this server."]
        );
        assert_eq!(alerts("backend b\n server s\n"), ["'server' expects <name> and <addr>[:<port>] as arguments."]);
        assert_eq!(
            alerts("backend b\n server s/x 1.2.3.4:80\n"),
            ["character '/' is not permitted in server name 's/x'."]
        );
        assert_eq!(
            alerts("frontend f\n server s 1.2.3.4:80\n"),
            ["'server' not allowed because frontend 'f' has no backend capability."]
        );
        assert_eq!(alerts("defaults\n server s 1.2.3.4:80\n"), ["'server' not allowed in 'defaults' section."]);
        assert_eq!(
            alerts("backend b\n server s 127.0.0.1:1-2\n"),
            ["'server b/s' : port range not permitted here in '127.0.0.1:1-2'"]
        );
    }
}
