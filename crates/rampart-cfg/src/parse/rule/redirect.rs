//! `redirect location|prefix|scheme <dst> [code <c>] [drop-query] [append-slash]
//! [ignore-empty] [set-cookie <c>] [clear-cookie <c>] [if|unless <cond>]`, as the proxy
//! keyword (destination taken literally) and as the `http-request` / `http-response`
//! action (destination is a log-format string; responses only take `location`).
//!
//! HAProxy counterparts: `http_parse_redirect_rule()` (src/http_rules.c), the `redirect`
//! branch of `cfg_parse_listen()` (src/cfgparse-listen.c).

use crate::model::{Condition, Redirect, RedirectKind, RedirectRule, RedirectTarget};

use super::super::ctx::Ctx;
use super::super::value::atol;
use super::{invalid, parse_condition, warn_misplaced, ActResult, Args, Stage};

/// Reads the redirect arguments from the cursor to the end of the line, the condition
/// included. `log_format` is set for the action, `response` for `http-response`.
pub(super) fn parse_redirect(
    a: &mut Args<'_>,
    log_format: bool,
    response: bool,
) -> ActResult<(Redirect, Option<Condition>)> {
    let mut kind = None;
    let mut dest = "";
    let mut code = 302;
    let (mut drop_query, mut append_slash, mut ignore_empty) = (false, false, false);
    let mut cookie: Option<String> = None;
    let mut cond = None;
    loop {
        let word = a.peek(0);
        let value = a.peek(1);
        let takes_value = matches!(word, "location" | "prefix" | "scheme" | "set-cookie" | "clear-cookie" | "code");
        if takes_value && value.is_empty() {
            return invalid(format!("missing argument for '{word}'"));
        }
        match word {
            "" => break,
            "location" | "prefix" | "scheme" => {
                kind = Some(match word {
                    "location" => RedirectKind::Location,
                    "prefix" => RedirectKind::Prefix,
                    _ => RedirectKind::Scheme,
                });
                dest = value;
            }
            "set-cookie" => cookie = Some(format!("{value}; path=/;")),
            "clear-cookie" => cookie = Some(format!("{value}; path=/; Max-Age=0;")),
            "code" => {
                let c = atol(value);
                if !matches!(c, 301..=303 | 307 | 308) {
                    return invalid(format!(
                        "'code': unsupported HTTP code '{value}' (must be one of 301, 302, 303, 307 or 308)"
                    ));
                }
                code = c as u16;
            }
            "drop-query" => drop_query = true,
            "append-slash" => append_slash = true,
            "ignore-empty" => ignore_empty = true,
            "if" | "unless" => {
                cond = parse_condition(a.words, a.at, a.span).ok().flatten();
                a.at = a.words.len();
                break;
            }
            other => {
                return invalid(format!(
                    "expects 'code', 'prefix', 'location', 'scheme', 'set-cookie', 'clear-cookie', 'drop-query', \
                     'ignore-empty' or 'append-slash' (was '{other}')"
                ))
            }
        }
        a.at += if takes_value { 2 } else { 1 };
    }
    let Some(kind) = kind else {
        return invalid("redirection type expected ('prefix', 'location', or 'scheme')");
    };
    if response && kind != RedirectKind::Location {
        return invalid("response only supports redirect type 'location'");
    }
    let target =
        if log_format { RedirectTarget::Format(a.fmt(dest)) } else { RedirectTarget::Literal(dest.to_owned()) };
    let redirect = Redirect { kind, target, code, drop_query, append_slash, ignore_empty, cookie };
    Ok((redirect, cond))
}

