//! Custom error pages from several places, resolved in file order into one page per
//! status: `errorfile <code> <file>`, `errorfiles <section> [<code>...]`,
//! `http-error status <code> <reply>`, the `http-errors <name>` sections they refer to,
//! and the `errorfiles <section>` argument of replies.
//!
//! HAProxy counterparts: `proxy_parse_errorfiles()`, `proxy_parse_http_error()`,
//! `proxy_check_errors()`, `http_check_http_reply()` and `cfg_parse_http_errors()`
//! (src/http_htx.c).

use crate::diag::Diag;
use crate::model::{HttpErrors, HttpReply, ReplyBody};
use crate::span::Span;

use super::ctx::{Ctx, ErrorConf, Page};
use super::errorfile::{load_error_file, HTTP_ERR_CODES};
use super::rule::{parse_reply, ActErr, Args};
use super::value::{atol, invalid_char};
use super::{arg, Parser};

/// `errorfiles <name> [<code>...]`.
pub(super) fn parse_errorfiles(cx: &mut Ctx<'_>, words: &[String]) {
    let name = arg(words, 1);
    if name.is_empty() {
        cx.alert("errorfiles : expects <name> as argument.");
        return;
    }
    let mut codes = Vec::new();
    for w in &words[2..] {
        let status = atol(w);
        match HTTP_ERR_CODES.iter().find(|&&c| i64::from(c) == status) {
            Some(&c) => codes.push(c),
            None => {
                cx.alert(format!("errorfiles : status code '{status}' not handled."));
                return;
            }
        }
    }
    let conf = ErrorConf::Section { name: name.to_owned(), codes, span: cx.span.clone() };
    cx.pb.errors.push(conf);
}

/// `http-error status <code> <reply arguments>`.
pub(super) fn parse_http_error(cx: &mut Ctx<'_>, words: &[String]) {
    let mut a = Args::new(words, 1, cx.span);
    let reply = match parse_reply(cx, &mut a, 0) {
        Ok(r) => r,
        Err(ActErr::Invalid(m) | ActErr::NotYet(m)) => {
            cx.alert(format!("http-error : {m}"));
            return;
        }
    };
    if reply.status == 0 {
        cx.alert("http-error : expects at least a <status> as arguments.\n");
        return;
    }
    if !HTTP_ERR_CODES.contains(&reply.status) {
        cx.alert(format!("http-error: status code '{}' not handled.", reply.status));
        return;
    }
    if !a.peek(0).is_empty() {
        cx.alert(format!("http-error : unknown keyword '{}'.", a.peek(0)));
        return;
    }
    let status = reply.status;
    let conf = match reply.body {
        ReplyBody::Errorfiles(name) => ErrorConf::Section { name, codes: vec![status], span: cx.span.clone() },
        ReplyBody::Errorfile(bytes) => ErrorConf::Page { status, page: Page::File(bytes) },
        ReplyBody::DefaultErrorfile => ErrorConf::Page { status, page: Page::Default },
        _ => ErrorConf::Page { status, page: Page::Reply(reply) },
    };
    cx.pb.errors.push(conf);
}

/// `http-errors <name>`. Returns the index of the new section.
pub(super) fn open_http_errors(p: &mut Parser, words: &[String], span: &Span) -> Option<usize> {
    let name = arg(words, 1);
    if name.is_empty() {
        p.alert(span, "missing name for http-errors section.");
        return None;
    }
    if let Some(c) = invalid_char(name) {
        p.alert(span, format!("character '{c}' is not permitted in 'http-errors' name '{name}'."));
    }
    if let Some(other) = p.http_errors.iter().find(|e| e.name == name) {
        let msg = format!("http-errors section '{name}' already exists (declared at {}).", other.span);
        p.alert(span, msg);
    }
    p.http_errors.push(HttpErrors { name: name.to_owned(), pages: Vec::new(), span: span.clone() });
    Some(p.http_errors.len() - 1)
}

