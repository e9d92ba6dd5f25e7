//! HTTP/1 strictness end to end (issue 6 §1): for each rule, the exact bytes a client
//! sends, the answer it gets and the exact bytes the server receives (nothing for a
//! head refused by the front mux). Then generated malformed variants of each framing
//! element (chunk size lines, extensions, terminators, trailers, Transfer-Encoding
//! lists, Content-Length values, Host forms, targets), on requests and on responses,
//! with the property: what rampart accepts, a second strict parser (`rampart_testkit::strict`:
//! httparse plus a chunk decoder and target/Host checks written for this test) accepts
//! too, and re-parses from what rampart forwarded as the same message; what it refuses
//! never reaches the other side as a complete message.
//!
//! Run with the release binary: `cargo test --release -p rampart --test http_strictness`.
//! Where the expected answer differs from haproxy 2.6 the list is in
//! docs/COMPATIBILITY.md, "Stricter than HAProxy".

// A test backend, far from the request path: std locks are fine.
#![allow(clippy::disallowed_types)]

mod http_common;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_common::{client, listen_cfg, read_all, show, start, PAGE_400};
use rampart_testkit::strict::{self as strict_parser, variants, Msg, Parsed};
use rampart_testkit::Running;

// === a backend that records exactly what it receives ===

/// What one server connection received.
#[derive(Debug, Clone, Default)]
struct Seen {
    bytes: Vec<u8>,
    finished: bool,
}

