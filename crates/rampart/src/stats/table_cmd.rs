//! `show table`, `clear table` and `set table` on the runtime API: list the stick
//! tables, dump or remove entries (by key or by a filter on their data), create or
//! update one. HAProxy counterpart: `cli_parse_table_req()`,
//! `table_process_entry_per_key()`, `table_prepare_data_request()` and
//! `cli_io_handler_table()` (src/stick_table.c); the messages are HAProxy 2.6's.

use rampart_cfg::model::{DataType, StickKeyType};

use super::cmd::{Level, Session};
use super::Cli;
use crate::stick::data::Row;
use crate::stick::{dump, Key, StickTable};

/// Which command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Show,
    Clear,
    Set,
}

/// At most this many `data.<type> <op> <value>` filters (HAProxy's
/// `STKTABLE_FILTER_LEN`).
const FILTERS: usize = 4;

pub fn show_table(cli: &Cli, sess: &mut Session, words: &[&str]) -> String {
    run(cli, sess, words, Action::Show)
}

pub fn clear_table(cli: &Cli, sess: &mut Session, words: &[&str]) -> String {
    run(cli, sess, words, Action::Clear)
}

pub fn set_table(cli: &Cli, sess: &mut Session, words: &[&str]) -> String {
    run(cli, sess, words, Action::Set)
}

fn tables(cli: &Cli) -> impl Iterator<Item = &StickTable> {
    cli.rt.stick_tables()
}

fn run(cli: &Cli, sess: &Session, words: &[&str], action: Action) -> String {
    let arg = |i: usize| words.get(i).copied().unwrap_or("");
    if arg(2).is_empty() {
        if action != Action::Show {
            return args_error(action);
        }
        // COMPAT: HAProxy lists the tables last declared first
        let mut out = String::new();
        let all: Vec<&StickTable> = tables(cli).collect();
        all.iter().rev().for_each(|t| dump::head(t, &mut out));
        return out;
    }
    let Some(t) = tables(cli).find(|t| &*t.name == arg(2)) else { return "No such table\n".into() };
    match arg(3) {
        "key" => per_key(t, sess, words, action),
        w if w.starts_with("data.") => match filters(t, words, action) {
            Ok(f) => dump_or_clear(t, sess, &f, action),
            Err(e) => e,
        },
        "" if action != Action::Set => dump_or_clear(t, sess, &[], action),
        _ => args_error(action),
    }
}

fn args_error(action: Action) -> String {
    match action {
        Action::Show => "Optional argument only supports \"data.<store_data_type>\" <operator> <value> and key <key>\n",
        Action::Clear => {
            "Required arguments: <table> \"data.<store_data_type>\" <operator> <value> or <table> key <key>\n"
        }
        Action::Set => "Required arguments: <table> key <key> [data.<store_data_type> <value>]*\n",
    }
    .into()
}

/// The key of a CLI word (`None`: refused, with HAProxy's message).
fn cli_key(t: &StickTable, word: &str, action: Action) -> Result<Key, String> {
    match t.key_type {
        // COMPAT: as HAProxy's `inetaddr_host()`, an address that does not parse is 0.0.0.0
        StickKeyType::Ip => Ok(Key::parse(t.key_type, word).unwrap_or(Key::Ip4([0; 4]))),
        StickKeyType::Ipv6 | StickKeyType::Integer => {
            Key::parse(t.key_type, word).ok_or_else(|| "Invalid key\n".to_owned())
        }
        StickKeyType::String(_) => Ok(Key::from_bytes(t.key_type, word.as_bytes())),
        StickKeyType::Binary(_) => Err(match action {
            Action::Show => {
                "Showing keys from tables of type other than ip, ipv6, string and integer is not supported\n"
            }
            Action::Clear => {
                "Removing keys from tables of type other than ip, ipv6, string and integer is not supported\n"
            }
            Action::Set => {
                "Inserting keys into tables of type other than ip, ipv6, string and integer is not supported\n"
            }
        }
        .into()),
    }
}

/// `... <table> key <k> [data.<type> <v>]*`.
fn per_key(t: &StickTable, sess: &Session, words: &[&str], action: Action) -> String {
    let arg = |i: usize| words.get(i).copied().unwrap_or("");
    if arg(4).is_empty() {
        return "Key value expected\n".into();
    }
    let key = match cli_key(t, arg(4), action) {
        Ok(k) => k,
        Err(e) => return e,
    };
    if sess.level < Level::Operator {
        return String::new();
    }
    match action {
        Action::Show => {
            let Some(row) = t.lookup(&key) else { return String::new() };
            let mut out = String::new();
            dump::head(t, &mut out);
            let e = crate::stick::table::EntryView { key, row, exp_in: 0 };
            // an entry found by key prints its expiry as the snapshot does
            let e = t.snapshot_one(e);
            dump::entry(t, &e, &mut out);
            out
        }
        Action::Clear => match t.remove(&key) {
            Some(false) => "Entry currently in use, cannot remove\n".into(),
            _ => String::new(),
        },
        Action::Set => {
            let Some(row) = t.get_or_create(&key) else { return "Unable to allocate a new entry\n".into() };
            let answer = set_data(t, &row, &words[5.min(words.len())..]);
            t.touch_local(&key);
            answer
        }
    }
}

