//! One HTTP request/response exchange, from a parsed request head to the end of the
//! response, through the analysers in HAProxy's order:
//!
//! 0. `tcp-request content` rules of the frontend (`ana::inspect`), `monitor-uri`,
//!    `capture request header` (`ana::wait_http`),
//! 1. `option http-buffer-request`, then the `http-request` rules of the frontend
//!    (`ana::http_req`, waiting for the body where `wait-for-body` asks, sending the
//!    `early-hint` responses they built), then the frontend's statistics page
//!    (`stats_page`) when the request is for it,
//! 2. backend switching (`ana::switching`),
//! 3. the same for the backend (its `tcp-request content` rules first), then the
//!    persistence cookie and `capture cookie` (`ana::cookie`), the unique id,
//!    `option forwardfor` and `option originalto` (`ana::inner`),
//! 4. server connection (the front mux connects or reuses, [`HttpFront::connect`]),
//! 5. forward (the front mux sends the request and streams the bodies),
//! 6. `http-response` rules of the backend then the frontend, `http-after-response`
//!    (`ana::http_res`), run by the front mux on the response head before writing it.
//!
//! The stream works on the protocol-neutral message (`crate::http`) and talks to the
//! client side through [`HttpFront`]: it never names a protocol.
//! HAProxy counterpart: stream.c process_stream() with http_ana.c's analysers.
//!
//! - `side`: [`HttpFront`] and [`TcpFront`], the contracts with the front muxes
//! - `txn`: [`Txn`], the request and response heads of one exchange, the stream's state
//!   (`action::state::StreamState`), the stream numbers
//! - `ana`: one file per analyser
//! - `stats_page`: the `stats uri` page answered in place of a server
//! - `cached`: a response from the cache answered in place of a server
//! - `tcp`: the TCP-mode stream (content rules waiting for data, switching, response
//!   rules)
//! - `upgrade`: what a TCP stream that becomes HTTP hands over (`switch-mode http`)

pub mod ana;
mod cached;
mod forward;
mod lua_svc;
mod redir;
pub mod side;
mod spoe;
mod stats_page;
pub mod tcp;
mod txn;
pub mod upgrade;

use crate::action::http::Env;
use crate::action::state::StreamState;
use crate::action::WaitBody;
use crate::errors::StreamError;
use crate::http::{BodyLen, MsgHead, Synth};
use crate::io::cold::cold;
use crate::log::{Cause, Phase};
use std::sync::Arc;

use crate::proxy::{Runtime, ServerRt};
use crate::sample::ctx::{ConnInfo, Dir};
use crate::sample::vars::{Scope, VarStore, Vars};
use crate::sample::SampleCtx;
use ana::http_res::ResState;
use ana::switching::Input;
pub use ana::Verdict;
use rampart_cfg::model::Mode;
pub use side::{BodyWaited, ConnectFail, Forwarded, HttpFront, ReqMeta, ResVerdict, TcpClose, TcpFront};
pub use txn::{next_uniq_id, Txn, TxnData};

/// What the client connection does after an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Wait for the next request.
    KeepAlive,
    Close,
}

/// The state the analysers share during one exchange.
#[derive(Debug)]
pub struct Stream<'a> {
    pub rt: &'a Runtime,
    /// The same runtime, shared: what server connections hold on to.
    pub shared: &'a Arc<Runtime>,
    pub conn: &'a ConnInfo,
    /// The frontend (index into `rt.proxies`).
    pub fe: usize,
    /// The backend once switching chose it.
    pub be: Option<usize>,
    /// The server a rule chose (`use-server`), if any.
    pub srv: Option<usize>,
    /// Whether this is the first request of its connection.
    pub first_req: bool,
    /// The request's method, for rules on the response.
    pub meth: Option<crate::http::Method>,
    /// The request's version, likewise (`capture.req.ver`).
    pub ver: Option<crate::http::Version>,
}

