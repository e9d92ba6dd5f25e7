//! One TCP-mode stream (one client connection in `mode tcp`), through the analysers in
//! HAProxy's order:
//!
//! 1. `tcp-request content` rules of the frontend, on the bytes the client sent,
//!    waiting for more up to `tcp-request inspect-delay` while a condition misses on
//!    data that may still arrive ([`inspect`]);
//! 2. backend switching, whose rules see those bytes (`req.ssl_sni` ...);
//! 3. `tcp-request content` rules of the backend (with its own inspect delay);
//! 4. server connection ([`TcpFront::connect`]);
//! 5. forwarding, the bytes held first; with `tcp-response content` rules, the
//!    server's first bytes are held until they decide (`tcp-response inspect-delay`;
//!    without one they decide at connection, on nothing).
//!
//! A `switch-mode http` rule, or a backend in `mode http` chosen in step 2, ends the
//! TCP stream there: it hands the connection over to HTTP ([`TcpEnd::upgrade`]).
//!
//! Without rules nothing is read before connecting: the front mux connects at once
//! and splices. The stream talks to the client side through [`TcpFront`]; it never
//! sees a socket.
//! HAProxy counterpart: `tcp_inspect_request()`, `tcp_inspect_response()`
//! (src/tcp_rules.c), `process_switching_rules()` (src/stream.c).

use std::time::Duration;

use tokio::time::Instant;

use super::ana::switching;
use super::side::{Input, ResVerdict, TcpClose, TcpFront};
use super::upgrade::{Upgrade, Upgraded};
use super::Stream;
use crate::action::capture::Captured;
use crate::action::chan::Chan;
use crate::action::state::Persist;
use crate::action::tcp::{run_tcp_rules_from, SwitchProto, TcpExec};
use crate::action::{RuleAt, TcpFlow};
use crate::buf::Buf;
use crate::log::LevelSet;
use crate::proxy::Runtime;
use crate::sample::ctx::{ConnInfo, Dir};
use crate::sample::vars::{Scope, VarStore, Vars};
use crate::sample::SampleCtx;

/// What a TCP stream keeps between its analysers. Owned (no shared borrow of the
/// variable stores lives across an await), so that the stream's future can move
/// between polls.
struct TcpState<'a> {
    s: Stream<'a>,
    /// The stream's addresses: the session's, as the content rules change them.
    conn: ConnInfo,
    sess: VarStore,
    txn: VarStore,
    /// `req.` variables, then `res.` ones once the response rules start.
    reqres: VarStore,
    /// The capture slots of the frontend (`capture` actions).
    caps: Captured,
    scratch: Vec<u8>,
    /// The last rule that ended a content rule list (`last_rule_file`).
    last_rule: Option<RuleAt>,
    /// What `set-log-level` made of the log line.
    log_level: LevelSet,
    /// The entries `tcp-request content track-sc<n>` tracks (released with the state).
    sc: crate::stick::Trackers,
    /// Client socket options the request rules asked for (`set-mark`, `set-tos`).
    fc: crate::action::sockopt::FcPending,
    /// What the Lua state holds for the stream (a content rule's script that waits).
    lua: crate::action::lua::Slot,
    /// A `do-resolve` content rule's question, then its answer.
    resolving: Option<crate::action::state::Resolving>,
    /// The request and response channels as Lua actions change them (`txn.req`,
    /// `txn.res`): the bytes they forwarded, held at the front of the buffers.
    req_chan: Chan,
    res_chan: Chan,
    /// Set when the stream becomes HTTP.
    upgrade: Option<Box<Upgrade>>,
    /// What the stream measured when its content rules began (HAProxy 3.x `do-log`),
    /// taken only for a rule list that logs.
    log: Option<crate::log::StreamLog>,
}

