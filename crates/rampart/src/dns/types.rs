//! What the runtime model holds of name resolution, read by the stats and the runtime
//! API and written by the resolvers (`crate::dns`): each `resolvers` section with its
//! nameservers' counters, and what a server asks of DNS.
//! HAProxy counterparts: `struct resolvers`, `struct dns_counters`
//! (include/haproxy/resolvers-t.h, dns-t.h), the `resolv_*` fields of `struct server`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use arc_swap::ArcSwapOption;
use parking_lot::Mutex;
use rampart_cfg::model::{Net, Resolvers};

pub mod udp;

/// A `resolvers` section at run time.
#[derive(Debug)]
pub struct ResolversRt {
    pub conf: Resolvers,
    /// One per nameserver, in configuration order.
    pub counters: Vec<Arc<NsCounters>>,
    /// One per nameserver: the datagram socket its UDP questions share (unused for a
    /// `tcp@` one).
    pub udp: Vec<udp::NsSocket>,
    /// The last valid answer for each name a server follows: what `do-resolve` reuses.
    /// A lock held for one lookup or one insertion (each answer a server gets), never
    /// on the request path unless `do-resolve` is.
    answers: Mutex<Answers>,
}

/// A name asked: lower case, and whether IPv6 is preferred.
type AnswerKey = (String, bool);
/// A valid answer's addresses and when it came.
type Answer = (Arc<[IpAddr]>, Instant);
/// Valid answers by name asked.
type Answers = HashMap<AnswerKey, Answer>;

impl ResolversRt {
    pub fn new(conf: &Resolvers) -> ResolversRt {
        ResolversRt {
            counters: conf.nameservers.iter().map(|_| Arc::default()).collect(),
            udp: conf.nameservers.iter().map(|_| udp::NsSocket::default()).collect(),
            conf: conf.clone(),
            answers: Mutex::default(),
        }
    }

    /// A server's resolution of `name` (its preferred family first) got `ips`. As
    /// HAProxy's resolutions, which a server keeps alive and `do-resolve` shares
    /// (`resolv_pick_resolution()`): the answer is reused for `hold valid`. A name seen
    /// for the first time drops the answers past `hold valid` on the way (a name no
    /// server follows any longer), so that the map holds the names followed now.
    pub fn keep_answer(&self, name: &str, prefer_v6: bool, ips: &[IpAddr]) {
        let key = (name.to_ascii_lowercase(), prefer_v6);
        let now = Instant::now();
        let mut answers = self.answers.lock();
        if !answers.contains_key(&key) {
            let valid = self.conf.hold.valid;
            answers.retain(|_, (_, at)| now.saturating_duration_since(*at) < valid);
        }
        answers.insert(key, (ips.into(), now));
    }

    /// A server's resolution of `name` failed: nothing is reused.
    pub fn forget_answer(&self, name: &str, prefer_v6: bool) {
        let mut answers = self.answers.lock();
        if !answers.is_empty() {
            answers.remove(&(name.to_ascii_lowercase(), prefer_v6));
        }
    }

    /// The addresses of `name` a server's resolution got less than `hold valid` ago
    /// (HAProxy's `do-resolve` uses them without a query).
    pub fn fresh_answer(&self, name: &str, prefer_v6: bool) -> Option<Arc<[IpAddr]>> {
        let answers = self.answers.lock();
        if answers.is_empty() {
            return None;
        }
        let (ips, at) = answers.get(&(name.to_ascii_lowercase(), prefer_v6))?;
        (at.elapsed() < self.conf.hold.valid).then(|| ips.clone())
    }
}

/// What one nameserver answered (`show resolvers`), HAProxy's names.
#[derive(Debug, Default)]
pub struct NsCounters {
    pub sent: AtomicU64,
    pub snd_error: AtomicU64,
    pub valid: AtomicU64,
    pub update: AtomicU64,
    pub cname: AtomicU64,
    pub cname_error: AtomicU64,
    pub any_err: AtomicU64,
    pub nx: AtomicU64,
    pub timeout: AtomicU64,
    pub refused: AtomicU64,
    pub other: AtomicU64,
    pub invalid: AtomicU64,
    pub too_big: AtomicU64,
    pub truncated: AtomicU64,
    pub outdated: AtomicU64,
}

