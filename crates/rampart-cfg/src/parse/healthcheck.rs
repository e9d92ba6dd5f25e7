//! `option httpchk` and the `http-check` rules of a proxy (the server's `check`
//! settings are parsed with the other server options, `server.rs`).
//!
//! HAProxy counterparts: `proxy_parse_httpchk_opt()`, `proxy_parse_http_check_req()`,
//! `parse_tcpcheck_send_http()`, `parse_tcpcheck_expect()` (src/tcpcheck.c). Only the
//! parts the daemon runs are accepted; the others are refused by name.

use crate::model::{HttpCheck, HttpExpect, HttpExpectMatch};

use super::ctx::Ctx;
use super::{arg, not_yet};

/// `option httpchk [<method> <uri> [<version>]]` (one argument is the URI).
pub(super) fn parse_option_httpchk(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(false, "option httpchk", "") || cx.too_many(words, 3, 1) {
        return;
    }
    // the option starts a new request; the expect rules this section wrote before it
    // stay, the inherited ones go (as HAProxy does)
    let mut http = HttpCheck::default();
    let owner = section(cx);
    let health = &cx.pb.px.options.health;
    if health.http_owner.as_ref() == Some(&owner) {
        http.expects = health.http.as_ref().map(|h| h.expects.clone()).unwrap_or_default();
    }
    match &words[2.min(words.len())..] {
        [] => {}
        [uri] => http.uri = uri.clone(),
        [meth, uri, rest @ ..] => {
            http.meth = meth.clone();
            http.uri = uri.clone();
            if let Some(ver) = rest.first() {
                let mut lines = ver.split("\r\n");
                http.ver = lines.next().unwrap_or_default().to_owned();
                let tail: Vec<&str> = lines.collect();
                if !tail.is_empty() {
                    cx.warning(
                        "'option httpchk' : hiding headers or body at the end of the version string is deprecated. \
                         Please, consider to use 'http-check send' directive instead.",
                    );
                    deprecated_tail(&tail, &mut http);
                }
            }
        }
    }
    let health = &mut cx.pb.px.options.health;
    health.http = Some(http);
    health.http_owner = Some(owner);
    health.httpchk = true;
    health.proto = None;
}

/// HAProxy's warnings for rules whose check option is not set (the rules are ignored).
pub(super) fn check_rules_without_option(kind: &str, px: &crate::model::Proxy, out: &mut Vec<crate::diag::Diag>) {
    let h = &px.options.health;
    if !px.cap.backend {
        return;
    }
    let name = &px.name;
    if !h.httpchk && h.http.is_some() {
        let msg = format!("{kind} '{name}' uses http-check rules without 'option httpchk', so the rules are ignored.");
        out.push(crate::diag::Diag::warning(None, msg));
    }
    if h.proto != Some(crate::model::ProtoCheck::TcpCheck) && !h.tcp_rules.is_empty() {
        let msg = format!("{kind} '{name}' uses tcp-check rules without 'option tcp-check', so the rules are ignored.");
        out.push(crate::diag::Diag::warning(None, msg));
    }
}

