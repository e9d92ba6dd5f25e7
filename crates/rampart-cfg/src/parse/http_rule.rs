//! `http-request <action> [args] [if|unless <cond>]`; only `return` is implemented.
//!
//! HAProxy counterparts: `parse_http_req_cond()` (src/http_rules.c),
//! `parse_http_return()` (src/http_act.c) and `http_parse_http_reply()` (src/http_htx.c).

use crate::kw::{self, Support};
use crate::model::{HttpRequestAction, HttpRequestRule, ReturnBody, ReturnSpec};

use super::proxy::Ctx;
use super::proxy_kw::parse_condition;
use super::value::atol;
use super::{arg, not_yet};

pub(super) fn parse_http_request(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() && cx.pb.px.name.is_empty() {
        cx.alert("'http-request' not allowed in anonymous 'defaults' section.");
        return;
    }
    if cx.pb.px.http_request_rules.last().is_some_and(|r| r.cond.is_none()) {
        // Every supported action (`return`) is final.
        cx.warning("previous 'http-request' action is final and has no condition attached, further entries are NOOP.");
    }
    let action = arg(words, 1);
    let Some(act) = kw::http_request_action(action) else {
        unknown_action(cx, action);
        return;
    };
    if act.support == Support::No {
        cx.alert(not_yet(&format!("http-request {}", act.name)));
        return;
    }
    let (spec, next) = match parse_return(cx, words, 2) {
        Ok(r) => r,
        Err(ReturnError::NotYet(what)) => {
            cx.alert(not_yet(&what));
            return;
        }
        Err(ReturnError::Invalid(msg)) => {
            let (kind, name) = (cx.pb.kind.type_str(), cx.pb.px.name.clone());
            cx.alert(format!("error detected in {kind} '{name}' while parsing 'http-request {action}' rule : {msg}."));
            return;
        }
    };
    let cond = match parse_condition(words, next, cx.span) {
        Ok(c) => c,
        Err(found) => {
            cx.alert(format!(
                "'http-request {action}' expects either 'if' or 'unless' followed by a condition but found '{found}'."
            ));
            return;
        }
    };
    if !cx.pb.px.use_backends.is_empty() {
        cx.warning("a 'http-request' rule placed after a 'use_backend' rule will still be processed before.");
    }
    let span = cx.span.clone();
    cx.pb.px.http_request_rules.push(HttpRequestRule { action: HttpRequestAction::Return(spec), cond, span });
}

fn unknown_action(cx: &mut Ctx<'_>, action: &str) {
    let list = kw::http_request_action_list();
    let missing = if action.is_empty() { " (missing argument)" } else { "" };
    let hint =
        kw::suggest_http_request_action(action).map(|b| format!(" Did you mean '{b}' maybe ?")).unwrap_or_default();
    cx.alert(format!("'http-request' expects {list}, but got '{action}'{missing}.{hint}"));
}

enum ReturnError {
    /// HAProxy's message, wrapped by the caller into "error detected in ...".
    Invalid(String),
    /// A valid HAProxy argument rampart does not implement yet.
    NotYet(String),
}

/// What the body of the reply is, while its arguments are read.
enum Payload {
    Empty,
    Raw(Vec<u8>),
    LogFormat(String),
}

