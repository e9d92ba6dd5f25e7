//! TCP passthrough (`mode tcp`): the I/O of a TCP stream (`stream::tcp` decides). Without
//! content rules it connects to a server as soon as the client is accepted, then
//! splices both directions until both have ended, half-closing each side when the
//! other one closes; with rules, it first reads what they inspect, sends that ahead of
//! the spliced bytes, and holds the server's first bytes for the response rules.
//! HAProxy counterpart: mux_pt.c plus the TCP part of stream.c.

use std::os::fd::AsRawFd;
use std::time::Duration;

use tokio::time::Instant;

use crate::backend::{self, Reuse, ServerConn};
use crate::buf::Buf;
use crate::debug::{self, Trace};
use crate::io::{self, write_all, IoError, Parkable, Sock};
use crate::log::{Cause, Phase, StreamLog};
use crate::sample::vars::VarStore;
use crate::sample::SampleCtx;
use crate::session::types::Session;
use crate::splice::{forward, tunnel_timeouts, Activity, DirTimeouts};
use crate::stream::side::Input;
use crate::stream::{self, ResVerdict, TcpClose, TcpFront};

/// Serves one TCP-mode client connection; `sess_vars` are the `sess.` variables the
/// connection rules set. A stream that becomes HTTP hands the connection over to the
/// HTTP muxes ([`upgrade`]).
pub async fn serve<S: Parkable>(client: S, sess: Session, sess_vars: Option<Box<VarStore>>) {
    let trace = debug::on().then(|| {
        let fe = &sess.rt.proxies[sess.fe];
        Trace::accept(&fe.name, sess.lfd, client.as_raw_fd(), sess.conn.src)
    });
    // the session rules ran since the accept: the time they took is not counted
    let log = sess.rt.proxies[sess.fe].log.is_some().then(Box::<StreamLog>::default);
    let mut front = PtFront {
        client: &client,
        sess: &sess,
        server: None,
        trace: trace.as_ref(),
        log,
        srv: None,
        client_spoke: false,
        linger: false,
    };
    let mut ended = stream::tcp::run(&mut front, &sess.rt, &sess.conn, sess.fe, sess_vars).await;
    if let Some(up) = ended.upgrade.take() {
        // as HAProxy, nothing is logged for the TCP stream: HTTP/1 goes on with it as
        // its first request's stream (logged as such), HTTP/2 drops it
        drop(front);
        // PERF: boxed, so that a TCP connection's task is not as large as an HTTP one's
        return Box::pin(upgrade(client, sess, *up)).await;
    }
    let linger = front.linger;
    let be = ended.be;
    if let (Some(mut l), Some(pl)) = (front.log.take(), sess.rt.proxies[sess.fe].log.as_deref()) {
        l.end = Some(std::time::Instant::now());
        l.level = ended.log_level;
        if be.is_none() || l.connect_start.is_none() {
            // closed by a rule (or no backend) before any connection
            l.end_by(Cause::Proxy, Phase::Request);
        }
        let ctx = SampleCtx {
            be,
            srv: front.srv,
            log: Some(&l),
            last_rule: ended.last_rule,
            vars: crate::sample::vars::Vars {
                proc: Some(&sess.rt.proc_vars),
                sess: ended.vars.as_ref().map(|v| &v[0]),
                txn: ended.vars.as_ref().map(|v| &v[1]),
                ..Default::default()
            },
            ..SampleCtx::new(&*sess.rt, &sess.conn, sess.fe)
        };
        crate::log::emit(pl, &ctx, l.bytes_in == 0 && !front.client_spoke);
    }
    if let Some(trace) = trace {
        let fe = &sess.rt.proxies[sess.fe];
        trace.end(&fe.fe.backend.map_or(fe, |be| &sess.rt.proxies[be]).name);
        // COMPAT: `-d` names the default backend at the end of a TCP stream, even when
        // a `use_backend` rule chose another one.
    }
    if linger {
        // the stream and its session are over (logged, counted); the socket waits
        // for the client's FIN in the background of this task
        let limit = sess.rt.proxies[sess.fe].timeouts.client.unwrap_or(io::LINGER_LIMIT);
        drop(sess);
        io::linger_close(client, limit).await;
    }
}

