//! HTTP/2 in the client role: [`H2Back`] is one stream of an HTTP/2 server connection
//! (`server ... proto h2`, or `alpn h2` negotiated over TLS), spoken to through the same
//! [`HttpBack`] interface as HTTP/1. gRPC servers are reached this way.
//!
//! How a stream gets its connection: HTTP/2 multiplexes, where a [`ServerConn`] is one
//! socket for one exchange. Each worker thread keeps a registry of its HTTP/2 server
//! connections (`conn`), keyed as idle HTTP/1 connections are (the server's pool key
//! and the [`crate::backend::ConnKey`]: destination, SNI, PROXY header, trust). A
//! connection is owned by a driver task spawned on the thread's runtime: it owns the
//! socket, writes the frames the streams queue and files what arrives in their slots
//! (`shared`). Once the balancer chose a server (queue and `maxconn` as usual), the
//! stream asks the registry for a connection of that server with room for one more
//! stream (the server's SETTINGS_MAX_CONCURRENT_STREAMS) before any idle connection is
//! taken or a new socket opened ([`attach`], the `share` step of
//! `backend::connect_or_share`); a new connection to an HTTP/2 server becomes a shared
//! one when its first stream starts on it ([`H2Back::start`]). As in HAProxy, the
//! server's `maxconn` counts streams, not connections: each stream holds its own slot
//! (`Busy`) until it ends. `http-reuse never` opens a private connection per stream
//! (closed after it); `http-reuse safe` sends the first request of a client
//! connection that cannot be replayed on a new connection, which then serves others.
//! The registry is per thread, never locked: a stream only ever meets the connections
//! of its own thread (HAProxy shares them between threads; rampart does not yet).
//!
//! The request head becomes HEADERS (`h2::client`), its body DATA frames within the
//! windows: bytes come in the framing of the client side's HTTP/1 message, decoded
//! from chunked (`h1::body::Unchunk`, trailers sent as a last HEADERS) or counted down
//! from a known length. The response is presented as an HTTP/1 server would send it:
//! its head with `content-length` when the server gave one, else a chunked body (the
//! client side writes `transfer-encoding: chunked`), each DATA frame handed on as it
//! arrives (gRPC streams), the trailers as the chunked body's trailer section.
//! HAProxy counterpart: mux_h2.c's back side (`h2c_bck_*`, `h2s_bck_make_req_headers`).
//!
//! - `conn`: the driver task, the registry
//! - `shared`: what the driver and its streams share
//!
//! An HTTP/1.1 upgrade goes out as an extended CONNECT (RFC 8441) when the server
//! offers it (else the stream is reset and the client gets 502, as in HAProxy), its
//! `200` comes back as a `101` and DATA frames carry the tunnel (`TxFraming::Tunnel`).
//!
//! A CONNECT (RFC 9113 §8.5: `:method` and `:authority` only) goes the same way: its
//! HEADERS leave the stream open, a 2xx makes the stream's DATA the tunnel.
//!
//! COMPAT (partial): no `-d` traces for HTTP/2 servers; `pool-max-conn` and `pool-low-conn` do not bound
//! HTTP/2 connections (`max-reuse` does: [`conn::start`]); `on-marked-down shutdown-sessions` cuts only the
//! streams' first connection.

mod conn;
mod shared;

use std::future::poll_fn;
use std::ops::Range;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use atomic_refcell::AtomicRefCell;
use rampart_proto::h2::ErrorCode;

use super::{BackRecv, BackSend, BodyError, HeadError, HeadWait, HttpBack, RawRest, Received, ReqSend, ResFacts};
use crate::backend::{Busy, QueueWait, ServerConn, ShareAsk};
use crate::conn_pool::BackSock;
use crate::conn_pool::ConnKey;
use crate::h1::body::Unchunk;
use crate::h2::client::{push_trailers, request_fields, response_head};
use crate::http::{websocket, BodyLen, Method, MsgHead, MsgView};
use crate::io::IoError;
use crate::proxy::{Runtime, ServerRt};
use crate::tls::TlsInfo;
use shared::{Block, ConnRef};

