//! Pick a server, then reuse an idle connection to it or open a new one, retrying as
//! `retries` and `option redispatch` say. When every server is at its `maxconn`, the
//! stream waits in the backend queue for up to `timeout queue`, or until its client
//! leaves with `option abortonclose`.
//! HAProxy counterpart: backend.c (assign_server, connect_server, the connection
//! retry logic of back_handle_st_cer), queue.c (the backend queue only: no per-server
//! queue, no `maxqueue`, and no priority of queued streams over new ones).

pub mod key;
pub mod send_proxy;
pub mod sock;

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpSocket, TcpStream, UnixStream};

pub use sock::{BackSock, PlainSock};

use crate::check::{self, Event};
use crate::conn_pool::{self, IdleConn};
use crate::io::Sock;
use crate::proxy::{ProxyRt, Runtime, ServerRt};
use crate::sample::ctx::ConnInfo;
use crate::stats::counters::SrvError;
use send_proxy::ConnectCtx;

/// A server connection in use by one stream; counts against the server's `maxconn`
/// until dropped or parked again.
#[derive(Debug)]
pub struct ServerConn {
    pub stream: BackSock,
    /// The SNI a TLS connection announced (`server ... sni`): an idle connection is
    /// reused only for the same one.
    pub sni: Option<Box<str>>,
    /// Index of the server in its backend.
    pub srv: usize,
    /// Requests this connection carried before the current one.
    pub uses: u32,
    /// Whether it came from the idle pool (its failure before any response byte
    /// allows a transparent retry on a new connection).
    pub from_pool: bool,
    _busy: Busy,
}

/// Holds one unit of a server's `cur_conns`.
#[derive(Debug)]
struct Busy {
    rt: Arc<Runtime>,
    be: usize,
    srv: usize,
}

impl Busy {
    fn new(rt: &Arc<Runtime>, be: usize, srv: usize) -> Busy {
        let server = &rt.proxies[be].be.servers[srv];
        let before = server.cur_conns.fetch_add(1, Ordering::Relaxed);
        server.stats.stot.inc();
        crate::stats::counters::note_max(&server.stats.smax, before + 1);
        Busy { rt: rt.clone(), be, srv }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let be = &self.rt.proxies[self.be].be;
        let server = &be.servers[self.srv];
        server.cur_conns.fetch_sub(1, Ordering::Relaxed);
        if server.maxconn.is_some() {
            be.queue.notify_waiters();
        }
    }
}

