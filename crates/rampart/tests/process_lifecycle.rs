//! The process around the proxy: `-D` with `-p` (a daemon that serves, found through
//! its pidfile), reloads with `-sf`/`-st` (a new process on the same port tells the old
//! one to finish or to terminate), `nbthread`, and `user`/`group` (privileges dropped
//! once the ports are bound). HAProxy counterpart: haproxy.c (main, the daemon fork,
//! tell_old_pids, set_identity), management.txt §4 (stopping and restarting).

mod netutil;

use std::net::{SocketAddr, TcpListener};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use netutil::{echo_session, probe_echo, proxy, read_exact_within, tcp_defaults, wait_pid_gone, Probe, Scratch};
use rampart_testkit::{eventually, spawn_guarded, RawBackend, Running, Step, TcpEchoBackend};

const WAIT: Duration = Duration::from_secs(3);

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// A TCP `listen fe1` on `127.0.0.1:port` in front of `server`.
fn listen_on(port: u16, server: SocketAddr, global: &str) -> String {
    format!("global\n{global}{}listen fe1\n  bind 127.0.0.1:{port}\n  server s1 {server}\n", tcp_defaults(""))
}

/// A server that tells which instance the client went through: it sends `name`.
fn naming_server(name: &str) -> RawBackend {
    RawBackend::start(vec![Step::send(format!("{name}\n")), Step::Close])
}

/// Connects to `addr` and reads the name a [`naming_server`] sends.
fn served_by(addr: SocketAddr) -> String {
    let mut s = netutil::connect(addr, WAIT).expect("connect");
    let mut got = Vec::new();
    let _ = std::io::Read::read_to_end(&mut s, &mut got);
    String::from_utf8_lossy(&got).trim_end().to_owned()
}

// === daemon and pidfile ===

/// A daemon started by a test, killed on drop if the test left it running.
struct Daemon {
    pid: i32,
}

impl Daemon {
    fn from_pidfile(path: &Path) -> Daemon {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("pidfile {}: {e}", path.display()));
        let pid = text.trim_end().parse().unwrap_or_else(|_| panic!("pidfile holds {text:?}"));
        assert_eq!(text, format!("{pid}\n"), "one pid and a newline");
        Daemon { pid }
    }

    fn alive(&self) -> bool {
        !wait_pid_gone(self.pid, Duration::ZERO)
    }

    fn signal(&self, sig: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid), sig).expect("signal the daemon");
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", self.pid)).unwrap_or_default();
        let ours = String::from_utf8_lossy(&cmdline);
        if self.alive() && (ours.contains("rampart") || ours.contains("haproxy")) {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid), nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// Runs the binary under test with `args` in `dir` to completion (a daemon's parent
