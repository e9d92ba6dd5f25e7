//! Authentication fetches: the credentials of the request's `Authorization` header
//! (`http_auth_type`, `http_auth_user`, `http_auth_pass`, `http_auth_bearer`) and their
//! check against a `userlist` (`http_auth`, `http_auth_group`).
//! HAProxy counterpart: `get_http_auth()` and `smp_fetch_http_auth*()`
//! (src/http_fetch.c, 2.6); the userlists are in `crate::auth`.
//!
//! The header is read as HAProxy reads it: its first comma-separated value, a scheme
//! up to the first space (tabs do not separate), any number of spaces, then the
//! credentials. The scheme is compared with `strncasecmp("Basic", scheme,
//! len(scheme))`, so any case-insensitive prefix of `Basic` (`B`, `bas` ...) counts as
//! Basic, and of `Bearer` (`Be` ...) as Bearer. Basic credentials must be strict
//! base64 and hold a `:`; the user ends at the first `:`, the password at the first
//! NUL byte (HAProxy works on C strings).
//!
//! COMPAT: `Proxy-Authorization` is never read: HAProxy reads it instead of
//! `Authorization` under `option http-use-proxy-header`, which rampart refuses.
//! COMPAT: HAProxy remembers per transaction that the header was unusable and answers
//! "absent" afterwards even if a rule added the header since; rampart reads the
//! header as it is at each evaluation.

use std::borrow::Cow;

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::{DecodePaddingMode, Engine};

use crate::auth::UserlistRt;
use crate::http::MsgView;
use crate::sample::ctx::SampleCtx;
use crate::sample::kw::{uses, Arg, ArgSpec, ArgT, FetchKw};
use crate::sample::types::{Sample, SmpType};

use super::Emit;

/// Standard alphabet, canonical `=` padding, leftover bits ignored: HAProxy's
/// `base64dec` (COMPAT: as the `b64dec` converter, padding inside the text is refused).
const B64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
);

/// The authentication scheme of the request (HAProxy's `HTTP_AUTH_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Basic credentials that decode and hold a `:`.
    Basic,
    Bearer,
}

/// The `Authorization` header split into its scheme and its credentials (still encoded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthHeader<'a> {
    pub scheme: Scheme,
    /// What follows the scheme and its spaces.
    pub data: &'a [u8],
}

/// Whether `word` is a case-insensitive prefix of `full` (`strncasecmp(full, word,
/// len(word)) == 0`).
fn prefix_of(word: &[u8], full: &[u8]) -> bool {
    word.len() <= full.len() && full[..word.len()].eq_ignore_ascii_case(word)
}

/// Whether request `m` of frontend `fe` is a proxied one under `option
/// http-use-proxy-header`: its target is neither a path nor `*` (HAProxy's
/// `TX_USE_PX_CONN`). COMPAT: HAProxy looks at the target as received, rampart at the
/// target as rules left it.
pub fn proxied(rt: &dyn crate::sample::Host, fe: usize, m: MsgView<'_>) -> bool {
    rt.use_proxy_header(fe) && !matches!(m.uri().first(), Some(b'/' | b'*'))
}

/// The header holding the credentials of request `m`: `Proxy-Authorization` for a
/// [`proxied`] one, else `Authorization`.
fn credentials_header(ctx: &SampleCtx<'_>, m: MsgView<'_>) -> &'static [u8] {
    if proxied(ctx.rt, ctx.fe, m) {
        b"proxy-authorization"
    } else {
        b"authorization"
    }
}

/// The scheme and credentials of the request's header `name`, Basic ones not decoded
/// yet.
fn split_header<'a>(m: MsgView<'a>, name: &'static [u8]) -> Option<(Scheme, &'a [u8])> {
    let value = m.values(name).next()?;
    let sp = value.iter().position(|&c| c == b' ').filter(|&p| p > 0)?;
    let scheme = &value[..sp];
    let start = value[sp..].iter().position(|&c| c != b' ').map_or(value.len(), |p| sp + p);
    let data = &value[start..];
    if prefix_of(scheme, b"Basic") {
        Some((Scheme::Basic, data))
    } else if prefix_of(scheme, b"Bearer") {
        Some((Scheme::Bearer, data))
    } else {
        None
    }
}

/// HAProxy's `get_http_auth()`: the request's credentials, if its header is usable.
pub fn auth_header<'a>(m: MsgView<'a>) -> Option<AuthHeader<'a>> {
    auth_header_in(m, b"authorization")
}

/// [`auth_header`] read in header `name`.
fn auth_header_in<'a>(m: MsgView<'a>, name: &'static [u8]) -> Option<AuthHeader<'a>> {
    let (scheme, data) = split_header(m, name)?;
    if scheme == Scheme::Basic {
        with_basic(data, &mut [0u8; 256], |_, _| ())?;
    }
    Some(AuthHeader { scheme, data })
}

/// The Basic credentials of the request, decoded, passed to `f(user, password)`.
fn with_request_basic<R>(ctx: &SampleCtx<'_>, f: impl FnOnce(&[u8], &[u8]) -> R) -> Option<R> {
    let m = ctx.req?;
    match split_header(m, credentials_header(ctx, m))? {
        (Scheme::Basic, data) => with_basic(data, &mut [0u8; 256], f),
        _ => None,
    }
}

