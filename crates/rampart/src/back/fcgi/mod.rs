//! FastCGI in the web server's role: [`FcgiBack`] is one request on a connection to a
//! FastCGI application (`server ... proto fcgi` in a backend with `use-fcgi-app`),
//! spoken to through the same [`HttpBack`] interface as HTTP/1 and HTTP/2.
//!
//! The request becomes BEGIN_REQUEST (responder role, `keep-conn` flag), PARAMS (the
//! CGI variables, `params`) and STDIN: the body bytes come in the framing of the client
//! side's HTTP/1 message, counted down from a known length or decoded from chunked
//! (`h1::body::Unchunk`; trailers are not passed), and an empty STDIN record ends them.
//! The application's STDOUT starts with a CGI head (`rampart_proto::fcgi::cgi`); it is
//! presented as an HTTP/1 server's response would be: with `content-length` when the
//! application gave one or when the whole response was already in hand (as HAProxy's
//! fcgi-app filter adds it), else as a chunked body, each STDOUT record handed on as it
//! arrives; END_REQUEST ends it. `Status` is not forwarded and a `Date` header is added
//! when the application sent none. Each STDERR record is a log line at level `err` to
//! the `log-stderr` targets, tagged with the application's name (HAProxy's
//! `fcgi_strm_handle_stderr()`), or dropped without `log-stderr`.
//!
//! A malformed record, a bad CGI head, or a close before the head: 502; a close or a
//! bad record after the head: the response is cut (the stream aborts it). The
//! connection is kept for another request only with `option keep-conn` (the default),
//! after a clean END_REQUEST with nothing after it.
//! HAProxy counterpart: src/mux_fcgi.c, the response part of src/fcgi-app.c.
//!
//! With `option get-values`, a new connection first asks the application's limits
//! (`values`) and the request waits for the answer, as HAProxy's.
//!
//! Request ids count 1, 3, 5 ... on a connection, as HAProxy's (a connection that
//! reached id 32767 is not reused).
//!
//! COMPAT (partial): one request per connection at a time (no `mpxs-conns`
//! multiplexing, whatever GET_VALUES answered); a CGI head with `Transfer-Encoding` is
//! refused (502).
//!
//! - `params`: the CGI variables of a request
//! - `values`: the GET_VALUES exchange on a new connection

pub mod params;
pub mod values;

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use atomic_refcell::AtomicRefCell;
use rampart_proto::fcgi::cgi::{default_reason, parse_cgi_head, CgiHead, Reason};
use rampart_proto::fcgi::{self, next_record, EndRequest, Kind};
use rampart_proto::http::{HdrKind, Header, Slice, Version};

use super::{BackRecv, BackSend, BodyError, HeadError, HeadWait, HttpBack, RawRest, Received, ReqSend, ResFacts};
use crate::backend::ServerConn;
use crate::conn_pool::BackSock;
use crate::h1::body::Unchunk;
use crate::http::{BodyLen, Method, MsgHead, MsgView};
use crate::io::{read_some, write_all, IoError};
use crate::proxy::fcgi::FcgiAppRt;
pub use params::Client;

/// The request id of the request a connection carries after `uses` others: 1, 3, 5 ...
/// as HAProxy's `fcgi_conn_get_next_sid()` numbers them.
fn req_id(uses: u32) -> u16 {
    u16::try_from(uses.saturating_mul(2).saturating_add(1)).unwrap_or(LAST_ID).min(LAST_ID)
}

/// The highest request id: a connection that carried it carries no more (HAProxy's
/// `fcgi_streams_left()`).
const LAST_ID: u16 = 0x7FFF;

/// The stream called [`HttpBack::release`] and something else than
/// [`HttpBack::resend`] after it: a bug in the caller, never a peer's doing.
const RELEASED: &str = "a FastCGI connection, but it was released for a retry";

/// How the request body goes out as STDIN.
#[derive(Debug, Default)]
enum TxFraming {
    /// No body, or all of it sent (with the empty STDIN record).
    #[default]
    Done,
    /// Bytes left of a known length.
    Length(u64),
    /// Chunked: decoded to its data.
    Chunked(Box<Unchunk>),
}

/// One request on a FastCGI connection.
#[derive(Debug)]
pub struct FcgiBack {
    /// `None` only between [`HttpBack::release`] and [`HttpBack::resend`].
    sc: Option<ServerConn>,
    app: Arc<FcgiAppRt>,
    client: Client,
    /// The records sent (BEGIN_REQUEST, PARAMS, the STDIN in hand), for a retry.
    out: Vec<u8>,
    /// How the request body is framed, and its bytes that came with the head as the
    /// client framed them (for a retry: the framing state is rebuilt from them).
    tx_start: BodyLen,
    body_in_hand: Vec<u8>,
    tx: AtomicRefCell<TxFraming>,
    rx: Rx,
}

