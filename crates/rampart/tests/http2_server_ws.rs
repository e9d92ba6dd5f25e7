//! `server ... ws auto|h1|h2` through the binary: the protocol a WebSocket upgrade
//! takes towards a server, as HAProxy 2.6 chooses it (reg-test
//! `http-messaging/srv_ws.vtc`). `ws h1` sends it as an HTTP/1.1 `Upgrade` even to a
//! `proto h2` server, `ws h2` as an extended CONNECT (RFC 8441) even to a server
//! spoken to in HTTP/1; over TLS the ALPN offered for the stream's new connection is
//! `http/1.1` (`ws h1`, or `ws auto` with `http/1.1` in the server's `alpn`) or `h2`
//! (`ws h2`). Other streams keep the server's protocol.
//!
//! The server side is a WebSocket echo server in HTTP/1.1 (what it received is
//! asserted), or, for the matrix of the reg-test, an "inner" proxy (haproxy 2.6 when
//! installed) that answers the handshake itself and reports the HTTP version and the
//! ALPN it got; the same matrix runs through haproxy 2.6 as the outer proxy and the
//! answers must be the same.

mod http_common;
mod test_pki;
mod ws_frames;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use http_common::{binary, start, PREAMBLE};
use rampart_testkit::{haproxy_or_skip, Proxy, RawClient, Running};
use ws_frames::{accept_of, client_frame, server_frame};

const WAIT: Duration = Duration::from_secs(5);
const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

/// An HTTP/1.1 WebSocket echo server for one connection: sends the head it received
/// (or its first bytes, if they are no HTTP/1 head), answers the handshake, then echoes
/// one frame with `echo:` before it.
fn ws_server() -> (SocketAddr, mpsc::Receiver<String>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(WAIT)).unwrap();
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && s.read(&mut b).unwrap_or(0) == 1 {
            head.push(b[0]);
        }
        let head = String::from_utf8_lossy(&head).into_owned();
        let key = head
            .lines()
            .find_map(|l| l.split_once(':').filter(|(n, _)| n.eq_ignore_ascii_case("sec-websocket-key")))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default();
        let _ = tx.send(head);
        let out = format!(
            "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: {}\r\n\r\n",
            accept_of(&key)
        );
        let _ = s.write_all(out.as_bytes());
        let mut hdr = [0u8; 6];
        if s.read_exact(&mut hdr).is_err() {
            return;
        }
        let mut p = vec![0u8; (hdr[1] & 0x7f) as usize];
        if s.read_exact(&mut p).is_err() {
            return;
        }
        p.iter_mut().enumerate().for_each(|(i, b)| *b ^= hdr[2 + i % 4]);
        let mut reply = b"echo:".to_vec();
        reply.extend_from_slice(&p);
        let _ = s.write_all(&server_frame(&reply));
    });
    (addr, rx)
}

/// Sends a WebSocket handshake on `c`, checks the `101` and one echoed frame.
fn handshake_and_echo(c: &mut RawClient) {
    c.send(format!(
        "GET /chat HTTP/1.1\r\nHost: t.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ))
    .unwrap();
    let res = c.read_response().unwrap();
    let raw = String::from_utf8_lossy(&res.raw).to_ascii_lowercase();
    assert!(raw.starts_with("http/1.1 101 "), "{raw}");
    assert!(raw.contains(&format!("\r\nsec-websocket-accept: {}\r\n", accept_of(KEY).to_ascii_lowercase())), "{raw}");
    c.send(client_frame(b"ping")).unwrap();
    assert_eq!(c.read_until(b"echo:ping".as_slice()).unwrap(), server_frame(b"echo:ping"));
}

/// `ws h1` on a `proto h2` server: the upgrade reaches the server as an HTTP/1.1
/// `Upgrade` (HTTP/2 would start with the connection preface), frames flow.
#[test]
fn ws_h1_sends_an_http1_upgrade_to_a_proto_h2_server() {
    let (s1, seen) = ws_server();
    let cfg =
        format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  server s1 ${{s1_addr}}:${{s1_port}} proto h2 ws h1\n");
    let proxy = start(&cfg, &[("s1", s1)]);
    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    handshake_and_echo(&mut c);
    let head = seen.recv_timeout(WAIT).expect("the server got a head").to_ascii_lowercase();
    assert!(head.starts_with("get /chat http/1.1\r\n"), "{head}");
    assert!(head.contains("\r\nupgrade: websocket\r\n") && head.contains("\r\nconnection: upgrade\r\n"), "{head}");
    assert!(head.contains(&format!("\r\nsec-websocket-key: {}\r\n", KEY.to_ascii_lowercase())), "{head}");
}

/// `ws h2` on a server spoken to in HTTP/1: the upgrade goes as an extended CONNECT
/// over HTTP/2 (prior knowledge), here to a second proxy that serves HTTP/2 only
/// (`bind ... proto h2`) and passes it on to the HTTP/1.1 WebSocket server.
#[test]
fn ws_h2_sends_an_extended_connect_to_a_plain_server() {
    let (s1, seen) = ws_server();
    let cfg = format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}} proto h2\n  server s1 ${{s1_addr}}:${{s1_port}}\n");
    let inner = start(&cfg, &[("s1", s1)]);
    let cfg = format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  server s1 ${{s1_addr}}:${{s1_port}} ws h2\n");
    let outer = start(&cfg, &[("s1", inner.addr("fe1"))]);
    let mut c = RawClient::connect(outer.addr("fe1")).unwrap();
    handshake_and_echo(&mut c);
    let head = seen.recv_timeout(WAIT).expect("the server got a head").to_ascii_lowercase();
    assert!(head.starts_with("get /chat http/1.1\r\n"), "{head}");
    assert!(head.contains("\r\nupgrade: websocket\r\n"), "{head}");
}

