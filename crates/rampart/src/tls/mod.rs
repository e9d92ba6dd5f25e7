//! TLS with rustls: PEM loading (`pem`), the TLS stream over a socket and its
//! handshakes (`stream`), the server configuration of a `bind ... ssl` line (`bind`)
//! and its certificate selection by SNI (`sni`), `crt-list` files (`crtlist`); the
//! runtime certificate commands and hot swap (`certs`), the runtime CA and CRL
//! files and their commands (`castore`, `castore_show`), the verifiers built from
//! their contents (`verifier`); TLS towards servers (`client`) and a server's
//! replaceable `crt` (`server_crt`), OpenSSL cipher names (`suites`); session tickets
//! sealed with the keys of a `tls-ticket-keys` file and their commands (`ticket_keys`,
//! `ticket_keys_cli`); client certificate
//! verification with OpenSSL's error codes (`verify`, `chain`, `crl`); what a handshake
//! negotiated, as the `ssl_*` and `ssl_bc*` fetches read it ([`TlsInfo`]); `maxsslconn` and
//! `maxsslrate` (`limit`).
//! HAProxy counterpart: ssl_sock.c, ssl_ckch.c.

pub mod bind;
pub mod castore;
mod castore_show;
pub mod certs;
pub mod chain;
pub mod client;
pub mod crl;
pub mod crtlist;
mod crtlist_opts;
pub mod crtlists;
pub mod gencert;
pub mod httpclient;
pub mod limit;
pub mod ocsp;
pub mod pem;
pub mod server_crt;
pub mod sni;
pub mod stream;
pub mod suites;
#[cfg(test)]
pub(crate) mod testpki;
pub mod ticket_keys;
pub mod ticket_keys_cli;
pub mod types;
pub mod verifier;
pub mod verify;

pub use types::{LocalCert, TlsInfo};

use rustls::Connection;

impl TlsInfo {
    /// What the completed handshake of `conn` negotiated.
    pub fn of(conn: &Connection) -> TlsInfo {
        let (cipher, bits) = conn
            .negotiated_cipher_suite()
            .map_or(("", 0), |s| (suites::openssl_name(s.suite()).unwrap_or(""), suites::key_bits(s.suite())));
        let version = match conn.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3",
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2",
            _ => "",
        };
        let sni = match conn {
            Connection::Server(s) => s.server_name().map(Box::from),
            Connection::Client(_) => None,
        };
        TlsInfo {
            sni,
            version,
            cipher,
            bits,
            alpn: conn.alpn_protocol().map(Box::from),
            resumed: conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
            peer_certs: conn.peer_certificates().map(<[_]>::to_vec).unwrap_or_default(),
            local_cert: None,
            verify: chain::VerifyOutcome::default(),
        }
    }
}
