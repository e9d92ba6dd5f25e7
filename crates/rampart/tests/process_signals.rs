//! Signals sent to a running proxy, seen from clients and servers: SIGTERM and SIGINT
//! stop at once; SIGUSR1 is the soft stop (listeners closed at once, exchanges in flight
//! finish with `connection: close`, idle keep-alive connections closed, exit 0 when the
//! last one ends, or after `hard-stop-after`); SIGTTOU pauses the listeners and SIGTTIN
//! resumes them. HAProxy counterpart: haproxy.c (sig_soft_stop, sig_term, sig_pause,
//! sig_listen), proxy.c (soft_stop, pause_proxies, resume_proxies).

mod netutil;

use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use netutil::{echo_session, probe_echo, proxy, read_exact_within, tcp_listen_s1, wait_end, End, Probe};
use rampart_testkit::{eventually, HttpBackend, RawClient, Reply, Running, Signal, TcpEchoBackend};

fn start_tcp(echo: &TcpEchoBackend, global: &str) -> Running {
    proxy()
        .listener("fe1")
        .backend("s1", echo.addr())
        .config(&format!("global\n{global}{}", tcp_listen_s1("")))
        .start()
        .expect("proxy starts")
}

/// Sends `sig` and waits for the exit; returns the exit status and how long it took.
fn stop_with(proxy: &mut Running, sig: Signal, wait: Duration) -> (ExitStatus, Duration) {
    let start = Instant::now();
    proxy.signal(sig).unwrap();
    let status = proxy.wait_exit(wait).unwrap_or_else(|| panic!("still running {wait:?} after {sig:?}"));
    (status, start.elapsed())
}

fn assert_stops_at_once(sig: Signal) {
    let echo = TcpEchoBackend::start();
    let mut proxy = start_tcp(&echo, "");
    let mut session = echo_session(proxy.addr("fe1"));
    let (status, took) = stop_with(&mut proxy, sig, Duration::from_secs(3));
    if netutil::testing_haproxy() {
        // COMPAT: HAProxy 2.6 without -W does not catch SIGTERM/SIGINT and dies by the
        // signal; rampart catches them and exits 0, as its command line promises.
        assert_eq!(status.signal(), Some(sig as i32), "{sig:?}");
    } else {
        assert_eq!(status.code(), Some(0), "{sig:?}");
    }
    assert!(took < Duration::from_secs(1), "{sig:?} took {took:?} with a session open");
    assert_ne!(wait_end(&mut session, Duration::from_secs(2)).0, End::Open, "the session dies with the process");
    assert_eq!(probe_echo(proxy.addr("fe1"), Duration::from_secs(1)), Probe::Refused);
}

#[test]
fn sigterm_stops_at_once_with_status_0() {
    assert_stops_at_once(Signal::SIGTERM);
}

#[test]
fn sigint_stops_at_once_with_status_0() {
    assert_stops_at_once(Signal::SIGINT);
}

/// An HTTP proxy in front of a server that answers `/slow` after one second.
fn start_http_slow_server() -> (Running, HttpBackend) {
    let backend = HttpBackend::builder("s1")
        .respond(|req| {
            let reply = Reply::ok().body(format!("done {}", req.path));
            if req.path == "/slow" {
                reply.delay(Duration::from_millis(1000))
            } else {
                reply
            }
        })
        .start();
    let proxy = proxy()
        .listener("fe1")
        .backend("s1", backend.addr())
        .config(
            "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
             timeout http-keep-alive 5s\n\
             listen fe1\n  bind fd@${fe1}\n  server s1 ${s1_addr}:${s1_port}\n",
        )
        .start()
        .unwrap();
    (proxy, backend)
}

#[test]
fn sigusr1_soft_stop_finishes_the_request_in_flight_then_exits() {
    let (mut proxy, backend) = start_http_slow_server();
    let addr = proxy.addr("fe1");
    let mut slow = RawClient::connect(addr).unwrap();
    slow.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    backend.wait_requests(1);

    let stop = Instant::now();
    proxy.signal(Signal::SIGUSR1).unwrap();
    // New connections are refused at once.
    eventually!(netutil::refused(addr), "the listener is still open");
    assert!(stop.elapsed() < Duration::from_millis(800), "listener closed after {:?}", stop.elapsed());
    assert_eq!(proxy.wait_exit(Duration::ZERO), None, "exited with a request in flight");

    // The exchange in flight completes, announcing the close.
    let resp = slow.read_response().unwrap();
    assert_eq!(resp.status, 200);
    assert_eq!(resp.body, b"done /slow");
    assert_eq!(resp.headers.get("connection"), Some("close"), "{resp:?}");
    assert!(slow.is_closed_within(Duration::from_secs(1)));

    let status = proxy.wait_exit(Duration::from_secs(3)).expect("exits once the last exchange ended");
    assert_eq!(status.code(), Some(0));
    assert!(stop.elapsed() >= Duration::from_millis(900), "exited after {:?}", stop.elapsed());
}

