//! `stick-table` and `stick` lines of proxies, and the arguments of the tracking
//! actions (`track-sc<n>`, `sc-inc-gpc0/1`, `sc-inc-gpc`, `sc-set-gpt0`, `sc-set-gpt`)
//! the rule parsers call.
//!
//! HAProxy counterparts: `parse_stick_table()`, `stktable_parse_type()` and the
//! track-sc parsers of src/stick_table.c; the `stick` branch of `cfg_parse_listen()`
//! (src/cfgparse-listen.c).

use std::time::Duration;

use crate::model::{
    DataType, ExprSrc, GptValue, ScAction, SrvKey, StickKeyType, StickKind, StickRule, StickTableDef, StoreSpec,
};

use super::arg;
use super::ctx::Ctx;
use super::rule::{invalid, ActErr, ActResult, Args};
use super::value::{parse_time_ms, TimeError};

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

/// A `table <name> ...` line of a `peers` section (`words` without the name): as a
/// `stick-table` line, but without `peers`.
pub(crate) fn table_def_in_peers(words: &[String], span: &crate::span::Span) -> Result<StickTableDef, String> {
    if words.iter().any(|w| w == "peers") {
        return Err(format!("{}: unknown argument 'peers'.", words[0]));
    }
    table_def(words, span)
}

fn table_def(words: &[String], span: &crate::span::Span) -> Result<StickTableDef, String> {
    let kw = &words[0];
    let (mut key, mut size, mut expire, mut nopurge, mut store) = (None, 0u64, None, false, Vec::new());
    let mut peers = None;
    let mut srvkey = SrvKey::Name;
    let mut write_to = None;
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
            "peers" => {
                if value.is_empty() {
                    return Err(missing());
                }
                peers = Some(value.to_owned());
                i += 2;
            }
            "srvkey" => {
                srvkey = match value {
                    "name" => SrvKey::Name,
                    "addr" => SrvKey::Addr,
                    _ => return Err(format!("{kw} : unknown server key type '{value}'.")),
                };
                i += 2;
            }
            "write-to" => {
                if value.is_empty() {
                    return Err(format!("{kw} : write-to requires table name."));
                }
                write_to = Some(value.to_owned());
                i += 2;
            }
            other => return Err(format!("{kw}: unknown argument '{other}'.")),
        }
    }
    if size == 0 {
        return Err(format!("{kw}: missing size."));
    }
    let key = key.ok_or_else(|| format!("{kw}: missing type."))?;
    store.sort_by_key(|s: &StoreSpec| s.data);
    Ok(StickTableDef { key, size, expire, nopurge, store, peers, srvkey, write_to, span: span.clone() })
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
/// types rampart does not store yet, then HAProxy's checks that an array does not
/// sit beside the legacy types it overrides.
fn store_list(kw: &str, list: &str, store: &mut Vec<StoreSpec>) -> Result<(), String> {
    let mut rest = list;
    while !rest.is_empty() {
        let (item, arg, tail) = split_store_item(kw, rest)?;
        rest = tail;
        let Some(data) = DataType::from_name(item) else {
            return Err(format!("{kw}: unknown store option '{item}'."));
        };
        let spec = store_item(kw, item, data, arg)?;
        if store.iter().any(|s| s.data == data) {
            // HAProxy warns and ignores the repeat; nothing to store twice
            continue;
        }
        store.push(spec);
    }
    overrides(kw, store)
}

/// One item's arguments: an array's element count first (`gpc_rate(<nb>,<period>)`),
/// then a rate's period.
fn store_item(kw: &str, item: &str, data: DataType, arg: Option<&str>) -> Result<StoreSpec, String> {
    let missing = || format!("{kw}: missing argument to store option '{item}'.");
    let (first, second) = match arg {
        Some(a) => a.split_once(',').map_or((Some(a), None), |(x, y)| (Some(x), Some(y))),
        None => (None, None),
    };
    let (nb, sa) = if data.is_array() {
        let n = super::value::atol(first.ok_or_else(missing)?);
        if !(1..=i64::from(DataType::MAX_ARRAY)).contains(&n) {
            return Err(format!(
                "{kw}: array size is out of allowed range (1-{}) for store option '{item}'.",
                DataType::MAX_ARRAY
            ));
        }
        (n as u8, second)
    } else {
        (1, first)
    };
    let period = match (data.is_rate(), sa) {
        (true, None) => return Err(missing()),
        (false, Some(_)) => return Err(format!("{kw}: unexpected argument to store option '{item}'.")),
        (true, Some(a)) => Some(period_arg(kw, item, a)?),
        (false, None) => None,
    };
    Ok(StoreSpec { data, period, nb })
}

