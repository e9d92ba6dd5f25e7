//! `balance peak-ewma` (a rampart extension, not in HAProxy): the power of two
//! choices, scoring each drawn server by a peak-sensitive moving average of its
//! response time multiplied by its streams in flight plus one, divided by its weight.
//! The average jumps up to a slower sample at once and decays towards faster ones
//! with time constant `decay`; a failure (connection error, 5xx, 429) counts as a slow
//! sample so that a server failing fast is not mistaken for a fast one.
//! Counterpart elsewhere: Finagle's and linkerd's peak-EWMA balancers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::chash::Ring;
use super::random::next_u32;

/// What a failure counts as, at least.
pub const FAILURE_COST: Duration = Duration::from_secs(1);

/// The moving average of one server.
#[derive(Debug, Default)]
pub struct Ewma {
    /// Current average, in nanoseconds (0: no sample yet).
    cost_ns: AtomicU64,
    /// When it was last updated, in ns since [`PeakEwma::epoch`].
    stamp_ns: AtomicU64,
}

/// The per-server averages of a backend.
#[derive(Debug)]
pub struct PeakEwma {
    epoch: Instant,
    decay_ns: f64,
    servers: Box<[Ewma]>,
}

impl PeakEwma {
    pub fn new(n: usize, decay: Duration) -> PeakEwma {
        PeakEwma {
            epoch: Instant::now(),
            decay_ns: decay.as_nanos().max(1) as f64,
            servers: (0..n).map(|_| Ewma::default()).collect(),
        }
    }

    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Records a response time of server `i` (`failed`: an error, counted as slow).
    // The read-modify-write races with other threads; a lost sample only delays the
    // average, which is acceptable for a balancing hint and costs no lock.
    pub fn observe(&self, i: usize, rtt: Duration, failed: bool) {
        let Some(s) = self.servers.get(i) else { return };
        let mut sample = rtt.as_nanos() as f64;
        let now = self.now_ns();
        let cur = self.decayed(s, now);
        if failed {
            sample = sample.max(FAILURE_COST.as_nanos() as f64).max(cur * 2.0);
        }
        let next = if sample > cur {
            sample
        } else {
            let w = (-((now.saturating_sub(s.stamp_ns.load(Ordering::Relaxed))) as f64) / self.decay_ns).exp();
            cur * w + sample * (1.0 - w)
        };
        s.cost_ns.store(next as u64, Ordering::Relaxed);
        s.stamp_ns.store(now, Ordering::Relaxed);
    }

    /// The average of `s` as of `now`, decayed towards 0 since its last sample (a
    /// server not heard from for long is tried again).
    fn decayed(&self, s: &Ewma, now: u64) -> f64 {
        let cost = s.cost_ns.load(Ordering::Relaxed) as f64;
        let idle = now.saturating_sub(s.stamp_ns.load(Ordering::Relaxed)) as f64;
        cost * (-idle / self.decay_ns).exp()
    }

    /// Current average of server `i`.
    pub fn cost(&self, i: usize) -> Duration {
        self.servers.get(i).map_or(Duration::ZERO, |s| Duration::from_nanos(self.decayed(s, self.now_ns()) as u64))
    }

    /// Draws two servers (weighted, from the ring) and keeps the lower score.
    pub fn pick(
        &self,
        ring: &Ring,
        weight: impl Fn(usize) -> u32,
        usable: impl Fn(usize) -> bool,
        load: impl Fn(usize) -> u32,
    ) -> Option<usize> {
        let a = ring.lookup(next_u32(), &usable, |_| true)?;
        let b = ring.lookup(next_u32(), &usable, |s| s != a).unwrap_or(a);
        let now = self.now_ns();
        let score = |i: usize| {
            // an unmeasured server scores as 1 µs per stream, so it gets tried
            let cost = self.servers.get(i).map_or(0.0, |s| self.decayed(s, now)).max(1_000.0);
            cost * f64::from(load(i) + 1) / f64::from(weight(i).max(1))
        };
        Some(if score(b) < score(a) { b } else { a })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(n: u32) -> Ring {
        Ring::new((1..=n).map(|id| (1, id)))
    }

    #[test]
    fn peaks_count_at_once_and_fast_samples_decay_in() {
        let e = PeakEwma::new(1, Duration::from_secs(10));
        e.observe(0, Duration::from_millis(100), false);
        assert!(e.cost(0) >= Duration::from_millis(99));
        e.observe(0, Duration::from_millis(500), false);
        assert!(e.cost(0) >= Duration::from_millis(499), "a peak counts at once");
        e.observe(0, Duration::from_millis(1), false);
        assert!(e.cost(0) > Duration::from_millis(400), "a fast sample right after barely moves it");
    }

    #[test]
    fn failures_are_slow() {
        let e = PeakEwma::new(2, Duration::from_secs(10));
        e.observe(0, Duration::from_micros(50), true);
        e.observe(1, Duration::from_millis(20), false);
        assert!(e.cost(0) >= FAILURE_COST / 2);
        let r = ring(2);
        let n0 = (0..200).filter(|_| e.pick(&r, |_| 1, |_| true, |_| 0) == Some(0)).count();
        assert_eq!(n0, 0, "two draws always include the healthy server unless both hit the failing one");
    }

    #[test]
    fn slow_server_gets_little() {
        let e = PeakEwma::new(3, Duration::from_secs(10));
        e.observe(0, Duration::from_millis(300), false);
        e.observe(1, Duration::from_millis(10), false);
        e.observe(2, Duration::from_millis(10), false);
        let r = ring(3);
        let mut n = [0u32; 3];
        for _ in 0..3000 {
            n[e.pick(&r, |_| 1, |_| true, |_| 0).unwrap()] += 1;
        }
        // server 0 wins only when it is drawn twice; distinct draws exclude that
        assert_eq!(n[0], 0, "{n:?}");
        // each fast server wins its draws against server 0 (a third, about 1000); the
        // draws between them go to whichever decayed to the lower cost, not half each
        assert!(n[1] > 800 && n[2] > 800, "{n:?}");
    }

    #[test]
    fn load_multiplies_the_cost() {
        let e = PeakEwma::new(2, Duration::from_secs(10));
        e.observe(0, Duration::from_millis(10), false);
        e.observe(1, Duration::from_millis(10), false);
        let load = [9u32, 0];
        let r = ring(2);
        for _ in 0..100 {
            assert_eq!(e.pick(&r, |_| 1, |_| true, |i| load[i]), Some(1));
        }
        assert_eq!(e.pick(&r, |_| 1, |_| false, |_| 0), None);
    }
}
