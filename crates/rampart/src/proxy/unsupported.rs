//! What the configuration model holds but the runtime does not run yet: every such rule,
//! action or option is refused at startup with an alert naming it and its line, so that
//! rampart never starts while silently ignoring part of a configuration. Each item
//! leaves this list when its runtime lands (rules issue #5).

use rampart_cfg::model::{Proxy, RestrictHdrNames, TcpReqAction};
use rampart_cfg::{Diag, Span};

fn not_yet(span: &Span, what: &str) -> Diag {
    Diag::alert(Some(span.clone()), format!("'{what}' is not supported yet"))
}

/// Alerts for everything of proxy `px` that the runtime cannot honour (rule actions it
/// lacks are refused where they are compiled, `crate::action::compile`).
pub(super) fn refuse(px: &Proxy, alerts: &mut Vec<Diag>) {
    if px.monitor_uri.is_some() {
        alerts.push(not_yet(&px.span, "monitor-uri"));
    }
    for c in &px.monitor_fail {
        alerts.push(not_yet(&c.span, "monitor fail"));
    }
    let caps = &px.captures;
    // the slots `tcp-request content capture` rules declared are filled by them
    let by_rules = |slot: usize| {
        px.rules
            .tcp_request_content
            .iter()
            .any(|r| matches!(r.action, TcpReqAction::Capture { slot: s, .. } if s == slot))
    };
    let request = caps.request.iter().enumerate().filter(|(i, _)| !by_rules(*i)).map(|(_, c)| c);
    for c in request.chain(&caps.response) {
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
             frontend f from d\n bind :80\n option originalto\n monitor-uri /m\n\
             capture request header Host len 10\n unique-id-header X-Id\n\
             http-request set-src src\n default_backend b\n\
             defaults\n mode http\n timeout server 1s\n timeout connect 1s\n\
             backend b\n server s 127.0.0.1:1\n",
        );
        for expected in [
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
                   tcp-request connection reject if { src 10.0.0.0/8 }\n tcp-request session accept\n\
                   tcp-request inspect-delay 1s\n\
                   tcp-request content capture req.hdr(host) len 10\n\
                   default_backend b\ndefaults\n mode http\n timeout server 1s\n timeout connect 1s\n\
                   backend b\n server s 127.0.0.1:1\n use-server s if TRUE\n\
                   tcp-request content reject if { req.hdr(x) -m found }\n\
                   tcp-response content accept\n";
        assert_eq!(alerts(cfg), Vec::<String>::new());
    }
}
