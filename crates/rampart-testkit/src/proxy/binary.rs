//! Which binaries the tests run: the one under test (rampart, or another named by
//! [`BINARY_ENV`]) and the reference `haproxy` of differential tests ([`HAPROXY_ENV`]).
//! A differential test without haproxy is skipped with a line that shows even when
//! cargo captures test output, or fails when [`REQUIRE_HAPROXY_ENV`] is set (CI sets it:
//! a missing haproxy must not turn 45 comparisons into passes that assert nothing).

use std::io::Write as _;
use std::path::PathBuf;

/// Environment variable naming a `haproxy` binary to use instead of the installed one.
pub const HAPROXY_ENV: &str = "RAMPART_TEST_HAPROXY";

/// Environment variable naming the binary under test instead of the rampart cargo
/// built (e.g. `/usr/sbin/haproxy`, to check that a test asserts HAProxy's behaviour).
pub const BINARY_ENV: &str = "RAMPART_TEST_BINARY";

/// Environment variable that makes a missing haproxy a test failure (`1`; empty or `0`
/// means skip).
pub const REQUIRE_HAPROXY_ENV: &str = "RAMPART_REQUIRE_HAPROXY";

/// The binary under test: `$RAMPART_TEST_BINARY` if set, else `default` (the test's
/// `env!("CARGO_BIN_EXE_rampart")`).
pub fn binary_under_test(default: impl Into<PathBuf>) -> PathBuf {
    match std::env::var_os(BINARY_ENV) {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => default.into(),
    }
}

/// Whether the tests run another binary than rampart ([`BINARY_ENV`] is set).
pub fn testing_another_binary() -> bool {
    std::env::var_os(BINARY_ENV).is_some_and(|p| !p.is_empty())
}

/// Whether a missing haproxy fails the differential tests ([`REQUIRE_HAPROXY_ENV`]).
pub fn haproxy_required() -> bool {
    std::env::var(REQUIRE_HAPROXY_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The haproxy to compare against for `test`. Without one: panics when
/// [`haproxy_required`], else writes `SKIPPED <test>: ...` straight to the process's
/// stderr (cargo's capture only takes `print!`/`eprint!`, so the line shows in a
/// normal `cargo test` run) and returns `None`.
pub fn haproxy_or_skip(test: &str) -> Option<PathBuf> {
    if let Some(path) = haproxy_path() {
        return Some(path);
    }
    assert!(
        !haproxy_required(),
        "{test}: haproxy is not installed (set {HAPROXY_ENV} to its path), and {REQUIRE_HAPROXY_ENV} makes that a failure"
    );
    let line =
        format!("SKIPPED {test}: haproxy is not installed (set {HAPROXY_ENV}, or {REQUIRE_HAPROXY_ENV}=1 to fail)\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    None
}

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

/// Evaluates to the [`haproxy_path`], or returns from the enclosing test when HAProxy is
/// not installed, after [`haproxy_or_skip`]'s visible line (or its panic under
/// [`REQUIRE_HAPROXY_ENV`]).
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
        match $crate::haproxy_or_skip(module_path!()) {
            Some(path) => path,
            None => return,
        }
    };
}
