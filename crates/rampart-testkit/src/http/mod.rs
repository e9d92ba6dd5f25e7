//! HTTP/1 messages as the tests see them: what a backend received ([`Request`]) and what
//! a client received ([`Response`]), each with its raw bytes next to the parsed view.
//!
//! The parser lives in `reader` and is deliberately independent from `rampart-proto`: the
//! testkit judges rampart's codec, so it must not share its bugs. It is lenient (it accepts
//! what a test may want to look at) and never the thing under test.

mod reader;

pub(crate) use reader::{parse_request_head, parse_response_head, request_framing, response_framing, MsgReader};

use std::fmt;
use std::net::SocketAddr;
use std::time::Instant;

/// An ordered header list, names and values as received (case preserved).
///
/// Lookups by name ignore ASCII case; the list itself keeps duplicates and order so a
/// test can assert exactly what went over the wire.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Headers(pub Vec<(String, String)>);

impl Headers {
    /// The value of the first header called `name` (ASCII case-insensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The values of every header called `name`, in received order.
    pub fn get_all(&self, name: &str) -> Vec<&str> {
        self.0.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect()
    }

    /// Whether at least one header is called `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The header names in received order and case (useful to assert case and order).
    pub fn names(&self) -> Vec<&str> {
        self.0.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// Removes every header called `name`; returns how many were removed.
    pub fn remove_all(&mut self, name: &str) -> usize {
        let before = self.0.len();
        self.0.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        before - self.0.len()
    }

    /// Number of header lines.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no header at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Iterates over `(name, value)` pairs in received order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// Whether the comma-separated `name` headers contain `token` (ASCII case-insensitive),
    /// e.g. `has_token("connection", "close")`.
    pub fn has_token(&self, name: &str, token: &str) -> bool {
        self.get_all(name).iter().flat_map(|v| v.split(',')).any(|t| t.trim().eq_ignore_ascii_case(token))
    }
}

/// One request as a test backend received it.
#[derive(Clone, PartialEq, Eq)]
pub struct Request {
    /// Sequence number of the server-side connection it came on, in accept order from 1
    /// within one backend. Equal ids mean the proxy reused a connection.
    pub conn: u64,
    /// Peer address of that connection (the proxy's source port).
    pub peer: SocketAddr,
    /// Position of this request on its connection, from 1 (keep-alive shows as 2, 3 ...).
    pub seq: u64,
    /// Head and body bytes exactly as received, chunk framing and trailers included.
    pub raw: Vec<u8>,
    /// Request method, e.g. `GET`.
    pub method: String,
    /// Request target as sent, e.g. `/a?b=c` (named after the common case).
    pub path: String,
    /// Protocol version token, e.g. `HTTP/1.1`.
    pub version: String,
    /// Header lines in received order and case.
    pub headers: Headers,
    /// Decoded body (chunk framing removed).
    pub body: Vec<u8>,
    /// Trailer fields of a chunked body.
    pub trailers: Headers,
}

impl Request {
    /// The raw head (request line and header lines, up to and including the blank line).
    pub fn raw_head(&self) -> &[u8] {
        &self.raw[..head_len(&self.raw)]
    }

    /// The raw head as text (lossy), handy in assertions.
    pub fn raw_head_str(&self) -> String {
        String::from_utf8_lossy(self.raw_head()).into_owned()
    }

    /// The body as text (lossy).
    pub fn body_str(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A non-final (1xx) response received before the final one.
#[derive(Clone, PartialEq, Eq)]
pub struct Interim {
    /// Status code (100 to 199).
    pub status: u16,
    /// Reason phrase as sent.
    pub reason: String,
    /// Header lines in received order and case.
    pub headers: Headers,
    /// The raw head, blank line included.
    pub raw: Vec<u8>,
}

/// How the body of a received message was delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No body by definition (HEAD, 1xx, 204, 304, 2xx to CONNECT, or a request without length).
    None,
    /// `Content-Length`.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Delimited by the connection close (responses only).
    UntilClose,
}

/// One final response as a client received it.
#[derive(Clone, PartialEq, Eq)]
pub struct Response {
    /// Protocol version token, e.g. `HTTP/1.1`.
    pub version: String,
    /// Status code.
    pub status: u16,
    /// Reason phrase as sent (may be empty).
    pub reason: String,
    /// Header lines in received order and case.
    pub headers: Headers,
    /// Decoded body (chunk framing removed).
    pub body: Vec<u8>,
    /// How the body was delimited.
    pub framing: Framing,
    /// Body chunks as framed by the sender (chunked encoding only; empty otherwise).
    pub chunks: Vec<Vec<u8>>,
    /// Trailer fields of a chunked body.
    pub trailers: Headers,
    /// 1xx responses received before this one, in order.
    pub interim: Vec<Interim>,
    /// Head and body bytes of this final response exactly as received.
    pub raw: Vec<u8>,
}

impl Response {
    /// The body as text (lossy).
    pub fn body_str(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The raw head (status line and header lines, blank line included).
    pub fn raw_head(&self) -> &[u8] {
        &self.raw[..head_len(&self.raw)]
    }

    /// The raw head as text (lossy).
    pub fn raw_head_str(&self) -> String {
        String::from_utf8_lossy(self.raw_head()).into_owned()
    }
}

/// A body piece with the moment it was fully received.
#[derive(Clone)]
pub struct TimedPiece {
    /// When the piece was complete in the client.
    pub at: Instant,
    /// The decoded bytes (one chunk for chunked bodies, one socket read otherwise).
    pub data: Vec<u8>,
}

/// A response plus the arrival time of each body piece, from
/// [`RawClient::read_response_timed`](crate::RawClient::read_response_timed).
#[derive(Clone, Debug)]
pub struct TimedResponse {
    /// The response.
    pub response: Response,
    /// When the head was complete.
    pub head_at: Instant,
    /// Body pieces in arrival order.
    pub pieces: Vec<TimedPiece>,
}

impl TimedResponse {
    /// Time between consecutive pieces (first entry: from the head to the first piece).
    pub fn gaps(&self) -> Vec<std::time::Duration> {
        let mut last = self.head_at;
        self.pieces
            .iter()
            .map(|p| {
                let gap = p.at.saturating_duration_since(last);
                last = p.at;
                gap
            })
            .collect()
    }
}

// === Debug: bytes shown as escaped text, not as lists of numbers ===

/// Shows bytes as an escaped byte string in `Debug` output.
pub(crate) struct ShowBytes<'a>(pub &'a [u8]);

impl fmt::Debug for ShowBytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("conn", &self.conn)
            .field("peer", &self.peer)
            .field("seq", &self.seq)
            .field("method", &self.method)
            .field("path", &self.path)
            .field("version", &self.version)
            .field("headers", &self.headers)
            .field("body", &ShowBytes(&self.body))
            .field("trailers", &self.trailers)
            .field("raw", &ShowBytes(&self.raw))
            .finish()
    }
}

