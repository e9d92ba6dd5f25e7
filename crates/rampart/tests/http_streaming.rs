//! Bodies stream: what a server writes in pieces reaches the client piece by piece, and
//! what a client sends in pieces reaches the server piece by piece, as it comes (the
//! server-sent events / token streaming shape). Arrival gaps are measured on the
//! receiving side; pieces are sent 100 ms apart, and a gap of at least 60 ms shows they
//! were not held back and coalesced.
//!
//! COMPAT: haproxy 2.6 sends with MSG_MORE while a message is unfinished unless `option
//! http-no-delay` is set, so the kernel may hold a piece up to 200 ms and merge it with
//! the next; rampart never asks the kernel to wait. Against haproxy (see http_common)
//! the tests that measure gaps are skipped.

mod http_common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use http_common::{client, listen_cfg, start};
use rampart_testkit::{Framing, HttpBackend, RawBackend, Reply, Step};

const EVERY: Duration = Duration::from_millis(100);
const MIN_GAP: Duration = Duration::from_millis(60);

#[test]
fn chunked_response_reaches_the_client_chunk_by_chunk() {
    rampart_only!();
    let pieces = ["data: 1\n\n", "data: 2\n\n", "data: 3\n\n", "data: 4\n\n", "data: 5\n\n"];
    let s1 = HttpBackend::builder("s1")
        .reply(Reply::ok().header("Content-Type", "text/event-stream").chunks(pieces, EVERY))
        .start();
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    let sent = Instant::now();
    c.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let timed = c.read_response_timed().unwrap();
    assert_eq!(timed.response.framing, Framing::Chunked);
    let got: Vec<&[u8]> = timed.pieces.iter().map(|p| p.data.as_slice()).collect();
    assert_eq!(got, pieces.map(str::as_bytes), "one piece per chunk, in order");
    let gaps = timed.gaps();
    assert!(gaps[1..].iter().all(|g| *g >= MIN_GAP), "chunks arrived together: {gaps:?}");
    // The first chunk came long before the server wrote the last one (400 ms later).
    let first = timed.pieces[0].at - sent;
    assert!(first < Duration::from_millis(200), "first chunk after {first:?}");
    assert!(timed.pieces[4].at - timed.pieces[0].at >= 4 * MIN_GAP);
}

#[test]
fn content_length_response_streams_too() {
    rampart_only!();
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\naaa"),
        Step::Sleep(EVERY),
        Step::send("bbb"),
        Step::Sleep(EVERY),
        Step::send("ccc"),
    ]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let timed = c.read_response_timed().unwrap();
    assert_eq!(timed.response.body, b"aaabbbccc");
    let got: Vec<&[u8]> = timed.pieces.iter().map(|p| p.data.as_slice()).collect();
    assert_eq!(got, [b"aaa".as_slice(), b"bbb", b"ccc"]);
    assert!(timed.gaps()[1..].iter().all(|g| *g >= MIN_GAP), "{:?}", timed.gaps());
}

/// The reads of a connection: when each completed, and what it brought.
type Reads = Vec<(Instant, Vec<u8>)>;

/// A one-connection server that records when each piece of input arrived, then
/// answers `200` once `until` is in what it received.
fn timing_backend(until: &'static [u8]) -> (SocketAddr, mpsc::Receiver<Reads>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let Ok((mut conn, _)) = listener.accept() else { return };
        conn.set_read_timeout(Some(rampart_testkit::patience())).unwrap();
        let mut reads = Vec::new();
        let mut all = Vec::new();
        let mut buf = [0u8; 65536];
        while !all.windows(until.len()).any(|w| w == until) {
            match conn.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    reads.push((Instant::now(), buf[..n].to_vec()));
                    all.extend_from_slice(&buf[..n]);
                }
            }
        }
        let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        let _ = tx.send(reads);
        let _ = conn.read(&mut buf);
    });
    (addr, rx)
}

/// Sends `pieces` [`EVERY`] apart; returns when each was sent.
fn send_paced(c: &mut rampart_testkit::RawClient, pieces: &[Vec<u8>]) -> Vec<Instant> {
    pieces
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i > 0 {
                thread::sleep(EVERY);
            }
            c.send(p).unwrap();
            Instant::now()
        })
        .collect()
}

