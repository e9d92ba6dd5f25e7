//! HTTP checks over HTTP/2 (`check-proto h2`, a server's `proto h2` inherited by an
//! HTTP check, `h2` negotiated with `check-alpn` or a `connect alpn` rule, `connect
//! proto h2`): the request a `send` rule rendered as HTTP/1 goes out as the preface,
//! SETTINGS and one stream (HEADERS, DATA), translated as the server side of a stream
//! translates requests (`h2::client`); the response's frames are read back and
//! presented to the expect rules as the HTTP/1 response an HTTP/1 server would have
//! sent, so that the rules read an HTTP/2 response as they read any other.
//! HAProxy counterpart: a check's connection with the H2 mux installed
//! (`tcpcheck_eval_connect()`, `conn_install_mux_chk()`), mux_h2.c's back side.
//!
//! COMPAT: the response reads as `HTTP/1.1` with no reason phrase, where HAProxy's
//! HTX start line says `HTTP/2.0`; trailers are not kept.

use rampart_proto::h1::{self, Head};
use rampart_proto::h2::frame::PREFACE;
use rampart_proto::h2::frame::{encode_data, encode_headers, encode_ping_ack, encode_settings, encode_settings_ack};
use rampart_proto::h2::hpack::{Decoder, Encoder, Flags};
use rampart_proto::h2::{next_frame, Frame, Setting, SettingId, DEFAULT_MAX_FRAME_SIZE};
use rampart_proto::http::Method;

use crate::http::{BodyLen, MsgHead, MsgView};

/// The one stream a check opens.
const STREAM: u32 = 1;

/// One check's HTTP/2 exchange.
#[derive(Debug)]
pub(super) struct H2Chk {
    /// Bytes read and not yet taken as frames.
    rx: Vec<u8>,
    dec: Decoder,
    /// The field block of the response head, while CONTINUATION frames complete it.
    block: Vec<u8>,
    in_block: bool,
    /// The head ended the stream.
    block_ends: bool,
    /// The response head, as HTTP/1 bytes (status line and fields, without framing).
    head: Option<Vec<u8>>,
    /// The response carried `content-length`.
    has_length: bool,
    body: Vec<u8>,
    /// The stream ended (END_STREAM, RST_STREAM, GOAWAY) or the connection failed.
    pub ended: bool,
    method: Method,
}

/// Why the exchange cannot go on: the connection is unusable (the check fails as on
/// an invalid response).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Broken;

impl H2Chk {
    pub fn new() -> H2Chk {
        H2Chk {
            rx: Vec::new(),
            dec: Decoder::new(4096),
            block: Vec::new(),
            in_block: false,
            block_ends: false,
            head: None,
            has_length: false,
            body: Vec::new(),
            ended: false,
            method: Method::Options,
        }
    }

    /// The bytes that open the connection and send `req` (an HTTP/1 request the send
    /// rule rendered) on stream 1; `tls`: the connection is TLS (the `:scheme`).
    pub fn request(&mut self, req: &[u8]) -> Result<Vec<u8>, Broken> {
        let mut h1 = Head::default();
        match h1::parse_request(req, req.len() + 1, &mut h1) {
            Ok(true) => {}
            _ => return Err(Broken),
        }
        let mut msg = MsgHead::default();
        crate::h1::msg::fill(&mut msg, &h1);
        self.method = msg.method;
        let body = &req[h1.len..];
        let view = MsgView { head: &msg, buf: req };
        let mut fields: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut lower = Vec::new();
        crate::h2::client::request_fields(view, None, &mut lower, |n, v| fields.push((n.to_vec(), v.to_vec())));
        let mut block = Vec::new();
        Encoder::new().encode(fields.iter().map(|(n, v)| (&n[..], &v[..], Flags::NONE)), &mut block);
        let mut out = PREFACE.to_vec();
        encode_settings(&mut out, &[Setting { id: SettingId::EnablePush, value: 0 }]);
        encode_headers(&mut out, STREAM, &block, body.is_empty(), DEFAULT_MAX_FRAME_SIZE);
        for (i, chunk) in body.chunks(DEFAULT_MAX_FRAME_SIZE as usize).enumerate() {
            let last = (i + 1) * DEFAULT_MAX_FRAME_SIZE as usize >= body.len();
            encode_data(&mut out, STREAM, chunk, last);
        }
        Ok(out)
    }

    /// Takes the frames of `data` (bytes just read); `reply` gets what the connection
    /// owes the server (SETTINGS and PING acknowledgements). At most `room` body bytes
    /// are kept: past them, the response ends there.
    pub fn on_bytes(&mut self, data: &[u8], reply: &mut Vec<u8>, room: usize) -> Result<(), Broken> {
        self.rx.extend_from_slice(data);
        // the frames borrow the bytes while `frame` changes the rest of `self`
        let rx = std::mem::take(&mut self.rx);
        let mut at = 0;
        let res = loop {
            match next_frame(&rx[at..], DEFAULT_MAX_FRAME_SIZE) {
                Ok(Some((frame, len))) => {
                    at += len;
                    if let Err(e) = self.frame(frame, reply, room) {
                        break Err(e);
                    }
                }
                Ok(None) => break Ok(()),
                Err(_) => break Err(Broken),
            }
        };
        self.rx = rx;
        self.rx.drain(..at);
        res
    }

