//! `maxconnrate` / `maxsessrate`: the connections the process accepts per second, all
//! listeners and threads together. Once the rate reaches the limit, accept loops pause
//! (the kernel keeps new connections in the backlog) and resume when the rate fell.
//! The rate is HAProxy's sliding estimate: this second's count plus the previous
//! second's, weighed by what is left of this second. Only built when a limit is set:
//! accept loops without one check an `Option`.
//! HAProxy counterpart: the `cps_lim` / `sps_lim` checks of `listener_accept()`
//! (src/listener.c) over `freq_ctr` (src/freq_ctr.c).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A process-wide accept rate limit.
#[derive(Debug)]
pub struct AcceptRate {
    limit: u32,
    start: Instant,
    /// The current second (since `start`) in the high 32 bits, its count in the low.
    cur: AtomicU64,
    /// The previous second's count.
    prev: AtomicU32,
}

impl AcceptRate {
    /// A limiter of `limit` accepts per second (`limit` > 0).
    pub fn new(limit: u32) -> AcceptRate {
        AcceptRate { limit: limit.max(1), start: Instant::now(), cur: AtomicU64::new(0), prev: AtomicU32::new(0) }
    }

    /// Whether an accept may happen now; `Err` is how long to pause first when the
    /// rate is at the limit.
    pub fn check(&self) -> Result<(), Duration> {
        self.at(self.start.elapsed().as_millis() as u64, false)
    }

    /// Counts one accepted connection.
    pub fn count(&self) {
        let _ = self.at(self.start.elapsed().as_millis() as u64, true);
    }

    /// [`AcceptRate::check`] then [`AcceptRate::count`] at `now_ms`.
    #[cfg(test)]
    fn take_at(&self, now_ms: u64) -> Result<(), Duration> {
        self.at(now_ms, true)
    }

    fn at(&self, now_ms: u64, take: bool) -> Result<(), Duration> {
        let sec = now_ms / 1000;
        let mut cur = self.cur.load(Ordering::Relaxed);
        loop {
            let (cur_sec, count) = (cur >> 32, (cur & 0xffff_ffff) as u32);
            if cur_sec != sec {
                // a new second: the count of the one before is the previous one
                let next = sec << 32;
                match self.cur.compare_exchange(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => {
                        self.prev.store(if cur_sec + 1 == sec { count } else { 0 }, Ordering::Relaxed);
                        cur = next;
                    }
                    Err(seen) => cur = seen,
                }
                continue;
            }
            let left = 1000 - now_ms % 1000;
            let rate = u64::from(count) + u64::from(self.prev.load(Ordering::Relaxed)) * left / 1000;
            if rate >= u64::from(self.limit) {
                return Err(self.pause(left));
            }
            if !take {
                return Ok(());
            }
            match self.cur.compare_exchange(cur, cur + 1, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Ok(()),
                Err(seen) => cur = seen,
            }
        }
    }

    /// One accept's share of a second, within the `left` milliseconds of this one.
    fn pause(&self, left: u64) -> Duration {
        Duration::from_millis((1000 / u64::from(self.limit)).clamp(1, left))
    }
}

#[cfg(test)]
mod tests {
    use super::AcceptRate;

    #[test]
    fn the_limit_holds_over_a_sliding_second() {
        let r = AcceptRate::new(10);
        assert_eq!((0..20).filter(|_| r.take_at(100).is_ok()).count(), 10);
        assert_eq!(r.take_at(999).unwrap_err().as_millis(), 1, "the pause ends with the second at most");
        // at 1.5 s, half of the previous second still counts: 5 more
        assert_eq!((0..20).filter(|_| r.take_at(1500).is_ok()).count(), 5);
        // two seconds later the past is forgotten
        assert_eq!((0..20).filter(|_| r.take_at(4000).is_ok()).count(), 10);
        assert_eq!(r.take_at(4000).unwrap_err().as_millis(), 100, "one accept's share of a second");
    }
}
