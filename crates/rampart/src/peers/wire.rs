//! A stick table as the peers protocol sees it: its definition (key type and size,
//! stored types with their parameters), an entry as an update, an update applied to
//! an entry. HAProxy counterpart: the table side of `peer_prepare_switchmsg()`,
//! `peer_prepare_updatemsg()` and `peer_treat_updatemsg()` (src/peers.c).

use rampart_cfg::model::{DataType, StickKeyType};
use rampart_proto::peers::table::{self as wt, key_type, KeyKind, Param, Shape, Value, DATA_TYPES};

pub use super::types::DictCache;
use crate::stick::data::Row;
use crate::stick::table::EntryView;
use crate::stick::{Key, StickTable};

/// HAProxy's number of data type `d` (`STKTABLE_DT_*`: the same order).
pub fn type_bit(d: DataType) -> usize {
    DataType::ALL.iter().position(|&x| x == d).unwrap_or(0)
}

/// The data type of HAProxy's number `n`.
pub fn bit_type(n: usize) -> Option<DataType> {
    DataType::ALL.get(n).copied()
}

/// The key size HAProxy gives the table (`key_size`: a string's `len` plus its
/// terminator, 32 without `len`).
/// COMPAT: rampart does not tell `string len 32` from a plain `string`; both are sent
/// as HAProxy's default (32).
pub fn key_size(t: StickKeyType) -> u64 {
    match t {
        StickKeyType::Ip | StickKeyType::Integer => 4,
        StickKeyType::Ipv6 => 16,
        StickKeyType::String(32) => 32,
        StickKeyType::String(n) => u64::from(n) + 1,
        StickKeyType::Binary(n) => u64::from(n),
    }
}

/// How keys of table type `t` travel.
pub fn key_kind(t: StickKeyType) -> KeyKind {
    match t {
        StickKeyType::Ip => KeyKind::Fixed(4),
        StickKeyType::Ipv6 => KeyKind::Fixed(16),
        StickKeyType::Integer => KeyKind::Int,
        StickKeyType::String(_) => KeyKind::String { size: key_size(t) as usize },
        StickKeyType::Binary(n) => KeyKind::Fixed(n as usize),
    }
}

fn wire_key_type(t: StickKeyType) -> u64 {
    match t {
        StickKeyType::Ip => key_type::IPV4,
        StickKeyType::Ipv6 => key_type::IPV6,
        StickKeyType::Integer => key_type::SINT,
        StickKeyType::String(_) => key_type::STRING,
        StickKeyType::Binary(_) => key_type::BINARY,
    }
}

/// The definition of table `t`.
pub fn shape(t: &StickTable) -> Shape {
    let mut s = Shape {
        key_type: wire_key_type(t.key_type),
        key_len: key_size(t.key_type),
        data: 0,
        expire: Some(u64::from(t.expire.unwrap_or(0))),
        params: [Param::default(); DATA_TYPES],
    };
    for d in t.layout.stored() {
        let n = type_bit(d);
        s.data |= 1 << n;
        s.params[n] = Param { nbelem: t.layout.elements(d) as u64, period: u64::from(t.layout.period(d)) };
    }
    s
}

/// Whether a node's definition `s` describes the same keys as table `t` (otherwise
/// its updates are ignored, as HAProxy does).
pub fn same_keys(t: &StickTable, s: &Shape) -> bool {
    s.key_type == wire_key_type(t.key_type) && s.key_len == key_size(t.key_type)
}

/// The key as an update carries it.
pub fn key_bytes(k: &Key, out: &mut Vec<u8>) {
    match k {
        Key::Ip4(a) => out.extend_from_slice(a),
        Key::Ip6(a) => out.extend_from_slice(a),
        Key::Int(n) => out.extend_from_slice(&n.to_be_bytes()),
        Key::Bytes(b) => out.extend_from_slice(b),
    }
}

/// The key of an update, for a table of type `t`.
pub fn key_from(t: StickKeyType, b: &[u8]) -> Key {
    match t {
        StickKeyType::String(_) => {
            // a string ends at its first NUL
            let end = memchr_nul(b);
            Key::from_bytes(t, &b[..end])
        }
        _ => Key::from_bytes(t, b),
    }
}

fn memchr_nul(b: &[u8]) -> usize {
    b.iter().position(|&c| c == 0).unwrap_or(b.len())
}

