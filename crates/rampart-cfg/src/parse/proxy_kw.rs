//! The one-line proxy keywords: `mode`, `maxconn`, `default_backend`, `use_backend`,
//! `balance`, `timeout`, `http-reuse`, `retries`.
//!
//! HAProxy counterparts: their branches in `cfg_parse_listen()` (src/cfgparse-listen.c),
//! `proxy_parse_timeout()` (src/proxy.c), `backend_parse_balance()` (src/backend.c).

use std::time::Duration;

use crate::kw::{self, Support};
use crate::model::{BackendRef, Balance, Condition, HttpReuse, Mode, UseBackend};

use super::proxy::Ctx;
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

pub(super) fn parse_default_backend(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(true, "default_backend", "") {
        return;
    }
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

pub(super) fn parse_use_backend(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() {
        cx.alert("'use_backend' not allowed in 'defaults' section.");
        return;
    }
    if cx.ignored_without(true, "use_backend", "") {
        return;
    }
    let name = arg(words, 1);
    if name.is_empty() {
        cx.alert("'use_backend' expects a backend name.");
        return;
    }
    let cond = match parse_condition(words, 2, cx.span) {
        Ok(c) => c,
        Err(extra) => {
            cx.alert(format!("unexpected keyword '{extra}' after switching rule, only 'if' and 'unless' are allowed."));
            return;
        }
    };
    if name.contains('%') {
        cx.alert(not_yet("use_backend with a log-format backend name"));
        return;
    }
    let backend = BackendRef { name: name.to_owned(), index: usize::MAX, span: cx.span.clone() };
    cx.pb.px.use_backends.push(UseBackend { backend, cond });
}

/// Reads an optional `if|unless <words...>` starting at `at`. `Err` carries the word
/// found instead of `if`/`unless`.
pub(super) fn parse_condition<'w>(
    words: &'w [String],
    at: usize,
    span: &crate::span::Span,
) -> Result<Option<Condition>, &'w str> {
    match arg(words, at) {
        "" => Ok(None),
        "if" | "unless" => {
            Ok(Some(Condition { negate: words[at] == "unless", words: words[at + 1..].to_vec(), span: span.clone() }))
        }
        other => Err(other),
    }
}

pub(super) fn parse_balance(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(false, "balance", "") {
        return;
    }
    let algo = arg(words, 1);
    let name = if algo.starts_with("random") {
        "random"
    } else if algo.starts_with("hdr(") {
        "hdr"
    } else if algo.starts_with("rdp-cookie") {
        "rdp-cookie"
    } else {
        algo
    };
    match name {
        "" | "roundrobin" => cx.pb.px.balance = Balance::RoundRobin,
        "static-rr" => cx.pb.px.balance = Balance::StaticRr,
        _ if kw::BALANCE_ALGOS.iter().any(|a| a.name == name && a.support == Support::No) => {
            cx.alert(not_yet(&format!("balance {name}")));
        }
        _ => cx.alert(
            "balance only supports 'roundrobin', 'static-rr', 'leastconn', 'source', 'uri', 'url_param', \
             'hdr(name)' and 'rdp-cookie(name)' options.",
        ),
    }
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
