//! Keyword arguments: the `(a,b,...)` after a fetch or converter name, split, unquoted
//! and typed per the keyword's [`ArgSpec`], then names resolved (backends, servers,
//! variables) and regexes compiled. HAProxy counterpart: `make_arg_list()` (src/arg.c)
//! and `smp_resolve_args()` (src/sample.c), whose messages are kept.
//!
//! Quoting inside the parentheses, as HAProxy 2.6: `"..."` and `'...'` protect commas
//! and parentheses; outside single quotes a backslash escapes `\`, space, `"` and `'`,
//! and `\r`, `\n`, `\t` give CR, LF, TAB; any other backslash stays as is.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use super::cast::read_int64;
use super::expr::CompileCx;
use super::kw::{Arg, ArgSpec, ArgT};
use super::vars;

/// Why an argument list was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgError {
    /// A syntax or type error (HAProxy's `make_arg_list` messages); `pos` is the
    /// 0-based argument it is reported at.
    Syntax { pos: usize, msg: String },
    /// A variable name that does not compile (reported as `invalid args in ...`).
    Check(String),
    /// A backend, server or regex that does not resolve: `what` is the start of
    /// HAProxy's message, e.g. `unable to find backend 'x' referenced in arg 1`, which
    /// the compiler completes with the keyword and the place, then `tail` (with its
    /// leading separator).
    Resolve { what: String, tail: &'static str, detail: String },
}

/// Parses the argument list at the start of `text` (which may not start with `(`:
/// then the keyword has no argument list). Returns the arguments and the number of
/// bytes of `text` consumed.
pub fn parse(text: &str, spec: &ArgSpec, cx: &mut CompileCx<'_>) -> Result<(Vec<Arg>, usize), ArgError> {
    let (raw, used) = split(text, spec)?;
    let mut args = Vec::with_capacity(raw.len());
    for (pos, word) in raw.into_iter().enumerate() {
        args.push(resolve(word, spec.types[pos], pos, cx)?);
    }
    Ok((args, used))
}

/// One argument as read: unquoted bytes, already checked for its syntactic type.
struct Raw {
    bytes: Vec<u8>,
}

/// The syntactic pass (HAProxy's `make_arg_list` loop): splits and unquotes, checks
/// numbers and addresses, counts mandatory arguments, requires the closing `)`.
fn split(text: &str, spec: &ArgSpec) -> Result<(Vec<Raw>, usize), ArgError> {
    let b = text.as_bytes();
    let empty = b.first() != Some(&b'(');
    let mut i = usize::from(!empty);
    let end = if empty { 0 } else { b.len() };
    let nbarg = spec.types.len();
    let mut out: Vec<Raw> = Vec::new();
    let mut pos = 0;
    if nbarg > 0 && !(empty && spec.mandatory == 0) {
        while pos < nbarg {
            let (word, next) = read_word(b, i, end);
            i = next;
            let t = spec.types[pos];
            if word.is_empty() && empty_is_missing(t) {
                // HAProxy's `empty_err`: an empty optional argument ends the list.
                if pos >= spec.mandatory {
                    break;
                }
                return Err(ArgError::Syntax {
                    pos,
                    msg: format!("expected type '{}' at position {}, but got nothing", t.name(), pos + 1),
                });
            }
            check_syntax(&word, t, pos)?;
            out.push(Raw { bytes: word });
            pos += 1;
            if i >= end || b[i] == b')' || pos >= nbarg {
                break;
            }
            i += 1; // the comma
        }
    }
    if pos < spec.mandatory {
        return Err(ArgError::Syntax {
            pos,
            msg: format!(
                "missing arguments (got {}/{}), type '{}' expected",
                pos,
                spec.mandatory,
                spec.types[pos].name()
            ),
        });
    }
    if !empty {
        if i < end && b[i] == b')' {
            i += 1;
        } else {
            let rest = &text[i.min(text.len())..];
            let msg = if rest.is_empty() { "expected ')'".to_owned() } else { format!("expected ')' before '{rest}'") };
            return Err(ArgError::Syntax { pos: if pos > 1 { pos - 1 } else { pos }, msg });
        }
    }
    Ok((out, if empty { 0 } else { i }))
}

