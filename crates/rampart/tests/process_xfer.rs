//! Seamless reloads with `-x`: the new process fetches the old one's listening sockets
//! over its stats socket (`expose-fd listeners`, `_getsocks`) instead of binding, then
//! `-sf` soft-stops the old one. Under a client loop, no connection fails, and the
//! sockets listening on the port after the old process left are the very ones (same
//! inodes) it listened on, now held by the new process. Between two rampart processes,
//! and across tools in both directions with HAProxy 2.6 (the migration path).
//! HAProxy counterpart: `sock_get_old_sockets()` (src/sock.c), `_getsocks()` (src/cli.c),
//! management.txt §4 (`-x`).

mod netutil;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use netutil::{probe_echo, tcp_defaults, Probe, Scratch};
use rampart_testkit::{eventually, haproxy_or_skip, Proxy, RawClient, Running, TcpEchoBackend};

const WAIT: Duration = Duration::from_secs(5);

/// The startup failure of `proxy`, as text; panics if it starts.
fn fails_to_start(proxy: Proxy) -> String {
    match proxy.start() {
        Ok(running) => panic!("it starts: {}", running.output()),
        Err(e) => format!("{e:?}"),
    }
}

fn rampart() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rampart"))
}

/// A TCP `listen fe1` on `127.0.0.1:port` in front of `server`, with `nbthread` threads
/// and a stats socket at `sock` that hands its listeners out.
fn config(port: u16, server: SocketAddr, sock: &Path, nbthread: u32) -> String {
    format!(
        "global\n  nbthread {nbthread}\n  stats socket {} mode 600 level admin expose-fd listeners\n{}\
         listen fe1\n  bind 127.0.0.1:{port}\n  server s1 {server}\n",
        sock.display(),
        tcp_defaults("")
    )
}

/// The inodes of the TCP sockets listening on `127.0.0.1:port` (/proc/net/tcp).
fn listening_inodes(port: u16) -> BTreeSet<u64> {
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let local = format!("0100007F:{port:04X}");
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(1) == Some(&local.as_str()) && f.get(3) == Some(&"0A")).then(|| f.get(9)?.parse().ok())?
        })
        .collect()
}

/// The inodes of the sockets process `pid` holds.
fn held_sockets(pid: u32) -> BTreeSet<u64> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return BTreeSet::new() };
    dir.filter_map(|e| {
        let link = std::fs::read_link(e.ok()?.path()).ok()?;
        link.to_str()?.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
    })
    .collect()
}

/// A client loop through the proxy: connect, send a line, read its echo, close; over
/// and over until stopped. Every failure is recorded with what failed.
struct Load {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<(u32, Vec<String>)>,
}

impl Load {
    fn start(addr: SocketAddr) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let (mut ok, mut failures) = (0u32, Vec::new());
            while !flag.load(Ordering::Relaxed) {
                match exchange(addr) {
                    Ok(()) => ok += 1,
                    Err(e) => failures.push(e),
                }
            }
            (ok, failures)
        });
        Load { stop, thread }
    }

    /// Stops the loop: (exchanges that worked, failures).
    fn finish(self) -> (u32, Vec<String>) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("client loop")
    }
}

fn exchange(addr: SocketAddr) -> Result<(), String> {
    let mut s = netutil::connect(addr, WAIT).map_err(|e| format!("connect: {e}"))?;
    s.write_all(b"ping\n").map_err(|e| format!("send: {e}"))?;
    let mut got = [0u8; 5];
    s.read_exact(&mut got).map_err(|e| format!("echo: {e}"))?;
    if &got != b"ping\n" {
        return Err(format!("echo: got {got:?}"));
    }
    Ok(())
}

