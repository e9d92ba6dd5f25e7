//! The CGI response head an application writes at the start of its STDOUT (RFC 3875
//! §6): header lines up to an empty line, without a status line. `Status: 404 Not
//! Found` gives the status, else a `Location:` header makes it `302 Moved
//! Temporarily`, else it is `200 OK` (as HAProxy's `h1_postparse_res_hdrs()` decides,
//! the last of `Status`/`Location` winning). The `Status` header itself is marked
//! `drop`: it is not forwarded.

use crate::http::{HdrKind, Header, Slice};

/// The most header lines a head may have (HAProxy's `global.tune.max_http_hdr`).
pub const MAX_HEADERS: usize = 101;

/// Where the reason phrase comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reason {
    /// The text after the code of a `Status:` header (maybe empty).
    In(Slice),
    /// The one that goes with the status rampart chose (`OK`, `Moved Temporarily`).
    #[default]
    Default,
}

/// A parsed CGI response head, its slices pointing into the parsed bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CgiHead {
    pub status: u16,
    pub reason: Reason,
    /// Every header line in order; `Status` and hop-by-hop ones marked `drop`.
    pub headers: Vec<Header>,
    /// A `Content-Length` header's value.
    pub length: Option<u64>,
    /// Bytes of the head, the empty line included.
    pub len: usize,
}

/// Why the start of STDOUT is not a CGI response head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgiError {
    /// A malformed header line.
    Invalid,
    /// No end of head within the size allowed, or too many headers.
    TooLarge,
    /// A `Status:` header without a three-digit code.
    BadStatus,
    /// A malformed `Content-Length`, or two that differ.
    BadLength,
    /// `Transfer-Encoding` (rampart does not decode a chunked CGI body).
    TransferEncoding,
}

/// Parses the head at the start of `buf`: `Ok(true)` once it ended, `Ok(false)` while
/// incomplete (unless `buf` reached `max_len` bytes: then it is too large).
pub fn parse_cgi_head(buf: &[u8], max_len: usize, head: &mut CgiHead) -> Result<bool, CgiError> {
    head.headers.clear();
    let window = &buf[..buf.len().min(max_len).min(u32::MAX as usize)];
    let mut raw = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let (len, fields) = match httparse::parse_headers(window, &mut raw) {
        Ok(httparse::Status::Complete((len, fields))) => (len, fields),
        Ok(httparse::Status::Partial) if buf.len() >= max_len => return Err(CgiError::TooLarge),
        Ok(httparse::Status::Partial) => return Ok(false),
        Err(httparse::Error::TooManyHeaders) => return Err(CgiError::TooLarge),
        Err(_) => return Err(CgiError::Invalid),
    };
    let base = window.as_ptr() as usize;
    let at = |s: &[u8]| {
        let start = (s.as_ptr() as usize).wrapping_sub(base);
        // httparse hands out sub-slices of the window; an empty value may point anywhere
        let start = if s.is_empty() || start > window.len() { 0 } else { start };
        Slice { start: start as u32, end: (start + s.len()) as u32 }
    };
    let (mut status, mut reason, mut length) = (None, Reason::Default, None);
    for f in fields.iter() {
        let name = f.name.as_bytes();
        let value = f.value.trim_ascii();
        let mut drop = false;
        let kind = HdrKind::classify(name);
        if name.eq_ignore_ascii_case(b"status") {
            let (code, why) = parse_status(value)?;
            status = Some(code);
            reason = Reason::In(if why.is_empty() { Slice::default() } else { at(why) });
            drop = true;
        } else if name.eq_ignore_ascii_case(b"location") {
            status = Some(302);
            reason = Reason::Default;
        }
        match kind {
            HdrKind::ContentLength => {
                let n = parse_length(value)?;
                if length.replace(n).is_some_and(|prev| prev != n) {
                    return Err(CgiError::BadLength);
                }
            }
            HdrKind::TransferEncoding => return Err(CgiError::TransferEncoding),
            HdrKind::Connection | HdrKind::KeepAlive | HdrKind::ProxyConnection | HdrKind::Upgrade => drop = true,
            _ => {}
        }
        let value = if value.is_empty() { Slice::default() } else { at(value) };
        head.headers.push(Header { name: at(name), value, kind, drop });
    }
    head.status = status.unwrap_or(200);
    head.reason = reason;
    head.length = length;
    head.len = len;
    Ok(true)
}

/// The reason phrase rampart gives a status it chose itself.
pub fn default_reason(status: u16) -> &'static str {
    match status {
        302 => "Moved Temporarily",
        _ => "OK",
    }
}

/// A `Status:` value: a three-digit code, blanks, the reason.
fn parse_status(v: &[u8]) -> Result<(u16, &[u8]), CgiError> {
    let end = v.iter().position(|c| !c.is_ascii_digit()).unwrap_or(v.len());
    if end != 3 || v[0] == b'0' {
        return Err(CgiError::BadStatus);
    }
    let code = v[..3].iter().fold(0u16, |n, c| n * 10 + u16::from(c - b'0'));
    if end < v.len() && !matches!(v[end], b' ' | b'\t') {
        return Err(CgiError::BadStatus);
    }
    Ok((code, v[end..].trim_ascii_start()))
}

/// A `Content-Length` value: digits only.
fn parse_length(v: &[u8]) -> Result<u64, CgiError> {
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return Err(CgiError::BadLength);
    }
    Ok(v.iter().fold(0u64, |n, c| n * 10 + u64::from(c - b'0')))
}
