//! Pattern sources and their compiled views, ready for runtime updates.
//!
//! A [`PatRef`] is a list of patterns (and, for maps, values) as written: the lines of
//! one file, loaded once per path and shared by every ACL and map that names it
//! ([`PatRefs`]), or the inline patterns of one ACL. Each user compiles it for its
//! match method into a [`PatIndex`], whose current [`Snapshot`] sits behind an
//! `ArcSwap`: the request path loads it without lock or allocation.
//!
//! An update (the runtime API's `add map`, `del map`, `set map`, `clear map`, `add acl`
//! ...) goes through [`PatRef::update`]: it edits a copy of the entries, compiles a new
//! snapshot for every live view (if one fails, nothing changes and the error is
//! returned), then swaps them all in. Streams that loaded the old snapshot finish
//! with it; the next lookup sees the new one. Updates take a mutex, never the request
//! path.
//!
//! Entries carry a version (HAProxy's generation): only those of the current version
//! are compiled into the snapshots; `prepare` reserves a new version, entries are added
//! to it unseen, and `commit` makes it current and drops the older ones, all at once.
//!
//! HAProxy counterpart: `struct pat_ref`, `struct pattern_expr`, `pat_ref_*()`,
//! `pattern_read_from_file()`, `pat_ref_read_from_file[_smp]()` (src/pattern.c).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use arc_swap::ArcSwap;

pub use super::refs::PatRefs;
use super::value::{parse_value, MapValue, ValueKind};
use super::{MatchMethod, PatFlags, PatternSet};

/// The identifiers of entries (what `show map` prints where HAProxy prints the
/// entry's address): unique in the process, never reused.
static NEXT_ENTRY_ID: AtomicU64 = AtomicU64::new(1);

fn next_entry_id() -> u64 {
    NEXT_ENTRY_ID.fetch_add(1, Ordering::Relaxed)
}

/// One pattern line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatEntry {
    pub key: String,
    /// The value of a map line (two-column sources only, or given by `add map`).
    pub value: Option<String>,
    /// Line in the source file (0: not from a file).
    pub line: u32,
    /// The entry's identifier (`#0x<id>` in `del map`/`set map`); 0 until the entry
    /// joins a [`PatRef`].
    pub id: u64,
    /// The version the entry belongs to (HAProxy's `gen_id`).
    pub gen: u32,
}

impl PatEntry {
    pub fn new(key: impl Into<String>, value: Option<String>, line: u32) -> PatEntry {
        PatEntry { key: key.into(), value, line, id: 0, gen: 0 }
    }
}

/// The compiled form of a source for one use: the pattern index and, for maps, the
/// parsed values (by pattern number).
#[derive(Debug)]
pub struct Snapshot {
    pub set: PatternSet,
    pub values: Box<[MapValue]>,
}

// The update lock is taken while loading the configuration and by runtime-API
// updates, never on the request path (which clippy.toml keeps free of std Mutex).
#[allow(clippy::disallowed_types)]
type UpdateLock<T> = std::sync::Mutex<T>;

/// A list of patterns as written: a file, or an ACL's inline patterns.
#[derive(Debug)]
pub struct PatRef {
    /// The file path; empty for inline patterns.
    pub path: String,
    /// Key and value per line (`-M`, maps) rather than one pattern per line.
    pub two_cols: bool,
    /// The runtime API's `#<id>`: `-u <id>`, or numbered once the configuration is
    /// loaded ([`PatRefs::finish`]); -1 until then.
    unique_id: AtomicI32,
    /// `-u <id>` was given.
    pub(super) fixed_id: bool,
    /// Where the configuration first used it (file, line) and the order it was
    /// created in: HAProxy numbers references in the order it creates them.
    pub(super) created: (Option<Arc<str>>, u32, u64),
    inner: UpdateLock<RefInner>,
}

#[derive(Debug, Default)]
struct RefInner {
    entries: Vec<PatEntry>,
    users: Vec<Weak<PatIndex>>,
    /// The version lookups see, and the last one `prepare` handed out.
    curr_gen: u32,
    next_gen: u32,
    /// HAProxy's `entry_cnt`: one per entry indexed in each distinct expression, less
    /// one per entry removed (kept as HAProxy counts it, for `show map`).
    entry_cnt: u64,
    /// What `show map`/`show acl` describe it with.
    display: String,
}

