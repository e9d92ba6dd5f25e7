//! Header and cookie fetches: `req.hdr`, `req.fhdr`, `*_cnt`, `*_ip`, `*_val`,
//! `req.hdr_names`, `req.hdrs`, `req.cook*`, their `res.` forms and HAProxy's older
//! aliases (`hdr`, `shdr`, `cook`, `scook`, `cookie` ...).
//! HAProxy counterpart: src/http_fetch.c (`smp_fetch_hdr`, `smp_fetch_cookie` ...),
//! `http_get_htx_hdr()` (src/http_htx.c), `http_extract_cookie_value()` (src/http.c).
//!
//! Occurrences, as HAProxy: `req.hdr(name,occ)` with `occ > 0` is the occ-th value
//! from the first, `occ < 0` from the last (down to -10), `0` or none every value in
//! turn for ACLs and the last one for a sample. `hdr` splits values at commas
//! (outside quotes), `fhdr` does not. An empty name matches every header.

use std::borrow::Cow;

use crate::http::uri::comma_items;
use crate::http::MsgView;
use crate::sample::cast::{buf_to_ipv4, read_int64};
use crate::sample::ctx::{Dir, SampleCtx};
use crate::sample::expr::CompileCx;
use crate::sample::kw::{uses, Arg, ArgList, ArgSpec, ArgT, FetchKw};
use crate::sample::types::{Sample, SmpType};

use super::Emit;

/// Which message a fetch reads.
const REQ: u8 = 0;
const RES: u8 = 1;
/// The message of the direction being evaluated (`hdr`, `cookie`).
const CHN: u8 = 2;

fn msg<'a>(ctx: &SampleCtx<'a>, which: u8) -> Option<MsgView<'a>> {
    match which {
        REQ => ctx.req,
        RES => ctx.res,
        _ => ctx.msg(),
    }
}

/// HAProxy's `MAX_HDR_HISTORY`: how far back a negative occurrence may go.
const MAX_HDR_HISTORY: i64 = 10;

/// The header name argument (empty: every header).
fn name_arg(args: &[Arg]) -> Option<&[u8]> {
    args.first().and_then(Arg::as_bytes)
}

fn occ_arg(args: &[Arg]) -> i64 {
    args.get(1).and_then(Arg::as_sint).unwrap_or(0)
}

/// The full values of the headers named `name` (all headers when empty).
fn full_values<'a>(m: MsgView<'a>, name: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + Clone + 'a {
    m.head
        .headers
        .iter()
        .filter(|h| !h.drop)
        .map(move |h| (m.bytes(h.name), m.value(h)))
        .filter(move |(n, _)| name.is_empty() || n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

/// Emits the values of `it()` that occurrence `occ` designates.
fn pick<'a, I>(it: impl Fn() -> I, mut occ: i64, iterate: bool, emit: &mut dyn FnMut(&'a [u8]) -> bool)
where
    I: Iterator<Item = &'a [u8]>,
{
    if occ == 0 && !iterate {
        occ = -1;
    }
    if occ == 0 {
        for v in it() {
            if !emit(v) {
                return;
            }
        }
    } else if occ > 0 {
        if let Some(v) = it().nth((occ - 1) as usize) {
            emit(v);
        }
    } else if occ >= -MAX_HDR_HISTORY {
        let n = it().count() as i64;
        if n + occ >= 0 {
            if let Some(v) = it().nth((n + occ) as usize) {
                emit(v);
            }
        }
    }
}

/// `val_hdr`: the occurrence may not go back further than HAProxy remembers.
fn check_hdr(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    match args.get(1).and_then(Arg::as_sint) {
        Some(o) if o < -MAX_HDR_HISTORY => Err(format!("header occurrence must be >= {}", -MAX_HDR_HISTORY)),
        _ => Ok(()),
    }
}

fn fetch_hdr<'a, const M: u8>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let (Some(m), Some(name)) = (msg(ctx, M), name_arg(args)) else { return };
    let it = || full_values(m, name).flat_map(comma_items);
    pick(it, occ_arg(args), ctx.iterate.get(), &mut |v| emit(Sample::str(v)));
}

fn fetch_fhdr<'a, const M: u8>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let (Some(m), Some(name)) = (msg(ctx, M), name_arg(args)) else { return };
    pick(|| full_values(m, name), occ_arg(args), ctx.iterate.get(), &mut |v| emit(Sample::str(v)));
}

fn fetch_hdr_cnt<'a, const M: u8>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(m) = msg(ctx, M) else { return };
    let n = full_values(m, name_arg(args).unwrap_or_default()).flat_map(comma_items).count();
    emit(Sample::Sint(n as i64));
}

