//! String converters: case, length, slicing (`bytes`, `field`, `word`, trims), the
//! Host-header helpers, `iif` and `regsub`. HAProxy counterpart: src/sample.c
//! (`sample_conv_str2lower`, `sample_conv_field`, `sample_conv_regsub` ...).
//!
//! Slicing converters return a borrowed part of their input.

use std::borrow::Cow;
use std::sync::Arc;

use super::{arg_bytes, arg_sint, bytes_of, slice};
use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{Arg, ArgList, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};

// === lower, upper, length ===

fn conv_lower<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let mut b = bytes_of(smp)?;
    if b.iter().any(u8::is_ascii_uppercase) {
        b.to_mut().make_ascii_lowercase();
    }
    Some(Sample::Str(b))
}

fn conv_upper<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let mut b = bytes_of(smp)?;
    if b.iter().any(u8::is_ascii_lowercase) {
        b.to_mut().make_ascii_uppercase();
    }
    Some(Sample::Str(b))
}

fn conv_length<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let b = bytes_of(smp)?;
    Some(Sample::Sint(b.len() as i64))
}

// === bytes ===

/// `bytes(<offset>[,<length>])`: both compared as unsigned, as HAProxy does, so a
/// negative offset gives an empty result and a negative length keeps everything.
fn conv_bytes<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let b = bytes_of(smp)?;
    let len = b.len();
    let off = arg_sint(args, 0).unwrap_or(0) as u64;
    if len as u64 <= off {
        return Some(Sample::Bin(slice(b, len..len)));
    }
    let start = off as usize;
    let mut end = len;
    if let Some(l) = arg_sint(args, 1) {
        if (l as u64) < (len - start) as u64 {
            end = start + l as usize;
        }
    }
    Some(Sample::Bin(slice(b, start..end)))
}

// === field, word ===

/// `field` and `word` arguments: a non-zero index and a non-empty delimiter list.
fn check_field(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    match args.first() {
        Some(Arg::Sint(0)) => return Err("Unexpected value 0 for index".into()),
        Some(Arg::Sint(_)) => {}
        _ => return Err("Unexpected arg type".into()),
    }
    match args.get(1) {
        Some(Arg::Str(d)) if d.is_empty() => Err("Empty separators list".into()),
        Some(Arg::Str(_)) => Ok(()),
        _ => Err("Unexpected arg type".into()),
    }
}

/// The index, delimiters and count of `field`/`word` (count 1 by default; 0 or less:
/// up to the end).
fn field_args(args: &[Arg]) -> Option<(i64, &[u8], i64)> {
    let idx = arg_sint(args, 0).filter(|&i| i != 0)?;
    Some((idx, arg_bytes(args, 1), arg_sint(args, 2).unwrap_or(1)))
}

/// Where field `idx` (1-based, negative from the end) and the `count - 1` following
/// ones are in `s`, fields being separated by any one byte of `delims`. `None`: there
/// are not that many fields.
fn field_range(s: &[u8], idx: i64, delims: &[u8], mut count: i64) -> Option<(usize, usize)> {
    let is_delim = |c: u8| delims.contains(&c);
    if idx > 0 {
        let (mut field, mut start) = (1, 0);
        for (end, &c) in s.iter().enumerate() {
            if !is_delim(c) {
                continue;
            }
            if field == idx {
                if count == 1 {
                    return Some((start, end));
                }
                if count > 1 {
                    count -= 1;
                }
            } else {
                start = end + 1;
                field += 1;
            }
        }
        return (field == idx).then_some((start, s.len()));
    }
    let (mut field, mut end) = (-1, s.len());
    for start in (1..=s.len()).rev() {
        if !is_delim(s[start - 1]) {
            continue;
        }
        if field == idx {
            if count == 1 {
                return Some((start, end));
            }
            if count > 1 {
                count -= 1;
            }
        } else {
            end = start - 1;
            field -= 1;
        }
    }
    (field == idx).then_some((0, end))
}