/// The response side.
#[derive(Debug, Default)]
pub struct Rx {
    /// Bytes received, not parsed as records yet.
    raw: Vec<u8>,
    /// STDOUT content not handed on yet.
    stdout: Vec<u8>,
    /// The bytes the response head's slices point into.
    head_buf: Vec<u8>,
    cgi: CgiHead,
    /// The body bytes handed out last, in HTTP/1 framing.
    out: Vec<u8>,
    /// END_REQUEST arrived.
    ended: bool,
    /// Something went wrong the connection cannot recover from (a bad record, bytes
    /// after END_REQUEST, a status other than "request complete").
    broken: bool,
    /// The response body, and what is left of a known length.
    body: BodyLen,
    left: u64,
    chunked: bool,
    /// The body's end was handed out (or it has none).
    done: bool,
    method: Method,
    version: Version,
    /// `log-stderr`: the application's (its STDERR records are logged).
    app: Option<Arc<FcgiAppRt>>,
    /// The request's id.
    id: u16,
}

/// The sending half of an [`FcgiBack`].
#[derive(Debug, Clone, Copy)]
pub struct TxHalf<'a> {
    sock: &'a BackSock,
    tx: &'a AtomicRefCell<TxFraming>,
    /// The request's id.
    id: u16,
}

/// The receiving half of an [`FcgiBack`].
#[derive(Debug)]
pub struct RxHalf<'a> {
    sock: &'a BackSock,
    rx: &'a mut Rx,
}

impl FcgiBack {
    /// A request on `sc` to an application of `app`, for a client connection `client`.
    pub fn new(sc: ServerConn, app: Arc<FcgiAppRt>, client: Client) -> FcgiBack {
        FcgiBack {
            sc: Some(sc),
            app,
            client,
            out: Vec::new(),
            tx_start: BodyLen::None,
            body_in_hand: Vec::new(),
            tx: AtomicRefCell::default(),
            rx: Rx::default(),
        }
    }

    fn conn(&self) -> &ServerConn {
        self.sc.as_ref().expect(RELEASED)
    }

    /// `option get-values` on a new connection: the GET_VALUES exchange before the
    /// first request (what came after the answer stays for the response).
    async fn ask_values(&mut self, timeout: Option<Duration>) -> Result<(), IoError> {
        let sc = self.sc.as_ref().expect(RELEASED);
        if !self.app.app.get_values || sc.from_pool {
            return Ok(());
        }
        match values::ask(&sc.stream, &mut self.rx.raw, self.app.app.max_reqs, timeout).await {
            Ok(_) => Ok(()),
            Err(e) => {
                self.rx.broken = true;
                Err(e)
            }
        }
    }

    /// The framing state of a body of `len` before any of it was sent.
    fn framing(len: BodyLen) -> TxFraming {
        match len {
            BodyLen::None | BodyLen::Known(0) => TxFraming::Done,
            BodyLen::Known(n) => TxFraming::Length(n),
            BodyLen::Unknown => TxFraming::Chunked(Box::default()),
        }
    }
}

/// Appends `bytes` of the request body (client framing) as STDIN records to `out`,
/// and the empty STDIN record once the body ended.
fn push_stdin(tx: &mut TxFraming, id: u16, bytes: &[u8], out: &mut Vec<u8>) {
    match tx {
        TxFraming::Done => return,
        TxFraming::Length(left) => {
            let n = (bytes.len() as u64).min(*left);
            fcgi::push_stream(out, Kind::Stdin, id, &bytes[..n as usize]);
            *left -= n;
            if *left == 0 {
                *tx = TxFraming::Done;
            }
        }
        TxFraming::Chunked(u) => {
            let mut data = Vec::new();
            u.feed(bytes, |d| data.extend_from_slice(d));
            fcgi::push_stream(out, Kind::Stdin, id, &data);
            if u.is_done() {
                *tx = TxFraming::Done;
            }
        }
    }
    if matches!(tx, TxFraming::Done) {
        fcgi::push_stream_end(out, Kind::Stdin, id);
    }
}

/// Gives every record in `out` (whole records, as built) the request id `id`: a
/// request kept for a retry goes on another connection, where its id may differ.
fn renumber(out: &mut [u8], id: u16) {
    let mut at = 0;
    while let Ok(Some((_, n))) = next_record(&out[at..]) {
        out[at + 2..at + 4].copy_from_slice(&id.to_be_bytes());
        at += n;
    }
}

