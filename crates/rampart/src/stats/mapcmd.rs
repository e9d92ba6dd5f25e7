//! The map and ACL commands of the runtime API: `show map|acl`, `get map|acl`, `add`,
//! `set map`, `del`, `clear`, `prepare`, `commit`, with HAProxy 2.6's words and
//! answers. They edit the pattern references ([`crate::pattern::patref::PatRef`]);
//! every ACL, `map_*` converter and Lua map using a reference sees the change at its
//! next lookup, on every thread (the views are swapped whole, lock-free for readers).
//!
//! Like HAProxy 2.6, these commands need no particular level. HAProxy counterpart:
//! src/map.c (`cli_parse_*_map`, `cli_io_handler_*`).

use std::sync::Arc;

use super::Cli;
use crate::pattern::patref::{PatEntry, PatIndex, PatRef};
use crate::pattern::value::MapValue;
use crate::pattern::MatchMethod;
use crate::sample::Sample;

/// Which of the two command families: they differ in words and in the references
/// they list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Map,
    Acl,
}

impl Kind {
    fn of(words: &[&str]) -> Kind {
        if words.get(1) == Some(&"acl") {
            Kind::Acl
        } else {
            Kind::Map
        }
    }

    /// Whether `show`, `clear`, `prepare`, `commit` and `del` accept the reference.
    fn lists(self, r: &PatRef) -> bool {
        match self {
            Kind::Map => r.is_map(),
            Kind::Acl => !r.is_map(),
        }
    }

    fn unknown(self) -> String {
        match self {
            Kind::Map => "Unknown map identifier. Please use #<id> or <file>.\n".into(),
            Kind::Acl => "Unknown ACL identifier. Please use #<id> or <file>.\n".into(),
        }
    }

    fn missing(self) -> String {
        match self {
            Kind::Map => "Missing map identifier.\n".into(),
            Kind::Acl => "Missing ACL identifier.\n".into(),
        }
    }
}

/// An argument of the command, empty when absent (HAProxy's `*args[n]` tests).
fn arg<'a>(words: &[&'a str], i: usize) -> &'a str {
    words.get(i).copied().unwrap_or_default()
}

/// `@<ver>` before the reference: the version and the words shifted past it.
fn version<'a>(words: &[&'a str]) -> (Option<u32>, Vec<&'a str>) {
    match words.get(2).and_then(|w| w.strip_prefix('@')) {
        Some(v) => {
            let mut rest = words.to_vec();
            rest.remove(2);
            (Some(str2uic(v)), rest)
        }
        None => (None, words.to_vec()),
    }
}

/// HAProxy's `str2uic`: the leading decimal digits as an unsigned number, wrapping.
fn str2uic(s: &str) -> u32 {
    s.bytes().take_while(u8::is_ascii_digit).fold(0u32, |n, d| n.wrapping_mul(10).wrapping_add(u32::from(d - b'0')))
}

/// The entry identifier of a `#0x<hex>` argument: `Some(Err)` when malformed, `None`
/// when the argument is a key.
fn entry_id(word: &str) -> Option<Result<u64, String>> {
    let hex = word.strip_prefix("#0x")?;
    Some(u64::from_str_radix(hex, 16).map_err(|_| "Malformed identifier. Please use #<id> or <file>.\n".to_owned()))
}

fn find<'a>(cli: &'a Cli, name: &str) -> Option<&'a Arc<PatRef>> {
    cli.rt.pat_refs.find(name)
}

/// `show map|acl [[@<ver>] <ref>]`.
pub fn show(cli: &Cli, _: &mut super::cmd::Session, words: &[&str]) -> String {
    let kind = Kind::of(words);
    if arg(words, 2).is_empty() {
        return list(cli, kind);
    }
    let (gen, words) = version(words);
    let Some(r) = find(cli, arg(&words, 2)).filter(|r| kind.lists(r)) else {
        return kind.unknown();
    };
    let gen = gen.unwrap_or_else(|| r.status().curr_gen);
    let mut out = String::new();
    for e in r.entries_of(gen) {
        out.push_str(&entry_line(&e));
    }
    out
}

