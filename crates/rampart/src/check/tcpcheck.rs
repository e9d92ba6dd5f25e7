//! The tcp-check rule engine, which every health check runs since HAProxy 2.2: a
//! plain connect check (an implicit `connect`), `option tcp-check` with its
//! `tcp-check` rules, `option httpchk` with its `http-check` rules, and the protocol
//! checks (`proto`). Rules run in order; a `connect` rule opens a new connection (in
//! clear or over TLS), `send` writes, `expect` reads until its pattern can be judged,
//! `set-var` / `unset-var` work on the check's variables. The first failing rule ends
//! the check with HAProxy's status and message; otherwise the last rule decides the
//! result (those texts are built in the child module `result`, `tcpcheck_result.rs`).
//! HAProxy counterparts: `tcpcheck_main()`, `tcpcheck_eval_connect()`,
//! `tcpcheck_eval_send()`, `tcpcheck_eval_recv()`, `tcpcheck_eval_expect()`,
//! `tcpcheck_expect_onerror_message()`, `tcpcheck_expect_onsuccess_message()`
//! (src/tcpcheck.c), `chk_report_conn_err()` (src/check.c).

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use rampart_cfg::model::{HealthCheck, ProtoCheck};
use rampart_cfg::Diag;
use tokio::io::AsyncWriteExt;
use tokio::time::Instant;

use super::conn::CheckConn;
use super::h2::H2Chk;
use super::http::{self, Resp, Seen};
use super::proto::Eval;
use super::rules::{self, Action, Connect, Expect, Matcher, Rule, Send, StatusCode, VarValue};
use super::status::{CheckStatus, Outcome};
use crate::http::{MsgHead, MsgView};
use crate::sample::ctx::{ConnInfo, Dir, SampleCtx};
use crate::sample::expr::CompileCx;
use crate::sample::host::Host;
use crate::sample::vars::{Scope, VarStore};
use crate::sample::Sample;
use crate::tls::client::CheckTls;

#[path = "tcpcheck_result.rs"]
mod result;

use result::leading_code;
#[cfg(test)]
use result::payload;

/// The compiled rules of a backend's checks.
#[derive(Debug)]
pub struct TcpChk {
    rules: Vec<Rule>,
    /// `option tcp-check`: generic messages naming the step.
    generic: bool,
    /// `option httpchk`: the expect rules read HTTP responses.
    http: bool,
    /// `http-check disable-on-404`.
    pub disable_on_404: bool,
    /// `http-check send-state`.
    pub send_state: bool,
}

impl TcpChk {
    /// The check of a backend without a check option: connect, nothing more.
    pub fn plain() -> TcpChk {
        TcpChk {
            rules: super::proto::rules(&ProtoCheck::TcpCheck),
            generic: false,
            http: false,
            disable_on_404: false,
            send_state: false,
        }
    }

    /// Compiles the checks of a backend; `Err` holds an alert per rule that does not
    /// compile.
    pub fn compile(hc: &HealthCheck, cx: &mut CompileCx<'_>) -> Result<TcpChk, Vec<Diag>> {
        let (rules, generic, http) = if hc.httpchk {
            (rules::compile(&hc.http_rules, rules::List::Http, cx)?, false, true)
        } else {
            match &hc.proto {
                None => return Ok(TcpChk::plain()),
                Some(ProtoCheck::TcpCheck) => (rules::compile(&hc.tcp_rules, rules::List::Tcp, cx)?, true, false),
                Some(p) => (super::proto::rules(p), false, false),
            }
        };
        Ok(TcpChk { rules, generic, http, disable_on_404: hc.disable_on_404, send_state: hc.send_state })
    }

    /// The rules, for the tests of their compilation.
    #[cfg(test)]
    pub(super) fn into_rules(self) -> Vec<Rule> {
        self.rules
    }

    /// Whether the rules send an HTTP request (`send-state` then applies).
    pub fn is_http(&self) -> bool {
        self.http
    }

