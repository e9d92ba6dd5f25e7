//! `persist rdp-cookie[(<name>)]`: a TCP stream whose request bytes carry the RDP
//! cookie `<name>` (`msts` by default) with a value `<ip>.<port>.<anything>` goes to the
//! server at that IPv4 address and port, when no `use-server` rule chose one and before
//! the `stick` rules. The value is what a Remote Desktop connection broker writes:
//! the four bytes of the address and the two of the port, in network order, each read
//! as a little-endian integer and written in decimal (10.0.0.1:3389 is
//! `16777226.15629.0000`).
//! HAProxy counterpart: `tcp_persist_rdp_cookie()` (src/backend.c, the
//! `AN_REQ_PRST_RDP_COOKIE` analyser).
//!
//! As HAProxy, this does not wait for the bytes: the content rules do that
//! (`tcp-request content accept if RDP_COOKIE` within an inspect delay). A server that
//! is down is not chosen unless `option persist` (`force-persist` plays no part here,
//! as in HAProxy).

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use crate::proxy::ProxyRt;
use crate::sample::fetch::rdp;

/// The server of backend `be` the RDP cookie `name` in `payload` names, if any is
/// there and may take the stream.
pub fn persist(be: &ProxyRt, name: &str, payload: &[u8]) -> Option<usize> {
    let value = rdp::cookie(payload, name.as_bytes()).ok().filter(|v| !v.is_empty())?;
    let target = SocketAddr::V4(msts_target(value)?);
    let i = be.be.servers.iter().position(|sv| !sv.state.is_deleted() && sv.addr.get() == target)?;
    let sv = &be.be.servers[i];
    (sv.takes_persistent() || be.persist).then_some(i)
}

/// The address and port a cookie value `<ip>.<port>.` names (what follows the second
/// dot is not read). Each number is read as C's `strtoul` reads it, and truncated to
/// the width of its field.
// COMPAT: HAProxy compares the raw numbers with its in-memory (network order) address
// and port; this decoding is what that comparison means on the little-endian hosts it
// runs on, and the encoding Microsoft's connection broker uses.
pub fn msts_target(value: &[u8]) -> Option<SocketAddrV4> {
    let (addr, rest) = strtoul(value);
    let rest = rest.strip_prefix(b".")?;
    let (port, rest) = strtoul(rest);
    rest.strip_prefix(b".")?;
    let ip = Ipv4Addr::from((addr as u32).to_le_bytes());
    Some(SocketAddrV4::new(ip, (port as u16).swap_bytes()))
}

/// C's `strtoul` in base 10: leading white space, a sign, digits (saturating); the
/// value and what follows it, or 0 and the whole input when no digit was read.
fn strtoul(s: &[u8]) -> (u64, &[u8]) {
    let ws = s.iter().take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')).count();
    let signed = &s[ws..];
    let (neg, digits) = match signed.first() {
        Some(b'-') => (true, &signed[1..]),
        Some(b'+') => (false, &signed[1..]),
        _ => (false, signed),
    };
    let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 {
        return (0, s);
    }
    let mut v: Option<u64> = Some(0);
    for &d in &digits[..n] {
        v = v.and_then(|v| v.checked_mul(10)).and_then(|v| v.checked_add(u64::from(d - b'0')));
    }
    let v = match v {
        None => u64::MAX,
        Some(v) if neg => v.wrapping_neg(),
        Some(v) => v,
    };
    (v, &digits[n..])
}

#[cfg(test)]
mod tests {
    use super::{msts_target, strtoul};

    #[test]
    fn broker_values_decode_to_an_address_and_port() {
        assert_eq!(msts_target(b"16777226.15629.0000").unwrap().to_string(), "10.0.0.1:3389");
        assert_eq!(msts_target(b"16777343.15629.0000").unwrap().to_string(), "127.0.0.1:3389");
        // only two dots are needed, what follows is not read
        assert_eq!(msts_target(b"16777343.15629.").unwrap().to_string(), "127.0.0.1:3389");
        // strtoul reads no digit as 0 at the start of its input
        assert_eq!(msts_target(b".15629.0").unwrap().to_string(), "0.0.0.0:3389");
        assert_eq!(msts_target(b"16777343.15629"), None);
        assert_eq!(msts_target(b"16777343x15629.0"), None);
        assert_eq!(msts_target(b"alice"), None);
        // wider numbers are truncated to their field as HAProxy's integer types do
        assert_eq!(msts_target(b"4311744639.81165.0").unwrap().to_string(), "127.0.0.1:3389");
    }

    #[test]
    fn strtoul_reads_as_c_does() {
        assert_eq!(strtoul(b"  +12x"), (12, &b"x"[..]));
        assert_eq!(strtoul(b"-1."), (u64::MAX, &b"."[..]));
        assert_eq!(strtoul(b" x"), (0, &b" x"[..]));
        assert_eq!(strtoul(b"99999999999999999999999."), (u64::MAX, &b"."[..]));
    }
}
