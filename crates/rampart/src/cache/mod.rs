//! The HTTP cache (`cache` sections, `http-request cache-use`, `http-response
//! cache-store`, `filter cache`): objects stored whole (head and body) in memory
//! bounded by `total-max-size`, shared by the worker's threads, looked up by a hash of
//! the request's `Host` and target, with the `Vary` secondary keys of 2.6
//! (`Accept-Encoding`, `Referer`).
//!
//! Memory is counted in 1 kB blocks as HAProxy's shared context counts it: an object
//! takes its head and body rounded up to whole blocks; when a new object does not fit,
//! the least recently used ones are evicted first. An object is visible only once its
//! whole body arrived (an incomplete or broken body is never stored).
//! HAProxy counterpart: src/cache.c, src/shctx.c.
//!
//! - `rules`: the decisions on the heads (cacheability, lifetime, Vary, 304)

pub mod rules;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use rampart_cfg::model::CacheSection;

use rules::SecKey;

/// HAProxy's block size: objects take whole blocks.
pub const BLOCK: u64 = 1024;

// PERF: a lock, taken only by streams of proxies that use the cache, once per lookup
// and once per store; never on the path of a proxy without cache rules.
#[allow(clippy::disallowed_types)]
type Lock<T> = std::sync::Mutex<T>;

/// The primary key of an object: a SHA-1 of `Host` and the target, as HAProxy's.
pub type Key = [u8; 20];

/// A stored response.
#[derive(Debug)]
pub struct Entry {
    /// The response as HTTP/1 bytes: status line, headers (`Content-Length` for the
    /// body, no other framing), the body.
    pub raw: Vec<u8>,
    /// Where the body starts in `raw`.
    pub head_len: usize,
    /// The `ETag` value, for `If-None-Match`.
    pub etag: Option<Vec<u8>>,
    /// `Last-Modified`, else `Date`, else the time it was stored.
    pub last_modified: i64,
    /// When it was stored (seconds since the epoch), and when it expires.
    pub stored: i64,
    pub expire: i64,
    /// The `Age` the server gave.
    pub age: u32,
    /// The headers the response varies on, and its key for them.
    pub vary: u8,
    pub sec: SecKey,
}

impl Entry {
    /// The head (status line and headers, `Content-Length` last).
    pub fn head(&self) -> &[u8] {
        &self.raw[..self.head_len]
    }

    /// The body.
    pub fn body(&self) -> &[u8] {
        &self.raw[self.head_len..]
    }

    /// Blocks it takes.
    fn blocks(&self) -> u64 {
        (self.raw.len() as u64).div_ceil(BLOCK).max(1)
    }

    /// The `Age` to announce at `now`.
    pub fn age_at(&self, now: i64) -> u64 {
        (now - self.stored).max(0) as u64 + u64::from(self.age)
    }
}

/// One `cache` section at run time.
#[derive(Debug)]
pub struct Cache {
    pub conf: CacheSection,
    store: Lock<Store>,
}

#[derive(Debug, Default)]
struct Store {
    /// The objects of each primary key (several with `Vary`), with their use number.
    objects: HashMap<Key, Vec<(u64, Arc<Entry>)>>,
    /// Use number -> primary key: the least recently used first.
    lru: BTreeMap<u64, Key>,
    next_use: u64,
    /// Blocks in use.
    used: u64,
}

