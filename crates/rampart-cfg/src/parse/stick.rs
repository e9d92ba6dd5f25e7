//! `stick-table` and `stick` lines of proxies, and the arguments of the tracking
//! actions (`track-sc<n>`, `sc-inc-gpc0/1`, `sc-set-gpt0`) the rule parsers call.
//!
//! HAProxy counterparts: `parse_stick_table()`, `stktable_parse_type()` and the
//! track-sc parsers of src/stick_table.c; the `stick` branch of `cfg_parse_listen()`
//! (src/cfgparse-listen.c).

use std::time::Duration;

use crate::model::{
    DataType, ExprSrc, GptValue, ScAction, StickKeyType, StickKind, StickRule, StickTableDef, StoreSpec,
};

use super::ctx::Ctx;
use super::rule::{invalid, ActErr, ActResult, Args};
use super::value::{parse_time_ms, TimeError};
use super::{arg, not_yet};

/// `stick-table type <type> size <n> [expire <t>] [nopurge] [store <data>,...]`.
pub(crate) fn parse_stick_table(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.pb.px.stick_table.is_some() {
        cx.alert("'stick-table': only one stick-table per proxy is allowed.");
        return;
    }
    match table_def(words, cx.span) {
        Ok(def) => cx.pb.px.stick_table = Some(def),
        Err(msg) => cx.alert(msg),
    }
}

fn table_def(words: &[String], span: &crate::span::Span) -> Result<StickTableDef, String> {
    let kw = &words[0];
    let (mut key, mut size, mut expire, mut nopurge, mut store) = (None, 0u64, None, false, Vec::new());
    let mut i = 1;
    while i < words.len() {
        let w = words[i].as_str();
        let value = arg(words, i + 1);
        let missing = || format!("{kw}: missing argument after '{w}'.");
        match w {
            "size" => {
                if value.is_empty() {
                    return Err(missing());
                }
                size =
                    parse_size(value).map_err(|c| format!("{kw}: unexpected character '{c}' in argument of '{w}'."))?;
                i += 2;
            }
            "expire" => {
                if value.is_empty() {
                    return Err(missing());
                }
                expire = time_arg(kw, w, value)?;
                i += 2;
            }
            "nopurge" => {
                nopurge = true;
                i += 1;
            }
            "type" => {
                let (k, used) = key_type(words, i + 1).ok_or_else(|| format!("{kw}: unknown type '{value}'."))?;
                key = Some(k);
                i += 1 + used;
            }
            "store" => {
                store_list(kw, value, &mut store)?;
                i += 2;
            }
            "peers" | "srvkey" | "write-to" => return Err(not_yet(&format!("{kw} {w}"))),
            other => return Err(format!("{kw}: unknown argument '{other}'.")),
        }
    }
    if size == 0 {
        return Err(format!("{kw}: missing size."));
    }
    let key = key.ok_or_else(|| format!("{kw}: missing type."))?;
    store.sort_by_key(|s: &StoreSpec| s.data);
    Ok(StickTableDef { key, size, expire, nopurge, store, span: span.clone() })
}

/// HAProxy's `parse_size_err()`: digits then an optional `k`, `m` or `g` (powers of
/// 1024). `Err`: the first character it does not take.
fn parse_size(text: &str) -> Result<u64, char> {
    let end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let n: u64 = text[..end].parse().unwrap_or(0);
    let mut rest = text[end..].chars();
    let mult = match rest.next() {
        None => 1,
        Some('k' | 'K') => 1 << 10,
        Some('m' | 'M') => 1 << 20,
        Some('g' | 'G') => 1 << 30,
        Some(c) => return Err(c),
    };
    match rest.next() {
        Some(c) => Err(c),
        None => Ok(n.saturating_mul(mult).min(u64::from(u32::MAX))),
    }
}

fn time_arg(kw: &str, what: &str, value: &str) -> Result<Option<Duration>, String> {
    match parse_time_ms(value) {
        Ok(ms) if ms.trailing.is_none() => Ok(ms.duration()),
        Ok(ms) => Err(format!("{kw}: unexpected character '{}' in argument of '{what}'.", ms.trailing.unwrap_or(' '))),
        Err(TimeError::Overflow) => Err(format!(
            "{kw}: timer overflow in argument <{value}> to <{what}>, maximum value is 2147483647 ms (~24.8 days)."
        )),
        Err(TimeError::Underflow) => {
            Err(format!("{kw}: timer underflow in argument <{value}> to <{what}>, minimum non-null value is 1 ms."))
        }
        Err(TimeError::BadChar(c)) => Err(format!("{kw}: unexpected character '{c}' in argument of '{what}'.")),
    }
}

