//! Rule lines through the whole parser: every action into its typed model, and
//! HAProxy 2.6's messages (each checked with `haproxy -c`).

use std::time::Duration;

use crate::model::*;
use crate::parse::tests::{alerts, parse_ok, warnings};

const FE: &str = "global\n expose-experimental-directives\nfrontend f\n mode http\n bind :80\n";

fn req(rules: &str) -> Vec<HttpReqRule> {
    parse_ok(&format!("{FE}{rules}")).proxies[0].rules.http_request.clone()
}

fn req_one(rule: &str) -> HttpReqAction {
    req(&format!(" http-request {rule}\n")).remove(0).action
}

fn req_alerts(rule: &str) -> Vec<String> {
    alerts(&format!("{FE} http-request {rule}\n"))
}

/// HAProxy's wrapping of an action's argument error.
fn wrapped(list: &str, action: &str, msg: &str) -> String {
    format!("error detected in frontend 'f' while parsing '{list} {action}' rule : {msg}.")
}

fn fmt(text: &str) -> String {
    text.to_owned()
}

#[test]
fn simple_request_actions() {
    assert_eq!(req_one("allow"), HttpReqAction::Allow);
    assert_eq!(req_one("reject"), HttpReqAction::Reject);
    assert_eq!(req_one("silent-drop"), HttpReqAction::SilentDrop);
    assert_eq!(req_one("disable-l7-retry"), HttpReqAction::DisableL7Retry);
    assert_eq!(req_one("auth"), HttpReqAction::Auth { realm: None });
    assert_eq!(req_one("auth realm Admins"), HttpReqAction::Auth { realm: Some("Admins".into()) });
    assert_eq!(req_one("strict-mode OFF"), HttpReqAction::StrictMode(false));
    assert_eq!(req_one("set-log-level silent"), HttpReqAction::SetLogLevel(LogLevel::Silent));
    assert_eq!(req_one("set-log-level debug"), HttpReqAction::SetLogLevel(LogLevel::Debug));
}

#[test]
fn header_and_uri_actions() {
    let HttpReqAction::Header(HeaderAction::Set { name, value }) = req_one("set-header X-Fwd %[src]") else {
        panic!("set-header")
    };
    assert_eq!((name.as_str(), value.text.as_str()), ("X-Fwd", "%[src]"));
    assert!(matches!(req_one("add-header A b"), HttpReqAction::Header(HeaderAction::Add { .. })));
    let HttpReqAction::Header(HeaderAction::Del { name, matcher }) = req_one("del-header ^x- -m reg") else {
        panic!("del-header")
    };
    assert_eq!(name, "^x-");
    assert!(matches!(matcher, HdrMatch::Reg(r) if r.text == "^x-"));
    assert!(matches!(
        req_one("del-header x-a -m beg"),
        HttpReqAction::Header(HeaderAction::Del { matcher: HdrMatch::Beg, .. })
    ));
    let HttpReqAction::Header(HeaderAction::ReplaceValue { name, regex, replace }) =
        req_one("replace-value Cache-Control ^(.*)$ \\1,x")
    else {
        panic!("replace-value")
    };
    assert_eq!((name.as_str(), regex.text.as_str(), replace.text.as_str()), ("Cache-Control", "^(.*)$", "\\1,x"));
    assert!(matches!(req_one("replace-header A b c"), HttpReqAction::Header(HeaderAction::Replace { .. })));
    assert!(
        matches!(req_one("set-path /x%[path]"), HttpReqAction::Uri(UriAction::SetPath(f)) if f.text == "/x%[path]")
    );
    assert!(matches!(req_one("set-method POST"), HttpReqAction::Uri(UriAction::SetMethod(_))));
    assert!(matches!(req_one("set-pathq /a?b"), HttpReqAction::Uri(UriAction::SetPathq(_))));
    assert!(matches!(req_one("set-query a=1"), HttpReqAction::Uri(UriAction::SetQuery(_))));
    assert!(matches!(req_one("set-uri /u"), HttpReqAction::Uri(UriAction::SetUri(_))));
    let HttpReqAction::Uri(UriAction::ReplacePath { regex, replace }) = req_one("replace-path (.*) /v1\\1") else {
        panic!("replace-path")
    };
    assert_eq!((regex.text.as_str(), replace.text.as_str()), ("(.*)", "/v1\\1"));
    assert!(matches!(req_one("replace-pathq a b"), HttpReqAction::Uri(UriAction::ReplacePathq { .. })));
    assert!(matches!(req_one("replace-uri a b"), HttpReqAction::Uri(UriAction::ReplaceUri { .. })));
    let HttpReqAction::EarlyHint { name, value } = req_one("early-hint Link </a.css>") else { panic!("early-hint") };
    assert_eq!((name, value.text), (fmt("Link"), fmt("</a.css>")));
}

