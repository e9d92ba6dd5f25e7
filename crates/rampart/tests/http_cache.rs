//! The HTTP cache through the real binary: what is stored and served (`cache-use`,
//! `cache-store`), `Age`, conditional requests answered with `304`, what the server
//! still receives, `res.cache_hit` / `res.cache_name`, the memory bound with eviction,
//! `show cache` on the stats socket, a hit over HTTP/2, and differential runs of the
//! cacheability decisions and of the `cache_lookups` / `cache_hits` columns of
//! `show stat` against haproxy 2.6.

mod http_common;

use http_common::{client, PREAMBLE, RAMPART};
use rampart_testkit::{Differential, HttpBackend, Normalize, Normalizer, Proxy, Reply, Response, Running};

/// A backend whose answers say which request they answer (`X-N`).
fn backend() -> HttpBackend {
    let n = std::sync::atomic::AtomicU32::new(0);
    HttpBackend::builder("s1")
        .respond(move |req| {
            let n = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_string();
            let ok = Reply::ok().header("X-N", &n);
            match req.path.as_str() {
                "/etag" => ok.header("ETag", "\"e1\"").body("etag body"),
                "/private" => ok.header("Cache-Control", "private, max-age=60").body("private"),
                "/no-validator" => ok.body("plain"),
                "/vary-ua" => ok.header("Cache-Control", "max-age=60").header("Vary", "User-Agent").body("v"),
                "/404" => Reply::new(404).header("Cache-Control", "max-age=60").header("X-N", &n).body("nf"),
                "/big" => ok.header("Cache-Control", "max-age=60").body(vec![b'b'; 40_000]),
                "/chunked" => ok.header("Cache-Control", "max-age=60").body("chunked body").chunked(),
                p if p.starts_with("/fill") => ok.header("Cache-Control", "max-age=60").body(vec![b'f'; 200_000]),
                _ => ok
                    .header("Cache-Control", "max-age=60")
                    .header("Last-Modified", "Thu, 22 Oct 2020 16:51:12 GMT")
                    .body("cached body"),
            }
        })
        .start()
}

fn cfg(extra_cache: &str) -> String {
    format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  http-request cache-use c\n  http-response cache-store c\n\
         http-response set-header X-Hit %[res.cache_hit]/%[res.cache_name]\n  server s1 ${{s1_addr}}:${{s1_port}}\n\
         cache c\n  total-max-size 1\n  max-age 60\n{extra_cache}"
    )
}

fn start(text: &str) -> (Running, HttpBackend) {
    let s1 = backend();
    let p = Proxy::new(http_common::binary())
        .listener("fe1")
        .backend("s1", s1.addr())
        .config(text)
        .start()
        .expect("starts");
    (p, s1)
}

fn get(p: &Running, path: &str, extra: &str) -> Response {
    let mut c = client(p);
    c.send(format!("GET {path} HTTP/1.1\r\nHost: a\r\n{extra}\r\n")).unwrap();
    c.read_response().unwrap()
}

