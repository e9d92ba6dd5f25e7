//! `hash-type consistent`: each server owns `weight × 16` points on a 32-bit ring at
//! the positions HAProxy gives them, and a hash goes to the closest point (before or
//! after it), so that a server leaving moves only its own keys.
//! HAProxy counterpart: src/lb_chash.c (`chash_init_server_tree`,
//! `chash_get_server_hash`, `chash_server_is_eligible`).
//!
//! Availability is a predicate, not tree surgery: a point of a server that is not
//! usable is skipped while searching, which picks exactly the server HAProxy picks
//! after removing that server's points from its tree.

use super::hash::full_hash;

/// HAProxy's `BE_WEIGHT_SCALE`: ring points per unit of user weight.
pub const POINTS_PER_WEIGHT: u32 = 16;
/// HAProxy's `SRV_EWGHT_RANGE`: the spacing of the servers' point seeds.
const SEED_SPACING: u32 = 256 * POINTS_PER_WEIGHT;

/// One ring, built from the servers' weights; rebuilt when a weight changes.
#[derive(Debug, Default)]
pub struct Ring {
    /// `(position, server)`, sorted by position, then by server order (HAProxy's
    /// tree keeps duplicates in insertion order, which is the server order).
    points: Vec<(u32, u32)>,
}

