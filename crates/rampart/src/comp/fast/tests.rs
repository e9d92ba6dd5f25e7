use std::io::Read;

use super::*;

/// A deterministic pseudo-random generator (xorshift).
fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed.max(1);
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

fn random(n: usize, seed: u64) -> Vec<u8> {
    let mut r = rng(seed);
    (0..n).map(|_| r() as u8).collect()
}

/// Text-like data: words from a small vocabulary, with numbers.
fn text(n: usize, seed: u64) -> Vec<u8> {
    const WORDS: &[&str] =
        &["the", "proxy", "server", "backend", "<div class=\"row\">", "request", "é", "response", "\n"];
    let mut r = rng(seed);
    let mut v = Vec::new();
    while v.len() < n {
        let x = r();
        v.extend_from_slice(WORDS[(x % WORDS.len() as u64) as usize].as_bytes());
        if x.is_multiple_of(7) {
            v.extend_from_slice(format!("{}", x % 10_000).as_bytes());
        }
        v.push(b' ');
    }
    v.truncate(n);
    v
}

fn decode(wrap: Wrap, b: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    match wrap {
        Wrap::Gzip => flate2::read::GzDecoder::new(b).read_to_end(&mut v),
        Wrap::Zlib => flate2::read::ZlibDecoder::new(b).read_to_end(&mut v),
        Wrap::Raw => flate2::read::DeflateDecoder::new(b).read_to_end(&mut v),
    }
    .expect("a valid stream");
    v
}

/// Compresses `chunks` (one push each), then checks the stream decodes to them.
fn roundtrip(wrap: Wrap, chunks: &[&[u8]]) -> Vec<u8> {
    let mut e = FastDeflate::new(wrap, 1);
    let mut out = Vec::new();
    for c in chunks {
        e.push(c, &mut out);
    }
    e.finish(&mut out);
    assert_eq!(decode(wrap, &out), chunks.concat(), "{wrap:?}");
    out
}

const WRAPS: [Wrap; 3] = [Wrap::Gzip, Wrap::Zlib, Wrap::Raw];

#[test]
fn code_tables_match_rfc1951() {
    // length 3: symbol 257, code 0000001; length 258: symbol 285, code 11000101
    assert_eq!(LEN[3], packed(rev(1, 7), 7));
    assert_eq!(LEN[258], packed(rev(0xc5, 8), 8));
    // length 11: symbol 265 (11-12, one extra bit 0); 12: extra bit 1
    assert_eq!(LEN[12], packed(rev(9, 7) | (1 << 7), 8));
    // 'A' (65): 8 bits 0x30 + 65; 200: 9 bits 0x190 + 56
    assert_eq!(LIT[65], packed(rev(0x71, 8), 8));
    assert_eq!(LIT[200], packed(rev(0x1c8, 9), 9));
    assert_eq!(dist_code(1), (0, 5));
    assert_eq!(dist_code(32768), (rev(29, 5) | (8191 << 5), 18));
}

/// RFC 1951's distance table, written out: (first distance, extra bits) by symbol.
const RFC_DIST: [(u32, u32); 30] = [
    (1, 0),
    (2, 0),
    (3, 0),
    (4, 0),
    (5, 1),
    (7, 1),
    (9, 2),
    (13, 2),
    (17, 3),
    (25, 3),
    (33, 4),
    (49, 4),
    (65, 5),
    (97, 5),
    (129, 6),
    (193, 6),
    (257, 7),
    (385, 7),
    (513, 8),
    (769, 8),
    (1025, 9),
    (1537, 9),
    (2049, 10),
    (3073, 10),
    (4097, 11),
    (6145, 11),
    (8193, 12),
    (12289, 12),
    (16385, 13),
    (24577, 13),
];

#[test]
fn every_distance_has_its_rfc1951_code() {
    for dist in 1..=32768u32 {
        let sym = RFC_DIST.iter().rposition(|&(first, _)| first <= dist).unwrap() as u32;
        let (first, extra) = RFC_DIST[sym as usize];
        let want = (rev(sym, 5) | ((dist - first) << 5), 5 + extra);
        assert_eq!(dist_code(dist as usize), want, "distance {dist}");
    }
}

#[test]
fn every_shape_round_trips() {
    let big_text = text(300_000, 1);
    let rand = random(100_000, 2);
    let rep = vec![b'a'; 100_000];
    for w in WRAPS {
        roundtrip(w, &[]);
        roundtrip(w, &[b""]);
        roundtrip(w, &[b"x"]);
        roundtrip(w, &[b"abc"]);
        roundtrip(w, &[b"abcd"]);
        roundtrip(w, &[&big_text]);
        roundtrip(w, &[&rand]);
        roundtrip(w, &[&rep]);
        roundtrip(w, &[&rand[..10], &big_text[..7], b"", &rep[..1000], &rand[..5000]]);
    }
}

