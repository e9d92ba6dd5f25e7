//! The statistics page served in place of the backend when a request asks for a proxy's
//! `stats uri` (after that proxy's `http-request` rules), as HAProxy's stats applet
//! takes over the stream. What the page says is `crate::stats::page`'s; this builds and
//! sends the response, after reading the body of an admin form POST.
//! HAProxy counterpart: http_handle_stats() in http_ana.c.

use std::borrow::Cow;

use super::{ana, conclude, send_built, wait_body, HttpFront, Next, Stream, Txn};
use crate::action::reply::start_head;
use crate::action::WaitBody;
use crate::http::Synth;
use crate::sample::ctx::Dir;
use crate::sample::vars::VarStore;
use crate::stats::page::{Answer, Ask};

/// Whether the request is for proxy `px`'s statistics page (it has one, the method is
/// GET, HEAD or POST, the URI is the page's): [`serve`] answers it. PERF: asked first so
/// that the page's future is made (`cold`, on the heap) only for the page's requests.
pub(super) fn asked<F: HttpFront>(front: &F, s: &Stream<'_>, txn: &Txn, px: usize) -> bool {
    let Some(page) = s.rt.proxies[px].stats_page.as_deref() else { return false };
    let view = txn.req.view(front.req_buf());
    matches!(view.method(), b"GET" | b"HEAD" | b"POST") && page.options(view.uri()).is_some()
}

/// Serves proxy `px`'s statistics page if it has one and the request is for it (GET,
/// HEAD or POST: other methods go on to the backend, as in HAProxy). A POST with admin
/// rights waits for its body, the form.
pub(super) async fn serve<F: HttpFront>(
    front: &mut F,
    s: &mut Stream<'_>,
    txn: &mut Txn,
    sess: &mut VarStore,
    px: usize,
) -> Option<Next> {
    let page = s.rt.proxies[px].stats_page.as_deref()?;
    let (post, admin, allowed) = {
        let view = txn.req.view(front.req_buf());
        let post = match view.method() {
            b"GET" | b"HEAD" => false,
            b"POST" => true,
            _ => return None,
        };
        page.options(view.uri())?;
        // counted before the page is rendered, as HAProxy does
        s.rt.proxies[s.fe].stats.fe_intercepted.inc();
        (post, admin_allowed(s, txn, front.req_buf(), sess, px), page.allows(view.first(b"authorization")))
    };
    if post && admin && allowed {
        let mut reply = None;
        let all = WaitBody { time: None, at_least: 0 };
        if let Some(v) = wait_body(front, s, txn, sess, all, &mut reply).await {
            return Some(conclude(front, s, txn, sess, v, reply).await);
        }
    }
    let answer = {
        let view = txn.req.view(front.req_buf());
        let options = page.options(view.uri()).unwrap_or_default();
        let ask = if post { Ask::Post(front.req_body().unwrap_or_default()) } else { Ask::Read };
        page.answer(s.rt, px, options, view.first(b"authorization"), admin, ask)
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

/// Whether one of proxy `px`'s `stats admin` conditions holds for the request.
fn admin_allowed(s: &Stream<'_>, txn: &Txn, buf: &[u8], sess: &VarStore, px: usize) -> bool {
    let conds = &s.rt.proxies[px].rules.stats_admin;
    if conds.is_empty() {
        return false;
    }
    let ctx = s.ctx(Dir::Request, Some((&txn.req, buf)), None, sess, &txn.vars_txn, &txn.vars_reqres, &txn.st);
    conds.iter().any(|c| c.eval(&ctx))
}
