//! HTTP/2 on the client side through the real binary, to HTTP/1.1 servers: curl (with
//! nghttp2) as the real client over cleartext prior knowledge (the preface detected on
//! an HTTP bind, and `bind ... proto h2`) and over TLS with ALPN `h2`; a frame-level
//! client (`http2_client`) for what curl cannot show (trailers as HEADERS, RST_STREAM
//! and GOAWAY on protocol errors, streams multiplexed on one connection). Each test
//! asserts what the client received and what the server received. The log line of an
//! HTTP/2 request is compared with haproxy 2.6's.

mod http2_client;
mod http_common;
mod test_pki;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use http2_client::{body_of, field, Event, H2Client};
use http_common::{binary, PREAMBLE};
use rampart_proto::h2::ErrorCode;
use rampart_testkit::{haproxy_or_skip, HttpBackend, Proxy, RawBackend, Reply, Running, Step};

const WAIT: Duration = Duration::from_secs(5);

/// A backend answering with what it received: method, target, version, body length.
fn echo() -> HttpBackend {
    HttpBackend::builder("s1")
        .respond(|req| {
            let line = format!("{} {} {} len={}\n", req.method, req.path, req.version, req.body.len());
            Reply::ok().header("X-Seen-Host", req.headers.get("host").unwrap_or("-")).body(line)
        })
        .start()
}

fn start(cfg: &str, s1: std::net::SocketAddr, listeners: &[&str]) -> Running {
    let mut p = Proxy::new(binary()).backend("s1", s1);
    for l in listeners {
        p = p.listener(l);
    }
    p.config(cfg).start().expect("the proxy starts")
}

