//! MQTT converters: `mqtt_is_valid` checks that a binary sample holds a whole,
//! well-formed CONNECT or CONNACK packet (MQTT 3.1, 3.1.1 and 5.0),
//! `mqtt_field_value(<packet type>,<field name or property id>)` extracts one of its
//! fields. HAProxy counterpart: src/mqtt.c and `sample_conv_mqtt_*` in src/sample.c.
//!
//! As in HAProxy, only the first packet of each side is understood (CONNECT from the
//! client, CONNACK from the server): any other packet type is invalid. Field values
//! are strings: text fields are borrowed from the sample, numbers are written in
//! decimal. A packet whose announced length has not arrived yet is "not yet" (absent,
//! with [`SampleCtx::may_change`] set) so that `tcp-request content` rules wait.

use std::borrow::Cow;
use std::ops::Range;

use super::{bytes_of, slice, Validity};
use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{Arg, ArgList, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};

// === packet types and fields ===

const CONNECT: u8 = 1;
const CONNACK: u8 = 2;

/// The packet type names, numbered from 1 (CONNECT) to 15 (AUTH).
const TYPES: [&str; 15] = [
    "CONNECT",
    "CONNACK",
    "PUBLISH",
    "PUBACK",
    "PUBREC",
    "PUBREL",
    "PUBCOMP",
    "SUBSCRIBE",
    "SUBACK",
    "UNSUBSCRIBE",
    "UNSUBACK",
    "PINGREQ",
    "PINGRESP",
    "DISCONNECT",
    "AUTH",
];

/// The flags (low nibble of the first byte) each packet type must carry, by type.
/// COMPAT: as HAProxy, PUBLISH is only accepted with all four flags set (it is
/// invalid anyway, being no CONNECT or CONNACK).
const TYPE_FLAGS: [u8; 16] = [0, 0, 0, 0x0F, 0, 0, 0x02, 0, 0x02, 0, 0x02, 0, 0, 0, 0, 0];

// CONNECT flags.
const FL_RESERVED: u8 = 0x01;
const FL_WILL: u8 = 0x04;
const FL_WILL_QOS: u8 = 0x18;
const FL_WILL_RETAIN: u8 = 0x20;
const FL_PASSWORD: u8 = 0x40;
const FL_USERNAME: u8 = 0x80;

/// The fields with a name; MQTT 5.0 properties are named by their identifier.
const NAMED: [&str; 10] = [
    "flags",
    "reason_code",
    "protocol_name",
    "protocol_version",
    "client_identifier",
    "will_topic",
    "will_payload",
    "username",
    "password",
    "keepalive",
];
const F_FLAGS: u16 = 1;
const F_REASON_CODE: u16 = 2;
const F_PROTOCOL_NAME: u16 = 3;
const F_PROTOCOL_VERSION: u16 = 4;
const F_CLIENT_ID: u16 = 5;
const F_WILL_TOPIC: u16 = 6;
const F_WILL_PAYLOAD: u16 = 7;
const F_USERNAME: u16 = 8;
const F_PASSWORD: u16 = 9;
const F_KEEPALIVE: u16 = 10;
/// A property `p` is compiled to `PROP | p`.
const PROP: u16 = 0x100;

/// Property identifiers that name a field (user properties, 38, are named but never
/// extracted).
const PROPS_KNOWN: [u8; 27] =
    [1, 2, 3, 8, 9, 11, 17, 18, 19, 21, 22, 23, 24, 25, 26, 28, 31, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42];

/// The fields `mqtt_field_value` accepts for packet type `t`: named fields (by
/// `F_*`) and properties.
fn fields_of(t: u8) -> (&'static [u16], &'static [u8]) {
    const NONE: (&[u16], &[u8]) = (&[], &[]);
    const ACKS: (&[u16], &[u8]) = (&[F_REASON_CODE], &[31, 38]);
    match t {
        CONNECT => (
            &[
                F_PROTOCOL_NAME,
                F_PROTOCOL_VERSION,
                F_FLAGS,
                F_KEEPALIVE,
                F_CLIENT_ID,
                F_WILL_TOPIC,
                F_WILL_PAYLOAD,
                F_USERNAME,
                F_PASSWORD,
            ],
            &[1, 2, 3, 8, 9, 17, 21, 22, 23, 24, 25, 33, 34, 38, 39],
        ),
        CONNACK => (
            &[F_FLAGS, F_PROTOCOL_VERSION, F_REASON_CODE],
            &[17, 18, 19, 21, 22, 26, 28, 31, 33, 34, 36, 37, 38, 39, 40, 41, 42],
        ),
        3 => (&[], &[1, 2, 3, 8, 9, 11, 35, 38]),
        4..=7 => ACKS,
        8 => (&[], &[11, 38]),
        9 | 11 => (&[], &[31, 38]),
        10 => (&[], &[38]),
        14 => (&[F_REASON_CODE], &[17, 28, 31, 38]),
        15 => (&[], &[21, 22, 31, 38]),
        _ => NONE,
    }
}

