//! Conditions of `.if`/`.elif` and of the `-cc` command-line flag. HAProxy counterpart:
//! src/cfgcond.c (grammar, messages and depth limit follow it).
//!
//! ```text
//! expr = and [ "||" expr ]        and  = term [ "&&" and ]
//! term = "!"* ( number | "(" expr ")" | predicate [ "(" args ")" ] )
//! ```
//! A number is read like C's `strtol(.., 0)` (`0x10`, `010`, `-1`) and is true when not
//! zero; there is no `true`/`false`. Predicates: `defined(NAME)`, `feature(NAME)`,
//! `streq(A,B)`, `strneq(A,B)`, `version_atleast(V)`, `version_before(V)`, and the OpenSSL
//! ones, which rampart (built on rustls) cannot answer: `openssl_version_atleast/before()`
//! are errors and `ssllib_name_startswith()` is false, as in an HAProxy built without
//! OpenSSL. An empty condition is false.
//!
//! The `.if` line is split into words by the lexer first (quotes, escapes and `"${VAR}"`
//! are resolved there) and the words are joined with single spaces before parsing here.
//! What does not belong here: the `.if` block nesting (see `lexer`).
//!
//! [`LexCtx`], what the lexer and the conditions read from outside, is defined here so
//! that the lexer depends on this module and not the other way round.

mod args;
mod version_cmp;

use crate::words::{self, Place, SplitError};
use args::lossy;

/// What the lexer and the condition evaluator need from outside.
pub struct LexCtx<'a> {
    /// Environment lookup for `${VAR}`.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The HAProxy version whose behaviour rampart follows, for `version_atleast()`.
    pub version: &'a str,
    /// Feature names (without `+`) for `feature()`.
    pub features: &'a [&'a str],
}

/// Nesting budget of the parser (HAProxy's `MAX_CFG_RECURSION`): every `&&`, `||` and
/// parenthesis spends some of it.
const MAX_RECURSION: i32 = 1024;

/// Evaluates a condition given as the words after `.if`. `Err` is HAProxy's message for a
/// condition that does not parse (e.g. `unparsable conditional expression 'foo'`).
pub fn eval_words(words: &[String], ctx: &LexCtx<'_>) -> Result<bool, String> {
    let joined = words.join(" ").replace('\0', " ");
    eval_expr(joined.as_bytes(), ctx).map_err(|e| e.message)
}

/// Evaluates a condition given as one string, as `-cc` does: the string is split into words
/// (quotes, escapes and `"${VAR}"` as in a configuration line, but `#` is not a comment),
/// then the words are joined back. `Err` is the whole alert text HAProxy prints, e.g.
/// `Failed to evaluate condition: unparsable conditional expression 'foo'`; `-cc` then
/// exits with status 2.
///
/// COMPAT: `haproxy -cc` expands variables in place in its argument, so a value longer than
/// the `"${NAME}"` that names it overwrites the text still to be read (typically ending in
/// "Unmatched quote"); rampart expands correctly. Where HAProxy prints only "Unhandled error
/// in condition" (bad variable name, brace or `[*]`), rampart names the problem.
pub fn eval_str(expr: &str, ctx: &LexCtx<'_>) -> Result<bool, String> {
    let place = Place { line: 0, file: None, section: None };
    let words = match words::split(expr.as_bytes(), false, &place, ctx.env) {
        Ok(w) => w,
        Err((e, w)) => return Err(split_error_message(e, w.too_many)),
    };
    if words.too_many {
        return Err("Error in condition: Too many words.".to_owned());
    }
    eval_expr(&words.joined_from(0), ctx).map_err(|e| format!("Failed to evaluate condition: {}", e.message))
}

/// The `-cc` message for a line that does not split into words, checked in HAProxy's order.
fn split_error_message(e: SplitError, too_many: bool) -> String {
    match e {
        SplitError::Quote(_) => "Syntax Error in condition: Unmatched quote.".to_owned(),
        SplitError::Hex(_) => "Syntax Error in condition: Truncated or invalid hexadecimal sequence.".to_owned(),
        _ if too_many => "Error in condition: Too many words.".to_owned(),
        SplitError::Brace(_) => "Syntax Error in condition: unmatched brace in environment variable name.".to_owned(),
        SplitError::VarName(_) | SplitError::PseudoVar(_) => {
            "Syntax Error in condition: forbidden first char in environment variable name.".to_owned()
        }
        SplitError::Expand(_) => "Syntax Error in condition: truncated or invalid word expansion sequence.".to_owned(),
    }
}

