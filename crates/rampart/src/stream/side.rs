//! What the stream asks of the client side: [`HttpFront`] for an HTTP exchange, the
//! contract every front mux (HTTP/1 today, HTTP/2 later) implements, its response half
//! [`ResSink`], and [`TcpFront`] for a TCP-mode stream (the passthrough mux). The stream
//! decides (rules, backend, server, replies, connect and reuse, retries) and drives the
//! server side through `crate::back`; the front mux does the client's I/O in its
//! protocol: the request bytes and body, the response heads and body, replies.
//! HAProxy counterpart: the stream connectors (`struct stconn`) between a stream and
//! its muxes.

use std::future::Future;
use std::time::Duration;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::action::WaitBody;
use crate::back::{BackRecv, BackRx, BackTx, BodyError, ResFacts};
use crate::backend::ServerConn;
use crate::debug::Trace;
use crate::http::{BodyLen, MsgHead, MsgView, Synth};
use crate::sample::vars::VarStore;
use crate::splice::Activity;
use crate::timer::Timeouts;

use super::Next;

/// What the front mux knows of the request beyond its head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReqMeta {
    /// The client connection may be kept after this exchange.
    pub keep_alive: bool,
    /// The whole request body is already in hand.
    pub body_complete: bool,
    /// The first request of its connection.
    pub first: bool,
    /// A request of this connection went to a server already (`http-reuse safe`
    /// treats the first one apart).
    pub sent_before: bool,
    /// The client asked to upgrade the connection (`Connection: upgrade` + `Upgrade`).
    pub upgrade: bool,
    /// The request body's framing as received (`Known(0)` kept apart from `None`).
    pub body: BodyLen,
}

/// Why no server connection could be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectFail {
    /// No server (all down, full past `timeout queue`, every attempt failed): 503.
    NoServer,
    /// The client left while the stream waited (`option abortonclose`): close. The
    /// server it was connecting to, if one was chosen, is logged.
    Aborted { srv: Option<usize> },
    /// Every server stayed full for `timeout queue` (503, the log's `sQ`), after this
    /// wait.
    QueueTimeout(crate::backend::QueueWait),
    /// The server a rule chose is full and so is its queue, `maxqueue` (503, `SQ`).
    QueueFull,
    /// Every connection attempt to server `srv` failed (503), the last one by timing
    /// out or not, after `retries` retries: the log names the server.
    Failed { srv: usize, timed_out: bool, retries: u32 },
}

/// How forwarding a request to a server ended.
#[derive(Debug)]
pub enum Forwarded {
    /// The response was forwarded; what the client connection does next.
    Done(Next),
    /// No usable response: answer with this error page (502, 503, 504) if nothing was
    /// sent yet.
    Failed(u16),
    /// The response analysers replaced the server's response (`http-response deny`,
    /// `return` ...): the server connection is closed, the stream's response head now
    /// holds the reply; send it with [`HttpFront::reply`].
    Replaced,
    /// The client went away, or the exchange broke after the response started.
    Closed,
}

/// How waiting for the request body ended ([`HttpFront::wait_body`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyWaited {
    /// The body is in hand, or as much of it as asked for, or as much as the buffer
    /// holds.
    Ready,
    /// Answer with this status: 408 when the wait expired, 400 for a body that breaks
    /// its framing.
    Failed(u16),
    /// The client went away.
    Closed,
}

/// What the two halves of an exchange learn from each other while it is forwarded, and
/// what the front counts of it for the log line and the stats.
#[derive(Debug, Default)]
pub struct Progress {
    /// Moves whenever request body bytes reach the server: as for HAProxy, a server
    /// receiving a (slow) upload is not idle, so `timeout server` restarts.
    pub upload: Activity,
    /// Set once something of the response was sent to the client: an error page can
    /// no longer be sent, nor the request retried.
    pub answered: AtomicBool,
    /// Counts the response body bytes sent to the client (`%B`).
    pub download: Activity,
    /// The size of the response head sent to the client (the stats' `bout`).
    pub head: AtomicU64,
    /// The source address of the server connection, when the frontend logs it (`%bi`).
    pub back_src: Option<std::net::SocketAddr>,
}

impl Progress {
    /// Whether something of the response reached the client.
    pub fn answered(&self) -> bool {
        self.answered.load(Ordering::Relaxed)
    }
}

