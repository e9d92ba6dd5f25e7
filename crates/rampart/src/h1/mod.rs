//! HTTP/1 bytes on sockets, both roles: what the client side (`mux::h1`, server role)
//! and the server side (`back::h1`, client role) share. A parsed head becomes the
//! protocol-neutral message (`msg`), a message becomes a head on output with HAProxy's
//! rules (`write`), and bodies are framed, checked and forwarded as they arrive
//! (`body`). The codec itself (parsing, chunk syntax) is `rampart_proto::h1`, I/O-free.
//! HAProxy counterpart: h1_htx.c, the data phase of mux_h1.c.
//!
//! - `msg`: HTTP/1 head to neutral message
//! - `write`: heads on output (rewrites resolved, `Connection` per hop)
//! - `body`: body framing and forwarding in both directions
//! - `case_adjust`: `h1-case-adjust` spellings of header names on output

pub mod body;
pub mod case_adjust;
pub mod msg;
pub mod write;