#[test]
fn expression_actions() {
    let HttpReqAction::Addr(AddrAction::SetSrc(e)) = req_one("set-src hdr(x-forwarded-for)") else { panic!("set-src") };
    assert_eq!(e.text, "hdr(x-forwarded-for)");
    assert!(matches!(req_one("set-dst-port int(8080)"), HttpReqAction::Addr(AddrAction::SetDstPort(_))));
    let HttpReqAction::SetPriorityClass(e) = req_one("set-priority-class req.hdr(p) lower if TRUE") else {
        panic!("priority")
    };
    assert_eq!(e.text, "req.hdr(p),lower", "a converter word continues the expression");
    assert!(matches!(req_one("set-priority-offset int(-10)"), HttpReqAction::SetPriorityOffset(_)));
    let HttpReqAction::Capture(c) = req_one("capture req.hdr(host) len 20") else { panic!("capture") };
    assert_eq!((c.expr.text.as_str(), c.slot), ("req.hdr(host)", CaptureSlot::Declared(0)));
    let rules = req(" declare capture request len 4\n http-request capture src id 0\n");
    assert!(matches!(&rules[0].action, HttpReqAction::Capture(c) if c.slot == CaptureSlot::Id(0)));
    let HttpReqAction::Var(VarAction::Set { expr, .. }) = req_one("set-var(txn.host) req.hdr(host),lower") else {
        panic!("set-var")
    };
    assert_eq!(expr.text, "req.hdr(host),lower");
}

#[test]
fn misc_request_actions() {
    assert_eq!(
        req_one("wait-for-body time 1s at-least 10k"),
        HttpReqAction::WaitForBody(WaitForBody { time: Duration::from_secs(1), at_least: 10240 })
    );
    assert_eq!(
        req_one("wait-for-body at-least 1 time 20ms"),
        HttpReqAction::WaitForBody(WaitForBody { time: Duration::from_millis(20), at_least: 1 })
    );
    let normalizers = [
        ("path-merge-slashes", Normalizer::PathMergeSlashes),
        ("path-strip-dot", Normalizer::PathStripDot),
        ("path-strip-dotdot", Normalizer::PathStripDotdot { full: false }),
        ("path-strip-dotdot full", Normalizer::PathStripDotdot { full: true }),
        ("query-sort-by-name", Normalizer::QuerySortByName),
        ("percent-to-uppercase strict", Normalizer::PercentToUppercase { strict: true }),
        ("percent-decode-unreserved", Normalizer::PercentDecodeUnreserved { strict: false }),
        ("fragment-strip", Normalizer::FragmentStrip),
        ("fragment-encode", Normalizer::FragmentEncode),
    ];
    for (text, n) in normalizers {
        assert_eq!(req_one(&format!("normalize-uri {text}")), HttpReqAction::NormalizeUri(n), "{text}");
    }
    let be = parse_ok(
        "backend b\n mode http\n http-request set-timeout server 5s\n http-request set-timeout tunnel req.hdr(t)\n",
    );
    let rules = &be.proxies[0].rules.http_request;
    assert_eq!(
        rules[0].action,
        HttpReqAction::SetTimeout { timeout: TimeoutName::Server, value: TimeoutValue::Fixed(Duration::from_secs(5)) }
    );
    assert!(
        matches!(&rules[1].action, HttpReqAction::SetTimeout { value: TimeoutValue::Expr(e), .. } if e.text == "req.hdr(t)")
    );
}

#[test]
fn replies_of_deny_tarpit_return() {
    let HttpReqAction::Deny(r) = req_one("deny") else { panic!("deny") };
    assert_eq!((r.status, &r.body), (403, &ReplyBody::DefaultErrorfile));
    let HttpReqAction::Deny(r) = req_one("deny deny_status 429 if TRUE") else { panic!("deny") };
    assert_eq!(r.status, 429);
    let HttpReqAction::Tarpit(r) = req_one("tarpit") else { panic!("tarpit") };
    assert_eq!(r.status, 500);
    let HttpReqAction::Deny(r) = req_one("deny deny_status 400 content-type text/plain string bad hdr X-A %[src]")
    else {
        panic!("deny with reply")
    };
    assert_eq!((r.status, r.content_type.as_deref()), (400, Some("text/plain")));
    assert_eq!(r.body, ReplyBody::Raw(b"bad".to_vec()));
    assert_eq!(r.headers[0].1.text, "%[src]");
    let HttpReqAction::Return(r) = req_one("return status 404 content-type text/plain lf-string %[path]") else {
        panic!("return")
    };
    assert!(matches!(&r.body, ReplyBody::LogFormat(f) if f.text == "%[path]"));
    let HttpReqAction::Return(r) = req_one("return status 503 errorfile tests/cfg/files/503.http") else {
        panic!("return errorfile")
    };
    assert!(matches!(&r.body, ReplyBody::Errorfile(b) if b.starts_with(b"HTTP/1.0 503")));
    let HttpReqAction::Return(r) = req_one("return content-type text/plain lf-file tests/cfg/files/pong.txt") else {
        panic!("return lf-file")
    };
    assert!(matches!(&r.body, ReplyBody::LogFormat(f) if !f.text.is_empty()));
    let HttpReqAction::Return(r) = req_one("return status 204") else { panic!("return") };
    assert_eq!(r.body, ReplyBody::Empty);
}