/// A server that reads one request (complete by the strict parser, or until the proxy
/// closes), records its bytes, and answers with the response its `reply` picks from
/// the request (by default a `200` that closes), then closes.
struct Recorder {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

type ReplyFn = dyn Fn(&[u8]) -> Vec<u8> + Send + Sync;

const OK_CLOSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

impl Recorder {
    fn start(reply: Arc<ReplyFn>) -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the recorder");
        let addr = listener.local_addr().expect("recorder address");
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let index = {
                    let mut l = log.lock().unwrap();
                    l.push(Seen::default());
                    l.len() - 1
                };
                let (log, reply) = (Arc::clone(&log), Arc::clone(&reply));
                std::thread::spawn(move || serve(stream, &log, index, &*reply));
            }
        });
        Recorder { addr, seen }
    }

    fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// The connections accepted from `from` on, once all of them are finished.
    fn finished_since(&self, from: usize) -> Vec<Vec<u8>> {
        let deadline = Instant::now() + rampart_testkit::patience();
        loop {
            let all = self.seen.lock().unwrap().clone();
            if all[from..].iter().all(|s| s.finished) || Instant::now() > deadline {
                return all[from..].iter().map(|s| s.bytes.clone()).collect();
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

fn serve(mut stream: TcpStream, log: &Mutex<Vec<Seen>>, index: usize, reply: &ReplyFn) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(3)));
    let mut buf = [0u8; 16384];
    let mut got = Vec::new();
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                got.extend_from_slice(&buf[..n]);
                log.lock().unwrap()[index].bytes = got.clone();
                if strict_parser::request(&got) != Parsed::Incomplete {
                    let _ = stream.write_all(&reply(&got));
                    let _ = stream.shutdown(Shutdown::Write);
                    // record whatever still comes until the proxy closes
                    continue;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    log.lock().unwrap()[index].finished = true;
}

// === the proxy under test ===

struct Bench {
    proxy: Running,
    server: Recorder,
}

fn bench(reply: Arc<ReplyFn>) -> Bench {
    let server = Recorder::start(reply);
    let cfg = listen_cfg("  timeout http-request 2s\n", "", &["s1"]);
    let proxy = start(&cfg, &[("s1", server.addr)]);
    Bench { proxy, server }
}

fn default_bench() -> Bench {
    bench(Arc::new(|_: &[u8]| OK_CLOSE.to_vec()))
}

/// What one exchange produced on both sides.
struct Exchange {
    /// Everything the client received until the proxy closed.
    client: Vec<u8>,
    /// What each server connection opened for it received.
    server: Vec<Vec<u8>>,
}

impl Bench {
    /// Sends `input` on a new connection, reads until the proxy closes (every request
    /// here asks for it, or is refused), then collects the server side.
    fn exchange(&self, input: &[u8]) -> Exchange {
        let before = self.server.count();
        let mut c = client(&self.proxy);
        c.send(input).unwrap();
        let client = read_all(&mut c);
        Exchange { client, server: self.server.finished_since(before) }
    }
}

/// The status of the response at the start of `bytes` (0 if none).
fn status(bytes: &[u8]) -> u16 {
    match strict_parser::response(bytes, "GET", true) {
        Parsed::Complete(m) => m.first.parse().unwrap_or(0),
        _ => 0,
    }
}

/// HAProxy's 400 page (the front mux's, or the stream's once the head was forwarded:
/// same status and body).
fn is_400_page(bytes: &[u8]) -> bool {
    let body = &PAGE_400[PAGE_400.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..];
    matches!(strict_parser::response(bytes, "GET", true), Parsed::Complete(m) if m.first == "400" && m.body == body && m.len == bytes.len())
}

fn is_502_page(bytes: &[u8]) -> bool {
    matches!(strict_parser::response(bytes, "GET", true), Parsed::Complete(m) if m.first == "502" && m.len == bytes.len())
}

// === one test per rule: exact bytes in, answer and exact server bytes out ===

/// A request refused in its head: the front mux's 400 page exactly, no server connection.
fn assert_head_refused(b: &Bench, what: &str, input: &[u8]) {
    let x = b.exchange(input);
    assert_eq!(show(&x.client), show(PAGE_400), "{what}: {:?}", show(input));
    assert!(x.server.is_empty(), "{what}: the server got {:?}", x.server.iter().map(|s| show(s)).collect::<Vec<_>>());
}

/// A request refused in its body: HAProxy's 400, and the server got at most `head`
/// plus the valid chunks before the error, never the invalid bytes nor a complete
/// message (the connection to it is closed).
fn assert_body_refused(b: &Bench, what: &str, input: &[u8], forwarded: &[u8]) {
    let x = b.exchange(input);
    assert!(is_400_page(&x.client), "{what}: the client got {:?}", show(&x.client));
    for s in &x.server {
        assert!(
            forwarded.starts_with(s),
            "{what}: the server got {:?}, at most {:?} allowed",
            show(s),
            show(forwarded)
        );
        assert_eq!(strict_parser::request(s), Parsed::Incomplete, "{what}: {:?}", show(s));
    }
}

/// A request forwarded: the client gets the server's 200 and the server `expected`
/// (the server side stays keep-alive: the client's `Connection: close` is not passed on).
fn assert_forwarded(b: &Bench, what: &str, input: &[u8], expected: &[u8]) {
    let x = b.exchange(input);
    assert_eq!(status(&x.client), 200, "{what}: the client got {:?}", show(&x.client));
    assert_eq!(x.server.len(), 1, "{what}: {:?}", x.server.iter().map(|s| show(s)).collect::<Vec<_>>());
    assert_eq!(show(&x.server[0]), show(expected), "{what}");
}

const CHUNKED_HEAD: &str = "POST /r HTTP/1.1\r\nHost: a\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n";
/// What the server receives for [`CHUNKED_HEAD`].
const CHUNKED_HEAD_OUT: &str = "POST /r HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n";

fn chunked(body: &str) -> Vec<u8> {
    format!("{CHUNKED_HEAD}{body}").into_bytes()
}

#[test]
fn chunk_framing_rules() {
    let b = default_bench();
    let head = CHUNKED_HEAD_OUT.as_bytes();
    let with = |chunks: &str| [head, chunks.as_bytes()].concat();
    // RFC 9112 §7.1: CRLF only, no BWS, 1..=16 hex digits, valid extensions, and a
    // valid trailer section after the last chunk
    for (what, body, before_error) in [
        ("bare LF after the size", "5\nhello\r\n0\r\n\r\n", ""),
        ("bare CR in the size line", "5\rhello\r\n0\r\n\r\n", ""),
        ("bare LF after data", "5\r\nhello\n0\r\n\r\n", ""),
        ("bare CR after data", "5\r\nhello\r0\r\n\r\n", ""),
        ("bare LF in a later size line", "5\r\nhello\r\n0\n\r\n", "5\r\nhello\r\n"),
        ("space after the size", "5 \r\nhello\r\n0\r\n\r\n", ""),
        ("tab after the size", "5\t\r\nhello\r\n0\r\n\r\n", ""),
        ("blank before an extension", "5 ;a=b\r\nhello\r\n0\r\n\r\n", ""),
        ("blank inside an extension", "5;a =b\r\nhello\r\n0\r\n\r\n", ""),
        ("extension without a name", "5;\r\nhello\r\n0\r\n\r\n", ""),
        ("extension with an empty name", "5;=b\r\nhello\r\n0\r\n\r\n", ""),
        ("extension name not a token", "5;a(b\r\nhello\r\n0\r\n\r\n", ""),
        ("extension value not a token", "5;a=b@c\r\nhello\r\n0\r\n\r\n", ""),
        ("quoted string not closed", "5;a=\"b\r\nhello\r\n0\r\n\r\n", ""),
        ("control character in a quoted string", "5;a=\"\x01\"\r\nhello\r\n0\r\n\r\n", ""),
        ("17 hex digits with leading zeros", "00000000000000005\r\nhello\r\n0\r\n\r\n", ""),
        ("17 zeros for the last chunk", "5\r\nhello\r\n00000000000000000\r\n\r\n", "5\r\nhello\r\n"),
        ("size too large", "10000000000000\r\nhello\r\n0\r\n\r\n", ""),
        ("bare LF ending a trailer", "5\r\nhello\r\n0\r\nT: v\n\r\n", "5\r\nhello\r\n"),
        ("bare LF as the last line", "5\r\nhello\r\n0\r\n\n", "5\r\nhello\r\n"),
        ("trailer without a colon", "5\r\nhello\r\n0\r\nT\r\n\r\n", "5\r\nhello\r\n"),
        ("blank before a trailer colon", "5\r\nhello\r\n0\r\nT : v\r\n\r\n", "5\r\nhello\r\n"),
        ("folded trailer", "5\r\nhello\r\n0\r\nT: v\r\n w\r\n\r\n", "5\r\nhello\r\n"),
        ("a request line after the last chunk", "5\r\nhello\r\n0\r\nGET / HTTP/1.1\r\n\r\n", "5\r\nhello\r\n"),
        ("data longer than its size", "5\r\nhelloXX\r\n0\r\n\r\n", ""),
    ] {
        let allowed = [head, before_error.as_bytes()].concat();
        assert_body_refused(&b, what, &chunked(body), &allowed);
    }
    // The strict grammar itself is forwarded byte for byte.
    let body = "5;a=b;c=\"d \\\" e\";f\r\nhello\r\n0000000000000000;g=h\r\nT: v\r\nU:\r\n\r\n";
    assert_forwarded(&b, "valid extensions and trailers", &chunked(body), &with(body));
}

#[test]
fn transfer_encoding_rules() {
    let b = default_bench();
    for (what, input) in [
        (
            "Transfer-Encoding in HTTP/1.0",
            &b"POST /r HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"[..],
        ),
        ("trailing empty element", b"POST /r HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked,\r\n\r\n0\r\n\r\n"),
        ("leading empty element", b"POST /r HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: , chunked\r\n\r\n0\r\n\r\n"),
        ("empty value", b"POST /r HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n\r\n0\r\n\r\n"),
        (
            "empty header after chunked",
            b"POST /r HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding:\r\n\r\n0\r\n\r\n",
        ),
        ("chunked then gzip", b"POST /r HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n"),
        (
            "quoted parameter",
            b"POST /r HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip;q=\"1\", chunked\r\n\r\n0\r\n\r\n",
        ),
        ("chunked with a parameter", b"POST /r HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked;a=b\r\n\r\n0\r\n\r\n"),
    ] {
        assert_head_refused(&b, what, input);
    }
    // HAProxy answers 422; a coding list ending in chunked is valid (RFC 9112 §6.1)
    assert_forwarded(
        &b,
        "gzip, chunked",
        b"POST /r HTTP/1.1\r\nHost: a\r\nConnection: close\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        b"POST /r HTTP/1.1\r\nhost: a\r\ntransfer-encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    );
}

#[test]
fn host_rules() {
    let b = default_bench();
    let host = |v: &str| format!("GET /r HTTP/1.1\r\nHost: {v}\r\n\r\n").into_bytes();
    let mut refused: Vec<(&str, Vec<u8>)> = vec![
        ("no Host in HTTP/1.1", b"GET /r HTTP/1.1\r\nX: 1\r\n\r\n".to_vec()),
        ("two equal Host headers", b"GET /r HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n".to_vec()),
        ("two Host headers", b"GET /r HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n".to_vec()),
        ("empty Host with an absolute-form target", b"GET http://a/r HTTP/1.1\r\nHost:\r\n\r\n".to_vec()),
        ("Host not matching the authority", b"GET http://a/r HTTP/1.1\r\nHost: b\r\n\r\n".to_vec()),
    ];
    for (what, v) in [
        ("space", "a b"),
        ("user info", "u@a"),
        ("slash", "a/b"),
        ("comma", "a,b"),
        ("non-numeric port", "a:8o"),
        ("port out of range", "a:65536"),
        ("no host before the port", ":80"),
        ("unclosed IPv6 literal", "[::1"),
    ] {
        refused.push((what, host(v)));
    }
    for (what, input) in &refused {
        assert_head_refused(&b, what, input);
    }
    // RFC 9112 §3.2.2: the absolute-form authority wins; Host is made equal to it
    assert_forwarded(
        &b,
        "absolute form, Host with another case and a default port",
        b"GET http://Example.com:80/r HTTP/1.1\r\nHost: example.COM\r\nConnection: close\r\n\r\n",
        b"GET http://Example.com/r HTTP/1.1\r\nhost: Example.com\r\n\r\n",
    );
    assert_forwarded(
        &b,
        "empty Host with an origin-form target",
        b"GET /r HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n",
        b"GET /r HTTP/1.1\r\nhost: \r\n\r\n",
    );
}

#[test]
fn request_target_rules() {
    let b = default_bench();
    for (what, input) in [
        ("* with GET", &b"GET * HTTP/1.1\r\nHost: a\r\n\r\n"[..]),
        ("fragment", b"GET /r#frag HTTP/1.1\r\nHost: a\r\n\r\n"),
        ("fragment in an absolute-form target", b"GET http://a/r#x HTTP/1.1\r\nHost: a\r\n\r\n"),
        ("user info", b"GET http://user@a/r HTTP/1.1\r\nHost: a\r\n\r\n"),
        ("user and password", b"GET http://u:p@a/r HTTP/1.1\r\nHost: a\r\n\r\n"),
        ("CONNECT in origin form", b"CONNECT /r HTTP/1.1\r\nHost: a\r\n\r\n"),
        ("CONNECT in absolute form", b"CONNECT http://a:443/ HTTP/1.1\r\nHost: a:443\r\n\r\n"),
        ("CONNECT without a port", b"CONNECT a HTTP/1.1\r\nHost: a\r\n\r\n"),
        ("authority form without CONNECT", b"GET a:80 HTTP/1.1\r\nHost: a\r\n\r\n"),
        ("no form at all", b"GET r/s HTTP/1.1\r\nHost: a\r\n\r\n"),
    ] {
        assert_head_refused(&b, what, input);
    }
    assert_forwarded(
        &b,
        "OPTIONS *",
        b"OPTIONS * HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        b"OPTIONS * HTTP/1.1\r\nhost: a\r\n\r\n",
    );
}

#[test]
fn connection_never_removes_framing_headers() {
    let b = default_bench();
    assert_forwarded(
        &b,
        "Connection naming Content-Length and Host",
        b"POST /r HTTP/1.1\r\nHost: a\r\nConnection: close, content-length, host, x-gone\r\nX-Gone: 1\r\n\
          Content-Length: 5\r\n\r\nhello",
        b"POST /r HTTP/1.1\r\nhost: a\r\ncontent-length: 5\r\n\r\nhello",
    );
    assert_forwarded(
        &b,
        "Connection naming Transfer-Encoding",
        b"POST /r HTTP/1.1\r\nHost: a\r\nConnection: transfer-encoding, close\r\nTransfer-Encoding: chunked\r\n\r\n\
          5\r\nhello\r\n0\r\n\r\n",
        b"POST /r HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    );
}

#[test]
fn header_name_longer_than_the_buffer_gets_haproxys_400() {
    let b = default_bench();
    let name = "X".repeat(20_000);
    assert_head_refused(&b, "20000-byte name", format!("GET /r HTTP/1.1\r\nHost: a\r\n{name}: v\r\n\r\n").as_bytes());
}

// === responses: 502 instead of 400 ===

/// A bench whose server answers each request with the response `responses[i]`, `i`
/// taken from the request's `X-Variant` header.
fn response_bench(responses: Vec<Vec<u8>>) -> Bench {
    let responses = Arc::new(responses);
    bench(Arc::new(move |req: &[u8]| {
        let i = match strict_parser::request(req) {
            Parsed::Complete(m) => m.all("x-variant").first().and_then(|v| std::str::from_utf8(v).ok()?.parse().ok()),
            _ => None,
        };
        i.and_then(|i: usize| responses.get(i).cloned()).unwrap_or_else(|| OK_CLOSE.to_vec())
    }))
}

fn variant_request(i: usize) -> Vec<u8> {
    format!("GET /r HTTP/1.1\r\nHost: a\r\nX-Variant: {i}\r\nConnection: close\r\n\r\n").into_bytes()
}

#[test]
fn response_rules() {
    // (what, the server's response, what the client gets if it is forwarded)
    type Case<'a> = (&'a str, &'a [u8], Option<&'a [u8]>);
    let cases: Vec<Case> = vec![
        ("bare LF after a response chunk size", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n", None),
        ("blank after a response chunk size", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n", None),
        ("empty coding in a response", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked,\r\n\r\n0\r\n\r\n", None),
        ("empty Transfer-Encoding in a response", b"HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\n\r\nhello", None),
        (
            "gzip, chunked response",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            Some(b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\nconnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
        ),
        (
            "gzip response read until close",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nhello",
            Some(b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\nconnection: close\r\n\r\nhello"),
        ),
    ];
    let b = response_bench(cases.iter().map(|(_, r, _)| r.to_vec()).collect());
    for (i, (what, _, expected)) in cases.iter().enumerate() {
        let x = b.exchange(&variant_request(i));
        match expected {
            None => {
                assert!(is_502_page(&x.client) || truncated(&x.client), "{what}: the client got {:?}", show(&x.client))
            }
            Some(exact) => assert_eq!(show(&x.client), show(exact), "{what}"),
        }
    }
    let long = format!("HTTP/1.1 200 OK\r\n{}: v\r\nContent-Length: 0\r\n\r\n", "X".repeat(20_000)).into_bytes();
    let b = response_bench(vec![long]);
    assert!(is_502_page(&b.exchange(&variant_request(0)).client), "a 20000-byte response header name");
}

/// A response cut short: the proxy closed after forwarding part of it.
fn truncated(bytes: &[u8]) -> bool {
    strict_parser::response(bytes, "GET", false) == Parsed::Incomplete
        && !matches!(strict_parser::response(bytes, "GET", true), Parsed::Complete(m) if m.framing != "close")
}

// === generated variants: the strictness property ===

/// Asserts the property for one request variant; returns whether rampart forwarded it.
fn check_request_variant(b: &Bench, input: &[u8]) -> bool {
    let expected = strict_parser::request(input);
    let x = b.exchange(input);
    let answer = status(&x.client);
    let forwarded: Vec<&Vec<u8>> = x.server.iter().filter(|s| !s.is_empty()).collect();
    let ctx = || {
        format!(
            "input {:?}\nclient got {:?}\nserver got {:?}",
            show(input),
            show(&x.client),
            x.server.iter().map(|s| show(s)).collect::<Vec<_>>()
        )
    };
    match expected {
        Parsed::Complete(want) => {
            // no valid request is refused, and it arrives as the same message
            assert_eq!(answer, 200, "a valid request was not forwarded\n{}", ctx());
            assert_eq!(forwarded.len(), 1, "{}", ctx());
            match strict_parser::request(forwarded[0]) {
                Parsed::Complete(got) => {
                    assert_eq!(got.len, forwarded[0].len(), "bytes after the message\n{}", ctx());
                    assert_same_request(&want, &got, &ctx);
                }
                other => panic!("what rampart forwarded does not re-parse: {other:?}\n{}", ctx()),
            }
            true
        }
        Parsed::Invalid(why) => {
            assert!(matches!(answer, 400 | 413 | 422), "invalid ({why}) but answered {answer}\n{}", ctx());
            for s in &forwarded {
                assert_eq!(
                    strict_parser::request(s),
                    Parsed::Incomplete,
                    "invalid ({why}) yet forwarded whole\n{}",
                    ctx()
                );
            }
            false
        }
        Parsed::Incomplete => panic!("the generator made an incomplete request\n{}", ctx()),
    }
}

/// The same request, but for what a proxy rewrites: header names' case, hop-by-hop
/// headers, Content-Length (dropped beside chunked, `5, 5` merged into `5`: checked
/// through the framing and the body), Host made equal to an absolute-form authority, a
/// default port left out of the target.
fn assert_same_request(want: &Msg, got: &Msg, ctx: &dyn Fn() -> String) {
    assert_eq!(got.first, want.first, "method\n{}", ctx());
    let strip_default_port = |t: &str| t.replacen(":80/", "/", 1);
    assert_eq!(strip_default_port(&got.second), strip_default_port(&want.second), "target\n{}", ctx());
    assert_eq!(got.body, want.body, "body\n{}", ctx());
    assert_eq!(got.trailers, want.trailers, "trailers\n{}", ctx());
    assert_eq!(got.framing, want.framing, "framing\n{}", ctx());
    let end_to_end = |m: &Msg| -> Vec<(String, Vec<u8>)> {
        m.headers
            .iter()
            .filter(|(n, _)| {
                let n = n.to_ascii_lowercase();
                !matches!(n.as_str(), "connection" | "keep-alive" | "proxy-connection" | "te" | "upgrade" | "host")
                    && n != "content-length"
            })
            .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
            .collect()
    };
    assert_eq!(end_to_end(got), end_to_end(want), "end-to-end headers\n{}", ctx());
    // one Content-Length, a single number, when the length frames the message
    let lengths = got.all("content-length");
    match got.framing {
        "length" => assert!(
            lengths.len() == 1 && lengths[0].iter().all(u8::is_ascii_digit),
            "Content-Length forwarded as {lengths:?}\n{}",
            ctx()
        ),
        _ => assert!(lengths.is_empty(), "Content-Length beside chunked\n{}", ctx()),
    }
    let host = |m: &Msg| m.all("host").first().map(|h| h.to_ascii_lowercase());
    if want.second.starts_with('/') {
        assert_eq!(host(got), host(want), "Host\n{}", ctx());
    }
}

#[test]
fn generated_request_variants_keep_the_strictness_property() {
    let b = default_bench();
    let all = variants::requests();
    let mut forwarded = 0;
    for input in &all {
        forwarded += usize::from(check_request_variant(&b, input));
    }
    // both sides of the property were exercised
    assert!(forwarded > 20 && forwarded < all.len() - 20, "{forwarded} of {} forwarded", all.len());
}

#[test]
fn generated_response_variants_keep_the_strictness_property() {
    let all = variants::responses();
    let b = response_bench(all.clone());
    let mut forwarded = 0;
    for (i, sent) in all.iter().enumerate() {
        let x = b.exchange(&variant_request(i));
        let ctx = || format!("server sent {:?}\nclient got {:?}", show(sent), show(&x.client));
        match strict_parser::response(sent, "GET", true) {
            Parsed::Complete(want) => {
                forwarded += 1;
                match strict_parser::response(&x.client, "GET", true) {
                    Parsed::Complete(got) => {
                        assert_eq!(
                            (&got.first, &got.body, &got.trailers),
                            (&want.first, &want.body, &want.trailers),
                            "{}",
                            ctx()
                        );
                        let te = |m: &Msg| m.all("transfer-encoding").iter().map(|v| v.to_vec()).collect::<Vec<_>>();
                        assert_eq!(te(&got), te(&want), "{}", ctx());
                    }
                    other => panic!("the client cannot parse what rampart forwarded: {other:?}\n{}", ctx()),
                }
            }
            Parsed::Invalid(why) => {
                assert!(is_502_page(&x.client) || truncated(&x.client), "invalid ({why}) but forwarded\n{}", ctx())
            }
            Parsed::Incomplete => panic!("the generator made an incomplete response\n{}", ctx()),
        }
    }
    assert!(forwarded > 10 && forwarded < all.len() - 10, "{forwarded} of {} forwarded", all.len());
}

#[test]
fn the_strict_parser_judges_as_documented() {
    // The test's own parser must refuse what the rules refuse and accept the rest, or
    // the generated tests would prove nothing.
    let ok = |b: &[u8]| matches!(strict_parser::request(b), Parsed::Complete(_));
    assert!(ok(&chunked("5;a=\"b\"\r\nhello\r\n0\r\nT: v\r\n\r\n")));
    assert!(!ok(&chunked("5\nhello\r\n0\r\n\r\n")));
    assert!(!ok(&chunked("5 \r\nhello\r\n0\r\n\r\n")));
    assert!(!ok(&chunked("00000000000000005\r\nhello\r\n0\r\n\r\n")));
    assert!(!ok(b"GET /r HTTP/1.1\r\n\r\n"));
    assert!(!ok(b"GET /r HTTP/1.1\r\nHost: a,b\r\n\r\n"));
    assert!(!ok(b"GET * HTTP/1.1\r\nHost: a\r\n\r\n"));
    assert!(ok(b"GET http://a:80/ HTTP/1.1\r\nHost: A\r\n\r\n"));
    assert!(!ok(b"POST /r HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n"));
    assert!(variants::requests().len() > 100 && variants::responses().len() > 40);
}