/// The "inner" server of the matrix: answers a WebSocket handshake with `101` (its own
/// accept key) and any other request with `200`, with the HTTP version
/// (`x-backend-protocol`) and the ALPN (`x-server-alpn`) it received. Listeners `fe`
/// (cleartext, HTTP/1 or HTTP/2 by the preface) and `fessl` (TLS, `alpn h2,http/1.1`).
fn inner_server(pem: &std::path::Path) -> Running {
    let bin = haproxy_or_skip("ws inner server").unwrap_or_else(binary);
    let cfg = format!(
        "{PREAMBLE}frontend fe
  bind fd@${{fe}}
  bind fd@${{fessl}} ssl crt {} alpn h2,http/1.1
  capture request header sec-websocket-key len 128
  http-request set-var(txn.ver) req.ver
  http-request set-var(txn.alpn) ssl_fc_alpn
  use_backend be
backend be
  acl ws_handshake hdr(upgrade) -m str websocket
  http-request return status 200 if !ws_handshake
  http-request return status 200 hdr connection upgrade hdr upgrade websocket hdr sec-websocket-accept \"%[capture.req.hdr(0),concat(258EAFA5-E914-47DA-95CA-C5AB0DC85B11,,),sha1,base64]\" if ws_handshake
  http-after-response set-status 101 if {{ status eq 200 }} {{ res.hdr(upgrade) -m str websocket }}
  http-after-response set-header x-backend-protocol \"%[var(txn.ver)]\"
  http-after-response set-header x-server-alpn \"%[var(txn.alpn)]\"
",
        pem.display()
    );
    Proxy::new(bin).listener("fe").listener("fessl").config(&cfg).start().expect("the inner server starts")
}

/// The outer listeners of the matrix and their server lines, as in `srv_ws.vtc`.
const MATRIX: &[(&str, &str)] = &[
    ("li", "fe proto h2 ws h1"),
    ("lih2", "fe proto h2 ws h2"),
    ("lisslh2", "fessl ssl verify none alpn h2,http/1.1 ws h2"),
    ("liauto", "fe"),
    ("liauto2", "fe proto h2"),
    ("lissl", "fessl ssl verify none alpn h2,http/1.1 ws auto"),
    ("lisslauto", "fessl ssl verify none alpn h2,http/1.1"),
    ("lisslauto2", "fessl ssl verify none alpn h2 ws auto"),
    ("lisslh1", "fessl ssl verify none alpn h2,http/1.1 ws h1"),
];

/// The outer proxy (`bin`) with one listener per [`MATRIX`] line towards `inner`.
fn outer(bin: PathBuf, inner: &Running) -> Running {
    let mut cfg = PREAMBLE.to_owned();
    let mut p = Proxy::new(bin);
    for (name, line) in MATRIX {
        let (target, opts) = line.split_once(' ').unwrap_or((line, ""));
        cfg.push_str(&format!(
            "listen {name}\n  bind fd@${{{name}}}\n  server s ${{{target}_addr}}:${{{target}_port}} {opts}\n"
        ));
        p = p.listener(name);
    }
    p = p.backend("fe", inner.addr("fe")).backend("fessl", inner.addr("fessl"));
    p.config(&cfg).start().expect("the outer proxy starts")
}

