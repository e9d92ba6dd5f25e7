//! The corpus format: one `*.cases` file per theme under `tests/rules_corpus/`, each a
//! list of cases; a case is a configuration fragment, one or more raw requests and
//! optional expectations checked on haproxy's run (so a case that exercises nothing
//! cannot pass unnoticed). The full grammar is in `docs/COMPATIBILITY.md, "Differential corpus against haproxy 2.6"`; in short:
//!
//! ```text
//! === path-beg                       a case named "path-beg" (id: <theme>/path-beg)
//! [frontend]                         lines of `frontend fe1` (also: global defaults
//! acl api path_beg /api               backend backend2 listen extra config)
//! http-request set-header X-Api 1 if api
//! [request]                          one request: request line, then header lines;
//! GET /api/v1                         HTTP/1.1 and `Host: corpus.test` are added when
//! [request]                           missing; `~body <text>` gives a body
//! GET /web
//! [expect]                           checks on haproxy's observation
//! 1 status 200
//! s1.1 header x-api: 1
//! s1.2 no-header x-api
//! ```

use std::fmt::Write as _;
use std::path::Path;

/// Where the test files live (maps, corpus), for `${CORPUS}` in configurations.
pub const CORPUS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rules_corpus");

/// The `Host` header added to HTTP/1.1 requests that have none.
const DEFAULT_HOST: &str = "corpus.test";

/// One request × rule case.
#[derive(Clone, Debug)]
pub struct Case {
    /// `<theme>/<name>`.
    pub id: String,
    /// The theme (the file name without `.cases`).
    pub theme: String,
    /// Line of the `===` header in its file, for messages.
    pub line: usize,
    /// The configuration, `${s1_addr}`-style placeholders left for the testkit.
    pub config: String,
    /// The requests, exact bytes, each sent on its own connection in order.
    pub requests: Vec<RawRequest>,
    /// Checks on haproxy's observation, as written.
    pub expects: Vec<String>,
}

/// One request as sent on the wire.
#[derive(Clone, Debug)]
pub struct RawRequest {
    /// The method (to read the response of a HEAD correctly).
    pub method: String,
    /// The bytes sent.
    pub bytes: Vec<u8>,
}

/// The configuration blocks of a case, as written.
#[derive(Default)]
struct Blocks {
    global: Vec<String>,
    defaults: Vec<String>,
    frontend: Vec<String>,
    backend: Vec<String>,
    backend2: Vec<String>,
    listen: Option<Vec<String>>,
    extra: Vec<String>,
    config: Option<Vec<String>>,
}

/// Which block the lines being read belong to.
#[derive(Clone, Copy, PartialEq)]
enum Section {
    None,
    Global,
    Defaults,
    Frontend,
    Backend,
    Backend2,
    Listen,
    Extra,
    Config,
    Request,
    Expect,
}

fn section(name: &str) -> Option<Section> {
    Some(match name {
        "global" => Section::Global,
        "defaults" => Section::Defaults,
        "frontend" => Section::Frontend,
        "backend" => Section::Backend,
        "backend2" => Section::Backend2,
        "listen" => Section::Listen,
        "extra" => Section::Extra,
        "config" => Section::Config,
        "request" => Section::Request,
        "expect" => Section::Expect,
        _ => return None,
    })
}

/// Reads every `*.cases` file of `dir`, in file-name order.
pub fn load_dir(dir: &Path) -> Result<Vec<Case>, String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cases"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let theme = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        cases.extend(parse(&theme, &text).map_err(|e| format!("{}: {e}", file.display()))?);
    }
    let mut ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("case {} is defined twice", w[0]));
    }
    Ok(cases)
}

/// A case being read.
struct Draft {
    name: String,
    line: usize,
    blocks: Blocks,
    requests: Vec<Vec<String>>,
    expects: Vec<String>,
}

