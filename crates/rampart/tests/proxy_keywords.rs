//! Proxy keywords real configurations carry, each compared with haproxy 2.6 on the same
//! configuration where a client or a server sees the difference: `errorloc`,
//! `errorloc302`, `errorloc303` (a redirect instead of the error page),
//! `http-send-name-header` (the server's name in a request header), `disabled` /
//! `enabled` (a stopped proxy: its port refuses connections, a stream sent to it gets a
//! 503, the stats leave it out) and `description` (on the statistics page).

mod http_common;

use std::collections::BTreeSet;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use http_common::*;
use rampart_testkit::{closed_port, haproxy_or_skip, stats_command, HttpBackend, RawClient, Reply, Running};

/// Rampart and, when installed, haproxy 2.6 (required under `RAMPART_REQUIRE_HAPROXY=1`).
fn binaries(test: &str) -> Vec<PathBuf> {
    let mut out = vec![binary()];
    out.extend(haproxy_or_skip(test));
    out
}

fn get_raw(addr: SocketAddr, path: &str) -> Vec<u8> {
    let mut c = RawClient::connect(addr).expect("connect");
    c.send(format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")).expect("send");
    read_all(&mut c)
}

/// The response bytes with header names lowercased (haproxy writes its own error
/// pages' names as the file spells them, rampart too; the comparison is on the rest).
fn lower_names(raw: &[u8]) -> String {
    let text = show(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let mut out = lines.next().unwrap_or_default().to_owned();
    for l in lines {
        let (n, v) = l.split_once(':').unwrap_or((l, ""));
        out.push_str(&format!("\r\n{}:{v}", n.to_ascii_lowercase()));
    }
    format!("{out}\r\n\r\n{body}")
}

const ERRORLOC_CFG: &str = "\
global\n  nbthread 1\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 200ms\n  retries 0\n\
  errorloc 503 http://errors.example/sorry?x=1\n\
listen fe1\n  bind fd@${fe1}\n  errorloc303 403 /denied\n  errorloc302 400 /bad\n\
  http-request deny if { path /deny }\n  server s0 ${s0_addr}:${s0_port}\n";

#[test]
fn errorloc_answers_a_redirect_as_haproxy() {
    let mut seen = Vec::new();
    for bin in binaries("errorloc_answers_a_redirect_as_haproxy") {
        let proxy = start_binary(&bin, ERRORLOC_CFG, &[("s0", closed_port())]);
        let addr = proxy.addr("fe1");
        let answers = [get_raw(addr, "/"), get_raw(addr, "/deny"), {
            let mut c = RawClient::connect(addr).expect("connect");
            c.send("GET / HTTP/1.1\r\nbad header\r\n\r\n").expect("send");
            read_all(&mut c)
        }];
        seen.push(answers.map(|a| lower_names(&a)));
    }
    let ours = &seen[0];
    assert!(
        ours[0].starts_with("HTTP/1.1 302 Found\r\n")
            && ours[0].contains("\r\nlocation: http://errors.example/sorry?x=1\r\n"),
        "{}",
        ours[0]
    );
    assert!(ours[0].contains("\r\ncontent-length: 0\r\n") && ours[0].contains("\r\ncache-control: no-cache\r\n"));
    assert!(ours[1].starts_with("HTTP/1.1 303 See Other\r\n") && ours[1].contains("\r\nlocation: /denied\r\n"));
    // as in haproxy 2.6, a request the HTTP/1 parser refuses gets the built-in page
    assert!(ours[2].starts_with("HTTP/1.1 400 Bad request\r\n"), "{}", ours[2]);
    if let Some(theirs) = seen.get(1) {
        for (o, t) in ours.iter().zip(theirs) {
            let set = |s: &str| s.split("\r\n").map(str::to_owned).collect::<BTreeSet<_>>();
            assert_eq!(set(o), set(t), "rampart:\n{o}\nhaproxy:\n{t}");
        }
    }
}

#[test]
fn http_send_name_header_names_the_server_as_haproxy() {
    let mut seen = Vec::new();
    for bin in binaries("http_send_name_header_names_the_server_as_haproxy") {
        let (s1, s2) = (HttpBackend::start("s1"), HttpBackend::start("s2"));
        let cfg = listen_cfg("", "  balance roundrobin\n  http-send-name-header X-Server-Name\n", &["s1", "s2"]);
        let proxy = start_binary(&bin, &cfg, &[("s1", s1.addr()), ("s2", s2.addr())]);
        let mut c = client(&proxy);
        for i in 0..4 {
            c.send(format!("GET /{i} HTTP/1.1\r\nhost: x\r\nx-server-name: forged\r\nX-Server-Name: again\r\n\r\n"))
                .unwrap();
            assert_eq!(c.read_response().unwrap().status, 200);
        }
        let mut got = Vec::new();
        for s in [&s1, &s2] {
            for r in s.requests() {
                got.push((s.name().to_owned(), r.path.clone(), r.headers.get_all("x-server-name").join("|")));
            }
        }
        got.sort();
        seen.push(got);
    }
    let want: Vec<(String, String, String)> = ["s1 /0", "s1 /2", "s2 /1", "s2 /3"]
        .iter()
        .map(|s| {
            let (srv, path) = s.split_once(' ').unwrap();
            (srv.to_owned(), path.to_owned(), srv.to_owned())
        })
        .collect();
    for (i, got) in seen.iter().enumerate() {
        let mut got = got.clone();
        // roundrobin may start on either server; the name must match the receiver
        got.iter_mut().for_each(|g| g.1 = String::new());
        let mut w = want.clone();
        w.iter_mut().for_each(|g| g.1 = String::new());
        assert_eq!(got, w, "binary #{i}: each server got its own name once, the client's copies removed");
    }
}

/// A request on its own connection to `addr`; its status (0: refused or no answer).
fn status_of(addr: SocketAddr) -> u16 {
    match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
        Err(_) => 0,
        Ok(_) => {
            let mut c = RawClient::connect(addr).expect("connect");
            c.send("GET / HTTP/1.1\r\nhost: x\r\n\r\n").expect("send");
            c.read_response().map(|r| r.status).unwrap_or(0)
        }
    }
}

/// `show stat`'s `pxname/svname` column pairs.
fn stat_rows(sock: &Path) -> BTreeSet<String> {
    stats_command(sock, "show stat\n")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split(',').take(2).collect::<Vec<_>>().join("/"))
        .collect()
}

