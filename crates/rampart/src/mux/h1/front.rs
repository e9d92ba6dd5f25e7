//! One HTTP/1 exchange on the client side, as the stream sees it: [`H1Front`] implements
//! [`HttpFront`]. It owns the request bytes (head, the body bytes already here, maybe
//! the start of the next request), waits for more of the body when rules ask, streams
//! the request body to the server side while the response comes back, writes the
//! response ([`H1Sink`]: heads with the `Connection` header of this hop, then the body
//! as the server side hands it on, spliced when long), tunnels after an upgrade, and
//! writes the responses rampart builds. Which server, which connection, retries: the
//! stream's (`stream::forward`).
//! HAProxy counterpart: mux_h1.c in its front-side role.

use std::sync::atomic::Ordering;
use std::time::Duration;

use rampart_proto::h1::{Framing, Head, Method, Version};

use super::H1Conn;
use crate::action::WaitBody;
use crate::back::{BackRecv, BackRx, BackSend, BackTx, BodyError};
use crate::backend::ServerConn;
use crate::buf::Buf;
use crate::debug::Trace;
use crate::h1::body::{Body, Dechunk, SPLICE_MIN};
use crate::h1::write::{response_conn_hdr, write_response_head, ConnHdr, OutFraming};
use crate::http::{BodyLen, MsgHead, MsgView, Synth};
use crate::io::{read_some, write_all, IoError, Sock};
use crate::sample::vars::VarStore;
use crate::session::types::Session;
use crate::splice::{forward, frames_idle, tunnel_timeouts, Activity, DirTimeouts};
use crate::stream::side::{LogInfo, Progress, ResSend, ResSink, Streamed};
use crate::stream::{BodyWaited, HttpFront, Next, ReqMeta};
use crate::timer::Timeouts;

/// The client side of one HTTP/1 exchange.
pub struct H1Front<'a, S> {
    pub client: &'a S,
    pub sess: &'a Session,
    pub conn: &'a mut H1Conn,
    /// The request's HTTP/1 head (parsed).
    pub req: &'a Head,
    /// The request head, the body bytes already here, maybe the next request's start;
    /// once the request is sent, only what follows it.
    pub buf: Buf,
    /// The request body after the bytes in hand.
    pub body: Body,
    /// Request body bytes in `buf` right after the head.
    pub here: usize,
    /// The client asked to keep its connection, and may.
    pub keep_client: bool,
    pub trace: Option<&'a Trace>,
    /// Whether `buf` still starts with the request head.
    pub head_in_buf: bool,
    /// The first request of the connection.
    pub first_req: bool,
    /// The data of a chunked request body in hand, decoded for `req.body` (kept only
    /// once body bytes arrived).
    pub dechunked: Option<Dechunk>,
    /// Body bytes sent to the client in this exchange (`%B` adds the head's size).
    pub sent: u64,
    /// Response head bytes sent to the client in this exchange.
    pub head_sent: u64,
    /// The server connection's source address, when the frontend logs (`%bi`, `%bp`).
    pub back_src: Option<std::net::SocketAddr>,
    /// Request body bytes received after those in hand with the head (`%U`).
    pub received: u64,
    /// The request head and the body bytes that came with it.
    pub head_received: u64,
}

