//! The request target and `Host`: which form the target is in (RFC 9112 §3.2) and
//! whether the method allows it, the syntax of an authority and of a `Host` value
//! (`uri-host [ ":" port ]`, RFC 9110 §7.2 and RFC 3986 §3.2), and how `Host` must
//! agree with the target. Pure functions over one value; `head` applies them.
//!
//! HAProxy counterparts: `http_parse_scheme`, `http_parse_authority`,
//! `http_get_host_port` and `http_is_default_port` (src/http.c),
//! `h1_validate_connect_authority` and `h1_validate_mismatch_authority` (src/h1.c).
//!
//! The server receives the target as it came (but for a default port, cut as HAProxy
//! cuts it), so every rule here refuses with 400 rather than normalizing:
//! - a fragment (`#`) is never part of a request target (RFC 9110 §7.1), and a
//!   userinfo (`user@`) is not allowed in an `http`/`https` authority (RFC 9110
//!   §4.2.4): servers and the proxy would disagree on the host;
//! - `*` only with OPTIONS (RFC 9112 §3.2.4), authority-form only and always with
//!   CONNECT (RFC 9112 §3.2.3), otherwise only origin-form (`/...`) or absolute-form
//!   (`scheme://authority...`, RFC 9112 §3.2.2);
//! - an authority and a `Host` value are a registered name (unreserved, `%XX`,
//!   sub-delims but `,`), an IPv4 address or a bracketed IPv6 / IPvFuture literal,
//!   optionally `:port` with a port of at most 65535. A comma would make the single
//!   `Host` look like a list (RFC 9110 §7.2 makes Host a singleton);
//! - the host of an `http` URI is never empty (RFC 9110 §4.2.1).
//!
//! COMPAT: haproxy 2.6.12 (Debian) forwards user info, `*` with any method (and `*x`
//! with OPTIONS), CONNECT in absolute form, a target in no form whose first segment
//! equals Host (`GET a/b` with `Host: a`) and any Host value; rampart answers 400. Both
//! refuse a fragment. haproxy refuses `http://a?x` (it takes `a?x` for the authority);
//! rampart ends the authority at `?` as RFC 3986 §3.2 does (docs/COMPATIBILITY.md, Stricter than HAProxy).

use std::ops::Range;

use super::types::{H1Error, Method};

/// The forms of RFC 9112 §3.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    /// `/path?query`
    Origin,
    /// `scheme://authority/path?query`
    Absolute,
    /// `host:port`, CONNECT only.
    Authority,
    /// `*`, OPTIONS only.
    Asterisk,
}

/// A request target checked against its method: its form, and where its scheme (with
/// `://`) and its authority are, as offsets in the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    pub form: Form,
    /// `0..0` without a scheme.
    pub scheme: Range<usize>,
    /// `0..0` without an authority (origin and asterisk forms).
    pub authority: Range<usize>,
    /// The `:port` of an absolute-form authority when it is the scheme's default one
    /// (`http://a:80/`) or empty (`http://a:/`): left out on output, as HAProxy's
    /// scheme-based normalization.
    pub default_port: Option<Range<usize>>,
}

impl Target {
    /// Whether the target names an authority (absolute and authority forms).
    pub fn has_authority(&self) -> bool {
        matches!(self.form, Form::Absolute | Form::Authority)
    }
}

/// Finds the form of `uri` and checks it is one `method` allows. A fragment is refused
/// unless `relax` (`option accept-invalid-http-request`, as HAProxy: the `#` is then
/// part of the path or query, e.g. for `normalize-uri fragment-strip`).
pub(super) fn classify(uri: &[u8], method: Method, relax: bool) -> Result<Target, H1Error> {
    if !relax && memchr::memchr(b'#', uri).is_some() {
        return Err(H1Error::Target);
    }
    let none = 0..0;
    if method == Method::Connect {
        return match split_host_port(uri) {
            Some((host, Some(port))) if !host.is_empty() && !port.is_empty() => {
                Ok(Target { form: Form::Authority, scheme: none.clone(), authority: 0..uri.len(), default_port: None })
            }
            _ => Err(H1Error::Target),
        };
    }
    match uri {
        [b'/', ..] => Ok(Target { form: Form::Origin, scheme: none.clone(), authority: none, default_port: None }),
        b"*" if method == Method::Options => {
            Ok(Target { form: Form::Asterisk, scheme: none.clone(), authority: none, default_port: None })
        }
        _ => absolute_form(uri),
    }
}

/// `scheme "://" authority` followed by nothing, a `/` path or a `?` query.
fn absolute_form(uri: &[u8]) -> Result<Target, H1Error> {
    let scheme_end = scheme_len(uri).ok_or(H1Error::Target)?;
    let rest = &uri[scheme_end..];
    let end = rest.iter().position(|&b| b == b'/' || b == b'?').unwrap_or(rest.len());
    let authority = &rest[..end];
    let Some((host, port)) = split_host_port(authority) else { return Err(H1Error::Target) };
    if host.is_empty() {
        return Err(H1Error::Target);
    }
    let scheme = &uri[..scheme_end];
    // an empty port (`http://a:/`) is a default one too
    let default_port = match port {
        Some(p) if is_default_port(Some(scheme), p) => Some(scheme_end + end - p.len() - 1..scheme_end + end),
        _ => None,
    };
    Ok(Target { form: Form::Absolute, scheme: 0..scheme_end, authority: scheme_end..scheme_end + end, default_port })
}