#[test]
fn a_cacheable_response_is_served_from_the_cache_with_its_age() {
    let (p, s1) = start(&cfg(""));
    let first = get(&p, "/", "");
    assert_eq!((first.headers.get("x-hit"), first.body_str().as_str()), (Some("0/"), "cached body"));
    let again = get(&p, "/", "");
    assert_eq!(again.headers.get("x-hit"), Some("1/c"));
    assert_eq!(again.headers.get("x-n"), Some("0"), "the stored response");
    assert_eq!(again.headers.get("age"), Some("0"));
    assert_eq!(again.body_str(), "cached body");
    assert_eq!(s1.requests().len(), 1, "the server saw one request");
    // another host is another object
    let mut c = client(&p);
    c.send("GET / HTTP/1.1\r\nHost: b\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().headers.get("x-hit"), Some("0/"));
    // a chunked response is stored with its data, served with a length
    get(&p, "/chunked", "");
    let r = get(&p, "/chunked", "");
    assert_eq!((r.headers.get("x-hit"), r.body_str().as_str()), (Some("1/c"), "chunked body"));
    // a HEAD request is answered from the stored object: its head, the body's length, no
    // body (as HAProxy's cache applet); the connection stays usable
    let mut c = client(&p);
    c.send("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let h = c.read_response_for("HEAD").unwrap();
    assert_eq!(h.headers.get("x-hit"), Some("1/c"));
    assert_eq!(h.headers.get("content-length"), Some("11"), "the length of \"cached body\"");
    assert_eq!(h.body_str(), "");
    c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().body_str(), "cached body", "no body was sent after the HEAD answer");
    assert_eq!(s1.requests().len(), 3, "the server saw only the misses (/, b's /, /chunked)");
}

#[test]
fn uncacheable_requests_and_responses_go_to_the_server() {
    let (p, s1) = start(&cfg(""));
    for (path, extra) in [
        ("/private", ""),
        ("/no-validator", ""),
        ("/vary-ua", ""),
        ("/404", ""),
        ("/big", ""),
        ("/", "Authorization: Basic eDp5\r\n"),
    ] {
        get(&p, path, extra);
        let r = get(&p, path, extra);
        assert_eq!(r.headers.get("x-hit"), Some("0/"), "{path} {extra}");
    }
    assert_eq!(s1.requests().len(), 12);
    // `no-cache` on the request: not served from the cache, but stored
    get(&p, "/nc", "Cache-Control: no-cache\r\n");
    assert_eq!(get(&p, "/nc", "Cache-Control: no-cache\r\n").headers.get("x-hit"), Some("0/"));
    assert_eq!(get(&p, "/nc", "").headers.get("x-hit"), Some("1/c"));
    // a successful POST invalidates the object
    let mut c = client(&p);
    c.send("POST /nc HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx").unwrap();
    c.read_response().unwrap();
    assert_eq!(get(&p, "/nc", "").headers.get("x-hit"), Some("0/"));
}

#[test]
fn conditional_requests_get_304_from_the_cache() {
    let (p, _s1) = start(&cfg(""));
    get(&p, "/etag", "");
    let r = get(&p, "/etag", "If-None-Match: \"e1\"\r\n");
    assert_eq!((r.status, r.body.len()), (304, 0));
    assert_eq!(get(&p, "/etag", "If-None-Match: \"other\"\r\n").status, 200);
    get(&p, "/", "");
    assert_eq!(get(&p, "/", "If-Modified-Since: Thu, 22 Oct 2020 16:51:12 GMT\r\n").status, 304);
    assert_eq!(get(&p, "/", "If-Modified-Since: Thu, 22 Oct 2020 16:51:11 GMT\r\n").status, 200);
}

#[test]
fn the_cache_stays_within_its_size_and_show_cache_lists_it() {
    let sock = tempfile_path("cache.sock");
    let text = cfg("  max-object-size 300000\n")
        .replace("global\n", &format!("global\n  stats socket {} level admin\n", sock.display()));
    let (p, _s1) = start(&text);
    // 1 MB holds at most 5 objects of 200 kB: the oldest go first
    for i in 0..8 {
        get(&p, &format!("/fill{i}"), "");
    }
    assert_eq!(get(&p, "/fill7", "").headers.get("x-hit"), Some("1/c"));
    assert_eq!(get(&p, "/fill0", "").headers.get("x-hit"), Some("0/"));
    let out = rampart_testkit::stats_command(&sock, "show cache");
    let first = out.lines().next().unwrap_or_default();
    assert!(first.contains(": c (shctx:") && first.contains("available blocks:"), "{out}");
    let objects = out.lines().filter(|l| l.contains(" hash:")).count();
    assert!((1..=5).contains(&objects), "{out}");
}

fn tempfile_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rampart-cache-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    dir
}

#[test]
fn an_http2_client_is_served_from_the_cache() {
    let s1 = backend();
    let text = cfg("").replace("bind fd@${fe1}", "bind fd@${fe1}\n  bind fd@${h2} proto h2");
    let p = Proxy::new(http_common::binary())
        .listener("fe1")
        .listener("h2")
        .backend("s1", s1.addr())
        .config(&text)
        .start()
        .expect("starts");
    // as HAProxy, an HTTP/2 request's key is its absolute target (`http://` here):
    // not shared with HTTP/1 requests (keyed `https://` + Host)
    let url = format!("http://{}/", p.addr("h2"));
    let curl = || {
        let out = std::process::Command::new("curl")
            .args(["-sS", "--max-time", "10", "--http2-prior-knowledge", "-D", "-", &url])
            .output()
            .expect("curl runs");
        String::from_utf8_lossy(&out.stdout).to_lowercase()
    };
    assert!(curl().contains("x-hit: 0/"));
    let text = curl();
    assert!(text.starts_with("http/2 200") && text.contains("x-hit: 1/c") && text.ends_with("cached body"), "{text}");
    assert_eq!(s1.requests().len(), 1);
}

/// What a client sees of the cache's decisions.
#[derive(Debug, PartialEq)]
struct Seen(Vec<(u16, Option<String>, Option<String>)>);

impl Normalize for Seen {
    fn normalize(&mut self, _n: &Normalizer) {}
}

