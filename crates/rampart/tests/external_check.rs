//! External checks (`option external-check`): the command runs with HAProxy's four
//! arguments and its environment (the same as haproxy gives it), exit 0 keeps the
//! server UP, another status puts it DOWN (`PROCERR`, `show stat`), a command that
//! outlives the check is killed (`PROCTOUT`). HAProxy counterpart: src/extcheck.c.

mod netutil;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use netutil::{wait_pid_gone, Scratch};
use rampart_testkit::{eventually, haproxy_or_skip, patience, stats_command, Proxy, Running};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// A check script: records its arguments and environment in `seen`, then exits with
/// the status written in `control` (`hang`: sleeps, after writing its pid).
fn script(dir: &Scratch) -> std::path::PathBuf {
    let d = dir.path().display();
    let text = format!(
        "#!/bin/sh\n{{ echo \"args: $*\"; env | sort; }} > {d}/seen.tmp && mv {d}/seen.tmp {d}/seen\n\
         c=$(cat {d}/control)\nif [ \"$c\" = hang ]; then echo $$ > {d}/pid; exec sleep 30; fi\nexit $c\n"
    );
    let path = dir.file("check.sh", &text);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir.file("control", "0");
    path
}

fn start(binary: &str, command: &Path, extra: &str) -> Running {
    let cfg = format!(
        "global\n external-check\n insecure-fork-wanted\n stats socket ${{testdir}}/admin.sock level admin\n\
         defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n{extra}\
         frontend fe1\n bind fd@${{fe1}}\n default_backend be1\n\
         backend be1\n option external-check\n external-check path /usr/bin:/bin\n\
         \x20external-check command {}\n\
         \x20server s1 127.0.0.2:8080 check inter 100ms rise 1 fall 1 maxconn 7\n",
        command.display()
    );
    Proxy::new(binary).listener("fe1").config(&cfg).start().expect("proxy starts")
}

/// `(status, check_status, check_code)` of be1/s1 in `show stat`.
fn stat(proxy: &Running) -> (String, String, String) {
    let csv = stats_command(&proxy.dir().join("admin.sock"), "show stat\n");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").trim_start_matches("# ").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let row: Vec<&str> = lines.find(|l| l.starts_with("be1,s1,")).expect("be1/s1 row").split(',').collect();
    (row[col("status")].to_owned(), row[col("check_status")].to_owned(), row[col("check_code")].to_owned())
}

fn seen(dir: &Scratch) -> String {
    std::fs::read_to_string(dir.path().join("seen")).unwrap_or_default()
}

#[test]
fn exit_status_drives_the_server_state() {
    let dir = Scratch::new("extchk");
    let cmd = script(&dir);
    let proxy = start(RAMPART, &cmd, "");
    eventually!(stat(&proxy).1 == "PROCOK", "{:?} {}", stat(&proxy), proxy.output());
    assert_eq!(stat(&proxy).0, "UP");
    let env = seen(&dir);
    assert!(env.starts_with("args: NOT_USED NOT_USED 127.0.0.2 8080\n"), "{env}");
    for var in [
        "HAPROXY_PROXY_ADDR=",
        "HAPROXY_PROXY_NAME=be1",
        "HAPROXY_SERVER_ADDR=127.0.0.2",
        "HAPROXY_SERVER_CURCONN=0",
        "HAPROXY_SERVER_MAXCONN=7",
        "HAPROXY_SERVER_NAME=s1",
        "HAPROXY_SERVER_PORT=8080",
        "HAPROXY_SERVER_PROTO=h1",
        "HAPROXY_SERVER_SSL=0",
        "PATH=/usr/bin:/bin",
    ] {
        assert!(env.lines().any(|l| l == var), "{var} missing in:\n{env}");
    }
    dir.file("control", "3");
    eventually!(stat(&proxy).0 == "DOWN", "{:?} {}", stat(&proxy), proxy.output());
    assert_eq!(stat(&proxy).1, "PROCERR");
    assert_eq!(stat(&proxy).2, "3");
    assert!(proxy.output().contains("Server be1/s1 is DOWN, reason: External check error, code: 3, check duration: "));
    dir.file("control", "0");
    eventually!(stat(&proxy).0 == "UP", "{:?} {}", stat(&proxy), proxy.output());
    assert!(proxy.output().contains("Server be1/s1 is UP, reason: External check passed, code: 0, check duration: "));
}

#[test]
fn a_command_that_outlives_the_check_is_killed() {
    let dir = Scratch::new("extchk-hang");
    let cmd = script(&dir);
    dir.file("control", "hang");
    let proxy = start(RAMPART, &cmd, "");
    eventually!(stat(&proxy).1 == "PROCTOUT", "{:?} {}", stat(&proxy), proxy.output());
    assert_eq!(stat(&proxy).0, "DOWN");
    let pid: i32 = std::fs::read_to_string(dir.path().join("pid")).unwrap().trim().parse().unwrap();
    // the first hung command is terminated and reaped (no zombie left)
    assert!(wait_pid_gone(pid, patience()), "pid {pid} still there");
    dir.file("control", "0");
    eventually!(stat(&proxy).0 == "UP", "{:?} {}", stat(&proxy), proxy.output());
}

#[test]
fn haproxy_gives_the_command_the_same_arguments_and_environment() {
    let Some(haproxy) = haproxy_or_skip("haproxy_gives_the_command_the_same_arguments_and_environment") else {
        return;
    };
    let mut got = Vec::new();
    for binary in [RAMPART, haproxy.to_str().unwrap()] {
        let dir = Scratch::new("extchk-diff");
        let cmd = script(&dir);
        let proxy = start(binary, &cmd, "");
        eventually!(!seen(&dir).is_empty(), "{}", proxy.output());
        std::thread::sleep(Duration::from_millis(50));
        // the shell's own PWD is the process's working directory, each test's own
        let text: String = seen(&dir).lines().filter(|l| !l.starts_with("PWD=")).map(|l| format!("{l}\n")).collect();
        got.push(text);
        drop(proxy);
    }
    assert_eq!(got[0], got[1], "rampart, then haproxy");
}
