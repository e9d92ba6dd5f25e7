//! The cache beside compression, through the real binary and against haproxy 2.6:
//! with `filter cache` then `filter compression` the object is stored as the server
//! sent it and a hit is compressed on its way out for a client that accepts gzip (and
//! not for one that does not); with the compression in the frontend and the cache in
//! the backend (the compression filter runs first), a response being compressed is
//! not stored. The log line of a hit names the server `<CACHE>`, with the frontend as
//! backend when the frontend's rule found it. The client's view (status, framing,
//! encoding headers, the decoded body), what the server received and the log lines
//! are compared with haproxy's.

mod http_common;

use std::io::Read;
use std::net::UdpSocket;
use std::time::{Duration, Instant};

use http_common::RAMPART;
use rampart_testkit::{Differential, HttpBackend, Normalize, Normalizer, RawClient, Reply, Running};

/// 2400 bytes of text that compress well.
fn text() -> Vec<u8> {
    b"hello world ".iter().copied().cycle().take(2400).collect()
}

fn backend() -> HttpBackend {
    HttpBackend::builder("s1")
        .respond(|_| {
            Reply::ok().header("Content-Type", "text/plain").header("Cache-Control", "max-age=60").body(text())
        })
        .start()
}

const PREAMBLE: &str = "global\n  nbthread 1\n\
     defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n";

const CACHE: &str = "cache c\n  total-max-size 4\n  max-age 60\n";

/// What a client saw of one response: status, the headers compression and the cache
/// touch, and the body once decoded.
#[derive(Debug, PartialEq)]
struct Seen(Vec<(u16, Heads, Vec<u8>)>);

/// Header names and their values (if present).
type Heads = Vec<(String, Option<String>)>;

impl Normalize for Seen {
    fn normalize(&mut self, _n: &Normalizer) {}
}

fn gunzip(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(body).read_to_end(&mut out).expect("a gzip body");
    out
}

/// GETs `/x` once per entry of `accepts` (its `Accept-Encoding`, if any).
fn scenario(p: &Running, listener: &str, accepts: &[Option<&str>]) -> Seen {
    let mut seen = Vec::new();
    for ae in accepts {
        let mut c = RawClient::connect(p.addr(listener)).expect("connects");
        let extra = ae.map(|a| format!("Accept-Encoding: {a}\r\n")).unwrap_or_default();
        c.send(format!("GET /x HTTP/1.1\r\nHost: a\r\n{extra}\r\n")).unwrap();
        let r = c.read_response().unwrap();
        let names = ["content-encoding", "transfer-encoding", "content-length", "vary", "age"];
        let heads = names.iter().map(|n| (n.to_string(), r.headers.get(n).map(str::to_owned))).collect();
        let body = if r.headers.get("content-encoding") == Some("gzip") { gunzip(&r.body) } else { r.body.clone() };
        seen.push((r.status, heads, body));
    }
    Seen(seen)
}

/// The `Accept-Encoding` of each request the server received.
fn server_accepts(obs: &rampart_testkit::Observed<Seen>) -> Vec<Option<String>> {
    let Some((_, rampart_testkit::Seen::Http(reqs))) = obs.servers.iter().find(|(n, _)| n == "s1") else {
        panic!("s1 is an HTTP backend")
    };
    reqs.iter().map(|r| r.headers.get("accept-encoding").map(str::to_owned)).collect()
}