/// A condition that does not parse or cannot be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CondError {
    pub message: String,
    /// Byte offset in the expression where the problem was found.
    pub pos: usize,
}

/// Parses and evaluates an expression (the joined words).
pub(crate) fn eval_expr(expr: &[u8], ctx: &LexCtx<'_>) -> Result<bool, CondError> {
    let end = expr.iter().position(|&b| b == 0).unwrap_or(expr.len());
    let p = Parser { s: &expr[..end] };
    if p.s.is_empty() {
        return Ok(false);
    }
    let whole = lossy(p.s);
    match p.parse_expr(0, MAX_RECURSION)? {
        Parsed::Empty(pos) => Err(CondError { message: format!("unparsable conditional expression '{whole}'"), pos }),
        Parsed::Done(expr, pos) => {
            let pos = p.skip_blanks(pos);
            if pos < p.s.len() {
                let c = char::from(p.s[pos]);
                let message = format!("unexpected character '{c}' at the end of conditional expression '{whole}'");
                return Err(CondError { message, pos });
            }
            eval_or(&expr, ctx)
        }
    }
}

// === parsing ===

/// An OR of ANDs of terms.
type Expr = Vec<Vec<Term>>;

struct Term {
    negated: bool,
    kind: TermKind,
    /// Where the term starts, for evaluation errors.
    pos: usize,
}

enum TermKind {
    Number(bool),
    Paren(Expr),
    Pred(Pred, Vec<Vec<u8>>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pred {
    Defined,
    Feature,
    Streq,
    Strneq,
    VersionAtleast,
    VersionBefore,
    OpensslVersionAtleast,
    OpensslVersionBefore,
    SsllibNameStartswith,
}

const PREDICATES: &[(&str, Pred, usize)] = &[
    ("defined", Pred::Defined, 1),
    ("feature", Pred::Feature, 1),
    ("streq", Pred::Streq, 2),
    ("strneq", Pred::Strneq, 2),
    ("version_atleast", Pred::VersionAtleast, 1),
    ("version_before", Pred::VersionBefore, 1),
    ("openssl_version_atleast", Pred::OpensslVersionAtleast, 1),
    ("openssl_version_before", Pred::OpensslVersionBefore, 1),
    ("ssllib_name_startswith", Pred::SsllibNameStartswith, 1),
];

/// What a parse step produced: a node and the offset after it, or nothing because the text
/// was empty (HAProxy's "desynchronized" 0), with the offset its caller must report.
enum Parsed<T> {
    Done(T, usize),
    Empty(usize),
}

struct Parser<'e> {
    s: &'e [u8],
}

impl Parser<'_> {
    fn at(&self, i: usize) -> u8 {
        self.s.get(i).copied().unwrap_or(0)
    }

    /// Skips spaces and tabs (not other blanks, as HAProxy).
    fn skip_blanks(&self, mut i: usize) -> usize {
        while matches!(self.at(i), b' ' | b'\t') {
            i += 1;
        }
        i
    }

    fn rest(&self, i: usize) -> String {
        lossy(self.s.get(i..).unwrap_or_default())
    }

    fn error(&self, message: String, pos: usize) -> CondError {
        CondError { message, pos }
    }

    /// `and [ "||" and ]...`. Each `||` spends one level of `depth`, as HAProxy's right
    /// recursion does. When the text after a `||` is empty, the whole chain is `Empty` at
    /// the first `||`.
    fn parse_expr(&self, mut text: usize, depth: i32) -> Result<Parsed<Expr>, CondError> {
        let mut ands = Vec::new();
        let mut first_end = text;
        for k in 0.. {
            if self.at(text) == 0 {
                return Ok(Parsed::Empty(if k == 0 { text } else { first_end }));
            }
            if depth - k <= 0 {
                return Err(self.error(format!("unparsable conditional expression '{}'", self.rest(text)), text));
            }
            let (and, end) = match self.parse_and(text, depth - k - 1)? {
                Parsed::Done(and, end) => (and, end),
                Parsed::Empty(at) => {
                    return Err(self.error(format!("unparsable conditional expression '{}'", self.rest(at)), at));
                }
            };
            ands.push(and);
            let end = self.skip_blanks(end);
            if k == 0 {
                first_end = end;
            }
            if !self.s[end..].starts_with(b"||") {
                return Ok(Parsed::Done(ands, end));
            }
            text = self.skip_blanks(end + 2);
        }
        Ok(Parsed::Empty(first_end))
    }

