//! The HTTP actions (`http-request`, `http-response`, `http-after-response`, and the
//! proxy `redirect` rules), compiled, and how each runs.
//! HAProxy counterpart: src/http_act.c, the HTTP parts of src/vars.c.

use std::time::Duration;

use rampart_cfg::model::Normalizer;
use regex::bytes::Regex;

use super::addr::AddrPart;
use super::capture::CapDir;
use super::capture::CaptureDecls;
use super::reply::{Pages, Redirect, Reply};
use super::rewrite::{self, UriPart};
use super::state::StreamState;
use super::{Flow, WaitBody};
use crate::http::{MsgHead, Synth};
use crate::log::format::LogFormat;
use crate::log::types::LevelSet;
use crate::log::Cause;
use crate::sample::ctx::Dir;
use crate::sample::expr::Expr;
use crate::sample::host::Host;
use crate::sample::vars::{SetCond, VarRef, VarStore, Vars};
use crate::sample::SampleCtx;

/// How `del-header -m` compares names.
#[derive(Debug)]
pub enum NameMatch {
    Str,
    Beg,
    End,
    Sub,
    Reg(Regex),
}

impl NameMatch {
    fn matches(&self, pattern: &[u8], name: &[u8]) -> bool {
        match self {
            NameMatch::Str => name.eq_ignore_ascii_case(pattern),
            NameMatch::Beg => name.len() >= pattern.len() && name[..pattern.len()].eq_ignore_ascii_case(pattern),
            NameMatch::End => {
                name.len() >= pattern.len() && name[name.len() - pattern.len()..].eq_ignore_ascii_case(pattern)
            }
            NameMatch::Sub => {
                pattern.is_empty() || name.windows(pattern.len()).any(|w| w.eq_ignore_ascii_case(pattern))
            }
            NameMatch::Reg(re) => re.is_match(name),
        }
    }
}

/// A compiled HTTP action.
#[derive(Debug)]
pub enum HttpAct {
    Allow,
    /// `cache-use <cache>` (the cache's index).
    CacheUse(u32),
    /// `cache-store <cache>`, and the proxy whose rule it is (whose cache filter
    /// stores: it may come after the frontend's compression filter).
    CacheStore(u32, u32),
    /// `deny`: the reply (403 by default, 502 on responses).
    Deny(Reply),
    /// `use-service prometheus-exporter`: the metrics (`crate::stats::prometheus`).
    PrometheusExporter,
    /// `tarpit`: the reply after `timeout tarpit`.
    Tarpit(Reply),
    Return(Reply),
    /// `auth`: 401 with `WWW-Authenticate: Basic realm="<realm>"`.
    Auth(Reply),
    Redirect(Redirect),
    SetHeader {
        name: Box<[u8]>,
        value: LogFormat,
    },
    AddHeader {
        name: Box<[u8]>,
        value: LogFormat,
    },
    DelHeader {
        name: Box<[u8]>,
        how: NameMatch,
    },
    ReplaceHeader {
        name: Box<[u8]>,
        re: Regex,
        with: LogFormat,
    },
    ReplaceValue {
        name: Box<[u8]>,
        re: Regex,
        with: LogFormat,
    },
    SetMethod(LogFormat),
    /// `set-path`, `set-pathq`, `set-query`, `set-uri`.
    SetUriPart(UriPart, LogFormat),
    /// `replace-path`, `replace-pathq`, `replace-uri`.
    ReplaceUriPart(UriPart, Regex, LogFormat),
    SetStatus {
        status: u16,
        reason: Box<[u8]>,
    },
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
    /// `strict-mode on|off`: whether a failed rewrite aborts the stream.
    StrictMode(bool),
    /// `capture <expr> len <n>|id <n>`: the value, as a string, into capture slot
    /// `slot`; cut to `len`, or for `id`, to the length of the frontend's slot.
    Capture {
        expr: Expr,
        dir: CapDir,
        slot: usize,
        len: Option<usize>,
    },
    /// `set-src`, `set-dst`, `set-src-port`, `set-dst-port`.
    SetAddr(AddrPart, Expr),
    NormalizeUri(Normalizer),
    /// `early-hint <name> <fmt>`: a header of a `103 Early Hints` response; `ends`: the
    /// response is complete after it (the next rule is not an unconditional
    /// `early-hint`).
    EarlyHint {
        name: Box<[u8]>,
        value: LogFormat,
        ends: bool,
    },
    /// `set-timeout server|tunnel <time>|<expr>`.
    SetTimeout {
        tunnel: bool,
        value: TimeoutValue,
    },
    /// `set-priority-class <expr>` (`offset`: `set-priority-offset <expr>`): the
    /// stream's place in a server queue.
    SetPriority {
        offset: bool,
        value: crate::sample::expr::Expr,
    },
    /// `disable-l7-retry`: no `retry-on` response condition for this stream.
    DisableL7Retry,
    /// `wait-for-body time <t> [at-least <n>]`.
    WaitBody(WaitBody),
    /// `reject`: close the connection without a response.
    Close,
    /// `silent-drop`: close it without the client noticing.
    SilentDrop,
    /// `set-log-level <level>|silent`: the severity of the stream's log line.
    SetLogLevel(LevelSet),
    /// `set-mark`, `set-tos`, `set-fc-mark`, `set-fc-tos`.
    SetFc(super::sockopt::FcSet),
    /// `do-log` (HAProxy 3.x): a log line now, in the frontend's format.
    DoLog,
    /// `track-sc<n> <key> [table <t>]`.
    TrackSc(super::stick::TrackSc),
    /// `sc-inc-gpc*`, `sc-set-gpt*`.
    Sc(super::stick::ScAct),
    /// `do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>`.
    DoResolve(Box<DoResolveAct>),
    /// `lua.<name> [args...]`.
    Lua(super::lua::LuaAct),
    /// `use-service lua.<name>`: the service's number.
    LuaService(usize),
    /// `send-spoe-group <engine> <group>`: indices into the proxy's engines and the
    /// engine's groups.
    SendSpoeGroup(crate::spoe::Ask),
    /// `add-acl(<file>)`, `del-acl(<file>)`, `set-map(<file>)`, `del-map(<file>)`.
    PatRef(Box<super::patref::PatRefAct>),
}