/// How a final response head is to be written to the client.
#[derive(Debug, Clone, Copy)]
pub struct ResSend {
    /// What the server side says of the response's body.
    pub facts: ResFacts,
    /// The client connection stays open after this response.
    pub keep_client: bool,
    /// The connection becomes a tunnel after this head: `101 Switching Protocols`
    /// (`true`: an upgrade) or a 2xx to `CONNECT` (`false`).
    pub tunnel: Option<bool>,
    /// The head and the body bytes given with it are the whole response: the front may
    /// keep them for [`ResSink::flush`] (the server connection is freed first, so that
    /// the client's next request, or another client's, finds it idle).
    pub whole: bool,
}

/// The response half of the client side: what the stream writes to the client while
/// the request half may still read the request body. Shared (`&self`): it holds no
/// state of its own beyond references to the client connection.
pub trait ResSink {
    /// A whole response kept to be written later ([`ResSink::flush`]).
    type Held: Send;

    /// The stream's `-d` output, when debugging.
    fn trace(&self) -> Option<&Trace>;

    /// Writes an interim response head (1xx) as it came; `Err`: the client is gone.
    fn interim(&self, head: MsgView<'_>, progress: &Progress) -> impl Future<Output = Result<(), ()>> + Send;

    /// Writes the final response head with the body bytes that came with it (`body`),
    /// in one write; with [`ResSend::whole`] they may be kept instead and returned, to
    /// write with [`ResSink::flush`]. `Err`: the client is gone.
    fn send_head(
        &self,
        head: MsgView<'_>,
        how: ResSend,
        body: &[u8],
        progress: &Progress,
    ) -> impl Future<Output = Result<Option<Self::Held>, ()>> + Send;

    /// Writes what [`ResSink::send_head`] kept.
    fn flush(&self, held: Self::Held, progress: &Progress) -> impl Future<Output = Result<(), ()>> + Send;

    /// Forwards the rest of the response body from the server side `rx` as it arrives
    /// (`t_server`: the server's inactivity timeout); `rx` is the server side itself, or
    /// the response filters over it (`crate::filter::FilteredRx`).
    fn send_body_from<R: BackRecv + Send>(
        &self,
        rx: &mut R,
        progress: &Progress,
        t_server: Option<Duration>,
    ) -> impl Future<Output = Result<(), BodyError>> + Send;

    /// Resolves once the client gave up this exchange while the server has not
    /// answered yet (an HTTP/2 client's RST_STREAM, a gRPC call cancelled or past its
    /// deadline): the stream stops waiting and the server side is cancelled. Never by
    /// default: an HTTP/1 client's close shows when the response is written to it.
    fn client_gone(&self) -> impl Future<Output = ()> + Send {
        std::future::pending()
    }

    /// Resolves once the client closed its side of the connection (checked every
    /// `every`), for `option abortonclose` while the response head is awaited. Never
    /// by default (an HTTP/2 client's close ends the whole connection).
    fn client_closed(&self, every: Duration) -> impl Future<Output = ()> + Send + '_ {
        let _ = every;
        std::future::pending()
    }
}

/// The client side of an HTTP exchange, as the stream sees it.
pub trait HttpFront {
    /// The response half, which writes to the client while the request half reads.
    type Sink: ResSink + Sync;

    /// The buffer the request head's slices point into.
    fn req_buf(&self) -> &[u8];

    fn req_meta(&self) -> ReqMeta;

    /// The request body bytes in hand, without their transfer framing (a chunked body's
    /// data only); `None` when the request has no body.
    fn req_body(&self) -> Option<&[u8]>;

    /// The request body bytes in hand as received (their framing included): what goes
    /// to the server with the head.
    fn req_body_raw(&self) -> &[u8];

    /// Reads more of the request body (`wait-for-body`, `option http-buffer-request`):
    /// until the whole body is in hand, or at least `w.at_least` bytes of it, or the
    /// buffer is full; for at most `w.time`.
    /// `expect_continue`: the stream removed the request's `Expect: 100-continue`, the
    /// front tells the client to go on (`100 Continue` on HTTP/1.1).
    fn wait_body(&mut self, w: WaitBody, expect_continue: bool) -> impl Future<Output = BodyWaited> + Send;

    /// What is left of the request's buffer for rewrites: `tune.bufsize` less the head
    /// and the body bytes in hand (HAProxy's rewrites fail when the buffer is full).
    fn rewrite_room(&self) -> usize;

    /// Sends an interim response (`103 Early Hints`) before the final one; nothing when
    /// the client's protocol has none (HTTP/1.0).
    fn interim(&mut self, head: &MsgHead) -> impl Future<Output = ()> + Send;

