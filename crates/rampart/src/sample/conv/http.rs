//! HTTP-flavoured string converters: URL decoding and encoding, Accept-Language
//! choice. HAProxy counterparts: src/http_conv.c (`sample_conv_url_dec`,
//! `sample_conv_url_enc`, `sample_conv_q_preferred`), `url_decode()` (src/tools.c),
//! `http_parse_qvalue()` and `http_language_range_match()` (src/http.c).
//! `http_date` lives with the other date converters in `time.rs`.

use std::borrow::Cow;

use super::{arg_bytes, arg_sint, bytes_of, new_str, slice};
use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{Arg, ArgList, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};

// === url_dec ===

fn hexval(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Decodes `%XX` escapes, and `+` into a space when `in_form` or once a `?` was seen.
/// `None` on a `%` not followed by two hex digits. Stops at a NUL byte, as HAProxy's
/// `url_decode` works on a C string.
fn url_decode(s: &[u8], mut in_form: bool) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while let Some(&c) = s.get(i).filter(|&&c| c != 0) {
        match c {
            b'+' => out.push(if in_form { b' ' } else { b'+' }),
            b'%' => {
                let hi = hexval(*s.get(i + 1)?)?;
                let lo = hexval(*s.get(i + 2)?)?;
                out.push((hi << 4) | lo);
                i += 2;
            }
            b'?' => {
                in_form = true;
                out.push(c);
            }
            _ => out.push(c),
        }
        i += 1;
    }
    Some(out)
}

/// `url_dec([<in_form>])`; an input without `%` or `+` is returned as is.
fn conv_url_dec<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let in_form = arg_sint(args, 0).unwrap_or(0) != 0;
    let b = bytes_of(smp)?;
    let end = memchr::memchr(0, &b).unwrap_or(b.len());
    if memchr::memchr2(b'%', b'+', &b[..end]).is_none() {
        return Some(Sample::Str(slice(b, 0..end)));
    }
    Some(new_str(url_decode(&b, in_form)?))
}

// === url_enc ===

/// `url_enc([<enc_type>])`: only `query` (the default) exists.
fn check_url_enc(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    match arg_bytes(args, 0) {
        b"" | b"query" => {
            args.clear();
            args.push(Arg::Sint(0));
            Ok(())
        }
        _ => Err("Unexpected encode type. Allowed value is 'query'".into()),
    }
}

/// Percent-encodes every byte but the RFC 3986 unreserved ones.
fn conv_url_enc<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let keep = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~');
    let b = bytes_of(smp)?;
    if b.iter().all(|&c| keep(c)) {
        return Some(Sample::Str(b));
    }
    let mut out = Vec::with_capacity(b.len() * 3);
    for &c in b.iter() {
        if keep(c) {
            out.push(c);
        } else {
            out.extend_from_slice(&[b'%', HEX[usize::from(c >> 4)], HEX[usize::from(c & 15)]]);
        }
    }
    Some(new_str(out))
}

// === language ===

/// A q-value in thousandths, read as HAProxy's `http_parse_qvalue` (including its
/// step over the byte after the first digit whatever it is). Returns it and the
/// position after what was read.
pub(crate) fn parse_qvalue(s: &[u8], mut p: usize) -> (u32, usize) {
    let digit = |p: usize| s.get(p).filter(|c| c.is_ascii_digit()).map(|c| u32::from(c - b'0'));
    let mut q = 1000;
    if let Some(d) = digit(p) {
        q = d * 1000;
        p += 1;
        let dot = s.get(p) == Some(&b'.');
        p += 1;
        if dot {
            for scale in [100, 10, 1] {
                let Some(d) = digit(p) else { break };
                q += d * scale;
                p += 1;
            }
        }
    }
    (q.min(1000), p)
}

/// Whether language range `range` (from the header) names `tag` (from the list): equal,
/// or `tag` followed by a `-variant` in the range.
fn range_match(range: &[u8], tag: &[u8]) -> bool {
    match range.strip_prefix(tag) {
        Some(rest) => rest.is_empty() || rest[0] == b'-',
        None => false,
    }
}

/// The part of `list` (`;`-separated) that `token` matches, as a range of `list`.
fn find_tag(list: &[u8], token: &[u8]) -> Option<(usize, usize)> {
    let mut w = 0;
    for (i, &c) in list.iter().chain(std::iter::once(&b';')).enumerate() {
        if c == b';' {
            if range_match(token, &list[w..i]) {
                return Some((w, i));
            }
            w = i + 1;
        }
    }
    None
}

/// The language of the `;`-separated `list` that the Accept-Language value `al`
/// prefers (highest q-value, first one on a tie), as a range of `list`.
fn q_preferred(al: &[u8], list: &[u8]) -> Option<(usize, usize)> {
    let end = al.len();
    let is_space = |c: u8| c == b' ' || (b'\t'..=b'\r').contains(&c);
    let skip_spaces = |mut p: usize| {
        while p < end && is_space(al[p]) {
            p += 1;
        }
        p
    };
    let (mut best, mut best_q) = (None, 0);
    let mut p = 0;
    loop {
        p = skip_spaces(p);
        if p >= end {
            break;
        }
        let token = p;
        while p < end && !matches!(al[p], b';' | b',') && !is_space(al[p]) {
            p += 1;
        }
        if let Some(tag) = (p > token).then(|| find_tag(list, &al[token..p])).flatten() {
            let (q, next, counts) = read_q(al, p, &skip_spaces);
            p = next;
            if counts && q > best_q {
                best = Some(tag);
                if q >= 1000 {
                    break;
                }
                best_q = q;
            }
        }
        while p < end && al[p] != b',' {
            p += 1;
        }
        if p >= end {
            break;
        }
        p += 1;
    }
    best
}

