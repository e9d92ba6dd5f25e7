//! I/O-free wire codecs. Bytes in, structure out; "incomplete" is not an error.
//!
//! - `h1`: HTTP/1.x heads (on httparse, with HAProxy's strictness), chunked framing

pub mod h1;
