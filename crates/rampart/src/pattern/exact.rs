//! Exact matching of strings (`-m str`, with or without `-i`) and binaries (`-m bin`)
//! by hash: one probe per lookup whatever the number of patterns, and no allocation
//! (the hash folds case on the fly, eight bytes at a time).
//!
//! HAProxy counterpart: `pat_idx_tree_str()` / `pat_match_str()` and `pat_match_bin()`
//! (src/pattern.c); HAProxy falls back to a list under `-i`, rampart hashes the
//! case-folded bytes instead.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::NONE;

/// A hasher for keys that are already well-mixed 64-bit hashes (or small integers
/// mixed by [`mix`]): it passes the value through.
#[derive(Default, Clone, Copy)]
pub struct PassHasher(u64);

impl Hasher for PassHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = hash_bytes(bytes, false);
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }

    fn write_u32(&mut self, v: u32) {
        self.0 = mix(u64::from(v));
    }

    fn write_u128(&mut self, v: u128) {
        self.0 = mix(mix(v as u64) ^ (v >> 64) as u64);
    }
}

pub type PassBuild = BuildHasherDefault<PassHasher>;

const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// Spreads a 64-bit value over all bits (a multiply-xorshift finalizer).
#[inline]
pub fn mix(mut h: u64) -> u64 {
    h = (h ^ (h >> 32)).wrapping_mul(K);
    h ^ (h >> 29)
}

/// ASCII-lowercases the eight bytes of `x` (bytes >= 0x80 are left alone).
#[inline]
fn lower8(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    let low7 = x & !HIGH;
    let ge_a = low7 + ONES * (0x80 - b'A' as u64);
    let gt_z = low7 + ONES * (0x80 - b'Z' as u64 - 1);
    let upper = ge_a & !gt_z & !x & HIGH;
    x | (upper >> 2)
}

/// Hashes `b`, folding ASCII case when `icase` (so `Foo` and `foo` collide on purpose).
pub fn hash_bytes(b: &[u8], icase: bool) -> u64 {
    let mut h = (b.len() as u64).wrapping_mul(K);
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let mut w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        if icase {
            w = lower8(w);
        }
        h = (h ^ w).wrapping_mul(K).rotate_left(31);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut buf = [0u8; 8];
        buf[..rest.len()].copy_from_slice(rest);
        let mut w = u64::from_le_bytes(buf);
        if icase {
            w = lower8(w);
        }
        h = (h ^ w).wrapping_mul(K).rotate_left(31);
    }
    mix(h)
}

/// Exact patterns, each numbered by its position in the pattern list; a lookup returns
/// the first (lowest-numbered) equal pattern, as HAProxy's list and tree do.
#[derive(Debug, Default)]
pub struct ExactSet {
    icase: bool,
    /// Hash → first slot with that hash.
    heads: HashMap<u64, u32, PassBuild>,
    slots: Vec<Slot>,
}

#[derive(Debug)]
struct Slot {
    key: Box<[u8]>,
    /// The pattern's number.
    idx: u32,
    /// Next slot with the same hash, in insertion order ([`NONE`] ends the chain).
    next: u32,
}

impl ExactSet {
    pub fn new(icase: bool) -> ExactSet {
        ExactSet { icase, ..ExactSet::default() }
    }

    /// Adds pattern number `idx`; numbers are added in increasing order, so that each
    /// chain is in pattern order.
    pub fn insert(&mut self, key: &[u8], idx: u32) {
        let slot = self.slots.len() as u32;
        self.slots.push(Slot { key: key.into(), idx, next: NONE });
        let h = hash_bytes(key, self.icase);
        let Some(&head) = self.heads.get(&h) else {
            self.heads.insert(h, slot);
            return;
        };
        let mut at = head as usize;
        while self.slots[at].next != NONE {
            at = self.slots[at].next as usize;
        }
        self.slots[at].next = slot;
    }

    /// The first pattern equal to `b`.
    pub fn find(&self, b: &[u8]) -> Option<u32> {
        let mut at = *self.heads.get(&hash_bytes(b, self.icase))?;
        while at != NONE {
            let s = &self.slots[at as usize];
            let eq = if self.icase { s.key.eq_ignore_ascii_case(b) } else { *s.key == *b };
            if eq {
                return Some(s.idx);
            }
            at = s.next;
        }
        None
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower8_folds_ascii_letters_only() {
        let all: Vec<u8> = (0..=255u8).collect();
        for c in all.chunks(8) {
            let w = u64::from_le_bytes(c.try_into().unwrap());
            let got = lower8(w).to_le_bytes();
            for (i, &b) in c.iter().enumerate() {
                assert_eq!(got[i], b.to_ascii_lowercase(), "byte {b:#x}");
            }
        }
    }

    #[test]
    fn hash_folds_case_when_asked() {
        assert_eq!(hash_bytes(b"Hello-World.Example", true), hash_bytes(b"hello-world.example", true));
        assert_ne!(hash_bytes(b"Hello", false), hash_bytes(b"hello", false));
        assert_ne!(hash_bytes(b"ab", false), hash_bytes(b"ab\0", false));
        assert_ne!(hash_bytes(b"", false), hash_bytes(b"\0", false));
    }

    #[test]
    fn first_equal_pattern_wins() {
        let mut s = ExactSet::new(false);
        s.insert(b"foo", 0);
        s.insert(b"bar", 1);
        s.insert(b"foo", 2);
        s.insert(b"Foo", 3);
        assert_eq!(s.find(b"foo"), Some(0));
        assert_eq!(s.find(b"Foo"), Some(3));
        assert_eq!(s.find(b"FOO"), None);
        assert_eq!(s.find(b"fo"), None);
        assert_eq!(s.find(b""), None);
        let mut i = ExactSet::new(true);
        i.insert(b"Foo", 0);
        i.insert(b"foo", 1);
        i.insert(b"www.Example.COM", 2);
        assert_eq!(i.find(b"FOO"), Some(0));
        assert_eq!(i.find(b"WWW.example.com"), Some(2));
        assert_eq!(i.find(b"www.example.co"), None);
    }

    #[test]
    fn many_patterns() {
        let mut s = ExactSet::new(true);
        for n in 0..20_000u32 {
            s.insert(format!("host{n}.example.com").as_bytes(), n);
        }
        assert_eq!(s.len(), 20_000);
        assert_eq!(s.find(b"HOST12345.example.com"), Some(12345));
        assert_eq!(s.find(b"host20000.example.com"), None);
    }
}
