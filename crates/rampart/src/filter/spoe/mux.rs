//! A pipelined agent connection (the agent announced `pipelining` or `async`): a task
//! of the thread writes the NOTIFY frames streams queue (up to `max-waiting-frames` in
//! flight) and hands each ACK to the stream whose stream-id and frame-id it carries,
//! whatever the order the agent answers in. With `async`, an ACK may also answer a frame
//! sent on another connection of the agent. The connection closes after `timeout
//! idle` without traffic and nothing in flight, or on the agent's DISCONNECT or a
//! protocol error (the frames waiting on it then fail, unless `async`).
//! HAProxy counterpart: the SPOE applet's PROCESSING state (`spoe_handle_processing_appctx()`,
//! `spoe_handle_agentack_frame()`, src/flt_spoe.c).

use std::time::Duration;

use rampart_proto::spoe::{next_frame, status, Disconnect, FrameType, MAX_FRAME_SIZE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use super::agent;
use super::conn::{self, AgentConn};
use crate::spoe::{Engine, ERR_SPOP};

/// What [`drain`] ends on for a fragmented ACK (not a SPOP status).
const FRAG_ACK: u32 = u32::MAX;

/// Turns `conn` into a pipelined connection run by a task of this thread.
pub(super) fn start(eng: &Engine, conn: AgentConn) {
    let (tx, rx) = mpsc::unbounded_channel();
    let id = agent::add_mux(eng, tx, conn.max_frame, conn.caps.fragmentation);
    let idle = eng.timeout_idle;
    drop(tokio::spawn(run(conn, eng.key, id, rx, idle)));
}

async fn run(conn: AgentConn, key: usize, id: u64, mut rx: mpsc::UnboundedReceiver<Vec<u8>>, idle: Option<Duration>) {
    let AgentConn { mut sock, caps, slot, rest, .. } = conn;
    let async_ = caps.async_;
    let mut buf = rest;
    buf.reserve(4096);
    let mut last = tokio::time::Instant::now();
    // what came behind the agent's HELLO first (already counted in the stats)
    let code = match drain(&mut buf, key, id, async_) {
        Err(code) => code,
        Ok(()) => loop {
            let idle_end = async {
                match idle {
                    Some(t) => tokio::time::sleep_until(last + t).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                frame = rx.recv() => {
                    let Some(frame) = frame else { break status::NONE };
                    if sock.write_all(&frame).await.is_err() {
                        break status::IO;
                    }
                    slot.sent(frame.len());
                    last = tokio::time::Instant::now();
                }
                read = sock.read_buf(&mut buf) => {
                    match read {
                        Ok(0) | Err(_) => break status::IO,
                        Ok(n) => slot.received(n),
                    }
                    if let Err(code) = drain(&mut buf, key, id, async_) {
                        break code;
                    }
                    last = tokio::time::Instant::now();
                }
                () = idle_end => {
                    if agent::inflight(key, id) == 0 {
                        break status::NONE;
                    }
                    last = tokio::time::Instant::now();
                }
            }
        },
    };
    // a fragmented ACK: HAProxy 2.6 disconnects, and what waits on the connection
    // fails at once with the status the disconnection ends on
    let code = match code {
        FRAG_ACK => {
            agent::retire_mux(key, id);
            let code = conn::disconnect(&mut sock, status::FRAG_NOT_SUPPORTED, &mut buf).await;
            (ERR_SPOP + code) | conn::FINAL
        }
        code => ERR_SPOP + code,
    };
    // no stream may queue on it any more; what waits on it fails (but with `async`)
    agent::drop_mux(key, id, async_, code);
    rx.close();
    drop(slot);
}

/// Hands the complete frames at the start of `buf` to their streams; `Err` is the
/// status the connection ends with, or [`FRAG_ACK`].
fn drain(buf: &mut Vec<u8>, key: usize, conn: u64, async_: bool) -> Result<(), u32> {
    let mut used = 0;
    let res = loop {
        match next_frame(&buf[used..], MAX_FRAME_SIZE) {
            Ok(Some((f, n))) => {
                used += n;
                match f.ty {
                    // as HAProxy 2.6: fragmented ACKs are not supported
                    FrameType::Ack if !f.is_fin() => break Err(FRAG_ACK),
                    FrameType::Ack => {
                        agent::answer(key, conn, async_, (f.stream_id, f.frame_id), f.payload);
                    }
                    FrameType::AgentDisconnect => {
                        break Err(Disconnect::decode(f.payload).map_or(status::INVALID, |d| d.status));
                    }
                    _ => break Err(status::INVALID),
                }
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e.status()),
        }
    };
    buf.drain(..used);
    res
}
