//! Load-balancing algorithms: pick a server index for a request. Pure: no sockets, no
//! runtime handles; server availability is passed in as a predicate.
//! HAProxy counterpart: lb_fwrr.c (roundrobin), lb_map.c (static-rr).
//!
//! - `roundrobin`: smooth weighted rotation (used for both `roundrobin` and `static-rr`,
//!   which only differ once weights change at run time).

mod roundrobin;

use rampart_cfg::model::Balance;

pub use roundrobin::RoundRobin;

/// The algorithm of one backend.
#[derive(Debug)]
pub enum Lb {
    RoundRobin(RoundRobin),
}

impl Lb {
    /// `weights[i]` is the configured weight of server `i`.
    pub fn new(balance: Balance, weights: &[u32]) -> Lb {
        match balance {
            // COMPAT: static-rr equals roundrobin while weights cannot change at run time
            // (no runtime API yet).
            Balance::RoundRobin | Balance::StaticRr => Lb::RoundRobin(RoundRobin::new(weights)),
        }
    }

    /// Picks a server for which `usable` holds, or `None`.
    pub fn pick(&self, usable: impl Fn(usize) -> bool) -> Option<usize> {
        match self {
            Lb::RoundRobin(rr) => rr.pick(usable),
        }
    }
}
