//! The `rampart` binary's command line, run as a user or a script would run it: version
//! texts, usage, `-c`, `-cc`, daemon mode and pidfile, and exit codes compared with
//! HAProxy's own binary when it is installed (/usr/sbin/haproxy).
//!
//! Tests that need the configuration parser or the condition evaluator check first that
//! these are more than placeholders (`parser_is_ready()`, `conditions_are_ready()`) and
//! say so on stderr when they skip.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rampart_cfg::version::{FEATURES, HAPROXY_COMPAT_VERSION};
use rampart_cfg::LexCtx;

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

// === helpers ===

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("rampart-cli-{name}-{}-{seq}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("write file");
        path
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a run printed and returned.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// The pid of the process started (the daemon's parent under `-D`).
    pid: u32,
}

/// Runs `program` with `args` in `dir`, with stdin closed, and waits for it to exit
/// and close its output, at most `limit` (the test fails past that: a daemon that
/// kept stdout open would be caught here).
fn run_in(program: &str, dir: &Path, args: &[&str], limit: Duration) -> Run {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    let pid = child.id();
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let readers = [std::thread::spawn(move || read_all(&mut out)), std::thread::spawn(move || read_all(&mut err))];
    let deadline = Instant::now() + limit;
    while !readers.iter().all(|r| r.is_finished()) {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{program} {args:?}: output still open after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = child.wait().expect("wait");
    let [stdout, stderr] = readers.map(|r| r.join().expect("reader"));
    Run { code: status.code(), stdout, stderr, pid }
}

fn read_all(r: &mut impl Read) -> String {
    let mut buf = Vec::new();
    let _ = r.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

fn rampart(dir: &Path, args: &[&str]) -> Run {
    run_in(RAMPART, dir, args, Duration::from_secs(20))
}

fn env_lookup(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn lex_ctx() -> LexCtx<'static> {
    LexCtx { env: &env_lookup, version: HAPROXY_COMPAT_VERSION, features: FEATURES }
}

/// Whether the configuration parser turns a frontend into a proxy (not a placeholder).
fn parser_is_ready() -> bool {
    let loaded = rampart_cfg::parse_str("probe.cfg", "frontend fe\n    bind 127.0.0.1:8080\n", &lex_ctx());
    let ready = loaded.config.is_some_and(|c| !c.proxies.is_empty());
    if !ready {
        eprintln!("SKIPPED: the configuration parser is still a placeholder");
    }
    ready
}

/// Whether `-cc` can evaluate a condition (not the placeholder).
fn conditions_are_ready() -> bool {
    let ready = rampart_cfg::cond::eval_str("1", &lex_ctx()).is_ok();
    if !ready {
        eprintln!("SKIPPED: the condition evaluator is still a placeholder");
    }
    ready
}

/// A port nothing listens on right now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("free port")
}

fn valid_cfg(port: u16) -> String {
    format!(
        "defaults\n    mode http\n    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    default_backend be\n\
         backend be\n    server s1 127.0.0.1:1\n"
    )
}

const NO_LISTENER_CFG: &str = "defaults\n    timeout client 1s\n";

/// The pid in `[ALERT]    (1234) : ...`.
fn pid_of_line(line: &str) -> Option<u32> {
    let start = line.find('(')? + 1;
    let end = start + line[start..].find(')')?;
    line[start..end].parse().ok()
}

/// Replaces what differs between two runs or two programs: pids, the program's version
/// and path, and its name.
fn normalize(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .map(|line| {
            let line = match (line.find('('), line.find(')')) {
                (Some(a), Some(b)) if a < b => format!("{}(PID){}", &line[..a], &line[b + 1..]),
                _ => line.to_owned(),
            };
            if line.contains(" version is ") {
                "[NOTICE]   (PID) : VERSION".to_owned()
            } else if line.contains(" path to executable is ") {
                "[NOTICE]   (PID) : PATH".to_owned()
            } else {
                line
            }
        })
        .collect()
}

/// Ends a daemon started by a test, if it is still running and is really rampart.
fn stop_daemon(pid: i32) {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    if !String::from_utf8_lossy(&cmdline).contains("rampart") {
        return;
    }
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGINT);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

// === version ===

#[test]
fn v_prints_the_version_and_exits_0() {
    let dir = TempDir::new("v");
    let run = rampart(dir.path(), &["-v"]);
    assert_eq!(run.code, Some(0));
    assert_eq!(run.stderr, "");
    let first = run.stdout.lines().next().unwrap_or_default();
    let words: Vec<&str> = first.split_whitespace().collect();
    assert_eq!(&words[..2], ["rampart", "version"]);
    assert!(words[2].starts_with("2.6.12-rampart"), "{first}");
    assert!(first.ends_with("(HAProxy version 2.6.12 compatible)"), "{first}");
    assert!(run.stdout.lines().any(|l| l.starts_with("Running on: Linux ")), "{}", run.stdout);
    assert!(!run.stdout.contains("Build options"));
}

#[test]
fn vv_has_haproxy_layout() {
    let dir = TempDir::new("vv");
    let run = rampart(dir.path(), &["-vv"]);
    assert_eq!(run.code, Some(0));
    let lines: Vec<&str> = run.stdout.lines().collect();
    let at = |prefix: &str| lines.iter().position(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no {prefix:?}"));
    let order = [
        at("rampart version "),
        at("Build options :"),
        at("  TARGET  = "),
        at("Feature list : "),
        at("Default settings :"),
        at("Built with Lua version : Lua 5.4"),
        at("Built with multi-threading support (MAX_THREADS=64, default="),
        at("Available polling systems :"),
        at("Available multiplexer protocols :"),
        at("Available services : prometheus-exporter"),
        at("Available filters :"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "sections out of order: {order:?}");
    let features = &lines[at("Feature list : ")]["Feature list : ".len()..];
    assert!(features.split(' ').all(|w| w.starts_with('+') || w.starts_with('-')), "{features}");
    assert!(features.contains("+EPOLL") && features.contains("+OPENSSL") && features.contains("+LUA"), "{features}");
}

#[test]
fn regression_test_runner_reads_vv_with_its_own_shell_pipeline() {
    // The exact extraction of HAProxy's scripts/run-regtests.sh, with its default
    // HAPROXY_ARGS (-dM).
    let script = format!(
        "{{ read HAPROXY_VERSION; read TARGET; read FEATURES; read SERVICES; }} << EOF\n\
         $(\"{RAMPART}\" -dM -vv | grep 'HA-\\?Proxy version\\|TARGET.*=\\|^Feature\\|^Available services' | sed 's/.* [:=] //')\n\
         EOF\n\
         HAPROXY_VERSION=$(echo $HAPROXY_VERSION | cut -d \" \" -f 3)\n\
         echo \"$HAPROXY_VERSION|$TARGET|$FEATURES|$SERVICES\"\n"
    );
    let out = Command::new("sh").arg("-c").arg(script).output().expect("sh");
    let text = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<&str> = text.trim_end().split('|').collect();
    assert_eq!(fields.len(), 4, "{text}");
    assert!(fields[0].starts_with("2.6.12-rampart"), "version: {text}");
    assert_eq!(fields[1], "linux-glibc", "target: {text}");
    assert!(fields[2].contains("+THREAD"), "features: {text}");
    assert_eq!(fields[3], "prometheus-exporter", "services: {text}");
}

// === usage and bad command lines ===

#[test]
fn unknown_flag_prints_version_and_usage_and_exits_1() {
    let dir = TempDir::new("usage");
    for args in [&["-Z"][..], &[], &["haproxy.cfg"], &["-f"], &["-cc"], &["-sf", "0"]] {
        let run = rampart(dir.path(), args);
        assert_eq!(run.code, Some(1), "{args:?}");
        assert!(run.stdout.starts_with("rampart version "), "{args:?}: {}", run.stdout);
        assert!(run.stderr.starts_with("Usage : rampart [-f <cfgfile|cfgdir>]*"), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn unsupported_modes_are_refused_clearly() {
    let dir = TempDir::new("unsupported");
    let cfg = dir.file("r.cfg", NO_LISTENER_CFG);
    let cfg = cfg.to_str().unwrap();
    for (flag, args) in [("-dr", vec!["-dr", "-f", cfg]), ("-dR", vec!["-dR", "-f", cfg])] {
        let run = rampart(dir.path(), &args);
        assert_eq!(run.code, Some(1), "{flag}");
        let last = run.stderr.lines().last().unwrap_or_default();
        assert!(last.starts_with("[ALERT]    ("), "{flag}: {}", run.stderr);
        assert!(
            last.contains(&format!(" : '{flag}' (")) && last.ends_with(") is not supported yet."),
            "{flag}: {last}"
        );
    }
}

#[test]
fn bad_pid_list_is_an_alert() {
    let dir = TempDir::new("sf");
    let run = rampart(dir.path(), &["-sf", "12abc"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stdout, "");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{}", run.stderr);
    let pid = pid_of_line(lines[2]).expect("pid");
    assert_eq!(lines[2], format!("[ALERT]    ({pid}) : -sf option: some bytes unconsumed in PID list {{abc}}"));
    assert_eq!(pid, run.pid, "alerts carry the pid of the process");
}

#[test]
fn chdir_failure_is_reported_like_haproxy() {
    let dir = TempDir::new("chdir");
    let run = rampart(dir.path(), &["-C", "/nonexistent-r4mp", "-c", "-f", "x.cfg"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(
        normalize(&run.stderr),
        [
            "[NOTICE]   (PID) : VERSION",
            "[NOTICE]   (PID) : PATH",
            "[ALERT]    (PID) : Could not change to directory /nonexistent-r4mp : No such file or directory",
        ]
    );
}

// === -c ===

#[test]
fn check_of_a_missing_file() {
    let dir = TempDir::new("missing");
    let run = rampart(dir.path(), &["-c", "-f", "nope.cfg"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stdout, "");
    let lines: Vec<&str> = run.stderr.lines().collect();
    let pid = run.pid;
    assert_eq!(
        lines,
        [
            format!("[NOTICE]   ({pid}) : rampart version is 2.6.12-rampart{}", env!("CARGO_PKG_VERSION")),
            format!("[NOTICE]   ({pid}) : path to executable is {}", std::fs::canonicalize(RAMPART).unwrap().display()),
            format!("[ALERT]    ({pid}) : config : Cannot open configuration file/directory nope.cfg : No such file or directory"),
        ]
    );
}

#[test]
fn check_quiet_prints_nothing_but_keeps_the_status() {
    let dir = TempDir::new("quiet");
    let run = rampart(dir.path(), &["-q", "-c", "-f", "nope.cfg"]);
    assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (Some(1), "", ""));
    dir.file("n.cfg", NO_LISTENER_CFG);
    let run = rampart(dir.path(), &["-q", "-c", "-f", "n.cfg"]);
    assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (Some(2), "", ""));
}

#[test]
fn check_without_listener_exits_2() {
    let dir = TempDir::new("nolisten");
    dir.file("n.cfg", NO_LISTENER_CFG);
    let run = rampart(dir.path(), &["-c", "-f", "n.cfg"]);
    assert_eq!(run.code, Some(2));
    assert_eq!(run.stdout, "Configuration file has no error but will not start (no listener) => exit(2).\n");
    assert_eq!(run.stderr, "");
}

#[test]
fn check_of_a_valid_configuration() {
    if !parser_is_ready() {
        return;
    }
    let dir = TempDir::new("valid");
    dir.file("a.cfg", &valid_cfg(free_port()));
    for args in [&["-c", "-f", "a.cfg"][..], &["-c", "--", "a.cfg"], &["-c", "-f", "."]] {
        let run = rampart(dir.path(), args);
        assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "Configuration file is valid\n", "{args:?}");
        assert_eq!(run.stderr, "", "{args:?}");
    }
}

#[test]
fn check_of_an_invalid_configuration() {
    if !parser_is_ready() {
        return;
    }
    let dir = TempDir::new("invalid");
    dir.file("bad.cfg", &format!("global\n    foo bar\n{}", valid_cfg(free_port())));
    let run = rampart(dir.path(), &["-c", "-f", "bad.cfg"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stdout, "");
    let lines = normalize(&run.stderr);
    assert_eq!(lines.len(), 5, "{}", run.stderr);
    assert!(
        lines[2].starts_with("[ALERT]    (PID) : config : parsing [bad.cfg:2] : unknown keyword 'foo'"),
        "{}",
        lines[2]
    );
    assert_eq!(lines[3], "[ALERT]    (PID) : config : Error(s) found in configuration file : bad.cfg");
    assert_eq!(lines[4], "[ALERT]    (PID) : config : Fatal errors found in configuration.");
}

#[test]
fn check_binds_nothing() {
    if !parser_is_ready() {
        return;
    }
    let dir = TempDir::new("nobind");
    // Something else holds the port: -c must not care.
    let holder = std::net::TcpListener::bind("127.0.0.1:0").expect("hold a port");
    let port = holder.local_addr().expect("held port").port();
    dir.file("a.cfg", &valid_cfg(port));
    let run = rampart(dir.path(), &["-c", "-f", "a.cfg"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

// === -cc ===

#[test]
fn check_condition_error_and_empty() {
    let dir = TempDir::new("cc");
    let run = rampart(dir.path(), &["-cc", "foo("]);
    assert_eq!(run.code, Some(2));
    let last = run.stderr.lines().last().unwrap_or_default();
    assert!(last.contains(" : config : Failed to evaluate condition: "), "{}", run.stderr);
    let run = rampart(dir.path(), &["-cc", ""]);
    assert_eq!((run.code, run.stderr.as_str()), (Some(1), ""));
}

#[test]
fn check_condition_true_and_false() {
    if !conditions_are_ready() {
        return;
    }
    let dir = TempDir::new("cc2");
    for (expr, code) in [
        ("1", 0),
        ("0", 1),
        ("version_atleast(2.5-dev0)", 0),
        ("version_atleast(2.7)", 1),
        ("feature(THREAD)", 0),
        ("feature(OPENSSL)", 0),
        ("feature(LUA)", 0),
        ("feature(QUIC)", 1),
    ] {
        let run = rampart(dir.path(), &["-cc", expr]);
        assert_eq!(run.code, Some(code), "{expr}: {}", run.stderr);
        assert_eq!(run.stderr, "", "{expr}");
    }
}

// === daemon and pidfile ===

#[test]
fn daemon_returns_at_once_with_a_pidfile() {
    if !parser_is_ready() {
        return;
    }
    let dir = TempDir::new("daemon");
    dir.file("a.cfg", &valid_cfg(free_port()));
    let pidfile = dir.path().join("r.pid");
    // run_in fails if the daemon kept the test's stdout/stderr open.
    let run = run_in(RAMPART, dir.path(), &["-D", "-p", "r.pid", "-f", "a.cfg"], Duration::from_secs(10));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stderr, "");
    let text = std::fs::read_to_string(&pidfile).expect("pidfile written before the parent exits");
    let daemon: i32 = text.trim_end().parse().unwrap_or_else(|_| panic!("pidfile: {text:?}"));
    assert_eq!(text, format!("{daemon}\n"));
    assert_ne!(daemon as u32, run.pid, "the pidfile names the daemon, not the parent");
    stop_daemon(daemon);
}

#[test]
fn daemon_reports_a_startup_failure_through_its_status() {
    if !parser_is_ready() {
        return;
    }
    let dir = TempDir::new("daemonfail");
    dir.file("a.cfg", &valid_cfg(free_port()));
    let run =
        run_in(RAMPART, dir.path(), &["-D", "-p", "/nonexistent-r4mp/r.pid", "-f", "a.cfg"], Duration::from_secs(10));
    assert_eq!(run.code, Some(1));
    let last = run.stderr.lines().last().unwrap_or_default();
    assert!(last.ends_with(".main()] Cannot create pidfile /nonexistent-r4mp/r.pid"), "{}", run.stderr);
    assert_ne!(pid_of_line(last), Some(run.pid), "the alert comes from the daemon child");
}

#[test]
fn foreground_does_not_write_the_pidfile() {
    if !parser_is_ready() {
        return;
    }
    let dir = TempDir::new("fg");
    dir.file("a.cfg", &valid_cfg(free_port()));
    let mut child = Command::new(RAMPART)
        .args(["-db", "-p", "r.pid", "-f", "a.cfg"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start");
    std::thread::sleep(Duration::from_millis(300));
    if child.try_wait().expect("try_wait").is_none() {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT);
    }
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    assert!(!dir.path().join("r.pid").exists(), "HAProxy writes the pidfile only in daemon mode");
}

// === the same answers as HAProxy ===

#[test]
fn exit_codes_match_haproxy() {
    let Some(haproxy) = rampart_testkit::haproxy_or_skip(module_path!()) else { return };
    let dir = TempDir::new("diff");
    dir.file("n.cfg", NO_LISTENER_CFG);
    let mut cases: Vec<Vec<&str>> = vec![
        vec!["-v"],
        vec!["-Z"],
        vec![],
        vec!["-cc"],
        vec!["-cc", ""],
        vec!["-cc", "foo("],
        vec!["-c", "-f", "nope.cfg"],
        vec!["-c", "-f", "n.cfg"],
        vec!["-q", "-c", "-f", "n.cfg"],
        vec!["-sf", "abc"],
        vec!["-sf", "0"],
        vec!["-C", "/nonexistent-r4mp", "-c", "-f", "n.cfg"],
        vec!["-n", "100", "-N", "10", "-L", "peer1", "-dM", "-dG", "-c", "-f", "n.cfg"],
    ];
    let port = free_port();
    let valid = valid_cfg(port);
    let invalid = format!("global\n    foo bar\n{valid}");
    if parser_is_ready() {
        dir.file("a.cfg", &valid);
        dir.file("bad.cfg", &invalid);
        cases.extend([vec!["-c", "-f", "a.cfg"], vec!["-c", "-f", "bad.cfg"], vec!["-c", "--", "a.cfg"]]);
    }
    if conditions_are_ready() {
        cases.extend([
            vec!["-cc", "1"],
            vec!["-cc", "0"],
            vec!["-cc", "defined(HOME)"],
            vec!["-cc", "version_atleast(2.5)"],
        ]);
    }
    for args in &cases {
        let ours = rampart(dir.path(), args);
        let theirs = run_in(&haproxy.to_string_lossy(), dir.path(), args, Duration::from_secs(20));
        assert_eq!(ours.code, theirs.code, "{args:?}\nrampart: {}\nhaproxy: {}", ours.stderr, theirs.stderr);
    }
}

#[test]
fn messages_match_haproxy() {
    let Some(haproxy) = rampart_testkit::haproxy_or_skip(module_path!()) else { return };
    let dir = TempDir::new("diffmsg");
    dir.file("n.cfg", NO_LISTENER_CFG);
    for args in [
        &["-c", "-f", "nope.cfg"][..],
        &["-c", "-f", "n.cfg", "-f", "nope.cfg"],
        &["-C", "/nonexistent-r4mp", "-c", "-f", "n.cfg"],
        &["-sf", "abc"],
        &["-c", "-f", "n.cfg"],
    ] {
        let ours = rampart(dir.path(), args);
        let theirs = run_in(&haproxy.to_string_lossy(), dir.path(), args, Duration::from_secs(20));
        assert_eq!(normalize(&ours.stderr), normalize(&theirs.stderr), "{args:?}");
        assert_eq!(ours.stdout, theirs.stdout, "{args:?}");
    }
}
