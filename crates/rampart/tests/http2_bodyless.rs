//! Bodyless responses across an HTTP/2 hop (reg-test
//! `http-messaging/http_bodyless_response.vtc`): a `HEAD` that a rule turns into `GET`
//! (`http-request set-method GET`) behind a frontend spoken to in HTTP/2. The server
//! sends bodies, in several writes; the client of `HEAD` gets none of it, its next
//! request goes on, and all of them reach the server on one connection: the proxy
//! reads each body to its end before it ends the HTTP/2 stream, as HAProxy 2.6 does.
//! The same sequence through haproxy 2.6 gives the client the same answers.

mod http_common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use http_common::{binary, start_binary, PREAMBLE};
use rampart_testkit::{haproxy_or_skip, RawClient};

const WAIT: Duration = Duration::from_secs(5);

/// Reads one request head from `s`; `None` at the end of the connection.
fn read_head(s: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut b).ok()? == 0 {
            return None;
        }
        head.push(b[0]);
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// The server of the reg-test: serves its connections one after the other (as VTest
/// does), four requests each: a short body, a 20000-byte one, a chunked one in three
/// writes, then `last response`. Reports each request line with its connection's
/// number.
fn server() -> (SocketAddr, mpsc::Receiver<(usize, String)>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for (n, s) in l.incoming().enumerate() {
            let Ok(mut s) = s else { return };
            s.set_read_timeout(Some(WAIT)).unwrap();
            for i in 0..4 {
                let Some(head) = read_head(&mut s) else { break };
                let _ = tx.send((n, head.lines().next().unwrap_or("").to_owned()));
                let pause = || thread::sleep(Duration::from_millis(30));
                let w = |s: &mut TcpStream, b: &[u8]| s.write_all(b).is_ok();
                let ok = match i {
                    0 => w(&mut s, b"HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\nskipped data"),
                    1 => {
                        let mut r = b"HTTP/1.1 200 OK\r\ncontent-length: 20000\r\n\r\n".to_vec();
                        r.extend(std::iter::repeat_n(b'x', 20000));
                        w(&mut s, &r)
                    }
                    2 => {
                        let ok = w(&mut s, b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
                        pause();
                        let ok = ok && w(&mut s, b"f\r\n012345670123456\r\n");
                        pause();
                        let mut rest = b"400\r\n".to_vec();
                        rest.extend(std::iter::repeat_n(b'y', 1024));
                        rest.extend_from_slice(b"\r\n0\r\n\r\n");
                        ok && w(&mut s, &rest)
                    }
                    _ => w(&mut s, b"HTTP/1.1 200 OK\r\ncontent-length: 13\r\n\r\nlast response"),
                };
                if !ok {
                    break;
                }
            }
        }
    });
    (addr, rx)
}

/// Three HEADs and a GET through `bin` on one client connection: (status, framing
/// header, body) of each answer, and what the server saw.
/// Each answer (status, framing header, body), and each request line the server saw
/// with its connection's number.
type Run = (Vec<(u16, String, Vec<u8>)>, Vec<(usize, String)>);

fn run(bin: std::path::PathBuf) -> Run {
    let (s1, seen) = server();
    // as the reg-test's `int` (HTTP/2 only, the method made GET) and `fe2` (HTTP/2
    // towards `int`), in two processes
    let int_cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}} proto h2\n  http-request set-method GET\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let int = start_binary(bin.clone(), &int_cfg, &[("s1", s1)]);
    let fe_cfg = format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  server s1 ${{s1_addr}}:${{s1_port}} proto h2\n");
    let fe = start_binary(bin, &fe_cfg, &[("s1", int.addr("fe1"))]);
    let mut c = RawClient::connect(fe.addr("fe1")).unwrap();
    c.set_read_timeout(WAIT).unwrap();
    let mut answers = Vec::new();
    for (method, path) in [("HEAD", "/req1"), ("HEAD", "/req2"), ("HEAD", "/req3"), ("GET", "/req4")] {
        c.send(format!("{method} {path} HTTP/1.1\r\nHost: t.test\r\n\r\n")).unwrap();
        let r = c.read_response_for(method).unwrap();
        let framing = r.headers.get("content-length").map(|v| format!("content-length: {v}")).unwrap_or_default();
        answers.push((r.status, framing, r.body));
    }
    let seen: Vec<(usize, String)> =
        std::iter::from_fn(|| seen.recv_timeout(Duration::from_millis(200)).ok()).collect();
    (answers, seen)
}

#[test]
fn a_head_made_a_get_behind_an_h2_hop_gets_no_body_and_keeps_the_connection() {
    let (answers, seen) = run(binary());
    let want = [
        (200, "content-length: 12".to_owned(), Vec::new()),
        (200, "content-length: 20000".to_owned(), Vec::new()),
        (200, String::new(), Vec::new()),
        (200, "content-length: 13".to_owned(), b"last response".to_vec()),
    ];
    assert_eq!(answers, want);
    let lines: Vec<(usize, &str)> = seen.iter().map(|(n, l)| (*n, l.as_str())).collect();
    assert_eq!(
        lines,
        [(0, "GET /req1 HTTP/1.1"), (0, "GET /req2 HTTP/1.1"), (0, "GET /req3 HTTP/1.1"), (0, "GET /req4 HTTP/1.1")],
        "every request on the server's first connection"
    );
    let Some(haproxy) = haproxy_or_skip("a_head_made_a_get_behind_an_h2_hop_gets_no_body_and_keeps_the_connection")
    else {
        return;
    };
    let (theirs, their_seen) = run(haproxy);
    assert_eq!(answers, theirs, "the client's answers through haproxy 2.6");
    assert_eq!(seen, their_seen, "what the server saw through haproxy 2.6");
}
