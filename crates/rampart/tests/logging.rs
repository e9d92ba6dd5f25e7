//! Log lines, rampart against haproxy: the same configuration (httplog and tcplog to a
//! UDP syslog receiver owned by the test) and the same exchanges (200, 404, deny,
//! redirect, connection refused, server timeout, client abort, bad request, a TCP
//! session) through both; the lines must match field by field once times, dates,
//! ports and pids are masked. `halog` (Debian's haproxy package) must then give the
//! same summaries over both sets of lines. Skipped (with a visible line) when haproxy
//! is not installed; `RAMPART_REQUIRE_HAPROXY=1` makes that a failure.

use std::io::{Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rampart_testkit::{closed_port, Differential, HttpBackend, Normalize, Normalizer, Reply, Running, TcpEchoBackend};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// The syslog lines a run produced, as received.
#[derive(Debug, Clone, PartialEq)]
struct Lines(Vec<String>);

impl Normalize for Lines {
    fn normalize(&mut self, _: &Normalizer) {}
}

fn config(syslog: SocketAddr, dead: SocketAddr) -> String {
    format!(
        "global\n  log {syslog} local0\n  log-tag px\n\
         defaults\n  mode http\n  log global\n  option httplog\n  retries 0\n\
         \x20 timeout client 5s\n  timeout server 1s\n  timeout connect 1s\n\
         frontend fe1\n  bind fd@${{fe1}}\n\
         \x20 http-request deny if {{ path /deny }}\n\
         \x20 http-request redirect location /moved if {{ path /red }}\n\
         \x20 http-request tarpit if {{ path /tarpit }}\n  timeout tarpit 200ms\n\
         \x20 use_backend dead if {{ path /dead }}\n  use_backend one if {{ path_beg /q/ }}\n  default_backend be\n\
         backend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n\
         backend dead\n  server s2 {dead}\n\
         backend one\n  timeout queue 500ms\n  server s3 ${{s1_addr}}:${{s1_port}} maxconn 1\n\
         listen tcp1\n  mode tcp\n  option tcplog\n  bind fd@${{tcp1}}\n  server e1 ${{e1_addr}}:${{e1_port}}\n"
    )
}

fn backend() -> HttpBackend {
    HttpBackend::builder("s1")
        .respond(|req| match req.path.as_str() {
            "/404" => Reply::new(404).body("nope"),
            "/slow" | "/q/slow" => Reply::ok().body("late").delay(Duration::from_secs(3)),
            "/stream" => Reply::ok().chunks((0..20).map(|_| "x".repeat(1000)), Duration::from_millis(100)),
            _ => Reply::ok().body("hello"),
        })
        .start()
}

/// Sends one request on its own connection and reads until the proxy closes.
fn exchange(addr: SocketAddr, request: &str) {
    let mut c = std::net::TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(request.as_bytes()).unwrap();
    let mut sink = Vec::new();
    let _ = c.read_to_end(&mut sink);
}

fn get(addr: SocketAddr, path: &str) {
    exchange(addr, &format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"));
}

/// Receives lines until `n` arrived or nothing came for a while.
fn collect(rx: &UdpSocket, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 65536];
    while out.len() < n && Instant::now() < deadline {
        if let Ok(len) = rx.recv(&mut buf) {
            out.push(String::from_utf8_lossy(&buf[..len]).trim_end().to_owned());
        }
    }
    out
}

/// The lines expected of the scenario.
const LINES: usize = 14;

fn scenario(rx: &UdpSocket, proxy: &Running) -> Lines {
    while collect_one(rx).is_some() {}
    let fe = proxy.addr("fe1");
    get(fe, "/");
    get(fe, "/404");
    get(fe, "/deny");
    get(fe, "/red");
    get(fe, "/dead");
    get(fe, "/slow");
    // client abort: the request, then the client leaves before the response
    {
        let mut c = std::net::TcpStream::connect(fe).unwrap();
        c.write_all(b"GET /slow HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(1500));
    exchange(fe, "BAD REQUEST\r\n\r\n");
    get(fe, "/tarpit");
    // queue timeout: the only slot of `one` is taken for 1s (then 504), the second
    // request waits 500ms in the queue (503 sQ, logged first)
    // ; a third one, sent after that timeout, waits for the slot until the first
    // ends (its `%Tw`, and `%bq` 1)
    let first = std::thread::spawn(move || get(fe, "/q/slow"));
    let third = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(750));
        get(fe, "/q/fast");
    });
    std::thread::sleep(Duration::from_millis(100));
    get(fe, "/q/slow");
    let _ = first.join();
    let _ = third.join();
    // client abort during the data: a slow body, the client leaves after its start
    {
        let mut c = std::net::TcpStream::connect(fe).unwrap();
        c.write_all(b"GET /stream HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
        let mut buf = [0u8; 512];
        let _ = c.read(&mut buf);
        std::thread::sleep(Duration::from_millis(300));
    }
    std::thread::sleep(Duration::from_millis(2500));
    // a TCP session
    {
        let mut c = std::net::TcpStream::connect(proxy.addr("tcp1")).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(b"ping").unwrap();
        let mut got = [0u8; 4];
        c.read_exact(&mut got).unwrap();
        c.shutdown(std::net::Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        let _ = c.read_to_end(&mut rest);
    }
    Lines(collect(rx, LINES))
}

fn collect_one(rx: &UdpSocket) -> Option<String> {
    rx.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let mut buf = [0u8; 65536];
    let r = rx.recv(&mut buf).ok().map(|n| String::from_utf8_lossy(&buf[..n]).into_owned());
    rx.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    r
}

/// A line with what legitimately differs masked: the syslog date and pid, the client
/// port, the accept date, the timer values (their sign stays: `-1` says a phase never
/// happened), the connection counts (racy: they depend on when the previous client's
/// close was seen).
fn mask(line: &str) -> Vec<String> {
    let (hdr, body) = line.split_once("]: ").unwrap_or(("", line));
    let pri = hdr.split('>').next().unwrap_or_default();
    let tag = hdr.rsplit(' ').next().unwrap_or_default().split('[').next().unwrap_or_default();
    let mut out = vec![format!("{pri}> {tag}")];
    for (i, tok) in body.split(' ').enumerate() {
        let masked = match i {
            0 => tok.rsplit_once(':').map_or(tok.to_owned(), |(ip, _)| format!("{ip}:*")),
            1 if tok.starts_with('[') => "[date]".to_owned(),
            4 => tok.split('/').map(|t| if t.starts_with('-') { t } else { "n" }).collect::<Vec<_>>().join("/"),
            // the bytes sent before a client left mid-body depend on timing
            6 if body.contains(" CD-- ") => "bytes".to_owned(),
            // `%ac/%fc/%bc/%sc/%rc`: the connection counts depend on when the previous
            // client's close was seen; the retries stay
            _ if i >= 5 && numbers(tok) == 5 => format!("n/n/n/n/{}", tok.rsplit('/').next().unwrap_or_default()),
            _ => tok.to_owned(),
        };
        out.push(masked);
    }
    out
}

/// How many `/`-separated numbers `tok` is made of (0 if anything else is in it).
fn numbers(tok: &str) -> usize {
    let parts: Vec<&str> = tok.split('/').collect();
    if parts.iter().all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit())) {
        parts.len()
    } else {
        0
    }
}

