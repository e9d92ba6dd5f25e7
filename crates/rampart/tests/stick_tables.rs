//! Stick tables through the binary: the classic rate limiter (`track-sc0 src` and a
//! `deny` on `sc_http_req_rate(0)`), persistence with `stick on src` that follows
//! server state, a table at its size under a flood of new keys, and the runtime API
//! (`show table`, `set table`, `clear table`) compared with HAProxy 2.6's output for
//! the same sequence.

mod http2_client;
mod http_common;

use std::path::Path;
use std::time::Duration;

use http_common::RAMPART;
use rampart_testkit::{haproxy_or_skip, http_get, stats_command, HttpBackend, Proxy, RawClient, Reply, Running};

/// `global` with an admin socket in the test directory and two threads (entries are
/// shared by the threads), short timeouts.
const GLOBAL: &str = "global\n  nbthread 2\n  stats socket ${testdir}/admin.sock level admin\n\
                      defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n";

fn start(binary: &Path, cfg: &str, backends: &[(&str, &HttpBackend)]) -> Running {
    let mut p = Proxy::new(binary).listener("fe1");
    for (name, b) in backends {
        p = p.backend(name, b.addr());
    }
    p.config(cfg).start().expect("the proxy starts")
}

fn cli(p: &Running, command: &str) -> String {
    stats_command(&p.dir().join("admin.sock"), &format!("{command}\n"))
}

