//! PROXY protocol through the binary: headers received (`bind ... accept-proxy`,
//! `tcp-request connection expect-proxy layer4`) change the addresses rules and
//! `option forwardfor` see, bad headers close the connection while the process keeps
//! serving, headers sent (`server ... send-proxy`, `send-proxy-v2`) reach the server
//! first on every new connection; and haproxy on either side of rampart (skipped with a
//! line when haproxy is missing, a failure with RAMPART_REQUIRE_HAPROXY=1).
//! HAProxy counterpart: reg-tests/connection/proxy_protocol*.vtc.

// Test infrastructure (the header-reading test server), never on the request path.
#![allow(clippy::disallowed_types)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use rampart_proto::pp::{self, decode, tlv, Decoded, Header};
use rampart_testkit::{haproxy_or_skip, HttpBackend, Proxy, RawBackend, RawClient, Running, Step};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

const DEFAULTS: &str = "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n";

/// An HTTP `listen fe1` in front of `s1`, with `bind_opts` and extra lines.
fn http_listen(bind_opts: &str, extra: &str) -> String {
    format!("{DEFAULTS}listen fe1\n  bind fd@${{fe1}} {bind_opts}\n{extra}  server s1 ${{s1_addr}}:${{s1_port}}\n")
}

fn start(binary: &str, cfg: &str, s1: SocketAddr) -> Running {
    Proxy::new(binary).listener("fe1").backend("s1", s1).config(cfg).start().expect("proxy starts")
}

const SHOW_ADDRS: &str = "  option forwardfor\n  http-request set-header X-Src %[src]:%[src_port]\n  \
                          http-request set-header X-Dst %[dst]:%[dst_port]\n  http-request set-header X-Fc-Src %[fc_src]\n  \
                          http-request set-header X-Rcvd %[fc_rcvd_proxy]\n";

