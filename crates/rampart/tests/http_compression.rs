//! HTTP compression through the real binary: which responses are compressed
//! (`Accept-Encoding` and its q-values, status, method, versions, content types,
//! `Content-Encoding`, `Cache-Control: no-transform`), the head of a compressed response
//! (`Content-Encoding`, chunked instead of `Content-Length`, weak `ETag`, `Vary`), what
//! the server receives (`compression offload`), `res.comp` / `res.comp_algo`, a
//! streamed body compressed piece by piece, brotli and zstd beyond HAProxy, and HTTP/2.
//! The decisions and the headers are compared with haproxy 2.6's (the compressed bytes
//! differ: haproxy uses libslz, rampart zlib-rs; the decoded bodies must not).

mod http_common;

use std::io::Read;
use std::time::Duration;

use http_common::{client, listen_cfg, start, RAMPART};
use rampart_testkit::{Differential, Framing, HttpBackend, Normalize, Normalizer, Reply, Response, Running};

/// 2000 bytes that compress well.
fn text() -> Vec<u8> {
    b"the quick brown fox jumps over the lazy dog. ".iter().copied().cycle().take(2000).collect()
}

/// A backend answering by path.
fn backend() -> HttpBackend {
    HttpBackend::builder("s1")
        .respond(|req| {
            let plain = Reply::ok().header("Content-Type", "text/plain").header("ETag", "\"v1\"");
            let ae = req.headers.get("accept-encoding").unwrap_or("-").to_owned();
            match req.path.as_str() {
                "/404" => Reply::new(404).header("Content-Type", "text/plain").body(text()),
                "/encoded" => {
                    Reply::ok().header("Content-Type", "text/plain").header("Content-Encoding", "x").body("FOO")
                }
                "/no-transform" => plain.header("Cache-Control", "no-transform").body(text()),
                "/css" => Reply::ok().header("Content-Type", "text/css").body(text()),
                "/multipart" => Reply::ok().header("Content-Type", "multipart/mixed; boundary=x").body(text()),
                "/chunked" => plain.header("X-AE", &ae).body(text()).chunked(),
                "/weak" => Reply::ok().header("Content-Type", "text/plain").header("ETag", "W/\"w\"").body(text()),
                "/bad-etag" => Reply::ok().header("Content-Type", "text/plain").header("ETag", "nope").body(text()),
                "/close" => plain.body(text()).until_close(),
                _ => plain.header("X-AE", &ae).body(text()),
            }
        })
        .start()
}

const GZIP: &str = "  compression algo gzip\n  compression type text/plain text/html\n";

fn proxy(lines: &str) -> (Running, HttpBackend) {
    let s1 = backend();
    let p = start(&listen_cfg("", lines, &["s1"]), &[("s1", s1.addr())]);
    (p, s1)
}

fn get(p: &Running, path: &str, extra: &str) -> Response {
    let mut c = client(p);
    c.send(format!("GET {path} HTTP/1.1\r\nHost: a\r\n{extra}\r\n")).unwrap();
    c.read_response().unwrap()
}

fn gunzip(b: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    flate2::read::GzDecoder::new(b).read_to_end(&mut v).expect("a gzip stream");
    v
}

#[test]
fn a_plain_response_is_gzipped_when_the_client_accepts_it() {
    let (p, s1) = proxy(GZIP);
    let r = get(&p, "/", "Accept-Encoding: gzip\r\n");
    assert_eq!(r.status, 200);
    assert_eq!(r.headers.get("content-encoding"), Some("gzip"));
    assert_eq!(r.framing, Framing::Chunked);
    assert_eq!(r.headers.get("content-length"), None);
    assert_eq!(r.headers.get("vary"), Some("Accept-Encoding"));
    assert_eq!(r.headers.get("etag"), Some("W/\"v1\""));
    assert_eq!(gunzip(&r.body), text());
    assert!(r.body.len() < 200, "compressed to {} bytes", r.body.len());
    // without compression offload the server sees the client's header
    assert_eq!(s1.requests()[0].headers.get("accept-encoding"), Some("gzip"));
}