    /// The `connect` rules that may speak TLS, by position: `ssl`, or `default` (and
    /// the implicit connect) with their own SNI or ALPN. The server's TLS settings
    /// build one configuration for each ([`TlsSet`]).
    pub fn tls_connects(&self) -> impl Iterator<Item = TlsWanted<'_>> {
        self.rules.iter().enumerate().filter_map(|(i, r)| match &r.action {
            Action::Connect(c) if c.ssl || (c.default && (c.sni.is_some() || c.alpn.is_some())) => Some(TlsWanted {
                rule: i,
                ssl: c.ssl,
                default: c.default,
                sni: c.sni.as_deref(),
                alpn: c.alpn.as_deref(),
            }),
            _ => None,
        })
    }

    /// What HAProxy 2.6 says of these rules for a server with neither a service port
    /// nor a check port (`init_srv_check()`): `None` when every `connect` names a port,
    /// else the end of its alert.
    pub fn missing_port(&self) -> Option<&'static str> {
        let has_port = |c: &super::rules::Connect| c.port.is_some() || c.addr.is_some_and(|(_, p)| p.is_some());
        let connects = || {
            self.rules.iter().filter_map(|r| match &r.action {
                Action::Connect(c) => Some(c),
                _ => None,
            })
        };
        match self.rules.first().map(|r| &r.action) {
            // no rule but the connect HAProxy adds: its list of rules is empty
            Some(Action::Connect(c)) if c.implicit && self.rules.len() == 1 => Some("."),
            Some(Action::Connect(c)) if c.implicit || !has_port(c) => {
                Some(" nor tcp_check rule 'connect' with port information.")
            }
            _ if connects().any(|c| !has_port(c)) => Some(", and a tcp_check rule 'connect' with no port information."),
            _ => None,
        }
    }

    /// Whether a `connect ssl` rule needs TLS whatever the server line says.
    pub fn needs_tls(&self) -> bool {
        self.tls_connects().any(|w| w.ssl)
    }

    /// Runs the rules against the server.
    pub async fn run(&self, env: &Env<'_>) -> Outcome {
        let mut run = Run {
            chk: self,
            env,
            deadline: env.start + env.inter,
            conn: None,
            linger: false,
            buf: Vec::new(),
            closed: false,
            code: 0,
            verdict: None,
            vars: VarStore::new(Scope::Check),
            method: rampart_proto::http::Method::Options,
            current: None,
            h2: None,
        };
        let out = run.rules().await;
        if let Some(c) = run.conn.take() {
            c.close(run.linger);
        }
        out
    }
}

/// A `connect` rule that wants a TLS configuration of its own.
#[derive(Debug, Clone, Copy)]
pub struct TlsWanted<'a> {
    pub rule: usize,
    pub ssl: bool,
    pub default: bool,
    pub sni: Option<&'a str>,
    pub alpn: Option<&'a [String]>,
}

/// The TLS a server's checks may speak: for the default connection (`check-ssl`,
/// or `ssl` on the server's own port) and for each rule of [`TcpChk::tls_connects`].
#[derive(Debug, Clone, Default)]
pub struct TlsSet {
    pub default: Option<CheckTls>,
    pub rules: Vec<(usize, CheckTls)>,
}

impl TlsSet {
    /// The TLS of the connect rule at `rule`, `None` for a clear connection.
    fn for_connect(&self, rule: usize, c: &Connect) -> Option<&CheckTls> {
        if let Some((_, t)) = self.rules.iter().find(|(i, _)| *i == rule) {
            return Some(t);
        }
        if c.default {
            self.default.as_ref()
        } else {
            None
        }
    }
}

/// What one run needs from the server, the process and the scheduler.
#[derive(Debug)]
pub struct Env<'a> {
    /// The process, for the rules' sample expressions and formats.
    pub host: &'a dyn Host,
    pub be: usize,
    pub srv: usize,
    /// The server's check address (`addr` and `port` applied).
    pub addr: SocketAddr,
    /// When the check started, and `inter`: without `timeout check`, the rules after
    /// a connect must end by its start plus `inter`.
    pub start: Instant,
    pub inter: Duration,
    /// The longest a connect (and its TLS handshake) may take.
    pub connect: Duration,
    /// `timeout check`: the time left after each connect, when set.
    pub check: Option<Duration>,
    /// Most bytes read for an `expect`.
    pub bufsize: usize,
    /// The PROXY header a default connection starts with (`check-send-proxy`).
    pub proxy_header: Option<&'a [u8]>,
    /// The PROXY header of a `connect send-proxy` rule.
    pub send_proxy: &'a [u8],
    /// `check-via-socks4`: the proxy default connections go through.
    pub socks4: Option<SocketAddr>,
    /// The server's `socks4` proxy, for a `connect via-socks4` rule.
    pub srv_socks4: Option<SocketAddr>,
    pub tls: &'a TlsSet,
    /// The server is not DOWN (a 404 with `disable-on-404` only counts then).
    pub running: bool,
    /// The `X-Haproxy-Server-State` value with `send-state`.
    pub state: Option<&'a str>,
    /// Whether an HTTP check's default connection speaks HTTP/2 ([`CheckRt::h2`]).
    ///
    /// [`CheckRt::h2`]: super::CheckRt::h2
    pub h2: Option<bool>,
}

