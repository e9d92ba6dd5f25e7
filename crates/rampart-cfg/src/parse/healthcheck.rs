//! `option httpchk` and the `http-check` rules of a proxy (the server's `check`
//! settings are parsed with the other server options, `server.rs`).
//!
//! As in HAProxy 2.2+, the request of `option httpchk` is a `send` rule marked
//! [`HttpSend::from_opt`]: the first explicit `http-check send` merges into it, and
//! while `option httpchk` is in effect each rule must follow the one it needs
//! (`send` after a `connect` or at the start, `expect` after a `send` or an `expect`,
//! `connect` after an `expect`). The implicit connect first and the implicit `expect
//! status 200-399` after a last `send` are added by the daemon.
//!
//! HAProxy counterparts: `proxy_parse_httpchk_opt()`, `proxy_parse_httpchk_req()`,
//! `proxy_parse_httpcheck()`, `parse_tcpcheck_send_http()`, `tcpcheck_add_http_rule()`
//! (src/tcpcheck.c); the rules shared with `tcp-check` are parsed in `check_step`.

use crate::model::{CheckAction, CheckRule, HttpSend, ProtoCheck, Proxy};
use crate::span::Span;

use super::arg;
use super::check_step::{self as step, List};
use super::ctx::Ctx;
use super::rule::{ActErr, ActResult};

/// `option httpchk [<method> <uri> [<version>]]` (one argument is the URI).
pub(super) fn parse_option_httpchk(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(false, "option httpchk", "") || cx.too_many(words, 3, 1) {
        return;
    }
    let mut send = HttpSend { from_opt: true, ..HttpSend::default() };
    match &words[2.min(words.len())..] {
        [] => {}
        [uri] => send.uri = Some(uri.clone()),
        [meth, uri, rest @ ..] => {
            send.meth = Some(meth.clone());
            send.uri = Some(uri.clone());
            if let Some(ver) = rest.first() {
                let (ver, tail) = ver.split_once("\r\n").unwrap_or((ver, ""));
                send.ver = Some(ver.to_owned());
                if !tail.is_empty() {
                    cx.warning(
                        "'option httpchk' : hiding headers or body at the end of the version string is deprecated. \
                         Please, consider to use 'http-check send' directive instead.",
                    );
                    deprecated_tail(&format!("\r\n{tail}"), &mut send);
                }
            }
        }
    }
    let span = cx.span.clone();
    add_from_option(own_rules(cx), send, &span);
    let health = &mut cx.pb.px.options.health;
    health.httpchk = true;
    health.proto = None;
    health.external = false;
}

/// Places the request of `option httpchk` (HAProxy's `tcpcheck_add_http_rule()` for an
/// implicit send): first (after a first `connect`), replacing an earlier option's, or
/// merged into an explicit first `send`.
fn add_from_option(rules: &mut Vec<CheckRule>, send: HttpSend, span: &Span) {
    let first = first_step(rules, 0);
    let first = match first {
        Some(i) if matches!(rules[i].action, CheckAction::Connect(_)) => first_step(rules, i + 1),
        other => other,
    };
    match first.map(|i| (i, &mut rules[i].action)) {
        Some((i, CheckAction::SendHttp(old))) if old.from_opt => {
            rules[i] = from_opt_rule(send, span);
        }
        Some((_, CheckAction::SendHttp(old))) => old.overwrite_with(HttpSend { from_opt: false, ..send }),
        _ => rules.insert(0, from_opt_rule(send, span)),
    }
}

fn from_opt_rule(send: HttpSend, span: &Span) -> CheckRule {
    CheckRule { action: CheckAction::SendHttp(send), comment: None, index: 0, span: span.clone() }
}

/// The first rule from `from` on that is a step (not a comment nor a variable action).
fn first_step(rules: &[CheckRule], from: usize) -> Option<usize> {
    (from..rules.len()).find(|&i| is_step(&rules[i]))
}

fn is_step(r: &CheckRule) -> bool {
    !matches!(r.action, CheckAction::Comment | CheckAction::Var(_))
}

