//! `json_query(<json_path>[,<output_type>])`: the value a JSONPath designates in a
//! JSON text (a request body, a decoded JWT part ...). HAProxy counterpart:
//! `sample_conv_json_query` in src/sample.c, over mjson; the scan and path rules are
//! in [`super::json_scan`].
//!
//! What comes out, as in HAProxy 2.6:
//! - a string: its text, unescaped (`\uXXXX` only for `\u00XX`; any other escape than
//!   `\" \\ \b \f \n \r \t` fails), borrowed from the input when it has no escape;
//! - a number: as C's `%g` prints mjson's double (`4.5`, `1.23457e+06`), or with
//!   `int`, as `strtoll(..., 0)` reads its text (so `012` is octal), and only within
//!   ±(2^53 - 1);
//! - `true`/`false`: a boolean;
//! - `null`, an object, an array, or nothing: no value.

use std::borrow::Cow;

use super::json_scan::{self, Tok};
use super::{arg_bytes, bytes_of, slice};
use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{Arg, ArgList, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};

/// Integers beyond this are refused (RFC 7159 §6 interoperable range).
const JSON_INT_MAX: i64 = (1 << 53) - 1;

/// `json_query` arguments: a non-empty path; an output type that can only be `int`,
/// compiled to `Arg::Sint(1)`.
fn check_json_query(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    if arg_bytes(args, 0).is_empty() {
        return Err("json_path must not be empty".into());
    }
    match args.get(1) {
        Some(Arg::Str(t)) if t.is_empty() => {
            args.truncate(1);
        }
        Some(Arg::Str(t)) if **t == *b"int" => args[1] = Arg::Sint(1),
        Some(Arg::Str(_)) => return Err("output_type only supports \"int\" as argument".into()),
        _ => {}
    }
    Ok(())
}

pub(super) fn conv_json_query<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let as_int = matches!(args.get(1), Some(Arg::Sint(_)));
    let b = bytes_of(smp)?;
    let (tok, start, len) = json_scan::find(&b, arg_bytes(args, 0))?;
    match tok {
        Tok::Num if as_int => {
            let n = strtoll(&b[start..]);
            (-JSON_INT_MAX..=JSON_INT_MAX).contains(&n).then_some(Sample::Sint(n))
        }
        Tok::Num => Some(Sample::Str(Cow::Owned(fmt_g(json_scan::strtod(&b[start..]).0).into_bytes()))),
        Tok::True => Some(Sample::Bool(true)),
        Tok::False => Some(Sample::Bool(false)),
        Tok::Str => {
            let body = start + 1..start + len - 1;
            if memchr::memchr(b'\\', &b[body.clone()]).is_none() {
                return (body.len() < ctx.rt.bufsize()).then(|| Sample::Str(slice(b, body)));
            }
            unescape(&b[body], ctx.rt.bufsize()).map(|v| Sample::Str(Cow::Owned(v)))
        }
        _ => None,
    }
}

// === strings ===

/// The value of one hex digit as mjson reads it (no validation: other characters
/// give whatever the arithmetic gives).
fn hex_nibble(c: u8) -> u8 {
    let c = i32::from(c as i8);
    let v = match c {
        0x30..=0x39 => c - 0x30,
        0x41..=0x46 => c - 0x37,
        _ => c - 0x57,
    };
    v as u8
}

/// A JSON string body with its escapes decoded (mjson's `mjson_unescape`), `None`
/// when an escape is not supported or the result would not fit in `cap - 1` bytes
/// (HAProxy decodes into a `tune.bufsize` chunk).
fn unescape(s: &[u8], cap: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len().min(cap));
    let mut i = 0;
    while i < s.len() && out.len() < cap {
        if s[i] == b'\\' && i + 5 < s.len() && s[i + 1] == b'u' {
            if s[i + 2] != b'0' || s[i + 3] != b'0' {
                return None;
            }
            out.push((hex_nibble(s[i + 4]) << 4) | hex_nibble(s[i + 5]));
            i += 6;
        } else if s[i] == b'\\' && i + 1 < s.len() {
            out.push(match s[i + 1] {
                b'b' => 0x08,
                b'f' => 0x0C,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'\\' => b'\\',
                b'"' => b'"',
                _ => return None,
            });
            i += 2;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    (out.len() < cap).then_some(out)
}

// === numbers ===

/// C's `strtoll(s, NULL, 0)`: optional blanks and sign, then hexadecimal after `0x`,
/// octal after `0`, else decimal, up to the first other byte; saturates on overflow.
fn strtoll(s: &[u8]) -> i64 {
    let mut i = s.iter().take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')).count();
    let neg = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let hex_next = s.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
    let base: u64 = match (s.get(i), s.get(i + 1)) {
        (Some(b'0'), Some(b'x' | b'X')) if hex_next => {
            i += 2;
            16
        }
        (Some(b'0'), _) => 8,
        _ => 10,
    };
    let mut mag: u64 = 0;
    let mut over = false;
    for &c in &s[i.min(s.len())..] {
        let Some(d) = (c as char).to_digit(base as u32) else { break };
        match mag.checked_mul(base).and_then(|m| m.checked_add(u64::from(d))) {
            Some(m) => mag = m,
            None => over = true,
        }
    }
    match (neg, over) {
        (false, true) => i64::MAX,
        (true, true) => i64::MIN,
        (false, false) => i64::try_from(mag).unwrap_or(i64::MAX),
        (true, false) => 0i64.checked_sub_unsigned(mag).unwrap_or(i64::MIN),
    }
}

/// C's `printf("%g")`: six significant digits, the exponent form below 1e-4 or from
/// 1e6, trailing zeros removed; `inf`, `nan` (with their sign, as glibc).
fn fmt_g(d: f64) -> String {
    let sign = if d.is_sign_negative() { "-" } else { "" };
    if d.is_nan() {
        return format!("{sign}nan");
    }
    if d.is_infinite() {
        return format!("{sign}inf");
    }
    if d == 0.0 {
        return format!("{sign}0");
    }
    // The exponent %e would print with 6 significant digits (after rounding).
    let e_form = format!("{:.5e}", d.abs());
    let (mant, exp) = e_form.split_once('e').unwrap_or((&e_form, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        let fixed = format!("{:.*}", (5 - exp) as usize, d.abs());
        return format!("{sign}{}", trim_zeros(&fixed));
    }
    let esign = if exp < 0 { '-' } else { '+' };
    format!("{sign}{}e{esign}{:02}", trim_zeros(mant), exp.abs())
}

/// `1.500` → `1.5`, `2.000` → `2`; no change without a decimal point.
fn trim_zeros(s: &str) -> &str {
    if !s.contains('.') {
        return s;
    }
    s.trim_end_matches('0').trim_end_matches('.')
}

pub const KEYWORDS: &[ConvKw] =
    &[ConvKw::new("json_query", ArgSpec::new(&[ArgT::Str, ArgT::Str], 1), SmpType::Str, SmpType::Any, conv_json_query)
        .check(check_json_query)];

#[cfg(test)]
#[path = "json_query_tests.rs"]
mod tests;