/// Whether `sc`, a new connection to `server`, speaks HTTP/2: `proto h2`, or `h2`
/// negotiated by ALPN; for a connection opened apart for a WebSocket stream, what the
/// server's `ws` names (HAProxy 2.6's `srv_get_ws_proto()`).
pub fn speaks_h2(server: &ServerRt, sc: &ServerConn) -> bool {
    use rampart_cfg::model::{BindProto, ServerWs};
    if sc.key.ws {
        match server.ws {
            ServerWs::H1 => return false,
            ServerWs::H2 => return true,
            ServerWs::Auto => {}
        }
    }
    match server.proto {
        Some(BindProto::H2) => true,
        Some(_) => false,
        None => sc.stream.tls().is_some_and(|t| t.info.alpn.as_deref() == Some(b"h2")),
    }
}

/// A stream's place on a shared HTTP/2 connection, found by [`attach`].
#[derive(Debug)]
pub struct H2Attach {
    /// `None` once taken by [`H2Back::attached`]; a place not taken is given back.
    conn: Option<ConnRef>,
    pub srv: usize,
    key: ConnKey,
    pub queued: QueueWait,
    busy: Option<Busy>,
}

impl Drop for H2Attach {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            conn.borrow_mut().release(None);
        }
    }
}

impl H2Attach {
    /// What the connection's TLS handshake negotiated.
    pub fn tls(&self) -> Option<Arc<TlsInfo>> {
        self.conn.as_ref().and_then(|c| c.borrow().tls.clone())
    }
}

/// The `share` step for a stream of backend `ask.be`: a place on a connection of this
/// thread to the chosen server that takes one more stream.
pub fn attach(ask: ShareAsk<'_>) -> Result<H2Attach, Busy> {
    let server = &ask.rt.proxies[ask.be].be.servers[ask.srv];
    if !server.may_speak_h2() {
        return Err(ask.busy);
    }
    match conn::find(server.pool_key, ask.key) {
        Some(conn) => Ok(H2Attach {
            conn: Some(conn),
            srv: ask.srv,
            key: ask.key.clone(),
            queued: ask.queued,
            busy: Some(ask.busy),
        }),
        None => Err(ask.busy),
    }
}

/// How the request body goes out.
#[derive(Debug, Default)]
enum TxFraming {
    /// No body, or all of it sent.
    #[default]
    Done,
    /// Bytes left of a known length.
    Length(u64),
    /// Chunked: decoded to its data and trailers.
    Chunked(Box<Unchunk>),
    /// An extended CONNECT's stream: bytes go as they come, until
    /// [`BackSend::end_tunnel`].
    Tunnel,
}

/// What the connections of this exchange are opened with.
#[derive(Debug, Clone, Copy)]
pub struct Opening {
    /// Shared with other streams (else private: `http-reuse never`).
    pub shared: bool,
    /// How long an unused connection stays open.
    pub idle: Option<Duration>,
    /// The server's `max-reuse` plus one: the most streams a connection carries.
    pub max_streams: Option<u64>,
}

impl Opening {
    /// For a stream of backend `be`.
    pub fn of(rt: &Runtime, be: usize) -> Opening {
        let px = &rt.proxies[be];
        Opening {
            shared: px.http_reuse != rampart_cfg::model::HttpReuse::Never,
            idle: px.timeouts.http_keep_alive.or(px.timeouts.server),
            max_streams: None,
        }
    }
}

/// One exchange on an HTTP/2 server connection.
#[derive(Debug)]
pub struct H2Back {
    /// `None` between [`HttpBack::release`] and [`HttpBack::resend`].
    conn: Option<ConnRef>,
    /// The stream, once its HEADERS went out.
    id: Option<u32>,
    srv: usize,
    key: ConnKey,
    from_pool: bool,
    busy: Option<Busy>,
    opening: Opening,
    pool_key: usize,
    /// The request's fields, kept for a retry.
    req: Block,
    /// The request body bytes that came with the head, kept for a retry.
    req_body: Vec<u8>,
    req_len: BodyLen,
    method: Method,
    /// The request is an HTTP/1.1 upgrade, sent as an extended CONNECT.
    upgrade: Option<Box<Upgrade>>,
    tx: AtomicRefCell<TxFraming>,
    rx: Rx,
}

