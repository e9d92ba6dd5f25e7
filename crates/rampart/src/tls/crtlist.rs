//! `crt-list <file>`: one certificate per line, with the SNI names it serves instead of
//! those in the certificate (`!name` excludes a name a wildcard would match), and
//! per-line TLS options in brackets ([`LineOptions`]).
//! HAProxy counterpart: ssl_crtlist.c (`crtlist_parse_line()`, `crtlist_parse_file()`,
//! `dump_crtlist_sslconf()`).
//!
//! Line syntax: `<crtfile> [\[<option> ...\]] [[!]<sni filter> ...]`. As in HAProxy, a
//! line whose first character is `#` is a comment and blank lines are skipped; a `#`
//! further on is a filter like any other word, and `[`/`]` separate words wherever
//! they are.

use std::path::{Path, PathBuf};

pub use super::crtlist_opts::LineOptions;

/// One line of a crt-list (from its file, or added by `add ssl crt-list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrtLine {
    /// The certificate file, `crt-base` applied.
    pub crt: PathBuf,
    /// The line number (`show ssl crt-list -n`, `del ssl crt-list <crt>:<line>`).
    pub line: usize,
    /// The options in brackets; `Some` (maybe empty) when the line has brackets.
    pub options: Option<LineOptions>,
    /// The SNI filters as written, in order (`!name` excludes).
    pub filters: Vec<String>,
}

impl CrtLine {
    /// The names served (lower case); empty: the certificate's own names.
    pub fn names(&self) -> Vec<String> {
        self.filters.iter().filter(|f| !f.starts_with('!')).map(|f| f.to_ascii_lowercase()).collect()
    }

    /// The `!name` exclusions, without the `!` (lower case).
    pub fn excluded(&self) -> Vec<String> {
        self.filters.iter().filter_map(|f| f.strip_prefix('!')).map(str::to_ascii_lowercase).collect()
    }

    /// The line as `show ssl crt-list` prints it after the file name: ` [options]`
    /// then ` filter` for each filter.
    pub fn echo(&self) -> String {
        let mut out = String::new();
        if let Some(o) = &self.options {
            out.push_str(" [");
            out.push_str(&o.echo());
            out.push(']');
        }
        for f in &self.filters {
            out.push(' ');
            out.push_str(f);
        }
        out
    }
}

/// Where the files an option names are looked up and whether they can be used.
pub struct Ctx<'a> {
    /// `crt-base`, for the certificate.
    pub crt_base: Option<&'a Path>,
    /// `ca-base`, for `ca-file`, `ca-verify-file`, `crl-file`.
    pub ca_base: Option<&'a Path>,
    /// Whether a CA or CRL file may be used (`true` for a CRL file): at startup it
    /// must load, at runtime it must have been loaded already (no disk access).
    pub usable: &'a dyn Fn(&Path, bool) -> bool,
}

/// The words of a line and where the brackets are: `(words, first option, end of
/// options)` as word indexes (0 when absent), as HAProxy splits it.
fn split(line: &str, at: &dyn Fn() -> String) -> Result<(Vec<String>, usize, usize), String> {
    let mut words: Vec<String> = Vec::new();
    let (mut open, mut close) = (0, 0);
    let mut new_word = true;
    for c in line.chars() {
        match c {
            c if c.is_ascii_whitespace() => new_word = true,
            '[' => {
                if open != 0 {
                    return Err(format!("{}: too many '['", at()));
                }
                if words.is_empty() {
                    return Err(format!("{}: file must start with a cert", at()));
                }
                open = words.len();
                new_word = true;
            }
            ']' => {
                if close != 0 {
                    return Err(format!("{}: too many ']'", at()));
                }
                if open == 0 {
                    return Err(format!("{}: missing '['", at()));
                }
                close = words.len();
                new_word = true;
            }
            c => {
                if new_word {
                    words.push(String::new());
                    new_word = false;
                }
                if let Some(w) = words.last_mut() {
                    w.push(c);
                }
            }
        }
    }
    Ok((words, open, close))
}

/// Parses one line (`file`, `linenum` name it in errors); `Ok(None)` for a line with
/// no word. HAProxy's `crtlist_parse_line()`.
pub fn parse_line(text: &str, file: &str, linenum: usize, ctx: &Ctx<'_>) -> Result<Option<CrtLine>, String> {
    let at = || format!("parsing [{file}:{linenum}]");
    let (words, open, close) = split(text, &at)?;
    let Some(crt) = words.first() else { return Ok(None) };
    let mut options = (open != 0).then(LineOptions::default);
    let mut i = if open != 0 { open } else { 1 };
    while i < close {
        let kw = words[i].as_str();
        let Some(takes_value) = LineOptions::takes_value(kw) else {
            return Err(format!("{}: unknown ssl keyword {kw}", at()));
        };
        if i + 1 + usize::from(takes_value) > close {
            return Err(format!("{}: ssl args out of '[]' for {kw}", at()));
        }
        let value = words.get(i + 1).map(String::as_str).filter(|_| takes_value);
        if let Some(o) = options.as_mut() {
            o.set(kw, value, ctx)?;
        }
        i += 1 + usize::from(takes_value);
    }
    // as in HAProxy, the filters are the words after the options (words between the
    // file name and `[` are dropped); with `[` but no `]`, the words after `[`
    Ok(Some(CrtLine { crt: resolve(crt, ctx.crt_base), line: linenum, options, filters: words[i..].to_vec() }))
}

/// Parses the text of a crt-list file named `name`. `Err` is HAProxy's message (after
/// the `'crt-list' : ` prefix).
pub fn parse(name: &str, text: &str, ctx: &Ctx<'_>) -> Result<Vec<CrtLine>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if raw.is_empty() || raw.starts_with('#') || raw.starts_with('\r') {
            continue;
        }
        out.extend(parse_line(raw, name, i + 1, ctx)?);
    }
    Ok(out)
}

/// The number of lines of a crt-list text (the next added line gets this plus one).
pub fn line_count(text: &str) -> usize {
    text.lines().count()
}

fn resolve(crt: &str, base: Option<&Path>) -> PathBuf {
    match base {
        Some(b) if Path::new(crt).is_relative() => b.join(crt),
        _ => PathBuf::from(crt),
    }
}

/// Reads and parses a crt-list file: its lines and its line count.
pub fn load(path: &Path, ctx: &Ctx<'_>) -> Result<(Vec<CrtLine>, usize), String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        let why = e.raw_os_error().map_or_else(|| e.to_string(), |c| nix::errno::Errno::from_raw(c).desc().to_string());
        format!("cannot open file '{}' : {why}", path.display())
    })?;
    Ok((parse(&path.display().to_string(), &text, ctx)?, line_count(&text)))
}

#[cfg(test)]
#[path = "crtlist_tests.rs"]
mod tests;
