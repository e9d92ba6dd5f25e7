//! What the stream asks of the client side of an HTTP exchange: the contract every
//! front mux (HTTP/1 today, HTTP/2 later) implements. The stream decides (rules,
//! backend, server, replies); the mux does the I/O in its protocol: connecting or
//! reusing a server connection, writing the request head with the rewrites, streaming
//! both bodies, reading the response head, writing responses.
//! HAProxy counterpart: the stream connectors (`struct stconn`) between a stream and
//! its muxes.

use std::future::Future;

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

/// The client side of an HTTP exchange, as the stream sees it.
pub trait HttpFront {
    /// The buffer the request head's slices point into.
    fn req_buf(&self) -> &[u8];

    fn req_meta(&self) -> ReqMeta;

    /// The `sess.` variables of the connection, if it has some (taken for the
    /// exchange, given back with [`HttpFront::keep_sess_vars`]).
    fn take_sess_vars(&mut self) -> Option<Box<VarStore>>;

    /// Keeps the `sess.` variables with the connection for its next requests.
    fn keep_sess_vars(&mut self, vars: Box<VarStore>);

    /// Gets a connection to a server of backend `be`: `srv` when a rule chose it (and it
    /// is usable), else the balancer's pick; an idle one when `http-reuse` allows.
    fn connect(&mut self, be: usize, srv: Option<usize>) -> impl Future<Output = Result<Conn, ConnectFail>> + Send;

    /// Sends the request (`req`, its slices into [`HttpFront::req_buf`]) over `conn`,
    /// streams its body, reads the response head into `res`, and calls `on_response`
    /// with it (and the buffer its slices point into) before writing it to the client:
    /// the response analysers run there and may rewrite it or replace it.
    fn forward<R>(
        &mut self,
        conn: Conn,
        be: usize,
        req: &MsgHead,
        res: &mut MsgHead,
        on_response: R,
    ) -> impl Future<Output = Forwarded> + Send
    where
        R: FnMut(&mut MsgHead, &[u8]) -> Verdict + Send;

    /// Sends a response rampart built; `res` is its head (slices into `reply.buf` or
    /// its arena).
    fn reply(&mut self, res: &MsgHead, reply: &Synth<'_>) -> impl Future<Output = Next> + Send;

    /// Sends raw bytes (an `errorfile` rampart's parser cannot read), then closes.
    fn reply_raw(&mut self, bytes: &[u8]) -> impl Future<Output = Next> + Send;
}

/// A server connection on its way from [`HttpFront::connect`] to
/// [`HttpFront::forward`]; opaque to the stream.
pub type Conn = crate::backend::ServerConn;
