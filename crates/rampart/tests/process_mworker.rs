//! Master-worker mode through the real binary: `-W` starts a master and its worker;
//! SIGUSR2 reloads with a changed configuration while clients keep sending (keep-alive
//! and one connection per request) and none of their requests fails; a configuration
//! that does not load leaves the old worker serving; `-Ws` tells a notify socket
//! READY=1 and RELOADING=1; the master CLI's `show proc` lists the workers and routes
//! `@1` to the worker's CLI, and the old workers until `hard-stop-after` ends them;
//! Debian's `haproxy.service` commands start and reload it. HAProxy counterpart: src/mworker.c, src/haproxy.c.

mod netutil;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netutil::proxy;
use rampart_testkit::{eventually, RawClient, Running, Signal};

fn config(body: &str, extra_global: &str) -> String {
    format!(
        "global\n  nbthread 2\n{extra_global}\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n  timeout http-keep-alive 5s\n\
         frontend fe1\n  bind fd@${{fe1}}\n  http-request return status 200 content-type text/plain string \"{body}\"\n"
    )
}

fn start(body: &str, extra_global: &str, args: &[&str]) -> Running {
    let mut p = proxy().listener("fe1").config(&config(body, extra_global)).arg("-W");
    for a in args {
        p = p.arg(*a);
    }
    p.start().expect("master starts")
}

/// Writes the running configuration again with `from` replaced by `to`.
fn rewrite(proxy: &Running, from: &str, to: &str) {
    let text = proxy.config().replace(from, to);
    assert_ne!(text, proxy.config(), "{from} not in the configuration");
    std::fs::write(proxy.dir().join("test.cfg"), text).unwrap();
}

fn get_body(addr: SocketAddr) -> Option<String> {
    let mut c = RawClient::connect(addr).ok()?;
    c.set_read_timeout(Duration::from_secs(2)).ok()?;
    c.send("GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").ok()?;
    let r = c.read_response().ok()?;
    Some(String::from_utf8_lossy(&r.body).into_owned())
}

