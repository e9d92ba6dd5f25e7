//! Cookie-based persistence (`cookie` with `insert`/`indirect`/`nocache`/`httponly`/
//! `secure`/`domain`/`attr`, `rewrite`, `prefix`; server `cookie`), `capture cookie`
//! and the log fields they feed (`%CC`, `%CS`, the 3rd and 4th characters of `%tsc`).
//!
//! The expectations are HAProxy 2.6's: `RAMPART_TEST_BINARY=/usr/sbin/haproxy cargo
//! test -p rampart --test cookie_persistence` runs the first tests against haproxy,
//! and the differential test runs the same exchanges through both binaries and compares
//! what the client and the servers saw, byte for byte, and the log lines. Skipped with
//! a visible line when haproxy is not installed.

mod http_common;

use std::net::SocketAddr;
use std::time::Duration;

use http_common::{binary, RAMPART};
use rampart_testkit::{Differential, HttpBackend, Normalize, Normalizer, Proxy, RawClient, Reply, Response, Running};

/// Two servers behind each of four backends (insert, rewrite, prefix, passive), a
/// disabled third one and a fourth of weight 0 (the balancer never picks it, its cookie
/// still does) in the insert backend, and a log line per request on stdout with the
/// cookie fields.
const CFG: &str = "\
global
  nbthread 1
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 1s
  http-reuse never
frontend fe1
  bind fd@${fe1}
  log stdout format raw local0
  log-format \"CK %HU %s %CC %CS %tsc\"
  capture cookie S len 12
  use_backend rw if { path_beg /rw/ }
  use_backend pfx if { path_beg /pfx/ }
  use_backend passive if { path_beg /passive/ }
  default_backend ins
backend ins
  balance roundrobin
  cookie SRV insert indirect nocache httponly secure domain .example.com attr SameSite=Lax
  use-server s1 if { path /forced }
  server s1 ${s1_addr}:${s1_port} cookie c1
  server s2 ${s2_addr}:${s2_port} cookie c2
  server s3 ${s1_addr}:${s1_port} cookie c3 disabled
  server s4 ${s2_addr}:${s2_port} cookie c4 weight 0
backend rw
  balance roundrobin
  cookie SRV rewrite
  server s1 ${s1_addr}:${s1_port} cookie c1
  server s2 ${s2_addr}:${s2_port} cookie c2
backend pfx
  balance roundrobin
  cookie SRV prefix
  server s1 ${s1_addr}:${s1_port} cookie c1
  server s2 ${s2_addr}:${s2_port} cookie c2
backend passive
  cookie SRV
  server s1 ${s1_addr}:${s1_port} cookie c1
  server s2 ${s2_addr}:${s2_port} cookie c2
";

/// Answers with its name; `/setck` sets the application's own `SRV` cookie, `/cache`
/// answers with a freshness lifetime (a cacheable response).
fn backend(name: &'static str) -> HttpBackend {
    HttpBackend::builder(name)
        .respond(move |req| {
            let reply = Reply::ok().body(name);
            if req.path.ends_with("/setck") {
                reply.header("Set-Cookie", "SRV=app; path=/")
            } else if req.path.ends_with("/cache") {
                reply.header("Cache-Control", "max-age=60")
            } else {
                reply
            }
        })
        .start()
}

/// The requests of the scenario: path and `Cookie` header (empty: none).
const REQUESTS: &[(&str, &str)] = &[
    ("/a", ""),
    ("/cache", "SESSION=abcdefghijklmnop; SRV=c2"),
    ("/cache", ""),
    ("/a", "SRV=c3"),
    ("/a", "a=1; SRV=zz; b=2"),
    ("/forced", "SRV=c2"),
    ("/setck", "SRV=c1"),
    ("/rw/setck", ""),
    ("/rw/a", "SRV=c2"),
    ("/pfx/setck", "x=1; SRV=c2~xyz"),
    ("/passive/a", "SRV=c2"),
    ("/w0", "SRV=c4"),
    ("/last", ""),
];

/// What the client saw (each response) and the log lines.
#[derive(Debug, Clone, PartialEq)]
struct View {
    responses: Vec<Response>,
    lines: Lines,
}