/// How a TCP stream ended, for its log line.
#[derive(Debug)]
pub struct TcpEnd {
    /// The backend it went to, if any.
    pub be: Option<usize>,
    /// The last rule that ended one of its content rule lists.
    pub last_rule: Option<RuleAt>,
    /// What `set-log-level` made of its log line.
    pub log_level: LevelSet,
    /// Its `sess.` and `txn.` variables, for the log line (`%[var(txn.x)]`); `None`
    /// when it set none.
    pub vars: Option<Box<[VarStore; 2]>>,
    /// The stream became HTTP (nothing was forwarded, nothing is logged): the front
    /// mux hands the connection over with this.
    pub upgrade: Option<Box<Upgrade>>,
}

/// Why a TCP stream ended before forwarding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Close,
    SilentDrop,
    /// `use-service`: the Lua `tcp` service with this number serves the connection.
    Service(usize),
    /// `switch-mode http`: the stream becomes HTTP.
    Upgrade(SwitchProto),
}

impl TcpState<'_> {
    fn vars(&self) -> Vars<'_> {
        Vars {
            proc: Some(&self.s.rt.proc_vars),
            sess: Some(&self.sess),
            txn: Some(&self.txn),
            reqres: Some(&self.reqres),
            check: None,
        }
    }

    /// The input of the request buffer `req` (past what scripts forwarded).
    fn req_input<'b>(&self, req: &'b Option<Buf>) -> &'b [u8] {
        req.as_deref().map_or(&[][..], |b| &b[self.req_chan.out.min(b.len())..])
    }

    /// Runs the `tcp-request content` (`dir` request) or `tcp-response content` rules
    /// of proxy `px` over `payload` (the input of that direction's channel), from rule
    /// `from`; returns what ended them and at which rule. What Lua actions changed is
    /// in the channel, for the caller to apply ([`Chan::apply`]).
    fn eval(&mut self, px: usize, dir: Dir, payload: &[u8], final_data: bool, from: usize) -> (TcpFlow, usize) {
        let rt = self.s.rt;
        let rules = &rt.proxies[px].rules;
        let rules = if dir == Dir::Request { &rules.tcp_req } else { &rules.tcp_res };
        let vars = Vars {
            proc: Some(&rt.proc_vars),
            sess: Some(&self.sess),
            txn: Some(&self.txn),
            reqres: Some(&self.reqres),
            check: None,
        };
        let prefetched = if dir == Dir::Request { crate::h1::msg::request_at_start(payload) } else { None };
        let mut x = TcpExec {
            rt,
            fe: self.s.fe,
            be: self.s.be,
            dir,
            conn: &mut self.conn,
            payload: Some(payload),
            req: prefetched.as_ref().map(|h| (h, payload)),
            res: None,
            caps: &mut self.caps,
            vars,
            first_req: true,
            scratch: &mut self.scratch,
            last_rule: self.last_rule,
            log_level: self.log_level,
            sc: Some(&mut self.sc),
            http: false,
            fc: self.fc,
            log: self.log.as_ref(),
            lua: Some(&mut self.lua),
            final_data: false,
            resolving: Some(&mut self.resolving),
            chan: Some(if dir == Dir::Request { &mut self.req_chan } else { &mut self.res_chan }),
        };
        let flow = run_tcp_rules_from(rules, from, final_data, &mut x);
        self.last_rule = x.last_rule;
        self.log_level = x.log_level;
        self.fc = x.fc;
        flow
    }

    /// Backend switching over what the request rules waited for.
    fn switch(&mut self, payload: &[u8]) -> Option<usize> {
        let fe = &self.s.rt.proxies[self.s.fe];
        if fe.rules.switching.is_empty() {
            return fe.fe.backend;
        }
        // the scratch buffer is lent out while the context borrows the stream's state
        let mut scratch = std::mem::take(&mut self.scratch);
        let chosen = switching::choose(&self.s, &self.sample_ctx(payload), &mut scratch);
        self.scratch = scratch;
        chosen
    }

    /// The server backend `be`'s `use-server` rules, then `persist rdp-cookie`, then
    /// its `stick` rules choose (as HAProxy's analysers, in that order), and what its
    /// `force-persist`/`ignore-persist` rules decided; fills `stores` with the keys to
    /// store the server in.
    fn server(
        &mut self,
        be: usize,
        payload: &[u8],
        stores: &mut crate::stream::ana::sticking::Stores,
    ) -> (Option<usize>, Persist) {
        let px = &self.s.rt.proxies[be];
        let rules = &px.rules;
        if rules.use_server.is_empty() && rules.stick.is_empty() && px.persist_rdp.is_none() {
            return (None, Persist::Normal);
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let ctx = self.sample_ctx(payload);
        let persist = switching::persist_in(&self.s, be, &ctx);
        let chosen = switching::server_in(&self.s, be, &ctx, persist, &mut scratch);
        let rdp = px.persist_rdp.as_deref();
        let chosen = chosen.or_else(|| rdp.and_then(|name| crate::stream::ana::rdp::persist(px, name, payload)));
        let stuck = crate::stream::ana::sticking::request_in(&self.s, be, &ctx, chosen.is_some(), persist, stores);
        self.scratch = scratch;
        (chosen.or(stuck), persist)
    }

    /// The value of backend `be`'s `sni` expression (`server ... ssl sni <expr>`).
    fn sni(&self, be: usize, payload: &[u8]) -> crate::tls::client::SniValues {
        let px = &self.s.rt.proxies[be];
        if !px.be.has_sni {
            return Vec::new();
        }
        let ctx = self.sample_ctx(payload);
        crate::tls::client::sni_values(px.be.servers.iter().map(|s| s.tls.as_deref()), |e| {
            crate::tls::client::sni_value(e.eval(&ctx)?)
        })
    }

    /// The hash key of backend `be` when it hashes (`balance source`, `rdp-cookie`,
    /// `hash <expr>` ...), over the stream's view: its addresses, the request bytes the
    /// content rules waited for (`payload`), its variables.
    fn lb_key(&self, be: usize, payload: &[u8]) -> Option<u32> {
        let px = &self.s.rt.proxies[be];
        px.be.lb.key_source()?;
        let ctx = SampleCtx { be: Some(be), ..self.sample_ctx(payload) };
        crate::backend::key::lb_key(px, &ctx)
    }

    /// What sample expressions of the stream see, with `payload` as the request data.
    fn sample_ctx<'c>(&'c self, payload: &'c [u8]) -> SampleCtx<'c> {
        let rt = self.s.rt;
        let vars = Vars {
            proc: Some(&rt.proc_vars),
            sess: Some(&self.sess),
            txn: Some(&self.txn),
            reqres: Some(&self.reqres),
            check: None,
        };
        SampleCtx {
            payload: Some(payload),
            req_caps: &self.caps.req,
            res_caps: &self.caps.res,
            vars,
            last_rule: self.last_rule,
            lua_kind: Some(&self.lua.kind),
            ..SampleCtx::new(rt, &self.conn, self.s.fe)
        }
    }
}

