//! HTTP fetches of the start lines, the target, the body and the transaction:
//! `method`, `path`, `base`, `url`, `url_param`, `query`, `req.ver`, `status`,
//! `req.body*` (`req.body_param` too), `res.body*` (what `http-response wait-for-body`
//! waited for), `capture.*`, `unique-id`, `http_first_req`, `req.proto_http`.
//! HAProxy counterpart: src/http_fetch.c.
//!
//! Not yet (rejected as unknown): `req.hdrs_bin`.

use std::borrow::Cow;
use std::net::IpAddr;

use rampart_proto::h1;

use crate::http::{MsgView, Version};
use crate::sample::cast::buf_to_ipv4;
use crate::sample::ctx::SampleCtx;
use crate::sample::kw::{uses, Arg, ArgSpec, ArgT, FetchKw};
use crate::sample::types::{Sample, SmpType};

use super::http_hdr::strl2ic;
use super::Emit;

fn fetch_method<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(m) = ctx.req {
        emit(Sample::Meth(m.head.method, Cow::Borrowed(m.method())));
    } else if let Some(known) = ctx.txn_meth.and_then(|m| m.as_str().map(|s| (m, s))) {
        // in response rules and log lines: the transaction's method, when HAProxy
        // knows it (not for methods it does not name)
        emit(Sample::Meth(known.0, Cow::Borrowed(known.1.as_bytes())));
    }
}

/// The path of the request target, from its `/`, with the query when `with_query`
/// (HAProxy's `http_parse_path`: absent for `*`, authority form, or no `/`).
fn path(m: MsgView<'_>, with_query: bool) -> Option<&[u8]> {
    let t = m.target();
    if !t.pathq.starts_with(b"/") {
        return None;
    }
    Some(if with_query { t.pathq } else { t.path })
}

fn fetch_path<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(p) = ctx.req.and_then(|m| path(m, false)) {
        emit(Sample::str(p));
    }
}

fn fetch_pathq<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(p) = ctx.req.and_then(|m| path(m, true)) {
        emit(Sample::str(p));
    }
}

/// The first value of the `Host` header.
fn host<'a>(m: MsgView<'a>) -> Option<&'a [u8]> {
    m.values(b"host").next()
}

/// `base` / `baseq`: the `Host` header then the path, or the path alone without host.
fn base(m: MsgView<'_>, with_query: bool) -> Option<Cow<'_, [u8]>> {
    let Some(h) = host(m).filter(|h| !h.is_empty()) else {
        return path(m, with_query).map(Cow::Borrowed);
    };
    let mut out = h.to_vec();
    if let Some(p) = path(m, with_query) {
        out.extend_from_slice(p);
    }
    Some(Cow::Owned(out))
}

fn fetch_base<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(b) = ctx.req.and_then(|m| base(m, false)) {
        emit(Sample::Str(b));
    }
}

fn fetch_baseq<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(b) = ctx.req.and_then(|m| base(m, true)) {
        emit(Sample::Str(b));
    }
}

/// HAProxy's string hash of `base32` (sdbm's recurrence).
fn sdbm_step(hash: u32, bytes: &[u8]) -> u32 {
    bytes.iter().fold(hash, |h, &c| u32::from(c).wrapping_add(h << 6).wrapping_add(h << 16).wrapping_sub(h))
}

/// Bob Jenkins' integer avalanche then a multiplication (HAProxy's `full_hash`).
pub fn full_hash(mut a: u32) -> u32 {
    a = a.wrapping_add(0x7ed5_5d16).wrapping_add(a << 12);
    a = (a ^ 0xc761_c23c) ^ (a >> 19);
    a = a.wrapping_add(0x1656_67b1).wrapping_add(a << 5);
    a = a.wrapping_add(0xd3a2_646c) ^ (a << 9);
    a = a.wrapping_add(0xfd70_46c5).wrapping_add(a << 3);
    a = (a ^ 0xb55a_4f09) ^ (a >> 16);
    a.wrapping_mul(3_221_225_473)
}

/// `base32`: hash of the first `Host` value and the path without query.
fn base32(m: MsgView<'_>) -> u32 {
    let mut h = host(m).map_or(0, |v| sdbm_step(0, v));
    if let Some(p) = path(m, false) {
        h = sdbm_step(h, p);
    }
    full_hash(h)
}

/// `url32`: hash of the whole first `Host` header and the path with its query.
fn url32(m: MsgView<'_>) -> u32 {
    let mut h = m.first(b"host").map_or(0, |v| sdbm_step(0, v));
    if let Some(p) = path(m, true) {
        h = sdbm_step(h, p);
    }
    full_hash(h)
}

