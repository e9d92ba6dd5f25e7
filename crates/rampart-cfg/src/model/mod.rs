//! The typed configuration model: what the parser produces and the daemon consumes.
//!
//! Everything here is resolved: `defaults` are already applied to each proxy, durations
//! are `Duration`s, addresses are parsed, file contents (`errorfile`, `http-request
//! return file`) are loaded, and cross references (`default_backend`, `use_backend`,
//! `use-server`) are indices. Sample expressions, log-format strings, regexes and ACL
//! words stay text with their line, for the daemon's engines to compile (see `source`;
//! `acl` lines are in `rules`).
//! HAProxy counterparts: `struct proxy` (include/haproxy/proxy-t.h), `struct server`
//! (server-t.h), `struct global` (global-t.h).
//!
//! - `balance`: `balance` and `hash-type`
//! - `server`: `server` lines and their options
//! - `stats`: `stats socket` lines and the statistics page
//! - `rules`: ACLs, the rule lists and their actions
//! - `reply`: HTTP replies, redirects, `http-errors` and `userlist` sections
//! - `source`: text kept for the daemon's engines (sample expressions, log-format strings,
//!   regexes, conditions), shared by `rules` and `reply`
//! - `cookie`: cookie-based server persistence (`cookie`, server `cookie`)
//! - `check`: health-check settings of a proxy (`option httpchk`, `http-check`)
//! - `filter`: `compression` lines, `filter` lines and `cache` sections
//! - `ring`: `ring` sections (log buffers and their TCP syslog servers)
//! - `server_tls`: TLS towards servers (`server ... ssl`, `ssl-default-server-*`)
//! - `stick`: stick tables, `stick` rules, tracking actions
//! - `peers`: `peers` sections (replication of stick tables)
//! - `lua`: the Lua settings of `global`
//! - `process`: `cpu-map`, `set-dumpable`, `strict-limits` (the process on the machine)
//! - `subsys`: `mailers` and `email-alert`, external checks, `program` sections

mod balance;
mod check;
mod cookie;
mod fcgi;
mod filter;
mod ids;
mod lua;
mod peers;
mod process;
mod reply;
mod resolvers;
mod ring;
mod rules;
mod server;
pub mod server_state;
mod server_tls;
mod sockets;
mod source;
mod spoe;
mod ssl;
mod stats;
mod stick;
mod subsys;

pub use balance::*;
pub use check::*;
pub use cookie::*;
pub use fcgi::*;
pub use filter::*;
pub use ids::haproxy_ids;
pub use lua::*;
pub use peers::*;
pub use process::*;
pub use reply::*;
pub use resolvers::*;
pub use ring::*;
pub use rules::*;
pub use server::*;
pub use server_tls::*;
pub use sockets::*;
pub use source::*;
pub use spoe::*;
pub use ssl::*;
pub use stats::*;
pub use stick::*;
pub use subsys::*;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::span::Span;

/// A whole configuration (one generation).
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub global: Global,
    /// Frontends, backends and listens in file order. A `listen` is one proxy with both
    /// capabilities.
    pub proxies: Vec<Proxy>,
    /// Named `defaults` sections whose rules some proxy runs ([`Proxy::defaults_rules`]).
    pub defaults: Vec<DefaultsRules>,
    /// `userlist` sections in file order (a duplicate name is ignored with a warning).
    pub userlists: Vec<Userlist>,
    /// `http-errors` sections in file order.
    pub http_errors: Vec<HttpErrors>,
    /// `log-forward` sections in file order.
    pub log_forwards: Vec<LogForward>,
    /// `ring` sections in file order.
    pub rings: Vec<Ring>,
    /// `cache` sections in file order.
    pub caches: Vec<CacheSection>,
    /// `fcgi-app` sections in file order.
    pub fcgi_apps: Vec<FcgiApp>,
    /// `resolvers` sections in file order, then the implicit `default` one when
    /// `/etc/resolv.conf` gives it nameservers and no section has that name.
    pub resolvers: Vec<Resolvers>,
    /// `peers` sections in file order (those without a local node included: they
    /// replicate nothing).
    pub peers: Vec<Peers>,
    /// The local node's name in the `peers` sections (`-L`, `localpeer`, the host name).
    pub localpeer: String,
    /// `mailers` sections in file order.
    pub mailers: Vec<Mailers>,
    /// `program` sections in file order.
    pub programs: Vec<Program>,
}

impl Config {
    /// The table named `name`: a proxy's (by the proxy's name), or a `peers` section's
    /// (`<section>/<table>`). Tables are numbered proxies first (by proxy index), then
    /// the tables of the `peers` sections in order.
    pub fn find_table(&self, name: &str) -> Option<usize> {
        if let Some(i) = self.proxies.iter().position(|p| p.name == name && p.stick_table.is_some()) {
            return Some(i);
        }
        let (sec, t) = name.split_once('/')?;
        let mut n = self.proxies.len();
        for s in &self.peers {
            if s.name == sec {
                return s.tables.iter().position(|x| x.name == t).map(|i| n + i);
            }
            n += s.tables.len();
        }
        None
    }

