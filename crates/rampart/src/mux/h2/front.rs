//! One HTTP/2 stream as the stream sees it: [`H2Front`] implements [`HttpFront`] over
//! the connection's shared state. The request head was decoded by the connection
//! (`h2::msg`); its body arrives as DATA the connection files in the stream's slot and
//! goes to the server side in HTTP/1 framing (as received when its length is known,
//! chunked otherwise). The response ([`H2Sink`]) goes out as HEADERS and DATA frames
//! within the flow-control windows: an HTTP/1 response's chunked body is read as its
//! data and trailers (`h1::body::Unchunk`), the trailers sent as a last HEADERS frame.
//! HAProxy counterpart: mux_h2.c (`h2s_*`, `h2_snd_buf`, `h2_rcv_buf`).

use std::future::poll_fn;
use std::task::Poll;
use std::time::Duration;

use atomic_refcell::AtomicRefCell;
use rampart_proto::h2::ErrorCode;

use super::shared::SharedRef;
use crate::action::WaitBody;
use crate::back::{BackRecv, BackRx, BackSend, BackTx, BodyError};
use crate::backend::ServerConn;
use crate::debug::Trace;
use crate::h1::body::Unchunk;
use crate::h2::msg::{response_fields, response_fields_as, Tunnel};
use crate::http::{BodyLen, Method, MsgHead, MsgView, Synth};
use crate::io::IoError;
use crate::sample::vars::VarStore;
use crate::session::types::Session;
use crate::splice::{frames_idle, tunnel_timeouts};
use crate::stream::side::{LogInfo, Progress, ResSend, ResSink, Streamed};
use crate::stream::{BodyWaited, HttpFront, Next, ReqMeta};
use crate::timer::Timeouts;

/// The client side of one HTTP/2 stream.
pub struct H2Front<'a> {
    pub shared: &'a SharedRef,
    pub id: u32,
    pub sess: &'a Session,
    /// The decoded request head's bytes (the request's slices point here).
    pub head_buf: Vec<u8>,
    /// The request's method (a response to HEAD has no body).
    pub method: Method,
    /// What is known of the request body.
    pub body_len: BodyLen,
    /// Request body bytes in hand (DATA taken from the slot), not sent yet.
    pub body: Vec<u8>,
    /// The whole request body is in `body` (or was sent).
    pub body_done: bool,
    /// The head and the body in hand went to a server.
    pub sent: bool,
    /// `body` in HTTP/1 framing, for a body of unknown length (chunked).
    pub raw: Vec<u8>,
    /// The first stream of the connection.
    pub first: bool,
    /// The request was a CONNECT or an extended CONNECT: the stream may become a
    /// tunnel.
    pub tunnel: Option<Tunnel>,
    /// What this stream's exchange measured (`%B`, `%U`, the stats' bytes).
    pub info: LogInfo,
    /// The stream's `-d` output, when debugging.
    pub trace: Option<&'a Trace>,
}

/// Waits for DATA on stream `id` (or the end of the request, or a reset): appends what
/// came to `into`; `true` once nothing more will come.
async fn recv(shared: &SharedRef, id: u32, into: &mut Vec<u8>) -> bool {
    poll_fn(|cx| match shared.borrow_mut().take_data(id, into, cx.waker()) {
        Some(end) => Poll::Ready(end),
        None => Poll::Pending,
    })
    .await
}

/// Whether stream `id` was reset (or is gone).
fn was_reset(shared: &SharedRef, id: u32) -> bool {
    shared.borrow().streams.get(&id).is_none_or(|s| s.reset.is_some())
}