impl fmt::Debug for Interim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interim")
            .field("status", &self.status)
            .field("reason", &self.reason)
            .field("headers", &self.headers)
            .field("raw", &ShowBytes(&self.raw))
            .finish()
    }
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chunks: Vec<ShowBytes<'_>> = self.chunks.iter().map(|c| ShowBytes(c)).collect();
        f.debug_struct("Response")
            .field("version", &self.version)
            .field("status", &self.status)
            .field("reason", &self.reason)
            .field("headers", &self.headers)
            .field("framing", &self.framing)
            .field("body", &ShowBytes(&self.body))
            .field("chunks", &chunks)
            .field("trailers", &self.trailers)
            .field("interim", &self.interim)
            .field("raw", &ShowBytes(&self.raw))
            .finish()
    }
}

impl fmt::Debug for TimedPiece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimedPiece").field("at", &self.at).field("data", &ShowBytes(&self.data)).finish()
    }
}

/// Length of the head at the start of `raw` (through the first empty line), or all of it.
pub(crate) fn head_len(raw: &[u8]) -> usize {
    find_head_end(raw).unwrap_or(raw.len())
}

/// End offset (exclusive) of the first head in `buf`: after `\r\n\r\n` or `\n\n`.
pub(crate) fn find_head_end(buf: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(off) = buf[i..].iter().position(|&b| b == b'\n') {
        let nl = i + off;
        let rest = &buf[nl + 1..];
        if rest.starts_with(b"\n") {
            return Some(nl + 2);
        }
        if rest.starts_with(b"\r\n") {
            return Some(nl + 3);
        }
        i = nl + 1;
    }
    None
}

/// Removes the header lines called one of `names` from the head at the start of `raw`;
/// the body is left alone. Used by normalizers.
pub(crate) fn strip_header_lines(raw: &[u8], names: &[String]) -> Vec<u8> {
    let end = head_len(raw);
    let mut out = Vec::with_capacity(raw.len());
    let mut first = true;
    for line in raw[..end].split_inclusive(|&b| b == b'\n') {
        let name = line.split(|&b| b == b':').next().unwrap_or_default();
        let drop = !first && line.contains(&b':') && names.iter().any(|n| n.as_bytes().eq_ignore_ascii_case(name));
        if !drop {
            out.extend_from_slice(line);
        }
        first = false;
    }
    out.extend_from_slice(&raw[end..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_end_handles_crlf_and_lf() {
        assert_eq!(find_head_end(b"GET / HTTP/1.1\r\nA: b\r\n\r\nbody"), Some(24));
        assert_eq!(find_head_end(b"GET / HTTP/1.1\nA: b\n\nbody"), Some(21));
        assert_eq!(find_head_end(b"GET / HTTP/1.1\r\nA: b\r\n"), None);
    }

    #[test]
    fn strip_removes_only_named_lines_in_head() {
        let raw = b"HTTP/1.1 200 OK\r\nDate: x\r\nA: 1\r\ndate: y\r\n\r\nDate: body";
        let out = strip_header_lines(raw, &["date".to_string()]);
        assert_eq!(out, b"HTTP/1.1 200 OK\r\nA: 1\r\n\r\nDate: body");
    }

    #[test]
    fn headers_lookup_is_case_insensitive_and_ordered() {
        let h = Headers(vec![("A".into(), "1".into()), ("b".into(), "2".into()), ("a".into(), "x, close".into())]);
        assert_eq!(h.get("a"), Some("1"));
        assert_eq!(h.get_all("A"), vec!["1", "x, close"]);
        assert!(h.has_token("a", "CLOSE"));
        assert_eq!(h.names(), vec!["A", "b", "a"]);
    }
}
