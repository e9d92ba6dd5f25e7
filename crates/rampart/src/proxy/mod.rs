//! The runtime model: frontends, backends, servers and the process-wide state of one
//! configuration generation, as every layer of the request path reads them. Built once
//! by `crate::build` from the cfg model (names are indices, rules and formats compiled);
//! immutable afterwards except the counters and states (atomics).
//! HAProxy counterpart: `struct proxy`, `struct server` (proxy-t.h, server-t.h).
//!
//! Types only, with their small accessors: whoever reads the model imports this module,
//! and it imports only what its fields hold (docs/internals/layers.md).
//!
//! - `fcgi`: a backend's FastCGI application, compiled
//! - `host`: the model as the rules language reads it (`sample::Host`)
//! - `stop`: how a soft stop ends keep-alive connections (`close-spread-time`)

pub mod fcgi;
mod host;
pub mod proc_vars;
mod stop;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use rampart_cfg::model::{Cap, ForwardFor, HttpConnMode, HttpReuse, Mode, OriginalTo, RestrictHdrNames};
use tokio::sync::Notify;

use crate::action::{ProxyRules, WaitBody};
use crate::check::{AgentRt, CheckRt};
use crate::counters::Counter;
use crate::errors::ErrorPages;
use crate::lb::Lb;
use crate::sample::vars::ProcVars;
use crate::server::SrvState;
pub use crate::timer::Timeouts;

/// Everything the worker threads share for one configuration generation.
#[derive(Debug)]
pub struct Runtime {
    pub proxies: Vec<ProxyRt>,
    /// `tune.bufsize`.
    pub bufsize: usize,
    /// `tune.bufsize - tune.maxrewrite`: the most a request or response head may take.
    pub max_head: usize,
    /// `tune.http.logurilen`: the most of a request line a log record keeps.
    pub log_uri_len: usize,
    /// `tune.h2.*`: the settings of the HTTP/2 connections.
    pub h2: rampart_cfg::model::H2Tune,
    /// `tune.comp.maxlevel`: the compression level.
    pub comp_level: u32,
    /// `maxcomprate`, `maxcompcpuusage`, `maxzlibmem` and the compression rates.
    pub comp_limits: std::sync::Arc<crate::comp::limit::Limits>,
    /// `tune.rcvbuf.*`/`tune.sndbuf.*`: set once on each accepted or connected socket.
    pub sockbufs: rampart_cfg::model::SockBufs,
    /// The `cache` sections, shared by the threads.
    pub caches: Vec<std::sync::Arc<crate::cache::Cache>>,
    pub global: GlobalRt,
    /// `proc.` variables and the process-wide variable budgets.
    pub proc_vars: ProcVars,
    /// What the stats outputs (CLI, stats page) tell about the process.
    pub stats: crate::stats::types::Facts,
    /// The configuration files rules were written in, once each
    /// ([`crate::action::RuleAt::file`] indexes it: `last_rule_file`).
    pub rule_files: Box<[std::sync::Arc<str>]>,
    /// The `log-forward` sections, in configuration order.
    pub log_forwards: Vec<crate::log::forward::Forwarder>,
    /// The `resolvers` sections, in configuration order (the implicit `default` last).
    pub resolvers: Vec<crate::dns::types::ResolversRt>,
    /// The tables of the `peers` sections, numbered after the proxies'
    /// ([`rampart_cfg::Config::find_table`]).
    pub peer_tables: Vec<std::sync::Arc<crate::stick::StickTable>>,
    /// The `peers` sections that replicate (enabled, with a local node).
    pub peers: Vec<std::sync::Arc<crate::peers::types::PeersRt>>,
    /// The `log` targets of each of [`Runtime::peers`] (empty without `log` lines).
    pub peers_logs: Vec<crate::log::sink::Loggers>,
    /// Configured servers an expression names by argument (`srv_conn(be/s1)`), by
    /// (proxy, server) index: `del server` refuses them.
    pub named_servers: Box<[(usize, usize)]>,
    /// The pattern references of ACLs and maps, numbered (`show map`, `add acl` ...).
    pub pat_refs: crate::pattern::RefList,
}