/// The key type at `words[at]` and how many words it took (`string len 64`: 3).
fn key_type(words: &[String], at: usize) -> Option<(StickKeyType, usize)> {
    let custom = |f: fn(u32) -> StickKeyType| match arg(words, at + 1) {
        "len" => {
            let n = super::value::atol(arg(words, at + 2));
            (n > 0).then(|| (f(u32::try_from(n).unwrap_or(u32::MAX)), 3))
        }
        _ => Some((f(32), 1)),
    };
    match arg(words, at) {
        "ip" => Some((StickKeyType::Ip, 1)),
        "ipv6" => Some((StickKeyType::Ipv6, 1)),
        "integer" => Some((StickKeyType::Integer, 1)),
        "string" => custom(StickKeyType::String),
        "binary" => custom(StickKeyType::Binary),
        _ => None,
    }
}

/// `store <data>[(<arg>)],...`: appends each item, refusing unknown ones and the
/// types rampart does not store yet.
fn store_list(kw: &str, list: &str, store: &mut Vec<StoreSpec>) -> Result<(), String> {
    let mut rest = list;
    while !rest.is_empty() {
        let (item, arg, tail) = split_store_item(kw, rest)?;
        rest = tail;
        let Some(data) = DataType::from_name(item) else {
            if DataType::NOT_YET.contains(&item) || item.starts_with("gpt") || item.starts_with("gpc") {
                return Err(not_yet(item));
            }
            return Err(format!("{kw}: unknown store option '{item}'."));
        };
        let period = match (data.is_rate(), arg) {
            (true, None) => return Err(format!("{kw}: missing argument to store option '{item}'.")),
            (false, Some(_)) => return Err(format!("{kw}: unexpected argument to store option '{item}'.")),
            (true, Some(a)) => Some(period_arg(kw, item, a)?),
            (false, None) => None,
        };
        if store.iter().any(|s| s.data == data) {
            // HAProxy warns and ignores the repeat; nothing to store twice
            continue;
        }
        store.push(StoreSpec { data, period });
    }
    Ok(())
}

/// One `name[(arg)]` item of a `store` list and what follows its comma.
fn split_store_item<'t>(kw: &str, text: &'t str) -> Result<(&'t str, Option<&'t str>, &'t str), String> {
    let stop = text.find([',', '(']).unwrap_or(text.len());
    let name = &text[..stop];
    if text[stop..].starts_with('(') {
        let close = text[stop..]
            .find(')')
            .ok_or_else(|| format!("{kw}: missing closing parenthesis after store option '{name}'."))?;
        let arg = &text[stop + 1..stop + close];
        let after = &text[stop + close + 1..];
        return Ok((name, Some(arg), after.strip_prefix(',').unwrap_or(after)));
    }
    let after = &text[stop..];
    Ok((name, None, after.strip_prefix(',').unwrap_or(after)))
}

fn period_arg(kw: &str, item: &str, a: &str) -> Result<Duration, String> {
    match parse_time_ms(a) {
        Ok(ms) if ms.trailing.is_none() && ms.ms > 0 => Ok(Duration::from_millis(u64::from(ms.ms))),
        _ => Err(format!("{kw}: error when processing store option '{item}'.")),
    }
}

// === stick rules ===

/// `stick on|match|store-request <pattern> [table <t>] [if|unless <cond>]`.
pub(crate) fn parse_stick(cx: &mut Ctx<'_>, words: &[String]) {
    let kind = match arg(words, 1) {
        "on" => StickKind::On,
        "match" => StickKind::Match,
        "store-request" | "store" => StickKind::StoreRequest,
        "store-response" => return cx.alert(not_yet("stick store-response")),
        _ => return cx.alert("'stick' expects 'on', 'match', or 'store'."),
    };
    let mut a = Args::new(words, 2, cx.span);
    let expr = match a.expr() {
        Ok(e) => e,
        Err(_) => return cx.alert("'stick' expects a fetch method."),
    };
    let table = if a.peek(0) == "table" {
        a.next();
        Some(a.next().to_owned())
    } else {
        None
    };
    let cond = match a.condition() {
        Ok(c) => c,
        Err(found) => return cx.alert(format!("'stick': unexpected argument '{found}'.")),
    };
    let span = cx.span.clone();
    cx.pb.px.stick_rules.push(StickRule { kind, expr, table, cond, span });
}

// === tracking actions ===

/// The counter slot of `track-sc<n>`, `sc-inc-gpc0(<n>)` ...: 0..=2.
fn slot(text: &str) -> Option<u8> {
    match text {
        "0" => Some(0),
        "1" => Some(1),
        "2" => Some(2),
        _ => None,
    }
}

