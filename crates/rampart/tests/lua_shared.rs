//! `lua-load` and `lua-load-per-thread` through the binary with `nbthread 2` and many
//! connections at once: the files of `lua-load` run in one state the threads share
//! (a global an action sets on one thread is the one a task and the actions of the
//! other thread read; its calls are serialized; a script that sleeps lets the other
//! calls run), those of `lua-load-per-thread` in one state per thread (their globals
//! are the thread's). Each is also run through haproxy 2.6 with the same scripts,
//! comparing what the server and the clients saw. And Lua actions in `tcp-request
//! connection` and `session` rules, which HAProxy 2.6 refuses.

mod http_common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use http_common::{PREAMBLE, RAMPART};
use rampart_testkit::{HttpBackend, RawClient, Response, Running};

fn script(name: &str, code: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rampart-lua-shared-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.lua"));
    std::fs::write(&path, code).unwrap();
    path
}

/// In the shared state: `hits` counts the requests of every thread; a task copies it
/// to `task_saw`; `lua.report` answers both; `lua.nap` sleeps in an action.
const SHARED: &str = r#"
hits = 0
task_saw = -1
core.register_action("bump", { "http-req" }, function(txn)
  hits = hits + 1
  txn.http:req_set_header("x-hits", tostring(hits))
  txn.http:req_set_header("x-shared-thread", tostring(core.thread))
end)
core.register_action("nap", { "http-req" }, function(txn)
  core.msleep(tonumber(txn.sf:req_hdr("x-nap")))
end)
core.register_service("report", "http", function(applet)
  local body = hits .. " " .. task_saw
  applet:set_status(200)
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end)
core.register_task(function()
  while true do
    task_saw = hits
    core.msleep(10)
  end
end)
"#;

/// In each thread's state: `mine` counts the thread's requests.
const PER_THREAD: &str = r#"
mine = 0
core.register_action("tid", { "http-req" }, function(txn)
  mine = mine + 1
  txn.http:req_set_header("x-thread", tostring(core.thread))
  txn.http:req_set_header("x-mine", tostring(mine))
end)
"#;

fn cfg(shared: &Path, per_thread: &Path) -> String {
    let global = format!(
        "global\n  nbthread 2\n  lua-load {}\n  lua-load-per-thread {}\n",
        shared.display(),
        per_thread.display()
    );
    let preamble = PREAMBLE.replacen("global\n  nbthread 1\n", &global, 1);
    assert!(preamble.contains("nbthread 2"), "the preamble changed: {PREAMBLE}");
    format!(
        "{preamble}frontend fe1\n  bind fd@${{fe1}}\n\
         \x20 http-request use-service lua.report if {{ path /report }}\n\
         \x20 http-request lua.nap if {{ req.hdr(x-nap) -m found }}\n\
         \x20 http-request lua.tid if {{ path_beg /own }} || {{ path_beg /both }}\n\
         \x20 http-request lua.bump unless {{ path_beg /own }}\n\
         \x20 default_backend be1\n\
         backend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    )
}

fn start(binary: &Path, s1: &HttpBackend) -> Running {
    let shared = script("shared", SHARED);
    let per_thread = script("per_thread", PER_THREAD);
    rampart_testkit::Proxy::new(binary)
        .listener("fe1")
        .backend("s1", s1.addr())
        .config(&cfg(&shared, &per_thread))
        .start()
        .expect("the proxy starts")
}

fn get(p: &Running, path: &str, extra: &str) -> Response {
    let mut c = RawClient::connect(p.addr("fe1")).expect("connect to fe1");
    c.send(format!("GET {path} HTTP/1.1\r\nHost: h\r\n{extra}\r\n")).unwrap();
    c.read_response().unwrap()
}

const CLIENTS: usize = 4;
const PER_CLIENT: usize = 40;

/// What the test sees of a run (the same for rampart and haproxy).
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    /// The `x-hits` values the server received, sorted: 1..=N when every thread's
    /// action ran in the one state, one at a time.
    hits: Vec<u64>,
    /// `core.thread` in the shared state (HAProxy: always 0).
    shared_threads: Vec<String>,
    /// For each thread, the sorted `x-mine` values are 1..=its requests.
    per_thread_counts_ok: bool,
    /// What `lua.report` answered once the task ran: `hits task_saw`.
    report: String,
}

