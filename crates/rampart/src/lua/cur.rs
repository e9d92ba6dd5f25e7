//! What a running script reaches of its stream: the `CUR(op, ...)` function the
//! prelude's TXN, HTTP, fetch and applet objects call. The runner creates one per
//! call or resume, borrowing the stream (a scoped Lua function), so that a script
//! reads and edits the message in place and never keeps a reference past its turn.
//! HAProxy counterpart: `hlua_run_sample_fetch()`, `hlua_run_sample_conv()`,
//! `hlua_http_req_*()`/`hlua_http_res_*()`, `hlua_{get,set,unset}_var()`,
//! `hlua_{get,set}_priv()`, `hlua_txn_done()` (src/hlua.c).

use std::sync::Arc;

use mlua::{Lua, MultiValue, Table, Value};

use super::state::{LuaState, StreamLua};
use super::value::{bytes, from_lua, to_lua};
use crate::action::http::{Env, Exec};
use crate::action::rewrite::{self, UriPart};
use crate::sample::ctx::Dir;
use crate::sample::expr::{CompileCx, Site};
use crate::sample::kw::{Arg, ArgList, ConvKw};
use crate::sample::SampleCtx;

/// The stream a script runs on.
pub(crate) enum On<'s, 'x, 'rt, 'e> {
    /// An action or a service: the message can be edited.
    Rule { x: &'s mut Exec<'x, 'rt>, env: &'s Env<'e> },
    /// A fetch or a converter: read only.
    Sample(&'s SampleCtx<'s>),
    /// A `tcp-request`/`tcp-response content` action: the data in hand read only
    /// (`txn.req`/`txn.res`), the client socket's options to set.
    Tcp(TcpOn<'s>),
    /// A `tcp` service: its stream's fetches and variables.
    Applet { ctx: &'s SampleCtx<'s> },
    /// A task: no stream.
    Task,
    /// A CLI command (`core.register_cli`): no stream; its AppletTCP reads what the
    /// client sends after the command.
    Cli,
}

/// What a TCP content action reaches of its stream.
pub(crate) struct TcpOn<'s> {
    pub ctx: &'s SampleCtx<'s>,
    pub fc: &'s mut crate::action::sockopt::FcPending,
    /// The stream is an HTTP one (its channels hold messages, not bytes).
    pub http: bool,
    /// No more data will come (the inspection is final).
    pub final_data: bool,
    /// The input of the rules' direction as the stream holds it (the channel has the
    /// scripts' changes, [`crate::action::chan::Chan::input`]).
    pub orig: &'s [u8],
    /// The rules' channel, for the scripts to change (`None`: read only).
    pub chan: Option<&'s mut crate::action::chan::Chan>,
    /// The script may wait for more data (the inspection is not final).
    pub can_wait: bool,
}

/// How a script ended its stream with `txn:done()` / `core.done()`.
#[derive(Debug)]
pub(crate) enum Done {
    /// Close without a response.
    Close,
    /// Send this response: status, reason, headers, body.
    Reply(u16, Option<String>, Vec<(Vec<u8>, Vec<u8>)>, Vec<u8>),
}

/// One turn of a script on a stream.
pub(crate) struct Cur<'s, 'x, 'rt, 'e> {
    pub on: On<'s, 'x, 'rt, 'e>,
    pub st: &'s LuaState,
    pub done: Option<Done>,
}

/// The handle a stream keeps of what the Lua states hold for it
/// ([`crate::action::state::StreamState::lua`]): released with the stream, in the
/// thread's state and in the shared one (locked then) if it used them.
pub(crate) struct Slot {
    pub key: u64,
    pub own: bool,
    pub shared: bool,
}

impl Slot {
    pub fn new(st: &LuaState, key: u64) -> Slot {
        Slot { key, own: !st.shared, shared: st.shared }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let release = |st: &LuaState| {
            if let Ok(mut m) = st.streams.try_borrow_mut() {
                m.remove(&self.key);
            }
        };
        if self.own {
            if let Some(st) = super::state::existing_state() {
                release(&st);
            }
        }
        if self.shared {
            if let Some(st) = super::state::existing_shared() {
                release(&st);
            }
        }
    }
}

/// The key of the stream's entry in the Lua state `st` (its `slot`), created on first
/// need.
pub(crate) fn slot_key(st: &LuaState, slot: &mut crate::action::lua::Slot) -> u64 {
    if let Some(k) = slot.data.as_mut().and_then(|b| b.downcast_mut::<Slot>()) {
        let used = if st.shared { &mut k.shared } else { &mut k.own };
        if !*used {
            *used = true;
            st.streams.borrow_mut().insert(k.key, StreamLua { private: Value::Nil, pending: None });
        }
        return k.key;
    }
    let key = super::state::new_key();
    st.streams.borrow_mut().insert(key, StreamLua { private: Value::Nil, pending: None });
    slot.data = Some(Box::new(Slot::new(st, key)));
    key
}

/// The most expressions a state keeps compiled for `txn.f`/`txn.sf`.
const EXPR_CACHE_MAX: usize = 1024;

fn err<T>(msg: impl Into<String>) -> mlua::Result<T> {
    Err(mlua::Error::runtime(msg.into()))
}

impl Cur<'_, '_, '_, '_> {
    /// Runs `op` for the prelude.
    pub fn call(&mut self, lua: &Lua, op: &[u8], args: MultiValue) -> mlua::Result<MultiValue> {
        let a: Vec<Value> = args.into_vec();
        let arg = |i: usize| a.get(i).cloned().unwrap_or(Value::Nil);
        let one = |v: Value| Ok(MultiValue::from_vec(vec![v]));
        match op {
            b"f" | b"sf" => {
                let v = self.fetch(&a)?;
                one(to_lua(lua, v, op == b"sf")?)
            }
            b"c" | b"sc" => {
                let v = self.convert(&a)?;
                one(to_lua(lua, v, op == b"sc")?)
            }
            b"get_var" => {
                let Some(v) = var_ref(&arg(0)) else { return one(Value::Nil) };
                let got = self.with_ctx(|c| c.vars.get(&v))?;
                one(to_lua(lua, got, false)?)
            }
            b"set_var" => {
                let (Some(v), Some(smp)) = (var_ref(&arg(0)), from_lua(&arg(1))) else {
                    return one(Value::Boolean(false));
                };
                // COMPAT: HAProxy 2.6's `ifexist` asks whether the name (whatever its
                // scope) is one it knows; rampart knows the `proc.` names of the
                // configuration and those set since.
                let ifexist = arg(2).as_boolean() == Some(true);
                let cond = crate::sample::vars::SetCond::NONE;
                let ok = self.with_ctx(|c| {
                    (!ifexist || c.vars.proc.is_some_and(|p| p.knows(v.hash))) && c.vars.set(&v, &smp, cond)
                })?;
                one(Value::Boolean(ok))
            }
            b"unset_var" => {
                let Some(v) = var_ref(&arg(0)) else { return one(Value::Boolean(false)) };
                let ok = self.with_ctx(|c| c.vars.unset(&v))?;
                one(Value::Boolean(ok))
            }
            b"get_priv" | b"set_priv" => {
                let key = match &mut self.on {
                    On::Rule { x, .. } => slot_key(self.st, &mut x.st.lua),
                    // COMPAT: HAProxy 2.6 keeps an AppletTCP's private value in the
                    // Lua context of its stream, which a TCP stream served by a service
                    // has none of: `set_priv` does nothing, `get_priv` gives nil
                    On::Applet { .. } if op == b"get_priv" => return one(Value::Nil),
                    On::Applet { .. } => return Ok(MultiValue::new()),
                    _ => {
                        return err(
                            "txn:get_priv()/set_priv() in a fetch or a converter is not supported yet by rampart",
                        )
                    }
                };
                let mut streams = self.st.streams.borrow_mut();
                let entry = streams.get_mut(&key).expect("the slot was just made");
                if op == b"get_priv" {
                    return one(entry.private.clone());
                }
                entry.private = arg(0);
                Ok(MultiValue::new())
            }
            b"set_loglevel" => {
                let On::Rule { x, .. } = &mut self.on else { return err("txn:set_loglevel() in a fetch") };
                let level = arg(0).as_integer().unwrap_or(-2);
                x.st.log.level = match level {
                    -1 => crate::log::types::LevelSet::Silent,
                    0..=7 => crate::log::types::LevelSet::Level(level as u8),
                    _ => return err(format!("Invalid loglevel: {level}")),
                };
                Ok(MultiValue::new())
            }
            b"set_tos" | b"set_mark" | b"set_priority_class" | b"set_priority_offset" => {
                let name = String::from_utf8_lossy(op);
                let Some(v) = int_arg(&arg(0)) else {
                    return err(format!("bad argument #1 to '{name}' (number expected, got {})", arg(0).type_name()));
                };
                if let On::Tcp(t) = &mut self.on {
                    match op {
                        b"set_tos" => t.fc.tos = Some(v as u32),
                        b"set_mark" => t.fc.mark = Some(v as u32),
                        _ => return err(format!("txn:{name}() in TCP rules is not supported yet by rampart")),
                    }
                    return Ok(MultiValue::new());
                }
                let On::Rule { x, .. } = &mut self.on else {
                    return err(format!("txn:{name}() is only available in actions"));
                };
                let st = &mut *x.st;
                match op {
                    // as HAProxy's `conn_set_tos()`/`conn_set_mark()`: on the client
                    // connection (rampart sets it once the rules ran, as `set-fc-tos`)
                    b"set_tos" => st.fc.tos = Some(v as u32),
                    b"set_mark" => st.fc.mark = Some(v as u32),
                    b"set_priority_class" => {
                        st.prio = crate::server::queue::Priority::new(v, i64::from(st.prio.offset_ms))
                    }
                    _ => st.prio = crate::server::queue::Priority::new(i64::from(st.prio.class), v),
                }
                Ok(MultiValue::new())
            }
            b"done" => {
                self.done = Some(match arg(0) {
                    Value::Table(r) => self.reply(&r)?,
                    _ => Done::Close,
                });
                Ok(MultiValue::new())
            }
            _ if op.starts_with(b"http.") => self.http(lua, &op[5..], &a),
            _ if op.starts_with(b"chn.") => super::channel::call(lua, &mut self.on, &op[4..], &a),
            _ => err(format!("unknown operation '{}'", String::from_utf8_lossy(op))),
        }
    }

