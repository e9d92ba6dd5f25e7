//! Rewrites of headers and of the request line: regex replacement with `\N`
//! back-references (`replace-header`, `replace-value`, `replace-path` ...), and
//! setting one part of the request target (`set-path`, `set-query` ...).
//! HAProxy counterpart: `exp_replace()` (src/regex.c), `http_replace_hdrs()`,
//! `http_replace_req_path()`, `http_replace_req_query()`, `http_replace_req_uri()`
//! (src/http_htx.c, src/http_act.c).

use regex::bytes::{Captures, Regex};

use crate::http::uri;
use crate::http::MsgHead;

/// The part of the request target a `set-*` or `replace-*` action works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UriPart {
    /// The path, without the query.
    Path,
    /// The path with its query (`?` included).
    Pathq,
    /// The query, without the `?`.
    Query,
    /// The whole target as received.
    Uri,
}

/// Expands `\0`..`\9` in `template` with the groups of `caps` into `out` (`\\` is a
/// backslash, a backslash before anything else is kept).
pub fn expand(template: &[u8], caps: &Captures<'_>, out: &mut Vec<u8>) {
    let mut i = 0;
    while i < template.len() {
        let c = template[i];
        if c == b'\\' && i + 1 < template.len() {
            let n = template[i + 1];
            if n.is_ascii_digit() {
                if let Some(m) = caps.get(usize::from(n - b'0')) {
                    out.extend_from_slice(m.as_bytes());
                }
                i += 2;
                continue;
            }
            if n == b'\\' {
                out.push(b'\\');
                i += 2;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
}

/// `replace-header` (whole values) or `replace-value` (each comma-separated item):
/// every occurrence of header `name` whose value (item) the regex matches gets
/// `template` with its groups substituted; the rest of the value is kept as is.
pub fn replace_header(msg: &mut MsgHead, buf: &[u8], name: &[u8], re: &Regex, template: &[u8], items: bool) {
    let mut value = Vec::new();
    for i in 0..msg.headers.len() {
        let h = msg.headers[i];
        if h.drop || !h.name.resolve(buf, &msg.arena).eq_ignore_ascii_case(name) {
            continue;
        }
        let old = h.value.resolve(buf, &msg.arena);
        value.clear();
        let changed = if items {
            replace_items(old, re, template, &mut value)
        } else {
            replace_all(old, re, template, &mut value)
        };
        if changed {
            // a failed rewrite is counted in the head
            let _ = msg.set_header_value(i, &value);
        }
    }
}

/// The whole value replaced when the regex matches it; `false` when it does not.
fn replace_all(old: &[u8], re: &Regex, template: &[u8], out: &mut Vec<u8>) -> bool {
    let Some(caps) = re.captures(old) else { return false };
    expand(template, &caps, out);
    true
}

/// Each item replaced when the regex matches it. As HAProxy, a replaced item loses the
/// blanks around it while the others keep theirs (`v1 , x, v2` becomes `w1, x,w2`).
fn replace_items(old: &[u8], re: &Regex, template: &[u8], out: &mut Vec<u8>) -> bool {
    let mut changed = false;
    let mut copied = 0;
    for (raw_start, raw_end) in item_ranges(old) {
        let (start, end) = trimmed(old, raw_start, raw_end);
        let Some(caps) = re.captures(&old[start..end]) else { continue };
        out.extend_from_slice(&old[copied..raw_start]);
        expand(template, &caps, out);
        copied = raw_end;
        changed = true;
    }
    out.extend_from_slice(&old[copied..]);
    changed
}

/// The byte ranges (blanks included) of the comma-separated items of a value (commas
/// inside double quotes do not separate), in order.
fn item_ranges(v: &[u8]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut from = 0;
    let mut quoted = false;
    let mut i = 0;
    while i <= v.len() {
        match v.get(i) {
            Some(b'"') => quoted = !quoted,
            Some(b'\\') if quoted => i += 1,
            Some(b',') if !quoted => {
                ranges.push((from, i));
                from = i + 1;
            }
            None => ranges.push((from, i)),
            _ => {}
        }
        i += 1;
    }
    ranges
}

fn trimmed(v: &[u8], mut start: usize, mut end: usize) -> (usize, usize) {
    while start < end && matches!(v[start], b' ' | b'\t') {
        start += 1;
    }
    while end > start && matches!(v[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    (start, end)
}

/// The target with `part` replaced by `value`, into `out`.
fn rebuilt(target: &[u8], part: UriPart, value: &[u8], out: &mut Vec<u8>) {
    let t = uri::split(target);
    // what precedes the path: `scheme://authority` of an absolute-form target
    let prefix = &target[..target.len() - t.pathq.len()];
    out.clear();
    match part {
        UriPart::Uri => out.extend_from_slice(value),
        UriPart::Pathq => {
            out.extend_from_slice(prefix);
            out.extend_from_slice(value);
        }
        UriPart::Path => {
            out.extend_from_slice(prefix);
            out.extend_from_slice(value);
            if let Some(q) = t.query {
                out.push(b'?');
                out.extend_from_slice(q);
            }
        }
        UriPart::Query => {
            out.extend_from_slice(prefix);
            out.extend_from_slice(t.path);
            // As HAProxy: an empty value leaves `?` alone when there was a query, and
            // adds nothing when there was none.
            if !value.is_empty() || t.query.is_some() {
                out.push(b'?');
                out.extend_from_slice(value);
            }
        }
    }
}

/// The current value of `part` in `target`.
fn part_of(target: &[u8], part: UriPart) -> &[u8] {
    let t = uri::split(target);
    match part {
        UriPart::Uri => target,
        UriPart::Pathq => t.pathq,
        UriPart::Path => t.path,
        UriPart::Query => t.query.unwrap_or_default(),
    }
}

/// `set-path`, `set-pathq`, `set-query`, `set-uri`.
pub fn set_uri_part(msg: &mut MsgHead, buf: &[u8], part: UriPart, value: &[u8]) {
    let mut out = Vec::with_capacity(value.len() + 64);
    rebuilt(msg.view(buf).uri(), part, value, &mut out);
    set_target(msg, buf, &out);
}

/// Replaces the target; as HAProxy (`http_update_host`), an absolute target's
/// authority becomes the value of every `Host` header, so that the two stay consistent.
fn set_target(msg: &mut MsgHead, buf: &[u8], target: &[u8]) {
    if msg.set_uri(target).is_err() {
        return;
    }
    let authority = uri::split(target).authority;
    if authority.is_empty() {
        return;
    }
    let authority = authority.to_vec();
    for i in 0..msg.headers.len() {
        let h = msg.headers[i];
        if !h.drop && h.name.resolve(buf, &msg.arena).eq_ignore_ascii_case(b"host") {
            let _ = msg.set_header_value(i, &authority);
        }
    }
}

/// `replace-path`, `replace-pathq`, `replace-uri`: when the regex matches the part,
/// the part becomes `template` with the groups substituted.
pub fn replace_uri_part(msg: &mut MsgHead, buf: &[u8], part: UriPart, re: &Regex, template: &[u8]) {
    let target = msg.view(buf).uri();
    let Some(caps) = re.captures(part_of(target, part)) else { return };
    let mut value = Vec::with_capacity(template.len() + 32);
    expand(template, &caps, &mut value);
    let mut out = Vec::with_capacity(value.len() + 64);
    rebuilt(target, part, &value, &mut out);
    set_target(msg, buf, &out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rb(target: &str, part: UriPart, value: &str) -> String {
        let mut out = Vec::new();
        rebuilt(target.as_bytes(), part, value.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn target_parts_are_replaced_as_haproxy_does() {
        assert_eq!(rb("/p1?z=2", UriPart::Path, "/new"), "/new?z=2");
        assert_eq!(rb("http://h/p1/x?y", UriPart::Path, "/n"), "http://h/n?y");
        assert_eq!(rb("/pq?old", UriPart::Pathq, "/np?x=1"), "/np?x=1");
        assert_eq!(rb("/q1?x=1", UriPart::Query, ""), "/q1?");
        assert_eq!(rb("/q1", UriPart::Query, ""), "/q1");
        assert_eq!(rb("/q2", UriPart::Query, "a=1"), "/q2?a=1");
        assert_eq!(rb("/q2?", UriPart::Query, "a=1"), "/q2?a=1");
        assert_eq!(rb("/a", UriPart::Uri, "/b?c"), "/b?c");
    }

    #[test]
    fn back_references_expand() {
        let re = Regex::new("^/api/(v[0-9]+)/(.*)$").unwrap();
        let caps = re.captures(b"/api/v2/users").unwrap();
        let mut out = Vec::new();
        expand(br"/\2?version=\1&x=\\\q", &caps, &mut out);
        assert_eq!(out, br"/users?version=v2&x=\\q");
    }

    #[test]
    fn replace_value_works_item_by_item() {
        let re = Regex::new("^(.*)-old$").unwrap();
        let mut out = Vec::new();
        assert!(replace_items(b"a-old , b, c-old ", &re, br"\1-new", &mut out));
        assert_eq!(out, b"a-new, b,c-new", "checked against haproxy 2.6.12");
        out.clear();
        assert!(replace_items(b"x , v-old  ,y", &re, br"\1", &mut out));
        assert_eq!(out, b"x ,v,y");
        out.clear();
        assert!(!replace_items(b"a, b", &re, b"x", &mut out));
    }
}