#[test]
fn reply_errors_and_warnings() {
    let w = |m: &str| wrapped("http-request", "return", m);
    assert_eq!(req_alerts("return status 999"), [w("Unexpected status code '999'")]);
    assert_eq!(req_alerts("return status"), [w("'status' expects <status_code> as argument")]);
    assert_eq!(
        req_alerts("return string hi"),
        [w("a content type must be defined when non-empty payload is configured")]
    );
    assert_eq!(req_alerts("return status 204 content-type t string hi"), [w("No body expected for 204 responses")]);
    assert_eq!(req_alerts("return lf-string x"), [w("a content type must be defined with a log-format payload")]);
    assert_eq!(req_alerts("return string a string b"), [w("unexpected 'string' argument, 'string' already defined")]);
    assert_eq!(req_alerts("return hdr a"), [w("'hdr' expects <name> and <value> as arguments")]);
    assert_eq!(req_alerts("return errorfile /nonexistent"), [w("error opening file '/nonexistent'.")]);
    assert_eq!(req_alerts("return file /nonexistent"), [w("error opening file '/nonexistent'")]);
    assert_eq!(
        req_alerts("return status 201 default-errorfiles"),
        [w("status code '201' not handled by default with 'default-errorfiles' argument.")]
    );
    assert_eq!(
        req_alerts("return content-type t string x foo"),
        ["'http-request return' expects either 'if' or 'unless' followed by a condition but found 'foo'."]
    );
    let d = |m: &str| wrapped("http-request", "deny", m);
    assert_eq!(req_alerts("deny deny_status 999"), [d("Unexpected status code '999'")]);
    assert_eq!(
        req_alerts("deny deny_status 201"),
        [d("status code '201' not handled by default with 'default-errorfiles' argument.")]
    );
    assert!(req_alerts("deny status 201").is_empty(), "an empty reply with any status");
    assert_eq!(
        req_alerts("tarpit deny_status 503 foo"),
        ["'http-request tarpit' expects either 'if' or 'unless' followed by a condition but found 'foo'."]
    );
    let w = |rule: &str| warnings(&format!("{FE} http-request {rule}\n"));
    assert_eq!(
        w("return content-type a"),
        ["content-type 'a' ignored by the http reply because neither errorfile nor payload defined."]
    );
    assert_eq!(w("return hdr content-length 3"), ["header 'content-length' always ignored by the http reply."]);
    assert_eq!(
        w("deny content-type t hdr a b default-errorfiles"),
        [
            "content-type 't' ignored by the http reply when used with an erorrfile.",
            "hdr parameters ignored by the http reply when used with an erorrfile."
        ]
    );
}

