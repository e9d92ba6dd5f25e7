//! Server runtime state: the operational state the health checks set (UP, DOWN,
//! stopping/NOLB), the administrative maintenance (`disabled`), the effective weight,
//! and the last check result kept for `show stat`. The request path reads one relaxed
//! atomic ([`SrvState::is_usable`]); everything else is written by the server's check
//! task only and read by reports.
//! HAProxy counterpart: server.c (`srv_set_running()`, `srv_set_stopped()`,
//! `srv_set_stopping()`, `srv_update_status()`), the `cur_state`/`cur_admin` fields of
//! `struct server`.
//!
//! - `sessions`: the connections in use, for `on-marked-down`/`on-marked-up` to cut
//! - `addr`: a server address DNS or the runtime API may change ([`AddrCell`])
//! - `list`: a backend's servers, appended to by `add server` ([`SrvList`])
//! - `queue`: the streams waiting for a connection slot of a server or a backend

mod addr;
pub mod be_state;
pub mod list;
pub mod queue;
pub mod sessions;

pub use addr::AddrCell;
pub use list::SrvList;
pub use sessions::Sessions;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::check::CheckStatus;

/// The operational state of a server (HAProxy's `enum srv_state`, without STARTING:
/// rampart has no `slowstart`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum OperState {
    /// DOWN: failed its checks (`SRV_ST_STOPPED`).
    Stopped = 0,
    /// UP (`SRV_ST_RUNNING`).
    Running = 1,
    /// NOLB: passes its checks but asked for no new traffic (`disable-on-404`,
    /// `SRV_ST_STOPPING`).
    Stopping = 2,
}

impl OperState {
    fn from_u8(v: u8) -> OperState {
        match v {
            0 => OperState::Stopped,
            2 => OperState::Stopping,
            _ => OperState::Running,
        }
    }
}

/// The last completed check of a server, for reports and `show stat`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    pub status: CheckStatus,
    /// HTTP status code of an HTTP check (0 when none).
    pub code: u16,
    /// How long the check took.
    pub duration: Duration,
    /// The `info` text (e.g. "Connection refused"), possibly empty.
    pub desc: String,
    /// HAProxy's `check->health`: 0..rise+fall-1, UP from `rise` on.
    pub health: u32,
    pub rise: u32,
    pub fall: u32,
}

/// Runtime state of one server, shared by all threads.
#[derive(Debug)]
pub struct SrvState {
    /// UP, not in maintenance nor drain.
    up: AtomicBool,
    /// `up`, and a weight the agent did not take down to 0: the load balancer may
    /// pick it.
    usable: AtomicBool,
    oper: AtomicU8,
    /// Forced maintenance (`disabled`, the runtime API, an agent's `maint`).
    maint: AtomicBool,
    /// Maintenance inherited from the tracked server (`track`).
    imaint: AtomicBool,
    /// Maintenance for want of an address: the name does not resolve (HAProxy's
    /// `SRV_ADMF_RMAINT`), or a `server-template` slot no record fills.
    rmaint: AtomicBool,
    /// `enable|disable health`, `enable|disable agent`: the checks run.
    check_enabled: AtomicBool,
    agent_enabled: AtomicBool,
    /// DRAIN (set by an agent): UP, but takes no new traffic from the balancer.
    drain: AtomicBool,
    /// The health check's own verdict (true without a health check).
    check_up: AtomicBool,
    /// The agent's verdict (true without an agent check).
    agent_up: AtomicBool,
    /// The effective weight (the configured one until an agent or the runtime API
    /// changes it).
    eweight: AtomicU32,
    /// The configured (user) weight.
    uweight: u32,
    /// Unix time (seconds) of the last operational state change (`lastchg`).
    last_change: AtomicU64,
    /// Seconds spent DOWN or in maintenance before the current state (`downtime`).
    down_time: AtomicU64,
    /// Transitions to DOWN (`chkdown`).
    down_trans: AtomicU32,
    /// Failed checks (`chkfail`).
    failed_checks: AtomicU64,
    last_check: ArcSwapOption<CheckReport>,
    last_agent: ArcSwapOption<CheckReport>,
    /// The health check's counter (`u32::MAX` until the first check), shared with the
    /// passive checks (`observe`).
    health: AtomicU32,
    /// Consecutive errors seen by `observe`.
    consecutive_errors: AtomicU32,
    /// Times `observe` acted (`hanafail`).
    failed_hana: AtomicU64,
    /// Wakes the health check early (`observe` asks for `fastinter`).
    pub(crate) check_wake: tokio::sync::Notify,
    /// Woken on every operational state change (servers that `track` this one).
    pub(crate) changed: tokio::sync::Notify,
    /// A task passes this server's changes to its trackers (`health::track`).
    follower: AtomicBool,
    /// Removed by `del server`: invisible to names, reports and the balancer; its
    /// index stays valid for whoever still holds it.
    deleted: AtomicBool,
}

