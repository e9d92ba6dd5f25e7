//! A backend's own up/down history for the stats (`chkdown`, `downtime`, `lastchg` of
//! the BACKEND row): it is DOWN while none of its servers can take traffic.
//! HAProxy counterpart: `px->down_trans`, `px->down_time`, `px->last_change` and
//! `be_downtime()`.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug, Default)]
pub struct BackendState {
    down: AtomicBool,
    down_trans: AtomicU32,
    /// Seconds spent DOWN in the periods that ended.
    down_time: AtomicU64,
    /// Unix time of the last change (0: none since the start).
    last_change: AtomicU64,
}

impl BackendState {
    /// The backend lost its last usable server.
    pub fn went_down(&self) {
        if !self.down.swap(true, Ordering::Relaxed) {
            self.down_trans.fetch_add(1, Ordering::Relaxed);
            self.last_change.store(unix_now(), Ordering::Relaxed);
        }
    }

    /// The backend has a usable server again (a no-op when it was not DOWN).
    pub fn came_up(&self) {
        if self.down.swap(false, Ordering::Relaxed) {
            let now = unix_now();
            let since = self.last_change.swap(now, Ordering::Relaxed);
            self.down_time.fetch_add(now.saturating_sub(since), Ordering::Relaxed);
        }
    }

    /// Times the backend went DOWN (`chkdown`).
    pub fn down_transitions(&self) -> u32 {
        self.down_trans.load(Ordering::Relaxed)
    }

    /// Seconds spent DOWN, the current period included (`downtime`).
    pub fn downtime(&self) -> u64 {
        let past = self.down_time.load(Ordering::Relaxed);
        if self.down.load(Ordering::Relaxed) {
            past + unix_now().saturating_sub(self.last_change.load(Ordering::Relaxed))
        } else {
            past
        }
    }

    /// Unix time of the last change, `None` before the first one.
    pub fn last_change(&self) -> Option<u64> {
        Some(self.last_change.load(Ordering::Relaxed)).filter(|&t| t > 0)
    }
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn down_periods_are_counted_once_each() {
        let s = BackendState::default();
        assert_eq!((s.down_transitions(), s.downtime(), s.last_change()), (0, 0, None));
        s.went_down();
        s.went_down();
        assert_eq!(s.down_transitions(), 1);
        assert!(s.last_change().is_some());
        s.came_up();
        s.came_up();
        assert_eq!(s.down_transitions(), 1);
        assert!(s.downtime() <= 1);
    }
}