fn disabled_cfg(port: u16) -> String {
    format!(
        "global\n  nbthread 1\n  stats socket ${{testdir}}/admin.sock level admin\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n  disabled\n\
         frontend off\n  bind 127.0.0.1:{port}\n  default_backend live\n\
         frontend fe1\n  enabled\n  bind fd@${{fe1}}\n  use_backend stopped if {{ path /stopped }}\n  default_backend live\n\
         backend live\n  enabled\n  server s1 ${{s1_addr}}:${{s1_port}}\n\
         backend stopped\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    )
}

#[test]
fn a_disabled_proxy_is_not_started_as_in_haproxy() {
    let mut seen = Vec::new();
    for bin in binaries("a_disabled_proxy_is_not_started_as_in_haproxy") {
        let s1 = HttpBackend::start("s1");
        let port = rampart_testkit::closed_port().port();
        let proxy: Running = start_binary(&bin, &disabled_cfg(port), &[("s1", s1.addr())]);
        let off: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let fe1 = proxy.addr("fe1");
        let mut c = RawClient::connect(fe1).unwrap();
        let (live, stopped) = (c.get("/").unwrap().status, c.get("/stopped").unwrap().status);
        let refused = status_of(off) == 0;
        let rows = stat_rows(&proxy.dir().join("admin.sock"));
        seen.push((refused, live, stopped, rows, s1.requests().len()));
    }
    let (refused, live, stopped, rows, reached) = &seen[0];
    assert!(*refused, "the disabled frontend's port refuses connections");
    assert_eq!((*live, *stopped), (200, 503), "a disabled backend answers 503");
    assert_eq!(*reached, 1, "only the live backend's request reached the server");
    let want: BTreeSet<String> = ["fe1/FRONTEND", "live/s1", "live/BACKEND"].map(str::to_owned).into();
    assert_eq!(rows, &want, "disabled proxies have no stats row");
    if let Some(theirs) = seen.get(1) {
        assert_eq!(&seen[0], theirs, "rampart then haproxy");
    }
}

#[test]
fn description_shows_on_the_statistics_page() {
    let s1 = HttpBackend::builder("s1").respond(|_| Reply::ok().body("ok")).start();
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  description Shop front  (EU)\n  stats enable\n  stats uri /st\n\
         server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let proxy = start(&cfg, &[("s1", s1.addr())]);
    let page = show(&get_raw(proxy.addr("fe1"), "/st"));
    assert!(page.contains("Shop front (EU)"), "the words joined by one space, as HAProxy: {page}");
}
