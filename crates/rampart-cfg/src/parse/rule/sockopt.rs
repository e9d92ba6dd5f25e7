//! `set-mark`, `set-tos` (HAProxy 2.6) and their HAProxy 3.x names `set-fc-mark`,
//! `set-fc-tos`: a socket option of the client connection; `set-bc-mark`, `set-bc-tos`
//! (3.x): the same of the server connection (the same arguments as `set-fc-*`).
//!
//! HAProxy counterparts: `tcp_parse_set_mark()` and `tcp_parse_set_tos()`
//! (src/tcp_act.c, 2.6); 3.x reads a number or a sample expression there.

use crate::model::{FcOpt, FcSockOpt, FcValue};

use super::{invalid, ActResult, Args};

/// The arguments of `name`, one of the four actions.
pub(super) fn parse_fc(a: &mut Args<'_>, name: &str) -> ActResult<FcSockOpt> {
    let what = if name.ends_with("mark") { FcOpt::Mark } else { FcOpt::Tos };
    let v3 = name.starts_with("set-fc-") || name.starts_with("set-bc-");
    let value = if v3 { v3_value(a)? } else { v26_value(a, what)? };
    Ok(FcSockOpt { what, value, v3 })
}

/// 2.6: one integer, read as C's `strtoul()`/`strtol()` with base 0 (`0x` hex, `0` octal).
fn v26_value(a: &mut Args<'_>, what: FcOpt) -> ActResult<FcValue> {
    let text = a.next();
    if text.is_empty() {
        return invalid("expects exactly 1 argument (integer/hex value)");
    }
    let (v, rest) = c_strtol(text);
    if !rest.is_empty() {
        return invalid(format!("invalid character starting at '{rest}' (integer/hex value expected)"));
    }
    // the value goes to setsockopt() as a C int, as in HAProxy
    let v = match what {
        FcOpt::Mark => v as u32,
        FcOpt::Tos => v as i32 as u32,
    };
    Ok(FcValue::Int(v))
}

/// 3.x: a number, else a sample expression.
fn v3_value(a: &mut Args<'_>) -> ActResult<FcValue> {
    let text = a.peek(0);
    if text.is_empty() {
        return invalid("expects an argument");
    }
    match c_strtol(text) {
        (v, "") if text.starts_with(|c: char| c.is_ascii_digit()) => {
            a.next();
            Ok(FcValue::Int(v as u32))
        }
        _ => Ok(FcValue::Expr(a.expr()?)),
    }
}

/// C's `strtol(text, &end, 0)`: the value and what follows the number.
fn c_strtol(text: &str) -> (i64, &str) {
    let t = text.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) =
        if t.len() > 2 && (t.starts_with("0x") || t.starts_with("0X")) && t.as_bytes()[2].is_ascii_hexdigit() {
            (16, &t[2..])
        } else if t.starts_with('0') {
            (8, t)
        } else {
            (10, t)
        };
    let end = digits.find(|c: char| !c.is_digit(radix)).unwrap_or(digits.len());
    if end == 0 {
        return (0, text);
    }
    let mut v: i64 = 0;
    for c in digits[..end].chars() {
        v = v.saturating_mul(i64::from(radix)).saturating_add(i64::from(c.to_digit(radix).unwrap_or(0)));
    }
    (if neg { v.wrapping_neg() } else { v }, &digits[end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_c_does() {
        assert_eq!(c_strtol("12"), (12, ""));
        assert_eq!(c_strtol("0x1f"), (31, ""));
        assert_eq!(c_strtol("010"), (8, ""));
        assert_eq!(c_strtol("12x"), (12, "x"));
        assert_eq!(c_strtol("-1"), (-1, ""));
        assert_eq!(c_strtol("x"), (0, "x"));
        assert_eq!(c_strtol("0"), (0, ""));
    }
}
