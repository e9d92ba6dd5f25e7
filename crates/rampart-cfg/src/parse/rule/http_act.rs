//! Arguments of the HTTP actions (those that are not replies, redirects or variables).
//! Each parser starts on the word after the action and leaves the cursor on the first
//! word it did not take, where the rule's condition may start.
//!
//! HAProxy counterparts: the `parse_*()` functions of src/http_act.c, `tcp_parse_set_src_dst()`
//! (src/tcp_act.c), `parse_set_priority_class()` (src/queue.c),
//! `cfg_parse_rule_set_timeout()` (src/action.c).

use std::time::Duration;

use crate::model::{
    AddrAction, CaptureAction, CaptureDecl, CaptureSlot, ExprSrc, FmtSrc, HdrMatch, HeaderAction, Normalizer,
    PatRefAction, PatRefOp, SetStatus, TimeoutName, TimeoutValue, UriAction, WaitForBody,
};

use super::super::ctx::Ctx;
use super::super::value::{atol, parse_time_ms, TimeError};
use super::{invalid, ActResult, Args};

/// `set-header`, `add-header`, `del-header`, `replace-header`, `replace-value`.
pub(super) fn parse_header(a: &mut Args<'_>, action: &str) -> ActResult<HeaderAction> {
    match action {
        "set-header" | "add-header" => {
            let (name, value) = parse_name_fmt(a)?;
            Ok(if action == "set-header" {
                HeaderAction::Set { name, value }
            } else {
                HeaderAction::Add { name, value }
            })
        }
        "del-header" => parse_del_header(a),
        _ => {
            if a.peek(0).is_empty() || a.peek(1).is_empty() || a.peek(2).is_empty() {
                return invalid("expects exactly 3 arguments");
            }
            let name = a.next().to_owned();
            let regex = a.regex(a.peek(0));
            let replace = a.fmt(a.peek(1));
            a.at += 2;
            Ok(if action == "replace-header" {
                HeaderAction::Replace { name, regex, replace }
            } else {
                HeaderAction::ReplaceValue { name, regex, replace }
            })
        }
    }
}

/// `<name> <fmt>` of `set-header`, `add-header` and `early-hint`.
pub(super) fn parse_name_fmt(a: &mut Args<'_>) -> ActResult<(String, FmtSrc)> {
    if a.peek(0).is_empty() || a.peek(1).is_empty() {
        return invalid("expects exactly 2 arguments");
    }
    let name = a.next().to_owned();
    let text = a.next();
    let value = a.fmt(text);
    Ok((name, value))
}

/// `add-acl(<file>) <key>`, `del-acl(<file>) <key>`, `set-map(<file>) <key> <value>`,
/// `del-map(<file>) <key>`; `word` is the action as written. As HAProxy, the name is the
/// text between the 8-character `add-acl(` and the last character of the word, whatever
/// they are (a word too short to hold one names no file).
pub(super) fn parse_pat_ref(word: &str, action: &str, a: &mut Args<'_>) -> ActResult<PatRefAction> {
    let op = match action {
        "add-acl" => PatRefOp::AddAcl,
        "del-acl" => PatRefOp::DelAcl,
        "set-map" => PatRefOp::SetMap,
        _ => PatRefOp::DelMap,
    };
    if op == PatRefOp::SetMap && (a.peek(0).is_empty() || a.peek(1).is_empty()) {
        return invalid("expects exactly 2 arguments");
    }
    if a.peek(0).is_empty() {
        return invalid("expects exactly 1 arguments");
    }
    let file = word.get(8..word.len().saturating_sub(1)).unwrap_or_default().to_owned();
    let key = a.next();
    let key = a.fmt(key);
    let value = (op == PatRefOp::SetMap).then(|| {
        let v = a.next();
        a.fmt(v)
    });
    Ok(PatRefAction { op, file, key, value })
}

fn parse_del_header(a: &mut Args<'_>) -> ActResult<HeaderAction> {
    let name = a.next();
    if name.is_empty() {
        return invalid("expects at least 1 argument");
    }
    if a.peek(0) != "-m" {
        return Ok(HeaderAction::Del { name: name.to_owned(), matcher: HdrMatch::Str });
    }
    let method = a.peek(1);
    if method.is_empty() {
        return invalid("-m flag expects exactly 1 argument");
    }
    let matcher = match method {
        "str" => HdrMatch::Str,
        "beg" => HdrMatch::Beg,
        "end" => HdrMatch::End,
        "sub" => HdrMatch::Sub,
        "reg" => HdrMatch::Reg(a.regex(name)),
        _ => return invalid(format!("-m with unsupported matching method '{method}'")),
    };
    a.at += 2;
    Ok(HeaderAction::Del { name: name.to_owned(), matcher })
}