#[derive(Debug, Clone, PartialEq)]
struct Lines(Vec<String>);

impl Normalize for Lines {
    fn normalize(&mut self, _: &Normalizer) {}
}

impl Normalize for View {
    fn normalize(&mut self, n: &Normalizer) {
        self.responses.normalize(n);
    }
}

fn get(addr: SocketAddr, path: &str, cookie: &str) -> Response {
    let mut c = RawClient::connect(addr).unwrap();
    let cookie = if cookie.is_empty() { String::new() } else { format!("Cookie: {cookie}\r\n") };
    c.send(format!("GET {path} HTTP/1.1\r\nHost: www.example.com\r\n{cookie}Connection: close\r\n\r\n")).unwrap();
    c.read_response().unwrap()
}

fn scenario(p: &Running) -> View {
    let responses = REQUESTS.iter().map(|(path, cookie)| get(p.addr("fe1"), path, cookie)).collect();
    assert!(p.wait_output("CK /last", Duration::from_secs(5)), "no log line:\n{}", p.output());
    let lines = p.output().lines().filter(|l| l.starts_with("CK ")).map(str::to_owned).collect();
    View { responses, lines: Lines(lines) }
}

/// The `Set-Cookie` and `Cache-Control` lines of a response, as sent.
fn cookie_headers(r: &Response) -> Vec<String> {
    r.headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie") || n.eq_ignore_ascii_case("cache-control"))
        .map(|(n, v)| format!("{n}: {v}"))
        .collect()
}

/// The `Cookie` header lines each server received, in order.
fn cookies_seen(b: &HttpBackend) -> Vec<String> {
    b.requests().iter().map(|r| format!("{} {}", r.path, r.headers.get("cookie").unwrap_or("-"))).collect()
}

const INSERTED: &str = "set-cookie: SRV=c1; path=/; domain=.example.com; HttpOnly; Secure; SameSite=Lax";

#[test]
fn persistence_on_the_wire_and_in_the_log() {
    let (s1, s2) = (backend("s1"), backend("s2"));
    let proxy = Proxy::new(binary())
        .listener("fe1")
        .backend("s1", s1.addr())
        .backend("s2", s2.addr())
        .config(CFG)
        .start()
        .expect("proxy starts");
    let view = scenario(&proxy);
    let r = &view.responses;
    let bodies: Vec<_> = r.iter().map(|r| String::from_utf8_lossy(&r.body).into_owned()).collect();
    // roundrobin without a cookie; the cookie's server otherwise
    assert_eq!(bodies, ["s1", "s2", "s2", "s1", "s2", "s1", "s1", "s1", "s2", "s2", "s2", "s2", "s1"]);
    // insert: a client without a valid cookie gets one, with every attribute
    assert_eq!(cookie_headers(&r[0]), [INSERTED]);
    assert_eq!(cookie_headers(&r[1]), ["cache-control: max-age=60"], "the cookie was valid: nothing inserted");
    // nocache: a cacheable response with an inserted cookie becomes private
    assert_eq!(
        cookie_headers(&r[2]),
        [
            "cache-control: max-age=60",
            "set-cookie: SRV=c2; path=/; domain=.example.com; HttpOnly; Secure; SameSite=Lax",
            "cache-control: private"
        ]
    );
    assert_eq!(cookie_headers(&r[3]), [INSERTED], "a cookie for a disabled server: balanced, new cookie");
    assert!(cookie_headers(&r[5]).is_empty(), "use-server chose: no cookie");
    assert!(cookie_headers(&r[6]).is_empty(), "insert: the server's own cookie is removed");
    // rewrite and prefix change the server's own cookie
    assert_eq!(cookie_headers(&r[7]), ["set-cookie: SRV=c1; path=/"]);
    assert_eq!(cookie_headers(&r[9]), ["set-cookie: SRV=c2~app; path=/"]);
    // indirect: the server never sees the cookie; prefix: its own value only
    assert_eq!(
        cookies_seen(&s1),
        ["/a -", "/a -", "/forced -", "/setck -", "/rw/setck -", "/last -"],
        "s1 saw: {:?}",
        s1.requests()
    );
    assert_eq!(
        cookies_seen(&s2),
        [
            "/cache SESSION=abcdefghijklmnop",
            "/cache -",
            "/a a=1; b=2",
            "/rw/a SRV=c2",
            "/pfx/setck x=1; SRV=xyz",
            "/passive/a SRV=c2",
            "/w0 -"
        ]
    );
    assert_eq!(
        view.lines.0,
        [
            "CK /a s1 - - --NI",
            "CK /cache s2 SESSION=abcd - --VN",
            "CK /cache s2 - - --NI",
            "CK /a s1 SRV=c3 - --DI",
            "CK /a s2 SRV=zz - --II",
            "CK /forced s1 SRV=c2 - --UN",
            "CK /setck s1 SRV=c1 SRV=app --VD",
            "CK /rw/setck s1 - SRV=app --NR",
            "CK /rw/a s2 SRV=c2 - --VN",
            "CK /pfx/setck s2 SRV=c2~xyz SRV=app --VR",
            "CK /passive/a s2 SRV=c2 - ----",
            "CK /w0 s4 SRV=c4 - --VN",
            "CK /last s1 - - --NI",
        ]
    );
}

