//! `http` services: the turns of a `core.register_service(name, "http", fn)` function
//! answering a request (`http-request use-service lua.<name>`), and the AppletHTTP
//! object it gets (written in `prelude.lua`).
//! HAProxy counterpart: `hlua_applet_http_init()`, `hlua_applet_http_fct()` and the
//! `hlua_applet_http_*` methods (src/hlua.c).
//!
//! A service runs within the request rules until it starts its response and waits
//! (a sleep, a socket, a forced yield, a full output): the head and what it sent so
//! far are then the rules' reply, and the stream drives the rest ([`piece`]), sending
//! each turn's output as it comes (chunked when the script gave no `content-length`).
//! A service that reads more of the request body than is in hand (`receive`,
//! `getline`) makes the stream read more of it first ([`Flow::WaitBody`]), as
//! HAProxy's applet waits for its input.
//!
//! COMPAT: the body is read while the rules run, so within what a buffer holds
//! (`tune.bufsize` less `tune.maxrewrite`: a longer body is cut there, HAProxy streams
//! it whole), and only before the response streams: once it does, `receive` and
//! `getline` give what is left in hand, then the end.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use mlua::{Function, MultiValue, Table, Thread, Value};

use super::cur::{Cur, On};
use super::run::{build_reply, failure, keep_pending, resume, take_pending, Turn};
use super::state::{message, route, with_state, LuaState, Pending};
use crate::action::http::{Env, Exec};
use crate::action::lua::{HttpPiece, HttpStream, LuaWait};
use crate::action::{Flow, WaitBody};
use crate::http::{BodyLen, Synth};

/// The rule number a service's coroutine waits under in the stream's slot.
fn rule(id: usize) -> usize {
    usize::MAX - id
}

/// Runs (or resumes) service `id` within the request rules.
pub(super) fn service(id: usize, x: &mut Exec<'_, '_>, env: &Env<'_>) -> Flow {
    let Some((st, local)) = route(|r| &r.services, id).and_then(|r| with_state(r.shared).map(|st| (st, r.local)))
    else {
        crate::action::reply::build_default(x, env, 500);
        return Flow::Reply;
    };
    let settings = super::settings().expect("a state has settings");
    let name = st.reg.borrow().services.get(local).map(|s| s.0.clone()).unwrap_or_default();
    // the applet stands for the server in the log line: no queue, connected at once
    let now = Instant::now();
    let log = &mut x.st.log;
    log.connect_start.get_or_insert(now);
    log.queue_ms.get_or_insert(0);
    log.connected.get_or_insert(now);
    let complete = body_complete(x, env);
    let (co, spent, applet, args) = match take_pending(&st, &x.st.lua, rule(id)) {
        Some(p) => {
            if let Some(a) = &p.applet {
                feed(&st, a, env.req_body, complete);
            }
            (p.co, p.spent, p.applet, MultiValue::new())
        }
        None => match start(&st, local, x, env, complete) {
            Ok((co, applet)) => {
                (co, Duration::ZERO, Some(applet.clone()), MultiValue::from_vec(vec![Value::Table(applet)]))
            }
            Err(m) => return fail(&st, x, env, &name, &m),
        },
    };
    let mut cur = Cur { on: On::Rule { x: &mut *x, env }, st: &st, done: None };
    let (turn, took) = resume(&st, &co, args, &mut cur, settings.service_timeout, spent);
    let spent = spent + took;
    if !matches!(turn, Turn::Wait(_) | Turn::Input) {
        x.st.log.res_head = Some(Instant::now());
    }
    match turn {
        Turn::Wait(w) => {
            if let Some(a) = applet.as_ref().filter(|a| a.get::<bool>("_started").unwrap_or(false)) {
                // the response started: from now on it goes out as it comes
                if let Err(m) = start_stream(&st, a, x, id, w) {
                    return fail(&st, x, env, &name, &m);
                }
                x.st.log.res_head = Some(Instant::now());
            }
            let streams = x.st.lua.stream.is_some();
            keep_pending(&st, &mut x.st.lua, Pending { rule: rule(id), co, spent, applet });
            if streams {
                Flow::Reply
            } else {
                Flow::LuaWait(w)
            }
        }
        Turn::Input => {
            // more of the request body: the stream reads it, then the rules resume this
            let have = env.req_body.map_or(0, |b| b.len() as u64);
            keep_pending(&st, &mut x.st.lua, Pending { rule: rule(id), co, spent, applet });
            Flow::WaitBody(WaitBody { time: None, at_least: have + 1 })
        }
        Turn::Failed(m) => fail(&st, x, env, &name, &m),
        Turn::Finished(_) => match applet.map(|a| reply(&st, &a, x)) {
            Some(Ok(true)) => Flow::Reply,
            // done without a response: HAProxy answers a 500 (its applet's `error`)
            Some(Ok(false)) | None => {
                crate::action::reply::build_default(x, env, 500);
                Flow::Reply
            }
            Some(Err(m)) => fail(&st, x, env, &name, &m),
        },
    }
}

