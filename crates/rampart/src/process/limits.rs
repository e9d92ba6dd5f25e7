//! Sizing the process: thread count, global maxconn, and the file-descriptor and memory
//! limits that go with them. HAProxy counterparts: `compute_ideal_maxconn()`,
//! `compute_ideal_maxsock()` and the rlimit part of `main()` in src/haproxy.c.
//!
//! The model: a connection costs two descriptors (client side and server side); on top
//! of that the process needs a fixed part (its own files, one listening socket per bind
//! address and thread, each thread's poller and waker). When `maxconn` is not set, it is
//! whatever fits in the descriptor limit the process may raise itself to (the larger of
//! the soft and hard limits at boot); the soft limit is then raised to what `maxconn`
//! needs, or to `ulimit-n` when set.
//!
//! COMPAT: HAProxy 2.6 refuses to start when the limit cannot be raised
//! (`strict-limits`, on by default). By default rampart behaves like HAProxy with `no
//! strict-limits`: it warns and lowers maxconn to what fits, so that it starts in a
//! constrained container rather than not at all. An explicit `strict-limits` makes it
//! refuse to start, as HAProxy (`size_process` in main.rs).

use nix::sys::resource::{getrlimit, setrlimit, Resource, RLIM_INFINITY};

use rampart_cfg::model::{Config, ListenAddr};

use crate::version::MAX_THREADS;

/// maxconn when the descriptor limit leaves room for fewer connections (HAProxy's
/// DEFAULT_MAXCONN): small setups still start, with a warning from the limit check.
pub const DEFAULT_MAXCONN: u32 = 100;

/// Descriptors kept for the process itself: stdio, log sockets, files opened at runtime.
pub const RESERVED_FDS: u64 = 10;

/// Descriptors each thread's event loop holds: its epoll instance, its waker, a spare.
pub const FDS_PER_THREAD: u64 = 3;

/// Part of the memory limit (`-m`) that connections may use (HAProxy's MEM_USABLE_RATIO).
const MEM_USABLE_PERCENT: u64 = 94;

/// Memory a connection needs besides its two buffers (session, stream, socket state):
/// an estimate, used only to derive maxconn from `-m`.
const CONN_OVERHEAD_BYTES: u64 = 4096;

/// The descriptor limits the process started with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdLimits {
    pub soft: u64,
    /// The hard limit; an unlimited hard limit is taken as the soft one, as HAProxy does.
    pub hard: u64,
}

impl FdLimits {
    /// The current RLIMIT_NOFILE.
    pub fn current() -> Self {
        match getrlimit(Resource::RLIMIT_NOFILE) {
            Ok((soft, hard)) => FdLimits::new(soft, hard),
            Err(_) => FdLimits { soft: 1024, hard: 1024 },
        }
    }

    pub fn new(soft: u64, hard: u64) -> Self {
        let hard = if hard == RLIM_INFINITY { soft } else { hard };
        FdLimits { soft, hard }
    }

    /// The most descriptors the process may give itself without privileges.
    pub fn reachable(&self) -> u64 {
        self.soft.max(self.hard)
    }
}

/// What the process needs besides its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedNeeds {
    /// Listening sockets over all threads.
    pub listener_fds: u64,
    pub nbthread: u64,
}

impl FixedNeeds {
    pub fn fds(&self) -> u64 {
        RESERVED_FDS + self.listener_fds + FDS_PER_THREAD * self.nbthread
    }

    /// Descriptors needed to serve `maxconn` connections (HAProxy's maxsock).
    pub fn maxsock(&self, maxconn: u32) -> u64 {
        self.fds() + 2 * u64::from(maxconn)
    }

    /// The most connections `fds` descriptors can serve.
    pub fn maxconn_fitting(&self, fds: u64) -> u32 {
        u32::try_from(fds.saturating_sub(self.fds()) / 2).unwrap_or(u32::MAX)
    }
}

/// The maxconn to use when none is configured: what fits in the reachable descriptor
/// limit (or in `ulimit_n` when set), never below [`DEFAULT_MAXCONN`].
pub fn ideal_maxconn(limits: FdLimits, ulimit_n: Option<u64>, needs: FixedNeeds) -> u32 {
    let budget = ulimit_n.unwrap_or_else(|| limits.reachable());
    needs.maxconn_fitting(budget).max(DEFAULT_MAXCONN)
}

/// The most connections whose buffers fit in `megs` MB (`-m`), given `tune.bufsize`.
pub fn maxconn_for_memory(megs: u64, bufsize: usize) -> u32 {
    let usable = megs.saturating_mul(1 << 20) / 100 * MEM_USABLE_PERCENT;
    let per_conn = 2 * bufsize as u64 + CONN_OVERHEAD_BYTES;
    u32::try_from(usable / per_conn).unwrap_or(u32::MAX)
}

/// Where maxconn came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxconnSource {
    /// `-n`.
    CommandLine,
    /// `maxconn` in `global`.
    Config,
    /// Derived from the limits.
    Computed,
}

