//! What a proxy or `defaults` section takes from the `defaults` section it is built
//! from: settings (by capability), error pages, capture slots, and the rules of a named
//! `defaults` section, with HAProxy's restrictions on who may use them.
//!
//! HAProxy counterparts: `proxy_defproxy_cpy()` (src/proxy.c) and the `defaults`
//! checks at the head of `cfg_parse_listen()` (src/cfgparse-listen.c).

use crate::span::Span;

use super::ctx::{fresh_build, Kind, ProxyBuild};
use super::Parser;

/// A new section initialised from `def`, copying only what its capabilities use, as
/// `proxy_defproxy_cpy()` does. Rules are copied by the caller (they have restrictions).
pub(super) fn inherit(def: &ProxyBuild, name: &str, kind: Kind, span: &Span) -> ProxyBuild {
    let mut pb = fresh_build(name, kind, span);
    let (d, px) = (&def.px, &mut pb.px);
    let cap = kind.cap();
    px.mode = d.mode;
    px.disabled = d.disabled;
    px.send_name_header = d.send_name_header.clone();
    px.options = d.options.clone();
    px.http_reuse = d.http_reuse;
    pb.errors = def.errors.clone();
    px.logs = d.logs.clone();
    px.log_tag = d.log_tag.clone();
    // as `proxy_defproxy_cpy()`: the algorithms and types, not `offload`
    px.compression = d.compression.as_ref().map(|c| crate::model::Compression { offload: false, ..c.clone() });
    px.tcp_request_inspect_delay = d.tcp_request_inspect_delay;
    px.tcp_response_inspect_delay = d.tcp_response_inspect_delay;
    px.unique_id_format = d.unique_id_format.clone();
    px.unique_id_header = d.unique_id_header.clone();
    pb.defsrv = def.defsrv.clone();
    px.stats = d.stats.clone();
    let (dt, t) = (&d.timeouts, &mut px.timeouts);
    if cap.frontend {
        px.maxconn = d.maxconn;
        px.backlog = d.backlog;
        px.default_backend = d.default_backend.clone();
        t.client = dt.client;
        t.client_fin = dt.client_fin;
        pb.logformat_span = def.logformat_span.clone();
        px.captures = d.captures.clone();
        px.monitor_uri = d.monitor_uri.clone();
    } else {
        // The log format is a frontend setting; a backend does not inherit it.
        px.options.httplog = false;
        px.options.tcplog = false;
        px.options.log_format = None;
        px.options.error_log_format = None;
    }
    if cap.backend {
        px.balance = d.balance.clone();
        px.cookie = d.cookie.clone();
        px.persist_rdp_cookie = d.persist_rdp_cookie.clone();
        px.hash_type = d.hash_type;
        px.hash_balance_factor = d.hash_balance_factor;
        px.server_state = d.server_state.clone();
        px.fullconn = d.fullconn;
        px.max_keep_alive_queue = d.max_keep_alive_queue;
        px.retries = d.retries;
        px.source = d.source;
        px.retry_on_conn_failure = d.retry_on_conn_failure;
        px.retry_on_response = d.retry_on_response.clone();
        t.connect = dt.connect;
        t.server = dt.server;
        t.server_fin = dt.server_fin;
        t.check = dt.check;
        t.queue = dt.queue;
        t.tunnel = dt.tunnel;
    }
    t.http_request = dt.http_request;
    t.http_keep_alive = dt.http_keep_alive;
    t.tarpit = dt.tarpit;
    pb.inherited_timeouts = px.timeouts.clone();
    pb
}

pub(super) fn warn_mixed_refs(p: &mut Parser, i: usize, span: &Span) {
    let d = &p.defaults[i];
    if d.explicit_ref && d.implicit_ref {
        let msg = format!(
            "defaults section '{}' (declared at {}) is explicitly referenced by another proxy and implicitly used here. \
             To avoid any ambiguity don't mix both usage. Add a last defaults section not explicitly used or always use explicit references.",
            d.px.name, d.px.span
        );
        // COMPAT: HAProxy 2.6 prints an alert here but goes on (ERR_WARN only).
        p.diags.push(crate::Diag { level: crate::Level::SoftAlert, ..crate::Diag::alert(Some(span.clone()), msg) });
    }
}

