//! Conditions of `.if`/`.elif` and of the `-cc` command-line flag: predicates
//! `defined()`, `feature()`, `streq()`, `strneq()`, `version_atleast()`,
//! `version_before()`, with `!`, `&&`, `||` and parentheses.
//! HAProxy counterpart: src/cfgcond.c.

use crate::lexer::LexCtx;

/// Evaluates a condition given as words (as after `.if`).
pub fn eval_words(_words: &[String], _ctx: &LexCtx<'_>) -> Result<bool, String> {
    Err("conditions are not supported yet".into())
}

/// Evaluates a condition given as one string (as after `-cc`). `Err` is a syntax error.
pub fn eval_str(expr: &str, ctx: &LexCtx<'_>) -> Result<bool, String> {
    let words: Vec<String> = expr.split_whitespace().map(str::to_owned).collect();
    eval_words(&words, ctx)
}
