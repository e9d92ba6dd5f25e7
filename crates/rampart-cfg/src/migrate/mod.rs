//! `rampart --migrate FILE`: a configuration written for HAProxy 1.x rewritten with the
//! keywords of 2.6, which HAProxy never offered. The parser shows the same replacements
//! as `hint:` lines under its refusals ([`legacy::hint`]).
//!
//! Only legacy lines change: each becomes its replacement, with the original kept above
//! it as a comment; every other line (comments, blank lines, `.if` blocks, quoting) is
//! copied byte for byte. A line with no safe automatic translation is commented out with
//! what to write instead, and reported, so that the file loads and nothing is guessed.
//!
//! - `legacy`: one legacy line → its replacement
//! - `regex`: what the 1.x header regular expressions say

pub mod legacy;
mod regex;

use crate::words::{self, Place};
use legacy::{Fix, Section};

/// A migrated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    pub text: String,
    /// What changed: line number (from 1) and what was done.
    pub changes: Vec<(u32, String)>,
    /// Lines commented out for lack of a safe translation: line number and what to do.
    pub manual: Vec<(u32, String)>,
}

/// Rewrites the legacy lines of `text`.
pub fn migrate(text: &str) -> Migrated {
    let mut out = Migrated { text: String::with_capacity(text.len()), changes: Vec::new(), manual: Vec::new() };
    let mut section = Section::Other;
    for (n, raw) in text.split_inclusive('\n').enumerate() {
        let line_no = n as u32 + 1;
        let Some(words) = split_line(raw, line_no) else {
            out.text.push_str(raw);
            continue;
        };
        let indent = &raw[..raw.len() - raw.trim_start().len()];
        if let Some(kind) = words.first().filter(|w| crate::kw::SECTIONS.iter().any(|k| k.name == w.as_str())) {
            section = match kind.as_str() {
                "global" => Section::Global,
                "defaults" | "frontend" | "backend" | "listen" => Section::Proxy,
                _ => Section::Other,
            };
            match proxy_with_address(&words) {
                Some((head, bind)) => {
                    push_rewrite(&mut out.text, raw, indent, &[head, bind], &["  "]);
                    out.changes.push((line_no, "listening address moved to a 'bind' line".into()));
                }
                None => out.text.push_str(raw),
            }
            continue;
        }
        match legacy::replacement(section, &words) {
            Some(Fix::Lines(lines)) => {
                push_rewrite(&mut out.text, raw, indent, &lines, &[]);
                out.changes.push((line_no, legacy::hint(&Fix::Lines(lines))));
            }
            Some(Fix::Manual(what)) => {
                out.text
                    .push_str(&format!("{indent}# rampart --migrate: TODO: {what}\n{indent}# {}", raw.trim_start()));
                out.manual.push((line_no, what));
            }
            None => out.text.push_str(raw),
        }
    }
    out
}

/// The words of a configuration line, or `None` for a line left as it is (blank,
/// comment only, a `.if` directive, a quoting error, a `"${...}"` to keep unexpanded).
fn split_line(raw: &str, line: u32) -> Option<Vec<String>> {
    // `"${VAR}"` would expand while splitting (to nothing): such a line stays as it is
    if raw.contains('"') && raw.contains('$') {
        return None;
    }
    let place = Place { line, file: None, section: None };
    let words = words::split(raw.trim_start().as_bytes(), true, &place, &|_| None).ok()?.to_strings();
    words.first().filter(|w| !w.is_empty() && !w.starts_with('.'))?;
    Some(words)
}

/// `listen name addr` (or `frontend`): the section line alone, then `bind addr`.
fn proxy_with_address(words: &[String]) -> Option<(Vec<String>, Vec<String>)> {
    match words {
        [kind, name, addr, ..] if (kind == "listen" || kind == "frontend") && addr.contains(':') => {
            Some((vec![kind.clone(), name.clone()], vec!["bind".to_string(), addr.clone()]))
        }
        _ => None,
    }
}

