//! The header values that decide framing and connection handling: `Content-Length`,
//! `Transfer-Encoding`, `Connection` and `Upgrade` token lists, and the Host/authority
//! match. Pure functions over one value; `head` applies them to a message.
//!
//! HAProxy counterparts: `h1_parse_cont_len_header`, `h1_parse_xfer_enc_header`,
//! `h1_parse_connection_header`, `h1_parse_upgrade_header`,
//! `h1_validate_connect_authority` and `h1_validate_mismatch_authority` (src/h1.c);
//! `http_find_hdr_value_end`, `http_parse_scheme`, `http_parse_authority`,
//! `http_get_host_port` and `http_is_default_port` (src/http.c). The behaviour is the
//! one of haproxy 2.6.12 as packaged by Debian (with the empty Content-Length fix).

use super::types::{ConnTokens, H1Error};

/// HAProxy's `HTTP_IS_LWS`: the blanks skipped around list items.
#[inline]
fn is_lws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// End of the list item starting at `from`: the next comma outside a quoted string.
fn item_end(v: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(n) = memchr::memchr2(b',', b'"', &v[i..]) {
        i += n;
        if v[i] == b',' {
            return i;
        }
        i = quoted_string_end(v, i + 1);
    }
    v.len()
}

/// Index just after the closing quote of the quoted string whose content starts at
/// `from` (backslash escapes the next byte), or the end of the value.
fn quoted_string_end(v: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < v.len() {
        match v[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    v.len()
}

/// The items of a comma-separated list, trimmed of blanks, as HAProxy walks them:
/// a leading or doubled comma yields an empty item, a trailing comma does not.
pub(super) struct Items<'v> {
    v: &'v [u8],
    pos: usize,
}

impl<'v> Items<'v> {
    pub(super) fn new(v: &'v [u8]) -> Self {
        Items { v, pos: 0 }
    }
}

impl<'v> Iterator for Items<'v> {
    type Item = &'v [u8];

    fn next(&mut self) -> Option<&'v [u8]> {
        while self.pos < self.v.len() {
            if is_lws(self.v[self.pos]) {
                self.pos += 1;
                continue;
            }
            let start = self.pos;
            let mut end = item_end(self.v, start);
            self.pos = end + 1;
            while end > start && is_lws(self.v[end - 1]) {
                end -= 1;
            }
            return Some(&self.v[start..end]);
        }
        None
    }
}

/// Parses one `Content-Length` value: one number or a comma list of equal numbers,
/// digits only, each equal to `known` (the value of earlier headers) if set.
/// Stores the value in `known` and returns the range of the last number in `v`: the
/// value to forward (HAProxy forwards `3` for `3, 3`, leading zeros kept as 2.6 does).
pub(super) fn content_length(v: &[u8], known: &mut Option<u64>) -> Result<(usize, usize), H1Error> {
    let mut p = 0;
    loop {
        // an empty value, or nothing after a comma
        if p >= v.len() {
            return Err(H1Error::ContentLength);
        }
        if is_lws(v[p]) {
            p += 1;
            continue;
        }
        let start = p;
        let mut n: u64 = 0;
        while p < v.len() && v[p].is_ascii_digit() {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(v[p] - b'0')))
                // HAProxy keeps the length in a signed 64-bit integer
                .filter(|&n| n <= i64::MAX as u64)
                .ok_or(H1Error::ContentLength)?;
            p += 1;
        }
        if p == start {
            return Err(H1Error::ContentLength);
        }
        let word = (start, p);
        while p < v.len() && is_lws(v[p]) {
            p += 1;
        }
        if p < v.len() && v[p] != b',' {
            return Err(H1Error::ContentLength);
        }
        match *known {
            Some(k) if k != n => return Err(H1Error::ContentLength),
            _ => *known = Some(n),
        }
        if p == v.len() {
            return Ok(word);
        }
        p += 1;
    }
}

/// What the `Transfer-Encoding` headers of a message said so far.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct TransferCodings {
    /// A `Transfer-Encoding` header was seen (even empty).
    pub present: bool,
    /// `chunked` was seen.
    pub chunked: bool,
    /// The last coding seen is `chunked`.
    pub chunked_last: bool,
    /// A coding other than `chunked` was seen (an empty list item counts).
    pub other: bool,
}