/// The body bytes of a chunked body in `raw` (a copy: the decoder's state is not kept).
fn unchunked_len(raw: &[u8]) -> u64 {
    let mut u = Unchunk::default();
    let mut n = 0u64;
    u.feed(raw, |d| n += d.len() as u64);
    n
}

impl HttpBack for FcgiBack {
    type Send<'a> = TxHalf<'a>;
    type Recv<'a> = RxHalf<'a>;

    fn srv(&self) -> usize {
        self.conn().srv
    }

    fn reused(&self) -> bool {
        self.conn().from_pool
    }

    fn sni(&self) -> Option<&str> {
        self.conn().key.sni.as_deref()
    }

    fn sock(&self) -> Option<&BackSock> {
        Some(&self.conn().stream)
    }

    async fn send_request(
        &mut self,
        req: MsgView<'_>,
        how: ReqSend,
        body: &[u8],
        timeout: Option<Duration>,
    ) -> Result<(), IoError> {
        let in_hand = match how.body {
            BodyLen::None => 0,
            BodyLen::Known(n) => n.min(body.len() as u64),
            BodyLen::Unknown => unchunked_len(body),
        };
        let mut vars = Vec::with_capacity(1024);
        if params::push_params(&mut vars, req, &self.app, &self.client, in_hand).is_err() {
            // COMPAT: HAProxy fails such a request as a processing error; rampart as a
            // failed exchange with the server (502)
            self.rx.broken = true;
            return Err(IoError::Closed);
        }
        let id = req_id(self.conn().uses);
        let out = &mut self.out;
        out.clear();
        fcgi::push_begin_request(out, id, self.app.keep_conn);
        fcgi::push_stream(out, Kind::Params, id, &vars);
        fcgi::push_stream_end(out, Kind::Params, id);
        self.tx_start = how.body;
        self.body_in_hand.clear();
        self.body_in_hand.extend_from_slice(body);
        let mut tx = FcgiBack::framing(how.body);
        if matches!(tx, TxFraming::Done) {
            fcgi::push_stream_end(out, Kind::Stdin, id);
        } else {
            push_stdin(&mut tx, id, body, out);
        }
        *self.tx.borrow_mut() = tx;
        let app = self.app.stderr.is_some().then(|| self.app.clone());
        self.rx = Rx { method: req.head.method, version: req.head.version, app, id, ..Rx::default() };
        self.ask_values(timeout).await?;
        write_all(&self.conn().stream, &self.out, timeout).await
    }

    fn release(&mut self) {
        self.sc = None;
    }

    async fn resend(&mut self, sc: ServerConn, timeout: Option<Duration>) -> Result<(), IoError> {
        self.sc = Some(sc);
        let (method, version, app) = (self.rx.method, self.rx.version, self.rx.app.take());
        let id = req_id(self.conn().uses);
        self.rx = Rx { method, version, app, id, ..Rx::default() };
        renumber(&mut self.out, id);
        // the kept records hold the body bytes that came with the head: the body that
        // follows continues from there
        let mut tx = FcgiBack::framing(self.tx_start);
        push_stdin(&mut tx, id, &self.body_in_hand, &mut Vec::new());
        *self.tx.borrow_mut() = tx;
        self.ask_values(timeout).await?;
        write_all(&self.conn().stream, &self.out, timeout).await
    }

    fn split(&mut self) -> (TxHalf<'_>, RxHalf<'_>) {
        let sock = &self.sc.as_ref().expect(RELEASED).stream;
        (TxHalf { sock, tx: &self.tx, id: self.rx.id }, RxHalf { sock, rx: &mut self.rx })
    }

    fn finish(mut self) -> Option<(ServerConn, bool)> {
        let sc = self.sc.take().expect(RELEASED);
        let rx = &self.rx;
        let reusable = self.app.keep_conn && rx.ended && !rx.broken && rx.raw.is_empty() && rx.done && rx.id < LAST_ID;
        Some((sc, reusable))
    }
}

impl BackSend for TxHalf<'_> {
    async fn send_body(&self, bytes: &[u8], timeout: Option<Duration>) -> Result<(), IoError> {
        let mut out = Vec::with_capacity(bytes.len() + 16);
        push_stdin(&mut self.tx.borrow_mut(), self.id, bytes, &mut out);
        if out.is_empty() {
            return Ok(());
        }
        write_all(self.sock, &out, timeout).await
    }

    fn raw(&self) -> Option<&BackSock> {
        None
    }

    /// FastCGI carries no tunnel (the request's STDIN already ended with its body):
    /// nothing to tell the application.
    async fn end_tunnel(&self) {}
}

