//! WebSocket over HTTP/2 (RFC 8441) through the binary: an HTTP/2 client's extended
//! CONNECT reaches an HTTP/1.1 WebSocket server as an upgrade (the `Sec-WebSocket-Key`
//! made by the proxy, the server's accept key checked), its `101` reaches the client as
//! `200`, then WebSocket frames flow both ways in DATA frames; an HTTP/1.1 client's
//! upgrade reaches an HTTP/2 server (`proto h2`) as an extended CONNECT. The same tests
//! run against haproxy 2.6 with `RAMPART_TEST_BINARY=/usr/sbin/haproxy` (the
//! differential run).

mod http2_client;
mod http_common;
mod ws_frames;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use base64::Engine as _;
use http2_client::{field, Event, H2Client};
use http_common::{start, PREAMBLE};
use rampart_testkit::{RawClient, Running};
use ws_frames::{accept_of, client_frame, server_frame};

const WAIT: Duration = Duration::from_secs(5);

/// Reads one client frame from `s` (masked, short): its payload; `None` at the end.
fn read_client_frame(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut hdr = [0u8; 6];
    s.read_exact(&mut hdr).ok()?;
    assert_eq!(hdr[1] & 0x80, 0x80, "a client frame is masked");
    let mut payload = vec![0u8; (hdr[1] & 0x7f) as usize];
    s.read_exact(&mut payload).ok()?;
    payload.iter_mut().enumerate().for_each(|(i, b)| *b ^= hdr[2 + i % 4]);
    Some(payload)
}

/// What the WebSocket server saw: the request head it received.
struct Seen {
    head: String,
}

/// An HTTP/1.1 WebSocket echo server for one connection: answers the handshake (with
/// the right accept key, or `bad_accept`), sends a greeting frame with its `101`, then
/// echoes each frame's payload prefixed with `echo:`, until the client ends.
fn ws_server(bad_accept: bool) -> (SocketAddr, mpsc::Receiver<Seen>) {
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
        let accept = if bad_accept { "invalid_key".to_string() } else { accept_of(&key) };
        let mut out = format!(
            "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
        )
        .into_bytes();
        out.extend_from_slice(&server_frame(b"hello"));
        let _ = s.write_all(&out);
        let _ = tx.send(Seen { head });
        while let Some(p) = read_client_frame(&mut s) {
            let mut reply = b"echo:".to_vec();
            reply.extend_from_slice(&p);
            if s.write_all(&server_frame(&reply)).is_err() {
                break;
            }
        }
        let _ = s.shutdown(std::net::Shutdown::Write);
    });
    (addr, rx)
}

/// `listen fe1` on an HTTP/2 bind (`proto h2`) to server `s1`.
fn h2_front(s1: SocketAddr) -> Running {
    let cfg = format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}} proto h2\n  server s1 ${{s1_addr}}:${{s1_port}}\n");
    start(&cfg, &[("s1", s1)])
}

/// The extended CONNECT of a WebSocket on stream 1.
fn ext_connect(c: &mut H2Client) {
    let fields = [
        (":method", "CONNECT"),
        (":protocol", "websocket"),
        (":scheme", "http"),
        (":authority", "t.test"),
        (":path", "/chat"),
    ];
    c.headers(1, &fields, false);
}

/// The next event on stream 1 that carries something (DATA, HEADERS, a reset).
fn next_on_1(c: &mut H2Client) -> Event {
    loop {
        match c.next(WAIT) {
            Event::GoAway { .. } => continue,
            Event::Data { id: 1, ref data, end: false } if data.is_empty() => continue,
            ev => return ev,
        }
    }
}

/// The payload of the server frame in DATA `ev` (one frame per DATA here).
fn frame_in(ev: &Event) -> Vec<u8> {
    match ev {
        Event::Data { id: 1, data, .. } => {
            assert_eq!(data[0], 0x81, "a text frame: {data:?}");
            data[2..2 + data[1] as usize].to_vec()
        }
        other => panic!("DATA on stream 1 expected, got {other:?}"),
    }
}

#[test]
fn extended_connect_is_offered_in_settings() {
    let (s1, _seen) = ws_server(false);
    let proxy = h2_front(s1);
    let mut c = H2Client::connect(proxy.addr("fe1"));
    c.get(1, "/");
    let _ = c.until_end(1, WAIT);
    // RFC 8441 §3: SETTINGS_ENABLE_CONNECT_PROTOCOL (0x8) = 1
    assert_eq!(c.settings().get(&8), Some(&1), "settings: {:?}", c.settings());
}

