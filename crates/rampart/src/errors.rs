//! Synthetic responses: HAProxy's default error pages, and `errorfile` overrides.
//! Every 400/408/502/503/504 rampart produces comes from here.
//!
//! COMPAT: the bytes match HAProxy 2.6 on the wire. Errors the H1 mux emits while
//! parsing (400, 408, 422) keep HAProxy's mixed-case header names and, but for 422,
//! `Connection: close`; the ones the stream emits after a server failure (502, 503,
//! 504) go through HAProxy's HTX layer, which lowercases header names and lets the
//! connection live.

use std::sync::{Arc, OnceLock};

use crate::h1::msg::parse_reply;
use crate::http::ReplyTpl;

/// Status codes HAProxy has a default page for (also the codes `errorfile` accepts).
pub const KNOWN_CODES: &[u16] =
    &[200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 421, 422, 425, 429, 500, 501, 502, 503, 504];

/// Reason phrase and message line of each default page.
fn page_text(code: u16) -> Option<(&'static str, &'static str)> {
    Some(match code {
        200 => ("OK", "Service ready."),
        400 => ("Bad request", "Your browser sent an invalid request."),
        401 => ("Unauthorized", "You need a valid user and password to access this content."),
        403 => ("Forbidden", "Request forbidden by administrative rules."),
        404 => ("Not Found", "The resource could not be found."),
        405 => (
            "Method Not Allowed",
            "A request was made of a resource using a request method not supported by that resource",
        ),
        407 => ("Unauthorized", "You need a valid user and password to access this content."),
        408 => ("Request Time-out", "Your browser didn't send a complete request in time."),
        410 => ("Gone", "The resource is no longer available and will not be available again."),
        413 => ("Payload Too Large", "The request entity exceeds the maximum allowed."),
        421 => ("Misdirected Request", "Request sent to a non-authoritative server."),
        422 => ("Unprocessable Content", "The server cannot process the contained instructions."),
        425 => ("Too Early", "Your browser sent early data."),
        429 => ("Too Many Requests", "You have sent too many requests in a given amount of time."),
        500 => ("Internal Server Error", "An internal server error occurred."),
        501 => ("Not Implemented", ".The server does not support the functionality required to fulfill the request."),
        502 => ("Bad Gateway", "The server returned an invalid or incomplete response."),
        503 => ("Service Unavailable", "No server is available to handle this request."),
        504 => ("Gateway Time-out", "The server didn't respond in time."),
        _ => return None,
    })
}

/// How the page is framed on the wire (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Emitted by the H1 mux: mixed-case names, `Connection: close` (but 422).
    Mux,
    /// Emitted by the stream: lowercase names.
    Stream,
}

/// The default page for `code` as complete response bytes.
pub fn default_page(code: u16, origin: Origin) -> Vec<u8> {
    let (reason, text) = page_text(code).unwrap_or(("Internal Server Error", "An internal server error occurred."));
    let body = format!("<html><body><h1>{code} {reason}</h1>\n{text}\n</body></html>\n");
    match origin {
        // HAProxy's 422 page (`identity` in a request's Transfer-Encoding) has no
        // `Connection` header; the mux closes after it all the same.
        Origin::Mux => format!(
            "HTTP/1.1 {code} {reason}\r\nContent-length: {}\r\nCache-Control: no-cache\r\n{}Content-Type: text/html\r\n\r\n{body}",
            body.len(),
            if code == 422 { "" } else { "Connection: close\r\n" }
        ),
        // HAProxy's 400 and 408 pages ask to close the connection; the front mux
        // writes that `connection: close` last, as any connection header.
        Origin::Stream => format!(
            "HTTP/1.1 {code} {reason}\r\ncontent-length: {}\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n{}\r\n{body}",
            body.len(),
            if matches!(code, 400 | 408) { "connection: close\r\n" } else { "" }
        ),
    }
    .into_bytes()
}