    /// The name and definition of table `i` ([`Config::find_table`]'s numbering).
    pub fn table(&self, i: usize) -> Option<(String, &StickTableDef)> {
        if let Some(p) = self.proxies.get(i) {
            return p.stick_table.as_ref().map(|d| (p.name.clone(), d));
        }
        let mut n = i - self.proxies.len();
        for s in &self.peers {
            match s.tables.get(n) {
                Some(t) => return Some((s.table_id(t), &t.def)),
                None => n -= s.tables.len(),
            }
        }
        None
    }

    /// Index of the proxy with this name and capability.
    pub fn find_backend(&self, name: &str) -> Option<usize> {
        self.proxies.iter().position(|p| p.cap.backend && p.name == name)
    }

    pub fn find_userlist(&self, name: &str) -> Option<&Userlist> {
        self.userlists.iter().find(|u| u.name == name)
    }
}

/// The `global` section.
#[derive(Debug, Clone)]
pub struct Global {
    /// `default-path`: the directory relative file names start from (`None`: the
    /// current directory), as in effect at the end of the last file read.
    pub default_path: Option<std::path::PathBuf>,
    pub daemon: bool,
    /// `nbthread`; `None` means one thread per CPU the process may use.
    pub nbthread: Option<usize>,
    /// `maxconn`; `None` means derived from the fd limit as HAProxy does.
    pub maxconn: Option<u32>,
    pub pidfile: Option<PathBuf>,
    pub ulimit_n: Option<u64>,
    /// `tune.pool-low-fd-ratio` and `tune.pool-high-fd-ratio`: the shares (in %) of
    /// the process's descriptors that idle server connections may take (20 and 25).
    pub pool_fd_ratios: (u8, u8),
    pub user: Option<String>,
    pub group: Option<String>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub chroot: Option<PathBuf>,
    /// `tune.bufsize` (default 16384).
    pub bufsize: usize,
    /// `tune.maxrewrite` (default 1024): the part of a buffer kept free for header edits.
    pub maxrewrite: usize,
    pub hard_stop_after: Option<Duration>,
    /// `grace`: after SIGUSR1, the `stopping` fetch is true at once but the soft stop
    /// itself waits this long (listeners keep accepting).
    pub grace: Option<Duration>,
    /// `tune.peers.max-updates-at-once`: updates a peer session pushes in one go (200).
    pub peers_max_updates: u32,
    /// `tune.h2.*`: the HTTP/2 settings rampart announces.
    pub h2: H2Tune,
    /// `tune.comp.maxlevel` (1..=9, default 1): the compression level used.
    pub comp_maxlevel: u32,
    /// `maxcomprate` in bytes per second (the keyword's kB/s times 1024); 0: no limit.
    pub comp_rate_lim: u64,
    /// 100 minus `maxcompcpuusage`: the idle percentage under which no new response
    /// is compressed and running ones lower their level (0: no limit).
    pub comp_min_idle: u32,
    /// `maxzlibmem` in bytes (the keyword's MB); 0: no limit.
    pub maxzlibmem: u64,
    /// `tune.idle-pool.shared` (HAProxy's default: on): a thread may take over the
    /// idle server connections of another thread.
    pub idle_pool_shared: bool,
    pub quiet: bool,
    /// `master-worker` (as `-W`): a master process supervises the worker.
    pub master_worker: bool,
    /// `external-check`: proxies may run external checks.
    pub external_check: bool,
    /// `insecure-fork-wanted`: the worker may start processes (external checks).
    pub insecure_fork: bool,
    /// `master-worker no-exit-on-failure`: the master stays when its worker fails.
    pub mworker_no_exit_on_failure: bool,
    /// `mworker-max-reloads <n>`: workers older than `n` reloads are stopped.
    pub mworker_max_reloads: Option<u32>,
    /// `log` lines.
    pub logs: Vec<LogTarget>,
    /// `log-tag <tag>` (default: the program name).
    pub log_tag: Option<String>,
    /// `log-send-hostname [<name>]`: `Some("")` for the system's host name.
    pub log_send_hostname: Option<String>,
    /// `stats socket` lines, kept for the runtime-API issue.
    pub stats_sockets: Vec<StatsSocket>,
    /// `stats timeout`: idle timeout of stats socket connections (HAProxy default 10s).
    pub stats_timeout: Option<Duration>,
    /// `stats maxconn`: concurrent stats socket connections (HAProxy default 10).
    pub stats_maxconn: Option<u32>,
    /// `tune.vars.*-max-size`.
    pub vars: VarsLimits,
    /// `lua-load`, `lua-load-per-thread`, `lua-prepend-path`, `tune.lua.*`.
    pub lua: LuaSettings,
    /// `expose-experimental-directives` (needed by `http-request normalize-uri`).
    pub expose_experimental: bool,
    /// `set-var` / `set-var-fmt` lines, evaluated at startup in order (`proc.` only).
    pub set_vars: Vec<GlobalSetVar>,
    /// `ssl-default-bind-*`, `ca-base`, `crt-base`, `tune.ssl.*`.
    pub ssl: GlobalSsl,
    /// `spread-checks` (0..=50): random +/- percentage added to each check interval.
    pub spread_checks: u32,
    /// `server-state-file` and `server-state-base` (`server_state`).
    pub server_state: server_state::GlobalServerState,
    /// `ssl-default-server-*`, `ssl-server-verify`.
    pub ssl_server: SslServerDefaults,
    /// `tune.rcvbuf.*`, `tune.sndbuf.*`.
    pub sockbufs: SockBufs,
    /// `unix-bind`.
    pub unix_bind: UnixBind,
    /// `cpu-map` lines.
    pub cpu_map: CpuMap,
    /// `set-dumpable`: core dumps stay possible after the privilege drop.
    pub set_dumpable: bool,
    /// `strict-limits`: a limit that cannot be set stops the startup instead of a
    /// warning.
    pub strict_limits: bool,
    /// `busy-polling`: accepted, no effect (see the keyword table).
    pub busy_polling: bool,
    /// `ssl-mode-async`: accepted, no effect without an async TLS engine.
    pub ssl_mode_async: bool,
    /// `tune.fd.edge-triggered on|off` (experimental): accepted, no effect.
    pub fd_edge_triggered: bool,
    /// `tune.pipesize`: the size of the pipes `splice` moves bytes through; `None`:
    /// the system's default.
    pub pipesize: Option<usize>,
    /// `nosplice`: bytes are never spliced, always copied through a buffer.
    pub nosplice: bool,
    /// `noreuseport`: listening sockets are bound without `SO_REUSEPORT` (one socket
    /// per address, shared by the threads).
    pub noreuseport: bool,
    /// `tune.http.cookielen`: the longest `capture cookie` value kept (HAProxy's
    /// default: 63 bytes).
    pub http_cookie_len: Option<usize>,
    /// `tune.http.logurilen`: the longest request line a log record keeps (`%r`,
    /// `capture.req.uri`); `None`: rampart's default (`log::stream_log::MAX_URI`).
    pub http_log_uri_len: Option<usize>,
    /// `tune.http.maxhdr`: the most header lines of an HTTP/1 message, its start line
    /// included (HAProxy's default: 101).
    pub http_maxhdr: Option<u16>,
    /// `h1-case-adjust <from> <to>` and the lines of `h1-case-adjust-file`: header
    /// names and the spelling HTTP/1 peers get with `option h1-case-adjust-bogus-*`.
    pub h1_case_adjust: Vec<(String, String)>,
    /// `tune.zlib.memlevel` (1..9, default 8).
    pub zlib_memlevel: u8,
    /// `max-spread-checks`: the most the first health checks are spread over.
    pub max_spread_checks: Option<std::time::Duration>,
    /// `node <name>` (`show info`'s node, the stats page's `stats show-node`).
    pub node: Option<String>,
    /// `description <text>` (`show info`, the stats page's `stats show-desc`).
    pub description: Option<String>,
    /// `zero-warning`: a warning at startup is fatal, as `-dW`.
    pub zero_warning: bool,
    /// `maxconnrate <n>`: connections accepted per second, process-wide (0: no limit).
    pub maxconnrate: u32,
    /// `maxsessrate <n>`: sessions per second, process-wide (0: no limit).
    pub maxsessrate: u32,
    /// `maxsslconn <n>`: TLS connections at once, incoming and outgoing together (0: no
    /// limit).
    pub maxsslconn: u32,
    /// `maxsslrate <n>`: connections per second the TLS listeners accept (0: no limit).
    pub maxsslrate: u32,
    /// `close-spread-time`: how a soft stop closes the keep-alive connections.
    pub close_spread: CloseSpread,
    pub span: Span,
}

