//! One connection with a node: the handshake (either side), then the message loop that
//! applies what the node sends and pushes our changes, full resyncs, acks and
//! heartbeats. HAProxy counterpart: `peer_io_handler()`, `peer_send_msgs()`,
//! `peer_treat_awaited_msg()` (src/peers.c).
//!
//! Nothing blocks: reads, writes and timers are awaited together; what is queued for
//! the node stays under [`OUT_HIGH`] bytes (more is produced only once it drains), and
//! what it sends is read message by message under the protocol's limit.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use rampart_proto::peers::table::{decode_define, decode_update, Shape, ShapeError};
use rampart_proto::peers::{self as proto, status, Control, Message, MsgError};

use super::types::{inc, DictCache, Lock, PeerRt, PeersRt};
use super::wire;
use crate::io::Sock;
use crate::stick::{now_ms, Key};

/// A heartbeat goes out after this long without sending.
pub const HEARTBEAT: Duration = Duration::from_millis(3000);
/// A node that sent nothing during a whole period of this long is disconnected.
pub const RECONNECT: Duration = Duration::from_millis(5000);
/// The handshake must be done within this long (the peers frontend's `timeout client`).
pub const HANDSHAKE: Duration = Duration::from_millis(5000);
/// Output produced ahead of the socket at most.
const OUT_HIGH: usize = 16384;

/// Why a session ended.
#[derive(Debug)]
pub enum End {
    Io,
    Closed,
    Timeout,
    /// The node broke the protocol (counted in `proto_err`).
    Protocol,
    /// A message over the limit (counted).
    TooBig,
    /// Another session took over (a collision) or the process stops.
    Killed,
    /// The handshake was refused with this status.
    Refused(u16),
}

/// Reads one handshake line.
async fn read_line<S: Sock>(s: &S, buf: &mut Vec<u8>) -> Result<Vec<u8>, End> {
    loop {
        match proto::take_line(buf) {
            Ok(Some((line, n))) => {
                let line = line.to_vec();
                buf.drain(..n);
                return Ok(line);
            }
            Ok(None) => {}
            Err(_) => return Err(End::Protocol),
        }
        if crate::io::read_some(s, buf, None).await.map_err(|_| End::Io)? == 0 {
            return Err(End::Closed);
        }
    }
}

/// The accepting side of the handshake: checks the hello and answers its status.
/// `Ok`: the index of the node and what was read past the hello.
pub async fn accept_hello<S: Sock>(sec: &PeersRt, s: &S) -> Result<(usize, bool, Vec<u8>), End> {
    let mut buf = Vec::new();
    let check = async {
        let v = read_line(s, &mut buf).await?;
        let minor = match proto::check_version(&v) {
            Ok(m) => m,
            Err(code) => return Ok(Err(code)),
        };
        let host = read_line(s, &mut buf).await?;
        if host != sec.local.as_bytes() {
            return Ok(Err(status::ERR_HOST));
        }
        let last = read_line(s, &mut buf).await?;
        let name = match proto::peer_name(&last) {
            Ok(n) => n,
            Err(code) => return Ok(Err(code)),
        };
        match sec.peers.iter().position(|p| !p.local && p.name.as_bytes() == name) {
            Some(i) => Ok(Ok((i, minor == 0))),
            None => Ok(Err(status::ERR_PEER)),
        }
    };
    let verdict = tokio::time::timeout(HANDSHAKE, check).await.map_err(|_| End::Timeout)??;
    match verdict {
        Ok((i, downgrade)) => Ok((i, downgrade, buf)),
        Err(code) => {
            let _ = crate::io::write_all(s, proto::status_line(code).as_bytes(), Some(HANDSHAKE)).await;
            Err(End::Refused(code))
        }
    }
}

