//! More of issue 28's drop-in sweep, through the real binary and, where it behaves the
//! same, haproxy 2.6 on the same configuration: `option idle-close-on-response` (idle
//! connections survive a soft stop until their next request), `option checkcache` (a
//! cacheable response with the server's cookie is blocked), `tune.http.maxhdr` (400 /
//! 502 past the limit), `max-reuse` on an HTTP/2 server (streams per connection),
//! `noreuseport` (the listener has no `SO_REUSEPORT`), `nosplice` (no pipe is made).

mod h2_server;
mod http_common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use h2_server::{Answer, H2Server};
use http_common::*;
use rampart_testkit::{HttpBackend, RawClient, Reply, Signal};

const IDLE_CFG: &str = "\
global\n  nbthread 1\n  hard-stop-after 10s\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
  timeout http-keep-alive 5s\n\
frontend keep\n  bind fd@${keep}\n  option idle-close-on-response\n\
  http-request return status 200 content-type text/plain string ok\n\
frontend plain\n  bind fd@${plain}\n\
  http-request return status 200 content-type text/plain string ok\n";

const GET: &str = "GET / HTTP/1.1\r\nhost: x\r\n\r\n";

#[test]
fn idle_close_on_response_keeps_idle_connections_through_a_soft_stop() {
    for bin in binaries("idle_close_on_response_keeps_idle_connections_through_a_soft_stop") {
        let who = name(&bin);
        let proxy = start_with(&bin, IDLE_CFG, &["keep", "plain"], &[]);
        let mut keep = RawClient::connect(proxy.addr("keep")).unwrap();
        let mut plain = RawClient::connect(proxy.addr("plain")).unwrap();
        for c in [&mut keep, &mut plain] {
            c.send(GET).unwrap();
            assert_eq!(c.read_response().unwrap().status, 200, "{who}");
        }
        proxy.signal(Signal::SIGUSR1).unwrap();
        // longer than rampart's own grace for idle connections (200 ms)
        std::thread::sleep(Duration::from_millis(800));
        // without the option the idle connection was closed by the soft stop
        assert!(closes_soon(&mut plain), "{who}: the plain idle connection is closed");
        // with it, the next request is served and its response announces the close
        keep.send(GET).unwrap();
        let res = keep.read_response().unwrap();
        assert_eq!(res.status, 200, "{who}");
        assert_eq!(res.headers.get("connection").map(str::to_ascii_lowercase).as_deref(), Some("close"), "{who}");
        assert!(closes_soon(&mut keep), "{who}: closed after that response");
    }
}

const CHECKCACHE_CFG: &str = "\
global\n  nbthread 1\n  log stderr format raw local0\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
  log global\n  option httplog\n\
listen l\n  bind fd@${l}\n  option checkcache\n  server s1 ${s1_addr}:${s1_port}\n\
listen nocheck\n  bind fd@${nocheck}\n  server s1 ${s1_addr}:${s1_port}\n";

/// A server whose path names the headers of its answer: `cookie`, `expires`, `etag`,
/// `private`, `public`, `maxage`, `nocachecookie`.
fn cache_server() -> HttpBackend {
    HttpBackend::builder("s1")
        .respond(|req| {
            let mut r = Reply::ok().body("from-server");
            let has = |w: &str| req.path.split(['/', '-']).any(|p| p == w);
            let headers = [
                ("cookie", "set-cookie", "sid=1"),
                ("expires", "expires", "Thu, 01 Dec 2050 16:00:00 GMT"),
                ("etag", "etag", "\"v1\""),
                ("private", "cache-control", "private"),
                ("public", "cache-control", "public"),
                ("maxage", "cache-control", "max-age=60"),
                ("nocachecookie", "cache-control", "no-cache=\"set-cookie\""),
            ];
            for (word, name, value) in headers {
                if has(word) {
                    r = r.header(name, value);
                }
            }
            r
        })
        .start()
}

