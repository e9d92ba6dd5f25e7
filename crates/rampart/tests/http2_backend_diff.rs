//! HTTP/2 towards servers (`server ... proto h2`), through rampart and haproxy 2.6 with
//! the same configuration: what the server receives (pseudo-headers and fields, in
//! order) for origin-form and absolute-form HTTP/1 requests and HTTP/2 requests, and
//! CONNECT (RFC 9113 §8.5) tunnels from HTTP/1.1 and HTTP/2 clients, their bytes both
//! ways, and the tunnel timeouts (`timeout tunnel`, `timeout client-fin`/`server-fin`).
//! The server is the frame-level `h2_server`, which records each header block and
//! echoes the DATA of a CONNECT stream.

mod h2_server;
mod http2_client;
mod http_common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use h2_server::{Answer, H2Server};
use http2_client::{body_of, field, Event, H2Client};
use http_common::{binary, PREAMBLE};
use rampart_testkit::{haproxy_or_skip, Proxy, Running};

const WAIT: Duration = Duration::from_secs(5);

/// `bin` in front of `srv` (`server s1 ... proto h2`) with `extra` lines in the
/// `listen` section.
fn start(bin: &Path, srv: &H2Server, extra: &str) -> Running {
    let cfg =
        format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n{extra}  server s1 ${{s1_addr}}:${{s1_port}} proto h2\n");
    Proxy::new(bin).backend("s1", srv.addr()).listener("fe1").config(&cfg).start().expect("the proxy starts")
}

/// A server answering `200` with a 2-byte body, and CONNECT with a tunnel.
fn server() -> H2Server {
    H2Server::start(100, |s| {
        if s.get(":method") == Some("CONNECT") {
            Answer { status: 200, tunnel: true, ..Answer::default() }
        } else {
            Answer::ok("ok").field("content-length", "2")
        }
    })
}

/// The fields the server received for the last request, as `name=value`.
fn last_fields(srv: &H2Server, n: usize) -> Vec<String> {
    let seen = srv.wait_requests(n);
    assert_eq!(seen.len(), n, "the server got {n} requests");
    seen[n - 1].fields.iter().map(|(n, v)| format!("{n}={v}")).collect()
}

