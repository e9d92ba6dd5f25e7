//! FIX (Financial Information eXchange) converters: `fix_is_valid` checks that a
//! binary sample holds a whole, well-formed FIX message, `fix_tag_value(<tag>)`
//! extracts the value of one tag. HAProxy counterpart: src/fix.c and
//! `sample_conv_fix_*` in src/sample.c; configuration.txt §7.3.1.
//!
//! A FIX message is a run of `<tag>=<value><SOH>` fields: `8` (BeginString, the
//! version), `9` (BodyLength), `35` (MsgType), the body, then `10` (CheckSum, the sum
//! of every byte before it modulo 256, on three digits).
//!
//! Both read the sample in place: `fix_tag_value` returns a borrowed part of it. Both
//! say "not yet" (absent, with [`SampleCtx::may_change`] set) when the message could
//! still complete, so that `tcp-request content` rules wait for more bytes.

use std::ops::Range;

use super::{bytes_of, slice, Validity};
use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{Arg, ArgList, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};

/// The field separator.
const SOH: u8 = 0x01;
/// Below this many bytes a message cannot be whole (HAProxy's `FIX_MSG_MINSIZE`).
const MIN_SIZE: usize = 26;

const TAG_BEGIN_STRING: u32 = 8;
const TAG_BODY_LENGTH: u32 = 9;
const TAG_CHECKSUM: u32 = 10;
const TAG_MSG_TYPE: u32 = 35;

/// The tags `fix_tag_value` also knows by name (case-insensitive).
const TAG_NAMES: &[(&str, u32)] = &[
    ("MsgType", TAG_MSG_TYPE),
    ("CheckSum", TAG_CHECKSUM),
    ("BodyLength", TAG_BODY_LENGTH),
    ("TargetCompID", 56),
    ("BeginString", TAG_BEGIN_STRING),
    ("SenderCompID", 49),
];

/// The BeginString values known, with the highest standard tag of the version
/// (FIXT.1.1 covers 5.0 up to SP2). Tags 10000 to 19999 are user-defined in all.
const VERSIONS: &[(&[u8], u32)] = &[
    (b"FIX.4.0", 140),
    (b"FIX.4.1", 211),
    (b"FIX.4.2", 446),
    (b"FIX.4.3", 659),
    (b"FIX.4.4", 956),
    (b"FIXT.1.1", 1621),
];

// === parsing ===

/// Leading decimal digits of `s` as HAProxy's `read_uint` reads them (wrapping on
/// overflow), and how many bytes they took.
fn read_uint(s: &[u8]) -> (u32, usize) {
    let mut n = 0u32;
    let mut used = 0;
    for &c in s {
        if !c.is_ascii_digit() {
            break;
        }
        n = n.wrapping_mul(10).wrapping_add(u32::from(c - b'0'));
        used += 1;
    }
    (n, used)
}

/// Digits read without any check, as HAProxy's `strl2ui` (used for the checksum).
fn strl2ui(s: &[u8]) -> u32 {
    s.iter().fold(0u32, |n, &c| n.wrapping_mul(10).wrapping_sub(u32::from(b'0')).wrapping_add(u32::from(c)))
}

/// A tag number: only digits, not 0; with a version, within the version's range or
/// user-defined. 0 when not valid.
fn check_id(tag: &[u8], max: Option<u32>) -> u32 {
    let (id, used) = read_uint(tag);
    if used != tag.len() || id == 0 {
        return 0;
    }
    match max {
        Some(max) if id > max && !(10000..=19999).contains(&id) => 0,
        _ => id,
    }
}

/// One `tag=value<SOH>` field at the start of some bytes.
#[derive(Debug, PartialEq, Eq)]
enum Field {
    /// The tag and value positions, relative to the field start; the field takes
    /// `value.end + 1` bytes.
    Whole { tag: Range<usize>, value: Range<usize> },
    /// No `=` followed by a SOH yet.
    Incomplete,
    /// An empty tag.
    EmptyTag,
}

/// The field at the start of `s`: the tag runs to the first `=`, the value from there
/// to the next SOH (so a SOH before the `=` ends up in the tag, which then fails the
/// digit check, as in HAProxy).
fn next_field(s: &[u8]) -> Field {
    let Some(eq) = memchr::memchr(b'=', s) else { return Field::Incomplete };
    let Some(len) = memchr::memchr(SOH, &s[eq + 1..]) else { return Field::Incomplete };
    if eq == 0 {
        return Field::EmptyTag;
    }
    Field::Whole { tag: 0..eq, value: eq + 1..eq + 1 + len }
}

/// The highest tag of BeginString `v`, `None` for an unknown version.
fn version_max(v: &[u8]) -> Option<u32> {
    VERSIONS.iter().find(|(name, _)| *name == v).map(|&(_, max)| max)
}

