//! FastCGI `option get-values` end to end, against a recording FastCGI application in
//! this file that logs every record it receives: a new connection first carries a
//! GET_VALUES record asking `FCGI_MAX_REQS` and `FCGI_MPXS_CONNS`, and the request
//! waits for the answer (nothing arrives while the application takes its time); a
//! reused connection asks nothing; an application answering something else fails the
//! request. The same configuration through haproxy 2.6 must make the application
//! receive the same records (kinds, ids, the GET_VALUES and BEGIN_REQUEST contents).
//!
//! What is not here: multiplexing (`option mpxs-conns`): rampart sends one request per
//! connection at a time whatever the application answers (docs/COMPATIBILITY.md).

#![allow(clippy::disallowed_types)] // the test application's threads, not the request path

mod http_common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_common::{binary, PREAMBLE};
use rampart_testkit::{Proxy, RawClient, Running};

/// A record the application received (or, kind [`ANSWERED`], sent its values).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    conn: usize,
    kind: u8,
    id: u16,
    content: Vec<u8>,
}

/// Logged when the application answered GET_VALUES.
const ANSWERED: u8 = 100;
/// Logged when bytes had arrived while the application was still to answer GET_VALUES
/// or, when slow, a request.
const EARLY: u8 = 101;

/// How the application answers GET_VALUES.
#[derive(Clone, Copy)]
enum Answer {
    Values {
        mpxs: bool,
        max_reqs: u32,
    },
    /// A STDOUT record of request 1 instead.
    Garbage,
}

/// The recording application: keeps its connections open (keep-conn), answers each
/// request `conn <n> req <id>`.
struct App {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl App {
    fn start(answer: Answer) -> App {
        App::start_with(answer, false)
    }

    /// `slow`: each request is answered after a while, and anything else arriving on
    /// its connection meanwhile is logged ([`EARLY`]).
    fn start_with(answer: Answer, slow: bool) -> App {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let shared = log.clone();
        std::thread::spawn(move || {
            for (n, s) in l.incoming().enumerate() {
                let Ok(s) = s else { return };
                let log = shared.clone();
                std::thread::spawn(move || serve(n, s, answer, slow, &log));
            }
        });
        App { addr, log }
    }

    fn seen(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }
}

fn record(kind: u8, id: u16, content: &[u8]) -> Vec<u8> {
    let (id, len) = (id.to_be_bytes(), (content.len() as u16).to_be_bytes());
    let mut out = vec![1, kind, id[0], id[1], len[0], len[1], 0, 0];
    out.extend_from_slice(content);
    out
}

fn pair(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend([name.len() as u8, value.len() as u8]);
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(value.as_bytes());
}

/// Logs [`EARLY`] if bytes arrive on `s` within `wait`.
fn watch(conn: usize, s: &TcpStream, wait: Duration, log: &Mutex<Vec<Seen>>) {
    std::thread::sleep(wait);
    s.set_nonblocking(true).unwrap();
    if s.peek(&mut [0u8; 1]).is_ok_and(|n| n > 0) {
        log.lock().unwrap().push(Seen { conn, kind: EARLY, id: 0, content: Vec::new() });
    }
    s.set_nonblocking(false).unwrap();
}

fn serve(conn: usize, mut s: TcpStream, answer: Answer, slow: bool, log: &Mutex<Vec<Seen>>) {
    let mut head = [0u8; 8];
    while s.read_exact(&mut head).is_ok() {
        let (kind, id) = (head[1], u16::from_be_bytes([head[2], head[3]]));
        let len = usize::from(u16::from_be_bytes([head[4], head[5]])) + usize::from(head[6]);
        let mut content = vec![0u8; len];
        if s.read_exact(&mut content).is_err() {
            return;
        }
        content.truncate(len - usize::from(head[6]));
        let empty = content.is_empty();
        log.lock().unwrap().push(Seen { conn, kind, id, content });
        let reply = match (kind, answer) {
            (9, Answer::Values { mpxs, max_reqs }) => {
                // take our time: nothing may come before the answer
                watch(conn, &s, Duration::from_millis(300), log);
                let mut c = Vec::new();
                pair(&mut c, "FCGI_MAX_REQS", &max_reqs.to_string());
                pair(&mut c, "FCGI_MPXS_CONNS", if mpxs { "1" } else { "0" });
                log.lock().unwrap().push(Seen { conn, kind: ANSWERED, id: 0, content: Vec::new() });
                record(10, 0, &c)
            }
            (9, Answer::Garbage) => record(6, 1, b"Status: 200\r\n\r\n"),
            // the end of a request's STDIN: its response
            (5, _) if empty => {
                if slow {
                    // one request at a time: nothing more on this connection meanwhile
                    watch(conn, &s, Duration::from_millis(200), log);
                }
                let body = format!("Content-Type: text/plain\r\n\r\nconn {conn} req {id}");
                let mut out = record(6, id, body.as_bytes());
                out.extend(record(6, id, b""));
                out.extend(record(3, id, &[0, 0, 0, 0, 0, 0, 0, 0]));
                out
            }
            _ => continue,
        };
        if s.write_all(&reply).is_err() {
            return;
        }
    }
}

fn config(app_lines: &str) -> String {
    format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  use-fcgi-app app\n  http-reuse always\n  server s1 ${{app_addr}}:${{app_port}} proto fcgi\n\
         fcgi-app app\n  docroot /srv\n{app_lines}"
    )
}