    /// Runs `f` over a sample context of the stream.
    fn with_ctx<R>(&self, f: impl FnOnce(&SampleCtx<'_>) -> R) -> mlua::Result<R> {
        match &self.on {
            On::Rule { x, env } => Ok(f(&env.ctx(x.msg, x.buf, x.st))),
            On::Sample(c) | On::Applet { ctx: c } | On::Tcp(TcpOn { ctx: c, .. }) => Ok(f(c)),
            On::Task | On::Cli => err("a task has no transaction"),
        }
    }

    fn fe(&self) -> usize {
        match &self.on {
            On::Rule { env, .. } => env.fe,
            On::Sample(c) | On::Applet { ctx: c } | On::Tcp(TcpOn { ctx: c, .. }) => c.fe,
            On::Task | On::Cli => 0,
        }
    }

    /// `txn.f:<name>(args...)`: the fetch whose name is `<name>` with `_` for `.`,
    /// `-` and `+` (as HAProxy names the methods), compiled once per text.
    fn fetch(&self, a: &[Value]) -> mlua::Result<Option<crate::sample::Sample<'static>>> {
        let name = a.first().and_then(bytes).unwrap_or_default();
        let name = String::from_utf8_lossy(&name).into_owned();
        let Some(kw) = crate::sample::fetch::names().find(|n| method_name(n) == name) else {
            return err(format!("'{name}': unknown fetch method"));
        };
        let text = call_text(kw, &a[1..]);
        let cached = self.st.exprs.borrow().get(&text).cloned();
        let expr = match cached {
            Some(e) => e,
            None => {
                let settings = super::settings().expect("a state has settings");
                let mut cx = CompileCx::new(&settings.cfg, self.fe(), Site::Cfg);
                let e = crate::sample::expr::compile(&text, &mut cx).or_else(|e| err(e.to_string()))?;
                let e = Arc::new(e);
                let mut cache = self.st.exprs.borrow_mut();
                // a budget: a script that builds its calls from request data does
                // not grow the cache without bound
                if cache.len() >= EXPR_CACHE_MAX {
                    cache.clear();
                }
                cache.insert(text, e.clone());
                e
            }
        };
        self.with_ctx(|c| expr.eval(c).map(crate::sample::Sample::into_owned))
    }

