//! Pick a server, then reuse an idle connection to it or open a new one, retrying as
//! `retries` and `option redispatch` say. When every server is at its `maxconn`, the
//! stream waits in the backend's queue (or in its server's, when `use-server` bound it
//! to one) for up to `timeout queue`, or until its client leaves with
//! `option abortonclose`; a freed connection slot goes to the first waiter ([`queue`]).
//! HAProxy counterpart: backend.c (assign_server, assign_server_and_queue,
//! connect_server, the connection retry logic of back_handle_st_cer), queue.c.

pub mod key;
pub mod send_proxy;

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpSocket, TcpStream, UnixStream};
use tokio::sync::oneshot;

pub use crate::conn_pool::sock::{self, BackSock, PlainSock};

use crate::conn_pool::{self, ConnKey, IdleConn};
use crate::health::{self as check, Event};
use crate::io::cold::cold;
pub use crate::proxy::Busy;
use crate::proxy::{BackendRt, ProxyRt, Runtime, ServerRt};
use crate::sample::ctx::ConnInfo;
use crate::stats::counters::SrvError;
use send_proxy::ConnectCtx;

pub use crate::log::types::QueueWait;
pub use crate::server::queue::{self, Priority};

/// A server connection in use by one stream; counts against the server's `maxconn`
/// until dropped or parked again.
#[derive(Debug)]
pub struct ServerConn {
    pub stream: BackSock,
    /// What it was opened for (destination, SNI, PROXY header): as an idle
    /// connection it is reused only for the same.
    pub key: ConnKey,
    /// Index of the server in its backend.
    pub srv: usize,
    /// Requests this connection carried before the current one.
    pub uses: u32,
    /// Whether it came from the idle pool (its failure before any response byte
    /// allows a transparent retry on a new connection).
    pub from_pool: bool,
    /// How long the stream waited in the queue for a server, and its position there.
    pub queued: QueueWait,
    _busy: Busy,
}

impl Busy {
    /// Takes a slot whatever the server's `maxconn` (a retry on another server).
    fn new(rt: &Arc<Runtime>, be: usize, srv: usize) -> Busy {
        rt.proxies[be].be.servers[srv].cur_conns.fetch_add(1, Ordering::SeqCst);
        counted(&rt.proxies[be].be, srv, true);
        Busy::claimed(rt, be, srv)
    }

    /// Owns a slot already counted in `cur_conns` (by [`try_claim`]).
    fn claimed(rt: &Arc<Runtime>, be: usize, srv: usize) -> Busy {
        let server = &rt.proxies[be].be.servers[srv];
        server.stats.stot().inc();
        crate::stats::counters::note_max(&server.stats.smax, server.cur_conns.load(Ordering::Relaxed));
        Busy { rt: rt.clone(), be, srv, session: None }
    }

    /// The server connection `stream` serves this stream: registers it where it may
    /// have to be cut (`on-marked-down`/`on-marked-up`).
    fn serving(mut self, stream: &BackSock) -> Busy {
        let server = &self.rt.proxies[self.be].be.servers[self.srv];
        if let Some(s) = &server.sessions {
            self.session = s.add(stream);
        }
        self
    }
}

impl ServerConn {
    fn new(stream: BackSock, key: ConnKey, srv: usize, uses: u32, from_pool: bool, busy: Busy) -> ServerConn {
        let busy = busy.serving(&stream);
        ServerConn { stream, key, srv, uses, from_pool, queued: QueueWait::default(), _busy: busy }
    }

    /// The socket, what it was opened for, its server and the stream's slot: a
    /// connection that becomes shared by several streams (HTTP/2).
    pub fn into_parts(self) -> (BackSock, ConnKey, usize, Busy) {
        (self.stream, self.key, self.srv, self._busy)
    }

    /// Notes the stream's wait in a queue before it got this connection.
    fn queued(mut self, queued: QueueWait) -> ServerConn {
        self.queued = queued;
        self
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let be = &self.rt.proxies[self.be].be;
        let server = &be.servers[self.srv];
        if let (Some(id), Some(s)) = (self.session, &server.sessions) {
            s.remove(id);
        }
        server.cur_conns.fetch_sub(1, Ordering::SeqCst);
        counted(be, self.srv, false);
        if server.maxconn().is_some() {
            dispatch(&self.rt, self.be, self.srv);
        }
    }
}

/// The `maxconn` server `s` has now ([`BackendRt::current_maxconn`]).
fn current_maxconn(be: &BackendRt, s: &ServerRt) -> Option<u32> {
    be.current_maxconn(s)
}

