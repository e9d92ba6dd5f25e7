//! The compressors: one per algorithm, each taking body data as it arrives and giving
//! back what it can send now. Every call ends with a flush (zlib's `Z_SYNC_FLUSH`,
//! brotli's and zstd's flush), as HAProxy flushes at each forwarded block: what the
//! server sent reaches the client at once, so a streamed response (server-sent events,
//! LLM tokens) stays live.
//! HAProxy counterpart: the `comp_algo` callbacks of src/compression.c (`add_data`,
//! `flush`, `finish`), on libslz or zlib; rampart uses flate2 on zlib-rs, brotli and
//! zstd.

use std::io::Write;

use rampart_cfg::model::CompAlgo;

/// A compressor for one response body.
pub enum Encoder {
    Identity,
    Gzip(flate2::write::GzEncoder<Vec<u8>>),
    Deflate(flate2::write::ZlibEncoder<Vec<u8>>),
    RawDeflate(flate2::write::DeflateEncoder<Vec<u8>>),
    Brotli(Box<brotli::CompressorWriter<Vec<u8>>>),
    Zstd(zstd::stream::write::Encoder<'static, Vec<u8>>),
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Encoder")
    }
}

/// Brotli's window (log2 of its size): the library's default.
const BROTLI_LGWIN: u32 = 22;

impl Encoder {
    /// A compressor for `algo` at `level` (`tune.comp.maxlevel`, 1..=9); `None` when
    /// the library refuses to start one.
    pub fn new(algo: CompAlgo, level: u32) -> Option<Encoder> {
        let z = flate2::Compression::new(level.min(9));
        Some(match algo {
            CompAlgo::Identity => Encoder::Identity,
            CompAlgo::Gzip => Encoder::Gzip(flate2::write::GzEncoder::new(Vec::new(), z)),
            CompAlgo::Deflate => Encoder::Deflate(flate2::write::ZlibEncoder::new(Vec::new(), z)),
            CompAlgo::RawDeflate => Encoder::RawDeflate(flate2::write::DeflateEncoder::new(Vec::new(), z)),
            CompAlgo::Brotli => {
                let w = brotli::CompressorWriter::new(Vec::new(), 4096, level.min(11), BROTLI_LGWIN);
                Encoder::Brotli(Box::new(w))
            }
            CompAlgo::Zstd => Encoder::Zstd(zstd::stream::write::Encoder::new(Vec::new(), level as i32).ok()?),
        })
    }

    /// Compresses `data` and flushes; appends what can be sent to `out`. `Err`: the
    /// compressor failed (the response is then cut).
    pub fn push(&mut self, data: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
        match self {
            Encoder::Identity => {
                out.extend_from_slice(data);
                Ok(())
            }
            Encoder::Gzip(e) => write_flush(e, data).map(|()| out.append(e.get_mut())),
            Encoder::Deflate(e) => write_flush(e, data).map(|()| out.append(e.get_mut())),
            Encoder::RawDeflate(e) => write_flush(e, data).map(|()| out.append(e.get_mut())),
            Encoder::Brotli(e) => write_flush(&mut **e, data).map(|()| out.append(e.get_mut())),
            Encoder::Zstd(e) => write_flush(e, data).map(|()| out.append(e.get_mut())),
        }
    }

    /// Ends the stream (trailer, checksum); appends the last bytes to `out`.
    pub fn finish(self, out: &mut Vec<u8>) -> std::io::Result<()> {
        let rest = match self {
            Encoder::Identity => Vec::new(),
            Encoder::Gzip(e) => e.finish()?,
            Encoder::Deflate(e) => e.finish()?,
            Encoder::RawDeflate(e) => e.finish()?,
            Encoder::Brotli(e) => e.into_inner(),
            Encoder::Zstd(e) => e.finish()?,
        };
        out.extend_from_slice(&rest);
        Ok(())
    }
}

fn write_flush<W: Write>(w: &mut W, data: &[u8]) -> std::io::Result<()> {
    if !data.is_empty() {
        w.write_all(data)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn roundtrip(algo: CompAlgo, decode: impl Fn(&[u8]) -> Vec<u8>) {
        let mut e = Encoder::new(algo, 1).unwrap();
        let mut out = Vec::new();
        e.push(b"hello ", &mut out).unwrap();
        // each push is flushed: what came so far can be decoded already
        assert!(!out.is_empty());
        e.push(&[b'a'; 5000], &mut out).unwrap();
        e.finish(&mut out).unwrap();
        let mut want = b"hello ".to_vec();
        want.extend_from_slice(&[b'a'; 5000]);
        assert_eq!(decode(&out), want);
    }

    #[test]
    fn every_algorithm_round_trips() {
        let read = |mut r: Box<dyn Read + '_>| {
            let mut v = Vec::new();
            r.read_to_end(&mut v).unwrap();
            v
        };
        roundtrip(CompAlgo::Gzip, |b| read(Box::new(flate2::read::GzDecoder::new(b))));
        roundtrip(CompAlgo::Deflate, |b| read(Box::new(flate2::read::ZlibDecoder::new(b))));
        roundtrip(CompAlgo::RawDeflate, |b| read(Box::new(flate2::read::DeflateDecoder::new(b))));
        roundtrip(CompAlgo::Brotli, |b| read(Box::new(brotli::Decompressor::new(b, 4096))));
        roundtrip(CompAlgo::Zstd, |b| zstd::stream::decode_all(b).unwrap());
        roundtrip(CompAlgo::Identity, |b| b.to_vec());
    }
}
