//! Arbitrary weights and server availability through the load-balancing algorithms.
//! Properties: a pick is always a usable server of non-zero weight; a pick fails only
//! when no such server exists; with every server usable, each server of non-zero
//! weight comes up within one rotation.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart::lb::Lb;
use rampart_cfg::model::Balance;

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else { return };
    let n = usize::from(n % 64) + 1;
    if rest.len() < n * 2 + 8 {
        return;
    }
    let (weights_raw, rest) = rest.split_at(n * 2);
    // HAProxy weights go up to 256; larger ones check the scaling.
    let weights: Vec<u32> = weights_raw.chunks(2).map(|w| u32::from(u16::from_le_bytes([w[0], w[1]]))).collect();
    let usable_mask = u64::from_le_bytes(rest[..8].try_into().unwrap());
    let balance = if rest.len() > 8 && rest[8] & 1 == 1 { Balance::StaticRr } else { Balance::RoundRobin };
    let lb = Lb::new(balance, &weights);

    let usable = |i: usize| usable_mask & (1 << i) != 0;
    let any_candidate = (0..n).any(|i| usable(i) && weights[i] > 0);
    for _ in 0..64 {
        match lb.pick(usable) {
            Some(i) => assert!(i < n && usable(i) && weights[i] > 0, "picked {i}"),
            None => assert!(!any_candidate, "no pick although a server was usable"),
        }
    }

    let mut seen = vec![false; n];
    for _ in 0..5000 {
        if let Some(i) = lb.pick(|_| true) {
            seen[i] = true;
        }
    }
    for i in 0..n {
        assert_eq!(seen[i], weights[i] > 0, "server {i} (weight {})", weights[i]);
    }
});
