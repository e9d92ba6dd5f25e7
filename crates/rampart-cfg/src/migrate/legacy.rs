//! The modern replacement of one legacy line (HAProxy 1.x keywords that 2.6 refuses or
//! ignores), as words: what the `hint:` under the refusal shows and what
//! `rampart --migrate` writes. Pure: words in, words out.
//!
//! The legacy header keywords worked on whole header lines with a regular expression
//! (`reqrep ^Host:\ (.*) Host:\ new`); their replacements work on a named header's
//! value. A line is translated only when its regular expression names the header
//! literally (`^Name:` then a pattern of the value); anything else (a pattern over the
//! request line or over several headers) is left to the user with an explanation
//! ([`Fix::Manual`]), never guessed.

use super::regex::{header_pattern, literal_header_line, request_line_pattern, shift_groups};

/// What a legacy line becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// These lines (none: the line is removed, it had no effect).
    Lines(Vec<Vec<String>>),
    /// No safe automatic translation: what to write instead.
    Manual(String),
}

/// Where the line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Global,
    /// `frontend`, `backend`, `listen` or `defaults`.
    Proxy,
    Other,
}

/// The replacement of `words` (a line of `section`), when it is a legacy line.
pub fn replacement(section: Section, words: &[String]) -> Option<Fix> {
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    match section {
        Section::Global => global(&w),
        Section::Proxy => proxy(&w),
        Section::Other => None,
    }
}

/// The one-line form of a fix, for a `hint:` line.
pub fn hint(fix: &Fix) -> String {
    match fix {
        Fix::Lines(lines) if lines.is_empty() => "remove the line: it has no effect since HAProxy 2.5".to_string(),
        Fix::Lines(lines) => {
            let lines: Vec<String> = lines.iter().map(|l| super::join_words(l)).collect();
            format!("replace with: {} (rampart --migrate rewrites the file)", lines.join(" / "))
        }
        Fix::Manual(what) => what.clone(),
    }
}

fn global(w: &[&str]) -> Option<Fix> {
    match w {
        ["nbproc", ..] => Some(remove()),
        ["stats", "bind-process", ..] => Some(remove()),
        _ => None,
    }
}

fn proxy(w: &[&str]) -> Option<Fix> {
    let (kw, args) = w.split_first()?;
    match *kw {
        "clitimeout" | "contimeout" | "srvtimeout" => {
            let new = match *kw {
                "clitimeout" => "client",
                "contimeout" => "connect",
                _ => "server",
            };
            Some(line(["timeout", new].into_iter().chain(args.iter().copied())))
        }
        "redispatch" | "redisp" => Some(line(["option", "redispatch"])),
        "block" => Some(line(["http-request", "deny"].into_iter().chain(args.iter().copied()))),
        "monitor-net" if args.len() == 1 => {
            Some(line(["http-request", "return", "status", "200", "if", "{", "src", args[0], "}"]))
        }
        "grace" | "bind-process" => Some(remove()),
        "option" => option(args, false),
        "no" if args.first() == Some(&"option") => option(&args[1..], true),
        "reqadd" | "rspadd" => add_header(kw, args),
        "reqdel" | "reqidel" | "rspdel" | "rspidel" => del_header(kw, args),
        "reqrep" | "reqirep" | "rsprep" | "rspirep" => replace(kw, args),
        "reqdeny" | "reqideny" | "reqtarpit" | "reqitarpit" | "reqallow" | "reqiallow" | "rspdeny" | "rspideny" => {
            filter(kw, args)
        }
        "reqpass" | "reqipass" => Some(remove()),
        _ => None,
    }
}

fn option(args: &[&str], negated: bool) -> Option<Fix> {
    match (args.first()?, negated) {
        (&"forceclose", false) => Some(line(["option", "httpclose"])),
        (&"forceclose" | &"http-use-htx", _) => Some(remove()),
        _ => None,
    }
}

fn remove() -> Fix {
    Fix::Lines(Vec::new())
}

fn line<'a>(words: impl IntoIterator<Item = &'a str>) -> Fix {
    Fix::Lines(vec![words.into_iter().map(str::to_string).collect()])
}

/// `http-request` for `req*`, `http-response` for `rsp*`.
fn rule_set(kw: &str) -> &'static str {
    if kw.starts_with("req") {
        "http-request"
    } else {
        "http-response"
    }
}