/// returns once the daemon serves); returns its exit code and stderr.
fn run_to_exit(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut cmd = Command::new(netutil::binary());
    cmd.args(args).current_dir(dir).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let child = spawn_guarded(&mut cmd).expect("start the binary");
    let out = child.wait_with_output().expect("wait");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn daemon_serves_and_its_pidfile_names_it() {
    let echo = TcpEchoBackend::start();
    let dir = Scratch::new("daemon");
    let port = netutil::free_port();
    dir.file("d.cfg", &listen_on(port, echo.addr(), ""));

    let started = Instant::now();
    let (code, stderr) = run_to_exit(dir.path(), &["-D", "-p", "d.pid", "-f", "d.cfg"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(3), "the parent returns once the daemon is ready");
    let daemon = Daemon::from_pidfile(&dir.path().join("d.pid"));
    assert!(daemon.alive(), "the pidfile names a running process");
    // It serves as soon as the parent returned.
    assert_eq!(probe_echo(loopback(port), WAIT), Probe::Echoed);

    // Detached: its own session, and no longer a child of the test.
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", daemon.pid)).unwrap();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap().split_whitespace().collect();
    let (ppid, sid): (i32, i32) = (fields[1].parse().unwrap(), fields[3].parse().unwrap());
    assert_ne!(ppid as u32, std::process::id());
    assert_eq!(sid, daemon.pid, "the daemon leads its own session");

    // The pidfile is how it is stopped.
    daemon.signal(nix::sys::signal::Signal::SIGUSR1);
    assert!(wait_pid_gone(daemon.pid, WAIT), "the daemon did not stop on SIGUSR1");
    assert_eq!(probe_echo(loopback(port), WAIT), Probe::Refused);
}

#[test]
fn daemon_reload_with_sf_and_the_pidfile() {
    // The classic reload: `-D -p pidfile -sf $(cat pidfile)`.
    let (old_srv, new_srv) = (naming_server("old"), naming_server("new"));
    let dir = Scratch::new("reload");
    let port = netutil::free_port();
    dir.file("old.cfg", &listen_on(port, old_srv.addr(), ""));
    dir.file("new.cfg", &listen_on(port, new_srv.addr(), ""));
    let (code, stderr) = run_to_exit(dir.path(), &["-D", "-p", "r.pid", "-f", "old.cfg"]);
    assert_eq!(code, Some(0), "{stderr}");
    let old = Daemon::from_pidfile(&dir.path().join("r.pid"));
    assert_eq!(served_by(loopback(port)), "old");

    let old_pid = old.pid.to_string();
    let (code, stderr) = run_to_exit(dir.path(), &["-D", "-p", "r.pid", "-f", "new.cfg", "-sf", &old_pid]);
    assert_eq!(code, Some(0), "{stderr}");
    let new = Daemon::from_pidfile(&dir.path().join("r.pid"));
    assert_ne!(new.pid, old.pid, "the pidfile names the new process");
    assert!(wait_pid_gone(old.pid, WAIT), "the old process did not leave");
    for _ in 0..4 {
        assert_eq!(served_by(loopback(port)), "new");
    }
}

// === -sf / -st between foreground processes ===

#[test]
fn sf_makes_the_old_process_finish_its_sessions_then_exit() {
    let (old_echo, new_srv) = (TcpEchoBackend::start(), naming_server("new"));
    let port = netutil::free_port();
    let mut old = proxy().config(&listen_on(port, old_echo.addr(), "")).start().unwrap();
    let mut session = echo_session(loopback(port));

    // Same port: both processes bind it (SO_REUSEPORT) while the old one finishes.
    let _new =
        proxy().config(&listen_on(port, new_srv.addr(), "")).arg("-sf").arg(old.pid().to_string()).start().unwrap();
    // The old process stopped listening: every new connection reaches the new one.
    eventually!(served_by(loopback(port)) == "new");
    for _ in 0..4 {
        assert_eq!(served_by(loopback(port)), "new");
    }
    // Its session goes on, and it waits for it.
    std::io::Write::write_all(&mut session, b"still here\n").unwrap();
    assert_eq!(read_exact_within(&mut session, 11, WAIT).unwrap(), b"still here\n");
    assert_eq!(old.wait_exit(Duration::from_millis(200)), None, "left with a session open");
    drop(session);
    let status = old.wait_exit(WAIT).expect("the old process exits once its session ended");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn st_terminates_the_old_process_at_once() {
    let (old_echo, new_srv) = (TcpEchoBackend::start(), naming_server("new"));
    let port = netutil::free_port();
    let mut old = proxy().config(&listen_on(port, old_echo.addr(), "")).start().unwrap();
    let mut session = echo_session(loopback(port));

    let _new =
        proxy().config(&listen_on(port, new_srv.addr(), "")).arg("-st").arg(old.pid().to_string()).start().unwrap();
    let status = old.wait_exit(WAIT).expect("the old process is terminated");
    if netutil::testing_haproxy() {
        assert_eq!(status.signal(), Some(libc::SIGTERM), "haproxy dies by the SIGTERM");
    } else {
        assert_eq!(status.code(), Some(0));
    }
    assert_ne!(netutil::wait_end(&mut session, WAIT).0, netutil::End::Open, "its session is cut");
    assert_eq!(served_by(loopback(port)), "new");
}

#[test]
fn sf_of_a_process_that_is_gone_still_starts() {
    let srv = naming_server("new");
    let port = netutil::free_port();
    // 4194305 is above Linux's highest pid: nobody receives the signal.
    let _p = proxy().config(&listen_on(port, srv.addr(), "")).arg("-sf").arg("4194305").start().unwrap();
    assert_eq!(served_by(loopback(port)), "new");
}

// === threads ===

/// The process's threads: (tid, name).
fn threads(pid: u32) -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("/proc/<pid>/task")
        .filter_map(|e| {
            let tid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).ok()?;
            Some((tid, comm.trim_end().to_owned()))
        })
        .collect();
    out.sort();
    out
}

/// Voluntary context switches of thread `tid`: it grows each time the thread waits
/// for an event, i.e. each time it served something.
fn switches(pid: u32, tid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Starts with `nbthread n` on a bound port (one socket per thread).
fn start_threads(n: usize, echo: &TcpEchoBackend) -> (Running, SocketAddr) {
    let port = netutil::free_port();
    let proxy = proxy().config(&listen_on(port, echo.addr(), &format!("  nbthread {n}\n"))).start().unwrap();
    (proxy, loopback(port))
}

/// Worker threads: HAProxy runs thread 1 on its main thread, rampart keeps the main
/// thread for signals and runs the watchdog's monitor on a thread of its own.
fn expected_tasks(nbthread: usize) -> usize {
    if netutil::testing_haproxy() {
        nbthread
    } else {
        nbthread + 2
    }
}

#[test]
fn nbthread_1_and_2_run_that_many_threads() {
    let echo = TcpEchoBackend::start();
    for n in [1, 2] {
        let (proxy, addr) = start_threads(n, &echo);
        assert_eq!(probe_echo(addr, WAIT), Probe::Echoed);
        assert_eq!(threads(proxy.pid()).len(), expected_tasks(n), "nbthread {n}: {:?}", threads(proxy.pid()));
    }
}

#[test]
fn nbthread_2_serves_on_both_threads() {
    let echo = TcpEchoBackend::start();
    let (proxy, addr) = start_threads(2, &echo);
    let pid = proxy.pid();
    // The worker threads (rampart names them rampart-1, rampart-2).
    let workers: Vec<u32> = threads(pid)
        .into_iter()
        .filter(|(tid, name)| netutil::testing_haproxy() || (*tid != pid && name.starts_with("rampart-")))
        .map(|(tid, _)| tid)
        .collect();
    assert_eq!(workers.len(), 2, "{:?}", threads(pid));
    let before: Vec<u64> = workers.iter().map(|&t| switches(pid, t)).collect();
    // Sessions held open together: each new source port lands on either thread's socket.
    let sessions: Vec<_> = (0..24).map(|_| echo_session(addr)).collect();
    drop(sessions);
    let after: Vec<u64> = workers.iter().map(|&t| switches(pid, t)).collect();
    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
        assert!(a > b, "worker thread {} did no work ({b} -> {a} context switches)", workers[i]);
    }
    assert_eq!(echo.wait_finished(24).len(), 24);
}

// === privileges ===

fn running_as_root() -> bool {
    let root = nix::unistd::geteuid().is_root();
    if !root {
        eprintln!("SKIPPED: needs root to change user");
    }
    root
}

/// `Uid:`/`Gid:` lines of /proc/<pid>/status: real, effective, saved, filesystem.
fn ids(pid: u32, field: &str) -> Vec<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let line = status.lines().find_map(|l| l.strip_prefix(field)).unwrap_or_else(|| panic!("no {field}"));
    line.split_whitespace().map(|v| v.parse().unwrap()).collect()
}

