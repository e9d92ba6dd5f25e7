//! Server queues through the real binary: a slow server at `maxconn 2` with fifty
//! clients (all served, in arrival order, never more than two at once), `timeout
//! queue`, `maxqueue` on a server a rule chose, `minconn`/`fullconn`, the priority
//! actions, and retries with `option redispatch` against a dead server.

mod http_common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use http_common::{binary, start_binary, PREAMBLE};
use rampart_testkit::{closed_port, HttpBackend, RawClient, Reply, Running};

/// A server answering each request after `hold`, that records the most requests it
/// ever had in hand at once.
struct Slow {
    backend: HttpBackend,
    peak: Arc<AtomicUsize>,
}

fn slow(name: &str, hold: Duration) -> Slow {
    let busy = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (b, p) = (busy.clone(), peak.clone());
    let backend = HttpBackend::builder(name)
        .respond(move |_| {
            let now = b.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(now, Ordering::SeqCst);
            thread::sleep(hold);
            b.fetch_sub(1, Ordering::SeqCst);
            Reply::ok().body("ok")
        })
        .start();
    Slow { backend, peak }
}

fn start(lines: &str, servers: &[(&str, SocketAddr, &str)]) -> Running {
    let mut cfg = format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n{lines}");
    for (name, _, opts) in servers {
        cfg.push_str(&format!("  server {name} ${{{name}_addr}}:${{{name}_port}} {opts}\n"));
    }
    let addrs: Vec<(&str, SocketAddr)> = servers.iter().map(|(n, a, _)| (*n, *a)).collect();
    start_binary(binary(), &cfg, &addrs)
}

/// Sends `GET path` with `hdrs` on a new connection, without reading the answer.
fn send(proxy: &Running, path: &str, hdrs: &str) -> RawClient {
    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    c.send(format!("GET {path} HTTP/1.1\r\nHost: t\r\n{hdrs}Connection: close\r\n\r\n")).unwrap();
    c
}

/// Reads each client's status, in parallel (each answer may take seconds).
fn statuses(clients: Vec<RawClient>) -> Vec<u16> {
    let readers: Vec<_> =
        clients.into_iter().map(|mut c| thread::spawn(move || c.read_response().map_or(0, |r| r.status))).collect();
    readers.into_iter().map(|h| h.join().unwrap_or(0)).collect()
}

#[test]
fn fifty_clients_on_two_slots_are_all_served_in_arrival_order() {
    let s1 = slow("s1", Duration::from_millis(40));
    let proxy = start("  timeout queue 30s\n", &[("s1", s1.backend.addr(), "maxconn 2")]);
    let clients: Vec<RawClient> = (0..50)
        .map(|i| {
            let c = send(&proxy, &format!("/{i}"), "");
            // each request reaches the queue before the next one is sent
            thread::sleep(Duration::from_millis(15));
            c
        })
        .collect();
    let got = statuses(clients);
    assert!(got.iter().all(|&s| s == 200), "{got:?}");
    let order: Vec<usize> =
        s1.backend.requests().into_iter().filter_map(|r| r.path.trim_start_matches('/').parse().ok()).collect();
    assert_eq!(order.len(), 50);
    // two streams dispatched together reach the server in either order (on haproxy
    // too): no stream may pass more than one that came before it
    let displaced: Vec<(usize, usize)> =
        order.iter().enumerate().filter(|&(pos, &i)| pos.abs_diff(i) > 1).map(|(p, &i)| (p, i)).collect();
    assert!(displaced.is_empty(), "served out of arrival order: {order:?}");
    assert_eq!(s1.peak.load(Ordering::SeqCst), 2, "maxconn 2 exceeded or never reached");
}

#[test]
fn a_stream_queued_past_timeout_queue_gets_503_and_the_others_are_served() {
    let s1 = slow("s1", Duration::from_millis(400));
    let proxy = start("  timeout queue 200ms\n", &[("s1", s1.backend.addr(), "maxconn 2")]);
    let clients: Vec<RawClient> = (0..4).map(|i| send(&proxy, &format!("/{i}"), "")).collect();
    let t = Instant::now();
    let mut got = statuses(clients);
    got.sort_unstable();
    assert_eq!(got, [200, 200, 503, 503]);
    assert!(t.elapsed() < Duration::from_secs(3));
    assert_eq!(s1.backend.requests().len(), 2, "a timed-out stream never reaches the server");
}

