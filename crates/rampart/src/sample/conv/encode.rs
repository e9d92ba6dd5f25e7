//! Encodings: base64 (standard and URL-safe), hex, big-endian dumps, `htonl`, JSON
//! string escaping. HAProxy counterparts: src/sample.c (`sample_conv_bin2base64`,
//! `sample_conv_bin2hex`, `sample_conv_be2dec`, `sample_conv_json` ...), src/base64.c,
//! `utf8_next()` (src/tools.c).

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::{DecodePaddingMode, Engine};

use super::{arg_bytes, arg_sint, bytes_of, new_bin, new_str, sint_of};
use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{Arg, ArgList, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};

// === base64 ===

/// Standard alphabet, `=` padding required on decode; bits left over in the last
/// character are ignored, as HAProxy's `base64dec`.
const B64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
);

/// URL-safe alphabet without padding (HAProxy's `a2base64url`, `base64urldec`).
const UB64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone),
);

/// Decodes standard base64 (also used for `hmac` keys). `None`: not base64.
///
/// COMPAT: HAProxy's decoder also accepts padding in the middle (`YQ==YQ==` gives
/// `aa`) and a lone character with three `=`; rampart refuses these malformed inputs.
pub(super) fn b64_decode(s: &[u8]) -> Option<Vec<u8>> {
    B64.decode(s).ok()
}

fn conv_base64<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    Some(new_str(B64.encode(bytes_of(smp)?).into_bytes()))
}

fn conv_b64dec<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    Some(new_bin(b64_decode(&bytes_of(smp)?)?))
}

fn conv_ub64enc<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    Some(new_str(UB64.encode(bytes_of(smp)?).into_bytes()))
}

/// Decodes base64url without padding (HAProxy's `base64urldec`, JWT parts).
pub(super) fn ub64_decode(s: &[u8]) -> Option<Vec<u8>> {
    UB64.decode(s).ok()
}

/// COMPAT: HAProxy decodes a 4-character group holding `=` into garbage bytes;
/// rampart fails as for any character outside the URL-safe alphabet.
fn conv_ub64dec<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    Some(new_bin(ub64_decode(&bytes_of(smp)?)?))
}

// === hex, hex2i ===

const HEX: &[u8; 16] = b"0123456789ABCDEF";

fn push_hex(out: &mut Vec<u8>, c: u8) {
    out.push(HEX[usize::from(c >> 4)]);
    out.push(HEX[usize::from(c & 15)]);
}

/// `hex`: two upper-case digits per byte.
fn conv_hex<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let b = bytes_of(smp)?;
    let mut out = Vec::with_capacity(b.len() * 2);
    b.iter().for_each(|&c| push_hex(&mut out, c));
    Some(new_str(out))
}

/// `hex2i`: hex digits to an integer (wrapping past 16 digits); fails on any other
/// byte; empty gives 0.
fn conv_hex2i<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let b = bytes_of(smp)?;
    let mut n: i64 = 0;
    for &c in b.iter() {
        let d = (c as char).to_digit(16)?;
        n = n.wrapping_shl(4) | i64::from(d);
    }
    Some(Sample::Sint(n))
}

// === be2dec, be2hex ===

/// `be2dec(<separator>,<chunk_size>[,<truncate>])`: chunk size 1..8, truncate 0 or 1.
fn check_be2dec(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let chunk = arg_sint(args, 1).unwrap_or(0);
    if !(1..=8).contains(&chunk) {
        return Err(format!("chunk_size out of [1..8] range ({chunk})"));
    }
    check_truncate(args)
}

/// `be2hex([<separator>],[<chunk_size>],[<truncate>])`: a positive chunk size when
/// there is a separator or truncation.
fn check_be2hex(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let chunk = arg_sint(args, 1).unwrap_or(0);
    if chunk <= 0 && (!arg_bytes(args, 0).is_empty() || arg_sint(args, 2).unwrap_or(0) != 0) {
        return Err(format!("chunk_size needs to be positive ({chunk})"));
    }
    check_truncate(args)
}

fn check_truncate(args: &[Arg]) -> Result<(), String> {
    match arg_sint(args, 2).unwrap_or(0) {
        0 | 1 => Ok(()),
        t => Err(format!("Unsupported truncate value ({t})")),
    }
}

