//! Issue 28's drop-in sweep, the keywords of the connection and accept paths, through
//! the real binary and haproxy 2.6 on the same configuration: `pool-purge-delay` (how
//! long an idle server connection is kept), `max-keep-alive-queue` (a kept-alive
//! client leaves its server for another while streams queue for it), `close-spread-time`
//! (a soft stop closes idle connections over a window, or not at all).

mod http_common;

use std::time::{Duration, Instant};

use http_common::*;
use rampart_testkit::{HttpBackend, RawClient, Reply, Signal};

const GET: &str = "GET / HTTP/1.1\r\nhost: x\r\n\r\n";

// === pool-purge-delay ===

const PURGE_CFG: &str = "\
global\n  nbthread 1\n\
defaults\n  mode http\n  timeout client 10s\n  timeout server 10s\n  timeout connect 1s\n\
listen quick\n  bind fd@${quick}\n  server s1 ${quick_addr}:${quick_port} pool-purge-delay 300ms\n\
listen never\n  bind fd@${never}\n  server s1 ${never_addr}:${never_port} pool-purge-delay 0\n\
listen usual\n  bind fd@${usual}\n  default-server pool-purge-delay 20s\n  server s1 ${usual_addr}:${usual_port}\n";

/// Sends one request to `listener` and returns how long its server connection then
/// stayed open (`None`: still open after `limit`), and the client connection.
fn idle_lifetime(
    proxy: &rampart_testkit::Running,
    listener: &str,
    be: &HttpBackend,
    limit: Duration,
) -> (Option<Duration>, RawClient) {
    let mut c = RawClient::connect(proxy.addr(listener)).unwrap();
    c.send(GET.as_bytes()).unwrap();
    let resp = c.read_response().unwrap();
    assert_eq!(resp.status, 200, "{listener}");
    let start = Instant::now();
    (be.wait_idle(limit).then(|| start.elapsed()), c)
}

#[test]
fn pool_purge_delay_bounds_how_long_idle_server_connections_stay() {
    for bin in binaries("pool_purge_delay_bounds_how_long_idle_server_connections_stay") {
        let who = name(&bin);
        let backends: Vec<_> = ["quick", "never", "usual"].iter().map(|n| HttpBackend::start(n)).collect();
        let addrs: Vec<_> = backends.iter().map(|b| (b.name(), b.addr())).collect();
        let proxy = start_with(&bin, PURGE_CFG, &["quick", "never", "usual"], &addrs);
        // 0: the connection is not kept at all
        let (never, _) = idle_lifetime(&proxy, "never", &backends[1], Duration::from_secs(2));
        assert!(never.is_some_and(|d| d < Duration::from_millis(250)), "{who}: pool-purge-delay 0 kept it {never:?}");
        // 300ms: closed after one to a few purge rounds (HAProxy keeps a lone connection
        // up to three rounds, as it first estimates the server needs it)
        let (quick, _) = idle_lifetime(&proxy, "quick", &backends[0], Duration::from_secs(3));
        assert!(
            quick.is_some_and(|d| d >= Duration::from_millis(250) && d < Duration::from_millis(1500)),
            "{who}: pool-purge-delay 300ms closed it after {quick:?}"
        );
        // 20s (from default-server): still there well after the others
        let (usual, mut c) = idle_lifetime(&proxy, "usual", &backends[2], Duration::from_millis(1500));
        assert_eq!(usual, None, "{who}: pool-purge-delay 20s closed it");
        // and reused by the client's next request
        c.send(GET.as_bytes()).unwrap();
        assert_eq!(c.read_response().unwrap().status, 200);
        assert_eq!(backends[2].connections(), 1, "{who}: the idle connection was reused");
    }
}

// === max-keep-alive-queue ===

const KA_QUEUE_CFG: &str = "\
global\n  nbthread 1\n\
defaults\n  mode http\n  timeout client 10s\n  timeout server 10s\n  timeout connect 1s\n  timeout queue 8s\n\
  balance first\n  http-reuse never\n  option prefer-last-server\n\
listen limited\n  bind fd@${limited}\n  max-keep-alive-queue 0\n  use-server a1 if { req.hdr(x-first) -m found }\n\
  server a1 ${a1_addr}:${a1_port} maxconn 1\n  server a2 ${a2_addr}:${a2_port}\n\
listen unlimited\n  bind fd@${unlimited}\n  use-server b1 if { req.hdr(x-first) -m found }\n\
  server b1 ${b1_addr}:${b1_port} maxconn 1\n  server b2 ${b2_addr}:${b2_port}\n";

/// A server answering its name, after 1.5 s for `/slow`.
fn named_server(name: &str) -> HttpBackend {
    let body = name.to_owned();
    HttpBackend::builder(name)
        .respond(move |r| {
            let reply = Reply::ok().body(body.clone());
            if r.path == "/slow" {
                reply.delay(Duration::from_millis(1500))
            } else {
                reply
            }
        })
        .start()
}

/// Sends `req` on a new connection to `addr` from another thread; the answering
/// server's name comes back through the handle.
fn in_background(addr: std::net::SocketAddr, req: &'static str) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut c = RawClient::connect(addr).unwrap();
        c.send(req.as_bytes()).unwrap();
        c.read_response().map(|r| r.body_str()).unwrap_or_else(|e| format!("error: {e}"))
    })
}

