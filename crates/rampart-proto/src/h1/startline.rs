//! Request and status lines, parsed by hand: HAProxy's rules are not httparse's (any
//! `HTTP/d.d` version, several blanks between the parts, empty lines before the message).
//!
//! HAProxy counterpart: the start-line states of `h1_headers_to_hdr_list` (src/h1.c),
//! then `h1_process_req_vsn` / `h1_process_res_vsn` (src/h1_htx.c). The header fields
//! that follow are httparse's job (see `head`).
//!
//! Every function here reads left to right and stops at the first invalid byte, so an
//! error found in a prefix is the error the whole input gives.

use super::types::{H1Error, Method, Slice, Version};

/// A parsed request line. `end` is the offset just after its LF.
#[derive(Debug, Clone, Copy)]
pub(super) struct RequestLine {
    pub method: Method,
    pub method_raw: Slice,
    pub uri: Slice,
    pub version: Version,
    pub end: usize,
}

/// A parsed status line. `end` is the offset just after its LF.
#[derive(Debug, Clone, Copy)]
pub(super) struct StatusLine {
    pub version: Version,
    pub status: u16,
    pub reason: Slice,
    pub end: usize,
}

/// `Ok(None)`: the line is not complete yet.
type Step<T> = Result<Option<T>, H1Error>;