/// Whether server `i` takes a new stream now: usable and [`below_maxconn`].
fn has_room(be: &BackendRt, i: usize) -> bool {
    be.servers[i].state.is_usable() && below_maxconn(be, i)
}

/// Whether server `i` is below its `maxconn` with nobody waiting in its own queue
/// (HAProxy's `srv_is_full` test).
fn below_maxconn(be: &BackendRt, i: usize) -> bool {
    let s = &be.servers[i];
    match current_maxconn(be, s) {
        None => true,
        Some(max) => s.queue.is_empty() && s.cur_conns.load(Ordering::SeqCst) < max,
    }
}

/// Counts a stream on server `i` if it is below its `maxconn` (atomically, so that
/// concurrent streams on other threads never push it past).
fn try_claim(be: &BackendRt, i: usize) -> bool {
    let s = &be.servers[i];
    let claimed = match current_maxconn(be, s) {
        None => {
            s.cur_conns.fetch_add(1, Ordering::SeqCst);
            true
        }
        Some(max) => {
            s.cur_conns.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |cur| (cur < max).then_some(cur + 1)).is_ok()
        }
    };
    if claimed {
        counted(be, i, true);
    }
    claimed
}

/// Tells the balancers of `be` that server `i` took (`up`) or freed a slot, after its
/// `cur_conns` changed: `leastconn` and bounded loads keep their own counts (a no-op
/// for the other algorithms). Also for connections that are not streams' (SPOE agents).
#[inline]
pub(crate) fn counted(be: &BackendRt, i: usize, up: bool) {
    for lb in std::iter::once(&be.lb).chain(be.lb_backup.as_deref()) {
        if up {
            lb.stream_started(i);
        } else {
            lb.stream_ended(i);
        }
    }
}

/// Whether a slot freed on server `i` may go to the backend's queue: an active server
/// in the balancer's tables, or a backup one while no active server is enabled.
fn serves_backend_queue(be: &BackendRt, i: usize) -> bool {
    let s = &be.servers[i];
    if s.backup {
        return !be.servers.iter().any(|o| !o.backup && o.state.is_usable());
    }
    be.lb.weight(i) > 0
}

/// Hands the free slots of server `srv` to the streams queued on it or on its backend,
/// first come first served.
pub fn dispatch(rt: &Arc<Runtime>, be_idx: usize, srv: usize) {
    let be = &rt.proxies[be_idx].be;
    let server = &be.servers[srv];
    if !server.state.is_usable() {
        return;
    }
    let shared = serves_backend_queue(be, srv).then_some(&be.queue);
    while !(server.queue.is_empty() && shared.is_none_or(queue::Queue::is_empty)) && try_claim(be, srv) {
        let slot = Busy::claimed(rt, be_idx, srv);
        if let Err(slot) = queue::hand_over(&server.queue, shared, slot) {
            // nobody left: releasing the slot runs this again for a newcomer
            drop(slot);
            return;
        }
    }
}

impl ServerConn {
    /// Parks the connection in this thread's idle pool for later requests, under its
    /// key (a connection that started with a PROXY header serves only streams that
    /// would send the same header).
    pub fn park(self, rt: &Runtime, be: usize) {
        let server = &rt.proxies[be].be.servers[self.srv];
        // a connection that presents a certificate replaced since (`commit ssl cert`)
        // closes: the next client gets a new one, as with HAProxy
        if !self.stream.current_crt(server) || self.key.ws {
            return;
        }
        conn_pool::put(
            server.pool_key,
            self.stream,
            self.key,
            self.uses + 1,
            server.pool_max_conn,
            server.pool_purge_delay,
        );
    }
}

/// Why no server connection could be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectError {
    /// No usable server in the backend (all disabled or full): 503.
    NoServer,
    /// Every attempt failed: 503 (HAProxy answers 503 after the retries, whatever the cause).
    /// `srv`: the server last tried; `timed_out`: the last attempt timed out (the log's
    /// `sC` rather than `SC`); `retries`: attempts after the first (`%rc`).
    Failed { srv: usize, timed_out: bool, retries: u32 },
    /// Every server stayed at its `maxconn` for `timeout queue`: 503.
    QueueTimeout(QueueWait),
    /// The server a rule chose is full and so is its queue (`maxqueue`): 503.
    QueueFull,
}

/// Which idle connections a request may take (the `http-reuse` decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// Always open a new connection.
    No,
    /// Take an idle connection that carried at least this many requests.
    MinUses(u32),
}

