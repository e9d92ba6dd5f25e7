//! Arbitrary data through rampart's own deflate encoder (`comp::fast`), cut in
//! arbitrary blocks with the level moved between them (0: stored blocks, 1: matches)
//! as the compression limits move it, in each framing (gzip, zlib, raw).
//! Property: zlib (flate2) decodes the stream to exactly the input, and after every
//! block, what was sent so far decodes to everything pushed so far (the sync flush).

#![no_main]

use std::io::Read;

use libfuzzer_sys::fuzz_target;
use rampart::comp::fast::{FastDeflate, Wrap};

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, rest)) = data.split_first() else { return };
    let wrap = [Wrap::Gzip, Wrap::Zlib, Wrap::Raw][usize::from(ctl % 3)];
    // the input repeats itself now and then, so that matches (long ones too) happen
    let input: Vec<u8> = if ctl & 0x80 != 0 { rest.repeat(3) } else { rest.to_vec() };
    let mut e = FastDeflate::new(wrap, u32::from(ctl & 0x40 == 0));
    let mut out = Vec::new();
    let mut raw = flate2::Decompress::new(false);
    let mut sent = 0;
    let mut seen = Vec::new();
    let mut at = 0;
    let mut k = 0usize;
    while at < input.len() {
        // block sizes and levels from the input itself
        let b = input[(at * 7 + k) % input.len()];
        let len = (usize::from(b) * 97 % 4099 + 1).min(input.len() - at);
        e.set_level(u32::from(b & 1 == 0 || ctl & 0x20 != 0));
        let from = out.len();
        e.push(&input[at..at + len], &mut out);
        at += len;
        k += 1;
        if wrap == Wrap::Raw {
            seen.reserve(len + 1024);
            raw.decompress_vec(&out[from..], &mut seen, flate2::FlushDecompress::Sync).expect("valid so far");
            sent += len;
            assert_eq!(seen.len(), sent, "a flush sends everything pushed");
        }
    }
    e.finish(&mut out);
    let mut back = Vec::new();
    match wrap {
        Wrap::Gzip => flate2::read::GzDecoder::new(&out[..]).read_to_end(&mut back),
        Wrap::Zlib => flate2::read::ZlibDecoder::new(&out[..]).read_to_end(&mut back),
        Wrap::Raw => flate2::read::DeflateDecoder::new(&out[..]).read_to_end(&mut back),
    }
    .expect("a valid stream");
    assert_eq!(back, input);
});
