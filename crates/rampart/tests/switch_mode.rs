//! A `mode tcp` frontend whose connections become HTTP: `tcp-request content switch-mode
//! http [proto h1|h2]`, and a backend in `mode http` chosen by a TCP stream. Each
//! scenario runs through haproxy 2.6 and rampart with fresh backends; what the client
//! received and what the server received must be the same, and rampart's view is then
//! checked on its own (two identical failures must not pass).

mod http_common;

use std::io::{ErrorKind, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use http_common::RAMPART;
use rampart_testkit::{Comparison, Differential, HttpBackend, RawClient, Reply, Request, Response, Running, Seen};

/// A TCP frontend `fe1` switching to HTTP on `switch`, with frontend HTTP rules that
/// show what the TCP stream saw (`x-mode`: `tcp` on the request that switched, `http`
/// after), then an HTTP backend `b` whose own rule names it.
fn cfg(switch: &str, backend_mode: &str) -> String {
    format!(
        "\
global
  nbthread 1
defaults
  timeout client 5s
  timeout server 5s
  timeout connect 1s
frontend fe1
  mode tcp
  bind fd@${{fe1}}
  tcp-request inspect-delay 2s
  tcp-request content set-var(req.mode) internal.strm.is_htx,iif(http,tcp)
  tcp-request content set-var(txn.first) req.payload(0,4)
  {switch}
  tcp-request content reject
  http-request set-header x-mode %[var(req.mode)]
  http-request set-header x-first %[var(txn.first)]
  http-request set-header x-fe %[fe_name]
  default_backend b
backend b
  mode {backend_mode}
  http-request set-header x-be %[be_name]
  server s1 ${{s1_addr}}:${{s1_port}}
"
    )
}

/// A backend answering with the request's path and body length.
fn backend() -> HttpBackend {
    HttpBackend::builder("s1")
        .respond(|req| {
            let line = format!("{} {} len={}\n", req.method, req.path, req.body.len());
            Reply::ok().header("X-Path", &req.path).body(line)
        })
        .start()
}

fn diff(cfg: &str) -> Differential {
    Differential::new(RAMPART).listener("fe1").backend("s1", backend).config(cfg).ignore_header("date")
}

type Responses = Vec<Result<Response, ErrorKind>>;

/// Writes each of `writes` on one connection (pausing `pause` between them), then reads
/// `expect` responses.
fn exchange(proxy: &Running, writes: &[&str], pause: Duration, expect: usize) -> Responses {
    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    for (i, w) in writes.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(pause);
        }
        c.send(w).unwrap();
    }
    (0..expect).map(|_| c.read_response().map_err(|e| e.kind())).collect()
}

fn run_same<T: rampart_testkit::Normalize + PartialEq + std::fmt::Debug>(
    d: &Differential,
    scenario: impl Fn(&Running) -> T,
) -> Option<Comparison<T>> {
    let cmp = d.run(scenario)?;
    cmp.assert_same();
    Some(cmp)
}

fn requests(cmp: &Comparison<impl std::fmt::Debug>) -> Vec<Request> {
    match cmp.rampart.servers.first() {
        Some((_, Seen::Http(reqs))) => reqs.clone(),
        other => panic!("the HTTP backend's requests, got {other:?}"),
    }
}

fn header<'r>(req: &'r Request, name: &str) -> &'r str {
    req.headers.get(name).unwrap_or("-")
}

fn statuses(responses: &Responses) -> Vec<u16> {
    responses.iter().map(|r| r.as_ref().map_or(0, |r| r.status)).collect()
}

/// The request that switched runs the frontend's HTTP rules with what the TCP stream's
/// content rules set (`req.`, `txn.` variables, `is_htx` false); the next one on the
/// same connection is an HTTP stream from the start (its content rules run again).
#[test]
fn http1_rules_apply_and_keep_alive_after_the_switch() {
    let d = diff(&cfg("tcp-request content switch-mode http if HTTP", "http"));
    let Some(cmp) = run_same(&d, |p| {
        let first = "GET /one HTTP/1.1\r\nHost: a\r\n\r\n";
        let second = "POST /two HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello";
        exchange(p, &[first, second], Duration::from_millis(50), 2)
    }) else {
        return;
    };
    assert_eq!(statuses(&cmp.rampart.client), [200, 200]);
    let reqs = requests(&cmp);
    assert_eq!(reqs.len(), 2, "{reqs:#?}");
    let seen: Vec<_> = reqs
        .iter()
        .map(|r| (r.path.as_str(), header(r, "x-mode"), header(r, "x-first"), header(r, "x-fe"), header(r, "x-be")))
        .collect();
    assert_eq!(seen, [("/one", "tcp", "GET", "fe1", "b"), ("/two", "http", "", "fe1", "b")]);
    assert_eq!(reqs[1].body, b"hello");
}

/// What the content rules read while they waited (a head sent in pieces, then two
/// pipelined requests and a body in the same write) reaches the server whole.
#[test]
fn bytes_read_before_the_switch_are_not_lost() {
    let d = diff(&cfg("tcp-request content switch-mode http if HTTP", "http"));
    let Some(cmp) = run_same(&d, |p| {
        let writes = [
            "POST /pie",
            "ces HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET /next HTTP/1.1\r\nHost: a\r\n\r\n",
        ];
        exchange(p, &writes, Duration::from_millis(150), 2)
    }) else {
        return;
    };
    assert_eq!(statuses(&cmp.rampart.client), [200, 200]);
    let reqs = requests(&cmp);
    let seen: Vec<_> = reqs.iter().map(|r| (r.path.as_str(), r.body.as_slice(), header(r, "x-mode"))).collect();
    assert_eq!(seen, [("/pieces", &b"abc"[..], "tcp"), ("/next", &b""[..], "http")]);
}

