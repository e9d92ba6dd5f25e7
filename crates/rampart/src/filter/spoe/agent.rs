//! What each thread knows of each SPOE agent (engine): its idle unpipelined
//! connections, its pipelined connections with the frames in flight on each, the
//! NOTIFY frames waiting for their ACK (by stream-id and frame-id), how many
//! connections are open, and the `maxconnrate` / `maxerrrate` rates. Thread-local as
//! HAProxy's `agent->rt[tid]`: a thread's streams use the thread's connections. Nothing
//! here awaits: a borrow never lives across an await.
//! HAProxy counterpart: `struct spoe_agent`'s per-thread part (`applets`,
//! `idle_applets`, `waiting_queue`, `conn_per_sec`, `err_per_sec`), `spoe_queue_context()`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, Notify};

use super::conn::AgentConn;
use super::Ids;
use crate::counters::accept_rate::AcceptRate;
use crate::proxy::Runtime;
use crate::spoe::{Engine, ERR_RES};

/// An ACK's payload, or the `set-on-error` code.
pub(super) type Answer = Result<Vec<u8>, u32>;

/// Most idle unpipelined connections kept per thread and engine.
const MAX_IDLE: usize = 16;

/// A NOTIFY waiting for its ACK: the connection it went out on, and the stream.
struct Waiter {
    conn: u64,
    tx: oneshot::Sender<Answer>,
}

/// A pipelined connection, as streams see it: where to write frames, how many wait.
struct Mux {
    id: u64,
    tx: mpsc::UnboundedSender<Vec<u8>>,
    inflight: u32,
    max_frame: u32,
    /// The agent takes fragmented NOTIFY frames.
    frag: bool,
}

/// One agent's state on this thread.
struct Agent {
    idle: Vec<AgentConn>,
    mux: Vec<Mux>,
    waiting: HashMap<Ids, Waiter>,
    /// Connections open or opening (idle, busy and pipelined).
    open: usize,
    next_conn: u64,
    /// Woken when a frame slot frees, a connection closes or a pipelined one opens.
    freed: Arc<Notify>,
    conn_rate: Option<AcceptRate>,
    err_rate: Option<AcceptRate>,
}

impl Agent {
    fn new(eng: &Engine) -> Agent {
        let rate = |n: u32| (n > 0).then(|| AcceptRate::new(n));
        Agent {
            idle: Vec::new(),
            mux: Vec::new(),
            waiting: HashMap::new(),
            open: 0,
            next_conn: 1,
            freed: Arc::new(Notify::new()),
            conn_rate: rate(eng.maxconnrate),
            err_rate: rate(eng.maxerrrate),
        }
    }
}

thread_local! {
    /// The agents of this thread, by engine key.
    static AGENTS: RefCell<HashMap<usize, Agent>> = RefCell::new(HashMap::new());
}

fn with<R>(eng: &Engine, f: impl FnOnce(&mut Agent) -> R) -> R {
    AGENTS.with(|a| f(a.borrow_mut().entry(eng.key).or_insert_with(|| Agent::new(eng))))
}

/// Runs `f` on the agent of engine `key` if this thread has one.
fn with_key<R>(key: usize, f: impl FnOnce(&mut Agent) -> R) -> Option<R> {
    // `try_with`: a connection may close while the thread's state is torn down
    AGENTS.try_with(|a| a.borrow_mut().get_mut(&key).map(f)).ok().flatten()
}

/// Whether `maxerrrate` is reached: the engine's messages are not sent.
pub fn over_error_rate(eng: &Engine) -> bool {
    eng.maxerrrate > 0 && with(eng, |a| a.err_rate.as_ref().is_some_and(|r| r.check().is_err()))
}

/// Counts an error of the engine for `maxerrrate`.
pub(super) fn note_error(eng: &Engine) {
    if eng.maxerrrate > 0 {
        with(eng, |a| a.err_rate.as_ref().map(AcceptRate::count));
    }
}

/// How a NOTIFY goes out, decided at once.
pub(super) enum Pick {
    /// Queued on a pipelined connection: its ACK comes on the receiver.
    Sent(Pending),
    /// An idle unpipelined connection.
    Idle(AgentConn),
    /// A new connection may be opened (counted in the slot).
    Connect(Slot),
    /// Every connection is busy and no new one may open yet: wait for a change.
    Wait(Arc<Notify>),
    /// The `set-on-error` code: no connection and none may open (`maxconnrate`,
    /// HAProxy's resource error), or the frame is too big for the connection.
    Fail(u32),
}

/// Picks how the NOTIFY `frame` builds (with its ids, for a max-frame-size) goes to
/// the agent.
pub(super) fn pick(
    rt: &Arc<Runtime>,
    eng: &Engine,
    ids: Ids,
    frame: &dyn Fn(u32, bool) -> Result<Vec<u8>, u32>,
) -> Pick {
    let key = eng.key;
    let mut stale = Vec::new();
    let pick = with(eng, |a| {
        if let Some(m) = a.mux.iter_mut().find(|m| m.inflight < eng.max_waiting_frames) {
            let bytes = match frame(m.max_frame, m.frag) {
                Ok(b) => b,
                Err(code) => return Pick::Fail(code),
            };
            if m.tx.send(bytes).is_ok() {
                m.inflight += 1;
                let (tx, rx) = oneshot::channel();
                a.waiting.insert(ids, Waiter { conn: m.id, tx });
                return Pick::Sent(Pending { key, ids, conn: m.id, rx: Some(rx) });
            }
        }
        let fresh = |c: &AgentConn| eng.timeout_idle.is_none_or(|t| c.idle_since.elapsed() < t);
        while let Some(c) = a.idle.pop() {
            if fresh(&c) {
                return Pick::Idle(c);
            }
            stale.push(c);
        }
        if a.conn_rate.as_ref().is_none_or(|r| r.check().is_ok()) {
            if let Some(r) = &a.conn_rate {
                r.count();
            }
            a.open += 1;
            return Pick::Connect(Slot { key, be: eng.be, rt: rt.clone(), srv: None });
        }
        if a.open == stale.len() {
            Pick::Fail(ERR_RES)
        } else {
            Pick::Wait(a.freed.clone())
        }
    });
    // closed outside the borrow: their slots count themselves out
    drop(stale);
    pick
}

