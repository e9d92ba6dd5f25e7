//! Imports point down: the layer order written once in `docs/internals/layers.md` is
//! checked against every `crate::` path of the non-test code of `crates/rampart` and
//! `crates/rampart-cfg`. A module may use the modules listed before it, nothing listed
//! after it (which also rules out circles); a top-level module missing from the table
//! fails too. A `types` submodule (`X/types.rs`) counts as a module of its own, `X::types`.
//!
//! The checker reads source text: comments and string literals are blanked out, test
//! items (`#[cfg(test)] mod ...`, inline or in their own file) are skipped, and the
//! paths are read from `use crate::...` lines, `use crate::{...}` groups and inline
//! `crate::...` paths.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The workspace root (this file is `crates/rampart/tests/layers.rs`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn imports_point_down_in_rampart() {
    check_crate("crates/rampart");
}

#[test]
fn imports_point_down_in_rampart_cfg() {
    check_crate("crates/rampart-cfg");
}

/// Runs the check on `crate_dir` (relative to the workspace) with the table of
/// `docs/internals/layers.md`, and fails with every violation.
fn check_crate(crate_dir: &str) {
    let doc = fs::read_to_string(root().join("docs/internals/layers.md")).expect("docs/internals/layers.md");
    let order = table(&doc, crate_dir).unwrap_or_else(|| panic!("no table for `{crate_dir}` in layers.md"));
    let errors = check(&root().join(crate_dir).join("src"), &order);
    assert!(
        errors.is_empty(),
        "{crate_dir}: {} import(s) against docs/internals/layers.md:\n{}",
        errors.len(),
        errors.join("\n")
    );
}

// === the table ===

/// The modules of the table under the heading naming `crate_dir`, lowest first.
fn table(doc: &str, crate_dir: &str) -> Option<Vec<String>> {
    let heading = format!("## `{crate_dir}`");
    let start = doc.find(&heading)? + heading.len();
    let section = &doc[start..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut order = Vec::new();
    for line in section.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | layer | modules | what | -> ["", layer, modules, what, ""]
        let Some(modules) = cells.get(2) else { continue };
        order.extend(modules.split('`').skip(1).step_by(2).map(str::to_owned));
    }
    Some(order)
}

// === the check ===

/// Every import of the crate under `src` that points up the order (or names a module
/// missing from it), as `file:line: ...` lines.
fn check(src: &Path, order: &[String]) -> Vec<String> {
    let rank: HashMap<&str, usize> = order.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
    let mut errors = Vec::new();
    for top in top_level_modules(src) {
        if !rank.contains_key(top.as_str()) {
            errors.push(format!("src/{top}: top-level module `{top}` is not placed in the table"));
        }
    }
    let test_only = test_only_files(src);
    for file in rust_files(src) {
        if test_only.contains(&file) {
            continue;
        }
        let rel = file.strip_prefix(src).expect("under src").to_string_lossy().into_owned();
        let Some(from) = node_of_file(&rel) else { continue };
        let text = without_test_items(&blank_comments_and_strings(&fs::read_to_string(&file).expect("readable")));
        for (line, to) in imports(&text, &from) {
            if to == from {
                continue;
            }
            match (rank.get(from.as_str()), rank.get(to.as_str())) {
                (Some(&f), Some(&t)) if t < f => {}
                (Some(_), Some(_)) => errors.push(format!(
                    "src/{rel}:{line}: `{from}` uses `{to}`, which the table places above it (layers.md: a module uses only those before it)"
                )),
                (_, None) if !rank.contains_key(to.as_str()) && is_top_level(src, &to) => {
                    errors.push(format!("src/{rel}:{line}: `{to}` is not placed in the table"))
                }
                _ => {}
            }
        }
    }
    errors
}

/// The crate's top-level modules: `src/*.rs` and `src/*/` but the crate roots.
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for entry in fs::read_dir(src).expect("src").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".rs") {
            if stem != "lib" && stem != "main" {
                out.insert(stem.to_owned());
            }
        } else if entry.path().is_dir() {
            out.insert(name);
        }
    }
    out
}

fn is_top_level(src: &Path, node: &str) -> bool {
    let top = node.split("::").next().unwrap_or(node);
    src.join(format!("{top}.rs")).exists() || src.join(top).is_dir()
}

/// The module a file belongs to: its top-level module, or `X::types` for `X/types.rs`
/// and what lies under `X/types/`. `None` for the crate roots.
fn node_of_file(rel: &str) -> Option<String> {
    let parts: Vec<&str> = rel.split('/').collect();
    let top = parts[0].strip_suffix(".rs").unwrap_or(parts[0]);
    if parts.len() == 1 && (top == "lib" || top == "main") {
        return None;
    }
    match parts.get(1).map(|p| p.strip_suffix(".rs").unwrap_or(p)) {
        Some("types") => Some(format!("{top}::types")),
        _ => Some(top.to_owned()),
    }
}

