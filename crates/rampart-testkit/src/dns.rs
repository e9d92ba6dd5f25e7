//! A scripted DNS server on loopback for the resolver tests that need answers a real
//! server never gives (the others run against Debian's dnsmasq, [`crate::Dnsmasq`]):
//! UDP and TCP (RFC 7766 framing) on the same port, answering from a zone the test changes at run time (A,
//! AAAA, SRV with or without additional records, CNAMEs, NXDOMAIN or another response
//! code, answers spoiled on purpose), counting the queries. Its
//! wire code is its own, independent of rampart's, so a shared misreading cannot hide.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const TYPE_A: u16 = 1;
const TYPE_CNAME: u16 = 5;
const TYPE_AAAA: u16 = 28;
const TYPE_SRV: u16 = 33;

/// One SRV record: priority, weight, port, target.
pub type Srv = (u16, u16, u16, &'static str);

#[derive(Default)]
struct Zone {
    /// (name, type) -> record data in wire form.
    records: HashMap<(String, u16), Vec<Vec<u8>>>,
    /// Names answered with NXDOMAIN.
    nx: Vec<String>,
    /// SRV names whose answers carry their targets' A records.
    additional: Vec<String>,
    /// Names never answered (a server gone silent).
    silent: Vec<String>,
    /// Names answered with this response code (REFUSED, SERVFAIL ...).
    rcode: HashMap<String, u8>,
    /// Names whose answers are spoiled this way.
    flaws: HashMap<String, DnsFlaw>,
    /// Names that are a CNAME of another: the answer is the CNAME, then the target's
    /// records of the asked type.
    cnames: HashMap<String, String>,
    /// Queries received, by name asked (lower case).
    asked: HashMap<String, usize>,
}

impl Zone {
    /// Counts query `q` under its name, then answers it.
    fn count_and_answer(&mut self, q: &[u8]) -> Option<Vec<u8>> {
        if let Some((name, _, _)) = question(q) {
            *self.asked.entry(name).or_default() += 1;
        }
        answer(q, self)
    }
}

/// How an answer is spoiled on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DnsFlaw {
    /// Another query id (a late or spoofed answer).
    WrongId,
    /// Another question echoed.
    WrongName,
    /// The TC bit set.
    Truncated,
    /// Padded past 4096 bytes (more than a resolver's `accepted_payload_size`).
    Oversized,
}

/// The server; its threads live as long as the test process.
pub struct DnsServer {
    addr: SocketAddr,
    zone: Arc<Mutex<Zone>>,
    queries: Arc<AtomicUsize>,
}

impl DnsServer {
    /// Binds UDP and TCP on one loopback port and starts answering.
    pub fn start() -> DnsServer {
        let (udp, tcp) = loop {
            let udp = UdpSocket::bind("127.0.0.1:0").expect("udp bind");
            if let Ok(tcp) = TcpListener::bind(udp.local_addr().expect("addr")) {
                break (udp, tcp);
            }
        };
        let server = DnsServer { addr: udp.local_addr().expect("addr"), zone: Arc::default(), queries: Arc::default() };
        let (zone, queries) = (server.zone.clone(), server.queries.clone());
        std::thread::spawn(move || serve_udp(udp, &zone, &queries));
        let (zone, queries) = (server.zone.clone(), server.queries.clone());
        std::thread::spawn(move || serve_tcp(tcp, zone, queries));
        server
    }

    /// Where it listens (UDP and TCP).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queries received so far.
    pub fn queries(&self) -> usize {
        self.queries.load(Ordering::Relaxed)
    }

    /// Queries received so far for `name` (any type).
    pub fn queries_for(&self, name: &str) -> usize {
        self.zone().asked.get(&name.to_ascii_lowercase()).copied().unwrap_or(0)
    }

    fn zone(&self) -> std::sync::MutexGuard<'_, Zone> {
        self.zone.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `name` resolves to these IPv4 addresses (none: no A record).
    pub fn set_a(&self, name: &str, ips: &[Ipv4Addr]) {
        let data = ips.iter().map(|ip| ip.octets().to_vec()).collect();
        self.set(name, TYPE_A, data);
    }

