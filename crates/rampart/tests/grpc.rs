//! gRPC end to end with real third-party software: a grpcio (Python, PyPI `grpcio`)
//! server behind rampart (`server ... proto h2`, or TLS with `alpn h2`) and a grpcio
//! client that speaks HTTP/2 to rampart (`bind ... proto h2`, or TLS with `alpn h2`).
//! The peers live in `tests/grpc/peer.py` (generic handlers, raw-bytes messages: no
//! protoc needed); the client prints what each call got, the server what each call
//! brought.
//!
//! `RAMPART_TEST_BINARY=/usr/sbin/haproxy` runs them against haproxy 2.6, which passes.
//!
//! Without python3 and grpcio a test prints a `SKIPPED ...` line; under
//! `RAMPART_REQUIRE_HAPROXY=1` (`.ci/run` sets it and installs grpcio) it fails.

mod http_common;
mod test_pki;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write as _};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use http_common::{binary, PREAMBLE};
use rampart_testkit::{Proxy, Running};

const PEER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/grpc/peer.py");

/// Whether `python3` can import grpcio; without it, skips (`false`) or fails in CI.
fn grpcio_or_skip(test: &str) -> bool {
    let ok =
        Command::new("python3").args(["-c", "import grpc"]).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
    if !ok {
        assert!(
            !rampart_testkit::haproxy_required(),
            "{test}: python3 with grpcio is missing (pip install grpcio), and RAMPART_REQUIRE_HAPROXY makes that a failure"
        );
        let line = format!("SKIPPED {test}: python3 with grpcio is not installed (pip install grpcio)\n");
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
    ok
}

/// One output line of `peer.py`: its kind and its `name=value` fields.
#[derive(Debug)]
struct Line {
    kind: String,
    fields: HashMap<String, String>,
}

impl Line {
    fn parse(text: &str) -> Line {
        let mut parts = text.split('|');
        let kind = parts.next().unwrap_or_default().to_string();
        let fields = parts.filter_map(|p| p.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Line { kind, fields }
    }

    fn get(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }
}

/// The grpcio server, killed on drop; its lines arrive on `lines`.
struct Server {
    child: Child,
    lines: Receiver<Line>,
    addr: SocketAddr,
}

impl Server {
    /// Serves plaintext HTTP/2, or TLS with `tls` (certificate and key files).
    fn start(tls: Option<(&Path, &Path)>) -> Server {
        let mut cmd = Command::new("python3");
        cmd.args([PEER, "server"]);
        if let Some((cert, key)) = tls {
            cmd.arg(cert).arg(key);
        }
        let mut child = cmd.stdout(Stdio::piped()).spawn().expect("python3 runs");
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in out.lines().map_while(Result::ok) {
                let _ = tx.send(Line::parse(&l));
            }
        });
        let first = lines.recv_timeout(Duration::from_secs(10)).expect("the grpcio server prints its port");
        assert_eq!(first.kind, "port", "{first:?}");
        let addr = SocketAddr::from(([127, 0, 0, 1], first.get("port").parse().unwrap()));
        Server { child, lines, addr }
    }

    /// The lines printed so far.
    fn seen(&self) -> Vec<Line> {
        self.lines.try_iter().collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the grpcio client's `cases` (all when empty) through `addr` (over TLS trusting
/// `ca` when given): its lines by case name
/// (`case` lines) or `kind:name` (`expect:total`, `timing:deadline`).
fn client(addr: SocketAddr, ca: Option<&Path>, cases: &[&str]) -> HashMap<String, Line> {
    let mut cmd = Command::new("python3");
    cmd.args([PEER, "client", &addr.to_string()]);
    if let Some(ca) = ca {
        cmd.arg("--ca").arg(ca);
    }
    let out = cmd.args(cases).stderr(Stdio::inherit()).output().expect("python3 runs");
    assert!(out.status.success(), "the grpcio client failed: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(Line::parse)
        .map(|l| {
            (if l.kind == "case" { l.get("name").to_string() } else { format!("{}:{}", l.kind, l.get("name")) }, l)
        })
        .collect()
}

/// rampart with an HTTP/2 listener `fe1` (`bind_opts` on its line) in front of `srv`
/// (`server_opts` on its line).
fn proxy(srv: &Server, bind_opts: &str, server_opts: &str) -> Running {
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}} {bind_opts}\n  server s1 ${{s1_addr}}:${{s1_port}} {server_opts}\n"
    );
    Proxy::new(binary()).backend("s1", srv.addr).listener("fe1").config(&cfg).start().expect("the proxy starts")
}

