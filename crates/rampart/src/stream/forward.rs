//! The forwarding step of an HTTP stream: get a server connection (the private one of
//! `http-reuse never`, an idle one when `http-reuse` allows, or a new one, after the
//! queue), send the request through the server side (`crate::back`), stream the request
//! body while the response comes back, run the response analysers on its head, write it
//! to the client through the front, then give the connection back to its pool. Retries
//! live here: a pooled connection that fails before any response byte is replaced
//! transparently, `retry-on` conditions and `option redispatch` send the request again.
//! HAProxy counterpart: back_handle_st_*() of backend.c and stream.c, the L7 retries of
//! http_ana.c (`do_l7_retry()`), `http_wait_for_response()`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::http::Method;
use crate::io::cold::cold;
use rampart_cfg::model::{HttpConnMode, HttpReuse, RetryOnResponse};

use super::side::{ConnectFail, Forwarded, HttpFront, Progress, ResSend, ResSink};
use super::{Next, Verdict};
use crate::action::state::TimeoutOverride;
use crate::back::h2::H2Attach;
use crate::back::{BackConn, BackRecv, BodyError, HeadError, HeadWait, HttpBack, Received, ReqSend, ResFacts};
use crate::backend::send_proxy::ConnectCtx;
use crate::backend::{self, Connected, Reuse};
use crate::filter::held::{HeldBody, WaitFailed};
use crate::filter::{FilteredRx, ResFilter};
use crate::http::MsgHead;
use crate::proxy::Runtime;

/// Gets a connection to a server of backend `be_idx`: `srv` when a rule chose it (and
/// it is usable), else the balancer's pick (with `key`, the hash key of a hashing
/// backend); the client connection's private one (`http-reuse never`) or an idle one
/// when `http-reuse` allows (a stream of a shared HTTP/2 connection first). `method` is
/// the request's; `cx` makes the PROXY header of a new connection
/// (`server ... send-proxy*`).
pub(super) async fn connect<F: HttpFront>(
    front: &mut F,
    rt: &Arc<Runtime>,
    be_idx: usize,
    srv: Option<usize>,
    key: Option<u32>,
    method: Method,
    cx: ConnectCtx<'_>,
) -> Result<Connected<H2Attach>, ConnectFail> {
    let be = &rt.proxies[be_idx];
    if be.http_reuse == HttpReuse::Never {
        // as HAProxy with `option prefer-last-server`: only for a stream that would open
        // the same connection (the same destination after `set-dst`, SNI, PROXY header),
        // and while the balancer could pick its server; else it is closed.
        // COMPAT: rampart does so even without the option (HAProxy balances each request
        // then, keeping one private connection per server).
        // `max-keep-alive-queue`: not while that many streams wait for the server (the
        // connection still holds its server slot here, so the server has room for this
        // stream exactly when its queue is empty, HAProxy's other condition).
        let reusable = |sc: &crate::backend::ServerConn| {
            let server = &be.be.servers[sc.srv];
            server.state.is_usable()
                && sc.key == backend::conn_key(server, cx)
                && be.max_ka_queue.is_none_or(|max| server.queue.is_empty() || server.queue.len() < max)
        };
        if let Some(sc) = front.take_private().filter(reusable) {
            crate::stats::counters::count_server_conn(rt, be_idx, sc.srv, true);
            return Ok(Connected::Own(sc));
        }
    }
    let meta = front.req_meta();
    let reuse = reuse_policy(be.http_reuse, meta.sent_before, method, meta.body_complete);
    let client_gone = front.client_gone(backend::ABORT_CHECK_EVERY);
    let share = &mut crate::back::h2::attach;
    match backend::connect_unless_aborted(client_gone, rt, be_idx, reuse, srv, key, cx.prio, cx, share).await {
        Ok(Ok(Connected::Shared(a))) => Ok(Connected::Shared(a)),
        Ok(Ok(Connected::Own(sc))) if sc.from_pool || backend::send_proxy::send(rt, be_idx, &sc).await => {
            Ok(Connected::Own(sc))
        }
        Ok(Ok(_)) => Err(ConnectFail::NoServer),
        Ok(Err(backend::ConnectError::Failed { srv, timed_out, retries })) => {
            Err(ConnectFail::Failed { srv, timed_out, retries })
        }
        Ok(Err(backend::ConnectError::QueueTimeout(w))) => Err(ConnectFail::QueueTimeout(w)),
        Ok(Err(backend::ConnectError::QueueFull)) => Err(ConnectFail::QueueFull),
        Ok(Err(_)) => Err(ConnectFail::NoServer),
        // `option abortonclose`: the client left before a server took the request.
        Err(backend::Aborted { srv }) => Err(ConnectFail::Aborted { srv }),
    }
}

