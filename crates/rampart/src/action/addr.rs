//! `set-src`, `set-dst`, `set-src-port`, `set-dst-port`: the addresses the rules that
//! follow, `option forwardfor` / `originalto` and the logs see for this stream.
//! HAProxy counterpart: `tcp_action_req_set_src()` and its siblings (src/tcp_act.c),
//! for `http-request` (the stream connector's copy of the addresses).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use crate::sample::cast::cast;
use crate::sample::ctx::ConnInfo;
use crate::sample::{Sample, SmpType};

/// Which address (or port) an action changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddrPart {
    Src,
    Dst,
    SrcPort,
    DstPort,
}

impl AddrPart {
    /// The type the action's expression is converted to.
    pub fn smp_type(self) -> SmpType {
        match self {
            AddrPart::Src | AddrPart::Dst => SmpType::Addr,
            AddrPart::SrcPort | AddrPart::DstPort => SmpType::Sint,
        }
    }
}

/// Applies the value of the action's expression to `conn`. An address keeps the old
/// port; a port keeps the old address (`0.0.0.0` when there was none, as HAProxy
/// forces an IPv4 family then). A value that does not convert changes nothing.
pub fn set(part: AddrPart, conn: &mut ConnInfo, smp: Sample<'_>) {
    let Some(v) = cast(smp, part.smp_type()) else { return };
    let ip = match v {
        Sample::Ipv4(a) => Some(IpAddr::V4(a)),
        Sample::Ipv6(a) => Some(IpAddr::V6(a)),
        _ => None,
    };
    // COMPAT: HAProxy keeps the low 16 bits of the integer (`htons()`).
    let port = match v {
        Sample::Sint(n) => Some(n as u16),
        _ => None,
    };
    let unset = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
    match (part, ip, port) {
        (AddrPart::Src, Some(ip), _) => conn.src = Some(SocketAddr::new(ip, conn.src.map_or(0, |a| a.port()))),
        (AddrPart::Dst, Some(ip), _) => {
            conn.set_dst(SocketAddr::new(ip, conn.dst().map_or(0, |a| a.port())));
        }
        (AddrPart::SrcPort, _, Some(p)) => conn.src = Some(SocketAddr::new(conn.src.map_or(unset, |a| a.ip()), p)),
        (AddrPart::DstPort, _, Some(p)) => {
            conn.set_dst(SocketAddr::new(conn.dst().map_or(unset, |a| a.ip()), p));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn conn() -> ConnInfo {
        ConnInfo::new(Some("127.0.0.1:4000".parse().unwrap()), -1)
    }

    #[test]
    fn addresses_keep_their_port_and_ports_their_address() {
        let mut c = conn();
        set(AddrPart::Src, &mut c, Sample::Str(Cow::Borrowed(b"10.1.2.3")));
        assert_eq!(c.src, Some("10.1.2.3:4000".parse().unwrap()));
        set(AddrPart::Src, &mut c, Sample::Str(Cow::Borrowed(b"2001:db8::1")));
        assert_eq!(c.src, Some("[2001:db8::1]:4000".parse().unwrap()));
        set(AddrPart::SrcPort, &mut c, Sample::Sint(65536 + 81));
        assert_eq!(c.src, Some("[2001:db8::1]:81".parse().unwrap()));
        set(AddrPart::Src, &mut c, Sample::Str(Cow::Borrowed(b"not an address")));
        assert_eq!(c.src, Some("[2001:db8::1]:81".parse().unwrap()));
        // no socket behind fd -1: the destination starts unknown
        set(AddrPart::DstPort, &mut c, Sample::Sint(8443));
        assert_eq!(c.dst(), Some("0.0.0.0:8443".parse().unwrap()));
        set(AddrPart::Dst, &mut c, Sample::Ipv4(Ipv4Addr::new(192, 0, 2, 7)));
        assert_eq!(c.dst(), Some("192.0.2.7:8443".parse().unwrap()));
    }

    #[test]
    fn a_client_without_address_gets_one_from_a_port() {
        let mut c = ConnInfo::new(None, -1);
        set(AddrPart::SrcPort, &mut c, Sample::Str(Cow::Borrowed(b"99")));
        assert_eq!(c.src, Some("0.0.0.0:99".parse().unwrap()));
    }
}