impl Ring {
    /// `servers` gives, per server index, its weight and its numeric id (HAProxy's
    /// `puid`: the `id` option, else its 1-based rank among the backend's servers).
    pub fn new(servers: impl Iterator<Item = (u32, u32)>) -> Ring {
        let mut points = Vec::new();
        for (i, (weight, puid)) in servers.enumerate() {
            for n in 0..weight * POINTS_PER_WEIGHT {
                points.push((full_hash(puid.wrapping_mul(SEED_SPACING).wrapping_add(n)), i as u32));
            }
        }
        points.sort_by_key(|&(pos, _)| pos); // stable: ties keep the server order
        Ring { points }
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The usable server closest to `hash` on the ring (the earlier one on a tie), then,
    /// if `accept` refuses it, the next usable ones clockwise. O(log n) plus the points
    /// of unusable servers met on the way.
    pub fn lookup(&self, hash: u32, usable: impl Fn(usize) -> bool, accept: impl Fn(usize) -> bool) -> Option<usize> {
        let n = self.points.len();
        if n == 0 {
            return None;
        }
        let ok = |k: usize| usable(self.points[k].1 as usize);
        let ge = self.points.partition_point(|&(pos, _)| pos < hash);
        // first usable point at or after the hash, wrapping
        let next = (0..n).map(|d| (ge + d) % n).find(|&k| ok(k))?;
        // last usable point before `next`, wrapping
        let prev = (1..=n).map(|d| (next + n - d) % n).find(|&k| ok(k)).unwrap_or(next);
        let dp = hash.wrapping_sub(self.points[prev].0);
        let dn = self.points[next].0.wrapping_sub(hash);
        let start = if dp <= dn { prev } else { next };
        // HAProxy walks on from the chosen point while the server is refused
        (0..n).map(|d| (start + d) % n).filter(|&k| ok(k)).map(|k| self.points[k].1 as usize).find(|&s| accept(s))
    }

    /// The point after `at` (a rotation cursor), wrapping; for round robin over the
    /// ring when a hash key is missing.
    pub fn server_at(&self, at: usize) -> usize {
        self.points[at % self.points.len()].1 as usize
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }
}

/// `hash-balance-factor` (HAProxy's `chash_server_is_eligible`, consistent hashing
/// with bounded loads): whether a server serving `served` streams, of weight
/// `weight` (× 16), may take one more when the backend serves `total` over servers
/// whose weights sum to `tot_weight` (× 16) and the server's cumulative weight
/// before it is `cum`.
pub fn eligible(factor: u32, total: u64, tot_weight: u64, weight: u64, cum: u64, served: u64) -> bool {
    if tot_weight == 0 {
        return true;
    }
    let tot_slots = ((total + 1) * u64::from(factor)).div_ceil(100);
    let per_weight = tot_slots / tot_weight;
    let remainder = tot_slots % tot_weight;
    let mut slots = weight * per_weight;
    slots += ((cum + weight) * remainder) / tot_weight - (cum * remainder) / tot_weight;
    served < slots.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(weights: &[u32]) -> Ring {
        Ring::new(weights.iter().enumerate().map(|(i, &w)| (w, i as u32 + 1)))
    }

    #[test]
    fn points_follow_weights() {
        let r = ring(&[1, 3, 0]);
        assert_eq!(r.len(), 64);
        assert_eq!(r.points.iter().filter(|p| p.1 == 1).count(), 48);
        assert!(r.points.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(ring(&[0, 0]).is_empty());
    }

    #[test]
    fn first_point_positions_match_haproxy_seeds() {
        // server puid 1, point 0 sits at full_hash(4096)
        let r = ring(&[1]);
        assert!(r.points.iter().any(|p| p.0 == full_hash(4096)));
        assert!(r.points.iter().any(|p| p.0 == full_hash(4096 + 15)));
    }

    #[test]
    fn closest_point_wins() {
        let r = ring(&[1, 1, 1]);
        for k in 1..r.len() {
            let (a, b) = (r.points[k - 1], r.points[k]);
            let mid = a.0 + (b.0 - a.0) / 2;
            assert_eq!(r.lookup(mid, |_| true, |_| true), Some(a.1 as usize));
            if b.0 - a.0 > 2 {
                assert_eq!(r.lookup(mid + 1 + (b.0 - a.0) % 2, |_| true, |_| true), Some(b.1 as usize));
            }
        }
    }

    #[test]
    fn removing_a_server_moves_only_its_keys() {
        let r = ring(&[1, 1, 1, 1, 1]);
        let mut moved = 0;
        for k in 0..10_000u32 {
            let h = full_hash(k);
            let before = r.lookup(h, |_| true, |_| true).unwrap();
            let after = r.lookup(h, |s| s != 2, |_| true).unwrap();
            if before != 2 {
                assert_eq!(before, after, "key {k} moved although its server stayed");
            } else {
                moved += 1;
                assert_ne!(after, 2);
            }
        }
        assert!((1000..3000).contains(&moved), "{moved}");
    }

    #[test]
    fn weights_shape_the_distribution() {
        let r = ring(&[1, 2, 4]);
        let mut n = [0u32; 3];
        for k in 0..70_000u32 {
            n[r.lookup(full_hash(k), |_| true, |_| true).unwrap()] += 1;
        }
        // expected 10k / 20k / 40k; the ring of 112 points is lumpy
        assert!((6_000..15_000).contains(&n[0]), "{n:?}");
        assert!((14_000..27_000).contains(&n[1]), "{n:?}");
        assert!((32_000..50_000).contains(&n[2]), "{n:?}");
    }

    #[test]
    fn refused_servers_pass_the_key_on() {
        let r = ring(&[1, 1]);
        assert_eq!(r.lookup(12345, |_| false, |_| true), None);
        let first = r.lookup(12345, |_| true, |_| true).unwrap();
        assert_eq!(r.lookup(12345, |_| true, |s| s != first), Some(1 - first));
        assert_eq!(r.lookup(12345, |_| true, |_| false), None);
    }

    #[test]
    fn bounded_load_slots() {
        // factor 150, 2 servers of equal weight, 9 served: 15 slots, 7 or 8 each
        assert!(eligible(150, 9, 32, 16, 0, 6));
        assert!(!eligible(150, 9, 32, 16, 0, 7));
        assert!(!eligible(150, 9, 32, 16, 16, 8));
        assert!(eligible(150, 9, 32, 16, 16, 7));
        // never zero slots
        assert!(eligible(101, 0, 32, 16, 0, 0));
    }
}
