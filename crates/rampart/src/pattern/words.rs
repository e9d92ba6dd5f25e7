//! Substring matching (`-m sub`) and delimited words (`-m dir`, `-m dom`) with one
//! Aho-Corasick automaton over all the patterns: a lookup scans the sample once,
//! whatever the number of patterns.
//!
//! `dir` and `dom` find the pattern as a whole word: preceded by a delimiter or the
//! start of the sample, followed by a delimiter or its end; delimiters at either end
//! of the pattern are ignored. `dir` delimiters are `/` and `?`; `dom` adds `.` and
//! `:`. So `-m dom example.com` matches `www.example.com:80` but not
//! `myexample.com`.
//!
//! HAProxy counterpart: `pat_match_sub()`, `match_word()`, `pat_match_dir()`,
//! `pat_match_dom()` (src/pattern.c), which try each pattern in turn.

use aho_corasick::{AhoCorasick, MatchKind};

/// Which kind of containment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sub,
    Dir,
    Dom,
}

impl Kind {
    fn is_delim(self, c: u8) -> bool {
        match self {
            Kind::Sub => false,
            Kind::Dir => matches!(c, b'/' | b'?'),
            Kind::Dom => matches!(c, b'/' | b'?' | b'.' | b':'),
        }
    }
}

#[derive(Debug)]
pub struct WordSet {
    kind: Kind,
    /// `None` when no pattern can match (no patterns, or only empty ones).
    ac: Option<AhoCorasick>,
    /// Automaton pattern id → pattern number (increasing).
    ids: Vec<u32>,
}

impl WordSet {
    pub fn build(kind: Kind, pats: &[(&[u8], u32)], icase: bool) -> Result<WordSet, String> {
        let mut words: Vec<&[u8]> = Vec::with_capacity(pats.len());
        let mut ids = Vec::with_capacity(pats.len());
        for &(p, idx) in pats {
            let w = strip(kind, p);
            // COMPAT: an empty pattern (or, for dir/dom, one made only of delimiters)
            // never matches; HAProxy compares it against the byte after the sample.
            if !w.is_empty() {
                words.push(w);
                ids.push(idx);
            }
        }
        let ac = if words.is_empty() {
            None
        } else {
            let ac = AhoCorasick::builder()
                .ascii_case_insensitive(icase)
                .match_kind(MatchKind::Standard)
                .build(&words)
                .map_err(|e| format!("cannot index patterns: {e}"))?;
            Some(ac)
        };
        Ok(WordSet { kind, ac, ids })
    }

    /// The first pattern (in order) found in `s`, or with `any`, any one of them.
    pub fn find(&self, s: &[u8], any: bool) -> Option<u32> {
        let ac = self.ac.as_ref()?;
        if self.kind == Kind::Sub && any {
            return ac.find(s).map(|m| self.ids[m.pattern().as_usize()]);
        }
        let mut best: Option<u32> = None;
        for m in ac.find_overlapping_iter(s) {
            if self.kind != Kind::Sub {
                let before = m.start().checked_sub(1).map(|i| s[i]);
                let after = s.get(m.end()).copied();
                if before.is_some_and(|c| !self.kind.is_delim(c)) || after.is_some_and(|c| !self.kind.is_delim(c)) {
                    continue;
                }
            }
            let id = m.pattern().as_usize();
            if any || id == 0 {
                return Some(self.ids[id]);
            }
            best = Some(best.map_or(self.ids[id], |b| b.min(self.ids[id])));
        }
        best
    }
}

/// The pattern without the delimiters at its ends.
fn strip(kind: Kind, mut p: &[u8]) -> &[u8] {
    while let Some((&c, rest)) = p.split_first() {
        if !kind.is_delim(c) {
            break;
        }
        p = rest;
    }
    while let Some((&c, rest)) = p.split_last() {
        if !kind.is_delim(c) {
            break;
        }
        p = rest;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(kind: Kind, pats: &[&str], icase: bool) -> WordSet {
        let p: Vec<(&[u8], u32)> = pats.iter().enumerate().map(|(i, k)| (k.as_bytes(), i as u32)).collect();
        WordSet::build(kind, &p, icase).unwrap()
    }

    #[test]
    fn sub_first_in_order() {
        let s = set(Kind::Sub, &["cd", "abc", "zz"], false);
        assert_eq!(s.find(b"xabcdx", false), Some(0));
        assert_eq!(s.find(b"xabcx", false), Some(1));
        assert_eq!(s.find(b"xABCx", false), None);
        assert!(s.find(b"xabcdx", true).is_some());
        assert_eq!(s.find(b"", false), None);
        let i = set(Kind::Sub, &["ABC"], true);
        assert_eq!(i.find(b"xabcx", true), Some(0));
    }

    #[test]
    fn dir_words() {
        let s = set(Kind::Dir, &["/images/", "img"], false);
        assert_eq!(s.find(b"/static/images/a.png", false), Some(0));
        assert_eq!(s.find(b"/images", false), Some(0));
        assert_eq!(s.find(b"/myimages/a", false), None);
        assert_eq!(s.find(b"/a?img", false), Some(1));
        assert_eq!(s.find(b"/a/img.png", false), None);
        // A pattern holding a delimiter matches across it.
        let s = set(Kind::Dir, &["a/b"], false);
        assert_eq!(s.find(b"/x/a/b/c", false), Some(0));
        assert_eq!(s.find(b"/x/aa/b", false), None);
    }

    #[test]
    fn dom_words() {
        let s = set(Kind::Dom, &["example.com"], false);
        assert_eq!(s.find(b"www.example.com", false), Some(0));
        assert_eq!(s.find(b"example.com:8080", false), Some(0));
        assert_eq!(s.find(b"http://example.com/x", false), Some(0));
        assert_eq!(s.find(b"myexample.com", false), None);
        assert_eq!(s.find(b"example.com.evil", false), Some(0));
        assert_eq!(s.find(b"example.coms", false), None);
        assert_eq!(s.find(b"WWW.EXAMPLE.COM", false), None);
        let i = set(Kind::Dom, &[".Example.COM."], true);
        assert_eq!(i.find(b"www.example.com", false), Some(0));
        // Overlapping candidates: the word-bounded one is found after a failed one.
        let o = set(Kind::Dom, &["ab"], false);
        assert_eq!(o.find(b"xab.ab", false), Some(0));
    }

    #[test]
    fn delimiter_only_patterns_never_match() {
        let s = set(Kind::Dom, &["...", "/"], false);
        assert_eq!(s.find(b"a.b", false), None);
        assert_eq!(s.find(b"", true), None);
    }
}