/// A field holding seconds.
fn secs(line: &Line, name: &str) -> f64 {
    line.get(name).parse().unwrap_or_else(|_| panic!("{name} is not a number: {line:?}"))
}

/// What every call carried to the server: the client's metadata, `:authority`.
fn assert_call(call: &Line, method: &str) {
    assert_eq!(call.get("method"), method, "{call:?}");
    assert_eq!(call.get("host"), "grpc.test", "{call:?}");
    let md = call.get("md");
    assert!(md.contains("x-client:c1") && md.contains("x-client-bin:0102"), "{call:?}");
    assert!(md.contains("user-agent:grpc-python/"), "{call:?}");
}

#[test]
fn grpcio_calls_pass_through_http2_both_sides() {
    if !grpcio_or_skip("grpcio_calls_pass_through_http2_both_sides") {
        return;
    }
    let srv = Server::start(None);
    let proxy = proxy(&srv, "proto h2", "proto h2");
    let got = client(proxy.addr("fe1"), None, &[]);
    let case = |name: &str| got.get(name).unwrap_or_else(|| panic!("no case {name}: {got:?}"));

    let echo = case("echo");
    assert_eq!((echo.get("code"), echo.get("payload")), ("OK", "hello"), "{echo:?}");
    assert_eq!(echo.get("initial"), "x-init:i1", "{echo:?}");
    assert_eq!(echo.get("trailing"), "x-trail:t1,x-trail-bin:00ff", "{echo:?}");

    let gzip = case("gzip");
    assert_eq!((gzip.get("code"), gzip.get("payload")), ("OK", "z".repeat(5000).as_str()), "{gzip:?}");
    let concurrent = case("concurrent");
    assert_eq!(concurrent.get("payload"), "50 True", "{concurrent:?}");

    let fail = case("fail");
    assert_eq!((fail.get("code"), fail.get("details")), ("NOT_FOUND", "no such thing: x"), "{fail:?}");
    assert_eq!(fail.get("trailing"), "x-why:missing", "{fail:?}");
    let unknown = case("unknown");
    assert_eq!((unknown.get("code"), unknown.get("details")), ("UNIMPLEMENTED", "Method not found!"), "{unknown:?}");

    let many = case("many");
    assert_eq!((many.get("code"), many.get("payload")), ("OK", "500 True"), "500 messages in order: {many:?}");
    let total = case("total");
    assert_eq!((total.get("code"), total.get("payload")), ("OK", got["expect:total"].get("value")), "{total:?}");
    let chat = case("chat");
    let replies: Vec<String> = (0..20).map(|i| format!("re:m{i}")).collect();
    assert_eq!((chat.get("code"), chat.get("payload")), ("OK", replies.join(",").as_str()), "ping-pong: {chat:?}");

    let deadline = case("deadline");
    assert_eq!(deadline.get("code"), "DEADLINE_EXCEEDED", "{deadline:?}");
    let took = secs(&got["timing:deadline"], "value");
    assert!(took < 1.5, "the client waited its 0.5 s deadline, not rampart's timeouts: {took}");
    let cancel = case("cancel");
    assert_eq!(cancel.get("code"), "CANCELLED", "{cancel:?}");

    let seen = srv.seen();
    let calls: Vec<&Line> = seen.iter().filter(|l| l.kind == "call").collect();
    let count = |m: &str| calls.iter().filter(|c| c.get("method") == format!("/test.T/{m}")).count();
    let counts = ["Echo", "Fail", "Many", "Total", "Chat"].map(count);
    assert_eq!(counts, [53, 1, 1, 1, 1], "echo, gzip, 50 concurrent, big; the server saw: {seen:?}");
    for call in &calls {
        assert_call(call, call.get("method"));
    }
    assert_call(calls[0], "/test.T/Echo");
    let left = secs(calls[0], "deadline");
    assert!((29.0..=30.0).contains(&left), "grpc-timeout reaches the server: {:?}", calls[0]);
    assert_eq!(calls[1].get("size"), "5000", "the gzip-compressed message, inflated: {:?}", calls[1]);
    assert_call(calls[2], "/test.T/Fail");
    assert_eq!(calls[2].get("deadline"), "none", "{:?}", calls[2]);
    let sizes: Vec<&str> = calls.iter().filter(|c| c.get("size").len() > 6).map(|c| c.get("size")).collect();
    assert_eq!(sizes, ["3145728", "3145728"], "the streamed and the big message, whole: {seen:?}");
    let slow: Vec<&Line> = seen.iter().filter(|l| l.kind == "slow").collect();
    assert_eq!(slow.len(), 2, "the server saw: {seen:?}");
    let (left, waited) = (secs(slow[0], "deadline"), secs(slow[0], "waited"));
    assert!(left > 0.1 && left <= 0.5 && waited < 1.5, "the server's own deadline: {:?}", slow[0]);
    assert_eq!(slow[1].get("deadline"), "none", "{:?}", slow[1]);
    // cancelled after 0.3 s; the client keeps its connection open 1 s longer
    let waited = secs(slow[1], "waited");
    assert!(waited < 1.2, "the client's cancel (RST_STREAM) reaches the server: {:?}", slow[1]);
}