/// A privileged port nothing listens on.
fn free_privileged_port() -> u16 {
    (900..1000).find(|p| TcpListener::bind(loopback(*p)).is_ok()).expect("a free port below 1024")
}

#[test]
fn user_and_group_drop_privileges_after_binding_a_privileged_port() {
    if !running_as_root() {
        return;
    }
    let nobody = nix::unistd::User::from_name("nobody").unwrap().expect("user nobody");
    let nogroup = nix::unistd::Group::from_gid(nobody.gid).unwrap().expect("nobody's group");
    let echo = TcpEchoBackend::start();
    let port = free_privileged_port();
    let proxy = proxy()
        .config(&listen_on(port, echo.addr(), &format!("  user nobody\n  group {}\n", nogroup.name)))
        .start()
        .unwrap();
    // Bound as root, then serving as nobody.
    assert_eq!(probe_echo(loopback(port), WAIT), Probe::Echoed);
    let (uid, gid) = (nobody.uid.as_raw(), nobody.gid.as_raw());
    assert_eq!(ids(proxy.pid(), "Uid:"), [uid; 4]);
    assert_eq!(ids(proxy.pid(), "Gid:"), [gid; 4]);
    let status = std::fs::read_to_string(format!("/proc/{}/status", proxy.pid())).unwrap();
    let groups = status.lines().find_map(|l| l.strip_prefix("Groups:")).unwrap().trim().to_owned();
    assert!(groups.is_empty() || groups == gid.to_string(), "supplementary groups kept: {groups}");
    // Every thread changed, not only the main one.
    for (tid, _) in threads(proxy.pid()) {
        let line = std::fs::read_to_string(format!("/proc/{}/task/{tid}/status", proxy.pid())).unwrap();
        assert!(line.contains(&format!("Uid:\t{uid}\t{uid}\t{uid}\t{uid}")), "thread {tid} kept its uid");
    }
}

#[test]
fn uid_and_gid_by_number() {
    if !running_as_root() {
        return;
    }
    let echo = TcpEchoBackend::start();
    let port = netutil::free_port();
    let proxy = proxy().config(&listen_on(port, echo.addr(), "  uid 65534\n  gid 65534\n")).start().unwrap();
    assert_eq!(probe_echo(loopback(port), WAIT), Probe::Echoed);
    assert_eq!(ids(proxy.pid(), "Uid:"), [65534; 4]);
    assert_eq!(ids(proxy.pid(), "Gid:"), [65534; 4]);
}
