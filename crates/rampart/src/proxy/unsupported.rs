//! What the configuration model holds but the runtime does not run yet: every such rule,
//! action or option is refused at startup with an alert naming it and its line, so that
//! rampart never starts while silently ignoring part of a configuration. Each item
//! leaves this list when its runtime lands (rules issue #5).

use rampart_cfg::model::{Proxy, RestrictHdrNames, RuleSet};
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
             frontend f from d\n bind :80\n tcp-request content accept\n\
             tcp-request connection reject\n option originalto\n monitor-uri /m\n\
             capture request header Host len 10\n unique-id-header X-Id\n\
             http-request set-src src\n default_backend b\n\
             defaults\n mode http\n timeout server 1s\n timeout connect 1s\n\
             backend b\n server s 127.0.0.1:1\n",
        );
        for expected in [
            "'tcp-request content accept' is not supported yet",
            "'tcp-request connection reject' is not supported yet",
            "'option originalto' is not supported yet",
            "'monitor-uri' is not supported yet",
            "'capture' is not supported yet",
            "'unique-id-header' is not supported yet",
            "'http-request set-src' is not supported yet",
        ] {
            assert!(got.iter().any(|m| m == expected), "missing {expected:?} in {got:#?}");
        }
    }

    #[test]
    fn the_rules_the_runtime_runs_are_accepted() {
        let cfg = "defaults d\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n\
                   acl a path /a\n http-request set-var(txn.x) str(1) if a\n\
                   frontend f from d\n bind :80\n acl b path_beg /b\n http-request set-header X-A 1\n\
                   http-request deny if b\n http-response del-header Server\n http-after-response allow\n\
                   redirect location / if { path /r }\n use_backend %[str(b)]\n\
                   http-request return status 200 content-type text/plain lf-string %[src] if { path /x }\n\
                   http-request return status 503 default-errorfiles if { path /y }\n\
                   default_backend b\ndefaults\n mode http\n timeout server 1s\n timeout connect 1s\n\
                   backend b\n server s 127.0.0.1:1\n use-server s if TRUE\n";
        assert_eq!(alerts(cfg), Vec::<String>::new());
    }
}
