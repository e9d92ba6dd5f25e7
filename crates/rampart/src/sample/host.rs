//! What the rules language and the log lines may read of the running process, beyond
//! the stream they evaluate on: the proxies and servers by index (names, connection
//! counts, timeouts), process-wide facts, and the few upcalls a rule makes into the
//! process (render the frontend's unique id, count a denied message).
//!
//! The runtime model (`crate::proxy::Runtime`) implements [`Host`]; evaluations reach it
//! through [`super::SampleCtx::rt`]. The rules language sits below the model that holds
//! its compiled rules, so it reads the model through this interface and never names
//! its types: that keeps the import graph free of circles (docs/internals/layers.md).
//! HAProxy counterpart: what sample fetches read through `smp->px`, `smp->sess->fe`,
//! `objt_server(smp->strm->target)` and the `global` struct.
//!
//! PERF: one indirect call per read; only the fetches and log variables that name a
//! proxy or a server read through it, never the request path itself.

use std::net::SocketAddr;

use super::ctx::{Dir, SampleCtx};
use super::vars::ProcVars;
use crate::timer::Timeouts;

/// What a fetch or a log variable sees of one server.
#[derive(Debug, Clone, Copy)]
pub struct SrvFacts<'a> {
    pub name: &'a str,
    /// Its address (`0.0.0.0:0` for a unix-socket server).
    pub addr: SocketAddr,
    pub backup: bool,
    /// Not in maintenance and not DOWN by its checks (HAProxy's `srv_is_up`: a
    /// draining or NOLB server is up).
    pub up: bool,
    /// The load balancer may pick it (UP, not in maintenance nor drain, weight above 0):
    /// what `nbsrv` counts.
    pub usable: bool,
    /// Connections in use (`srv_conn`, `%sc`).
    pub cur_conns: u32,
    /// HAProxy's number of the server in its backend (`srv_id`, the stats' `sid`).
    pub id: u32,
    /// DOWN by its checks or in maintenance: HAProxy's `cur_state == SRV_ST_STOPPED`.
    pub stopped: bool,
    /// Streams waiting in its own queue (`srv_queue`).
    pub queued: u32,
    /// Its `maxconn` now (dynamic with `minconn`), `None` without a limit.
    pub maxconn: Option<u32>,
    /// `maxqueue`, 0 without a limit.
    pub maxqueue: u32,
    /// Sessions per second over the last second (`srv_sess_rate`).
    pub sess_rate: u32,
    /// The effective weight (`srv_weight`, `srv_uweight`).
    pub weight: u32,
    /// The configured weight (`srv_iweight`).
    pub initial_weight: u32,
}

/// What a fetch sees of one backend beyond its servers.
#[derive(Debug, Clone, Copy, Default)]
pub struct BeFacts {
    /// Streams waiting for a server, in the backend's queue and the servers'
    /// (HAProxy's `totpend`).
    pub queued: u32,
    /// Sessions per second over the last second (`be_sess_rate`).
    pub sess_rate: u32,
    /// `option allbackups`: every usable backup server takes traffic when no active one
    /// is left (else only the first).
    pub all_backups: bool,
}

/// What a fetch sees of one frontend's rates, over the last second.
#[derive(Debug, Clone, Copy, Default)]
pub struct FeRates {
    /// Sessions per second (`fe_sess_rate`).
    pub sess: u32,
    /// HTTP requests per second (`fe_req_rate`).
    pub req: u32,
}

/// The running process as rules and log lines read it. Proxies and servers are named by
/// their indices (`SampleCtx::fe`, `SampleCtx::be`, `SampleCtx::srv`, proxy and server
/// arguments); an index that names nothing answers `None` (or 0).
pub trait Host: Sync + std::fmt::Debug {
    /// `tune.bufsize`.
    fn bufsize(&self) -> usize;
    /// `tune.bufsize - tune.maxrewrite`: the most a message head may take.
    fn max_head(&self) -> usize;
    /// A soft stop began (`stopping`).
    fn stopping(&self) -> bool;
    /// Client connections alive in the process (`%ac`).
    fn act_conns(&self) -> u32;
    /// The `proc.` variables.
    fn proc_vars(&self) -> &ProcVars;
    /// The configuration file a rule was written in (`last_rule_file`), by its index.
    fn rule_file(&self, file: u32) -> Option<&str>;
    /// Cache `cache` (`cache-use`, `cache-store`).
    fn cache(&self, _cache: u32) -> Option<&crate::cache::Cache> {
        None
    }
    /// Counts a `cache-use` lookup (`hit`: answered from the cache) in the
    /// `cache_lookups` and `cache_hits` of frontend `fe`, or of backend `be` when the
    /// rule is the backend's.
    fn count_cache(&self, fe: usize, be: Option<usize>, hit: bool) {
        let _ = (fe, be, hit);
    }
    /// The name of cache `cache` (`res.cache_name`).
    fn cache_name(&self, cache: u32) -> Option<&str> {
        self.cache(cache).map(|c| c.conf.name.as_str())
    }

