//! HTTP/1: the client side waits for a request (holding no buffer while idle), reads
//! and parses its head under `timeout http-request`, answers parse errors with
//! HAProxy's 400 and timeouts with 408, hands each request to the stream as the
//! protocol-neutral message, and loops for keep-alive and pipelined requests (answered
//! in order, one at a time). The server side (client role) is driven from the same
//! exchange: HTTP/1 on both sides is one codec in two roles.
//! HAProxy counterpart: mux_h1.c.
//!
//! - `front`: one exchange as the stream sees it ([`front::H1Front`])
//! - `park`: long-idle keep-alive connections leave the event loop

use std::time::Duration;

pub mod front;
pub mod park;
mod reqline;

use rampart_cfg::model::HttpConnMode;
use rampart_proto::h1::{parse_request, Framing, H1Error, Head};
use tokio::time::Instant;

use crate::backend::ServerConn;
use crate::buf::{Buf, Pooled};
use crate::debug::{self, Trace};
use crate::h1::body::{Body, Dechunk};
use crate::h1::msg;
use crate::io::Parkable;
use crate::io::{write_all, IoError, Sock};
use crate::proxy::{GlobalRt, ProxyRt};
use crate::sample::vars::VarStore;
use crate::session::types::Session;
use crate::stream::upgrade::Upgraded;
use crate::stream::{self, Next, Txn};
use crate::timer::Timer;
use front::H1Front;
use reqline::{first_line, keep_req_line};

/// How long a connection closing after an error keeps reading (and discarding) what
/// the client still sends, so the kernel does not reset the connection before the
/// client has read the error page.
const LINGER: Duration = Duration::from_millis(500);

/// Per-connection HTTP/1 state kept between exchanges (small: an idle connection
/// holds no buffer and no parsed head).
#[derive(Debug, Default)]
pub struct H1Conn {
    /// Whether a request was already sent to a server on this connection (the first
    /// one is special for `http-reuse safe`).
    pub first_done: bool,
    /// What few connections need, boxed so that an idle connection stays small.
    pub extra: Option<Box<ConnExtra>>,
    /// When the last exchange ended ([`crate::log::stream_log::clock_ms`]), for the idle
    /// time of the next one's log line (`Ti`); kept only when the frontend logs.
    /// PERF: 4 bytes in what was padding: a parked connection stays as small.
    pub last_end_ms: u32,
}

/// Per-connection state most connections never need.
#[derive(Debug, Default)]
pub struct ConnExtra {
    /// The server connection kept for this client only (`http-reuse never`).
    pub private: Option<ServerConn>,
    /// The connection's `sess.` variables, once a rule set one.
    pub sess_vars: Option<VarStore>,
    /// A TCP stream that became HTTP (`switch-mode http`): what its first request's
    /// stream carries on with, until that stream takes it.
    pub upgraded: Option<Box<Upgraded>>,
    /// `switch-mode http proto h1`: the HTTP/2 preface is not looked for.
    pub h1_only: bool,
}

impl H1Conn {
    fn extra(&mut self) -> &mut ConnExtra {
        self.extra.get_or_insert_with(Default::default)
    }

    /// Drops the extra state once nothing is left in it.
    fn trim(&mut self) {
        if self.extra.as_ref().is_some_and(|e| e.private.is_none() && e.sess_vars.is_none() && e.upgraded.is_none()) {
            self.extra = None;
        }
    }
}

/// Why no request head could be read.
#[derive(Debug, PartialEq, Eq)]
enum HeadError {
    /// The client closed (or reset) before sending anything.
    ClosedEmpty,
    /// The client closed in the middle of a head.
    ClosedPartial,
    /// `timeout http-request` expired; `empty` if nothing at all arrived.
    Timeout {
        empty: bool,
    },
    Invalid(H1Error),
    /// Woken from the idle wait with nothing to read: wait again.
    Spurious,
}