/// Runs a TCP stream for the client connection `front` serves; `sess_vars` are the
/// variables the connection rules set. Returns the backend it went to, if any, and the
/// last rule that decided.
pub async fn run<'a, F: TcpFront>(
    front: &mut F,
    rt: &'a std::sync::Arc<Runtime>,
    conn: &'a ConnInfo,
    fe: usize,
    sess_vars: Option<Box<VarStore>>,
) -> TcpEnd {
    let mut st = TcpState {
        s: Stream { rt, shared: rt, conn, fe, be: None, srv: None, first_req: true, meth: None, ver: None },
        conn: conn.clone(),
        sess: sess_vars.map_or_else(|| VarStore::new(Scope::Sess), |b| *b),
        txn: VarStore::new(Scope::Txn),
        reqres: VarStore::new(Scope::Req),
        caps: Captured::default(),
        scratch: Vec::new(),
        last_rule: None,
        log_level: LevelSet::Unset,
        sc: Default::default(),
        fc: Default::default(),
        resolving: None,
        lua: Default::default(),
        req_chan: Chan::new(rt.bufsize),
        res_chan: Chan::new(rt.bufsize),
        upgrade: None,
        log: None,
    };
    let be = analyse(front, &mut st).await;
    let vars = (!st.sess.is_empty() || !st.txn.is_empty()).then(|| Box::new([st.sess, st.txn]));
    TcpEnd { be, last_rule: st.last_rule, log_level: st.log_level, vars, upgrade: st.upgrade }
}