/// What the stream logs of the connection it got: the server, the TLS handshake's
/// result, the wait in the queue.
pub(super) fn conn_facts(
    c: &Connected<H2Attach>,
) -> (usize, Option<Arc<crate::tls::TlsInfo>>, crate::backend::QueueWait) {
    match c {
        Connected::Own(sc) => (sc.srv, sc.stream.tls().map(|t| t.info.clone()), sc.queued),
        Connected::Shared(a) => (a.srv, a.tls(), a.queued),
    }
}

/// Which idle connections this request may use (`http-reuse`).
///
/// COMPAT: with `safe` (the default), HAProxy sends the first request of a client
/// connection on a new server connection, so that a server closing an idle connection
/// cannot make that request fail. rampart gives the same guarantee more cheaply: a
/// first request that can be replayed (idempotent method, whole request already in
/// hand) may use an idle connection, and if that connection fails before any response
/// byte the request is sent again on a new connection, invisibly to the client.
fn reuse_policy(mode: HttpReuse, sent_before: bool, method: Method, replayable: bool) -> Reuse {
    match mode {
        HttpReuse::Never => Reuse::No,
        HttpReuse::Always => Reuse::MinUses(0),
        _ if sent_before => Reuse::MinUses(0),
        HttpReuse::Aggressive => Reuse::MinUses(2),
        HttpReuse::Safe if method.is_idempotent() && replayable => Reuse::MinUses(0),
        HttpReuse::Safe => Reuse::No,
    }
}

/// The exchange being forwarded: its stream, backend and what rules decided.
pub(super) struct Exchange<'s> {
    pub rt: &'s Arc<Runtime>,
    /// The client connection (its addresses, for a retry's PROXY header).
    pub conn: &'s crate::sample::ctx::ConnInfo,
    pub fe: usize,
    pub be: usize,
    /// Timeouts rules set for this stream (`set-timeout`).
    pub tmo: TimeoutOverride,
    /// The backend's `retry-on` response conditions apply (no `disable-l7-retry`).
    pub l7_retry: bool,
    /// A WebSocket stream ([`websocket`]): a retry connects as the first attempt did.
    pub ws: bool,
    /// `set-bc-mark`, `set-bc-tos`: a retry's connection gets them too.
    pub bc: crate::action::sockopt::BcOpts,
}

/// Whether the request `req` starts a WebSocket stream, whose protocol towards the
/// server the server's `ws` chooses: an upgrade (HTTP/1 `Connection: upgrade`, an
/// HTTP/2 client's extended CONNECT) to `websocket`. Looks at the headers only for an
/// upgrade.
/// COMPAT: HAProxy 2.6 also counts an HTTP/1 `Upgrade: websocket` without
/// `Connection: upgrade`, and any extended CONNECT whatever its `:protocol`.
#[inline]
pub(super) fn websocket<F: HttpFront>(front: &F, req: &MsgHead) -> bool {
    front.req_meta().upgrade && crate::http::websocket::is_websocket(req.view(front.req_buf()))
}

/// Why the response could not be forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RespError {
    /// Nothing was sent to the client yet: answer with this error page (400, 502, 504).
    Status(u16),
    /// The server closed or reset before sending any byte (a retry may be possible).
    ServerClosedEarly,
    /// The client went away or stopped reading.
    ClientGone,
    /// Failed after the head was sent: nothing to do but close.
    Aborted,
    /// The response analysers answered instead of the server (their response is in
    /// the stream's head).
    Replaced,
    /// The response analysers closed the stream.
    Closed,
    /// The response analysers dropped the client silently.
    SilentDrop,
    /// A `retry-on` condition met before anything reached the client: send the
    /// request again.
    Retry,
}

