//! Servers changed at run time through the stats socket: `add server` (plain and TLS,
//! with checks), `enable server`, `del server`, end to end: which test server the
//! requests reached, what `show stat` lists, and the refusals, compared with HAProxy
//! 2.6's answers to the same commands on the same configuration.

mod test_pki;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rampart_testkit::{closed_port, haproxy_or_skip, http_get, stats_command, HttpBackend, Proxy, Running};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

const CFG: &str = "global\n  stats socket ${testdir}/admin.sock level admin\n\
                   defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 2s\n\
                   frontend fe\n  bind fd@${fe}\n  default_backend be\n\
                   backend be\n  server s1 ${s1_addr}:${s1_port}\n\
                   backend st\n  balance static-rr\n\
                   backend tcpb\n  mode tcp\n";

fn cli(proxy: &Running, cmd: &str) -> String {
    stats_command(&proxy.dir().join("admin.sock"), &format!("{cmd}\n"))
}

/// The first line of an answer (the CLI ends answers with an empty line).
fn first_line(answer: &str) -> String {
    answer.lines().next().unwrap_or("").to_owned()
}

/// The servers `show stat` lists for backend `be`, with their status.
fn servers_of(proxy: &Running, be: &str) -> Vec<(String, String)> {
    let out = cli(proxy, "show stat");
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").trim_start_matches("# ").split(',').collect();
    let status = header.iter().position(|h| *h == "status").expect("a status column");
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f.first() == Some(&be) && f.get(1).is_some_and(|s| *s != "BACKEND" && *s != "FRONTEND"))
        .map(|f| (f[1].to_owned(), f[status].to_owned()))
        .collect()
}

fn start(binary: impl Into<PathBuf>, s1: &HttpBackend, extra: &str) -> Running {
    Proxy::new(binary)
        .listener("fe")
        .backend("s1", s1.addr())
        .config(&format!("{CFG}{extra}"))
        .start()
        .expect("the proxy starts")
}

fn status_of(proxy: &Running, path: &str) -> u16 {
    http_get(proxy.addr("fe"), path).status
}

#[test]
fn added_server_takes_traffic_once_enabled_and_is_deleted_only_in_maintenance() {
    let s1 = HttpBackend::start("s1");
    let s2 = HttpBackend::start("s2");
    let proxy = start(RAMPART, &s1, "");
    let add = format!("add server be/s2 {}", s2.addr());
    assert_eq!(first_line(&cli(&proxy, &add)), "New server registered.");
    // a new server starts in maintenance: it takes nothing yet
    for _ in 0..4 {
        assert_eq!(status_of(&proxy, "/before"), 200);
    }
    assert!(s2.requests().is_empty(), "a server in maintenance got requests");
    assert_eq!(servers_of(&proxy, "be"), [("s1".into(), "no check".into()), ("s2".into(), "MAINT".into())]);
    cli(&proxy, "enable server be/s2");
    for _ in 0..6 {
        assert_eq!(status_of(&proxy, "/after"), 200);
    }
    assert_eq!(s2.requests().len(), 3, "round robin shares the requests with the added server");
    assert_eq!(servers_of(&proxy, "be")[1], ("s2".into(), "no check".into()));
    let refused = first_line(&cli(&proxy, "del server be/s2"));
    assert_eq!(refused, "Only servers in maintenance mode can be deleted.");
    cli(&proxy, "disable server be/s2");
    assert_eq!(first_line(&cli(&proxy, "del server be/s2")), "Server deleted.");
    assert_eq!(first_line(&cli(&proxy, "del server be/s2")), "No such server.");
    assert_eq!(servers_of(&proxy, "be"), [("s1".into(), "no check".into())]);
    let before = s2.requests().len();
    for _ in 0..4 {
        assert_eq!(status_of(&proxy, "/deleted"), 200);
    }
    assert_eq!(s2.requests().len(), before, "a deleted server got requests");
    // the name is free again
    assert_eq!(first_line(&cli(&proxy, &add)), "New server registered.");
    cli(&proxy, "set server be/s2 state ready");
    for _ in 0..4 {
        assert_eq!(status_of(&proxy, "/again"), 200);
    }
    assert_eq!(s2.requests().len(), before + 2);
}

