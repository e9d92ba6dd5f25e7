//! What the configuration model holds but the runtime does not run yet: every such rule,
//! action or option is refused at startup with an alert naming it and its line, so that
//! rampart never starts while silently ignoring part of a configuration. Each item
//! leaves this list when its runtime lands (rules issue #5).

use rampart_cfg::model::Proxy;
use rampart_cfg::Diag;

/// Alerts for everything of proxy `px` that the runtime cannot honour (rule actions it
/// lacks are refused where they are compiled, `crate::action::compile`). Nothing is
/// left here at the moment: the `trace` filter, the last one, runs now.
pub(super) fn refuse(_px: &Proxy, _alerts: &mut [Diag]) {}

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
             frontend f from d\n bind :80\n\
             tcp-request content set-priority-class int(1)\n default_backend b\n\
             defaults\n mode http\n timeout server 1s\n timeout connect 1s\n\
             backend b\n server s 127.0.0.1:1\n",
        );
        let expected =
            "'tcp-request content set-priority-class' is not supported yet (TCP streams carry no queue priority yet)";
        assert!(got.iter().any(|m| m == expected), "missing {expected:?} in {got:#?}");
    }

    #[test]
    fn the_rules_the_runtime_runs_are_accepted() {
        let cfg = "global\n expose-experimental-directives\n\
                   defaults d\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n\
                   acl a path /a\n http-request set-var(txn.x) str(1) if a\n\
                   frontend f from d\n bind :80\n acl b path_beg /b\n http-request set-header X-A 1\n\
                   http-request deny if b\n http-response del-header Server\n http-after-response allow\n\
                   redirect location / if { path /r }\n use_backend %[str(b)]\n\
                   http-request return status 200 content-type text/plain lf-string %[src] if { path /x }\n\
                   http-request return status 503 default-errorfiles if { path /y }\n\
                   option originalto\n monitor-uri /m\n monitor fail if { path /x }\n\
                   capture request header Host len 10\n capture response header Server len 5\n\
                   capture cookie SES len 20\n\
                   declare capture request len 4\n http-request capture path len 8\n\
                   http-request capture path id 1\n http-response capture status id 0\n\
                   unique-id-format %[src]\n unique-id-header X-Id\n http-request set-src src\n\
                   http-request set-dst-port int(1)\n http-request early-hint Link </a>\n\
                   http-request wait-for-body time 1s\n\
                   http-request set-priority-class int(-1)\n http-request set-priority-offset req.hdr(x)\n\
                   http-request normalize-uri path-strip-dotdot full\n\
                   option http-buffer-request\n option http-restrict-req-hdr-names delete\n\
                   http-error status 404 content-type text/plain lf-string %[path]\n\
                   tcp-request connection reject if { src 10.0.0.0/8 }\n tcp-request session accept\n\
                   tcp-request inspect-delay 1s\n tcp-request content capture req.hdr(host) len 10\n\
                   default_backend b\ndefaults\n mode http\n timeout server 1s\n timeout connect 1s\n\
                   backend b\n cookie SRV insert indirect nocache\n server s 127.0.0.1:1 cookie s\n use-server s if TRUE\n http-request set-timeout server 2s\n\
                   tcp-request content reject if { req.hdr(x) -m found }\n tcp-response content accept\n";
        assert_eq!(alerts(cfg), Vec::<String>::new());
    }
}
