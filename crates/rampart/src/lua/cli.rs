//! The stats socket's commands that scripts register (`core.register_cli(path, usage,
//! fn)`): listed by `help` with their usage line, run with an AppletTCP whose `send`
//! writes the answer, and every word of the command as arguments.
//! HAProxy counterpart: `hlua_register_cli()`, `hlua_cli_parse_fct()`,
//! `hlua_cli_io_handler_fct()` (src/hlua.c).
//!
//! The CLI answers a command at once: the function runs to its end (forced yields are
//! resumed at once, within `tune.lua.session-timeout`); `core.sleep` or a socket in
//! it fails the command.

use std::sync::OnceLock;
use std::time::Duration;

use mlua::{Function, MultiValue, Table, Value};

use super::cur::{Cur, On};
use super::run::{failure, resume, Turn};
use super::state::{message, with_state};

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

/// Runs command `id` with `words`; its answer (what it sent, also when it failed: the
/// failure is logged, as HAProxy does).
pub fn run(id: usize, words: &[&str]) -> String {
    let Some(st) = with_state() else { return String::new() };
    let Some(settings) = super::settings() else { return String::new() };
    let Some((path, f)) = st.reg.borrow().clis.get(id).map(|c| (c.0.clone(), c.2.clone())) else {
        return String::new();
    };
    let name = format!("<lua.cli{}>", path.iter().map(|w| format!(".{w}")).collect::<String>());
    let mut out = Vec::new();
    let started = (|| -> mlua::Result<(mlua::Thread, Table)> {
        let new: Function = st.prelude.get("new_applet_tcp")?;
        let applet: Table = new.call("")?;
        Ok((st.coroutine(f)?, applet))
    })();
    let (co, applet) = match started {
        Ok(x) => x,
        Err(e) => {
            super::send_err(&failure("Lua cli", &name, &message(&e)));
            return String::new();
        }
    };
    let mut args = vec![Value::Table(applet.clone())];
    args.extend(words.iter().filter_map(|w| st.lua.create_string(w).ok().map(Value::String)));
    let mut args = MultiValue::from_vec(args);
    let mut spent = Duration::ZERO;
    let take = |out: &mut Vec<u8>| {
        if let Ok(Some(s)) =
            st.prelude.get::<Function>("applet_tcp_out").and_then(|f| f.call::<Option<mlua::String>>(applet.clone()))
        {
            out.extend_from_slice(&s.as_bytes());
        }
    };
    loop {
        let mut cur = Cur { on: On::Task, st: st.clone(), done: None };
        let (turn, took) = resume(&st, &co, args, &mut cur, settings.session_timeout, spent);
        take(&mut out);
        spent += took;
        args = MultiValue::new();
        match turn {
            Turn::Finished(_) => break,
            Turn::Wait(crate::action::lua::LuaWait::Yield) => continue,
            Turn::Wait(w) => {
                if let crate::action::lua::LuaWait::Io(token) = w {
                    drop(crate::action::lua::take_io(token));
                }
                let m = "core.sleep()/core.tcp() in CLI commands is not supported yet by rampart";
                super::send_err(&failure("Lua cli", &name, m));
                break;
            }
            Turn::Input | Turn::Failed(_) => {
                let m = match turn {
                    Turn::Failed(m) => m,
                    _ => "reading from the CLI is not supported yet by rampart".to_owned(),
                };
                super::send_err(&failure("Lua cli", &name, &m));
                break;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