/// Rules of a named `defaults` section run before the proxy's own, with HAProxy's
/// restrictions on who may use them; the capture slots a `defaults` section declared
/// may not go to a backend.
pub(super) fn take_default_rules(p: &mut Parser, i: usize, kind: Kind, pb: &mut ProxyBuild, span: &Span) {
    let def = &p.defaults[i];
    let at = def.px.span.clone();
    if kind.cap().backend && !(def.px.captures.request.is_empty() && def.px.captures.response.is_empty()) {
        let msg = format!("backend or defaults sections cannot inherit from a defaults section defining capptures (defaults section at {at}).");
        p.alert(span, msg);
    }
    let def = &p.defaults[i];
    let rules = &def.px.rules;
    if !rules.has_rules() {
        return;
    }
    let msg = if kind == Kind::Listen {
        "a listen section cannot inherit from a defaults section defining TCP/HTTP rules.".to_owned()
    } else if def.rules_taken_by.is_some_and(|k| k != kind) {
        format!("frontends and backends cannot inherit from the same defaults section if it defines TCP/HTTP rules (defaults section at {at}).")
    } else if kind == Kind::Backend
        && !(rules.tcp_request_connection.is_empty() && rules.tcp_request_session.is_empty())
    {
        format!("a backend section cannot inherit from a defaults section defining 'tcp-request connection' or 'tcp-request session' rules (defaults section at {at}).")
    } else if kind == Kind::Frontend && !rules.tcp_response_content.is_empty() {
        format!("a frontend section cannot inherit from a defaults section defining 'tcp-response content' rules (defaults section at {at}).")
    } else {
        pb.defaults_rules = Some(i);
        p.defaults[i].rules_taken_by = Some(kind);
        return;
    };
    p.alert(span, msg);
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{alerts, parse_ok};

    #[test]
    fn rules_of_a_named_defaults_run_first() {
        use crate::model::HttpReqAction;
        let cfg = parse_ok(
            "defaults d\n mode http\n http-request return status 403 if { path /a }\n\
             frontend f\n bind :80\n http-request return status 404\n",
        );
        let status = |a: &HttpReqAction| match a {
            HttpReqAction::Return(r) => r.status,
            _ => 0,
        };
        let px = &cfg.proxies[0];
        let d = &cfg.defaults[px.defaults_rules.expect("defaults rules")];
        let codes: Vec<u16> =
            d.rules.http_request.iter().chain(&px.rules.http_request).map(|r| status(&r.action)).collect();
        assert_eq!(codes, [403, 404]);
    }

    #[test]
    fn who_may_use_rules_of_a_defaults_section() {
        let d = "defaults d\n mode http\n http-request deny\n";
        assert_eq!(
            alerts(&format!("{d}listen l from d\n")),
            ["a listen section cannot inherit from a defaults section defining TCP/HTTP rules."]
        );
        assert_eq!(
            alerts(&format!("{d}frontend f from d\nbackend b from d\n")),
            ["frontends and backends cannot inherit from the same defaults section if it defines TCP/HTTP rules (defaults section at t.cfg:1)."]
        );
        assert_eq!(
            alerts(&format!("{d}defaults e from d\n")),
            ["a defaults section cannot inherit from a defaults section defining TCP/HTTP rules (defaults section at t.cfg:1)."]
        );
        assert_eq!(
            alerts("defaults d\n tcp-request connection reject\nbackend b from d\n"),
            ["a backend section cannot inherit from a defaults section defining 'tcp-request connection' or 'tcp-request session' rules (defaults section at t.cfg:1)."]
        );
        assert_eq!(
            alerts("defaults d\n tcp-response content accept\nfrontend f from d\n"),
            ["a frontend section cannot inherit from a defaults section defining 'tcp-response content' rules (defaults section at t.cfg:1)."]
        );
        assert_eq!(
            alerts("defaults d\n http-request capture src len 4\nbackend b from d\n"),
            ["backend or defaults sections cannot inherit from a defaults section defining capptures (defaults section at t.cfg:1)."]
        );
        let cfg =
            parse_ok("defaults d\n http-request capture src len 4\n monitor-uri /m\nfrontend f from d\n bind :1\n");
        assert_eq!(cfg.proxies[0].captures.request.len(), 1, "a frontend takes the slots");
        assert_eq!(cfg.proxies[0].monitor_uri.as_deref(), Some("/m"));
    }
}
