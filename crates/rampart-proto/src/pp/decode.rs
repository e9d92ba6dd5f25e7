//! Decoding a PROXY header from the first bytes of a connection.
//!
//! HAProxy counterpart: `conn_recv_proxy()` in `src/connection.c`. HAProxy peeks once
//! and fails a header that is not whole in that peek; here a partial header is
//! [`Decoded::Incomplete`] and the caller keeps reading, bounded by `timeout client`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::{
    tlv, Addresses, Command, Decoded, Header, PpError, Tlv, Version, AUTHORITY_MAX, UNIQUE_ID_MAX, UNIX_ADDR_LEN,
    V1_MAX_LEN, V2_HEADER_LEN, V2_MAX_LEN, V2_SIGNATURE,
};

const V1_PREFIX: &[u8] = b"PROXY ";

/// Decodes a v1 or v2 header at the start of `buf`.
///
/// `Incomplete` only while every byte so far can still start a valid header, so a
/// caller that gets it on a full buffer of at least [`V2_MAX_LEN`] bytes has a bug.
pub fn decode(buf: &[u8]) -> Decoded {
    let n = buf.len().min(V1_PREFIX.len());
    if buf[..n] == V1_PREFIX[..n] {
        return if buf.len() < V1_PREFIX.len() { Decoded::Incomplete } else { decode_v1(buf) };
    }
    let n = buf.len().min(V2_SIGNATURE.len());
    if buf[..n] != V2_SIGNATURE[..n] {
        return Decoded::Invalid(PpError::NotHeader);
    }
    decode_v2(buf)
}

fn done(r: Result<(Header, usize), PpError>) -> Decoded {
    match r {
        Ok((h, n)) => Decoded::Done(h, n),
        Err(e) => Decoded::Invalid(e),
    }
}

// === v1 ===

/// "PROXY <proto> ...\r\n" within [`V1_MAX_LEN`] bytes.
fn decode_v1(buf: &[u8]) -> Decoded {
    let window = &buf[..buf.len().min(V1_MAX_LEN)];
    let Some(lf) = memchr::memchr(b'\n', window) else {
        if let Some(e) = v1_early_error(window) {
            return Decoded::Invalid(e);
        }
        return if buf.len() >= V1_MAX_LEN {
            Decoded::Invalid(PpError::BadHeader("v1 line longer than 107 bytes"))
        } else {
            Decoded::Incomplete
        };
    };
    let Some(line) = window[..lf].strip_suffix(b"\r") else {
        return Decoded::Invalid(PpError::BadHeader("v1 line not ended by CRLF"));
    };
    done(
        parse_v1_line(&line[V1_PREFIX.len()..])
            .map(|addrs| (Header { version: Version::V1, command: Command::Proxy, addrs, tlvs: Vec::new() }, lf + 1)),
    )
}

/// Refuses an unfinished line early when its protocol word is already wrong or a CR
/// appears anywhere but right before the LF.
fn v1_early_error(window: &[u8]) -> Option<PpError> {
    let rest = &window[V1_PREFIX.len()..];
    let cr = memchr::memchr(b'\r', rest);
    if cr.is_some_and(|i| i + 1 < rest.len()) {
        return Some(PpError::BadHeader("v1 line not ended by CRLF"));
    }
    let word = rest.split(|&b| b == b' ' || b == b'\r').next().unwrap_or(rest);
    let complete = word.len() < rest.len();
    let known: [&[u8]; 3] = [b"TCP4", b"TCP6", b"UNKNOWN"];
    let fits = known.iter().any(|k| if complete { *k == word } else { k.starts_with(word) });
    (!fits).then_some(PpError::BadProto)
}

/// The part after "PROXY " and before "\r\n".
fn parse_v1_line(line: &[u8]) -> Result<Addresses, PpError> {
    let (proto, rest) = match memchr::memchr(b' ', line) {
        Some(i) => (&line[..i], Some(&line[i + 1..])),
        None => (line, None),
    };
    match (proto, rest) {
        // COMPAT: proxy-protocol.txt §2.1 lets UNKNOWN carry addresses to be ignored;
        // HAProxy 2.6 only accepts a bare "PROXY UNKNOWN\r\n". We follow the spec.
        (b"UNKNOWN", _) => Ok(Addresses::Unspec),
        (b"TCP4", Some(rest)) => parse_v1_addrs(rest, false),
        (b"TCP6", Some(rest)) => parse_v1_addrs(rest, true),
        (b"TCP4" | b"TCP6", None) => Err(PpError::BadHeader("v1 line without addresses")),
        _ => Err(PpError::BadProto),
    }
}