/// The arrival time at the server of the read that completed `marker`.
fn arrival(reads: &Reads, marker: &[u8]) -> Instant {
    let mut all = Vec::new();
    for (at, data) in reads {
        all.extend_from_slice(data);
        if all.windows(marker.len()).any(|w| w == marker) {
            return *at;
        }
    }
    panic!("{:?} never arrived", String::from_utf8_lossy(marker));
}

#[test]
fn chunked_request_body_reaches_the_server_chunk_by_chunk() {
    rampart_only!();
    let (addr, reads) = timing_backend(b"0\r\n\r\n");
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", addr)]);
    let mut c = client(&proxy);
    let pieces: Vec<Vec<u8>> = vec![
        b"POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n".to_vec(),
        b"6\r\nsecond\r\n".to_vec(),
        b"5\r\nthird\r\n".to_vec(),
        b"0\r\n\r\n".to_vec(),
    ];
    let sent = send_paced(&mut c, &pieces);
    assert_eq!(c.read_response().unwrap().status, 200);
    let reads = reads.recv_timeout(rampart_testkit::patience()).unwrap();
    let at: Vec<Instant> = ["first", "second", "third"].iter().map(|m| arrival(&reads, m.as_bytes())).collect();
    assert!(at[1] - at[0] >= MIN_GAP && at[2] - at[1] >= MIN_GAP, "pieces were held back and merged");
    // The first chunk reached the server before the client sent the last one.
    assert!(at[0] < sent[3], "the first chunk waited for the end of the body");
}

#[test]
fn long_content_length_request_body_streams() {
    rampart_only!();
    // Long enough for the splice path (rampart copies short remainders in user space).
    const PIECE: usize = 128 * 1024;
    let (addr, reads) = timing_backend(b"D");
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", addr)]);
    let mut c = client(&proxy);
    let mut head = format!("PUT /big HTTP/1.1\r\nHost: a\r\nContent-Length: {}\r\n\r\n", 4 * PIECE).into_bytes();
    head.extend_from_slice(&[b'A'; PIECE]);
    let pieces = vec![head, vec![b'B'; PIECE], vec![b'C'; PIECE], vec![b'D'; PIECE]];
    let sent = send_paced(&mut c, &pieces);
    let reads = reads.recv_timeout(rampart_testkit::patience()).unwrap();
    let at: Vec<Instant> = [b"A", b"B", b"C"].iter().map(|m| arrival(&reads, *m)).collect();
    assert!(at[1] - at[0] >= MIN_GAP && at[2] - at[1] >= MIN_GAP, "pieces were held back and merged");
    assert!(at[0] < sent[3]);
    assert_eq!(c.read_response().unwrap().status, 200);
}

#[test]
fn slow_client_upload_and_fast_response_do_not_block_each_other() {
    // A server answering before the request body is complete: the response streams to
    // the client while the body still comes in.
    let s1 = RawBackend::start(vec![
        Step::expect_head(),
        Step::send("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nearly"),
        Step::expect_until("end"),
    ]);
    let proxy = start(&listen_cfg("", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    c.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\nab").unwrap();
    // The response arrives although the request body is still incomplete.
    let resp = c.read_response().unwrap();
    assert_eq!(resp.body, b"early");
    assert_eq!(s1.received()[0], b"POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 6\r\n\r\nab");
}

#[test]
fn an_upload_slower_than_timeout_server_is_not_cut() {
    // The server answers once the whole body is in; sending it takes 3 x timeout server.
    // Bytes reaching the server are server activity: no 504.
    let s1 = HttpBackend::builder("s1").respond(|req| Reply::ok().body(req.body.clone())).start();
    let proxy = start(&listen_cfg("  timeout server 200ms\n", "", &["s1"]), &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    let mut pieces = vec![b"POST /slow HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\n".to_vec()];
    pieces.extend((0..6).map(|i| vec![b'0' + i]));
    for piece in &pieces {
        c.send(piece).unwrap();
        thread::sleep(EVERY);
    }
    let resp = c.read_response().unwrap();
    assert_eq!((resp.status, resp.body.as_slice()), (200, b"012345".as_slice()));
}