#[test]
fn same_as_haproxy() {
    let d = Differential::new(RAMPART)
        .listener("fe1")
        .backend("s1", || backend("s1"))
        .backend("s2", || backend("s2"))
        .config(CFG);
    let Some(cmp) = d.run(scenario) else { return };
    cmp.assert_same();
    assert_eq!(cmp.rampart.client.lines.0.len(), REQUESTS.len());
}

/// Corners of the cookie walks: blanks around `=`, several `Cookie` headers, RFC 2109
/// attributes, commas, a server without a cookie (an expired one is inserted),
/// `postonly`, `preserve`, a quoted `%CC`, and requests the rules deny (their cookies
/// are still walked for the log).
const CFG_CORNERS: &str = "\
global
  nbthread 1
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 1s
  http-reuse never
frontend fe1
  bind fd@${fe1}
  log stdout format raw local0
  log-format \"CK %HU %s %CC %CS %tsc %{+Q}CC\"
  capture cookie SRV len 63
  http-request deny if { path /deny }
  use_backend post if { path_beg /post/ }
  use_backend pres if { path_beg /pres/ }
  default_backend ins
backend ins
  balance roundrobin
  cookie SRV insert indirect
  http-request deny if { path /bdeny }
  server s1 ${s1_addr}:${s1_port} cookie c1
  server s2 ${s2_addr}:${s2_port}
backend post
  cookie SRV insert postonly
  server s1 ${s1_addr}:${s1_port} cookie c1
backend pres
  cookie SRV insert preserve
  server s1 ${s1_addr}:${s1_port} cookie c1
";

/// Answers with its name; `/setck` and `/spaced` set the application's `SRV` cookie.
fn corner_backend(name: &'static str) -> HttpBackend {
    HttpBackend::builder(name)
        .respond(move |req| {
            let reply = Reply::ok().body(name);
            if req.path.ends_with("/setck") {
                reply.header("Set-Cookie", "SRV=app; path=/")
            } else if req.path.ends_with("/spaced") {
                reply.header("Set-Cookie", "SRV = app ; path=/").header("Set-Cookie", "other =  1")
            } else {
                reply
            }
        })
        .start()
}

const CORNER_REQUESTS: &[&str] = &[
    "GET /a HTTP/1.1\r\nHost: h\r\nCookie: a = 1 ; SRV = c1 ;b=2\r\nConnection: close\r\n\r\n",
    "GET /a HTTP/1.1\r\nHost: h\r\nCookie: SRV=c1\r\nX: y\r\nCookie: x=1; SRV=c1\r\nConnection: close\r\n\r\n",
    "GET /a HTTP/1.1\r\nHost: h\r\nCookie: $Version=1; SRV=c1; $Path=/; a=1\r\nConnection: close\r\n\r\n",
    "GET /a HTTP/1.1\r\nHost: h\r\nCookie: SRV=c1, a=2,SRV=zz\r\nConnection: close\r\n\r\n",
    "GET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    "GET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    "POST /post/a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    "GET /post/a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    "GET /pres/setck HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    "GET /pres/spaced HTTP/1.1\r\nHost: h\r\nCookie: SRV=c1\r\nConnection: close\r\n\r\n",
    "GET /deny HTTP/1.1\r\nHost: h\r\nCookie: SRV=c1\r\nConnection: close\r\n\r\n",
    "GET /bdeny HTTP/1.1\r\nHost: h\r\nCookie: SRV=c1\r\nConnection: close\r\n\r\n",
    "GET /last HTTP/1.1\r\nHost: h\r\nCookie: SRV=\"c1\"\r\nConnection: close\r\n\r\n",
];