/// The values of entry `row` in type order, as an update carries them; `keep` holds
/// the `server_key` string the values borrow.
pub fn values<'a>(
    t: &StickTable,
    row: &Row,
    now: u32,
    dict: &mut DictCache,
    keep: &'a mut Option<std::sync::Arc<str>>,
) -> Vec<Value<'a>> {
    let l = &t.layout;
    let mut out = Vec::new();
    let mut key_slot = None;
    for d in l.stored() {
        for idx in 0..l.elements(d) {
            let Some(c) = l.cell(d, idx) else { break };
            if d == DataType::ServerKey {
                let id = row.get_cell(c, now);
                match crate::stick::dict::value(id) {
                    None => out.push(Value::Dict(None)),
                    Some(s) => {
                        let (slot, full) = dict.slot_to_send(id);
                        if full {
                            *keep = Some(s);
                        }
                        key_slot = Some(out.len());
                        out.push(Value::Dict(Some((slot, None))));
                    }
                }
                continue;
            }
            out.push(if d.is_rate() {
                let (tick, curr, prev) = row.freq_raw(c);
                Value::Freq { elapsed: u64::from(now.wrapping_sub(tick)), curr: u64::from(curr), prev: u64::from(prev) }
            } else if d == DataType::ServerId {
                Value::Int(i64::from(row.get_cell(c, now) as u32 as i32) as u64)
            } else {
                Value::Int(row.get_cell(c, now))
            });
        }
    }
    let keep: &'a Option<std::sync::Arc<str>> = keep;
    if let (Some(at), Some(s)) = (key_slot, keep.as_deref()) {
        if let Value::Dict(Some((slot, _))) = out[at] {
            out[at] = Value::Dict(Some((slot, Some(s.as_bytes()))));
        }
    }
    out
}

/// Appends the update of entry `e` (`id`: the update number sent; `timed`: with its
/// expiry, as a full resync sends them).
pub fn encode_entry(t: &StickTable, e: &EntryView, id: u32, timed: bool, dict: &mut DictCache, out: &mut Vec<u8>) {
    let mut key = Vec::with_capacity(16);
    key_bytes(&e.key, &mut key);
    let mut keep = None;
    let vals = values(t, &e.row, crate::stick::now_ms(), dict, &mut keep);
    let expire = timed.then(|| u32::try_from(e.exp_in).unwrap_or(0));
    wt::encode_update(Some(id), expire, key_kind(t.key_type), &key, &vals, out);
}

