//! One connection to an SPOE agent: opened to a server of the engine's `use-backend`
//! backend (its balancing and health state pick the server, and the connection counts
//! in the server's and backend's `show stat` columns while open), greeted with a
//! HAPROXY-HELLO announcing `pipelining` and `async` as configured, and, when the
//! agent announced neither back, used for one NOTIFY at a time.
//! HAProxy counterpart: `spoe_handle_connect_appctx()`, `spoe_prepare_hahello_frame()`,
//! `spoe_handle_agenthello_frame()`, the `SPOE_APPCTX_ST_WAITING_SYNC_ACK` state of
//! src/flt_spoe.c.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rampart_proto::spoe::{
    frag, next_frame, status, status_reason, AgentHello, Disconnect, FrameType, HaproxyHello, MAX_FRAME_SIZE,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::agent::Slot;
use super::Ids;
use crate::proxy::Runtime;
use crate::spoe::{Engine, ERR_SPOP, ERR_TIMEOUT, ERR_TOO_BIG};

/// What the agent and rampart both announced in the HELLO handshake.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Caps {
    pub pipelining: bool,
    pub async_: bool,
    /// The agent announced `fragmentation`: it takes fragmented NOTIFY frames (rampart
    /// never announces it: fragmented ACKs are refused, as HAProxy 2.6).
    pub fragmentation: bool,
}

impl Caps {
    /// Whether several NOTIFY frames may be in flight on the connection (HAProxy's
    /// applet stays in its PROCESSING state with either).
    pub fn multiplexed(self) -> bool {
        self.pipelining || self.async_
    }
}

/// One greeted connection to an agent.
pub(super) struct AgentConn {
    pub sock: TcpStream,
    /// The max-frame-size the agent announced.
    pub max_frame: u32,
    pub caps: Caps,
    pub idle_since: Instant,
    /// Its place in the thread's count of the agent's connections and in the stats.
    pub slot: Slot,
    /// Bytes read past the AGENT-HELLO: an `async` agent may send an ACK for another
    /// connection's frame right behind it, and the first read may take both.
    pub rest: Vec<u8>,
}

/// Why a NOTIFY got no ACK.
pub(super) enum Fail {
    /// The connection closed or failed before any byte of an answer.
    Closed,
    /// The `set-on-error` code.
    Code(u32),
}

/// Sends one NOTIFY on an unpipelined `conn` and reads its ACK's payload.
pub(super) async fn notify(conn: &mut AgentConn, frame: &[u8], ids: Ids) -> Result<Vec<u8>, Fail> {
    let out = with_ids(frame, ids, conn.max_frame, conn.caps.fragmentation)?;
    if conn.sock.write_all(&out).await.is_err() {
        return Err(Fail::Closed);
    }
    conn.slot.sent(out.len());
    let mut buf = std::mem::take(&mut conn.rest);
    buf.reserve(256);
    loop {
        match next_frame(&buf, MAX_FRAME_SIZE) {
            Ok(Some((f, used))) => {
                conn.slot.received(buf.len());
                return match f.ty {
                    FrameType::Ack if !f.is_fin() => {
                        buf.drain(..used);
                        let code = disconnect(&mut conn.sock, status::FRAG_NOT_SUPPORTED, &mut buf).await;
                        Err(Fail::Code((ERR_SPOP + code) | FINAL))
                    }
                    FrameType::Ack if (f.stream_id, f.frame_id) == ids => Ok(f.payload.to_vec()),
                    FrameType::Ack => Err(Fail::Code(ERR_SPOP + status::FRAMEID_NOTFOUND)),
                    FrameType::AgentDisconnect => {
                        let code = Disconnect::decode(f.payload).map_or(status::INVALID, |d| d.status);
                        Err(Fail::Code(ERR_SPOP + code))
                    }
                    _ => Err(Fail::Code(ERR_SPOP + status::INVALID)),
                };
            }
            Ok(None) => {}
            Err(e) => return Err(Fail::Code(ERR_SPOP + e.status())),
        }
        match conn.sock.read_buf(&mut buf).await {
            Ok(0) | Err(_) if buf.is_empty() => return Err(Fail::Closed),
            Ok(0) | Err(_) => return Err(Fail::Code(ERR_SPOP + status::IO)),
            Ok(_) => {}
        }
    }
}

