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

use arc_swap::{ArcSwap, ArcSwapOption};
use rampart_cfg::model::{Net, Resolvers};

/// A `resolvers` section at run time.
#[derive(Debug)]
pub struct ResolversRt {
    pub conf: Resolvers,
    /// One per nameserver, in configuration order.
    pub counters: Vec<NsCounters>,
    /// The last valid answer for each name a server follows: what `do-resolve` reuses.
    answers: ArcSwap<Answers>,
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
            counters: conf.nameservers.iter().map(|_| NsCounters::default()).collect(),
            conf: conf.clone(),
            answers: ArcSwap::default(),
        }
    }

    /// A server's resolution of `name` (its preferred family first) got `ips`. As
    /// HAProxy's resolutions, which a server keeps alive and `do-resolve` shares
    /// (`resolv_pick_resolution()`): the answer is reused for `hold valid`. Answers
    /// past it are dropped on the way.
    pub fn keep_answer(&self, name: &str, prefer_v6: bool, ips: &[IpAddr]) {
        let key = (name.to_ascii_lowercase(), prefer_v6);
        let valid = self.conf.hold.valid;
        let ips: Arc<[IpAddr]> = ips.into();
        self.answers.rcu(|old| {
            let mut next: Answers = old.iter().filter(|(_, (_, at))| at.elapsed() < valid).map(clone_entry).collect();
            next.insert(key.clone(), (ips.clone(), Instant::now()));
            next
        });
    }

    /// A server's resolution of `name` failed: nothing is reused.
    pub fn forget_answer(&self, name: &str, prefer_v6: bool) {
        let key = (name.to_ascii_lowercase(), prefer_v6);
        if self.answers.load().contains_key(&key) {
            self.answers.rcu(|old| {
                let mut next: Answers = old.iter().map(clone_entry).collect();
                next.remove(&key);
                next
            });
        }
    }

    /// The addresses of `name` a server's resolution got less than `hold valid` ago
    /// (HAProxy's `do-resolve` uses them without a query).
    pub fn fresh_answer(&self, name: &str, prefer_v6: bool) -> Option<Arc<[IpAddr]>> {
        let answers = self.answers.load();
        if answers.is_empty() {
            return None;
        }
        let (ips, at) = answers.get(&(name.to_ascii_lowercase(), prefer_v6))?;
        (at.elapsed() < self.conf.hold.valid).then(|| ips.clone())
    }
}

fn clone_entry((k, (ips, at)): (&AnswerKey, &Answer)) -> (AnswerKey, Answer) {
    (k.clone(), (ips.clone(), *at))
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
    /// record fills.
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

    /// Whether `ip` is in one of the preferred networks (`resolve-net`).
    pub fn in_preferred_net(&self, ip: IpAddr) -> bool {
        self.nets.iter().any(|n| n.contains(ip))
    }
}
