//! DNS messages as a resolver sends and reads them (RFC 1035, SRV of RFC 2782, the EDNS0
//! OPT record of RFC 6891): one query out, one response in, checked and bounded.
//! HAProxy counterpart: `resolv_build_query()`, `resolv_validate_dns_response()` and
//! `resolv_read_name()` (src/resolvers.c).
//!
//! A response is read as untrusted bytes: every length is checked against the buffer,
//! a compression pointer must point before the name that holds it (no loops), names
//! stay under 255 bytes and a response under [`MAX_RECORDS`] records; anything else is
//! a [`DnsError`], never a panic.
//!
//! - `name`: domain names in wire form (labels, compression pointers)

mod name;
#[cfg(test)]
mod tests;

use std::net::{Ipv4Addr, Ipv6Addr};

pub use name::{read_name, write_name, NameError};

/// Type A: an IPv4 address.
pub const TYPE_A: u16 = 1;
/// Type CNAME: an alias.
pub const TYPE_CNAME: u16 = 5;
/// Type AAAA: an IPv6 address.
pub const TYPE_AAAA: u16 = 28;
/// Type SRV: a service's target, port, priority and weight.
pub const TYPE_SRV: u16 = 33;
/// Type OPT: the EDNS0 pseudo-record announcing the payload size we accept.
pub const TYPE_OPT: u16 = 41;
/// The header of every message.
pub const HEADER_LEN: usize = 12;
/// Records read from one response at most (answers and additional ones together); a
/// response announcing more is refused.
pub const MAX_RECORDS: usize = 512;

/// The response codes a resolver tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rcode {
    NoError,
    /// NXDOMAIN: the name does not exist.
    NxDomain,
    /// REFUSED.
    Refused,
    /// Any other code (SERVFAIL, FORMERR ...).
    Other(u8),
}

impl Rcode {
    fn from_u8(v: u8) -> Rcode {
        match v {
            0 => Rcode::NoError,
            3 => Rcode::NxDomain,
            5 => Rcode::Refused,
            n => Rcode::Other(n),
        }
    }
}

/// The data of one record, for the types a resolver uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RData {
    A(Ipv4Addr),
    Aaaa(Ipv6Addr),
    Cname(String),
    Srv {
        priority: u16,
        weight: u16,
        port: u16,
        target: String,
    },
    /// A type we do not read (its bytes are skipped).
    Other(u16),
}

/// One resource record; names are lower case, without the final dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub name: String,
    pub ttl: u32,
    pub data: RData,
}

/// A decoded response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub id: u16,
    pub rcode: Rcode,
    /// TC: the server cut the response to fit (retry over TCP or with a larger payload).
    pub truncated: bool,
    /// The question, as the server echoed it.
    pub qname: String,
    pub qtype: u16,
    pub answers: Vec<Record>,
    pub additional: Vec<Record>,
}

/// Why a response was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DnsError {
    /// Shorter than its header or one of its records says.
    Truncated,
    /// Not a response (QR unset), not one question, or a bad section.
    Invalid(&'static str),
    /// A name that does not read (pointer loop, label too long ...).
    Name(NameError),
    /// More records than [`MAX_RECORDS`].
    TooManyRecords,
}

impl From<NameError> for DnsError {
    fn from(e: NameError) -> Self {
        match e {
            NameError::Truncated => DnsError::Truncated,
            e => DnsError::Name(e),
        }
    }
}

/// Appends the query for `name` (no final dot needed) of type `qtype` with id `id`,
/// recursion desired, and an OPT record announcing `payload` bytes when it is above
/// 512 (the size any server assumes).
pub fn encode_query(out: &mut Vec<u8>, id: u16, name: &str, qtype: u16, payload: u16) -> Result<(), NameError> {
    let edns = payload > 512;
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&[0x01, 0x00]); // RD
    out.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, u8::from(edns)]);
    write_name(out, name)?;
    out.extend_from_slice(&qtype.to_be_bytes());
    out.extend_from_slice(&[0, 1]); // class IN
    if edns {
        out.push(0); // root name
        out.extend_from_slice(&TYPE_OPT.to_be_bytes());
        out.extend_from_slice(&payload.to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0, 0, 0]); // ext rcode, version, flags, rdlen
    }
    Ok(())
}

