//! The one-line proxy keywords: `mode`, `maxconn`, `default_backend`,
//! `timeout`, `http-reuse`, `retries`.
//!
//! HAProxy counterparts: their branches in `cfg_parse_listen()` (src/cfgparse-listen.c),
//! `proxy_parse_timeout()` (src/proxy.c).

use std::net::SocketAddr;
use std::time::Duration;

use crate::kw::{self, Support};
use crate::model::{BackendRef, HttpReuse, Mode};

use super::ctx::Ctx;
use super::value::{atol, is_integer, parse_time_ms, time_trailing_warning, TimeError};
use super::{arg, not_yet};

/// Reads an integer the way HAProxy does (`atol`), warning when the text is not a
/// plain number since HAProxy silently reads e.g. `10k` as 10.
pub(super) fn lenient_int(cx: &mut Ctx<'_>, what: &str, text: &str) -> i64 {
    let v = atol(text);
    if !is_integer(text) {
        cx.warning(format!("'{what}' : '{text}' is not a plain integer; read as {v}, as HAProxy does."));
    }
    v
}

/// `max-keep-alive-queue <n>`: read as C's `strtol` base 0 (`0x1f`, `017` too); -1, the
/// default, is no limit (any negative value too).
pub(super) fn parse_max_ka_queue(cx: &mut Ctx<'_>, words: &[String]) {
    let (name, value) = (words[0].as_str(), arg(words, 1));
    if value.is_empty() {
        return cx.alert(format!("'{name}' expects expects an integer value (or -1 to disable)"));
    }
    let n = match strtol_base0(value) {
        Ok(n) => n,
        Err(c) => return cx.alert(format!("'{name}' : unexpected character '{c}' in integer value '{value}'")),
    };
    if !cx.cap().backend {
        let (kind, px) = (cx.pb.kind.type_str(), cx.pb.px.name.clone());
        cx.warning(format!("{name} will be ignored because {kind} '{px}' has no backend capability"));
    }
    cx.pb.px.max_keep_alive_queue = u32::try_from(n).ok();
}

/// `text` read whole as C's `strtol(text, &end, 0)`: a sign, then `0x` hexadecimal, `0`
/// octal or decimal digits (saturating); the first character left over is the error.
fn strtol_base0(text: &str) -> Result<i64, char> {
    let (neg, t) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) if hex.starts_with(|c: char| c.is_ascii_hexdigit()) => (16, hex),
        _ if t.len() > 1 && t.starts_with('0') => (8, &t[1..]),
        _ => (10, t),
    };
    let mut n: i64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(radix).ok_or(c)?;
        n = n.saturating_mul(i64::from(radix)).saturating_add(i64::from(d));
    }
    if digits.is_empty() && radix == 10 {
        return Err(text.chars().next().unwrap_or('\0'));
    }
    Ok(if neg { -n } else { n })
}

/// `description <text...>`: the words joined by one space (not in `defaults`).
pub(super) fn parse_description(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() {
        return cx.alert("'description' not allowed in 'defaults' section.");
    }
    if arg(words, 1).is_empty() {
        return cx.alert("'description' expects a string argument.");
    }
    cx.pb.px.description = Some(words[1..].join(" "));
}

/// `disabled` / `enabled`.
pub(super) fn parse_disabled(cx: &mut Ctx<'_>, words: &[String]) {
    if !cx.too_many(words, 0, 0) {
        cx.pb.px.disabled = words[0] == "disabled";
    }
}

/// `http-send-name-header <name>` (backends; the name lowercased, as HAProxy).
pub(super) fn parse_send_name_header(cx: &mut Ctx<'_>, words: &[String]) {
    let ignored = cx.ignored_without(false, "http-send-name-header", "");
    if arg(words, 1).is_empty() {
        return cx.alert("'http-send-name-header' requires a header string.");
    }
    if !ignored {
        cx.pb.px.send_name_header = Some(words[1].to_ascii_lowercase());
    }
}

pub(super) fn parse_mode(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.too_many(words, 1, 0) {
        return;
    }
    match arg(words, 1) {
        "http" => cx.pb.px.mode = Mode::Http,
        "tcp" => cx.pb.px.mode = Mode::Tcp,
        "health" => {
            cx.alert("'mode health' doesn't exist anymore. Please use 'http-request return status 200' instead.")
        }
        other => cx.alert(format!("unknown proxy mode '{other}'.")),
    }
}