/// Serves one HTTP/1 client connection until it closes; `sess_vars` are the `sess.`
/// variables the connection rules set.
///
/// PERF: this future is what an idle keep-alive connection costs, so it only holds the
/// socket, the session and [`H1Conn`] while it waits ([`IdleWait`]); everything an
/// exchange needs lives in one boxed future ([`turns`]), which serves request after
/// request while the client keeps sending, until the connection parks ([`park`]: its
/// task ends once idle for long) or, if it cannot park, stays idle for
/// [`SHRINK_AFTER`]. The exchange's future is large (about 7 KB): moving a fresh one
/// into its box for every request cost a copy of that size per request.
pub async fn serve<S: Parkable>(client: S, sess: Session, sess_vars: Option<Box<VarStore>>) {
    let extra = sess_vars.map(|v| Box::new(ConnExtra { sess_vars: Some(*v), ..ConnExtra::default() }));
    serve_from(client, sess, H1Conn { extra, ..H1Conn::default() }, true, None).await
}

/// Serves the connection of a TCP stream that became HTTP (`switch-mode http`): `held`
/// is what its content rules read, `first` what its first request's stream carries on
/// with; `h1_only` for `proto h1`.
pub async fn serve_upgraded<S: Parkable>(
    client: S,
    sess: Session,
    held: Option<Buf>,
    sess_vars: Option<Box<VarStore>>,
    first: Box<Upgraded>,
    h1_only: bool,
) {
    let extra = ConnExtra { private: None, sess_vars: sess_vars.map(|v| *v), upgraded: Some(first), h1_only };
    let conn = H1Conn { extra: Some(Box::new(extra)), ..H1Conn::default() };
    serve_from(client, sess, conn, true, held).await
}

/// Serves a connection that was parked and whose client spoke again.
pub async fn resume<S: Parkable>(client: S, sess: Session, conn: H1Conn) {
    serve_from(client, sess, conn, false, None).await
}

async fn serve_from<S: Parkable>(mut client: S, mut sess: Session, mut conn: H1Conn, first: bool, held: Option<Buf>) {
    // the bytes of the first request a TCP stream read before it became HTTP
    let mut held = held;
    let mut wait = !first;
    let mut shrunk = false;
    loop {
        let end = match wait {
            true => {
                let mut timeout = sess.rt.proxies[sess.fe].timeouts.http_keep_alive;
                if shrunk {
                    // the wait began in the box
                    timeout = timeout.map(|t| t.saturating_sub(SHRINK_AFTER));
                }
                let keep = sess.rt.proxies[sess.fe].idle_close_on_response;
                IdleWait::new(&client, timeout, &sess.rt.global, S::PARKS, keep).await.into()
            }
            false => End::Request,
        };
        let end = match end {
            End::Request => {
                let end;
                (client, sess, conn, end) = Box::pin(turns(client, sess, conn, !wait, held.take())).await;
                end
            }
            other => other,
        };
        wait = true;
        shrunk = matches!(end, End::Shrink);
        match end {
            End::Request | End::Shrink => {}
            // a TLS client sees a clean end (close_notify), as HAProxy's SSL_shutdown
            // sends: OpenSSL clients forget a session ended by a bare TCP close, so
            // without it a `Connection: close` client never resumes its session
            End::Close => {
                client.close_notify();
                // `option nolinger`: the FIN first (the client reads a clean end, as
                // HAProxy's clean shutdown sends), then the close resets
                if sess.rt.proxies[sess.fe].nolinger {
                    let _ = nix::sys::socket::shutdown(client.as_raw_fd(), nix::sys::socket::Shutdown::Write);
                }
                return;
            }
            End::Park => {
                let keep_alive = sess.rt.proxies[sess.fe].timeouts.http_keep_alive;
                let left = keep_alive.map(|t| t.saturating_sub(park::PARK_AFTER));
                return park::park(client, sess, conn, left);
            }
            // the HTTP/2 preface on a cleartext listener: the connection is HTTP/2
            End::H2(pre) => {
                let vars = conn.extra.as_mut().and_then(|e| e.sess_vars.take()).map(Box::new);
                return super::h2::serve(client, sess, Some(pre), vars).await;
            }
        }
    }
}