/// Parses one theme file.
pub fn parse(theme: &str, text: &str) -> Result<Vec<Case>, String> {
    let mut cases = Vec::new();
    let mut draft: Option<Draft> = None;
    let mut sec = Section::None;
    for (i, raw_line) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw_line.trim();
        if let Some(header) = line.strip_prefix("===") {
            if let Some(d) = draft.take() {
                cases.push(finish(theme, d)?);
            }
            let name = header.split_whitespace().next().unwrap_or_default().to_string();
            if name.is_empty() {
                return Err(format!("line {lineno}: a case needs a name"));
            }
            draft = Some(Draft {
                name,
                line: lineno,
                blocks: Blocks::default(),
                requests: Vec::new(),
                expects: Vec::new(),
            });
            sec = Section::None;
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some(d) = draft.as_mut() else {
            return Err(format!("line {lineno}: text before the first '=== <case>'"));
        };
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            sec = section(name).ok_or_else(|| format!("line {lineno}: unknown block [{name}]"))?;
            match sec {
                Section::Request => d.requests.push(Vec::new()),
                Section::Listen => d.blocks.listen = Some(d.blocks.listen.take().unwrap_or_default()),
                Section::Config => d.blocks.config = Some(d.blocks.config.take().unwrap_or_default()),
                _ => {}
            }
            continue;
        }
        let text = line.to_string();
        let b = &mut d.blocks;
        match sec {
            Section::None => return Err(format!("line {lineno}: text outside a [block]")),
            Section::Global => b.global.push(text),
            Section::Defaults => b.defaults.push(text),
            Section::Frontend => b.frontend.push(text),
            Section::Backend => b.backend.push(text),
            Section::Backend2 => b.backend2.push(text),
            Section::Listen => b.listen.get_or_insert_with(Vec::new).push(text),
            // Verbatim blocks keep their indentation (section headers at column 0).
            Section::Extra => b.extra.push(raw_line.trim_end().to_string()),
            Section::Config => b.config.get_or_insert_with(Vec::new).push(raw_line.trim_end().to_string()),
            Section::Request => d.requests.last_mut().map(|r| r.push(text)).unwrap_or_default(),
            Section::Expect => d.expects.push(text),
        }
    }
    if let Some(d) = draft.take() {
        cases.push(finish(theme, d)?);
    }
    Ok(cases)
}

fn finish(theme: &str, d: Draft) -> Result<Case, String> {
    let at = |msg: &str| format!("case {} (line {}): {msg}", d.name, d.line);
    if d.requests.is_empty() {
        return Err(at("no [request]"));
    }
    let requests = d.requests.iter().map(|r| build_request(r)).collect::<Result<Vec<_>, _>>().map_err(|e| at(&e))?;
    Ok(Case {
        id: format!("{theme}/{}", d.name),
        theme: theme.to_string(),
        line: d.line,
        config: render(&d.blocks).replace("${CORPUS}", CORPUS_DIR),
        requests,
        expects: d.expects,
    })
}

/// Bytes of one `[request]` block.
fn build_request(lines: &[String]) -> Result<RawRequest, String> {
    let Some((first, rest)) = lines.split_first() else { return Err("an empty [request]".to_string()) };
    let words: Vec<&str> = first.split_whitespace().collect();
    let (method, target, version) = match words.as_slice() {
        [m, t] => (*m, *t, "HTTP/1.1"),
        [m, t, v] => (*m, *t, *v),
        _ => return Err(format!("bad request line {first:?}")),
    };
    let mut head = format!("{method} {target} {version}\r\n");
    let mut body: Option<String> = None;
    let mut has_host = false;
    let mut add_host = version == "HTTP/1.1";
    for line in rest {
        if let Some(b) = line.strip_prefix("~body ") {
            body = Some(unescape(b));
        } else if line == "~nohost" {
            add_host = false;
        } else {
            has_host |= line.to_ascii_lowercase().starts_with("host:");
            let _ = write!(head, "{}\r\n", unescape(line));
        }
    }
    if add_host && !has_host {
        head = head.replacen("\r\n", &format!("\r\nHost: {DEFAULT_HOST}\r\n"), 1);
    }
    if let Some(b) = &body {
        if !head.to_ascii_lowercase().contains("\r\ncontent-length:") {
            let _ = write!(head, "Content-Length: {}\r\n", b.len());
        }
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.unwrap_or_default().as_bytes());
    Ok(RawRequest { method: method.to_string(), bytes })
}

