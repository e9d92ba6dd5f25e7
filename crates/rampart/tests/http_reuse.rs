//! Server connection reuse (`http-reuse`) across client connections, and what happens
//! when an idle server connection dies: a request is never lost to a connection the
//! server closed while it was idle.

mod http_common;

use std::thread;
use std::time::Duration;

use http_common::{client, listen_cfg, start};
use rampart_testkit::{HttpBackend, RawBackend, Step};

/// Requests' server connection ids, in arrival order.
fn conn_ids(be: &HttpBackend, n: usize) -> Vec<u64> {
    be.wait_requests(n).iter().map(|r| r.conn).collect()
}

#[test]
fn safe_reuse_lets_the_next_client_take_an_idle_connection() {
    // COMPAT: haproxy's `http-reuse safe` always opens a new connection for the first
    // request of a client connection; rampart lets a replayable first request take an
    // idle one and replays it on a new connection if the idle one fails (see
    // reuse_policy in rampart's stream/mod.rs).
    rampart_only!();
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    for _ in 0..3 {
        let mut c = client(&proxy);
        assert_eq!(c.get("/").unwrap().status, 200);
    }
    assert_eq!(conn_ids(&s1, 3), [1, 1, 1]);
}

#[test]
fn aggressive_reuse_lets_a_first_request_take_a_connection_used_twice() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("  http-reuse aggressive\n", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c1 = client(&proxy);
    c1.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx").unwrap();
    assert_eq!(c1.read_response().unwrap().status, 200);
    let mut c2 = client(&proxy);
    c2.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx").unwrap();
    assert_eq!(c2.read_response().unwrap().status, 200, "used once: not taken by a first request");
    assert_eq!(c1.get("/").unwrap().status, 200);
    drop(c1);
    thread::sleep(Duration::from_millis(50));
    let mut c3 = client(&proxy);
    c3.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx").unwrap();
    assert_eq!(c3.read_response().unwrap().status, 200);
    let ids = conn_ids(&s1, 4);
    assert_eq!(ids[..2], [1, 2], "{ids:?}");
    assert!(ids[3] <= 2, "a connection used twice is taken by a first request: {ids:?}");
}

#[test]
fn safe_reuse_sends_a_first_post_on_a_new_connection() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c1 = client(&proxy);
    assert_eq!(c1.get("/").unwrap().status, 200);
    let mut c2 = client(&proxy);
    c2.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx").unwrap();
    assert_eq!(c2.read_response().unwrap().status, 200);
    // Its next request may use any idle connection.
    assert_eq!(c2.get("/").unwrap().status, 200);
    let ids = conn_ids(&s1, 3);
    assert_eq!(ids[..2], [1, 2], "the first POST of a client is not sent on an idle connection");
}

#[test]
fn never_keeps_one_server_connection_per_client() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("  http-reuse never\n", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c1 = client(&proxy);
    let mut c2 = client(&proxy);
    for _ in 0..2 {
        assert_eq!(c1.get("/1").unwrap().status, 200);
        assert_eq!(c2.get("/2").unwrap().status, 200);
    }
    let seen = s1.wait_requests(4);
    let by_client = |path: &str| seen.iter().filter(|r| r.path == path).map(|r| r.conn).collect::<Vec<_>>();
    let (one, two) = (by_client("/1"), by_client("/2"));
    assert!(one[0] == one[1] && two[0] == two[1] && one[0] != two[0], "{one:?} {two:?}");
    // A third client does not get the others' connections, even once they are idle.
    let mut c3 = client(&proxy);
    assert_eq!(c3.get("/3").unwrap().status, 200);
    assert_eq!(s1.connections(), 3);
}

#[test]
fn always_lets_any_request_take_an_idle_connection() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("  http-reuse always\n", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c1 = client(&proxy);
    assert_eq!(c1.get("/").unwrap().status, 200);
    drop(c1);
    let mut c2 = client(&proxy);
    c2.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx").unwrap();
    assert_eq!(c2.read_response().unwrap().status, 200);
    assert_eq!(conn_ids(&s1, 2), [1, 1]);
}

#[test]
fn an_idle_connection_closed_by_the_server_is_not_used() {
    // The server closes each connection 100 ms after its response, while it is idle.
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
        Step::sleep_ms(100),
        Step::ShutdownWrite,
    ]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    assert_eq!(c.get("/1").unwrap().status, 200);
    thread::sleep(Duration::from_millis(300));
    assert_eq!(c.get("/2").unwrap().status, 200);
    // What each connection received: the dead one must not have been written to (a
    // transparent retry on a new connection would hide that from the client).
    let conns = s1.wait_finished(1);
    assert_eq!(conns.len(), 2, "{conns:?}");
    assert_eq!(conns[0].received_str(), "GET /1 HTTP/1.1\r\nhost: rampart.test\r\n\r\n", "{conns:?}");
    assert!(conns[0].finished, "{conns:?}");
    assert!(conns[1].received_str().starts_with("GET /2 HTTP/1.1\r\nhost: rampart.test\r\n\r\n"), "{conns:?}");
    assert!(!conns[1].received_str().contains("GET /1"), "{conns:?}");
}

#[test]
fn a_reused_connection_failing_before_the_response_is_replaced() {
    // The server answers the first request of each connection and closes without
    // answering the second: that request must be sent again on a new connection.
    // COMPAT: haproxy 2.6 closes the client connection without an answer instead (a
    // browser then retries); rampart replays the request when it can (reuse_policy in
    // rampart's stream/mod.rs).
    rampart_only!();
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
        Step::expect_head(),
        Step::Close,
    ]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    assert_eq!(c.get("/1").unwrap().status, 200);
    assert_eq!(c.get("/2").unwrap().body, b"ok");
    let conns = s1.connections();
    assert_eq!(conns.len(), 2);
    assert!(conns[1].received.starts_with(b"GET /2 HTTP/1.1\r\n"), "{conns:?}");
}

#[test]
fn idle_server_connections_closed_by_the_server_are_released() {
    // The server closes its side of the idle connection: the proxy closes its own
    // promptly instead of keeping a half-closed socket in its pool.
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
        Step::sleep_ms(50),
    ]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    assert_eq!(c.get("/").unwrap().status, 200);
    assert!(s1.wait_idle(Duration::from_millis(1000)), "the proxy kept the closed connection");
    assert_eq!(s1.connections()[0].error, None);
}

#[test]
fn pool_max_conn_bounds_the_idle_connections_kept() {
    // `pool-max-conn 0`: no connection is kept for another client; 1: one is.
    for (max, expected) in [(0, [1, 2]), (1, [1, 1])] {
        let s1 = HttpBackend::start("s1");
        let extra = format!("  http-reuse always\n  default-server pool-max-conn {max}\n");
        let proxy = start(&listen_cfg(&extra, "", &["s1"]), &[("s1", s1.addr())]);
        for _ in 0..2 {
            let mut c = client(&proxy);
            assert_eq!(c.get("/").unwrap().status, 200);
        }
        assert_eq!(conn_ids(&s1, 2), expected, "pool-max-conn {max}");
    }
}