/// `set-var <proc.name> <expr>` or `set-var-fmt <proc.name> <fmt>` in `global`.
#[derive(Debug, Clone)]
pub struct GlobalSetVar {
    pub var: VarName,
    pub value: GlobalVarValue,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum GlobalVarValue {
    Expr(ExprSrc),
    Fmt(FmtSrc),
}

/// `tune.vars.<scope>-max-size`: bytes the variables of a scope may hold in total;
/// `None` = unlimited (HAProxy's default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VarsLimits {
    pub global: Option<u64>,
    pub proc: Option<u64>,
    pub sess: Option<u64>,
    pub txn: Option<u64>,
    pub reqres: Option<u64>,
    pub check: Option<u64>,
}

impl Default for Global {
    fn default() -> Self {
        Global {
            default_path: None,
            pool_fd_ratios: (20, 25),
            node: None,
            description: None,
            zero_warning: false,
            maxconnrate: 0,
            maxsessrate: 0,
            maxsslconn: 0,
            maxsslrate: 0,
            close_spread: CloseSpread::AtOnce,
            daemon: false,
            nbthread: None,
            maxconn: None,
            pidfile: None,
            ulimit_n: None,
            user: None,
            group: None,
            uid: None,
            gid: None,
            chroot: None,
            bufsize: 16384,
            maxrewrite: 1024,
            hard_stop_after: None,
            grace: None,
            peers_max_updates: 200,
            idle_pool_shared: true,
            h2: H2Tune::default(),
            comp_maxlevel: 1,
            comp_rate_lim: 0,
            comp_min_idle: 0,
            maxzlibmem: 0,
            quiet: false,
            master_worker: false,
            external_check: false,
            insecure_fork: false,
            mworker_no_exit_on_failure: false,
            mworker_max_reloads: None,
            logs: Vec::new(),
            log_tag: None,
            log_send_hostname: None,
            stats_sockets: Vec::new(),
            stats_timeout: None,
            stats_maxconn: None,
            vars: VarsLimits::default(),
            lua: LuaSettings::default(),
            set_vars: Vec::new(),
            expose_experimental: false,
            spread_checks: 0,
            server_state: Default::default(),
            ssl_server: SslServerDefaults::default(),
            ssl: GlobalSsl::default(),
            sockbufs: SockBufs::default(),
            unix_bind: UnixBind::default(),
            cpu_map: CpuMap::default(),
            set_dumpable: false,
            strict_limits: false,
            busy_polling: false,
            ssl_mode_async: false,
            fd_edge_triggered: false,
            pipesize: None,
            nosplice: false,
            noreuseport: false,
            http_cookie_len: None,
            http_log_uri_len: None,
            http_maxhdr: None,
            h1_case_adjust: Vec::new(),
            zlib_memlevel: 8,
            max_spread_checks: None,
            span: Span::default(),
        }
    }
}

