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

use crate::action::http::Env;
use crate::errors::{ErrorPages, StreamError};
use crate::http::{MsgHead, Synth};
use crate::proxy::Runtime;
use crate::sample::ctx::{ConnInfo, Dir};
use crate::sample::vars::{Scope, VarStore, Vars};
use crate::sample::SampleCtx;
use ana::http_res::ResState;
use ana::switching::Input;
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
    /// Whether this is the first request of its connection.
    pub first_req: bool,
}

impl<'a> Stream<'a> {
    /// A sample context over the stream and the heads given (each with the buffer
    /// its slices point into).
    pub fn ctx<'c>(
        &'c self,
        dir: Dir,
        req: Option<(&'c MsgHead, &'c [u8])>,
        res: Option<(&'c MsgHead, &'c [u8])>,
        sess: &'c VarStore,
        txn: &'c VarStore,
        reqres: &'c VarStore,
    ) -> SampleCtx<'c> {
        SampleCtx {
            be: self.be,
            srv: self.srv,
            dir,
            req: req.map(|(m, b)| m.view(b)),
            res: res.map(|(m, b)| m.view(b)),
            vars: Vars {
                proc: Some(&self.rt.proc_vars),
                sess: Some(sess),
                txn: Some(txn),
                reqres: Some(reqres),
                check: None,
            },
            first_req: self.first_req,
            ..SampleCtx::new(self.rt, self.conn, self.fe)
        }
    }

    /// What rules build their sample contexts from.
    pub fn env<'c>(&'c self, dir: Dir, sess: &'c VarStore, txn: &'c VarStore, reqres: &'c VarStore) -> Env<'c> {
        Env {
            rt: self.rt,
            conn: self.conn,
            fe: self.fe,
            be: self.be,
            srv: self.srv,
            first_req: self.first_req,
            dir,
            sess,
            txn,
            reqres,
        }
    }

    /// The error pages for replies of rules of proxy `px`: its own, then the
    /// frontend's.
    pub fn pages(&self, px: usize) -> [&'a ErrorPages; 2] {
        [&self.rt.proxies[px].errors, &self.rt.proxies[self.fe].errors]
    }
}

/// Runs one exchange for the request whose head is in `txn.req` (its slices point into
/// [`HttpFront::req_buf`]). Returns what the client connection does next.
pub async fn run<F: HttpFront>(front: &mut F, rt: &Runtime, conn: &ConnInfo, fe: usize, txn: &mut Txn) -> Next {
    let mut sess_vars = front.take_sess_vars().unwrap_or_else(|| Box::new(VarStore::new(Scope::Sess)));
    let first_req = front.req_meta().first;
    let mut s = Stream { rt, conn, fe, be: None, srv: None, first_req };
    let next = exchange(front, &mut s, txn, &mut sess_vars).await;
    // the stream's variables end with it; the session's stay with the connection
    let vars = Vars {
        proc: Some(&rt.proc_vars),
        sess: Some(&sess_vars),
        txn: Some(&txn.vars_txn),
        reqres: Some(&txn.vars_reqres),
        check: None,
    };
    vars.prune(Scope::Txn);
    vars.prune(txn.vars_reqres.scope());
    txn.vars_reqres.rescope(Scope::Req);
    if !sess_vars.is_empty() {
        front.keep_sess_vars(sess_vars);
    }
    next
}

async fn exchange<F: HttpFront>(front: &mut F, s: &mut Stream<'_>, txn: &mut Txn, sess: &mut VarStore) -> Next {
    let mut reply: Option<Synth<'_>> = None;
    let fe = s.fe;
    let v = ana::http_req::run(s, txn, front.req_buf(), fe, sess, &mut reply);
    if v != Verdict::Continue {
        return conclude(front, s, txn, sess, v, reply).await;
    }
    let Some(be) = ana::switching::backend(s, input(txn, front.req_buf(), sess)) else {
        return error(front, s, txn, sess, 503).await;
    };
    s.be = Some(be);
    s.rt.proxies[be].be.cum_conn.inc();
    if be != fe {
        let v = ana::http_req::run(s, txn, front.req_buf(), be, sess, &mut reply);
        if v != Verdict::Continue {
            return conclude(front, s, txn, sess, v, reply).await;
        }
    }
    s.srv = ana::switching::server(s, be, input(txn, front.req_buf(), sess));
    add_forwarded_for(s, txn, front.req_buf());

    let server = match front.connect(be, s.srv).await {
        Ok(c) => c,
        Err(ConnectFail::NoServer) => return error(front, s, txn, sess, 503).await,
        Err(ConnectFail::Aborted) => return Next::Close,
    };
    let TxnData { req, res, synth, vars_txn, vars_reqres, scratch, strict } = &mut **txn;
    let mut st = ResState { synth, vars_txn, vars_reqres, sess_vars: &mut *sess, scratch, strict, reply: &mut reply };
    let stream = &*s;
    let forwarded = front.forward(server, be, req, res, |res, buf| ana::http_res::run(stream, res, buf, &mut st)).await;
    match forwarded {
        Forwarded::Done(next) => next,
        Forwarded::Failed(code) => error(front, s, txn, sess, code).await,
        Forwarded::Replaced => send_built(front, s, txn, sess, reply).await,
        Forwarded::Closed => Next::Close,
    }
}