/// Picks a server of backend `be` with its load-balancing algorithm, among the active
/// servers below their `maxconn`. As in HAProxy, backup servers are used only when no
/// active server is enabled (the first usable one, or all of them balanced with
/// `option allbackups`): active
/// servers that are merely full make the stream wait in the queue instead. `avoid` is
/// skipped when another server is usable. `key` is the stream's hash key
/// ([`key::lb_key`]) for a hashing backend.
pub fn pick_server(be: &ProxyRt, avoid: Option<usize>, key: Option<u32>) -> Option<usize> {
    let servers = &be.be.servers;
    let enabled = |i: usize| !servers[i].backup && servers[i].state.is_usable();
    let active = |i: usize| enabled(i) && has_room(&be.be, i);
    let load = |i: usize| servers[i].cur_conns.load(Ordering::Relaxed);
    if let Some(avoid) = avoid {
        if let Some(s) = be.be.lb.pick_keyed(key, |i| i != avoid && active(i), load) {
            return Some(s);
        }
    }
    if (0..servers.len()).any(enabled) {
        return be.be.lb.pick_keyed(key, active, load);
    }
    if let Some(lb) = &be.be.lb_backup {
        return lb.pick_keyed(key, |i| servers[i].backup && has_room(&be.be, i), load);
    }
    (0..servers.len()).find(|&i| servers[i].backup && has_room(&be.be, i))
}

/// Times a server's answer for balancers that learn from response times
/// (`balance peak-ewma`); free for the others.
#[derive(Debug)]
pub struct ResponseProbe<'a> {
    /// The backend (for `observe layer7`).
    be: &'a ProxyRt,
    lb: &'a crate::lb::Lb,
    srv: usize,
    sent: Option<std::time::Instant>,
}

impl<'a> ResponseProbe<'a> {
    /// Starts timing, when the balancer of `be` wants it, a request sent to `srv`.
    pub fn start(be: &'a ProxyRt, srv: usize) -> ResponseProbe<'a> {
        let lb = &be.be.lb;
        ResponseProbe { be, lb, srv, sent: lb.wants_latency().then(std::time::Instant::now) }
    }

    /// The final response head arrived with `status` (5xx and 429 count as failures).
    pub fn response(&self, status: u16) {
        check::observe(self.be, self.srv, Event::Http(status));
        if let (Some(t0), 200..) = (self.sent, status) {
            self.lb.observe(self.srv, t0.elapsed(), status >= 500 || status == 429);
        }
    }
}

/// How often a stream waiting for a server checks whether its client left
/// (`option abortonclose`).
pub const ABORT_CHECK_EVERY: Duration = Duration::from_millis(100);

/// The client left while its stream waited for a server (`option abortonclose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aborted {
    /// The server the stream was trying to connect to, if one had been chosen (HAProxy
    /// logs it: `be/srv` with `CC--`); `None` in the queue.
    pub srv: Option<usize>,
}

/// [`connect`], given up ([`Aborted`]) when the backend has `option abortonclose` and
/// the client closes its side meanwhile (`client_gone` completes, checked every
/// [`ABORT_CHECK_EVERY`]): a stream still in the queue or still connecting is dropped
/// before it reaches a server. Without the option the request is served, as a closed
/// input may be a mere half-close. `share` as for [`connect_or_share`].
#[allow(clippy::too_many_arguments)] // the stream's choices, passed through to `connect`
pub async fn connect_unless_aborted<T>(
    client_gone: impl std::future::Future<Output = ()>,
    rt: &Arc<Runtime>,
    be_idx: usize,
    reuse: Reuse,
    forced: Option<usize>,
    key: Option<u32>,
    prio: Priority,
    cx: ConnectCtx<'_>,
    share: Share<'_, T>,
) -> Result<Result<Connected<T>, ConnectError>, Aborted> {
    let mut chosen = None;
    let connecting = connect_or_share(rt, be_idx, reuse, forced, key, prio, cx, share, &mut chosen);
    if !rt.proxies[be_idx].abortonclose {
        return Ok(connecting.await);
    }
    let r = tokio::select! {
        biased;
        r = connecting => Some(r),
        () = client_gone => None,
    };
    r.ok_or(Aborted { srv: chosen })
}

/// A connection for one stream: its own ([`ServerConn`]), or a share `T` of a
/// connection that carries several streams at once (HTTP/2), which holds the stream's
/// slot on the server.
// PERF: not boxed: the connection is moved once per exchange, a box would allocate on
// every connect or reuse
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Connected<T> {
    Own(ServerConn),
    Shared(T),
}

