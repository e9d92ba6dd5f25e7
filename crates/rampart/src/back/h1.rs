//! HTTP/1 in the client role: [`H1Back`] writes a request on a server connection (the
//! head with HAProxy's output rules and the `Connection` header of this hop, then the
//! body bytes as the client side received them), keeps it for a retry, reads the
//! response heads (interim ones first) into the neutral message, and hands the body on
//! as it arrives, its framing checked chunk by chunk (or spliced when long).
//! HAProxy counterpart: mux_h1.c in its back-side role, h1_htx.c.

use std::time::Duration;

use rampart_proto::h1::{parse_response, Framing, Head, Method};

use super::{BackRecv, BackSend, BodyError, HeadError, HeadWait, HttpBack, RawRest, Received, ReqSend, ResFacts};
use crate::backend::ServerConn;
use crate::buf::{Buf, Pooled};
use crate::conn_pool::BackSock;
use crate::h1::body::{Body, SPLICE_MIN};
use crate::h1::msg::fill;
use crate::h1::write::{request_conn_hdr, write_request_head, OutFraming, ReqOut};
use crate::http::{websocket, BodyLen, MsgHead, MsgView};
use crate::io::{read_some, write_all, IoError};
use crate::splice::Activity;

/// The stream called [`HttpBack::release`] and something else than
/// [`HttpBack::resend`] after it: a bug in the caller, never a peer's doing.
const RELEASED: &str = "a server connection, but it was released for a retry";

/// One exchange on an HTTP/1 server connection.
#[derive(Debug)]
pub struct H1Back {
    /// `None` only between [`HttpBack::release`] and [`HttpBack::resend`].
    sc: Option<ServerConn>,
    /// The request as sent (head and the body bytes that came with it), for a retry.
    out: Buf,
    rx: Rx,
    /// `http-send-name-header` (`None` without it).
    pub send_name: Option<super::send_name::SendName>,
    /// `option h1-case-adjust-bogus-server`: the spellings of header names.
    pub case_adjust: Option<std::sync::Arc<crate::h1::case_adjust::CaseMap>>,
}

/// The response side of the exchange.
#[derive(Debug)]
pub struct Rx {
    /// Response bytes received and not handed on yet.
    buf: Buf,
    head: Pooled<Head>,
    /// Bytes at the start of `buf` handed out already (the last head, the last body
    /// bytes): dropped when the next ones are asked for.
    handed: usize,
    body: Body,
    /// The request's method: a response to `HEAD` has no body, one to `CONNECT` may
    /// open a tunnel.
    method: Method,
    bufsize: usize,
    max_head: usize,
    /// The `Sec-WebSocket-Key` rampart made for a WebSocket upgrade that came without
    /// one (from an HTTP/2 client): the server's `Sec-WebSocket-Accept` must match it.
    ws_key: Option<[u8; 24]>,
}

/// The sending half of an [`H1Back`].
#[derive(Debug, Clone, Copy)]
pub struct TxHalf<'a> {
    sock: &'a BackSock,
}

/// The receiving half of an [`H1Back`].
#[derive(Debug)]
pub struct RxHalf<'a> {
    sock: &'a BackSock,
    rx: &'a mut Rx,
}

impl H1Back {
    /// An exchange on `sc`.
    /// `relax`: `option accept-invalid-http-response`.
    pub fn new(sc: ServerConn, bufsize: usize, max_head: usize, relax: bool) -> H1Back {
        let mut rx = Rx::new(bufsize, max_head);
        rx.head.relax = relax;
        H1Back { sc: Some(sc), out: Buf::take(bufsize), rx, send_name: None, case_adjust: None }
    }

    /// The server connection (its server, key, socket).
    pub fn conn(&self) -> &ServerConn {
        self.sc.as_ref().expect(RELEASED)
    }

    fn socket(&self) -> &BackSock {
        &self.conn().stream
    }

    /// `http-send-name-header`: the kept request names server `name` now.
    pub fn rename_server(&mut self, name: &str) {
        if let Some(sn) = &mut self.send_name {
            sn.rename(self.out.vec(), name);
        }
    }
}

impl Rx {
    fn new(bufsize: usize, max_head: usize) -> Rx {
        Rx {
            buf: Buf::take(bufsize),
            head: Pooled::take(),
            handed: 0,
            body: Body::Done,
            method: Method::Get,
            bufsize,
            max_head,
            ws_key: None,
        }
    }

    /// Drops what was handed out already.
    fn drop_handed(&mut self) {
        self.buf.consume(self.handed);
        self.handed = 0;
    }
}

