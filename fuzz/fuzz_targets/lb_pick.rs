//! Arbitrary weights, ids, loads, keys and server availability through every
//! load-balancing algorithm, with weights changed at run time.
//! Properties: a pick is always a usable, active server of non-zero weight; a pick fails
//! only when no such server exists, except `hash-type map-based` whose slot table
//! does not skip unusable servers (HAProxy then falls back to round robin only when
//! its slot is taken); with every server usable, round robin (and a hashing algorithm
//! without a key) brings each such server up within one rotation.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart::lb::{Algo, HashFn, Hasher, KeySource, Lb, LbConfig, UriOpts};

fn algo(b: u8, draws: u8) -> Algo {
    match b % 8 {
        0 => Algo::RoundRobin,
        1 => Algo::StaticRr,
        2 => Algo::LeastConn,
        3 => Algo::First,
        4 => Algo::Random(u32::from(draws % 4) + 1),
        5 => Algo::PeakEwma(std::time::Duration::from_secs(1)),
        6 => Algo::Hash(KeySource::Source),
        _ => Algo::Hash(KeySource::Uri(UriOpts::default())),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else { return };
    let n = usize::from(n % 64) + 1;
    if rest.len() < n * 4 + 16 {
        return;
    }
    let (per_server, rest) = rest.split_at(n * 4);
    // HAProxy refuses weights above 256.
    let weights: Vec<u32> = per_server.chunks(4).map(|w| u32::from(u16::from_le_bytes([w[0], w[1]])) % 257).collect();
    let ids: Vec<u32> = per_server.chunks(4).enumerate().map(|(i, w)| u32::from(w[2]) * 64 + i as u32 + 1).collect();
    let loads: Vec<u32> = per_server.chunks(4).map(|w| u32::from(w[3])).collect();
    let usable_mask = u64::from_le_bytes(rest[..8].try_into().unwrap());
    let (ctl, keys) = rest[8..].split_at(8);
    let algo = algo(ctl[0], ctl[1]);
    let hashing = matches!(algo, Algo::Hash(_));
    // keyless picks rotate over every active server: round robin, and the hashing
    // algorithms' fallback
    let rotates = hashing || matches!(algo, Algo::RoundRobin | Algo::StaticRr);
    let consistent = ctl[2] & 1 == 1;
    let func = [HashFn::Sdbm, HashFn::Djb2, HashFn::Wt6, HashFn::Crc32][usize::from(ctl[3] % 4)];
    let cfg = LbConfig {
        algo,
        consistent,
        hasher: Hasher { func, avalanche: ctl[4] & 1 == 1 },
        balance_factor: if ctl[5] & 1 == 1 { 100 + u32::from(ctl[6]) } else { 0 },
    };
    let active: Vec<bool> = (0..n).map(|i| (u64::from(ctl[7]) >> (i % 8)) & 1 == 1 || i % 3 != 0).collect();
    let lb = Lb::new(cfg, &weights, &ids, &active);

    let usable = |i: usize| usable_mask & (1 << i) != 0;
    let weight = |i: usize| lb.weight(i);
    let candidate = |i: usize| usable(i) && active[i] && weight(i) > 0;
    let any_candidate = (0..n).any(candidate);
    let map_based = hashing && !consistent;
    for (round, chunk) in keys.chunks(4).take(64).enumerate() {
        let key = (round % 2 == 0 && chunk.len() == 4).then(|| u32::from_le_bytes(chunk.try_into().unwrap()));
        match lb.pick_keyed(key, usable, |i| loads[i]) {
            Some(i) => assert!(i < n && candidate(i), "picked {i}"),
            None => assert!(!any_candidate || (map_based && key.is_some()), "no pick although a server was usable"),
        }
    }

    if rotates {
        // one rotation: every slot of the cycle, or every point of the ring (16 per
        // weight unit), at most
        let rotation: u32 = weights.iter().sum::<u32>() * if hashing { 16 } else { 1 } + 1;
        let mut seen = vec![false; n];
        for _ in 0..rotation {
            if let Some(i) = lb.pick_keyed(None, |_| true, |_| 0) {
                seen[i] = true;
            }
        }
        for i in 0..n {
            assert_eq!(seen[i], active[i] && weight(i) > 0, "server {i} (weight {})", weight(i));
        }
    }

    // a weight changed at run time takes effect at once
    let changed = usize::from(ctl[1]) % n;
    lb.set_weight(changed, u32::from(ctl[6]));
    if let Some(i) = lb.pick_keyed(None, usable, |i| loads[i]) {
        assert!(candidate(i), "picked {i} after a weight change");
    }
});

