//! Incremental reading of HTTP/1 heads and bodies from a blocking socket, keeping every
//! consumed byte so callers can record the message exactly as it arrived.
//!
//! Bytes past the end of one message stay buffered for the next (keep-alive, pipelining).

use std::io::{self, ErrorKind, Read};

use super::{find_head_end, Framing, Headers};

/// Largest head accepted, to fail fast instead of buffering a runaway stream.
const MAX_HEAD: usize = 1 << 20;

/// A decoded body.
#[derive(Debug, Default)]
pub(crate) struct Body {
    pub data: Vec<u8>,
    pub chunks: Vec<Vec<u8>>,
    pub trailers: Headers,
}

/// A parsed request line and header block.
#[derive(Debug)]
pub(crate) struct RequestHead {
    pub method: String,
    pub target: String,
    pub version: String,
    pub headers: Headers,
}

/// A parsed status line and header block.
#[derive(Debug)]
pub(crate) struct ResponseHead {
    pub version: String,
    pub status: u16,
    pub reason: String,
    pub headers: Headers,
}

/// Reads messages off `sock`, buffering what arrived but was not consumed yet.
pub(crate) struct MsgReader<S> {
    sock: S,
    /// Received bytes not consumed by a message yet.
    buf: Vec<u8>,
    /// Bytes consumed since the last [`MsgReader::take_raw`], in arrival order.
    raw: Vec<u8>,
}

impl<S: Read> MsgReader<S> {
    pub fn new(sock: S) -> Self {
        MsgReader { sock, buf: Vec::new(), raw: Vec::new() }
    }

    pub fn get_ref(&self) -> &S {
        &self.sock
    }

    /// Received bytes nobody consumed yet.
    pub fn buffered(&self) -> &[u8] {
        &self.buf
    }

    /// Takes every buffered byte (not recorded as consumed).
    pub fn take_buffered(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// Returns and forgets the bytes consumed since the previous call.
    pub fn take_raw(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.raw)
    }

    /// One read from the socket into the buffer; `Ok(0)` is end of stream.
    pub fn fill(&mut self) -> io::Result<usize> {
        let mut tmp = [0u8; 16 * 1024];
        loop {
            match self.sock.read(&mut tmp) {
                Ok(n) => {
                    self.buf.extend_from_slice(&tmp[..n]);
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn consume(&mut self, n: usize) -> Vec<u8> {
        let out: Vec<u8> = self.buf.drain(..n).collect();
        self.raw.extend_from_slice(&out);
        out
    }

    /// Reads one head (through the blank line). `Ok(None)` when the peer closed
    /// cleanly before sending any byte of it.
    pub fn read_head(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            if let Some(end) = find_head_end(&self.buf) {
                return Ok(Some(self.consume(end)));
            }
            if self.buf.len() > MAX_HEAD {
                return Err(invalid("head larger than 1 MiB"));
            }
            if self.fill()? == 0 {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                return Err(io::Error::new(ErrorKind::UnexpectedEof, "peer closed in the middle of a head"));
            }
        }
    }

    /// Reads through the first occurrence of `delim` (included in the result).
    pub fn read_until(&mut self, delim: &[u8]) -> io::Result<Vec<u8>> {
        loop {
            if let Some(pos) = find(&self.buf, delim) {
                return Ok(self.consume(pos + delim.len()));
            }
            if self.fill()? == 0 {
                return Err(io::Error::new(ErrorKind::UnexpectedEof, "peer closed before the delimiter"));
            }
        }
    }

    /// Reads exactly `n` bytes, calling `on_piece` for each part as it becomes available.
    fn read_exact_pieces(&mut self, n: u64, on_piece: &mut dyn FnMut(&[u8])) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut remaining = n;
        while remaining > 0 {
            if self.buf.is_empty() && self.fill()? == 0 {
                return Err(io::Error::new(ErrorKind::UnexpectedEof, "peer closed in the middle of a body"));
            }
            let take = self.buf.len().min(usize::try_from(remaining).unwrap_or(usize::MAX));
            let piece = self.consume(take);
            on_piece(&piece);
            out.extend_from_slice(&piece);
            remaining -= take as u64;
        }
        Ok(out)
    }

    /// Reads until end of stream; everything read is consumed.
    pub fn read_to_end(&mut self, on_piece: &mut dyn FnMut(&[u8])) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            if !self.buf.is_empty() {
                let piece = self.consume(self.buf.len());
                on_piece(&piece);
                out.extend_from_slice(&piece);
            }
            if self.fill()? == 0 {
                return Ok(out);
            }
        }
    }