/// Whether a content rule list has a `do-log` rule (its stream then keeps a copy of its
/// log record for it).
fn logs(rules: &[crate::action::Rule<crate::action::TcpAct>]) -> bool {
    rules.iter().any(|r| matches!(r.act, crate::action::TcpAct::DoLog))
}

/// The analysers of [`run`], in order.
async fn analyse<F: TcpFront>(front: &mut F, st: &mut TcpState<'_>) -> Option<usize> {
    let (rt, fe) = (st.s.rt, st.s.fe);
    st.caps.reset(&rt.proxies[fe].rules.captures);
    // PERF: the request buffer is taken only when some rule reads what it holds.
    let mut req: Option<Buf> = None;
    match inspect(front, st, fe, &mut req).await {
        Ok(()) => {}
        Err(Stop::Service(id)) => return Some(service(front, st, fe, id, req).await),
        Err(Stop::Upgrade(proto)) => return upgrade(front, st, proto, req, None),
        Err(stop) => return end(front, stop, None),
    }
    let be = st.switch(st.req_input(&req));
    let Some(be) = be else {
        // No backend: HAProxy closes the connection.
        return end(front, Stop::Close, None);
    };
    st.s.be = Some(be);
    rt.proxies[be].be.cum_conn.inc();
    if rt.proxies[be].mode == rampart_cfg::model::Mode::Http {
        // as HAProxy chaining a TCP frontend to an HTTP backend: the stream becomes
        // HTTP, the backend's rules run on its requests
        return upgrade(front, st, SwitchProto::Auto, req, Some(be));
    }
    if be != fe {
        match inspect(front, st, be, &mut req).await {
            Ok(()) => {}
            Err(Stop::Service(id)) => return Some(service(front, st, be, id, req).await),
            Err(stop) => return end(front, stop, Some(be)),
        }
    }
    // COMPAT: a TCP stream renders no unique id: `proxy-v2-options unique-id` sends an
    // empty one without `unique-id-format` (as HAProxy) and none with it.
    let uid = rt.proxies[fe].rules.unique_id.is_none().then_some(&b""[..]);
    let sni = st.sni(be, st.req_input(&req));
    let mut stores = Vec::new();
    let (forced, persist) = st.server(be, st.req_input(&req), &mut stores);
    let cx = crate::backend::send_proxy::ConnectCtx {
        conn: &st.conn,
        unique_id: uid,
        prio: Default::default(),
        sni: &sni,
        force_persist: persist == Persist::Force,
        ws: false,
        bc: st.fc.back,
    };
    let key = st.lb_key(be, st.req_input(&req));
    let Some(srv) = front.connect(be, forced, key, cx).await else {
        return end(front, Stop::Close, Some(be));
    };
    st.s.srv = Some(srv);
    if !stores.is_empty() {
        crate::stream::ana::sticking::store(&st.s, be, srv, &mut stores);
    }
    let held = req.as_deref().map_or(&[][..], |b| &b[..]);
    if rt.proxies[be].rules.tcp_res.is_empty() {
        front.forward(be, held, None::<fn(&mut Vec<u8>, bool, &mut Vec<u8>) -> ResVerdict>).await;
        return Some(be);
    }
    // the `req.` variables end where the response rules start
    st.vars().start_response();
    st.log = logs(&rt.proxies[be].rules.tcp_res).then(|| front.log_record()).flatten();
    let on_response = response_rules(st, be);
    front.forward(be, held, Some(on_response)).await;
    Some(be)
}