/// `do-resolve`: the stream asks the name `expr` gives of resolvers section `res`
/// (without blocking its thread: the rules stop, the stream waits for the answer, then
/// runs this rule again, which stores the address in `var`).
#[derive(Debug)]
pub struct DoResolveAct {
    pub var: VarRef,
    /// Index into `Runtime::resolvers`.
    pub res: usize,
    pub prefer_v6: bool,
    pub expr: Expr,
}

/// The value `set-timeout` gives.
#[derive(Debug)]
pub enum TimeoutValue {
    Fixed(Duration),
    /// Milliseconds; 0 means no timeout, a negative or absent value changes nothing.
    Expr(Expr),
}

/// What an action runs on: the stream's heads and where their slices point, the
/// response slot a reply is built in, and the sample context parts.
pub struct Exec<'x, 'rt> {
    /// The message the rules act on (the request in `http-request`, the response in
    /// `http-response` and `http-after-response`).
    pub msg: &'x mut MsgHead,
    pub buf: &'x [u8],
    /// Where a reply is built (the stream's response head) and its bytes.
    pub out: &'x mut MsgHead,
    pub reply: &'x mut Option<Synth<'rt>>,
    /// Where default replies (`errorfile`s, `http-error`s) come from: the proxy holding
    /// the rule, then the frontend.
    pub pages: [Pages<'rt>; 2],
    /// Scratch space for rendered values.
    pub scratch: &'x mut Vec<u8>,
    /// A failed rewrite aborts the stream (HAProxy's default `strict-mode on`).
    pub strict: &'x mut bool,
    /// The stream's addresses, captures, unique id, early hints, timeouts.
    pub st: &'x mut StreamState,
}

impl Exec<'_, '_> {
    /// The sample context over the current message and the stream.
    pub fn ctx<'m>(&'m self, env: &'m Env<'_>) -> SampleCtx<'m> {
        env.ctx(self.msg, self.buf, self.st)
    }
}

