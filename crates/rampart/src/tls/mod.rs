//! TLS with rustls: PEM loading (`pem`), the TLS stream over a TCP socket (`stream`),
//! TLS towards servers (`client`) and what it negotiated (`back`), OpenSSL cipher
//! names (`suites`).
//! HAProxy counterpart: ssl_sock.c, ssl_ckch.c.

pub mod back;
pub mod client;
pub mod pem;
pub mod stream;
pub mod suites;