impl SrvState {
    /// A server starting UP, or in maintenance when `disabled`.
    pub fn new(weight: u32, disabled: bool) -> SrvState {
        SrvState {
            up: AtomicBool::new(!disabled),
            usable: AtomicBool::new(!disabled),
            oper: AtomicU8::new(OperState::Running as u8),
            maint: AtomicBool::new(disabled),
            imaint: AtomicBool::new(false),
            rmaint: AtomicBool::new(false),
            check_enabled: AtomicBool::new(true),
            agent_enabled: AtomicBool::new(true),
            drain: AtomicBool::new(false),
            check_up: AtomicBool::new(true),
            agent_up: AtomicBool::new(true),
            eweight: AtomicU32::new(weight),
            uweight: weight,
            last_change: AtomicU64::new(unix_now()),
            down_time: AtomicU64::new(0),
            down_trans: AtomicU32::new(0),
            failed_checks: AtomicU64::new(0),
            last_check: ArcSwapOption::empty(),
            last_agent: ArcSwapOption::empty(),
            health: AtomicU32::new(u32::MAX),
            consecutive_errors: AtomicU32::new(0),
            failed_hana: AtomicU64::new(0),
            check_wake: tokio::sync::Notify::new(),
            changed: tokio::sync::Notify::new(),
            follower: AtomicBool::new(false),
            deleted: AtomicBool::new(false),
        }
    }

    /// Whether `del server` removed the server.
    #[inline]
    pub fn is_deleted(&self) -> bool {
        self.deleted.load(Ordering::Relaxed)
    }

    /// Removes the server for good (it must be in maintenance); its check and
    /// tracking tasks end when they see it, and trackers of it are woken.
    pub fn mark_deleted(&self) {
        self.deleted.store(true, Ordering::Relaxed);
        self.refresh_usable();
        self.check_wake.notify_waiters();
        self.changed.notify_waiters();
    }

    /// Whether the load balancer may pick this server (UP, not in maintenance nor
    /// drain, its weight not taken down to 0 at run time): one relaxed load, for the
    /// request path.
    #[inline]
    pub fn is_usable(&self) -> bool {
        self.usable.load(Ordering::Relaxed)
    }

    /// Whether the server is UP and neither in maintenance nor in drain, whatever its
    /// weight (a rule may still send traffic to it).
    #[inline]
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    pub fn oper(&self) -> OperState {
        OperState::from_u8(self.oper.load(Ordering::Relaxed))
    }

    /// In maintenance, forced or inherited from a tracked server.
    pub fn is_maint(&self) -> bool {
        self.maint.load(Ordering::Relaxed) || self.imaint.load(Ordering::Relaxed) || self.is_resolution_maint()
    }

    /// In maintenance because its name gives no address (`SRV_ADMF_RMAINT`).
    pub fn is_resolution_maint(&self) -> bool {
        self.rmaint.load(Ordering::Relaxed)
    }

    /// Enters or leaves the maintenance for want of an address.
    pub fn set_resolution_maint(&self, on: bool) {
        self.set_admin_flag(&self.rmaint, on);
    }

    /// In forced maintenance (`disabled`, the runtime API, an agent).
    pub fn is_forced_maint(&self) -> bool {
        self.maint.load(Ordering::Relaxed)
    }

    /// In maintenance because the tracked server is (HAProxy's `SRV_ADMF_IMAINT`).
    pub fn is_inherited_maint(&self) -> bool {
        self.imaint.load(Ordering::Relaxed)
    }

    /// Enters or leaves forced maintenance (for the runtime API); a change counts as a
    /// state change (`lastchg`).
    pub fn set_maint(&self, on: bool) {
        self.set_admin_flag(&self.maint, on);
    }

    /// Enters or leaves the maintenance inherited from a tracked server.
    pub fn set_inherited_maint(&self, on: bool) {
        self.set_admin_flag(&self.imaint, on);
    }