/// The trailing `if|unless <cond>` words, when they are all that follows `n` arguments.
fn cond_after<'a>(args: &'a [&'a str], n: usize) -> Option<&'a [&'a str]> {
    let rest = args.get(n..)?;
    match rest.first() {
        None => Some(rest),
        Some(&"if" | &"unless") if rest.len() > 1 => Some(rest),
        _ => None,
    }
}

/// A log-format string that prints `s` as it is (`%` doubled).
fn literal_format(s: &str) -> String {
    s.replace('%', "%%")
}

/// `reqadd "Name: value"` → `http-request add-header Name value`.
fn add_header(kw: &str, args: &[&str]) -> Option<Fix> {
    let cond = cond_after(args, 1)?;
    let Some((name, value)) = literal_header_line(args[0]) else {
        return Some(Fix::Manual(format!(
            "'{kw}' adds a whole header line 'Name: value'; write 'http-request add-header <name> <value>'"
        )));
    };
    let value = literal_format(&value);
    let words = [rule_set(kw), "add-header", name.as_str(), value.as_str()];
    Some(line(words.into_iter().chain(cond.iter().copied())))
}

/// `reqdel ^Name:.*` → `http-request del-header Name`.
fn del_header(kw: &str, args: &[&str]) -> Option<Fix> {
    let cond = cond_after(args, 1)?;
    match header_pattern(args[0]) {
        Some((name, rest)) if matches!(rest.as_str(), "" | ".*" | "^.*" | ".*$") => {
            let words = [rule_set(kw), "del-header", name.as_str()];
            Some(line(words.into_iter().chain(cond.iter().copied())))
        }
        _ => Some(Fix::Manual(format!(
            "'{kw}' removed the header lines its regex matched; write '{} del-header <name>' (with a condition on the value if the regex tested it)",
            rule_set(kw)
        ))),
    }
}

/// `reqrep ^Name:\ (x) Name:\ y` → `http-request replace-header Name ^(x) y`;
/// `reqrep ^([^\ :]*)\ /a(.*) \1\ /b\2` → `http-request replace-uri ^/a(.*) /b\1`.
fn replace(kw: &str, args: &[&str]) -> Option<Fix> {
    let cond = cond_after(args, 2)?;
    let insensitive = kw.contains("irep");
    let set = rule_set(kw);
    if let (Some((name, rest)), Some((new_name, new_value))) = (header_pattern(args[0]), literal_header_line(args[1])) {
        if name.eq_ignore_ascii_case(&new_name) {
            let re = if insensitive { format!("(?i)^{rest}") } else { format!("^{rest}") };
            let value = literal_format(&new_value);
            let words = [set, "replace-header", name.as_str(), re.as_str(), value.as_str()];
            return Some(line(words.into_iter().chain(cond.iter().copied())));
        }
    }
    if set == "http-request" {
        if let Some((uri_re, uri_repl)) = request_line_pattern(args[0], args[1]) {
            let re = if insensitive { format!("(?i){uri_re}") } else { uri_re };
            let repl = literal_format(&shift_groups(&uri_repl));
            let words = ["http-request", "replace-uri", re.as_str(), repl.as_str()];
            return Some(line(words.into_iter().chain(cond.iter().copied())));
        }
    }
    Some(Fix::Manual(format!(
        "'{kw}' rewrote whole header lines; write '{set} replace-header <name> <regex> <value>'{}",
        if set == "http-request" { ", or 'http-request replace-uri|replace-path' for the request line" } else { "" }
    )))
}

/// `reqdeny ^Name:\ x` → `http-request deny if { req.fhdr(Name) -m reg ^x }`.
fn filter(kw: &str, args: &[&str]) -> Option<Fix> {
    let insensitive = kw.contains("reqi") || kw.contains("rspi");
    let action = match kw.trim_start_matches("req").trim_start_matches("rsp").trim_start_matches('i') {
        "deny" => "deny",
        "tarpit" => "tarpit",
        _ => "allow",
    };
    let set = rule_set(kw);
    let fetch = if set == "http-request" { "req.fhdr" } else { "res.fhdr" };
    let manual = || {
        Fix::Manual(format!(
            "'{kw}' tested whole header lines with a regex; write '{set} {action} if {{ {fetch}(<name>) -m reg <regex> }}'"
        ))
    };
    if args.len() != 1 {
        return Some(manual());
    }
    let Some((name, rest)) = header_pattern(args[0]) else { return Some(manual()) };
    let fetch = format!("{fetch}({name})");
    let re = format!("^{rest}");
    let mut words = vec![set, action, "if", "{", fetch.as_str(), "-m", "reg"];
    if insensitive {
        words.push("-i");
    }
    words.extend([re.as_str(), "}"]);
    Some(line(words))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(section: Section, line: &str) -> Option<Fix> {
        let words: Vec<String> = line.split(' ').map(|w| w.replace('\u{1}', " ")).collect();
        replacement(section, &words)
    }

    fn lines(section: Section, line: &str) -> Vec<String> {
        match fix(section, line) {
            Some(Fix::Lines(l)) => l.iter().map(|w| w.join(" ")).collect(),
            other => panic!("{line}: {other:?}"),
        }
    }

    fn px(line: &str) -> Vec<String> {
        lines(Section::Proxy, line)
    }

    #[test]
    fn timeouts_options_and_removed_lines() {
        assert_eq!(px("contimeout 5s"), ["timeout connect 5s"]);
        assert_eq!(px("clitimeout 30000"), ["timeout client 30000"]);
        assert_eq!(px("srvtimeout 1m"), ["timeout server 1m"]);
        assert_eq!(px("redispatch"), ["option redispatch"]);
        assert_eq!(px("block if { src 10.0.0.1 }"), ["http-request deny if { src 10.0.0.1 }"]);
        assert_eq!(px("option forceclose"), ["option httpclose"]);
        assert!(px("no option forceclose").is_empty());
        assert!(px("option http-use-htx").is_empty());
        assert!(px("bind-process 1").is_empty());
        assert!(lines(Section::Global, "nbproc 4").is_empty());
        assert!(lines(Section::Global, "stats bind-process 1").is_empty());
        assert_eq!(px("monitor-net 10.0.0.0/8"), ["http-request return status 200 if { src 10.0.0.0/8 }"]);
        assert_eq!(fix(Section::Proxy, "option httplog"), None);
        assert_eq!(fix(Section::Global, "contimeout 5s"), None);
    }

    #[test]
    fn header_lines_become_header_actions() {
        // \u{1} stands for a space inside a word in these tests
        assert_eq!(px("reqadd X-Proto:\u{1}https"), ["http-request add-header X-Proto https"]);
        assert_eq!(px("rspadd X-Rate:\u{1}100%\u{1}ok if TRUE"), ["http-response add-header X-Rate 100%% ok if TRUE"]);
        assert_eq!(px("reqdel ^X-Forwarded-For:.*"), ["http-request del-header X-Forwarded-For"]);
        assert_eq!(px("rspidel ^Server:"), ["http-response del-header Server"]);
        assert_eq!(
            px("reqrep ^Host:\u{1}(.*)\\.old\\.com Host:\u{1}\\1.new.com"),
            ["http-request replace-header Host ^(.*)\\.old\\.com \\1.new.com"]
        );
        assert_eq!(
            px("rspirep ^Location:\u{1}http://(.*) Location:\u{1}https://\\1"),
            ["http-response replace-header Location (?i)^http://(.*) https://\\1"]
        );
        assert_eq!(
            px("reqrep ^([^\u{1}:]*)\u{1}/static/(.*) \\1\u{1}/\\2"),
            ["http-request replace-uri ^/static/(.*) /\\1"]
        );
        assert_eq!(
            px("reqideny ^User-Agent:\u{1}.*curl"),
            ["http-request deny if { req.fhdr(User-Agent) -m reg -i ^.*curl }"]
        );
        assert_eq!(px("rspdeny ^Server:\u{1}Apache"), ["http-response deny if { res.fhdr(Server) -m reg ^Apache }"]);
    }

    #[test]
    fn what_cannot_be_translated_safely_is_explained() {
        for l in ["reqrep ^(GET|HEAD)\u{1}(.*) \\1\u{1}x", "reqdel ^X-(A|B):", "reqdeny ^GET", "reqadd nocolon"] {
            assert!(matches!(fix(Section::Proxy, l), Some(Fix::Manual(_))), "{l}");
        }
    }
}
