//! Servers' states through the real binary: `server-state-file` (with
//! `server-state-base`), `load-server-state-from-file global|local`, and
//! `show servers state` as HAProxy 2.6 prints it. The same configuration and state files
//! go through haproxy 2.6 too (`RAMPART_REQUIRE_HAPROXY=1` makes a missing haproxy a
//! failure), and both must show the same servers' states and `show stat` statuses and
//! weights. HAProxy counterpart: src/server_state.c.

mod netutil;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use rampart_testkit::{haproxy_or_skip, Proxy, Running};

/// Backends with servers of every kind a state line may change; `${p}` ports are
/// closed ones (no check runs, nothing connects).
const CFG: &str = "global\n  stats socket ${testdir}/admin.sock level admin\n\
  server-state-base STATEDIR\n  server-state-file global.state\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
  load-server-state-from-file global\n\
frontend fe1\n  bind fd@${fe1}\n  default_backend be1\n\
backend be1\n\
  server s1 127.0.0.1:8001\n\
  server s2 127.0.0.1:8002 weight 10\n\
  server s3 127.0.0.1:8003\n\
  server s4 localhost:8004\n\
  server s5 127.0.0.1:8005 disabled\n\
  server s6 127.0.0.1:8006 weight 20\n\
backend be2\n  load-server-state-from-file local\n  server-state-file-name be2.state\n\
  server a 127.0.0.1:8101\n  server b 127.0.0.1:8102\n\
backend be3\n  load-server-state-from-file none\n  server c 127.0.0.1:8201\n";

/// What an operator's previous process left: s1 in maintenance, s2 at weight 5, s3
/// draining, s4 (a name) at another address and port, s5 enabled at run time, s6 with a
/// weight set while the configured one was 7 (the new configuration's 20 wins), a
/// server that no longer exists, be3's line (not loaded: `none`).
const GLOBAL_STATE: &str = "1\n\
# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight srv_time_since_last_change srv_check_status srv_check_result srv_check_health srv_check_state srv_agent_state bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port srv_check_addr srv_agent_addr srv_agent_port\n\
3 be1 1 s1 127.0.0.1 2 1 1 1 100 1 0 0 0 0 0 0 - 8001 - 0 0 - - 0\n\
3 be1 2 s2 127.0.0.1 2 0 5 10 100 1 0 0 0 0 0 0 - 8002 - 0 0 - - 0\n\
3 be1 3 s3 127.0.0.1 2 8 1 1 100 1 0 0 0 0 0 0 - 8003 - 0 0 - - 0\n\
3 be1 4 s4 127.0.0.2 2 0 1 1 100 1 0 0 0 0 0 0 localhost 9004 - 0 0 - - 0\n\
3 be1 5 s5 127.0.0.1 2 4 1 1 100 1 0 0 0 0 0 0 - 8005 - 0 0 - - 0\n\
3 be1 6 s6 127.0.0.1 2 0 3 7 100 1 0 0 0 0 0 0 - 8006 - 0 0 - - 0\n\
3 be1 9 gone 127.0.0.1 2 1 1 1 100 1 0 0 0 0 0 0 - 8009 - 0 0 - - 0\n\
5 be3 1 c 127.0.0.1 2 1 1 1 100 1 0 0 0 0 0 0 - 8201 - 0 0 - - 0\n";

/// be2's own file: `b` in maintenance, a line for a server it lacks, one of another
/// backend (dropped: neither its name nor its number match).
const BE2_STATE: &str = "1\n\
4 be2 2 b 127.0.0.1 2 1 1 1 100 1 0 0 0 0 0 0 - 8102 - 0 0 - - 0\n\
4 be2 3 nope 127.0.0.1 2 1 1 1 100 1 0 0 0 0 0 0 - 8103 - 0 0 - - 0\n\
9 other 1 a 127.0.0.1 2 1 1 1 100 1 0 0 0 0 0 0 - 8101 - 0 0 - - 0\n";

fn cli(proxy: &Running, cmd: &str) -> String {
    let path = proxy.dir().join("admin.sock");
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut s = loop {
        match UnixStream::connect(&path) {
            Ok(s) => break s,
            Err(e) if Instant::now() > deadline => panic!("{}: {e}\n{}", path.display(), proxy.output()),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(format!("{cmd}\n").as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// Starts `binary` with [`CFG`] and state files in a directory of their own (kept as
/// long as the process runs).
fn start(binary: &Path, global_state: &str) -> (Running, netutil::Scratch) {
    let dir = netutil::Scratch::new("server-state");
    dir.file("global.state", global_state);
    dir.file("be2.state", BE2_STATE);
    let cfg = CFG.replace("STATEDIR", &dir.path().display().to_string());
    (Proxy::new(binary).listener("fe1").config(&cfg).start().expect("the proxy starts"), dir)
}

/// `show servers state` lines by `backend/server`, without the columns that depend on
/// time (`srv_time_since_last_change`).
fn states(proxy: &Running) -> Vec<(String, Vec<String>)> {
    let out = cli(proxy, "show servers state");
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("1"), "{out}");
    assert!(lines.next().is_some_and(|h| h.starts_with("# be_id be_name srv_id srv_name srv_addr")), "{out}");
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<String> = l.split(' ').map(str::to_owned).collect();
            let kept = f.iter().enumerate().filter(|(i, _)| *i != 9).map(|(_, v)| v.clone()).collect();
            (format!("{}/{}", f[1], f[3]), kept)
        })
        .collect()
}

/// One server's fields: srv_addr, srv_op_state, srv_admin_state, srv_uweight,
/// srv_iweight, srv_port.
fn fields(states: &[(String, Vec<String>)], name: &str) -> [String; 6] {
    let (_, f) = states.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("{name} in {states:?}"));
    // 9 (the time) is left out: srv_port is field 18, 17 once shifted
    [f[4].clone(), f[5].clone(), f[6].clone(), f[7].clone(), f[8].clone(), f[17].clone()]
}

