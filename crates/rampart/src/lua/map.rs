//! The `Map` and `Regex` classes: a map file looked up from a script with one of the
//! match methods of the rules, and a regular expression, both compiled by the
//! pattern code the rules use ([`crate::pattern`]), so a script matches exactly as
//! the `map_*` converters and `-m reg` do.
//! HAProxy counterpart: `hlua_map_new()`, `hlua_map_lookup()` (src/hlua.c),
//! `hlua_regex_*()` (src/hlua_fcn.c).

use std::sync::Arc;

use mlua::{Lua, Table, UserData, UserDataMethods, Value};

use crate::pattern::patref::{PatIndex, PatRefs};
use crate::pattern::value::{MapValue, ValueKind};
use crate::pattern::{MatchMethod, PatFlags};
use crate::sample::Sample;

/// HAProxy's `PAT_MATCH_*` numbers, as `Map._<name>` (and `Map.<name>`) expose them.
const METHODS: [(&str, Option<MatchMethod>); 14] = [
    ("found", None),
    ("bool", None),
    ("int", Some(MatchMethod::Int)),
    ("ip", Some(MatchMethod::Ip)),
    ("bin", None),
    ("len", None),
    ("str", Some(MatchMethod::Str)),
    ("beg", Some(MatchMethod::Beg)),
    ("sub", Some(MatchMethod::Sub)),
    ("dir", Some(MatchMethod::Dir)),
    ("dom", Some(MatchMethod::Dom)),
    ("end", Some(MatchMethod::End)),
    ("reg", Some(MatchMethod::Reg)),
    ("regm", None),
];

/// A map loaded by `Map.new()`.
struct LuaMap(Arc<PatIndex>);

impl LuaMap {
    /// `Map.new(file [, method])`: the file the configuration loaded under that path
    /// (so `core.set_map` and the CLI's `set map` reach it), else read now.
    fn new(file: &str, method: i64) -> Result<LuaMap, String> {
        let Some((_, Some(m))) = usize::try_from(method).ok().and_then(|i| METHODS.get(i)) else {
            return Err(if (0..14).contains(&method) {
                "'new' doesn't support this match mode.".to_owned()
            } else {
                "'new' needs a valid match method.".to_owned()
            });
        };
        let src = match super::map(file) {
            Some(r) => r,
            None => PatRefs::default().file(file, true).map_err(|e| format!("'new': {e}."))?,
        };
        let idx = src.index(*m, PatFlags::default(), Some(ValueKind::Str), true).map_err(|e| format!("'new': {e}."))?;
        Ok(LuaMap(idx))
    }

    /// The value `key` maps to.
    fn lookup(&self, key: &Value) -> mlua::Result<Option<Vec<u8>>> {
        let smp = match (self.0.method, key) {
            (MatchMethod::Int, Value::Integer(i)) => Sample::Sint(*i),
            (MatchMethod::Int, Value::Number(n)) => Sample::Sint(*n as i64),
            (MatchMethod::Int, _) => return Err(mlua::Error::runtime("bad argument #2 to 'lookup' (number expected)")),
            (_, Value::String(s)) => Sample::Str(s.as_bytes().to_vec().into()),
            (_, Value::Integer(i)) => Sample::Str(i.to_string().into_bytes().into()),
            (_, Value::Number(n)) => Sample::Str(n.to_string().into_bytes().into()),
            _ => return Err(mlua::Error::runtime("bad argument #2 to 'lookup' (string expected)")),
        };
        Ok(self.0.with(|snap| {
            let (n, _) = snap.set.lookup(&smp)?;
            match snap.values.get(n as usize)? {
                MapValue::Str(s) => Some(s.to_vec()),
                _ => None,
            }
        }))
    }
}

impl UserData for LuaMap {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("lookup", |lua, map, key: Value| match map.lookup(&key)? {
            Some(v) => Ok(Value::String(lua.create_string(v)?)),
            None => Ok(Value::Nil),
        });
        m.add_method("slookup", |lua, map, key: Value| {
            Ok(Value::String(lua.create_string(map.lookup(&key)?.unwrap_or_default())?))
        });
    }
}

/// A regex compiled by `Regex.new()`.
struct LuaRegex(regex::bytes::Regex);

impl UserData for LuaRegex {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("exec", |_, r, s: mlua::String| Ok(r.0.is_match(&s.as_bytes())));
        m.add_method("match", |lua, r, s: mlua::String| {
            let t = lua.create_table()?;
            let bytes = s.as_bytes();
            let Some(caps) = r.0.captures(&bytes) else { return Ok((false, t)) };
            // COMPAT: as HAProxy, at most 20 groups, up to the first that did not
            // take part in the match
            for (i, c) in caps.iter().take(20).enumerate() {
                let Some(c) = c else { break };
                t.raw_set(i + 1, lua.create_string(c.as_bytes())?)?;
            }
            Ok((true, t))
        });
    }
}

/// Creates the global `Map` and `Regex` classes.
pub(super) fn install(lua: &Lua) -> mlua::Result<()> {
    let map = lua.create_table()?;
    for (i, (name, _)) in METHODS.iter().enumerate() {
        map.set(*name, i)?;
        map.set(format!("_{name}"), i)?;
    }
    map.set(
        "new",
        lua.create_function(|_, (file, method): (String, Option<i64>)| {
            LuaMap::new(&file, method.unwrap_or(6)).map_err(mlua::Error::runtime)
        })?,
    )?;
    lua.globals().set("Map", map)?;

    let re: Table = lua.create_table()?;
    re.set(
        "new",
        // COMPAT: HAProxy 2.6 passes the flag on as "case sensitive" (whatever its
        // documentation calls it): `true` matches case.
        lua.create_function(|lua, (text, cs): (String, bool)| match crate::pattern::reg::compile(&text, !cs) {
            Ok(r) => Ok((true, Value::UserData(lua.create_userdata(LuaRegex(r))?))),
            Err(e) => Ok((false, Value::String(lua.create_string(e)?))),
        })?,
    )?;
    lua.globals().set("Regex", re)?;
    Ok(())
}