/// The connecting side of the handshake: sends the hello, reads the status.
pub async fn connect_hello<S: Sock>(sec: &PeersRt, peer: &PeerRt, s: &S) -> Result<Vec<u8>, End> {
    let mut hello = proto::hello(&peer.name, &sec.local, std::process::id());
    if peer.downgrade.load(Relaxed) {
        hello = hello.replacen("2.1", "2.0", 1);
    }
    let mut buf = Vec::new();
    let exchange = async {
        crate::io::write_all(s, hello.as_bytes(), None).await.map_err(|_| End::Io)?;
        peer.status.store(110, Relaxed);
        read_line(s, &mut buf).await
    };
    let line = tokio::time::timeout(HANDSHAKE, exchange).await.map_err(|_| End::Timeout)??;
    let code = proto::parse_status(&line);
    peer.status.store(u32::from(code), Relaxed);
    peer.last_hdshk.store(now_ms(), Relaxed);
    match code {
        status::SUCCESS => Ok(buf),
        status::ERR_VERSION => {
            peer.downgrade.store(true, Relaxed);
            Err(End::Refused(code))
        }
        _ => Err(End::Refused(code)),
    }
}

/// What the node asked of us and we of it, beside the per-table cursors.
#[derive(Default)]
struct State {
    /// The node asked for a full resync: the keys left to teach, per table.
    teaching: Option<Vec<Vec<Key>>>,
    /// The resync was taught, `ResyncFinished`/`Partial` sent, its confirm awaited.
    taught: bool,
    /// This session asks the node for a full resync (and has sent the request).
    learner: bool,
    requested: bool,
    /// Resync finished/partial messages to confirm.
    confirms: u32,
    /// The definitions the node sent, by our table index.
    remote_shapes: Vec<Option<Shape>>,
    remote_table: Option<usize>,
    last_local_table: Option<usize>,
    alive: bool,
    /// The `server_key` strings cached each way (shared with `show peers dict`).
    dict: Arc<Lock<DictCache>>,
}

/// The session's `server_key` caches, locked (only `show peers dict` reads them besides).
fn lock(d: &Lock<DictCache>) -> std::sync::MutexGuard<'_, DictCache> {
    d.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs an established session until it ends. `pending` is what was read past the
