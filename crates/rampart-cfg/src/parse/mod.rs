//! Sections and keywords -> [`Config`]: the line dispatcher, section switching, the
//! `no` / `default` prefixes, then the cross-reference checks.
//!
//! HAProxy counterpart: `readcfgfile()` in src/cfgparse.c (section detection and the
//! keyword modifiers), `cfg_parse_global()` and `cfg_parse_listen()` (one function per
//! section here: `global`, `proxy`), `check_config_validity()` (`check`).
//!
//! Every keyword parser reports with the line's span and returns; parsing always goes on
//! to the next line so that one run lists every problem.
//!
//! - `value`, `addr`: times, integers, names, networks; listening and server addresses
//! - `global`: the `global` section
//! - `proxy`: section headers and proxy keyword dispatch; `inherit`: what a section
//!   takes from its `defaults` section
//! - `ctx`: a proxy section while it is parsed (`ProxyBuild`) and what keyword parsers get
//!   (`Ctx`), below the keyword parsers and `proxy`
//! - `proxy_kw`: the simple proxy keywords (mode, maxconn, timeouts, balance...)
//! - `option`: `option ...`
//! - `bind`, `server`: `bind` lines, `server` / `default-server` / `server-template` lines;
//!   `server_dns`: the DNS options of servers and `init-addr`
//! - `rule`: the rule lists (`http-request`, `tcp-request`...) and `redirect`
//! - `switching`: `acl`, `use_backend`, `use-server`, `monitor`, `capture`, `unique-id-*`
//! - `errorfile`: error files and `errorfile`; `http_errors`: `errorfiles`, `http-error`
//!   and `http-errors` sections
//! - `userlist`: `userlist` sections
//! - `filter`: `compression` and `filter` lines; `cache`: `cache` sections
//! - `peers`: `peers` sections, `localpeer`, the local node
//! - `resolvers`: `resolvers` sections (nameservers, timeouts, hold periods)
//! - `ring`: `ring` sections (log buffers forwarded to TCP syslog servers)
//! - `log`: `log` lines (kept raw)
//! - `log_forward`: `log-forward` sections (syslog receivers and their targets)
//! - `healthcheck`, `tcpcheck`: `option httpchk` / `http-check`, `option tcp-check` and the
//!   protocol checks / `tcp-check`; `check_step`: the rules both rule lists share
//! - `subsys`: `mailers` and `program` sections, `email-alert`, `external-check`
//! - `default_path`: `default-path` and the directory relative file names start from
//! - `crt_store`: `crt-store` sections (HAProxy 3.x) and `bind ... crt @<store>/<name>`
//! - `check`, `check_rules`: checks that need the whole configuration

mod addr;
mod balance;
mod bind;
mod cache;
mod check;
mod check_rules;
mod check_step;
mod cookie;
mod crt_store;
mod ctx;
mod default_path;
mod errorfile;
mod fcgi_app;
pub(crate) mod filter;
mod global;
mod global_comp;
mod global_misc;
mod global_process;
mod global_sockets;
mod global_tune;
mod healthcheck;
mod http_errors;
mod inherit;
mod log;
mod log_forward;
mod lua;
mod option;
mod peers;
mod proxy;
mod proxy_kw;
mod resolvers;
mod ring;
mod rule;
mod server;
mod server_dns;
mod server_dyn;
mod server_ssl;
mod server_state;
pub(crate) mod spoe;
mod ssl;
mod stats;
mod stick;
mod subsys;
mod switching;
mod tcpcheck;
mod userlist;
mod value;

pub use addr::{env_expand, parse_server_target, server_target_name};
pub use rule::parse_var_name;
pub use server_dyn::{parse_dynamic_server, DYNAMIC_OPTIONS};

use std::sync::Arc;

use crate::diag::{Diag, Diags};
use crate::kw;
use crate::lexer::Line;
pub(crate) use crate::migrate::legacy::Section;
use crate::model::{Config, Global};
use crate::span::Span;

pub(crate) use ctx::ProxyBuild;

/// One configuration file, already split into lines by the lexer.
pub struct FileLines {
    pub name: Arc<str>,
    pub lines: Vec<Line>,
}

