//! The cache's decisions on message heads: whether a request may use the cache or
//! have its response stored, whether a response may be stored and for how long, the
//! `Vary` keys (`Accept-Encoding`, `Referer`), and whether a conditional request gets
//! a `304 Not Modified`.
//! HAProxy counterparts: `http_check_request_for_cacheability()` and
//! `http_check_response_for_cacheability()` (src/http_ana.c), `http_calc_maxage()`,
//! `http_check_vary_header()`, the Vary normalizers and
//! `should_send_notmodified_response()` (src/cache.c).

use crate::http::MsgView;

/// What the request says of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReqCache {
    /// Neither served from nor stored in the cache (`Authorization`, `no-cache` ...).
    pub ignore: bool,
    /// Its response may not be stored (`no-store`, `Authorization`).
    pub no_store: bool,
}

/// HAProxy's request checks.
pub fn request(req: MsgView<'_>) -> ReqCache {
    let mut r = ReqCache::default();
    if req.first(b"authorization").is_some() {
        r.ignore = true;
        r.no_store = true;
    }
    let mut cc_found = false;
    for v in req.values(b"cache-control") {
        cc_found = true;
        let starts = |w: &[u8]| v.len() >= w.len() && v[..w.len()].eq_ignore_ascii_case(w);
        if starts(b"max-age") || starts(b"no-cache") || starts(b"max-stale") || starts(b"min-fresh") {
            r.ignore = true;
        } else if starts(b"no-store") {
            r.no_store = true;
        }
    }
    let pragma = req.first(b"pragma").is_some_and(|v| v.eq_ignore_ascii_case(b"no-cache"));
    if !cc_found && pragma {
        r.ignore = true;
    }
    r
}

/// Whether a response may be stored, by its cache headers (HAProxy's `TX_CACHEABLE`,
/// `TX_CACHE_COOK` and `TX_CACHE_IGNORE` after `http_check_response_for_cacheability()`).
/// As HAProxy, a `Set-Cookie` alone does not prevent it (`cookie ... nocache` does).
pub fn response_storable(res: MsgView<'_>) -> bool {
    if res.head.status < 200 || res.first(b"pragma").is_some_and(|v| v.eq_ignore_ascii_case(b"no-cache")) {
        return false;
    }
    let (mut cacheable, mut cook, mut fresh) = (true, true, false);
    for v in res.values(b"cache-control") {
        let is = |w: &[u8]| v.eq_ignore_ascii_case(w);
        let starts = |w: &[u8]| v.len() >= w.len() && v[..w.len()].eq_ignore_ascii_case(w);
        if is(b"public") {
            (cacheable, cook) = (true, true);
        } else if is(b"private") || is(b"no-cache") || is(b"no-store") || is(b"max-age=0") || is(b"s-maxage=0") {
            (cacheable, cook) = (false, false);
        } else if starts(b"no-cache=\"set-cookie") {
            cook = false;
        } else if starts(b"s-maxage") || starts(b"max-age") {
            fresh = true;
        }
    }
    fresh = fresh || res.first(b"expires").is_some();
    let validator = res.first(b"etag").is_some() || res.first(b"last-modified").is_some();
    cacheable && cook && (fresh || validator)
}

/// A response's lifetime: (the cache's, bounded by `max-age`; the response's own, to
/// refuse a stale `Age`); `None`: an invalid `max-age`/`s-maxage`, not stored.
pub fn max_age(res: MsgView<'_>, cache_max: u32, now: i64) -> Option<(u32, u32)> {
    let (mut smaxage, mut maxage) = (None, None);
    for v in res.values(b"cache-control") {
        if let Some(n) = directive(v, b"s-maxage") {
            smaxage = Some(n?);
        }
        if let Some(n) = directive(v, b"max-age") {
            maxage = Some(n?);
        }
    }
    let expires = match (smaxage, maxage) {
        (None, None) => res.first(b"expires").map(|e| http_date(e).map_or(0, |t| (t - now).max(0))),
        _ => None,
    };
    let own = [smaxage.filter(|&n| n > 0), maxage.filter(|&n| n > 0), expires].into_iter().flatten().next();
    let own = own.map(|n| n.clamp(0, i64::from(u32::MAX)) as u32);
    Some(match own {
        Some(n) => (n.min(cache_max), n),
        None => (cache_max, cache_max),
    })
}