/// handshake.
pub async fn run<S: Sock>(
    sec: &Arc<PeersRt>,
    idx: usize,
    id: u64,
    s: &S,
    mut inbuf: Vec<u8>,
    kill: Arc<tokio::sync::Notify>,
) -> End {
    let peer = &sec.peers[idx];
    let mut st = State { remote_shapes: vec![None; sec.tables.len()], ..State::default() };
    peer.with_session(id, |a| a.dict = Some(st.dict.clone()));
    for t in &peer.tables {
        // COMPAT: as HAProxy, push what the node has not acknowledged yet
        t.last_pushed.store(t.update.load(Relaxed), Relaxed);
        t.teaching_origin.store(t.update.load(Relaxed), Relaxed);
        t.last_get.store(0, Relaxed);
        t.last_acked.store(0, Relaxed);
    }
    if !sec.resynced.load(Relaxed) && !sec.learning.swap(true, Relaxed) {
        st.learner = true;
        sec.flags.fetch_or(0x2000 | 0x4, Relaxed);
    }
    let mut out: Vec<u8> = Vec::with_capacity(4096);
    let mut sent = 0usize;
    // bytes a TLS layer holds above the socket, waiting for it to take them
    let mut unflushed = false;
    let mut last_tx = tokio::time::Instant::now();
    let mut check_at = tokio::time::Instant::now() + RECONNECT;
    peer.heartbeat.store(now_ms().wrapping_add(HEARTBEAT.as_millis() as u32), Relaxed);
    peer.reconnect.store(now_ms().wrapping_add(RECONNECT.as_millis() as u32), Relaxed);
    let end = loop {
        let changed = sec.changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        if let Err(e) = handle_input(sec, idx, id, &mut st, &mut inbuf, &mut out) {
            break e;
        }
        if out.len() - sent < OUT_HIGH {
            out.drain(..sent);
            sent = 0;
            produce(sec, peer, &mut st, &mut out);
        }
        if out.len() > sent {
            last_tx = tokio::time::Instant::now();
            peer.heartbeat.store(now_ms().wrapping_add(HEARTBEAT.as_millis() as u32), Relaxed);
        }
        let hb_at = last_tx + HEARTBEAT;
        tokio::select! {
            r = crate::io::read_some(s, &mut inbuf, None), if inbuf.len() < proto::MAX_BODY + 16 => match r {
                Ok(0) => break End::Closed,
                Ok(_) => {}
                Err(_) => break End::Io,
            },
            r = write_some(s, &out[sent..]), if sent < out.len() => match r {
                Ok((n, flushed)) => {
                    sent += n;
                    unflushed = !flushed;
                }
                Err(_) => break End::Io,
            },
            r = flush(s), if unflushed && sent == out.len() => match r {
                Ok(()) => unflushed = false,
                Err(_) => break End::Io,
            },
            () = &mut changed => {}
            () = kill.notified() => break End::Killed,
            () = tokio::time::sleep_until(hb_at), if sent == out.len() => {
                proto::encode_control(Control::Heartbeat, &mut out);
                inc(&peer.counters.tx_hbt);
                last_tx = tokio::time::Instant::now();
                peer.heartbeat.store(now_ms().wrapping_add(HEARTBEAT.as_millis() as u32), Relaxed);
            }
            () = tokio::time::sleep_until(check_at) => {
                if !std::mem::take(&mut st.alive) {
                    inc(&peer.counters.no_hbt);
                    break End::Timeout;
                }
                check_at = tokio::time::Instant::now() + RECONNECT;
                peer.reconnect.store(now_ms().wrapping_add(RECONNECT.as_millis() as u32), Relaxed);
            }
        }
    };
    // a last error message, best effort
    let code = match end {
        End::Protocol => Some(proto::error::PROTOCOL),
        End::TooBig => Some(proto::error::SIZE_LIMIT),
        _ => None,
    };
    if let Some(code) = code {
        let mut e = Vec::new();
        proto::encode_error(code, &mut e);
        let _ = crate::io::write_all(s, &e, Some(Duration::from_millis(100))).await;
    }
    if st.learner {
        sec.learning.store(false, Relaxed);
    }
    end
}