#[test]
fn request_action_errors() {
    let w = wrapped;
    let cases: &[(&str, &str, &str)] = &[
        ("set-header X", "set-header", "expects exactly 2 arguments"),
        ("del-header", "del-header", "expects at least 1 argument"),
        ("del-header x -m", "del-header", "-m flag expects exactly 1 argument"),
        ("del-header x -m found", "del-header", "-m with unsupported matching method 'found'"),
        ("replace-header a b", "replace-header", "expects exactly 3 arguments"),
        ("set-path", "set-path", "expects exactly 1 argument <format>"),
        ("set-path a b", "set-path", "expects exactly 1 argument <format>"),
        ("replace-path a", "replace-path", "expects exactly 2 arguments <match-regex> and <replace-format>"),
        ("set-var(txn.x)", "set-var(txn.x)", "missing fetch method"),
        ("set-log-level", "set-log-level", "expects exactly 1 argument (log level name or 'silent')"),
        ("capture src", "capture", "expects <expression> [ 'len' <length> | id <idx> ]"),
        ("capture src len 0", "capture", "length must be > 0"),
        ("capture src id x", "capture", "cannot parse id 'x'"),
        ("capture src foo 1", "capture", "expects 'len' or 'id', found 'foo'"),
        ("normalize-uri", "normalize-uri", "missing argument <normalizer>"),
        ("normalize-uri foo", "normalize-uri", "unknown normalizer 'foo'"),
        (
            "normalize-uri path-strip-dotdot x",
            "normalize-uri",
            "unknown argument 'x' for 'path-strip-dotdot' normalizer",
        ),
        ("wait-for-body", "wait-for-body", "expects time <time> [ at-least <bytes> ]"),
        ("wait-for-body time 1x", "wait-for-body", "unexpected character 'x'"),
        ("wait-for-body at-least 10k", "wait-for-body", "expects time <time> [ at-least <bytes> ]"),
        ("wait-for-body time 1s at-least 10x", "wait-for-body", "unexpected character 'x'"),
        ("strict-mode", "strict-mode", "expects exactly 1 arguments"),
        ("strict-mode maybe", "strict-mode", "Unexpected value 'maybe'. Only 'on' and 'off' are supported"),
        ("set-timeout server", "set-timeout", "expects exactly 2 arguments"),
        ("set-timeout server 1s", "set-timeout", "proxy 'f' has no backend capability"),
        ("auth realm", "auth", "missing realm value.\n"),
        ("early-hint link", "early-hint", "expects exactly 2 arguments"),
        ("set-priority-class", "set-priority-class", "missing fetch method"),
        ("set-src", "set-src", "missing fetch method"),
    ];
    for (rule, action, msg) in cases {
        assert_eq!(req_alerts(rule), [w("http-request", action, msg)], "{rule}");
    }
    for rule in ["reject foo", "silent-drop foo", "disable-l7-retry x", "set-header X y z", "set-src src lower"] {
        let action = rule.split(' ').next().unwrap_or_default();
        let found = rule.rsplit(' ').next().unwrap_or_default();
        assert_eq!(
            req_alerts(rule),
            [format!(
                "'http-request {action}' expects either 'if' or 'unless' followed by a condition but found '{found}'."
            )],
            "{rule}"
        );
    }
    let b = |rule: &str| alerts(&format!("backend b\n mode http\n http-request {rule}\n"));
    assert_eq!(b("set-timeout client 1s"), ["error detected in backend 'b' while parsing 'http-request set-timeout' rule : 'set-timeout' rule supports 'server'/'tunnel' (got 'client')."]);
    assert_eq!(b("set-timeout server 0"), ["error detected in backend 'b' while parsing 'http-request set-timeout' rule : null value is not valid for a 'set-timeout server' rule."]);
    assert_eq!(b("capture src len 1"), ["error detected in backend 'b' while parsing 'http-request capture' rule : proxy 'b' has no frontend capability."]);
}

#[test]
fn pattern_file_actions_read_as_haproxy() {
    use crate::model::{PatRefAction, PatRefOp};
    let fmt = |t: &str| req_one(&format!("set-map(/m) {t} v"));
    let HttpReqAction::PatRef(PatRefAction { op, file, key, value }) = fmt("%[src]") else { panic!() };
    assert_eq!((op, file.as_str(), key.text.as_str()), (PatRefOp::SetMap, "/m", "%[src]"));
    assert_eq!(value.unwrap().text, "v");
    let HttpReqAction::PatRef(a) = req_one("del-acl(/etc/x.acl) %[hdr(x)] if TRUE") else { panic!() };
    assert_eq!((a.op, a.file.as_str(), a.value.is_none()), (PatRefOp::DelAcl, "/etc/x.acl", true));
    // as HAProxy, the name is what lies between `add-acl(` and the last character
    let HttpReqAction::PatRef(a) = req_one("add-acl k") else { panic!() };
    assert_eq!((a.op, a.file.as_str(), a.key.text.as_str()), (PatRefOp::AddAcl, "", "k"));
    let HttpReqAction::PatRef(a) = req_one("del-map(ab] k") else { panic!() };
    assert_eq!((a.op, a.file.as_str()), (PatRefOp::DelMap, "ab"));
    assert_eq!(req_alerts("set-map(/m) k"), [wrapped("http-request", "set-map(/m)", "expects exactly 2 arguments")]);
    assert_eq!(req_alerts("add-acl(/m)"), [wrapped("http-request", "add-acl(/m)", "expects exactly 1 arguments")]);
    assert_eq!(
        req_alerts("del-map(/m) k extra"),
        ["'http-request del-map(/m)' expects either 'if' or 'unless' followed by a condition but found 'extra'."]
    );
}