#[test]
fn responses_that_must_not_be_compressed_are_forwarded_as_they_are() {
    let (p, _s1) = proxy(GZIP);
    let ae = "Accept-Encoding: gzip\r\n";
    for (path, extra) in [
        ("/", ""),
        ("/", "Accept-Encoding: gzip;q=0\r\n"),
        ("/", "Accept-Encoding: br\r\n"),
        ("/", "Accept-Encoding: gzip\r\nUser-Agent: Mozilla/4.0 (compatible; MSIE 5.5)\r\n"),
        ("/404", ae),
        ("/encoded", ae),
        ("/no-transform", ae),
        ("/css", ae),
        ("/multipart", ae),
        ("/bad-etag", ae),
        ("/close", ae),
    ] {
        let r = get(&p, path, extra);
        assert_eq!(r.headers.get("content-encoding").filter(|v| *v != "x"), None, "{path} {extra}");
        assert_eq!(r.headers.get("vary"), None, "{path} {extra}");
    }
    let mut c = client(&p);
    c.send("HEAD / HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip\r\n\r\n").unwrap();
    let r = c.read_response_for("HEAD").unwrap();
    assert_eq!(r.headers.get("content-encoding"), None);
    c.send("GET / HTTP/1.0\r\nHost: a\r\nAccept-Encoding: gzip\r\n\r\n").unwrap();
    let r = c.read_response().unwrap();
    assert_eq!((r.headers.get("content-encoding"), r.body.len()), (None, 2000));
}

#[test]
fn q_values_and_the_configured_order_pick_the_algorithm() {
    let (p, _s1) = proxy("  compression algo gzip deflate br zstd\n");
    let pick = |ae: &str| {
        get(&p, "/", &format!("Accept-Encoding: {ae}\r\n")).headers.get("content-encoding").map(str::to_owned)
    };
    assert_eq!(pick("*;q=0, gzip;q=0.750, deflate;q=0.500").as_deref(), Some("gzip"));
    assert_eq!(pick("*;q=0, gzip;q=0.500, deflate;q=0.750").as_deref(), Some("deflate"));
    // the last algorithm configured comes first (HAProxy prepends each)
    assert_eq!(pick("*").as_deref(), Some("zstd"));
    assert_eq!(pick("br").as_deref(), Some("br"));
    let r = get(&p, "/chunked", "Accept-Encoding: br\r\n");
    let mut out = Vec::new();
    brotli::Decompressor::new(&r.body[..], 4096).read_to_end(&mut out).unwrap();
    assert_eq!(out, text());
    let r = get(&p, "/", "Accept-Encoding: zstd\r\n");
    assert_eq!(zstd::stream::decode_all(&r.body[..]).unwrap(), text());
}

#[test]
fn offload_hides_accept_encoding_from_the_server_and_fetches_report_it() {
    let lines =
        format!("{GZIP}  compression offload\n  http-response set-header X-Comp %[res.comp]/%[res.comp_algo]\n");
    let (p, s1) = proxy(&lines);
    let r = get(&p, "/chunked", "Accept-Encoding: gzip, br\r\n");
    assert_eq!(r.headers.get("x-comp"), Some("1/gzip"));
    assert_eq!(gunzip(&r.body), text());
    assert_eq!(s1.requests()[0].headers.get("accept-encoding"), None);
    let r = get(&p, "/css", "Accept-Encoding: gzip\r\n");
    assert_eq!(r.headers.get("x-comp"), Some("0/"));
    // the server still sees the header when nothing will be compressed
    get(&p, "/", "Accept-Encoding: br\r\n");
    assert_eq!(s1.requests()[2].headers.get("accept-encoding"), Some("br"));
}

#[test]
fn identity_chunks_without_encoding_and_needs_no_header() {
    let (p, _s1) = proxy("  compression algo identity\n");
    let r = get(&p, "/", "");
    assert_eq!((r.headers.get("content-encoding"), r.framing), (None, Framing::Chunked));
    assert_eq!(r.body, text());
}

