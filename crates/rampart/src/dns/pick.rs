//! Reading an answer for a server: the addresses a name resolves to (through its
//! CNAMEs), the one a server takes (preferred family, preferred networks, not one
//! another server of the backend has, the current one when still there), and the SRV
//! records of a `server-template`. Pure functions, tested alone.
//! HAProxy counterparts: `resolv_validate_dns_response()`'s CNAME walk,
//! `resolv_get_ip_from_response()` (src/resolvers.c).

use std::net::IpAddr;

use rampart_proto::dns::{RData, Response};

/// CNAMEs followed at most (HAProxy stops at the same depth).
const MAX_CNAME: usize = 8;

/// The addresses `response` gives for its question, following CNAMEs; `None` when a
/// CNAME chain is too long (counted as `cname_error`).
pub fn addresses(response: &Response) -> Option<Vec<IpAddr>> {
    let mut name = response.qname.clone();
    for _ in 0..=MAX_CNAME {
        let found: Vec<IpAddr> = response
            .answers
            .iter()
            .filter(|r| r.name == name)
            .filter_map(|r| match r.data {
                RData::A(v4) => Some(IpAddr::V4(v4)),
                RData::Aaaa(v6) => Some(IpAddr::V6(v6)),
                _ => None,
            })
            .collect();
        if !found.is_empty() {
            return Some(found);
        }
        let next = response.answers.iter().find_map(|r| match &r.data {
            RData::Cname(target) if r.name == name => Some(target.clone()),
            _ => None,
        });
        match next {
            Some(target) => name = target,
            None => return Some(Vec::new()),
        }
    }
    None
}

/// Whether the addresses of `response` were reached through a CNAME of its question
/// (counted as the nameserver's `cname`).
pub fn via_cname(response: &Response) -> bool {
    response.answers.iter().any(|r| r.name == response.qname && matches!(r.data, RData::Cname(_)))
}

/// What a server asks of an address.
pub struct Prefs<'a> {
    pub prefer_v6: bool,
    /// `resolve-net`: an address inside one scores higher.
    pub in_net: &'a dyn Fn(IpAddr) -> bool,
    /// `resolve-opts allow-dup-ip`.
    pub allow_dup: bool,
    /// Addresses other servers of the backend have.
    pub taken: &'a [IpAddr],
}

/// What a server does with an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Its address is the best one: nothing changes.
    Keep,
    /// It moves to this address.
    New(IpAddr),
    /// No address it may take.
    NoIp,
}

/// Scores each address as HAProxy does (8: preferred family, 4: preferred network, 2:
/// no other server has it, 1: the current one; one another server has is skipped
/// unless duplicates are allowed) and takes the best, the first of equals.
pub fn pick(ips: &[IpAddr], current: Option<IpAddr>, p: &Prefs<'_>) -> Pick {
    let mut best: Option<(u32, IpAddr)> = None;
    for &ip in ips {
        let mut score = 0;
        if ip.is_ipv6() == p.prefer_v6 {
            score += 8;
        }
        if (p.in_net)(ip) {
            score += 4;
        }
        if p.taken.contains(&ip) {
            if !p.allow_dup {
                continue;
            }
        } else {
            score += 2;
        }
        if Some(ip) == current {
            score += 1;
        }
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, ip));
        }
    }
    match best {
        None => Pick::NoIp,
        Some((_, ip)) if Some(ip) == current => Pick::Keep,
        Some((_, ip)) => Pick::New(ip),
    }
}

/// One SRV record of an answer, with the address its additional records give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SrvEntry {
    pub target: String,
    pub port: u16,
    /// The DNS weight (0..65535).
    pub weight: u16,
    /// From the additional section, when the server put it there.
    pub addr: Option<IpAddr>,
}

/// The SRV records answering `response`'s question, in answer order, each target and
/// port once.
pub fn srv_entries(response: &Response, prefer_v6: bool) -> Vec<SrvEntry> {
    let mut out: Vec<SrvEntry> = Vec::new();
    for r in response.answers.iter().filter(|r| r.name == response.qname) {
        let RData::Srv { weight, port, target, .. } = &r.data else { continue };
        if target.is_empty() || out.iter().any(|e| &e.target == target && e.port == *port) {
            continue;
        }
        let addrs: Vec<IpAddr> = response
            .additional
            .iter()
            .filter(|a| &a.name == target)
            .filter_map(|a| match a.data {
                RData::A(v4) => Some(IpAddr::V4(v4)),
                RData::Aaaa(v6) => Some(IpAddr::V6(v6)),
                _ => None,
            })
            .collect();
        let addr = addrs.iter().find(|a| a.is_ipv6() == prefer_v6).or(addrs.first()).copied();
        out.push(SrvEntry { target: target.clone(), port: *port, weight: *weight, addr });
    }
    out
}

