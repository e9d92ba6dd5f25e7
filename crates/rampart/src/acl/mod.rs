//! ACLs and conditions: `acl <name> <criterion> [flags] [operator] <value> ...` lines
//! compiled once per proxy into [`AclSet`], and `if|unless <terms>` conditions into
//! [`Cond`], evaluated per stream without allocation. The pattern sets ACLs match
//! against live in `crate::pattern`, shared with the maps (`sample::conv::map`).
//!
//! HAProxy counterpart: src/acl.c (`parse_acl_expr`, `parse_acl`, `parse_acl_cond`,
//! `acl_exec_cond`).
//!
//! - `kw`: ACL keywords (`path_beg` ...) and predefined ACLs (`TRUE`, `METH_GET` ...)
//! - `expr`: one ACL line: criterion, options, patterns
//! - `cond`: conditions: terms, `!`, `or`/`||`, `{ anonymous }`
//!
//! The rest of the daemon calls [`compile_acl_defs`] with a proxy's `acl` lines (the
//! cfg model's `RuleSet::acls`), then [`compile_condition`] for each rule's condition,
//! and [`Cond::eval`] per stream. [`compile_acls`] and [`compile_cond`] take plain
//! words.

pub mod cond;
pub mod expr;
pub mod kw;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

pub use crate::pattern::{PatRef, PatRefs};
pub use cond::{compile_cond, Cond, Conflict};
pub use expr::AclExpr;

use rampart_cfg::model::{AclDef, Condition};

use crate::sample::expr::CompileCx;
use crate::sample::SampleCtx;

/// A named ACL: the ORed expressions of every `acl` line with that name.
#[derive(Debug)]
pub struct Acl {
    /// Empty for an anonymous ACL (`{ ... }` in a condition).
    pub name: String,
    pub exprs: Vec<AclExpr>,
}

impl Acl {
    /// Whether any expression matches.
    #[inline]
    pub fn eval(&self, ctx: &SampleCtx<'_>) -> bool {
        self.exprs.iter().any(|e| e.eval(ctx))
    }

    /// As [`Acl::eval`], telling apart a miss that more data could turn into a match
    /// ([`Test::Miss`]).
    pub fn test(&self, ctx: &SampleCtx<'_>) -> Test {
        let mut res = Test::Fail;
        for e in &self.exprs {
            match e.test(ctx) {
                Test::Pass => return Test::Pass,
                Test::Miss => res = Test::Miss,
                Test::Fail => {}
            }
        }
        res
    }

    /// Whether no expression can be fetched at any of `places` (HAProxy's `acl->val`),
    /// and the keyword of the first expression that cannot, if any.
    pub fn conflicts(&self, places: &[crate::sample::expr::Place]) -> (bool, Option<&str>) {
        let valid = |e: &AclExpr| places.iter().any(|p| e.expr.valid_at(*p));
        let first_bad = self.exprs.iter().find(|e| !valid(e)).map(|e| e.kw.as_str());
        (!self.exprs.iter().any(valid), first_bad)
    }
}

/// The result of a condition on data that may still grow (HAProxy's `acl_test_res`):
/// a miss is a "not yet", which `tcp-request content` rules wait on until their
/// `inspect-delay`, and which counts as a failure once the data is final. Ordered as
/// HAProxy's values (fail < miss < pass), so that AND is the minimum and OR the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Test {
    Fail,
    Miss,
    Pass,
}

impl Test {
    /// Negation: a miss stays a miss.
    pub fn negate(self) -> Test {
        match self {
            Test::Fail => Test::Pass,
            Test::Miss => Test::Miss,
            Test::Pass => Test::Fail,
        }
    }
}

/// The ACLs of one proxy, for compiling its conditions.
#[derive(Debug, Default)]
pub struct AclSet {
    /// By name, with the position of the name's first `acl` line: a condition only
    /// sees the ACLs declared above it, as in HAProxy.
    named: HashMap<String, (Arc<Acl>, usize)>,
    /// Predefined ACLs compiled on first use.
    predefined: RefCell<HashMap<&'static str, Arc<Acl>>>,
    warnings: RefCell<Vec<String>>,
}

impl AclSet {
    /// The ACL a condition placed after `upto` `acl` lines may name: a proxy ACL
    /// declared by then, else a predefined one.
    fn lookup(&self, name: &str, upto: usize, cx: &mut CompileCx<'_>) -> Result<Arc<Acl>, String> {
        if let Some((acl, first)) = self.named.get(name) {
            if *first < upto {
                return Ok(acl.clone());
            }
        }
        let Some(pre) = kw::predefined(name) else {
            return Err(format!("no such ACL : '{name}'"));
        };
        if let Some(acl) = self.predefined.borrow().get(pre.name) {
            return Ok(acl.clone());
        }
        let words: Vec<String> = pre.words.iter().map(|w| (*w).to_owned()).collect();
        let e = expr::compile(&words, cx, &mut Vec::new())?;
        let acl = Arc::new(Acl { name: pre.name.to_owned(), exprs: vec![e] });
        self.predefined.borrow_mut().insert(pre.name, acl.clone());
        Ok(acl)
    }

    /// The named ACL, as seen from the end of the proxy.
    pub fn get(&self, name: &str) -> Option<&Arc<Acl>> {
        self.named.get(name).map(|e| &e.0)
    }

