//! One HTTP request/response exchange, from a parsed request head to the end of the
//! response, through the analysers in HAProxy's order:
//!
//! 1. `http-request` rules of the frontend (`ana::http_req`),
//! 2. backend switching (`ana::switching`),
//! 3. `http-request` rules of the backend, then `option forwardfor`,
//! 4. server connection (the front mux connects or reuses, [`HttpFront::connect`]),
//! 5. forward (the front mux sends the request and streams the bodies),
//! 6. `http-response` rules of the backend then the frontend, `http-after-response`
//!    (`ana::http_res`), run by the front mux on the response head before writing it.
//!
//! The stream works on the protocol-neutral message (`crate::http`) and talks to the
//! client side through [`HttpFront`]: it never names a protocol.
//! HAProxy counterpart: stream.c process_stream() with http_ana.c's analysers.
//!
//! - `side`: [`HttpFront`], the contract with the front muxes
//! - `txn`: [`Txn`], the request and response heads of one exchange
//! - `ana`: one file per analyser

pub mod ana;
pub mod side;
mod txn;

use std::io::Write as _;

use crate::errors::StreamError;
use crate::http::Synth;
use crate::proxy::Runtime;
use crate::sample::ctx::ConnInfo;
pub use ana::Verdict;
pub use side::{Conn, ConnectFail, Forwarded, HttpFront, ReqMeta};
pub use txn::{Txn, TxnData};

/// What the client connection does after an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Wait for the next request.
    KeepAlive,
    Close,
}

/// The state the analysers share during one exchange.
#[derive(Debug)]
pub struct Stream<'a> {
    pub rt: &'a Runtime,
    pub conn: &'a ConnInfo,
    /// The frontend (index into `rt.proxies`).
    pub fe: usize,
    /// The backend once switching chose it.
    pub be: Option<usize>,
    /// The server a rule chose (`use-server`), if any.
    pub srv: Option<usize>,
    /// The response rampart built, once an analyser decided to answer.
    pub reply: Option<Synth<'a>>,
}

/// Runs one exchange for the request whose head is in `txn.req` (its slices point into
/// [`HttpFront::req_buf`]). Returns what the client connection does next.
pub async fn run<F: HttpFront>(front: &mut F, rt: &Runtime, conn: &ConnInfo, fe: usize, txn: &mut Txn) -> Next {
    let mut s = Stream { rt, conn, fe, be: None, srv: None, reply: None };
    match ana::http_req::run(&mut s, txn, fe) {
        Verdict::Continue => {}
        Verdict::Reply => return reply(front, &mut s, txn).await,
        Verdict::Close => return Next::Close,
    }
    let Some(be) = ana::switching::run(&mut s) else {
        return error(front, &mut s, txn, 503).await;
    };
    s.be = Some(be);
    rt.proxies[be].be.cum_conn.inc();
    if be != fe {
        match ana::http_req::run(&mut s, txn, be) {
            Verdict::Continue => {}
            Verdict::Reply => return reply(front, &mut s, txn).await,
            Verdict::Close => return Next::Close,
        }
    }
    add_forwarded_for(&s, txn, front.req_buf());

    let server = match front.connect(be, s.srv).await {
        Ok(c) => c,
        Err(ConnectFail::NoServer) => return error(front, &mut s, txn, 503).await,
        Err(ConnectFail::Aborted) => return Next::Close,
    };
    let TxnData { req, res } = &mut **txn;
    let forwarded = front.forward(server, be, req, res, |res, buf| ana::http_res::run(&mut s, res, buf)).await;
    match forwarded {
        Forwarded::Done(next) => next,
        Forwarded::Failed(code) => error(front, &mut s, txn, code).await,
        Forwarded::Replaced => reply(front, &mut s, txn).await,
        Forwarded::Closed => Next::Close,
    }
}

/// Sends the response an analyser built (in `txn.res` and `s.reply`).
async fn reply<F: HttpFront>(front: &mut F, s: &mut Stream<'_>, txn: &mut Txn) -> Next {
    match s.reply.take() {
        Some(reply) => front.reply(&txn.res, &reply).await,
        None => Next::Close,
    }
}

/// Answers with the error page for `code` (502, 503, 504 ...): the backend's
/// `errorfile` first, then the frontend's, then HAProxy's default.
async fn error<F: HttpFront>(front: &mut F, s: &mut Stream<'_>, txn: &mut Txn, code: u16) -> Next {
    let pages = match s.be.map(|be| &s.rt.proxies[be]) {
        Some(be) if be.errors.is_custom(code) => &be.errors,
        _ => &s.rt.proxies[s.fe].errors,
    };
    match pages.stream(code) {
        StreamError::Page(tpl) => {
            s.reply = Some(tpl.instantiate(&mut txn.res));
            reply(front, s, txn).await
        }
        StreamError::Raw(bytes) => front.reply_raw(bytes).await,
        StreamError::Nothing => Next::Close,
    }
}

/// `option forwardfor`: adds the client's address, as HAProxy (`http_process_request`)
/// does after the backend's rules: enabled by the frontend or the backend; the
/// backend's header name wins; `if-none` holds only if neither side asks to always add;
/// a client in either side's `except` network gets no header.
fn add_forwarded_for(s: &Stream<'_>, txn: &mut Txn, buf: &[u8]) {
    let (fe, be) = (&s.rt.proxies[s.fe], s.be.map(|b| &s.rt.proxies[b]));
    let sides = [fe.forwardfor.as_ref(), be.and_then(|be| be.forwardfor.as_ref())];
    let Some(ff) = sides[1].or(sides[0]) else { return };
    let Some(ip) = s.conn.src.map(|a| a.ip()) else { return };
    if sides.iter().flatten().any(|ff| ff.except.is_some_and(|net| net.contains(ip))) {
        return;
    }
    let always = sides.iter().flatten().any(|ff| !ff.if_none);
    let name = ff.header.as_bytes();
    if !always && txn.req.view(buf).first(name).is_some() {
        return;
    }
    let mut value = [0u8; 48];
    let mut cursor = &mut value[..];
    let _ = write!(cursor, "{ip}");
    let len = 48 - cursor.len();
    // a failed rewrite is counted in the head (no room left for it)
    let _ = txn.req.add_header(name, &value[..len]);
}
