//! `fcgi-app` sections: how a backend's FastCGI servers (`server ... proto fcgi`) are
//! spoken to (`use-fcgi-app <name>` in the backend).

use super::RegexSrc;
use crate::span::Span;

/// One `fcgi-app <name>` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FcgiApp {
    pub name: String,
    /// `docroot <path>`: the application's root on the server (`DOCUMENT_ROOT`).
    pub docroot: String,
    /// `index <file>`: the script a path ending in `/` runs.
    pub index: String,
    /// `path-info <regex>`: its first capture is `SCRIPT_NAME`, its second `PATH_INFO`.
    pub path_info: Option<RegexSrc>,
    /// `pass-header <name>` (lower case): request headers passed although hidden by
    /// default (`Authorization`, ...).
    pub pass_headers: Vec<String>,
    /// `option keep-conn` (on by default): the application keeps the connection open.
    pub keep_conn: bool,
    /// `option get-values`: ask the application's limits on a new connection.
    pub get_values: bool,
    /// `option mpxs-conns`: the application multiplexes requests on a connection.
    pub mpxs_conns: bool,
    /// `option max-reqs <n>`.
    pub max_reqs: u32,
    pub span: Span,
}

impl FcgiApp {
    pub fn new(name: &str, span: Span) -> FcgiApp {
        FcgiApp {
            name: name.to_owned(),
            docroot: String::new(),
            index: String::new(),
            path_info: None,
            pass_headers: Vec::new(),
            keep_conn: true,
            get_values: false,
            mpxs_conns: false,
            max_reqs: 1,
            span,
        }
    }

    /// Whether the request header `name` (lower case) is hidden from the application:
    /// hop-by-hop and credential headers, as HAProxy's defaults, unless `pass-header`
    /// names it.
    pub fn hides(&self, name: &[u8]) -> bool {
        const HIDDEN: &[&[u8]] = &[
            b"connection",
            b"keep-alive",
            b"authorization",
            b"proxy",
            b"proxy-authorization",
            b"proxy-authenticate",
            b"te",
            b"trailers",
            b"transfer-encoding",
            b"upgrade",
        ];
        HIDDEN.iter().any(|h| h.eq_ignore_ascii_case(name))
            && !self.pass_headers.iter().any(|p| p.as_bytes().eq_ignore_ascii_case(name))
    }
}