    /// `name` resolves to these IPv6 addresses.
    pub fn set_aaaa(&self, name: &str, ips: &[Ipv6Addr]) {
        let data = ips.iter().map(|ip| ip.octets().to_vec()).collect();
        self.set(name, TYPE_AAAA, data);
    }

    /// The SRV records of `name`; `additional`: answers carry the targets' A records.
    pub fn set_srv(&self, name: &str, records: &[Srv], additional: bool) {
        let data = records
            .iter()
            .map(|(prio, weight, port, target)| {
                let mut d = Vec::new();
                for v in [prio, weight, port] {
                    d.extend_from_slice(&v.to_be_bytes());
                }
                d.extend(wire_name(target));
                d
            })
            .collect();
        self.set(name, TYPE_SRV, data);
        let mut z = self.zone();
        z.additional.retain(|n| n != name);
        if additional {
            z.additional.push(name.to_owned());
        }
    }

    /// `name` answers NXDOMAIN (`false`: as its records say again).
    pub fn set_nx(&self, name: &str, nx: bool) {
        let mut z = self.zone();
        z.nx.retain(|n| n != name);
        if nx {
            z.nx.push(name.to_owned());
        }
    }

    /// Questions about `name` get no answer at all (`false`: answered again).
    pub fn set_silent(&self, name: &str, silent: bool) {
        let mut z = self.zone();
        z.silent.retain(|n| n != name);
        if silent {
            z.silent.push(name.to_owned());
        }
    }

    /// `name` is answered with response code `rcode` (`None`: as its records say).
    pub fn set_rcode(&self, name: &str, rcode: Option<u8>) {
        let mut z = self.zone();
        match rcode {
            Some(c) => z.rcode.insert(name.to_owned(), c),
            None => z.rcode.remove(name),
        };
    }

    /// Answers about `name` are spoiled with `flaw` (`None`: sound again).
    pub fn set_flaw(&self, name: &str, flaw: Option<DnsFlaw>) {
        let mut z = self.zone();
        match flaw {
            Some(f) => z.flaws.insert(name.to_owned(), f),
            None => z.flaws.remove(name),
        };
    }

    /// `name` is a CNAME of `target`.
    pub fn set_cname(&self, name: &str, target: &str) {
        self.zone().cnames.insert(name.to_owned(), target.to_owned());
    }

    fn set(&self, name: &str, rtype: u16, data: Vec<Vec<u8>>) {
        self.zone().records.insert((name.to_ascii_lowercase(), rtype), data);
    }
}

fn serve_udp(sock: UdpSocket, zone: &Mutex<Zone>, queries: &AtomicUsize) {
    let mut buf = [0u8; 4096];
    while let Ok((n, from)) = sock.recv_from(&mut buf) {
        queries.fetch_add(1, Ordering::Relaxed);
        if let Some(reply) = zone.lock().unwrap_or_else(|e| e.into_inner()).count_and_answer(&buf[..n]) {
            let _ = sock.send_to(&reply, from);
        }
    }
}

fn serve_tcp(listener: TcpListener, zone: Arc<Mutex<Zone>>, queries: Arc<AtomicUsize>) {
    for conn in listener.incoming().flatten() {
        let (zone, queries) = (zone.clone(), queries.clone());
        std::thread::spawn(move || {
            let mut conn = conn;
            let mut len = [0u8; 2];
            while conn.read_exact(&mut len).is_ok() {
                let mut q = vec![0u8; usize::from(u16::from_be_bytes(len))];
                if conn.read_exact(&mut q).is_err() {
                    return;
                }
                queries.fetch_add(1, Ordering::Relaxed);
                let reply = zone.lock().unwrap_or_else(|e| e.into_inner()).count_and_answer(&q);
                if let Some(reply) = reply {
                    let mut out = (reply.len() as u16).to_be_bytes().to_vec();
                    out.extend(reply);
                    if conn.write_all(&out).is_err() {
                        return;
                    }
                }
            }
        });
    }
}