impl NsCounters {
    /// The counters in `show resolvers` order, with their names.
    pub fn rows(&self) -> [(&'static str, u64); 15] {
        let v = |c: &AtomicU64| c.load(Ordering::Relaxed);
        [
            ("sent", v(&self.sent)),
            ("snd_error", v(&self.snd_error)),
            ("valid", v(&self.valid)),
            ("update", v(&self.update)),
            ("cname", v(&self.cname)),
            ("cname_error", v(&self.cname_error)),
            ("any_err", v(&self.any_err)),
            ("nx", v(&self.nx)),
            ("timeout", v(&self.timeout)),
            ("refused", v(&self.refused)),
            ("other", v(&self.other)),
            ("invalid", v(&self.invalid)),
            ("too_big", v(&self.too_big)),
            ("truncated", v(&self.truncated)),
            ("outdated", v(&self.outdated)),
        ]
    }
}

/// Adds one to a counter.
pub fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// Bumped each time a server's host name changes at run time (`set server fqdn`, an SRV
/// record taking or leaving a template slot, the state file at startup): what a
/// resolution caches of the servers sharing its name holds while this stays the same.
static NAMES_CHANGED: AtomicU64 = AtomicU64::new(0);

/// How many times servers' host names changed so far (see [`SrvDns::set_hostname`]).
pub fn names_changed() -> u64 {
    NAMES_CHANGED.load(Ordering::Relaxed)
}

/// How a server follows DNS (a server whose address is a name).
#[derive(Debug)]
pub struct SrvDns {
    /// The `resolvers` section (index into `Runtime::resolvers`); `None`: the name was
    /// resolved once at startup.
    pub resolvers: Option<usize>,
    /// The name as configured; one starting with `_` is an SRV request.
    pub conf_name: String,
    /// The host name resolved now (`srv_fqdn`): the configured one, the target an SRV
    /// record gave, or the one `set server fqdn` set; `None` for a template slot no
    /// record fills. Changed through [`SrvDns::set_hostname`] only.
    pub hostname: ArcSwapOption<String>,
    /// Told by `set server fqdn`, so that the resolver starts over at once.
    pub fqdn_changed: tokio::sync::Notify,
    /// The name was set at run time (`set server fqdn`, an SRV record): HAProxy's
    /// `SRV_ADMF_HMAINT` (0x40 in `show servers state`), which never clears at run time.
    pub fqdn_set: AtomicBool,
    pub prefer_v6: bool,
    pub nets: Vec<Net>,
    pub allow_dup_ip: bool,
    pub ignore_weight: bool,
}

impl SrvDns {
    /// An SRV request (`_service._proto.name`).
    pub fn is_srv(&self) -> bool {
        self.conf_name.starts_with('_')
    }

    /// Whether the name was set at run time (`SRV_ADMF_HMAINT`).
    pub fn fqdn_set_at_run_time(&self) -> bool {
        self.fqdn_set.load(Ordering::Relaxed)
    }

    /// The host name resolved now, if any.
    pub fn hostname(&self) -> Option<std::sync::Arc<String>> {
        self.hostname.load_full()
    }

    /// Sets the host name resolved now (`None`: a template slot no record fills), and
    /// tells the resolvers (see [`names_changed`]).
    pub fn set_hostname(&self, name: Option<String>) {
        self.hostname.store(name.map(Arc::new));
        NAMES_CHANGED.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether `ip` is in one of the preferred networks (`resolve-net`).
    pub fn in_preferred_net(&self, ip: IpAddr) -> bool {
        self.nets.iter().any(|n| n.contains(ip))
    }
}