/// How a forwarded response ended.
#[derive(Debug)]
struct RespEnd<H> {
    keep_client: bool,
    /// The request body reached the server whole (else neither connection is reused).
    upload_done: bool,
    /// The whole response, kept by the front for [`ResSink::flush`].
    held: Option<H>,
    /// The connection became a tunnel.
    tunnel: bool,
}

/// What forwarding a response gives, `K` being the front's response half.
type RespResult<K> = Result<RespEnd<<K as ResSink>::Held>, RespError>;

/// What the response step needs to know of the request.
#[derive(Debug, Clone, Copy)]
struct ReqFacts<'a> {
    method: Method,
    upgrade: bool,
    keep_client: bool,
    /// The `retry-on` conditions, when the request may still be sent again.
    retry_on: Option<&'a RetryOnResponse>,
}

/// Sends the request (`req`, its slices into the front's buffer) on `sc`, streams its
/// body, reads the response head into `res` and calls `on_response` with it (and the
/// buffer its slices point into) before it is written to the client: the response
/// analysers run there and may rewrite it or replace it. Returns how the exchange ended.
pub(super) async fn forward<F, R>(
    front: &mut F,
    x: &Exchange<'_>,
    conn: Connected<H2Attach>,
    req: &MsgHead,
    res: &mut MsgHead,
    mut on_response: R,
) -> Forwarded
where
    F: HttpFront,
    R: FnMut(&mut MsgHead, &[u8], Option<&[u8]>, ResFacts) -> (Verdict, ResFilter) + Send,
{
    let rt = x.rt;
    let (fe, be) = (&rt.proxies[x.fe], &rt.proxies[x.be]);
    let meta = front.req_meta();
    let keep_server = be.http_conn_mode == HttpConnMode::KeepAlive && fe.http_conn_mode == HttpConnMode::KeepAlive;
    let method = req.method;
    let t_server = x.tmo.server(be.timeouts.server);

    // The request head and the body bytes already here, in one write.
    let mut back = BackConn::new(conn, rt, x.be, x.conn);
    let pretend_keepalive = be.pretend_keepalive;
    let how = ReqSend { body: meta.body, keep_alive: keep_server, pretend_keepalive, upgrade: meta.upgrade };
    let sent = back.send_request(req.view(front.req_buf()), how, front.req_body_raw(), t_server).await;
    front.req_sent();
    let replayable = meta.body_complete;
    trace_server(front, &back);

    // `retry-on` response conditions: only for a request whole in hand
    let retry_on = be.retry_on_response.as_deref().filter(|_| replayable && x.l7_retry);
    // COMPAT: without a `retry-on` line, HAProxy answers 502 when a server closes
    // or resets before any response byte. With `option redispatch`, rampart sends
    // an idempotent request (RFC 9110 §9.2.2) whole in hand to another server
    // instead, as `retry-on empty-response` would (counted in `wretr`/`wredis`):
    // a server stopped under load then costs the client nothing.
    let replay_on_close = be.replay_on_close && replayable && x.l7_retry && method.is_idempotent();
    let mut retries_left = if retry_on.is_some() || replay_on_close { be.l7_retries } else { 0 };
    if sent.is_err() {
        if let Err(status) =
            cold(resend_after_failed_send(x, &mut back, replayable, replay_on_close, &mut retries_left)).await
        {
            return Forwarded::Failed(status);
        }
        trace_server(front, &back);
    }

    let mut progress = Progress::default();
    if fe.log.as_ref().is_some_and(|l| l.back_src) {
        progress.back_src = back.sock().and_then(|s| s.local_addr().ok());
    }
    let mut info = ReqFacts {
        method,
        upgrade: meta.upgrade,
        keep_client: meta.keep_alive,
        retry_on: retry_on.filter(|_| retries_left > 0),
    };
    let sink = front.sink();
    let mut result = if meta.body_complete {
        respond(&sink, x, &mut back, res, info, &progress, &mut on_response).await
    } else {
        upload_and_respond(front, &sink, x, &mut back, res, info, &progress, &mut on_response).await
    };
    let pool_failed = matches!(result, Err(RespError::ServerClosedEarly)) && back.reused();
    // PERF: the retries are `cold` (made only when a retry happens), not part of every
    // exchange's state and stack frame
    if pool_failed && cold(retry_on_new_conn(x, &mut back, replayable)).await {
        trace_server(front, &back);
        result = cold(respond(&sink, x, &mut back, res, info, &progress, &mut on_response)).await;
    }
    while must_retry(&result, replay_on_close && retries_left > 0, &progress) {
        retries_left -= 1;
        info.retry_on = retry_on.filter(|_| retries_left > 0);
        if !cold(send_again(x, &mut back, retries_left == 0 || replay_on_close)).await {
            front.account(&progress);
            return Forwarded::Failed(503);
        }
        trace_server(front, &back);
        result = cold(respond(&sink, x, &mut back, res, info, &progress, &mut on_response)).await;
    }
    let result = match result {
        Ok(end) if end.tunnel => {
            let mut be_t = be.timeouts;
            be_t.server = x.tmo.server(be_t.server);
            be_t.tunnel = x.tmo.tunnel(be_t.tunnel);
            let (tx, mut rx) = back.split();
            cold(front.tunnel(&tx, &mut rx, be_t)).await;
            Ok(Next::Close)
        }
        Ok(mut end) => {
            let held = end.held.take();
            let next = finish(front, x, back, &end, keep_server);
            match held {
                Some(held) => sink.flush(held, &progress).await.map(|()| next).map_err(|()| RespError::ClientGone),
                None => Ok(next),
            }
        }
        Err(e) => Err(e),
    };
    front.account(&progress);
    outcome(front, result)
}