#[test]
fn the_priority_class_serves_urgent_streams_first() {
    let s1 = slow("s1", Duration::from_millis(150));
    let lines = "  timeout queue 30s\n  http-request set-priority-class int(-10) if { req.hdr(x-urgent) -m found }\n\
                 http-request set-priority-offset int(-1000) if { path /early }\n";
    let proxy = start(lines, &[("s1", s1.backend.addr(), "maxconn 1")]);
    let mut clients = vec![send(&proxy, "/first", "")];
    thread::sleep(Duration::from_millis(50));
    for (path, hdrs) in [("/plain", ""), ("/early", ""), ("/urgent", "X-Urgent: 1\r\n")] {
        clients.push(send(&proxy, path, hdrs));
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(statuses(clients), [200; 4]);
    let paths: Vec<String> = s1.backend.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/first", "/urgent", "/early", "/plain"]);
}

#[test]
fn maxqueue_refuses_a_stream_bound_to_a_full_server() {
    let s1 = slow("s1", Duration::from_millis(400));
    let s2 = slow("s2", Duration::from_millis(1));
    let lines = "  timeout queue 5s\n  use-server s1 if { path_beg /s1 }\n";
    let proxy = start(lines, &[("s1", s1.backend.addr(), "maxconn 1 maxqueue 1"), ("s2", s2.backend.addr(), "")]);
    let busy = send(&proxy, "/s1/a", "");
    thread::sleep(Duration::from_millis(100));
    let queued = send(&proxy, "/s1/b", "");
    thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    let refused = statuses(vec![send(&proxy, "/s1/c", "")]);
    assert_eq!(refused, [503], "the third stream finds the queue full");
    assert!(t.elapsed() < Duration::from_millis(300), "refused at once, not after a wait");
    assert_eq!(statuses(vec![busy, queued]), [200, 200]);
    assert!(s2.backend.requests().is_empty());
}

#[test]
fn maxqueue_with_redispatch_lets_the_balancer_choose() {
    let s1 = slow("s1", Duration::from_millis(400));
    let s2 = slow("s2", Duration::from_millis(1));
    let lines = "  option redispatch\n  timeout queue 5s\n  use-server s1 if { path_beg /s1 }\n";
    let proxy = start(lines, &[("s1", s1.backend.addr(), "maxconn 1 maxqueue 1"), ("s2", s2.backend.addr(), "")]);
    let busy = send(&proxy, "/s1/a", "");
    thread::sleep(Duration::from_millis(100));
    let queued = send(&proxy, "/s1/b", "");
    thread::sleep(Duration::from_millis(100));
    assert_eq!(statuses(vec![send(&proxy, "/s1/c", "")]), [200]);
    assert_eq!(statuses(vec![busy, queued]), [200, 200]);
    let on_s2: Vec<String> = s2.backend.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(on_s2, ["/s1/c"]);
}

#[test]
fn minconn_limits_a_server_while_the_backend_is_quiet() {
    // fullconn 100: with about ten streams in the backend, the limit is
    // max(minconn 2, 10 * 20 / 100) = 2; it is 20 only at 100 streams
    let s1 = slow("s1", Duration::from_millis(300));
    let proxy = start("  fullconn 100\n  timeout queue 10s\n", &[("s1", s1.backend.addr(), "minconn 2 maxconn 20")]);
    let clients: Vec<RawClient> = (0..10).map(|i| send(&proxy, &format!("/{i}"), "")).collect();
    assert_eq!(statuses(clients), [200; 10]);
    assert_eq!(s1.peak.load(Ordering::SeqCst), 2);
}

#[test]
fn retries_with_redispatch_hide_a_dead_server() {
    let s2 = HttpBackend::start("s2");
    let dead = closed_port();
    let lines = "  balance roundrobin\n  retries 2\n  option redispatch\n";
    let proxy = start(lines, &[("s1", dead, ""), ("s2", s2.addr(), "")]);
    let got: Vec<u16> = (0..20).flat_map(|i| statuses(vec![send(&proxy, &format!("/{i}"), "")])).collect();
    assert_eq!(got, [200; 20], "no client sees the dead server");
    assert_eq!(s2.requests().len(), 20);
}