/// What a multiplexed connection needs to take one more stream.
#[derive(Debug)]
pub struct ShareAsk<'a> {
    pub rt: &'a Arc<Runtime>,
    pub be: usize,
    pub srv: usize,
    /// What the connection must have been opened for.
    pub key: &'a ConnKey,
    /// How long the stream waited in the queue.
    pub queued: QueueWait,
    /// The stream's slot on the server (HAProxy's `maxconn` counts streams).
    pub busy: Busy,
}

/// Called once a server was chosen, before an idle connection is looked for or a new
/// one opened, when `http-reuse` allows sharing: a connection that carries several
/// streams and has room for one more takes the stream (`Ok`), else the slot comes back.
pub type Share<'a, T> = &'a mut (dyn FnMut(ShareAsk<'_>) -> Result<T, Busy> + Send);

/// The [`Share`] of a stream that takes its own connection only.
pub fn own_only(ask: ShareAsk<'_>) -> Result<std::convert::Infallible, Busy> {
    Err(ask.busy)
}

/// [`connect_or_share`] for a stream that takes its own connection only.
pub async fn connect(
    rt: &Arc<Runtime>,
    be_idx: usize,
    reuse: Reuse,
    forced: Option<usize>,
    key: Option<u32>,
    prio: Priority,
    cx: ConnectCtx<'_>,
) -> Result<ServerConn, ConnectError> {
    match connect_or_share(rt, be_idx, reuse, forced, key, prio, cx, &mut own_only, &mut None).await? {
        Connected::Own(sc) => Ok(sc),
        Connected::Shared(never) => match never {},
    }
}

/// Gets a connection to a server of backend `be`: a share of a multiplexed one when
/// `share` finds room on one, an idle one when `reuse` allows, or a new one, with
/// `retries` further attempts (the last one on another server with
/// `option redispatch`), waiting MIN(1s, timeout connect) before retrying the same
/// server after an immediate failure. `forced` is the server a rule chose (`use-server`):
/// it is used when enabled, waiting for room in it if it is full. `key` is the hash
/// key of a hashing backend ([`key::lb_key`]); `prio` places the stream in a queue
/// (`set-priority-class`/`-offset`); `cx` is the client connection (the port a mapped
/// server address adds its offset to), and for a TLS server the SNI and the PROXY
/// header sent before the handshake. `chosen` is set to the server being connected to,
/// once one is chosen (for the log line of a stream given up meanwhile).
#[allow(clippy::too_many_arguments)] // the stream's choices
pub async fn connect_or_share<T>(
    rt: &Arc<Runtime>,
    be_idx: usize,
    reuse: Reuse,
    forced: Option<usize>,
    key: Option<u32>,
    prio: Priority,
    cx: ConnectCtx<'_>,
    share: Share<'_, T>,
    chosen: &mut Option<usize>,
) -> Result<Connected<T>, ConnectError> {
    let be = &rt.proxies[be_idx];
    // as HAProxy, a draining server still takes the streams bound to it; one that is
    // down or in maintenance too with `option persist` or `force-persist`
    let persists = |sv: &ServerRt| !sv.state.is_deleted() && (sv.takes_persistent() || be.persist || cx.force_persist);
    let forced = forced.filter(|&s| be.be.servers.get(s).is_some_and(persists));
    let (mut srv, mut busy, queued) = assign_server(rt, be_idx, forced, key, prio).await?;
    *chosen = Some(srv);
    let mut ckey = conn_key(&be.be.servers[srv], cx);
    if let (Reuse::MinUses(min), false) = (reuse, ckey.ws) {
        let ask = ShareAsk { rt, be: be_idx, srv, key: &ckey, queued, busy };
        busy = match share(ask) {
            Ok(shared) => {
                crate::stats::counters::count_server_conn(rt, be_idx, srv, true);
                return Ok(Connected::Shared(shared));
            }
            Err(busy) => busy,
        };
        if let Some(idle) = take_idle(&be.be.servers[srv], min, &ckey) {
            crate::stats::counters::count_server_conn(rt, be_idx, srv, true);
            let sc = ServerConn::new(idle.conn, idle.key, srv, idle.uses, true, busy).queued(queued);
            return Ok(Connected::Own(sc));
        }
    }
    let attempts = be.retries + 1;
    for attempt in 1..=attempts {
        let server = &be.be.servers[srv];
        crate::stats::counters::count_server_conn(rt, be_idx, srv, false);
        // PERF: `cold`, made only when a connection is opened, so that a stream taking
        // an idle one does not carry the connect's state and stack frame
        let result = cold(connect_server(rt, be_idx, server, cx, &ckey)).await;
        if result.is_err() {
            be.be.lb.observe(srv, Duration::ZERO, true);
        }
        check::observe(be, srv, if result.is_ok() { Event::L4Ok } else { Event::L4Err });
        match result {
            Ok(stream) => return Ok(Connected::Own(ServerConn::new(stream, ckey, srv, 0, false, busy).queued(queued))),
            Err(timed_out) if attempt < attempts => {
                let redispatch =
                    be.redispatch && !cx.force_persist && (attempt + 1 == attempts || redispatch_now(be, srv, forced));
                let next = if redispatch { pick_server(be, Some(srv), key).unwrap_or(srv) } else { srv };
                let retry = SrvError::Retry { redispatch: next != srv };
                crate::stats::counters::count_srv_error(rt, be_idx, Some(srv), retry);
                if next == srv && !timed_out {
                    tokio::time::sleep(turnaround(be.timeouts.connect)).await;
                }
                if next != srv {
                    count_lb_pick(rt, be_idx, next, None);
                    busy = Busy::new(rt, be_idx, next);
                    ckey = conn_key(&be.be.servers[next], cx);
                }
                srv = next;
                *chosen = Some(srv);
            }
            Err(timed_out) => {
                crate::stats::counters::count_srv_error(rt, be_idx, Some(srv), SrvError::Connect);
                return Err(ConnectError::Failed { srv, timed_out, retries: attempts - 1 });
            }
        }
    }
    Err(ConnectError::Failed { srv, timed_out: false, retries: attempts - 1 })
}

/// Whether a failed connection may go to another server at once instead of waiting
/// for the last retry (with `option redispatch`): as HAProxy's
/// `back_handle_st_cer()`, when the server is no longer running, or when any server
/// will do (no server forced, more than one usable active server, no hashing).
fn redispatch_now(be: &ProxyRt, srv: usize, forced: Option<usize>) -> bool {
    let server = &be.be.servers[srv];
    if server.state.oper() != crate::server::OperState::Running || server.state.is_maint() {
        return true;
    }
    forced.is_none()
        && be.be.lb.key_source().is_none()
        && be.be.servers.iter().filter(|s| !s.backup && s.state.is_usable()).nth(1).is_some()
}

/// Counts a server the balancer chose (`lbtot`); a server a rule forced is not one.
fn count_lb_pick(rt: &Runtime, be: usize, srv: usize, forced: Option<usize>) {
    if forced.is_none() {
        let px = &rt.proxies[be];
        px.stats.be_lbtot.inc();
        px.be.servers[srv].stats.lbtot().inc();
    }
}

/// Picks a server and counts the stream on it at once (so that concurrent streams see
/// it full), when one has room and nobody is queued before this stream.
fn try_take(rt: &Arc<Runtime>, be_idx: usize, forced: Option<usize>, key: Option<u32>) -> Option<(usize, Busy)> {
    let be = &rt.proxies[be_idx];
    // a pick can race a stream of another thread for the last slot: pick again then
    for _ in 0..4 {
        let srv = match forced {
            // a server a persistence rule chose was allowed to take it even down or in
            // maintenance (`option persist`, `force-persist`): as HAProxy, it is
            // connected to at once when below its maxconn (`assign_server_and_queue`
            // checks only that)
            Some(s) => below_maxconn(&be.be, s).then_some(s)?,
            None => pick_server(be, None, key)?,
        };
        if try_claim(&be.be, srv) {
            count_lb_pick(rt, be_idx, srv, forced);
            return Some((srv, Busy::claimed(rt, be_idx, srv)));
        }
    }
    None
}

/// How often a queued stream offers the free slots of every server to the queue: a
/// server that comes back UP, or gets a weight, frees no slot of its own.
const QUEUE_RECHECK_EVERY: Duration = Duration::from_millis(100);

/// A stream in a queue; leaving (drop) takes it out, or gives back the slot it was
/// handed meanwhile.
struct Waiter<'a> {
    queue: &'a queue::Queue<Busy>,
    ticket: queue::Ticket,
    rx: oneshot::Receiver<Busy>,
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        if !self.queue.cancel(self.ticket) {
            self.rx.close();
            // a slot handed over but not taken is released (and passed on) here
            drop(self.rx.try_recv());
        }
    }
}

