//! The pattern references of one configuration: built while the rules compile
//! ([`PatRefs`]: files loaded once per path, each ACL's inline patterns), then numbered
//! and handed to the runtime API as a [`RefList`] (`show map`, `add acl #<id>` ...).
//!
//! HAProxy counterpart: `pattern_reference`, `pat_ref_new[id]()`,
//! `pattern_read_from_file()` (its description of each use), `pat_ref_lookup[id]()`,
//! `pattern_finalize_config()` (src/pattern.c).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;

use super::patref::{parse_file, PatEntry, PatRef};

/// The pattern sources of one configuration: files by path (loaded once, shared by
/// every proxy), the ids given with `-u`, and every reference in the order the
/// configuration created them. Used at startup only.
#[derive(Debug, Default)]
pub struct PatRefs {
    files: RefCell<HashMap<String, Arc<PatRef>>>,
    ids: RefCell<Vec<i32>>,
    all: RefCell<Vec<Arc<PatRef>>>,
    /// The configuration line being compiled (set by the rule compiler), for the
    /// descriptions and the numbering.
    at: RefCell<(Option<Arc<str>>, u32)>,
    seq: Cell<u64>,
    /// Do not resolve host names in address patterns (tests, fuzzing).
    pub no_resolve: bool,
}

impl PatRefs {
    /// Sources whose address patterns never resolve host names (tests, fuzzing).
    pub fn without_dns() -> PatRefs {
        PatRefs { no_resolve: true, ..PatRefs::default() }
    }

    /// Notes the configuration line whose expressions compile next.
    pub fn set_at(&self, file: &Arc<str>, line: u32) {
        *self.at.borrow_mut() = (Some(file.clone()), line);
    }

    fn created(&self) -> (Option<Arc<str>>, u32, u64) {
        let (file, line) = self.at.borrow().clone();
        let seq = self.seq.get();
        self.seq.set(seq + 1);
        (file, line, seq)
    }

    /// `file 'F' line L` of the line being compiled.
    fn where_(&self) -> String {
        let at = self.at.borrow();
        format!("file '{}' line {}", at.0.as_deref().unwrap_or_default(), at.1)
    }

    /// The source for file `path`, read on first use. `two_cols`: loaded as a map
    /// (converters, ACL `-M`), which is also how HAProxy describes the use.
    pub fn file(&self, path: &str, two_cols: bool) -> Result<Arc<PatRef>, String> {
        let used_by = if two_cols { "map" } else { "acl" };
        if let Some(r) = self.files.borrow().get(path) {
            return match (r.two_cols, two_cols) {
                (false, true) => Err(format!(
                    "The file \"{path}\" is already used as one column file and cannot be used by as two column file."
                )),
                (true, false) => Err(format!(
                    "The file \"{path}\" is already used as two column file and cannot be used by as one column file."
                )),
                _ => {
                    r.extend_display(&format!(", by {used_by} at {}", self.where_()));
                    Ok(r.clone())
                }
            };
        }
        let bytes = std::fs::read(path).map_err(|_| format!("failed to open pattern file <{path}>"))?;
        // COMPAT: patterns are text; bytes that are not UTF-8 become U+FFFD.
        let text = String::from_utf8_lossy(&bytes);
        let display = format!("pattern loaded from file '{path}' used by {used_by} at {}", self.where_());
        let r = Arc::new(PatRef::new(
            path.to_owned(),
            two_cols,
            None,
            parse_file(&text, two_cols),
            self.created(),
            display,
        ));
        self.files.borrow_mut().insert(path.to_owned(), r.clone());
        self.all.borrow_mut().push(r.clone());
        Ok(r)
    }

    /// A new source for the inline patterns of an ACL on keyword `kw`; `id` from `-u`.
    pub fn inline(&self, entries: Vec<PatEntry>, id: Option<i32>, kw: &str) -> Result<Arc<PatRef>, String> {
        if let Some(id) = id {
            if self.ids.borrow().contains(&id) {
                return Err("the id is already used".into());
            }
            self.ids.borrow_mut().push(id);
        }
        let display = format!("acl '{kw}' {}", self.where_());
        let r = Arc::new(PatRef::new(String::new(), false, id, entries, self.created(), display));
        self.all.borrow_mut().push(r.clone());
        Ok(r)
    }

