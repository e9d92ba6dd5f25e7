//! Latency histograms per backend and per server, a rampart extension: HAProxy's
//! exporter gives averages and maxima only. Fixed log-scale buckets (0.5 ms to 10 s)
//! of the stream timers: connect time (`Tc`), response time (`Tr`), time to the
//! response's first byte (`Tw + Tc + Tr`), total active time (`Ta`). Each worker thread
//! writes its own cache-line-aligned shard with plain stores, summed when read. They
//! are recorded only when a proxy serves `use-service prometheus-exporter` (the only
//! reader), which exports them as `_bucket`/`_sum`/`_count` series.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the buckets, microseconds; a last bucket takes the rest (`+Inf`).
const BOUNDS_US: [u64; 14] = [
    500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000,
    10_000_000,
];
/// The same bounds as the `le` labels print them (seconds).
pub const BOUNDS_LE: [&str; 14] =
    ["0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10"];
const BUCKETS: usize = BOUNDS_US.len() + 1;

/// One thread's counts, alone on its cache lines.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Shard {
    buckets: [AtomicU64; BUCKETS],
    sum_us: AtomicU64,
}

/// A histogram of durations; empty (recording nothing) when built disabled.
#[derive(Debug)]
pub struct Histogram {
    shards: Box<[Shard]>,
}

/// What a histogram holds when read: cumulative counts per bound (then `+Inf`, which
/// is the count), and the sum in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub cumulative: [u64; BUCKETS],
    pub sum_seconds: f64,
}

impl Snapshot {
    pub fn count(&self) -> u64 {
        self.cumulative[BUCKETS - 1]
    }
}

impl Histogram {
    /// A histogram for `threads` worker threads; `enabled: false` allocates nothing.
    pub fn new(threads: usize, enabled: bool) -> Histogram {
        let n = if enabled { threads + 1 } else { 0 };
        Histogram { shards: (0..n).map(|_| Shard::default()).collect() }
    }

    pub fn enabled(&self) -> bool {
        !self.shards.is_empty()
    }

    /// Records one duration.
    ///
    /// PERF: a worker thread writes its own shard with plain loads and stores; other
    /// threads add to shard 0 atomically.
    #[inline]
    pub fn record(&self, d: Duration) {
        if self.shards.is_empty() {
            return;
        }
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let bucket = BOUNDS_US.iter().position(|&b| us <= b).unwrap_or(BOUNDS_US.len());
        let slot = crate::counters::thread_slot();
        match self.shards.get(slot) {
            Some(s) if slot > 0 => {
                let b = &s.buckets[bucket];
                b.store(b.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                s.sum_us.store(s.sum_us.load(Ordering::Relaxed).saturating_add(us), Ordering::Relaxed);
            }
            _ => {
                self.shards[0].buckets[bucket].fetch_add(1, Ordering::Relaxed);
                self.shards[0].sum_us.fetch_add(us, Ordering::Relaxed);
            }
        }
    }

    /// The counts summed over the threads.
    pub fn snapshot(&self) -> Snapshot {
        let mut counts = [0u64; BUCKETS];
        let mut sum_us = 0u64;
        for s in self.shards.iter() {
            for (c, b) in counts.iter_mut().zip(&s.buckets) {
                *c += b.load(Ordering::Relaxed);
            }
            sum_us = sum_us.saturating_add(s.sum_us.load(Ordering::Relaxed));
        }
        let mut cumulative = [0u64; BUCKETS];
        let mut total = 0;
        for (c, n) in cumulative.iter_mut().zip(counts) {
            total += n;
            *c = total;
        }
        Snapshot { cumulative, sum_seconds: sum_us as f64 / 1e6 }
    }
}

/// The timers recorded for a backend or a server, in export order with their metric
/// names (`haproxy_<backend|server>_<name>_bucket` ...).
#[derive(Debug)]
pub struct Timers {
    pub connect: Histogram,
    pub response: Histogram,
    pub first_byte: Histogram,
    pub total: Histogram,
}

impl Timers {
    pub fn new(threads: usize, enabled: bool) -> Timers {
        Timers {
            connect: Histogram::new(threads, enabled),
            response: Histogram::new(threads, enabled),
            first_byte: Histogram::new(threads, enabled),
            total: Histogram::new(threads, enabled),
        }
    }

    /// The timers of a backend or server, `None` when not recorded.
    ///
    /// PERF: 64 bytes of empty histograms in every server otherwise (20 000 backends of
    /// five servers: 7 MB).
    pub fn boxed(threads: usize, enabled: bool) -> Option<Box<Timers>> {
        enabled.then(|| Box::new(Timers::new(threads, true)))
    }