fn wire_name(name: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for label in name.trim_end_matches('.').split('.').filter(|l| !l.is_empty()) {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
    out
}

/// The question of a query: (name, type, bytes of the question section).
fn question(q: &[u8]) -> Option<(String, u16, &[u8])> {
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let len = usize::from(*q.get(at)?);
        at += 1;
        if len == 0 {
            break;
        }
        labels.push(String::from_utf8_lossy(q.get(at..at + len)?).to_ascii_lowercase());
        at += len;
    }
    let qtype = u16::from_be_bytes([*q.get(at)?, *q.get(at + 1)?]);
    Some((labels.join("."), qtype, q.get(12..at + 4)?))
}

fn record(out: &mut Vec<u8>, name: &str, rtype: u16, data: &[u8]) {
    out.extend(wire_name(name));
    out.extend_from_slice(&rtype.to_be_bytes());
    out.extend_from_slice(&[0, 1, 0, 0, 0, 5]);
    out.extend_from_slice(&(data.len() as u16).to_be_bytes());
    out.extend_from_slice(data);
}

/// The reply to query `q` from `zone`, `None` to stay silent.
fn answer(q: &[u8], zone: &Zone) -> Option<Vec<u8>> {
    let (name, qtype, qsection) = question(q)?;
    if zone.silent.contains(&name) {
        return None;
    }
    let rcode = if zone.nx.contains(&name) { 3 } else { zone.rcode.get(&name).copied().unwrap_or(0) };
    let empty = Vec::new();
    let mut answers: Vec<(String, u16, Vec<u8>)> = Vec::new();
    if rcode == 0 {
        let mut owner = name.clone();
        if let Some(target) = zone.cnames.get(&name) {
            answers.push((name.clone(), TYPE_CNAME, wire_name(target)));
            owner = target.clone();
        }
        for d in zone.records.get(&(owner.clone(), qtype)).unwrap_or(&empty) {
            answers.push((owner.clone(), qtype, d.clone()));
        }
    }
    let mut additional = Vec::new();
    if qtype == TYPE_SRV && zone.additional.contains(&name) {
        for (_, _, d) in answers.iter().filter(|a| a.1 == TYPE_SRV) {
            let target = srv_target(&d[6..]);
            for a in zone.records.get(&(target.clone(), TYPE_A)).unwrap_or(&empty) {
                additional.push((target.clone(), a.clone()));
            }
        }
    }
    let flaw = zone.flaws.get(&name).copied();
    let mut out = q[..2].to_vec();
    if flaw == Some(DnsFlaw::WrongId) {
        out[1] ^= 0x55;
    }
    let tc = if flaw == Some(DnsFlaw::Truncated) { 0x02 } else { 0 };
    out.extend_from_slice(&[0x81 | tc, 0x80 | rcode]);
    out.extend_from_slice(&[0, 1]);
    out.extend_from_slice(&(answers.len() as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&(additional.len() as u16).to_be_bytes());
    if flaw == Some(DnsFlaw::WrongName) {
        out.extend(wire_name(&format!("x{name}")));
        out.extend_from_slice(&qsection[qsection.len() - 4..]);
    } else {
        out.extend_from_slice(qsection);
    }
    for (owner, rtype, d) in &answers {
        record(&mut out, owner, *rtype, d);
    }
    for (target, a) in &additional {
        record(&mut out, target, TYPE_A, a);
    }
    if flaw == Some(DnsFlaw::Oversized) {
        out.resize(4500, 0);
    }
    Some(out)
}

fn srv_target(wire: &[u8]) -> String {
    let mut labels = Vec::new();
    let mut at = 0;
    while let Some(&len) = wire.get(at) {
        if len == 0 {
            break;
        }
        labels.push(String::from_utf8_lossy(&wire[at + 1..at + 1 + usize::from(len)]).to_ascii_lowercase());
        at += 1 + usize::from(len);
    }
    labels.join(".")
}
