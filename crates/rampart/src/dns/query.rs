//! One DNS question put to the nameservers of a `resolvers` section: sent to all of
//! them at once (UDP, or TCP for `tcp@` ones, RFC 7766 framing), the first valid answer
//! wins; an error answer falls back to the other address family; no answer within
//! `timeout retry`, or errors only, asks again, `resolve_retries` attempts in all.
//! UDP questions share their nameserver's socket (`types::udp`, one source port per
//! nameserver as HAProxy's) and each takes a random id no other waiting question has;
//! a TCP question opens its own connection. An answer is taken only when its id and
//! question are ours: a late or spoofed datagram (another id) is counted and ignored;
//! one with our id that is malformed, about another question or an error ends that
//! nameserver's attempt, counted as HAProxy 2.6 counts it.
//! HAProxy counterparts: `resolv_send_query()`, `resolv_process_responses()`,
//! `resolv_validate_dns_response()` (src/resolvers.c), dns.c's dgram and stream
//! sessions.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rampart_proto::dns::{decode_response, encode_query, message_id, RData, Response, TYPE_A, TYPE_AAAA, TYPE_SRV};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

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

/// Asks `name` of the nameservers of section `res` of `rt`: of the first type of
/// `qtypes`, of the next one when an answer says no (as HAProxy falls back from A to
/// AAAA or the opposite). An attempt that gets no answer within `timeout retry`, or
/// only refusals, is made again from the first type (after `timeout retry`), up to
/// `resolve_retries` attempts in all, as HAProxy's `try` counter.
pub async fn ask(rt: &Arc<Runtime>, res: usize, name: &str, qtypes: &[u16]) -> Result<Answer, Failure> {
    let conf = &rt.resolvers[res].conf;
    if conf.nameservers.is_empty() {
        return Err(Failure::Timeout);
    }
    let mut worst = Failure::Timeout;
    for _ in 0..conf.resolve_retries.max(1) {
        let started = tokio::time::Instant::now();
        for &qtype in qtypes {
            match ask_once(rt, res, name, qtype).await {
                Ok(a) => return Ok(a),
                // silence: the next attempt asks the first type again
                Err(Failure::Timeout) => break,
                Err(f) => worst = worst.worst(f),
            }
        }
        tokio::time::sleep_until(started + conf.timeout_retry).await;
    }
    Err(worst)
}

/// One question to every nameserver of the section at once: the first valid answer, or
/// the most telling failure.
async fn ask_once(rt: &Arc<Runtime>, res: usize, name: &str, qtype: u16) -> Result<Answer, Failure> {
    let conf = &rt.resolvers[res].conf;
    let id = random_id();
    let mut query = Vec::with_capacity(64);
    if encode_query(&mut query, id, name, qtype, conf.accepted_payload_size).is_err() {
        return Err(Failure::Other);
    }
    if conf.nameservers.len() == 1 {
        // the common case, without a task
        return exchange(rt, res, 0, &query, id, name, qtype).await.map(|response| Answer { response, ns: 0 });
    }
    let query: Arc<[u8]> = query.into();
    let mut set = tokio::task::JoinSet::new();
    for ns in 0..conf.nameservers.len() {
        let (rt, query, name) = (rt.clone(), query.clone(), name.to_owned());
        set.spawn(async move { (ns, exchange(&rt, res, ns, &query, id, &name, qtype).await) });
    }
    let mut worst = Failure::Timeout;
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
    Err(worst)
}

