//! The peers: replication of stick tables between nodes over HAProxy's peers protocol
//! (the codec is `rampart_proto::peers`). Each `peers` section with a local node
//! listens on the local node's address and connects to every remote node; both sides
//! try, and when both connections meet the last one accepted wins (HAProxy's
//! collision rule). A new session pushes what the node has not acknowledged, asks one
//! node for a full resync, and then pushes our changes as they happen.
//! HAProxy counterpart: src/peers.c (`process_peer_sync()`, `peer_session_create()`,
//! the applet), `show peers`.
//!
//! - `types`: what the runtime model holds (sections, nodes, counters)
//! - `wire`: a table as the protocol sees it (definition, entries as updates)
//! - `session`: one connection (handshake, message loop)
//! - `show`: `show peers`
//!
//! Runs on the first worker thread: a few sockets per section, nothing on the request
//! path but [`crate::stick::StickTable::touch_local`].

pub mod session;
pub mod show;
pub mod types;
pub mod wire;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use rampart_cfg::{Config, Diag};

use rustls_pki_types::ServerName;

use crate::io::Sock;
use crate::proxy::Runtime;
use crate::stick::{now_ms, StickTable};
use session::End;
use types::{inc, ActiveSession, PeerRt, PeersRt, SharedTable};

/// A connection attempt gives up after this long (the peers frontend's `timeout connect`).
const CONNECT: Duration = Duration::from_millis(1000);
/// The next attempt after a failed or ended session.
const RECONNECT: Duration = Duration::from_millis(5000);

/// The wake-up shared by the tables of each `peers` section that replicates (enabled,
/// with a local node), by section name: what [`StickTable::replicated`] takes.
pub fn section_notifies(cfg: &Config) -> HashMap<String, Arc<tokio::sync::Notify>> {
    cfg.peers
        .iter()
        .filter(|s| !s.disabled && s.local.is_some())
        .map(|s| (s.name.clone(), Arc::new(tokio::sync::Notify::new())))
        .collect()
}

/// The runtime sections: each replicating section with its nodes and tables (`tables`:
/// every table, numbered as [`Config::find_table`]). TLS settings that cannot be used
/// are `diags`: alerts, and warnings to print once.
pub fn build(
    cfg: &Config,
    tables: &[Option<Arc<StickTable>>],
    notifies: &HashMap<String, Arc<tokio::sync::Notify>>,
    diags: &mut Vec<Diag>,
) -> Vec<Arc<PeersRt>> {
    let mut out = Vec::new();
    for s in &cfg.peers {
        let Some(changed) = notifies.get(&s.name) else { continue };
        let mut shared = Vec::new();
        for (i, px) in cfg.proxies.iter().enumerate() {
            let attached = px.stick_table.as_ref().is_some_and(|d| d.peers.as_deref() == Some(s.name.as_str()));
            if let (true, Some(Some(t))) = (attached, tables.get(i)) {
                let write_to = write_to(cfg, tables, px.stick_table.as_ref());
                shared.push(SharedTable { wire_name: px.name.clone(), table: t.clone(), write_to });
            }
        }
        for t in &s.tables {
            let Some(Some(table)) = cfg.find_table(&s.table_id(t)).and_then(|i| tables.get(i)) else { continue };
            // COMPAT: HAProxy 2.6 names a section's table after the section name's length
            // into `<section>/<table>` (`parse_stick_table()`'s `nid`): `/<table>`
            let write_to = write_to(cfg, tables, Some(&t.def));
            shared.push(SharedTable { wire_name: format!("/{}", t.name), table: table.clone(), write_to });
        }
        let local = s.local.map(|i| s.peers[i].name.clone()).unwrap_or_default();
        let peers = s
            .peers
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let addr = if Some(i) == s.local { bind_addr(s).or(p.addr) } else { p.addr };
                let mut rt = PeerRt::new(&p.name, addr, Some(i) == s.local, shared.len());
                if Some(i) != s.local {
                    rt.tls = peer_tls(cfg, &s.name, p, diags);
                }
                rt
            })
            .collect();
        out.push(Arc::new(PeersRt {
            name: s.name.clone(),
            local,
            disabled: s.disabled,
            peers,
            tables: shared,
            changed: changed.clone(),
            last_change: std::time::SystemTime::now(),
            resynced: Default::default(),
            learning: Default::default(),
            // COMPAT: no old process to learn from: resync from a remote node (LOCAL|LOCALTIMEOUT)
            flags: 0x11.into(),
            bound: Default::default(),
            max_updates: cfg.global.peers_max_updates.max(1) as usize,
            bind_tls: s.bind.as_ref().and_then(|b| bind_tls(cfg, &s.name, b, diags)),
            resync_timeout: now_ms().wrapping_add(RECONNECT.as_millis() as u32).into(),
            task_calls: Default::default(),
        }));
    }
    out
}