fn fetch_base32<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(m) = ctx.req {
        emit(Sample::Sint(i64::from(base32(m))));
    }
}

fn fetch_url32<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(m) = ctx.req {
        emit(Sample::Sint(i64::from(url32(m))));
    }
}

/// A hash followed by the client address bytes (`base32+src`, `url32+src`).
fn hash_src(hash: u32, ctx: &SampleCtx<'_>) -> Option<Sample<'static>> {
    let mut out = hash.to_be_bytes().to_vec();
    match ctx.conn.src?.ip() {
        IpAddr::V4(a) => out.extend_from_slice(&a.octets()),
        IpAddr::V6(a) => out.extend_from_slice(&a.octets()),
    }
    Some(Sample::Bin(Cow::Owned(out)))
}

fn fetch_base32_src<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = ctx.req.and_then(|m| hash_src(base32(m), ctx)) {
        emit(s);
    }
}

fn fetch_url32_src<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = ctx.req.and_then(|m| hash_src(url32(m), ctx)) {
        emit(s);
    }
}

fn fetch_url<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(m) = ctx.req {
        emit(Sample::str(m.uri()));
    }
}

/// The IPv4 address and port of an `http://a.b.c.d[:port]/` target (HAProxy's
/// `url2sa`, which knows only this form).
fn url_addr(uri: &[u8]) -> Option<(std::net::Ipv4Addr, u16)> {
    if uri.len() < 7 || !uri[..7].eq_ignore_ascii_case(b"http://") {
        return None;
    }
    let rest = &uri[7..];
    let n = rest.iter().take_while(|c| c.is_ascii_digit() || **c == b'.').count();
    let ip = buf_to_ipv4(&rest[..n])?;
    let port = match rest.get(n) {
        Some(b':') => {
            let d: Vec<u8> = rest[n + 1..].iter().take_while(|c| c.is_ascii_digit()).copied().collect();
            std::str::from_utf8(&d).ok()?.parse().ok()?
        }
        _ => 80,
    };
    Some((ip, port))
}

fn fetch_url_ip<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some((ip, _)) = ctx.req.and_then(|m| url_addr(m.uri())) {
        emit(Sample::Ipv4(ip));
    }
}

fn fetch_url_port<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some((_, port)) = ctx.req.and_then(|m| url_addr(m.uri())) {
        emit(Sample::Sint(i64::from(port)));
    }
}

fn fetch_query<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(m) = ctx.req else { return };
    let uri = m.uri();
    if let Some(q) = memchr::memchr(b'?', uri) {
        emit(Sample::str(&uri[q + 1..]));
    }
}

/// Calls `f` with the values of URL parameter `name` (any parameter with a value when
/// empty) in `uri`, parameters starting after the first `delim` and separated by `&`,
/// `;` or `delim` (HAProxy's `http_find_next_url_param`).
pub fn url_params<'a>(uri: &'a [u8], name: &[u8], delim: u8, f: &mut dyn FnMut(&'a [u8]) -> bool) {
    let Some(start) = memchr::memchr(delim, uri) else { return };
    params_from(uri, start + 1, name, delim, f);
}

/// Calls `f` with the values of parameter `name` in `uri` from `pos` on (see
/// [`url_params`]).
fn params_from<'a>(uri: &'a [u8], mut pos: usize, name: &[u8], delim: u8, f: &mut dyn FnMut(&'a [u8]) -> bool) {
    let is_delim = |c: u8| c == b'&' || c == b';' || c == delim;
    let end = uri.len();
    if pos >= end {
        return;
    }
    loop {
        let value_start = if name.is_empty() {
            match memchr::memchr(b'=', &uri[pos..]) {
                Some(e) => pos + e + 1,
                None => return,
            }
        } else {
            match find_param(uri, pos, name, &is_delim) {
                Some(p) => p + name.len() + 1,
                None => return,
            }
        };
        let value_end = uri[value_start..].iter().position(|&c| is_delim(c)).map_or(end, |e| value_start + e);
        if !f(&uri[value_start..value_end]) || value_end >= end {
            return;
        }
        pos = value_end;
    }
}

/// Where parameter `name=` starts at or after `pos` (HAProxy's
/// `http_find_url_param_pos`).
fn find_param(uri: &[u8], mut pos: usize, name: &[u8], is_delim: &dyn Fn(u8) -> bool) -> Option<usize> {
    while pos < uri.len() {
        let eq = pos + name.len();
        if eq >= uri.len() {
            return None;
        }
        if uri[eq] == b'=' {
            if &uri[pos..eq] == name {
                return Some(pos);
            }
            pos = eq + 1;
        }
        while pos < uri.len() && !is_delim(uri[pos]) {
            pos += 1;
        }
        pos += 1;
    }
    None
}