/// `name=<n>` (or `name="<n>"`): `Some(Some(n))`, `Some(None)` when the value is not
/// a number, `None` when the directive is another one.
fn directive(v: &[u8], name: &[u8]) -> Option<Option<i64>> {
    let rest = v.get(..name.len()).filter(|p| p.eq_ignore_ascii_case(name)).map(|_| &v[name.len()..])?;
    let rest = rest.strip_prefix(b"=")?;
    let rest = rest.strip_prefix(b"\"").unwrap_or(rest);
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    Some(std::str::from_utf8(&rest[..digits]).ok().and_then(|d| d.parse().ok()))
}

/// An HTTP date (IMF-fixdate) as seconds since the epoch.
pub fn http_date(v: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(v).ok()?;
    let ts = jiff::fmt::rfc2822::DateTimeParser::new().parse_timestamp(s.trim()).ok()?;
    Some(ts.as_second())
}

/// The date a response was last modified: `Last-Modified`, else `Date`, else `now`.
pub fn last_modified(res: MsgView<'_>, now: i64) -> i64 {
    res.first(b"last-modified").and_then(http_date).or_else(|| res.first(b"date").and_then(http_date)).unwrap_or(now)
}

// === Vary ===

/// The request headers a response varies on (`process-vary on`).
pub const VARY_ACCEPT_ENCODING: u8 = 1;
pub const VARY_REFERER: u8 = 2;

/// The `Vary` signature of a response; `None` when it names a header the cache does
/// not manage (the response is then not stored).
pub fn vary_signature(res: MsgView<'_>) -> Option<u8> {
    let mut sig = 0;
    for v in res.values(b"vary") {
        if v.eq_ignore_ascii_case(b"accept-encoding") {
            sig |= VARY_ACCEPT_ENCODING;
        } else if v.eq_ignore_ascii_case(b"referer") {
            sig |= VARY_REFERER;
        } else {
            return None;
        }
    }
    Some(sig)
}

/// The secondary key of a request: its accepted encodings (a bitmap) and its
/// `Referer` (a hash, 0 without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SecKey {
    pub encodings: u32,
    pub referer: u32,
}

impl SecKey {
    /// Only the parts for the headers `sig` names.
    pub fn masked(self, sig: u8) -> SecKey {
        SecKey {
            encodings: if sig & VARY_ACCEPT_ENCODING != 0 { self.encodings } else { 0 },
            referer: if sig & VARY_REFERER != 0 { self.referer } else { 0 },
        }
    }
}

const ENC_IDENTITY: u32 = 1;
const ENC_OTHER: u32 = 1 << 31;
const ENC_STAR: u32 = 1 << 30;

/// The bit of a content-coding; `None` for an unknown one.
fn encoding_bit(token: &[u8]) -> Option<u32> {
    const KNOWN: &[&[u8]] = &[
        b"identity",
        b"gzip",
        b"deflate",
        b"br",
        b"compress",
        b"zstd",
        b"x-gzip",
        b"x-compress",
        b"exi",
        b"pack200-gzip",
        b"aes128gcm",
    ];
    if token == b"*" {
        return Some(ENC_STAR);
    }
    KNOWN.iter().position(|k| token.eq_ignore_ascii_case(k)).map(|i| 1 << i)
}

/// A request's secondary key, for the headers `sig` names.
pub fn request_key(req: MsgView<'_>, sig: u8) -> SecKey {
    let mut k = SecKey::default();
    if sig & VARY_ACCEPT_ENCODING != 0 {
        let (mut bits, mut refused, mut count) = (ENC_IDENTITY, 0u32, 0);
        for item in req.values(b"accept-encoding") {
            count += 1;
            let token = item.split(|&c| c == b';').next().unwrap_or_default().trim_ascii();
            let q0 = item.split(|&c| c == b';').skip(1).any(|p| {
                let p = p.trim_ascii();
                p.starts_with(b"q=0") && p[3..].iter().all(|&c| c == b'0' || c == b'.')
            });
            match encoding_bit(token) {
                Some(b) if q0 => refused |= b,
                Some(b) => bits |= b,
                None => bits |= ENC_OTHER,
            }
        }
        if bits & ENC_STAR != 0 || count == 0 {
            bits = !0;
        }
        k.encodings = bits & !refused;
    }
    if sig & VARY_REFERER != 0 {
        k.referer = req.first(b"referer").map_or(0, crc32fast::hash);
    }
    k
}

