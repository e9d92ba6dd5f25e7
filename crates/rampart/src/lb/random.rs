//! `balance random[(<draws>)]`: a random point of the consistent ring (so weights
//! count), drawn `draws` times, keeping the least loaded per unit of weight (the
//! power of two choices by default).
//! HAProxy counterpart: `get_server_rnd()` (src/backend.c).

use super::chash::Ring;

/// A per-thread random value (the `rand` fetch's generator: cheap, lock-free, good
/// enough to spread picks).
pub use crate::sample::fetch::internal::random32 as next_u32;

/// Draws `draws` servers and keeps the one with the fewest streams per weight.
pub fn pick(
    ring: &Ring,
    draws: u32,
    weight: impl Fn(usize) -> u32,
    usable: impl Fn(usize) -> bool,
    load: impl Fn(usize) -> u32,
) -> Option<usize> {
    let mut best: Option<usize> = None;
    for _ in 0..draws.max(1) {
        let Some(cur) = ring.lookup(next_u32(), &usable, |_| true) else { break };
        best = match best {
            Some(prev)
                if prev != cur
                    && u64::from(load(cur)) * u64::from(weight(prev))
                        > u64::from(load(prev)) * u64::from(weight(cur)) =>
            {
                Some(prev)
            }
            _ => Some(cur),
        };
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(w: &[u32]) -> Ring {
        Ring::new(w.iter().enumerate().map(|(i, &w)| (w, i as u32 + 1)))
    }

    #[test]
    fn one_draw_follows_weights() {
        let r = ring(&[1, 3]);
        let mut n = [0u32; 2];
        for _ in 0..20_000 {
            n[pick(&r, 1, |_| 1, |_| true, |_| 0).unwrap()] += 1;
        }
        // 25% / 75%, with the ring's lumpiness
        assert!((3_000..7_500).contains(&n[0]), "{n:?}");
    }

    #[test]
    fn two_draws_prefer_the_less_loaded() {
        let r = ring(&[1, 1]);
        let load = [10u32, 0];
        let mut n = [0u32; 2];
        for _ in 0..2_000 {
            n[pick(&r, 2, |_| 1, |_| true, |i| load[i]).unwrap()] += 1;
        }
        // server 0 wins only when both draws land on it (about a quarter)
        assert!(n[1] > 1_300, "{n:?}");
        assert_eq!(pick(&r, 2, |_| 1, |_| false, |_| 0), None);
    }
}