// === properties (MQTT 5.0) ===

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    U8,
    U16,
    U32,
    Str,
    /// A user property: a name and a value, may repeat, not kept.
    Pair,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    Any,
    NonZero,
    /// 0 or 1.
    Flag,
    NonEmpty,
}

use Kind::{Pair, Str, U16, U32, U8};
use Rule::{Any, Flag, NonEmpty, NonZero};

const CONNECT_PROPS: &[(u8, Kind, Rule)] = &[
    (0x11, U32, Any),
    (0x21, U16, NonZero),
    (0x27, U32, NonZero),
    (0x22, U16, Any),
    (0x19, U8, Flag),
    (0x17, U8, Flag),
    (0x26, Pair, Any),
    (0x15, Str, Any),
    (0x16, Str, Any),
];

const WILL_PROPS: &[(u8, Kind, Rule)] = &[
    (0x18, U32, Any),
    (0x01, U8, Flag),
    (0x02, U32, Any),
    (0x03, Str, Any),
    (0x08, Str, Any),
    (0x09, Str, Any),
    (0x26, Pair, Any),
];

const CONNACK_PROPS: &[(u8, Kind, Rule)] = &[
    (0x11, U32, Any),
    (0x21, U16, NonZero),
    (0x24, U8, Flag),
    (0x25, U8, Flag),
    (0x27, U32, NonZero),
    (0x12, Str, NonEmpty),
    (0x22, U16, Any),
    (0x1F, Str, Any),
    (0x28, U8, Flag),
    (0x29, U8, Flag),
    (0x2A, U8, Flag),
    (0x13, U16, Any),
    (0x1A, Str, Any),
    (0x1C, Str, Any),
    (0x26, Pair, Any),
    (0x15, Str, Any),
    (0x16, Str, Any),
];

/// Highest property identifier kept, plus one.
const NPROPS: usize = 43;

// === reading ===

/// A cursor over `buf[..end]`; positions stay those of the whole sample, so that text
/// fields are returned as ranges of it.
struct Reader<'b> {
    buf: &'b [u8],
    pos: usize,
    end: usize,
}