/// Whether an empty argument of this type is "nothing" (numbers and addresses) rather
/// than an empty string (names are resolved later: an empty backend is the proxy
/// itself, an empty server name an error).
fn empty_is_missing(t: ArgT) -> bool {
    matches!(t, ArgT::Sint | ArgT::Ipv4 | ArgT::Ipv6 | ArgT::Msk4 | ArgT::Msk6 | ArgT::Time | ArgT::Size)
}

/// Reads one argument from `b[i..end]` up to an unquoted `,` or `)`; returns its
/// unquoted bytes and the index of the delimiter (or `end`).
fn read_word(b: &[u8], mut i: usize, end: usize) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let (mut sq, mut dq) = (false, false);
    while i < end && b[i] != 0 {
        let c = b[i];
        if c == b'"' && !sq {
            dq = !dq;
        } else if c == b'\'' && !dq {
            sq = !sq;
        } else if c == b'\\' && !sq && i + 1 < end {
            let n = b[i + 1];
            let esc = match n {
                b'\\' | b' ' | b'"' | b'\'' => Some(n),
                b'r' => Some(b'\r'),
                b'n' => Some(b'\n'),
                b't' => Some(b'\t'),
                _ => None,
            };
            match esc {
                Some(e) => {
                    out.push(e);
                    i += 1;
                }
                None => out.push(c),
            }
        } else if !sq && !dq && (c == b',' || c == b')') {
            break;
        } else {
            out.push(c);
        }
        i += 1;
    }
    (out, i)
}

fn parse_err(word: &[u8], t: ArgT, pos: usize) -> ArgError {
    ArgError::Syntax {
        pos,
        msg: format!(
            "failed to parse '{}' as type '{}' at position {}",
            String::from_utf8_lossy(word),
            t.name(),
            pos + 1
        ),
    }
}

/// Checks the syntax of the immediately typed arguments (numbers, addresses).
fn check_syntax(word: &[u8], t: ArgT, pos: usize) -> Result<(), ArgError> {
    let ok = match t {
        ArgT::Sint => read_int64(word).1 == word.len(),
        ArgT::Ipv4 => parse_ipv4(word).is_some(),
        ArgT::Ipv6 => parse_ipv6(word).is_some(),
        ArgT::Msk4 => parse_msk4(word).is_some(),
        ArgT::Msk6 => parse_msk6(word).is_some(),
        ArgT::Time => parse_time(word).is_some(),
        ArgT::Size => parse_size(word).is_some(),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(parse_err(word, t, pos))
    }
}

/// Turns a syntactically valid argument into its compiled form.
fn resolve(raw: Raw, t: ArgT, pos: usize, cx: &mut CompileCx<'_>) -> Result<Arg, ArgError> {
    let w = raw.bytes;
    Ok(match t {
        ArgT::Sint => Arg::Sint(read_int64(&w).0),
        ArgT::Ipv4 => Arg::Ipv4(parse_ipv4(&w).unwrap_or(Ipv4Addr::UNSPECIFIED)),
        ArgT::Ipv6 => Arg::Ipv6(parse_ipv6(&w).unwrap_or(Ipv6Addr::UNSPECIFIED)),
        ArgT::Msk4 => Arg::Ipv4(parse_msk4(&w).unwrap_or(Ipv4Addr::UNSPECIFIED)),
        ArgT::Msk6 => Arg::Ipv6(parse_msk6(&w).unwrap_or(Ipv6Addr::UNSPECIFIED)),
        ArgT::Time => Arg::Sint(parse_time(&w).unwrap_or(0)),
        ArgT::Size => Arg::Sint(parse_size(&w).unwrap_or(0)),
        // the bytes a `\xHH` escape wrote (rampart_cfg keeps them as private-use chars)
        ArgT::Table => resolve_table(&w, pos, cx)?,
        ArgT::Str | ArgT::Map => Arg::Str(rampart_cfg::lexer::raw_bytes(&w).into_owned().into()),
        ArgT::Var => Arg::Var(vars::parse_name(&w).map_err(ArgError::Check)?),
        ArgT::Regex => resolve_regex(&w, pos)?,
        ArgT::Frontend | ArgT::Backend => resolve_proxy(&w, t, pos, cx)?,
        ArgT::Server => resolve_server(&w, pos, cx)?,
        ArgT::Usr => resolve_userlist(&w, pos, cx)?,
    })
}