/// Treats every complete message of `inbuf`.
fn handle_input(
    sec: &PeersRt,
    idx: usize,
    id: u64,
    st: &mut State,
    inbuf: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<(), End> {
    let peer = &sec.peers[idx];
    let mut at = 0;
    let result = loop {
        match proto::next_message(&inbuf[at..], proto::MAX_BODY) {
            Ok(Some((msg, n))) => {
                at += n;
                st.alive = true;
                if let Err(e) = treat(sec, peer, st, msg) {
                    inc(&peer.counters.proto_err);
                    break Err(e);
                }
            }
            Ok(None) => break Ok(()),
            Err(MsgError::Malformed) => {
                inc(&peer.counters.proto_err);
                break Err(End::Protocol);
            }
            Err(MsgError::TooBig) => {
                inc(&peer.counters.too_big);
                break Err(End::TooBig);
            }
        }
    };
    inbuf.drain(..at);
    // acknowledge what was applied (HAProxy acks once its input is drained)
    for (i, t) in peer.tables.iter().enumerate() {
        let (get, acked) = (t.last_get.load(Relaxed), t.last_acked.load(Relaxed));
        let remote = t.remote_id.load(Relaxed);
        if get != acked && remote != 0 && st.remote_shapes[i].is_some() {
            proto::encode_ack(remote, get, out);
            t.last_acked.store(get, Relaxed);
        }
    }
    let (rt, llt) = (st.remote_table, st.last_local_table);
    peer.with_session(id, |a| {
        a.remote_table = rt;
        a.last_local_table = llt;
    });
    result
}

/// Treats one message.
fn treat(sec: &PeersRt, peer: &PeerRt, st: &mut State, msg: Message<'_>) -> Result<(), End> {
    match msg {
        Message::Control(Control::ResyncRequest) => {
            let keys = sec.tables.iter().map(|t| t.table.keys()).collect();
            for (t, pt) in sec.tables.iter().zip(&peer.tables) {
                let origin = t.table.sync.as_ref().map_or(0, |s| s.localupdate());
                pt.teaching_origin.store(origin, Relaxed);
            }
            st.teaching = Some(keys);
            st.taught = false;
            sec.flags.fetch_or(0x4000, Relaxed);
        }
        Message::Control(c @ (Control::ResyncFinished | Control::ResyncPartial)) => {
            if st.learner {
                st.learner = false;
                sec.learning.store(false, Relaxed);
                if c == Control::ResyncFinished {
                    sec.resynced.store(true, Relaxed);
                    sec.flags.fetch_or(0x3 | 0x200, Relaxed);
                } else {
                    sec.flags.fetch_or(0x800, Relaxed);
                }
                sec.flags.fetch_and(!0x4, Relaxed);
            }
            st.confirms += 1;
            peer.counters.confirm.store(st.confirms, Relaxed);
        }
        Message::Control(Control::ResyncConfirm) => {
            for pt in &peer.tables {
                let origin = pt.teaching_origin.load(Relaxed);
                pt.update.store(origin, Relaxed);
                pt.last_pushed.store(origin, Relaxed);
            }
            st.teaching = None;
            st.taught = false;
        }
        Message::Control(Control::Heartbeat) => inc(&peer.counters.rx_hbt),
        Message::Error(_) | Message::Ignored => {}
        Message::Define(body) => {
            let d = decode_define(body).map_err(|_| End::Protocol)?;
            for pt in &peer.tables {
                if pt.remote_id.load(Relaxed) == d.id {
                    pt.remote_id.store(0, Relaxed);
                }
            }
            st.remote_table = None;
            let Some(i) = sec.tables.iter().position(|t| t.wire_name.as_bytes() == d.name) else {
                inc(&peer.counters.unknown_tables);
                return Ok(());
            };
            let shape = match d.shape {
                Ok(s) => s,
                Err(ShapeError::Malformed) => return Err(End::Protocol),
                Err(ShapeError::Unusable) => return Ok(()),
            };
            if !wire::same_keys(&sec.tables[i].table, &shape) {
                return Ok(());
            }
            peer.tables[i].remote_data.store(shape.data, Relaxed);
            peer.tables[i].remote_id.store(d.id, Relaxed);
            st.remote_shapes[i] = Some(shape);
            st.remote_table = Some(i);
        }
        Message::Switch(rid) => {
            st.remote_table = peer.tables.iter().position(|t| t.remote_id.load(Relaxed) == rid && rid != 0);
        }
        Message::Update { with_id, timed, body } => {
            let Some(i) = st.remote_table else { return Ok(()) };
            let (Some(shape), t) = (&st.remote_shapes[i], &sec.tables[i].table) else { return Ok(()) };
            let u =
                decode_update(body, with_id, timed, wire::key_kind(t.key_type), shape).map_err(|_| End::Protocol)?;
            let pt = &peer.tables[i];
            match u.id {
                Some(n) => pt.last_get.store(n, Relaxed),
                None => {
                    pt.last_get.fetch_add(1, Relaxed);
                }
            }
            let key = wire::key_from(t.key_type, u.key);
            if let Some(row) = t.learn(&key, u.expire) {
                wire::apply(t, &row, &u.values, now_ms(), &mut lock(&st.dict));
            }
            // `write-to` (HAProxy 2.9+): the values kept as they come go to the local copy too
            if let Some(w) = &sec.tables[i].write_to {
                let expire = u.expire.or(t.expire);
                if let Some(row) = w.learn(&key, expire) {
                    wire::apply_as_is(w, &row, &u.values, now_ms(), &mut lock(&st.dict));
                }
            }
        }
        Message::Ack { table, update } => {
            if st.teaching.is_some() {
                return Ok(());
            }
            let Some(pt) = usize::try_from(table).ok().and_then(|n| n.checked_sub(1)).and_then(|n| peer.tables.get(n))
            else {
                return Ok(());
            };
            // our numbers are 64-bit, the wire's 32: the acked one is at or before the last pushed
            let pushed = pt.last_pushed.load(Relaxed);
            let back = (pushed as u32).wrapping_sub(update);
            pt.update.store(pushed.saturating_sub(u64::from(back)), Relaxed);
        }
    }
    Ok(())
}

/// Queues what is due: the resync request, a batch of the full resync or of our
/// changes, the end of a resync, confirmations.
fn produce(sec: &PeersRt, peer: &PeerRt, st: &mut State, out: &mut Vec<u8>) {
    if st.learner && !st.requested {
        proto::encode_control(Control::ResyncRequest, out);
        st.requested = true;
        sec.flags.fetch_or(0x8, Relaxed);
    }
    let mut budget = sec.max_updates;
    if let Some(teach) = st.teaching.as_mut().filter(|_| !st.taught) {
        for (i, keys) in teach.iter_mut().enumerate() {
            let t = &sec.tables[i].table;
            let origin = peer.tables[i].teaching_origin.load(Relaxed) as u32;
            while budget > 0 {
                let Some(k) = keys.pop() else { break };
                let Some(e) = t.view(&k) else { continue };
                if st.last_local_table != Some(i) {
                    define(sec, i, out);
                    st.last_local_table = Some(i);
                }
                let timed = !peer.downgrade.load(Relaxed);
                wire::encode_entry(t, &e, origin, timed, &mut lock(&st.dict), out);
                budget -= 1;
            }
        }
        if teach.iter().all(Vec::is_empty) {
            let c = if sec.resynced.load(Relaxed) { Control::ResyncFinished } else { Control::ResyncPartial };
            proto::encode_control(c, out);
            st.taught = true;
        }
    } else if st.teaching.is_none() {
        for (i, t) in sec.tables.iter().enumerate() {
            let Some(sync) = &t.table.sync else { continue };
            sync.rearm();
            let pt = &peer.tables[i];
            let last = pt.last_pushed.load(Relaxed);
            if last == sync.localupdate() || budget == 0 {
                continue;
            }
            let batch = t.table.updates_after(last, budget);
            for (upd, e) in &batch {
                if st.last_local_table != Some(i) {
                    define(sec, i, out);
                    st.last_local_table = Some(i);
                }
                wire::encode_entry(&t.table, e, *upd as u32, false, &mut lock(&st.dict), out);
                pt.last_pushed.store(*upd, Relaxed);
                budget -= 1;
            }
            if batch.is_empty() {
                pt.last_pushed.store(sync.localupdate(), Relaxed);
            }
        }
    }
    while st.confirms > 0 {
        proto::encode_control(Control::ResyncConfirm, out);
        st.confirms -= 1;
    }
    peer.counters.confirm.store(st.confirms, Relaxed);
}

/// Queues the definition of table `i` (HAProxy sends one at each switch of table).
fn define(sec: &PeersRt, i: usize, out: &mut Vec<u8>) {
    let t = &sec.tables[i];
    let shape = wire::shape(&t.table);
    rampart_proto::peers::table::encode_define(i as u64 + 1, t.wire_name.as_bytes(), &shape, out);
}

/// Writes what the socket takes of `data` now, waiting only while it takes nothing:
/// `(bytes taken, whether nothing is left above the socket)`. Nothing is awaited once
/// bytes are taken, so a cancelled call never loses count of them.
async fn write_some<S: Sock>(s: &S, data: &[u8]) -> std::io::Result<(usize, bool)> {
    loop {
        match s.try_write(data) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                return match s.try_flush() {
                    Ok(()) => Ok((n, true)),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok((n, false)),
                    Err(e) => Err(e),
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => s.writable().await?,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Sends what a TLS layer still holds above the socket.
async fn flush<S: Sock>(s: &S) -> std::io::Result<()> {
    loop {
        match s.try_flush() {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => s.writable().await?,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}