/// One turn of a service whose response streams ([`crate::action::lua::Slot::stream`]).
pub(super) fn piece(id: usize, x: &mut Exec<'_, '_>, env: &Env<'_>, out: &mut Vec<u8>) -> HttpPiece {
    let Some((st, local)) = route(|r| &r.services, id).and_then(|r| with_state(r.shared).map(|st| (st, r.local)))
    else {
        return HttpPiece::Failed;
    };
    let settings = super::settings().expect("a state has settings");
    let Some(p) = take_pending(&st, &x.st.lua, rule(id)) else { return HttpPiece::Done };
    let Some(applet) = p.applet else { return HttpPiece::Done };
    let (co, mut spent) = (p.co, p.spent);
    loop {
        let mut cur = Cur { on: On::Rule { x: &mut *x, env }, st: &st, done: None };
        let (turn, took) = resume(&st, &co, MultiValue::new(), &mut cur, settings.service_timeout, spent);
        spent += took;
        take(&st, &applet, out);
        match turn {
            // (its body ended for it when the response started: it reads no more)
            Turn::Input => continue,
            Turn::Wait(w) => {
                keep_pending(&st, &mut x.st.lua, Pending { rule: rule(id), co, spent, applet: Some(applet) });
                return HttpPiece::Wait(w);
            }
            Turn::Finished(_) => return HttpPiece::Done,
            Turn::Failed(m) => {
                let name = st.reg.borrow().services.get(local).map(|s| s.0.clone()).unwrap_or_default();
                super::send_err(&failure(st.id(), "Lua applet http", &name, &m));
                return HttpPiece::Failed;
            }
        }
    }
}

/// Logs a failure and answers a 500, as HAProxy.
fn fail(st: &LuaState, x: &mut Exec<'_, '_>, env: &Env<'_>, name: &str, m: &str) -> Flow {
    super::send_err(&failure(st.id(), "Lua applet http", name, m));
    x.st.lua.stream = None;
    crate::action::reply::build_default(x, env, 500);
    Flow::Reply
}

/// Whether the whole request body is in hand.
fn body_complete(x: &Exec<'_, '_>, env: &Env<'_>) -> bool {
    let have = env.req_body.map_or(0, |b| b.len() as u64);
    match x.msg.body {
        BodyLen::None => true,
        BodyLen::Known(n) => have >= n,
        BodyLen::Unknown => false,
    }
}

/// Hands the applet the body in hand (`None`: it gets no more).
fn feed(st: &LuaState, applet: &Table, body: Option<&[u8]>, complete: bool) {
    let Ok(f) = st.prelude.get::<Function>("applet_feed") else { return };
    let body = match body {
        Some(b) => st.lua.create_string(b).map(Value::String).unwrap_or(Value::Nil),
        None => Value::Nil,
    };
    let _ = f.call::<()>((applet.clone(), body, complete));
}

/// Appends what the applet sent since the last call to `out`.
fn take(st: &LuaState, applet: &Table, out: &mut Vec<u8>) {
    let Ok(f) = st.prelude.get::<Function>("applet_take") else { return };
    if let Ok(s) = f.call::<mlua::String>(applet.clone()) {
        out.extend_from_slice(&s.as_bytes());
    }
}

