//! Differential tests: the same configuration and the same exchanges through haproxy
//! 2.6 and rampart, each with fresh backends; the client's view (status, headers, body,
//! raw bytes) and what the server received must be identical. Skipped (with a note)
//! when haproxy is not installed.
//!
//! Known, deliberate differences, each shown by its own test below:
//! - hop-by-hop headers (named by `Connection`, `Keep-Alive`, `Proxy-Connection`, `TE`,
//!   a non-upgrading `Upgrade`) are removed by rampart, forwarded by haproxy (COMPAT
//!   note in rampart's http/mod.rs);
//! - haproxy re-frames chunked bodies (merging chunks it received together, writing sizes
//!   in uppercase hex) and, without `option http-no-delay`, lets the kernel hold a chunk
//!   up to 200 ms; rampart forwards chunks as they come, so only the decoded body is the
//!   same, not the framing nor the timing;
//! - the `Connection` header of an upgrade: haproxy relays the original line in place,
//!   rampart writes `connection: upgrade` last;
//! - with `http-reuse safe`, haproxy sends the first request of every client connection
//!   on a new server connection; rampart lets a replayable one take an idle connection
//!   (COMPAT note on reuse_policy in rampart's stream/mod.rs). Scenarios with several
//!   client connections to a server use `http-reuse never`, which both do alike.

mod http_common;

use std::io::ErrorKind;
use std::time::Duration;

use http_common::{PAGE_400, PAGE_408, PAGE_422, RAMPART};
use rampart_testkit::{
    closed_port, Comparison, Differential, HttpBackend, RawBackend, RawClient, Reply, Response, Running, Seen, Step,
};

/// One listener `fe1` in front of `s1`; short http-request timeout for the 408 case.
const CFG: &str = "\
global
  nbthread 1
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 1s
  timeout http-request 300ms
listen fe1
  bind fd@${fe1}
  server s1 ${s1_addr}:${s1_port}
";

/// A backend answering by path, the same way in both runs.
fn backend() -> HttpBackend {
    HttpBackend::builder("s1")
        .respond(|req| match req.path.as_str() {
            "/404" => Reply::new(404).header("Content-Type", "text/plain").body("no such thing\n"),
            // Under 10 bytes: one hex digit, the same in both cases.
            "/chunked" => Reply::ok().body("chunks").chunked(),
            "/stream" => Reply::ok().chunks(["a", "b", "c"], Duration::from_millis(100)),
            "/garbage" => Reply::raw("garbage\r\n\r\n").close(),
            "/identity" => {
                Reply::raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: identity, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
            }
            "/badres" => Reply::raw("HTTP/1.1 200 OK\r\nX@y{z}: 1\r\nContent-Length: 2\r\n\r\nok"),
            "/echo" => Reply::ok().header("X-Method", &req.method).body(req.body.clone()),
            _ => Reply::ok().header("X-Path", &req.path).header("Cache-Control", "max-age=60").body("hello"),
        })
        .start()
}

fn diff(cfg: &str) -> Differential {
    Differential::new(RAMPART).listener("fe1").backend("s1", backend).config(cfg)
}

/// Responses to `requests`, each written on the same connection then read in turn.
fn exchange(proxy: &Running, requests: &[(&str, &str)]) -> Responses {
    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    requests
        .iter()
        .map(|(method, raw)| {
            c.send(raw).map_err(|e| e.kind())?;
            c.read_response_for(method).map_err(|e| e.kind())
        })
        .collect()
}

/// Everything received until the proxy closes, for each request on its own connection.
fn until_close(proxy: &Running, requests: &[&[u8]]) -> Vec<Vec<u8>> {
    requests
        .iter()
        .map(|raw| {
            let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
            let _ = c.send(raw);
            received_until_close(&mut c)
        })
        .collect()
}

/// What the proxy sent until it closed (what came before a timeout, if it did not).
fn received_until_close(c: &mut RawClient) -> Vec<u8> {
    c.read_to_end().unwrap_or_else(|_| c.buffered().to_vec())
}

/// Runs `scenario` through both binaries, asserts they agree, then runs `check` on
/// rampart's client view (two identical failures must not pass for agreement).
fn run_same<T: rampart_testkit::Normalize + PartialEq + std::fmt::Debug>(
    d: &Differential,
    scenario: impl Fn(&Running) -> T,
    check: impl FnOnce(&T),
) -> Option<Comparison<T>> {
    let cmp = d.run(scenario)?;
    cmp.assert_same();
    check(&cmp.rampart.client);
    Some(cmp)
}

type Responses = Vec<Result<Response, ErrorKind>>;

/// The status of each response (0 for a failed read).
fn statuses(responses: &Responses) -> Vec<u16> {
    responses.iter().map(|r| r.as_ref().map_or(0, |r| r.status)).collect()
}

