//! Proxy keywords of the rules language that are not rule lists: `acl`, `use_backend`,
//! `use-server`, `monitor-uri`, `monitor fail`, `capture`, `declare capture`,
//! `unique-id-format`, `unique-id-header`.
//!
//! HAProxy counterparts: their branches in `cfg_parse_listen()` (src/cfgparse-listen.c)
//! and `proxy_parse_declare()` (src/proxy.c).

use crate::model::{
    AclDef, BackendRef, BackendTarget, CaptureDecl, CookieCapture, FmtSrc, PersistRule, ServerTarget, UseBackend,
    UseServer,
};

use super::arg;
use super::ctx::Ctx;
use super::rule::{parse_condition, warn_misplaced, Stage};
use super::value::{atol, invalid_char};

/// `acl <name> <criterion> [flags] [operator] <value>...`: kept as words for the ACL
/// engine, after the checks HAProxy makes on the name.
pub(super) fn parse_acl(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() && cx.pb.px.name.is_empty() {
        cx.alert("'acl' not allowed in anonymous 'defaults' section.");
        return;
    }
    let name = arg(words, 1);
    if name.is_empty() {
        // HAProxy 2.6 accepts a bare `acl` line and does nothing with it.
        return;
    }
    if let Some(c) = invalid_char(name) {
        cx.alert(format!("character '{c}' is not permitted in acl name '{name}'."));
        return;
    }
    if name.eq_ignore_ascii_case("or") {
        cx.alert(format!(
            "acl name '{name}' will never match. 'or' is used to express a logical disjunction within a condition."
        ));
        return;
    }
    if arg(words, 2).is_empty() {
        cx.alert(format!("error detected while parsing ACL '{name}' : missing fetch method in ACL expression ''."));
        return;
    }
    let acl = AclDef { name: name.to_owned(), words: words[2..].to_vec(), span: cx.span.clone() };
    cx.pb.px.rules.acls.push(acl);
}

/// `use_backend <name>|<fmt> [if|unless <cond>]`. In a backend HAProxy warns that the
/// rule is ignored but still checks the name it gives; so do we (the final model drops
/// it).
pub(super) fn parse_use_backend(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() {
        cx.alert("'use_backend' not allowed in 'defaults' section.");
        return;
    }
    cx.ignored_without(true, "use_backend", "");
    let name = arg(words, 1);
    if name.is_empty() {
        cx.alert("'use_backend' expects a backend name.");
        return;
    }
    let cond = match parse_condition(words, 2, cx.span) {
        Ok(c) => c,
        Err(extra) => {
            cx.alert(format!("unexpected keyword '{extra}' after switching rule, only 'if' and 'unless' are allowed."));
            return;
        }
    };
    let span = cx.span.clone();
    // COMPAT: HAProxy parses every name as a log-format string and keeps it dynamic
    // unless it is a single literal; a name without `%` is always literal.
    let target = if name.contains('%') {
        BackendTarget::Dynamic(FmtSrc { text: name.to_owned(), span: span.clone() })
    } else {
        BackendTarget::Static(BackendRef { name: name.to_owned(), index: usize::MAX, span: span.clone() })
    };
    cx.pb.px.use_backends.push(UseBackend { target, cond, span });
}

/// `use-server <name>|<fmt> if|unless <cond>` (the condition is mandatory).
pub(super) fn parse_use_server(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() {
        cx.alert("'use-server' not allowed in 'defaults' section.");
        return;
    }
    cx.ignored_without(false, "use-server", "");
    let name = arg(words, 1);
    if name.is_empty() {
        cx.alert("'use-server' expects a server name.");
        return;
    }
    let Ok(Some(cond)) = parse_condition(words, 2, cx.span) else {
        cx.alert("'use-server' requires either 'if' or 'unless' followed by a condition.");
        return;
    };
    let span = cx.span.clone();
    let target = if name.contains('%') {
        ServerTarget::Dynamic(FmtSrc { text: name.to_owned(), span: span.clone() })
    } else {
        ServerTarget::Static { name: name.to_owned(), index: usize::MAX }
    };
    cx.pb.px.use_servers.push(UseServer { target, cond, span });
}

