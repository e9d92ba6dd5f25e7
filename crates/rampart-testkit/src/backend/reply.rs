//! [`Reply`]: the response an [`HttpBackend`](crate::HttpBackend) sends, with its framing
//! and timing (delay, paced pieces for streaming, close after sending).

use std::io::{self, Write};
use std::net::TcpStream;
use std::thread;
use std::time::Duration;

/// How a [`Reply`] body is delimited on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyFraming {
    /// A `Content-Length` header (added unless the reply sets one itself).
    ContentLength,
    /// `Transfer-Encoding: chunked` (added unless the reply sets one), one chunk per piece.
    Chunked,
    /// No length: the body ends when the backend closes the connection.
    UntilClose,
    /// No length header and no body bytes (for 204, 304 and the like).
    NoBody,
}

/// A response for a test backend to send, built fluently:
/// `Reply::ok().header("X-A", "1").body("hello")`.
///
/// Header names are written exactly as given (case kept), in order, before the framing
/// header the testkit adds. For bytes no builder can produce, use [`Reply::raw`].
#[derive(Clone, Debug)]
pub struct Reply {
    version: String,
    status: u16,
    reason: Option<String>,
    headers: Vec<(String, String)>,
    pieces: Vec<Vec<u8>>,
    framing: ReplyFraming,
    delay: Duration,
    pace: Duration,
    close: bool,
    raw: Option<Vec<u8>>,
}

impl Reply {
    /// A reply with `status`, an empty body and `Content-Length` framing.
    pub fn new(status: u16) -> Reply {
        Reply {
            version: "HTTP/1.1".to_string(),
            status,
            reason: None,
            headers: Vec::new(),
            pieces: Vec::new(),
            framing: ReplyFraming::ContentLength,
            delay: Duration::ZERO,
            pace: Duration::ZERO,
            close: false,
            raw: None,
        }
    }

    /// `200 OK` with an empty body.
    pub fn ok() -> Reply {
        Reply::new(200)
    }

    /// Sends exactly `bytes` instead of building a message (framing, headers and body
    /// settings are ignored; `delay` and `close` still apply).
    pub fn raw(bytes: impl Into<Vec<u8>>) -> Reply {
        Reply { raw: Some(bytes.into()), ..Reply::new(200) }
    }

    /// Overrides the reason phrase (default: the standard one for the status, or empty).
    pub fn reason(mut self, reason: &str) -> Reply {
        self.reason = Some(reason.to_string());
        self
    }

    /// Overrides the version token of the status line (default `HTTP/1.1`).
    pub fn version(mut self, version: &str) -> Reply {
        self.version = version.to_string();
        self
    }