/// Sends `CLIENTS * PER_CLIENT` requests to `/` (the shared state's action) and as
/// many to `/own` (the per-thread one), each on a connection of its own, from
/// `CLIENTS` threads at once; returns what was seen, how many proxy threads served,
/// and then, for `both` requests to `/both` (both actions on one stream), how many
/// got the headers of both (none: as in HAProxy 2.6, a stream runs every Lua call in
/// the state of its first one, the other kind's fails there).
fn run(binary: &Path, both: usize) -> (Seen, usize, usize) {
    let s1 = HttpBackend::start("s1");
    let p = start(binary, &s1);
    std::thread::scope(|sc| {
        for _ in 0..CLIENTS {
            sc.spawn(|| {
                for _ in 0..PER_CLIENT {
                    assert_eq!(get(&p, "/", "").status, 200, "{}", p.output());
                    assert_eq!(get(&p, "/own", "").status, 200, "{}", p.output());
                }
            });
        }
    });
    let n = CLIENTS * PER_CLIENT;
    let reqs = s1.wait_requests(2 * n);
    let (own, reqs): (Vec<_>, Vec<_>) = reqs.into_iter().partition(|r| r.path.starts_with("/own"));
    let hdr = |r: &rampart_testkit::Request, n: &str| r.headers.get(n).unwrap_or("").to_owned();
    let mut hits: Vec<u64> = reqs.iter().map(|r| hdr(r, "x-hits").parse().unwrap_or(0)).collect();
    hits.sort_unstable();
    let mut shared_threads: Vec<String> = reqs.iter().map(|r| hdr(r, "x-shared-thread")).collect();
    shared_threads.dedup();
    let mut by_thread: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for r in &own {
        by_thread.entry(hdr(r, "x-thread")).or_default().push(hdr(r, "x-mine").parse().unwrap_or(0));
    }
    let per_thread_counts_ok = by_thread.iter_mut().all(|(t, v)| {
        v.sort_unstable();
        (t == "1" || t == "2") && v.iter().copied().eq(1..=v.len() as u64)
    });
    // the task copies `hits` every 10 ms
    let want = format!("{n} {n}");
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut report = get(&p, "/report", "").body_str();
    while report != want && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        report = get(&p, "/report", "").body_str();
    }
    for _ in 0..both {
        assert_eq!(get(&p, "/both", "").status, 200);
    }
    let reqs = s1.wait_requests(2 * n + both);
    let both_ok = reqs[2 * n..].iter().filter(|r| !hdr(r, "x-hits").is_empty() && !hdr(r, "x-mine").is_empty()).count();
    (Seen { hits, shared_threads, per_thread_counts_ok, report }, by_thread.len(), both_ok)
}

fn expected() -> Seen {
    let n = CLIENTS * PER_CLIENT;
    Seen {
        hits: (1..=n as u64).collect(),
        shared_threads: vec!["0".to_owned()],
        per_thread_counts_ok: true,
        report: format!("{n} {n}"),
    }
}

#[test]
fn globals_of_lua_load_are_shared_by_the_threads_and_per_thread_ones_are_not() {
    let (seen, threads, both_ok) = run(Path::new(RAMPART), 10);
    assert_eq!(threads, 2, "both proxy threads served (else the test proves nothing)");
    assert_eq!(seen, expected());
    // the per-thread action ran first: the shared one fails on those streams
    assert_eq!(both_ok, 0, "a stream runs its Lua calls in the state of its first one");
}

#[test]
fn shared_and_per_thread_globals_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    let ours = run(Path::new(RAMPART), 10);
    let theirs = run(&haproxy, 10);
    assert_eq!((ours.0, ours.2), (theirs.0, theirs.2), "rampart (left) and haproxy (right)");
}