    /// The name of proxy `px` (`fe_name`, `be_name`, `%f`, `%b`).
    fn proxy_name(&self, px: usize) -> Option<&str>;
    /// HAProxy's number of proxy `px` (`fe_id`, `be_id`, the stats' `iid`).
    fn proxy_id(&self, px: usize) -> Option<u32>;
    /// The backend frontend `fe` uses by default (`fe_defbe`).
    fn default_backend(&self, fe: usize) -> Option<usize>;
    /// Client connections frontend `fe` holds (`fe_conn`, `%fc`).
    fn fe_conns(&self, fe: usize) -> u32;
    /// The timeouts of proxy `px` (`be_server_timeout`, `fe_client_timeout` ...).
    fn timeouts(&self, px: usize) -> Option<&Timeouts>;
    /// Whether frontend `fe` logs with `option logasap` (`+` before the totals).
    fn logasap(&self, fe: usize) -> bool;
    /// Lines frontend `fe` logged so far (`%lc`).
    fn log_count(&self, fe: usize) -> u64;
    /// The persistence cookie settings of backend `be` (`%tsc`).
    fn cookie(&self, be: usize) -> Option<&rampart_cfg::model::CookiePersist>;
    /// How many listeners frontend `fe` has (every address of its `bind` lines).
    fn listener_count(&self, fe: usize) -> usize;
    /// The `name` of listener `li` of frontend `fe` (`so_name`).
    fn listener_name(&self, fe: usize, li: u32) -> Option<&str>;
    /// `option http-use-proxy-header` on frontend `fe`.
    fn use_proxy_header(&self, fe: usize) -> bool {
        let _ = fe;
        false
    }
    /// The number of listener `li` of frontend `fe` (`so_id`): its `bind ... id`, else
    /// its position from 1.
    fn listener_id(&self, fe: usize, li: u32) -> Option<u32> {
        ((li as usize) < self.listener_count(fe)).then_some(li + 1)
    }
    /// The open connections listener `li` of frontend `fe` accepted (`dst_conn`).
    fn listener_conns(&self, fe: usize, li: u32) -> Option<u32> {
        let _ = (fe, li);
        None
    }

    /// The queue and rate of backend `be`.
    fn backend(&self, be: usize) -> Option<BeFacts> {
        let _ = be;
        None
    }
    /// The rates of frontend `fe`.
    fn fe_rates(&self, fe: usize) -> Option<FeRates> {
        let _ = fe;
        None
    }

    /// How many servers backend `be` has.
    fn server_count(&self, be: usize) -> usize;
    /// Server `srv` of backend `be`.
    fn server(&self, be: usize, srv: usize) -> Option<SrvFacts<'_>>;

    /// Renders the `unique-id-format` of frontend `fe` over `ctx` into `out`; `false`
    /// when the frontend has none.
    fn render_unique_id(&self, fe: usize, ctx: &SampleCtx<'_>, out: &mut Vec<u8>) -> bool;
    /// Counts a message a rule refused (`deny`, `tarpit`): a request in the frontend's
    /// `dreq`, a response in the `dresp` of the frontend, backend and server.
    fn count_denied(&self, dir: Dir, fe: usize, be: Option<usize>, srv: Option<usize>);
    /// `do-log` (HAProxy 3.x): sends a line of frontend `fe`'s log now, rendered over
    /// `ctx` (its `log` is the stream's record so far), when the frontend logs.
    fn do_log(&self, fe: usize, ctx: &SampleCtx<'_>) {
        let _ = (fe, ctx);
    }

    /// The stick table of proxy `px`, if it declares one (`src_*`, `table_*`,
    /// `track-sc ... table <px>`).
    fn stick_table(&self, px: usize) -> Option<&std::sync::Arc<crate::stick::StickTable>> {
        let _ = px;
        None
    }
}