/// What `show map`/`show acl` print about a reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefStatus {
    pub curr_gen: u32,
    pub next_gen: u32,
    pub entry_cnt: u64,
    pub display: String,
}

/// One compiled view of a [`PatRef`]: a match method, flags and value type.
#[derive(Debug)]
pub struct PatIndex {
    pub src: Arc<PatRef>,
    pub method: MatchMethod,
    pub flags: PatFlags,
    /// How map values are read; `None` for ACLs.
    pub values: Option<ValueKind>,
    /// The snapshot compiled at startup, read in place until the first update (it is
    /// kept afterwards: samples may still borrow from it).
    base: Arc<Snapshot>,
    /// Set by the first update: from then on, read `cur`.
    changed: AtomicBool,
    cur: ArcSwap<Snapshot>,
}

impl PatIndex {
    fn new(
        src: Arc<PatRef>,
        method: MatchMethod,
        flags: PatFlags,
        values: Option<ValueKind>,
        snap: Snapshot,
    ) -> PatIndex {
        let base = Arc::new(snap);
        let cur = ArcSwap::new(base.clone());
        PatIndex { src, method, flags, values, base, changed: AtomicBool::new(false), cur }
    }

    /// The startup snapshot, as long as no update replaced it: borrowing from it is
    /// safe for the life of the view.
    #[inline]
    pub fn unchanged(&self) -> Option<&Snapshot> {
        (!self.changed.load(Ordering::Acquire)).then_some(&*self.base)
    }

    /// The current snapshot (lock-free; hold it only for one lookup).
    #[inline]
    pub fn load(&self) -> arc_swap::Guard<Arc<Snapshot>> {
        self.cur.load()
    }

    /// Runs `f` on the current snapshot.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(&Snapshot) -> R) -> R {
        match self.unchanged() {
            Some(s) => f(s),
            None => f(&self.load()),
        }
    }

    fn replace(&self, snap: Snapshot) {
        self.cur.store(Arc::new(snap));
        self.changed.store(true, Ordering::Release);
    }

    /// Which of HAProxy's expressions this view is: HAProxy shares one expression
    /// between users whose parse, index and value functions and flags agree (so
    /// `sub`, `dir`, `dom` and `end` share one, as do `int` and `len`).
    pub fn expr_class(&self) -> (u8, PatFlags, Option<ValueKind>) {
        use MatchMethod::*;
        let class = match self.method {
            Found | Bool => 0,
            Int | Len => 1,
            Ip => 2,
            Bin => 3,
            Str => 4,
            Beg => 5,
            Sub | Dir | Dom | End => 6,
            Reg => 7,
            Regm => 8,
            Meth => 9,
            Ver => 10,
            Auth => 11,
        };
        (class, self.flags, self.values)
    }
}

/// The entries of version `gen`, in order.
fn of_gen(entries: &[PatEntry], gen: u32) -> Vec<&PatEntry> {
    entries.iter().filter(|e| e.gen == gen).collect()
}

/// Compiles `entries` into a snapshot. Errors name the file line, as HAProxy's
/// `"... at line N of file 'F'"`.
fn compile(
    src: &PatRef,
    entries: &[&PatEntry],
    method: MatchMethod,
    flags: PatFlags,
    values: Option<ValueKind>,
    resolve: bool,
    locate: bool,
) -> Result<Snapshot, String> {
    // at run time (`locate` false), errors do not name the file line, as HAProxy's CLI
    let at = |i: usize, e: String| match entries.get(i) {
        Some(ent) if ent.line > 0 && locate => format!("{e} at line {} of file '{}'", ent.line, src.path),
        _ => e,
    };
    let mut vals = Vec::new();
    if let Some(kind) = values {
        vals.reserve(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let text = e.value.as_deref().unwrap_or_default();
            vals.push(parse_value(kind, text).ok_or_else(|| at(i, format!("unable to parse '{text}'")))?);
        }
    }
    let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
    let set = PatternSet::build(method, flags, &keys, resolve).map_err(|(i, e)| at(i, e))?;
    Ok(Snapshot { set, values: vals.into() })
}