impl Runtime {
    /// Every stick table: the proxies' then the `peers` sections' (the runtime API and
    /// the exporter list them in reverse, last declared first, as HAProxy).
    pub fn stick_tables(&self) -> impl Iterator<Item = &crate::stick::StickTable> {
        self.proxies.iter().filter_map(|p| p.table.as_deref()).chain(self.peer_tables.iter().map(|t| &**t))
    }
}

/// Process-wide connection accounting and stop state.
#[derive(Debug)]
pub struct GlobalRt {
    /// Effective global `maxconn`; the CLI's `set maxconn global` changes it.
    pub maxconn: AtomicU32,
    /// The `maxconn` the process was sized for (`Hard_maxconn`): the CLI cannot go above.
    pub hard_maxconn: u32,
    /// Client connections alive (all frontends, all threads).
    pub cur_conns: AtomicU32,
    /// Woken when a connection ends, so paused accept loops can resume.
    pub conn_released: Notify,
    /// Set once a soft stop (SIGUSR1) began: finish exchanges, accept nothing new.
    pub stopping: AtomicBool,
    /// Accept loops still holding their listening socket (all threads).
    pub listeners_open: AtomicU32,
    /// Woken when an accept loop closed its socket.
    pub listener_closed: Notify,
    /// `max-spread-checks`: the most the first health checks are spread over.
    pub max_spread_checks: Option<std::time::Duration>,
    /// `maxconnrate` / `maxsessrate` (the lower of the two): accept loops pause at it.
    pub accept_rate: Option<crate::counters::accept_rate::AcceptRate>,
    /// `maxconnrate` and `maxsessrate` as set (0: none), for `show info`.
    pub rate_limits: (u32, u32),
    /// `grace`: how long a soft stop waits after SIGUSR1, traffic going on, with the
    /// `stopping` fetch already true.
    pub grace: Option<std::time::Duration>,
    /// A soft stop was asked (set before the `grace` delay; [`GlobalRt::stopping`]
    /// after it).
    pub stop_announced: AtomicBool,
    /// `close-spread-time`.
    pub close_spread: rampart_cfg::model::CloseSpread,
    /// When the soft stop began ([`GlobalRt::begin_stop`]), the start of the spread
    /// window.
    pub stop_started: std::sync::OnceLock<std::time::Instant>,
    /// `maxsslconn`, `maxsslrate` and the TLS connections counted against them.
    pub ssl: crate::tls::limit::SslLimits,
}

impl GlobalRt {
    pub fn maxconn(&self) -> u32 {
        self.maxconn.load(Ordering::Relaxed)
    }

    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    /// HAProxy's `stopping` variable (the `stopping` fetch, `show info`'s `Stopping`):
    /// true from SIGUSR1 on, `grace` included.
    pub fn stop_announced(&self) -> bool {
        self.stop_announced.load(Ordering::Relaxed) || self.is_stopping()
    }
}

