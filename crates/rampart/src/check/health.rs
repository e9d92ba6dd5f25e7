//! The rise/fall counter of a server's checks and the interval it implies.
//! HAProxy counterpart: the `check->health` arithmetic of `set_server_check_status()`
//! (src/check.c) and `srv_getinter()` (src/server.c).
//!
//! `health` runs from 0 to `rise + fall - 1`; the server is UP from `rise` on. A
//! failure below `rise` drops it to 0 (fully DOWN), a success reaching `rise` lifts it
//! to the top (fully UP). A server starts at `rise`: UP, one failure away from DOWN.

use std::time::Duration;

/// The health counter of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Health {
    pub health: u32,
    pub rise: u32,
    pub fall: u32,
}

impl Health {
    /// The state of a server at startup (HAProxy: `check.health = check.rise`).
    pub fn new(rise: u32, fall: u32) -> Health {
        let (rise, fall) = (rise.max(1), fall.max(1));
        Health { health: rise, rise, fall }
    }

    fn top(&self) -> u32 {
        self.rise + self.fall - 1
    }

    pub fn is_up(&self) -> bool {
        self.health >= self.rise
    }

    /// Counts a failed check; `true` when the counter moved (HAProxy "reports" it).
    pub fn fail(&mut self) -> bool {
        if self.health == 0 {
            return false;
        }
        self.health -= 1;
        if self.health < self.rise {
            self.health = 0;
        }
        true
    }

    /// Counts a passed check; `true` when the counter moved.
    pub fn pass(&mut self) -> bool {
        if self.health >= self.top() {
            return false;
        }
        self.health += 1;
        if self.health >= self.rise {
            self.health = self.top();
        }
        true
    }

    /// HAProxy's `status: x/y UP|DRAIN|DOWN` of the check messages.
    pub fn status_text(&self, weight: u32) -> String {
        if self.is_up() {
            let word = if weight > 0 { "UP" } else { "DRAIN" };
            format!("{}/{} {word}", self.health - self.rise + 1, self.fall)
        } else {
            format!("{}/{} DOWN", self.health, self.rise)
        }
    }

    /// The delay to the next check: `inter` when fully UP, `downinter` (else `inter`)
    /// when fully DOWN, `fastinter` (else `inter`) in between.
    pub fn interval(&self, inter: Duration, fastinter: Option<Duration>, downinter: Option<Duration>) -> Duration {
        if self.health == self.top() {
            inter
        } else if self.health == 0 {
            downinter.unwrap_or(inter)
        } else {
            fastinter.unwrap_or(inter)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_server_goes_down_on_its_first_failure() {
        let mut h = Health::new(2, 3);
        assert!(h.is_up());
        assert!(h.fail());
        assert!(!h.is_up());
        assert_eq!(h.health, 0);
        assert!(!h.fail(), "a fully DOWN server does not move");
        assert_eq!(h.status_text(1), "0/2 DOWN");
    }

    #[test]
    fn down_after_exactly_fall_failures_once_fully_up() {
        let mut h = Health::new(2, 3);
        assert!(h.pass());
        assert_eq!(h.health, 4);
        assert_eq!(h.status_text(1), "3/3 UP");
        assert!(!h.pass());
        h.fail();
        assert_eq!(h.status_text(1), "2/3 UP");
        h.fail();
        assert!(h.is_up());
        assert_eq!(h.status_text(0), "1/3 DRAIN");
        h.fail();
        assert!(!h.is_up());
    }

    #[test]
    fn up_after_exactly_rise_successes() {
        let mut h = Health::new(3, 2);
        h.fail();
        assert_eq!(h.health, 0);
        h.pass();
        h.pass();
        assert!(!h.is_up());
        assert_eq!(h.status_text(1), "2/3 DOWN");
        h.pass();
        assert!(h.is_up());
        assert_eq!(h.health, 4);
        assert_eq!(h.status_text(1), "2/2 UP");
    }

    #[test]
    fn interval_by_state() {
        let (i, f, d) = (Duration::from_secs(2), Some(Duration::from_millis(500)), Some(Duration::from_secs(9)));
        let mut h = Health::new(2, 2);
        assert_eq!(h.interval(i, f, d), f.unwrap(), "starting: transitional");
        assert_eq!(h.interval(i, None, d), i);
        h.pass();
        assert_eq!(h.interval(i, f, d), i);
        h.fail();
        assert_eq!(h.interval(i, f, d), f.unwrap());
        h.fail();
        assert_eq!(h.interval(i, f, d), d.unwrap());
        assert_eq!(h.interval(i, f, None), i);
    }
}