fn resolve_regex(w: &[u8], pos: usize) -> Result<Arg, ArgError> {
    let text = String::from_utf8_lossy(w);
    if w.is_empty() {
        return Err(resolve_err(format!("missing regex in arg {}", pos + 1)));
    }
    match regex::bytes::Regex::new(&text) {
        Ok(re) => Ok(Arg::Regex(Arc::new(re))),
        Err(e) => Err(ArgError::Resolve {
            what: format!("error in regex '{text}' in arg {}", pos + 1),
            tail: " : ",
            detail: format!("regex '{text}' is invalid ({})", one_line(&e.to_string())),
        }),
    }
}

/// The regex crate's multi-line error on one line.
fn one_line(s: &str) -> String {
    s.split('\n').map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('^')).collect::<Vec<_>>().join(" ")
}

fn resolve_proxy(w: &[u8], t: ArgT, pos: usize, cx: &mut CompileCx<'_>) -> Result<Arg, ArgError> {
    let name = String::from_utf8_lossy(w);
    let (idx, pname) = if w.is_empty() {
        (Some(cx.px), cx.px_name().to_owned())
    } else {
        let want_fe = t == ArgT::Frontend;
        let found =
            cx.cfg.proxies.iter().position(|p| p.name == name && if want_fe { p.cap.frontend } else { p.cap.backend });
        (found, name.clone().into_owned())
    };
    let kind = if t == ArgT::Frontend { "frontend" } else { "backend" };
    let Some(idx) = idx else {
        return Err(resolve_err(format!("unable to find {kind} '{pname}' referenced in arg {}", pos + 1)));
    };
    let cap = cx.cfg.proxies.get(idx).map(|p| if t == ArgT::Frontend { p.cap.frontend } else { p.cap.backend });
    if cap != Some(true) {
        return Err(ArgError::Resolve {
            what: format!("proxy '{pname}', referenced in arg {}", pos + 1),
            tail: ", ",
            detail: format!("has not {kind} capability"),
        });
    }
    Ok(Arg::Proxy(idx))
}

/// A stick table, named after the proxy declaring it; empty: the expression's own
/// proxy's. Resolved to that proxy ([`Arg::Proxy`]).
fn resolve_table(w: &[u8], pos: usize, cx: &mut CompileCx<'_>) -> Result<Arg, ArgError> {
    let name = String::from_utf8_lossy(w);
    if w.is_empty() {
        return match cx.cfg.proxies.get(cx.px).filter(|p| p.stick_table.is_some()) {
            Some(_) => Ok(Arg::Proxy(cx.px)),
            None => Err(resolve_err(format!("no table in proxy '{}' referenced in arg {}", cx.px_name(), pos + 1))),
        };
    }
    match cx.cfg.find_table(&name) {
        Some(i) => Ok(Arg::Proxy(i)),
        None => Err(resolve_err(format!("unable to find table '{name}' referenced in arg {}", pos + 1))),
    }
}

fn resolve_server(w: &[u8], pos: usize, cx: &mut CompileCx<'_>) -> Result<Arg, ArgError> {
    let text = String::from_utf8_lossy(w);
    if w.is_empty() {
        return Err(resolve_err(format!("missing server name in arg {}", pos + 1)));
    }
    let (px, pname, sname) = match text.rfind('/') {
        Some(n) => {
            let pname = &text[..n];
            let Some(px) = cx.cfg.find_backend(pname) else {
                return Err(resolve_err(format!("unable to find proxy '{pname}' referenced in arg {}", pos + 1)));
            };
            (px, pname.to_owned(), &text[n + 1..])
        }
        None if cx.in_defaults => {
            return Err(resolve_err(format!("backend name must be set in arg {}", pos + 1)));
        }
        None => (cx.px, cx.px_name().to_owned(), &text[..]),
    };
    let srv = cx.cfg.proxies.get(px).and_then(|p| p.servers.iter().position(|s| s.name == sname));
    match srv {
        Some(s) => {
            cx.named_servers.push((px, s));
            Ok(Arg::Server(px, s))
        }
        None => Err(resolve_err(format!(
            "unable to find server '{sname}' in proxy '{pname}', referenced in arg {}",
            pos + 1
        ))),
    }
}