impl HttpBack for H1Back {
    type Send<'a> = TxHalf<'a>;
    type Recv<'a> = RxHalf<'a>;

    fn srv(&self) -> usize {
        self.conn().srv
    }

    fn reused(&self) -> bool {
        self.conn().from_pool
    }

    fn sni(&self) -> Option<&str> {
        self.conn().key.sni.as_deref()
    }

    fn sock(&self) -> Option<&BackSock> {
        Some(&self.conn().stream)
    }

    async fn send_request(
        &mut self,
        req: MsgView<'_>,
        how: ReqSend,
        body: &[u8],
        timeout: Option<Duration>,
    ) -> Result<(), IoError> {
        let framing = match how.body {
            BodyLen::None => OutFraming::AsIs,
            BodyLen::Known(n) => OutFraming::Length(n),
            BodyLen::Unknown => OutFraming::Chunked,
        };
        let conn = request_conn_hdr(req.head.version, how.keep_alive || how.pretend_keepalive, how.upgrade);
        self.out.clear();
        write_request_head(&mut self.out, req, ReqOut { conn, framing });
        if let Some(sn) = &mut self.send_name {
            sn.apply(self.out.vec());
        }
        if let Some(m) = &self.case_adjust {
            m.apply(self.out.vec());
        }
        self.rx.ws_key = None;
        if how.upgrade {
            self.rx.ws_key = add_websocket_key(&mut self.out, req);
        }
        self.out.extend_from_slice(body);
        self.rx.method = req.head.method;
        write_all(self.socket(), &self.out, timeout).await
    }

    fn release(&mut self) {
        self.sc = None;
    }

    async fn resend(&mut self, sc: ServerConn, timeout: Option<Duration>) -> Result<(), IoError> {
        self.sc = Some(sc);
        self.rx.buf.clear();
        self.rx.handed = 0;
        self.rx.body = Body::Done;
        write_all(self.socket(), &self.out, timeout).await
    }

    fn split(&mut self) -> (TxHalf<'_>, RxHalf<'_>) {
        let sock = &self.sc.as_ref().expect(RELEASED).stream;
        (TxHalf { sock }, RxHalf { sock, rx: &mut self.rx })
    }

    fn finish(mut self) -> Option<(ServerConn, bool)> {
        let sc = self.sc.take().expect(RELEASED);
        let rx = &mut self.rx;
        rx.drop_handed();
        // bytes after the end of the response: the server is confused, do not reuse it
        let reusable = rx.body.is_done()
            && rx.buf.is_empty()
            && rx.head.framing != Framing::UntilClose
            && rx.head.wants_keep_alive();
        Some((sc, reusable))
    }
}

impl BackSend for TxHalf<'_> {
    async fn send_body(&self, bytes: &[u8], timeout: Option<Duration>) -> Result<(), IoError> {
        write_all(self.sock, bytes, timeout).await
    }

    fn raw(&self) -> Option<&BackSock> {
        Some(self.sock)
    }

    async fn end_tunnel(&self) {
        crate::io::shutdown_write(self.sock);
    }
}