impl<'a> Stream<'a> {
    /// A sample context over the stream, its state and the heads given (each with the
    /// buffer its slices point into).
    #[allow(clippy::too_many_arguments)]
    pub fn ctx<'c>(
        &'c self,
        dir: Dir,
        req: Option<(&'c MsgHead, &'c [u8])>,
        res: Option<(&'c MsgHead, &'c [u8])>,
        sess: &'c VarStore,
        txn: &'c VarStore,
        reqres: &'c VarStore,
        st: &'c StreamState,
    ) -> SampleCtx<'c> {
        SampleCtx {
            be: self.be,
            srv: self.srv,
            dir,
            req: req.map(|(m, b)| m.view(b)),
            res: res.map(|(m, b)| m.view(b)),
            vars: Vars {
                proc: Some(&self.rt.proc_vars),
                sess: Some(sess),
                txn: Some(txn),
                reqres: Some(reqres),
                check: None,
            },
            first_req: self.first_req,
            req_caps: &st.caps.req,
            res_caps: &st.caps.res,
            unique_id: Some(&st.uid),
            uniq_id: st.uniq_id,
            timeouts: st.timeouts,
            back_tls: st.back_tls.as_deref(),
            last_rule: st.last_rule,
            txn_ver: self.ver,
            // the method once the request is gone (response rules, log lines)
            txn_meth: self.meth,
            req_line: &st.log.req_line,
            flt: st.flt,
            sc: Some(&st.sc),
            lua_kind: Some(&st.lua.kind),
            ..SampleCtx::new(self.rt, &st.conn, self.fe)
        }
    }

    /// What rules build their sample contexts from.
    pub fn env<'c>(&'c self, dir: Dir, sess: &'c VarStore, txn: &'c VarStore, reqres: &'c VarStore) -> Env<'c> {
        Env {
            rt: self.rt,
            fe: self.fe,
            captures: &self.rt.proxies[self.fe].rules.captures,
            be: self.be,
            srv: self.srv,
            first_req: self.first_req,
            meth: self.meth,
            ver: self.ver,
            dir,
            sess,
            txn,
            reqres,
            req_body: None,
            res_body: None,
            lua_wait: true,
        }
    }

    /// Where the default replies of rules of proxy `px` come from: its own error pages
    /// and `http-error`s, then the frontend's.
    pub fn pages(&self, px: usize) -> [crate::action::reply::Pages<'a>; 2] {
        [self.rt.proxies[px].pages(), self.rt.proxies[self.fe].pages()]
    }
}

/// Runs one exchange for the request whose head is in `txn.req` (its slices point into
/// [`HttpFront::req_buf`]). Returns what the client connection does next.
pub async fn run<F: HttpFront>(front: &mut F, rt: &Arc<Runtime>, conn: &ConnInfo, fe: usize, txn: &mut Txn) -> Next {
    // PERF: a connection without `sess.` variables costs no allocation here.
    let mut sess_vars = front.take_sess_vars().unwrap_or_else(|| VarStore::new(Scope::Sess));
    let first_req = front.req_meta().first;
    txn.st.begin(conn, next_uniq_id(), &rt.proxies[fe].rules.captures);
    if let Some(sess_sc) = conn.sess_trackers() {
        // COMPAT: counted before the content rules run, so a slot they track for the
        // stream still counts the request in the session's entry
        txn.st.sc.http_req(sess_sc);
    }
    // the log record is begun only when the frontend logs; these are read anyway
    txn.st.log.cookie.reset();
    let (meth, ver) = (Some(txn.req.method), Some(txn.req.version));
    let mut s = Stream { rt, shared: rt, conn, fe, be: None, srv: None, first_req, meth, ver };
    // PERF: asked on a connection's first request only
    let upgraded = if first_req { front.take_upgraded() } else { None };
    let from_tcp = upgraded.map(|up| {
        let up = *up;
        txn.vars_txn = up.txn;
        txn.vars_reqres = up.req;
        FromTcp { be: up.be }
    });
    let start = rt.stats.histograms.then(std::time::Instant::now);
    let next = exchange(front, &mut s, txn, &mut sess_vars, from_tcp).await;
    if let Some(start) = start {
        record_timers(&s, txn, start);
    }
    crate::stats::counters::count_http(rt, fe, s.be, s.srv, answered_status(txn));
    let io = front.log_info();
    let bytes = (io.head_received + io.received, io.head_sent + io.sent);
    crate::stats::counters::count_bytes(rt, (fe, conn.listener), s.be, s.srv, bytes);
    if !txn.st.sc.is_empty() || conn.sess_trackers().is_some() {
        count_tracked(txn, conn.sess_trackers(), bytes);
    }
    if let Some(pl) = rt.proxies[fe].log.as_deref().filter(|_| !txn.st.log.asap) {
        log_exchange(pl, &*front, &s, txn, &sess_vars);
    }
    // the stream's variables end with it; the session's stay with the connection
    let vars = Vars {
        proc: Some(&rt.proc_vars),
        sess: Some(&sess_vars),
        txn: Some(&txn.vars_txn),
        reqres: Some(&txn.vars_reqres),
        check: None,
    };
    vars.prune(Scope::Txn);
    vars.prune(txn.vars_reqres.scope());
    txn.vars_reqres.rescope(Scope::Req);
    if !sess_vars.is_empty() {
        front.keep_sess_vars(sess_vars);
    }
    // the transaction goes back to the thread's pool: it must not keep the session's
    // tracked entries (their `conn_cur`) alive past the connection
    txn.st.conn.ext = None;
    next
}

/// Counts the exchange in the stick-table entries it tracks, then stops tracking them.
/// As HAProxy, a failure is counted on the server's side only: a 5xx the server sent
/// (but 501 and 505), or a server that failed once the request went to it (the 502 and
/// 504 rampart answers for it); a 503 for no server or a refused connect is not one.
/// COMPAT: HAProxy counts an HTTP error for a 4xx from the server, a request it could
/// not parse and a `deny`/`tarpit`; rampart counts every 4xx the client got as an
/// error (so a `deny` with a 5xx status is not one).
fn count_tracked(txn: &mut Txn, sess: Option<&crate::stick::Trackers>, bytes: (u64, u64)) {
    if matches!(answered_status(txn), Some(400..=499)) {
        txn.st.sc.http_err(sess);
    }
    if server_failed(txn.res.status, txn.synth.status) {
        txn.st.sc.http_fail(sess);
    }
    txn.st.sc.bytes(sess, bytes.0, bytes.1);
    txn.st.sc.release();
}