impl<S: Sock> H1Front<'_, S> {
    /// Bytes received after this request (the next one's start), to keep for the
    /// next exchange.
    pub fn take_rest(&mut self) -> Option<Buf> {
        self.drop_request_bytes();
        if self.buf.is_empty() {
            None
        } else {
            Some(std::mem::replace(&mut self.buf, Buf::take(0)))
        }
    }

    /// Forgets the head and the body bytes in hand (sent or answered).
    fn drop_request_bytes(&mut self) {
        if self.head_in_buf {
            self.buf.consume(self.req.len + self.here);
            self.head_in_buf = false;
        }
    }

    /// Whether the client connection may stay open after a response rampart built:
    /// the client asked for it and the whole request was read.
    fn keep_after_reply(&self) -> bool {
        self.keep_client && self.body.is_done()
    }

    /// A tunnel through a server side that has no socket of its own (an HTTP/2
    /// server's stream, RFC 8441): the client's bytes go out through `tx`, the
    /// server's come from `rx`; inactivity as [`frames_idle`] says.
    async fn tunnel_frames(&mut self, tx: &BackTx<'_>, rx: &mut BackRx<'_>, up: DirTimeouts, down: DirTimeouts) {
        let (mut up_open, mut down_open) = (true, true);
        // what the client sent after its request goes first
        if !self.buf.is_empty() && tx.send_body(&self.buf, up.write).await.is_err() {
            return;
        }
        self.buf.clear();
        while up_open || down_open {
            self.buf.clear();
            let step = async {
                tokio::select! {
                    n = read_some(self.client, self.buf.vec(), None), if up_open => Ok(n),
                    got = rx.recv_body(None), if down_open => Err(got),
                }
            };
            let flow = match frames_idle(&up, &down, up_open, down_open) {
                Some(t) => match tokio::time::timeout(t, step).await {
                    Ok(f) => f,
                    Err(_) => return,
                },
                None => step.await,
            };
            let moved = match flow {
                Ok(Ok(0)) => {
                    up_open = false;
                    tx.end_tunnel().await;
                    true
                }
                Ok(Ok(_)) => tx.send_body(&self.buf, up.write).await.is_ok(),
                Ok(Err(_)) => false,
                Err(Ok(Some(bytes))) => write_all(self.client, bytes, down.write).await.is_ok(),
                Err(Ok(None)) => {
                    down_open = false;
                    crate::io::shutdown_write(self.client);
                    true
                }
                Err(Err(_)) => false,
            };
            if !moved {
                return;
            }
        }
    }

    /// Request body bytes in hand, without their framing.
    fn body_in_hand(&self) -> u64 {
        match &self.dechunked {
            Some(d) => d.data.len() as u64,
            None if self.req.framing == Framing::Chunked => 0,
            None => self.here as u64,
        }
    }
}

impl<'a, S: Sock> HttpFront for H1Front<'a, S> {
    type Sink = H1Sink<'a, S>;

    fn req_buf(&self) -> &[u8] {
        &self.buf
    }

    fn req_meta(&self) -> ReqMeta {
        let h1 = self.req;
        ReqMeta {
            keep_alive: self.keep_client,
            body_complete: self.body.is_done(),
            first: self.first_req,
            sent_before: self.conn.first_done,
            upgrade: h1.upgrade.is_some() && h1.conn.upgrade,
            body: match h1.framing {
                Framing::None | Framing::UntilClose => BodyLen::None,
                Framing::Length(n) => BodyLen::Known(n),
                Framing::Chunked => BodyLen::Unknown,
            },
        }
    }

    fn req_body(&self) -> Option<&[u8]> {
        let h1 = &self.req;
        if !self.head_in_buf || h1.framing == Framing::None {
            return None;
        }
        // COMPAT: what a buffer holds, as HAProxy's `req.body` sees: the head and the body
        // within `tune.bufsize - tune.maxrewrite`. HAProxy's internal form of the head
        // takes about a hundred bytes more than its wire form, so rampart may show that
        // many more bytes of a body that does not fit.
        let room = self.sess.rt.max_head.saturating_sub(h1.len);
        let data = match &self.dechunked {
            Some(d) => &d.data[..],
            None if h1.framing == Framing::Chunked => &[],
            None => &self.buf[h1.len..h1.len + self.here],
        };
        Some(&data[..data.len().min(room)])
    }

    fn req_body_raw(&self) -> &[u8] {
        if self.head_in_buf {
            &self.buf[self.req.len..self.req.len + self.here]
        } else {
            &[]
        }
    }

