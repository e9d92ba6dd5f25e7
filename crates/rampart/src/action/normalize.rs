//! `http-request normalize-uri <normalizer>`: rewrites of the request path (and query)
//! into an equivalent canonical form, each normalizer a function from the old part to
//! the new one.
//! HAProxy counterpart: src/uri_normalizer.c, `http_action_normalize_uri()`
//! (src/http_act.c).
//!
//! The path normalizers (`path-*`) work on the path without its query and keep the
//! query; `percent-*` and `fragment-*` work on the path with its query; `query-sort-by-name`
//! on the query. A target without a path (`*`, authority form) is left alone.

use rampart_cfg::model::Normalizer;

use super::rewrite::{self, UriPart};
use crate::http::{uri, MsgHead};

/// A `strict` normalizer met a `%` not followed by two hexadecimal digits: the
/// request is answered with a 400, as HAProxy does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidInput;

/// Applies `n` to the request target of `msg` (slices into `buf`); a rewrite that
/// does not fit is counted as failed in the head.
pub fn apply(n: Normalizer, msg: &mut MsgHead, buf: &[u8]) -> Result<(), InvalidInput> {
    let target = uri::split(msg.view(buf).uri());
    if target.pathq.is_empty() {
        return Ok(());
    }
    let mut out = Vec::with_capacity(target.pathq.len() + 8);
    let part = match n {
        Normalizer::PathMergeSlashes => {
            merge_slashes(target.path, &mut out);
            UriPart::Path
        }
        Normalizer::PathStripDot => {
            strip_dot(target.path, &mut out);
            UriPart::Path
        }
        Normalizer::PathStripDotdot { full } => {
            strip_dotdot(target.path, full, &mut out);
            UriPart::Path
        }
        Normalizer::QuerySortByName => {
            let Some(query) = target.query else { return Ok(()) };
            sort_query(query, &mut out);
            UriPart::Query
        }
        Normalizer::PercentToUppercase { strict } => {
            percent_upper(target.pathq, strict, &mut out)?;
            UriPart::Pathq
        }
        Normalizer::PercentDecodeUnreserved { strict } => {
            percent_decode_unreserved(target.pathq, strict, &mut out)?;
            UriPart::Pathq
        }
        Normalizer::FragmentStrip => {
            let end = memchr::memchr(b'#', target.pathq).unwrap_or(target.pathq.len());
            out.extend_from_slice(&target.pathq[..end]);
            UriPart::Pathq
        }
        Normalizer::FragmentEncode => {
            for &c in target.pathq {
                if c == b'#' {
                    out.extend_from_slice(b"%23");
                } else {
                    out.push(c);
                }
            }
            UriPart::Pathq
        }
    };
    rewrite::set_uri_part(msg, buf, part, &out);
    Ok(())
}

/// What a normalizer written with a condition does in HAProxy 2.6:
/// `path-strip-dotdot`, `percent-to-uppercase` and `percent-decode-unreserved` without
/// their option, followed by `if`/`unless`, are parsed as `path-merge-slashes` there.
pub fn as_haproxy_runs(n: Normalizer, has_cond: bool) -> Normalizer {
    match n {
        Normalizer::PathStripDotdot { full: false }
        | Normalizer::PercentToUppercase { strict: false }
        | Normalizer::PercentDecodeUnreserved { strict: false }
            if has_cond =>
        {
            Normalizer::PathMergeSlashes
        }
        other => other,
    }
}

/// `path-merge-slashes`: runs of `/` become one.
fn merge_slashes(path: &[u8], out: &mut Vec<u8>) {
    for (i, &c) in path.iter().enumerate() {
        if c != b'/' || i == 0 || path[i - 1] != b'/' {
            out.push(c);
        }
    }
}

/// `path-strip-dot`: `.` segments are removed.
fn strip_dot(path: &[u8], out: &mut Vec<u8>) {
    let segments = path.split(|&c| c == b'/');
    let last = path.split(|&c| c == b'/').count() - 1;
    for (i, seg) in segments.enumerate() {
        if seg != b"." {
            out.extend_from_slice(seg);
            if i < last {
                out.push(b'/');
            }
        }
    }
}