/// Records the exchange's timers in its backend's and server's latency histograms.
fn record_timers(s: &Stream<'_>, txn: &TxnData, start: std::time::Instant) {
    let Some(be) = s.be else { return };
    let l = &txn.st.log;
    let x = crate::counters::histogram::Exchange {
        start,
        connect_start: l.connect_start,
        connected: l.connected,
        res_head: l.res_head,
        end: std::time::Instant::now(),
    };
    let px = &s.rt.proxies[be];
    if let Some(t) = px.stats.be_timers.as_deref() {
        t.record(&x);
    }
    if let Some(t) = s.srv.and_then(|i| px.be.servers.get(i)).and_then(|srv| srv.stats.timers.as_deref()) {
        t.record(&x);
    }
}

/// `http_fail_cnt`: the server answered a 5xx but 501 and 505, or failed after the
/// request went to it (no response: 502, 504).
/// COMPAT: a rule answering 502 or 504 itself (`deny_status 502`) counts as a failure;
/// HAProxy tells those apart by where the stream ended.
fn server_failed(server_status: u16, synth_status: u16) -> bool {
    match server_status {
        0 => matches!(synth_status, 502 | 504),
        501 | 505 => false,
        s => (500..=599).contains(&s),
    }
}

/// The status of the response the exchange sent: the one rampart built (or sent raw),
/// else the server's; `None` when none was sent.
fn answered_status(txn: &TxnData) -> Option<u16> {
    [txn.synth.status, txn.res.status].into_iter().find(|&st| st != 0)
}

/// Ends the exchange's log record and sends its line (the frontend logs).
fn log_exchange<F: HttpFront>(pl: &crate::log::ProxyLog, front: &F, s: &Stream<'_>, txn: &mut Txn, sess: &VarStore) {
    let side::LogInfo { sent, received, back_src, .. } = front.log_info();
    let l = &mut txn.st.log;
    l.end = Some(std::time::Instant::now());
    l.bytes_in += received;
    // COMPAT: `%B` counts the head as HAProxy's internal message holds it
    // (`log::stream_log::htx_head_size`), and a chunked body with its chunk framing.
    l.bytes_out = sent + l.res_head_size;
    l.back_src = back_src;
    let st = &txn.st;
    let ctx = SampleCtx {
        status: st.log.status,
        log: Some(&st.log),
        srv: s.srv.or(st.log.cookie.target),
        ..s.ctx(Dir::Response, None, None, sess, &txn.vars_txn, &txn.vars_reqres, st)
    };
    crate::log::emit(pl, &ctx, false);
}

/// `option logasap`: the line goes as soon as the response head is in, with the
/// sizes and times so far (`+`-prefixed, as HAProxy writes them).
fn log_asap(s: &Stream<'_>, st: &mut ResState<'_, '_>) {
    let Some(pl) = s.rt.proxies[s.fe].log.as_deref().filter(|pl| pl.logasap) else { return };
    let l = &mut st.st.log;
    l.end = Some(std::time::Instant::now());
    l.bytes_out = l.res_head_size;
    l.asap = true;
    let state = &*st.st;
    let ctx = SampleCtx {
        status: state.log.status,
        log: Some(&state.log),
        ..s.ctx(Dir::Response, None, None, st.sess_vars, st.vars_txn, st.vars_reqres, state)
    };
    crate::log::emit(pl, &ctx, false);
}

/// Records who ended the exchange, in which phase (the first decision stays).
fn ended(txn: &mut Txn, cause: Cause, phase: Phase) {
    txn.st.log.end_by(cause, phase);
}

/// The status of a raw response (`HTTP/1.x NNN ...`), for the stats and the log line.
fn raw_status(bytes: &[u8]) -> Option<u16> {
    let code = bytes.strip_prefix(b"HTTP/")?.get(4..7)?;
    std::str::from_utf8(code).ok()?.parse().ok()
}

/// Whether the frontend of `s` logs (instants are only read then).
fn logs(s: &Stream<'_>) -> bool {
    s.rt.proxies[s.fe].log.is_some()
}

/// The stream of the first request of a TCP stream that became HTTP
/// ([`upgrade::Upgraded`]): the frontend's content rules ran in that TCP stream.
#[derive(Debug, Clone, Copy)]
struct FromTcp {
    /// The backend the TCP stream chose (`mode http`), if it did.
    be: Option<usize>,
}