/// Adds one `Transfer-Encoding` value to `te`. `chunked` twice is an error; on a
/// request, any coding after `chunked` is too (RFC 9112 §6.1).
pub(super) fn transfer_encoding(v: &[u8], is_response: bool, te: &mut TransferCodings) -> Result<(), H1Error> {
    te.present = true;
    for coding in Items::new(v) {
        te.chunked_last = false;
        if coding.eq_ignore_ascii_case(b"chunked") {
            if te.chunked {
                return Err(H1Error::TransferEncoding);
            }
            te.chunked = true;
            te.chunked_last = true;
        } else {
            if !is_response && te.chunked {
                return Err(H1Error::TransferEncoding);
            }
            te.other = true;
        }
    }
    Ok(())
}

/// Adds the tokens of one `Connection` value to `tokens`. Returns whether the value
/// names other headers (tokens other than close, keep-alive and upgrade).
pub(super) fn connection(v: &[u8], tokens: &mut ConnTokens) -> bool {
    let mut others = false;
    for t in Items::new(v) {
        if t.eq_ignore_ascii_case(b"close") {
            tokens.close = true;
        } else if t.eq_ignore_ascii_case(b"keep-alive") {
            tokens.keep_alive = true;
        } else if t.eq_ignore_ascii_case(b"upgrade") {
            tokens.upgrade = true;
        } else if !t.is_empty() {
            others = true;
        }
    }
    others
}

/// The `Connection` tokens that name other headers.
pub(super) fn connection_others(v: &[u8]) -> impl Iterator<Item = &[u8]> {
    Items::new(v).filter(|t| {
        !t.is_empty()
            && !t.eq_ignore_ascii_case(b"close")
            && !t.eq_ignore_ascii_case(b"keep-alive")
            && !t.eq_ignore_ascii_case(b"upgrade")
    })
}

/// Whether a comma list holds `token` (case-insensitive): `websocket` in `Upgrade`.
pub(super) fn has_token(v: &[u8], token: &[u8]) -> bool {
    Items::new(v).any(|t| t.eq_ignore_ascii_case(token))
}

// === request target and Host ===

/// The scheme (with its `://`) and the authority (without user info) of a request
/// target, when it is in absolute or authority form. `None` for origin form (`/..`),
/// asterisk form and an empty target.
pub(super) fn scheme_and_authority(uri: &[u8]) -> (Option<&[u8]>, Option<&[u8]>) {
    match uri.first() {
        None | Some(b'/') | Some(b'*') => return (None, None),
        Some(_) => {}
    }
    let (scheme, rest) = match scheme_len(uri) {
        Some(n) => (Some(&uri[..n]), &uri[n..]),
        None => (None, uri),
    };
    let end = memchr::memchr(b'/', rest).unwrap_or(rest.len());
    let start = memchr::memrchr(b'@', &rest[..end]).map_or(0, |at| at + 1);
    (scheme, Some(&rest[start..end]))
}

/// For an absolute-form target whose authority ends with its scheme's default port
/// (`http://a:80/x`, `https://a:443`), the offsets in `uri` of the host (without user
/// info) and of the `:port` to leave out: `(host_start, colon, port_end)`. An empty
/// port (`http://a:/`) is left alone, as HAProxy does.
pub(super) fn default_port_span(uri: &[u8]) -> Option<(usize, usize, usize)> {
    let scheme_end = scheme_len(uri)?;
    let rest = &uri[scheme_end..];
    let end = memchr::memchr(b'/', rest).unwrap_or(rest.len());
    let start = memchr::memrchr(b'@', &rest[..end]).map_or(0, |at| at + 1);
    let port = host_port(&rest[start..end]).filter(|p| !p.is_empty())?;
    if !is_default_port(Some(&uri[..scheme_end]), port) {
        return None;
    }
    Some((scheme_end + start, scheme_end + end - port.len() - 1, scheme_end + end))
}

/// Length of `alpha *(alnum / "+" / "-" / ".") "://"` at the start of `uri`.
fn scheme_len(uri: &[u8]) -> Option<usize> {
    if !uri.first()?.is_ascii_alphabetic() {
        return None;
    }
    let n = uri.iter().position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    uri[n..].starts_with(b"://").then_some(n + 3)
}

/// The port of `host[:port]`: `None` without a colon after the last non-digit,
/// `Some(b"")` for a colon with no digits.
fn host_port(host: &[u8]) -> Option<&[u8]> {
    let digits = host.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let colon = host.len().checked_sub(digits + 1)?;
    (host[colon] == b':').then(|| &host[colon + 1..])
}

/// `host` without its `:port` (as found by [`host_port`]).
fn without_port<'h>(host: &'h [u8], port: Option<&[u8]>) -> &'h [u8] {
    match port {
        Some(p) => &host[..host.len() - p.len() - 1],
        None => host,
    }
}

