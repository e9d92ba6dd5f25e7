//! A stick table: entries by key, bounded by `size`, forgotten `expire` after their
//! last use, the least recently used unreferenced ones purged first when the table is
//! full (or new keys refused, with `nopurge`).
//! HAProxy counterpart: `struct stktable` and `stktable_get_entry()`,
//! `stktable_trash_oldest()`, `process_table_expire()` (src/stick_table.c).
//!
//! Sharded: a key hashes to one of [`SHARDS`] shards, each a lock over a hash map and
//! an intrusive list in last-use order. Every use of an entry sets its expiry to now +
//! `expire` and moves it to the list's tail, so the head is both the least recently
//! used entry and the next to expire: expiry and purging pop heads, never scan.
//!
//! PERF: a std mutex per shard (futex-based, one atomic when uncontended, as fast as
//! parking_lot's); held for a hash lookup and a few index writes, never across an
//! await. DESIGN.md's "sharded locks" for tables. The data rows are atomics updated
//! outside the lock (`data`).

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rampart_cfg::model::{StickKeyType, StickTableDef};

use super::data::{Layout, Row};
use super::key::Key;
use super::sync::TableSync;

/// Shards per table (a power of two).
pub const SHARDS: usize = 16;
const NIL: u32 = u32::MAX;

#[allow(clippy::disallowed_types)]
type Lock<T> = std::sync::Mutex<T>;

/// Whether tick `exp` is at or before `now` (ticks wrap).
fn expired(exp: u32, now: u32) -> bool {
    (exp.wrapping_sub(now) as i32) <= 0
}

struct Node {
    key: Key,
    row: Row,
    /// When the entry expires (a millisecond tick), if the table has `expire`.
    exp: u32,
    /// Its last local update number (replicated tables; 0: none).
    upd: u64,
    prev: u32,
    next: u32,
}

/// One shard: its entries by key, and their list in last-use order (head: least
/// recently used).
struct Shard {
    map: HashMap<Key, u32>,
    nodes: Vec<Option<Node>>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
    /// Replicated tables: the entries changed here, by update number.
    updates: BTreeMap<u64, u32>,
}

impl Shard {
    fn new() -> Shard {
        Shard {
            map: HashMap::new(),
            nodes: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            updates: BTreeMap::new(),
        }
    }

    fn node(&self, i: u32) -> &Node {
        self.nodes[i as usize].as_ref().expect("linked node")
    }

    fn node_mut(&mut self, i: u32) -> &mut Node {
        self.nodes[i as usize].as_mut().expect("linked node")
    }

    fn unlink(&mut self, i: u32) {
        let (prev, next) = {
            let n = self.node(i);
            (n.prev, n.next)
        };
        match prev {
            NIL => self.head = next,
            p => self.node_mut(p).next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.node_mut(n).prev = prev,
        }
    }

    fn push_tail(&mut self, i: u32) {
        let tail = self.tail;
        {
            let n = self.node_mut(i);
            n.prev = tail;
            n.next = NIL;
        }
        match tail {
            NIL => self.head = i,
            t => self.node_mut(t).next = i,
        }
        self.tail = i;
    }

    /// Marks entry `i` used now: it expires at `exp` and becomes the most recent.
    fn touch(&mut self, i: u32, exp: u32) {
        self.node_mut(i).exp = exp;
        if self.tail != i {
            self.unlink(i);
            self.push_tail(i);
        }
    }

    fn insert(&mut self, key: Key, row: Row, exp: u32) -> u32 {
        let node = Node { key: key.clone(), row, exp, upd: 0, prev: NIL, next: NIL };
        let i = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = Some(node);
                i
            }
            None => {
                self.nodes.push(Some(node));
                (self.nodes.len() - 1) as u32
            }
        };
        self.push_tail(i);
        self.map.insert(key, i);
        i
    }

    fn remove(&mut self, i: u32) -> Node {
        self.unlink(i);
        let n = self.nodes[i as usize].take().expect("linked node");
        self.map.remove(&n.key);
        if n.upd != 0 {
            self.updates.remove(&n.upd);
        }
        self.free.push(i);
        n
    }

    /// Removes the least recently used entry no stream holds, looking at most at
    /// `reach` entries from the head. Returns whether one went.
    fn evict_one(&mut self, reach: usize) -> bool {
        let mut i = self.head;
        for _ in 0..reach {
            if i == NIL {
                return false;
            }
            let n = self.node(i);
            if n.row.users() == 0 {
                self.remove(i);
                return true;
            }
            i = n.next;
        }
        false
    }
}

