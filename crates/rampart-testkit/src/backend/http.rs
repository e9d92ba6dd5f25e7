//! [`HttpBackend`]: an HTTP/1.x server that records every request exactly as received
//! and answers through a responder closure (linkerd's fluent test servers are the model).

use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use super::reply::Reply;
use super::server::{close_gracefully, ConnInfo, Server};
use crate::http::{parse_request_head, request_framing, Framing, MsgReader, Request};
use crate::sync::Recorder;

/// Computes the reply to one request.
type Responder = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

/// How long a closing backend waits for the peer's close before dropping the socket.
const CLOSE_LINGER: Duration = Duration::from_secs(2);

/// An HTTP/1.x test server on `127.0.0.1:0`, stopped on drop.
///
/// It reads requests with `Content-Length` or chunked bodies, several per connection
/// (keep-alive) and over several connections, records each one ([`Request`]: raw bytes,
/// method, path, version, headers in order and case, body, connection id and peer), then
/// answers with the configured responder. The default answer is `200 OK` whose body is
/// the backend's name. The connection is closed after a reply when the reply says so
/// ([`Reply::close`], [`Reply::until_close`]) or the request asked for it.
///
/// ```no_run
/// use rampart_testkit::{HttpBackend, Reply};
/// let be = HttpBackend::builder("s1")
///     .respond(|req| Reply::ok().header("X-Path", &req.path).body("hi"))
///     .start();
/// // ... point a proxy at be.addr() ...
/// let seen = be.wait_requests(1);
/// assert_eq!(seen[0].method, "GET");
/// ```
pub struct HttpBackend {
    name: String,
    server: Server,
    log: Arc<Recorder<Request>>,
}

/// Configures an [`HttpBackend`] before it starts.
pub struct HttpBackendBuilder {
    name: String,
    responder: Responder,
    answer_continue: bool,
}

/// What the connection handler needs, shared by the connection threads.
struct Config {
    responder: Responder,
    answer_continue: bool,
}

impl HttpBackend {
    /// Starts a backend with the default responder (`200 OK`, body = `name`).
    pub fn start(name: &str) -> HttpBackend {
        HttpBackend::builder(name).start()
    }

    /// A builder for a backend called `name` (the name is the default body and names
    /// its threads).
    pub fn builder(name: &str) -> HttpBackendBuilder {
        let body = name.to_string();
        HttpBackendBuilder {
            name: name.to_string(),
            responder: Arc::new(move |_| Reply::ok().body(body.clone())),
            answer_continue: true,
        }
    }

    /// The backend's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The address it listens on (`127.0.0.1:<port>`).
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.log.snapshot()
    }

    /// Waits (up to [`patience`](crate::patience)) until at least `n` requests arrived;
    /// returns all requests received by then, possibly fewer than `n`.
    pub fn wait_requests(&self, n: usize) -> Vec<Request> {
        self.log.wait_until(crate::patience(), |reqs| reqs.len() >= n)
    }

    /// Number of connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.server.accepted()
    }

    /// Waits until every accepted connection is closed; false on timeout.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        self.server.wait_idle(timeout)
    }
}

impl HttpBackendBuilder {
    /// Answers each request with `responder(request)`.
    pub fn respond(mut self, responder: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Self {
        self.responder = Arc::new(responder);
        self
    }

    /// Answers every request with a copy of `reply`.
    pub fn reply(self, reply: Reply) -> Self {
        self.respond(move |_| reply.clone())
    }

    /// Does not send `100 Continue` to requests with `Expect: 100-continue` (by default
    /// the backend sends it before reading the body, like most servers).
    pub fn no_continue(mut self) -> Self {
        self.answer_continue = false;
        self
    }

    /// Binds `127.0.0.1:0` and starts serving.
    pub fn start(self) -> HttpBackend {
        let log = Arc::new(Recorder::default());
        let config = Arc::new(Config { responder: self.responder, answer_continue: self.answer_continue });
        let conn_log = Arc::clone(&log);
        let server = Server::start(
            &self.name,
            Arc::new(move |stream, info| serve_connection(&stream, info, &config, &conn_log)),
        );
        HttpBackend { name: self.name, server, log }
    }
}

/// What to do after one exchange.
enum Next {
    KeepAlive,
    Close,
    /// The peer closed or sent something unreadable.
    Done,
}

fn serve_connection(stream: &TcpStream, info: ConnInfo, config: &Config, log: &Recorder<Request>) {
    let mut reader = MsgReader::new(stream);
    let mut seq = 1;
    loop {
        match serve_one(&mut reader, stream, info, seq, config, log) {
            Ok(Next::KeepAlive) => seq += 1,
            Ok(Next::Close) => return close_gracefully(stream, CLOSE_LINGER),
            Ok(Next::Done) | Err(_) => return,
        }
    }
}

fn serve_one(
    reader: &mut MsgReader<&TcpStream>,
    mut stream: &TcpStream,
    info: ConnInfo,
    seq: u64,
    config: &Config,
    log: &Recorder<Request>,
) -> io::Result<Next> {
    let Some(head) = reader.read_head()? else { return Ok(Next::Done) };
    let parsed = parse_request_head(&head)?;
    let framing = request_framing(&parsed.headers)?;
    let has_body = !matches!(framing, Framing::None | Framing::Length(0));
    if config.answer_continue && has_body && parsed.headers.has_token("expect", "100-continue") {
        stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let body = reader.read_body(framing, &mut |_| {})?;
    let request = Request {
        conn: info.id,
        peer: info.peer,
        seq,
        raw: reader.take_raw(),
        method: parsed.method,
        path: parsed.target,
        version: parsed.version,
        headers: parsed.headers,
        body: body.data,
        trailers: body.trailers,
    };
    // Record before answering: a client holding the response knows the record exists.
    log.push(request.clone());
    let reply = (config.responder)(&request);
    reply.write_to(stream, request.method.eq_ignore_ascii_case("HEAD"))?;
    if reply.closes() || wants_close(&request) {
        Ok(Next::Close)
    } else {
        Ok(Next::KeepAlive)
    }
}

/// Whether the request asked to close after the response (RFC 9112 §9.3).
fn wants_close(request: &Request) -> bool {
    if request.headers.has_token("connection", "close") {
        return true;
    }
    request.version == "HTTP/1.0" && !request.headers.has_token("connection", "keep-alive")
}
