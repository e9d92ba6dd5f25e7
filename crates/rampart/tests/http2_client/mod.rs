//! A small HTTP/2 client for the tests that need to see frames: it writes frames with
//! rampart-proto's encoders and reads what the proxy sends as events (HEADERS decoded,
//! DATA, RST_STREAM, GOAWAY, the end of the connection), acknowledging SETTINGS and
//! giving back window as DATA comes. Well-behaved clients (curl) cover the rest.
#![allow(dead_code)] // each test file uses a different subset

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use rampart_proto::h2::frame::{
    encode_data, encode_headers, encode_settings, encode_settings_ack, encode_window_update, PREFACE,
};
use rampart_proto::h2::hpack::{Decoder, Encoder, Flags};
use rampart_proto::h2::{next_frame, ErrorCode, Frame};

/// What the client saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A whole header block (HEADERS and its CONTINUATIONs), decoded.
    Headers {
        id: u32,
        fields: Vec<(String, String)>,
        end: bool,
    },
    Data {
        id: u32,
        data: Vec<u8>,
        end: bool,
    },
    Reset {
        id: u32,
        code: ErrorCode,
    },
    GoAway {
        last_id: u32,
        code: ErrorCode,
    },
    /// The proxy closed the connection.
    Closed,
    /// Nothing within the read timeout.
    Timeout,
}

/// A client connection (prior knowledge, or over what `connect` was given).
pub struct H2Client {
    sock: TcpStream,
    buf: Vec<u8>,
    enc: Encoder,
    dec: Decoder,
    /// A header block being received: stream, fragments so far, END_STREAM.
    block: Option<(u32, Vec<u8>, bool)>,
    /// The settings the proxy announced, by identifier.
    settings: std::collections::BTreeMap<u16, u32>,
}

impl H2Client {
    /// Connects, sends the preface and an empty SETTINGS frame.
    pub fn connect(addr: SocketAddr) -> H2Client {
        let sock = TcpStream::connect(addr).expect("connects");
        sock.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let mut c = H2Client {
            sock,
            buf: Vec::new(),
            enc: Encoder::new(),
            dec: Decoder::new(4096),
            block: None,
            settings: Default::default(),
        };
        let mut out = PREFACE.to_vec();
        encode_settings(&mut out, &[]);
        c.send(&out);
        c
    }

    /// The client's address (its port shows in the proxy's `-d` and log lines).
    pub fn local_addr(&self) -> SocketAddr {
        self.sock.local_addr().expect("a local address")
    }

    /// Writes raw bytes.
    pub fn send(&mut self, bytes: &[u8]) {
        self.sock.write_all(bytes).expect("writes");
    }

    /// The settings the proxy announced so far (identifier to value).
    pub fn settings(&self) -> &std::collections::BTreeMap<u16, u32> {
        &self.settings
    }

