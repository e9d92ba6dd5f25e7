//! The state of a proxy or `defaults` section while it is parsed ([`ProxyBuild`], started
//! from HAProxy's built-in defaults by [`fresh_build`], with its `default-server` settings
//! and its error-page lines), and what every proxy keyword parser gets ([`Ctx`]). The
//! keyword parsers, `inherit` and the section dispatcher (`proxy`) all build on it; it
//! uses none of them.
//!
//! HAProxy counterpart: `proxy_preset_defaults()` (src/proxy.c).

use crate::diag::Diag;
use crate::model::{
    Balance, Cap, Captures, CheckOptions, HttpReply, HttpReuse, Mode, Proxy, ProxyOptions, RuleSet, Timeouts,
};
use crate::span::Span;

use super::{legacy_hint, too_many_args, Section};

/// The section kind, which decides the capabilities and the words used in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Defaults,
    Frontend,
    Backend,
    Listen,
}

impl Kind {
    pub(super) fn from_word(word: &str) -> Kind {
        match word {
            "frontend" => Kind::Frontend,
            "backend" => Kind::Backend,
            "listen" => Kind::Listen,
            _ => Kind::Defaults,
        }
    }

    /// The section keyword (HAProxy's `cursection`), as in "in 'listen' section".
    pub fn section_word(self) -> &'static str {
        match self {
            Kind::Defaults => "defaults",
            Kind::Frontend => "frontend",
            Kind::Backend => "backend",
            Kind::Listen => "listen",
        }
    }

    /// HAProxy's `proxy_cap_str()`: a `listen` is a "proxy".
    pub fn type_str(self) -> &'static str {
        match self {
            Kind::Defaults => "defaults",
            Kind::Frontend => "frontend",
            Kind::Backend => "backend",
            Kind::Listen => "proxy",
        }
    }

    pub fn cap(self) -> Cap {
        match self {
            Kind::Frontend => Cap { frontend: true, backend: false },
            Kind::Backend => Cap { frontend: false, backend: true },
            Kind::Defaults | Kind::Listen => Cap { frontend: true, backend: true },
        }
    }
}

/// `server` settings that `default-server` presets.
#[derive(Debug, Clone)]
pub(crate) struct ServerSettings {
    pub weight: u32,
    pub maxconn: Option<u32>,
    pub minconn: u32,
    pub maxqueue: u32,
    pub pool_max_conn: Option<u32>,
    pub pool_low_conn: u32,
    pub pool_purge_delay: std::time::Duration,
    /// `max-reuse`: `None` (-1, the default) or the times a connection is reused.
    pub max_reuse: Option<u32>,
    /// `redir <prefix>`.
    pub redir: Option<String>,
    pub backup: bool,
    /// `non-stick`: never stored in a stick table.
    pub non_stick: bool,
    pub disabled: bool,
    /// `id`: a `server` line's own (refused on `default-server`).
    pub id: Option<u32>,
    pub check: CheckOptions,
    pub proxy: crate::model::SendProxy,
    pub source: Option<std::net::SocketAddr>,
    pub socks4: Option<std::net::SocketAddr>,
    /// `tfo`: TCP fast open on connections to the server.
    pub tfo: bool,
    pub tls: std::sync::Arc<crate::model::ServerTls>,
    /// `cookie <value>`.
    pub cookie: Option<String>,
    /// `proto <mux>`.
    pub proto: Option<crate::model::BindProto>,
    /// `ws <mode>`.
    pub ws: crate::model::ServerWs,
    /// `resolvers`, `resolve-prefer`, `resolve-net`, `resolve-opts`, `init-addr`.
    pub resolve: crate::model::ServerResolve,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            weight: 1,
            maxconn: None,
            minconn: 0,
            maxqueue: 0,
            pool_max_conn: None,
            pool_low_conn: 0,
            pool_purge_delay: std::time::Duration::from_secs(5),
            max_reuse: None,
            redir: None,
            backup: false,
            non_stick: false,
            disabled: false,
            id: None,
            check: CheckOptions::default(),
            proxy: crate::model::SendProxy::default(),
            source: None,
            tfo: false,
            socks4: None,
            tls: Default::default(),
            cookie: None,
            proto: None,
            ws: crate::model::ServerWs::Auto,
            resolve: crate::model::ServerResolve::default(),
        }
    }
}