/// The id of a message (`None` when shorter than two bytes).
pub fn message_id(buf: &[u8]) -> Option<u16> {
    Some(u16::from_be_bytes([*buf.first()?, *buf.get(1)?]))
}

/// Reads a whole response. Records of the authority section are skipped; those of the
/// answer and additional sections are kept.
pub fn decode_response(buf: &[u8]) -> Result<Response, DnsError> {
    if buf.len() < HEADER_LEN {
        return Err(DnsError::Truncated);
    }
    let word = |i: usize| u16::from_be_bytes([buf[i], buf[i + 1]]);
    let (id, flags) = (word(0), word(2));
    if flags & 0x8000 == 0 {
        return Err(DnsError::Invalid("not a response"));
    }
    let (qd, an, ns, ar) = (word(4), word(6), word(8), word(10));
    if qd != 1 {
        return Err(DnsError::Invalid("not one question"));
    }
    if usize::from(an) + usize::from(ns) + usize::from(ar) > MAX_RECORDS {
        return Err(DnsError::TooManyRecords);
    }
    let mut at = HEADER_LEN;
    let qname = read_name(buf, &mut at)?;
    let qtype = read_u16(buf, &mut at)?;
    read_u16(buf, &mut at)?; // class
    let mut answers = Vec::with_capacity(usize::from(an).min(64));
    for _ in 0..an {
        answers.push(read_record(buf, &mut at)?);
    }
    for _ in 0..ns {
        read_record(buf, &mut at)?;
    }
    let mut additional = Vec::new();
    for _ in 0..ar {
        let r = read_record(buf, &mut at)?;
        if !matches!(r.data, RData::Other(TYPE_OPT)) {
            additional.push(r);
        }
    }
    Ok(Response {
        id,
        rcode: Rcode::from_u8((flags & 0x000f) as u8),
        truncated: flags & 0x0200 != 0,
        qname,
        qtype,
        answers,
        additional,
    })
}

fn read_u16(buf: &[u8], at: &mut usize) -> Result<u16, DnsError> {
    let b = buf.get(*at..*at + 2).ok_or(DnsError::Truncated)?;
    *at += 2;
    Ok(u16::from_be_bytes([b[0], b[1]]))
}

fn read_u32(buf: &[u8], at: &mut usize) -> Result<u32, DnsError> {
    let b = buf.get(*at..*at + 4).ok_or(DnsError::Truncated)?;
    *at += 4;
    Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// One record at `at` (moved past it).
fn read_record(buf: &[u8], at: &mut usize) -> Result<Record, DnsError> {
    let name = read_name(buf, at)?;
    let rtype = read_u16(buf, at)?;
    read_u16(buf, at)?; // class
    let ttl = read_u32(buf, at)?;
    let len = usize::from(read_u16(buf, at)?);
    let start = *at;
    let rdata = buf.get(start..start + len).ok_or(DnsError::Truncated)?;
    *at = start + len;
    let data = match rtype {
        TYPE_A => RData::A(Ipv4Addr::from(<[u8; 4]>::try_from(rdata).map_err(|_| DnsError::Invalid("A length"))?)),
        TYPE_AAAA => {
            RData::Aaaa(Ipv6Addr::from(<[u8; 16]>::try_from(rdata).map_err(|_| DnsError::Invalid("AAAA length"))?))
        }
        TYPE_CNAME => RData::Cname(read_inner_name(buf, start, len)?),
        TYPE_SRV => read_srv(buf, start, len)?,
        other => RData::Other(other),
    };
    Ok(Record { name, ttl, data })
}

/// A name inside record data, which must end within the record.
fn read_inner_name(buf: &[u8], start: usize, len: usize) -> Result<String, DnsError> {
    let mut at = start;
    let name = read_name(&buf[..start + len], &mut at)?;
    if at != start + len {
        return Err(DnsError::Invalid("record data length"));
    }
    Ok(name)
}

fn read_srv(buf: &[u8], start: usize, len: usize) -> Result<RData, DnsError> {
    if len < 7 {
        return Err(DnsError::Invalid("SRV length"));
    }
    let mut at = start;
    let (priority, weight, port) = (read_u16(buf, &mut at)?, read_u16(buf, &mut at)?, read_u16(buf, &mut at)?);
    let target = read_inner_name(buf, at, len - 6)?;
    Ok(RData::Srv { priority, weight, port, target })
}