    /// Warnings met while compiling (HAProxy prints them without a location), drained.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.warnings.borrow_mut())
    }

    fn warn(&self, w: impl IntoIterator<Item = String>) {
        self.warnings.borrow_mut().extend(w);
    }
}

/// Checks an ACL name as HAProxy's `acl` keyword does; the message is complete.
fn check_name(name: &str) -> Result<(), String> {
    let bad = name.chars().find(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '_' | '-')));
    if name.is_empty() || bad.is_some() {
        let c = bad.map(String::from).unwrap_or_default();
        return Err(format!("character '{c}' is not permitted in acl name '{name}'."));
    }
    if name.eq_ignore_ascii_case("or") {
        return Err(format!(
            "acl name '{name}' will never match. 'or' is used to express a logical disjunction within a condition."
        ));
    }
    Ok(())
}

/// Compiles a proxy's `acl` lines, in configuration order: `(name, words after the
/// name)`. Lines with the same name make one ACL. Errors are complete messages for
/// `parsing [file:line] : <message>`, one per bad line (the i-th error of the vector
/// does not say which line: use [`compile_acl_lines`] for that).
pub fn compile_acls(lines: &[(&str, &[String])], cx: &mut CompileCx<'_>) -> Result<AclSet, Vec<String>> {
    let (set, errs) = compile_acl_lines(lines, cx);
    if errs.is_empty() {
        Ok(set)
    } else {
        Err(errs.into_iter().map(|(_, e)| e).collect())
    }
}

/// As [`compile_acls`], keeping going after errors: the set of the good lines, and
/// for each bad line its position in `lines` and HAProxy's message.
pub fn compile_acl_lines(lines: &[(&str, &[String])], cx: &mut CompileCx<'_>) -> (AclSet, Vec<(usize, String)>) {
    compile_lines(lines, None, cx)
}

/// As [`compile_acl_lines`]; with `spans`, each line's pattern references note where
/// they were written (`show acl`).
fn compile_lines(
    lines: &[(&str, &[String])],
    spans: Option<&[&rampart_cfg::span::Span]>,
    cx: &mut CompileCx<'_>,
) -> (AclSet, Vec<(usize, String)>) {
    let mut errs = Vec::new();
    let mut order: Vec<(String, usize, Vec<AclExpr>)> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    let set = AclSet::default();
    for (i, &(name, words)) in lines.iter().enumerate() {
        if let Err(e) = check_name(name) {
            errs.push((i, e));
            continue;
        }
        if let Some(span) = spans.and_then(|s| s.get(i)) {
            cx.pats.set_at(&span.file, span.line);
        }
        let mut warnings = Vec::new();
        match expr::compile(words, cx, &mut warnings) {
            Ok(e) => {
                if let (Some(crit), Some(next)) = (words.first(), words.get(1)) {
                    if !crit.contains('(') && next.starts_with('(') {
                        warnings.push(paren_warning(name, crit, next));
                    }
                }
                set.warn(warnings);
                errs.extend(e.auth_targets(name, cx.px_name()).into_iter().map(|m| (i, m)));
                let slot = *at.entry(name).or_insert_with(|| {
                    order.push((name.to_owned(), i, Vec::new()));
                    order.len() - 1
                });
                order[slot].2.push(e);
            }
            Err(e) => errs.push((i, format!("error detected while parsing ACL '{name}' : {e}."))),
        }
    }
    let mut set = set;
    for (name, first, exprs) in order {
        set.named.insert(name.clone(), (Arc::new(Acl { name, exprs }), first));
    }
    (set, errs)
}

/// Compiles the `acl` lines of one section of the configuration model: the set of the
/// good lines, and for each bad line its index in `defs` (for its span) and HAProxy's
/// complete message.
pub fn compile_acl_defs(defs: &[AclDef], cx: &mut CompileCx<'_>) -> (AclSet, Vec<(usize, String)>) {
    let lines: Vec<(&str, &[String])> = defs.iter().map(|d| (d.name.as_str(), d.words.as_slice())).collect();
    let spans: Vec<&rampart_cfg::span::Span> = defs.iter().map(|d| &d.span).collect();
    compile_lines(&lines, Some(&spans), cx)
}

/// Compiles a rule's condition against the ACLs of its section (`defs`, compiled into
/// `acls`): it sees the ACLs declared above its line, as in HAProxy. The error is the
/// inner message, for the rule's own `error detected while parsing ... : %s.`.
pub fn compile_condition(
    c: &Condition,
    defs: &[AclDef],
    acls: &AclSet,
    cx: &mut CompileCx<'_>,
) -> Result<Cond, String> {
    let upto = defs.iter().take_while(|d| d.span.file != c.span.file || d.span.line < c.span.line).count();
    cond::compile_cond_at(&c.words, c.negate, acls, upto, cx)
}

fn paren_warning(name: &str, crit: &str, next: &str) -> String {
    format!(
        "parsing acl '{name}' :\n  matching '{crit}' for pattern '{next}' is likely a mistake and probably\n  not what you want. Maybe you need to remove the extraneous space before '('.\n  If you are really sure this is not an error, please insert '--' between the\n  match and the pattern to make this warning message disappear."
    )
}

#[cfg(test)]
mod http_tests;
#[cfg(test)]
mod tests;