    /// The `sess.` variables of the connection, if it has some (taken for the
    /// exchange, given back with [`HttpFront::keep_sess_vars`]).
    fn take_sess_vars(&mut self) -> Option<VarStore>;

    /// Keeps the `sess.` variables with the connection for its next requests.
    fn keep_sess_vars(&mut self, vars: VarStore);

    /// What the TCP stream this connection came from hands its first request's stream
    /// (`switch-mode http`, see [`super::upgrade`]); asked for the first request only.
    fn take_upgraded(&mut self) -> Option<Box<super::upgrade::Upgraded>> {
        None
    }

    /// The server connection kept for this client connection alone (`http-reuse
    /// never`), if any.
    fn take_private(&mut self) -> Option<ServerConn>;

    /// Keeps `sc` for this client connection's next requests (`http-reuse never`).
    fn keep_private(&mut self, sc: ServerConn);

    /// Completes when the client closes its side (`option abortonclose`, checked every
    /// `every`).
    fn client_gone(&self, every: Duration) -> impl Future<Output = ()> + Send + '_;

    /// The stream's `-d` output, when debugging.
    fn trace(&self) -> Option<&Trace>;

    /// The request head and the body bytes in hand went to a server: forget them (what
    /// follows stays), and note that this connection sent a request.
    fn req_sent(&mut self);

    /// The response half.
    fn sink(&self) -> Self::Sink;

    /// Forwards the rest of the request body to the server side `tx` as it arrives
    /// (`t_client`: the client's inactivity timeout, `None` when `t_server` bounds the
    /// phase; `t_server`: the server's).
    fn upload<'x>(
        &'x mut self,
        tx: &'x BackTx<'_>,
        progress: &'x Progress,
        t_client: Option<Duration>,
        t_server: Option<Duration>,
    ) -> impl Future<Output = Result<(), BodyError>> + Send + 'x;

    /// After `101 Switching Protocols` (or a 2xx to `CONNECT`): bytes flow both ways
    /// untouched between the client and the server side (`tx` sends, `rx` receives:
    /// [`BackRecv::recv_body`] gives the server's bytes until it closes), under
    /// `timeout tunnel` (`be`: the backend's timeouts, the stream's overrides applied),
    /// until both sides closed.
    fn tunnel(&mut self, tx: &BackTx<'_>, rx: &mut BackRx<'_>, be: Timeouts) -> impl Future<Output = ()> + Send;

    /// Adds what an exchange with a server measured to the exchange's counts.
    fn account(&mut self, progress: &Progress);

    /// Sends a response rampart built; `res` is its head (slices into `reply.buf` or
    /// its arena).
    fn reply(&mut self, res: &MsgHead, reply: &Synth<'_>) -> impl Future<Output = Next> + Send;

    /// Sends a response rampart built whose body is read in pieces from `out.body`, each
    /// written before the next is read (a cache hit through the response filters,
    /// `crate::filter::object`); `res` is its head (slices into `out.buf`).
    fn reply_streamed<R: BackRecv + Send>(
        &mut self,
        res: &MsgHead,
        out: Streamed<'_, R>,
    ) -> impl Future<Output = Next> + Send;

    /// Makes the client connection disappear without telling the client
    /// (`silent-drop`); it closes when the exchange returns.
    fn silent_drop(&mut self);

    /// Sets the client socket's options rules asked for (`set-mark`, `set-tos`).
    fn set_fc(&mut self, fc: crate::action::sockopt::FcPending);

    /// Sends raw bytes (an `errorfile` rampart's parser cannot read), then closes.
    fn reply_raw(&mut self, bytes: &[u8]) -> impl Future<Output = Next> + Send;

    /// What the front measured, for the log line and the byte counters of the stats.
    fn log_info(&self) -> LogInfo {
        LogInfo::default()
    }
}

/// A built response whose body comes in pieces ([`HttpFront::reply_streamed`]).
#[derive(Debug)]
pub struct Streamed<'x, R> {
    /// The buffer the head's slices point into.
    pub buf: &'x [u8],
    /// The body's framing as the client gets it.
    pub facts: ResFacts,
    /// The body bytes that go with the head; `whole`: they are all of it.
    pub first: &'x [u8],
    pub whole: bool,
    /// The client connection closes after this response.
    pub close: bool,
    /// Where the rest of the body is read.
    pub body: &'x mut R,
}