/// How long a kept-alive connection that cannot park (TLS, or a keep-alive timeout
/// shorter than [`park::PARK_AFTER`]) keeps its exchange's box while it waits for the
/// next request: a busy connection keeps it, an idle one gives the memory back. One
/// that can park keeps it until it parks.
const SHRINK_AFTER: Duration = Duration::from_millis(50);

/// Why [`turns`] gave the connection back (or what the box-less idle wait saw).
enum End {
    /// The next request starts (from the idle wait only).
    Request,
    /// Idle for [`SHRINK_AFTER`] and unable to park: wait without the box.
    Shrink,
    /// `Connection: close`, the keep-alive timeout, a soft stop or an error.
    Close,
    /// Idle for [`park::PARK_AFTER`]: leave the event loop.
    Park,
    /// The client opened with the HTTP/2 preface (these bytes, and more to come).
    H2(Buf),
}

impl From<Idle> for End {
    fn from(idle: Idle) -> End {
        match idle {
            Idle::Request => End::Request,
            Idle::Close => End::Close,
            Idle::Park => End::Park,
        }
    }
}

/// Exchanges, one after the other, while the client keeps sending (pipelined requests,
/// and requests that come before the connection parks or shrinks); gives the
/// connection's parts back with why it stopped. It owns them, so that its future
/// borrows nothing of the caller and can be boxed. `held`: the start of the first
/// request, read by the TCP stream the connection came from.
async fn turns<S: Parkable>(
    client: S,
    sess: Session,
    mut conn: H1Conn,
    mut first: bool,
    held: Option<Buf>,
) -> (S, Session, H1Conn, End) {
    let mut pending: Option<Buf> = held;
    loop {
        let (next, rest) = match exchange(&client, &sess, &mut conn, pending.take(), first).await {
            Turn::Exchanged(next, rest) => (next, rest),
            Turn::H2(pre) => return (client, sess, conn, End::H2(pre)),
        };
        first = false;
        conn.trim();
        if let Next::Close = next {
            return (client, sess, conn, End::Close);
        }
        pending = rest;
        if pending.is_none() {
            let fe = &sess.rt.proxies[sess.fe];
            let keep = fe.idle_close_on_response;
            let idle = IdleWait::new(&client, fe.timeouts.http_keep_alive, &sess.rt.global, S::PARKS, keep);
            match idle_or_shrink(idle).await {
                End::Request => {}
                end => return (client, sess, conn, end),
            }
        }
    }
}

/// `idle`, or [`End::Shrink`] once it lasts [`SHRINK_AFTER`] for a connection that
/// cannot park (one that parks frees the box by ending its task).
async fn idle_or_shrink<S: Sock>(idle: IdleWait<'_, S>) -> End {
    if idle.park.is_some() {
        return idle.await.into();
    }
    let mut idle = std::pin::pin!(idle);
    let mut shrink = Timer::new(Some(SHRINK_AFTER));
    std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(v) = std::future::Future::poll(idle.as_mut(), cx) {
            return std::task::Poll::Ready(v.into());
        }
        match shrink.as_mut().map(|t| t.poll_expired(cx)) {
            Some(std::task::Poll::Ready(())) => std::task::Poll::Ready(End::Shrink),
            _ => std::task::Poll::Pending,
        }
    })
    .await
}

/// How one turn of the connection went.
enum Turn {
    /// An exchange ran: what the connection does next, and the bytes of the next
    /// request already received.
    Exchanged(Next, Option<Buf>),
    /// The client opened with the HTTP/2 preface (these bytes, and more to come).
    H2(Buf),
}

/// The HTTP/2 connection preface's request line (RFC 9113 §3.4).
const H2_PREFACE_LINE: &[u8] = b"PRI * HTTP/2.0\r\n";

/// Whether a connection's first bytes are the HTTP/2 preface: HAProxy then serves the
/// connection in HTTP/2 (prior knowledge), unless its listener says `proto h1` or its
/// frontend has `option disable-h2-upgrade`.
fn h2_preface(buf: &[u8], sess: &Session, first: bool) -> bool {
    first && buf.starts_with(H2_PREFACE_LINE) && {
        let fe = &sess.rt.proxies[sess.fe];
        !fe.no_h2_upgrade && fe.fe.listeners.get(sess.conn.listener as usize).is_none_or(|l| l.proto.is_none())
    }
}