/// The section the following lines belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cursor {
    /// Start of a file: nothing yet.
    Outside,
    Global,
    /// A `defaults` section, index into [`Parser::defaults`].
    Defaults(usize),
    /// A frontend/backend/listen, index into [`Parser::proxies`].
    Proxy(usize),
    /// A `userlist` section, index into [`Parser::userlists`].
    Userlist(usize),
    /// An `http-errors` section, index into [`Parser::http_errors`].
    HttpErrors(usize),
    /// A `log-forward` section, index into [`Parser::log_forwards`].
    LogForward(usize),
    /// A `ring` section, index into [`Parser::rings`].
    Ring(usize),
    /// A `cache` section, index into [`Parser::caches`].
    Cache(usize),
    /// A `resolvers` section, index into [`Parser::resolvers`].
    Resolvers(usize),
    /// A `peers` section, index into [`Parser::peers`].
    Peers(usize),
    /// A `crt-store` section (HAProxy 3.x), index into `global.ssl.crt_stores`.
    CrtStore(usize),
    /// A `mailers` section, index into [`Parser::mailers`].
    Mailers(usize),
    /// A `program` section, index into [`Parser::programs`].
    Program(usize),
    /// An `fcgi-app` section, index into [`Parser::fcgi_apps`].
    FcgiApp(usize),
    /// A section rampart does not parse (already reported), or whose header was refused:
    /// its lines are skipped without further noise.
    Skipped,
}

/// `no` / `default` in front of a keyword (HAProxy's `KWM_NO` / `KWM_DEF`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Modifier {
    Std,
    No,
    Default,
}

/// Keywords the `no` / `default` prefixes may be used with (cfgparse.c).
const NEGATABLE: &[&str] =
    &["option", "log", "busy-polling", "set-dumpable", "strict-limits", "insecure-fork-wanted", "numa-cpu-mapping"];

/// Parser state across all files of one load.
pub(crate) struct Parser {
    pub global: Global,
    /// Every `defaults` section in order (named and anonymous).
    pub defaults: Vec<ProxyBuild>,
    /// The last `defaults` section seen: what a proxy without `from` inherits.
    pub last_defaults: Option<usize>,
    pub proxies: Vec<ProxyBuild>,
    /// Indices in `proxies` by name, in order (a frontend and a backend may share one):
    /// name clashes are found without a scan per section.
    pub proxy_names: std::collections::HashMap<String, Vec<usize>>,
    pub userlists: Vec<crate::model::Userlist>,
    pub http_errors: Vec<crate::model::HttpErrors>,
    pub log_forwards: Vec<crate::model::LogForward>,
    pub rings: Vec<crate::model::Ring>,
    pub caches: Vec<crate::model::CacheSection>,
    pub fcgi_apps: Vec<crate::model::FcgiApp>,
    pub resolvers: Vec<crate::model::Resolvers>,
    pub peers: Vec<crate::model::Peers>,
    pub mailers: Vec<crate::model::Mailers>,
    pub programs: Vec<crate::model::Program>,
    /// What HAProxy keeps across the lines of each `peers` section.
    pub peers_build: Vec<peers::PeersBuild>,
    /// The local node's name (`-L`, `localpeer`, else the host name).
    pub localpeer: String,
    /// `-L` gave it: `localpeer` is ignored.
    pub localpeer_cmdline: bool,
    cursor: Cursor,
    /// Diagnostics of the file being parsed.
    pub diags: Vec<Diag>,
    /// The first line using each feature that is kept but not done yet.
    pub pending: kw::PendingUses,
    /// The mode the last `default-path` line set (applied again at each file's start).
    pub(crate) default_path: default_path::DefaultPath,
}

impl Parser {
    fn new(local: &LocalPeer) -> Self {
        Parser {
            global: Global::default(),
            defaults: Vec::new(),
            last_defaults: None,
            proxies: Vec::new(),
            proxy_names: Default::default(),
            userlists: Vec::new(),
            http_errors: Vec::new(),
            log_forwards: Vec::new(),
            rings: Vec::new(),
            caches: Vec::new(),
            fcgi_apps: Vec::new(),
            resolvers: Vec::new(),
            peers: Vec::new(),
            mailers: Vec::new(),
            programs: Vec::new(),
            peers_build: Vec::new(),
            localpeer: local.name.clone(),
            localpeer_cmdline: local.cmdline,
            cursor: Cursor::Outside,
            diags: Vec::new(),
            pending: kw::PendingUses::default(),
            default_path: Default::default(),
        }
    }

    pub fn alert(&mut self, span: &Span, msg: impl Into<String>) {
        self.diags.push(Diag::alert(Some(span.clone()), msg));
    }

    pub fn warning(&mut self, span: &Span, msg: impl Into<String>) {
        self.diags.push(Diag::warning(Some(span.clone()), msg));
    }