#[test]
fn action_lookup_and_placement() {
    assert!(req_alerts("track-sc0 src").is_empty());
    assert!(req_alerts("sc-inc-gpc(0,1)").is_empty());
    assert!(req_alerts("sc-set-gpt(3,2) 1").is_empty());
    assert!(req_alerts("set-map(x) a b").is_empty());
    let unknown = req_alerts("retrun");
    assert!(unknown[0].starts_with("'http-request' expects 'wait-for-handshake', 'ot-group', "));
    assert!(unknown[0].ends_with("'set-priority-offset', but got 'retrun'. Did you mean 'return' maybe ?"));
    assert!(req_alerts("")[0].ends_with(", but got '' (missing argument)."));
    assert_eq!(
        alerts("frontend f\n mode http\n http-request normalize-uri fragment-strip\n"),
        ["'normalize-uri' action is experimental, must be allowed via a global 'expose-experimental-directives'"]
    );
    for list in ["http-request", "http-response", "http-after-response"] {
        assert_eq!(
            alerts(&format!("defaults\n {list} allow\n")),
            [format!("'{list}' not allowed in anonymous 'defaults' section.")]
        );
    }
    let cond = &req(" http-request deny if { path /x } || !local\n acl local src 127.0.0.1\n")[0].cond;
    let cond = cond.as_ref().expect("condition");
    assert_eq!((cond.negate, cond.words.join(" ")), (false, "{ path /x } || !local".to_owned()));
    assert!(req(" http-request deny unless\n")[0].cond.as_ref().is_some_and(|c| c.negate && c.words.is_empty()));
}

#[test]
fn final_and_order_warnings() {
    assert_eq!(
        warnings(&format!("{FE} http-request deny\n http-request allow\n")),
        ["previous 'http-request' action is final and has no condition attached, further entries are NOOP."]
    );
    assert!(warnings(&format!("{FE} http-request deny if FALSE\n http-request set-header a b\n http-request allow\n"))
        .is_empty());
    assert!(warnings(&format!("{FE} http-request redirect location / ignore-empty\n http-request allow\n")).is_empty());
    assert_eq!(
        warnings(&format!("{FE} http-response return\n http-response allow\n")),
        ["previous 'http-response' action is final and has no condition attached, further entries are NOOP."]
    );
    assert_eq!(
        warnings(&format!("{FE} http-after-response allow\n http-after-response allow\n")),
        ["previous 'http-after-response' action is final and has no condition attached, further entries are NOOP."]
    );
    assert_eq!(
        warnings("listen l\n mode http\n use-server s if TRUE\n http-request allow\n redirect location /\n"),
        [
            "a 'http-request' rule placed after a 'use-server' rule will still be processed before.",
            "a 'redirect' rule placed after a 'use-server' rule will still be processed before."
        ]
    );
    assert_eq!(
        warnings(&format!("{FE} http-request deny if TRUE\n tcp-request content accept\n tcp-request session accept\n tcp-request connection accept\n")),
        [
            "a 'tcp-request' rule placed after an 'http-request' rule will still be processed before.",
            "a 'tcp-request' rule placed after a 'tcp-request content' rule will still be processed before.",
            "a 'tcp-request' rule placed after a 'tcp-request session' rule will still be processed before."
        ]
    );
}

#[test]
fn response_rules() {
    let cfg = parse_ok(
        "frontend f\n mode http\n bind :80\n declare capture response len 8\n\
         http-response set-status 503 reason Busy if TRUE\n http-response set-status 200\n\
         http-response deny\n http-response return status 200 content-type text/plain string ok\n\
         http-response capture res.hdr(server) id 0\n http-response set-var-fmt(res.x) %[status]\n\
         http-response wait-for-body time 1s\n http-response del-header Server\n\
         http-after-response set-header X-Id %[unique-id]\n http-after-response set-status 404\n\
         http-after-response unset-var(txn.x)\n http-after-response strict-mode on\n",
    );
    let px = &cfg.proxies[0];
    let res: Vec<&HttpResAction> = px.rules.http_response.iter().map(|r| &r.action).collect();
    assert_eq!(res[0], &HttpResAction::SetStatus(SetStatus { status: 503, reason: Some("Busy".into()) }));
    assert_eq!(res[1], &HttpResAction::SetStatus(SetStatus { status: 200, reason: None }));
    assert!(matches!(res[2], HttpResAction::Deny(r) if r.status == 502));
    assert!(matches!(res[3], HttpResAction::Return(_)));
    assert!(matches!(res[4], HttpResAction::Capture { id: 0, .. }));
    assert!(matches!(res[5], HttpResAction::Var(VarAction::SetFmt { .. })));
    assert!(matches!(res[6], HttpResAction::WaitForBody(_)));
    assert!(matches!(res[7], HttpResAction::Header(HeaderAction::Del { .. })));
    let after: Vec<&str> = px.rules.http_after_response.iter().map(|r| r.action.name()).collect();
    assert_eq!(after, ["set-header", "set-status", "unset-var", "strict-mode"]);
    let r = |rule: &str| alerts(&format!("frontend f\n mode http\n http-response {rule}\n"));
    let w = |a: &str, m: &str| wrapped("http-response", a, m);
    assert_eq!(
        r("set-status"),
        [w("set-status", "expects 1 argument: <status>; or 3 arguments: <status> reason <fmt>")]
    );
    assert_eq!(r("set-status 99"), [w("set-status", "expects an integer status code between 100 and 999")]);
    assert_eq!(r("set-status 2x"), [w("set-status", "expects an integer status code between 100 and 999")]);
    assert_eq!(r("capture src"), [w("capture", "expects <expression> id <idx>")]);
    assert_eq!(r("capture src len 1"), [w("capture", "expects 'id', found 'len'")]);
    assert_eq!(
        r("set-status 200 reason"),
        ["'http-response set-status' expects either 'if' or 'unless' followed by a condition but found 'reason'."]
    );
    assert_eq!(r("send-spoe-group e g"), ["'http-response send-spoe-group' is not supported yet"]);
    assert!(r("auth")[0].starts_with("'http-response' expects 'ot-group', 'set-log-level', "));
    let a = |rule: &str| alerts(&format!("frontend f\n mode http\n http-after-response {rule}\n"));
    assert!(a("deny")[0].ends_with("'unset-var(*)', but got 'deny'."));
    assert_eq!(
        a("set-header a"),
        ["error detected in frontend 'f' while parsing 'http-after-response set-header' rule : expects exactly 2 arguments."]
    );
}

