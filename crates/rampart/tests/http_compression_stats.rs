//! What compression counts and how its limits act, through the real binary: the
//! `comp_in`, `comp_out`, `comp_byp`, `comp_rsp` columns of `show stat` (frontend and
//! backend rows) and their Prometheus metrics, compared with haproxy 2.6's after the
//! same compressed, identity-encoded and uncompressed responses; `show info`'s
//! `CompressBps*`; `maxcomprate` and `set rate-limit http-compression global`, which
//! stop new responses from being compressed; `maxzlibmem`.

mod http_common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use http_common::RAMPART;
use rampart_testkit::{eventually, Differential, HttpBackend, Normalize, Normalizer, Proxy, RawClient, Reply, Running};

/// 20000 bytes that compress well.
fn text() -> Vec<u8> {
    b"the quick brown fox jumps over the lazy dog. ".iter().copied().cycle().take(20_000).collect()
}

fn backend() -> HttpBackend {
    HttpBackend::builder("s1")
        .respond(|req| match req.path.as_str() {
            "/css" => Reply::ok().header("Content-Type", "text/css").body(text()),
            "/404" => Reply::new(404).header("Content-Type", "text/plain").body(text()),
            // 100 bytes, then the rest 1.5 s later: a compressor held open meanwhile
            "/slow" => Reply::ok()
                .header("Content-Type", "text/plain")
                .chunks([text()[..100].to_vec(), text()], Duration::from_millis(1500)),
            _ => Reply::ok().header("Content-Type", "text/plain").body(text()),
        })
        .start()
}

/// A `listen fe1` compressing text/plain with gzip (or identity when the client asks
/// for nothing better), a Prometheus exporter on `prom`, `global_lines` added.
fn cfg(global_lines: &str) -> String {
    format!(
        "global\n  nbthread 1\n  stats socket ${{testdir}}/admin.sock level admin\n{global_lines}\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         frontend prom\n  bind fd@${{prom}}\n  http-request use-service prometheus-exporter\n\
         listen fe1\n  bind fd@${{fe1}}\n  compression algo gzip identity\n  compression type text/plain\n\
         server s1 ${{s1_addr}}:${{s1_port}}\n"
    )
}

