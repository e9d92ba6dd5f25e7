//! `-d` prints the traffic on standard output in HAProxy's format: per stream an
//! `accept` line, the request line and headers (`clireq`, `clihdr`), the response line
//! and headers (`srvrep`, `srvhdr`), then `clicls`, `srvcls` and `closed`. Each HTTP
//! exchange of a keep-alive connection is a stream with the next id. Checked against
//! haproxy 2.6 with `RAMPART_TEST_BINARY=/usr/sbin/haproxy`.

mod http2_client;
mod http_common;

use std::io::{Read, Write};
use std::time::Duration;

use http_common::*;
use rampart_testkit::{eventually, HttpBackend, Proxy, RawClient, Reply, Running, TcpEchoBackend};

/// One `-d` line: `<id>:<proxy>.<event><rest>`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Line {
    id: u32,
    proxy: String,
    event: String,
    rest: String,
}

fn parse_line(text: &str) -> Option<Line> {
    let (id, after) = text.split_once(':')?;
    if id.len() != 8 {
        return None;
    }
    let id = u32::from_str_radix(id, 16).ok()?;
    let (proxy, after) = after.split_once('.')?;
    let split = after.find(['(', '['])?;
    Some(Line { id, proxy: proxy.to_owned(), event: after[..split].to_owned(), rest: after[split..].to_owned() })
}

fn trace_lines(proxy: &Running) -> Vec<Line> {
    proxy.captured().stdout().lines().filter_map(parse_line).collect()
}

fn events_of(lines: &[Line], id: u32) -> Vec<String> {
    lines.iter().filter(|l| l.id == id).map(|l| l.event.clone()).collect()
}

fn start_with_args(cfg: &str, backends: &[(&str, std::net::SocketAddr)], args: &[&str]) -> Running {
    let mut p = Proxy::new(binary()).listener("fe1").config(cfg);
    for (name, addr) in backends {
        p = p.backend(name, *addr);
    }
    for a in args {
        p = p.arg(*a);
    }
    p.start().expect("proxy starts")
}

#[test]
fn http_exchanges_are_traced_one_stream_each() {
    let s1 = HttpBackend::builder("s1").reply(Reply::ok().body("ok")).start();
    let proxy = start_with_args(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())], &["-d"]);
    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    let port = c.local_addr().unwrap().port();
    for path in ["/one", "/two"] {
        c.send(format!("GET {path} HTTP/1.1\r\nHost: rampart.test\r\nX-Trace: {path}\r\n\r\n")).unwrap();
        assert_eq!(c.read_response().unwrap().status, 200);
    }
    eventually!(trace_lines(&proxy).iter().filter(|l| l.event == "closed").count() == 2, "{}", proxy.output());
    assert!(proxy.captured().stdout().starts_with("Using epoll() as the polling mechanism.\n"));

    let lines = trace_lines(&proxy);
    let first = lines.iter().find(|l| l.event == "accept").expect("an accept line").id;
    let expected = ["accept", "clireq", "clihdr", "clihdr", "srvrep"];
    for (id, path) in [(first, "/one"), (first + 1, "/two")] {
        let events = events_of(&lines, id);
        assert_eq!(&events[..5], expected, "{lines:#?}");
        assert_eq!(&events[events.len() - 3..], ["clicls", "srvcls", "closed"], "{lines:#?}");
        assert!(events[5..events.len() - 3].iter().all(|e| e == "srvhdr"), "{events:?}");
        let of = |event: &str| lines.iter().filter(|l| l.id == id && l.event == event).collect::<Vec<_>>();
        assert!(of("accept").iter().all(|l| l.proxy == "fe1"));
        let accept = &of("accept")[0].rest;
        assert!(accept.ends_with(&format!(" from [127.0.0.1:{port}] ALPN=<none>")), "{accept}");
        let cfd = &accept[accept.find('=').unwrap() + 1..][..4];
        assert_eq!(of("clireq")[0].rest, format!("[{cfd}:ffffffff]: GET {path} HTTP/1.1"));
        let hdrs: Vec<&str> = of("clihdr").iter().map(|l| l.rest.as_str()).collect();
        assert_eq!(
            hdrs,
            [format!("[{cfd}:ffffffff]: host: rampart.test"), format!("[{cfd}:ffffffff]: x-trace: {path}")]
        );
        let srvrep = &of("srvrep")[0].rest;
        let ids = &srvrep[..srvrep.find(']').unwrap() + 1];
        assert!(ids.starts_with(&format!("[{cfd}:")) && ids.len() == 11, "{srvrep}");
        assert_eq!(&srvrep[ids.len()..], ": HTTP/1.1 200 OK");
        assert!(of("srvhdr").iter().any(|l| l.rest == format!("{ids}: content-length: 2")), "{lines:#?}");
        assert_eq!(of("closed")[0].rest, *ids);
    }
}