/// The master CLI's answer to `cmd` on the unix socket `path`.
fn mcli(path: &Path, cmd: &str) -> String {
    let mut s = UnixStream::connect(path).expect("master CLI");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(format!("{cmd}\n").as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn stop(mut proxy: Running) -> String {
    proxy.signal(Signal::SIGTERM).unwrap();
    let status = proxy.wait_exit(Duration::from_secs(5)).expect("the master exits");
    assert_eq!(status.code(), Some(0), "{}", proxy.output());
    proxy.output()
}

#[test]
fn master_starts_a_worker_and_leaves_with_it() {
    let proxy = start("v1", "", &[]);
    assert_eq!(get_body(proxy.addr("fe1")).as_deref(), Some("v1"));
    assert!(proxy.wait_output("New worker (", Duration::from_secs(5)), "{}", proxy.output());
    assert!(proxy.wait_output("Loading success.", Duration::from_secs(5)), "{}", proxy.output());
    let out = stop(proxy);
    assert!(out.contains("Exiting Master process..."), "{out}");
    assert!(out.contains("All workers exited. Exiting... (0)"), "{out}");
}

/// Counts of a client loop: requests answered, and failures (no complete response).
#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    failed: AtomicU64,
    v2: AtomicU64,
}

/// Keep-alive requests in a loop on one connection, a new one when the proxy announces
/// the close.
fn keep_alive_loop(addr: SocketAddr, stop: &AtomicBool, tally: &Tally) {
    let mut conn: Option<RawClient> = None;
    while !stop.load(Ordering::Relaxed) {
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match RawClient::connect(addr) {
                Ok(c) => {
                    let _ = c.set_read_timeout(Duration::from_secs(3));
                    conn.insert(c)
                }
                Err(_) => {
                    tally.failed.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            },
        };
        let answer = c.send("GET / HTTP/1.1\r\nhost: x\r\n\r\n").and_then(|()| c.read_response());
        match answer {
            Ok(r) if r.status == 200 => {
                tally.ok.fetch_add(1, Ordering::Relaxed);
                if r.body == b"v2" {
                    tally.v2.fetch_add(1, Ordering::Relaxed);
                }
                if r.headers.get("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
                    conn = None;
                }
            }
            _ => {
                tally.failed.fetch_add(1, Ordering::Relaxed);
                conn = None;
            }
        }
    }
}

/// One connection per request.
fn close_loop(addr: SocketAddr, stop: &AtomicBool, tally: &Tally) {
    while !stop.load(Ordering::Relaxed) {
        match get_body(addr) {
            Some(body) => {
                tally.ok.fetch_add(1, Ordering::Relaxed);
                if body == "v2" {
                    tally.v2.fetch_add(1, Ordering::Relaxed);
                }
            }
            None => {
                tally.failed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

#[test]
fn sigusr2_reload_takes_the_new_configuration_and_no_request_fails() {
    let proxy = start("v1", "", &[]);
    assert!(proxy.wait_output("Loading success.", Duration::from_secs(5)));
    let addr = proxy.addr("fe1");
    let stop_flag = Arc::new(AtomicBool::new(false));
    let (ka, cl) = (Arc::new(Tally::default()), Arc::new(Tally::default()));
    let threads = [
        {
            let (s, t) = (stop_flag.clone(), ka.clone());
            std::thread::spawn(move || keep_alive_loop(addr, &s, &t))
        },
        {
            let (s, t) = (stop_flag.clone(), cl.clone());
            std::thread::spawn(move || close_loop(addr, &s, &t))
        },
    ];
    std::thread::sleep(Duration::from_millis(300));
    rewrite(&proxy, "string \"v1\"", "string \"v2\"");
    proxy.signal(Signal::SIGUSR2).unwrap();
    eventually!(ka.v2.load(Ordering::Relaxed) > 0 && cl.v2.load(Ordering::Relaxed) > 0);
    assert!(proxy.wait_output("Former worker (", Duration::from_secs(10)), "{}", proxy.output());
    std::thread::sleep(Duration::from_millis(200));
    stop_flag.store(true, Ordering::Relaxed);
    threads.into_iter().for_each(|t| t.join().unwrap());
    for (name, t) in [("keep-alive", &ka), ("connection per request", &cl)] {
        let (ok, failed) = (t.ok.load(Ordering::Relaxed), t.failed.load(Ordering::Relaxed));
        assert!(ok > 10, "{name}: only {ok} requests");
        assert_eq!(failed, 0, "{name}: {failed} failed of {}\n{}", ok + failed, proxy.output());
    }
    let out = stop(proxy);
    assert_eq!(out.matches("Loading success.").count(), 2, "{out}");
}

#[test]
fn a_configuration_that_does_not_load_leaves_the_old_worker_serving() {
    let proxy = start("v1", "", &["-S", "unix@master.sock"]);
    let sock = proxy.dir().join("master.sock");
    assert!(proxy.wait_output("Loading success.", Duration::from_secs(5)));
    rewrite(&proxy, "mode http\n", "mode http\n  bogus_keyword\n");
    proxy.signal(Signal::SIGUSR2).unwrap();
    assert!(proxy.wait_output("Loading failure!", Duration::from_secs(5)), "{}", proxy.output());
    assert!(proxy.output().contains("unknown keyword 'bogus_keyword'"), "{}", proxy.output());
    assert_eq!(get_body(proxy.addr("fe1")).as_deref(), Some("v1"));
    let procs = mcli(&sock, "show proc");
    assert!(procs.lines().nth(1).is_some_and(|l| l.contains("1 [failed: 1]")), "{procs}");
    assert_eq!(procs.lines().filter(|l| l.contains(" worker ")).count(), 1, "{procs}");
    // fixed: the next reload works and resets the failure count
    std::fs::write(proxy.dir().join("test.cfg"), proxy.config().replace("string \"v1\"", "string \"v2\"")).unwrap();
    proxy.signal(Signal::SIGUSR2).unwrap();
    eventually!(get_body(proxy.addr("fe1")).as_deref() == Some("v2"));
    assert!(mcli(&sock, "show proc").contains("2 [failed: 0]"));
    stop(proxy);
}

#[test]
fn master_cli_lists_workers_routes_commands_and_reloads() {
    let proxy = start("v1", "", &["-S", "unix@master.sock"]);
    let sock = proxy.dir().join("master.sock");
    assert!(proxy.wait_output("Loading success.", Duration::from_secs(5)));
    let procs = mcli(&sock, "show proc");
    let lines: Vec<&str> = procs.lines().collect();
    assert_eq!(lines[0], "#<PID>          <type>          <reloads>       <uptime>        <version>      ", "{procs}");
    assert!(lines[1].starts_with(&format!("{:<15} master          0 [failed: 0]", proxy.pid())), "{procs}");
    assert_eq!(lines[2], "# workers");
    let worker: u32 = lines[3].split_whitespace().next().unwrap().parse().unwrap();
    assert!(lines[3].contains(" worker          0 "), "{procs}");
    assert_eq!(lines[4], "# programs");
    assert!(mcli(&sock, "@1 show info").contains(&format!("\nPid: {worker}\n")));
    assert!(mcli(&sock, &format!("@!{worker} show info")).contains(&format!("\nPid: {worker}\n")));
    assert_eq!(mcli(&sock, "@7 show info"), "Can't find the target PID matching the prefix '@7'\n");
    // an idle keep-alive connection... is closed by the soft stop; a slow one is not
    // needed to see the new worker listed
    rewrite(&proxy, "string \"v1\"", "string \"v2\"");
    mcli(&sock, "reload");
    eventually!(get_body(proxy.addr("fe1")).as_deref() == Some("v2"));
    let procs = mcli(&sock, "show proc");
    assert!(procs.contains("master          1 [failed: 0]"), "{procs}");
    assert!(!procs.contains(&format!("\n{worker:<15} worker          0")), "{procs}");
    stop(proxy);
}

#[test]
fn ws_tells_the_notify_socket_ready_and_reloading() {
    let dir = netutil::Scratch::new("notify");
    let path = dir.path().join("notify.sock");
    let rx = UnixDatagram::bind(&path).unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let proxy = proxy()
        .listener("fe1")
        .config(&config("v1", ""))
        .arg("-Ws")
        .env("NOTIFY_SOCKET", path.as_os_str())
        .start()
        .expect("master starts");
    let next = || {
        let mut buf = [0u8; 512];
        let n = rx.recv(&mut buf).expect("a notification");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    let ready = next();
    assert!(ready.starts_with("READY=1\n"), "{ready}");
    assert!(ready.contains(&format!("MAINPID={}\n", proxy.pid())), "{ready}");
    proxy.signal(Signal::SIGUSR2).unwrap();
    let reloading = next();
    assert!(reloading.starts_with("RELOADING=1\n"), "{reloading}");
    assert!(next().starts_with("READY=1\n"));
    // the worker never sees NOTIFY_SOCKET; a broken reload says so in STATUS=
    rewrite(&proxy, "mode http\n", "mode http\n  bogus_keyword\n");
    proxy.signal(Signal::SIGUSR2).unwrap();
    assert!(next().starts_with("RELOADING=1\n"));
    let failed = next();
    assert!(failed.contains("STATUS=Reload failed"), "{failed}");
    let started = Instant::now();
    let out = stop(proxy);
    assert!(next().starts_with("STOPPING=1"), "{out}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn pidfile_holds_the_master_pid() {
    let proxy = start("v1", "", &["-p", "r.pid"]);
    let pid = std::fs::read_to_string(proxy.dir().join("r.pid")).unwrap();
    assert_eq!(pid, format!("{}\n", proxy.pid()));
    let _ = TcpStream::connect(proxy.addr("fe1"));
    stop(proxy);
}

#[test]
fn show_proc_lists_an_old_worker_until_hard_stop_after_ends_it() {
    // a server that never answers: the kernel completes the connection, nobody reads
    let hold = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let tcp = "frontend tcp1\n  mode tcp\n  bind fd@${tcp1}\n  timeout client 30s\n  default_backend hold\n\
               backend hold\n  mode tcp\n  timeout server 30s\n  server h ${hold_addr}:${hold_port}\n";
    let proxy = proxy()
        .listener("fe1")
        .listener("tcp1")
        .backend("hold", hold.local_addr().unwrap())
        .config(&format!("{}{tcp}", config("v1", "  hard-stop-after 1s\n")))
        .arg("-W")
        .arg("-S")
        .arg("unix@master.sock")
        .start()
        .expect("master starts");
    let sock = proxy.dir().join("master.sock");
    assert!(proxy.wait_output("Loading success.", Duration::from_secs(5)));
    let worker = |procs: &str| procs.lines().nth(3).and_then(|l| l.split_whitespace().next()).map(str::to_owned);
    let old = worker(&mcli(&sock, "show proc")).expect("a worker");
    // a tunnel keeps the old worker busy after the reload
    let mut tunnel = TcpStream::connect(proxy.addr("tcp1")).unwrap();
    tunnel.write_all(b"hello").unwrap();
    let _held = accepted(&hold);
    rewrite(&proxy, "string \"v1\"", "string \"v2\"");
    mcli(&sock, "reload");
    eventually!(get_body(proxy.addr("fe1")).as_deref() == Some("v2"));
    let reloaded = Instant::now();
    let procs = mcli(&sock, "show proc");
    let listed = procs.split("# old workers\n").nth(1).unwrap_or("");
    assert!(listed.starts_with(&format!("{old} ")), "the old worker is listed while its tunnel lasts: {procs}");
    eventually!(!mcli(&sock, "show proc").contains(&format!("\n{old} ")));
    assert!(reloaded.elapsed() < Duration::from_secs(4), "gone by hard-stop-after (1 s): {:?}", reloaded.elapsed());
    // the tunnel was cut by the old worker's hard stop
    tunnel.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut buf = [0u8; 16];
    let r = tunnel.read(&mut buf);
    let closed = matches!(r, Ok(0)) || r.as_ref().is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset);
    assert!(closed, "the tunnel is closed, not still open: {r:?}");
    stop(proxy);
}

/// The connection the proxy made to `hold`, accepted but never read: the tunnel stays
/// open until a side closes it.
fn accepted(hold: &std::net::TcpListener) -> TcpStream {
    hold.set_nonblocking(true).unwrap();
    let started = Instant::now();
    loop {
        if let Ok((s, _)) = hold.accept() {
            return s;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "the proxy connects to the server");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn debian_haproxy_service_commands_start_and_reload_rampart() {
    // Debian's haproxy.service: ExecStart=haproxy -Ws -f $CONFIG -p $PIDFILE $EXTRAOPTS
    // (EXTRAOPTS=-S /run/haproxy-master.sock), Type=notify; ExecReload runs
    // haproxy -Ws -f $CONFIG -c -q $EXTRAOPTS, then kill -USR2 $MAINPID
    let dir = netutil::Scratch::new("debian-unit");
    let path = dir.path().join("notify.sock");
    let rx = UnixDatagram::bind(&path).unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let proxy = proxy()
        .listener("fe1")
        .config(&config("v1", ""))
        .arg("-Ws")
        .arg("-p")
        .arg("haproxy.pid")
        .arg("-S")
        .arg("unix@haproxy-master.sock")
        .env("NOTIFY_SOCKET", path.as_os_str())
        .start()
        .expect("master starts");
    let next = || {
        let mut buf = [0u8; 512];
        let n = rx.recv(&mut buf).expect("a notification");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    let ready = next();
    assert!(ready.starts_with("READY=1\n"), "{ready}");
    let main_pid = std::fs::read_to_string(proxy.dir().join("haproxy.pid")).unwrap();
    assert_eq!(main_pid, format!("{}\n", proxy.pid()));
    assert!(ready.contains(&format!("MAINPID={main_pid}")), "{ready}");
    assert_eq!(get_body(proxy.addr("fe1")).as_deref(), Some("v1"));
    rewrite(&proxy, "string \"v1\"", "string \"v2\"");
    // ExecReload, first command: the configuration check, quiet
    let check = std::process::Command::new(netutil::binary())
        .current_dir(proxy.dir())
        .args(["-Ws", "-f", "test.cfg", "-c", "-q", "-S", "unix@haproxy-master.sock"])
        .output()
        .unwrap();
    assert!(check.status.success(), "{check:?}");
    assert!(check.stdout.is_empty(), "{check:?}");
    // second command: kill -USR2 $MAINPID
    let kill = std::process::Command::new("kill").args(["-USR2", main_pid.trim()]).status().unwrap();
    assert!(kill.success());
    assert!(next().starts_with("RELOADING=1\n"));
    assert!(next().starts_with("READY=1\n"));
    eventually!(get_body(proxy.addr("fe1")).as_deref() == Some("v2"));
    assert!(mcli(&proxy.dir().join("haproxy-master.sock"), "show proc").contains("master          1 [failed: 0]"));
    stop(proxy);
    assert!(next().starts_with("STOPPING=1"));
}

/// Replaces `from` with `to` in the configuration file as it is now.
fn edit(proxy: &Running, from: &str, to: &str) {
    let path = proxy.dir().join("test.cfg");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{from} not in {text}");
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// `show startup-logs`: on the master CLI, the messages of the latest startup or reload
/// attempt (HAProxy 3.x's: a failed reload's parse error); routed to a worker, that
/// worker's own startup messages (HAProxy 2.6's stats socket command), the warnings its
/// master printed included.
#[test]
fn show_startup_logs_tells_why_a_reload_failed_while_the_old_worker_serves() {
    let proxy = start("v1", "", &["-S", "unix@master.sock"]);
    let sock = proxy.dir().join("master.sock");
    assert!(proxy.wait_output("Loading success.", Duration::from_secs(5)));
    let first = mcli(&sock, "show startup-logs");
    assert!(first.contains("Loading success."), "{first}");
    assert!(!first.contains("bogus_keyword"), "{first}");
    let worker_before = mcli(&sock, "@1 show startup-logs");

    // (the `bind` line's end: the harness wrote its `fd@` number in the file)
    edit(&proxy, "\n  http-request return", " level user\n  http-request return");
    edit(&proxy, "mode http\n", "mode http\n  bogus_keyword\n");
    proxy.signal(Signal::SIGUSR2).unwrap();
    assert!(proxy.wait_output("Loading failure!", Duration::from_secs(5)), "{}", proxy.output());
    let logs = mcli(&sock, "show startup-logs");
    assert!(logs.contains("unknown keyword 'bogus_keyword'"), "{logs}");
    assert!(logs.contains("'level' only applies to a 'stats socket'"), "{logs}");
    assert!(logs.contains("Loading failure!") && !logs.contains("Loading success."), "{logs}");
    // the old worker serves on, its own startup messages unchanged
    assert_eq!(get_body(proxy.addr("fe1")).as_deref(), Some("v1"));
    assert_eq!(mcli(&sock, "@1 show startup-logs"), worker_before);

    // fixed, with the warning left: the new worker recorded it (its master printed it)
    edit(&proxy, "  bogus_keyword\n", "");
    edit(&proxy, "string \"v1\"", "string \"v2\"");
    proxy.signal(Signal::SIGUSR2).unwrap();
    eventually!(get_body(proxy.addr("fe1")).as_deref() == Some("v2"));
    eventually!(mcli(&sock, "show startup-logs").contains("Loading success."));
    let worker = mcli(&sock, "@1 show startup-logs");
    assert!(worker.contains("'level' only applies to a 'stats socket'"), "{worker}");
    assert!(!worker.contains("bogus_keyword"), "{worker}");
    stop(proxy);
}
