//! What a worker hands to the next one on a master-worker reload (beyond HAProxy): the
//! internal `_getstate` command, served on the CLI session the master opens to the old
//! worker for the new one, and the reading of its stick-table part by the new worker
//! (`master::handover` drives both ends and applies the servers' part).
//!
//! The text, line based:
//! ```text
//! rampart-handover 1
//! servers
//! <exactly `show servers state`>
//! end
//! table <name> <key type>
//! e <key, hex> <ms before expiry> <type>[<element>]=<n> <rate>[<element>]=<elapsed>/<curr>/<prev> ...
//! end
//! done
//! ```
//! Types are HAProxy's peers protocol numbers, so that only the types both sides store
//! are applied (`peers::wire::apply`, which also leaves `conn_cur` out: the new worker
//! has no connection yet). A missing `done` means a cut dump: the caller then ignores
//! the whole of it.

use std::fmt::Write as _;

use rampart_proto::peers::table::Value;

use super::Cli;
use crate::peers::wire;
use crate::proxy::Runtime;

/// The first line of a dump.
pub const MAGIC: &str = "rampart-handover 1";
/// The last line of a complete dump.
pub const DONE: &str = "done";

/// `_getstate`: this worker's state, for the next worker.
pub fn dump(cli: &Cli) -> String {
    let mut out = format!("{MAGIC}\nservers\n");
    out.push_str(&super::servers::state(cli, None).unwrap_or_default());
    out.push_str("end\n");
    dump_tables(&cli.rt, &mut out);
    out.push_str(DONE);
    out.push('\n');
    out
}

fn dump_tables(rt: &Runtime, out: &mut String) {
    let now = crate::stick::now_ms();
    for t in rt.proxies.iter().filter_map(|p| p.table.as_ref()) {
        let _ = writeln!(out, "table {} {:?}", t.name, t.key_type);
        for e in t.snapshot() {
            let mut key = Vec::new();
            wire::key_bytes(&e.key, &mut key);
            out.push_str("e ");
            key.iter().for_each(|b| {
                let _ = write!(out, "{b:02x}");
            });
            let _ = write!(out, " {}", e.exp_in);
            // a fresh cache: every `server_key` comes with its string
            let (mut dict, mut keep) = (wire::DictCache::default(), None);
            let values = wire::values(t, &e.row, now, &mut dict, &mut keep);
            let mut vals = values.iter();
            for d in t.layout.stored() {
                for idx in 0..t.layout.elements(d) {
                    let Some(v) = vals.next() else { break };
                    let bit = wire::type_bit(d);
                    let _ = match v {
                        Value::Int(n) => write!(out, " {bit}[{idx}]={n}"),
                        Value::Freq { elapsed, curr, prev } => write!(out, " {bit}[{idx}]={elapsed}/{curr}/{prev}"),
                        Value::Dict(Some((_, Some(name)))) => {
                            let _ = write!(out, " {bit}[{idx}]=k");
                            name.iter().for_each(|b| {
                                let _ = write!(out, "{b:02x}");
                            });
                            Ok(())
                        }
                        Value::Dict(_) => Ok(()),
                    };
                }
            }
            out.push('\n');
        }
        out.push_str("end\n");
    }
}

/// Applies one `table` part (`header`: its `table ...` line, `lines`: its entries) to
/// the table of the same name and key type; returns how many entries were taken, or
/// why none was.
pub fn apply_table(rt: &Runtime, header: &str, lines: &[&str]) -> Result<usize, String> {
    let mut words = header.split(' ');
    let (Some("table"), Some(name), Some(key_type)) = (words.next(), words.next(), words.next()) else {
        return Err(format!("bad table line '{header}'"));
    };
    let Some(t) = rt.proxies.iter().filter_map(|p| p.table.as_ref()).find(|t| &*t.name == name) else {
        return Err(format!("no table '{name}' any more"));
    };
    if format!("{:?}", t.key_type) != key_type {
        return Err(format!("table '{name}' changed its key type"));
    }
    let now = crate::stick::now_ms();
    let mut taken = 0;
    for line in lines {
        let Some((key, exp, values)) = parse_entry(line) else { continue };
        let key = wire::key_from(t.key_type, &key);
        let exp = t.expire.map(|_| u32::try_from(exp).unwrap_or(0));
        if let Some(row) = t.learn(&key, exp) {
            wire::apply(t, &row, &values, now, &mut wire::DictCache::default());
            taken += 1;
        }
    }
    Ok(taken)
}

type Entry = (Vec<u8>, i64, Vec<(u8, u32, Value<'static>)>);

/// The bytes `hex` spells, two digits each.
fn hex_bytes(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect()
}

/// `e <hex key> <exp> <bit>[<idx>]=<value>...`; `None` if it is not that.
fn parse_entry(line: &str) -> Option<Entry> {
    let mut words = line.split(' ');
    if words.next()? != "e" {
        return None;
    }
    let key = hex_bytes(words.next()?)?;
    let exp = words.next()?.parse().ok()?;
    let mut values = Vec::new();
    for w in words {
        let (ty, v) = w.split_once('=')?;
        let (bit, idx) = ty.strip_suffix(']')?.split_once('[')?;
        let (bit, idx) = (bit.parse::<u8>().ok()?, idx.parse::<u32>().ok()?);
        // a `server_key` travels as its string: numbered in this process's dictionary
        if let Some(name) = v.strip_prefix('k') {
            let name = String::from_utf8(hex_bytes(name)?).ok()?;
            values.push((bit, idx, Value::Int(crate::stick::dict::intern(&name))));
            continue;
        }
        let value = match v.split('/').collect::<Vec<_>>()[..] {
            [n] => Value::Int(n.parse().ok()?),
            [e, c, p] => Value::Freq { elapsed: e.parse().ok()?, curr: c.parse().ok()?, prev: p.parse().ok()? },
            _ => return None,
        };
        values.push((bit, idx, value));
    }
    Some((key, exp, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_parse_back() {
        let (key, exp, vals) = parse_entry("e 0a000001 2500 0[0]=3 7[0]=100/4/2").unwrap();
        assert_eq!((key, exp), (vec![10, 0, 0, 1], 2500));
        assert_eq!(vals, vec![(0, 0, Value::Int(3)), (7, 0, Value::Freq { elapsed: 100, curr: 4, prev: 2 })]);
        assert_eq!(parse_entry("e 0a0 1"), None);
        assert_eq!(parse_entry("x 00 1"), None);
        assert_eq!(parse_entry("e 00 1 0[0]=1/2"), None);
        assert_eq!(parse_entry("e zz 1"), None);
        let (_, _, vals) = parse_entry("e 00 1 19[0]=k7331").unwrap();
        assert_eq!(vals, vec![(19, 0, Value::Int(crate::stick::dict::intern("s1")))]);
    }
}