/// Starts `old_bin` serving `port`, then `new_bin -x <old stats socket> -sf <old pid>`
/// under a client loop; checks that nothing failed and that the new process serves on
/// the old one's sockets. Returns the new process.
fn reload_with_x(old_bin: PathBuf, new_bin: PathBuf, nbthread: u32) -> Running {
    let dir = Scratch::new("xfer");
    let echo = TcpEchoBackend::start();
    let port = netutil::free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    // one stats socket path for both, as a reload uses it: the new process fetches
    // through it, then binds its own there
    let old_sock = dir.path().join("admin.sock");
    let mut old = Proxy::new(old_bin).config(&config(port, echo.addr(), &old_sock, nbthread)).start().unwrap();
    eventually!(probe_echo(addr, WAIT) == Probe::Echoed, "the old process does not serve");
    let before = listening_inodes(port);
    assert!(!before.is_empty() && before.is_subset(&held_sockets(old.pid())), "{before:?}");

    let load = Load::start(addr);
    std::thread::sleep(Duration::from_millis(300));
    let new = Proxy::new(new_bin)
        .config(&config(port, echo.addr(), &old_sock, nbthread))
        .arg("-x")
        .arg(&old_sock)
        .arg("-sf")
        .arg(old.pid().to_string())
        .start()
        .unwrap_or_else(|e| panic!("the new process did not start: {e:?}"));
    let status = old.wait_exit(WAIT).unwrap_or_else(|| panic!("the old process stays: {}", old.output()));
    assert!(status.success() || status.code().is_none(), "{status:?}");
    std::thread::sleep(Duration::from_millis(300));
    let (ok, failures) = load.finish();
    assert!(
        failures.is_empty(),
        "{} of {} exchanges failed: {failures:?}",
        failures.len(),
        ok as usize + failures.len()
    );
    assert!(ok > 20, "only {ok} exchanges");

    let after = listening_inodes(port);
    assert_eq!(after, before, "the new process bound new sockets instead of taking the old ones");
    assert!(after.is_subset(&held_sockets(new.pid())), "{after:?} not held by the new process");
    assert_eq!(probe_echo(addr, WAIT), Probe::Echoed);
    new
}

#[test]
fn rampart_reloads_rampart_with_x_and_sf_without_losing_a_connection() {
    // two threads: one socket per thread, each handed over
    let new = reload_with_x(rampart(), rampart(), 2);
    assert!(!new.output().contains("WARNING"), "{}", new.output());
}

#[test]
fn rampart_takes_the_sockets_of_a_running_haproxy() {
    let Some(haproxy) = haproxy_or_skip(module_path!()) else { return };
    // (haproxy hands its stats socket over too: rampart has another, and closes it)
    reload_with_x(haproxy, rampart(), 2);
}

#[test]
fn haproxy_takes_the_sockets_of_a_running_rampart() {
    let Some(haproxy) = haproxy_or_skip(module_path!()) else { return };
    // one thread: HAProxy takes one socket per address (see docs/RELOAD.md)
    reload_with_x(rampart(), haproxy, 1);
}

/// What a failed fetch prints, and whether the process goes on: HAProxy's words and
/// outcome, fatal unless master-worker.
#[test]
fn an_old_socket_nobody_serves_is_fatal_as_in_haproxy_except_with_w() {
    let dir = Scratch::new("xfer-none");
    let gone = dir.path().join("gone.sock");
    let echo = TcpEchoBackend::start();
    let cfg = |port| config(port, echo.addr(), &dir.path().join(format!("s{port}.sock")), 1);
    let mut binaries = vec![rampart()];
    binaries.extend(haproxy_or_skip(module_path!()));
    for bin in binaries {
        let port = netutil::free_port();
        let text = fails_to_start(Proxy::new(&bin).config(&cfg(port)).arg("-x").arg(&gone));
        let warning = format!("Failed to connect to the old process socket '{}'", gone.display());
        assert!(text.contains(&warning), "{}: {text}", bin.display());
        assert!(text.contains("Failed to get the sockets from the old process!"), "{}: {text}", bin.display());

        let port = netutil::free_port();
        let running = Proxy::new(&bin).config(&cfg(port)).arg("-W").arg("-x").arg(&gone).start().unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        eventually!(probe_echo(addr, WAIT) == Probe::Echoed, "{} -W does not serve", bin.display());
        assert!(running.output().contains(&warning), "{}", running.output());

        // `-x /dev/null`: nothing to fetch, as HAProxy
        let port = netutil::free_port();
        let running = Proxy::new(&bin).config(&cfg(port)).arg("-x").arg("/dev/null").start().unwrap();
        eventually!(probe_echo(SocketAddr::from(([127, 0, 0, 1], port)), WAIT) == Probe::Echoed);
        assert!(!running.output().contains("old process"), "{}", running.output());
    }
}

