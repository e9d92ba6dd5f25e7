//! `fcgi-app` sections: how a backend's FastCGI servers (`server ... proto fcgi`) are
//! spoken to (`use-fcgi-app <name>` in the backend).

use super::{Condition, FmtSrc, LogTarget, RegexSrc};
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
    /// `set-param <name> <fmt> [if|unless <cond>]` in order, after the two HAProxy
    /// declares first (`REMOTE_USER`, `AUTH_TYPE`); names as HAProxy keeps them
    /// (lower case, `_` for other characters than letters and digits).
    pub set_params: Vec<SetParam>,
    /// `option keep-conn` (on by default): the application keeps the connection open.
    pub keep_conn: bool,
    /// `option get-values`: ask the application's limits on a new connection.
    pub get_values: bool,
    /// `option mpxs-conns`: the application multiplexes requests on a connection.
    pub mpxs_conns: bool,
    /// `option max-reqs <n>`.
    pub max_reqs: u32,
    /// `log-stderr` lines: where the application's STDERR records are logged.
    pub log_stderr: Vec<LogTarget>,
    pub span: Span,
}

/// One `set-param` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetParam {
    /// The parameter's name as HAProxy keeps it (`remote_user`).
    pub name: String,
    pub value: FmtSrc,
    pub cond: Option<Condition>,
}

impl SetParam {
    pub fn new(name: &str, value: FmtSrc, cond: Option<Condition>) -> SetParam {
        let name = name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
        SetParam { name, value, cond }
    }

    /// The request header a backend's rule sets for this parameter (HAProxy's
    /// `:fcgi-` pseudo-header, read back by the FastCGI side).
    pub fn header_name(&self) -> String {
        format!(":fcgi-{}", self.name)
    }
}

impl FcgiApp {
    pub fn new(name: &str, span: Span) -> FcgiApp {
        FcgiApp {
            name: name.to_owned(),
            docroot: String::new(),
            index: String::new(),
            path_info: None,
            pass_headers: Vec::new(),
            set_params: ["REMOTE_USER", "AUTH_TYPE"]
                .iter()
                .zip(["%[http_auth_user]", "%[http_auth_type]"])
                .map(|(n, v)| SetParam::new(n, FmtSrc { text: v.into(), span: span.clone() }, None))
                .collect(),
            keep_conn: true,
            get_values: false,
            mpxs_conns: false,
            max_reqs: 1,
            log_stderr: Vec::new(),
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
