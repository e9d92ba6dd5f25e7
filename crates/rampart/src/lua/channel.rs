//! `txn.req` and `txn.res` (the Channel class) in `tcp-request content` and
//! `tcp-response content` actions of TCP streams: reading the data in hand, changing it
//! ([`crate::action::chan::Chan`] holds the changes until the stream applies them),
//! forwarding it, sending data, and waiting for more.
//! HAProxy counterpart: `hlua_channel_*()` (src/hlua.c).
//!
//! A method that needs more data than there is (`data` or `line` with a length past
//! the input, `getline` without a line, `forward` past the input) returns [`MORE`]
//! while the inspection is not final: the prelude yields it, the stream reads more
//! (within the inspect delay) and resumes the script, which calls the method again,
//! as HAProxy's methods yield. On final data they give what is there.
//!
//! Partial: on the other direction's channel (`txn.res` in request rules), only
//! `send` writes (to the client, once the action returned); the other writes there,
//! and any write to `txn.req` in response rules, raise "not supported yet".

use mlua::{Lua, MultiValue, Value};

use super::cur::{On, TcpOn};
use crate::action::chan::Chan;
use crate::sample::ctx::Dir;

/// What a method returns to have the prelude yield for more data: the prelude's
/// `APPLET_IN` (the stream answers it by reading more and resuming the script).
pub(super) const MORE: &[u8] = b"\0rampart:in";

fn err<T>(msg: impl Into<String>) -> mlua::Result<T> {
    Err(mlua::Error::runtime(msg.into()))
}

fn one(v: Value) -> mlua::Result<MultiValue> {
    Ok(MultiValue::from_vec(vec![v]))
}

fn int_ret(n: i64) -> mlua::Result<MultiValue> {
    one(Value::Integer(n))
}

/// An integer argument (`luaL_checkinteger`), `n` its number counting the channel.
fn int(v: Option<&Value>, n: usize, what: &str) -> mlua::Result<i64> {
    match v {
        Some(Value::Integer(i)) => Ok(*i),
        Some(Value::Number(f)) if f.fract() == 0.0 => Ok(*f as i64),
        Some(Value::String(s)) => match s.to_str().ok().and_then(|s| s.trim().parse::<i64>().ok()) {
            Some(i) => Ok(i),
            None => err(format!("bad argument #{n} to '{what}' (number expected, got string)")),
        },
        other => {
            let got = other.map_or("no value", Value::type_name);
            err(format!("bad argument #{n} to '{what}' (number expected, got {got})"))
        }
    }
}

/// A string argument (`luaL_checklstring`: numbers are taken as their text).
fn string(v: Option<&Value>, n: usize, what: &str) -> mlua::Result<Vec<u8>> {
    match v {
        Some(Value::String(s)) => Ok(s.as_bytes().to_vec()),
        Some(Value::Integer(i)) => Ok(i.to_string().into_bytes()),
        Some(Value::Number(f)) => Ok(f.to_string().into_bytes()),
        other => {
            let got = other.map_or("no value", Value::type_name);
            err(format!("bad argument #{n} to '{what}' (string expected, got {got})"))
        }
    }
}

/// HAProxy's `check_args()`: exactly `n` arguments, the channel included.
fn nargs(a: &[Value], n: usize, what: &str) -> mlua::Result<()> {
    if a.len() == n {
        return Ok(());
    }
    err(format!("'{what}' needs {n} arguments"))
}

/// An offset into `input` bytes (argument `n`): negative from the end (down to 0),
/// past the end an error.
fn offset(v: Option<&Value>, n: usize, input: usize, what: &str) -> mlua::Result<usize> {
    let mut off = int(v, n, what)?;
    if off < 0 {
        off = (input as i64 + off).max(0);
    }
    if off > input as i64 {
        return err("offset out of range.");
    }
    Ok(off as usize)
}

/// The span `data(offset, length)` and `line(offset, length)` want: the offset, the
/// length, and whether it may be longer than the input (an explicit length, -1
/// being the buffer's size, as HAProxy's).
fn span(a: &[Value], input: usize, size: usize, what: &str) -> mlua::Result<(usize, usize)> {
    if a.len() > 3 {
        return err(format!("'{what}' expects at most 2 arguments"));
    }
    let off = if a.len() > 1 { offset(a.get(1), 2, input, what)? } else { 0 };
    let mut len = input - off;
    if a.len() == 3 {
        len = match int(a.get(2), 3, what)? {
            -1 => size,
            l if l < 0 => return err("length out of range."),
            l => l as usize,
        };
    }
    Ok((off, len))
}