pub(super) fn parse_maxconn(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(true, "maxconn", " Maybe you want 'fullconn' instead ?") {
        return;
    }
    if arg(words, 1).is_empty() {
        cx.alert("'maxconn' expects an integer argument.");
        return;
    }
    let v = lenient_int(cx, "maxconn", arg(words, 1));
    cx.pb.px.maxconn = u32::try_from(v).ok().filter(|&v| v > 0);
    cx.too_many(words, 1, 0);
}

/// `fullconn <n>`: HAProxy reads it with atol() (any word is a number, negative is 0).
pub(super) fn parse_fullconn(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(false, "fullconn", " Maybe you want 'maxconn' instead ?") {
        return;
    }
    if cx.too_many(words, 1, 0) {
        return;
    }
    if arg(words, 1).is_empty() {
        cx.alert("'fullconn' expects an integer argument.");
        return;
    }
    let v = lenient_int(cx, "fullconn", arg(words, 1));
    cx.pb.px.fullconn = u32::try_from(v).unwrap_or(0);
}

pub(super) fn parse_backlog(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(true, "backlog", "") {
        return;
    }
    if cx.too_many(words, 1, 0) {
        return;
    }
    if arg(words, 1).is_empty() {
        cx.alert("'backlog' expects an integer argument.");
        return;
    }
    let v = lenient_int(cx, "backlog", arg(words, 1));
    cx.pb.px.backlog = u32::try_from(v).ok().filter(|&v| v > 0);
}

// `default_backend` in a backend: HAProxy warns that it is ignored but still checks the
// name it gives; so do we (the final model drops it).
pub(super) fn parse_default_backend(cx: &mut Ctx<'_>, words: &[String]) {
    cx.ignored_without(true, "default_backend", "");
    let name = arg(words, 1);
    if name.is_empty() {
        cx.alert("'default_backend' expects a backend name.");
        return;
    }
    if cx.too_many(words, 1, 0) {
        return;
    }
    cx.pb.px.default_backend = Some(BackendRef { name: name.to_owned(), index: usize::MAX, span: cx.span.clone() });
}

/// Which capability a timeout needs: frontend, backend, or either.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TimeoutCap {
    Front,
    Back,
    Any,
}

fn timeout_cap(name: &str) -> Option<TimeoutCap> {
    Some(match name {
        "client" | "client-fin" => TimeoutCap::Front,
        "server" | "connect" | "check" | "queue" | "tunnel" | "server-fin" => TimeoutCap::Back,
        "http-keep-alive" | "http-request" | "tarpit" => TimeoutCap::Any,
        _ => return None,
    })
}

fn timeout_slot<'t>(t: &'t mut crate::model::Timeouts, name: &str) -> Option<&'t mut Option<Duration>> {
    Some(match name {
        "client" => &mut t.client,
        "client-fin" => &mut t.client_fin,
        "server" => &mut t.server,
        "server-fin" => &mut t.server_fin,
        "connect" => &mut t.connect,
        "check" => &mut t.check,
        "queue" => &mut t.queue,
        "tunnel" => &mut t.tunnel,
        "http-keep-alive" => &mut t.http_keep_alive,
        "http-request" => &mut t.http_request,
        "tarpit" => &mut t.tarpit,
        _ => return None,
    })
}

