//! Running scripts: actions and services as coroutines that the stream resumes after
//! each sleep or yield, fetches and converters as plain calls, tasks as coroutines
//! driven by a task of the thread's event loop. Every turn runs under a deadline that
//! the count hook enforces (`tune.lua.session-timeout`, `service-timeout`,
//! `task-timeout`, counting Lua time only), and failures are logged with HAProxy's
//! messages.
//! HAProxy counterpart: `hlua_ctx_resume()`, `hlua_action()`,
//! `hlua_applet_http_fct()`, `hlua_sample_fetch_wrapper()`,
//! `hlua_sample_conv_wrapper()`, `hlua_process_task()` (src/hlua.c).

use std::borrow::Cow;
use std::time::{Duration, Instant};

use mlua::{Function, MultiValue, Thread, ThreadStatus, Value};

use super::cur::{slot_key, Cur, Done, On, TcpOn};
use super::state::{message, route, with_state, LuaState, Pending, Route, TIMEOUT};
use crate::action::http::{Env, Exec};
use crate::action::lua::{HttpPiece, LuaAct, LuaRunner, LuaWait};
use crate::action::Flow;
use crate::http::Synth;
use crate::sample::kw::Arg;
use crate::sample::{Sample, SampleCtx};

struct Runner;

static RUNNER: Runner = Runner;

/// Installs the runtime behind the rules' interfaces.
pub(super) fn install() {
    crate::action::lua::install(&RUNNER);
    crate::sample::lua::install(&RUNNER);
}

/// How one turn of a coroutine ended.
pub(super) enum Turn {
    /// It returned (or called `done`).
    Finished(MultiValue),
    /// It gave the loop back.
    Wait(LuaWait),
    /// A `tcp` service reads: resume it with what the client sends next.
    Input,
    Failed(String),
}

/// Resumes `co` (with `args` on its first turn) for at most `budget - spent`, with
/// `cur` reachable from the script; returns how the turn ended and the Lua time it
/// took.
pub(super) fn resume(
    st: &LuaState,
    co: &Thread,
    args: MultiValue,
    cur: &mut Cur<'_, '_, '_, '_>,
    budget: Option<Duration>,
    spent: Duration,
) -> (Turn, Duration) {
    let set_cur: Function = match st.prelude.get("set_cur") {
        Ok(f) => f,
        Err(e) => return (Turn::Failed(message(&e)), Duration::ZERO),
    };
    let start = Instant::now();
    let old_deadline = st.budget.deadline.replace(budget.map(|b| start + b.saturating_sub(spent)));
    let _doing = crate::watchdog::doing(crate::watchdog::Doing::Lua);
    st.sync_memory();
    let res = st.lua.scope(|scope| {
        let f = scope
            .create_function_mut(|lua, (op, rest): (mlua::String, MultiValue)| cur.call(lua, &op.as_bytes(), rest))?;
        let prev: Value = set_cur.call(f)?;
        let r = co.resume::<MultiValue>(args);
        set_cur.call::<Value>(prev)?;
        Ok(r)
    });
    st.budget.deadline.set(old_deadline);
    st.sync_memory();
    let took = start.elapsed();
    let turn = match res.and_then(|r| r) {
        Ok(vals) if co.status() == ThreadStatus::Resumable && is_input(st, vals.front()) => {
            // (`On::Rule`: an `http` service reads its request body; an action has no applet)
            if matches!(cur.on, On::Applet { .. } | On::Cli | On::Tcp(_) | On::Rule { .. }) {
                Turn::Input
            } else {
                Turn::Failed("an AppletTCP can only be used by its service".to_owned())
            }
        }
        Ok(vals) if co.status() == ThreadStatus::Resumable => Turn::Wait(match vals.front() {
            Some(Value::String(s)) if s.as_bytes() == super::sock::IO.as_bytes() => match vals.get(1) {
                Some(Value::Integer(token)) => LuaWait::Io(*token as u64),
                _ => LuaWait::Yield,
            },
            Some(Value::Integer(ms)) => LuaWait::Sleep(Duration::from_millis((*ms).max(0) as u64)),
            Some(Value::Number(ms)) => LuaWait::Sleep(Duration::from_millis(ms.max(0.0) as u64)),
            _ => LuaWait::Yield,
        }),
        Ok(vals) => Turn::Finished(vals),
        Err(e) => {
            let m = message(&e);
            if m == st.prelude.get::<String>("done").unwrap_or_default() {
                Turn::Finished(MultiValue::new())
            } else {
                Turn::Failed(m)
            }
        }
    };
    (turn, took)
}

