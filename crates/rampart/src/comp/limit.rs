//! The process-wide limits of HTTP compression and what `show info` reports of them:
//! `maxcomprate` (changed at run time by `set rate-limit http-compression global`),
//! `maxcompcpuusage`, `maxzlibmem`, and the compression rates over a sliding second
//! (`CompressBpsIn`, `CompressBpsOut`, `CompressBpsRateLim`, `ZlibMemUsage`,
//! `MaxZlibMemUsage`).
//!
//! As HAProxy 2.6: a response is not compressed when the input rate of the last second
//! is over the limit, or the CPU usage over `maxcompcpuusage`; a response being
//! compressed lowers its level by one after each block while the output rate or the CPU
//! usage is over, and raises it back by one (up to `tune.comp.maxlevel`) otherwise;
//! at level 0 its bytes are forwarded in stored blocks and counted as bypassed.
//!
//! COMPAT: HAProxy compares each thread's idle time in its poller with
//! `maxcompcpuusage`; rampart compares the CPU time of the whole process over the last
//! second, divided by its threads (sampled by `stats::rates` once a second).
//! HAProxy counterpart: `global.comp_bps_in/out`, `comp_rate_lim`, `compress_min_idle`,
//! `zlib_used_memory` (src/compression.c, src/flt_http_comp.c).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use crate::stick::freq;

/// The window of the rates, in milliseconds.
const PERIOD_MS: u32 = 1000;

/// The memory a zlib gzip/deflate context takes with zlib's defaults (window bits 15,
/// memory level 8): zlib's formula `(1 << (wbits + 2)) + (1 << (memlevel + 9))`, plus
/// the stream state, as HAProxy's zlib builds count it. Counted against `maxzlibmem`
/// (`ZlibMemUsage`) for the levels above 1 (zlib-rs); rampart's fast encoder at level
/// 1 counts what it holds (`comp::fast::FastDeflate::mem`).
pub const DEFLATE_CTX_MEM: u64 = (1 << 17) + (1 << 17) + 6 * 1024;

/// A rate over the last second (HAProxy's `struct freq_ctr`).
#[derive(Debug, Default)]
struct Rate {
    cur: AtomicU64,
    prev: AtomicU64,
}

/// The limits and rates of the process, shared by every thread.
#[derive(Debug)]
pub struct Limits {
    /// Bytes per second; 0: no limit.
    rate_lim: AtomicU64,
    /// Idle percentage under which compression backs off; 0: no limit.
    min_idle: u32,
    /// `maxzlibmem` in bytes; 0: no limit.
    max_mem: u64,
    mem_used: AtomicU64,
    bps_in: Rate,
    bps_out: Rate,
    /// The process's idle percentage over the last sampled second (100 until sampled).
    idle_pct: AtomicU32,
    /// The process CPU time and the wall clock (since `epoch`) at the last sample, in
    /// nanoseconds (0: not sampled yet); written by the sampler only.
    cpu_ns: AtomicU64,
    wall_ns: AtomicU64,
    epoch: Instant,
}

