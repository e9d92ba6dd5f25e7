//! What HTTP actions change in a stream besides its message heads and variables: its
//! own copy of the connection's addresses (`set-src`, `set-dst` ...), its captures, its
//! unique id, the early hints waiting to be sent, and the timeouts `set-timeout`
//! overrides. The stream keeps one per exchange (pooled with the heads), and every
//! sample context of the exchange reads from it.
//! HAProxy counterpart: the fields of `struct stream` (include/haproxy/stream-t.h) these
//! actions write: `scf->src/dst`, `req_cap`/`res_cap`, `unique_id`, the 103 response
//! of `http_action_early_hint()`, `scb->ioto` / `tunnel_timeout`.

use super::capture::{CaptureDecls, Captured};
use crate::http::MsgHead;
use crate::log::UniqueId;
use crate::sample::ctx::ConnInfo;
pub use crate::sample::ctx::TimeoutOverride;

/// The per-stream state actions change.
#[derive(Debug)]
pub struct StreamState {
    /// The stream's addresses: the session's, as `set-src`, `set-dst`, `set-src-port`,
    /// `set-dst-port` left them for this stream (HAProxy 2.6 changes the stream
    /// connector's copy: the next request of the connection starts from the session's).
    pub conn: ConnInfo,
    pub caps: Captured,
    pub uid: UniqueId,
    /// HAProxy's `uniq_id`: the stream's number in the process (`%rt`).
    pub uniq_id: u64,
    /// `103 Early Hints` responses built by `early-hint` rules, to send before anything
    /// else; the last one is still open to more headers while `hint_open`.
    pub hints: Vec<MsgHead>,
    pub hint_open: bool,
    /// `set-timeout server|tunnel` for this stream.
    pub timeouts: TimeoutOverride,
    /// `set-priority-class` / `set-priority-offset`: its place in a server queue.
    pub prio: crate::server::queue::Priority,
    /// `retry-on` response conditions apply (cleared by `disable-l7-retry`).
    pub l7_retry: bool,
    /// Where the `http-request` rules resume after a `wait-for-body`: the index of the
    /// next rule of the list being run (0 when none waits).
    pub resume: usize,
    /// Where the `http-response` rules resume after a `wait-for-body`: the proxy whose
    /// list waited (an index into the runtime's proxies) and the index of its next rule.
    pub res_resume: Option<(usize, usize)>,
    /// What the log line reports (filled only when the frontend logs; the mux starts
    /// it, see `crate::log::StreamLog::begin`).
    pub log: crate::log::StreamLog,
    /// What the TLS connection to the server negotiated (`ssl_bc*`), once connected.
    pub back_tls: Option<std::sync::Arc<crate::tls::TlsInfo>>,
    /// The last rule that ended one of the stream's rule lists (`last_rule_file`).
    pub last_rule: Option<super::RuleAt>,
    /// The server was chosen for the client (a persistence cookie or `use-server`,
    /// HAProxy's `SF_DIRECT`) and got the request: no cookie is inserted for it.
    pub direct: bool,
    /// The dates the request's persistence cookie carried (`maxidle`, `maxlife`).
    pub cookie_dates: crate::http::cookie::Dates,
    /// What the backend's `force-persist`/`ignore-persist` rules decided.
    pub persist: Persist,
    /// What the filters decided (compression, cache).
    pub flt: crate::sample::ctx::FltFacts,
    /// What the cache rules decided.
    pub cache: crate::cache::CacheState,
    /// The stick-table entries the stream tracks (`track-sc<n>`).
    pub sc: crate::stick::Trackers,
    /// The keys `stick on|store-request` rules store the server in, once known.
    /// PERF: kept with the pooled state, so a backend with `stick` rules allocates
    /// nothing per request once warm.
    pub stick_stores: Vec<(std::sync::Arc<crate::stick::StickTable>, crate::stick::Key)>,
    /// What a `do-resolve` rule asks, until the stream resolved it.
    pub resolve: Option<ResolveAsk>,
    /// The answer to it (`Some(None)`: no address), for the rule run again.
    pub resolved: Option<Option<std::net::IpAddr>>,
    /// A `tcp-request content do-resolve` rule waiting for its answer.
    pub resolving: Option<Resolving>,
    /// What the Lua runtime keeps for this stream (`txn:set_priv`, a script waiting to
    /// be resumed): a handle into the thread's Lua state, released when dropped.
    pub lua: super::lua::Slot,
    /// SPOE exchanges of the transaction (boxed once a proxy's engine is used).
    pub spoe: Option<Box<crate::spoe::SpoeTxn>>,
    /// Client socket options rules asked for (`set-mark`, `set-tos`), for the client
    /// mux to set once the rule list ran.
    pub fc: super::sockopt::FcPending,
}