pub(super) fn parse_timeout(cx: &mut Ctx<'_>, words: &[String]) {
    let name = arg(words, 1);
    let Some(need) = timeout_cap(name) else {
        cx.alert(format!(
            "'timeout' supports 'client', 'server', 'connect', 'check', 'queue', 'http-keep-alive', \
             'http-request', 'tunnel', 'tarpit', 'client-fin' and 'server-fin' (got '{name}')"
        ));
        return;
    };
    let value = arg(words, 2);
    if value.is_empty() {
        cx.alert(format!("'timeout {name}' expects an integer value (in milliseconds)"));
        return;
    }
    let ms = match parse_time_ms(value) {
        Ok(ms) => ms,
        Err(TimeError::Overflow) => {
            cx.alert(format!(
                "timer overflow in argument '{value}' to 'timeout {name}' (maximum value is 2147483647 ms or ~24.8 days)"
            ));
            return;
        }
        Err(TimeError::Underflow) => {
            cx.alert(format!(
                "timer underflow in argument '{value}' to 'timeout {name}' (minimum non-null value is 1 ms)"
            ));
            return;
        }
        Err(TimeError::BadChar(c)) => {
            cx.alert(format!("unexpected character '{c}' in 'timeout {name}'"));
            return;
        }
    };
    if let Some(c) = ms.trailing {
        cx.warning(time_trailing_warning(c, value));
    }
    if kw::TIMEOUTS.iter().any(|t| t.name == name && t.support == Support::No) {
        cx.alert(not_yet(&format!("timeout {name}")));
        return;
    }
    if let Some(extra) = words.get(3) {
        cx.alert(format!("'timeout {name}' : unexpected extra argument '{extra}' after value '{value}'."));
        return;
    }
    store_timeout(cx, name, need, ms.duration());
    cx.note(&format!("timeout {name}"));
}

fn store_timeout(cx: &mut Ctx<'_>, name: &str, need: TimeoutCap, value: Option<Duration>) {
    let cap = cx.cap();
    let has = match need {
        TimeoutCap::Front => cap.frontend,
        TimeoutCap::Back => cap.backend,
        TimeoutCap::Any => true,
    };
    if !has {
        let missing = if need == TimeoutCap::Back { "backend" } else { "frontend" };
        let msg = format!(
            "'timeout {name}' will be ignored because {} '{}' has no {missing} capability",
            cx.pb.kind.type_str(),
            cx.pb.px.name
        );
        cx.warning(msg);
        return;
    }
    let defaults = cx.is_defaults();
    let inherited = timeout_slot(&mut cx.pb.inherited_timeouts, name).map(|s| *s);
    let Some(slot) = timeout_slot(&mut cx.pb.px.timeouts, name) else { return };
    let overwriting = !defaults && inherited.is_some_and(|i| i != *slot);
    *slot = value;
    if overwriting {
        cx.warning(format!("overwriting 'timeout {name}' which was already specified"));
    }
}

pub(super) fn parse_http_reuse(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(false, "http-reuse", "") {
        return;
    }
    let mode = match arg(words, 1) {
        "never" => HttpReuse::Never,
        "safe" => HttpReuse::Safe,
        "aggressive" => HttpReuse::Aggressive,
        "always" => HttpReuse::Always,
        _ => {
            cx.alert("'http-reuse' only supports 'never', 'safe', 'aggressive', 'always'.");
            return;
        }
    };
    cx.pb.px.http_reuse = mode;
    cx.too_many(words, 0, 1);
}

pub(super) fn parse_retries(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(false, "retries", "") || cx.too_many(words, 1, 0) {
        return;
    }
    if arg(words, 1).is_empty() {
        cx.alert("'retries' expects an integer argument (dispatch counts for one).");
        return;
    }
    let v = lenient_int(cx, "retries", arg(words, 1));
    cx.pb.px.retries = u32::try_from(v.max(0)).unwrap_or(u32::MAX);
}

/// `source <addr>[:<port>]`: server connections bind to this local address first.
/// `usesrc` (transparent proxying) and `interface` are refused: they need privileges
/// rampart does not keep.
pub(super) fn parse_source(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(false, "source", "") {
        return;
    }
    let value = arg(words, 1);
    if value.is_empty() {
        cx.alert("'source' expects <addr>[:<port>] as argument.");
        return;
    }
    if let Some(extra) = words[2..].iter().find(|w| matches!(w.as_str(), "usesrc" | "interface")) {
        cx.alert(format!("'source {extra}' is not supported yet"));
        return;
    }
    if cx.too_many(words, 1, 0) {
        return;
    }
    match super::addr::parse_source_addr(value) {
        Ok(a) => cx.pb.px.source = Some(a),
        Err(e) => cx.alert(format!("'source' : {e}")),
    }
}

/// `dispatch <addr>:<port>` (HAProxy's `cfg_parse_listen()`): the address every stream
/// goes to when the backend has no server. A host name is resolved once, here, as
/// HAProxy does.
pub(super) fn parse_dispatch(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(false, "dispatch", "") {
        return;
    }
    let value = arg(words, 1);
    if words.len() > 2 {
        cx.alert(format!("'dispatch' cannot handle unexpected argument '{}'.", words[2]));
        return;
    }
    match dispatch_addr(value) {
        Ok(a) => cx.pb.px.dispatch = Some(a),
        Err(e) => cx.alert(format!("'dispatch' : {e}")),
    }
}