impl BackRecv for RxHalf<'_> {
    async fn recv_head(&mut self, res: &mut MsgHead, wait: HeadWait<'_>) -> Result<Received, HeadError> {
        let rx = &mut *self.rx;
        rx.drop_handed();
        read_head(self.sock, rx, wait.timeout, wait.upload).await?;
        if let Some((trace, be_name)) = wait.trace {
            trace.response(be_name, &rx.buf, &rx.head);
        }
        fill(res, &rx.head);
        if let Some(key) = rx.ws_key.filter(|_| res.status == 101) {
            // COMPAT: as HAProxy, a server answering rampart's key with another
            // accept key is refused (502)
            let accept = res.view(&rx.buf).first(b"sec-websocket-accept");
            if accept.is_none_or(|a| !a.eq_ignore_ascii_case(&websocket::accept_key(&key))) {
                return Err(HeadError::Status(502));
            }
        }
        rx.handed = rx.head.len;
        // the body bytes that came with the head share its buffer, as in HAProxy
        res.arena_max = rx.bufsize.saturating_sub(rx.buf.len().min(rx.max_head));
        let status = rx.head.status;
        Ok(if status >= 200 || status == 101 { Received::Final } else { Received::Interim })
    }

    fn res_buf(&self) -> &[u8] {
        &self.rx.buf
    }

    fn res_facts(&self) -> ResFacts {
        let h = &self.rx.head;
        let body = match h.framing {
            Framing::None => BodyLen::None,
            Framing::Length(n) => BodyLen::Known(n),
            Framing::Chunked | Framing::UntilClose => BodyLen::Unknown,
        };
        ResFacts { body, until_close: h.framing == Framing::UntilClose }
    }

    fn start_body(&mut self, tunnel: bool) -> Result<std::ops::Range<usize>, BodyError> {
        let rx = &mut *self.rx;
        let start = rx.handed;
        let here = if tunnel {
            // every byte until the server closes is the tunnel's
            rx.body = Body::UntilClose;
            rx.buf.len() - start
        } else {
            rx.body = Body::new(rx.head.framing);
            rx.body.take(&rx.buf[start..]).map_err(|_| BodyError::Framing)?
        };
        rx.handed = start + here;
        Ok(start..start + here)
    }

    async fn recv_body(&mut self, timeout: Option<Duration>) -> Result<Option<&[u8]>, BodyError> {
        let rx = &mut *self.rx;
        rx.drop_handed();
        loop {
            if !rx.buf.is_empty() {
                let n = rx.body.take(&rx.buf).map_err(|_| BodyError::Framing)?;
                if n > 0 {
                    rx.handed = n;
                    return Ok(Some(&rx.buf[..n]));
                }
            }
            if rx.body.is_done() {
                return Ok(None);
            }
            match read_some(self.sock, rx.buf.vec(), timeout).await {
                Ok(0) if matches!(rx.body, Body::UntilClose) => {
                    rx.body = Body::Done;
                    return Ok(None);
                }
                Ok(0) => return Err(BodyError::From(IoError::Closed)),
                Ok(_) => {}
                Err(e) => return Err(BodyError::From(e)),
            }
        }
    }

    fn raw_rest(&mut self) -> Option<RawRest<'_>> {
        let rx = &mut *self.rx;
        rx.drop_handed();
        if !rx.buf.is_empty() {
            return None;
        }
        let len = match rx.body {
            Body::Length(left) if left >= SPLICE_MIN => Some(left),
            Body::UntilClose => None,
            _ => return None,
        };
        Some(RawRest { sock: self.sock, len })
    }

    fn raw_moved(&mut self, moved: u64) {
        let body = &mut self.rx.body;
        match body {
            Body::Length(left) => {
                *left = left.saturating_sub(moved);
                if *left == 0 {
                    *body = Body::Done;
                }
            }
            Body::UntilClose => *body = Body::Done,
            Body::Chunked(_) | Body::Done => {}
        }
    }

    fn body_done(&self) -> bool {
        self.rx.body.is_done()
    }
}

/// A WebSocket upgrade request without a `Sec-WebSocket-Key` (an HTTP/2 client's,
/// RFC 8441 has none) gets one, as HAProxy adds it: `out` holds the request head just
/// written. Returns the key made, if any.
fn add_websocket_key(out: &mut Buf, req: MsgView<'_>) -> Option<[u8; 24]> {
    if !websocket::is_websocket(req) || req.first(b"sec-websocket-key").is_some() {
        return None;
    }
    let key = websocket::new_key();
    debug_assert!(out.ends_with(b"\r\n\r\n"));
    let len = out.len();
    out.vec().truncate(len - 2);
    out.extend_from_slice(b"sec-websocket-key: ");
    out.extend_from_slice(&key);
    out.extend_from_slice(b"\r\n\r\n");
    Some(key)
}

/// Reads one response head at the start of `rx.buf` into `rx.head`. `timeout` is the
/// server's inactivity: request bytes still reaching it (`upload`) count as activity.
async fn read_head(
    server: &BackSock,
    rx: &mut Rx,
    timeout: Option<Duration>,
    upload: &Activity,
) -> Result<(), HeadError> {
    loop {
        if !rx.buf.is_empty() {
            match parse_response(&rx.buf, rx.max_head, rx.method, &mut rx.head) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(_) => return Err(HeadError::Status(502)),
            }
        }
        let empty = rx.buf.is_empty();
        let seen = upload.get();
        match read_some(server, rx.buf.vec(), timeout).await {
            Ok(0) if empty => return Err(HeadError::ClosedEarly),
            Ok(0) => return Err(HeadError::Status(502)),
            Ok(_) => {}
            Err(IoError::Timeout) if upload.get() != seen => {}
            Err(IoError::Timeout) => return Err(HeadError::Status(504)),
            Err(_) if empty => return Err(HeadError::ClosedEarly),
            Err(_) => return Err(HeadError::Status(502)),
        }
    }
}