/// The decided maxconn and the descriptor limit to set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub maxconn: u32,
    pub source: MaxconnSource,
    /// The RLIMIT_NOFILE soft limit to set.
    pub nofile: u64,
    /// `true` when `nofile` comes from `ulimit-n` (then it is applied even if lower).
    pub nofile_explicit: bool,
}

/// What the limits plan starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanInput {
    /// `-n`.
    pub cli_maxconn: Option<u32>,
    /// `maxconn` in `global`.
    pub cfg_maxconn: Option<u32>,
    /// `ulimit-n` in `global`.
    pub ulimit_n: Option<u64>,
    /// `-m`.
    pub memmax_mb: Option<u64>,
    /// `tune.bufsize`.
    pub bufsize: usize,
}

/// Decides maxconn (`-n` > `global maxconn` > derived) and the descriptor limit.
pub fn plan(input: PlanInput, limits: FdLimits, needs: FixedNeeds) -> Plan {
    let (maxconn, source) = match (input.cli_maxconn, input.cfg_maxconn) {
        (Some(n), _) => (n, MaxconnSource::CommandLine),
        (None, Some(n)) => (n, MaxconnSource::Config),
        (None, None) => {
            let mut n = ideal_maxconn(limits, input.ulimit_n, needs);
            if let Some(megs) = input.memmax_mb {
                n = n.min(maxconn_for_memory(megs, input.bufsize).max(1));
            }
            (n, MaxconnSource::Computed)
        }
    };
    match input.ulimit_n {
        Some(n) => Plan { maxconn, source, nofile: n, nofile_explicit: true },
        None => Plan { maxconn, source, nofile: needs.maxsock(maxconn), nofile_explicit: false },
    }
}

/// The result of trying to set RLIMIT_NOFILE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Raise {
    /// The soft limit is now the target.
    Done,
    /// The soft limit was already enough.
    NotNeeded,
    /// The kernel refused; the soft limit was raised as far as allowed, to `limit`.
    Refused { limit: u64 },
}

/// Sets the soft RLIMIT_NOFILE to `plan.nofile` (raising the hard limit too when
/// privileged). A limit already high enough is left alone unless `ulimit-n` asked for it.
pub fn apply_nofile(plan: &Plan, boot: FdLimits) -> Raise {
    if !plan.nofile_explicit && boot.soft >= plan.nofile {
        return Raise::NotNeeded;
    }
    let hard = boot.hard.max(plan.nofile);
    if setrlimit(Resource::RLIMIT_NOFILE, plan.nofile, hard).is_ok() {
        return Raise::Done;
    }
    // At least go to the hard limit, which needs no privilege.
    let _ = setrlimit(Resource::RLIMIT_NOFILE, boot.hard, boot.hard);
    Raise::Refused { limit: FdLimits::current().soft }
}

/// Limits the memory of the process to `megs` MB (`-m`).
///
/// COMPAT: HAProxy 2.6 sets RLIMIT_AS; rampart sets RLIMIT_DATA (as later HAProxy
/// versions do), because address space also counts the reserved but unused stacks and
/// allocator arenas of every thread, which would stop a multi-threaded process long
/// before it used the memory.
pub fn apply_memmax(megs: u64) -> nix::Result<()> {
    let bytes = megs.saturating_mul(1 << 20);
    setrlimit(Resource::RLIMIT_DATA, bytes, bytes)
}

/// The thread count when `nbthread` is not set: the CPUs this process may run on,
/// capped to [`MAX_THREADS`].
pub fn default_nbthread() -> usize {
    cpus_in_affinity().unwrap_or(1).clamp(1, MAX_THREADS)
}

fn cpus_in_affinity() -> Option<usize> {
    let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).ok()?;
    Some((0..nix::sched::CpuSet::count()).filter(|&cpu| set.is_set(cpu).unwrap_or(false)).count())
}

/// Listening addresses of the configuration (`bind` addresses and stats sockets).
pub fn listener_count(cfg: &Config) -> usize {
    listen_addrs(cfg).count() + log_forward_receivers(cfg)
}

/// Listening descriptors the configuration will hold.
pub fn listener_fds(cfg: &Config, nbthread: usize) -> u64 {
    addrs_fds(listen_addrs(cfg), nbthread) + log_forward_receivers(cfg) as u64
}

/// The sockets of the `log-forward` sections (one each, whatever `nbthread`).
fn log_forward_receivers(cfg: &Config) -> usize {
    let per_section = |lf: &rampart_cfg::model::LogForward| {
        lf.dgram_binds.iter().map(|b| b.addrs.len()).sum::<usize>()
            + lf.binds.iter().map(|b| b.addrs.len()).sum::<usize>()
    };
    cfg.log_forwards.iter().map(per_section).sum()
}

