//! Global keywords about the process on the machine, through the binary and against
//! haproxy 2.6: `cpu-map` (the CPUs each worker thread may run on, read from
//! `/proc/<pid>/task/*/status`), its configuration errors, `strict-limits` (a descriptor
//! limit that cannot be raised stops the startup) and `set-dumpable` (after the switch to
//! `user nobody` the process stays dumpable: its /proc files keep the new owner, and
//! core dumps have no size limit). HAProxy counterparts: `set_thread_cpu_affinity()`
//! (src/thread.c), the limits and `GTUNE_SET_DUMPABLE` parts of `main()` (src/haproxy.c).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use rampart_testkit::{haproxy_or_skip, Proxy, Running};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

const TAIL: &str = "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
                    frontend fe1\n  bind fd@${fe1}\n  http-request return status 200\n";

fn start(binary: &Path, global: &str) -> Running {
    let cfg = format!("global\n{global}{TAIL}");
    Proxy::new(binary).listener("fe1").config(&cfg).start().expect("starts")
}

/// `(thread name, tid, Cpus_allowed_list)` of every thread of `pid`, by tid.
fn threads(pid: u32) -> Vec<(String, u32, String)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("task dir") {
        let path = task.unwrap().path();
        let tid = path.file_name().unwrap().to_string_lossy().parse().unwrap();
        let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default().trim().to_owned();
        let status = std::fs::read_to_string(path.join("status")).unwrap_or_default();
        let cpus = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap_or("").trim().to_owned();
        out.push((comm, tid, cpus));
    }
    out.sort_by_key(|t| t.1);
    out
}

/// The CPUs of rampart's worker threads `rampart-1`, `rampart-2` ("?" for one not there).
fn rampart_workers(pid: u32) -> Vec<String> {
    let all = threads(pid);
    let cpus = |name: &str| all.iter().find(|t| t.0 == name).map_or("?".to_owned(), |t| t.2.clone());
    vec![cpus("rampart-1"), cpus("rampart-2")]
}

/// The CPUs of HAProxy's threads 1 and 2 (thread 1 is the main thread, the lowest tid).
fn haproxy_threads(pid: u32) -> Vec<String> {
    threads(pid).into_iter().take(2).map(|t| t.2).collect()
}

/// What `read` returns once it returns `want` (a thread binds itself as it starts, just
/// after it appears), or after 5 seconds.
fn settled(want: &[String], read: impl Fn() -> Vec<String>) -> Vec<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let seen = read();
        if seen == want || std::time::Instant::now() > deadline {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether this test may use CPUs 0 and 1 (the cpu-map tests need both).
fn two_cpus_or_skip(test: &str) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let allowed = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap_or("").trim().to_owned();
    let ok = allowed.starts_with("0-") || allowed.starts_with("0,1");
    if !ok {
        eprintln!("SKIPPED {test}: needs CPUs 0 and 1, this process may use {allowed}");
    }
    ok
}

#[test]
fn cpu_map_binds_each_worker_thread() {
    if !two_cpus_or_skip("cpu_map_binds_each_worker_thread") {
        return;
    }
    let cases: &[(&str, [&str; 2])] = &[
        ("  cpu-map 1/1 1\n  cpu-map 1/2 0\n", ["1", "0"]),
        ("  cpu-map auto:1/1-2 0-1\n", ["0", "1"]),
        ("  cpu-map 1/all 1\n", ["1", "1"]),
        ("  cpu-map 1/odd 1\n", ["1", "0-1"]),
        // the process map, then thread 2 within it
        ("  cpu-map 1 1\n", ["1", "1"]),
        ("  cpu-map all 0-1\n  cpu-map 1/2 0\n", ["0-1", "0"]),
        // a later line replaces an earlier one
        ("  cpu-map 1/all 0\n  cpu-map 1/2 1\n", ["0", "1"]),
    ];
    for (lines, want) in cases {
        let proxy = start(Path::new(RAMPART), &format!("  nbthread 2\n{lines}"));
        let want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
        assert_eq!(settled(&want, || rampart_workers(proxy.pid())), want, "{lines}");
        let all = threads(proxy.pid());
        if !lines.contains("cpu-map 1 ") && !lines.contains("cpu-map all ") {
            // without a process map, the main thread is not bound
            assert_eq!(all.iter().find(|t| t.0 == "rampart").map(|t| t.2.as_str()), Some("0-1"), "{lines}: {all:?}");
        }
        assert!(!proxy.output().contains("cpu-map"), "{}", proxy.output());
    }
}

