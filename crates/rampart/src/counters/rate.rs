//! One event rate as the stats show it: the total at the last sample, the last
//! second's count and the highest seen. Sampled once a second by `stats::rates`.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// One rate: the total at the last sample, the last second's count, the maximum.
#[derive(Debug, Default)]
pub struct RateCell {
    prev: AtomicU64,
    cur: AtomicU32,
    max: AtomicU32,
    /// Samples taken (the rate is known from the second one).
    samples: AtomicU32,
}

impl RateCell {
    /// Records the counter's `total` now, one second after the previous sample.
    pub fn sample(&self, total: u64) {
        let prev = self.prev.swap(total, Ordering::Relaxed);
        if self.samples.fetch_add(1, Ordering::Relaxed) == 0 {
            return;
        }
        let n = u32::try_from(total.saturating_sub(prev)).unwrap_or(u32::MAX);
        self.cur.store(n, Ordering::Relaxed);
        self.max.fetch_max(n, Ordering::Relaxed);
    }

    /// The last second's count; `None` before the second sample.
    pub fn current(&self) -> Option<u32> {
        self.known().then(|| self.cur.load(Ordering::Relaxed))
    }

    /// The highest count of a second so far; `None` before the second sample.
    pub fn max(&self) -> Option<u32> {
        self.known().then(|| self.max.load(Ordering::Relaxed))
    }

    /// Forgets the maximum (`clear counters`).
    pub fn clear_max(&self) {
        self.max.store(self.cur.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    fn known(&self) -> bool {
        self.samples.load(Ordering::Relaxed) >= 2
    }
}