    /// Every file loaded, by path (for the runtime updates of Lua's `core.set_map`).
    pub fn files(&self) -> Vec<(String, Arc<PatRef>)> {
        self.files.borrow().iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Whether `-u <id>` was already given.
    pub fn id_used(&self, id: i32) -> bool {
        self.ids.borrow().contains(&id)
    }

    /// Numbers the references as HAProxy does once its configuration is read: in
    /// the order they were created (configuration order), each takes the lowest
    /// number no `-u` took. The list comes back sorted by number.
    pub fn finish(&self) -> RefList {
        let mut all: Vec<Arc<PatRef>> = self.all.borrow().clone();
        let mut files: Vec<Arc<str>> = Vec::new();
        for r in &all {
            if let Some(f) = &r.created.0 {
                if !files.contains(f) {
                    files.push(f.clone());
                }
            }
        }
        let file_pos = |r: &PatRef| r.created.0.as_ref().and_then(|f| files.iter().position(|x| x == f));
        all.sort_by_key(|r| (file_pos(r).unwrap_or(usize::MAX), r.created.1, r.created.2));
        let taken: Vec<i32> = all.iter().filter(|r| r.fixed_id).map(|r| r.unique_id()).collect();
        let mut next = 0;
        for r in all.iter().filter(|r| !r.fixed_id) {
            while taken.contains(&next) {
                next += 1;
            }
            r.set_unique_id(next);
            next += 1;
        }
        all.sort_by_key(|r| r.unique_id());
        RefList(all.into())
    }
}

/// The numbered references of a running configuration (the runtime API's view).
#[derive(Debug, Default)]
pub struct RefList(Box<[Arc<PatRef>]>);

impl RefList {
    /// Every reference, by number.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<PatRef>> {
        self.0.iter()
    }

    /// The reference `name` designates: `#<id>`, or a file name as written in the
    /// configuration (HAProxy's `pat_ref_lookup_ref`).
    pub fn find(&self, name: &str) -> Option<&Arc<PatRef>> {
        match name.strip_prefix('#') {
            Some(id) => {
                let id = rampart_cfg::strtol_whole(id)?;
                self.0.iter().find(|r| i64::from(r.unique_id()) == id)
            }
            None => self.0.iter().find(|r| r.reference() == Some(name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(refs: &PatRefs, line: u32) {
        refs.set_at(&Arc::from("/etc/h.cfg"), line);
    }

    #[test]
    fn references_are_numbered_in_configuration_order_around_fixed_ids() {
        let refs = PatRefs::default();
        at(&refs, 20);
        let late = refs.inline(Vec::new(), None, "path").unwrap();
        at(&refs, 10);
        let fixed = refs.inline(Vec::new(), Some(1), "path_beg").unwrap();
        let first = refs.inline(Vec::new(), None, "hdr").unwrap();
        at(&refs, 12);
        let third = refs.inline(Vec::new(), None, "src").unwrap();
        let list = refs.finish();
        let ids: Vec<i32> = list.iter().map(|r| r.unique_id()).collect();
        assert_eq!(ids, [0, 1, 2, 3]);
        assert_eq!((first.unique_id(), fixed.unique_id(), third.unique_id(), late.unique_id()), (0, 1, 2, 3));
        assert_eq!(fixed.status().display, "acl 'path_beg' file '/etc/h.cfg' line 10");
        assert!(Arc::ptr_eq(list.find("#2").unwrap(), &third));
        assert!(list.find("#9").is_none());
        assert!(list.find("#x").is_none());
        assert!(Arc::ptr_eq(list.find("#").unwrap(), &first));
    }

    #[test]
    fn files_describe_each_use_and_are_found_by_name() {
        let dir = std::env::temp_dir().join(format!("rampart-refs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("m.map");
        std::fs::write(&p, "k1 v1\nk2 v2\n").unwrap();
        let path = p.to_str().unwrap();
        let refs = PatRefs::default();
        at(&refs, 7);
        let r = refs.file(path, true).unwrap();
        at(&refs, 9);
        refs.file(path, true).unwrap();
        assert_eq!(
            r.status().display,
            format!(
                "pattern loaded from file '{path}' used by map at file '/etc/h.cfg' line 7, by map at file \
                 '/etc/h.cfg' line 9"
            )
        );
        let list = refs.finish();
        assert!(Arc::ptr_eq(list.find(path).unwrap(), &r));
        assert!(list.find("").is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
