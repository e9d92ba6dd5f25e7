//! I/O-free wire codecs. Bytes in, structure out; "incomplete" is not an error.
//!
//! - `http`: protocol-neutral pieces of a message head (slices, method, version, headers)
//! - `h1`: HTTP/1.x heads (on httparse, with HAProxy's strictness), chunked framing

pub mod h1;
pub mod http;
