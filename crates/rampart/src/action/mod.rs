//! Actions: what `http-request`, `http-response`, `http-after-response`,
//! `tcp-request` and `tcp-response` rules do, compiled once per proxy from the
//! configuration model (expressions, log-formats, regexes and conditions compiled,
//! replies pre-rendered) and run by the stream's analysers.
//! HAProxy counterpart: src/http_act.c, src/tcp_act.c, src/vars.c (actions),
//! src/http_ana.c (`http_req_get_intercept_rule`, `http_res_get_intercept_rule`).
//!
//! - `compile`: configuration model to [`ProxyRules`], with HAProxy's messages
//! - `http`: [`HttpAct`] and how each action runs on a message head
//! - `rewrite`: header and request-line rewrites (regex replacement with `\N`)
//! - `reply`: responses rules build (`deny`, `return`, `tarpit`, `redirect`, `auth`)
//!
//! Actions read the stream through a [`SampleCtx`] and write only through the
//! message head's edits; they never see a socket.

pub mod compile;
pub mod http;
pub mod reply;
pub mod rewrite;

use std::time::Duration;

pub use compile::compile_proxy;
pub use http::HttpAct;

use crate::acl::Cond;
use crate::log::format::LogFormat;
use crate::sample::SampleCtx;

/// A rule: an action and its condition.
#[derive(Debug)]
pub struct Rule<A> {
    pub cond: Option<Cond>,
    pub act: A,
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
    /// `reject`, `silent-drop`: close without a response.
    Close,
}

/// A `use_backend` rule's target.
#[derive(Debug)]
pub enum BackendTarget {
    Static(usize),
    /// A log-format whose result names the backend.
    Dynamic(LogFormat),
}

/// Everything of the rules language a proxy runs, in evaluation order. Rules
/// inherited from a named `defaults` section come first in each list.
#[derive(Debug, Default)]
pub struct ProxyRules {
    pub http_req: Vec<Rule<HttpAct>>,
    pub http_res: Vec<Rule<HttpAct>>,
    pub http_after: Vec<Rule<HttpAct>>,
    /// Proxy-level `redirect` rules, run after the `http-request` rules.
    pub redirects: Vec<Rule<HttpAct>>,
    /// `use_backend` rules (the frontend side).
    pub switching: Vec<Rule<BackendTarget>>,
    /// `use-server` rules (the backend side): server indices.
    pub use_server: Vec<Rule<usize>>,
    /// `timeout tarpit`, else `timeout connect` (HAProxy's fallback).
    pub tarpit: Option<Duration>,
}

impl ProxyRules {
    /// Whether the proxy has no HTTP rule at all (the request path then builds no
    /// sample context).
    pub fn no_http_rules(&self) -> bool {
        self.http_req.is_empty() && self.redirects.is_empty() && self.switching.is_empty()
    }
}