/// One request through to its response. PERF: the ways out other than forwarding
/// (`conclude`, `error`, the stats page) are [`cold`]: made only when taken, they are
/// not part of this future's state and stack frame, so that a plain request touches
/// less memory.
async fn exchange<F: HttpFront>(
    front: &mut F,
    s: &mut Stream<'_>,
    txn: &mut Txn,
    sess: &mut VarStore,
    from_tcp: Option<FromTcp>,
) -> Next {
    let mut reply: Option<Synth<'_>> = None;
    let fe = s.fe;
    if from_tcp.is_none() {
        let v = inspect(front, s, txn, sess, fe, &mut reply).await;
        if v != Verdict::Continue {
            return cold(conclude(front, s, txn, sess, v, reply)).await;
        }
    }
    let v = ana::wait_http::run(s, txn, front.req_buf(), sess, &mut reply);
    if v != Verdict::Continue {
        return cold(conclude(front, s, txn, sess, v, reply)).await;
    }
    let v = request_rules(front, s, txn, sess, fe, &mut reply).await;
    if v != Verdict::Continue {
        if v == Verdict::Close && txn.st.log.cause == Cause::ClientAbort {
            // the client left while its body was waited for: HAProxy goes on to the
            // backend, where the abort ends the stream (`be/<NOSRV>` with `CR--`).
            // COMPAT: rampart only names the backend the switching rules choose; the
            // frontend rules after the wait do not run.
            s.be = ana::switching::backend(s, input(txn, front.req_buf(), sess)).or(s.be);
        }
        cookies_of_refused(s, txn, front.req_buf(), v);
        return cold(conclude(front, s, txn, sess, v, reply)).await;
    }
    if txn.st.cache.hit.is_some() {
        // COMPAT: as HAProxy's applets, a frontend's `cache-use` hit skips the backend
        // switching (the backend stays the frontend: `fe/<CACHE>` in the log)
        return cold(cached::serve(front, s, txn, sess)).await;
    }
    if stats_page::asked(front, s, txn, fe) {
        if let Some(next) = cold(stats_page::serve(front, s, txn, sess, fe)).await {
            return next;
        }
    }
    let chosen = match from_tcp.and_then(|t| t.be) {
        Some(be) => Some(be),
        None => ana::switching::backend(s, input(txn, front.req_buf(), sess)),
    };
    let Some(be) = chosen else {
        ended(txn, Cause::Internal, Phase::Request);
        return cold(error(front, s, txn, sess, 503, true)).await;
    };
    s.be = Some(be);
    if s.rt.proxies[be].mode != Mode::Http {
        // a TCP backend for an HTTP stream (one that switched from TCP, or a dynamic
        // `use_backend`): HAProxy aborts it without a response
        return tcp_backend(txn);
    }
    if from_tcp.is_none_or(|t| t.be.is_none()) {
        s.rt.proxies[be].be.cum_conn.inc();
    }
    if be != fe {
        let v = inspect(front, s, txn, sess, be, &mut reply).await;
        if v != Verdict::Continue {
            return cold(conclude(front, s, txn, sess, v, reply)).await;
        }
        let v = request_rules(front, s, txn, sess, be, &mut reply).await;
        if v != Verdict::Continue {
            cookies_of_refused(s, txn, front.req_buf(), v);
            return cold(conclude(front, s, txn, sess, v, reply)).await;
        }
        if txn.st.cache.hit.is_some() {
            // a backend's hit: no server is chosen (HAProxy's applet skips the rest)
            return cold(cached::serve(front, s, txn, sess)).await;
        }
        if stats_page::asked(front, s, txn, be) {
            if let Some(next) = cold(stats_page::serve(front, s, txn, sess, be)).await {
                return next;
            }
        }
    }
    if !s.rt.proxies[be].rules.persist.is_empty() {
        let persist = ana::switching::persist(s, be, input(txn, front.req_buf(), sess));
        txn.st.persist = persist;
    }
    s.srv = ana::switching::server(s, be, input(txn, front.req_buf(), sess));
    if let Some(srv) = ana::cookie::request(s, txn, front.req_buf()) {
        s.srv = Some(srv);
    }
    if !s.rt.proxies[be].rules.stick.is_empty() {
        let mut stores = std::mem::take(&mut txn.st.stick_stores);
        let assigned = s.srv.is_some();
        if let Some(srv) = ana::sticking::request(s, be, input(txn, front.req_buf(), sess), assigned, &mut stores) {
            s.srv = Some(srv);
        }
        txn.st.stick_stores = stores;
    }
    // the server chosen for the client (`SF_DIRECT`): no cookie is inserted for it
    let direct = s.srv.filter(|&i| s.rt.proxies[be].be.servers.get(i).is_some_and(ServerRt::takes_persistent));
    ana::inner::run(s, txn, front.req_buf(), sess);
    ana::filters::request(s, txn, front.req_buf());
    let key = ana::switching::lb_key(s, be, input(txn, front.req_buf(), sess), front.req_body());
    if s.rt.proxies[be].redir_servers {
        if let Some((srv, redirect)) = redir::server(s, be, txn.req.method, key) {
            s.srv = Some(srv);
            if redirect {
                let TxnData { req, synth, .. } = &mut **txn;
                let reply = redir::reply(s, be, srv, req, front.req_buf(), synth);
                ended(txn, Cause::Local, Phase::Connect);
                return send_built(front, s, txn, sess, reply).await;
            }
        }
    }
    let sni = ana::switching::sni(s, be, input(txn, front.req_buf(), sess));

    let logging = logs(s);
    // the instants the log line and the latency histograms are computed from
    let timed = logging || s.rt.stats.histograms;
    if timed {
        txn.st.log.connect_start = Some(std::time::Instant::now());
    }
    // HAProxy sends an empty UNIQUE_ID when the frontend has no unique-id-format
    let uid = match s.rt.proxies[s.fe].rules.unique_id {
        Some(_) => txn.st.uid.rendered(),
        None => Some(&b""[..]),
    };
    let cx = crate::backend::send_proxy::ConnectCtx {
        conn: &txn.st.conn,
        unique_id: uid,
        prio: txn.st.prio,
        sni: &sni,
        force_persist: txn.st.persist == crate::action::state::Persist::Force,
        ws: forward::websocket(front, &txn.req),
        bc: txn.st.fc.back,
    };
    let ws = cx.ws;
    let server = match forward::connect(front, s.shared, be, s.srv, key, txn.req.method, cx).await {
        Ok(c) => {
            let (srv, back_tls, queued) = forward::conn_facts(&c);
            s.srv = Some(srv);
            if !txn.st.stick_stores.is_empty() {
                ana::sticking::store(s, be, srv, &mut txn.st.stick_stores);
            }
            txn.st.direct = direct == Some(srv);
            txn.st.back_tls = back_tls;
            if timed {
                let l = &mut txn.st.log;
                l.connected = Some(std::time::Instant::now());
                l.queued(queued);
            }
            c
        }
        Err(ConnectFail::NoServer) => {
            ended(txn, Cause::ServerAbort, Phase::Connect);
            return cold(error(front, s, txn, sess, 503, true)).await;
        }
        Err(ConnectFail::QueueTimeout(wait)) => {
            txn.st.log.queued(wait);
            ended(txn, Cause::ServerTimeout, Phase::Queue);
            return cold(error(front, s, txn, sess, 503, true)).await;
        }
        Err(ConnectFail::QueueFull) => {
            let l = &mut txn.st.log;
            l.queue_ms = l.connect_start.map(|t| t.elapsed().as_millis() as i64);
            ended(txn, Cause::ServerAbort, Phase::Queue);
            return cold(error(front, s, txn, sess, 503, true)).await;
        }
        Err(ConnectFail::Failed { srv, timed_out, retries }) => {
            s.srv = Some(srv);
            txn.st.log.retries = retries;
            let cause = if timed_out { Cause::ServerTimeout } else { Cause::ServerAbort };
            ended(txn, cause, Phase::Connect);
            return cold(error(front, s, txn, sess, 503, true)).await;
        }
        Err(ConnectFail::Aborted { srv }) => {
            // no server chosen yet: the stream was in the queue (`CQ`, else `CC`)
            let phase = if srv.is_some() { Phase::Connect } else { Phase::Queue };
            s.srv = srv.or(s.srv);
            ended(txn, Cause::ClientAbort, phase);
            return Next::Close;
        }
    };
    let TxnData { req, res, synth, vars_txn, vars_reqres, scratch, strict, st } = &mut **txn;
    let (tmo, l7_retry, bc) = (st.timeouts, st.l7_retry, st.fc.back);
    let mut st =
        ResState { synth, vars_txn, vars_reqres, sess_vars: &mut *sess, scratch, strict, reply: &mut reply, st };
    let stream = &*s;
    let probe = crate::backend::ResponseProbe::start(&s.rt.proxies[be], s.srv.unwrap_or(0));
    // called on the response head, then again with the body data (`body`) after each
    // `http-response wait-for-body`, to run the rules that follow it
    let on_response = |res: &mut MsgHead, buf: &[u8], body: Option<&[u8]>, facts: crate::back::ResFacts| {
        if st.st.res_resume.is_none() {
            probe.response(res.status);
            if timed {
                st.st.log.res_head = Some(std::time::Instant::now());
            }
            ana::filters::response_head(stream, st.st, res, buf, facts.until_close);
        }
        let v = ana::http_res::run(stream, res, buf, body, &mut st);
        let filter = match v {
            Verdict::Continue => ana::filters::response_filters(stream, st.st, res, buf),
            _ => crate::filter::ResFilter::default(),
        };
        if logging {
            st.st.log.status = Some(res.status);
            st.st.log.res_head_size = crate::log::stream_log::htx_head_size(res.view(buf), res.status);
            if v == Verdict::Continue {
                log_asap(stream, &mut st);
            }
        }
        (v, filter)
    };
    let x = forward::Exchange { rt: stream.shared, conn: stream.conn, fe: stream.fe, be, tmo, l7_retry, ws, bc };
    let forwarded = forward::forward(front, &x, server, req, res, on_response).await;
    // COMPAT: `http-response set-mark|set-tos` apply once the response went out,
    // HAProxy sets them when the rule runs
    if let Some(fc) = txn.st.fc.take() {
        front.set_fc(fc);
    }
    match forwarded {
        Forwarded::Done(next) => next,
        Forwarded::Failed(code) => {
            crate::stats::counters::count_srv_error(s.rt, be, s.srv, crate::stats::counters::SrvError::Response);
            let cause = match code {
                504 => Cause::ServerTimeout,
                400 | 408 => Cause::ClientAbort,
                _ => Cause::ServerAbort,
            };
            let phase = txn.st.log.current_phase();
            ended(txn, cause, phase);
            error(front, s, txn, sess, code, false).await
        }
        Forwarded::Replaced => {
            ended(txn, Cause::Proxy, Phase::Headers);
            send_built(front, s, txn, sess, reply).await
        }
        Forwarded::Closed => {
            let phase = txn.st.log.current_phase();
            ended(txn, Cause::ClientAbort, phase);
            Next::Close
        }
    }
}