/// The key a stored response answers: its own encoding (identity without
/// `Content-Encoding`) in place of the request's accepted ones; `None` for an unknown
/// encoding (not stored).
pub fn stored_key(req_key: SecKey, res: MsgView<'_>) -> Option<SecKey> {
    let mut enc = 0;
    for v in res.values(b"content-encoding") {
        enc |= encoding_bit(v).filter(|&b| b != ENC_STAR)?;
    }
    Some(SecKey { encodings: if enc == 0 { ENC_IDENTITY } else { enc }, ..req_key })
}

/// Whether a stored response with key `stored` answers a request with key `req`: its
/// encoding is one the request accepts, and the same `Referer`.
pub fn key_matches(stored: SecKey, req: SecKey, sig: u8) -> bool {
    let enc_ok = sig & VARY_ACCEPT_ENCODING == 0 || (stored.encodings & req.encodings) == stored.encodings;
    let ref_ok = sig & VARY_REFERER == 0 || stored.referer == req.referer;
    enc_ok && ref_ok
}

// === conditional requests ===

/// Whether a request for an entry with `etag` and `last_modified` gets a `304`:
/// `If-None-Match` (`*`, or a weak match of the entry's `ETag`), else
/// `If-Modified-Since` not earlier than the entry's date.
pub fn not_modified(req: MsgView<'_>, etag: Option<&[u8]>, last_modified: i64) -> bool {
    let mut inm = false;
    for v in req.values(b"if-none-match") {
        inm = true;
        if v == b"*" || etag.is_some_and(|e| weak_eq(e, v)) {
            return true;
        }
    }
    if inm {
        return false;
    }
    req.first(b"if-modified-since").and_then(http_date).is_some_and(|ims| last_modified <= ims)
}

/// ETags compared weakly (`W/` ignored); invalid ones never match.
fn weak_eq(a: &[u8], b: &[u8]) -> bool {
    let strip = |e: &[u8]| -> Option<Vec<u8>> {
        let e = e.strip_prefix(b"W/").unwrap_or(e);
        (e.len() >= 2 && e[0] == b'"' && e[e.len() - 1] == b'"').then(|| e.to_vec())
    };
    matches!((strip(a), strip(b)), (Some(x), Some(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_and_dates_are_read() {
        assert_eq!(directive(b"max-age=60", b"max-age"), Some(Some(60)));
        assert_eq!(directive(b"max-age=\"5\"", b"max-age"), Some(Some(5)));
        assert_eq!(directive(b"max-age=x", b"max-age"), Some(None));
        assert_eq!(directive(b"s-maxage=1", b"max-age"), None);
        assert_eq!(http_date(b"Thu, 01 Jan 1970 00:01:00 GMT"), Some(60));
        assert!(http_date(b"garbage").is_none());
    }

    #[test]
    fn etags_compare_weakly() {
        assert!(weak_eq(b"W/\"a\"", b"\"a\""));
        assert!(!weak_eq(b"\"a\"", b"\"b\""));
        assert!(!weak_eq(b"a", b"a"));
    }

    #[test]
    fn a_stored_encoding_must_be_accepted() {
        let gzip = SecKey { encodings: 1 << 1, referer: 0 };
        let accepts_gzip = SecKey { encodings: ENC_IDENTITY | (1 << 1), referer: 0 };
        let identity_only = SecKey { encodings: ENC_IDENTITY, referer: 0 };
        assert!(key_matches(gzip, accepts_gzip, VARY_ACCEPT_ENCODING));
        assert!(!key_matches(gzip, identity_only, VARY_ACCEPT_ENCODING));
        assert!(key_matches(SecKey { encodings: ENC_IDENTITY, referer: 0 }, accepts_gzip, VARY_ACCEPT_ENCODING));
    }
}