/// A `log` line: the words after `log`, checked by the parser and interpreted by the
/// daemon (`log::target`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogTarget {
    pub args: Vec<String>,
    pub span: Span,
}

/// A `log-forward` section: syslog receivers whose messages go to its `log` targets.
#[derive(Debug, Clone)]
pub struct LogForward {
    pub name: String,
    /// `dgram-bind` lines: UDP receivers, one message per datagram.
    pub dgram_binds: Vec<DgramBind>,
    /// `bind` lines: TCP receivers (octet-counted or LF-terminated messages).
    pub binds: Vec<Bind>,
    /// `log` lines, kept raw as a proxy's (`log global` included).
    pub logs: Vec<LogTarget>,
    /// `maxconn`: TCP connections at once (HAProxy's default for these sections: 10).
    pub maxconn: u32,
    /// `backlog` of the TCP receivers (0: `maxconn`).
    pub backlog: u32,
    /// `timeout client`: an idle TCP connection closes after it (`None`: never).
    pub timeout_client: Option<std::time::Duration>,
    pub span: Span,
}

/// A `dgram-bind` line.
#[derive(Debug, Clone)]
pub struct DgramBind {
    pub addrs: Vec<SocketAddr>,
    pub name: Option<String>,
    pub span: Span,
}

/// HAProxy 2.6's `option httplog` format.
pub const HTTP_LOG_FORMAT: &str =
    "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r";
/// HAProxy 2.6's `option httpslog` format.
pub const HTTPS_LOG_FORMAT: &str = "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc \
     %ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r %[fc_err]/%[ssl_fc_err,hex]/%[ssl_c_err]/\
     %[ssl_c_ca_err]/%[ssl_fc_is_resumed] %[ssl_fc_sni]/%sslv/%sslc";
/// HAProxy 2.6's `option httplog clf` format.
pub const CLF_HTTP_LOG_FORMAT: &str =
    "%{+Q}o %{-Q}ci - - [%trg] %r %ST %B \"\" \"\" %cp %ms %ft %b %s %TR %Tw %Tc %Tr \
     %Ta %tsc %ac %fc %bc %sc %rc %sq %bq %CC %CS %hrl %hsl";
/// HAProxy 2.6's `option tcplog` format.
pub const TCP_LOG_FORMAT: &str = "%ci:%cp [%t] %ft %b/%s %Tw/%Tc/%Tt %B %ts %ac/%fc/%bc/%sc/%rc %sq/%bq";

/// What a proxy section can do: `frontend` = front only, `backend` = back only, `listen` = both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cap {
    pub frontend: bool,
    pub backend: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Tcp,
    Http,
}

