//! A small HTTP/2 server for the tests of HTTP/2 towards servers: it speaks frames with
//! rampart-proto's encoders (cleartext prior knowledge), records every request it got
//! (decoded fields, body, trailers, the connection it came on) and answers each one as
//! its handler says: status and fields, the body as separate DATA frames (optionally
//! spaced in time), trailers, a delay, or RST_STREAM. It counts connections. A request
//! whose HEADERS do not end the stream and whose handler answers with `tunnel` (a
//! CONNECT) is answered at once and then echoes its DATA back with `echo:` before
//! each frame, until the client ends it (then it ends too, unless `hold`); a DATA
//! frame `fin` makes it end its side at once.
#![allow(dead_code)] // each test file uses a different subset
#![allow(clippy::disallowed_types)] // a test server's threads, not the request path

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rampart_proto::h2::frame::{
    encode_data, encode_headers, encode_rst_stream, encode_settings, encode_settings_ack, encode_window_update, PREFACE,
};
use rampart_proto::h2::hpack::{Decoder, Encoder, Flags, HpackError};
use rampart_proto::h2::{next_frame, ErrorCode, Frame, Setting, SettingId};

/// A request as the server received it.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// Which connection (0, 1, ... in accept order).
    pub conn: usize,
    pub stream: u32,
    pub fields: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub trailers: Vec<(String, String)>,
}

impl Seen {
    /// The first value of field `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// How to answer a request.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// Interim responses (status codes) sent first.
    pub interim: Vec<u16>,
    pub status: u16,
    pub fields: Vec<(String, String)>,
    /// Each one a DATA frame.
    pub body: Vec<Vec<u8>>,
    /// Time between two DATA frames.
    pub spacing: Duration,
    pub trailers: Vec<(String, String)>,
    /// Time before the answer starts.
    pub delay: Duration,
    /// RST_STREAM with this code instead of an answer (after `delay`), or after the
    /// head when `reset_after_head`.
    pub reset: Option<ErrorCode>,
    pub reset_after_head: bool,
    /// A tunnel (CONNECT): the head without END_STREAM, then DATA echoed.
    pub tunnel: bool,
    /// A tunnel that does not end when the client ends its side.
    pub hold: bool,
}

impl Answer {
    pub fn ok(body: &str) -> Answer {
        Answer { status: 200, body: vec![body.as_bytes().to_vec()], ..Answer::default() }
    }

    pub fn field(mut self, n: &str, v: &str) -> Answer {
        self.fields.push((n.into(), v.into()));
        self
    }
}

type Handler = Arc<dyn Fn(&Seen) -> Answer + Send + Sync>;

/// A running server.
pub struct H2Server {
    addr: SocketAddr,
    conns: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
    resets: Arc<Mutex<Vec<(u32, ErrorCode)>>>,
}

impl H2Server {
    /// Starts a server announcing `max_streams` (SETTINGS_MAX_CONCURRENT_STREAMS).
    pub fn start(max_streams: u32, handler: impl Fn(&Seen) -> Answer + Send + Sync + 'static) -> H2Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let conns = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        let resets = Arc::new(Mutex::new(Vec::new()));
        let (c, s, r) = (conns.clone(), seen.clone(), resets.clone());
        std::thread::spawn(move || {
            for sock in listener.incoming().flatten() {
                let n = c.fetch_add(1, Ordering::SeqCst);
                let (s, h, r) = (s.clone(), handler.clone(), r.clone());
                std::thread::spawn(move || Conn::new(sock, n, max_streams, r).serve(&s, &h));
            }
        });
        H2Server { addr, conns, seen, resets }
    }

    /// The RST_STREAM frames received: (stream, code).
    pub fn resets(&self) -> Vec<(u32, ErrorCode)> {
        self.resets.lock().unwrap().clone()
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.conns.load(Ordering::SeqCst)
    }

