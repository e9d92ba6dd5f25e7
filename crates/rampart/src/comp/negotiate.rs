//! When a response is compressed, decided on the message heads alone: the algorithm
//! the request accepts (`Accept-Encoding` with its q-values, old `Mozilla/4` agents
//! refused), then whether the response may be transformed (version, method, status,
//! framing, `Content-Encoding`, `Cache-Control: no-transform`, `ETag`, content type),
//! and the edits of the head of a response being compressed.
//! HAProxy counterpart: `select_compression_request_header()`,
//! `select_compression_response_header()` and `set_compression_response_header()`
//! (src/flt_http_comp.c).

use rampart_cfg::model::CompAlgo;

use crate::http::{BodyLen, Method, MsgHead, MsgView, NoRoom, Version};
use crate::sample::conv::parse_qvalue;

/// The algorithm to compress the response to this request with, from `algos` (the
/// backend's, else the frontend's), or `None`.
pub fn select_request(algos: &[CompAlgo], req: MsgView<'_>) -> Option<CompAlgo> {
    if req.first(b"user-agent").is_some_and(old_mozilla) {
        return None;
    }
    let mut best: Option<(CompAlgo, u32)> = None;
    for item in req.values(b"accept-encoding") {
        let (token, q) = token_and_q(item);
        if q <= best.map_or(0, |(_, q)| q) {
            continue;
        }
        let wildcard = item.first() == Some(&b'*');
        if let Some(&algo) = algos.iter().find(|a| wildcard || token.eq_ignore_ascii_case(a.token().as_bytes())) {
            best = Some((algo, q));
        }
    }
    // identity needs no header
    best.map(|(a, _)| a).or_else(|| algos.iter().copied().find(|&a| a == CompAlgo::Identity))
}

/// The coding token of an `Accept-Encoding` element and its q-value in thousandths
/// (1000 without one).
fn token_and_q(item: &[u8]) -> (&[u8], u32) {
    let tok_len = item.iter().position(|&c| !is_token(c)).unwrap_or(item.len());
    let token = &item[..tok_len];
    for param in item[tok_len..].split(|&c| c == b';').skip(1) {
        let p = param.trim_ascii_start();
        if let Some(v) = p.strip_prefix(b"q=") {
            return (token, parse_qvalue(v, 0).0);
        }
    }
    (token, 1000)
}

