//! Fetches of constants and internal state: `always_true`, `int`, `str`, `bin`,
//! `meth` ..., `env`, `date`, `rand`, `hostname`, `stopping`, `thread`,
//! `internal.strm.is_htx`.
//! HAProxy counterpart: the `smp_kws` table of src/sample.c.

use std::borrow::Cow;
use std::cell::Cell;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::http::Method;

use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{uses, Arg, ArgList, ArgSpec, ArgT, FetchKw};
use crate::sample::types::{Sample, SmpType};

use super::Emit;

fn fetch_always_true<'a>(_: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit(Sample::Bool(true));
}

fn fetch_always_false<'a>(_: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit(Sample::Bool(false));
}

fn fetch_int<'a>(args: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(i) = args.first().and_then(Arg::as_sint) {
        emit(Sample::Sint(i));
    }
}

fn fetch_str<'a>(args: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = args.first().and_then(Arg::as_bytes) {
        emit(Sample::str(s));
    }
}

fn fetch_bool<'a>(args: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(i) = args.first().and_then(Arg::as_sint) {
        emit(Sample::Bool(i != 0));
    }
}

fn check_bool(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let v = match args.first().and_then(Arg::as_bytes) {
        Some(s) if s.eq_ignore_ascii_case(b"true") || s == b"1" => 1,
        Some(s) if s.eq_ignore_ascii_case(b"false") || s == b"0" => 0,
        _ => return Err("Expects 'true', 'false', '0' or '1'".into()),
    };
    args[0] = Arg::Sint(v);
    Ok(())
}

fn fetch_ipv4<'a>(args: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(Arg::Ipv4(a)) = args.first() {
        emit(Sample::Ipv4(*a));
    }
}

fn fetch_ipv6<'a>(args: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(Arg::Ipv6(a)) = args.first() {
        emit(Sample::Ipv6(*a));
    }
}

fn fetch_bin<'a>(args: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = args.first().and_then(Arg::as_bytes) {
        emit(Sample::Bin(Cow::Borrowed(s)));
    }
}

/// HAProxy's `parse_binary`: an even number of hex digits.
pub fn parse_hex(s: &[u8]) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err("an even number of hex digit is expected".into());
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8).ok_or(c);
    s.chunks(2)
        .map(|p| Ok(digit(p[0])? << 4 | digit(p[1])?))
        .collect::<Result<Vec<u8>, u8>>()
        .map_err(|c| format!("an hex digit is expected (found '{}')", c as char))
}

fn check_bin(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let bytes = parse_hex(args.first().and_then(Arg::as_bytes).unwrap_or_default())?;
    args[0] = Arg::Str(bytes.into_boxed_slice());
    Ok(())
}

fn fetch_meth<'a>(args: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = args.first().and_then(Arg::as_bytes) {
        emit(Sample::Meth(Method::from_bytes(s), Cow::Borrowed(s)));
    }
}

/// RFC 9110 `tchar`.
pub fn is_token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

fn check_meth(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let s = args.first().and_then(Arg::as_bytes).unwrap_or_default();
    if Method::from_bytes(s) == Method::Other && !s.iter().all(|&c| is_token_char(c)) {
        return Err("expects valid method.".into());
    }
    Ok(())
}

fn fetch_env<'a>(args: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    use std::os::unix::ffi::OsStrExt;
    let Some(name) = args.first().and_then(Arg::as_bytes) else { return };
    if name.is_empty() || name.contains(&b'=') || name.contains(&0) {
        return;
    }
    let name = std::ffi::OsStr::from_bytes(name);
    if let Some(v) = std::env::var_os(name) {
        emit(Sample::Str(Cow::Owned(v.as_bytes().to_vec())));
    }
}

/// Units of `date`'s second argument, as their multiplier of seconds.
const DATE_S: i64 = 1;
const DATE_MS: i64 = 1_000;
const DATE_US: i64 = 1_000_000;

fn check_date(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    if let Some(Arg::Str(unit)) = args.get(1) {
        let u = match &unit[..] {
            b"s" => DATE_S,
            b"ms" => DATE_MS,
            b"us" => DATE_US,
            other => return Err(format!("expects 's', 'ms' or 'us', got '{}'", String::from_utf8_lossy(other))),
        };
        args[1] = Arg::Sint(u);
    }
    Ok(())
}

fn fetch_date<'a>(args: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs() as i64;
    let mut v = match args.get(1).and_then(Arg::as_sint) {
        Some(DATE_MS) => secs * 1000 + i64::from(now.subsec_millis()),
        Some(DATE_US) => secs * 1_000_000 + i64::from(now.subsec_micros()),
        _ => secs,
    };
    if let Some(off) = args.first().and_then(Arg::as_sint) {
        v = v.wrapping_add(off);
    }
    emit(Sample::Sint(v));
}

fn fetch_date_us<'a>(_: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    emit(Sample::Sint(i64::from(now.subsec_micros())));
}

thread_local! {
    /// xorshift64* state, seeded once per thread from the standard library's random
    /// hash keys.
    static RNG: Cell<u64> = Cell::new({
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0x9e37_79b9_7f4a_7c15);
        h.finish() | 1
    });
}

/// A random 32-bit number (not for cryptography).
pub fn random32() -> u32 {
    RNG.with(|s| {
        let mut x = s.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    })
}