    /// Reads one body with the given framing. `on_piece` sees each decoded piece as soon
    /// as it is complete: one chunk for chunked bodies, one socket read otherwise.
    pub fn read_body(&mut self, framing: Framing, on_piece: &mut dyn FnMut(&[u8])) -> io::Result<Body> {
        match framing {
            Framing::None => Ok(Body::default()),
            Framing::Length(n) => Ok(Body { data: self.read_exact_pieces(n, on_piece)?, ..Body::default() }),
            Framing::UntilClose => Ok(Body { data: self.read_to_end(on_piece)?, ..Body::default() }),
            Framing::Chunked => self.read_chunked(on_piece),
        }
    }

    fn read_chunked(&mut self, on_piece: &mut dyn FnMut(&[u8])) -> io::Result<Body> {
        let mut body = Body::default();
        loop {
            let line = self.read_until(b"\n")?;
            let size = parse_chunk_size(&line)?;
            if size == 0 {
                body.trailers = self.read_trailers()?;
                return Ok(body);
            }
            let data = self.read_exact_pieces(size, &mut |_| {})?;
            let crlf = self.read_until(b"\n")?;
            if trim_eol(&crlf).is_empty() {
                on_piece(&data);
                body.data.extend_from_slice(&data);
                body.chunks.push(data);
            } else {
                return Err(invalid("chunk data not followed by CRLF"));
            }
        }
    }

    fn read_trailers(&mut self) -> io::Result<Headers> {
        let mut lines = Vec::new();
        loop {
            let line = self.read_until(b"\n")?;
            if trim_eol(&line).is_empty() {
                return parse_header_lines(&lines);
            }
            lines.push(trim_eol(&line).to_vec());
        }
    }
}

/// Framing of a request body (RFC 9112 §6.3, requests: chunked wins, then length, else none).
pub(crate) fn request_framing(headers: &Headers) -> io::Result<Framing> {
    if is_chunked(headers) {
        return Ok(Framing::Chunked);
    }
    match content_length(headers)? {
        Some(n) => Ok(Framing::Length(n)),
        None => Ok(Framing::None),
    }
}

/// Framing of a response to `method` (RFC 9112 §6.3, responses).
pub(crate) fn response_framing(method: &str, status: u16, headers: &Headers) -> io::Result<Framing> {
    let no_body = method.eq_ignore_ascii_case("HEAD")
        || (100..200).contains(&status)
        || status == 204
        || status == 304
        || (method.eq_ignore_ascii_case("CONNECT") && (200..300).contains(&status));
    if no_body {
        return Ok(Framing::None);
    }
    if is_chunked(headers) {
        return Ok(Framing::Chunked);
    }
    match content_length(headers)? {
        Some(n) => Ok(Framing::Length(n)),
        None => Ok(Framing::UntilClose),
    }
}

fn is_chunked(headers: &Headers) -> bool {
    let codings: Vec<&str> = headers.get_all("transfer-encoding").iter().flat_map(|v| v.split(',')).collect();
    codings.last().is_some_and(|c| c.trim().eq_ignore_ascii_case("chunked"))
}

fn content_length(headers: &Headers) -> io::Result<Option<u64>> {
    let Some(v) = headers.get("content-length") else { return Ok(None) };
    // A list of identical values is one length (RFC 9110 §8.6).
    let mut values = v.split(',').map(str::trim);
    let first = values.next().unwrap_or_default();
    let n: u64 = first.parse().map_err(|_| invalid("bad content-length"))?;
    if values.any(|other| other != first) {
        return Err(invalid("conflicting content-length values"));
    }
    Ok(Some(n))
}

fn parse_chunk_size(line: &[u8]) -> io::Result<u64> {
    let line = trim_eol(line);
    let size = line.split(|&b| b == b';').next().unwrap_or_default();
    let size = std::str::from_utf8(size).map_err(|_| invalid("chunk size is not ASCII"))?.trim();
    u64::from_str_radix(size, 16).map_err(|_| invalid("bad chunk size"))
}

/// Parses a request head (`raw` through the blank line).
pub(crate) fn parse_request_head(raw: &[u8]) -> io::Result<RequestHead> {
    let lines = head_lines(raw);
    let (first, rest) = lines.split_first().ok_or_else(|| invalid("empty head"))?;
    let first = String::from_utf8_lossy(first);
    let mut parts = first.splitn(3, ' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(invalid("bad request line"));
    };
    let owned: Vec<Vec<u8>> = rest.iter().map(|l| l.to_vec()).collect();
    Ok(RequestHead {
        method: method.to_string(),
        target: target.to_string(),
        version: version.to_string(),
        headers: parse_header_lines(&owned)?,
    })
}

