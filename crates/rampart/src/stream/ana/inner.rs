//! What HAProxy does to a request once every rule accepted it and its backend and
//! server are chosen, just before it leaves: the unique id (`unique-id-format`, sent
//! in `unique-id-header`), then `option forwardfor`, then `option originalto`.
//! HAProxy counterpart: `http_process_request()` (src/http_ana.c), steps 8 to 10.

use std::io::Write as _;
use std::net::IpAddr;

use crate::http::MsgHead;
use crate::sample::ctx::Dir;
use crate::sample::vars::VarStore;
use crate::stream::{Stream, TxnData};

/// Runs on the request head of `txn` (slices into `buf`).
pub fn run(s: &Stream<'_>, txn: &mut TxnData, buf: &[u8], sess_vars: &VarStore) {
    unique_id(s, txn, buf, sess_vars);
    forwarded_for(s, txn, buf);
    original_to(s, txn);
}

/// The stream's unique id is fixed now if no rule asked for it before (HAProxy renders
/// it here so that it may use what the rules set), and sent in `unique-id-header`.
fn unique_id(s: &Stream<'_>, txn: &mut TxnData, buf: &[u8], sess_vars: &VarStore) {
    let rules = &s.rt.proxies[s.fe].rules;
    if rules.unique_id.is_none() {
        return;
    }
    let ctx = s.ctx(Dir::Request, Some((&txn.req, buf)), None, sess_vars, &txn.vars_txn, &txn.vars_reqres, &txn.st);
    let id = ctx.unique_id();
    if let (Some(name), Some(id)) = (&rules.unique_id_header, id) {
        txn.scratch.clear();
        txn.scratch.extend_from_slice(id);
        // a failed rewrite is counted in the head (no room left for it)
        let _ = txn.req.add_header(name, &txn.scratch);
    }
}

/// `option forwardfor`: adds the client's address (as rules left it for this stream):
/// enabled by the frontend or the backend; the backend's header name wins; `if-none`
/// holds only if neither side asks to always add; a client in either side's `except`
/// network gets no header.
fn forwarded_for(s: &Stream<'_>, txn: &mut TxnData, buf: &[u8]) {
    let (fe, be) = (&s.rt.proxies[s.fe], s.be.map(|b| &s.rt.proxies[b]));
    let sides = [fe.forwardfor.as_ref(), be.and_then(|be| be.forwardfor.as_ref())];
    let Some(ff) = sides[1].or(sides[0]) else { return };
    let Some(ip) = txn.st.conn.src.map(|a| a.ip()) else { return };
    if sides.iter().flatten().any(|ff| ff.except.is_some_and(|net| net.contains(ip))) {
        return;
    }
    let always = sides.iter().flatten().any(|ff| !ff.if_none);
    let name = ff.header.as_bytes();
    if !always && txn.req.view(buf).first(name).is_some() {
        return;
    }
    add_ip(&mut txn.req, name, ip);
}

/// `option originalto`: adds the address the client connected to (as rules left it
/// for this stream): enabled by the frontend or the backend; the backend's header name
/// wins; a destination in either side's `except` network gets no header.
fn original_to(s: &Stream<'_>, txn: &mut TxnData) {
    let (fe, be) = (&s.rt.proxies[s.fe], s.be.map(|b| &s.rt.proxies[b]));
    let sides = [fe.originalto.as_ref(), be.and_then(|be| be.originalto.as_ref())];
    let Some(ot) = sides[1].or(sides[0]) else { return };
    let Some(ip) = txn.st.conn.dst().map(|a| a.ip()) else { return };
    if sides.iter().flatten().any(|ot| ot.except.is_some_and(|net| net.contains(ip))) {
        return;
    }
    add_ip(&mut txn.req, ot.header.as_bytes(), ip);
}

fn add_ip(req: &mut MsgHead, name: &[u8], ip: IpAddr) {
    let mut value = [0u8; 48];
    let mut cursor = &mut value[..];
    let _ = write!(cursor, "{ip}");
    let len = 48 - cursor.len();
    // a failed rewrite is counted in the head (no room left for it)
    let _ = req.add_header(name, &value[..len]);
}
