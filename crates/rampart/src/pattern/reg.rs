//! Regular expression patterns (`-m reg`, and `map_reg`/`map_regm`), through the regex
//! crate: linear-time matching, no backtracking blow-up on hostile input. Large sets
//! are screened by one `RegexSet` first, so a sample matching none of 10 000 regexes
//! costs one scan, not 10 000.
//!
//! The dialect is the regex crate's, run on bytes with Unicode off (so `\w`, `.` and
//! `-i` work on bytes and ASCII, like PCRE without UTF): the PCRE subset HAProxy users
//! get is listed in docs/COMPATIBILITY.md, "ACLs, conditions and maps".
//!
//! HAProxy counterpart: `pat_parse_reg()`, `pat_idx_list_reg()`, `pat_match_reg()`,
//! `pat_match_regm()` (src/pattern.c), `regex_comp()` (src/regex.c).

use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

// PERF: a regex keeps its scratch space in a pool: the first thread to use it takes
// it without synchronisation, other threads take theirs from a small lock-protected
// stack (held for a push or a pop, never while matching). Regexes of the sample
// expressions (`Arg::Regex`) are shared the same way.

/// From this many regexes on, a set screens samples first.
const SET_FROM: usize = 8;

/// Compiles one pattern, case-insensitive under `-i`. The error is worded as
/// HAProxy's (`regex '(' is invalid (error=...)`), with the regex crate's reason.
pub fn compile(text: &str, icase: bool) -> Result<Regex, String> {
    if has_possessive(text) {
        return Err(format!("regex '{text}' is invalid (error=possessive quantifiers are not supported)"));
    }
    // PCRE's whole-pattern recursion; the regex crate would read the CRLF flag.
    if text.contains("(?R)") {
        return Err(format!("regex '{text}' is invalid (error=recursion is not supported)"));
    }
    RegexBuilder::new(text)
        .case_insensitive(icase)
        .unicode(false)
        .build()
        .map_err(|e| format!("regex '{text}' is invalid (error={})", reason(&e)))
}