    /// Waits for `n` requests (5 s at most) and returns those seen.
    pub fn wait_requests(&self, n: usize) -> Vec<Seen> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let seen = self.seen.lock().unwrap().clone();
            if seen.len() >= n || Instant::now() > deadline {
                return seen;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// A stream being received.
#[derive(Default)]
struct InStream {
    seen: Seen,
    headers_done: bool,
}

/// An answer waiting for its time: (when, stream, what is left to send).
struct Pending {
    at: Instant,
    id: u32,
    step: Step,
    answer: Answer,
}

enum Step {
    Head,
    Data(usize),
}

struct Conn {
    sock: TcpStream,
    n: usize,
    max_streams: u32,
    buf: Vec<u8>,
    enc: Encoder,
    dec: Decoder,
    block: Option<(u32, Vec<u8>, bool)>,
    streams: HashMap<u32, InStream>,
    pending: Vec<Pending>,
    resets: Arc<Mutex<Vec<(u32, ErrorCode)>>>,
    /// Streams answered as tunnels: their DATA are echoed.
    tunnels: HashMap<u32, bool>,
}

impl Conn {
    fn new(sock: TcpStream, n: usize, max_streams: u32, resets: Arc<Mutex<Vec<(u32, ErrorCode)>>>) -> Conn {
        sock.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
        sock.set_nodelay(true).unwrap();
        Conn {
            sock,
            n,
            max_streams,
            buf: Vec::new(),
            enc: Encoder::new(),
            dec: Decoder::new(4096),
            block: None,
            streams: HashMap::new(),
            pending: Vec::new(),
            resets,
            tunnels: Default::default(),
        }
    }

    fn serve(mut self, seen: &Mutex<Vec<Seen>>, handler: &Handler) {
        let mut out = Vec::new();
        let params = [
            Setting { id: SettingId::MaxConcurrentStreams, value: self.max_streams },
            Setting { id: SettingId::InitialWindowSize, value: 1 << 20 },
        ];
        encode_settings(&mut out, &params);
        encode_window_update(&mut out, 0, 1 << 24);
        if self.sock.write_all(&out).is_err() {
            return;
        }
        let mut preface = false;
        loop {
            let mut chunk = [0u8; 16384];
            match self.sock.read(&mut chunk) {
                Ok(0) => return,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(_) => return,
            }
            if !preface {
                if self.buf.len() < PREFACE.len() {
                    continue;
                }
                assert_eq!(&self.buf[..PREFACE.len()], PREFACE, "the proxy sends the preface first");
                self.buf.drain(..PREFACE.len());
                preface = true;
            }
            let mut out = Vec::new();
            while let Some(done) = self.one_frame(&mut out) {
                if let Some(s) = done {
                    seen.lock().unwrap().push(s.clone());
                    let answer = handler(&s);
                    if answer.tunnel {
                        self.tunnels.insert(s.stream, answer.hold);
                    }
                    let at = Instant::now() + answer.delay;
                    self.pending.push(Pending { at, id: s.stream, step: Step::Head, answer });
                }
            }
            self.answer_due(&mut out);
            if !out.is_empty() && self.sock.write_all(&out).is_err() {
                return;
            }
        }
    }

    /// Handles one frame from the buffer: `None` when more bytes are needed, else
    /// `Some(request)` when a request ended with it.
    fn one_frame(&mut self, out: &mut Vec<u8>) -> Option<Option<Seen>> {
        let buf = std::mem::take(&mut self.buf);
        let (frame, used) = match next_frame(&buf, 1 << 24).expect("the proxy sends valid frames") {
            Some(f) => f,
            None => {
                self.buf = buf;
                return None;
            }
        };
        let done = self.on_frame(frame, out);
        self.buf = buf;
        self.buf.drain(..used);
        Some(done)
    }

    fn on_frame(&mut self, frame: Frame<'_>, out: &mut Vec<u8>) -> Option<Seen> {
        match frame {
            Frame::Settings { ack: false, .. } => encode_settings_ack(out),
            Frame::Headers { stream_id, fragment, end_stream, end_headers, .. } => {
                self.block = Some((stream_id, fragment.to_vec(), end_stream));
                if end_headers {
                    return self.on_block();
                }
            }
            Frame::Continuation { fragment, end_headers, .. } => {
                self.block.as_mut().unwrap().1.extend_from_slice(fragment);
                if end_headers {
                    return self.on_block();
                }
            }
            Frame::Data { stream_id, data, end_stream, flow_len } => {
                if flow_len > 0 {
                    encode_window_update(out, 0, flow_len);
                    encode_window_update(out, stream_id, flow_len);
                }
                if let Some(&hold) = self.tunnels.get(&stream_id) {
                    if data == b"fin" {
                        encode_data(out, stream_id, b"", true);
                        self.tunnels.remove(&stream_id);
                    } else if !data.is_empty() {
                        let mut echo = b"echo:".to_vec();
                        echo.extend_from_slice(data);
                        encode_data(out, stream_id, &echo, false);
                    }
                    if end_stream && !hold && self.tunnels.remove(&stream_id).is_some() {
                        encode_data(out, stream_id, b"", true);
                    }
                    return None;
                }
                let st = self.streams.entry(stream_id).or_default();
                st.seen.body.extend_from_slice(data);
                if end_stream {
                    return self.streams.remove(&stream_id).map(|s| s.seen);
                }
            }
            Frame::RstStream { stream_id, error } => {
                self.resets.lock().unwrap().push((stream_id, error));
                self.streams.remove(&stream_id);
                self.tunnels.remove(&stream_id);
                self.pending.retain(|p| p.id != stream_id);
            }
            _ => {}
        }
        None
    }

    fn on_block(&mut self) -> Option<Seen> {
        let (id, block, end) = self.block.take().unwrap();
        let mut fields = Vec::new();
        self.dec
            .decode::<HpackError, _>(&block, |n, v, _| {
                fields.push((String::from_utf8_lossy(n).into_owned(), String::from_utf8_lossy(v).into_owned()));
                Ok(())
            })
            .expect("the proxy's header blocks decode");
        let (conn, st) = (self.n, self.streams.entry(id).or_default());
        if st.headers_done {
            st.seen.trailers = fields;
        } else {
            st.headers_done = true;
            st.seen = Seen { conn, stream: id, fields, ..Seen::default() };
        }
        // a CONNECT (extended or not) is a request without END_STREAM
        if end || st.seen.get(":method") == Some("CONNECT") {
            return self.streams.remove(&id).map(|s| s.seen);
        }
        None
    }

    fn headers(&mut self, out: &mut Vec<u8>, id: u32, fields: &[(String, String)], end: bool) {
        let mut block = Vec::new();
        self.enc.encode(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes(), Flags::NONE)), &mut block);
        encode_headers(out, id, &block, end, 16384);
    }