    /// `txn.c:<name>(value, args...)`.
    fn convert(&self, a: &[Value]) -> mlua::Result<Option<crate::sample::Sample<'static>>> {
        let name = a.first().and_then(bytes).unwrap_or_default();
        let name = String::from_utf8_lossy(&name).into_owned();
        let Some(kw) = crate::sample::conv::names().find(|n| method_name(n) == name) else {
            return err(format!("'{name}': unknown converter"));
        };
        let Some(conv) = crate::sample::conv::find(kw) else { return err(format!("'{name}': unknown converter")) };
        let Some(input) = a.get(1).and_then(from_lua) else { return Ok(None) };
        let text = call_text("", a.get(2..).unwrap_or(&[]));
        let args = self.conv_args(conv, &text)?;
        let Some(input) = crate::sample::cast::cast(input, conv.input) else { return Ok(None) };
        self.with_ctx(|c| (conv.f)(&args, input, c).map(crate::sample::Sample::into_owned))
    }

    fn conv_args(&self, conv: &'static ConvKw, text: &str) -> mlua::Result<Vec<Arg>> {
        let settings = super::settings().expect("a state has settings");
        let mut cx = CompileCx::new(&settings.cfg, self.fe(), Site::Cfg);
        let (args, _) = crate::sample::arg::parse(text, &conv.args, &mut cx)
            .or_else(|_| err(format!("'{}': invalid arguments", conv.name)))?;
        let mut args = ArgList(args);
        if let Some(check) = conv.check {
            check(&mut args, &mut cx).or_else(|m| err(format!("'{}': {m}", conv.name)))?;
        }
        Ok(args.0)
    }