/// Reads one request head (`pending` may already hold its start) and runs the
/// exchange.
async fn exchange<S: Sock>(client: &S, sess: &Session, conn: &mut H1Conn, pending: Option<Buf>, first: bool) -> Turn {
    match exchange_h1(client, sess, conn, pending, first).await {
        Ok((next, rest)) => Turn::Exchanged(next, rest),
        Err(pre) => Turn::H2(pre),
    }
}

/// [`exchange`]; `Err` hands the connection over to HTTP/2.
async fn exchange_h1<S: Sock>(
    client: &S,
    sess: &Session,
    conn: &mut H1Conn,
    pending: Option<Buf>,
    first: bool,
) -> Result<(Next, Option<Buf>), Buf> {
    let rt = &sess.rt;
    let fe = &rt.proxies[sess.fe];
    let after_idle = !first && pending.is_none();
    let mut buf = pending.unwrap_or_else(|| Buf::take(rt.bufsize));
    let mut req: Pooled<Head> = Pooled::take();
    req.relax = fe.accept_invalid_req;
    let started = fe.log.is_some().then(|| log_start(conn, first, sess));
    let read = read_request_head(client, &mut buf, &mut req, rt.max_head, fe.timeouts.http_request, after_idle).await;
    if h2_preface(&buf, sess, first) && !conn.extra.as_ref().is_some_and(|e| e.h1_only) {
        return Err(buf);
    }
    if let Err(e) = read {
        if let Some(started) = started {
            log_head_error(sess, &e, first, &buf, started);
        }
        if let HeadError::Invalid(err) = &e {
            crate::stats::errors::capture(rt, sess.fe, sess.conn.src, &buf, err);
        }
        match e {
            // As HAProxy 2.6, a connection that ends or times out before its first
            // request gets a 400 or 408; between requests of a kept-alive connection, or
            // before the first one with `option http-ignore-probes`, it closes silently.
            HeadError::Spurious => return Ok((Next::KeepAlive, None)),
            HeadError::ClosedEmpty if !first || fe.ignore_probes => {}
            HeadError::Timeout { empty } if empty && (!first || fe.ignore_probes) => {}
            HeadError::Timeout { .. } => close_with_error(client, fe, 408).await,
            HeadError::ClosedEmpty | HeadError::ClosedPartial => close_with_error(client, fe, 400).await,
            HeadError::Invalid(e) => close_with_error(client, fe, e.status(true)).await,
        }
        return Ok((Next::Close, None));
    }
    if let Some(at) = req.err_pos {
        crate::stats::errors::capture_let_through(rt, sess.fe, sess.conn.src, &buf[..req.len], at as usize);
    }
    if !debug::on() {
        return Ok(run_stream(client, sess, conn, &req, buf, first, None, started).await);
    }
    let trace = Trace::accept(&fe.name, sess.lfd, client.as_raw_fd(), sess.conn.src);
    trace.request(&fe.name, &buf, &req);
    let out = run_stream(client, sess, conn, &req, buf, first, Some(&trace), started).await;
    let px = fe.fe.backend.map_or(fe, |be| &rt.proxies[be]);
    trace.end(&px.name);
    Ok(out)
}