#[test]
fn websocket_over_h2_to_an_h1_server_carries_frames_both_ways() {
    let (s1, seen) = ws_server(false);
    let proxy = h2_front(s1);
    let mut c = H2Client::connect(proxy.addr("fe1"));
    ext_connect(&mut c);

    // the server got an HTTP/1.1 upgrade with a key the proxy made
    let head = seen.recv_timeout(WAIT).expect("the server got the handshake").head;
    let lower = head.to_ascii_lowercase();
    assert!(lower.starts_with("get /chat http/1.1\r\n"), "{head}");
    assert!(lower.contains("\r\nhost: t.test\r\n"), "{head}");
    assert!(lower.contains("\r\nupgrade: websocket\r\n"), "{head}");
    assert!(lower.contains("\r\nconnection: upgrade\r\n"), "{head}");
    let at = lower.find("\r\nsec-websocket-key: ").expect("a key") + "\r\nsec-websocket-key: ".len();
    let key = head[at..].split("\r\n").next().unwrap();
    assert_eq!(base64::engine::general_purpose::STANDARD.decode(key).map(|k| k.len()), Ok(16), "{head}");

    // the client gets 200 (RFC 8441 §5), the stream open
    match next_on_1(&mut c) {
        Event::Headers { id: 1, fields, end: false } => {
            assert_eq!(field(&fields, ":status"), Some("200"), "{fields:?}")
        }
        other => panic!("a 200 HEADERS expected, got {other:?}"),
    }
    // what the server sent right behind its 101 comes first
    assert_eq!(frame_in(&next_on_1(&mut c)), b"hello");
    c.data(1, &client_frame(b"ping"), false);
    assert_eq!(frame_in(&next_on_1(&mut c)), b"echo:ping");
    c.data(1, &client_frame(b"second"), false);
    assert_eq!(frame_in(&next_on_1(&mut c)), b"echo:second");
    // the client ends its side: the server sees the end and closes, the stream ends
    c.data(1, &[], true);
    let end = c.until_end(1, WAIT);
    assert!(
        end.iter().any(|e| matches!(e, Event::Data { id: 1, end: true, .. })),
        "the stream ends with END_STREAM: {end:?}"
    );
}

#[test]
fn a_wrong_accept_key_from_the_h1_server_is_a_502() {
    let (s1, _seen) = ws_server(true);
    let proxy = h2_front(s1);
    let mut c = H2Client::connect(proxy.addr("fe1"));
    ext_connect(&mut c);
    match next_on_1(&mut c) {
        Event::Headers { id: 1, fields, .. } => assert_eq!(field(&fields, ":status"), Some("502"), "{fields:?}"),
        other => panic!("a 502 expected, got {other:?}"),
    }
}

/// An HTTP/1.1 client through a first proxy that speaks HTTP/2 to a second one
/// (`server ... proto h2`), which reaches the WebSocket server in HTTP/1.1: the upgrade
/// crosses the HTTP/2 hop as an extended CONNECT and back.
#[test]
fn an_h1_upgrade_crosses_an_h2_hop_and_carries_frames_both_ways() {
    let (s1, seen) = ws_server(false);
    let inner = h2_front(s1);
    let cfg = format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  server s1 ${{s1_addr}}:${{s1_port}} proto h2\n");
    let outer = start(&cfg, &[("s1", inner.addr("fe1"))]);
    let mut c = RawClient::connect(outer.addr("fe1")).unwrap();
    let key = "dGhlIHNhbXBsZSBub25jZQ==";
    c.send(format!(
        "GET /chat HTTP/1.1\r\nHost: t.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ))
    .unwrap();
    let res = c.read_response().unwrap();
    let raw = String::from_utf8_lossy(&res.raw).to_ascii_lowercase();
    assert!(raw.starts_with("http/1.1 101 "), "{raw}");
    assert!(raw.contains("\r\nupgrade: websocket\r\n"), "{raw}");
    assert!(raw.contains("\r\nconnection: upgrade\r\n"), "{raw}");
    // the accept key of the client's key: the server's own passed through the
    // HTTP/2 hop, or the one the first proxy computes
    assert!(raw.contains(&format!("\r\nsec-websocket-accept: {}\r\n", accept_of(key).to_ascii_lowercase())), "{raw}");
    let head = seen.recv_timeout(WAIT).expect("the server got the handshake").head;
    assert!(head.to_ascii_lowercase().contains("\r\nupgrade: websocket\r\n"), "{head}");

    let mut got = c.read_until(b"hello".as_slice()).unwrap();
    assert_eq!(got, server_frame(b"hello"));
    c.send(client_frame(b"ping")).unwrap();
    got = c.read_until(b"echo:ping".as_slice()).unwrap();
    assert_eq!(got, server_frame(b"echo:ping"));
    c.shutdown_write().unwrap();
    assert_eq!(c.read_to_end().unwrap(), b"", "the tunnel ends when the client ends it");
}

/// A server proxy that does not offer extended CONNECT (`h2-workaround-bogus-websocket-clients`
/// on the inner one): the upgrade is refused with 502, as HAProxy refuses it.
#[test]
fn an_h1_upgrade_to_an_h2_server_without_extended_connect_is_a_502() {
    let (s1, _seen) = ws_server(false);
    let cfg = format!(
        "global\n  h2-workaround-bogus-websocket-clients\n{}listen fe1\n  bind fd@${{fe1}} proto h2\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        PREAMBLE.trim_start_matches("global\n")
    );
    let inner = start(&cfg, &[("s1", s1)]);
    let cfg = format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  server s1 ${{s1_addr}}:${{s1_port}} proto h2\n");
    let outer = start(&cfg, &[("s1", inner.addr("fe1"))]);
    let mut c = RawClient::connect(outer.addr("fe1")).unwrap();
    c.send("GET /chat HTTP/1.1\r\nHost: t.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").unwrap();
    let res = c.read_response().unwrap();
    assert!(res.raw.starts_with(b"HTTP/1.1 502 "), "{}", String::from_utf8_lossy(&res.raw));
}