/// The coroutine of service `id` and the AppletHTTP object of the request.
fn start(
    st: &LuaState,
    id: usize,
    x: &mut Exec<'_, '_>,
    env: &Env<'_>,
    complete: bool,
) -> Result<(Thread, Table), String> {
    let f = st.reg.borrow().services.get(id).map(|s| s.2.clone()).ok_or("no such service")?;
    let co = st.coroutine(f).map_err(|e| message(&e))?;
    let view = x.msg.view(x.buf);
    let target = view.target();
    let lua = &st.lua;
    let s = |b: &[u8]| lua.create_string(b).map_err(|e| message(&e));
    let version = match x.msg.version {
        crate::http::Version::Http10 => "1.0",
        crate::http::Version::Http11 => "1.1",
        _ => "2.0",
    };
    let headers = super::cur::headers_table(lua, view).map_err(|e| message(&e))?;
    // as HAProxy: the body in hand, and what its length says is still to come
    let have = env.req_body.map_or(0, <[u8]>::len) as u64;
    let length = match x.msg.body {
        BodyLen::Known(n) => n.max(have),
        _ => have,
    };
    let new: Function = st.prelude.get("new_applet").map_err(|e| message(&e))?;
    let applet: Table = new
        .call((
            s(view.method())?,
            s(target.path)?,
            s(target.query.unwrap_or_default())?,
            version,
            headers,
            s(env.req_body.unwrap_or_default())?,
            complete,
            length,
        ))
        .map_err(|e| message(&e))?;
    Ok((co, applet))
}

/// The parts of the response an applet started: whether it started one, status,
/// reason, headers, and the body it sent since the last call.
type Parts = (bool, u16, Option<String>, Vec<(Vec<u8>, Vec<u8>)>, Vec<u8>);

fn parts(st: &LuaState, applet: &Table) -> Result<Parts, String> {
    let f: Function = st.prelude.get("applet_response").map_err(|e| message(&e))?;
    let (started, status, reason, hdrs, body): (bool, u16, Option<String>, Table, mlua::String) =
        f.call(applet.clone()).map_err(|e| message(&e))?;
    let mut headers = Vec::new();
    for pair in hdrs.sequence_values::<Table>() {
        let pair = pair.map_err(|e| message(&e))?;
        let (n, v): (mlua::String, mlua::String) =
            (pair.get(1).map_err(|e| message(&e))?, pair.get(2).map_err(|e| message(&e))?);
        headers.push((n.as_bytes().to_vec(), v.as_bytes().to_vec()));
    }
    Ok((started, status, reason, headers, body.as_bytes().to_vec()))
}

/// Builds the whole response of an applet that returned in `x.out`; `false` when it
/// never started one.
fn reply(st: &LuaState, applet: &Table, x: &mut Exec<'_, '_>) -> Result<bool, String> {
    let (started, status, reason, headers, body) = parts(st, applet)?;
    if started {
        build_reply(x, status, reason, headers, body);
    }
    Ok(started)
}

/// The response of an applet that started it and waits: its head and what it sent so
/// far become the rules' reply, and the stream goes on with [`piece`] after `w`.
fn start_stream(st: &LuaState, applet: &Table, x: &mut Exec<'_, '_>, id: usize, w: LuaWait) -> Result<(), String> {
    let (_, status, reason, headers, body) = parts(st, applet)?;
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(b"content-length"))
        .and_then(|(_, v)| std::str::from_utf8(v).ok()?.trim().parse::<u64>().ok());
    let reason = reason.unwrap_or_else(|| crate::http::reason(status).to_owned());
    let out = &mut *x.out;
    crate::action::reply::start_head(out, status, &reason);
    for (n, v) in &headers {
        // the stream frames the body itself
        if !n.eq_ignore_ascii_case(b"transfer-encoding") {
            let _ = out.add_header(n, v);
        }
    }
    *x.reply =
        Some(Synth { has_length: length.is_some(), chunked: length.is_none(), ..Synth::built(Cow::Owned(body)) });
    // the request body it has not read by now is not read for it any more
    feed(st, applet, None, true);
    x.st.lua.stream = Some(HttpStream { id, wait: w, length });
    Ok(())
}
