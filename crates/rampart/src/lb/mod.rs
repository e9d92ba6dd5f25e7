//! Load-balancing algorithms: pick a server index for a request. Pure: no sockets, no
//! runtime handles; server availability and load are passed in as closures, and the
//! stream computes the hash key of the hashing algorithms (see [`KeySource`]).
//! HAProxy counterpart: src/lb_*.c and the algorithm dispatch of `assign_server()`
//! (src/backend.c).
//!
//! - `roundrobin`: smooth weighted rotation (`roundrobin`; `static-rr` walks the
//!   map-based table in HAProxy's order).
//! - `leastconn`, `first`, `random`: one file each.
//! - `order`: the servers ordered by load for `leastconn` and `prefix-affinity`
//!   (O(log n) picks, lock-free updates on every stream start and end).
//! - `hash`: HAProxy's hash functions and the key extraction of `source`, `uri`,
//!   `url_param`, `hdr`.
//! - `chash`: the consistent ring (`hash-type consistent`, and `random`).
//! - `map`: the slot table of `hash-type map-based`.
//! - `peak_ewma`: `balance peak-ewma`, a rampart extension (response-time aware).
//! - `affinity`: `balance prefix-affinity` (rampart extension): a prompt's first bytes
//!   go back to the server that served them, within a bounded load.
//!
//! Weights can change at run time ([`Lb::set_weight`]): the weighted tables are
//! rebuilt and swapped in atomically, picks never take a lock.

mod affinity;
mod chash;
mod first;
pub mod hash;
mod leastconn;
mod map;
mod order;
mod peak_ewma;
mod random;
mod roundrobin;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
// PERF: the writer lock serializes weight and state changes and `add server`; picks
// read the published snapshot and never take it.
#[allow(clippy::disallowed_types)]
use std::sync::Mutex;

use arc_swap::ArcSwap;

pub use chash::Ring;
pub use hash::{HashFn, Hasher, UriOpts};
pub use map::Map;
pub use roundrobin::RoundRobin;

/// What the stream hashes for a hashing algorithm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// `balance source`: the client address.
    Source,
    /// `balance uri`.
    Uri(UriOpts),
    /// `balance url_param <name>`.
    UrlParam(Box<str>),
    /// `balance hdr(<name>) [use_domain_only]`.
    Hdr { name: Box<str>, domain_only: bool },
    /// `balance rdp-cookie[(<name>)]`: the value of that RDP cookie in a TCP
    /// stream's request bytes.
    RdpCookie(Box<str>),
    /// `balance hash <expr>`: the expression is compiled and kept by the proxy.
    Expr,
}

/// The algorithm of a backend as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Algo {
    RoundRobin,
    StaticRr,
    LeastConn,
    First,
    /// `random(<draws>)`.
    Random(u32),
    /// `peak-ewma [decay <time>]` (rampart extension).
    PeakEwma(std::time::Duration),
    Hash(KeySource),
    /// `prefix-affinity [<expr>] [len <n>]` (rampart extension): the stream hashes the
    /// first `n` bytes of the expression's sample (see [`Lb::prefix_len`]).
    PrefixAffinity(u32),
}

/// The load bound of `prefix-affinity` without `hash-balance-factor`: a server takes
/// up to 25 % more streams than its share before its keys spill to the next one.
pub const PREFIX_AFFINITY_FACTOR: u32 = 125;

/// `balance`, `hash-type` and `hash-balance-factor` of a backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LbConfig {
    pub algo: Algo,
    /// `hash-type consistent` (else map-based).
    pub consistent: bool,
    pub hasher: Hasher,
    /// `hash-balance-factor` (0: off), consistent hashing only.
    pub balance_factor: u32,
}

/// The weighted structure an algorithm walks, rebuilt when a weight changes.
#[derive(Debug)]
enum Table {
    Cycle(RoundRobin),
    Ring(Ring),
    Map(Map),
    /// `leastconn`, `first` and `prefix-affinity` read the weights directly.
    None,
}

/// The servers an algorithm knows, with their weights: replaced as a whole when
/// `add server` appends one, so that a pick reads one consistent snapshot.
#[derive(Debug)]
struct Members {
    /// Current weight of each server.
    weights: Box<[AtomicU32]>,
    /// Whether each server is in the active tables: not a backup (backups are picked
    /// apart, see `backend::pick_server`), not disabled or down.
    active: Box<[AtomicBool]>,
    /// HAProxy's numeric server ids (`puid`), which place servers on the ring.
    ids: Box<[u32]>,
    /// Server indices by ascending id (`first`).
    by_id: Box<[u32]>,
}