fn is_token(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

/// `Mozilla/4` agents are refused unless MSIE 6 with XP SP2 ("SV1"), or MSIE 7 and
/// later, read at the offsets HAProxy reads them.
fn old_mozilla(ua: &[u8]) -> bool {
    if !ua.starts_with(b"Mozilla/4") {
        return false;
    }
    if ua.len() < 31 || &ua[25..30] != b"MSIE " || ua[30] < b'6' {
        return true;
    }
    ua[30] == b'6' && (ua.len() < 54 || &ua[51..54] != b"SV1")
}

/// What the response step needs to know of the request.
#[derive(Debug, Clone, Copy)]
pub struct ReqFacts {
    pub version: Version,
    pub method: Method,
}

/// Whether response `res` (with the framing the server gave, `until_close` when its
/// body ends with the connection) may be compressed, given the `compression type`
/// list `types`.
pub fn response_allows(types: &[String], req: ReqFacts, res: MsgView<'_>, until_close: bool) -> bool {
    let head = res.head;
    let v11 = |v: Version| v != Version::Http10;
    if !v11(head.version) || !v11(req.version) || req.method == Method::Head {
        return false;
    }
    if !matches!(head.status, 200..=203) || until_close || head.body == BodyLen::None {
        return false;
    }
    if res.first(b"content-encoding").is_some() {
        return false;
    }
    if res.values(b"cache-control").any(|v| v.eq_ignore_ascii_case(b"no-transform")) {
        return false;
    }
    let mut etags = res.full_values(b"etag");
    if etags.next().is_some_and(|e| !valid_etag(e)) || etags.next().is_some() {
        return false;
    }
    type_allows(types, res.first(b"content-type"))
}

/// `"…"` or `W/"…"`.
fn valid_etag(e: &[u8]) -> bool {
    let e = e.strip_prefix(b"W/").unwrap_or(e);
    e.len() >= 2 && e[0] == b'"' && e[e.len() - 1] == b'"'
}

/// Never `multipart/…`; with `compression type` lines, only the types they list (as
/// prefixes) and never a response without a type.
fn type_allows(types: &[String], ct: Option<&[u8]>) -> bool {
    match ct {
        Some(ct) if ct.len() >= 9 && ct[..9].eq_ignore_ascii_case(b"multipart") => false,
        Some(ct) => {
            types.is_empty()
                || types.iter().any(|t| ct.len() >= t.len() && ct[..t.len()].eq_ignore_ascii_case(t.as_bytes()))
        }
        None => types.is_empty(),
    }
}

/// Rewrites the head of a response about to be compressed with `algo`: its
/// `Content-Encoding` (none for identity), no `Content-Length` (the mux then chunks
/// it), a strong `ETag` made weak, and `Vary: Accept-Encoding`.
pub fn rewrite_head(res: &mut MsgHead, buf: &[u8], algo: CompAlgo) -> Result<(), NoRoom> {
    if algo != CompAlgo::Identity {
        res.add_header(b"Content-Encoding", algo.token().as_bytes())?;
    }
    res.del_header(buf, b"content-length");
    res.body = BodyLen::Unknown;
    let etag = res.view(buf).headers().find(|(_, n, _)| n.eq_ignore_ascii_case(b"etag")).map(|(i, _, v)| (i, v));
    if let Some((i, v)) = etag.filter(|(_, v)| v.first() == Some(&b'"')) {
        let mut weak = Vec::with_capacity(v.len() + 2);
        weak.extend_from_slice(b"W/");
        weak.extend_from_slice(v);
        res.set_header_value(i, &weak)?;
    }
    res.add_header(b"Vary", b"Accept-Encoding")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(list: &[&str]) -> Vec<String> {
        list.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn the_best_q_value_picks_the_algorithm() {
        let algos = [CompAlgo::Deflate, CompAlgo::Gzip];
        assert_eq!(token_and_q(b"gzip;q=0.750"), (&b"gzip"[..], 750));
        assert_eq!(token_and_q(b"gzip ; level=1; q=0"), (&b"gzip"[..], 0));
        assert_eq!(token_and_q(b"br"), (&b"br"[..], 1000));
        let pick = |ae: &str| {
            let mut best: Option<(CompAlgo, u32)> = None;
            for item in crate::http::uri::comma_items(ae.as_bytes()) {
                let (t, q) = token_and_q(item);
                if q <= best.map_or(0, |b| b.1) {
                    continue;
                }
                let w = item.first() == Some(&b'*');
                if let Some(&a) = algos.iter().find(|a| w || t.eq_ignore_ascii_case(a.token().as_bytes())) {
                    best = Some((a, q));
                }
            }
            best.map(|b| b.0)
        };
        assert_eq!(pick("*;q=0, gzip;q=0.750, deflate;q=0.500"), Some(CompAlgo::Gzip));
        assert_eq!(pick("*;q=0, gzip;q=0.500, deflate;q=0.750"), Some(CompAlgo::Deflate));
        assert_eq!(pick("*"), Some(CompAlgo::Deflate));
        assert_eq!(pick("br, identity"), None);
    }

    #[test]
    fn old_mozilla_agents_are_refused_but_msie_7() {
        assert!(old_mozilla(b"Mozilla/4"));
        assert!(old_mozilla(b"Mozilla/4.0 (compatible; MSIE 5.5; Windows NT 5.0)"));
        assert!(!old_mozilla(b"Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)"));
        assert!(!old_mozilla(b"Mozilla/5.0 (X11; Linux x86_64)"));
    }

    #[test]
    fn types_are_prefixes_and_multipart_never() {
        let c = types(&["text/html", "text/plain"]);
        assert!(type_allows(&c, Some(b"text/plain; charset=utf-8")));
        assert!(!type_allows(&c, Some(b"text/css")));
        assert!(!type_allows(&c, None));
        let any = types(&[]);
        assert!(type_allows(&any, None));
        assert!(!type_allows(&any, Some(b"multipart/mixed")));
    }

    #[test]
    fn etags_must_be_quoted() {
        assert!(valid_etag(b"\"abc\""));
        assert!(valid_etag(b"W/\"abc\""));
        assert!(!valid_etag(b"abc"));
        assert!(!valid_etag(b"\""));
    }
}