/// Whether a yielded value is the one an AppletTCP yields to read.
fn is_input(st: &LuaState, v: Option<&Value>) -> bool {
    match v {
        Some(Value::String(s)) => {
            st.prelude.get::<mlua::String>("applet_in").is_ok_and(|i| i.as_bytes() == s.as_bytes())
        }
        _ => false,
    }
}

/// The message of a failed turn in the state numbered `id` ([`LuaState::id`]), as
/// HAProxy 2.6 words it (without the traceback it appends after `from`).
pub(super) fn failure(id: usize, kind: &str, name: &str, m: &str) -> String {
    if m == "Lua out of memory error" {
        return format!("{kind} '{name}': out of memory error.");
    }
    let m = if m == TIMEOUT { "execution timeout" } else { m };
    format!("{kind} '{name}': [state-id {id}] runtime error: {m}.")
}

/// Whether a function of the shared state (`shared`) or of the thread's may run on a
/// stream whose calls run in the state `kind` says ([`crate::action::lua::Slot::kind`];
/// `None`: no stream). As HAProxy 2.6, the stream's first Lua call (an action, a fetch
/// or a converter) decides its state; a function of the other kind has no reference
/// there, so calling it fails as calling nil does. `Err`: the number of the stream's
/// state, for the message ([`not_in_state`]).
fn stream_state(kind: Option<&std::cell::Cell<u8>>, shared: bool) -> Result<(), usize> {
    use crate::action::lua::{KIND_OWN, KIND_SHARED};
    let Some(kind) = kind else { return Ok(()) };
    let want = if shared { KIND_SHARED } else { KIND_OWN };
    match kind.get() {
        0 => {
            kind.set(want);
            Ok(())
        }
        k if k == want => Ok(()),
        _ if shared => Err(super::state::state_id(false)),
        _ => Err(0),
    }
}

/// HAProxy 2.6's message for a function called in a stream whose Lua state is of the
/// other kind ([`stream_state`]).
fn not_in_state(id: usize, kind: &str, name: &str) -> String {
    failure(id, kind, name, "attempt to call a nil value")
}

/// The message for a script that waits where its caller cannot wait yet (`rules`);
/// a socket's parked future is dropped: the operation is abandoned.
fn cannot_wait(w: LuaWait, rules: &str) -> String {
    let what = match w {
        LuaWait::Io(token) => {
            drop(crate::action::lua::take_io(token));
            "core.tcp()/core.httpclient()"
        }
        _ => "core.sleep()/core.msleep()",
    };
    format!("{what} in {rules} is not supported yet by rampart")
}

/// The coroutine a stream (its `slot`) left waiting for rule `rule`, if any.
pub(super) fn take_pending(st: &LuaState, slot: &crate::action::lua::Slot, rule: usize) -> Option<Pending> {
    let key = slot.data.as_ref()?.downcast_ref::<super::cur::Slot>()?.key;
    let mut streams = st.streams.borrow_mut();
    let entry = streams.get_mut(&key)?;
    match &entry.pending {
        Some(p) if p.rule == rule => entry.pending.take(),
        _ => None,
    }
}

pub(super) fn keep_pending(st: &LuaState, slot: &mut crate::action::lua::Slot, p: Pending) {
    let key = slot_key(st, slot);
    if let Some(e) = st.streams.borrow_mut().get_mut(&key) {
        e.pending = Some(p);
    }
}