#[test]
fn a_hit_is_compressed_by_a_compression_filter_after_the_cache() {
    let cfg = format!(
        "{PREAMBLE}frontend fe1\n  bind fd@${{fe1}}\n  filter cache c\n  filter compression\n\
         compression algo gzip\n  compression type text/plain\n  http-request cache-use c\n\
         http-response cache-store c\n  default_backend be1\n\
         backend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n{CACHE}"
    );
    let d = Differential::new(RAMPART).listener("fe1").backend("s1", backend).config(&cfg);
    let accepts = [Some("gzip"), Some("gzip"), None, Some("gzip, deflate")];
    let Some(cmp) = d.run(|p| scenario(p, "fe1", &accepts)) else { return };
    let Seen(r) = &cmp.rampart.client;
    // the test means something: the miss and the hits for gzip are compressed, the
    // hit for a client without Accept-Encoding is the stored object as it is
    let enc = |i: usize| r[i].1[0].1.as_deref();
    assert_eq!((enc(0), enc(1), enc(2), enc(3)), (Some("gzip"), Some("gzip"), None, Some("gzip")), "{r:?}");
    assert!(r.iter().all(|(st, _, body)| *st == 200 && body == &text()), "{r:?}");
    assert_eq!(r[1].1[1].1.as_deref(), Some("chunked"), "a compressed hit is chunked: {r:?}");
    assert_eq!(r[2].1[2].1.as_deref(), Some("2400"), "the object was stored uncompressed: {r:?}");
    assert_eq!(cmp.rampart.client, cmp.haproxy.client);
    // one request reached the server, the rest were hits
    assert_eq!(server_accepts(&cmp.rampart), vec![Some("gzip".to_owned())]);
    assert_eq!(server_accepts(&cmp.rampart), server_accepts(&cmp.haproxy));
}

#[test]
fn a_response_compressed_before_the_backends_cache_is_not_stored() {
    // the frontend's compression filter runs before the backend's cache filter
    let cfg = format!(
        "{PREAMBLE}frontend fe1\n  bind fd@${{fe1}}\n  compression algo gzip\n  compression type text/plain\n\
         default_backend be1\n\
         backend be1\n  http-request cache-use c\n  http-response cache-store c\n\
         server s1 ${{s1_addr}}:${{s1_port}}\n{CACHE}"
    );
    let d = Differential::new(RAMPART).listener("fe1").backend("s1", backend).config(&cfg);
    // compressed twice (never stored), then an uncompressed one is stored and served
    // to the next clients, compressed for the one accepting gzip
    let accepts = [Some("gzip"), Some("gzip"), None, None, Some("gzip")];
    let Some(cmp) = d.run(|p| scenario(p, "fe1", &accepts)) else { return };
    let Seen(r) = &cmp.rampart.client;
    assert!(r.iter().all(|(st, _, body)| *st == 200 && body == &text()), "{r:?}");
    assert_eq!(r[3].1[4].1.as_deref(), Some("0"), "the fourth is a hit: {r:?}");
    assert_eq!(cmp.rampart.client, cmp.haproxy.client);
    assert_eq!(server_accepts(&cmp.rampart).len(), 3, "{:?}", server_accepts(&cmp.rampart));
    assert_eq!(server_accepts(&cmp.rampart), server_accepts(&cmp.haproxy));
}

#[test]
fn compression_before_the_cache_in_one_proxy_is_refused() {
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  filter compression\n  filter cache c\n\
         compression algo gzip\n  http-request cache-use c\n  http-response cache-store c\n\
         server s1 127.0.0.1:1\n{CACHE}"
    );
    let d = Differential::new(RAMPART).listener("fe1").config(&cfg);
    let Some((h, r)) = d.check() else { return };
    assert!(h.code != 0 && r.code != 0, "{}\n---\n{}", h.stderr, r.stderr);
    let msg = "unable to enable the compression filter before the cache 'c'.";
    assert!(h.stderr.contains(msg) && r.stderr.contains(msg), "{}\n---\n{}", h.stderr, r.stderr);
}

// === the log line of a hit ===

/// The syslog lines of a run, masked where runs legitimately differ (the syslog
/// header, the client port, the date, the timers, the connection counts).
#[derive(Debug, PartialEq)]
struct Lines(Vec<String>);

impl Normalize for Lines {
    fn normalize(&mut self, _n: &Normalizer) {}
}