/// Calls `emit` on each chunk of `b`, `sep` written between them, a short last chunk
/// dropped when `truncate`.
fn chunks(
    b: &[u8],
    chunk: usize,
    truncate: bool,
    sep: &[u8],
    out: &mut Vec<u8>,
    mut emit: impl FnMut(&[u8], &mut Vec<u8>),
) {
    for (n, c) in b.chunks(chunk).enumerate() {
        if truncate && c.len() < chunk {
            break;
        }
        if n > 0 {
            out.extend_from_slice(sep);
        }
        emit(c, out);
    }
}

fn conv_be2dec<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let chunk = usize::try_from(arg_sint(args, 1)?).ok().filter(|c| (1..=8).contains(c))?;
    let truncate = arg_sint(args, 2).unwrap_or(0) != 0;
    let b = bytes_of(smp)?;
    let mut out = Vec::new();
    chunks(&b, chunk, truncate, arg_bytes(args, 0), &mut out, |c, out| {
        let n = c.iter().fold(0u64, |n, &x| (n << 8) | u64::from(x));
        out.extend_from_slice(n.to_string().as_bytes());
    });
    Some(new_str(out))
}

fn conv_be2hex<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let sep = arg_bytes(args, 0);
    let truncate = arg_sint(args, 2).unwrap_or(0) != 0;
    let b = bytes_of(smp)?;
    let chunk = match usize::try_from(arg_sint(args, 1).unwrap_or(0)) {
        Ok(c) if c > 0 && (!sep.is_empty() || truncate) => c,
        _ => b.len().max(1),
    };
    let mut out = Vec::with_capacity(b.len() * 2);
    chunks(&b, chunk, truncate, sep, &mut out, |c, out| c.iter().for_each(|&x| push_hex(out, x)));
    Some(new_str(out))
}

// === htonl ===

/// `htonl`: the integer's low 32 bits in network order.
fn conv_htonl<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let v = sint_of(&smp)? as u32;
    Some(new_bin(v.to_be_bytes().to_vec()))
}

// === json ===

/// How `json` reads its input (HAProxy's `enum input_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsonInput {
    Ascii = 0,
    Utf8,
    /// Drops bad characters.
    Utf8S,
    /// Accepts overlong encodings.
    Utf8P,
    Utf8PS,
}

/// The input code name becomes `Arg::Sint(<JsonInput>)`.
fn check_json(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let mode = match arg_bytes(args, 0) {
        b"" | b"ascii" => JsonInput::Ascii,
        b"utf8" => JsonInput::Utf8,
        b"utf8s" => JsonInput::Utf8S,
        b"utf8p" => JsonInput::Utf8P,
        b"utf8ps" => JsonInput::Utf8PS,
        _ => {
            return Err(
                "Unexpected input code type. Allowed value are 'ascii', 'utf8', 'utf8s', 'utf8p' and 'utf8ps'".into()
            )
        }
    };
    args.clear();
    args.push(Arg::Sint(mode as i64));
    Ok(())
}

/// UTF-8 decoding problems, as HAProxy's `UTF8_CODE_*` bits.
const OVERLONG: u8 = 1;
const INVRANGE: u8 = 2;
const BADSEQ: u8 = 4;

/// Decodes one character at the start of `s` the way HAProxy's `utf8_next` does
/// (sequences up to 6 bytes): returns the code point, the problem bits and the bytes
/// consumed (at least 1).
fn utf8_next(s: &[u8]) -> (u32, u8, usize) {
    let lead = s[0];
    let (mut c, extra) = match lead {
        0x00..=0x7f => return (u32::from(lead), 0, 1),
        0xc0..=0xdf => (u32::from(lead & 0x1f), 1),
        0xe0..=0xef => (u32::from(lead & 0x0f), 2),
        0xf0..=0xf7 => (u32::from(lead & 0x07), 3),
        0xf8..=0xfb => (u32::from(lead & 0x03), 4),
        0xfc..=0xfd => (u32::from(lead & 0x01), 5),
        _ => return (u32::from(lead), BADSEQ, 1),
    };
    if s.len() <= extra {
        return (u32::from(lead), BADSEQ, 1);
    }
    for (i, &b) in s[1..=extra].iter().enumerate() {
        if b & 0xc0 != 0x80 {
            return (c, BADSEQ, i + 1);
        }
        c = (c << 6) | u32::from(b & 0x3f);
    }
    let len = extra + 1;
    let mut code = 0;
    let min_len = match c {
        0..=0x7f => 1,
        0x80..=0x7ff => 2,
        0x800..=0xffff => 3,
        0x10000..=0x1f_ffff => 4,
        _ => len,
    };
    if len > min_len {
        code |= OVERLONG;
    }
    if (0xd800..=0xdfff).contains(&c) || (0xfffe..=0xffff).contains(&c) {
        code |= INVRANGE;
    }
    (c, code, len)
}