/// One line of `show map <ref>`: the entry's identifier, key and value.
fn entry_line(e: &PatEntry) -> String {
    match &e.value {
        Some(v) => format!("0x{:x} {} {}\n", e.id, e.key, v),
        None => format!("0x{:x} {}\n", e.id, e.key),
    }
}

/// `show map` / `show acl` without a reference: one line per reference.
fn list(cli: &Cli, kind: Kind) -> String {
    let mut out = String::from("# id (file) description\n");
    for r in cli.rt.pat_refs.iter().filter(|r| kind.lists(r)) {
        let st = r.status();
        out.push_str(&format!(
            "{} ({}) {}. curr_ver={} next_ver={} entry_cnt={}\n",
            r.unique_id(),
            r.reference().unwrap_or_default(),
            st.display,
            st.curr_gen,
            st.next_gen,
            st.entry_cnt
        ));
    }
    out
}

/// `get map|acl <ref> <value>`: how each expression using the reference matches the
/// value, as the running rules would.
pub fn get(cli: &Cli, _: &mut super::cmd::Session, words: &[&str]) -> String {
    let kind = Kind::of(words);
    if arg(words, 2).is_empty() || arg(words, 3).is_empty() {
        return match kind {
            Kind::Map => "Missing map identifier and/or key.\n".into(),
            Kind::Acl => "Missing ACL identifier and/or key.\n".into(),
        };
    }
    let Some(r) = find(cli, arg(words, 2)) else { return kind.unknown() };
    // under the reference's lock: an update cannot land between reading the entries
    // and looking the value up in the views
    r.read_consistent(|entries, views| {
        let mut out = String::new();
        let mut seen = Vec::new();
        for view in views {
            // one line per HAProxy expression: views it shares are listed once
            if seen.contains(&view.expr_class()) {
                continue;
            }
            seen.push(view.expr_class());
            out.push_str(&lookup_line(kind, view, entries, arg(words, 3)));
            out.push('\n');
        }
        out
    })
}

/// The line `get map` prints for one view.
fn lookup_line(kind: Kind, view: &PatIndex, entries: &[&PatEntry], value: &str) -> String {
    let mut out = match view.method {
        MatchMethod::Meth | MatchMethod::Ver | MatchMethod::Auth => "type=unknown(0x0)".to_owned(),
        m => format!("type={}", m.name()),
    };
    out.push_str(if view.flags.icase { ", case=insensitive" } else { ", case=sensitive" });
    let smp = Sample::str(value.as_bytes());
    let found = view.with(|snap| {
        let (n, _) = snap.set.lookup(&smp)?;
        Some((n as usize, snap.values.get(n as usize).map(value_type)))
    });
    let hit = found.and_then(|(n, ty)| Some((*entries.get(n)?, ty)));
    let Some((e, ty)) = hit else {
        out.push_str(if kind == Kind::Map { ", found=no" } else { ", match=no" });
        return out;
    };
    out.push_str(if kind == Kind::Map { ", found=yes" } else { ", match=yes" });
    out.push_str(if tree_indexed(view, &e.key) { ", idx=tree" } else { ", idx=list" });
    if kind == Kind::Map {
        out.push_str(&format!(", key=\"{}\"", e.key));
        match (ty, &e.value) {
            (Some(ty), Some(v)) => out.push_str(&format!(", value=\"{v}\", type=\"{ty}\"")),
            _ => out.push_str(", value=none"),
        }
    } else {
        out.push_str(&format!(", pattern=\"{}\"", e.key));
    }
    out
}

/// HAProxy's name of a value's type (`smp_to_type`).
fn value_type(v: &MapValue) -> &'static str {
    match v {
        MapValue::Str(_) => "str",
        MapValue::Int(_) => "sint",
        MapValue::V4(_) => "ipv4",
        MapValue::V6(_) => "ipv6",
    }
}

