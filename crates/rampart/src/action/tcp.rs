//! The TCP actions (`tcp-request connection|session|content`, `tcp-response content`),
//! compiled, and how a rule list runs: conditions on data that may still grow (a miss
//! waits, see [`run_tcp_rules`]), then the action on the connection's addresses, the
//! stream's capture slots and the variables.
//! HAProxy counterpart: src/tcp_act.c, `tcp_exec_l4_rules()`, `tcp_exec_l5_rules()`,
//! `tcp_inspect_request()` and `tcp_inspect_response()` (src/tcp_rules.c), the TCP
//! parts of src/vars.c.
//!
//! Actions never see a socket: closing, resetting or dropping the connection is what
//! the caller does with the [`TcpFlow`] a list returns.

use super::addr::{self, AddrPart};
use super::capture::{CapDir, Captured};
use super::Rule;
use crate::acl::Test;
use crate::http::MsgHead;
use crate::log::format::LogFormat;
use crate::log::types::LevelSet;
use crate::sample::cast::cast;
use crate::sample::ctx::{ConnInfo, Dir};
use crate::sample::expr::Expr;
use crate::sample::host::Host;
use crate::sample::vars::{SetCond, VarRef, Vars};
use crate::sample::{Sample, SampleCtx, SmpType};

/// A compiled TCP action.
#[derive(Debug)]
pub enum TcpAct {
    /// `accept`: stop evaluating; the connection goes on.
    Accept,
    /// `reject`: close the connection.
    Reject,
    /// `tcp-response content close`: close the server connection now, forward what it
    /// sent so far, then end.
    CloseServer,
    /// `silent-drop`: close the client connection without telling the client.
    SilentDrop,
    SetVar {
        var: VarRef,
        cond: SetCond,
        expr: Expr,
    },
    SetVarFmt {
        var: VarRef,
        cond: SetCond,
        fmt: LogFormat,
    },
    UnsetVar(VarRef),
    /// `capture <expr> len <n>`: the value goes into request capture slot `slot`, cut to
    /// `len` bytes.
    Capture {
        expr: Expr,
        slot: usize,
        len: usize,
    },
    /// `set-src`, `set-dst`, `set-src-port`, `set-dst-port`.
    SetAddr(AddrPart, Expr),
    /// `set-log-level <level>|silent`: the severity of the stream's log line.
    SetLogLevel(LevelSet),
    /// `tcp-request connection expect-proxy layer4`: the session reads a PROXY header
    /// after the connection rules (`session::rules`); a no-op anywhere else.
    ExpectProxy,
    /// `tcp-request content track-sc<n> <key> [table <t>]`.
    TrackSc(super::stick::TrackSc),
    /// `sc-inc-gpc*`, `sc-set-gpt*`.
    Sc(super::stick::ScAct),
    /// `tcp-request content lua.<name> [args...]`.
    Lua(super::lua::LuaAct),
    /// `set-mark`, `set-tos`, `set-fc-mark`, `set-fc-tos`: noted in [`TcpExec::fc`].
    SetFc(super::sockopt::FcSet),
    /// `do-log` (HAProxy 3.x): a line of the frontend's log now, when the stream's
    /// record is at hand ([`TcpExec::log`]).
    DoLog,
    /// `tcp-request content use-service lua.<name>`: the Lua `tcp` service with this
    /// number serves the connection in place of a server.
    LuaService(usize),
    /// `tcp-request content switch-mode http [proto h1|h2]`: a TCP stream becomes an
    /// HTTP one; on an HTTP stream it only ends the list (HAProxy's `ACT_RET_STOP`).
    SwitchHttp(SwitchProto),
    /// `tcp-request content do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>`.
    DoResolve(Box<super::http::DoResolveAct>),
}

/// The client-side protocol `switch-mode http` hands the connection to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchProto {
    /// HTTP/1, or HTTP/2 when the client's first bytes are its preface (HAProxy's
    /// best mux for HTTP without ALPN, which upgrades on the preface).
    Auto,
    /// `proto h1`: HTTP/1 only (the HTTP/2 preface is a bad request).
    H1,
    /// `proto h2`: HTTP/2 (prior knowledge).
    H2,
}

