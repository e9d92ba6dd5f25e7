//! Converters that combine the input with a variable: `concat`, `add_item`, `strcmp`,
//! `secure_memcmp`. HAProxy counterparts: src/sample.c (`sample_conv_concat`,
//! `sample_conv_add_item`, `sample_conv_strcmp`), src/ssl_sample.c
//! (`sample_conv_secure_memcmp`).

use super::{arg_bytes, bytes_of, new_str, var_arg, var_bytes};
use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{Arg, ArgList, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};

/// Resolves argument `i`, a variable name, into a variable argument.
fn resolve_var(args: &mut [Arg], i: usize) -> Result<(), String> {
    let name = arg_bytes(args, i);
    match var_arg(name) {
        Some(var) => {
            args[i] = var;
            Ok(())
        }
        None => Err(format!("failed to register variable name '{}'", String::from_utf8_lossy(name))),
    }
}

/// `concat([<start>],[<var>],[<end>])`: an optional variable.
fn check_concat(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    if arg_bytes(args, 1).is_empty() {
        return Ok(());
    }
    resolve_var(args, 1)
}

/// `add_item(<delim>,[<var>][,<suff>])`: a variable, a suffix, or both.
fn check_add_item(args: &mut ArgList, cx: &mut CompileCx<'_>) -> Result<(), String> {
    if arg_bytes(args, 1).is_empty() && arg_bytes(args, 2).is_empty() {
        return Err("one of the optional arguments has to be nonempty".into());
    }
    check_concat(args, cx)
}

/// `strcmp(<var>)`, `secure_memcmp(<var>)`: a mandatory variable.
fn check_var(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    if arg_bytes(args, 0).is_empty() {
        return Err("missing variable name".into());
    }
    resolve_var(args, 0)
}

/// The variable argument `i` as a string, `None` when there is none or it is unset.
fn var_str(args: &[Arg], i: usize, ctx: &SampleCtx<'_>) -> Option<Vec<u8>> {
    match args.get(i)? {
        Arg::Str(_) => None,
        var => var_bytes(var, ctx, false),
    }
}

/// `concat`: input, `<start>`, the variable as a string if set, `<end>`.
fn conv_concat<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let mut out = bytes_of(smp)?.into_owned();
    out.extend_from_slice(arg_bytes(args, 0));
    if let Some(v) = var_str(args, 1, ctx) {
        out.extend_from_slice(&v);
    }
    out.extend_from_slice(arg_bytes(args, 2));
    Some(new_str(out))
}

/// `add_item`: as `concat`, but the delimiter only goes between a non-empty input and
/// a non-empty variable or suffix.
fn conv_add_item<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let mut out = bytes_of(smp)?.into_owned();
    let var = var_str(args, 1, ctx);
    let suffix = arg_bytes(args, 2);
    if !out.is_empty() && (var.as_ref().is_some_and(|v| !v.is_empty()) || !suffix.is_empty()) {
        out.extend_from_slice(arg_bytes(args, 0));
    }
    if let Some(v) = var {
        out.extend_from_slice(&v);
    }
    out.extend_from_slice(suffix);
    Some(new_str(out))
}

/// `strncmp` over the shorter length, then the shorter string is the smaller: the
/// difference of the first differing bytes, or -1/0/1.
fn compare(a: &[u8], b: &[u8]) -> i64 {
    for (&x, &y) in a.iter().zip(b) {
        if x != y {
            return i64::from(x) - i64::from(y);
        }
        if x == 0 {
            return 0;
        }
    }
    match a.len().cmp(&b.len()) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    }
}

/// `strcmp(<var>)`: absent when the variable is not set.
fn conv_strcmp<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let other = var_str(args, 0, ctx)?;
    let b = bytes_of(smp)?;
    Some(Sample::Sint(compare(&b, &other)))
}

/// Equality in time independent of where the bytes differ.
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `secure_memcmp(<var>)`: whether the input equals the variable, compared in
/// constant time when the lengths are equal.
fn conv_secure_memcmp<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let other = match args.first()? {
        Arg::Str(_) => return None,
        var => var_bytes(var, ctx, true)?,
    };
    let b = bytes_of(smp)?;
    Some(Sample::Bool(ct_eq(&b, &other)))
}

use ArgT::Str as STR;
use SmpType::{Bin, Bool, Sint, Str};

pub const KEYWORDS: &[ConvKw] = &[
    ConvKw::new("concat", ArgSpec::new(&[STR, STR, STR], 1), Str, Str, conv_concat).check(check_concat),
    ConvKw::new("add_item", ArgSpec::new(&[STR, STR, STR], 2), Str, Str, conv_add_item).check(check_add_item),
    ConvKw::new("strcmp", ArgSpec::new(&[STR], 1), Str, Sint, conv_strcmp).check(check_var),
    ConvKw::new("secure_memcmp", ArgSpec::new(&[STR], 1), Bin, Bool, conv_secure_memcmp).check(check_var),
];