impl LuaRunner for Runner {
    fn http_action(&self, act: &LuaAct, x: &mut Exec<'_, '_>, env: &Env<'_>) -> Flow {
        let Some(Route { shared, local }) = route(|r| &r.actions, act.id) else { return Flow::Continue };
        if let Err(id) = stream_state(Some(&x.st.lua.kind), shared) {
            super::send_err(&not_in_state(id, "Lua function", &act.name));
            return Flow::Continue;
        }
        let Some(st) = with_state(shared) else { return Flow::Continue };
        let rule = act as *const LuaAct as usize;
        let settings = super::settings().expect("a state has settings");
        let (co, spent, args) = match take_pending(&st, &x.st.lua, rule) {
            Some(p) => (p.co, p.spent, MultiValue::new()),
            None => {
                let f = match st.reg.borrow().actions.get(local) {
                    Some(a) => a.3.clone(),
                    None => return Flow::Continue,
                };
                let co = match st.coroutine(f) {
                    Ok(c) => c,
                    Err(e) => {
                        super::send_err(&failure(st.id(), "Lua function", &act.name, &message(&e)));
                        return Flow::Continue;
                    }
                };
                let mut args = vec![st.prelude.get::<Value>("txn").unwrap_or(Value::Nil)];
                for a in act.args.iter() {
                    args.push(st.lua.create_string(&**a).map(Value::String).unwrap_or(Value::Nil));
                }
                (co, Duration::ZERO, MultiValue::from_vec(args))
            }
        };
        let mut spent = spent;
        let mut args = args;
        loop {
            let mut cur = Cur { on: On::Rule { x: &mut *x, env }, st: &st, done: None };
            let (turn, took) = resume(&st, &co, args, &mut cur, settings.session_timeout, spent);
            let done = cur.done.take();
            spent += took;
            args = MultiValue::new();
            match turn {
                Turn::Finished(_) => return done.map_or(Flow::Continue, |d| finish(d, x, env)),
                // (only a `tcp` service reads: `resume` fails an AppletTCP used elsewhere)
                Turn::Input => continue,
                Turn::Failed(m) => {
                    super::send_err(&failure(st.id(), "Lua function", &act.name, &m));
                    return Flow::Continue;
                }
                // a caller that cannot wait: a forced yield goes on at once
                Turn::Wait(LuaWait::Yield) if !env.lua_wait => continue,
                Turn::Wait(w @ (LuaWait::Sleep(_) | LuaWait::Io(_))) if !env.lua_wait => {
                    let rules = "http-response rules on a service's response";
                    super::send_err(&failure(st.id(), "Lua function", &act.name, &cannot_wait(w, rules)));
                    return Flow::Continue;
                }
                Turn::Wait(w) => {
                    keep_pending(&st, &mut x.st.lua, Pending { rule, co, spent, applet: None });
                    return Flow::LuaWait(w);
                }
            }
        }
    }

    fn tcp_action(&self, act: &LuaAct, x: &mut crate::action::tcp::TcpExec<'_>) -> crate::action::TcpFlow {
        use crate::action::TcpFlow;
        let Some(Route { shared, local }) = route(|r| &r.actions, act.id) else { return TcpFlow::Continue };
        if let Err(id) = stream_state(x.lua.as_deref().map(|l| &l.kind), shared) {
            super::send_err(&not_in_state(id, "Lua function", &act.name));
            return TcpFlow::Continue;
        }
        let Some(st) = with_state(shared) else { return TcpFlow::Continue };
        let settings = super::settings().expect("a state has settings");
        let rule = act as *const LuaAct as usize;
        let pending = x.lua.as_deref().and_then(|slot| take_pending(&st, slot, rule));
        let (co, mut spent, mut args) = match pending {
            Some(p) => (p.co, p.spent, MultiValue::new()),
            None => {
                let Some(f) = st.reg.borrow().actions.get(local).map(|a| a.3.clone()) else {
                    return TcpFlow::Continue;
                };
                let co = match st.coroutine(f) {
                    Ok(c) => c,
                    Err(e) => {
                        super::send_err(&failure(st.id(), "Lua function", &act.name, &message(&e)));
                        return TcpFlow::Continue;
                    }
                };
                let mut args = vec![st.prelude.get::<Value>("txn").unwrap_or(Value::Nil)];
                args.extend(act.args.iter().filter_map(|a| st.lua.create_string(&**a).ok().map(Value::String)));
                (co, Duration::ZERO, MultiValue::from_vec(args))
            }
        };
        let can_wait = !x.final_data && x.lua.is_some();
        loop {
            let mut fc = x.fc;
            // the channel is lent to the script for the turn; its fetches see the data
            // as the script's earlier turns left them (a copy, only once changed)
            let mut chan = x.chan.take();
            let orig = x.payload.unwrap_or_default();
            let changed = chan.as_deref().filter(|c| c.changed()).map(|c| c.input(orig).to_vec());
            let (turn, done) = {
                let ctx = SampleCtx { payload: changed.as_deref().or(x.payload), ..x.ctx() };
                let on = On::Tcp(TcpOn {
                    ctx: &ctx,
                    fc: &mut fc,
                    http: x.http,
                    final_data: x.final_data,
                    orig,
                    chan: chan.as_deref_mut(),
                    can_wait,
                });
                let mut cur = Cur { on, st: &st, done: None };
                let (turn, took) = resume(&st, &co, args, &mut cur, settings.session_timeout, spent);
                spent += took;
                (turn, cur.done.is_some())
            };
            x.chan = chan;
            x.fc = fc;
            args = MultiValue::new();
            match turn {
                // `txn:done()` in TCP rules: the connection ends
                Turn::Finished(_) => return if done { TcpFlow::Reject } else { TcpFlow::Continue },
                Turn::Wait(w) if can_wait => {
                    if let Some(slot) = x.lua.as_deref_mut() {
                        keep_pending(&st, slot, Pending { rule, co, spent, applet: None });
                    }
                    return TcpFlow::LuaWait(w);
                }
                // a channel method waits for more data
                Turn::Input if can_wait => {
                    if let Some(slot) = x.lua.as_deref_mut() {
                        keep_pending(&st, slot, Pending { rule, co, spent, applet: None });
                    }
                    return TcpFlow::LuaInput;
                }
                // on final data: a forced yield goes on at once (HAProxy resumes it)
                Turn::Wait(LuaWait::Yield) | Turn::Input => continue,
                Turn::Wait(w) => {
                    // HAProxy's `HLUA_E_YIELD`: the script asked to wait where it may not
                    if let LuaWait::Io(token) = w {
                        drop(crate::action::lua::take_io(token));
                    }
                    let name = &act.name;
                    super::send_err(&format!("Lua function '{name}': aborting Lua processing on expired timeout."));
                    return TcpFlow::Continue;
                }
                Turn::Failed(m) => {
                    super::send_err(&failure(st.id(), "Lua function", &act.name, &m));
                    return TcpFlow::Continue;
                }
            }
        }
    }