/// Runs curl with `args`, `stdin` as its input; (success, stdout, stderr).
fn curl(args: &[&str], stdin: &[u8]) -> (bool, String, String) {
    let mut child = Command::new("curl")
        .args(["-sS", "--max-time", "10"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("curl runs");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn prior_knowledge_on_an_http_bind_reaches_http1_servers() {
    let s1 = echo();
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  http-request set-header X-Ver %[req.ver]\n  \
         server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let proxy = start(&cfg, s1.addr(), &["fe1"]);
    let url = format!("http://{}/a/b?c=1", proxy.addr("fe1"));
    let (ok, out, err) = curl(&["--http2-prior-knowledge", "-i", &url], b"");
    assert!(ok, "{err}");
    assert!(out.starts_with("HTTP/2 200"), "{out}");
    assert!(out.contains("x-seen-host: "), "HTTP/2 fields are lower case: {out}");
    assert!(out.ends_with("GET /a/b?c=1 HTTP/1.1 len=0\n"), "{out}");
    let seen = s1.wait_requests(1);
    assert_eq!(seen[0].headers.get("host"), Some(proxy.addr("fe1").to_string().as_str()), ":authority is Host");
    assert_eq!(seen[0].headers.get("x-ver"), Some("2.0"));

    // a body of known length: content-length goes to the server
    let (ok, out, err) = curl(&["--http2-prior-knowledge", "--data-binary", "hello h2", &url], b"");
    assert!(ok, "{err}");
    assert_eq!(out, "POST /a/b?c=1 HTTP/1.1 len=8\n");
    let seen = s1.wait_requests(2);
    assert_eq!(seen[1].headers.get("content-length"), Some("8"));
    assert_eq!(seen[1].body, b"hello h2");

    // a body of unknown length: chunked to the server
    let upload: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let (ok, out, err) = curl(&["--http2-prior-knowledge", "-T", "-", &url], &upload);
    assert!(ok, "{err}");
    assert_eq!(out, "PUT /a/b?c=1 HTTP/1.1 len=300000\n");
    let seen = s1.wait_requests(3);
    assert_eq!(seen[2].headers.get("transfer-encoding"), Some("chunked"));
    assert!(seen[2].body == upload, "the upload arrives whole");
}

#[test]
fn a_request_written_with_the_preface_is_answered_at_once() {
    // preface, SETTINGS and the first HEADERS in one write, then nothing (not even the
    // SETTINGS acknowledgement): the bytes the HTTP/1 side read before it saw the
    // preface hold the request, and no more input comes to wake the connection
    use rampart_proto::h2::frame::{encode_headers, encode_settings, PREFACE};
    use std::io::Read;
    let s1 = echo();
    let cfg = format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  server s1 ${{s1_addr}}:${{s1_port}}\n");
    let proxy = start(&cfg, s1.addr(), &["fe1"]);
    let mut out = PREFACE.to_vec();
    encode_settings(&mut out, &[]);
    let fields = [(":method", "GET"), (":scheme", "http"), (":path", "/once"), (":authority", "t")];
    let mut block = Vec::new();
    rampart_proto::h2::hpack::Encoder::new().encode(
        fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes(), rampart_proto::h2::hpack::Flags::NONE)),
        &mut block,
    );
    encode_headers(&mut out, 1, &block, true, 16384);
    let mut c = std::net::TcpStream::connect(proxy.addr("fe1")).unwrap();
    c.write_all(&out).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let (mut got, mut chunk) = (Vec::new(), [0u8; 4096]);
    let answered = loop {
        let mut at = 0;
        let mut data_end = false;
        while let Ok(Some((frame, used))) = rampart_proto::h2::next_frame(&got[at..], 1 << 24) {
            data_end |= matches!(frame, rampart_proto::h2::Frame::Data { stream_id: 1, end_stream: true, .. });
            at += used;
        }
        if data_end {
            break true;
        }
        match c.read(&mut chunk) {
            Ok(n) if n > 0 => got.extend_from_slice(&chunk[..n]),
            _ => break false,
        }
    };
    assert!(answered, "no response within 2 s without more input: {} bytes came", got.len());
    assert_eq!(s1.wait_requests(1)[0].path, "/once");
}

#[test]
fn alpn_h2_over_tls_and_large_bodies() {
    let pki_dir = test_pki::fresh_dir("h2-tls");
    let (ca, ca_key) = test_pki::ca("Rampart H2 CA");
    std::fs::write(pki_dir.join("ca.pem"), ca.pem()).unwrap();
    let crt = pki_dir.join("a.pem");
    std::fs::write(&crt, test_pki::leaf_pem(&["a.test"], &ca, &ca_key)).unwrap();
    let big: Vec<u8> = (0..2_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let served = big.clone();
    let s1 = HttpBackend::builder("s1")
        .respond(move |req| {
            let body = if req.path == "/big" { served.clone() } else { format!("len={}", req.body.len()).into() };
            Reply::ok().header("X-Alpn-Seen", req.headers.get("x-alpn").unwrap_or("-")).body(body)
        })
        .start();
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}} ssl crt {} alpn h2,http/1.1\n  \
         http-request set-header X-Alpn %[ssl_fc_alpn]\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        crt.display()
    );
    let proxy = start(&cfg, s1.addr(), &["fe1"]);
    let addr = proxy.addr("fe1");
    let resolve = format!("a.test:{}:{}", addr.port(), addr.ip());
    let ca_file = pki_dir.join("ca.pem");
    let base = ["--cacert", ca_file.to_str().unwrap(), "--resolve", &resolve];
    let url = |p: &str| format!("https://a.test:{}{p}", addr.port());

    let out = Command::new("curl")
        .args(["-sS", "--max-time", "20", "--http2", "-D", "-"])
        .args(base)
        .arg(url("/big"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let head_end = out.stdout.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&out.stdout[..head_end]);
    assert!(head.starts_with("HTTP/2 200"), "ALPN chose h2: {head}");
    assert!(head.contains("x-alpn-seen: h2"), "ssl_fc_alpn is h2: {head}");
    assert!(out.stdout[head_end..] == big[..], "2 MB arrive whole through the windows");

    let upload: Vec<u8> = (0..1_500_000u32).map(|i| (i % 13) as u8).collect();
    let with = |extra: &[&str], u: &str| -> Vec<String> {
        extra.iter().chain(base.iter()).map(|s| s.to_string()).chain([url(u)]).collect()
    };
    let args = with(&["--http2", "--data-binary", "@-"], "/up");
    let (ok, out, err) = curl(&args.iter().map(String::as_str).collect::<Vec<_>>(), &upload);
    assert!(ok, "{err}");
    assert_eq!(out, "len=1500000");
    let seen = s1.wait_requests(2);
    assert!(seen[1].body == upload);

    // a client that offers http/1.1 only still gets it
    let args = with(&["--http1.1", "-i"], "/x");
    let (ok, out, err) = curl(&args.iter().map(String::as_str).collect::<Vec<_>>(), b"");
    assert!(ok, "{err}");
    assert!(out.starts_with("HTTP/1.1 200") && out.contains("x-alpn-seen: http/1.1"), "{out}");
    let _ = std::fs::remove_dir_all(&pki_dir);
}