/// What the stream does next, from how forwarding ended.
fn outcome<F: HttpFront>(front: &mut F, result: Result<Next, RespError>) -> Forwarded {
    match result {
        Ok(next) => Forwarded::Done(next),
        Err(RespError::ClientGone | RespError::Aborted | RespError::Closed) => Forwarded::Closed,
        Err(RespError::Replaced) => Forwarded::Replaced,
        Err(RespError::SilentDrop) => {
            front.silent_drop();
            Forwarded::Closed
        }
        Err(RespError::Status(code)) => Forwarded::Failed(code),
        Err(RespError::ServerClosedEarly | RespError::Retry) => Forwarded::Failed(502),
    }
}

/// The request could not be written on its connection: a pooled one that turned out
/// dead is replaced once, transparently (or, failing that, the request goes to another
/// server, as after a close, using one of `retries_left`). `Err`: the status to answer
/// with (502: nothing to retry with, 503: the retry found no server).
async fn resend_after_failed_send(
    x: &Exchange<'_>,
    back: &mut BackConn,
    replayable: bool,
    replay_on_close: bool,
    retries_left: &mut u32,
) -> Result<(), u16> {
    if retry_on_new_conn(x, back, replayable).await {
        return Ok(());
    }
    if !(replay_on_close && *retries_left > 0) {
        return Err(502);
    }
    *retries_left -= 1;
    if send_again(x, back, true).await {
        Ok(())
    } else {
        Err(503)
    }
}

/// After a complete response: park or keep the server connection, and keep the client
/// connection if both sides agree.
fn finish<F: HttpFront, H>(
    front: &mut F,
    x: &Exchange<'_>,
    back: BackConn,
    end: &RespEnd<H>,
    keep_server: bool,
) -> Next {
    let Some((sc, reusable)) = back.finish() else {
        return next_for_client(end);
    };
    if keep_server && end.upload_done && reusable {
        if x.rt.proxies[x.be].http_reuse == HttpReuse::Never {
            front.keep_private(sc);
        } else {
            sc.park(x.rt, x.be);
        }
    }
    next_for_client(end)
}

/// Whether the client connection is kept after a complete response.
fn next_for_client<H>(end: &RespEnd<H>) -> Next {
    if end.keep_client && end.upload_done {
        Next::KeepAlive
    } else {
        Next::Close
    }
}

