//! What the configuration model holds but the runtime does not run yet: every such rule,
//! action or option is refused at startup with an alert naming it and its line, so that
//! rampart never starts while silently ignoring part of a configuration. Each item
//! leaves this list when its runtime lands (rules issue #5).

use rampart_cfg::model::{BackendTarget, HttpReply, HttpReqAction, Proxy, ReplyBody, RestrictHdrNames, RuleSet};
use rampart_cfg::{Diag, Span};

fn not_yet(span: &Span, what: &str) -> Diag {
    Diag::alert(Some(span.clone()), format!("'{what}' is not supported yet"))
}

/// Alerts for everything of proxy `px` (and of the named `defaults` rules it runs,
/// `defaults`) that the runtime cannot honour. The unconditional `http-request return`
/// rules it can answer are left to the caller.
pub(super) fn refuse(px: &Proxy, defaults: Option<&RuleSet>, alerts: &mut Vec<Diag>) {
    for rules in defaults.into_iter().chain(std::iter::once(&px.rules)) {
        refuse_rules(rules, alerts);
    }
    for r in &px.redirects {
        alerts.push(not_yet(&r.span, "redirect"));
    }
    for us in &px.use_servers {
        alerts.push(not_yet(&us.span, "use-server"));
    }
    for ub in &px.use_backends {
        if let BackendTarget::Dynamic(f) = &ub.target {
            alerts.push(not_yet(&f.span, "use_backend with a log-format backend name"));
        }
    }
    if px.monitor_uri.is_some() {
        alerts.push(not_yet(&px.span, "monitor-uri"));
    }
    for c in &px.monitor_fail {
        alerts.push(not_yet(&c.span, "monitor fail"));
    }
    let caps = &px.captures;
    for c in caps.request.iter().chain(&caps.response) {
        alerts.push(not_yet(&c.span, if c.header.is_some() { "capture" } else { "declare capture" }));
    }
    if let Some(c) = &caps.cookie {
        alerts.push(not_yet(&c.span, "capture cookie"));
    }
    if let Some(f) = &px.unique_id_format {
        alerts.push(not_yet(&f.span, "unique-id-format"));
    }
    if px.unique_id_header.is_some() {
        alerts.push(not_yet(&px.span, "unique-id-header"));
    }
    if !px.http_error_replies.is_empty() {
        alerts.push(not_yet(&px.span, "http-error with a reply other than 'errorfile'"));
    }
    let o = &px.options;
    if o.http_buffer_request {
        alerts.push(not_yet(&px.span, "option http-buffer-request"));
    }
    if o.originalto.is_some() {
        alerts.push(not_yet(&px.span, "option originalto"));
    }
    if o.restrict_req_hdr_names != RestrictHdrNames::Preserve {
        alerts.push(not_yet(&px.span, "option http-restrict-req-hdr-names delete|reject"));
    }
}

fn refuse_rules(rules: &RuleSet, alerts: &mut Vec<Diag>) {
    for acl in &rules.acls {
        alerts.push(not_yet(&acl.span, "acl"));
    }
    for r in &rules.http_request {
        match &r.action {
            HttpReqAction::Return(reply) => {
                if let Some(what) = unrenderable(reply) {
                    alerts.push(not_yet(&r.span, &format!("http-request return {what}")));
                }
            }
            other => alerts.push(not_yet(&r.span, &format!("http-request {}", other.name()))),
        }
    }
    for r in &rules.http_response {
        alerts.push(not_yet(&r.span, &format!("http-response {}", r.action.name())));
    }
    for r in &rules.http_after_response {
        alerts.push(not_yet(&r.span, &format!("http-after-response {}", r.action.name())));
    }
    let tcp_req = [
        ("connection", &rules.tcp_request_connection),
        ("session", &rules.tcp_request_session),
        ("content", &rules.tcp_request_content),
    ];
    for (set, list) in tcp_req {
        for r in list {
            alerts.push(not_yet(&r.span, &format!("tcp-request {set} {}", r.action.name())));
        }
    }
    for r in &rules.tcp_response_content {
        alerts.push(not_yet(&r.span, &format!("tcp-response content {}", r.action.name())));
    }
}

/// What makes a `return` reply beyond what [`super::render_return`] can pre-render, or
/// `None` when it can.
pub(super) fn unrenderable(reply: &HttpReply) -> Option<&'static str> {
    if reply.headers.iter().any(|(_, v)| v.text.contains('%')) {
        return Some("hdr with log-format expressions");
    }
    match &reply.body {
        ReplyBody::Empty | ReplyBody::Raw(_) => None,
        ReplyBody::LogFormat(f) if !f.text.contains('%') => None,
        ReplyBody::LogFormat(_) => Some("lf-string with log-format expressions"),
        ReplyBody::DefaultErrorfile | ReplyBody::Errorfile(_) | ReplyBody::Errorfiles(_) => Some("with an error file"),
    }
}

#[cfg(test)]
mod tests {
    use rampart_cfg::{parse_str, LexCtx};

    fn alerts(text: &str) -> Vec<String> {
        let ctx = LexCtx { env: &|_| None, version: "2.6.12", features: &[] };
        let loaded = parse_str("t.cfg", text, &ctx);
        let cfg = loaded.config.unwrap_or_else(|| panic!("config refused: {:?}", loaded.diags.list));
        super::super::check(&cfg).into_iter().map(|d| d.message).collect()
    }

    #[test]
    fn rules_the_runtime_lacks_are_refused_by_name() {
        let got = alerts(
            "defaults d\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n\
             acl a path /a\n http-request set-var(txn.x) str(1)\n\
             frontend f from d\n bind :80\n http-request set-header X-A 1\n http-request deny if a\n\
             http-response del-header Server\n http-after-response allow\n tcp-request content accept\n\
             tcp-request connection reject\n redirect location /\n option originalto\n monitor-uri /m\n\
             capture request header Host len 10\n unique-id-header X-Id\n use_backend %[str(b)]\n\
             http-request return status 200 content-type text/plain lf-string %[src]\n\
             default_backend b\ndefaults\n mode http\n timeout server 1s\n timeout connect 1s\n\
             backend b\n server s 127.0.0.1:1\n use-server s if TRUE\n",
        );
        for expected in [
            "'acl' is not supported yet",
            "'http-request set-var' is not supported yet",
            "'http-request set-header' is not supported yet",
            "'http-request deny' is not supported yet",
            "'http-response del-header' is not supported yet",
            "'http-after-response allow' is not supported yet",
            "'tcp-request content accept' is not supported yet",
            "'tcp-request connection reject' is not supported yet",
            "'redirect' is not supported yet",
            "'option originalto' is not supported yet",
            "'monitor-uri' is not supported yet",
            "'capture' is not supported yet",
            "'unique-id-header' is not supported yet",
            "'use_backend with a log-format backend name' is not supported yet",
            "'http-request return lf-string with log-format expressions' is not supported yet",
            "'use-server' is not supported yet",
        ] {
            assert!(got.iter().any(|m| m == expected), "missing {expected:?} in {got:#?}");
        }
    }

    #[test]
    fn a_literal_return_still_runs() {
        let cfg = "frontend f\n mode http\n bind :80\n timeout client 1s\n\
                   http-request return status 200 content-type text/plain string ok hdr X-A b\n";
        assert!(alerts(cfg).is_empty());
        assert_eq!(
            alerts("frontend f\n mode http\n bind :80\n timeout client 1s\n http-request return status 503 default-errorfiles\n"),
            ["'http-request return with an error file' is not supported yet"]
        );
    }
}
