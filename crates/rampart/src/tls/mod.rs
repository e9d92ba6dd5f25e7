//! TLS with rustls: PEM loading (`pem`), the TLS stream over a TCP socket (`stream`),
//! TLS towards servers (`client`), OpenSSL cipher names (`suites`).
//! HAProxy counterpart: ssl_sock.c, ssl_ckch.c.

pub mod client;
pub mod pem;
pub mod stream;
pub mod suites;