    /// The HEADERS frame of a request on stream `id` (pseudo-headers first).
    pub fn headers(&mut self, id: u32, fields: &[(&str, &str)], end_stream: bool) {
        let mut block = Vec::new();
        self.enc.encode(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes(), Flags::NONE)), &mut block);
        let mut out = Vec::new();
        encode_headers(&mut out, id, &block, end_stream, 16384);
        self.send(&out);
    }

    /// A GET of `path` on stream `id`, ending the stream.
    pub fn get(&mut self, id: u32, path: &str) {
        self.headers(id, &[(":method", "GET"), (":scheme", "http"), (":path", path), (":authority", "t.test")], true);
    }

    /// A DATA frame.
    pub fn data(&mut self, id: u32, data: &[u8], end_stream: bool) {
        let mut out = Vec::new();
        encode_data(&mut out, id, data, end_stream);
        self.send(&out);
    }

    /// The next event, waiting up to `within`.
    pub fn next(&mut self, within: Duration) -> Event {
        let deadline = Instant::now() + within;
        loop {
            if let Some(ev) = self.parse_one() {
                return ev;
            }
            if Instant::now() >= deadline {
                return Event::Timeout;
            }
            let mut chunk = [0u8; 16384];
            match self.sock.read(&mut chunk) {
                Ok(0) => return Event::Closed,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(_) => return Event::Closed,
            }
        }
    }

    /// The events until stream `id` ends (END_STREAM or RST_STREAM) or the connection
    /// does; other streams' events are kept in the result too.
    pub fn until_end(&mut self, id: u32, within: Duration) -> Vec<Event> {
        let deadline = Instant::now() + within;
        let mut out = Vec::new();
        loop {
            let ev = self.next(deadline.saturating_duration_since(Instant::now()));
            let done = match &ev {
                Event::Headers { id: i, end, .. } | Event::Data { id: i, end, .. } => *i == id && *end,
                Event::Reset { id: i, .. } => *i == id,
                Event::GoAway { .. } => false,
                Event::Closed | Event::Timeout => true,
            };
            out.push(ev);
            if done {
                return out;
            }
        }
    }

    /// Parses one frame from what was read; `None` when more is needed (frames that
    /// make no event are handled and skipped).
    fn parse_one(&mut self) -> Option<Event> {
        loop {
            let buf = std::mem::take(&mut self.buf);
            let parsed = next_frame(&buf, 1 << 24).expect("the proxy sends valid frames");
            let Some((frame, used)) = parsed else {
                self.buf = buf;
                return None;
            };
            let ev = self.on_frame(frame);
            self.buf = buf;
            self.buf.drain(..used);
            if ev.is_some() {
                return ev;
            }
        }
    }

    fn on_frame(&mut self, frame: Frame<'_>) -> Option<Event> {
        let mut reply = Vec::new();
        let ev = match frame {
            Frame::Settings { ack: false, params } => {
                for p in params.iter() {
                    self.settings.insert(p.id.to_u16(), p.value);
                }
                encode_settings_ack(&mut reply);
                None
            }
            Frame::Headers { stream_id, fragment, end_stream, end_headers, .. } => {
                self.block = Some((stream_id, fragment.to_vec(), end_stream));
                end_headers.then(|| self.decode_block())
            }
            Frame::Continuation { fragment, end_headers, .. } => {
                self.block.as_mut().expect("CONTINUATION after HEADERS").1.extend_from_slice(fragment);
                end_headers.then(|| self.decode_block())
            }
            Frame::Data { stream_id, data, end_stream, flow_len } => {
                if flow_len > 0 {
                    encode_window_update(&mut reply, 0, flow_len);
                    if !end_stream {
                        encode_window_update(&mut reply, stream_id, flow_len);
                    }
                }
                Some(Event::Data { id: stream_id, data: data.to_vec(), end: end_stream })
            }
            Frame::RstStream { stream_id, error } => Some(Event::Reset { id: stream_id, code: error }),
            Frame::GoAway { last_stream_id, error, .. } => Some(Event::GoAway { last_id: last_stream_id, code: error }),
            _ => None,
        };
        if !reply.is_empty() {
            // the proxy may have closed already: what matters then is what it sent
            let _ = self.sock.write_all(&reply);
        }
        ev
    }

    fn decode_block(&mut self) -> Event {
        let (id, block, end) = self.block.take().unwrap();
        let mut fields = Vec::new();
        self.dec
            .decode::<rampart_proto::h2::hpack::HpackError, _>(&block, |n, v, _| {
                fields.push((String::from_utf8_lossy(n).into_owned(), String::from_utf8_lossy(v).into_owned()));
                Ok(())
            })
            .expect("the proxy's header blocks decode");
        Event::Headers { id, fields, end }
    }
}

/// The value of `name` among decoded fields.
pub fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// The body of stream `id` among `events` (its DATA frames in order).
pub fn body_of(events: &[Event], id: u32) -> Vec<u8> {
    let mut out = Vec::new();
    for ev in events {
        if let Event::Data { id: i, data, .. } = ev {
            if *i == id {
                out.extend_from_slice(data);
            }
        }
    }
    out
}
