//! The argument list of a condition predicate, `(a,b)`: commas separate arguments,
//! quotes protect commas and parentheses, a backslash escapes `\`, a blank and quotes and
//! gives `\r`, `\n`, `\t`. HAProxy counterpart: `make_arg_list()` in src/arg.c, reduced to
//! the string arguments every predicate takes; its messages are kept since `-cc` prints
//! them.

/// The decoded-argument buffer HAProxy uses is `tune.bufsize` (16384) bytes including
/// the final NUL.
const ARG_BUF_MAX: usize = 16383;

/// A failure, with the argument number HAProxy reports and where it stopped.
#[derive(Debug)]
pub(super) struct ArgError {
    pub message: String,
    pub arg: usize,
    pub end: usize,
}

/// Parses the `nargs` string arguments of a predicate from offset `start` of `s` (just after
/// the predicate's name). Returns the arguments and the offset after the closing `)`.
///
/// Without a `(` the predicate gets one empty argument: `defined` is `defined()`.
pub(super) fn parse_args(s: &[u8], start: usize, nargs: usize) -> Result<(Vec<Vec<u8>>, usize), ArgError> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut i = start;
    let bare = at(i) != b'(';
    if !bare {
        i += 1;
    }
    let mut args = Vec::new();
    loop {
        let pos = args.len();
        let mut out = Vec::new();
        if !bare {
            i = decode_arg(s, i, &mut out).map_err(|end| ArgError {
                message: format!(
                    "failed to parse '{}' after '{}' as type 'string' at position {}",
                    lossy(&s[end.min(s.len())..]),
                    lossy(&out),
                    pos + 1
                ),
                arg: pos,
                end,
            })?;
            if !matches!(at(i), 0 | b',' | b')') {
                return Err(ArgError {
                    message: format!("too small buffer size to store decoded argument {}, increase bufsize ?", pos + 1),
                    arg: pos,
                    end: i,
                });
            }
        }
        args.push(out);
        if bare || matches!(at(i), 0 | b')') || args.len() >= nargs {
            break;
        }
        i += 1;
    }
    let pos = args.len();
    if pos < nargs {
        let message = format!("missing arguments (got {pos}/{nargs}), type 'string' expected");
        return Err(ArgError { message, arg: pos, end: i });
    }
    if !bare {
        if at(i) != b')' {
            let rest = lossy(&s[i.min(s.len())..]);
            let message =
                if rest.is_empty() { "expected ')'".to_owned() } else { format!("expected ')' before '{rest}'") };
            // HAProxy counts the argument before the missing `)` once too many.
            let arg = if pos > 1 { pos - 1 } else { pos };
            return Err(ArgError { message, arg, end: i });
        }
        i += 1;
    }
    Ok((args, i))
}

/// Decodes one argument starting at `i` into `out`, stopping at an unquoted `,` or `)`, the
/// end, or a full buffer. Returns where it stopped, or `Err(offset)` of a backslash that
/// ends the text.
fn decode_arg(s: &[u8], mut i: usize, out: &mut Vec<u8>) -> Result<usize, usize> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let (mut squote, mut dquote) = (false, false);
    while at(i) != 0 && out.len() < ARG_BUF_MAX {
        let c = at(i);
        match c {
            b'"' if !squote => dquote = !dquote,
            b'\'' if !dquote => squote = !squote,
            b'\\' if !squote => {
                let (byte, len) = match at(i + 1) {
                    0 => return Err(i),
                    n @ (b'\\' | b' ' | b'"' | b'\'') => (n, 2),
                    b'r' => (b'\r', 2),
                    b'n' => (b'\n', 2),
                    b't' => (b'\t', 2),
                    _ => (b'\\', 1),
                };
                out.push(byte);
                i += len;
                continue;
            }
            b',' | b')' if !squote && !dquote => break,
            _ => out.push(c),
        }
        i += 1;
    }
    Ok(i)
}

pub(super) fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str, n: usize) -> (Vec<String>, usize) {
        match parse_args(s.as_bytes(), 0, n) {
            Ok((args, end)) => (args.iter().map(|a| lossy(a)).collect(), end),
            Err(e) => panic!("{s}: {}", e.message),
        }
    }

    fn err(s: &str, n: usize) -> (String, usize, usize) {
        match parse_args(s.as_bytes(), 0, n) {
            Ok(_) => panic!("{s} parsed"),
            Err(e) => (e.message, e.arg, e.end),
        }
    }

    #[test]
    fn arguments_are_split_on_commas_outside_quotes() {
        assert_eq!(ok("(a b,c)", 2), (vec!["a b".to_owned(), "c".to_owned()], 7));
        assert_eq!(ok(r#"("a,b",'c)d')x"#, 2), (vec!["a,b".to_owned(), "c)d".to_owned()], 13));
        assert_eq!(ok(r"(a\\b\ \n\q)", 1).0, ["a\\b \n\\q"]);
        assert_eq!(err(r"(a\,b)", 1).0, r"expected ')' before ',b)'", "an unknown escape keeps the backslash");
        assert_eq!(ok("()", 1).0, [""]);
        assert_eq!(ok(" (x)", 1), (vec![String::new()], 0), "no '(': one empty argument");
    }

    #[test]
    fn errors_are_worded_as_haproxy_words_them() {
        assert_eq!(err("(a)", 2), ("missing arguments (got 1/2), type 'string' expected".to_owned(), 1, 2));
        assert_eq!(err("(a,b,c)", 2), ("expected ')' before ',c)'".to_owned(), 1, 4));
        assert_eq!(err("(a", 1), ("expected ')'".to_owned(), 1, 2));
        assert_eq!(err(r"(a\", 1), (r"failed to parse '\' after 'a' as type 'string' at position 1".to_owned(), 0, 2));
    }

    #[test]
    fn an_argument_larger_than_the_buffer_is_refused() {
        let long = format!("({})", "x".repeat(ARG_BUF_MAX));
        assert_eq!(ok(&long, 1).0[0].len(), ARG_BUF_MAX);
        let longer = format!("({})", "x".repeat(ARG_BUF_MAX + 1));
        assert_eq!(err(&longer, 1).0, "too small buffer size to store decoded argument 1, increase bufsize ?");
    }
}
