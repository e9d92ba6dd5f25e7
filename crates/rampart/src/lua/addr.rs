//! `core.parse_addr()` and `core.match_addr()`: networks as HAProxy 2.6 reads them
//! (`str2net()` without DNS, then `str62net()`) and compares them (each address under
//! the other's mask). HAProxy counterpart: `hlua_parse_addr()`, `hlua_match_addr()`
//! (src/hlua_fcn.c).

use std::net::{Ipv4Addr, Ipv6Addr};

use mlua::{Lua, Table, UserData, Value};

/// A parsed network: the address as written (not masked, as HAProxy keeps it) and its
/// mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NetAddr {
    V4(u32, u32),
    V6(u128, u128),
}

impl UserData for NetAddr {}

/// HAProxy's `str2mask()`: a dotted mask or a length up to 32.
fn mask4(text: &str) -> Option<u32> {
    if text.contains('.') {
        return text.parse::<Ipv4Addr>().ok().map(u32::from);
    }
    let len: u32 = text.parse().ok().filter(|&l| l <= 32)?;
    Some(if len == 0 { 0 } else { u32::MAX << (32 - len) })
}

/// `a.b.c.d[/mask]`, then `ipv6[/len]`; `None` for anything else (no DNS).
pub(crate) fn parse(text: &str) -> Option<NetAddr> {
    let (ip, mask) = match text.rsplit_once('/') {
        Some((ip, m)) => (ip, Some(m)),
        None => (text, None),
    };
    if let Ok(a) = ip.parse::<Ipv4Addr>() {
        let m = match mask {
            Some(m) => mask4(m)?,
            None => u32::MAX,
        };
        return Some(NetAddr::V4(u32::from(a), m));
    }
    let len: u32 = match mask {
        Some(m) => m.parse().ok().filter(|&l| l <= 128)?,
        None => 128,
    };
    let a = ip.parse::<Ipv6Addr>().ok()?;
    let m = if len == 0 { 0 } else { u128::MAX << (128 - len) };
    Some(NetAddr::V6(u128::from(a), m))
}

/// Whether two networks match: same family and each address equal to the other under
/// the other's mask, as HAProxy compares them.
pub(crate) fn matches(a: NetAddr, b: NetAddr) -> bool {
    match (a, b) {
        (NetAddr::V4(ip1, m1), NetAddr::V4(ip2, m2)) => ip1 & m2 == ip2 & m1,
        (NetAddr::V6(ip1, m1), NetAddr::V6(ip2, m2)) => ip1 & m2 == ip2 & m1,
        _ => false,
    }
}

fn net(v: &Value) -> Option<NetAddr> {
    match v {
        Value::UserData(ud) => ud.borrow::<NetAddr>().ok().map(|a| *a),
        _ => None,
    }
}

/// Adds `parse_addr` and `match_addr` to `core`.
pub(super) fn install(lua: &Lua, core: &Table) -> mlua::Result<()> {
    core.set(
        "parse_addr",
        lua.create_function(|lua, text: mlua::String| match parse(&text.to_str()?) {
            Some(a) => Ok(Value::UserData(lua.create_userdata(a)?)),
            None => Ok(Value::Nil),
        })?,
    )?;
    core.set(
        "match_addr",
        lua.create_function(|_, (a, b): (Value, Value)| {
            Ok(match (net(&a), net(&b)) {
                (Some(a), Some(b)) => matches(a, b),
                _ => false,
            })
        })?,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(a: &str, b: &str) -> bool {
        matches(parse(a).unwrap(), parse(b).unwrap())
    }

    #[test]
    fn networks_parse_as_haproxy() {
        assert_eq!(parse("10.0.0.1"), Some(NetAddr::V4(0x0a00_0001, u32::MAX)));
        assert_eq!(parse("10.0.0.1/8"), Some(NetAddr::V4(0x0a00_0001, 0xff00_0000)));
        assert_eq!(parse("10.0.0.1/255.255.0.0"), Some(NetAddr::V4(0x0a00_0001, 0xffff_0000)));
        assert_eq!(parse("10.0.0.1/0"), Some(NetAddr::V4(0x0a00_0001, 0)));
        assert_eq!(parse("10.0.0.1/33"), None);
        assert_eq!(parse("::1/64"), Some(NetAddr::V6(1, u128::MAX << 64)));
        assert_eq!(parse("::1/129"), None);
        assert_eq!(parse("localhost"), None);
        assert_eq!(parse("10.0.0.1/"), None);
    }

    #[test]
    fn each_address_is_compared_under_the_other_mask() {
        assert!(m("192.168.1.7", "192.168.0.0/16"));
        assert!(m("192.168.0.0/16", "192.168.1.7"));
        assert!(!m("192.169.1.7", "192.168.0.0/16"));
        assert!(m("2001:db8::1", "2001:db8::/32"));
        assert!(!m("2001:db9::1", "2001:db8::/32"));
        assert!(!m("127.0.0.1", "::1"));
    }
}