/// A stats socket without `expose-fd listeners` hands nothing out: the new process
/// says so (as HAProxy) and does not start.
#[test]
fn a_stats_socket_without_expose_fd_hands_nothing_out() {
    let dir = Scratch::new("xfer-noexpose");
    let echo = TcpEchoBackend::start();
    let port = netutil::free_port();
    let sock = dir.path().join("old.sock");
    let plain = config(port, echo.addr(), &sock, 1).replace(" expose-fd listeners", "");
    let old = Proxy::new(rampart()).config(&plain).start().unwrap();
    let new_cfg = config(port, echo.addr(), &dir.path().join("new.sock"), 1);
    let text = fails_to_start(Proxy::new(rampart()).config(&new_cfg).arg("-x").arg(&sock));
    assert!(text.contains("Failed to get the number of sockets to be transferred !"), "{text}");
    // the old one is untouched
    assert_eq!(probe_echo(SocketAddr::from(([127, 0, 0, 1], port)), WAIT), Probe::Echoed);
    drop(old);
}

/// An HTTP `frontend` on `127.0.0.1:port` answering `body`, with a stats socket at `sock`
/// that hands its listeners out.
fn http_config(port: u16, sock: &Path, body: &str) -> String {
    format!(
        "global\n  nbthread 2\n  stats socket {} mode 600 level admin expose-fd listeners\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n  timeout http-keep-alive 5s\n\
         frontend fe1\n  bind 127.0.0.1:{port}\n  http-request return status 200 content-type text/plain string \"{body}\"\n",
        sock.display()
    )
}

/// Keep-alive requests on one connection until `stop`, a new connection only after a
/// response that announced the close: (answered, answered by "v2", failures).
fn keep_alive_client(addr: SocketAddr, stop: &AtomicBool) -> (u32, u32, Vec<String>) {
    let (mut ok, mut v2, mut failures) = (0, 0, Vec::new());
    let mut conn: Option<RawClient> = None;
    while !stop.load(Ordering::Relaxed) {
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match RawClient::connect(addr) {
                Ok(c) => {
                    let _ = c.set_read_timeout(Duration::from_secs(3));
                    conn.insert(c)
                }
                Err(e) => {
                    failures.push(format!("connect: {e}"));
                    continue;
                }
            },
        };
        match c.send("GET / HTTP/1.1\r\nhost: x\r\n\r\n").and_then(|()| c.read_response()) {
            Ok(r) if r.status == 200 => {
                ok += 1;
                v2 += u32::from(r.body == b"v2");
                if r.headers.get("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
                    conn = None;
                }
            }
            other => {
                failures.push(format!("{:?}", other.map(|r| r.status)));
                conn = None;
            }
        }
    }
    (ok, v2, failures)
}

/// `-x` over a stats socket with `expose-fd listeners`, then `-sf`, under keep-alive
/// clients: every request sent is answered (the old process closes its idle keep-alive
/// connections with `connection: close` on their next response, never under a request),
/// and the new process serves on the old one's very sockets.
#[test]
fn a_reload_with_x_under_keep_alive_load_loses_no_request() {
    let dir = Scratch::new("xfer-ka");
    let port = netutil::free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let sock = dir.path().join("admin.sock");
    let mut old = Proxy::new(rampart()).config(&http_config(port, &sock, "v1")).start().unwrap();
    let before = listening_inodes(port);
    assert!(!before.is_empty());
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || keep_alive_client(addr, &stop))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let new = Proxy::new(rampart())
        .config(&http_config(port, &sock, "v2"))
        .arg("-x")
        .arg(&sock)
        .arg("-sf")
        .arg(old.pid().to_string())
        .start()
        .unwrap_or_else(|e| panic!("the new process did not start: {e:?}"));
    old.wait_exit(WAIT).unwrap_or_else(|| panic!("the old process stays: {}", old.output()));
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let (mut ok, mut v2) = (0, 0);
    for c in clients {
        let (o, v, failures) = c.join().unwrap();
        assert!(failures.is_empty(), "{} failed: {failures:?}\nold: {}", failures.len(), old.output());
        (ok, v2) = (ok + o, v2 + v);
    }
    assert!(ok > 100 && v2 > 0 && v2 < ok, "{ok} answered, {v2} by the new process");
    assert_eq!(listening_inodes(port), before, "the new process bound new sockets");
    assert!(before.is_subset(&held_sockets(new.pid())));
}
