use super::*;
use std::sync::atomic::AtomicUsize;

use crate::sample::conv::testing::Rng;

/// The scan of `leastconn::pick` started at `start`: the reference.
fn scan(start: usize, n: usize, w: &[u32], usable: impl Fn(usize) -> bool, load: &[u32]) -> Option<usize> {
    let c = AtomicUsize::new(start);
    leastconn::pick(&c, n, |i| w[i], usable, |i| load[i])
}

fn tree(w: &[u32], load: &[u32]) -> Order {
    let o = Order::new(w.len());
    o.refresh_all(w.len(), |i| load[i], |i| w[i]);
    o
}

/// Every inner node holds the smaller of its children.
fn assert_consistent(o: &Order) {
    for k in 1..o.cap {
        let v = rank(o.nodes[k].load(Ordering::SeqCst));
        let a = rank(o.nodes[2 * k].load(Ordering::SeqCst));
        let b = rank(o.nodes[2 * k + 1].load(Ordering::SeqCst));
        assert_eq!(v, a.min(b), "node {k}");
    }
}

#[test]
fn picks_what_the_scan_picks() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..300 {
        let n = 1 + r.below(40);
        let mut w: Vec<u32> = (0..n).map(|_| [0, 1, 1, 2, 3, 256][r.below(6)]).collect();
        let mut load: Vec<u32> = (0..n).map(|_| r.below(4) as u32).collect();
        let o = tree(&w, &load);
        for _ in 0..50 {
            // change one server's load or weight, as a stream start/end or `set weight`
            let i = r.below(n);
            match r.below(3) {
                0 => load[i] += 1,
                1 => load[i] = load[i].saturating_sub(1),
                _ => w[i] = r.below(5) as u32,
            }
            o.refresh(i, || load[i], || w[i]);
            let banned = r.below(n + 1); // n: none
            let full = r.below(3) == 0;
            let usable = |s: usize| s != banned && !(full && load[s] >= 3);
            let start = r.below(n);
            assert_eq!(o.pick(start, usable), scan(start, n, &w, usable, &load), "round {round} {w:?} {load:?}");
        }
        assert_consistent(&o);
    }
}

#[test]
fn ties_take_turns_and_idle_servers_come_first() {
    let o = tree(&[1, 1, 1, 1], &[0, 2, 0, 0]);
    let seq: Vec<_> = (0..6).map(|s| o.pick(s % 4, |_| true).unwrap()).collect();
    assert_eq!(seq, [0, 2, 2, 3, 0, 2]);
    // idle first whatever the weight: key 0
    let o = tree(&[1, 100], &[0, 1]);
    assert_eq!(o.pick(1, |_| true), Some(0));
}

#[test]
fn weights_divide_the_load() {
    // (5+1)/4 < (2+1)/1
    let o = tree(&[4, 1, 1], &[5, 2, 3]);
    assert_eq!(o.pick(0, |_| true), Some(0));
    assert_eq!(o.pick(0, |i| i != 0), Some(1));
}

#[test]
fn out_of_the_tables_is_never_picked() {
    let o = tree(&[0, 1, 0], &[0, 9, 0]);
    assert_eq!(o.pick(0, |_| true), Some(1));
    assert_eq!(o.pick(0, |i| i != 1), None);
    let w = [0u32, 0, 0];
    o.refresh(1, || 9, || w[1]);
    assert_eq!(o.pick(2, |_| true), None);
    assert_eq!(Order::new(0).pick(0, |_| true), None);
}

#[test]
fn concurrent_updates_leave_a_consistent_tree() {
    let n = 300;
    let w: Vec<u32> = (0..n).map(|i| 1 + (i as u32 % 3)).collect();
    let loads = Loads::default();
    loads.reserve(n);
    let o = Order::new(n);
    o.refresh_all(n, |i| loads.get(i), |i| w[i]);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (o, w, loads) = (&o, &w, &loads);
            s.spawn(move || {
                let mut r = Rng(t + 1);
                let mut held = Vec::new();
                for _ in 0..20_000 {
                    if held.is_empty() || r.below(2) == 0 {
                        let i = o.pick(r.below(n), |_| true).unwrap();
                        loads.add(i, true);
                        o.refresh(i, || loads.get(i), || w[i]);
                        held.push(i);
                    } else {
                        let i = held.swap_remove(r.below(held.len()));
                        loads.add(i, false);
                        o.refresh(i, || loads.get(i), || w[i]);
                    }
                }
            });
        }
    });
    assert_consistent(&o);
    let load: Vec<u32> = (0..n).map(|i| loads.get(i)).collect();
    assert_eq!(loads.total(), load.iter().map(|&l| u64::from(l)).sum::<u64>());
    for start in 0..n {
        assert_eq!(o.pick(start, |_| true), scan(start, n, &w, |_| true, &load));
    }
}

#[test]
fn load_chunks_never_overlap() {
    let mut seen = std::collections::HashSet::new();
    for i in 0..MAX_SERVERS {
        let (c, at) = chunk_of(i);
        assert!(at < chunk_len(c), "{i}");
        assert!(seen.insert((c, at)), "{i}");
    }
    let loads = Loads::default();
    loads.reserve(MAX_SERVERS);
    loads.add(MAX_SERVERS - 1, true);
    assert_eq!(loads.get(MAX_SERVERS - 1), 1);
    // an end without a start stays at 0
    loads.add(7, false);
    assert_eq!((loads.get(7), loads.total()), (0, 1));
    // not reserved: not counted
    let small = Loads::default();
    small.reserve(10);
    small.add(100, true);
    assert_eq!(small.get(100), 0);
}
