//! The sample as a match method reads it: HAProxy converts the sample to the type the
//! method expects before matching (`sample_convert()` in `pattern_exec_match()`), with
//! the casts of `sample_casts[][]` (src/sample.c). Conversions that produce text
//! (an integer or an address matched as a string) write into a stack buffer: matching
//! never allocates.

use std::io::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};

use rampart_proto::http::Method;

use crate::sample::types::{Sample, SmpType};

/// A sample converted for matching.
#[derive(Debug, Clone, Copy)]
pub enum Input<'s> {
    Bytes(&'s [u8]),
    Int(i64),
    V4(Ipv4Addr),
    V6(Ipv6Addr),
    Meth(Method, &'s [u8]),
}

/// Whether a sample of type `from` can be converted to `to` (HAProxy's
/// `sample_casts[from][to] != NULL`), for the config-time check of `-m`.
pub fn can_cast(from: SmpType, to: SmpType) -> bool {
    use SmpType::*;
    if from == Any || to == Any || from == to {
        return true;
    }
    match from {
        Bool => matches!(to, Sint | Str | Bin),
        Sint => matches!(to, Bool | Addr | Ipv4 | Ipv6 | Str | Bin),
        Addr => false,
        Ipv4 => matches!(to, Sint | Addr | Ipv6 | Str | Bin),
        Ipv6 => matches!(to, Addr | Ipv4 | Str | Bin),
        Str => true,
        Bin => matches!(to, Str | Meth),
        Meth => matches!(to, Str | Bin),
        Any => true,
    }
}

/// The spelling of a method sample.
pub fn meth_bytes(m: Method, s: &[u8]) -> &[u8] {
    match m.as_str() {
        Some(known) if s.is_empty() => known.as_bytes(),
        _ => s,
    }
}

/// HAProxy's `read_int64`: an optional sign, then the digits that follow (none: 0),
/// saturating; what comes after is ignored.
pub fn read_int64(s: &[u8]) -> i64 {
    let (neg, digits) = match s.split_first() {
        Some((b'-', r)) => (true, r),
        Some((b'+', r)) => (false, r),
        _ => (false, s),
    };
    let mut v: u64 = 0;
    for &c in digits.iter().take_while(|c| c.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add(u64::from(c - b'0'));
    }
    if neg {
        0i64.checked_sub_unsigned(v).unwrap_or(i64::MIN)
    } else {
        i64::try_from(v).unwrap_or(i64::MAX)
    }
}

/// An address written as text.
fn parse_addr(b: &[u8]) -> Option<Input<'static>> {
    let s = std::str::from_utf8(b).ok()?;
    if let Ok(a) = s.parse::<Ipv4Addr>() {
        return Some(Input::V4(a));
    }
    s.parse::<Ipv6Addr>().ok().map(Input::V6)
}

/// Calls `f` with `smp` converted to `to`; `None` when the conversion is impossible
/// (the pattern then does not match, as in HAProxy).
pub fn with_input<R>(smp: &Sample<'_>, to: SmpType, f: impl FnOnce(Input<'_>) -> Option<R>) -> Option<R> {
    let mut buf = [0u8; 48];
    let input = match to {
        SmpType::Str => match smp {
            Sample::Str(s) => Input::Bytes(s),
            Sample::Bin(s) => Input::Bytes(s.split(|&c| c == 0).next().unwrap_or_default()),
            Sample::Meth(m, s) => Input::Bytes(meth_bytes(*m, s)),
            other => Input::Bytes(format_into(&mut buf, other)?),
        },
        SmpType::Bin => match smp {
            Sample::Str(s) | Sample::Bin(s) => Input::Bytes(s),
            Sample::Meth(m, s) => Input::Bytes(meth_bytes(*m, s)),
            Sample::Sint(i) => {
                buf[..8].copy_from_slice(&i.to_be_bytes());
                Input::Bytes(&buf[..8])
            }
            Sample::Bool(b) => {
                buf[..8].copy_from_slice(&i64::from(*b).to_be_bytes());
                Input::Bytes(&buf[..8])
            }
            Sample::Ipv4(a) => {
                buf[..4].copy_from_slice(&a.octets());
                Input::Bytes(&buf[..4])
            }
            Sample::Ipv6(a) => {
                buf[..16].copy_from_slice(&a.octets());
                Input::Bytes(&buf[..16])
            }
        },
        SmpType::Sint | SmpType::Bool => match smp {
            Sample::Bool(b) => Input::Int(i64::from(*b)),
            Sample::Sint(i) => Input::Int(*i),
            Sample::Ipv4(a) => Input::Int(i64::from(u32::from(*a))),
            Sample::Str(s) if !s.is_empty() => Input::Int(read_int64(s)),
            _ => return None,
        },
        SmpType::Addr | SmpType::Ipv4 | SmpType::Ipv6 => match smp {
            Sample::Ipv4(a) => Input::V4(*a),
            Sample::Ipv6(a) => Input::V6(*a),
            Sample::Sint(i) => Input::V4(Ipv4Addr::from(*i as u32)),
            Sample::Str(s) => parse_addr(s)?,
            _ => return None,
        },
        SmpType::Meth => match smp {
            Sample::Meth(m, s) => Input::Meth(*m, s),
            Sample::Str(s) | Sample::Bin(s) => Input::Meth(Method::from_bytes(s), s),
            _ => return None,
        },
        SmpType::Any => return None,
    };
    f(input)
}

