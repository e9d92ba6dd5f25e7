//! The rules `tcp-check` and `http-check` share: `connect`, `expect`, `comment` and
//! the variable actions (`set-var`, `set-var-fmt`, `unset-var`). The callers
//! (`tcpcheck.rs`, `healthcheck.rs`) add the rules to their list and word the errors
//! (`'tcp-check expect' : <message>.`).
//!
//! HAProxy counterparts: `parse_tcpcheck_connect()`, `parse_tcpcheck_expect()`,
//! `parse_tcpcheck_comment()`, `parse_tcpcheck_action()` with `parse_store()`
//! (src/tcpcheck.c, src/vars.c).

use crate::model::{
    CheckConnect, CheckExpect, CheckStatusName, ConnectPort, ExpectMatch, ExprSrc, FmtSrc, HdrExpect, HdrMeth,
    HdrPattern, VarAction,
};
use crate::span::Span;

use super::rule::{ActErr, ActResult, Args};
use super::{arg, not_yet};

/// Which rule list a rule is parsed for: their keywords differ a little.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum List {
    Tcp,
    Http,
}

impl List {
    pub fn word(self) -> &'static str {
        match self {
            List::Tcp => "tcp-check",
            List::Http => "http-check",
        }
    }
}

fn bad<T>(msg: impl Into<String>) -> ActResult<T> {
    Err(ActErr::Invalid(msg.into()))
}

fn later<T>(what: String) -> ActResult<T> {
    Err(ActErr::NotYet(what))
}

/// The value after word `i` of `args`, which must not be empty.
fn value<'a>(args: &'a [String], i: usize, what: &str) -> ActResult<&'a str> {
    match arg(args, i + 1) {
        "" => bad(format!("'{}' expects {what} as argument", arg(args, i))),
        v => Ok(v),
    }
}

/// Turns an [`ActErr`] into the message of the line: `'<list> <action>' : <msg>.`, or
/// rampart's "not supported yet".
pub(super) fn message(list: List, action: &str, e: ActErr) -> String {
    match e {
        ActErr::Invalid(m) => format!("'{} {action}' : {m}.", list.word()),
        ActErr::NotYet(what) => not_yet(&what),
    }
}

/// `comment <text>` (the words after `comment`).
pub(super) fn parse_comment(args: &[String]) -> ActResult<String> {
    match arg(args, 0) {
        "" => bad("expects a string as argument"),
        c => Ok(c.to_owned()),
    }
}

/// `connect [default] [port <p>] [addr <a>] [send-proxy] [via-socks4] [ssl] [sni <s>]
/// [alpn <l>] [linger] [proto <p>] [comment <c>]` (the words after `connect`).
pub(super) fn parse_connect(args: &[String], list: List, span: &Span) -> ActResult<(CheckConnect, Option<String>)> {
    let mut c = CheckConnect::default();
    let mut comment = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "default" => c.default = true,
            "send-proxy" => c.send_proxy = true,
            "via-socks4" => c.via_socks4 = true,
            "linger" => c.linger = true,
            "ssl" => c.ssl = true,
            "addr" => {
                c.addr = Some(value(args, i, "<ipv4|ipv6>")?.to_owned());
                i += 1;
            }
            "port" => {
                c.port = Some(connect_port(value(args, i, "a port number or a sample expression")?, span)?);
                i += 1;
            }
            "sni" => {
                c.sni = Some(value(args, i, "a string")?.to_owned());
                i += 1;
            }
            "alpn" => {
                c.alpn = Some(alpn_list(arg(args, i + 1))?);
                i += 1;
            }
            "proto" => {
                c.proto = Some(mux_proto(value(args, i, "a MUX protocol")?, list)?);
                i += 1;
            }
            "comment" => {
                comment = Some(value(args, i, "a string")?.to_owned());
                i += 1;
            }
            other => {
                return bad(format!(
                    "expects 'comment', 'port', 'addr', 'send-proxy', 'ssl', 'sni', 'alpn' or 'via-socks4', \
                     'linger', 'default' but got '{other}' as argument"
                ))
            }
        }
        i += 1;
    }
    Ok((c, comment))
}