#[test]
fn checkcache_blocks_a_cacheable_response_that_sets_a_cookie() {
    for bin in binaries("checkcache_blocks_a_cacheable_response_that_sets_a_cookie") {
        let who = name(&bin);
        let s1 = cache_server();
        let proxy = start_with(&bin, CHECKCACHE_CFG, &["l", "nocheck"], &[("s1", s1.addr())]);
        let get = |listener: &str, path: &str| {
            let mut c = RawClient::connect(proxy.addr(listener)).unwrap();
            c.send(format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")).unwrap();
            let res = c.read_response().unwrap();
            (res.status, String::from_utf8_lossy(&res.body).into_owned())
        };
        // cacheable (an expiry or a validator, not private) with the server's cookie
        for path in ["/cookie-expires", "/cookie-etag", "/cookie-maxage", "/cookie-public-expires"] {
            let (status, body) = get("l", path);
            assert_ne!(body, "from-server", "{who}: {path} is blocked");
            // COMPAT: haproxy 2.6.12 answers its `200 Service ready` page there
            if bin == binary() {
                assert_eq!(status, 502, "{path}");
            }
        }
        // not cacheable, or no cookie, or the cookie kept out of the cache
        for path in
            ["/cookie", "/cookie-public", "/cookie-expires-private", "/expires", "/cookie-expires-nocachecookie"]
        {
            assert_eq!(get("l", path), (200, "from-server".to_owned()), "{who}: {path}");
        }
        // without the option nothing is blocked
        assert_eq!(get("nocheck", "/cookie-expires"), (200, "from-server".to_owned()), "{who}");
        let alert = "Blocking cacheable cookie in response from instance l, server s1.";
        assert!(proxy.wait_output(alert, Duration::from_secs(3)), "{who}: {}", proxy.output());
        let out = proxy.output();
        let line = out.lines().find(|l| l.contains("GET /cookie-expires HTTP/1.1")).unwrap_or_default();
        assert!(line.contains(" PH-- "), "{who}: {line}");
    }
}

const MAXHDR_CFG: &str = "\
global\n  nbthread 1\n  tune.http.maxhdr 10\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
listen l\n  bind fd@${l}\n  server s1 ${s1_addr}:${s1_port}\n";

/// A request with `n` header fields (`host` included).
fn request_with(n: usize) -> String {
    let mut req = String::from("GET /?req=");
    req.push_str(&n.to_string());
    // no `connection: close`: HAProxy's parser drops such a header before counting
    req.push_str(" HTTP/1.1\r\nhost: x\r\n");
    for i in 1..n {
        req.push_str(&format!("x-h{i}: v\r\n"));
    }
    req + "\r\n"
}

#[test]
fn tune_http_maxhdr_bounds_the_header_fields_of_requests_and_responses() {
    for bin in binaries("tune_http_maxhdr_bounds_the_header_fields_of_requests_and_responses") {
        let who = name(&bin);
        // the server answers with as many fields as the `h` parameter says
        let s1 = HttpBackend::builder("s1")
            .respond(|req| {
                let n: usize = req.path.strip_prefix("/?h=").and_then(|v| v.parse().ok()).unwrap_or(1);
                (1..n).fold(Reply::ok().body("ok"), |r, i| r.header(&format!("x-r{i}"), "v"))
            })
            .start();
        let proxy = start_with(&bin, MAXHDR_CFG, &["l"], &[("s1", s1.addr())]);
        let send = |req: &str| {
            let mut c = RawClient::connect(proxy.addr("l")).unwrap();
            c.send(req).unwrap();
            c.read_response().unwrap().status
        };
        // 10 lines in all, start line included: 9 fields pass, 10 do not
        assert_eq!(send(&request_with(9)), 200, "{who}");
        assert_eq!(send(&request_with(10)), 400, "{who}");
        // the server's response: content-length plus `h - 1` fields
        let res = |fields: usize| format!("GET /?h={fields} HTTP/1.1\r\nhost: x\r\n\r\n");
        assert_eq!(send(&res(8)), 200, "{who}");
        assert_eq!(send(&res(12)), 502, "{who}");
        let seen: Vec<String> = s1.requests().iter().map(|r| r.path.clone()).collect();
        assert!(!seen.contains(&"/?req=10".to_owned()), "{who}: the refused request never left: {seen:?}");
    }
}

const MAX_REUSE_CFG: &str = "\
global\n  nbthread 1\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n  http-reuse always\n\
listen limited\n  bind fd@${limited}\n  server s1 ${s1_addr}:${s1_port} proto h2 max-reuse 1\n\
listen free\n  bind fd@${free}\n  server s2 ${s2_addr}:${s2_port} proto h2\n";

#[test]
fn max_reuse_bounds_the_streams_of_an_http2_server_connection() {
    for bin in binaries("max_reuse_bounds_the_streams_of_an_http2_server_connection") {
        let who = name(&bin);
        let (s1, s2) = (H2Server::start(100, |_| Answer::ok("ok")), H2Server::start(100, |_| Answer::ok("ok")));
        let proxy = start_with(&bin, MAX_REUSE_CFG, &["limited", "free"], &[("s1", s1.addr()), ("s2", s2.addr())]);
        for listener in ["limited", "free"] {
            let mut c = RawClient::connect(proxy.addr(listener)).unwrap();
            for _ in 0..5 {
                c.send(GET).unwrap();
                assert_eq!(c.read_response().unwrap().status, 200, "{who}");
            }
        }
        // `max-reuse 1`: two streams per connection
        let conns = |s: &H2Server| s.wait_requests(5).iter().map(|r| r.conn).collect::<Vec<_>>();
        assert_eq!(conns(&s1), [0, 0, 1, 1, 2], "{who}");
        assert_eq!(conns(&s2), [0, 0, 0, 0, 0], "{who}");
    }
}

/// A loopback port free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Whether another socket can bind `port` with `SO_REUSEPORT` next to the proxy's.
fn port_shareable(port: u16) -> bool {
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_reuse_address(true).unwrap();
    sock.set_reuse_port(true).unwrap();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    sock.bind(&addr.into()).is_ok()
}

#[test]
fn noreuseport_binds_listeners_without_so_reuseport() {
    for bin in binaries("noreuseport_binds_listeners_without_so_reuseport") {
        let who = name(&bin);
        for (global, shareable) in [("  noreuseport\n", false), ("", true)] {
            let port = free_port();
            let cfg = format!(
                "global\n  nbthread 2\n{global}defaults\n  mode http\n  timeout client 2s\n  timeout server 2s\n  \
                 timeout connect 1s\nfrontend fe\n  bind 127.0.0.1:{port}\n  \
                 http-request return status 200 content-type text/plain string ok\n"
            );
            let proxy = start_with(&bin, &cfg, &[], &[]);
            let mut c = RawClient::connect(([127, 0, 0, 1], port).into()).unwrap();
            c.send(GET).unwrap();
            assert_eq!(c.read_response().unwrap().status, 200, "{who}");
            assert_eq!(port_shareable(port), shareable, "{who}: {global:?}");
            drop(proxy);
        }
    }
}

/// The pipes process `pid` holds.
fn pipes_of(pid: u32) -> usize {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap();
    fds.flatten()
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("pipe:")))
        .count()
}

