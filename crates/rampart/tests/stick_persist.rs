//! Persistence through the binary, beyond `stick on src` (see `stick_tables.rs`):
//! `server_key` and `srvkey` (an entry found by server name or address across
//! backends, as HAProxy's `stickiness/` reg-tests use it), `stick store-response`,
//! `http-response track-sc`, the `stick`/`use-server` rules of TCP-mode backends,
//! `non-stick` servers, and `force-persist`/`ignore-persist`/`option persist` with a
//! persistence cookie. The expectations are HAProxy 2.6's: every test also passes with
//! `RAMPART_TEST_BINARY=/usr/sbin/haproxy`.

mod http_common;

use std::path::Path;

use http_common::RAMPART;
use rampart_testkit::{
    http_get, stats_command, HttpBackend, Proxy, RawClient, Reply, Response, Running, TcpEchoBackend,
};

const GLOBAL: &str = "global\n  nbthread 2\n  stats socket ${testdir}/admin.sock level admin\n\
                      defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n";

fn start(cfg: &str, backends: &[(&str, std::net::SocketAddr)]) -> Running {
    let mut p = Proxy::new(Path::new(RAMPART)).listener("fe1");
    for (name, addr) in backends {
        p = p.backend(name, *addr);
    }
    p.config(cfg).start().expect("the proxy starts")
}

fn cli(p: &Running, command: &str) -> String {
    stats_command(&p.dir().join("admin.sock"), &format!("{command}\n"))
}

fn body(r: &Response) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

/// One request with extra header lines, on a new connection.
fn get_with(p: &Running, path: &str, headers: &str) -> Response {
    let mut c = RawClient::connect(p.addr("fe1")).unwrap();
    c.send(format!("GET {path} HTTP/1.1\r\nhost: t\r\n{headers}connection: close\r\n\r\n")).unwrap();
    c.read_response().unwrap()
}

/// A client stuck to server `a` of `be1` goes to the server of `be2` with the same
/// name, whatever its id: the entry holds the server's name (`server_key`), shared by
/// the two backends, and `show table` prints it as HAProxy 2.6 does.
#[test]
fn server_key_names_the_server_across_backends() {
    let (a, b) = (HttpBackend::start("a"), HttpBackend::start("b"));
    let (a2, b2) = (HttpBackend::start("a2"), HttpBackend::start("b2"));
    let cfg = format!(
        "{GLOBAL}frontend fe1\n  bind fd@${{fe1}}\n  use_backend be2 if {{ path_beg /be2 }}\n  default_backend be1\n\
         backend tbl\n  stick-table type string size 1k\n\
         backend be1\n  balance roundrobin\n  stick on urlp(client) table tbl\n\
         \x20 server b ${{b_addr}}:${{b_port}}\n  server a ${{a_addr}}:${{a_port}}\n\
         backend be2\n  balance roundrobin\n  stick on urlp(client) table tbl\n\
         \x20 server b ${{b2_addr}}:${{b2_port}}\n  server x ${{b2_addr}}:${{b2_port}}\n  server a ${{a2_addr}}:${{a2_port}}\n"
    );
    let p = start(&cfg, &[("a", a.addr()), ("b", b.addr()), ("a2", a2.addr()), ("b2", b2.addr())]);
    // round robin: the first request goes to `b`, the second to `a`
    assert_eq!(body(&http_get(p.addr("fe1"), "/?client=c0")), "b");
    assert_eq!(body(&http_get(p.addr("fe1"), "/?client=c1")), "a");
    let t = cli(&p, "show table tbl");
    assert!(t.contains(" server_id=2 server_key=a\n"), "{t}");
    // in be2, `a` has id 3: the name finds it
    for _ in 0..3 {
        assert_eq!(body(&http_get(p.addr("fe1"), "/be2?client=c1")), "a2");
    }
    assert_eq!(body(&http_get(p.addr("fe1"), "/be2?client=c0")), "b2");
}

