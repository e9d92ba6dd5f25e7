//! TCP rules, rampart against haproxy: the same configurations and clients through
//! both, with fresh backends; what the clients and the servers saw must be the same
//! (bytes, and how each connection ended). Skipped when haproxy is not installed.

mod netutil;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::thread::sleep;
use std::time::Duration;

use rampart_testkit::{Differential, HttpBackend, RawBackend, RawClient, Running, Step, TcpEchoBackend};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

fn tcp(body: &str) -> Differential {
    Differential::new(RAMPART).listener("fe1").config(&format!("{}{body}", netutil::tcp_defaults("")))
}

/// Sends `parts` (pausing between them), then reports what came back and how it ended.
fn talk(proxy: &Running, parts: &[&[u8]]) -> Vec<String> {
    let mut seen = Vec::new();
    let mut c = match TcpStream::connect(proxy.addr("fe1")) {
        Ok(c) => c,
        Err(e) => return vec![format!("connect {:?}", e.kind())],
    };
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            sleep(Duration::from_millis(100));
        }
        if let Err(e) = c.write_all(p) {
            seen.push(format!("write {:?}", e.kind()));
        }
    }
    c.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let mut got = Vec::new();
    let end = loop {
        let mut buf = [0u8; 4096];
        match c.read(&mut buf) {
            Ok(0) => break "eof".to_owned(),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => break "open".to_owned(),
            Err(e) => break format!("{:?}", e.kind()),
        }
    };
    seen.push(format!("got {:?}", String::from_utf8_lossy(&got)));
    seen.push(format!("end {end}"));
    seen
}

fn listen(rules: &str) -> Differential {
    tcp(&format!("listen fe1\n  bind fd@${{fe1}}\n{rules}  server s1 ${{s1_addr}}:${{s1_port}}\n"))
        .backend("s1", TcpEchoBackend::start)
}

/// Connections refused by the connection or session rules. The client does not write:
/// a write racing the close makes the end an EOF or a reset at random, with either
/// binary.
#[test]
fn connection_and_session_rejects() {
    for rules in [
        "  tcp-request connection reject if { src 127.0.0.1 }\n",
        "  tcp-request session reject\n",
        "  tcp-request connection accept\n  tcp-request session reject\n",
        "  tcp-request connection reject if { src 10.0.0.0/8 }\n  tcp-request session accept\n",
    ] {
        let Some(cmp) = listen(rules).run(|proxy| talk(proxy, &[])) else { return };
        cmp.assert_same();
    }
}

#[test]
fn content_rejects_on_what_arrived() {
    for rules in [
        "  tcp-request inspect-delay 1s\n  tcp-request content reject if { req.payload(0,3) -m str BAD }\n",
        "  tcp-request inspect-delay 300ms\n  tcp-request content reject unless { req.len ge 100 }\n",
        "  tcp-request inspect-delay 1s\n  tcp-request content accept if { req.len ge 4 }\n  tcp-request content reject\n",
    ] {
        let Some(cmp) = listen(rules)
            .run(|proxy| {
                let mut seen = talk(proxy, &[b"BAD", b" one"]);
                seen.extend(talk(proxy, &[b"GOOD one"]));
                seen
            })
        else {
            return;
        };
        cmp.assert_same();
    }
}

#[test]
fn sni_routing_with_a_client_hello_in_two_writes() {
    let hello = client_hello("example.com");
    let other = client_hello("www.other.net");
    let cfg = "frontend fe1\n  bind fd@${fe1}\n  tcp-request inspect-delay 5s\n\
               tcp-request content accept if { req_ssl_hello_type 1 }\n\
               use_backend tls if { req_ssl_sni -i example.com }\n  default_backend plain\n\
               backend tls\n  server s ${tls_addr}:${tls_port}\n\
               backend plain\n  server s ${plain_addr}:${plain_port}\n";
    let len = hello.len();
    let Some(cmp) = tcp(cfg)
        .backend("tls", move || RawBackend::start(vec![Step::ExpectBytes(len), Step::send("tls")]))
        .backend("plain", || RawBackend::start(vec![Step::ExpectBytes(3), Step::send("plain")]))
        .run(|proxy| {
            let mut seen = talk(proxy, &[&hello[..7], &hello[7..]]);
            seen.extend(talk(proxy, &[&other]));
            seen.extend(talk(proxy, &[b"GET"]));
            seen
        })
    else {
        return;
    };
    cmp.assert_same();
}

