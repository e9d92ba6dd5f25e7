//! PROXY protocol v1 (text) and v2 (binary) headers: decode what a load balancer in
//! front of us sent, encode what we send to a server.
//!
//! HAProxy counterpart: `conn_recv_proxy()` and `make_proxy_line*()` in `src/connection.c`,
//! the wire format in `doc/proxy-protocol.txt`. I/O-free: the caller peeks or buffers the
//! first bytes of a connection and calls [`decode`] until it returns something other
//! than [`Decoded::Incomplete`]; the socket work (timeouts, counting failures, replacing
//! the session's addresses) lives in the daemon's `session/` module.
//!
//! - `decode`: [`decode`], the two parsers and HAProxy's limits
//! - `encode`: [`encode_v1`], [`encode_v2`] and [`encode`] (a decoded header, verbatim)
//! - `types` (this file): [`Header`], [`Addresses`], [`Tlv`], the TLV type numbers

mod decode;
mod encode;
#[cfg(test)]
mod tests;

use std::net::SocketAddr;

pub use decode::decode;
pub use encode::{encode, encode_v1, encode_v2};

/// The 12 bytes that open every v2 header.
pub const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";
/// Fixed part of a v2 header: signature, version/command, family, length.
pub const V2_HEADER_LEN: usize = 16;
/// Longest v1 line the protocol allows, "\r\n" included (proxy-protocol.txt §2.1).
pub const V1_MAX_LEN: usize = 107;
/// Longest v2 header accepted: HAProxy peeks at most one buffer (`tune.bufsize`,
/// 16384 by default) and refuses a header that does not fit in it.
pub const V2_MAX_LEN: usize = 16384;
/// Longest AUTHORITY value HAProxy keeps (`PP2_AUTHORITY_MAX`); longer is refused.
pub const AUTHORITY_MAX: usize = 255;
/// Longest UNIQUE_ID value HAProxy keeps (`UNIQUEID_LEN`); longer is refused.
pub const UNIQUE_ID_MAX: usize = 128;
/// Size of one AF_UNIX address in a v2 header.
pub const UNIX_ADDR_LEN: usize = 108;

/// TLV type numbers (proxy-protocol.txt §2.2.x).
pub mod tlv {
    /// Application-Layer Protocol Negotiation of the front connection.
    pub const ALPN: u8 = 0x01;
    /// Host name the client asked for (SNI or Host).
    pub const AUTHORITY: u8 = 0x02;
    /// CRC32c of the whole header, computed with this value zeroed.
    pub const CRC32C: u8 = 0x03;
    /// Padding, ignored.
    pub const NOOP: u8 = 0x04;
    /// An opaque connection identifier (HAProxy's unique-id).
    pub const UNIQUE_ID: u8 = 0x05;
    /// TLS details of the front connection, with sub-TLVs.
    pub const SSL: u8 = 0x20;
    /// SSL sub-TLV: protocol version ("TLSv1.3").
    pub const SSL_VERSION: u8 = 0x21;
    /// SSL sub-TLV: client certificate common name.
    pub const SSL_CN: u8 = 0x22;
    /// SSL sub-TLV: cipher name.
    pub const SSL_CIPHER: u8 = 0x23;
    /// SSL sub-TLV: certificate signature algorithm.
    pub const SSL_SIG_ALG: u8 = 0x24;
    /// SSL sub-TLV: certificate key algorithm.
    pub const SSL_KEY_ALG: u8 = 0x25;
    /// Network namespace name.
    pub const NETNS: u8 = 0x30;
    /// AWS custom TLV; its first byte is a subtype.
    pub const AWS: u8 = 0xEA;
    /// AWS subtype: VPC endpoint id ("vpce-...").
    pub const AWS_VPCE_ID: u8 = 0x01;
}

/// Result of one decode attempt over the bytes received so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// Every byte so far fits a header that is not finished: read more.
    Incomplete,
    /// Not a (valid) PROXY header: close the connection.
    Invalid(PpError),
    /// A whole header, and how many bytes it took from the start of the input.
    Done(Header, usize),
}

/// Why a header was refused. `Display` gives HAProxy's connection error text (the one
/// its logs show for `CO_ER_PRX_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PpError {
    /// The bytes start neither like "PROXY " nor like the v2 signature and version.
    NotHeader,
    /// A v1 protocol other than TCP4, TCP6 or UNKNOWN.
    BadProto,
    /// Looks like a header but breaks the format; the reason is for debugging.
    BadHeader(&'static str),
}

impl std::fmt::Display for PpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PpError::NotHeader => "Received something which does not look like a PROXY protocol header",
            PpError::BadProto => "Received an unhandled protocol in the PROXY protocol header",
            PpError::BadHeader(_) => "Received an invalid PROXY protocol header",
        })
    }
}

impl std::error::Error for PpError {}

/// Which wire format a header came in (or is to be written in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// Text line, "PROXY TCP4 ...\r\n".
    V1,
    /// Binary header with optional TLVs.
    V2,
}