/// The span `set(s, offset, length)` and `remove(offset, length)` change (arguments
/// from `first`): it must lie within the input.
fn edit_span(a: &[Value], first: usize, input: usize, what: &str) -> mlua::Result<(usize, usize)> {
    let off = if a.len() > first { offset(a.get(first), first + 1, input, what)? } else { 0 };
    let mut len = input - off;
    if a.len() > first + 1 {
        len = match int(a.get(first + 1), first + 2, what)? {
            -1 => input - off,
            l if l < 0 || off + l as usize > input => return err("length out of range."),
            l => l as usize,
        };
    }
    Ok((off, len))
}

/// Runs Channel method `m` (`a[0]` stands for the channel: true for the response one).
pub(super) fn call(lua: &Lua, on: &mut On<'_, '_, '_, '_>, m: &[u8], a: &[Value]) -> mlua::Result<MultiValue> {
    let res = a.first().and_then(Value::as_boolean) == Some(true);
    if m == b"is_resp" {
        return one(Value::Boolean(res));
    }
    let t: &mut TcpOn<'_> = match on {
        On::Tcp(t) if !t.http => t,
        On::Tcp(_) | On::Rule { .. } => return err("Cannot manipulate HAProxy channels in HTTP mode."),
        _ => return err("txn.req and txn.res are only available in actions"),
    };
    // the data in hand are those of the rules' direction
    if res == (t.ctx.dir == Dir::Response) {
        own(lua, t, m, a)
    } else {
        other(lua, t, m, a, res)
    }
}

/// A method on the channel of the rules' direction.
fn own(lua: &Lua, t: &mut TcpOn<'_>, m: &[u8], a: &[Value]) -> mlua::Result<MultiValue> {
    let size = super::settings().map_or(16384, |st| st.cfg.global.bufsize);
    let orig = t.orig;
    let closed = t.final_data;
    let more = t.can_wait;
    let mut fallback = Chan::new(size);
    let writable = t.chan.is_some();
    let chan: &mut Chan = t.chan.as_deref_mut().unwrap_or(&mut fallback);
    let s = |b: &[u8]| lua.create_string(b).map(Value::String);
    let wait = || one(Value::String(lua.create_string(MORE)?));
    let name = String::from_utf8_lossy(m).into_owned();
    let input = chan.input(orig).len();
    match m {
        b"input" | b"get_in_len" => int_ret(input as i64),
        b"output" | b"get_out_len" => int_ret(chan.output() as i64),
        b"may_recv" => one(Value::Boolean(!closed)),
        b"is_full" => one(Value::Boolean(input >= size)),
        b"dup" | b"get" if input == 0 && closed => one(Value::Nil),
        b"dup" => one(s(chan.input(orig))?),
        b"data" | b"line" => {
            let (off, mut len) = span(a, input, size, &name)?;
            let w = &chan.input(orig)[off..];
            if m == b"line" {
                if let Some(i) = w.iter().take(len).position(|&b| b == b'\n') {
                    return one(s(&w[..=i])?);
                }
            }
            if len > w.len() {
                if more {
                    return wait();
                }
                len = w.len();
            }
            one(s(&w[..len])?)
        }
        _ if !writable => err(format!("Channel:{name}() is not supported yet by rampart here")),
        b"get" => {
            let got = s(chan.input(orig))?;
            chan.remove(orig, 0, input);
            one(got)
        }
        b"getline" => {
            if input == 0 && closed {
                return one(Value::Nil);
            }
            let len = match chan.input(orig).iter().position(|&b| b == b'\n') {
                Some(i) => i + 1,
                None if more => return wait(),
                None => input,
            };
            let got = s(&chan.input(orig)[..len])?;
            chan.remove(orig, 0, len);
            one(got)
        }
        // COMPAT: as HAProxy 2.6's code (its documentation says "at the end"),
        // `append` copies the string in front of the input, as `prepend` does
        b"append" | b"prepend" => {
            nargs(a, 2, &name)?;
            let data = string(a.get(1), 2, &name)?;
            int_ret(chan.insert(orig, 0, &data))
        }
        b"insert" => {
            if !(2..=3).contains(&a.len()) {
                return err("'insert' expects at least 1 argument and at most 2 arguments");
            }
            let data = string(a.get(1), 2, &name)?;
            let off = if a.len() > 2 { offset(a.get(2), 3, input, &name)? } else { input };
            int_ret(chan.insert(orig, off, &data))
        }
        b"set" => {
            if !(2..=4).contains(&a.len()) {
                return err("'set' expects at least 1 argument and at most 3 arguments");
            }
            let data = string(a.get(1), 2, &name)?;
            let (off, len) = edit_span(a, 2, input, &name)?;
            int_ret(chan.set(orig, off, len, &data))
        }
        b"remove" => {
            if a.len() > 3 {
                return err("'remove' expects at most 2 arguments");
            }
            let (off, len) = edit_span(a, 1, input, &name)?;
            chan.remove(orig, off, len);
            int_ret(len as i64)
        }
        b"send" => {
            nargs(a, 2, &name)?;
            let data = string(a.get(1), 2, &name)?;
            int_ret(chan.send(orig, &data) as i64)
        }
        b"forward" => {
            nargs(a, 2, &name)?;
            let want = int(a.get(1), 2, &name)?.max(0) as usize;
            let moved = chan.forward(orig, want);
            if moved < want && more {
                let token = lua.create_string(MORE)?;
                return Ok(MultiValue::from_vec(vec![Value::String(token), Value::Integer(moved as i64)]));
            }
            int_ret(moved as i64)
        }
        _ => err(format!("Channel:{name}() is not supported yet by rampart")),
    }
}