/// Picks a server and counts the stream on it ([`try_take`]). When none has room, or
/// streams are queued already, waits in the queue (of the forced server, else of the
/// backend) until a slot is handed over, for at most `timeout queue`; a forced server
/// whose queue holds `maxqueue` streams refuses it.
async fn assign_server(
    rt: &Arc<Runtime>,
    be_idx: usize,
    forced: Option<usize>,
    key: Option<u32>,
    prio: Priority,
) -> Result<(usize, Busy, QueueWait), ConnectError> {
    let be = &rt.proxies[be_idx];
    let mut forced = forced;
    let at_once = |(srv, busy)| (srv, busy, QueueWait::default());
    // PERF: the usual case (a server has room, no queue) takes no lock, reads no clock.
    if forced.is_some() || be.be.queue.is_empty() {
        if let Some(got) = try_take(rt, be_idx, forced, key) {
            return Ok(at_once(got));
        }
    }
    if let Some(s) = forced {
        let server = &be.be.servers[s];
        if server.maxqueue > 0 && server.queue.len() >= server.maxqueue {
            // COMPAT: as HAProxy, `option redispatch` lets the balancer choose instead
            if !be.redispatch {
                return Err(ConnectError::QueueFull);
            }
            forced = None;
            if let Some(got) = be.be.queue.is_empty().then(|| try_take(rt, be_idx, None, key)).flatten() {
                return Ok(at_once(got));
            }
        }
    }
    if !be.be.servers.iter().any(|s| s.state.is_usable()) {
        return Err(ConnectError::NoServer);
    }
    let queue = forced.map_or(&be.be.queue, |s| &be.be.servers[s].queue);
    let entered = tokio::time::Instant::now();
    // as HAProxy, the position is 1 plus the streams that left the queue before this
    // one (the count includes this stream once it was served)
    let served_at_entry = queue.served();
    let wait = |served: bool| {
        let pos = queue.served().wrapping_sub(served_at_entry) + u32::from(!served);
        let ms = u32::try_from(entered.elapsed().as_millis()).unwrap_or(u32::MAX);
        match forced {
            Some(_) => QueueWait { ms, srv_pos: pos, be_pos: 0 },
            None => QueueWait { ms, srv_pos: 0, be_pos: pos },
        }
    };
    let (ticket, rx) = queue.push(prio);
    let mut waiter = Waiter { queue, ticket, rx };
    let deadline = be.timeouts.queue.map(|d| entered + d);
    loop {
        // a slot freed before the push found nobody to hand it to: offer it now
        match forced {
            Some(s) => dispatch(rt, be_idx, s),
            None => (0..be.be.servers.len()).for_each(|s| dispatch(rt, be_idx, s)),
        }
        let tick = tokio::time::Instant::now() + QUEUE_RECHECK_EVERY;
        let wake = deadline.map_or(tick, |d| d.min(tick));
        match tokio::time::timeout_at(wake, &mut waiter.rx).await {
            Ok(Ok(slot)) => {
                let srv = slot.srv;
                count_lb_pick(rt, be_idx, srv, forced);
                return Ok((srv, slot, wait(true)));
            }
            // the sender is dropped only with the runtime
            Ok(Err(_)) => return Err(ConnectError::NoServer),
            Err(_) if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) => {
                return Err(ConnectError::QueueTimeout(wait(false)))
            }
            Err(_) => {}
        }
    }
}