/// A `userlist` name (HAProxy's `ARGT_USR` in `smp_resolve_args()`).
fn resolve_userlist(w: &[u8], pos: usize, cx: &mut CompileCx<'_>) -> Result<Arg, ArgError> {
    if w.is_empty() {
        return Err(resolve_err(format!("missing userlist name in arg {}", pos + 1)));
    }
    let name = String::from_utf8_lossy(w);
    match cx.userlists.find(cx.cfg, &name) {
        Some(ul) => Ok(Arg::Userlist(ul)),
        None => Err(resolve_err(format!("unable to find userlist '{name}' referenced in arg {}", pos + 1))),
    }
}

fn resolve_err(what: String) -> ArgError {
    ArgError::Resolve { what, tail: "", detail: String::new() }
}

// === typed values ===

/// `inet_pton(AF_INET)`: exactly four decimal octets.
fn parse_ipv4(w: &[u8]) -> Option<Ipv4Addr> {
    let s = std::str::from_utf8(w).ok()?;
    let mut oct = [0u8; 4];
    let mut parts = s.split('.');
    for o in &mut oct {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|c| c.is_ascii_digit()) || (p.len() > 1 && p.starts_with('0'))
        {
            return None;
        }
        *o = p.parse().ok()?;
    }
    parts.next().is_none().then(|| Ipv4Addr::from(oct))
}

fn parse_ipv6(w: &[u8]) -> Option<Ipv6Addr> {
    std::str::from_utf8(w).ok()?.parse().ok()
}

/// A prefix length as HAProxy's `strtol` check: digits only, at most `max`.
fn prefix_len(w: &[u8], max: u32) -> Option<u32> {
    if w.is_empty() || !w.iter().all(|c| c.is_ascii_digit()) || w.len() > 3 {
        return None;
    }
    let n: u32 = std::str::from_utf8(w).ok()?.parse().ok()?;
    (n <= max).then_some(n)
}

/// An IPv4 mask: dotted (any bits) or a prefix length.
pub fn parse_msk4(w: &[u8]) -> Option<Ipv4Addr> {
    if w.contains(&b'.') {
        return parse_ipv4(w);
    }
    let n = prefix_len(w, 32)?;
    Some(Ipv4Addr::from(if n == 0 { 0 } else { u32::MAX << (32 - n) }))
}

/// An IPv6 mask: colon notation or a prefix length.
pub fn parse_msk6(w: &[u8]) -> Option<Ipv6Addr> {
    if w.contains(&b':') {
        return parse_ipv6(w);
    }
    let n = prefix_len(w, 128)?;
    Some(Ipv6Addr::from(if n == 0 { 0 } else { u128::MAX << (128 - n) }))
}

/// HAProxy's `parse_time_err` in milliseconds: digits then `us|ms|s|m|h|d`
/// (milliseconds without unit), rounded up, below 2^31 ms.
pub fn parse_time(w: &[u8]) -> Option<i64> {
    let digits = w.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let v = w[..digits].iter().try_fold(0u128, |a, &d| a.checked_mul(10)?.checked_add(u128::from(d - b'0')))?;
    let us: u128 = match &w[digits..] {
        b"" | b"ms" => 1000,
        b"us" => 1,
        b"s" => 1_000_000,
        b"m" => 60_000_000,
        b"h" => 3_600_000_000,
        b"d" => 86_400_000_000,
        _ => return None,
    };
    let ms = v.checked_mul(us)?.div_ceil(1000);
    if ms >= 1 << 31 || (ms == 0 && v != 0) {
        return None;
    }
    i64::try_from(ms).ok()
}

/// HAProxy's `parse_size_err`: digits then an optional `k`, `m` or `g` (powers of
/// 1024), fitting 32 bits.
pub fn parse_size(w: &[u8]) -> Option<i64> {
    let digits = w.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let v = w[..digits].iter().try_fold(0u64, |a, &d| a.checked_mul(10)?.checked_add(u64::from(d - b'0')))?;
    let mult: u64 = match &w[digits..] {
        b"" => 1,
        b"k" | b"K" => 1 << 10,
        b"m" | b"M" => 1 << 20,
        b"g" | b"G" => 1 << 30,
        _ => return None,
    };
    let n = v.checked_mul(mult)?;
    (n <= u64::from(u32::MAX)).then_some(n as i64)
}