/// The proxy keyword `redirect`.
pub(crate) fn parse_redirect_keyword(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() {
        cx.alert("'redirect' not allowed in 'defaults' section.");
        return;
    }
    let mut a = Args::new(words, 1, cx.span);
    let (redirect, cond) = match parse_redirect(&mut a, false, false) {
        Ok(r) => r,
        Err(e) => {
            let msg = match e {
                super::ActErr::Invalid(m) | super::ActErr::NotYet(m) => m,
            };
            let (kind, name) = (cx.pb.kind.type_str(), cx.pb.px.name.clone());
            cx.alert(format!("error detected in {kind} '{name}' while parsing redirect rule : {msg}."));
            return;
        }
    };
    let span = cx.span.clone();
    cx.pb.px.redirects.push(RedirectRule { redirect, cond, span });
    warn_misplaced(cx, Stage::Redirect, "redirect");
}

#[cfg(test)]
mod tests {
    use crate::model::{HttpReqAction, HttpResAction, RedirectKind, RedirectTarget};
    use crate::parse::tests::{alerts, parse_ok, warnings};

    #[test]
    fn redirect_keyword_and_actions() {
        let cfg = parse_ok(
            "frontend f\n mode http\n bind :80\n redirect prefix https://x code 301 drop-query append-slash if TRUE\n\
             http-request redirect location /%[path] set-cookie A=1 ignore-empty unless FALSE\n\
             http-response redirect location /y clear-cookie B code 308\n",
        );
        let px = &cfg.proxies[0];
        let r = &px.redirects[0];
        assert_eq!(r.redirect.kind, RedirectKind::Prefix);
        assert_eq!(r.redirect.target, RedirectTarget::Literal("https://x".into()));
        assert_eq!((r.redirect.code, r.redirect.drop_query, r.redirect.append_slash), (301, true, true));
        assert_eq!(r.cond.as_ref().map(|c| c.words.clone()), Some(vec!["TRUE".to_owned()]));
        let HttpReqAction::Redirect(r) = &px.rules.http_request[0].action else { panic!("redirect") };
        assert!(matches!(&r.target, RedirectTarget::Format(f) if f.text == "/%[path]"));
        assert_eq!((r.code, r.ignore_empty, r.cookie.as_deref()), (302, true, Some("A=1; path=/;")));
        assert!(px.rules.http_request[0].cond.as_ref().is_some_and(|c| c.negate));
        let HttpResAction::Redirect(r) = &px.rules.http_response[0].action else { panic!("redirect") };
        assert_eq!((r.code, r.cookie.as_deref()), (308, Some("B; path=/; Max-Age=0;")));
    }

    #[test]
    fn redirect_errors() {
        let a = |l: &str| alerts(&format!("frontend f\n mode http\n bind :80\n {l}\n"));
        let kw = |m: &str| format!("error detected in frontend 'f' while parsing redirect rule : {m}.");
        let act = |m: &str| format!("error detected in frontend 'f' while parsing 'http-request redirect' rule : {m}.");
        assert_eq!(a("redirect"), [kw("redirection type expected ('prefix', 'location', or 'scheme')")]);
        assert_eq!(a("redirect location"), [kw("missing argument for 'location'")]);
        assert_eq!(
            a("redirect location / code 305"),
            [kw("'code': unsupported HTTP code '305' (must be one of 301, 302, 303, 307 or 308)")]
        );
        assert!(a("redirect location / foo")[0].ends_with("'ignore-empty' or 'append-slash' (was 'foo')."));
        assert_eq!(a("http-request redirect scheme"), [act("missing argument for 'scheme'")]);
        assert_eq!(
            a("http-response redirect prefix /"),
            ["error detected in frontend 'f' while parsing 'http-response redirect' rule : response only supports redirect type 'location'."]
        );
        assert_eq!(alerts("defaults d\n redirect location /\n"), ["'redirect' not allowed in 'defaults' section."]);
    }

    #[test]
    fn redirect_order_warnings() {
        let w = warnings("frontend f\n mode http\n use_backend b\n redirect location /\nbackend b\n");
        assert_eq!(w, ["a 'redirect' rule placed after a 'use_backend' rule will still be processed before."]);
    }
}
