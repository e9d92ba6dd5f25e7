//! Synthetic responses: HAProxy's default error pages, and `errorfile` overrides.
//! Every 400/408/502/503/504 rampart produces comes from here.
//!
//! COMPAT: the bytes match HAProxy 2.6 on the wire. Errors the H1 mux emits while
//! parsing (400, 408) keep HAProxy's mixed-case header names and `Connection: close`;
//! the ones the stream emits after a server failure (502, 503, 504) go through
//! HAProxy's HTX layer, which lowercases header names and lets the connection live.

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
    /// Emitted by the H1 mux: mixed-case names, `Connection: close`.
    Mux,
    /// Emitted by the stream: lowercase names.
    Stream,
}

/// The default page for `code` as complete response bytes.
pub fn default_page(code: u16, origin: Origin) -> Vec<u8> {
    let (reason, text) = page_text(code).unwrap_or(("Internal Server Error", "An internal server error occurred."));
    let body = format!("<html><body><h1>{code} {reason}</h1>\n{text}\n</body></html>\n");
    match origin {
        Origin::Mux => format!(
            "HTTP/1.1 {code} {reason}\r\nContent-length: {}\r\nCache-Control: no-cache\r\nConnection: close\r\nContent-Type: text/html\r\n\r\n{body}",
            body.len()
        ),
        Origin::Stream => format!(
            "HTTP/1.1 {code} {reason}\r\ncontent-length: {}\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n\r\n{body}",
            body.len()
        ),
    }
    .into_bytes()
}

/// Pre-rendered error pages of one proxy (its `errorfile`s over the defaults).
#[derive(Debug, Clone)]
pub struct ErrorPages {
    /// (code, bytes) for the codes emitted by the stream.
    pages: Vec<(u16, Vec<u8>)>,
    /// Whether the page for a code came from an `errorfile` (sent as is, whatever origin).
    custom: Vec<u16>,
}

impl ErrorPages {
    /// Builds the pages of a proxy from its `errorfile` list.
    pub fn new(errorfiles: &[(u16, Vec<u8>)]) -> Self {
        let mut pages = Vec::new();
        let mut custom = Vec::new();
        for &code in KNOWN_CODES {
            match errorfiles.iter().rev().find(|(c, _)| *c == code) {
                Some((_, bytes)) => {
                    pages.push((code, bytes.clone()));
                    custom.push(code);
                }
                None => pages.push((code, default_page(code, Origin::Stream))),
            }
        }
        ErrorPages { pages, custom }
    }

    /// The bytes to send for `code` from `origin`.
    pub fn get(&self, code: u16, origin: Origin) -> std::borrow::Cow<'_, [u8]> {
        if origin == Origin::Mux && !self.custom.contains(&code) {
            return std::borrow::Cow::Owned(default_page(code, Origin::Mux));
        }
        match self.pages.iter().find(|(c, _)| *c == code) {
            Some((_, b)) => std::borrow::Cow::Borrowed(b),
            None => std::borrow::Cow::Owned(default_page(code, origin)),
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
    fn stream_503_is_lowercase_and_keeps_the_connection() {
        let page = default_page(503, Origin::Stream);
        assert_eq!(
            page,
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 107\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n\r\n<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n"
        );
    }

    #[test]
    fn content_lengths_match_haproxy() {
        for (code, len) in [(408, 110), (502, 107), (504, 92), (501, 136), (405, 146)] {
            let page = String::from_utf8(default_page(code, Origin::Stream)).unwrap();
            assert!(page.contains(&format!("content-length: {len}\r\n")), "{code}: {page}");
        }
    }

    #[test]
    fn errorfile_overrides_both_origins() {
        let pages = ErrorPages::new(&[(503, b"HTTP/1.0 503 x\r\n\r\ncustom".to_vec())]);
        assert_eq!(&*pages.get(503, Origin::Stream), b"HTTP/1.0 503 x\r\n\r\ncustom");
        assert_eq!(&*pages.get(503, Origin::Mux), b"HTTP/1.0 503 x\r\n\r\ncustom");
        assert!(pages.get(502, Origin::Stream).starts_with(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length"));
    }
}