fn fetch_fhdr_cnt<'a, const M: u8>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(m) = msg(ctx, M) else { return };
    emit(Sample::Sint(full_values(m, name_arg(args).unwrap_or_default()).count() as i64));
}

/// HAProxy's `strl2ic`: an optional `-`, then digits up to the first non-digit,
/// in 32-bit arithmetic.
pub fn strl2ic(s: &[u8]) -> i64 {
    let (neg, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let mut i: i32 = 0;
    for &c in digits.iter().take_while(|c| c.is_ascii_digit()) {
        let d = i32::from(c - b'0');
        i = if neg { i.wrapping_mul(10).wrapping_sub(d) } else { i.wrapping_mul(10).wrapping_add(d) };
    }
    i64::from(i)
}

fn fetch_hdr_val<'a, const M: u8>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let (Some(m), Some(name)) = (msg(ctx, M), name_arg(args)) else { return };
    let it = || full_values(m, name).flat_map(comma_items);
    pick(it, occ_arg(args), ctx.iterate.get(), &mut |v| emit(Sample::Sint(strl2ic(v))));
}

/// A header value as an address: an IPv4 address alone or with a `:port`, or an
/// IPv6 address (HAProxy's `smp_fetch_hdr_ip`).
pub fn hdr_ip(v: &[u8]) -> Option<Sample<'static>> {
    let dotted = v.iter().take_while(|c| c.is_ascii_digit() || **c == b'.').count();
    if let Some(a) = buf_to_ipv4(&v[..dotted]) {
        if dotted == v.len() {
            return Some(Sample::Ipv4(a));
        }
        if v[dotted] == b':' {
            let port = &v[dotted + 1..];
            if !port.is_empty() && port.iter().all(u8::is_ascii_digit) && read_int64(port).0 <= 65535 {
                return Some(Sample::Ipv4(a));
            }
        }
    }
    std::str::from_utf8(v).ok()?.parse().ok().map(Sample::Ipv6)
}

fn fetch_hdr_ip<'a, const M: u8>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let (Some(m), Some(name)) = (msg(ctx, M), name_arg(args)) else { return };
    let it = || full_values(m, name).flat_map(comma_items);
    // A value that is no address is skipped while iterating; as a sample, the chosen
    // value must be one.
    pick(it, occ_arg(args), ctx.iterate.get(), &mut |v| match hdr_ip(v) {
        Some(ip) => emit(ip),
        None => true,
    });
}

/// `req.hdr_names([delim])`: header names (lowercase, as HAProxy's HTX) joined by
/// the first character of `delim` (default `,`).
fn fetch_hdr_names<'a, const M: u8>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(m) = msg(ctx, M) else { return };
    let delim = args.first().and_then(Arg::as_bytes).and_then(|d| d.first().copied()).unwrap_or(b',');
    let mut out = Vec::new();
    for (_, n, _) in m.headers() {
        if !out.is_empty() {
            out.push(delim);
        }
        out.extend(n.iter().map(u8::to_ascii_lowercase));
    }
    emit(Sample::Str(Cow::Owned(out)));
}

/// `req.hdrs`: the header block as HTTP/1 text, final empty line included.
fn fetch_hdrs<'a, const M: u8>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(m) = msg(ctx, M) else { return };
    let mut out = Vec::new();
    for (_, n, v) in m.headers() {
        out.extend(n.iter().map(u8::to_ascii_lowercase));
        out.extend_from_slice(b": ");
        out.extend_from_slice(v);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    emit(Sample::Str(Cow::Owned(out)));
}

// === cookies ===

/// The end of a cookie value starting at `s[i]`: the first `,` or `;` outside
/// double quotes (HAProxy's `http_find_cookie_value_end`).
fn cookie_value_end(s: &[u8], mut i: usize) -> usize {
    let (mut quoted, mut pair) = (false, false);
    while i < s.len() {
        let c = s[i];
        if pair {
            pair = false;
        } else if quoted {
            if c == b'\\' {
                pair = true;
            } else if c == b'"' {
                quoted = false;
            }
        } else if c == b'"' {
            quoted = true;
        } else if c == b',' || c == b';' {
            return i;
        }
        i += 1;
    }
    i
}

