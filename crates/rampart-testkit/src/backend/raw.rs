//! [`RawBackend`]: a scripted server for exact-bytes tests (hyper's raw test servers are
//! the model): each connection runs the same list of [`Step`]s and everything it receives
//! is recorded byte for byte in a [`RawConn`].

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use super::server::{ConnInfo, Server};
use crate::http::ShowBytes;
use crate::sync::Recorder;

/// How long the end of a script waits for the peer to close after our FIN.
const END_LINGER: Duration = Duration::from_secs(2);

/// What one connection of a [`RawBackend`] or [`TcpEchoBackend`](crate::TcpEchoBackend)
/// received.
#[derive(Clone, PartialEq, Eq)]
pub struct RawConn {
    /// Accept order within the backend, from 1.
    pub conn: u64,
    /// The peer's address (the proxy's source port).
    pub peer: SocketAddr,
    /// Every byte received, in order, exactly as received.
    pub received: Vec<u8>,
    /// The connection is over (script done, or peer gone).
    pub finished: bool,
    /// Why the script stopped early, if it did (e.g. the peer closed during an expect).
    pub error: Option<String>,
}

impl RawConn {
    fn new(info: ConnInfo) -> RawConn {
        RawConn { conn: info.id, peer: info.peer, received: Vec::new(), finished: false, error: None }
    }

    /// What was received, as text (lossy).
    pub fn received_str(&self) -> String {
        String::from_utf8_lossy(&self.received).into_owned()
    }
}

impl std::fmt::Debug for RawConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawConn")
            .field("conn", &self.conn)
            .field("peer", &self.peer)
            .field("received", &ShowBytes(&self.received))
            .field("finished", &self.finished)
            .field("error", &self.error)
            .finish()
    }
}

/// One action of a [`RawBackend`] script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Read until the bytes received since the previous expect contain this delimiter.
    ExpectUntil(Vec<u8>),
    /// Read exactly this many more bytes.
    ExpectBytes(usize),
    /// Write these bytes.
    Send(Vec<u8>),
    /// Pause.
    Sleep(Duration),
    /// Half-close: send FIN, keep reading.
    ShutdownWrite,
    /// Drop the connection now (the kernel sends a reset if input is unread) and end the script.
    Close,
    /// Read and record until the peer closes.
    ReadToEnd,
}

impl Step {
    /// [`Step::ExpectUntil`] `delim`.
    pub fn expect_until(delim: impl AsRef<[u8]>) -> Step {
        Step::ExpectUntil(delim.as_ref().to_vec())
    }

    /// Expect a full HTTP head: [`Step::ExpectUntil`] `"\r\n\r\n"`.
    pub fn expect_head() -> Step {
        Step::expect_until(b"\r\n\r\n")
    }

    /// [`Step::Send`] `bytes`.
    pub fn send(bytes: impl AsRef<[u8]>) -> Step {
        Step::Send(bytes.as_ref().to_vec())
    }

    /// [`Step::Sleep`] for `ms` milliseconds.
    pub fn sleep_ms(ms: u64) -> Step {
        Step::Sleep(Duration::from_millis(ms))
    }
}

/// A scripted TCP server on `127.0.0.1:0`, stopped on drop.
///
/// Every connection runs the whole script. When the script ends without
/// [`Step::Close`], the backend half-closes and records what still arrives until the
/// peer closes (up to 2 s). A step that cannot complete (peer closed, or nothing for
/// [`patience`](crate::patience)) ends the script and is described in [`RawConn::error`].
///
/// ```no_run
/// use rampart_testkit::{RawBackend, Step};
/// let be = RawBackend::start(vec![
///     Step::expect_head(),
///     Step::send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
/// ]);
/// // ... send a request through the proxy to be.addr() ...
/// let conns = be.wait_finished(1);
/// assert!(conns[0].received.starts_with(b"GET / HTTP/1.1\r\n"));
/// ```
pub struct RawBackend {
    server: Server,
    log: Arc<Recorder<RawConn>>,
}