#[test]
fn cpu_map_thread_sets_as_haproxy() {
    if !two_cpus_or_skip("cpu_map_thread_sets_as_haproxy") {
        return;
    }
    // the thread-set forms HAProxy 2.6 binds in the foreground (its process-wide map
    // applies only in daemon and master-worker modes, and takes `1/1` as process-wide)
    let cases = ["  cpu-map auto:1/1-2 0-1\n", "  cpu-map 1/all 1\n", "  cpu-map 1/2 0\n", "  cpu-map 1/odd 1\n"];
    let Some(haproxy) = haproxy_or_skip("cpu_map_thread_sets_as_haproxy") else { return };
    for lines in cases {
        let global = format!("  nbthread 2\n{lines}");
        let (ours, theirs) = (start(Path::new(RAMPART), &global), start(&haproxy, &global));
        // both threads there, then a moment for the second one to bind itself
        let pid = theirs.pid();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while threads(pid).len() < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(100));
        let theirs = haproxy_threads(pid);
        assert_eq!(settled(&theirs, || rampart_workers(ours.pid())), theirs, "{lines}");
    }
}

#[test]
fn cpu_map_a_cpu_the_process_may_not_use_is_a_warning() {
    let proxy = start(Path::new(RAMPART), "  nbthread 2\n  cpu-map 1/2 1000\n");
    assert!(
        proxy.wait_output("cpu-map: cannot bind thread 2 to CPU(s) 1000: ", Duration::from_secs(5)),
        "{}",
        proxy.output()
    );
}

/// Bad `cpu-map` lines and the first diagnostic HAProxy 2.6 prints for each.
const BAD: &[(&str, &str)] = &[
    (
        "cpu-map 1/1",
        "cpu-map expects a process number  ('all', 'odd', 'even', a number from 1 to 64 or a range),  followed by a \
         list of CPU ranges with numbers from 0 to 63.",
    ),
    ("cpu-map x 0", "cpu-map : 'x' is not a valid number/range."),
    ("cpu-map 1/2x 0", "cpu-map : '2x' is not a valid number/range."),
    ("cpu-map 1/0 0", "cpu-map : '0' is not a valid number/range. It supports numbers from 1 to 64."),
    ("cpu-map 1/1-65 0", "cpu-map : '1-65' is not a valid number/range. It supports numbers from 1 to 64."),
    ("cpu-map 1/1 0 abc", "cpu-map : 'abc' is not a CPU range."),
    ("cpu-map 1/1 5000", "cpu-map : supports CPU numbers from 0 to 1023."),
    (
        "cpu-map auto:1/1-4 0-1",
        "cpu-map : PROC/THREAD range and CPU sets must have the same size to be automatically bound",
    ),
    ("set-dumpable yes", "'set-dumpable' cannot handle unexpected argument 'yes'."),
    ("no strict-limits now", "'strict-limits' cannot handle unexpected argument 'now'."),
];

fn first_alert(binary: &Path, line: &str) -> String {
    let cfg = format!("global\n  {line}\n{TAIL}");
    let out = Proxy::new(binary).listener("fe1").config(&cfg).check().expect("runs");
    assert_ne!(out.code, 0, "{line}");
    let first = out.diagnostics().into_iter().next().unwrap_or_default();
    first.lines().next().unwrap_or("").split(" : ").skip(3).collect::<Vec<_>>().join(" : ")
}

#[test]
fn bad_cpu_map_lines_are_refused_as_haproxy_does() {
    for (line, msg) in BAD {
        assert_eq!(first_alert(Path::new(RAMPART), line), *msg, "{line}");
    }
    let Some(haproxy) = haproxy_or_skip("bad_cpu_map_lines_are_refused_as_haproxy_does") else { return };
    for (line, msg) in BAD {
        assert_eq!(first_alert(&haproxy, line), *msg, "haproxy: {line}");
    }
}

