//! Passive checks (`observe layer4|layer7`): connection failures, and with `layer7`
//! 5xx responses (but 501 and 505, which clients cause), counted against the server;
//! `error-limit` consecutive errors trigger `on-error`: ask for the next check at
//! `fastinter`, count a failed check (`fail-check`), leave one more check before DOWN
//! (`sudden-death`), or mark the server DOWN (`mark-down`). A success resets the count.
//! HAProxy counterpart: `__health_adjust()` (src/check.c).
//!
//! The request path calls [`observe`]; a server without `observe` costs one field read.

use std::time::Duration;

use rampart_cfg::model::{Observe, OnError};

use super::report;
use crate::check::CheckStatus;
use crate::check::Health;
use crate::check::Outcome;
use crate::proxy::ProxyRt;

/// What a stream saw of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The connection was established.
    L4Ok,
    /// The connection failed.
    L4Err,
    /// The final response status.
    Http(u16),
}

impl Event {
    /// HAProxy's `analyze_statuses` verdict for the mode: `Some(true)` an error,
    /// `Some(false)` a success, `None` neither.
    fn verdict(self, mode: Observe) -> Option<bool> {
        match (self, mode) {
            (Event::L4Ok, Observe::Layer4) => Some(false),
            (Event::L4Ok, Observe::Layer7) => None,
            (Event::L4Err, _) => Some(true),
            (Event::Http(_), Observe::Layer4) => None,
            (Event::Http(s), Observe::Layer7) => Some(!(100..500).contains(&s) && s != 501 && s != 505),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Event::L4Ok => "L4 successful connection",
            Event::L4Err => "L4 unsuccessful connection",
            Event::Http(_) => "Wrong http response",
        }
    }
}

/// Reports what a stream saw of server `srv` of backend `px` (nothing happens without
/// `observe` on that server).
pub fn observe(px: &ProxyRt, srv: usize, event: Event) {
    let server = &px.be.servers[srv];
    let Some(chk) = server.check.as_deref() else { return };
    let Some(mode) = chk.observe else { return };
    let st = &server.state;
    match event.verdict(mode) {
        None => {}
        Some(false) => st.reset_errors(),
        Some(true) => {
            let n = st.count_error();
            if n < chk.error_limit {
                return;
            }
            let desc = format!("Detected {n} consecutive errors, last one was: {}", event.describe());
            let mut health = Health { health: st.health_or(chk.rise), rise: chk.rise, fall: chk.fall };
            let fail = match chk.on_error {
                OnError::FastInter => false,
                OnError::FailCheck => true,
                OnError::SuddenDeath => {
                    if health.health > health.rise {
                        health.health = health.rise + 1;
                    }
                    true
                }
                OnError::MarkDown => {
                    health.health = health.rise;
                    true
                }
            };
            if fail {
                let out = Outcome::new(CheckStatus::Hana, desc);
                report::apply(px, srv, &mut health, out, Duration::ZERO, chk.log_health_checks, false);
                st.store_health(health.health);
            }
            st.reset_errors();
            st.count_hana();
            st.check_wake.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_counts_in_each_mode() {
        assert_eq!(Event::L4Err.verdict(Observe::Layer4), Some(true));
        assert_eq!(Event::L4Err.verdict(Observe::Layer7), Some(true));
        assert_eq!(Event::L4Ok.verdict(Observe::Layer4), Some(false));
        assert_eq!(Event::L4Ok.verdict(Observe::Layer7), None);
        assert_eq!(Event::Http(500).verdict(Observe::Layer7), Some(true));
        assert_eq!(Event::Http(503).verdict(Observe::Layer4), None);
        for ok in [200, 302, 404, 501, 505] {
            assert_eq!(Event::Http(ok).verdict(Observe::Layer7), Some(false), "{ok}");
        }
    }
}
