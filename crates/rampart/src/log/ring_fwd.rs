//! Ring forwarders: one per `server` line of a `ring` section, sending the ring's
//! lines in order over TCP to a syslog server, framed as `log-proto` says (a line feed
//! after each line by default, `<length> <line>` with `octet-count`).
//!
//! Each forwarder is a task on the first worker thread's event loop: it only does
//! non-blocking socket I/O and copies bounded batches out of the ring under its lock,
//! so it never stalls that loop, and it costs no thread. It connects (within `timeout
//! connect`), starts at the oldest line still in the ring on its first connection and
//! then keeps its place across reconnections, as HAProxy's forwarder does (lines it
//! had handed to a connection that broke are lost, as there). A write that waits
//! longer than `timeout server`, a close or an error from the server ends the
//! connection; the forwarder reconnects after [`RETRY`]. Whatever the server sends is
//! read and ignored. At soft-stop the connection is closed. With `ssl`, a TLS
//! handshake (`tls::stream::connect`, within `timeout connect`, with the server's
//! configuration from `tls::client::ring_server`) follows the connection and its
//! PROXY header, and the lines go as TLS records.
//!
//! HAProxy counterpart: `process_sink_forward()`, `sink_forward_io_handler()`,
//! `sink_forward_oc_io_handler()` (src/sink.c).

use std::sync::Arc;
use std::time::Duration;

use std::io;

use rustls_pki_types::ServerName;
use tokio::net::TcpStream;

use super::ring::Ring;
use crate::io::Sock;

/// The pause before a new connection after a failure or a close.
/// COMPAT: HAProxy starts a new session right away; the pause keeps a server that
/// refuses or closes at once from making the forwarder spin.
pub const RETRY: Duration = Duration::from_secs(1);

/// How often an idle forwarder looks at the stopping flag.
const STOP_POLL: Duration = Duration::from_millis(500);

/// The bytes copied out of the ring per write (HAProxy sends a buffer at a time).
const BATCH: usize = 16384;

/// Starts every ring's forwarders on the current worker's event loop; `stopping`
/// says when the process soft-stops.
pub fn spawn_all(stopping: Arc<dyn Fn() -> bool + Send + Sync>) {
    for ring in super::ring::rings().iter() {
        for i in 0..ring.servers.len() {
            tokio::spawn(run(ring.clone(), i, stopping.clone()));
        }
    }
}