    fn set_admin_flag(&self, flag: &AtomicBool, on: bool) {
        let (was_down, was_maint) = (self.is_down(), self.is_maint());
        flag.store(on, Ordering::Relaxed);
        if self.is_maint() != was_maint {
            self.state_changed(was_down);
        }
        self.refresh_usable();
    }

    /// Claims the task that follows this server for its trackers: `true` when one
    /// was already claimed.
    pub(crate) fn claim_follower(&self) -> bool {
        self.follower.swap(true, Ordering::Relaxed)
    }

    /// Wakes the servers that track this one (after a maintenance change was
    /// reported, so that their messages come after this server's).
    pub(crate) fn notify_trackers(&self) {
        self.changed.notify_waiters();
    }

    /// Whether the health check (`agent`: the agent check) runs (`enable|disable
    /// health|agent`).
    pub fn check_enabled(&self, agent: bool) -> bool {
        let flag = if agent { &self.agent_enabled } else { &self.check_enabled };
        flag.load(Ordering::Relaxed)
    }

    pub fn set_check_enabled(&self, agent: bool, on: bool) {
        let flag = if agent { &self.agent_enabled } else { &self.check_enabled };
        flag.store(on, Ordering::Relaxed);
    }

    /// The effective weight balancers should use for this server.
    #[inline]
    pub fn eweight(&self) -> u32 {
        self.eweight.load(Ordering::Relaxed)
    }

    /// Changes the effective weight (agent checks, `set weight`).
    pub fn set_eweight(&self, w: u32) {
        self.eweight.store(w, Ordering::Relaxed);
        self.refresh_usable();
    }

    /// The configured weight.
    pub fn uweight(&self) -> u32 {
        self.uweight
    }

    /// Sets the last state change to `secs_ago` seconds ago (a state file or the
    /// previous worker tells when it was).
    pub fn restore_last_change(&self, secs_ago: i64) {
        let t = unix_now().saturating_add_signed(secs_ago.saturating_neg());
        self.last_change.store(t, Ordering::Relaxed);
    }

    /// Unix time of the last operational state change.
    pub fn last_change(&self) -> u64 {
        self.last_change.load(Ordering::Relaxed)
    }

    /// DOWN for HAProxy's `downtime`: stopped or in maintenance.
    fn is_down(&self) -> bool {
        self.oper() == OperState::Stopped || self.is_maint()
    }

    /// Stamps a state change (`lastchg`), adding the time spent DOWN when it ends.
    fn state_changed(&self, was_down: bool) {
        let now = unix_now();
        let since = self.last_change.swap(now, Ordering::Relaxed);
        if was_down && !self.is_down() {
            self.down_time.fetch_add(now.saturating_sub(since), Ordering::Relaxed);
        }
    }

    /// Total seconds spent DOWN or in maintenance, the current period included
    /// (HAProxy's `srv_downtime()`).
    pub fn downtime(&self) -> u64 {
        let past = self.down_time.load(Ordering::Relaxed);
        if self.is_down() {
            past + unix_now().saturating_sub(self.last_change())
        } else {
            past
        }
    }

    /// How many times the server went DOWN.
    pub fn down_transitions(&self) -> u32 {
        self.down_trans.load(Ordering::Relaxed)
    }

    /// How many checks failed while the server was not fully DOWN.
    pub fn failed_checks(&self) -> u64 {
        self.failed_checks.load(Ordering::Relaxed)
    }

    /// The last completed check, `None` before the first one (or without checks).
    pub fn last_check(&self) -> Option<Arc<CheckReport>> {
        self.last_check.load_full()
    }

    /// The last completed agent check, `None` before the first one (or without one).
    pub fn last_agent_check(&self) -> Option<Arc<CheckReport>> {
        self.last_agent.load_full()
    }

    pub(crate) fn set_last_check(&self, r: CheckReport) {
        self.last_check.store(Some(Arc::new(r)));
    }

    pub(crate) fn set_last_agent_check(&self, r: CheckReport) {
        self.last_agent.store(Some(Arc::new(r)));
    }

    /// The health check's counter, `fresh` before the first check.
    pub(crate) fn health_or(&self, fresh: u32) -> u32 {
        match self.health.load(Ordering::Relaxed) {
            u32::MAX => fresh,
            h => h,
        }
    }

    pub fn store_health(&self, h: u32) {
        self.health.store(h, Ordering::Relaxed);
    }

