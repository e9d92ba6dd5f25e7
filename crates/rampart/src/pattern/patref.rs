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
//! HAProxy counterpart: `struct pat_ref`, `struct pattern_expr`, `pat_ref_*()`,
//! `pattern_read_from_file()`, `pat_ref_read_from_file[_smp]()` (src/pattern.c).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use arc_swap::ArcSwap;

use super::value::{parse_value, MapValue, ValueKind};
use super::{MatchMethod, PatFlags, PatternSet};

/// One pattern line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatEntry {
    pub key: String,
    /// The value of a map line (two-column sources only).
    pub value: Option<String>,
    /// Line in the source file (0: not from a file).
    pub line: u32,
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
    /// `-u <id>`, or the number given at the end of the configuration (runtime API
    /// `#<id>` references).
    pub unique_id: Option<i32>,
    inner: UpdateLock<RefInner>,
}

#[derive(Debug, Default)]
struct RefInner {
    entries: Vec<PatEntry>,
    users: Vec<Weak<PatIndex>>,
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
}

/// Compiles `entries` into a snapshot. Errors name the file line, as HAProxy's
/// `"... at line N of file 'F'"`.
fn compile(
    src: &PatRef,
    entries: &[PatEntry],
    method: MatchMethod,
    flags: PatFlags,
    values: Option<ValueKind>,
    resolve: bool,
) -> Result<Snapshot, String> {
    let at = |i: usize, e: String| match entries.get(i) {
        Some(ent) if ent.line > 0 => format!("{e} at line {} of file '{}'", ent.line, src.path),
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

impl PatRef {
    fn new(path: String, two_cols: bool, unique_id: Option<i32>, entries: Vec<PatEntry>) -> PatRef {
        PatRef { path, two_cols, unique_id, inner: UpdateLock::new(RefInner { entries, users: Vec::new() }) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RefInner> {
        // A panic while holding the lock cannot leave the entries half-edited (edits
        // are made on a copy), so a poisoned lock is still consistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A copy of the entries (`show map`, `show acl`).
    pub fn entries(&self) -> Vec<PatEntry> {
        self.lock().entries.clone()
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
        if let Some(u) = inner.users.iter().filter_map(Weak::upgrade).find(|u| same(u)) {
            return Ok(u);
        }
        let snap = compile(self, &inner.entries, method, flags, values, resolve)?;
        let idx = Arc::new(PatIndex::new(self.clone(), method, flags, values, snap));
        inner.users.push(Arc::downgrade(&idx));
        Ok(idx)
    }

    /// Applies `edit` to the entries and recompiles every live view; all or nothing.
    /// Host names are not resolved at run time (HAProxy resolves only at startup).
    pub fn update(&self, edit: impl FnOnce(&mut Vec<PatEntry>)) -> Result<(), String> {
        let mut inner = self.lock();
        let mut entries = inner.entries.clone();
        edit(&mut entries);
        inner.users.retain(|w| w.strong_count() > 0);
        let users: Vec<Arc<PatIndex>> = inner.users.iter().filter_map(Weak::upgrade).collect();
        let mut snaps = Vec::with_capacity(users.len());
        for u in &users {
            snaps.push(compile(self, &entries, u.method, u.flags, u.values, false)?);
        }
        for (u, s) in users.iter().zip(snaps) {
            u.replace(s);
        }
        inner.entries = entries;
        Ok(())
    }

    /// `add map` / `add acl`.
    pub fn add(&self, key: &str, value: Option<&str>) -> Result<(), String> {
        self.update(|e| e.push(PatEntry { key: key.into(), value: value.map(Into::into), line: 0 }))
    }

    /// `del map` / `del acl`: removes every entry with this key; `false` if none.
    pub fn del(&self, key: &str) -> Result<bool, String> {
        let mut found = false;
        self.update(|e| {
            let before = e.len();
            e.retain(|x| x.key != key);
            found = e.len() != before;
        })?;
        Ok(found)
    }

    /// `set map`: new value for every entry with this key; `false` if none.
    pub fn set(&self, key: &str, value: &str) -> Result<bool, String> {
        let mut found = false;
        self.update(|e| {
            for x in e.iter_mut().filter(|x| x.key == key) {
                x.value = Some(value.into());
                found = true;
            }
        })?;
        Ok(found)
    }

    /// `clear map` / `clear acl`.
    pub fn clear(&self) -> Result<(), String> {
        self.update(Vec::clear)
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
        out.push(PatEntry { key: key.to_owned(), value, line: n as u32 + 1 });
    }
    out
}

/// The pattern sources of one configuration: files by path (loaded once, shared by
/// every proxy), and the ids given with `-u`. Used at startup only.
#[derive(Debug, Default)]
pub struct PatRefs {
    files: RefCell<HashMap<String, Arc<PatRef>>>,
    ids: RefCell<Vec<i32>>,
    /// Do not resolve host names in address patterns (tests, fuzzing).
    pub no_resolve: bool,
}

impl PatRefs {
    /// Sources whose address patterns never resolve host names (tests, fuzzing).
    pub fn without_dns() -> PatRefs {
        PatRefs { no_resolve: true, ..PatRefs::default() }
    }

    /// The source for file `path`, read on first use.
    pub fn file(&self, path: &str, two_cols: bool) -> Result<Arc<PatRef>, String> {
        if let Some(r) = self.files.borrow().get(path) {
            return match (r.two_cols, two_cols) {
                (false, true) => Err(format!(
                    "The file \"{path}\" is already used as one column file and cannot be used by as two column file."
                )),
                (true, false) => Err(format!(
                    "The file \"{path}\" is already used as two column file and cannot be used by as one column file."
                )),
                _ => Ok(r.clone()),
            };
        }
        let bytes = std::fs::read(path).map_err(|_| format!("failed to open pattern file <{path}>"))?;
        // COMPAT: patterns are text; bytes that are not UTF-8 become U+FFFD.
        let text = String::from_utf8_lossy(&bytes);
        let r = Arc::new(PatRef::new(path.to_owned(), two_cols, None, parse_file(&text, two_cols)));
        self.files.borrow_mut().insert(path.to_owned(), r.clone());
        Ok(r)
    }

    /// A new source for an ACL's inline patterns; `id` from `-u`.
    pub fn inline(&self, entries: Vec<PatEntry>, id: Option<i32>) -> Result<Arc<PatRef>, String> {
        if let Some(id) = id {
            if self.ids.borrow().contains(&id) {
                return Err("the id is already used".into());
            }
            self.ids.borrow_mut().push(id);
        }
        Ok(Arc::new(PatRef::new(String::new(), false, id, entries)))
    }

    /// Every file loaded, by path (for the runtime updates of Lua's `core.set_map`).
    pub fn files(&self) -> Vec<(String, Arc<PatRef>)> {
        self.files.borrow().iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Whether `-u <id>` was already given.
    pub fn id_used(&self, id: i32) -> bool {
        self.ids.borrow().contains(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::Sample;

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
        let r = Arc::new(PatRef::new("/etc/x.lst".into(), false, None, parse_file("1\n\n2\nx\n", false)));
        let e = r.index(MatchMethod::Int, PatFlags::default(), None, false).unwrap_err();
        assert_eq!(e, "'x' is not a number at line 4 of file '/etc/x.lst'");
        let inline = PatRefs::default().inline(vec![PatEntry { key: "y".into(), value: None, line: 0 }], None).unwrap();
        assert_eq!(
            inline.index(MatchMethod::Int, PatFlags::default(), None, false).unwrap_err(),
            "'y' is not a number"
        );
    }

    #[test]
    fn unique_ids() {
        let refs = PatRefs::default();
        refs.inline(Vec::new(), Some(3)).unwrap();
        assert!(refs.id_used(3));
        assert_eq!(refs.inline(Vec::new(), Some(3)).unwrap_err(), "the id is already used");
    }

    fn m(i: &PatIndex, smp: &Sample<'_>) -> bool {
        i.with(|snap| snap.set.matches(smp))
    }

    #[test]
    fn runtime_updates_swap_every_view() {
        let r = Arc::new(PatRef::new("m".into(), false, None, parse_file("/a\n", false)));
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
        let ints = Arc::new(PatRef::new(String::new(), false, None, Vec::new()));
        let iv = ints.index(MatchMethod::Int, PatFlags::default(), None, false).unwrap();
        assert!(ints.add("zz", None).is_err());
        assert!(ints.entries().is_empty());
        ints.add("5", None).unwrap();
        assert!(m(&iv, &Sample::Sint(5)));
        ints.clear().unwrap();
        assert!(!m(&iv, &Sample::Sint(5)));
    }
}
