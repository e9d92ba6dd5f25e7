//! Writing HTTP/1 heads on output: start lines and header fields, appended to a
//! `Vec<u8>` the runtime reuses (no allocation once it has grown).
//!
//! HAProxy counterpart: `h1_format_htx_reqline`, `h1_format_htx_stline`,
//! `h1_format_htx_hdr` and `h1_format_htx_data` (src/h1_htx.c). HAProxy 2.6 emits
//! header names in lower case on HTTP/1 (its HTX stores them so), and writes
//! `HTTP/1.1` for any version from 1.1 up.

use super::types::Version;

/// The last chunk and the empty trailer section of a chunked body.
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// The version token written for `v`.
pub fn version_str(v: Version) -> &'static [u8] {
    match v {
        Version::Http10 => b"HTTP/1.0",
        // a message of a later protocol goes out of an HTTP/1 connection as 1.1, as
        // HAProxy converts it
        Version::Http11 | Version::Http2 | Version::Http3 => b"HTTP/1.1",
    }
}

/// Appends `method SP target SP version CRLF`.
pub fn push_request_line(out: &mut Vec<u8>, method: &[u8], uri: &[u8], version: Version) {
    out.reserve(method.len() + uri.len() + 12);
    out.extend_from_slice(method);
    out.push(b' ');
    out.extend_from_slice(uri);
    out.push(b' ');
    out.extend_from_slice(version_str(version));
    out.extend_from_slice(b"\r\n");
}

/// Appends `version SP status SP reason CRLF`. `status` is written on three digits
/// (the parser only accepts 100..=999); the space before an empty reason is kept,
/// as HAProxy does.
pub fn push_status_line(out: &mut Vec<u8>, version: Version, status: u16, reason: &[u8]) {
    debug_assert!((100..=999).contains(&status), "status {status}");
    let status = status.min(999);
    out.reserve(reason.len() + 15);
    out.extend_from_slice(version_str(version));
    out.push(b' ');
    out.extend_from_slice(&[b'0' + (status / 100) as u8, b'0' + (status / 10 % 10) as u8, b'0' + (status % 10) as u8]);
    out.push(b' ');
    out.extend_from_slice(reason);
    out.extend_from_slice(b"\r\n");
}

/// Appends `name: value CRLF` with `name` lowercased.
pub fn push_header_lower(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.reserve(name.len() + value.len() + 4);
    let start = out.len();
    // PERF: copy then lowercase in place (a vectorizable loop), rather than one
    // iterator step per byte.
    out.extend_from_slice(name);
    out[start..].make_ascii_lowercase();
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Appends `name: value CRLF` as given.
pub fn push_header(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.reserve(name.len() + value.len() + 4);
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Appends the size line of a chunk of `len` bytes: lowercase hex, no leading zero,
/// CRLF. The data and its closing CRLF are the caller's.
pub fn push_chunk_size(out: &mut Vec<u8>, len: u64) {
    let digits = (64 - len.leading_zeros()).div_ceil(4).max(1);
    out.reserve(digits as usize + 2);
    for shift in (0..digits).rev() {
        out.push(b"0123456789abcdef"[((len >> (shift * 4)) & 0xf) as usize]);
    }
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_headers() {
        let mut out = Vec::new();
        push_request_line(&mut out, b"GET", b"/x", Version::Http11);
        push_header_lower(&mut out, b"X-Forwarded-For", b"1.2.3.4");
        push_header(&mut out, b"Host", b"a");
        push_status_line(&mut out, Version::Http10, 204, b"");
        push_status_line(&mut out, Version::Http11, 999, b"Request denied");
        assert_eq!(
            out,
            b"GET /x HTTP/1.1\r\nx-forwarded-for: 1.2.3.4\r\nHost: a\r\nHTTP/1.0 204 \r\nHTTP/1.1 999 Request denied\r\n"
        );
    }

    #[test]
    fn chunk_sizes() {
        let mut out = Vec::new();
        for n in [0, 1, 15, 16, 255, 4096, u64::MAX] {
            push_chunk_size(&mut out, n);
        }
        assert_eq!(out, b"0\r\n1\r\nf\r\n10\r\nff\r\n1000\r\nffffffffffffffff\r\n");
    }
}