/// A proxy or `defaults` section while it is being parsed: the model object plus what
/// parsing needs to remember.
#[derive(Debug, Clone)]
pub(crate) struct ProxyBuild {
    pub px: Proxy,
    pub kind: Kind,
    /// The `default-server` settings in effect.
    pub defsrv: ServerSettings,
    /// The timeouts as inherited, to warn when a proxy sets one twice.
    pub inherited_timeouts: Timeouts,
    /// Line of the `option httplog` / `option tcplog` in effect (HAProxy's `lfs_line`).
    pub logformat_span: Option<Span>,
    /// For `defaults`: referenced by `from <name>` / used implicitly by some proxy.
    pub explicit_ref: bool,
    pub implicit_ref: bool,
    /// For `defaults` with rules: the capability of the proxies that took them (frontends
    /// and backends may not share such a section).
    pub rules_taken_by: Option<Kind>,
    /// The named `defaults` section (index into [`super::Parser::defaults`]) whose rules this
    /// proxy runs first.
    pub defaults_rules: Option<usize>,
    /// `errorfile`, `errorfiles` and `http-error` lines, inherited ones first; resolved
    /// into the proxy's pages once every section is read.
    pub errors: Vec<ErrorConf>,
}

/// What keyword parsers get: the section being built, where to report, and the global
/// settings some keywords depend on.
pub(crate) struct Ctx<'a> {
    pub pb: &'a mut ProxyBuild,
    pub diags: &'a mut Vec<Diag>,
    pub span: &'a Span,
    pub bufsize: usize,
    pub maxrewrite: usize,
    /// `expose-experimental-directives` was seen in `global`.
    pub experimental: bool,
    /// Where the line records its use of a feature kept but not done yet.
    pub pending: &'a mut crate::kw::PendingUses,
    /// `unix-bind` as set by the `global` lines read so far.
    pub unix_bind: &'a crate::model::UnixBind,
    /// The global TLS settings read so far (`crt-store` sections for `bind ... crt @`).
    pub global_ssl: &'a crate::model::GlobalSsl,
    /// Where relative file names start from (`default-path`; `None`: the current directory).
    pub base_dir: Option<&'a std::path::Path>,
}

impl Ctx<'_> {
    /// Records that this line uses `keyword` (see [`crate::kw::Pending`]).
    pub fn note(&mut self, keyword: &str) {
        self.pending.note(keyword, self.span);
    }

    pub fn alert(&mut self, msg: impl Into<String>) {
        self.diags.push(Diag::alert(Some(self.span.clone()), msg));
    }

    pub fn warning(&mut self, msg: impl Into<String>) {
        self.diags.push(Diag::warning(Some(self.span.clone()), msg));
    }

    /// An alert for a legacy line, with its modern replacement as a `hint:` line
    /// ([`crate::migrate`]) when there is one.
    pub fn alert_legacy(&mut self, msg: impl Into<String>, words: &[String]) {
        let diag = Diag::alert(Some(self.span.clone()), msg);
        self.diags.push(legacy_hint(diag, Section::Proxy, words));
    }

    pub fn cap(&self) -> Cap {
        self.pb.px.cap
    }

    pub fn is_defaults(&self) -> bool {
        self.pb.kind == Kind::Defaults
    }

    /// HAProxy's `warnifnotcap()`: warns and returns `true` when the section lacks the
    /// capability (`frontend` or `backend`) a keyword needs; the keyword is then ignored.
    pub fn ignored_without(&mut self, need_frontend: bool, what: &str, hint: &str) -> bool {
        let cap = self.cap();
        let has = if need_frontend { cap.frontend } else { cap.backend };
        if !has {
            let missing = if need_frontend { "frontend" } else { "backend" };
            let msg = format!(
                "'{what}' ignored because {} '{}' has no {missing} capability.{hint}",
                self.pb.kind.type_str(),
                self.pb.px.name
            );
            self.warning(msg);
        }
        !has
    }

    /// Alerts HAProxy's "cannot handle unexpected argument" when `words` has more than
    /// `index + max + 1` words; `words[..=index]` name the keyword.
    pub fn too_many(&mut self, words: &[String], max: usize, index: usize) -> bool {
        match words.get(index + max + 1) {
            Some(extra) => {
                let name = words[..=index.min(words.len() - 1)].join(" ");
                self.alert(too_many_args(&name, extra));
                true
            }
            None => false,
        }
    }
}

