//! Configuration files, like HAProxy's `-conf-BAD` reg-tests:
//!
//! - `tests/cfg/ok/*.cfg` load without alert; their warnings, if any, are exactly the
//!   `.stderr` file next to them (no `.stderr` means no output at all);
//! - `tests/cfg/bad/*.cfg` fail, and the rendered diagnostics are exactly the `.stderr`
//!   file next to them (pid shown as 4121).
//!
//! Where `haproxy` is installed, the same files go through `haproxy -c`: ok files must be
//! valid, bad files must be refused, except `bad/notyet-*.cfg` which use keywords HAProxy
//! has and rampart does not implement yet, so HAProxy must accept them.
//!
//! `RAMPART_BLESS=1 cargo test -p rampart-cfg --test cfg` rewrites the `.stderr` files.

use std::path::{Path, PathBuf};
use std::process::Command;

use rampart_cfg::{load_files, LexCtx, Loaded};

const PID: u32 = 4121;

fn cfg_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new("tests/cfg").join(dir))
        .expect("tests/cfg directory")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "cfg"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .cfg file in tests/cfg/{dir}");
    files
}

fn load(path: &Path) -> Loaded {
    let ctx = LexCtx { env: &|_| None, version: "2.6.12", features: &[] };
    load_files(&[path.to_path_buf()], &ctx)
}

fn render(loaded: &Loaded) -> String {
    loaded.diags.list.iter().map(|d| d.render(PID)).collect()
}

