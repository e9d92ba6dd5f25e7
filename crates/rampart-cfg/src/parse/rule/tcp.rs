//! `tcp-request inspect-delay|connection|session|content ...` and
//! `tcp-response inspect-delay|content ...`, with HAProxy's section checks and messages
//! (which, unlike the HTTP rules', carry no "error detected in" prefix).
//!
//! HAProxy counterparts: `tcp_parse_tcp_req()`, `tcp_parse_tcp_rep()`,
//! `tcp_parse_request_rule()`, `tcp_parse_response_rule()` (src/tcp_rules.c),
//! `stream_parse_switch_mode()` (src/stream.c).

use std::time::Duration;

use crate::kw::{self, ActionKw, Support};
use crate::model::{TcpReqAction, TcpReqRule, TcpResAction, TcpResRule};

use super::super::ctx::Ctx;
use super::super::value::{atol, parse_time_ms, TimeError};
use super::super::{arg, not_yet};
use super::{http_act, invalid, sockopt, vars, warn_misplaced, ActErr, ActResult, Args, Stage};

/// The three `tcp-request` rule sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    Connection,
    Session,
    Content,
}

impl Where {
    fn word(self) -> &'static str {
        match self {
            Where::Connection => "connection",
            Where::Session => "session",
            Where::Content => "content",
        }
    }

    fn actions(self) -> &'static [ActionKw] {
        match self {
            Where::Content => kw::TCP_REQUEST_CONTENT_ACTIONS,
            _ => kw::TCP_REQUEST_CONNECTION_ACTIONS,
        }
    }

    /// The HAProxy 3.x actions accepted beside 2.6's (not in its messages).
    fn v3_actions(self) -> &'static [ActionKw] {
        match self {
            Where::Content => kw::TCP_REQUEST_CONTENT_V3_ACTIONS,
            _ => kw::TCP_REQUEST_CONNECTION_V3_ACTIONS,
        }
    }
}

/// "<type> '<name>'", or "defaults section" when parsing a `defaults` section, for the
/// messages that say so.
fn where_am_i(cx: &Ctx<'_>) -> String {
    if cx.is_defaults() {
        "defaults section".to_owned()
    } else {
        format!("{} '{}'", cx.pb.kind.type_str(), cx.pb.px.name)
    }
}

fn proxy_desc(cx: &Ctx<'_>) -> String {
    format!("{} '{}'", cx.pb.kind.type_str(), cx.pb.px.name)
}

pub(crate) fn parse_tcp_request(cx: &mut Ctx<'_>, words: &[String]) {
    let what = arg(words, 1);
    let place = where_am_i(cx);
    let set = match what {
        "" => return cx.alert(format!("missing argument for 'tcp-request' in {place}")),
        "inspect-delay" => {
            if cx.is_defaults() && cx.pb.px.name.is_empty() {
                return cx.alert("tcp-request inspect-delay is not allowed in anonymous 'defaults' sections");
            }
            return inspect_delay(cx, words, true);
        }
        "content" => Where::Content,
        "connection" | "session" => {
            if !cx.cap().frontend {
                let (kind, name) = (cx.pb.kind.type_str(), cx.pb.px.name.clone());
                return cx.alert(format!("tcp-request {what} is not allowed because {kind} {name} is not a frontend"));
            }
            if what == "connection" {
                Where::Connection
            } else {
                Where::Session
            }
        }
        other => {
            return cx.alert(format!(
                "'tcp-request' expects 'inspect-delay', 'connection', or 'content' in {place} (got '{other}')"
            ))
        }
    };
    if cx.is_defaults() && cx.pb.px.name.is_empty() {
        return cx.alert(format!("tcp-request {what} is not allowed in anonymous 'defaults' sections"));
    }
    let Some((action, cond)) = request_rule(cx, words, set) else { return };
    let rule = TcpReqRule { action, cond, span: cx.span.clone() };
    let (stage, list) = match set {
        Where::Connection => (Stage::TcpConnection, &mut cx.pb.px.rules.tcp_request_connection),
        Where::Session => (Stage::TcpSession, &mut cx.pb.px.rules.tcp_request_session),
        Where::Content => (Stage::TcpContent, &mut cx.pb.px.rules.tcp_request_content),
    };
    list.push(rule);
    warn_misplaced(cx, stage, "tcp-request");
}