impl Rx {
    /// Files the whole records in `raw`: STDOUT content into `stdout`, END_REQUEST
    /// ends the response, STDERR is logged (`log-stderr`); management records are
    /// dropped. `Err`: a malformed record.
    fn file_records(&mut self) -> Result<(), fcgi::FcgiError> {
        let mut at = 0;
        let res = loop {
            if self.ended {
                // bytes after the end: the application is confused
                if at < self.raw.len() {
                    self.broken = true;
                }
                break Ok(());
            }
            match next_record(&self.raw[at..]) {
                Ok(Some((rec, n))) => {
                    at += n;
                    match rec.kind {
                        Kind::Stdout if rec.id == self.id => self.stdout.extend_from_slice(rec.content),
                        Kind::Stderr if rec.id == self.id => self.log_stderr(rec.content),
                        Kind::EndRequest if rec.id == self.id => {
                            let end = EndRequest::decode(rec.content)?;
                            self.ended = true;
                            self.broken |= end.protocol_status != fcgi::REQUEST_COMPLETE;
                        }
                        _ => {}
                    }
                }
                Ok(None) => break Ok(()),
                Err(e) => {
                    self.broken = true;
                    break Err(e);
                }
            }
        };
        self.raw.drain(..at);
        res
    }

    /// A STDERR record's content as one `err` line to the `log-stderr` targets (the
    /// line's trailing newlines dropped, as HAProxy's `__send_log()` does).
    fn log_stderr(&self, content: &[u8]) {
        let Some(log) = self.app.as_ref().and_then(|a| a.stderr.as_ref()) else { return };
        let mut end = content.len();
        while end > 0 && matches!(content[end - 1], b'\n' | 0) {
            end -= 1;
        }
        log.send(crate::log::level::ERR, &content[..end]);
    }

    /// Reads more bytes and files them; `Ok(false)`: the application closed.
    async fn read_more(&mut self, sock: &BackSock, timeout: Option<Duration>) -> Result<bool, IoError> {
        let n = read_some(sock, &mut self.raw, timeout).await?;
        if n == 0 {
            self.broken = true;
            return Ok(false);
        }
        self.file_records().map_err(|_| IoError::Closed)?;
        Ok(true)
    }

    /// Builds the response head `res` from the CGI head at the start of `stdout`.
    fn fill_head(&mut self, res: &mut MsgHead) {
        let cgi = &self.cgi;
        let hb = &mut self.head_buf;
        hb.clear();
        hb.extend_from_slice(&self.stdout[..cgi.len]);
        res.reset();
        res.version = Version::Http11;
        res.status = cgi.status;
        let mut has_date = false;
        for h in cgi.headers.iter().filter(|h| !h.drop) {
            has_date |= h.name.get(hb).eq_ignore_ascii_case(b"date");
            res.headers.push(*h);
        }
        res.reason = match cgi.reason {
            Reason::In(s) => s,
            Reason::Default => push(hb, default_reason(cgi.status).as_bytes()),
        };
        if !has_date {
            let name = push(hb, b"date");
            let date = jiff::Timestamp::now().strftime("%a, %d %b %Y %H:%M:%S GMT").to_string();
            let value = push(hb, date.as_bytes());
            res.headers.push(Header { name, value, kind: HdrKind::Other, drop: false });
        }
        self.stdout.drain(..cgi.len);
        let bodyless = self.method == Method::Head || matches!(cgi.status, 100..=199 | 204 | 304);
        self.body = match cgi.length {
            _ if bodyless => BodyLen::None,
            Some(n) => BodyLen::Known(n),
            // the whole response is here: its length is known (HAProxy's fcgi-app
            // filter adds `content-length` then)
            None if self.ended => {
                let n = self.stdout.len() as u64;
                let name = push(hb, b"content-length");
                let value = push(hb, n.to_string().as_bytes());
                res.headers.push(Header { name, value, kind: HdrKind::ContentLength, drop: false });
                BodyLen::Known(n)
            }
            None => BodyLen::Unknown,
        };
        if bodyless {
            self.stdout.clear();
        }
        res.body = self.body;
    }
}

/// Appends `bytes` to `buf` and returns their slice.
fn push(buf: &mut Vec<u8>, bytes: &[u8]) -> Slice {
    let start = buf.len();
    buf.extend_from_slice(bytes);
    Slice { start: start as u32, end: buf.len() as u32 }
}