    /// Parses the lines of one file. Each file starts outside any section, as in HAProxy.
    fn parse_file(&mut self, name: &str, lines: &[Line]) {
        self.cursor = Cursor::Outside;
        // as HAProxy: the mode set so far applies from the start of each file
        self.global.default_path = self.default_path.dir_for(name);
        for line in lines {
            self.parse_line(line);
        }
    }

    fn parse_line(&mut self, line: &Line) {
        let Some((kwm, words)) = self.split_modifier(line) else { return };
        // As in HAProxy, a line whose first word is empty (`""`) is an empty line.
        let Some(first) = words.first().filter(|w| !w.is_empty()) else { return };
        if let Some(section) = kw::section_kw(first) {
            self.open_section(section, words, &line.span);
            return;
        }
        match self.cursor {
            Cursor::Outside => {
                self.alert(&line.span, format!("unknown keyword '{first}' out of section."));
            }
            Cursor::Skipped => {}
            Cursor::Global => global::parse_global_line(self, words, kwm, &line.span),
            Cursor::Defaults(i) => proxy::parse_proxy_line(self, proxy::Target::Defaults(i), words, kwm, &line.span),
            Cursor::Proxy(i) => proxy::parse_proxy_line(self, proxy::Target::Proxy(i), words, kwm, &line.span),
            Cursor::Userlist(i) => userlist::parse_userlist_line(self, i, words, &line.span),
            Cursor::HttpErrors(i) => http_errors::parse_http_errors_line(self, i, words, &line.span),
            Cursor::LogForward(i) => log_forward::parse_log_forward_line(self, i, words, kwm, &line.span),
            Cursor::Ring(i) => ring::parse_ring_line(self, i, words, &line.span),
            Cursor::Cache(i) => cache::parse_cache_line(self, i, words, &line.span),
            Cursor::Resolvers(i) => resolvers::parse_resolvers_line(self, i, words, &line.span),
            Cursor::Peers(i) => peers::parse_peers_line(self, i, words, kwm, &line.span),
            Cursor::Mailers(i) => subsys::parse_mailers_line(self, i, words, &line.span),
            Cursor::CrtStore(i) => crt_store::parse_crt_store_line(self, i, words, &line.span),
            Cursor::Program(i) => subsys::parse_program_line(self, i, words, kwm, &line.span),
            Cursor::FcgiApp(i) => fcgi_app::parse_fcgi_app_line(self, i, words, kwm == Modifier::No, &line.span),
        }
    }

    /// Strips a leading `no` / `default`, refusing it on keywords that do not take it.
    fn split_modifier<'l>(&mut self, line: &'l Line) -> Option<(Modifier, &'l [String])> {
        let words = line.words.as_slice();
        let kwm = match words.first().map(String::as_str) {
            Some("no") if words.len() > 1 => Modifier::No,
            Some("default") if words.len() > 1 => Modifier::Default,
            _ => return Some((Modifier::Std, words)),
        };
        let rest = &words[1..];
        if !NEGATABLE.contains(&rest[0].as_str()) {
            self.alert(
                &line.span,
                "negation/default currently supported only for options, log, busy-polling, set-dumpable, \
                 strict-limits, insecure-fork-wanted and numa-cpu-mapping.",
            );
            return None;
        }
        Some((kwm, rest))
    }

    fn open_section(&mut self, section: &kw::Kw, words: &[String], span: &Span) {
        match section.name {
            "global" => {
                self.cursor = Cursor::Global;
                if words.len() > 1 {
                    self.alert(span, format!("'global' cannot handle unexpected argument '{}'.", words[1]));
                }
                if self.global.span == Span::default() {
                    self.global.span = span.clone();
                }
            }
            "defaults" => {
                self.cursor = match proxy::open_defaults(self, words, span) {
                    Some(i) => Cursor::Defaults(i),
                    None => Cursor::Skipped,
                }
            }
            "frontend" | "backend" | "listen" => {
                self.cursor = match proxy::open_proxy(self, words, span) {
                    Some(i) => Cursor::Proxy(i),
                    None => Cursor::Skipped,
                }
            }
            "userlist" => {
                self.cursor = match userlist::open_userlist(self, words, span) {
                    Some(i) => Cursor::Userlist(i),
                    None => Cursor::Skipped,
                }
            }
            "http-errors" => {
                self.cursor = match http_errors::open_http_errors(self, words, span) {
                    Some(i) => Cursor::HttpErrors(i),
                    None => Cursor::Skipped,
                }
            }
            "log-forward" => {
                self.cursor = match log_forward::open_log_forward(self, words, span) {
                    Some(i) => Cursor::LogForward(i),
                    None => Cursor::Skipped,
                }
            }
            "ring" => {
                self.cursor = match ring::open_ring(self, words, span) {
                    Some(i) => Cursor::Ring(i),
                    None => Cursor::Skipped,
                }
            }
            "cache" => {
                self.cursor = match cache::open_cache(self, words, span) {
                    Some(i) => Cursor::Cache(i),
                    None => Cursor::Skipped,
                }
            }
            "resolvers" => {
                self.cursor = match resolvers::open_resolvers(self, words, span) {
                    Some(i) => Cursor::Resolvers(i),
                    None => Cursor::Skipped,
                }
            }
            "fcgi-app" => {
                self.cursor = match fcgi_app::open_fcgi_app(self, words, span) {
                    Some(i) => Cursor::FcgiApp(i),
                    None => Cursor::Skipped,
                }
            }
            "peers" => {
                self.cursor = match peers::open_peers(self, words, span) {
                    Some(i) => Cursor::Peers(i),
                    None => Cursor::Skipped,
                }
            }
            "mailers" => {
                self.cursor = match subsys::open_mailers(self, words, span) {
                    Some(i) => Cursor::Mailers(i),
                    None => Cursor::Skipped,
                }
            }
            "crt-store" => {
                self.cursor = match crt_store::open_crt_store(self, words, span) {
                    Some(i) => Cursor::CrtStore(i),
                    None => Cursor::Skipped,
                }
            }
            "program" => {
                self.cursor = match subsys::open_program(self, words, span) {
                    Some(i) => Cursor::Program(i),
                    None => Cursor::Skipped,
                }
            }
            other => {
                self.alert(span, format!("'{other}' is not supported yet"));
                self.cursor = Cursor::Skipped;
            }
        }
    }
}

