//! Responses rampart builds itself: HAProxy's error pages, `errorfile`s, and the
//! replies of `return`, `deny`, `tarpit`, `redirect`, `auth`. Each is a message like
//! any other: a head the stream can still rewrite (`http-after-response`), over bytes
//! the configuration owns, and a body; the front mux writes it with its own framing.
//! HAProxy counterpart: `struct http_reply` and `http_reply_to_htx()` (src/http_htx.c).

use std::borrow::Cow;

use super::msg::MsgHead;

/// A response prepared at startup: `head`'s slices point into `buf`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyTpl {
    pub buf: Box<[u8]>,
    pub head: MsgHead,
    /// The body bytes (a range of `buf`).
    pub body: std::ops::Range<usize>,
    /// The head announces the body's length; without one the connection closes after
    /// the response (an `errorfile` without `Content-Length`).
    pub has_length: bool,
}

impl ReplyTpl {
    /// The response to send: `into` gets a copy of the head (its arena budget kept),
    /// the returned [`Synth`] borrows the template's bytes.
    pub fn instantiate<'a>(&'a self, into: &mut MsgHead) -> Synth<'a> {
        into.copy_from(&self.head);
        Synth {
            buf: &self.buf,
            body: Cow::Borrowed(&self.buf[self.body.clone()]),
            has_length: self.has_length,
            chunked: false,
            raw: false,
            close: false,
        }
    }
}

/// A built response on its way out: the head is the stream's response head, whose
/// buffer slices point into `buf`.
#[derive(Debug, Clone)]
pub struct Synth<'a> {
    pub buf: &'a [u8],
    pub body: Cow<'a, [u8]>,
    pub has_length: bool,
    /// The body goes out chunked in HTTP/1 (compressed by a filter: its length was not
    /// known when the head was decided, as for a server's response).
    pub chunked: bool,
    /// `buf` is a whole response to send as it is, then close (an `errorfile`
    /// rampart's parser cannot read); an empty one closes without a response (an empty
    /// `errorfile`, as HAProxy).
    pub raw: bool,
    /// The client connection closes after this response.
    pub close: bool,
}

impl<'a> Synth<'a> {
    /// Raw bytes to send as they are, then close.
    pub fn raw(bytes: &'a [u8]) -> Synth<'a> {
        Synth { buf: bytes, body: Cow::Borrowed(&[]), has_length: false, chunked: false, raw: true, close: true }
    }

    /// A built head (in the head's arena) with this body.
    pub fn built(body: Cow<'a, [u8]>) -> Synth<'a> {
        Synth { buf: &[], body, has_length: true, chunked: false, raw: false, close: false }
    }
}