impl Members {
    fn new(weights: &[u32], ids: &[u32], active: &[bool]) -> Members {
        let ids: Box<[u32]> = (0..weights.len()).map(|i| ids.get(i).copied().unwrap_or(i as u32 + 1)).collect();
        let mut by_id: Vec<u32> = (0..weights.len() as u32).collect();
        by_id.sort_by_key(|&i| ids[i as usize]);
        Members {
            weights: weights.iter().map(|&w| AtomicU32::new(w)).collect(),
            active: (0..weights.len()).map(|i| AtomicBool::new(active.get(i).copied().unwrap_or(true))).collect(),
            ids,
            by_id: by_id.into(),
        }
    }

    fn len(&self) -> usize {
        self.weights.len()
    }

    /// Current weight of server `i` for picking: 0 while it is out of the active
    /// tables.
    #[inline]
    fn weight(&self, i: usize) -> u32 {
        match (self.weights.get(i), self.active.get(i)) {
            (Some(w), Some(a)) if a.load(Ordering::Relaxed) => w.load(Ordering::Relaxed),
            _ => 0,
        }
    }
}

/// What a pick reads: the members and the weighted table built from them.
#[derive(Debug)]
struct Snapshot {
    members: Arc<Members>,
    table: Table,
    /// The servers by load (`leastconn`, `prefix-affinity`, once loads are counted:
    /// [`Lb::counting_loads`]); kept across rebuilds while it has room.
    order: Option<Arc<order::Order>>,
    /// Bounded loads (`hash-balance-factor`, `prefix-affinity`): each server's weight
    /// (× 16) summed over the servers before it, and over all (HAProxy's
    /// `cumulative_weight` and `tot_weight`, of the servers in the tables).
    cum: Box<[u64]>,
    tot_weight: u64,
}

/// The algorithm of one backend.
#[derive(Debug)]
pub struct Lb {
    cfg: LbConfig,
    /// The common divisor of the configured weights (`hash-type map-based`).
    gcd: u32,
    table: ArcSwap<Snapshot>,
    /// Serializes the changes (weights, states, added servers): checks and the CLI,
    /// never a pick.
    #[allow(clippy::disallowed_types)]
    writer: Mutex<()>,
    /// Rotation for ties and for round robin over a ring or map.
    cursor: AtomicUsize,
    /// Response-time averages (`peak-ewma` only).
    ewma: Option<peak_ewma::PeakEwma>,
    /// Which server each recent key went to (`prefix-affinity` only).
    affinity: Option<affinity::Affinity>,
    /// Streams per server as reported by [`Lb::stream_started`] and
    /// [`Lb::stream_ended`] (see [`Lb::counting_loads`]).
    loads: Option<order::Loads>,
}

impl Lb {
    /// `weights[i]` is the configured weight of server `i`, `ids[i]` its numeric id,
    /// `active[i]` whether it starts in the active tables (see [`Lb::set_active`]).
    pub fn new(cfg: LbConfig, weights: &[u32], ids: &[u32], active: &[bool]) -> Lb {
        let members = Arc::new(Members::new(weights, ids, active));
        let gcd = map::weights_gcd(weights);
        let lb = Lb {
            table: ArcSwap::from_pointee(Snapshot {
                members: members.clone(),
                table: Table::None,
                order: None,
                cum: Box::default(),
                tot_weight: 0,
            }),
            gcd,
            #[allow(clippy::disallowed_types)] // writers only (see the `use`)
            writer: Mutex::new(()),
            cursor: AtomicUsize::new(0),
            ewma: match cfg.algo {
                Algo::PeakEwma(decay) => Some(peak_ewma::PeakEwma::new(weights.len(), decay)),
                _ => None,
            },
            affinity: matches!(cfg.algo, Algo::PrefixAffinity(_)).then(affinity::Affinity::default),
            loads: None,
            cfg,
        };
        lb.rebuild(members);
        lb
    }

    /// Makes the balancer count the streams of its servers itself, told by
    /// [`Lb::stream_started`] and [`Lb::stream_ended`], for the algorithms that read
    /// loads of many servers per pick: `leastconn` and `prefix-affinity` then keep the
    /// servers ordered by load (a pick is O(log n), see `order`), bounded loads
    /// (`hash-balance-factor`) the backend's total. Without it (and for the other
    /// algorithms) the `load` of [`Lb::pick_keyed`] is read, scanning every server.
    pub fn counting_loads(mut self) -> Lb {
        let bounded = matches!(self.cfg.algo, Algo::Hash(_)) && self.cfg.consistent && self.cfg.balance_factor > 0;
        if matches!(self.cfg.algo, Algo::LeastConn | Algo::PrefixAffinity(_)) || bounded {
            let loads = order::Loads::default();
            let members = self.table.load().members.clone();
            loads.reserve(members.len());
            self.loads = Some(loads);
            self.rebuild(members);
        }
        self
    }

