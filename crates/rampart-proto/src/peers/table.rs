//! Table definitions and entry updates: how a table's key and stored data travel.
//! HAProxy counterpart: `peer_prepare_switchmsg()` (the definition),
//! `peer_prepare_updatemsg()`, `peer_treat_definemsg()`, `peer_treat_updatemsg()`
//! (src/peers.c) and `stktable_data_types[]` (src/stick_table.c).
//!
//! Data types are numbered as HAProxy 2.6's `STKTABLE_DT_*`: bit `n` of a definition's
//! bitfield says type `n` is stored, and an update carries the stored types' values in
//! that order. Rates travel as the time since their period started, the current count
//! and the previous one; arrays as their elements one after the other.

use super::varint::{self, Reader};
use super::MsgError;

/// The data types of HAProxy 2.6 (`STKTABLE_DATA_TYPES`).
pub const DATA_TYPES: usize = 25;

/// How a data type's value is encoded (HAProxy's `std_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireType {
    /// A signed 32-bit integer (`server_id`), sign-extended to 64 bits.
    Sint,
    Uint,
    /// A 64-bit counter (`bytes_in_cnt`, `bytes_out_cnt`).
    Ull,
    /// A rate: time since its period started, current count, previous count.
    Freq,
    /// A dictionary entry (`server_key`): a length, then an id and maybe a value.
    Dict,
}

/// The wire type of data type `n` and whether it is an array (`gpt`, `gpc`, `gpc_rate`).
pub fn wire_type(n: usize) -> Option<(WireType, bool)> {
    use WireType::*;
    const TYPES: [WireType; DATA_TYPES] = [
        Sint, Uint, Uint, Freq, Uint, Freq, Uint, Uint, Freq, Uint, Freq, Uint, Freq, Ull, Freq, Ull, Freq, Uint, Freq,
        Dict, Uint, Freq, Uint, Uint, Freq,
    ];
    TYPES.get(n).map(|&t| (t, n >= 22))
}

/// Data type 6, `conn_cur`, is local to each node: sent, never applied.
pub const CONN_CUR: usize = 6;

/// Key types on the wire.
pub mod key_type {
    pub const SINT: u64 = 2;
    pub const IPV4: u64 = 4;
    pub const IPV6: u64 = 5;
    pub const STRING: u64 = 6;
    pub const BINARY: u64 = 7;
}

/// How an update's key is read, from the table's type and key size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// A length then the bytes; at most `size - 1` are kept.
    String { size: usize },
    /// A 32-bit big-endian integer.
    Int,
    /// Exactly `len` bytes (addresses, binary keys).
    Fixed(usize),
}

/// The parameters of a stored type: elements of an array, period of a rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Param {
    pub nbelem: u64,
    pub period: u64,
}

/// What a table definition says after the table's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub key_type: u64,
    pub key_len: u64,
    /// Bit `n`: data type `n` is stored.
    pub data: u64,
    /// `expire` in milliseconds (absent from 2.0 definitions).
    pub expire: Option<u64>,
    pub params: [Param; DATA_TYPES],
}

/// Why a definition's shape cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeError {
    /// The key type, key size or bitfield is missing: a protocol error when the table
    /// is known.
    Malformed,
    /// The parameters of the stored types are missing or do not match the bitfield:
    /// the table is ignored (its updates are skipped).
    Unusable,
}

/// A table definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Define<'a> {
    /// The sender's id for the table (switch and ack messages use it).
    pub id: u64,
    pub name: &'a [u8],
    pub shape: Result<Shape, ShapeError>,
}

impl Shape {
    /// Whether data type `n` is stored.
    pub fn stores(&self, n: usize) -> bool {
        n < 64 && self.data & (1 << n) != 0
    }
}

