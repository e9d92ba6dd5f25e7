//! `http-request` rules, then the proxy's `redirect` rules: those of the frontend
//! before backend switching, those of the backend after it (a `listen` runs its own
//! once, as a frontend).
//! HAProxy counterpart: `http_process_req_common()` and `http_req_get_intercept_rule()`
//! (src/http_ana.c).

use super::Verdict;
use crate::action::http::{run_rules, Exec};
use crate::action::Flow;
use crate::http::Synth;
use crate::sample::ctx::Dir;
use crate::sample::vars::VarStore;
use crate::stream::{Stream, TxnData};

/// Runs the `http-request` and `redirect` rules of proxy `px` on the request head;
/// `buf` is where its slices point. A reply is built in `txn.synth` and `reply`.
pub fn run<'rt>(
    s: &Stream<'rt>,
    txn: &mut TxnData,
    buf: &[u8],
    px: usize,
    sess_vars: &VarStore,
    reply: &mut Option<Synth<'rt>>,
) -> Verdict {
    let rules = &s.rt.proxies[px].rules;
    if rules.http_req.is_empty() && rules.redirects.is_empty() {
        return Verdict::Continue;
    }
    let TxnData { req, synth, vars_txn, vars_reqres, scratch, strict, .. } = txn;
    let env = s.env(Dir::Request, sess_vars, vars_txn, vars_reqres);
    let pages = s.pages(px);
    let mut x = Exec { msg: req, buf, out: synth, reply, pages, scratch, strict };
    let mut flow = run_rules(&rules.http_req, &mut x, &env);
    if matches!(flow, Flow::Continue | Flow::Allow) {
        flow = run_rules(&rules.redirects, &mut x, &env);
    }
    verdict(flow)
}

/// The stream's verdict for what a rule list decided.
pub fn verdict(flow: Flow) -> Verdict {
    match flow {
        Flow::Continue | Flow::Allow => Verdict::Continue,
        Flow::Reply => Verdict::Reply,
        Flow::Tarpit => Verdict::Tarpit,
        Flow::Close => Verdict::Close,
    }
}