/// The default stream page for `code`.
fn default_reply(code: u16) -> ReplyTpl {
    parse_reply(&default_page(code, Origin::Stream))
        .or_else(|| parse_reply(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n"))
        .expect("the fallback page parses")
}

/// HAProxy's own stream page for `code` (500's for a code without one).
pub fn builtin_page(code: u16) -> &'static ReplyTpl {
    static PAGES: std::sync::OnceLock<Vec<(u16, ReplyTpl)>> = std::sync::OnceLock::new();
    let pages = PAGES.get_or_init(|| KNOWN_CODES.iter().map(|&c| (c, default_reply(c))).collect());
    let find = |c: u16| pages.iter().find(|(k, _)| *k == c).map(|(_, p)| p);
    find(code).or_else(|| find(500)).expect("500 is a known code")
}

/// What the stream sends for one status code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamError<'a> {
    Page(&'a ReplyTpl),
    /// An `errorfile` rampart's parser cannot read: sent as is, then the connection closes.
    Raw(&'a [u8]),
    /// An empty `errorfile`: nothing is sent, the connection closes.
    Nothing,
}

#[derive(Debug, Clone)]
enum Entry {
    Page(ReplyTpl),
    Raw(Vec<u8>),
    Empty,
}

/// Pre-rendered error pages of one proxy (its `errorfile`s over the defaults).
///
/// PERF: the proxies without `errorfile`s share one set of default pages (20 000
/// backends used to render and hold 20 000 copies).
#[derive(Debug, Clone)]
pub struct ErrorPages {
    /// The page of each code the stream may emit.
    pages: Arc<[(u16, Entry)]>,
    /// Whether each page comes from an `errorfile`.
    custom: Vec<u16>,
}

impl ErrorPages {
    /// Builds the pages of a proxy from its `errorfile` list.
    pub fn new(errorfiles: &[(u16, Vec<u8>)]) -> Self {
        static DEFAULTS: OnceLock<Arc<[(u16, Entry)]>> = OnceLock::new();
        if errorfiles.is_empty() {
            let pages = DEFAULTS.get_or_init(|| Self::render(&[]).pages).clone();
            return ErrorPages { pages, custom: Vec::new() };
        }
        Self::render(errorfiles)
    }

    fn render(errorfiles: &[(u16, Vec<u8>)]) -> Self {
        let mut pages = Vec::new();
        let mut custom = Vec::new();
        for &code in KNOWN_CODES {
            let entry = match errorfiles.iter().rev().find(|(c, _)| *c == code) {
                Some((_, bytes)) => {
                    custom.push(code);
                    if bytes.is_empty() {
                        Entry::Empty
                    } else {
                        parse_reply(bytes).map_or_else(|| Entry::Raw(bytes.clone()), Entry::Page)
                    }
                }
                None => Entry::Page(default_reply(code)),
            };
            pages.push((code, entry));
        }
        ErrorPages { pages: pages.into(), custom }
    }

    /// Whether `code` has an `errorfile` of this proxy.
    pub fn is_custom(&self, code: u16) -> bool {
        self.custom.contains(&code)
    }

    /// What the stream sends for `code`.
    pub fn stream(&self, code: u16) -> StreamError<'_> {
        match self.pages.iter().find(|(c, _)| *c == code).map(|(_, e)| e) {
            Some(Entry::Page(page)) => StreamError::Page(page),
            Some(Entry::Raw(bytes)) => StreamError::Raw(bytes),
            Some(Entry::Empty) | None => StreamError::Nothing,
        }
    }

    /// The bytes the H1 mux sends for `code` (400, 408 ...): always HAProxy's default
    /// page, whatever the `errorfile`, except that an empty `errorfile` silences it.
    ///
    /// COMPAT: as HAProxy 2.6 (`h1_send_error` writes `http_err_msgs`), `errorfile`
    /// does not change the errors the H1 mux answers while reading a request.
    pub fn mux(&self, code: u16) -> Vec<u8> {
        match self.pages.iter().find(|(c, _)| *c == code) {
            Some((_, Entry::Empty)) => Vec::new(),
            _ => default_page(code, Origin::Mux),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mux_400_is_haproxys_bytes() {
        let page = default_page(400, Origin::Mux);
        assert_eq!(
            page,
            b"HTTP/1.1 400 Bad request\r\nContent-length: 90\r\nCache-Control: no-cache\r\nConnection: close\r\nContent-Type: text/html\r\n\r\n<html><body><h1>400 Bad request</h1>\nYour browser sent an invalid request.\n</body></html>\n"
        );
    }

    #[test]
    fn mux_422_is_haproxys_bytes() {
        // as haproxy 2.6.12 answers `Transfer-Encoding: identity, chunked`
        assert_eq!(
            String::from_utf8(default_page(422, Origin::Mux)).unwrap(),
            "HTTP/1.1 422 Unprocessable Content\r\nContent-length: 116\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n<html><body><h1>422 Unprocessable Content</h1>\nThe server cannot process the contained instructions.\n</body></html>\n"
        );
    }

    #[test]
    fn stream_503_is_lowercase_and_keeps_the_connection() {
        let page = default_page(503, Origin::Stream);
        assert_eq!(
            page,
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 107\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n\r\n<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n"
        );
    }

    #[test]
    fn stream_400_and_408_ask_to_close_the_connection() {
        for code in [400, 408] {
            let page = String::from_utf8(default_page(code, Origin::Stream)).unwrap();
            assert!(page.contains("\r\ncontent-type: text/html\r\nconnection: close\r\n\r\n"), "{code}: {page}");
        }
        for code in [403, 500, 503] {
            assert!(!String::from_utf8(default_page(code, Origin::Stream)).unwrap().contains("connection"), "{code}");
        }
    }

    #[test]
    fn content_lengths_match_haproxy() {
        for (code, len) in [(408, 110), (502, 107), (504, 92), (501, 136), (405, 146)] {
            let page = String::from_utf8(default_page(code, Origin::Stream)).unwrap();
            assert!(page.contains(&format!("content-length: {len}\r\n")), "{code}: {page}");
        }
    }

    #[test]
    fn stream_pages_are_parsed_into_head_and_body() {
        let pages = ErrorPages::new(&[]);
        let StreamError::Page(page) = pages.stream(503) else { panic!("default page") };
        let view = page.head.view(&page.buf);
        assert_eq!((page.head.status, view.reason()), (503, &b"Service Unavailable"[..]));
        let names: Vec<_> = view.headers().map(|(_, n, _)| n).collect();
        assert_eq!(names, [&b"content-length"[..], b"cache-control", b"content-type"]);
        assert!(page.buf[page.body.clone()].starts_with(b"<html><body><h1>503 Service Unavailable</h1>"));
        assert!(page.has_length);
    }

    #[test]
    fn errorfile_overrides_stream_pages_only() {
        let pages = ErrorPages::new(&[
            (503, b"HTTP/1.0 503 x\r\nX-Custom: 1\r\n\r\ncustom".to_vec()),
            (400, b"HTTP/1.1 400 mine\r\nContent-Length: 0\r\n\r\n".to_vec()),
            (408, Vec::new()),
        ]);
        let StreamError::Page(page) = pages.stream(503) else { panic!("parsed errorfile") };
        let view = page.head.view(&page.buf);
        assert_eq!(view.headers().map(|(_, n, v)| (n, v)).collect::<Vec<_>>(), [(&b"X-Custom"[..], &b"1"[..])]);
        assert_eq!(
            (&page.buf[page.body.clone()], page.head.version, page.has_length),
            (b"custom".as_slice(), crate::http::Version::Http10, false)
        );
        assert!(pages.mux(400).starts_with(b"HTTP/1.1 400 Bad request\r\nContent-length: 90"));
        assert!(pages.mux(408).is_empty(), "an empty errorfile silences the mux");
        assert_eq!(pages.stream(408), StreamError::Nothing);
        assert!(pages.is_custom(503) && !pages.is_custom(502));
    }
}