/// A port number, or else a sample expression (HAProxy reads digits first).
fn connect_port(text: &str, span: &Span) -> ActResult<ConnectPort> {
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return match text.parse::<u32>() {
            Ok(p @ 1..=65535) => Ok(ConnectPort::Num(p as u16)),
            _ => bad(format!("expects a valid TCP port (from range 1 to 65535) or a sample expression, got {text}")),
        };
    }
    Ok(ConnectPort::Expr(ExprSrc { text: text.to_owned(), span: span.clone() }))
}

/// `alpn h2,http/1.1`: the protocol names, each 1 to 255 bytes.
fn alpn_list(text: &str) -> ActResult<Vec<String>> {
    if text.is_empty() {
        return bad("'alpn' : expects a comma-delimited list of protocol names");
    }
    let list: Vec<String> = text.split(',').map(str::to_owned).collect();
    if list.iter().any(|p| p.is_empty() || p.len() > 255) {
        return bad(format!("'alpn' : invalid protocol list '{text}'"));
    }
    Ok(list)
}

/// `proto <name>`: the mux. rampart speaks HTTP/1 to servers.
fn mux_proto(name: &str, list: List) -> ActResult<String> {
    let http = match name {
        "none" | "" => false,
        "h1" | "h2" | "fcgi" => true,
        _ => return bad(format!("'proto' : unknown MUX protocol '{name}'")),
    };
    match (list, http) {
        (List::Tcp, true) => bad(format!("'proto' : invalid MUX protocol '{name}' for tcp-check")),
        (List::Http, false) => bad(format!("'proto' : invalid MUX protocol '{name}' for http-check")),
        (List::Http, true) if name == "fcgi" => later(format!("http-check connect proto {name}")),
        _ => Ok(name.to_owned()),
    }
}

/// `expect [min-recv <n>] [!] <match> <pattern> [options]` (the words after `expect`).
pub(super) fn parse_expect(args: &[String], list: List, span: &Span) -> ActResult<(CheckExpect, Option<String>)> {
    if arg(args, 0).is_empty() {
        return bad("expects at least a matching pattern as arguments");
    }
    let mut p = ExpectParser { list, span, inverse: false, matcher: None, comment: None };
    let mut e = CheckExpect::new(false, ExpectMatch::String(Vec::new()));
    let mut i = 0;
    // a `!` (alone or glued, possibly repeated) applies to the pattern type after it
    let mut bang = false;
    while i < args.len() {
        let mut word = args[i].as_str();
        if word.starts_with('!') {
            let bangs = word.len() - word.trim_start_matches('!').len();
            p.inverse ^= bangs % 2 == 1;
            bang = true;
            word = word.trim_start_matches('!');
            if word.is_empty() {
                i += 1;
                continue;
            }
        }
        if std::mem::take(&mut bang) && !is_pattern_type(word) {
            return bad(format!("[!] not supported with '{word}'"));
        }
        i += p.word(word, args, i, &mut e)?;
    }
    let Some(matcher) = p.matcher else { return bad("pattern not found") };
    e.inverse = p.inverse;
    e.matcher = matcher;
    Ok((e, p.comment))
}

fn is_pattern_type(word: &str) -> bool {
    matches!(
        word,
        "string" | "rstring" | "binary" | "rbinary" | "string-lf" | "binary-lf" | "status" | "rstatus" | "hdr" | "fhdr"
    )
}

struct ExpectParser<'a> {
    list: List,
    span: &'a Span,
    inverse: bool,
    matcher: Option<ExpectMatch>,
    comment: Option<String>,
}