/// A shared action that sleeps gives the shared state back: the other threads' calls
/// (and the same thread's) go on meanwhile.
#[test]
fn a_shared_script_that_sleeps_does_not_hold_the_other_threads() {
    let s1 = HttpBackend::start("s1");
    let p = start(Path::new(RAMPART), &s1);
    std::thread::scope(|sc| {
        let sleepers: Vec<_> = (0..2)
            .map(|_| {
                sc.spawn(|| {
                    let t0 = Instant::now();
                    assert_eq!(get(&p, "/", "X-Nap: 1500\r\n").status, 200);
                    t0.elapsed()
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(200));
        let t0 = Instant::now();
        for _ in 0..20 {
            assert_eq!(get(&p, "/", "").status, 200);
        }
        let quick = t0.elapsed();
        assert!(quick < Duration::from_millis(1000), "20 requests took {quick:?} next to two sleeping scripts");
        for s in sleepers {
            assert!(s.join().unwrap() >= Duration::from_millis(1500));
        }
    });
}

fn tcp_rule_check(binary: &Path, rules: &str) -> (bool, String) {
    let code = script("tcpreq", "core.register_action('foo', { 'tcp-req' }, function(txn) end)\n");
    let cfg = format!(
        "global\n  lua-load {}\ndefaults\n  mode tcp\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n\
         frontend f\n  bind 127.0.0.1:1\n{rules}  default_backend b\nbackend b\n  server s 127.0.0.1:1\n",
        code.display()
    );
    let out = rampart_testkit::check(binary, &cfg);
    // the alert without the configuration's path: `] : <message>`
    let alert =
        out.stderr.lines().find(|l| l.contains("parsing [")).and_then(|l| Some(l[l.find("] : ")?..].to_owned()));
    (out.code == 0, alert.unwrap_or_default())
}

/// HAProxy 2.6 registers a script's `tcp-req` actions for `tcp-request content`
/// only: connection and session rules refuse them with their list of actions.
#[test]
fn lua_actions_in_tcp_request_connection_and_session_rules_are_refused_as_haproxy_does() {
    for set in ["connection", "session"] {
        let (ok, alert) = tcp_rule_check(Path::new(RAMPART), &format!("  tcp-request {set} lua.foo\n"));
        assert!(!ok);
        assert!(alert.contains(&format!("'tcp-request {set}' expects 'accept', 'reject'")), "{alert}");
        assert!(alert.ends_with("(got 'lua.foo')."), "{alert}");
    }
    let (ok, alert) = tcp_rule_check(Path::new(RAMPART), "  tcp-request content lua.foo\n");
    assert!(ok, "{alert}");
}

#[test]
fn lua_actions_in_tcp_request_connection_and_session_rules_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    for set in ["connection", "session", "content"] {
        let rules = format!("  tcp-request {set} lua.foo\n");
        let ours = tcp_rule_check(Path::new(RAMPART), &rules);
        let theirs = tcp_rule_check(&haproxy, &rules);
        assert_eq!(ours, theirs, "tcp-request {set}: rampart (left) and haproxy (right)");
    }
}

/// The first alert of `binary -c` on `global` lines `global`, without its pid nor
/// the `config : ` rampart puts before every startup alert (COMPAT: HAProxy's
/// post-parsing alerts have none).
fn first_alert(binary: &Path, global: &str) -> (bool, String) {
    let out = rampart_testkit::check(binary, &format!("global\n{global}"));
    let alert =
        out.stderr.lines().find(|l| l.contains("[ALERT]")).and_then(|l| Some(l[l.find(") : ")? + 4..].to_owned()));
    let alert = alert.unwrap_or_default();
    (out.code == 0, alert.strip_prefix("config : ").map(str::to_owned).unwrap_or(alert))
}

fn both_kinds() -> String {
    let shared = script("both_shared", "core.register_action('dup', { 'http-req' }, function(txn) end)\n");
    let own = script(
        "both_own",
        "core.register_action('dup', { 'http-req' }, function(txn) end)\n\
         core.register_fetches('mine', function(txn) return 1 end)\n",
    );
    format!("  lua-load {}\n  lua-load-per-thread {}\n", shared.display(), own.display())
}

/// As HAProxy 2.6, a name registered by a `lua-load` file and by a
/// `lua-load-per-thread` one fails startup (other names of both kinds are fine).
#[test]
fn a_name_registered_by_both_kinds_fails_startup() {
    let (ok, alert) = first_alert(Path::new(RAMPART), &both_kinds());
    assert!(!ok);
    assert_eq!(
        alert,
        "Lua function 'dup' is referenced both ins shared Lua context (through lua-load) and per-thread Lua \
         context (through lua-load-per-thread). these two context exclusive."
    );
}

/// The first alert of `binary -db` starting on `global` lines `global` (HAProxy checks
/// this after parsing, which `-c` stops before), and whether it was still running
/// after 3 s; the same normalizing as [`first_alert`].
fn startup_alert(binary: &Path, global: &str) -> (bool, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let cfg = script("both_cfg", &format!("global\n{global}frontend f\n  mode http\n  bind 127.0.0.1:{port}\n"));
    let mut child = std::process::Command::new(binary)
        .args(["-db", "-f"])
        .arg(&cfg)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    let running = loop {
        if child.try_wait().unwrap().is_some() {
            break false;
        }
        if Instant::now() >= deadline {
            child.kill().unwrap();
            break true;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let alert = stderr.lines().find(|l| l.contains("[ALERT]")).and_then(|l| Some(l[l.find(") : ")? + 4..].to_owned()));
    let alert = alert.unwrap_or_default();
    (running, alert.strip_prefix("config : ").map(str::to_owned).unwrap_or(alert))
}

#[test]
fn a_name_registered_by_both_kinds_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    let global = both_kinds();
    let ours = startup_alert(Path::new(RAMPART), &global);
    assert!(!ours.0 && ours.1.contains("'dup'"), "{ours:?}");
    assert_eq!(ours, startup_alert(&haproxy, &global), "rampart (left) and haproxy (right)");
}

// === one state per stream ===

/// Functions of both kinds: an action, a fetch and a converter in each.
const KIND_SHARED: &str = r#"
core.register_action("sa", { "http-req" }, function(txn) txn:set_var("txn.sa", "ran") end)
core.register_fetches("sf", function(txn) return "S" end)
core.register_converters("sc", function(s) return "SC" .. s end)
"#;

const KIND_OWN: &str = r#"
core.register_action("pa", { "http-req" }, function(txn) txn:set_var("txn.pa", core.thread) end)
core.register_fetches("pf", function(txn) return "P" end)
core.register_converters("pc", function(s) return "PC" .. s end)
"#;

/// A frontend answering with what the Lua calls of each path gave: `/sa` runs the
/// shared action then the per-thread one, `/pa` the other way, `/f` calls the shared
/// fetch first, `/g` the per-thread fetch and converter first; `/t` answers the
/// `thread` fetch and the per-thread action's `core.thread`.
fn kinds_start(binary: &Path, threads: usize) -> Running {
    let shared = script("kind_shared", KIND_SHARED);
    let own = script("kind_own", KIND_OWN);
    let cfg = format!(
        "global\n  nbthread {threads}\n  lua-load {}\n  lua-load-per-thread {}\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         frontend fe1\n  bind fd@${{fe1}}\n\
         \x20 http-request lua.sa if {{ path /sa }}\n\
         \x20 http-request lua.pa if {{ path /sa }}\n\
         \x20 http-request lua.pa if {{ path /pa }} || {{ path /t }}\n\
         \x20 http-request lua.sa if {{ path /pa }}\n\
         \x20 http-request return status 200 hdr x-r \"sa=%[var(txn.sa)] pa=%[var(txn.pa)] f=%[lua.sf]-%[lua.pf]\" \
         if {{ path /sa }} || {{ path /pa }} || {{ path /f }}\n\
         \x20 http-request return status 200 hdr x-r \"f=%[lua.pf]-%[lua.sf] c=%[str(a),lua.pc]-%[str(b),lua.sc]\" \
         if {{ path /g }}\n\
         \x20 http-request return status 200 hdr x-r \"%[thread] %[var(txn.pa)]\" if {{ path /t }}\n",
        shared.display(),
        own.display()
    );
    rampart_testkit::Proxy::new(binary).listener("fe1").config(&cfg).start().expect("the proxy starts")
}

/// The Lua alerts of `p`'s output, without their date and pid, nor the traceback
/// HAProxy appends after `from` (COMPAT: rampart writes none).
fn lua_alerts(p: &Running) -> Vec<String> {
    let out = p.output();
    let alerts = out.lines().filter(|l| l.contains("[ALERT]") && l.contains("Lua "));
    let strip = |l: &str| {
        let l = l[l.find(") : ").map_or(0, |i| i + 4)..].to_owned();
        match l.rfind(" from ") {
            Some(i) => format!("{}.", &l[..i]),
            None => l,
        }
    };
    alerts.map(strip).collect()
}

/// What the clients got for the `kinds_start` paths (with one thread), and the alerts.
fn kinds_run(binary: &Path) -> (Vec<String>, Vec<String>) {
    let p = kinds_start(binary, 1);
    let answers: Vec<String> = ["/sa", "/pa", "/f", "/g"]
        .iter()
        .map(|path| {
            let r = get(&p, path, "");
            format!("{} {}", r.status, r.headers.get("x-r").unwrap_or("-"))
        })
        .collect();
    let want = "Lua converter 'sc': [state-id 1] runtime error: attempt to call a nil value";
    assert!(p.wait_output(want, Duration::from_secs(5)), "{}", p.output());
    (answers, lua_alerts(&p))
}

/// As HAProxy 2.6, a stream runs its Lua calls (actions, fetches, converters) in the
/// state of its first one: a function of the other kind fails there.
#[test]
fn a_stream_runs_its_lua_calls_in_the_state_of_its_first_one() {
    let (answers, alerts) = kinds_run(Path::new(RAMPART));
    assert_eq!(answers, ["200 sa=ran pa= f=S-", "200 sa= pa=1 f=-P", "200 sa= pa= f=S-", "200 f=P- c=PCa-"]);
    let nil = "runtime error: attempt to call a nil value.";
    assert_eq!(
        alerts,
        [
            format!("Lua function 'pa': [state-id 0] {nil}"),
            format!("Lua sample-fetch 'pf': [state-id 0] {nil}"),
            format!("Lua function 'sa': [state-id 1] {nil}"),
            format!("Lua sample-fetch 'sf': [state-id 1] {nil}"),
            format!("Lua sample-fetch 'pf': [state-id 0] {nil}"),
            format!("Lua sample-fetch 'sf': [state-id 1] {nil}"),
            format!("Lua converter 'sc': [state-id 1] {nil}"),
        ]
    );
}

#[test]
fn a_stream_calling_both_kinds_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    let ours = kinds_run(Path::new(RAMPART));
    assert_eq!(ours, kinds_run(&haproxy), "rampart (left) and haproxy (right)");
}

/// `thread` and `core.thread` of the per-thread states over `n` connections with two
/// threads: whether each answer was `T T+1` with `T` 0 or 1, and the threads seen.
fn thread_run(binary: &Path, n: usize) -> (bool, std::collections::BTreeSet<String>) {
    let p = kinds_start(binary, 2);
    let answers: Vec<String> = (0..n).map(|_| get(&p, "/t", "").headers.get("x-r").unwrap_or("").to_owned()).collect();
    let ok = answers.iter().all(|a| matches!(a.as_str(), "0 1" | "1 2"));
    assert!(ok, "{answers:?}");
    (ok, answers.iter().map(|a| a[..1].to_owned()).collect())
}

/// The `thread` fetch numbers the threads from 0, `core.thread` in a per-thread state
/// from 1 (HAProxy's `tid` and state number).
#[test]
fn the_thread_fetch_counts_from_0_and_core_thread_from_1() {
    let (ok, threads) = thread_run(Path::new(RAMPART), 40);
    assert!(ok);
    assert_eq!(threads.len(), 2, "both threads served (else the test proves little): {threads:?}");
}

#[test]
fn the_thread_fetch_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(thread_run(Path::new(RAMPART), 40).0, thread_run(&haproxy, 40).0);
}

// === tune.lua.maxmem ===

/// `hold` keeps 24 MiB in the shared state, `release` drops it; `grab` builds 24 MiB
/// in the thread's state (string.rep needs twice that while it runs), then lets it go;
/// `gc` collects the thread's state (what a `grab` that failed left).
const MEM_SHARED: &str = r#"
core.register_action("hold", { "http-req" }, function(txn)
  big = string.rep("x", 24 * 1024 * 1024)
  collectgarbage()
end)
core.register_action("release", { "http-req" }, function(txn)
  big = nil
  collectgarbage()
end)
"#;

const MEM_OWN: &str = r#"
core.register_action("grab", { "http-req" }, function(txn)
  local s = string.rep("y", 24 * 1024 * 1024)
  txn:set_var("txn.grab", #s)
  s = nil
  collectgarbage()
end)
core.register_action("gc", { "http-req" }, function(txn) collectgarbage() end)
"#;

/// With `tune.lua.maxmem 64`: `/grab` (48 MiB at its peak) alone, then with the
/// shared state holding 24 MiB, then once it released them (and the thread's state
/// collected what the failed one left); then a plain request.
/// The answers (`x-grab`: the size `grab` built) and the Lua alerts.
fn mem_run(binary: &Path) -> (Vec<String>, Vec<String>) {
    let shared = script("mem_shared", MEM_SHARED);
    let own = script("mem_own", MEM_OWN);
    let cfg = format!(
        "global\n  nbthread 1\n  tune.lua.maxmem 64\n  lua-load {}\n  lua-load-per-thread {}\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         frontend fe1\n  bind fd@${{fe1}}\n\
         \x20 http-request lua.hold if {{ path /hold }}\n\
         \x20 http-request lua.release if {{ path /release }}\n\
         \x20 http-request lua.grab if {{ path /grab }}\n\
         \x20 http-request lua.gc if {{ path /gc }}\n\
         \x20 http-request return status 200 hdr x-grab \"%[var(txn.grab)]\"\n",
        shared.display(),
        own.display()
    );
    let p = rampart_testkit::Proxy::new(binary).listener("fe1").config(&cfg).start().expect("the proxy starts");
    let answers: Vec<String> = ["/grab", "/hold", "/grab", "/release", "/gc", "/grab", "/"]
        .iter()
        .map(|path| {
            let r = get(&p, path, "");
            format!("{path} {} {}", r.status, r.headers.get("x-grab").filter(|v| !v.is_empty()).unwrap_or("-"))
        })
        .collect();
    (answers, lua_alerts(&p))
}

/// `tune.lua.maxmem` bounds the memory of every Lua state together, as in HAProxy
/// 2.6: what the shared state holds leaves less to a thread's state; a script past
/// the limit fails with HAProxy's message, the rules go on, and once the memory is
/// freed the same script runs again.
#[test]
fn maxmem_bounds_the_lua_states_together() {
    let (answers, alerts) = mem_run(Path::new(RAMPART));
    let mb24 = (24 * 1024 * 1024).to_string();
    assert_eq!(
        answers,
        [
            format!("/grab 200 {mb24}"),
            "/hold 200 -".to_owned(),
            "/grab 200 -".to_owned(),
            "/release 200 -".to_owned(),
            "/gc 200 -".to_owned(),
            format!("/grab 200 {mb24}"),
            "/ 200 -".to_owned(),
        ]
    );
    assert_eq!(alerts, ["Lua function 'grab': out of memory error."]);
}

#[test]
fn maxmem_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    let ours = mem_run(Path::new(RAMPART));
    assert_eq!(ours, mem_run(&haproxy), "rampart (left) and haproxy (right)");
}