/// RFC 9110 `tchar` (HAProxy's `HTTP_IS_TOKEN`, httparse's header name set).
#[inline]
pub(super) fn is_token(b: u8) -> bool {
    matches!(b,
        b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9'
        | b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+'
        | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~')
}

/// HAProxy's `HTTP_IS_VER_TOKEN`: what a version may be made of before it is checked.
#[inline]
fn is_version_char(b: u8) -> bool {
    matches!(b, b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'/')
}

/// Space or horizontal tab.
#[inline]
pub(super) fn is_spht(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// A request-target byte: visible ASCII. HAProxy refuses bytes >= 0x80 too, unless
/// `option accept-invalid-http-request` ([`is_relaxed_uri_char`]).
#[inline]
fn is_uri_char(b: u8) -> bool {
    (0x21..=0x7e).contains(&b)
}

/// A request-target byte under `accept-invalid-http-request`: non-ASCII bytes too.
#[inline]
fn is_relaxed_uri_char(b: u8) -> bool {
    is_uri_char(b) || b >= 0x80
}

/// Index of the first byte from `from` on that does not satisfy `pred`.
#[inline]
fn span(buf: &[u8], from: usize, pred: impl Fn(u8) -> bool) -> usize {
    buf[from..].iter().position(|&b| !pred(b)).map_or(buf.len(), |n| from + n)
}

/// Skips the empty lines (CRLF or bare LF) HAProxy tolerates before a message and
/// returns where the message starts: the first byte must be a token character.
pub(super) fn skip_empty_lines(buf: &[u8]) -> Step<usize> {
    let mut i = 0;
    loop {
        match buf.get(i) {
            None => return Ok(None),
            Some(b'\n') => i += 1,
            Some(b'\r') => match buf.get(i + 1) {
                None => return Ok(None),
                Some(b'\n') => i += 2,
                Some(_) => return Err(H1Error::StartLine),
            },
            Some(&b) if is_token(b) => return Ok(Some(i)),
            Some(_) => return Err(H1Error::StartLine),
        }
    }
}

/// Where the line ending at `at` (a CR or LF) stops: after `\r\n` or a bare `\n`.
fn line_end(buf: &[u8], at: usize) -> Step<usize> {
    match buf.get(at) {
        None => Ok(None),
        Some(b'\n') => Ok(Some(at + 1)),
        Some(b'\r') => match buf.get(at + 1) {
            None => Ok(None),
            Some(b'\n') => Ok(Some(at + 2)),
            Some(_) => Err(H1Error::StartLine),
        },
        Some(_) => Err(H1Error::StartLine),
    }
}

/// The byte at `at`, or "incomplete".
macro_rules! byte_at {
    ($buf:expr, $at:expr) => {
        match $buf.get($at) {
            Some(&b) => b,
            None => return Ok(None),
        }
    };
}

#[inline]
fn slice(start: usize, end: usize) -> Slice {
    Slice { start: start as u32, end: end as u32 }
}

/// Parses `method SP+ target SP+ HTTP/d.d` and its line end, starting at `start` (the
/// first byte after the empty lines, a token character).
///
/// With `relax` (`accept-invalid-http-request`), bytes >= 0x80 and `#` may be in the
/// target (the first one's offset lands in `err_pos`) and the version is not checked.
pub(super) fn parse_request_line(
    buf: &[u8],
    start: usize,
    relax: bool,
    err_pos: &mut Option<u32>,
) -> Step<RequestLine> {
    let method_end = span(buf, start, is_token);
    // a CR/LF right after the method or the target is an HTTP/0.9 request: refused
    if !is_spht(byte_at!(buf, method_end)) {
        return Err(H1Error::StartLine);
    }
    let uri_start = span(buf, method_end, is_spht);
    byte_at!(buf, uri_start);
    let uri_end = if relax { span(buf, uri_start, is_relaxed_uri_char) } else { span(buf, uri_start, is_uri_char) };
    if uri_end == uri_start || !is_spht(byte_at!(buf, uri_end)) {
        return Err(H1Error::StartLine);
    }
    if relax && err_pos.is_none() {
        // as HAProxy (since the fix for CVE-2023-45539), a `#` is let through too
        *err_pos = buf[uri_start..uri_end].iter().position(|&b| b >= 0x80 || b == b'#').map(|i| (uri_start + i) as u32);
    }
    let ver_start = span(buf, uri_end, is_spht);
    byte_at!(buf, ver_start);
    let ver_end = span(buf, ver_start, is_version_char);
    let Some(end) = line_end(buf, ver_end)? else { return Ok(None) };
    let version = match request_version(&buf[ver_start..ver_end]) {
        Err(_) if relax => relaxed_version(&buf[ver_start..ver_end]),
        v => v?,
    };
    let method_raw = &buf[start..method_end];
    // PRI is reserved for the HTTP/2 preface (`http_wait_for_request` answers 400)
    if method_raw.eq_ignore_ascii_case(b"PRI") {
        return Err(H1Error::StartLine);
    }
    Ok(Some(RequestLine {
        method: Method::from_bytes(method_raw),
        method_raw: slice(start, method_end),
        uri: slice(uri_start, uri_end),
        version,
        end,
    }))
}

/// Parses `version SP+ status [SP+ reason]` and its line end, starting at `start`.
/// With `relax` (`accept-invalid-http-response`), the version is not checked.
pub(super) fn parse_status_line(buf: &[u8], start: usize, relax: bool) -> Step<StatusLine> {
    let ver_end = span(buf, start, is_version_char);
    if !is_spht(byte_at!(buf, ver_end)) {
        return Err(H1Error::StartLine);
    }
    let code_start = span(buf, ver_end, is_spht);
    byte_at!(buf, code_start);
    let code_end = span(buf, code_start, |b| b.is_ascii_digit());
    let after_code = byte_at!(buf, code_end);
    if code_end == code_start || !(is_spht(after_code) || after_code == b'\r' || after_code == b'\n') {
        return Err(H1Error::StartLine);
    }
    let reason_start = span(buf, code_end, is_spht);
    let reason_end = span(buf, reason_start, is_reason_char);
    match buf.get(reason_end) {
        None => return Ok(None),
        Some(b'\r' | b'\n') => {}
        // RFC 9112 §4: reason-phrase = *( HTAB / SP / VCHAR / obs-text )
        // COMPAT: HAProxy forwards any byte but CR and LF; a NUL or another control
        // character would be read differently by the client's parser.
        Some(_) => return Err(H1Error::StartLine),
    }
    let Some(end) = line_end(buf, reason_end)? else { return Ok(None) };
    let version = match response_version(&buf[start..ver_end]) {
        Err(_) if relax => relaxed_version(&buf[start..ver_end]),
        v => v?,
    };
    let status = status_code(&buf[code_start..code_end])?;
    Ok(Some(StatusLine { version, status, reason: slice(reason_start, reason_end), end }))
}

/// A reason-phrase byte (RFC 9112 §4): HTAB, SP, visible ASCII or obs-text.
#[inline]
fn is_reason_char(b: u8) -> bool {
    b == b'\t' || (b >= 0x20 && b != 0x7f)
}

/// `HTTP/d.d`, exactly (case-sensitive, as `h1_process_req_vsn`).
fn request_version(v: &[u8]) -> Result<Version, H1Error> {
    if v.len() != 8 || &v[..5] != b"HTTP/" {
        return Err(H1Error::StartLine);
    }
    digit_version(v)
}

/// `????/d.d`: HAProxy only checks the slash and the digits on responses
/// (`h1_process_res_vsn`); the first four bytes are version characters anyway.
fn response_version(v: &[u8]) -> Result<Version, H1Error> {
    if v.len() != 8 || v[4] != b'/' {
        return Err(H1Error::StartLine);
    }
    digit_version(v)
}

/// A version HAProxy lets through unchecked (`h1_process_req_vsn` and
/// `h1_process_res_vsn` when `err_pos` is not -2): 1.1 when 8 bytes long with a major
/// above `1`, or `1` and a minor from `1` on; 1.0 otherwise.
fn relaxed_version(v: &[u8]) -> Version {
    match v {
        [_, _, _, _, _, major, _, minor] if *major > b'1' || (*major == b'1' && *minor >= b'1') => Version::Http11,
        _ => Version::Http10,
    }
}

/// Classifies `?????d.d` as HAProxy's `H1_MF_VER_11`: 1.1 and above.
fn digit_version(v: &[u8]) -> Result<Version, H1Error> {
    let (major, dot, minor) = (v[5], v[6], v[7]);
    if !major.is_ascii_digit() || dot != b'.' || !minor.is_ascii_digit() {
        return Err(H1Error::StartLine);
    }
    if major > b'1' || (major == b'1' && minor >= b'1') {
        Ok(Version::Http11)
    } else {
        Ok(Version::Http10)
    }
}

/// Three digits, 100 to 999.
// COMPAT: HAProxy 2.6 takes any run of digits (`099`, `0200`, `1000` all pass, checked
// against haproxy 2.6.12) and then frames them inconsistently; rampart keeps the
// three-digit codes it forwards unchanged (600-999 included, e.g. LinkedIn's 999) and
// answers 502 to the rest.
fn status_code(code: &[u8]) -> Result<u16, H1Error> {
    let &[a, b, c] = code else { return Err(H1Error::Status) };
    let n = u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0');
    if n < 100 {
        return Err(H1Error::Status);
    }
    Ok(n)
}

/// Method names are case-sensitive (`find_http_meth`).
#[cfg(test)]
mod tests {
    use super::*;

    fn req(s: &[u8]) -> Step<RequestLine> {
        parse_request_line(s, 0, false, &mut None)
    }

    #[test]
    fn request_line_parts() {
        let l = req(b"GET /a?b HTTP/1.0\r\n").unwrap().unwrap();
        assert_eq!(l.method, Method::Get);
        assert_eq!((l.uri.start, l.uri.end), (4, 8));
        assert_eq!(l.version, Version::Http10);
        assert_eq!(l.end, 19);
    }

    #[test]
    fn request_versions_as_haproxy() {
        let v = |s: &[u8]| req(s).map(|l| l.map(|l| l.version));
        assert_eq!(v(b"GET / HTTP/2.0\n"), Ok(Some(Version::Http11)));
        assert_eq!(v(b"GET / HTTP/1.2\n"), Ok(Some(Version::Http11)));
        assert_eq!(v(b"GET / HTTP/0.9\n"), Ok(Some(Version::Http10)));
        for bad in [&b"GET / http/1.1\n"[..], b"GET / HTTP/10\n", b"GET / HTTP/1.1x\n", b"GET /\n", b"GET / \n"] {
            assert_eq!(req(bad).map(|_| ()), Err(H1Error::StartLine), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn status_codes() {
        let st = |s: &[u8]| parse_status_line(s, 0, false).map(|l| l.map(|l| l.status));
        assert_eq!(st(b"HTTP/1.1 999 X\n"), Ok(Some(999)));
        assert_eq!(st(b"HTTP/1.1 100\n"), Ok(Some(100)));
        assert_eq!(st(b"HTTP/1.1 099 X\n"), Err(H1Error::Status));
        assert_eq!(st(b"HTTP/1.1 0200 X\n"), Err(H1Error::Status));
        assert_eq!(st(b"HTTP/1.1 20 X\n"), Err(H1Error::Status));
        assert_eq!(st(b"HTTP/1.1 2x0 X\n"), Err(H1Error::StartLine));
        assert_eq!(st(b"HTTP/1.1 200"), Ok(None));
    }
}
