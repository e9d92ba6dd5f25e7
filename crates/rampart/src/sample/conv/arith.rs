//! Arithmetic, bitwise and boolean converters on signed 64-bit integers. HAProxy
//! counterpart: src/sample.c (`sample_conv_arith_*`, `sample_conv_binary_*`,
//! `check_operator`).
//!
//! As HAProxy: `add`, `sub`, `mul` and `neg` saturate at the 64-bit limits instead of
//! wrapping; `div` by zero gives `i64::MAX` and `mod` by zero gives 0;
//! `i64::MIN / -1` gives `i64::MAX` and `i64::MIN % -1` gives 0. The operand of the
//! two-argument ones is an integer or a variable name, checked at startup.

use super::{sint_of, var_arg, var_sint};
use crate::sample::cast::read_int64;
use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{Arg, ArgList, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};

/// The operand of `add`, `and` ...: a variable name, else a whole integer (an empty
/// one reads as 0, as in HAProxy).
fn check_operator(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let Some(Arg::Str(text)) = args.first() else { return Ok(()) };
    if let Some(var) = var_arg(text) {
        args[0] = var;
        return Ok(());
    }
    let (v, used) = read_int64(text);
    if used != text.len() {
        return Err("expects an integer or a variable name".into());
    }
    args[0] = Arg::Sint(v);
    Ok(())
}

/// The value of the operand: the constant, or the variable cast to an integer
/// (absent variable: the conversion fails).
fn operand(args: &[Arg], ctx: &SampleCtx<'_>) -> Option<i64> {
    match args.first()? {
        Arg::Sint(v) => Some(*v),
        arg => var_sint(arg, ctx),
    }
}

/// Saturating addition, HAProxy's `arith_add`.
fn arith_add(a: i64, b: i64) -> i64 {
    a.saturating_add(b)
}

/// Saturating subtraction; subtracting `i64::MIN` is computed as HAProxy does (adding
/// `i64::MAX` then one more unless saturated).
fn arith_sub(a: i64, b: i64) -> i64 {
    if b == i64::MIN {
        let r = arith_add(a, i64::MAX);
        return if r < i64::MAX { r + 1 } else { r };
    }
    arith_add(a, -b)
}

fn arith_div(a: i64, b: i64) -> i64 {
    match b {
        0 => i64::MAX,
        -1 if a == i64::MIN => i64::MAX,
        _ => a / b,
    }
}

fn arith_mod(a: i64, b: i64) -> i64 {
    match b {
        0 => 0,
        -1 if a == i64::MIN => 0,
        _ => a % b,
    }
}

/// A converter applying `op` to the input and the operand.
macro_rules! binop {
    ($name:ident, $op:expr) => {
        fn $name<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
            let a = sint_of(&smp)?;
            let b = operand(args, ctx)?;
            let op: fn(i64, i64) -> i64 = $op;
            Some(Sample::Sint(op(a, b)))
        }
    };
}

binop!(conv_add, arith_add);
binop!(conv_sub, arith_sub);
binop!(conv_mul, i64::saturating_mul);
binop!(conv_div, arith_div);
binop!(conv_mod, arith_mod);
binop!(conv_and, |a, b| a & b);
binop!(conv_or, |a, b| a | b);
binop!(conv_xor, |a, b| a ^ b);

/// A converter applying `op` to the input alone.
macro_rules! unop {
    ($name:ident, $op:expr) => {
        fn $name<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
            let op: fn(i64) -> Sample<'static> = $op;
            Some(op(sint_of(&smp)?))
        }
    };
}

unop!(conv_neg, |a| Sample::Sint(a.checked_neg().unwrap_or(i64::MAX)));
unop!(conv_cpl, |a| Sample::Sint(!a));
unop!(conv_bool, |a| Sample::Bool(a != 0));
unop!(conv_not, |a| Sample::Bool(a == 0));
unop!(conv_odd, |a| Sample::Bool(a & 1 != 0));
unop!(conv_even, |a| Sample::Bool(a & 1 == 0));

use SmpType::{Bool, Sint};

const OPERAND: ArgSpec = ArgSpec::new(&[ArgT::Str], 1);

pub const KEYWORDS: &[ConvKw] = &[
    ConvKw::new("add", OPERAND, Sint, Sint, conv_add).check(check_operator),
    ConvKw::new("sub", OPERAND, Sint, Sint, conv_sub).check(check_operator),
    ConvKw::new("mul", OPERAND, Sint, Sint, conv_mul).check(check_operator),
    ConvKw::new("div", OPERAND, Sint, Sint, conv_div).check(check_operator),
    ConvKw::new("mod", OPERAND, Sint, Sint, conv_mod).check(check_operator),
    ConvKw::new("and", OPERAND, Sint, Sint, conv_and).check(check_operator),
    ConvKw::new("or", OPERAND, Sint, Sint, conv_or).check(check_operator),
    ConvKw::new("xor", OPERAND, Sint, Sint, conv_xor).check(check_operator),
    ConvKw::new("neg", ArgSpec::NONE, Sint, Sint, conv_neg),
    ConvKw::new("cpl", ArgSpec::NONE, Sint, Sint, conv_cpl),
    ConvKw::new("bool", ArgSpec::NONE, Sint, Bool, conv_bool),
    ConvKw::new("not", ArgSpec::NONE, Sint, Bool, conv_not),
    ConvKw::new("odd", ArgSpec::NONE, Sint, Bool, conv_odd),
    ConvKw::new("even", ArgSpec::NONE, Sint, Bool, conv_even),
];

