//! `balance leastconn`: the usable server with the fewest streams per unit of
//! weight; ties go round robin.
//! HAProxy counterpart: src/lb_fwlc.c (`fwlc_queue_srv`'s key, `fwlc_get_next_server`).

use std::sync::atomic::{AtomicUsize, Ordering};

/// HAProxy's `SRV_EWGHT_MAX` (256 × 16): the key scale.
const KEY_SCALE: u64 = 256 * 16;

/// HAProxy's ordering key: 0 for an idle server, else `(inflight + 1) / weight`.
pub fn key(load: u32, weight: u32) -> u64 {
    if load == 0 {
        0
    } else {
        (u64::from(load) + 1) * KEY_SCALE / u64::from(weight.max(1))
    }
}

/// The usable server of positive weight with the lowest [`key`]. The scan starts
/// one server further at each call, so equal keys take turns.
// PERF: O(servers): for balancers that do not count loads (`Lb::counting_loads`) and
// backends above `order::MAX_SERVERS`; the backends' balancers pick from the load
// order (`lb/order.rs`), O(log n), which picks the same server.
pub fn pick(
    cursor: &AtomicUsize,
    n: usize,
    weight: impl Fn(usize) -> u32,
    usable: impl Fn(usize) -> bool,
    load: impl Fn(usize) -> u32,
) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let start = cursor.fetch_add(1, Ordering::Relaxed) % n;
    let mut best: Option<(usize, u64)> = None;
    for d in 0..n {
        let i = (start + d) % n;
        let w = weight(i);
        if w == 0 || !usable(i) {
            continue;
        }
        let k = key(load(i), w);
        if best.is_none_or(|(_, bk)| k < bk) {
            best = Some((i, k));
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fewest_streams_per_weight_wins() {
        let c = AtomicUsize::new(0);
        let loads = [5, 2, 3];
        assert_eq!(pick(&c, 3, |_| 1, |_| true, |i| loads[i]), Some(1));
        // server 0 has weight 4: (5+1)/4 < (2+1)/1
        assert_eq!(pick(&c, 3, |i| if i == 0 { 4 } else { 1 }, |_| true, |i| loads[i]), Some(0));
        assert_eq!(pick(&c, 3, |_| 1, |i| i != 1, |i| loads[i]), Some(2));
        assert_eq!(pick(&c, 3, |_| 0, |_| true, |i| loads[i]), None);
    }

    #[test]
    fn ties_rotate() {
        let c = AtomicUsize::new(0);
        let seq: Vec<_> = (0..6).map(|_| pick(&c, 3, |_| 1, |_| true, |_| 0).unwrap()).collect();
        assert_eq!(seq, [0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn weighted_share_under_load() {
        // simulate streams that never end: the shares follow the weights
        let c = AtomicUsize::new(0);
        let w = [1u32, 2, 5];
        let mut load = [0u32; 3];
        for _ in 0..8000 {
            let s = pick(&c, 3, |i| w[i], |_| true, |i| load[i]).unwrap();
            load[s] += 1;
        }
        assert!((950..=1050).contains(&load[0]), "{load:?}");
        assert!((1950..=2050).contains(&load[1]), "{load:?}");
        assert!((4950..=5050).contains(&load[2]), "{load:?}");
    }
}