/// The address of a `dispatch` line, or HAProxy's complaint about it.
fn dispatch_addr(value: &str) -> Result<SocketAddr, String> {
    if value.is_empty() {
        return Err("'' resolves to an empty address (environment variable missing?)\n".to_owned());
    }
    if let Ok(a) = value.parse::<SocketAddr>() {
        return Ok(a);
    }
    let (host, port) = match value.rsplit_once(':') {
        Some((h, p)) if !p.is_empty() && !h.is_empty() => (h.trim_start_matches('[').trim_end_matches(']'), p),
        _ => return Err(format!("missing port specification in '{value}'")),
    };
    let invalid = || format!("invalid address: '{host}' in '{value}'");
    let port: u16 = port.parse().map_err(|_| format!("invalid address: '{value}'"))?;
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    let mut found = std::net::ToSocketAddrs::to_socket_addrs(&(host, port)).map_err(|_| invalid())?;
    found.next().ok_or_else(invalid)
}

/// `clitcpka-cnt|idle|intvl <value>`, `srvtcpka-*` (HAProxy's `proxy_parse_tcpka_*()`):
/// a count, or a delay in seconds unless a unit is given. Kept with a warning on a
/// proxy that lacks the side it applies to, as HAProxy does.
pub(super) fn parse_tcpka(cx: &mut Ctx<'_>, words: &[String]) {
    let name = words[0].as_str();
    let value = arg(words, 1);
    if value.is_empty() {
        cx.alert(format!("'{name}' expects an integer value"));
        return;
    }
    let cli = name.starts_with("cli");
    let (what, field) = name.split_once('-').unwrap_or((name, ""));
    let parsed = if field == "cnt" { tcpka_count(name, value).map(Err) } else { tcpka_delay(name, value).map(Ok) };
    let v = match parsed {
        Ok(v) => v,
        Err(msg) => {
            cx.alert(msg);
            return;
        }
    };
    let cap = cx.cap();
    if (cli && !cap.frontend) || (!cli && !cap.backend) {
        let (kind, px) = (cx.pb.kind.type_str(), cx.pb.px.name.clone());
        let side = if cli { "frontend" } else { "backend" };
        cx.warning(format!("{name} will be ignored because {kind} '{px}' has no {side} capability"));
    }
    let ka = if what == "clitcpka" { &mut cx.pb.px.options.clitcpka } else { &mut cx.pb.px.options.srvtcpka };
    match (field, v) {
        ("cnt", Err(n)) => ka.cnt = Some(n),
        ("idle", Ok(d)) => ka.idle = Some(d),
        (_, Ok(d)) => ka.intvl = Some(d),
        (_, Err(_)) => {}
    }
}

/// `strtol(.., 0)`: decimal, `0x` hexadecimal or `0` octal, nothing after it.
fn tcpka_count(name: &str, value: &str) -> Result<u32, String> {
    let (digits, radix) = match value.strip_prefix("0x").or_else(|| value.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None if value.len() > 1 && value.starts_with('0') => (&value[1..], 8),
        None => (value, 10),
    };
    match digits.find(|c: char| !c.is_digit(radix)) {
        Some(i) => {
            let c = digits[i..].chars().next().unwrap_or(' ');
            Err(format!("'{name}' : unexpected character '{c}' in integer value '{value}'"))
        }
        None => Ok(u32::from_str_radix(digits, radix).unwrap_or(u32::MAX)),
    }
}