#[test]
fn bind_proto_forces_the_protocol() {
    let s1 = echo();
    let cfg = format!(
        "{PREAMBLE}frontend fe1\n  bind fd@${{h2}} proto h2\n  bind fd@${{h1}} proto h1\n  default_backend be\n\
         backend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let proxy = start(&cfg, s1.addr(), &["h2", "h1"]);
    let (ok, out, err) = curl(&["--http2-prior-knowledge", "-i", &format!("http://{}/p", proxy.addr("h2"))], b"");
    assert!(ok && out.starts_with("HTTP/2 200"), "{out}{err}");
    // `proto h1`: the preface is not taken as HTTP/2 (curl fails, the server sees nothing)
    let (ok, out, _) = curl(&["--http2-prior-knowledge", &format!("http://{}/q", proxy.addr("h1"))], b"");
    assert!(!ok, "{out}");
    let (ok, out, err) = curl(&["-i", &format!("http://{}/r", proxy.addr("h1"))], b"");
    assert!(ok && out.starts_with("HTTP/1.1 200"), "{out}{err}");
    let paths: Vec<String> = s1.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/p", "/r"]);

    // a protocol the mode cannot use is refused at startup
    let bad = format!(
        "{PREAMBLE}frontend fe1\n  mode tcp\n  bind 127.0.0.1:8 proto h2\n  default_backend be\n\
         backend be\n  mode tcp\n  server s1 127.0.0.1:1\n"
    );
    let out = rampart_testkit::check(binary(), &bad);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("MUX protocol 'h2' is not usable in mode tcp"), "{}", out.stderr);
}

#[test]
fn trailers_and_errors_per_stream() {
    // fe1: a server answering chunked with a trailer; fe2: the echo server
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: x-sum\r\n\r\n5\r\nhello\r\n0\r\nx-sum: 42\r\n\r\n",
        ),
    ]);
    let s2 = echo();
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}} proto h2\n  server s1 ${{s1_addr}}:${{s1_port}}\n\
         listen fe2\n  bind fd@${{fe2}} proto h2\n  server s2 ${{s2_addr}}:${{s2_port}}\n"
    );
    let proxy = Proxy::new(binary())
        .backend("s1", s1.addr())
        .backend("s2", s2.addr())
        .listener("fe1")
        .listener("fe2")
        .config(&cfg)
        .start()
        .expect("the proxy starts");
    let mut c = H2Client::connect(proxy.addr("fe1"));
    c.get(1, "/trailers");
    let events = c.until_end(1, WAIT);
    let Event::Headers { fields, end: false, .. } = &events[0] else { panic!("{events:?}") };
    assert_eq!(field(fields, ":status"), Some("200"));
    assert!(field(fields, "transfer-encoding").is_none(), "no connection-specific field in HTTP/2: {fields:?}");
    assert_eq!(body_of(&events, 1), b"hello");
    let last = events.last().unwrap();
    let Event::Headers { id: 1, fields, end: true } = last else { panic!("trailers end the stream: {events:?}") };
    assert_eq!(field(fields, "x-sum"), Some("42"));
    let received = s1.wait_finished(1);
    assert!(received[0].received.starts_with(b"GET /trailers HTTP/1.1\r\n"));

    // a body longer than its content-length: that stream is reset, the connection goes on
    let mut c = H2Client::connect(proxy.addr("fe2"));
    c.headers(
        1,
        &[(":method", "POST"), (":scheme", "http"), (":path", "/bad"), (":authority", "t"), ("content-length", "2")],
        false,
    );
    c.data(1, b"too long", true);
    let events = c.until_end(1, WAIT);
    assert_eq!(events.last(), Some(&Event::Reset { id: 1, code: ErrorCode::ProtocolError }), "{events:?}");
    c.get(3, "/second");
    let events = c.until_end(3, WAIT);
    assert_eq!(body_of(&events, 3), b"GET /second HTTP/1.1 len=0\n", "one reset per stream: {events:?}");
    assert!(s2.requests().iter().all(|r| r.body.is_empty()), "no byte of the bad body reached the server");

    // an HPACK block that does not decode ends the connection
    let mut c = H2Client::connect(proxy.addr("fe1"));
    let mut frame = Vec::new();
    rampart_proto::h2::frame::encode_headers(&mut frame, 1, &[0x80], true, 16384); // index 0
    c.send(&frame);
    let events = c.until_end(1, WAIT);
    assert!(events.iter().any(|e| matches!(e, Event::GoAway { code: ErrorCode::CompressionError, .. })), "{events:?}");
    assert_eq!(events.last(), Some(&Event::Closed), "{events:?}");
}