/// The local node's name of the peers sections, as the command line set it.
#[derive(Debug, Clone, Default)]
pub struct LocalPeer {
    /// `-L <name>`, else the host name.
    pub name: String,
    /// Given by `-L` (`localpeer` lines are then ignored).
    pub cmdline: bool,
}

/// Parses every file and returns the configuration; problems go to `diags` (lexer
/// diagnostics already there are kept in line order with the parser's own).
pub fn parse_files(files: &[FileLines], lexer_diags: Vec<Vec<Diag>>, diags: &mut Diags, local: &LocalPeer) -> Config {
    let mut p = Parser::new(local);
    let mut lexer_diags = lexer_diags.into_iter();
    for file in files {
        p.parse_file(&file.name, &file.lines);
        let parsed = std::mem::take(&mut p.diags);
        let merged = merge_by_line(lexer_diags.next().unwrap_or_default(), parsed);
        let had_alert = merged.iter().any(|d| d.level == crate::diag::Level::Alert);
        for d in merged {
            diags.push(d);
        }
        if had_alert {
            diags.push(Diag::alert(None, format!("Error(s) found in configuration file : {}", file.name)));
        }
    }
    // Once a line was refused, the final checks' warnings (a frontend without `bind`,
    // missing timeouts...) are mostly echoes of it: only their alerts are kept then.
    let parse_failed = diags.has_alerts();
    let config = check::finish(&mut p);
    // One warning per feature rampart keeps without doing it yet, at its first line.
    for (feature, span) in p.pending.used() {
        p.diags.push(Diag::warning(Some(span.clone()), feature.warning()));
    }
    for d in std::mem::take(&mut p.diags) {
        if !parse_failed || d.level == crate::diag::Level::Alert {
            diags.push(d);
        }
    }
    config
}

/// Interleaves two line-ordered diagnostic lists by line, the first list winning ties.
fn merge_by_line(a: Vec<Diag>, b: Vec<Diag>) -> Vec<Diag> {
    let line = |d: &Diag| d.span.as_ref().map_or(0, |s| s.line);
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => line(x) <= line(y),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return out,
        };
        out.extend(if take_a { a.next() } else { b.next() });
    }
}

/// "'kw' is not supported yet" (rampart's message for HAProxy keywords it lacks).
/// `diag` with a `hint:` line giving the modern replacement of the legacy line `words`
/// of `section` ([`crate::migrate`]), when there is one.
pub(crate) fn legacy_hint(diag: Diag, section: Section, words: &[String]) -> Diag {
    match crate::migrate::legacy::replacement(section, words) {
        Some(fix) => diag.with_hint(crate::migrate::legacy::hint(&fix)),
        None => diag,
    }
}

