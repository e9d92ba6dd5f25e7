//! `show table` output: the header of each table and one line per entry, as HAProxy
//! 2.6 prints them (`table_dump_head_to_buffer()`, `table_dump_entry_to_buffer()` in
//! src/stick_table.c). The CLI commands themselves are in `stats::table_cmd`.

use std::fmt::Write as _;

use super::key::render_key;
use super::table::{EntryView, StickTable};

/// `# table: <name>, type: <type>, size:<n>, used:<n>`.
pub fn head(t: &StickTable, out: &mut String) {
    let _ = writeln!(out, "# table: {}, type: {}, size:{}, used:{}", t.name, t.key_type.name(), t.size, t.used());
}

/// `0x<id>: key=<key> use=<n> exp=<ms> <data>...`.
pub fn entry(t: &StickTable, e: &EntryView, out: &mut String) {
    let _ = write!(out, "{:#x}: key=", e.row.addr());
    render_key(t.key_type, &e.key, out);
    // the snapshot holds one reference of its own
    let _ = write!(out, " use={} exp={}", e.row.users().saturating_sub(1), e.exp_in);
    e.row.render(&t.layout, super::now_ms(), out);
    out.push('\n');
}
