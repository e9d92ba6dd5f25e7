//! The Proxy, Server and Listener classes and the `core.proxies`, `core.frontends`
//! and `core.backends` tables, as HAProxy 2.6 builds them once the configuration is
//! read (`hlua_fcn_post_init()`): a script sees them in its init functions, actions,
//! services and tasks, not while its file loads (they are nil there, as in HAProxy).
//! HAProxy counterpart: `hlua_fcn_new_proxy()`, `hlua_fcn_new_server()`,
//! `hlua_fcn_new_listener()` and their methods (src/hlua_fcn.c).
//!
//! Layering: the runtime model is above this module, so what the methods do is asked
//! of a [`ProxyHost`] the process installs ([`set_proxy_host`], `build::lua_host`),
//! which runs the code of the stats socket's server commands.
//!
//! Objects are tables as in HAProxy (`name`, `uuid`/`puid`, `servers`, `listeners`)
//! with the object's handle at index 0 and the class as metatable; the tables are a
//! snapshot of the start (servers added later by `add server` are not in them, as in
//! HAProxy).

use std::sync::OnceLock;

use mlua::{AnyUserData, Lua, Table, UserData, Value};

/// A value a host answers with.
#[derive(Debug, Clone, PartialEq)]
pub enum LuaVal {
    Nil,
    Int(i64),
    Str(String),
}

/// One proxy as the tables list it.
#[derive(Debug, Clone)]
pub struct PxInfo {
    pub name: String,
    /// HAProxy's `uuid` (the stats' `iid`).
    pub uuid: u32,
    pub frontend: bool,
    pub backend: bool,
    /// Servers: index in the proxy, name and `puid` (the stats' `sid`), in
    /// configuration order.
    pub servers: Vec<(usize, String, u32)>,
    /// Listeners: the `bind ... name`, if any.
    pub listeners: Vec<Option<String>>,
}

/// The object a method runs on: proxy index, and a server's or listener's index in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Obj {
    Proxy(usize),
    Server(usize, usize),
    Listener(usize, usize),
}

/// The health check or the agent check of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    Health,
    Agent,
}

/// What a Server method asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SrvOp<'a> {
    IsDraining,
    GetMaxconn,
    SetMaxconn(&'a str),
    GetWeight,
    SetWeight(&'a str),
    GetAddr,
    SetAddr(&'a str, Option<&'a str>),
    ShutSess,
    SetDrain,
    SetMaint,
    SetReady,
    /// `check_enable`/`agent_enable` (true), `*_disable` (false).
    Enable(CheckKind, bool),
    /// `check_force_up|nolb|down`, `agent_force_up|down`.
    Force(CheckKind, Forced),
}

/// A verdict `*_force_*` imposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forced {
    Up,
    Nolb,
    Down,
}

/// What a Proxy method asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PxOp {
    GetCap,
    GetMode,
    ShutBcksess,
    /// `pause`, `resume`, `stop`: the frontend's listeners.
    Pause,
    Resume,
    Stop,
    SrvAct,
    SrvBck,
}

/// What the Proxy, Server and Listener methods reach of the running process.
pub trait ProxyHost: Send + Sync {
    /// Every proxy, in configuration order (its index is [`Obj`]'s).
    fn proxies(&self) -> Vec<PxInfo>;
    /// The stats fields of `obj` with a value, by HAProxy's field names.
    fn stats(&self, obj: Obj) -> Vec<(&'static str, LuaVal)>;
    fn server(&self, px: usize, srv: usize, op: SrvOp<'_>) -> LuaVal;
    fn proxy(&self, px: usize, op: PxOp) -> LuaVal;
    /// The stick table of proxy `px` (its `stick-table` line), if any.
    fn table(&self, px: usize) -> Option<std::sync::Arc<crate::stick::StickTable>>;
}

static HOST: OnceLock<Box<dyn ProxyHost>> = OnceLock::new();

/// Installs the host (once per process, before the worker threads create their
/// states).
pub fn set_proxy_host(h: Box<dyn ProxyHost>) {
    let _ = HOST.set(h);
}

fn host() -> mlua::Result<&'static dyn ProxyHost> {
    HOST.get().map(|h| &**h).ok_or_else(|| mlua::Error::runtime("no proxies here"))
}

/// The handle at index 0 of an object table.
struct Handle(Obj);
impl UserData for Handle {}

/// The object `v` (a method's `self`) when it is of the class `class`: HAProxy's
/// `hlua_checkudata()` message otherwise.
fn object(v: &Value, class: &str, method: &str) -> mlua::Result<Obj> {
    let bad = || mlua::Error::runtime(format!("bad argument #1 to '{method}' ({class} expected)"));
    let Value::Table(t) = v else { return Err(bad()) };
    let ud: AnyUserData = t.raw_get(0).map_err(|_| bad())?;
    let obj = ud.borrow::<Handle>().map_err(|_| bad())?.0;
    match (class, obj) {
        ("Proxy", Obj::Proxy(_)) | ("Server", Obj::Server(..)) | ("Listener", Obj::Listener(..)) => Ok(obj),
        _ => Err(bad()),
    }
}

fn to_value(lua: &Lua, v: LuaVal) -> mlua::Result<Value> {
    Ok(match v {
        LuaVal::Nil => Value::Nil,
        LuaVal::Int(i) => Value::Integer(i),
        LuaVal::Str(s) => Value::String(lua.create_string(s)?),
    })
}

fn stats_table(lua: &Lua, obj: Obj) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    for (name, v) in host()?.stats(obj) {
        t.raw_set(name, to_value(lua, v)?)?;
    }
    Ok(t)
}