    /// Counts an error seen by `observe`; the count so far.
    pub(crate) fn count_error(&self) -> u32 {
        self.consecutive_errors.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// A success seen by `observe` (or an action taken) resets the count.
    pub(crate) fn reset_errors(&self) {
        if self.consecutive_errors.load(Ordering::Relaxed) != 0 {
            self.consecutive_errors.store(0, Ordering::Relaxed);
        }
    }

    pub(crate) fn count_hana(&self) {
        self.failed_hana.fetch_add(1, Ordering::Relaxed);
    }

    /// Times the passive checks acted on this server (`hanafail`).
    pub fn failed_hana(&self) -> u64 {
        self.failed_hana.load(Ordering::Relaxed)
    }

    pub(crate) fn count_failed_check(&self) {
        self.failed_checks.fetch_add(1, Ordering::Relaxed);
    }

    /// Sets the operational state; returns the previous one.
    pub(crate) fn set_oper(&self, st: OperState) -> OperState {
        let was_down = self.is_down();
        let prev = OperState::from_u8(self.oper.swap(st as u8, Ordering::Relaxed));
        if prev != st {
            self.state_changed(was_down);
            if st == OperState::Stopped {
                self.down_trans.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.refresh_usable();
        if prev != st {
            self.changed.notify_waiters();
        }
        prev
    }

    /// In DRAIN (an agent said `drain`).
    pub fn is_drain(&self) -> bool {
        self.drain.load(Ordering::Relaxed)
    }

    /// Enters or leaves DRAIN.
    pub fn set_drain(&self, on: bool) {
        if self.drain.swap(on, Ordering::Relaxed) != on {
            self.last_change.store(unix_now(), Ordering::Relaxed);
        }
        self.refresh_usable();
    }

    /// Records the verdict of the health check (`agent`: of the agent check); the
    /// server may be UP only when both agree.
    pub fn set_verdict(&self, agent: bool, up: bool) {
        let flag = if agent { &self.agent_up } else { &self.check_up };
        flag.store(up, Ordering::Relaxed);
    }

    /// Whether the other check than `agent` lets the server be UP.
    pub(crate) fn other_verdict(&self, agent: bool) -> bool {
        let flag = if agent { &self.check_up } else { &self.agent_up };
        flag.load(Ordering::Relaxed)
    }

    fn refresh_usable(&self) {
        let up = self.oper() == OperState::Running && !self.is_maint() && !self.is_drain() && !self.is_deleted();
        self.up.store(up, Ordering::Relaxed);
        // a configured weight of 0 is the balancer's business; one set at run time is ours
        let weighted = self.eweight() > 0 || self.uweight == 0;
        self.usable.store(up && weighted, Ordering::Relaxed);
    }

    /// Counts for HAProxy's `srv_act`/`srv_bck`: UP, not in maintenance, weight > 0.
    pub fn counts_as_available(&self) -> bool {
        self.is_up() && self.eweight() > 0
    }
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usable_follows_oper_state_and_maintenance() {
        let s = SrvState::new(1, false);
        assert!(s.is_usable());
        assert_eq!(s.set_oper(OperState::Stopped), OperState::Running);
        assert!(!s.is_usable());
        assert_eq!(s.down_transitions(), 1);
        s.set_oper(OperState::Stopping);
        assert!(!s.is_usable());
        s.set_oper(OperState::Running);
        assert!(s.is_usable());
        s.set_maint(true);
        assert!(!s.is_usable() && s.oper() == OperState::Running);
        s.set_maint(false);
        s.set_drain(true);
        assert!(!s.is_usable() && s.is_drain());
        s.set_drain(false);
        assert!(s.is_usable());
        let d = SrvState::new(1, true);
        assert!(!d.is_usable() && d.is_maint());
    }

    #[test]
    fn weight_zero_is_usable_but_not_counted() {
        let s = SrvState::new(0, false);
        assert!(s.is_usable() && !s.counts_as_available());
        s.set_eweight(5);
        assert!(s.counts_as_available());
        assert_eq!((s.eweight(), s.uweight()), (5, 0));
        // a weight taken to 0 at run time keeps the balancer away
        let s = SrvState::new(3, false);
        s.set_eweight(0);
        assert!(!s.is_usable() && s.is_up() && !s.counts_as_available());
        s.set_eweight(2);
        assert!(s.is_usable());
    }
}