/// Parses the `return` arguments from `at`; returns the reply and the index of the first
/// word that is not one of its arguments.
fn parse_return(cx: &mut Ctx<'_>, words: &[String], at: usize) -> Result<(ReturnSpec, usize), ReturnError> {
    use ReturnError::{Invalid, NotYet};
    let mut spec = ReturnSpec { status: 200, content_type: None, body: ReturnBody::None, headers: Vec::new() };
    let mut payload = Payload::Empty;
    let mut payload_arg: Option<&str> = None;
    let mut i = at;
    while let Some(word) = words.get(i) {
        let value = arg(words, i + 1);
        let is_payload = matches!(
            word.as_str(),
            "errorfiles" | "default-errorfiles" | "errorfile" | "file" | "string" | "lf-file" | "lf-string"
        );
        if is_payload {
            if let Some(prev) = payload_arg {
                return Err(Invalid(format!("unexpected '{word}' argument, '{prev}' already defined")));
            }
            payload_arg = Some(word);
        }
        match word.as_str() {
            "status" => {
                if value.is_empty() {
                    return Err(Invalid("'status' expects <status_code> as argument".into()));
                }
                let code = atol(value);
                if !(200..=599).contains(&code) {
                    return Err(Invalid(format!("Unexpected status code '{code}'")));
                }
                spec.status = code as u16;
            }
            "content-type" => {
                if value.is_empty() {
                    return Err(Invalid("'content-type' expects <ctype> as argument".into()));
                }
                spec.content_type = Some(value.to_owned());
            }
            "default-errorfiles" | "errorfiles" | "errorfile" | "lf-file" => {
                return Err(NotYet(format!("http-request return {word}")));
            }
            "file" => payload = Payload::Raw(read_payload_file(value, cx.bufsize).map_err(Invalid)?),
            "string" => {
                if value.is_empty() {
                    return Err(Invalid("'string' expects <str> as argument".into()));
                }
                payload = Payload::Raw(value.as_bytes().to_vec());
            }
            "lf-string" => {
                if value.is_empty() {
                    return Err(Invalid("'lf-string' expects <fmt> as argument".into()));
                }
                if value.contains('%') {
                    return Err(NotYet("http-request return lf-string with log-format expressions".into()));
                }
                payload = Payload::LogFormat(value.to_owned());
            }
            "hdr" => {
                let hvalue = arg(words, i + 2);
                if value.is_empty() || hvalue.is_empty() {
                    return Err(Invalid("'hdr' expects <name> and <value> as arguments".into()));
                }
                add_header(cx, &mut spec, value, hvalue)?;
                i += 1;
            }
            _ => break,
        }
        i += if word == "default-errorfiles" { 1 } else { 2 };
    }
    finish_return(cx, &mut spec, payload)?;
    Ok((spec, i))
}

fn add_header(cx: &mut Ctx<'_>, spec: &mut ReturnSpec, name: &str, value: &str) -> Result<(), ReturnError> {
    if ["content-length", "transfer-encoding", "content-type"].iter().any(|h| h.eq_ignore_ascii_case(name)) {
        cx.warning(format!("header '{name}' always ignored by the http reply."));
        return Ok(());
    }
    if value.contains('%') {
        return Err(ReturnError::NotYet("http-request return hdr with log-format expressions".into()));
    }
    spec.headers.push((name.to_owned(), value.to_owned()));
    Ok(())
}

fn read_payload_file(path: &str, bufsize: usize) -> Result<Vec<u8>, String> {
    if path.is_empty() {
        return Err("'file' expects <file> as argument".into());
    }
    let meta = std::fs::metadata(path).map_err(|_| format!("error opening file '{path}'"))?;
    if meta.len() > bufsize as u64 {
        return Err(format!("file '{path}' exceeds the buffer size ({} > {bufsize})", meta.len()));
    }
    std::fs::read(path).map_err(|_| format!("error reading file '{path}'"))
}

