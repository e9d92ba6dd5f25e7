//! Per-connection drivers: bytes in, exchanges out.
//! - `h1`: HTTP/1.0 and 1.1 on the client side (keep-alive, pipelining, errors)
//! - `pt`: TCP passthrough (`mode tcp`)

pub mod h1;
pub mod pt;