/// `show stat` `status` and `weight` of each server.
fn stat(proxy: &Running) -> Vec<(String, String, String)> {
    let out = cli(proxy, "show stat");
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().trim_start_matches("# ").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (status, weight) = (col("status"), col("weight"));
    lines
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|c| c[1] != "FRONTEND" && c[1] != "BACKEND")
        .map(|c| (format!("{}/{}", c[0], c[1]), c[status].to_owned(), c[weight].to_owned()))
        .collect()
}

#[test]
fn state_files_are_applied_as_haproxy_applies_them() {
    let (proxy, _dir) = start(Path::new(env!("CARGO_BIN_EXE_rampart")), GLOBAL_STATE);
    let st = states(&proxy);
    let f = |n: &str| fields(&st, n).map(|s| s.to_owned());
    let s = |v: [&str; 6]| v.map(str::to_owned);
    assert_eq!(f("be1/s1"), s(["127.0.0.1", "0", "1", "1", "1", "8001"]), "maintenance");
    assert_eq!(f("be1/s2"), s(["127.0.0.1", "2", "0", "5", "10", "8002"]), "weight set at run time");
    assert_eq!(f("be1/s3"), s(["127.0.0.1", "2", "8", "1", "1", "8003"]), "drain");
    assert_eq!(f("be1/s4"), s(["127.0.0.2", "2", "0", "1", "1", "9004"]), "init-addr last");
    // disabled in both configurations, enabled at run time: it stays enabled
    assert_eq!(f("be1/s5"), s(["127.0.0.1", "2", "4", "1", "1", "8005"]), "enabled at run time");
    assert_eq!(f("be1/s6"), s(["127.0.0.1", "2", "0", "20", "20", "8006"]), "new configured weight wins");
    assert_eq!(f("be2/a"), s(["127.0.0.1", "2", "0", "1", "1", "8101"]), "other backend's line");
    assert_eq!(f("be2/b"), s(["127.0.0.1", "0", "1", "1", "1", "8102"]), "local file");
    assert_eq!(f("be3/c"), s(["127.0.0.1", "2", "0", "1", "1", "8201"]), "none");
    let since = cli(&proxy, "show servers state be1");
    let s1 = since.lines().find(|l| l.contains(" s1 ")).unwrap();
    let secs: u64 = s1.split(' ').nth(9).unwrap().parse().unwrap();
    assert!((100..110).contains(&secs), "last change kept: {s1}");
    let out = proxy.output();
    assert!(out.contains("Proxy 'be2': can't find server 'nope' in backend 'be2'"), "{out}");
    assert!(!out.contains("'gone'"), "{out}");
}

#[test]
fn unusable_files_are_reported_and_ignored() {
    let (proxy, _dir) = start(Path::new(env!("CARGO_BIN_EXE_rampart")), "2\n");
    let st = states(&proxy);
    assert_eq!(fields(&st, "be1/s1")[2], "0");
    assert_eq!(fields(&st, "be2/b")[2], "1");
    assert!(proxy.output().contains("Can't get version of the global server state file"), "{}", proxy.output());
    let bad = GLOBAL_STATE.replace("3 be1 2 s2 127.0.0.1 2 0 5", "3 be1 2 s2 127.0.0.1 9 0 5");
    let (proxy, _dir2) = start(Path::new(env!("CARGO_BIN_EXE_rampart")), &bad);
    let out = proxy.output();
    assert!(
        out.contains("server-state application failed for server 'be1/s2', invalid srv_op_state value '9'"),
        "{out}"
    );
    assert_eq!(fields(&states(&proxy), "be1/s1")[2], "1", "the other lines apply");
}

#[test]
fn show_servers_state_and_show_stat_match_haproxy() {
    let Some(haproxy) = haproxy_or_skip("show_servers_state_and_show_stat_match_haproxy") else { return };
    let (rampart, _d1) = start(Path::new(env!("CARGO_BIN_EXE_rampart")), GLOBAL_STATE);
    let (haproxy, _d2) = start(&haproxy, GLOBAL_STATE);
    let (r, h) = (states(&rampart), states(&haproxy));
    assert_eq!(r.iter().map(|(n, _)| n).collect::<Vec<_>>(), h.iter().map(|(n, _)| n).collect::<Vec<_>>());
    let differ: Vec<String> = r
        .iter()
        .zip(&h)
        .filter(|((_, rf), (_, hf))| rf != hf)
        .map(|((name, rf), (_, hf))| format!("{name}:\n  rampart {rf:?}\n  haproxy {hf:?}"))
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert_eq!(stat(&rampart), stat(&haproxy));
    // what rampart dumps, haproxy reads back the same
    let dumped = cli(&rampart, "show servers state");
    let (again, _d3) = start(Path::new(env!("CARGO_BIN_EXE_rampart")), &dumped);
    let (haproxy_again, _d4) = start(&haproxy_or_skip("again").unwrap(), &dumped);
    assert_eq!(states(&again), states(&haproxy_again));
}