/// A stick table of one proxy (named after it).
pub struct StickTable {
    pub name: Box<str>,
    pub key_type: StickKeyType,
    /// The most entries it holds.
    pub size: u32,
    /// `expire`, in milliseconds.
    pub expire: Option<u32>,
    pub nopurge: bool,
    /// What `server_key` names servers by (`srvkey`).
    pub srvkey: rampart_cfg::model::SrvKey,
    pub layout: Layout,
    shards: Box<[Lock<Shard>]>,
    used: AtomicU32,
    hasher: RandomState,
    /// Replication through a `peers` section (`None`: not replicated).
    pub sync: Option<TableSync>,
}

impl std::fmt::Debug for StickTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StickTable").field("name", &self.name).field("used", &self.used()).finish_non_exhaustive()
    }
}

/// One entry as the runtime API sees it.
pub struct EntryView {
    pub key: Key,
    pub row: Row,
    /// Milliseconds before it expires (0 without `expire`).
    pub exp_in: i64,
}

impl StickTable {
    pub fn new(name: &str, def: &StickTableDef) -> StickTable {
        StickTable {
            name: name.into(),
            key_type: def.key,
            size: u32::try_from(def.size).unwrap_or(u32::MAX),
            expire: def.expire.map(|d| u32::try_from(d.as_millis()).unwrap_or(i32::MAX as u32)),
            nopurge: def.nopurge,
            srvkey: def.srvkey,
            layout: Layout::new(def),
            shards: (0..SHARDS).map(|_| Lock::new(Shard::new())).collect(),
            used: AtomicU32::new(0),
            hasher: RandomState::new(),
            sync: None,
        }
    }

    /// The table, replicated through a `peers` section.
    pub fn replicated(mut self, changed: std::sync::Arc<tokio::sync::Notify>) -> StickTable {
        self.sync = Some(TableSync::new(changed));
        self
    }

    /// Entries in the table.
    pub fn used(&self) -> u32 {
        self.used.load(Relaxed)
    }

    fn shard_of(&self, key: &Key) -> usize {
        (self.hasher.hash_one(key) as usize) & (SHARDS - 1)
    }

    fn lock(&self, s: usize) -> std::sync::MutexGuard<'_, Shard> {
        // a shard stays consistent even if a holder panicked: nothing panics while held
        self.shards[s].lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn exp_from(&self, now: u32) -> u32 {
        now.wrapping_add(self.expire.unwrap_or(0))
    }

    /// Forgets the shard's expired entries (those a stream holds live on: their
    /// expiry restarts).
    fn expire_shard(&self, sh: &mut Shard, now: u32) {
        if self.expire.is_none() {
            return;
        }
        let mut budget = sh.map.len();
        while sh.head != NIL && budget > 0 {
            budget -= 1;
            let i = sh.head;
            let n = sh.node(i);
            if !expired(n.exp, now) {
                break;
            }
            if n.row.users() > 0 {
                sh.touch(i, self.exp_from(now));
                continue;
            }
            sh.remove(i);
            self.used.fetch_sub(1, Relaxed);
        }
    }

    /// The entry of `key`, if any, without marking it used (fetches like `src_*`).
    pub fn lookup(&self, key: &Key) -> Option<Row> {
        self.lookup_at(key, super::now_ms())
    }

    fn lookup_at(&self, key: &Key, now: u32) -> Option<Row> {
        let mut sh = self.lock(self.shard_of(key));
        self.expire_shard(&mut sh, now);
        sh.map.get(key).map(|&i| sh.node(i).row.clone())
    }