/// "<src> <dst> <sport> <dport>", single spaces.
fn parse_v1_addrs(rest: &[u8], v6: bool) -> Result<Addresses, PpError> {
    let mut it = rest.split(|&b| b == b' ');
    let mut field = || it.next().ok_or(PpError::BadHeader("v1 line with too few fields"));
    let (src, dst, sport, dport) = (field()?, field()?, field()?, field()?);
    if it.next().is_some() {
        return Err(PpError::BadHeader("v1 line with too many fields"));
    }
    let (src, dst) = (v1_ip(src, v6)?, v1_ip(dst, v6)?);
    let (sport, dport) = (v1_port(sport)?, v1_port(dport)?);
    Ok(Addresses::Inet { src: SocketAddr::new(src, sport), dst: SocketAddr::new(dst, dport), dgram: false })
}

fn v1_ip(s: &[u8], v6: bool) -> Result<IpAddr, PpError> {
    let s = std::str::from_utf8(s).map_err(|_| PpError::BadHeader("v1 address is not text"))?;
    let ip = if v6 { s.parse::<Ipv6Addr>().map(IpAddr::V6) } else { s.parse::<Ipv4Addr>().map(IpAddr::V4) };
    ip.map_err(|_| PpError::BadHeader("v1 address does not parse"))
}

/// A decimal port. COMPAT: HAProxy 2.6 takes an empty field as 0 and truncates values
/// above 65535; both are refused here (proxy-protocol.txt: 0..65535).
fn v1_port(s: &[u8]) -> Result<u16, PpError> {
    if s.is_empty() || s.len() > 5 || !s.iter().all(u8::is_ascii_digit) {
        return Err(PpError::BadHeader("v1 port is not a number"));
    }
    let v = s.iter().fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'));
    u16::try_from(v).map_err(|_| PpError::BadHeader("v1 port above 65535"))
}

// === v2 ===

fn decode_v2(buf: &[u8]) -> Decoded {
    if buf.len() < V2_HEADER_LEN {
        // Byte 12 is checked as soon as it is there, so junk after the signature
        // does not wait for the rest.
        if buf.len() > 12 && buf[12] & 0xF0 != 0x20 {
            return Decoded::Invalid(PpError::NotHeader);
        }
        return Decoded::Incomplete;
    }
    if buf[12] & 0xF0 != 0x20 {
        return Decoded::Invalid(PpError::NotHeader);
    }
    let total = V2_HEADER_LEN + usize::from(u16::from_be_bytes([buf[14], buf[15]]));
    if total > V2_MAX_LEN {
        return Decoded::Invalid(PpError::BadHeader("v2 header larger than a buffer"));
    }
    let command = match buf[12] & 0x0F {
        0x00 => Command::Local,
        0x01 => Command::Proxy,
        _ => return Decoded::Invalid(PpError::BadHeader("v2 command neither LOCAL nor PROXY")),
    };
    if buf.len() < total {
        return Decoded::Incomplete;
    }
    done(parse_v2_body(&buf[..total], command).map(|h| (h, total)))
}

/// The whole header (`hdr.len()` is its announced size): addresses, then TLVs.
fn parse_v2_body(hdr: &[u8], command: Command) -> Result<Header, PpError> {
    let body = &hdr[V2_HEADER_LEN..];
    let (addrs, used) = parse_v2_addrs(hdr[13], body)?;
    let tlvs = parse_tlvs(hdr, V2_HEADER_LEN + used)?;
    Ok(Header { version: Version::V2, command, addrs, tlvs })
}

