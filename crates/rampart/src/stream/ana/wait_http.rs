//! What HAProxy does once a request head is parsed, before any rule: the frontend's
//! `monitor-uri` (answered at once, `200` or, when a `monitor fail` condition holds,
//! `503`), then its `capture request header` slots.
//! HAProxy counterpart: the end of `http_wait_for_request()` (src/http_ana.c).

use super::http_req::error_reply;
use super::Verdict;
use crate::action::capture::CapDir;
use crate::http::{uri, MsgView, Synth};
use crate::sample::ctx::Dir;
use crate::sample::vars::VarStore;
use crate::stream::{Stream, TxnData};

/// Runs on the request head of `txn` (slices into `buf`).
pub fn run<'rt>(
    s: &Stream<'rt>,
    txn: &mut TxnData,
    buf: &[u8],
    sess_vars: &VarStore,
    reply: &mut Option<Synth<'rt>>,
) -> Verdict {
    let rules = &s.rt.proxies[s.fe].rules;
    if let Some(mon) = &rules.monitor_uri {
        if is_monitor(txn.req.view(buf), mon) {
            let ctx =
                s.ctx(Dir::Request, Some((&txn.req, buf)), None, sess_vars, &txn.vars_txn, &txn.vars_reqres, &txn.st);
            let failed = rules.monitor_fail.iter().any(|c| c.eval(&ctx));
            error_reply(s, txn, Some(buf), sess_vars, if failed { 503 } else { 200 }, reply);
            return Verdict::Reply;
        }
    }
    txn.st.caps.headers(CapDir::Req, &rules.captures.req, txn.req.view(buf));
    Verdict::Continue
}

/// Whether the request is for the monitor URI: its path (query included) when the
/// monitor URI starts with `/`, else its whole target, compared byte for byte.
fn is_monitor(req: MsgView<'_>, mon: &[u8]) -> bool {
    let target = req.uri();
    (mon.first() == Some(&b'/') && uri::split(target).pathq == mon) || target == mon
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::MsgHead;
    use rampart_proto::http::Slice;

    fn matches(target: &str, mon: &str) -> bool {
        let head = MsgHead { uri: Slice { start: 0, end: target.len() as u32 }, ..MsgHead::default() };
        is_monitor(head.view(target.as_bytes()), mon.as_bytes())
    }

    #[test]
    fn the_monitor_uri_is_the_path_and_query_or_the_whole_target() {
        assert!(matches("/health", "/health"));
        assert!(matches("http://h:81/health", "/health"));
        assert!(!matches("/health?x=1", "/health"));
        assert!(matches("/health?x=1", "/health?x=1"));
        assert!(!matches("/Health", "/health"));
        assert!(!matches("/health/", "/health"));
        assert!(matches("*", "*"));
        assert!(matches("http://h/x", "http://h/x"));
    }
}