/// The parameter values a fetch reports: all while iterating, else the first.
fn pick_param<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, f: &mut dyn FnMut(&'a [u8]) -> bool) {
    let Some(m) = ctx.req else { return };
    let name = args.first().and_then(Arg::as_bytes).unwrap_or_default();
    let delim = args.get(1).and_then(Arg::as_bytes).and_then(|d| d.first().copied()).unwrap_or(b'?');
    let iterate = ctx.iterate.get();
    url_params(m.uri(), name, delim, &mut |v| f(v) && iterate);
}

/// `req.body_param([<name>])`: the values of parameter `name` of a form-encoded
/// request body in hand (`&`-separated from its first byte).
fn fetch_body_param<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let (Some(_), Some(body)) = (ctx.req, ctx.req_body) else { return };
    let name = args.first().and_then(Arg::as_bytes).unwrap_or_default();
    let iterate = ctx.iterate.get();
    params_from(body, 0, name, b'&', &mut |v| emit(Sample::Bin(Cow::Borrowed(v))) && iterate);
}

fn fetch_url_param<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    pick_param(args, ctx, &mut |v| emit(Sample::str(v)));
}

fn fetch_urlp_val<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    pick_param(args, ctx, &mut |v| emit(Sample::Sint(strl2ic(v))));
}

fn fetch_req_ver<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(m) = ctx.req {
        emit(Sample::str(m.head.version.as_str().as_bytes()));
    }
}

fn fetch_res_ver<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(m) = ctx.res {
        emit(Sample::str(m.head.version.as_str().as_bytes()));
    }
}

fn fetch_status<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(m) = ctx.res {
        emit(Sample::Sint(i64::from(m.head.status)));
    } else if let Some(st) = ctx.status.filter(|_| ctx.log.is_some()) {
        // in a log line, once the response is gone: the status it had, as HAProxy
        // still reads it from the response it keeps until the stream ends
        emit(Sample::Sint(i64::from(st)));
    }
}

fn capture<'a>(caps: &'a [Option<Vec<u8>>], args: &[Arg]) -> Option<&'a [u8]> {
    let i = usize::try_from(args.first()?.as_sint()?).ok()?;
    caps.get(i)?.as_deref()
}

fn fetch_capture_req_hdr<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(v) = capture(ctx.req_caps, args) {
        emit(Sample::str(v));
    }
}

fn fetch_capture_res_hdr<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(v) = capture(ctx.res_caps, args) {
        emit(Sample::str(v));
    }
}

/// The request line as received: HAProxy's `txn->uri`, which no rule rewrites.
fn received_line<'a>(ctx: &SampleCtx<'a>) -> Option<&'a [u8]> {
    Some(ctx.req_line).filter(|l| !l.is_empty())
}

/// `capture.req.method`: the method of the request line as received.
fn fetch_capture_req_method<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(line) = received_line(ctx) {
        emit(Sample::str(line.split(|&c| c == b' ').next().unwrap_or_default()));
    }
}

/// `capture.req.uri`: the path (with its query) of the request line as received;
/// an absolute-form target without its scheme and authority, nothing for `*` or an
/// authority-form target (HAProxy's `http_parse_path()` on `txn->uri`).
fn fetch_capture_req_uri<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(line) = received_line(ctx) else { return };
    let mut words = line.split(|&c| c == b' ');
    let (Some(_), Some(target)) = (words.next(), words.next()) else { return };
    let pathq = crate::http::uri::split(target).pathq;
    if !pathq.is_empty() {
        emit(Sample::str(pathq));
    }
}

/// Notes that the expression reads the request line as received, so that the
/// frontends keep it ([`crate::sample::expr::CompileCx::req_line`]).
fn wants_req_line(
    _: &mut crate::sample::kw::ArgList,
    cx: &mut crate::sample::expr::CompileCx<'_>,
) -> Result<(), String> {
    cx.req_line = true;
    Ok(())
}

/// `capture.req.ver`: `HTTP/1.0` for an HTTP/1.0 request, `HTTP/1.1` for any later
/// version (HAProxy's `HTTP_MSGF_VER_11`), in response rules too.
fn fetch_capture_req_ver<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let ver = ctx.req.map(|m| m.head.version).or(ctx.txn_ver);
    if let Some(v) = ver {
        emit(Sample::str(if v == Version::Http10 { b"HTTP/1.0" } else { b"HTTP/1.1" }));
    }
}

