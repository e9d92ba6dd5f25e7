//! The native functions of the `core` table: registrations, logs, dates, process
//! information. The functions written in Lua (`core.sleep`, `core.yield`,
//! `core.concat`, the log-level constants ...) are in `prelude.lua`.
//! HAProxy counterpart: `hlua_register_*()`, `hlua_log()`, `hlua_now()`,
//! `hlua_http_date()`, `hlua_get_info()` (src/hlua.c, src/hlua_fcn.c).

use std::sync::Arc;

use mlua::{Function, Lua, Table, Value};

use super::state::{register, Reg};

/// The rule lists an action may be registered for in HAProxy 2.6.
const ACTION_LISTS: [&str; 4] = ["tcp-req", "tcp-res", "http-req", "http-res"];

/// Creates the global `core` table with its native functions, in the shared state
/// (`shared`) or a thread's.
pub(super) fn install(lua: &Lua, reg: &Arc<Reg>, shared: bool) -> mlua::Result<()> {
    let core = lua.create_table()?;

    let r = reg.clone();
    core.set(
        "register_action",
        lua.create_function(move |_, (name, lists, f, nargs): (String, Table, Function, Option<usize>)| {
            let mut wanted = Vec::new();
            for l in lists.sequence_values::<String>() {
                let l = l?;
                if !ACTION_LISTS.contains(&l.as_str()) {
                    return Err(mlua::Error::runtime(format!(
                        "Lua action environment '{l}' is unknown. 'tcp-req', 'tcp-res', 'http-req' or 'http-res' \
                         expected."
                    )));
                }
                wanted.push(l);
            }
            let item = (name.clone(), wanted, nargs.unwrap_or(0), f);
            register(&mut r.borrow_mut().actions, item, |a| a.0 == name);
            Ok(())
        })?,
    )?;

    let r = reg.clone();
    core.set(
        "register_fetches",
        lua.create_function(move |_, (name, f): (String, Function)| {
            register(&mut r.borrow_mut().fetches, (name.clone(), f), |a| a.0 == name);
            Ok(())
        })?,
    )?;

    let r = reg.clone();
    core.set(
        "register_converters",
        lua.create_function(move |_, (name, f): (String, Function)| {
            register(&mut r.borrow_mut().converters, (name.clone(), f), |a| a.0 == name);
            Ok(())
        })?,
    )?;

    let r = reg.clone();
    core.set(
        "register_service",
        lua.create_function(move |_, (name, mode, f): (String, String, Function)| {
            let http = match mode.as_str() {
                "http" => true,
                "tcp" => false,
                _ => {
                    return Err(mlua::Error::runtime(format!(
                        "Lua service environment '{mode}' is unknown. 'tcp' or 'http' are expected."
                    )))
                }
            };
            register(&mut r.borrow_mut().services, (name.clone(), http, f), |a| a.0 == name);
            Ok(())
        })?,
    )?;

    let r = reg.clone();
    core.set(
        "register_init",
        lua.create_function(move |_, f: Function| {
            r.borrow_mut().inits.push(f);
            Ok(())
        })?,
    )?;

    let r = reg.clone();
    core.set(
        "register_task",
        lua.create_function(move |_, f: Function| {
            r.borrow_mut().tasks.push(f);
            Ok(())
        })?,
    )?;

    let r = reg.clone();
    core.set(
        "register_cli",
        lua.create_function(move |_, (path, usage, f): (Value, String, Function)| {
            let words = cli_path(&path)?;
            register(&mut r.borrow_mut().clis, (words.clone(), usage, f), |c| c.0 == words);
            Ok(())
        })?,
    )?;

    core.set(
        "log",
        lua.create_function(|_, (level, msg): (i64, mlua::String)| {
            if !(0..=7).contains(&level) {
                return Err(mlua::Error::runtime(format!("Invalid loglevel: {level}")));
            }
            super::send_log(level as u8, &msg.to_string_lossy());
            Ok(())
        })?,
    )?;

    core.set(
        "now",
        lua.create_function(|lua, ()| {
            let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            let t = lua.create_table()?;
            t.set("sec", d.as_secs())?;
            t.set("usec", d.subsec_micros())?;
            Ok(t)
        })?,
    )?;

    core.set(
        "http_date",
        lua.create_function(|_, ts: i64| {
            Ok(jiff::Timestamp::from_second(ts).ok().map(|t| t.strftime("%a, %d %b %Y %H:%M:%S GMT").to_string()))
        })?,
    )?;

    core.set(
        "get_info",
        lua.create_function(|lua, ()| {
            let t = lua.create_table()?;
            t.set("Name", "HAProxy")?;
            t.set("Version", rampart_cfg::version::HAPROXY_COMPAT_VERSION)?;
            t.set("Release_date", crate::version::RELEASE_DATE)?;
            t.set("Pid", std::process::id())?;
            Ok(t)
        })?,
    )?;

    // HAProxy's messages, `del_map`'s saying "acl file" as 2.6's does
    core.set(
        "set_map",
        lua.create_function(|_, (name, key, value): (String, String, String)| {
            let r = pat_file(&name, "'set_map': unknown map file")?;
            r.set_or_add(&key, &value).map_err(mlua::Error::runtime)
        })?,
    )?;
    core.set(
        "del_map",
        lua.create_function(|_, (name, key): (String, String)| {
            let r = pat_file(&name, "'del_map': unknown acl file")?;
            r.del(&key).map(drop).map_err(mlua::Error::runtime)
        })?,
    )?;
    core.set(
        "add_acl",
        lua.create_function(|_, (name, key): (String, String)| {
            let r = pat_file(&name, "'add_acl': unknown acl file")?;
            r.add_absent(&key).map_err(mlua::Error::runtime)
        })?,
    )?;
    core.set(
        "del_acl",
        lua.create_function(|_, (name, key): (String, String)| {
            let r = pat_file(&name, "'del_acl': unknown acl file")?;
            r.del(&key).map(drop).map_err(mlua::Error::runtime)
        })?,
    )?;

    super::addr::install(lua, &core)?;

    // the prelude's `core.tcp()` wraps it in the Socket class
    core.set("_tcp", lua.create_function(|lua, ()| lua.create_userdata(super::sock::LuaSock::new()))?)?;

    // the prelude's `pcall`/`xpcall` give scripts the message of an error raised by a
    // native function (mlua wraps it in an object that prints a traceback), as
    // HAProxy's C functions raise the message itself
    core.set(
        "_errmsg",
        lua.create_function(|lua, e: Value| match e {
            Value::Error(e) => lua.create_string(super::state::message(&e)).map(Value::String),
            other => Ok(other),
        })?,
    )?;

    // HAProxy: 0 in the state `lua-load` shares, the thread's number (from 1) in the
    // states of `lua-load-per-thread` (the startup check's state counts as the first)
    core.set("thread", super::state::state_id(shared))?;
    lua.globals().set("core", core)?;
    Ok(())
}

/// The pattern file `name` of the configuration (`core.set_map`, `core.add_acl`...),
/// or the error `msg 'name'`.
fn pat_file(name: &str, msg: &str) -> mlua::Result<Arc<crate::pattern::patref::PatRef>> {
    super::map(name).ok_or_else(|| mlua::Error::runtime(format!("{msg} '{name}'")))
}

/// The words of a `core.register_cli` path, checked as HAProxy 2.6 checks them.
fn cli_path(path: &Value) -> mlua::Result<Vec<String>> {
    let bad = |m: &str| Err(mlua::Error::runtime(format!("bad argument #1 to 'register_cli' ({m})")));
    let Value::Table(t) = path else { return bad("1st argument must be a table") };
    let mut words = Vec::new();
    for v in t.sequence_values::<Value>() {
        match v? {
            Value::String(s) if words.len() < 5 => words.push(s.to_str()?.to_owned()),
            Value::String(_) => return bad("1st argument must be a table with a maximum of 5 entries"),
            _ => return bad("1st argument must be a table filled with strings"),
        }
    }
    Ok(words)
}