#[test]
fn a_streamed_body_is_compressed_piece_by_piece() {
    let every = Duration::from_millis(100);
    let s1 = HttpBackend::builder("s1")
        .reply(
            Reply::ok()
                .header("Content-Type", "text/event-stream")
                .chunks(["data: 1\n\n", "data: 2\n\n", "data: 3\n\n"], every),
        )
        .start();
    let p = start(&listen_cfg("", "  compression algo gzip\n", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&p);
    c.send("GET / HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip\r\n\r\n").unwrap();
    let timed = c.read_response_timed().unwrap();
    assert_eq!(gunzip(&timed.response.body), b"data: 1\n\ndata: 2\n\ndata: 3\n\n");
    let gaps = timed.gaps();
    assert!(gaps.iter().filter(|g| **g >= Duration::from_millis(60)).count() >= 2, "pieces held back: {gaps:?}");
}

#[test]
fn an_http2_client_gets_compressed_responses_too() {
    let s1 = backend();
    let cfg = format!(
        "{}frontend fe1\n  bind fd@${{h2}} proto h2\n  default_backend be\nbackend be\n{GZIP}  server s1 ${{s1_addr}}:${{s1_port}}\n",
        http_common::PREAMBLE
    );
    let p = rampart_testkit::Proxy::new(http_common::binary()).backend("s1", s1.addr()).listener("h2");
    let p = p.config(&cfg).start().expect("the proxy starts");
    let url = format!("http://{}/", p.addr("h2"));
    let out = std::process::Command::new("curl")
        .args(["-sS", "--max-time", "10", "--http2-prior-knowledge", "-D", "-", "-H", "Accept-Encoding: gzip", &url])
        .output()
        .expect("curl runs");
    let raw = out.stdout;
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    let head = String::from_utf8_lossy(&raw[..split]).to_lowercase();
    assert!(head.starts_with("http/2 200"), "{head}");
    assert!(head.contains("content-encoding: gzip") && head.contains("vary: accept-encoding"), "{head}");
    assert!(!head.contains("content-length"), "{head}");
    assert_eq!(gunzip(&raw[split..]), text());
}

/// What a client sees of a response, compressed bytes decoded: the decisions and the
/// headers haproxy and rampart must agree on.
#[derive(Debug, PartialEq)]
struct Seen {
    status: u16,
    headers: Vec<(String, String)>,
    /// The decoded body's length, and whether it is the text the server sent.
    body: (usize, bool),
}

impl Normalize for Seen {
    fn normalize(&mut self, _n: &Normalizer) {}
}

fn seen(r: Response) -> Seen {
    let keep = ["content-encoding", "content-length", "transfer-encoding", "vary", "etag", "content-type"];
    // COMPAT: the order of the headers compression adds differs (haproxy writes
    // `transfer-encoding` and `vary` before `content-encoding`); their set is the same
    let mut headers: Vec<(String, String)> = r
        .headers
        .iter()
        .filter(|(n, _)| keep.contains(&n.to_ascii_lowercase().as_str()))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned()))
        .collect();
    headers.sort();
    let body = match r.headers.get("content-encoding") {
        Some("gzip") => gunzip(&r.body),
        _ => r.body,
    };
    Seen { status: r.status, headers, body: (body.len(), body == text()) }
}

#[test]
fn the_decisions_and_headers_are_haproxys() {
    let cfg = listen_cfg("", GZIP, &["s1"]);
    let d = Differential::new(RAMPART).listener("fe1").backend("s1", backend).config(&cfg);
    let cases: &[(&str, &str)] = &[
        ("/", "Accept-Encoding: gzip\r\n"),
        ("/", "Accept-Encoding: deflate, gzip;q=0.5\r\n"),
        ("/", ""),
        ("/chunked", "Accept-Encoding: gzip\r\n"),
        ("/weak", "Accept-Encoding: gzip\r\n"),
        ("/bad-etag", "Accept-Encoding: gzip\r\n"),
        ("/404", "Accept-Encoding: gzip\r\n"),
        ("/no-transform", "Accept-Encoding: gzip\r\n"),
        ("/css", "Accept-Encoding: gzip\r\n"),
        ("/encoded", "Accept-Encoding: gzip\r\n"),
        ("/", "Accept-Encoding: gzip\r\nUser-Agent: Mozilla/4\r\n"),
    ];
    let Some(cmp) = d.run(|p| cases.iter().map(|(path, extra)| seen(get(p, path, extra))).collect::<Vec<_>>()) else {
        return;
    };
    assert_eq!(cmp.rampart.client, cmp.haproxy.client);
}

/// `filter trace` writes the heads and the forwarded response body to stderr, as
/// HAProxy prints them; with compression declared after it, the compressed body is
/// still whole.
#[test]
fn filter_trace_prints_the_heads_and_the_body() {
    let lines = "  filter trace name T hexdump\n  filter compression\n  compression algo gzip\n";
    let (p, _s1) = proxy(lines);
    let r = get(&p, "/", "Accept-Encoding: gzip\r\nX-Mark: m1\r\n");
    assert_eq!(gunzip(&r.body), text());
    assert!(p.wait_output("trace_http_end", Duration::from_secs(5)), "{}", p.output());
    let out = p.output();
    assert!(out.contains("[T/fe1               ]"), "{out}");
    assert!(
        out.contains("trace_http_headers       : channel=REQUEST    - mode=HTTP  (backend)\tGET / HTTP/1.1"),
        "{out}"
    );
    assert!(out.contains("\tX-Mark: m1"), "{out}");
    assert!(out.contains("channel=RESPONSE   - mode=HTTP  (backend) - offset=0 - len="), "{out}");
    assert!(out.contains("\t0x000000: 74 68 65 20"), "{out}");
    // quiet: nothing
    let (p, _s1) = proxy("  filter trace quiet\n");
    get(&p, "/", "");
    assert!(!p.output().contains("trace_http"), "{}", p.output());
}