/// Compares `actual` with the `.stderr` file of `cfg` (absent = empty), or rewrites it
/// under `RAMPART_BLESS`.
fn check_stderr(cfg: &Path, actual: &str) -> Result<(), String> {
    let expected_path = cfg.with_extension("stderr");
    if std::env::var_os("RAMPART_BLESS").is_some() {
        if actual.is_empty() {
            let _ = std::fs::remove_file(&expected_path);
        } else {
            std::fs::write(&expected_path, actual).map_err(|e| e.to_string())?;
        }
        return Ok(());
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    if expected == actual {
        Ok(())
    } else {
        Err(format!("{}:\n--- expected\n{expected}--- actual\n{actual}", cfg.display()))
    }
}

#[test]
fn ok_files_load_without_alert() {
    let mut failures = Vec::new();
    for cfg in cfg_files("ok") {
        let loaded = load(&cfg);
        if loaded.config.is_none() {
            failures.push(format!("{} was refused:\n{}", cfg.display(), render(&loaded)));
            continue;
        }
        if let Err(e) = check_stderr(&cfg, &render(&loaded)) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bad_files_fail_with_expected_messages() {
    let mut failures = Vec::new();
    for cfg in cfg_files("bad") {
        let loaded = load(&cfg);
        if loaded.config.is_some() {
            failures.push(format!("{} was accepted", cfg.display()));
        }
        if let Err(e) = check_stderr(&cfg, &render(&loaded)) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The loaded model of the ok files holds what they say (a spot check that the files
/// are not accepted by ignoring them).
#[test]
fn ok_files_are_resolved() {
    let loaded = load(Path::new("tests/cfg/ok/http-basic.cfg"));
    let cfg = loaded.config.expect("valid");
    let www = &cfg.proxies[0];
    assert_eq!(www.name, "www");
    assert_eq!(www.binds.iter().map(|b| b.addrs.len()).sum::<usize>(), 4);
    assert_eq!(www.use_backends.len(), 2);
    let be = www.default_backend.as_ref().expect("default_backend");
    assert_eq!(cfg.proxies[be.index].name, "app");
    let rampart_cfg::model::BackendTarget::Static(api) = &www.use_backends[0].target else {
        panic!("static use_backend");
    };
    assert_eq!(cfg.proxies[api.index].name, "api");
    assert_eq!(www.errorfiles.len(), 1, "errorfile inherited from defaults");
    assert!(www.errorfiles[0].1.starts_with(b"HTTP/1.0 503"));
    let app = &cfg.proxies[be.index];
    assert_eq!(app.retries, 2);
    assert_eq!(app.servers.len(), 2);
    assert_eq!(app.timeouts.queue, Some(std::time::Duration::from_secs(60)));
}

/// The haproxy to compare with (`RAMPART_TEST_HAPROXY` or the installed one); a visible
/// skip without it, a failure under `RAMPART_REQUIRE_HAPROXY`.
fn haproxy() -> Option<PathBuf> {
    rampart_testkit::haproxy_or_skip("cfg::haproxy_agrees_on_the_same_files")
}

fn haproxy_check(bin: &Path, cfg: &Path) -> i32 {
    let out = Command::new(bin).arg("-c").arg("-f").arg(cfg).output().expect("run haproxy");
    out.status.code().unwrap_or(-1)
}

#[test]
fn haproxy_agrees_on_the_same_files() {
    let Some(bin) = haproxy() else { return };
    let mut failures = Vec::new();
    for cfg in cfg_files("ok") {
        let rc = haproxy_check(&bin, &cfg);
        if rc != 0 {
            failures.push(format!("haproxy -c refused ok file {} (exit {rc})", cfg.display()));
        }
    }
    for cfg in cfg_files("bad") {
        let not_yet = cfg.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("notyet-"));
        let rc = haproxy_check(&bin, &cfg);
        match (not_yet, rc) {
            (true, 0) | (false, 1) => {}
            (true, _) => {
                failures.push(format!("haproxy -c refused {} (exit {rc}); it must use valid keywords", cfg.display()))
            }
            (false, _) => failures.push(format!("haproxy -c did not refuse {} (exit {rc})", cfg.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Random lines built from real keywords and odd values never make the parser panic.
#[test]
fn random_lines_never_panic() {
    const WORDS: &[&str] = &[
        "global",
        "defaults",
        "frontend",
        "backend",
        "listen",
        "userlist",
        "from",
        "no",
        "default",
        "bind",
        "server",
        "default-server",
        "mode",
        "http",
        "tcp",
        "timeout",
        "client",
        "server",
        "connect",
        "option",
        "httplog",
        "forwardfor",
        "except",
        "header",
        "if-none",
        "http-request",
        "return",
        "status",
        "content-type",
        "string",
        "file",
        "lf-string",
        "hdr",
        "if",
        "unless",
        "use_backend",
        "default_backend",
        "balance",
        "roundrobin",
        "errorfile",
        "503",
        "retries",
        "http-reuse",
        "log",
        "stats",
        "socket",
        "maxconn",
        "nbthread",
        "weight",
        "inter",
        "check",
        "addr",
        "port",
        "name",
        "",
        "x",
        "0",
        "-1",
        "99999999999999999999",
        "1.5s",
        "10s",
        ":80",
        "[::1]:80",
        "::1",
        "fd@",
        "fd@3",
        "unix@",
        "/",
        "127.0.0.1:1-2",
        "a,b",
        ",",
        "%[src]",
        "{",
        "}",
        "é",
        "\u{0}",
        "ipv6@",
        "abns@x",
        "tests/cfg/files/503.http",
        "/dev/null",
        "d",
        "fe",
        "be",
        "tcp-request",
        "tcp-response",
        "content",
        "connection",
        "session",
        "inspect-delay",
        "http-response",
        "http-after-response",
        "set-var(txn.x)",
        "set-var(",
        "unset-var(txn.x,ifset)",
        "set-header",
        "del-header",
        "-m",
        "reg",
        "deny",
        "deny_status",
        "tarpit",
        "capture",
        "len",
        "id",
        "redirect",
        "location",
        "prefix",
        "code",
        "301",
        "acl",
        "use-server",
        "monitor",
        "monitor-uri",
        "fail",
        "declare",
        "request",
        "response",
        "userlist",
        "user",
        "group",
        "users",
        "groups",
        "http-errors",
        "errorfiles",
        "http-error",
        "errorfile",
        "default-errorfiles",
        "set-timeout",
        "wait-for-body",
        "time",
        "at-least",
        "normalize-uri",
        "switch-mode",
        "proto",
        "lower",
        "src",
        "req.hdr(host)",
        "set-status",
        "reason",
        "accept",
        "reject",
        "close",
        "unique-id-format",
        "expose-experimental-directives",
        "tune.vars.txn-max-size",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let ctx = LexCtx { env: &|_| None, version: "2.6.12", features: &[] };
    for _ in 0..800 {
        let mut text = String::new();
        for _ in 0..next(30) {
            let n = next(7);
            let line: Vec<&str> = (0..n).map(|_| WORDS[next(WORDS.len())]).collect();
            text.push_str(&line.join(" "));
            text.push('\n');
        }
        let loaded = rampart_cfg::parse_str("fuzz.cfg", &text, &ctx);
        for d in &loaded.diags.list {
            assert!(!d.render(1).is_empty());
        }
    }
}
