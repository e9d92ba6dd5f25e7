//! ACL and map lookups per second with large pattern sets: a 100 000-entry map
//! (exact, prefix, IP) and 10 000-pattern ACLs, against the same lookups on a
//! 10-entry set (what a request pays without a large set).
//!
//! Run: `cargo bench -p rampart --bench acl` (figures in docs/COMPATIBILITY.md, "ACLs, conditions and maps").

use std::hint::black_box;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rampart::acl::PatRefs;
use rampart::pattern::patref::{parse_file, PatIndex, PatRef};
use rampart::pattern::value::ValueKind;
use rampart::pattern::{MatchMethod, PatFlags, PatternSet};
use rampart::sample::conv::map::apply;
use rampart::sample::Sample;

/// Runs `f` over `inputs` for about `budget`, returns lookups per second and ns each.
fn measure<T>(inputs: &[T], budget: Duration, mut f: impl FnMut(&T) -> bool) -> (f64, f64, usize) {
    let mut n = 0usize;
    let mut hits = 0usize;
    let start = Instant::now();
    while start.elapsed() < budget {
        for i in inputs {
            hits += usize::from(black_box(f(black_box(i))));
        }
        n += inputs.len();
    }
    let secs = start.elapsed().as_secs_f64();
    (n as f64 / secs, secs * 1e9 / n as f64, hits * inputs.len() / n.max(1))
}

fn report(name: &str, r: (f64, f64, usize), of: usize) {
    println!("| {name} | {:.1} M/s | {:.0} ns | {}/{} |", r.0 / 1e6, r.1, r.2, of);
}

/// A map of `lines` in a temp file, compiled for `method`.
fn map(dir: &std::path::Path, name: &str, lines: &str, method: MatchMethod) -> Arc<PatIndex> {
    let p = dir.join(name);
    std::fs::write(&p, lines).unwrap();
    let refs = PatRefs::default();
    let src: Arc<PatRef> = refs.file(p.to_str().unwrap(), true).unwrap();
    src.index(method, PatFlags { icase: false, no_dns: true }, Some(ValueKind::Str), false).unwrap()
}

fn set(method: MatchMethod, icase: bool, pats: &[String]) -> PatternSet {
    let p: Vec<&str> = pats.iter().map(String::as_str).collect();
    PatternSet::build(method, PatFlags { icase, no_dns: true }, &p, false).unwrap()
}