/// An array type overrides the legacy types of the same family: both in one table
/// is an error.
fn overrides(kw: &str, store: &[StoreSpec]) -> Result<(), String> {
    let has = |d: DataType| store.iter().any(|s| s.data == d);
    let both = |arr: DataType, legacy: &[DataType]| has(arr) && legacy.iter().any(|&d| has(d));
    if both(DataType::Gpt, &[DataType::Gpt0]) {
        return Err(format!(
            "{kw}: simultaneous usage of 'gpt' and 'gpt0' in a same table is not permitted as 'gpt' overrides 'gpt0'."
        ));
    }
    if both(DataType::Gpc, &[DataType::Gpc0, DataType::Gpc1]) {
        return Err(format!(
            "{kw}: simultaneous usage of 'gpc' and 'gpc[0/1]' in a same table is not permitted as 'gpc' overrides 'gpc[0/1]'."
        ));
    }
    if both(DataType::GpcRate, &[DataType::Gpc0Rate, DataType::Gpc1Rate]) {
        return Err(format!(
            "{kw}: simultaneous usage of 'gpc_rate' and 'gpc[0/1]_rate' in a same table is not permitted as 'gpc_rate' \
             overrides 'gpc[0/1]_rate'."
        ));
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

/// `stick on|match|store-request|store-response <pattern> [table <t>] [if|unless <cond>]`.
pub(crate) fn parse_stick(cx: &mut Ctx<'_>, words: &[String]) {
    let kind = match arg(words, 1) {
        "on" => StickKind::On,
        "match" => StickKind::Match,
        "store-request" | "store" => StickKind::StoreRequest,
        "store-response" => StickKind::StoreResponse,
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

/// `sc-inc-gpc0[(<n>)]`, `sc-inc-gpc1[(<n>)]`, `sc-set-gpt0[(<n>)] <int|expr>` (slot 0
/// when not given), `sc-inc-gpc(<idx>,<n>)`, `sc-set-gpt(<idx>,<n>) <int|expr>`; `word`
/// is the action as written. HAProxy's `parse_inc_gpc()`, `parse_set_gpt()`.
pub(crate) fn parse_sc_action(word: &str, a: &mut Args<'_>) -> ActResult<ScAction> {
    if let Some(rest) = word.strip_prefix("sc-inc-gpc") {
        return Ok(match rest.as_bytes().first() {
            Some(b'(') => {
                let (idx, slot) = idx_slot(word, &rest[1..], "sc-inc-gpc(<GPC ID>,<Track ID>)", "gpc")?;
                ScAction::IncGpc { idx, slot }
            }
            Some(b'0') => ScAction::IncGpc0(legacy_slot(word, &rest[1..], false)?),
            Some(b'1') => ScAction::IncGpc1(legacy_slot(word, &rest[1..], false)?),
            _ => return invalid(format!("invalid gpc ID '{word}'. Expects sc-inc-gpc(<GPC ID>,<Track ID>)")),
        });
    }
    let rest = word.strip_prefix("sc-set-gpt").unwrap_or_default();
    match rest.as_bytes().first() {
        Some(b'(') => {
            let (idx, slot) = idx_slot(word, &rest[1..], "sc-set-gpt(<GPT ID>,<Track ID>)", "gpt")?;
            Ok(ScAction::SetGpt { idx, slot, value: gpt_value(a)? })
        }
        Some(b'0') => {
            let slot = legacy_slot(word, &rest[1..], true)?;
            Ok(ScAction::SetGpt0(slot, gpt_value(a)?))
        }
        _ => invalid(format!("invalid gpt ID '{word}'. Expects sc-set-gpt(<GPT ID>,<Track ID>)")),
    }
}

/// `<idx>,<n>)` of the array forms.
fn idx_slot(word: &str, text: &str, expects: &str, what: &str) -> ActResult<(u32, u8)> {
    let Some((idx, sc)) = text.split_once(',') else {
        return invalid(format!("Missing {what} ID '{word}'. Expects {expects}"));
    };
    let idx =
        idx.parse::<u32>().map_err(|_| ActErr::Invalid(format!("Missing {what} ID '{word}'. Expects {expects}")))?;
    let Some(sc) = sc.strip_suffix(')').filter(|s| s.bytes().all(|b| b.is_ascii_digit()) && !s.is_empty()) else {
        return invalid(format!("invalid stick table track ID '{word}'. Expects {expects}"));
    };
    match slot(sc) {
        Some(n) => Ok((idx, n)),
        None => invalid(format!("invalid stick table track ID '{word}'. The max allowed ID is 2")),
    }
}

/// The `(<n>)` after `sc-inc-gpc0`/`1` or `sc-set-gpt0`: slot 0 when absent.
fn legacy_slot(word: &str, text: &str, gpt: bool) -> ActResult<u8> {
    if text.is_empty() {
        return Ok(0);
    }
    let expects = |w: &str| {
        if gpt {
            format!("invalid stick table track ID '{w}'. Expects sc-set-gpt0(<Track ID>)")
        } else {
            format!("invalid stick table track ID. Expects {w}(<Track ID>)")
        }
    };
    let Some(n) = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) else {
        return invalid(expects(word));
    };
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return invalid(expects(word));
    }
    match slot(n) {
        Some(n) => Ok(n),
        None if gpt => invalid(format!("invalid stick table track ID '{word}'. The max allowed ID is 2")),
        None => invalid("invalid stick table track ID. The max allowed ID is 2"),
    }
}

/// The value `sc-set-gpt0`/`sc-set-gpt` store: an integer, else an expression.
fn gpt_value(a: &mut Args<'_>) -> ActResult<GptValue> {
    let v = a.peek(0);
    if v.is_empty() {
        return invalid("missing value");
    }
    match v.parse::<i64>() {
        Ok(n) => {
            a.next();
            Ok(GptValue::Int(n))
        }
        Err(_) => Ok(GptValue::Expr(a.expr()?)),
    }
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
        let d = def("stick-table type ip size 1 store gpc_rate(3,1s),gpt(2),gpc0").unwrap();
        let got: Vec<_> = d.store.iter().map(|s| (s.data.name(), s.nb, s.period)).collect();
        assert_eq!(got, [("gpc0", 1, None), ("gpt", 2, None), ("gpc_rate", 3, Some(Duration::from_secs(1)))]);
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
        assert!(def("stick-table type ip size 1 store server_key").unwrap().stores(DataType::ServerKey).is_some());
        assert_eq!(
            def("stick-table type ip size 1 store gpc(101)").unwrap_err(),
            "stick-table: array size is out of allowed range (1-100) for store option 'gpc'."
        );
        assert_eq!(
            def("stick-table type ip size 1 store gpc").unwrap_err(),
            "stick-table: missing argument to store option 'gpc'."
        );
        assert_eq!(
            def("stick-table type ip size 1 store gpc_rate(2)").unwrap_err(),
            "stick-table: missing argument to store option 'gpc_rate'."
        );
        assert!(def("stick-table type ip size 1 store gpc(2),gpc1")
            .unwrap_err()
            .contains("'gpc' overrides 'gpc[0/1]'"));
        assert_eq!(def("stick-table type ip size 1 peers p").unwrap().peers.as_deref(), Some("p"));
        assert_eq!(def("stick-table type ip size 1 srvkey addr").unwrap().srvkey, SrvKey::Addr);
        assert_eq!(def("stick-table type ip size 1").unwrap().srvkey, SrvKey::Name);
        assert_eq!(
            def("stick-table type ip size 1 srvkey port").unwrap_err(),
            "stick-table : unknown server key type 'port'."
        );
        assert_eq!(def("stick-table type ip size 1 write-to t").unwrap().write_to.as_deref(), Some("t"));
        assert_eq!(
            def("stick-table type ip size 1 write-to").unwrap_err(),
            "stick-table : write-to requires table name."
        );
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
        assert_eq!(parse_sc_action("sc-inc-gpc1", &mut a).unwrap(), ScAction::IncGpc1(0));
        assert_eq!(parse_sc_action("sc-inc-gpc(7,2)", &mut a).unwrap(), ScAction::IncGpc { idx: 7, slot: 2 });
        let mut a = Args::new(&w, 1, &span);
        assert_eq!(
            parse_sc_action("sc-set-gpt(3,1)", &mut a).unwrap(),
            ScAction::SetGpt { idx: 3, slot: 1, value: GptValue::Int(42) }
        );
        let e = |w: &str| match parse_sc_action(w, &mut Args::new(&words("x 1"), 1, &span)) {
            Err(ActErr::Invalid(m)) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(e("sc-inc-gpc(1)"), "Missing gpc ID 'sc-inc-gpc(1)'. Expects sc-inc-gpc(<GPC ID>,<Track ID>)");
        assert_eq!(e("sc-inc-gpc(1,5)"), "invalid stick table track ID 'sc-inc-gpc(1,5)'. The max allowed ID is 2");
        assert_eq!(e("sc-inc-gpcx"), "invalid gpc ID 'sc-inc-gpcx'. Expects sc-inc-gpc(<GPC ID>,<Track ID>)");
        assert_eq!(e("sc-set-gpt0(9)"), "invalid stick table track ID 'sc-set-gpt0(9)'. The max allowed ID is 2");
    }
}