#[test]
fn added_server_with_check_goes_down_on_a_closed_port() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(RAMPART, &s1, "");
    let dead = closed_port();
    let add = format!("add server be/s3 {dead} check inter 100ms rise 1 fall 1 weight 3");
    assert_eq!(first_line(&cli(&proxy, &add)), "New server registered.");
    assert_eq!(first_line(&cli(&proxy, "get weight be/s3")), "3 (initial 3)");
    cli(&proxy, "enable server be/s3");
    cli(&proxy, "enable health be/s3");
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut last = Vec::new();
    while Instant::now() < deadline {
        last = servers_of(&proxy, "be");
        if last.get(1).is_some_and(|(_, st)| st == "DOWN") {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(last.get(1), Some(&("s3".into(), "DOWN".into())), "the check of the added server ran");
    for _ in 0..3 {
        assert_eq!(status_of(&proxy, "/"), 200, "a DOWN added server is not picked");
    }
    cli(&proxy, "disable health be/s3");
    cli(&proxy, "disable server be/s3");
    assert_eq!(first_line(&cli(&proxy, "del server be/s3")), "Server deleted.");
}

#[test]
fn tls_server_added_at_run_time() {
    let dir = test_pki::fresh_dir("runtime-servers-tls");
    let (ca, ca_key) = test_pki::ca("runtime servers CA");
    std::fs::write(dir.join("srv.pem"), test_pki::leaf_pem(&["localhost"], &ca, &ca_key)).unwrap();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    let (other, _) = test_pki::ca("another CA");
    std::fs::write(dir.join("other.pem"), other.pem()).unwrap();
    let s1 = HttpBackend::start("s1");
    let tls_fe = format!(
        "frontend tlsfe\n  bind fd@${{tls}} ssl crt {}\n  http-request return status 200 content-type text/plain string tls-ok\n\
         backend tlsbe\n",
        dir.join("srv.pem").display()
    );
    let proxy = Proxy::new(RAMPART)
        .listener("fe")
        .listener("tls")
        .backend("s1", s1.addr())
        .config(&format!("{CFG}frontend fe2\n  bind fd@${{fe2}}\n  default_backend tlsbe\n{tls_fe}"))
        .listener("fe2")
        .start()
        .expect("the proxy starts");
    let tls = proxy.addr("tls");
    let fe2 = proxy.addr("fe2");
    assert_eq!(http_get(fe2, "/").status, 503, "an empty backend answers 503");
    let ca_file = dir.join("ca.pem").display().to_string();
    let add = format!("add server tlsbe/t1 {tls} ssl verify required ca-file {ca_file} sni str(localhost)");
    assert_eq!(first_line(&cli(&proxy, &add)), "New server registered.");
    cli(&proxy, "enable server tlsbe/t1");
    let r = http_get(fe2, "/");
    assert_eq!((r.status, String::from_utf8_lossy(&r.body).into_owned()), (200, "tls-ok".into()));
    // a server whose certificate the CA does not vouch for: the handshake fails
    let other = dir.join("other.pem").display().to_string();
    cli(&proxy, "disable server tlsbe/t1");
    let bad = format!("add server tlsbe/t2 {tls} ssl verify required ca-file {other} sni str(localhost)");
    assert_eq!(first_line(&cli(&proxy, &bad)), "New server registered.");
    cli(&proxy, "enable server tlsbe/t2");
    assert_eq!(http_get(fe2, "/").status, 503);
    // without verification the same server is accepted
    cli(&proxy, "disable server tlsbe/t2");
    let none = format!("add server tlsbe/t3 {tls} ssl verify none");
    assert_eq!(first_line(&cli(&proxy, &none)), "New server registered.");
    cli(&proxy, "enable server tlsbe/t3");
    assert_eq!(http_get(fe2, "/").status, 200);
}

/// The commands whose answers are compared with HAProxy's, with `{s1}` replaced by a
/// server address.
const DIFF_COMMANDS: &[&str] = &[
    "add server be",
    "add server nob/s9 {s1}",
    "add server st/s9 {s1}",
    "add server be/s9",
    "add server tcpb/s9 {s1} proto h2",
    "add server be/s9 {s1} cookie x",
    "add server be/s9 {s1} bogus",
    "add server be/s9 {s1} weight 300",
    "add server be/s9 {s1} verify bad",
    "add server be/s9 {s1} track be/nope",
    "add server be/s9 {s1} track nob/s1",
    "add server be/s9 {s1} track be/s1",
    "add server be/s9 {s1}",
    "add server be/s9 {s1}",
    "add server be/s8 {s1} track be/s9",
    "del server nob/s9",
    "del server be/zz",
    "del server be/s1",
    "disable server be/s1",
    "del server be/s1",
    "enable server be/s9",
    "del server be/s9",
    "disable server be/s9",
    "del server be/s9",
    "del server be/s9",
];

/// Every command's first answer line, on `binary`.
fn answers(binary: PathBuf) -> Vec<String> {
    let s1 = HttpBackend::start("s1");
    let proxy = start(binary, &s1, "");
    DIFF_COMMANDS
        .iter()
        .map(|c| {
            let cmd = c.replace("{s1}", &s1.addr().to_string());
            format!("{c} => {}", first_line(&cli(&proxy, &cmd)))
        })
        .collect()
}

#[test]
fn add_and_del_server_answer_as_haproxy() {
    let Some(haproxy) = haproxy_or_skip("add_and_del_server_answer_as_haproxy") else { return };
    let ours = answers(RAMPART.into());
    let theirs = answers(haproxy);
    assert_eq!(ours, theirs);
}

/// Servers that track `trk/srv`, configured and added at run time, and an ACL that
/// names `trk/t1` by argument.
const TRACK_CFG: &str = "frontend fe2\n  bind fd@${fe2}\n  acl busy srv_sess_rate(trk/t1) gt 50\n  \
                         http-request deny if busy\n  default_backend trk\n\
                         backend trk\n  server srv ${s1_addr}:${s1_port} check inter 100ms\n  \
                         server t1 ${s1_addr}:${s1_port} track srv\n  server t2 ${s1_addr}:${s1_port} track srv\n\
                         backend zero\n  server p0 0.0.0.0:0 check inter 100ms\n";

/// The servers the output says went down for maintenance, in the order it says so.
fn maint_order(output: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|l| l.split("Server ").nth(1))
        .filter(|l| l.contains(" is going DOWN for maintenance"))
        .filter_map(|l| l.split(' ').next())
        .map(str::to_owned)
        .collect()
}

