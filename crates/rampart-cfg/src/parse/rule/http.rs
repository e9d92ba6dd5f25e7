//! `http-request`, `http-response` and `http-after-response` lines: where they are
//! allowed, the action lookup and its messages, the condition, the "previous action is
//! final" and rule-order warnings; the actions' arguments are read by `http_act`,
//! `reply`, `redirect` and `vars`.
//!
//! HAProxy counterparts: `parse_http_req_cond()`, `parse_http_res_cond()`,
//! `parse_http_after_res_cond()` (src/http_rules.c) and their callers in
//! `cfg_parse_listen()` (src/cfgparse-listen.c).

use crate::kw::{self, ActionKw, Support};
use crate::model::{
    Condition, HttpAfterResAction, HttpAfterResRule, HttpReqAction, HttpReqRule, HttpResAction, HttpResRule,
};

use super::super::ctx::Ctx;
use super::super::not_yet;
use super::{http_act, invalid, redirect, reply, sockopt, vars, warn_misplaced, ActErr, ActResult, Args, Stage};

/// Which HTTP rule list a line belongs to.
struct List {
    keyword: &'static str,
    actions: &'static [ActionKw],
    /// The HAProxy 3.x actions accepted beside 2.6's (not in its messages).
    v3: &'static [ActionKw],
}

const REQUEST: List =
    List { keyword: "http-request", actions: kw::HTTP_REQUEST_ACTIONS, v3: kw::HTTP_REQUEST_V3_ACTIONS };
const RESPONSE: List =
    List { keyword: "http-response", actions: kw::HTTP_RESPONSE_ACTIONS, v3: kw::HTTP_RESPONSE_V3_ACTIONS };
const AFTER: List = List {
    keyword: "http-after-response",
    actions: kw::HTTP_AFTER_RESPONSE_ACTIONS,
    v3: kw::HTTP_AFTER_RESPONSE_V3_ACTIONS,
};

pub(crate) fn parse_http_request(cx: &mut Ctx<'_>, words: &[String]) {
    let prev_final = cx.pb.px.rules.http_request.last().is_some_and(|r| r.cond.is_none() && req_final(&r.action));
    let Some((action, cond)) = parse_line(cx, words, &REQUEST, prev_final, request_action) else { return };
    warn_misplaced(cx, Stage::HttpRequest, "http-request");
    let span = cx.span.clone();
    cx.pb.px.rules.http_request.push(HttpReqRule { action, cond, span });
}

pub(crate) fn parse_http_response(cx: &mut Ctx<'_>, words: &[String]) {
    let prev_final = cx.pb.px.rules.http_response.last().is_some_and(|r| r.cond.is_none() && res_final(&r.action));
    let Some((action, cond)) = parse_line(cx, words, &RESPONSE, prev_final, response_action) else { return };
    let span = cx.span.clone();
    cx.pb.px.rules.http_response.push(HttpResRule { action, cond, span });
}

pub(crate) fn parse_http_after_response(cx: &mut Ctx<'_>, words: &[String]) {
    let prev_final = cx
        .pb
        .px
        .rules
        .http_after_response
        .last()
        .is_some_and(|r| r.cond.is_none() && r.action == HttpAfterResAction::Allow);
    let Some((action, cond)) = parse_line(cx, words, &AFTER, prev_final, after_response_action) else { return };
    let span = cx.span.clone();
    cx.pb.px.rules.http_after_response.push(HttpAfterResRule { action, cond, span });
}

/// Actions after which HAProxy evaluates no further rule (its `ACT_FLAG_FINAL`).
fn req_final(a: &HttpReqAction) -> bool {
    use HttpReqAction as A;
    match a {
        A::Redirect(r) => !r.ignore_empty,
        A::Allow | A::Deny(_) | A::Tarpit(_) | A::Auth { .. } | A::Return(_) => true,
        _ => false,
    }
}

fn res_final(a: &HttpResAction) -> bool {
    use HttpResAction as A;
    match a {
        A::Redirect(r) => !r.ignore_empty,
        A::Allow | A::Deny(_) | A::Return(_) => true,
        _ => false,
    }
}

/// `lua.<name>`: the actions Lua scripts register (HAProxy lists them once loaded).
static LUA_ACTION: ActionKw = ActionKw { name: "lua.", prefix: true, support: Support::Yes };

/// `lua.<name> [args...]`: the words up to the condition.
pub(super) fn parse_lua_call(word: &str, a: &mut Args<'_>) -> crate::model::LuaCall {
    let mut args = Vec::new();
    while !matches!(a.peek(0), "" | "if" | "unless") {
        args.push(a.next().to_owned());
    }
    crate::model::LuaCall { name: word["lua.".len()..].to_owned(), args }
}