/// `force-persist if|unless <cond>`, `ignore-persist if|unless <cond>`.
pub(super) fn parse_persist(cx: &mut Ctx<'_>, words: &[String]) {
    let kw = arg(words, 0);
    if cx.is_defaults() {
        cx.alert(format!("'{kw}' not allowed in 'defaults' section."));
        return;
    }
    cx.ignored_without(false, kw, "");
    let Ok(Some(cond)) = parse_condition(words, 1, cx.span) else {
        cx.alert(format!("'{kw}' requires either 'if' or 'unless' followed by a condition."));
        return;
    };
    let span = cx.span.clone();
    cx.pb.px.persist_rules.push(PersistRule { force: kw == "force-persist", cond, span });
}

/// `persist rdp-cookie[(<name>)]` (the only method); accepted without a word in a
/// frontend, where it does nothing, as HAProxy 2.6.
pub(super) fn parse_persist_method(cx: &mut Ctx<'_>, words: &[String]) {
    let method = arg(words, 1);
    if method.is_empty() {
        return cx.alert("missing persist method.");
    }
    let Some(rest) = method.strip_prefix("rdp-cookie") else {
        return cx.alert("unknown persist method.");
    };
    let name = match rest.strip_prefix('(') {
        Some(inner) => {
            if cx.too_many(words, 1, 0) {
                return;
            }
            match inner.split_once(')') {
                Some((name, _)) if !name.is_empty() => name,
                _ => return cx.alert("persist rdp-cookie(name)' requires an rdp cookie name."),
            }
        }
        None if rest.is_empty() => "msts",
        None => return cx.alert("persist rdp-cookie(name)' requires an rdp cookie name."),
    };
    cx.pb.px.persist_rdp_cookie = Some(name.to_owned());
}

/// `monitor-uri <uri>`.
pub(super) fn parse_monitor_uri(cx: &mut Ctx<'_>, words: &[String]) {
    cx.ignored_without(true, "monitor-uri", "");
    if cx.too_many(words, 1, 0) {
        return;
    }
    match arg(words, 1) {
        "" => cx.alert("'monitor-uri' expects an URI."),
        uri => cx.pb.px.monitor_uri = Some(uri.to_owned()),
    }
}

/// `monitor fail if|unless <cond>`.
pub(super) fn parse_monitor(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() {
        cx.alert("'monitor' not allowed in 'defaults' section.");
        return;
    }
    cx.ignored_without(true, "monitor", "");
    if arg(words, 1) != "fail" {
        cx.alert("'monitor' only supports 'fail'.");
        return;
    }
    let Ok(Some(cond)) = parse_condition(words, 2, cx.span) else {
        cx.alert("'monitor fail' requires either 'if' or 'unless' followed by a condition.");
        return;
    };
    warn_misplaced(cx, Stage::MonitorFail, "monitor fail");
    cx.pb.px.monitor_fail.push(cond);
}

/// `capture cookie <name> len <n>`, `capture request|response header <name> len <n>`.
pub(super) fn parse_capture(cx: &mut Ctx<'_>, words: &[String]) {
    cx.ignored_without(true, "capture", "");
    let (what, sub) = (arg(words, 1), arg(words, 2));
    let request = what == "request";
    if what != "cookie" && !((request || what == "response") && sub == "header") {
        cx.alert("'capture' expects 'cookie' or 'request header' or 'response header'.");
        return;
    }
    if cx.is_defaults() {
        cx.alert(format!("'capture {what}' not allowed in 'defaults' section."));
        return;
    }
    if cx.too_many(words, 4, 1) {
        return;
    }
    let span = cx.span.clone();
    if what == "cookie" {
        if arg(words, 4).is_empty() {
            cx.alert("'capture' expects 'cookie' <cookie_name> 'len' <len>.");
            return;
        }
        let len = atol(arg(words, 4)).max(0) as usize;
        cx.pb.px.captures.cookie = Some(CookieCapture { name: words[2].clone(), len, span });
        return;
    }
    if arg(words, 3).is_empty() || arg(words, 4) != "len" || arg(words, 5).is_empty() {
        cx.alert(format!("'capture {what}' expects 'header' <header_name> 'len' <len>."));
        return;
    }
    let decl = CaptureDecl { header: Some(words[3].clone()), len: atol(&words[5]).max(0) as usize, span };
    let list = if request { &mut cx.pb.px.captures.request } else { &mut cx.pb.px.captures.response };
    list.push(decl);
}