/// TLS on both sides: the client's ALPN h2 to rampart, rampart's `alpn h2` to the server.
#[test]
fn grpcio_over_tls_with_alpn_h2_on_both_sides() {
    if !grpcio_or_skip("grpcio_over_tls_with_alpn_h2_on_both_sides") {
        return;
    }
    let dir = test_pki::fresh_dir("grpc-tls");
    let (ca, ca_key) = test_pki::ca("grpc test CA");
    let pem = test_pki::leaf_pem(&["localhost"], &ca, &ca_key);
    let split = pem.find("-----BEGIN PRIVATE KEY-----").expect("leaf_pem ends with the key");
    let (cert, key): (PathBuf, PathBuf) = (dir.join("srv.crt"), dir.join("srv.key"));
    std::fs::write(&cert, &pem[..split]).unwrap();
    std::fs::write(&key, &pem[split..]).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let both = dir.join("srv.pem");
    std::fs::write(&both, &pem).unwrap();
    let srv = Server::start(Some((&cert, &key)));
    let bind = format!("ssl crt {} alpn h2", both.display());
    let proxy = proxy(&srv, &bind, "ssl verify none alpn h2");
    let got = client(proxy.addr("fe1"), Some(&ca_file), &["echo", "fail", "big"]);
    let echo = &got["echo"];
    assert_eq!((echo.get("code"), echo.get("payload")), ("OK", "hello"), "{echo:?}");
    assert_eq!(echo.get("trailing"), "x-trail:t1,x-trail-bin:00ff", "{echo:?}");
    let fail = &got["fail"];
    assert_eq!((fail.get("code"), fail.get("details")), ("NOT_FOUND", "no such thing: x"), "{fail:?}");
    let big = &got["big"];
    assert_eq!((big.get("code"), big.get("payload")), ("OK", got["expect:big"].get("value")), "{big:?}");
    let seen = srv.seen();
    let calls: Vec<&Line> = seen.iter().filter(|l| l.kind == "call").collect();
    assert_eq!(calls.len(), 3, "{seen:?}");
    assert_call(calls[0], "/test.T/Echo");
    let _ = std::fs::remove_dir_all(&dir);
}