fn cli(p: &Running, cmd: &str) -> String {
    let path = p.dir().join("admin.sock");
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut s = loop {
        match UnixStream::connect(&path) {
            Ok(s) => break s,
            Err(e) if Instant::now() > deadline => panic!("stats socket: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    s.write_all(format!("{cmd}\n").as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// `show stat` rows keyed by `pxname/svname`.
fn stat(p: &Running) -> HashMap<String, HashMap<String, String>> {
    let out = cli(p, "show stat");
    let mut lines = out.lines();
    let header: Vec<String> = lines.next().unwrap().trim_start_matches("# ").split(',').map(str::to_owned).collect();
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            let row = header.iter().cloned().zip(cells.iter().map(|c| (*c).to_owned())).collect();
            (format!("{}/{}", cells[0], cells[1]), row)
        })
        .collect()
}

fn info(p: &Running) -> HashMap<String, String> {
    cli(p, "show info").lines().filter_map(|l| l.split_once(": ")).map(|(k, v)| (k.to_owned(), v.to_owned())).collect()
}

/// Sends `path` with `accept` and returns the response's `Content-Encoding`.
fn get(p: &Running, path: &str, accept: &str) -> Option<String> {
    let mut c = RawClient::connect(p.addr("fe1")).unwrap();
    let ae = if accept.is_empty() { String::new() } else { format!("Accept-Encoding: {accept}\r\n") };
    c.send(format!("GET {path} HTTP/1.1\r\nHost: a\r\n{ae}\r\n")).unwrap();
    let r = c.read_response().unwrap();
    assert!(!r.body.is_empty());
    r.headers.get("content-encoding").map(str::to_owned)
}

/// The compression counters of a row.
#[derive(Debug, PartialEq)]
struct Comp {
    bytes_in: u64,
    /// Whether the output is smaller than the input (the compressed sizes differ:
    /// haproxy uses libslz, rampart zlib-rs).
    shrunk: bool,
    bypassed: u64,
    responses: u64,
}

#[derive(Debug, PartialEq)]
struct Counted {
    rows: Vec<(String, Comp)>,
    /// `haproxy_{frontend,backend}_http_comp_*` sample lines but the bytes out.
    metrics: Vec<String>,
}

impl Normalize for Counted {
    fn normalize(&mut self, _n: &Normalizer) {}
}

fn comp(row: &HashMap<String, String>) -> Comp {
    let n = |c: &str| row[c].parse::<u64>().unwrap_or_else(|_| panic!("{c}: {:?}", row[c]));
    Comp {
        bytes_in: n("comp_in"),
        shrunk: n("comp_out") > 0 && n("comp_out") < n("comp_in"),
        bypassed: n("comp_byp"),
        responses: n("comp_rsp"),
    }
}

fn metrics(p: &Running) -> Vec<String> {
    let mut c = RawClient::connect(p.addr("prom")).unwrap();
    c.send("GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let r = c.read_response().unwrap();
    let text = String::from_utf8_lossy(&r.body).into_owned();
    text.lines()
        .filter(|l| l.contains("_http_comp_") && !l.starts_with('#') && !l.contains("bytes_out"))
        .filter(|l| l.contains("\"fe1\""))
        .map(str::to_owned)
        .collect()
}

/// Three gzip responses, two identity ones (counted as bypassed), and three not
/// compressed at all (a type not listed, a 404, a HEAD).
fn traffic(p: &Running) -> Counted {
    for _ in 0..3 {
        assert_eq!(get(p, "/", "gzip").as_deref(), Some("gzip"));
    }
    for _ in 0..2 {
        assert_eq!(get(p, "/", "").as_deref(), None);
    }
    assert_eq!(get(p, "/css", "gzip"), None);
    assert_eq!(get(p, "/404", "gzip"), None);
    let rows = stat(p);
    let rows = ["fe1/FRONTEND", "fe1/BACKEND"].iter().map(|r| (r.to_string(), comp(&rows[*r]))).collect();
    Counted { rows, metrics: metrics(p) }
}

#[test]
fn the_counters_are_haproxys_after_compressed_and_bypassed_responses() {
    let d = Differential::new(RAMPART).listener("fe1").listener("prom").backend("s1", backend).config(&cfg(""));
    let Some(cmp) = d.run(traffic) else { return };
    assert_eq!(cmp.rampart.client, cmp.haproxy.client);
    // and the figures themselves
    let want = Comp { bytes_in: 3 * 20_000, shrunk: true, bypassed: 2 * 20_000, responses: 5 };
    for (row, c) in &cmp.rampart.client.rows {
        assert_eq!(c, &want, "{row}");
    }
    assert!(cmp.rampart.client.metrics.contains(&"haproxy_frontend_http_comp_responses_total{proxy=\"fe1\"} 5".into()));
    assert!(cmp
        .rampart
        .client
        .metrics
        .contains(&"haproxy_backend_http_comp_bytes_bypassed_total{proxy=\"fe1\"} 40000".into()));
}

fn start(global_lines: &str) -> (Running, HttpBackend) {
    let s1 = backend();
    let p = Proxy::new(http_common::binary())
        .listener("fe1")
        .listener("prom")
        .backend("s1", s1.addr())
        .config(&cfg(global_lines))
        .start()
        .expect("the proxy starts");
    (p, s1)
}

#[test]
fn show_info_reports_the_rates_and_the_limit() {
    let (p, _s1) = start("  maxcomprate 100000\n");
    assert_eq!(info(&p)["CompressBpsRateLim"], "102400000");
    assert_eq!(get(&p, "/", "gzip").as_deref(), Some("gzip"));
    let i = info(&p);
    let (bps_in, bps_out): (u64, u64) = (i["CompressBpsIn"].parse().unwrap(), i["CompressBpsOut"].parse().unwrap());
    assert!(bps_in >= 20_000 && bps_out > 0 && bps_out < bps_in, "{bps_in} {bps_out}");
    // HAProxy's libslz builds do not list the zlib memory without `maxzlibmem`
    assert!(!i.contains_key("ZlibMemUsage"));
}

#[test]
fn maxcomprate_stops_compressing_new_responses_until_the_rate_falls() {
    // 1 kB/s: the first response's 20 kB put the rate over it
    let (p, _s1) = start("  maxcomprate 1\n");
    assert_eq!(get(&p, "/", "gzip").as_deref(), Some("gzip"));
    assert_eq!(get(&p, "/", "gzip"), None, "over the limit: forwarded as it is");
    // lifted at run time
    assert_eq!(cli(&p, "set rate-limit http-compression global 0"), "\n");
    assert_eq!(info(&p)["CompressBpsRateLim"], "0");
    assert_eq!(get(&p, "/", "gzip").as_deref(), Some("gzip"));
    // and set again
    assert_eq!(cli(&p, "set rate-limit http-compression global 1"), "\n");
    assert_eq!(info(&p)["CompressBpsRateLim"], "1024");
    assert_eq!(get(&p, "/", "gzip"), None);
    // the window slides: a couple of seconds later compression resumes
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(get(&p, "/", "gzip").as_deref(), Some("gzip"));
}

#[test]
fn set_rate_limit_answers_as_haproxy() {
    let (p, _s1) = start("");
    assert_eq!(cli(&p, "set rate-limit http-compression global"), "Expects an integer value.\n\n");
    assert_eq!(cli(&p, "set rate-limit http-compression global -1"), "Value out of range.\n\n");
    assert!(cli(&p, "set rate-limit foo").starts_with("'set rate-limit' only supports :\n"));
    assert_eq!(cli(&p, "set rate-limit http-compression global 50"), "\n");
    assert_eq!(info(&p)["CompressBpsRateLim"], "51200");
}

#[test]
fn maxzlibmem_is_reported_and_bounds_the_contexts() {
    let (p, _s1) = start("  maxzlibmem 10\n");
    let i = info(&p);
    assert_eq!(i["MaxZlibMemUsage"], (10u64 << 20).to_string());
    assert_eq!(i["ZlibMemUsage"], "0", "no response is being compressed");
    assert_eq!(get(&p, "/", "gzip").as_deref(), Some("gzip"));
    assert_eq!(info(&p)["ZlibMemUsage"], "0", "given back at the end of the response");
}

#[test]
fn maxzlibmem_counts_what_each_context_holds() {
    // 1 MB: as many level-1 contexts as their table and first window fit (a context was
    // charged zlib's 262 KiB before: 4 of them)
    let (p, _s1) = start("  maxzlibmem 1\n");
    let max: u64 = info(&p)["MaxZlibMemUsage"].parse().unwrap();
    assert_eq!(max, 1 << 20);
    let clients: Vec<RawClient> = (0..24)
        .map(|_| {
            let mut c = RawClient::connect(p.addr("fe1")).unwrap();
            c.send("GET /slow HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip\r\n\r\n").unwrap();
            c
        })
        .collect();
    // every head is in (the first 100 bytes went through the compressors)
    let mut heads = Vec::new();
    for mut c in clients {
        let head = String::from_utf8_lossy(&c.read_until("\r\n\r\n").unwrap()).to_ascii_lowercase();
        heads.push((c, head.contains("content-encoding: gzip")));
    }
    let compressed = heads.iter().filter(|(_, gz)| *gz).count() as u64;
    let used: u64 = info(&p)["ZlibMemUsage"].parse().unwrap();
    let per = used / compressed.max(1);
    // a context's table (64 KiB), struct and the 100 bytes of window
    assert!((64 * 1024..66 * 1024).contains(&per), "{used} for {compressed}");
    assert!(compressed < 24 && compressed.abs_diff(max / per) <= 1, "{compressed} compressed, {per} each");
    assert!(used <= max, "{used}");
    drop(heads);
    eventually!(info(&p)["ZlibMemUsage"] == "0", "given back as the responses end");
}