fn start(bin: impl Into<std::path::PathBuf>, app: &App, app_lines: &str) -> Running {
    Proxy::new(bin).listener("fe1").backend("app", app.addr).config(&config(app_lines)).start().expect("starts")
}

/// A GET on a new client connection: (status, body).
fn get(proxy: &Running) -> (u16, String) {
    get_at(proxy.addr("fe1"))
}

fn get_at(addr: SocketAddr) -> (u16, String) {
    let mut c = RawClient::connect(addr).expect("connect");
    c.set_read_timeout(Duration::from_secs(5)).unwrap();
    c.send("GET /x HTTP/1.1\r\nhost: x\r\n\r\n").expect("send");
    let r = c.read_response().expect("a response");
    (r.status, String::from_utf8_lossy(&r.body).into_owned())
}

/// The records' kinds and ids in order, repeats of a kind in a row folded.
fn kinds(seen: &[Seen]) -> Vec<(usize, u8, u16)> {
    let mut out: Vec<(usize, u8, u16)> = seen.iter().map(|s| (s.conn, s.kind, s.id)).collect();
    out.dedup();
    out
}

/// Two requests, one after the other: what the application received.
fn two_requests(bin: impl Into<std::path::PathBuf>, answer: Answer, app_lines: &str) -> Vec<Seen> {
    let app = App::start(answer);
    let proxy = start(bin, &app, app_lines);
    assert_eq!(get(&proxy), (200, "conn 0 req 1".into()));
    // the connection is reused, with the next request id (as HAProxy's)
    assert_eq!(get(&proxy), (200, "conn 0 req 3".into()));
    app.seen()
}

const GET_VALUES: &str = "  option get-values\n";

#[test]
fn get_values_asks_first_and_waits_for_the_answer() {
    let seen = two_requests(binary(), Answer::Values { mpxs: false, max_reqs: 1 }, GET_VALUES);
    let k = kinds(&seen);
    // GET_VALUES, our answer, then the request; the second request asks nothing
    let mut want = vec![(0, 9, 0), (0, ANSWERED, 0)];
    want.extend([(0, 1, 1), (0, 4, 1), (0, 5, 1)]);
    want.extend([(0, 1, 3), (0, 4, 3), (0, 5, 3)]);
    assert_eq!(k, want, "{seen:?}");
    let mut asked = Vec::new();
    pair(&mut asked, "FCGI_MAX_REQS", "");
    pair(&mut asked, "FCGI_MPXS_CONNS", "");
    assert_eq!(seen[0].content, asked);
}

#[test]
fn without_get_values_nothing_is_asked() {
    let seen = two_requests(binary(), Answer::Values { mpxs: false, max_reqs: 1 }, "");
    assert!(!seen.iter().any(|s| s.kind == 9), "{seen:?}");
}

/// An application that says it multiplexes (`FCGI_MPXS_CONNS=1`) still gets one request
/// at a time on a connection from rampart (multiplexing is not implemented): nothing
/// arrives on a connection while a request on it waits for its answer.
#[test]
fn concurrent_requests_are_not_multiplexed_yet() {
    let app = App::start_with(Answer::Values { mpxs: true, max_reqs: 8 }, true);
    let lines = "  option get-values\n  option mpxs-conns\n  option max-reqs 8\n";
    let proxy = start(binary(), &app, lines);
    let addr = proxy.addr("fe1");
    let clients: Vec<_> = (0..4).map(|_| std::thread::spawn(move || get_at(addr))).collect();
    for c in clients {
        assert_eq!(c.join().unwrap().0, 200);
    }
    let seen = app.seen();
    assert!(!seen.iter().any(|s| s.kind == EARLY), "{seen:?}");
    assert_eq!(seen.iter().filter(|s| s.kind == 1).count(), 4, "{seen:?}");
}

#[test]
fn an_application_answering_something_else_fails_the_request() {
    let app = App::start(Answer::Garbage);
    let proxy = start(binary(), &app, GET_VALUES);
    assert_eq!(get(&proxy).0, 502);
    // no request was sent on that connection
    assert!(!app.seen().iter().any(|s| s.kind == 1), "{:?}", app.seen());
}

#[test]
fn the_application_receives_what_haproxy_sends() {
    let Some(haproxy) = rampart_testkit::haproxy_or_skip("fastcgi_values the_application_receives_what_haproxy_sends")
    else {
        return;
    };
    for (answer, lines) in [
        (Answer::Values { mpxs: false, max_reqs: 1 }, GET_VALUES),
        (Answer::Values { mpxs: false, max_reqs: 1 }, ""),
        (Answer::Values { mpxs: true, max_reqs: 1 }, "  option get-values\n  option max-reqs 1\n"),
    ] {
        let ours = two_requests(binary(), answer, lines);
        let theirs = two_requests(&haproxy, answer, lines);
        assert_eq!(kinds(&ours), kinds(&theirs), "{lines}");
        let contents = |seen: &[Seen]| -> Vec<Vec<u8>> {
            seen.iter().filter(|s| s.kind == 9 || s.kind == 1).map(|s| s.content.clone()).collect()
        };
        assert_eq!(contents(&ours), contents(&theirs), "{lines}");
    }
    // a wrong answer. COMPAT: HAProxy counts a connection failure (its retries on new
    // connections, then 503); rampart fails the request at once (502)
    let statuses: Vec<u16> = [binary(), haproxy]
        .into_iter()
        .map(|bin| {
            let app = App::start(Answer::Garbage);
            get(&start(bin, &app, GET_VALUES)).0
        })
        .collect();
    assert_eq!(statuses, [502, 503]);
}