/// `set-method`, `set-path`, `set-pathq`, `set-query`, `set-uri`: exactly one format.
pub(super) fn parse_set_line(a: &mut Args<'_>, action: &str) -> ActResult<UriAction> {
    if a.peek(0).is_empty() || !a.ends_at(1) {
        return invalid("expects exactly 1 argument <format>");
    }
    let text = a.next();
    let fmt = a.fmt(text);
    Ok(match action {
        "set-method" => UriAction::SetMethod(fmt),
        "set-path" => UriAction::SetPath(fmt),
        "set-pathq" => UriAction::SetPathq(fmt),
        "set-query" => UriAction::SetQuery(fmt),
        _ => UriAction::SetUri(fmt),
    })
}

/// `replace-path`, `replace-pathq`, `replace-uri`: a regex and a format.
pub(super) fn parse_replace_uri(a: &mut Args<'_>, action: &str) -> ActResult<UriAction> {
    if a.peek(0).is_empty() || a.peek(1).is_empty() || !a.ends_at(2) {
        return invalid("expects exactly 2 arguments <match-regex> and <replace-format>");
    }
    let regex = a.regex(a.peek(0));
    let replace = a.fmt(a.peek(1));
    a.at += 2;
    Ok(match action {
        "replace-path" => UriAction::ReplacePath { regex, replace },
        "replace-pathq" => UriAction::ReplacePathq { regex, replace },
        _ => UriAction::ReplaceUri { regex, replace },
    })
}

/// C's `strtol(text, &end, 10)` when the whole text must be used: `None` otherwise.
fn strtol_whole(text: &str) -> Option<i64> {
    let t = text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(atol(t))
}

/// `set-status <code> [reason <str>]`.
pub(super) fn parse_set_status(a: &mut Args<'_>) -> ActResult<SetStatus> {
    let code = a.peek(0);
    if code.is_empty() {
        return invalid("expects 1 argument: <status>; or 3 arguments: <status> reason <fmt>");
    }
    let status = match strtol_whole(code) {
        Some(c @ 100..=999) => c as u16,
        _ => return invalid("expects an integer status code between 100 and 999"),
    };
    a.at += 1;
    let mut reason = None;
    if a.peek(0) == "reason" && !a.ends_at(1) {
        reason = Some(a.peek(1).to_owned());
        a.at += 2;
    }
    Ok(SetStatus { status, reason })
}

/// HAProxy first checks that the three words an `http-request capture` or
/// `http-response capture` needs are there, before the condition.
fn has_three_words(a: &Args<'_>) -> bool {
    (0..3).all(|i| !a.ends_at(i))
}

/// `http-request capture <expr> len <n>|id <n>`. `len` declares a new request capture
/// slot in the proxy, which must be a frontend.
pub(super) fn parse_req_capture(cx: &mut Ctx<'_>, a: &mut Args<'_>) -> ActResult<CaptureAction> {
    if !has_three_words(a) {
        return invalid("expects <expression> [ 'len' <length> | id <idx> ]");
    }
    let expr = a.expr()?;
    match a.next() {
        "" => invalid("expects 'len or 'id'"),
        "len" => {
            if !cx.cap().frontend {
                return invalid(format!("proxy '{}' has no frontend capability", cx.pb.px.name));
            }
            let len = atol(a.next());
            if len <= 0 {
                return invalid("length must be > 0");
            }
            let slot = declare_capture(cx, true, len as usize);
            Ok(CaptureAction { expr, slot: CaptureSlot::Declared(slot) })
        }
        "id" => Ok(CaptureAction { expr, slot: CaptureSlot::Id(parse_capture_id(a.next())?) }),
        other => invalid(format!("expects 'len' or 'id', found '{other}'")),
    }
}

/// `http-response capture <expr> id <n>` (also `http-after-response`).
pub(super) fn parse_res_capture(a: &mut Args<'_>) -> ActResult<(ExprSrc, usize)> {
    if !has_three_words(a) {
        return invalid("expects <expression> id <idx>");
    }
    let expr = a.expr()?;
    match a.next() {
        "" => invalid("expects 'id'"),
        "id" => Ok((expr, parse_capture_id(a.next())?)),
        other => invalid(format!("expects 'id', found '{other}'")),
    }
}

