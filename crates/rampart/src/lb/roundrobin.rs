//! Weighted round robin without locks: the smooth weighted sequence (each server
//! appears `weight` times per cycle, spread evenly) is computed once at startup, and a
//! shared atomic cursor walks it, so threads share one rotation.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Longest precomputed cycle; beyond it weights are scaled down proportionally.
const MAX_CYCLE: u64 = 4096;

#[derive(Debug)]
pub struct RoundRobin {
    /// Server indices in rotation order.
    cycle: Vec<u32>,
    cursor: AtomicUsize,
}

impl RoundRobin {
    pub fn new(weights: &[u32]) -> RoundRobin {
        RoundRobin { cycle: smooth_cycle(weights), cursor: AtomicUsize::new(0) }
    }

    /// Next server in rotation for which `usable` holds. A server that is skipped loses
    /// its turn (as HAProxy skips a full or down server).
    pub fn pick(&self, usable: impl Fn(usize) -> bool) -> Option<usize> {
        if !self.cycle.is_empty() {
            for _ in 0..self.cycle.len() {
                let at = self.cursor.fetch_add(1, Ordering::Relaxed) % self.cycle.len();
                let srv = self.cycle[at] as usize;
                if usable(srv) {
                    return Some(srv);
                }
            }
        }
        // Weight-0 servers are not in the cycle; HAProxy never picks them either.
        None
    }
}

/// The smooth weighted round-robin order: at each step every server gains its weight,
/// the richest is picked and pays the total.
fn smooth_cycle(weights: &[u32]) -> Vec<u32> {
    let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
    if total == 0 {
        return Vec::new();
    }
    let scale = total.div_ceil(MAX_CYCLE).max(1);
    let weights: Vec<i64> =
        weights.iter().map(|&w| if w == 0 { 0 } else { (u64::from(w) / scale).max(1) as i64 }).collect();
    let total: i64 = weights.iter().sum();
    let mut current = vec![0i64; weights.len()];
    let mut cycle = Vec::with_capacity(total as usize);
    for _ in 0..total {
        let mut best = 0;
        for i in 0..weights.len() {
            current[i] += weights[i];
            if current[i] > current[best] {
                best = i;
            }
        }
        current[best] -= total;
        cycle.push(best as u32);
    }
    cycle
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(rr: &RoundRobin, n: usize) -> Vec<usize> {
        (0..n).map(|_| rr.pick(|_| true).unwrap()).collect()
    }

    #[test]
    fn equal_weights_alternate() {
        let rr = RoundRobin::new(&[1, 1, 1]);
        assert_eq!(take(&rr, 6), vec![0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn weights_are_respected_and_spread() {
        let rr = RoundRobin::new(&[3, 1]);
        let seq = take(&rr, 8);
        assert_eq!(seq.iter().filter(|&&s| s == 0).count(), 6);
        assert_eq!(seq, vec![0, 0, 1, 0, 0, 0, 1, 0]);
    }

    #[test]
    fn unusable_servers_are_skipped() {
        let rr = RoundRobin::new(&[1, 1]);
        for _ in 0..4 {
            assert_eq!(rr.pick(|s| s == 1), Some(1));
        }
        assert_eq!(rr.pick(|_| false), None);
    }

    #[test]
    fn zero_weight_is_never_picked() {
        let rr = RoundRobin::new(&[0, 2]);
        assert_eq!(take(&rr, 4), vec![1, 1, 1, 1]);
        assert_eq!(RoundRobin::new(&[0]).pick(|_| true), None);
    }

    #[test]
    fn huge_weights_are_scaled() {
        let rr = RoundRobin::new(&[256; 100]);
        assert!(rr.cycle.len() <= MAX_CYCLE as usize);
        assert_eq!(rr.cycle.len() % 100, 0);
    }
}
