//! Header fields as HAProxy reads them with `option accept-invalid-http-request` (or
//! `-response`): a header name may hold any byte but CR, LF and `:` (the first
//! non-token byte is remembered in `Head::err_pos`, for `show errors`). Values follow
//! the usual rules. Only used once httparse refused a name, so valid messages never
//! come here.
//!
//! HAProxy counterpart: the `H1_MSG_HDR_NAME` state of `h1_headers_to_hdr_list()`
//! (src/h1.c) when `h1m->err_pos` is -1.

use super::startline::{is_spht, is_token};
use super::types::{max_headers, H1Error, HdrKind, Head, Header, Slice};

/// Parses the header fields from `from` into `head.headers` and sets `head.len`, as
/// `head::parse_fields` does. `Ok(false)`: incomplete.
pub(super) fn parse_fields(buf: &[u8], from: usize, head: &mut Head) -> Result<bool, H1Error> {
    head.headers.clear();
    let mut at = from;
    loop {
        let Some(nl) = buf[at..].iter().position(|&b| b == b'\n').map(|n| at + n) else { return Ok(false) };
        let line_end = if nl > at && buf[nl - 1] == b'\r' { nl - 1 } else { nl };
        let line = &buf[at..line_end];
        if line.is_empty() {
            head.len = nl + 1;
            return Ok(true);
        }
        if head.headers.len() >= max_headers() {
            return Err(H1Error::TooManyHeaders);
        }
        let colon = line.iter().position(|&b| b == b':').ok_or(H1Error::HeaderSyntax)?;
        let name = &line[..colon];
        // an empty name, a CR inside the line, or obsolete line folding
        if name.is_empty() || name.contains(&b'\r') || is_spht(name[0]) {
            return Err(H1Error::HeaderSyntax);
        }
        if head.err_pos.is_none() {
            head.err_pos = name.iter().position(|&b| !is_token(b)).map(|i| (at + i) as u32);
        }
        let mut v_start = at + colon + 1;
        while v_start < line_end && is_spht(buf[v_start]) {
            v_start += 1;
        }
        let mut v_end = line_end;
        while v_end > v_start && is_spht(buf[v_end - 1]) {
            v_end -= 1;
        }
        if buf[v_start..v_end].iter().any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return Err(H1Error::HeaderSyntax);
        }
        head.headers.push(Header {
            name: Slice { start: at as u32, end: (at + colon) as u32 },
            value: Slice { start: v_start as u32, end: v_end as u32 },
            kind: HdrKind::classify(name),
            drop: false,
        });
        at = nl + 1;
    }
}

#[cfg(test)]
mod tests {
    use crate::h1::{parse_request, parse_response, H1Error, Head, Method, Version};

    fn relaxed() -> Head {
        Head { relax: true, ..Head::default() }
    }

    #[test]
    fn relaxed_request_lets_invalid_bytes_through() {
        let raw = b"GET /caf\xc3\xa9 HTTP/1.1\r\nHost: a\r\nX Bad{name}: v1 \r\n\r\n";
        let mut strict = Head::default();
        assert_eq!(parse_request(raw, 4096, &mut strict), Err(H1Error::StartLine));
        let mut h = relaxed();
        assert_eq!(parse_request(raw, 4096, &mut h), Ok(true));
        assert_eq!(h.uri.get(raw), b"/caf\xc3\xa9");
        assert_eq!(h.err_pos, Some(8), "the first byte let through");
        let names: Vec<_> = h.headers.iter().map(|x| (x.name.get(raw), x.value.get(raw))).collect();
        assert_eq!(names, [(&b"Host"[..], &b"a"[..]), (b"X Bad{name}", b"v1")]);
        assert_eq!(h.len, raw.len());
        // a header name alone is let through too, and a split input is incomplete
        let raw = b"GET / HTTP/1.1\r\nHost: a\r\nX(y): z\r\n\r\n";
        h.reset();
        assert!(h.relax, "reset keeps relax");
        assert_eq!(parse_request(&raw[..raw.len() - 1], 4096, &mut h), Ok(false));
        assert_eq!(parse_request(raw, 4096, &mut h), Ok(true));
        assert_eq!(h.err_pos, Some(26));
        // still refused: control bytes in the target, a line without colon, LF in a name
        for bad in [&b"GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n"[..], b"GET / HTTP/1.1\r\nHost: a\r\nnocolon\r\n\r\n"] {
            assert!(parse_request(bad, 4096, &mut relaxed()).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn relaxed_request_lets_a_fragment_through() {
        // as HAProxy 2.6 with the option (reg-test `normalize_uri`, `fragment-strip`)
        let raw = b"GET /p?q#foo/#x HTTP/1.1\r\nHost: a\r\n\r\n";
        assert_eq!(parse_request(raw, 4096, &mut Head::default()), Err(H1Error::Target));
        let mut h = relaxed();
        assert_eq!(parse_request(raw, 4096, &mut h), Ok(true));
        assert_eq!((h.uri.get(raw), h.err_pos), (&b"/p?q#foo/#x"[..], Some(8)));
        let raw = b"GET http://a/#x\xff HTTP/1.1\r\nHost: a\r\n\r\n";
        assert_eq!(parse_request(raw, 4096, &mut h), Ok(true));
        assert_eq!(h.err_pos, Some(13), "the first of `#` and a non-ASCII byte");
    }

    #[test]
    fn relaxed_versions() {
        let mut h = relaxed();
        assert_eq!(parse_request(b"GET / HTTP/1.10\r\nHost: a\r\n\r\n", 4096, &mut h), Ok(true));
        assert_eq!(h.version, Version::Http10);
        assert_eq!(parse_request(b"GET / HTTP/2.X\r\nHost: a\r\n\r\n", 4096, &mut h), Ok(true));
        assert_eq!(h.version, Version::Http11);
        assert!(parse_request(b"GET / HTTP/1.10\r\nHost: a\r\n\r\n", 4096, &mut Head::default()).is_err());
        let res = b"HTTP/1.1X 200 OK\r\nX@y: 1\r\ncontent-length: 0\r\n\r\n";
        assert!(parse_response(res, 4096, Method::Get, &mut Head::default()).is_err());
        assert_eq!(parse_response(res, 4096, Method::Get, &mut h), Ok(true));
        assert_eq!((h.status, h.headers.len()), (200, 2));
    }
}