/// HAProxy walks the cookies of a request its rules deny or tarpit too (for `%CC` and
/// `%tsc`): a `deny` is the one reply the rules end with a refusal (`P`).
fn cookies_of_refused(s: &Stream<'_>, txn: &mut TxnData, buf: &[u8], v: Verdict) {
    let denied = v == Verdict::Reply && txn.st.log.cause == Cause::Proxy;
    if denied || v == Verdict::Tarpit {
        // the request goes nowhere: the server it names is only logged
        txn.st.log.cookie.target = ana::cookie::request(s, txn, buf);
    }
}

/// The `http-request` rules of proxy `px` (after its `option http-buffer-request`),
/// waiting for the request body where a `wait-for-body` asks, and sending the early
/// hints they built.
async fn request_rules<'rt, F: HttpFront>(
    front: &mut F,
    s: &Stream<'rt>,
    txn: &mut TxnData,
    sess: &mut VarStore,
    px: usize,
    reply: &mut Option<Synth<'rt>>,
) -> Verdict {
    if let Some(w) = s.rt.proxies[px].buffer_request {
        if let Some(v) = wait_body(front, s, txn, sess, w, reply).await {
            return v;
        }
    }
    spoe::on_request(s, txn, front.req_buf(), sess, px).await;
    loop {
        let v = ana::http_req::run(s, txn, front.req_buf(), front.req_body(), px, sess, reply);
        for hint in txn.st.hints.drain(..) {
            front.interim(&hint).await;
        }
        txn.st.hint_open = false;
        if let Some(fc) = txn.st.fc.take() {
            front.set_fc(fc);
        }
        match v {
            Verdict::WaitBody(w) => {
                if let Some(v) = wait_body(front, s, txn, sess, w, reply).await {
                    return v;
                }
            }
            Verdict::LuaWait(w) => crate::action::lua::wait(w).await,
            Verdict::Spoe => spoe::send_group(s, txn, front.req_buf(), sess, px).await,
            Verdict::Resolve => {
                let ip = match txn.st.resolve.take() {
                    Some(a) => crate::dns::resolve_ip(s.shared, a.res, &a.name, a.prefer_v6).await,
                    None => None,
                };
                txn.st.resolved = Some(ip);
            }
            v => return v,
        }
    }
}