/// What `binary` answers and logs: the CLI's first lines, then the order of the
/// maintenance messages of `trk/srv` and its trackers.
fn tracking_story(binary: PathBuf) -> (Vec<String>, Vec<String>) {
    let s1 = HttpBackend::start("s1");
    let proxy = Proxy::new(binary)
        .listener("fe")
        .listener("fe2")
        .backend("s1", s1.addr())
        .config(&format!("{CFG}{TRACK_CFG}"))
        .start()
        .expect("the proxy starts");
    let mut answers = Vec::new();
    let mut say = |cmd: String| {
        let answer = first_line(&cli(&proxy, &cmd));
        answers.push(format!("{} => {answer}", cmd.replace(&s1.addr().to_string(), "{s1}")));
    };
    for name in ["d1", "d2"] {
        say(format!("add server trk/{name} {} track trk/srv", s1.addr()));
        say(format!("enable server trk/{name}"));
    }
    say("disable server trk/srv".into());
    assert!(proxy.wait_output("trk/t1 is going DOWN", Duration::from_secs(5)), "{}", proxy.output());
    for cmd in ["del server trk/t1", "del server trk/srv", "disable server trk/d1", "del server trk/d1"] {
        say(cmd.into());
    }
    std::thread::sleep(Duration::from_millis(300));
    (answers, maint_order(&proxy.output()))
}

#[test]
fn trackers_hear_of_maintenance_in_haproxys_order() {
    let (answers, order) = tracking_story(RAMPART.into());
    // the newest tracker first, then the configured ones, the last first
    assert_eq!(order, ["trk/srv", "trk/d2", "trk/d1", "trk/t2", "trk/t1"], "{answers:?}");
    assert!(answers[5].ends_with("configuration elements pointing to it."), "named by an ACL: {answers:?}");
    assert!(answers[8].ends_with("Server deleted."), "{answers:?}");
    let Some(haproxy) = haproxy_or_skip("trackers_hear_of_maintenance_in_haproxys_order") else { return };
    assert_eq!((answers, order), tracking_story(haproxy));
}

#[test]
fn a_check_without_port_on_an_unset_address_starts_as_haproxy() {
    // `0.0.0.0:0 check` starts (the check fails); an address without port does not
    let ok = rampart_testkit::check(RAMPART, "backend b\n  server p0 0.0.0.0:0 check\n");
    assert!(!ok.stderr.contains("[ALERT]"), "{ok:?}");
    let bad = rampart_testkit::check(RAMPART, "backend b\n  server p1 127.0.0.1 check\n");
    assert!(bad.stderr.contains("[ALERT]"), "{bad:?}");
    assert!(
        bad.stderr.contains(": backend 'b': server 'p1' has neither service port nor check port."),
        "{}",
        bad.stderr
    );
    let chk = rampart_testkit::check(
        RAMPART,
        "backend b\n  option tcp-check\n  tcp-check connect port 80\n  server p1 127.0.0.1 check\n",
    );
    assert!(!chk.stderr.contains("[ALERT]"), "a connect rule with a port: {chk:?}");
    let Some(haproxy) = haproxy_or_skip("a_check_without_port_on_an_unset_address_starts_as_haproxy") else { return };
    for cfg in ["backend b\n  server p0 0.0.0.0:0 check\n", "backend b\n  server p1 127.0.0.1 check\n"] {
        assert_eq!(rampart_testkit::check(&haproxy, cfg).code, rampart_testkit::check(RAMPART, cfg).code, "{cfg}");
    }
}