/// The backend of a TCP-mode stream (`use_backend` rules over the connection, else
/// the default backend); `None`: no backend.
pub fn tcp_backend(rt: &Runtime, conn: &ConnInfo, fe: usize) -> Option<usize> {
    let s = Stream { rt, conn, fe, be: None, srv: None, first_req: true };
    ana::switching::backend_l4(&s)
}

fn input<'t>(txn: &'t mut TxnData, buf: &'t [u8], sess: &'t VarStore) -> Input<'t> {
    Input { req: &txn.req, buf, sess, txn: &txn.vars_txn, reqres: &txn.vars_reqres, scratch: &mut txn.scratch }
}

/// Ends the exchange as a request analyser decided.
async fn conclude<'rt, F: HttpFront>(
    front: &mut F,
    s: &mut Stream<'rt>,
    txn: &mut Txn,
    sess: &mut VarStore,
    v: Verdict,
    reply: Option<Synth<'rt>>,
) -> Next {
    match v {
        Verdict::Continue | Verdict::Reply => send_built(front, s, txn, sess, reply).await,
        Verdict::Tarpit => {
            // HAProxy holds a tarpitted request for `timeout tarpit`, then answers.
            let px = s.be.unwrap_or(s.fe);
            if let Some(d) = s.rt.proxies[px].rules.tarpit {
                tokio::time::sleep(d).await;
            }
            send_built(front, s, txn, sess, reply).await;
            Next::Close
        }
        Verdict::Close => Next::Close,
    }
}

/// Sends the response an analyser built (in `txn.synth` and `reply`), after the
/// `http-after-response` rules.
async fn send_built<'rt, F: HttpFront>(
    front: &mut F,
    s: &mut Stream<'rt>,
    txn: &mut Txn,
    sess: &mut VarStore,
    reply: Option<Synth<'rt>>,
) -> Next {
    let Some(mut reply) = reply else { return Next::Close };
    let TxnData { synth, vars_txn, vars_reqres, scratch, strict, .. } = &mut **txn;
    let mut again: Option<Synth<'rt>> = None;
    let mut scratch_head = MsgHead::default();
    let mut st = ResState {
        synth: &mut scratch_head,
        vars_txn,
        vars_reqres,
        sess_vars: &mut *sess,
        scratch,
        strict,
        reply: &mut again,
    };
    let buf = reply.buf;
    match ana::http_res::after(s, synth, buf, &mut st) {
        Verdict::Continue => {}
        Verdict::Close => return Next::Close,
        // an after-response rule cannot build a reply; a failed rewrite did
        Verdict::Reply | Verdict::Tarpit => {
            if let Some(r) = again {
                std::mem::swap(synth, &mut scratch_head);
                reply = r;
            }
        }
    }
    front.reply(synth, &reply).await
}

/// Answers with the error page for `code` (502, 503, 504 ...): the backend's
/// `errorfile` first, then the frontend's, then HAProxy's default.
async fn error<F: HttpFront>(front: &mut F, s: &mut Stream<'_>, txn: &mut Txn, sess: &mut VarStore, code: u16) -> Next {
    let pages = match s.be.map(|be| &s.rt.proxies[be]) {
        Some(be) if be.errors.is_custom(code) => &be.errors,
        _ => &s.rt.proxies[s.fe].errors,
    };
    match pages.stream(code) {
        StreamError::Page(tpl) => {
            let reply = tpl.instantiate(&mut txn.synth);
            send_built(front, s, txn, sess, Some(reply)).await
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