/// The `tcp-request content` rules of proxy `px`, waiting for more of the request body
/// while a condition may still change and the inspect delay runs (see
/// [`ana::inspect`]). A body that breaks its framing meanwhile is answered with a 400.
// the variables are held mutably (not shared) so that the future stays `Send`
async fn inspect<'rt, F: HttpFront>(
    front: &mut F,
    s: &Stream<'rt>,
    txn: &mut Txn,
    sess: &mut VarStore,
    px: usize,
    reply: &mut Option<Synth<'rt>>,
) -> Verdict {
    let rules = &s.rt.proxies[px].rules;
    if rules.tcp_req.is_empty() {
        return Verdict::Continue;
    }
    let deadline = rules.inspect_delay.map(|d| tokio::time::Instant::now() + d);
    // a bodyless request is complete with its head (HAProxy: `CF_EOI` at once)
    let mut final_data = deadline.is_none() || matches!(txn.req.body, BodyLen::None | BodyLen::Known(0));
    // the rule a Lua action waits in (the list resumes there), else the first
    let mut from = 0;
    loop {
        let left = deadline.map(|d| d.saturating_duration_since(tokio::time::Instant::now()));
        let v = ana::inspect::run(s, txn, front.req_buf(), px, &*sess, final_data, left, &mut from);
        if let Some(fc) = txn.st.fc.take() {
            front.set_fc(fc);
        }
        if let (Verdict::LuaWait(w), Some(d)) = (v, deadline) {
            // the script waits within the inspect delay; past it, the inspection is
            // final and the script runs on without waiting, as in HAProxy
            final_data |= tokio::time::timeout_at(d, crate::action::lua::wait(w)).await.is_err();
            continue;
        }
        if let (Verdict::Resolve, Some(d)) = (v, deadline) {
            // a `do-resolve` rule's answer, likewise awaited within the inspect delay
            let asked = txn.st.resolving.take();
            let answer = tokio::time::timeout_at(d, tcp::resolve(s.shared, asked)).await;
            final_data |= answer.is_err();
            txn.st.resolving = answer.ok().flatten();
            continue;
        }
        let Verdict::WaitBody(w) = v else { return v };
        match front.wait_body(w, false).await {
            // the whole body, a full buffer, or the delay expired (HAProxy: `CF_EOI`,
            // `channel_full()`, `rules_exp`)
            // COMPAT: a `timeout client` shorter than the delay also ends the wait
            // here, where HAProxy aborts the stream.
            BodyWaited::Ready | BodyWaited::Failed(408) => {
                // the body read shares the buffer with the head: less room for rewrites
                txn.req.arena_max = front.rewrite_room();
                final_data = true;
            }
            BodyWaited::Closed => {
                txn.st.log.end_by(Cause::ClientAbort, Phase::Request);
                return Verdict::Close;
            }
            BodyWaited::Failed(status) => {
                txn.st.log.end_by(Cause::Proxy, Phase::Request);
                ana::http_req::error_reply(s, txn, Some(front.req_buf()), sess, status, reply);
                return Verdict::Reply;
            }
        }
    }
}