/// One `frontend`, `backend` or `listen` section, with its `defaults` applied.
#[derive(Debug, Clone)]
pub struct Proxy {
    pub name: String,
    pub cap: Cap,
    pub mode: Mode,
    pub binds: Vec<Bind>,
    /// Frontend `maxconn` (HAProxy default when unset: the global maxconn).
    pub maxconn: Option<u32>,
    /// Frontend `backlog` for its listeners (default: the frontend's maxconn).
    pub backlog: Option<u32>,
    pub default_backend: Option<BackendRef>,
    /// `use_backend` rules in order (frontends only; a backend's are checked, then dropped).
    pub use_backends: Vec<UseBackend>,
    /// `use-server` rules in order (backends only).
    pub use_servers: Vec<UseServer>,
    /// `force-persist` / `ignore-persist` rules in order (backends).
    pub persist_rules: Vec<PersistRule>,
    /// `persist rdp-cookie[(<name>)]`: the name of the RDP cookie (`msts` by default)
    /// whose `<ip>.<port>.` value names the server of a TCP stream (backends).
    pub persist_rdp_cookie: Option<String>,
    /// Proxy-level `redirect` rules in order.
    pub redirects: Vec<RedirectRule>,
    pub servers: Vec<Server>,
    /// `cookie <name> ...`: cookie-based server persistence (backends).
    pub cookie: Option<CookiePersist>,
    pub balance: Balance,
    pub hash_type: HashType,
    /// `hash-balance-factor` (0: off, else above 100).
    pub hash_balance_factor: u32,
    /// `load-server-state-from-file` and `server-state-file-name` (`server_state`).
    pub server_state: server_state::ProxyServerState,
    /// `fullconn`: the backend load at which servers reach their `maxconn` (0: not
    /// set, derived from the frontends' `maxconn` at startup).
    pub fullconn: u32,
    /// `max-keep-alive-queue`: a kept-alive client keeps its server connection only
    /// while fewer streams wait in that server's queue (`None`: -1, no limit).
    pub max_keep_alive_queue: Option<u32>,
    pub timeouts: Timeouts,
    pub options: ProxyOptions,
    pub http_reuse: HttpReuse,
    /// `retries` (default 3): connection attempts after the first one.
    pub retries: u32,
    /// `source <addr>[:<port>]`: the local address server connections bind to
    /// (port 0: any).
    pub source: Option<SocketAddr>,
    /// `dispatch <addr>:<port>`: where streams go when the backend has no server.
    pub dispatch: Option<SocketAddr>,
    /// The hidden server a backend without `server` lines connects through when it has
    /// `dispatch` or `option transparent` (set once every section is read).
    pub implicit_server: Option<Box<Server>>,
    /// `retry-on`: whether a failed connection is retried (`conn-failure`, the
    /// default; `none` turns it off).
    pub retry_on_conn_failure: bool,
    /// `retry-on`: the response-based conditions (layer-7 retries).
    pub retry_on_response: RetryOnResponse,
    /// The error pages given as complete HTTP responses, one per status: `errorfile
    /// <code> <file>`, `errorfiles <section> [<code>...]` and `http-error status <code>
    /// errorfile <file>`, resolved in file order (the last one for a status wins, also
    /// over `http_error_replies`).
    pub errorfiles: Vec<(u16, Vec<u8>)>,
    /// `http-error status <code> <reply>` answers that are not plain error files.
    pub http_error_replies: Vec<(u16, HttpReply)>,
    /// `acl` lines and rule lists of the proxy itself.
    pub rules: RuleSet,
    /// The named `defaults` section (index into [`Config::defaults`]) whose rules run
    /// before `rules`, as HAProxy 2.6 does for a proxy built `from` such a section.
    pub defaults_rules: Option<usize>,
    /// `tcp-request inspect-delay`.
    pub tcp_request_inspect_delay: Option<Duration>,
    /// `tcp-response inspect-delay` (backends).
    pub tcp_response_inspect_delay: Option<Duration>,
    /// `monitor-uri <uri>` (frontends).
    pub monitor_uri: Option<String>,
    /// The statistics page (`stats enable`, `stats uri` ...), when enabled.
    pub stats: Option<StatsPage>,
    /// `monitor fail if|unless <cond>` lines (frontends).
    pub monitor_fail: Vec<Condition>,
    /// `capture ...`, `declare capture ...` and the capture slots rules declared.
    pub captures: Captures,
    /// `unique-id-format <fmt>`.
    pub unique_id_format: Option<FmtSrc>,
    /// `unique-id-header <name>`.
    pub unique_id_header: Option<String>,
    /// `log` lines (inherited from `defaults`; `log global` kept as is).
    pub logs: Vec<LogTarget>,
    /// `log-tag <tag>`.
    pub log_tag: Option<String>,
    /// `compression` lines (inherited from `defaults` but `offload`).
    pub compression: Option<Compression>,
    /// `filter` lines, and the filters declared implicitly, in HAProxy's order.
    pub filters: Vec<FilterDecl>,
    /// `use-fcgi-app <name>`: the `fcgi-app` section its `proto fcgi` servers speak
    /// (an index into [`Config::fcgi_apps`] once checked).
    pub fcgi_app: Option<(String, Span)>,
    /// `stick-table ...`: the proxy's table (named after the proxy).
    pub stick_table: Option<StickTableDef>,
    /// `stick on|match|store-request` rules in order (backends).
    pub stick_rules: Vec<StickRule>,
    /// `id <n>` (HAProxy's `uuid`, > 0, unique); `None`: assigned at startup.
    pub id: Option<u32>,
    /// `description <text>`: shown on the statistics page.
    pub description: Option<String>,
    /// `disabled` (inherited from `defaults`, `enabled` clears it): the proxy is not
    /// started. Its listeners are not bound, it has no servers (a stream sent to it
    /// gets a 503), and the stats leave it out, as HAProxy 2.6.
    pub disabled: bool,
    /// `http-send-name-header <name>` (lowercased): each request sent to an HTTP/1
    /// server carries the server's name in this header, replacing the client's.
    pub send_name_header: Option<String>,
    pub span: Span,
}

impl Proxy {
    /// The servers streams go to: the `server` lines, or the hidden server of
    /// `dispatch` / `option transparent` when there is none.
    pub fn effective_servers(&self) -> &[Server] {
        match &self.implicit_server {
            Some(s) => std::slice::from_ref(&**s),
            None => &self.servers,
        }
    }
}

/// A backend named by a frontend; `index` is filled by the cross-reference check.
#[derive(Debug, Clone)]
pub struct BackendRef {
    pub name: String,
    /// Index into [`Config::proxies`]; valid after a successful parse.
    pub index: usize,
    pub span: Span,
}

