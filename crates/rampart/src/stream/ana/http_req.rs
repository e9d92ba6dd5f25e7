//! `http-request` rules: those of the frontend before backend switching, those of the
//! backend after it (a `listen` runs its own once, as a frontend).
//! HAProxy counterpart: `http_process_req_common()` and `http_req_get_intercept_rule()`
//! (src/http_ana.c).

use super::Verdict;
use crate::stream::{Stream, Txn};

/// Runs the `http-request` rules of proxy `px`.
pub fn run(s: &mut Stream<'_>, txn: &mut Txn, px: usize) -> Verdict {
    let proxy = &s.rt.proxies[px];
    if let Some(reply) = &proxy.http_return {
        s.reply = Some(reply.instantiate(&mut txn.res));
        return Verdict::Reply;
    }
    Verdict::Continue
}