    /// The entry of `key`, created if missing, marked used now (`track-sc`, `stick`
    /// storing). `None` when the table is full and nothing can be purged (`nopurge`,
    /// or every entry in use).
    pub fn get_or_create(&self, key: &Key) -> Option<Row> {
        self.get_or_create_at(key, super::now_ms())
    }

    fn get_or_create_at(&self, key: &Key, now: u32) -> Option<Row> {
        let s = self.shard_of(key);
        {
            let mut sh = self.lock(s);
            self.expire_shard(&mut sh, now);
            if let Some(&i) = sh.map.get(key) {
                sh.touch(i, self.exp_from(now));
                return Some(sh.node(i).row.clone());
            }
            if self.used() < self.size {
                return Some(self.insert(&mut sh, key, now));
            }
            if self.nopurge {
                return None;
            }
            if sh.evict_one(8) {
                return Some(self.replace(&mut sh, key, now));
            }
        }
        // nothing to purge in the key's shard: take room in another (one lock at a time)
        let evicted = (1..SHARDS).any(|d| self.lock((s + d) % SHARDS).evict_one(8));
        let mut sh = self.lock(s);
        if let Some(&i) = sh.map.get(key) {
            if evicted {
                self.used.fetch_sub(1, Relaxed);
            }
            sh.touch(i, self.exp_from(now));
            return Some(sh.node(i).row.clone());
        }
        evicted.then(|| self.replace(&mut sh, key, now))
    }

    fn insert(&self, sh: &mut Shard, key: &Key, now: u32) -> Row {
        self.used.fetch_add(1, Relaxed);
        self.replace(sh, key, now)
    }

    /// Inserts a new entry in the room an eviction left (`used` unchanged).
    fn replace(&self, sh: &mut Shard, key: &Key, now: u32) -> Row {
        let row = self.layout.new_row();
        sh.insert(key.clone(), row.clone(), self.exp_from(now));
        row
    }

    /// Marks the entry of `key` used now, if it exists.
    pub fn touch(&self, key: &Key) {
        let now = super::now_ms();
        let mut sh = self.lock(self.shard_of(key));
        if let Some(&i) = sh.map.get(key) {
            sh.touch(i, self.exp_from(now));
        }
    }

    /// Records a local change of the entry of `key` for the peers (HAProxy's
    /// `stktable_touch_local()`): nothing for a table that is not replicated.
    #[inline]
    pub fn touch_local(&self, key: &Key) {
        if let Some(sync) = &self.sync {
            self.touch_local_sync(sync, key);
        }
    }

    fn touch_local_sync(&self, sync: &TableSync, key: &Key) {
        {
            let mut sh = self.lock(self.shard_of(key));
            let Some(&i) = sh.map.get(key) else { return };
            let upd = sync.next();
            let old = std::mem::replace(&mut sh.node_mut(i).upd, upd);
            if old != 0 {
                sh.updates.remove(&old);
            }
            sh.updates.insert(upd, i);
        }
        sync.wake();
    }

    /// The entries changed here after update `after`, in update order, at most `max`:
    /// (update number, key, data, milliseconds before expiry).
    pub fn updates_after(&self, after: u64, max: usize) -> Vec<(u64, EntryView)> {
        let now = super::now_ms();
        let mut out = Vec::new();
        for s in 0..SHARDS {
            let sh = self.lock(s);
            for (&upd, &i) in sh.updates.range(after + 1..).take(max) {
                let n = sh.node(i);
                out.push((upd, EntryView { key: n.key.clone(), row: n.row.clone(), exp_in: self.exp_in(n.exp, now) }));
            }
        }
        out.sort_unstable_by_key(|e| e.0);
        out.truncate(max);
        out
    }

    fn exp_in(&self, exp: u32, now: u32) -> i64 {
        if self.expire.is_some() {
            i64::from(exp.wrapping_sub(now) as i32).max(0)
        } else {
            0
        }
    }

