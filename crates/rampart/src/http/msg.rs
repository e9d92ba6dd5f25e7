//! The protocol-neutral HTTP message head between the muxes and the stream (HAProxy's
//! HTX start line and header blocks): start line, an ordered header list whose entries
//! point into the receive buffer, and an arena holding whatever rules rewrote.
//!
//! Edits are applied to the entries themselves, so every later rule sees them: a
//! deleted header is marked `drop`, a new value or header lives in the arena and its
//! [`Slice`] says so. A head no rule touched has an empty arena and is written out from
//! the receive buffer without a copy. The arena is bounded by what is left of a buffer
//! after the head; an edit that does not fit fails and is counted as a failed rewrite,
//! as in HAProxy.
//!
//! What does not belong here: framing (`Content-Length`, chunks, `Connection`), which
//! the muxes own, and bodies.

use rampart_proto::http::{HdrKind, Header, Method, Slice, Version};

use super::uri::{self, Target};

/// How the body of a message is known to the stream (never its wire framing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BodyLen {
    /// No body follows the head.
    #[default]
    None,
    /// A body of exactly this many bytes (may be 0).
    Known(u64),
    /// A body whose end is learnt while it streams (chunked, until close).
    Unknown,
}

/// A rewrite that did not fit in the space left for rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoRoom;

/// One message head: a request (method, target) or a response (status, reason).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MsgHead {
    pub version: Version,
    // --- request line
    pub method: Method,
    pub method_raw: Slice,
    /// The request target as received (origin, absolute, authority or asterisk form).
    pub uri: Slice,
    /// The part of an absolute-form target left out on HTTP/1 output: its default
    /// `:port` (HAProxy's scheme-based normalization), or the `scheme://authority` of an
    /// HTTP/2 request's target (HAProxy's normalized URI, sent in origin form). Empty
    /// when nothing is left out or once the target was rewritten.
    pub uri_cut: Slice,
    // --- status line
    pub status: u16,
    pub reason: Slice,
    // ---
    pub headers: Vec<Header>,
    pub body: BodyLen,
    /// Owned bytes of rewritten parts; [`Slice::in_arena`] slices point here.
    pub arena: Vec<u8>,
    /// Most bytes the arena may hold: what is left of a buffer (`tune.bufsize`) after
    /// the head, as HAProxy lets rewrites grow a message until its buffer is full.
    pub arena_max: usize,
    /// Rewrites refused for lack of room, since the head was parsed.
    pub failed_rewrites: u32,
    /// rampart built this head (a reply, a redirect): its framing headers are its own
    /// and are written as they are, where a rule's are left to the mux.
    pub built: bool,
}

impl MsgHead {
    /// Clears for the next message, keeping the capacity of the lists.
    pub fn reset(&mut self) {
        let mut headers = std::mem::take(&mut self.headers);
        let mut arena = std::mem::take(&mut self.arena);
        headers.clear();
        arena.clear();
        *self = MsgHead { headers, arena, arena_max: self.arena_max, ..MsgHead::default() };
    }

    /// Becomes a copy of `other` (its arena budget kept), reusing this head's capacity.
    pub fn copy_from(&mut self, other: &MsgHead) {
        let mut headers = std::mem::take(&mut self.headers);
        let mut arena = std::mem::take(&mut self.arena);
        headers.clear();
        headers.extend_from_slice(&other.headers);
        arena.clear();
        arena.extend_from_slice(&other.arena);
        *self = MsgHead { headers, arena, arena_max: self.arena_max, ..other.clone_fields() };
    }

    /// The fixed-size fields of this head (no list).
    fn clone_fields(&self) -> MsgHead {
        MsgHead {
            version: self.version,
            method: self.method,
            method_raw: self.method_raw,
            uri: self.uri,
            uri_cut: self.uri_cut,
            status: self.status,
            reason: self.reason,
            headers: Vec::new(),
            body: self.body,
            arena: Vec::new(),
            arena_max: self.arena_max,
            failed_rewrites: self.failed_rewrites,
            built: self.built,
        }
    }