/// Opens a new connection to the same server after a reused one failed before any
/// response byte (no retry count is consumed, as the failure was the pool's). `cx.sni`
/// is the SNI of the failed connection.
pub async fn reconnect(
    rt: &Arc<Runtime>,
    be_idx: usize,
    srv: usize,
    cx: ConnectCtx<'_>,
) -> Result<ServerConn, ConnectError> {
    let be = &rt.proxies[be_idx];
    crate::stats::counters::count_server_conn(rt, be_idx, srv, false);
    let server = &be.be.servers[srv];
    let key = conn_key(server, cx);
    let result = connect_server(rt, be_idx, server, cx, &key).await;
    check::observe(be, srv, if result.is_ok() { Event::L4Ok } else { Event::L4Err });
    match result {
        Ok(stream) => Ok(ServerConn::new(stream, key, srv, 0, false, Busy::new(rt, be_idx, srv))),
        Err(_) => connect(rt, be_idx, Reuse::No, None, None, Priority::default(), cx).await,
    }
}

/// An idle connection to `server` opened for `key` that carried at least `min_uses`
/// requests and is still alive, from this thread's pool or, as the server's
/// `pool-low-conn` and `tune.idle-pool.shared` allow, from another thread's.
fn take_idle(server: &ServerRt, min_uses: u32, key: &ConnKey) -> Option<IdleConn> {
    let takeover = server.pool_shared.then_some(server.pool_low_conn);
    let want = conn_pool::Wanted { server: server.pool_key, key, min_uses, takeover };
    // one presenting a client certificate replaced since (`commit ssl cert`) closes
    std::iter::from_fn(|| conn_pool::take(want)).find(|idle| idle.conn.current_crt(server))
}