    /// A stream took a slot on server `i` (with [`Lb::counting_loads`]; else nothing).
    /// Lock-free, O(log n).
    #[inline]
    pub fn stream_started(&self, i: usize) {
        self.count(i, true);
    }

    /// A stream left server `i`.
    #[inline]
    pub fn stream_ended(&self, i: usize) {
        self.count(i, false);
    }

    fn count(&self, i: usize, up: bool) {
        let Some(loads) = &self.loads else { return };
        loads.add(i, up);
        let snap = self.table.load();
        if let Some(o) = &snap.order {
            o.refresh(i, || loads.get(i), || snap.members.weight(i));
        }
    }

    /// A plain round robin over `weights` (tests, and backends built without
    /// configuration).
    pub fn round_robin(weights: &[u32]) -> Lb {
        let ids: Vec<u32> = (1..=weights.len() as u32).collect();
        Lb::new(
            LbConfig { algo: Algo::RoundRobin, consistent: false, hasher: Hasher::default(), balance_factor: 0 },
            weights,
            &ids,
            &[],
        )
    }

    pub fn config(&self) -> &LbConfig {
        &self.cfg
    }

    /// What the stream must hash before [`Lb::pick`], if anything.
    pub fn key_source(&self) -> Option<&KeySource> {
        match &self.cfg.algo {
            Algo::Hash(k) => Some(k),
            Algo::PrefixAffinity(_) => Some(&KeySource::Expr),
            _ => None,
        }
    }

    /// How many bytes of the key's sample to hash (`prefix-affinity`); all otherwise.
    pub fn prefix_len(&self) -> Option<usize> {
        match self.cfg.algo {
            Algo::PrefixAffinity(n) => Some(n as usize),
            _ => None,
        }
    }

    /// Whether the stream must report response times ([`Lb::observe`]).
    pub fn wants_latency(&self) -> bool {
        self.ewma.is_some()
    }

    /// Reports how long server `i` took to answer (to its response head), or that it
    /// failed (connection error, 5xx, 429), for `peak-ewma`.
    pub fn observe(&self, i: usize, rtt: std::time::Duration, failed: bool) {
        if let Some(e) = &self.ewma {
            e.observe(i, rtt, failed);
        }
    }

    /// The current response-time average of server `i` (`peak-ewma`), for the stats.
    pub fn ewma_cost(&self, i: usize) -> Option<std::time::Duration> {
        self.ewma.as_ref().map(|e| e.cost(i))
    }

    /// Hashes a key the way this backend's `hash-type` says.
    pub fn hash(&self, key: &[u8]) -> u32 {
        self.cfg.hasher.hash(key)
    }

    /// Current weight of server `i` for picking: 0 while it is out of the active
    /// tables.
    pub fn weight(&self, i: usize) -> u32 {
        self.table.load().members.weight(i)
    }

    /// Puts server `i` in or out of the active tables, keeping its weight: for the
    /// health checks and `set server state` (a server going DOWN or to MAINT, then UP).
    /// The `usable` predicate of [`Lb::pick_keyed`] already skips such a server, which
    /// is exact for every algorithm but `hash-type map-based`, whose slot table depends
    /// on which servers are in it: call this on every state change.
    pub fn set_active(&self, i: usize, active: bool) {
        let _w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let members = self.table.load().members.clone();
        if let Some(a) = members.active.get(i) {
            if a.swap(active, Ordering::Relaxed) != active {
                self.rebuild(members);
            }
        }
    }

    /// Whether weights may change at run time to other values than 0 and the initial
    /// one (HAProxy's `BE_LB_PROP_DYN`): not for `static-rr` nor map-based hashing.
    pub fn dynamic_weights(&self) -> bool {
        match self.cfg.algo {
            Algo::StaticRr => false,
            Algo::Hash(_) => self.cfg.consistent,
            _ => true,
        }
    }

    /// Whether servers may be added at run time (`add server`): the algorithms with
    /// dynamic weights, as HAProxy; not the rampart extensions, which size their
    /// per-server state once.
    pub fn takes_added_servers(&self) -> bool {
        self.dynamic_weights() && self.ewma.is_none() && self.affinity.is_none()
    }