/// A server that sends 256 KiB and closes.
fn sending_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let _ = s.write_all(&vec![b'x'; 256 * 1024]);
        }
    });
    addr
}

#[test]
fn nosplice_forwards_without_pipes() {
    // rampart splices TCP forwarding by default (haproxy only with `option splice-*`)
    for (global, spliced) in [("", true), ("  nosplice\n", false)] {
        let cfg = format!(
            "global\n  nbthread 1\n{global}defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  \
             timeout connect 1s\nlisten l\n  bind fd@${{l}}\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
        );
        let proxy = start_with(&binary(), &cfg, &["l"], &[("s1", sending_server())]);
        let before = pipes_of(proxy.pid());
        let mut c = TcpStream::connect(proxy.addr("l")).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = Vec::new();
        c.read_to_end(&mut got).unwrap();
        assert_eq!(got.len(), 256 * 1024, "{global:?}");
        // the pipes splice used stay in the thread's pool
        let after = pipes_of(proxy.pid());
        assert_eq!(after > before, spliced, "{global:?}: {before} then {after} pipes");
    }
}

const GRACE_CFG: &str = "\
global\n  nbthread 1\n  grace 1500ms\n  hard-stop-after 10s\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
  timeout http-keep-alive 5s\n\
frontend fe\n  bind fd@${fe}\n\
  http-request return status 200 content-type text/plain lf-string \"stopping=%[stopping]\"\n";

#[test]
fn grace_delays_the_soft_stop_with_the_stopping_fetch_already_true() {
    for bin in binaries("grace_delays_the_soft_stop_with_the_stopping_fetch_already_true") {
        let who = name(&bin);
        let proxy = start_with(&bin, GRACE_CFG, &["fe"], &[]);
        let mut idle = RawClient::connect(proxy.addr("fe")).unwrap();
        idle.send(GET).unwrap();
        assert_eq!(idle.read_response().unwrap().body, b"stopping=0", "{who}");
        proxy.signal(Signal::SIGUSR1).unwrap();
        std::thread::sleep(Duration::from_millis(400));
        // within the grace: new connections are served, kept-alive ones too, and the
        // fetch says a stop is coming
        let mut fresh = RawClient::connect(proxy.addr("fe")).unwrap();
        fresh.send(GET).unwrap();
        let res = fresh.read_response().unwrap();
        assert_eq!(res.body, b"stopping=1", "{who}");
        assert_eq!(res.headers.get("connection"), None, "{who}: no close announced yet");
        idle.send(GET).unwrap();
        assert_eq!(idle.read_response().unwrap().body, b"stopping=1", "{who}");
        assert!(
            proxy.wait_output("Scheduling a soft-stop in 1500 ms.", Duration::from_secs(2)),
            "{who}: {}",
            proxy.output()
        );
        // once it is over, the soft stop closes the idle connections. COMPAT: haproxy
        // 2.6 woke its idle connections when the grace began, not again once it ended:
        // they stay until their keep-alive timeout
        std::thread::sleep(Duration::from_millis(1800));
        if bin == binary() {
            assert!(closes_soon(&mut idle), "{who}: closed after the grace");
        }
    }
}

