//! Client side: [`RawClient`] writes exact bytes and parses what comes back
//! ([`Response`], with 1xx interim responses, framing and per-piece arrival times);
//! [`http_get`] is the one-line version; [`stats_command`] talks to a stats socket.

use std::io::{self, ErrorKind, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::http::{parse_response_head, response_framing, Interim, MsgReader, Response, TimedPiece, TimedResponse};

/// A blocking client connection that sends whatever bytes the test gives it.
///
/// Reads time out after [`patience`](crate::patience) (change it with
/// [`RawClient::set_read_timeout`]), so a proxy that never answers fails the test
/// instead of hanging it. Bytes received past one response stay buffered for the next.
///
/// ```no_run
/// # fn demo(addr: std::net::SocketAddr) -> std::io::Result<()> {
/// use rampart_testkit::RawClient;
/// let mut c = RawClient::connect(addr)?;
/// c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")?;
/// let resp = c.read_response()?;
/// assert_eq!(resp.status, 200);
/// # Ok(()) }
/// ```
pub struct RawClient {
    reader: MsgReader<TcpStream>,
}

impl RawClient {
    /// Connects to `addr` (giving up after the patience), with `TCP_NODELAY` set.
    pub fn connect(addr: SocketAddr) -> io::Result<RawClient> {
        let stream = TcpStream::connect_timeout(&addr, crate::patience())?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(crate::patience()))?;
        Ok(RawClient { reader: MsgReader::new(stream) })
    }

    /// The underlying socket, for anything this type does not cover.
    pub fn stream(&self) -> &TcpStream {
        self.reader.get_ref()
    }

    /// Our local address (what the proxy sees as the client's source).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.stream().local_addr()
    }

    /// Changes how long a read waits before failing with `WouldBlock`/`TimedOut`.
    pub fn set_read_timeout(&self, timeout: Duration) -> io::Result<()> {
        self.stream().set_read_timeout(Some(timeout.max(Duration::from_millis(1))))
    }

    /// Writes all of `bytes`.
    pub fn send(&mut self, bytes: impl AsRef<[u8]>) -> io::Result<()> {
        let mut out = self.stream();
        out.write_all(bytes.as_ref())
    }

    /// Sends a minimal `GET path HTTP/1.1` (with a `Host` header, keep-alive) and reads
    /// the response.
    pub fn get(&mut self, path: &str) -> io::Result<Response> {
        self.send(format!("GET {path} HTTP/1.1\r\nHost: rampart.test\r\n\r\n"))?;
        self.read_response()
    }

    /// Reads the next final response, collecting 1xx responses before it into
    /// [`Response::interim`]. The body is read as for a `GET`.
    pub fn read_response(&mut self) -> io::Result<Response> {
        self.read_response_for("GET")
    }

    /// Like [`RawClient::read_response`] for a request with `method`: `HEAD` responses
    /// have no body whatever their headers say, nor do 2xx answers to `CONNECT`.
    pub fn read_response_for(&mut self, method: &str) -> io::Result<Response> {
        Ok(self.read_response_with(method, &mut |_| {})?.0)
    }

    /// Reads the next response to a `GET`, noting when the head and each body piece
    /// arrived (one piece per chunk with chunked framing, per socket read otherwise).
    pub fn read_response_timed(&mut self) -> io::Result<TimedResponse> {
        let mut pieces = Vec::new();
        let (response, head_at) = self.read_response_with("GET", &mut |data| {
            pieces.push(TimedPiece { at: Instant::now(), data: data.to_vec() });
        })?;
        Ok(TimedResponse { response, head_at, pieces })
    }

    fn read_response_with(&mut self, method: &str, on_piece: &mut dyn FnMut(&[u8])) -> io::Result<(Response, Instant)> {
        self.reader.take_raw();
        let mut interim = Vec::new();
        loop {
            let head = self
                .reader
                .read_head()?
                .ok_or_else(|| io::Error::new(ErrorKind::UnexpectedEof, "connection closed before a response"))?;
            let parsed = parse_response_head(&head)?;
            if (100..200).contains(&parsed.status) && parsed.status != 101 {
                let raw = self.reader.take_raw();
                interim.push(Interim { status: parsed.status, reason: parsed.reason, headers: parsed.headers, raw });
                continue;
            }
            let head_at = Instant::now();
            let framing = response_framing(method, parsed.status, &parsed.headers)?;
            let body = self.reader.read_body(framing, on_piece)?;
            let response = Response {
                version: parsed.version,
                status: parsed.status,
                reason: parsed.reason,
                headers: parsed.headers,
                body: body.data,
                framing,
                chunks: body.chunks,
                trailers: body.trailers,
                interim,
                raw: self.reader.take_raw(),
            };
            return Ok((response, head_at));
        }
    }

    /// Reads through the first occurrence of `delim` (included).
    pub fn read_until(&mut self, delim: impl AsRef<[u8]>) -> io::Result<Vec<u8>> {
        let out = self.reader.read_until(delim.as_ref());
        self.reader.take_raw();
        out
    }

    /// Reads everything until the peer closes (buffered bytes included). On error (e.g.
    /// a timeout) nothing is lost: what arrived stays in [`RawClient::buffered`].
    pub fn read_to_end(&mut self) -> io::Result<Vec<u8>> {
        while self.reader.fill()? > 0 {}
        Ok(self.reader.take_buffered())
    }

    /// Half-closes: sends FIN, the read side stays open.
    pub fn shutdown_write(&self) -> io::Result<()> {
        self.stream().shutdown(Shutdown::Write)
    }

    /// Whether the peer closes the connection (end of stream or reset) within `timeout`.
    /// Bytes arriving meanwhile are kept for later reads.
    pub fn is_closed_within(&mut self, timeout: Duration) -> bool {
        let previous = self.stream().read_timeout().ok().flatten();
        let deadline = Instant::now() + timeout;
        let closed = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.set_read_timeout(left).is_err() {
                break false;
            }
            match self.reader.fill() {
                Ok(0) => break true,
                Ok(_) => continue,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => break false,
                Err(_) => break true,
            }
        };
        let _ = self.stream().set_read_timeout(previous);
        closed
    }

    /// Received bytes not consumed by a read yet.
    pub fn buffered(&self) -> &[u8] {
        self.reader.buffered()
    }
}