/// Hands the parsed request to the stream. The body bytes already received are
/// checked first: an invalid chunk there gets the mux's 400 before any rule runs.
#[allow(clippy::too_many_arguments)]
async fn run_stream<S: Sock>(
    client: &S,
    sess: &Session,
    conn: &mut H1Conn,
    head: &Head,
    buf: Buf,
    first_req: bool,
    trace: Option<&Trace>,
    started: Option<LogStart>,
) -> (Next, Option<Buf>) {
    let rt = &sess.rt;
    let fe = &rt.proxies[sess.fe];
    let keep_client = head.wants_keep_alive()
        && fe.http_conn_mode != HttpConnMode::Close
        && !head.cl_and_te
        && !rt.global.stop_closes_busy();
    let mut body = Body::new(head.framing);
    let Ok(here) = body.take(&buf[head.len..]) else {
        close_with_error(client, fe, 400).await;
        return (Next::Close, None);
    };
    let mut txn = Txn::fresh(rt.bufsize);
    msg::fill(&mut txn.req, head);
    match started {
        Some(started) => {
            let fields = crate::log::stream_log::htx_req_fields_size(txn.req.view(&buf));
            log_request(&mut txn.st.log, started, head, &buf, fields, here, rt.log_uri_len);
        }
        None if fe.fe.keep_req_line => keep_req_line(&mut txn.st.log.req_line, head, &buf, rt.log_uri_len),
        // a pooled record may hold the line of another frontend's stream
        None => txn.st.log.req_line.clear(),
    }
    // As in HAProxy, rules may grow a head until it fills a buffer.
    txn.req.arena_max = front::rewrite_room(rt, head.len + here);
    let dechunked = (head.framing == Framing::Chunked && here > 0).then(|| {
        let mut d = Dechunk::default();
        d.feed(&buf[head.len..head.len + here]);
        d
    });
    let head_received = (head.len + here) as u64;
    let mut front = H1Front {
        client,
        sess,
        conn,
        req: head,
        buf,
        body,
        here,
        keep_client,
        trace,
        head_in_buf: true,
        first_req,
        dechunked,
        sent: 0,
        head_sent: 0,
        back_src: None,
        received: 0,
        head_received,
    };
    let next = stream::run(&mut front, rt, &sess.conn, sess.fe, &mut txn).await;
    let rest = if next == Next::KeepAlive { front.take_rest() } else { None };
    if started.is_some() {
        // the end the log line measured (not a `logasap` line's early one)
        let l = &txn.st.log;
        let end = l.end.filter(|_| !l.asap).unwrap_or_else(std::time::Instant::now);
        conn.last_end_ms = crate::log::stream_log::clock_ms_at(end);
    }
    (next, rest)
}

/// When a request started, for its log line: (accept date and instant, request date
/// and instant, idle milliseconds before it).
type LogStart = ((std::time::SystemTime, std::time::Instant), (std::time::SystemTime, std::time::Instant), i64);

/// The start of a request of a logging frontend. The first request of a connection
/// starts at its accept (the handshakes' time before now; the session rules ran since,
/// uncounted); the next ones, as
/// in HAProxy, have the end of the previous exchange as their "accept" date and start
/// when their first byte arrived (now), after the idle time (`Ti`) in between.
fn log_start(conn: &H1Conn, first: bool, sess: &Session) -> LogStart {
    let at = std::time::Instant::now();
    let now = (crate::log::date::wall(at), at);
    if first {
        // the handshakes (PROXY header, TLS) ran since the accept: `Th`
        let th = sess.conn.handshake_time();
        return ((now.0.checked_sub(th).unwrap_or(now.0), now.1.checked_sub(th).unwrap_or(now.1)), now, 0);
    }
    let idle = crate::log::stream_log::clock_ms_at(now.1).wrapping_sub(conn.last_end_ms);
    let idle_d = std::time::Duration::from_millis(idle.into());
    let prev_end = (now.0.checked_sub(idle_d).unwrap_or(now.0), now.1.checked_sub(idle_d).unwrap_or(now.1));
    (prev_end, now, i64::from(idle))
}

/// Starts the log record of a parsed request: its head is complete now, its request
/// line is the first line of `buf`, its headers count `fields` bytes as HAProxy counts
/// them, and `body` bytes of its body came with it (`%U` then grows as the body comes).
fn log_request(
    l: &mut crate::log::StreamLog,
    (accept, req, idle): LogStart,
    head: &Head,
    buf: &[u8],
    fields: u64,
    body: usize,
    max_uri: usize,
) {
    l.begin(accept, req, idle);
    l.head_done = Some(std::time::Instant::now());
    let line = first_line(&buf[head.method_raw.start as usize..]);
    let size = crate::log::stream_log::htx_req_head_size(line, fields) - head.uri_cut.len() as u64;
    l.bytes_in = size + body as u64;
    keep_req_line(&mut l.req_line, head, buf, max_uri);
}