/// Reads a definition's body. `Err`: its id or name is malformed (a protocol error
/// whatever the table).
pub fn decode_define(body: &[u8]) -> Result<Define<'_>, MsgError> {
    let mut r = Reader::new(body);
    let id = r.int().ok_or(MsgError::Malformed)?;
    let len = r.int().ok_or(MsgError::Malformed)?;
    let len = usize::try_from(len).map_err(|_| MsgError::Malformed)?;
    // COMPAT: HAProxy wants at least one byte after the name
    if len == 0 || len >= r.buf.len() {
        return Err(MsgError::Malformed);
    }
    let name = r.bytes(len).ok_or(MsgError::Malformed)?;
    Ok(Define { id, name, shape: decode_shape(r) })
}

fn decode_shape(mut r: Reader<'_>) -> Result<Shape, ShapeError> {
    let key_type = r.int().ok_or(ShapeError::Malformed)?;
    let key_len = r.int().ok_or(ShapeError::Malformed)?;
    let data = r.int().ok_or(ShapeError::Malformed)?;
    let mut shape = Shape { key_type, key_len, data, expire: None, params: [Param::default(); DATA_TYPES] };
    let Some(expire) = r.int() else {
        // a 2.0 definition: no parameters, so no arrays
        let arrays = (0..DATA_TYPES).any(|n| shape.stores(n) && wire_type(n).is_some_and(|t| t.1));
        return if arrays { Err(ShapeError::Unusable) } else { Ok(shape) };
    };
    shape.expire = Some(expire);
    for n in 0..DATA_TYPES {
        let Some((t, array)) = wire_type(n).filter(|_| shape.stores(n)) else { continue };
        if !array && t != WireType::Freq {
            continue;
        }
        if r.int() != Some(n as u64) {
            return Err(ShapeError::Unusable);
        }
        let p = &mut shape.params[n];
        if array {
            p.nbelem = r.int().ok_or(ShapeError::Unusable)?;
        }
        if t == WireType::Freq {
            p.period = r.int().ok_or(ShapeError::Unusable)?;
        }
    }
    Ok(shape)
}

/// Appends a table definition (sent before the first update of a table, and whenever
/// the sender switches to it).
pub fn encode_define(id: u64, name: &[u8], shape: &Shape, out: &mut Vec<u8>) {
    super::encode_stkt(super::stkt::DEFINE, out, |b| {
        varint::encode(id, b);
        varint::encode(name.len() as u64, b);
        b.extend_from_slice(name);
        varint::encode(shape.key_type, b);
        varint::encode(shape.key_len, b);
        varint::encode(shape.data, b);
        varint::encode(shape.expire.unwrap_or(0), b);
        for n in 0..DATA_TYPES {
            let Some((t, array)) = wire_type(n).filter(|_| shape.stores(n)) else { continue };
            if !array && t != WireType::Freq {
                continue;
            }
            varint::encode(n as u64, b);
            if array {
                varint::encode(shape.params[n].nbelem, b);
            }
            if t == WireType::Freq {
                varint::encode(shape.params[n].period, b);
            }
        }
    });
}

