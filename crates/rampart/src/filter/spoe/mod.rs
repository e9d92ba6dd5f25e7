//! Connections to SPOE agents, as the stream awaits them in [`exchange`]: a NOTIFY goes
//! out on a pipelined connection with room (`max-waiting-frames`), else on an idle
//! unpipelined one, else on a new connection (within `maxconnrate`), and its ACK comes
//! back by stream-id and frame-id. Nothing here blocks a thread.
//! HAProxy counterpart: the SPOE applets of src/flt_spoe.c (`spoe_queue_context()`,
//! `spoe_create_appctx()`, `spoe_handle_sending_frame_appctx()`,
//! `spoe_handle_receiving_frame_appctx()`).
//!
//! - `agent`: the per-thread state of each agent (connections, waiting frames, rates)
//! - `conn`: connecting, the HELLO handshake, one NOTIFY on an unpipelined connection
//! - `mux`: the task of a pipelined connection
//!
//! A NOTIFY too large for one frame goes out in fragments (`rampart_proto::spoe::frag`,
//! HAProxy 2.6's cuts) when the agent announced `fragmentation`; COMPAT: cut by the
//! max-frame-size of the connection it goes on (HAProxy: the smallest of the thread's
//! connections), all fragments written at once. Fragmented ACKs are refused as HAProxy
//! 2.6 does: a DISCONNECT with status 10, then what waits on the connection fails at
//! once (`conn::disconnect`, `conn::FINAL`).
//!
//! PERF: only streams of a proxy with `filter spoe` come here.

mod agent;
mod conn;
mod mux;

use std::sync::Arc;

use rampart_proto::spoe::status;

use self::agent::Pick;
use self::conn::Fail;
use crate::proxy::Runtime;
use crate::spoe::{Engine, Outcome, ERR_RES, ERR_SPOP, ERR_TIMEOUT};

/// A NOTIFY's stream-id (the stream's `uniq_id`) and frame-id.
pub type Ids = (u64, u64);

pub use self::agent::over_error_rate;

/// Sends `frame` (a NOTIFY from [`Engine::encode`], its ids 0) to an agent of `eng` with
/// the ids `ids` and waits for its ACK, within `timeout processing`.
pub async fn exchange(rt: &Arc<Runtime>, eng: &Engine, frame: Vec<u8>, ids: Ids) -> Outcome {
    let started = tokio::time::Instant::now();
    let res = match eng.timeout_processing {
        Some(t) => match tokio::time::timeout(t, send(rt, eng, &frame, ids)).await.unwrap_or(Err(ERR_TIMEOUT)) {
            Err(code) if code & conn::FINAL != 0 => Err(code & !conn::FINAL),
            // COMPAT: HAProxy 2.6 keeps the frame for another connection of the
            // agent to answer (with or without `option async`), and reports the
            // timeout at the deadline
            Err(code) if code != ERR_TIMEOUT && code != ERR_RES => {
                tokio::time::sleep_until(started + t).await;
                Err(ERR_TIMEOUT)
            }
            res => res,
        },
        None => send(rt, eng, &frame, ids).await.map_err(|c| c & !conn::FINAL),
    };
    match res {
        Ok(payload) => Outcome::Ack(payload),
        Err(code) => {
            agent::note_error(eng);
            Outcome::Error(code)
        }
    }
}

/// Counts an error for `maxerrrate` that did not come from [`exchange`] (a frame too
/// big to send).
pub fn note_error(eng: &Engine) {
    agent::note_error(eng);
}

/// Sends the frame on the connection [`agent::pick`] gives, waiting while every
/// connection is busy and no new one may open.
async fn send(rt: &Arc<Runtime>, eng: &Engine, frame: &[u8], ids: Ids) -> Result<Vec<u8>, u32> {
    // an idle connection the agent closed meanwhile fails before any answer: try
    // again once on another one
    let mut retried = false;
    loop {
        let build = |max: u32, frag: bool| {
            conn::with_ids(frame, ids, max, frag).map_err(|f| match f {
                Fail::Code(c) => c,
                Fail::Closed => ERR_SPOP + status::IO,
            })
        };
        match agent::pick(rt, eng, ids, &build) {
            Pick::Sent(mut pending) => {
                let rx = pending.rx.take().expect("a receiver");
                return rx.await.unwrap_or(Err(ERR_SPOP + status::IO));
            }
            Pick::Idle(mut c) => match conn::notify(&mut c, frame, ids).await {
                Ok(payload) => {
                    agent::put_idle(eng, c);
                    return Ok(payload);
                }
                Err(Fail::Closed) if !retried => retried = true,
                Err(Fail::Closed) => return Err(ERR_SPOP + status::IO),
                Err(Fail::Code(c)) => return Err(c),
            },
            Pick::Connect(slot) => {
                let mut c = conn::connect(rt, eng, slot).await?;
                if c.caps.multiplexed() {
                    // the next turn queues the frame on it
                    mux::start(eng, c);
                    continue;
                }
                return match conn::notify(&mut c, frame, ids).await {
                    Ok(payload) => {
                        agent::put_idle(eng, c);
                        Ok(payload)
                    }
                    Err(Fail::Closed) => Err(ERR_SPOP + status::IO),
                    Err(Fail::Code(c)) => Err(c),
                };
            }
            Pick::Wait(freed) => freed.notified().await,
            Pick::Fail(code) => return Err(code),
        }
    }
}

#[cfg(test)]
mod tests;
