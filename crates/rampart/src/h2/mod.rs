//! HTTP/2 messages for both roles: what the client side (server role) and the server
//! side (client role) share above the frame and HPACK codec (`rampart_proto::h2`).
//! HAProxy counterpart: h2.c.
//!
//! - `msg`: decoded header fields to the neutral message (requests), the neutral
//!   message to header fields (responses), with HAProxy's rules
//! - `client`: the same in the client role (requests out to servers, responses in)

pub mod client;
pub mod msg;