    fn frame(&mut self, frame: Frame<'_>, reply: &mut Vec<u8>, room: usize) -> Result<(), Broken> {
        if self.in_block && !matches!(frame, Frame::Continuation { .. }) {
            return Err(Broken);
        }
        match frame {
            Frame::Settings { ack: false, .. } => encode_settings_ack(reply),
            Frame::Ping { ack: false, data } => encode_ping_ack(reply, data),
            Frame::Headers { stream_id: STREAM, fragment, end_stream, end_headers, .. } => {
                self.block.clear();
                self.block.extend_from_slice(fragment);
                self.block_ends = end_stream;
                self.in_block = !end_headers;
                if end_headers {
                    self.on_block()?;
                }
            }
            Frame::Continuation { stream_id: STREAM, fragment, end_headers } if self.in_block => {
                self.block.extend_from_slice(fragment);
                self.in_block = !end_headers;
                if end_headers {
                    self.on_block()?;
                }
            }
            Frame::Continuation { .. } => return Err(Broken),
            Frame::Data { stream_id: STREAM, data, end_stream, .. } => {
                if self.head.is_none() {
                    return Err(Broken);
                }
                let keep = data.len().min(room.saturating_sub(self.body.len()));
                self.body.extend_from_slice(&data[..keep]);
                self.ended |= end_stream || keep < data.len();
            }
            Frame::RstStream { stream_id: STREAM, .. } | Frame::GoAway { .. } => self.ended = true,
            _ => {}
        }
        Ok(())
    }

    /// A complete field block: the response head (interim responses skipped), or the
    /// trailers (dropped).
    fn on_block(&mut self) -> Result<(), Broken> {
        let mut fields: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let block = std::mem::take(&mut self.block);
        let res =
            self.dec.decode(&block, |n: &[u8], v: &[u8], _| -> Result<(), rampart_proto::h2::hpack::HpackError> {
                fields.push((n.to_vec(), v.to_vec()));
                Ok(())
            });
        self.block = block;
        res.map_err(|_| Broken)?;
        if self.head.is_some() {
            self.ended |= self.block_ends;
            return Ok(());
        }
        let mut buf = Vec::new();
        let mut msg = MsgHead::default();
        let pairs = fields.iter().map(|(n, v)| (&n[..], &v[..]));
        crate::h2::client::response_head(pairs, self.block_ends, self.method, &mut buf, &mut msg)
            .map_err(|_| Broken)?;
        if (100..200).contains(&msg.status) {
            return Ok(());
        }
        let mut head = format!("HTTP/1.1 {} \r\n", msg.status).into_bytes();
        for (_, name, value) in (MsgView { head: &msg, buf: &buf }).headers() {
            head.extend_from_slice(name);
            head.extend_from_slice(b": ");
            head.extend_from_slice(value);
            head.extend_from_slice(b"\r\n");
        }
        self.has_length = matches!(msg.body, BodyLen::Known(_)) && fields.iter().any(|(n, _)| n == b"content-length");
        self.head = Some(head);
        self.ended |= self.block_ends;
        Ok(())
    }