    fn tcp_service(
        &self,
        svc: &mut crate::action::lua::TcpSvc,
        input: crate::action::lua::SvcIn<'_>,
        ctx: &SampleCtx<'_>,
        out: &mut Vec<u8>,
    ) -> crate::action::lua::SvcStep {
        super::applet_tcp::turn(svc, input, ctx, out)
    }

    fn http_service(&self, id: usize, x: &mut Exec<'_, '_>, env: &Env<'_>) -> Flow {
        super::applet_http::service(id, x, env)
    }

    fn http_service_piece(&self, id: usize, x: &mut Exec<'_, '_>, env: &Env<'_>, out: &mut Vec<u8>) -> HttpPiece {
        super::applet_http::piece(id, x, env, out)
    }
}

/// A response built from a script's parts: the body is sent with its length (a
/// script that announced none gets a `content-length`).
pub(super) fn build_reply(
    x: &mut Exec<'_, '_>,
    status: u16,
    reason: Option<String>,
    headers: Vec<(Vec<u8>, Vec<u8>)>,
    body: Vec<u8>,
) {
    let reason = reason.unwrap_or_else(|| crate::http::reason(status).to_owned());
    let out = &mut *x.out;
    crate::action::reply::start_head(out, status, &reason);
    let mut has_length = false;
    for (n, v) in &headers {
        has_length |= n.eq_ignore_ascii_case(b"content-length");
        if n.eq_ignore_ascii_case(b"transfer-encoding") {
            // the body is whole: its length frames it
            continue;
        }
        let _ = out.add_header(n, v);
    }
    if !has_length {
        let _ = out.add_header(b"content-length", body.len().to_string().as_bytes());
    }
    *x.reply = Some(Synth::built(Cow::Owned(body)));
}

/// What `txn:done()` asked.
fn finish(d: Done, x: &mut Exec<'_, '_>, env: &Env<'_>) -> Flow {
    let _ = env;
    match d {
        Done::Close => Flow::Close,
        Done::Reply(status, reason, headers, body) => {
            build_reply(x, status, reason, headers, body);
            Flow::Reply
        }
    }
}

// === fetches and converters ===

impl crate::sample::lua::LuaSample for Runner {
    fn fetch(&self, id: usize, args: &[Arg], ctx: &SampleCtx<'_>) -> Option<Sample<'static>> {
        let r = route(|r| &r.fetches, id)?;
        if let Err(state) = stream_state(ctx.lua_kind, r.shared) {
            let name = crate::sample::lua::names()?.fetches.get(id).cloned().unwrap_or_default();
            super::send_err(&not_in_state(state, "Lua sample-fetch", &name));
            return None;
        }
        let st = with_state(r.shared)?;
        let (name, f) = st.reg.borrow().fetches.get(r.local).cloned()?;
        let mut call_args = vec![st.prelude.get::<Value>("txn").ok()?];
        call_args.extend(str_args(&st, args));
        call_sync(&st, &f, call_args, On::Sample(ctx), "Lua sample-fetch", &name)
    }

    fn conv(&self, id: usize, args: &[Arg], smp: Sample<'_>, ctx: &SampleCtx<'_>) -> Option<Sample<'static>> {
        let r = route(|r| &r.converters, id)?;
        if let Err(state) = stream_state(ctx.lua_kind, r.shared) {
            let name = crate::sample::lua::names()?.converters.get(id).cloned().unwrap_or_default();
            super::send_err(&not_in_state(state, "Lua converter", &name));
            return None;
        }
        let st = with_state(r.shared)?;
        let (name, f) = st.reg.borrow().converters.get(r.local).cloned()?;
        let mut call_args = vec![super::value::to_lua(&st.lua, Some(smp), false).ok()?];
        call_args.extend(str_args(&st, args));
        call_sync(&st, &f, call_args, On::Sample(ctx), "Lua converter", &name)
    }
}