/// Sends `GET path HTTP/1.1` with `Connection: close` to `addr` and returns the response.
///
/// # Panics
/// If the connection or the response fails: it is a shortcut for tests where that is a
/// failure anyway. Use [`RawClient`] to test failures.
pub fn http_get(addr: SocketAddr, path: &str) -> Response {
    let attempt = || -> io::Result<Response> {
        let mut c = RawClient::connect(addr)?;
        c.send(format!("GET {path} HTTP/1.1\r\nHost: rampart.test\r\nConnection: close\r\n\r\n"))?;
        c.read_response()
    };
    match attempt() {
        Ok(resp) => resp,
        Err(e) => panic!("http_get {addr}{path}: {e}"),
    }
}

/// What the stats socket at `path` answers to `input` (one or more commands, one
/// session): waits for the socket to exist (the proxy may still be starting), sends
/// `input`, half-closes and reads the whole answer, within the patience.
pub fn stats_command(path: &std::path::Path, input: &str) -> String {
    use std::io::Read;
    let deadline = Instant::now() + crate::patience();
    let mut s = loop {
        match std::os::unix::net::UnixStream::connect(path) {
            Ok(s) => break s,
            Err(e) if Instant::now() > deadline => panic!("stats socket {}: {e}", path.display()),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    s.set_read_timeout(Some(crate::patience())).expect("read timeout");
    s.write_all(input.as_bytes()).expect("write to the stats socket");
    s.shutdown(Shutdown::Write).expect("half-close the stats socket");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read the stats socket");
    out
}

/// What `socat` (the tool operators use) prints when `input` is piped to the stats
/// socket at `path`: the whole answer, `socat -t 5` waiting for it.
///
/// # Panics
/// If socat cannot run (`apt-get install socat`).
pub fn socat(path: &std::path::Path, input: &str) -> String {
    use std::process::{Command, Stdio};
    let mut child = Command::new("socat")
        .args(["-t", "5", "stdio", &format!("unix-connect:{}", path.display())])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("socat runs (apt-get install socat)");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write to socat");
    String::from_utf8_lossy(&child.wait_with_output().expect("socat ends").stdout).into_owned()
}