/// What a connection to `server` for the stream `cx` describes is opened for: the
/// address when it comes from the client connection, the SNI, the PROXY header, the
/// server's CA and CRL files (so that none verified before a `commit ssl ca-file` is
/// reused after it).
/// Allocates only for a server with `sni` or `send-proxy*`.
pub fn conn_key(server: &ServerRt, cx: ConnectCtx<'_>) -> ConnKey {
    // PERF: a server that follows DNS keys its idle connections by address too, so
    // that none opened to its former address is reused; the others pay nothing
    let from_conn = server.transparent || server.port_offset.is_some() || server.dns.is_some();
    ConnKey {
        dst: if from_conn { server_target(server, cx.conn) } else { None },
        sni: sni_of(server, cx.sni).map(Box::from),
        proxy: send_proxy::header(&server.send_proxy, cx),
        trust: server.tls.as_deref().map_or(0, |t| t.trust_epoch()),
        ws: cx.ws && server.ws_apart,
        mark: cx.bc.mark,
        tos: cx.bc.tos,
    }
}

/// The SNI a connection to `server` announces: the value of its `sni` expression for
/// this stream, when the server has `ssl` and `sni`.
fn sni_of<'a>(server: &ServerRt, sni: &'a [(usize, Box<str>)]) -> Option<&'a str> {
    let tls = server.tls.as_deref().filter(|t| t.traffic().is_some() && t.sni.is_some())?;
    sni.iter().find(|(slot, _)| *slot == tls.sni_slot).map(|(_, v)| &**v).filter(|s| !s.is_empty())
}

/// The SNI values that make `server` announce `sni` again (a replacement connection).
pub fn sni_again(server: &ServerRt, sni: Option<&str>) -> crate::tls::client::SniValues {
    match (server.tls.as_deref(), sni) {
        (Some(t), Some(v)) => vec![(t.sni_slot, Box::from(v))],
        _ => Vec::new(),
    }
}

/// One attempt for the stream `cx`: TCP, then for a TLS server the PROXY header of
/// `key` (before the handshake) and the handshake with its SNI (and for a WebSocket
/// stream the ALPN the server's `ws` asks for), all within `timeout connect`.
/// `Err(true)` when it timed out.
async fn connect_server(
    rt: &Runtime,
    be_idx: usize,
    server: &ServerRt,
    cx: ConnectCtx<'_>,
    key: &ConnKey,
) -> Result<BackSock, bool> {
    let client = cx.conn;
    let be = &rt.proxies[be_idx];
    let timeout = be.timeouts.connect;
    let start = tokio::time::Instant::now();
    let tcp = match &server.unix {
        Some(path) => PlainSock::Unix(connect_unix(path, timeout).await?),
        None => PlainSock::Tcp(connect_addr(server, client, timeout, be, &rt.sockbufs, key).await?),
    };
    if let (PlainSock::Unix(s), true) = (&tcp, rt.sockbufs.server_set()) {
        crate::io::set_sockbufs(s, rt.sockbufs.server_rcv, rt.sockbufs.server_snd);
    }
    let Some(config) = server.tls.as_deref().and_then(|t| t.traffic().cloned()) else {
        return Ok(BackSock::Plain(tcp));
    };
    let tls = server.tls.as_deref().ok_or(false)?;
    let config = match &tls.ws_traffic {
        Some(ws) if cx.ws => ws.clone(),
        _ => config,
    };
    let left = timeout.map(|t| t.saturating_sub(start.elapsed()));
    if let Some(h) = &key.proxy {
        crate::io::write_all(&tcp, h, left).await.map_err(|_| false)?;
    }
    // `maxsslconn`: past it the connection fails as a connection error, as HAProxy's
    // "Too many SSL connections"
    let slot = rt.global.ssl.try_acquire().ok_or(false)?;
    let name = tls.name_for(key.sni.as_deref());
    let generation = tls.crt.as_ref().map_or(0, |c| c.generation());
    match crate::tls::stream::connect(tcp, config, name, left).await {
        Ok(t) => Ok(BackSock::Tls(Box::new(sock::TlsConn::new(t, generation, Some(slot))))),
        Err(crate::tls::stream::HandshakeError::Timeout) => Err(true),
        Err(_) => Err(false),
    }
}