/// The table `def`'s `write-to` names (checked when the configuration was read).
fn write_to(
    cfg: &Config,
    tables: &[Option<Arc<StickTable>>],
    def: Option<&rampart_cfg::model::StickTableDef>,
) -> Option<Arc<StickTable>> {
    let i = cfg.find_table(def?.write_to.as_deref()?)?;
    tables.get(i)?.clone()
}

/// The client side of a remote node's `ssl` line, built as a ring server's (no SNI,
/// the address is the name).
fn peer_tls(
    cfg: &Config,
    section: &str,
    p: &rampart_cfg::model::Peer,
    diags: &mut Vec<Diag>,
) -> Option<Arc<rustls::ClientConfig>> {
    let ctx = format!("'server {section}/{}' : ", p.name);
    match crate::tls::client::ring_server(cfg, &p.tls, &ctx) {
        Ok(tls) => tls,
        Err(msgs) => {
            let mut spans = std::iter::once(Some(p.span.clone())).chain(std::iter::repeat(None));
            diags.extend(msgs.into_iter().map(|m| Diag::alert(spans.next().flatten(), m)));
            None
        }
    }
}

/// The server side of the section's `bind ... ssl` line, built as a proxy's (the
/// global `ssl-default-bind-*` settings apply).
fn bind_tls(
    cfg: &Config,
    section: &str,
    b: &rampart_cfg::model::PeersBind,
    diags: &mut Vec<Diag>,
) -> Option<Arc<crate::tls::bind::BindTls>> {
    if !b.ssl.enabled {
        return None;
    }
    let ctx = format!("'bind' in peers section '{section}'");
    match crate::tls::bind::build(&b.ssl, &cfg.global.ssl) {
        Ok((tls, warns)) => {
            diags.extend(warns.into_iter().map(|w| Diag::warning(Some(b.span.clone()), format!("{ctx} : {w}"))));
            Some(Arc::new(tls))
        }
        Err(errs) => {
            diags.extend(errs.into_iter().map(|e| Diag::alert(Some(b.span.clone()), format!("{ctx} : {e}"))));
            None
        }
    }
}

fn bind_addr(s: &rampart_cfg::model::Peers) -> Option<SocketAddr> {
    match s.bind.as_ref()?.addr {
        rampart_cfg::model::ListenAddr::Inet(sa) => Some(sa),
        _ => None,
    }
}

/// Starts the sections' listeners (`listeners`: the section's index in
/// `rt.peers` and its bound socket) and the connections to every remote node.
pub fn spawn(rt: &Arc<Runtime>, listeners: Vec<(usize, std::net::TcpListener)>) {
    for (i, l) in listeners {
        let Some(sec) = rt.peers.get(i).cloned() else { continue };
        let _ = l.set_nonblocking(true);
        *sec.bound.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = l.local_addr().ok();
        let Ok(l) = tokio::net::TcpListener::from_std(l) else { continue };
        tokio::spawn(accept_loop(sec, l, rt.clone()));
    }
    for sec in &rt.peers {
        // no resync to wait for when there is nobody to learn from
        if !sec.peers.iter().any(|p| !p.local && p.addr.is_some()) {
            sec.resynced.store(true, Relaxed);
        }
        tokio::spawn(resync_timeout(sec.clone()));
        for (idx, p) in sec.peers.iter().enumerate() {
            if !p.local && p.addr.is_some() {
                tokio::spawn(connect_loop(sec.clone(), idx, rt.clone()));
            }
        }
    }
}

/// Nobody taught us within 5 s: consider ourselves up to date, as HAProxy does.
async fn resync_timeout(sec: Arc<PeersRt>) {
    tokio::time::sleep(RECONNECT).await;
    if !sec.learning.load(Relaxed) {
        sec.resynced.store(true, Relaxed);
        sec.flags.fetch_or(0x2 | 0x20, Relaxed);
    }
}

static SESSION_IDS: AtomicU64 = AtomicU64::new(1);

async fn accept_loop(sec: Arc<PeersRt>, l: tokio::net::TcpListener, rt: Arc<Runtime>) {
    loop {
        let Ok((s, src)) = l.accept().await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        if rt.global.is_stopping() {
            return;
        }
        let dst = s.local_addr().ok();
        let _ = s.set_nodelay(true);
        let sec = sec.clone();
        match sec.bind_tls.clone() {
            Some(tls) => {
                tokio::spawn(async move {
                    let choose = |hello: &rustls::server::ClientHello<'_>| Ok(tls.choose(hello)?.0);
                    // the handshake counts in the hello's time, as the peers frontend's
                    // `timeout client` in HAProxy
                    if let Ok(s) = crate::tls::stream::accept(s, Some(session::HANDSHAKE), choose).await {
                        incoming(sec, s, src, dst).await;
                    }
                });
            }
            None => {
                tokio::spawn(incoming(sec, s, src, dst));
            }
        }
    }
}