    fn rewrite_room(&self) -> usize {
        rewrite_room(&self.sess.rt, if self.head_in_buf { self.req.len + self.here } else { 0 })
    }

    async fn wait_body(&mut self, w: WaitBody, expect_continue: bool) -> BodyWaited {
        let rt = &self.sess.rt;
        let fe = &rt.proxies[self.sess.fe];
        if !self.head_in_buf {
            return BodyWaited::Ready;
        }
        // as HAProxy, even when the body came along with the head
        if expect_continue && write_all(self.client, CONTINUE, fe.timeouts.client).await.is_err() {
            return BodyWaited::Closed;
        }
        let deadline = w.time.map(|t| tokio::time::Instant::now() + t);
        let len = self.req.len;
        loop {
            if self.body.is_done()
                || (w.at_least > 0 && self.body_in_hand() >= w.at_least)
                || len + self.here >= rt.max_head
            {
                return BodyWaited::Ready;
            }
            let left = deadline.map(|d| d.saturating_duration_since(tokio::time::Instant::now()));
            let timeout = match (left, fe.timeouts.client) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let from = self.buf.len();
            // As HAProxy, the body waited for stops short of the space kept for
            // rewrites (`tune.maxrewrite`): read no more than fits below it.
            let mut chunk = Vec::with_capacity(rt.max_head.saturating_sub(len + self.here).max(1));
            match read_some(self.client, &mut chunk, timeout).await {
                Ok(0) | Err(IoError::Closed | IoError::Io(_)) => return BodyWaited::Closed,
                Err(IoError::Timeout) => return BodyWaited::Failed(408),
                Ok(_) => self.buf.extend_from_slice(&chunk),
            }
            let Ok(n) = self.body.take(&self.buf[from..]) else { return BodyWaited::Failed(400) };
            if let Some(d) = &mut self.dechunked {
                d.feed(&self.buf[from..from + n]);
            } else if self.req.framing == Framing::Chunked {
                let mut d = Dechunk::default();
                d.feed(&self.buf[len..from + n]);
                self.dechunked = Some(d);
            }
            self.here += n;
        }
    }

    async fn interim(&mut self, head: &MsgHead) {
        let fe = &self.sess.rt.proxies[self.sess.fe];
        let mut out = Buf::take(256);
        write_response_head(&mut out, head.view(&[]), ConnHdr::None, OutFraming::AsIs);
        if let Some(m) = &fe.h1_case_client {
            m.apply(out.vec());
        }
        // a client gone is noticed when the final response is written
        let _ = write_all(self.client, &out, fe.timeouts.client).await;
    }

    fn take_sess_vars(&mut self) -> Option<VarStore> {
        // the box stays for the exchange: the variables come back at its end
        self.conn.extra.as_mut().and_then(|e| e.sess_vars.take())
    }

    fn keep_sess_vars(&mut self, vars: VarStore) {
        self.conn.extra().sess_vars = Some(vars);
    }

    fn take_upgraded(&mut self) -> Option<Box<crate::stream::upgrade::Upgraded>> {
        self.conn.extra.as_mut().and_then(|e| e.upgraded.take())
    }

    fn take_private(&mut self) -> Option<ServerConn> {
        let private = self.conn.extra.as_mut().and_then(|e| e.private.take());
        self.conn.trim();
        private
    }

    fn keep_private(&mut self, sc: ServerConn) {
        self.conn.extra().private = Some(sc);
    }

