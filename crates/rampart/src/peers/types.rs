//! What the runtime model holds of the peers: each `peers` section with its nodes,
//! their connection state and counters, and the tables it replicates. Written by the
//! peer sessions (`crate::peers`), read by `show peers`.
//! HAProxy counterparts: `struct peers`, `struct peer`, `struct shared_table`
//! (include/haproxy/peers-t.h).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::SystemTime;

use crate::stick::StickTable;

#[allow(clippy::disallowed_types)] // reason: connection bookkeeping, never on the request path
pub type Lock<T> = std::sync::Mutex<T>;

/// A `peers` section with a local node, at run time.
#[derive(Debug)]
pub struct PeersRt {
    pub name: String,
    /// The local node's name (what remote nodes must call us in their hello).
    pub local: String,
    pub disabled: bool,
    /// Every node of the section, the local one included, in configuration order.
    pub peers: Vec<PeerRt>,
    /// The replicated tables; a table's local id is its index plus one.
    pub tables: Vec<SharedTable>,
    /// Wakes the sessions when an entry of one of the tables changes here.
    pub changed: Arc<tokio::sync::Notify>,
    /// When the section was set up (`show peers`).
    pub last_change: SystemTime,
    /// Learned everything a remote node knew (or nobody could teach us).
    pub resynced: AtomicBool,
    /// A session was chosen to ask for a full resync and has not finished.
    pub learning: AtomicBool,
    /// HAProxy's `PEERS_F_*` flags as `show peers` prints them.
    pub flags: AtomicU32,
    /// Updates a session pushes in one go (`tune.peers.max-updates-at-once`).
    pub max_updates: usize,
    /// The TLS side of the section's `bind ... ssl` line: remote nodes connect over TLS.
    pub bind_tls: Option<Arc<crate::tls::bind::BindTls>>,
    /// The address the local node listens on, once bound (an `fd@` bind's included).
    pub bound: Lock<Option<SocketAddr>>,
    /// When nobody taught us yet, until when we wait for it (a tick).
    pub resync_timeout: AtomicU32,
    /// The section's sync task runs (`task_calls`).
    pub task_calls: AtomicU32,
}

/// A replicated table: its name on the wire and the table.
#[derive(Debug)]
pub struct SharedTable {
    /// The name the peers protocol sends (a proxy's name, or `/<name>` for a section's table).
    pub wire_name: String,
    pub table: Arc<StickTable>,
    /// `write-to`: the table what the peers teach this one is also written to.
    pub write_to: Option<Arc<StickTable>>,
}

/// One node of a section.
#[derive(Debug)]
pub struct PeerRt {
    pub name: String,
    /// Where to connect (a remote node), or where we listen (the local one).
    pub addr: Option<SocketAddr>,
    pub local: bool,
    /// How to connect to a remote node over TLS (its line's `ssl` and the options with
    /// it), `None` in clear.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// The last handshake status (`show peers`' `last_status`): 0 none, 100 connecting,
    /// 110 connected, else the code received or sent.
    pub status: AtomicU32,
    /// When the last handshake ended (a millisecond tick, 0: never).
    pub last_hdshk: AtomicU32,
    /// When the next reconnection or liveness check is due (a tick, 0: none).
    pub reconnect: AtomicU32,
    /// When the next heartbeat is due (a tick, 0: none).
    pub heartbeat: AtomicU32,
    pub counters: PeerCounters,
    /// The remote side announced protocol 2.0: send no expiry in updates.
    pub downgrade: AtomicBool,
    /// The session currently serving this node, if any.
    pub session: Lock<Option<ActiveSession>>,
    /// Per table (same order as [`PeersRt::tables`]): what was exchanged with the node.
    pub tables: Vec<PeerTable>,
}

/// HAProxy's per-peer counters (`show peers`), plus what rampart counts beside them.
#[derive(Debug, Default)]
pub struct PeerCounters {
    pub new_conn: AtomicU32,
    pub proto_err: AtomicU32,
    pub coll: AtomicU32,
    pub tx_hbt: AtomicU32,
    pub rx_hbt: AtomicU32,
    pub no_hbt: AtomicU32,
    pub confirm: AtomicU32,
    /// Definitions of tables this node does not replicate (ignored, as HAProxy does).
    pub unknown_tables: AtomicU32,
    /// Messages longer than the limit (the session was closed).
    pub too_big: AtomicU32,
}