impl Limits {
    /// `rate_lim` in bytes per second, `min_idle` = 100 - `maxcompcpuusage`, `max_mem`
    /// in bytes (0: no limit, for each).
    pub fn new(rate_lim: u64, min_idle: u32, max_mem: u64) -> Limits {
        Limits {
            rate_lim: AtomicU64::new(rate_lim),
            min_idle,
            max_mem,
            mem_used: AtomicU64::new(0),
            bps_in: Rate::default(),
            bps_out: Rate::default(),
            idle_pct: AtomicU32::new(100),
            cpu_ns: AtomicU64::new(0),
            wall_ns: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    fn now(&self) -> u32 {
        // a non-zero tick: a fresh rate starts its first period at its first event
        (self.epoch.elapsed().as_millis() as u32).wrapping_add(1)
    }

    /// Whether a new response may be compressed now (HAProxy checks the input rate
    /// and the CPU usage when it selects the response).
    pub fn allows_new(&self) -> bool {
        let lim = self.rate_lim.load(Relaxed);
        if lim > 0 && self.bps_in() > lim {
            return false;
        }
        !self.cpu_over()
    }

    /// Whether a running compression must lower its level (the output rate or the CPU
    /// usage is over its limit), checked after each block.
    pub fn over(&self) -> bool {
        let lim = self.rate_lim.load(Relaxed);
        (lim > 0 && self.bps_out() > lim) || self.cpu_over()
    }

    fn cpu_over(&self) -> bool {
        self.min_idle > 0 && self.idle_pct.load(Relaxed) < self.min_idle
    }

    /// Counts `input` bytes compressed into `output` bytes.
    pub fn count(&self, input: u64, output: u64) {
        let now = self.now();
        let cap = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        freq::update(&self.bps_in.cur, &self.bps_in.prev, PERIOD_MS, now, cap(input));
        freq::update(&self.bps_out.cur, &self.bps_out.prev, PERIOD_MS, now, cap(output));
    }

    /// Bytes per second into the compressors over the last second (`CompressBpsIn`).
    pub fn bps_in(&self) -> u64 {
        u64::from(freq::read(&self.bps_in.cur, &self.bps_in.prev, PERIOD_MS, self.now()))
    }

    /// Bytes per second out of them (`CompressBpsOut`).
    pub fn bps_out(&self) -> u64 {
        u64::from(freq::read(&self.bps_out.cur, &self.bps_out.prev, PERIOD_MS, self.now()))
    }

    /// The rate limit in bytes per second (`CompressBpsRateLim`).
    pub fn rate_lim(&self) -> u64 {
        self.rate_lim.load(Relaxed)
    }

    /// `set rate-limit http-compression global <kB/s>`.
    pub fn set_rate_lim(&self, bytes_per_sec: u64) {
        self.rate_lim.store(bytes_per_sec, Relaxed);
    }

    /// Memory counted for the gzip/deflate contexts (`ZlibMemUsage`).
    pub fn mem_used(&self) -> u64 {
        self.mem_used.load(Relaxed)
    }

    /// `maxzlibmem` in bytes (`MaxZlibMemUsage`).
    pub fn max_mem(&self) -> u64 {
        self.max_mem
    }

    /// Reserves the memory of a new context; `false` when `maxzlibmem` leaves no room
    /// for it (the response is then not compressed, as HAProxy's zlib builds do).
    pub fn reserve(&self, bytes: u64) -> bool {
        let used = self.mem_used.fetch_add(bytes, Relaxed) + bytes;
        if self.max_mem > 0 && used > self.max_mem {
            self.mem_used.fetch_sub(bytes, Relaxed);
            return false;
        }
        true
    }

    /// A running compressor's memory went from `old` to `new` bytes (counted, never
    /// refused).
    pub fn resize(&self, old: u64, new: u64) {
        if new > old {
            self.mem_used.fetch_add(new - old, Relaxed);
        } else {
            self.mem_used.fetch_sub(old - new, Relaxed);
        }
    }

    /// Gives back what [`Limits::reserve`] took.
    pub fn release(&self, bytes: u64) {
        self.mem_used.fetch_sub(bytes, Relaxed);
    }

    /// Whether a CPU limit is set (the sampler then measures the CPU usage).
    pub fn watches_cpu(&self) -> bool {
        self.min_idle > 0
    }

    /// Measures the process's idle percentage since the last call, from its CPU time
    /// `cpu` now and its `threads`; called once a second.
    pub fn sample_cpu(&self, cpu: Duration, threads: usize) {
        let wall = self.epoch.elapsed().as_nanos() as u64 + 1;
        let cpu = cpu.as_nanos() as u64;
        let (cpu0, wall0) = (self.cpu_ns.swap(cpu, Relaxed), self.wall_ns.swap(wall, Relaxed));
        if wall0 == 0 || wall <= wall0 {
            return;
        }
        let spent = cpu.saturating_sub(cpu0) as f64 / ((wall - wall0) as f64 * threads.max(1) as f64);
        let busy = (spent * 100.0).min(100.0);
        self.idle_pct.store(100 - busy as u32, Relaxed);
    }

    /// Sets the idle percentage as measured (tests).
    #[cfg(test)]
    fn set_idle(&self, pct: u32) {
        self.idle_pct.store(pct, Relaxed);
    }
}

/// A running compression's level, moved as HAProxy moves it after each block.
#[derive(Debug, Clone, Copy)]
pub struct Level {
    pub cur: u32,
    max: u32,
}

impl Level {
    pub fn new(max: u32) -> Level {
        Level { cur: max, max }
    }

    /// After a block: one lower while `over`, else one higher up to the maximum.
    /// Returns whether the level changed.
    pub fn adjust(&mut self, over: bool) -> bool {
        let before = self.cur;
        if over {
            self.cur = self.cur.saturating_sub(1);
        } else if self.cur < self.max {
            self.cur += 1;
        }
        self.cur != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_gates_new_responses_on_input() {
        let l = Limits::new(1000, 0, 0);
        assert!(l.allows_new());
        l.count(2000, 100);
        assert!(l.bps_in() >= 2000);
        assert!(!l.allows_new());
        // the output rate is still under: a running compression keeps its level
        assert!(!l.over());
        l.set_rate_lim(0);
        assert!(l.allows_new());
    }

    #[test]
    fn cpu_limit_gates_and_lowers() {
        let l = Limits::new(0, 10, 0);
        assert!(l.allows_new());
        l.set_idle(5);
        assert!(!l.allows_new());
        assert!(l.over());
        l.set_idle(50);
        assert!(l.allows_new());
    }

    #[test]
    fn memory_is_reserved_within_the_limit() {
        let l = Limits::new(0, 0, 2 * DEFLATE_CTX_MEM);
        assert!(l.reserve(DEFLATE_CTX_MEM));
        assert!(l.reserve(DEFLATE_CTX_MEM));
        assert!(!l.reserve(DEFLATE_CTX_MEM));
        assert_eq!(l.mem_used(), 2 * DEFLATE_CTX_MEM);
        l.release(DEFLATE_CTX_MEM);
        assert!(l.reserve(DEFLATE_CTX_MEM));
    }

    #[test]
    fn level_steps_down_to_zero_and_back() {
        let mut lv = Level::new(2);
        assert!(lv.adjust(true));
        assert!(lv.adjust(true));
        assert_eq!(lv.cur, 0);
        assert!(!lv.adjust(true));
        assert!(lv.adjust(false));
        assert!(lv.adjust(false));
        assert!(!lv.adjust(false));
        assert_eq!(lv.cur, 2);
    }
}
