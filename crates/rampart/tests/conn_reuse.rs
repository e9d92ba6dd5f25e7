//! Idle server connections shared by the threads (a thread takes over another's idle
//! connection when it has none of its own) and kept apart by what they were opened for
//! (here the destination a `set-dst-port` rule chose for a port-less server).
//! `RAMPART_TEST_BINARY=/usr/sbin/haproxy` runs the tests that hold for haproxy too.

mod http_common;

use std::time::Duration;

use http_common::{client, listen_cfg, start};
use rampart_testkit::{HttpBackend, RawClient, Request};

/// [`listen_cfg`] with two threads.
fn two_threads(extra_defaults: &str, listen_lines: &str, servers: &[&str]) -> String {
    listen_cfg(extra_defaults, listen_lines, servers).replace("  nbthread 1\n", "  nbthread 2\n")
}

/// Client connections opened one after the other, one request each.
const CLIENTS: usize = 30;

/// Runs [`CLIENTS`] clients one after the other against `cfg` and returns how many
/// connections the server accepted.
fn server_conns_for_clients(cfg: &str) -> u64 {
    assert!(cfg.contains("nbthread 2"));
    let s1 = HttpBackend::start("s1");
    let proxy = start(cfg, &[("s1", s1.addr())]);
    for i in 0..CLIENTS {
        let mut c = client(&proxy);
        assert_eq!(c.get(&format!("/{i}")).unwrap().status, 200);
        drop(c);
        std::thread::sleep(Duration::from_millis(5));
    }
    s1.wait_requests(CLIENTS);
    s1.connections()
}

#[test]
fn clients_on_any_thread_reuse_the_one_idle_connection() {
    // the clients land on both threads; the connection goes from one to the other
    assert_eq!(server_conns_for_clients(&two_threads("  http-reuse always\n", "", &["s1"])), 1);
}

#[test]
fn without_sharing_each_thread_keeps_its_own_connection() {
    let cfg =
        two_threads("  http-reuse always\n", "", &["s1"]).replace("global\n", "global\n  tune.idle-pool.shared off\n");
    assert_eq!(server_conns_for_clients(&cfg), 2);
}

/// Sends a request for destination port `port` (`x-port`) and returns the name of the
/// backend that answered (its body).
fn via_port(c: &mut RawClient, port: u16) -> String {
    c.send(format!("GET / HTTP/1.1\r\nHost: a\r\nx-port: {port}\r\n\r\n")).unwrap();
    let res = c.read_response().unwrap();
    assert_eq!(res.status, 200);
    String::from_utf8_lossy(&res.body).into_owned()
}

/// Sends five requests on one client connection, for destinations d1 d1 d2 d1 d2 of a
/// port-less server, with `http-reuse <reuse>`; returns the requests d1 and d2 saw.
fn by_destination(reuse: &str) -> (Vec<Request>, Vec<Request>) {
    let (d1, d2) = (HttpBackend::start("d1"), HttpBackend::start("d2"));
    let rules = "  http-request set-dst-port hdr(x-port)\n  server s ${d1_addr}:0\n";
    // haproxy keeps idle no more connections than recently in use, plus `pool-low-conn`
    let cfg = listen_cfg(&format!("  http-reuse {reuse}\n  default-server pool-low-conn 2\n"), rules, &[]);
    let proxy = start(&cfg, &[("d1", d1.addr()), ("d2", d2.addr())]);
    let (p1, p2) = (d1.addr().port(), d2.addr().port());
    let mut c = client(&proxy);
    for (port, name) in [(p1, "d1"), (p1, "d1"), (p2, "d2"), (p1, "d1"), (p2, "d2")] {
        assert_eq!(via_port(&mut c, port), name, "http-reuse {reuse}");
    }
    (d1.wait_requests(3), d2.wait_requests(2))
}

#[test]
fn requests_reach_the_destination_they_chose() {
    for reuse in ["safe", "always", "aggressive", "never"] {
        let (r1, r2) = by_destination(reuse);
        assert_eq!((r1.len(), r2.len()), (3, 2), "http-reuse {reuse}");
    }
}

#[test]
fn idle_connections_are_reused_per_destination() {
    let conns = |r: &[Request]| r.iter().map(|r| r.conn).collect::<Vec<_>>();
    for reuse in ["safe", "always"] {
        let (r1, r2) = by_destination(reuse);
        assert_eq!((conns(&r1), conns(&r2)), (vec![1, 1, 1], vec![1, 1]), "http-reuse {reuse}");
    }
}