    /// Appends server `i` (the next index) with its weight and id, in or out of the
    /// active tables. Servers between the known ones and `i` (added for the other
    /// balancer of the backend) are appended out of the tables.
    pub fn add_server(&self, i: usize, weight: u32, id: u32, active: bool) {
        let _w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let old = self.table.load().members.clone();
        let n = old.len().max(i + 1);
        let weights: Vec<u32> = (0..n)
            .map(|s| old.weights.get(s).map_or(if s == i { weight } else { 0 }, |w| w.load(Ordering::Relaxed)))
            .collect();
        let ids: Vec<u32> = (0..n).map(|s| old.ids.get(s).copied().unwrap_or(if s == i { id } else { 0 })).collect();
        let act: Vec<bool> =
            (0..n).map(|s| old.active.get(s).map_or(s == i && active, |a| a.load(Ordering::Relaxed))).collect();
        if let Some(loads) = &self.loads {
            loads.reserve(n);
        }
        self.rebuild(Arc::new(Members::new(&weights, &ids, &act)));
    }

    /// Changes the weight of server `i` (0 takes it out of rotation) and rebuilds the
    /// weighted tables. For the runtime API and slow start; not on the request path.
    pub fn set_weight(&self, i: usize, weight: u32) {
        let _w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let members = self.table.load().members.clone();
        if let Some(w) = members.weights.get(i) {
            w.store(weight, Ordering::Relaxed);
            self.rebuild(members);
        }
    }

    /// Builds the weighted table of `members` and publishes both (under the writer
    /// lock, or before the balancer is shared).
    fn rebuild(&self, members: Arc<Members>) {
        let weights: Vec<u32> = (0..members.len()).map(|i| members.weight(i)).collect();
        let ring = || Ring::new(weights.iter().copied().zip(members.ids.iter().copied()));
        let table = match &self.cfg.algo {
            Algo::RoundRobin => Table::Cycle(RoundRobin::new(&weights)),
            // HAProxy's static-rr walks the map-based table, in its slot order
            Algo::StaticRr => Table::Map(Map::new(&weights, self.gcd)),
            Algo::LeastConn | Algo::First => Table::None,
            Algo::Random(_) | Algo::PeakEwma(_) => Table::Ring(ring()),
            Algo::PrefixAffinity(_) => Table::None,
            Algo::Hash(_) if self.cfg.consistent => Table::Ring(ring()),
            Algo::Hash(_) => Table::Map(Map::new(&weights, self.gcd)),
        };
        let bounded = self.cfg.balance_factor > 0 || matches!(self.cfg.algo, Algo::PrefixAffinity(_));
        let mut cum = Vec::with_capacity(if bounded { weights.len() } else { 0 });
        let mut tot_weight = 0u64;
        for &w in weights.iter().take(cum.capacity()) {
            cum.push(tot_weight);
            tot_weight += u64::from(w) * u64::from(chash::POINTS_PER_WEIGHT);
        }
        let order = self.order_for(&members);
        let fresh = order.as_ref().filter(|o| !self.table.load().order.as_ref().is_some_and(|p| Arc::ptr_eq(p, o)));
        if let (Some(o), Some(loads)) = (fresh, &self.loads) {
            // a new tree must be whole before picks see it
            o.refresh_all(members.len(), |i| loads.get(i), |i| members.weight(i));
        }
        let snap = Arc::new(Snapshot { members, table, order, cum: cum.into(), tot_weight });
        self.table.store(snap.clone());
        if let (Some(o), Some(loads)) = (&snap.order, &self.loads) {
            // weights and states changed in place; and a start or end counted while a
            // new tree was filled went to the old one: read every server again
            o.refresh_all(snap.members.len(), |i| loads.get(i), |i| snap.members.weight(i));
        }
    }

    /// The load order of `members`: the current tree while it has room, else a new one.
    fn order_for(&self, members: &Members) -> Option<Arc<order::Order>> {
        let n = members.len();
        if self.loads.is_none() || !matches!(self.cfg.algo, Algo::LeastConn | Algo::PrefixAffinity(_)) {
            return None;
        }
        if n > order::MAX_SERVERS {
            return None;
        }
        match &self.table.load().order {
            Some(o) if o.capacity() >= n => Some(o.clone()),
            _ => Some(Arc::new(order::Order::new(n))),
        }
    }

    /// Picks a server for which `usable` holds, or `None`, without a hash key and
    /// without reading loads (round robin style algorithms).
    pub fn pick(&self, usable: impl Fn(usize) -> bool) -> Option<usize> {
        self.pick_keyed(None, usable, |_| 0)
    }

