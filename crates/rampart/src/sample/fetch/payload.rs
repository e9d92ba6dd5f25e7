//! Fetches of the raw bytes waiting in a TCP stream (`tcp-request content`,
//! `tcp-response content`): `req.len`, `req.payload`, `req.payload_lv`, and the TLS
//! ClientHello ones (`req.ssl_sni`, `req.ssl_ver`, `req.ssl_hello_type`,
//! `req.ssl_alpn`, `req.ssl_ec_ext`, `req.ssl_st_ext`). HAProxy counterpart:
//! src/payload.c.
//!
//! All read [`SampleCtx::payload`], which HTTP streams do not set (HAProxy: these
//! fetches are "meaningless for HTX buffers"), but `req.len`/`res.len`, which report
//! there what HAProxy 2.6 does (the size of its internal message). A fetch that needs bytes not arrived
//! yet sets [`SampleCtx::may_change`] so that the rules wait for more.
//!
//! `wait_end` reads no bytes: it is true once the inspection is final
//! ([`SampleCtx::final_data`]), and "not yet" before, so that `tcp-request content
//! accept if WAIT_END` waits for the whole `inspect-delay` (or a full buffer, or the
//! end of the input).
//!
//! Not yet: `distcc_*` (the RDP cookie fetches are in `rdp`).

use std::borrow::Cow;

use crate::sample::cast::read_int64;
use crate::sample::ctx::{Dir, SampleCtx};
use crate::sample::expr::CompileCx;
use crate::sample::kw::{uses, Arg, ArgList, ArgSpec, ArgT, FetchKw};
use crate::sample::types::{Sample, SmpType};

use super::tls_hello::{self, Hello};
use super::Emit;

/// The payload of the request (`REQ`), the response (`RES`), or of the direction
/// being evaluated (`ANY`: `payload`, `payload_lv`).
const REQ: u8 = 0;
const RES: u8 = 1;
const ANY: u8 = 2;

fn payload<'a>(ctx: &SampleCtx<'a>, which: u8) -> Option<&'a [u8]> {
    let want = match which {
        REQ => Dir::Request,
        RES => Dir::Response,
        _ => ctx.dir,
    };
    (ctx.dir == want).then_some(ctx.payload).flatten()
}

fn fetch_len<'a, const W: u8>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(p) = payload(ctx, W) {
        ctx.may_change.set(true);
        emit(Sample::Sint(p.len() as i64));
    } else if let Some(n) = http_len(ctx, W) {
        emit(Sample::Sint(n as i64));
    }
}

/// `req.len`/`res.len` on an HTTP stream: what HAProxy 2.6 reports there, the size of
/// its internal (HTX) message (`htx->data`): a 20-byte start-line record plus the
/// start line's three parts, each header's name and value, one byte for the end of
/// the headers, and the body bytes the stream holds.
/// COMPAT: "not accurate but kept for backward compatibility", says HAProxy itself.
fn http_len(ctx: &SampleCtx<'_>, which: u8) -> Option<usize> {
    const SL_RECORD: usize = 20; // sizeof(struct htx_sl)
    const EOH: usize = 1;
    let (m, req) = match which {
        REQ if ctx.dir == Dir::Request => (ctx.req?, true),
        RES if ctx.dir == Dir::Response => (ctx.res?, false),
        _ => return None,
    };
    let version = super::http::full_version(m).len();
    let line = if req { m.method().len() + m.uri().len() } else { 3 + m.reason().len() };
    let headers: usize = m.headers().map(|(_, n, v)| n.len() + v.len()).sum();
    let body = if req { ctx.req_body.map_or(0, <[u8]>::len) } else { 0 };
    Some(SL_RECORD + version + line + headers + EOH + body)
}

/// `payload(offset,length)`: `length` 0 means up to the end of what arrived.
fn fetch_payload<'a, const W: u8>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(p) = payload(ctx, W) else { return };
    let (Some(off), Some(len)) = (args.first().and_then(Arg::as_sint), args.get(1).and_then(Arg::as_sint)) else {
        return;
    };
    let (off, len) = (off as u32 as usize, len as u32 as usize);
    let max = ctx.rt.bufsize();
    if len > max || off.saturating_add(len) > max {
        return;
    }
    if off + len > p.len() {
        ctx.may_change.set(true);
        return;
    }
    if len == 0 {
        ctx.may_change.set(true);
    }
    let end = if len == 0 { p.len() } else { off + len };
    emit(Sample::Bin(Cow::Borrowed(&p[off..end])));
}