fn parse_capture_id(text: &str) -> ActResult<usize> {
    match strtol_whole(text) {
        // A negative id can never name a slot; HAProxy accepts it and never captures.
        Some(id) => Ok(usize::try_from(id).unwrap_or(usize::MAX)),
        None => invalid(format!("cannot parse id '{text}'")),
    }
}

/// Adds a capture slot without header name to the request (or response) captures of
/// the proxy; returns its index.
pub(crate) fn declare_capture(cx: &mut Ctx<'_>, request: bool, len: usize) -> usize {
    let decl = CaptureDecl { header: None, len, span: cx.span.clone() };
    let list = if request { &mut cx.pb.px.captures.request } else { &mut cx.pb.px.captures.response };
    list.push(decl);
    list.len() - 1
}

/// `auth [realm <realm>]`.
pub(super) fn parse_auth(a: &mut Args<'_>) -> ActResult<Option<String>> {
    if a.peek(0) != "realm" {
        return Ok(None);
    }
    let realm = a.peek(1);
    if realm.is_empty() {
        // COMPAT: HAProxy 2.6 ends this message with a line feed before its final period.
        return invalid("missing realm value.\n");
    }
    a.at += 2;
    Ok(Some(realm.to_owned()))
}

/// `normalize-uri <normalizer> [full|strict]`.
pub(super) fn parse_normalizer(a: &mut Args<'_>) -> ActResult<Normalizer> {
    let name = a.next();
    let option = |a: &mut Args<'_>, opt: &str| -> ActResult<bool> {
        if a.peek(0) == opt {
            a.at += 1;
            return Ok(true);
        }
        if a.ends_at(0) {
            return Ok(false);
        }
        invalid(format!("unknown argument '{}' for '{name}' normalizer", a.peek(0)))
    };
    Ok(match name {
        "" => return invalid("missing argument <normalizer>"),
        "path-merge-slashes" => Normalizer::PathMergeSlashes,
        "path-strip-dot" => Normalizer::PathStripDot,
        "path-strip-dotdot" => Normalizer::PathStripDotdot { full: option(a, "full")? },
        "query-sort-by-name" => Normalizer::QuerySortByName,
        "percent-to-uppercase" => Normalizer::PercentToUppercase { strict: option(a, "strict")? },
        "percent-decode-unreserved" => Normalizer::PercentDecodeUnreserved { strict: option(a, "strict")? },
        "fragment-strip" => Normalizer::FragmentStrip,
        "fragment-encode" => Normalizer::FragmentEncode,
        other => return invalid(format!("unknown normalizer '{other}'")),
    })
}

/// `set-src`, `set-dst`, `set-src-port`, `set-dst-port`: one word of expression.
pub(super) fn parse_addr(a: &mut Args<'_>, action: &str) -> ActResult<AddrAction> {
    let expr = a.expr_word()?;
    Ok(match action {
        "set-src" => AddrAction::SetSrc(expr),
        "set-dst" => AddrAction::SetDst(expr),
        "set-src-port" => AddrAction::SetSrcPort(expr),
        _ => AddrAction::SetDstPort(expr),
    })
}

/// `wait-for-body time <time> [at-least <bytes>]`, in any order.
pub(super) fn parse_wait_for_body(a: &mut Args<'_>) -> ActResult<WaitForBody> {
    const USAGE: &str = "expects time <time> [ at-least <bytes> ]";
    if a.peek(0).is_empty() {
        return invalid(USAGE);
    }
    let (mut time, mut at_least) = (None, 0);
    loop {
        let word = a.peek(0);
        if word != "time" && word != "at-least" {
            break;
        }
        let value = a.peek(1);
        if value.is_empty() {
            return invalid(format!("missing argument for '{word}'"));
        }
        if word == "time" {
            time = Some(match parse_time_ms(value) {
                Ok(ms) if ms.trailing.is_none() => Duration::from_millis(u64::from(ms.ms)),
                Ok(ms) => return invalid(format!("unexpected character '{}'", ms.trailing.unwrap_or('?'))),
                Err(TimeError::Overflow) => {
                    return invalid("time overflow (maximum value is 2147483647 ms or ~24.8 days)")
                }
                Err(TimeError::Underflow) => return invalid("time underflow (minimum non-null value is 1 ms)"),
                Err(TimeError::BadChar(c)) => return invalid(format!("unexpected character '{c}'")),
            });
        } else {
            at_least = parse_size(value)?;
        }
        a.at += 2;
    }
    match time {
        Some(time) => Ok(WaitForBody { time, at_least }),
        None => invalid(USAGE),
    }
}