/// Headers (and a body after an empty line) written after the version of
/// `option httpchk`, as HAProxy 2.6 still accepts.
fn deprecated_tail(lines: &[&str], http: &mut HttpCheck) {
    let mut it = lines.iter();
    for line in it.by_ref() {
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            http.hdrs.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let body: Vec<&str> = it.copied().collect();
    http.body = body.join("\r\n");
}

/// The section being parsed, as an owner of rules.
fn section(cx: &Ctx<'_>) -> (std::sync::Arc<str>, u32) {
    (cx.pb.px.span.file.clone(), cx.pb.px.span.line)
}

/// The rule set this section adds to: the one it started, or a fresh one (rules
/// inherited from `defaults` are dropped as soon as a proxy writes its own).
fn own_rules<'a>(cx: &'a mut Ctx<'_>) -> &'a mut HttpCheck {
    let owner = section(cx);
    let health = &mut cx.pb.px.options.health;
    if health.http_owner.as_ref() != Some(&owner) {
        health.http = None;
        health.http_owner = Some(owner);
    }
    health.http.get_or_insert_with(HttpCheck::default)
}

/// `http-check <action> ...`.
pub(super) fn parse_http_check(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.ignored_without(false, "http-check", "") {
        return;
    }
    let action = arg(words, 1);
    let res = match action {
        "disable-on-404" => {
            cx.pb.px.options.health.disable_on_404 = true;
            Ok(())
        }
        "send-state" => {
            cx.pb.px.options.health.send_state = true;
            Ok(())
        }
        // COMPAT: a comment only names a rule in the reports of tcp-check steps, which
        // HTTP checks do not print: it is accepted and has no effect.
        "comment" if !arg(words, 2).is_empty() => Ok(()),
        "send" => parse_send(cx, &words[2..]),
        "expect" => parse_expect(&words[2..]).map(|e| own_rules(cx).expects.push(e)),
        "connect" => Err(not_yet("http-check connect")),
        _ if action.starts_with("set-var") || action.starts_with("unset-var") => {
            Err(not_yet(&format!("http-check {}", action.split('(').next().unwrap_or(action))))
        }
        "" => Err("'http-check' expects 'comment', 'connect', 'disable-on-404', 'expect', 'send', \
                   'send-state', 'set-var' or 'unset-var'."
            .into()),
        _ => Err(format!(
            "'http-check' only supports 'comment', 'connect', 'disable-on-404', 'expect', 'send', \
             'send-state', 'set-var' or 'unset-var' (got '{action}')."
        )),
    };
    if let Err(msg) = res {
        cx.alert(msg);
    }
}

/// `http-check send [meth <m>] [uri <u>] [ver <v>] [hdr <name> <value>]* [body <s>]
/// [comment <c>]`.
fn parse_send(cx: &mut Ctx<'_>, args: &[String]) -> Result<(), String> {
    let mut http = own_rules(cx).clone();
    if !http.expects.is_empty() {
        return Err(
            "'http-check send' after an 'http-check expect' is not supported yet (one request per check).".into()
        );
    }
    let mut hdrs = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let word = args[i].as_str();
        let val = |n: usize| args.get(i + n).map(String::as_str).filter(|v| !v.is_empty());
        let missing = || format!("'http-check send' : '{word}' expects a value.");
        match word {
            "meth" | "uri" | "ver" | "body" | "comment" => {
                let v = val(1).ok_or_else(missing)?.to_owned();
                match word {
                    "meth" => http.meth = v,
                    "uri" => http.uri = v,
                    "ver" => http.ver = v,
                    "body" => http.body = v,
                    _ => {}
                }
                i += 2;
            }
            "hdr" => {
                let (Some(name), Some(value)) = (val(1), args.get(i + 2)) else {
                    return Err("'http-check send' : 'hdr' expects <name> and <value> as arguments.".into());
                };
                hdrs.push((name.to_owned(), value.clone()));
                i += 3;
            }
            "uri-lf" | "body-lf" => return Err(not_yet(&format!("http-check send {word}"))),
            _ => {
                return Err(format!(
                    "'http-check send' : expects 'comment', 'meth', 'uri', 'uri-lf', 'ver', 'hdr', 'body' or \
                     'body-lf' but got '{word}' as argument."
                ))
            }
        }
    }
    // headers given here replace those of the request so far (the deprecated tail of
    // `option httpchk` included)
    if !hdrs.is_empty() {
        http.hdrs = hdrs;
    }
    *own_rules(cx) = http;
    Ok(())
}