    /// `term [ "&&" term ]...`, spending one level of `depth` per `&&`.
    fn parse_and(&self, mut text: usize, depth: i32) -> Result<Parsed<Vec<Term>>, CondError> {
        let mut terms = Vec::new();
        let mut first_end = text;
        for k in 0.. {
            if self.at(text) == 0 {
                return Ok(Parsed::Empty(if k == 0 { text } else { first_end }));
            }
            let sub_expression_error =
                || self.error(format!("unparsable conditional sub-expression '{}'", self.rest(text)), text);
            if depth - k <= 0 {
                return Err(sub_expression_error());
            }
            let (term, end) = match self.parse_term(text, depth - k - 1)? {
                Parsed::Done(term, end) => (term, end),
                Parsed::Empty(_) => return Err(sub_expression_error()),
            };
            terms.push(term);
            let end = self.skip_blanks(end);
            if k == 0 {
                first_end = end;
            }
            if !self.s[end..].starts_with(b"&&") {
                return Ok(Parsed::Done(terms, end));
            }
            text = self.skip_blanks(end + 2);
        }
        Ok(Parsed::Empty(first_end))
    }

    /// `"!"* ( number | "(" expr ")" | predicate )`. Errors quote the text from `text`.
    fn parse_term(&self, text: usize, depth: i32) -> Result<Parsed<Term>, CondError> {
        let unparsable = || self.error(format!("unparsable conditional expression '{}'", self.rest(text)), text);
        let mut i = self.skip_blanks(text);
        if self.at(i) == 0 {
            return Ok(Parsed::Empty(text));
        }
        if depth <= 0 {
            return Err(unparsable());
        }
        let mut negated = false;
        while self.at(i) == b'!' {
            negated = !negated;
            i = self.skip_blanks(i + 1);
        }
        let pos = i;
        let term = |kind, end| Ok(Parsed::Done(Term { negated, kind, pos }, end));
        if let Some((nonzero, end)) = strtol_any_base(self.s, i) {
            return term(TermKind::Number(nonzero), end);
        }
        if self.at(i) == b'(' {
            let (expr, end) = match self.parse_expr(self.skip_blanks(i + 1), depth - 1)? {
                Parsed::Done(expr, end) => (expr, self.skip_blanks(end)),
                Parsed::Empty(_) => return Err(unparsable()),
            };
            if self.at(end) != b')' {
                let message = format!("expected ')' after conditional expression '{}'", self.rest(text));
                return Err(self.error(message, text));
            }
            return term(TermKind::Paren(expr), self.skip_blanks(end + 1));
        }
        let word_len = self.s[i..].iter().position(|&b| b == b' ' || b == b'(').unwrap_or(self.s.len() - i);
        let word = &self.s[i..i + word_len];
        let Some(&(name, pred, nargs)) = PREDICATES.iter().find(|(name, ..)| name.as_bytes() == word) else {
            return Err(unparsable());
        };
        match args::parse_args(self.s, i + word_len, nargs) {
            Ok((args, end)) => term(TermKind::Pred(pred, args), end),
            Err(e) => {
                let message =
                    format!("{} in argument {} of predicate '{name}' used in conditional expression", e.message, e.arg);
                Err(self.error(message, e.end))
            }
        }
    }
}

/// C's `strtol(s + from, &end, 0)` as a condition term uses it: `None` when no number is
/// there, else whether it is non-zero and where it ends. Accepts leading blanks, a sign,
/// `0x` hexadecimal and `0` octal; an overflowing number is non-zero.
fn strtol_any_base(s: &[u8], from: usize) -> Option<(bool, usize)> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut i = from;
    while words::is_space(at(i)) {
        i += 1;
    }
    if matches!(at(i), b'+' | b'-') {
        i += 1;
    }
    let radix = if at(i) == b'0' && matches!(at(i + 1), b'x' | b'X') && at(i + 2).is_ascii_hexdigit() {
        i += 2;
        16
    } else if at(i) == b'0' {
        8
    } else {
        10
    };
    let start = i;
    let mut nonzero = false;
    while char::from(at(i)).is_digit(radix) {
        nonzero |= at(i) != b'0';
        i += 1;
    }
    (i > start).then_some((nonzero, i))
}

// === evaluation ===