    /// Picks a server for which `usable` holds. `key` is the hash the stream computed
    /// for a hashing algorithm (`None`: no key in the request, round robin as HAProxy
    /// falls back to); `load(i)` is the number of streams server `i` serves now
    /// (`leastconn`, `random`, `hash-balance-factor`).
    // COMPAT: when the server a key hashes to is full (`maxconn`), HAProxy queues the
    // stream on that server; rampart has only a backend queue and takes the next usable
    // server of the ring (or the map of the usable servers) instead.
    pub fn pick_keyed(
        &self,
        key: Option<u32>,
        usable: impl Fn(usize) -> bool,
        load: impl Fn(usize) -> u32,
    ) -> Option<usize> {
        let snap = self.table.load();
        let m = &*snap.members;
        let weight = |i: usize| m.weight(i);
        match (&self.cfg.algo, &snap.table) {
            (_, Table::Cycle(rr)) => rr.pick(usable),
            (Algo::LeastConn, _) => self.least(&snap, usable, load),
            (Algo::First, _) => first::pick(&m.by_id, weight, usable),
            (Algo::Random(draws), Table::Ring(ring)) => random::pick(ring, *draws, weight, usable, load),
            (Algo::PeakEwma(_), Table::Ring(ring)) => match &self.ewma {
                Some(e) => e.pick(ring, weight, usable, load),
                None => None,
            },
            (Algo::PrefixAffinity(_), _) => {
                let least = || self.least(&snap, &usable, &load);
                match (key, &self.affinity) {
                    (Some(h), Some(a)) => {
                        let factor = match self.cfg.balance_factor {
                            0 => PREFIX_AFFINITY_FACTOR,
                            f => f,
                        };
                        a.pick(h, &usable, self.bounded(&snap, factor, &load), least)
                    }
                    _ => least(),
                }
            }
            (_, Table::Ring(ring)) => match key {
                Some(h) if self.cfg.balance_factor > 0 => {
                    ring.lookup(h, &usable, self.bounded(&snap, self.cfg.balance_factor, &load))
                }
                Some(h) => ring.lookup(h, usable, |_| true),
                None => self.rotate(ring.len(), |at| ring.server_at(at), usable),
            },
            (_, Table::Map(map)) => match key {
                Some(h) => map.lookup(h, usable),
                None => self.rotate(map.len(), |at| map.server_at(at), usable),
            },
            (_, Table::None) => None,
        }
    }

    /// HAProxy's round robin over the ring's points or the map's slots, for a hashing
    /// backend whose request has no key.
    fn rotate(&self, len: usize, server_at: impl Fn(usize) -> usize, usable: impl Fn(usize) -> bool) -> Option<usize> {
        (0..len).map(|_| server_at(self.cursor.fetch_add(1, Ordering::Relaxed))).find(|&s| usable(s))
    }

    /// The usable server with the fewest streams per weight: from the load order when
    /// loads are counted, else by a scan of `load`.
    fn least(&self, snap: &Snapshot, usable: impl Fn(usize) -> bool, load: impl Fn(usize) -> u32) -> Option<usize> {
        let m = &*snap.members;
        match &snap.order {
            Some(o) => match m.len() {
                0 => None,
                n => o.pick(self.cursor.fetch_add(1, Ordering::Relaxed) % n, usable),
            },
            None => leastconn::pick(&self.cursor, m.len(), |i| m.weight(i), usable, load),
        }
    }

    /// The bounded-load test of a server (`hash-balance-factor`), O(1): HAProxy's
    /// `chash_server_is_eligible` over the servers in the tables, whatever this pick
    /// may use, and the streams of the whole backend (counted, or summed from `load`).
    fn bounded<'a>(
        &self,
        snap: &'a Snapshot,
        factor: u32,
        load: &'a impl Fn(usize) -> u32,
    ) -> impl Fn(usize) -> bool + 'a {
        let m = &*snap.members;
        let total = match &self.loads {
            Some(l) => l.total(),
            // PERF: O(servers), for a balancer that does not count loads (tests)
            None => (0..m.len()).map(|i| u64::from(load(i))).sum(),
        };
        move |s| {
            let w = u64::from(m.weight(s)) * u64::from(chash::POINTS_PER_WEIGHT);
            let cum = snap.cum.get(s).copied().unwrap_or(0);
            chash::eligible(factor, total, snap.tot_weight, w, cum, u64::from(load(s)))
        }
    }
}

#[cfg(test)]
mod tests;