fn limiter_cfg(period: &str, limit: u32) -> String {
    format!(
        "{GLOBAL}frontend fe1\n  bind fd@${{fe1}}\n\
         \x20 stick-table type ip size 100k expire 30s store http_req_rate({period})\n\
         \x20 http-request track-sc0 src\n\
         \x20 http-request deny deny_status 429 if {{ sc_http_req_rate(0) gt {limit} }}\n\
         \x20 default_backend be1\n\
         backend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    )
}

#[test]
fn the_101st_request_within_10s_gets_429() {
    let s1 = HttpBackend::start("s1");
    let p = start(Path::new(RAMPART), &limiter_cfg("10s", 100), &[("s1", &s1)]);
    let mut c = RawClient::connect(p.addr("fe1")).unwrap();
    for i in 1..=100 {
        let r = c.get("/").unwrap();
        assert_eq!(r.status, 200, "request {i}");
    }
    assert_eq!(c.get("/").unwrap().status, 429, "request 101");
    // a new connection from the same address is limited as well
    assert_eq!(http_get(p.addr("fe1"), "/").status, 429);
    drop(c);
    // once both streams ended, nothing tracks the entry
    rampart_testkit::eventually!(cli(&p, "show table fe1").contains("key=127.0.0.1 use=0 "));
    let t = cli(&p, "show table fe1");
    assert!(t.contains(" http_req_rate(10000)=102\n"), "{t}");
}

/// Each HTTP/2 stream is a stream: tracked, counted and limited like an HTTP/1 request.
#[test]
fn http2_streams_are_tracked_and_limited() {
    use http2_client::{field, Event, H2Client};
    let s1 = HttpBackend::start("s1");
    let p = start(Path::new(RAMPART), &limiter_cfg("10s", 2), &[("s1", &s1)]);
    let mut c = H2Client::connect(p.addr("fe1"));
    let mut statuses = Vec::new();
    for id in [1, 3, 5] {
        c.get(id, "/");
        let events = c.until_end(id, Duration::from_secs(5));
        let Some(Event::Headers { fields, .. }) = events.first() else { panic!("{events:?}") };
        statuses.push(field(fields, ":status").unwrap_or("-").to_string());
    }
    assert_eq!(statuses, ["200", "200", "429"]);
    assert_eq!(s1.requests().len(), 2);
    drop(c);
    rampart_testkit::eventually!(cli(&p, "show table fe1").contains("key=127.0.0.1 use=0 "));
    let t = cli(&p, "show table fe1");
    assert!(t.contains(" http_req_rate(10000)=3\n"), "{t}");
}

#[test]
fn requests_pass_again_once_the_window_slid_past() {
    let s1 = HttpBackend::start("s1");
    let p = start(Path::new(RAMPART), &limiter_cfg("1s", 5), &[("s1", &s1)]);
    let mut c = RawClient::connect(p.addr("fe1")).unwrap();
    for _ in 0..5 {
        assert_eq!(c.get("/").unwrap().status, 200);
    }
    assert_eq!(c.get("/").unwrap().status, 429);
    // two periods later nothing of the burst is left in the window
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(http_get(p.addr("fe1"), "/").status, 200);
}

#[test]
fn stick_on_src_keeps_a_client_on_its_server_and_follows_server_state() {
    let (s1, s2) = (HttpBackend::start("s1"), HttpBackend::start("s2"));
    let cfg = format!(
        "{GLOBAL}listen fe1\n  bind fd@${{fe1}}\n  balance roundrobin\n\
         \x20 stick-table type ip size 1k expire 1m\n  stick on src\n\
         \x20 server s1 ${{s1_addr}}:${{s1_port}}\n  server s2 ${{s2_addr}}:${{s2_port}}\n"
    );
    let p = start(Path::new(RAMPART), &cfg, &[("s1", &s1), ("s2", &s2)]);
    let body = |p: &Running| String::from_utf8(http_get(p.addr("fe1"), "/").body).unwrap();
    let first = body(&p);
    for _ in 0..6 {
        assert_eq!(body(&p), first, "round robin would alternate without the table");
    }
    let (other, id) = if first == "s1" { ("s2", 2) } else { ("s1", 1) };
    let t = cli(&p, "show table fe1");
    assert!(t.contains(&format!(" server_id={} server_key={first}\n", 3 - id)), "{t}");
    // the server goes into maintenance: the client moves, and its entry with it
    assert_eq!(cli(&p, &format!("disable server fe1/{first}")), "\n");
    assert_eq!(body(&p), other);
    assert_eq!(cli(&p, &format!("enable server fe1/{first}")), "\n");
    for _ in 0..4 {
        assert_eq!(body(&p), other);
    }
    let t = cli(&p, "show table fe1");
    assert!(t.contains(&format!(" server_id={id} server_key={other}\n")), "{t}");
}

#[test]
fn a_full_table_stays_at_its_size() {
    let s1 = HttpBackend::start("s1");
    let cfg = format!(
        "{GLOBAL}frontend fe1\n  bind fd@${{fe1}}\n  stick-table type integer size 100 store gpc0\n\
         \x20 default_backend be1\nbackend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let p = start(Path::new(RAMPART), &cfg, &[("s1", &s1)]);
    for batch in 0..10 {
        let sets: Vec<String> =
            (0..100).map(|k| format!("set table fe1 key {} data.gpc0 1", batch * 100 + k)).collect();
        cli(&p, &sets.join(";"));
    }
    let t = cli(&p, "show table fe1");
    assert!(t.starts_with("# table: fe1, type: integer, size:100, used:100\n"), "{t}");
    // the most recent keys are the ones kept
    assert!(t.contains(" key=999 ") && !t.contains(" key=0 "), "{t}");
    // the head, the entries, the empty line ending the answer
    assert_eq!(t.lines().count(), 102);
}

#[test]
fn tcp_request_content_tracks_connections_while_they_last() {
    let echo = rampart_testkit::TcpEchoBackend::start();
    let cfg = format!(
        "{GLOBAL}listen fe1\n  mode tcp\n  bind fd@${{fe1}}\n\
         \x20 stick-table type ip size 1k store conn_cur,conn_cnt,conn_rate(10s),http_req_cnt\n\
         \x20 tcp-request content track-sc1 src\n\
         \x20 tcp-request content reject if {{ sc1_conn_cur gt 2 }}\n\
         \x20 server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let p = Proxy::new(RAMPART).listener("fe1").backend("s1", echo.addr()).config(&cfg).start().unwrap();
    let mut conns = Vec::new();
    for _ in 0..2 {
        let mut c = std::net::TcpStream::connect(p.addr("fe1")).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        std::io::Write::write_all(&mut c, b"ping").unwrap();
        let mut b = [0u8; 4];
        std::io::Read::read_exact(&mut c, &mut b).unwrap();
        conns.push(c);
    }
    let t = cli(&p, "show table fe1");
    assert!(t.contains(" use=2 exp=0 conn_cnt=2 conn_rate(10000)=2 conn_cur=2 http_req_cnt=0\n"), "{t}");
    // a third connection from the same address is refused by the content rules
    let mut c = std::net::TcpStream::connect(p.addr("fe1")).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = std::io::Write::write_all(&mut c, b"ping");
    let mut b = [0u8; 4];
    assert!(std::io::Read::read(&mut c, &mut b).map_or(true, |n| n == 0), "the third connection is served");
    drop(conns);
    rampart_testkit::eventually!(
        cli(&p, "show table fe1").contains(" use=0 exp=0 conn_cnt=3 conn_rate(10000)=3 conn_cur=0 ")
    );
}

#[test]
fn tcp_request_content_tracking_counts_http_requests() {
    let s1 = HttpBackend::start("s1");
    let cfg = format!(
        "{GLOBAL}frontend fe1\n  bind fd@${{fe1}}\n\
         \x20 stick-table type ip size 1k store http_req_cnt,http_err_cnt\n\
         \x20 tcp-request content track-sc2 src\n\
         \x20 http-request deny if {{ path /deny }}\n\
         \x20 default_backend be1\nbackend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let p = start(Path::new(RAMPART), &cfg, &[("s1", &s1)]);
    let mut c = RawClient::connect(p.addr("fe1")).unwrap();
    assert_eq!(c.get("/").unwrap().status, 200);
    assert_eq!(c.get("/").unwrap().status, 200);
    assert_eq!(c.get("/deny").unwrap().status, 403);
    drop(c);
    rampart_testkit::eventually!(cli(&p, "show table fe1").contains(" use=0 exp=0 http_req_cnt=3 http_err_cnt=1\n"));
}

#[test]
fn connection_tracking_counts_sessions_and_each_request() {
    let s1 = HttpBackend::start("s1");
    let cfg = format!(
        "{GLOBAL}frontend fe1\n  bind fd@${{fe1}}\n\
         \x20 stick-table type ip size 1k store conn_cur,conn_cnt,sess_cnt,sess_rate(10s),http_req_cnt,http_err_cnt\n\
         \x20 tcp-request connection track-sc0 src\n\
         \x20 http-request deny if {{ sc0_http_req_cnt gt 3 }}\n\
         \x20 default_backend be1\nbackend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let p = start(Path::new(RAMPART), &cfg, &[("s1", &s1)]);
    let mut c = RawClient::connect(p.addr("fe1")).unwrap();
    for _ in 0..3 {
        assert_eq!(c.get("/").unwrap().status, 200);
    }
    let t = cli(&p, "show table fe1");
    assert!(
        t.contains(" use=1 exp=0 conn_cnt=1 conn_cur=1 sess_cnt=1 sess_rate(10000)=1 http_req_cnt=3 http_err_cnt=0\n"),
        "{t}"
    );
    // the session's entry counts each request of the connection: the fourth is refused
    assert_eq!(c.get("/").unwrap().status, 403);
    drop(c);
    rampart_testkit::eventually!(cli(&p, "show table fe1").contains(" use=0 exp=0 conn_cnt=1 conn_cur=0 sess_cnt=1 "));
    assert!(cli(&p, "show table fe1").contains(" http_req_cnt=4 http_err_cnt=1\n"));
}

/// `show table` lines with what differs between two runs blanked: the entry address
/// and the milliseconds left before expiry.
fn normalized(out: &str) -> String {
    out.lines()
        .map(|l| {
            l.split(' ')
                .map(|w| match w {
                    w if w.starts_with("0x") && w.ends_with(':') => "0x?:".to_owned(),
                    w if w.starts_with("exp=") => "exp=?".to_owned(),
                    w => w.to_owned(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The runtime API's answers to the same sequence of requests and commands.
fn table_session(binary: &Path) -> Vec<(String, String)> {
    let s1 = HttpBackend::start("s1");
    let cfg = format!(
        "{GLOBAL}frontend fe1\n  bind fd@${{fe1}}\n\
         \x20 stick-table type ip size 1k expire 30s store gpc0,conn_cur,conn_cnt,http_req_cnt,http_req_rate(10s),http_err_cnt\n\
         \x20 http-request track-sc0 src\n\
         \x20 http-request sc-inc-gpc0(0) if {{ path /inc }}\n\
         \x20 http-request deny if {{ path /deny }}\n\
         \x20 default_backend be1\n\
         backend be1\n  stick-table type string len 8 size 10\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let p = start(binary, &cfg, &[("s1", &s1)]);
    for path in ["/", "/inc", "/inc", "/deny"] {
        http_get(p.addr("fe1"), path);
    }
    // the streams end a moment after their responses
    rampart_testkit::eventually!(cli(&p, "show table fe1").contains(" use=0 "));
    let commands = [
        "show table",
        "show table fe1",
        "set table fe1 key 10.0.0.1 data.gpc0 5 data.http_req_rate 7",
        "show table fe1 data.gpc0 gt 1",
        "show table fe1 data.http_req_cnt eq 4",
        "show table fe1 key 127.0.0.1",
        "show table fe1 key 10.9.9.9",
        "set table be1 key abcdefghijk",
        "show table be1",
        "clear table fe1 key 10.0.0.1",
        "show table fe1",
        "show table nope",
        "set table fe1 key 10.0.0.2 data.nope 1",
        "set table fe1 key 10.0.0.2 data.conn_rate 1",
        "set table fe1 key 10.0.0.2 data.gpc0 x",
        "show table fe1 data.gpc0 zz 1",
        "show table fe1 data.gpc1 gt 1",
        "show table fe1 foo",
        "clear table fe1",
        "show table fe1",
    ];
    commands.iter().map(|c| (c.to_string(), normalized(&cli(&p, c)))).collect()
}

#[test]
fn set_table_without_a_key_is_refused() {
    let s1 = HttpBackend::start("s1");
    let p = start(Path::new(RAMPART), &limiter_cfg("10s", 100), &[("s1", &s1)]);
    cli(&p, "set table fe1 key 10.0.0.1 data.http_req_rate 1");
    // COMPAT: HAProxy 2.6 answers nothing and empties the table (its `set` falls into
    // the `clear` loop); rampart refuses the command and keeps the entries.
    let usage = "Required arguments: <table> key <key> [data.<store_data_type> <value>]*\n\n";
    assert_eq!(cli(&p, "set table fe1"), usage);
    assert!(cli(&p, "show table fe1").contains("key=10.0.0.1 "));
}

#[test]
fn show_table_output_is_haproxys() {
    let Some(haproxy) = haproxy_or_skip("show_table_output_is_haproxys") else { return };
    let theirs = table_session(&haproxy);
    let ours = table_session(Path::new(RAMPART));
    for ((cmd, t), (_, o)) in theirs.iter().zip(&ours) {
        assert_eq!(o, t, "`{cmd}`: rampart (left) and haproxy (right) differ");
    }
}

/// The general purpose arrays (`gpc(<n>)`, `gpc_rate(<n>,<p>)`, `gpt(<n>)`) through the
/// actions and fetches of `http-request` and `tcp-request` rules: the legacy forms
/// (`sc-inc-gpc0`, `sc-set-gpt0`, `sc_get_gpc1` ...) read and write the arrays' first
/// elements. The bodies and `show table` lines each binary gives.
fn gpc_session(binary: &Path) -> Vec<String> {
    let vals = "%[sc_get_gpc(0,0)] %[sc_get_gpc(2,0)] %[sc_get_gpc1(0)] %[sc_gpc_rate(1,0)] %[sc0_gpc0_rate] \
                %[sc_get_gpt(1,0)] %[sc0_get_gpt0] %[src,table_gpc(2,fe1)] %[src,table_gpt(0,fe1)] \
                %[src,table_gpc_rate(0,fe1)] %[src_get_gpt(1,fe1)]";
    let cfg = format!(
        "{GLOBAL}frontend fe1\n  bind fd@${{fe1}}\n\
         \x20 stick-table type ip size 1k expire 30s store gpc(3),gpc_rate(2,10s),gpt(2),http_req_cnt\n\
         \x20 tcp-request connection track-sc1 src table be1\n\
         \x20 tcp-request connection sc-inc-gpc(0,1)\n\
         \x20 tcp-request session sc-set-gpt(0,1) 9\n\
         \x20 tcp-request content sc-inc-gpc0(1)\n\
         \x20 http-request track-sc0 src\n\
         \x20 http-request sc-inc-gpc(2,0) if {{ path /a }}\n\
         \x20 http-request sc-inc-gpc0 if {{ path /b }}\n\
         \x20 http-request sc-inc-gpc1(0) if {{ path /b }}\n\
         \x20 http-request sc-set-gpt(1,0) 42 if {{ path /c }}\n\
         \x20 http-request sc-set-gpt0(0) int(7) if {{ path /c }}\n\
         \x20 http-request return status 200 content-type text/plain lf-string \"%[src_inc_gpc(1,fe1)] %[src_clr_gpc(2,fe1)]\" if {{ path /d }}\n\
         \x20 http-request return status 200 content-type text/plain lf-string \"{vals}\"\n\
         backend be1\n  stick-table type ip size 10 store gpc(1),gpc_rate(1,10s),gpt(1)\n"
    );
    let p = start(binary, &cfg, &[]);
    let mut out: Vec<String> =
        ["/a", "/b", "/c", "/d"].iter().map(|path| http_get(p.addr("fe1"), path).body_str()).collect();
    rampart_testkit::eventually!(cli(&p, "show table fe1").contains(" use=0 "));
    out.push(normalized(&cli(&p, "show table fe1")));
    out.push(normalized(&cli(&p, "show table be1")));
    out
}

#[test]
fn gpc_arrays_through_actions_and_fetches() {
    let got = gpc_session(Path::new(RAMPART));
    let bodies = ["0 1 0 0 0 0 0 1 0 0 0", "1 1 1 1 1 0 0 1 0 1 0", "1 1 1 1 1 42 7 1 7 1 42", "2 1"];
    assert_eq!(got[..4], bodies);
    assert_eq!(
        got[4],
        "# table: fe1, type: ip, size:1024, used:1\n0x?: key=127.0.0.1 use=0 exp=? http_req_cnt=4 gpt0=7 gpt1=42 \
         gpc0=1 gpc1=2 gpc2=0 gpc0_rate(10000)=1 gpc1_rate(10000)=2\n"
    );
    assert_eq!(
        got[5],
        "# table: be1, type: ip, size:10, used:1\n0x?: key=127.0.0.1 use=0 exp=? gpt0=9 gpc0=8 gpc0_rate(10000)=8\n"
    );
}

#[test]
fn gpc_arrays_match_haproxy() {
    let Some(haproxy) = haproxy_or_skip("gpc_arrays_match_haproxy") else { return };
    assert_eq!(gpc_session(Path::new(RAMPART)), gpc_session(&haproxy), "rampart (left), haproxy (right)");
}

/// `http_fail_cnt` and `http_err_cnt` after a server's 500, 501 and 404, a server that
/// closes without answering (502), and a backend without a usable server (503).
fn fail_session(binary: &Path) -> String {
    let s1 = HttpBackend::builder("s1")
        .respond(|r| match r.path.as_str() {
            "/500" => Reply::new(500),
            "/501" => Reply::new(501),
            "/close" => Reply::raw("").close(),
            _ => Reply::new(404),
        })
        .start();
    let cfg = format!(
        "{GLOBAL}frontend fe1\n  bind fd@${{fe1}}\n\
         \x20 stick-table type ip size 1k expire 30s store http_req_cnt,http_err_cnt,http_fail_cnt\n\
         \x20 http-request track-sc0 src\n\
         \x20 use_backend none if {{ path /none }}\n\
         \x20 default_backend be1\n\
         backend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n\
         backend none\n"
    );
    let p = start(binary, &cfg, &[("s1", &s1)]);
    for (path, status) in [("/500", 500), ("/501", 501), ("/404", 404), ("/close", 502), ("/none", 503)] {
        let mut c = RawClient::connect(p.addr("fe1")).unwrap();
        assert_eq!(c.get(path).unwrap().status, status, "{path}");
    }
    rampart_testkit::eventually!(cli(&p, "show table fe1").contains(" use=0 "));
    normalized(&cli(&p, "show table fe1"))
}

#[test]
fn server_failures_are_counted_as_haproxy_counts_them() {
    let got = fail_session(Path::new(RAMPART));
    assert_eq!(
        got,
        "# table: fe1, type: ip, size:1024, used:1\n0x?: key=127.0.0.1 use=0 exp=? http_req_cnt=5 http_err_cnt=1 http_fail_cnt=2\n"
    );
    let Some(haproxy) = haproxy_or_skip("server_failures_are_counted_as_haproxy_counts_them") else { return };
    assert_eq!(got, fail_session(&haproxy), "rampart (left), haproxy (right)");
}

/// The exporter's stick-table metrics after one request tracked in `fe1`'s table: the
/// answers to `?scope=sticktable` and `?scope=sticktable&scope=global`, and the end of
/// the full answer from the first `haproxy_sticktable_` line.
fn sticktable_metrics(binary: &Path) -> Vec<String> {
    let s1 = HttpBackend::start("s1");
    let cfg = format!(
        "{GLOBAL}frontend fe1\n  bind fd@${{fe1}}\n  stick-table type ip size 100k expire 30s store http_req_rate(10s)\n\
         \x20 http-request use-service prometheus-exporter if {{ path /metrics }}\n\
         \x20 http-request track-sc0 src\n  default_backend be1\n\
         backend be1\n  stick-table type string len 20 size 1m store gpc0\n  server s1 ${{s1_addr}}:${{s1_port}}\n\
         backend by_id\n  stick-table type integer size 3k nopurge\n\
         peers p\n  bind fd@${{peer}}\n  server A\n  table t2 type binary len 8 size 10 store gpt0\n"
    );
    let p = Proxy::new(binary)
        .listener("fe1")
        .listener("peer")
        .arg("-L")
        .arg("A")
        .backend("s1", s1.addr())
        .config(&cfg)
        .start()
        .expect("the proxy starts");
    assert_eq!(http_get(p.addr("fe1"), "/").status, 200);
    cli(&p, "set table be1 key abc data.gpc0 2");
    let scrape = |q: &str| http_get(p.addr("fe1"), &format!("/metrics{q}")).body_str();
    let full = scrape("");
    let tail = full.find("# HELP haproxy_sticktable_").map_or("", |i| &full[i..]).to_owned();
    vec![
        scrape("?scope=sticktable"),
        scrape("?scope=global&scope=sticktable")
            .lines()
            .filter(|l| l.contains("sticktable"))
            .collect::<Vec<_>>()
            .join("\n"),
        tail,
    ]
}

#[test]
fn prometheus_sticktable_metrics_are_haproxys() {
    let ours = sticktable_metrics(Path::new(RAMPART));
    assert!(ours[0].contains("haproxy_sticktable_used{name=\"fe1\",type=\"ip\"} 1\n"), "{}", ours[0]);
    assert!(ours[0].contains("haproxy_sticktable_size{name=\"p/t2\",type=\"binary\"} 10\n"), "{}", ours[0]);
    let Some(haproxy) = haproxy_or_skip("prometheus_sticktable_metrics_are_haproxys") else { return };
    let theirs = sticktable_metrics(&haproxy);
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o, t, "rampart (left) and haproxy (right) differ");
    }
}