    /// The entry of `key` as a peer sent it: created if missing (within `size`, as any
    /// new entry), expiring in `exp_ms` (the table's `expire` when `None`), without a
    /// local update number (what peers learn is not pushed back to them). `None` when
    /// the table is full of entries in use.
    pub fn learn(&self, key: &Key, exp_ms: Option<u32>) -> Option<Row> {
        let now = super::now_ms();
        let row = self.get_or_create_at(key, now)?;
        if let Some(ms) = exp_ms.filter(|_| self.expire.is_some()) {
            let mut sh = self.lock(self.shard_of(key));
            if let Some(&i) = sh.map.get(key) {
                sh.node_mut(i).exp = now.wrapping_add(ms);
            }
        }
        Some(row)
    }

    /// The keys of every entry (what a full resync teaches), in no order.
    pub fn keys(&self) -> Vec<Key> {
        let mut out = Vec::with_capacity(self.used() as usize);
        for s in 0..SHARDS {
            out.extend(self.lock(s).map.keys().cloned());
        }
        out
    }

    /// The entry of `key` with its expiry, if any (no use recorded).
    pub fn view(&self, key: &Key) -> Option<EntryView> {
        let now = super::now_ms();
        let sh = self.lock(self.shard_of(key));
        let n = sh.node(*sh.map.get(key)?);
        Some(EntryView { key: n.key.clone(), row: n.row.clone(), exp_in: self.exp_in(n.exp, now) })
    }

    /// Removes the entry of `key` unless a stream holds it; `None`: no such entry.
    pub fn remove(&self, key: &Key) -> Option<bool> {
        let mut sh = self.lock(self.shard_of(key));
        let &i = sh.map.get(key)?;
        if sh.node(i).row.users() > 0 {
            return Some(false);
        }
        sh.remove(i);
        self.used.fetch_sub(1, Relaxed);
        Some(true)
    }

    /// Removes every entry `keep` refuses that no stream holds; returns how many went.
    pub fn clear(&self, mut drop_it: impl FnMut(&Key, &Row) -> bool) -> usize {
        let mut n = 0;
        for s in 0..SHARDS {
            let mut sh = self.lock(s);
            let gone: Vec<u32> = sh
                .map
                .values()
                .copied()
                .filter(|&i| {
                    let node = sh.node(i);
                    node.row.users() == 0 && drop_it(&node.key, &node.row)
                })
                .collect();
            for i in gone {
                sh.remove(i);
                n += 1;
            }
        }
        self.used.fetch_sub(n as u32, Relaxed);
        n
    }

    /// Forgets expired entries in every shard (the periodic task).
    pub fn purge_expired(&self) {
        self.purge_expired_at(super::now_ms());
    }

    fn purge_expired_at(&self, now: u32) {
        for s in 0..SHARDS {
            self.expire_shard(&mut self.lock(s), now);
        }
    }

    /// `e` with its expiry filled in, as [`StickTable::snapshot`] gives it.
    pub fn snapshot_one(&self, mut e: EntryView) -> EntryView {
        let now = super::now_ms();
        let sh = self.lock(self.shard_of(&e.key));
        if let (Some(&i), Some(_)) = (sh.map.get(&e.key), self.expire) {
            e.exp_in = i64::from(sh.node(i).exp.wrapping_sub(now) as i32).max(0);
        }
        e
    }

