//! Balancing algorithms through the real binary: distribution per algorithm,
//! stickiness of the hashing ones (`source`, `uri`, `hdr`, `url_param`, `hash`), the
//! round-robin fallback when the key is missing, and a side-by-side run against
//! haproxy measuring how often the same key reaches the same server with
//! `hash-type consistent` and `map-based`. Every backend answers with its name.

mod http_common;

use std::collections::HashMap;
use std::net::SocketAddr;

use http_common::{binary, start_binary, PREAMBLE};
use rampart_testkit::{haproxy_or_skip, HttpBackend, RawClient, Running};

const NAMES: [&str; 4] = ["s1", "s2", "s3", "s4"];

/// `backend be` with `lines` and one server per name (`server_opts[i]` appended).
fn cfg(lines: &str, names: &[&str], server_opts: &[&str]) -> String {
    let mut cfg = format!("{PREAMBLE}frontend fe1\n  bind fd@${{fe1}}\n  default_backend be\nbackend be\n{lines}");
    for (i, n) in names.iter().enumerate() {
        let opt = server_opts.get(i).copied().unwrap_or("");
        cfg.push_str(&format!("  server {n} ${{{n}_addr}}:${{{n}_port}} {opt}\n"));
    }
    cfg
}

struct Setup {
    proxy: Running,
    _backends: Vec<HttpBackend>,
}

fn start_with(bin: impl Into<std::path::PathBuf>, lines: &str, names: &[&str], opts: &[&str]) -> Setup {
    let backends: Vec<HttpBackend> = names.iter().map(|n| HttpBackend::start(n)).collect();
    let addrs: Vec<(&str, SocketAddr)> = names.iter().copied().zip(backends.iter().map(|b| b.addr())).collect();
    Setup { proxy: start_binary(bin, &cfg(lines, names, opts), &addrs), _backends: backends }
}

fn start(lines: &str, names: &[&str], opts: &[&str]) -> Setup {
    start_with(binary(), lines, names, opts)
}

/// Who served `GET path` with the extra header lines `hdrs`, on a new connection.
fn who(s: &Setup, path: &str, hdrs: &str) -> String {
    let mut c = RawClient::connect(s.proxy.addr("fe1")).unwrap();
    c.send(format!("GET {path} HTTP/1.1\r\nHost: t\r\n{hdrs}Connection: close\r\n\r\n")).unwrap();
    let res = c.read_response().unwrap();
    assert_eq!(res.status, 200, "{path} {hdrs:?}");
    res.body_str()
}

fn tally(names: impl Iterator<Item = String>) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for n in names {
        *m.entry(n).or_insert(0) += 1;
    }
    m
}

fn n(t: &HashMap<String, usize>, name: &str) -> usize {
    t.get(name).copied().unwrap_or(0)
}

#[test]
fn leastconn_rotates_between_idle_servers() {
    let s = start("  balance leastconn\n", &NAMES[..3], &[]);
    let t = tally((0..30).map(|_| who(&s, "/", "")));
    assert!(NAMES[..3].iter().all(|name| (8..=12).contains(&n(&t, name))), "{t:?}");
}

#[test]
fn first_fills_the_first_server() {
    let s = start("  balance first\n", &NAMES[..3], &["maxconn 10", "maxconn 10", ""]);
    let t = tally((0..10).map(|_| who(&s, "/", "")));
    assert_eq!(n(&t, "s1"), 10, "{t:?}");
}

#[test]
fn random_follows_weights() {
    let s = start("  balance random(1)\n", &NAMES[..2], &["weight 1", "weight 3"]);
    let t = tally((0..400).map(|_| who(&s, "/", "")));
    // 100 / 300 expected; the ring of 64 points is lumpy
    assert!((40..=170).contains(&n(&t, "s1")), "{t:?}");
}

#[test]
fn source_sticks_to_one_server() {
    let s = start("  balance source\n", &NAMES, &[]);
    let t = tally((0..12).map(|_| who(&s, "/", "")));
    assert_eq!(t.len(), 1, "{t:?}");
}