/// `srvkey addr`: the entry holds the server's address, so a server of another
/// backend at the same address matches whatever its name.
#[test]
fn srvkey_addr_matches_servers_at_the_same_address() {
    let (s1, s2) = (HttpBackend::start("s1"), HttpBackend::start("s2"));
    let cfg = format!(
        "{GLOBAL}frontend fe1\n  bind fd@${{fe1}}\n  use_backend be2 if {{ path_beg /be2 }}\n  default_backend be1\n\
         backend tbl\n  stick-table type string size 1k srvkey addr\n\
         backend be1\n  balance roundrobin\n  stick on urlp(client) table tbl\n\
         \x20 server one ${{s1_addr}}:${{s1_port}}\n  server two ${{s2_addr}}:${{s2_port}}\n\
         backend be2\n  balance roundrobin\n  stick on urlp(client) table tbl\n\
         \x20 server other ${{s1_addr}}:${{s1_port}}\n  server again ${{s2_addr}}:${{s2_port}}\n"
    );
    let p = start(&cfg, &[("s1", s1.addr()), ("s2", s2.addr())]);
    assert_eq!(body(&http_get(p.addr("fe1"), "/?client=c0")), "s1");
    assert_eq!(body(&http_get(p.addr("fe1"), "/?client=c1")), "s2");
    let t = cli(&p, "show table tbl");
    assert!(t.contains(&format!(" server_id=2 server_key={}\n", s2.addr())), "{t}");
    for _ in 0..3 {
        assert_eq!(body(&http_get(p.addr("fe1"), "/be2?client=c1")), "s2");
    }
}

/// `stick store-response` learns the session id a server sets, `stick match` sends
/// the requests carrying it back to that server; a `non-stick` server is never
/// stored.
#[test]
fn store_response_learns_the_session_a_server_sets() {
    let session = |name: &'static str| {
        HttpBackend::builder(name)
            .respond(move |_| Reply::ok().header("x-session", &format!("sid-{name}")).body(name))
            .start()
    };
    let (s1, s2, s3) = (session("s1"), session("s2"), session("s3"));
    let cfg = format!(
        "{GLOBAL}listen fe1\n  bind fd@${{fe1}}\n  balance roundrobin\n\
         \x20 stick-table type string len 32 size 1k\n\
         \x20 stick match req.hdr(x-session)\n  stick store-response res.hdr(x-session)\n\
         \x20 server s1 ${{s1_addr}}:${{s1_port}}\n  server s2 ${{s2_addr}}:${{s2_port}}\n\
         \x20 server s3 ${{s3_addr}}:${{s3_port}} non-stick\n"
    );
    let p = start(&cfg, &[("s1", s1.addr()), ("s2", s2.addr()), ("s3", s3.addr())]);
    let first: Vec<String> = (0..3).map(|_| body(&http_get(p.addr("fe1"), "/"))).collect();
    assert_eq!(first, ["s1", "s2", "s3"]);
    for _ in 0..4 {
        assert_eq!(body(&get_with(&p, "/", "x-session: sid-s2\r\n")), "s2");
    }
    let t = cli(&p, "show table fe1");
    assert!(t.contains("key=sid-s1 ") && t.contains("key=sid-s2 "), "{t}");
    assert!(t.contains(" server_id=2 server_key=s2\n"), "{t}");
    assert!(!t.contains("sid-s3"), "a non-stick server is not stored: {t}");
}