/// On one client connection: a plain request, then a WebSocket handshake. What the
/// inner server reported for each: (status, HTTP version, ALPN).
fn plain_then_ws(addr: SocketAddr) -> [(u16, String, String); 2] {
    let mut c = RawClient::connect(addr).unwrap();
    c.send("GET / HTTP/1.1\r\nHost: t.test\r\n\r\n").unwrap();
    let plain = c.read_response().unwrap();
    c.send(format!(
        "GET / HTTP/1.1\r\nHost: t.test\r\nConnection: upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: {KEY}\r\n\r\n"
    ))
    .unwrap();
    let ws = c.read_response().unwrap();
    let facts = |r: &rampart_testkit::Response| {
        let h = |n: &str| r.headers.get(n).unwrap_or("").to_owned();
        (r.status, h("x-backend-protocol"), h("x-server-alpn"))
    };
    [facts(&plain), facts(&ws)]
}

/// The matrix through `bin`: each listener's answers.
/// A listener's answers to a plain request and a WebSocket one.
type Answers = (&'static str, [(u16, String, String); 2]);

fn matrix(bin: PathBuf, inner: &Running) -> Vec<Answers> {
    let proxy = outer(bin, inner);
    MATRIX.iter().map(|(name, _)| (*name, plain_then_ws(proxy.addr(name)))).collect()
}

#[test]
fn ws_chooses_the_protocol_and_alpn_of_websocket_streams_as_haproxy() {
    let dir = test_pki::fresh_dir("srv-ws");
    let (ca, ca_key) = test_pki::ca("srv_ws test CA");
    let pem = dir.join("srv.pem");
    std::fs::write(&pem, test_pki::leaf_pem(&["localhost"], &ca, &ca_key)).unwrap();
    let inner = inner_server(&pem);
    let ours = matrix(binary(), &inner);
    let ok = |ver: &str, alpn: &str| (200, ver.to_owned(), alpn.to_owned());
    let ws = |ver: &str, alpn: &str| (101, ver.to_owned(), alpn.to_owned());
    let expected = [
        ("li", [ok("2.0", ""), ws("1.1", "")]),
        ("lih2", [ok("2.0", ""), ws("2.0", "")]),
        ("lisslh2", [ok("2.0", "h2"), ws("2.0", "h2")]),
        ("liauto", [ok("1.1", ""), ws("1.1", "")]),
        ("liauto2", [ok("2.0", ""), ws("2.0", "")]),
        // `ws auto` with an `alpn` list: the HTTP/2 connection of the first request
        // takes the WebSocket stream too (HAProxy 2.6 lets it)
        ("lissl", [ok("2.0", "h2"), ws("2.0", "h2")]),
        ("lisslauto", [ok("2.0", "h2"), ws("2.0", "h2")]),
        ("lisslauto2", [ok("2.0", "h2"), ws("2.0", "h2")]),
        ("lisslh1", [ok("2.0", "h2"), ws("1.1", "http/1.1")]),
    ];
    for ((name, got), (want_name, want)) in ours.iter().zip(expected.iter()) {
        assert_eq!((name, got), (want_name, want), "listener {name}");
    }
    // a WebSocket stream first on its client connection: a new server connection,
    // which offers `http/1.1` only (reg-test srv_ws's `lisslauto`)
    let proxy = outer(binary(), &inner);
    for name in ["lissl", "lisslauto"] {
        let mut c = RawClient::connect(proxy.addr(name)).unwrap();
        c.send(format!(
            "GET / HTTP/1.1\r\nHost: t.test\r\nConnection: upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: {KEY}\r\n\r\n"
        ))
        .unwrap();
        let r = c.read_response().unwrap();
        assert_eq!(r.status, 101, "{name}");
        assert_eq!(r.headers.get("x-server-alpn"), Some("http/1.1"), "{name}");
        assert_eq!(r.headers.get("x-backend-protocol"), Some("1.1"), "{name}");
    }
    let Some(haproxy) = haproxy_or_skip("ws_chooses_the_protocol_and_alpn_of_websocket_streams_as_haproxy") else {
        return;
    };
    let theirs = matrix(haproxy, &inner);
    assert_eq!(ours, theirs, "rampart and haproxy 2.6 as the outer proxy");
    let _ = std::fs::remove_dir_all(dir);
}