    fn client_gone(&self, every: Duration) -> impl std::future::Future<Output = ()> + Send + '_ {
        crate::io::peer_closes(self.client, every)
    }

    fn trace(&self) -> Option<&Trace> {
        self.trace
    }

    fn req_sent(&mut self) {
        self.drop_request_bytes();
        self.conn.first_done = true;
    }

    fn sink(&self) -> H1Sink<'a, S> {
        let fe = &self.sess.rt.proxies[self.sess.fe];
        H1Sink {
            client: self.client,
            trace: self.trace,
            req_version: self.req.version,
            head_req: self.req.method == Method::Head,
            t_client: fe.timeouts.client,
            bufsize: self.sess.rt.bufsize,
            case: fe.h1_case_client.as_deref(),
        }
    }

    async fn upload(
        &mut self,
        tx: &BackTx<'_>,
        progress: &Progress,
        t_client: Option<Duration>,
        t_server: Option<Duration>,
    ) -> Result<(), BodyError> {
        let activity = &progress.upload;
        loop {
            if !self.buf.is_empty() {
                let n = self.body.take(&self.buf).map_err(|_| BodyError::Framing)?;
                if n > 0 {
                    tx.send_body(&self.buf[..n], t_server).await.map_err(BodyError::To)?;
                    activity.bump();
                    activity.add(n as u64);
                    self.buf.drain(..n);
                }
            }
            match self.body {
                Body::Done => return Ok(()),
                Body::Length(left) if left >= SPLICE_MIN && self.buf.is_empty() => {
                    if let Some(server) = tx.raw() {
                        let t = DirTimeouts { read: t_client, write: t_server, fin: None, indep: false };
                        let moved =
                            forward(self.client, server, Some(left), t, activity).await.map_err(BodyError::From)?;
                        activity.add(moved);
                        self.body = if moved >= left { Body::Done } else { Body::Length(left - moved) };
                        continue;
                    }
                }
                _ => {}
            }
            if self.buf.is_empty() {
                match read_some(self.client, self.buf.vec(), t_client).await {
                    Ok(0) => return Err(BodyError::From(IoError::Closed)),
                    Ok(_) => {}
                    Err(e) => return Err(BodyError::From(e)),
                }
            }
        }
    }

    async fn tunnel(&mut self, tx: &BackTx<'_>, rx: &mut BackRx<'_>, be: Timeouts) {
        let fe = &self.sess.rt.proxies[self.sess.fe];
        let (up, down) = tunnel_timeouts(&fe.timeouts, &be);
        let Some(server) = tx.raw() else {
            // an HTTP/2 server's stream (RFC 8441): bytes go through its frames
            return self.tunnel_frames(tx, rx, up, down).await;
        };
        // what the client sent after its request goes first
        if !self.buf.is_empty() && write_all(server, &self.buf, up.write).await.is_err() {
            return;
        }
        self.buf.clear();
        let activity = Activity::default();
        let _ = tokio::try_join!(
            forward(self.client, server, None, up, &activity),
            forward(server, self.client, None, down, &activity),
        );
    }

    fn account(&mut self, progress: &Progress) {
        self.sent += progress.download.bytes();
        self.head_sent += progress.head.load(Ordering::Relaxed);
        self.received += progress.upload.bytes();
        if progress.back_src.is_some() {
            self.back_src = progress.back_src;
        }
    }

    async fn reply(&mut self, res: &MsgHead, reply: &Synth<'_>) -> Next {
        let fe = &self.sess.rt.proxies[self.sess.fe];
        self.drop_request_bytes();
        // a reply asking to close (a redirect of a request with a body, HAProxy's 400
        // and 408 pages, an errorfile saying so)
        let closing =
            reply.close || res.view(reply.buf).values(b"connection").any(|v| v.eq_ignore_ascii_case(b"close"));
        let keep = self.keep_after_reply() && (reply.has_length || reply.chunked) && !closing;
        let req = &self.req;
        let conn = response_conn_hdr(req.version, res.version, keep, false);
        let body = &reply.body[..];
        let bodyless = matches!(res.status, 100..=199 | 204 | 304);
        let framing = match () {
            _ if bodyless => OutFraming::AsIs,
            _ if reply.chunked => OutFraming::Chunked,
            _ if reply.has_length => OutFraming::Length(body.len() as u64),
            _ => OutFraming::AsIs,
        };
        let mut out = Buf::take(self.sess.rt.bufsize);
        write_response_head(&mut out, res.view(reply.buf), conn, framing);
        if let Some(m) = &self.sess.rt.proxies[self.sess.fe].h1_case_client {
            m.apply(out.vec());
        }
        let head_len = out.len() as u64;
        if req.method != Method::Head {
            if framing == OutFraming::Chunked {
                if !body.is_empty() {
                    crate::h1::write::push_chunk(&mut out, body);
                }
                out.extend_from_slice(b"0\r\n\r\n");
            } else {
                out.extend_from_slice(body);
            }
        }
        if write_all(self.client, &out, fe.timeouts.client).await.is_err() {
            return Next::Close;
        }
        self.sent += out.len() as u64 - head_len;
        self.head_sent += head_len;
        if !keep {
            // Request bytes may still be on their way (a body not read): closing now
            // would reset the connection and lose the response, so close softly, as the
            // mux does after its own errors.
            if !self.body.is_done() {
                super::linger(self.client).await;
            }
            return Next::Close;
        }
        Next::KeepAlive
    }

    async fn reply_streamed<R: BackRecv + Send>(&mut self, res: &MsgHead, out: Streamed<'_, R>) -> Next {
        self.drop_request_bytes();
        let closing = out.close || res.view(out.buf).values(b"connection").any(|v| v.eq_ignore_ascii_case(b"close"));
        let keep = self.keep_after_reply() && !closing;
        let sink = self.sink();
        let progress = Progress::default();
        let how = ResSend { facts: out.facts, keep_client: keep, tunnel: None, whole: out.whole };
        let sent = match sink.send_head(res.view(out.buf), how, out.first, &progress).await {
            Ok(Some(held)) => sink.flush(held, &progress).await.is_ok(),
            Ok(None) if out.whole => true,
            Ok(None) => sink.send_body_from(out.body, &progress, None).await.is_ok(),
            Err(()) => false,
        };
        self.account(&progress);
        if !sent {
            return Next::Close;
        }
        if !keep {
            // as after `reply`: request bytes may still be on their way
            if !self.body.is_done() {
                super::linger(self.client).await;
            }
            return Next::Close;
        }
        Next::KeepAlive
    }

    fn silent_drop(&mut self) {
        crate::io::silent_drop(self.client);
    }

    fn set_fc(&mut self, fc: crate::action::sockopt::FcPending) {
        crate::io::set_fc(self.client, fc.mark, fc.tos);
    }

    async fn reply_raw(&mut self, bytes: &[u8]) -> Next {
        let fe = &self.sess.rt.proxies[self.sess.fe];
        if write_all(self.client, bytes, fe.timeouts.client).await.is_ok() {
            self.sent += bytes.len() as u64;
        }
        Next::Close
    }

    fn log_info(&self) -> LogInfo {
        LogInfo {
            sent: self.sent,
            received: self.received,
            back_src: self.back_src,
            head_sent: self.head_sent,
            head_received: self.head_received,
        }
    }
}