/// HAProxy's warnings for rules whose check option is not set (the rules are ignored).
pub(super) fn check_rules_without_option(kind: &str, px: &Proxy, out: &mut Vec<crate::diag::Diag>) {
    let h = &px.options.health;
    if !px.cap.backend {
        return;
    }
    let name = &px.name;
    let explicit = h.http_rules.iter().any(|r| !matches!(&r.action, CheckAction::SendHttp(s) if s.from_opt));
    if !h.httpchk && explicit {
        let msg = format!("{kind} '{name}' uses http-check rules without 'option httpchk', so the rules are ignored.");
        out.push(crate::diag::Diag::warning(None, msg));
    }
    if h.proto != Some(ProtoCheck::TcpCheck) && !h.tcp_rules.is_empty() {
        let msg = format!("{kind} '{name}' uses tcp-check rules without 'option tcp-check', so the rules are ignored.");
        out.push(crate::diag::Diag::warning(None, msg));
    }
}

/// Headers (and a body after an empty line) written after the version of
/// `option httpchk`, as HAProxy 2.6 still accepts: `tail` starts with the first CRLF.
fn deprecated_tail(tail: &str, send: &mut HttpSend) {
    let (hdrs, body) = match tail.find("\r\n\r\n") {
        Some(0) => ("", Some(&tail[4..])),
        Some(i) => (&tail[2..i], Some(&tail[i + 4..])),
        None => (&tail[2..], None),
    };
    for line in hdrs.split("\r\n").filter(|l| !l.is_empty()) {
        if let Some((name, value)) = line.split_once(':') {
            send.hdrs.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    send.body = body.map(str::to_owned);
}

/// The rule list this section adds to: the one it started, or a fresh one (rules
/// inherited from `defaults` are dropped as soon as a proxy writes its own).
fn own_rules<'a>(cx: &'a mut Ctx<'_>) -> &'a mut Vec<CheckRule> {
    let owner = (cx.pb.px.span.file.clone(), cx.pb.px.span.line);
    let health = &mut cx.pb.px.options.health;
    if health.http_owner.as_ref() != Some(&owner) {
        health.http_rules.clear();
        health.http_owner = Some(owner);
    }
    &mut health.http_rules
}

/// `http-check <action> ...`.
pub(super) fn parse_http_check(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(false, "http-check", "") {
        return;
    }
    let action = arg(words, 1);
    let res = match action {
        "disable-on-404" | "send-state" if words.len() > 2 => {
            return cx.alert(super::too_many_args(&format!("http-check {action}"), &words[2]));
        }
        "disable-on-404" => {
            cx.pb.px.options.health.disable_on_404 = true;
            Ok(())
        }
        "send-state" => {
            cx.pb.px.options.health.send_state = true;
            Ok(())
        }
        _ => add_rule(cx, &words[1.min(words.len())..]),
    };
    if let Err(e) = res {
        let name = action.split('(').next().unwrap_or(action);
        cx.alert(step::message(List::Http, name, e));
    }
}

/// Parses one rule and adds it to the section's list.
fn add_rule(cx: &mut Ctx<'_>, args: &[String]) -> ActResult<()> {
    let span = cx.span.clone();
    let active = cx.pb.px.options.health.httpchk;
    let rules = own_rules(cx);
    let index = match rules.last() {
        Some(CheckRule { action: CheckAction::SendHttp(s), .. }) if s.from_opt => 0,
        Some(r) => r.index + 1,
        None => 0,
    };
    let mut rule = parse_rule(args, rules, &span)?;
    rule.index = index;
    if !active {
        // HAProxy keeps them aside, unchecked, until `option httpchk` comes
        rules.push(rule);
        return Ok(());
    }
    check_order(rules, &rule)?;
    if let CheckAction::SendHttp(send) = &mut rule.action {
        if let Some(i) = first_step(rules, 0).filter(|&i| is_opt_send(&rules[i])) {
            let mut merged = rules.remove(i);
            if let CheckAction::SendHttp(opt) = &mut merged.action {
                opt.overwrite_with(std::mem::take(send));
                opt.from_opt = false;
            }
            merged.comment = rule.comment.take();
            rule = merged;
        }
    }
    rules.push(rule);
    Ok(())
}

fn is_opt_send(r: &CheckRule) -> bool {
    matches!(&r.action, CheckAction::SendHttp(s) if s.from_opt)
}

/// The order HAProxy requires between the steps of an HTTP check.
fn check_order(rules: &[CheckRule], rule: &CheckRule) -> ActResult<()> {
    let Some(last) = rules.iter().rev().find(|r| is_step(r)) else { return Ok(()) };
    if is_opt_send(last) {
        return Ok(());
    }
    let step = rule.index + 1;
    let missing = match (&rule.action, &last.action) {
        (CheckAction::SendHttp(_), CheckAction::Connect(_)) => return Ok(()),
        (CheckAction::SendHttp(_), _) => ("send", "connect"),
        (CheckAction::Expect(_), CheckAction::SendHttp(_) | CheckAction::Expect(_)) => return Ok(()),
        (CheckAction::Expect(_), _) => ("expect", "send"),
        (CheckAction::Connect(_), CheckAction::Expect(_)) => return Ok(()),
        (CheckAction::Connect(_), _) => ("connect", "expect"),
        _ => return Ok(()),
    };
    Err(ActErr::Invalid(format!(
        "unable to add http-check {} rule at step {step} (missing {} rule)",
        missing.0, missing.1
    )))
}

fn parse_rule(args: &[String], rules: &[CheckRule], span: &Span) -> ActResult<CheckRule> {
    let action = arg(args, 0);
    let rest = &args[1.min(args.len())..];
    let rule = |action, comment| CheckRule { action, comment, index: 0, span: span.clone() };
    match action {
        "comment" => Ok(rule(CheckAction::Comment, Some(step::parse_comment(rest)?))),
        "connect" => {
            super::tcpcheck::first_connect(rules)?;
            let (c, comment) = step::parse_connect(rest, List::Http, span)?;
            Ok(rule(CheckAction::Connect(c), comment))
        }
        "send" => {
            let (send, comment) = parse_send(rest)?;
            Ok(rule(CheckAction::SendHttp(send), comment))
        }
        "expect" => {
            let (e, comment) = step::parse_expect(rest, List::Http, span)?;
            Ok(rule(CheckAction::Expect(e), comment))
        }
        _ if super::tcpcheck::is_var_action(action) => Ok(rule(CheckAction::Var(step::parse_var(args, span)?), None)),
        _ => Err(ActErr::Invalid(format!(
            "'http-check' only supports 'disable-on-404', 'send-state', 'comment', 'connect', 'send', 'expect', \
             'set-var-fmt', 'set-var', 'unset-var'. but got '{action}'"
        ))),
    }
}

/// `http-check send [meth <m>] [uri <u>|uri-lf <fmt>] [ver <v>] [hdr <name> <fmt>]*
/// [body <s>|body-lf <fmt>] [comment <c>]`.
fn parse_send(args: &[String]) -> ActResult<(HttpSend, Option<String>)> {
    let mut send = HttpSend::default();
    let mut comment = None;
    let mut i = 0;
    while i < args.len() {
        let word = args[i].as_str();
        let val = arg(args, i + 1);
        if val.is_empty() && word != "hdr" {
            return Err(ActErr::Invalid(format!("'{word}' expects a string as argument.")));
        }
        match word {
            "meth" => send.meth = Some(val.to_owned()),
            "uri" | "uri-lf" => {
                send.uri = Some(val.to_owned());
                send.uri_lf = word == "uri-lf";
            }
            "ver" => send.ver = Some(val.to_owned()),
            "body" | "body-lf" => {
                send.body = Some(val.to_owned());
                send.body_lf = word == "body-lf";
            }
            "comment" => comment = Some(val.to_owned()),
            "hdr" => {
                add_header(&mut send, val, arg(args, i + 2))?;
                i += 1;
            }
            _ => {
                return Err(ActErr::Invalid(format!(
                    "expects 'comment', 'meth', 'uri', 'uri-lf', 'ver', 'hdr', 'body' or 'body-lf' but got '{word}' \
                     as argument."
                )))
            }
        }
        i += 2;
    }
    Ok((send, comment))
}

/// `hdr <name> <value>`: `content-length` and `transfer-encoding` are dropped (the
/// daemon frames the body), one `host` only.
fn add_header(send: &mut HttpSend, name: &str, value: &str) -> ActResult<()> {
    if name.is_empty() || value.is_empty() {
        return Err(ActErr::Invalid("'hdr' expects <name> and <value> as arguments".into()));
    }
    if name.eq_ignore_ascii_case("host") {
        if let Some((_, prev)) = send.hdrs.iter().find(|(n, _)| n.eq_ignore_ascii_case("host")) {
            return Err(ActErr::Invalid(format!("'{name}' header already defined (previous value is '{prev}')")));
        }
    }
    if !name.eq_ignore_ascii_case("content-length") && !name.eq_ignore_ascii_case("transfer-encoding") {
        send.hdrs.push((name.to_owned(), value.to_owned()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::model::{CheckAction, CheckRule, ExpectMatch, HttpSend, Proxy};
    use crate::parse::tests::{alerts, parse_ok};

    fn backend(lines: &str) -> Proxy {
        parse_ok(&format!("backend b\n{lines}")).proxies.remove(0)
    }

    fn send(r: &CheckRule) -> &HttpSend {
        match &r.action {
            CheckAction::SendHttp(s) => s,
            other => panic!("not a send: {other:?}"),
        }
    }

    fn kinds(rules: &[CheckRule]) -> String {
        rules
            .iter()
            .map(|r| match r.action {
                CheckAction::Comment => '#',
                CheckAction::Connect(_) => 'c',
                CheckAction::Send(_) | CheckAction::SendHttp(_) => 's',
                CheckAction::Expect(_) => 'e',
                CheckAction::Var(_) => 'v',
            })
            .collect()
    }

    #[test]
    fn option_httpchk_forms() {
        let r = |l: &str| backend(l).options.health.http_rules;
        let s = r(" option httpchk\n");
        assert_eq!(*send(&s[0]), HttpSend { from_opt: true, ..Default::default() });
        assert_eq!(send(&r(" option httpchk /h\n")[0]).uri.as_deref(), Some("/h"));
        let x = r(" option httpchk GET /x HTTP/1.1\n");
        assert_eq!((send(&x[0]).meth.as_deref(), send(&x[0]).ver.as_deref()), (Some("GET"), Some("HTTP/1.1")));
        let x = r(" option httpchk GET /x HTTP/1.1\\r\\nHost:\\ www\\r\\n\\r\\nbody\n");
        assert_eq!(send(&x[0]).ver.as_deref(), Some("HTTP/1.1"));
        assert_eq!(send(&x[0]).hdrs, [("Host".to_owned(), "www".to_owned())]);
        assert_eq!(send(&x[0]).body.as_deref(), Some("body"));
    }

    #[test]
    fn send_merges_into_the_option_request() {
        let px = backend(
            " option httpchk GET /o\n http-check send uri /s ver HTTP/1.1 hdr X-A b body abc\n\
             http-check expect ! status 200-299,404\n http-check expect comment c rstring ^ok\n\
             http-check disable-on-404\n http-check send-state\n",
        );
        let h = &px.options.health;
        assert_eq!(kinds(&h.http_rules), "see");
        let s = send(&h.http_rules[0]);
        assert!(!s.from_opt);
        assert_eq!((s.meth.as_deref(), s.uri.as_deref(), s.body.as_deref()), (Some("GET"), Some("/s"), Some("abc")));
        assert_eq!(s.hdrs, [("X-A".to_owned(), "b".to_owned())]);
        let CheckAction::Expect(e) = &h.http_rules[1].action else { panic!("expect") };
        assert!(e.inverse);
        assert_eq!(e.matcher, ExpectMatch::Status(vec![(200, 299), (404, 404)]));
        assert_eq!(h.http_rules[2].comment.as_deref(), Some("c"));
        assert!(h.disable_on_404 && h.send_state);
    }

    #[test]
    fn several_requests_each_after_a_connect() {
        let px = backend(
            " option httpchk\n http-check connect port 81\n http-check set-var(check.p) str(/a)\n\
             http-check send uri-lf %[var(check.p)]\n http-check expect status 200\n\
             http-check connect\n http-check send meth GET body-lf %[srv_name]\n",
        );
        let r = &px.options.health.http_rules;
        assert_eq!(kinds(r), "cvsecs");
        assert!(send(&r[2]).uri_lf && send(&r[5]).body_lf);
        // the merged request keeps the option's index, the others follow the last one
        // written (HAProxy numbers them so)
        assert_eq!(r.iter().map(|r| r.index).collect::<Vec<_>>(), [0, 1, 0, 1, 2, 3]);
    }

    #[test]
    fn the_option_after_rules_merges_into_the_first_send() {
        let r = backend(" http-check send meth GET uri /a\n option httpchk HEAD /b\n").options.health.http_rules;
        assert_eq!(kinds(&r), "s");
        assert_eq!((send(&r[0]).meth.as_deref(), send(&r[0]).uri.as_deref()), (Some("HEAD"), Some("/b")));
        let r = backend(" http-check connect\n http-check expect status 200\n option httpchk /c\n")
            .options
            .health
            .http_rules;
        assert_eq!(kinds(&r), "sce", "placed first; the daemon moves it after the connect");
        let r = backend(" option httpchk /a\n option httpchk /b\n").options.health.http_rules;
        assert_eq!((kinds(&r).as_str(), send(&r[0]).uri.as_deref()), ("s", Some("/b")));
    }

    #[test]
    fn defaults_are_inherited_until_a_proxy_writes_its_own_rules() {
        let cfg = parse_ok(
            "defaults\n option httpchk GET /d HTTP/1.1\\r\\nHdr:\\ gone\n http-check send hdr Host h body b\n\
             http-check expect status 200\n\
             backend b1\nbackend b2\n option httpchk\nbackend b3\n http-check send hdr X-New 1\n",
        );
        let r = |i: usize| cfg.proxies[i].options.health.http_rules.clone();
        let b1 = r(0);
        assert_eq!(kinds(&b1), "se");
        let s = send(&b1[0]);
        assert_eq!((s.meth.as_deref(), s.uri.as_deref(), s.body.as_deref()), (Some("GET"), Some("/d"), Some("b")));
        assert_eq!(s.hdrs, [("Host".to_owned(), "h".to_owned())]);
        assert_eq!(*send(&r(1)[0]), HttpSend { from_opt: true, ..Default::default() });
        let b3 = r(2);
        assert_eq!(kinds(&b3), "s");
        assert_eq!((send(&b3[0]).meth.as_deref(), send(&b3[0]).uri.as_deref()), (None, None));
        assert_eq!(send(&b3[0]).hdrs, [("X-New".to_owned(), "1".to_owned())]);
        assert!(cfg.proxies[2].options.health.httpchk, "the option itself is inherited");
    }

    #[test]
    fn rules_without_their_option_are_ignored_with_a_warning() {
        let (_, diags) = crate::parse::tests::parse(
            "backend b\n http-check expect status 200\n tcp-check expect string x\nbackend c\n option httpchk\n",
        );
        let w: Vec<&str> =
            diags.list.iter().filter(|d| d.message.contains("rules are ignored")).map(|d| d.message.as_str()).collect();
        assert_eq!(
            w,
            [
                "backend 'b' uses http-check rules without 'option httpchk', so the rules are ignored.",
                "backend 'b' uses tcp-check rules without 'option tcp-check', so the rules are ignored."
            ]
        );
        assert!(!backend(" http-check expect status 200\n").options.health.httpchk);
    }

    #[test]
    fn errors() {
        let a = |l: &str| alerts(&format!("backend b\n option httpchk\n{l}"));
        assert_eq!(
            a(" http-check expect status 200\n http-check send meth GET\n"),
            ["'http-check send' : unable to add http-check send rule at step 2 (missing connect rule)."]
        );
        assert_eq!(
            a(" http-check connect\n http-check expect status 200\n"),
            ["'http-check expect' : unable to add http-check expect rule at step 2 (missing send rule)."]
        );
        assert_eq!(
            a(" http-check connect\n http-check send uri /\n http-check connect\n"),
            ["'http-check connect' : unable to add http-check connect rule at step 2 (missing expect rule)."]
        );
        assert!(a(" http-check send uri /\n http-check connect\n")[0].contains("first step MUST also be a 'connect'"));
        assert_eq!(
            a(" http-check send hdr host a hdr Host b\n"),
            ["'http-check send' : 'Host' header already defined (previous value is 'a')."]
        );
        assert_eq!(a(" http-check send uri\n"), ["'http-check send' : 'uri' expects a string as argument.."]);
        assert_eq!(a(" http-check connect proto fcgi\n"), ["'http-check connect proto fcgi' is not supported yet"]);
        assert_eq!(
            a(" http-check disable-on-404 x\n"),
            ["'http-check disable-on-404' cannot handle unexpected argument 'x'."]
        );
        assert!(a(" http-check expect binary 00\n")[0].ends_with("but got 'binary' as argument."));
        let s = backend(" option httpchk\n http-check send hdr Content-Length 3 hdr X 1\n").options.health.http_rules;
        assert_eq!(send(&s[0]).hdrs, [("X".to_owned(), "1".to_owned())], "framing headers are the daemon's");
    }
}