// === tcp ===

fn tcp_alerts(section: &str, rule: &str) -> Vec<String> {
    alerts(&format!("{section}\n {rule}\n"))
}

#[test]
fn tcp_request_rules() {
    let cfg = parse_ok(
        "frontend f\n bind :80\n tcp-request inspect-delay 5s\n tcp-request connection reject if { src 10.0.0.0/8 }\n\
         tcp-request connection set-var(sess.a) src\n tcp-request session accept\n tcp-request session set-dst ipv4(1.2.3.4)\n\
         tcp-request content capture req.payload(0,10) len 10\n tcp-request content set-log-level err\n\
         tcp-request content switch-mode http proto h2\n tcp-request content silent-drop unless TRUE\n\
         tcp-request content set-priority-class int(1)\n default_backend b\nbackend b\n mode http\n\
         tcp-response inspect-delay 1s\n tcp-response content close\n tcp-response content unset-var(txn.a)\n",
    );
    let (fe, be) = (&cfg.proxies[0], &cfg.proxies[1]);
    assert_eq!(fe.tcp_request_inspect_delay, Some(Duration::from_secs(5)));
    let r = &fe.rules;
    assert_eq!(r.tcp_request_connection[0].action, TcpReqAction::Reject);
    assert!(r.tcp_request_connection[0].cond.is_some());
    assert!(matches!(&r.tcp_request_connection[1].action, TcpReqAction::Var(VarAction::Set { .. })));
    assert_eq!(r.tcp_request_session[0].action, TcpReqAction::Accept);
    assert!(matches!(&r.tcp_request_session[1].action, TcpReqAction::Addr(AddrAction::SetDst(_))));
    assert!(matches!(&r.tcp_request_content[0].action, TcpReqAction::Capture { slot: 0, .. }));
    assert_eq!(fe.captures.request[0].len, 10);
    assert_eq!(r.tcp_request_content[1].action, TcpReqAction::SetLogLevel(LogLevel::Err));
    assert_eq!(r.tcp_request_content[2].action, TcpReqAction::SwitchModeHttp { proto: Some("h2".into()) });
    assert!(r.tcp_request_content[3].cond.as_ref().is_some_and(|c| c.negate));
    assert!(matches!(&r.tcp_request_content[4].action, TcpReqAction::SetPriorityClass(_)));
    assert_eq!(be.tcp_response_inspect_delay, Some(Duration::from_secs(1)));
    let res: Vec<&str> = be.rules.tcp_response_content.iter().map(|r| r.action.name()).collect();
    assert_eq!(res, ["close", "unset-var"]);
}