/// After a matching token at `p`: its q-value (1000 by default), the position after
/// it, and whether the token counts (it does not when followed by something else
/// than `,` or `;`).
fn read_q(al: &[u8], mut p: usize, skip_spaces: &dyn Fn(usize) -> usize) -> (u32, usize, bool) {
    p = skip_spaces(p);
    match al.get(p) {
        None | Some(b',') => return (1000, p, true),
        Some(b';') => p += 1,
        Some(_) => return (0, p, false),
    }
    for expect in [b'q', b'='] {
        p = skip_spaces(p);
        if al.get(p) != Some(&expect) {
            return (1000, p, true);
        }
        p += 1;
    }
    p = skip_spaces(p);
    if p >= al.len() {
        return (1000, p, true);
    }
    let (q, p) = parse_qvalue(al, p);
    (q, p, true)
}

/// `language(<value>[,<default>])`: one of the listed languages (borrowed from the
/// argument), else the default, else absent.
fn conv_language<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let list = arg_bytes(args, 0);
    let list = &list[..memchr::memchr(0, list).unwrap_or(list.len())];
    let al = bytes_of(smp)?;
    let found = q_preferred(&al, list).map(|(s, e)| &list[s..e]).filter(|l| !l.is_empty());
    let out = found.or_else(|| matches!(args.get(1), Some(Arg::Str(_))).then(|| arg_bytes(args, 1)))?;
    (!out.is_empty()).then_some(Sample::Str(Cow::Borrowed(out)))
}

use ArgT::{Sint as SINT, Str as STR};
use SmpType::Str;

pub const KEYWORDS: &[ConvKw] = &[
    ConvKw::new("url_dec", ArgSpec::new(&[SINT], 0), Str, Str, conv_url_dec),
    ConvKw::new("url_enc", ArgSpec::new(&[STR], 1), Str, Str, conv_url_enc).check(check_url_enc),
    ConvKw::new("language", ArgSpec::new(&[STR, STR], 1), Str, Str, conv_language),
];

#[cfg(test)]
mod tests {
    //! Expected values from haproxy 2.6.12 (`str(...),<conv>` through `lf-string`).
    use super::super::testing::{check, i, s, st, text};

    #[test]
    fn url_dec() {
        assert_eq!(text("url_dec", vec![], st("a%20b+c")).as_deref(), Some("a b+c"));
        assert_eq!(text("url_dec", vec![i(1)], st("a%20b+c")).as_deref(), Some("a b c"));
        assert_eq!(text("url_dec", vec![i(0)], st("a%20b+c")).as_deref(), Some("a b+c"));
        assert_eq!(text("url_dec", vec![], st("a+b?c+d")).as_deref(), Some("a+b?c d"));
        assert_eq!(text("url_dec", vec![], st("%41%4a")).as_deref(), Some("AJ"));
        assert_eq!(text("url_dec", vec![], st("a%00b")).as_deref(), Some("a\0b"));
        assert_eq!(text("url_dec", vec![], st("a\0%41")).as_deref(), Some("a"));
        assert_eq!(text("url_dec", vec![], st("plain")).as_deref(), Some("plain"));
        assert_eq!(text("url_dec", vec![], st("a%2")), None);
        assert_eq!(text("url_dec", vec![], st("a%zz")), None);
    }

    #[test]
    fn url_enc() {
        assert_eq!(
            text("url_enc", vec![s("")], st("a b/c?d=é&~._-")).as_deref(),
            Some("a%20b%2Fc%3Fd%3D%C3%A9%26~._-")
        );
        assert_eq!(text("url_enc", vec![s("query")], st("abc")).as_deref(), Some("abc"));
        assert_eq!(text("url_enc", vec![s("")], st("\0")).as_deref(), Some("%00"));
        assert_eq!(check("url_enc", vec![s("foo")]).unwrap_err(), "Unexpected encode type. Allowed value is 'query'");
    }

    fn lang(al: &str, list: &str, default: Option<&str>) -> Option<String> {
        let mut args = vec![s(list)];
        args.extend(default.map(s));
        text("language", args, st(al))
    }

    #[test]
    fn language() {
        let al = "fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5";
        assert_eq!(lang(al, "es;fr;en", None).as_deref(), Some("fr"));
        assert_eq!(lang("fr-CH, fr;q=0.9, en;q=0.8", "fr-CH;en", None).as_deref(), Some("fr-CH"));
        assert_eq!(lang("en;q=0.8, es;q=0.9", "es;fr;en", None).as_deref(), Some("es"));
        assert_eq!(lang("de", "es;fr;en", None), None);
        assert_eq!(lang("de", "es;fr;en", Some("zz")).as_deref(), Some("zz"));
        assert_eq!(lang("en-US", "en", None).as_deref(), Some("en"));
        assert_eq!(lang("en", "en-US", None), None);
        assert_eq!(lang("en;q=0", "en", Some("zz")).as_deref(), Some("zz"));
        assert_eq!(lang("en;q=0.0001, fr;q=0.001", "en;fr", None).as_deref(), Some("fr"));
        assert_eq!(lang("en;q=1.5, fr", "en;fr", None).as_deref(), Some("en"));
        assert_eq!(lang("en ; q = 0.5, fr;q=0.4", "en;fr", None).as_deref(), Some("en"));
        assert_eq!(lang("en;x=1;q=0.5, fr;q=0.6", "en;fr", None).as_deref(), Some("en"));
        assert_eq!(lang("", "en", Some("zz")).as_deref(), Some("zz"));
        assert_eq!(lang("*", "en", None), None);
        assert_eq!(lang("en;q=0.5,fr;q=0.5", "fr;en", None).as_deref(), Some("en"));
    }
}