/// The checks HAProxy makes once all arguments are read.
fn finish_return(cx: &mut Ctx<'_>, spec: &mut ReturnSpec, payload: Payload) -> Result<(), ReturnError> {
    let no_body = spec.status == 204 || spec.status == 304;
    match payload {
        Payload::Empty => {
            if let Some(ct) = spec.content_type.take() {
                cx.warning(format!(
                    "content-type '{ct}' ignored by the http reply because neither errorfile nor payload defined."
                ));
            }
        }
        Payload::Raw(bytes) => {
            if no_body && !bytes.is_empty() {
                return Err(ReturnError::Invalid(format!("No body expected for {} responses", spec.status)));
            }
            if spec.content_type.is_none() && !bytes.is_empty() {
                return Err(ReturnError::Invalid(
                    "a content type must be defined when non-empty payload is configured".into(),
                ));
            }
            if bytes.is_empty() {
                if let Some(ct) = spec.content_type.take() {
                    cx.warning(format!(
                        "content-type '{ct}' ignored by the http reply when used with an empty payload."
                    ));
                }
            }
            if cx.bufsize.saturating_sub(bytes.len()) < cx.maxrewrite {
                cx.warning(
                    "http reply payload runs over the buffer space reserved to headers rewriting. \
                     It may lead to internal errors if strict rewriting mode is enabled.",
                );
            }
            spec.body = ReturnBody::Bytes(bytes);
        }
        Payload::LogFormat(fmt) => {
            if no_body {
                return Err(ReturnError::Invalid(format!("No body expected for {} responses", spec.status)));
            }
            if spec.content_type.is_none() {
                return Err(ReturnError::Invalid("a content type must be defined with a log-format payload".into()));
            }
            spec.body = ReturnBody::LogFormat(fmt);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::model::{HttpRequestAction, ReturnBody};
    use crate::parse::tests::{alerts, parse_ok, warnings};

    #[test]
    fn return_rules() {
        let cfg = parse_ok(
            "frontend f\n mode http\n bind :80\n\
             http-request return status 404 content-type text/plain string nope hdr X-A 1 if { path /x }\n\
             http-request return content-type text/plain lf-string hello unless TRUE\n\
             http-request return status 204\n",
        );
        let rules = &cfg.proxies[0].http_request_rules;
        let HttpRequestAction::Return(r) = &rules[0].action;
        assert_eq!((r.status, r.content_type.as_deref()), (404, Some("text/plain")));
        assert!(matches!(&r.body, ReturnBody::Bytes(b) if b == b"nope"));
        assert_eq!(r.headers, [("X-A".to_owned(), "1".to_owned())]);
        let cond = rules[0].cond.as_ref().expect("cond");
        assert!(!cond.negate);
        assert_eq!(cond.words, ["{", "path", "/x", "}"]);
        let HttpRequestAction::Return(r) = &rules[1].action;
        assert!(matches!(&r.body, ReturnBody::LogFormat(s) if s == "hello"));
        assert!(rules[1].cond.as_ref().is_some_and(|c| c.negate));
        let HttpRequestAction::Return(r) = &rules[2].action;
        assert!(matches!(r.body, ReturnBody::None));
        assert_eq!(r.status, 204);
    }

    #[test]
    fn return_errors() {
        let a = |rule: &str| alerts(&format!("frontend f\n mode http\n bind :80\n http-request {rule}\n"));
        let wrap = |m: &str| format!("error detected in frontend 'f' while parsing 'http-request return' rule : {m}.");
        assert_eq!(a("return status 999"), [wrap("Unexpected status code '999'")]);
        assert_eq!(
            a("return string hi"),
            [wrap("a content type must be defined when non-empty payload is configured")]
        );
        assert_eq!(a("return status 204 content-type t string hi"), [wrap("No body expected for 204 responses")]);
        assert_eq!(a("return lf-string x"), [wrap("a content type must be defined with a log-format payload")]);
        assert_eq!(a("return string a string b"), [wrap("unexpected 'string' argument, 'string' already defined")]);
        assert_eq!(a("return hdr a"), [wrap("'hdr' expects <name> and <value> as arguments")]);
        assert_eq!(a("return status 200 errorfile /x"), ["'http-request return errorfile' is not supported yet"]);
        assert_eq!(
            a("return content-type t lf-string %[src]"),
            ["'http-request return lf-string with log-format expressions' is not supported yet"]
        );
        assert_eq!(
            a("return content-type t string x foo"),
            ["'http-request return' expects either 'if' or 'unless' followed by a condition but found 'foo'."]
        );
        assert_eq!(a("deny"), ["'http-request deny' is not supported yet"]);
        assert_eq!(a("set-var(txn.x) str(a)"), ["'http-request set-var' is not supported yet"]);
        let unknown = a("retrun");
        assert!(unknown[0].starts_with("'http-request' expects 'wait-for-handshake', 'ot-group', "));
        assert!(unknown[0].ends_with("'set-priority-offset', but got 'retrun'. Did you mean 'return' maybe ?"));
        assert_eq!(
            alerts("defaults\n http-request return status 200\n"),
            ["'http-request' not allowed in anonymous 'defaults' section."]
        );
    }

    #[test]
    fn return_warnings() {
        let w = |rule: &str| warnings(&format!("frontend f\n mode http\n bind :80\n http-request {rule}\n"));
        assert_eq!(
            w("return content-type a"),
            ["content-type 'a' ignored by the http reply because neither errorfile nor payload defined."]
        );
        assert_eq!(w("return hdr content-length 3"), ["header 'content-length' always ignored by the http reply."]);
    }
}