fn fetch_rand<'a>(args: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let r = u64::from(random32());
    let v = match args.first().and_then(Arg::as_sint) {
        // Scaled rather than reduced modulo, as HAProxy: every bit counts.
        Some(range) => ((r as i128 * range as i128) >> 32) as i64,
        None => r as i64,
    };
    emit(Sample::Sint(v));
}

/// `uuid([4])`: a random (version 4) UUID, as HAProxy's `ha_generate_uuid()`.
fn fetch_uuid<'a>(_: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let (a, b, c, d) = (random32(), random32(), random32(), random32());
    let text = format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:04x}{:08x}",
        a,
        b >> 16,
        (b & 0x0fff) | 0x4000,
        ((c >> 16) & 0x3fff) | 0x8000,
        c & 0xffff,
        d
    );
    emit(Sample::Str(Cow::Owned(text.into_bytes())));
}

fn check_uuid(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    match args.first().and_then(Arg::as_sint) {
        None | Some(4) => Ok(()),
        Some(v) => Err(format!("Unsupported UUID version: '{v}'")),
    }
}

fn fetch_hostname<'a>(_: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit(Sample::Str(Cow::Owned(hostname().into_bytes())));
}

/// The host name, as `%H` and `hostname` report it.
pub fn hostname() -> String {
    nix::unistd::gethostname().ok().and_then(|h| h.into_string().ok()).unwrap_or_default()
}

fn fetch_one<'a>(_: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit(Sample::Sint(1));
}

fn fetch_stopping<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit(Sample::Bool(ctx.rt.stopping()));
}

/// `thread`: the number of the thread evaluating it, from 0 (HAProxy's `tid`; Lua's
/// `core.thread` counts per-thread states from 1). Outside the worker threads (the
/// startup checks), 0.
fn fetch_thread<'a>(_: &'a [Arg], _: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let tid = crate::counters::thread_slot().saturating_sub(1);
    emit(Sample::Sint(i64::try_from(tid).unwrap_or(i64::MAX)));
}

/// `internal.strm.is_htx`: whether the stream is an HTTP one (true once a TCP stream
/// switched to HTTP). A TCP stream's rules see its payload, an HTTP stream's its
/// request; without a stream (connection and session rules) there is no sample.
fn fetch_is_htx<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if ctx.payload.is_some() {
        emit(Sample::Bool(false));
    } else if ctx.req.is_some() {
        emit(Sample::Bool(true));
    }
}

const STR1: ArgSpec = ArgSpec::new(&[ArgT::Str], 1);

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("always_false", ArgSpec::NONE, SmpType::Bool, fetch_always_false).uses(uses::CONST),
    FetchKw::new("always_true", ArgSpec::NONE, SmpType::Bool, fetch_always_true).uses(uses::CONST),
    FetchKw::new("env", STR1, SmpType::Str, fetch_env).uses(uses::CONST),
    FetchKw::new("date", ArgSpec::new(&[ArgT::Sint, ArgT::Str], 0), SmpType::Sint, fetch_date)
        .uses(uses::CONST)
        .check(check_date),
    FetchKw::new("date_us", ArgSpec::NONE, SmpType::Sint, fetch_date_us).uses(uses::CONST),
    FetchKw::new("hostname", ArgSpec::NONE, SmpType::Str, fetch_hostname).uses(uses::CONST),
    FetchKw::new("nbproc", ArgSpec::NONE, SmpType::Sint, fetch_one).uses(uses::CONST),
    FetchKw::new("proc", ArgSpec::NONE, SmpType::Sint, fetch_one).uses(uses::CONST),
    FetchKw::new("rand", ArgSpec::new(&[ArgT::Sint], 0), SmpType::Sint, fetch_rand).uses(uses::CONST),
    FetchKw::new("stopping", ArgSpec::NONE, SmpType::Bool, fetch_stopping),
    FetchKw::new("thread", ArgSpec::NONE, SmpType::Sint, fetch_thread).uses(uses::CONST),
    FetchKw::new("internal.strm.is_htx", ArgSpec::NONE, SmpType::Bool, fetch_is_htx).uses(uses::INTRN),
    FetchKw::new("uuid", ArgSpec::new(&[ArgT::Sint], 0), SmpType::Str, fetch_uuid).uses(uses::CONST).check(check_uuid),
    FetchKw::new("str", STR1, SmpType::Str, fetch_str).uses(uses::CONST),
    FetchKw::new("bool", STR1, SmpType::Bool, fetch_bool).uses(uses::CONST).check(check_bool),
    FetchKw::new("int", ArgSpec::new(&[ArgT::Sint], 1), SmpType::Sint, fetch_int).uses(uses::CONST),
    FetchKw::new("ipv4", ArgSpec::new(&[ArgT::Ipv4], 1), SmpType::Ipv4, fetch_ipv4).uses(uses::CONST),
    FetchKw::new("ipv6", ArgSpec::new(&[ArgT::Ipv6], 1), SmpType::Ipv6, fetch_ipv6).uses(uses::CONST),
    FetchKw::new("bin", STR1, SmpType::Bin, fetch_bin).uses(uses::CONST).check(check_bin),
    FetchKw::new("meth", STR1, SmpType::Meth, fetch_meth).uses(uses::CONST).check(check_meth),
];