/// `tcp-request inspect-delay` / `tcp-response inspect-delay`.
fn inspect_delay(cx: &mut Ctx<'_>, words: &[String], request: bool) {
    let kw = if request { "tcp-request" } else { "tcp-response" };
    let value = arg(words, 2);
    let usage = format!("'{kw} inspect-delay' expects a positive delay in milliseconds, in {}", proxy_desc(cx));
    let detail = match parse_time_ms(value) {
        _ if value.is_empty() => String::new(),
        Ok(ms) => match ms.trailing {
            None => {
                let slot = if request {
                    &mut cx.pb.px.tcp_request_inspect_delay
                } else {
                    &mut cx.pb.px.tcp_response_inspect_delay
                };
                if slot.is_some() {
                    let msg = format!("ignoring {kw} inspect-delay (was already defined) in {}", proxy_desc(cx));
                    return cx.warning(msg);
                }
                *slot = (ms.ms != 0).then(|| Duration::from_millis(u64::from(ms.ms)));
                return;
            }
            Some(c) => format!(" (unexpected character '{c}')"),
        },
        Err(TimeError::Overflow) => {
            format!(" (timer overflow in '{value}', maximum value is 2147483647 ms or ~24.8 days)")
        }
        Err(TimeError::Underflow) => format!(" (timer underflow in '{value}', minimum non-null value is 1 ms)"),
        Err(TimeError::BadChar(c)) => format!(" (unexpected character '{c}')"),
    };
    cx.alert(format!("{usage}{detail}"));
}

/// The action and condition of a `tcp-request` rule, or `None` once reported.
fn request_rule(
    cx: &mut Ctx<'_>,
    words: &[String],
    set: Where,
) -> Option<(TcpReqAction, Option<crate::model::Condition>)> {
    let word = arg(words, 2);
    let mut a = Args::new(words, 3, cx.span);
    let action = match request_action(cx, &mut a, set, word) {
        Ok(action) => action,
        Err(ActErr::Invalid(msg)) => {
            cx.alert(msg);
            return None;
        }
        Err(ActErr::NotYet(what)) => {
            cx.alert(not_yet(&what));
            return None;
        }
    };
    match a.condition() {
        Ok(cond) => Some((action, cond)),
        Err(found) => {
            let msg = format!(
                "'tcp-request {} {word}' only accepts 'if' or 'unless', in {} (got '{found}')",
                set.word(),
                proxy_desc(cx)
            );
            cx.alert(msg);
            None
        }
    }
}