    /// Each histogram with its metric name and help text.
    pub fn named(&self) -> [(&'static str, &'static str, &Histogram); 4] {
        [
            ("connect_time_seconds", "Time to establish the server connection (Tc).", &self.connect),
            ("response_time_seconds", "Time the server took to send its response head (Tr).", &self.response),
            ("first_byte_time_seconds", "Time from the request to the response head (Tw+Tc+Tr).", &self.first_byte),
            ("total_time_seconds", "Total active time of the request (Ta).", &self.total),
        ]
    }
}

/// The instants of one exchange the timers are computed from.
#[derive(Debug, Clone, Copy)]
pub struct Exchange {
    /// The request head was in (the start of the stream's work).
    pub start: std::time::Instant,
    pub connect_start: Option<std::time::Instant>,
    pub connected: Option<std::time::Instant>,
    pub res_head: Option<std::time::Instant>,
    pub end: std::time::Instant,
}

impl Timers {
    /// Records what `x` measured (a timer whose instants are missing is skipped).
    pub fn record(&self, x: &Exchange) {
        if let (Some(a), Some(b)) = (x.connect_start, x.connected) {
            self.connect.record(b.saturating_duration_since(a));
        }
        if let (Some(a), Some(b)) = (x.connected, x.res_head) {
            self.response.record(b.saturating_duration_since(a));
        }
        if let Some(b) = x.res_head {
            self.first_byte.record(b.saturating_duration_since(x.start));
        }
        self.total.record(x.end.saturating_duration_since(x.start));
    }
}

/// Whether the configuration exports the histograms (a `use-service
/// prometheus-exporter` somewhere): only then are they recorded.
pub fn wanted(cfg: &rampart_cfg::model::Config) -> bool {
    use rampart_cfg::model::HttpReqAction;
    let proxies = cfg.proxies.iter().map(|p| &p.rules);
    let defaults = cfg.defaults.iter().map(|d| &d.rules);
    proxies.chain(defaults).any(|r| {
        r.http_request
            .iter()
            .any(|rule| matches!(&rule.action, HttpReqAction::UseService(s) if s == "prometheus-exporter"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_fall_in_their_bucket_and_counts_are_cumulative() {
        let h = Histogram::new(2, true);
        for ms in [0, 1, 3, 3, 40, 20_000] {
            h.record(Duration::from_millis(ms));
        }
        let s = h.snapshot();
        // <=0.5ms: 1, <=1ms: 2, <=5ms: 4, <=50ms: 5, +Inf: 6
        assert_eq!(s.cumulative[0], 1);
        assert_eq!(s.cumulative[1], 2);
        assert_eq!(s.cumulative[3], 4);
        assert_eq!(s.cumulative[6], 5);
        assert_eq!(s.cumulative[13], 5);
        assert_eq!(s.count(), 6);
        assert!((s.sum_seconds - 20.047).abs() < 1e-9, "{}", s.sum_seconds);
    }

    #[test]
    fn threads_write_their_own_shards() {
        let h = std::sync::Arc::new(Histogram::new(3, true));
        let handles: Vec<_> = (0..3)
            .map(|t| {
                let h = h.clone();
                std::thread::spawn(move || {
                    crate::counters::set_thread_slot(t);
                    for _ in 0..1000 {
                        h.record(Duration::from_micros(700));
                    }
                })
            })
            .collect();
        handles.into_iter().for_each(|j| j.join().expect("thread"));
        h.record(Duration::from_secs(1));
        let s = h.snapshot();
        assert_eq!((s.cumulative[0], s.cumulative[1], s.count()), (0, 3000, 3001));
    }

    #[test]
    fn a_disabled_histogram_records_nothing() {
        let h = Histogram::new(4, false);
        h.record(Duration::from_millis(1));
        assert!(!h.enabled());
        assert_eq!(h.snapshot().count(), 0);
    }

    #[test]
    fn timers_are_taken_from_the_exchange_instants() {
        let t = Timers::new(1, true);
        let t0 = std::time::Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        t.record(&Exchange {
            start: t0,
            connect_start: Some(at(1)),
            connected: Some(at(3)),
            res_head: Some(at(30)),
            end: at(200),
        });
        t.record(&Exchange { start: t0, connect_start: None, connected: None, res_head: None, end: at(1) });
        let counts: Vec<u64> = t.named().iter().map(|(_, _, h)| h.snapshot().count()).collect();
        assert_eq!(counts, [1, 1, 1, 2]);
        // 27 ms of response time: above 25 ms, within 50 ms
        let r = t.response.snapshot();
        assert_eq!((r.cumulative[5], r.cumulative[6]), (0, 1));
    }
}