/// An HTTP/1.1 upgrade request sent as an extended CONNECT (RFC 8441), and what its
/// answer (`200`) needs to become the `101` an HTTP/1 client expects.
#[derive(Debug, Clone, Default)]
pub struct Upgrade {
    /// The `Upgrade` header's first protocol (`:protocol`).
    protocol: Vec<u8>,
    /// The client's `Sec-WebSocket-Key`, for the `Sec-WebSocket-Accept` the server
    /// does not send in HTTP/2.
    ws_key: Option<Vec<u8>>,
}

/// The response side.
#[derive(Debug, Default)]
pub struct Rx {
    /// The bytes the last response head's slices point into.
    head_buf: Vec<u8>,
    /// The body bytes handed out last.
    out: Vec<u8>,
    body: BodyLen,
    /// The body is presented chunked.
    chunked: bool,
    /// The body's end was handed out (or it has none).
    done: bool,
    /// The request was an upgrade (extended CONNECT).
    upgrade: Option<Box<Upgrade>>,
    /// A bodyless response whose stream goes on: DATA are dropped until its end.
    drain: bool,
}

impl H2Back {
    /// The first stream of a new connection `sc` to an HTTP/2 server: the connection
    /// starts (driver task, registered unless private).
    pub fn start(sc: ServerConn, server: &ServerRt, opening: Opening) -> H2Back {
        let opening = Opening { max_streams: server.max_reuse.map(|m| u64::from(m) + 1), ..opening };
        let (sock, key, srv, busy) = sc.into_parts();
        // a connection opened apart for a WebSocket stream is not shared
        let home = (opening.shared && !key.ws).then(|| conn::Home { pool_key: server.pool_key, key: key.clone() });
        let conn = conn::start(sock, home, opening.idle, opening.max_streams);
        H2Back::new(conn, srv, key, false, busy, opening, server.pool_key)
    }

    /// A stream on a shared connection found by [`attach`].
    pub fn attached(mut a: H2Attach, server: &ServerRt, opening: Opening) -> H2Back {
        let (conn, busy) = (a.conn.take().expect("a place"), a.busy.take().expect("a slot"));
        H2Back::new(conn, a.srv, std::mem::take(&mut a.key), true, busy, opening, server.pool_key)
    }

    fn new(
        conn: ConnRef,
        srv: usize,
        key: ConnKey,
        from_pool: bool,
        busy: Busy,
        opening: Opening,
        pool_key: usize,
    ) -> H2Back {
        H2Back {
            conn: Some(conn),
            id: None,
            srv,
            key,
            from_pool,
            busy: Some(busy),
            opening,
            pool_key,
            req: Block::default(),
            req_body: Vec::new(),
            req_len: BodyLen::None,
            method: Method::Get,
            upgrade: None,
            tx: AtomicRefCell::default(),
            rx: Rx::default(),
        }
    }