/// A line inside an `http-errors` section: only `errorfile <code> <file>`.
pub(super) fn parse_http_errors_line(p: &mut Parser, idx: usize, words: &[String], span: &Span) {
    if words[0] != "errorfile" {
        p.alert(span, format!("unknown keyword '{}' in 'http-errors' section", words[0]));
        return;
    }
    let (code, path) = (arg(words, 1), arg(words, 2));
    if code.is_empty() || path.is_empty() {
        p.alert(span, "errorfile: expects <status_code> and <file> as arguments.");
        return;
    }
    let status = atol(code);
    let Some(&status) = HTTP_ERR_CODES.iter().find(|&&c| i64::from(c) == status) else {
        p.alert(span, format!("errorfile : status code '{status}' not handled."));
        return;
    };
    let mut warnings = Vec::new();
    let loaded = load_error_file(path, p.global.default_path.as_deref(), p.global.bufsize, &mut warnings);
    for w in warnings {
        p.warning(span, w);
    }
    match loaded {
        Ok(bytes) => {
            let pages = &mut p.http_errors[idx].pages;
            pages.retain(|(c, _)| *c != status);
            pages.push((status, bytes));
        }
        Err(e) => p.alert(span, format!("errorfile : {e}")),
    }
}

/// A proxy's error pages: complete responses, and other replies.
pub(super) type ErrorPages = (Vec<(u16, Vec<u8>)>, Vec<(u16, HttpReply)>);

/// The error pages of a proxy once its error lines are applied in order. Unknown
/// sections are reported.
pub(super) fn resolve_errors(
    px_name: &str,
    confs: &[ErrorConf],
    sections: &[HttpErrors],
    out: &mut Vec<Diag>,
) -> ErrorPages {
    let mut pages: Vec<(u16, Page)> = Vec::new();
    let mut set = |status: u16, page: Page| {
        pages.retain(|(c, _)| *c != status);
        pages.push((status, page));
    };
    for conf in confs {
        match conf {
            ErrorConf::Page { status, page } => set(*status, page.clone()),
            ErrorConf::Section { name, codes, span } => {
                let Some(section) = sections.iter().find(|s| &s.name == name) else {
                    let msg = format!("proxy '{px_name}': unknown http-errors section '{name}' (at {span}).");
                    out.push(Diag::alert(Some(span.clone()), msg));
                    continue;
                };
                let wanted: Vec<u16> = if codes.is_empty() { HTTP_ERR_CODES.to_vec() } else { codes.clone() };
                for status in wanted {
                    match section.pages.iter().find(|(c, _)| *c == status) {
                        Some((_, bytes)) => set(status, Page::File(bytes.clone())),
                        None if !codes.is_empty() => out.push(Diag::warning(
                            Some(span.clone()),
                            format!(
                                "config: proxy '{px_name}' : status '{status}' not declared in http-errors section '{name}' (at {span})."
                            ),
                        )),
                        None => {}
                    }
                }
            }
        }
    }
    let mut files = Vec::new();
    let mut replies = Vec::new();
    for (status, page) in pages {
        match page {
            Page::File(bytes) => files.push((status, bytes)),
            Page::Reply(reply) => replies.push((status, reply)),
            Page::Default => {}
        }
    }
    (files, replies)
}

