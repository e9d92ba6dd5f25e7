//! One DNS question put to the nameservers of a `resolvers` section: sent to all of
//! them at once (UDP, or TCP for `tcp@` ones, RFC 7766 framing), the first valid answer
//! wins; no answer within `timeout retry` sends again, `resolve_retries` times in all.
//! Each attempt uses a fresh socket (a new source port) and a random id, and an answer
//! is taken only when its id and question are ours: a spoofed, late or malformed
//! datagram is counted and ignored, never trusted.
//! HAProxy counterparts: `resolv_send_query()`, `resolv_process_responses()`,
//! `resolv_validate_dns_response()` (src/resolvers.c), dns.c's dgram and stream
//! sessions.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rampart_proto::dns::{decode_response, encode_query, message_id, DnsError, Rcode, Response};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};

use super::types::{bump, NsCounters};
use crate::proxy::Runtime;

/// Why a resolution failed; each has its own `hold` period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// NXDOMAIN (`hold nx`).
    Nx,
    /// REFUSED (`hold refused`).
    Refused,
    /// No answer in time (`hold timeout`).
    Timeout,
    /// Anything else: another error code, no record, truncated, invalid (`hold other`).
    Other,
}

impl Failure {
    /// How the maintenance it causes is reported (`srv_set_admin_flag()`'s causes).
    pub fn reason(self) -> &'static str {
        match self {
            Failure::Nx => "DNS NX status",
            Failure::Refused => "DNS refused status",
            Failure::Timeout => "DNS timeout status",
            Failure::Other => "unspecified DNS error",
        }
    }

    /// The more telling of two failures of the same question (an answer beats a
    /// silence).
    fn worst(self, other: Failure) -> Failure {
        let rank = |f: Failure| match f {
            Failure::Nx => 3,
            Failure::Refused => 2,
            Failure::Other => 1,
            Failure::Timeout => 0,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}

/// A valid answer and the nameserver (index) that gave it.
pub struct Answer {
    pub response: Response,
    pub ns: usize,
}

/// Asks `name` of type `qtype` to the nameservers of section `res` of `rt`.
pub async fn ask(rt: &Arc<Runtime>, res: usize, name: &str, qtype: u16) -> Result<Answer, Failure> {
    let conf = &rt.resolvers[res].conf;
    if conf.nameservers.is_empty() {
        return Err(Failure::Timeout);
    }
    let mut worst = Failure::Timeout;
    for _ in 0..conf.resolve_retries.max(1) {
        let id = random_id();
        let mut query = Vec::with_capacity(64);
        if encode_query(&mut query, id, name, qtype, conf.accepted_payload_size).is_err() {
            return Err(Failure::Other);
        }
        let query: Arc<[u8]> = query.into();
        let mut set = tokio::task::JoinSet::new();
        for ns in 0..conf.nameservers.len() {
            let (rt, query, name) = (rt.clone(), query.clone(), name.to_owned());
            set.spawn(async move { (ns, exchange(&rt, res, ns, &query, id, &name, qtype).await) });
        }
        while let Some(done) = set.join_next().await {
            match done {
                Ok((ns, Ok(response))) => {
                    set.abort_all();
                    return Ok(Answer { response, ns });
                }
                Ok((_, Err(f))) => worst = worst.worst(f),
                Err(_) => {}
            }
        }
        if worst != Failure::Timeout {
            return Err(worst);
        }
    }
    Err(worst)
}

/// One exchange with nameserver `ns`, within `timeout retry`.
async fn exchange(
    rt: &Runtime,
    res: usize,
    ns: usize,
    query: &[u8],
    id: u16,
    name: &str,
    qtype: u16,
) -> Result<Response, Failure> {
    let r = &rt.resolvers[res];
    let (server, counters) = (&r.conf.nameservers[ns], &r.counters[ns]);
    let bufsize = usize::from(r.conf.accepted_payload_size).max(512);
    let wanted = Wanted { id, name, qtype };
    let run = async {
        if server.tcp {
            over_tcp(server.addr, query, wanted, counters).await
        } else {
            over_udp(server.addr, query, bufsize, wanted, counters).await
        }
    };
    match tokio::time::timeout(r.conf.timeout_retry, run).await {
        Ok(result) => result,
        Err(_) => {
            bump(&counters.timeout);
            Err(Failure::Timeout)
        }
    }
}

/// What a response must answer.
#[derive(Clone, Copy)]
struct Wanted<'a> {
    id: u16,
    name: &'a str,
    qtype: u16,
}