/// Applies the values of an update to entry `row` of table `t`: the types both sides
/// store, but `conn_cur` (each node counts its own connections).
pub fn apply(t: &StickTable, row: &Row, values: &[(u8, u32, Value<'_>)], now: u32, dict: &mut DictCache) {
    let l = &t.layout;
    for &(n, idx, v) in values {
        let n = usize::from(n);
        if n == wt::CONN_CUR {
            continue;
        }
        let Some(d) = bit_type(n).filter(|&d| l.stores(d)) else { continue };
        let Some(c) = l.cell(d, idx as usize) else { continue };
        match v {
            Value::Int(x) if d == DataType::ServerId => row.set_cell(c, u64::from(x as u32), now),
            Value::Int(x) if d.is_rate() => row.set_cell(c, x, now),
            Value::Int(x) => row.set_cell(c, x, now),
            Value::Freq { elapsed, curr, prev } if d.is_rate() => {
                let tick = now.wrapping_sub(elapsed as u32);
                row.set_freq_raw(c, tick, curr as u32, prev as u32);
            }
            Value::Dict(Some((slot, v))) if d == DataType::ServerKey => row.set_cell(c, dict.received(slot, v), now),
            Value::Dict(None) if d == DataType::ServerKey => row.set_cell(c, 0, now),
            Value::Freq { .. } | Value::Dict(_) => {}
        }
    }
}

/// Applies to entry `row` of table `t` (a `write-to` target) the values of an update
/// that are kept as they come, never counted on (HAProxy's `as_is` types: `server_id`,
/// `gpt0`, `server_key`, `gpt`): a local copy never adds a node's counters to its own.
pub fn apply_as_is(t: &StickTable, row: &Row, values: &[(u8, u32, Value<'_>)], now: u32, dict: &mut DictCache) {
    let as_is = |n: u8| {
        bit_type(usize::from(n))
            .is_some_and(|d| matches!(d, DataType::ServerId | DataType::Gpt0 | DataType::ServerKey | DataType::Gpt))
    };
    let kept: Vec<_> = values.iter().copied().filter(|v| as_is(v.0)).collect();
    apply(t, row, &kept, now, dict);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_cfg::model::{StickTableDef, StoreSpec};
    use std::time::Duration;

    #[test]
    fn type_numbers_follow_haproxy() {
        assert_eq!(type_bit(DataType::ServerId), 0);
        assert_eq!(type_bit(DataType::Gpc1Rate), 18);
        assert_eq!(type_bit(DataType::HttpFailCnt), 20);
        assert_eq!(type_bit(DataType::GpcRate), 24);
        for d in DataType::ALL {
            assert_eq!(bit_type(type_bit(d)), Some(d));
        }
        assert_eq!(bit_type(19), Some(DataType::ServerKey));
        assert_eq!(bit_type(25), None);
        assert_eq!(key_size(StickKeyType::String(32)), 32);
        assert_eq!(key_size(StickKeyType::String(20)), 21);
    }

    #[test]
    fn an_entry_round_trips_through_an_update() {
        let store = |data, period: Option<u64>, nb| StoreSpec { data, period: period.map(Duration::from_millis), nb };
        let def = StickTableDef {
            key: StickKeyType::String(32),
            size: 10,
            expire: Some(Duration::from_secs(30)),
            nopurge: false,
            store: vec![
                store(DataType::ServerId, None, 1),
                store(DataType::Gpc0, None, 1),
                store(DataType::ConnRate, Some(50_000), 1),
                store(DataType::ConnCur, None, 1),
                store(DataType::ServerKey, None, 1),
                store(DataType::Gpt, None, 2),
            ],
            peers: None,
            srvkey: Default::default(),
            write_to: None,
            span: Default::default(),
        };
        let (a, b) = (StickTable::new("a", &def), StickTable::new("a", &def));
        let k = Key::Bytes(b"/c1"[..].into());
        let row = a.get_or_create(&k).unwrap();
        let now = crate::stick::now_ms();
        let l = &a.layout;
        row.set(l, DataType::ServerId, (-3i32) as u32 as u64, now);
        row.add(l, DataType::Gpc0, 2, now);
        row.add(l, DataType::ConnRate, 5, now);
        row.add(l, DataType::ConnCur, 1, now);
        row.set_cell(l.cell(DataType::Gpt, 1).unwrap(), 9, now);
        row.set(l, DataType::ServerKey, crate::stick::dict::intern("wire-test-srv"), now);
        let e = a.view(&k).unwrap();
        let (mut tx, mut rx) = (DictCache::default(), DictCache::default());
        let s = shape(&a);
        // twice: the string travels the first time, its slot alone the second
        for round in 0..2 {
            let mut out = Vec::new();
            encode_entry(&a, &e, 1, true, &mut tx, &mut out);
            assert_eq!(out.windows(13).any(|w| w == b"wire-test-srv"), round == 0);
            let Ok(Some((rampart_proto::peers::Message::Update { with_id, timed, body }, _))) =
                rampart_proto::peers::next_message(&out, 16384)
            else {
                panic!()
            };
            let u = wt::decode_update(body, with_id, timed, key_kind(b.key_type), &s).unwrap();
            let got = b.learn(&key_from(b.key_type, u.key), u.expire).unwrap();
            apply(&b, &got, &u.values, crate::stick::now_ms(), &mut rx);
            let (mut x, mut y) = (String::new(), String::new());
            row.render(l, now, &mut x);
            got.render(&b.layout, now, &mut y);
            assert!(x.contains(" server_key=wire-test-srv"), "{x}");
            assert_eq!(y, x.replace("conn_cur=1", "conn_cur=0"));
        }
        assert!(b.view(&k).unwrap().exp_in > 29_000);
    }

    #[test]
    fn the_dictionary_cache_reuses_slots_round_robin() {
        let mut c = DictCache::default();
        assert_eq!(c.slot_to_send(7), (1, true));
        assert_eq!(c.slot_to_send(7), (1, false));
        for id in 100..100 + super::super::types::DICT_SLOTS as u64 {
            c.slot_to_send(id);
        }
        // 7's slot went to another string: it is sent again, in the next slot
        assert_eq!(c.slot_to_send(7), (2, true));
        assert_eq!(c.received(0, None), 0);
        assert_eq!(c.received(129, Some(b"x")), 0);
        assert_eq!(c.received(3, None), 0);
    }
}
