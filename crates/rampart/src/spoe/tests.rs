use std::time::Duration;

use rampart_proto::spoe::frame::{decode_notify, encode_ack};
use rampart_proto::spoe::{next_frame, Action, Data, VarScope, MAX_FRAME_SIZE};

use super::*;
use crate::sample::vars::{Scope, VarStore};

fn engine(on_error: bool) -> Engine {
    let txn = |n: &str| Some(parse_name(format!("txn.pfx.{n}").as_bytes()).unwrap());
    Engine {
        id: "e".into(),
        agent: "a".into(),
        be: 0,
        messages: Box::new([]),
        groups: Box::new([]),
        events: Default::default(),
        var_prefix: "pfx".into(),
        on_error: if on_error { txn("err") } else { None },
        process_time: txn("ptime"),
        total_time: txn("ttime"),
        continue_on_error: false,
        async_mode: false,
        pipelining: false,
        send_frag_payload: true,
        max_waiting_frames: 20,
        maxconnrate: 0,
        maxerrrate: 0,
        max_frame_size: MAX_FRAME_SIZE,
        timeout_hello: None,
        timeout_idle: None,
        timeout_processing: None,
        key: 0,
    }
}

fn get(vars: &Vars<'_>, name: &str) -> Option<Sample<'static>> {
    vars.get(&parse_name(name.as_bytes()).unwrap())
}

#[test]
fn ack_actions_become_prefixed_variables() {
    let (sess, txn, req) = (VarStore::new(Scope::Sess), VarStore::new(Scope::Txn), VarStore::new(Scope::Req));
    let vars = Vars { sess: Some(&sess), txn: Some(&txn), reqres: Some(&req), ..Vars::default() };
    let mut frame = Vec::new();
    let acts = [
        Action::SetVar { scope: VarScope::Sess, name: b"ip_score", value: Data::Uint32(42) },
        Action::SetVar { scope: VarScope::Req, name: b"tag", value: Data::Str(b"x") },
        Action::SetVar { scope: VarScope::Txn, name: b"gone", value: Data::Bool(true) },
        Action::UnsetVar { scope: VarScope::Txn, name: b"gone" },
        // `proc` variables must exist already
        Action::SetVar { scope: VarScope::Proc, name: b"p", value: Data::Int64(1) },
    ];
    encode_ack(&mut frame, 1, 1, &acts).unwrap();
    let (f, _) = next_frame(&frame, MAX_FRAME_SIZE).unwrap().unwrap();
    let eng = engine(true);
    let out = Outcome::Ack(f.payload.to_vec());
    assert_eq!(eng.apply(&out, Duration::from_millis(7), &vars), Ok(()));
    assert_eq!(get(&vars, "sess.pfx.ip_score"), Some(Sample::Sint(42)));
    assert_eq!(get(&vars, "req.pfx.tag"), Some(Sample::Str(b"x".to_vec().into())));
    assert_eq!(get(&vars, "txn.pfx.gone"), None);
    assert_eq!(get(&vars, "txn.pfx.ptime"), Some(Sample::Sint(7)));
    assert_eq!(get(&vars, "txn.pfx.err"), None);
    eng.set_total(Duration::from_millis(9), &vars);
    assert_eq!(get(&vars, "txn.pfx.ttime"), Some(Sample::Sint(9)));
}

#[test]
fn errors_set_the_on_error_variable() {
    let (sess, txn, req) = (VarStore::new(Scope::Sess), VarStore::new(Scope::Txn), VarStore::new(Scope::Req));
    let vars = Vars { sess: Some(&sess), txn: Some(&txn), reqres: Some(&req), ..Vars::default() };
    let eng = engine(true);
    assert_eq!(eng.apply(&Outcome::Error(ERR_TIMEOUT), Duration::ZERO, &vars), Err(ERR_TIMEOUT));
    assert_eq!(get(&vars, "txn.pfx.err"), Some(Sample::Sint(1)));
    // an ACK whose action is cut is a SPOP "invalid frame" error (256 + 4)
    let bad = Outcome::Ack(vec![1, 3, 1, 9, b'a']);
    assert_eq!(eng.apply(&bad, Duration::ZERO, &vars), Err(ERR_SPOP + 4));
    assert_eq!(get(&vars, "txn.pfx.err"), Some(Sample::Sint(260)));
    // no `set-on-error`: nothing is set, the error is still reported
    let quiet = engine(false);
    let txn2 = VarStore::new(Scope::Txn);
    let vars2 = Vars { txn: Some(&txn2), ..vars };
    assert_eq!(quiet.apply(&Outcome::Error(ERR_UNKNOWN), Duration::ZERO, &vars2), Err(ERR_UNKNOWN));
    assert_eq!(get(&vars2, "txn.pfx.err"), None);
}

#[test]
fn samples_map_to_typed_data_and_back() {
    let smp = Sample::Ipv4([10, 1, 2, 3].into());
    assert_eq!(to_data(Some(&smp)), Data::Ipv4([10, 1, 2, 3]));
    assert_eq!(to_data(None), Data::Null);
    assert_eq!(to_data(Some(&Sample::Sint(-3))), Data::Int64(-3));
    assert_eq!(from_data(&Data::Uint64(5)), Some(Sample::Sint(5)));
    assert_eq!(from_data(&Data::Null), None);
    // a NOTIFY with no message is still a frame: the writer's output decodes
    let mut out = Vec::new();
    let eng = engine(false);
    let ctx_free = eng.messages.is_empty();
    assert!(ctx_free);
    let w = NotifyWriter::new(&mut out, 0, 0);
    w.finish(MAX_FRAME_SIZE).unwrap();
    let (f, _) = next_frame(&out, MAX_FRAME_SIZE).unwrap().unwrap();
    assert!(decode_notify(f.payload).unwrap().is_empty());
    assert_eq!(out.len(), 11, "stream-id and frame-id take one byte each for the connection to rewrite");
}

#[test]
fn frame_ids_count_per_engine_from_one() {
    let mut t = super::SpoeTxn::default();
    assert_eq!((t.next_frame_id(7), t.next_frame_id(7), t.next_frame_id(3), t.next_frame_id(7)), (1, 2, 1, 3));
}