#[test]
fn compresses_text_and_repeats() {
    let t = text(200_000, 3);
    let out = roundtrip(Wrap::Gzip, &[&t]);
    assert!(out.len() < t.len() / 3, "text: {} -> {}", t.len(), out.len());
    let rep = vec![b'z'; 200_000];
    let out = roundtrip(Wrap::Gzip, &[&rep]);
    assert!(out.len() < 2_000, "repeats: {}", out.len());
}

#[test]
fn incompressible_data_grows_by_little() {
    let r = random(200_000, 4);
    let out = roundtrip(Wrap::Raw, &[&r]);
    // stored blocks: 5 bytes per 64 KiB, plus the flush and the end
    assert!(out.len() <= r.len() + 64, "{} -> {}", r.len(), out.len());
}

#[test]
fn many_small_chunks_round_trip_and_each_flush_decodes() {
    let t = text(50_000, 5);
    let mut e = FastDeflate::new(Wrap::Raw, 1);
    let mut out = Vec::new();
    let mut d = flate2::Decompress::new(false);
    let mut got = Vec::with_capacity(t.len() * 2);
    for (k, c) in t.chunks(37).enumerate() {
        let from = out.len();
        e.push(c, &mut out);
        d.decompress_vec(&out[from..], &mut got, flate2::FlushDecompress::Sync).unwrap();
        // what was sent so far decodes to every byte pushed so far
        assert_eq!(got.len(), (k * 37 + c.len()).min(t.len()));
    }
    e.finish(&mut out);
    assert_eq!(decode(Wrap::Raw, &out), t);
}

#[test]
fn matches_reach_back_across_blocks_but_not_past_the_window() {
    let a = random(20_000, 6);
    let b = random(10_000, 7);
    let c = random(40_000, 8);
    for w in WRAPS {
        // `a` again 30 000 bytes after its start (in range), then 60 000 after (out of range)
        let out = roundtrip(w, &[&a, &b, &a, &c, &a]);
        // the second `a` became matches, most of it (a position found in the table
        // starts a match; the table, one entry per hash, forgot some of them), the
        // third one could not: about one `a` less than the whole
        let whole = a.len() * 3 + b.len() + c.len();
        assert!(out.len() < whole - a.len() * 3 / 4, "{w:?}: {}", out.len());
        assert!(out.len() > whole - a.len() - 1000, "{w:?}: {}", out.len());
    }
}

#[test]
fn long_streams_slide_the_window() {
    let t = text(1_000_000, 9);
    let chunks: Vec<&[u8]> = t.chunks(16_384).collect();
    roundtrip(Wrap::Gzip, &chunks);
    let chunks: Vec<&[u8]> = t.chunks(100_000).collect();
    roundtrip(Wrap::Zlib, &chunks);
}

#[test]
fn positions_start_over_past_the_reset_point() {
    let t = text(200_000, 10);
    let mut e = FastDeflate::new(Wrap::Raw, 1);
    e.base = RESET_POS - 50_000;
    let mut out = Vec::new();
    for c in t.chunks(10_000) {
        e.push(c, &mut out);
    }
    assert!(e.base < RESET_POS - 50_000, "the positions started over");
    e.finish(&mut out);
    assert_eq!(decode(Wrap::Raw, &out), t);
}

#[test]
fn level_zero_sends_stored_blocks_and_the_level_moves_both_ways() {
    let t = text(100_000, 11);
    let mut e = FastDeflate::new(Wrap::Gzip, 0);
    let mut out = Vec::new();
    e.push(&t[..40_000], &mut out);
    assert!(out.len() > 40_000, "stored");
    e.set_level(1);
    let before = out.len();
    e.push(&t[40_000..80_000], &mut out);
    assert!(out.len() - before < 20_000, "compressed again");
    e.set_level(0);
    e.push(&t[80_000..], &mut out);
    e.finish(&mut out);
    assert_eq!(decode(Wrap::Gzip, &out), t);
}

#[test]
fn adler32_matches_the_reference() {
    // RFC 1950's example value for "Wikipedia" is 0x11E60398
    assert_eq!(adler32(1, b"Wikipedia"), 0x11e6_0398);
    let r = random(100_000, 12);
    let (a, b) = r.split_at(33_333);
    let mut z = flate2::Compress::new(flate2::Compression::fast(), true);
    let mut v = Vec::with_capacity(200_000);
    z.compress_vec(&r, &mut v, flate2::FlushCompress::Finish).unwrap();
    let want = u32::from_be_bytes(v[v.len() - 4..].try_into().unwrap());
    assert_eq!(adler32(adler32(1, a), b), want);
}
