//! `balance prefix-affinity` (rampart extension): requests whose key (the hash of a
//! prompt's first bytes) was seen recently go back to a server that served it, which
//! likely still holds that prefix in its cache; a new key, or one whose servers are
//! unusable, goes to the least loaded server and is remembered there. A server above
//! its share of the load by more than the balance factor (bounded load, as
//! `hash-balance-factor`) is passed over. Each key keeps two homes: when the first is
//! above its bound, the second takes the request; when both are, the least loaded
//! server does and becomes the second home, so a hot prefix ends up cached on two
//! servers instead of spilling all over the fleet.
//! No HAProxy counterpart: the bound is HAProxy's `chash_server_is_eligible()` rule.

use std::sync::atomic::{AtomicU64, Ordering};

/// Keys remembered (direct-mapped: a newer key may take an older one's slot).
const SLOTS: usize = 4096;

/// The key → servers memory: each slot holds the key and its two homes (server + 1,
/// 16 bits each; 0: none).
#[derive(Debug)]
pub struct Affinity {
    slots: Box<[AtomicU64]>,
}

impl Default for Affinity {
    fn default() -> Self {
        Affinity { slots: (0..SLOTS).map(|_| AtomicU64::new(0)).collect() }
    }
}

impl Affinity {
    fn slot(&self, key: u32) -> &AtomicU64 {
        &self.slots[key as usize % SLOTS]
    }

    /// The homes of `key`, if remembered (the second may be absent).
    pub fn homes(&self, key: u32) -> Option<(usize, Option<usize>)> {
        let v = self.slot(key).load(Ordering::Relaxed);
        let (tag, first, second) = ((v >> 32) as u32, ((v >> 16) & 0xffff) as usize, (v & 0xffff) as usize);
        (tag == key && first > 0).then(|| (first - 1, second.checked_sub(1)))
    }

    /// Remembers the homes of `key`.
    pub fn remember(&self, key: u32, first: usize, second: Option<usize>) {
        let id = |s: usize| (s as u64 + 1) & 0xffff;
        let v = (u64::from(key) << 32) | (id(first) << 16) | second.map_or(0, id);
        self.slot(key).store(v, Ordering::Relaxed);
    }

    /// The pick: a home of the key that is usable and `within` its bound, else `least`
    /// (the least loaded server), remembered as the key's second home (its first when
    /// the first is gone).
    pub fn pick(
        &self,
        key: u32,
        usable: impl Fn(usize) -> bool,
        within: impl Fn(usize) -> bool,
        least: impl FnOnce() -> Option<usize>,
    ) -> Option<usize> {
        let ok = |s: usize| usable(s) && within(s);
        match self.homes(key) {
            Some((first, _)) if ok(first) => Some(first),
            Some((_, Some(second))) if ok(second) => Some(second),
            Some((first, _)) if usable(first) => {
                let s = least()?;
                if s != first {
                    self.remember(key, first, Some(s));
                }
                Some(s)
            }
            _ => {
                let s = least()?;
                self.remember(key, s, None);
                Some(s)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_goes_home_unless_its_homes_are_full_or_gone() {
        let a = Affinity::default();
        assert_eq!(a.homes(7), None);
        // new key: the least loaded server, remembered
        assert_eq!(a.pick(7, |_| true, |_| true, || Some(2)), Some(2));
        assert_eq!(a.homes(7), Some((2, None)));
        assert_eq!(a.pick(7, |_| true, |_| true, || Some(0)), Some(2));
        // home above its bound: the least loaded server, now its second home
        assert_eq!(a.pick(7, |_| true, |s| s != 2, || Some(1)), Some(1));
        assert_eq!(a.homes(7), Some((2, Some(1))));
        assert_eq!(a.pick(7, |_| true, |s| s != 2, || Some(3)), Some(1));
        assert_eq!(a.pick(7, |_| true, |_| true, || Some(3)), Some(2));
        // first home unusable: moves
        assert_eq!(a.pick(7, |s| s != 2 && s != 1, |_| true, || Some(3)), Some(3));
        assert_eq!(a.homes(7), Some((3, None)));
        // another key in the same slot replaces it
        a.remember(7 + SLOTS as u32, 1, None);
        assert_eq!(a.homes(7), None);
    }
}
