//! The per-thread agent state without sockets: frames queued on a pipelined
//! connection up to `max-waiting-frames`, ACKs matched by stream-id and frame-id in
//! any order, on the frame's connection only unless `async`.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::agent::{self, Pick};
use crate::proxy::Runtime;
use crate::sample::testutil;
use crate::spoe::Engine;

fn engine(key: usize, max_waiting_frames: u32) -> Engine {
    Engine {
        id: "e".into(),
        agent: "a".into(),
        be: 1,
        messages: Box::new([]),
        groups: Box::new([]),
        events: Default::default(),
        var_prefix: "pfx".into(),
        on_error: None,
        process_time: None,
        total_time: None,
        continue_on_error: false,
        async_mode: true,
        pipelining: true,
        send_frag_payload: true,
        max_waiting_frames,
        maxconnrate: 0,
        maxerrrate: 0,
        max_frame_size: 16380,
        timeout_hello: None,
        timeout_idle: None,
        timeout_processing: None,
        key,
    }
}

fn runtime() -> Arc<Runtime> {
    Arc::new(testutil::runtime(&testutil::config(testutil::CFG)))
}

/// Queues a frame with `ids` (its bytes: the stream-id) and returns what it waits on.
fn queue(rt: &Arc<Runtime>, eng: &Engine, ids: super::Ids) -> agent::Pending {
    let build = |_: u32, _: bool| Ok(vec![ids.0 as u8]);
    match agent::pick(rt, eng, ids, &build) {
        Pick::Sent(p) => p,
        _ => panic!("not queued on the pipelined connection"),
    }
}

fn answered(p: &mut agent::Pending) -> Option<agent::Answer> {
    p.rx.as_mut().unwrap().try_recv().ok()
}

#[test]
fn acks_in_any_order_reach_their_frames() {
    let (rt, eng) = (runtime(), engine(1, 20));
    let (tx, mut wire) = mpsc::unbounded_channel();
    let conn = agent::add_mux(&eng, tx, 16380, false);
    let mut a = queue(&rt, &eng, (5, 1));
    let mut b = queue(&rt, &eng, (6, 1));
    assert_eq!((wire.try_recv().unwrap(), wire.try_recv().unwrap()), (vec![5], vec![6]));
    assert_eq!(agent::inflight(eng.key, conn), 2);
    assert!(agent::answer(eng.key, conn, false, (6, 1), b"B"));
    assert!(agent::answer(eng.key, conn, false, (5, 1), b"A"));
    assert_eq!((answered(&mut a), answered(&mut b)), (Some(Ok(b"A".to_vec())), Some(Ok(b"B".to_vec()))));
    // an ACK nobody waits for is ignored
    assert!(!agent::answer(eng.key, conn, false, (5, 2), b"late"));
    drop((a, b));
    assert_eq!(agent::inflight(eng.key, conn), 0);
}

#[test]
fn max_waiting_frames_then_a_new_connection() {
    let (rt, eng) = (runtime(), engine(2, 2));
    let (tx, _wire) = mpsc::unbounded_channel();
    let _conn = agent::add_mux(&eng, tx, 16380, false);
    let _a = queue(&rt, &eng, (1, 1));
    let _b = queue(&rt, &eng, (2, 1));
    let build = |_: u32, _: bool| Ok(vec![3]);
    assert!(matches!(agent::pick(&rt, &eng, (3, 1), &build), Pick::Connect(_)), "the connection is full");
}

#[test]
fn only_async_acks_may_come_on_another_connection() {
    let (rt, eng) = (runtime(), engine(3, 1));
    let (tx1, _w1) = mpsc::unbounded_channel();
    let (tx2, _w2) = mpsc::unbounded_channel();
    let c1 = agent::add_mux(&eng, tx1, 16380, false);
    let c2 = agent::add_mux(&eng, tx2, 16380, false);
    let mut a = queue(&rt, &eng, (1, 1));
    let mut b = queue(&rt, &eng, (2, 1));
    // frame (1, 1) went on c1, (2, 1) on c2 (one frame per connection)
    assert!(!agent::answer(eng.key, c2, false, (1, 1), b"x"), "not async: only c1 answers it");
    assert!(agent::answer(eng.key, c2, true, (1, 1), b"A"));
    assert_eq!(answered(&mut a), Some(Ok(b"A".to_vec())));
    // c2 closes: its frame fails unless async
    agent::drop_mux(eng.key, c2, false, 257);
    assert_eq!(answered(&mut b), Some(Err(257)));
    let _ = c1;
}
