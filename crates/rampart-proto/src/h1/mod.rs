//! HTTP/1.0 and 1.1 codec, one for both sides: requests are parsed on the front
//! (rampart as server), responses on the back (rampart as client).
//!
//! Parsing never copies: a [`Head`] holds offsets into the caller's buffer, and its
//! header list is reused from one message to the next (no allocation per header once
//! warm). Validation follows HAProxy's H1 mux (src/h1.c, src/mux_h1.c): anything that
//! could let two parties frame a message differently is an error (400 on the request
//! side, 502 on the response side; [`H1Error::status`]).
//!
//! - `types`: [`Head`], [`Framing`], [`H1Error`] ...
//! - `startline`: request and status lines (private)
//! - `fields`: Content-Length, Transfer-Encoding, Connection values (private)
//! - `target`: request-target forms, authority and Host syntax and agreement (private)
//! - `head`: [`parse_request`], [`parse_response`], [`is_h2_preface`]
//! - `relaxed`: header fields as `accept-invalid-http-request|response` reads them (private)
//! - `chunked`: [`ChunkedState`], validating chunked bodies while they are forwarded
//! - `write`: request/status lines and headers on output

pub mod chunked;
mod fields;
pub mod head;
mod relaxed;
mod startline;
mod target;
pub mod types;
pub mod write;

pub use chunked::ChunkedState;
pub use head::{is_h2_preface, parse_request, parse_response, H2_PREFACE};
pub use types::*;