/// `declare capture request|response len <n>`.
pub(super) fn parse_declare(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() {
        cx.alert("'declare' not available in default section");
        return;
    }
    if !cx.cap().frontend {
        cx.alert("'declare' only available in frontend or listen section");
        return;
    }
    match arg(words, 1) {
        "" => {
            cx.alert("'declare' needs a second keyword that specify the type of declaration ('capture')");
            return;
        }
        "capture" => {}
        other => {
            cx.alert(format!("unknown declaration type '{other}' (supports 'capture')"));
            return;
        }
    }
    let dir = arg(words, 2);
    if dir != "request" && dir != "response" {
        cx.alert("'declare capture' requires a direction ('request' or 'response')");
        return;
    }
    if arg(words, 3) != "len" {
        cx.alert("'declare capture' requires a capture length ('len')");
        return;
    }
    let len = arg(words, 4);
    if len.is_empty() {
        cx.alert("'declare capture': 'len' requires a numeric value that represents the capture length");
        return;
    }
    if !super::value::is_integer(len.trim_start()) {
        // COMPAT: HAProxy 2.6 names the 'len' keyword here rather than the value.
        cx.alert("'declare capture': cannot parse the length 'len'.");
        return;
    }
    let n = atol(len);
    if n <= 0 {
        cx.alert("length must be > 0");
        return;
    }
    super::rule::declare_capture(cx, dir == "request", n as usize);
}

/// `unique-id-format <fmt>` (one word).
pub(super) fn parse_unique_id_format(cx: &mut Ctx<'_>, words: &[String]) {
    match (arg(words, 1), arg(words, 2)) {
        ("", _) => cx.alert("unique-id-format expects an argument."),
        (_, "") => cx.pb.px.unique_id_format = Some(FmtSrc { text: words[1].clone(), span: cx.span.clone() }),
        _ => cx.alert("unique-id-format expects only one argument, don't forget to escape spaces!"),
    }
}