/// Whether `port` is the scheme's default one (80 for http, 443 for https, either
/// without scheme); an empty port is.
fn is_default_port(scheme: Option<&[u8]>, port: &[u8]) -> bool {
    if port.is_empty() {
        return true;
    }
    match scheme {
        None => port == b"443" || port == b"80",
        Some(s) => {
            (port == b"443" && s.eq_ignore_ascii_case(b"https://"))
                || (port == b"80" && s.eq_ignore_ascii_case(b"http://"))
        }
    }
}

/// Checks a CONNECT target (`host:port`) against the `Host` header, if any. Returns the
/// length the Host value must be cut to (its default port removed), if it must.
pub(super) fn check_connect_authority(authority: Option<&[u8]>, host: Option<&[u8]>) -> Result<Option<usize>, H1Error> {
    let Some(authority) = authority else { return Err(H1Error::Host) };
    let uri_port = match host_port(authority) {
        Some(p) if !p.is_empty() => p,
        _ => return Err(H1Error::Host),
    };
    let uri_host = without_port(authority, Some(uri_port));
    let Some(host) = host else { return Ok(None) };
    let port = host_port(host);
    let name = without_port(host, port);
    match port {
        Some(p) if !p.is_empty() => {
            if !name.eq_ignore_ascii_case(uri_host) || p != uri_port {
                return Err(H1Error::Host);
            }
            Ok(is_default_port(None, uri_port).then_some(name.len()))
        }
        _ => {
            if !is_default_port(None, uri_port) || !name.eq_ignore_ascii_case(uri_host) {
                return Err(H1Error::Host);
            }
            Ok(None)
        }
    }
}