fn mask(line: &str) -> String {
    let body = line.split_once("]: ").map_or(line, |(_, b)| b);
    body.split(' ')
        .enumerate()
        .map(|(i, tok)| match i {
            0 => tok.rsplit_once(':').map_or(tok.to_owned(), |(ip, _)| format!("{ip}:*")),
            1 if tok.starts_with('[') => "[date]".to_owned(),
            4 => "timers".to_owned(),
            // `%ac/%fc/%bc/%sc/%rc`: when the previous client's close was seen varies
            10 => "counts".to_owned(),
            _ => tok.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn collect(rx: &UdpSocket, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 65536];
    rx.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    while out.len() < n && Instant::now() < deadline {
        if let Ok(len) = rx.recv(&mut buf) {
            out.push(mask(String::from_utf8_lossy(&buf[..len]).trim_end()));
        }
    }
    out
}

#[test]
fn the_log_line_of_a_hit_names_the_cache_as_haproxy() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let syslog = rx.local_addr().unwrap();
    // fe1's own rules use the cache (its hits keep fe1 as backend); fe2's backend's do
    let cfg = format!(
        "global\n  nbthread 1\n  log {syslog} local0\n\
         defaults\n  mode http\n  log global\n  option httplog\n  timeout client 5s\n  timeout server 5s\n\
         timeout connect 1s\n\
         frontend fe1\n  bind fd@${{fe1}}\n  http-request cache-use c\n  http-response cache-store c\n\
         default_backend be1\n\
         backend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n\
         frontend fe2\n  bind fd@${{fe2}}\n  default_backend be2\n\
         backend be2\n  http-request cache-use d\n  http-response cache-store d\n\
         server s1 ${{s1_addr}}:${{s1_port}}\n{CACHE}cache d\n  total-max-size 4\n  max-age 60\n"
    );
    let d = Differential::new(RAMPART).listener("fe1").listener("fe2").backend("s1", backend).config(&cfg);
    let Some(cmp) = d.run(|p| {
        while !collect(&rx, 1).is_empty() {}
        for li in ["fe1", "fe1", "fe2", "fe2"] {
            scenario(p, li, &[None]);
        }
        Lines(collect(&rx, 4))
    }) else {
        return;
    };
    let Lines(r) = &cmp.rampart.client;
    assert_eq!(r.len(), 4, "{r:?}");
    assert!(r[1].contains(" fe1 fe1/<CACHE> ") && r[3].contains(" fe2 be2/<CACHE> "), "{r:#?}");
    assert_eq!(cmp.rampart.client, cmp.haproxy.client);
}

// === a large compressed hit streams ===

/// 12 MiB of a xorshift sequence: nothing to compress, so the compressed hit is as
/// large as the object, far more than the sockets between the proxy and a client that
/// does not read can hold (the proxy's send buffer is at most `tcp_wmem`'s 4 MiB).
const BIG: usize = 12 << 20;

fn noise() -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..BIG / 8)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()
        })
        .collect()
}

/// What the client saw of a large compressed hit.
#[derive(Debug, PartialEq)]
struct BigHit {
    /// The response was a hit (`Age`), gzip and chunked.
    hit_gzip_chunked: bool,
    /// `comp_in` of the frontend once the client had the first 64 KiB and stopped
    /// reading, was below the object's size: compressed as it went, not whole first.
    streamed: bool,
    /// The chunks' data gunzipped is the object.
    decodes: bool,
    /// `comp_in` at the end is the object's size.
    comp_in_end: u64,
    /// How many chunks carried data (not compared: the pieces' sizes differ).
    chunks: usize,
}

impl Normalize for BigHit {
    fn normalize(&mut self, _n: &Normalizer) {}
}

impl BigHit {
    /// What is compared with haproxy: all but the chunks.
    fn compared(&self) -> (bool, bool, bool, u64) {
        (self.hit_gzip_chunked, self.streamed, self.decodes, self.comp_in_end)
    }
}

fn comp_in(p: &Running) -> u64 {
    let out = rampart_testkit::stats_command(&p.dir().join("admin.sock"), "show stat\n");
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap().trim_start_matches("# ").split(',').collect();
    let col = header.iter().position(|h| *h == "comp_in").unwrap();
    let row = lines.find(|l| l.starts_with("fe1,FRONTEND,")).unwrap();
    row.split(',').nth(col).unwrap().parse().unwrap_or(0)
}