/// What a TCP rule list decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpFlow {
    /// Every rule ran (or none applied): the list accepts by default.
    Continue,
    /// `accept`: stop this list (and the rest of this analyser).
    Accept,
    /// A condition missed on data that may still arrive: evaluate again with more.
    Wait,
    /// `reject`.
    Reject,
    /// `silent-drop`.
    SilentDrop,
    /// `tcp-response content close`.
    CloseServer,
    /// `use-service`: the Lua `tcp` service with this number takes the connection
    /// (TCP streams only: the rule is refused elsewhere at startup).
    Service(usize),
    /// A Lua action gave the event loop back (a sleep, a socket): wait as it asks
    /// (within the inspect delay), then run the list again from that rule
    /// ([`run_tcp_rules_from`]), which resumes it.
    LuaWait(super::lua::LuaWait),
    /// A Lua action waits for more data (`Channel:data`, `line`, `forward`...): read
    /// more (within the inspect delay), then run the list again from that rule.
    LuaInput,
    /// `switch-mode http` on a TCP stream: it becomes an HTTP stream, served by this
    /// protocol.
    SwitchHttp(SwitchProto),
    /// `do-resolve` asked a name ([`TcpExec::resolving`]): the stream resolves it within
    /// the inspect delay, then runs the list again from that rule.
    Resolve,
}

/// What TCP rules read and change.
pub struct TcpExec<'x> {
    pub rt: &'x dyn Host,
    pub fe: usize,
    pub be: Option<usize>,
    /// The request (`tcp-request`) or the response (`tcp-response`).
    pub dir: Dir,
    /// The addresses as rules see them; `set-src` and friends change them.
    pub conn: &'x mut ConnInfo,
    /// The bytes in hand in `dir` (`req.payload`, `res.len` ...); `None` before a
    /// stream exists and in HTTP mode.
    pub payload: Option<&'x [u8]>,
    /// The request head in HTTP mode (with the buffer its slices point into).
    pub req: Option<(&'x MsgHead, &'x [u8])>,
    /// The response head in HTTP mode (`tcp-response content` rules).
    pub res: Option<(&'x MsgHead, &'x [u8])>,
    /// The stream's capture slots (none before a stream exists).
    pub caps: &'x mut Captured,
    pub vars: Vars<'x>,
    pub first_req: bool,
    /// Scratch space for rendered values.
    pub scratch: &'x mut Vec<u8>,
    /// The last rule that ended a rule list of the stream (`last_rule_file`): the
    /// caller passes the stream's, [`run_tcp_rules`] updates it.
    pub last_rule: Option<super::RuleAt>,
    /// What `set-log-level` made of the stream's log line, likewise.
    pub log_level: LevelSet,
    /// The stream's tracked counters (`track-sc<n>`); `None` before a stream exists.
    pub sc: Option<&'x mut crate::stick::Trackers>,
    /// Whether the stream is an HTTP one: tracking then counts its request too.
    pub http: bool,
    /// Client socket options the rules asked for, for the caller to set.
    pub fc: super::sockopt::FcPending,
    /// The stream's log record so far (`do-log`); `None` before a stream exists.
    pub log: Option<&'x crate::log::StreamLog>,
    /// Where a Lua action keeps its coroutine while it waits, and which Lua state the
    /// stream's calls run in; `None` before a stream exists.
    pub lua: Option<&'x mut super::lua::Slot>,
    /// Whether the list runs on final data (set by [`run_tcp_rules_from`]): a Lua
    /// action cannot wait then.
    pub final_data: bool,
    /// Where a `do-resolve` rule keeps its question and answer; `None` where the rules
    /// cannot wait.
    pub resolving: Option<&'x mut Option<super::state::Resolving>>,
    /// The channel of `dir` as Lua actions change it (`txn.req`/`txn.res`); `None`
    /// where scripts cannot change the data (HTTP streams, before a stream exists).
    pub chan: Option<&'x mut super::chan::Chan>,
}

impl TcpExec<'_> {
    /// The sample context over what the rules see now.
    pub fn ctx(&self) -> SampleCtx<'_> {
        SampleCtx {
            be: self.be,
            dir: self.dir,
            req: self.req.map(|(m, b)| m.view(b)),
            res: self.res.map(|(m, b)| m.view(b)),
            payload: match (self.payload, self.chan.as_deref()) {
                (Some(p), Some(c)) => Some(c.input(p)),
                (p, _) => p,
            },
            vars: self.vars,
            req_caps: &self.caps.req,
            res_caps: &self.caps.res,
            first_req: self.first_req,
            last_rule: self.last_rule,
            sc: self.sc.as_deref(),
            lua_kind: self.lua.as_deref().map(|l| &l.kind),
            ..SampleCtx::new(self.rt, self.conn, self.fe)
        }
    }
}