#[test]
fn uri_sticks_per_path_and_spreads_paths() {
    let s = start("  balance uri\n  hash-type consistent\n", &NAMES, &[]);
    let mut seen = HashMap::new();
    for k in 0..60 {
        let path = format!("/obj/{k}");
        let a = who(&s, &path, "");
        // the query does not count without `whole`
        assert_eq!(who(&s, &format!("{path}?v={k}"), ""), a, "{path}");
        seen.insert(a, ());
    }
    assert!(seen.len() >= 3, "{seen:?}");
}

#[test]
fn uri_depth_keeps_a_directory_together() {
    let s = start("  balance uri depth 1\n", &NAMES, &[]);
    for d in 0..10 {
        let a = who(&s, &format!("/d{d}/x"), "");
        assert_eq!(who(&s, &format!("/d{d}/y/z"), ""), a);
    }
}

#[test]
fn hdr_sticks_and_falls_back_to_round_robin() {
    let s = start("  balance hdr(x-user)\n", &NAMES, &[]);
    for k in 0..20 {
        let h = format!("X-User: user{k}\r\n");
        assert_eq!(who(&s, "/a", &h), who(&s, "/b", &h));
    }
    // without the header: round robin over the map
    let t = tally((0..8).map(|_| who(&s, "/", "")));
    assert!(NAMES.iter().all(|name| n(&t, name) == 2), "{t:?}");
}

#[test]
fn hdr_use_domain_only() {
    let s = start("  balance hdr(x-host) use_domain_only\n", &NAMES, &[]);
    for k in 0..10 {
        let a = who(&s, "/", &format!("X-Host: www.site{k}.com\r\n"));
        assert_eq!(who(&s, "/", &format!("X-Host: api.site{k}.org\r\n")), a);
    }
}

#[test]
fn url_param_and_hash_expression_stick() {
    let s = start("  balance url_param id\n", &NAMES, &[]);
    for k in 0..20 {
        assert_eq!(who(&s, &format!("/a?id={k}"), ""), who(&s, &format!("/b?x=1&id={k}"), ""));
    }
    let s = start("  balance hash req.cook(sid)\n  hash-type consistent\n", &NAMES, &[]);
    for k in 0..20 {
        let h = format!("Cookie: sid={k}\r\n");
        assert_eq!(who(&s, "/a", &h), who(&s, "/b", &h));
    }
}

#[test]
fn consistent_ring_moves_only_the_removed_servers_keys() {
    let keys: Vec<String> = (0..200).map(|k| format!("/key/{k}")).collect();
    let all = start("  balance uri\n  hash-type consistent\n", &NAMES, &[]);
    let before: Vec<String> = keys.iter().map(|k| who(&all, k, "")).collect();
    let three = start("  balance uri\n  hash-type consistent\n", &NAMES, &["", "", "disabled", ""]);
    let after: Vec<String> = keys.iter().map(|k| who(&three, k, "")).collect();
    let mut moved = 0;
    for (b, a) in before.iter().zip(&after) {
        if b == "s3" {
            moved += 1;
            assert_ne!(a, "s3");
        } else {
            assert_eq!(a, b, "a key of a remaining server moved");
        }
    }
    assert!(moved > 10, "s3 had only {moved} keys");
}

/// Makes the request path and extra header lines of key number `k`.
type KeyFn<'a> = &'a dyn Fn(usize) -> (String, String);

/// The same keys through haproxy and rampart: the share that reached the same server.
fn agreement(lines: &str, opts: &[&str], key: KeyFn<'_>) -> Option<f64> {
    let haproxy = haproxy_or_skip("balancing agreement with haproxy")?;
    let r = start_with(binary(), lines, &NAMES, opts);
    let h = start_with(haproxy, lines, &NAMES, opts);
    let total = 250;
    let mut used = HashMap::new();
    let same = (0..total)
        .filter(|&k| {
            let (path, hdrs) = key(k);
            let ours = who(&r, &path, &hdrs);
            let same = ours == who(&h, &path, &hdrs);
            used.insert(ours, ());
            same
        })
        .count();
    let rate = same as f64 / total as f64;
    eprintln!("agreement with haproxy for {lines:?} {opts:?}: {same}/{total} ({:.1}%)", rate * 100.0);
    // the keys spread: agreeing is not trivial
    assert!(used.len() >= 3, "{lines:?}: keys went to {used:?} only");
    Some(rate)
}