/// Ends the TCP stream to hand its connection over to HTTP (see [`Upgrade`]), unless
/// its listener cannot speak HTTP (`bind ... proto none`): HAProxy then aborts it.
fn upgrade<F: TcpFront>(
    front: &mut F,
    st: &mut TcpState<'_>,
    proto: SwitchProto,
    held: Option<Buf>,
    be: Option<usize>,
) -> Option<usize> {
    let rt = st.s.rt;
    let listener = rt.proxies[st.s.fe].fe.listeners.get(st.conn.listener as usize);
    if listener.is_some_and(|l| l.proto == Some(rampart_cfg::model::BindProto::None)) {
        return end(front, Stop::Close, be);
    }
    let take = |v: &mut VarStore| std::mem::replace(v, VarStore::new(v.scope()));
    let sess = take(&mut st.sess);
    let first = Upgraded { txn: take(&mut st.txn), req: take(&mut st.reqres), be };
    st.upgrade = Some(Box::new(Upgrade {
        proto,
        held: held.filter(|b| !b.is_empty()),
        sess: (!sess.is_empty()).then(|| Box::new(sess)),
        first: Box::new(first),
    }));
    be
}

fn end<F: TcpFront>(front: &mut F, stop: Stop, be: Option<usize>) -> Option<usize> {
    front.close(match stop {
        Stop::Close | Stop::Service(_) | Stop::Upgrade(_) => TcpClose::Close,
        Stop::SilentDrop => TcpClose::SilentDrop,
    });
    be
}

/// `use-service lua.<name>` in the content rules of proxy `px`: the service serves the
/// client in place of a server, from the bytes the rules read (`held`), turn by turn:
/// what it sent is written to the client after each turn, it reads what the client
/// sends next when it asks to (for at most `timeout client`), and the connection
/// closes once it returned or failed, as HAProxy closes it when its applet ends.
/// Returns the backend the log names: the proxy whose rule chose the service.
/// HAProxy counterpart: `hlua_applet_tcp_fct()` (src/hlua.c).
async fn service<F: TcpFront>(front: &mut F, st: &mut TcpState<'_>, px: usize, id: usize, held: Option<Buf>) -> usize {
    use crate::action::lua::{SvcIn, SvcStep, TcpSvc};
    st.s.be = Some(px);
    front.service_start(id);
    let Some(runner) = crate::action::lua::runner() else {
        front.close(TcpClose::Close);
        return px;
    };
    let client_timeout = st.s.rt.proxies[st.s.fe].timeouts.client;
    let mut svc = TcpSvc { id, slot: None };
    let mut buf = held.unwrap_or_else(|| Buf::take(st.s.rt.bufsize));
    let (mut bytes_in, mut bytes_out) = (buf.len() as u64, 0u64);
    let mut input = if buf.is_empty() { Feed::Resume } else { Feed::Data };
    let mut out = Vec::new();
    let (mut timed_out, mut client_ended, mut failed) = (false, false, false);
    loop {
        let step = {
            let svc_in = match input {
                Feed::Resume => SvcIn::Resume,
                Feed::Data => SvcIn::Data(&buf),
                Feed::End => SvcIn::End,
            };
            runner.tcp_service(&mut svc, svc_in, &st.sample_ctx(&[]), &mut out)
        };
        if !out.is_empty() {
            bytes_out += out.len() as u64;
            if !front.send(&out).await {
                break;
            }
            out.clear();
        }
        input = match step {
            SvcStep::Done => break,
            SvcStep::Failed => {
                failed = true;
                break;
            }
            SvcStep::Wait(w) => {
                crate::action::lua::wait(w).await;
                Feed::Resume
            }
            SvcStep::Input => {
                buf.clear();
                match front.read_req(buf.vec(), client_timeout).await {
                    Input::Data => {
                        bytes_in += buf.len() as u64;
                        Feed::Data
                    }
                    Input::End => {
                        client_ended = true;
                        Feed::End
                    }
                    Input::Timeout => {
                        timed_out = true;
                        break;
                    }
                    Input::Error => break,
                }
            }
        };
    }
    // the coroutine is released with `svc`, before the connection closes
    drop(svc);
    if !failed && !timed_out && !client_ended {
        // as HAProxy once its applet returned: the client sees the end of the data,
        // what it still sends is read and dropped until it closes (the log line's
        // `Tt` ends there), for at most `timeout client`
        front.shut_write();
        loop {
            buf.clear();
            match front.read_req(buf.vec(), client_timeout).await {
                Input::Data => bytes_in += buf.len() as u64,
                Input::Timeout => {
                    timed_out = true;
                    break;
                }
                Input::End | Input::Error => break,
            }
        }
    }
    front.service_end(px, (bytes_in, bytes_out), timed_out);
    front.close(TcpClose::Close);
    px
}

