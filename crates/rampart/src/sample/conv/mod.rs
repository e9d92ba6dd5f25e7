//! Converter keywords, one file per family, each ending with its `KEYWORDS` table.
//! HAProxy counterparts: src/sample.c (generic converters), src/http_conv.c,
//! src/ssl_sample.c (digests), src/map.c (map converters), src/vars.c (`set-var`).
//!
//! - `string`: `lower upper length bytes field word ltrim rtrim cut_crlf host_only
//!   port_only iif regsub`
//! - `compose`: `concat add_item strcmp secure_memcmp` (the converters that read a
//!   variable)
//! - `arith`: `add sub mul div mod neg and or xor cpl not bool odd even`
//! - `hash`: `sdbm djb2 wt6 crc32 crc32c xxh3 xxh32 xxh64`
//! - `digest`: `sha1 sha2 digest hmac`
//! - `encode`: `base64 b64dec ub64enc ub64dec hex hex2i be2dec be2hex htonl json`
//! - `http`: `url_dec url_enc language`
//! - `time`: `ltime utime http_date`, over a strftime of our own ([`strftime`])
//! - `net`: `ipmask`
//! - `fix`, `mqtt`: `fix_is_valid fix_tag_value`, `mqtt_is_valid mqtt_field_value`
//!   (checks and fields of FIX and MQTT messages in TCP payloads)
//! - `json_query`: `json_query`, over a JSON scanner of its own ([`json_scan`])
//! - `jwt`: `jwt_header_query jwt_payload_query jwt_verify`
//! - `stick`: `in_table table_http_req_rate ...` (stick-table lookups)
//! - `map`: `map map_str map_beg ... map_ip_ip`, over the pattern sets of
//!   `crate::pattern`
//!
//! The evaluator casts the input to the keyword's `input` type before calling it, so a
//! converter only sees the types it declared; each one still refuses (returns `None`
//! for) anything else rather than panic. A converter that keeps part of its input
//! (`bytes`, `field`, `word`, `ltrim` ...) returns a borrowed slice of it; only
//! converters producing new bytes allocate.
//!
//! COMPAT: HAProxy builds converter output in a `tune.bufsize` trash chunk and
//! truncates (or fails) past it; rampart's outputs are not capped, and are bounded by
//! their input, itself bounded by the buffers.

use std::borrow::Cow;
use std::ops::Range;

use super::ctx::SampleCtx;
use super::kw::{Arg, ConvKw};
use super::types::{Sample, SmpType};

mod arith;
mod compose;
mod digest;
mod encode;
mod fix;
pub(crate) mod hash;
mod http;
pub(crate) use http::parse_qvalue;
mod json_query;
mod json_scan;
mod jwt;
pub mod map;
mod mqtt;
mod net;
pub mod stick;
mod strftime;
mod string;
mod time;

pub use time::{load_time_zone, local_strftime};

/// Every converter table, searched in order.
pub const ALL: &[&[ConvKw]] = &[
    string::KEYWORDS,
    compose::KEYWORDS,
    arith::KEYWORDS,
    hash::KEYWORDS,
    digest::KEYWORDS,
    encode::KEYWORDS,
    http::KEYWORDS,
    time::KEYWORDS,
    net::KEYWORDS,
    fix::KEYWORDS,
    mqtt::KEYWORDS,
    json_query::KEYWORDS,
    jwt::KEYWORDS,
    super::vars::CONVERTERS,
    map::KEYWORDS,
    stick::KEYWORDS,
];

/// The converter named `name`.
pub fn find(name: &str) -> Option<&'static ConvKw> {
    all().find(|k| k.name == name)
}

/// Every converter name, for did-you-mean suggestions.
pub fn names() -> impl Iterator<Item = &'static str> {
    all().map(|k| k.name)
}

fn all() -> impl Iterator<Item = &'static ConvKw> {
    ALL.iter().flat_map(|t| t.iter()).chain(TEST_ONLY.iter())
}

/// Converters the expression tests use whatever the tables hold.
#[cfg(test)]
const TEST_ONLY: &[ConvKw] = super::expr_tests::CONVERTERS;
#[cfg(not(test))]
const TEST_ONLY: &[ConvKw] = &[];

// === argument access ===

/// Integer argument `i`, `None` when it was not given.
fn arg_sint(args: &[Arg], i: usize) -> Option<i64> {
    match args.get(i) {
        Some(Arg::Sint(v)) => Some(*v),
        _ => None,
    }
}