impl Reader<'_> {
    fn left(&self) -> usize {
        self.end - self.pos
    }

    fn take(&mut self, n: usize) -> Option<Range<usize>> {
        if self.left() < n {
            return None;
        }
        self.pos += n;
        Some(self.pos - n..self.pos)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|r| self.buf[r.start])
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|r| u16::from_be_bytes([self.buf[r.start], self.buf[r.start + 1]]))
    }

    fn u32(&mut self) -> Option<u32> {
        let r = self.take(4)?;
        let b = &self.buf[r];
        Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A variable byte integer of at most four bytes (HAProxy's `mqtt_read_varint`):
    /// the bytes present are summed even when the input ends before the last one.
    fn varint(&mut self) -> Option<u32> {
        let (mut v, mut shift) = (0u32, 0);
        for _ in 0..4 {
            let Some(b) = self.u8() else { return Some(v) };
            v += u32::from(b & 0x7F) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// A string: its 2-byte length, then its bytes.
    fn string(&mut self) -> Option<Range<usize>> {
        let len = self.u16()?;
        self.take(usize::from(len))
    }
}

/// What a valid CONNECT or CONNACK holds; unset fields are 0 or empty, as in HAProxy.
struct Packet {
    kind: u8,
    version: u8,
    flags: u8,
    reason_code: u8,
    keepalive: u16,
    /// `F_PROTOCOL_NAME` to `F_PASSWORD`, by field number.
    texts: [Range<usize>; 10],
    /// Numeric and text properties, by identifier.
    prop_ints: [u32; NPROPS],
    prop_texts: [Range<usize>; NPROPS],
}

impl Packet {
    fn new(kind: u8) -> Packet {
        Packet {
            kind,
            version: 0,
            flags: 0,
            reason_code: 0,
            keepalive: 0,
            texts: std::array::from_fn(|_| 0..0),
            prop_ints: [0; NPROPS],
            prop_texts: std::array::from_fn(|_| 0..0),
        }
    }

    fn text(&mut self, f: u16) -> &mut Range<usize> {
        &mut self.texts[usize::from(f) - 1]
    }
}

/// The outcome of reading a property list.
type Step = Result<(), Validity>;

fn bad<T>(v: Option<T>) -> Result<T, Validity> {
    v.ok_or(Validity::Invalid)
}

/// Reads a property list (its length, then the properties) against `table`. An
/// identifier the table lacks is `unknown`; a property given twice (but user
/// properties), a value out of its rule or a cut value is invalid.
fn read_props(r: &mut Reader<'_>, pkt: &mut Packet, table: &[(u8, Kind, Rule)], unknown: Validity) -> Step {
    let len = bad(r.varint())? as usize;
    if r.left() < len {
        return Err(Validity::Invalid);
    }
    let mut p = Reader { buf: r.buf, pos: r.pos, end: r.pos + len };
    r.pos += len;
    let mut seen = 0u64;
    while p.left() > 0 {
        let id = bad(p.u8())?;
        let Some(&(_, kind, rule)) = table.iter().find(|(t, ..)| *t == id) else { return Err(unknown) };
        if kind != Pair && seen & (1 << id) != 0 {
            return Err(Validity::Invalid);
        }
        seen |= 1 << id;
        let slot = usize::from(id);
        let n = match kind {
            U8 => bad(p.u8()).map(u32::from)?,
            U16 => bad(p.u16()).map(u32::from)?,
            U32 => bad(p.u32())?,
            Str => {
                let t = bad(p.string())?;
                if rule == NonEmpty && t.is_empty() {
                    return Err(Validity::Invalid);
                }
                pkt.prop_texts[slot] = t;
                continue;
            }
            Pair => {
                bad(p.string())?;
                bad(p.string())?;
                continue;
            }
        };
        if (rule == NonZero && n == 0) || (rule == Flag && n > 1) {
            return Err(Validity::Invalid);
        }
        pkt.prop_ints[slot] = n;
    }
    Ok(())
}

/// The variable header and payload of a CONNECT, from `r` (just after the fixed
/// header) to the end of the sample, which must have taken `len` bytes.
fn read_connect(r: &mut Reader<'_>, len: u32, pkt: &mut Packet) -> Step {
    let start = r.pos;
    let name = bad(r.string())?;
    let n = &r.buf[name.clone()];
    if !n.eq_ignore_ascii_case(b"MQTT") && !n.eq_ignore_ascii_case(b"MQIsdp") {
        return Err(Validity::Invalid);
    }
    *pkt.text(F_PROTOCOL_NAME) = name;
    pkt.version = bad(r.u8())?;
    if !(3..=5).contains(&pkt.version) {
        return Err(Validity::Invalid);
    }
    pkt.flags = bad(r.u8())?;
    // COMPAT: as HAProxy, only a will QoS of 3 without the will flag is refused.
    if pkt.flags & FL_RESERVED != 0 || pkt.flags & (FL_WILL | FL_WILL_QOS | FL_WILL_RETAIN) == FL_WILL_QOS {
        return Err(Validity::Invalid);
    }
    pkt.keepalive = bad(r.u16())?;
    let v5 = pkt.version == 5;
    if v5 {
        read_props(r, pkt, CONNECT_PROPS, Validity::Invalid)?;
    }
    if pkt.prop_texts[0x15].is_empty() && !pkt.prop_texts[0x16].is_empty() {
        return Err(Validity::Invalid);
    }
    *pkt.text(F_CLIENT_ID) = bad(r.string())?;
    let will = pkt.flags & FL_WILL != 0;
    if v5 && will {
        read_props(r, pkt, WILL_PROPS, Validity::Invalid)?;
    }
    if will {
        *pkt.text(F_WILL_TOPIC) = bad(r.string())?;
        *pkt.text(F_WILL_PAYLOAD) = bad(r.string())?;
    }
    if pkt.flags & FL_USERNAME != 0 {
        *pkt.text(F_USERNAME) = bad(r.string())?;
    }
    if pkt.flags & FL_PASSWORD != 0 {
        *pkt.text(F_PASSWORD) = bad(r.string())?;
    }
    ends_at(r, start, len)
}

/// The variable header of a CONNACK. Its version is not on the wire: 3.1.1 when two
/// bytes follow the fixed header, else 5.0 (with properties).
///
/// COMPAT: as HAProxy, an unknown CONNACK property reads as "not yet" rather than
/// invalid, and a 3.1.1 CONNACK followed by more bytes is read as 5.0 (and so is
/// invalid).
fn read_connack(r: &mut Reader<'_>, len: u32, pkt: &mut Packet) -> Step {
    let start = r.pos;
    if r.left() < 2 {
        return Err(Validity::Invalid);
    }
    pkt.version = if r.left() == 2 { 4 } else { 5 };
    pkt.flags = bad(r.u8())?;
    if pkt.flags & 0xFE != 0 {
        return Err(Validity::Invalid);
    }
    pkt.reason_code = bad(r.u8())?;
    if pkt.version == 5 {
        read_props(r, pkt, CONNACK_PROPS, Validity::NeedMore)?;
    }
    ends_at(r, start, len)
}

/// Valid when what was read from `start` is exactly the packet's remaining length.
fn ends_at(r: &Reader<'_>, start: usize, len: u32) -> Step {
    if (r.pos - start) as u64 == u64::from(len) {
        Ok(())
    } else {
        Err(Validity::Invalid)
    }
}

/// Checks a packet (HAProxy's `mqtt_validate_message`) and returns what it holds.
fn parse(msg: &[u8]) -> (Validity, Option<Packet>) {
    if msg.len() < 2 {
        return (Validity::NeedMore, None);
    }
    let (kind, flags) = (msg[0] >> 4, msg[0] & 0x0F);
    if kind == 0 || flags != TYPE_FLAGS[usize::from(kind)] {
        return (Validity::Invalid, None);
    }
    let mut r = Reader { buf: msg, pos: 1, end: msg.len() };
    let Some(len) = r.varint() else { return (Validity::Invalid, None) };
    if (r.left() as u64) < u64::from(len) {
        return (Validity::NeedMore, None);
    }
    let mut pkt = Packet::new(kind);
    let step = match kind {
        CONNECT => read_connect(&mut r, len, &mut pkt),
        CONNACK => read_connack(&mut r, len, &mut pkt),
        _ => Err(Validity::Invalid),
    };
    match step {
        Ok(()) => (Validity::Valid, Some(pkt)),
        Err(v) => (v, None),
    }
}

/// Checks a packet: valid, invalid, or not whole yet.
pub(super) fn validate(msg: &[u8]) -> Validity {
    parse(msg).0
}

// === field values ===

/// A field of a valid packet.
#[derive(Debug, PartialEq, Eq)]
enum Value {
    Int(u32),
    Text(Range<usize>),
}

/// What [`field_value`] found.
#[derive(Debug, PartialEq, Eq)]
enum FieldValue {
    Found(Value),
    NeedMore,
    Absent,
}

/// Which properties need MQTT 5.0 (`V5`) or 5.0 and a will (`WILL`) to be read.
#[derive(PartialEq, Eq)]
enum Needs {
    V5,
    Will,
}

/// The property `id` of a packet of type `kind`: whether it is text, and what it
/// needs; `None`: never extracted.
fn prop_spec(kind: u8, id: u8) -> Option<(bool, Needs)> {
    match (kind, id) {
        (CONNECT, 1 | 2 | 24) => Some((false, Needs::Will)),
        (CONNECT, 3 | 8 | 9) => Some((true, Needs::Will)),
        (CONNECT, 17 | 23 | 25 | 33 | 34 | 39) => Some((false, Needs::V5)),
        (CONNECT, 21 | 22) => Some((true, Needs::V5)),
        (CONNACK, 17 | 19 | 33 | 34 | 36 | 37 | 39..=42) => Some((false, Needs::V5)),
        (CONNACK, 18 | 21 | 22 | 26 | 28 | 31) => Some((true, Needs::V5)),
        _ => None,
    }
}

/// Field `field` (an `F_*` or `PROP | id`) of `msg` when it is a valid packet of type
/// `kind` (HAProxy's `mqtt_field_value`). Empty text fields are absent.
fn field_value(msg: &[u8], kind: u8, field: u16) -> FieldValue {
    let pkt = match parse(msg) {
        (Validity::Valid, Some(p)) if p.kind == kind => p,
        (Validity::NeedMore, _) => return FieldValue::NeedMore,
        _ => return FieldValue::Absent,
    };
    let value = match (kind, field) {
        (CONNECT | CONNACK, F_FLAGS) => Value::Int(u32::from(pkt.flags)),
        (CONNECT | CONNACK, F_PROTOCOL_VERSION) => Value::Int(u32::from(pkt.version)),
        (CONNACK, F_REASON_CODE) => Value::Int(u32::from(pkt.reason_code)),
        (CONNECT, F_KEEPALIVE) => Value::Int(u32::from(pkt.keepalive)),
        (CONNECT, F_PROTOCOL_NAME..=F_PASSWORD) => Value::Text(pkt.texts[usize::from(field) - 1].clone()),
        (_, f) if f & PROP != 0 => {
            let id = (f & 0xFF) as u8;
            let Some((text, needs)) = prop_spec(kind, id) else { return FieldValue::Absent };
            let will = pkt.flags & FL_WILL != 0;
            if pkt.version != 5 || (needs == Needs::Will && !will) {
                return FieldValue::Absent;
            }
            let slot = usize::from(id);
            if text {
                Value::Text(pkt.prop_texts[slot].clone())
            } else {
                Value::Int(pkt.prop_ints[slot])
            }
        }
        _ => return FieldValue::Absent,
    };
    match value {
        Value::Text(r) if r.is_empty() => FieldValue::Absent,
        v => FieldValue::Found(v),
    }
}

// === converters ===

fn conv_mqtt_is_valid<'a>(_: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    validate(&bytes_of(smp)?).into_sample(ctx)
}

/// `mqtt_field_value(<type>,<field>)`: text borrowed from the sample, numbers in
/// decimal.
fn conv_mqtt_field_value<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let kind = u8::try_from(args.first().and_then(Arg::as_sint)?).ok()?;
    let field = u16::try_from(args.get(1).and_then(Arg::as_sint)?).ok()?;
    let b = bytes_of(smp)?;
    let found = field_value(&b, kind, field);
    ctx.may_change.set(found == FieldValue::NeedMore);
    match found {
        FieldValue::Found(Value::Text(r)) => Some(Sample::Str(slice(b, r))),
        FieldValue::Found(Value::Int(n)) => Some(Sample::Str(Cow::Owned(n.to_string().into_bytes()))),
        _ => None,
    }
}

/// A packet type by number (any leading text read as HAProxy's unchecked `strl2ui`
/// does) or by name, case-insensitive; 0 when unknown.
fn type_id(s: &[u8]) -> u8 {
    let n = s.iter().fold(0u32, |n, &c| n.wrapping_mul(10).wrapping_sub(u32::from(b'0')).wrapping_add(u32::from(c)));
    if (1..=15).contains(&(n as i32)) {
        return n as u8;
    }
    TYPES.iter().position(|t| t.as_bytes().eq_ignore_ascii_case(s)).map_or(0, |i| i as u8 + 1)
}

/// A field name of packet type `kind`, compiled to an `F_*` or `PROP | id`; 0 when
/// unknown or not a field of that type.
fn field_id(kind: u8, s: &[u8]) -> u16 {
    let (named, props) = fields_of(kind);
    if let Some(i) = NAMED.iter().position(|n| n.as_bytes().eq_ignore_ascii_case(s)) {
        let f = i as u16 + 1;
        return if named.contains(&f) { f } else { 0 };
    }
    let prop = PROPS_KNOWN.iter().find(|p| p.to_string().as_bytes() == s);
    match prop {
        Some(&p) if props.contains(&p) => PROP | u16::from(p),
        _ => 0,
    }
}

/// The packet type and field of `mqtt_field_value`, compiled to numbers.
fn check_mqtt_field_value(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let text = |a: Option<&Arg>| String::from_utf8_lossy(a.and_then(Arg::as_bytes).unwrap_or_default()).into_owned();
    let (ty, name) = (text(args.first()), text(args.get(1)));
    let kind = type_id(ty.as_bytes());
    if kind == 0 {
        return Err(format!("Unknown MQTT type '{ty}'"));
    }
    let field = field_id(kind, name.as_bytes());
    if field == 0 {
        return Err(format!("Unknown MQTT field name '{name}' for packet type '{ty}'"));
    }
    args.0 = vec![Arg::Sint(i64::from(kind)), Arg::Sint(i64::from(field))];
    Ok(())
}

pub const KEYWORDS: &[ConvKw] = &[
    ConvKw::new("mqtt_is_valid", ArgSpec::NONE, SmpType::Bin, SmpType::Bool, conv_mqtt_is_valid),
    ConvKw::new(
        "mqtt_field_value",
        ArgSpec::new(&[ArgT::Str, ArgT::Str], 2),
        SmpType::Bin,
        SmpType::Str,
        conv_mqtt_field_value,
    )
    .check(check_mqtt_field_value),
];

#[cfg(test)]
#[path = "mqtt_tests.rs"]
mod tests;
