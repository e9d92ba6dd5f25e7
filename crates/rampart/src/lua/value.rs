//! Samples to Lua values and back. HAProxy counterpart: `hlua_smp2lua()`,
//! `hlua_smp2lua_str()`, `hlua_lua2smp()` (src/hlua.c).

use std::borrow::Cow;

use mlua::{Lua, Value};

use crate::sample::Sample;

/// A sample as a Lua value (`str`: always a string, as `txn.sf` returns).
pub(crate) fn to_lua(lua: &Lua, smp: Option<Sample<'_>>, str_only: bool) -> mlua::Result<Value> {
    let Some(smp) = smp else {
        return if str_only { Ok(Value::String(lua.create_string("")?)) } else { Ok(Value::Nil) };
    };
    if str_only {
        let text: Cow<'_, [u8]> = match &smp {
            Sample::Str(b) | Sample::Bin(b) | Sample::Meth(_, b) => Cow::Borrowed(&b[..]),
            Sample::Bool(b) => Cow::Owned(if *b { b"1".to_vec() } else { b"0".to_vec() }),
            Sample::Sint(i) => Cow::Owned(i.to_string().into_bytes()),
            Sample::Ipv4(a) => Cow::Owned(a.to_string().into_bytes()),
            Sample::Ipv6(a) => Cow::Owned(a.to_string().into_bytes()),
        };
        return Ok(Value::String(lua.create_string(&*text)?));
    }
    Ok(match smp {
        Sample::Bool(b) => Value::Boolean(b),
        Sample::Sint(i) => Value::Integer(i),
        Sample::Ipv4(a) => Value::String(lua.create_string(a.to_string())?),
        Sample::Ipv6(a) => Value::String(lua.create_string(a.to_string())?),
        Sample::Str(b) | Sample::Bin(b) | Sample::Meth(_, b) => Value::String(lua.create_string(&*b)?),
    })
}

/// A Lua value as a sample: `nil` (and tables, functions ...) as no sample.
pub(crate) fn from_lua(v: &Value) -> Option<Sample<'static>> {
    Some(match v {
        Value::Boolean(b) => Sample::Bool(*b),
        Value::Integer(i) => Sample::Sint(*i),
        Value::Number(n) if n.fract() == 0.0 && n.abs() < 9.2e18 => Sample::Sint(*n as i64),
        Value::Number(n) => Sample::Str(Cow::Owned(n.to_string().into_bytes())),
        Value::String(s) => Sample::Str(Cow::Owned(s.as_bytes().to_vec())),
        _ => return None,
    })
}

/// A Lua value as bytes (`tostring` for numbers and booleans), for header values and
/// names.
pub(crate) fn bytes(v: &Value) -> Option<Vec<u8>> {
    Some(match v {
        Value::String(s) => s.as_bytes().to_vec(),
        Value::Integer(i) => i.to_string().into_bytes(),
        Value::Number(n) => n.to_string().into_bytes(),
        Value::Boolean(b) => b.to_string().into_bytes(),
        _ => return None,
    })
}