/// Serves the connection of a TCP stream that became HTTP ([`stream::upgrade`]) with
/// the mux its `switch-mode` rule asked for: HTTP/2 for `proto h2`, else HTTP/1,
/// which turns to HTTP/2 on the client's preface unless the rule said `proto h1`.
async fn upgrade<S: Parkable>(client: S, sess: Session, up: stream::upgrade::Upgrade) {
    use crate::action::tcp::SwitchProto;
    let stream::upgrade::Upgrade { proto, held, sess: vars, first } = up;
    match proto {
        SwitchProto::H2 => super::h2::serve(client, sess, held, vars).await,
        SwitchProto::H1 | SwitchProto::Auto => {
            super::h1::serve_upgraded(client, sess, held, vars, first, proto == SwitchProto::H1).await
        }
    }
}

/// The client connection of a TCP stream and, once connected, its server connection.
struct PtFront<'a, S> {
    client: &'a S,
    sess: &'a Session,
    server: Option<ServerConn>,
    trace: Option<&'a Trace>,
    /// The log record, when the frontend logs.
    log: Option<Box<StreamLog>>,
    /// The server connected to (for the log line).
    srv: Option<usize>,
    /// Bytes moved in a session whose sizes are unknown (it ended in error).
    client_spoke: bool,
    /// The stream closed the client connection first ([`TcpClose::Close`]): it ends
    /// with [`io::linger_close`].
    linger: bool,
}

