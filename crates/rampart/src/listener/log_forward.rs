//! The receivers of a `log-forward` section, as tokio tasks on a worker thread: a UDP
//! socket reads one message per datagram; a TCP listener accepts up to `maxconn`
//! connections and each reads a stream of octet-counted or LF-terminated messages,
//! closing on a framing error or after `timeout client` without data; on a `bind ...
//! ssl` line, after a TLS handshake (within `timeout client`). Receivers pause
//! with the listeners (SIGTTOU) and close on stop.
//! HAProxy counterpart: `syslog_fd_handler()`, `syslog_io_handler()` (src/log.c).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rampart_proto::syslog::{next_frame, Frame};
use tokio::sync::watch;

use super::accept::ListenState;
use super::{ForwardKind, ForwardSocket};
use crate::io::{read_some, Sock};
use crate::log::forward::Forwarder;
use crate::proxy::Runtime;
use crate::tls::bind::BindTls;

/// Starts receiver `sock` on the current thread's event loop.
pub fn spawn(sock: ForwardSocket, rt: Arc<Runtime>, state: watch::Receiver<ListenState>) {
    let section = sock.section;
    match sock.kind {
        ForwardKind::Udp(s) => {
            if let Ok(s) = tokio::net::UdpSocket::from_std(s) {
                tokio::spawn(async move { run_udp(s, &rt.log_forwards[section], state).await });
            }
        }
        ForwardKind::Tcp(l, line) => {
            if let Ok(l) = tokio::net::TcpListener::from_std(l) {
                let tls = rt.log_forwards[section].tls.get(line).cloned().flatten();
                tokio::spawn(async move { run_tcp(l, rt, section, tls, state).await });
            }
        }
    }
}

/// Waits while the listeners are paused; `false` once they stop.
async fn running(state: &mut watch::Receiver<ListenState>) -> bool {
    loop {
        match *state.borrow_and_update() {
            ListenState::Running => return true,
            ListenState::Stopped => return false,
            ListenState::Paused => {}
        }
        if state.changed().await.is_err() {
            return false;
        }
    }
}

/// One message per datagram; a datagram longer than the buffer is cut to it.
async fn run_udp(sock: tokio::net::UdpSocket, fwd: &Forwarder, mut state: watch::Receiver<ListenState>) {
    let mut buf = vec![0u8; fwd.bufsize];
    while running(&mut state).await {
        tokio::select! {
            r = sock.recv(&mut buf) => {
                if let Ok(n) = r {
                    fwd.relay(&buf[..n]);
                }
            }
            _ = state.changed() => {}
        }
    }
}

/// Accepts connections while fewer than `maxconn` are open.
async fn run_tcp(
    listener: tokio::net::TcpListener,
    rt: Arc<Runtime>,
    section: usize,
    tls: Option<Arc<BindTls>>,
    mut state: watch::Receiver<ListenState>,
) {
    let fwd = &rt.log_forwards[section];
    while running(&mut state).await {
        if fwd.conns.load(Ordering::Relaxed) >= fwd.maxconn {
            let released = fwd.conn_released.notified();
            tokio::select! {
                _ = released => {}
                _ = state.changed() => {}
                // (a release racing with the check above)
                _ = tokio::time::sleep(std::time::Duration::from_millis(100)) => {}
            }
            continue;
        }
        tokio::select! {
            r = listener.accept() => {
                let Ok((stream, _)) = r else {
                    // (out of descriptors: let connections end before trying again)
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                };
                fwd.conns.fetch_add(1, Ordering::Relaxed);
                let rt = rt.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    let fwd = &rt.log_forwards[section];
                    match tls {
                        Some(tls) => {
                            let choose = |hello: &rustls::server::ClientHello<'_>| Ok(tls.choose(hello)?.0);
                            // the handshake has `timeout client` to complete, as in HAProxy
                            if let Ok(t) = crate::tls::stream::accept(stream, fwd.timeout_client, choose).await {
                                serve(t, fwd).await;
                            }
                        }
                        None => serve(stream, fwd).await,
                    }
                    fwd.conns.fetch_sub(1, Ordering::Relaxed);
                    fwd.conn_released.notify_waiters();
                });
            }
            _ = state.changed() => {}
        }
    }
}

/// Reads and relays the messages of one connection until it closes, sends something
/// that is not a syslog stream, or stays idle for `timeout client`.
async fn serve<S: Sock>(stream: S, fwd: &Forwarder) {
    let mut buf: Vec<u8> = Vec::with_capacity(fwd.bufsize.min(16 * 1024));
    loop {
        let mut used = 0;
        loop {
            match next_frame(&buf[used..], fwd.bufsize) {
                Frame::Message { start, end, consumed } => {
                    fwd.relay(&buf[used + start..used + end]);
                    used += consumed;
                }
                Frame::Incomplete => break,
                Frame::Invalid => return,
            }
        }
        buf.drain(..used);
        if matches!(read_some(&stream, &mut buf, fwd.timeout_client).await, Ok(0) | Err(_)) {
            return;
        }
    }
}