/// Checks a FIX message (HAProxy's `fix_validate_message`): fields well formed and
/// numbered within the version's range, BeginString, BodyLength then MsgType first,
/// and a CheckSum field whose position matches BodyLength and whose value matches the
/// bytes before it. A message that may still complete needs more data.
pub(super) fn validate(msg: &[u8]) -> Validity {
    if msg.len() < MIN_SIZE {
        return Validity::NeedMore;
    }
    let (mut pos, mut count, mut sum) = (0usize, 0u32, 0u8);
    let mut max = None;
    let mut body: Option<(usize, u32)> = None;
    while pos < msg.len() {
        let rest = &msg[pos..];
        let (tag, value) = match next_field(rest) {
            Field::Whole { tag, value } => (&rest[tag], &rest[value]),
            Field::Incomplete => return Validity::NeedMore,
            Field::EmptyTag => return Validity::Invalid,
        };
        let id = check_id(tag, max);
        if id == 0 {
            return Validity::Invalid;
        }
        count += 1;
        match count {
            1 if id != TAG_BEGIN_STRING => return Validity::Invalid,
            1 => match version_max(value) {
                Some(m) => max = Some(m),
                None => return Validity::Invalid,
            },
            2 if id != TAG_BODY_LENGTH => return Validity::Invalid,
            2 => {
                let (len, used) = read_uint(value);
                if used != value.len() || len == 0 {
                    return Validity::Invalid;
                }
                body = Some((pos + tag.len() + value.len() + 2, len));
            }
            3 if id != TAG_MSG_TYPE => return Validity::Invalid,
            _ if id == TAG_CHECKSUM => return check_trailer(pos, value, sum, body),
            _ => {}
        }
        sum = rest[..tag.len() + value.len() + 2].iter().fold(sum, |s, &c| s.wrapping_add(c));
        pos += tag.len() + value.len() + 2;
    }
    if body.is_some() {
        Validity::NeedMore
    } else {
        Validity::Invalid
    }
}

/// The CheckSum field at `pos`: the body (from after BodyLength) ends right before it,
/// its value has three characters and equals the sum of the bytes before it.
fn check_trailer(pos: usize, value: &[u8], sum: u8, body: Option<(usize, u32)>) -> Validity {
    let Some((start, len)) = body else { return Validity::Invalid };
    let body_ok = pos.checked_sub(start).is_some_and(|n| n as u64 == u64::from(len));
    if body_ok && value.len() == 3 && u32::from(sum) == strl2ui(value) {
        Validity::Valid
    } else {
        Validity::Invalid
    }
}

/// What [`tag_value`] found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum TagValue {
    /// Where the value is in the message (possibly empty).
    Found(Range<usize>),
    /// The message ends before the tag or a CheckSum: it may come later.
    NeedMore,
    /// A malformed field, or the CheckSum met first.
    Absent,
}

/// The value of tag `id` in `msg` (HAProxy's `fix_tag_value`): fields are only
/// checked for a non-empty numeric tag; the search stops at CheckSum.
pub(super) fn tag_value(msg: &[u8], id: u32) -> TagValue {
    let mut pos = 0;
    while pos < msg.len() {
        let rest = &msg[pos..];
        let (tag, value) = match next_field(rest) {
            Field::Whole { tag, value } => (tag, value),
            Field::Incomplete => break,
            Field::EmptyTag => return TagValue::Absent,
        };
        match check_id(&rest[tag.clone()], None) {
            0 => return TagValue::Absent,
            t if t == id => return TagValue::Found(pos + value.start..pos + value.end),
            TAG_CHECKSUM => return TagValue::Absent,
            _ => pos += value.end + 1,
        }
    }
    TagValue::NeedMore
}

// === converters ===

/// `fix_is_valid`: a boolean once the message is whole or broken, absent (and may
/// change) while it can still complete.
fn conv_fix_is_valid<'a>(_: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    validate(&bytes_of(smp)?).into_sample(ctx)
}

/// `fix_tag_value(<tag>)`: the tag's value, borrowed.
///
/// COMPAT: as HAProxy, an empty value reads as "not yet" (absent, may change).
fn conv_fix_tag_value<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let id = u32::try_from(args.first().and_then(Arg::as_sint)?).ok()?;
    let b = bytes_of(smp)?;
    let found = tag_value(&b, id);
    ctx.may_change.set(match &found {
        TagValue::Found(r) => r.is_empty(),
        TagValue::NeedMore => true,
        TagValue::Absent => false,
    });
    match found {
        TagValue::Found(r) if !r.is_empty() => Some(Sample::Bin(slice(b, r))),
        _ => None,
    }
}

/// The tag of `fix_tag_value`, a number or a known name, compiled to its number.
fn check_fix_tag_value(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let name = args.first().and_then(Arg::as_bytes).unwrap_or_default();
    let id = match check_id(name, None) {
        0 => TAG_NAMES.iter().find(|(n, _)| n.as_bytes().eq_ignore_ascii_case(name)).map_or(0, |&(_, id)| id),
        id => id,
    };
    if id == 0 {
        return Err(format!("Unknown FIX tag name '{}'", String::from_utf8_lossy(name)));
    }
    args[0] = Arg::Sint(i64::from(id));
    Ok(())
}

pub const KEYWORDS: &[ConvKw] = &[
    ConvKw::new("fix_is_valid", ArgSpec::NONE, SmpType::Bin, SmpType::Bool, conv_fix_is_valid),
    ConvKw::new("fix_tag_value", ArgSpec::new(&[ArgT::Str], 1), SmpType::Bin, SmpType::Bin, conv_fix_tag_value)
        .check(check_fix_tag_value),
];

#[cfg(test)]
#[path = "fix_tests.rs"]
mod tests;