/// Decodes Basic credentials `data` (into `buf` when they fit, else on the heap) and
/// calls `f(user, password)`; `None` when they do not decode or hold no `:` before a
/// NUL byte.
pub fn with_basic<R>(data: &[u8], buf: &mut [u8], f: impl FnOnce(&[u8], &[u8]) -> R) -> Option<R> {
    let heap;
    let decoded: &[u8] = match B64.decode_slice(data, buf) {
        Ok(n) => &buf[..n],
        Err(base64::DecodeSliceError::OutputSliceTooSmall) => {
            heap = B64.decode(data).ok()?;
            &heap
        }
        Err(_) => return None,
    };
    let text = decoded.split(|&c| c == 0).next().unwrap_or_default();
    let colon = text.iter().position(|&c| c == b':')?;
    let pass = &decoded[colon + 1..];
    let pass = pass.split(|&c| c == 0).next().unwrap_or_default();
    Some(f(&text[..colon], pass))
}

fn fetch_http_auth_type<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(h) = ctx.req.and_then(|m| auth_header_in(m, credentials_header(ctx, m))) else { return };
    let name: &'static [u8] = match h.scheme {
        Scheme::Basic => b"Basic",
        Scheme::Bearer => b"Bearer",
    };
    emit(Sample::str(name));
}

fn fetch_http_auth_user<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(user) = with_request_basic(ctx, |u, _| u.to_vec()) {
        emit(Sample::Str(Cow::Owned(user)));
    }
}

fn fetch_http_auth_pass<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(pass) = with_request_basic(ctx, |_, p| p.to_vec()) {
        emit(Sample::Str(Cow::Owned(pass)));
    }
}

/// `http_auth_bearer([<header>])`: the Bearer token of `Authorization`, or of the named
/// header. With a header name, HAProxy answers an empty string when the header is
/// absent or holds no Bearer token (it compares the whole scheme there, not a prefix).
fn fetch_http_auth_bearer<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(m) = ctx.req else { return };
    match args.first().and_then(Arg::as_bytes) {
        Some(name) => {
            let token = m.values(name).next().and_then(|v| {
                let sp = v.iter().position(|&c| c == b' ')?;
                let rest = &v[sp + 1..];
                let rest = &rest[rest.iter().position(|&c| c != b' ').unwrap_or(rest.len())..];
                (v[..sp].eq_ignore_ascii_case(b"Bearer") && !rest.is_empty()).then_some(rest)
            });
            emit(Sample::str(token.unwrap_or_default()));
        }
        None => {
            if let Some(h) = auth_header_in(m, credentials_header(ctx, m)).filter(|h| h.scheme == Scheme::Bearer) {
                emit(Sample::str(h.data));
            }
        }
    }
}

fn userlist(args: &[Arg]) -> Option<&UserlistRt> {
    match args.first() {
        Some(Arg::Userlist(ul)) => Some(ul),
        _ => None,
    }
}

/// Checks the request's Basic credentials against `ul`: `None` without usable Basic
/// credentials, else whether they are valid, with the user name when they are.
fn check(ul: &UserlistRt, ctx: &SampleCtx<'_>, want_user: bool) -> Option<(bool, Option<Vec<u8>>)> {
    with_request_basic(ctx, |user, pass| {
        let ok = ul.check(user, pass);
        (ok, (ok && want_user).then(|| user.to_vec()))
    })
}

/// `http_auth(<userlist>)`: whether the Basic credentials are those of a user of the
/// list; absent without Basic credentials.
fn fetch_http_auth<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(ul) = userlist(args) else { return };
    if let Some((ok, _)) = check(ul, ctx, false) {
        emit(Sample::Bool(ok));
    }
}

/// `http_auth_group(<userlist>)`: the user name when the credentials are valid, absent
/// otherwise. Its ACL form (`acl a http_auth_group(L) G1 G2`) matches when that user
/// belongs to one of the groups (see `acl::expr`, method `MatchMethod::Auth`).
fn fetch_http_auth_group<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(ul) = userlist(args) else { return };
    if let Some((true, Some(user))) = check(ul, ctx, true) {
        emit(Sample::Str(Cow::Owned(user)));
    }
}

const RQ: u32 = uses::HRQHV;
const USR: ArgSpec = ArgSpec::new(&[ArgT::Usr], 1);

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("http_auth", USR, SmpType::Bool, fetch_http_auth).uses(RQ),
    FetchKw::new("http_auth_bearer", ArgSpec::new(&[ArgT::Str], 0), SmpType::Str, fetch_http_auth_bearer).uses(RQ),
    FetchKw::new("http_auth_group", USR, SmpType::Str, fetch_http_auth_group).uses(RQ),
    FetchKw::new("http_auth_pass", ArgSpec::NONE, SmpType::Str, fetch_http_auth_pass).uses(RQ),
    FetchKw::new("http_auth_type", ArgSpec::NONE, SmpType::Str, fetch_http_auth_type).uses(RQ),
    FetchKw::new("http_auth_user", ArgSpec::NONE, SmpType::Str, fetch_http_auth_user).uses(RQ),
];

#[cfg(test)]
#[path = "auth_tests.rs"]
mod tests;