/// The log line of a request the mux refused before any stream (400, 408): HAProxy's
/// `<BADREQ>` lines, `CR--`/`cR--`, unless nothing was received on a kept-alive
/// connection (then nothing is logged, as the connection just closes).
fn log_head_error(sess: &Session, e: &HeadError, first: bool, buf: &[u8], (accept, req, idle): LogStart) {
    let rt = &sess.rt;
    let fe = &rt.proxies[sess.fe];
    let Some(pl) = fe.log.as_deref() else { return };
    let (status, cause) = match e {
        HeadError::Spurious => return,
        HeadError::ClosedEmpty if !first || fe.ignore_probes => return,
        HeadError::Timeout { empty } if *empty && (!first || fe.ignore_probes) => return,
        HeadError::Timeout { .. } => (408, crate::log::Cause::ClientTimeout),
        HeadError::ClosedEmpty | HeadError::ClosedPartial => (400, crate::log::Cause::ClientAbort),
        HeadError::Invalid(e) => (e.status(true), crate::log::Cause::Proxy),
    };
    let mut l = crate::log::StreamLog::default();
    l.begin(accept, req, idle);
    l.end = Some(std::time::Instant::now());
    l.bytes_in = buf.len() as u64;
    // as HAProxy, the mux's own error page is not counted
    l.bytes_out = 0;
    l.status = Some(status);
    l.end_by(cause, crate::log::Phase::Request);
    let ctx = crate::sample::SampleCtx {
        status: Some(status),
        log: Some(&l),
        ..crate::sample::SampleCtx::new(&**rt, &sess.conn, sess.fe)
    };
    crate::log::emit(pl, &ctx, buf.is_empty());
}

/// What an idle connection does next.
enum Idle {
    /// The next request starts.
    Request,
    /// `timeout http-keep-alive`, soft stop or error.
    Close,
    /// Idle for [`park::PARK_AFTER`]: leave the event loop.
    Park,
}

/// How long an idle keep-alive connection may still send its next request once a soft
/// stop began (the request is served, its response announces the close).
// COMPAT: HAProxy 2.6 closes idle connections at once on a soft stop (unless `option
// idle-close-on-response`); a client that sent its next request meanwhile then sees
// the connection close under it. Waiting this long answers every client that was
// about to send, so that a reload fails no request of a busy keep-alive client.
const STOP_GRACE: Duration = Duration::from_millis(200);

/// Waits, holding no buffer, until the next request starts, the keep-alive timeout
/// expires, a soft stop began [`STOP_GRACE`] ago, or the connection has been idle long
/// enough to park.
struct IdleWait<'a, S> {
    sock: &'a S,
    timeout: Option<Timer>,
    park: Option<Timer>,
    global: &'a GlobalRt,
    /// Started once a soft stop is seen.
    grace: Option<Timer>,
    /// Stopping, and no timer to wait with.
    close_now: bool,
    /// `option idle-close-on-response`: a soft stop does not end the wait.
    keep_on_stop: bool,
}

impl<'a, S: Sock> IdleWait<'a, S> {
    /// `keep_on_stop`: the frontend's `option idle-close-on-response`; the connection
    /// then waits for its next request or its timeout through a soft stop, and does not
    /// park (parked connections are closed on a soft stop).
    fn new(sock: &'a S, timeout: Option<Duration>, global: &'a GlobalRt, can_park: bool, keep_on_stop: bool) -> Self {
        // `close-spread-time infinite`: as `option idle-close-on-response`
        let keep_on_stop = keep_on_stop || global.stop_keeps_alive();
        let timer = match (timeout, keep_on_stop) {
            (Some(_), false) => Timer::new(timeout).map(Timer::or_stop),
            (None, false) => Timer::stop_only(),
            (_, true) => Timer::new(timeout),
        };
        let can_park = can_park && !keep_on_stop;
        let park = (can_park && park::available() && timeout.is_none_or(|t| t > park::PARK_AFTER))
            .then(|| Timer::new(Some(park::PARK_AFTER)))
            .flatten();
        let mut wait = IdleWait { sock, timeout: timer, park, global, grace: None, close_now: false, keep_on_stop };
        if global.is_stopping() && !keep_on_stop {
            wait.start_grace();
        }
        wait
    }