fn is_spht(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

/// Calls `f` with the value of each cookie named `name` (every cookie when empty)
/// in one header value, until `f` returns `false`. `list`: a `Cookie` header (many
/// cookies, `;` or `,` separated) rather than a `Set-Cookie` one (where a search
/// stops at the first pair that does not match). Returns `false` when `f` did.
pub fn cookies<'a>(hdr: &'a [u8], name: &[u8], list: bool, f: &mut dyn FnMut(&'a [u8]) -> bool) -> bool {
    let mut from = 0;
    while let Some((v, next)) = extract_cookie(hdr, from, name, list) {
        if !f(v) {
            return false;
        }
        from = next + 1;
    }
    true
}

/// The next value of cookie `name` from `hdr[from..]` and where it ends: the walk of
/// HAProxy's `http_extract_cookie_value`, quirks included (`$` attributes and pairs
/// without `=` are skipped; a name followed by `=` and nothing is not found).
fn extract_cookie<'a>(hdr: &'a [u8], from: usize, name: &[u8], list: bool) -> Option<(&'a [u8], usize)> {
    let end = hdr.len();
    let mut beg = from;
    while beg + name.len() + 1 < end {
        while beg < end && is_spht(hdr[beg]) {
            beg += 1;
        }
        let (mut eq, mut att_end) = (beg, beg);
        while eq < end {
            let c = hdr[eq];
            if c == b'=' || c == b';' || (list && c == b',') {
                break;
            }
            eq += 1;
            if !is_spht(c) {
                att_end = eq;
            }
        }
        let (val_beg, val_end, next) = if eq < end && hdr[eq] == b'=' {
            let mut vb = eq + 1;
            while vb < end && is_spht(hdr[vb]) {
                vb += 1;
            }
            let next = cookie_value_end(hdr, vb);
            let mut ve = next;
            while ve > vb && is_spht(hdr[ve - 1]) {
                ve -= 1;
            }
            (vb, ve, next)
        } else {
            (eq, eq, eq)
        };
        if hdr.get(beg) != Some(&b'$') && eq != next {
            if name.is_empty() || &hdr[beg..att_end] == name {
                return Some((&hdr[val_beg..val_end], next));
            }
            if !list {
                return None;
            }
        }
        beg = next + 1;
    }
    None
}

/// Every value of cookie `name` in the message, in order.
fn each_cookie<'a>(m: MsgView<'a>, name: &[u8], list: bool, f: &mut dyn FnMut(&'a [u8]) -> bool) {
    let hdr: &[u8] = if m.head.status == 0 { b"cookie" } else { b"set-cookie" };
    for full in full_values(m, hdr) {
        for v in comma_items(full) {
            if v.len() < name.len() + 1 {
                continue;
            }
            if !cookies(v, name, list, f) {
                return;
            }
        }
    }
}

/// The cookie values a fetch reports: every one while iterating; as a sample the
/// first without a name, the last with one.
fn pick_cookie<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, which: u8, f: &mut dyn FnMut(&'a [u8]) -> bool) {
    let Some(m) = msg(ctx, which) else { return };
    let name = name_arg(args).unwrap_or_default();
    let list = ctx.dir == Dir::Request;
    if ctx.iterate.get() {
        each_cookie(m, name, list, f);
        return;
    }
    let mut found = None;
    each_cookie(m, name, list, &mut |v| {
        found = Some(v);
        !name.is_empty()
    });
    if let Some(v) = found {
        f(v);
    }
}

fn fetch_cook<'a, const M: u8>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    pick_cookie(args, ctx, M, &mut |v| emit(Sample::str(v)));
}

fn fetch_cook_val<'a, const M: u8>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    pick_cookie(args, ctx, M, &mut |v| emit(Sample::Sint(strl2ic(v))));
}

fn fetch_cook_cnt<'a, const M: u8>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(m) = msg(ctx, M) else { return };
    let mut n = 0;
    each_cookie(m, name_arg(args).unwrap_or_default(), ctx.dir == Dir::Request, &mut |_| {
        n += 1;
        true
    });
    emit(Sample::Sint(n));
}