/// `use_backend <name>|<fmt> [if|unless <cond>]`.
#[derive(Debug, Clone)]
pub struct UseBackend {
    pub target: BackendTarget,
    pub cond: Option<Condition>,
    pub span: Span,
}

/// Which backend a `use_backend` rule names.
#[derive(Debug, Clone)]
pub enum BackendTarget {
    /// A backend name, resolved after parsing.
    Static(BackendRef),
    /// A name containing `%`: a log-format string evaluated per request, whose result
    /// names the backend (HAProxy's dynamic `use_backend`).
    Dynamic(FmtSrc),
}

/// `use-server <name>|<fmt> if|unless <cond>`.
#[derive(Debug, Clone)]
pub struct UseServer {
    pub target: ServerTarget,
    pub cond: Condition,
    pub span: Span,
}

/// `force-persist if|unless <cond>` (`force`) or `ignore-persist if|unless <cond>`.
#[derive(Debug, Clone)]
pub struct PersistRule {
    pub force: bool,
    pub cond: Condition,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum ServerTarget {
    /// A server of this backend: its name and index into [`Proxy::servers`].
    Static { name: String, index: usize },
    /// A name containing `%`: a log-format string evaluated per request.
    Dynamic(FmtSrc),
}

/// The capture slots of a frontend, in declaration order (a slot's index is what `id <n>`
/// and the `capture.req.hdr(<n>)` fetch refer to).
#[derive(Debug, Clone, Default)]
pub struct Captures {
    pub request: Vec<CaptureDecl>,
    pub response: Vec<CaptureDecl>,
    /// `capture cookie <name> len <n>`.
    pub cookie: Option<CookieCapture>,
}

/// One capture slot and who declared it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureDecl {
    /// `Some(name)` for `capture request|response header <name> len <n>`; `None` for
    /// `declare capture ... len <n>` and the `capture ... len <n>` actions.
    pub header: Option<String>,
    /// Bytes kept (values are truncated to it).
    pub len: usize,
    pub span: Span,
}

/// `capture cookie <name> len <n>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookieCapture {
    pub name: String,
    /// At most 63 (HAProxy truncates longer lengths with a warning).
    pub len: usize,
    pub span: Span,
}

/// `timeout ...` values; `None` = unset (no timeout).
#[derive(Debug, Clone, Default)]
pub struct Timeouts {
    pub client: Option<Duration>,
    pub server: Option<Duration>,
    pub connect: Option<Duration>,
    pub http_request: Option<Duration>,
    pub http_keep_alive: Option<Duration>,
    pub queue: Option<Duration>,
    pub tunnel: Option<Duration>,
    pub client_fin: Option<Duration>,
    pub server_fin: Option<Duration>,
    pub check: Option<Duration>,
    /// `timeout tarpit` (unset: `http-request tarpit` waits `timeout connect`).
    pub tarpit: Option<Duration>,
}

/// The HTTP connection mode of a proxy (`option http-keep-alive|http-server-close|httpclose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HttpConnMode {
    #[default]
    KeepAlive,
    ServerClose,
    Close,
}

/// `option forwardfor [except <net>] [header <name>] [if-none]`.
#[derive(Debug, Clone)]
pub struct ForwardFor {
    pub except: Option<IpNet>,
    /// Header name (default `x-forwarded-for`).
    pub header: String,
    pub if_none: bool,
}

/// An address with a prefix length, for `except <net>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpNet {
    pub addr: std::net::IpAddr,
    pub prefix: u8,
}

