//! Global keywords real configurations carry, compared with haproxy 2.6 where the
//! difference shows: `node` and `description` (`show info`), `zero-warning` (a
//! warning stops the start), `maxconnrate` (accepts paced to the limit, `show info`'s
//! `ConnRateLimit`), and the tuning keywords rampart accepts with a warning.

mod http_common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use http_common::*;
use rampart_testkit::{haproxy_or_skip, stats_command, HttpBackend, RawClient};

/// Rampart and, when installed, haproxy 2.6 (required under `RAMPART_REQUIRE_HAPROXY=1`).
fn binaries(test: &str) -> Vec<PathBuf> {
    let mut out = vec![binary()];
    out.extend(haproxy_or_skip(test));
    out
}

/// The `show info` lines named `names`, in order.
fn info_lines(sock: &Path, names: &[&str]) -> Vec<String> {
    let info = stats_command(sock, "show info\n");
    names.iter().map(|n| info.lines().find(|l| l.starts_with(&format!("{n}:"))).unwrap_or("").to_owned()).collect()
}

#[test]
fn node_and_description_show_in_show_info_as_haproxy() {
    let mut seen = Vec::new();
    for bin in binaries("node_and_description_show_in_show_info_as_haproxy") {
        for global in ["  node lb-7.eu_west\n  description edge   proxy, rack 3\n", ""] {
            let cfg = format!(
                "global\n  nbthread 1\n  stats socket ${{testdir}}/admin.sock level admin\n{global}\
                 defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
                 listen fe1\n  bind fd@${{fe1}}\n  http-request return status 200\n"
            );
            let proxy = start_binary(&bin, &cfg, &[]);
            let lines = info_lines(&proxy.dir().join("admin.sock"), &["node", "description"]);
            seen.push(lines);
        }
    }
    assert_eq!(seen[0], ["node: lb-7.eu_west", "description: \"edge proxy, rack 3\""], "quoted for its comma");
    let host = nix_hostname();
    assert_eq!(seen[1], [format!("node: {host}"), String::new()], "the host name, no description line");
    if seen.len() > 2 {
        assert_eq!(seen[..2], seen[2..], "rampart then haproxy");
    }
}

fn nix_hostname() -> String {
    let out = Command::new("hostname").output().expect("hostname runs");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Runs `bin -db -f cfg` until it exits (at most 10 s): its status and stderr.
fn run_until_exit(bin: &Path, cfg: &str, tag: &str) -> (Option<i32>, String) {
    let files = Files::new(tag);
    let path = files.write("t.cfg", cfg);
    let mut child = Command::new(bin)
        .args(["-db", "-f", &path])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if child.try_wait().expect("wait").is_some() {
            let out = child.wait_with_output().expect("output");
            return (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let out = child.wait_with_output().expect("output");
    (None, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn zero_warning_makes_a_warning_fatal_as_haproxy() {
    // a frontend without `bind` is a warning in both
    let warned = "global\n  zero-warning\ndefaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n\
                  timeout connect 1s\nfrontend nobind\n  http-request return status 200\n";
    for bin in binaries("zero_warning_makes_a_warning_fatal_as_haproxy") {
        let (code, err) = run_until_exit(&bin, warned, "zero-warning");
        assert_eq!(code, Some(1), "{}: {err}", bin.display());
        assert!(err.contains("Some warnings were found and 'zero-warning' is set. Aborting."), "{err}");
    }
}

#[test]
fn accepted_tuning_keywords_warn_once_each_and_start() {
    let cfg = "global\n  nbthread 1\n  noepoll\n  nopoll\n  nogetaddrinfo\n  insecure-setuid-wanted\n\
               tune.maxaccept 100\n  tune.maxpollevents 200\n  tune.idletimer 1s\n  tune.pool-low-fd-ratio 20\n\
               tune.pool-high-fd-ratio 25\n  fd-hard-limit 50000\n  maxsessrate 1000\n\
               defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
               listen fe1\n  bind fd@${fe1}\n  http-request return status 200\n";
    let proxy = start(cfg, &[]);
    assert_eq!(RawClient::connect(proxy.addr("fe1")).unwrap().get("/").unwrap().status, 200);
    let out = proxy.output();
    for kw in ["noepoll", "nogetaddrinfo", "tune.maxaccept", "tune.maxpollevents", "tune.idletimer", "fd-hard-limit"] {
        let line = format!("'{kw}' is accepted but has no effect in rampart (");
        assert_eq!(out.matches(&line).count(), 1, "{kw}: {out}");
    }
    for quiet in [
        "'nopoll'",
        "'insecure-setuid-wanted'",
        "'maxsessrate'",
        "'tune.pool-low-fd-ratio'",
        "'tune.pool-high-fd-ratio'",
    ] {
        assert!(!out.contains(quiet), "{quiet} does what HAProxy does: no warning: {out}");
    }
}

/// `n` requests on their own connections, one after the other; how long they took.
fn sequential_requests(addr: std::net::SocketAddr, n: usize) -> Duration {
    let t = Instant::now();
    for i in 0..n {
        let mut c = RawClient::connect(addr).expect("connect");
        c.send(format!("GET /{i} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")).unwrap();
        assert_eq!(c.read_response().expect("response").status, 200);
    }
    t.elapsed()
}

#[test]
fn maxconnrate_paces_accepts_as_haproxy() {
    for bin in binaries("maxconnrate_paces_accepts_as_haproxy") {
        let s1 = HttpBackend::start("s1");
        let cfg = |limit: &str| {
            format!(
                "global\n  nbthread 1\n  stats socket ${{testdir}}/admin.sock level admin\n{limit}\
                 defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
                 listen fe1\n  bind fd@${{fe1}}\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
            )
        };
        let free = start_binary(&bin, &cfg(""), &[("s1", s1.addr())]);
        let fast = sequential_requests(free.addr("fe1"), 16);
        let paced = start_binary(&bin, &cfg("  maxconnrate 8\n"), &[("s1", s1.addr())]);
        let took = sequential_requests(paced.addr("fe1"), 16);
        let limit = info_lines(&paced.dir().join("admin.sock"), &["ConnRateLimit"]);
        assert_eq!(limit, ["ConnRateLimit: 8"], "{}", bin.display());
        assert!(fast < Duration::from_millis(800), "{}: without a limit: {fast:?}", bin.display());
        // 8 at once, the next 8 as the past second's share fades: about a second
        assert!(
            took >= Duration::from_millis(700) && took < Duration::from_secs(4),
            "{}: 16 connections at 8/s took {took:?}",
            bin.display()
        );
    }
}
