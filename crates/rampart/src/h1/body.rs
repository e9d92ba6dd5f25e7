//! Body forwarding for both directions, streamed as it arrives (never buffered whole):
//! bytes of known length go through splice(2) when there are many of them, chunked
//! bodies are validated chunk by chunk while copied, and until-close bodies run to the
//! end of the stream. HAProxy counterpart: the data phase of mux_h1.c.

use std::time::Duration;

use rampart_proto::h1::{ChunkedState, Framing, H1Error};

use crate::io::{read_some, write_all, IoError, Sock};
use crate::splice::{forward, Activity, DirTimeouts};

/// Below this many bytes left, copying through user space is cheaper than setting up
/// a splice (two system calls per hop either way, but no pipe).
pub const SPLICE_MIN: u64 = 64 * 1024;

/// Where the body of a message stands.
#[derive(Debug, Clone)]
pub enum Body {
    /// Bytes left of a `Content-Length` body.
    Length(u64),
    Chunked(ChunkedState),
    /// Ends when the sender closes.
    UntilClose,
    Done,
}

impl Body {
    pub fn new(framing: Framing) -> Body {
        match framing {
            Framing::None | Framing::Length(0) => Body::Done,
            Framing::Length(n) => Body::Length(n),
            Framing::Chunked => Body::Chunked(ChunkedState::new()),
            Framing::UntilClose => Body::UntilClose,
        }
    }

    pub fn is_done(&self) -> bool {
        matches!(self, Body::Done)
    }

    /// How many of the bytes at the start of `avail` belong to this body; updates the
    /// state. Bytes beyond belong to the next message.
    pub fn take(&mut self, avail: &[u8]) -> Result<usize, H1Error> {
        let n = match self {
            Body::Done => 0,
            Body::Length(left) => {
                let n = (*left).min(avail.len() as u64);
                *left -= n;
                if *left == 0 {
                    *self = Body::Done;
                }
                n as usize
            }
            Body::Chunked(state) => {
                let (n, done) = state.scan(avail)?;
                if done {
                    *self = Body::Done;
                }
                n
            }
            Body::UntilClose => avail.len(),
        };
        Ok(n)
    }
}

/// The data of a chunked body without its framing, decoded as the (already checked)
/// body bytes arrive: what `req.body` sees of a chunked request.
#[derive(Debug, Default)]
pub struct Dechunk {
    walk: Unchunk,
    pub data: Vec<u8>,
}

impl Dechunk {
    /// Decodes the next raw body bytes (size lines, chunk data, trailers).
    pub fn feed(&mut self, raw: &[u8]) {
        let data = &mut self.data;
        self.walk.feed(raw, |d| data.extend_from_slice(d));
    }
}

/// A chunked body read as what it carries, for a side of another protocol: runs of
/// chunk data as they arrive, then the trailer section. The bytes were checked by the
/// side that received them (`Body::take`); a walk that meets what it cannot read stops.
#[derive(Debug, Default)]
pub struct Unchunk {
    state: ChunkedState,
    /// The trailer section as received (`name: value` lines with their CRLF, the final
    /// CRLF left out).
    trailers: Vec<u8>,
    /// A byte the chunk grammar refused: nothing more is read.
    broken: bool,
}

impl Unchunk {
    /// Walks the next raw body bytes, calling `data` with each run of chunk data.
    pub fn feed(&mut self, raw: &[u8], mut data: impl FnMut(&[u8])) {
        let mut i = 0;
        while i < raw.len() && !self.broken && !self.state.is_done() {
            let left = self.state.data_left();
            if left > 0 {
                let n = left.min((raw.len() - i) as u64) as usize;
                data(&raw[i..i + n]);
                self.state.skip_data(n as u64);
                i += n;
                continue;
            }
            let trailer = self.state.in_trailers();
            match self.state.scan(&raw[i..i + 1]) {
                Ok(_) if trailer => self.trailers.push(raw[i]),
                Ok(_) => {}
                Err(_) => self.broken = true,
            }
            i += 1;
        }
    }

    /// Whether the body's end (the last chunk, the trailers, the final CRLF) was read.
    pub fn is_done(&self) -> bool {
        self.state.is_done()
    }

    /// The trailer fields, once the body ended (none for most bodies).
    pub fn trailers(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let section = self.trailers.strip_suffix(b"\r\n").unwrap_or(&self.trailers);
        section.split(|&b| b == b'\n').filter_map(|line| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let colon = line.iter().position(|&b| b == b':')?;
            Some((&line[..colon], line[colon + 1..].trim_ascii()))
        })
    }
}

