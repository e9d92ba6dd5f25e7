//! One ACL expression: `<criterion> [-i] [-n] [-u id] [-f file] [-M] [-m method] [--]
//! [operator] <pattern> ...`, compiled into a sample expression, a match method and
//! its pattern lists (inline patterns, plus one per `-f` file).
//!
//! HAProxy counterpart: `parse_acl_expr()` (src/acl.c).

use std::sync::Arc;

use super::kw;
use crate::pattern::input::can_cast;
use crate::pattern::int::{apply_op, Op};
use crate::pattern::patref::{PatEntry, PatIndex};
use crate::pattern::{MatchMethod, PatFlags};
use crate::sample::expr::{compile as compile_sample, CompileCx, Expr};
use crate::sample::kw::Arg;
use crate::sample::{Sample, SampleCtx, SmpType};

/// A compiled ACL expression.
#[derive(Debug)]
pub struct AclExpr {
    /// The keyword as HAProxy names it in messages: the ACL keyword, or the fetch.
    pub kw: String,
    pub expr: Expr,
    pub method: MatchMethod,
    /// Pattern lists, searched in order: `-f` files first, then the inline patterns.
    pub lists: Vec<Arc<PatIndex>>,
}

impl AclExpr {
    /// Whether one of the values of the expression matches one of the patterns.
    pub fn eval(&self, ctx: &SampleCtx<'_>) -> bool {
        let mut hit = false;
        self.expr.each(ctx, &mut |smp| {
            hit = self.matches(&smp);
            !hit
        });
        hit
    }

    /// As [`AclExpr::eval`], with HAProxy's third result: no match, but a fetch said
    /// that more data could change its answer (`SMP_F_MAY_CHANGE`).
    pub fn test(&self, ctx: &SampleCtx<'_>) -> super::Test {
        let was = ctx.may_change.replace(false);
        let hit = self.eval(ctx);
        let may_change = ctx.may_change.replace(was);
        match (hit, may_change) {
            (true, _) => super::Test::Pass,
            (false, true) => super::Test::Miss,
            (false, false) => super::Test::Fail,
        }
    }

    /// Whether `smp` matches (`pattern_exec_match`).
    pub fn matches(&self, smp: &Sample<'_>) -> bool {
        match self.method {
            MatchMethod::Found => true,
            MatchMethod::Bool => self.lists.first().is_some_and(|l| l.with(|s| s.set.matches(smp))),
            MatchMethod::Auth => self.auth_group_matches(smp),
            _ => self.lists.iter().any(|l| l.with(|s| s.set.matches(smp))),
        }
    }
}

impl AclExpr {
    /// `http_auth_group(L) G1 G2 ...` (HAProxy's `pat_match_auth`): `smp` is a user name
    /// of userlist `L`, which matches when one of the user's groups is a pattern.
    fn auth_group_matches(&self, smp: &Sample<'_>) -> bool {
        let (Some(Arg::Userlist(ul)), Sample::Str(name)) = (self.expr.args.first(), smp) else {
            return false;
        };
        let Some(user) = ul.user(name) else { return false };
        user.group_names(ul).any(|g| self.lists.iter().any(|l| l.with(|s| s.set.matches(&Sample::str(g.as_bytes())))))
    }

    /// HAProxy's `acl_find_targets()`: the patterns of an `http_auth_group` ACL must be
    /// groups of its userlist. Returns HAProxy's messages (empty when all is well) for
    /// ACL `acl` (empty when anonymous) of proxy `px`.
    pub fn auth_targets(&self, acl: &str, px: &str) -> Vec<String> {
        let (MatchMethod::Auth, Some(Arg::Userlist(ul))) = (self.method, self.expr.args.first()) else {
            return Vec::new();
        };
        let head = format!("proxy {px}: acl {acl} {}()", self.kw);
        let groups: Vec<String> = self.lists.iter().flat_map(|l| l.src.entries()).map(|e| e.key).collect();
        if groups.is_empty() {
            return vec![format!("{head}: no groups specified.")];
        }
        groups.iter().filter(|g| ul.group(g).is_none()).map(|g| format!("{head}: invalid group '{g}'.")).collect()
    }
}

/// The warning HAProxy prints for an expression without patterns.
fn no_pattern_warning(kw: &str) -> String {
    format!(
        "parsing acl keyword '{kw}' :\n  no pattern to match against were provided, so this ACL will never match.\n  If this is what you intended, please add '--' to get rid of this warning.\n  If you intended to match only for existence, please use '-m found'.\n  If you wanted to force an int to match as a bool, please use '-m bool'.\n"
    )
}