#[test]
fn the_cacheability_decisions_are_haproxys() {
    let d = Differential::new(RAMPART).listener("fe1").backend("s1", backend).config(&cfg(""));
    let cases: &[(&str, &str)] = &[
        ("/", ""),
        ("/", ""),
        ("/private", ""),
        ("/private", ""),
        ("/no-validator", ""),
        ("/no-validator", ""),
        ("/etag", ""),
        ("/etag", "If-None-Match: \"e1\"\r\n"),
        ("/404", ""),
        ("/404", ""),
        ("/vary-ua", ""),
        ("/vary-ua", ""),
        ("/", "Cache-Control: no-cache\r\n"),
        ("/", "Authorization: Basic eDp5\r\n"),
    ];
    let run = |p: &Running| {
        Seen(
            cases
                .iter()
                .map(|(path, extra)| {
                    let r = get(p, path, extra);
                    (r.status, r.headers.get("x-hit").map(str::to_owned), r.headers.get("age").map(str::to_owned))
                })
                .collect(),
        )
    };
    let Some(cmp) = d.run(run) else { return };
    assert_eq!(cmp.rampart.client, cmp.haproxy.client);
}

/// A frontend whose own rules use cache `c` (counted in its FRONTEND row) in front of a
/// backend without cache rules, and a frontend in front of a backend whose rules use
/// cache `d` (counted in its BACKEND row).
fn counting_cfg() -> String {
    "global\n  nbthread 1\n  stats socket ${testdir}/admin.sock level admin\n\
     defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
     frontend fe1\n  bind fd@${fe1}\n  http-request cache-use c\n  http-response cache-store c\n  default_backend be1\n\
     backend be1\n  server s1 ${s1_addr}:${s1_port}\n\
     frontend fe2\n  bind fd@${fe2}\n  default_backend be2\n\
     backend be2\n  http-request cache-use d\n  http-response cache-store d\n  server s1 ${s1_addr}:${s1_port}\n\
     cache c\n  total-max-size 1\n  max-age 60\n\
     cache d\n  total-max-size 1\n  max-age 60\n"
        .to_owned()
}

/// `cache_lookups` and `cache_hits` of the FRONTEND and BACKEND rows, by proxy.
#[derive(Debug, PartialEq)]
struct CacheCounts(Vec<(String, String, String)>);

impl Normalize for CacheCounts {
    fn normalize(&mut self, _n: &Normalizer) {}
}

fn cache_counts(p: &Running) -> CacheCounts {
    let out = rampart_testkit::stats_command(&p.dir().join("admin.sock"), "show stat\n");
    let mut lines = out.lines().skip_while(|l| !l.starts_with("# "));
    let header: Vec<&str> = lines.next().unwrap_or_default().trim_start_matches("# ").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name} in {out}"));
    let (lookups, hits) = (col("cache_lookups"), col("cache_hits"));
    let mut rows: Vec<_> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|c| c.len() > hits && matches!(c[1], "FRONTEND" | "BACKEND"))
        .map(|c| (format!("{}/{}", c[0], c[1]), c[lookups].to_owned(), c[hits].to_owned()))
        .collect();
    rows.sort();
    CacheCounts(rows)
}

#[test]
fn show_stat_counts_cache_lookups_and_hits_as_haproxy() {
    let d = Differential::new(RAMPART).listener("fe1").listener("fe2").backend("s1", backend).config(&counting_cfg());
    // (listener, request): misses, hits, a 304 from the cache, and requests that are
    // no lookups at all (HTTP/1.0, POST, `no-cache`)
    let cases: &[(&str, &str)] = &[
        ("fe1", "GET / HTTP/1.1\r\nHost: a\r\n"),
        ("fe1", "GET / HTTP/1.1\r\nHost: a\r\n"),
        ("fe1", "GET /etag HTTP/1.1\r\nHost: a\r\n"),
        ("fe1", "GET /etag HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"e1\"\r\n"),
        ("fe1", "GET /private HTTP/1.1\r\nHost: a\r\n"),
        ("fe1", "GET / HTTP/1.0\r\nHost: a\r\n"),
        ("fe1", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n"),
        ("fe1", "GET / HTTP/1.1\r\nHost: a\r\nCache-Control: no-cache\r\n"),
        ("fe2", "GET / HTTP/1.1\r\nHost: a\r\n"),
        ("fe2", "GET / HTTP/1.1\r\nHost: a\r\n"),
        ("fe2", "GET / HTTP/1.1\r\nHost: a\r\n"),
        ("fe2", "GET /404 HTTP/1.1\r\nHost: a\r\n"),
        ("fe2", "GET /404 HTTP/1.1\r\nHost: a\r\n"),
    ];
    let run = |p: &Running| {
        for (li, req) in cases {
            let mut c = rampart_testkit::RawClient::connect(p.addr(li)).expect("connects");
            c.send(format!("{req}\r\n")).unwrap();
            c.read_response().unwrap();
        }
        cache_counts(p)
    };
    let Some(cmp) = d.run(run) else { return };
    let CacheCounts(rows) = &cmp.rampart.client;
    // the test means something: both sides counted lookups and hits
    assert!(rows.contains(&("fe1/FRONTEND".into(), "5".into(), "2".into())), "{rows:?}");
    assert!(rows.contains(&("be2/BACKEND".into(), "5".into(), "2".into())), "{rows:?}");
    assert_eq!(cmp.rampart.client, cmp.haproxy.client);
}