    /// A copy of the entries, in key order (as HAProxy's key tree lists them).
    pub fn snapshot(&self) -> Vec<EntryView> {
        let now = super::now_ms();
        let mut out = Vec::with_capacity(self.used() as usize);
        for s in 0..SHARDS {
            let mut sh = self.lock(s);
            self.expire_shard(&mut sh, now);
            for &i in sh.map.values() {
                let n = sh.node(i);
                let exp_in = self.exp_in(n.exp, now);
                out.push(EntryView { key: n.key.clone(), row: n.row.clone(), exp_in });
            }
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_cfg::model::{DataType, StoreSpec};
    use std::time::Duration;

    fn table(size: u64, expire: Option<u64>, nopurge: bool) -> StickTable {
        let def = StickTableDef {
            key: StickKeyType::Integer,
            size,
            expire: expire.map(Duration::from_millis),
            nopurge,
            store: vec![StoreSpec { data: DataType::Gpc0, period: None, nb: 1 }],
            peers: None,
            srvkey: Default::default(),
            write_to: None,
            span: Default::default(),
        };
        StickTable::new("t", &def)
    }

    const T0: u32 = 0x8000_0000;

    #[test]
    fn a_full_table_purges_the_least_recently_used() {
        let t = table(100, None, false);
        for k in 0..100 {
            t.get_or_create_at(&Key::Int(k), T0 + k).unwrap();
        }
        // key 0 used again: key 1 is now the oldest
        t.get_or_create_at(&Key::Int(0), T0 + 200).unwrap();
        for k in 1000..1300 {
            t.get_or_create_at(&Key::Int(k), T0 + k).unwrap();
            assert!(t.used() <= 100);
        }
        assert_eq!(t.used(), 100);
        // the recent keys stay; key 0, touched late, went before the newest ones
        assert!(t.lookup_at(&Key::Int(1299), T0 + 1300).is_some());
        assert!(t.lookup_at(&Key::Int(1), T0 + 1300).is_none());
    }

    #[test]
    fn entries_in_use_are_never_purged() {
        let t = table(2, None, false);
        let held = t.get_or_create_at(&Key::Int(1), T0).unwrap();
        let held2 = t.get_or_create_at(&Key::Int(2), T0).unwrap();
        assert!(t.get_or_create_at(&Key::Int(3), T0).is_none());
        drop(held2);
        assert!(t.get_or_create_at(&Key::Int(3), T0).is_some());
        assert!(t.lookup_at(&Key::Int(1), T0).is_some());
        assert_eq!(t.remove(&Key::Int(1)), Some(false));
        drop(held);
        assert_eq!(t.remove(&Key::Int(1)), Some(true));
        assert_eq!(t.used(), 1);
    }

    #[test]
    fn nopurge_refuses_new_keys() {
        let t = table(3, None, true);
        for k in 0..3 {
            t.get_or_create_at(&Key::Int(k), T0).unwrap();
        }
        assert!(t.get_or_create_at(&Key::Int(9), T0).is_none());
        assert!(t.get_or_create_at(&Key::Int(1), T0).is_some());
        assert_eq!(t.used(), 3);
    }

    #[test]
    fn entries_expire_after_their_last_use() {
        let t = table(100, Some(1000), false);
        t.get_or_create_at(&Key::Int(1), T0).unwrap();
        t.get_or_create_at(&Key::Int(2), T0 + 500).unwrap();
        t.get_or_create_at(&Key::Int(1), T0 + 900).unwrap();
        assert!(t.lookup_at(&Key::Int(2), T0 + 1499).is_some());
        assert!(t.lookup_at(&Key::Int(2), T0 + 1500).is_none());
        assert!(t.lookup_at(&Key::Int(1), T0 + 1500).is_some());
        assert_eq!(t.used(), 1);
        // held by a stream: it outlives its expiry
        let held = t.get_or_create_at(&Key::Int(3), T0 + 1500).unwrap();
        assert!(t.lookup_at(&Key::Int(3), T0 + 5000).is_some());
        drop(held);
        t.purge_expired_at(T0 + 5000);
        assert_eq!(t.used(), 1);
        assert!(t.lookup_at(&Key::Int(3), T0 + 9000).is_none());
        assert_eq!(t.used(), 0);
    }

    #[test]
    fn clear_keeps_entries_in_use() {
        let t = table(10, None, false);
        let held = t.get_or_create_at(&Key::Int(1), T0).unwrap();
        t.get_or_create_at(&Key::Int(2), T0).unwrap();
        assert_eq!(t.clear(|_, _| true), 1);
        assert_eq!(t.used(), 1);
        drop(held);
    }
}
