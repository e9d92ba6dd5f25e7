//! The stream's side of SPOE: the messages of the `on-frontend-http-request` /
//! `on-backend-http-request` events before a proxy's `http-request` rules, and the
//! group a `send-spoe-group` rule asks for. Each exchange is awaited within the stream
//! (bounded by the agent's `timeout processing`); its answer or error becomes
//! variables, and the stream goes on whatever the agent did.
//! HAProxy counterpart: `spoe_chn_pre_analyze()`, `spoe_process_event()`,
//! `spoe_process_group()` (src/flt_spoe.c).
//!
//! PERF: [`on_request`] returns at once for a stream whose proxies have no engine.

use std::time::Instant;

use crate::sample::ctx::Dir;
use crate::sample::vars::VarStore;
use crate::spoe::{event_index, Outcome, SpoeEvent};

use super::{Stream, TxnData};

/// Sends the messages of proxy `px`'s request event: before the frontend's rules the
/// frontend's engines see `on-frontend-http-request`; before a backend's rules the
/// frontend's and the backend's engines see `on-backend-http-request`.
pub(super) async fn on_request(s: &Stream<'_>, txn: &mut TxnData, buf: &[u8], sess: &mut VarStore, px: usize) {
    let fe = s.fe;
    if s.rt.proxies[fe].rules.spoe.is_empty() && (px == fe || s.rt.proxies[px].rules.spoe.is_empty()) {
        return;
    }
    let owners: &[usize] = if px == fe { &[fe] } else { &[fe, px] };
    let ev = if px == fe { SpoeEvent::FrontendHttpRequest } else { SpoeEvent::BackendHttpRequest };
    for &owner in owners {
        for (i, eng) in s.rt.proxies[owner].rules.spoe.iter().enumerate() {
            let msgs = &eng.events[event_index(ev)];
            if !msgs.is_empty() {
                send(s, txn, buf, sess, owner, i, msgs).await;
            }
        }
    }
}

/// Sends the group a `send-spoe-group` rule of proxy `px` left in the stream's state;
/// the rule then lets the list go on.
pub(super) async fn send_group(s: &Stream<'_>, txn: &mut TxnData, buf: &[u8], sess: &mut VarStore, px: usize) {
    let Some(ask) = txn.st.spoe.as_mut().and_then(|t| t.pending.take()) else { return };
    if let Some(eng) = s.rt.proxies[px].rules.spoe.get(ask.engine) {
        if let Some(g) = eng.groups.get(ask.group) {
            send(s, txn, buf, sess, px, ask.engine, &g.messages).await;
        }
    }
    if let Some(t) = txn.st.spoe.as_mut() {
        t.done = true;
    }
}

/// One exchange: `msgs` of engine `idx` of proxy `owner` (those whose condition holds)
/// to its agent, and the answer applied.
async fn send(
    s: &Stream<'_>,
    txn: &mut TxnData,
    buf: &[u8],
    sess: &mut VarStore,
    owner: usize,
    idx: usize,
    msgs: &[usize],
) {
    let eng = &s.rt.proxies[owner].rules.spoe[idx];
    if txn.st.spoe.as_ref().is_some_and(|t| t.is_disabled(idx)) {
        return;
    }
    // `maxerrrate` reached: the messages are skipped, nothing is set (HAProxy)
    if crate::filter::spoe::over_error_rate(eng) {
        return;
    }
    let mut frame = Vec::new();
    let encoded = {
        let env = s.env(Dir::Request, sess, &txn.vars_txn, &txn.vars_reqres);
        let ctx = env.ctx(&txn.req, buf, &txn.st);
        eng.encode(msgs, &ctx, &mut frame)
    };
    let started = Instant::now();
    let outcome = match encoded {
        Ok(false) => return,
        Ok(true) => {
            let frame_id = txn.st.spoe.get_or_insert_with(Default::default).next_frame_id(eng.key);
            crate::filter::spoe::exchange(s.shared, eng, frame, (txn.st.uniq_id, frame_id)).await
        }
        Err(code) => {
            crate::filter::spoe::note_error(eng);
            Outcome::Error(code)
        }
    };
    let elapsed = started.elapsed();
    let t = txn.st.spoe.get_or_insert_with(Default::default);
    t.total += elapsed;
    let total = t.total;
    let failed = {
        let env = s.env(Dir::Request, sess, &txn.vars_txn, &txn.vars_reqres);
        let ctx = env.ctx(&txn.req, buf, &txn.st);
        let res = eng.apply(&outcome, elapsed, &ctx.vars);
        eng.set_total(total, &ctx.vars);
        res.is_err()
    };
    // without `option continue-on-error`, an error ends SPOE for the transaction
    if failed && !eng.continue_on_error && idx < 64 {
        if let Some(t) = txn.st.spoe.as_mut() {
            t.disabled |= 1 << idx;
        }
    }
}