/// Waits for the request body as `w` says; `Some` verdict when the exchange cannot go
/// on (the wait expired: a 408 is built; the client left).
async fn wait_body<'rt, F: HttpFront>(
    front: &mut F,
    s: &Stream<'rt>,
    txn: &mut TxnData,
    sess: &mut VarStore,
    w: WaitBody,
    reply: &mut Option<Synth<'rt>>,
) -> Option<Verdict> {
    let expect_continue = take_expect_continue(&mut txn.req, front.req_buf());
    let status = match front.wait_body(w, expect_continue).await {
        BodyWaited::Ready => {
            // the body waited for shares the buffer with the head: less room for rewrites
            txn.req.arena_max = front.rewrite_room();
            return None;
        }
        BodyWaited::Closed => {
            txn.st.log.end_by(Cause::ClientAbort, Phase::Request);
            return Some(Verdict::Close);
        }
        BodyWaited::Failed(status) => status,
    };
    let cause = if status == 408 { Cause::ClientTimeout } else { Cause::Proxy };
    txn.st.log.end_by(cause, Phase::Request);
    ana::http_req::error_reply(s, txn, Some(front.req_buf()), sess, status, reply);
    Some(Verdict::Reply)
}

/// Removes `Expect: 100-continue` from an HTTP/1.1 request with a body: the stream
/// answers it itself before waiting for the body, as HAProxy does
/// (`http_handle_expect_hdr()`); `true` if it was there.
fn take_expect_continue(req: &mut MsgHead, buf: &[u8]) -> bool {
    let eligible = req.version == crate::http::Version::Http11 && req.body != crate::http::BodyLen::None;
    eligible
        && req.del_header_if(buf, |n, v| n.eq_ignore_ascii_case(b"expect") && v.eq_ignore_ascii_case(b"100-continue"))
            > 0
}

fn input<'t>(txn: &'t mut TxnData, buf: &'t [u8], sess: &'t VarStore) -> Input<'t> {
    let TxnData { req, vars_txn, vars_reqres, scratch, st, .. } = txn;
    Input { req, buf, sess, txn: vars_txn, reqres: vars_reqres, scratch, st }
}

/// Ends the exchange as a request analyser decided.
async fn conclude<'rt, F: HttpFront>(
    front: &mut F,
    s: &mut Stream<'rt>,
    txn: &mut Txn,
    sess: &mut VarStore,
    v: Verdict,
    reply: Option<Synth<'rt>>,
) -> Next {
    match v {
        Verdict::Continue
        | Verdict::Reply
        | Verdict::WaitBody(_)
        | Verdict::Resolve
        | Verdict::LuaWait(_)
        | Verdict::Spoe => send_built(front, s, txn, sess, reply).await,
        Verdict::Tarpit => {
            ended(txn, Cause::Proxy, Phase::Tarpit);
            // HAProxy holds a tarpitted request for `timeout tarpit`, then answers.
            let px = s.be.unwrap_or(s.fe);
            let held = std::time::Instant::now();
            if let Some(d) = s.rt.proxies[px].rules.tarpit {
                tokio::time::sleep(d).await;
            }
            if logs(s) {
                // as HAProxy: the time held is the line's `Tw`, and its `TR` is -1
                let l = &mut txn.st.log;
                l.queue_ms = Some(held.elapsed().as_millis() as i64);
                l.head_done = None;
            }
            send_built(front, s, txn, sess, reply).await;
            Next::Close
        }
        Verdict::Close => {
            ended(txn, Cause::Proxy, Phase::Request);
            Next::Close
        }
        Verdict::SilentDrop => {
            ended(txn, Cause::Proxy, Phase::Request);
            front.silent_drop();
            Next::Close
        }
    }
}

