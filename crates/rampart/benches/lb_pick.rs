//! Server picks per second for each balancing algorithm with 1, 10, 1 000 and 10 000
//! servers (all usable, weights 1..=4, loads varying), the way `backend::pick_server`
//! calls the balancer (built as the backends build it, counting loads): the cost of
//! choosing a server, without sockets. The last row is what counting costs per
//! stream: one start and one end on a `leastconn` server.
//!
//! Run: `cargo bench -p rampart --bench lb_pick` (figures in docs/BALANCING.md).
//! A custom harness like `acl.rs`: criterion would be one more dev-dependency tree
//! that every `cargo test` of the crate compiles, on a machine where builds are the
//! bottleneck; this loop times each case over a fixed budget the same way.

use std::hint::black_box;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rampart::lb::{hash, Algo, HashFn, Hasher, KeySource, Lb, LbConfig, UriOpts};

fn lb(algo: Algo, consistent: bool, n: usize, balance_factor: u32) -> Lb {
    let weights: Vec<u32> = (0..n).map(|i| 1 + (i as u32 % 4)).collect();
    let ids: Vec<u32> = (1..=n as u32).collect();
    let hasher = Hasher { func: HashFn::Sdbm, avalanche: consistent };
    let lb = Lb::new(LbConfig { algo, consistent, hasher, balance_factor }, &weights, &ids, &[]).counting_loads();
    for i in 0..n {
        (0..load_of(i)).for_each(|_| lb.stream_started(i));
    }
    lb
}

/// The streams server `i` serves during the measure.
fn load_of(i: usize) -> u32 {
    i as u32 % 7
}

/// ns per pick over about `budget`.
fn measure(lb: &Lb, n: usize, keyed: bool, budget: Duration) -> f64 {
    let loads: Vec<AtomicU32> = (0..n).map(|i| AtomicU32::new(load_of(i))).collect();
    let keys: Vec<u32> = (0..1024u32).map(hash::full_hash).collect();
    let mut picks = 0u64;
    let start = Instant::now();
    while start.elapsed() < budget {
        for &k in &keys {
            let key = keyed.then_some(k);
            let s = lb.pick_keyed(black_box(key), |i| black_box(i) < n, |i| loads[i].load(Ordering::Relaxed));
            black_box(s);
        }
        picks += keys.len() as u64;
    }
    start.elapsed().as_secs_f64() * 1e9 / picks as f64
}

/// ns per stream start and end on a `leastconn` balancer (two updates of its order).
fn start_end(lb: &Lb, n: usize, budget: Duration) -> f64 {
    let mut rounds = 0u64;
    let start = Instant::now();
    while start.elapsed() < budget {
        for k in 0..1024 {
            let i = (k * 7919) % n;
            lb.stream_started(black_box(i));
            lb.stream_ended(black_box(i));
        }
        rounds += 1024;
    }
    start.elapsed().as_secs_f64() * 1e9 / rounds as f64
}

fn main() {
    let budget = Duration::from_millis(300);
    let sizes = [1, 10, 1000, 10_000];
    println!("| algorithm | 1 server | 10 servers | 1000 servers | 10 000 servers |");
    println!("|---|---|---|---|---|");
    let uri = || Algo::Hash(KeySource::Uri(UriOpts::default()));
    let ewma = Algo::PeakEwma(Duration::from_secs(10));
    let cases: [(&str, Algo, bool, bool, u32); 14] = [
        ("roundrobin", Algo::RoundRobin, false, false, 0),
        ("static-rr", Algo::StaticRr, false, false, 0),
        ("leastconn", Algo::LeastConn, false, false, 0),
        ("first", Algo::First, false, false, 0),
        ("random(2)", Algo::Random(2), false, false, 0),
        ("source, map-based", Algo::Hash(KeySource::Source), false, true, 0),
        ("uri, map-based", uri(), false, true, 0),
        ("uri, consistent", uri(), true, true, 0),
        ("uri, consistent, hash-balance-factor 125", uri(), true, true, 125),
        ("uri, map-based, no key (round robin)", Algo::Hash(KeySource::Expr), false, false, 0),
        ("uri, consistent, no key (round robin)", Algo::Hash(KeySource::Expr), true, false, 0),
        ("peak-ewma", ewma, false, false, 0),
        ("prefix-affinity", Algo::PrefixAffinity(256), false, true, 0),
        ("prefix-affinity, no key (least loaded)", Algo::PrefixAffinity(256), false, false, 0),
    ];
    for (name, algo, consistent, keyed, factor) in cases {
        let row: Vec<String> = sizes
            .iter()
            .map(|&n| format!("{:.0} ns", measure(&lb(algo.clone(), consistent, n, factor), n, keyed, budget)))
            .collect();
        println!("| {name} | {} |", row.join(" | "));
    }
    let row: Vec<String> =
        sizes.iter().map(|&n| format!("{:.0} ns", start_end(&lb(Algo::LeastConn, false, n, 0), n, budget))).collect();
    println!("| leastconn: one stream start + end | {} |", row.join(" | "));
    let key = b"/images/logo-2024.png";
    let t = Instant::now();
    let mut h = 0u32;
    for _ in 0..1_000_000 {
        h ^= Hasher { func: HashFn::Sdbm, avalanche: true }.hash(black_box(key));
    }
    black_box(h);
    println!("\nhashing a 21-byte URI (sdbm + avalanche): {:.0} ns", t.elapsed().as_secs_f64() * 1e3);
}