/// Ends once stream `id` is reset (by the client, or by the connection as it ends),
/// woken by the slot (`Shared::wake`).
// PERF: a stream waiting for its server watched for a reset with a 100 ms timer, set
// and cancelled once or twice per request (issue 27: tokio's timer wheel, 5 % of an
// HTTP/2 request's instructions at 100 connections x 10 streams).
fn reset_seen(shared: &SharedRef, id: u32) -> impl std::future::Future<Output = ()> + Send + '_ {
    poll_fn(move |cx| {
        let mut s = shared.borrow_mut();
        match s.streams.get_mut(&id) {
            Some(slot) if slot.reset.is_none() => {
                if !slot.reset_waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    slot.reset_waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
            _ => Poll::Ready(()),
        }
    })
}

impl H2Front<'_> {
    /// Rebuilds the HTTP/1 framing of the body in hand (chunked, for a body whose length
    /// is not known).
    fn frame_raw(&mut self) {
        if self.body_len != BodyLen::Unknown {
            return;
        }
        self.raw.clear();
        if !self.body.is_empty() {
            push_chunk(&mut self.raw, &self.body);
        }
        if self.body_done {
            self.raw.extend_from_slice(b"0\r\n\r\n");
        }
    }

    fn reset(&self) -> bool {
        was_reset(self.shared, self.id)
    }
}