/// A frontend, backend or listen section at run time.
#[derive(Debug)]
pub struct ProxyRt {
    pub name: String,
    /// `frontend`, `backend` or both (`listen`).
    pub cap: Cap,
    pub mode: Mode,
    pub timeouts: Timeouts,
    pub forwardfor: Option<ForwardFor>,
    /// `option originalto`, its header name lowercased.
    pub originalto: Option<OriginalTo>,
    /// `option http-restrict-req-hdr-names`.
    pub restrict_req_hdr_names: RestrictHdrNames,
    /// `option http-buffer-request`: wait for the request body (for `timeout
    /// http-request`) before this proxy's `http-request` rules.
    pub buffer_request: Option<WaitBody>,
    pub http_conn_mode: HttpConnMode,
    /// `option http-pretend-keepalive` (backend).
    pub pretend_keepalive: bool,
    /// `option accept-invalid-http-request` (frontend): the H1 parser's relaxations.
    pub accept_invalid_req: bool,
    /// `option accept-invalid-http-response` (backend).
    pub accept_invalid_res: bool,
    /// `option http-ignore-probes` (frontend): a connection that sends nothing before
    /// it closes or times out gets no error page and no log line.
    pub ignore_probes: bool,
    /// `option disable-h2-upgrade` (frontend): no HTTP/2 prior knowledge on plain
    /// HTTP/1 listeners.
    pub no_h2_upgrade: bool,
    /// `option http-use-proxy-header` (frontend): a proxied request (absolute-form or
    /// authority-form target) carries its credentials in `Proxy-Authorization`, and
    /// `http-request auth` answers it with a 407.
    pub use_proxy_header: bool,
    /// `option idle-close-on-response` (frontend): a soft stop leaves idle HTTP/1
    /// client connections open until their next request or keep-alive timeout.
    pub idle_close_on_response: bool,
    /// `option checkcache` (backend): a response a cache could store with the server's
    /// cookie is blocked (`stream::ana::checkcache`).
    pub checkcache: bool,
    /// A server of this backend has `redir` (`stream::redir` looks, else nothing does).
    pub redir_servers: bool,
    /// `option h1-case-adjust-bogus-client` (frontend) with `h1-case-adjust` pairs:
    /// the spellings of the response header names written to HTTP/1 clients.
    pub h1_case_client: Option<std::sync::Arc<crate::h1::case_adjust::CaseMap>>,
    /// `option h1-case-adjust-bogus-server` (backend): the same for requests written
    /// to HTTP/1 servers.
    pub h1_case_server: Option<std::sync::Arc<crate::h1::case_adjust::CaseMap>>,
    /// `option nolinger`: this proxy's side of a connection closes with a reset.
    pub nolinger: bool,
    pub http_reuse: HttpReuse,
    /// `max-keep-alive-queue`: a client keeps its private server connection only while
    /// fewer streams than this wait in that server's queue (`None`: no limit).
    pub max_ka_queue: Option<u32>,
    /// `use-fcgi-app`: the application its `proto fcgi` servers serve.
    pub fcgi: Option<Arc<fcgi::FcgiAppRt>>,
    pub retries: u32,
    /// `retry-on` response conditions (`None`: none, or not HTTP), and how many times
    /// they may send a request again (`retries`).
    pub retry_on_response: Option<Box<rampart_cfg::model::RetryOnResponse>>,
    pub l7_retries: u32,
    pub redispatch: bool,
    /// `option persist`: persistence rules may name a server that is down.
    pub persist: bool,
    /// `persist rdp-cookie[(<name>)]` of a TCP backend: the cookie's name
    /// (`stream::ana::rdp`). HTTP streams hold no RDP bytes: `None` there.
    pub persist_rdp: Option<Box<str>>,
    /// No `retry-on` line, `option redispatch` and `retries` above 0: an idempotent
    /// request the server closed on before any response byte is sent to another server
    /// (see `stream::forward`).
    pub replay_on_close: bool,
    /// `option abortonclose`: a stream whose client closed is dropped while queued or
    /// connecting.
    pub abortonclose: bool,
    /// `option clitcpka`/`tcpka` and `clitcpka-*`: set on each accepted connection.
    pub clitcpka: Option<socket2::TcpKeepalive>,
    /// `option srvtcpka`/`tcpka` and `srvtcpka-*`: set on each server connection.
    pub srvtcpka: Option<socket2::TcpKeepalive>,
    pub errors: ErrorPages,
    /// Rules, compiled.
    pub rules: ProxyRules,
    /// Front side (meaningful when the proxy has the frontend capability).
    pub fe: FrontendRt,
    /// Back side (meaningful when the proxy has the backend capability).
    pub be: BackendRt,
    /// Counters only the stats read (`show stat`).
    pub stats: crate::counters::stats::ProxyStats,
    /// The statistics page (`stats enable`, `stats uri` ...).
    pub stats_page: Option<Box<crate::stats::types::Page>>,
    /// Its `log` targets, format and options; `None` without `log` lines.
    pub log: Option<Box<crate::log::ProxyLog>>,
    /// `email-alert`: server state changes mailed to a `mailers` section.
    pub email_alert: Option<Box<crate::mailers::EmailAlertRt>>,
    /// `compression` lines (HTTP proxies only).
    pub comp: Option<Box<rampart_cfg::model::Compression>>,
    /// `filter trace` (HTTP proxies only).
    pub trace: Option<Box<rampart_cfg::model::TraceFilter>>,
    /// `stick-table`: the proxy's table (shared with streams tracking its entries).
    pub table: Option<std::sync::Arc<crate::stick::StickTable>>,
    /// `description`: shown on the statistics page.
    pub description: Option<Box<str>>,
    /// `disabled`: not started (no listener, no server); left out of the stats.
    pub disabled: bool,
}