/// Sends the response an analyser built (in `txn.synth` and `reply`), after the
/// `http-after-response` rules.
async fn send_built<'rt, F: HttpFront>(
    front: &mut F,
    s: &mut Stream<'rt>,
    txn: &mut Txn,
    sess: &mut VarStore,
    reply: Option<Synth<'rt>>,
) -> Next {
    let Some(reply) = reply else { return Next::Close };
    if let Some(svc) = txn.st.lua.stream.take() {
        // a Lua service's response goes on in pieces
        return cold(lua_svc::send(front, s, txn, sess, reply, svc)).await;
    }
    if reply.raw {
        txn.synth.status = raw_status(reply.buf).unwrap_or(0);
        txn.st.log.status = raw_status(reply.buf);
        return front.reply_raw(reply.buf).await;
    }
    match after_built(front, s, txn, sess, reply) {
        Ok((reply, _)) => front.reply(&txn.synth, &reply).await,
        Err(next) => next,
    }
}

/// Runs the `http-after-response` rules on the response an analyser built (in
/// `txn.synth` and `reply`, not raw) and fills the log's fields of it. Gives the
/// response to send, and whether it is another one (a failed rewrite's error, whose
/// head replaced `txn.synth`); `Err`: the rules closed the stream.
fn after_built<'rt, F: HttpFront>(
    front: &mut F,
    s: &mut Stream<'rt>,
    txn: &mut Txn,
    sess: &mut VarStore,
    mut reply: Synth<'rt>,
) -> Result<(Synth<'rt>, bool), Next> {
    let TxnData { synth, vars_txn, vars_reqres, scratch, strict, st: stream_st, .. } = &mut **txn;
    let mut again: Option<Synth<'rt>> = None;
    let mut scratch_head = MsgHead::default();
    let mut st = ResState {
        synth: &mut scratch_head,
        vars_txn,
        vars_reqres,
        sess_vars: &mut *sess,
        scratch,
        strict,
        reply: &mut again,
        st: &mut *stream_st,
    };
    let buf = reply.buf;
    let mut replaced = false;
    match ana::http_res::after(s, synth, buf, &mut st) {
        Verdict::Continue | Verdict::WaitBody(_) | Verdict::Resolve | Verdict::LuaWait(_) | Verdict::Spoe => {}
        Verdict::Close => return Err(Next::Close),
        Verdict::SilentDrop => {
            front.silent_drop();
            return Err(Next::Close);
        }
        // an after-response rule cannot build a reply; a failed rewrite did
        Verdict::Reply | Verdict::Tarpit => {
            if let Some(r) = again {
                std::mem::swap(synth, &mut scratch_head);
                reply = r;
                replaced = true;
            }
        }
    }
    let l = &mut stream_st.log;
    l.status = Some(synth.status);
    if logs(s) {
        l.res_head_size = crate::log::stream_log::htx_head_size(synth.view(reply.buf), synth.status);
    }
    // a reply no rule explained: an error refuses (`P`), anything else answers (`L`)
    let cause = if synth.status >= 400 { Cause::Proxy } else { Cause::Local };
    l.end_by(cause, l.current_phase());
    Ok((reply, replaced))
}

/// Answers with the stream's answer for `code` (502, 503, 504 ...): an `http-error`
/// reply or `errorfile` of the backend first, then of the frontend, then HAProxy's
/// page. `with_req`: the request head is still in the front's buffer (not yet sent),
/// for `http-error` formats that read it.
async fn error<F: HttpFront>(
    front: &mut F,
    s: &mut Stream<'_>,
    txn: &mut Txn,
    sess: &mut VarStore,
    code: u16,
    with_req: bool,
) -> Next {
    if crate::action::reply::http_error(s.pages(s.be.unwrap_or(s.fe)), code).is_some() {
        let mut reply = None;
        let buf = with_req.then(|| front.req_buf());
        ana::http_req::error_reply(s, txn, buf, sess, code, &mut reply);
        return send_built(front, s, txn, sess, reply).await;
    }
    let pages = match s.be.map(|be| &s.rt.proxies[be]) {
        Some(be) if be.errors.is_custom(code) => &be.errors,
        _ => &s.rt.proxies[s.fe].errors,
    };
    match pages.stream(code) {
        StreamError::Page(tpl) => {
            let reply = tpl.instantiate(&mut txn.synth);
            send_built(front, s, txn, sess, Some(reply)).await
        }
        StreamError::Raw(bytes) => {
            txn.synth.status = raw_status(bytes).unwrap_or(0);
            txn.st.log.status = raw_status(bytes);
            front.reply_raw(bytes).await
        }
        StreamError::Nothing => front.reply_raw(&[]).await,
    }
}

/// A stream in HTTP whose backend is in `mode tcp`: as HAProxy's failed backend switch,
/// it ends without a response, the connection closed, logged with status 500 and
/// termination state `IR`.
fn tcp_backend(txn: &mut Txn) -> Next {
    txn.st.log.status = Some(500);
    ended(txn, Cause::Internal, Phase::Request);
    Next::Close
}
