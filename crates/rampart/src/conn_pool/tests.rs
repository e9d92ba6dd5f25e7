//! The pool with real sockets: a connection parked by one thread is taken over by
//! another and works on the taker's event loop after the first thread is gone.
//! Each test uses its own server keys, as the pools are shared by the whole process.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use super::*;
use crate::backend::PlainSock;
use crate::io::{read_some, write_all};

/// A server that echoes what each connection sends; `close_after_accept` closes
/// connections instead.
fn echo_server(close_after_accept: bool) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            if close_after_accept {
                continue;
            }
            std::thread::spawn(move || {
                let mut buf = [0u8; 64];
                while let Ok(n @ 1..) = s.read(&mut buf) {
                    let _ = s.write_all(&buf[..n]);
                }
            });
        }
    });
    addr
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

fn want(server: usize, key: &ConnKey, takeover: Option<u32>) -> Wanted<'_> {
    Wanted { server, key, min_uses: 0, takeover }
}

/// Starts a thread with its own event loop that connects to `addr` `n` times and
/// parks the connections under `server` and `key`; it sends their local ports, keeps
/// its loop running until told to end, and then ends (its loop and pool go).
fn parking_thread(
    addr: SocketAddr,
    server: usize,
    key: ConnKey,
    n: usize,
) -> (std::sync::mpsc::Receiver<Vec<u16>>, tokio::sync::oneshot::Sender<()>, std::thread::JoinHandle<()>) {
    let (ports_tx, ports_rx) = std::sync::mpsc::channel();
    let (end_tx, end_rx) = tokio::sync::oneshot::channel::<()>();
    let t = std::thread::spawn(move || {
        runtime().block_on(async move {
            let mut ports = Vec::new();
            for _ in 0..n {
                let s = tokio::net::TcpStream::connect(addr).await.unwrap();
                ports.push(s.local_addr().unwrap().port());
                put(server, BackSock::Plain(PlainSock::Tcp(s)), key.clone(), 1, None, Duration::from_secs(5));
            }
            ports_tx.send(ports).unwrap();
            let _ = end_rx.await;
        });
    });
    (ports_rx, end_tx, t)
}

#[test]
fn a_connection_parked_by_another_thread_is_taken_over_and_works_here() {
    let addr = echo_server(false);
    let key = ConnKey { dst: Some(addr), ..ConnKey::default() };
    let (ports, end, other) = parking_thread(addr, 901, key.clone(), 1);
    let parked = ports.recv().unwrap();
    let rt = runtime();
    let idle = rt.block_on(async {
        // a different key, or no takeover allowed: nothing
        assert!(take(want(901, &ConnKey::default(), Some(0))).is_none());
        assert!(take(want(901, &key, None)).is_none());
        take(want(901, &key, Some(0))).expect("taken over")
    });
    assert_eq!(idle.conn.local_addr().unwrap().port(), parked[0]);
    assert_eq!(idle.uses, 1);
    // the other thread, its event loop and its pool go away: the connection lives on
    end.send(()).unwrap();
    other.join().unwrap();
    rt.block_on(async {
        let t = Some(Duration::from_secs(5));
        write_all(&idle.conn, b"ping", t).await.unwrap();
        let mut got = Vec::new();
        while got.len() < 4 {
            read_some(&idle.conn, &mut got, t).await.unwrap();
        }
        assert_eq!(got, b"ping");
        // parked here, it is this thread's again
        put(901, idle.conn, idle.key, 2, None, Duration::from_secs(5));
        let again = take(want(901, &key, None)).expect("parked in this thread's pool");
        assert_eq!(again.uses, 2);
    });
}

#[test]
fn the_own_pool_comes_first() {
    let addr = echo_server(false);
    let key = ConnKey::default();
    let (ports, end, other) = parking_thread(addr, 902, key.clone(), 1);
    let theirs = ports.recv().unwrap();
    runtime().block_on(async {
        let s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let mine = s.local_addr().unwrap().port();
        put(902, BackSock::Plain(PlainSock::Tcp(s)), key.clone(), 1, None, Duration::from_secs(5));
        let first = take(want(902, &key, Some(0))).unwrap();
        assert_eq!(first.conn.local_addr().unwrap().port(), mine);
        let second = take(want(902, &key, Some(0))).unwrap();
        assert_eq!(second.conn.local_addr().unwrap().port(), theirs[0]);
        assert!(take(want(902, &key, Some(0))).is_none());
    });
    end.send(()).unwrap();
    other.join().unwrap();
}

#[test]
fn a_connection_closed_while_idle_in_another_thread_is_not_taken() {
    let addr = echo_server(true);
    let key = ConnKey::default();
    let (ports, end, other) = parking_thread(addr, 903, key.clone(), 2);
    ports.recv().unwrap();
    // the server closed both; the owner's event loop sees their FIN
    std::thread::sleep(Duration::from_millis(200));
    runtime().block_on(async {
        assert!(take(want(903, &key, Some(0))).is_none());
    });
    end.send(()).unwrap();
    other.join().unwrap();
}

#[test]
fn nothing_is_taken_over_outside_a_runtime() {
    let addr = echo_server(false);
    let key = ConnKey::default();
    let (ports, end, other) = parking_thread(addr, 904, key.clone(), 1);
    ports.recv().unwrap();
    assert!(take(want(904, &key, Some(0))).is_none());
    assert!(runtime().block_on(async { take(want(904, &key, Some(0))) }).is_some());
    end.send(()).unwrap();
    other.join().unwrap();
}
