//! Connections to SPOE agents: opened to a server of the engine's `use-backend`
//! backend (its balancing and health state pick the server), greeted with a
//! HAPROXY-HELLO, then used for one NOTIFY at a time and kept idle per thread for the
//! next stream of the same engine. The stream awaits [`exchange`]; nothing here blocks
//! a thread.
//! HAProxy counterpart: the SPOE applet of src/flt_spoe.c (`spoe_handle_connect_appctx()`,
//! `spoe_handle_sending_frame_appctx()`, `spoe_handle_receiving_frame_appctx()`).
//!
//! COMPAT: HAProxy 2.6 announces `pipelining` and `async` and may have several NOTIFY
//! frames in flight on one connection; rampart announces neither and sends one NOTIFY
//! per connection at a time (concurrent streams use several connections).

use std::cell::RefCell;
use std::time::Instant;

use rampart_proto::spoe::{
    begin_frame, end_frame, next_frame, status, AgentHello, Disconnect, FrameType, HaproxyHello, FLAG_FIN,
    MAX_FRAME_SIZE,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::proxy::Runtime;
use crate::spoe::{Engine, Outcome, ERR_SPOP, ERR_TIMEOUT, ERR_TOO_BIG};

/// One greeted connection to an agent.
struct AgentConn {
    sock: TcpStream,
    /// The max-frame-size the agent announced.
    max_frame: u32,
    /// The next frame-id (and stream-id) this connection sends.
    next_id: u64,
    idle_since: Instant,
}

thread_local! {
    /// Idle agent connections of this thread, by engine key.
    static IDLE: RefCell<Vec<(usize, AgentConn)>> = const { RefCell::new(Vec::new()) };
}

/// Most idle connections kept per thread and engine.
const MAX_IDLE: usize = 16;

/// Sends `frame` (a NOTIFY from [`Engine::encode`]) to an agent of `eng` and waits
/// for its ACK, within `timeout processing`.
pub async fn exchange(rt: &Runtime, eng: &Engine, frame: Vec<u8>) -> Outcome {
    let work = async {
        // an idle connection the agent closed meanwhile fails before any answer: try
        // again once on a new one
        for attempt in 0..2 {
            let reused = if attempt == 0 { take_idle(eng) } else { None };
            let fresh = reused.is_none();
            let mut conn = match reused {
                Some(c) => c,
                None => connect(rt, eng).await?,
            };
            match notify(&mut conn, &frame).await {
                Ok(payload) => {
                    put_idle(eng, conn);
                    return Ok(payload);
                }
                Err(Fail::Closed) if !fresh => continue,
                Err(Fail::Closed) => return Err(ERR_SPOP + status::IO),
                Err(Fail::Code(c)) => return Err(c),
            }
        }
        Err(ERR_SPOP + status::IO)
    };
    let started = tokio::time::Instant::now();
    let res = match eng.timeout_processing {
        Some(t) => match tokio::time::timeout(t, work).await.unwrap_or(Err(ERR_TIMEOUT)) {
            // COMPAT: HAProxy 2.6 keeps the frame for another connection of the
            // agent to answer (with or without `option async`), and reports the
            // timeout at the deadline
            Err(code) if code != ERR_TIMEOUT => {
                tokio::time::sleep_until(started + t).await;
                Err(ERR_TIMEOUT)
            }
            res => res,
        },
        None => work.await,
    };
    match res {
        Ok(payload) => Outcome::Ack(payload),
        Err(code) => Outcome::Error(code),
    }
}

/// Why a NOTIFY got no ACK.
enum Fail {
    /// The connection closed or failed before any byte of an answer.
    Closed,
    /// The `set-on-error` code.
    Code(u32),
}

/// Sends one NOTIFY on `conn` and reads its ACK's payload.
async fn notify(conn: &mut AgentConn, frame: &[u8]) -> Result<Vec<u8>, Fail> {
    let id = conn.next_id;
    conn.next_id += 1;
    let out = with_ids(frame, id, conn.max_frame)?;
    if conn.sock.write_all(&out).await.is_err() {
        return Err(Fail::Closed);
    }
    let mut buf = Vec::with_capacity(256);
    loop {
        match next_frame(&buf, MAX_FRAME_SIZE) {
            Ok(Some((f, _))) => {
                return match f.ty {
                    FrameType::Ack if !f.is_fin() => Err(Fail::Code(ERR_SPOP + status::FRAG_NOT_SUPPORTED)),
                    FrameType::Ack if f.stream_id == id && f.frame_id == id => Ok(f.payload.to_vec()),
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

/// The NOTIFY `frame` (written with ids 0 and 0) with stream-id and frame-id `id`.
fn with_ids(frame: &[u8], id: u64, max: u32) -> Result<Vec<u8>, Fail> {
    // length (4), type (1), flags (4), stream-id 0 (1), frame-id 0 (1)
    let payload = frame.get(11..).ok_or(Fail::Code(ERR_SPOP + status::INVALID))?;
    let mut out = Vec::with_capacity(frame.len() + 16);
    let at = begin_frame(&mut out, FrameType::Notify, FLAG_FIN, id, id);
    out.extend_from_slice(payload);
    end_frame(&mut out, at, max).map_err(|_| Fail::Code(ERR_TOO_BIG))?;
    Ok(out)
}

/// An idle connection of `eng` not idle past `timeout idle`.
fn take_idle(eng: &Engine) -> Option<AgentConn> {
    IDLE.with(|idle| {
        let mut idle = idle.borrow_mut();
        let fresh = |c: &AgentConn| eng.timeout_idle.is_none_or(|t| c.idle_since.elapsed() < t);
        idle.retain(|(k, c)| *k != eng.key || fresh(c));
        let i = idle.iter().rposition(|(k, _)| *k == eng.key)?;
        Some(idle.swap_remove(i).1)
    })
}

fn put_idle(eng: &Engine, mut conn: AgentConn) {
    conn.idle_since = Instant::now();
    IDLE.with(|idle| {
        let mut idle = idle.borrow_mut();
        if idle.iter().filter(|(k, _)| *k == eng.key).count() < MAX_IDLE {
            idle.push((eng.key, conn));
        }
    });
}

/// Opens a connection to a server of the agents' backend and greets the agent.
async fn connect(rt: &Runtime, eng: &Engine) -> Result<AgentConn, u32> {
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
    let hello = async {
        let mut sock = sock;
        let max_frame = greet(&mut sock, eng).await?;
        Ok(AgentConn { sock, max_frame, next_id: 1, idle_since: Instant::now() })
    };
    match eng.timeout_hello {
        Some(t) => tokio::time::timeout(t, hello).await.unwrap_or(Err(ERR_TIMEOUT)),
        None => hello.await,
    }
}

/// The HELLO handshake: the max-frame-size agreed on.
async fn greet(sock: &mut TcpStream, eng: &Engine) -> Result<u32, u32> {
    let mut out = Vec::with_capacity(128);
    let hello = HaproxyHello {
        versions: "2.0",
        max_frame_size: eng.max_frame_size,
        capabilities: "",
        healthcheck: false,
        engine_id: Some(&eng.id),
    };
    hello.encode(&mut out).map_err(|_| ERR_TOO_BIG)?;
    sock.write_all(&out).await.map_err(|_| ERR_SPOP + status::IO)?;
    let mut buf = Vec::with_capacity(256);
    loop {
        match next_frame(&buf, MAX_FRAME_SIZE) {
            Ok(Some((f, _))) => {
                return match f.ty {
                    FrameType::AgentHello => AgentHello::decode(f.payload, eng.max_frame_size)
                        .map(|h| h.max_frame_size)
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