/// Appends the JSON escape of character `c`: the short escapes, `\/`, and `\uXXXX`
/// for anything outside printable ASCII.
fn push_json(out: &mut Vec<u8>, c: u32) {
    let short = match c {
        0x22 => Some(b'"'),
        0x5c => Some(b'\\'),
        0x2f => Some(b'/'),
        0x08 => Some(b'b'),
        0x0c => Some(b'f'),
        0x0d => Some(b'r'),
        0x0a => Some(b'n'),
        0x09 => Some(b't'),
        _ => None,
    };
    if let Some(e) = short {
        out.extend_from_slice(&[b'\\', e]);
    } else if (0x20..0x7f).contains(&c) {
        out.push(c as u8);
    } else {
        out.extend_from_slice(format!("\\u{:04x}", c as u16).as_bytes());
    }
}

/// `json([<input-code>])`: escapes the input for a JSON string. Fails in `utf8` and
/// `utf8p` modes on an invalid sequence or a character above U+FFFF (which a single
/// `\u` escape cannot carry); the `s` modes drop such characters instead.
fn conv_json<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let mode = arg_sint(args, 0).unwrap_or(0);
    let b = bytes_of(smp)?;
    let mut out = Vec::with_capacity(b.len() + b.len() / 4);
    if mode == JsonInput::Ascii as i64 {
        b.iter().for_each(|&c| push_json(&mut out, u32::from(c)));
        return Some(new_str(out));
    }
    let permissive = mode == JsonInput::Utf8P as i64 || mode == JsonInput::Utf8PS as i64;
    let silent = mode == JsonInput::Utf8S as i64 || mode == JsonInput::Utf8PS as i64;
    let fatal = if permissive { INVRANGE | BADSEQ } else { OVERLONG | INVRANGE | BADSEQ };
    let mut p = 0;
    while p < b.len() {
        let (c, code, len) = utf8_next(&b[p..]);
        p += len;
        if code & fatal != 0 || c > 0xffff {
            if silent {
                continue;
            }
            return None;
        }
        push_json(&mut out, c);
    }
    Some(new_str(out))
}

use ArgT::{Sint as SINT, Str as STR};
use SmpType::{Bin, Sint, Str};

pub const KEYWORDS: &[ConvKw] = &[
    ConvKw::new("base64", ArgSpec::NONE, Bin, Str, conv_base64),
    ConvKw::new("b64dec", ArgSpec::NONE, Str, Bin, conv_b64dec),
    ConvKw::new("ub64enc", ArgSpec::NONE, Bin, Str, conv_ub64enc),
    ConvKw::new("ub64dec", ArgSpec::NONE, Str, Bin, conv_ub64dec),
    ConvKw::new("hex", ArgSpec::NONE, Bin, Str, conv_hex),
    ConvKw::new("hex2i", ArgSpec::NONE, Str, Sint, conv_hex2i),
    ConvKw::new("be2dec", ArgSpec::new(&[STR, SINT, SINT], 1), Bin, Str, conv_be2dec).check(check_be2dec),
    ConvKw::new("be2hex", ArgSpec::new(&[STR, SINT, SINT], 1), Bin, Str, conv_be2hex).check(check_be2hex),
    ConvKw::new("htonl", ArgSpec::NONE, Sint, Bin, conv_htonl),
    ConvKw::new("json", ArgSpec::new(&[STR], 1), Str, Str, conv_json).check(check_json),
];

#[cfg(test)]
#[path = "encode_tests.rs"]
mod tests;
