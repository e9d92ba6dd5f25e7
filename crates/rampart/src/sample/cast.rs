//! Implicit casts between sample types, applied before a converter whose input type
//! differs from the value it receives, and checked at startup between a fetch or
//! converter output and the next converter's input. HAProxy counterpart: the
//! `sample_casts[from][to]` matrix and the `c_*` functions of src/sample.c (2.6).

use std::borrow::Cow;
use std::io::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::http::Method;

use super::types::{Sample, SmpType};

/// Whether a value of type `from` may be given where `to` is expected (the non-NULL
/// cells of HAProxy's matrix). `Any` goes everywhere: fetches declared `Any` are only
/// known at run time.
pub fn can_cast(from: SmpType, to: SmpType) -> bool {
    use SmpType::*;
    if from == to || to == Any || from == Any {
        return true;
    }
    match from {
        Bool => matches!(to, Sint | Str | Bin),
        Sint => matches!(to, Bool | Addr | Ipv4 | Ipv6 | Str | Bin),
        // COMPAT: HAProxy 2.6's matrix lets `addr` go nowhere but `any`; no 2.6 fetch
        // or converter outputs `addr`, so rampart never meets it either.
        Addr => false,
        Ipv4 => matches!(to, Sint | Addr | Ipv6 | Str | Bin),
        Ipv6 => matches!(to, Addr | Ipv4 | Str | Bin),
        Str => matches!(to, Bool | Sint | Addr | Ipv4 | Ipv6 | Bin | Meth),
        Bin => matches!(to, Str | Meth),
        Meth => matches!(to, Str | Bin),
        Any => true,
    }
}

/// Casts a value to `to`; `None` when the cast is impossible or fails on this value
/// (a string that is no address ...), which makes the sample absent.
pub fn cast<'a>(smp: Sample<'a>, to: SmpType) -> Option<Sample<'a>> {
    use SmpType as T;
    if to == T::Any || smp.smp_type() == to {
        return Some(smp);
    }
    Some(match (smp, to) {
        (Sample::Bool(b), T::Sint) => Sample::Sint(i64::from(b)),
        (Sample::Bool(b), T::Str) => Sample::Str(Cow::Borrowed(if b { b"1" } else { b"0" })),
        (Sample::Bool(b), T::Bin) => Sample::Bin(Cow::Owned(i64::from(b).to_be_bytes().to_vec())),
        (Sample::Sint(i), T::Bool) => Sample::Bool(i != 0),
        (Sample::Sint(i), T::Addr | T::Ipv4) => Sample::Ipv4(Ipv4Addr::from(i as u32)),
        (Sample::Sint(i), T::Ipv6) => Sample::Ipv6(Ipv4Addr::from(i as u32).to_ipv6_mapped()),
        (Sample::Sint(i), T::Str) => Sample::Str(Cow::Owned(int_to_str(i))),
        (Sample::Sint(i), T::Bin) => Sample::Bin(Cow::Owned(i.to_be_bytes().to_vec())),
        (Sample::Ipv4(a), T::Sint) => Sample::Sint(i64::from(u32::from(a))),
        (Sample::Ipv4(a), T::Addr) => Sample::Ipv4(a),
        (Sample::Ipv4(a), T::Ipv6) => Sample::Ipv6(a.to_ipv6_mapped()),
        (Sample::Ipv4(a), T::Str) => Sample::Str(Cow::Owned(a.to_string().into_bytes())),
        (Sample::Ipv4(a), T::Bin) => Sample::Bin(Cow::Owned(a.octets().to_vec())),
        (Sample::Ipv6(a), T::Addr) => Sample::Ipv6(a),
        (Sample::Ipv6(a), T::Ipv4) => Sample::Ipv4(a.to_ipv4_mapped()?),
        (Sample::Ipv6(a), T::Str) => Sample::Str(Cow::Owned(a.to_string().into_bytes())),
        (Sample::Ipv6(a), T::Bin) => Sample::Bin(Cow::Owned(a.octets().to_vec())),
        (Sample::Str(s), T::Bool) => Sample::Bool(str_to_int(&s)? != 0),
        (Sample::Str(s), T::Sint) => Sample::Sint(str_to_int(&s)?),
        (Sample::Str(s), T::Addr) => match buf_to_ipv4(&s) {
            Some(a) => Sample::Ipv4(a),
            None => Sample::Ipv6(buf_to_ipv6(&s)?),
        },
        (Sample::Str(s), T::Ipv4) => Sample::Ipv4(buf_to_ipv4(&s)?),
        (Sample::Str(s), T::Ipv6) => Sample::Ipv6(buf_to_ipv6(&s)?),
        (Sample::Str(s), T::Bin) => Sample::Bin(s),
        (Sample::Str(s) | Sample::Bin(s), T::Meth) => Sample::Meth(Method::from_bytes(&s), s),
        (Sample::Bin(s), T::Str) => Sample::Str(bin_to_str(s)),
        (Sample::Meth(_, s), T::Str) => Sample::Str(s),
        (Sample::Meth(_, s), T::Bin) => Sample::Bin(s),
        _ => return None,
    })
}

