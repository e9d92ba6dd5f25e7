//! Header rewriting on the way through: names arrive lowercased on both sides,
//! hop-by-hop headers stop at the proxy, and `option forwardfor` adds the client
//! address (with `except`, `header` and `if-none`).
//!
//! COMPAT: haproxy 2.6 forwards the headers named by `Connection`, `Keep-Alive`,
//! `Proxy-Connection`, `TE` and a non-upgrading `Upgrade`; rampart removes them as RFC
//! 9110 §7.6.1 asks of a proxy (see the COMPAT note in rampart's http/mod.rs). Those
//! tests are skipped when the suite runs against haproxy.

mod http_common;

use http_common::{client, listen_cfg, show, start};
use rampart_testkit::{HttpBackend, RawBackend, Reply, Step};

#[test]
fn header_names_arrive_lowercased_values_untouched() {
    let s1 = HttpBackend::builder("s1")
        .reply(Reply::ok().header("X-Mixed-CASE", "Value With Case").header("SET-COOKIE", "A=B").body("ok"))
        .start();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("GET /Path?Q=V HTTP/1.1\r\nHOST: Example.COM\r\nX-Foo-BAR: MiXeD\r\nAccept:  */*  \r\n\r\n").unwrap();
    let resp = c.read_response().unwrap();
    assert_eq!(
        show(&resp.raw),
        "HTTP/1.1 200 OK\r\nx-mixed-case: Value With Case\r\nset-cookie: A=B\r\ncontent-length: 2\r\n\r\nok"
    );
    // Order and values are kept; surrounding blanks of a value are not part of it.
    assert_eq!(
        s1.wait_requests(1)[0].raw_head_str(),
        "GET /Path?Q=V HTTP/1.1\r\nhost: Example.COM\r\nx-foo-bar: MiXeD\r\naccept: */*\r\n\r\n"
    );
}

#[test]
fn hop_by_hop_request_headers_are_not_forwarded() {
    rampart_only!();
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send(
        "GET / HTTP/1.1\r\nHost: a\r\nConnection: X-Private, keep-alive\r\nX-Private: secret\r\n\
         Keep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\nTE: trailers\r\nUpgrade: h2c\r\n\
         X-Kept: 1\r\n\r\n",
    )
    .unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
    // `TE: trailers` is the one kept, as HAProxy does (its value normalized).
    assert_eq!(s1.wait_requests(1)[0].raw_head_str(), "GET / HTTP/1.1\r\nhost: a\r\nte: trailers\r\nx-kept: 1\r\n\r\n");
}

#[test]
fn hop_by_hop_response_headers_are_not_forwarded() {
    rampart_only!();
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send(
            "HTTP/1.1 200 OK\r\nConnection: X-Server-Private\r\nX-Server-Private: 1\r\n\
             Keep-Alive: timeout=30, max=100\r\nUpgrade: h2c\r\nX-Kept: 2\r\nContent-Length: 2\r\n\r\nok",
        ),
    ]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    let resp = c.get("/").unwrap();
    assert_eq!(show(&resp.raw), "HTTP/1.1 200 OK\r\nx-kept: 2\r\ncontent-length: 2\r\n\r\nok");
}

#[test]
fn connection_cannot_remove_framing_or_host() {
    rampart_only!();
    // `Connection` tokens naming end-to-end essentials do not make them disappear.
    let s1 = HttpBackend::builder("s1").respond(|req| Reply::ok().body(req.body.clone())).start();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("POST / HTTP/1.1\r\nHost: a\r\nConnection: content-length, host\r\nContent-Length: 3\r\n\r\nabc").unwrap();
    assert_eq!(c.read_response().unwrap().body, b"abc");
    assert_eq!(show(&s1.wait_requests(1)[0].raw), "POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 3\r\n\r\nabc");
}