fn corner_scenario(p: &Running) -> View {
    let responses = CORNER_REQUESTS
        .iter()
        .map(|raw| {
            let mut c = RawClient::connect(p.addr("fe1")).unwrap();
            c.send(raw).unwrap();
            c.read_response().unwrap()
        })
        .collect();
    assert!(p.wait_output("CK /last", Duration::from_secs(5)), "no log line:\n{}", p.output());
    let lines = p.output().lines().filter(|l| l.starts_with("CK ")).map(str::to_owned).collect();
    View { responses, lines: Lines(lines) }
}

#[test]
fn corners_on_the_wire_and_in_the_log() {
    let (s1, s2) = (corner_backend("s1"), corner_backend("s2"));
    let proxy = Proxy::new(binary())
        .listener("fe1")
        .backend("s1", s1.addr())
        .backend("s2", s2.addr())
        .config(CFG_CORNERS)
        .start()
        .expect("proxy starts");
    let view = corner_scenario(&proxy);
    let r = &view.responses;
    let seen: Vec<_> = s1.requests().iter().map(|r| r.headers.get_all("cookie").join(" | ")).collect();
    assert_eq!(seen[..4], ["a=1; b=2", "x=1", "$Version=1; a=1", "a=2"], "s1 saw: {:?}", s1.requests());
    assert_eq!(cookie_headers(&r[4]), ["set-cookie: SRV=c1; path=/"]);
    assert_eq!(
        cookie_headers(&r[5]),
        ["set-cookie: SRV=; Expires=Thu, 01-Jan-1970 00:00:01 GMT; path=/"],
        "a server without a cookie makes the client forget its own"
    );
    assert_eq!(cookie_headers(&r[6]), ["set-cookie: SRV=c1; path=/"], "postonly: a POST gets one");
    assert!(cookie_headers(&r[7]).is_empty(), "postonly: a GET does not");
    assert_eq!(cookie_headers(&r[8]), ["set-cookie: SRV=app; path=/"], "preserve: the server's stays");
    assert_eq!(cookie_headers(&r[9]), ["set-cookie: SRV=app ; path=/", "set-cookie: other=1"]);
    assert_eq!(
        view.lines.0,
        [
            "CK /a s1 SRV=c1 - --VN \"SRV=c1\"",
            "CK /a s1 SRV=c1 - --VN \"SRV=c1\"",
            "CK /a s1 SRV=c1 - --VN \"SRV=c1\"",
            "CK /a s1 SRV=c1 - --VN \"SRV=c1\"",
            "CK /a s1 - - --NI \"\"",
            "CK /a s2 - - --NI \"\"",
            "CK /post/a s1 - - --NI \"\"",
            "CK /post/a s1 - - --NN \"\"",
            "CK /pres/setck s1 - SRV=app --NP \"\"",
            "CK /pres/spaced s1 SRV=c1 SRV=app --VP \"SRV=c1\"",
            "CK /deny <NOSRV> SRV=c1 - PR-- \"SRV=c1\"",
            "CK /bdeny s1 SRV=c1 - PRVN \"SRV=c1\"",
            "CK /last s1 SRV=\"c1\" - --II \"SRV=\"c1\"\"",
        ]
    );
}

#[test]
fn corners_same_as_haproxy() {
    let d = Differential::new(RAMPART)
        .listener("fe1")
        .backend("s1", || corner_backend("s1"))
        .backend("s2", || corner_backend("s2"))
        .config(CFG_CORNERS);
    let Some(cmp) = d.run(corner_scenario) else { return };
    cmp.assert_same();
}

