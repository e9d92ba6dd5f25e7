//! `option checkcache` (backend): a response a shared cache could store together with
//! the `Set-Cookie` the server sent is blocked, as an `http-response deny` would block
//! it (502, termination state `PH`, a denied response in the counters), and reported
//! on stderr and in the backend's logs at alert level, so that the application that
//! leaks a user's cookie to a cache gets fixed.
//! HAProxy counterpart: the `PR_O_CHK_CACHE` test at the end of
//! `http_process_res_common()`, `http_check_response_for_cacheability()`
//! (src/http_ana.c).
//!
//! COMPAT: HAProxy 2.6.12 answers such a response with its `200 Service ready` page
//! (its `deny` path keeps the server's status to pick the page, fixed in later
//! versions); rampart answers 502 as configuration.txt says and HAProxy 3.2 does.

use super::http_res::ResState;
use super::Verdict;
use crate::action::http::Exec;
use crate::http::MsgHead;
use crate::log::{Cause, Phase};
use crate::sample::ctx::Dir;
use crate::sample::host::Host;
use crate::stream::Stream;

/// Whether the backend checks responses and the server's response carries a cookie
/// (looked at before the persistence cookie is inserted: only the server's count).
pub(super) fn server_sets_cookie(s: &Stream<'_>, res: &MsgHead, buf: &[u8]) -> bool {
    let checks = s.be.is_some_and(|b| s.rt.proxies[b].checkcache);
    checks && {
        let view = res.view(buf);
        view.first(b"set-cookie").is_some() || view.first(b"set-cookie2").is_some()
    }
}

/// Blocks the response when a shared cache could store it with its cookie (`sets_cookie`:
/// [`server_sets_cookie`]); `None` lets it through.
pub(super) fn check<'rt>(
    s: &Stream<'rt>,
    sets_cookie: bool,
    res: &mut MsgHead,
    buf: &[u8],
    st: &mut ResState<'_, 'rt>,
) -> Option<Verdict> {
    if !sets_cookie || !crate::http::cookie::cacheable_with_cookie(s.meth, res.view(buf)) {
        return None;
    }
    let be = s.be?;
    report(s, be);
    s.rt.count_denied(Dir::Response, s.fe, s.be, s.srv);
    st.st.log.end_by(Cause::Proxy, Phase::Headers);
    let env = s.env(Dir::Response, st.sess_vars, st.vars_txn, st.vars_reqres);
    let mut x = Exec {
        msg: res,
        buf,
        out: st.synth,
        reply: st.reply,
        pages: s.pages(be),
        scratch: st.scratch,
        strict: st.strict,
        st: st.st,
    };
    crate::action::reply::build_default(&mut x, &env, 502);
    Some(Verdict::Reply)
}

/// HAProxy's alert, on stderr and in the backend's logs.
fn report(s: &Stream<'_>, be: usize) {
    let px = &s.rt.proxies[be];
    let srv = s.srv.and_then(|i| px.be.servers.get(i)).filter(|sv| sv.is_shown());
    let srv = srv.map_or("<dispatch>", |sv| sv.name.as_str());
    let msg = format!("Blocking cacheable cookie in response from instance {}, server {srv}.\n", px.name);
    let line = format!("[ALERT]    ({}) : {msg}", std::process::id());
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    if let Some(pl) = px.log.as_deref() {
        pl.loggers.send(crate::log::level::ALERT, msg.as_bytes());
    }
}
