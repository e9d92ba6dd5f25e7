//! The server side of an HTTP exchange: a server connection spoken to as an HTTP client.
//! The stream's forwarding step (`stream::forward`) gets the connection (connect or
//! reuse, retries, redispatch: `crate::backend`), then drives it through [`HttpBack`]:
//! send the request head and body, receive interim responses, the final head and the
//! body. Each protocol implements the interface in its client role (HTTP/1 today:
//! [`h1::H1Back`]); [`BackConn`] is the one the stream holds, whatever the protocol.
//! HAProxy counterpart: the back side of the muxes (mux_h1.c's client role) under the
//! stream connector `scb`.
//!
//! While a request body still streams to the server the response may come back:
//! [`HttpBack::split`] gives the sending half ([`BackSend`]) to the client side's upload
//! and the receiving half ([`BackRecv`]) to the response.
//!
//! Body bytes travel in the framing of the client side's HTTP/1 message (chunk sizes and
//! trailers included), which an HTTP/1 server connection writes as they are: the
//! HTTP/1-to-HTTP/1 path copies nothing and splices long bodies. A side of another
//! protocol decodes them (`crate::h1::body::Unchunk`: data, then trailers).
//!
//! - `h1`: [`h1::H1Back`], HTTP/1 in the client role
//! - `h2`: [`h2::H2Back`], one stream of a shared HTTP/2 connection
//! - `fcgi`: [`fcgi::FcgiBack`], one request to a FastCGI application

pub mod fcgi;
pub mod h1;
pub mod h2;
pub mod send_name;

use std::future::Future;
use std::time::Duration;

use crate::backend::ServerConn;
use crate::conn_pool::BackSock;
use crate::debug::Trace;
use crate::http::{BodyLen, MsgHead, MsgView};
use crate::io::IoError;
use crate::splice::Activity;

/// What the server side needs to know of the request beyond its head.
#[derive(Debug, Clone, Copy)]
pub struct ReqSend {
    /// The request's own body framing as received (`Known(0)` kept apart from `None`):
    /// the framing header written back if a rule removed the message's own.
    pub body: BodyLen,
    /// The server connection may be kept after this exchange (`http-reuse`,
    /// `option http-server-close` ...).
    pub keep_alive: bool,
    /// `option http-pretend-keepalive`: the request head says keep-alive even when the
    /// connection is closed after this exchange.
    pub pretend_keepalive: bool,
    /// The client asked to upgrade the connection (`Connection: upgrade` + `Upgrade`).
    pub upgrade: bool,
}

/// What a wait for a response head may take and report.
#[derive(Debug, Clone, Copy)]
pub struct HeadWait<'a> {
    /// The server's inactivity timeout (`timeout server`, or the stream's `set-timeout`).
    pub timeout: Option<Duration>,
    /// Moves while request body bytes still reach the server: as for HAProxy, a server
    /// receiving a (slow) upload is not idle, so the timeout restarts.
    pub upload: &'a Activity,
    /// `-d` output: the stream's trace and the backend's name.
    pub trace: Option<(&'a Trace, &'a str)>,
}

/// A response head received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// An interim response (1xx but 101): forward it, then wait for the next head.
    Interim,
    /// The final response (or `101 Switching Protocols`).
    Final,
}

/// Why no response head could be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadError {
    /// The server closed or reset before sending any byte (a retry may be possible).
    ClosedEarly,
    /// No usable head: 502 (invalid, or a close within it) or 504 (`timeout server`).
    Status(u16),
}

/// Why forwarding a body stopped early.
#[derive(Debug)]
pub enum BodyError {
    /// The sender's side failed (timeout, reset, early close).
    From(IoError),
    /// The receiver's side failed.
    To(IoError),
    /// The bytes break the body's framing.
    Framing,
}

/// What the client side needs to know of the response to write it in its protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResFacts {
    /// The response's own body framing (`Known(0)` kept apart from `None`); `Unknown`
    /// for a chunked body or one that ends with the connection.
    pub body: BodyLen,
    /// The body ends when the server closes.
    pub until_close: bool,
}

/// The part of a body that can move between the sockets without passing through user
/// space (splice(2)): what is left of it once the bytes in hand are sent.
#[derive(Debug)]
pub struct RawRest<'a> {
    pub sock: &'a BackSock,
    /// Bytes left; `None`: until the server closes.
    pub len: Option<u64>,
}

/// A server connection in use by one stream, as an HTTP client. What the stream calls,
/// in this order: [`HttpBack::send_request`] (and [`HttpBack::resend`] for a retry), then
/// on the receiving half [`BackRecv::recv_head`] until a final head,
/// [`BackRecv::start_body`], the body, and [`HttpBack::finish`].
pub trait HttpBack {
    type Send<'a>: BackSend
    where
        Self: 'a;
    type Recv<'a>: BackRecv
    where
        Self: 'a;