/// Marks an error HAProxy reports at once to the frames that went out on a connection
/// it ended (its applet's waiting queue), rather than keeping them for another
/// connection until `timeout processing`: `exchange` strips it.
pub(super) const FINAL: u32 = 1 << 16;

/// How long rampart waits for the agent's DISCONNECT after sending its own.
const DISCONNECT_WAIT: Duration = Duration::from_secs(1);

/// Ends a connection on a protocol error as HAProxy 2.6 does: a HAPROXY-DISCONNECT
/// with `code`, then the agent's DISCONNECT awaited (`buf`: what was read past the
/// faulty frame). Returns the status the frames waiting on it fail with: the agent's
/// DISCONNECT status, 1 (I/O) when it closes instead, 2 (timeout) when it does neither.
/// HAProxy counterpart: `spoe_handle_disconnect_appctx()`,
/// `spoe_handle_disconnecting_appctx()`.
pub(super) async fn disconnect(sock: &mut TcpStream, code: u32, buf: &mut Vec<u8>) -> u32 {
    let mut out = Vec::with_capacity(64);
    let d = Disconnect { status: code, message: status_reason(code) };
    if d.encode(FrameType::HaproxyDisconnect, &mut out).is_err() || sock.write_all(&out).await.is_err() {
        return status::IO;
    }
    let wait = async {
        loop {
            while let Ok(Some((f, n))) = next_frame(buf, MAX_FRAME_SIZE) {
                if f.ty == FrameType::AgentDisconnect {
                    return Disconnect::decode(f.payload).map_or(status::INVALID, |d| d.status);
                }
                buf.drain(..n);
            }
            match sock.read_buf(buf).await {
                Ok(0) | Err(_) => return status::IO,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(DISCONNECT_WAIT, wait).await.unwrap_or(status::TIMEOUT)
}

/// The NOTIFY `frame` (written with ids 0 and 0) with the stream-id and frame-id `ids`,
/// for a connection of max-frame-size `max`: fragmented when its payload does not fit
/// in one frame and the agent announced `fragmentation` (`frag`), else the frame fails
/// with status 10 (HAProxy 2.6's `spoe_prepare_hanotify_frame()`).
pub(super) fn with_ids(frame: &[u8], ids: Ids, max: u32, frag: bool) -> Result<Vec<u8>, Fail> {
    // length (4), type (1), flags (4), stream-id 0 (1), frame-id 0 (1)
    let payload = frame.get(11..).ok_or(Fail::Code(ERR_SPOP + status::INVALID))?;
    let sizes = frag::cuts(payload, frag::room(max)).map_err(|_| Fail::Code(ERR_TOO_BIG))?;
    if sizes.len() > 1 && !frag {
        return Err(Fail::Code(ERR_SPOP + status::FRAG_NOT_SUPPORTED));
    }
    let mut out = Vec::with_capacity(frame.len() + 16 * sizes.len());
    frag::write_notify(&mut out, payload, ids, max, &sizes).map_err(|_| Fail::Code(ERR_TOO_BIG))?;
    Ok(out)
}

/// Opens a connection to a server of the agents' backend and greets the agent; `slot`
/// (already counted by the thread's agent state) becomes the connection's.
pub(super) async fn connect(rt: &Arc<Runtime>, eng: &Engine, mut slot: Slot) -> Result<AgentConn, u32> {
    let be = &rt.proxies[eng.be];
    let srv = crate::backend::pick_server(be, None, None).ok_or(ERR_SPOP + status::IO)?;
    let addr = be.be.servers[srv].addr.get();
    let connect = TcpStream::connect(addr);
    let sock = match be.timeouts.connect {
        Some(t) => tokio::time::timeout(t, connect).await.map_err(|_| ERR_TIMEOUT)?,
        None => connect.await,
    }
    .map_err(|_| ERR_SPOP + status::IO)?;
    let _ = sock.set_nodelay(true);
    slot.opened(srv);
    let hello = async {
        let mut sock = sock;
        let (max_frame, caps, rest) = greet(&mut sock, eng, &slot).await?;
        Ok(AgentConn { sock, max_frame, caps, idle_since: Instant::now(), slot, rest })
    };
    match eng.timeout_hello {
        Some(t) => tokio::time::timeout(t, hello).await.unwrap_or(Err(ERR_TIMEOUT)),
        None => hello.await,
    }
}

/// The capabilities rampart announces for `eng` (HAProxy's order).
fn announced(eng: &Engine) -> &'static str {
    match (eng.pipelining, eng.async_mode) {
        (true, true) => "pipelining,async",
        (true, false) => "pipelining",
        (false, true) => "async",
        (false, false) => "",
    }
}

/// The HELLO handshake: the max-frame-size agreed on and the capabilities both sides
/// announced.
/// The agent's max-frame-size and capabilities, and the bytes read past its HELLO.
async fn greet(sock: &mut TcpStream, eng: &Engine, slot: &Slot) -> Result<(u32, Caps, Vec<u8>), u32> {
    let mut out = Vec::with_capacity(128);
    let hello = HaproxyHello {
        versions: "2.0",
        max_frame_size: eng.max_frame_size,
        capabilities: announced(eng),
        healthcheck: false,
        engine_id: Some(&eng.id),
    };
    hello.encode(&mut out).map_err(|_| ERR_TOO_BIG)?;
    sock.write_all(&out).await.map_err(|_| ERR_SPOP + status::IO)?;
    slot.sent(out.len());
    let mut buf = Vec::with_capacity(256);
    loop {
        match next_frame(&buf, MAX_FRAME_SIZE) {
            Ok(Some((f, used))) => {
                slot.received(buf.len());
                let rest = buf.get(used..).unwrap_or_default().to_vec();
                return match f.ty {
                    FrameType::AgentHello => AgentHello::decode(f.payload, eng.max_frame_size)
                        .map(|h| {
                            let caps = Caps {
                                pipelining: eng.pipelining && h.has("pipelining"),
                                async_: eng.async_mode && h.has("async"),
                                fragmentation: h.has("fragmentation"),
                            };
                            (h.max_frame_size, caps, rest)
                        })
                        .map_err(|c| ERR_SPOP + c),
                    FrameType::AgentDisconnect => {
                        let code = Disconnect::decode(f.payload).map_or(status::INVALID, |d| d.status);
                        Err(ERR_SPOP + code)
                    }
                    _ => Err(ERR_SPOP + status::INVALID),
                };
            }
            Ok(None) => {}
            Err(e) => return Err(ERR_SPOP + e.status()),
        }
        match sock.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return Err(ERR_SPOP + status::IO),
            Ok(_) => {}
        }
    }
}

/// The server's and backend's counters an agent connection moves: as HAProxy's SPOE
/// applet streams, an open agent connection is one of the server's current
/// connections, in `show stat` and in the balancer's load (`leastconn`).
pub(super) fn count_open(rt: &Runtime, be: usize, srv: usize, up: bool) {
    let px = &rt.proxies[be];
    let server = &px.be.servers[srv];
    if up {
        px.be.cum_conn.inc();
        server.stats.stot().inc();
        let cur = server.cur_conns.fetch_add(1, Ordering::SeqCst) + 1;
        crate::stats::counters::note_max(&server.stats.smax, cur);
    } else {
        server.cur_conns.fetch_sub(1, Ordering::SeqCst);
    }
    crate::backend::counted(&px.be, srv, up);
}
