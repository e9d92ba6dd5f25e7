//! Address patterns (`-m ip`): IPv4 and IPv6 addresses and networks, matched by
//! longest prefix. Networks live in one hash table per prefix length; a lookup probes
//! the lengths present from the longest down, so it costs at most as many probes as
//! there are distinct prefix lengths (33 for IPv4 at worst, a handful in practice),
//! whatever the number of networks. IPv4 networks whose dotted mask is not
//! contiguous (`10.0.0.0/255.0.255.0`) are kept in a list, tried last, in order.
//!
//! Across families, as HAProxy: an IPv4 sample also matches IPv6 networks through its
//! mapped form `::ffff:a.b.c.d`; an IPv6 sample that is IPv4-mapped (`::ffff:a.b.c.d`),
//! IPv4-compatible (`::a.b.c.d`) or 6to4 (`2002:AABB:CCDD::`) also matches IPv4
//! networks.
//!
//! HAProxy counterpart: `pat_parse_ip()`, `pat_idx_tree_ip()`, `pat_match_ip()`
//! (src/pattern.c), `str2net()`, `str62net()` (src/tools.c).

use std::collections::HashMap;
use std::net::{Ipv4Addr, Ipv6Addr, ToSocketAddrs};

use super::exact::PassBuild;

/// A parsed address pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Net {
    /// Address and mask, host order.
    V4(u32, u32),
    /// Address and prefix length.
    V6(u128, u8),
}

/// Parses `addr[/mask]`: IPv4 with a dotted or length mask, else IPv6 with a length.
/// A host name is resolved (first IPv4 address) when `resolve` is set, as HAProxy
/// does at startup without `-n`.
pub fn parse_net(text: &str, resolve: bool) -> Result<Net, String> {
    parse_v4(text, resolve)
        .or_else(|| parse_v6(text))
        .ok_or_else(|| format!("'{text}' is not a valid IPv4 or IPv6 address"))
}

fn parse_v4(text: &str, resolve: bool) -> Option<Net> {
    let (addr, mask) = match text.rsplit_once('/') {
        Some((a, m)) => (a, parse_mask4(m)?),
        None => (text, u32::MAX),
    };
    let a = match addr.parse::<Ipv4Addr>() {
        Ok(a) => a,
        Err(_) if resolve && !addr.is_empty() => resolve_v4(addr)?,
        Err(_) => return None,
    };
    Some(Net::V4(u32::from(a) & mask, mask))
}

fn parse_mask4(m: &str) -> Option<u32> {
    if m.contains('.') {
        return m.parse::<Ipv4Addr>().ok().map(u32::from);
    }
    let len: u32 = m.parse().ok()?;
    (len <= 32).then(|| len_to_mask4(len))
}

fn len_to_mask4(len: u32) -> u32 {
    u32::MAX.checked_shl(32 - len).unwrap_or(0)
}

fn len_to_mask6(len: u8) -> u128 {
    u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0)
}

fn resolve_v4(name: &str) -> Option<Ipv4Addr> {
    (name, 0).to_socket_addrs().ok()?.find_map(|sa| match sa.ip() {
        std::net::IpAddr::V4(a) => Some(a),
        std::net::IpAddr::V6(_) => None,
    })
}

fn parse_v6(text: &str) -> Option<Net> {
    let (addr, len) = match text.rsplit_once('/') {
        Some((a, m)) => {
            let len: u8 = m.parse().ok()?;
            (a, len)
        }
        None => (text, 128),
    };
    if len > 128 {
        return None;
    }
    let a = u128::from(addr.parse::<Ipv6Addr>().ok()?);
    Some(Net::V6(a & len_to_mask6(len), len))
}