/// Where a `tcp-request content do-resolve` rule stands: asked (the stream resolves
/// within the inspect delay), then answered (`None`: no address).
#[derive(Debug, Clone)]
pub enum Resolving {
    Asked(ResolveAsk),
    Answered(Option<std::net::IpAddr>),
}

/// A name a `do-resolve` rule asks of a resolvers section.
#[derive(Debug, Clone)]
pub struct ResolveAsk {
    /// Index into `Runtime::resolvers`.
    pub res: usize,
    pub name: String,
    pub prefer_v6: bool,
}

impl Default for StreamState {
    fn default() -> Self {
        StreamState {
            conn: ConnInfo::new(None, -1),
            caps: Captured::default(),
            uid: UniqueId::default(),
            uniq_id: 0,
            hints: Vec::new(),
            hint_open: false,
            timeouts: TimeoutOverride::default(),
            prio: crate::server::queue::Priority::default(),
            l7_retry: true,
            resume: 0,
            res_resume: None,
            log: crate::log::StreamLog::default(),
            back_tls: None,
            last_rule: None,
            direct: false,
            cookie_dates: Default::default(),
            persist: Persist::Normal,
            flt: Default::default(),
            cache: Default::default(),
            sc: Default::default(),
            stick_stores: Vec::new(),
            resolve: None,
            resolved: None,
            resolving: None,
            lua: Default::default(),
            spoe: None,
            fc: Default::default(),
        }
    }
}

impl StreamState {
    /// Starts a stream on connection `conn` (its addresses as the session has them),
    /// numbered `uniq_id`, with the capture slots of its frontend.
    pub fn begin(&mut self, conn: &ConnInfo, uniq_id: u64, caps: &CaptureDecls) {
        self.conn.clone_from(conn);
        self.caps.reset(caps);
        self.uid.reset();
        self.uniq_id = uniq_id;
        self.hints.clear();
        self.hint_open = false;
        self.timeouts = TimeoutOverride::default();
        self.prio = crate::server::queue::Priority::default();
        self.l7_retry = true;
        self.fc = Default::default();
        self.resume = 0;
        self.res_resume = None;
        self.last_rule = None;
        self.direct = false;
        self.cookie_dates = Default::default();
        self.persist = Persist::Normal;
        self.flt = Default::default();
        self.cache.reset();
        self.sc.release();
        self.stick_stores.clear();
        self.resolve = None;
        self.resolved = None;
        self.resolving = None;
        self.lua = Default::default();
        self.spoe = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn overrides_win_over_the_configured_timeouts() {
        let five = Some(Duration::from_secs(5));
        let mut t = TimeoutOverride::default();
        assert_eq!((t.server(five), t.tunnel(None)), (five, None));
        t.server = Some(None);
        t.tunnel = Some(Some(Duration::from_millis(200)));
        assert_eq!((t.server(five), t.tunnel(five)), (None, Some(Duration::from_millis(200))));
    }

    #[test]
    fn a_new_stream_forgets_the_last_one() {
        let mut st = StreamState::default();
        let decls =
            CaptureDecls { req: vec![crate::action::capture::CapSlot { header: None, len: 4 }], res: Vec::new() };
        st.begin(&ConnInfo::new(None, -1), 1, &decls);
        st.caps.store(crate::action::capture::CapDir::Req, 0, b"abc", 4);
        st.timeouts.server = Some(None);
        st.prio = crate::server::queue::Priority::new(3, 100);
        st.l7_retry = false;
        st.resume = 3;
        st.last_rule = Some(crate::action::RuleAt { file: 0, line: 7 });
        st.hints.push(MsgHead::default());
        let conn = ConnInfo::new(Some("10.0.0.1:5".parse().unwrap()), -1);
        st.begin(&conn, 2, &decls);
        assert_eq!((st.caps.req.as_slice(), st.uniq_id, st.resume), (&[None][..], 2, 0));
        assert_eq!((st.timeouts, st.hints.len(), st.conn.src), (TimeoutOverride::default(), 0, conn.src));
        assert_eq!((st.prio, st.l7_retry, st.last_rule), (crate::server::queue::Priority::default(), true, None));
    }
}

/// What a backend's `force-persist`/`ignore-persist` rules decided for a request
/// (HAProxy's `SF_FORCE_PRST`/`SF_IGNORE_PRST`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Persist {
    #[default]
    Normal,
    /// `force-persist`: a persistence cookie, `use-server` or `stick` rule may name a
    /// server that is down or in maintenance.
    Force,
    /// `ignore-persist`: the persistence cookie is neither read nor set.
    Ignore,
}