/// `http-check expect [comment <c>] [!] <match> <pattern>`.
pub(crate) fn parse_expect(args: &[String]) -> Result<HttpExpect, String> {
    let mut comment = None;
    let mut inverse = false;
    let mut i = 0;
    while let Some(mut word) = args.get(i).map(String::as_str) {
        // HAProxy also takes the `!` glued to the pattern type (`!string`)
        if let Some(w) = word.strip_prefix('!').filter(|w| !w.is_empty()) {
            inverse = true;
            word = w;
        }
        match word {
            "!" => inverse = true,
            "comment" => {
                comment = Some(
                    args.get(i + 1)
                        .filter(|v| !v.is_empty())
                        .cloned()
                        .ok_or_else(|| "'http-check expect' : 'comment' expects a string as argument.".to_owned())?,
                );
                i += 1;
            }
            "min-recv" | "ok-status" | "error-status" | "tout-status" | "on-success" | "on-error" | "status-code" => {
                return Err(not_yet(&format!("http-check expect {word}")))
            }
            "status" | "rstatus" | "string" | "rstring" => {
                let pattern = args
                    .get(i + 1)
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| format!("'http-check expect' : '{word}' expects <pattern> as an argument."))?;
                if let Some(extra) = args.get(i + 2) {
                    return Err(format!("'http-check expect' : unexpected argument '{extra}'."));
                }
                let matcher = match word {
                    "status" => HttpExpectMatch::Status(parse_codes(pattern)?),
                    "rstatus" => HttpExpectMatch::Rstatus(pattern.clone()),
                    "string" => HttpExpectMatch::String(pattern.clone()),
                    _ => HttpExpectMatch::Rstring(pattern.clone()),
                };
                return Ok(HttpExpect { inverse, matcher, comment });
            }
            "hdr" | "fhdr" | "string-lf" | "binary" | "rbinary" | "binary-lf" | "custom" => {
                return Err(not_yet(&format!("http-check expect {word}")))
            }
            _ => {
                return Err(format!(
                    "'http-check expect' : expects 'status', 'rstatus', 'string', 'rstring', 'hdr' or 'fhdr' \
                     but got '{word}' as argument."
                ))
            }
        }
        i += 1;
    }
    Err("'http-check expect' : expects a pattern type.".into())
}