/// `http-response track-sc0` tracks a key the response gives: the request and a 4xx
/// the server sent are counted in its entry.
#[test]
fn http_response_track_sc_counts_the_request_and_its_errors() {
    let s1 = HttpBackend::builder("s1")
        .respond(|r| {
            let status = if r.path.starts_with("/missing") { 404 } else { 200 };
            Reply::new(status).header("x-user", "alice").body("s1")
        })
        .start();
    let cfg = format!(
        "{GLOBAL}listen fe1\n  bind fd@${{fe1}}\n\
         \x20 stick-table type string size 1k store http_req_cnt,http_err_cnt\n\
         \x20 http-response track-sc0 res.hdr(x-user)\n\
         \x20 server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let p = start(&cfg, &[("s1", s1.addr())]);
    assert_eq!(http_get(p.addr("fe1"), "/").status, 200);
    assert_eq!(http_get(p.addr("fe1"), "/missing").status, 404);
    rampart_testkit::eventually!(cli(&p, "show table fe1").contains("key=alice use=0 "));
    let t = cli(&p, "show table fe1");
    assert!(t.contains(" http_req_cnt=2 http_err_cnt=1\n"), "{t}");
}

/// In a TCP-mode backend, `stick on src` keeps a client on its server (round robin
/// would alternate), and `use-server` picks the server its condition names.
#[test]
fn tcp_backends_run_stick_and_use_server_rules() {
    let (e1, e2) = (TcpEchoBackend::start(), TcpEchoBackend::start());
    let cfg = format!(
        "{GLOBAL}listen fe1\n  mode tcp\n  bind fd@${{fe1}}\n  balance roundrobin\n\
         \x20 stick-table type ip size 1k\n  stick on src\n\
         \x20 server e1 ${{e1_addr}}:${{e1_port}}\n  server e2 ${{e2_addr}}:${{e2_port}}\n\
         listen fe2\n  mode tcp\n  bind fd@${{fe2}}\n  balance roundrobin\n\
         \x20 use-server e2 if {{ always_true }}\n\
         \x20 server e1 ${{e1_addr}}:${{e1_port}}\n  server e2 ${{e2_addr}}:${{e2_port}}\n"
    );
    let p = Proxy::new(Path::new(RAMPART))
        .listener("fe1")
        .listener("fe2")
        .backend("e1", e1.addr())
        .backend("e2", e2.addr())
        .config(&cfg)
        .start()
        .expect("the proxy starts");
    let echo = |addr| {
        let mut c = RawClient::connect(addr).unwrap();
        c.send(b"ping\n").unwrap();
        assert_eq!(c.read_until(b"\n").unwrap(), b"ping\n");
    };
    for _ in 0..4 {
        echo(p.addr("fe1"));
    }
    let (n1, n2) = (e1.connections().len(), e2.connections().len());
    assert!(n1 == 4 && n2 == 0 || n1 == 0 && n2 == 4, "all on one server: {n1} and {n2}");
    let t = cli(&p, "show table fe1");
    assert!(t.contains("key=127.0.0.1 ") && t.contains(" server_key=e"), "{t}");
    for _ in 0..3 {
        echo(p.addr("fe2"));
    }
    assert_eq!((e1.connections().len(), e2.connections().len()), (n1, n2 + 3), "use-server sent them all to e2");
}

fn cookie_backends() -> (HttpBackend, HttpBackend) {
    (HttpBackend::start("s1"), HttpBackend::start("s2"))
}

fn cookie_cfg(extra: &str) -> String {
    format!(
        "{GLOBAL}listen fe1\n  bind fd@${{fe1}}\n  balance roundrobin\n  cookie SRV insert indirect nocache\n{extra}\
         \x20 default-server check inter 10s\n\
         \x20 server s1 ${{s1_addr}}:${{s1_port}} cookie c1\n  server s2 ${{s2_addr}}:${{s2_port}} cookie c2\n"
    )
}

/// `force-persist` keeps a request whose cookie names a server that is down on that
/// server, only when its condition matches: as HAProxy 2.6, the request is sent to it
/// (HAProxy checks only the server's maxconn there, not its state: checked by hand with
/// haproxy 2.6.12, the same configuration and `set server fe1/s1 health down`);
/// without the header the request is balanced.
#[test]
fn force_persist_keeps_the_cookie_server_when_its_condition_matches() {
    let (s1, s2) = cookie_backends();
    let cfg = cookie_cfg("  force-persist if { req.hdr(x-admin) -m found }\n");
    let p = start(&cfg, &[("s1", s1.addr()), ("s2", s2.addr())]);
    assert_eq!(cli(&p, "set server fe1/s1 health down"), "\n");
    let r = get_with(&p, "/", "cookie: SRV=c1\r\n");
    assert_eq!(body(&r), "s2", "balanced without the header");
    assert!(r.headers.get("set-cookie").is_some_and(|v| v.starts_with("SRV=c2")), "{:?}", r.headers);
    assert!(s1.requests().is_empty());
    assert_eq!(body(&get_with(&p, "/", "cookie: SRV=c1\r\nx-admin: 1\r\n")), "s1", "forced to the down server");
    assert_eq!(s1.requests().len(), 1);
}

/// `option persist`: a cookie naming a server that is down keeps the request on it (it
/// is sent there, as HAProxy 2.6 does: checked by hand with haproxy 2.6.12); without
/// the option it is balanced.
#[test]
fn option_persist_keeps_the_cookie_server() {
    for (extra, want) in [("", "s1"), ("  option persist\n", "s2")] {
        let (s1, s2) = cookie_backends();
        let p = start(&cookie_cfg(extra), &[("s1", s1.addr()), ("s2", s2.addr())]);
        assert_eq!(cli(&p, "set server fe1/s2 health down"), "\n");
        let r = get_with(&p, "/", "cookie: SRV=c2\r\n");
        assert_eq!(body(&r), want, "with {extra:?}");
    }
}

/// `ignore-persist`: the cookie is neither followed nor set for matching requests.
#[test]
fn ignore_persist_balances_and_sets_no_cookie() {
    let (s1, s2) = cookie_backends();
    let cfg = cookie_cfg("  ignore-persist if { path_end .png }\n");
    let p = start(&cfg, &[("s1", s1.addr()), ("s2", s2.addr())]);
    let got: Vec<String> = (0..2)
        .map(|_| {
            let r = get_with(&p, "/img.png", "cookie: SRV=c1\r\n");
            assert!(r.headers.get("set-cookie").is_none(), "{:?}", r.headers);
            body(&r)
        })
        .collect();
    assert_eq!(got, ["s1", "s2"], "round robin, cookie ignored");
    for _ in 0..2 {
        assert_eq!(body(&get_with(&p, "/page", "cookie: SRV=c1\r\n")), "s1");
    }
}

/// `stick` rules may store in a table of a `peers` section (`table <section>/<t>`),
/// which then stores `server_id` and `server_key` as well.
#[test]
fn stick_rules_store_in_a_peers_section_table() {
    let (s1, s2) = (HttpBackend::start("s1"), HttpBackend::start("s2"));
    let cfg = "global\n  localpeer self\n  stats socket ${testdir}/admin.sock level admin\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         peers mypeers\n  bind fd@${pp}\n  server self\n  table t type string size 1k\n\
         listen fe1\n  bind fd@${fe1}\n  balance roundrobin\n  stick on urlp(client) table mypeers/t\n\
         \x20 server s1 ${s1_addr}:${s1_port}\n  server s2 ${s2_addr}:${s2_port}\n";
    let p = Proxy::new(Path::new(RAMPART))
        .listener("fe1")
        .listener("pp")
        .backend("s1", s1.addr())
        .backend("s2", s2.addr())
        .config(cfg)
        .start()
        .expect("the proxy starts");
    let first = body(&http_get(p.addr("fe1"), "/?client=c1"));
    for _ in 0..3 {
        assert_eq!(body(&http_get(p.addr("fe1"), "/?client=c1")), first);
    }
    let t = cli(&p, "show table mypeers/t");
    assert!(t.contains("key=c1 ") && t.contains(&format!(" server_key={first}\n")), "{t}");
}