/// What the next turn of a service gets.
#[derive(Clone, Copy)]
enum Feed {
    Resume,
    Data,
    End,
}

/// Runs the `tcp-request content` rules of proxy `px` until they decide, reading the
/// client's bytes into `buf` while a condition misses on data that may still arrive,
/// for at most the proxy's `tcp-request inspect-delay` (as HAProxy, the list runs again
/// from its first rule each time). Without a delay, the rules see what already arrived.
async fn inspect<F: TcpFront>(
    front: &mut F,
    st: &mut TcpState<'_>,
    px: usize,
    buf: &mut Option<Buf>,
) -> Result<(), Stop> {
    let rt = st.s.rt;
    let rules = &rt.proxies[px].rules;
    if rules.tcp_req.is_empty() {
        return Ok(());
    }
    let deadline = rules.inspect_delay.map(|d| Instant::now() + d);
    let client_timeout = rt.proxies[st.s.fe].timeouts.client;
    let max = rt.max_head;
    let buf = buf.get_or_insert_with(|| Buf::take(rt.bufsize));
    let mut ended = false;
    if buf.is_empty() {
        ended = read(front, buf, Some(Duration::ZERO)).await?;
    }
    // the rule a Lua action waits in (the list resumes there), else the first
    let mut from = 0;
    if logs(&rules.tcp_req) {
        st.log = front.log_record();
    }
    loop {
        let now = Instant::now();
        let final_data = ended || buf.len() >= max || deadline.is_none_or(|d| now >= d);
        let input = &buf[st.req_chan.out.min(buf.len())..];
        let (flow, at) = st.eval(px, Dir::Request, input, final_data, std::mem::take(&mut from));
        st.req_chan.apply(buf.vec());
        if let Some(fc) = st.fc.take() {
            front.set_fc(fc);
        }
        if !st.req_chan.back.is_empty() {
            // what scripts sent the client (`txn.res:send()`) goes at once
            let back = std::mem::take(&mut st.req_chan.back);
            if !front.send(&back).await {
                return Err(Stop::Close);
            }
        }
        match flow {
            TcpFlow::Wait => {}
            // a script waits for more data: read, then resume it (the list goes on
            // from its rule)
            TcpFlow::LuaInput => from = at,
            TcpFlow::LuaWait(w) => {
                // the script waits within the inspect delay (it runs on final data
                // past it, where it cannot wait any more, as in HAProxy)
                from = at;
                if let Some(d) = deadline {
                    let _ = tokio::time::timeout_at(d, crate::action::lua::wait(w)).await;
                }
                continue;
            }
            TcpFlow::Resolve => {
                // the answer is awaited within the inspect delay; past it the rule
                // runs on final data and sets nothing, as in HAProxy
                from = at;
                if let Some(d) = deadline {
                    let answer = tokio::time::timeout_at(d, resolve(st.s.shared, st.resolving.take())).await;
                    st.resolving = answer.ok().flatten();
                }
                continue;
            }
            TcpFlow::Continue | TcpFlow::Accept | TcpFlow::CloseServer => return Ok(()),
            TcpFlow::Service(id) => return Err(Stop::Service(id)),
            TcpFlow::SwitchHttp(p) => return Err(Stop::Upgrade(p)),
            TcpFlow::Reject => {
                rt.proxies[st.s.fe].fe.denied_req.inc();
                return Err(Stop::Close);
            }
            TcpFlow::SilentDrop => {
                rt.proxies[st.s.fe].fe.denied_req.inc();
                return Err(Stop::SilentDrop);
            }
        }
        // not final: there is a deadline, still ahead
        let left = deadline.map(|d| d.saturating_duration_since(now));
        let client_first = matches!((left, client_timeout), (Some(l), Some(c)) if c < l);
        let wait = if client_first { client_timeout } else { left };
        match front.read_req(buf.vec(), wait).await {
            Input::Data => {}
            Input::End => ended = true,
            // `timeout client` expired first: HAProxy aborts the stream (`cR`)
            Input::Timeout if client_first => return Err(Stop::Close),
            Input::Timeout => {}
            Input::Error => return Err(Stop::Close),
        }
    }
}