/// The number of distinct HAProxy expressions among `users`.
fn expr_count(users: &[Arc<PatIndex>]) -> u64 {
    let mut seen = Vec::new();
    for u in users {
        let c = u.expr_class();
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    seen.len() as u64
}

/// Whether `gen` lies in `from..=to`, versions wrapping around as HAProxy's do.
fn in_range(gen: u32, from: u32, to: u32) -> bool {
    gen.wrapping_sub(from) <= to.wrapping_sub(from)
}

impl PatRef {
    pub(super) fn new(
        path: String,
        two_cols: bool,
        unique_id: Option<i32>,
        mut entries: Vec<PatEntry>,
        created: (Option<Arc<str>>, u32, u64),
        display: String,
    ) -> PatRef {
        for e in entries.iter_mut().filter(|e| e.id == 0) {
            e.id = next_entry_id();
        }
        PatRef {
            path,
            two_cols,
            unique_id: AtomicI32::new(unique_id.unwrap_or(-1)),
            fixed_id: unique_id.is_some(),
            created,
            inner: UpdateLock::new(RefInner { entries, display, ..RefInner::default() }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RefInner> {
        // A panic while holding the lock cannot leave the entries half-edited (edits
        // are made on a copy), so a poisoned lock is still consistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The runtime API's `#<id>` (-1 before the configuration is numbered).
    pub fn unique_id(&self) -> i32 {
        self.unique_id.load(Ordering::Relaxed)
    }

    pub(super) fn set_unique_id(&self, id: i32) {
        self.unique_id.store(id, Ordering::Relaxed);
    }

    /// The name `show map` prints between parentheses and commands accept: the file
    /// path; none for inline patterns.
    pub fn reference(&self) -> Option<&str> {
        (!self.path.is_empty()).then_some(self.path.as_str())
    }

    /// Whether `show map` lists it (a two-column file); `show acl` lists the others.
    pub fn is_map(&self) -> bool {
        self.two_cols
    }

    pub(super) fn extend_display(&self, more: &str) {
        self.lock().display.push_str(more);
    }

    /// Versions, entry count and description (`show map`, `show acl`).
    pub fn status(&self) -> RefStatus {
        let inner = self.lock();
        RefStatus {
            curr_gen: inner.curr_gen,
            next_gen: inner.next_gen,
            entry_cnt: inner.entry_cnt,
            display: inner.display.clone(),
        }
    }

    /// A copy of the entries of the current version (`show map`, `show acl`).
    pub fn entries(&self) -> Vec<PatEntry> {
        let inner = self.lock();
        of_gen(&inner.entries, inner.curr_gen).into_iter().cloned().collect()
    }

    /// A copy of the entries of version `gen` (`show map @<ver>`).
    pub fn entries_of(&self, gen: u32) -> Vec<PatEntry> {
        of_gen(&self.lock().entries, gen).into_iter().cloned().collect()
    }

    /// The view of this source for `method`, `flags` and `values`: an existing one is
    /// shared (HAProxy's `pattern_new_expr` reuse), else one is compiled.
    pub fn index(
        self: &Arc<Self>,
        method: MatchMethod,
        flags: PatFlags,
        values: Option<ValueKind>,
        resolve: bool,
    ) -> Result<Arc<PatIndex>, String> {
        let mut inner = self.lock();
        inner.users.retain(|w| w.strong_count() > 0);
        let same = |u: &PatIndex| u.method == method && u.flags == flags && u.values == values;
        let users: Vec<Arc<PatIndex>> = inner.users.iter().filter_map(Weak::upgrade).collect();
        if let Some(u) = users.iter().find(|u| same(u)) {
            return Ok(u.clone());
        }
        let snap = compile(self, &of_gen(&inner.entries, inner.curr_gen), method, flags, values, resolve, true)?;
        let idx = Arc::new(PatIndex::new(self.clone(), method, flags, values, snap));
        if !users.iter().any(|u| u.expr_class() == idx.expr_class()) {
            inner.entry_cnt += inner.entries.len() as u64;
        }
        inner.users.push(Arc::downgrade(&idx));
        Ok(idx)
    }

    /// Runs `f` over the entries of the current version and the live views (in the
    /// order they were created) under the update lock: no update lands in between, so
    /// what `f` reads of the entries and of the views' compiled snapshots is one
    /// version (`get map`, `get acl`). `f` must not update this reference.
    pub fn read_consistent<R>(&self, f: impl FnOnce(&[&PatEntry], &[Arc<PatIndex>]) -> R) -> R {
        let inner = self.lock();
        let views: Vec<Arc<PatIndex>> = inner.users.iter().filter_map(Weak::upgrade).collect();
        f(&of_gen(&inner.entries, inner.curr_gen), &views)
    }

    /// The live views, in the order they were created.
    pub fn views(&self) -> Vec<Arc<PatIndex>> {
        self.lock().users.iter().filter_map(Weak::upgrade).collect()
    }

    /// Applies `edit` to the entries and recompiles every live view; all or nothing.
    /// Host names are not resolved at run time (HAProxy resolves only at startup).
    pub fn update(&self, edit: impl FnOnce(&mut Vec<PatEntry>)) -> Result<(), String> {
        self.edit(|e, _| {
            edit(e);
            Ok(())
        })
    }

    /// The general update: `edit` gets a copy of the entries and the current version
    /// (which it may change, `commit`), and may refuse. New entries get an identifier.
    /// Views are recompiled when the entries of the current version change; new or
    /// changed entries of another version are checked against every view, as HAProxy
    /// indexes them at once. All or nothing.
    fn edit<R>(&self, edit: impl FnOnce(&mut Vec<PatEntry>, &mut u32) -> Result<R, String>) -> Result<R, String> {
        let mut inner = self.lock();
        let mut entries = inner.entries.clone();
        let mut curr = inner.curr_gen;
        let out = edit(&mut entries, &mut curr)?;
        for e in entries.iter_mut().filter(|e| e.id == 0) {
            e.id = next_entry_id();
        }
        inner.users.retain(|w| w.strong_count() > 0);
        let users: Vec<Arc<PatIndex>> = inner.users.iter().filter_map(Weak::upgrade).collect();
        let old: HashMap<u64, &PatEntry> = inner.entries.iter().map(|e| (e.id, e)).collect();
        let fresh: Vec<&PatEntry> =
            entries.iter().filter(|e| e.gen != curr && old.get(&e.id).is_none_or(|o| *o != *e)).collect();
        let before = of_gen(&inner.entries, inner.curr_gen);
        let after = of_gen(&entries, curr);
        let recompile = before != after;
        let mut snaps = Vec::new();
        for u in &users {
            if !fresh.is_empty() {
                compile(self, &fresh, u.method, u.flags, u.values, false, false)?;
            }
            if recompile {
                snaps.push(compile(self, &after, u.method, u.flags, u.values, false, false)?);
            }
        }
        for (u, s) in users.iter().zip(snaps) {
            u.replace(s);
        }
        let added = entries.iter().filter(|e| !old.contains_key(&e.id)).count() as u64;
        let kept = entries.iter().filter(|e| old.contains_key(&e.id)).count();
        let removed = (inner.entries.len() - kept) as u64;
        let exprs = expr_count(&users);
        inner.entry_cnt = (inner.entry_cnt + added * exprs).saturating_sub(removed);
        inner.entries = entries;
        inner.curr_gen = curr;
        Ok(out)
    }

    /// `add map` / `add acl`, to the current version.
    pub fn add(&self, key: &str, value: Option<&str>) -> Result<(), String> {
        self.add_to(None, &[(key, value)])
    }

    /// Adds entries to version `gen` (the current one when `None`), in order; all or
    /// nothing (the payload form of `add map` uses [`PatRef::add_each`]).
    pub fn add_to(&self, gen: Option<u32>, kv: &[(&str, Option<&str>)]) -> Result<(), String> {
        self.edit(|e, curr| {
            let gen = gen.unwrap_or(*curr);
            e.extend(kv.iter().map(|(k, v)| PatEntry { gen, ..PatEntry::new(*k, v.map(Into::into), 0) }));
            Ok(())
        })
    }

    /// HAProxy's count after an entry failed to load: each expression before the one
    /// that refused it indexed it, then removing it took one off.
    fn count_failed_add(&self, key: &str, value: Option<&str>) {
        let mut inner = self.lock();
        let users: Vec<Arc<PatIndex>> = inner.users.iter().filter_map(Weak::upgrade).collect();
        let entry = PatEntry::new(key, value.map(Into::into), 0);
        let mut seen = Vec::new();
        let mut indexed = 0;
        for u in &users {
            if seen.contains(&u.expr_class()) {
                continue;
            }
            seen.push(u.expr_class());
            if compile(self, &[&entry], u.method, u.flags, u.values, false, false).is_err() {
                break;
            }
            indexed += 1;
        }
        inner.entry_cnt = (inner.entry_cnt + indexed).saturating_sub(1);
    }

    /// Adds entries one after the other as HAProxy does: those before a bad one stay.
    /// All in one update when all are good.
    pub fn add_each(&self, gen: Option<u32>, kv: &[(&str, Option<&str>)]) -> Result<(), String> {
        if kv.len() > 1 && self.add_to(gen, kv).is_ok() {
            return Ok(());
        }
        for one in kv {
            if let Err(e) = self.add_to(gen, std::slice::from_ref(one)) {
                self.count_failed_add(one.0, one.1);
                return Err(e);
            }
        }
        Ok(())
    }

    /// `add-acl` (the rule) and Lua's `core.add_acl`: adds `key` to the current version
    /// unless an entry of any version has it; one update, so that rules running on
    /// several threads at once add it once.
    pub fn add_absent(&self, key: &str) -> Result<(), String> {
        self.edit(|e, curr| {
            if !e.iter().any(|x| x.key == key) {
                e.push(PatEntry { gen: *curr, ..PatEntry::new(key, None, 0) });
            }
            Ok(())
        })
    }

    /// `set-map` (the rule) and Lua's `core.set_map`: a new value for every entry with
    /// this key, or a new entry of the current version when none has it; one update.
    pub fn set_or_add(&self, key: &str, value: &str) -> Result<(), String> {
        self.edit(|e, curr| {
            let mut found = false;
            for x in e.iter_mut().filter(|x| x.key == key) {
                x.value = Some(value.into());
                found = true;
            }
            if !found {
                e.push(PatEntry { gen: *curr, ..PatEntry::new(key, Some(value.into()), 0) });
            }
            Ok(())
        })
    }

    /// `del map` / `del acl`: removes every entry with this key, of any version;
    /// `false` if none.
    pub fn del(&self, key: &str) -> Result<bool, String> {
        self.edit(|e, _| {
            let before = e.len();
            e.retain(|x| x.key != key);
            Ok(e.len() != before)
        })
    }

    /// `del map <ref> #<id>`: removes the entry with this identifier.
    pub fn del_id(&self, id: u64) -> Result<bool, String> {
        self.edit(|e, _| {
            let before = e.len();
            e.retain(|x| x.id != id);
            Ok(e.len() != before)
        })
    }

    /// `set map`: new value for every entry with this key, of any version; `false`
    /// if none. A value a view cannot read changes nothing and is not an error, as
    /// in HAProxy (whose `set map` then answers nothing).
    pub fn set(&self, key: &str, value: &str) -> Result<bool, String> {
        let res = self.edit(|e, _| {
            let mut found = false;
            for x in e.iter_mut().filter(|x| x.key == key) {
                x.value = Some(value.into());
                found = true;
            }
            Ok(found)
        });
        match res {
            Err(_) => Ok(self.lock().entries.iter().any(|x| x.key == key)),
            ok => ok,
        }
    }

    /// `set map <ref> #<id> <value>`: `Ok(false)` if no entry has this identifier;
    /// the error when a view cannot read the value.
    pub fn set_id(&self, id: u64, value: &str) -> Result<bool, String> {
        self.edit(|e, _| {
            let mut found = false;
            for x in e.iter_mut().filter(|x| x.id == id) {
                x.value = Some(value.into());
                found = true;
            }
            Ok(found)
        })
    }

    /// `clear map` / `clear acl`: every entry of the current version.
    pub fn clear(&self) -> Result<(), String> {
        self.clear_gen(None)
    }

    /// `clear map @<ver>`: every entry of version `gen` (the current one if `None`).
    pub fn clear_gen(&self, gen: Option<u32>) -> Result<(), String> {
        self.edit(|e, curr| {
            let gen = gen.unwrap_or(*curr);
            e.retain(|x| x.gen != gen);
            Ok(())
        })
    }

    /// `prepare map`: reserves the next version and returns it.
    pub fn prepare(&self) -> u32 {
        let mut inner = self.lock();
        inner.next_gen = inner.next_gen.wrapping_add(1);
        inner.next_gen
    }

    /// `commit map @<ver>`: makes version `gen` current if it was prepared and is
    /// newer than the current one, then drops the entries of older versions.
    /// `Ok(false)`: the version is out of range.
    pub fn commit(&self, gen: u32) -> Result<bool, String> {
        let next = self.lock().next_gen;
        self.edit(|e, curr| {
            if gen.wrapping_sub(curr.wrapping_add(1)) >= next.wrapping_sub(*curr) {
                return Ok(false);
            }
            *curr = gen;
            let to = gen.wrapping_sub(1);
            let from = to.wrapping_sub(u32::MAX >> 1);
            e.retain(|x| !in_range(x.gen, from, to));
            Ok(true)
        })
    }
}

/// Reads a pattern file: one pattern per line (leading blanks dropped, the rest of the
/// line kept, trailing blanks included, as HAProxy), or with `two_cols` a key, blanks,
/// and a value to the end of the line (trailing blanks dropped). Lines starting with
/// `#` and empty lines are skipped.
pub fn parse_file(text: &str, two_cols: bool) -> Vec<PatEntry> {
    let mut out = Vec::new();
    for (n, raw) in text.split('\n').enumerate() {
        if raw.starts_with('#') {
            continue;
        }
        let line = raw.split('\r').next().unwrap_or_default();
        let line = line.trim_start_matches([' ', '\t']);
        if line.is_empty() {
            continue;
        }
        let (key, value) = if two_cols {
            let (k, rest) = line.split_once([' ', '\t']).unwrap_or((line, ""));
            (k, Some(rest.trim_matches([' ', '\t']).to_owned()))
        } else {
            (line, None)
        };
        out.push(PatEntry::new(key, value, n as u32 + 1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::Sample;

    fn mk(path: &str, two_cols: bool, text: &str) -> Arc<PatRef> {
        Arc::new(PatRef::new(path.into(), two_cols, None, parse_file(text, two_cols), (None, 0, 0), String::new()))
    }

    #[test]
    fn file_format_one_column() {
        let e = parse_file("# comment\n  /api  \n\n\t\n /x\r\n #not a comment\nlast", false);
        let keys: Vec<(&str, u32)> = e.iter().map(|x| (x.key.as_str(), x.line)).collect();
        assert_eq!(keys, [("/api  ", 2), ("/x", 5), ("#not a comment", 6), ("last", 7)]);
    }

    #[test]
    fn file_format_two_columns() {
        let e = parse_file("k1 v1\n  k2\t\tvalue with spaces  \nk3\n#c x\n", true);
        let kv: Vec<(&str, Option<&str>)> = e.iter().map(|x| (x.key.as_str(), x.value.as_deref())).collect();
        assert_eq!(kv, [("k1", Some("v1")), ("k2", Some("value with spaces")), ("k3", Some(""))]);
    }

    #[test]
    fn files_are_shared_and_column_modes_checked() {
        let dir = std::env::temp_dir().join(format!("rampart-patref-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.lst");
        std::fs::write(&p, "a\nb\n").unwrap();
        let path = p.to_str().unwrap();
        let refs = PatRefs::default();
        let r1 = refs.file(path, false).unwrap();
        let r2 = refs.file(path, false).unwrap();
        assert!(Arc::ptr_eq(&r1, &r2));
        assert_eq!(
            refs.file(path, true).unwrap_err(),
            format!("The file \"{path}\" is already used as one column file and cannot be used by as two column file.")
        );
        assert_eq!(refs.file("/nonexistent/x", false).unwrap_err(), "failed to open pattern file </nonexistent/x>");
        let i1 = r1.index(MatchMethod::Str, PatFlags::default(), None, false).unwrap();
        let i2 = r1.index(MatchMethod::Str, PatFlags::default(), None, false).unwrap();
        let i3 = r1.index(MatchMethod::Beg, PatFlags::default(), None, false).unwrap();
        assert!(Arc::ptr_eq(&i1, &i2));
        assert!(!Arc::ptr_eq(&i1, &i3));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn errors_name_the_file_line() {
        let r = mk("/etc/x.lst", false, "1\n\n2\nx\n");
        let e = r.index(MatchMethod::Int, PatFlags::default(), None, false).unwrap_err();
        assert_eq!(e, "'x' is not a number at line 4 of file '/etc/x.lst'");
        let inline = PatRefs::default().inline(vec![PatEntry::new("y", None, 0)], None, "int").unwrap();
        assert_eq!(
            inline.index(MatchMethod::Int, PatFlags::default(), None, false).unwrap_err(),
            "'y' is not a number"
        );
    }

    #[test]
    fn unique_ids() {
        let refs = PatRefs::default();
        refs.inline(Vec::new(), Some(3), "src").unwrap();
        assert!(refs.id_used(3));
        assert_eq!(refs.inline(Vec::new(), Some(3), "src").unwrap_err(), "the id is already used");
    }

    fn m(i: &PatIndex, smp: &Sample<'_>) -> bool {
        i.with(|snap| snap.set.matches(smp))
    }

    #[test]
    fn consistent_reads_see_one_version_of_entries_and_views() {
        // a writer moves `k0` to the end again and again, which shifts the position
        // of every other entry; a reader finds `k5` by the view and names it by the
        // entries: both must come from the same version
        let r = mk("m", false, &(0..10).map(|i| format!("k{i}\n")).collect::<String>());
        let _view = r.index(MatchMethod::Str, PatFlags::default(), None, false).unwrap();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (r, stop) = (r.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    r.del("k0").unwrap();
                    r.add("k0", None).unwrap();
                }
            })
        };
        let smp = Sample::str(b"k5");
        for _ in 0..2000 {
            let key = r.read_consistent(|entries, views| {
                let n = views[0].with(|snap| snap.set.lookup(&smp).map(|(n, _)| n as usize));
                n.and_then(|n| entries.get(n)).map(|e| e.key.clone())
            });
            assert_eq!(key.as_deref(), Some("k5"));
        }
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
    }

    #[test]
    fn runtime_updates_swap_every_view() {
        let r = mk("m", false, "/a\n");
        let exact = r.index(MatchMethod::Str, PatFlags::default(), None, false).unwrap();
        let beg = r.index(MatchMethod::Beg, PatFlags::default(), None, false).unwrap();
        let s = Sample::str(b"/b/x");
        assert!(!m(&beg, &s));
        r.add("/b", None).unwrap();
        assert!(m(&beg, &s));
        assert!(m(&exact, &Sample::str(b"/b")));
        assert_eq!(r.del("/b"), Ok(true));
        assert_eq!(r.del("/b"), Ok(false));
        assert!(!m(&beg, &s));
        // A bad pattern for one view changes nothing.
        let int = r.index(MatchMethod::Int, PatFlags::default(), None, false);
        assert!(int.is_err());
        let ints = mk("", false, "");
        let iv = ints.index(MatchMethod::Int, PatFlags::default(), None, false).unwrap();
        assert!(ints.add("zz", None).is_err());
        assert!(ints.entries().is_empty());
        ints.add("5", None).unwrap();
        assert!(m(&iv, &Sample::Sint(5)));
        ints.clear().unwrap();
        assert!(!m(&iv, &Sample::Sint(5)));
    }

    fn map_get(i: &PatIndex, k: &str) -> Option<String> {
        i.with(|snap| {
            let (n, _) = snap.set.lookup(&Sample::str(k.as_bytes()))?;
            match snap.values.get(n as usize)? {
                MapValue::Str(s) => Some(String::from_utf8_lossy(s).into_owned()),
                _ => None,
            }
        })
    }

    #[test]
    fn versions_stay_unseen_until_committed() {
        let r = mk("m.map", true, "k1 v1\nk2 v2\n");
        let v = r.index(MatchMethod::Str, PatFlags::default(), Some(ValueKind::Str), false).unwrap();
        assert_eq!(r.status().entry_cnt, 2);
        let next = r.prepare();
        assert_eq!(next, 1);
        r.add_to(Some(next), &[("k1", Some("new1")), ("k3", Some("new3"))]).unwrap();
        assert_eq!(map_get(&v, "k1").as_deref(), Some("v1"));
        assert_eq!(map_get(&v, "k3"), None);
        assert_eq!(r.entries_of(1).len(), 2);
        assert_eq!(r.status().entry_cnt, 4);
        assert_eq!(r.commit(2), Ok(false));
        assert_eq!(r.commit(1), Ok(true));
        assert_eq!(map_get(&v, "k1").as_deref(), Some("new1"));
        assert_eq!(map_get(&v, "k2"), None);
        let st = r.status();
        assert_eq!((st.curr_gen, st.next_gen, st.entry_cnt), (1, 1, 2));
        // a committed version cannot be committed again
        assert_eq!(r.commit(1), Ok(false));
        r.clear_gen(None).unwrap();
        assert_eq!(map_get(&v, "k1"), None);
        assert_eq!(r.status().entry_cnt, 0);
    }

    #[test]
    fn entries_are_reached_by_identifier() {
        let r = mk("m.map", true, "k1 v1\nk1 v2\n");
        let v = r.index(MatchMethod::Str, PatFlags::default(), Some(ValueKind::Int), false);
        assert!(v.is_err(), "values that are not integers do not load");
        let v = r.index(MatchMethod::Str, PatFlags::default(), Some(ValueKind::Str), false).unwrap();
        let ids: Vec<u64> = r.entries().iter().map(|e| e.id).collect();
        assert!(ids[0] != 0 && ids[1] > ids[0]);
        assert_eq!(r.set_id(ids[0], "x"), Ok(true));
        assert_eq!(map_get(&v, "k1").as_deref(), Some("x"));
        assert_eq!(r.del_id(ids[0]), Ok(true));
        assert_eq!(map_get(&v, "k1").as_deref(), Some("v2"));
        assert_eq!(r.del_id(ids[0]), Ok(false));
        assert_eq!(r.set("nope", "y"), Ok(false));
    }

    #[test]
    fn bad_values_are_refused_for_future_versions_too() {
        let r = mk("i.map", true, "1 10\n");
        let v = r.index(MatchMethod::Int, PatFlags::default(), Some(ValueKind::Int), false).unwrap();
        let next = r.prepare();
        assert_eq!(r.add_to(Some(next), &[("x", Some("1"))]).unwrap_err(), "'x' is not a number");
        assert_eq!(r.add_to(Some(next), &[("2", Some("y"))]).unwrap_err(), "unable to parse 'y'");
        assert!(r.entries_of(next).is_empty());
        // `set map` with a value the view cannot read changes nothing, quietly
        assert_eq!(r.set("1", "zz"), Ok(true));
        assert_eq!(r.entries()[0].value.as_deref(), Some("10"));
        assert_eq!(r.set_id(r.entries()[0].id, "zz").unwrap_err(), "unable to parse 'zz'");
        // the payload form keeps the lines before a bad one
        assert!(r.add_each(None, &[("3", Some("30")), ("q", Some("1")), ("4", Some("40"))]).is_err());
        let keys: Vec<String> = r.entries().into_iter().map(|e| e.key).collect();
        assert_eq!(keys, ["1", "3"]);
        assert!(v.with(|s| s.set.lookup(&Sample::Sint(3)).is_some()));
    }
}