/// Whether HAProxy keeps the pattern in a tree (`idx=tree`) rather than a list:
/// exact and prefix strings without `-i`, IPv6 networks and IPv4 ones with a
/// contiguous mask.
fn tree_indexed(view: &PatIndex, key: &str) -> bool {
    match view.method {
        MatchMethod::Str | MatchMethod::Beg => !view.flags.icase,
        MatchMethod::Ip => match key.split_once('/') {
            Some((addr, mask)) if !addr.contains(':') => match mask.parse::<std::net::Ipv4Addr>() {
                Ok(m) => {
                    let m = u32::from(m);
                    m.wrapping_add(m & m.wrapping_neg()) == 0
                }
                Err(_) => true,
            },
            _ => true,
        },
        _ => false,
    }
}

/// `add map|acl [@<ver>] <ref> <key> [<value>]`, or `add map [@<ver>] <ref>` with a
/// payload of `<key> <value>` lines.
pub fn add(cli: &Cli, sess: &mut super::cmd::Session, words: &[&str]) -> String {
    let kind = Kind::of(words);
    let (gen, words) = version(words);
    let payload = sess.payload.take();
    let (r, k, v) = (arg(&words, 2), arg(&words, 3), arg(&words, 4));
    match kind {
        Kind::Map if payload.is_none() && (r.is_empty() || k.is_empty() || v.is_empty()) => {
            return "'add map' expects three parameters (map identifier, key and value) or one parameter (map \
                    identifier) and a payload\n"
                .into()
        }
        Kind::Map if r.is_empty() => {
            return "'add map' expects three parameters (map identifier, key and value) or one parameter (map \
                    identifier) and a payload\n"
                .into()
        }
        Kind::Acl if r.is_empty() || k.is_empty() => {
            return "'add acl' expects two parameters: ACL identifier and pattern.\n".into()
        }
        _ => {}
    }
    let Some(pref) = find(cli, r) else { return kind.unknown() };
    if let Some(g) = gen {
        if g.wrapping_sub(pref.status().next_gen) as i32 > 0 {
            return match kind {
                Kind::Map => "Version number in the future, please use 'prepare map' before.\n".into(),
                Kind::Acl => "Version number in the future, please use 'prepare acl' before.\n".into(),
            };
        }
    }
    if kind == Kind::Acl && pref.is_map() {
        return "This ACL is shared with a map containing samples. You must use the command 'add map' to add values.\n"
            .into();
    }
    let lines = match &payload {
        Some(p) => match payload_lines(p, kind) {
            Ok(l) => l,
            Err(e) => return e,
        },
        None => vec![(k, (kind == Kind::Map).then_some(v))],
    };
    match pref.add_each(gen, &lines) {
        Ok(()) => String::new(),
        Err(e) => format!("{e}.\n"),
    }
}

/// The `<key> <value>` lines of an `add map` payload (keys only for `add acl`).
fn payload_lines(p: &str, kind: Kind) -> Result<Vec<(&str, Option<&str>)>, String> {
    let mut out = Vec::new();
    for line in p.split('\n').filter(|l| !l.is_empty()) {
        match line.split_once([' ', '\t']) {
            Some((k, v)) => {
                let v = v.trim_start_matches([' ', '\t']);
                out.push((k, (kind == Kind::Map).then_some(v)));
            }
            None if kind == Kind::Map => return Err(format!("Missing value for key '{line}'.\n")),
            None => out.push((line, None)),
        }
    }
    Ok(out)
}

/// `set map <ref> <key>|#<id> <value>`.
pub fn set(cli: &Cli, _: &mut super::cmd::Session, words: &[&str]) -> String {
    let (r, k, v) = (arg(words, 2), arg(words, 3), arg(words, 4));
    if r.is_empty() || k.is_empty() || v.is_empty() {
        return "'set map' expects three parameters: map identifier, key and value.\n".into();
    }
    let Some(pref) = find(cli, r) else { return Kind::Map.unknown() };
    let res = match entry_id(k) {
        Some(Err(e)) => return e,
        Some(Ok(id)) => pref.set_id(id, v).map(|found| found.then_some(()).ok_or("key or pattern not found")),
        None => pref.set(k, v).map(|found| found.then_some(()).ok_or("entry not found")),
    };
    match res {
        Ok(Ok(())) => String::new(),
        Ok(Err(e)) => format!("{e}.\n"),
        Err(e) => format!("{e}.\n"),
    }
}