    /// The response so far as HTTP/1 bytes, in `out` (cleared): nothing before the
    /// head; once the stream ended, a body without a length of its own gets one.
    pub fn as_h1(&self, out: &mut Vec<u8>) {
        out.clear();
        let Some(head) = &self.head else { return };
        out.extend_from_slice(head);
        if self.ended && !self.has_length {
            out.extend_from_slice(format!("content-length: {}\r\n", self.body.len()).as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&self.body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_proto::h2::frame::encode_rst_stream;
    use rampart_proto::h2::ErrorCode;

    fn fields_of(block: &[u8]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        Decoder::new(4096)
            .decode(block, |n: &[u8], v: &[u8], _| -> Result<(), rampart_proto::h2::hpack::HpackError> {
                out.push((String::from_utf8_lossy(n).into_owned(), String::from_utf8_lossy(v).into_owned()));
                Ok(())
            })
            .unwrap();
        out
    }

    fn headers(fields: &[(&str, &str)], end_stream: bool) -> Vec<u8> {
        let mut block = Vec::new();
        Encoder::new().encode(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes(), Flags::NONE)), &mut block);
        let mut out = Vec::new();
        encode_headers(&mut out, STREAM, &block, end_stream, DEFAULT_MAX_FRAME_SIZE);
        out
    }

    #[test]
    fn the_request_is_translated_as_a_stream_would_be() {
        let mut h2 = H2Chk::new();
        let req = b"GET /health HTTP/1.1\r\nhost: h.test\r\nx-a: 1\r\nconnection: close\r\n\r\n";
        let out = h2.request(req).unwrap();
        assert!(out.starts_with(PREFACE));
        let mut rest = &out[PREFACE.len()..];
        let mut frames = Vec::new();
        while let Some((f, n)) = next_frame(rest, DEFAULT_MAX_FRAME_SIZE).unwrap() {
            frames.push(format!("{f:?}").split_whitespace().next().unwrap().to_owned());
            if let Frame::Headers { fragment, end_stream, .. } = f {
                assert!(end_stream, "no body: the HEADERS end the stream");
                let got = fields_of(fragment);
                let got: Vec<_> = got.iter().map(|(n, v)| format!("{n}={v}")).collect();
                // as HAProxy 2.6 sends an origin-form request: the Host as a `host` field
                assert_eq!(got, [":method=GET", ":scheme=https", ":path=/health", "host=h.test", "x-a=1"]);
            }
            rest = &rest[n..];
        }
        assert_eq!(frames, ["Settings", "Headers"]);
        let mut h2 = H2Chk::new();
        let out = h2.request(b"GET /status HTTP/1.0\r\n\r\n").unwrap();
        assert!(out.len() > PREFACE.len(), "without a Host: no :authority");
        let mut h2 = H2Chk::new();
        let out = h2.request(b"POST / HTTP/1.0\r\ncontent-length: 3\r\n\r\nabc").unwrap();
        assert!(out.ends_with(b"abc"), "the body as DATA");
    }

    #[test]
    fn the_response_reads_as_http1_once_its_head_is_in() {
        let mut h2 = H2Chk::new();
        let mut reply = Vec::new();
        let mut input = Vec::new();
        encode_settings(&mut input, &[]);
        input.extend(headers(&[(":status", "200"), ("x-b", "2")], false));
        encode_data(&mut input, STREAM, b"hello", false);
        // split at every offset: frames are taken whole
        for cut in [1, 9, 12, input.len()] {
            let mut h = H2Chk::new();
            let mut r = Vec::new();
            h.on_bytes(&input[..cut], &mut r, 100).unwrap();
            h.on_bytes(&input[cut..], &mut r, 100).unwrap();
            let mut out = Vec::new();
            h.as_h1(&mut out);
            assert_eq!(out, b"HTTP/1.1 200 \r\nx-b: 2\r\n\r\nhello", "cut at {cut}");
        }
        h2.on_bytes(&input, &mut reply, 100).unwrap();
        assert!(!reply.is_empty(), "SETTINGS acknowledged");
        assert!(!h2.ended);
        let mut end = Vec::new();
        encode_data(&mut end, STREAM, b"!", true);
        h2.on_bytes(&end, &mut reply, 100).unwrap();
        let mut out = Vec::new();
        h2.as_h1(&mut out);
        assert_eq!(out, b"HTTP/1.1 200 \r\nx-b: 2\r\ncontent-length: 6\r\n\r\nhello!");
        assert!(h2.ended);
    }

    #[test]
    fn resets_bad_frames_and_interim_responses() {
        let mut h2 = H2Chk::new();
        let mut r = Vec::new();
        let mut input = headers(&[(":status", "103")], false);
        input.extend(headers(&[(":status", "503"), ("content-length", "0")], true));
        h2.on_bytes(&input, &mut r, 100).unwrap();
        let mut out = Vec::new();
        h2.as_h1(&mut out);
        assert_eq!(out, b"HTTP/1.1 503 \r\ncontent-length: 0\r\n\r\n");
        let mut h2 = H2Chk::new();
        let mut rst = Vec::new();
        encode_rst_stream(&mut rst, STREAM, ErrorCode::RefusedStream);
        h2.on_bytes(&rst, &mut r, 100).unwrap();
        assert!(h2.ended);
        h2.as_h1(&mut out);
        assert!(out.is_empty(), "no head: nothing to judge");
        let mut h2 = H2Chk::new();
        let mut data = Vec::new();
        encode_data(&mut data, STREAM, b"x", false);
        assert_eq!(h2.on_bytes(&data, &mut r, 100), Err(Broken), "DATA before the head");
        assert_eq!(H2Chk::new().on_bytes(b"\0\0\x04\x00\0\0\0\0\x01ab", &mut r, 100).map(|_| ()), Ok(()));
        assert_eq!(H2Chk::new().request(b"not http"), Err(Broken));
        let long = headers(&[(":status", "200")], false);
        let mut h2 = H2Chk::new();
        h2.on_bytes(&long, &mut r, 3).unwrap();
        let mut big = Vec::new();
        encode_data(&mut big, STREAM, b"abcdef", false);
        h2.on_bytes(&big, &mut r, 3).unwrap();
        assert!(h2.ended, "past the buffer, the response ends");
        h2.as_h1(&mut out);
        assert!(out.ends_with(b"\r\n\r\nabc"));
    }
}