/// `val_payload_lv`: offsets checked, the third one compiled to HAProxy's encoding
/// (relative when it had a sign: `(n << 1) + 1`, absolute: `n << 1`).
fn check_payload_lv(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let off = args.first().and_then(Arg::as_sint).unwrap_or(0);
    let len = args.get(1).and_then(Arg::as_sint).unwrap_or(0);
    if off < 0 {
        return Err("payload offset1 must be positive".into());
    }
    if len == 0 {
        return Err("payload length must be > 0".into());
    }
    if let Some(Arg::Str(s)) = args.get(2) {
        if s.is_empty() {
            args.truncate(2);
            return Ok(());
        }
        let relative = matches!(s[0], b'+' | b'-');
        let (i, used) = read_int64(s);
        if used != s.len() {
            return Err("payload offset2 is not a number".into());
        }
        if off.saturating_add(len).saturating_add(i) < 0 {
            return Err("payload offset2 too negative".into());
        }
        args[2] = Arg::Sint(if relative { (i << 1) + 1 } else { i << 1 });
    }
    Ok(())
}

/// `payload_lv(len_offset,len_size[,offset])`: a length-prefixed block.
fn fetch_payload_lv<'a, const W: u8>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(p) = payload(ctx, W) else { return };
    let len_off = args.first().and_then(Arg::as_sint).unwrap_or(0) as usize;
    let len_size = args.get(1).and_then(Arg::as_sint).unwrap_or(0) as u32 as usize;
    if len_off.saturating_add(len_size) > p.len() {
        ctx.may_change.set(true);
        return;
    }
    let size = p[len_off..len_off + len_size].iter().fold(0u64, |s, &b| (s << 8) | u64::from(b)) as u32 as usize;
    let mut off = (len_off + len_size) as i64;
    if let Some(o) = args.get(2).and_then(Arg::as_sint) {
        off = if o & 1 != 0 { off + (o >> 1) } else { o >> 1 };
    }
    let max = ctx.rt.bufsize();
    let Ok(off) = usize::try_from(off) else { return };
    if size == 0 || size > max || off.saturating_add(size) > max {
        return;
    }
    if off + size > p.len() {
        ctx.may_change.set(true);
        return;
    }
    emit(Sample::Bin(Cow::Borrowed(&p[off..off + size])));
}

/// The ClientHello of the request payload, or `None` (setting `may_change` when
/// more bytes could complete it).
fn hello<'a>(ctx: &SampleCtx<'a>) -> Option<Hello<'a>> {
    let p = payload(ctx, REQ)?;
    match tls_hello::parse(p) {
        Ok(h) => Some(h),
        Err(tls_hello::Error::Short) => {
            ctx.may_change.set(true);
            None
        }
        Err(tls_hello::Error::NotHello) => None,
    }
}

fn fetch_ssl_sni<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(sni) = hello(ctx).and_then(|h| h.sni()) {
        emit(Sample::str(sni));
    }
}

/// `req.ssl_alpn`: each protocol name while iterating, else the first.
fn fetch_ssl_alpn<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(h) = hello(ctx) else { return };
    for name in h.alpn_names() {
        if !emit(Sample::str(name)) || !ctx.iterate.get() {
            return;
        }
    }
}

fn fetch_ssl_ec_ext<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(h) = hello(ctx) {
        emit(Sample::Bool(h.extension(tls_hello::EXT_SUPPORTED_GROUPS).is_some()));
    }
}

fn fetch_ssl_st_ext<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(h) = hello(ctx) {
        // 0: no extension, 1: empty (asking for a ticket), 2: a ticket presented.
        let v = match h.extension(tls_hello::EXT_SESSION_TICKET) {
            None => 0,
            Some([]) => 1,
            Some(_) => 2,
        };
        emit(Sample::Sint(v));
    }
}

fn fetch_ssl_hello_type<'a, const W: u8>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(p) = payload(ctx, W) else { return };
    match tls_hello::handshake_type(p) {
        Ok(t) => {
            emit(Sample::Sint(i64::from(t)));
        }
        Err(tls_hello::Error::Short) => ctx.may_change.set(true),
        Err(tls_hello::Error::NotHello) => {}
    }
}