    /// `txn.http:<op>(...)` on the message of the rule.
    fn http(&mut self, lua: &Lua, op: &[u8], a: &[Value]) -> mlua::Result<MultiValue> {
        let (want, what) =
            if op.starts_with(b"req_") { (Dir::Request, "request") } else { (Dir::Response, "response") };
        let arg = |i: usize| a.get(i).and_then(bytes).unwrap_or_default();
        if op.ends_with(b"get_headers") {
            let t = match &self.on {
                On::Rule { x, env } if env.dir == want => headers_table(lua, x.msg.view(x.buf))?,
                On::Sample(c) | On::Tcp(TcpOn { ctx: c, .. }) => {
                    match if want == Dir::Request { c.req } else { c.res } {
                        Some(v) => headers_table(lua, v)?,
                        None => return err(format!("the {what} is not available here")),
                    }
                }
                _ => return err(format!("the {what} headers are not available in these rules")),
            };
            return Ok(MultiValue::from_vec(vec![Value::Table(t)]));
        }
        let On::Rule { x, env } = &mut self.on else {
            return err("a fetch or a converter cannot change the message");
        };
        if env.dir != want {
            return err(format!("the {what} cannot be changed in these rules"));
        }
        let (name, value) = (arg(0), arg(1));
        let _ = match &op[4..] {
            b"set_header" => x.msg.set_header(x.buf, &name, &value).is_ok(),
            b"add_header" => x.msg.add_header(&name, &value).is_ok(),
            b"del_header" => x.msg.del_header_if(x.buf, |n, _| n.eq_ignore_ascii_case(&name)) > 0,
            b"set_method" => x.msg.set_method(&name).is_ok(),
            b"set_path" => set_part(x, UriPart::Path, &name),
            b"set_query" => set_part(x, UriPart::Query, &name),
            b"set_uri" => set_part(x, UriPart::Uri, &name),
            b"rep_header" | b"rep_value" => {
                // as HAProxy: the regex compiled at each call, case-sensitive; the
                // replacement taken as it is (`\N` for the groups)
                let text = String::from_utf8_lossy(&value).into_owned();
                let Ok(re) = crate::pattern::reg::compile(&text, false) else {
                    let m = &op[..3];
                    return err(format!("bad argument #3 to '{}_rep_hdr' (invalid regex)", String::from_utf8_lossy(m)));
                };
                rewrite::replace_header(x.msg, x.buf, &name, &re, &arg(2), op.ends_with(b"value"));
                true
            }
            b"set_status" => {
                let Some(code) = a.first().and_then(Value::as_integer).and_then(|c| u16::try_from(c).ok()) else {
                    return err("res_set_status: bad status code");
                };
                let reason = match a.get(1).and_then(bytes) {
                    Some(r) => r,
                    None => crate::http::reason(code).as_bytes().to_vec(),
                };
                x.msg.set_status(code, &reason).is_ok()
            }
            other => {
                return err(format!(
                    "txn.http:{}_{}() is not supported yet by rampart",
                    &String::from_utf8_lossy(&op[..3]),
                    String::from_utf8_lossy(other)
                ))
            }
        };
        Ok(MultiValue::new())
    }