impl RawBackend {
    /// Starts serving `script` on every connection.
    pub fn start(script: Vec<Step>) -> RawBackend {
        let log: Arc<Recorder<RawConn>> = Arc::new(Recorder::default());
        let conn_log = Arc::clone(&log);
        let script = Arc::new(script);
        let server = Server::start(
            "raw",
            Arc::new(move |stream, info| {
                let index = conn_log.push(RawConn::new(info));
                run_script(&stream, &script, &conn_log, index);
                conn_log.update(index, |c| c.finished = true);
            }),
        );
        RawBackend { server, log }
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// Every connection so far, finished or not.
    pub fn connections(&self) -> Vec<RawConn> {
        self.log.snapshot()
    }

    /// What each connection received so far, in accept order.
    pub fn received(&self) -> Vec<Vec<u8>> {
        self.log.snapshot().into_iter().map(|c| c.received).collect()
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

/// Runs `script` on one connection, recording input into `log[index]`.
fn run_script(stream: &TcpStream, script: &[Step], log: &Recorder<RawConn>, index: usize) {
    let _ = stream.set_read_timeout(Some(crate::patience()));
    let mut conn = ScriptConn { stream, pending: Vec::new(), log, index };
    for (i, step) in script.iter().enumerate() {
        match conn.run(step) {
            Ok(true) => {}
            Ok(false) => return,
            Err(why) => {
                let error = format!("step {i} ({step:?}): {why}");
                log.update(index, |c| c.error = Some(error));
                return;
            }
        }
    }
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(END_LINGER));
    let _ = conn.read_to_end();
}

/// One connection running a script: the socket plus input not yet matched by an expect.
struct ScriptConn<'a> {
    stream: &'a TcpStream,
    pending: Vec<u8>,
    log: &'a Recorder<RawConn>,
    index: usize,
}

impl ScriptConn<'_> {
    /// Runs one step; `Ok(false)` ends the script.
    fn run(&mut self, step: &Step) -> Result<bool, String> {
        match step {
            Step::ExpectUntil(delim) => self.expect_until(delim)?,
            Step::ExpectBytes(n) => self.expect_bytes(*n)?,
            Step::Send(bytes) => self.write(bytes)?,
            Step::Sleep(d) => thread::sleep(*d),
            Step::ShutdownWrite => self.stream.shutdown(Shutdown::Write).map_err(|e| e.to_string())?,
            Step::Close => return Ok(false),
            Step::ReadToEnd => self.read_to_end()?,
        }
        Ok(true)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        let mut out = self.stream;
        out.write_all(bytes).map_err(|e| e.to_string())
    }

    /// One read; records and buffers what came. `Ok(false)` at end of stream.
    fn read_more(&mut self) -> Result<bool, String> {
        let mut buf = [0u8; 16 * 1024];
        let mut input = self.stream;
        loop {
            match input.read(&mut buf) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.pending.extend_from_slice(&buf[..n]);
                    self.log.update(self.index, |c| c.received.extend_from_slice(&buf[..n]));
                    return Ok(true);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Err("timed out waiting for input".to_string())
                }
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    fn expect_until(&mut self, delim: &[u8]) -> Result<(), String> {
        loop {
            if let Some(pos) = self.pending.windows(delim.len().max(1)).position(|w| w == delim) {
                self.pending.drain(..pos + delim.len());
                return Ok(());
            }
            if !self.read_more()? {
                return Err("peer closed before the delimiter".to_string());
            }
        }
    }

    fn expect_bytes(&mut self, n: usize) -> Result<(), String> {
        while self.pending.len() < n {
            if !self.read_more()? {
                return Err(format!("peer closed after {} of {n} bytes", self.pending.len()));
            }
        }
        self.pending.drain(..n);
        Ok(())
    }

    fn read_to_end(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + crate::patience();
        while self.read_more()? {
            self.pending.clear();
            if Instant::now() > deadline {
                return Err("peer kept sending past the patience".to_string());
            }
        }
        Ok(())
    }
}