/// Why forwarding a body stopped early.
#[derive(Debug)]
pub enum BodyError {
    /// The sender's side failed (timeout, reset, early close) or sent bad framing.
    From(IoError),
    /// The receiver's side failed.
    To(IoError),
    Framing(H1Error),
}

/// Forwards the rest of a body from `from` to `to`. `buf` is scratch space that may
/// already hold bytes read from `from` beyond what was forwarded (they are processed
/// first); on return it holds the bytes read past the end of the body. `activity` is
/// bumped whenever bytes reach `to`.
pub async fn forward_rest<A: Sock, B: Sock>(
    from: &A,
    to: &B,
    body: &mut Body,
    buf: &mut Vec<u8>,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    activity: &Activity,
) -> Result<(), BodyError> {
    loop {
        if !buf.is_empty() {
            let n = body.take(buf).map_err(BodyError::Framing)?;
            if n > 0 {
                write_all(to, &buf[..n], write_timeout).await.map_err(BodyError::To)?;
                activity.bump();
                activity.add(n as u64);
                buf.drain(..n);
            }
        }
        match body {
            Body::Done => return Ok(()),
            Body::Length(left) if *left >= SPLICE_MIN && buf.is_empty() => {
                let t = DirTimeouts { read: read_timeout, write: write_timeout, fin: None, indep: false };
                let moved = forward(from, to, Some(*left), t, activity).await.map_err(BodyError::From)?;
                activity.add(moved);
                *left -= moved;
                if *left == 0 {
                    *body = Body::Done;
                }
                continue;
            }
            Body::UntilClose if buf.is_empty() => {
                let t = DirTimeouts { read: read_timeout, write: write_timeout, fin: None, indep: false };
                let moved = forward(from, to, None, t, activity).await.map_err(BodyError::From)?;
                activity.add(moved);
                *body = Body::Done;
                return Ok(());
            }
            _ => {}
        }
        if buf.is_empty() {
            match read_some(from, buf, read_timeout).await {
                Ok(0) => return Err(BodyError::From(IoError::Closed)),
                Ok(_) => {}
                Err(e) => return Err(BodyError::From(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_body_takes_only_its_bytes() {
        let mut b = Body::new(Framing::Length(3));
        assert_eq!(b.take(b"ab").unwrap(), 2);
        assert_eq!(b.take(b"cdef").unwrap(), 1);
        assert!(b.is_done());
    }

    #[test]
    fn chunked_bodies_decode_to_their_data_whatever_the_split() {
        let raw = b"3\r\nabc\r\n10;ext=1\r\n0123456789abcdef\r\n0\r\nX-T: 1\r\n\r\n";
        for cut in 0..raw.len() {
            let mut d = Dechunk::default();
            d.feed(&raw[..cut]);
            d.feed(&raw[cut..]);
            assert_eq!(d.data, b"abc0123456789abcdef", "split at {cut}");
        }
    }

    #[test]
    fn a_walk_hands_on_the_data_and_keeps_the_trailers_whatever_the_split() {
        let raw = b"3\r\nabc\r\n5\r\nhello\r\n0\r\ngrpc-status: 0\r\ngrpc-message: ok \r\n\r\n";
        for cut in 0..raw.len() {
            let (mut u, mut data) = (Unchunk::default(), Vec::new());
            u.feed(&raw[..cut], |d| data.extend_from_slice(d));
            assert!(!u.is_done() || cut == raw.len(), "split at {cut}");
            u.feed(&raw[cut..], |d| data.extend_from_slice(d));
            assert_eq!(data, b"abchello", "split at {cut}");
            assert!(u.is_done(), "split at {cut}");
            let t: Vec<_> = u.trailers().collect();
            assert_eq!(t, [(&b"grpc-status"[..], &b"0"[..]), (&b"grpc-message"[..], &b"ok"[..])], "split at {cut}");
        }
        let mut u = Unchunk::default();
        u.feed(b"2\r\nab\r\n0\r\n\r\n", |_| {});
        assert!(u.is_done() && u.trailers().next().is_none());
    }

    #[test]
    fn empty_framings_are_done_at_once() {
        assert!(Body::new(Framing::None).is_done());
        assert!(Body::new(Framing::Length(0)).is_done());
        assert!(!Body::new(Framing::UntilClose).is_done());
    }
}
