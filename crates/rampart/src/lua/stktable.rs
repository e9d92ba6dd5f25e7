//! The StickTable class: the `stktable` field of a Proxy object whose proxy has a
//! `stick-table`, with `info()`, `lookup(key)` and `dump([filter])`.
//! HAProxy counterpart: `hlua_stktable_info()`, `hlua_stktable_lookup()`,
//! `hlua_stktable_dump()` (src/hlua_fcn.c).

use std::sync::Arc;

use mlua::{Lua, MultiValue, Table, UserData, UserDataMethods, Value};
use rampart_cfg::model::{DataType, StickKeyType};

use crate::stick::table::EntryView;
use crate::stick::{Key, StickTable};

/// A proxy's table, as scripts hold it.
pub(super) struct LuaStk(pub Arc<StickTable>);

impl UserData for LuaStk {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("info", |lua, this, ()| info(lua, &this.0));
        m.add_method("lookup", |lua, this, key: Value| lookup(lua, &this.0, &key));
        m.add_method("dump", |lua, this, filter: Value| dump(lua, &this.0, &filter));
    }
}

/// HAProxy's `key_size`: the key's bytes (a string's with its terminating zero when
/// `len` was given).
fn key_size(t: StickKeyType) -> i64 {
    match t {
        StickKeyType::Ip | StickKeyType::Integer => 4,
        StickKeyType::Ipv6 => 16,
        // COMPAT: HAProxy counts the zero of an explicit `len`; rampart cannot tell
        // an explicit `len 32` from the default (32)
        StickKeyType::String(32) => 32,
        StickKeyType::String(n) => i64::from(n) + 1,
        StickKeyType::Binary(n) => i64::from(n),
    }
}

fn info(lua: &Lua, t: &StickTable) -> mlua::Result<Table> {
    let out = lua.create_table()?;
    out.set("type", t.key_type.name())?;
    out.set("length", key_size(t.key_type))?;
    out.set("size", t.size)?;
    out.set("used", t.used())?;
    out.set("nopurge", t.nopurge)?;
    out.set("expire", t.expire.unwrap_or(0))?;
    let data = lua.create_table()?;
    for d in t.layout.stored() {
        let period = if d.is_rate() { i64::from(t.layout.period(d)) } else { -1 };
        data.set(d.name(), period)?;
    }
    out.set("data", data)?;
    Ok(out)
}

/// The value of `d` in entry `e` as a script sees it (an array: its first element).
fn value(lua: &Lua, t: &StickTable, e: &EntryView, d: DataType, now: u32) -> mlua::Result<Value> {
    let v = e.row.get(&t.layout, d, now).unwrap_or(0);
    Ok(match d {
        DataType::ServerId => Value::Integer(i64::from(v as u32 as i32)),
        DataType::ServerKey => {
            let name = crate::stick::dict::value(v);
            Value::String(lua.create_string(name.as_deref().unwrap_or("-"))?)
        }
        _ => Value::Integer(v as i64),
    })
}

/// The data of entry `e`, by type name.
fn entry(lua: &Lua, t: &StickTable, e: &EntryView, out: &Table) -> mlua::Result<()> {
    let now = crate::stick::now_ms();
    for d in t.layout.stored() {
        out.set(d.name(), value(lua, t, e, d, now)?)?;
    }
    Ok(())
}

fn lookup(lua: &Lua, t: &StickTable, key: &Value) -> mlua::Result<Value> {
    let text = match key {
        Value::String(s) => s.to_str()?.to_owned(),
        Value::Integer(i) => i.to_string(),
        Value::Number(n) => n.to_string(),
        _ => return Ok(Value::Nil),
    };
    let Some(e) = Key::parse(t.key_type, &text).and_then(|k| t.view(&k)) else { return Ok(Value::Nil) };
    let out = lua.create_table()?;
    // (the view holds a reference of its own, as HAProxy's lookup does)
    out.set("use", e.row.users().saturating_sub(1))?;
    out.set("expire", e.exp_in)?;
    entry(lua, t, &e, &out)?;
    Ok(Value::Table(out))
}

/// One condition of a `dump` filter: a data type, an operator, a value.
struct Cond {
    d: DataType,
    op: Op,
    val: i64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Le,
    Lt,
    Ge,
    Gt,
}

impl Op {
    fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "eq" => Op::Eq,
            "ne" => Op::Ne,
            "le" => Op::Le,
            "lt" => Op::Lt,
            "ge" => Op::Ge,
            "gt" => Op::Gt,
            _ => return None,
        })
    }

    fn holds(self, v: i64, with: i64) -> bool {
        match self {
            Op::Eq => v == with,
            Op::Ne => v != with,
            Op::Le => v <= with,
            Op::Lt => v < with,
            Op::Ge => v >= with,
            Op::Gt => v > with,
        }
    }
}