/// One exchange with nameserver `ns`, within `timeout retry`.
async fn exchange(
    rt: &Arc<Runtime>,
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
            let socket = &r.udp[ns];
            let mut q =
                socket.ask(server.addr, bufsize, counters, query, random_id).map_err(|_| send_error(counters))?;
            bump(&counters.sent);
            let Some(msg) = q.answer().await else { return std::future::pending().await };
            judge_ours(&msg, Wanted { id: q.id(), ..wanted }, counters)
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

/// The verdict on one message: `None` when it is not the answer to our question (too
/// short to carry an id, or a late or spoofed one: counted, and the wait goes on).
fn judge(msg: &[u8], w: Wanted<'_>, c: &NsCounters) -> Option<Result<Response, Failure>> {
    let Some(id) = message_id(msg) else {
        bump(&c.invalid);
        return None;
    };
    if id != w.id {
        bump(&c.outdated);
        return None;
    }
    Some(judge_ours(msg, w, c))
}

/// The verdict on a message carrying our id, counted.
fn judge_ours(msg: &[u8], w: Wanted<'_>, c: &NsCounters) -> Result<Response, Failure> {
    let verdict = classify(msg, w);
    let (counter, result) = match verdict {
        Verdict::Valid(r) => (&c.valid, Ok(r)),
        Verdict::Nx => (&c.nx, Err(Failure::Nx)),
        Verdict::Refused => (&c.refused, Err(Failure::Refused)),
        Verdict::Other => (&c.other, Err(Failure::Other)),
        Verdict::NoAnswer => (&c.any_err, Err(Failure::Other)),
        Verdict::Invalid => (&c.invalid, Err(Failure::Other)),
        Verdict::Truncated => (&c.truncated, Err(Failure::Other)),
        Verdict::CnameError => (&c.cname_error, Err(Failure::Other)),
        Verdict::NoRecord => (&c.other, Err(Failure::Other)),
    };
    bump(counter);
    result
}

/// What an answer carrying our id says, each with its counter.
#[derive(Debug)]
enum Verdict {
    Valid(Response),
    /// NXDOMAIN (`nx`).
    Nx,
    /// REFUSED (`refused`).
    Refused,
    /// Another error code (`other`).
    Other,
    /// No answer record (`any_err`).
    NoAnswer,
    /// Malformed, too many records, or not our question (`invalid`).
    Invalid,
    /// TC set on an A/AAAA answer (`truncated`); a truncated SRV answer is read as it is.
    Truncated,
    /// An A/AAAA answer ending on a CNAME, or a chain too long (`cname_error`).
    CnameError,
    /// An A/AAAA answer without an address for the name (`other`).
    NoRecord,
}

/// Judges a message in the order HAProxy 2.6's `resolv_validate_dns_response()` does:
/// the response code first, then the answer count, then the question, then truncation,
/// then (A/AAAA) whether the name, through its CNAMEs, has an address.
fn classify(msg: &[u8], w: Wanted<'_>) -> Verdict {
    let rcode = msg.get(3).map(|b| b & 0x0f);
    match rcode {
        Some(0) => {}
        Some(3) => return Verdict::Nx,
        Some(5) => return Verdict::Refused,
        Some(_) => return Verdict::Other,
        None => return Verdict::Invalid,
    }
    let Ok(r) = decode_response(msg) else { return Verdict::Invalid };
    if r.answers.is_empty() {
        return Verdict::NoAnswer;
    }
    if !r.qname.eq_ignore_ascii_case(w.name.trim_end_matches('.')) || r.qtype != w.qtype {
        return Verdict::Invalid;
    }
    if r.truncated && r.qtype != TYPE_SRV {
        return Verdict::Truncated;
    }
    if r.qtype == TYPE_A || r.qtype == TYPE_AAAA {
        let ends_on_cname = matches!(r.answers.last().map(|a| &a.data), Some(RData::Cname(_)));
        match super::pick::addresses(&r) {
            Some(ips) if !ips.is_empty() => {}
            Some(_) if !ends_on_cname => return Verdict::NoRecord,
            _ => return Verdict::CnameError,
        }
    }
    Verdict::Valid(r)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A response with id 7 to `name`/`qtype`: flags, answer records of type A.
    fn msg(flags: u16, name: &str, qtype: u16, answers: usize) -> Vec<u8> {
        let mut q = Vec::new();
        encode_query(&mut q, 7, name, qtype, 512).unwrap();
        let qlen = 12 + name.len() + 2 + 4;
        let mut m = q[..qlen].to_vec();
        m[2..4].copy_from_slice(&(flags | 0x8000).to_be_bytes());
        m[6..8].copy_from_slice(&(answers as u16).to_be_bytes());
        m[10..12].copy_from_slice(&[0, 0]);
        for _ in 0..answers {
            m.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4, 10, 0, 0, 1]);
        }
        m
    }

    fn judge_of(m: &[u8], qtype: u16) -> &'static str {
        match classify(m, Wanted { id: 7, name: "a.test", qtype }) {
            Verdict::Valid(_) => "valid",
            Verdict::Nx => "nx",
            Verdict::Refused => "refused",
            Verdict::Other => "other",
            Verdict::NoAnswer => "any_err",
            Verdict::Invalid => "invalid",
            Verdict::Truncated => "truncated",
            Verdict::CnameError => "cname_error",
            Verdict::NoRecord => "other",
        }
    }

    #[test]
    fn answers_are_judged_in_haproxys_order() {
        assert_eq!(judge_of(&msg(0, "a.test", 1, 1), 1), "valid");
        assert_eq!(judge_of(&msg(3, "a.test", 1, 0), 1), "nx");
        // the code comes before the question, as HAProxy reads them
        assert_eq!(judge_of(&msg(3, "b.test", 1, 0), 1), "nx");
        assert_eq!(judge_of(&msg(5, "a.test", 1, 0), 1), "refused");
        assert_eq!(judge_of(&msg(2, "a.test", 1, 0), 1), "other");
        assert_eq!(judge_of(&msg(0, "a.test", 1, 0), 1), "any_err");
        assert_eq!(judge_of(&msg(0, "b.test", 1, 1), 1), "invalid");
        assert_eq!(judge_of(&msg(0, "a.test", 28, 1), 1), "invalid");
        assert_eq!(judge_of(&msg(0x0200, "a.test", 1, 1), 1), "truncated");
        let mut cut = msg(0, "a.test", 1, 1);
        cut.truncate(cut.len() - 2);
        assert_eq!(judge_of(&cut, 1), "invalid");
        assert_eq!(judge_of(&[0, 7, 0x80], 1), "invalid");
        // an answer of another name: no address for ours
        let mut other = msg(0, "a.test", 1, 0);
        other[7] = 1;
        other.extend_from_slice(&[1, b'z', 0, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4, 10, 0, 0, 1]);
        assert_eq!(judge_of(&other, 1), "other");
        // a CNAME and nothing after it
        let mut cname = msg(0, "a.test", 1, 0);
        cname[7] = 1;
        cname.extend_from_slice(&[0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 5, 0, 3, 1, b'b', 0]);
        assert_eq!(judge_of(&cname, 1), "cname_error");
    }

    #[test]
    fn other_ids_and_runts_are_counted_and_waited_past() {
        let c = NsCounters::default();
        let w = Wanted { id: 7, name: "a.test", qtype: 1 };
        let mut m = msg(0, "a.test", 1, 1);
        m[1] = 8;
        assert!(judge(&m, w, &c).is_none());
        assert!(judge(&[0], w, &c).is_none());
        assert!(matches!(judge(&msg(3, "a.test", 1, 0), w, &c), Some(Err(Failure::Nx))));
        assert!(matches!(judge(&msg(0, "a.test", 1, 1), w, &c), Some(Ok(_))));
        let rows = c.rows();
        let get = |n: &str| rows.iter().find(|r| r.0 == n).unwrap().1;
        assert_eq!((get("outdated"), get("invalid"), get("nx"), get("valid")), (1, 1, 1, 1));
    }
}