/// The classes of a state, made once by [`post_init`].
struct Classes {
    proxy: Table,
    server: Table,
    listener: Table,
}

/// A method: `f(lua, obj, args)`.
type Method = fn(&Lua, Obj, mlua::MultiValue) -> mlua::Result<Value>;

fn class(lua: &Lua, name: &'static str, methods: &[(&'static str, Method)]) -> mlua::Result<Table> {
    let index = lua.create_table()?;
    for &(m, f) in methods {
        index.set(
            m,
            lua.create_function(move |lua, (this, args): (Value, mlua::MultiValue)| {
                f(lua, object(&this, name, m)?, args)
            })?,
        )?;
    }
    let meta = lua.create_table()?;
    meta.set("__index", index)?;
    Ok(meta)
}

/// The string argument `i` of a method (numbers as strings, as `luaL_checkstring`).
fn str_arg(args: &mlua::MultiValue, i: usize, method: &str) -> mlua::Result<String> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s.to_str()?.to_owned()),
        Some(Value::Integer(n)) => Ok(n.to_string()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        other => Err(mlua::Error::runtime(format!(
            "bad argument #{} to '{method}' (string expected, got {})",
            i + 2,
            other.map_or("no value", Value::type_name)
        ))),
    }
}

fn srv(lua: &Lua, obj: Obj, op: SrvOp<'_>) -> mlua::Result<Value> {
    let Obj::Server(p, s) = obj else { return Ok(Value::Nil) };
    to_value(lua, host()?.server(p, s, op))
}

fn px(lua: &Lua, obj: Obj, op: PxOp) -> mlua::Result<Value> {
    let Obj::Proxy(p) = obj else { return Ok(Value::Nil) };
    to_value(lua, host()?.proxy(p, op))
}

const SERVER_METHODS: &[(&str, Method)] = &[
    ("is_draining", |l, o, _| srv(l, o, SrvOp::IsDraining)),
    ("get_maxconn", |l, o, _| srv(l, o, SrvOp::GetMaxconn)),
    ("set_maxconn", |l, o, a| srv(l, o, SrvOp::SetMaxconn(&str_arg(&a, 0, "set_maxconn")?))),
    ("get_weight", |l, o, _| srv(l, o, SrvOp::GetWeight)),
    ("set_weight", |l, o, a| srv(l, o, SrvOp::SetWeight(&str_arg(&a, 0, "set_weight")?))),
    ("get_addr", |l, o, _| srv(l, o, SrvOp::GetAddr)),
    ("set_addr", |l, o, a| {
        let addr = str_arg(&a, 0, "set_addr")?;
        let port = if a.len() >= 2 { Some(str_arg(&a, 1, "set_addr")?) } else { None };
        srv(l, o, SrvOp::SetAddr(&addr, port.as_deref()))
    }),
    ("get_stats", |l, o, _| stats_table(l, o).map(Value::Table)),
    ("shut_sess", |l, o, _| srv(l, o, SrvOp::ShutSess).map(|_| Value::Nil)),
    ("set_drain", |l, o, _| srv(l, o, SrvOp::SetDrain).map(|_| Value::Nil)),
    ("set_maint", |l, o, _| srv(l, o, SrvOp::SetMaint).map(|_| Value::Nil)),
    ("set_ready", |l, o, _| srv(l, o, SrvOp::SetReady).map(|_| Value::Nil)),
    ("check_enable", |l, o, _| srv(l, o, SrvOp::Enable(CheckKind::Health, true)).map(|_| Value::Nil)),
    ("check_disable", |l, o, _| srv(l, o, SrvOp::Enable(CheckKind::Health, false)).map(|_| Value::Nil)),
    ("check_force_up", |l, o, _| srv(l, o, SrvOp::Force(CheckKind::Health, Forced::Up)).map(|_| Value::Nil)),
    ("check_force_nolb", |l, o, _| srv(l, o, SrvOp::Force(CheckKind::Health, Forced::Nolb)).map(|_| Value::Nil)),
    ("check_force_down", |l, o, _| srv(l, o, SrvOp::Force(CheckKind::Health, Forced::Down)).map(|_| Value::Nil)),
    ("agent_enable", |l, o, _| srv(l, o, SrvOp::Enable(CheckKind::Agent, true)).map(|_| Value::Nil)),
    ("agent_disable", |l, o, _| srv(l, o, SrvOp::Enable(CheckKind::Agent, false)).map(|_| Value::Nil)),
    ("agent_force_up", |l, o, _| srv(l, o, SrvOp::Force(CheckKind::Agent, Forced::Up)).map(|_| Value::Nil)),
    ("agent_force_down", |l, o, _| srv(l, o, SrvOp::Force(CheckKind::Agent, Forced::Down)).map(|_| Value::Nil)),
];