/// One stored value of an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Int(u64),
    /// A rate: milliseconds since its current period started, that period's count,
    /// the previous period's.
    Freq {
        elapsed: u64,
        curr: u64,
        prev: u64,
    },
    /// A `server_key`: `None` for no entry, else the sender's cache id and, the first
    /// time, the key itself.
    Dict(Option<(u64, Option<&'a [u8]>)>),
}

/// An update of one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update<'a> {
    /// The sender's update id (absent: the previous one plus one).
    pub id: Option<u32>,
    /// Milliseconds before the entry expires (absent: the table's `expire`).
    pub expire: Option<u32>,
    /// The key as the table holds it: a string without its terminator, an integer in
    /// big-endian order, an address or binary key as it is.
    pub key: &'a [u8],
    /// `(data type, element, value)` for each stored type in order.
    pub values: Vec<(u8, u32, Value<'a>)>,
}

/// Reads an update's body for a table whose keys are `key` and whose sender stores
/// `shape`'s types.
pub fn decode_update<'a>(
    body: &'a [u8],
    with_id: bool,
    timed: bool,
    key: KeyKind,
    shape: &Shape,
) -> Result<Update<'a>, MsgError> {
    let bad = || MsgError::Malformed;
    let mut r = Reader::new(body);
    let id = if with_id { Some(r.u32().ok_or_else(bad)?) } else { None };
    let expire = if timed { Some(r.u32().ok_or_else(bad)?) } else { None };
    let key = match key {
        KeyKind::String { size } => {
            let to_read = usize::try_from(r.int().ok_or_else(bad)?).map_err(|_| bad())?;
            let s = r.bytes(to_read).ok_or_else(bad)?;
            &s[..to_read.min(size.saturating_sub(1))]
        }
        KeyKind::Int => r.bytes(4).ok_or_else(bad)?,
        KeyKind::Fixed(n) => r.bytes(n).ok_or_else(bad)?,
    };
    let mut values = Vec::new();
    for n in 0..DATA_TYPES {
        let Some((t, array)) = wire_type(n).filter(|_| shape.stores(n)) else { continue };
        let count = if array { shape.params[n].nbelem } else { 1 };
        for idx in 0..count {
            // every element takes a byte at least: the body bounds the loop
            if r.is_empty() {
                return Err(bad());
            }
            let v = match t {
                WireType::Freq => {
                    let elapsed = r.int().ok_or_else(bad)?;
                    let curr = r.int().ok_or_else(bad)?;
                    Value::Freq { elapsed, curr, prev: r.int().ok_or_else(bad)? }
                }
                WireType::Dict => decode_dict(&mut r)?,
                _ => Value::Int(r.int().ok_or_else(bad)?),
            };
            values.push((n as u8, idx as u32, v));
        }
    }
    Ok(Update { id, expire, key, values })
}

fn decode_dict<'a>(r: &mut Reader<'a>) -> Result<Value<'a>, MsgError> {
    let len = usize::try_from(r.int().ok_or(MsgError::Malformed)?).map_err(|_| MsgError::Malformed)?;
    if len == 0 {
        return Ok(Value::Dict(None));
    }
    let mut d = Reader::new(r.bytes(len).ok_or(MsgError::Malformed)?);
    let id = d.int().filter(|&id| id != 0).ok_or(MsgError::Malformed)?;
    if d.is_empty() {
        return Ok(Value::Dict(Some((id, None))));
    }
    let vlen = usize::try_from(d.int().ok_or(MsgError::Malformed)?).map_err(|_| MsgError::Malformed)?;
    Ok(Value::Dict(Some((id, Some(d.bytes(vlen).ok_or(MsgError::Malformed)?)))))
}

/// Appends an update. `key` is the key as [`Update::key`] holds it; `values` are the
/// stored types' values in type order (arrays element by element).
pub fn encode_update(
    id: Option<u32>,
    expire: Option<u32>,
    kind: KeyKind,
    key: &[u8],
    values: &[Value<'_>],
    out: &mut Vec<u8>,
) {
    use super::stkt::*;
    let typ = match (id.is_some(), expire.is_some()) {
        (true, true) => UPDATE_TIMED,
        (false, true) => INC_UPDATE_TIMED,
        (true, false) => UPDATE,
        (false, false) => INC_UPDATE,
    };
    super::encode_stkt(typ, out, |b| {
        if let Some(id) = id {
            b.extend_from_slice(&id.to_be_bytes());
        }
        if let Some(e) = expire {
            b.extend_from_slice(&e.to_be_bytes());
        }
        match kind {
            KeyKind::String { .. } => {
                varint::encode(key.len() as u64, b);
                b.extend_from_slice(key);
            }
            KeyKind::Int | KeyKind::Fixed(_) => b.extend_from_slice(key),
        }
        for v in values {
            match *v {
                Value::Int(n) => varint::encode(n, b),
                Value::Freq { elapsed, curr, prev } => {
                    varint::encode(elapsed, b);
                    varint::encode(curr, b);
                    varint::encode(prev, b);
                }
                Value::Dict(None) => varint::encode(0, b),
                Value::Dict(Some((id, v))) => {
                    let mut d = Vec::new();
                    varint::encode(id, &mut d);
                    if let Some(v) = v {
                        varint::encode(v.len() as u64, &mut d);
                        d.extend_from_slice(v);
                    }
                    varint::encode(d.len() as u64, b);
                    b.extend_from_slice(&d);
                }
            }
        }
    });
}