const HDR: ArgSpec = ArgSpec::new(&[ArgT::Str, ArgT::Sint], 0);
const NAME: ArgSpec = ArgSpec::new(&[ArgT::Str], 0);
const RQ: u32 = uses::HRQHV;
const RS: u32 = uses::HRSHV;

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("req.hdr", HDR, SmpType::Str, fetch_hdr::<REQ>).uses(RQ).check(check_hdr),
    FetchKw::new("req.fhdr", HDR, SmpType::Str, fetch_fhdr::<REQ>).uses(RQ).check(check_hdr),
    FetchKw::new("req.hdr_cnt", NAME, SmpType::Sint, fetch_hdr_cnt::<REQ>).uses(RQ),
    FetchKw::new("req.fhdr_cnt", NAME, SmpType::Sint, fetch_fhdr_cnt::<REQ>).uses(RQ),
    FetchKw::new("req.hdr_ip", HDR, SmpType::Ipv4, fetch_hdr_ip::<REQ>).uses(RQ).check(check_hdr),
    FetchKw::new("req.hdr_val", HDR, SmpType::Sint, fetch_hdr_val::<REQ>).uses(RQ).check(check_hdr),
    FetchKw::new("req.hdr_names", NAME, SmpType::Str, fetch_hdr_names::<REQ>).uses(RQ),
    FetchKw::new("req.hdrs", ArgSpec::NONE, SmpType::Bin, fetch_hdrs::<REQ>).uses(RQ),
    FetchKw::new("req.cook", NAME, SmpType::Str, fetch_cook::<REQ>).uses(RQ),
    FetchKw::new("req.cook_cnt", NAME, SmpType::Sint, fetch_cook_cnt::<REQ>).uses(RQ),
    FetchKw::new("req.cook_val", NAME, SmpType::Sint, fetch_cook_val::<REQ>).uses(RQ),
    FetchKw::new("res.hdr", HDR, SmpType::Str, fetch_hdr::<RES>).uses(RS).check(check_hdr),
    FetchKw::new("res.fhdr", HDR, SmpType::Str, fetch_fhdr::<RES>).uses(RS).check(check_hdr),
    FetchKw::new("res.hdr_cnt", NAME, SmpType::Sint, fetch_hdr_cnt::<RES>).uses(RS),
    FetchKw::new("res.fhdr_cnt", NAME, SmpType::Sint, fetch_fhdr_cnt::<RES>).uses(RS),
    FetchKw::new("res.hdr_ip", HDR, SmpType::Ipv4, fetch_hdr_ip::<RES>).uses(RS).check(check_hdr),
    FetchKw::new("res.hdr_val", HDR, SmpType::Sint, fetch_hdr_val::<RES>).uses(RS).check(check_hdr),
    FetchKw::new("res.hdr_names", NAME, SmpType::Str, fetch_hdr_names::<RES>).uses(RS),
    FetchKw::new("res.hdrs", ArgSpec::NONE, SmpType::Bin, fetch_hdrs::<RES>).uses(RS),
    FetchKw::new("res.cook", NAME, SmpType::Str, fetch_cook::<RES>).uses(RS),
    FetchKw::new("res.cook_cnt", NAME, SmpType::Sint, fetch_cook_cnt::<RES>).uses(RS),
    FetchKw::new("res.cook_val", NAME, SmpType::Sint, fetch_cook_val::<RES>).uses(RS),
    // HAProxy's older names.
    FetchKw::new("hdr", HDR, SmpType::Str, fetch_hdr::<CHN>).uses(RQ | RS).check(check_hdr),
    FetchKw::new("hdr_cnt", NAME, SmpType::Sint, fetch_hdr_cnt::<REQ>).uses(RQ),
    FetchKw::new("hdr_ip", HDR, SmpType::Ipv4, fetch_hdr_ip::<REQ>).uses(RQ).check(check_hdr),
    FetchKw::new("hdr_val", HDR, SmpType::Sint, fetch_hdr_val::<REQ>).uses(RQ).check(check_hdr),
    FetchKw::new("shdr", HDR, SmpType::Str, fetch_hdr::<RES>).uses(RS).check(check_hdr),
    FetchKw::new("shdr_cnt", NAME, SmpType::Sint, fetch_hdr_cnt::<RES>).uses(RS),
    FetchKw::new("shdr_ip", HDR, SmpType::Ipv4, fetch_hdr_ip::<RES>).uses(RS).check(check_hdr),
    FetchKw::new("shdr_val", HDR, SmpType::Sint, fetch_hdr_val::<RES>).uses(RS).check(check_hdr),
    FetchKw::new("cook", NAME, SmpType::Str, fetch_cook::<REQ>).uses(RQ),
    FetchKw::new("cookie", NAME, SmpType::Str, fetch_cook::<CHN>).uses(RQ | RS),
    FetchKw::new("cook_cnt", NAME, SmpType::Sint, fetch_cook_cnt::<REQ>).uses(RQ),
    FetchKw::new("cook_val", NAME, SmpType::Sint, fetch_cook_val::<REQ>).uses(RQ),
    FetchKw::new("scook", NAME, SmpType::Str, fetch_cook::<RES>).uses(RS),
    FetchKw::new("scook_cnt", NAME, SmpType::Sint, fetch_cook_cnt::<RES>).uses(RS),
    FetchKw::new("scook_val", NAME, SmpType::Sint, fetch_cook_val::<RES>).uses(RS),
];
