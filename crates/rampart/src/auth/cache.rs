//! The per-thread cache of credentials already verified against a crypt(3) hash.
//!
//! PERF: crypt hashes are slow on purpose (a bcrypt of cost 10 or a default yescrypt
//! takes tens of milliseconds), and a browser sends the same `Authorization` header
//! with every request of a keep-alive connection. HAProxy runs `crypt()` for each
//! one; rampart remembers, per worker thread, the last [`SLOTS`] credentials it
//! accepted and skips the hash for them. Only successes are kept, so a wrong password
//! still costs a full hash, as in HAProxy. Entries are keyed by a SHA-256 of the
//! userlist's identity (unique per configuration generation: a reload forgets
//! everything), the user name and the password, so the cache holds no clear text and
//! a key cannot be forged without knowing the password. No lock: each thread owns its
//! cache.

use std::cell::RefCell;

use sha2::{Digest, Sha256};

/// How many verified credentials a thread remembers (least recently used evicted).
pub const SLOTS: usize = 64;

/// A cache key: SHA-256 of (userlist id, user, password).
pub type Key = [u8; 32];

/// The key of `user:pass` checked against the userlist whose id is `list_id`.
pub fn key(list_id: u64, user: &[u8], pass: &[u8]) -> Key {
    let mut h = Sha256::new();
    h.update(list_id.to_le_bytes());
    h.update((user.len() as u64).to_le_bytes());
    h.update(user);
    h.update(pass);
    h.finalize().into()
}

/// A small LRU of keys: a linear scan of at most [`SLOTS`] entries is cheaper than any
/// hashing scheme at this size.
#[derive(Debug, Default)]
struct Lru {
    /// (key, last use).
    slots: Vec<(Key, u64)>,
    clock: u64,
}

impl Lru {
    fn hit(&mut self, k: &Key) -> bool {
        self.clock += 1;
        match self.slots.iter_mut().find(|(s, _)| s == k) {
            Some(slot) => {
                slot.1 = self.clock;
                true
            }
            None => false,
        }
    }

    fn insert(&mut self, k: Key) {
        self.clock += 1;
        if self.slots.iter().any(|(s, _)| *s == k) {
            return;
        }
        if self.slots.len() < SLOTS {
            self.slots.push((k, self.clock));
        } else if let Some(old) = self.slots.iter_mut().min_by_key(|(_, t)| *t) {
            *old = (k, self.clock);
        }
    }
}

thread_local! {
    static VERIFIED: RefCell<Lru> = RefCell::new(Lru { slots: Vec::with_capacity(SLOTS), clock: 0 });
}

/// Whether this thread verified `k` recently (and marks it used).
pub fn contains(k: &Key) -> bool {
    VERIFIED.with(|c| c.borrow_mut().hit(k))
}

/// Remembers that `k` verified.
pub fn insert(k: Key) {
    VERIFIED.with(|c| c.borrow_mut().insert(k));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_differ_by_list_user_and_password() {
        let k = key(1, b"alice", b"pw");
        assert_ne!(k, key(2, b"alice", b"pw"), "another userlist or generation");
        assert_ne!(k, key(1, b"alice", b"pw2"));
        assert_ne!(key(1, b"ab", b"c"), key(1, b"a", b"bc"), "the user length is part of the key");
    }

    #[test]
    fn least_recently_used_is_evicted() {
        let mut lru = Lru::default();
        let k = |i: u64| key(i, b"u", b"p");
        for i in 0..SLOTS as u64 {
            lru.insert(k(i));
        }
        assert!(lru.hit(&k(0)), "0 is now the most recent");
        lru.insert(k(1000));
        assert_eq!(lru.slots.len(), SLOTS, "bounded");
        assert!(!lru.hit(&k(1)), "1 was the least recently used");
        assert!(lru.hit(&k(0)) && lru.hit(&k(1000)) && lru.hit(&k(2)));
        lru.insert(k(2));
        assert_eq!(lru.slots.len(), SLOTS, "no duplicate entry");
    }

    #[test]
    fn thread_local_cache() {
        let k = key(7, b"t", b"p");
        assert!(!contains(&k));
        insert(k);
        assert!(contains(&k));
        let other = std::thread::spawn(move || contains(&k)).join().unwrap();
        assert!(!other, "each thread has its own cache");
    }
}