fn get_with_prefix(addr: SocketAddr, prefix: &[u8]) -> rampart_testkit::Response {
    let mut c = RawClient::connect(addr).unwrap();
    let mut bytes = prefix.to_vec();
    bytes.extend_from_slice(b"GET /pp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    c.send(bytes).unwrap();
    c.read_response().expect("a response")
}

#[test]
fn v1_header_gives_src_dst_and_forwardfor() {
    let s1 = HttpBackend::start("s1");
    let px = start(RAMPART, &http_listen("accept-proxy", SHOW_ADDRS), s1.addr());
    let res = get_with_prefix(px.addr("fe1"), b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n");
    assert_eq!(res.status, 200);
    let req = &s1.wait_requests(1)[0];
    assert_eq!(req.headers.get("x-forwarded-for"), Some("192.0.2.1"));
    assert_eq!(req.headers.get("x-src"), Some("192.0.2.1:56324"));
    assert_eq!(req.headers.get("x-dst"), Some("198.51.100.2:443"));
    assert_eq!(req.headers.get("x-fc-src"), Some("127.0.0.1"), "fc_src is the socket's peer");
    assert_eq!(req.headers.get("x-rcvd"), Some("1"));
    assert_eq!(req.path, "/pp", "the request after the header is read whole");
}

#[test]
fn v2_header_with_tlvs_and_ipv6() {
    let s1 = HttpBackend::start("s1");
    let extra = format!(
        "{SHOW_ADDRS}  http-request set-header X-Auth %[fc_pp_authority]\n  http-request set-header X-Uid %[fc_pp_unique_id]\n  \
         http-request set-header X-Tlv %[fc_pp_tlv(0xE0)]\n"
    );
    let px = start(RAMPART, &http_listen("accept-proxy", &extra), s1.addr());
    let mut hdr = Vec::new();
    let addrs = Some(("[2001:db8::1]:4242".parse().unwrap(), "[2001:db8::2]:80".parse().unwrap()));
    let tlvs: &[(u8, &[u8])] =
        &[(tlv::AUTHORITY, b"www.example.org"), (tlv::UNIQUE_ID, b"req-77"), (0xE0, b"custom"), (tlv::NOOP, b"")];
    pp::encode_v2(&mut hdr, addrs, tlvs, true);
    assert_eq!(get_with_prefix(px.addr("fe1"), &hdr).status, 200);
    let req = &s1.wait_requests(1)[0];
    assert_eq!(req.headers.get("x-forwarded-for"), Some("2001:db8::1"));
    assert_eq!(req.headers.get("x-src"), Some("2001:db8::1:4242"));
    assert_eq!(req.headers.get("x-auth"), Some("www.example.org"));
    assert_eq!(req.headers.get("x-uid"), Some("req-77"));
    assert_eq!(req.headers.get("x-tlv"), Some("custom"));
    // A LOCAL header (a health check of the peer) keeps the socket's addresses.
    let mut local = Vec::new();
    pp::encode_v2(&mut local, None, &[], false);
    assert_eq!(get_with_prefix(px.addr("fe1"), &local).status, 200);
    let req = &s1.wait_requests(2)[1];
    assert_eq!(req.headers.get("x-forwarded-for"), Some("127.0.0.1"));
    assert_eq!(req.headers.get("x-rcvd"), Some("1"));
}

#[test]
fn bad_headers_close_the_connection_and_the_proxy_keeps_serving() {
    let s1 = HttpBackend::start("s1");
    let px = start(RAMPART, &http_listen("accept-proxy", SHOW_ADDRS), s1.addr());
    let mut bad_crc = Vec::new();
    pp::encode_v2(&mut bad_crc, Some(("10.0.0.1:1".parse().unwrap(), "10.0.0.2:2".parse().unwrap())), &[], true);
    let last = bad_crc.len() - 1;
    bad_crc[last] ^= 1;
    let cases: [&[u8]; 5] = [
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1 99999\r\n",
        b"PROXY TCP7 1.2.3.4 5.6.7.8 1 2\r\n",
        &bad_crc,
        b"\r\n\r\n\0\r\nQUIT\n\x21\x11\0\x0c\x01\x02",
    ];
    for bytes in cases {
        let mut c = RawClient::connect(px.addr("fe1")).unwrap();
        c.send(bytes).unwrap();
        if bytes.len() < 30 && bytes.starts_with(b"\r\n") {
            // truncated: the client gives up sending
            c.shutdown_write().unwrap();
        }
        assert!(c.is_closed_within(Duration::from_secs(3)), "not closed after {:?}", String::from_utf8_lossy(bytes));
        assert!(c.buffered().is_empty(), "nothing is answered to {:?}", String::from_utf8_lossy(bytes));
    }
    let res = get_with_prefix(px.addr("fe1"), b"PROXY TCP4 192.0.2.9 192.0.2.10 1000 80\r\n");
    assert_eq!(res.status, 200);
    let reqs = s1.wait_requests(1);
    assert_eq!(reqs.len(), 1, "no bad connection reached the server");
    assert_eq!(reqs[0].headers.get("x-src"), Some("192.0.2.9:1000"));
}

#[test]
fn expect_proxy_rule_reads_the_header_when_its_condition_holds() {
    let s1 = HttpBackend::start("s1");
    let extra = format!("  tcp-request connection expect-proxy layer4 if {{ src 127.0.0.1 }}\n{SHOW_ADDRS}");
    let px = start(RAMPART, &http_listen("", &extra), s1.addr());
    assert_eq!(get_with_prefix(px.addr("fe1"), b"PROXY TCP4 10.9.8.7 10.9.8.6 5555 80\r\n").status, 200);
    assert_eq!(s1.wait_requests(1)[0].headers.get("x-src"), Some("10.9.8.7:5555"));
    // a rule whose condition fails reads no header: the request goes as is
    let px = start(
        RAMPART,
        &http_listen("", "  tcp-request connection expect-proxy layer4 if { src 10.0.0.0/8 }\n"),
        s1.addr(),
    );
    assert_eq!(get_with_prefix(px.addr("fe1"), b"").status, 200);
}

/// A TCP `listen` sending a PROXY header to `s1` with `server_opts`.
fn tcp_send(server_opts: &str) -> String {
    format!(
        "defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind fd@${{fe1}}\n  server s1 ${{s1_addr}}:${{s1_port}} {server_opts}\n"
    )
}

/// The header at the start of `bytes`, and what follows it.
fn split_header(bytes: &[u8]) -> (Header, &[u8]) {
    match decode(bytes) {
        Decoded::Done(h, n) => (h, &bytes[n..]),
        other => panic!("no header in {:?}: {other:?}", String::from_utf8_lossy(bytes)),
    }
}

#[test]
fn send_proxy_v1_and_v2_in_tcp_mode() {
    for (opts, version) in [("send-proxy", pp::Version::V1), ("send-proxy-v2 proxy-v2-options crc32c", pp::Version::V2)]
    {
        let server = RawBackend::start(vec![Step::expect_until("hello")]);
        let px = start(RAMPART, &tcp_send(opts), server.addr());
        let mut c = TcpStream::connect(px.addr("fe1")).unwrap();
        c.write_all(b"hello").unwrap();
        let got = &server.wait_finished(1)[0].received;
        let (h, rest) = split_header(got);
        assert_eq!(h.version, version);
        assert_eq!(h.tcp_addrs(), Some((c.local_addr().unwrap(), px.addr("fe1"))), "{opts}");
        assert_eq!(rest, b"hello");
        if version == pp::Version::V2 {
            assert_eq!(h.tlvs[0].kind, tlv::CRC32C);
        }
    }
}

/// A tiny HTTP server that reads a PROXY header first on each connection, then answers
/// every request with the header's client address; it records one line per request.
fn pp_http_server() -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    thread::spawn(move || {
        for (conn_no, s) in l.incoming().enumerate() {
            let Ok(mut s) = s else { return };
            let log = log.clone();
            thread::spawn(move || {
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let header = loop {
                    match decode(&buf) {
                        Decoded::Done(h, n) => {
                            buf.drain(..n);
                            break h;
                        }
                        Decoded::Invalid(e) => {
                            log.lock().unwrap().push(format!("invalid {e}"));
                            return;
                        }
                        Decoded::Incomplete => match s.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        },
                    }
                };
                let src = header.tcp_addrs().map_or("none".to_owned(), |(src, _)| src.to_string());
                loop {
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..end + 4);
                        log.lock().unwrap().push(format!("conn {conn_no} src {src}"));
                        let body = src.as_bytes();
                        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
                        if s.write_all(head.as_bytes()).and_then(|()| s.write_all(body)).is_err() {
                            return;
                        }
                    }
                    match s.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
            });
        }
    });
    (addr, seen)
}

