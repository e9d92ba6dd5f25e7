//! Event rates over a sliding window: the count of the current period plus the
//! previous period's count weighted by the part of it still inside the window.
//! Lock-free: a rate is two atomic words of an entry's data.
//! HAProxy counterpart: `struct freq_ctr`, `update_freq_ctr_period()` and
//! `read_freq_ctr_period()` (include/haproxy/freq_ctr.h, src/freq_ctr.c).
//!
//! Layout: `cur` holds the start of the current period (a millisecond tick, high 32
//! bits) and the events counted in it (low 32 bits); `prev` the events of the period
//! before it. A fresh pair (zeros) starts its first period at the first event.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Whether `now` is `period` or more after `tick` (ticks wrap).
fn past(now: u32, tick: u32, period: u32) -> bool {
    now.wrapping_sub(tick) >= period
}

/// Counts `inc` events at `now` in the rate held by `cur` and `prev`; returns the
/// events of the current period (HAProxy's `curr_ctr`).
pub fn update(cur: &AtomicU64, prev: &AtomicU64, period: u32, now: u32, inc: u32) -> u32 {
    let mut v = cur.load(Relaxed);
    loop {
        let tick = (v >> 32) as u32;
        if !past(now, tick, period) {
            // COMPAT: the count saturates rather than spilling into the tick
            let n = (v as u32).saturating_add(inc);
            match cur.compare_exchange_weak(v, (v & !0xffff_ffff) | u64::from(n), Relaxed, Relaxed) {
                Ok(_) => return n,
                Err(x) => v = x,
            }
            continue;
        }
        // a new period: the current count becomes the previous one, unless more than
        // one period went by, in which case the window restarts now
        let mut new_tick = tick.wrapping_add(period);
        let mut carried = v as u32;
        if past(now, new_tick, period) {
            new_tick = now;
            carried = 0;
        }
        match cur.compare_exchange_weak(v, (u64::from(new_tick) << 32) | u64::from(inc), Relaxed, Relaxed) {
            Ok(_) => {
                prev.store(u64::from(carried), Relaxed);
                return inc;
            }
            Err(x) => v = x,
        }
    }
}

/// The events over the last `period` at `now`: the current period's count plus the
/// previous one's, weighted by how much of it the window still covers.
pub fn read(cur: &AtomicU64, prev: &AtomicU64, period: u32, now: u32) -> u32 {
    let v = cur.load(Relaxed);
    let tick = (v >> 32) as u32;
    let (mut curr, mut past_n) = (u64::from(v as u32), prev.load(Relaxed));
    let period64 = i64::from(period);
    let mut remain = i64::from(tick.wrapping_add(period).wrapping_sub(now) as i32);
    if remain < 0 {
        // the current period is over: it becomes the previous one, if still in reach
        remain += period64;
        past_n = if remain >= 0 { curr } else { 0 };
        curr = 0;
    }
    if curr == 0 && past_n <= 1 {
        // COMPAT: HAProxy's correction for very low rates (no flapping between 0 and 1)
        return past_n as u32;
    }
    let total = past_n * remain.max(0) as u64 + curr * u64::from(period);
    u32::try_from(total / u64::from(period.max(1))).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Rate(AtomicU64, AtomicU64, u32);
    impl Rate {
        fn new(period: u32) -> Rate {
            Rate(AtomicU64::new(0), AtomicU64::new(0), period)
        }
        fn add(&self, now: u32, n: u32) {
            update(&self.0, &self.1, self.2, now, n);
        }
        fn get(&self, now: u32) -> u32 {
            read(&self.0, &self.1, self.2, now)
        }
    }

    const T0: u32 = 0x8000_0000;

    #[test]
    fn counts_within_the_first_period() {
        let r = Rate::new(10_000);
        assert_eq!(r.get(T0), 0);
        for i in 0..100 {
            r.add(T0 + i, 1);
        }
        assert_eq!(r.get(T0 + 100), 100);
        assert_eq!(r.get(T0 + 9_999), 100);
    }

    #[test]
    fn the_previous_period_fades_out_linearly() {
        let r = Rate::new(10_000);
        r.add(T0, 100);
        // a quarter into the next period: 3/4 of the previous one still counts
        assert_eq!(r.get(T0 + 12_500), 75);
        r.add(T0 + 12_500, 10);
        assert_eq!(r.get(T0 + 12_500), 85);
        assert_eq!(r.get(T0 + 15_000), 60);
        // two periods later nothing remains
        assert_eq!(r.get(T0 + 30_000), 0);
    }

    #[test]
    fn an_idle_gap_restarts_the_window() {
        let r = Rate::new(1_000);
        r.add(T0, 50);
        r.add(T0 + 5_000, 1);
        assert_eq!(r.get(T0 + 5_000), 1);
        assert_eq!(r.get(T0 + 5_500), 1);
    }

    #[test]
    fn ticks_wrap() {
        let r = Rate::new(1_000);
        let t = u32::MAX - 100;
        r.add(t, 5);
        assert_eq!(r.get(t.wrapping_add(200)), 5);
        r.add(t.wrapping_add(1_500), 1);
        assert_eq!(r.get(t.wrapping_add(1_500)), 3);
    }
}