#[cfg(test)]
mod tests {
    //! Expected values from haproxy 2.6.12 (`int(a),add(b)` ... through `lf-string`).
    use super::super::testing::{check, int, run, s};
    use super::*;

    fn op(name: &str, a: i64, b: &str) -> Option<i64> {
        int(name, vec![s(b)], Sample::Sint(a))
    }

    const MAX: i64 = i64::MAX;
    const MIN: i64 = i64::MIN;

    #[test]
    fn add_sub_saturate() {
        assert_eq!(op("add", MAX, "1"), Some(MAX));
        assert_eq!(op("add", MIN, "-1"), Some(MIN));
        assert_eq!(op("add", 5, "-3"), Some(2));
        assert_eq!(op("add", 5, "+3"), Some(8));
        assert_eq!(op("add", 5, ""), Some(5));
        assert_eq!(op("add", 5, "99999999999999999999"), Some(MAX));
        assert_eq!(op("sub", MIN + 1, "2"), Some(MIN));
        assert_eq!(op("sub", 5, "-9223372036854775808"), Some(MAX));
        assert_eq!(op("sub", -5, "-9223372036854775808"), Some(9223372036854775803));
        assert_eq!(op("sub", 0, "-9223372036854775808"), Some(MAX));
        assert_eq!(op("sub", 7, "10"), Some(-3));
    }

    #[test]
    fn mul_saturates() {
        assert_eq!(op("mul", 4611686018427387904, "2"), Some(MAX));
        assert_eq!(op("mul", 4611686018427387904, "-3"), Some(MIN));
        assert_eq!(op("mul", MIN, "-1"), Some(MAX));
        assert_eq!(op("mul", 0, "-1"), Some(0));
        assert_eq!(op("mul", -6, "7"), Some(-42));
    }

    #[test]
    fn div_mod_edges() {
        assert_eq!(op("div", 5, "0"), Some(MAX));
        assert_eq!(op("div", MIN, "-1"), Some(MAX));
        assert_eq!(op("div", 7, "-2"), Some(-3));
        assert_eq!(op("div", -7, "2"), Some(-3));
        assert_eq!(op("mod", 7, "0"), Some(0));
        assert_eq!(op("mod", -7, "3"), Some(-1));
        assert_eq!(op("mod", 7, "-3"), Some(1));
        assert_eq!(op("mod", MIN, "-1"), Some(0));
    }

    #[test]
    fn bitwise() {
        assert_eq!(op("and", 12, "10"), Some(8));
        assert_eq!(op("or", 12, "3"), Some(15));
        assert_eq!(op("xor", 12, "10"), Some(6));
        assert_eq!(int("cpl", vec![], Sample::Sint(12)), Some(-13));
        assert_eq!(int("neg", vec![], Sample::Sint(5)), Some(-5));
        assert_eq!(int("neg", vec![], Sample::Sint(MIN)), Some(MAX));
    }

    #[test]
    fn booleans() {
        let b = |name: &str, v: i64| run(name, vec![], Sample::Sint(v));
        assert_eq!(b("not", 0), Some(Sample::Bool(true)));
        assert_eq!(b("not", 3), Some(Sample::Bool(false)));
        assert_eq!(b("bool", 0), Some(Sample::Bool(false)));
        assert_eq!(b("bool", -2), Some(Sample::Bool(true)));
        assert_eq!(b("odd", 3), Some(Sample::Bool(true)));
        assert_eq!(b("odd", -3), Some(Sample::Bool(true)));
        assert_eq!(b("odd", 4), Some(Sample::Bool(false)));
        assert_eq!(b("even", 4), Some(Sample::Bool(true)));
        assert_eq!(b("even", -4), Some(Sample::Bool(true)));
        assert_eq!(b("even", 1), Some(Sample::Bool(false)));
    }

    #[test]
    fn variable_operands() {
        assert_eq!(op("add", 3, "txn.i"), Some(45));
        assert_eq!(op("mul", 3, "txn.i"), Some(126));
        assert_eq!(op("add", 3, "txn.v"), Some(3));
        assert_eq!(op("add", 3, "txn.nope"), None);
        assert!(matches!(check("and", vec![s("proc.x")]).unwrap()[..], [Arg::Var(_)]));
    }

    #[test]
    fn operand_check() {
        for bad in ["x", "12x", " 3", "0x10", "foo.bar", "txn.", "txn.a-b"] {
            assert_eq!(check("add", vec![s(bad)]).unwrap_err(), "expects an integer or a variable name", "{bad}");
        }
        assert!(matches!(check("add", vec![s("-3")]).unwrap()[..], [Arg::Sint(-3)]));
    }
}