/// `\n`, `\r` and `\t` in request and expectation text; any other backslash stays.
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The standard `global` section: one thread, so rampart's idle pools and haproxy's
/// scheduling are deterministic.
const GLOBAL: &str = "global\n  nbthread 1\n";

/// The standard `defaults`: short timeouts, and `http-reuse never` because every request
/// comes on its own client connection (see the COMPAT note on reuse in http_diff.rs: with
/// `safe`, rampart may reuse an idle server connection where haproxy opens a new one).
const DEFAULTS: &str =
    "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n  http-reuse never\n";

/// The configuration of a case: the standard `global`, `defaults`, `frontend fe1`
/// (or `listen fe1`), backends `be1` (server `s1`) and `be2` (server `s2`), then
/// `[extra]`; or `[config]` verbatim after `global`.
fn render(b: &Blocks) -> String {
    let mut out = String::from(GLOBAL);
    push_lines(&mut out, &b.global);
    if let Some(config) = &b.config {
        for l in config {
            out.push_str(l);
            out.push('\n');
        }
        return out;
    }
    out.push_str(DEFAULTS);
    push_lines(&mut out, &b.defaults);
    let has = |lines: &[String], kw: &str| lines.iter().any(|l| l.split_whitespace().next() == Some(kw));
    match &b.listen {
        Some(listen) => {
            out.push_str("listen fe1\n  bind fd@${fe1}\n");
            push_lines(&mut out, listen);
            if !has(listen, "server") {
                out.push_str("  server s1 ${s1_addr}:${s1_port}\n");
            }
        }
        None => {
            out.push_str("frontend fe1\n  bind fd@${fe1}\n");
            push_lines(&mut out, &b.frontend);
            if !has(&b.frontend, "default_backend") {
                out.push_str("  default_backend be1\n");
            }
        }
    }
    out.push_str("backend be1\n");
    push_lines(&mut out, &b.backend);
    if !has(&b.backend, "server") {
        out.push_str("  server s1 ${s1_addr}:${s1_port}\n");
    }
    out.push_str("backend be2\n");
    push_lines(&mut out, &b.backend2);
    out.push_str("  server s2 ${s2_addr}:${s2_port}\n");
    for l in &b.extra {
        out.push_str(l);
        out.push('\n');
    }
    out
}

fn push_lines(out: &mut String, lines: &[String]) {
    for l in lines {
        out.push_str("  ");
        out.push_str(l);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_renders_into_a_config_and_requests() {
        let cases = parse(
            "t",
            "# c\n=== one\n[frontend]\nhttp-request set-header X-A 1\n[request]\nGET /a\n[request]\nPOST /b HTTP/1.0\nX-B: 2\n~body hi\n[expect]\n1 status 200\n",
        )
        .unwrap();
        let c = &cases[0];
        assert_eq!(c.id, "t/one");
        assert!(c
            .config
            .contains("frontend fe1\n  bind fd@${fe1}\n  http-request set-header X-A 1\n  default_backend be1\n"));
        assert_eq!(c.requests[0].bytes, b"GET /a HTTP/1.1\r\nHost: corpus.test\r\n\r\n");
        assert_eq!(c.requests[1].bytes, b"POST /b HTTP/1.0\r\nX-B: 2\r\nContent-Length: 2\r\n\r\nhi");
        assert_eq!(c.expects, ["1 status 200"]);
    }
}