fn fetch_capture_res_ver<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(m) = ctx.res {
        emit(Sample::str(full_version(m)));
    }
}

/// `HTTP/1.0`, `HTTP/1.1`, `HTTP/2.0` or `HTTP/3.0` (`capture.res.ver`, `%HV`).
pub fn full_version(m: MsgView<'_>) -> &'static [u8] {
    match m.head.version {
        Version::Http10 => b"HTTP/1.0",
        Version::Http11 => b"HTTP/1.1",
        Version::Http2 => b"HTTP/2.0",
        Version::Http3 => b"HTTP/3.0",
    }
}

fn fetch_unique_id<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(id) = ctx.unique_id() {
        emit(Sample::str(id));
    }
}

/// Answered in any HTTP context, `http-after-response` on a reply rampart built too.
fn fetch_http_first_req<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if ctx.req.is_some() || ctx.res.is_some() {
        emit(Sample::Bool(ctx.first_req));
    }
}

fn fetch_req_body<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if ctx.req.is_some() {
        emit(Sample::Bin(Cow::Borrowed(ctx.req_body.unwrap_or_default())));
    }
}

fn fetch_req_body_len<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if ctx.req.is_some() {
        emit(Sample::Sint(ctx.req_body.map_or(0, <[u8]>::len) as i64));
    }
}

/// `req.body_size`: the announced length when known, else what is in hand.
fn fetch_req_body_size<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(m) = ctx.req else { return };
    let n = match m.head.body {
        crate::http::BodyLen::Known(n) => n as i64,
        _ => ctx.req_body.map_or(0, <[u8]>::len) as i64,
    };
    emit(Sample::Sint(n));
}

/// `res.body`: the response body data a `wait-for-body` waited for.
/// COMPAT: without one, HAProxy shows the body bytes that happened to arrive with the
/// head; rampart shows none (its response bodies stream, unbuffered).
fn fetch_res_body<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if ctx.res.is_some() {
        emit(Sample::Bin(Cow::Borrowed(ctx.res_body.unwrap_or_default())));
    }
}

fn fetch_res_body_len<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if ctx.res.is_some() {
        emit(Sample::Sint(ctx.res_body.map_or(0, <[u8]>::len) as i64));
    }
}

/// `res.body_size`: the announced length when known, else what is in hand.
fn fetch_res_body_size<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(m) = ctx.res else { return };
    let n = match m.head.body {
        crate::http::BodyLen::Known(n) => n as i64,
        _ => ctx.res_body.map_or(0, <[u8]>::len) as i64,
    };
    emit(Sample::Sint(n));
}

/// The head HAProxy's HTTP/1 parser finds at the start of the HTTP/2 preface.
const H2_PREFACE_HEAD: &[u8] = b"PRI * HTTP/2.0\r\n\r\n";

/// `req.proto_http`: an HTTP request, or TCP bytes that start with a complete one.
fn fetch_proto_http<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if ctx.req.is_some() {
        emit(Sample::Bool(true));
        return;
    }
    let Some(p) = ctx.payload else { return };
    if p.starts_with(b"PRI ") {
        // COMPAT: HAProxy's HTTP/1 parser takes the HTTP/2 preface's first lines for a
        // request (`PRI * HTTP/2.0`, no header): a TCP stream may switch to HTTP on it
        if p.starts_with(H2_PREFACE_HEAD) {
            emit(Sample::Bool(true));
        } else if H2_PREFACE_HEAD.starts_with(p) {
            ctx.may_change.set(true);
        }
        return;
    }
    let mut head = h1::Head::default();
    match h1::parse_request(p, ctx.rt.max_head().max(1), &mut head) {
        Ok(true) => {
            emit(Sample::Bool(true));
        }
        Ok(false) => ctx.may_change.set(true),
        Err(_) => {}
    }
}