#[test]
fn forwardfor_adds_the_client_address() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("", "  option forwardfor\n", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    // An address from the client is kept; the proxy's own line comes last.
    c.send("GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 10.0.0.1\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
    c.send("GET /2 HTTP/1.0\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
    let seen = s1.wait_requests(2);
    assert_eq!(
        seen[0].raw_head_str(),
        "GET / HTTP/1.1\r\nhost: a\r\nx-forwarded-for: 10.0.0.1\r\nx-forwarded-for: 127.0.0.1\r\n\r\n"
    );
    assert_eq!(
        seen[1].raw_head_str(),
        "GET /2 HTTP/1.0\r\nhost: a\r\nx-forwarded-for: 127.0.0.1\r\nconnection: keep-alive\r\n\r\n"
    );
}

#[test]
fn forwardfor_except_skips_matching_clients() {
    let s1 = HttpBackend::start("s1");
    // The client is 127.0.0.1: inside the first network, outside the second.
    let cfg = format!(
        "{}listen fe2\n  bind fd@${{fe2}}\n  option forwardfor except 10.0.0.0/8\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        listen_cfg("", "  option forwardfor except 127.0.0.0/8\n", &["s1"])
    );
    let proxy = rampart_testkit::Proxy::new(http_common::binary())
        .listener("fe1")
        .listener("fe2")
        .backend("s1", s1.addr())
        .config(&cfg)
        .start()
        .unwrap();
    assert_eq!(rampart_testkit::http_get(proxy.addr("fe1"), "/excepted").status, 200);
    assert_eq!(rampart_testkit::http_get(proxy.addr("fe2"), "/added").status, 200);
    let seen = s1.wait_requests(2);
    assert_eq!(seen[0].raw_head_str(), "GET /excepted HTTP/1.1\r\nhost: rampart.test\r\n\r\n");
    assert_eq!(
        seen[1].raw_head_str(),
        "GET /added HTTP/1.1\r\nhost: rampart.test\r\nx-forwarded-for: 127.0.0.1\r\n\r\n"
    );
}

#[test]
fn forwardfor_header_and_if_none() {
    let s1 = HttpBackend::start("s1");
    let cfg = listen_cfg("", "  option forwardfor header X-Client-IP if-none\n", &["s1"]);
    let proxy = start(&cfg, &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    // No such header yet: added, name lowercased like every other.
    assert_eq!(c.get("/none").unwrap().status, 200);
    // Already there (any case): left alone, nothing added.
    c.send("GET /present HTTP/1.1\r\nHost: a\r\nx-client-ip: 192.0.2.7\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
    let seen = s1.wait_requests(2);
    assert_eq!(seen[0].raw_head_str(), "GET /none HTTP/1.1\r\nhost: rampart.test\r\nx-client-ip: 127.0.0.1\r\n\r\n");
    assert_eq!(seen[1].raw_head_str(), "GET /present HTTP/1.1\r\nhost: a\r\nx-client-ip: 192.0.2.7\r\n\r\n");
}

#[test]
fn forwardfor_in_the_backend_applies_too() {
    let s1 = HttpBackend::start("s1");
    let cfg = format!(
        "{}frontend fe1\n  bind fd@${{fe1}}\n  default_backend be\n\
         backend be\n  option forwardfor\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        http_common::PREAMBLE
    );
    let proxy = start(&cfg, &[("s1", s1.addr())]);
    assert_eq!(rampart_testkit::http_get(proxy.addr("fe1"), "/").status, 200);
    assert_eq!(s1.wait_requests(1)[0].headers.get("x-forwarded-for"), Some("127.0.0.1"));
}

#[test]
fn forwardfor_of_frontend_and_backend_combine_as_in_haproxy() {
    let s1 = HttpBackend::start("s1");
    // The backend's header name wins; the frontend's `except` still applies (fe2); the
    // backend's "always add" overrides the frontend's `if-none` (fe1).
    let cfg = format!(
        "{}frontend fe1\n  bind fd@${{fe1}}\n  option forwardfor header X-Front if-none\n  default_backend be\n\
         frontend fe2\n  bind fd@${{fe2}}\n  option forwardfor except 127.0.0.1/32\n  default_backend be\n\
         backend be\n  option forwardfor header X-Back\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        http_common::PREAMBLE
    );
    let proxy = rampart_testkit::Proxy::new(http_common::binary())
        .listener("fe1")
        .listener("fe2")
        .backend("s1", s1.addr())
        .config(&cfg)
        .start()
        .unwrap();
    let mut c = rampart_testkit::RawClient::connect(proxy.addr("fe1")).unwrap();
    c.send("GET /1 HTTP/1.1\r\nHost: a\r\nX-Back: 192.0.2.1\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
    assert_eq!(rampart_testkit::http_get(proxy.addr("fe2"), "/2").status, 200);
    let seen = s1.wait_requests(2);
    assert_eq!(seen[0].raw_head_str(), "GET /1 HTTP/1.1\r\nhost: a\r\nx-back: 192.0.2.1\r\nx-back: 127.0.0.1\r\n\r\n");
    assert_eq!(seen[1].raw_head_str(), "GET /2 HTTP/1.1\r\nhost: rampart.test\r\n\r\n");
}

#[test]
fn absolute_form_targets_lose_their_default_port() {
    // haproxy 2.6's scheme-based normalization: the default port leaves the target, and
    // the Host header becomes the target's host.
    let s1 = HttpBackend::start("s1");
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    for req in [
        "GET http://Example.com:80/x?y HTTP/1.1\r\nHost: example.com:80\r\n\r\n",
        "GET https://example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n",
        "GET http://example.com:8080/ HTTP/1.1\r\nHost: example.com:8080\r\n\r\n",
        "GET http://example.com:443/ HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
    ] {
        c.send(req).unwrap();
        assert_eq!(c.read_response().unwrap().status, 200, "{req:?}");
    }
    let seen: Vec<String> = s1.wait_requests(4).iter().map(|r| r.raw_head_str()).collect();
    assert_eq!(
        seen,
        [
            "GET http://Example.com/x?y HTTP/1.1\r\nhost: Example.com\r\n\r\n",
            "GET https://example.com HTTP/1.1\r\nhost: example.com\r\n\r\n",
            "GET http://example.com:8080/ HTTP/1.1\r\nhost: example.com:8080\r\n\r\n",
            "GET http://example.com:443/ HTTP/1.1\r\nhost: example.com:443\r\n\r\n",
        ]
    );
}
