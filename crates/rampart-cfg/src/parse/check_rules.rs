//! Checks of the rules language that need the whole configuration: error pages and the
//! `errorfiles` of replies (against the `http-errors` sections), capture ids, `use-server`
//! targets, cookie capture length, `switch-mode http` without backend, and the named
//! `defaults` sections whose rules proxies run.
//!
//! HAProxy counterparts: `check_action_rules()` with the rules' `check_ptr`s
//! (`check_act_http_reply()`, `check_http_req_capture()`...), the `use-server` loop of
//! `check_config_validity()` (src/cfgparse.c), `proxy_check_errors()` (src/http_htx.c).

use crate::diag::Diag;
use crate::model::{
    CaptureSlot, DefaultsRules, HttpErrors, HttpReply, HttpReqAction, HttpResAction, Proxy, ServerTarget, TcpReqAction,
};
use crate::span::Span;

use super::ctx::ProxyBuild;
use super::http_errors::{resolve_errors, resolve_reply};

/// What HAProxy calls `tune.http.cookielen`'s default: cookie captures keep less.
/// HAProxy's default `tune.http.cookielen` (63) plus its NUL byte.
const COOKIE_LEN: usize = 64;

/// Resolves and checks the rule-related parts of proxy `b` into `px`.
pub(super) fn check_proxy_rules(
    b: &ProxyBuild,
    px: &mut Proxy,
    sections: &[HttpErrors],
    cookie_len: Option<usize>,
    out: &mut Vec<Diag>,
) {
    let (kind, name) = (b.kind.type_str(), b.px.name.as_str());
    for us in &mut px.use_servers {
        if let ServerTarget::Static { name: srv, index } = &mut us.target {
            match px.servers.iter().position(|s| &s.name == srv) {
                Some(i) => *index = i,
                None => out.push(Diag::alert(
                    Some(us.span.clone()),
                    format!("{kind} '{name}' : unable to find server '{srv}' referenced in a 'use-server' rule."),
                )),
            }
        }
    }
    check_rule_set(px, sections, out);
    let (files, replies) = resolve_errors(name, &b.errors, sections, out);
    px.errorfiles = files;
    px.http_error_replies = replies;
    if let Some(cookie) = &mut px.captures.cookie {
        // `tune.http.cookielen` and its NUL byte, as HAProxy counts it
        let limit = cookie_len.map_or(COOKIE_LEN, |n| n + 1);
        if cookie.len >= limit {
            let msg = format!("truncating capture length to {} bytes for {kind} '{name}'.", limit - 1);
            out.push(Diag::warning(Some(cookie.span.clone()), msg));
            cookie.len = limit - 1;
        }
    }
    let switches = px.rules.tcp_request_content.iter().any(|r| matches!(r.action, TcpReqAction::SwitchModeHttp { .. }));
    let routed = px.default_backend.is_some() || !px.use_backends.is_empty();
    if switches && !routed && !px.servers.is_empty() && px.mode == crate::model::Mode::Tcp {
        out.push(Diag::warning(
            Some(px.span.clone()),
            format!(
                "Proxy '{name}' : 'switch-mode http' configured for a tcp {kind} with no backend. \
                 Incoming connections upgraded to HTTP cannot be routed to TCP servers"
            ),
        ));
    }
}

/// The named `defaults` sections whose rules some proxy runs become
/// [`crate::model::Config::defaults`]; each proxy's `defaults_rules` is turned from an
/// index into the parser's sections into an index into that list. Their rules get the
/// same checks as a proxy's (once).
pub(super) fn collect_defaults(
    defaults: &[ProxyBuild],
    proxies: &mut [Proxy],
    builds: &[ProxyBuild],
    sections: &[HttpErrors],
    out: &mut Vec<Diag>,
) -> Vec<DefaultsRules> {
    let mut kept: Vec<(usize, DefaultsRules)> = Vec::new();
    for (px, b) in proxies.iter_mut().zip(builds) {
        let Some(d) = b.defaults_rules else { continue };
        let pos = match kept.iter().position(|(i, _)| *i == d) {
            Some(pos) => pos,
            None => {
                let def = &defaults[d];
                let mut holder = def.px.clone();
                check_rule_set(&mut holder, sections, out);
                kept.push((
                    d,
                    DefaultsRules { name: def.px.name.clone(), rules: holder.rules, span: def.px.span.clone() },
                ));
                kept.len() - 1
            }
        };
        px.defaults_rules = Some(pos);
    }
    kept.into_iter().map(|(_, d)| d).collect()
}