impl BackRecv for RxHalf<'_> {
    async fn recv_head(&mut self, res: &mut MsgHead, wait: HeadWait<'_>) -> Result<Received, HeadError> {
        let rx = &mut *self.rx;
        loop {
            if !rx.stdout.is_empty() {
                match parse_cgi_head(&rx.stdout, 16 * 1024, &mut rx.cgi) {
                    Ok(true) => break,
                    Ok(false) => {}
                    Err(_) => {
                        rx.broken = true;
                        return Err(HeadError::Status(502));
                    }
                }
            }
            if rx.ended || rx.broken {
                return Err(HeadError::Status(502));
            }
            let nothing_yet = rx.raw.is_empty() && rx.stdout.is_empty();
            let seen = wait.upload.get();
            match rx.read_more(self.sock, wait.timeout).await {
                Ok(true) => {}
                Ok(false) if nothing_yet => return Err(HeadError::ClosedEarly),
                Ok(false) => return Err(HeadError::Status(502)),
                Err(IoError::Timeout) if wait.upload.get() != seen => {}
                Err(IoError::Timeout) => return Err(HeadError::Status(504)),
                Err(_) if nothing_yet && !rx.broken => return Err(HeadError::ClosedEarly),
                Err(_) => return Err(HeadError::Status(502)),
            }
        }
        rx.fill_head(res);
        res.arena_max = 16 * 1024;
        Ok(Received::Final)
    }

    fn res_buf(&self) -> &[u8] {
        &self.rx.head_buf
    }

    fn res_facts(&self) -> ResFacts {
        ResFacts { body: self.rx.body, until_close: false }
    }

    fn start_body(&mut self, _tunnel: bool) -> Result<Range<usize>, BodyError> {
        let rx = &mut *self.rx;
        rx.chunked = rx.body == BodyLen::Unknown;
        rx.left = match rx.body {
            BodyLen::Known(n) => n,
            _ => 0,
        };
        rx.done = matches!(rx.body, BodyLen::None | BodyLen::Known(0));
        let end = rx.head_buf.len();
        Ok(end..end)
    }

    async fn recv_body(&mut self, timeout: Option<Duration>) -> Result<Option<&[u8]>, BodyError> {
        let rx = &mut *self.rx;
        if rx.done {
            return Ok(None);
        }
        rx.out.clear();
        loop {
            if !rx.stdout.is_empty() {
                if rx.chunked {
                    crate::h1::write::push_chunk(&mut rx.out, &rx.stdout);
                    rx.stdout.clear();
                } else {
                    let n = (rx.stdout.len() as u64).min(rx.left) as usize;
                    rx.out.extend_from_slice(&rx.stdout[..n]);
                    // STDOUT past the announced length is not forwarded
                    rx.broken |= n < rx.stdout.len();
                    rx.stdout.clear();
                    rx.left -= n as u64;
                    rx.done = rx.left == 0;
                }
                if !rx.out.is_empty() {
                    return Ok(Some(&rx.out));
                }
            }
            if rx.ended {
                if rx.chunked {
                    rx.done = true;
                    rx.out.extend_from_slice(b"0\r\n\r\n");
                    return Ok(Some(&rx.out));
                }
                // END_REQUEST before the announced length: cut
                return Err(BodyError::Framing);
            }
            match rx.read_more(self.sock, timeout).await {
                Ok(true) => {}
                Ok(false) => return Err(BodyError::From(IoError::Closed)),
                Err(IoError::Closed) if rx.broken => return Err(BodyError::Framing),
                Err(e) => return Err(BodyError::From(e)),
            }
        }
    }

    fn raw_rest(&mut self) -> Option<RawRest<'_>> {
        None
    }

    fn raw_moved(&mut self, _moved: u64) {}

    fn body_done(&self) -> bool {
        self.rx.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_count_odd_numbers_up_to_the_last() {
        assert_eq!([req_id(0), req_id(1), req_id(2)], [1, 3, 5]);
        assert_eq!(req_id(0x3FFF), LAST_ID);
        assert_eq!(req_id(u32::MAX), LAST_ID);
    }

    #[test]
    fn a_kept_request_is_renumbered_for_another_connection() {
        let mut out = Vec::new();
        fcgi::push_begin_request(&mut out, 1, true);
        fcgi::push_stream(&mut out, Kind::Params, 1, b"\x01\x01ab");
        fcgi::push_stream_end(&mut out, Kind::Stdin, 1);
        renumber(&mut out, 7);
        let mut at = 0;
        let mut ids = Vec::new();
        while let Ok(Some((rec, n))) = next_record(&out[at..]) {
            ids.push((rec.kind, rec.id));
            at += n;
        }
        assert_eq!(ids, [(Kind::BeginRequest, 7), (Kind::Params, 7), (Kind::Stdin, 7)]);
    }
}