fn str_args(st: &LuaState, args: &[Arg]) -> Vec<Value> {
    args.iter().filter_map(|a| a.as_bytes()).filter_map(|b| st.lua.create_string(b).ok().map(Value::String)).collect()
}

/// A fetch or a converter: run to its end (they cannot yield), within the session
/// timeout.
fn call_sync(
    st: &LuaState,
    f: &Function,
    args: Vec<Value>,
    on: On<'_, '_, '_, '_>,
    kind: &str,
    name: &str,
) -> Option<Sample<'static>> {
    let settings = super::settings()?;
    let co = st.coroutine(f.clone()).ok()?;
    let mut cur = Cur { on, st, done: None };
    let mut args = MultiValue::from_vec(args);
    let mut spent = Duration::ZERO;
    loop {
        let (turn, took) = resume(st, &co, args, &mut cur, settings.session_timeout, spent);
        spent += took;
        args = MultiValue::new();
        match turn {
            Turn::Finished(vals) => return vals.front().and_then(super::value::from_lua),
            // a forced yield: no one to give the loop to, go on
            Turn::Wait(LuaWait::Yield) => continue,
            Turn::Wait(w) => {
                if let LuaWait::Io(token) = w {
                    drop(crate::action::lua::take_io(token));
                }
                super::send_err(&failure(st.id(), kind, name, "yield not allowed"));
                return None;
            }
            Turn::Input => continue,
            Turn::Failed(m) => {
                super::send_err(&failure(st.id(), kind, name, &m));
                return None;
            }
        }
    }
}

// === tasks ===

/// Starts the thread's Lua tasks (`core.register_task`): those of `lua-load` files on
/// the first thread only, in the shared state (HAProxy runs them once), those of
/// `lua-load-per-thread` files on every thread, in its state.
pub fn start_thread(thread: usize) {
    if super::settings().is_none() {
        return;
    }
    for shared in [true, false] {
        if shared && thread != 0 {
            continue;
        }
        let count = with_state(shared).map_or(0, |st| st.reg.borrow().tasks.len());
        for i in 0..count {
            tokio::spawn(run_task(shared, i));
        }
    }
}

/// Drives task `i` of the shared state or the thread's: resumes it, sleeps or yields
/// as it asks, until it returns or fails (the shared state is locked for each turn
/// only).
async fn run_task(shared: bool, i: usize) {
    let key = match with_state(shared).and_then(|st| new_task(&st, i)) {
        Some(k) => k,
        None => return,
    };
    loop {
        let step = with_state(shared).map(|st| step_task(&st, key));
        match step {
            Some(Some(w)) => crate::action::lua::wait(w).await,
            _ => break,
        }
    }
    if let Some(st) = with_state(shared) {
        st.streams.borrow_mut().remove(&key);
    }
}

fn new_task(st: &LuaState, i: usize) -> Option<u64> {
    let f = st.reg.borrow().tasks.get(i)?.clone();
    let co = st.coroutine(f).ok()?;
    let key = super::state::new_key();
    let pending = Pending { rule: i, co, spent: Duration::ZERO, applet: None };
    st.streams.borrow_mut().insert(key, super::state::StreamLua { private: Value::Nil, pending: Some(pending) });
    Some(key)
}

/// One turn of a task; `None` once it ended.
fn step_task(st: &LuaState, key: u64) -> Option<LuaWait> {
    let settings = super::settings()?;
    let p = st.streams.borrow_mut().get_mut(&key)?.pending.take()?;
    let mut cur = Cur { on: On::Task, st, done: None };
    let (turn, took) = resume(st, &p.co, MultiValue::new(), &mut cur, settings.task_timeout, p.spent);
    match turn {
        Turn::Wait(w) => {
            let spent = p.spent + took;
            st.streams.borrow_mut().get_mut(&key)?.pending = Some(Pending { spent, ..p });
            Some(w)
        }
        Turn::Finished(_) | Turn::Input => None,
        Turn::Failed(m) => {
            super::send_err(&failure(st.id(), "Lua task", "task", &m).replacen("Lua task 'task': ", "Lua task: ", 1));
            None
        }
    }
}