impl ServerConn {
    /// Parks the connection in this thread's idle pool for later requests (closes it
    /// when it started with a PROXY header: see `send_proxy`).
    pub fn park(self, rt: &Runtime, be: usize) {
        let server = &rt.proxies[be].be.servers[self.srv];
        if server.send_proxy.version.is_some() {
            return;
        }
        let key = server.pool_key;
        conn_pool::put(key, self.stream, self.sni, self.uses + 1, server.pool_max_conn);
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
    QueueTimeout,
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
    let active = |i: usize| enabled(i) && servers[i].usable();
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
        return lb.pick_keyed(key, |i| servers[i].backup && servers[i].usable(), load);
    }
    servers.iter().position(|s| s.backup && s.usable())
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
const ABORT_CHECK_EVERY: Duration = Duration::from_millis(100);

/// [`connect`], given up (`None`) when the backend has `option abortonclose` and the
/// client closes its side meanwhile: a stream still in the queue or still connecting is
/// dropped before it reaches a server. Without the option the request is served, as a
/// closed input may be a mere half-close.
pub async fn connect_unless_aborted<S: Sock>(
    client: &S,
    rt: &Arc<Runtime>,
    be_idx: usize,
    reuse: Reuse,
    forced: Option<usize>,
    key: Option<u32>,
    cx: ConnectCtx<'_>,
) -> Option<Result<ServerConn, ConnectError>> {
    let connecting = connect(rt, be_idx, reuse, forced, key, cx);
    if !rt.proxies[be_idx].abortonclose {
        return Some(connecting.await);
    }
    tokio::select! {
        biased;
        r = connecting => Some(r),
        () = crate::io::peer_closes(client, ABORT_CHECK_EVERY) => None,
    }
}

/// Gets a connection to a server of backend `be`: an idle one when `reuse` allows, or a
/// new one, with `retries` further attempts (the last one on another server with
/// `option redispatch`), waiting MIN(1s, timeout connect) before retrying the same
/// server after an immediate failure. `forced` is the server a rule chose (`use-server`):
/// it is used when enabled, waiting for room in it if it is full. `key` is the hash
/// key of a hashing backend ([`key::lb_key`]); `cx` is the client connection (the
/// port a mapped server address adds its offset to), and for a TLS server the SNI and
/// the PROXY header sent before the handshake.
pub async fn connect(
    rt: &Arc<Runtime>,
    be_idx: usize,
    reuse: Reuse,
    forced: Option<usize>,
    key: Option<u32>,
    cx: ConnectCtx<'_>,
) -> Result<ServerConn, ConnectError> {
    let be = &rt.proxies[be_idx];
    let forced = forced.filter(|&s| be.be.servers.get(s).is_some_and(ServerRt::is_up));
    let (mut srv, mut busy) = assign_server(rt, be_idx, forced, key).await?;
    if let Reuse::MinUses(min) = reuse {
        let sni = sni_of(&be.be.servers[srv], cx.sni);
        if let Some(idle) = take_idle(&be.be.servers[srv], min, sni) {
            let (stream, sni, uses) = (idle.stream, idle.sni, idle.uses);
            return Ok(ServerConn { stream, sni, srv, uses, from_pool: true, _busy: busy });
        }
    }
    let attempts = be.retries + 1;
    for attempt in 1..=attempts {
        let server = &be.be.servers[srv];
        let result = connect_server(rt, be_idx, server, cx).await;
        if result.is_err() {
            be.be.lb.observe(srv, Duration::ZERO, true);
        }
        check::observe(be, srv, if result.is_ok() { Event::L4Ok } else { Event::L4Err });
        match result {
            Ok((stream, sni)) => return Ok(ServerConn { stream, sni, srv, uses: 0, from_pool: false, _busy: busy }),
            Err(timed_out) if attempt < attempts => {
                let redispatch = be.redispatch && attempt + 1 == attempts;
                let next = if redispatch { pick_server(be, Some(srv), key).unwrap_or(srv) } else { srv };
                let retry = SrvError::Retry { redispatch: next != srv };
                crate::stats::counters::count_srv_error(rt, be_idx, Some(srv), retry);
                if next == srv && !timed_out {
                    tokio::time::sleep(turnaround(be.timeouts.connect)).await;
                }
                if next != srv {
                    count_lb_pick(rt, be_idx, next, None);
                    busy = Busy::new(rt, be_idx, next);
                }
                srv = next;
            }
            Err(timed_out) => {
                crate::stats::counters::count_srv_error(rt, be_idx, Some(srv), SrvError::Connect);
                return Err(ConnectError::Failed { srv, timed_out, retries: attempts - 1 });
            }
        }
    }
    Err(ConnectError::Failed { srv, timed_out: false, retries: attempts - 1 })
}

/// Counts a server the balancer chose (`lbtot`); a server a rule forced is not one.
fn count_lb_pick(rt: &Runtime, be: usize, srv: usize, forced: Option<usize>) {
    if forced.is_none() {
        let px = &rt.proxies[be];
        px.stats.be_lbtot.inc();
        px.be.servers[srv].stats.lbtot.inc();
    }
}

/// Picks a server and counts the stream on it at once (so that concurrent streams see
/// it full). When every enabled server is at its `maxconn`, waits in the backend queue
/// until one releases a connection, for at most `timeout queue`.
async fn assign_server(
    rt: &Arc<Runtime>,
    be_idx: usize,
    forced: Option<usize>,
    key: Option<u32>,
) -> Result<(usize, Busy), ConnectError> {
    let be = &rt.proxies[be_idx];
    let pick = |be: &ProxyRt| match forced {
        Some(s) => be.be.servers[s].usable().then_some(s),
        None => pick_server(be, None, key),
    };
    // PERF: the usual case (a server has room) takes no lock and reads no clock.
    if let Some(srv) = pick(be) {
        count_lb_pick(rt, be_idx, srv, forced);
        return Ok((srv, Busy::new(rt, be_idx, srv)));
    }
    let deadline = be.timeouts.queue.map(|d| tokio::time::Instant::now() + d);
    loop {
        let released = be.be.queue.notified();
        tokio::pin!(released);
        released.as_mut().enable();
        if let Some(srv) = pick(be) {
            count_lb_pick(rt, be_idx, srv, forced);
            return Ok((srv, Busy::new(rt, be_idx, srv)));
        }
        if !be.be.servers.iter().any(|s| s.state.is_usable()) {
            return Err(ConnectError::NoServer);
        }
        match deadline {
            Some(at) => {
                if tokio::time::timeout_at(at, released).await.is_err() {
                    return Err(ConnectError::QueueTimeout);
                }
            }
            None => released.await,
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
    let result = connect_server(rt, be_idx, &be.be.servers[srv], cx).await;
    check::observe(be, srv, if result.is_ok() { Event::L4Ok } else { Event::L4Err });
    match result {
        Ok((stream, sni)) => {
            Ok(ServerConn { stream, sni, srv, uses: 0, from_pool: false, _busy: Busy::new(rt, be_idx, srv) })
        }
        Err(_) => connect(rt, be_idx, Reuse::No, None, None, cx).await,
    }
}

/// An idle connection to `server` that carried at least `min_uses` requests, announced
/// the SNI `sni`, and is still alive.
fn take_idle(server: &ServerRt, min_uses: u32, sni: Option<&str>) -> Option<IdleConn> {
    std::iter::from_fn(|| conn_pool::take(server.pool_key, min_uses, sni)).find(|idle| idle.stream.idle_alive())
}

/// The SNI a connection to `server` announces: the value of its `sni` expression for
/// this stream, when the server has `ssl` and `sni`.
fn sni_of<'a>(server: &ServerRt, sni: &'a [(usize, Box<str>)]) -> Option<&'a str> {
    let tls = server.tls.as_deref().filter(|t| t.traffic.is_some() && t.sni.is_some())?;
    sni.iter().find(|(slot, _)| *slot == tls.sni_slot).map(|(_, v)| &**v).filter(|s| !s.is_empty())
}

/// The SNI values that make `server` announce `sni` again (a replacement connection).
pub fn sni_again(server: &ServerRt, sni: Option<&str>) -> crate::tls::client::SniValues {
    match (server.tls.as_deref(), sni) {
        (Some(t), Some(v)) => vec![(t.sni_slot, Box::from(v))],
        _ => Vec::new(),
    }
}

/// One attempt: TCP, then for a TLS server the PROXY header (before the handshake)
/// and the handshake, all within `timeout connect`. `Err(true)` when it timed out.
async fn connect_server(
    rt: &Runtime,
    be_idx: usize,
    server: &ServerRt,
    cx: ConnectCtx<'_>,
) -> Result<(BackSock, Option<Box<str>>), bool> {
    let be = &rt.proxies[be_idx];
    let timeout = be.timeouts.connect;
    let start = tokio::time::Instant::now();
    let tcp = match &server.unix {
        Some(path) => PlainSock::Unix(connect_unix(path, timeout).await?),
        None => PlainSock::Tcp(connect_addr(server, cx.conn, timeout, be.srvtcpka.as_ref()).await?),
    };
    let Some(config) = server.tls.as_deref().and_then(|t| t.traffic.clone()) else {
        return Ok((BackSock::Plain(tcp), None));
    };
    let tls = server.tls.as_deref().ok_or(false)?;
    let left = timeout.map(|t| t.saturating_sub(start.elapsed()));
    if let Some(h) = send_proxy::header(&server.send_proxy, cx) {
        crate::io::write_all(&tcp, &h, left).await.map_err(|_| false)?;
    }
    let sni = sni_of(server, cx.sni);
    let name = tls.name_for(sni);
    match crate::tls::stream::connect(tcp, config, name, left).await {
        Ok(t) => Ok((BackSock::Tls(Box::new(sock::TlsConn::new(t))), sni.map(Box::from))),
        Err(crate::tls::stream::HandshakeError::Timeout) => Err(true),
        Err(_) => Err(false),
    }
}

/// The address to connect to: the server's, with the port the client connected to
/// (plus the offset) when the configured address has no fixed port; `None` when that
/// port is unknown (a unix-socket client). The port wraps as HAProxy's 16-bit one does.
fn server_target(server: &ServerRt, client: &ConnInfo) -> Option<std::net::SocketAddr> {
    let Some(offset) = server.port_offset else { return Some(server.addr) };
    let port = i32::from(client.dst()?.port()) + offset;
    let port = u16::try_from(port.rem_euclid(65536)).ok()?;
    Some(std::net::SocketAddr::new(server.addr.ip(), port))
}

/// HAProxy's turn-around before retrying the same server: MIN(1s, timeout connect).
fn turnaround(connect: Option<Duration>) -> Duration {
    connect.map_or(Duration::from_secs(1), |c| c.min(Duration::from_secs(1)))
}

/// One connection attempt to `server` (from its `source` address if any), with
/// `option srvtcpka`'s settings if any. `Err(true)` when it timed out.
async fn connect_addr(
    server: &ServerRt,
    client: &ConnInfo,
    timeout: Option<Duration>,
    ka: Option<&socket2::TcpKeepalive>,
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
        if let Some(ka) = ka {
            crate::io::set_keepalive(&sock, ka);
        }
        sock.connect(addr).await
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