    /// Opens the stream and sends the kept request on it.
    async fn send_kept(&mut self, timeout: Option<Duration>) -> Result<(), IoError> {
        let conn = self.conn.clone().ok_or(IoError::Closed)?;
        if self.upgrade.is_some() {
            settings_known(&conn, timeout).await?;
        }
        let id = {
            let mut s = conn.borrow_mut();
            // a GOAWAY came since the place was taken: the stream would be refused
            if s.dead || s.closing {
                return Err(IoError::Closed);
            }
            let id = s.open();
            if self.upgrade.is_some() && !s.peer.enable_connect_protocol {
                // COMPAT: as HAProxy, a server that does not offer extended CONNECT
                // (RFC 8441 §3) sees the stream reset, the client gets 502
                s.reset(id, ErrorCode::InternalError);
            } else {
                let end = !self.tunnel() && matches!(self.req_len, BodyLen::None | BodyLen::Known(0));
                s.send_headers(id, &self.req, end);
            }
            id
        };
        self.id = Some(id);
        self.rx = Rx { upgrade: self.upgrade.clone(), ..Rx::default() };
        *self.tx.borrow_mut() = match self.req_len {
            _ if self.tunnel() => TxFraming::Tunnel,
            BodyLen::None | BodyLen::Known(0) => TxFraming::Done,
            BodyLen::Known(n) => TxFraming::Length(n),
            BodyLen::Unknown => TxFraming::Chunked(Box::default()),
        };
        if self.req_body.is_empty() {
            return Ok(());
        }
        let tx = TxHalf { conn: &conn, id, tx: &self.tx };
        tx.send_body(&self.req_body, timeout).await
    }

    /// The request opens a tunnel once answered (an upgrade sent as an extended
    /// CONNECT, or a CONNECT): its HEADERS do not end the stream, what the client
    /// sends next goes as DATA.
    fn tunnel(&self) -> bool {
        self.upgrade.is_some() || self.method == Method::Connect
    }

    /// Gives the stream's place back (resetting it if it did not end).
    fn leave(&mut self) {
        if let Some(conn) = self.conn.take() {
            conn.borrow_mut().release(self.id.take());
        }
    }
}

impl Drop for H2Back {
    fn drop(&mut self) {
        self.leave();
    }
}

/// The sending half of an [`H2Back`].
#[derive(Debug, Clone, Copy)]
pub struct TxHalf<'a> {
    conn: &'a ConnRef,
    id: u32,
    tx: &'a AtomicRefCell<TxFraming>,
}

/// The receiving half of an [`H2Back`].
#[derive(Debug)]
pub struct RxHalf<'a> {
    conn: &'a ConnRef,
    id: u32,
    method: Method,
    rx: &'a mut Rx,
}

/// The stream was released for a retry and used again before [`HttpBack::resend`]:
/// a bug in the caller.
const RELEASED: &str = "an HTTP/2 stream, but it was released or never sent";

impl HttpBack for H2Back {
    type Send<'a> = TxHalf<'a>;
    type Recv<'a> = RxHalf<'a>;

    fn srv(&self) -> usize {
        self.srv
    }

    fn reused(&self) -> bool {
        self.from_pool
    }

    fn sni(&self) -> Option<&str> {
        self.key.sni.as_deref()
    }

    fn sock(&self) -> Option<&BackSock> {
        None
    }

    async fn send_request(
        &mut self,
        req: MsgView<'_>,
        how: ReqSend,
        body: &[u8],
        timeout: Option<Duration>,
    ) -> Result<(), IoError> {
        self.upgrade = how.upgrade.then(|| upgrade_of(req)).flatten();
        let protocol = self.upgrade.as_ref().map(|u| &u.protocol[..]);
        let (mut block, mut lower) = (Block::default(), Vec::new());
        request_fields(req, protocol, &mut lower, |n, v| block.push(n, v));
        self.req = block;
        self.req_body.clear();
        self.req_body.extend_from_slice(body);
        self.req_len = how.body;
        self.method = req.head.method;
        self.send_kept(timeout).await
    }

    fn release(&mut self) {
        self.leave();
        self.busy = None;
    }

    async fn resend(&mut self, sc: ServerConn, timeout: Option<Duration>) -> Result<(), IoError> {
        self.leave();
        // COMPAT: a retry to a server that no longer negotiates HTTP/2 fails (502)
        let alpn_h1 = sc.stream.tls().is_some_and(|t| t.info.alpn.as_deref().is_some_and(|a| a != b"h2"));
        let (sock, key, srv, busy) = sc.into_parts();
        let home = (self.opening.shared && !key.ws).then(|| conn::Home { pool_key: self.pool_key, key: key.clone() });
        // COMPAT: a retry on another server keeps the first server's `max-reuse`
        self.conn = Some(conn::start(sock, home, self.opening.idle, self.opening.max_streams));
        (self.srv, self.key, self.busy, self.from_pool) = (srv, key, Some(busy), false);
        if alpn_h1 {
            return Err(IoError::Closed);
        }
        self.send_kept(timeout).await
    }

