//! A response served from the cache in place of a server (`http-request cache-use`
//! found the object): the stored response with its `Age`, or `304 Not Modified` for a
//! conditional request it satisfies, through the `http-response` and
//! `http-after-response` rules and the response filters like a server's response
//! (`filter compression` after `filter cache` compresses a hit as HAProxy does: the
//! object is stored as the server sent it, and a hit is compressed and sent piece by
//! piece), written by the front mux as any response rampart builds (so HTTP/2 clients
//! get it too).
//!
//! As HAProxy's applets, a hit skips what a server needs: a frontend's hit chooses no
//! backend (the log line reads `fe/<CACHE>`), a backend's no server (`be/<CACHE>`),
//! and the request is not changed for a server (`unique-id-header`, `forwardfor`).
//! HAProxy counterpart: the cache applet (`http_cache_io_handler()`,
//! `htx_cache_add_age_hdr()`, src/cache.c), the applet branch of
//! `http_process_req_common()` (src/http_ana.c).

use std::borrow::Cow;

use super::ana::http_res::ResState;
use super::side::Streamed;
use super::{ana, send_built, HttpFront, Next, Stream, Txn, TxnData, Verdict};
use crate::back::BackRecv;
use crate::filter::object::ObjectRx;
use crate::filter::ResFilter;
use crate::http::reply::Synth;
use crate::http::MsgHead;
use crate::sample::vars::VarStore;

/// Answers the request from the object `cache-use` found.
pub(super) async fn serve<F: HttpFront>(front: &mut F, s: &mut Stream<'_>, txn: &mut Txn, sess: &mut VarStore) -> Next {
    let Some((idx, entry)) = txn.st.cache.hit.take() else { return Next::Close };
    // PERF: the head alone is copied; the body is sent from the object
    let Some(tpl) = crate::h1::msg::parse_reply(entry.head()) else { return Next::Close };
    // the filters' request side runs for an applet too (HAProxy keeps
    // `AN_REQ_FLT_HTTP_HDRS`): the compression algorithm, `filter trace`
    ana::filters::request(s, txn, front.req_buf());
    txn.st.flt.cache_hit = Some(idx);
    if s.be.is_none() {
        // intercepted by the frontend (`intercepted` in its stats row), as HAProxy
        // counts an applet its frontend chose
        s.rt.proxies[s.fe].stats.fe_intercepted.inc();
    }
    let not_modified =
        crate::cache::rules::not_modified(txn.req.view(front.req_buf()), entry.etag.as_deref(), entry.last_modified);
    let mut head = MsgHead { arena_max: s.rt.bufsize, ..MsgHead::default() };
    let mut reply = tpl.instantiate(&mut head);
    reply.body = Cow::Borrowed(entry.body());
    let _ = head.add_header(b"Age", entry.age_at(crate::cache::now()).to_string().as_bytes());
    if not_modified {
        let _ = head.set_status(304, b"Not Modified");
        head.del_header(reply.buf, b"content-length");
        reply.body = Cow::Borrowed(&[]);
    }
    // whether it will be compressed is decided before the rules (`res.comp`)
    ana::filters::response_head(s, &mut txn.st, &head, reply.buf, false);
    // a shorter-lived view of the stream: the reply borrows the object
    let mut s2 = Stream {
        rt: s.rt,
        shared: s.shared,
        conn: s.conn,
        fe: s.fe,
        be: s.be,
        srv: s.srv,
        first_req: s.first_req,
        meth: s.meth,
        ver: s.ver,
    };
    let TxnData { synth, vars_txn, vars_reqres, scratch, strict, st, .. } = &mut **txn;
    let mut again = None;
    let mut rs =
        ResState { synth, vars_txn, vars_reqres, sess_vars: &mut *sess, scratch, strict, reply: &mut again, st };
    let mut v = ana::http_res::run(&s2, &mut head, reply.buf, None, &mut rs);
    let mut body = None;
    loop {
        match v {
            // the whole object is in hand: the rules after a `wait-for-body` read it
            Verdict::WaitBody(_) => body = Some(&reply.body[..]),
            // a Lua action waits: then the rules resume it
            Verdict::LuaWait(w) => crate::action::lua::wait(w).await,
            _ => break,
        }
        v = ana::http_res::run(&s2, &mut head, reply.buf, body, &mut rs);
    }
    match v {
        Verdict::Continue | Verdict::WaitBody(_) | Verdict::Resolve | Verdict::LuaWait(_) | Verdict::Spoe => {}
        Verdict::Reply | Verdict::Tarpit => return send_built(front, &mut s2, txn, sess, again).await,
        Verdict::Close => return Next::Close,
        Verdict::SilentDrop => {
            front.silent_drop();
            return Next::Close;
        }
    }
    let mut filters = ana::filters::response_filters(&s2, &mut txn.st, &mut head, reply.buf);
    txn.synth.copy_from(&head);
    if !filters.is_active() {
        return send_built(front, &mut s2, txn, sess, Some(reply)).await;
    }
    if matches!(head.status, 100..=199 | 204 | 304) {
        // no body to filter (a `304` is never compressed): the taps see it end
        filters.taps.iter_mut().for_each(|t| t.end());
        return send_built(front, &mut s2, txn, sess, Some(reply)).await;
    }
    streamed(front, &mut s2, txn, sess, reply, filters).await
}

/// Sends a hit whose body goes through the response filters (compression, `filter
/// trace`) piece by piece, each piece filtered (compressed and flushed) and written
/// before the next, as HAProxy's cache applet and compression filter do
/// (`crate::filter::object`): a piece is what a buffer gives a message
/// (`tune.bufsize` less `tune.maxrewrite`).
async fn streamed<'a, F: HttpFront>(
    front: &mut F,
    s: &mut Stream<'a>,
    txn: &mut Txn,
    sess: &mut VarStore,
    mut reply: Synth<'a>,
    filters: ResFilter,
) -> Next {
    let body = std::mem::take(&mut reply.body);
    let (reply, replaced) = match super::after_built(front, s, txn, sess, reply) {
        Ok(r) => r,
        Err(next) => return next,
    };
    if replaced {
        // a failed rewrite's error page replaced the object
        return front.reply(&txn.synth, &reply).await;
    }
    let mut rx = ObjectRx::new(&body, filters, s.rt.max_head);
    let facts = rx.res_facts();
    let Ok(first) = rx.start() else { return Next::Close };
    let whole = rx.body_done();
    let out = Streamed { buf: reply.buf, facts, first: &first, whole, close: reply.close, body: &mut rx };
    front.reply_streamed(&txn.synth, out).await
}
