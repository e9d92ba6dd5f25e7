//! What the stream asks of the client side: [`HttpFront`] for an HTTP exchange, the
//! contract every front mux (HTTP/1 today, HTTP/2 later) implements, and [`TcpFront`]
//! for a TCP-mode stream (the passthrough mux). The stream decides (rules,
//! backend, server, replies); the mux does the I/O in its protocol: connecting or
//! reusing a server connection, writing the request head with the rewrites, streaming
//! both bodies, reading the response head, writing responses.
//! HAProxy counterpart: the stream connectors (`struct stconn`) between a stream and
//! its muxes.

use std::future::Future;
use std::time::Duration;

use crate::action::state::TimeoutOverride;
use crate::action::WaitBody;
use crate::http::{MsgHead, Synth};
use crate::sample::vars::VarStore;

use super::ana::Verdict;
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
}

/// Why no server connection could be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectFail {
    /// No server (all down, full past `timeout queue`, every attempt failed): 503.
    NoServer,
    /// The client left while the stream waited (`option abortonclose`): close.
    Aborted,
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

/// The client side of an HTTP exchange, as the stream sees it.
pub trait HttpFront {
    /// The buffer the request head's slices point into.
    fn req_buf(&self) -> &[u8];

    fn req_meta(&self) -> ReqMeta;

    /// The request body bytes in hand, without their transfer framing (a chunked body's
    /// data only); `None` when the request has no body.
    fn req_body(&self) -> Option<&[u8]>;

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

    /// Gets a connection to a server of backend `be`: `srv` when a rule chose it (and it
    /// is usable), else the balancer's pick (with `key`, the hash key of a hashing
    /// backend); an idle one when `http-reuse` allows. `cx` makes the PROXY header of
    /// a new connection (`server ... send-proxy*`).
    fn connect(
        &mut self,
        be: usize,
        srv: Option<usize>,
        key: Option<u32>,
        cx: crate::backend::send_proxy::ConnectCtx<'_>,
    ) -> impl Future<Output = Result<Conn, ConnectFail>> + Send;

    /// Sends the request (`req`, its slices into [`HttpFront::req_buf`]) over `conn`,
    /// streams its body, reads the response head into `res`, and calls `on_response`
    /// with it (and the buffer its slices point into) before writing it to the client:
    /// the response analysers run there and may rewrite it or replace it. `tmo` holds
    /// the timeouts rules set for this stream (`set-timeout`); `l7_retry`: whether the
    /// backend's `retry-on` response conditions apply (no `disable-l7-retry`).
    #[allow(clippy::too_many_arguments)]
    fn forward<R>(
        &mut self,
        conn: Conn,
        be: usize,
        req: &MsgHead,
        res: &mut MsgHead,
        tmo: TimeoutOverride,
        l7_retry: bool,
        on_response: R,
    ) -> impl Future<Output = Forwarded> + Send
    where
        R: FnMut(&mut MsgHead, &[u8]) -> Verdict + Send;

    /// Sends a response rampart built; `res` is its head (slices into `reply.buf` or
    /// its arena).
    fn reply(&mut self, res: &MsgHead, reply: &Synth<'_>) -> impl Future<Output = Next> + Send;

    /// Makes the client connection disappear without telling the client
    /// (`silent-drop`); it closes when the exchange returns.
    fn silent_drop(&mut self);

    /// Sends raw bytes (an `errorfile` rampart's parser cannot read), then closes.
    fn reply_raw(&mut self, bytes: &[u8]) -> impl Future<Output = Next> + Send;

    /// What the front measured, for the log line and the byte counters of the stats.
    fn log_info(&self) -> LogInfo {
        LogInfo::default()
    }
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

/// A server connection on its way from [`HttpFront::connect`] to
/// [`HttpFront::forward`]; opaque to the stream.
pub type Conn = crate::backend::ServerConn;

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

    /// Connects to a server of backend `be`; `false`: no server (the client is then
    /// closed).
    /// `cx` makes the PROXY header of the connection (`server ... send-proxy*`).
    fn connect(
        &mut self,
        be: usize,
        cx: crate::backend::send_proxy::ConnectCtx<'_>,
    ) -> impl Future<Output = bool> + Send;

    /// Sends `req` (what the request rules read) to the server, then forwards both ways
    /// until both ends closed. With `on_response`, the server's first bytes are held
    /// until it says what to do: it is called once at once with nothing, then each time
    /// bytes arrive (or the server closes: its second argument), with all the bytes
    /// held so far.
    fn forward<R>(&mut self, be: usize, req: &[u8], on_response: Option<R>) -> impl Future<Output = ()> + Send
    where
        R: FnMut(&[u8], bool) -> ResVerdict + Send;

    /// Ends the client connection.
    fn close(&mut self, how: TcpClose);
}
