//! The dictionary of `server_key` values: each distinct string (a server's name or
//! `addr:port`) gets a small number once, and an entry's row stores that number in
//! one word, so rows stay arrays of atomic words.
//! HAProxy counterpart: `server_key_dict` (src/dict.c).
//!
//! The dictionary only grows: its strings are the keys of the configured servers and
//! what peers send. Peers' strings are bounded ([`MAX_ENTRIES`]); past that, a new
//! string is not stored (the entry keeps its `server_id`, which still matches).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

/// The most strings the dictionary holds.
pub const MAX_ENTRIES: usize = 1 << 16;

#[derive(Default)]
struct Dict {
    ids: HashMap<Arc<str>, u64>,
    values: Vec<Arc<str>>,
}

fn dict() -> &'static RwLock<Dict> {
    static DICT: OnceLock<RwLock<Dict>> = OnceLock::new();
    DICT.get_or_init(Default::default)
}

/// The number of `value` (1 and up; 0 stands for no value), adding it if new; 0 once
/// the dictionary is full.
pub fn intern(value: &str) -> u64 {
    if let Some(&id) = dict().read().unwrap_or_else(|e| e.into_inner()).ids.get(value) {
        return id;
    }
    let mut d = dict().write().unwrap_or_else(|e| e.into_inner());
    if let Some(&id) = d.ids.get(value) {
        return id;
    }
    if d.values.len() >= MAX_ENTRIES {
        return 0;
    }
    let v: Arc<str> = value.into();
    d.values.push(v.clone());
    let id = d.values.len() as u64;
    d.ids.insert(v, id);
    id
}

/// The string numbered `id` (`None` for 0 or an unknown number).
pub fn value(id: u64) -> Option<Arc<str>> {
    let i = usize::try_from(id.checked_sub(1)?).ok()?;
    dict().read().unwrap_or_else(|e| e.into_inner()).values.get(i).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_keeps_its_number() {
        let a = intern("dict-test-srv1");
        let b = intern("dict-test-127.0.0.1:8080");
        assert!(a > 0 && b > 0 && a != b);
        assert_eq!(intern("dict-test-srv1"), a);
        assert_eq!(value(a).as_deref(), Some("dict-test-srv1"));
        assert_eq!(value(0), None);
        assert_eq!(value(u64::MAX), None);
    }
}