    /// The server the exchange went to (its index in the backend).
    fn srv(&self) -> usize;

    /// Whether the connection carried exchanges before this one (its failure before
    /// any response byte allows a transparent retry on a new connection).
    fn reused(&self) -> bool;

    /// The SNI the connection announced.
    fn sni(&self) -> Option<&str>;

    /// The socket, when the exchange has one to itself.
    fn sock(&self) -> Option<&BackSock>;

    /// Sends the request head `req` with the body bytes already in hand, in one write;
    /// keeps both to send them again on another connection ([`HttpBack::resend`]).
    fn send_request(
        &mut self,
        req: MsgView<'_>,
        how: ReqSend,
        body: &[u8],
        timeout: Option<Duration>,
    ) -> impl Future<Output = Result<(), IoError>> + Send;

    /// Drops the connection, freeing its slot for the streams waiting for one, and
    /// keeps the request for [`HttpBack::resend`], the only call that may follow.
    fn release(&mut self);

    /// Moves the exchange to the new connection `sc` (the old one, if not released, is
    /// dropped; what it received is forgotten) and sends the kept request on it: a
    /// retry.
    fn resend(&mut self, sc: ServerConn, timeout: Option<Duration>)
        -> impl Future<Output = Result<(), IoError>> + Send;

    /// The two halves: request body bytes go out through one while the response comes
    /// in through the other.
    fn split(&mut self) -> (Self::Send<'_>, Self::Recv<'_>);

    /// Ends the exchange: the connection, and whether it may carry another request (the
    /// response ended cleanly, nothing followed it, the server keeps it open); `None`
    /// for a stream of a shared connection, which stays with its driver.
    fn finish(self) -> Option<(ServerConn, bool)>;
}

/// The sending half of a server connection.
pub trait BackSend {
    /// Sends request body bytes.
    fn send_body(&self, bytes: &[u8], timeout: Option<Duration>) -> impl Future<Output = Result<(), IoError>> + Send;

    /// The socket itself, when bytes may be spliced into it (a request body, a tunnel).
    fn raw(&self) -> Option<&BackSock>;

    /// A tunnel's client side ended: the server is told nothing more comes (a FIN,
    /// an HTTP/2 stream's END_STREAM).
    fn end_tunnel(&self) -> impl Future<Output = ()> + Send;
}

/// The receiving half of a server connection.
pub trait BackRecv {
    /// Waits for the next response head and fills `res` with it (its slices into
    /// [`BackRecv::res_buf`]).
    fn recv_head(
        &mut self,
        res: &mut MsgHead,
        wait: HeadWait<'_>,
    ) -> impl Future<Output = Result<Received, HeadError>> + Send;

    /// The buffer the last response head's slices point into.
    fn res_buf(&self) -> &[u8];

    /// What the client side needs to know of the final response.
    fn res_facts(&self) -> ResFacts;

    /// Starts the final response's body: where the body bytes that came with the head
    /// are in [`BackRecv::res_buf`], to send with it. For a connection that becomes a
    /// `tunnel`, every byte received after the head.
    fn start_body(&mut self, tunnel: bool) -> Result<std::ops::Range<usize>, BodyError>;

    /// The next body bytes, as they arrive; `None` once the body ended.
    fn recv_body(&mut self, timeout: Option<Duration>)
        -> impl Future<Output = Result<Option<&[u8]>, BodyError>> + Send;

    /// The rest of the body, when nothing of it is in hand and it may be spliced.
    fn raw_rest(&mut self) -> Option<RawRest<'_>>;

    /// Notes that `moved` bytes of the rest went through [`BackRecv::raw_rest`]'s socket
    /// (all of it for a body that ends with the connection).
    fn raw_moved(&mut self, moved: u64);

    /// Whether the response body ended.
    fn body_done(&self) -> bool;
}

/// The server side of one exchange, whatever its protocol.
#[derive(Debug)]
#[allow(clippy::large_enum_variant, reason = "the HTTP/1 exchange is the common one: not boxed")]
pub enum BackConn {
    H1(h1::H1Back),
    // PERF: boxed, so that the HTTP/1 exchange does not carry HTTP/2's size.
    H2(Box<h2::H2Back>),
    // PERF: boxed, as HTTP/2.
    Fcgi(Box<fcgi::FcgiBack>),
}