/// What the sender asks for. A v1 header is always `Proxy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// The sender's own connection (a health check): keep the real addresses.
    Local,
    /// A relayed connection: the addresses are the client's.
    Proxy,
}

/// The addresses a header carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addresses {
    /// v1 UNKNOWN or v2 AF_UNSPEC: none.
    Unspec,
    /// TCP (`dgram == false`) or UDP over IPv4 or IPv6; both sides of the same family.
    Inet { src: SocketAddr, dst: SocketAddr, dgram: bool },
    /// AF_UNIX paths, 108 bytes each, NUL padded (v2 only).
    Unix { src: Box<[u8; UNIX_ADDR_LEN]>, dst: Box<[u8; UNIX_ADDR_LEN]>, dgram: bool },
}

/// One v2 Type-Length-Value entry, as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tlv {
    pub kind: u8,
    pub value: Vec<u8>,
}

/// A decoded PROXY header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub version: Version,
    pub command: Command,
    pub addrs: Addresses,
    /// v2 TLVs in wire order (empty for v1).
    pub tlvs: Vec<Tlv>,
}

impl Header {
    /// The client (source) and destination addresses to use instead of the socket's,
    /// or `None` when the header says to keep them: LOCAL, UNKNOWN/UNSPEC, UDP, UNIX.
    ///
    /// COMPAT: HAProxy 2.6 also keeps the socket addresses for these (its
    /// `conn_recv_proxy()` only takes TCP over IPv4/IPv6).
    pub fn tcp_addrs(&self) -> Option<(SocketAddr, SocketAddr)> {
        match (&self.command, &self.addrs) {
            (Command::Proxy, Addresses::Inet { src, dst, dgram: false }) => Some((*src, *dst)),
            _ => None,
        }
    }

    /// The value of the first TLV of type `kind`.
    pub fn tlv(&self, kind: u8) -> Option<&[u8]> {
        self.tlvs.iter().find(|t| t.kind == kind).map(|t| t.value.as_slice())
    }

    /// The AUTHORITY TLV (host name the client asked for).
    pub fn authority(&self) -> Option<&[u8]> {
        self.tlv(tlv::AUTHORITY)
    }

    /// The UNIQUE_ID TLV.
    pub fn unique_id(&self) -> Option<&[u8]> {
        self.tlv(tlv::UNIQUE_ID)
    }

    /// The ALPN TLV.
    pub fn alpn(&self) -> Option<&[u8]> {
        self.tlv(tlv::ALPN)
    }

    /// The NETNS TLV (namespace name).
    pub fn netns(&self) -> Option<&[u8]> {
        self.tlv(tlv::NETNS)
    }

    /// The AWS VPC endpoint id (AWS TLV with subtype 0x01).
    pub fn aws_vpce_id(&self) -> Option<&[u8]> {
        self.tlvs
            .iter()
            .filter(|t| t.kind == tlv::AWS)
            .find_map(|t| t.value.split_first().filter(|(sub, _)| **sub == tlv::AWS_VPCE_ID).map(|(_, id)| id))
    }

    /// The SSL TLV, split into its fixed part and sub-TLVs; `None` when absent or
    /// malformed (HAProxy does not check it on receipt either).
    pub fn ssl(&self) -> Option<Ssl<'_>> {
        Ssl::parse(self.tlv(tlv::SSL)?)
    }
}

/// The SSL TLV's content: a client flags byte, a verify result, then sub-TLVs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ssl<'a> {
    /// `PP2_CLIENT_SSL` (0x01), `PP2_CLIENT_CERT_CONN` (0x02), `PP2_CLIENT_CERT_SESS` (0x04).
    pub client: u8,
    /// Certificate verification result, 0 when verified.
    pub verify: u32,
    /// Sub-TLVs (version, CN, cipher, signature and key algorithms) in wire order.
    pub subs: Vec<(u8, &'a [u8])>,
}

impl<'a> Ssl<'a> {
    /// Splits an SSL TLV value; `None` if it is short or a sub-TLV overruns it.
    pub fn parse(value: &'a [u8]) -> Option<Self> {
        let (fixed, mut rest) = value.split_first_chunk::<5>()?;
        let mut subs = Vec::new();
        while !rest.is_empty() {
            let (kind, len, after) = decode::split_tlv(rest)?;
            let (v, tail) = after.split_at_checked(len)?;
            subs.push((kind, v));
            rest = tail;
        }
        Some(Ssl { client: fixed[0], verify: u32::from_be_bytes([fixed[1], fixed[2], fixed[3], fixed[4]]), subs })
    }

    /// The first sub-TLV of type `kind` (`tlv::SSL_VERSION`, `tlv::SSL_CN` ...).
    pub fn sub(&self, kind: u8) -> Option<&'a [u8]> {
        self.subs.iter().find(|(k, _)| *k == kind).map(|(_, v)| *v)
    }
}