/// Gives an unpipelined connection back after an exchange.
pub(super) fn put_idle(eng: &Engine, mut conn: AgentConn) {
    conn.idle_since = std::time::Instant::now();
    let extra = with(eng, |a| {
        if a.idle.len() >= MAX_IDLE {
            return Some(conn);
        }
        a.idle.push(conn);
        a.freed.notify_waiters();
        None
    });
    drop(extra);
}

/// Registers a pipelined connection: streams may queue frames on `tx`. Returns its id.
pub(super) fn add_mux(eng: &Engine, tx: mpsc::UnboundedSender<Vec<u8>>, max_frame: u32, frag: bool) -> u64 {
    with(eng, |a| {
        let id = a.next_conn;
        a.next_conn += 1;
        a.mux.push(Mux { id, tx, inflight: 0, max_frame, frag });
        a.freed.notify_waiters();
        id
    })
}

/// A pipelined connection closed: no frame goes to it any more, and the frames
/// waiting on it fail with `code` unless the agent answers asynchronously (then any
/// other connection may still answer them, as HAProxy's agent-wide waiting queue).
pub(super) fn drop_mux(key: usize, conn: u64, async_: bool, code: u32) {
    with_key(key, |a| {
        a.mux.retain(|m| m.id != conn);
        if !async_ {
            let gone: Vec<Ids> = a.waiting.iter().filter(|(_, w)| w.conn == conn).map(|(k, _)| *k).collect();
            for ids in gone {
                if let Some(w) = a.waiting.remove(&ids) {
                    let _ = w.tx.send(Err(code));
                }
            }
        }
        a.freed.notify_waiters();
    });
}

/// No frame goes to pipelined connection `conn` any more (it is disconnecting).
pub(super) fn retire_mux(key: usize, conn: u64) {
    with_key(key, |a| a.mux.retain(|m| m.id != conn));
}

/// Frames in flight on pipelined connection `conn`.
pub(super) fn inflight(key: usize, conn: u64) -> u32 {
    with_key(key, |a| a.mux.iter().find(|m| m.id == conn).map_or(0, |m| m.inflight)).unwrap_or(0)
}

/// An ACK read on connection `conn`: the waiting frame with these ids gets it when it
/// went out on `conn`, or on any connection of the agent with `async`. An ACK nobody
/// waits for is ignored (HAProxy: "frame-id not found", the frame is skipped).
pub(super) fn answer(key: usize, conn: u64, async_: bool, ids: Ids, payload: &[u8]) -> bool {
    with_key(key, |a| {
        let Some(w) = a.waiting.get(&ids) else { return false };
        if !async_ && w.conn != conn {
            return false;
        }
        let w = a.waiting.remove(&ids).expect("present");
        w.tx.send(Ok(payload.to_vec())).is_ok()
    })
    .unwrap_or(false)
}

/// A frame queued on a pipelined connection; dropping it (answered, failed or timed
/// out) frees its place on the connection.
pub(super) struct Pending {
    key: usize,
    ids: Ids,
    conn: u64,
    pub rx: Option<oneshot::Receiver<Answer>>,
}

impl Drop for Pending {
    fn drop(&mut self) {
        with_key(self.key, |a| {
            a.waiting.remove(&self.ids);
            if let Some(m) = a.mux.iter_mut().find(|m| m.id == self.conn) {
                m.inflight = m.inflight.saturating_sub(1);
            }
            a.freed.notify_waiters();
        });
    }
}

/// A connection of the agent counted in the thread's `open` count and, once the
/// server is known, in the server's and backend's stats; both undone when dropped.
pub(super) struct Slot {
    key: usize,
    /// The agents' backend.
    be: usize,
    rt: Arc<Runtime>,
    /// The server, once connected.
    srv: Option<usize>,
}

impl Slot {
    /// The connection to server `srv` of the agents' backend is established.
    pub fn opened(&mut self, srv: usize) {
        super::conn::count_open(&self.rt, self.be, srv, true);
        crate::stats::counters::count_server_conn(&self.rt, self.be, srv, false);
        self.srv = Some(srv);
    }

    /// Bytes written to the agent (`bin` of the server and backend, as HAProxy counts
    /// what goes to a server).
    pub fn sent(&self, n: usize) {
        if let Some(srv) = self.srv {
            let px = &self.rt.proxies[self.be];
            px.stats.be_bin.add(n as u64);
            px.be.servers[srv].stats.bin().add(n as u64);
        }
    }

    /// Bytes read from the agent (`bout`).
    pub fn received(&self, n: usize) {
        if let Some(srv) = self.srv {
            let px = &self.rt.proxies[self.be];
            px.stats.be_bout.add(n as u64);
            px.be.servers[srv].stats.bout().add(n as u64);
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(srv) = self.srv {
            super::conn::count_open(&self.rt, self.be, srv, false);
        }
        with_key(self.key, |a| {
            a.open = a.open.saturating_sub(1);
            a.freed.notify_waiters();
        });
    }
}