/// A response header carrying the queue, slot and weight fetches of `be/s1`.
const FETCH_CFG: &str = "global\n  stats socket ${testdir}/admin.sock level admin\n\
                         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 2s\n\
                         frontend fe\n  bind fd@${fe}\n  default_backend be\n  \
                         http-response set-header x-f %[queue(be)],%[avg_queue(be)],%[connslots(be)],%[be_conn_free(be)],%[srv_conn_free(be/s1)],%[srv_queue(be/s1)],%[srv_weight(be/s1)],%[srv_iweight(be/s1)],%[srv_uweight(be/s1)],%[be_conn_free(nolim)],%[connslots(nolim)]\n  \
                         http-response set-header x-r %[fe_sess_rate],%[fe_req_rate(fe)],%[be_sess_rate(be)],%[srv_sess_rate(be/s1)]\n\
                         backend be\n  server s1 ${s1_addr}:${s1_port} maxconn 10 maxqueue 5 weight 7\n  \
                         server s2 ${s1_addr}:${s1_port} maxconn 4 maxqueue 2 weight 3 backup\n\
                         backend nolim\n  server n1 ${s1_addr}:${s1_port}\n";

fn fetch_values(binary: PathBuf) -> Vec<String> {
    let s1 = HttpBackend::start("s1");
    let proxy = Proxy::new(binary).listener("fe").backend("s1", s1.addr()).config(FETCH_CFG).start().expect("starts");
    let mut seen = Vec::new();
    let got = http_get(proxy.addr("fe"), "/");
    seen.push(got.headers.get("x-f").unwrap_or("-").to_owned());
    cli(&proxy, "set weight be/s1 2");
    seen.push(http_get(proxy.addr("fe"), "/").headers.get("x-f").unwrap_or("-").to_owned());
    seen
}

#[test]
fn queue_slot_and_weight_fetches_read_the_servers_as_haproxy() {
    let ours = fetch_values(RAMPART.into());
    // one stream in flight on s1 (maxconn 10, maxqueue 5): 9 free slots, 14 with the
    // queue, and the backup's 6 slots count in `connslots` but not in `be_conn_free`
    // while s1 is up; `nolim` has no maxconn: -1
    assert_eq!(ours[0], "0,0,20,9,9,0,7,7,7,-1,-1");
    assert_eq!(ours[1], "0,0,20,9,9,0,2,7,2,-1,-1");
    let Some(haproxy) = haproxy_or_skip("queue_slot_and_weight_fetches_read_the_servers_as_haproxy") else { return };
    assert_eq!(ours, fetch_values(haproxy));
}

#[test]
fn rate_fetches_count_the_last_second() {
    let s1 = HttpBackend::start("s1");
    let proxy = Proxy::new(RAMPART).listener("fe").backend("s1", s1.addr()).config(FETCH_CFG).start().expect("starts");
    let mut best = [0i64; 4];
    let deadline = Instant::now() + Duration::from_secs(4);
    while Instant::now() < deadline {
        let got = http_get(proxy.addr("fe"), "/");
        let rates: Vec<i64> =
            got.headers.get("x-r").unwrap_or("").split(',').map(|v| v.parse().unwrap_or(-1)).collect();
        assert_eq!(rates.len(), 4, "{rates:?}");
        for (b, r) in best.iter_mut().zip(&rates) {
            *b = (*b).max(*r);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // about 15 requests a second, each its own connection and session
    assert!(best.iter().all(|&r| (5..=40).contains(&r)), "{best:?}");
}

#[test]
fn a_defaults_rule_must_name_the_backend_of_a_server_argument() {
    // HAProxy resolves the arguments of a named defaults' rules in the defaults
    // section, which has no server: `srv_conn(www)` is refused, `srv_conn(be/www)` is not
    let rule = |arg: &str| {
        format!(
            "defaults d\n  mode http\n  http-request set-header x-test \"%[srv_conn({arg})]\"\n\
             backend be from d\n  server www 127.0.0.1:80\n"
        )
    };
    let bad = rampart_testkit::check(RAMPART, &rule("www"));
    assert!(bad.stderr.contains("backend name must be set in arg 1 of sample fetch keyword 'srv_conn'"), "{bad:?}");
    let good = rampart_testkit::check(RAMPART, &rule("be/www"));
    assert!(!good.stderr.contains("[ALERT]"), "{good:?}");
    let Some(haproxy) = haproxy_or_skip("a_defaults_rule_must_name_the_backend_of_a_server_argument") else { return };
    for arg in ["www", "be/www"] {
        let (ours, theirs) =
            (rampart_testkit::check(RAMPART, &rule(arg)), rampart_testkit::check(&haproxy, &rule(arg)));
        assert_eq!(ours.code, theirs.code, "{arg}: {ours:?} {theirs:?}");
    }
}