    /// Sends what is due of the pending answers.
    fn answer_due(&mut self, out: &mut Vec<u8>) {
        let now = Instant::now();
        let mut left = Vec::new();
        for mut p in std::mem::take(&mut self.pending) {
            if p.at > now {
                left.push(p);
                continue;
            }
            let a = &p.answer;
            match p.step {
                Step::Head => {
                    if let (Some(code), false) = (a.reset, a.reset_after_head) {
                        encode_rst_stream(out, p.id, code);
                        continue;
                    }
                    for s in a.interim.clone() {
                        self.headers(out, p.id, &[(":status".into(), s.to_string())], false);
                    }
                    let mut fields = vec![(":status".to_string(), a.status.to_string())];
                    fields.extend(a.fields.iter().cloned());
                    let end = a.body.is_empty() && a.trailers.is_empty() && a.reset.is_none() && !a.tunnel;
                    self.headers(out, p.id, &fields, end);
                    if let Some(code) = a.reset {
                        encode_rst_stream(out, p.id, code);
                        continue;
                    }
                    if !end && !a.tunnel {
                        p.step = Step::Data(0);
                        left.push(p);
                    }
                }
                Step::Data(i) => {
                    let last = i + 1 >= a.body.len();
                    if let Some(d) = a.body.get(i) {
                        encode_data(out, p.id, d, last && a.trailers.is_empty());
                    }
                    if last && !a.trailers.is_empty() {
                        let t = a.trailers.clone();
                        self.headers(out, p.id, &t, true);
                    }
                    if !last {
                        p.at = now + a.spacing;
                        p.step = Step::Data(i + 1);
                        left.push(p);
                    }
                }
            }
        }
        self.pending = left;
    }
}
