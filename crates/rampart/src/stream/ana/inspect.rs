//! `tcp-request content` rules in HTTP mode: run once per request, the frontend's
//! before its `http-request` rules, the backend's right after switching, on the parsed
//! request (HTTP fetches work; the payload fetches find nothing, as in HAProxy where
//! they are meaningless on HTX buffers).
//!
//! As in HAProxy 2.6, the inspection is final (`wait_end` true, a missing sample no
//! match) once the whole request is in hand (a bodyless request at once), the buffer
//! is full, or `tcp-request inspect-delay` expired; before that, a rule whose
//! condition may still change makes the stream wait for more of the body
//! ([`Verdict::WaitBody`]) and run the list again from the top.
//! HAProxy counterpart: `tcp_inspect_request()` (src/tcp_rules.c) as the
//! `AN_REQ_INSPECT_FE` and `AN_REQ_INSPECT_BE` analysers of an HTTP stream.

use std::time::Duration;

use super::Verdict;
use crate::action::tcp::{run_tcp_rules_from, TcpExec};
use crate::action::{TcpFlow, WaitBody};
use crate::sample::ctx::Dir;
use crate::sample::vars::{VarStore, Vars};
use crate::stream::{Stream, TxnData};

/// Runs the `tcp-request content` rules of proxy `px` on the request head (slices into
/// `buf`). `reject` closes the connection; `accept` ends the list. Not `final_data`, a
/// condition that may still change returns [`Verdict::WaitBody`] (for the rest of the
/// inspect delay, `left`): wait for more of the request, then run again.
///
/// What they change of the addresses and captures is the stream's (`txn.st`).
///
/// `from`: the rule to start at (0; after a [`Verdict::LuaWait`], the rule whose
/// script waits, set here).
#[allow(clippy::too_many_arguments)]
pub fn run(
    s: &Stream<'_>,
    txn: &mut TxnData,
    buf: &[u8],
    px: usize,
    sess: &VarStore,
    final_data: bool,
    left: Option<Duration>,
    from: &mut usize,
) -> Verdict {
    let rt = s.rt;
    let rules = &rt.proxies[px].rules.tcp_req;
    if rules.is_empty() {
        return Verdict::Continue;
    }
    let TxnData { req, vars_txn, vars_reqres, scratch, st, .. } = txn;
    let vars = Vars {
        proc: Some(&rt.proc_vars),
        sess: Some(sess),
        txn: Some(vars_txn),
        reqres: Some(vars_reqres),
        check: None,
    };
    let mut x = TcpExec {
        rt,
        fe: s.fe,
        be: s.be,
        dir: Dir::Request,
        conn: &mut st.conn,
        payload: None,
        req: Some((req, buf)),
        res: None,
        caps: &mut st.caps,
        vars,
        first_req: s.first_req,
        scratch,
        last_rule: st.last_rule,
        log_level: st.log.level,
        sc: Some(&mut st.sc),
        http: true,
        fc: st.fc,
        log: Some(&st.log),
        lua: Some(&mut st.lua),
        final_data: false,
        resolving: Some(&mut st.resolving),
        chan: None,
    };
    let (flow, at) = run_tcp_rules_from(rules, std::mem::take(from), final_data, &mut x);
    let (last_rule, log_level, fc) = (x.last_rule, x.log_level, x.fc);
    st.last_rule = last_rule;
    st.log.level = log_level;
    st.fc = fc;
    match flow {
        // (a script waits for data through a channel, refused in HTTP streams)
        TcpFlow::Wait | TcpFlow::LuaInput => Verdict::WaitBody(WaitBody { time: left, at_least: 0 }),
        TcpFlow::LuaWait(w) => {
            *from = at;
            Verdict::LuaWait(w)
        }
        TcpFlow::Resolve => {
            *from = at;
            Verdict::Resolve
        }
        // (`use-service` in `tcp-request content` is refused in HTTP proxies, as in
        // HAProxy 2.6)
        TcpFlow::Continue | TcpFlow::Accept | TcpFlow::CloseServer | TcpFlow::Service(_) | TcpFlow::SwitchHttp(_) => {
            Verdict::Continue
        }
        TcpFlow::Reject => {
            rt.proxies[s.fe].fe.denied_req.inc();
            Verdict::Close
        }
        TcpFlow::SilentDrop => {
            rt.proxies[s.fe].fe.denied_req.inc();
            Verdict::SilentDrop
        }
    }
}
