//! The header values that decide framing and connection handling: `Content-Length`,
//! `Transfer-Encoding`, `Connection` and `Upgrade` token lists. Pure functions over
//! one value; `head` applies them to a message. The target and `Host` are `target`'s.
//!
//! HAProxy counterparts: `h1_parse_cont_len_header`, `h1_parse_xfer_enc_header`,
//! `h1_parse_connection_header`, `h1_parse_upgrade_header` (src/h1.c) and
//! `http_find_hdr_value_end` (src/http.c). The behaviour is the one of haproxy 2.6.12
//! as packaged by Debian (with the empty Content-Length fix), but for
//! `Transfer-Encoding` (see [`transfer_encoding`]).

use super::startline::is_token;
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
    /// A `Transfer-Encoding` header was seen.
    pub present: bool,
    /// `chunked` was seen; it is the last coding (anything after it is refused).
    pub chunked: bool,
    /// `identity` was listed. It is not a transfer coding (RFC 2616's "no coding", gone
    /// since RFC 7230; RFC 9112 §7 has none such), and a recipient that still reads it
    /// as "no coding" would frame the body otherwise: `head` refuses the message once
    /// the rest of the list is known to be valid (see [`H1Error::Identity`]).
    pub identity: bool,
}

/// Adds one `Transfer-Encoding` value to `te`, refusing (RFC 9112 §6.1, §7; RFC 9110
/// §5.6.1) every list two parsers could read differently:
/// - an empty element (`chunked,`, `, chunked`, an empty value): RFC 9110 §5.6.1 lets
///   a recipient skip them but forbids senders to generate them; refused rather than
///   normalized, since the header is forwarded as it came;
/// - an element that is not a `transfer-coding`: a token, with parameters
///   `OWS ";" OWS token "=" token` (quoted-string values and blanks around `=` are
///   refused: no registered coding takes parameters);
/// - `chunked` with parameters, twice, or followed by another coding.
///
/// `identity` is noted for the caller. Any other coding list is accepted (`gzip,
/// chunked`): the codings are the server's business (RFC 9112 §6.1).
// COMPAT: HAProxy refuses a coding other than chunked in a request (422) or a
// response (502); it accepts empty elements.
pub(super) fn transfer_encoding(v: &[u8], te: &mut TransferCodings) -> Result<(), H1Error> {
    te.present = true;
    for element in v.split(|&b| b == b',') {
        let coding = trim_ows(element);
        let name_len = coding_name_len(coding).ok_or(H1Error::TransferEncoding)?;
        if te.chunked {
            return Err(H1Error::TransferEncoding);
        }
        te.identity |= coding[..name_len].eq_ignore_ascii_case(b"identity");
        if coding[..name_len].eq_ignore_ascii_case(b"chunked") {
            if name_len != coding.len() {
                return Err(H1Error::TransferEncoding);
            }
            te.chunked = true;
        }
    }
    Ok(())
}

/// Trims spaces and tabs (RFC 9110 OWS) at both ends.
fn trim_ows(v: &[u8]) -> &[u8] {
    let start = v.iter().position(|&b| b != b' ' && b != b'\t').unwrap_or(v.len());
    let end = v.iter().rposition(|&b| b != b' ' && b != b'\t').map_or(start, |e| e + 1);
    &v[start..end]
}

/// The length of the coding name of a `transfer-coding` element (a token, then
/// `OWS ";" OWS token "=" token` parameters), `None` if the element is not one.
fn coding_name_len(coding: &[u8]) -> Option<usize> {
    let token = |from: usize| coding[from..].iter().take_while(|&&b| is_token(b)).count();
    let name = token(0);
    if name == 0 {
        return None;
    }
    let mut i = name;
    while i < coding.len() {
        i += coding[i..].iter().take_while(|&&b| b == b' ' || b == b'\t').count();
        if coding.get(i) != Some(&b';') {
            return None;
        }
        i += 1;
        i += coding[i..].iter().take_while(|&&b| b == b' ' || b == b'\t').count();
        let key = token(i);
        if key == 0 || coding.get(i + key) != Some(&b'=') {
            return None;
        }
        i += key + 1;
        let value = token(i);
        if value == 0 {
            return None;
        }
        i += value;
    }
    Some(name)
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

    fn te(values: &[&[u8]]) -> Result<TransferCodings, H1Error> {
        let mut t = TransferCodings::default();
        for v in values {
            transfer_encoding(v, &mut t)?;
        }
        Ok(t)
    }

    #[test]
    fn transfer_codings() {
        assert!(te(&[b"gzip, Chunked"]).unwrap().chunked);
        assert!(te(&[b"gzip", b"chunked"]).unwrap().chunked);
        assert!(te(&[b"gzip ;level=9\t;a=b ,\tchunked"]).unwrap().chunked);
        let t = te(&[b"gzip"]).unwrap();
        assert!(t.present && !t.chunked && !t.identity);
        // `identity` is noted, wherever it is and however it is spelt; the head refuses it
        for listed in [
            &[&b"identity, chunked"[..]][..],
            &[b"Identity,chunked"],
            &[b"gzip, IDENTITY ,chunked"],
            &[b"identity;q=1, chunked"],
            &[b"identity", b"chunked"],
            &[b"identity"],
        ] {
            assert!(te(listed).unwrap().identity, "{listed:?}");
        }
        assert!(!te(&[b"identityx, xidentity, chunked"]).unwrap().identity);
        assert_eq!(te(&[b"chunked, identity"]).map(|_| ()), Err(H1Error::TransferEncoding), "after chunked");
        for bad in [
            &[&b"chunked, chunked"[..]][..],
            &[b"chunked", b"chunked"],
            &[b"chunked, gzip"],
            &[b"chunked", b"gzip"],
            &[b",chunked"],
            &[b"chunked,"],
            &[b"chunked , "],
            &[b"gzip,,chunked"],
            &[b""],
            &[b"chunked", b""],
            &[b"chunked;q=1"],
            &[b"gzip;q=\"1\", chunked"],
            &[b"gzip;q = 1, chunked"],
            &[b"gzip;q, chunked"],
            &[b"gzip;, chunked"],
            &[b"gzip chunked"],
            &[b"\"chunked\""],
            &[b"gz(ip, chunked"],
        ] {
            assert_eq!(te(bad).map(|_| ()), Err(H1Error::TransferEncoding), "{bad:?}");
        }
    }

    #[test]
    fn connection_tokens() {
        let mut t = ConnTokens::default();
        assert!(connection(b"Keep-Alive, foo , UPGRADE", &mut t));
        assert!(!connection(b"close,", &mut t));
        assert_eq!(t, ConnTokens { close: true, keep_alive: true, upgrade: true });
        assert_eq!(connection_others(b"a, close, b").collect::<Vec<_>>(), [&b"a"[..], b"b"]);
    }
}