/// HAProxy's `parse_size_err()`: digits then an optional `k`, `m` or `g` (1024-based).
fn parse_size(text: &str) -> ActResult<u64> {
    let end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let Ok(mut value) = text[..end].parse::<u64>() else {
        return invalid(format!("unexpected character '{}'", text.chars().next().unwrap_or('\0')));
    };
    let mut rest = text[end..].chars();
    match rest.next() {
        None => {}
        Some('k' | 'K') => value = value.saturating_mul(1 << 10),
        Some('m' | 'M') => value = value.saturating_mul(1 << 20),
        Some('g' | 'G') => value = value.saturating_mul(1 << 30),
        Some(c) => return invalid(format!("unexpected character '{c}'")),
    }
    if let Some(c) = rest.next() {
        return invalid(format!("unexpected character '{c}'"));
    }
    if value > u64::from(u32::MAX) {
        return invalid(format!("unexpected character '{}'", text.chars().last().unwrap_or('\0')));
    }
    Ok(value)
}

/// `strict-mode on|off` (case-insensitive).
pub(super) fn parse_strict_mode(a: &mut Args<'_>) -> ActResult<bool> {
    let value = a.peek(0);
    let on = if value.is_empty() {
        return invalid("expects exactly 1 arguments");
    } else if value.eq_ignore_ascii_case("on") {
        true
    } else if value.eq_ignore_ascii_case("off") {
        false
    } else {
        return invalid(format!("Unexpected value '{value}'. Only 'on' and 'off' are supported"));
    };
    a.at += 1;
    Ok(on)
}

/// `set-timeout server|tunnel <time>|<expr>` (backends only).
pub(super) fn parse_set_timeout(cx: &Ctx<'_>, a: &mut Args<'_>) -> ActResult<(TimeoutName, TimeoutValue)> {
    let (name, value) = (a.peek(0), a.peek(1));
    if name.is_empty() || value.is_empty() {
        return invalid("expects exactly 2 arguments");
    }
    if !cx.cap().backend {
        return invalid(format!("proxy '{}' has no backend capability", cx.pb.px.name));
    }
    let timeout = match name {
        "server" => TimeoutName::Server,
        "tunnel" => TimeoutName::Tunnel,
        _ => return invalid(format!("'set-timeout' rule supports 'server'/'tunnel' (got '{name}')")),
    };
    let value = match parse_time_ms(value) {
        Ok(ms) if ms.trailing.is_some() => TimeoutValue::Expr(ExprSrc { text: value.to_owned(), span: a.span.clone() }),
        Ok(ms) if ms.ms == 0 => return invalid(format!("null value is not valid for a 'set-timeout {name}' rule")),
        Ok(ms) => TimeoutValue::Fixed(Duration::from_millis(u64::from(ms.ms))),
        Err(TimeError::Overflow) => {
            return invalid(format!(
                "timer overflow in argument '{value}' to rule 'set-timeout {name}' (maximum value is 2147483647 ms or ~24.8 days)"
            ))
        }
        Err(TimeError::Underflow) => {
            return invalid(format!(
                "timer underflow in argument '{value}' to rule 'set-timeout {name}' (minimum value is 1 ms)"
            ))
        }
        Err(TimeError::BadChar(_)) => TimeoutValue::Expr(ExprSrc { text: value.to_owned(), span: a.span.clone() }),
    };
    a.at += 2;
    Ok((timeout, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_integers() {
        assert_eq!(parse_size("10"), Ok(10));
        assert_eq!(parse_size("10k"), Ok(10240));
        assert_eq!(parse_size("2m"), Ok(2 << 20));
        assert_eq!(parse_size("10x"), invalid("unexpected character 'x'"));
        assert_eq!(parse_size("x"), invalid("unexpected character 'x'"));
        assert_eq!(strtol_whole("+12"), Some(12));
        assert_eq!(strtol_whole(" 7"), Some(7));
        assert_eq!(strtol_whole("1a"), None);
        assert_eq!(strtol_whole(""), None);
    }
}
