//! HTTP/1.0 and 1.1 codec, one for both sides: requests are parsed on the front
//! (rampart as server), responses on the back (rampart as client).
//!
//! Parsing never copies: a [`Head`] holds offsets into the caller's buffer, and its
//! header list is reused from one message to the next (no allocation per header once
//! warm). Validation follows HAProxy's H1 mux (src/h1.c, src/mux_h1.c): anything that
//! could let two parties frame a message differently is an error (400 on the request
//! side, 502 on the response side).
//!
//! - `types`: [`Head`], [`Framing`], [`H1Error`] ...
//! - `head`: [`parse_request`], [`parse_response`]
//! - `chunked`: [`ChunkedState`], validating chunked bodies while they are forwarded

pub mod chunked;
pub mod head;
pub mod types;

pub use chunked::ChunkedState;
pub use head::{parse_request, parse_response};
pub use types::*;