fn request_action(cx: &mut Ctx<'_>, a: &mut Args<'_>, set: Where, word: &str) -> ActResult<TcpReqAction> {
    let rule = format!("tcp-request {}", set.word());
    match word {
        "accept" => return Ok(TcpReqAction::Accept),
        "reject" => return Ok(TcpReqAction::Reject),
        "capture" => return request_capture(cx, a, set),
        "expect-proxy" | "expect-netscaler-cip" => {
            if a.peek(0) != "layer4" {
                return invalid(format!(
                    "'{rule} {word}' only supports 'layer4' in {} (got '{}')",
                    proxy_desc(cx),
                    a.peek(0)
                ));
            }
            if set != Where::Connection {
                return invalid(format!("'{word} layer4' is not allowed in '{rule}' rules in {}", proxy_desc(cx)));
            }
            if word == "expect-proxy" {
                a.next();
                return Ok(TcpReqAction::ExpectProxy);
            }
            return Err(ActErr::NotYet(format!("{rule} {word}")));
        }
        _ if word.starts_with("track-sc") => {
            return Ok(TcpReqAction::TrackSc(super::super::stick::parse_track_sc(word, a)?));
        }
        // Lua actions: in content rules only; HAProxy 2.6 registers a script's
        // `tcp-req` actions as content actions (`hlua_register_action()`), so
        // connection and session rules refuse them with their list of actions
        _ if word.len() > 4 && word.starts_with("lua.") && matches!(set, Where::Content) => {
            return Ok(TcpReqAction::Lua(super::http::parse_lua_call(word, a)));
        }
        // `use-service lua.<name>`: the service's kind ('tcp') and the proxy's mode are
        // checked when the rules are compiled, once the scripts are loaded
        "use-service" if matches!(set, Where::Content) => {
            return match a.next() {
                "" => invalid(format!("'{rule}' expects a service name.")),
                lua if lua.len() > 4 && lua.starts_with("lua.") => Ok(TcpReqAction::UseService(lua.to_owned())),
                "prometheus-exporter" => {
                    invalid("Prometheus exporter service only available on 'http-request' rulesets")
                }
                _ => invalid(format!("'{}' unknown service name.", set.word())),
            };
        }
        _ => {}
    }
    let Some(act) = kw::find_action_v3(set.actions(), set.v3_actions(), word) else {
        let extra = ["accept", "reject", "capture", "track-sc", "expect-proxy", "expect-netscaler-cip"];
        let hint = kw::suggest_action(word, set.actions(), &extra)
            .map(|b| format!(" Did you mean '{b}' maybe ?"))
            .unwrap_or_default();
        return invalid(format!(
            "'{rule}' expects 'accept', 'reject', 'capture', 'expect-proxy', 'expect-netscaler-cip', 'track-sc0' ... \
             'track-sc2', {} in {} (got '{word}').{hint}\n",
            kw::action_list_text(set.actions()),
            proxy_desc(cx)
        ));
    };
    if act.support == Support::No {
        return Err(ActErr::NotYet(format!("{rule} {}", act.name)));
    }
    Ok(match act.name {
        "set-var" | "set-var-fmt" | "unset-var" => TcpReqAction::Var(vars::parse_var_action(word, a)?),
        "set-src" | "set-dst" | "set-src-port" | "set-dst-port" => {
            TcpReqAction::Addr(http_act::parse_addr(a, act.name)?)
        }
        "silent-drop" => TcpReqAction::SilentDrop,
        "set-log-level" => TcpReqAction::SetLogLevel(vars::parse_log_level(a)?),
        "set-mark" | "set-tos" | "set-fc-mark" | "set-fc-tos" => TcpReqAction::SetFc(sockopt::parse_fc(a, act.name)?),
        "set-bc-mark" | "set-bc-tos" => TcpReqAction::SetBc(sockopt::parse_fc(a, act.name)?),
        "do-log" => TcpReqAction::DoLog,
        "do-resolve" => TcpReqAction::DoResolve(vars::parse_do_resolve(word, a)?),
        "switch-mode" => switch_mode(cx, a)?,
        "set-priority-class" => TcpReqAction::SetPriorityClass(a.expr()?),
        "set-priority-offset" => TcpReqAction::SetPriorityOffset(a.expr()?),
        "sc-inc-gpc" | "sc-inc-gpc0" | "sc-inc-gpc1" | "sc-set-gpt" | "sc-set-gpt0" => {
            TcpReqAction::Sc(super::super::stick::parse_sc_action(word, a)?)
        }
        other => return Err(ActErr::NotYet(format!("{rule} {other}"))),
    })
}

/// `capture <expr> len <n>`: content rules of frontends only; declares a request
/// capture slot.
fn request_capture(cx: &mut Ctx<'_>, a: &mut Args<'_>, set: Where) -> ActResult<TcpReqAction> {
    let rule = format!("'tcp-request {} capture'", set.word());
    if !cx.cap().frontend {
        return invalid(format!("{rule} : proxy '{}' has no frontend capability", cx.pb.px.name));
    }
    if set != Where::Content {
        let msg = format!(
            "'capture {}' is not allowed in 'tcp-request {}' rules in {}",
            a.peek(0),
            set.word(),
            proxy_desc(cx)
        );
        return invalid(msg);
    }
    let expr = a.expr().map_err(|e| match e {
        ActErr::Invalid(m) => ActErr::Invalid(format!("{rule} : {m}")),
        other => other,
    })?;
    if a.peek(0) != "len" {
        return invalid(format!("{rule} : a positive 'len' argument is mandatory"));
    }
    let len = atol(a.peek(1));
    if len <= 0 {
        return invalid(format!("{rule} : length must be > 0"));
    }
    a.at += 2;
    let slot = http_act::declare_capture(cx, true, len as usize);
    Ok(TcpReqAction::Capture { expr, slot })
}

/// `switch-mode http [proto <mux>]`.
fn switch_mode(cx: &Ctx<'_>, a: &mut Args<'_>) -> ActResult<TcpReqAction> {
    let mode = a.peek(0);
    if mode.is_empty() {
        return invalid("'tcp-request switch-mode' expects a mode as argument.");
    }
    if !cx.cap().frontend {
        return invalid(format!(
            "'tcp-request switch-mode' not allowed because {} has no frontend capability",
            proxy_desc(cx)
        ));
    }
    if mode != "http" {
        return invalid(format!("'tcp-request switch-mode' expects a valid mode (got '{mode}')."));
    }
    a.at += 1;
    if a.peek(0) != "proto" {
        return Ok(TcpReqAction::SwitchModeHttp { proto: None });
    }
    let proto = a.peek(1);
    match proto {
        "" => invalid("'tcp-request switch-mode': 'proto' expects a protocol as argument."),
        "h1" | "h2" => {
            a.at += 2;
            Ok(TcpReqAction::SwitchModeHttp { proto: Some(proto.to_owned()) })
        }
        // Known multiplexers that cannot serve HTTP on the client side (HAProxy reports
        // it once the configuration is read).
        "fcgi" | "none" => invalid(format!(
            "Proxy '{}': MUX protocol '{proto}' is not compatible with the selected mode.",
            cx.pb.px.name
        )),
        _ => invalid(format!(
            "'tcp-request switch-mode': 'proto' expects a valid MUX protocol, if specified (got '{proto}')"
        )),
    }
}