/// Where word `idx` (1-based, negative from the end) and the `count - 1` following ones
/// are in `s`, words being runs of bytes not in `delims`. `None`: no such word.
fn word_range(s: &[u8], idx: i64, delims: &[u8], mut count: i64) -> Option<(usize, usize)> {
    let is_delim = |c: u8| delims.contains(&c);
    let (mut word, mut inword) = (0i64, false);
    if idx > 0 {
        let mut start = 0;
        for (end, &c) in s.iter().enumerate() {
            let sep = is_delim(c);
            if !inword {
                if !sep {
                    if word != idx {
                        word += 1;
                        start = end;
                    }
                    inword = true;
                }
            } else if sep {
                if word == idx {
                    if count == 1 {
                        return Some((start, end));
                    }
                    if count > 1 {
                        count -= 1;
                    }
                }
                inword = false;
            }
        }
        return (word == idx).then_some((start, s.len()));
    }
    let mut end = s.len();
    for start in (1..=s.len()).rev() {
        let sep = is_delim(s[start - 1]);
        if !inword {
            if !sep {
                if word != idx {
                    word -= 1;
                    end = start;
                }
                inword = true;
            }
        } else if sep {
            if word == idx {
                if count == 1 {
                    return Some((start, end));
                }
                if count > 1 {
                    count -= 1;
                }
            }
            inword = false;
        }
    }
    (word == idx).then_some((0, end))
}

/// `field(<index>,<delimiters>[,<count>])`: absent when there are too few fields.
fn conv_field<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let (idx, delims, count) = field_args(args)?;
    let b = bytes_of(smp)?;
    let (start, end) = field_range(&b, idx, delims, count)?;
    Some(Sample::Str(slice(b, start..end)))
}

/// `word(<index>,<delimiters>[,<count>])`: empty (not absent) when there are too few
/// words, as HAProxy.
fn conv_word<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let (idx, delims, count) = field_args(args)?;
    let b = bytes_of(smp)?;
    let (start, end) = word_range(&b, idx, delims, count).unwrap_or((0, 0));
    Some(Sample::Str(slice(b, start..end)))
}

// === ltrim, rtrim, cut_crlf ===

fn conv_ltrim<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let chars = arg_bytes(args, 0);
    let b = bytes_of(smp)?;
    let start = b.iter().position(|c| !chars.contains(c)).unwrap_or(b.len());
    let len = b.len();
    Some(Sample::Str(slice(b, start..len)))
}

fn conv_rtrim<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let chars = arg_bytes(args, 0);
    let b = bytes_of(smp)?;
    let end = b.iter().rposition(|c| !chars.contains(c)).map_or(0, |p| p + 1);
    Some(Sample::Str(slice(b, 0..end)))
}

fn conv_cut_crlf<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let b = bytes_of(smp)?;
    let end = memchr::memchr2(b'\r', b'\n', &b).unwrap_or(b.len());
    Some(Sample::Str(slice(b, 0..end)))
}

// === host_only, port_only ===

/// Where the port separator of a Host value is: the last `:` not inside `[...]`.
fn host_port_colon(s: &[u8]) -> Option<usize> {
    let p = s.iter().rposition(|&c| c == b':' || c == b']')?;
    (s[p] == b':').then_some(p)
}

/// `host_only`: the Host value without its port, lower-cased.
fn conv_host_only<'a>(a: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let b = bytes_of(smp)?;
    let end = host_port_colon(&b).unwrap_or(b.len());
    conv_lower(a, Sample::Str(slice(b, 0..end)), ctx)
}

/// `port_only`: the port of a Host value, 0 without one. Digits are accumulated
/// without validation into a wrapping 32-bit value, as HAProxy's `strl2ui`.
fn conv_port_only<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let b = bytes_of(smp)?;
    let port = match host_port_colon(&b) {
        Some(p) => b[p + 1..].iter().fold(0u32, |n, &c| n.wrapping_mul(10).wrapping_add(u32::from(c)).wrapping_sub(48)),
        None => 0,
    };
    Some(Sample::Sint(i64::from(port)))
}

// === iif ===

/// `iif(<true>,<false>)`: one of the two argument strings, borrowed.
fn conv_iif<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let v = super::sint_of(&smp)?;
    let pick = if v != 0 { 0 } else { 1 };
    Some(Sample::Str(Cow::Borrowed(arg_bytes(args, pick))))
}

// === regsub ===

/// `regsub` flags: `i` recompiles the regex case-insensitive, `g` becomes
/// `Arg::Sint(1)` in place of the flags (0 without it).
fn check_regsub(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let flags = arg_bytes(args, 2).to_vec();
    let mut glob = false;
    let mut icase = false;
    for &c in &flags {
        match c {
            b'i' => icase = true,
            b'g' => glob = true,
            _ => return Err(format!("invalid regex flag '{}', only 'i' and 'g' are supported", c as char)),
        }
    }
    if icase {
        if let Some(Arg::Regex(re)) = args.first() {
            let re = regex::bytes::RegexBuilder::new(re.as_str())
                .case_insensitive(true)
                .build()
                .map_err(|e| format!("regex '{}' is invalid ({e})", re.as_str()))?;
            args[0] = Arg::Regex(Arc::new(re));
        }
    }
    args.truncate(2);
    args.push(Arg::Sint(i64::from(glob)));
    Ok(())
}