/// What a sample context is built from, besides the message a rule works on: the
/// stream's state and its variable stores. [`Env::ctx`] builds one per evaluation.
#[derive(Clone)]
pub struct Env<'p> {
    pub rt: &'p dyn Host,
    pub fe: usize,
    /// The frontend's capture slots (`capture ... id <n>`).
    pub captures: &'p CaptureDecls,
    pub be: Option<usize>,
    pub srv: Option<usize>,
    pub first_req: bool,
    /// The request's method (response rules still read it).
    pub meth: Option<crate::http::Method>,
    /// The request's version, likewise (`capture.req.ver`).
    pub ver: Option<crate::http::Version>,
    /// The request (rules on the request) or the response (rules on a response).
    pub dir: Dir,
    pub sess: &'p VarStore,
    pub txn: &'p VarStore,
    pub reqres: &'p VarStore,
    /// The request body bytes in hand (`req.body`).
    pub req_body: Option<&'p [u8]>,
    /// The response body data a `wait-for-body` waited for (`res.body`).
    pub res_body: Option<&'p [u8]>,
    /// Whether the caller can wait for a Lua action that gives the event loop back
    /// (it runs the rules again from that action after [`Flow::LuaWait`]); where it
    /// cannot, the action's sleeps and sockets fail it.
    pub lua_wait: bool,
}

impl Env<'_> {
    /// The sample context over `msg` for rules on the request, and over no message
    /// for rules on a response (what a reply built there sees).
    pub fn bare_or<'m>(&'m self, msg: &'m MsgHead, buf: &'m [u8], st: &'m StreamState) -> SampleCtx<'m> {
        match self.dir {
            Dir::Request => self.ctx(msg, buf, st),
            Dir::Response => SampleCtx { res: None, ..self.ctx(msg, buf, st) },
        }
    }

    /// The sample context over `msg` (its slices into `buf`) and the stream's state.
    pub fn ctx<'m>(&'m self, msg: &'m MsgHead, buf: &'m [u8], st: &'m StreamState) -> SampleCtx<'m> {
        let view = Some(msg.view(buf));
        let (req, res) = if self.dir == Dir::Request { (view, None) } else { (None, view) };
        SampleCtx {
            be: self.be,
            srv: self.srv,
            dir: self.dir,
            req,
            res,
            vars: Vars {
                proc: Some(self.rt.proc_vars()),
                sess: Some(self.sess),
                txn: Some(self.txn),
                reqres: Some(self.reqres),
                check: None,
            },
            first_req: self.first_req,
            txn_meth: self.meth,
            txn_ver: self.ver,
            req_line: &st.log.req_line,
            req_body: self.req_body,
            res_body: self.res_body,
            req_caps: &st.caps.req,
            res_caps: &st.caps.res,
            unique_id: Some(&st.uid),
            uniq_id: st.uniq_id,
            timeouts: st.timeouts,
            back_tls: st.back_tls.as_deref(),
            last_rule: st.last_rule,
            flt: st.flt,
            sc: Some(&st.sc),
            lua_kind: Some(&st.lua.kind),
            ..SampleCtx::new(self.rt, &st.conn, self.fe)
        }
    }
}

