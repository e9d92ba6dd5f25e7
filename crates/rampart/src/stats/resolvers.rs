//! `show resolvers [<id>]` and `show stat domain resolvers`: each `resolvers` section's
//! nameservers and what they answered. HAProxy counterparts:
//! `cli_io_handler_dump_resolvers_to_buffer()` (src/resolvers.c), the resolvers stats
//! domain; the layouts are HAProxy 2.6's.

use std::fmt::Write as _;

use super::{Cli, Val};
use crate::dns::types::ResolversRt;

pub fn show(cli: &Cli, id: Option<&str>) -> String {
    let all = &cli.rt.resolvers;
    let id = id.filter(|i| !i.is_empty());
    if let Some(id) = id {
        if !all.iter().any(|r| r.conf.name == id) {
            return "Can't find that resolvers section\n".to_owned();
        }
    }
    if all.is_empty() {
        return "No resolvers found\n".to_owned();
    }
    let mut out = String::new();
    for r in all.iter().filter(|r| id.is_none_or(|i| r.conf.name == i)) {
        let _ = writeln!(out, "Resolvers section {}", r.conf.name);
        for (ns, c) in r.conf.nameservers.iter().zip(&r.counters) {
            let _ = writeln!(out, " nameserver {}:", ns.name);
            for (name, v) in c.rows() {
                let pad = 12 - name.len();
                let _ = writeln!(out, "  {name}:{:pad$}{v}", "");
            }
        }
    }
    out
}

/// The fields of a `show stat domain resolvers` row: name, description, `tags:type`, as
/// HAProxy 2.6's `resolv_stats[]` (src/resolvers.c) names them; the counters follow
/// `id` and `pid` in `NsCounters::rows()` order.
const STAT_FIELDS: [(&str, &str, &str); 17] = [
    ("id", "ID", "CGP:str"),
    ("pid", "Parent ID", "CGP:str"),
    ("sent", "Sent", "MGP:u64"),
    ("send_error", "Send error", "MGP:u64"),
    ("valid", "Valid", "MGP:u64"),
    ("update", "Update", "MGP:u64"),
    ("cname", "CNAME", "MGP:u64"),
    ("cname_error", "CNAME error", "MGP:u64"),
    ("any_err", "Any errors", "MGP:u64"),
    ("nx", "NX", "MGP:u64"),
    ("timeout", "Timeout", "MGP:u64"),
    ("refused", "Refused", "MGP:u64"),
    ("other", "Other", "MGP:u64"),
    ("invalid", "Invalid", "MGP:u64"),
    ("too_big", "Too big", "MGP:u64"),
    ("truncated", "Truncated", "MGP:u64"),
    ("outdated", "Outdated", "MGP:u64"),
];

/// `show stat domain resolvers [typed|json|desc]*`: one row per nameserver of every
/// section, in CSV (with its header), typed or JSON form, as HAProxy 2.6 prints them.
/// HAProxy counterpart: `stats_dump_resolvers()` and the resolvers branches of the
/// CSV/typed/JSON dumpers (src/stats.c).
pub fn show_stat(cli: &Cli, words: &[&str]) -> String {
    let (mut typed, mut json, mut desc) = (false, false, false);
    for w in words {
        match *w {
            "typed" => (typed, json) = (true, false),
            "json" => (typed, json) = (false, true),
            "desc" => desc = true,
            _ => {}
        }
    }
    let rows: Vec<[Val; 17]> = cli.rt.resolvers.iter().flat_map(section_rows).collect();
    let mut out = String::new();
    if json {
        out.push('[');
        for row in &rows {
            json_row(row, &mut out);
        }
        out.push_str("]\n");
    } else if typed {
        for row in &rows {
            for (i, ((name, d, tags), v)) in STAT_FIELDS.iter().zip(row).enumerate() {
                let _ = write!(out, "N.{i}.{name}:{tags}:{v}");
                if desc {
                    let _ = write!(out, ":\"{d}\"");
                }
                out.push('\n');
            }
        }
    } else {
        out.push_str("# ");
        for (name, ..) in STAT_FIELDS {
            let _ = write!(out, "{name},");
        }
        out.push('\n');
        for row in &rows {
            for v in row {
                let _ = write!(out, "{v},");
            }
            out.push('\n');
        }
    }
    out
}

/// The rows of one section: one per nameserver.
fn section_rows(r: &ResolversRt) -> Vec<[Val; 17]> {
    let rows = r.conf.nameservers.iter().zip(&r.counters);
    rows.map(|(ns, c)| {
        let counters = c.rows().map(|(_, v)| Val::Uint(v));
        std::array::from_fn(|i| match i {
            0 => Val::Str(ns.name.clone()),
            1 => Val::Str(r.conf.name.clone()),
            i => counters[i - 2].clone(),
        })
    })
    .collect()
}

/// One row in JSON: HAProxy 2.6 puts no comma between rows of this domain.
fn json_row(row: &[Val; 17], out: &mut String) {
    out.push('[');
    for (i, ((name, _, tags), v)) in STAT_FIELDS.iter().zip(row).enumerate() {
        if i > 0 {
            out.push(',');
        }
        let (tags, ty) = tags.split_once(':').unwrap_or(("", "str"));
        let [origin, nature, scope] = super::json_tags(tags);
        let _ = write!(
            out,
            "{{\"field\":{{\"pos\":{i},\"name\":\"{name}\"}},\"tags\":{{\"origin\":\"{origin}\",\
             \"nature\":\"{nature}\",\"scope\":\"{scope}\"}},\"value\":{{\"type\":\"{ty}\",\"value\":"
        );
        match v {
            Val::Str(s) => super::json_str(out, s),
            v => out.push_str(&v.to_string()),
        }
        out.push_str("}}");
    }
    out.push(']');
}