/// The modules `text` (of a file of module `from`) imports, with their line numbers.
fn imports(text: &str, from: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let line_of = |at: usize| text[..at].matches('\n').count() + 1;
    let mut at = 0;
    while let Some(i) = text[at..].find("crate::") {
        let start = at + i;
        at = start + "crate::".len();
        // `crate::` as a path root only (not `rampart_crate::`, `$crate::`)
        if text[..start].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &text[at..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = matching_brace(group);
            for item in split_top(&group[..end]) {
                if let Some(node) = node_of_path(item.trim()) {
                    out.push((line_of(start), node));
                }
            }
        } else if let Some(node) = node_of_path(rest) {
            out.push((line_of(start), node));
        }
    }
    // in a `types` module, `super::` names its parent
    if let Some(parent) = from.strip_suffix("::types") {
        for (i, _) in text.match_indices("super::") {
            let before = text[..i].chars().next_back();
            let after = &text[i + "super::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') || after.starts_with("types") {
                continue;
            }
            out.push((line_of(i), parent.to_owned()));
        }
    }
    out
}

/// The module a path after `crate::` names (`a::types::B` names `a::types`).
fn node_of_path(path: &str) -> Option<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let first = ident(path);
    if first.is_empty() || first == "self" {
        return None;
    }
    let rest = path[first.len()..].trim_start();
    if let Some(rest) = rest.strip_prefix("::") {
        if ident(rest.trim_start()) == "types" {
            return Some(format!("{first}::types"));
        }
        if let Some(group) = rest.trim_start().strip_prefix('{') {
            // `crate::a::{types::X, Y}`: the group names `a` and maybe `a::types`
            let end = matching_brace(group);
            if split_top(&group[..end]).iter().any(|i| ident(i.trim()) == "types") {
                return Some(format!("{first}::types"));
            }
        }
    }
    Some(first)
}

/// The index of the `}` closing a group whose `{` was just before `s`.
fn matching_brace(s: &str) -> usize {
    let mut depth = 1;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// The comma-separated items of a group, nested groups kept whole.
fn split_top(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut from) = (Vec::new(), 0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[from..]);
    out
}

// === reading the sources ===

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).expect("dir").flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The files that hold test-only modules: `#[cfg(test)] mod name;` (with or without
/// `#[path = "..."]`) in any file, and every file under them.
fn test_only_files(src: &Path) -> HashSet<PathBuf> {
    let mut out = HashSet::new();
    for file in rust_files(src) {
        let text = blank_comments(&fs::read_to_string(&file).expect("readable"));
        let dir = file.parent().expect("in a dir");
        let stem = file.file_stem().expect("named").to_string_lossy().into_owned();
        // where `mod x;` of this file looks for `x.rs`
        let child_dir =
            if stem == "mod" || stem == "lib" || stem == "main" { dir.to_path_buf() } else { dir.join(&stem) };
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim() != "#[cfg(test)]" {
                continue;
            }
            let mut path_attr = None;
            for next in lines.iter().skip(i + 1) {
                let t = next.trim();
                if let Some(p) = t.strip_prefix("#[path = \"").and_then(|p| p.strip_suffix("\"]")) {
                    path_attr = Some(p.to_owned());
                } else if !t.starts_with("#[") {
                    let decl = t.trim_start_matches("pub(crate) ").trim_start_matches("pub ");
                    if let Some(name) = decl.strip_prefix("mod ").and_then(|n| n.strip_suffix(';')) {
                        let target = match &path_attr {
                            Some(p) => dir.join(p),
                            None if child_dir.join(format!("{name}.rs")).exists() => {
                                child_dir.join(format!("{name}.rs"))
                            }
                            None => child_dir.join(name).join("mod.rs"),
                        };
                        // and the files of its own submodules
                        let sub = target.with_extension("");
                        match target.parent() {
                            Some(d) if target.ends_with("mod.rs") && d.is_dir() => out.extend(rust_files(d)),
                            _ if sub.is_dir() => out.extend(rust_files(&sub)),
                            _ => {}
                        }
                        out.insert(target);
                    }
                    break;
                }
            }
        }
    }
    out
}

/// `text` with the items under `#[cfg(test)]` (an inline `mod tests { ... }`, a
/// function, a `use`) blanked out, line breaks kept.
fn without_test_items(text: &str) -> String {
    let mut out = text.to_owned();
    let mut from = 0;
    while let Some(i) = out[from..].find("#[cfg(test)]") {
        let start = from + i;
        let after = start + "#[cfg(test)]".len();
        // the item ends at its first `;` outside braces, or with its braces closed
        let bytes = out.as_bytes();
        let mut depth = 0;
        let mut end = out.len();
        for (j, &b) in bytes.iter().enumerate().skip(after) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = j + 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    end = j + 1;
                    break;
                }
                _ => {}
            }
        }
        let blanked: String = out[start..end].chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect();
        out.replace_range(start..end, &blanked);
        from = end;
    }
    out
}