/// String argument `i`; an argument not given reads as empty, as HAProxy's zeroed
/// `struct arg`.
fn arg_bytes(args: &[Arg], i: usize) -> &[u8] {
    match args.get(i) {
        Some(Arg::Str(s)) => s,
        _ => &[],
    }
}

// === sample access ===

/// The bytes of a string or binary sample.
fn bytes_of(smp: Sample<'_>) -> Option<Cow<'_, [u8]>> {
    match smp {
        Sample::Str(b) | Sample::Bin(b) => Some(b),
        _ => None,
    }
}

/// The integer of an integer or boolean sample.
fn sint_of(smp: &Sample<'_>) -> Option<i64> {
    match smp {
        Sample::Sint(i) => Some(*i),
        Sample::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

/// The part `r` of `b`: borrowed from a borrowed input, or the owned input cut in
/// place, so no new bytes are allocated.
fn slice(b: Cow<'_, [u8]>, r: Range<usize>) -> Cow<'_, [u8]> {
    match b {
        Cow::Borrowed(s) => Cow::Borrowed(&s[r]),
        Cow::Owned(mut v) => {
            v.truncate(r.end);
            v.drain(..r.start);
            Cow::Owned(v)
        }
    }
}

/// A string sample owning new bytes.
fn new_str(v: Vec<u8>) -> Sample<'static> {
    Sample::Str(Cow::Owned(v))
}

/// A binary sample owning new bytes.
fn new_bin(v: Vec<u8>) -> Sample<'static> {
    Sample::Bin(Cow::Owned(v))
}

// === protocol checks ===

/// The verdict of a protocol check (`fix_is_valid`, `mqtt_is_valid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Validity {
    Valid,
    Invalid,
    /// The message may still complete: not decided yet.
    NeedMore,
}

impl Validity {
    /// A boolean once decided; absent while more bytes could decide, with
    /// [`SampleCtx::may_change`] set so that content rules wait (and cleared otherwise,
    /// as HAProxy clears `SMP_F_MAY_CHANGE` the payload fetch set).
    fn into_sample(self, ctx: &SampleCtx<'_>) -> Option<Sample<'static>> {
        ctx.may_change.set(self == Validity::NeedMore);
        match self {
            Validity::Valid => Some(Sample::Bool(true)),
            Validity::Invalid => Some(Sample::Bool(false)),
            Validity::NeedMore => None,
        }
    }
}

// === variables ===

/// A variable argument (`txn.foo`) compiled from its name, `None` if `text` is not a
/// variable name (HAProxy's `vars_check_arg`).
fn var_arg(text: &[u8]) -> Option<Arg> {
    super::vars::parse_name(text).ok().map(Arg::Var)
}

/// The value of variable argument `arg` cast to `to`; `None` when `arg` is not a
/// variable, the variable is not set, or it does not cast.
fn var_cast(arg: &Arg, ctx: &SampleCtx<'_>, to: SmpType) -> Option<Sample<'static>> {
    let Arg::Var(v) = arg else { return None };
    super::cast::cast(ctx.vars.get(v)?, to)
}

/// The value of variable argument `arg` as an integer.
fn var_sint(arg: &Arg, ctx: &SampleCtx<'_>) -> Option<i64> {
    sint_of(&var_cast(arg, ctx, SmpType::Sint)?)
}

/// The value of variable argument `arg` as a string (`bin`: as binary).
fn var_bytes(arg: &Arg, ctx: &SampleCtx<'_>, bin: bool) -> Option<Vec<u8>> {
    let to = if bin { SmpType::Bin } else { SmpType::Str };
    bytes_of(var_cast(arg, ctx, to)?).map(Cow::into_owned)
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        let mut seen = std::collections::HashSet::new();
        for kw in ALL.iter().flat_map(|t| t.iter()) {
            assert!(seen.insert(kw.name), "duplicate converter {}", kw.name);
            assert_eq!(find(kw.name).map(|k| k.name), Some(kw.name));
            assert!(kw.args.mandatory <= kw.args.types.len(), "{}", kw.name);
        }
        assert!(find("nosuch").is_none());
    }

    #[test]
    fn slice_borrows_or_cuts_in_place() {
        let b: &[u8] = b"abcdef";
        assert!(matches!(slice(Cow::Borrowed(b), 1..3), Cow::Borrowed(b"bc")));
        assert_eq!(&*slice(Cow::Owned(b.to_vec()), 2..6), b"cdef");
        assert_eq!(&*slice(Cow::Owned(b.to_vec()), 0..0), b"");
    }
}

#[cfg(test)]
mod e2e_tests;
