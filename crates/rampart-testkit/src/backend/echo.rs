//! [`TcpEchoBackend`]: sends back every byte it receives and honours half-close, for TCP
//! mode (`mode tcp`) tests.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use super::raw::RawConn;
use super::server::{ConnInfo, Server};
use crate::sync::Recorder;

/// A TCP echo server on `127.0.0.1:0`, stopped on drop.
///
/// Each connection echoes what it reads as it reads it. When the peer half-closes (FIN),
/// the backend has already sent everything back, so it sends its own FIN and the
/// connection ends cleanly: a client that shuts down its write side still reads the
/// whole echo, then end-of-stream. What each connection received is recorded.
pub struct TcpEchoBackend {
    server: Server,
    log: Arc<Recorder<RawConn>>,
}

impl TcpEchoBackend {
    /// Starts echoing.
    pub fn start() -> TcpEchoBackend {
        let log: Arc<Recorder<RawConn>> = Arc::new(Recorder::default());
        let conn_log = Arc::clone(&log);
        let server = Server::start(
            "echo",
            Arc::new(move |stream, info: ConnInfo| {
                let index = conn_log.push(RawConn {
                    conn: info.id,
                    peer: info.peer,
                    received: Vec::new(),
                    finished: false,
                    error: None,
                });
                let error = echo(&stream, &conn_log, index).err();
                conn_log.update(index, |c| {
                    c.finished = true;
                    c.error = error;
                });
            }),
        );
        TcpEchoBackend { server, log }
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// Every connection so far.
    pub fn connections(&self) -> Vec<RawConn> {
        self.log.snapshot()
    }

    /// Waits (up to [`patience`](crate::patience)) until `n` connections are finished;
    /// returns every connection then.
    pub fn wait_finished(&self, n: usize) -> Vec<RawConn> {
        self.log.wait_until(crate::patience(), |conns| conns.iter().filter(|c| c.finished).count() >= n)
    }

    /// Waits until every accepted connection is finished; false on timeout.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        self.server.wait_idle(timeout)
    }
}

/// Echoes until end of stream, then half-closes our side.
fn echo(stream: &TcpStream, log: &Recorder<RawConn>, index: usize) -> Result<(), String> {
    let mut buf = [0u8; 16 * 1024];
    let (mut input, mut output) = (stream, stream);
    loop {
        match input.read(&mut buf) {
            Ok(0) => return stream.shutdown(Shutdown::Write).map_err(|e| e.to_string()),
            Ok(n) => {
                log.update(index, |c| c.received.extend_from_slice(&buf[..n]));
                output.write_all(&buf[..n]).map_err(|e| e.to_string())?;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
}