/// `data.<type> <value>` pairs of `set table`.
fn set_data(t: &StickTable, row: &Row, pairs: &[&str]) -> String {
    let now = crate::stick::now_ms();
    for pair in pairs.chunks(2) {
        let Some(name) = pair[0].strip_prefix("data.") else {
            return "\"data.<type>\" followed by a value expected\n".into();
        };
        let Some(d) = data_type(name) else { return "Unknown data type\n".into() };
        if !t.layout.stores(d) {
            return "Data type not stored in this table\n".into();
        }
        let Some(v) = pair.get(1).and_then(|v| v.parse::<i64>().ok()) else {
            return "Require a valid integer value to store\n".into();
        };
        row.set(&t.layout, d, v as u64, now);
    }
    String::new()
}

/// A data type name HAProxy 2.6 knows (those rampart does not store are never stored).
fn data_type(name: &str) -> Option<DataType> {
    DataType::from_name(name)
}

/// One `data.<type> <op> <value>` filter.
#[derive(Debug, Clone, Copy)]
struct Filter {
    data: DataType,
    op: Op,
    value: i64,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Eq,
    Ne,
    Le,
    Ge,
    Lt,
    Gt,
}

impl Op {
    fn parse(w: &str) -> Option<Op> {
        Some(match w {
            "eq" => Op::Eq,
            "ne" => Op::Ne,
            "le" => Op::Le,
            "ge" => Op::Ge,
            "lt" => Op::Lt,
            "gt" => Op::Gt,
            _ => return None,
        })
    }

    fn test(self, a: i64, b: i64) -> bool {
        match self {
            Op::Eq => a == b,
            Op::Ne => a != b,
            Op::Le => a <= b,
            Op::Ge => a >= b,
            Op::Lt => a < b,
            Op::Gt => a > b,
        }
    }
}

fn filters(t: &StickTable, words: &[&str], action: Action) -> Result<Vec<Filter>, String> {
    if action == Action::Set {
        return Err("content-based lookup is only supported with the \"show\" and \"clear\" actions\n".into());
    }
    let arg = |i: usize| words.get(i).copied().unwrap_or("");
    let mut out = Vec::new();
    let mut i = 0;
    while i < FILTERS {
        let at = 3 + 3 * i;
        if i > 0 && arg(at).is_empty() {
            break;
        }
        let n = i + 1;
        let d = arg(at).strip_prefix("data.").and_then(data_type);
        let Some(d) = d else { return Err(format!("Filter entry #{n}: Unknown data type\n")) };
        if !t.layout.stores(d) {
            return Err(format!("Filter entry #{n}: Data type not stored in this table\n"));
        }
        let Some(op) = Op::parse(arg(at + 1)) else {
            return Err(format!(
                "Filter entry #{n}: Require and operator among \"eq\", \"ne\", \"le\", \"ge\", \"lt\", \"gt\"\n"
            ));
        };
        let Ok(value) = arg(at + 2).parse::<i64>() else {
            return Err(format!("Filter entry #{n}: Require a valid integer value to compare against\n"));
        };
        out.push(Filter { data: d, op, value });
        i += 1;
    }
    let at = 3 + 3 * i;
    if !arg(at).is_empty() {
        return Err(format!("Detected extra data in filter, {}th word of input, after '{}'\n", at + 1, arg(at - 1)));
    }
    Ok(out)
}

fn matches(t: &StickTable, row: &Row, filters: &[Filter]) -> bool {
    let now = crate::stick::now_ms();
    filters.iter().all(|f| {
        let v = row.get(&t.layout, f.data, now).unwrap_or(0);
        let v = if f.data == DataType::ServerId { i64::from(v as u32 as i32) } else { v as i64 };
        f.op.test(v, f.value)
    })
}

/// `show table <t> [filters]`: the head, then the entries (operators only);
/// `clear table <t> [filters]`: removes the entries not in use.
fn dump_or_clear(t: &StickTable, sess: &Session, filters: &[Filter], action: Action) -> String {
    let mut out = String::new();
    if action == Action::Clear {
        if sess.level >= Level::Operator {
            t.clear(|_, row| matches(t, row, filters));
        }
        return out;
    }
    if sess.level < Level::Operator {
        dump::head(t, &mut out);
        out.push_str("# contents not dumped due to insufficient privileges\n");
        return out;
    }
    // the snapshot forgets the expired entries first: the head then counts what follows
    let entries = t.snapshot();
    dump::head(t, &mut out);
    for e in entries.iter().filter(|e| matches(t, &e.row, filters)) {
        dump::entry(t, e, &mut out);
    }
    out
}
