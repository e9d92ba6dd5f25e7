//! The `-v` and `-vv` texts. HAProxy counterpart: `display_version()` and
//! `display_build_opts()` in src/haproxy.c.
//!
//! The layout is HAProxy's because tools parse it. HAProxy's regression-test runner
//! (scripts/run-regtests.sh) greps `-vv` for the lines matching `HA-\?Proxy version`,
//! `TARGET.*=`, `^Feature` and `^Available services`, in that order, strips everything
//! up to ` : ` or ` = `, and takes the third word of the first one as the version to
//! compare with `REQUIRE_VERSION`. So the first line names rampart, puts the
//! HAProxy-compatible version third, and says which HAProxy version it follows (which
//! also lets `HAProxy version ([0-9.]+)` scrapers find a meaningful number). Every other
//! line states only what rampart really has.

use std::fmt::Write as _;

use rampart_cfg::version::{FEATURES, HAPROXY_COMPAT_VERSION, MISSING_FEATURES, RAMPART_VERSION};

/// The most threads a process runs; the default thread count is capped to it.
pub const MAX_THREADS: usize = 64;

/// Release date of this rampart version, shown after the version like HAProxy's.
pub const RELEASE_DATE: &str = "2026/11/29";

/// The project's address, when the workspace declares one.
const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// `2.6.12-rampart0.1.0`: the HAProxy version rampart behaves like, then its own.
pub fn version_string() -> String {
    format!("{HAPROXY_COMPAT_VERSION}-rampart{RAMPART_VERSION}")
}

/// The `-v` text. `running_on` is the `uname` description (see [`running_on`]).
pub fn display_version(running_on: Option<&str>) -> String {
    let mut out = format!("rampart version {} {RELEASE_DATE}", version_string());
    if !REPOSITORY.is_empty() {
        let _ = write!(out, " - {REPOSITORY}");
    }
    let _ = writeln!(out, " (HAProxy version {HAPROXY_COMPAT_VERSION} compatible)");
    out.push_str("Status: in development - follows the behaviour of HAProxy 2.6 (long-term supported branch).\n");
    if !REPOSITORY.is_empty() {
        let _ = writeln!(out, "Known bugs: {REPOSITORY}/issues");
    }
    if let Some(running_on) = running_on {
        let _ = writeln!(out, "Running on: {running_on}");
    }
    out
}

/// The build options part of `-vv`, printed after [`display_version`].
/// `default_nbthread` is the thread count used when `nbthread` is not set.
pub fn display_build_opts(default_nbthread: usize) -> String {
    let defaults = rampart_cfg::model::Global::default();
    let mut out = String::from("Build options :\n");
    let _ = writeln!(out, "  TARGET  = {}", build_target());
    let _ = writeln!(out, "  CPU     = {}", std::env::consts::ARCH);
    let _ = writeln!(out, "  PROFILE = {}", if cfg!(debug_assertions) { "debug" } else { "release" });
    let _ = writeln!(out, "\nFeature list : {}", feature_list());
    out.push_str("\nDefault settings :\n");
    let _ = writeln!(out, "  bufsize = {}, maxrewrite = {}", defaults.bufsize, defaults.maxrewrite);
    // HAProxy prints "Built with OpenSSL version : ..." here; rampart's TLS library is
    // named as what it is, so that `ssllib_name_startswith(OpenSSL)` readers are not misled.
    let _ = writeln!(out, "\nBuilt with SSL library : rustls 0.23 (aws-lc-rs provider)");
    out.push_str("SSL library supports SNI : yes\n");
    out.push_str("SSL library supports : TLSv1.2 TLSv1.3\n");
    // the Lua embedded by the `mlua` crate (its vendored 5.4 sources)
    out.push_str("Built with Lua version : Lua 5.4.7\n");
    // HAProxy names its zlib (or libslz) here; `+ZLIB` in the feature list is what the
    // reg-tests look for.
    out.push_str("\nBuilt with zlib-rs (flate2) for gzip/deflate, brotli (br) and zstd compression.\n");
    out.push_str(COMP_ALGOS);
    let _ = writeln!(
        out,
        "\nBuilt with multi-threading support (MAX_THREADS={MAX_THREADS}, default={}).",
        default_nbthread.min(MAX_THREADS)
    );
    out.push('\n');
    out.push_str("Available polling systems :\n");
    out.push_str("      epoll : pref=300,  test result OK\n");
    out.push_str("Total: 1 (1 usable), will use epoll.\n\n");
    out.push_str("Available multiplexer protocols :\n");
    out.push_str("(protocols marked as <default> cannot be specified using 'proto' keyword)\n");
    out.push_str("  <default> : mode=HTTP  side=FE|BE  mux=H1    flags=HTX\n");
    out.push_str("  <default> : mode=TCP   side=FE|BE  mux=PASS  flags=\n\n");
    out.push_str("Available services : prometheus-exporter\n\n");
    out.push_str("Available filters :\n");
    out.push_str("\t[CACHE] cache\n\t[COMP] compression\n\t[TRACE] trace\n");
    out
}