/// Runs `halog <flag>` over the lines (as a syslog file: date, host, tag).
fn halog(flag: &str, lines: &[String]) -> Option<String> {
    let input: String = lines
        .iter()
        .map(|l| {
            let rest = l.split_once('>').map_or(l.as_str(), |(_, r)| r);
            // `Mmm dd hh:mm:ss tag[pid]: ...` -> `Mmm dd hh:mm:ss host tag[pid]: ...`
            format!("{} localhost {}\n", &rest[..15.min(rest.len())], rest.get(16..).unwrap_or_default())
        })
        .collect();
    let mut child = Command::new("halog")
        .arg(flag)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(input.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The columns of a halog summary that do not depend on timings: counts, sizes, names.
fn halog_counts(flag: &str, text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let pick = |idx: &[usize]| idx.iter().map(|&i| cols.get(i).copied().unwrap_or("")).collect::<Vec<_>>();
            match flag {
                // status, count
                "-st" => cols.clone(),
                // server, 1xx..5xx, other, total, ok, % ok (then average times)
                "-srv" => pick(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
                // requests, errors, (times), average and total bytes (but those of the
                // client that left mid-body), URL
                _ if cols.last() == Some(&"/stream") => pick(&[0, 1, 8]),
                _ => pick(&[0, 1, 6, 7, 8]),
            }
            .join(" ")
        })
        .collect()
}

#[test]
fn httplog_and_tcplog_lines_match_haproxy_field_by_field() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let syslog = rx.local_addr().unwrap();
    let dead = closed_port();
    let diff = Differential::new(RAMPART)
        .listener("fe1")
        .listener("tcp1")
        .backend("s1", backend)
        .backend("e1", TcpEchoBackend::start)
        .config(&config(syslog, dead));
    let Some(cmp) = diff.run(|proxy| scenario(&rx, proxy)) else { return };
    let (h, r) = (&cmp.haproxy.client.0, &cmp.rampart.client.0);
    let show = || format!("=== haproxy ===\n{}\n=== rampart ===\n{}", h.join("\n"), r.join("\n"));
    assert_eq!(h.len(), LINES, "haproxy logged an unexpected number of lines\n{}", show());
    assert_eq!(r.len(), h.len(), "{}", show());
    // the order of lines of exchanges that ended together depends on timing
    let sorted = |lines: &[String]| {
        let mut m: Vec<Vec<String>> = lines.iter().map(|l| mask(l)).collect();
        m.sort();
        m
    };
    for (hl, rl) in sorted(h).iter().zip(sorted(r)) {
        assert_eq!(&rl, hl, "line differs\n{}", show());
    }
    // the stream that waited for the slot: its wait is `%Tw`, not `%Tc`
    for lines in [h, r] {
        let fast = lines.iter().find(|l| l.contains("/q/fast")).expect("the queued request's line");
        let body = fast.split_once("]: ").map_or(fast.as_str(), |(_, b)| b);
        let timers: Vec<i64> = body.split(' ').nth(4).unwrap().split('/').map(|t| t.parse().unwrap()).collect();
        // (a stream that got its server at once has `Tw` 0; the wait's length depends
        // on this machine's load, so only its presence is checked)
        assert!(timers[1] > 0, "Tw: {fast}");
    }
    for flag in ["-st", "-srv", "-u"] {
        let (Some(ho), Some(ro)) = (halog(flag, h), halog(flag, r)) else {
            println!("SKIPPED halog {flag}: halog is not installed");
            continue;
        };
        assert!(halog_counts(flag, &ho).len() > 1, "halog {flag} read haproxy's lines: {ho}");
        assert_eq!(halog_counts(flag, &ro), halog_counts(flag, &ho), "halog {flag}\n{ho}\n---\n{ro}");
    }
}