#[test]
fn many_concurrent_streams_on_one_connection() {
    let s1 = echo();
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}} proto h2\n  http-request set-header X-Port %[src_port]\n  \
         server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let proxy = start(&cfg, s1.addr(), &["fe1"]);
    let mut c = H2Client::connect(proxy.addr("fe1"));
    let ids: Vec<u32> = (0..40).map(|i| 1 + 2 * i).collect();
    for id in &ids {
        c.get(*id, &format!("/s{id}"));
    }
    let mut events = Vec::new();
    let mut ended = 0;
    while ended < ids.len() {
        let ev = c.next(WAIT);
        match &ev {
            Event::Data { end: true, .. } | Event::Headers { end: true, .. } => ended += 1,
            Event::Data { .. } | Event::Headers { .. } => {}
            other => panic!("{other:?} after {events:?}"),
        }
        events.push(ev);
    }
    for id in &ids {
        assert_eq!(body_of(&events, *id), format!("GET /s{id} HTTP/1.1 len=0\n").into_bytes());
    }
    let seen = s1.wait_requests(ids.len());
    let ports: std::collections::BTreeSet<_> =
        seen.iter().map(|r| r.headers.get("x-port").unwrap().to_owned()).collect();
    assert_eq!(ports.len(), 1, "every request came over one client connection");
}

#[test]
fn tune_h2_max_concurrent_streams_refuses_the_stream_beyond() {
    let s1 = HttpBackend::builder("s1").respond(|_| Reply::ok().delay(Duration::from_millis(300)).body("slow")).start();
    let cfg = "global\n  nbthread 1\n  tune.h2.max-concurrent-streams 2\n  tune.h2.initial-window-size 100000\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind fd@${fe1} proto h2\n  server s1 ${s1_addr}:${s1_port}\n";
    let proxy = start(cfg, s1.addr(), &["fe1"]);
    let mut c = H2Client::connect(proxy.addr("fe1"));
    for id in [1, 3, 5] {
        c.get(id, "/");
    }
    let mut events = Vec::new();
    loop {
        match c.next(WAIT) {
            Event::Timeout | Event::Closed => panic!("{events:?}"),
            ev => events.push(ev),
        }
        if events.iter().filter(|e| matches!(e, Event::Data { end: true, .. })).count() == 2 {
            break;
        }
    }
    assert!(events.contains(&Event::Reset { id: 5, code: ErrorCode::RefusedStream }), "{events:?}");
    assert_eq!((body_of(&events, 1), body_of(&events, 3)), (b"slow".to_vec(), b"slow".to_vec()));
    // a stream opened once the others ended is served
    c.get(7, "/");
    assert_eq!(body_of(&c.until_end(7, WAIT), 7), b"slow");
    assert_eq!(s1.requests().len(), 3, "the refused stream never reached the server");
    // the connection announced the configured window
    assert_eq!(c.settings().get(&4), Some(&100_000), "SETTINGS_INITIAL_WINDOW_SIZE");
    assert_eq!(c.settings().get(&3), Some(&2), "SETTINGS_MAX_CONCURRENT_STREAMS");
}

/// The fields of an httplog line that do not depend on timing or ports: status,
/// proxies and server, termination state, request line (ports masked).
fn log_essentials(line: &str, port: u16) -> String {
    let line = line.replace(&port.to_string(), "PORT");
    let words: Vec<&str> = line.split(' ').collect();
    let req = line.split('"').nth(1).unwrap_or("");
    // client [date] frontend backend/server timers status bytes - - state conns queues
    format!("{} {} {} {} {} [{}]", words[2], words[3], words[5], words[6], words[9], req)
}

#[test]
fn log_line_of_an_h2_request_matches_haproxy() {
    let Some(haproxy) = haproxy_or_skip("log_line_of_an_h2_request_matches_haproxy") else { return };
    let mut lines = Vec::new();
    for bin in [binary(), haproxy] {
        let s1 = echo();
        let cfg = format!(
            "{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  log stdout format raw local0\n  option httplog\n  \
             server s1 ${{s1_addr}}:${{s1_port}}\n"
        );
        let proxy = Proxy::new(bin).backend("s1", s1.addr()).listener("fe1").config(&cfg).start().unwrap();
        let port = proxy.addr("fe1").port();
        let (ok, _, err) = curl(&["--http2-prior-knowledge", &format!("http://127.0.0.1:{port}/x?y=1")], b"");
        assert!(ok, "{err}");
        assert!(proxy.wait_output("fe1/s1", WAIT) || proxy.wait_output("fe1 fe1/s1", WAIT), "{}", proxy.output());
        let out = proxy.output();
        let line = out.lines().find(|l| l.contains("HTTP/2.0")).unwrap_or_else(|| panic!("{out}")).to_owned();
        lines.push(log_essentials(&line, port));
    }
    assert_eq!(lines[0], lines[1], "rampart, then haproxy");
    assert!(lines[0].ends_with("[GET http://127.0.0.1:PORT/x?y=1 HTTP/2.0]"), "{}", lines[0]);
}