const REDIR_CFG: &str = "\
global\n  nbthread 1\n  log stderr format raw local0\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n  log global\n  option httplog\n\
listen persist\n  bind fd@${persist}\n  cookie SRV insert indirect nocache\n\
  server s1 ${s1_addr}:${s1_port} cookie c1 redir http://static.example\n\
  server s2 ${s2_addr}:${s2_port} cookie c2\n\
listen balanced\n  bind fd@${balanced}\n  server s3 ${s1_addr}:${s1_port} redir /\n";

#[test]
fn server_redir_answers_get_and_head_with_a_302_to_the_server() {
    for bin in binaries("server_redir_answers_get_and_head_with_a_302_to_the_server") {
        let who = name(&bin);
        let (s1, s2) = (HttpBackend::start("s1"), HttpBackend::start("s2"));
        let proxy = start_with(&bin, REDIR_CFG, &["persist", "balanced"], &[("s1", s1.addr()), ("s2", s2.addr())]);
        let ask = |listener: &str, head: &str| {
            let mut c = RawClient::connect(proxy.addr(listener)).unwrap();
            c.send(format!("{head}\r\nhost: x\r\ncontent-length: 0\r\n\r\n")).unwrap();
            c.read_response().unwrap()
        };
        let res = ask("persist", "GET /img/a.png?v=2 HTTP/1.1\r\ncookie: SRV=c1");
        assert_eq!(res.status, 302, "{who}");
        assert_eq!(res.headers.get("location"), Some("http://static.example/img/a.png?v=2"), "{who}");
        assert_eq!(res.headers.get("cache-control"), Some("no-cache"), "{who}");
        let res = ask("persist", "HEAD /h HTTP/1.1\r\ncookie: SRV=c1");
        assert_eq!((res.status, res.headers.get("location")), (302, Some("http://static.example/h")), "{who}");
        // other methods, and the other server, are served
        assert_eq!(ask("persist", "POST /p HTTP/1.1\r\ncookie: SRV=c1").status, 200, "{who}");
        assert_eq!(ask("persist", "GET /q HTTP/1.1\r\ncookie: SRV=c2").status, 200, "{who}");
        // a balanced pick redirects too; `/` keeps the path
        let res = ask("balanced", "GET /b?x HTTP/1.1");
        assert_eq!((res.status, res.headers.get("location")), (302, Some("/b?x")), "{who}");
        let to_s1: Vec<String> = s1.requests().iter().map(|r| format!("{} {}", r.method, r.path)).collect();
        assert_eq!(to_s1, ["POST /p"], "{who}");
        assert_eq!(s2.requests().len(), 1, "{who}");
        assert!(proxy.wait_output("\"GET /b?x HTTP/1.1\"", Duration::from_secs(3)), "{who}");
        let out = proxy.output();
        let line = out.lines().find(|l| l.contains("\"GET /img/a.png?v=2 HTTP/1.1\"")).unwrap_or_default();
        assert!(line.contains(" persist/s1 ") && line.contains(" 302 ") && line.contains(" LC"), "{who}: {line}");
    }
}

/// A server that sends a byte every 100 ms for 6 s and reports how long it took to
/// read an end of stream from the proxy (`None`: it saw none).
fn trickling_server() -> (SocketAddr, std::sync::mpsc::Receiver<Option<Duration>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let tx = tx.clone();
            let mut reader = s.try_clone().unwrap();
            let start = std::time::Instant::now();
            std::thread::spawn(move || {
                let mut b = [0u8; 64];
                reader.set_read_timeout(Some(Duration::from_secs(6))).unwrap();
                // (the client itself leaves after 5 s)
                let ended = matches!(reader.read(&mut b), Ok(0) | Err(_)) && start.elapsed() < Duration::from_secs(4);
                let _ = tx.send(ended.then(|| start.elapsed()));
            });
            std::thread::spawn(move || {
                while start.elapsed() < Duration::from_secs(6) && s.write_all(b".").is_ok() {
                    std::thread::sleep(Duration::from_millis(100));
                }
            });
        }
    });
    (addr, rx)
}