pub(crate) fn parse_tcp_response(cx: &mut Ctx<'_>, words: &[String]) {
    let what = arg(words, 1);
    let backend_only = (cx.is_defaults() && cx.pb.px.name.is_empty()) || !cx.cap().backend;
    match what {
        "" => cx.alert(format!("missing argument for 'tcp-response' in {}", proxy_desc(cx))),
        "inspect-delay" | "content" if backend_only => cx.alert(format!(
            "tcp-response {what} is only allowed in 'backend' sections or 'defaults' section with a name"
        )),
        "inspect-delay" => inspect_delay(cx, words, false),
        "content" => {
            if let Some((action, cond)) = response_rule(cx, words) {
                let span = cx.span.clone();
                cx.pb.px.rules.tcp_response_content.push(TcpResRule { action, cond, span });
            }
        }
        other => cx.alert(format!(
            "'tcp-response' expects 'inspect-delay' or 'content' in {} (got '{other}')",
            proxy_desc(cx)
        )),
    }
}

fn response_rule(cx: &mut Ctx<'_>, words: &[String]) -> Option<(TcpResAction, Option<crate::model::Condition>)> {
    let word = arg(words, 2);
    let mut a = Args::new(words, 3, cx.span);
    let action = match response_action(cx, &mut a, word) {
        Ok(action) => action,
        Err(ActErr::Invalid(msg)) => {
            cx.alert(msg);
            return None;
        }
        Err(ActErr::NotYet(what)) => {
            cx.alert(not_yet(&what));
            return None;
        }
    };
    match a.condition() {
        Ok(cond) => Some((action, cond)),
        Err(found) => {
            let msg = format!(
                "'tcp-response content {word}' only accepts 'if' or 'unless', in {} (got '{found}')",
                proxy_desc(cx)
            );
            cx.alert(msg);
            None
        }
    }
}

fn response_action(cx: &Ctx<'_>, a: &mut Args<'_>, word: &str) -> ActResult<TcpResAction> {
    match word {
        "accept" => return Ok(TcpResAction::Accept),
        "reject" => return Ok(TcpResAction::Reject),
        "close" => return Ok(TcpResAction::Close),
        _ if word.len() > 4 && word.starts_with("lua.") => {
            return Ok(TcpResAction::Lua(super::http::parse_lua_call(word, a)));
        }
        _ => {}
    }
    let list = kw::TCP_RESPONSE_CONTENT_ACTIONS;
    let Some(act) = kw::find_action_v3(list, kw::TCP_RESPONSE_CONTENT_V3_ACTIONS, word) else {
        let hint = kw::suggest_action(word, list, &["accept", "reject", "close"])
            .map(|b| format!(" Did you mean '{b}' maybe ?"))
            .unwrap_or_default();
        return invalid(format!(
            "'tcp-response content' expects 'accept', 'close', 'reject', {} in {} (got '{word}').{hint}",
            kw::action_list_text(list),
            proxy_desc(cx)
        ));
    };
    if act.support == Support::No {
        return Err(ActErr::NotYet(format!("tcp-response content {}", act.name)));
    }
    Ok(match act.name {
        "set-var" | "set-var-fmt" | "unset-var" => TcpResAction::Var(vars::parse_var_action(word, a)?),
        "silent-drop" => TcpResAction::SilentDrop,
        "set-log-level" => TcpResAction::SetLogLevel(vars::parse_log_level(a)?),
        "set-mark" | "set-tos" | "set-fc-mark" | "set-fc-tos" => TcpResAction::SetFc(sockopt::parse_fc(a, act.name)?),
        "do-log" => TcpResAction::DoLog,
        other => return Err(ActErr::NotYet(format!("tcp-response content {other}"))),
    })
}