/// A deterministic xorshift, to spread keys without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn main() {
    let budget = Duration::from_millis(std::env::var("BENCH_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(700));
    let dir = std::env::temp_dir().join(format!("rampart-bench-acl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);

    println!("| case | lookups/s | per lookup | hits/inputs |");
    println!("|---|---|---|---|");

    for n in [10usize, 100_000] {
        // Exact: host names.
        let lines: String = (0..n).map(|i| format!("host{i}.example.com backend{}\n", i % 50)).collect();
        let m = map(&dir, &format!("exact{n}.map"), &lines, MatchMethod::Str);
        let inputs: Vec<String> =
            (0..1000).map(|i| format!("host{}.example.com", (rng.next() as usize) % (n * 2) + i % 2)).collect();
        let r = measure(&inputs, budget, |h| apply(&m, None, Sample::str(h.as_bytes())).is_some());
        report(&format!("map_str, {n} entries"), r, inputs.len());

        // Prefix: URL paths, longest prefix.
        let lines: String = (0..n).map(|i| format!("/svc{}/v{}/ backend{}\n", i / 10, i % 10, i % 50)).collect();
        let m = map(&dir, &format!("beg{n}.map"), &lines, MatchMethod::Beg);
        let inputs: Vec<String> = (0..1000)
            .map(|_| format!("/svc{}/v{}/items/42?x=1", (rng.next() as usize) % (n / 10 + 5), rng.next() % 10))
            .collect();
        let r = measure(&inputs, budget, |p| apply(&m, None, Sample::str(p.as_bytes())).is_some());
        report(&format!("map_beg, {n} entries"), r, inputs.len());

        // IP: /24 networks with a few /16 and /32, longest prefix.
        let lines: String = (0..n)
            .map(|i| {
                let i = i as u32;
                let (net, len) = match i % 10 {
                    0 => (0x0a00_0000 | (i << 16), 16),
                    1 => (0x0b00_0000 | i, 32),
                    _ => (0x0c00_0000 | (i << 8), 24),
                };
                format!("{}/{len} backend{}\n", Ipv4Addr::from(net), i % 50)
            })
            .collect();
        let m = map(&dir, &format!("ip{n}.map"), &lines, MatchMethod::Ip);
        let inputs: Vec<Ipv4Addr> =
            (0..1000).map(|_| Ipv4Addr::from(0x0c00_0000 | ((rng.next() as u32) % (n as u32 * 2)) << 8 | 7)).collect();
        let r = measure(&inputs, budget, |a| apply(&m, None, Sample::Ipv4(*a)).is_some());
        report(&format!("map_ip, {n} entries"), r, inputs.len());
    }

    for n in [10usize, 10_000] {
        let hosts: Vec<String> = (0..n).map(|i| format!("Host{i}.Example.com")).collect();
        let acl = set(MatchMethod::Str, true, &hosts);
        let inputs: Vec<String> =
            (0..1000).map(|_| format!("host{}.example.com", (rng.next() as usize) % (n * 2))).collect();
        report(
            &format!("acl -m str -i, {n} patterns"),
            measure(&inputs, budget, |h| acl.matches(&Sample::str(h.as_bytes()))),
            1000,
        );

        let prefixes: Vec<String> = (0..n).map(|i| format!("/blocked/{i}/")).collect();
        let acl = set(MatchMethod::Beg, false, &prefixes);
        let paths: Vec<String> =
            (0..1000).map(|_| format!("/blocked/{}/x/y", (rng.next() as usize) % (n * 2))).collect();
        report(
            &format!("acl -m beg, {n} patterns"),
            measure(&paths, budget, |p| acl.matches(&Sample::str(p.as_bytes()))),
            1000,
        );

        let words: Vec<String> = (0..n).map(|i| format!("bad{i}word")).collect();
        let acl = set(MatchMethod::Sub, false, &words);
        let uas: Vec<String> = (0..1000)
            .map(|_| {
                format!(
                    "Mozilla/5.0 (X11; Linux x86_64) bad{}word Gecko/20100101 Firefox/115.0",
                    (rng.next() as usize) % (n * 20)
                )
            })
            .collect();
        report(
            &format!("acl -m sub, {n} patterns"),
            measure(&uas, budget, |u| acl.matches(&Sample::str(u.as_bytes()))),
            1000,
        );

        let nets: Vec<String> =
            (0..n).map(|i| format!("{}/24", Ipv4Addr::from(0x0c00_0000 | ((i as u32) << 8)))).collect();
        let acl = set(MatchMethod::Ip, false, &nets);
        let srcs: Vec<Ipv4Addr> =
            (0..1000).map(|_| Ipv4Addr::from(0x0c00_0000 | ((rng.next() as u32) % (n as u32 * 2)) << 8 | 9)).collect();
        report(&format!("acl -m ip, {n} patterns"), measure(&srcs, budget, |a| acl.matches(&Sample::Ipv4(*a))), 1000);

        let n_re = n.min(1000);
        let regs: Vec<String> = (0..n_re).map(|i| format!("^/api/v{i}/[a-z]+$")).collect();
        let acl = set(MatchMethod::Reg, false, &regs);
        let urls: Vec<String> =
            (0..1000).map(|_| format!("/api/v{}/items", (rng.next() as usize) % (n_re * 2))).collect();
        report(
            &format!("acl -m reg, {n_re} patterns"),
            measure(&urls, budget, |u| acl.matches(&Sample::str(u.as_bytes()))),
            1000,
        );
    }
    // Loading cost: 100 000 lines parsed and indexed.
    let lines: String = (0..100_000).map(|i| format!("host{i}.example.com backend{}\n", i % 50)).collect();
    let start = Instant::now();
    let e = parse_file(&lines, true);
    let keys: Vec<&str> = e.iter().map(|x| x.key.as_str()).collect();
    let _ = black_box(PatternSet::build(MatchMethod::Beg, PatFlags::default(), &keys, false).unwrap());
    println!("\nparse + index 100 000 map lines (beg): {:?}", start.elapsed());
    let _ = std::fs::remove_dir_all(&dir);
}