#[test]
fn same_server_as_haproxy() {
    let uri = |k: usize| (format!("/item/{k}?q={k}"), String::new());
    let hdr = |k: usize| ("/".to_owned(), format!("X: client-{k}\r\n"));
    let cases: [(&str, KeyFn<'_>); 8] = [
        ("  balance uri\n  hash-type consistent\n", &uri),
        ("  balance uri\n  hash-type map-based\n", &uri),
        ("  balance hdr(x)\n  hash-type consistent\n", &hdr),
        ("  balance hdr(x)\n  hash-type map-based\n", &hdr),
        ("  balance uri whole\n  hash-type consistent djb2\n", &uri),
        ("  balance uri\n  hash-type map-based wt6 avalanche\n", &uri),
        ("  balance hdr(x)\n  hash-type consistent crc32 avalanche\n", &hdr),
        ("  balance hdr(x)\n  hash-type map-based sdbm\n", &hdr),
    ];
    let weighted: &[&str] = &["weight 1", "weight 2", "weight 3", "weight 4"];
    for (i, (lines, key)) in cases.into_iter().enumerate() {
        let opts = if i % 2 == 0 { &[][..] } else { weighted };
        let Some(rate) = agreement(lines, opts, key) else { return };
        assert!(rate >= 0.99, "{lines:?}: only {:.1}% of the keys on the same server as haproxy", rate * 100.0);
    }
    let Some(rate) = agreement("  balance uri\n  hash-type consistent\n", weighted, &uri) else { return };
    assert!(rate >= 0.99, "weighted ring: {:.1}%", rate * 100.0);
    // custom ids place the servers elsewhere on the ring
    let Some(rate) = agreement("  balance uri\n  hash-type consistent\n", &["id 7", "", "id 2", "id 12"], &uri) else {
        return;
    };
    assert!(rate >= 0.99, "custom ids: {:.1}%", rate * 100.0);
    // the other key sources
    let abs = |k: usize| (format!("http://t/a{k}/item?q={k}"), String::new());
    let param = |k: usize| (format!("/p?a=1&id=user{k}&z"), String::new());
    let host = |k: usize| ("/".to_owned(), format!("X-Host: www.site{k}.com\r\n"));
    let cookie = |k: usize| ("/".to_owned(), format!("Cookie: a=b; sid=s{k}\r\n"));
    let more: [(&str, KeyFn<'_>); 6] = [
        ("  balance uri path-only\n  hash-type consistent\n", &abs),
        ("  balance uri depth 3 len 40\n", &abs),
        ("  balance url_param id\n  hash-type consistent\n", &param),
        ("  balance hdr(x-host) use_domain_only\n", &host),
        ("  balance hash req.cook(sid)\n  hash-type consistent\n", &cookie),
        ("  balance hash req.cook(sid),lower\n", &cookie),
    ];
    for (lines, key) in more {
        let Some(rate) = agreement(lines, weighted, key) else { return };
        assert!(rate >= 0.99, "{lines:?}: {:.1}%", rate * 100.0);
    }
    // a server out of rotation: HAProxy takes it out of its tree or map
    let one_off: &[&str] = &["weight 2", "", "disabled", "weight 3"];
    for lines in ["  balance uri\n  hash-type consistent\n", "  balance uri\n  hash-type map-based\n"] {
        let Some(rate) = agreement(lines, one_off, &uri) else { return };
        assert!(rate >= 0.99, "{lines:?} with a disabled server: {:.1}%", rate * 100.0);
    }
}

#[test]
fn allbackups_balances_over_every_backup() {
    let lines = "  option allbackups\n";
    let s = start(lines, &NAMES, &["disabled", "backup", "backup weight 2", "backup disabled"]);
    let t = tally((0..30).map(|_| who(&s, "/", "")));
    assert_eq!((n(&t, "s2"), n(&t, "s3")), (10, 20), "{t:?}");
    // without the option, only the first backup
    let s = start("", &NAMES, &["disabled", "backup", "backup weight 2", "backup disabled"]);
    assert_eq!(n(&tally((0..6).map(|_| who(&s, "/", ""))), "s2"), 6);
}

#[test]
fn retry_on_none_gives_up_at_the_first_failure() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let live = HttpBackend::start("s2");
    let run = |lines: &str| {
        let cfg = cfg(&format!("  option redispatch\n  retries 1\n{lines}"), &["s1", "s2"], &[]);
        let proxy = start_binary(binary(), &cfg, &[("s1", dead), ("s2", live.addr())]);
        // round robin starts on s1, the dead one
        let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
        c.send("GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").unwrap();
        c.read_response().unwrap().status
    };
    assert_eq!(run(""), 200, "redispatched to s2");
    assert_eq!(run("  retry-on none\n"), 503);
    assert_eq!(run("  retry-on conn-failure\n"), 200);
}

#[test]
fn static_rr_sequence_is_haproxys() {
    let Some(haproxy) = haproxy_or_skip("static-rr sequence against haproxy") else { return };
    let opts = ["weight 1", "weight 2", "weight 3", "weight 4"];
    let r = start_with(binary(), "  balance static-rr\n", &NAMES, &opts);
    let h = start_with(haproxy, "  balance static-rr\n", &NAMES, &opts);
    let ours: Vec<String> = (0..20).map(|_| who(&r, "/", "")).collect();
    let theirs: Vec<String> = (0..20).map(|_| who(&h, "/", "")).collect();
    assert_eq!(ours, theirs);
}

#[test]
fn source_and_hash_in_tcp_mode() {
    for lines in ["  mode tcp\n  balance source\n", "  mode tcp\n  balance hash src\n  hash-type consistent\n"] {
        let backends: Vec<HttpBackend> = NAMES.iter().map(|n| HttpBackend::start(n)).collect();
        let addrs: Vec<(&str, SocketAddr)> = NAMES.iter().copied().zip(backends.iter().map(|b| b.addr())).collect();
        let text = cfg(lines, &NAMES, &[]).replace("frontend fe1\n", "frontend fe1\n  mode tcp\n");
        let s = Setup { proxy: start_binary(binary(), &text, &addrs), _backends: backends };
        let t = tally((0..8).map(|_| who(&s, "/", "")));
        assert_eq!(t.len(), 1, "{lines:?}: {t:?}");
    }
}

#[test]
fn peak_ewma_avoids_a_slow_server() {
    use rampart_testkit::Reply;
    let slow =
        HttpBackend::builder("s1").reply(Reply::ok().body("s1").delay(std::time::Duration::from_millis(150))).start();
    let fast: Vec<HttpBackend> = ["s2", "s3"].iter().map(|n| HttpBackend::start(n)).collect();
    let addrs = [("s1", slow.addr()), ("s2", fast[0].addr()), ("s3", fast[1].addr())];
    let proxy = start_binary(binary(), &cfg("  balance peak-ewma decay 20s\n", &NAMES[..3], &[]), &addrs);
    let s = Setup { proxy, _backends: Vec::new() };
    let t = tally((0..40).map(|_| who(&s, "/", "")));
    // round robin would send it 13; once measured it loses every draw
    assert!(n(&t, "s1") <= 3, "{t:?}");
    // each fast server wins the draws against s1 (a third of them, about 13 of 40); the
    // draws between the two fast ones go to whichever has the lower score at the time
    assert!(n(&t, "s2") >= 5 && n(&t, "s3") >= 5, "{t:?}");
}