impl ExpectParser<'_> {
    /// Parses the option or pattern at `args[i]`; returns how many words it took.
    fn word(&mut self, word: &str, args: &[String], i: usize, e: &mut CheckExpect) -> ActResult<usize> {
        match word {
            "min-recv" => {
                let v = value(args, i, "a integer")?;
                e.min_recv = match v.parse::<i64>() {
                    Ok(-1) => None,
                    Ok(n @ 0..=0x7fff_ffff) => Some(n as usize),
                    _ => return bad("'min-recv' expects -1 or an integer from 0 to INT_MAX"),
                };
                Ok(2)
            }
            "comment" => {
                self.comment = Some(value(args, i, "a string")?.to_owned());
                Ok(2)
            }
            "on-success" | "on-error" => {
                let fmt = FmtSrc { text: value(args, i, "a string")?.to_owned(), span: self.span.clone() };
                if word == "on-success" {
                    e.on_success = Some(fmt);
                } else {
                    e.on_error = Some(fmt);
                }
                Ok(2)
            }
            "ok-status" | "error-status" | "tout-status" => {
                let st = status_name(word, value(args, i, "a string")?)?;
                match word {
                    "ok-status" => e.ok_status = Some(st),
                    "error-status" => e.err_status = Some(st),
                    _ => e.tout_status = Some(st),
                }
                Ok(2)
            }
            "status-code" => {
                let text = value(args, i, "an expression")?.to_owned();
                e.status_code = Some(ExprSrc { text, span: self.span.clone() });
                Ok(2)
            }
            "custom" => later(format!("{} expect custom", self.list.word())),
            "hdr" | "fhdr" if self.list == List::Http => {
                self.set(|p| p.header(word, args, i))?;
                Ok(header_width(args, i))
            }
            w if is_pattern_type(w) => {
                let pattern = value(args, i, "a <pattern>")?;
                self.set(|p| p.pattern(w, pattern))?;
                Ok(2)
            }
            other => bad(self.unknown(other)),
        }
    }

    /// Records the pattern, refusing a second one.
    fn set(&mut self, f: impl FnOnce(&Self) -> ActResult<ExpectMatch>) -> ActResult<()> {
        if self.matcher.is_some() {
            return bad("only on pattern expected");
        }
        self.matcher = Some(f(self)?);
        Ok(())
    }

    fn pattern(&self, word: &str, pattern: &str) -> ActResult<ExpectMatch> {
        let fmt = || FmtSrc { text: pattern.to_owned(), span: self.span.clone() };
        let raw = || crate::lexer::raw_bytes(pattern.as_bytes()).into_owned();
        Ok(match (word, self.list) {
            ("string", _) => ExpectMatch::String(raw()),
            ("rstring", _) => ExpectMatch::Rstring(pattern.to_owned()),
            ("string-lf", _) => ExpectMatch::StringLf(fmt()),
            ("binary", List::Tcp) => ExpectMatch::Binary(
                parse_hex(pattern).map_err(|m| ActErr::Invalid(format!("invalid binary string ({m})")))?,
            ),
            ("rbinary", List::Tcp) => ExpectMatch::Rbinary(pattern.to_owned()),
            ("binary-lf", List::Tcp) => ExpectMatch::BinaryLf(fmt()),
            ("status", List::Http) => ExpectMatch::Status(parse_codes(pattern)?),
            ("rstatus", List::Http) => ExpectMatch::Rstatus(pattern.to_owned()),
            (other, _) => return bad(self.unknown(other)),
        })
    }

    /// `hdr|fhdr name[-lf] [-m <meth>] <pattern> [value[-lf] [-m <meth>] <pattern>]`.
    fn header(&self, word: &str, args: &[String], i: usize) -> ActResult<ExpectMatch> {
        let kw = arg(args, i + 1);
        if arg(args, i + 2).is_empty() || (kw != "name" && kw != "name-lf") {
            return bad(format!("'{word}' expects at the name keyword as first argument followed by a pattern"));
        }
        let (name, next) = hdr_pattern(word, args, i + 2, kw == "name-lf")?;
        let vkw = arg(args, next);
        let value = if vkw == "value" || vkw == "value-lf" {
            let (v, _) = hdr_pattern(word, args, next + 1, vkw == "value-lf")?;
            if v.text.is_empty() {
                return bad(format!("'{word}' expect a pattern with the value keyword"));
            }
            Some(v)
        } else {
            None
        };
        Ok(ExpectMatch::Header(HdrExpect { full: word == "fhdr", name, value }))
    }

    fn unknown(&self, word: &str) -> String {
        match self.list {
            List::Http => format!(
                "'only supports min-recv, [!]string', '[!]rstring', '[!]string-lf', '[!]status', '[!]rstatus', \
                 [!]hdr, [!]fhdr or comment but got '{word}' as argument"
            ),
            List::Tcp => format!(
                "'only supports min-recv, '[!]binary', '[!]string', '[!]rstring', '[!]string-lf''[!]rbinary', \
                 '[!]binary-lf' or comment but got '{word}' as argument"
            ),
        }
    }
}

