//! Map values: how the value column of a map file is read for the converter's output
//! type. HAProxy counterpart: src/map.c (`map_parse_str`, `map_parse_int`,
//! `map_parse_ip`).

use std::net::{Ipv4Addr, Ipv6Addr};

use super::input::read_int64;

/// How the values of a map are read: the converter's output type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueKind {
    Str,
    Int,
    Addr,
}

/// A parsed map value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapValue {
    Str(Box<[u8]>),
    Int(i64),
    V4(Ipv4Addr),
    V6(Ipv6Addr),
}

/// Parses a value (`map_parse_str`, `map_parse_int`, `map_parse_ip`). An empty
/// integer is 0, as in HAProxy.
pub fn parse_value(kind: ValueKind, text: &str) -> Option<MapValue> {
    match kind {
        ValueKind::Str => Some(MapValue::Str(text.as_bytes().into())),
        ValueKind::Int => {
            let b = text.as_bytes();
            let signed = usize::from(matches!(b.first(), Some(b'-' | b'+')));
            b[signed..].iter().all(u8::is_ascii_digit).then(|| MapValue::Int(read_int64(b)))
        }
        ValueKind::Addr => {
            if let Ok(a) = text.parse::<Ipv4Addr>() {
                return Some(MapValue::V4(a));
            }
            text.parse::<Ipv6Addr>().ok().map(MapValue::V6)
        }
    }
}