/// The `check_ptr` checks of HAProxy's rules: replies naming an `http-errors` section, and
/// capture ids (checked in sections with a frontend capability, where the slots are).
fn check_rule_set(px: &mut Proxy, sections: &[HttpErrors], out: &mut Vec<Diag>) {
    let name = px.name.clone();
    let frontend = px.cap.frontend;
    let (nreq, nres) = (px.captures.request.len(), px.captures.response.len());
    let rules = &mut px.rules;
    for rule in &mut rules.http_request {
        match &mut rule.action {
            HttpReqAction::Deny(r) | HttpReqAction::Tarpit(r) | HttpReqAction::Return(r) => {
                check_reply(&name, r, &rule.span, sections, out)
            }
            HttpReqAction::Capture(c) => {
                if let CaptureSlot::Id(id) = c.slot {
                    check_capture_id(frontend, &name, id, nreq, "http-request", &rule.span, out);
                }
            }
            _ => {}
        }
    }
    for rule in &mut rules.http_response {
        match &mut rule.action {
            HttpResAction::Deny(r) | HttpResAction::Return(r) => check_reply(&name, r, &rule.span, sections, out),
            HttpResAction::Capture { id, .. } => {
                check_capture_id(frontend, &name, *id, nres, "http-response", &rule.span, out)
            }
            _ => {}
        }
    }
    for rule in &rules.http_after_response {
        if let crate::model::HttpAfterResAction::Capture { id, .. } = rule.action {
            check_capture_id(frontend, &name, id, nres, "http-response", &rule.span, out);
        }
    }
}

fn check_reply(px: &str, reply: &mut HttpReply, span: &Span, sections: &[HttpErrors], out: &mut Vec<Diag>) {
    match resolve_reply(px, reply, sections) {
        Ok(None) => {}
        Ok(Some(warning)) => out.push(Diag::warning(Some(span.clone()), warning)),
        Err(alert) => out.push(Diag::alert(Some(span.clone()), alert)),
    }
}

fn check_capture_id(frontend: bool, px: &str, id: usize, slots: usize, list: &str, span: &Span, out: &mut Vec<Diag>) {
    if frontend && id >= slots {
        let msg = format!("Proxy '{px}': unable to find capture id '{id}' referenced by {list} capture rule.");
        out.push(Diag::alert(Some(span.clone()), msg));
    }
}

#[cfg(test)]
mod tests {
    use crate::diag::Level;
    use crate::parse::tests::{alerts, parse, parse_ok};

    #[test]
    fn capture_ids_are_checked_in_frontends() {
        let a = |l: &str| alerts(&format!("frontend f\n mode http\n declare capture response len 4\n {l}\n"));
        assert!(a("http-response capture res.hdr(x) id 0").is_empty());
        assert_eq!(
            a("http-after-response capture res.hdr(x) id 1"),
            ["Proxy 'f': unable to find capture id '1' referenced by http-response capture rule."]
        );
        assert!(alerts("backend b\n mode http\n http-request capture src id 7\n").is_empty(), "checked at run time");
    }

    #[test]
    fn defaults_rules_are_shared() {
        let cfg = parse_ok(
            "defaults web\n mode http\n acl local src 127.0.0.1\n http-request deny if !local\n\
             frontend a from web\n bind :80\n http-request allow\nfrontend b from web\n bind :81\n",
        );
        assert_eq!(cfg.defaults.len(), 1);
        assert_eq!(cfg.defaults[0].name, "web");
        assert_eq!(cfg.defaults[0].rules.acls[0].name, "local");
        assert_eq!(cfg.defaults[0].rules.http_request.len(), 1);
        assert_eq!((cfg.proxies[0].defaults_rules, cfg.proxies[1].defaults_rules), (Some(0), Some(0)));
        assert_eq!(cfg.proxies[0].rules.http_request.len(), 1, "the proxy's own rules stay apart");
        assert!(cfg.proxies[0].rules.acls.is_empty(), "a proxy does not see the ACLs of its defaults");
    }

    #[test]
    fn cookie_capture_and_switch_mode_warnings() {
        let (cfg, diags) = parse(
            "listen f\n mode tcp\n bind :80\n timeout client 1s\n tcp-request content switch-mode http\n\
             capture cookie S len 100\n server s 127.0.0.1:80\n",
        );
        let warnings: Vec<&str> =
            diags.list.iter().filter(|d| d.level == Level::Warning).map(|d| d.message.as_str()).collect();
        assert!(warnings.contains(&"truncating capture length to 63 bytes for proxy 'f'."));
        assert!(warnings.iter().any(|w| w.starts_with("Proxy 'f' : 'switch-mode http' configured for a tcp proxy")));
        assert_eq!(cfg.proxies[0].captures.cookie.as_ref().map(|c| c.len), Some(63));
    }
}