/// Parses a response head (`raw` through the blank line).
pub(crate) fn parse_response_head(raw: &[u8]) -> io::Result<ResponseHead> {
    let lines = head_lines(raw);
    let (first, rest) = lines.split_first().ok_or_else(|| invalid("empty head"))?;
    let first = String::from_utf8_lossy(first);
    let mut parts = first.splitn(3, ' ');
    let version = parts.next().unwrap_or_default().to_string();
    let status = parts.next().and_then(|s| s.parse::<u16>().ok()).ok_or_else(|| invalid("bad status line"))?;
    let reason = parts.next().unwrap_or_default().to_string();
    if !version.starts_with("HTTP/") {
        return Err(invalid("bad status line"));
    }
    let owned: Vec<Vec<u8>> = rest.iter().map(|l| l.to_vec()).collect();
    Ok(ResponseHead { version, status, reason, headers: parse_header_lines(&owned)? })
}

/// The lines of a head without their line endings, stopping at the blank line.
fn head_lines(raw: &[u8]) -> Vec<&[u8]> {
    raw.split(|&b| b == b'\n').map(trim_eol).take_while(|l| !l.is_empty()).collect()
}

/// `name: value` lines; a line starting with a space or tab continues the previous value
/// (obsolete folding, kept visible as a single space).
fn parse_header_lines(lines: &[Vec<u8>]) -> io::Result<Headers> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in lines {
        if line.starts_with(b" ") || line.starts_with(b"\t") {
            let (_, value) = out.last_mut().ok_or_else(|| invalid("folded line before any header"))?;
            value.push(' ');
            value.push_str(String::from_utf8_lossy(line).trim());
            continue;
        }
        let colon = line.iter().position(|&b| b == b':').ok_or_else(|| invalid("header line without ':'"))?;
        let name = String::from_utf8_lossy(&line[..colon]).into_owned();
        let value = String::from_utf8_lossy(&line[colon + 1..]).trim_matches([' ', '\t']).to_string();
        out.push((name, value));
    }
    Ok(Headers(out))
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(ErrorKind::InvalidData, msg.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads a request from `input` delivered in pieces of `step` bytes.
    fn read_all(input: &[u8], step: usize) -> (RequestHead, Body, Vec<u8>) {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(self.1).min(out.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut r = MsgReader::new(Trickle(input, step));
        let head = r.read_head().unwrap().unwrap();
        let parsed = parse_request_head(&head).unwrap();
        let framing = request_framing(&parsed.headers).unwrap();
        let body = r.read_body(framing, &mut |_| {}).unwrap();
        (parsed, body, r.take_raw())
    }

    #[test]
    fn chunked_request_split_at_every_offset() {
        let input = b"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nT: v\r\n\r\nNEXT";
        for step in 1..input.len() {
            let (head, body, raw) = read_all(input, step);
            assert_eq!(head.method, "POST");
            assert_eq!(head.target, "/x");
            assert_eq!(head.headers.names(), vec!["Host", "Transfer-Encoding"]);
            assert_eq!(body.data, b"abcde");
            assert_eq!(body.chunks, vec![b"abc".to_vec(), b"de".to_vec()]);
            assert_eq!(body.trailers.get("t"), Some("v"));
            assert_eq!(raw, &input[..input.len() - 4]);
        }
    }

    #[test]
    fn content_length_body() {
        let (_, body, raw) = read_all(b"PUT / HTTP/1.1\r\nContent-Length: 3\r\n\r\nxyzGET", 5);
        assert_eq!(body.data, b"xyz");
        assert!(raw.ends_with(b"xyz"));
    }

    #[test]
    fn response_framing_rules() {
        let cl = Headers(vec![("Content-Length".into(), "5".into())]);
        assert_eq!(response_framing("HEAD", 200, &cl).unwrap(), Framing::None);
        assert_eq!(response_framing("GET", 204, &cl).unwrap(), Framing::None);
        assert_eq!(response_framing("GET", 200, &cl).unwrap(), Framing::Length(5));
        assert_eq!(response_framing("GET", 200, &Headers::default()).unwrap(), Framing::UntilClose);
        let bad = Headers(vec![("Content-Length".into(), "5, 6".into())]);
        assert!(response_framing("GET", 200, &bad).is_err());
    }

    #[test]
    fn status_line_without_reason() {
        let h = parse_response_head(b"HTTP/1.1 200\r\nA:b\r\n\r\n").unwrap();
        assert_eq!((h.status, h.reason.as_str(), h.headers.get("a")), (200, "", Some("b")));
        assert!(parse_response_head(b"garbage\r\n\r\n").is_err());
    }
}