/// Turns the `errorfiles <section>` body of a rule's reply into the section's page for
/// the status, as HAProxy's `http_check_http_reply()` does; `Err` is its message for an
/// unknown section, `Ok(Some(warning))` when the section lacks the status (the reply
/// then uses the proxy's page).
pub(super) fn resolve_reply(
    px_name: &str,
    reply: &mut HttpReply,
    sections: &[HttpErrors],
) -> Result<Option<String>, String> {
    let ReplyBody::Errorfiles(name) = &reply.body else { return Ok(None) };
    let Some(section) = sections.iter().find(|s| &s.name == name) else {
        return Err(format!("Proxy '{px_name}': unknown http-errors section '{name}' referenced by an http reply ."));
    };
    match section.pages.iter().find(|(c, _)| *c == reply.status) {
        Some((_, bytes)) => {
            reply.body = ReplyBody::Errorfile(bytes.clone());
            Ok(None)
        }
        None => {
            let warning = format!(
                "Proxy '{px_name}': status '{}' referenced by an http reply not declared in http-errors section '{name}'.",
                reply.status
            );
            reply.body = ReplyBody::DefaultErrorfile;
            Ok(Some(warning))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{HttpReqAction, ReplyBody};
    use crate::parse::tests::{alerts, parse, parse_ok};

    const E503: &str = "tests/cfg/files/503.http";

    #[test]
    fn error_pages_resolve_in_order() {
        let cfg = parse_ok(&format!(
            "http-errors site\n errorfile 503 {E503}\n errorfile 404 {E503}\n\
             defaults\n mode http\n errorfile 400 {E503}\n\
             frontend f\n bind :80\n errorfiles site\n http-error status 404 content-type text/plain string gone\n\
             http-error status 400 default-errorfiles\n\
             http-request deny deny_status 503 errorfiles site\n"
        ));
        let px = &cfg.proxies[0];
        let codes: Vec<u16> = px.errorfiles.iter().map(|(c, _)| *c).collect();
        assert_eq!(codes, [503], "404 replaced by http-error, 400 reset to the default");
        assert_eq!(px.http_error_replies.len(), 1);
        assert_eq!(px.http_error_replies[0].0, 404);
        let HttpReqAction::Deny(r) = &px.rules.http_request[0].action else { panic!("deny") };
        assert!(matches!(&r.body, ReplyBody::Errorfile(b) if b.starts_with(b"HTTP/1.0 503")));
        assert_eq!(cfg.http_errors[0].pages.len(), 2);
    }

    #[test]
    fn error_page_messages() {
        let a = |l: &str| alerts(&format!("frontend f\n mode http\n {l}\n"));
        assert_eq!(a("errorfiles"), ["errorfiles : expects <name> as argument."]);
        assert_eq!(a("errorfiles x 999"), ["errorfiles : status code '999' not handled."]);
        assert_eq!(a("errorfiles nope"), ["proxy 'f': unknown http-errors section 'nope' (at t.cfg:3)."]);
        assert_eq!(a("http-error"), ["http-error : expects at least a <status> as arguments.\n"]);
        assert_eq!(a("http-error status 201"), ["http-error: status code '201' not handled."]);
        assert_eq!(a("http-error status 999"), ["http-error : Unexpected status code '999'"]);
        assert_eq!(a("http-error status 503 foo"), ["http-error : unknown keyword 'foo'."]);
        assert_eq!(
            a("http-request deny errorfiles nope"),
            ["Proxy 'f': unknown http-errors section 'nope' referenced by an http reply ."]
        );
        assert_eq!(alerts("http-errors\n"), ["missing name for http-errors section."]);
        assert_eq!(alerts("http-errors e\n foo\n"), ["unknown keyword 'foo' in 'http-errors' section"]);
        assert_eq!(
            alerts("http-errors e\n errorfile 503\n"),
            ["errorfile: expects <status_code> and <file> as arguments."]
        );
        assert_eq!(alerts("http-errors e\n errorfile 201 x\n"), ["errorfile : status code '201' not handled."]);
        assert_eq!(
            alerts("http-errors e\nhttp-errors e\n"),
            ["http-errors section 'e' already exists (declared at t.cfg:1)."]
        );
        let (_, diags) = parse(&format!("http-errors e\n errorfile 503 {E503}\nfrontend f\n errorfiles e 404\n"));
        assert!(diags
            .list
            .iter()
            .any(|d| d.message
                == "config: proxy 'f' : status '404' not declared in http-errors section 'e' (at t.cfg:4)."));
    }
}
