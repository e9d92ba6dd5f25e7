//! Actions: what `http-request`, `http-response`, `http-after-response`,
//! `tcp-request` and `tcp-response` rules do, compiled once per proxy from the
//! configuration model (expressions, log-formats, regexes and conditions compiled,
//! replies pre-rendered) and run by the stream's analysers.
//! HAProxy counterpart: src/http_act.c, src/tcp_act.c, src/vars.c (actions),
//! src/http_ana.c (`http_req_get_intercept_rule`, `http_res_get_intercept_rule`).
//!
//! - `compile`: configuration model to [`ProxyRules`], with HAProxy's messages
//!   (`compile_tcp`: the TCP rule lists)
//! - `http`: [`HttpAct`] and how each action runs on a message head
//! - `lua`: `lua.<name>` actions and services, run through [`lua::LuaRunner`]
//! - `tcp`: [`TcpAct`] and how a TCP rule list runs (waiting on missing data)
//! - `rewrite`: header and request-line rewrites (regex replacement with `\N`)
//! - `reply`: responses rules build (`deny`, `return`, `tarpit`, `redirect`, `auth`)
//!   and the error pages of `errorfile` / `http-error`
//! - `capture`: capture slots, the values a stream captured, header captures
//! - `addr`: `set-src`, `set-dst`, `set-src-port`, `set-dst-port`
//! - `normalize`: `normalize-uri` and its normalizers
//! - `stick`: `track-sc<n>`, `sc-inc-gpc*`, `sc-set-gpt*`
//! - `patref`: `add-acl`, `del-acl`, `set-map`, `del-map` (pattern files changed by rules)
//! - `sockopt`: `set-mark`, `set-tos` (3.x: `set-fc-mark`, `set-fc-tos`), noted for the
//!   socket's holder
//! - `state`: [`state::StreamState`], what actions change in a stream besides its heads
//!
//! Actions read the stream through a [`SampleCtx`] and write only through the
//! message head's edits; they never see a socket.

pub mod addr;
pub mod cache;
pub mod capture;
pub mod chan;
pub mod compile;
mod compile_tcp;
pub mod http;
pub mod lua;
pub mod normalize;
pub mod patref;
pub mod reply;
pub mod rewrite;
pub mod sockopt;
pub mod state;
pub mod stick;
pub mod tcp;
#[cfg(test)]
mod tcp_tests;

use std::time::Duration;

pub use crate::sample::ctx::RuleAt;
pub use compile::compile_proxy;
pub use http::HttpAct;
pub use tcp::{TcpAct, TcpFlow};

use crate::acl::Cond;
use crate::log::format::LogFormat;
use crate::sample::SampleCtx;

/// A rule: an action, its condition, and where it was written.
#[derive(Debug)]
pub struct Rule<A> {
    pub cond: Option<Cond>,
    pub act: A,
    /// Its file and line (`last_rule_file`, `last_rule_line`).
    pub at: RuleAt,
}

impl<A> Rule<A> {
    /// Whether the rule applies to this stream (no condition: always).
    #[inline]
    pub fn applies(&self, ctx: &SampleCtx<'_>) -> bool {
        self.cond.as_ref().is_none_or(|c| c.eval(ctx))
    }
}

/// What a rule list decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Every rule ran (or none applied): go on with the next analyser.
    Continue,
    /// `allow`: stop this list, go on with the next analyser.
    Allow,
    /// A response was built (in the stream's response head): send it.
    Reply,
    /// `tarpit`: hold the connection for `timeout tarpit`, then send the reply built.
    Tarpit,
    /// `reject`: close without a response.
    Close,
    /// `silent-drop`: close without the peer noticing.
    SilentDrop,
    /// `wait-for-body`: the rules that follow run once the request body is in hand (or
    /// the wait ended); the stream waits, then resumes the list after this rule.
    WaitBody(WaitBody),
    /// `use-service`: the stream hands the request to a service of the process, whose
    /// answer is the response.
    Service(Service),
    /// `do-resolve`: the stream resolves the name the rule left in its state without
    /// blocking the thread, then runs the list again from that rule.
    Resolve,
    /// A Lua action or service gave the event loop back (sleep, yield): the stream
    /// waits as asked, then runs the list again from that rule, which resumes it.
    LuaWait(lua::LuaWait),
    /// `send-spoe-group`: the stream sends the group its state names to the agent and
    /// applies the answer, then runs the list again from that rule, which goes on.
    Spoe,
}

/// A service `http-request use-service` hands requests to (HAProxy's applets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// `prometheus-exporter`: the process's metrics in Prometheus' text format.
    PrometheusExporter,
    /// `lua.<name>`: an HTTP service a Lua script registered (its number).
    Lua(usize),
}