    /// A read view over this head and the buffer its slices point into.
    #[inline]
    pub fn view<'a>(&'a self, buf: &'a [u8]) -> MsgView<'a> {
        MsgView { head: self, buf }
    }

    // === edits ===

    /// Copies `bytes` into the arena and returns their slice.
    pub fn store(&mut self, bytes: &[u8]) -> Result<Slice, NoRoom> {
        let start = self.arena.len();
        if start + bytes.len() > self.arena_max.min(Slice::ARENA as usize - 1) {
            self.failed_rewrites += 1;
            return Err(NoRoom);
        }
        self.arena.extend_from_slice(bytes);
        Ok(Slice::arena(start, self.arena.len()))
    }

    /// Appends a header (`add-header`). Framing and hop-by-hop headers are the muxes':
    /// adding one has no effect on the wire.
    pub fn add_header(&mut self, name: &[u8], value: &[u8]) -> Result<(), NoRoom> {
        let kind = HdrKind::classify(name);
        let name = self.store(name)?;
        let value = self.store(value)?;
        self.headers.push(Header { name, value, kind, drop: false });
        Ok(())
    }

    /// Removes every header named `name` (case-insensitive); returns how many.
    pub fn del_header(&mut self, buf: &[u8], name: &[u8]) -> usize {
        self.del_header_if(buf, |n, _| n.eq_ignore_ascii_case(name))
    }

    /// Removes the headers for which `pred(name, value)` holds; returns how many.
    pub fn del_header_if(&mut self, buf: &[u8], mut pred: impl FnMut(&[u8], &[u8]) -> bool) -> usize {
        let mut n = 0;
        for i in 0..self.headers.len() {
            let h = self.headers[i];
            if !h.drop && pred(h.name.resolve(buf, &self.arena), h.value.resolve(buf, &self.arena)) {
                self.headers[i].drop = true;
                n += 1;
            }
        }
        n
    }

    /// `set-header`: removes every `name` header, then appends one with `value`.
    pub fn set_header(&mut self, buf: &[u8], name: &[u8], value: &[u8]) -> Result<(), NoRoom> {
        self.del_header(buf, name);
        self.add_header(name, value)
    }

    /// Gives header `i` a new value.
    pub fn set_header_value(&mut self, i: usize, value: &[u8]) -> Result<(), NoRoom> {
        let value = self.store(value)?;
        self.headers[i].value = value;
        Ok(())
    }

    /// Replaces the request target; the default-port normalization no longer applies.
    pub fn set_uri(&mut self, uri: &[u8]) -> Result<(), NoRoom> {
        self.uri = self.store(uri)?;
        self.uri_cut = Slice::default();
        Ok(())
    }

    /// Replaces the method.
    pub fn set_method(&mut self, method: &[u8]) -> Result<(), NoRoom> {
        self.method_raw = self.store(method)?;
        self.method = Method::from_bytes(method);
        Ok(())
    }

    /// Replaces the status and its reason.
    pub fn set_status(&mut self, status: u16, reason: &[u8]) -> Result<(), NoRoom> {
        self.reason = self.store(reason)?;
        self.status = status;
        Ok(())
    }
}

/// A header's value; one a rule wrote loses its surrounding blanks, as a parsed one
/// did (HAProxy trims values when it looks them up).
#[inline]
fn value_of<'a>(h: &Header, buf: &'a [u8], arena: &'a [u8]) -> &'a [u8] {
    let v = h.value.resolve(buf, arena);
    if h.value.in_arena() {
        super::uri::trim(v)
    } else {
        v
    }
}

/// A read view of a message head: what fetches and the outgoing mux read.
#[derive(Debug, Clone, Copy)]
pub struct MsgView<'a> {
    pub head: &'a MsgHead,
    /// The buffer the head's non-arena slices point into.
    pub buf: &'a [u8],
}

