//! Beyond HAProxy: a master-worker reload (`kill -USR2` the master) carries the serving
//! worker's state to the new one without any configuration: a server put in
//! maintenance, one draining, a weight set at run time, and stick-table entries survive
//! three reloads; `show proc` lists the old workers until they exit. A worker that does
//! not answer in time does not hold the reload: the new one starts fresh and says so.

mod netutil;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use netutil::proxy;
use rampart_testkit::{eventually, RawClient, Running, Signal};

const CFG: &str = "global\n  nbthread 2\n  stats socket ${testdir}/admin.sock level admin\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
frontend fe1\n  bind fd@${fe1}\n  http-request track-sc0 src table st\n\
  http-request return status 200 content-type text/plain string ok\n\
backend st\n  stick-table type ip size 100 expire 10m store http_req_cnt,gpc0\n\
backend be1\n  server s1 127.0.0.1:8001\n  server s2 127.0.0.1:8002 weight 10\n  server s3 127.0.0.1:8003\n";

fn cli(path: &Path, cmd: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut s = loop {
        match UnixStream::connect(path) {
            Ok(s) => break s,
            Err(e) if Instant::now() > deadline => panic!("{}: {e}", path.display()),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(format!("{cmd}\n").as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn get(proxy: &Running) -> bool {
    let Ok(mut c) = RawClient::connect(proxy.addr("fe1")) else { return false };
    let _ = c.set_read_timeout(Duration::from_secs(2));
    c.send("GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").is_ok() && c.read_response().is_ok()
}

/// `srv_admin_state srv_uweight srv_iweight` of each server of be1.
fn servers(sock: &Path) -> Vec<String> {
    cli(sock, "show servers state be1")
        .lines()
        .skip(2)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            format!("{} {} {} {}", f[3], f[6], f[7], f[8])
        })
        .collect()
}

/// The pid of the worker serving the stats socket.
fn worker_pid(sock: &Path) -> u32 {
    let info = cli(sock, "show info");
    info.lines().find_map(|l| l.strip_prefix("Pid: ")).and_then(|p| p.trim().parse().ok()).unwrap_or(0)
}

fn reload_to_new_worker(proxy: &Running, sock: &Path) {
    let before = worker_pid(sock);
    proxy.signal(Signal::SIGUSR2).unwrap();
    eventually!(worker_pid(sock) != before && worker_pid(sock) != 0);
}

#[test]
fn servers_states_weights_and_table_entries_survive_three_reloads() {
    let proxy = proxy().listener("fe1").config(CFG).arg("-W").arg("-S").arg("unix@master.sock").start().unwrap();
    let (sock, mcli) = (proxy.dir().join("admin.sock"), proxy.dir().join("master.sock"));
    assert!(get(&proxy) && get(&proxy));
    assert_eq!(cli(&sock, "disable server be1/s1"), "\n");
    assert_eq!(cli(&sock, "set weight be1/s2 4"), "\n");
    assert_eq!(cli(&sock, "set server be1/s3 state drain"), "\n");
    assert_eq!(cli(&sock, "set table st key 10.1.2.3 data.gpc0 7"), "\n");
    let want_servers = vec!["s1 1 1 1", "s2 0 4 10", "s3 8 1 1"];
    assert_eq!(servers(&sock), want_servers);
    let table = |sock: &Path| {
        let t = cli(sock, "show table st");
        let mut rows: Vec<String> = t
            .lines()
            .skip(1)
            .filter(|l| l.starts_with("0x"))
            .map(|l| {
                l.split_once(' ').map_or("", |x| x.1).split(" exp=").next().unwrap_or("").to_owned()
                    + l.split(" exp=").nth(1).map_or("", |r| r.split_once(' ').map_or("", |x| x.1))
            })
            .collect();
        rows.sort();
        rows
    };
    let before = table(&sock);
    assert_eq!(before.len(), 2, "{before:?}");
    for round in 1..=3 {
        let old = worker_pid(&sock);
        // a request under way keeps the old worker alive after the reload
        let mut slow = TcpStream::connect(proxy.addr("fe1")).unwrap();
        slow.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(100));
        reload_to_new_worker(&proxy, &sock);
        assert_eq!(servers(&sock), want_servers, "after reload {round}\n{}", proxy.output());
        // (the slow client's entry is the old worker's: 127.0.0.1 counted there)
        assert_eq!(table(&sock), before, "after reload {round}");
        // the old worker is listed as such until it has gone
        let procs = cli(&mcli, "show proc");
        let old_part = procs.split("# old workers\n").nth(1).unwrap_or("");
        assert!(old_part.starts_with(&format!("{old:<15} worker")), "round {round}: old worker {old}:\n{procs}");
        slow.write_all(b"\r\n").unwrap();
        let mut answer = String::new();
        slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = slow.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        eventually!(!cli(&mcli, "show proc").contains(&format!("\n{old:<15} worker")));
        assert!(netutil::wait_pid_gone(old as i32, Duration::from_secs(5)), "old worker {old} gone");
    }
    assert!(!proxy.output().contains("could not take over"), "{}", proxy.output());
    assert!(get(&proxy));
    drop(proxy);
}

#[test]
fn a_worker_that_does_not_answer_does_not_hold_the_reload() {
    let proxy = proxy().listener("fe1").config(CFG).arg("-W").start().unwrap();
    let sock = proxy.dir().join("admin.sock");
    assert_eq!(cli(&sock, "disable server be1/s1"), "\n");
    let old = worker_pid(&sock);
    // stopped: it answers neither the handover nor the soft stop until continued
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(old as i32), nix::sys::signal::Signal::SIGSTOP).unwrap();
    let started = Instant::now();
    proxy.signal(Signal::SIGUSR2).unwrap();
    assert!(proxy.wait_output("starting fresh", Duration::from_secs(10)), "{}", proxy.output());
    assert!(started.elapsed() < Duration::from_secs(8));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(old as i32), nix::sys::signal::Signal::SIGCONT).unwrap();
    eventually!(worker_pid(&sock) != old && worker_pid(&sock) != 0);
    assert_eq!(servers(&sock)[0], "s1 0 1 1", "fresh state");
    assert!(get(&proxy));
}
