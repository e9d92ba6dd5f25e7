//! How a soft stop ends the keep-alive client connections (`close-spread-time`): at
//! once (the default), spread over a window that opens with the stop, or not at all
//! (`infinite`). The muxes ask [`GlobalRt::stop_closes_busy`] before announcing a
//! keep-alive response, and [`GlobalRt::stop_idle_delay`] when an idle connection
//! learns of the stop.
//! HAProxy counterpart: `close_spread_end` in `do_soft_stop_now()` (src/proxy.c), its
//! checks in `h1_refresh_timeout()`, `h1_set_cli_conn_mode()`, `h1_process()`
//! (src/mux_h1.c) and `h2_process()` (src/mux_h2.c).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rampart_cfg::model::CloseSpread;

use super::GlobalRt;

impl GlobalRt {
    /// Begins the soft stop: the spread window (if any) opens now.
    pub fn begin_stop(&self) {
        let _ = self.stop_started.set(Instant::now());
        self.stopping.store(true, Ordering::SeqCst);
    }

    /// What is left of the spread window, `None` without one.
    fn spread_left(&self) -> Option<(Duration, Duration)> {
        let CloseSpread::Window(window) = self.close_spread else { return None };
        let elapsed = self.stop_started.get().map_or(Duration::ZERO, Instant::elapsed);
        Some((window, window.saturating_sub(elapsed)))
    }

    /// Whether a keep-alive client connection closes after the response being sent:
    /// never before the soft stop; during it, always (the default), never
    /// (`infinite`), or, within a spread window, with a chance that grows as the window
    /// passes (HAProxy: when what is left of it is below a random share of it).
    pub fn stop_closes_busy(&self) -> bool {
        if !self.is_stopping() {
            return false;
        }
        match self.close_spread {
            CloseSpread::AtOnce => true,
            CloseSpread::Never => false,
            CloseSpread::Window(_) => match self.spread_left() {
                Some((window, left)) => left.is_zero() || left <= random_below(window),
                None => true,
            },
        }
    }

    /// During a soft stop, how long an idle keep-alive client connection may still wait
    /// for a request: `Some(ZERO)` by default, a random part of what is left of the
    /// spread window, or `None` (`infinite`: until its own timeout).
    pub fn stop_idle_delay(&self) -> Option<Duration> {
        match self.close_spread {
            CloseSpread::AtOnce => Some(Duration::ZERO),
            CloseSpread::Never => None,
            CloseSpread::Window(_) => Some(self.spread_left().map_or(Duration::ZERO, |(_, left)| random_below(left))),
        }
    }

    /// Whether a soft stop leaves idle and busy keep-alive connections alone
    /// (`close-spread-time infinite`).
    pub fn stop_keeps_alive(&self) -> bool {
        self.close_spread == CloseSpread::Never
    }
}

/// A random duration in `[0, d)` (zero for zero), to the millisecond.
fn random_below(d: Duration) -> Duration {
    let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    if ms == 0 {
        return Duration::ZERO;
    }
    Duration::from_millis(u64::from(crate::sample::fetch::internal::random32()) % ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_below_stays_below() {
        assert_eq!(random_below(Duration::ZERO), Duration::ZERO);
        for _ in 0..1000 {
            assert!(random_below(Duration::from_millis(7)) < Duration::from_millis(7));
        }
        // and spreads: some draws land in each half
        let low = (0..1000).filter(|_| random_below(Duration::from_secs(1)) < Duration::from_millis(500)).count();
        assert!((300..700).contains(&low), "{low}");
    }
}