impl<S: Sock> TcpFront for PtFront<'_, S> {
    async fn read_req(&mut self, buf: &mut Vec<u8>, wait: Option<Duration>) -> Input {
        read_input(self.client, buf, wait).await
    }

    async fn connect(
        &mut self,
        be: usize,
        forced: Option<usize>,
        key: Option<u32>,
        cx: backend::send_proxy::ConnectCtx<'_>,
    ) -> Option<usize> {
        let rt = &self.sess.rt;
        if let Some(l) = &mut self.log {
            l.connect_start = Some(std::time::Instant::now());
        }
        match backend::connect_unless_aborted(
            crate::io::peer_closes(self.client, backend::ABORT_CHECK_EVERY),
            rt,
            be,
            Reuse::No,
            forced,
            key,
            cx.prio,
            cx,
            &mut backend::own_only,
        )
        .await
        {
            Ok(Ok(backend::Connected::Own(conn))) => {
                self.srv = Some(conn.srv);
                if !backend::send_proxy::send(rt, be, &conn).await {
                    if let Some(l) = &mut self.log {
                        l.end_by(Cause::ServerAbort, Phase::Connect);
                    }
                    return None;
                }
                if let Some(l) = &mut self.log {
                    l.connected = Some(std::time::Instant::now());
                    l.queued(conn.queued);
                    l.back_src = conn.stream.local_addr().ok();
                }
                if let Some(t) = self.trace {
                    t.set_server(conn.stream.as_raw_fd());
                }
                let srv = conn.srv;
                self.server = Some(conn);
                Some(srv)
            }
            // No server (refused after the retries, queue timeout), or the client left
            // meanwhile with `option abortonclose`.
            other => {
                if let Some(l) = &mut self.log {
                    match other {
                        Ok(Err(backend::ConnectError::QueueTimeout(wait))) => {
                            l.queued(wait);
                            l.end_by(Cause::ServerTimeout, Phase::Queue);
                        }
                        Ok(_) => l.end_by(Cause::ServerAbort, Phase::Connect),
                        Err(_) => l.end_by(Cause::ClientAbort, Phase::Connect),
                    }
                }
                None
            }
        }
    }

    async fn forward<R>(&mut self, be: usize, req: &[u8], on_response: Option<R>)
    where
        R: FnMut(&mut Vec<u8>, bool, &mut Vec<u8>) -> ResVerdict + Send,
    {
        let Some(conn) = self.server.take() else { return };
        let rt = &self.sess.rt;
        let (up, down) = tunnel_timeouts(&rt.proxies[self.sess.fe].timeouts, &rt.proxies[be].timeouts);
        if !req.is_empty() && write_all(&conn.stream, req, up.write).await.is_err() {
            return;
        }
        let (client, server) = (self.client, &conn.stream);
        let activity = Activity::default();
        let Some(on_response) = on_response else {
            // each direction's error says which side ended the session, for the log
            let moved = tokio::try_join!(
                async { forward(client, server, None, up, &activity).await.map_err(|e| (Cause::ClientAbort, e)) },
                async { forward(server, client, None, down, &activity).await.map_err(|e| (Cause::ServerAbort, e)) },
            );
            if let Ok((up, down)) = moved {
                let bytes = (up + req.len() as u64, down);
                crate::stats::counters::count_bytes(
                    rt,
                    (self.sess.fe, self.sess.conn.listener),
                    Some(be),
                    Some(conn.srv),
                    bytes,
                );
            }
            let Some(l) = &mut self.log else { return };
            match moved {
                Ok((up, down)) => {
                    l.bytes_in = up + req.len() as u64;
                    l.bytes_out = down;
                }
                // COMPAT: the sizes of a session that ended in error (a timeout, a
                // reset) are not known: rampart logs 0 where HAProxy logs what moved.
                Err((side, e)) => {
                    // whether the client sent anything still counts (`dontlognull`)
                    self.client_spoke = !req.is_empty() || activity.get() > 0;
                    let cause = match (side, e) {
                        (Cause::ClientAbort, IoError::Timeout) => Cause::ClientTimeout,
                        (Cause::ServerAbort, IoError::Timeout) => Cause::ServerTimeout,
                        (side, _) => side,
                    };
                    l.end_by(cause, Phase::Data);
                }
            }
            return;
        };
        let up_f = forward(client, server, None, up, &activity);
        let down_f = inspect_response(server, client, on_response, down, &activity, rt.bufsize);
        tokio::pin!(up_f, down_f);
        let mut up_done = false;
        // biased, the request direction first: what the client already sent reaches
        // the server before a response rule may end the stream, as in HAProxy where
        // the request buffer is sent as soon as the connection is up
        let down_end = loop {
            tokio::select! {
                biased;
                res = &mut up_f, if !up_done => {
                    if res.is_err() {
                        return;
                    }
                    up_done = true;
                }
                end = &mut down_f => break end,
            }
        };
        match down_end {
            DownEnd::Spliced(Ok(_)) if !up_done => {
                let _ = up_f.await;
            }
            DownEnd::Spliced(_) => {}
            DownEnd::ServerClosed => io::reset_on_close(server),
            DownEnd::Reject => io::discard_input(client, rt.bufsize),
            DownEnd::SilentDrop => io::silent_drop(client),
        }
        // COMPAT: with response rules the sizes are not counted (0 in the log); whether
        // anything moved still counts for `dontlognull`
        self.client_spoke = !req.is_empty() || activity.get() > 0;
    }

    fn set_fc(&mut self, fc: crate::action::sockopt::FcPending) {
        io::set_fc(self.client, fc.mark, fc.tos);
    }

    fn log_record(&self) -> Option<StreamLog> {
        self.log.as_deref().cloned()
    }

    fn service_start(&mut self, id: usize) {
        if let Some(l) = &mut self.log {
            let now = std::time::Instant::now();
            l.connect_start = Some(now);
            l.connected = Some(now);
            // COMPAT: `Td` of a TCP stream counts from the connection (HAProxy's
            // `t_close - t_connect` outside HTTP mode)
            l.res_head = Some(now);
            l.queue_ms = Some(0);
            l.applet = u32::try_from(id).ok();
        }
    }

    fn shut_write(&mut self) {
        io::shutdown_write(self.client);
    }

    async fn send(&mut self, data: &[u8]) -> bool {
        let timeout = self.sess.rt.proxies[self.sess.fe].timeouts.client;
        write_all(self.client, data, timeout).await.is_ok()
    }

    fn service_end(&mut self, be: usize, bytes: (u64, u64), client_timeout: bool) {
        crate::stats::counters::count_bytes(
            &self.sess.rt,
            (self.sess.fe, self.sess.conn.listener),
            Some(be),
            None,
            bytes,
        );
        self.client_spoke = bytes.0 > 0;
        if let Some(l) = &mut self.log {
            (l.bytes_in, l.bytes_out) = bytes;
            if client_timeout {
                l.end_by(Cause::ClientTimeout, Phase::Data);
            }
        }
    }

    fn close(&mut self, how: TcpClose) {
        match how {
            TcpClose::Close => {
                io::discard_input(self.client, self.sess.rt.bufsize);
                self.linger = true;
            }
            TcpClose::SilentDrop => io::silent_drop(self.client),
        }
    }
}