impl ProxyRt {
    /// Sends an operational message to the proxy's log targets (its own lines and `log
    /// global`), as HAProxy's `send_log(px, ...)`; nothing without `log` lines.
    pub fn send_log(&self, level: u8, msg: &str) {
        if let Some(pl) = self.log.as_deref() {
            pl.loggers.send(level, msg.as_bytes());
        }
    }

    /// Where the default replies of this proxy's rules come from.
    pub fn pages(&self) -> crate::action::reply::Pages<'_> {
        crate::action::reply::Pages { http_errors: &self.rules.http_errors, errors: &self.errors }
    }
}

/// What listeners should be doing: the process's state (signals, soft stop) is
/// broadcast to every accept loop, a frontend's ([`FrontendRt::listen`]) to its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ListenState {
    Running,
    /// Stop accepting but keep the sockets (SIGTTOU; a new process may take the port).
    Paused,
    /// Soft or hard stop: close the listening sockets.
    Stopped,
}

#[derive(Debug)]
pub struct FrontendRt {
    /// The frontend's `maxconn`; the CLI's `set maxconn frontend` changes it.
    pub maxconn: AtomicU32,
    pub cur_conns: AtomicU32,
    pub conn_released: Notify,
    /// What this frontend's listeners do, besides what the process asks of all
    /// (Lua's `Proxy:pause()`, `resume()`, `stop()`): the accept loops follow the
    /// stricter of both.
    pub listen: tokio::sync::watch::Sender<ListenState>,
    /// Backend chosen for every request/session (`use_backend` without condition, else
    /// `default_backend`, else the proxy itself for a `listen`).
    pub backend: Option<usize>,
    /// Connections are served as HTTP: the frontend is in `mode http`, or it is in
    /// `mode tcp` without `tcp-request content` rules and its backend is in `mode http`
    /// (HAProxy then upgrades the stream to HTTP when it switches to the backend; with
    /// content rules, the TCP stream runs them first, then upgrades, `stream::upgrade`).
    pub http: bool,
    /// Connections accepted.
    pub cum_conn: Counter,
    /// Connections a `tcp-request connection` rule rejected (HAProxy's `dcon`).
    pub denied_conn: Counter,
    /// Sessions a `tcp-request session` rule rejected (`dses`).
    pub denied_sess: Counter,
    /// Requests denied by a content rule or dropped by `silent-drop` (`dreq`).
    pub denied_req: Counter,
    /// Connections closed for a missing, malformed or truncated PROXY header
    /// (`accept-proxy`, `expect-proxy`). HAProxy only logs these; kept for stats.
    pub pp_failed: Counter,
    /// Failed TLS handshakes on this frontend's `ssl` listeners.
    pub tls_failed: Counter,
    /// The listeners: every address of the `bind` lines, in order (the registry binds
    /// them in the same order, see [`crate::listener::BoundSocket::listener`]).
    pub listeners: Box<[ListenerRt]>,
    /// `capture cookie <name> len <n>`: the name prefix and the length kept (`%CC`,
    /// `%CS`).
    pub capture_cookie: Option<(Box<[u8]>, usize)>,
    /// Keep each request line as received although the frontend does not log: a rule
    /// reads it (`capture.req.method`, `capture.req.uri`).
    pub keep_req_line: bool,
}

/// One listener (an address of a `bind` line) as rules see it.
#[derive(Debug)]
pub struct ListenerRt {
    /// `bind ... name` (`so_name`).
    pub name: Option<Box<str>>,
    /// `bind ... accept-proxy`: connections start with a PROXY header.
    pub accept_proxy: bool,
    /// `bind ... ssl`: the TLS configuration its connections handshake with.
    pub tls: Option<Arc<crate::tls::bind::BindTls>>,
    /// `bind ... proto`: the protocol its connections speak, checked against the
    /// frontend's mode.
    pub proto: Option<rampart_cfg::model::BindProto>,
    /// Its number in the frontend (`so_id`, the stats' `sid`): `bind ... id`, else the
    /// lowest one left free, in declaration order.
    pub id: u32,
    /// `bind ... maxconn`: the most connections it keeps open (0: no own limit).
    pub maxconn: u32,
    /// Connections it accepted that are still open, all threads (`dst_conn`; HAProxy's
    /// `nbconn` of the listener), with those being accepted (see `session::ConnSlot`).
    pub conns: AtomicU32,
    /// `option socket-stats`: the listener's own stats row.
    pub stats: Option<Box<ListenerStatsRt>>,
}