/// How many words `hdr name ... [value ...]` at `i` takes.
fn header_width(args: &[String], i: usize) -> usize {
    let after_pattern = |at: usize| if arg(args, at) == "-m" { at + 3 } else { at + 1 };
    let next = after_pattern(i + 2);
    match arg(args, next) {
        "value" | "value-lf" => after_pattern(next + 1) - i,
        _ => next - i,
    }
}

/// `[-m <meth>] <pattern>` at `at`; the pattern and the index after it.
fn hdr_pattern(word: &str, args: &[String], at: usize, lf: bool) -> ActResult<(HdrPattern, usize)> {
    let (how, at) = if arg(args, at) == "-m" {
        let how = match arg(args, at + 1) {
            "str" => HdrMeth::Str,
            "beg" => HdrMeth::Beg,
            "end" => HdrMeth::End,
            "sub" => HdrMeth::Sub,
            "reg" => HdrMeth::Reg,
            "" => {
                return bad(format!(
                    "'{word}' : '-m' expects at a matching pattern ('str', 'beg', 'end', 'sub' or 'reg')"
                ))
            }
            other => {
                return bad(format!(
                    "'{word}' : '-m' only supports 'str', 'beg', 'end', 'sub' or 'reg' (got '{other}')"
                ))
            }
        };
        (how, at + 2)
    } else {
        (HdrMeth::Str, at)
    };
    if lf && how == HdrMeth::Reg {
        return bad(format!("'{word}': log-format string is not supported with a regex matching method"));
    }
    Ok((HdrPattern { how, text: arg(args, at).to_owned(), lf }, at + 1))
}

/// `ok-status`, `error-status`, `tout-status` and the statuses each accepts.
fn status_name(word: &str, text: &str) -> ActResult<CheckStatusName> {
    use CheckStatusName as S;
    let allowed: &[(&str, S)] = match word {
        "ok-status" => &[("L7OK", S::L7Ok), ("L7OKC", S::L7OkC), ("L6OK", S::L6Ok), ("L4OK", S::L4Ok)],
        "error-status" => {
            &[("L7RSP", S::L7Rsp), ("L7STS", S::L7Sts), ("L7OKC", S::L7OkC), ("L6RSP", S::L6Rsp), ("L4CON", S::L4Con)]
        }
        _ => &[("L7TOUT", S::L7Tout), ("L6TOUT", S::L6Tout), ("L4TOUT", S::L4Tout)],
    };
    if let Some((_, s)) = allowed.iter().find(|(n, _)| n.eq_ignore_ascii_case(text)) {
        return Ok(*s);
    }
    let names = match word {
        "ok-status" => "'L4OK', 'L6OK', 'L7OK' or 'L7OKC'",
        "error-status" => "'L4CON', 'L6RSP', 'L7RSP' or 'L7STS'",
        _ => "'L4TOUT', 'L6TOUT' or 'L7TOUT'",
    };
    bad(format!("'{word}' only supports {names} status (got '{text}')"))
}

/// `200`, `200-299`, `200,301-302`: inclusive ranges.
pub(super) fn parse_codes(s: &str) -> ActResult<Vec<(u16, u16)>> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let num = |t: &str| {
            t.parse::<u16>().map_err(|_| {
                let c = t.chars().find(|c| !c.is_ascii_digit()).unwrap_or(',');
                ActErr::Invalid(format!("invalid character '{c}' in the list of status codes"))
            })
        };
        let (lo, hi) = (num(lo)?, num(hi)?);
        if lo > hi {
            return bad(format!("invalid range of status codes '{s}'"));
        }
        out.push((lo, hi));
    }
    Ok(out)
}

