//! What HAProxy 2.6's reg-tests `http-messaging/h1_host_normalization`,
//! `http_request_buffer`, `http_abortonclose` and `http-rules/normalize_uri` check,
//! rampart against haproxy 2.6 through the same configuration and the same bytes:
//!
//! - the request line of the log (`%r`) is the parsed one, as HAProxy's
//!   `http_fmt_req_line` writes it: one space between the parts whatever the client
//!   sent, and without the default (or empty) port the H1 mux cut from an absolute-form
//!   target; the server gets the same target and `Host`;
//! - `option abortonclose`: a client leaving while its stream retries the connection to
//!   a server is logged with that server (`be/srv`, `CC--`), one leaving while queued
//!   with `<NOSRV>` and `CQ--`;
//! - `option http-buffer-request`: a client leaving before the end of its body is logged
//!   under the backend the switching rules pick (`be/<NOSRV>`, `CR--`);
//! - `option accept-invalid-http-request` lets a fragment (`#`) through the target, for
//!   `normalize-uri fragment-strip` / `fragment-encode`; without it, a 400.
//!
//! Skipped (with a visible line) when haproxy is not installed;
//! `RAMPART_REQUIRE_HAPROXY=1` makes that a failure.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::Duration;

use rampart_testkit::{closed_port, Differential, HttpBackend, Normalize, Normalizer, Reply, Running};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// The log lines (the part after the syslog header) and the responses a run produced.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    lines: Vec<String>,
    responses: Vec<String>,
}

impl Normalize for Seen {
    fn normalize(&mut self, _: &Normalizer) {}
}

fn backend() -> HttpBackend {
    HttpBackend::builder("s1")
        .respond(|req| match req.path.ends_with("/slow") {
            true => Reply::ok().body("late").delay(Duration::from_millis(800)),
            false => Reply::ok().body("ok"),
        })
        .start()
}

/// Sends `raw` on a new connection, waits `hold`, then closes; returns what came back
/// (status line and the headers this test adds) when `read` is set.
fn send(addr: SocketAddr, raw: &[&[u8]], hold: Duration, read: bool) -> String {
    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    for (i, part) in raw.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(20));
        }
        c.write_all(part).unwrap();
    }
    std::thread::sleep(hold);
    if !read {
        return String::new();
    }
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    let text = String::from_utf8_lossy(&got);
    text.lines()
        .filter(|l| l.starts_with("HTTP/") || l.starts_with("before:") || l.starts_with("after:"))
        .map(|l| l.trim_end().to_owned())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The next log line, without its syslog header.
fn next_line(rx: &UdpSocket) -> String {
    rx.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    let mut buf = [0u8; 8192];
    match rx.recv(&mut buf) {
        Ok(n) => {
            let line = String::from_utf8_lossy(&buf[..n]);
            line.split_once("]: ").map_or(line.as_ref(), |(_, b)| b).trim_end().to_owned()
        }
        Err(_) => "<no line>".to_owned(),
    }
}

fn drain(rx: &UdpSocket) {
    rx.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let mut buf = [0u8; 8192];
    while rx.recv(&mut buf).is_ok() {}
}

fn config(syslog: SocketAddr, dead: SocketAddr) -> String {
    format!(
        "global\n  log {syslog} local0\n  expose-experimental-directives\n\
         defaults\n  mode http\n  log global\n  retries 0\n\
         \x20 timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         \x20 log-format \"%r|%hr|%b/%s|%ts|%ST\"\n\
         frontend fe1\n  bind fd@${{fe1}}\n  http-request capture req.hdr(host) len 64\n\
         \x20 use_backend retrying if {{ path /retried }}\n  use_backend one if {{ path_beg /q }}\n  default_backend be\n\
         frontend fe2\n  bind fd@${{fe2}}\n  option http-buffer-request\n  use_backend be\n\
         frontend fe3\n  bind fd@${{fe3}}\n  option accept-invalid-http-request\n\
         \x20 http-request set-var(txn.before) url\n  http-request normalize-uri fragment-strip if {{ path_beg /s }}\n\
         \x20 http-request normalize-uri fragment-encode if {{ path_beg /e }}\n\
         \x20 http-request set-var(txn.after) url\n\
         \x20 http-response add-header before %[var(txn.before)]\n  http-response add-header after %[var(txn.after)]\n\
         \x20 default_backend be\n\
         frontend fe4\n  bind fd@${{fe4}}\n  http-request normalize-uri fragment-strip\n  default_backend be\n\
         backend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n\
         backend retrying\n  option abortonclose\n  retries 10\n  server srv1 {dead}\n\
         backend one\n  option abortonclose\n  timeout queue 5s\n  server s1 ${{s1_addr}}:${{s1_port}} maxconn 1\n"
    )
}

