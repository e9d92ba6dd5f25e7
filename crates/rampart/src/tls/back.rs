//! What a TLS connection to a server negotiated, read once after its handshake and
//! kept with the connection (also while it idles in the pool) for the `ssl_bc*`
//! fetches. HAProxy counterpart: the `SSL *` of a backend connection as
//! `smp_fetch_ssl_fc*()` (src/ssl_sample.c) read it.

use rustls::{CipherSuite, HandshakeKind, ProtocolVersion};

/// The negotiated parameters of one server connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackTls {
    /// `TLSv1.2`, `TLSv1.3` (OpenSSL's spelling).
    pub protocol: &'static str,
    /// The suite's OpenSSL name.
    pub cipher: Option<&'static str>,
    /// Bits of the symmetric key (`ssl_bc_alg_keysize`, `ssl_bc_use_keysize`).
    pub keysize: u32,
    /// The protocol the server chose by ALPN.
    pub alpn: Option<Box<[u8]>>,
    /// The handshake resumed an earlier session.
    pub resumed: bool,
}

impl BackTls {
    /// Reads what the handshake of `c` settled.
    pub fn of(c: &rustls::Connection) -> BackTls {
        let suite = c.negotiated_cipher_suite().map(|s| s.suite());
        BackTls {
            protocol: match c.protocol_version() {
                Some(ProtocolVersion::TLSv1_3) => "TLSv1.3",
                Some(ProtocolVersion::TLSv1_2) => "TLSv1.2",
                _ => "",
            },
            cipher: suite.and_then(super::suites::openssl_name),
            keysize: suite.map_or(0, keysize),
            alpn: c.alpn_protocol().map(Box::from),
            resumed: c.handshake_kind() == Some(HandshakeKind::Resumed),
        }
    }
}

/// The symmetric key size of a suite rustls offers, in bits.
fn keysize(s: CipherSuite) -> u32 {
    match s {
        CipherSuite::TLS13_AES_128_GCM_SHA256
        | CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
        | CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => 128,
        _ => 256,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_sizes() {
        assert_eq!(keysize(CipherSuite::TLS13_AES_128_GCM_SHA256), 128);
        assert_eq!(keysize(CipherSuite::TLS13_AES_256_GCM_SHA384), 256);
        assert_eq!(keysize(CipherSuite::TLS13_CHACHA20_POLY1305_SHA256), 256);
        assert_eq!(keysize(CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256), 128);
    }
}
