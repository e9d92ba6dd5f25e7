//! The statistics page served in place of the backend when a request asks for a proxy's
//! `stats uri` (after that proxy's `http-request` rules), as HAProxy's stats applet
//! takes over the stream. What the page says is `crate::stats::page`'s; this builds and
//! sends the response. HAProxy counterpart: http_handle_stats() in http_ana.c.

use std::borrow::Cow;

use super::{ana, send_built, HttpFront, Next, Stream, Txn};
use crate::action::reply::start_head;
use crate::http::Synth;
use crate::sample::vars::VarStore;
use crate::stats::page::Answer;

/// Serves proxy `px`'s statistics page if it has one and the request is for it.
pub(super) async fn serve<F: HttpFront>(
    front: &mut F,
    s: &mut Stream<'_>,
    txn: &mut Txn,
    sess: &mut VarStore,
    px: usize,
) -> Option<Next> {
    let page = s.rt.proxies[px].stats_page.as_deref()?;
    let answer = {
        let view = txn.req.view(front.req_buf());
        let options = page.options(view.uri())?;
        // counted before the page is rendered, as HAProxy does
        s.rt.proxies[s.fe].stats.fe_intercepted.inc();
        page.answer(s.rt, options, view.first(b"authorization"), view.method() == b"POST")
    };
    let mut reply = None;
    match answer {
        Answer::Unauthorized(challenge) => {
            ana::http_req::error_reply(s, txn, Some(front.req_buf()), sess, 401, &mut reply);
            if reply.as_ref().is_some_and(|r: &Synth<'_>| !r.raw) {
                let _ = txn.synth.add_header(b"www-authenticate", &challenge);
            }
        }
        Answer::SeeOther(location) => {
            let head = &mut txn.synth;
            start_head(head, 303, "See Other");
            let _ = head.add_header(b"cache-control", b"no-cache");
            let _ = head.add_header(b"content-type", b"text/plain");
            let _ = head.add_header(b"content-length", b"0");
            let _ = head.add_header(b"location", &location);
            reply = Some(Synth::built(Cow::Borrowed(&[])));
        }
        Answer::Ok { content_type, body, refresh } => {
            let head = &mut txn.synth;
            start_head(head, 200, "OK");
            let _ = head.add_header(b"cache-control", b"no-cache");
            let _ = head.add_header(b"content-type", content_type.as_bytes());
            if let Some(r) = refresh {
                let _ = head.add_header(b"refresh", r.to_string().as_bytes());
            }
            let _ = head.add_header(b"content-length", body.len().to_string().as_bytes());
            reply = Some(Synth::built(Cow::Owned(body)));
        }
    }
    Some(send_built(front, s, txn, sess, reply).await)
}