    fn start_grace(&mut self) {
        self.timeout = None;
        self.park = None;
        // `close-spread-time`: a random moment of what is left of its window
        let wait = match self.global.stop_idle_delay() {
            Some(d) if !d.is_zero() => d,
            _ => STOP_GRACE,
        };
        // outside a worker thread (no timer wheel) there is nothing to wait with
        self.grace = Timer::new(Some(wait));
        self.close_now = self.grace.is_none();
    }
}

impl<S: Sock> std::future::Future for IdleWait<'_, S> {
    type Output = Idle;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Idle> {
        use std::task::Poll;
        if let Poll::Ready(r) = self.sock.poll_read_ready(cx) {
            return Poll::Ready(if r.is_ok() { Idle::Request } else { Idle::Close });
        }
        if let Some(Poll::Ready(())) = self.timeout.as_mut().map(|t| t.poll_expired(cx)) {
            if self.keep_on_stop || !self.global.is_stopping() {
                return Poll::Ready(Idle::Close);
            }
            self.start_grace();
        }
        if self.close_now {
            return Poll::Ready(Idle::Close);
        }
        if let Some(Poll::Ready(())) = self.grace.as_mut().map(|t| t.poll_expired(cx)) {
            return Poll::Ready(Idle::Close);
        }
        if let Some(Poll::Ready(())) = self.park.as_mut().map(|t| t.poll_expired(cx)) {
            return Poll::Ready(Idle::Park);
        }
        Poll::Pending
    }
}

/// Reads until `head` holds a complete request head at the start of `buf`.
async fn read_request_head<S: Sock>(
    client: &S,
    buf: &mut Buf,
    head: &mut Head,
    max_head: usize,
    timeout: Option<Duration>,
    after_idle: bool,
) -> Result<(), HeadError> {
    let mut deadline: Option<Instant> = None;
    if after_idle && buf.is_empty() {
        // The idle wait woke up on readiness left over from an earlier read (a read
        // that filled the buffer exactly): if nothing is there, go back to idle.
        match crate::io::try_read_some(client, buf.vec()) {
            Ok(0) => return Err(HeadError::ClosedEmpty),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Err(HeadError::Spurious),
            Err(_) => return Err(HeadError::ClosedEmpty),
        }
    }
    loop {
        if !buf.is_empty() {
            match parse_request(buf, max_head, head) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => return Err(HeadError::Invalid(e)),
            }
        }
        // PERF: the clock is read only when the head is not there in one go.
        let left = match timeout {
            Some(d) => {
                let at = *deadline.get_or_insert_with(|| Instant::now() + d);
                Some(at.saturating_duration_since(Instant::now()))
            }
            None => None,
        };
        let empty = buf.is_empty();
        match crate::io::read_some(client, buf.vec(), left).await {
            Ok(0) | Err(IoError::Closed) | Err(IoError::Io(_)) => {
                return Err(if empty { HeadError::ClosedEmpty } else { HeadError::ClosedPartial })
            }
            Ok(_) => {}
            Err(IoError::Timeout) => return Err(HeadError::Timeout { empty }),
        }
    }
}

/// Sends an error page as the H1 mux does (`Connection: close`), then closes softly.
async fn close_with_error<S: Sock>(client: &S, fe: &ProxyRt, code: u16) {
    fe.stats.fe_ereq.inc();
    fe.stats.fe_rsp.count(code);
    let page = fe.errors.mux(code);
    if write_all(client, &page, fe.timeouts.client).await.is_ok() {
        linger(client).await;
    }
}

/// Half-closes, then discards what the client still sends for a short while.
pub(super) async fn linger<S: Sock>(client: &S) {
    crate::io::shutdown_write(client);
    let mut scratch = Vec::with_capacity(4096);
    let deadline = Instant::now() + LINGER;
    loop {
        scratch.clear();
        let left = deadline.saturating_duration_since(Instant::now());
        match crate::io::read_some(client, &mut scratch, Some(left)).await {
            Ok(n) if n > 0 => continue,
            _ => return,
        }
    }
}