impl<'a> MsgView<'a> {
    /// The bytes of a slice of this message (buffer or arena).
    #[inline]
    pub fn bytes(&self, s: Slice) -> &'a [u8] {
        s.resolve(self.buf, &self.head.arena)
    }

    pub fn method(&self) -> &'a [u8] {
        self.bytes(self.head.method_raw)
    }

    /// The request target as it will be forwarded (default port of an absolute-form
    /// target included: this is what HAProxy's `url` returns before normalization).
    pub fn uri(&self) -> &'a [u8] {
        self.bytes(self.head.uri)
    }

    /// The request target split into its parts.
    pub fn target(&self) -> Target<'a> {
        uri::split(self.uri())
    }

    pub fn reason(&self) -> &'a [u8] {
        self.bytes(self.head.reason)
    }

    /// The value of header `h` of this message, as lookups see it (a value a rule
    /// wrote loses its surrounding blanks).
    #[inline]
    pub fn value(&self, h: &Header) -> &'a [u8] {
        value_of(h, self.buf, &self.head.arena)
    }

    /// Every header still present, in order, as (index, name, value).
    pub fn headers(&self) -> impl Iterator<Item = (usize, &'a [u8], &'a [u8])> + 'a {
        let (buf, arena) = (self.buf, &self.head.arena[..]);
        self.head
            .headers
            .iter()
            .enumerate()
            .filter(|(_, h)| !h.drop)
            .map(move |(i, h)| (i, h.name.resolve(buf, arena), value_of(h, buf, arena)))
    }

    /// The full values of the headers named `name` (case-insensitive), in order
    /// (HAProxy's `fhdr` view: commas are not separators).
    pub fn full_values(&self, name: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.headers().filter(move |(_, n, _)| n.eq_ignore_ascii_case(name)).map(|(_, _, v)| v)
    }

    /// The values of the headers named `name`, each comma-separated element on its own
    /// and trimmed (HAProxy's `hdr` view).
    pub fn values(&self, name: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.full_values(name).flat_map(uri::comma_items)
    }

    /// The first full value of header `name`.
    pub fn first(&self, name: &'a [u8]) -> Option<&'a [u8]> {
        self.full_values(name).next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head_of(buf: &[u8], hdrs: &[(&str, &str)]) -> MsgHead {
        let mut head = MsgHead { arena_max: 1024, ..MsgHead::default() };
        for (n, v) in hdrs {
            let ns = memchr::memmem::find(buf, n.as_bytes()).unwrap();
            let vs = ns + n.len() + 2;
            head.headers.push(Header {
                name: Slice { start: ns as u32, end: (ns + n.len()) as u32 },
                value: Slice { start: vs as u32, end: (vs + v.len()) as u32 },
                kind: HdrKind::classify(n.as_bytes()),
                drop: false,
            });
        }
        head
    }

    #[test]
    fn edits_are_seen_by_later_reads() {
        let buf = b"Host: a\r\nX-A: 1, 2\r\nX-B: b\r\n";
        let mut head = head_of(buf, &[("Host", "a"), ("X-A", "1, 2"), ("X-B", "b")]);
        let v = head.view(buf);
        assert_eq!(v.values(b"x-a").collect::<Vec<_>>(), [&b"1"[..], b"2"]);
        assert_eq!(v.first(b"X-A"), Some(&b"1, 2"[..]));
        head.set_header(buf, b"x-a", b"new").unwrap();
        head.add_header(b"X-C", b"c").unwrap();
        assert_eq!(head.del_header(buf, b"x-b"), 1);
        let v = head.view(buf);
        let all: Vec<_> = v.headers().map(|(_, n, v)| (n, v)).collect();
        assert_eq!(all, [(&b"Host"[..], &b"a"[..]), (b"x-a", b"new"), (b"X-C", b"c")]);
    }

    #[test]
    fn the_arena_is_bounded() {
        let mut head = MsgHead { arena_max: 8, ..MsgHead::default() };
        assert!(head.add_header(b"X-A", b"1").is_ok());
        assert_eq!(head.add_header(b"X-Long", b"value"), Err(NoRoom));
        assert_eq!(head.failed_rewrites, 1);
        head.reset();
        assert!(head.arena.is_empty() && head.headers.is_empty() && head.arena_max == 8);
    }
}