/// A listener's stats row under `option socket-stats`.
#[derive(Debug)]
pub struct ListenerStatsRt {
    /// `svname`: the `bind ... name`, else `sock-<sid>`.
    pub name: Box<str>,
    /// HAProxy's listener number in its frontend (`sid`), from 1.
    pub sid: u32,
    /// The address as `show stat` writes it (`addr`): `ip:port`, `[ip6]:port`, `unix`.
    pub addr: Option<Box<str>>,
    pub counters: crate::counters::stats::ListenerStats,
}

impl ListenerRt {
    /// The listener's counters, under `option socket-stats`.
    #[inline]
    pub fn counters(&self) -> Option<&crate::counters::stats::ListenerStats> {
        self.stats.as_deref().map(|s| &s.counters)
    }
}

impl FrontendRt {
    pub fn maxconn(&self) -> u32 {
        self.maxconn.load(Ordering::Relaxed)
    }
}

#[derive(Debug)]
pub struct BackendRt {
    /// The servers, configured then added at run time (`add server`); indices stay.
    pub servers: crate::server::SrvList<ServerRt>,
    pub lb: Lb,
    /// The expression of `balance hash <expr>`.
    pub lb_expr: Option<crate::sample::expr::Expr>,
    /// With `option allbackups`: the same algorithm over the backup servers, used when
    /// no active server is enabled (boxed: 400 bytes in every backend otherwise).
    pub lb_backup: Option<Box<Lb>>,
    /// Streams waiting because every server was full (the backend queue): a freed slot
    /// goes to its first stream (`server::queue`).
    pub queue: crate::server::queue::Queue<Busy>,
    /// `fullconn` (or its default): the load at which servers reach their `maxconn`.
    pub fullconn: u32,
    /// Streams (HTTP exchanges, TCP connections) that chose this backend.
    pub cum_conn: Counter,
    /// A server has `ssl` and `sni <expr>`: streams evaluate the expressions before
    /// connecting (`tls::client::sni_values`).
    pub has_sni: bool,
    /// `cookie <name> ...`: cookie-based persistence (`stream::ana::cookie`).
    pub cookie: Option<Box<rampart_cfg::model::CookiePersist>>,
    /// The backend's up/down history (`chkdown`, `downtime`, `lastchg`).
    pub state: crate::server::be_state::BackendState,
    /// `http-send-name-header <name>`, lowercased (`back::send_name`).
    pub send_name: Option<Box<[u8]>>,
}

impl BackendRt {
    /// The `maxconn` server `s` has now: the configured one, or with `minconn` the
    /// dynamic one of the backend's load (`None`: no limit). HAProxy's
    /// `srv_dynamic_maxconn()`.
    pub fn current_maxconn(&self, s: &ServerRt) -> Option<u32> {
        let max = s.maxconn()?;
        if s.minconn == 0 || s.minconn >= max {
            return Some(max);
        }
        // PERF: O(servers), only for servers with a `minconn`.
        Some(crate::server::queue::dynamic_maxconn(max, s.minconn, self.fullconn, self.load()))
    }

    /// The backend's streams, served or queued.
    pub fn load(&self) -> u32 {
        self.servers.iter().map(|s| s.cur_conns.load(Ordering::Relaxed) + s.queue.len()).sum::<u32>() + self.queue.len()
    }

    /// Streams waiting for a server: the backend's queue and the servers' (HAProxy's
    /// `totpend`).
    pub fn queued(&self) -> u32 {
        self.servers.iter().map(|s| s.queue.len()).sum::<u32>() + self.queue.len()
    }
}

/// One connection slot of a server (a unit of its `cur_conns`), held by a stream from
/// the pick until its server connection is released; dropping it hands the slot to
/// the next queued stream, if any. Made and released by `crate::backend` (its
/// constructors and `Drop` live there).
#[derive(Debug)]
pub struct Busy {
    pub(crate) rt: Arc<Runtime>,
    pub(crate) be: usize,
    pub(crate) srv: usize,
    /// The connection's registration in the server's `sessions`, if kept.
    pub(crate) session: Option<u64>,
}