/// A method on the other direction's channel: it holds no data while these rules run
/// (the response has not started, or the request went); `send` on the response
/// channel in request rules queues data for the client.
fn other(lua: &Lua, t: &mut TcpOn<'_>, m: &[u8], a: &[Value], res: bool) -> mlua::Result<MultiValue> {
    let name = String::from_utf8_lossy(m).into_owned();
    let queued = t.chan.as_deref().map_or(0, |c| c.back.len());
    match m {
        b"input" | b"get_in_len" => int_ret(0),
        b"output" | b"get_out_len" => int_ret(queued as i64),
        b"may_recv" => one(Value::Boolean(true)),
        b"is_full" => one(Value::Boolean(false)),
        b"dup" | b"data" | b"line" | b"get" | b"getline" => one(Value::String(lua.create_string(b"")?)),
        b"send" if res => {
            nargs(a, 2, &name)?;
            let data = string(a.get(1), 2, &name)?;
            match t.chan.as_deref_mut() {
                Some(c) => {
                    c.back.extend_from_slice(&data);
                    int_ret(data.len() as i64)
                }
                None => err("Channel:send() is not supported yet by rampart here"),
            }
        }
        _ => err(format!(
            "Channel:{name}() on the {} channel in {} rules is not supported yet by rampart",
            if res { "response" } else { "request" },
            if res { "request" } else { "response" }
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[i64]) -> Vec<Value> {
        let mut a = vec![Value::Boolean(false)];
        a.extend(v.iter().map(|&i| Value::Integer(i)));
        a
    }

    fn sp(input: usize, v: &[i64]) -> Result<(usize, usize), String> {
        span(&args(v), input, 100, "data").map_err(|e| e.to_string())
    }

    #[test]
    fn offsets_and_lengths_read_as_haproxy() {
        assert_eq!(sp(6, &[]).unwrap(), (0, 6));
        assert_eq!(sp(6, &[2]).unwrap(), (2, 4));
        assert_eq!(sp(6, &[-2]).unwrap(), (4, 2));
        assert_eq!(sp(6, &[-10]).unwrap(), (0, 6));
        assert_eq!(sp(6, &[1, 2]).unwrap(), (1, 2));
        // -1: as much as the buffer holds (so the caller waits for more)
        assert_eq!(sp(6, &[1, -1]).unwrap(), (1, 100));
        assert_eq!(sp(6, &[4, 10]).unwrap(), (4, 10));
        assert!(sp(3, &[4]).unwrap_err().contains("offset out of range."));
        assert!(sp(3, &[0, -2]).unwrap_err().contains("length out of range."));
        assert!(sp(3, &[0, 1, 2]).unwrap_err().contains("'data' expects at most 2 arguments"));
    }

    #[test]
    fn edits_stay_within_the_input() {
        let e = |v: &[i64]| edit_span(&args(v), 1, 6, "remove").map_err(|e| e.to_string());
        assert_eq!(e(&[]).unwrap(), (0, 6));
        assert_eq!(e(&[2]).unwrap(), (2, 4));
        assert_eq!(e(&[2, -1]).unwrap(), (2, 4));
        assert_eq!(e(&[-1, 1]).unwrap(), (5, 1));
        assert!(e(&[2, 5]).unwrap_err().contains("length out of range."));
    }

    #[test]
    fn the_wait_token_is_the_preludes() {
        let prelude = include_str!("prelude.lua");
        let token = String::from_utf8_lossy(MORE).replace('\0', "\\0");
        assert!(prelude.contains(&format!("local APPLET_IN = \"{token}\"")));
    }
}