/// `maxidle`/`maxlife`: dated cookies, with dates the test computes (4-second steps).
const CFG_DATED: &str = "\
global
  nbthread 1
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 1s
  http-reuse never
frontend fe1
  bind fd@${fe1}
  log stdout format raw local0
  log-format \"CK %HU %s %tsc\"
  use_backend life if { path_beg /life/ }
  default_backend idle
backend idle
  cookie SRV insert indirect maxidle 30s
  server s1 ${s1_addr}:${s1_port} cookie c1
backend life
  cookie SRV insert indirect maxidle 30s maxlife 1h
  server s1 ${s1_addr}:${s1_port} cookie c1
";

/// `t` (Unix seconds) as a cookie date: 5 base64 characters of `t / 4`.
fn date(t: u64) -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let v = (t >> 2) as u32;
    [24, 18, 12, 6, 0].iter().map(|s| B64[((v >> s) & 0x3F) as usize] as char).collect()
}

#[test]
fn dated_cookies() {
    let s1 = backend("s1");
    let proxy =
        Proxy::new(binary()).listener("fe1").backend("s1", s1.addr()).config(CFG_DATED).start().expect("proxy starts");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    // a last date an hour ahead (less than a day): neither idle nor in need of a refresh
    let ahead = date(now + 3600);
    let cases = [
        ("/a", format!("SRV=c1|{ahead}")),
        ("/a", format!("SRV=c1|{}", date(now - 600))),
        ("/a", format!("SRV=c1|{}", date(now + 2 * 86_400))),
        ("/a", "SRV=c1".to_string()),
        ("/life/a", format!("SRV=c1|{ahead}|{}", date(now - 2 * 3600))),
        ("/life/a", format!("SRV=c1|{ahead}|{}", date(now - 60))),
        ("/life/a", format!("SRV=c1|{}|{}", date(now - 8), date(now - 60))),
        ("/last", String::new()),
    ];
    let r: Vec<_> = cases.iter().map(|(path, cookie)| get(proxy.addr("fe1"), path, cookie)).collect();
    assert!(proxy.wait_output("CK /last", Duration::from_secs(5)), "no log line:\n{}", proxy.output());
    let lines: Vec<_> = proxy.output().lines().filter(|l| l.starts_with("CK ")).map(str::to_owned).collect();
    assert_eq!(
        lines,
        [
            "CK /a s1 --VN",
            "CK /a s1 --EI",
            "CK /a s1 --EI",
            "CK /a s1 --VU",
            "CK /life/a s1 --OI",
            "CK /life/a s1 --VN",
            "CK /life/a s1 --VU",
            "CK /last s1 --NI"
        ]
    );
    assert!(cookie_headers(&r[0]).is_empty());
    assert!(cookie_headers(&r[5]).is_empty(), "both dates fine: nothing to refresh");
    // a new cookie carries the date it is seen (rounded up to 4 s); with `maxlife`, the
    // date it was first issued
    let stamp = |h: &str| h.strip_prefix("set-cookie: SRV=c1|").map(|rest| rest.to_owned());
    let first_kept = date(now - 60);
    for (i, first) in [(1, None), (3, None), (4, Some("")), (6, Some(first_kept.as_str()))] {
        let h = cookie_headers(&r[i]);
        assert_eq!(h.len(), 1, "{h:?}");
        let rest = stamp(&h[0]).unwrap_or_else(|| panic!("{h:?}"));
        let (dates, attrs) = rest.split_once(';').unwrap();
        assert_eq!(attrs, " path=/");
        let parts: Vec<_> = dates.split('|').collect();
        let seen = [date(now + 3), date(now + 4), date(now + 7)];
        assert!(seen.contains(&parts[0].to_string()), "{parts:?} vs {seen:?}");
        match first {
            None => assert_eq!(parts.len(), 1),
            Some("") => assert_eq!(parts[1..], parts[..1], "an old cookie is issued anew: its first date is now"),
            Some(f) => assert_eq!(parts[1], f, "a refreshed cookie keeps its first date"),
        }
    }
}