impl HttpAct {
    /// Runs the action. `ctx` builds the sample context over the current head.
    pub fn exec<'rt>(&'rt self, x: &mut Exec<'_, 'rt>, ctx: &Env<'_>) -> Flow {
        let before = x.msg.failed_rewrites;
        let flow = self.run(x, ctx);
        if x.msg.failed_rewrites != before && *x.strict {
            // As HAProxy, a failed rewrite in strict mode is an internal error (500),
            // on a request as on a response.
            super::reply::build_default(x, ctx, 500);
            return Flow::Reply;
        }
        flow
    }

    fn run<'rt>(&'rt self, x: &mut Exec<'_, 'rt>, ctx: &Env<'_>) -> Flow {
        match self {
            HttpAct::Allow => Flow::Allow,
            HttpAct::Deny(r) => {
                count_denied(ctx);
                r.build(x, ctx);
                // the log's termination state: a refusal, or the proxy's own answer
                let cause = if matches!(self, HttpAct::Return(_)) { Cause::Local } else { Cause::Proxy };
                x.st.log.end_by(cause, x.st.log.current_phase());
                Flow::Reply
            }
            HttpAct::Return(r) | HttpAct::Auth(r) => {
                r.build(x, ctx);
                Flow::Reply
            }
            HttpAct::PrometheusExporter => Flow::Service(super::Service::PrometheusExporter),
            HttpAct::Tarpit(r) => {
                count_denied(ctx);
                r.build(x, ctx);
                Flow::Tarpit
            }
            HttpAct::Redirect(r) => {
                if r.build(x, ctx) {
                    x.st.log.end_by(Cause::Local, x.st.log.current_phase());
                    Flow::Reply
                } else {
                    Flow::Continue
                }
            }
            HttpAct::SetHeader { name, value } => {
                render(value, x, ctx);
                let _ = x.msg.set_header(x.buf, name, x.scratch);
                Flow::Continue
            }
            HttpAct::AddHeader { name, value } => {
                render(value, x, ctx);
                let _ = x.msg.add_header(name, x.scratch);
                Flow::Continue
            }
            HttpAct::DelHeader { name, how } => {
                x.msg.del_header_if(x.buf, |n, _| how.matches(name, n));
                Flow::Continue
            }
            HttpAct::ReplaceHeader { name, re, with } => {
                render(with, x, ctx);
                rewrite::replace_header(x.msg, x.buf, name, re, x.scratch, false);
                Flow::Continue
            }
            HttpAct::ReplaceValue { name, re, with } => {
                render(with, x, ctx);
                rewrite::replace_header(x.msg, x.buf, name, re, x.scratch, true);
                Flow::Continue
            }
            HttpAct::SetMethod(fmt) => {
                render(fmt, x, ctx);
                let _ = x.msg.set_method(x.scratch);
                Flow::Continue
            }
            HttpAct::SetUriPart(part, fmt) => {
                render(fmt, x, ctx);
                rewrite::set_uri_part(x.msg, x.buf, *part, x.scratch);
                Flow::Continue
            }
            HttpAct::ReplaceUriPart(part, re, fmt) => {
                render(fmt, x, ctx);
                rewrite::replace_uri_part(x.msg, x.buf, *part, re, x.scratch);
                Flow::Continue
            }
            HttpAct::SetStatus { status, reason } => {
                let _ = x.msg.set_status(*status, reason);
                Flow::Continue
            }
            HttpAct::SetVar { var, cond, expr } => {
                let c = ctx.ctx(x.msg, x.buf, x.st);
                if let Some(smp) = expr.eval(&c) {
                    c.vars.set(var, &smp, *cond);
                }
                Flow::Continue
            }
            HttpAct::SetVarFmt { var, cond, fmt } => {
                render(fmt, x, ctx);
                let c = ctx.ctx(x.msg, x.buf, x.st);
                c.vars.set(var, &crate::sample::Sample::str(x.scratch), *cond);
                Flow::Continue
            }
            HttpAct::UnsetVar(var) => {
                ctx.ctx(x.msg, x.buf, x.st).vars.unset(var);
                Flow::Continue
            }
            HttpAct::DoResolve(d) => do_resolve(d, x, ctx),
            HttpAct::StrictMode(on) => {
                *x.strict = *on;
                Flow::Continue
            }
            HttpAct::Close => Flow::Close,
            HttpAct::SilentDrop => Flow::SilentDrop,
            HttpAct::SetLogLevel(l) => {
                x.st.log.level = *l;
                Flow::Continue
            }
            HttpAct::SetFc(f) => {
                let mut fc = x.st.fc;
                f.run(&ctx.ctx(x.msg, x.buf, x.st), &mut fc);
                x.st.fc = fc;
                Flow::Continue
            }
            HttpAct::DoLog => {
                let c = ctx.ctx(x.msg, x.buf, x.st);
                let c = SampleCtx { log: Some(&x.st.log), status: x.st.log.status, ..c };
                ctx.rt.do_log(ctx.fe, &c);
                Flow::Continue
            }
            HttpAct::PatRef(p) => {
                p.run(&ctx.ctx(x.msg, x.buf, x.st), x.scratch);
                Flow::Continue
            }
            HttpAct::TrackSc(t) => {
                // the request is counted whichever list tracks (HAProxy's
                // `http_action_track_sc()`); errors are counted at the end
                let pending = t.run(&ctx.ctx(x.msg, x.buf, x.st), true);
                if let Some(p) = pending {
                    p.store(&mut x.st.sc);
                }
                Flow::Continue
            }
            HttpAct::Sc(a) => {
                a.run(&ctx.ctx(x.msg, x.buf, x.st));
                Flow::Continue
            }
            HttpAct::Capture { expr, dir, slot, len } => {
                capture(x, ctx, expr, *dir, *slot, *len);
                Flow::Continue
            }
            HttpAct::SetAddr(part, expr) => {
                let c = ctx.ctx(x.msg, x.buf, x.st);
                let v = expr.eval(&c).map(crate::sample::Sample::into_owned);
                if let Some(v) = v {
                    super::addr::set(*part, &mut x.st.conn, v);
                }
                Flow::Continue
            }
            HttpAct::NormalizeUri(n) => match super::normalize::apply(*n, x.msg, x.buf) {
                Ok(()) => Flow::Continue,
                Err(_) => {
                    super::reply::build_default(x, ctx, 400);
                    Flow::Reply
                }
            },
            HttpAct::EarlyHint { name, value, ends } => {
                early_hint(x, ctx, name, value, *ends);
                Flow::Continue
            }
            HttpAct::DisableL7Retry => {
                x.st.l7_retry = false;
                Flow::Continue
            }
            HttpAct::CacheUse(c) => {
                super::cache::cache_use(*c, x, ctx);
                Flow::Continue
            }
            HttpAct::CacheStore(c, px) => {
                super::cache::cache_store(*c, *px, x, ctx);
                Flow::Continue
            }
            HttpAct::SetPriority { offset, value } => {
                // as HAProxy: a sample that is not an integer leaves the priority as is
                let smp = value.eval(&ctx.ctx(x.msg, x.buf, x.st));
                let smp = smp.and_then(|v| crate::sample::cast::cast(v, crate::sample::SmpType::Sint));
                if let Some(crate::sample::Sample::Sint(v)) = smp {
                    let p = &mut x.st.prio;
                    *p = if *offset {
                        crate::server::queue::Priority::new(i64::from(p.class), v)
                    } else {
                        crate::server::queue::Priority::new(v, i64::from(p.offset_ms))
                    };
                }
                Flow::Continue
            }
            HttpAct::SetTimeout { tunnel, value } => {
                let t = match value {
                    TimeoutValue::Fixed(d) => Some(*d),
                    TimeoutValue::Expr(e) => match e.eval(&ctx.ctx(x.msg, x.buf, x.st)) {
                        Some(crate::sample::Sample::Sint(ms)) if ms >= 0 => Some(Duration::from_millis(ms as u64)),
                        _ => return Flow::Continue,
                    },
                };
                // a value of 0 means no timeout, as HAProxy's "eternity" tick
                let t = t.filter(|d| !d.is_zero());
                if *tunnel {
                    x.st.timeouts.tunnel = Some(t);
                } else {
                    x.st.timeouts.server = Some(t);
                }
                Flow::Continue
            }
            HttpAct::WaitBody(w) => Flow::WaitBody(*w),
            HttpAct::Lua(a) => super::lua::runner().map_or(Flow::Continue, |r| r.http_action(a, x, ctx)),
            HttpAct::LuaService(id) => Flow::Service(super::Service::Lua(*id)),
            HttpAct::SendSpoeGroup(ask) => {
                let t = x.st.spoe.get_or_insert_with(Default::default);
                if std::mem::take(&mut t.done) {
                    return Flow::Continue;
                }
                t.pending = Some(*ask);
                Flow::Spoe
            }
        }
    }
}