type ActionParser<A> = fn(&mut Ctx<'_>, &mut Args<'_>, &str, &'static str) -> ActResult<A>;

/// Everything but storing the rule: returns the action and its condition, or `None`
/// after reporting why the line is refused.
fn parse_line<A>(
    cx: &mut Ctx<'_>,
    words: &[String],
    list: &List,
    prev_final: bool,
    parse: ActionParser<A>,
) -> Option<(A, Option<Condition>)> {
    let keyword = list.keyword;
    if cx.is_defaults() && cx.pb.px.name.is_empty() {
        cx.alert(format!("'{keyword}' not allowed in anonymous 'defaults' section."));
        return None;
    }
    if prev_final {
        cx.warning(format!(
            "previous '{keyword}' action is final and has no condition attached, further entries are NOOP."
        ));
    }
    let word = super::super::arg(words, 1);
    let act = match word.strip_prefix("lua.") {
        // registered by the scripts: checked against them at startup
        Some(name) if !name.is_empty() && list.keyword != "http-after-response" => Some(&LUA_ACTION),
        _ => kw::find_action_v3(list.actions, list.v3, word),
    };
    let Some(act) = act else {
        let missing = if word.is_empty() { " (missing argument)" } else { "" };
        let hint = kw::suggest_action(word, list.actions, &[])
            .map(|b| format!(" Did you mean '{b}' maybe ?"))
            .unwrap_or_default();
        let names = kw::action_list_text(list.actions);
        cx.alert(format!("'{keyword}' expects {names}, but got '{word}'{missing}.{hint}"));
        return None;
    };
    if act.support == Support::No {
        cx.alert(not_yet(&format!("{keyword} {}", act.name)));
        return None;
    }
    if act.name == "normalize-uri" && !cx.experimental {
        cx.alert(format!(
            "'{}' action is experimental, must be allowed via a global 'expose-experimental-directives'",
            act.name
        ));
        return None;
    }
    let mut a = Args::new(words, 2, cx.span);
    let action = match parse(cx, &mut a, word, act.name) {
        Ok(action) => action,
        Err(ActErr::Invalid(msg)) => {
            let (kind, name) = (cx.pb.kind.type_str(), cx.pb.px.name.clone());
            cx.alert(format!("error detected in {kind} '{name}' while parsing '{keyword} {word}' rule : {msg}."));
            return None;
        }
        Err(ActErr::NotYet(what)) => {
            cx.alert(not_yet(&what));
            return None;
        }
    };
    let cond = match a.cond.take() {
        Some(cond) => cond,
        None => match a.condition() {
            Ok(cond) => cond,
            Err(found) => {
                cx.alert(format!(
                    "'{keyword} {word}' expects either 'if' or 'unless' followed by a condition but found '{found}'."
                ));
                return None;
            }
        },
    };
    Some((action, cond))
}

fn request_action(cx: &mut Ctx<'_>, a: &mut Args<'_>, word: &str, name: &'static str) -> ActResult<HttpReqAction> {
    use HttpReqAction as A;
    Ok(match name {
        "allow" => A::Allow,
        "deny" => A::Deny(reply::parse_deny(cx, a, 403)?),
        "tarpit" => A::Tarpit(reply::parse_deny(cx, a, 500)?),
        "auth" => A::Auth { realm: http_act::parse_auth(a)? },
        "redirect" => {
            let (r, cond) = redirect::parse_redirect(a, true, false)?;
            a.cond = Some(cond);
            A::Redirect(r)
        }
        "return" => A::Return(reply::parse_reply(cx, a, 200)?),
        "set-header" | "add-header" | "del-header" | "replace-header" | "replace-value" => {
            A::Header(http_act::parse_header(a, name)?)
        }
        "set-method" | "set-path" | "set-pathq" | "set-query" | "set-uri" => A::Uri(http_act::parse_set_line(a, name)?),
        "replace-path" | "replace-pathq" | "replace-uri" => A::Uri(http_act::parse_replace_uri(a, name)?),
        "set-var" | "set-var-fmt" | "unset-var" => A::Var(vars::parse_var_action(word, a)?),
        "set-log-level" => A::SetLogLevel(vars::parse_log_level(a)?),
        "capture" => A::Capture(http_act::parse_req_capture(cx, a)?),
        "set-priority-class" => A::SetPriorityClass(a.expr()?),
        "set-priority-offset" => A::SetPriorityOffset(a.expr()?),
        "normalize-uri" => A::NormalizeUri(http_act::parse_normalizer(a)?),
        "set-src" | "set-dst" | "set-src-port" | "set-dst-port" => A::Addr(http_act::parse_addr(a, name)?),
        "wait-for-body" => A::WaitForBody(http_act::parse_wait_for_body(a)?),
        "silent-drop" => A::SilentDrop,
        "set-mark" | "set-tos" | "set-fc-mark" | "set-fc-tos" => A::SetFc(sockopt::parse_fc(a, name)?),
        "set-bc-mark" | "set-bc-tos" => A::SetBc(sockopt::parse_fc(a, name)?),
        "do-log" => A::DoLog,
        "use-service" => match a.next() {
            "" => return invalid("'use-service' expects a service name."),
            "prometheus-exporter" => A::UseService("prometheus-exporter".to_owned()),
            lua if lua.len() > 4 && lua.starts_with("lua.") => A::UseService(lua.to_owned()),
            other => return invalid(format!("'{other}' unknown service name.")),
        },
        "early-hint" => {
            let (name, value) = http_act::parse_name_fmt(a)?;
            A::EarlyHint { name, value }
        }
        "strict-mode" => A::StrictMode(http_act::parse_strict_mode(a)?),
        "disable-l7-retry" => A::DisableL7Retry,
        "set-timeout" => {
            let (timeout, value) = http_act::parse_set_timeout(cx, a)?;
            A::SetTimeout { timeout, value }
        }
        "reject" => A::Reject,
        "cache-use" => A::CacheUse(cache_name(cx, a)?),
        "track-sc" => A::TrackSc(super::super::stick::parse_track_sc(word, a)?),
        "sc-inc-gpc" | "sc-inc-gpc0" | "sc-inc-gpc1" | "sc-set-gpt" | "sc-set-gpt0" => {
            A::Sc(super::super::stick::parse_sc_action(word, a)?)
        }
        "do-resolve" => A::DoResolve(vars::parse_do_resolve(word, a)?),
        "send-spoe-group" => {
            let (engine, group) = (a.next(), a.next());
            if engine.is_empty() || group.is_empty() {
                return invalid("'send-spoe-group' expects 2 arguments: <engine-id> <group-id>");
            }
            A::SendSpoeGroup { engine: engine.to_owned(), group: group.to_owned() }
        }
        "add-acl" | "del-acl" | "set-map" | "del-map" => A::PatRef(http_act::parse_pat_ref(word, name, a)?),
        "lua." => A::Lua(parse_lua_call(word, a)),
        other => return Err(ActErr::NotYet(format!("http-request {other}"))),
    })
}

fn response_action(cx: &mut Ctx<'_>, a: &mut Args<'_>, word: &str, name: &'static str) -> ActResult<HttpResAction> {
    use HttpResAction as A;
    Ok(match name {
        "allow" => A::Allow,
        "deny" => A::Deny(reply::parse_deny(cx, a, 502)?),
        "set-header" | "add-header" | "del-header" | "replace-header" | "replace-value" => {
            A::Header(http_act::parse_header(a, name)?)
        }
        "set-status" => A::SetStatus(http_act::parse_set_status(a)?),
        "redirect" => {
            let (r, cond) = redirect::parse_redirect(a, true, true)?;
            a.cond = Some(cond);
            A::Redirect(r)
        }
        "return" => A::Return(reply::parse_reply(cx, a, 200)?),
        "set-var" | "set-var-fmt" | "unset-var" => A::Var(vars::parse_var_action(word, a)?),
        "capture" => {
            let (expr, id) = http_act::parse_res_capture(a)?;
            A::Capture { expr, id }
        }
        "set-log-level" => A::SetLogLevel(vars::parse_log_level(a)?),
        "silent-drop" => A::SilentDrop,
        "set-mark" | "set-tos" | "set-fc-mark" | "set-fc-tos" => A::SetFc(sockopt::parse_fc(a, name)?),
        "do-log" => A::DoLog,
        "strict-mode" => A::StrictMode(http_act::parse_strict_mode(a)?),
        "wait-for-body" => A::WaitForBody(http_act::parse_wait_for_body(a)?),
        "cache-store" => A::CacheStore(cache_name(cx, a)?),
        "track-sc" => A::TrackSc(super::super::stick::parse_track_sc(word, a)?),
        "sc-inc-gpc" | "sc-inc-gpc0" | "sc-inc-gpc1" | "sc-set-gpt" | "sc-set-gpt0" => {
            A::Sc(super::super::stick::parse_sc_action(word, a)?)
        }
        "add-acl" | "del-acl" | "set-map" | "del-map" => A::PatRef(http_act::parse_pat_ref(word, name, a)?),
        "lua." => A::Lua(parse_lua_call(word, a)),
        other => return Err(ActErr::NotYet(format!("http-response {other}"))),
    })
}

/// The cache a `cache-use` / `cache-store` rule names, whose filter it declares.
fn cache_name(cx: &mut Ctx<'_>, a: &mut Args<'_>) -> ActResult<String> {
    if a.ends_at(0) {
        return invalid("expects a cache name");
    }
    let name = a.next().to_owned();
    crate::parse::filter::implicit_cache_filter(cx, &name);
    Ok(name)
}

fn after_response_action(
    _cx: &mut Ctx<'_>,
    a: &mut Args<'_>,
    word: &str,
    name: &'static str,
) -> ActResult<HttpAfterResAction> {
    use HttpAfterResAction as A;
    Ok(match name {
        "allow" => A::Allow,
        "set-header" | "add-header" | "del-header" | "replace-header" | "replace-value" => {
            A::Header(http_act::parse_header(a, name)?)
        }
        "set-status" => A::SetStatus(http_act::parse_set_status(a)?),
        "set-var" | "set-var-fmt" | "unset-var" => A::Var(vars::parse_var_action(word, a)?),
        "capture" => {
            let (expr, id) = http_act::parse_res_capture(a)?;
            A::Capture { expr, id }
        }
        "strict-mode" => A::StrictMode(http_act::parse_strict_mode(a)?),
        "do-log" => A::DoLog,
        other => return Err(ActErr::NotYet(format!("http-after-response {other}"))),
    })
}
