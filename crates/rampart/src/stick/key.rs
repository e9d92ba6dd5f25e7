//! Table keys: what a sample becomes to look a table up, and how `show table` prints
//! it. HAProxy counterpart: `smp_to_stkey()`, `stktable_types[]` and the key part of
//! `table_dump_entry_to_buffer()` (src/stick_table.c).

use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};

use rampart_cfg::model::StickKeyType;

/// A key, already cut (strings) or padded (binaries) to the table's length.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    Ip4([u8; 4]),
    Ip6([u8; 16]),
    Int(u32),
    /// `string` and `binary` keys.
    Bytes(Box<[u8]>),
}

impl Key {
    /// The key for string `s` in a table of type `t` (`None` when it does not parse
    /// as that type: a CLI `key` argument).
    pub fn parse(t: StickKeyType, s: &str) -> Option<Key> {
        Some(match t {
            StickKeyType::Ip => Key::Ip4(s.parse::<Ipv4Addr>().ok()?.octets()),
            StickKeyType::Ipv6 => Key::Ip6(s.parse::<Ipv6Addr>().ok()?.octets()),
            StickKeyType::Integer => Key::Int(s.parse::<u32>().ok()?),
            StickKeyType::String(_) | StickKeyType::Binary(_) => Key::from_bytes(t, s.as_bytes()),
        })
    }

    /// The key for bytes `b` in a `string` or `binary` table (other types: their
    /// binary form, as for a `binary` sample).
    pub fn from_bytes(t: StickKeyType, b: &[u8]) -> Key {
        match t {
            StickKeyType::String(len) => Key::Bytes(b[..b.len().min(len as usize)].into()),
            StickKeyType::Binary(len) => {
                let mut v = b[..b.len().min(len as usize)].to_vec();
                v.resize(len as usize, 0);
                Key::Bytes(v.into())
            }
            StickKeyType::Ip => Key::Ip4(b.get(..4).and_then(|s| s.try_into().ok()).unwrap_or_default()),
            StickKeyType::Ipv6 => Key::Ip6(b.get(..16).and_then(|s| s.try_into().ok()).unwrap_or_default()),
            StickKeyType::Integer => {
                Key::Int(b.get(..4).map_or(0, |s| u32::from_be_bytes(s.try_into().unwrap_or_default())))
            }
        }
    }

    /// Prints the key as `show table` does (`key=...`).
    pub fn render(&self, out: &mut String) {
        match self {
            Key::Ip4(a) => {
                let _ = write!(out, "{}", Ipv4Addr::from(*a));
            }
            Key::Ip6(a) => {
                let _ = write!(out, "{}", Ipv6Addr::from(*a));
            }
            Key::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Key::Bytes(b) => render_bytes(b, out),
        }
    }
}

/// Strings print up to their first NUL, printable bytes as they are, separators and
/// controls escaped (`\ `, `\=`, `\t` ...), other bytes as `\xHH`.
fn render_bytes(b: &[u8], out: &mut String) {
    for &c in b.iter().take_while(|&&c| c != 0) {
        match c {
            b' ' | b'=' | b'\\' => {
                out.push('\\');
                out.push(c as char);
            }
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            0x1b => out.push_str("\\e"),
            b'!'..=b'~' => out.push(c as char),
            _ => {
                let _ = write!(out, "\\x{c:02X}");
            }
        }
    }
}

/// The key as `show table` prints it for a table of type `t`.
pub fn render_key(t: StickKeyType, k: &Key, out: &mut String) {
    match (t, k) {
        (StickKeyType::Binary(_), Key::Bytes(b)) => {
            for c in b.iter() {
                let _ = write!(out, "{c:02X}");
            }
        }
        _ => k.render(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_print() {
        let mut s = String::new();
        Key::parse(StickKeyType::Ip, "10.0.0.1").unwrap().render(&mut s);
        assert_eq!(s, "10.0.0.1");
        assert_eq!(Key::parse(StickKeyType::Ip, "nope"), None);
        assert_eq!(Key::parse(StickKeyType::Integer, "42"), Some(Key::Int(42)));
        assert_eq!(Key::parse(StickKeyType::String(3), "abcdef"), Some(Key::Bytes(b"abc"[..].into())));
        let k = Key::parse(StickKeyType::Binary(4), "ab").unwrap();
        assert_eq!(k, Key::Bytes(b"ab\0\0"[..].into()));
        let mut s = String::new();
        render_key(StickKeyType::Binary(4), &k, &mut s);
        assert_eq!(s, "61620000");
    }
}