    fn split(&mut self) -> (TxHalf<'_>, RxHalf<'_>) {
        let conn = self.conn.as_ref().expect(RELEASED);
        let id = self.id.expect(RELEASED);
        (TxHalf { conn, id, tx: &self.tx }, RxHalf { conn, id, method: self.method, rx: &mut self.rx })
    }

    fn finish(mut self) -> Option<(ServerConn, bool)> {
        self.leave();
        None
    }
}

impl BackSend for TxHalf<'_> {
    async fn send_body(&self, bytes: &[u8], timeout: Option<Duration>) -> Result<(), IoError> {
        let mut data = Vec::new();
        let (end, trailers) = {
            let mut tx = self.tx.borrow_mut();
            match &mut *tx {
                TxFraming::Done => return Ok(()),
                TxFraming::Tunnel => {
                    data.extend_from_slice(bytes);
                    (false, None)
                }
                TxFraming::Length(left) => {
                    let n = (bytes.len() as u64).min(*left);
                    data.extend_from_slice(&bytes[..n as usize]);
                    *left -= n;
                    let end = *left == 0;
                    if end {
                        *tx = TxFraming::Done;
                    }
                    (end, None)
                }
                TxFraming::Chunked(u) => {
                    u.feed(bytes, |d| data.extend_from_slice(d));
                    let trailers = u.is_done().then(|| {
                        let mut t = Block { end: true, ..Block::default() };
                        u.trailers().for_each(|(n, v)| t.push(&n.to_ascii_lowercase(), v));
                        t
                    });
                    if trailers.is_some() {
                        *tx = TxFraming::Done;
                    }
                    (trailers.is_some(), trailers.filter(|t| !t.ends.is_empty()))
                }
            }
        };
        send_all(self.conn, self.id, &data, end && trailers.is_none(), timeout).await?;
        if let Some(t) = trailers {
            self.conn.borrow_mut().send_headers(self.id, &t, true);
        }
        Ok(())
    }

    fn raw(&self) -> Option<&BackSock> {
        None
    }

    async fn end_tunnel(&self) {
        let _ = send_all(self.conn, self.id, &[], true, None).await;
    }
}

/// What an upgrade request (`Connection: upgrade` and `Upgrade`) sends as an extended
/// CONNECT; `None` without an `Upgrade` protocol.
fn upgrade_of(req: MsgView<'_>) -> Option<Box<Upgrade>> {
    let protocol = websocket::first_protocol(req)?.to_vec();
    let ws_key = req.first(b"sec-websocket-key").filter(|_| websocket::is_websocket(req)).map(<[u8]>::to_vec);
    Some(Box::new(Upgrade { protocol, ws_key }))
}

/// Waits until the server's first SETTINGS arrived (what it offers is known), at
/// most `timeout`.
async fn settings_known(conn: &ConnRef, timeout: Option<Duration>) -> Result<(), IoError> {
    let wait = poll_fn(|cx| if conn.borrow_mut().settings_known(cx.waker()) { Poll::Ready(()) } else { Poll::Pending });
    match timeout {
        Some(t) => tokio::time::timeout(t, wait).await.map_err(|_| IoError::Timeout),
        None => {
            wait.await;
            Ok(())
        }
    }
}