/// `capture`: stores the expression's value, as a string, in a capture slot.
fn capture(x: &mut Exec<'_, '_>, ctx: &Env<'_>, expr: &Expr, dir: CapDir, slot: usize, len: Option<usize>) {
    let c = ctx.ctx(x.msg, x.buf, x.st);
    let Some(crate::sample::Sample::Str(v)) =
        expr.eval(&c).and_then(|s| crate::sample::cast::cast(s, crate::sample::SmpType::Str))
    else {
        return;
    };
    x.scratch.clear();
    x.scratch.extend_from_slice(&v);
    let slots = ctx.captures;
    let declared = match dir {
        CapDir::Req => slots.req.get(slot),
        CapDir::Res => slots.res.get(slot),
    };
    if let Some(len) = len.or(declared.map(|d| d.len)) {
        x.st.caps.store(dir, slot, x.scratch, len);
    }
}

/// `early-hint`: adds a header to the `103 Early Hints` response being built (starting
/// one if none is), for HTTP/1.1 clients only, as HAProxy.
fn early_hint(x: &mut Exec<'_, '_>, ctx: &Env<'_>, name: &[u8], value: &LogFormat, ends: bool) {
    if x.msg.version != crate::http::Version::Http11 {
        return;
    }
    render(value, x, ctx);
    if !x.st.hint_open {
        let mut head = MsgHead { arena_max: ctx.rt.bufsize(), ..MsgHead::default() };
        super::reply::start_head(&mut head, 103, "Early Hints");
        x.st.hints.push(head);
        x.st.hint_open = true;
    }
    if let Some(head) = x.st.hints.last_mut() {
        let _ = head.add_header(name, x.scratch);
    }
    if ends {
        x.st.hint_open = false;
    }
}