#[test]
fn send_proxy_in_http_mode_reuses_a_connection_only_for_the_same_header() {
    let (srv, seen) = pp_http_server();
    let cfg = http_listen("", "  http-reuse always\n").replace("${s1_port}\n", "${s1_port} send-proxy-v2\n");
    let px = start(RAMPART, &cfg, srv);
    let mut clients = [RawClient::connect(px.addr("fe1")).unwrap(), RawClient::connect(px.addr("fe1")).unwrap()];
    for i in [0, 1, 0] {
        let c = &mut clients[i];
        let local = c.local_addr().unwrap();
        let res = c.get("/x").unwrap();
        assert_eq!(res.status, 200);
        assert_eq!(String::from_utf8_lossy(&res.body), local.to_string(), "the server saw this client's header");
    }
    let lines = seen.lock().unwrap().clone();
    assert_eq!(lines.len(), 3, "{lines:?}");
    // as HAProxy, idle connections are keyed by the header they started with: the
    // first client's second request goes on its first connection, never on the other's
    let conns: Vec<_> = lines.iter().map(|l| l.split(' ').nth(1).unwrap().to_owned()).collect();
    assert_eq!(conns[0], conns[2], "{lines:?}");
    assert_ne!(conns[0], conns[1], "{lines:?}");
}

// === haproxy on either side ===