/// Reads the data of a chunked body from `c` (the bytes after the head in `buf`), one
/// entry per chunk; `mid` is called once `at_least` body bytes arrived.
fn chunked(c: &mut std::net::TcpStream, mut buf: Vec<u8>, at_least: usize, mut mid: impl FnMut()) -> Vec<Vec<u8>> {
    let mut pos = 0;
    let mut out = Vec::new();
    let mut mid_done = false;
    let mut tmp = vec![0u8; 1 << 16];
    loop {
        if !mid_done && buf.len() >= at_least {
            mid();
            mid_done = true;
        }
        // every whole chunk in hand
        while let Some(eol) = buf[pos..].windows(2).position(|w| w == b"\r\n") {
            let size = usize::from_str_radix(std::str::from_utf8(&buf[pos..pos + eol]).unwrap(), 16).unwrap();
            let start = pos + eol + 2;
            if size == 0 {
                return out;
            }
            if buf.len() < start + size + 2 {
                break;
            }
            out.push(buf[start..start + size].to_vec());
            pos = start + size + 2;
        }
        let n = c.read(&mut tmp).unwrap();
        assert!(n > 0, "the body ended early");
        buf.extend_from_slice(&tmp[..n]);
    }
}

fn big_hit(p: &Running, object: &[u8]) -> BigHit {
    // the miss: stored as the server sent it
    let mut c = RawClient::connect(p.addr("fe1")).expect("connects");
    c.set_read_timeout(Duration::from_secs(30)).unwrap();
    c.send("GET /big HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let r = c.read_response().unwrap();
    assert_eq!((r.status, r.body.len()), (200, BIG));
    // the hit, by a client with a small receive buffer that stops reading a while
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_recv_buffer_size(16 << 10).unwrap();
    sock.connect(&p.addr("fe1").into()).unwrap();
    let mut c: std::net::TcpStream = sock.into();
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    std::io::Write::write_all(&mut c, b"GET /big HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip\r\n\r\n").unwrap();
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = c.read(&mut tmp).unwrap();
        assert!(n > 0, "no head");
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let hit_gzip_chunked = head.contains("\r\nage: ")
        && head.contains("\r\ncontent-encoding: gzip\r\n")
        && head.contains("\r\ntransfer-encoding: chunked\r\n");
    let mut mid = None;
    let data = chunked(&mut c, buf[head_end..].to_vec(), 64 << 10, || mid = Some(comp_in(p)));
    let mut plain = Vec::new();
    let decodes = flate2::read::GzDecoder::new(&data.concat()[..]).read_to_end(&mut plain).is_ok() && plain == object;
    BigHit {
        hit_gzip_chunked,
        streamed: mid.is_some_and(|m| m < BIG as u64),
        decodes,
        comp_in_end: comp_in(p),
        chunks: data.len(),
    }
}

#[test]
fn a_large_compressed_hit_is_compressed_and_sent_piece_by_piece() {
    let object = std::sync::Arc::new(noise());
    let served = object.clone();
    let backend = move || {
        let o = served.clone();
        HttpBackend::builder("s1")
            .respond(move |_| {
                Reply::ok().header("Content-Type", "text/plain").header("Cache-Control", "max-age=60").body(o.to_vec())
            })
            .start()
    };
    let cfg = "global\n  nbthread 1\n  stats socket ${testdir}/admin.sock level admin\n\
         defaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n  timeout connect 1s\n\
         frontend fe1\n  bind fd@${fe1}\n  filter cache c\n  filter compression\n\
         compression algo gzip\n  compression type text/plain\n  http-request cache-use c\n\
         http-response cache-store c\n  default_backend be1\n\
         backend be1\n  server s1 ${s1_addr}:${s1_port}\n\
         cache c\n  total-max-size 32\n  max-object-size 16000000\n  max-age 60\n";
    let d = Differential::new(RAMPART).listener("fe1").backend("s1", backend).config(cfg);
    let Some(cmp) = d.run(|p| big_hit(p, &object)) else { return };
    let r = &cmp.rampart.client;
    assert!(r.hit_gzip_chunked && r.streamed && r.decodes, "{r:?}");
    assert_eq!(r.comp_in_end, BIG as u64, "{r:?}");
    // a chunk per piece of at most a buffer (16 kB less tune.maxrewrite)
    assert!(r.chunks >= BIG / 16384, "{r:?}");
    assert_eq!(r.compared(), cmp.haproxy.client.compared(), "{:?}", cmp.haproxy.client);
}