/// A hex string (`0a1B...`) as bytes; `Err` is HAProxy's `parse_binary()` message.
pub(super) fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err("an even number of hex digit is expected".into());
    }
    if let Some(c) = text.chars().find(|c| !c.is_ascii_hexdigit()) {
        return Err(format!("an hex digit is expected (found '{c}')"));
    }
    Ok((0..text.len()).step_by(2).filter_map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect())
}

/// `set-var(<var>[,<cond>...]) <expr>`, `set-var-fmt(...) <fmt>`, `unset-var(<var>)`:
/// `words[0]` is the action word.
pub(super) fn parse_var(words: &[String], span: &Span) -> ActResult<VarAction> {
    let mut a = Args::new(words, 1, span);
    let action = super::rule::vars::parse_var_action(arg(words, 0), &mut a)?;
    match arg(words, a.at) {
        "" => Ok(action),
        extra => bad(format!("unexpected argument '{extra}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ExpectMatch as M;

    fn w(s: &str) -> Vec<String> {
        s.split(' ').filter(|x| !x.is_empty()).map(str::to_owned).collect()
    }

    fn expect(s: &str, list: List) -> ActResult<(CheckExpect, Option<String>)> {
        parse_expect(&w(s), list, &Span::default())
    }

    fn err(r: ActResult<impl std::fmt::Debug>) -> String {
        match r.unwrap_err() {
            ActErr::Invalid(m) => m,
            ActErr::NotYet(w) => format!("not yet: {w}"),
        }
    }

    #[test]
    fn expect_options_and_patterns() {
        let (e, c) = expect(
            "min-recv 5 ! rbinary ^1[56] ok-status L6OK error-status l6rsp tout-status L6TOUT comment x",
            List::Tcp,
        )
        .unwrap();
        assert_eq!((e.inverse, e.min_recv, c.as_deref()), (true, Some(5), Some("x")));
        assert_eq!(e.matcher, M::Rbinary("^1[56]".into()));
        assert_eq!(
            (e.ok_status, e.err_status, e.tout_status),
            (Some(CheckStatusName::L6Ok), Some(CheckStatusName::L6Rsp), Some(CheckStatusName::L6Tout))
        );
        let (e, _) =
            expect("!!string x on-success ok on-error %[res.payload(0,4)] status-code int(7)", List::Tcp).unwrap();
        assert!(!e.inverse, "two bangs cancel out");
        assert_eq!(e.on_error.unwrap().text, "%[res.payload(0,4)]");
        assert_eq!(e.status_code.unwrap().text, "int(7)");
        let (e, _) = expect("!status 200-299,404", List::Http).unwrap();
        assert!(e.inverse);
        assert_eq!(e.matcher, M::Status(vec![(200, 299), (404, 404)]));
        assert_eq!(expect("min-recv -1 string-lf %[var(check.x)]", List::Http).unwrap().0.min_recv, None);
    }

    #[test]
    fn header_patterns() {
        let h = |s: &str| match expect(s, List::Http).unwrap().0.matcher {
            M::Header(h) => h,
            other => panic!("{other:?}"),
        };
        let x = h("hdr name x-test1");
        assert_eq!((x.full, x.name.how, x.name.text.as_str(), x.value), (false, HdrMeth::Str, "x-test1", None));
        let x = h("fhdr name -m beg x-test value -m reg ^v[0-9]$ comment c");
        assert!(x.full);
        assert_eq!((x.name.how, x.name.text.as_str()), (HdrMeth::Beg, "x-test"));
        let v = x.value.unwrap();
        assert_eq!((v.how, v.text.as_str(), v.lf), (HdrMeth::Reg, "^v[0-9]$", false));
        let x = h("hdr name-lf -m str %[var(check.n)] value-lf %[var(check.v)]");
        assert!(x.name.lf && x.value.unwrap().lf);
        assert_eq!(expect("hdr name x value y comment c", List::Http).unwrap().1.as_deref(), Some("c"));
    }

    #[test]
    fn expect_errors() {
        assert_eq!(err(expect("", List::Tcp)), "expects at least a matching pattern as arguments");
        assert_eq!(err(expect("string", List::Tcp)), "'string' expects a <pattern> as argument");
        assert_eq!(err(expect("status 200", List::Tcp)).split(" but got").nth(1), Some(" 'status' as argument"));
        assert!(err(expect("binary 00", List::Http)).ends_with("but got 'binary' as argument"));
        assert_eq!(err(expect("string a rstring b", List::Tcp)), "only on pattern expected");
        assert_eq!(err(expect("status 300-200", List::Http)), "invalid range of status codes '300-200'");
        assert_eq!(err(expect("status 2x0", List::Http)), "invalid character 'x' in the list of status codes");
        assert_eq!(err(expect("! min-recv 3 string x", List::Tcp)), "[!] not supported with 'min-recv'");
        assert_eq!(
            err(expect("ok-status L7STS string x", List::Tcp)),
            "'ok-status' only supports 'L4OK', 'L6OK', 'L7OK' or 'L7OKC' status (got 'L7STS')"
        );
        assert_eq!(err(expect("custom", List::Tcp)), "not yet: tcp-check expect custom");
        assert_eq!(
            err(expect("hdr value x", List::Http)),
            "'hdr' expects at the name keyword as first argument followed by a pattern"
        );
        assert_eq!(
            err(expect("hdr name-lf -m reg x", List::Http)),
            "'hdr': log-format string is not supported with a regex matching method"
        );
    }

    #[test]
    fn connect_options() {
        let c = |s: &str, l| parse_connect(&w(s), l, &Span::default());
        let (x, comment) =
            c("default port 8443 addr 10.0.0.1 ssl sni a.b alpn h2,http/1.1 send-proxy linger comment hi", List::Tcp)
                .unwrap();
        assert!(x.default && x.ssl && x.send_proxy && x.linger && !x.via_socks4);
        assert_eq!(
            (x.port, x.addr.as_deref(), x.sni.as_deref()),
            (Some(ConnectPort::Num(8443)), Some("10.0.0.1"), Some("a.b"))
        );
        assert_eq!(x.alpn.unwrap(), ["h2", "http/1.1"]);
        assert_eq!(comment.as_deref(), Some("hi"));
        assert!(matches!(c("port srv_port,add(1)", List::Tcp).unwrap().0.port, Some(ConnectPort::Expr(_))));
        assert_eq!(
            err(c("port 0", List::Tcp)),
            "expects a valid TCP port (from range 1 to 65535) or a sample expression, got 0"
        );
        assert_eq!(err(c("proto h1", List::Tcp)), "'proto' : invalid MUX protocol 'h1' for tcp-check");
        assert_eq!(c("proto h2", List::Http).unwrap().0.proto.as_deref(), Some("h2"));
        assert_eq!(err(c("proto fcgi", List::Http)), "not yet: http-check connect proto fcgi");
        assert_eq!(c("alpn h2", List::Http).unwrap().0.alpn.as_deref(), Some(&["h2".to_owned()][..]));
        assert_eq!(c("proto h1", List::Http).unwrap().0.proto.as_deref(), Some("h1"));
        assert!(err(c("bogus", List::Tcp)).ends_with("but got 'bogus' as argument"));
    }

    #[test]
    fn variable_actions() {
        let v = parse_var(&w("set-var(check.x,ifnotset) str(a) lower"), &Span::default()).unwrap();
        let VarAction::Set { var, conds, expr } = v else { panic!("set") };
        assert_eq!((var.name.as_str(), conds.len(), expr.text.as_str()), ("x", 1, "str(a),lower"));
        assert!(matches!(parse_var(&w("unset-var(check.x)"), &Span::default()).unwrap(), VarAction::Unset(_)));
        assert_eq!(err(parse_var(&w("unset-var(check.x) y"), &Span::default())), "unexpected argument 'y'");
    }
}