#[test]
fn a_frontend_without_a_format_logs_each_connection_as_haproxy() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let syslog = rx.local_addr().unwrap();
    let cfg = format!(
        "global\n  log {syslog} local0\n  log-tag px\ndefaults\n  mode http\n  log global\n  timeout client 5s\n\
         \x20 timeout server 5s\n  timeout connect 1s\nfrontend fe1\n  bind fd@${{fe1}}\n  default_backend be\n\
         backend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let diff = Differential::new(RAMPART).listener("fe1").backend("s1", backend).config(&cfg);
    let Some(cmp) = diff.run(|proxy| {
        while collect_one(&rx).is_some() {}
        get(proxy.addr("fe1"), "/");
        Lines(collect(&rx, 1))
    }) else {
        return;
    };
    // the ports differ between runs
    let strip = |l: &Lines| {
        let port = |t: &str| t.rsplit_once(':').map_or(t.to_owned(), |(a, _)| format!("{a}:*"));
        l.0.iter().map(|l| mask(l).iter().map(|t| port(t)).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>()
    };
    assert_eq!(strip(&cmp.rampart.client), strip(&cmp.haproxy.client), "{:?}", cmp.haproxy.client);
    assert!(cmp.haproxy.client.0[0].contains("Connect from 127.0.0.1:"), "{:?}", cmp.haproxy.client);
}

#[test]
fn stdout_target_prints_each_request_in_httplog_format() {
    let be = HttpBackend::start("s1");
    let cfg = "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
               frontend fe1\n  bind fd@${fe1}\n  log stdout format raw local0\n  option httplog\n\
               \x20 default_backend be\nbackend be\n  server s1 ${s1_addr}:${s1_port}\n";
    let proxy = rampart_testkit::Proxy::new(RAMPART)
        .listener("fe1")
        .backend("s1", be.addr())
        .config(cfg)
        .start()
        .expect("rampart starts");
    get(proxy.addr("fe1"), "/hello?x=1");
    assert!(proxy.wait_output("be/s1 ", Duration::from_secs(5)), "no log line on stdout:\n{}", proxy.output());
    let out = proxy.output();
    let line = out.lines().find(|l| l.contains("be/s1")).unwrap_or_default();
    assert!(line.starts_with("127.0.0.1:"), "{line}");
    assert!(line.contains(" fe1 be/s1 "), "{line}");
    assert!(line.contains(" 200 "), "{line}");
    assert!(line.contains(" ---- "), "{line}");
    assert!(line.ends_with("\"GET /hello?x=1 HTTP/1.1\""), "{line}");
}

#[test]
fn an_unresolvable_target_is_an_alert_naming_it() {
    let cfg = "global\n  log no-such-host.invalid:514 local0\ndefaults\n  mode http\n  timeout client 1s\n\
               \x20 timeout server 1s\n  timeout connect 1s\nfrontend fe1\n  bind 127.0.0.1:0\n  log global\n";
    let out = rampart_testkit::check(RAMPART, cfg);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("[ALERT]") && out.stderr.contains("no-such-host.invalid"), "{}", out.stderr);
    // a ring nobody declared (HAProxy says so when it starts; rampart with -c too)
    let cfg = cfg.replace("no-such-host.invalid:514", "ring@buf");
    let out = rampart_testkit::check(RAMPART, &cfg);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains(
            " : config : global log server declared in file 'test.cfg' at line 2 uses unknown ring named 'buf'."
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn soft_stop_reports_go_to_the_logs_too() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let syslog = rx.local_addr().unwrap();
    let be = HttpBackend::start("s1");
    let cfg = format!(
        "global\n  log {syslog} local0\ndefaults\n  mode http\n  log global\n  timeout client 5s\n\
         \x20 timeout server 5s\n  timeout connect 1s\nfrontend fe1\n  bind fd@${{fe1}}\n  option httplog\n\
         \x20 default_backend be\nbackend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let mut proxy = rampart_testkit::Proxy::new(RAMPART)
        .listener("fe1")
        .backend("s1", be.addr())
        .config(&cfg)
        .start()
        .expect("rampart starts");
    proxy.signal(rampart_testkit::Signal::SIGUSR1).unwrap();
    let _ = proxy.wait_exit(Duration::from_secs(5));
    let lines = collect(&rx, 2);
    // HAProxy 2.6: `<132>... haproxy[pid]: Proxy fe1 stopped (cumulated conns: FE: 0, BE: 0).`
    let stopped: Vec<&String> = lines.iter().filter(|l| l.contains(": Proxy ")).collect();
    assert_eq!(stopped.len(), 2, "{lines:?}");
    assert!(stopped[0].starts_with("<132>"), "warning level: {lines:?}");
    assert!(stopped[0].ends_with("]: Proxy fe1 stopped (cumulated conns: FE: 0, BE: 0)."), "{lines:?}");
    assert!(stopped[1].ends_with("]: Proxy be stopped (cumulated conns: FE: 0, BE: 0)."), "{lines:?}");
}

#[test]
fn a_bad_proxy_header_is_logged_as_haproxy_does() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let syslog = rx.local_addr().unwrap();
    let cfg = format!(
        "global\n  log {syslog} local0\n  log-tag px\n\
         defaults\n  mode http\n  log global\n  option httplog\n\
         \x20 timeout client 5s\n  timeout server 1s\n  timeout connect 1s\n\
         frontend fe2\n  bind fd@${{fe2}} accept-proxy\n  default_backend be\n\
         backend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let diff = Differential::new(RAMPART).listener("fe2").backend("s1", backend).config(&cfg);
    let Some(cmp) = diff.run(|proxy| {
        while collect_one(&rx).is_some() {}
        let fe = proxy.addr("fe2");
        exchange(fe, "GET / HTTP/1.1\r\nHost: t\r\n\r\n");
        std::thread::sleep(Duration::from_millis(200));
        exchange(fe, "PROXY TCP4 1.2.3.4\r\n");
        Lines(collect(&rx, 2))
    }) else {
        return;
    };
    // `<pri>date host tag[pid]: <ip>:<port> [<date>] fe2/1: <why>`: port and dates masked
    let mask = |l: &String| {
        let body = l.split_once("]: ").map_or(l.as_str(), |(_, b)| b);
        let (addr, rest) = body.split_once(" [").unwrap_or((body, ""));
        let ip = addr.rsplit_once(':').map_or(addr, |(ip, _)| ip);
        format!("{ip}:* [date{}", rest.split_once(']').map_or("", |(_, r)| r))
    };
    let (h, r): (Vec<String>, Vec<String>) =
        (cmp.haproxy.client.0.iter().map(mask).collect(), cmp.rampart.client.0.iter().map(mask).collect());
    assert_eq!(h.len(), 2, "{h:?}");
    assert_eq!(h[0], "127.0.0.1:* [date fe2/1: Received something which does not look like a PROXY protocol header");
    assert_eq!(r, h);
}

#[test]
fn httpslog_lines_match_haproxy_on_a_plain_connection() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let syslog = rx.local_addr().unwrap();
    let cfg = format!(
        "global\n  log {syslog} local0\n  log-tag px\n\
         defaults\n  mode http\n  log global\n  option httpslog\n\
         \x20 timeout client 5s\n  timeout server 1s\n  timeout connect 1s\n\
         frontend fe3\n  bind fd@${{fe3}}\n  http-request deny if {{ path /deny }}\n  default_backend be\n\
         backend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let diff = Differential::new(RAMPART).listener("fe3").backend("s1", backend).config(&cfg);
    let Some(cmp) = diff.run(|proxy| {
        while collect_one(&rx).is_some() {}
        get(proxy.addr("fe3"), "/");
        get(proxy.addr("fe3"), "/deny");
        Lines(collect(&rx, 2))
    }) else {
        return;
    };
    let (h, r) = (&cmp.haproxy.client.0, &cmp.rampart.client.0);
    assert_eq!(h.len(), 2, "{h:?}");
    assert!(h.iter().any(|l| l.ends_with("\"GET / HTTP/1.1\" 0/-/-/-/0 -/-/-")), "{h:?}");
    // (the two connections' lines may come in either order, as with haproxy's threads)
    let masked = |lines: &[String]| {
        let mut m = lines.iter().map(|l| mask(l)).collect::<Vec<_>>();
        m.sort();
        m
    };
    assert_eq!(masked(r), masked(h), "\n{h:?}\n{r:?}");
}

#[test]
fn log_format_sd_fills_the_rfc5424_structured_data_as_haproxy() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let syslog = rx.local_addr().unwrap();
    let cfg = format!(
        "defaults\n  mode http\n  timeout client 5s\n  timeout server 1s\n  timeout connect 1s\n\
         frontend fe4\n  bind fd@${{fe4}}\n  log {syslog} format rfc5424 local0\n  log-tag px\n\
         \x20 log-format \"%ST %r\"\n  log-format-sd \"[req@1 fe=\\\"%f\\\" st=\\\"%ST\\\"]   \"\n\
         \x20 default_backend be\n\
         backend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let diff = Differential::new(RAMPART).listener("fe4").backend("s1", backend).config(&cfg);
    let Some(cmp) = diff.run(|proxy| {
        while collect_one(&rx).is_some() {}
        get(proxy.addr("fe4"), "/404");
        Lines(collect(&rx, 1))
    }) else {
        return;
    };
    // `<pri>1 <date> <host> <tag> <pid> - <sd> <msg>`: the date and pid masked
    let mask = |l: &String| {
        let w: Vec<&str> = l.split(' ').collect();
        let mut w: Vec<String> = w.iter().map(|s| (*s).to_owned()).collect();
        if w.len() > 4 {
            w[1] = "date".into();
            w[4] = "pid".into();
        }
        w.join(" ")
    };
    let (h, r) = (&cmp.haproxy.client.0, &cmp.rampart.client.0);
    assert_eq!(h.len(), 1, "{h:?}");
    assert_eq!(mask(&h[0]), "<134>1 date - px pid - [req@1 fe=\"fe4\" st=\"404\"] 404 GET /404 HTTP/1.1");
    assert_eq!(r.iter().map(mask).collect::<Vec<_>>(), [mask(&h[0])]);
}

/// Sample fetches in a log format run at the end of the stream, when the messages are
/// gone: as in HAProxy, the method (kept by the transaction) is still known. (Fetches
/// that need the message, `path` or `req.hdr`, are refused in a log format at startup,
/// as by HAProxy.)
#[test]
fn log_format_fetches_see_what_haproxy_keeps_at_the_end_of_the_stream() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let syslog = rx.local_addr().unwrap();
    let cfg = format!(
        "defaults\n  mode http\n  timeout client 5s\n  timeout server 1s\n  timeout connect 1s\n\
         frontend fe5\n  bind fd@${{fe5}}\n  log {syslog} local0\n\
         \x20 log-format \"m=%[method] s=%[status] ST=%ST\"\n\
         \x20 default_backend be\n\
         backend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let diff = Differential::new(RAMPART).listener("fe5").backend("s1", backend).config(&cfg);
    let Some(cmp) = diff.run(|proxy| {
        while collect_one(&rx).is_some() {}
        get(proxy.addr("fe5"), "/404");
        exchange(proxy.addr("fe5"), "PURGE /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
        Lines(collect(&rx, 2))
    }) else {
        return;
    };
    let msg = |l: &String| l.split_once(": ").map(|(_, m)| m.to_owned()).unwrap_or_default();
    let (h, r) = (&cmp.haproxy.client.0, &cmp.rampart.client.0);
    let (mut h, mut r): (Vec<String>, Vec<String>) = (h.iter().map(msg).collect(), r.iter().map(msg).collect());
    h.sort();
    r.sort();
    assert!(h.iter().any(|l| l.starts_with("m=GET ")), "haproxy knows the method: {h:?}");
    assert_eq!(r, h);
}

/// `%U` counts the request head as HAProxy's internal message holds it (request line
/// parts plus a fixed overhead, header names and values), then every body byte, also
/// those that arrive after the head; `%B` likewise for the response.
#[test]
fn request_and_response_sizes_count_as_haproxy() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let syslog = rx.local_addr().unwrap();
    let cfg = format!(
        "global\n  log {syslog} local0\n  log-tag px\ndefaults\n  mode http\n  log global\n\
         \x20 log-format \"U=%U B=%B ST=%ST\"\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         frontend fe4\n  bind fd@${{fe4}}\n  default_backend be\nbackend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let diff = Differential::new(RAMPART).listener("fe4").backend("s1", backend).config(&cfg);
    let Some(cmp) = diff.run(|proxy| {
        while collect_one(&rx).is_some() {}
        let long = "v".repeat(300);
        exchange(
            proxy.addr("fe4"),
            &format!("GET /a/b?c=d HTTP/1.1\r\nHost: example.com\r\nX-Long: {long}\r\nConnection: close\r\n\r\n"),
        );
        let mut c = std::net::TcpStream::connect(proxy.addr("fe4")).expect("connect");
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let head = "POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: 3000\r\nConnection: close\r\n\r\n";
        c.write_all(format!("{head}{}", "a".repeat(1000)).as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        c.write_all("b".repeat(2000).as_bytes()).unwrap();
        let mut sink = Vec::new();
        let _ = c.read_to_end(&mut sink);
        Lines(collect(&rx, 2))
    }) else {
        return;
    };
    let fields =
        |l: &Lines| l.0.iter().map(|l| l.rsplit_once(": ").map_or("", |(_, f)| f).to_owned()).collect::<Vec<_>>();
    let h = fields(&cmp.haproxy.client);
    assert_eq!(h.len(), 2, "{h:?}");
    assert!(h[1].starts_with("U=3"), "the body's late bytes count: {h:?}");
    assert_eq!(fields(&cmp.rampart.client), h);
}

/// `set-log-level` in each rule list that has it: `silent` sends no line, a level
/// becomes the line's syslog severity (the last rule that ran wins), in HTTP and TCP
/// streams alike, and `log-separate-errors` no longer decides.
#[test]
fn set_log_level_changes_the_severity_or_silences_the_line() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let syslog = rx.local_addr().unwrap();
    let cfg = format!(
        "global\n  log {syslog} local0\n  log-tag px\n\
         defaults\n  log global\n  timeout client 5s\n  timeout server 1s\n  timeout connect 1s\n\
         frontend fe1\n  mode http\n  bind fd@${{fe1}}\n  log-format \"%ST %HP\"\n  option log-separate-errors\n\
         \x20 tcp-request content set-log-level notice if {{ path /tcp-notice }}\n\
         \x20 http-request set-log-level silent if {{ path /silent }}\n\
         \x20 http-request set-log-level debug if {{ path_beg /debug }}\n\
         \x20 http-request set-var(txn.crit) bool(1) if {{ path /crit }}\n\
         \x20 http-response set-log-level err if {{ status 404 }}\n\
         \x20 http-request deny if {{ path /debug/deny }}\n\
         \x20 default_backend be\n\
         backend be\n  mode http\n  server s1 ${{s1_addr}}:${{s1_port}}\n\
         \x20 tcp-response content set-log-level crit if {{ var(txn.crit) -m found }}\n\
         listen tcp1\n  mode tcp\n  bind fd@${{tcp1}}\n  log-format \"tcp\"\n\
         \x20 tcp-request content set-log-level notice\n  server e1 ${{e1_addr}}:${{e1_port}}\n"
    );
    let diff = Differential::new(RAMPART)
        .listener("fe1")
        .listener("tcp1")
        .backend("s1", backend)
        .backend("e1", TcpEchoBackend::start)
        .config(&cfg);
    let Some(cmp) = diff.run(|proxy| {
        while collect_one(&rx).is_some() {}
        let fe = proxy.addr("fe1");
        for path in ["/", "/silent", "/debug", "/404", "/debug/deny", "/tcp-notice", "/crit"] {
            get(fe, path);
        }
        ping(proxy.addr("tcp1"));
        Lines(priorities(&rx, 7))
    }) else {
        return;
    };
    let (h, r) = (&cmp.haproxy.client.0, &cmp.rampart.client.0);
    // local0 is 16: 16 * 8 + severity
    let want = [
        "<130> 200 /crit",
        "<131> 404 /404",
        "<133> 200 /tcp-notice",
        "<133> tcp",
        "<134> 200 /",
        "<135> 200 /debug",
        "<135> 403 /debug/deny",
    ];
    assert_eq!(h, &want, "{h:?}");
    assert_eq!(r, h);
}

/// A `tcp-response content` rule of a TCP stream sets the level too. (haproxy 2.6
/// runs these rules of a TCP `listen` only now and then: its line comes at the
/// `tcp-request` rule's level most of the time, so this one is rampart's alone.)
#[test]
fn set_log_level_in_tcp_response_rules_of_a_tcp_stream() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let syslog = rx.local_addr().unwrap();
    let echo = TcpEchoBackend::start();
    let cfg = format!(
        "global\n  log {syslog} local0\n  log-tag px\n\
         defaults\n  log global\n  timeout client 5s\n  timeout server 1s\n  timeout connect 1s\n\
         listen tcp1\n  mode tcp\n  bind fd@${{tcp1}}\n  log-format \"tcp\"\n\
         \x20 tcp-request content set-log-level notice\n  tcp-response inspect-delay 1s\n\
         \x20 tcp-response content set-log-level alert if {{ res.len gt 0 }}\n  server e1 ${{e1_addr}}:${{e1_port}}\n"
    );
    let proxy = rampart_testkit::Proxy::new(RAMPART)
        .listener("tcp1")
        .backend("e1", echo.addr())
        .config(&cfg)
        .start()
        .expect("rampart starts");
    while collect_one(&rx).is_some() {}
    ping(proxy.addr("tcp1"));
    assert_eq!(priorities(&rx, 1), ["<129> tcp"]);
}

/// Sends `ping` on a TCP connection and reads the echo.
fn ping(addr: SocketAddr) {
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(b"ping").unwrap();
    let mut buf = [0u8; 4];
    c.read_exact(&mut buf).unwrap();
}

/// `n` lines as `<pri> message`, sorted, after making sure no other line follows (the
/// line of a silenced stream would).
fn priorities(rx: &UdpSocket, n: usize) -> Vec<String> {
    let mut lines = collect(rx, n);
    std::thread::sleep(Duration::from_millis(300));
    while let Some(l) = collect_one(rx) {
        lines.push(l);
    }
    let mut lines: Vec<String> = lines
        .iter()
        .map(|l| {
            let pri = l.split('>').next().unwrap_or_default();
            let msg = l.split_once("]: ").map_or(l.as_str(), |(_, m)| m);
            format!("{pri}> {}", msg.trim_end())
        })
        .collect();
    lines.sort();
    lines
}