/// `track-sc<n> <key> [table <t>]`, `word` being the action as written.
pub(crate) fn parse_track_sc(word: &str, a: &mut Args<'_>) -> ActResult<crate::model::TrackSc> {
    let Some(slot) = word.strip_prefix("track-sc").and_then(slot) else {
        return invalid(format!(
            "invalid stick table track ID '{word}'. The max allowed ID is 2 (tune.stick-counters)"
        ));
    };
    let key: ExprSrc = a.expr()?;
    let table = if a.peek(0) == "table" {
        a.next();
        match a.next() {
            "" => return invalid(format!("missing table name after 'table' in '{word}'")),
            t => Some(t.to_owned()),
        }
    } else {
        None
    };
    Ok(crate::model::TrackSc { slot, key, table })
}

/// `sc-inc-gpc0(<n>)`, `sc-inc-gpc1(<n>)`, `sc-set-gpt0(<n>) <int|expr>`.
pub(crate) fn parse_sc_action(word: &str, a: &mut Args<'_>) -> ActResult<ScAction> {
    let (name, rest) = word.split_once('(').unwrap_or((word, ""));
    let idx = rest.strip_suffix(')').and_then(slot);
    let Some(idx) = idx else {
        return invalid(format!("invalid stick table track ID in '{word}'. The max allowed ID is 2"));
    };
    Ok(match name {
        "sc-inc-gpc0" => ScAction::IncGpc0(idx),
        "sc-inc-gpc1" => ScAction::IncGpc1(idx),
        "sc-set-gpt0" => {
            let v = a.peek(0);
            if v.is_empty() {
                return invalid("missing value");
            }
            match v.parse::<i64>() {
                Ok(n) => {
                    a.next();
                    ScAction::SetGpt0(idx, GptValue::Int(n))
                }
                Err(_) => ScAction::SetGpt0(idx, GptValue::Expr(a.expr()?)),
            }
        }
        other => return Err(ActErr::NotYet(other.to_owned())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    fn def(s: &str) -> Result<StickTableDef, String> {
        table_def(&words(s), &crate::span::Span::default())
    }

    #[test]
    fn table_lines() {
        let d = def("stick-table type ip size 100k expire 30s store http_req_rate(10s),gpc0 store conn_cur").unwrap();
        assert_eq!((d.key, d.size, d.expire), (StickKeyType::Ip, 102400, Some(Duration::from_secs(30))));
        let names: Vec<_> = d.store.iter().map(|s| s.data.name()).collect();
        assert_eq!(names, ["gpc0", "conn_cur", "http_req_rate"]);
        assert_eq!(d.stores(DataType::HttpReqRate).unwrap().period, Some(Duration::from_secs(10)));
        let d = def("stick-table type string len 8 size 10 nopurge").unwrap();
        assert_eq!((d.key, d.nopurge, d.expire), (StickKeyType::String(8), true, None));
        assert_eq!(def("stick-table type binary size 1m").unwrap().key, StickKeyType::Binary(32));
    }

    #[test]
    fn table_errors() {
        assert_eq!(def("stick-table type ip").unwrap_err(), "stick-table: missing size.");
        assert_eq!(def("stick-table size 1").unwrap_err(), "stick-table: missing type.");
        assert_eq!(def("stick-table type foo size 1").unwrap_err(), "stick-table: unknown type 'foo'.");
        assert_eq!(
            def("stick-table type ip size 1x").unwrap_err(),
            "stick-table: unexpected character 'x' in argument of 'size'."
        );
        assert_eq!(
            def("stick-table type ip size 1 store foo").unwrap_err(),
            "stick-table: unknown store option 'foo'."
        );
        assert_eq!(
            def("stick-table type ip size 1 store http_req_rate").unwrap_err(),
            "stick-table: missing argument to store option 'http_req_rate'."
        );
        assert_eq!(
            def("stick-table type ip size 1 store gpc0(1)").unwrap_err(),
            "stick-table: unexpected argument to store option 'gpc0'."
        );
        assert_eq!(
            def("stick-table type ip size 1 store server_key").unwrap_err(),
            "'server_key' is not supported yet"
        );
        assert_eq!(def("stick-table type ip size 1 store gpc(2)").unwrap_err(), "'gpc' is not supported yet");
        assert_eq!(def("stick-table type ip size 1 peers p").unwrap_err(), "'stick-table peers' is not supported yet");
        assert_eq!(def("stick-table type ip size 1 bogus").unwrap_err(), "stick-table: unknown argument 'bogus'.");
    }

    #[test]
    fn sc_actions() {
        let w = words("sc-set-gpt0(1) 42");
        let span = crate::span::Span::default();
        let mut a = Args::new(&w, 1, &span);
        assert_eq!(parse_sc_action("sc-set-gpt0(1)", &mut a).unwrap(), ScAction::SetGpt0(1, GptValue::Int(42)));
        let mut a = Args::new(&w, 1, &span);
        assert_eq!(parse_sc_action("sc-inc-gpc0(2)", &mut a).unwrap(), ScAction::IncGpc0(2));
        assert!(parse_sc_action("sc-inc-gpc0(3)", &mut a).is_err());
    }
}