/// The state of one run.
struct Run<'a> {
    chk: &'a TcpChk,
    env: &'a Env<'a>,
    deadline: Instant,
    conn: Option<CheckConn>,
    /// The connection's rule asked for a clean close.
    linger: bool,
    buf: Vec<u8>,
    /// The peer closed (or failed after sending something): nothing more will come.
    closed: bool,
    /// The result's code (HTTP status, SMTP reply code, `status-code`), reset at each
    /// rule as HAProxy does.
    code: u16,
    /// The result a protocol decoder passed the check with.
    verdict: Option<Outcome>,
    vars: VarStore,
    /// The method of the last HTTP request (no body after HEAD).
    method: rampart_proto::http::Method,
    /// The last rule run, variable actions aside (HAProxy's `current_step`).
    current: Option<usize>,
    /// The connection speaks HTTP/2: its stream's exchange.
    h2: Option<Box<H2Chk>>,
}

/// What an expect rule made of the bytes so far.
enum Judged {
    Pass,
    Wait,
    Fail(Outcome),
}

impl Run<'_> {
    /// Runs every rule; the check's outcome.
    async fn rules(&mut self) -> Outcome {
        let chk = self.chk;
        let rules = &chk.rules;
        let mut i = 0;
        let mut must_read = true;
        while let Some(rule) = rules.get(i) {
            self.code = 0;
            let res = match &rule.action {
                Action::Connect(c) => {
                    self.current = Some(i);
                    self.connect(i, rule, c).await
                }
                Action::Send(s) => {
                    self.current = Some(i);
                    must_read = true;
                    self.send(rule, s).await
                }
                Action::Expect(_) | Action::Custom(_) => {
                    self.current = Some(i);
                    if must_read {
                        if let Err(out) = self.recv(rule).await {
                            return out;
                        }
                        must_read = false;
                    }
                    match self.judge(rule) {
                        Judged::Pass => Ok(()),
                        Judged::Fail(out) => Err(out),
                        Judged::Wait => {
                            // more bytes, then again from the first rule they may change
                            must_read = true;
                            i = rule.head;
                            continue;
                        }
                    }
                }
                Action::SetVar { var, value, cond } => {
                    let ctx_run = |ctx: &SampleCtx<'_>| set_var(ctx, var, value, *cond);
                    self.with_ctx(ctx_run);
                    Ok(())
                }
                Action::UnsetVar(var) => {
                    self.with_ctx(|ctx| ctx.vars.unset(var));
                    Ok(())
                }
            };
            if let Err(out) = res {
                return out;
            }
            i += 1;
        }
        self.success()
    }

    /// Runs `f` with the sample context of the check: its backend and server, its
    /// variables, and the bytes (or the HTTP response) received.
    fn with_ctx<R>(&self, f: impl FnOnce(&SampleCtx<'_>) -> R) -> R {
        let mut msg = MsgHead::default();
        let http = self.chk.http
            && !matches!(
                http::parse_response(&self.buf, self.method, true, &mut msg),
                Resp::Incomplete | Resp::Invalid
            );
        let view = http.then_some(MsgView { head: &msg, buf: &self.buf });
        self.ctx_with(view, f)
    }

    fn ctx_with<R>(&self, res: Option<MsgView<'_>>, f: impl FnOnce(&SampleCtx<'_>) -> R) -> R {
        let conn = ConnInfo::new(None, -1);
        let mut ctx = SampleCtx::new(self.env.host, &conn, self.env.be);
        ctx.be = Some(self.env.be);
        ctx.srv = Some(self.env.srv);
        ctx.dir = Dir::Response;
        ctx.vars.check = Some(&self.vars);
        ctx.res = res;
        if !self.chk.http {
            ctx.payload = Some(&self.buf);
        }
        f(&ctx)
    }

    // === connect ===

    /// Opens a new connection (dropping the previous one and what it received).
    async fn connect(&mut self, idx: usize, rule: &Rule, c: &Connect) -> Result<(), Outcome> {
        if let Some(old) = self.conn.take() {
            old.close(self.linger);
        }
        self.buf.clear();
        self.closed = false;
        self.h2 = None;
        let start = Instant::now();
        let connect_by = start + self.env.connect;
        let addr = self.target(c);
        let via = if c.via_socks4 {
            self.env.srv_socks4
        } else if c.default {
            self.env.socks4
        } else {
            None
        };
        let mut tcp = match tokio::time::timeout_at(connect_by, super::conn::connect(addr, via)).await {
            Err(_) => return Err(self.conn_error(rule, CheckStatus::L4Tout, "")),
            Ok(Err(e)) => return Err(self.conn_error(rule, CheckStatus::L4Con, &super::conn::strerror(&e))),
            Ok(Ok(s)) => s,
        };
        let header = if c.send_proxy { Some(self.env.send_proxy) } else { self.env.proxy_header.filter(|_| c.default) };
        if let Some(h) = header {
            match tokio::time::timeout_at(connect_by, tcp.write_all(h)).await {
                Err(_) => return Err(self.conn_error(rule, CheckStatus::L4Tout, "")),
                Ok(Err(e)) => return Err(self.conn_error(rule, CheckStatus::SockErr, &super::conn::strerror(&e))),
                Ok(Ok(())) => {}
            }
        }
        self.handshake(idx, rule, c, tcp, connect_by, start).await
    }

    /// The TLS handshake when the rule speaks TLS, within the connect time.
    async fn handshake(
        &mut self,
        idx: usize,
        rule: &Rule,
        c: &Connect,
        tcp: tokio::net::TcpStream,
        connect_by: Instant,
        start: Instant,
    ) -> Result<(), Outcome> {
        let conn = match self.env.tls.for_connect(idx, c) {
            None => CheckConn::Plain(tcp),
            Some(tls) => {
                let left = connect_by.saturating_duration_since(Instant::now());
                let hs = crate::tls::stream::connect(tcp, tls.config.clone(), tls.name.clone(), Some(left));
                match hs.await {
                    Ok(s) => CheckConn::Tls(Box::new(s)),
                    Err(crate::tls::stream::HandshakeError::Timeout) => {
                        return Err(self.conn_error(rule, CheckStatus::L6Tout, ""))
                    }
                    Err(e) => {
                        let msg = crate::tls::client::handshake_msg(&e);
                        return Err(self.conn_error(rule, CheckStatus::L6Rsp, msg));
                    }
                }
            }
        };
        if self.chk.http && self.speaks_h2(c, &conn) {
            self.h2 = Some(Box::new(H2Chk::new()));
        }
        self.conn = Some(conn);
        self.linger = c.linger;
        self.deadline = match self.env.check {
            Some(t) => Instant::now() + t,
            None => start + self.env.inter,
        };
        Ok(())
    }

    /// Whether an HTTP check's connection speaks HTTP/2, as HAProxy installs its mux:
    /// the rule's `proto`, else for a `default` rule the server's (`check-proto`, or
    /// its `proto` inherited), else what ALPN negotiated when the rule or the server
    /// (`check-alpn`) gave an ALPN list, else HTTP/1.
    fn speaks_h2(&self, c: &Connect, conn: &CheckConn) -> bool {
        if let Some(h2) = c.h2 {
            return h2;
        }
        let alpn_set = c.alpn.is_some();
        match self.env.h2 {
            Some(h2) if c.default && !alpn_set => h2,
            None if c.default => conn.alpn_h2(),
            _ => alpn_set && conn.alpn_h2(),
        }
    }

    /// Where the rule connects: its address, else the check's; its port (number,
    /// expression, or the address's), else the check's.
    fn target(&self, c: &Connect) -> SocketAddr {
        let ip = c.addr.map_or(self.env.addr.ip(), |(ip, _)| ip);
        let from_expr = c.port_expr.as_ref().and_then(|e| {
            self.with_ctx(|ctx| {
                let smp = e.eval(ctx)?;
                match crate::sample::cast::cast(smp, crate::sample::types::SmpType::Sint)? {
                    Sample::Sint(p) => u16::try_from(p).ok().filter(|&p| p != 0),
                    _ => None,
                }
            })
        });
        let port = c.port.or(from_expr).or(c.addr.and_then(|(_, p)| p)).unwrap_or(self.env.addr.port());
        SocketAddr::new(ip, port)
    }

    // === send ===

    async fn send(&mut self, rule: &Rule, s: &Send) -> Result<(), Outcome> {
        self.buf.clear();
        self.closed = false;
        let data = match self.request(rule, s)? {
            Some(d) => d,
            None => return Ok(()),
        };
        let data = match self.h2.as_mut() {
            Some(h2) if matches!(s, Send::Http(_)) => {
                h2.request(&data).map_err(|_| Outcome::new(CheckStatus::L7Rsp, ""))?
            }
            _ => data,
        };
        let Some(conn) = self.conn.as_ref() else { return Err(Outcome::new(CheckStatus::SockErr, "")) };
        match tokio::time::timeout_at(self.deadline, conn.write_all(&data)).await {
            Err(_) => Err(self.timed_out(rule)),
            Ok(Err(e)) => Err(self.conn_error(rule, CheckStatus::SockErr, &super::conn::strerror(&e))),
            Ok(Ok(())) => Ok(()),
        }
    }

    /// The bytes of a send rule; `None` when a format renders nothing (nothing sent).
    fn request(&mut self, rule: &Rule, s: &Send) -> Result<Option<Vec<u8>>, Outcome> {
        let fail =
            |what: &str| Outcome::new(CheckStatus::L7Rsp, format!("tcp-check send : {what} at step {}", rule.step));
        Ok(Some(match s {
            Send::Bytes(b) if b.len() >= self.env.bufsize => {
                return Err(Outcome::new(
                    CheckStatus::L7Rsp,
                    format!(
                        "tcp-check send : string too large ({}) for buffer size ({}) at step {}",
                        b.len(),
                        self.env.bufsize,
                        rule.step
                    ),
                ))
            }
            Send::Bytes(b) => b.clone(),
            Send::Lf(f) | Send::BinaryLf(f) => {
                let mut out = Vec::new();
                self.with_ctx(|ctx| f.render(ctx, &mut out));
                if out.is_empty() {
                    return Ok(None);
                }
                if matches!(s, Send::BinaryLf(_)) {
                    out = unhex(&out).ok_or_else(|| fail("failed to build log-format string"))?;
                }
                out
            }
            Send::Http(req) => {
                self.method = req.method();
                let state = self.chk.send_state.then_some(self.env.state).flatten();
                if self.h2.is_some() {
                    self.with_ctx(|ctx| req.render_for_h2(ctx, state))
                } else {
                    self.with_ctx(|ctx| req.render(ctx, state))
                }
            }
            Send::SslHello => {
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                super::proto::ssl_client_hello(now.as_secs() as u32)
            }
        }))
    }

    // === receive and judge ===

    /// Reads more before an expect: waits for some bytes unless the peer closed. An
    /// empty response or an error with nothing received ends the check.
    async fn recv(&mut self, rule: &Rule) -> Result<(), Outcome> {
        if self.closed || self.buf.len() >= self.env.bufsize {
            return self.empty_check(rule);
        }
        if self.h2.is_some() {
            return self.recv_h2(rule).await;
        }
        let Some(conn) = self.conn.as_ref() else { return Err(Outcome::new(CheckStatus::SockErr, "")) };
        let room = self.env.bufsize - self.buf.len();
        match tokio::time::timeout_at(self.deadline, conn.read(&mut self.buf, room)).await {
            Err(_) => return Err(self.timed_out(rule)),
            Ok(Err(e)) if self.buf.is_empty() => {
                return Err(self.conn_error(rule, CheckStatus::SockErr, &super::conn::strerror(&e)))
            }
            // an error after some bytes (a reset after the reply): judge what came
            Ok(Err(_)) | Ok(Ok(0)) => self.closed = true,
            Ok(Ok(_)) => {}
        }
        self.empty_check(rule)
    }

    /// [`Run::recv`] on an HTTP/2 connection: reads frames, answers what the
    /// connection owes, and presents the response so far in `buf` as HTTP/1 bytes.
    async fn recv_h2(&mut self, rule: &Rule) -> Result<(), Outcome> {
        let (Some(conn), Some(h2)) = (self.conn.as_ref(), self.h2.as_mut()) else {
            return Err(Outcome::new(CheckStatus::SockErr, ""));
        };
        let mut raw = Vec::new();
        match tokio::time::timeout_at(self.deadline, conn.read(&mut raw, self.env.bufsize)).await {
            Err(_) => return Err(self.timed_out(rule)),
            Ok(Err(e)) if self.buf.is_empty() => {
                return Err(self.conn_error(rule, CheckStatus::SockErr, &super::conn::strerror(&e)))
            }
            Ok(Err(_)) | Ok(Ok(0)) => h2.ended = true,
            Ok(Ok(_)) => {
                let mut reply = Vec::new();
                if h2.on_bytes(&raw, &mut reply, self.env.bufsize).is_err() {
                    // not HTTP/2 as it should be: judged as an invalid response
                    h2.ended = true;
                    self.buf.clear();
                    self.buf.extend_from_slice(b"\0");
                    self.closed = true;
                    return Ok(());
                }
                if !reply.is_empty() {
                    let _ = tokio::time::timeout_at(self.deadline, conn.write_all(&reply)).await;
                }
            }
        }
        h2.as_h1(&mut self.buf);
        self.closed = h2.ended;
        self.empty_check(rule)
    }

    fn empty_check(&self, rule: &Rule) -> Result<(), Outcome> {
        if !self.buf.is_empty() || !self.closed {
            return Ok(());
        }
        let mut d = format!("TCPCHK got an empty response at step {}", rule.step);
        if let Some(c) = &rule.comment {
            let _ = write!(d, " comment: '{c}'");
        }
        let status = match &rule.action {
            Action::Expect(e) => e.err_status.unwrap_or(CheckStatus::L7Rsp),
            _ => CheckStatus::L7Rsp,
        };
        Err(Outcome::new(status, d))
    }

    /// Judges the expect (or decoder) rule on the bytes so far.
    fn judge(&mut self, rule: &Rule) -> Judged {
        let last = self.closed || self.buf.len() >= self.env.bufsize;
        match &rule.action {
            Action::Custom(c) => self.custom(*c, rule, last),
            Action::Expect(e) if self.chk.http => self.judge_http(rule, e, last),
            Action::Expect(e) => self.judge_tcp(rule, e, last),
            _ => Judged::Pass,
        }
    }

    fn custom(&mut self, c: super::proto::Custom, rule: &Rule, last: bool) -> Judged {
        let final_rule = self.chk.rules.last().is_some_and(|r| std::ptr::eq(r, rule));
        match c.eval(&self.buf, last, final_rule) {
            Eval::Wait if !last => Judged::Wait,
            Eval::Wait => Judged::Fail(Outcome::new(CheckStatus::L7Rsp, "")),
            Eval::Continue => Judged::Pass,
            Eval::Pass(out) => {
                self.verdict = Some(out);
                Judged::Pass
            }
            Eval::Fail(out) => Judged::Fail(out),
        }
    }

    /// A tcp-check expect (HAProxy's `tcpcheck_eval_expect()`).
    fn judge_tcp(&mut self, rule: &Rule, e: &Expect, last: bool) -> Judged {
        if !last && (self.buf.len() < e.matcher.min_len() || e.min_recv.is_some_and(|m| m > 0 && self.buf.len() < m)) {
            return Judged::Wait;
        }
        let matched = match self.tcp_match(&e.matcher, last) {
            Ok(Some(m)) => m,
            Ok(None) => return Judged::Wait,
            Err(desc) => return Judged::Fail(self.expect_failed(rule, e, false, CheckStatus::L7Rsp, desc)),
        };
        // without min-recv, a mismatch waits for more data
        if !matched && !last && e.min_recv.is_none() {
            return Judged::Wait;
        }
        if matches!(e.status_code, StatusCode::Leading) {
            self.code = leading_code(&self.buf);
        }
        if matched != e.inverse {
            return Judged::Pass;
        }
        let status = e.err_status.unwrap_or(CheckStatus::L7Rsp);
        Judged::Fail(self.expect_failed(rule, e, matched, status, String::new()))
    }

    /// Whether the bytes match; `None` to wait for more, `Err` when a format cannot
    /// give a pattern.
    fn tcp_match(&self, m: &Matcher, last: bool) -> Result<Option<bool>, String> {
        Ok(Some(match m {
            Matcher::String(s) | Matcher::Binary(s) => memchr::memmem::find(&self.buf, s).is_some(),
            Matcher::Rstring(re) => re.is_match(&self.buf),
            Matcher::Rbinary(re) => re.is_match(hex(&self.buf).as_bytes()),
            Matcher::StringLf(f) | Matcher::BinaryLf(f) => {
                let mut pat = Vec::new();
                self.with_ctx(|ctx| f.render(ctx, &mut pat));
                if pat.is_empty() {
                    return Err("log-format string evaluated to an empty string".into());
                }
                if matches!(m, Matcher::BinaryLf(_)) {
                    pat = unhex(&pat)
                        .ok_or("Failed to parse hexastring resulting of eval of a log-format string".to_owned())?;
                }
                if self.buf.len() < pat.len() {
                    if !last {
                        return Ok(None);
                    }
                    false
                } else {
                    memchr::memmem::find(&self.buf, &pat).is_some()
                }
            }
            _ => false,
        }))
    }

    /// An http-check expect (HAProxy's `tcpcheck_eval_expect_http()`).
    fn judge_http(&mut self, rule: &Rule, e: &Expect, last: bool) -> Judged {
        let mut msg = MsgHead::default();
        let (body, complete) = match http::parse_response(&self.buf, self.method, last, &mut msg) {
            Resp::Incomplete if !last => return Judged::Wait,
            Resp::Incomplete | Resp::Invalid => {
                return Judged::Fail(self.expect_failed(rule, e, false, CheckStatus::L7Rsp, String::new()))
            }
            Resp::Ready { body, complete } => (body, complete),
        };
        self.code = msg.status;
        if self.chk.disable_on_404 && self.env.running && msg.status == 404 {
            return Judged::Pass;
        }
        let view = MsgView { head: &msg, buf: &self.buf };
        let verdict = self.ctx_with(Some(view), |ctx| {
            http::eval_expect(e, &Seen { msg: view, body: &body, last: last || complete, ctx })
        });
        match verdict {
            http::Verdict::Pass => Judged::Pass,
            http::Verdict::Wait => Judged::Wait,
            http::Verdict::Fail(status, desc) => {
                Judged::Fail(self.expect_failed_in(rule, e, false, status, desc, Some(view)))
            }
        }
    }
}