const PROXY_METHODS: &[(&str, Method)] = &[
    ("get_cap", |l, o, _| px(l, o, PxOp::GetCap)),
    ("get_mode", |l, o, _| px(l, o, PxOp::GetMode)),
    ("get_stats", |l, o, _| stats_table(l, o).map(Value::Table)),
    ("shut_bcksess", |l, o, _| px(l, o, PxOp::ShutBcksess).map(|_| Value::Nil)),
    ("pause", |l, o, _| px(l, o, PxOp::Pause).map(|_| Value::Nil)),
    ("resume", |l, o, _| px(l, o, PxOp::Resume).map(|_| Value::Nil)),
    ("stop", |l, o, _| px(l, o, PxOp::Stop).map(|_| Value::Nil)),
    // HAProxy 2.8's (rampart extensions to 2.6's API; `get_name`, `get_uuid` and
    // `get_puid` are set by `post_init`)
    ("get_srv_act", |l, o, _| px(l, o, PxOp::SrvAct)),
    ("get_srv_bck", |l, o, _| px(l, o, PxOp::SrvBck)),
];

const LISTENER_METHODS: &[(&str, Method)] = &[("get_stats", |l, o, _| stats_table(l, o).map(Value::Table))];

fn object_table(lua: &Lua, meta: &Table, obj: Obj, fields: &[(&str, String)]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(0, lua.create_userdata(Handle(obj))?)?;
    for (k, v) in fields {
        t.raw_set(*k, v.as_str())?;
    }
    t.set_metatable(Some(meta.clone()));
    Ok(t)
}

fn proxy_table(lua: &Lua, c: &Classes, idx: usize, p: &PxInfo) -> mlua::Result<Table> {
    let t = object_table(lua, &c.proxy, Obj::Proxy(idx), &[("name", p.name.clone()), ("uuid", p.uuid.to_string())])?;
    if let Some(table) = host()?.table(idx) {
        t.raw_set("stktable", lua.create_userdata(super::stktable::LuaStk(table))?)?;
    }
    let servers = lua.create_table()?;
    for (i, name, puid) in &p.servers {
        let fields = [("name", name.clone()), ("puid", puid.to_string())];
        servers.raw_set(name.as_str(), object_table(lua, &c.server, Obj::Server(idx, *i), &fields)?)?;
    }
    t.raw_set("servers", servers)?;
    // unnamed listeners are `sock-1`, `sock-2` ... counting only the unnamed ones
    let listeners = lua.create_table()?;
    let mut unnamed = 0;
    for (i, name) in p.listeners.iter().enumerate() {
        let key = name.clone().unwrap_or_else(|| {
            unnamed += 1;
            format!("sock-{unnamed}")
        });
        listeners.raw_set(key, object_table(lua, &c.listener, Obj::Listener(idx, i), &[])?)?;
    }
    t.raw_set("listeners", listeners)?;
    Ok(t)
}

/// Sets `core.proxies`, `core.frontends` and `core.backends` in a state whose files
/// are loaded (nothing before the host is installed: the startup check's state).
pub(super) fn post_init(lua: &Lua) -> mlua::Result<()> {
    let Some(h) = HOST.get() else { return Ok(()) };
    let classes = Classes {
        proxy: class(lua, "Proxy", PROXY_METHODS)?,
        server: class(lua, "Server", SERVER_METHODS)?,
        listener: class(lua, "Listener", LISTENER_METHODS)?,
    };
    // HAProxy 2.8's `get_name`, `get_uuid`, `get_puid` (rampart extensions to 2.6's
    // API): the object's own fields
    let getter = |meta: &Table, method: &str, field: &'static str| -> mlua::Result<()> {
        let index: Table = meta.get("__index")?;
        index.set(method, lua.create_function(move |_, t: Table| t.raw_get::<Value>(field))?)
    };
    getter(&classes.proxy, "get_name", "name")?;
    getter(&classes.proxy, "get_uuid", "uuid")?;
    getter(&classes.server, "get_name", "name")?;
    getter(&classes.server, "get_puid", "puid")?;
    let core: Table = lua.globals().get("core")?;
    let (all, fe, be) = (lua.create_table()?, lua.create_table()?, lua.create_table()?);
    for (idx, p) in h.proxies().iter().enumerate() {
        all.raw_set(p.name.as_str(), proxy_table(lua, &classes, idx, p)?)?;
        if p.frontend {
            fe.raw_set(p.name.as_str(), proxy_table(lua, &classes, idx, p)?)?;
        }
        if p.backend {
            be.raw_set(p.name.as_str(), proxy_table(lua, &classes, idx, p)?)?;
        }
    }
    core.raw_set("proxies", all)?;
    core.raw_set("frontends", fe)?;
    core.raw_set("backends", be)?;
    Ok(())
}
