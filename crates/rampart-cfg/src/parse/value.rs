//! Values found in keyword arguments: times, C-style integers, object names and
//! networks. HAProxy counterparts: `parse_time_err()`, `invalid_char()`, `str2net()` in
//! src/tools.c and libc's `atol()`. Addresses live in `parse::addr`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};
use std::time::Duration;

use crate::model::IpNet;

/// Why a time value was refused (HAProxy words each case differently per keyword).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeError {
    /// A character that is neither a digit nor a known unit.
    BadChar(char),
    /// The value does not fit in 2^31-1 milliseconds.
    Overflow,
    /// A non-zero value that rounds down to zero milliseconds.
    Underflow,
}

/// A parsed time in milliseconds, with the character HAProxy warns about when text
/// follows the unit (`10sx`: accepted as 10s with a warning).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Millis {
    pub ms: u32,
    pub trailing: Option<char>,
}

impl Millis {
    /// `None` for 0, which HAProxy treats as "no timeout".
    pub fn duration(self) -> Option<Duration> {
        (self.ms != 0).then(|| Duration::from_millis(u64::from(self.ms)))
    }
}

/// Parses HAProxy's time syntax: digits then an optional unit among `us`, `ms`, `s`,
/// `m`, `h`, `d`; without unit the value is in milliseconds. The result is rounded up
/// to the next millisecond, as HAProxy does.
pub fn parse_time_ms(text: &str) -> Result<Millis, TimeError> {
    let (ms, trailing) = parse_time_in(text, 1000)?;
    Ok(Millis { ms, trailing })
}

/// HAProxy's time syntax counted in units of `unit_us` microseconds (1000: milliseconds,
/// the default unit too; 1 000 000: seconds, e.g. `cookie ... maxidle`), rounded up;
/// the character after the unit, if any, comes along for HAProxy's warning.
pub fn parse_time_in(text: &str, unit_us: u128) -> Result<(u32, Option<char>), TimeError> {
    let digits_end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    if digits_end == 0 {
        return Err(TimeError::BadChar(text.chars().next().unwrap_or('\0')));
    }
    let value =
        text[..digits_end].bytes().fold(0u128, |acc, d| acc.saturating_mul(10).saturating_add(u128::from(d - b'0')));
    let rest = &text[digits_end..];
    // Unit length in bytes and its size in microseconds.
    let (unit_len, size_us): (usize, u128) = match rest.as_bytes() {
        [] => (0, unit_us),
        [b'u', b's', ..] => (2, 1),
        [b'm', b's', ..] => (2, 1000),
        [b's', ..] => (1, 1_000_000),
        [b'm', ..] => (1, 60_000_000),
        [b'h', ..] => (1, 3_600_000_000),
        [b'd', ..] => (1, 86_400_000_000),
        _ => return Err(TimeError::BadChar(rest.chars().next().unwrap_or('\0'))),
    };
    let n = value.saturating_mul(size_us).div_ceil(unit_us);
    if n >= 0x8000_0000 {
        return Err(TimeError::Overflow);
    }
    if n == 0 && value != 0 {
        return Err(TimeError::Underflow);
    }
    Ok((n as u32, rest[unit_len..].chars().next()))
}

/// HAProxy's warning when text follows a time unit.
pub fn time_trailing_warning(c: char, text: &str) -> String {
    format!(
        "unexpected character '{c}' after the timer value '{text}', only \
         (us=microseconds,ms=milliseconds,s=seconds,m=minutes,h=hours,d=days) are supported. \
         This will be reported as an error in next versions."
    )
}

/// C's `atol()`: optional blanks and sign, then as many digits as there are; anything
/// else ends the number, and no digit at all gives 0. HAProxy reads most integers this
/// way, so `maxconn abc` is accepted as 0; we do the same to accept the same files.
pub fn atol(text: &str) -> i64 {
    let s = text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg {
        -v
    } else {
        v
    }
}

/// `true` when `text` is exactly an optionally signed decimal number, i.e. `atol` used
/// every character.
pub fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The first character not allowed in proxy and server names (`[A-Za-z0-9_.:-]`); an
/// empty name is invalid too (reported as NUL, like HAProxy).
pub fn invalid_char(name: &str) -> Option<char> {
    if name.is_empty() {
        return Some('\0');
    }
    name.chars().find(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '_' | '-')))
}

/// Parses `<addr>[/mask]` as `option forwardfor except` takes it: IPv4 with a prefix
/// length or a dotted mask (a host name is resolved to its IPv4 address), or IPv6 with a
/// prefix length. Host bits are cleared. `None` when the text is not a network.
pub fn parse_net(text: &str) -> Option<IpNet> {
    let (addr, mask) = match text.split_once('/') {
        Some((a, m)) => (a, Some(m)),
        None => (text, None),
    };
    if let Some(v4) = parse_ipv4_host(addr) {
        let prefix = match mask {
            None => 32,
            Some(m) => v4_mask_len(m)?,
        };
        return Some(masked(IpNet { addr: IpAddr::V4(v4), prefix }));
    }
    let v6: Ipv6Addr = addr.parse().ok()?;
    let prefix = match mask {
        None => 128,
        Some(m) if is_integer(m) && atol(m) >= 0 && atol(m) <= 128 => atol(m) as u8,
        Some(_) => return None,
    };
    Some(masked(IpNet { addr: IpAddr::V6(v6), prefix }))
}