/// The IPv4 address an IPv6 one stands for: mapped, compatible or 6to4 (HAProxy's
/// rule in `pat_match_ip`).
pub fn v6_to_v4(a: Ipv6Addr) -> Option<Ipv4Addr> {
    let o = a.octets();
    if o[..8] == [0; 8] && (o[8..12] == [0; 4] || o[8..12] == [0, 0, 0xff, 0xff]) {
        return Some(Ipv4Addr::new(o[12], o[13], o[14], o[15]));
    }
    if o[0] == 0x20 && o[1] == 0x02 {
        return Some(Ipv4Addr::new(o[2], o[3], o[4], o[5]));
    }
    None
}

/// Longest-prefix tables for one family.
#[derive(Debug, Default)]
struct Lpm<K> {
    /// Prefix lengths present, longest first, each with its table (masked address →
    /// first pattern).
    by_len: Vec<(u8, HashMap<K, u32, PassBuild>)>,
}

impl<K: std::hash::Hash + Eq + Copy> Lpm<K> {
    fn insert(&mut self, len: u8, key: K, idx: u32) {
        let at = match self.by_len.iter().position(|(l, _)| *l <= len) {
            Some(i) if self.by_len[i].0 == len => i,
            Some(i) => {
                self.by_len.insert(i, (len, HashMap::default()));
                i
            }
            None => {
                self.by_len.push((len, HashMap::default()));
                self.by_len.len() - 1
            }
        };
        self.by_len[at].1.entry(key).or_insert(idx);
    }

    fn find(&self, mask: impl Fn(u8) -> K) -> Option<u32> {
        self.by_len.iter().find_map(|(len, t)| t.get(&mask(*len)).copied())
    }
}

#[derive(Debug, Default)]
pub struct IpSet {
    v4: Lpm<u32>,
    v6: Lpm<u128>,
    /// Non-contiguous IPv4 masks: (address, mask, pattern), in order.
    list: Vec<(u32, u32, u32)>,
}

impl IpSet {
    pub fn build(nets: &[(Net, u32)]) -> IpSet {
        let mut s = IpSet::default();
        for &(net, idx) in nets {
            match net {
                Net::V4(a, m) if m.leading_ones() + m.trailing_zeros() == 32 => {
                    s.v4.insert(m.leading_ones() as u8, a, idx);
                }
                Net::V4(a, m) => s.list.push((a, m, idx)),
                Net::V6(a, len) => s.v6.insert(len, a, idx),
            }
        }
        s
    }

    fn find_v4(&self, a: u32) -> Option<u32> {
        self.v4.find(|len| a & len_to_mask4(u32::from(len)))
    }

    fn find_v6(&self, a: u128) -> Option<u32> {
        self.v6.find(|len| a & len_to_mask6(len))
    }

    fn find_list(&self, a: u32) -> Option<u32> {
        self.list.iter().find(|(n, m, _)| (a ^ n) & m == 0).map(|e| e.2)
    }

    /// The pattern an IPv4 sample matches, in HAProxy's order: IPv4 networks by
    /// longest prefix, then IPv6 ones through the mapped address, then the list.
    pub fn find4(&self, a: Ipv4Addr) -> Option<u32> {
        let v4 = u32::from(a);
        self.find_v4(v4).or_else(|| self.find_v6(u128::from(a.to_ipv6_mapped()))).or_else(|| self.find_list(v4))
    }

