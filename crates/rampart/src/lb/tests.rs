use super::hash::full_hash;
use super::*;

fn lb(algo: Algo, consistent: bool, weights: &[u32]) -> Lb {
    let ids: Vec<u32> = (1..=weights.len() as u32).collect();
    let hasher = Hasher { func: HashFn::Sdbm, avalanche: consistent };
    Lb::new(LbConfig { algo, consistent, hasher, balance_factor: 0 }, weights, &ids, &[])
}

fn share(lb: &Lb, n: usize, picks: u32, key: impl Fn(u32) -> Option<u32>) -> Vec<u32> {
    let mut out = vec![0; n];
    for k in 0..picks {
        out[lb.pick_keyed(key(k), |_| true, |_| 0).unwrap()] += 1;
    }
    out
}

#[test]
fn map_based_hash_follows_weights_exactly() {
    let lb = lb(Algo::Hash(KeySource::Uri(UriOpts::default())), false, &[1, 2, 3]);
    // 6 slots, consecutive hashes walk them: exact shares
    assert_eq!(share(&lb, 3, 6000, Some), [1000, 2000, 3000]);
}

#[test]
fn consistent_hash_follows_weights_roughly() {
    let lb = lb(Algo::Hash(KeySource::Source), true, &[1, 1, 2]);
    let s = share(&lb, 3, 40_000, |k| Some(full_hash(k)));
    assert!((6_000..14_000).contains(&s[0]), "{s:?}");
    assert!((14_000..26_000).contains(&s[2]), "{s:?}");
}

#[test]
fn same_key_same_server() {
    for consistent in [false, true] {
        let lb = lb(Algo::Hash(KeySource::Expr), consistent, &[1, 1, 1, 1]);
        for k in 0..200u32 {
            let h = lb.hash(format!("/key/{k}").as_bytes());
            let a = lb.pick_keyed(Some(h), |_| true, |_| 0);
            assert_eq!(a, lb.pick_keyed(Some(h), |_| true, |_| 0));
        }
    }
}

#[test]
fn missing_key_falls_back_to_round_robin() {
    for consistent in [false, true] {
        let lb = lb(Algo::Hash(KeySource::Expr), consistent, &[1, 1, 1]);
        let s = share(&lb, 3, 3000, |_| None);
        // map: exact; ring: points in ring order, 16 each
        assert!(s.iter().all(|&c| (900..=1100).contains(&c)), "{s:?}");
    }
}

#[test]
fn weight_zero_is_never_picked() {
    for algo in [Algo::RoundRobin, Algo::LeastConn, Algo::First, Algo::Random(2), Algo::Hash(KeySource::Source)] {
        for consistent in [false, true] {
            let lb = lb(algo.clone(), consistent, &[0, 1, 0]);
            for k in 0..500 {
                assert_eq!(lb.pick_keyed(Some(full_hash(k)), |_| true, |_| 0), Some(1), "{algo:?}");
            }
            let none = lb.pick_keyed(Some(1), |i| i != 1, |_| 0);
            assert_eq!(none, None, "{algo:?}");
        }
    }
}

#[test]
fn set_weight_rebuilds() {
    for algo in [Algo::RoundRobin, Algo::Hash(KeySource::Source), Algo::LeastConn, Algo::Random(1)] {
        let lb = lb(algo.clone(), true, &[1, 1]);
        lb.set_weight(0, 0);
        assert_eq!(lb.weight(0), 0);
        for k in 0..200 {
            assert_eq!(lb.pick_keyed(Some(full_hash(k)), |_| true, |_| 0), Some(1), "{algo:?}");
        }
        lb.set_weight(0, 3);
        // streams that stay open, so that leastconn sees the loads grow
        let mut s = [0u32; 2];
        for k in 0..4000 {
            s[lb.pick_keyed(Some(full_hash(k)), |_| true, |i| s[i]).unwrap()] += 1;
        }
        // 3:1 by weight; random(1) draws on a consistent-hash ring whose lumpiness
        // leaves server 0 about 66 % (2 658 / 1 342 in one run): 3:2 is the bound
        assert!(2 * s[0] > 3 * s[1], "{algo:?} {s:?}");
    }
}

#[test]
fn leastconn_reads_loads() {
    let lb = lb(Algo::LeastConn, false, &[1, 1, 1]);
    let load = [3, 1, 2];
    assert_eq!(lb.pick_keyed(None, |_| true, |i| load[i]), Some(1));
}

#[test]
fn first_fills_in_id_order() {
    let lb = Lb::new(
        LbConfig { algo: Algo::First, consistent: false, hasher: Hasher::default(), balance_factor: 0 },
        &[1, 1, 1],
        &[3, 1, 2],
        &[],
    );
    assert_eq!(lb.pick(|_| true), Some(1));
    assert_eq!(lb.pick(|i| i != 1), Some(2));
}