/// HAProxy's mapping of an SRV weight (0..65535) to a server weight (0..256): 0 stays
/// 0, anything else rounds up.
pub fn srv_weight(w: u16) -> u32 {
    u32::from(w).div_ceil(256)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_proto::dns::{Rcode, Record};

    fn rec(name: &str, data: RData) -> Record {
        Record { name: name.into(), ttl: 1, data }
    }

    fn resp(q: &str, answers: Vec<Record>, additional: Vec<Record>) -> Response {
        Response { id: 1, rcode: Rcode::NoError, truncated: false, qname: q.into(), qtype: 1, answers, additional }
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn cname_chains_are_followed_and_bounded() {
        let r = resp(
            "a",
            vec![
                rec("a", RData::Cname("b".into())),
                rec("b", RData::A("10.0.0.1".parse().unwrap())),
                rec("x", RData::A("10.9.9.9".parse().unwrap())),
            ],
            vec![],
        );
        assert_eq!(addresses(&r), Some(vec![ip("10.0.0.1")]));
        assert!(via_cname(&r));
        assert!(!via_cname(&resp("b", r.answers.clone(), vec![])));
        let chain: Vec<Record> = (0..20).map(|i| rec(&format!("n{i}"), RData::Cname(format!("n{}", i + 1)))).collect();
        assert_eq!(addresses(&resp("n0", chain, vec![])), None);
        let looped = vec![rec("a", RData::Cname("b".into())), rec("b", RData::Cname("a".into()))];
        assert_eq!(addresses(&resp("a", looped, vec![])), None);
        assert_eq!(addresses(&resp("a", vec![], vec![])), Some(vec![]));
    }

    #[test]
    fn picks_as_haproxy_scores() {
        let none = |_: IpAddr| false;
        let p = |prefer_v6, taken: &'static [IpAddr]| Prefs { prefer_v6, in_net: &none, allow_dup: false, taken };
        let ips = [ip("10.0.0.1"), ip("fd00::1"), ip("10.0.0.2")];
        assert_eq!(pick(&ips, None, &p(false, &[])), Pick::New(ip("10.0.0.1")));
        assert_eq!(pick(&ips, None, &p(true, &[])), Pick::New(ip("fd00::1")));
        assert_eq!(pick(&ips, Some(ip("10.0.0.2")), &p(false, &[])), Pick::Keep);
        // the current address gone: the best other one
        assert_eq!(pick(&ips, Some(ip("10.0.0.9")), &p(false, &[])), Pick::New(ip("10.0.0.1")));
        let taken: &'static [IpAddr] = Box::leak(Box::new([ip("10.0.0.1")]));
        assert_eq!(pick(&ips, None, &p(false, taken)), Pick::New(ip("10.0.0.2")));
        let all: &'static [IpAddr] = Box::leak(Box::new(ips));
        assert_eq!(pick(&ips, None, &p(false, all)), Pick::NoIp);
        let dup = Prefs { prefer_v6: false, in_net: &none, allow_dup: true, taken: all };
        assert_eq!(pick(&ips, None, &dup), Pick::New(ip("10.0.0.1")));
        let net = |a: IpAddr| a == ip("10.0.0.2");
        let pn = Prefs { prefer_v6: false, in_net: &net, allow_dup: false, taken: &[] };
        assert_eq!(pick(&ips, None, &pn), Pick::New(ip("10.0.0.2")));
        assert_eq!(pick(&[], None, &p(false, &[])), Pick::NoIp);
    }

    #[test]
    fn srv_records_and_weights() {
        let srv = |t: &str, port, weight| RData::Srv { priority: 0, weight, port, target: t.into() };
        let r = resp(
            "_h._tcp.x",
            vec![
                rec("_h._tcp.x", srv("a.x", 80, 10)),
                rec("_h._tcp.x", srv("b.x", 81, 0)),
                rec("_h._tcp.x", srv("a.x", 80, 3)),
                rec("other", srv("c.x", 1, 1)),
            ],
            vec![
                rec("a.x", RData::A("10.0.0.1".parse().unwrap())),
                rec("a.x", RData::Aaaa("fd00::1".parse().unwrap())),
            ],
        );
        let e = srv_entries(&r, false);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0], SrvEntry { target: "a.x".into(), port: 80, weight: 10, addr: Some(ip("10.0.0.1")) });
        assert_eq!((e[1].target.as_str(), e[1].addr), ("b.x", None));
        assert_eq!(srv_entries(&r, true)[0].addr, Some(ip("fd00::1")));
        assert_eq!(
            (srv_weight(0), srv_weight(1), srv_weight(256), srv_weight(257), srv_weight(65535)),
            (0, 1, 1, 2, 256)
        );
    }
}