#[test]
fn haproxy_sends_v2_to_rampart() {
    let Some(haproxy) = haproxy_or_skip("haproxy_sends_v2_to_rampart") else { return };
    let haproxy = haproxy.to_string_lossy().into_owned();
    let s1 = HttpBackend::start("s1");
    let extra = format!("{SHOW_ADDRS}  http-request set-header X-Uid %[fc_pp_unique_id]\n");
    let inner = start(RAMPART, &http_listen("accept-proxy", &extra), s1.addr());
    let outer_cfg = format!(
        "{DEFAULTS}listen fe1\n  bind fd@${{fe1}}\n  unique-id-format uid-%[src_port]\n  \
         server s1 ${{s1_addr}}:${{s1_port}} send-proxy-v2 proxy-v2-options crc32c,unique-id\n"
    );
    let outer = start(&haproxy, &outer_cfg, inner.addr("fe1"));
    let mut c = RawClient::connect(outer.addr("fe1")).unwrap();
    let local = c.local_addr().unwrap();
    c.send("GET /chain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
    let req = &s1.wait_requests(1)[0];
    assert_eq!(req.headers.get("x-forwarded-for"), Some("127.0.0.1"));
    assert_eq!(req.headers.get("x-src"), Some(local.to_string().as_str()), "the client, through haproxy");
    assert_eq!(req.headers.get("x-dst"), Some(outer.addr("fe1").to_string().as_str()));
    assert_eq!(req.headers.get("x-uid"), Some(format!("uid-{}", local.port()).as_str()));
    assert_eq!(req.headers.get("x-rcvd"), Some("1"));
}

#[test]
fn haproxy_sends_v1_to_rampart_in_tcp_mode() {
    let Some(haproxy) = haproxy_or_skip("haproxy_sends_v1_to_rampart_in_tcp_mode") else { return };
    let haproxy = haproxy.to_string_lossy().into_owned();
    // rampart re-sends what it received, so the raw server sees the original client
    let server = RawBackend::start(vec![Step::expect_until("ping")]);
    let inner_cfg = tcp_send("send-proxy").replace("bind fd@${fe1}", "bind fd@${fe1} accept-proxy");
    let inner = start(RAMPART, &inner_cfg, server.addr());
    let outer = start(&haproxy, &tcp_send("send-proxy"), inner.addr("fe1"));
    let mut c = TcpStream::connect(outer.addr("fe1")).unwrap();
    c.write_all(b"ping").unwrap();
    let got = &server.wait_finished(1)[0].received;
    let (h, rest) = split_header(got);
    assert_eq!(h.tcp_addrs(), Some((c.local_addr().unwrap(), outer.addr("fe1"))));
    assert_eq!(rest, b"ping");
}

#[test]
fn rampart_sends_to_haproxy() {
    let Some(haproxy) = haproxy_or_skip("rampart_sends_to_haproxy") else { return };
    let haproxy = haproxy.to_string_lossy().into_owned();
    for opts in ["send-proxy", "send-proxy-v2", "send-proxy-v2 proxy-v2-options crc32c,authority,unique-id"] {
        let s1 = HttpBackend::start("s1");
        let inner_extra = "  http-request set-header X-Src %[src]:%[src_port]\n  http-request set-header X-Auth %[fc_pp_authority]\n  \
                           http-request set-header X-Uid %[fc_pp_unique_id]\n";
        let inner = start(&haproxy, &http_listen("accept-proxy", inner_extra), s1.addr());
        let outer_cfg = http_listen("accept-proxy", "  unique-id-format uid-%[src_port]\n")
            .replace("${s1_port}\n", &format!("${{s1_port}} {opts}\n"));
        let outer = start(RAMPART, &outer_cfg, inner.addr("fe1"));
        // the client itself speaks PROXY v2 with an AUTHORITY to rampart
        let mut hdr = Vec::new();
        let client: SocketAddr = "203.0.113.5:6000".parse().unwrap();
        pp::encode_v2(
            &mut hdr,
            Some((client, "203.0.113.6:443".parse().unwrap())),
            &[(tlv::AUTHORITY, b"a.example")],
            false,
        );
        assert_eq!(get_with_prefix(outer.addr("fe1"), &hdr).status, 200, "{opts}");
        let req = &s1.wait_requests(1)[0];
        assert_eq!(req.headers.get("x-src"), Some("203.0.113.5:6000"), "{opts}");
        let auth = if opts.contains("authority") { "a.example" } else { "" };
        assert_eq!(req.headers.get("x-auth").unwrap_or(""), auth, "{opts}");
        let uid = if opts.contains("unique-id") { "uid-6000" } else { "" };
        assert_eq!(req.headers.get("x-uid").unwrap_or(""), uid, "{opts}");
    }
}

// === connection options ===

#[test]
fn source_binds_server_connections_and_tcpka_is_accepted() {
    for (server_opts, backend_lines, want) in [
        ("source 127.0.0.3", "", "127.0.0.3"),
        ("", "  source 127.0.0.4:0\n  option tcpka\n  srvtcpka-idle 30\n", "127.0.0.4"),
    ] {
        let server = RawBackend::start(vec![Step::expect_until("hi")]);
        let cfg = tcp_send(server_opts).replace("  server s1", &format!("{backend_lines}  server s1"));
        let px = start(RAMPART, &cfg, server.addr());
        let mut c = TcpStream::connect(px.addr("fe1")).unwrap();
        c.write_all(b"hi").unwrap();
        let conn = &server.wait_finished(1)[0];
        assert_eq!(conn.peer.ip().to_string(), want, "{cfg}");
        assert_eq!(conn.received, b"hi");
    }
}

#[test]
fn server_without_a_port_takes_the_clients_destination_port() {
    for with_offset in [false, true] {
        let builder = Proxy::new(RAMPART).listener("fe1");
        let fe = builder.listener_addr("fe1").expect("pre-bound listener");
        let (server, target) = if with_offset {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            let offset = i32::from(l.local_addr().unwrap().port()) - i32::from(fe.port());
            (l, format!("127.0.0.1:{offset:+}"))
        } else {
            // the listener's own port, on another loopback address
            (TcpListener::bind(("127.0.0.2", fe.port())).expect("127.0.0.2 on the listener's port"), "127.0.0.2".into())
        };
        let cfg = format!(
            "defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
             listen fe1\n  bind fd@${{fe1}}\n  server s1 {target}\n"
        );
        let px = builder.config(&cfg).start().expect("proxy starts");
        let mut c = TcpStream::connect(px.addr("fe1")).unwrap();
        c.write_all(b"mapped").unwrap();
        server.set_nonblocking(false).unwrap();
        let (mut s, _) = server.accept().expect("the mapped server is reached");
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = [0u8; 6];
        s.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"mapped", "{target}");
    }
}