/// The session serving a node: how to end it, and its addresses.
#[derive(Debug, Clone)]
pub struct ActiveSession {
    pub id: u64,
    pub kill: Arc<tokio::sync::Notify>,
    /// Handshake done.
    pub established: bool,
    pub src: Option<SocketAddr>,
    pub dst: Option<SocketAddr>,
    /// Table (index) the node's last definition or switch named.
    pub remote_table: Option<usize>,
    /// Table (index) of our last definition sent.
    pub last_local_table: Option<usize>,
    /// The session's `server_key` caches (`show peers dict`), once it runs.
    pub dict: Option<Arc<Lock<DictCache>>>,
}

/// The most `server_key` strings a session caches each way (HAProxy's
/// `PEER_STKT_CACHE_MAX_ENTRIES`): a string is sent in full the first time, then by
/// its slot number while it stays in the slot.
pub const DICT_SLOTS: usize = 128;

/// A session's `server_key` caches: what we sent in each slot (a dictionary number)
/// and what the other node sent in each of its slots. Fresh for each session (HAProxy
/// flushes a node's caches when its session ends).
#[derive(Debug)]
pub struct DictCache {
    sent: Vec<u64>,
    next: usize,
    received: Vec<u64>,
}

impl Default for DictCache {
    fn default() -> Self {
        DictCache { sent: vec![0; DICT_SLOTS], next: 0, received: vec![0; DICT_SLOTS] }
    }
}

impl DictCache {
    /// The slot (1-based) that carries dictionary number `id`, and whether the string
    /// must go with it (a slot newly given to it, round robin as HAProxy).
    pub fn slot_to_send(&mut self, id: u64) -> (u64, bool) {
        if let Some(i) = self.sent.iter().position(|&v| v == id) {
            return (i as u64 + 1, false);
        }
        let i = self.next;
        self.next = (self.next + 1) % DICT_SLOTS;
        self.sent[i] = id;
        (i as u64 + 1, true)
    }

    /// The dictionary number of what the other node sent in `slot` (with `value` the
    /// first time); 0 when unknown.
    pub fn received(&mut self, slot: u64, value: Option<&[u8]>) -> u64 {
        let Some(i) = usize::try_from(slot).ok().and_then(|s| s.checked_sub(1)).filter(|&i| i < DICT_SLOTS) else {
            return 0;
        };
        if let Some(v) = value {
            self.received[i] = std::str::from_utf8(v).map_or(0, crate::stick::dict::intern);
        }
        self.received[i]
    }

    /// The dictionary numbers of the slots we filled, in slot order, up to the first
    /// empty one (as `show peers dict` lists them).
    pub fn sent_slots(&self) -> impl Iterator<Item = u64> + '_ {
        self.sent.iter().copied().take_while(|&id| id != 0)
    }

    /// The dictionary number the other node put in each slot (0: none).
    pub fn received_slots(&self) -> &[u64] {
        &self.received
    }
}

/// What was exchanged with a node for one table (HAProxy's `struct shared_table`).
#[derive(Debug, Default)]
pub struct PeerTable {
    /// The node's id for the table (0: not defined by it).
    pub remote_id: AtomicU64,
    /// The data types the node stores (its definition's bitfield).
    pub remote_data: AtomicU64,
    /// The last of our updates pushed to the node.
    pub last_pushed: AtomicU64,
    /// The last of our updates the node acknowledged (kept across sessions).
    pub update: AtomicU64,
    /// The node's last update received, and the last acknowledged.
    pub last_get: AtomicU32,
    pub last_acked: AtomicU32,
    /// Where the last full resync taught from.
    pub teaching_origin: AtomicU64,
}

impl PeerRt {
    pub fn new(name: &str, addr: Option<SocketAddr>, local: bool, tables: usize) -> PeerRt {
        PeerRt {
            name: name.to_owned(),
            addr,
            local,
            tls: None,
            status: AtomicU32::new(0),
            last_hdshk: AtomicU32::new(0),
            reconnect: AtomicU32::new(0),
            heartbeat: AtomicU32::new(0),
            counters: PeerCounters::default(),
            downgrade: AtomicBool::new(false),
            session: Lock::new(None),
            tables: (0..tables).map(|_| PeerTable::default()).collect(),
        }
    }

    /// The session serving the node, if any.
    pub fn active(&self) -> Option<ActiveSession> {
        self.session.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Updates the active session's record, if it is still session `id`.
    pub fn with_session(&self, id: u64, f: impl FnOnce(&mut ActiveSession)) {
        let mut s = self.session.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(a) = s.as_mut().filter(|a| a.id == id) {
            f(a);
        }
    }
}

/// Adds one to a counter.
pub fn inc(c: &AtomicU32) {
    c.fetch_add(1, Relaxed);
}