/// The address to connect to: the client connection's destination (as rules left it)
/// for the hidden server of `option transparent` (the destination's address for a server
/// without one); else the server's, with the port the client connected to
/// (plus the offset) when the configured address has no fixed port; `None` when that
/// port is unknown (a unix-socket client). The port wraps as HAProxy's 16-bit one does.
fn server_target(server: &ServerRt, client: &ConnInfo) -> Option<std::net::SocketAddr> {
    if server.transparent {
        return client.dst();
    }
    let addr = server.addr.get();
    // a server without address (0.0.0.0, `::`) connects to the client's destination
    // address, as HAProxy's assign_server_address(); one whose name does not resolve
    // (now) has nowhere to connect to
    let ip = match addr.ip() {
        ip if !ip.is_unspecified() => ip,
        _ if server.dns.is_some() => return None,
        _ => client.dst()?.ip(),
    };
    let Some(offset) = server.port_offset else { return Some(std::net::SocketAddr::new(ip, addr.port())) };
    let port = i32::from(client.dst()?.port()) + offset;
    let port = u16::try_from(port.rem_euclid(65536)).ok()?;
    Some(std::net::SocketAddr::new(ip, port))
}

/// HAProxy's turn-around before retrying the same server: MIN(1s, timeout connect).
fn turnaround(connect: Option<Duration>) -> Duration {
    connect.map_or(Duration::from_secs(1), |c| c.min(Duration::from_secs(1)))
}

/// One connection attempt to `server` (from its `source` address if any, through its
/// `socks4` proxy if any, within the same timeout), with the backend `be`'s `option
/// srvtcpka` settings if any and its `option nolinger`, and the mark and TOS of `key`
/// (`set-bc-mark`, `set-bc-tos`). `Err(true)` when it timed out.
async fn connect_addr(
    server: &ServerRt,
    client: &ConnInfo,
    timeout: Option<Duration>,
    be: &ProxyRt,
    bufs: &rampart_cfg::model::SockBufs,
    key: &ConnKey,
) -> Result<TcpStream, bool> {
    let addr = server_target(server, client).ok_or(false)?;
    let attempt = async {
        let sock = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
        sock.set_nodelay(true)?;
        if let Some(src) = server.source {
            // a fixed source port may be taken by a connection in TIME_WAIT
            sock.set_reuseaddr(src.port() != 0)?;
            sock.bind(src)?;
        }
        if let Some(ka) = &be.srvtcpka {
            crate::io::set_keepalive(&sock, ka);
        }
        if be.nolinger {
            // a zero linger never blocks: the close resets the connection at once
            socket2::SockRef::from(&sock).set_linger(Some(Duration::ZERO))?;
        }
        if server.tfo {
            // as HAProxy, a refusal (an old kernel) leaves a plain connect
            let _ = crate::sys::set_tcp_opt(&sock, crate::sys::ListenTcpOpt::FastOpenConnect, 1);
        }
        if bufs.server_set() {
            crate::io::set_sockbufs(&sock, bufs.server_rcv, bufs.server_snd);
        }
        if key.mark.is_some() || key.tos.is_some() {
            crate::io::set_sock_mark_tos(&sock, key.mark, key.tos, addr.is_ipv6());
        }
        let Some(proxy) = server.socks4 else { return sock.connect(addr).await };
        let mut stream = sock.connect(proxy).await?;
        crate::io::socks4::handshake(&mut stream, addr).await?;
        Ok(stream)
    };
    let res: io::Result<TcpStream> = match timeout {
        Some(d) => match tokio::time::timeout(d, attempt).await {
            Ok(r) => r,
            Err(_) => return Err(true),
        },
        None => attempt.await,
    };
    res.map_err(|_| false)
}

/// One connection attempt to a unix-socket server (`server <name> /path`).
/// `Err(true)` when it timed out.
async fn connect_unix(path: &std::path::Path, timeout: Option<Duration>) -> Result<UnixStream, bool> {
    match timeout {
        Some(d) => match tokio::time::timeout(d, UnixStream::connect(path)).await {
            Ok(r) => r.map_err(|_| false),
            Err(_) => Err(true),
        },
        None => UnixStream::connect(path).await.map_err(|_| false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turnaround_is_capped_by_connect_timeout() {
        assert_eq!(turnaround(None), Duration::from_secs(1));
        assert_eq!(turnaround(Some(Duration::from_millis(200))), Duration::from_millis(200));
        assert_eq!(turnaround(Some(Duration::from_secs(5))), Duration::from_secs(1));
    }
}
