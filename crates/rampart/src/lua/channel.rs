//! `txn.req` and `txn.res` (the Channel class) in `tcp-request content` and
//! `tcp-response content` actions of TCP streams: the methods that read the data in
//! hand. HAProxy counterpart: `hlua_channel_*()` (src/hlua.c).
//!
//! Partial: rampart's TCP rules read the data without owning the buffer, so the
//! methods that change it (`get`, `getline`, `set`, `append`, `prepend`, `insert`,
//! `remove`, `send`, `forward`) raise "not supported yet" (in `prelude.lua`), and
//! `data`/`line` do not wait for more data: they give what is there (a rule waits
//! for data with its condition and `tcp-request inspect-delay`).

use mlua::{Lua, MultiValue, Value};

use super::cur::{On, TcpOn};
use crate::sample::ctx::Dir;

fn err<T>(msg: impl Into<String>) -> mlua::Result<T> {
    Err(mlua::Error::runtime(msg.into()))
}

fn one(v: Value) -> mlua::Result<MultiValue> {
    Ok(MultiValue::from_vec(vec![v]))
}

/// An integer argument (`luaL_checkinteger`).
fn int(v: &Value, n: usize, what: &str) -> mlua::Result<i64> {
    match v {
        Value::Integer(i) => Ok(*i),
        Value::Number(f) if f.fract() == 0.0 => Ok(*f as i64),
        other => err(format!("bad argument #{n} to '{what}' (number expected, got {})", other.type_name())),
    }
}

/// The part of `data` that `data(offset, length)` and `line(offset, length)` look at:
/// HAProxy's offset (negative from the end) and length (-1: all) rules.
fn window<'d>(data: &'d [u8], a: &[Value], what: &str) -> mlua::Result<&'d [u8]> {
    let input = data.len() as i64;
    let mut offset = 0;
    if let Some(v) = a.get(1) {
        offset = int(v, 2, what)?;
        if offset < 0 {
            offset = (input + offset).max(0);
        }
        if offset > input {
            return err("offset out of range.");
        }
    }
    let rest = &data[offset as usize..];
    let Some(v) = a.get(2) else { return Ok(rest) };
    let len = match int(v, 3, what)? {
        -1 => return Ok(rest),
        l if l < 0 => return err("length out of range."),
        l => l as usize,
    };
    Ok(&rest[..len.min(rest.len())])
}

/// Runs Channel method `m` (`a[0]`: the channel is the response one).
pub(super) fn call(lua: &Lua, on: &On<'_, '_, '_, '_>, m: &[u8], a: &[Value]) -> mlua::Result<MultiValue> {
    let res = a.first().and_then(Value::as_boolean) == Some(true);
    if m == b"is_resp" {
        return one(Value::Boolean(res));
    }
    let t: &TcpOn<'_> = match on {
        On::Tcp(t) if !t.http => t,
        On::Tcp(_) | On::Rule { .. } => return err("Cannot manipulate HAProxy channels in HTTP mode."),
        _ => return err("txn.req and txn.res are only available in actions"),
    };
    // the data in hand are those of the rules' direction; the other channel is empty
    // and still open
    let mine = res == (t.ctx.dir == Dir::Response);
    let data: &[u8] = if mine { t.ctx.payload.unwrap_or_default() } else { &[] };
    let closed = mine && t.final_data;
    let s = |b: &[u8]| lua.create_string(b).map(Value::String);
    match m {
        b"input" | b"get_in_len" => one(Value::Integer(data.len() as i64)),
        // rampart's rules run before anything is forwarded
        b"output" | b"get_out_len" => one(Value::Integer(0)),
        b"may_recv" => one(Value::Boolean(!closed)),
        b"is_full" => {
            let full = super::settings().is_some_and(|st| data.len() >= st.cfg.global.bufsize);
            one(Value::Boolean(full))
        }
        b"dup" if data.is_empty() && closed => one(Value::Nil),
        b"dup" => one(s(data)?),
        b"data" => {
            let w = window(data, a, "data")?;
            if w.is_empty() && closed {
                return one(Value::Nil);
            }
            one(s(w)?)
        }
        b"line" => {
            let w = window(data, a, "line")?;
            if w.is_empty() && closed {
                return one(Value::Nil);
            }
            let end = w.iter().position(|&b| b == b'\n').map_or(w.len(), |i| i + 1);
            one(s(&w[..end])?)
        }
        _ => err(format!("Channel:{}() is not supported yet by rampart", String::from_utf8_lossy(m))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(data: &[u8], off: Option<i64>, len: Option<i64>) -> Result<Vec<u8>, String> {
        let mut a = vec![Value::Boolean(false)];
        a.extend(off.map(Value::Integer));
        if let Some(l) = len {
            if off.is_none() {
                a.push(Value::Integer(0));
            }
            a.push(Value::Integer(l));
        }
        window(data, &a, "data").map(<[u8]>::to_vec).map_err(|e| e.to_string())
    }

    #[test]
    fn offsets_and_lengths_read_as_haproxy() {
        assert_eq!(w(b"abcdef", None, None).unwrap(), b"abcdef");
        assert_eq!(w(b"abcdef", Some(2), None).unwrap(), b"cdef");
        assert_eq!(w(b"abcdef", Some(-2), None).unwrap(), b"ef");
        assert_eq!(w(b"abcdef", Some(-10), None).unwrap(), b"abcdef");
        assert_eq!(w(b"abcdef", Some(1), Some(2)).unwrap(), b"bc");
        assert_eq!(w(b"abcdef", Some(1), Some(-1)).unwrap(), b"bcdef");
        assert_eq!(w(b"abcdef", Some(4), Some(10)).unwrap(), b"ef");
        assert!(w(b"abc", Some(4), None).unwrap_err().contains("offset out of range."));
        assert!(w(b"abc", Some(0), Some(-2)).unwrap_err().contains("length out of range."));
    }
}