#[test]
fn soft_stop_sends_goaway_and_finishes_the_streams_open() {
    // SIGUSR1 (a reload's old process): GOAWAY NO_ERROR naming the last stream, the
    // stream in flight answered whole, a stream opened after the GOAWAY not served
    // (the client sends it again to the new process), then the connection closes and
    // the process exits.
    let s1 = HttpBackend::builder("s1").respond(|_| Reply::ok().delay(Duration::from_millis(400)).body("slow")).start();
    let mut proxy = start(
        &format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}} proto h2\n  server s1 ${{s1_addr}}:${{s1_port}}\n"),
        s1.addr(),
        &["fe1"],
    );
    let mut c = H2Client::connect(proxy.addr("fe1"));
    c.get(1, "/");
    s1.wait_requests(1);
    proxy.signal(rampart_testkit::Signal::SIGUSR1).unwrap();
    assert_eq!(c.next(WAIT), Event::GoAway { last_id: 1, code: ErrorCode::NoError });
    c.get(3, "/late");
    let events = c.until_end(1, WAIT);
    assert_eq!(body_of(&events, 1), b"slow");
    assert!(events.iter().all(|e| !matches!(e, Event::Headers { id: 3, .. })), "{events:?}");
    assert_eq!(c.next(WAIT), Event::Closed);
    let status = proxy.wait_exit(WAIT).expect("exits once its last stream ended");
    assert_eq!(status.code(), Some(0));
    assert_eq!(s1.wait_requests(1).len(), 1, "the late stream never reached the server");
}

/// reg-test `h2_desync_attacks`: a request without `:authority` (nor `host`) goes on
/// to an HTTP/1.1 server without `Host`; a second proxy in HTTP/1 then refuses it with
/// a 400 (rampart: RFC 9112 §3.2, see Stricter than HAProxy) where haproxy 2.6 serves
/// it; a `:scheme` that is no scheme is answered 400 and never reaches the server, as
/// through haproxy 2.6.
#[test]
fn desync_attack_shapes_are_handled_as_haproxy() {
    let answers = |bin: std::path::PathBuf| {
        let s1 = echo();
        let inner = Proxy::new(bin.clone())
            .listener("fe1")
            .config(&format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  http-request return status 200 hdr x-host \"%[req.hdr(host)]\" hdr x-ver \"%[req.ver]\"\n"))
            .start()
            .expect("the inner proxy starts");
        let cfg = format!(
            "{PREAMBLE}listen fe1\n  bind fd@${{fe1}} proto h2\n  server s1 ${{s2_addr}}:${{s2_port}}\n\
             listen fe2\n  bind fd@${{fe2}} proto h2\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
        );
        let proxy = Proxy::new(bin).backend("s1", s1.addr()).backend("s2", inner.addr("fe1"));
        let proxy = proxy.listener("fe1").listener("fe2").config(&cfg).start().expect("the proxy starts");
        let mut c = H2Client::connect(proxy.addr("fe1"));
        c.headers(1, &[(":method", "GET"), (":scheme", "http"), (":path", "/")], true);
        let no_authority = c.until_end(1, WAIT);
        let head = |events: &[Event]| {
            events.iter().find_map(|e| match e {
                Event::Headers { fields, .. } => {
                    Some([":status", "x-host", "x-ver"].map(|n| field(fields, n).unwrap_or("-").to_owned()))
                }
                _ => None,
            })
        };
        let mut c = H2Client::connect(proxy.addr("fe2"));
        c.headers(1, &[(":method", "GET"), (":scheme", "http://localhost/?"), (":path", "/")], true);
        let bad_scheme = c.until_end(1, WAIT);
        let reached = s1.requests().len();
        (head(&no_authority), head(&bad_scheme).map(|h| h[0].clone()), reached)
    };
    let ours = answers(binary());
    let refused = ["400", "-", "-"].map(str::to_owned);
    assert_eq!(ours, (Some(refused), Some("400".to_owned()), 0));
    let Some(haproxy) = haproxy_or_skip("desync_attack_shapes_are_handled_as_haproxy") else { return };
    let theirs = answers(haproxy);
    assert_eq!(theirs.0, Some(["200", "-", "1.1"].map(str::to_owned)), "haproxy serves a Host-less HTTP/1.1 request");
    assert_eq!((ours.1, ours.2), (theirs.1, theirs.2), "the same answers to a bad :scheme through haproxy 2.6");
}