/// Each HTTP/2 stream is a traced stream of its own, its request printed as haproxy 2.6
/// prints it: the target in absolute form with the `:authority`, `HTTP/2.0`, `host`
/// from the `:authority` first.
#[test]
fn http2_streams_are_traced_one_stream_each() {
    let s1 = HttpBackend::builder("s1").reply(Reply::ok().body("ok")).start();
    let cfg = format!(
        "{PREAMBLE}frontend fe1\n  bind fd@${{fe1}} proto h2\n  default_backend be\nbackend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let proxy = start_with_args(&cfg, &[("s1", s1.addr())], &["-d"]);
    let mut c = http2_client::H2Client::connect(proxy.addr("fe1"));
    let port = c.local_addr().port();
    for (id, path) in [(1, "/one"), (3, "/two?x=1")] {
        let fields =
            [(":method", "GET"), (":scheme", "http"), (":path", path), (":authority", "t.test"), ("x-trace", "a")];
        c.headers(id, &fields, true);
        assert_eq!(http2_client::body_of(&c.until_end(id, Duration::from_secs(5)), id), b"ok");
    }
    eventually!(trace_lines(&proxy).iter().filter(|l| l.event == "closed").count() == 2, "{}", proxy.output());
    let lines = trace_lines(&proxy);
    let first = lines.iter().find(|l| l.event == "accept").expect("an accept line").id;
    for (id, path) in [(first, "/one"), (first + 1, "/two?x=1")] {
        let of = |event: &str| lines.iter().filter(|l| l.id == id && l.event == event).collect::<Vec<_>>();
        let accept = &of("accept")[0];
        assert_eq!(accept.proxy, "fe1");
        assert!(accept.rest.ends_with(&format!(" from [127.0.0.1:{port}] ALPN=<none>")), "{lines:#?}");
        let cfd = &accept.rest[accept.rest.find('=').unwrap() + 1..][..4];
        assert_eq!(of("clireq")[0].rest, format!("[{cfd}:ffffffff]: GET http://t.test{path} HTTP/2.0"), "{lines:#?}");
        let hdrs: Vec<&str> = of("clihdr").iter().map(|l| l.rest.as_str()).collect();
        assert_eq!(hdrs, [format!("[{cfd}:ffffffff]: host: t.test"), format!("[{cfd}:ffffffff]: x-trace: a")]);
        let srvrep = &of("srvrep")[0];
        assert_eq!((srvrep.proxy.as_str(), &srvrep.rest[11..]), ("be", ": HTTP/1.1 200 OK"), "{lines:#?}");
        assert!(srvrep.rest.starts_with(&format!("[{cfd}:")), "{lines:#?}");
        let mut ends = events_of(&lines, id).split_off(events_of(&lines, id).len() - 3);
        ends[..2].sort();
        assert_eq!(ends, ["clicls", "srvcls", "closed"], "{lines:#?}");
    }
}

#[test]
fn a_tcp_connection_is_one_traced_stream() {
    let echo = TcpEchoBackend::start();
    let cfg = format!(
        "{}listen fe1\n  bind fd@${{fe1}}\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        PREAMBLE.replace("mode http", "mode tcp")
    );
    let proxy = start_with_args(&cfg, &[("s1", echo.addr())], &["-d"]);
    let mut c = std::net::TcpStream::connect(proxy.addr("fe1")).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(b"ping").unwrap();
    let mut got = [0u8; 4];
    c.read_exact(&mut got).unwrap();
    drop(c);
    eventually!(trace_lines(&proxy).iter().any(|l| l.event == "closed"), "{}", proxy.output());
    let lines = trace_lines(&proxy);
    let id = lines[0].id;
    let mut events = events_of(&lines, id);
    assert_eq!(events.len(), 4, "{lines:#?}");
    // Each side's close is printed when it is seen: haproxy's order varies.
    events[1..3].sort();
    assert_eq!(events, ["accept", "clicls", "srvcls", "closed"], "{lines:#?}");
    assert!(lines.iter().all(|l| l.proxy == "fe1"));
}

#[test]
fn without_d_nothing_is_traced() {
    let s1 = HttpBackend::builder("s1").reply(Reply::ok().body("ok")).start();
    let proxy = start_with_args(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())], &[]);
    let mut c = client(&proxy);
    assert_eq!(c.get("/").unwrap().status, 200);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(trace_lines(&proxy), [], "{}", proxy.output());
    assert!(!proxy.output().contains("polling mechanism"));
}