/// `unique-id-header <name>`; HAProxy ignores further words.
pub(super) fn parse_unique_id_header(cx: &mut Ctx<'_>, words: &[String]) {
    match arg(words, 1) {
        "" => cx.alert("unique-id-header expects an argument."),
        name => cx.pb.px.unique_id_header = Some(name.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{BackendTarget, ServerTarget};
    use crate::parse::tests::{alerts, parse_ok, warnings};

    #[test]
    fn persist_rdp_cookie_names_its_cookie_as_haproxy_does() {
        let rdp =
            |l: &str| parse_ok(&format!("defaults\n mode tcp\n{l}backend b\n")).proxies[0].persist_rdp_cookie.clone();
        assert_eq!(rdp(" persist rdp-cookie\n").as_deref(), Some("msts"), "inherited from defaults");
        assert_eq!(rdp(" persist rdp-cookie(user)\n").as_deref(), Some("user"));
        assert_eq!(rdp("").as_deref(), None);
        let a = |l: &str| alerts(&format!("backend b\n mode tcp\n {l}\n"));
        assert_eq!(a("persist"), ["missing persist method."]);
        assert_eq!(a("persist cookie"), ["unknown persist method."]);
        let needs = "persist rdp-cookie(name)' requires an rdp cookie name.";
        assert_eq!(a("persist rdp-cookie()"), [needs]);
        assert_eq!(a("persist rdp-cookiex"), [needs]);
        assert_eq!(a("persist rdp-cookie(a) b"), ["'persist' cannot handle unexpected argument 'b'."]);
        assert!(a("persist rdp-cookie b").is_empty(), "HAProxy checks the arguments of the (name) form only");
        let (_, diags) = crate::parse::tests::parse(
            "backend b\n mode tcp\n persist rdp-cookie\n server s1 10.0.0.1\n server s2 10.0.0.2:3389\n\
             \x20server s3 10.0.0.3:+1\n",
        );
        let warned: Vec<&str> = diags.list.iter().map(|d| d.message.as_str()).filter(|m| m.contains("RDP")).collect();
        let lacks = |s: &str| {
            format!("backend 'b' : RDP cookie persistence will not work for server '{s}' because it lacks an explicit port number.")
        };
        assert_eq!(warned, [lacks("s1"), lacks("s3")]);
    }

    #[test]
    fn switching_rules() {
        let cfg = parse_ok(
            "frontend f\n mode http\n bind :80\n acl api path_beg /api\n use_backend b if api\n\
             use_backend be_%[req.hdr(host),lower] unless { src 10.0.0.0/8 }\n default_backend b\n\
             backend b\n mode http\n server s1 127.0.0.1:80\n use-server s1 if TRUE\n use-server %[str(s1)] unless FALSE\n\
             backend be_x\n mode http\n",
        );
        let fe = &cfg.proxies[0];
        assert_eq!(fe.rules.acls[0].name, "api");
        assert_eq!(fe.rules.acls[0].words, ["path_beg", "/api"]);
        assert!(matches!(&fe.use_backends[0].target, BackendTarget::Static(b) if b.index == 1));
        assert!(
            matches!(&fe.use_backends[1].target, BackendTarget::Dynamic(f) if f.text == "be_%[req.hdr(host),lower]")
        );
        let be = &cfg.proxies[1];
        assert!(matches!(&be.use_servers[0].target, ServerTarget::Static { name, index: 0 } if name == "s1"));
        assert!(matches!(&be.use_servers[1].target, ServerTarget::Dynamic(_)));
        assert!(be.use_servers[1].cond.negate);
    }

    #[test]
    fn switching_errors() {
        let a = |l: &str| alerts(&format!("listen l\n mode http\n bind :80\n server s 127.0.0.1:80\n {l}\n"));
        assert_eq!(a("use-server s"), ["'use-server' requires either 'if' or 'unless' followed by a condition."]);
        assert_eq!(a("use-server"), ["'use-server' expects a server name."]);
        assert_eq!(
            a("use-server t if TRUE"),
            ["proxy 'l' : unable to find server 't' referenced in a 'use-server' rule."]
        );
        assert_eq!(
            a("acl or path /"),
            ["acl name 'or' will never match. 'or' is used to express a logical disjunction within a condition."]
        );
        assert_eq!(a("acl a/b path /"), ["character '/' is not permitted in acl name 'a/b'."]);
        assert_eq!(
            a("acl foo"),
            ["error detected while parsing ACL 'foo' : missing fetch method in ACL expression ''."]
        );
        assert!(a("acl").is_empty());
        assert_eq!(alerts("defaults\n acl a path /\n"), ["'acl' not allowed in anonymous 'defaults' section."]);
        assert_eq!(alerts("defaults d\n use-server s if TRUE\n"), ["'use-server' not allowed in 'defaults' section."]);
        assert_eq!(
            warnings("frontend f\n use-server s if TRUE\n"),
            ["'use-server' ignored because frontend 'f' has no backend capability."]
        );
    }

    #[test]
    fn monitor_and_unique_id() {
        let cfg = parse_ok(
            "defaults d\n monitor-uri /health\n unique-id-format %{+X}o\\ %ci\n unique-id-header X-Id\n\
             frontend f from d\n mode http\n bind :80\n monitor fail if { nbsrv(b) lt 1 }\nbackend b\n",
        );
        let fe = &cfg.proxies[0];
        assert_eq!(fe.monitor_uri.as_deref(), Some("/health"));
        assert_eq!(fe.monitor_fail[0].words, ["{", "nbsrv(b)", "lt", "1", "}"]);
        assert_eq!(fe.unique_id_format.as_ref().map(|f| f.text.as_str()), Some("%{+X}o %ci"));
        assert_eq!(fe.unique_id_header.as_deref(), Some("X-Id"));
        let a = |l: &str| alerts(&format!("frontend f\n {l}\n"));
        assert_eq!(a("monitor fail"), ["'monitor fail' requires either 'if' or 'unless' followed by a condition."]);
        assert_eq!(a("monitor foo"), ["'monitor' only supports 'fail'."]);
        assert_eq!(a("monitor-uri"), ["'monitor-uri' expects an URI."]);
        assert_eq!(a("monitor-uri /a /b"), ["'monitor-uri' cannot handle unexpected argument '/b'."]);
        assert_eq!(a("unique-id-format"), ["unique-id-format expects an argument."]);
        assert_eq!(
            a("unique-id-format a b"),
            ["unique-id-format expects only one argument, don't forget to escape spaces!"]
        );
        assert_eq!(a("unique-id-header"), ["unique-id-header expects an argument."]);
        assert_eq!(
            warnings("frontend f\n http-request deny if FALSE\n monitor fail if TRUE\n"),
            ["a 'monitor fail' rule placed after an 'http-request' rule will still be processed before."]
        );
    }

    #[test]
    fn captures() {
        let cfg = parse_ok(
            "frontend f\n mode http\n bind :80\n capture request header Host len 32\n declare capture request len 8\n\
             capture response header Server len 16\n capture cookie SID= len 100\n\
             http-request capture req.hdr(x) len 4\n http-request capture src id 1\n http-response capture res.hdr(y) id 0\n",
        );
        let c = &cfg.proxies[0].captures;
        let req: Vec<(Option<&str>, usize)> = c.request.iter().map(|d| (d.header.as_deref(), d.len)).collect();
        assert_eq!(req, [(Some("Host"), 32), (None, 8), (None, 4)]);
        assert_eq!(c.response.len(), 1);
        assert_eq!(c.cookie.as_ref().map(|k| (k.name.as_str(), k.len)), Some(("SID=", 63)), "truncated as HAProxy");
        let a = |l: &str| alerts(&format!("frontend f\n {l}\n"));
        assert_eq!(a("capture foo"), ["'capture' expects 'cookie' or 'request header' or 'response header'."]);
        assert_eq!(
            a("capture request header Host len"),
            ["'capture request' expects 'header' <header_name> 'len' <len>."]
        );
        assert_eq!(
            a("capture request header Host len 1 x"),
            ["'capture request' cannot handle unexpected argument 'x'."]
        );
        assert_eq!(a("capture cookie X len"), ["'capture' expects 'cookie' <cookie_name> 'len' <len>."]);
        assert_eq!(a("declare capture request len 0"), ["length must be > 0"]);
        assert_eq!(a("declare capture request len x"), ["'declare capture': cannot parse the length 'len'."]);
        assert_eq!(a("declare foo"), ["unknown declaration type 'foo' (supports 'capture')"]);
        assert_eq!(a("declare capture"), ["'declare capture' requires a direction ('request' or 'response')"]);
        assert_eq!(a("declare capture request"), ["'declare capture' requires a capture length ('len')"]);
        assert_eq!(
            alerts("backend b\n declare capture request len 1\n"),
            ["'declare' only available in frontend or listen section"]
        );
        assert_eq!(
            a("http-request capture src id 0"),
            ["Proxy 'f': unable to find capture id '0' referenced by http-request capture rule."]
        );
        assert_eq!(
            warnings("frontend f\n capture cookie X len 64\n"),
            Vec::<String>::new(),
            "the truncation is reported by the final checks"
        );
    }
}