/// `lines` in place of `raw`, the original kept as a comment above them; `extra[i]`:
/// more indentation for line `i` (a `bind` under its section line).
fn push_rewrite(out: &mut String, raw: &str, indent: &str, lines: &[Vec<String>], extra: &[&str]) {
    let original = raw.trim_start().trim_end_matches(['\n', '\r']);
    out.push_str(&format!("{indent}# rampart --migrate: was: {original}\n"));
    for (i, words) in lines.iter().enumerate() {
        let more = if i > 0 { extra.first().copied().unwrap_or("") } else { "" };
        out.push_str(&format!("{indent}{more}{}\n", join_words(words)));
    }
}

/// Words back into a configuration line, quoted where the lexer needs it.
pub fn join_words(words: &[String]) -> String {
    words.iter().map(|w| quote_word(w)).collect::<Vec<_>>().join(" ")
}

/// One word as a configuration file writes it: bare when the lexer reads it back
/// unchanged, else in single quotes (everything literal), or double quotes when it holds
/// a single quote.
fn quote_word(w: &str) -> String {
    let plain = !w.is_empty()
        && !w.bytes().any(|b| words::is_space(b) || matches!(b, b'#' | b'\'' | b'"' | b'$'))
        && !w.contains("\\\\")
        && !w.contains("\\x")
        && !w.ends_with('\\');
    if plain {
        w.to_string()
    } else if !w.contains('\'') {
        format!("'{w}'")
    } else {
        let escaped: String = w
            .chars()
            .flat_map(|c| match c {
                '\\' | '"' | '$' => vec!['\\', c],
                _ => vec![c],
            })
            .collect();
        format!("\"{escaped}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_lines_are_rewritten_the_rest_copied() {
        let text = "# a 1.8 file\nglobal\n    nbproc 2\n\nlisten web 0.0.0.0:8080\n    mode http\n    \
                    contimeout 5s # short\n    reqadd X-Proto:\\ https if { ssl_fc }\n    \
                    reqrep ^(GET|HEAD)\\ /x \\1\\ /y\n    server s1 \"${S1}\":80\n";
        let m = migrate(text);
        assert_eq!(
            m.text,
            "# a 1.8 file\nglobal\n    # rampart --migrate: was: nbproc 2\n\n\
             # rampart --migrate: was: listen web 0.0.0.0:8080\nlisten web\n  bind 0.0.0.0:8080\n    mode http\n    \
             # rampart --migrate: was: contimeout 5s # short\n    timeout connect 5s\n    \
             # rampart --migrate: was: reqadd X-Proto:\\ https if { ssl_fc }\n    \
             http-request add-header X-Proto https if { ssl_fc }\n    \
             # rampart --migrate: TODO: 'reqrep' rewrote whole header lines; write 'http-request replace-header <name> <regex> <value>', or 'http-request replace-uri|replace-path' for the request line\n    \
             # reqrep ^(GET|HEAD)\\ /x \\1\\ /y\n    server s1 \"${S1}\":80\n"
        );
        assert_eq!(m.changes.iter().map(|c| c.0).collect::<Vec<_>>(), [3, 5, 7, 8]);
        assert_eq!(m.manual.len(), 1);
        assert_eq!(m.manual[0].0, 9);
    }

    #[test]
    fn words_are_quoted_to_read_back_the_same() {
        for w in ["plain", "two words", "it's", "a#b", "\\1.new", "", "$HOME", "x\\\\y", "'q' \"d\""] {
            let line = format!("kw {}\n", quote_word(w));
            let place = Place { line: 1, file: None, section: None };
            let back = words::split(line.as_bytes(), true, &place, &|_| None).unwrap();
            assert_eq!(String::from_utf8_lossy(back.arg(1)), w, "{line}");
        }
        assert_eq!(quote_word("\\1.new"), "\\1.new");
    }
}