/// Length of `alpha *(alnum / "+" / "-" / ".") "://"` at the start of `uri`.
fn scheme_len(uri: &[u8]) -> Option<usize> {
    if !uri.first()?.is_ascii_alphabetic() {
        return None;
    }
    let n = uri.iter().position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    uri[n..].starts_with(b"://").then_some(n + 3)
}

/// Whether a `Host` value is `uri-host [ ":" port ]` with a non-empty host.
pub(super) fn is_valid_host(v: &[u8]) -> bool {
    split_host_port(v).is_some_and(|(host, _)| !host.is_empty())
}

/// Splits `uri-host [ ":" port ]` after checking its syntax: `None` when invalid. The
/// host may be empty; the port is `Some(b"")` after a bare colon (RFC 3986 allows it).
fn split_host_port(v: &[u8]) -> Option<(&[u8], Option<&[u8]>)> {
    let host_end = if v.first() == Some(&b'[') {
        let close = memchr::memchr(b']', v)?;
        if !is_ip_literal(&v[1..close]) {
            return None;
        }
        close + 1
    } else {
        let end = memchr::memchr(b':', v).unwrap_or(v.len());
        if !is_reg_name(&v[..end]) {
            return None;
        }
        end
    };
    let (host, after) = v.split_at(host_end);
    match after {
        [] => Some((host, None)),
        [b':', port @ ..] if is_port(port) => Some((host, Some(port))),
        _ => None,
    }
}

/// `*DIGIT` whose value is at most 65535.
fn is_port(p: &[u8]) -> bool {
    p.iter().all(u8::is_ascii_digit)
        && p.iter().try_fold(0u32, |n, &d| Some(n * 10 + u32::from(d - b'0')).filter(|&n| n <= 65535)).is_some()
}