/// `text` with comments blanked out (line breaks kept).
fn blank_comments(text: &str) -> String {
    blank(text, false)
}

/// `text` with comments, string and character literals blanked out (line breaks kept).
fn blank_comments_and_strings(text: &str) -> String {
    blank(text, true)
}

fn blank(text: &str, strings: bool) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let keep = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                keep(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    keep(&mut out, c[i]);
                    keep(&mut out, c[i + 1]);
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    keep(&mut out, c[i]);
                    keep(&mut out, c[i + 1]);
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    keep(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if strings
            && (c[i] == '"' || (c[i] == 'r' && matches!(c.get(i + 1), Some('"' | '#')) && raw_start(&c, i)))
        {
            // a string: `"..."` with escapes, or `r#"..."#`
            let mut hashes = 0;
            if c[i] == 'r' {
                keep(&mut out, c[i]);
                i += 1;
                while c.get(i) == Some(&'#') {
                    hashes += 1;
                    keep(&mut out, c[i]);
                    i += 1;
                }
            }
            keep(&mut out, c[i]);
            i += 1;
            while i < c.len() {
                if c[i] == '\\' && hashes == 0 {
                    keep(&mut out, c[i]);
                    if let Some(&n) = c.get(i + 1) {
                        keep(&mut out, n);
                    }
                    i += 2;
                    continue;
                }
                if c[i] == '"' && (0..hashes).all(|h| c.get(i + 1 + h) == Some(&'#')) {
                    for _ in 0..=hashes {
                        keep(&mut out, c[i]);
                        i += 1;
                    }
                    break;
                }
                keep(&mut out, c[i]);
                i += 1;
            }
        } else if strings && c[i] == '\'' && (c.get(i + 2) == Some(&'\'') || c.get(i + 1) == Some(&'\\')) {
            // a character literal (`'a'`, `'\n'`, `'\''`), not a lifetime
            keep(&mut out, c[i]);
            i += 1;
            while i < c.len() {
                if c[i] == '\\' {
                    keep(&mut out, c[i]);
                    if let Some(&n) = c.get(i + 1) {
                        keep(&mut out, n);
                    }
                    i += 2;
                    continue;
                }
                keep(&mut out, c[i]);
                i += 1;
                if c[i - 1] == '\'' {
                    break;
                }
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// Whether the `r` at `i` starts a raw string (not the end of an identifier).
fn raw_start(c: &[char], i: usize) -> bool {
    i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_')
}

// === the checker itself ===

/// A crate with an upward import, a circle, a `types` module using its parent and a
/// module missing from the table: each is reported with its file and line, and the
/// same crate without them passes.
#[test]
fn the_checker_reports_upward_imports_circles_and_unplaced_modules() {
    let dir = std::env::temp_dir().join(format!("rampart-layers-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let write = |p: &str, text: &str| {
        let p = dir.join(p);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    write("lib.rs", "pub mod low;\npub mod mid;\npub mod top;\n");
    write(
        "low.rs",
        "//! low\n// crate::top in a comment is no import\npub fn f() -> &'static str { \"crate::top\" }\n",
    );
    write("mid/mod.rs", "pub mod types;\nuse crate::low::f;\npub fn g() { f(); }\n");
    write("mid/types.rs", "pub struct T;\n");
    write("top.rs", "use crate::{low, mid::{types::T, g}};\n#[cfg(test)]\nmod tests {\n    use crate::top;\n}\n");
    let order: Vec<String> = ["low", "mid::types", "mid", "top"].iter().map(|s| s.to_string()).collect();
    assert_eq!(check(&dir, &order), Vec::<String>::new(), "a clean crate passes");

    // an upward import, which is also how a circle closes (low -> top -> low)
    write("low.rs", "use crate::top;\n");
    // a types module that uses its parent
    write("mid/types.rs", "pub struct T;\nfn h() { super::g() }\n");
    // a module the table does not place
    write("extra.rs", "pub fn x() {}\n");
    let errors = check(&dir, &order);
    let _ = fs::remove_dir_all(&dir);
    assert!(errors.iter().any(|e| e.starts_with("src/low.rs:1: `low` uses `top`")), "{errors:#?}");
    assert!(errors.iter().any(|e| e.starts_with("src/mid/types.rs:2: `mid::types` uses `mid`")), "{errors:#?}");
    assert!(errors.iter().any(|e| e.contains("`extra` is not placed")), "{errors:#?}");
    assert_eq!(errors.len(), 3, "{errors:#?}");
}

#[test]
fn the_table_is_read_lowest_first() {
    let doc = "# x\n## `crates/a`\n| layer | modules | what |\n|---|---|---|\n| 1 | `x`, `y::types` | . |\n| 2 | `z` | . |\n## `crates/b`\n| l | `w` | . |\n";
    assert_eq!(table(doc, "crates/a").unwrap(), ["x", "y::types", "z"]);
    assert_eq!(table(doc, "crates/b").unwrap(), ["w"]);
    assert!(table(doc, "crates/c").is_none());
}