#[test]
fn balance_factor_bounds_a_hot_key() {
    let hasher = Hasher { func: HashFn::Sdbm, avalanche: true };
    let cfg = LbConfig { algo: Algo::Hash(KeySource::Expr), consistent: true, hasher, balance_factor: 125 };
    let lb = Lb::new(cfg, &[1, 1, 1, 1], &[1, 2, 3, 4], &[]);
    let mut load = [0u32; 4];
    let h = lb.hash(b"hot");
    for _ in 0..400 {
        let s = lb.pick_keyed(Some(h), |_| true, |i| load[i]).unwrap();
        load[s] += 1;
    }
    // every stream stays open: no server exceeds 125% of the mean (100) plus one
    assert!(load.iter().all(|&l| l <= 126), "{load:?}");
    let without = lb.config().balance_factor == 0;
    assert!(!without);
}

#[test]
fn round_robin_constructor() {
    let lb = Lb::round_robin(&[1, 1]);
    assert_eq!((lb.pick(|_| true), lb.pick(|_| true)), (Some(0), Some(1)));
    assert!(lb.key_source().is_none());
}

#[test]
fn inactive_servers_leave_the_map_but_keep_the_divisor() {
    let lb = lb(Algo::Hash(KeySource::Expr), false, &[2, 1, 4]);
    // 7 slots; without server 1: 6 slots of weights 2 and 4
    lb.set_active(1, false);
    assert_eq!(lb.weight(1), 0);
    let s = share(&lb, 3, 6000, Some);
    assert_eq!(s, [2000, 0, 4000]);
    lb.set_active(1, true);
    assert_eq!(share(&lb, 3, 7000, Some), [2000, 1000, 4000]);
}

#[test]
fn static_rr_walks_haproxys_map_order() {
    let lb = lb(Algo::StaticRr, false, &[1, 3]);
    let seq: Vec<_> = (0..8).map(|_| lb.pick(|_| true).unwrap()).collect();
    assert_eq!(seq, [0, 1, 1, 1, 0, 1, 1, 1]);
    assert_eq!(lb.pick(|i| i == 0), Some(0));
}

#[test]
fn prefix_affinity_keeps_a_prefix_on_one_server_within_its_bound() {
    let lb = lb(Algo::PrefixAffinity(256), true, &[1, 1, 1, 1]);
    assert_eq!(lb.prefix_len(), Some(256));
    assert_eq!(lb.key_source(), Some(&KeySource::Expr));
    let h = lb.hash(b"You are a helpful assistant.");
    // a new key goes to the least loaded server and stays there
    let loads = [3u32, 0, 2, 2];
    assert_eq!(lb.pick_keyed(Some(h), |_| true, |i| loads[i]), Some(1));
    assert!((0..50).all(|_| lb.pick_keyed(Some(h), |_| true, |_| 0) == Some(1)));
    // its server above the bound (4 streams over an otherwise idle fleet of 4, factor
    // 125): the least loaded one, which becomes its second home; home again once the
    // load is spread
    let loads = [1u32, 4, 0, 1];
    assert_eq!(lb.pick_keyed(Some(h), |_| true, |i| loads[i]), Some(2));
    assert_eq!(lb.pick_keyed(Some(h), |_| true, |i| [0, 4, 1, 0][i]), Some(2));
    assert_eq!(lb.pick_keyed(Some(h), |_| true, |_| 4), Some(1));
    // its first server gone: the second; both gone: it moves for good
    assert_eq!(lb.pick_keyed(Some(h), |i| i != 1, |_| 0), Some(2));
    assert_eq!(lb.pick_keyed(Some(h), |i| i != 1 && i != 2, |i| [0, 0, 0, 3][i]), Some(0));
    assert_eq!(lb.pick_keyed(Some(h), |_| true, |_| 0), Some(0));
}

#[test]
fn prefix_affinity_without_a_key_takes_the_least_loaded_server() {
    let lb = lb(Algo::PrefixAffinity(64), true, &[1, 1, 1]);
    let loads = [5u32, 1, 3];
    assert_eq!(lb.pick_keyed(None, |_| true, |i| loads[i]), Some(1));
    assert_eq!(lb.pick_keyed(None, |i| i != 1, |i| loads[i]), Some(2));
}

#[test]
fn prefix_affinity_spreads_new_prefixes_by_load() {
    let lb = lb(Algo::PrefixAffinity(64), true, &[1, 1, 1, 1]);
    let s = share(&lb, 4, 4000, |k| Some(lb.hash(format!("system prompt {k}").as_bytes())));
    assert!(s.iter().all(|&n| (900..1100).contains(&n)), "{s:?}");
}

