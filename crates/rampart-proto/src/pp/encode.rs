//! Writing PROXY headers for a server connection.
//!
//! HAProxy counterpart: `make_proxy_line_v1()` / `make_proxy_line_v2()` in
//! `src/connection.c`. Mixed families are written as IPv6 with the IPv4 side mapped
//! (`::ffff:a.b.c.d`), as HAProxy does.

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};

use super::{decode::crc_with_hole, tlv, Addresses, Command, Header, Version, V2_HEADER_LEN, V2_SIGNATURE};

/// Appends a v1 line for `addrs` (client, destination), or "PROXY UNKNOWN\r\n" for `None`.
pub fn encode_v1(out: &mut Vec<u8>, addrs: Option<(SocketAddr, SocketAddr)>) {
    let Some((src, dst)) = addrs else {
        out.extend_from_slice(b"PROXY UNKNOWN\r\n");
        return;
    };
    let mut line = String::with_capacity(104);
    let _ = match (src.ip(), dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => write!(line, "PROXY TCP4 {s} {d} {} {}\r\n", src.port(), dst.port()),
        (s, d) => write!(line, "PROXY TCP6 {} {} {} {}\r\n", as_v6(s), as_v6(d), src.port(), dst.port()),
    };
    out.extend_from_slice(line.as_bytes());
}

fn as_v6(ip: IpAddr) -> std::net::Ipv6Addr {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped(),
        IpAddr::V6(v6) => v6,
    }
}

/// Appends a v2 header: PROXY with TCP `addrs`, or LOCAL/UNSPEC for `None`; a CRC32C
/// TLV first when `crc32c` (as HAProxy orders it), then `tlvs` as given.
/// TLV values longer than 65535 bytes are cut to fit their length field.
pub fn encode_v2(out: &mut Vec<u8>, addrs: Option<(SocketAddr, SocketAddr)>, tlvs: &[(u8, &[u8])], crc32c: bool) {
    let (command, addrs) = match addrs {
        Some((src, dst)) => (Command::Proxy, inet_same_family(src, dst)),
        None => (Command::Local, Addresses::Unspec),
    };
    let start = out.len();
    write_v2_head(out, command, &addrs);
    let crc_at = crc32c.then(|| {
        push_tlv(out, tlv::CRC32C, &[0; 4]);
        out.len() - 4
    });
    for (kind, value) in tlvs {
        push_tlv(out, *kind, value);
    }
    finish_v2(out, start, crc_at);
}

/// Re-encodes a decoded header in its own version: v1 from its addresses, v2 with its
/// command, addresses and TLVs verbatim; a CRC32C TLV in it is recomputed.
pub fn encode(out: &mut Vec<u8>, h: &Header) {
    if h.version == Version::V1 {
        let addrs = match &h.addrs {
            Addresses::Inet { src, dst, .. } => Some((*src, *dst)),
            _ => None,
        };
        return encode_v1(out, addrs);
    }
    let start = out.len();
    write_v2_head(out, h.command, &h.addrs);
    let mut crc_at = None;
    for t in &h.tlvs {
        push_tlv(out, t.kind, &t.value);
        if t.kind == tlv::CRC32C && t.value.len() == 4 && crc_at.is_none() {
            crc_at = Some(out.len() - 4);
        }
    }
    finish_v2(out, start, crc_at);
}

/// Both sides in one family: IPv6 with mapped IPv4 when they differ.
fn inet_same_family(src: SocketAddr, dst: SocketAddr) -> Addresses {
    let (src, dst) = match (src, dst) {
        (SocketAddr::V4(_), SocketAddr::V4(_)) | (SocketAddr::V6(_), SocketAddr::V6(_)) => (src, dst),
        _ => (
            SocketAddr::new(IpAddr::V6(as_v6(src.ip())), src.port()),
            SocketAddr::new(IpAddr::V6(as_v6(dst.ip())), dst.port()),
        ),
    };
    Addresses::Inet { src, dst, dgram: false }
}

/// Signature, version/command, family, a length to be fixed by `finish_v2`, addresses.
fn write_v2_head(out: &mut Vec<u8>, command: Command, addrs: &Addresses) {
    out.extend_from_slice(&V2_SIGNATURE);
    out.push(0x20 | if command == Command::Proxy { 0x01 } else { 0x00 });
    let transport = |dgram: bool| if dgram { 0x02 } else { 0x01 };
    match addrs {
        Addresses::Unspec => out.extend_from_slice(&[0x00, 0, 0]),
        Addresses::Inet { src, dst, dgram } => {
            let v4 = matches!((src.ip(), dst.ip()), (IpAddr::V4(_), IpAddr::V4(_)));
            out.extend_from_slice(&[if v4 { 0x10 } else { 0x20 } | transport(*dgram), 0, 0]);
            if v4 {
                out.extend_from_slice(&octets4(src.ip()));
                out.extend_from_slice(&octets4(dst.ip()));
            } else {
                out.extend_from_slice(&as_v6(src.ip()).octets());
                out.extend_from_slice(&as_v6(dst.ip()).octets());
            }
            out.extend_from_slice(&src.port().to_be_bytes());
            out.extend_from_slice(&dst.port().to_be_bytes());
        }
        Addresses::Unix { src, dst, dgram } => {
            out.extend_from_slice(&[0x30 | transport(*dgram), 0, 0]);
            out.extend_from_slice(&src[..]);
            out.extend_from_slice(&dst[..]);
        }
    }
}

fn octets4(ip: IpAddr) -> [u8; 4] {
    match ip {
        IpAddr::V4(v4) => v4.octets(),
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or([0; 4], |v4| v4.octets()),
    }
}

fn push_tlv(out: &mut Vec<u8>, kind: u8, value: &[u8]) {
    let value = &value[..value.len().min(usize::from(u16::MAX))];
    out.push(kind);
    out.extend_from_slice(&u16::try_from(value.len()).unwrap_or(u16::MAX).to_be_bytes());
    out.extend_from_slice(value);
}

/// Writes the length field of the header that starts at `start`, then its CRC32c.
fn finish_v2(out: &mut [u8], start: usize, crc_at: Option<usize>) {
    let len = u16::try_from(out.len() - start - V2_HEADER_LEN).unwrap_or(u16::MAX);
    out[start + 14..start + 16].copy_from_slice(&len.to_be_bytes());
    if let Some(at) = crc_at {
        let crc = crc_with_hole(&out[start..], at - start);
        out[at..at + 4].copy_from_slice(&crc.to_be_bytes());
    }
}