    /// The parts of a `txn:reply()` object.
    fn reply(&self, r: &Table) -> mlua::Result<Done> {
        let f: mlua::Function = self.st.prelude.get("reply_parts")?;
        let (status, reason, hdrs, body): (u16, Option<String>, Table, mlua::String) = f.call(r.clone())?;
        let mut headers = Vec::new();
        for pair in hdrs.sequence_values::<Table>() {
            let pair = pair?;
            let (n, v): (mlua::String, mlua::String) = (pair.get(1)?, pair.get(2)?);
            headers.push((n.as_bytes().to_vec(), v.as_bytes().to_vec()));
        }
        Ok(Done::Reply(status, reason, headers, body.as_bytes().to_vec()))
    }
}

/// An integer argument as `luaL_checkinteger()` takes it (a float with an integer
/// value, a string that reads as one).
fn int_arg(v: &Value) -> Option<i64> {
    match v {
        Value::Integer(i) => Some(*i),
        Value::Number(n) if n.fract() == 0.0 => Some(*n as i64),
        Value::String(s) => s.to_str().ok()?.trim().parse().ok(),
        _ => None,
    }
}

fn set_part(x: &mut Exec<'_, '_>, part: UriPart, value: &[u8]) -> bool {
    rewrite::set_uri_part(x.msg, x.buf, part, value);
    true
}

/// A variable name as a script gives it (`nil` when it does not compile, which
/// HAProxy answers with nil or false).
fn var_ref(v: &Value) -> Option<crate::sample::vars::VarRef> {
    crate::sample::vars::parse_name(&bytes(v)?).ok()
}

/// HAProxy's method name for a keyword: `.`, `-` and `+` become `_`.
fn method_name(kw: &str) -> String {
    kw.chars().map(|c| if matches!(c, '.' | '-' | '+') { '_' } else { c }).collect()
}

/// `kw("a","b")`: the arguments quoted for the expression parser.
fn call_text(kw: &str, args: &[Value]) -> String {
    let mut t = kw.to_owned();
    if args.is_empty() {
        return t;
    }
    t.push('(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            t.push(',');
        }
        let b = bytes(a).unwrap_or_default();
        t.push('"');
        for c in String::from_utf8_lossy(&b).chars() {
            if c == '"' || c == '\\' {
                t.push('\\');
            }
            t.push(c);
        }
        t.push('"');
    }
    t.push(')');
    t
}

/// `{ ["name"] = { [0] = v1, [1] = v2 } }`: header names lowercase, values in order
/// from index 0, as HAProxy builds them.
pub(crate) fn headers_table(lua: &Lua, v: crate::http::MsgView<'_>) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    for (_, n, val) in v.headers() {
        let name = lua.create_string(n.to_ascii_lowercase())?;
        let list: Table = match t.raw_get::<Value>(&name)? {
            Value::Table(l) => l,
            _ => {
                let l = lua.create_table()?;
                t.raw_set(&name, &l)?;
                l
            }
        };
        let next = list.raw_len() as i64 + i64::from(list.contains_key(0)?);
        list.raw_set(next, lua.create_string(val)?)?;
    }
    Ok(t)
}