#[derive(Debug)]
pub struct ServerRt {
    pub name: String,
    /// The server's address (`0.0.0.0:0` for a unix-socket server, or one whose name
    /// does not resolve); DNS and `set server addr` change it at run time.
    pub addr: crate::server::AddrCell,
    /// How the server follows DNS, when its address is a name.
    pub dns: Option<Box<crate::dns::types::SrvDns>>,
    /// `server <name> /path` (or `unix@/path`): the unix socket to connect to.
    pub unix: Option<std::path::PathBuf>,
    /// `maxconn` (0: no limit); an agent's `maxconn:<n>` changes it.
    pub maxconn: AtomicU32,
    /// `minconn`: the floor of the dynamic `maxconn` (0: the plain `maxconn`).
    pub minconn: u32,
    /// `maxqueue`: streams that may wait in `queue` (0: no limit).
    pub maxqueue: u32,
    /// Streams bound to this server (`use-server`) waiting for one of its slots.
    pub queue: crate::server::queue::Queue<Busy>,
    /// `pool-max-conn`: idle connections kept per thread; `None`: the pool's own bound.
    pub pool_max_conn: Option<u32>,
    /// `pool-low-conn`: a thread takes an idle connection over from another thread
    /// only while all threads keep at least this many to the server (0: always).
    pub pool_low_conn: u32,
    /// `pool-purge-delay`: idle connections not reused for a whole round of it close
    /// (zero: none is kept).
    pub pool_purge_delay: std::time::Duration,
    /// `max-reuse`: an HTTP/2 connection carries at most this many streams after its
    /// first (`None`: no limit; HTTP/1 connections are not limited, as in HAProxy 2.6).
    pub max_reuse: Option<u32>,
    /// `redir <prefix>`: GET and HEAD requests for this server get a 302 to
    /// `<prefix><path>` (`stream::redir`).
    pub redir: Option<Box<str>>,
    /// `tune.idle-pool.shared`: threads may take over each other's idle connections.
    pub pool_shared: bool,
    pub backup: bool,
    /// `non-stick`: the stick rules never store this server.
    pub non_stick: bool,
    pub disabled: bool,
    /// `cookie <value>`: the persistence cookie value that names this server.
    pub cookie: Option<Box<[u8]>>,
    /// Connections to this server in use (not counting idle pooled ones).
    pub cur_conns: AtomicU32,
    /// Index of this server across all backends, keying the idle connection pools.
    pub pool_key: usize,
    /// Counters only the stats read (`show stat`).
    pub stats: crate::counters::stats::ServerStats,
    /// `send-proxy`, `send-proxy-v2`, `proxy-v2-options` (`backend::send_proxy`).
    pub send_proxy: rampart_cfg::model::SendProxy,
    /// `source` of the server, else of its backend: the local address to bind to
    /// before connecting.
    pub source: Option<SocketAddr>,
    /// `socks4`: connections go through this SOCKS4 proxy.
    pub socks4: Option<SocketAddr>,
    /// `tfo`: TCP_FASTOPEN_CONNECT on its connections.
    pub tfo: bool,
    /// `on-marked-down shutdown-sessions`.
    pub shutdown_on_down: bool,
    /// `on-marked-up shutdown-backup-sessions`.
    pub shutdown_backups_on_up: bool,
    /// The connections in use, kept only when something may cut them (see
    /// [`crate::server::Sessions`]; boxed: 72 bytes in every server otherwise).
    pub sessions: Option<Box<crate::server::Sessions>>,
    /// An address without a fixed port: the client's destination port plus this.
    pub port_offset: Option<i32>,
    /// The hidden server of `option transparent`: connects to the destination address
    /// of the client connection (after `set-dst`/`set-dst-port`).
    pub transparent: bool,
    /// The hidden server of `dispatch` / `option transparent`: not shown in statistics
    /// nor in `show servers state`, as HAProxy has no server there.
    pub hidden: bool,
    /// Operational state (set by the checks), maintenance, effective weight.
    pub state: SrvState,
    /// Health-check settings (`check`), `None` without.
    ///
    /// PERF: boxed: 344 bytes inline in every server, most of which have no `check`
    /// (20 000 backends of five servers: 34 MB).
    pub check: Option<Box<CheckRt>>,
    /// Agent-check settings (`agent-check`), `None` without (boxed as `check`).
    pub agent: Option<Box<AgentRt>>,
    /// `track`: the (backend, server) whose state this server follows.
    pub track: Option<(usize, usize)>,
    /// `rise` and `fall` as configured (2 and 3 by default), even without `check`:
    /// HAProxy reports and forces the health counter of such a server with them.
    pub rise_fall: (u32, u32),
    /// `ssl` / `check-ssl`: the TLS configurations towards this server.
    pub tls: Option<Box<crate::tls::client::ServerTlsRt>>,
    /// `proto h1|h2`: the protocol spoken whatever ALPN says; `None`: HTTP/1, or HTTP/2
    /// when ALPN negotiates `h2`.
    pub proto: Option<rampart_cfg::model::BindProto>,
    /// `ws auto|h1|h2`: the protocol of WebSocket streams.
    pub ws: rampart_cfg::model::ServerWs,
    /// A WebSocket stream takes a new connection of its own, spoken in the protocol
    /// `ws` names (HAProxy 2.6's `!srv_check_reuse_ws()`).
    pub ws_apart: bool,
}