/// Renders a log-format over the current message into `x.scratch`.
pub(super) fn render(fmt: &LogFormat, x: &mut Exec<'_, '_>, ctx: &Env<'_>) {
    x.scratch.clear();
    fmt.render(&ctx.ctx(x.msg, x.buf, x.st), x.scratch);
}

/// Runs a rule list in order until an action ends it.
pub fn run_rules<'rt>(rules: &'rt [super::Rule<HttpAct>], x: &mut Exec<'_, 'rt>, ctx: &Env<'_>) -> Flow {
    run_rules_from(rules, 0, x, ctx).0
}

/// Runs the rules of a list from index `start` until an action ends it; returns what
/// ended it and the index of that rule (the list's length when none did).
pub fn run_rules_from<'rt>(
    rules: &'rt [super::Rule<HttpAct>],
    start: usize,
    x: &mut Exec<'_, 'rt>,
    ctx: &Env<'_>,
) -> (Flow, usize) {
    for (i, rule) in rules.iter().enumerate().skip(start) {
        if let Some(cond) = &rule.cond {
            if !cond.eval(&ctx.ctx(x.msg, x.buf, x.st)) {
                continue;
            }
        }
        match rule.act.exec(x, ctx) {
            Flow::Continue => {}
            // a yield, not an end: the list resumes after it (at it, for Lua)
            end @ (Flow::WaitBody(_) | Flow::LuaWait(_)) => return (end, i),
            end => {
                if let Some(at) = rule.at.reported() {
                    x.st.last_rule = Some(at);
                }
                return (end, i);
            }
        }
    }
    (Flow::Continue, rules.len())
}

/// `deny` and `tarpit` on a request count in the frontend's `dreq`, `deny` on a
/// response in the `dresp` of the frontend, backend and server (as HAProxy counts them,
/// `show stat`).
fn count_denied(ctx: &Env<'_>) {
    ctx.rt.count_denied(ctx.dir, ctx.fe, ctx.be, ctx.srv);
}