/// Evaluates a `set-var` rule.
fn set_var(
    ctx: &SampleCtx<'_>,
    var: &crate::sample::vars::VarRef,
    value: &VarValue,
    cond: crate::sample::vars::SetCond,
) {
    match value {
        VarValue::Expr(e) => {
            if let Some(smp) = e.eval(ctx) {
                ctx.vars.set(var, &smp, cond);
            }
        }
        VarValue::Fmt(f) => {
            let mut out = Vec::new();
            f.render(ctx, &mut out);
            ctx.vars.set(var, &Sample::Str(out.into()), cond);
        }
    }
}

impl Matcher {
    /// Bytes needed before a match is tried.
    fn min_len(&self) -> usize {
        match self {
            Matcher::String(s) | Matcher::Binary(s) => s.len(),
            _ => 0,
        }
    }
}

/// Upper-case hex, as HAProxy's `dump_binary()` for `rbinary`.
fn hex(buf: &[u8]) -> String {
    let mut out = String::with_capacity(buf.len() * 2);
    for b in buf {
        let _ = write!(out, "{b:02X}");
    }
    out
}

/// Hex text as bytes (HAProxy's `parse_binary()`), `None` if it is not hex.
fn unhex(text: &[u8]) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks(2).map(|p| u8::from_str_radix(std::str::from_utf8(p).ok()?, 16).ok()).collect()
}

#[cfg(test)]
#[path = "tcpcheck_tests.rs"]
mod tests;