impl IpNet {
    pub fn contains(&self, ip: std::net::IpAddr) -> bool {
        use std::net::IpAddr;
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let bits = u32::from(self.prefix.min(32));
                let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let bits = u32::from(self.prefix.min(128));
                let mask = if bits == 0 { 0 } else { u128::MAX << (128 - bits) };
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ProxyOptions {
    pub httplog: bool,
    pub tcplog: bool,
    /// The log format in effect: `option httplog [clf]`, `option tcplog` or `log-format`,
    /// whichever came last (HAProxy's `conf.logformat_string`).
    pub log_format: Option<String>,
    /// `error-log-format`.
    /// `log-format-sd`: the structured data of RFC 5424 headers.
    pub log_format_sd: Option<String>,
    pub log_format_sd_span: Option<crate::span::Span>,
    pub error_log_format: Option<String>,
    /// The lines of `log-format` (or the option setting it) and `error-log-format`,
    /// for the daemon's messages when they do not compile.
    pub log_format_span: Option<crate::span::Span>,
    pub error_log_format_span: Option<crate::span::Span>,
    pub dontlognull: bool,
    /// `option socket-stats`: a `show stat` row (type 3) and counters per listener.
    pub socket_stats: bool,
    pub dontlog_normal: bool,
    pub log_separate_errors: bool,
    pub logasap: bool,
    pub forwardfor: Option<ForwardFor>,
    pub http_conn_mode: HttpConnMode,
    pub redispatch: bool,
    pub abortonclose: bool,
    /// `option allbackups`: balance over every backup server (not only the first)
    /// when no active server is usable.
    pub allbackups: bool,
    /// `option persist`: a cookie, `use-server` or `stick` rule naming a server that
    /// is down still sends the request to it.
    pub persist: bool,
    /// `option transparent`: without a server, connect to the client connection's
    /// destination address (as rules left it).
    pub transparent: bool,
    /// `option log-health-checks`: report every check result change.
    pub log_health_checks: bool,
    /// `option httpchk` and the `http-check` rules.
    pub health: HealthCheck,
    /// `external-check command|path`.
    pub external_check: ExternalCheck,
    /// `email-alert ...`.
    pub email_alert: EmailAlert,
    /// `option http-buffer-request`: wait for the whole request body (up to the buffer)
    /// before the `http-request` rules run.
    pub http_buffer_request: bool,
    /// `option originalto [except <net>] [header <name>]`.
    pub originalto: Option<OriginalTo>,
    /// `option http-restrict-req-hdr-names preserve|delete|reject`.
    pub restrict_req_hdr_names: RestrictHdrNames,
    /// The option was given (here or in `defaults`): a FastCGI backend's default
    /// (`delete`) does not apply.
    pub restrict_req_hdr_names_set: bool,
    /// `option clitcpka` (or `tcpka`) and `clitcpka-cnt|idle|intvl`: TCP keep-alive
    /// probes on client connections.
    pub clitcpka: TcpKa,
    /// `option srvtcpka` (or `tcpka`) and `srvtcpka-*`: the same on server connections.
    pub srvtcpka: TcpKa,
    /// `option http-pretend-keepalive`: a request sent on a server connection that will
    /// be closed (`httpclose`, `http-server-close`) does not say so (no `Connection:
    /// close`; HTTP/1.0 gets `Connection: keep-alive`).
    pub http_pretend_keepalive: bool,
    /// `option accept-invalid-http-request`: the request checks HAProxy relaxes
    /// (non-ASCII in the URI, non-token header name characters, the version's format,
    /// a `Host` differing from the absolute URI's authority).
    pub accept_invalid_req: bool,
    /// `option accept-invalid-http-response`: the same relaxations for responses
    /// (header name characters, the version's format).
    pub accept_invalid_res: bool,
    /// `option http-ignore-probes`: a client connection that closes or times out before
    /// sending its first byte gets no 400/408 and no log line.
    pub http_ignore_probes: bool,
    /// `option disable-h2-upgrade`: an HTTP/2 preface on a plain HTTP/1 listener is not
    /// taken as HTTP/2 prior knowledge (it is a bad HTTP/1 request).
    pub disable_h2_upgrade: bool,
    /// `option prefer-last-server`: a request of a kept-alive client connection goes
    /// back to the server its private connection leads to, while that server is usable.
    pub prefer_last_server: bool,
    /// `option nolinger`: the proxy's connections (client side for a frontend, server
    /// side for a backend) are closed with a reset (SO_LINGER 0).
    pub nolinger: bool,
    /// `option http-use-proxy-header`: proxied requests carry their credentials in
    /// `Proxy-Authorization` and are asked for them with a 407.
    pub http_use_proxy_header: bool,
    /// `option idle-close-on-response`: on a soft stop, an idle client connection is
    /// kept until its next request (whose response announces the close) or its
    /// keep-alive timeout, instead of being closed.
    pub idle_close_on_response: bool,
    /// `option checkcache`: a response a shared cache could store with the server's
    /// `Set-Cookie` is blocked (502) and reported.
    pub checkcache: bool,
    /// `option independent-streams`: a side's read timeout is not refreshed by data
    /// sent to it.
    pub independent_streams: bool,
    /// `option h1-case-adjust-bogus-client`: response header names written to HTTP/1
    /// clients take the `h1-case-adjust` spellings.
    pub h1_case_adjust_bogus_client: bool,
    /// `option h1-case-adjust-bogus-server`: the same for requests to HTTP/1 servers.
    pub h1_case_adjust_bogus_server: bool,
}

/// TCP keep-alive of one side: SO_KEEPALIVE when `on`, and the TCP_KEEP* settings
/// given (the system's otherwise).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpKa {
    pub on: bool,
    /// `*tcpka-cnt`: TCP_KEEPCNT.
    pub cnt: Option<u32>,
    /// `*tcpka-idle`: TCP_KEEPIDLE.
    pub idle: Option<Duration>,
    /// `*tcpka-intvl`: TCP_KEEPINTVL.
    pub intvl: Option<Duration>,
}

/// `option originalto`: adds the original destination address to requests.
#[derive(Debug, Clone)]
pub struct OriginalTo {
    pub except: Option<IpNet>,
    /// Header name (default `x-original-to`).
    pub header: String,
}

/// What to do with request header names holding other characters than letters, digits
/// and `-` (`option http-restrict-req-hdr-names`); HAProxy's default is `preserve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RestrictHdrNames {
    #[default]
    Preserve,
    Delete,
    Reject,
}

/// `http-reuse`; HAProxy's default is `safe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HttpReuse {
    Never,
    #[default]
    Safe,
    Aggressive,
    Always,
}