/// The answer to an extended CONNECT as the `101` of an HTTP/1.1 upgrade (RFC 8441
/// §5, as HAProxy presents it): `connection: upgrade`, `upgrade: <protocol>` and, for
/// WebSocket, the `sec-websocket-accept` of the client's key.
fn as_switching_protocols(res: &mut MsgHead, buf: &mut Vec<u8>, up: &Upgrade) {
    use rampart_proto::http::{HdrKind, Header, Slice};
    let mut push = |b: &[u8]| {
        let start = buf.len() as u32;
        buf.extend_from_slice(b);
        Slice { start, end: buf.len() as u32 }
    };
    res.status = 101;
    // no reason phrase, as HAProxy 2.6 converts it (`HTTP/1.1 101 `)
    res.reason = push(b"");
    res.body = BodyLen::None;
    let (name, value) = (push(b"connection"), push(b"upgrade"));
    res.headers.push(Header { name, value, kind: HdrKind::Connection, drop: false });
    let (name, value) = (push(b"upgrade"), push(&up.protocol));
    res.headers.push(Header { name, value, kind: HdrKind::Upgrade, drop: false });
    let has_accept = res.headers.iter().any(|h| h.kind == HdrKind::SecWebSocketAccept);
    if let Some(key) = up.ws_key.as_deref().filter(|_| !has_accept) {
        let (name, value) = (push(b"sec-websocket-accept"), push(&websocket::accept_key(key)));
        res.headers.push(Header { name, value, kind: HdrKind::SecWebSocketAccept, drop: false });
    }
}

/// Sends `data` on stream `id` as DATA frames as the windows allow (`end`: the last
/// bytes; an empty `data` with `end` sends an empty frame ending the stream).
async fn send_all(
    conn: &ConnRef,
    id: u32,
    mut data: &[u8],
    end: bool,
    timeout: Option<Duration>,
) -> Result<(), IoError> {
    if data.is_empty() && !end {
        return Ok(());
    }
    loop {
        let step = poll_fn(|cx| {
            let mut s = conn.borrow_mut();
            if s.dead || s.streams.get(&id).is_none_or(|st| st.reset.is_some() || st.local_end) {
                return Poll::Ready(None);
            }
            if !s.has_room(cx.waker()) || !s.can_send(id, cx.waker()) {
                return Poll::Pending;
            }
            Poll::Ready(Some(s.send_data(id, data, end)))
        });
        let sent = match timeout {
            Some(t) => tokio::time::timeout(t, step).await.map_err(|_| IoError::Timeout)?,
            None => step.await,
        };
        let n = sent.ok_or(IoError::Closed)?;
        data = &data[n..];
        if data.is_empty() {
            return Ok(());
        }
    }
}

/// What a response wait found on the stream.
enum Got {
    Block(Block),
    Data(Vec<u8>),
    /// The server ended the stream (with trailers, perhaps).
    End(Option<Block>),
    Reset(ErrorCode),
    /// The connection is gone.
    Dead,
}

/// Waits for the next thing stream `id` received: `heads` waits for a header block
/// (else DATA or the end).
async fn next(conn: &ConnRef, id: u32, heads: bool) -> Got {
    poll_fn(|cx| {
        let mut s = conn.borrow_mut();
        let Some(slot) = s.streams.get_mut(&id) else { return Poll::Ready(Got::Dead) };
        if heads {
            if let Some(b) = slot.blocks.pop_front() {
                return Poll::Ready(Got::Block(b));
            }
            if slot.remote_end && slot.reset.is_none() {
                return Poll::Ready(Got::End(None));
            }
        } else if !slot.inbox.is_empty() {
            let data = std::mem::take(&mut slot.inbox);
            s.consumed(id, data.len() as u32);
            return Poll::Ready(Got::Data(data));
        } else if slot.remote_end && slot.reset.is_none() {
            return Poll::Ready(Got::End(slot.blocks.pop_front()));
        }
        if let Some(code) = slot.reset {
            return Poll::Ready(Got::Reset(code));
        }
        if s.dead {
            return Poll::Ready(Got::Dead);
        }
        if let Some(slot) = s.streams.get_mut(&id) {
            slot.recv_waker = Some(cx.waker().clone());
        }
        Poll::Pending
    })
    .await
}