/// A delay in seconds by default (HAProxy's `TIME_UNIT_S`).
fn tcpka_delay(name: &str, value: &str) -> Result<std::time::Duration, String> {
    let with_unit = if value.ends_with(|c: char| c.is_ascii_digit()) { format!("{value}s") } else { value.to_owned() };
    match super::value::parse_time_ms(&with_unit) {
        Ok(ms) => Ok(ms.duration().unwrap_or_default()),
        Err(super::value::TimeError::Overflow) => Err(format!(
            "timer overflow in argument '{value}' to '{name}' (maximum value is 2147483647 ms or ~24.8 days)"
        )),
        Err(super::value::TimeError::Underflow) => {
            Err(format!("timer underflow in argument '{value}' to '{name}' (minimum non-null value is 1 ms)"))
        }
        Err(super::value::TimeError::BadChar(c)) => {
            Err(format!("unexpected character '{c}' in argument to <{name}>.\n"))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::model::{Balance, HttpReuse, Mode};
    use crate::parse::tests::{alerts, parse_ok, warnings};

    #[test]
    fn source_keyword() {
        let cfg = parse_ok("defaults\n source 127.0.0.2\nbackend b\n source 127.0.0.3:0\nlisten l\n bind :80\n");
        assert_eq!(cfg.proxies[0].source, Some("127.0.0.3:0".parse().unwrap()));
        assert_eq!(cfg.proxies[1].source, Some("127.0.0.2:0".parse().unwrap()), "inherited");
        assert_eq!(alerts("backend b\n source 1.2.3.4 usesrc clientip\n"), ["'source usesrc' is not supported yet"]);
        assert_eq!(alerts("backend b\n source\n"), ["'source' expects <addr>[:<port>] as argument."]);
    }

    #[test]
    fn dispatch_keyword() {
        let cfg = parse_ok("backend b\n dispatch 127.0.0.1:8080\nlisten l\n bind :80\n dispatch [::1]:81\n");
        let (b, l) = (&cfg.proxies[0], &cfg.proxies[1]);
        assert_eq!(b.dispatch, Some("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(l.dispatch, Some("[::1]:81".parse().unwrap()));
        let hidden = b.implicit_server.as_deref().expect("hidden server");
        assert_eq!(hidden.addr, crate::model::ServerAddr::Inet("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(b.effective_servers().len(), 1);
        assert!(b.servers.is_empty());
        let cfg = parse_ok("backend b\n dispatch localhost:8080\n");
        assert_eq!(cfg.proxies[0].dispatch.map(|a| a.port()), Some(8080));
        assert_eq!(
            alerts("backend b\n dispatch 127.0.0.1\n"),
            ["'dispatch' : missing port specification in '127.0.0.1'"]
        );
        assert_eq!(
            alerts("backend b\n dispatch 1.2.3.4:80 x\n"),
            ["'dispatch' cannot handle unexpected argument 'x'."]
        );
        assert_eq!(
            alerts("backend b\n dispatch no.such.host.invalid:80\n"),
            ["'dispatch' : invalid address: 'no.such.host.invalid' in 'no.such.host.invalid:80'"]
        );
        assert_eq!(
            warnings("frontend f\n bind :80\n dispatch 1.2.3.4:80\n"),
            ["'dispatch' ignored because frontend 'f' has no backend capability."]
        );
        assert_eq!(
            alerts("backend b\n dispatch 1.2.3.4:80\n server s 1.2.3.4:81\n"),
            ["'dispatch alongside server lines' is not supported yet"]
        );
    }

    #[test]
    fn option_transparent() {
        let cfg = parse_ok("defaults\n option transparent\nbackend b\nbackend c\n no option transparent\n");
        let (b, c) = (&cfg.proxies[0], &cfg.proxies[1]);
        assert!(b.options.transparent && !c.options.transparent);
        let hidden = b.implicit_server.as_deref().expect("hidden server");
        assert_eq!(hidden.addr, crate::model::ServerAddr::Inet("0.0.0.0:0".parse().unwrap()));
        assert!(c.implicit_server.is_none());
        assert_eq!(
            warnings("frontend f\n bind :80\n option transparent\n"),
            ["'transparent' ignored because frontend 'f' has no backend capability."]
        );
        assert_eq!(
            alerts("backend b\n option transparent\n server s 1.2.3.4:81\n"),
            ["'option transparent alongside server lines' is not supported yet"]
        );
    }

    #[test]
    fn tcp_keepalive() {
        let cfg = parse_ok(
            "defaults\n option tcpka\n clitcpka-idle 30\n srvtcpka-intvl 500ms\nlisten l\n bind :80\n \
             clitcpka-cnt 0x5\n srvtcpka-cnt 3\n no option srvtcpka\n server s 127.0.0.1:1\n\
             frontend f\n bind :81\n no option tcpka\n option clitcpka\n",
        );
        let (l, f) = (&cfg.proxies[0].options, &cfg.proxies[1].options);
        assert!(l.clitcpka.on && !l.srvtcpka.on);
        assert_eq!((l.clitcpka.idle, l.clitcpka.cnt), (Some(Duration::from_secs(30)), Some(5)));
        assert_eq!((l.srvtcpka.intvl, l.srvtcpka.cnt), (Some(Duration::from_millis(500)), Some(3)));
        assert!(f.clitcpka.on && !f.srvtcpka.on);
        assert_eq!(
            alerts("listen l\n clitcpka-cnt 3x\n"),
            ["'clitcpka-cnt' : unexpected character 'x' in integer value '3x'"]
        );
        assert_eq!(alerts("listen l\n srvtcpka-idle\n"), ["'srvtcpka-idle' expects an integer value"]);
        assert_eq!(
            warnings("frontend f\n srvtcpka-idle 3\n"),
            ["srvtcpka-idle will be ignored because frontend 'f' has no backend capability"]
        );
    }

    #[test]
    fn simple_keywords() {
        let cfg = parse_ok(
            "frontend fe\n mode http\n bind :80\n maxconn 300\n default_backend be\n\
             use_backend be if { path_beg /a } || !{ method GET }\n use_backend be unless TRUE\n\
             backend be\n mode http\n balance static-rr\n http-reuse always\n retries 0\n",
        );
        let (fe, be) = (&cfg.proxies[0], &cfg.proxies[1]);
        assert_eq!((fe.mode, fe.maxconn), (Mode::Http, Some(300)));
        assert_eq!(fe.backlog, None);
        assert_eq!(fe.use_backends.len(), 2);
        let c0 = fe.use_backends[0].cond.as_ref().expect("cond");
        assert_eq!((c0.negate, c0.words.join(" ").as_str()), (false, "{ path_beg /a } || !{ method GET }"));
        assert!(fe.use_backends[1].cond.as_ref().is_some_and(|c| c.negate && c.words == ["TRUE"]));
        assert!(matches!(&fe.use_backends[1].target, crate::model::BackendTarget::Static(b) if b.index == 1));
        assert_eq!((be.balance.clone(), be.http_reuse, be.retries), (Balance::StaticRr, HttpReuse::Always, 0));
    }

    #[test]
    fn timeouts() {
        let cfg = parse_ok(
            "listen l\n bind :80\n timeout client 1m\n timeout server 30s\n timeout connect 500\n\
             timeout http-request 1500us\n timeout http-keep-alive 1h\n timeout queue 0\n timeout tunnel 1d\n\
             timeout client-fin 1s\n timeout server-fin 2s\n timeout check 3s\n",
        );
        let t = &cfg.proxies[0].timeouts;
        assert_eq!(t.client, Some(Duration::from_secs(60)));
        assert_eq!(t.server, Some(Duration::from_secs(30)));
        assert_eq!(t.connect, Some(Duration::from_millis(500)));
        assert_eq!(t.http_request, Some(Duration::from_millis(2)));
        assert_eq!(t.http_keep_alive, Some(Duration::from_secs(3600)));
        assert_eq!(t.queue, Some(Duration::from_millis(500)), "0 means unset, then connect applies");
        assert_eq!(t.tunnel, Some(Duration::from_secs(86400)));
        assert_eq!(
            (t.client_fin, t.server_fin, t.check),
            (Some(Duration::from_secs(1)), Some(Duration::from_secs(2)), Some(Duration::from_secs(3)))
        );
    }

    #[test]
    fn timeout_messages() {
        let a = |l: &str| alerts(&format!("listen l\n {l}\n"));
        assert_eq!(a("timeout client 1.5s"), ["unexpected character '.' in 'timeout client'"]);
        assert_eq!(
            a("timeout server 25d"),
            ["timer overflow in argument '25d' to 'timeout server' (maximum value is 2147483647 ms or ~24.8 days)"]
        );
        assert_eq!(a("timeout connect"), ["'timeout connect' expects an integer value (in milliseconds)"]);
        assert_eq!(a("timeout queue 5s 6s"), ["'timeout queue' : unexpected extra argument '6s' after value '5s'."]);
        assert!(a("timeout tarpit 5s").is_empty());
        assert!(a("timeout conect 5s")[0].ends_with("(got 'conect')"));
        assert_eq!(
            warnings("backend b\n timeout client 5s\n"),
            ["'timeout client' will be ignored because backend 'b' has no frontend capability"]
        );
        assert_eq!(
            warnings("defaults\n timeout client 1s\nfrontend f\n timeout client 2s\n timeout client 3s\n"),
            ["overwriting 'timeout client' which was already specified"]
        );
        assert_eq!(
            warnings("listen l\n timeout client 10sx\n")[0],
            "unexpected character 'x' after the timer value '10sx', only (us=microseconds,ms=milliseconds,s=seconds,m=minutes,h=hours,d=days) are supported. This will be reported as an error in next versions."
        );
    }

    #[test]
    fn max_keep_alive_queue_values() {
        let cfg = parse_ok(
            "defaults\n max-keep-alive-queue 4\nbackend a\nbackend b\n max-keep-alive-queue -1\n\
             backend c\n max-keep-alive-queue 0\nbackend d\n max-keep-alive-queue 0x10\nbackend e\n max-keep-alive-queue 010\n",
        );
        let got: Vec<_> = cfg.proxies.iter().map(|p| p.max_keep_alive_queue).collect();
        assert_eq!(got, [Some(4), None, Some(0), Some(16), Some(8)]);
    }

    #[test]
    fn keyword_messages() {
        let a = |l: &str| alerts(&format!("listen l\n {l}\n"));
        assert_eq!(a("mode foo"), ["unknown proxy mode 'foo'."]);
        assert_eq!(a("mode http x"), ["'mode' cannot handle unexpected argument 'x'."]);
        assert_eq!(a("maxconn"), ["'maxconn' expects an integer argument."]);
        assert_eq!(a("backlog"), ["'backlog' expects an integer argument."]);
        assert_eq!(a("backlog 1 2"), ["'backlog' cannot handle unexpected argument '2'."]);
        assert_eq!(a("maxconn 1 2"), ["'maxconn' cannot handle unexpected argument '2'."]);
        assert_eq!(a("fullconn"), ["'fullconn' expects an integer argument."]);
        assert_eq!(a("fullconn 100 200"), ["'fullconn' cannot handle unexpected argument '200'."]);
        assert_eq!(a("default_backend"), ["'default_backend' expects a backend name."]);
        assert_eq!(a("default_backend b c"), ["'default_backend' cannot handle unexpected argument 'c'."]);
        assert_eq!(a("use_backend"), ["'use_backend' expects a backend name."]);
        assert_eq!(
            a("use_backend b foo"),
            ["unexpected keyword 'foo' after switching rule, only 'if' and 'unless' are allowed."]
        );
        assert_eq!(a("http-reuse x"), ["'http-reuse' only supports 'never', 'safe', 'aggressive', 'always'."]);
        assert_eq!(a("http-reuse safe x"), ["'http-reuse safe' cannot handle unexpected argument 'x'."]);
        assert_eq!(a("retries"), ["'retries' expects an integer argument (dispatch counts for one)."]);
        assert_eq!(
            a("mode health"),
            ["'mode health' doesn't exist anymore. Please use 'http-request return status 200' instead."]
        );
        assert_eq!(
            warnings("listen l\n maxconn 10k\n"),
            ["'maxconn' : '10k' is not a plain integer; read as 10, as HAProxy does."]
        );
        assert_eq!(
            warnings("backend b\n default_backend x\n"),
            ["'default_backend' ignored because backend 'b' has no frontend capability."]
        );
        assert_eq!(
            a("max-keep-alive-queue"),
            ["'max-keep-alive-queue' expects expects an integer value (or -1 to disable)"]
        );
        assert_eq!(
            a("max-keep-alive-queue 12x"),
            ["'max-keep-alive-queue' : unexpected character 'x' in integer value '12x'"]
        );
        assert_eq!(
            warnings("frontend f\n max-keep-alive-queue 3\n"),
            ["max-keep-alive-queue will be ignored because frontend 'f' has no backend capability"]
        );
        assert_eq!(
            warnings("frontend f\n balance roundrobin\n"),
            ["'balance' ignored because frontend 'f' has no backend capability."]
        );
    }
}