/// A frontend whose content rules accept (no `switch-mode`) and whose backend is in
/// `mode http`: the stream becomes HTTP when it switches to the backend, and the
/// frontend's HTTP rules apply too (HAProxy warns they are ignored, yet keeps them).
#[test]
fn a_backend_in_http_mode_upgrades_the_stream() {
    let d = diff(&cfg("tcp-request content accept if HTTP", "http"));
    let Some(cmp) = run_same(&d, |p| {
        let req = "GET /a HTTP/1.1\r\nHost: a\r\n\r\n";
        let again = "GET /b HTTP/1.1\r\nHost: a\r\n\r\n";
        exchange(p, &[req, again], Duration::from_millis(50), 2)
    }) else {
        return;
    };
    assert_eq!(statuses(&cmp.rampart.client), [200, 200]);
    let reqs = requests(&cmp);
    let seen: Vec<_> = reqs.iter().map(|r| (r.path.as_str(), header(r, "x-be"), header(r, "x-mode"))).collect();
    assert_eq!(seen, [("/a", "b", "tcp"), ("/b", "b", "http")]);
}

/// `switch-mode http` towards a backend in `mode tcp`: accepted at startup (haproxy
/// only warns for a `listen` without backend), then the connection closes without a
/// response and nothing reaches the server.
#[test]
fn a_tcp_backend_after_the_switch_closes_the_connection() {
    let d = diff(&cfg("tcp-request content switch-mode http if HTTP", "tcp"));
    let Some((h, r)) = d.check() else { return };
    assert_eq!((h.code, r.code), (0, 0), "haproxy:\n{}\nrampart:\n{}", h.stderr, r.stderr);
    let Some(cmp) = run_same(&d, |p| {
        let mut c = RawClient::connect(p.addr("fe1")).unwrap();
        c.set_read_timeout(Duration::from_secs(3)).unwrap();
        c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        c.read_to_end().map_err(|e| e.kind())
    }) else {
        return;
    };
    assert_eq!(cmp.rampart.client, Ok(Vec::new()));
    assert!(requests(&cmp).is_empty());
}

/// `switch-mode http proto h1`: the HTTP/2 preface is a bad request (400), where
/// `switch-mode http` alone would serve HTTP/2.
#[test]
fn proto_h1_refuses_the_http2_preface() {
    let d = diff(&cfg("tcp-request content switch-mode http proto h1 if HTTP", "http"));
    let Some(cmp) = run_same(&d, |p| {
        let mut c = RawClient::connect(p.addr("fe1")).unwrap();
        c.send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
        c.read_response().map(|r| r.status).map_err(|e| e.kind())
    }) else {
        return;
    };
    assert_eq!(cmp.rampart.client, Ok(400));
}

/// Runs curl with HTTP/2 prior knowledge for each of `paths` (a connection each: curl
/// 7.88 fails to reuse a prior-knowledge connection, through haproxy too); its output.
fn curl_h2(proxy: &Running, paths: &[&str]) -> String {
    let addr = proxy.addr("fe1");
    let mut out = String::new();
    for p in paths {
        let mut cmd = Command::new("curl");
        cmd.args(["-sS", "--max-time", "10", "--http2-prior-knowledge", "-w", "%{http_version} %{response_code}\n"]);
        cmd.arg(format!("http://{addr}{p}"));
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("curl");
        child.stdin.take().unwrap().flush().unwrap();
        let got = child.wait_with_output().unwrap();
        out += &String::from_utf8_lossy(&got.stdout);
        out += &String::from_utf8_lossy(&got.stderr);
    }
    out
}

/// HTTP/2 with prior knowledge, by `proto h2` or by the preface `HTTP` matches: every
/// stream is an HTTP stream of the frontend (its content rules ran in HTTP mode).
#[test]
fn http2_prior_knowledge_after_the_switch() {
    for rule in ["tcp-request content switch-mode http proto h2", "tcp-request content switch-mode http if HTTP"] {
        // (curl names the listener's port in `host`)
        let d = diff(&cfg(rule, "http")).ignore_header("host");
        let Some(cmp) = run_same(&d, |p| curl_h2(p, &["/h2a", "/h2b"])) else {
            return;
        };
        assert_eq!(cmp.rampart.client, "GET /h2a len=0\n2 200\nGET /h2b len=0\n2 200\n", "{rule}");
        let reqs = requests(&cmp);
        let seen: Vec<_> = reqs.iter().map(|r| (r.path.as_str(), header(r, "x-mode"), header(r, "x-fe"))).collect();
        assert_eq!(seen, [("/h2a", "http", "fe1"), ("/h2b", "http", "fe1")], "{rule}");
    }
}

/// `bind ... proto none`: the connection cannot become HTTP; haproxy aborts it.
#[test]
fn a_listener_with_proto_none_cannot_switch() {
    let cfg = cfg("tcp-request content switch-mode http if HTTP", "http").replace("fd@${fe1}", "fd@${fe1} proto none");
    let d = diff(&cfg);
    let Some(cmp) = run_same(&d, |p| {
        let mut c = RawClient::connect(p.addr("fe1")).unwrap();
        c.set_read_timeout(Duration::from_secs(3)).unwrap();
        c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        c.read_to_end().map_err(|e| e.kind())
    }) else {
        return;
    };
    assert_eq!(cmp.rampart.client, Ok(Vec::new()));
}