/// A balancer that counts loads, as the backends build it.
fn counting(algo: Algo, weights: &[u32]) -> Lb {
    lb(algo, true, weights).counting_loads()
}

/// Loads are the balancer's own counts: the closure is not read.
fn pick_counted(lb: &Lb, usable: impl Fn(usize) -> bool) -> Option<usize> {
    lb.pick_keyed(None, usable, |_| panic!("leastconn read a load"))
}

#[test]
fn counted_leastconn_follows_starts_and_ends() {
    let lb = counting(Algo::LeastConn, &[1, 1, 1]);
    // idle servers take turns
    let seq: Vec<_> = (0..3).map(|_| pick_counted(&lb, |_| true).unwrap()).collect();
    assert_eq!(seq, [0, 1, 2]);
    for (i, n) in [(0, 3), (1, 1), (2, 2)] {
        (0..n).for_each(|_| lb.stream_started(i));
    }
    assert_eq!(pick_counted(&lb, |_| true), Some(1));
    assert_eq!(pick_counted(&lb, |i| i != 1), Some(2));
    lb.stream_ended(0);
    lb.stream_ended(0);
    lb.stream_ended(0);
    assert_eq!(pick_counted(&lb, |_| true), Some(0));
}

#[test]
fn counted_leastconn_weights_and_states_change() {
    let lb = counting(Algo::LeastConn, &[1, 1]);
    lb.stream_started(1);
    lb.set_weight(0, 0);
    assert_eq!(pick_counted(&lb, |_| true), Some(1));
    lb.set_weight(0, 3);
    // streams that stay open: shares follow the weights 3:1
    let mut s = [0u32; 2];
    for _ in 0..4000 {
        let i = pick_counted(&lb, |_| true).unwrap();
        lb.stream_started(i);
        s[i] += 1;
    }
    assert!((2900..=3100).contains(&s[0]), "{s:?}");
    // down, then up again with its streams still counted
    lb.set_active(0, false);
    assert_eq!(lb.weight(0), 0);
    assert!((0..20).all(|_| pick_counted(&lb, |_| true) == Some(1)));
    lb.set_active(0, true);
    (0..s[0]).for_each(|_| lb.stream_ended(0));
    assert_eq!(pick_counted(&lb, |_| true), Some(0));
}

#[test]
fn counted_leastconn_takes_added_servers() {
    let lb = counting(Algo::LeastConn, &[1, 1]);
    (0..2).for_each(|i| lb.stream_started(i));
    // past the tree's first size: it grows and keeps the counts
    for i in 2..70 {
        lb.add_server(i, 1, i as u32 + 1, false);
        lb.stream_started(i);
    }
    lb.add_server(70, 1, 71, true);
    assert_eq!(pick_counted(&lb, |_| true), Some(70));
    lb.stream_started(70);
    lb.set_active(5, true);
    lb.stream_ended(5);
    assert_eq!(pick_counted(&lb, |_| true), Some(5));
    // deleted (out of the tables): never again
    lb.set_active(5, false);
    lb.stream_started(70);
    assert_ne!(pick_counted(&lb, |_| true), Some(5));
}

#[test]
fn counted_prefix_affinity_spreads_new_keys_by_load() {
    let lb = counting(Algo::PrefixAffinity(64), &[1, 1, 1, 1]);
    let mut s = [0u32; 4];
    for k in 0..4000 {
        let h = lb.hash(format!("system prompt {k}").as_bytes());
        let i = lb.pick_keyed(Some(h), |_| true, |i| s[i]).unwrap();
        lb.stream_started(i);
        s[i] += 1;
    }
    assert!(s.iter().all(|&n| (900..1100).contains(&n)), "{s:?}");
}

#[test]
fn counted_balance_factor_bounds_a_hot_key() {
    let hasher = Hasher { func: HashFn::Sdbm, avalanche: true };
    let cfg = LbConfig { algo: Algo::Hash(KeySource::Expr), consistent: true, hasher, balance_factor: 125 };
    let lb = Lb::new(cfg, &[1, 1, 1, 1], &[1, 2, 3, 4], &[]).counting_loads();
    let mut load = [0u32; 4];
    let h = lb.hash(b"hot");
    for _ in 0..400 {
        let s = lb.pick_keyed(Some(h), |_| true, |i| load[i]).unwrap();
        lb.stream_started(s);
        load[s] += 1;
    }
    assert!(load.iter().all(|&l| l <= 126), "{load:?}");
}

#[test]
fn counting_is_only_for_the_algorithms_that_read_many_loads() {
    let lb = counting(Algo::RoundRobin, &[1, 1]);
    lb.stream_started(0);
    assert!(lb.loads.is_none());
    assert!(counting(Algo::LeastConn, &[1]).table.load().order.is_some());
}
