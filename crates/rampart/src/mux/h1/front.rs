//! One HTTP/1 exchange on the client side, as the stream sees it: [`H1Front`]
//! implements [`HttpFront`]. It owns the request bytes (head, the body bytes already
//! here, maybe the start of the next request), connects or reuses server connections
//! as `http-reuse` allows, writes the request with the stream's rewrites, streams the
//! request body while the response comes back, and writes responses, real or built.
//! HAProxy counterpart: mux_h1.c (both sides of an H1-to-H1 stream).

use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

use rampart_cfg::model::{HttpConnMode, HttpReuse};
use rampart_proto::h1::{Framing, Method};

use super::xfer::{self, forward_response, out_framing, RespEnd, RespError};
use super::H1Conn;
use crate::action::state::TimeoutOverride;
use crate::action::WaitBody;
use crate::backend::send_proxy::ConnectCtx;
use crate::backend::{self, Reuse, ServerConn};
use crate::buf::{Buf, HeadPair};
use crate::debug::Trace;
use crate::h1::body::{forward_rest, Body, BodyError, Dechunk};
use crate::h1::write::{
    request_conn_hdr, response_conn_hdr, write_request_head, write_response_head, ConnHdr, OutFraming, ReqOut,
};
use crate::http::{MsgHead, Synth};
use crate::io::{read_some, write_all, IoError, Sock};
use crate::sample::vars::VarStore;
use crate::session::types::Session;
use crate::stream::{BodyWaited, ConnectFail, Forwarded, HttpFront, Next, ReqMeta, Verdict};

/// The client side of one HTTP/1 exchange.
pub struct H1Front<'a, S> {
    pub client: &'a S,
    pub sess: &'a Session,
    pub conn: &'a mut H1Conn,
    /// The HTTP/1 heads of the request (parsed) and the response (once read).
    pub heads: &'a mut HeadPair,
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
            self.buf.consume(self.heads.req.len + self.here);
            self.head_in_buf = false;
        }
    }

    /// Whether the client connection may stay open after a response rampart built:
    /// the client asked for it and the whole request was read.
    fn keep_after_reply(&self) -> bool {
        self.keep_client && self.body.is_done()
    }

    /// Which idle connections this request may use (`http-reuse`).
    fn reuse(&self, mode: HttpReuse) -> Reuse {
        reuse_policy(mode, self.conn.first_done, self.heads.req.method, self.body.is_done())
    }
}