/// True at the first true AND group; stops at an error.
fn eval_or(expr: &Expr, ctx: &LexCtx<'_>) -> Result<bool, CondError> {
    for and in expr {
        if eval_and(and, ctx)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// False at the first false term; stops at an error.
fn eval_and(terms: &[Term], ctx: &LexCtx<'_>) -> Result<bool, CondError> {
    for term in terms {
        if !eval_term(term, ctx)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn eval_term(term: &Term, ctx: &LexCtx<'_>) -> Result<bool, CondError> {
    let value = match &term.kind {
        TermKind::Number(nonzero) => *nonzero,
        TermKind::Paren(expr) => eval_or(expr, ctx)?,
        TermKind::Pred(pred, args) => {
            eval_pred(*pred, args, ctx).map_err(|message| CondError { message, pos: term.pos })?
        }
    };
    Ok(value != term.negated)
}

fn eval_pred(pred: Pred, args: &[Vec<u8>], ctx: &LexCtx<'_>) -> Result<bool, String> {
    let arg = |i: usize| args.get(i).map(Vec::as_slice).unwrap_or_default();
    Ok(match pred {
        Pred::Defined => is_defined(arg(0), ctx),
        Pred::Feature => has_feature(ctx.features, arg(0)),
        Pred::Streq => arg(0) == arg(1),
        Pred::Strneq => arg(0) != arg(1),
        Pred::VersionAtleast => version_cmp::at_least(ctx.version, arg(0)),
        Pred::VersionBefore => version_cmp::before(ctx.version, arg(0)),
        Pred::OpensslVersionAtleast | Pred::OpensslVersionBefore => {
            // COMPAT: an HAProxy built without OpenSSL fails these too (with no message).
            return Err("OpenSSL version predicates cannot be evaluated: rampart uses rustls, not OpenSSL".to_owned());
        }
        Pred::SsllibNameStartswith => false,
    })
}

/// `defined()`: whether the environment has the variable. A name the environment cannot
/// hold (empty, with `=` or NUL, not UTF-8) is never defined.
fn is_defined(name: &[u8], ctx: &LexCtx<'_>) -> bool {
    match std::str::from_utf8(name) {
        Ok(name) if !name.is_empty() && !name.contains(['=', '\0']) => (ctx.env)(name).is_some(),
        _ => false,
    }
}

/// `feature()`: looks `name` up in the feature list written as `-vv` shows it (`+EPOLL
/// +POLL ...`) the way HAProxy does, so a name followed by a blank and another `+NAME`
/// still matches, and a sub-word (`POLL` in `+EPOLL`) does not.
fn has_feature(features: &[&str], name: &[u8]) -> bool {
    if name.is_empty() {
        return false;
    }
    let list = features.iter().map(|f| format!("+{f}")).collect::<Vec<_>>().join(" ").into_bytes();
    let mut from = 0;
    while let Some(off) = list.get(from..).and_then(|hay| hay.windows(name.len()).position(|w| w == name)) {
        let p = from + off;
        let after = list.get(p + name.len()).copied().unwrap_or(b' ');
        if p > 0 && after == b' ' {
            match list[p - 1] {
                b'+' => return true,
                b'-' => return false,
                _ => {}
            }
        }
        from = p + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_strtol_base_zero() {
        assert_eq!(strtol_any_base(b"1", 0), Some((true, 1)));
        assert_eq!(strtol_any_base(b" -0 ", 0), Some((false, 3)));
        assert_eq!(strtol_any_base(b"0x10", 0), Some((true, 4)));
        assert_eq!(strtol_any_base(b"0x", 0), Some((false, 1)), "0x without digits is 0 then 'x'");
        assert_eq!(strtol_any_base(b"08", 0), Some((false, 1)), "octal stops at 8");
        assert_eq!(strtol_any_base(b"99999999999999999999999", 0).map(|r| r.0), Some(true));
        assert_eq!(strtol_any_base(b"+", 0), None);
        assert_eq!(strtol_any_base(b"true", 0), None);
    }

    #[test]
    fn features_match_whole_names_only() {
        let f = ["EPOLL", "POLL", "THREAD"];
        assert!(has_feature(&f, b"POLL"));
        assert!(has_feature(&f, b"EPOLL +POLL"), "HAProxy searches the raw list");
        assert!(!has_feature(&f, b"POL"));
        assert!(!has_feature(&f, b"+POLL"));
        assert!(!has_feature(&f, b""));
        assert!(!has_feature(&f, b"OPENSSL"));
    }
}