fn fetch_ssl_ver<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(p) = payload(ctx, REQ) else { return };
    match tls_hello::client_version(p, ctx.rt.bufsize()) {
        Ok(v) => {
            emit(Sample::Sint(i64::from(v)));
        }
        Err(tls_hello::Error::Short) => ctx.may_change.set(true),
        Err(tls_hello::Error::NotHello) => {}
    }
}

/// `wait_end`: true once the data inspected is final; before, no value and
/// [`SampleCtx::may_change`], which makes content rules wait.
fn fetch_wait_end<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if ctx.final_data {
        emit(Sample::Bool(true));
    } else {
        ctx.may_change.set(true);
    }
}

const OFF_LEN: ArgSpec = ArgSpec::new(&[ArgT::Sint, ArgT::Sint], 2);
const LV: ArgSpec = ArgSpec::new(&[ArgT::Sint, ArgT::Sint, ArgT::Str], 2);
const L6: u32 = uses::L6REQ;
const L6R: u32 = uses::L6RES;

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("payload", OFF_LEN, SmpType::Bin, fetch_payload::<ANY>).uses(L6 | L6R),
    FetchKw::new("payload_lv", LV, SmpType::Bin, fetch_payload_lv::<ANY>).uses(L6 | L6R).check(check_payload_lv),
    FetchKw::new("rep_ssl_hello_type", ArgSpec::NONE, SmpType::Sint, fetch_ssl_hello_type::<RES>).uses(L6R),
    FetchKw::new("req_len", ArgSpec::NONE, SmpType::Sint, fetch_len::<REQ>).uses(L6),
    FetchKw::new("req_ssl_hello_type", ArgSpec::NONE, SmpType::Sint, fetch_ssl_hello_type::<REQ>).uses(L6),
    FetchKw::new("req_ssl_sni", ArgSpec::NONE, SmpType::Str, fetch_ssl_sni).uses(L6),
    FetchKw::new("req_ssl_ver", ArgSpec::NONE, SmpType::Sint, fetch_ssl_ver).uses(L6),
    FetchKw::new("req.len", ArgSpec::NONE, SmpType::Sint, fetch_len::<REQ>).uses(L6),
    FetchKw::new("req.payload", OFF_LEN, SmpType::Bin, fetch_payload::<REQ>).uses(L6),
    FetchKw::new("req.payload_lv", LV, SmpType::Bin, fetch_payload_lv::<REQ>).uses(L6).check(check_payload_lv),
    FetchKw::new("req.ssl_ec_ext", ArgSpec::NONE, SmpType::Bool, fetch_ssl_ec_ext).uses(L6),
    FetchKw::new("req.ssl_st_ext", ArgSpec::NONE, SmpType::Sint, fetch_ssl_st_ext).uses(L6),
    FetchKw::new("req.ssl_hello_type", ArgSpec::NONE, SmpType::Sint, fetch_ssl_hello_type::<REQ>).uses(L6),
    FetchKw::new("req.ssl_sni", ArgSpec::NONE, SmpType::Str, fetch_ssl_sni).uses(L6),
    FetchKw::new("req.ssl_alpn", ArgSpec::NONE, SmpType::Str, fetch_ssl_alpn).uses(L6),
    FetchKw::new("req.ssl_ver", ArgSpec::NONE, SmpType::Sint, fetch_ssl_ver).uses(L6),
    FetchKw::new("res.len", ArgSpec::NONE, SmpType::Sint, fetch_len::<RES>).uses(L6R),
    FetchKw::new("res.payload", OFF_LEN, SmpType::Bin, fetch_payload::<RES>).uses(L6R),
    FetchKw::new("res.payload_lv", LV, SmpType::Bin, fetch_payload_lv::<RES>).uses(L6R).check(check_payload_lv),
    FetchKw::new("res.ssl_hello_type", ArgSpec::NONE, SmpType::Sint, fetch_ssl_hello_type::<RES>).uses(L6R),
    FetchKw::new("wait_end", ArgSpec::NONE, SmpType::Bool, fetch_wait_end).uses(uses::INTRN),
];
