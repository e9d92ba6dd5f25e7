//! `default-path current|config|parent|origin <path>` (global): the directory the
//! relative file names of the configuration start from. HAProxy changes its working
//! directory while it reads the files (again at the start of each file, from the mode
//! set so far); rampart keeps that directory in `Global::default_path` as the lines
//! are read, joins it to the files the parser itself reads (`errorfile`, `return file`,
//! `http-error`), and the daemon enters the one in effect at the end before it reads
//! the others (certificates, maps, Lua...), as HAProxy is left there.
//! HAProxy counterparts: `cfg_parse_global_def_path()` and `cfg_apply_default_path()`
//! (src/cfgparse.c).

use std::path::{Path, PathBuf};

use crate::span::Span;

use super::{arg, Parser};

/// The mode a `default-path` line set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum DefaultPath {
    /// `current`: the directory rampart was started in (no change).
    #[default]
    Current,
    /// `config`: the directory of the file being read.
    Config,
    /// `parent`: its parent.
    Parent,
    /// `origin <path>`.
    Origin(PathBuf),
}

impl DefaultPath {
    /// The directory relative names start from in file `file` (`None`: the current one).
    pub(crate) fn dir_for(&self, file: &str) -> Option<PathBuf> {
        let dir = file.rfind('/').map_or("", |i| &file[..i]);
        match self {
            DefaultPath::Current => None,
            DefaultPath::Config if dir.is_empty() => None,
            DefaultPath::Config => Some(PathBuf::from(dir)),
            DefaultPath::Parent if dir.is_empty() => Some(PathBuf::from("..")),
            DefaultPath::Parent => Some(Path::new(dir).join("..")),
            DefaultPath::Origin(p) => Some(p.clone()),
        }
    }
}

/// `default-path <mode> [<path>]`.
pub(super) fn parse_default_path(p: &mut Parser, words: &[String], span: &Span) {
    let (kw, mode) = (&words[0], arg(words, 1));
    let new = match mode {
        "current" => DefaultPath::Current,
        "config" => DefaultPath::Config,
        "parent" => DefaultPath::Parent,
        "origin" => match arg(words, 2) {
            "" => return p.alert(span, format!("'{kw} {mode}' expects a directory as an argument.")),
            dir => DefaultPath::Origin(PathBuf::from(dir)),
        },
        _ => {
            let what = if mode.is_empty() { "missing" } else { "unsupported" };
            return p.alert(
                span,
                format!(
                    "{what} default-path mode '{mode}' for '{kw}', supported modes include 'current', 'config', \
                     'parent', and 'origin'."
                ),
            );
        }
    };
    let dir = new.dir_for(&span.file);
    if let Some(d) = &dir {
        if let Err(e) = std::fs::metadata(d).and_then(|m| {
            if m.is_dir() {
                Ok(())
            } else {
                Err(std::io::ErrorKind::NotADirectory.into())
            }
        }) {
            let why = e.raw_os_error().map_or_else(
                || "Not a directory".to_owned(),
                |c| {
                    std::io::Error::from_raw_os_error(c)
                        .to_string()
                        .split(" (os error")
                        .next()
                        .unwrap_or_default()
                        .to_owned()
                },
            );
            let to = match &new {
                DefaultPath::Origin(o) => format!("origin '{}'", o.display()),
                _ => format!("'{mode}'"),
            };
            return p.alert(
                span,
                format!("couldn't set '{kw}' to {to}: Impossible to get back to directory '{}': {why}.", d.display()),
            );
        }
    }
    p.default_path = new;
    p.global.default_path = dir;
}

/// `path` as the parser reads it: from the `default-path` directory when relative.
pub(crate) fn resolve(base: Option<&Path>, path: &str) -> PathBuf {
    match base {
        Some(b) if !path.starts_with('/') => b.join(path),
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::tests::{alerts, parse_ok};

    #[test]
    fn modes_give_the_directory_of_relative_names() {
        assert_eq!(DefaultPath::Current.dir_for("/etc/h/h.cfg"), None);
        assert_eq!(DefaultPath::Config.dir_for("/etc/h/h.cfg"), Some(PathBuf::from("/etc/h")));
        assert_eq!(DefaultPath::Config.dir_for("h.cfg"), None);
        assert_eq!(DefaultPath::Parent.dir_for("/etc/h/h.cfg"), Some(PathBuf::from("/etc/h/..")));
        assert_eq!(DefaultPath::Parent.dir_for("h.cfg"), Some(PathBuf::from("..")));
        assert_eq!(DefaultPath::Origin("/srv".into()).dir_for("/etc/h.cfg"), Some(PathBuf::from("/srv")));
        assert_eq!(resolve(Some(Path::new("/etc/h")), "e/503.http"), PathBuf::from("/etc/h/e/503.http"));
        assert_eq!(resolve(Some(Path::new("/etc/h")), "/abs"), PathBuf::from("/abs"));
    }

    #[test]
    fn lines_and_messages() {
        assert_eq!(parse_ok("global\n default-path origin /tmp\n").global.default_path, Some(PathBuf::from("/tmp")));
        assert_eq!(parse_ok("global\n default-path origin /tmp\n default-path current\n").global.default_path, None);
        assert_eq!(
            alerts("global\n default-path\n"),
            ["missing default-path mode '' for 'default-path', supported modes include 'current', 'config', 'parent', \
              and 'origin'."]
        );
        assert_eq!(
            alerts("global\n default-path foo\n")[0],
            "unsupported default-path mode 'foo' for 'default-path', supported modes include 'current', 'config', \
             'parent', and 'origin'."
        );
        assert_eq!(
            alerts("global\n default-path origin\n"),
            ["'default-path origin' expects a directory as an argument."]
        );
        assert!(alerts("global\n default-path origin /nonexistent-rampart\n")[0]
            .starts_with("couldn't set 'default-path' to origin '/nonexistent-rampart': "));
    }
}
