//! TLS with rustls: PEM loading (`pem`), the TLS stream over a TCP socket (`stream`).
//! HAProxy counterpart: ssl_sock.c, ssl_ckch.c.

pub mod pem;
pub mod stream;
