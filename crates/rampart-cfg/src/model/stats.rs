//! `stats socket` lines and the statistics page (`stats uri`, `stats auth` ...).

use std::time::Duration;

use crate::span::Span;

use super::{source, ListenAddr};

/// A `stats socket <addr> [options]` line.
#[derive(Debug, Clone)]
pub struct StatsSocket {
    pub addr: ListenAddr,
    /// Remaining words (`mode`, `level`, `expose-fd listeners`, ...), parsed by the CLI issue.
    pub options: Vec<String>,
    pub span: Span,
}

/// The statistics page of a proxy (`stats ...` keywords; any of them enables it).
#[derive(Debug, Clone, PartialEq)]
pub struct StatsPage {
    /// `stats uri`: the page answers requests whose path and query start with it.
    pub uri: String,
    /// `stats realm` (HAProxy's default: `HAProxy Statistics`).
    pub realm: Option<String>,
    /// `stats auth <user>:<password>` accounts; none: the page is open.
    pub auth: Vec<StatsAuth>,
    /// `stats refresh` (seconds, rounded up).
    pub refresh: Option<Duration>,
    pub hide_version: bool,
    pub show_legends: bool,
    /// `stats show-modules`: the statistics modules' counters (ssl, h2, h1), one column
    /// each whose tooltip lists them.
    pub show_modules: bool,
    /// `stats show-node [name]`: `Some("")` for the host name.
    pub show_node: Option<String>,
    /// `stats show-desc [text]`.
    pub show_desc: Option<String>,
    /// `stats scope <proxy>`: the proxies shown (all when empty).
    pub scope: Vec<String>,
    /// `stats admin if|unless <cond>` lines: a request meeting one may change servers
    /// through the page's form.
    pub admin: Vec<source::Condition>,
    /// The first `stats` line.
    pub span: Span,
}

impl StatsPage {
    /// HAProxy's realm when `stats realm` is not set.
    pub const DEFAULT_REALM: &'static str = "HAProxy Statistics";

    pub fn new(uri: &str, span: Span) -> StatsPage {
        StatsPage {
            uri: uri.to_owned(),
            realm: None,
            auth: Vec::new(),
            refresh: None,
            hide_version: false,
            show_legends: false,
            show_modules: false,
            show_node: None,
            show_desc: None,
            scope: Vec::new(),
            admin: Vec::new(),
            span,
        }
    }
}

/// A `stats auth` account.
#[derive(Debug, Clone, PartialEq)]
pub struct StatsAuth {
    pub user: String,
    pub password: String,
}
