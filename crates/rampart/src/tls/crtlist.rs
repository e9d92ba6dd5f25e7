//! `crt-list <file>`: one certificate per line, with the SNI names it serves instead of
//! those in the certificate (`!name` excludes a name a wildcard would match), and
//! per-line TLS options in brackets.
//! HAProxy counterpart: ssl_crtlist.c (`crtlist_parse_line()`, `crtlist_parse_file()`).
//!
//! Line syntax: `<crtfile> [\[<option> ...\]] [[!]<sni filter> ...]`; `#` starts a
//! comment, blank lines are skipped.

use std::path::{Path, PathBuf};

/// One line of a crt-list file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrtLine {
    pub crt: PathBuf,
    /// Names served (empty: the certificate's own names).
    pub filters: Vec<String>,
    /// `!name`: names this certificate must not serve.
    pub excluded: Vec<String>,
}

/// The `ssl` options HAProxy accepts in brackets; none is honoured per line yet.
const LINE_OPTIONS: &[&str] = &[
    "allow-0rtt",
    "alpn",
    "ca-file",
    "ca-verify-file",
    "ciphers",
    "ciphersuites",
    "crl-file",
    "curves",
    "ecdhe",
    "no-ca-names",
    "npn",
    "ocsp-update",
    "ssl-max-ver",
    "ssl-min-ver",
    "verify",
];

/// Parses the text of a crt-list file named `name`; relative certificate paths are
/// resolved against `base` (`crt-base`). `Err` is HAProxy's message (after the
/// `'crt-list' : ` prefix).
pub fn parse(name: &str, text: &str, base: Option<&Path>) -> Result<Vec<CrtLine>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = || format!("parsing [{name}:{}]", i + 1);
        let (crt, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let mut rest = rest.trim_start();
        if let Some(inner) = rest.strip_prefix('[') {
            let Some((opts, after)) = inner.split_once(']') else {
                return Err(format!("{}: missing ']' in the options of the line", at()));
            };
            if let Some(kw) = opts.split_whitespace().next() {
                return Err(if LINE_OPTIONS.contains(&kw) {
                    format!("{}: '{kw}' is not supported yet in a crt-list line", at())
                } else {
                    format!("{}: unknown ssl keyword {kw}", at())
                });
            }
            rest = after;
        }
        let mut l = CrtLine { crt: resolve(crt, base), filters: Vec::new(), excluded: Vec::new() };
        for f in rest.split_whitespace() {
            match f.strip_prefix('!') {
                Some(n) => l.excluded.push(n.to_ascii_lowercase()),
                None => l.filters.push(f.to_ascii_lowercase()),
            }
        }
        out.push(l);
    }
    Ok(out)
}

fn resolve(crt: &str, base: Option<&Path>) -> PathBuf {
    match base {
        Some(b) if Path::new(crt).is_relative() => b.join(crt),
        _ => PathBuf::from(crt),
    }
}

/// Reads and parses a crt-list file.
pub fn load(path: &Path, base: Option<&Path>) -> Result<Vec<CrtLine>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        let why = e.raw_os_error().map_or_else(|| e.to_string(), |c| nix::errno::Errno::from_raw(c).desc().to_string());
        format!("cannot open file '{}' : {why}", path.display())
    })?;
    parse(&path.display().to_string(), &text, base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_filters_and_comments() {
        let text = "# certificates\n\n/a.pem\nb.pem www.b.test *.b.test !secret.b.test # end\n c.pem [] C.test\n";
        let l = parse("x.lst", text, Some(Path::new("/base"))).unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!(l[0], CrtLine { crt: "/a.pem".into(), filters: vec![], excluded: vec![] });
        assert_eq!(l[1].crt, PathBuf::from("/base/b.pem"));
        assert_eq!(l[1].filters, ["www.b.test", "*.b.test"]);
        assert_eq!(l[1].excluded, ["secret.b.test"]);
        assert_eq!(l[2].filters, ["c.test"]);
    }

    #[test]
    fn options_are_refused_naming_file_and_line() {
        assert_eq!(
            parse("x.lst", "a.pem\na.pem [foo bar] a.test\n", None).unwrap_err(),
            "parsing [x.lst:2]: unknown ssl keyword foo"
        );
        assert_eq!(
            parse("x.lst", "a.pem [alpn h2] a.test\n", None).unwrap_err(),
            "parsing [x.lst:1]: 'alpn' is not supported yet in a crt-list line"
        );
        assert_eq!(
            parse("x.lst", "a.pem [alpn h2 a.test\n", None).unwrap_err(),
            "parsing [x.lst:1]: missing ']' in the options of the line"
        );
        assert_eq!(
            load(Path::new("/nonexistent.lst"), None).unwrap_err(),
            "cannot open file '/nonexistent.lst' : No such file or directory"
        );
    }
}