impl ServerRt {
    /// Whether reports show this server: not the hidden one of `dispatch`, not one
    /// `del server` removed.
    #[inline]
    pub fn is_shown(&self) -> bool {
        !self.hidden && !self.state.is_deleted()
    }

    /// Whether connections to this server may speak HTTP/2 (`proto h2`, or `h2`
    /// offered by ALPN without `proto`).
    pub fn may_speak_h2(&self) -> bool {
        match self.proto {
            Some(p) => p == rampart_cfg::model::BindProto::H2,
            None => self.tls.as_deref().is_some_and(|t| t.offers_h2()),
        }
    }

    /// Whether a persistence cookie or a `use-server` rule may send a request to this
    /// server: it is neither down nor in maintenance (a draining server still takes
    /// the clients that stick to it), as HAProxy's `cur_state != SRV_ST_STOPPED`.
    pub fn takes_persistent(&self) -> bool {
        self.state.oper() != crate::server::OperState::Stopped && !self.state.is_maint()
    }

    /// Whether a new request may be sent to this server now.
    pub fn usable(&self) -> bool {
        self.state.is_usable() && self.maxconn().is_none_or(|m| self.cur_conns.load(Ordering::Relaxed) < m)
    }

    /// The server's `maxconn`, `None` without a limit.
    #[inline]
    pub fn maxconn(&self) -> Option<u32> {
        Some(self.maxconn.load(Ordering::Relaxed)).filter(|&m| m > 0)
    }

    /// Whether the server is UP and not in maintenance (full or not).
    #[inline]
    pub fn is_up(&self) -> bool {
        self.state.is_up()
    }
}

#[cfg(test)]
mod size_tests {
    /// What each server and proxy holds inline, kept in bounds: 20 000 backends of five
    /// servers hold 100 000 of these (issue 27, configuration scale). Printed with
    /// `--nocapture` for docs/PERFORMANCE.md.
    #[test]
    fn servers_and_proxies_stay_small() {
        let sizes = [
            // 2026-12-06: 608, 64, 16, 3 280, 1 232, 208, 672 (ServerRt was 1 552)
            ("ServerRt", std::mem::size_of::<super::ServerRt>(), 640),
            ("ServerStats", std::mem::size_of::<crate::counters::stats::ServerStats>(), 64),
            ("Counter", std::mem::size_of::<crate::counters::Counter>(), 16),
            ("ProxyRt", std::mem::size_of::<super::ProxyRt>(), 3300),
            ("BackendRt", std::mem::size_of::<super::BackendRt>(), 1240),
            ("FrontendRt", std::mem::size_of::<super::FrontendRt>(), 208),
            ("ProxyStats", std::mem::size_of::<crate::counters::stats::ProxyStats>(), 672),
        ];
        for (name, size, most) in sizes {
            println!("{name}: {size} bytes");
            assert!(size <= most, "{name} holds {size} bytes inline, more than {most}");
        }
    }
}