/// Client A talks to `listener` (the first server answers), then while the first
/// server is busy and one more stream waits in its queue, A sends another request:
/// the server that answers it.
fn server_after_queue(proxy: &rampart_testkit::Running, listener: &str) -> (String, String, Vec<String>) {
    let addr = proxy.addr(listener);
    let mut a = RawClient::connect(addr).unwrap();
    a.send(GET.as_bytes()).unwrap();
    let first = a.read_response().unwrap().body_str();
    let slow = in_background(addr, "GET /slow HTTP/1.1\r\nhost: x\r\nx-first: 1\r\n\r\n");
    std::thread::sleep(Duration::from_millis(300));
    let queued = in_background(addr, "GET / HTTP/1.1\r\nhost: x\r\nx-first: 1\r\n\r\n");
    std::thread::sleep(Duration::from_millis(300));
    a.send(GET.as_bytes()).unwrap();
    let second = a.read_response().map(|r| r.body_str()).unwrap_or_else(|e| format!("error: {e}"));
    drop(a);
    let others = [slow, queued].into_iter().map(|h| h.join().unwrap()).collect();
    (first, second, others)
}

#[test]
fn max_keep_alive_queue_moves_a_kept_alive_client_off_a_queued_server() {
    for bin in binaries("max_keep_alive_queue_moves_a_kept_alive_client_off_a_queued_server") {
        let who = name(&bin);
        let backends: Vec<_> = ["a1", "a2", "b1", "b2"].iter().map(|n| named_server(n)).collect();
        let addrs: Vec<_> = backends.iter().map(|b| (b.name(), b.addr())).collect();
        let proxy = start_with(&bin, KA_QUEUE_CFG, &["limited", "unlimited"], &addrs);
        // 0: a kept-alive request is never queued, it goes to the other server
        let (first, second, others) = server_after_queue(&proxy, "limited");
        assert_eq!((first.as_str(), second.as_str()), ("a1", "a2"), "{who}: max-keep-alive-queue 0");
        assert_eq!(others, ["a1", "a1"], "{who}: the streams bound to a1");
        // no limit: the client stays with its server
        let (first, second, others) = server_after_queue(&proxy, "unlimited");
        assert_eq!((first.as_str(), second.as_str()), ("b1", "b1"), "{who}: no max-keep-alive-queue");
        assert_eq!(others, ["b1", "b1"], "{who}: the streams bound to b1");
    }
}

// === close-spread-time ===

fn spread_cfg(spread: &str) -> String {
    format!(
        "global\n  nbthread 1\n  hard-stop-after 10s\n  close-spread-time {spread}\n\
         defaults\n  mode http\n  timeout client 10s\n  timeout server 10s\n  timeout connect 1s\n\
         \x20 timeout http-keep-alive 10s\n\
         frontend fe\n  bind fd@${{fe}}\n  http-request return status 200 content-type text/plain string ok\n"
    )
}

/// `n` kept-alive client connections to listener `fe`, each after one answered request.
fn idle_clients(proxy: &rampart_testkit::Running, n: usize) -> Vec<RawClient> {
    (0..n)
        .map(|_| {
            let mut c = RawClient::connect(proxy.addr("fe")).unwrap();
            c.send(GET.as_bytes()).unwrap();
            assert_eq!(c.read_response().unwrap().status, 200);
            c
        })
        .collect()
}

#[test]
fn close_spread_time_spreads_the_idle_closes_of_a_soft_stop() {
    for bin in binaries("close_spread_time_spreads_the_idle_closes_of_a_soft_stop") {
        let who = name(&bin);
        let proxy = start_with(&bin, &spread_cfg("2s"), &["fe"], &[]);
        let clients = idle_clients(&proxy, 10);
        let t0 = Instant::now();
        proxy.signal(Signal::SIGUSR1).unwrap();
        let waits: Vec<_> = clients
            .into_iter()
            .map(|mut c| std::thread::spawn(move || c.is_closed_within(Duration::from_secs(5)).then(|| t0.elapsed())))
            .collect();
        let mut closed: Vec<Duration> =
            waits.into_iter().map(|w| w.join().unwrap().expect("closed within the window")).collect();
        closed.sort();
        let ms: Vec<u128> = closed.iter().map(Duration::as_millis).collect();
        // all within the window (and a little), not all at once: some in each half
        assert!(ms[9] < 2600, "{who}: {ms:?}");
        assert!(ms[0] < 1000 && ms[9] > 1000, "{who}: not spread over the 2 s: {ms:?}");
        assert!(ms[9] - ms[0] > 500, "{who}: not spread: {ms:?}");
    }
}

#[test]
fn close_spread_time_infinite_keeps_connections_through_a_soft_stop() {
    for bin in binaries("close_spread_time_infinite_keeps_connections_through_a_soft_stop") {
        let who = name(&bin);
        let proxy = start_with(&bin, &spread_cfg("infinite"), &["fe"], &[]);
        let mut clients = idle_clients(&proxy, 2);
        proxy.signal(Signal::SIGUSR1).unwrap();
        std::thread::sleep(Duration::from_millis(800));
        for c in &mut clients {
            assert!(!c.is_closed_within(Duration::from_millis(100)), "{who}: an idle connection was closed");
            // the next response keeps the connection alive, no close announced
            c.send(GET.as_bytes()).unwrap();
            let res = c.read_response().unwrap();
            assert_eq!(res.status, 200, "{who}");
            assert_eq!(res.headers.get("connection"), None, "{who}: the response announces a close");
            assert!(!c.is_closed_within(Duration::from_millis(300)), "{who}: closed after the response");
        }
    }
}