#[test]
fn independent_streams_times_out_a_silent_client_of_a_busy_tunnel() {
    for bin in binaries("independent_streams_times_out_a_silent_client_of_a_busy_tunnel") {
        let who = name(&bin);
        for (option, times_out) in [("  option independent-streams\n", true), ("", false)] {
            let (srv, ended) = trickling_server();
            let cfg = format!(
                "global\n  nbthread 1\ndefaults\n  mode tcp\n  timeout client 1s\n  timeout server 10s\n  \
                 timeout connect 1s\nlisten l\n  bind fd@${{l}}\n{option}  server s1 ${{s1_addr}}:${{s1_port}}\n"
            );
            let proxy = start_with(&bin, &cfg, &["l"], &[("s1", srv)]);
            // the client reads what the server trickles and never sends anything
            let mut c = TcpStream::connect(proxy.addr("l")).unwrap();
            c.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
            std::thread::spawn(move || {
                let mut b = [0u8; 64];
                let until = std::time::Instant::now() + Duration::from_secs(5);
                while std::time::Instant::now() < until && !matches!(c.read(&mut b), Ok(0)) {}
            });
            let end = ended.recv_timeout(Duration::from_secs(8)).unwrap();
            match end {
                // `timeout client` counted alone: the server is told about 1 s in
                Some(t) => assert!(times_out && t < Duration::from_secs(3), "{who}: {option:?} ended after {t:?}"),
                None => assert!(!times_out, "{who}: {option:?} never ended"),
            }
        }
    }
}

#[test]
fn h1_case_adjust_spells_header_names_for_bogus_peers() {
    let dir = std::env::temp_dir().join(format!("rampart-case-adjust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("case.map");
    std::fs::write(&file, "# spellings\ncontent-type   Content-Type\n\n  x-trace X-Trace  \n").unwrap();
    let cfg = format!(
        "global\n  nbthread 1\n  h1-case-adjust content-length Content-Length\n  h1-case-adjust x-custom X-CUSTOM\n  \
         h1-case-adjust-file {}\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen bogus\n  bind fd@${{bogus}}\n  option h1-case-adjust-bogus-client\n  option h1-case-adjust-bogus-server\n  \
         server s1 ${{s1_addr}}:${{s1_port}}\n\
         listen plain\n  bind fd@${{plain}}\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        file.display()
    );
    for bin in binaries("h1_case_adjust_spells_header_names_for_bogus_peers") {
        let who = name(&bin);
        let s1 = HttpBackend::builder("s1")
            .reply(Reply::ok().header("content-type", "text/plain").header("x-trace", "t").body("ok"))
            .start();
        let proxy = start_with(&bin, &cfg, &["bogus", "plain"], &[("s1", s1.addr())]);
        let raw = |listener: &str| {
            let req = "GET / HTTP/1.1\r\nhost: x\r\nx-custom: 1\r\nx-trace: 2\r\nconnection: close\r\n\r\n";
            let mut c = TcpStream::connect(proxy.addr(listener)).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            c.write_all(req.as_bytes()).unwrap();
            let mut got = Vec::new();
            let _ = c.read_to_end(&mut got);
            String::from_utf8_lossy(&got).into_owned()
        };
        let got = raw("bogus");
        for want in ["\r\nContent-Length: 2\r\n", "\r\nContent-Type: text/plain\r\n", "\r\nX-Trace: t\r\n"] {
            assert!(got.contains(want), "{who}: {want:?} in {got:?}");
        }
        let got = raw("plain");
        assert!(got.contains("\r\ncontent-length: 2\r\n") && got.contains("\r\ncontent-type: "), "{who}: {got:?}");
        let sent: Vec<String> = s1.requests().iter().map(|r| String::from_utf8_lossy(&r.raw).into_owned()).collect();
        assert!(
            sent[0].contains("\r\nX-CUSTOM: 1\r\n") && sent[0].contains("\r\nX-Trace: 2\r\n"),
            "{who}: {:?}",
            sent[0]
        );
        assert!(sent[1].contains("\r\nx-custom: 1\r\n"), "{who}: {:?}", sent[1]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
