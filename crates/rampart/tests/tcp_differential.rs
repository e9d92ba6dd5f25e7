//! TCP mode, rampart against haproxy: the same scenario runs through both with fresh
//! backends, and what the client and the servers saw must be the same (bytes, order,
//! how each connection ended). Skipped when haproxy is not installed.

mod netutil;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use netutil::{tcp_listen_s1, wait_end};
use rampart_testkit::{closed_port, Differential, RawBackend, Running, Step, TcpEchoBackend};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// What the client saw, one line per event, timing left out.
type Seen = Vec<String>;

fn diff() -> Differential {
    Differential::new(RAMPART).listener("fe1").config(&tcp_listen_s1(""))
}

fn connect(proxy: &Running) -> TcpStream {
    netutil::connect(proxy.addr("fe1"), Duration::from_secs(5)).expect("connect")
}

/// Reads until the end of the stream; the bytes and how it ended.
fn read_all(s: &mut TcpStream, seen: &mut Seen) {
    let mut got = Vec::new();
    let end = loop {
        let mut buf = [0u8; 16 * 1024];
        match s.read(&mut buf) {
            Ok(0) => break "eof".to_owned(),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => break "open".to_owned(),
            Err(e) => break format!("{:?}", e.kind()),
        }
    };
    seen.push(format!("got {:?}", String::from_utf8_lossy(&got)));
    seen.push(format!("end {end}"));
}

#[test]
fn echo_then_client_half_close() {
    let Some(cmp) = diff().backend("s1", TcpEchoBackend::start).run(|proxy| {
        let mut seen = Seen::new();
        let mut c = connect(proxy);
        c.write_all(b"hello ").unwrap();
        seen.push(format!("{:?}", netutil::read_exact_within(&mut c, 6, Duration::from_secs(5)).map_err(|e| e.kind())));
        c.write_all(b"world").unwrap();
        c.shutdown(Shutdown::Write).unwrap();
        read_all(&mut c, &mut seen);
        seen
    }) else {
        return;
    };
    cmp.assert_same();
}

#[test]
fn server_answers_after_the_client_half_closed() {
    let Some(cmp) = diff()
        .backend("s1", || RawBackend::start(vec![Step::ReadToEnd, Step::send("answer after your FIN")]))
        .run(|proxy| {
            let mut seen = Seen::new();
            let mut c = connect(proxy);
            c.write_all(b"question").unwrap();
            c.shutdown(Shutdown::Write).unwrap();
            read_all(&mut c, &mut seen);
            seen
        })
    else {
        return;
    };
    cmp.assert_same();
}

#[test]
fn client_sends_after_the_server_half_closed() {
    let Some(cmp) = diff()
        .backend("s1", || {
            RawBackend::start(vec![
                Step::send("banner"),
                Step::ShutdownWrite,
                Step::expect_until("late\n"),
                Step::ReadToEnd,
            ])
        })
        .run(|proxy| {
            let mut seen = Seen::new();
            let mut c = connect(proxy);
            read_all(&mut c, &mut seen);
            c.write_all(b"late\n").unwrap();
            c.shutdown(Shutdown::Write).unwrap();
            seen.push(format!("{:?}", wait_end(&mut c, Duration::from_secs(5)).0));
            // The proxy is killed when the scenario returns: give it time to forward.
            std::thread::sleep(Duration::from_millis(300));
            seen
        })
    else {
        return;
    };
    cmp.assert_same();
}

#[test]
fn server_speaks_first_and_closes() {
    let Some(cmp) =
        diff().backend("s1", || RawBackend::start(vec![Step::send("220 ready\r\n"), Step::Close])).run(|proxy| {
            let mut seen = Seen::new();
            let mut c = connect(proxy);
            read_all(&mut c, &mut seen);
            seen
        })
    else {
        return;
    };
    cmp.assert_same();
}

#[test]
fn refused_server_closes_the_client() {
    // The client only connects and waits: what it sees once the retries are over.
    let Some(cmp) = Differential::new(RAMPART)
        .listener("fe1")
        .backend("s1", TcpEchoBackend::start)
        .config(&format!(
            "{}listen fe1\n  bind fd@${{fe1}}\n  retries 1\n  timeout connect 100ms\n  server s1 127.0.0.1:{}\n",
            netutil::tcp_defaults(""),
            closed_port().port()
        ))
        .run(|proxy| {
            let mut seen = Seen::new();
            let mut c = connect(proxy);
            read_all(&mut c, &mut seen);
            seen
        })
    else {
        return;
    };
    cmp.assert_same();
}

#[test]
fn refused_server_with_client_data_pending() {
    // The client sent bytes the proxy could not deliver: does it see a FIN or a reset?
    let Some(cmp) = Differential::new(RAMPART)
        .listener("fe1")
        .backend("s1", TcpEchoBackend::start)
        .config(&format!(
            "{}listen fe1\n  bind fd@${{fe1}}\n  retries 1\n  timeout connect 100ms\n  server s1 127.0.0.1:{}\n",
            netutil::tcp_defaults(""),
            closed_port().port()
        ))
        .run(|proxy| {
            let mut seen = Seen::new();
            let mut c = connect(proxy);
            c.write_all(b"undeliverable").unwrap();
            read_all(&mut c, &mut seen);
            seen
        })
    else {
        return;
    };
    cmp.assert_same();
}

#[test]
fn megabytes_both_ways() {
    let Some(cmp) = diff().backend("s1", TcpEchoBackend::start).run(|proxy| {
        let payload: Vec<u8> = (0..2 * 1024 * 1024u32).map(|i| (i % 253) as u8).collect();
        let c = connect(proxy);
        let mut writer = c.try_clone().unwrap();
        let sent = payload.clone();
        let sender = std::thread::spawn(move || {
            writer.write_all(&sent).unwrap();
            writer.shutdown(Shutdown::Write).unwrap();
        });
        let mut c = c;
        let mut back = Vec::new();
        let end = c.read_to_end(&mut back).map_err(|e| e.kind());
        sender.join().unwrap();
        vec![format!("{end:?}"), format!("same bytes: {}", back == payload)]
    }) else {
        return;
    };
    cmp.assert_same();
    assert_eq!(cmp.rampart.client, ["Ok(2097152)", "same bytes: true"]);
}