impl Cache {
    pub fn new(conf: CacheSection) -> Cache {
        Cache { conf, store: Lock::new(Store::default()) }
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Blocks the cache holds at most.
    pub fn max_blocks(&self) -> u64 {
        self.conf.total_max_size / BLOCK
    }

    /// The fresh object for `key` whose secondary key matches the request's (`req`
    /// computes it for the headers the object varies on); marks it used.
    pub fn lookup(&self, key: &Key, now: i64, req: impl Fn(u8) -> SecKey) -> Option<Arc<Entry>> {
        let mut st = self.store();
        let st = &mut *st;
        let list = st.objects.get_mut(key)?;
        list.retain(|(_, e)| e.expire > now);
        let pos = list.iter().position(|(_, e)| rules::key_matches(e.sec, req(e.vary), e.vary))?;
        let old_use = list[pos].0;
        st.next_use += 1;
        list[pos].0 = st.next_use;
        let e = list[pos].1.clone();
        st.lru.remove(&old_use);
        st.lru.insert(st.next_use, *key);
        Some(e)
    }

    /// Stores `entry` under `key`, replacing an object with the same secondary key and
    /// evicting the least recently used objects to make room. `false`: not stored (too
    /// many variants of the key).
    pub fn insert(&self, key: Key, entry: Entry) -> bool {
        let blocks = entry.blocks();
        let mut st = self.store();
        let st = &mut *st;
        let list = st.objects.entry(key).or_default();
        if let Some(pos) = list.iter().position(|(_, e)| e.sec == entry.sec && e.vary == entry.vary) {
            let (u, old) = list.remove(pos);
            st.used -= old.blocks();
            st.lru.remove(&u);
        } else if entry.vary != 0 && list.len() >= self.conf.max_secondary_entries as usize {
            return false;
        }
        while st.used + blocks > self.max_blocks() {
            let Some((&u, &k)) = st.lru.iter().next() else { break };
            st.evict(u, k);
        }
        st.next_use += 1;
        let n = st.next_use;
        st.objects.entry(key).or_default().push((n, Arc::new(entry)));
        st.lru.insert(n, key);
        st.used += blocks;
        true
    }

    /// Removes every object of `key` (a successful unsafe request on it).
    pub fn invalidate(&self, key: &Key) {
        let mut st = self.store();
        if let Some(list) = st.objects.remove(key) {
            for (u, e) in list {
                st.used -= e.blocks();
                st.lru.remove(&u);
            }
        }
    }

    /// Blocks in use and objects stored.
    pub fn usage(&self) -> (u64, usize) {
        let st = self.store();
        (st.used, st.objects.values().map(Vec::len).sum())
    }

    /// `show cache`'s lines for this cache: its figures, then one line per object.
    pub fn show(&self, out: &mut String, now: i64) {
        use std::fmt::Write;
        let st = self.store();
        let _ = writeln!(
            out,
            "{:p}: {} (shctx:{:p}, available blocks:{})",
            self,
            self.conf.name,
            &self.store,
            self.max_blocks().saturating_sub(st.used)
        );
        for (key, list) in &st.objects {
            for (_, e) in list {
                let hash = u32::from_be_bytes([key[0], key[1], key[2], key[3]]);
                let _ = writeln!(
                    out,
                    "  {:p} hash:{hash} vary:0x{:016x} size:{} (1 blocks), refcount:{}, expire:{}",
                    Arc::as_ptr(e),
                    (u64::from(e.sec.encodings) << 32) | u64::from(e.sec.referer),
                    e.raw.len(),
                    Arc::strong_count(e) - 1,
                    e.expire - now
                );
            }
        }
    }
}

impl Store {
    fn evict(&mut self, use_no: u64, key: Key) {
        self.lru.remove(&use_no);
        if let Some(list) = self.objects.get_mut(&key) {
            if let Some(pos) = list.iter().position(|(u, _)| *u == use_no) {
                let (_, e) = list.remove(pos);
                self.used -= e.blocks();
            }
            if list.is_empty() {
                self.objects.remove(&key);
            }
        }
    }
}

/// What the cache rules of a stream decided.
#[derive(Debug, Default)]
pub struct CacheState {
    /// The request's primary key, once a `cache-use` rule computed it.
    pub key: Option<Key>,
    /// What the request says of the cache.
    pub req: rules::ReqCache,
    /// The request's secondary key for every header the cache may vary on.
    pub sec: SecKey,
    /// The object to answer with (the cache's index, the object), found by `cache-use`.
    pub hit: Option<(u32, Arc<Entry>)>,
    /// The response to store once its body is whole (set by `cache-store`).
    pub store: Option<Box<Pending>>,
}

impl CacheState {
    pub fn reset(&mut self) {
        *self = CacheState::default();
    }
}

/// A response `cache-store` decided to store: its head as the rule saw it, waiting for
/// the body.
#[derive(Debug)]
pub struct Pending {
    pub cache: u32,
    pub key: Key,
    /// Status line and headers, framing headers left out (no final CRLF).
    pub head: Vec<u8>,
    pub etag: Option<Vec<u8>>,
    pub last_modified: i64,
    pub stored: i64,
    pub expire: i64,
    pub age: u32,
    pub vary: u8,
    pub sec: SecKey,
    /// The proxy whose `cache-store` rule decided (whose cache filter stores).
    pub px: u32,
}

impl Pending {
    /// The object, with its whole `body`.
    pub fn into_entry(self, body: &[u8]) -> Entry {
        let mut raw = self.head;
        raw.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
        let head_len = raw.len();
        raw.extend_from_slice(body);
        Entry {
            raw,
            head_len,
            etag: self.etag,
            last_modified: self.last_modified,
            stored: self.stored,
            expire: self.expire,
            age: self.age,
            vary: self.vary,
            sec: self.sec,
        }
    }
}

/// The primary key of a request, as HAProxy's `sha1_hosturi()`: SHA-1 over its
/// absolute target, or `https://` + `Host` + an origin-form target (so that HTTP/2
/// over TLS and HTTP/1 share objects); `None` without a target or a needed `Host`.
pub fn primary_key(uri: &[u8], has_authority: bool, host: Option<&[u8]>) -> Option<Key> {
    use sha1::Digest;
    if uri.is_empty() {
        return None;
    }
    let mut h = sha1::Sha1::new();
    if !has_authority {
        h.update(b"https://");
        h.update(host?);
    }
    h.update(uri);
    Some(h.finalize().into())
}

/// Seconds since the epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(mb: u64) -> CacheSection {
        CacheSection {
            name: "c".into(),
            total_max_size: mb << 20,
            max_object_size: 0,
            max_age: 60,
            process_vary: false,
            max_secondary_entries: 2,
            span: Default::default(),
        }
    }

    fn entry(len: usize, expire: i64) -> Entry {
        Entry {
            raw: vec![b'x'; len],
            head_len: 0,
            etag: None,
            last_modified: 0,
            stored: 0,
            expire,
            age: 0,
            vary: 0,
            sec: SecKey::default(),
        }
    }

    #[test]
    fn the_least_recently_used_objects_make_room() {
        let c = Cache::new(conf(1));
        for i in 0..4u8 {
            assert!(c.insert([i; 20], entry(300 * 1024, 100)));
        }
        // 4 x 300 blocks do not fit in 1024: the first went
        assert_eq!(c.usage(), (900, 3));
        assert!(c.lookup(&[0; 20], 1, |_| SecKey::default()).is_none());
        // a use makes an object recent
        assert!(c.lookup(&[1; 20], 1, |_| SecKey::default()).is_some());
        assert!(c.insert([9; 20], entry(300 * 1024, 100)));
        assert!(c.lookup(&[1; 20], 1, |_| SecKey::default()).is_some());
        assert!(c.lookup(&[2; 20], 1, |_| SecKey::default()).is_none());
        c.invalidate(&[1; 20]);
        assert_eq!(c.usage().1, 2);
    }

    #[test]
    fn stale_objects_are_not_served() {
        let c = Cache::new(conf(1));
        c.insert([1; 20], entry(10, 5));
        assert!(c.lookup(&[1; 20], 4, |_| SecKey::default()).is_some());
        assert!(c.lookup(&[1; 20], 5, |_| SecKey::default()).is_none());
    }
}
