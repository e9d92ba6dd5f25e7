//! `show resolvers [<id>]`: each `resolvers` section's nameservers and what they
//! answered. HAProxy counterpart: `cli_io_handler_dump_resolvers_to_buffer()`
//! (src/resolvers.c); the layout is HAProxy 2.6's.

use std::fmt::Write as _;

use super::Cli;

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