/// The status line of raw bytes read until the close.
fn status_line(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).lines().next().unwrap_or_default().to_string()
}

#[test]
fn get_with_keep_alive() {
    run_same(
        &diff(CFG),
        |p| {
            exchange(
                p,
                &[
                    ("GET", "GET /a?b=c HTTP/1.1\r\nHost: Example\r\nUser-Agent: diff\r\nX-Mixed-Case: V\r\n\r\n"),
                    ("GET", "GET /second HTTP/1.1\r\nHost: example\r\n\r\n"),
                ],
            )
        },
        |got| assert_eq!(statuses(got), [200, 200]),
    );
}

#[test]
fn post_with_content_length() {
    let post = "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world";
    run_same(
        &diff(CFG),
        |p| exchange(p, &[("POST", post)]),
        |got| assert_eq!(got[0].as_ref().map(|r| r.body.clone()), Ok(b"hello world".to_vec())),
    );
}

#[test]
fn chunked_request_and_response() {
    // One short chunk each way: haproxy re-frames chunks (see the module comment).
    run_same(
        &diff(CFG),
        |p| {
            exchange(
                p,
                &[
                    (
                        "POST",
                        "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
                    ),
                    ("GET", "GET /chunked HTTP/1.1\r\nHost: a\r\n\r\n"),
                ],
            )
        },
        |got| assert_eq!(statuses(got), [200, 200]),
    );
}

#[test]
fn head_and_404() {
    run_same(
        &diff(CFG),
        |p| {
            exchange(
                p,
                &[("HEAD", "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n"), ("GET", "GET /404 HTTP/1.1\r\nHost: a\r\n\r\n")],
            )
        },
        |got| assert_eq!(statuses(got), [200, 404]),
    );
}

#[test]
fn http10_with_and_without_keep_alive() {
    // Two client connections: `http-reuse never` (see the module comment).
    let cfg = CFG.replace("  server s1", "  http-reuse never\n  server s1");
    run_same(
        &diff(&cfg),
        |p| {
            let kept = exchange(p, &[("GET", "GET /ka HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")]);
            let closed = until_close(p, &[b"GET /close HTTP/1.0\r\nHost: a\r\n\r\n"]);
            (kept, closed)
        },
        |(kept, closed)| {
            assert_eq!((statuses(kept), status_line(&closed[0])), (vec![200], "HTTP/1.1 200 OK".to_string()))
        },
    );
}

#[test]
fn expect_100_continue() {
    run_same(
        &diff(CFG),
        |p| {
            let mut c = RawClient::connect(p.addr("fe1")).unwrap();
            c.send("PUT /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n").unwrap();
            let interim = c.read_until("\r\n\r\n").unwrap();
            c.send("data").unwrap();
            (interim, c.read_response().map_err(|e| e.kind()))
        },
        |(interim, resp)| {
            assert_eq!(
                (interim.as_slice(), resp.as_ref().map(|r| r.status)),
                (b"HTTP/1.1 100 Continue\r\n\r\n".as_slice(), Ok(200))
            )
        },
    );
}

#[test]
fn connection_refused_503_keeps_the_client() {
    let cfg = format!(
        "{CFG}listen fe2\n  bind fd@${{fe2}}\n  retries 1\n  timeout connect 100ms\n  server s0 127.0.0.1:{}\n",
        closed_port().port()
    );
    let d = diff(&cfg).listener("fe2");
    run_same(
        &d,
        |p| {
            let mut c = RawClient::connect(p.addr("fe2")).unwrap();
            let first = c.get("/").map_err(|e| e.kind());
            let second = c.get("/again").map_err(|e| e.kind());
            let mut c = RawClient::connect(p.addr("fe2")).unwrap();
            let _ = c.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\npart");
            (vec![first, second], received_until_close(&mut c))
        },
        |(kept, closed)| {
            assert_eq!(
                (statuses(kept), status_line(closed)),
                (vec![503, 503], "HTTP/1.1 503 Service Unavailable".to_string())
            )
        },
    );
}

#[test]
fn invalid_response_502() {
    run_same(
        &diff(CFG),
        |p| {
            exchange(
                p,
                &[("GET", "GET /garbage HTTP/1.1\r\nHost: a\r\n\r\n"), ("GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n")],
            )
        },
        |got| assert_eq!(statuses(got), [502, 200]),
    );
}

#[test]
fn bad_requests_400_reach_no_server() {
    let cmp = run_same(
        &diff(CFG),
        |p| {
            until_close(
                p,
                &[
                    b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
                    b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5x\r\n\r\nhello",
                    b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n",
                    b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                    b"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
                    b"GET / HTTP/1.1\r\nHost: a\r\nX-A: a\rb\r\n\r\n",
                    b"GET / HTTP/1.1\r\nX(A): 1\r\n\r\n",
                    b"GET / FOO/1.1\r\n\r\n",
                ],
            )
        },
        |got| assert!(got.iter().all(|g| g == PAGE_400)),
    );
    if let Some(cmp) = cmp {
        assert_eq!(cmp.rampart.servers[0].1, Seen::Http(Vec::new()));
    }
}

