//! From a parsed HTTP/1 head to the protocol-neutral message the stream works on.
//! HAProxy counterpart: h1_htx.c (`h1_postparse_*`, headers copied into HTX).

use rampart_proto::h1::{Framing, Head};

use crate::http::{BodyLen, MsgHead};

/// Fills `msg` (reset first, its arena budget kept) from the HTTP/1 head `h1`: start
/// line, header entries (the same offsets into the same buffer) and what is known of
/// the body.
///
/// PERF: the header entries are copied (about 20 bytes each); `msg` keeps its capacity
/// between exchanges.
pub fn fill(msg: &mut MsgHead, h1: &Head) {
    msg.reset();
    msg.version = h1.version;
    msg.method = h1.method;
    msg.method_raw = h1.method_raw;
    msg.uri = h1.uri;
    msg.uri_cut = h1.uri_cut;
    msg.status = h1.status;
    msg.reason = h1.reason;
    msg.headers.extend_from_slice(&h1.headers);
    msg.body = match h1.framing {
        Framing::None | Framing::Length(0) => BodyLen::None,
        Framing::Length(n) => BodyLen::Known(n),
        Framing::Chunked | Framing::UntilClose => BodyLen::Unknown,
    };
}