fn parse_ipv4_host(text: &str) -> Option<Ipv4Addr> {
    if let Ok(v4) = text.parse() {
        return Some(v4);
    }
    if text.is_empty() || text.contains(':') {
        return None;
    }
    (text, 0).to_socket_addrs().ok()?.find_map(|sa| match sa.ip() {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(_) => None,
    })
}

/// A mask given as a length (`24`) or dotted (`255.255.255.0`, contiguous only).
fn v4_mask_len(mask: &str) -> Option<u8> {
    if is_integer(mask) {
        let n = atol(mask);
        return (0..=32).contains(&n).then_some(n as u8);
    }
    let bits = u32::from(mask.parse::<Ipv4Addr>().ok()?);
    let len = bits.leading_ones();
    (bits.checked_shl(len).unwrap_or(0) == 0).then_some(len as u8)
}

fn masked(net: IpNet) -> IpNet {
    let addr = match net.addr {
        IpAddr::V4(a) => {
            let bits = u32::from(net.prefix.min(32));
            let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
            IpAddr::V4(Ipv4Addr::from(u32::from(a) & mask))
        }
        IpAddr::V6(a) => {
            let bits = u32::from(net.prefix.min(128));
            let mask = if bits == 0 { 0 } else { u128::MAX << (128 - bits) };
            IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask))
        }
    };
    IpNet { addr, prefix: net.prefix }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> Result<u32, TimeError> {
        parse_time_ms(text).map(|m| m.ms)
    }

    #[test]
    fn time_units() {
        assert_eq!(ms("10"), Ok(10));
        assert_eq!(ms("10ms"), Ok(10));
        assert_eq!(ms("10s"), Ok(10_000));
        assert_eq!(ms("2m"), Ok(120_000));
        assert_eq!(ms("1h"), Ok(3_600_000));
        assert_eq!(ms("1d"), Ok(86_400_000));
        assert_eq!(ms("1500us"), Ok(2), "rounded up like HAProxy");
        assert_eq!(ms("0"), Ok(0));
        assert_eq!(parse_time_ms("0").map(Millis::duration), Ok(None));
        assert_eq!(parse_time_ms("5s").map(Millis::duration), Ok(Some(Duration::from_secs(5))));
    }

    #[test]
    fn time_errors() {
        assert_eq!(ms("1.5s"), Err(TimeError::BadChar('.')));
        assert_eq!(ms("abc"), Err(TimeError::BadChar('a')));
        assert_eq!(ms("-1"), Err(TimeError::BadChar('-')));
        assert_eq!(ms("5xs"), Err(TimeError::BadChar('x')));
        assert_eq!(ms("1u"), Err(TimeError::BadChar('u')));
        assert_eq!(ms(""), Err(TimeError::BadChar('\0')));
        assert_eq!(ms("2147483648"), Err(TimeError::Overflow));
        assert_eq!(ms("2147483647"), Ok(2_147_483_647));
        assert_eq!(ms("25d"), Err(TimeError::Overflow));
        assert_eq!(ms("99999999999999999999999999999999999999999999d"), Err(TimeError::Overflow));
        assert_eq!(parse_time_ms("10sx"), Ok(Millis { ms: 10_000, trailing: Some('x') }));
    }

    #[test]
    fn atol_is_c_atol() {
        assert_eq!(atol("42"), 42);
        assert_eq!(atol("  -7x"), -7);
        assert_eq!(atol("+3"), 3);
        assert_eq!(atol("abc"), 0);
        assert_eq!(atol(""), 0);
        assert_eq!(atol("99999999999999999999999"), i64::MAX);
        assert!(is_integer("-12") && !is_integer("12a") && !is_integer("") && !is_integer("-"));
    }

    #[test]
    fn names() {
        assert_eq!(invalid_char("be_1.a:b-c"), None);
        assert_eq!(invalid_char("b/x"), Some('/'));
        assert_eq!(invalid_char(""), Some('\0'));
    }

    #[test]
    fn networks() {
        let n = parse_net("10.1.2.3/8").expect("net");
        assert_eq!((n.addr, n.prefix), (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 0)), 8));
        assert_eq!(parse_net("10.0.0.0/255.255.0.0").map(|n| n.prefix), Some(16));
        assert_eq!(parse_net("1.2.3.4").map(|n| n.prefix), Some(32));
        assert!(parse_net("1.2.3.4/33").is_none());
        assert!(parse_net("1.2.3.4/255.0.255.0").is_none());
        assert_eq!(parse_net("::1/64").map(|n| n.prefix), Some(64));
        assert!(parse_net("::1/129").is_none());
        assert!(parse_net("").is_none());
    }
}