/// Appends `subst` to `out`, `\0`..`\9` replaced by the groups of `caps` (nothing for
/// a group that did not match), `\xHH` by that byte, `\c` by `c`. A trailing lone
/// backslash or a cut `\x` ends the replacement (HAProxy's `exp_replace` fails there).
fn expand(out: &mut Vec<u8>, subst: &[u8], hay: &[u8], caps: &regex::bytes::Captures<'_>) {
    let mut i = 0;
    while i < subst.len() {
        let c = subst[i];
        i += 1;
        if c != b'\\' {
            out.push(c);
            continue;
        }
        let Some(&n) = subst.get(i) else { return };
        i += 1;
        if n.is_ascii_digit() {
            if let Some(m) = caps.get(usize::from(n - b'0')) {
                out.extend_from_slice(&hay[m.range()]);
            }
        } else if n == b'x' {
            let (Some(&h1), Some(&h2)) = (subst.get(i), subst.get(i + 1)) else { return };
            i += 2;
            out.push((hexval(h1) << 4).wrapping_add(hexval(h2)));
        } else {
            out.push(n);
        }
    }
}

/// One hex digit as `exp_replace` reads it (no validation, as HAProxy).
fn hexval(c: u8) -> u8 {
    let v = c.to_ascii_uppercase().wrapping_sub(b'0');
    if v > 9 {
        v.wrapping_sub(b'A' - b'9' - 1)
    } else {
        v
    }
}

/// `regsub(<regex>,<subst>[,<flags>])`: replaces the first match (every match with
/// `g`), as HAProxy's loop does, including how it steps over empty matches.
///
/// COMPAT: HAProxy runs PCRE on the remaining text with `REG_NOTBOL`; rampart searches
/// the whole input from the current position, so `^` behaves the same but look-behind
/// constructs such as `\b` also see the bytes before the position.
fn conv_regsub<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let Some(Arg::Regex(re)) = args.first() else { return None };
    let subst = arg_bytes(args, 1);
    let subst = &subst[..memchr::memchr(0, subst).unwrap_or(subst.len())];
    let glob = arg_sint(args, 2).unwrap_or(0) != 0;
    let b = bytes_of(smp)?;
    let hay: &[u8] = &b;
    let mut out = Vec::with_capacity(hay.len());
    let mut start = 0;
    let mut first = true;
    loop {
        let caps = if glob || first { re.captures_at(hay, start) } else { None };
        let Some(caps) = caps else {
            out.extend_from_slice(&hay[start..]);
            break;
        };
        let m = caps.get(0)?;
        out.extend_from_slice(&hay[start..m.start()]);
        expand(&mut out, subst, hay, &caps);
        if start >= hay.len() {
            break;
        }
        let mut next = m.end();
        if next == start {
            out.push(hay[start]);
            next += 1;
        }
        start = next;
        first = false;
    }
    Some(Sample::Str(Cow::Owned(out)))
}

use ArgT::{Regex as REG, Sint as SINT, Str as STR};
use SmpType::{Bin, Bool, Sint, Str};

pub const KEYWORDS: &[ConvKw] = &[
    ConvKw::new("lower", ArgSpec::NONE, Str, Str, conv_lower),
    ConvKw::new("upper", ArgSpec::NONE, Str, Str, conv_upper),
    ConvKw::new("length", ArgSpec::NONE, Str, Sint, conv_length),
    ConvKw::new("bytes", ArgSpec::new(&[SINT, SINT], 1), Bin, Bin, conv_bytes),
    ConvKw::new("field", ArgSpec::new(&[SINT, STR, SINT], 2), Str, Str, conv_field).check(check_field),
    ConvKw::new("word", ArgSpec::new(&[SINT, STR, SINT], 2), Str, Str, conv_word).check(check_field),
    ConvKw::new("ltrim", ArgSpec::new(&[STR], 1), Str, Str, conv_ltrim),
    ConvKw::new("rtrim", ArgSpec::new(&[STR], 1), Str, Str, conv_rtrim),
    ConvKw::new("cut_crlf", ArgSpec::NONE, Str, Str, conv_cut_crlf),
    ConvKw::new("host_only", ArgSpec::NONE, Str, Str, conv_host_only),
    ConvKw::new("port_only", ArgSpec::NONE, Str, Sint, conv_port_only),
    ConvKw::new("iif", ArgSpec::new(&[STR, STR], 2), Bool, Str, conv_iif),
    ConvKw::new("regsub", ArgSpec::new(&[REG, STR, STR], 2), Str, Str, conv_regsub).check(check_regsub),
];

#[cfg(test)]
#[path = "string_tests.rs"]
mod tests;
