//! Where servers' states are loaded from at startup: `server-state-file` and
//! `server-state-base` in `global`, `load-server-state-from-file` and
//! `server-state-file-name` in `defaults` and backends. HAProxy counterpart: the
//! `server_state_*` fields of `struct global` and `struct proxy`.

use std::path::PathBuf;

/// The `global` settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GlobalServerState {
    /// `server-state-base <dir>`: where relative state file names are looked up.
    pub base: Option<String>,
    /// `server-state-file <file>`: the file `load-server-state-from-file global` reads.
    pub file: Option<String>,
}

impl GlobalServerState {
    /// `name` as a path: absolute as written, else under `server-state-base` when set
    /// (HAProxy's `srv_state_get_filepath()`).
    pub fn path_of(&self, name: &str) -> PathBuf {
        match &self.base {
            Some(base) if !name.starts_with('/') => {
                let sep = if base.ends_with('/') { "" } else { "/" };
                PathBuf::from(format!("{base}{sep}{name}"))
            }
            _ => PathBuf::from(name),
        }
    }

    /// The global state file's path, when one is set.
    pub fn global_path(&self) -> Option<PathBuf> {
        self.file.as_deref().map(|f| self.path_of(f))
    }
}

/// `load-server-state-from-file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadFrom {
    /// Not set (HAProxy then loads nothing).
    #[default]
    Unset,
    /// `none`.
    None,
    /// `global`: the lines of this backend in the global `server-state-file`.
    Global,
    /// `local`: the backend's own file (`server-state-file-name`).
    Local,
}

/// A backend's settings (inherited from `defaults`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyServerState {
    pub load: LoadFrom,
    /// `server-state-file-name`: the file of `load local` (`use-backend-name` or no
    /// argument: the name of the section it was written in); `None`: the backend's name.
    pub file_name: Option<String>,
}
