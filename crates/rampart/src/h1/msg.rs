//! From a parsed HTTP/1 head to the protocol-neutral message the stream works on, and
//! from a whole HTTP/1 response (an error page, a rendered reply) to a reply template.
//! HAProxy counterpart: h1_htx.c (`h1_postparse_*`, headers copied into HTX).

use rampart_proto::h1::{parse_response, Framing, Head, Method};

use crate::http::{BodyLen, MsgHead, ReplyTpl};

/// The HTTP/1 request at the start of a TCP stream's `payload`, when its head is
/// complete: what the HTTP fetches of its content rules read (`url`, `req.hdr` ...), as
/// HAProxy parses a TCP stream for them (`smp_prefetch_htx()`).
/// PERF: only request content rules ask; anything but an upper-case first byte is not
/// parsed; a head is parsed once per evaluation of the rules (HAProxy: once per fetch).
pub fn request_at_start(payload: &[u8]) -> Option<MsgHead> {
    if !payload.first().is_some_and(u8::is_ascii_uppercase) {
        return None;
    }
    let mut h1 = Head::default();
    if rampart_proto::h1::parse_request(payload, payload.len() + 1, &mut h1) != Ok(true) {
        return None;
    }
    let mut head = MsgHead { arena_max: 1024, ..Default::default() };
    fill(&mut head, &h1);
    Some(head)
}

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

/// Parses a complete response (a default page, an `errorfile`, a pre-rendered reply)
/// into a template the stream can send. `None` when rampart's parser refuses it (it is
/// stricter than the `errorfile` checks in places); the raw bytes are then sent as they
/// are and the connection closed.
///
/// HAProxy turns each page into HTX once at startup (`http_str_to_htx`); so does rampart.
pub fn parse_reply(raw: &[u8]) -> Option<ReplyTpl> {
    let mut h1 = Head::default();
    if parse_response(raw, raw.len(), Method::Get, &mut h1) != Ok(true) {
        return None;
    }
    let mut head = MsgHead::default();
    fill(&mut head, &h1);
    let has_length = matches!(h1.framing, Framing::Length(_) | Framing::None);
    Some(ReplyTpl { buf: raw.into(), head, body: h1.len..raw.len(), has_length })
}