    /// The pattern an IPv6 sample matches: IPv6 networks, then (for an address that
    /// stands for an IPv4 one) IPv4 networks and the list.
    pub fn find6(&self, a: Ipv6Addr) -> Option<u32> {
        self.find_v6(u128::from(a)).or_else(|| {
            let v4 = u32::from(v6_to_v4(a)?);
            self.find_v4(v4).or_else(|| self.find_list(v4))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(s: &str) -> Ipv4Addr {
        s.parse().unwrap()
    }

    fn v6(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    #[test]
    fn parsing() {
        assert_eq!(parse_net("10.1.2.3", false), Ok(Net::V4(0x0a01_0203, u32::MAX)));
        assert_eq!(parse_net("10.1.2.3/8", false), Ok(Net::V4(0x0a00_0000, 0xff00_0000)));
        assert_eq!(parse_net("10.1.2.3/255.255.0.0", false), Ok(Net::V4(0x0a01_0000, 0xffff_0000)));
        assert_eq!(parse_net("0.0.0.0/0", false), Ok(Net::V4(0, 0)));
        assert_eq!(parse_net("::1", false), Ok(Net::V6(1, 128)));
        assert_eq!(parse_net("2001:db8::1/32", false), Ok(Net::V6(0x2001_0db8 << 96, 32)));
        assert_eq!(parse_net("10.0.0.1/33", false).unwrap_err(), "'10.0.0.1/33' is not a valid IPv4 or IPv6 address");
        assert!(parse_net("::1/129", false).is_err());
        assert!(parse_net("::1/", false).is_err());
        assert!(parse_net("010.0.0.1", false).is_err());
        assert!(parse_net("10.0.0", false).is_err());
        assert!(parse_net("localhost", false).is_err());
        assert_eq!(parse_net("localhost", true), Ok(Net::V4(0x7f00_0001, u32::MAX)));
        assert_eq!(parse_net("localhost/8", true), Ok(Net::V4(0x7f00_0000, 0xff00_0000)));
    }

    #[test]
    fn longest_prefix_first() {
        let nets = ["10.0.0.0/8", "10.1.0.0/16", "10.1.2.0/24", "10.1.0.0/16", "0.0.0.0/0"];
        let n: Vec<(Net, u32)> =
            nets.iter().enumerate().map(|(i, s)| (parse_net(s, false).unwrap(), i as u32)).collect();
        let s = IpSet::build(&n);
        assert_eq!(s.find4(v4("10.1.2.3")), Some(2));
        assert_eq!(s.find4(v4("10.1.3.3")), Some(1));
        assert_eq!(s.find4(v4("10.2.3.3")), Some(0));
        assert_eq!(s.find4(v4("11.0.0.1")), Some(4));
    }

    #[test]
    fn families_cross() {
        let n = vec![(parse_net("192.168.0.0/16", false).unwrap(), 0), (parse_net("2001:db8::/32", false).unwrap(), 1)];
        let s = IpSet::build(&n);
        assert_eq!(s.find6(v6("::ffff:192.168.1.1")), Some(0));
        assert_eq!(s.find6(v6("::192.168.1.1")), Some(0));
        assert_eq!(s.find6(v6("2002:c0a8:0101::1")), Some(0));
        assert_eq!(s.find6(v6("2001:db8:1::1")), Some(1));
        assert_eq!(s.find6(v6("2001:db9::1")), None);
        assert_eq!(s.find4(v4("10.0.0.1")), None);
        let m = IpSet::build(&[(parse_net("::ffff:10.0.0.0/104", false).unwrap(), 0)]);
        assert_eq!(m.find4(v4("10.9.9.9")), Some(0));
        assert_eq!(m.find4(v4("11.9.9.9")), None);
    }

    #[test]
    fn non_contiguous_masks() {
        let s = IpSet::build(&[(parse_net("10.0.0.5/255.0.255.255", false).unwrap(), 0)]);
        assert_eq!(s.find4(v4("10.77.0.5")), Some(0));
        assert_eq!(s.find4(v4("10.77.0.6")), None);
        assert_eq!(s.find6(v6("::ffff:10.1.0.5")), Some(0));
    }

    #[test]
    fn many_networks() {
        let n: Vec<(Net, u32)> = (0..50_000u32).map(|i| (Net::V4(0x0a00_0000 | (i << 8), 0xffff_ff00), i)).collect();
        let s = IpSet::build(&n);
        assert_eq!(s.find4(Ipv4Addr::from(0x0a00_0000 | (4242 << 8) | 7)), Some(4242));
        assert_eq!(s.find4(v4("11.0.0.0")), None);
    }
}