async fn over_udp(
    to: SocketAddr,
    query: &[u8],
    bufsize: usize,
    wanted: Wanted<'_>,
    c: &NsCounters,
) -> Result<Response, Failure> {
    let local: SocketAddr =
        if to.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { (std::net::Ipv6Addr::UNSPECIFIED, 0).into() };
    let sock = UdpSocket::bind(local).await.map_err(|_| send_error(c))?;
    sock.connect(to).await.map_err(|_| send_error(c))?;
    sock.send(query).await.map_err(|_| send_error(c))?;
    bump(&c.sent);
    // one byte more than accepted tells an oversized datagram apart
    let mut buf = vec![0u8; bufsize + 1];
    loop {
        let Ok(n) = sock.recv(&mut buf).await else {
            // an ICMP unreachable (nothing listens there): no answer will come, and the
            // question is not sent again before `timeout retry`, as HAProxy
            bump(&c.snd_error);
            return std::future::pending().await;
        };
        if n > bufsize {
            bump(&c.too_big);
            continue;
        }
        if let Some(verdict) = judge(&buf[..n], wanted, c) {
            return verdict;
        }
    }
}

async fn over_tcp(to: SocketAddr, query: &[u8], wanted: Wanted<'_>, c: &NsCounters) -> Result<Response, Failure> {
    let mut conn = TcpStream::connect(to).await.map_err(|_| send_error(c))?;
    let mut framed = Vec::with_capacity(query.len() + 2);
    framed.extend_from_slice(&(query.len() as u16).to_be_bytes());
    framed.extend_from_slice(query);
    conn.write_all(&framed).await.map_err(|_| send_error(c))?;
    bump(&c.sent);
    loop {
        let len = conn.read_u16().await.map_err(|_| Failure::Timeout)?;
        let mut buf = vec![0u8; usize::from(len)];
        conn.read_exact(&mut buf).await.map_err(|_| Failure::Timeout)?;
        if let Some(verdict) = judge(&buf, wanted, c) {
            return verdict;
        }
    }
}

fn send_error(c: &NsCounters) -> Failure {
    bump(&c.snd_error);
    Failure::Timeout
}

/// The verdict on one message: `None` when it is not the answer to our question (a
/// late or spoofed one: counted, and the wait goes on).
fn judge(msg: &[u8], w: Wanted<'_>, c: &NsCounters) -> Option<Result<Response, Failure>> {
    if message_id(msg) != Some(w.id) {
        bump(&c.outdated);
        return None;
    }
    let r = match decode_response(msg) {
        Ok(r) => r,
        Err(DnsError::TooManyRecords) => {
            bump(&c.too_big);
            return Some(Err(Failure::Other));
        }
        Err(_) => {
            bump(&c.invalid);
            return None;
        }
    };
    if !r.qname.eq_ignore_ascii_case(w.name.trim_end_matches('.')) || r.qtype != w.qtype {
        bump(&c.invalid);
        return None;
    }
    let (counter, verdict) = match r.rcode {
        _ if r.truncated => (&c.truncated, Err(Failure::Other)),
        Rcode::NxDomain => (&c.nx, Err(Failure::Nx)),
        Rcode::Refused => (&c.refused, Err(Failure::Refused)),
        Rcode::Other(_) => (&c.other, Err(Failure::Other)),
        Rcode::NoError if r.answers.is_empty() => (&c.any_err, Err(Failure::Other)),
        Rcode::NoError => (&c.valid, Ok(r)),
    };
    bump(counter);
    Some(verdict)
}

/// A query id nobody can guess (the source port is random too).
fn random_id() -> u16 {
    let mut b = [0u8; 2];
    if aws_lc_rs::rand::fill(&mut b).is_err() {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or(Duration::ZERO);
        return t.subsec_nanos() as u16;
    }
    u16::from_be_bytes(b)
}