    /// Appends a header line, name written as given.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Sets the body as one piece.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Reply {
        self.pieces = vec![body.into()];
        self
    }

    /// Uses chunked framing: each piece of the body is one chunk.
    pub fn chunked(mut self) -> Reply {
        self.framing = ReplyFraming::Chunked;
        self
    }

    /// Streams a chunked body: one chunk per piece, `every` apart (the first right after
    /// the head). The "chunks reach the client chunk by chunk" shape of server-sent events.
    pub fn chunks<I, B>(mut self, pieces: I, every: Duration) -> Reply
    where
        I: IntoIterator<Item = B>,
        B: Into<Vec<u8>>,
    {
        self.pieces = pieces.into_iter().map(Into::into).collect();
        self.framing = ReplyFraming::Chunked;
        self.pace = every;
        self
    }

    /// Waits `every` between body pieces, whatever the framing.
    pub fn pace(mut self, every: Duration) -> Reply {
        self.pace = every;
        self
    }

    /// No length header: the body is delimited by closing the connection.
    pub fn until_close(mut self) -> Reply {
        self.framing = ReplyFraming::UntilClose;
        self.close = true;
        self
    }

    /// No length header and no body bytes.
    pub fn without_body(mut self) -> Reply {
        self.framing = ReplyFraming::NoBody;
        self.pieces.clear();
        self
    }

    /// Waits `delay` before sending anything.
    pub fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Closes the connection after this reply (no header is added for it).
    pub fn close(mut self) -> Reply {
        self.close = true;
        self
    }

    /// Whether the connection is closed after this reply.
    pub(crate) fn closes(&self) -> bool {
        self.close
    }

    /// Writes the reply; `head_only` suppresses body bytes (answer to HEAD).
    pub(crate) fn write_to(&self, mut out: &TcpStream, head_only: bool) -> io::Result<()> {
        if !self.delay.is_zero() {
            thread::sleep(self.delay);
        }
        for (i, segment) in self.segments(head_only).iter().enumerate() {
            if i > 0 && !self.pace.is_zero() {
                thread::sleep(self.pace);
            }
            out.write_all(segment)?;
        }
        Ok(())
    }

    /// The bytes to send, one entry per write. Without pacing everything goes in one
    /// write; with pacing, the head travels with the first piece and the last-chunk
    /// marker with the last. Servers usually write a head and its body together, and
    /// haproxy 2.6.12 was seen (about 1 in 100) to stall a body sent separately after a
    /// `100 Continue`: one write per piece keeps the backend's shape predictable.
    fn segments(&self, head_only: bool) -> Vec<Vec<u8>> {
        if let Some(raw) = &self.raw {
            return vec![raw.clone()];
        }
        let mut segments = vec![self.head()];
        if head_only || self.framing == ReplyFraming::NoBody {
            return segments;
        }
        for (i, piece) in self.pieces.iter().enumerate() {
            let encoded = match self.framing {
                ReplyFraming::Chunked if piece.is_empty() => Vec::new(),
                ReplyFraming::Chunked => {
                    let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
                    chunk.extend_from_slice(piece);
                    chunk.extend_from_slice(b"\r\n");
                    chunk
                }
                _ => piece.clone(),
            };
            match segments.last_mut() {
                Some(last) if i == 0 || self.pace.is_zero() => last.extend_from_slice(&encoded),
                _ => segments.push(encoded),
            }
        }
        if let Some(last) = segments.last_mut().filter(|_| self.framing == ReplyFraming::Chunked) {
            last.extend_from_slice(b"0\r\n\r\n");
        }
        segments
    }

    fn head(&self) -> Vec<u8> {
        let reason = self.reason.clone().unwrap_or_else(|| standard_reason(self.status).to_string());
        let mut head = format!("{} {} {}\r\n", self.version, self.status, reason);
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        let has = |n: &str| self.headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(n));
        match self.framing {
            ReplyFraming::ContentLength if !has("content-length") => {
                let len: usize = self.pieces.iter().map(Vec::len).sum();
                head.push_str(&format!("Content-Length: {len}\r\n"));
            }
            ReplyFraming::Chunked if !has("transfer-encoding") => head.push_str("Transfer-Encoding: chunked\r\n"),
            _ => {}
        }
        head.push_str("\r\n");
        head.into_bytes()
    }
}

/// Reason phrases for the statuses tests commonly use.
fn standard_reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_adds_length_unless_given() {
        let head = Reply::ok().header("X-A", "1").body("hey").head();
        assert_eq!(head, b"HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: 3\r\n\r\n");
        let head = Reply::new(404).header("content-length", "9").head();
        assert_eq!(head, b"HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\n\r\n");
        let head = Reply::new(299).chunked().head();
        assert_eq!(head, b"HTTP/1.1 299 \r\nTransfer-Encoding: chunked\r\n\r\n");
    }

    #[test]
    fn segments_follow_pacing() {
        let r = Reply::ok().body("abc");
        assert_eq!(r.segments(false), vec![b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc".to_vec()]);
        assert_eq!(r.segments(true), vec![b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n".to_vec()]);
        let r = Reply::ok().chunks(["a", "", "bc"], Duration::from_millis(1));
        let expected: Vec<Vec<u8>> = vec![
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n".to_vec(),
            b"".to_vec(),
            b"2\r\nbc\r\n0\r\n\r\n".to_vec(),
        ];
        assert_eq!(r.segments(false), expected);
    }
}