/// How long and for how much of the request body `wait-for-body` (and `option
/// http-buffer-request`) waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitBody {
    /// Past it, the request is answered with a 408; `None`: no limit but the client
    /// timeout.
    pub time: Option<Duration>,
    /// Enough bytes to stop waiting early; 0: the whole body (or a full buffer).
    pub at_least: u64,
}

/// A `use_backend` rule's target.
#[derive(Debug)]
pub enum BackendTarget {
    Static(usize),
    /// A log-format whose result names the backend.
    Dynamic(LogFormat),
}

/// A `use-server` rule's target.
#[derive(Debug)]
pub enum ServerTarget {
    /// A server of the backend (index).
    Static(usize),
    /// A log-format whose result names the server.
    Dynamic(LogFormat),
}

/// Everything of the rules language a proxy runs, in evaluation order. Rules
/// inherited from a named `defaults` section come first in each list.
#[derive(Debug, Default)]
pub struct ProxyRules {
    /// The SPOE engines of the proxy's `filter spoe` lines (empty without).
    pub spoe: Vec<crate::spoe::Engine>,
    pub http_req: Vec<Rule<HttpAct>>,
    pub http_res: Vec<Rule<HttpAct>>,
    pub http_after: Vec<Rule<HttpAct>>,
    /// Proxy-level `redirect` rules, run after the `http-request` rules.
    pub redirects: Vec<Rule<HttpAct>>,
    /// `use_backend` rules (the frontend side).
    pub switching: Vec<Rule<BackendTarget>>,
    /// `use-server` rules (the backend side): server indices.
    pub use_server: Vec<Rule<ServerTarget>>,
    /// `stick on|match|store-request` rules (backends).
    pub stick: Vec<Rule<stick::StickAct>>,
    /// `force-persist` (`true`) and `ignore-persist` (`false`) rules (backends).
    pub persist: Vec<Rule<bool>>,
    /// `stick store-response` rules (backends).
    pub stick_res: Vec<Rule<stick::StickAct>>,
    /// `timeout tarpit`, else `timeout connect` (HAProxy's fallback).
    pub tarpit: Option<Duration>,
    /// `http-error status <code>` replies other than error files, by status.
    pub http_errors: Vec<(u16, reply::Reply)>,
    /// The capture slots (a frontend's: what its streams capture into).
    pub captures: capture::CaptureDecls,
    /// `unique-id-format` (frontends).
    pub unique_id: Option<LogFormat>,
    /// `unique-id-header`: the request header the id is sent in (lowercase).
    pub unique_id_header: Option<Box<[u8]>>,
    /// `monitor-uri` (frontends): requests for it are answered by the proxy itself.
    pub monitor_uri: Option<Box<[u8]>>,
    /// `monitor fail` conditions: a monitor request meeting one gets a 503.
    pub monitor_fail: Vec<Cond>,
    /// `stats admin` conditions: a stats page request meeting one may use the admin form.
    pub stats_admin: Vec<Cond>,
    /// `tcp-request connection` rules (frontends), run at accept.
    pub tcp_conn: Vec<Rule<TcpAct>>,
    /// `tcp-request session` rules (frontends), run right after.
    pub tcp_sess: Vec<Rule<TcpAct>>,
    /// `tcp-request content` rules, run per stream (frontend, then backend).
    pub tcp_req: Vec<Rule<TcpAct>>,
    /// `tcp-response content` rules (backends), on the server's first bytes.
    pub tcp_res: Vec<Rule<TcpAct>>,
    /// `tcp-request inspect-delay`: how long `tcp_req` may wait for data.
    pub inspect_delay: Option<Duration>,
    /// `tcp-response inspect-delay`.
    pub res_inspect_delay: Option<Duration>,
}

impl ProxyRules {
    /// Whether the proxy has no HTTP rule at all (the request path then builds no
    /// sample context).
    pub fn no_http_rules(&self) -> bool {
        self.http_req.is_empty() && self.redirects.is_empty() && self.switching.is_empty()
    }
}

/// The severity `set-log-level <level>|silent` gives a stream's log line.
fn log_level(l: rampart_cfg::model::LogLevel) -> crate::log::types::LevelSet {
    use crate::log::{level, types::LevelSet};
    use rampart_cfg::model::LogLevel as L;
    LevelSet::Level(match l {
        L::Silent => return LevelSet::Silent,
        L::Emerg => level::EMERG,
        L::Alert => level::ALERT,
        L::Crit => level::CRIT,
        L::Err => level::ERR,
        L::Warning => level::WARNING,
        L::Notice => level::NOTICE,
        L::Info => level::INFO,
        L::Debug => level::DEBUG,
    })
}
