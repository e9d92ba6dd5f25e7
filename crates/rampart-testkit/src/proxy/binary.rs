//! Finding the reference `haproxy` binary for differential tests.

use std::path::PathBuf;

/// Environment variable naming a `haproxy` binary to use instead of the installed one.
pub const HAPROXY_ENV: &str = "RAMPART_TEST_HAPROXY";

/// The HAProxy binary to compare against: `$RAMPART_TEST_HAPROXY` if set, else
/// `/usr/sbin/haproxy`, else `haproxy` on `PATH`; `None` when there is none.
pub fn haproxy_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(HAPROXY_ENV).map(PathBuf::from) {
        return path.is_file().then_some(path);
    }
    let installed = PathBuf::from("/usr/sbin/haproxy");
    if installed.is_file() {
        return Some(installed);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("haproxy")).find(|p| p.is_file())
}

/// Evaluates to the [`haproxy_path`], or prints a note and returns from the enclosing
/// test when HAProxy is not installed.
///
/// ```no_run
/// #[test]
/// fn same_as_haproxy() {
///     let haproxy = rampart_testkit::require_haproxy!();
///     // ...
/// }
/// ```
#[macro_export]
macro_rules! require_haproxy {
    () => {
        match $crate::haproxy_path() {
            Some(path) => path,
            None => {
                eprintln!("note: haproxy not installed, skipping {}", module_path!());
                return;
            }
        }
    };
}