/// Runs a rule list in order until an action ends it. `final_data`: no more data will
/// come (the inspect delay expired, the buffer is full, the peer closed, or the list
/// does not wait), so a condition that misses fails; otherwise a miss returns
/// [`TcpFlow::Wait`] and the caller runs the whole list again once more data arrived,
/// as HAProxy restarts it from the top. Conditions see `final_data` (`wait_end` is
/// true only then); the rule that ends the list is noted in [`TcpExec::last_rule`].
pub fn run_tcp_rules(rules: &[Rule<TcpAct>], final_data: bool, x: &mut TcpExec<'_>) -> TcpFlow {
    run_tcp_rules_from(rules, 0, final_data, x).0
}

/// [`run_tcp_rules`] from rule `start`; returns what ended the list and at which rule
/// (the list's length when none did). After a [`TcpFlow::LuaWait`], `start` is that
/// rule: it runs again without its condition (as HAProxy's `resume_execution`), and
/// resumes the script.
pub fn run_tcp_rules_from(
    rules: &[Rule<TcpAct>],
    start: usize,
    final_data: bool,
    x: &mut TcpExec<'_>,
) -> (TcpFlow, usize) {
    x.final_data = final_data;
    for (i, rule) in rules.iter().enumerate().skip(start) {
        let resumed = i == start && start > 0;
        if let Some(cond) = rule.cond.as_ref().filter(|_| !resumed) {
            let ctx = SampleCtx { final_data, ..x.ctx() };
            let applies = if final_data {
                cond.eval(&ctx)
            } else {
                match cond.test(&ctx) {
                    Test::Pass => true,
                    Test::Fail => false,
                    Test::Miss => return (TcpFlow::Wait, i),
                }
            };
            if !applies {
                continue;
            }
        }
        if let (TcpAct::TrackSc(t), false) = (&rule.act, final_data) {
            // a key that may still appear (an HTTP fetch over a request not complete
            // yet) waits for more data, as HAProxy's `tcp_action_track_sc()` yields
            let ctx = SampleCtx { final_data, ..x.ctx() };
            let pending = t.run(&ctx, x.http);
            if pending.is_none() && ctx.may_change.get() {
                return (TcpFlow::Wait, i);
            }
            if let (Some(p), Some(sc)) = (pending, x.sc.as_deref_mut()) {
                p.store(sc);
            }
            continue;
        }
        match rule.act.exec(x) {
            TcpFlow::Continue => {}
            // a yield, not an end
            w @ (TcpFlow::LuaWait(_) | TcpFlow::LuaInput | TcpFlow::Resolve) => return (w, i),
            end => {
                if let Some(at) = rule.at.reported() {
                    x.last_rule = Some(at);
                }
                return (end, i);
            }
        }
    }
    (TcpFlow::Continue, rules.len())
}