/// `del map|acl <ref> <key>|#<id>`.
pub fn del(cli: &Cli, _: &mut super::cmd::Session, words: &[&str]) -> String {
    let kind = Kind::of(words);
    let (r, k) = (arg(words, 2), arg(words, 3));
    if r.is_empty() || k.is_empty() {
        return match kind {
            Kind::Map => "This command expects two parameters: map identifier and key.\n".into(),
            Kind::Acl => "This command expects two parameters: ACL identifier and key.\n".into(),
        };
    }
    // COMPAT: HAProxy 2.6 names the map in this error for `del acl` too.
    let Some(pref) = find(cli, r).filter(|p| kind.lists(p)) else { return Kind::Map.unknown() };
    let res = match entry_id(k) {
        Some(Err(e)) => return e,
        Some(Ok(id)) => pref.del_id(id),
        None => pref.del(k),
    };
    match res {
        Ok(true) => String::new(),
        Ok(false) => "Key not found.\n".into(),
        Err(e) => format!("{e}.\n"),
    }
}

/// `clear map|acl [@<ver>] <ref>`.
pub fn clear(cli: &Cli, _: &mut super::cmd::Session, words: &[&str]) -> String {
    let kind = Kind::of(words);
    let (gen, words) = version(words);
    if arg(&words, 2).is_empty() {
        return kind.missing();
    }
    let Some(pref) = find(cli, arg(&words, 2)).filter(|p| kind.lists(p)) else { return kind.unknown() };
    match pref.clear_gen(gen) {
        Ok(()) => String::new(),
        Err(e) => format!("{e}.\n"),
    }
}

/// `prepare map|acl <ref>`.
pub fn prepare(cli: &Cli, _: &mut super::cmd::Session, words: &[&str]) -> String {
    let kind = Kind::of(words);
    let Some(pref) = find(cli, arg(words, 2)).filter(|p| kind.lists(p)) else { return kind.unknown() };
    format!("New version created: {}\n", pref.prepare())
}

/// `commit map|acl @<ver> <ref>`.
pub fn commit(cli: &Cli, _: &mut super::cmd::Session, words: &[&str]) -> String {
    let kind = Kind::of(words);
    let Some(gen) = arg(words, 2).strip_prefix('@').map(str2uic) else {
        return "Missing version number.\n".into();
    };
    if arg(words, 3).is_empty() {
        return kind.missing();
    }
    let Some(pref) = find(cli, arg(words, 3)).filter(|p| kind.lists(p)) else { return kind.unknown() };
    match pref.commit(gen) {
        Ok(true) => String::new(),
        Ok(false) => "Version number out of range.\n".into(),
        Err(e) => format!("{e}.\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_identifiers_are_read_as_haproxy_does() {
        assert_eq!(str2uic("12"), 12);
        assert_eq!(str2uic("3x"), 3);
        assert_eq!(str2uic(""), 0);
        assert_eq!(str2uic("4294967297"), 1);
        let (g, w) = version(&["add", "map", "@2", "m.map", "k", "v"]);
        assert_eq!((g, w), (Some(2), vec!["add", "map", "m.map", "k", "v"]));
        let (g, w) = version(&["show", "map", "m.map"]);
        assert_eq!((g, w.len()), (None, 3));
        assert_eq!(entry_id("#0x1f"), Some(Ok(31)));
        assert!(matches!(entry_id("#0xzz"), Some(Err(_))));
        assert_eq!(entry_id("#12"), None);
        assert_eq!(entry_id("key"), None);
    }

    #[test]
    fn payload_lines_are_key_then_value() {
        let l = payload_lines("k1 v1\nk2\t  v 2 \n\n", Kind::Map).unwrap();
        assert_eq!(l, [("k1", Some("v1")), ("k2", Some("v 2 "))]);
        assert_eq!(payload_lines("k1 v1\nk2\n", Kind::Map).unwrap_err(), "Missing value for key 'k2'.\n");
        assert_eq!(payload_lines("a\nb c\n", Kind::Acl).unwrap(), [("a", None), ("b", None)]);
    }
}