#[cfg(test)]
mod tests {
    //! Expected values from haproxy 2.6.12, with `txn.v` set to `abz`, `txn.e` to the
    //! empty string and `txn.i` to the integer 42.
    use super::super::testing::{bin, check, int, run, s, st, text};
    use super::*;

    #[test]
    fn concat_constants() {
        assert_eq!(text("concat", vec![s("x"), s(""), s("y")], st("abc")).as_deref(), Some("abcxy"));
        assert_eq!(text("concat", vec![s("x")], st("abc")).as_deref(), Some("abcx"));
        assert_eq!(text("concat", vec![s("")], st("abc")).as_deref(), Some("abc"));
    }

    #[test]
    fn add_item_constants() {
        assert_eq!(text("add_item", vec![s("-"), s(""), s("y")], st("abc")).as_deref(), Some("abc-y"));
        assert_eq!(text("add_item", vec![s("-"), s(""), s("y")], st("")).as_deref(), Some("y"));
        assert_eq!(
            check("add_item", vec![s("-"), s(""), s("")]).unwrap_err(),
            "one of the optional arguments has to be nonempty"
        );
    }

    #[test]
    fn variable_names_are_checked() {
        assert_eq!(
            check("concat", vec![s("x"), s("foo"), s("y")]).unwrap_err(),
            "failed to register variable name 'foo'"
        );
        assert_eq!(check("strcmp", vec![s("")]).unwrap_err(), "missing variable name");
        assert_eq!(check("strcmp", vec![s("foo")]).unwrap_err(), "failed to register variable name 'foo'");
        assert_eq!(check("secure_memcmp", vec![s("foo")]).unwrap_err(), "failed to register variable name 'foo'");
    }

    #[test]
    fn with_variables() {
        let x = || st("x");
        assert_eq!(text("concat", vec![s("<"), s("txn.v"), s(">")], x()).as_deref(), Some("x<abz>"));
        assert_eq!(text("concat", vec![s("<"), s("txn.i"), s(">")], x()).as_deref(), Some("x<42>"));
        assert_eq!(text("concat", vec![s("<"), s("txn.nope"), s(">")], x()).as_deref(), Some("x<>"));
        assert_eq!(text("add_item", vec![s("-"), s("txn.v"), s("s")], x()).as_deref(), Some("x-abzs"));
        assert_eq!(text("add_item", vec![s("-"), s("txn.v")], st("")).as_deref(), Some("abz"));
        assert_eq!(text("add_item", vec![s("-"), s("txn.e")], x()).as_deref(), Some("x"));
        assert_eq!(text("add_item", vec![s("-"), s("txn.e"), s("s")], x()).as_deref(), Some("x-s"));
        assert_eq!(text("add_item", vec![s("-"), s("txn.nope")], x()).as_deref(), Some("x"));
        assert_eq!(text("add_item", vec![s("-"), s("txn.nope"), s("s")], x()).as_deref(), Some("x-s"));
        assert_eq!(int("strcmp", vec![s("txn.v")], st("abc")), Some(-23));
        assert_eq!(int("strcmp", vec![s("txn.v")], st("abz")), Some(0));
        assert_eq!(int("strcmp", vec![s("txn.i")], x()), Some(68));
        assert_eq!(int("strcmp", vec![s("txn.nope")], x()), None);
        assert_eq!(run("secure_memcmp", vec![s("txn.v")], bin(b"abz")), Some(Sample::Bool(true)));
        assert_eq!(run("secure_memcmp", vec![s("txn.v")], bin(b"abc")), Some(Sample::Bool(false)));
        assert_eq!(run("secure_memcmp", vec![s("txn.nope")], bin(b"abc")), None);
    }

    #[test]
    fn strcmp_values() {
        assert_eq!(compare(b"abc", b"abz"), -23);
        assert_eq!(compare(b"abd", b"abz"), -22);
        assert_eq!(compare(b"aaa", b"abz"), -1);
        assert_eq!(compare(b"abz", b"abz"), 0);
        assert_eq!(compare(b"ab", b"abz"), -1);
        assert_eq!(compare(b"abzz", b"abz"), 1);
        assert_eq!(compare(b"ABZ", b"abz"), -32);
        assert_eq!(compare(b"x", b"42"), 68);
        assert_eq!(compare(b"a\0x", b"a\0y"), 0);
    }

    #[test]
    fn constant_time_equality() {
        assert!(ct_eq(b"abz", b"abz"));
        assert!(!ct_eq(b"abc", b"abz"));
        assert!(!ct_eq(b"ab", b"abz"));
        assert!(ct_eq(b"", b""));
    }
}