pub(crate) fn not_yet(what: &str) -> String {
    format!("'{what}' is not supported yet")
}

/// HAProxy's `alertif_too_many_args()` wording: `'kw' cannot handle unexpected argument 'x'.`
pub(crate) use crate::diag::too_many_args;

/// The word at `i`, or "" (HAProxy's argument array is padded with empty strings).
pub(crate) fn arg(words: &[String], i: usize) -> &str {
    words.get(i).map_or("", String::as_str)
}

#[cfg(test)]
pub(crate) mod tests {
    //! Helpers for the keyword parsers' unit tests: parse a text and look at the model
    //! or at the messages.

    use std::sync::Arc;

    use crate::diag::Level;
    use crate::lexer::{lex, LexCtx};
    use crate::model::Config;
    use crate::Diags;

    /// The local node's name in the tests.
    pub fn local() -> super::LocalPeer {
        super::LocalPeer { name: "rampart-test".into(), cmdline: false }
    }

    fn ctx() -> LexCtx<'static> {
        LexCtx { env: &|_| None, version: "2.6.12", features: &[] }
    }

    /// Parses `text` as file "t.cfg" and returns the configuration and every diagnostic.
    pub fn parse(text: &str) -> (Config, Diags) {
        let name: Arc<str> = "t.cfg".into();
        let mut lex_diags = Diags::default();
        let lines = lex(&name, text, &ctx(), &mut lex_diags);
        let mut diags = Diags::default();
        let files = [super::FileLines { name, lines }];
        let cfg = super::parse_files(&files, vec![lex_diags.list], &mut diags, &local());
        (cfg, diags)
    }

    /// Parses `text`, panicking with the messages if there is any alert.
    pub fn parse_ok(text: &str) -> Config {
        let (cfg, diags) = parse(text);
        let alerts: Vec<_> = diags.list.iter().filter(|d| d.level == Level::Alert).map(|d| d.render(0)).collect();
        assert!(alerts.is_empty(), "unexpected alerts:\n{}", alerts.concat());
        cfg
    }

    /// The alert messages (without location), excluding the per-file summary line.
    pub fn alerts(text: &str) -> Vec<String> {
        let (_, diags) = parse(text);
        diags.list.iter().filter(|d| d.level == Level::Alert && d.span.is_some()).map(|d| d.message.clone()).collect()
    }

    /// The warnings of the parsing phase only (not those of the final checks, such as
    /// "missing timeouts"), without location.
    pub fn warnings(text: &str) -> Vec<String> {
        let name: Arc<str> = "t.cfg".into();
        let mut lex_diags = Diags::default();
        let lines = lex(&name, text, &ctx(), &mut lex_diags);
        let mut p = super::Parser::new(&local());
        p.parse_file("t.cfg", &lines);
        p.diags.iter().filter(|d| d.level == Level::Warning).map(|d| d.message.clone()).collect()
    }

    /// The alerts of the parsing phase that do not fail the load, without location.
    pub fn soft_alerts(text: &str) -> Vec<String> {
        let (_, diags) = parse(text);
        diags.list.iter().filter(|d| d.level == Level::SoftAlert).map(|d| d.message.clone()).collect()
    }
}

#[cfg(test)]
mod file_tests {
    use std::sync::Arc;

    use super::{parse_files, FileLines};
    use crate::diag::Level;
    use crate::lexer::{lex, LexCtx};
    use crate::Diags;

    #[test]
    fn each_file_starts_outside_any_section() {
        let ctx = LexCtx { env: &|_| None, version: "2.6.12", features: &[] };
        let mut files = Vec::new();
        for (name, text) in [("a.cfg", "frontend f\n bind :1\n timeout client 1s\n"), ("b.cfg", " maxconn 10\n")] {
            let name: Arc<str> = name.into();
            let lines = lex(&name, text, &ctx, &mut Diags::default());
            files.push(FileLines { name, lines });
        }
        let mut diags = Diags::default();
        let cfg = parse_files(&files, vec![Vec::new(), Vec::new()], &mut diags, &Default::default());
        let rendered: Vec<String> = diags.list.iter().map(|d| d.render(1)).collect();
        assert_eq!(
            rendered,
            [
                "[ALERT]    (1) : config : parsing [b.cfg:1] : unknown keyword 'maxconn' out of section.\n",
                "[ALERT]    (1) : config : Error(s) found in configuration file : b.cfg\n",
            ]
        );
        assert_eq!(cfg.proxies[0].maxconn, None);
        assert!(diags.list.iter().all(|d| d.level == Level::Alert));
    }
}