/// The request body still streams in while the response may already come back (a
/// server may answer before reading everything). If the response ends first, the
/// connections cannot be reused: the exchange ends with a close.
///
/// As in HAProxy, `timeout server` bounds this phase (restarted by every body byte the
/// server receives), not `timeout client`: a client pausing in its upload gets a 504
/// when the server timeout strikes. An invalid chunk gets a 400 if nothing of the
/// response was sent yet.
#[allow(clippy::too_many_arguments)]
async fn upload_and_respond<F, R>(
    front: &mut F,
    sink: &F::Sink,
    x: &Exchange<'_>,
    back: &mut BackConn,
    res: &mut MsgHead,
    info: ReqFacts<'_>,
    progress: &Progress,
    on_response: &mut R,
) -> RespResult<F::Sink>
where
    F: HttpFront,
    R: FnMut(&mut MsgHead, &[u8], Option<&[u8]>, ResFacts) -> (Verdict, ResFilter) + Send,
{
    let rt = x.rt;
    let t_server = x.tmo.server(rt.proxies[x.be].timeouts.server);
    let t_client = if t_server.is_some() { None } else { rt.proxies[x.fe].timeouts.client };
    let (tx, mut rx) = back.split();
    let up = front.upload(&tx, progress, t_client, t_server);
    let down = response(sink, x, &mut rx, res, info, progress, on_response);
    tokio::pin!(up, down);
    let mut up_done = false;
    loop {
        tokio::select! {
            r = &mut down => {
                let mut end = r?;
                end.upload_done = up_done;
                return Ok(end);
            }
            r = &mut up, if !up_done => {
                up_done = true;
                match r {
                    Ok(()) => {}
                    Err(BodyError::Framing) if !progress.answered() => return Err(RespError::Status(400)),
                    Err(_) => return Err(RespError::Aborted),
                }
            }
        }
    }
}

/// [`response`] for a request whose body is whole in hand (sent with its head).
async fn respond<K: ResSink, R>(
    sink: &K,
    x: &Exchange<'_>,
    back: &mut BackConn,
    res: &mut MsgHead,
    info: ReqFacts<'_>,
    progress: &Progress,
    on_response: &mut R,
) -> RespResult<K>
where
    R: FnMut(&mut MsgHead, &[u8], Option<&[u8]>, ResFacts) -> (Verdict, ResFilter) + Send,
{
    let (_, mut rx) = back.split();
    response(sink, x, &mut rx, res, info, progress, on_response).await
}