#[test]
fn sigusr1_soft_stop_closes_idle_keep_alive_connections_at_once() {
    let (mut proxy, _backend) = start_http_slow_server();
    let mut idle = RawClient::connect(proxy.addr("fe1")).unwrap();
    assert_eq!(idle.get("/fast").unwrap().body, b"done /fast");
    proxy.signal(Signal::SIGUSR1).unwrap();
    // Closed without waiting for timeout http-keep-alive (5 s), and nothing else holds
    // the process.
    assert!(idle.is_closed_within(Duration::from_millis(800)), "idle keep-alive connection left open");
    let status = proxy.wait_exit(Duration::from_secs(1)).expect("exits once the idle connection closed");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn sigusr1_soft_stop_closes_long_idle_keep_alive_connections_too() {
    // Idle for longer than rampart's park delay (500 ms): the connection has left its
    // task for the thread's park set, which must close it on soft stop as well.
    let (mut proxy, _backend) = start_http_slow_server();
    let mut idle = RawClient::connect(proxy.addr("fe1")).unwrap();
    assert_eq!(idle.get("/fast").unwrap().body, b"done /fast");
    std::thread::sleep(Duration::from_millis(800));
    proxy.signal(Signal::SIGUSR1).unwrap();
    assert!(idle.is_closed_within(Duration::from_millis(800)), "long-idle keep-alive connection left open");
    let status = proxy.wait_exit(Duration::from_secs(1)).expect("exits once the idle connection closed");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn sigusr1_soft_stop_waits_for_tcp_sessions() {
    let echo = TcpEchoBackend::start();
    let mut proxy = start_tcp(&echo, "");
    let mut session = echo_session(proxy.addr("fe1"));
    proxy.signal(Signal::SIGUSR1).unwrap();
    eventually!(probe_echo(proxy.addr("fe1"), Duration::from_millis(200)) == Probe::Refused);
    // The established session goes on, and the process waits for it.
    std::thread::sleep(Duration::from_millis(300));
    session.write_all(b"still\n").unwrap();
    assert_eq!(read_exact_within(&mut session, 6, Duration::from_secs(2)).unwrap(), b"still\n");
    assert_eq!(proxy.wait_exit(Duration::ZERO), None);
    drop(session);
    let status = proxy.wait_exit(Duration::from_secs(3)).expect("exits once the session ended");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn hard_stop_after_bounds_the_soft_stop() {
    let echo = TcpEchoBackend::start();
    let mut proxy = start_tcp(&echo, "  hard-stop-after 500ms\n");
    let mut session = echo_session(proxy.addr("fe1"));
    let (status, took) = stop_with(&mut proxy, Signal::SIGUSR1, Duration::from_secs(4));
    assert_eq!(status.code(), Some(0));
    assert!(took >= Duration::from_millis(400), "exited after {took:?}, before hard-stop-after");
    assert!(took < Duration::from_millis(2000), "exited after {took:?}");
    assert_ne!(wait_end(&mut session, Duration::from_secs(2)).0, End::Open);
}

/// SIGTTOU then SIGTTIN on a proxy listening on `addr`, with a session open
/// throughout; `paused` is what a new connection gets meanwhile.
fn pause_and_resume(proxy: &Running, addr: SocketAddr, paused: Probe) {
    let mut session = echo_session(addr);
    proxy.signal(Signal::SIGTTOU).unwrap();
    eventually!(probe_echo(addr, Duration::from_millis(200)) == paused, "not paused after SIGTTOU");
    // Paused, not stopped: established sessions go on.
    session.write_all(b"paused\n").unwrap();
    assert_eq!(read_exact_within(&mut session, 7, Duration::from_secs(2)).unwrap(), b"paused\n");

    proxy.signal(Signal::SIGTTIN).unwrap();
    eventually!(probe_echo(addr, Duration::from_millis(500)) == Probe::Echoed, "not served again after SIGTTIN");
    session.write_all(b"again\n").unwrap();
    assert_eq!(read_exact_within(&mut session, 6, Duration::from_secs(2)).unwrap(), b"again\n");
}

#[test]
fn sigttou_pauses_bound_listeners_until_sigttin() {
    // Listeners bound by the proxy are disconnected: new connections are refused.
    let echo = TcpEchoBackend::start();
    let port = netutil::free_port();
    let proxy = proxy()
        .backend("s1", echo.addr())
        .config(&format!(
            "global\n  nbthread 2\n{}listen fe1\n  bind 127.0.0.1:{port}\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
            netutil::tcp_defaults("")
        ))
        .start()
        .unwrap();
    pause_and_resume(&proxy, SocketAddr::from(([127, 0, 0, 1], port)), Probe::Refused);
}

#[test]
fn sigttou_pauses_inherited_listeners_until_sigttin() {
    // An inherited (fd@) socket is only no longer polled: new connections wait in its
    // backlog, and its port survives the pause.
    let echo = TcpEchoBackend::start();
    let proxy = start_tcp(&echo, "");
    pause_and_resume(&proxy, proxy.addr("fe1"), Probe::Held);
}

#[test]
fn sigttou_then_sigusr1_still_stops() {
    let echo = TcpEchoBackend::start();
    let mut proxy = start_tcp(&echo, "");
    proxy.signal(Signal::SIGTTOU).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let (status, took) = stop_with(&mut proxy, Signal::SIGUSR1, Duration::from_secs(3));
    assert_eq!(status.code(), Some(0));
    assert!(took < Duration::from_secs(1), "took {took:?}");
}

#[test]
fn soft_stop_serves_the_connections_waiting_in_the_backlog() {
    // A connection the kernel completed but the proxy did not accept yet (here: an
    // inherited socket paused by SIGTTOU) is served by the stopping process rather than
    // reset when its listener closes; a reload with -sf loses nothing queued.
    if netutil::testing_haproxy() {
        // COMPAT: HAProxy 2.6 closes the listener with the backlog in it (the client
        // gets a reset).
        return;
    }
    let echo = TcpEchoBackend::start();
    let mut proxy = start_tcp(&echo, "");
    proxy.signal(Signal::SIGTTOU).unwrap();
    eventually!(probe_echo(proxy.addr("fe1"), Duration::from_millis(200)) == Probe::Held, "not paused");
    let mut queued = netutil::connect(proxy.addr("fe1"), Duration::from_secs(2)).unwrap();
    queued.write_all(b"queued\n").unwrap();
    proxy.signal(Signal::SIGUSR1).unwrap();
    assert_eq!(read_exact_within(&mut queued, 7, Duration::from_secs(2)).unwrap(), b"queued\n");
    assert_eq!(proxy.wait_exit(Duration::from_millis(200)), None, "left with a session open");
    drop(queued);
    let status = proxy.wait_exit(Duration::from_secs(3)).expect("exits once the session ended");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn pause_resume_and_soft_stop_report_each_proxy_as_haproxy_does() {
    let backend = HttpBackend::builder("s1").reply(Reply::ok().body("ok")).start();
    let mut proxy = proxy()
        .listener("fe1")
        .backend("s1", backend.addr())
        .config(
            "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
             frontend fe1\n  bind fd@${fe1}\n  default_backend be1\n\
             backend be1\n  server s1 ${s1_addr}:${s1_port}\n",
        )
        .start()
        .unwrap();
    // Two connections (FE), three requests reaching the backend (BE).
    let mut first = RawClient::connect(proxy.addr("fe1")).unwrap();
    assert_eq!(first.get("/a").unwrap().status, 200);
    assert_eq!(first.get("/b").unwrap().status, 200);
    drop(first);
    let mut second = RawClient::connect(proxy.addr("fe1")).unwrap();
    assert_eq!(second.get("/c").unwrap().status, 200);
    drop(second);

    let wait = Duration::from_secs(3);
    let pid = proxy.pid();
    let warning = |msg: &str| format!("[WARNING]  ({pid}) : {msg}\n");
    proxy.signal(Signal::SIGTTOU).unwrap();
    assert!(proxy.wait_output(&warning("Paused frontend fe1."), wait), "{}", proxy.output());
    proxy.signal(Signal::SIGTTIN).unwrap();
    assert!(proxy.wait_output(&warning("Resumed frontend fe1."), wait), "{}", proxy.output());
    assert!(!proxy.output().contains("backend be1."), "only proxies with listeners pause: {}", proxy.output());

    proxy.signal(Signal::SIGUSR1).unwrap();
    assert_eq!(proxy.wait_exit(wait).and_then(|s| s.code()), Some(0));
    let out = proxy.output();
    assert!(out.contains(&warning("Proxy fe1 stopped (cumulated conns: FE: 2, BE: 0).")), "{out}");
    assert!(out.contains(&warning("Proxy be1 stopped (cumulated conns: FE: 0, BE: 3).")), "{out}");
}

#[test]
fn a_closed_stderr_does_not_stop_the_soft_stop() {
    // Started by a script whose output pipe is gone: the warnings printed on SIGUSR1
    // (and the -d traffic lines) fail with EPIPE, which must not crash the process.
    if netutil::testing_haproxy() {
        // COMPAT: haproxy 2.6 -d dies of SIGPIPE writing its startup notes there.
        return;
    }
    let echo = TcpEchoBackend::start();
    let port = netutil::free_port();
    let dir = netutil::Scratch::new("closed-stderr");
    dir.file(
        "c.cfg",
        &format!("{}listen fe1\n  bind 127.0.0.1:{port}\n  server s1 {}\n", netutil::tcp_defaults(""), echo.addr()),
    );
    let mut cmd = std::process::Command::new(netutil::binary());
    cmd.args(["-d", "-f", "c.cfg"]).current_dir(dir.path());
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = rampart_testkit::spawn_guarded(&mut cmd).expect("start the binary");
    // Close the read ends at once: every write of the child now fails.
    drop(child.stdout.take());
    drop(child.stderr.take());
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    eventually!(probe_echo(addr, Duration::from_secs(1)) == Probe::Echoed, "not serving");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), Signal::SIGUSR1).unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "still running after SIGUSR1");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
}