/// The criterion: a sample expression, the keyword to name in messages, its output
/// type and the method it implies.
fn criterion(word: &str, cx: &mut CompileCx<'_>) -> Result<(Expr, String, Option<MatchMethod>), String> {
    match kw::find(word) {
        Some(k) => {
            let rest = &word[k.name.len()..];
            let text = format!("{}{rest}", k.fetch);
            // COMPAT: the expression compiler's message follows `ACL keyword 'x' :`;
            // HAProxy words a few of these errors differently for ACL keywords.
            let expr = compile_sample(&text, cx).map_err(|e| format!("ACL keyword '{}' : {e}", k.name))?;
            if expr.convs.is_empty() {
                Ok((expr, k.name.to_owned(), Some(k.method)))
            } else {
                // As HAProxy: converters after an ACL keyword drop its match method
                // for the default of the converted type.
                let m = MatchMethod::default_for(expr.out_type());
                Ok((expr, k.fetch.to_owned(), m))
            }
        }
        None => {
            let expr = compile_sample(word, cx).map_err(|e| format!("{e} in ACL expression '{word}'"))?;
            let m = MatchMethod::default_for(expr.out_type());
            let kw = expr.fetch.name.to_owned();
            Ok((expr, kw, m))
        }
    }
}

fn need_method(kw: &str) -> String {
    format!("matching method must be specified first (using '-m') when using a sample fetch of this type ('{kw}')")
}

/// Compiles the words of one ACL expression (after the ACL name). Warnings go to
/// `warnings`; the error is HAProxy's message.
pub fn compile(words: &[String], cx: &mut CompileCx<'_>, warnings: &mut Vec<String>) -> Result<AclExpr, String> {
    let Some(first) = words.first().filter(|w| !w.is_empty()) else {
        return Err("missing ACL expression".into());
    };
    let (expr, kw, mut method) = criterion(first, cx)?;
    let out = expr.out_type();
    // Patterns end at the first empty word, as in HAProxy's argument arrays.
    let words: Vec<&str> = words[1..].iter().map(String::as_str).take_while(|w| !w.is_empty()).collect();
    if method.is_some() && out != SmpType::Bool && words.is_empty() {
        warnings.push(no_pattern_warning(first));
    }
    let mut flags = PatFlags::default();
    let mut two_cols = false;
    let mut unique_id = None;
    let mut lists = Vec::new();
    let resolve = !cx.pats.no_resolve;
    let mut i = 0;
    while let Some(w) = words.get(i).filter(|w| w.starts_with('-')) {
        let arg = words.get(i + 1).copied().unwrap_or_default();
        match *w {
            "-i" => flags.icase = true,
            "-n" => flags.no_dns = true,
            "-M" => two_cols = true,
            "--" => {
                i += 1;
                break;
            }
            "-u" => {
                let id = parse_id(arg).ok_or("the argument of -u must be an integer")?;
                if cx.pats.id_used(id) {
                    return Err("the id is already used".into());
                }
                unique_id = Some(id);
                i += 1;
            }
            "-f" => {
                let m = method.ok_or_else(|| need_method(&kw))?;
                let src = cx.pats.file(arg, two_cols)?;
                lists.push(src.index(m, flags, None, resolve)?);
                i += 1;
            }
            "-m" => {
                if !lists.is_empty() {
                    return Err(
                        "'-m' must only be specified before patterns and files in parsing ACL expression".into()
                    );
                }
                let m = MatchMethod::from_name(arg)
                    .ok_or_else(|| format!("unknown matching method '{arg}' when parsing ACL expression"))?;
                if m != MatchMethod::Found && !can_cast(out, m.expect()) {
                    return Err(format!("matching method '{arg}' cannot be used with fetch keyword '{kw}'"));
                }
                method = Some(m);
                i += 1;
            }
            _ => {
                return Err(format!(
                    "'{w}' is not a valid ACL option. Please use '--' before any pattern beginning with a '-'"
                ))
            }
        }
        i += 1;
    }
    let method = method.ok_or_else(|| need_method(&kw))?;
    let entries = patterns(&words[i.min(words.len())..], method)?;
    let inline = cx.pats.inline(entries, unique_id, &kw)?;
    lists.push(inline.index(method, flags, None, resolve)?);
    Ok(AclExpr { kw, expr, method, lists })
}

/// `-u`'s argument, read as `strtol` would with nothing left over.
fn parse_id(s: &str) -> Option<i32> {
    if s.is_empty() {
        return Some(0);
    }
    s.parse().ok()
}

/// The inline patterns, with the integer operators applied.
fn patterns(words: &[&str], method: MatchMethod) -> Result<Vec<PatEntry>, String> {
    let mut op = Op::Eq;
    let mut out = Vec::with_capacity(words.len());
    for w in words {
        let mut key = (*w).to_owned();
        if method.takes_operators() {
            if let Some(o) = Op::from_word(w) {
                op = o;
                continue;
            }
            if let Some(k) = apply_op(op, w, method == MatchMethod::Ver)? {
                key = k;
            }
        }
        out.push(PatEntry::new(key, None, 0));
    }
    Ok(out)
}