/// The sending half of a [`BackConn`].
#[derive(Debug, Clone, Copy)]
pub enum BackTx<'a> {
    H1(h1::TxHalf<'a>),
    H2(h2::TxHalf<'a>),
    Fcgi(fcgi::TxHalf<'a>),
}

/// The receiving half of a [`BackConn`].
#[derive(Debug)]
pub enum BackRx<'a> {
    H1(h1::RxHalf<'a>),
    H2(h2::RxHalf<'a>),
    Fcgi(fcgi::RxHalf<'a>),
}

impl BackConn {
    /// A server connection spoken to in HTTP/1 (`bufsize`: `tune.bufsize`; `max_head`:
    /// the most a response head may take; `relax`: `option accept-invalid-http-response`).
    pub fn h1(sc: ServerConn, bufsize: usize, max_head: usize, relax: bool) -> BackConn {
        BackConn::H1(h1::H1Back::new(sc, bufsize, max_head, relax))
    }

    /// The server side for a connection `conn` to server `srv` of backend `be`: a
    /// stream of a shared HTTP/2 connection, the first one of a new connection that
    /// speaks HTTP/2, a request to a FastCGI application, or an HTTP/1 exchange.
    /// `client`: the client connection (the CGI variables of a FastCGI request).
    pub fn new(
        conn: crate::backend::Connected<h2::H2Attach>,
        rt: &crate::proxy::Runtime,
        be: usize,
        client: &crate::sample::ctx::ConnInfo,
    ) -> BackConn {
        use crate::backend::Connected;
        match conn {
            Connected::Own(sc) => {
                let px = &rt.proxies[be];
                let server = &px.be.servers[sc.srv];
                if !h2::speaks_h2(server, &sc) {
                    if server.proto == Some(rampart_cfg::model::BindProto::Fcgi) {
                        return BackConn::fcgi(sc, px, client);
                    }
                    let mut b = h1::H1Back::new(sc, rt.bufsize, rt.max_head, px.accept_invalid_res);
                    if let Some(hdr) = px.be.send_name.as_deref() {
                        b.send_name = Some(send_name::SendName::new(hdr, &server.name));
                    }
                    b.case_adjust = px.h1_case_server.clone();
                    return BackConn::H1(b);
                }
                BackConn::H2(Box::new(h2::H2Back::start(sc, server, h2::Opening::of(rt, be))))
            }
            Connected::Shared(a) => {
                let server = &rt.proxies[be].be.servers[a.srv];
                BackConn::H2(Box::new(h2::H2Back::attached(a, server, h2::Opening::of(rt, be))))
            }
        }
    }
}

impl BackConn {
    /// `http-send-name-header`: the kept request goes to server `name` now (before a
    /// [`HttpBack::resend`] to another server).
    pub fn rename_server(&mut self, name: &str) {
        if let BackConn::H1(b) = self {
            b.rename_server(name);
        }
    }

    /// A request to the FastCGI application of backend `px` (`proto fcgi`); the
    /// configuration checks made sure the backend has one.
    #[cold]
    fn fcgi(sc: ServerConn, px: &crate::proxy::ProxyRt, client: &crate::sample::ctx::ConnInfo) -> BackConn {
        let app = px.fcgi.clone().expect("a FastCGI server's backend has an fcgi-app");
        let client = fcgi::Client { src: client.src, dst: client.dst(), https: client.tls().is_some() };
        BackConn::Fcgi(Box::new(fcgi::FcgiBack::new(sc, app, client)))
    }
}

// === impl BackConn: dispatch to the protocol ===

impl HttpBack for BackConn {
    type Send<'a> = BackTx<'a>;
    type Recv<'a> = BackRx<'a>;

    fn srv(&self) -> usize {
        match self {
            BackConn::H1(b) => b.srv(),
            BackConn::H2(b) => b.srv(),
            BackConn::Fcgi(b) => b.srv(),
        }
    }

    fn reused(&self) -> bool {
        match self {
            BackConn::H1(b) => b.reused(),
            BackConn::H2(b) => b.reused(),
            BackConn::Fcgi(b) => b.reused(),
        }
    }

    fn sni(&self) -> Option<&str> {
        match self {
            BackConn::H1(b) => b.sni(),
            BackConn::H2(b) => b.sni(),
            BackConn::Fcgi(b) => b.sni(),
        }
    }

    fn sock(&self) -> Option<&BackSock> {
        match self {
            BackConn::H1(b) => b.sock(),
            BackConn::H2(_) => None,
            BackConn::Fcgi(b) => b.sock(),
        }
    }

    async fn send_request(
        &mut self,
        req: MsgView<'_>,
        how: ReqSend,
        body: &[u8],
        timeout: Option<Duration>,
    ) -> Result<(), IoError> {
        match self {
            BackConn::H1(b) => b.send_request(req, how, body, timeout).await,
            BackConn::H2(b) => b.send_request(req, how, body, timeout).await,
            BackConn::Fcgi(b) => b.send_request(req, how, body, timeout).await,
        }
    }

    fn release(&mut self) {
        match self {
            BackConn::H1(b) => b.release(),
            BackConn::H2(b) => b.release(),
            BackConn::Fcgi(b) => b.release(),
        }
    }

    async fn resend(&mut self, sc: ServerConn, timeout: Option<Duration>) -> Result<(), IoError> {
        match self {
            BackConn::H1(b) => b.resend(sc, timeout).await,
            BackConn::H2(b) => b.resend(sc, timeout).await,
            BackConn::Fcgi(b) => b.resend(sc, timeout).await,
        }
    }

    fn split(&mut self) -> (BackTx<'_>, BackRx<'_>) {
        match self {
            BackConn::H1(b) => {
                let (tx, rx) = b.split();
                (BackTx::H1(tx), BackRx::H1(rx))
            }
            BackConn::H2(b) => {
                let (tx, rx) = b.split();
                (BackTx::H2(tx), BackRx::H2(rx))
            }
            BackConn::Fcgi(b) => {
                let (tx, rx) = b.split();
                (BackTx::Fcgi(tx), BackRx::Fcgi(rx))
            }
        }
    }

    fn finish(self) -> Option<(ServerConn, bool)> {
        match self {
            BackConn::H1(b) => b.finish(),
            BackConn::H2(b) => b.finish(),
            BackConn::Fcgi(b) => b.finish(),
        }
    }
}

impl BackSend for BackTx<'_> {
    async fn send_body(&self, bytes: &[u8], timeout: Option<Duration>) -> Result<(), IoError> {
        match self {
            BackTx::H1(t) => t.send_body(bytes, timeout).await,
            BackTx::H2(t) => t.send_body(bytes, timeout).await,
            BackTx::Fcgi(t) => t.send_body(bytes, timeout).await,
        }
    }

    fn raw(&self) -> Option<&BackSock> {
        match self {
            BackTx::H1(t) => t.raw(),
            BackTx::H2(t) => t.raw(),
            BackTx::Fcgi(t) => t.raw(),
        }
    }

    async fn end_tunnel(&self) {
        match self {
            BackTx::H1(t) => t.end_tunnel().await,
            BackTx::H2(t) => t.end_tunnel().await,
            BackTx::Fcgi(t) => t.end_tunnel().await,
        }
    }
}

impl BackRecv for BackRx<'_> {
    async fn recv_head(&mut self, res: &mut MsgHead, wait: HeadWait<'_>) -> Result<Received, HeadError> {
        match self {
            BackRx::H1(r) => r.recv_head(res, wait).await,
            BackRx::H2(r) => r.recv_head(res, wait).await,
            BackRx::Fcgi(r) => r.recv_head(res, wait).await,
        }
    }

    fn res_buf(&self) -> &[u8] {
        match self {
            BackRx::H1(r) => r.res_buf(),
            BackRx::H2(r) => r.res_buf(),
            BackRx::Fcgi(r) => r.res_buf(),
        }
    }

    fn res_facts(&self) -> ResFacts {
        match self {
            BackRx::H1(r) => r.res_facts(),
            BackRx::H2(r) => r.res_facts(),
            BackRx::Fcgi(r) => r.res_facts(),
        }
    }

    fn start_body(&mut self, tunnel: bool) -> Result<std::ops::Range<usize>, BodyError> {
        match self {
            BackRx::H1(r) => r.start_body(tunnel),
            BackRx::H2(r) => r.start_body(tunnel),
            BackRx::Fcgi(r) => r.start_body(tunnel),
        }
    }

    async fn recv_body(&mut self, timeout: Option<Duration>) -> Result<Option<&[u8]>, BodyError> {
        match self {
            BackRx::H1(r) => r.recv_body(timeout).await,
            BackRx::H2(r) => r.recv_body(timeout).await,
            BackRx::Fcgi(r) => r.recv_body(timeout).await,
        }
    }

    fn raw_rest(&mut self) -> Option<RawRest<'_>> {
        match self {
            BackRx::H1(r) => r.raw_rest(),
            BackRx::H2(r) => r.raw_rest(),
            BackRx::Fcgi(r) => r.raw_rest(),
        }
    }

    fn raw_moved(&mut self, moved: u64) {
        match self {
            BackRx::H1(r) => r.raw_moved(moved),
            BackRx::H2(r) => r.raw_moved(moved),
            BackRx::Fcgi(r) => r.raw_moved(moved),
        }
    }

    fn body_done(&self) -> bool {
        match self {
            BackRx::H1(r) => r.body_done(),
            BackRx::H2(r) => r.body_done(),
            BackRx::Fcgi(r) => r.body_done(),
        }
    }
}