#[test]
fn identity_transfer_coding_422_and_502() {
    // `identity` is not a transfer coding: a request listing it before chunked gets the
    // mux's 422 (never reaching the server), a response listing it a 502.
    let cmp = run_same(
        &diff(CFG),
        |p| {
            let refused = until_close(
                p,
                &[
                    b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n",
                    b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n",
                ],
            );
            (refused, statuses(&exchange(p, &[("GET", "GET /identity HTTP/1.1\r\nHost: a\r\n\r\n")])))
        },
        |(refused, statuses)| {
            assert_eq!(refused[0], PAGE_422);
            assert_eq!(refused[1], PAGE_400);
            assert_eq!(statuses, &[502]);
        },
    );
    if let Some(cmp) = cmp {
        let Seen::Http(requests) = &cmp.rampart.servers[0].1 else { panic!("{:?}", cmp.rampart.servers) };
        assert_eq!(requests.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(), ["/identity"]);
    }
}

#[test]
fn content_length_with_chunked() {
    run_same(
        &diff(CFG),
        |p| {
            until_close(p, &[b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"])
        },
        |got| assert_eq!(status_line(&got[0]), "HTTP/1.1 200 OK"),
    );
}

#[test]
fn incomplete_and_missing_requests_408() {
    // A head that does not complete in time, and a connection that sends nothing.
    run_same(
        &diff(CFG),
        |p| until_close(p, &[b"GET / HTTP/1.1\r\nHost: a\r\n", b""]),
        |got| assert_eq!(got, &[PAGE_408.to_vec(), PAGE_408.to_vec()]),
    );
}

#[test]
fn http_request_return() {
    let cfg = CFG.replace(
        "  server s1",
        "  http-request return status 403 content-type text/plain string \"go away\\n\" hdr X-Why policy\n  server s1",
    );
    run_same(
        &diff(&cfg),
        |p| {
            let kept = exchange(
                p,
                &[("GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"), ("HEAD", "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n")],
            );
            let closed = until_close(p, &[b"GET / HTTP/1.0\r\n\r\n"]);
            (kept, closed)
        },
        |(kept, closed)| {
            assert_eq!(
                (statuses(kept), status_line(&closed[0])),
                (vec![403, 403], "HTTP/1.1 403 Forbidden".to_string())
            )
        },
    );
}

#[test]
fn websocket_upgrade() {
    let d = Differential::new(RAMPART)
        .listener("fe1")
        .backend("s1", || {
            RawBackend::start(vec![
                Step::expect_head(),
                Step::send("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"),
                Step::expect_until("ping"),
                Step::send("pong"),
            ])
        })
        .config(CFG)
        // The Connection header is a hop-by-hop matter: haproxy relays the original line
        // in place, rampart writes `connection: upgrade` last (module comment).
        .ignore_header("connection");
    let Some(cmp) = d.run(|p| {
        let mut c = RawClient::connect(p.addr("fe1")).unwrap();
        c.send("GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").unwrap();
        let resp = c.read_response().map_err(|e| e.kind());
        c.send("ping").unwrap();
        (resp, c.read_until("pong").map_err(|e| e.kind()))
    }) else {
        return;
    };
    assert!(cmp.same_client(), "{cmp:#?}");
    // What the server received, its Connection line aside (raw bytes are not normalized).
    let without_connection = |seen: &[(String, Seen)]| match &seen[0].1 {
        Seen::Raw(conns) => {
            let text = conns[0].received_str();
            text.split("\r\n")
                .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
                .collect::<Vec<_>>()
                .join("\r\n")
        }
        Seen::Http(_) => unreachable!("a RawBackend"),
    };
    assert_eq!(without_connection(&cmp.haproxy.servers), without_connection(&cmp.rampart.servers));
}

#[test]
fn hop_by_hop_headers_are_the_known_difference() {
    let request = "GET / HTTP/1.1\r\nHost: a\r\nConnection: X-Private\r\nX-Private: 1\r\nKeep-Alive: timeout=5\r\n\
                   Proxy-Connection: keep-alive\r\nTE: trailers\r\nUpgrade: h2c\r\nX-Kept: 2\r\n\r\n";
    let scenario = |p: &Running| exchange(p, &[("GET", request)]);
    let Some(cmp) = diff(CFG).run(scenario) else { return };
    // The client sees the same; the server sees the hop-by-hop headers only from haproxy.
    assert!(cmp.same_client());
    assert!(!cmp.same_servers());
    let d = ["connection", "x-private", "keep-alive", "proxy-connection", "te", "upgrade"]
        .iter()
        .fold(diff(CFG), |d, name| d.ignore_header(name));
    run_same(&d, scenario, |got| assert_eq!(statuses(got), [200]));
}

#[test]
fn streamed_chunks_are_the_known_difference() {
    let scenario = |p: &Running| {
        let mut c = RawClient::connect(p.addr("fe1")).unwrap();
        c.send("GET /stream HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        c.read_response_timed().unwrap()
    };
    let Some(haproxy) = rampart_testkit::haproxy_or_skip("streamed_chunks_are_the_known_difference") else { return };
    let s1 = backend();
    let reference = http_common::start_binary(haproxy, CFG, &[("s1", s1.addr())]);
    let theirs = scenario(&reference);
    drop(reference);
    let s1 = backend();
    let ours = http_common::start_binary(RAMPART, CFG, &[("s1", s1.addr())]);
    let ours = scenario(&ours);
    // Same message ...
    assert_eq!(theirs.response.body, ours.response.body);
    assert_eq!(theirs.response.raw_head(), ours.response.raw_head());
    // ... but rampart delivered each chunk when it was written, 100 ms apart.
    let gaps = ours.gaps();
    assert!(gaps[1..].iter().all(|g| *g >= Duration::from_millis(60)), "{gaps:?}");
}

/// `option http-pretend-keepalive` with `http-server-close`: the server connection still
/// closes after each response, but the request does not say so (no `Connection: close`
/// on HTTP/1.1, `Connection: keep-alive` added on HTTP/1.0), as haproxy 2.6's
/// `h1_update_req_conn_value()`. The client keeps its connection.
#[test]
fn pretend_keepalive_hides_the_close_from_the_server() {
    let cfg = CFG.replace("listen fe1\n", "listen fe1\n  option http-server-close\n  option http-pretend-keepalive\n");
    let requests = [
        ("GET", "GET /a HTTP/1.1\r\nHost: h\r\n\r\n"),
        ("GET", "GET /b HTTP/1.1\r\nHost: h\r\n\r\n"),
        ("GET", "GET /c HTTP/1.0\r\n\r\n"),
    ];
    let Some(cmp) = run_same(&diff(&cfg), |p| exchange(p, &requests), |got| assert_eq!(statuses(got), [200, 200, 200]))
    else {
        return;
    };
    let Seen::Http(reqs) = &cmp.rampart.servers[0].1 else { panic!("an HTTP backend") };
    let heads: Vec<_> = reqs.iter().map(|r| (r.raw_head_str(), r.conn)).collect();
    assert_eq!(
        heads,
        [
            ("GET /a HTTP/1.1\r\nhost: h\r\n\r\n".to_string(), 1),
            ("GET /b HTTP/1.1\r\nhost: h\r\n\r\n".to_string(), 2),
            ("GET /c HTTP/1.0\r\nconnection: keep-alive\r\n\r\n".to_string(), 3),
        ]
    );
}

/// `option accept-invalid-http-request` / `-response`: what haproxy 2.6 lets through
/// (non-ASCII bytes in the target, non-token bytes in header names, a version it does
/// not check) reaches the server and the client the same way through both; without
/// the options the same messages are refused (400, 502).
#[test]
fn accept_invalid_http_request_and_response() {
    let requests = [
        ("GET", "GET /caf\u{e9} HTTP/1.1\r\nHost: h\r\nX Bad{name}: v\r\n\r\n"),
        ("GET", "GET /badres HTTP/1.1\r\nHost: h\r\n\r\n"),
    ];
    let opts = "listen fe1\n  option accept-invalid-http-request\n  option accept-invalid-http-response\n";
    let cfg = CFG.replace("listen fe1\n", opts);
    let Some(cmp) = run_same(&diff(&cfg), |p| exchange(p, &requests), |got| assert_eq!(statuses(got), [200, 200]))
    else {
        return;
    };
    let Seen::Http(reqs) = &cmp.rampart.servers[0].1 else { panic!("an HTTP backend") };
    assert_eq!(reqs[0].raw_head_str(), "GET /caf\u{e9} HTTP/1.1\r\nhost: h\r\nx bad{name}: v\r\n\r\n");
    let strict = |p: &Running| {
        let mut out = until_close(p, &[requests[0].1.as_bytes()]).iter().map(|r| status_line(r)).collect::<Vec<_>>();
        out.extend(exchange(p, &requests[1..]).iter().map(|r| r.as_ref().map_or(0, |r| r.status).to_string()));
        out
    };
    run_same(&diff(CFG), strict, |got| assert_eq!(got, &["HTTP/1.1 400 Bad request", "502"]));
}
