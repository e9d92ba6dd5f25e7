//! The stats socket's commands that scripts register (`core.register_cli(path, usage,
//! fn)`): listed by `help` with their usage line, run with an AppletTCP whose `send`
//! writes the answer, and every word of the command as arguments.
//! HAProxy counterpart: `hlua_register_cli()`, `hlua_cli_parse_fct()`,
//! `hlua_cli_io_handler_fct()` (src/hlua.c).
//!
//! A command runs as a coroutine on the CLI's event loop, as HAProxy's CLI applet:
//! `core.sleep`, `core.yield` and sockets give the loop back while the session waits,
//! `getline`/`receive` read what the client sends after the command line, and the
//! script's Lua time is bounded by `tune.lua.session-timeout`. What it sent is the
//! answer, written once it ended (COMPAT: HAProxy writes it as it comes).

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::time::Duration;

use mlua::{Function, MultiValue, Table, Value};

use super::cur::{Cur, On};
use super::run::{failure, resume, Turn};
use super::state::{message, with_state, LuaState, Pending, StreamLua};

/// The commands the scripts registered: their words and help line (from the startup
/// check, the same in every thread).
static CLIS: OnceLock<Vec<(Vec<String>, String)>> = OnceLock::new();

pub(super) fn publish(clis: Vec<(Vec<String>, String)>) {
    let _ = CLIS.set(clis);
}

/// The registered commands (none without scripts).
pub fn commands() -> &'static [(Vec<String>, String)] {
    CLIS.get().map_or(&[], Vec::as_slice)
}

/// The command `words` name (its words first), if a script registered one.
pub fn find(words: &[&str]) -> Option<usize> {
    commands().iter().position(|(w, _)| words.len() >= w.len() && w.iter().zip(words).all(|(a, b)| a == b))
}

/// What the CLI session feeds a command that reads (`getline`, `receive`).
pub trait CliInput: Send {
    /// The next bytes the client sends after the command; `None` once it closed (or
    /// said nothing within the CLI's timeout).
    fn next(&mut self) -> Pin<Box<dyn Future<Output = Option<Vec<u8>>> + Send + '_>>;
}

/// Runs command `id` with `words`; its answer (what it sent, also when it failed: the
/// failure is logged, as HAProxy does). The command runs as a coroutine: a sleep, a
/// yield or a socket that waits gives the event loop back (the session waits, the
/// thread does not), a read waits for what the client sends next (`input`).
pub async fn run(id: usize, words: &[&str], input: &mut dyn CliInput) -> String {
    let mut out = Vec::new();
    let Some(r) = super::state::route(|r| &r.clis, id) else { return String::new() };
    let Some(key) = with_state(r.shared).and_then(|st| start(&st, r.local)) else { return String::new() };
    let mut feed = Feed::First(words);
    loop {
        let step = match with_state(r.shared) {
            Some(st) => step(&st, key, r.local, feed, &mut out),
            None => break,
        };
        feed = match step {
            Some(Next::Wait(w)) => {
                crate::action::lua::wait(w).await;
                Feed::Resume
            }
            Some(Next::Input) => match input.next().await {
                Some(data) => Feed::Data(data),
                None => Feed::End,
            },
            None => break,
        };
    }
    if let Some(st) = with_state(r.shared) {
        st.streams.borrow_mut().remove(&key);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What a command waits for after a turn.
enum Next {
    Wait(crate::action::lua::LuaWait),
    /// What the client sends next.
    Input,
}

/// What the next turn of a command gets.
enum Feed<'w> {
    /// Its first turn: the command's words.
    First(&'w [&'w str]),
    Resume,
    Data(Vec<u8>),
    End,
}

/// The command's name in its messages: `<lua.cli.WORDS>`.
fn name(st: &LuaState, id: usize) -> String {
    let reg = st.reg.borrow();
    let path = reg.clis.get(id).map(|c| c.0.clone()).unwrap_or_default();
    format!("<lua.cli{}>", path.iter().map(|w| format!(".{w}")).collect::<String>())
}

/// Creates the coroutine of command `id` and its AppletTCP, kept in the state under a
/// new key (removed by [`run`]).
fn start(st: &LuaState, id: usize) -> Option<u64> {
    let f = st.reg.borrow().clis.get(id).map(|c| c.2.clone())?;
    let started = (|| -> mlua::Result<(mlua::Thread, Table)> {
        let new: Function = st.prelude.get("new_applet_tcp")?;
        let applet: Table = new.call("")?;
        Ok((st.coroutine(f)?, applet))
    })();
    let (co, applet) = match started {
        Ok(x) => x,
        Err(e) => {
            super::send_err(&failure(st.id(), "Lua cli", &name(st, id), &message(&e)));
            return None;
        }
    };
    let key = super::state::new_key();
    let pending = Pending { rule: id, co, spent: Duration::ZERO, applet: Some(applet) };
    st.streams.borrow_mut().insert(key, StreamLua { private: Value::Nil, pending: Some(pending) });
    Some(key)
}

/// One turn of the command under `key`: what it sent goes to `out`; `None` once it
/// ended (a failure is logged), else how it waits.
fn step(st: &LuaState, key: u64, id: usize, feed: Feed<'_>, out: &mut Vec<u8>) -> Option<Next> {
    let settings = super::settings()?;
    let p = st.streams.borrow_mut().get_mut(&key)?.pending.take()?;
    let applet = p.applet.clone()?;
    let args = match feed {
        Feed::First(words) => {
            let mut args = vec![Value::Table(applet.clone())];
            args.extend(words.iter().filter_map(|w| st.lua.create_string(w).ok().map(Value::String)));
            MultiValue::from_vec(args)
        }
        Feed::Resume => MultiValue::new(),
        Feed::Data(d) => MultiValue::from_vec(vec![st.lua.create_string(&d).map(Value::String).ok()?]),
        Feed::End => MultiValue::from_vec(vec![Value::Boolean(false)]),
    };
    let mut cur = Cur { on: On::Cli, st, done: None };
    let (turn, took) = resume(st, &p.co, args, &mut cur, settings.session_timeout, p.spent);
    if let Ok(Some(s)) =
        st.prelude.get::<Function>("applet_tcp_out").and_then(|f| f.call::<Option<mlua::String>>(applet.clone()))
    {
        out.extend_from_slice(&s.as_bytes());
    }
    let next = match turn {
        Turn::Wait(w) => Next::Wait(w),
        Turn::Input => Next::Input,
        Turn::Finished(_) => return None,
        Turn::Failed(m) => {
            super::send_err(&failure(st.id(), "Lua cli", &name(st, id), &m));
            return None;
        }
    };
    let spent = p.spent + took;
    st.streams.borrow_mut().get_mut(&key)?.pending = Some(Pending { spent, ..p });
    Some(next)
}
