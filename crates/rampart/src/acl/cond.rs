//! Conditions: `if|unless <term> [<term> ...] [or|'||' <term> ...]`, where a term is
//! an ACL name (a proxy ACL declared above, or a predefined one), optionally negated
//! with `!` (glued or alone, repeatable), or an anonymous ACL `{ <criterion> ... }`.
//! Terms side by side are ANDed, `or` separates ORed groups; there are no parentheses.
//!
//! Evaluation stops at the first false term of a group and at the first true group;
//! it allocates nothing. [`Cond::test`] adds HAProxy's third result, a miss on data
//! that may still arrive (`tcp-request content` under `inspect-delay`).
//!
//! HAProxy counterpart: `parse_acl_cond()`, `build_acl_cond()`, `acl_exec_cond()`
//! (src/acl.c).

use std::sync::Arc;

use super::{expr, Acl, AclSet, Test};
use crate::sample::expr::{CompileCx, Place};
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

    /// The condition on data that may still grow (polarity applied; a miss stays a
    /// miss): HAProxy's `acl_exec_cond()` without `SMP_OPT_FINAL`. On final data use
    /// [`Cond::eval`], where a miss is a failure.
    pub fn test(&self, ctx: &SampleCtx<'_>) -> Test {
        let mut cond = Test::Fail;
        for suite in &self.suites {
            let mut res = Test::Pass;
            for t in suite {
                let r = t.acl.test(ctx);
                res = res.min(if t.neg { r.negate() } else { r });
                if res == Test::Fail {
                    break;
                }
            }
            cond = cond.max(res);
            if cond == Test::Pass {
                break;
            }
        }
        if self.negate {
            cond.negate()
        } else {
            cond
        }
    }

    /// The first ACL none of whose keywords can be fetched at any of `places`, else the first
    /// one with such a keyword (which keyword), for HAProxy's warning that a rule
    /// will never match (`warnif_cond_conflicts()`).
    pub fn conflicts(&self, places: &[Place]) -> Option<Conflict<'_>> {
        let terms = || self.suites.iter().flatten();
        if let Some(t) = terms().find(|t| t.acl.conflicts(places).0) {
            let kw = t.acl.exprs.first().map_or("", |e| e.kw.as_str());
            return Some(Conflict { acl: &t.acl.name, kw, never: true });
        }
        terms().find_map(|t| t.acl.conflicts(places).1.map(|kw| Conflict { acl: &t.acl.name, kw, never: false }))
    }
}

/// An ACL of a condition that uses data not available where the condition runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict<'a> {
    /// Empty for an anonymous ACL.
    pub acl: &'a str,
    /// The keyword (the first of the ACL when `never`).
    pub kw: &'a str,
    /// No keyword of the ACL is available: it never matches.
    pub never: bool,
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
            if let Some(m) = e.auth_targets("", cx.px_name()).into_iter().next() {
                return Err(m);
            }
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