/// A node connected to us.
async fn incoming<S: Sock>(sec: Arc<PeersRt>, s: S, src: SocketAddr, dst: Option<SocketAddr>) {
    let Ok((idx, downgrade, rest)) = session::accept_hello(&sec, &s).await else { return };
    let peer = &sec.peers[idx];
    peer.downgrade.store(downgrade, Relaxed);
    let id = SESSION_IDS.fetch_add(1, Relaxed);
    let kill = Arc::new(tokio::sync::Notify::new());
    {
        let mut slot = peer.session.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(old) = slot.take() {
            // both sides connected: the one accepted last wins, the other side retries later
            old.kill.notify_one();
            inc(&peer.counters.coll);
        }
        let (remote_table, last_local_table) = (None, None);
        *slot = Some(ActiveSession {
            id,
            kill: kill.clone(),
            established: true,
            src: Some(src),
            dst,
            remote_table,
            last_local_table,
            dict: None,
        });
    }
    if crate::io::write_all(&s, b"200\n", Some(session::HANDSHAKE)).await.is_ok() {
        peer.status.store(200, Relaxed);
        peer.last_hdshk.store(now_ms(), Relaxed);
        session::run(&sec, idx, id, &s, rest, kill).await;
    }
    release(&sec.peers[idx], id);
}

/// Forgets session `id` of `peer` if it is still the active one.
fn release(peer: &PeerRt, id: u64) {
    let mut slot = peer.session.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if slot.as_ref().is_some_and(|a| a.id == id) {
        *slot = None;
    }
}

/// Keeps a connection to remote node `idx`: connects when no session serves it,
/// retrying every 5 s (50 ms to 2 s after a collision, as HAProxy).
async fn connect_loop(sec: Arc<PeersRt>, idx: usize, rt: Arc<Runtime>) {
    let peer = &sec.peers[idx];
    let Some(addr) = peer.addr else { return };
    let mut next = tokio::time::Instant::now();
    loop {
        tokio::time::sleep_until(next).await;
        if rt.global.is_stopping() {
            return;
        }
        next = tokio::time::Instant::now() + RECONNECT;
        peer.reconnect.store(now_ms().wrapping_add(RECONNECT.as_millis() as u32), Relaxed);
        sec.task_calls.fetch_add(1, Relaxed);
        let id = SESSION_IDS.fetch_add(1, Relaxed);
        let kill = Arc::new(tokio::sync::Notify::new());
        {
            let mut slot = peer.session.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if slot.is_some() {
                next = tokio::time::Instant::now() + Duration::from_millis(500);
                continue;
            }
            *slot = Some(ActiveSession {
                id,
                kill: kill.clone(),
                established: false,
                src: None,
                dst: Some(addr),
                remote_table: None,
                last_local_table: None,
                dict: None,
            });
        }
        inc(&peer.counters.new_conn);
        peer.status.store(100, Relaxed);
        peer.last_hdshk.store(now_ms(), Relaxed);
        let end = outgoing(&sec, idx, id, addr, kill).await;
        release(peer, id);
        if matches!(end, End::Killed) {
            next = tokio::time::Instant::now() + Duration::from_millis(50 + jitter(2000));
        }
    }
}

async fn outgoing(sec: &Arc<PeersRt>, idx: usize, id: u64, addr: SocketAddr, kill: Arc<tokio::sync::Notify>) -> End {
    let peer = &sec.peers[idx];
    let s = match tokio::time::timeout(CONNECT, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(s)) => s,
        Ok(Err(_)) => return End::Io,
        Err(_) => return End::Timeout,
    };
    let src = s.local_addr().ok();
    let _ = s.set_nodelay(true);
    match peer.tls.clone() {
        Some(tls) => {
            let name = ServerName::IpAddress(addr.ip().into());
            let hs = tokio::select! {
                r = crate::tls::stream::connect(s, tls, name, Some(CONNECT)) => r,
                () = kill.notified() => return End::Killed,
            };
            match hs {
                Ok(s) => established(sec, idx, id, s, src, kill).await,
                Err(_) => End::Io,
            }
        }
        None => established(sec, idx, id, s, src, kill).await,
    }
}

/// Our connection to remote node `idx` is up (its TLS handshake done): the hello, then
/// the session.
async fn established<S: Sock>(
    sec: &Arc<PeersRt>,
    idx: usize,
    id: u64,
    s: S,
    src: Option<SocketAddr>,
    kill: Arc<tokio::sync::Notify>,
) -> End {
    let peer = &sec.peers[idx];
    let hello = tokio::select! {
        r = session::connect_hello(sec, peer, &s) => r,
        () = kill.notified() => return End::Killed,
    };
    let rest = match hello {
        Ok(rest) => rest,
        Err(e) => return e,
    };
    let mut current = false;
    peer.with_session(id, |a| {
        a.established = true;
        a.src = src;
        current = true;
    });
    if !current {
        return End::Killed;
    }
    session::run(sec, idx, id, &s, rest, kill).await
}

/// A pseudo-random number below `n` (spreads reconnections after collisions).
fn jitter(n: u64) -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    (u64::from(t.subsec_nanos()) ^ u64::from(std::process::id()).wrapping_mul(0x9e37_79b9)) % n.max(1)
}