fn scenario(rx: &UdpSocket, proxy: &Running) -> Seen {
    drain(rx);
    let (fe1, fe2, fe3, fe4) = (proxy.addr("fe1"), proxy.addr("fe2"), proxy.addr("fe3"), proxy.addr("fe4"));
    let none = Duration::ZERO;
    let mut lines = Vec::new();
    let mut responses = Vec::new();
    // the request line: blanks, default and empty ports
    for raw in [
        &b"POST /1  HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"[..],
        b"GET \t/t \t HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET http://x:80/c20 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET https://x:/c25 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET http://x:/c29 HTTP/1.1\r\nHost: x:80\r\nConnection: close\r\n\r\n",
        b"GET http://x:8080/c2 HTTP/1.1\r\nHost: x:8080\r\nConnection: close\r\n\r\n",
    ] {
        responses.push(send(fe1, &[raw], none, true));
        lines.push(next_line(rx));
    }
    // abortonclose: the client leaves while the connection to a closed port is retried
    send(fe1, &[b"GET /retried HTTP/1.1\r\nHost: x\r\n\r\n"], Duration::from_millis(100), false);
    lines.push(next_line(rx));
    // abortonclose: the client leaves while queued behind a slow request
    let first = std::thread::spawn(move || {
        send(fe1, &[b"GET /q/slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"], none, true)
    });
    std::thread::sleep(Duration::from_millis(200));
    send(fe1, &[b"GET /q/c4 HTTP/1.1\r\nHost: x\r\n\r\n"], Duration::from_millis(200), false);
    lines.push(next_line(rx));
    responses.push(first.join().unwrap());
    lines.push(next_line(rx));
    // http-buffer-request: the client leaves before the last CRLF of its chunked body
    let head: &[u8] = b"POST /2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n1\r\n1";
    send(fe2, &[head, b"\r\n1\r\n0\r\n"], Duration::from_millis(50), false);
    lines.push(next_line(rx));
    // fragments with accept-invalid-http-request, refused without
    for raw in [
        &b"GET /s#foo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"[..],
        b"GET /e#foo/#bar HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    ] {
        responses.push(send(fe3, &[raw], none, true));
        lines.push(next_line(rx));
    }
    responses.push(send(fe4, &[b"GET /#foo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"], none, true));
    lines.push(next_line(rx));
    Seen { lines, responses }
}

#[test]
fn request_line_aborts_and_fragments_as_haproxy() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let syslog = rx.local_addr().unwrap();
    let dead = closed_port();
    let diff = Differential::new(RAMPART)
        .listener("fe1")
        .listener("fe2")
        .listener("fe3")
        .listener("fe4")
        .backend("s1", backend)
        .ignore_header("date")
        .config(&config(syslog, dead));
    let Some(cmp) = diff.run(|proxy| scenario(&rx, proxy)) else { return };
    let (h, r) = (&cmp.haproxy.client, &cmp.rampart.client);
    let show = || format!("=== haproxy ===\n{h:#?}\n=== rampart ===\n{r:#?}");
    // what the reg-tests expect of haproxy, so that the comparison means something
    let expected_of_haproxy = [
        "POST /1 HTTP/1.1|{x}|be/s1|--|200",
        "GET /t HTTP/1.1|{x}|be/s1|--|200",
        "GET http://x/c20 HTTP/1.1|{x}|be/s1|--|200",
        "GET https://x/c25 HTTP/1.1|{x}|be/s1|--|200",
        "GET http://x/c29 HTTP/1.1|{x}|be/s1|--|200",
        "GET http://x:8080/c2 HTTP/1.1|{x:8080}|be/s1|--|200",
    ];
    assert_eq!(&h.lines[..6], expected_of_haproxy, "{}", show());
    let (h_rest, r_rest) = (&h.lines[9..], &r.lines[9..]);
    assert_eq!(
        h_rest,
        [
            "POST /2 HTTP/1.1||be/<NOSRV>|CR|-1",
            // `#` is logged as `#23`
            "GET /s#23foo HTTP/1.1||be/s1|--|200",
            "GET /e#23foo/#23bar HTTP/1.1||be/s1|--|200",
            "<BADREQ>||fe4/<NOSRV>|PR|400",
        ],
        "{}",
        show()
    );
    assert_eq!((&h.lines[..6], h_rest), (&r.lines[..6], r_rest), "log lines differ\n{}", show());
    // The aborts, as reg-test `http_abortonclose` has haproxy log them (`be/srv` while
    // connecting, `<NOSRV>` and `CQ` in the queue). haproxy 2.6 notices a client that
    // closes after its request only in some states (in this test it serves both
    // requests, or retries past the test's patience); rampart checks every 100 ms.
    assert_eq!(
        &r.lines[6..9],
        [
            "GET /retried HTTP/1.1|{x}|retrying/srv1|CC|-1",
            "GET /q/c4 HTTP/1.1|{x}|one/<NOSRV>|CQ|-1",
            "GET /q/slow HTTP/1.1|{x}|one/s1|--|200",
        ],
        "{}",
        show()
    );
    assert_eq!(h.responses, r.responses, "responses differ\n{}", show());
    // the server got the same requests (raw bytes: targets, Host values), but for the
    // aborted ones
    let forwarded = |o: &rampart_testkit::Observed<Seen>| -> Vec<String> {
        let mut out = Vec::new();
        for (_, seen) in &o.servers {
            if let rampart_testkit::Seen::Http(reqs) = seen {
                let kept = reqs.iter().filter(|q| !q.path.starts_with("/q/") && q.path != "/retried");
                out.extend(kept.map(|q| String::from_utf8_lossy(&q.raw).into_owned()));
            }
        }
        out.sort();
        out
    };
    let (hf, rf) = (forwarded(&cmp.haproxy), forwarded(&cmp.rampart));
    assert_eq!(hf.len(), 8, "{hf:#?}");
    assert_eq!(hf, rf, "the server saw different requests");
}