#[test]
fn tcp_request_messages() {
    let fe = "frontend f\n bind :80";
    let be = "backend b";
    assert_eq!(tcp_alerts(fe, "tcp-request"), ["missing argument for 'tcp-request' in frontend 'f'"]);
    assert_eq!(tcp_alerts("defaults d", "tcp-request"), ["missing argument for 'tcp-request' in defaults section"]);
    assert_eq!(
        tcp_alerts(fe, "tcp-request foo"),
        ["'tcp-request' expects 'inspect-delay', 'connection', or 'content' in frontend 'f' (got 'foo')"]
    );
    assert_eq!(
        tcp_alerts(be, "tcp-request connection accept"),
        ["tcp-request connection is not allowed because backend b is not a frontend"]
    );
    assert_eq!(
        tcp_alerts("defaults", "tcp-request content accept"),
        ["tcp-request content is not allowed in anonymous 'defaults' sections"]
    );
    assert_eq!(
        tcp_alerts(fe, "tcp-request inspect-delay 10x"),
        ["'tcp-request inspect-delay' expects a positive delay in milliseconds, in frontend 'f' (unexpected character 'x')"]
    );
    assert_eq!(
        tcp_alerts(fe, "tcp-request inspect-delay 99999d"),
        ["'tcp-request inspect-delay' expects a positive delay in milliseconds, in frontend 'f' (timer overflow in '99999d', maximum value is 2147483647 ms or ~24.8 days)"]
    );
    assert_eq!(
        tcp_alerts(fe, "tcp-request inspect-delay"),
        ["'tcp-request inspect-delay' expects a positive delay in milliseconds, in frontend 'f'"]
    );
    assert_eq!(
        warnings("frontend f\n tcp-request inspect-delay 1s\n tcp-request inspect-delay 2s\n"),
        ["ignoring tcp-request inspect-delay (was already defined) in frontend 'f'"]
    );
    let cases: &[(&str, &str, &str)] = &[
        (fe, "tcp-request content capture", "'tcp-request content capture' : missing fetch method"),
        (fe, "tcp-request content capture src", "'tcp-request content capture' : a positive 'len' argument is mandatory"),
        (fe, "tcp-request content capture src len", "'tcp-request content capture' : length must be > 0"),
        (be, "tcp-request content capture src len 1", "'tcp-request content capture' : proxy 'b' has no frontend capability"),
        (fe, "tcp-request session capture src len 3", "'capture src' is not allowed in 'tcp-request session' rules in frontend 'f'"),
        (fe, "tcp-request connection expect-proxy", "'tcp-request connection expect-proxy' only supports 'layer4' in frontend 'f' (got '')"),
        (fe, "tcp-request content expect-proxy layer4", "'expect-proxy layer4' is not allowed in 'tcp-request content' rules in frontend 'f'"),
        (fe, "tcp-request connection expect-netscaler-cip layer4", "'tcp-request connection expect-netscaler-cip' is not supported yet"),
        (fe, "tcp-request content track-sc3 src", "invalid stick table track ID 'track-sc3'. The max allowed ID is 2 (tune.stick-counters)"),
        (fe, "tcp-request content accept foo", "'tcp-request content accept' only accepts 'if' or 'unless', in frontend 'f' (got 'foo')"),
        (be, "tcp-request content set-var(foo) src", "invalid variable name 'foo'. A variable name must be start by its scope. The scope can be 'proc', 'sess', 'txn', 'req', 'res' or 'check'"),
        (be, "tcp-request content set-src", "missing fetch method"),
        (be, "tcp-request content set-log-level foo", "expects exactly 1 argument (log level name or 'silent')"),
        (be, "tcp-request content switch-mode", "'tcp-request switch-mode' expects a mode as argument."),
        (be, "tcp-request content switch-mode http", "'tcp-request switch-mode' not allowed because backend 'b' has no frontend capability"),
        (fe, "tcp-request content switch-mode tcp", "'tcp-request switch-mode' expects a valid mode (got 'tcp')."),
        (fe, "tcp-request content switch-mode http proto", "'tcp-request switch-mode': 'proto' expects a protocol as argument."),
        (fe, "tcp-request content switch-mode http proto h3", "'tcp-request switch-mode': 'proto' expects a valid MUX protocol, if specified (got 'h3')"),
        (fe, "tcp-request content switch-mode http proto fcgi", "Proxy 'f': MUX protocol 'fcgi' is not compatible with the selected mode."),
        (fe, "tcp-request content set-mark 1x", "invalid character starting at 'x' (integer/hex value expected)"),
        (fe, "tcp-request content set-tos", "expects exactly 1 argument (integer/hex value)"),
        (fe, "tcp-request content set-fc-mark", "expects an argument"),
    ];
    // HAProxy 3.x `do-log` is accepted in the connection and session lists
    for rule in ["tcp-request connection do-log", "tcp-request session do-log"] {
        assert!(tcp_alerts(fe, rule).is_empty(), "{rule}");
    }
    for (section, rule, msg) in cases {
        assert_eq!(tcp_alerts(section, rule), [*msg], "{rule}");
    }
    let unknown = tcp_alerts(fe, "tcp-request content acept");
    assert!(unknown[0].starts_with(
        "'tcp-request content' expects 'accept', 'reject', 'capture', 'expect-proxy', 'expect-netscaler-cip', 'track-sc0' ... 'track-sc2', 'ot-group', "
    ));
    assert!(unknown[0].ends_with("in frontend 'f' (got 'acept'). Did you mean 'accept' maybe ?\n"));
    assert!(tcp_alerts(fe, "tcp-request content reject unless").is_empty(), "an empty condition, as HAProxy");
}