/// The address block for family/transport byte `fam`, and its size.
///
/// COMPAT: HAProxy 2.6 reads TLVs of a LOCAL header right after the 16 fixed bytes and
/// refuses UDP and UNIX families in practice; proxy-protocol.txt §2.2 says to skip the
/// address block by its family and to accept those families, which is done here (their
/// addresses are then not used, as HAProxy does not use them either).
fn parse_v2_addrs(fam: u8, body: &[u8]) -> Result<(Addresses, usize), PpError> {
    let dgram = match fam & 0x0F {
        0x00 if fam == 0x00 => return Ok((Addresses::Unspec, 0)),
        0x01 => false,
        0x02 => true,
        _ => return Err(PpError::BadHeader("v2 unknown transport")),
    };
    let short = PpError::BadHeader("v2 address block shorter than its family");
    match fam & 0xF0 {
        0x10 => {
            let a = body.first_chunk::<12>().ok_or(short)?;
            let ip = |i: usize| IpAddr::V4(Ipv4Addr::new(a[i], a[i + 1], a[i + 2], a[i + 3]));
            let port = |i: usize| u16::from_be_bytes([a[i], a[i + 1]]);
            Ok((
                Addresses::Inet { src: SocketAddr::new(ip(0), port(8)), dst: SocketAddr::new(ip(4), port(10)), dgram },
                12,
            ))
        }
        0x20 => {
            let a = body.first_chunk::<36>().ok_or(short)?;
            let ip = |i: usize| {
                let mut o = [0u8; 16];
                o.copy_from_slice(&a[i..i + 16]);
                IpAddr::V6(Ipv6Addr::from(o))
            };
            let port = |i: usize| u16::from_be_bytes([a[i], a[i + 1]]);
            Ok((
                Addresses::Inet {
                    src: SocketAddr::new(ip(0), port(32)),
                    dst: SocketAddr::new(ip(16), port(34)),
                    dgram,
                },
                36,
            ))
        }
        0x30 => {
            let a = body.first_chunk::<{ 2 * UNIX_ADDR_LEN }>().ok_or(short)?;
            let (s, d) = a.split_at(UNIX_ADDR_LEN);
            let path = |p: &[u8]| {
                let mut o = Box::new([0u8; UNIX_ADDR_LEN]);
                o.copy_from_slice(p);
                o
            };
            Ok((Addresses::Unix { src: path(s), dst: path(d), dgram }, 2 * UNIX_ADDR_LEN))
        }
        _ => Err(PpError::BadHeader("v2 unknown address family")),
    }
}

/// Type, length and the bytes after the 3-byte TLV head.
pub(super) fn split_tlv(b: &[u8]) -> Option<(u8, usize, &[u8])> {
    let (h, rest) = b.split_first_chunk::<3>()?;
    Some((h[0], usize::from(u16::from_be_bytes([h[1], h[2]])), rest))
}

/// TLVs from `from` to the end of `hdr`, with HAProxy's checks: each fits, CRC32C is
/// 4 bytes and matches, AUTHORITY and UNIQUE_ID within HAProxy's sizes.
fn parse_tlvs(hdr: &[u8], from: usize) -> Result<Vec<Tlv>, PpError> {
    let mut tlvs = Vec::new();
    let mut off = from;
    while off < hdr.len() {
        let (kind, len, after) = split_tlv(&hdr[off..]).ok_or(PpError::BadHeader("v2 TLV head cut short"))?;
        let value = after.get(..len).ok_or(PpError::BadHeader("v2 TLV longer than the header"))?;
        match kind {
            tlv::CRC32C => check_crc(hdr, off + 3, value)?,
            tlv::AUTHORITY if len > AUTHORITY_MAX => return Err(PpError::BadHeader("v2 AUTHORITY too long")),
            tlv::UNIQUE_ID if len > UNIQUE_ID_MAX => return Err(PpError::BadHeader("v2 UNIQUE_ID too long")),
            _ => {}
        }
        tlvs.push(Tlv { kind, value: value.to_vec() });
        off += 3 + len;
    }
    Ok(tlvs)
}

/// The CRC32c of the header with the 4 bytes at `at` taken as zero must be `value`.
fn check_crc(hdr: &[u8], at: usize, value: &[u8]) -> Result<(), PpError> {
    let Ok(want) = <[u8; 4]>::try_from(value) else {
        return Err(PpError::BadHeader("v2 CRC32C TLV not 4 bytes"));
    };
    if crc_with_hole(hdr, at) != u32::from_be_bytes(want) {
        return Err(PpError::BadHeader("v2 CRC32C mismatch"));
    }
    Ok(())
}

/// CRC32c of `hdr` with `hdr[at..at + 4]` read as zeros.
pub(super) fn crc_with_hole(hdr: &[u8], at: usize) -> u32 {
    let crc = crc32c::crc32c(&hdr[..at]);
    let crc = crc32c::crc32c_append(crc, &[0; 4]);
    crc32c::crc32c_append(crc, &hdr[at + 4..])
}