/// A `bind` line: one or more addresses and its options.
#[derive(Debug, Clone)]
pub struct Bind {
    /// Every address the line expands to (comma lists and port ranges expanded).
    pub addrs: Vec<ListenAddr>,
    pub name: Option<String>,
    /// IPV6_V6ONLY for IPv6 addresses: `Some(true)` with `v6only`, `Some(false)` with
    /// `v4v6` (`v6only` wins when both are given), `None`: the system's default.
    pub v6only: Option<bool>,
    /// `backlog N` (N > 0); otherwise the frontend's.
    pub backlog: Option<u32>,
    /// `accept-proxy`: every connection starts with a PROXY protocol v1/v2 header.
    pub accept_proxy: bool,
    /// `mss <n>`: TCP_MAXSEG of the listening socket; negative: the system's value
    /// minus `|n|`.
    pub mss: Option<i32>,
    /// `defer-accept`: TCP_DEFER_ACCEPT (a connection is accepted once data came).
    pub defer_accept: bool,
    /// `tfo`: TCP_FASTOPEN on the listening socket.
    pub tfo: bool,
    /// `tcp-ut <delay>`: TCP_USER_TIMEOUT of the accepted connections, in milliseconds.
    pub tcp_ut: Option<u32>,
    /// How HAProxy names the line in its messages: `'bind <spec>' in section '<kind>'`.
    pub ctx: String,
    /// `ssl`, `crt` and the other TLS options (`None` when the line has none).
    pub ssl: Option<Box<BindSsl>>,
    /// `proto <mux>`: the protocol every connection speaks, whatever ALPN says and
    /// without HTTP/1 turning to HTTP/2 on the preface.
    pub proto: Option<BindProto>,
    /// `id <n>`: the listener's number in its frontend (`so_id`, the stats' `sid`);
    /// the others take the lowest numbers left free (a line with `id` has one address).
    pub id: Option<u32>,
    /// `maxconn <n>` (n > 0): the connections the listener keeps open at most; past it,
    /// new ones wait in the backlog.
    pub maxconn: Option<u32>,
    /// `interface <name>`: SO_BINDTODEVICE on the listening socket.
    pub interface: Option<String>,
    /// `transparent`: IP_TRANSPARENT (IPV6_TRANSPARENT) on the listening socket, to
    /// accept connections for foreign addresses.
    pub transparent: bool,
    /// `nice <n>` (-1024..1024): accepted with a warning, no effect (see the keyword
    /// table).
    pub nice: Option<i32>,
    /// Mode and owner of the socket file of a unix address (from `unix-bind`).
    pub unix_perms: UnixPerms,
    pub span: Span,
}

/// `tune.h2.*` (HAProxy 2.6's defaults where rampart has none of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct H2Tune {
    /// `tune.h2.header-table-size` (4096..=65536): the HPACK table we decode with.
    pub header_table_size: u32,
    /// `tune.h2.initial-window-size`: each stream's receive window; `None`: rampart's
    /// 256 KiB (HAProxy's default is 65535).
    pub initial_window_size: Option<u32>,
    /// `tune.h2.max-concurrent-streams` (default 100).
    pub max_concurrent_streams: u32,
    /// `tune.h2.max-frame-size` (16384..=16777215); `None`: 16384.
    pub max_frame_size: Option<u32>,
    /// `h2-workaround-bogus-websocket-clients`: extended CONNECT (RFC 8441) is not
    /// offered to clients, which then send WebSocket over HTTP/1.1.
    pub no_websocket: bool,
    /// `tune.h2.fe.glitches-threshold` (HAProxy 3.x): the glitches after which a client
    /// connection ends with ENHANCE_YOUR_CALM, 0 for no limit; `None`: rampart's
    /// built-in bound (`mux::h2::glitch::DEFAULT_THRESHOLD`; HAProxy has none).
    pub fe_glitches_threshold: Option<u32>,
}

impl Default for H2Tune {
    fn default() -> H2Tune {
        H2Tune {
            header_table_size: 4096,
            initial_window_size: None,
            max_concurrent_streams: 100,
            max_frame_size: None,
            no_websocket: false,
            fe_glitches_threshold: None,
        }
    }
}

/// A `bind ... proto` multiplexer, as HAProxy 2.6 names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindProto {
    H1,
    H2,
    /// `none`: TCP passthrough.
    None,
    /// `fcgi`: known, usable by servers only.
    Fcgi,
}

impl BindProto {
    /// The name as written.
    pub fn name(self) -> &'static str {
        match self {
            BindProto::H1 => "h1",
            BindProto::H2 => "h2",
            BindProto::None => "none",
            BindProto::Fcgi => "fcgi",
        }
    }

    /// Whether a frontend in HTTP mode (`http`) or TCP mode can use it.
    pub fn usable(self, http: bool) -> bool {
        match self {
            BindProto::H1 | BindProto::H2 => http,
            BindProto::None => !http,
            BindProto::Fcgi => false,
        }
    }
}

/// A listening address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddr {
    /// `ip:port`, `*:port`, `:::port`, `ipv4@...`, `ipv6@...`.
    Inet(SocketAddr),
    /// `unix@/path` or `/path`.
    Unix(PathBuf),
    /// `fd@N`: an inherited, already listening socket (VTest, reloads).
    Fd(i32),
}