/// The `compression algo` values, as HAProxy lists them (name, then the token clients
/// name it by); `br` and `zstd` are rampart's own.
const COMP_ALGOS: &str = "Compression algorithms supported : identity(\"identity\"), deflate(\"deflate\"), \
     raw-deflate(\"deflate\"), gzip(\"gzip\"), br(\"br\"), zstd(\"zstd\")\n";

/// `+NAME`/`-NAME` for every feature, sorted by name as HAProxy sorts them.
pub fn feature_list() -> String {
    let mut all: Vec<(&str, char)> =
        FEATURES.iter().map(|f| (*f, '+')).chain(MISSING_FEATURES.iter().map(|f| (*f, '-'))).collect();
    all.sort_unstable();
    all.iter().map(|(name, sign)| format!("{sign}{name}")).collect::<Vec<_>>().join(" ")
}

/// HAProxy-style build target: `linux-glibc`, `linux-musl` ...
fn build_target() -> String {
    let libc = if cfg!(target_env = "gnu") {
        "glibc"
    } else if cfg!(target_env = "musl") {
        "musl"
    } else {
        "generic"
    };
    format!("{}-{libc}", std::env::consts::OS)
}

/// `Linux 6.1.0 #1 SMP ... x86_64`, from uname(2).
pub fn running_on() -> Option<String> {
    let uts = nix::sys::utsname::uname().ok()?;
    Some(format!(
        "{} {} {} {}",
        uts.sysname().to_string_lossy(),
        uts.release().to_string_lossy(),
        uts.version().to_string_lossy(),
        uts.machine().to_string_lossy()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines run-regtests.sh keeps, after its `sed 's/.* [:=] //'`.
    fn regtests_view(vv: &str) -> Vec<String> {
        let kept = vv.lines().filter(|l| {
            l.contains("HAProxy version")
                || l.contains("HA-Proxy version")
                || (l.contains("TARGET") && l.contains('='))
                || l.starts_with("Feature")
                || l.starts_with("Available services")
        });
        kept.map(|l| {
            let cut = [" : ", " = "].iter().filter_map(|sep| l.rfind(sep).map(|i| i + sep.len())).max();
            cut.map_or(l, |i| &l[i..]).to_owned()
        })
        .collect()
    }

    #[test]
    fn version_line_puts_the_compat_version_third() {
        let text = display_version(Some("Linux 6.1 #1 x86_64"));
        let first = text.lines().next().unwrap();
        let words: Vec<&str> = first.split_whitespace().collect();
        assert_eq!(words[0], "rampart");
        assert_eq!(words[1], "version");
        assert_eq!(words[2], format!("2.6.12-rampart{RAMPART_VERSION}"));
        assert_eq!(words[3], RELEASE_DATE);
        assert!(first.ends_with("(HAProxy version 2.6.12 compatible)"));
        assert!(text.contains("\nRunning on: Linux 6.1 #1 x86_64\n"));
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn regression_test_runner_reads_version_target_features_services() {
        let vv = display_version(None) + &display_build_opts(4);
        let view = regtests_view(&vv);
        assert_eq!(view.len(), 4, "{view:?}");
        assert_eq!(view[0].split_whitespace().nth(2), Some(version_string().as_str()));
        assert_eq!(view[1], build_target());
        assert!(view[2].contains("+ACCEPT4") && view[2].contains("+OPENSSL"), "{}", view[2]);
        assert_eq!(view[3], "prometheus-exporter");
    }

    #[test]
    fn feature_list_is_sorted_by_name_with_signs() {
        let list = feature_list();
        let names: Vec<&str> = list.split(' ').map(|w| &w[1..]).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        assert!(list.starts_with("-51DEGREES +ACCEPT4 "));
        assert_eq!(names.len(), FEATURES.len() + MISSING_FEATURES.len());
        for f in FEATURES {
            assert!(list.split(' ').any(|w| w == format!("+{f}")));
        }
    }

    #[test]
    fn build_opts_layout() {
        let text = display_build_opts(2);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Build options :");
        assert!(lines.contains(&"Built with multi-threading support (MAX_THREADS=64, default=2)."));
        assert!(lines.contains(&"  bufsize = 16384, maxrewrite = 1024"));
        assert!(lines.contains(&"Available services : prometheus-exporter"));
        assert!(lines.contains(&"      epoll : pref=300,  test result OK"));
        let filters = lines.iter().position(|l| *l == "Available filters :").unwrap();
        assert_eq!(lines[filters + 1..], ["\t[CACHE] cache", "\t[COMP] compression", "\t[TRACE] trace"]);
        assert!(text.contains("+ZLIB"));
        assert!(!text.contains("h2"), "no HTTP/2 yet");
        assert_eq!(display_build_opts(500).lines().filter(|l| l.contains("default=64)")).count(), 1);
    }
}