/// A descriptor limit no process may get (`ulimit-n` past `fs.nr_open`).
fn impossible_ulimit() -> u64 {
    let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open").ok().and_then(|s| s.trim().parse().ok());
    nr_open.unwrap_or(1 << 20) + 1
}

/// How `binary` ends up with `global_extra` and an impossible `ulimit-n`: `Err(output)`
/// when it refused to start, `Ok(output)` when it runs.
fn start_with_impossible_ulimit(binary: &Path, global_extra: &str) -> Result<String, String> {
    let cfg = format!("global\n  ulimit-n {}\n{global_extra}{TAIL}", impossible_ulimit());
    match Proxy::new(binary).listener("fe1").config(&cfg).start() {
        Ok(proxy) => {
            proxy.wait_output("Cannot raise FD limit", Duration::from_secs(2));
            Ok(proxy.output())
        }
        Err(rampart_testkit::StartError::Exited { status, output, .. }) => {
            assert_eq!(status.code(), Some(1), "{output}");
            Err(output)
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn strict_limits_makes_a_refused_fd_limit_fatal() {
    let want = format!("main()] Cannot raise FD limit to {}, limit is ", impossible_ulimit());
    let mut binaries = vec![Path::new(RAMPART).to_path_buf()];
    binaries.extend(haproxy_or_skip("strict_limits_makes_a_refused_fd_limit_fatal"));
    for binary in &binaries {
        let refused = start_with_impossible_ulimit(binary, "  strict-limits\n").expect_err("strict: refused");
        assert!(refused.contains("[ALERT]") && refused.contains(&want), "{}: {refused}", binary.display());
        let runs = start_with_impossible_ulimit(binary, "  no strict-limits\n").expect("not strict: runs");
        assert!(runs.contains("[WARNING]") && runs.contains(&want), "{}: {runs}", binary.display());
    }
}

/// The owner of `/proc/<pid>/status` (root while the process is not dumpable) and its
/// soft core-size limit as `/proc/<pid>/limits` shows it, once the process runs as `uid`.
fn dumpable_signs(pid: u32, uid: u32) -> (u32, String) {
    let switched = || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let real = status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|l| l.split_whitespace().next());
        real == Some(uid.to_string().as_str())
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !switched() {
        assert!(std::time::Instant::now() < deadline, "process {pid} never switched to uid {uid}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let uid = std::fs::metadata(format!("/proc/{pid}/status")).expect("status").uid();
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits");
    let core = limits.lines().find(|l| l.starts_with("Max core file size")).expect("core line");
    let soft = core.trim_start_matches("Max core file size").split_whitespace().next().unwrap_or("").to_owned();
    (uid, soft)
}

#[test]
fn set_dumpable_keeps_the_process_dumpable_after_the_user_switch() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED set_dumpable_keeps_the_process_dumpable_after_the_user_switch: needs root");
        return;
    }
    let nobody = nix::unistd::User::from_name("nobody").ok().flatten().expect("user nobody").uid.as_raw();
    let hard_core = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_CORE).unwrap().1;
    let mut binaries = vec![Path::new(RAMPART).to_path_buf()];
    binaries.extend(haproxy_or_skip("set_dumpable_keeps_the_process_dumpable_after_the_user_switch"));
    for binary in &binaries {
        let plain = start(binary, "  user nobody\n");
        assert_eq!(dumpable_signs(plain.pid(), nobody).0, 0, "{}: not dumpable, /proc is root's", binary.display());
        let dumpable = start(binary, "  user nobody\n  set-dumpable\n");
        let (uid, core) = dumpable_signs(dumpable.pid(), nobody);
        assert_eq!(uid, nobody, "{}: dumpable, /proc is the process's", binary.display());
        if hard_core == nix::sys::resource::RLIM_INFINITY {
            assert_eq!(core, "unlimited", "{}", binary.display());
        }
        assert!(!dumpable.output().contains("[WARNING]"), "{}", dumpable.output());
    }
}