/// What HAProxy answers a client that waits for it before sending its body.
const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// The response half of an HTTP/1 exchange on the client side.
#[derive(Debug)]
pub struct H1Sink<'a, S> {
    client: &'a S,
    trace: Option<&'a Trace>,
    /// The request's version: a `Connection` header says what an HTTP/1.0 client must
    /// hear.
    req_version: Version,
    /// The client's request was HEAD: the response goes without its body, whatever
    /// the server sent (a rule may have made the server's request a GET), as HAProxy
    /// skips the payload of a bodyless response.
    head_req: bool,
    t_client: Option<Duration>,
    bufsize: usize,
    /// `option h1-case-adjust-bogus-client`: the spellings of header names.
    case: Option<&'a crate::h1::case_adjust::CaseMap>,
}

/// A whole response written into a buffer, kept until the server connection is free.
#[derive(Debug)]
pub struct Held {
    out: Buf,
    head_len: u64,
}

impl<S: Sock> ResSink for H1Sink<'_, S> {
    type Held = Held;

    fn client_closed(&self, every: Duration) -> impl std::future::Future<Output = ()> + Send + '_ {
        crate::io::peer_closes(self.client, every)
    }

    fn trace(&self) -> Option<&Trace> {
        self.trace
    }

    async fn interim(&self, head: MsgView<'_>, progress: &Progress) -> Result<(), ()> {
        let mut out = Buf::take(256);
        write_response_head(&mut out, head, ConnHdr::None, OutFraming::AsIs);
        if let Some(m) = self.case {
            m.apply(out.vec());
        }
        progress.answered.store(true, Ordering::Relaxed);
        write_all(self.client, &out, self.t_client).await.map_err(|_| ())
    }

    async fn send_head(
        &self,
        head: MsgView<'_>,
        how: ResSend,
        body: &[u8],
        progress: &Progress,
    ) -> Result<Option<Held>, ()> {
        let conn = match how.tunnel {
            Some(true) => ConnHdr::Upgrade,
            // A 2xx to CONNECT announces nothing: the connection is a tunnel from now on.
            Some(false) => ConnHdr::None,
            None => response_conn_hdr(self.req_version, head.head.version, how.keep_client, false),
        };
        let framing = match how.facts.body {
            BodyLen::Known(n) => OutFraming::Length(n),
            BodyLen::Unknown if !how.facts.until_close => OutFraming::Chunked,
            BodyLen::None | BodyLen::Unknown => OutFraming::AsIs,
        };
        let mut out = Buf::take(self.bufsize);
        write_response_head(&mut out, head, conn, framing);
        if let Some(m) = self.case {
            m.apply(out.vec());
        }
        let head_len = out.len() as u64;
        if !self.head_req {
            out.extend_from_slice(body);
        }
        progress.head.store(head_len, Ordering::Relaxed);
        if how.whole {
            return Ok(Some(Held { out, head_len }));
        }
        write_all(self.client, &out, self.t_client).await.map_err(|_| ())?;
        progress.download.add(out.len() as u64 - head_len);
        Ok(None)
    }

    async fn flush(&self, held: Held, progress: &Progress) -> Result<(), ()> {
        write_all(self.client, &held.out, self.t_client).await.map_err(|_| ())?;
        progress.download.add(held.out.len() as u64 - held.head_len);
        Ok(())
    }

    async fn send_body_from<R: BackRecv + Send>(
        &self,
        rx: &mut R,
        progress: &Progress,
        t_server: Option<Duration>,
    ) -> Result<(), BodyError> {
        let activity = &progress.download;
        if self.head_req {
            // read to its end and dropped, so that the server connection stays usable
            while rx.recv_body(t_server).await?.is_some() {}
            return Ok(());
        }
        loop {
            if let Some(raw) = rx.raw_rest() {
                let t = DirTimeouts { read: t_server, write: self.t_client, fin: None, indep: false };
                let moved = forward(raw.sock, self.client, raw.len, t, activity).await.map_err(BodyError::From)?;
                activity.add(moved);
                rx.raw_moved(moved);
                continue;
            }
            match rx.recv_body(t_server).await? {
                Some(bytes) => {
                    write_all(self.client, bytes, self.t_client).await.map_err(BodyError::To)?;
                    activity.bump();
                    activity.add(bytes.len() as u64);
                }
                None => return Ok(()),
            }
        }
    }
}

/// The room rules have to grow a message whose head and body bytes in hand take
/// `used` bytes of its buffer. HAProxy receives at most `tune.bufsize -
/// tune.maxrewrite` bytes of a message, so whatever rampart read in one go, the
/// rewrites get at least `tune.maxrewrite`, and what the buffer has left beyond.
pub fn rewrite_room(rt: &crate::proxy::Runtime, used: usize) -> usize {
    rt.bufsize.saturating_sub(used.min(rt.max_head))
}