impl BackRecv for RxHalf<'_> {
    async fn recv_head(&mut self, res: &mut MsgHead, wait: HeadWait<'_>) -> Result<Received, HeadError> {
        let got = loop {
            let seen = wait.upload.get();
            let got = match wait.timeout {
                Some(t) => tokio::time::timeout(t, next(self.conn, self.id, true)).await.ok(),
                None => Some(next(self.conn, self.id, true).await),
            };
            match got {
                Some(g) => break g,
                None if wait.upload.get() != seen => {}
                None => return Err(HeadError::Status(504)),
            }
        };
        let block = match got {
            Got::Block(b) => b,
            // refused streams were not processed: another connection may take them
            Got::Reset(ErrorCode::RefusedStream) | Got::Dead => return Err(HeadError::ClosedEarly),
            _ => return Err(HeadError::Status(502)),
        };
        let rx = &mut *self.rx;
        if response_head(block.fields(), block.end, self.method, &mut rx.head_buf, res).is_err() {
            self.conn.borrow_mut().reset(self.id, ErrorCode::ProtocolError);
            return Err(HeadError::Status(502));
        }
        if let Some(up) = rx.upgrade.as_deref().filter(|_| res.status == 200) {
            as_switching_protocols(res, &mut rx.head_buf, up);
            rx.body = BodyLen::None;
            res.arena_max = 16 * 1024;
            return Ok(Received::Final);
        }
        res.arena_max = 16 * 1024;
        rx.body = res.body;
        match res.status {
            101 => Err(HeadError::Status(502)),
            100..=199 => Ok(Received::Interim),
            _ => Ok(Received::Final),
        }
    }

    fn res_buf(&self) -> &[u8] {
        &self.rx.head_buf
    }

    fn res_facts(&self) -> ResFacts {
        ResFacts { body: self.rx.body, until_close: false }
    }

    fn start_body(&mut self, tunnel: bool) -> Result<Range<usize>, BodyError> {
        let rx = &mut *self.rx;
        if tunnel {
            // the stream's DATA are the tunnel's bytes, until it ends
            (rx.chunked, rx.done) = (false, false);
            let end = rx.head_buf.len();
            return Ok(end..end);
        }
        rx.chunked = rx.body == BodyLen::Unknown;
        let ended = self.conn.borrow().streams.get(&self.id).is_none_or(|s| s.remote_end && s.inbox.is_empty());
        // a bodyless response (to HEAD, a 204 or 304) whose HEADERS did not end the
        // stream: its end is waited for (`recv_body` drops any DATA), as HAProxy waits
        // for END_STREAM, so that the next request of the client comes after it
        rx.done = ended && matches!(rx.body, BodyLen::None | BodyLen::Known(0));
        rx.drain = rx.body == BodyLen::None;
        let end = rx.head_buf.len();
        Ok(end..end)
    }

    async fn recv_body(&mut self, timeout: Option<Duration>) -> Result<Option<&[u8]>, BodyError> {
        if self.rx.done {
            return Ok(None);
        }
        let got = match timeout {
            Some(t) => tokio::time::timeout(t, next(self.conn, self.id, false))
                .await
                .map_err(|_| BodyError::From(IoError::Timeout))?,
            None => next(self.conn, self.id, false).await,
        };
        let rx = &mut *self.rx;
        rx.out.clear();
        match got {
            // no body expected: what the server sends anyway is dropped
            Got::Data(_) if rx.drain => {}
            Got::Data(d) if rx.chunked => crate::h1::write::push_chunk(&mut rx.out, &d),
            Got::Data(d) => rx.out = d,
            Got::End(trailers) => {
                rx.done = true;
                if !rx.chunked {
                    return Ok(None);
                }
                rx.out.extend_from_slice(b"0\r\n");
                if let Some(t) = trailers {
                    push_trailers(&mut rx.out, t.fields());
                }
                rx.out.extend_from_slice(b"\r\n");
            }
            Got::Block(_) | Got::Reset(_) | Got::Dead => return Err(BodyError::From(IoError::Closed)),
        }
        Ok(Some(&rx.out))
    }

    fn raw_rest(&mut self) -> Option<RawRest<'_>> {
        None
    }

    fn raw_moved(&mut self, _moved: u64) {}

    fn body_done(&self) -> bool {
        self.rx.done
    }
}