/// `reg-name = *( unreserved / pct-encoded / sub-delims )`, `,` excepted (it covers
/// IPv4 addresses too).
fn is_reg_name(v: &[u8]) -> bool {
    let mut i = 0;
    while i < v.len() {
        match v[i] {
            b'%' => {
                let hex = v.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
                if !hex {
                    return false;
                }
                i += 3;
                continue;
            }
            b if is_unreserved(b) || is_sub_delim(b) => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// RFC 3986 sub-delims without `,`.
fn is_sub_delim(b: u8) -> bool {
    matches!(b, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b';' | b'=')
}

/// What is inside the brackets of an IP-literal: an IPv6 address (no zone) or
/// `v HEXDIG+ "." ( unreserved / sub-delims / ":" )+`.
fn is_ip_literal(v: &[u8]) -> bool {
    if let [b'v' | b'V', rest @ ..] = v {
        let Some(dot) = memchr::memchr(b'.', rest) else { return false };
        let (version, tail) = (&rest[..dot], &rest[dot + 1..]);
        return !version.is_empty()
            && version.iter().all(u8::is_ascii_hexdigit)
            && !tail.is_empty()
            && tail.iter().all(|&b| is_unreserved(b) || is_sub_delim(b) || b == b':');
    }
    std::str::from_utf8(v).is_ok_and(|s| s.parse::<std::net::Ipv6Addr>().is_ok())
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

/// `host[:port]` (already checked) split in two.
fn host_and_port(v: &[u8]) -> (&[u8], Option<&[u8]>) {
    split_host_port(v).unwrap_or((v, None))
}

/// Checks a CONNECT target (`host:port`, checked by [`classify`]) against the `Host`
/// header (checked by [`is_valid_host`]), if any. Returns the length the Host value
/// must be cut to (its default port removed), if it must.
pub(super) fn check_connect_authority(authority: &[u8], host: Option<&[u8]>) -> Result<Option<usize>, H1Error> {
    let (uri_host, uri_port) = host_and_port(authority);
    let uri_port = uri_port.unwrap_or_default();
    let Some(host) = host else { return Ok(None) };
    let (name, port) = host_and_port(host);
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
pub(super) fn check_absolute_authority(scheme: &[u8], authority: &[u8], host: &[u8]) -> Result<(), H1Error> {
    if authority.eq_ignore_ascii_case(host) {
        return Ok(());
    }
    let (uri_host, uri_port) = host_and_port(authority);
    let (host_name, host_port) = host_and_port(host);
    let ports_ok = match (uri_port, host_port) {
        (None, None) => false,
        (Some(p), _) if !is_default_port(Some(scheme), p) => false,
        (_, Some(p)) if !is_default_port(Some(scheme), p) => false,
        _ => true,
    };
    if ports_ok && uri_host.eq_ignore_ascii_case(host_name) {
        Ok(())
    } else {
        Err(H1Error::Host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(uri: &[u8], m: Method) -> Result<Form, H1Error> {
        classify(uri, m, false).map(|t| t.form)
    }

    #[test]
    fn forms_by_method() {
        use Method::*;
        assert_eq!(form(b"/x?y", Get), Ok(Form::Origin));
        assert_eq!(form(b"*", Options), Ok(Form::Asterisk));
        assert_eq!(form(b"*", Get), Err(H1Error::Target));
        assert_eq!(form(b"*x", Options), Err(H1Error::Target));
        assert_eq!(form(b"http://a/x", Get), Ok(Form::Absolute));
        assert_eq!(form(b"a:443", Connect), Ok(Form::Authority));
        assert_eq!(form(b"a:443", Get), Err(H1Error::Target));
        assert_eq!(form(b"a/b", Get), Err(H1Error::Target));
        for bad in [&b"/"[..], b"http://a:443/", b"a", b"a:", b"u@a:443", b"a:99999", b"*"] {
            assert_eq!(form(bad, Connect), Err(H1Error::Target), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn fragments_and_user_info() {
        assert_eq!(form(b"/a#b", Method::Get), Err(H1Error::Target));
        assert_eq!(form(b"http://a/#", Method::Get), Err(H1Error::Target));
        assert_eq!(form(b"http://u:p@a/", Method::Get), Err(H1Error::Target));
        assert_eq!(form(b"http://@a/", Method::Get), Err(H1Error::Target));
        // an @ in the path is no user info
        assert_eq!(form(b"http://a/x@y", Method::Get), Ok(Form::Absolute));
        assert_eq!(form(b"/x@y", Method::Get), Ok(Form::Origin));
    }

    #[test]
    fn absolute_form_parts() {
        let t = classify(b"HTTP://a:80/x", Method::Get, false).unwrap();
        assert_eq!((t.scheme, t.authority, t.default_port), (0..7, 7..11, Some(8..11)));
        let t = classify(b"https://[::1]:443?q", Method::Get, false).unwrap();
        assert_eq!((t.authority, t.default_port), (8..17, Some(13..17)));
        assert_eq!(classify(b"http://a:443/", Method::Get, false).unwrap().default_port, None);
        assert_eq!(classify(b"http://a:/", Method::Get, false).unwrap().default_port, Some(8..9));
        assert_eq!(classify(b"foo://a:/", Method::Get, false).unwrap().default_port, Some(7..8));
        for bad in [&b"http:///x"[..], b"http://:80/", b"http://a b/", b"http://a,b/", b"http://a:8x/", b"urn:x"] {
            assert_eq!(form(bad, Method::Get), Err(H1Error::Target), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn host_values() {
        for ok in [
            &b"a"[..],
            b"a.example:8080",
            b"A-b_c~d.%41",
            b"1.2.3.4:80",
            b"[::1]",
            b"[2001:db8::1]:443",
            b"[v1.x:y]",
            b"a:",
            b"a:00080",
            b"a:65535",
        ] {
            assert!(is_valid_host(ok), "{:?}", String::from_utf8_lossy(ok));
        }
        for bad in [
            &b""[..],
            b":80",
            b"a b",
            b"a@b",
            b"a/b",
            b"a,b",
            b"a:65536",
            b"a:8o",
            b"a:80:80",
            b"[::1",
            b"[::g]",
            b"[fe80::1%25eth0]",
            b"[::1]x",
            b"a%2",
            b"a%zz",
            b"caf\xc3\xa9",
        ] {
            assert!(!is_valid_host(bad), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn absolute_authority_against_host() {
        let s = b"http://";
        assert_eq!(check_absolute_authority(s, b"A", b"a"), Ok(()));
        assert_eq!(check_absolute_authority(s, b"a:80", b"a"), Ok(()));
        assert_eq!(check_absolute_authority(s, b"a", b"a:80"), Ok(()));
        assert_eq!(check_absolute_authority(s, b"a:", b"a"), Ok(()));
        assert_eq!(check_absolute_authority(s, b"a:443", b"a"), Err(H1Error::Host));
        assert_eq!(check_absolute_authority(s, b"a", b"b"), Err(H1Error::Host));
        assert_eq!(check_absolute_authority(b"foo://", b"a:80", b"a"), Err(H1Error::Host));
    }

    #[test]
    fn connect_authority_against_host() {
        assert_eq!(check_connect_authority(b"a:443", None), Ok(None));
        assert_eq!(check_connect_authority(b"a:443", Some(b"A:443")), Ok(Some(1)));
        assert_eq!(check_connect_authority(b"a:8443", Some(b"a:8443")), Ok(None));
        assert_eq!(check_connect_authority(b"a:443", Some(b"a")), Ok(None));
        assert_eq!(check_connect_authority(b"a:8443", Some(b"a")), Err(H1Error::Host));
        assert_eq!(check_connect_authority(b"a:443", Some(b"b:443")), Err(H1Error::Host));
    }
}