/// `200`, `200-299`, `200,301-302`: inclusive ranges.
fn parse_codes(s: &str) -> Result<Vec<(u16, u16)>, String> {
    let bad = || format!("'http-check expect' : invalid status code range '{s}'.");
    s.split(',')
        .map(|r| {
            let (lo, hi) = r.split_once('-').unwrap_or((r, r));
            let lo: u16 = lo.trim().parse().map_err(|_| bad())?;
            let hi: u16 = hi.trim().parse().map_err(|_| bad())?;
            if lo > hi {
                return Err(bad());
            }
            Ok((lo, hi))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::model::{HttpExpectMatch, Proxy};
    use crate::parse::tests::{alerts, parse_ok};

    fn backend(lines: &str) -> Proxy {
        parse_ok(&format!("backend b\n{lines}")).proxies.remove(0)
    }

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn option_httpchk_forms() {
        let h = backend(" option httpchk\n").options.health.http.expect("httpchk");
        assert_eq!((h.meth.as_str(), h.uri.as_str(), h.ver.as_str()), ("OPTIONS", "/", "HTTP/1.0"));
        let h = backend(" option httpchk /h\n").options.health.http.expect("httpchk");
        assert_eq!((h.meth.as_str(), h.uri.as_str()), ("OPTIONS", "/h"));
        let h = backend(" option httpchk GET /x HTTP/1.1\n").options.health.http.expect("httpchk");
        assert_eq!((h.meth.as_str(), h.uri.as_str(), h.ver.as_str()), ("GET", "/x", "HTTP/1.1"));
        let h = backend(" option httpchk GET /x HTTP/1.1\\r\\nHost:\\ www\n").options.health.http.expect("httpchk");
        assert_eq!(h.ver, "HTTP/1.1");
        assert_eq!(h.hdrs, [("Host".to_owned(), "www".to_owned())]);
    }

    #[test]
    fn send_and_expect_rules() {
        let px = backend(
            " option httpchk\n http-check send meth POST uri /s ver HTTP/1.1 hdr X-A b body abc\n\
             http-check expect ! status 200-299,404\n http-check expect comment c rstring ^ok\n\
             http-check disable-on-404\n http-check send-state\n",
        );
        let h = px.options.health.http.expect("httpchk");
        assert_eq!(
            (h.meth.as_str(), h.uri.as_str(), h.ver.as_str(), h.body.as_str()),
            ("POST", "/s", "HTTP/1.1", "abc")
        );
        assert_eq!(h.hdrs, [("X-A".to_owned(), "b".to_owned())]);
        assert_eq!(h.expects.len(), 2);
        assert!(h.expects[0].inverse);
        assert_eq!(h.expects[0].matcher, HttpExpectMatch::Status(vec![(200, 299), (404, 404)]));
        assert_eq!(h.expects[1].comment.as_deref(), Some("c"));
        assert_eq!(h.expects[1].matcher, HttpExpectMatch::Rstring("^ok".into()));
        assert!(px.options.health.disable_on_404 && px.options.health.send_state);
    }

    #[test]
    fn defaults_are_inherited_until_a_proxy_writes_its_own_rules() {
        let cfg = parse_ok(
            "defaults\n option httpchk GET /d HTTP/1.1\\r\\nHdr:\\ gone\n http-check send hdr Host h body b\n\
             http-check expect status 200\n\
             backend b1\nbackend b2\n option httpchk\nbackend b3\n http-check send hdr X-New 1\n",
        );
        let h = |i: usize| cfg.proxies[i].options.health.http.clone().expect("httpchk");
        // inherited whole: the send's headers replaced the option's
        let b1 = h(0);
        assert_eq!(
            (b1.meth.as_str(), b1.uri.as_str(), b1.ver.as_str(), b1.body.as_str()),
            ("GET", "/d", "HTTP/1.1", "b")
        );
        assert_eq!(b1.hdrs, [("Host".to_owned(), "h".to_owned())]);
        assert_eq!(b1.expects.len(), 1);
        // the option starts over
        let b2 = h(1);
        assert_eq!((b2.meth.as_str(), b2.hdrs.len(), b2.expects.len()), ("OPTIONS", 0, 0));
        // so does a proxy's own http-check rule
        let b3 = h(2);
        assert_eq!((b3.meth.as_str(), b3.uri.as_str(), b3.body.as_str()), ("OPTIONS", "/", ""));
        assert_eq!(b3.hdrs, [("X-New".to_owned(), "1".to_owned())]);
        assert!(cfg.proxies[2].options.health.httpchk, "the option itself is inherited");
        // expect rules written before the option in the same section stay
        let px = backend(" http-check expect status 500\n option httpchk GET /x\n");
        let h = px.options.health.http.expect("httpchk");
        assert_eq!((h.uri.as_str(), h.expects.len()), ("/x", 1));
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
    fn expect_errors() {
        let e = |s: &str| super::parse_expect(&words(s)).unwrap_err();
        assert_eq!(e("status"), "'http-check expect' : 'status' expects <pattern> as an argument.");
        assert_eq!(e("status 300-200"), "'http-check expect' : invalid status code range '300-200'.");
        assert_eq!(e("hdr name x"), "'http-check expect hdr' is not supported yet");
        assert_eq!(e("min-recv 3 string x"), "'http-check expect min-recv' is not supported yet");
        assert!(e("bogus x").contains("but got 'bogus'"));
        assert!(super::parse_expect(&words("!string x")).expect("glued !").inverse);
        assert_eq!(
            alerts("backend b\n option httpchk\n http-check set-var(check.x) str(a)\n"),
            ["'http-check set-var' is not supported yet"]
        );
        assert_eq!(
            alerts("backend b\n option httpchk\n http-check connect port 80\n"),
            ["'http-check connect' is not supported yet"]
        );
        assert_eq!(
            alerts("backend b\n option httpchk\n http-check expect status 200\n http-check send meth GET\n"),
            ["'http-check send' after an 'http-check expect' is not supported yet (one request per check)."]
        );
    }
}
