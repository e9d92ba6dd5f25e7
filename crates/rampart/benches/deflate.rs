//! CPU per MiB of gzip at level 1: rampart's own encoder (`comp::fast`, the one used
//! at `tune.comp.maxlevel 1`) against flate2 on zlib-rs at level 1 (what rampart used
//! before, and still uses at levels 2..9), in the same run, on two text-like corpora:
//! `words`, random words as scripts/bench-cache-comp.py serves them, and `docs`, this
//! repository's docs/*.md (real prose and tables). Each is fed in 16 KiB blocks with
//! a sync flush after each, as the response filter does. Prints ms per MiB (the best
//! of several rounds, so that a busy machine disturbs it less) and the compression
//! ratio (input / output).
//!
//! Run: `cargo bench -p rampart --bench deflate`.

use std::hint::black_box;
use std::time::Instant;

use rampart::comp::encoder::Encoder;
use rampart::comp::fast::{FastDeflate, Wrap};
use rampart_cfg::model::CompAlgo;

const BLOCK: usize = 16 * 1024;
const ROUNDS: usize = 15;

const WORDS: &[&str] = &[
    "haproxy",
    "rampart",
    "the",
    "a",
    "of",
    "load",
    "balancer",
    "server",
    "backend",
    "frontend",
    "request",
    "response",
    "header",
    "cache",
    "compression",
    "gzip",
    "deflate",
    "connection",
    "timeout",
    "health",
    "check",
    "stick",
    "table",
    "<div>",
    "</div>",
    "class=\"item\"",
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
];

fn words(n: usize) -> Vec<u8> {
    let mut s = 24u64;
    let mut v = Vec::with_capacity(n + 32);
    while v.len() < n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        v.extend_from_slice(WORDS[(s % WORDS.len() as u64) as usize].as_bytes());
        v.push(b' ');
    }
    v.truncate(n);
    v
}

fn docs() -> Vec<u8> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs");
    let mut names: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    names.sort();
    names.iter().filter(|p| p.extension().is_some_and(|e| e == "md")).flat_map(|p| std::fs::read(p).unwrap()).collect()
}

/// Best ms per MiB over the rounds, and the output size.
fn run(data: &[u8], mut once: impl FnMut(&[u8], &mut Vec<u8>)) -> (f64, usize) {
    let mut out = Vec::with_capacity(data.len() + 1024);
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        out.clear();
        let t = Instant::now();
        once(black_box(data), &mut out);
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best * 1e3 / (data.len() as f64 / 1048576.0), out.len())
}

fn fast(data: &[u8], out: &mut Vec<u8>) {
    let mut e = FastDeflate::new(Wrap::Gzip, 1);
    for b in data.chunks(BLOCK) {
        e.push(b, out);
    }
    e.finish(out);
}

fn zlib(data: &[u8], out: &mut Vec<u8>) {
    let mut e = Encoder::new_zlib(CompAlgo::Gzip, 1).expect("zlib starts");
    for b in data.chunks(BLOCK) {
        e.push(b, out).unwrap();
    }
    e.finish(out).unwrap();
}

fn main() {
    for (name, data) in [("words", words(4 << 20)), ("docs", docs())] {
        for (enc, f) in [("rampart fast", fast as fn(&[u8], &mut Vec<u8>)), ("zlib-rs level 1", zlib)] {
            let (ms, len) = run(&data, f);
            let ratio = data.len() as f64 / len as f64;
            println!("{name:>6} ({:>5} KiB)  {enc:<16} {ms:6.2} ms/MiB  ratio {ratio:5.2}", data.len() / 1024);
        }
    }
}
