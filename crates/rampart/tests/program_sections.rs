//! `program` sections under master-worker (`-W`): the master starts each program,
//! shows it in `show proc`, starts it anew on a reload (`option start-on-reload`, the
//! default) or keeps it (`no option start-on-reload`), and stops it with itself.
//! Without master-worker the configuration is refused, as HAProxy 2.6 refuses it.
//! HAProxy counterpart: src/mworker-prog.c.

mod netutil;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use netutil::{proxy, wait_pid_gone, Scratch};
use rampart_testkit::{eventually, Running, Signal};

/// A program that appends its pid to `<dir>/<name>.pids` and sleeps.
fn program(dir: &Scratch, name: &str) -> String {
    let text = format!("#!/bin/sh\necho $$ >> {}/{name}.pids\nexec sleep 60\n", dir.path().display());
    let path = dir.file(&format!("{name}.sh"), &text);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn pids(dir: &Scratch, name: &str) -> Vec<i32> {
    let text = std::fs::read_to_string(dir.path().join(format!("{name}.pids"))).unwrap_or_default();
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

fn config(dir: &Scratch) -> String {
    format!(
        "defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n\
         frontend fe1\n bind fd@${{fe1}}\n http-request return status 200\n\
         program restarted\n command {}\n\
         program kept\n command {}\n no option start-on-reload\n",
        program(dir, "restarted"),
        program(dir, "kept")
    )
}

fn mcli(path: &Path, cmd: &str) -> String {
    let mut s = UnixStream::connect(path).expect("master CLI");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(format!("{cmd}\n").as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn alive(pid: i32) -> bool {
    !wait_pid_gone(pid, Duration::ZERO)
}

#[test]
fn programs_start_restart_on_reload_and_stop_with_the_master() {
    let dir = Scratch::new("program");
    let sock = dir.path().join("master.sock");
    let mut p: Running = proxy()
        .listener("fe1")
        .config(&config(&dir))
        .arg("-W")
        .arg("-S")
        .arg(sock.display().to_string())
        .start()
        .expect("master starts");
    eventually!(pids(&dir, "restarted").len() == 1 && pids(&dir, "kept").len() == 1, "{}", p.output());
    let (r1, k1) = (pids(&dir, "restarted")[0], pids(&dir, "kept")[0]);
    let procs = mcli(&sock, "show proc");
    let programs = procs.split("# programs\n").nth(1).unwrap_or_else(|| panic!("{procs}"));
    let row = |pid: i32, name: &str| format!("{pid:<15} {name:<15} ");
    assert!(programs.contains(&row(r1, "restarted")) && programs.contains(&row(k1, "kept")), "{procs}");
    assert!(programs.contains(" -              \n"), "the version column: {procs}");

    p.signal(Signal::SIGUSR2).unwrap();
    eventually!(pids(&dir, "restarted").len() == 2, "{}", p.output());
    let r2 = pids(&dir, "restarted")[1];
    assert!(wait_pid_gone(r1, rampart_testkit::patience()), "the old program stays: {}", p.output());
    assert!(alive(r2) && alive(k1));
    assert_eq!(pids(&dir, "kept"), [k1], "kept across the reload");
    let procs = mcli(&sock, "show proc");
    let programs = procs.split("# programs\n").nth(1).unwrap_or_else(|| panic!("{procs}"));
    assert!(programs.contains(&format!("{k1:<15} kept            1 ")), "{procs}");
    assert!(programs.contains(&format!("{r2:<15} restarted       0 ")), "{procs}");

    p.signal(Signal::SIGTERM).unwrap();
    let status = p.wait_exit(Duration::from_secs(5)).expect("the master exits");
    assert_eq!(status.code(), Some(0), "{}", p.output());
    assert!(wait_pid_gone(r2, Duration::from_secs(2)) && wait_pid_gone(k1, Duration::from_secs(2)));
}

#[test]
fn programs_need_master_worker_mode() {
    let dir = Scratch::new("program-nomw");
    let out = proxy().listener("fe1").config(&config(&dir)).start();
    let err = match out {
        Ok(p) => panic!("started: {}", p.output()),
        Err(e) => format!("{e:?}"),
    };
    assert!(err.contains("Can't use a 'program' section without master worker mode."), "{err}");
    assert!(pids(&dir, "restarted").is_empty());
}