/// Appends one chunk (size line, data, CRLF).
fn push_chunk(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

impl<'a> HttpFront for H2Front<'a> {
    type Sink = H2Sink<'a>;

    fn req_buf(&self) -> &[u8] {
        &self.head_buf
    }

    fn req_meta(&self) -> ReqMeta {
        let closing = self.shared.borrow().closing;
        ReqMeta {
            keep_alive: !closing,
            body_complete: self.body_done,
            first: self.first,
            sent_before: self.shared.borrow().sent_before,
            upgrade: self.tunnel == Some(Tunnel::Upgrade),
            body: self.body_len,
        }
    }

    fn req_body(&self) -> Option<&[u8]> {
        (self.body_len != BodyLen::None && !self.sent).then_some(&self.body[..])
    }

    fn req_body_raw(&self) -> &[u8] {
        if self.sent {
            &[]
        } else if self.body_len == BodyLen::Unknown {
            &self.raw
        } else {
            &self.body
        }
    }

    async fn wait_body(&mut self, w: WaitBody, _expect_continue: bool) -> BodyWaited {
        let rt = &self.sess.rt;
        let deadline = w.time.or(rt.proxies[self.sess.fe].timeouts.client).map(|t| tokio::time::Instant::now() + t);
        while !self.body_done && (w.at_least == 0 || (self.body.len() as u64) < w.at_least) {
            if self.head_buf.len() + self.body.len() >= rt.max_head {
                break;
            }
            let mut more = std::mem::take(&mut self.body);
            let got = match deadline {
                Some(d) => tokio::time::timeout_at(d, recv(self.shared, self.id, &mut more)).await.ok(),
                None => Some(recv(self.shared, self.id, &mut more).await),
            };
            self.body = more;
            match got {
                None => return BodyWaited::Failed(408),
                Some(_) if self.reset() => return BodyWaited::Closed,
                Some(end) => self.body_done = end,
            }
        }
        self.frame_raw();
        BodyWaited::Ready
    }

    fn rewrite_room(&self) -> usize {
        let rt = &self.sess.rt;
        rt.bufsize.saturating_sub((self.head_buf.len() + self.body.len()).min(rt.max_head))
    }

    async fn interim(&mut self, head: &MsgHead) {
        let view = head.view(&[]);
        let mut lower = Vec::new();
        self.shared.borrow_mut().send_headers(self.id, &mut |emit| response_fields(view, &mut lower, emit), false);
    }

    fn take_sess_vars(&mut self) -> Option<VarStore> {
        self.shared.borrow().sess_vars.as_ref().map(VarStore::from_snapshot)
    }

    fn keep_sess_vars(&mut self, vars: VarStore) {
        // COMPAT: streams that run at the same time each work on a copy of the
        // `sess.` variables; the last one to end writes its copy back
        self.shared.borrow_mut().sess_vars = Some(vars.into_snapshot());
    }

    fn take_private(&mut self) -> Option<ServerConn> {
        None
    }

    fn keep_private(&mut self, sc: ServerConn) {
        // COMPAT: an HTTP/2 client connection keeps no private server connection
        // (`http-reuse never` closes it after each stream).
        drop(sc);
    }

    fn client_gone(&self, _every: Duration) -> impl std::future::Future<Output = ()> + Send + '_ {
        reset_seen(self.shared, self.id)
    }

    fn trace(&self) -> Option<&Trace> {
        self.trace
    }

    fn req_sent(&mut self) {
        self.sent = true;
        self.shared.borrow_mut().sent_before = true;
    }

    fn sink(&self) -> H2Sink<'a> {
        H2Sink {
            shared: self.shared,
            id: self.id,
            head: self.method == Method::Head,
            t_client: self.sess.rt.proxies[self.sess.fe].timeouts.client,
            body: AtomicRefCell::new(ResBody::default()),
            trace: self.trace,
        }
    }

    async fn upload(
        &mut self,
        tx: &BackTx<'_>,
        progress: &Progress,
        t_client: Option<Duration>,
        t_server: Option<Duration>,
    ) -> Result<(), BodyError> {
        let chunked = self.body_len == BodyLen::Unknown;
        let mut data = Vec::new();
        let mut framed = Vec::new();
        loop {
            data.clear();
            let end = match t_client {
                Some(t) => tokio::time::timeout(t, recv(self.shared, self.id, &mut data))
                    .await
                    .map_err(|_| BodyError::From(IoError::Timeout))?,
                None => recv(self.shared, self.id, &mut data).await,
            };
            if self.reset() {
                return Err(BodyError::From(IoError::Closed));
            }
            let out: &[u8] = if chunked {
                framed.clear();
                if !data.is_empty() {
                    push_chunk(&mut framed, &data);
                }
                if end {
                    framed.extend_from_slice(b"0\r\n\r\n");
                }
                &framed
            } else {
                &data
            };
            if !out.is_empty() {
                tx.send_body(out, t_server).await.map_err(BodyError::To)?;
                progress.upload.bump();
                progress.upload.add(data.len() as u64);
            }
            if end {
                self.body_done = true;
                return Ok(());
            }
        }
    }

    async fn tunnel(&mut self, tx: &BackTx<'_>, rx: &mut BackRx<'_>, be: Timeouts) {
        let fe = &self.sess.rt.proxies[self.sess.fe];
        let (up, down) = tunnel_timeouts(&fe.timeouts, &be);
        let sink = self.sink();
        let (mut up_open, mut down_open) = (true, true);
        let mut data = Vec::new();
        while up_open || down_open {
            data.clear();
            let step = async {
                tokio::select! {
                    end = recv(self.shared, self.id, &mut data), if up_open => Flow::Up(end),
                    got = rx.recv_body(None), if down_open => Flow::Down(got),
                }
            };
            let flow = match frames_idle(&up, &down, up_open, down_open) {
                Some(t) => match tokio::time::timeout(t, step).await {
                    Ok(f) => f,
                    Err(_) => break,
                },
                None => step.await,
            };
            let moved = match flow {
                Flow::Up(_) if self.reset() => return,
                Flow::Up(end) => {
                    up_open = !end;
                    let sent = tx.send_body(&data, up.write).await;
                    if end {
                        tx.end_tunnel().await;
                    }
                    sent.is_ok()
                }
                Flow::Down(Ok(Some(bytes))) => sink.send_all(bytes, false).await.is_ok(),
                Flow::Down(Ok(None)) => {
                    down_open = false;
                    sink.send_all(&[], true).await.is_ok()
                }
                Flow::Down(Err(_)) => false,
            };
            if !moved {
                break;
            }
        }
        // a side failed or the tunnel timed out: the stream is cut
        if up_open || down_open {
            self.shared.borrow_mut().reset(self.id, ErrorCode::Cancel);
        }
    }

    fn account(&mut self, progress: &Progress) {
        use std::sync::atomic::Ordering;
        self.info.sent += progress.download.bytes();
        self.info.head_sent += progress.head.load(Ordering::Relaxed);
        self.info.received += progress.upload.bytes();
        if progress.back_src.is_some() {
            self.info.back_src = progress.back_src;
        }
    }

    async fn reply(&mut self, res: &MsgHead, reply: &Synth<'_>) -> Next {
        let sink = self.sink();
        let view = res.view(reply.buf);
        // as HAProxy, a `101` (`http-after-response set-status 101`) answers an
        // extended CONNECT as `200` (RFC 8441 §5); HTTP/2 has no `101` otherwise
        let status = match res.status {
            101 if self.tunnel == Some(Tunnel::Upgrade) => 200,
            101 => {
                self.shared.borrow_mut().reset(self.id, ErrorCode::InternalError);
                return Next::Close;
            }
            s => s,
        };
        let bodyless = self.method == Method::Head || matches!(status, 100..=199 | 204 | 304);
        let body = if bodyless { &[][..] } else { &reply.body[..] };
        let mut lower = Vec::new();
        self.shared.borrow_mut().send_headers(
            self.id,
            &mut |emit| response_fields_as(view, status, &mut lower, emit),
            body.is_empty(),
        );
        if !body.is_empty() && sink.send_all(body, true).await.is_err() {
            return Next::Close;
        }
        self.info.sent += body.len() as u64;
        Next::KeepAlive
    }

    async fn reply_streamed<R: BackRecv + Send>(&mut self, res: &MsgHead, out: Streamed<'_, R>) -> Next {
        if res.status == 101 {
            // as `reply`: HTTP/2 has no `101` but to an extended CONNECT
            self.shared.borrow_mut().reset(self.id, ErrorCode::InternalError);
            return Next::Close;
        }
        let sink = self.sink();
        let progress = Progress::default();
        let how = ResSend { facts: out.facts, keep_client: true, tunnel: None, whole: out.whole };
        let sent = match sink.send_head(res.view(out.buf), how, out.first, &progress).await {
            Ok(_) if out.whole => true,
            Ok(_) => sink.send_body_from(out.body, &progress, None).await.is_ok(),
            Err(()) => false,
        };
        self.account(&progress);
        if sent {
            Next::KeepAlive
        } else {
            Next::Close
        }
    }

    fn silent_drop(&mut self) {
        self.shared.borrow_mut().silent_drop = true;
    }

    fn set_fc(&mut self, fc: crate::action::sockopt::FcPending) {
        // the connection's task owns the socket: it sets them after this event
        let mut sh = self.shared.borrow_mut();
        let pending = sh.fc.get_or_insert_with(Default::default);
        pending.mark = fc.mark.or(pending.mark);
        pending.tos = fc.tos.or(pending.tos);
    }

    async fn reply_raw(&mut self, _bytes: &[u8]) -> Next {
        // an error file rampart could not parse cannot go out as HTTP/2 frames
        self.shared.borrow_mut().reset(self.id, ErrorCode::InternalError);
        Next::Close
    }

    fn log_info(&self) -> LogInfo {
        self.info
    }
}