/// Checks the `Host` header against the authority of an absolute-form target: equal
/// (case-insensitive), or equal but for a default port on one side.
pub(super) fn check_absolute_authority(scheme: Option<&[u8]>, authority: &[u8], host: &[u8]) -> Result<(), H1Error> {
    if authority.is_empty() || authority.eq_ignore_ascii_case(host) {
        return Ok(());
    }
    let Some(scheme) = scheme else { return Err(H1Error::Host) };
    let uri_port = host_port(authority);
    let host_port = host_port(host);
    let ports_ok = match (uri_port, host_port) {
        (None, None) => false,
        (Some(p), _) if !is_default_port(Some(scheme), p) => false,
        (_, Some(p)) if !is_default_port(Some(scheme), p) => false,
        _ => true,
    };
    if ports_ok && without_port(authority, uri_port).eq_ignore_ascii_case(without_port(host, host_port)) {
        Ok(())
    } else {
        Err(H1Error::Host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(v: &[u8]) -> Vec<&[u8]> {
        Items::new(v).collect()
    }

    #[test]
    fn list_items_like_haproxy() {
        assert_eq!(items(b" a ,\tb , "), [&b"a"[..], b"b"]);
        assert_eq!(items(b",a"), [&b""[..], b"a"]);
        assert_eq!(items(b"a,,b"), [&b"a"[..], b"", b"b"]);
        assert_eq!(items(b"a;q=\"x,y\", b"), [&b"a;q=\"x,y\""[..], b"b"]);
        assert_eq!(items(b"\"a\\\",b\",c"), [&b"\"a\\\",b\""[..], b"c"]);
        assert!(items(b"").is_empty());
    }

    fn cl(v: &[u8]) -> Result<u64, H1Error> {
        let mut known = None;
        content_length(v, &mut known)?;
        Ok(known.unwrap())
    }

    #[test]
    fn content_length_values() {
        assert_eq!(cl(b"3"), Ok(3));
        assert_eq!(cl(b"3, 3"), Ok(3));
        assert_eq!(cl(b"3 ,\t3"), Ok(3));
        assert_eq!(cl(b"003"), Ok(3));
        assert_eq!(cl(b"9223372036854775807"), Ok(i64::MAX as u64));
        for bad in
            [&b""[..], b" ", b"3, 4", b"+3", b"-1", b"1 2", b"0x1", b"3,", b",3", b"3,,3", b",", b"9223372036854775808"]
        {
            assert_eq!(cl(bad), Err(H1Error::ContentLength), "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(cl(b"99999999999999999999999"), Err(H1Error::ContentLength));
    }

    #[test]
    fn content_length_narrows_to_last_number() {
        let mut known = None;
        assert_eq!(content_length(b"3 , 3 ", &mut known), Ok((4, 5)));
        assert_eq!(content_length(b"4", &mut known), Err(H1Error::ContentLength));
    }

    fn te(values: &[&[u8]], resp: bool) -> Result<TransferCodings, H1Error> {
        let mut t = TransferCodings::default();
        for v in values {
            transfer_encoding(v, resp, &mut t)?;
        }
        Ok(t)
    }

    #[test]
    fn transfer_codings() {
        let t = te(&[b"gzip, Chunked"], false).unwrap();
        assert!(t.chunked_last && t.other);
        assert_eq!(te(&[b"chunked, chunked"], true).map(|_| ()), Err(H1Error::TransferEncoding));
        assert_eq!(te(&[b"chunked", b"chunked"], false).map(|_| ()), Err(H1Error::TransferEncoding));
        assert_eq!(te(&[b"chunked, gzip"], false).map(|_| ()), Err(H1Error::TransferEncoding));
        let t = te(&[b"chunked, gzip"], true).unwrap();
        assert!(!t.chunked_last && t.other);
        let t = te(&[b",chunked"], false).unwrap();
        assert!(t.chunked_last && t.other);
        let t = te(&[b"chunked , "], false).unwrap();
        assert!(t.chunked_last && !t.other);
        let t = te(&[b""], false).unwrap();
        assert!(t.present && !t.chunked && !t.other);
    }

    #[test]
    fn connection_tokens() {
        let mut t = ConnTokens::default();
        assert!(connection(b"Keep-Alive, foo , UPGRADE", &mut t));
        assert!(!connection(b"close,", &mut t));
        assert_eq!(t, ConnTokens { close: true, keep_alive: true, upgrade: true });
        assert_eq!(connection_others(b"a, close, b").collect::<Vec<_>>(), [&b"a"[..], b"b"]);
    }

    #[test]
    fn authority_forms() {
        assert_eq!(scheme_and_authority(b"/x"), (None, None));
        assert_eq!(scheme_and_authority(b"*"), (None, None));
        assert_eq!(scheme_and_authority(b"http://u:p@a:80/x@y"), (Some(&b"http://"[..]), Some(&b"a:80"[..])));
        assert_eq!(scheme_and_authority(b"a:443"), (None, Some(&b"a:443"[..])));
        assert_eq!(default_port_span(b"http://a:80/x"), Some((7, 8, 11)));
        assert_eq!(default_port_span(b"HTTPS://u@h:443"), Some((10, 11, 15)));
        assert_eq!(default_port_span(b"http://a:443/"), None);
        assert_eq!(default_port_span(b"http://a:/"), None);
        assert_eq!(default_port_span(b"http://a/"), None);
        assert_eq!(default_port_span(b"/x:80"), None);
        assert_eq!(scheme_and_authority(b"http://a?x"), (Some(&b"http://"[..]), Some(&b"a?x"[..])));
    }

    #[test]
    fn absolute_authority_against_host() {
        let s = Some(&b"http://"[..]);
        assert_eq!(check_absolute_authority(s, b"A", b"a"), Ok(()));
        assert_eq!(check_absolute_authority(s, b"a:80", b"a"), Ok(()));
        assert_eq!(check_absolute_authority(s, b"a", b"a:80"), Ok(()));
        assert_eq!(check_absolute_authority(s, b"a:", b"a"), Ok(()));
        assert_eq!(check_absolute_authority(s, b"a:443", b"a"), Err(H1Error::Host));
        assert_eq!(check_absolute_authority(s, b"a", b"b"), Err(H1Error::Host));
        assert_eq!(check_absolute_authority(s, b"a?x", b"a"), Err(H1Error::Host));
        assert_eq!(check_absolute_authority(None, b"a:80", b"a"), Err(H1Error::Host));
    }

    #[test]
    fn connect_authority_against_host() {
        assert_eq!(check_connect_authority(Some(b"a:443"), None), Ok(None));
        assert_eq!(check_connect_authority(Some(b"a:443"), Some(b"A:443")), Ok(Some(1)));
        assert_eq!(check_connect_authority(Some(b"a:8443"), Some(b"a:8443")), Ok(None));
        assert_eq!(check_connect_authority(Some(b"a:443"), Some(b"a")), Ok(None));
        assert_eq!(check_connect_authority(Some(b"a:8443"), Some(b"a")), Err(H1Error::Host));
        assert_eq!(check_connect_authority(Some(b"a:443"), Some(b"b:443")), Err(H1Error::Host));
        assert_eq!(check_connect_authority(Some(b"a"), None), Err(H1Error::Host));
        assert_eq!(check_connect_authority(Some(b"a:"), None), Err(H1Error::Host));
        assert_eq!(check_connect_authority(None, None), Err(H1Error::Host));
    }
}