/// What the front mux measured of an exchange, for its log line.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogInfo {
    /// Body bytes sent to the client (the response head is counted apart, as HAProxy
    /// counts it).
    pub sent: u64,
    /// Request body bytes received after those that came with the head.
    pub received: u64,
    /// Response head bytes sent to the client, as written (`bout` of the stats).
    pub head_sent: u64,
    /// Request bytes that came with the head, the head included (`bin` of the stats).
    pub head_received: u64,
    /// The source address of the server connection used.
    pub back_src: Option<std::net::SocketAddr>,
}

// === TCP ===

/// What came of waiting for a peer's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Bytes arrived.
    Data,
    /// The peer closed its side (or nothing can arrive any more).
    End,
    /// The wait expired with nothing new.
    Timeout,
    /// The connection failed.
    Error,
}

/// What the `tcp-response content` rules decided on the server's first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResVerdict {
    /// Read more, until the instant given at the latest (`None`: no deadline), then
    /// ask again.
    Wait(Option<tokio::time::Instant>),
    /// A Lua action waits (a sleep, a socket): wait as it asks, until the instant
    /// given at the latest, then ask again on the same data (the action resumes).
    LuaWait(crate::action::lua::LuaWait, Option<tokio::time::Instant>),
    /// Send what arrived to the client, then forward both ways.
    Forward,
    /// Close the server connection now, send the client what arrived, then end.
    CloseServer,
    /// Close the client connection (and the server's).
    Reject,
    /// Drop the client connection without telling the client.
    SilentDrop,
}

/// How a TCP stream ends the client connection when a rule ended it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpClose {
    /// `reject`, a timeout, no backend or no server: close, having read what the
    /// client sent (a FIN, not a reset).
    Close,
    /// `silent-drop`.
    SilentDrop,
}

/// The client side of a TCP stream, as the stream sees it: the front mux (TCP
/// passthrough) does the I/O, the stream decides.
pub trait TcpFront {
    /// Reads what the client sent into `buf` (appended), waiting at most `wait`
    /// (`None`: as long as it takes; zero: only what already arrived).
    fn read_req(&mut self, buf: &mut Vec<u8>, wait: Option<Duration>) -> impl Future<Output = Input> + Send;

    /// Connects to a server of backend `be` (`forced`: the one a `use-server`,
    /// `persist rdp-cookie` or `stick` rule chose; `key`: the hash key of a hashing
    /// backend); returns the server connected to, `None`: no server (the client is
    /// then closed).
    /// `cx` makes the PROXY header of the connection (`server ... send-proxy*`).
    fn connect(
        &mut self,
        be: usize,
        forced: Option<usize>,
        key: Option<u32>,
        cx: crate::backend::send_proxy::ConnectCtx<'_>,
    ) -> impl Future<Output = Option<usize>> + Send;

    /// Sends `req` (what the request rules read) to the server, then forwards both ways
    /// until both ends closed. With `on_response`, the server's first bytes are held
    /// until it says what to do: it is called once at once with nothing, then each time
    /// bytes arrive (or the server closes: its second argument), with all the bytes
    /// held so far, which it may change (Lua actions). What it puts in its third
    /// argument goes to the client before anything else (bytes scripts forwarded).
    fn forward<R>(&mut self, be: usize, req: &[u8], on_response: Option<R>) -> impl Future<Output = ()> + Send
    where
        R: FnMut(&mut Vec<u8>, bool, &mut Vec<u8>) -> ResVerdict + Send;

    /// Ends the client connection.
    fn close(&mut self, how: TcpClose);

    /// Sets the client socket's options rules asked for (`set-mark`, `set-tos`).
    fn set_fc(&mut self, fc: crate::action::sockopt::FcPending);

    /// A Lua service (number `id`) serves the stream in place of a server: the log
    /// line names it, with no queue and no connect time.
    fn service_start(&mut self, id: usize);

    /// Closes the client connection's sending side (a FIN), reading goes on.
    fn shut_write(&mut self);

    /// A copy of the stream's log record so far, when the frontend logs (HAProxy 3.x
    /// `do-log` in the content rules).
    fn log_record(&self) -> Option<crate::log::StreamLog> {
        None
    }

    /// Sends `data` to the client (what a service produced), within `timeout
    /// client`; `false` when that failed (the client is gone or stopped reading).
    fn send(&mut self, data: &[u8]) -> impl Future<Output = bool> + Send;

    /// The service ended: it read `bytes.0` bytes of the client's and sent it
    /// `bytes.1`; `client_timeout`: it ended because the client stayed silent past
    /// `timeout client` (the log's `cD`).
    fn service_end(&mut self, be: usize, bytes: (u64, u64), client_timeout: bool);
}