/// What moved in a tunnel: the client's DATA (`true`: it ended its side) or the
/// server's bytes.
enum Flow<'b> {
    Up(bool),
    Down(Result<Option<&'b [u8]>, BodyError>),
}

/// How the response body arrives from the server side, and where its reading stands.
#[derive(Debug, Default)]
enum ResBody {
    /// As it is (a known length, or until the server closes).
    #[default]
    Plain,
    /// Chunked: read as its data and trailers.
    Chunked(Box<Unchunk>),
}

/// The response half of an HTTP/2 stream.
#[derive(Debug)]
pub struct H2Sink<'a> {
    shared: &'a SharedRef,
    id: u32,
    /// The request was HEAD: the response has no body.
    head: bool,
    t_client: Option<Duration>,
    body: AtomicRefCell<ResBody>,
    trace: Option<&'a Trace>,
}

impl H2Sink<'_> {
    /// Sends `data` as DATA frames as the windows allow (`end`: the last bytes).
    async fn send_all(&self, mut data: &[u8], end: bool) -> Result<(), ()> {
        loop {
            let n = poll_fn(|cx| {
                let mut s = self.shared.borrow_mut();
                if s.closing || s.streams.get(&self.id).is_none_or(|st| st.reset.is_some()) {
                    return Poll::Ready(None);
                }
                if !s.has_room(cx.waker()) || !s.can_send(self.id, cx.waker()) {
                    return Poll::Pending;
                }
                Poll::Ready(Some(s.send_data(self.id, data, end)))
            });
            let n = match self.t_client {
                Some(t) => tokio::time::timeout(t, n).await.map_err(|_| ())?,
                None => n.await,
            };
            let Some(n) = n else { return Err(()) };
            data = &data[n..];
            if data.is_empty() {
                return Ok(());
            }
        }
    }

    /// Sends the next body bytes as the server side gave them (HTTP/1 framing): their
    /// data, and at the end of a chunked body its trailers. `last`: no more will come.
    async fn send_body(&self, bytes: &[u8], last: bool) -> Result<(), ()> {
        if matches!(*self.body.borrow(), ResBody::Plain) {
            // PERF: sent from the server side's buffer, without a copy
            return if bytes.is_empty() && !last { Ok(()) } else { self.send_all(bytes, last).await };
        }
        let mut data = Vec::new();
        let trailers = {
            let mut body = self.body.borrow_mut();
            match &mut *body {
                ResBody::Plain => {
                    data.extend_from_slice(bytes);
                    None
                }
                ResBody::Chunked(u) => {
                    u.feed(bytes, |d| data.extend_from_slice(d));
                    u.is_done()
                        .then(|| u.trailers().map(|(n, v)| (n.to_ascii_lowercase(), v.to_vec())).collect::<Vec<_>>())
                }
            }
        };
        let end = last || trailers.is_some();
        match trailers.filter(|t| !t.is_empty()) {
            Some(t) => {
                if !data.is_empty() {
                    self.send_all(&data, false).await?;
                }
                let fields = |emit: &mut dyn FnMut(&[u8], &[u8])| t.iter().for_each(|(n, v)| emit(n, v));
                self.shared.borrow_mut().send_headers(self.id, &mut { fields }, true);
                Ok(())
            }
            None if data.is_empty() && !end => Ok(()),
            None => self.send_all(&data, end).await,
        }
    }
}