/// `do-resolve`: on its first run, the name to ask (the rules then stop with
/// [`Flow::Resolve`]); run again with the answer, the address into the variable.
fn do_resolve(d: &DoResolveAct, x: &mut Exec<'_, '_>, ctx: &Env<'_>) -> Flow {
    if let Some(answer) = x.st.resolved.take() {
        if let Some(ip) = answer {
            let smp = match ip {
                std::net::IpAddr::V4(v4) => crate::sample::Sample::Ipv4(v4),
                std::net::IpAddr::V6(v6) => crate::sample::Sample::Ipv6(v6),
            };
            ctx.ctx(x.msg, x.buf, x.st).vars.set(&d.var, &smp, SetCond::NONE);
        }
        return Flow::Continue;
    }
    let c = ctx.ctx(x.msg, x.buf, x.st);
    let name = match d.expr.eval(&c).and_then(|s| crate::sample::cast::cast(s, crate::sample::SmpType::Str)) {
        Some(crate::sample::Sample::Str(b)) if !b.is_empty() => String::from_utf8_lossy(&b).into_owned(),
        _ => return Flow::Continue,
    };
    x.st.resolve = Some(crate::action::state::ResolveAsk { res: d.res, name, prefer_v6: d.prefer_v6 });
    Flow::Resolve
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_match_as_del_header_says() {
        assert!(NameMatch::Str.matches(b"x-a", b"X-A"));
        assert!(!NameMatch::Str.matches(b"x-a", b"X-AB"));
        assert!(NameMatch::Beg.matches(b"x-", b"X-Forwarded-For"));
        assert!(NameMatch::End.matches(b"-for", b"X-Forwarded-For"));
        assert!(NameMatch::Sub.matches(b"forw", b"X-Forwarded-For"));
        assert!(!NameMatch::Sub.matches(b"back", b"X-Forwarded-For"));
        assert!(NameMatch::Reg(Regex::new("^x-.*-for$").unwrap()).matches(b"", b"x-forwarded-for"));
    }

    /// Runs frontend 0's `http-request` rules on `GET <path>`; returns the flow and
    /// the last rule noted.
    fn last_rule_after(rt: &crate::proxy::Runtime, path: &str) -> (Flow, Option<super::super::RuleAt>) {
        let raw = format!("GET {path} HTTP/1.1\r\nHost: a\r\n\r\n");
        let mut msg = crate::sample::testutil::req_head(raw.as_bytes());
        let (mut out, mut reply, mut scratch, mut strict) = (MsgHead::default(), None, Vec::new(), true);
        let mut st = StreamState::default();
        let vars = [VarStore::new(crate::sample::vars::Scope::Sess), VarStore::new(crate::sample::vars::Scope::Txn)];
        let reqres = VarStore::new(crate::sample::vars::Scope::Req);
        let env = Env {
            rt,
            fe: 0,
            captures: &rt.proxies[0].rules.captures,
            be: None,
            srv: None,
            first_req: true,
            meth: None,
            ver: None,
            dir: Dir::Request,
            sess: &vars[0],
            txn: &vars[1],
            reqres: &reqres,
            req_body: None,
            res_body: None,
            lua_wait: true,
        };
        let mut x = Exec {
            msg: &mut msg,
            buf: raw.as_bytes(),
            out: &mut out,
            reply: &mut reply,
            pages: [rt.proxies[0].pages(), rt.proxies[0].pages()],
            scratch: &mut scratch,
            strict: &mut strict,
            st: &mut st,
        };
        let flow = run_rules(&rt.proxies[0].rules.http_req, &mut x, &env);
        (flow, st.last_rule)
    }

    #[test]
    fn the_final_http_rule_is_noted_with_its_line() {
        use super::super::RuleAt;
        // lines: 1 defaults, 2 mode, 3 frontend, 4 bind, 5 set-var, 6 allow, 7 deny,
        // 8 redirect, 9 redirect (proxy-level)
        let cfg = crate::sample::testutil::config(
            "defaults\n mode http\nfrontend f\n bind :1\n\
             http-request set-var(txn.p) path\n\
             http-request allow if { path /a }\n\
             http-request deny if { path /d }\n\
             http-request redirect location / if { path /r }\n\
             redirect location /x if { path /p }\n\
             default_backend b\nbackend b\n server s 127.0.0.1:1\n",
        );
        let rt = crate::sample::testutil::runtime(&cfg);
        let at = |line| Some(RuleAt { file: 0, line });
        assert_eq!(last_rule_after(&rt, "/"), (Flow::Continue, None), "set-var ends nothing");
        assert_eq!(last_rule_after(&rt, "/a"), (Flow::Allow, at(6)));
        assert_eq!(last_rule_after(&rt, "/d").1, at(7));
        assert_eq!(last_rule_after(&rt, "/r").1, at(8));
        assert!(rt.proxies[0].rules.redirects.iter().all(|r| r.at.reported().is_none()));
    }
}