fn listen_addrs(cfg: &Config) -> impl Iterator<Item = &ListenAddr> {
    let binds = cfg.proxies.iter().flat_map(|p| &p.binds).flat_map(|b| &b.addrs);
    binds.chain(cfg.global.stats_sockets.iter().map(|s| &s.addr))
}

/// One descriptor per thread for each inet address (`SO_REUSEPORT`), one per unix
/// socket, none for an adopted `fd@` (it is already open).
fn addrs_fds<'a>(addrs: impl Iterator<Item = &'a ListenAddr>, nbthread: usize) -> u64 {
    addrs
        .map(|addr| match addr {
            ListenAddr::Inet(_) => nbthread as u64,
            ListenAddr::Unix(_) => 1,
            ListenAddr::Fd(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEEDS: FixedNeeds = FixedNeeds { listener_fds: 4, nbthread: 2 };

    fn input() -> PlanInput {
        PlanInput { cli_maxconn: None, cfg_maxconn: None, ulimit_n: None, memmax_mb: None, bufsize: 16384 }
    }

    #[test]
    fn fixed_part_and_maxsock() {
        assert_eq!(NEEDS.fds(), 10 + 4 + 6);
        assert_eq!(NEEDS.maxsock(1000), 2020);
        assert_eq!(NEEDS.maxconn_fitting(2020), 1000);
        assert_eq!(NEEDS.maxconn_fitting(2021), 1000);
        assert_eq!(NEEDS.maxconn_fitting(5), 0);
    }

    #[test]
    fn ideal_maxconn_uses_the_reachable_limit() {
        // soft 1024, hard 20000: the process may raise itself to 20000.
        assert_eq!(ideal_maxconn(FdLimits::new(1024, 20000), None, NEEDS), (20000 - 20) / 2);
        assert_eq!(ideal_maxconn(FdLimits::new(20000, 20000), Some(4020), NEEDS), 2000);
        // Too small: the floor.
        assert_eq!(ideal_maxconn(FdLimits::new(64, 64), None, NEEDS), DEFAULT_MAXCONN);
        // Unlimited hard limit counts as the soft one.
        assert_eq!(FdLimits::new(1024, RLIM_INFINITY).reachable(), 1024);
    }

    #[test]
    fn maxconn_precedence() {
        let limits = FdLimits::new(1024, 1024);
        let p = plan(PlanInput { cli_maxconn: Some(50), cfg_maxconn: Some(70), ..input() }, limits, NEEDS);
        assert_eq!((p.maxconn, p.source), (50, MaxconnSource::CommandLine));
        let p = plan(PlanInput { cfg_maxconn: Some(70), ..input() }, limits, NEEDS);
        assert_eq!((p.maxconn, p.source), (70, MaxconnSource::Config));
        let p = plan(input(), limits, NEEDS);
        assert_eq!((p.maxconn, p.source), ((1024 - 20) / 2, MaxconnSource::Computed));
    }

    #[test]
    fn nofile_follows_maxconn_unless_ulimit_n_is_set() {
        let limits = FdLimits::new(1024, 1 << 20);
        let p = plan(PlanInput { cfg_maxconn: Some(10000), ..input() }, limits, NEEDS);
        assert_eq!((p.nofile, p.nofile_explicit), (20020, false));
        let p = plan(PlanInput { cfg_maxconn: Some(10000), ulimit_n: Some(30000), ..input() }, limits, NEEDS);
        assert_eq!((p.nofile, p.nofile_explicit), (30000, true));
    }

    #[test]
    fn memory_limit_caps_a_computed_maxconn_only() {
        // 100 MB at (2*16384 + 4096) bytes per connection.
        assert_eq!(maxconn_for_memory(100, 16384), (100 * 1048576 / 100 * 94 / 36864) as u32);
        let limits = FdLimits::new(1 << 20, 1 << 20);
        let p = plan(PlanInput { memmax_mb: Some(100), ..input() }, limits, NEEDS);
        assert_eq!(p.maxconn, maxconn_for_memory(100, 16384));
        let p = plan(PlanInput { memmax_mb: Some(100), cfg_maxconn: Some(100_000), ..input() }, limits, NEEDS);
        assert_eq!(p.maxconn, 100_000);
    }

    #[test]
    fn default_nbthread_is_within_bounds() {
        let n = default_nbthread();
        assert!((1..=MAX_THREADS).contains(&n));
    }

    #[test]
    fn listeners_are_counted_per_thread_for_inet_only() {
        let addrs = [
            ListenAddr::Inet("127.0.0.1:80".parse().unwrap()),
            ListenAddr::Unix("/run/a.sock".into()),
            ListenAddr::Fd(3),
        ];
        assert_eq!(addrs_fds(addrs.iter(), 4), 4 + 1);
        assert_eq!(addrs_fds(addrs.iter(), 1), 2);
        let cfg = Config::default();
        assert_eq!((listener_count(&cfg), listener_fds(&cfg, 4)), (0, 0));
    }
}