/// HAProxy's `read_int64` over a whole sample: optional sign, then digits up to the
/// first non-digit; saturates. An empty string has no value.
pub fn str_to_int(s: &[u8]) -> Option<i64> {
    if s.is_empty() {
        return None;
    }
    Some(read_int64(s).0)
}

/// Reads a signed integer at the start of `s` as HAProxy's `read_int64`: returns the
/// value (saturated to i64) and how many bytes were read.
pub fn read_int64(s: &[u8]) -> (i64, usize) {
    let (neg, start) = match s.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let digits = s[start..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut v: u64 = 0;
    for &c in &s[start..start + digits] {
        v = v.checked_mul(10).and_then(|v| v.checked_add(u64::from(c - b'0'))).unwrap_or(u64::MAX);
    }
    let n = if neg {
        if v > 1 << 63 {
            i64::MIN
        } else {
            (v as i64).wrapping_neg()
        }
    } else {
        i64::try_from(v).unwrap_or(i64::MAX)
    };
    (n, start + digits)
}

/// The decimal spelling of an integer.
pub fn int_to_str(i: i64) -> Vec<u8> {
    let mut v = Vec::with_capacity(20);
    let _ = write!(v, "{i}");
    v
}

/// HAProxy's `buf2ip`: dotted quad read up to the first character that is neither a
/// digit nor a dot (`1.2.3.4:80` gives 1.2.3.4); leading zeros are decimal.
pub fn buf_to_ipv4(s: &[u8]) -> Option<Ipv4Addr> {
    let mut oct = [0u8; 4];
    let (mut n, mut saw_digit) = (0usize, false);
    for &c in s {
        if c.is_ascii_digit() {
            if !saw_digit {
                if n == 4 {
                    return None;
                }
                n += 1;
                saw_digit = true;
            }
            let v = u32::from(oct[n - 1]) * 10 + u32::from(c - b'0');
            oct[n - 1] = u8::try_from(v).ok()?;
        } else if c == b'.' {
            if !saw_digit || n == 4 {
                return None;
            }
            saw_digit = false;
        } else {
            break;
        }
    }
    (n == 4 && saw_digit).then(|| Ipv4Addr::from(oct))
}

/// HAProxy's `buf2ip6`: the whole sample must be an IPv6 address.
pub fn buf_to_ipv6(s: &[u8]) -> Option<Ipv6Addr> {
    if s.len() > 63 {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// A binary as a string: cut at the first NUL byte (HAProxy's `c_bin2str`).
fn bin_to_str(s: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
    match memchr::memchr(0, &s) {
        None => s,
        Some(n) => match s {
            Cow::Borrowed(b) => Cow::Borrowed(&b[..n]),
            Cow::Owned(mut v) => {
                v.truncate(n);
                Cow::Owned(v)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use SmpType::*;

    fn s(b: &str) -> Sample<'_> {
        Sample::str(b.as_bytes())
    }

    #[test]
    fn the_matrix_follows_haproxy_2_6() {
        assert!(can_cast(Str, Sint) && can_cast(Str, Ipv4) && can_cast(Str, Meth) && can_cast(Str, Bin));
        assert!(can_cast(Sint, Ipv4) && can_cast(Sint, Bool) && !can_cast(Sint, Meth));
        assert!(can_cast(Bool, Str) && !can_cast(Bool, Ipv4));
        assert!(can_cast(Ipv4, Sint) && can_cast(Ipv4, Ipv6) && !can_cast(Ipv4, Bool));
        assert!(!can_cast(Ipv6, Sint) && can_cast(Ipv6, Ipv4));
        assert!(!can_cast(Bin, Sint) && can_cast(Bin, Str) && can_cast(Bin, Meth));
        assert!(can_cast(Meth, Str) && !can_cast(Meth, Sint));
        assert!(can_cast(Any, Ipv6) && can_cast(Meth, Any));
    }

    #[test]
    fn strings_to_integers_like_atoi() {
        assert_eq!(cast(s("42abc"), Sint), Some(Sample::Sint(42)));
        assert_eq!(cast(s("-7"), Sint), Some(Sample::Sint(-7)));
        assert_eq!(cast(s("+7"), Sint), Some(Sample::Sint(7)));
        assert_eq!(cast(s("abc"), Sint), Some(Sample::Sint(0)));
        assert_eq!(cast(s(""), Sint), None);
        assert_eq!(cast(s("99999999999999999999"), Sint), Some(Sample::Sint(i64::MAX)));
        assert_eq!(cast(s("-99999999999999999999"), Sint), Some(Sample::Sint(i64::MIN)));
        assert_eq!(cast(s("0"), Bool), Some(Sample::Bool(false)));
        assert_eq!(cast(s("3"), Bool), Some(Sample::Bool(true)));
    }

    #[test]
    fn integers_and_booleans() {
        assert_eq!(cast(Sample::Sint(-12), Str), Some(s("-12")));
        assert_eq!(cast(Sample::Bool(true), Sint), Some(Sample::Sint(1)));
        assert_eq!(cast(Sample::Bool(false), Str), Some(s("0")));
        assert_eq!(cast(Sample::Sint(2), Bool), Some(Sample::Bool(true)));
        assert_eq!(cast(Sample::Sint(0x0102_0304), Ipv4), Some(Sample::Ipv4(Ipv4Addr::new(1, 2, 3, 4))));
        assert_eq!(cast(Sample::Sint(0x0102_0304), Ipv6), Some(Sample::Ipv6("::ffff:1.2.3.4".parse().unwrap())));
        assert_eq!(cast(Sample::Sint(258), Bin), Some(Sample::Bin(Cow::Owned(vec![0, 0, 0, 0, 0, 0, 1, 2]))));
        assert_eq!(cast(Sample::Bool(true), Bin), Some(Sample::Bin(Cow::Owned(vec![0, 0, 0, 0, 0, 0, 0, 1]))));
    }

    #[test]
    fn addresses() {
        let v4 = Sample::Ipv4(Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(cast(v4.clone(), Str), Some(s("10.0.0.1")));
        assert_eq!(cast(v4.clone(), Sint), Some(Sample::Sint(0x0a00_0001)));
        assert_eq!(cast(v4.clone(), Bin), Some(Sample::Bin(Cow::Owned(vec![10, 0, 0, 1]))));
        assert_eq!(cast(v4.clone(), Addr), Some(v4.clone()));
        let mapped = cast(v4.clone(), Ipv6).unwrap();
        assert_eq!(mapped, Sample::Ipv6("::ffff:10.0.0.1".parse().unwrap()));
        assert_eq!(cast(mapped, Ipv4), Some(v4));
        assert_eq!(cast(Sample::Ipv6("2001:db8::1".parse().unwrap()), Ipv4), None);
        assert_eq!(cast(Sample::Ipv6("2001:db8::1".parse().unwrap()), Str), Some(s("2001:db8::1")));
        assert_eq!(cast(s("192.168.001.2:8080"), Ipv4), Some(Sample::Ipv4(Ipv4Addr::new(192, 168, 1, 2))));
        assert_eq!(cast(s("1.2.3"), Ipv4), None);
        assert_eq!(cast(s("1.2.3.256"), Ipv4), None);
        assert_eq!(cast(s("1..2.3"), Ipv4), None);
        assert_eq!(cast(s("::1"), Addr), Some(Sample::Ipv6(Ipv6Addr::LOCALHOST)));
        assert_eq!(cast(s("1.2.3.4"), Addr), Some(Sample::Ipv4(Ipv4Addr::new(1, 2, 3, 4))));
        assert_eq!(cast(s("::1 "), Ipv6), None);
        assert_eq!(cast(s("x"), Addr), None);
    }

    #[test]
    fn binaries_strings_and_methods() {
        assert_eq!(cast(Sample::Bin(Cow::Borrowed(b"ab\0cd")), Str), Some(s("ab")));
        assert_eq!(cast(Sample::Bin(Cow::Owned(b"ab\0cd".to_vec())), Str), Some(s("ab")));
        assert_eq!(cast(s("ab"), Bin), Some(Sample::Bin(Cow::Borrowed(b"ab"))));
        assert_eq!(cast(s("GET"), Meth), Some(Sample::Meth(Method::Get, Cow::Borrowed(b"GET"))));
        assert_eq!(cast(s("get"), Meth), Some(Sample::Meth(Method::Other, Cow::Borrowed(b"get"))));
        assert_eq!(cast(Sample::Meth(Method::Post, Cow::Borrowed(b"POST")), Str), Some(s("POST")));
        assert_eq!(cast(Sample::Meth(Method::Post, Cow::Borrowed(b"POST")), Sint), None);
        assert_eq!(cast(Sample::Bin(Cow::Borrowed(b"1")), Sint), None);
    }
}