/// Whether `re` holds a PCRE possessive quantifier (`a*+`, `a++`, `a?+`, `a{2}+`):
/// the regex crate would read it as a repetition of a repetition and match what PCRE
/// refuses, so it is refused instead.
fn has_possessive(re: &str) -> bool {
    let b = re.as_bytes();
    let mut i = 0;
    let mut in_class = false;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'[' if !in_class => {
                in_class = true;
                // A `]` right after `[` or `[^` is a literal.
                if b.get(i + 1) == Some(&b'^') {
                    i += 1;
                }
                if b.get(i + 1) == Some(&b']') {
                    i += 1;
                }
            }
            b'[' if b.get(i + 1) == Some(&b':') => {
                // A POSIX class inside a bracket expression.
                if let Some(end) = re[i..].find(":]") {
                    i += end + 1;
                }
            }
            b']' if in_class => in_class = false,
            b'*' | b'+' | b'?' | b'}' if !in_class => {
                // `(?` and `(?+1)`-like group syntax is not a quantifier.
                let quantifier = b[i] != b'?' || i == 0 || b[i - 1] != b'(';
                if quantifier && b.get(i + 1) == Some(&b'+') {
                    return true;
                }
                // A lazy or repeated marker after a quantifier: skip it (`a+?`).
                if quantifier && matches!(b.get(i + 1), Some(b'?')) {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// The one-line reason of a regex error (the crate prints the pattern and a caret
/// above it).
fn reason(e: &regex::Error) -> String {
    let full = e.to_string();
    full.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: ").map(str::to_owned))
        .unwrap_or_else(|| full.lines().last().unwrap_or_default().trim().to_owned())
}

#[derive(Debug)]
pub struct RegSet {
    /// The compiled patterns with their numbers, in order.
    list: Vec<(Regex, u32)>,
    set: Option<RegexSet>,
}

impl RegSet {
    /// The set of `list` (compiled by [`compile`] from `texts`, with their numbers).
    pub fn new(list: Vec<(Regex, u32)>, texts: &[&str], icase: bool) -> RegSet {
        // A set too large for the crate's limits only loses the screening.
        let set = (list.len() >= SET_FROM)
            .then(|| RegexSetBuilder::new(texts).case_insensitive(icase).unicode(false).build().ok())
            .flatten();
        RegSet { list, set }
    }

    /// The first regex (in order) matching `s`, and it.
    pub fn find(&self, s: &[u8]) -> Option<(&Regex, u32)> {
        if let Some(set) = &self.set {
            if !set.is_match(s) {
                return None;
            }
        }
        self.list.iter().find(|(r, _)| r.is_match(s)).map(|(r, i)| (r, *i))
    }

    /// Whether any regex matches `s`.
    pub fn any(&self, s: &[u8]) -> bool {
        match &self.set {
            Some(set) => set.is_match(s),
            None => self.list.iter().any(|(r, _)| r.is_match(s)),
        }
    }
}

/// Expands `template` with the groups of `re` on `s`, as HAProxy's `exp_replace` for
/// `map_regm`: `\0`..`\9` insert a group (nothing if it did not take part), `\xHH` a
/// byte, `\c` the character c. `None` when the template ends in a lone `\` or the
/// result would exceed `max` bytes.
pub fn expand(re: &Regex, s: &[u8], template: &[u8], max: usize) -> Option<Vec<u8>> {
    let caps = re.captures(s)?;
    let mut out = Vec::with_capacity(template.len() + s.len());
    let mut t = template.iter().copied();
    while let Some(c) = t.next() {
        if c != b'\\' {
            out.push(c);
            continue;
        }
        match t.next()? {
            d @ b'0'..=b'9' => {
                if let Some(m) = caps.get(usize::from(d - b'0')) {
                    out.extend_from_slice(m.as_bytes());
                }
            }
            b'x' => {
                let (h, l) = (t.next()?, t.next()?);
                out.push((hexval(h) << 4).wrapping_add(hexval(l)));
            }
            other => out.push(other),
        }
        if out.len() > max {
            return None;
        }
    }
    (out.len() <= max).then_some(out)
}

/// HAProxy's lenient hex digit (any character yields some value).
fn hexval(c: u8) -> u8 {
    let v = c.to_ascii_uppercase().wrapping_sub(b'0');
    if v > 9 {
        v.wrapping_sub(b'A' - b'9' - 1)
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_worded_as_haproxy() {
        let e = compile("(", false).unwrap_err();
        assert!(e.starts_with("regex '(' is invalid (error="), "{e}");
        assert!(e.contains("unclosed group"), "{e}");
        assert!(compile("a(?=b)", false).is_err());
        assert!(compile("(a)\\1", false).is_err());
    }

    /// The PCRE constructs docs/COMPATIBILITY.md, "ACLs, conditions and maps" lists as supported or not.
    #[test]
    fn dialect() {
        for ok in [
            "^/a.*b$",
            "[a-z0-9_-]+",
            "[^/]+",
            "[[:alpha:]]",
            "\\d\\w\\s\\D\\W\\S",
            "\\bword\\b",
            "a{2,3}",
            "a*?b+?c??",
            "(?:x|y)",
            "(?P<n>x)",
            "(?<n>x)",
            "(?i)abc",
            "(?s).",
            "(?m)^a$",
            "(?x) a b # c",
            "(?U)a+",
            "\\x41\\t",
            "\\Aab\\z",
        ] {
            assert!(compile(ok, false).is_ok(), "{ok}");
        }
        for no in [
            "(a)\\1",
            "a(?=b)",
            "a(?!b)",
            "(?<=a)b",
            "(?<!a)b",
            "(?>a)",
            "a*+",
            "a++",
            "(?R)",
            "(?(1)a|b)",
            "a\\Kb",
            "\\Gx",
            "a\\Z",
            "\\Qa.b\\E",
            "\\p{L}",
        ] {
            assert!(compile(no, false).is_err(), "{no}");
        }
        assert!(compile("a{2}+", false).is_err());
        assert!(compile("a?+", false).is_err());
        assert!(compile("[a*+]b\\++c+?", false).is_ok());
        // `$` is the very end: PCRE would also match before a final newline.
        assert!(!compile("a$", false).unwrap().is_match(b"a\n"));
    }

    #[test]
    fn icase_and_bytes() {
        let r = compile("^/ADMIN", true).unwrap();
        assert!(r.is_match(b"/admin/x"));
        assert!(!compile("^/ADMIN", false).unwrap().is_match(b"/admin/x"));
        // Unicode off: `.` matches one byte, even invalid UTF-8.
        assert!(compile("^a.b$", false).unwrap().is_match(b"a\xffb"));
        assert!(compile("^\\w+$", false).unwrap().is_match(b"abc_1"));
        assert!(!compile("^\\w+$", false).unwrap().is_match("é".as_bytes()));
        // A literal non-ASCII character matches its UTF-8 bytes.
        assert!(compile("é", false).unwrap().is_match("café".as_bytes()));
    }

    #[test]
    fn first_in_order_with_and_without_set() {
        for n in [3usize, 50] {
            let pats: Vec<String> = (0..n).map(|i| format!("^/r{i}/")).chain(["^/r1".into()]).collect();
            let texts: Vec<&str> = pats.iter().map(String::as_str).collect();
            let list = texts.iter().enumerate().map(|(i, t)| (compile(t, false).unwrap(), i as u32)).collect();
            let s = RegSet::new(list, &texts, false);
            assert_eq!(s.find(b"/r1/x").map(|m| m.1), Some(1));
            assert_eq!(s.find(b"/r1x").map(|m| m.1), Some(n as u32));
            assert!(s.find(b"/q").is_none());
            assert!(s.any(b"/r2/"));
            assert!(!s.any(b"/q"));
        }
    }

    #[test]
    fn regm_expansion() {
        let r = compile("^/img/([a-z]+)/(.*)$", false).unwrap();
        assert_eq!(expand(&r, b"/img/big/a.png", b"/\\2?size=\\1", 100).unwrap(), b"/a.png?size=big");
        assert_eq!(expand(&r, b"/img/big/a.png", b"\\0|\\9|\\x41\\\\", 100).unwrap(), b"/img/big/a.png||A\\");
        assert_eq!(expand(&r, b"/img/big/a.png", b"x\\", 100), None);
        assert_eq!(expand(&r, b"/img/big/a.png", b"\\0\\0", 10), None);
        assert_eq!(expand(&r, b"/nope", b"x", 100), None);
    }
}