impl TcpAct {
    /// Runs the action. Expressions see the data in hand as final (HAProxy evaluates
    /// action samples with `SMP_OPT_FINAL`).
    pub fn exec(&self, x: &mut TcpExec<'_>) -> TcpFlow {
        match self {
            TcpAct::Accept => TcpFlow::Accept,
            TcpAct::Reject => TcpFlow::Reject,
            TcpAct::CloseServer => TcpFlow::CloseServer,
            TcpAct::SilentDrop => TcpFlow::SilentDrop,
            TcpAct::SetVar { var, cond, expr } => {
                let ctx = x.ctx();
                if let Some(smp) = expr.eval(&ctx) {
                    ctx.vars.set(var, &smp, *cond);
                }
                TcpFlow::Continue
            }
            TcpAct::SetVarFmt { var, cond, fmt } => {
                let mut out = std::mem::take(x.scratch);
                out.clear();
                fmt.render(&x.ctx(), &mut out);
                x.vars.set(var, &Sample::str(&out), *cond);
                *x.scratch = out;
                TcpFlow::Continue
            }
            TcpAct::UnsetVar(var) => {
                x.vars.unset(var);
                TcpFlow::Continue
            }
            TcpAct::Capture { expr, slot, len } => {
                capture(x, expr, *slot, *len);
                TcpFlow::Continue
            }
            TcpAct::SetAddr(part, expr) => {
                set_addr(x, *part, expr);
                TcpFlow::Continue
            }
            TcpAct::SetLogLevel(l) => {
                x.log_level = *l;
                TcpFlow::Continue
            }
            TcpAct::ExpectProxy => TcpFlow::Continue,
            TcpAct::TrackSc(t) => {
                let pending = t.run(&x.ctx(), x.http);
                if let (Some(p), Some(sc)) = (pending, x.sc.as_deref_mut()) {
                    p.store(sc);
                }
                TcpFlow::Continue
            }
            TcpAct::Sc(a) => {
                a.run(&x.ctx());
                TcpFlow::Continue
            }
            TcpAct::Lua(a) => super::lua::runner().map_or(TcpFlow::Continue, |r| r.tcp_action(a, x)),
            TcpAct::LuaService(id) => TcpFlow::Service(*id),
            // already an HTTP stream: the list ends there, as HAProxy's action stops it
            TcpAct::SwitchHttp(_) if x.http => TcpFlow::Accept,
            TcpAct::SwitchHttp(p) => TcpFlow::SwitchHttp(*p),
            TcpAct::SetFc(f) => {
                let mut fc = x.fc;
                f.run(&x.ctx(), &mut fc);
                x.fc = fc;
                TcpFlow::Continue
            }
            TcpAct::DoLog => {
                if let Some(log) = x.log {
                    x.rt.do_log(x.fe, &SampleCtx { log: Some(log), status: log.status, ..x.ctx() });
                }
                TcpFlow::Continue
            }
            TcpAct::DoResolve(d) => do_resolve(d, x),
        }
    }
}

/// `do-resolve`: run with an answer, the address into the variable; else, while the
/// inspection may still wait, the name to ask (the list stops with
/// [`TcpFlow::Resolve`]). On final data (the inspect delay over, or none) it cannot
/// wait and sets nothing, as HAProxy's action under `ACT_OPT_FINAL`.
fn do_resolve(d: &super::http::DoResolveAct, x: &mut TcpExec<'_>) -> TcpFlow {
    use super::state::{ResolveAsk, Resolving};
    match x.resolving.as_deref_mut().and_then(Option::take) {
        Some(Resolving::Answered(ip)) => {
            if let Some(ip) = ip {
                let smp = match ip {
                    std::net::IpAddr::V4(v4) => Sample::Ipv4(v4),
                    std::net::IpAddr::V6(v6) => Sample::Ipv6(v6),
                };
                x.vars.set(&d.var, &smp, SetCond::NONE);
            }
            return TcpFlow::Continue;
        }
        // asked, and the delay ran out before the answer
        Some(Resolving::Asked(_)) => return TcpFlow::Continue,
        None if x.final_data || x.resolving.is_none() => return TcpFlow::Continue,
        None => {}
    }
    let name = match d.expr.eval(&x.ctx()).and_then(|s| crate::sample::cast::cast(s, SmpType::Str)) {
        Some(Sample::Str(b)) if !b.is_empty() => String::from_utf8_lossy(&b).into_owned(),
        _ => return TcpFlow::Continue,
    };
    if let Some(slot) = x.resolving.as_deref_mut() {
        *slot = Some(Resolving::Asked(ResolveAsk { res: d.res, name, prefer_v6: d.prefer_v6 }));
    }
    TcpFlow::Resolve
}

/// `capture`: the value as a string, cut to `len` bytes and, as HAProxy stores a C
/// string, at its first NUL byte. No value: the slot keeps what it had.
fn capture(x: &mut TcpExec<'_>, expr: &Expr, slot: usize, len: usize) {
    // the value may borrow the stream (a capture read back): copy it to scratch space
    let mut value = std::mem::take(x.scratch);
    value.clear();
    let mut found = false;
    {
        let ctx = x.ctx();
        if let Some(Sample::Str(bytes)) = expr.eval(&ctx).and_then(|s| cast(s, SmpType::Str)) {
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            value.extend_from_slice(&bytes[..end.min(len)]);
            found = true;
        }
    }
    if found {
        x.caps.store(CapDir::Req, slot, &value, len);
    }
    *x.scratch = value;
}

/// `set-src`, `set-dst`, `set-src-port`, `set-dst-port` on the addresses the rules see.
fn set_addr(x: &mut TcpExec<'_>, part: AddrPart, expr: &Expr) {
    let Some(smp) = expr.eval(&x.ctx()).map(Sample::into_owned) else { return };
    addr::set(part, x.conn, smp);
}
