//! The response of a Lua HTTP service that streams it (the script started its
//! response, then waited: `crate::action::lua::Slot::stream`): the head and what the
//! script sent so far go to the client, then each later turn's output as it comes,
//! while the stream drives the script (its sleeps, its sockets) between the writes.
//! HAProxy counterpart: `hlua_applet_http_fct()` writing into the response channel
//! (src/hlua.c).

use std::time::Duration;

use tokio::sync::mpsc;

use super::side::Streamed;
use super::{after_built, HttpFront, Next, Stream, Txn, TxnData};
use crate::action::http::Exec;
use crate::action::lua::{HttpPiece, HttpStream};
use crate::back::{BackRecv, BodyError, HeadError, HeadWait, RawRest, Received, ResFacts};
use crate::http::{BodyLen, MsgHead, Synth};
use crate::sample::ctx::Dir;
use crate::sample::vars::VarStore;

/// Sends the reply the service's first turns built, then the rest of its output as
/// the script produces it.
pub(super) async fn send<'rt, F: HttpFront>(
    front: &mut F,
    s: &mut Stream<'rt>,
    txn: &mut Txn,
    sess: &mut VarStore,
    reply: Synth<'rt>,
    svc: HttpStream,
) -> Next {
    let (reply, replaced) = match after_built(front, s, txn, sess, reply) {
        Ok(r) => r,
        Err(next) => return next,
    };
    if replaced {
        // a failed rewrite's error page replaced the response
        return front.reply(&txn.synth, &reply).await;
    }
    let head: MsgHead = txn.synth.clone();
    let facts = ResFacts { body: svc.length.map_or(BodyLen::Unknown, BodyLen::Known), until_close: false };
    let close = reply.close;
    // pieces go to the front in HTTP/1 framing, as a server's body comes
    let chunked = svc.length.is_none();
    let first = frame(reply.body.into_owned(), chunked);
    // one piece in flight: the script runs its next turn once the last one is written
    let (tx, rx) = mpsc::channel::<Result<Vec<u8>, ()>>(1);
    let client = async move {
        let mut body = PieceRx { rx, cur: Vec::new(), chunked, done: false };
        let out = Streamed { buf: &[], facts, first: &first, whole: false, close, body: &mut body };
        front.reply_streamed(&head, out).await
    };
    let (next, ()) = tokio::join!(client, drive(s, txn, sess, svc, tx));
    next
}

/// Runs the script's turns, handing each turn's output to the client half, until it
/// returns, fails, or the client half is gone.
// the variables are held mutably (not shared) so that the future stays `Send`
async fn drive(
    s: &Stream<'_>,
    txn: &mut Txn,
    sess: &mut VarStore,
    svc: HttpStream,
    tx: mpsc::Sender<Result<Vec<u8>, ()>>,
) {
    let mut wait = svc.wait;
    loop {
        tokio::select! {
            () = crate::action::lua::wait(wait) => {}
            () = tx.closed() => return,
        }
        let mut out = Vec::new();
        let step = turn(s, txn, sess, svc.id, &mut out);
        if !out.is_empty() && tx.send(Ok(out)).await.is_err() {
            return;
        }
        match step {
            HttpPiece::Wait(w) => wait = w,
            HttpPiece::Done => return,
            HttpPiece::Failed => {
                let _ = tx.send(Err(())).await;
                return;
            }
        }
    }
}

/// One turn of the script: the request head is gone (its fetches see none), the
/// stream's variables and state are there.
fn turn(s: &Stream<'_>, txn: &mut Txn, sess: &VarStore, id: usize, out: &mut Vec<u8>) -> HttpPiece {
    let Some(runner) = crate::action::lua::runner() else { return HttpPiece::Failed };
    let TxnData { vars_txn, vars_reqres, scratch, strict, st, .. } = &mut **txn;
    let env = s.env(Dir::Request, sess, vars_txn, vars_reqres);
    let (mut msg, mut head, mut reply) = (MsgHead::default(), MsgHead::default(), None);
    let pages = s.pages(s.be.unwrap_or(s.fe));
    let mut x = Exec { msg: &mut msg, buf: &[], out: &mut head, reply: &mut reply, pages, scratch, strict, st };
    runner.http_service_piece(id, &mut x, &env, out)
}

/// `piece` as it goes on the wire: a chunk of its own when `chunked` (none when empty).
fn frame(piece: Vec<u8>, chunked: bool) -> Vec<u8> {
    if !chunked || piece.is_empty() {
        return piece;
    }
    let mut out = format!("{:x}\r\n", piece.len()).into_bytes();
    out.extend_from_slice(&piece);
    out.extend_from_slice(b"\r\n");
    out
}

/// The service's output as a response body source for the client half, in HTTP/1
/// framing (the last chunk after the last piece when `chunked`).
struct PieceRx {
    rx: mpsc::Receiver<Result<Vec<u8>, ()>>,
    cur: Vec<u8>,
    chunked: bool,
    done: bool,
}

impl BackRecv for PieceRx {
    async fn recv_head(&mut self, _res: &mut MsgHead, _wait: HeadWait<'_>) -> Result<Received, HeadError> {
        unreachable!("a service's head is built before its body streams")
    }

    fn res_buf(&self) -> &[u8] {
        &[]
    }

    fn res_facts(&self) -> ResFacts {
        ResFacts { body: BodyLen::Unknown, until_close: false }
    }

    fn start_body(&mut self, _tunnel: bool) -> Result<std::ops::Range<usize>, BodyError> {
        Ok(0..0)
    }

    async fn recv_body(&mut self, _timeout: Option<Duration>) -> Result<Option<&[u8]>, BodyError> {
        match self.rx.recv().await {
            Some(Ok(piece)) => {
                self.cur = frame(piece, self.chunked);
                Ok(Some(&self.cur))
            }
            // the script failed: the response is cut short
            Some(Err(())) => Err(BodyError::Framing),
            None if self.done => Ok(None),
            None => {
                self.done = true;
                if !self.chunked {
                    return Ok(None);
                }
                self.cur = b"0\r\n\r\n".to_vec();
                Ok(Some(&self.cur))
            }
        }
    }

    fn raw_rest(&mut self) -> Option<RawRest<'_>> {
        None
    }

    fn raw_moved(&mut self, _moved: u64) {}

    fn body_done(&self) -> bool {
        self.done
    }
}