#[test]
fn response_rules_reject_close_and_wait() {
    let rules = "  tcp-response inspect-delay 1s\n\
                 tcp-response content reject if { res.payload(0,2) -m str NO }\n\
                 tcp-response content close if { res.payload(0,5) -m str CLOSE }\n\
                 tcp-response content accept if { res.len ge 6 }\n";
    for script in [
        vec![Step::send("NOPE, nothing")],
        vec![Step::send("CLOSE this"), Step::sleep_ms(200), Step::send("late")],
        vec![Step::send("he"), Step::sleep_ms(200), Step::send("llo world")],
        vec![Step::send("hi")],
    ] {
        let Some(cmp) = tcp(&format!("listen fe1\n  bind fd@${{fe1}}\n{rules}  server s1 ${{s1_addr}}:${{s1_port}}\n"))
            .backend("s1", move || RawBackend::start(script.clone()))
            .run(|proxy| talk(proxy, &[b"q"]))
        else {
            return;
        };
        cmp.assert_same();
    }
}

#[test]
fn http_content_rules_set_src_for_forwardfor_and_reject() {
    let cfg = "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
               frontend fe1\n  bind fd@${fe1}\n  option forwardfor\n\
               tcp-request content set-src req.hdr(x-real-ip) if { req.hdr(x-real-ip) -m found }\n\
               tcp-request content reject if { path /deny }\n\
               tcp-request content capture req.hdr(host) len 3\n\
               http-request set-header x-cap %[capture.req.hdr(0)]\n  default_backend b\n\
               backend b\n  server s1 ${s1_addr}:${s1_port}\n";
    let Some(cmp) = Differential::new(RAMPART)
        .listener("fe1")
        .config(cfg)
        .backend("s1", || HttpBackend::start("s1"))
        .ignore_header("date")
        .run(|proxy| {
            let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
            let mut seen = Vec::new();
            for req in [
                "GET /a HTTP/1.1\r\nHost: example\r\nX-Real-IP: 203.0.113.5\r\n\r\n",
                "GET /b HTTP/1.1\r\nHost: h\r\n\r\n",
                "GET /deny HTTP/1.1\r\nHost: h\r\n\r\n",
            ] {
                c.send(req).unwrap();
                seen.push(format!("{:?}", c.read_response().map(|r| r.status).map_err(|e| e.kind())));
            }
            seen
        })
    else {
        return;
    };
    cmp.assert_same();
}

/// A ClientHello for `host` (SNI).
fn client_hello(host: &str) -> Vec<u8> {
    let mut sni = Vec::new();
    sni.extend_from_slice(&((host.len() + 3) as u16).to_be_bytes());
    sni.push(0);
    sni.extend_from_slice(&(host.len() as u16).to_be_bytes());
    sni.extend_from_slice(host.as_bytes());
    let mut ext = vec![0, 0];
    ext.extend_from_slice(&(sni.len() as u16).to_be_bytes());
    ext.extend_from_slice(&sni);
    let mut body = vec![3, 3];
    body.extend_from_slice(&[9; 32]);
    body.push(0);
    body.extend_from_slice(&[0, 2, 0x13, 0x01, 1, 0]);
    body.extend_from_slice(&(ext.len() as u16).to_be_bytes());
    body.extend_from_slice(&ext);
    let mut hs = vec![1];
    hs.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    hs.extend_from_slice(&body);
    let mut rec = vec![0x16, 3, 1];
    rec.extend_from_slice(&(hs.len() as u16).to_be_bytes());
    rec.extend_from_slice(&hs);
    rec
}

/// Without `tcp-response inspect-delay` the response rules decide when the server
/// connection is up, on nothing: a payload condition never matches.
#[test]
fn response_rules_without_delay_decide_at_connection() {
    let rules = "  tcp-response content reject if { res.len gt 0 }\n";
    let Some(cmp) = tcp(&format!("listen fe1\n  bind fd@${{fe1}}\n{rules}  server s1 ${{s1_addr}}:${{s1_port}}\n"))
        .backend("s1", || RawBackend::start(vec![Step::send("hello"), Step::sleep_ms(100), Step::send(" world")]))
        .run(|proxy| talk(proxy, &[b"q"]))
    else {
        return;
    };
    cmp.assert_same();
}