/// A new proxy with HAProxy's built-in defaults (`proxy_preset_defaults()`).
fn fresh_proxy(name: &str, cap: Cap, span: &Span) -> Proxy {
    Proxy {
        name: name.to_owned(),
        cap,
        mode: Mode::Tcp,
        binds: Vec::new(),
        maxconn: None,
        backlog: None,
        default_backend: None,
        use_backends: Vec::new(),
        servers: Vec::new(),
        cookie: None,
        balance: Balance::RoundRobin,
        hash_type: Default::default(),
        hash_balance_factor: 0,
        server_state: Default::default(),
        fullconn: 0,
        max_keep_alive_queue: None,
        timeouts: Timeouts::default(),
        options: ProxyOptions::default(),
        http_reuse: HttpReuse::Safe,
        retries: 3,
        source: None,
        dispatch: None,
        implicit_server: None,
        retry_on_conn_failure: true,
        retry_on_response: Default::default(),
        errorfiles: Vec::new(),
        http_error_replies: Vec::new(),
        rules: RuleSet::default(),
        defaults_rules: None,
        use_servers: Vec::new(),
        persist_rules: Vec::new(),
        persist_rdp_cookie: None,
        redirects: Vec::new(),
        tcp_request_inspect_delay: None,
        tcp_response_inspect_delay: None,
        monitor_uri: None,
        stats: None,
        monitor_fail: Vec::new(),
        captures: Captures::default(),
        unique_id_format: None,
        unique_id_header: None,
        log_tag: None,
        compression: None,
        filters: Vec::new(),
        fcgi_app: None,
        id: None,
        description: None,
        disabled: false,
        send_name_header: None,
        logs: Vec::new(),
        stick_table: None,
        stick_rules: Vec::new(),
        span: span.clone(),
    }
}

pub(super) fn fresh_build(name: &str, kind: Kind, span: &Span) -> ProxyBuild {
    ProxyBuild {
        px: fresh_proxy(name, kind.cap(), span),
        kind,
        defsrv: ServerSettings::default(),
        inherited_timeouts: Timeouts::default(),
        logformat_span: None,
        explicit_ref: false,
        implicit_ref: false,
        rules_taken_by: None,
        defaults_rules: None,
        errors: Vec::new(),
    }
}

/// One error-page line of a proxy (or of the `defaults` section it copies them from).
#[derive(Debug, Clone)]
pub(crate) enum ErrorConf {
    /// `errorfile`, or `http-error` with anything but `errorfiles`.
    Page { status: u16, page: Page },
    /// `errorfiles <name> [<code>...]` (`codes` empty: every status the section has), or
    /// `http-error status <code> errorfiles <name>`.
    Section { name: String, codes: Vec<u16>, span: Span },
}

#[derive(Debug, Clone)]
pub(crate) enum Page {
    /// A complete HTTP response (`errorfile`).
    File(Vec<u8>),
    /// Back to HAProxy's built-in page (`http-error status <code> default-errorfiles`).
    Default,
    /// Any other reply.
    Reply(HttpReply),
}