/// The answer to what a `do-resolve` rule asked.
pub(super) async fn resolve(
    rt: &std::sync::Arc<Runtime>,
    asked: Option<crate::action::state::Resolving>,
) -> Option<crate::action::state::Resolving> {
    use crate::action::state::Resolving;
    let Some(Resolving::Asked(a)) = asked else { return None };
    Some(Resolving::Answered(crate::dns::resolve_ip(rt, a.res, &a.name, a.prefer_v6).await))
}

/// Reads once; `Ok(true)` when the client closed its side.
async fn read<F: TcpFront>(front: &mut F, buf: &mut Buf, wait: Option<Duration>) -> Result<bool, Stop> {
    match front.read_req(buf.vec(), wait).await {
        Input::Data | Input::Timeout => Ok(false),
        Input::End => Ok(true),
        Input::Error => Err(Stop::Close),
    }
}

/// The `tcp-response content` rules of backend `be`, as the front mux calls them on
/// the server's first bytes. They first run when the server connection is up, with
/// nothing received yet; the inspect delay starts then. Without a delay that first run
/// is final, as in HAProxy (payload rules then never match).
fn response_rules<'s, 'a: 's>(
    st: &'s mut TcpState<'a>,
    be: usize,
) -> impl FnMut(&mut Vec<u8>, bool, &mut Vec<u8>) -> ResVerdict + Send + use<'s, 'a> {
    let rt = st.s.rt;
    let delay = rt.proxies[be].rules.res_inspect_delay;
    let max = rt.max_head;
    let mut deadline: Option<Option<Instant>> = None;
    // the rule a Lua action waits in (the list resumes there), else the first
    let mut from = 0;
    move |data: &mut Vec<u8>, ended: bool, send_now: &mut Vec<u8>| {
        let now = Instant::now();
        let deadline = *deadline.get_or_insert_with(|| delay.map(|d| now + d));
        let final_data = ended || data.len() >= max || deadline.is_none_or(|d| now >= d);
        let input = &data[st.res_chan.out.min(data.len())..];
        let (flow, at) = st.eval(be, Dir::Response, input, final_data, std::mem::take(&mut from));
        st.res_chan.apply(data);
        if matches!(flow, TcpFlow::Wait | TcpFlow::LuaWait(_) | TcpFlow::LuaInput) && st.res_chan.out > 0 {
            // what scripts forwarded goes to the client now, while the rules wait
            send_now.extend(data.drain(..st.res_chan.out));
            st.res_chan.out = 0;
        }
        match flow {
            TcpFlow::Wait => ResVerdict::Wait(deadline),
            TcpFlow::LuaInput => {
                from = at;
                ResVerdict::Wait(deadline)
            }
            TcpFlow::LuaWait(w) => {
                from = at;
                ResVerdict::LuaWait(w, deadline)
            }
            // (`use-service` and `do-resolve` are request rules)
            TcpFlow::Continue | TcpFlow::Accept | TcpFlow::Service(_) | TcpFlow::SwitchHttp(_) | TcpFlow::Resolve => {
                ResVerdict::Forward
            }
            TcpFlow::CloseServer => ResVerdict::CloseServer,
            TcpFlow::Reject => {
                crate::sample::Host::count_denied(rt, Dir::Response, st.s.fe, Some(be), st.s.srv);
                ResVerdict::Reject
            }
            TcpFlow::SilentDrop => {
                rt.proxies[st.s.fe].fe.denied_req.inc();
                ResVerdict::SilentDrop
            }
        }
    }
}
