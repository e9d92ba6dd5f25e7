//! Conditions: `if|unless <term> [<term> ...] [or|'||' <term> ...]`, where a term is
//! an ACL name (a proxy ACL declared above, or a predefined one), optionally negated
//! with `!` (glued or alone, repeatable), or an anonymous ACL `{ <criterion> ... }`.
//! Terms side by side are ANDed, `or` separates ORed groups; there are no parentheses.
//!
//! Evaluation stops at the first false term of a group and at the first true group;
//! it allocates nothing. TODO(#5): HAProxy's third result, MISS (data that may still
//! arrive, for `tcp-request content` under `inspect-delay`), is not modelled: a
//! condition is true or false on the data in hand.
//!
//! HAProxy counterpart: `parse_acl_cond()`, `build_acl_cond()`, `acl_exec_cond()`
//! (src/acl.c).

use std::sync::Arc;

use super::{expr, Acl, AclSet};
use crate::sample::expr::CompileCx;
use crate::sample::SampleCtx;

/// One term: an ACL, maybe negated.
#[derive(Debug, Clone)]
pub struct Term {
    pub acl: Arc<Acl>,
    pub neg: bool,
}

/// A compiled condition.
#[derive(Debug, Clone)]
pub struct Cond {
    /// `unless`.
    pub negate: bool,
    /// ORed groups of ANDed terms. No group at all (`if` alone) never matches, as in
    /// HAProxy.
    pub suites: Vec<Vec<Term>>,
}

impl Cond {
    /// Whether the condition holds for this stream (polarity applied).
    #[inline]
    pub fn eval(&self, ctx: &SampleCtx<'_>) -> bool {
        let any = self.suites.iter().any(|suite| suite.iter().all(|t| t.acl.eval(ctx) != t.neg));
        any != self.negate
    }
}

/// Compiles the words of a condition after `if`/`unless` (`negate` for `unless`),
/// seeing every ACL of `acls`. The error is HAProxy's message (`no such ACL : 'x'`),
/// which the caller places in its own (`error detected while parsing switching rule
/// : %s.`).
pub fn compile_cond(words: &[String], negate: bool, acls: &AclSet, cx: &mut CompileCx<'_>) -> Result<Cond, String> {
    compile_cond_at(words, negate, acls, usize::MAX, cx)
}

/// As [`compile_cond`] for a condition written after the first `upto` `acl` lines of
/// its proxy: as in HAProxy, a condition cannot name an ACL declared below it (but
/// sees later lines of an ACL declared above).
pub fn compile_cond_at(
    words: &[String],
    negate: bool,
    acls: &AclSet,
    upto: usize,
    cx: &mut CompileCx<'_>,
) -> Result<Cond, String> {
    let mut suites: Vec<Vec<Term>> = Vec::new();
    let mut cur: Option<Vec<Term>> = None;
    let mut neg = false;
    let mut i = 0;
    // The condition ends at the first empty word, as in HAProxy's argument arrays.
    let end = words.iter().position(String::is_empty).unwrap_or(words.len());
    while i < end {
        let mut word = words[i].as_str();
        while let Some(rest) = word.strip_prefix('!') {
            neg = !neg;
            word = rest;
        }
        if word.is_empty() {
            i += 1;
            continue;
        }
        if word.eq_ignore_ascii_case("or") || word == "||" {
            suites.extend(cur.take());
            neg = false;
            i += 1;
            continue;
        }
        let acl = if word == "{" {
            let close = words[i + 1..end].iter().position(|w| w == "}").ok_or("missing closing '}' in condition")?;
            let inner = &words[i + 1..i + 1 + close];
            let mut warnings = Vec::new();
            let e = expr::compile(inner, cx, &mut warnings)?;
            acls.warn(warnings);
            i += close + 1;
            Arc::new(Acl { name: String::new(), exprs: vec![e] })
        } else {
            acls.lookup(word, upto, cx)?
        };
        cur.get_or_insert_with(Vec::new).push(Term { acl, neg });
        neg = false;
        i += 1;
    }
    suites.extend(cur);
    Ok(Cond { negate, suites })
}