/// `path-strip-dotdot [full]`: each `..` segment removes itself and the segment
/// before it. Without `full`, the `..` that climb above the root are kept at the
/// start (`/../b`); with `full` they are dropped.
fn strip_dotdot(path: &[u8], full: bool, out: &mut Vec<u8>) {
    // Built backwards, from the end of the path, as the `..` seen so far decide
    // whether the segments before them are kept.
    let mut rev: Vec<u8> = Vec::with_capacity(path.len() + 4);
    let at = |i: isize| path[i as usize];
    let starts = |i: isize, pat: &[u8]| i >= 0 && path[i as usize..].starts_with(pat);
    let mut i = path.len() as isize - 1;
    let mut up = 0usize;
    if i >= 2 && starts(i - 2, b"/..") {
        up += 1;
        i -= 2;
    }
    while i >= 0 {
        if i >= 3 && starts(i - 3, b"/../") {
            up += 1;
            i -= 3;
            continue;
        }
        if up > 0 {
            // the slash, then the segment this `..` removes
            i -= 1;
            if i >= 0 {
                up -= 1;
                while i >= 0 && at(i) != b'/' {
                    i -= 1;
                }
            }
        } else {
            rev.push(at(i));
            i -= 1;
            while i >= 0 && at(i) != b'/' {
                rev.push(at(i));
                i -= 1;
            }
        }
    }
    if up > 0 {
        rev.push(b'/');
        if !full {
            for _ in 0..up {
                rev.extend_from_slice(b"../");
            }
        }
    }
    out.extend(rev.iter().rev());
}

/// `query-sort-by-name`: the `&`-separated parameters in the byte order of their
/// names (what precedes `=`); parameters of the same name keep their order.
fn sort_query(query: &[u8], out: &mut Vec<u8>) {
    let mut params: Vec<&[u8]> = query.split(|&c| c == b'&').collect();
    // a trailing `&` ends the last parameter, it does not start an empty one
    if params.len() > 1 && params.last().is_some_and(|p| p.is_empty()) {
        params.pop();
    }
    if query.is_empty() {
        params.clear();
    }
    let name = |p: &&[u8]| -> Vec<u8> { p.split(|&c| c == b'=').next().unwrap_or_default().to_vec() };
    params.sort_by_key(name);
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            out.push(b'&');
        }
        out.extend_from_slice(p);
    }
}

/// The two hex digits after a `%` at `i`, if they are there.
fn hex_pair(s: &[u8], i: usize) -> Option<(u8, u8)> {
    let (a, b) = (*s.get(i + 1)?, *s.get(i + 2)?);
    (a.is_ascii_hexdigit() && b.is_ascii_hexdigit()).then_some((a, b))
}

/// `percent-to-uppercase [strict]`: the hex digits of `%XX` sequences in uppercase.
fn percent_upper(s: &[u8], strict: bool, out: &mut Vec<u8>) -> Result<(), InvalidInput> {
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            match hex_pair(s, i) {
                Some((a, b)) => {
                    out.extend_from_slice(&[b'%', a.to_ascii_uppercase(), b.to_ascii_uppercase()]);
                    i += 3;
                    continue;
                }
                None if strict => return Err(InvalidInput),
                None => {}
            }
        }
        out.push(s[i]);
        i += 1;
    }
    Ok(())
}

/// RFC 3986's unreserved characters.
fn unreserved(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
}