/// HAProxy's `STKTABLE_FILTER_LEN`.
const FILTER_MAX: usize = 4;

/// The conditions of a filter table, or HAProxy's message.
fn filter(t: &StickTable, f: &Value) -> Result<Vec<Cond>, String> {
    let f = match f {
        Value::Nil => return Ok(Vec::new()),
        Value::Table(f) => f,
        _ => return Err("filter table expected".to_owned()),
    };
    let mut conds = Vec::new();
    for pair in f.clone().pairs::<Value, Value>() {
        let (_, e) = pair.map_err(|e| e.to_string())?;
        let n = conds.len() + 1;
        if conds.len() >= FILTER_MAX {
            return Err(format!("Filter table too large (len > {FILTER_MAX})"));
        }
        let triplet = match e {
            Value::Table(e) if e.raw_len() == 3 => e,
            _ => {
                return Err(format!("Filter table entry must be a triplet: {{\"data_col\", \"op\", val}} (entry #{n})"))
            }
        };
        let d = match triplet.raw_get::<Value>(1).map_err(|e| e.to_string())? {
            Value::String(s) => DataType::from_name(&s.to_string_lossy())
                .filter(|d| t.layout.stores(*d))
                .ok_or_else(|| format!("Filter table data column not present in stick table (entry #{n})"))?,
            _ => return Err(format!("Filter table data column must be string (entry #{n})")),
        };
        let op = match triplet.raw_get::<Value>(2).map_err(|e| e.to_string())? {
            Value::String(s) => Op::parse(&s.to_string_lossy())
                .ok_or_else(|| format!("Unknown operator in filter table (entry #{n})"))?,
            _ => return Err(format!("Filter table operator must be string (entry #{n})")),
        };
        // `lua_tointeger`: 0 for what is not a number
        let val = match triplet.raw_get::<Value>(3).map_err(|e| e.to_string())? {
            Value::Integer(i) => i,
            Value::Number(x) if x.fract() == 0.0 => x as i64,
            Value::String(s) => s.to_str().ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0),
            _ => 0,
        };
        conds.push(Cond { d, op, val });
    }
    Ok(conds)
}

fn dump(lua: &Lua, t: &StickTable, f: &Value) -> mlua::Result<MultiValue> {
    let failed = |m: String| -> mlua::Result<MultiValue> {
        Ok(MultiValue::from_vec(vec![Value::Nil, Value::String(lua.create_string(m)?)]))
    };
    let conds = match filter(t, f) {
        Ok(c) => c,
        Err(m) => return failed(m),
    };
    let out = lua.create_table()?;
    let now = crate::stick::now_ms();
    for k in t.keys() {
        let Some(e) = t.view(&k) else { continue };
        let keep = conds.iter().all(|c| {
            let v = e.row.get(&t.layout, c.d, now).unwrap_or(0) as i64;
            c.op.holds(v, c.val)
        });
        if !keep {
            continue;
        }
        let key = match &e.key {
            Key::Int(n) => Value::Integer(i64::from(*n)),
            Key::Bytes(_) if matches!(t.key_type, StickKeyType::Binary(_)) => {
                return failed("Unsupported stick table key type".to_owned())
            }
            Key::Bytes(b) => Value::String(lua.create_string(&**b)?),
            other => {
                let mut s = String::new();
                other.render(&mut s);
                Value::String(lua.create_string(s)?)
            }
        };
        let row = lua.create_table()?;
        entry(lua, t, &e, &row)?;
        out.set(key, row)?;
    }
    Ok(MultiValue::from_vec(vec![Value::Table(out)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_operators_compare_as_haproxy() {
        assert!(Op::Gt.holds(31, 30) && !Op::Gt.holds(30, 30));
        assert!(Op::Ge.holds(30, 30) && Op::Le.holds(30, 30) && Op::Eq.holds(30, 30));
        assert!(Op::Ne.holds(1, 2) && !Op::Ne.holds(2, 2) && Op::Lt.holds(1, 2));
        assert!(Op::parse("eq").is_some() && Op::parse("EQ").is_none());
        assert_eq!(key_size(StickKeyType::String(32)), 32);
        assert_eq!(key_size(StickKeyType::String(10)), 11);
        assert_eq!(key_size(StickKeyType::Ipv6), 16);
    }
}