impl H2Sink<'_> {
    /// The head that opens a tunnel: `101 Switching Protocols` is `200` in HTTP/2 (an
    /// extended CONNECT's answer, RFC 8441 §5), and the stream stays open; `body`: the
    /// server's first tunnel bytes.
    async fn open_tunnel(&self, head: MsgView<'_>, body: &[u8], progress: &Progress) -> Result<Option<()>, ()> {
        let status = if head.head.status == 101 { 200 } else { head.head.status };
        *self.body.borrow_mut() = ResBody::Plain;
        let mut lower = Vec::new();
        let fields = &mut |emit: &mut dyn FnMut(&[u8], &[u8])| response_fields_as(head, status, &mut lower, emit);
        self.shared.borrow_mut().send_headers(self.id, fields, false);
        if !body.is_empty() {
            self.send_all(body, false).await?;
            progress.download.add(body.len() as u64);
        }
        Ok(None)
    }
}

impl ResSink for H2Sink<'_> {
    type Held = ();

    fn trace(&self) -> Option<&Trace> {
        self.trace
    }

    async fn interim(&self, head: MsgView<'_>, _progress: &Progress) -> Result<(), ()> {
        let mut lower = Vec::new();
        self.shared.borrow_mut().send_headers(self.id, &mut |emit| response_fields(head, &mut lower, emit), false);
        Ok(())
    }

    async fn send_head(
        &self,
        head: MsgView<'_>,
        how: ResSend,
        body: &[u8],
        progress: &Progress,
    ) -> Result<Option<()>, ()> {
        use std::sync::atomic::Ordering;
        if how.tunnel.is_some() {
            return self.open_tunnel(head, body, progress).await;
        }
        let bodyless =
            self.head || how.facts.body == BodyLen::None || matches!(head.head.status, 100..=199 | 204 | 304);
        *self.body.borrow_mut() = match how.facts.body {
            BodyLen::Unknown if !how.facts.until_close => ResBody::Chunked(Box::default()),
            _ => ResBody::Plain,
        };
        // A response whole in hand without body bytes (`content-length: 0`, or an HTTP/2
        // server's HEADERS that ended its stream) ends the stream with its HEADERS: a gRPC
        // "trailers-only" response must reach the client as one HEADERS frame, the status
        // fields in it, not followed by an empty DATA (grpc-core then reports UNKNOWN).
        // The answer to HEAD ends its stream once the server's response ended (a rule
        // may have sent a GET): as HAProxy, which skips the body and sends END_STREAM
        // at its end, so that the client's next request finds the server connection
        // free again (reg-test http_bodyless_response).
        let end = if self.head { how.whole } else { bodyless || (how.whole && body.is_empty()) };
        let mut lower = Vec::new();
        self.shared.borrow_mut().send_headers(self.id, &mut |emit| response_fields(head, &mut lower, emit), end);
        progress.head.store(0, Ordering::Relaxed);
        if end || self.head {
            return Ok(None);
        }
        self.send_body(body, how.whole).await?;
        progress.download.add(body.len() as u64);
        Ok(None)
    }

    async fn flush(&self, _held: (), _progress: &Progress) -> Result<(), ()> {
        Ok(())
    }

    async fn send_body_from<R: BackRecv + Send>(
        &self,
        rx: &mut R,
        progress: &Progress,
        t_server: Option<Duration>,
    ) -> Result<(), BodyError> {
        // a server that stays silent (a gRPC stream waiting for events) must not keep a
        // stream the client reset. COMPAT: haproxy 2.6.12 leaves the server's stream open
        // then (no RST_STREAM within 1.5 s in http2_backend's cancel test); rampart
        // cancels it as soon as the client's RST_STREAM is read, as both do before the
        // response head.
        if self.head {
            // what the server sent anyway (a rule made its request a GET) is read to
            // its end and dropped, as HAProxy skips it; then the stream ends (a client
            // that reset it meanwhile does not need that)
            while rx.recv_body(t_server).await?.is_some() {}
            if !self.shared.borrow().streams.get(&self.id).is_none_or(|s| s.local_end) {
                let _ = self.send_all(&[], true).await;
            }
            return Ok(());
        }
        let gone = self.client_gone();
        tokio::pin!(gone);
        loop {
            let got = tokio::select! {
                r = rx.recv_body(t_server) => r?,
                () = &mut gone => return Err(BodyError::To(IoError::Closed)),
            };
            match got {
                Some(bytes) => {
                    let n = bytes.len() as u64;
                    self.send_body(bytes, false).await.map_err(|()| BodyError::To(IoError::Closed))?;
                    progress.download.bump();
                    progress.download.add(n);
                }
                None => {
                    if !self.shared.borrow().streams.get(&self.id).is_none_or(|s| s.local_end) {
                        self.send_body(&[], true).await.map_err(|()| BodyError::To(IoError::Closed))?;
                    }
                    return Ok(());
                }
            }
        }
    }

    fn client_gone(&self) -> impl std::future::Future<Output = ()> + Send {
        reset_seen(self.shared, self.id)
    }
}