fn hex_value(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

/// `percent-decode-unreserved [strict]`: `%XX` sequences of unreserved characters
/// decoded; others kept as written.
fn percent_decode_unreserved(s: &[u8], strict: bool, out: &mut Vec<u8>) -> Result<(), InvalidInput> {
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            match hex_pair(s, i) {
                Some((a, b)) => {
                    let c = (hex_value(a) << 4) | hex_value(b);
                    if unreserved(c) {
                        out.push(c);
                    } else {
                        out.extend_from_slice(&s[i..i + 3]);
                    }
                    i += 3;
                    continue;
                }
                None if strict => return Err(InvalidInput),
                None => {}
            }
        }
        out.push(s[i]);
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Expected values from haproxy 2.6.12 (the request line a server received).
    use super::*;

    fn run(f: impl Fn(&[u8], &mut Vec<u8>), input: &str) -> String {
        let mut out = Vec::new();
        f(input.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn merge_slashes_and_strip_dot() {
        assert_eq!(run(merge_slashes, "//a///b//"), "/a/b/");
        assert_eq!(run(merge_slashes, "/"), "/");
        for (i, o) in [("/./a/./b/.", "/a/b/"), ("/a/./", "/a/"), ("/.", "/"), ("/a/.x/./", "/a/.x/"), ("/a/", "/a/")] {
            assert_eq!(run(strip_dot, i), o, "{i}");
        }
    }

    #[test]
    fn strip_dotdot_as_haproxy() {
        let cases = [
            ("/a/b/../c", "/a/c", "/a/c"),
            ("/a/../../b", "/../b", "/b"),
            ("/../a", "/../a", "/a"),
            ("/../../a/", "/../../a/", "/a/"),
            ("/a/b/..", "/a/", "/a/"),
            ("/a/b/../", "/a/", "/a/"),
            ("/..", "/../", "/"),
            ("/../..", "/../../", "/"),
            ("/a/..b/../c", "/a/c", "/a/c"),
            ("/a//../b", "/a/b", "/a/b"),
            ("/a/b/c/../../d", "/a/d", "/a/d"),
            ("/a/..", "/", "/"),
            ("/a/../", "/", "/"),
            ("//..", "/", "/"),
            ("/..a/..", "/", "/"),
        ];
        for (i, kept, full) in cases {
            assert_eq!(run(|p, o| strip_dotdot(p, false, o), i), kept, "{i}");
            assert_eq!(run(|p, o| strip_dotdot(p, true, o), i), full, "{i} full");
        }
    }

    #[test]
    fn query_parameters_sort_by_name() {
        let cases = [
            ("b=1&a=2&a=1&c", "a=2&a=1&b=1&c"),
            ("", ""),
            ("&", ""),
            ("a&&b", "&a&b"),
            ("z=1&a=%26", "a=%26&z=1"),
            ("b&a;c", "a;c&b"),
        ];
        for (i, o) in cases {
            assert_eq!(run(sort_query, i), o, "{i}");
        }
    }

    #[test]
    fn percent_sequences() {
        let up = |s: &str, strict| {
            let mut o = Vec::new();
            percent_upper(s.as_bytes(), strict, &mut o).map(|()| String::from_utf8(o).unwrap())
        };
        assert_eq!(up("/%3a%2fb?x=%aa", false).unwrap(), "/%3A%2Fb?x=%AA");
        assert_eq!(up("/%zz%a", false).unwrap(), "/%zz%a");
        assert_eq!(up("/%", true), Err(InvalidInput));
        let dec = |s: &str, strict| {
            let mut o = Vec::new();
            percent_decode_unreserved(s.as_bytes(), strict, &mut o).map(|()| String::from_utf8(o).unwrap())
        };
        assert_eq!(dec("/%41%2d%2F%7e%7E?q=%41", true).unwrap(), "/A-%2F~~?q=A");
        assert_eq!(dec("/%61%5F%2E%30", false).unwrap(), "/a_.0");
        assert_eq!(dec("/%41%", false).unwrap(), "/A%");
        assert_eq!(dec("/%zz%4", true), Err(InvalidInput));
    }

    #[test]
    fn optional_words_before_a_condition_are_lost_as_in_haproxy() {
        let dd = Normalizer::PathStripDotdot { full: false };
        assert_eq!(as_haproxy_runs(dd, true), Normalizer::PathMergeSlashes);
        assert_eq!(as_haproxy_runs(dd, false), dd);
        let full = Normalizer::PathStripDotdot { full: true };
        assert_eq!(as_haproxy_runs(full, true), full);
        let strict = Normalizer::PercentToUppercase { strict: true };
        assert_eq!(as_haproxy_runs(strict, true), strict);
        assert_eq!(as_haproxy_runs(Normalizer::PathStripDot, true), Normalizer::PathStripDot);
    }
}
