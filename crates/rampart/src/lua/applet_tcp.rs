//! `tcp` services: the turns of a `core.register_service(name, "tcp", fn)` function
//! serving a TCP stream (`tcp-request content use-service lua.<name>`), and the
//! AppletTCP object it gets (written in `prelude.lua`: `getline`, `receive` and `send`
//! work on buffers the stream fills and drains between turns).
//! HAProxy counterpart: `hlua_applet_tcp_init()`, `hlua_applet_tcp_fct()`,
//! `hlua_applet_tcp_new()` and the `hlua_applet_tcp_*` methods (src/hlua.c).
//!
//! One turn runs the coroutine until it waits: for the client (`getline`, `receive`
//! with nothing left to read: [`SvcStep::Input`]), for a sleep or a socket, or until
//! a forced yield; what it sent meanwhile goes to `out`. It runs under
//! `tune.lua.service-timeout`, counting Lua time only.

use std::time::Duration;

use mlua::{Function, MultiValue, Table, Value};

use super::cur::{Cur, On, Slot};
use super::run::{failure, resume, Turn};
use super::state::{message, with_state, LuaState, Pending, StreamLua};
use crate::action::lua::{SvcIn, SvcStep, TcpSvc};
use crate::sample::SampleCtx;

/// One turn of the service of `svc` (started on the first call).
pub(super) fn turn(svc: &mut TcpSvc, input: SvcIn<'_>, ctx: &SampleCtx<'_>, out: &mut Vec<u8>) -> SvcStep {
    let Some(r) = super::state::route(|r| &r.services, svc.id) else { return SvcStep::Failed };
    let Some(st) = with_state(r.shared) else { return SvcStep::Failed };
    let name = st.reg.borrow().services.get(r.local).map(|s| format!("<lua.{}>", s.0)).unwrap_or_default();
    let (key, first) = match svc.slot.as_ref().and_then(|b| b.downcast_ref::<Slot>()) {
        Some(k) => (k.key, false),
        None => match start(&st, svc, r.local, input) {
            Ok(k) => (k, true),
            Err(m) => {
                return fail(st.id(), &name, &m);
            }
        },
    };
    let Some(p) = st.streams.borrow_mut().get_mut(&key).and_then(|e| e.pending.take()) else { return SvcStep::Done };
    let Some(applet) = p.applet.clone() else { return SvcStep::Done };
    let args = match (first, input) {
        // the first turn: the applet object, with what the rules read already in it
        (true, _) => MultiValue::from_vec(vec![Value::Table(applet.clone())]),
        (false, SvcIn::Data(d)) => match st.lua.create_string(d) {
            Ok(s) => MultiValue::from_vec(vec![Value::String(s)]),
            Err(e) => return fail(st.id(), &name, &message(&e)),
        },
        (false, SvcIn::End) => MultiValue::from_vec(vec![Value::Boolean(false)]),
        (false, SvcIn::Resume) => MultiValue::new(),
    };
    let settings = super::settings().expect("a state has settings");
    let mut cur = Cur { on: On::Applet { ctx }, st: &st, done: None };
    let (turn, took) = resume(&st, &p.co, args, &mut cur, settings.service_timeout, p.spent);
    take_output(&st, &applet, out);
    let step = match turn {
        Turn::Wait(w) => SvcStep::Wait(w),
        Turn::Input => SvcStep::Input,
        Turn::Finished(_) => return SvcStep::Done,
        Turn::Failed(m) => return fail(st.id(), &name, &m),
    };
    let spent = p.spent + took;
    if let Some(e) = st.streams.borrow_mut().get_mut(&key) {
        e.pending = Some(Pending { spent, ..p });
    }
    step
}

fn fail(id: usize, name: &str, m: &str) -> SvcStep {
    super::send_err(&failure(id, "Lua applet tcp", name, m));
    SvcStep::Failed
}

/// Creates the coroutine and the AppletTCP object of `svc`, kept in the state under
/// a new key (released when the stream drops `svc.slot`); `input`: what the content
/// rules read before the service took the connection.
fn start(st: &LuaState, svc: &mut TcpSvc, local: usize, input: SvcIn<'_>) -> Result<u64, String> {
    let f = st.reg.borrow().services.get(local).map(|s| s.2.clone()).ok_or("no such service")?;
    let co = st.coroutine(f).map_err(|e| message(&e))?;
    let held = match input {
        SvcIn::Data(d) => d,
        _ => &[],
    };
    let new: Function = st.prelude.get("new_applet_tcp").map_err(|e| message(&e))?;
    let applet: Table = new.call(st.lua.create_string(held).map_err(|e| message(&e))?).map_err(|e| message(&e))?;
    let key = super::state::new_key();
    let pending = Pending { rule: usize::MAX - svc.id, co, spent: Duration::ZERO, applet: Some(applet) };
    st.streams.borrow_mut().insert(key, StreamLua { private: Value::Nil, pending: Some(pending) });
    svc.slot = Some(Box::new(Slot::new(st, key)));
    Ok(key)
}

/// Moves what the service sent during its turn to `out`.
fn take_output(st: &LuaState, applet: &Table, out: &mut Vec<u8>) {
    let Ok(f) = st.prelude.get::<Function>("applet_tcp_out") else { return };
    if let Ok(Some(s)) = f.call::<Option<mlua::String>>(applet.clone()) {
        out.extend_from_slice(&s.as_bytes());
    }
}