/// Reads the response from the server side `rx` (forwarding interim responses to the
/// client as they are: no rule runs on them), runs `on_response` on its final head,
/// and writes it to the client through `sink` with the body bytes that came with it in
/// one write, then the rest of the body. A response whose every byte came with its
/// head is held by the sink for the caller to flush after freeing the connection.
/// When the rules wait for the body (`http-response wait-for-body`), the head and the
/// body bytes are held (`HeldBody`) and `on_response` is called again with the body.
async fn response<K: ResSink, R>(
    sink: &K,
    x: &Exchange<'_>,
    rx: &mut crate::back::BackRx<'_>,
    res: &mut MsgHead,
    info: ReqFacts<'_>,
    progress: &Progress,
    on_response: &mut R,
) -> RespResult<K>
where
    R: FnMut(&mut MsgHead, &[u8], Option<&[u8]>, ResFacts) -> (Verdict, ResFilter),
{
    let rt = x.rt;
    let be = &rt.proxies[x.be];
    let t_server = x.tmo.server(be.timeouts.server);
    let trace = sink.trace().map(|t| (t, be.name.as_str()));
    let wait = HeadWait { timeout: t_server, upload: &progress.upload, trace };
    let gone = sink.client_gone();
    // `option abortonclose`: a client that closes while the response head is awaited
    // aborts the stream, logged as a 400 in the headers phase (`CH`), as HAProxy
    let closed = async {
        match be.abortonclose {
            true => sink.client_closed(backend::ABORT_CHECK_EVERY).await,
            false => std::future::pending().await,
        }
    };
    tokio::pin!(gone, closed);
    let head = loop {
        let got = tokio::select! {
            r = rx.recv_head(res, wait) => r,
            () = &mut gone => return Err(RespError::ClientGone),
            () = &mut closed => return Err(RespError::Status(400)),
        };
        match got {
            Ok(Received::Interim) => {
                progress.answered.store(true, Ordering::Relaxed);
                sink.interim(res.view(rx.res_buf()), progress).await.map_err(|()| RespError::ClientGone)?;
            }
            Ok(Received::Final) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    if let Some(on) = info.retry_on {
        // once an interim response went out, the client has seen this attempt
        if !progress.answered() && wants_retry(on, &head, res.status) {
            return Err(RespError::Retry);
        }
    }
    head.map_err(|e| match e {
        HeadError::ClosedEarly => RespError::ServerClosedEarly,
        HeadError::Status(code) => RespError::Status(code),
    })?;

    let (mut verdict, mut filter) = on_response(res, rx.res_buf(), None, rx.res_facts());
    // `http-response wait-for-body`: only a stream whose rules ask holds the body
    let mut held: Option<HeldBody> = None;
    // whether the rules were given the body (empty when there is none to wait for)
    let mut body_given = false;
    loop {
        let facts = rx.res_facts();
        match verdict {
            Verdict::WaitBody(_) if facts.body == crate::http::BodyLen::None || opens_tunnel(res.status, info) => {
                // as HAProxy, nothing to wait for
                body_given = true;
                (verdict, filter) = on_response(res, rx.res_buf(), Some(&[]), facts);
            }
            Verdict::WaitBody(w) => {
                let h = match &mut held {
                    Some(h) => h,
                    None => held.insert(HeldBody::start(rx, facts, rt.max_head).map_err(wait_failed)?),
                };
                h.wait(rx, w, t_server).await.map_err(wait_failed)?;
                body_given = true;
                (verdict, filter) = on_response(res, h.head_buf(), Some(h.data()), facts);
            }
            // a Lua action waits (a sleep, a socket): the response waits with it, then
            // the rules resume the action where it stopped
            Verdict::LuaWait(w) => {
                crate::action::lua::wait(w).await;
                (verdict, filter) = match &held {
                    Some(h) => on_response(res, h.head_buf(), Some(h.data()), facts),
                    None => on_response(res, rx.res_buf(), body_given.then_some(&[][..]), facts),
                };
            }
            _ => break,
        }
    }
    match verdict {
        Verdict::Continue | Verdict::WaitBody(_) | Verdict::Resolve | Verdict::LuaWait(_) | Verdict::Spoe => {}
        Verdict::Reply | Verdict::Tarpit => return Err(RespError::Replaced),
        Verdict::Close => return Err(RespError::Closed),
        Verdict::SilentDrop => return Err(RespError::SilentDrop),
    }

    let status = res.status;
    let tunnel = match (status, info.method) {
        (101, _) if info.upgrade => Some(true),
        // A 2xx to CONNECT announces nothing: the connection is a tunnel from now on.
        (200..=299, Method::Connect) => Some(false),
        _ => None,
    };
    let facts = rx.res_facts();
    // A soft stop that began during the exchange closes the connection after it (as
    // `close-spread-time` says).
    let keep_client = info.keep_client && !facts.until_close && tunnel.is_none() && !rt.global.stop_closes_busy();
    let body = match &held {
        // the body started when the wait began
        Some(_) => 0..0,
        None => rx.start_body(tunnel.is_some()).map_err(|_| RespError::Status(502))?,
    };
    if filter.is_active() && tunnel.is_none() {
        let end = RespEnd { keep_client, upload_done: true, held: None, tunnel: false };
        let first = FirstBytes { range: body, held: held.as_ref() };
        return filtered(sink, rx, res, filter, first, end, progress, t_server).await;
    }
    let whole = tunnel.is_none() && rx.body_done();
    progress.answered.store(true, Ordering::Relaxed);
    let how = ResSend { facts, keep_client, tunnel, whole };
    let (head_buf, first) = match &held {
        Some(h) => (h.head_buf(), h.raw_body()),
        None => (rx.res_buf(), &rx.res_buf()[body]),
    };
    let held = sink.send_head(res.view(head_buf), how, first, progress).await.map_err(|()| RespError::ClientGone)?;
    let end = RespEnd { keep_client, upload_done: true, held, tunnel: tunnel.is_some() };
    if whole || tunnel.is_some() {
        return Ok(end);
    }
    match sink.send_body_from(rx, progress, t_server).await {
        Ok(()) => Ok(end),
        Err(BodyError::To(_)) => Err(RespError::ClientGone),
        Err(BodyError::From(_) | BodyError::Framing) => Err(RespError::Aborted),
    }
}

/// Whether a response of status `status` to the request makes the connection a tunnel
/// (`101` to an upgrade, a 2xx to `CONNECT`).
fn opens_tunnel(status: u16, info: ReqFacts<'_>) -> bool {
    matches!((status, info.method), (101, _) | (200..=299, Method::Connect))
}

/// As HAProxy's `http_wait_for_msg_body()` on a response: a wait past its time (or the
/// server's timeout) is answered with a 504; a server that fails meanwhile, a 502.
fn wait_failed(e: WaitFailed) -> RespError {
    match e {
        WaitFailed::Timeout => RespError::Status(504),
        WaitFailed::Server => RespError::Status(502),
    }
}

/// Where the body bytes that go with the head are: in the server side's buffer, or
/// held by a `wait-for-body`.
struct FirstBytes<'h> {
    range: std::ops::Range<usize>,
    held: Option<&'h HeldBody>,
}

/// [`response`] for a response whose body goes through filters (compression, the
/// cache's store): the body bytes that came with the head are filtered first, what
/// they give goes with the head, then the rest as it arrives.
#[allow(clippy::too_many_arguments)]
async fn filtered<K: ResSink>(
    sink: &K,
    rx: &mut crate::back::BackRx<'_>,
    res: &MsgHead,
    filter: ResFilter,
    body: FirstBytes<'_>,
    mut end: RespEnd<K::Held>,
    progress: &Progress,
    t_server: Option<std::time::Duration>,
) -> RespResult<K> {
    let whole = rx.body_done();
    let facts = filter.facts(rx.res_facts());
    let server_facts = rx.res_facts();
    let mut frx = FilteredRx::new(rx, filter, server_facts);
    let first = match body.held {
        Some(h) => frx.start_with(h.raw_body(), whole),
        None => frx.start(body.range, whole),
    };
    let first = first.map_err(|_| RespError::Status(502))?;
    progress.answered.store(true, Ordering::Relaxed);
    let how = ResSend { facts, keep_client: end.keep_client, tunnel: None, whole };
    let head_buf = match body.held {
        Some(h) => h.head_buf(),
        None => frx.res_buf(),
    };
    end.held = sink.send_head(res.view(head_buf), how, &first, progress).await.map_err(|()| RespError::ClientGone)?;
    if whole {
        return Ok(end);
    }
    match sink.send_body_from(&mut frx, progress, t_server).await {
        Ok(()) => Ok(end),
        Err(BodyError::To(_)) => Err(RespError::ClientGone),
        Err(BodyError::From(_) | BodyError::Framing) => Err(RespError::Aborted),
    }
}

/// Whether the outcome of reading a response head (`head`, with `status` when it was
/// read) meets a `retry-on` condition.
fn wants_retry(on: &RetryOnResponse, head: &Result<(), HeadError>, status: u16) -> bool {
    match head {
        Ok(()) => on.statuses.contains(&status),
        Err(HeadError::ClosedEarly) => on.empty_response,
        Err(HeadError::Status(504)) => on.response_timeout,
        Err(HeadError::Status(502)) => on.junk_response,
        Err(_) => false,
    }
}

/// Whether the response `result` asks for the request to be sent again: a `retry-on`
/// condition was met, or the server closed before any response byte and `on_close`
/// (the request may be replayed on another server) while nothing reached the client.
fn must_retry<H>(result: &Result<RespEnd<H>, RespError>, on_close: bool, progress: &Progress) -> bool {
    match result {
        Err(RespError::Retry) => true,
        Err(RespError::ServerClosedEarly) => on_close && !progress.answered(),
        _ => false,
    }
}

/// `-d`: the stream is carried by `back`'s socket from now on (none for HTTP/2).
fn trace_server<F: HttpFront>(front: &F, back: &BackConn) {
    if let (Some(t), Some(sock)) = (front.trace(), back.sock()) {
        t.set_server(std::os::fd::AsRawFd::as_raw_fd(sock));
    }
}

/// A connection taken from the pool failed before any response byte: open a new one
/// to the same server and send the request again, if the request can be replayed.
async fn retry_on_new_conn(x: &Exchange<'_>, back: &mut BackConn, replayable: bool) -> bool {
    if !back.reused() || !replayable {
        return false;
    }
    let rt = x.rt;
    let srv = back.srv();
    // COMPAT: this rare retry's header carries no UNIQUE_ID TLV
    let sni = backend::sni_again(&rt.proxies[x.be].be.servers[srv], back.sni());
    let cx = ConnectCtx { sni: &sni, ws: x.ws, bc: x.bc, ..ConnectCtx::new(x.conn) };
    let Ok(new) = backend::reconnect(rt, x.be, srv, cx).await else { return false };
    if !backend::send_proxy::send(rt, x.be, &new).await {
        return false;
    }
    back.resend(new, rt.proxies[x.be].timeouts.server).await.is_ok()
}

/// A `retry-on` condition was met: closes the connection (freeing its slot) and sends
/// the whole request on a new connection to the same server, or to another one on the
/// last retry with `option redispatch` (HAProxy's layer-7 retry). Counts the retry
/// (`wretr`, `wredis`).
async fn send_again(x: &Exchange<'_>, back: &mut BackConn, last: bool) -> bool {
    let rt = x.rt;
    let be = &rt.proxies[x.be];
    let (prev, prev_sni) = (back.srv(), back.sni().map(Box::<str>::from));
    // the old connection goes first: its slot may be what the new one waits for
    back.release();
    let target = match be.redispatch && last {
        true => backend::pick_server(be, Some(prev), None).unwrap_or(prev),
        false => prev,
    };
    let retry = crate::stats::counters::SrvError::Retry { redispatch: target != prev };
    crate::stats::counters::count_srv_error(rt, x.be, Some(prev), retry);
    // the SNI the previous connection announced, again
    let sni = backend::sni_again(&be.be.servers[target], prev_sni.as_deref());
    let cx = ConnectCtx { sni: &sni, ws: x.ws, bc: x.bc, ..ConnectCtx::new(x.conn) };
    let prio = backend::Priority::default();
    let Ok(new) = backend::connect(rt, x.be, Reuse::No, Some(target), None, prio, cx).await else { return false };
    // COMPAT: as for the pool's retry, the header carries no UNIQUE_ID TLV
    if !backend::send_proxy::send(rt, x.be, &new).await {
        return false;
    }
    if be.be.send_name.is_some() && target != prev {
        back.rename_server(&be.be.servers[target].name);
    }
    back.resend(new, be.timeouts.server).await.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_reuse_lets_only_replayable_first_requests_take_idle_connections() {
        assert_eq!(reuse_policy(HttpReuse::Safe, false, Method::Get, true), Reuse::MinUses(0));
        assert_eq!(reuse_policy(HttpReuse::Safe, false, Method::Post, true), Reuse::No);
        assert_eq!(reuse_policy(HttpReuse::Safe, false, Method::Get, false), Reuse::No);
        assert_eq!(reuse_policy(HttpReuse::Safe, true, Method::Post, false), Reuse::MinUses(0));
        assert_eq!(reuse_policy(HttpReuse::Never, true, Method::Get, true), Reuse::No);
        assert_eq!(reuse_policy(HttpReuse::Aggressive, false, Method::Post, false), Reuse::MinUses(2));
        assert_eq!(reuse_policy(HttpReuse::Always, false, Method::Post, false), Reuse::MinUses(0));
    }

    #[test]
    fn a_close_before_any_byte_is_retried_only_when_allowed_and_unseen() {
        let progress = Progress::default();
        let closed: Result<RespEnd<()>, _> = Err(RespError::ServerClosedEarly);
        assert!(must_retry(&closed, true, &progress));
        assert!(!must_retry(&closed, false, &progress));
        assert!(must_retry::<()>(&Err(RespError::Retry), false, &progress));
        assert!(!must_retry::<()>(&Err(RespError::Status(502)), true, &progress));
        progress.answered.store(true, Ordering::Relaxed);
        assert!(!must_retry(&closed, true, &progress));
    }

    #[test]
    fn retry_conditions_match_the_failure_they_name() {
        let on = RetryOnResponse { empty_response: true, statuses: vec![503], ..Default::default() };
        assert!(wants_retry(&on, &Ok(()), 503));
        assert!(!wants_retry(&on, &Ok(()), 500));
        assert!(wants_retry(&on, &Err(HeadError::ClosedEarly), 0));
        assert!(!wants_retry(&on, &Err(HeadError::Status(504)), 0));
        assert!(!wants_retry(&on, &Err(HeadError::Status(502)), 0));
        let on = RetryOnResponse { junk_response: true, response_timeout: true, ..Default::default() };
        assert!(wants_retry(&on, &Err(HeadError::Status(504)), 0));
        assert!(wants_retry(&on, &Err(HeadError::Status(502)), 0));
        assert!(!wants_retry(&on, &Err(HeadError::ClosedEarly), 0));
    }
}