/// One read of what a peer sent into `buf`, waiting at most `wait` (zero: only what
/// already arrived, without arming a timer).
async fn read_input<S: Sock>(sock: &S, buf: &mut Vec<u8>, wait: Option<Duration>) -> Input {
    if wait == Some(Duration::ZERO) {
        return match io::try_read_some(sock, buf) {
            Ok(0) => Input::End,
            Ok(_) => Input::Data,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Input::Timeout,
            Err(_) => Input::Error,
        };
    }
    match io::read_some(sock, buf, wait).await {
        Ok(0) | Err(IoError::Closed) => Input::End,
        Ok(_) => Input::Data,
        Err(IoError::Timeout) => Input::Timeout,
        Err(IoError::Io(_)) => Input::Error,
    }
}

/// How the server-to-client direction ended when response rules held it.
enum DownEnd {
    /// The rules let the bytes through: the direction was spliced to its end.
    Spliced(Result<u64, IoError>),
    /// `close`: what arrived was sent, the server connection is to be reset.
    ServerClosed,
    Reject,
    SilentDrop,
}

/// Holds the server's first bytes until `on_response` decides, reading more while it
/// waits (until its deadline, or the server's timeout if that comes first), then
/// sends them to the client and splices the rest.
async fn inspect_response<A: Sock, B: Sock>(
    server: &A,
    client: &B,
    mut on_response: impl FnMut(&mut Vec<u8>, bool, &mut Vec<u8>) -> ResVerdict,
    t: DirTimeouts,
    activity: &Activity,
    bufsize: usize,
) -> DownEnd {
    let mut held = Buf::take(bufsize);
    let mut ended = false;
    // what the rules' scripts forwarded: sent at once, before the rules decide
    let mut now = Vec::new();
    loop {
        let verdict = on_response(held.vec(), ended, &mut now);
        if !now.is_empty() {
            if let Err(e) = write_all(client, &now, t.write).await {
                return DownEnd::Spliced(Err(e));
            }
            now.clear();
        }
        match verdict {
            ResVerdict::Wait(deadline) => {
                let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
                let server_first = match (left, t.read) {
                    (Some(l), Some(s)) => s < l,
                    (None, _) => true,
                    (Some(_), None) => false,
                };
                let wait = if server_first { t.read } else { left };
                match read_input(server, held.vec(), wait).await {
                    Input::Data => activity.bump(),
                    Input::End => ended = true,
                    Input::Timeout if server_first => return DownEnd::Spliced(Err(IoError::Timeout)),
                    Input::Timeout => {}
                    Input::Error => return DownEnd::Spliced(Err(IoError::Closed)),
                }
            }
            ResVerdict::LuaWait(w, deadline) => match deadline {
                Some(d) => drop(tokio::time::timeout_at(d, crate::action::lua::wait(w)).await),
                None => crate::action::lua::wait(w).await,
            },
            ResVerdict::Forward => {
                if let Err(e) = write_all(client, &held, t.write).await {
                    return DownEnd::Spliced(Err(e));
                }
                return DownEnd::Spliced(forward(server, client, None, t, activity).await);
            }
            ResVerdict::CloseServer => {
                let _ = write_all(client, &held, t.write).await;
                return DownEnd::ServerClosed;
            }
            ResVerdict::Reject => return DownEnd::Reject,
            ResVerdict::SilentDrop => return DownEnd::SilentDrop,
        }
    }
}