impl<S: Sock> HttpFront for H1Front<'_, S> {
    fn req_buf(&self) -> &[u8] {
        &self.buf
    }

    fn req_meta(&self) -> ReqMeta {
        ReqMeta { keep_alive: self.keep_client, body_complete: self.body.is_done(), first: self.first_req }
    }

    fn req_body(&self) -> Option<&[u8]> {
        let h1 = &self.heads.req;
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

    fn rewrite_room(&self) -> usize {
        rewrite_room(&self.sess.rt, if self.head_in_buf { self.heads.req.len + self.here } else { 0 })
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
        let len = self.heads.req.len;
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
            } else if self.heads.req.framing == Framing::Chunked {
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

    async fn connect(
        &mut self,
        be_idx: usize,
        srv: Option<usize>,
        key: Option<u32>,
        cx: ConnectCtx<'_>,
    ) -> Result<ServerConn, ConnectFail> {
        let rt = &self.sess.rt;
        let be = &rt.proxies[be_idx];
        if be.http_reuse == HttpReuse::Never {
            let private = self.conn.extra.as_mut().and_then(|e| e.private.take());
            self.conn.trim();
            // as HAProxy, only for a stream that would open the same connection (the
            // same destination after `set-dst`, SNI, PROXY header); else it is closed
            if let Some(sc) = private.filter(|sc| sc.key == backend::conn_key(&be.be.servers[sc.srv], cx)) {
                crate::stats::counters::count_server_conn(rt, be_idx, sc.srv, true);
                return Ok(sc);
            }
        }
        let reuse = self.reuse(be.http_reuse);
        match backend::connect_unless_aborted(self.client, rt, be_idx, reuse, srv, key, cx.prio, cx).await {
            Some(Ok(sc)) if sc.from_pool || backend::send_proxy::send(rt, be_idx, &sc).await => Ok(sc),
            Some(Ok(_)) => Err(ConnectFail::NoServer),
            Some(Err(backend::ConnectError::Failed { srv, timed_out, retries })) => {
                Err(ConnectFail::Failed { srv, timed_out, retries })
            }
            Some(Err(backend::ConnectError::QueueTimeout(w))) => Err(ConnectFail::QueueTimeout(w)),
            Some(Err(backend::ConnectError::QueueFull)) => Err(ConnectFail::QueueFull),
            Some(Err(_)) => Err(ConnectFail::NoServer),
            // `option abortonclose`: the client left before a server took the request.
            None => Err(ConnectFail::Aborted),
        }
    }

    async fn forward<R>(
        &mut self,
        mut sc: ServerConn,
        be_idx: usize,
        req: &MsgHead,
        res: &mut MsgHead,
        tmo: TimeoutOverride,
        l7_retry: bool,
        mut on_response: R,
    ) -> Forwarded
    where
        R: FnMut(&mut MsgHead, &[u8]) -> Verdict + Send,
    {
        let sess = self.sess;
        let rt = &sess.rt;
        let (fe, be) = (&rt.proxies[sess.fe], &rt.proxies[be_idx]);
        let h1 = &self.heads.req;
        let keep_server = be.http_conn_mode == HttpConnMode::KeepAlive && fe.http_conn_mode == HttpConnMode::KeepAlive;
        let upgrade = h1.upgrade.is_some() && h1.conn.upgrade;
        let (method, version) = (h1.method, h1.version);

        // The request head and the body bytes already here, in one write.
        let mut out = Buf::take(rt.bufsize);
        let extra = ReqOut { conn: request_conn_hdr(version, keep_server, upgrade), framing: out_framing(h1.framing) };
        write_request_head(&mut out, req.view(&self.buf), extra);
        out.extend_from_slice(&self.buf[h1.len..h1.len + self.here]);
        self.drop_request_bytes();
        let replayable = self.body.is_done();
        self.conn.first_done = true;
        trace_server(self.trace, &sc);

        // `retry-on` response conditions: only for a request whole in `out`
        let retry_on = be.retry_on_response.as_deref().filter(|_| replayable && l7_retry);
        // COMPAT: without a `retry-on` line, HAProxy answers 502 when a server closes
        // or resets before any response byte. With `option redispatch`, rampart sends
        // an idempotent request (RFC 9110 §9.2.2) whole in `out` to another server
        // instead, as `retry-on empty-response` would (counted in `wretr`/`wredis`):
        // a server stopped under load then costs the client nothing.
        let replay_on_close = be.replay_on_close && replayable && l7_retry && method.is_idempotent();
        let mut retries_left = if retry_on.is_some() || replay_on_close { be.l7_retries } else { 0 };

        // Send; a pooled connection that turns out dead is replaced once, transparently
        // (or, failing that, the request goes to another server, as after a close).
        if write_all(&sc.stream, &out, tmo.server(be.timeouts.server)).await.is_err() {
            sc = match retry_on_new_conn(sess, be_idx, &sc, &out, replayable).await {
                Some(new) => new,
                None if replay_on_close && retries_left > 0 => {
                    retries_left -= 1;
                    match send_again(sess, be_idx, sc, &out, true).await {
                        Some(new) => new,
                        None => return Forwarded::Failed(503),
                    }
                }
                None => return Forwarded::Failed(502),
            };
            trace_server(self.trace, &sc);
        }

        let progress = xfer::Progress::default();
        let mut info = xfer::ReqInfo {
            method,
            version,
            upgrade,
            keep_client: self.keep_client,
            progress: &progress,
            trace: self.trace,
            tmo,
            retry_on: retry_on.filter(|_| retries_left > 0),
        };
        if fe.log.as_ref().is_some_and(|l| l.back_src) {
            self.back_src = sc.stream.local_addr().ok();
        }
        let mut result = if self.body.is_done() {
            let pending = &self.buf[..];
            let res_h1 = &mut self.heads.res;
            forward_response(self.client, &sc.stream, res_h1, res, info, sess, be_idx, pending, &mut on_response).await
        } else {
            self.forward_upload_and_response(&sc, res, info, be_idx, &mut on_response).await
        };
        if matches!(result, Err(RespError::ServerClosedEarly)) && sc.from_pool {
            if let Some(new) = retry_on_new_conn(sess, be_idx, &sc, &out, replayable).await {
                sc = new;
                trace_server(self.trace, &sc);
                let (pending, res_h1) = (&self.buf[..], &mut self.heads.res);
                let fwd = forward_response(
                    self.client,
                    &sc.stream,
                    res_h1,
                    res,
                    info,
                    sess,
                    be_idx,
                    pending,
                    &mut on_response,
                );
                result = fwd.await;
            }
        }
        while must_retry(&result, replay_on_close && retries_left > 0, &progress) {
            retries_left -= 1;
            info.retry_on = retry_on.filter(|_| retries_left > 0);
            match send_again(sess, be_idx, sc, &out, retries_left == 0 || replay_on_close).await {
                Some(new) => sc = new,
                None => return Forwarded::Failed(503),
            }
            trace_server(self.trace, &sc);
            let (pending, res_h1) = (&self.buf[..], &mut self.heads.res);
            let fwd =
                forward_response(self.client, &sc.stream, res_h1, res, info, sess, be_idx, pending, &mut on_response);
            result = fwd.await;
        }
        drop(out);
        let result = match result {
            Ok(mut end) => {
                let tail = end.tail.take();
                let next = self.finish(be_idx, sc, end, self.body.is_done() && keep_server);
                match tail {
                    Some(tail) => {
                        xfer::send_tail(self.client, tail, &progress, fe.timeouts.client).await.map(|()| next)
                    }
                    None => Ok(next),
                }
            }
            Err(e) => Err(e),
        };
        self.sent += progress.download.bytes();
        self.head_sent += progress.head.load(std::sync::atomic::Ordering::Relaxed);
        self.received += progress.upload.bytes();

        match result {
            Ok(next) => Forwarded::Done(next),
            Err(RespError::ClientGone | RespError::Aborted | RespError::Closed) => Forwarded::Closed,
            Err(RespError::Replaced) => Forwarded::Replaced,
            Err(RespError::SilentDrop) => {
                crate::io::silent_drop(self.client);
                Forwarded::Closed
            }
            Err(RespError::Status(code)) => Forwarded::Failed(code),
            Err(RespError::ServerClosedEarly | RespError::Retry) => Forwarded::Failed(502),
        }
    }

    async fn reply(&mut self, res: &MsgHead, reply: &Synth<'_>) -> Next {
        let fe = &self.sess.rt.proxies[self.sess.fe];
        self.drop_request_bytes();
        // a reply asking to close (a redirect of a request with a body, HAProxy's 400
        // and 408 pages, an errorfile saying so)
        let closing =
            reply.close || res.view(reply.buf).values(b"connection").any(|v| v.eq_ignore_ascii_case(b"close"));
        let keep = self.keep_after_reply() && reply.has_length && !closing;
        let req = &self.heads.req;
        let conn = response_conn_hdr(req.version, res.version, keep, false);
        let body = &reply.body[..];
        let bodyless = matches!(res.status, 100..=199 | 204 | 304);
        let framing =
            if reply.has_length && !bodyless { OutFraming::Length(body.len() as u64) } else { OutFraming::AsIs };
        let mut out = Buf::take(self.sess.rt.bufsize);
        write_response_head(&mut out, res.view(reply.buf), conn, framing);
        let head_len = out.len() as u64;
        if req.method != Method::Head {
            out.extend_from_slice(body);
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

    fn silent_drop(&mut self) {
        crate::io::silent_drop(self.client);
    }

    async fn reply_raw(&mut self, bytes: &[u8]) -> Next {
        let fe = &self.sess.rt.proxies[self.sess.fe];
        if write_all(self.client, bytes, fe.timeouts.client).await.is_ok() {
            self.sent += bytes.len() as u64;
        }
        Next::Close
    }

    fn log_info(&self) -> crate::stream::side::LogInfo {
        crate::stream::side::LogInfo {
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

impl<S: Sock> H1Front<'_, S> {
    /// Request body bytes in hand, without their framing.
    fn body_in_hand(&self) -> u64 {
        match &self.dechunked {
            Some(d) => d.data.len() as u64,
            None if self.heads.req.framing == Framing::Chunked => 0,
            None => self.here as u64,
        }
    }

    /// The request body still streams in while the response may already come back (a
    /// server may answer before reading everything). If the response ends first, the
    /// connections cannot be reused: the exchange ends with a close.
    ///
    /// As in HAProxy, `timeout server` bounds this phase (restarted by every body byte the
    /// server receives), not `timeout client`: a client pausing in its upload gets a 504
    /// when the server timeout strikes. An invalid chunk gets a 400 if nothing of the
    /// response was sent yet.
    async fn forward_upload_and_response<R>(
        &mut self,
        sc: &ServerConn,
        res: &mut MsgHead,
        info: xfer::ReqInfo<'_>,
        be_idx: usize,
        on_response: &mut R,
    ) -> Result<RespEnd, RespError>
    where
        R: FnMut(&mut MsgHead, &[u8]) -> Verdict,
    {
        let sess = self.sess;
        let fe = &sess.rt.proxies[sess.fe];
        let be = &sess.rt.proxies[be_idx];
        let t_server = info.tmo.server(be.timeouts.server);
        let client_timeout = if t_server.is_some() { None } else { fe.timeouts.client };
        let (body, buf) = (&mut self.body, &mut self.buf);
        let up = forward_rest(self.client, &sc.stream, body, buf, client_timeout, t_server, &info.progress.upload);
        let res_h1 = &mut self.heads.res;
        let down = forward_response(self.client, &sc.stream, res_h1, res, info, sess, be_idx, &[], on_response);
        tokio::pin!(up, down);
        let mut up_done = false;
        loop {
            tokio::select! {
                r = &mut down => {
                    let mut end = r?;
                    if !up_done {
                        end.keep_client = false;
                        end.server_reusable = false;
                    }
                    return Ok(end);
                }
                r = &mut up, if !up_done => {
                    up_done = true;
                    match r {
                        Ok(()) => {}
                        Err(BodyError::Framing(_)) if !info.progress.answered.load(Ordering::Relaxed) => {
                            return Err(RespError::Status(400))
                        }
                        Err(_) => return Err(RespError::Aborted),
                    }
                }
            }
        }
    }

    /// After a complete response: park or keep the server connection, and keep the
    /// client connection if both sides agree.
    fn finish(&mut self, be_idx: usize, sc: ServerConn, end: RespEnd, keep_server: bool) -> Next {
        let rt = &self.sess.rt;
        if keep_server && end.server_reusable {
            if rt.proxies[be_idx].http_reuse == HttpReuse::Never {
                self.conn.extra().private = Some(sc);
            } else {
                sc.park(rt, be_idx);
            }
        }
        if end.keep_client {
            Next::KeepAlive
        } else {
            Next::Close
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

/// `-d`: the stream is carried by `sc` from now on.
fn trace_server(trace: Option<&Trace>, sc: &ServerConn) {
    if let Some(t) = trace {
        t.set_server(sc.stream.as_raw_fd());
    }
}

/// A connection taken from the pool failed before any response byte: open a new one
/// to the same server and send the request again, if the request can be replayed.
async fn retry_on_new_conn(
    sess: &Session,
    be_idx: usize,
    sc: &ServerConn,
    out: &[u8],
    replayable: bool,
) -> Option<ServerConn> {
    if !sc.from_pool || !replayable {
        return None;
    }
    // COMPAT: this rare retry's header carries no UNIQUE_ID TLV
    let sni = backend::sni_again(&sess.rt.proxies[be_idx].be.servers[sc.srv], sc.key.sni.as_deref());
    let cx = ConnectCtx { sni: &sni, ..ConnectCtx::new(&sess.conn) };
    let new = backend::reconnect(&sess.rt, be_idx, sc.srv, cx).await.ok()?;
    backend::send_proxy::send(&sess.rt, be_idx, &new).await.then_some(())?;
    write_all(&new.stream, out, sess.rt.proxies[be_idx].timeouts.server).await.ok()?;
    Some(new)
}

/// Whether the response `result` asks for the request to be sent again: a `retry-on`
/// condition was met, or the server closed before any response byte and `on_close`
/// (the request may be replayed on another server) while nothing reached the client.
fn must_retry(result: &Result<RespEnd, RespError>, on_close: bool, progress: &xfer::Progress) -> bool {
    match result {
        Err(RespError::Retry) => true,
        Err(RespError::ServerClosedEarly) => on_close && !progress.answered.load(Ordering::Relaxed),
        _ => false,
    }
}

/// A `retry-on` condition was met: closes `sc` (freeing its slot) and sends `out`,
/// the whole request, on a new connection to the same server, or to another one on
/// the last retry with `option redispatch` (HAProxy's layer-7 retry). Counts the
/// retry (`wretr`, `wredis`).
async fn send_again(sess: &Session, be_idx: usize, sc: ServerConn, out: &[u8], last: bool) -> Option<ServerConn> {
    let rt = &sess.rt;
    let be = &rt.proxies[be_idx];
    let prev = sc.srv;
    let prev_sni = sc.key.sni.clone();
    drop(sc);
    let target = match be.redispatch && last {
        true => backend::pick_server(be, Some(prev), None).unwrap_or(prev),
        false => prev,
    };
    let retry = crate::stats::counters::SrvError::Retry { redispatch: target != prev };
    crate::stats::counters::count_srv_error(rt, be_idx, Some(prev), retry);
    let conn = &sess.conn;
    // the SNI the previous connection announced, again
    let sni = backend::sni_again(&be.be.servers[target], prev_sni.as_deref());
    let cx = ConnectCtx { sni: &sni, ..ConnectCtx::new(conn) };
    let new = backend::connect(rt, be_idx, Reuse::No, Some(target), None, backend::Priority::default(), cx).await;
    let new = new.ok()?;
    // COMPAT: as for the pool's retry, the header carries no UNIQUE_ID TLV
    backend::send_proxy::send(rt, be_idx, &new).await.then_some(())?;
    write_all(&new.stream, out, be.timeouts.server).await.ok()?;
    Some(new)
}

/// Which idle connections this request may use (`http-reuse`).
///
/// COMPAT: with `safe` (the default), HAProxy sends the first request of a client
/// connection on a new server connection, so that a server closing an idle connection
/// cannot make that request fail. rampart gives the same guarantee more cheaply: a
/// first request that can be replayed (idempotent method, whole request already in
/// hand) may use an idle connection, and if that connection fails before any response
/// byte the request is sent again on a new connection, invisibly to the client.
fn reuse_policy(mode: HttpReuse, first_done: bool, method: Method, replayable: bool) -> Reuse {
    match mode {
        HttpReuse::Never => Reuse::No,
        HttpReuse::Always => Reuse::MinUses(0),
        _ if first_done => Reuse::MinUses(0),
        HttpReuse::Aggressive => Reuse::MinUses(2),
        HttpReuse::Safe if method.is_idempotent() && replayable => Reuse::MinUses(0),
        HttpReuse::Safe => Reuse::No,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_reuse_lets_only_replayable_first_requests_take_idle_connections() {
        assert_eq!(reuse_policy(HttpReuse::Safe, false, Method::Get, true), Reuse::MinUses(0));
        assert_eq!(reuse_policy(HttpReuse::Safe, false, Method::Post, true), Reuse::No);
        assert_eq!(reuse_policy(HttpReuse::Safe, false, Method::Get, false), Reuse::No);
        assert_eq!(reuse_policy(HttpReuse::Safe, true, Method::Post, false), Reuse::MinUses(0));
        assert_eq!(reuse_policy(HttpReuse::Never, true, Method::Get, true), Reuse::No);
        assert_eq!(reuse_policy(HttpReuse::Aggressive, false, Method::Post, false), Reuse::MinUses(2));
        assert_eq!(reuse_policy(HttpReuse::Always, false, Method::Post, false), Reuse::MinUses(0));
    }

    #[test]
    fn a_close_before_any_byte_is_retried_only_when_allowed_and_unseen() {
        let progress = xfer::Progress::default();
        let closed = Err(RespError::ServerClosedEarly);
        assert!(must_retry(&closed, true, &progress));
        assert!(!must_retry(&closed, false, &progress));
        assert!(must_retry(&Err(RespError::Retry), false, &progress));
        assert!(!must_retry(&Err(RespError::Status(502)), true, &progress));
        progress.answered.store(true, Ordering::Relaxed);
        assert!(!must_retry(&closed, true, &progress));
    }
}
