//! `hash-type map-based`: a table with one slot per unit of weight (weights divided
//! by their greatest common divisor), filled in HAProxy's order; a hash picks slot
//! `hash % slots`. Also walked in order for round robin when a hash key is missing.
//! HAProxy counterpart: src/lb_map.c (`init_server_map`, `recalc_server_map`,
//! `map_get_server_hash`, `map_get_server_rr`).

/// Largest table rebuilt on the fly for a pick while some server is unusable; past
/// it the pick walks to the next usable slot instead (see [`Map::lookup`]).
const MAX_REBUILD: usize = 1 << 16;

#[derive(Debug, Default)]
pub struct Map {
    /// Effective weight of each server (its weight divided by the common divisor).
    eweights: Vec<u32>,
    /// Server index of each slot.
    slots: Vec<u32>,
}

impl Map {
    /// `weights`: the servers' current weights (0 when out of rotation); `gcd`: the
    /// common divisor of the configured weights (HAProxy computes it once, at startup,
    /// over every server), see [`weights_gcd`].
    pub fn new(weights: &[u32], gcd: u32) -> Map {
        let eweights: Vec<u32> = weights.iter().map(|&w| w.checked_div(gcd).unwrap_or(0)).collect();
        let slots = fill(&eweights, |_| true);
        Map { eweights, slots }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn server_at(&self, at: usize) -> usize {
        self.slots[at % self.slots.len()] as usize
    }

    /// The server for `hash`. When the slot's server is unusable, HAProxy's table no
    /// longer holds it: the table of the usable servers is built for this pick.
    pub fn lookup(&self, hash: u32, usable: impl Fn(usize) -> bool) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let s = self.slots[hash as usize % self.slots.len()] as usize;
        if usable(s) {
            return Some(s);
        }
        // PERF: only while a server is down or full; O(slots × servers).
        if self.slots.len() * self.eweights.len() <= MAX_REBUILD {
            let slots = fill(&self.eweights, &usable);
            return (!slots.is_empty()).then(|| slots[hash as usize % slots.len()] as usize);
        }
        // COMPAT: for a huge table, the next usable slot instead of HAProxy's rebuilt
        // table: keys of usable servers still stay where they are.
        let at = hash as usize % self.slots.len();
        (1..self.slots.len()).map(|d| self.slots[(at + d) % self.slots.len()] as usize).find(|&s| usable(s))
    }
}

/// HAProxy's map order: each step every server gains its weight, the one with the
/// highest `(score + total) / total` (the first on a tie) takes the slot and pays the
/// total.
fn fill(eweights: &[u32], usable: impl Fn(usize) -> bool) -> Vec<u32> {
    let live: Vec<usize> = (0..eweights.len()).filter(|&i| eweights[i] > 0 && usable(i)).collect();
    let tot: i64 = live.iter().map(|&i| i64::from(eweights[i])).sum();
    let mut score = vec![0i64; eweights.len()];
    let mut slots = Vec::with_capacity(tot as usize);
    for _ in 0..tot {
        let mut best: Option<(usize, i64)> = None;
        for &i in &live {
            score[i] += i64::from(eweights[i]);
            let v = (score[i] + tot) / tot;
            if best.is_none_or(|(_, max)| v > max) {
                best = Some((i, v));
            }
            if tot == 1 {
                break;
            }
        }
        if let Some((b, _)) = best {
            score[b] -= tot;
            slots.push(b as u32);
        }
    }
    slots
}

/// The greatest common divisor of the positive weights (0 when there is none).
pub fn weights_gcd(weights: &[u32]) -> u32 {
    weights.iter().copied().filter(|&w| w > 0).fold(0, gcd)
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_divided_by_their_gcd() {
        let m = Map::new(&[2, 4, 0], weights_gcd(&[2, 4, 0]));
        assert_eq!(m.eweights, [1, 2, 0]);
        assert_eq!(m.len(), 3);
        assert_eq!(m.slots.iter().filter(|&&s| s == 1).count(), 2);
        assert!(Map::new(&[0, 0], weights_gcd(&[0, 0])).is_empty());
    }

    #[test]
    fn slot_order_is_haproxys() {
        // equal weights: declaration order
        assert_eq!(Map::new(&[1, 1, 1], weights_gcd(&[1, 1, 1])).slots, [0, 1, 2]);
        // weights 1 and 3: both score 1 at first, the first server wins the tie
        assert_eq!(Map::new(&[1, 3], weights_gcd(&[1, 3])).slots, [0, 1, 1, 1]);
    }

    #[test]
    fn divisor_comes_from_the_configured_weights() {
        // a server of weight 1 out of rotation still counts in the divisor
        let m = Map::new(&[2, 0, 4], weights_gcd(&[2, 1, 4]));
        assert_eq!(m.len(), 6);
    }

    #[test]
    fn hash_modulo_slots() {
        let m = Map::new(&[1, 1, 1], weights_gcd(&[1, 1, 1]));
        assert_eq!(m.lookup(0, |_| true), Some(0));
        assert_eq!(m.lookup(4, |_| true), Some(1));
        assert_eq!(m.lookup(u32::MAX, |_| true), Some((u32::MAX % 3) as usize));
    }

    #[test]
    fn unusable_server_rebuilds_without_it() {
        let m = Map::new(&[1, 1, 1], weights_gcd(&[1, 1, 1]));
        // slot table without server 1 is [0, 2]: hash 4 -> slot 0
        assert_eq!(m.lookup(4, |s| s != 1), Some(0));
        assert_eq!(m.lookup(5, |s| s != 1), Some(2));
        assert_eq!(m.lookup(5, |_| false), None);
    }
}