#[test]
fn tcp_response_messages() {
    let be = "backend b";
    assert_eq!(
        tcp_alerts("frontend f", "tcp-response content accept"),
        ["tcp-response content is only allowed in 'backend' sections or 'defaults' section with a name"]
    );
    assert_eq!(
        tcp_alerts("defaults", "tcp-response inspect-delay 1s"),
        ["tcp-response inspect-delay is only allowed in 'backend' sections or 'defaults' section with a name"]
    );
    assert_eq!(
        tcp_alerts("frontend f", "tcp-response foo"),
        ["'tcp-response' expects 'inspect-delay' or 'content' in frontend 'f' (got 'foo')"]
    );
    assert_eq!(tcp_alerts(be, "tcp-response"), ["missing argument for 'tcp-response' in backend 'b'"]);
    assert_eq!(
        tcp_alerts(be, "tcp-response content foo"),
        ["'tcp-response content' expects 'accept', 'close', 'reject', 'ot-group', 'set-log-level', 'set-nice', 'sc-inc-gpc(*)', 'sc-inc-gpc0(*)', 'sc-inc-gpc1(*)', 'sc-set-gpt(*)', 'sc-set-gpt0(*)', 'send-spoe-group', 'set-var-fmt(*)', 'set-var(*)', 'unset-var(*)', 'set-mark', 'set-tos', 'silent-drop' in backend 'b' (got 'foo')."]
    );
    assert_eq!(tcp_alerts(be, "tcp-response content set-var(txn.x)"), ["missing fetch method"]);
    assert_eq!(
        tcp_alerts(be, "tcp-response content accept x"),
        ["'tcp-response content accept' only accepts 'if' or 'unless', in backend 'b' (got 'x')"]
    );
    let cfg = parse_ok("defaults d\n tcp-request content accept\n tcp-response content reject\nbackend b from d\n");
    let d = &cfg.defaults[cfg.proxies[0].defaults_rules.expect("defaults rules")];
    assert_eq!((d.rules.tcp_request_content.len(), d.rules.tcp_response_content.len()), (1, 1));
}

#[test]
fn socket_option_and_v3_actions() {
    let int = |what, v| FcSockOpt { what, value: FcValue::Int(v), v3: false };
    let int3 = |what, v| FcSockOpt { what, value: FcValue::Int(v), v3: true };
    assert_eq!(req_one("set-mark 0x10"), HttpReqAction::SetFc(int(FcOpt::Mark, 16)));
    assert_eq!(req_one("set-tos 010"), HttpReqAction::SetFc(int(FcOpt::Tos, 8)));
    assert_eq!(req_one("set-fc-mark 7"), HttpReqAction::SetFc(int3(FcOpt::Mark, 7)));
    assert!(matches!(
        req_one("set-fc-tos req.hdr(x-tos),add(1)"),
        HttpReqAction::SetFc(FcSockOpt { what: FcOpt::Tos, value: FcValue::Expr(e), v3: true }) if e.text == "req.hdr(x-tos),add(1)"
    ));
    assert_eq!(req_one("do-log"), HttpReqAction::DoLog);
    // 2.6's spelling keeps 2.6's integer-only argument and message
    assert_eq!(
        req_alerts("set-mark 12x"),
        [wrapped("http-request", "set-mark", "invalid character starting at 'x' (integer/hex value expected)")]
    );
    assert_eq!(
        req_alerts("do-log foo"),
        ["'http-request do-log' expects either 'if' or 'unless' followed by a condition but found 'foo'."]
    );
    let cfg = parse_ok(
        "frontend f\n mode http\n bind :80\n http-response do-log\n http-response set-fc-tos 4\n\
         http-after-response do-log if TRUE\n tcp-request connection set-fc-mark 3\n tcp-request session set-tos 4\n\
         tcp-request content do-log\n default_backend b\nbackend b\n mode http\n tcp-response content do-log\n\
         tcp-response content set-mark 9\n",
    );
    let (f, b) = (&cfg.proxies[0].rules, &cfg.proxies[1].rules);
    assert_eq!(f.http_response[0].action, HttpResAction::DoLog);
    assert_eq!(f.http_response[1].action, HttpResAction::SetFc(int3(FcOpt::Tos, 4)));
    assert_eq!(f.http_after_response[0].action, HttpAfterResAction::DoLog);
    assert_eq!(f.tcp_request_connection[0].action, TcpReqAction::SetFc(int3(FcOpt::Mark, 3)));
    assert_eq!(f.tcp_request_session[0].action, TcpReqAction::SetFc(int(FcOpt::Tos, 4)));
    assert_eq!(f.tcp_request_content[0].action, TcpReqAction::DoLog);
    assert_eq!(b.tcp_response_content[0].action, TcpResAction::DoLog);
    assert_eq!(b.tcp_response_content[1].action, TcpResAction::SetFc(int(FcOpt::Mark, 9)));
    // the 3.x words stay out of 2.6's list of expected actions
    assert!(!req_alerts("foo")[0].contains("do-log"));
}