/// Sends `req` from an HTTP/1.1 client and reads the response until the proxy closes.
fn h1(proxy: &Running, req: &str) -> String {
    let mut c = TcpStream::connect(proxy.addr("fe1")).unwrap();
    c.set_read_timeout(Some(WAIT)).unwrap();
    c.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// What the server received for each kind of request, through `bin`.
fn requests_seen(bin: &Path) -> Vec<Vec<String>> {
    let srv = server();
    let proxy = start(bin, &srv, "");
    let mut all = Vec::new();
    for req in [
        "GET /o?q=1 HTTP/1.1\r\nHost: h.test\r\nX-A: 1\r\nConnection: close\r\n\r\n",
        "GET http://abs.test:8080/a HTTP/1.1\r\nHost: abs.test:8080\r\nX-A: 1\r\nConnection: close\r\n\r\n",
        "GET https://abs.test/b HTTP/1.1\r\nHost: abs.test\r\nConnection: close\r\n\r\n",
    ] {
        let out = h1(&proxy, req);
        assert!(out.starts_with("HTTP/1.1 200"), "{req:?} -> {out}");
        all.push(last_fields(&srv, all.len() + 1));
    }
    // HTTP/2 clients: with `:authority`, with `host` and without `:authority`
    let h2_reqs: [&[(&str, &str)]; 2] = [
        &[(":method", "GET"), (":scheme", "http"), (":path", "/c"), (":authority", "h2.test"), ("x-a", "1")],
        &[(":method", "GET"), (":scheme", "http"), (":path", "/d"), ("host", "h2host.test"), ("x-a", "1")],
    ];
    for fields in h2_reqs {
        let mut c = H2Client::connect(proxy.addr("fe1"));
        c.headers(1, fields, true);
        let events = c.until_end(1, WAIT);
        assert_eq!(body_of(&events, 1), b"ok", "{fields:?} -> {events:?}");
        all.push(last_fields(&srv, all.len() + 1));
    }
    all
}

/// As haproxy 2.6: an origin-form request's Host goes as a `host` field (no
/// `:authority`), an absolute-form target's authority as `:authority` (no `host`),
/// an HTTP/2 client's `:authority` as `:authority`, its `host` without `:authority`
/// as `host`.
#[test]
fn authority_and_host_are_sent_as_haproxy_sends_them() {
    let ours = requests_seen(&binary());
    if let Some(haproxy) = haproxy_or_skip("authority_and_host_are_sent_as_haproxy_sends_them") {
        let mut theirs = requests_seen(&haproxy);
        // COMPAT: an HTTP/2 client's request without `:authority` goes out with
        // `:scheme https` whatever its own; haproxy 2.6 keeps `http`
        assert_eq!(theirs[4][1], ":scheme=http");
        theirs[4][1] = ":scheme=https".into();
        assert_eq!(ours, theirs);
    }
    assert_eq!(ours[0], [":method=GET", ":scheme=https", ":path=/o?q=1", "host=h.test", "x-a=1"]);
    assert_eq!(ours[1], [":method=GET", ":scheme=http", ":authority=abs.test:8080", ":path=/a", "x-a=1"]);
    assert_eq!(ours[2], [":method=GET", ":scheme=https", ":authority=abs.test", ":path=/b"]);
    assert_eq!(ours[3], [":method=GET", ":scheme=http", ":authority=h2.test", ":path=/c", "x-a=1"]);
    assert_eq!(ours[4], [":method=GET", ":scheme=https", ":path=/d", "host=h2host.test", "x-a=1"]);
}

/// Reads from `c` until `want` came (or WAIT passed); returns what came.
fn read_until(c: &mut TcpStream, want: &str) -> String {
    let deadline = Instant::now() + WAIT;
    let mut out = Vec::new();
    let mut b = [0u8; 4096];
    while !String::from_utf8_lossy(&out).contains(want) && Instant::now() < deadline {
        match c.read(&mut b) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&b[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An HTTP/1.1 client's CONNECT through `bin`: (the response head and the echoed
/// bytes, the rest after the client's FIN, the server's fields).
fn h1_connect(bin: &Path) -> (String, String, Vec<String>) {
    let srv = server();
    let proxy = start(bin, &srv, "");
    let mut c = TcpStream::connect(proxy.addr("fe1")).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    c.write_all(b"CONNECT t.test:443 HTTP/1.1\r\nHost: t.test:443\r\nX-A: 1\r\n\r\n").unwrap();
    let head = read_until(&mut c, "\r\n\r\n");
    c.write_all(b"hello").unwrap();
    let echo = read_until(&mut c, "echo:hello");
    c.shutdown(Shutdown::Write).unwrap();
    let rest = read_until(&mut c, "never");
    (format!("{}|{}", head.lines().next().unwrap_or_default(), echo), rest, last_fields(&srv, 1))
}

/// RFC 9113 §8.5: `:method CONNECT` and `:authority` only; the 2xx opens the tunnel,
/// DATA frames carry it, the client's FIN ends the stream and the server's end closes
/// the client connection.
#[test]
fn an_http1_connect_reaches_an_http2_server_as_a_tunnel() {
    let ours = h1_connect(&binary());
    assert!(ours.0.starts_with("HTTP/1.1 200"), "{ours:?}");
    assert!(ours.0.ends_with("echo:hello"), "{ours:?}");
    assert_eq!(ours.1, "", "nothing after the tunnel's end: {ours:?}");
    assert_eq!(ours.2, [":method=CONNECT", ":authority=t.test:443", "x-a=1"]);
    let Some(haproxy) = haproxy_or_skip("an_http1_connect_reaches_an_http2_server_as_a_tunnel") else { return };
    let theirs = h1_connect(&haproxy);
    assert_eq!(ours.2, theirs.2, "the server's fields");
    // the status line (no reason: haproxy 2.6 sends none for an HTTP/2 server's
    // response), the tunnel's bytes, the end
    assert!(ours.0.starts_with("HTTP/1.1 200 |"), "{ours:?}");
    assert_eq!((&ours.0, &ours.1), (&theirs.0, &theirs.1));
}

/// An HTTP/2 client's CONNECT through `bin`: (status, the echoed bytes and whether the
/// stream ended, the server's fields).
fn h2_connect(bin: &Path) -> (String, String, Vec<String>) {
    let srv = server();
    let proxy = start(bin, &srv, "");
    let mut c = H2Client::connect(proxy.addr("fe1"));
    c.headers(1, &[(":method", "CONNECT"), (":authority", "t.test:443"), ("x-a", "1")], false);
    let status = loop {
        match c.next(WAIT) {
            Event::Headers { id: 1, fields, .. } => break field(&fields, ":status").unwrap_or_default().to_owned(),
            Event::Headers { .. } | Event::Data { .. } | Event::GoAway { .. } => {}
            other => break format!("{other:?}"),
        }
    };
    c.data(1, b"hello", false);
    c.data(1, b"", true);
    let events = c.until_end(1, WAIT);
    let ended = events.iter().any(|e| matches!(e, Event::Data { id: 1, end: true, .. }));
    let echo = format!("{}|{ended}", String::from_utf8_lossy(&body_of(&events, 1)));
    (status, echo, last_fields(&srv, 1))
}

#[test]
fn an_http2_connect_reaches_an_http2_server_as_a_tunnel() {
    let ours = h2_connect(&binary());
    assert_eq!((ours.0.as_str(), ours.1.as_str()), ("200", "echo:hello|true"), "{ours:?}");
    assert_eq!(ours.2, [":method=CONNECT", ":authority=t.test:443", "x-a=1"]);
    let Some(haproxy) = haproxy_or_skip("an_http2_connect_reaches_an_http2_server_as_a_tunnel") else { return };
    assert_eq!(ours, h2_connect(&haproxy));
}

/// How a tunnel test ends on the client's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// After about this many seconds (rounded) of silence.
    After(u64),
    /// Still open when the test stopped waiting.
    Open,
}

fn cut_after(since: Instant, ended: bool) -> Cut {
    match ended {
        true => Cut::After((since.elapsed().as_secs_f64() + 0.5) as u64),
        false => Cut::Open,
    }
}

/// A CONNECT through `bin` with timeouts `tmo` (lines of the `listen` section) from an
/// HTTP/1.1 client: one echo, then `then` ("idle": nothing; "client-end": the client
/// half-closes), then how long until the proxy closes the client connection.
fn h1_tunnel_cut(bin: &Path, tmo: &str, then: &str) -> Cut {
    let hold = then == "client-end";
    let srv = H2Server::start(100, move |_| Answer { status: 200, tunnel: true, hold, ..Answer::default() });
    let proxy = start(bin, &srv, tmo);
    let mut c = TcpStream::connect(proxy.addr("fe1")).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    c.write_all(b"CONNECT t.test:443 HTTP/1.1\r\nHost: t.test:443\r\n\r\nhello").unwrap();
    let got = read_until(&mut c, "echo:hello");
    assert!(got.starts_with("HTTP/1.1 200") && got.ends_with("echo:hello"), "{got:?}");
    if hold {
        c.shutdown(Shutdown::Write).unwrap();
    }
    let since = Instant::now();
    let mut b = [0u8; 64];
    while since.elapsed() < Duration::from_secs(5) {
        match c.read(&mut b) {
            Ok(0) => return cut_after(since, true),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return cut_after(since, true),
        }
    }
    Cut::Open
}

/// As [`h1_tunnel_cut`] from an HTTP/2 client; `then` may also be "server-end" (the
/// server ends its side, the client's stays open).
fn h2_tunnel_cut(bin: &Path, tmo: &str, then: &str) -> Cut {
    let hold = then == "client-end";
    let srv = H2Server::start(100, move |_| Answer { status: 200, tunnel: true, hold, ..Answer::default() });
    let proxy = start(bin, &srv, tmo);
    let mut c = H2Client::connect(proxy.addr("fe1"));
    c.headers(1, &[(":method", "CONNECT"), (":authority", "t.test:443")], false);
    c.data(1, b"hello", false);
    let mut echo = Vec::new();
    while !echo.ends_with(b"echo:hello") {
        match c.next(WAIT) {
            Event::Data { id: 1, data, .. } => echo.extend_from_slice(&data),
            Event::Headers { .. } | Event::GoAway { .. } => {}
            other => panic!("before the echo: {other:?}"),
        }
    }
    match then {
        "client-end" => c.data(1, b"", true),
        "server-end" => {
            c.data(1, b"fin", false);
            match c.next(WAIT) {
                Event::Data { id: 1, end: true, .. } => {}
                other => panic!("the server's end: {other:?}"),
            }
        }
        _ => {}
    }
    let since = Instant::now();
    let events = c.until_end(1, Duration::from_secs(5));
    let ended = !matches!(events.last(), Some(Event::Timeout) | None);
    cut_after(since, ended)
}

/// HAProxy 2.6's tunnel timeouts on a CONNECT to an HTTP/2 server, from HTTP/1.1 and
/// HTTP/2 clients: `timeout tunnel` supersedes `client`/`server`; without it the
/// shorter of the two cuts an idle tunnel (bytes either way restart both clocks);
/// once the server ended its side, the client has `timeout client-fin`, once the
/// client ended its side, the server has `timeout server-fin`.
#[test]
fn tunnel_timeouts_apply_as_in_haproxy() {
    let cases: [(&str, &str, Cut); 5] = [
        ("  timeout tunnel 1s\n  timeout client 4s\n  timeout server 4s\n", "idle", Cut::After(1)),
        ("  timeout tunnel 3s\n  timeout client 1s\n  timeout server 1s\n", "idle", Cut::After(3)),
        ("  timeout client 1s\n  timeout server 4s\n", "idle", Cut::After(1)),
        ("  timeout tunnel 10s\n  timeout server-fin 1s\n", "client-end", Cut::After(1)),
        ("  timeout tunnel 10s\n  timeout client-fin 1s\n", "server-end", Cut::After(1)),
    ];
    let haproxy = haproxy_or_skip("tunnel_timeouts_apply_as_in_haproxy");
    let runs: Vec<_> = cases
        .iter()
        .map(|&(tmo, then, want)| {
            let bins: Vec<_> = std::iter::once(binary()).chain(haproxy.clone()).collect();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                for bin in &bins {
                    // an HTTP/1.1 client cannot tell when a proxy that already sent its
                    // FIN closes the rest: `client-fin` is checked from HTTP/2 clients
                    let h1 = (then != "server-end").then(|| h1_tunnel_cut(bin, tmo, then));
                    got.push((h1, h2_tunnel_cut(bin, tmo, then)));
                }
                (tmo, then, want, got)
            })
        })
        .collect();
    for run in runs {
        let (tmo, then, want, got) = run.join().unwrap();
        let (h1, h2) = got[0];
        assert!(h1.is_none_or(|c| c == want), "rampart, HTTP/1.1 client, {tmo:?} {then}: {h1:?}");
        assert_eq!(h2, want, "rampart, HTTP/2 client, {tmo:?} {then}");
        if let Some(theirs) = got.get(1) {
            assert_eq!(got[0], *theirs, "rampart then haproxy, {tmo:?} {then}");
        }
    }
}