/// Forwarder `i` of `ring`: connect, send, reconnect, until the process stops.
pub async fn run(ring: Arc<Ring>, i: usize, stopping: Arc<dyn Fn() -> bool + Send + Sync>) {
    let mut buf = Vec::with_capacity(BATCH + 64);
    while !stopping() {
        if let Some(conn) = connect(&ring, i).await {
            let proxy = proxy_header(ring.servers[i].send_proxy);
            // the PROXY header goes first, in clear, then the TLS handshake (as HAProxy)
            if write(&ring, &conn, proxy).await.is_ok() {
                match &ring.servers[i].tls {
                    Some(tls) => {
                        let name = ServerName::IpAddress(ring.servers[i].addr.ip().into());
                        let hs = crate::tls::stream::connect(conn, tls.clone(), name, ring.timeout_connect);
                        if let Ok(conn) = hs.await {
                            send(&ring, i, conn, &mut buf, &*stopping).await;
                        }
                    }
                    None => send(&ring, i, conn, &mut buf, &*stopping).await,
                }
            }
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// A connection to server `i`, within `timeout connect`.
async fn connect(ring: &Ring, i: usize) -> Option<TcpStream> {
    let addr = ring.servers[i].addr;
    let conn = match ring.timeout_connect {
        Some(t) => tokio::time::timeout(t, TcpStream::connect(addr)).await.ok()?,
        None => TcpStream::connect(addr).await,
    };
    let conn = conn.ok()?;
    let _ = conn.set_nodelay(true);
    Some(conn)
}

/// The PROXY header of `send-proxy` (`version` 1) or `send-proxy-v2` (2) on a
/// forwarder's connection: it carries no client, so v1 says `UNKNOWN` and v2 is a
/// `LOCAL` command without addresses, as HAProxy sends them.
pub fn proxy_header(version: u8) -> &'static [u8] {
    match version {
        1 => b"PROXY UNKNOWN\r\n",
        2 => b"\r\n\r\n\0\r\nQUIT\n\x20\x00\x00\x00",
        _ => b"",
    }
}

/// Writes all of `bytes` (and the TLS records they became) within `timeout server`.
async fn write(ring: &Ring, conn: &impl Sock, bytes: &[u8]) -> io::Result<()> {
    let all = async {
        let mut rest = bytes;
        while !rest.is_empty() {
            match conn.try_write(rest) {
                Ok(n) => rest = &rest[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => conn.writable().await?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        loop {
            match conn.try_flush() {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => conn.writable().await?,
                Err(e) => return Err(e),
            }
        }
    };
    match ring.timeout_server {
        Some(t) => tokio::time::timeout(t, all).await.unwrap_or(Err(io::ErrorKind::TimedOut.into())),
        None => all.await,
    }
}

/// Reads and drops what the server sent: `false` once it closed or failed.
fn drain(conn: &impl Sock, scratch: &mut Vec<u8>) -> bool {
    loop {
        scratch.clear();
        match conn.try_read_buf(scratch) {
            Ok(0) => return false,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// Sends lines on `conn` until it fails, the server closes it, or the process stops.
async fn send(ring: &Ring, i: usize, conn: impl Sock, buf: &mut Vec<u8>, stopping: &(dyn Fn() -> bool + Sync)) {
    let proto = ring.servers[i].proto;
    let mut scratch = Vec::with_capacity(512);
    loop {
        if stopping() {
            conn.close_notify();
            return;
        }
        buf.clear();
        if ring.read(i, buf, BATCH, proto) == 0 {
            tokio::select! {
                () = ring.wait(i) => {
                    // let the streams of this loop turn write their lines first: one
                    // write then carries them all instead of one write per line
                    tokio::task::yield_now().await;
                }
                r = conn.readable() => {
                    if r.is_err() || !drain(&conn, &mut scratch) {
                        return;
                    }
                }
                () = tokio::time::sleep(STOP_POLL) => {}
            }
            continue;
        }
        if write(ring, &conn, buf).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use rampart_cfg::model::LogProto;

    use super::*;

    fn ring(addr: std::net::SocketAddr, proto: LogProto) -> Arc<Ring> {
        ring_proxied(addr, proto, 0)
    }

    fn ring_proxied(addr: std::net::SocketAddr, proto: LogProto, send_proxy: u8) -> Arc<Ring> {
        let cfg = rampart_cfg::model::Ring {
            name: "r".into(),
            description: "r".into(),
            format: "raw".into(),
            maxlen: 1000,
            size: 10_000,
            timeout_connect: Some(Duration::from_secs(1)),
            timeout_server: Some(Duration::from_secs(1)),
            servers: vec![rampart_cfg::model::RingServer {
                name: "s".into(),
                addr,
                log_proto: proto,
                send_proxy,
                tls: Default::default(),
                span: Default::default(),
            }],
            span: Default::default(),
        };
        Arc::new(Ring::from_cfg(&cfg))
    }

    fn read_exact(c: &mut std::net::TcpStream, n: usize) -> Vec<u8> {
        let mut got = vec![0u8; n];
        c.read_exact(&mut got).unwrap();
        got
    }

    #[test]
    fn lines_in_the_ring_before_the_connection_are_sent_then_new_ones_and_again_after_a_reconnection() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let r = ring(l.local_addr().unwrap(), LogProto::OctetCount);
        r.write_raw(b"before");
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let fwd_ring = r.clone();
        let flag = stop.clone();
        let th = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let stopping: Arc<dyn Fn() -> bool + Send + Sync> =
                Arc::new(move || flag.load(std::sync::atomic::Ordering::Relaxed));
            rt.block_on(run(fwd_ring, 0, stopping));
        });
        let (mut c, _) = l.accept().unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert_eq!(read_exact(&mut c, 8), b"6 before");
        r.write_raw(b"after one");
        assert_eq!(read_exact(&mut c, 11), b"9 after one");
        drop(c);
        // the forwarder sees the close and comes back; lines written meanwhile wait
        std::thread::sleep(Duration::from_millis(300));
        r.write_raw(b"while away");
        let (mut c, _) = l.accept().unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert_eq!(read_exact(&mut c, 13), b"10 while away");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        th.join().unwrap();
    }

    #[test]
    fn legacy_framing_ends_each_line_with_a_line_feed_and_a_proxy_header_comes_first() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let r = ring_proxied(l.local_addr().unwrap(), LogProto::Legacy, 1);
        r.write_raw(b"a b c");
        r.write_raw(b"d");
        let fwd_ring = r.clone();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let th = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let stopping: Arc<dyn Fn() -> bool + Send + Sync> =
                Arc::new(move || flag.load(std::sync::atomic::Ordering::Relaxed));
            rt.block_on(run(fwd_ring, 0, stopping));
        });
        let (mut c, _) = l.accept().unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert_eq!(read_exact(&mut c, 23), b"PROXY UNKNOWN\r\na b c\nd\n");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        th.join().unwrap();
    }

    #[test]
    fn proxy_headers_are_haproxys_for_a_connection_without_client() {
        // as captured from haproxy 2.6 with `server ... send-proxy-v2` in a ring
        assert_eq!(
            proxy_header(2),
            [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x20, 0x00, 0x00, 0x00]
        );
        assert_eq!(proxy_header(0), b"");
    }
}