const NAME_DELIM: ArgSpec = ArgSpec::new(&[ArgT::Str, ArgT::Str], 0);
const NAME: ArgSpec = ArgSpec::new(&[ArgT::Str], 0);
const IDX: ArgSpec = ArgSpec::new(&[ArgT::Sint], 1);
const RQ: u32 = uses::HRQHV;
const RQP: u32 = uses::HRQHP;

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("base", ArgSpec::NONE, SmpType::Str, fetch_base).uses(RQ),
    FetchKw::new("base32", ArgSpec::NONE, SmpType::Sint, fetch_base32).uses(RQ),
    FetchKw::new("base32+src", ArgSpec::NONE, SmpType::Bin, fetch_base32_src).uses(RQ),
    FetchKw::new("baseq", ArgSpec::NONE, SmpType::Str, fetch_baseq).uses(RQ),
    FetchKw::new("capture.req.hdr", IDX, SmpType::Str, fetch_capture_req_hdr).uses(RQP),
    FetchKw::new("capture.req.method", ArgSpec::NONE, SmpType::Str, fetch_capture_req_method)
        .uses(RQP)
        .check(wants_req_line),
    FetchKw::new("capture.req.uri", ArgSpec::NONE, SmpType::Str, fetch_capture_req_uri).uses(RQP).check(wants_req_line),
    FetchKw::new("capture.req.ver", ArgSpec::NONE, SmpType::Str, fetch_capture_req_ver).uses(RQP),
    FetchKw::new("capture.res.hdr", IDX, SmpType::Str, fetch_capture_res_hdr).uses(uses::HRSHP),
    FetchKw::new("capture.res.ver", ArgSpec::NONE, SmpType::Str, fetch_capture_res_ver).uses(RQP),
    FetchKw::new("http_first_req", ArgSpec::NONE, SmpType::Bool, fetch_http_first_req).uses(RQP),
    FetchKw::new("method", ArgSpec::NONE, SmpType::Meth, fetch_method).uses(RQP),
    FetchKw::new("path", ArgSpec::NONE, SmpType::Str, fetch_path).uses(RQ),
    FetchKw::new("pathq", ArgSpec::NONE, SmpType::Str, fetch_pathq).uses(RQ),
    FetchKw::new("query", ArgSpec::NONE, SmpType::Str, fetch_query).uses(RQ),
    FetchKw::new("req.proto_http", ArgSpec::NONE, SmpType::Bool, fetch_proto_http).uses(RQP),
    FetchKw::new("req_proto_http", ArgSpec::NONE, SmpType::Bool, fetch_proto_http).uses(RQP),
    FetchKw::new("req.ver", ArgSpec::NONE, SmpType::Str, fetch_req_ver).uses(RQ),
    FetchKw::new("req_ver", ArgSpec::NONE, SmpType::Str, fetch_req_ver).uses(RQ),
    FetchKw::new("req.body", ArgSpec::NONE, SmpType::Bin, fetch_req_body).uses(RQ),
    FetchKw::new("req.body_len", ArgSpec::NONE, SmpType::Sint, fetch_req_body_len).uses(RQ),
    FetchKw::new("req.body_size", ArgSpec::NONE, SmpType::Sint, fetch_req_body_size).uses(RQ),
    FetchKw::new("req.body_param", NAME, SmpType::Bin, fetch_body_param).uses(RQ),
    FetchKw::new("res.body", ArgSpec::NONE, SmpType::Bin, fetch_res_body).uses(uses::HRSHV),
    FetchKw::new("res.body_len", ArgSpec::NONE, SmpType::Sint, fetch_res_body_len).uses(uses::HRSHV),
    FetchKw::new("res.body_size", ArgSpec::NONE, SmpType::Sint, fetch_res_body_size).uses(uses::HRSHV),
    FetchKw::new("res.ver", ArgSpec::NONE, SmpType::Str, fetch_res_ver).uses(uses::HRSHV),
    FetchKw::new("resp_ver", ArgSpec::NONE, SmpType::Str, fetch_res_ver).uses(uses::HRSHV),
    FetchKw::new("status", ArgSpec::NONE, SmpType::Sint, fetch_status).uses(uses::HRSHP),
    // COMPAT: HAProxy 2.6 declares `unique-id` with a source number as its use
    // bits, which amounts to constant, listener and frontend; kept for the same checks.
    FetchKw::new("unique-id", ArgSpec::NONE, SmpType::Str, fetch_unique_id)
        .uses(uses::CONST | uses::LISTN | uses::FTEND),
    FetchKw::new("url", ArgSpec::NONE, SmpType::Str, fetch_url).uses(RQ),
    FetchKw::new("url32", ArgSpec::NONE, SmpType::Sint, fetch_url32).uses(RQ),
    FetchKw::new("url32+src", ArgSpec::NONE, SmpType::Bin, fetch_url32_src).uses(RQ),
    FetchKw::new("url_ip", ArgSpec::NONE, SmpType::Ipv4, fetch_url_ip).uses(RQ),
    FetchKw::new("url_port", ArgSpec::NONE, SmpType::Sint, fetch_url_port).uses(RQ),
    FetchKw::new("url_param", NAME_DELIM, SmpType::Str, fetch_url_param).uses(RQ),
    FetchKw::new("urlp", NAME_DELIM, SmpType::Str, fetch_url_param).uses(RQ),
    FetchKw::new("urlp_val", NAME_DELIM, SmpType::Sint, fetch_urlp_val).uses(RQ),
];