/// Integers, booleans and addresses as text (`c_int2str`, `c_ip2str`, `c_ipv62str`).
fn format_into<'b>(buf: &'b mut [u8; 48], smp: &Sample<'_>) -> Option<&'b [u8]> {
    let mut w = &mut buf[..];
    match smp {
        Sample::Bool(b) => write!(w, "{}", i64::from(*b)),
        Sample::Sint(i) => write!(w, "{i}"),
        Sample::Ipv4(a) => write!(w, "{a}"),
        Sample::Ipv6(a) => write!(w, "{a}"),
        _ => return None,
    }
    .ok()?;
    let left = w.len();
    Some(&buf[..48 - left])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(smp: &Sample<'_>, to: SmpType) -> Option<Vec<u8>> {
        with_input(smp, to, |i| match i {
            Input::Bytes(b) => Some(b.to_vec()),
            _ => None,
        })
    }

    fn int(smp: &Sample<'_>) -> Option<i64> {
        with_input(smp, SmpType::Sint, |i| match i {
            Input::Int(v) => Some(v),
            _ => None,
        })
    }

    #[test]
    fn to_string() {
        assert_eq!(bytes(&Sample::Sint(-42), SmpType::Str).unwrap(), b"-42");
        assert_eq!(bytes(&Sample::Bool(true), SmpType::Str).unwrap(), b"1");
        assert_eq!(bytes(&Sample::Ipv4("10.0.0.1".parse().unwrap()), SmpType::Str).unwrap(), b"10.0.0.1");
        let long: Ipv6Addr = "1111:2222:3333:4444:5555:6666:7777:8888".parse().unwrap();
        assert_eq!(bytes(&Sample::Ipv6(long), SmpType::Str).unwrap(), b"1111:2222:3333:4444:5555:6666:7777:8888");
        assert_eq!(bytes(&Sample::Bin(b"ab\0cd"[..].into()), SmpType::Str).unwrap(), b"ab");
        assert_eq!(bytes(&Sample::Meth(Method::Get, b""[..].into()), SmpType::Str).unwrap(), b"GET");
        assert_eq!(bytes(&Sample::Sint(1), SmpType::Bin).unwrap(), [0, 0, 0, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn to_int() {
        assert_eq!(int(&Sample::str(b"010")), Some(10));
        assert_eq!(int(&Sample::str(b"12abc")), Some(12));
        assert_eq!(int(&Sample::str(b"abc")), Some(0));
        assert_eq!(int(&Sample::str(b"-7")), Some(-7));
        assert_eq!(int(&Sample::str(b"+7")), Some(7));
        assert_eq!(int(&Sample::str(b"99999999999999999999")), Some(i64::MAX));
        assert_eq!(int(&Sample::str(b"-99999999999999999999")), Some(i64::MIN));
        assert_eq!(int(&Sample::str(b"")), None);
        assert_eq!(int(&Sample::Bool(true)), Some(1));
        assert_eq!(int(&Sample::Ipv6(Ipv6Addr::LOCALHOST)), None);
    }

    #[test]
    fn to_addr() {
        let a = with_input(&Sample::str(b"::ffff:1.2.3.4"), SmpType::Addr, |i| match i {
            Input::V6(a) => Some(a),
            _ => None,
        });
        assert_eq!(a, Some("::ffff:1.2.3.4".parse().unwrap()));
        assert!(with_input(&Sample::str(b"nope"), SmpType::Addr, |_| Some(())).is_none());
        assert!(with_input(&Sample::Bool(true), SmpType::Addr, |_| Some(())).is_none());
    }

    #[test]
    fn cast_table() {
        assert!(can_cast(SmpType::Str, SmpType::Addr));
        assert!(can_cast(SmpType::Ipv4, SmpType::Str));
        assert!(!can_cast(SmpType::Bool, SmpType::Addr));
        assert!(!can_cast(SmpType::Bin, SmpType::Sint));
        assert!(can_cast(SmpType::Meth, SmpType::Str));
        assert!(!can_cast(SmpType::Ipv6, SmpType::Sint));
    }
}
