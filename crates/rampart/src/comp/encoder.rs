//! The compressors: one per algorithm, each taking body data as it arrives and giving
//! back what it can send now. Every call ends with a flush (zlib's `Z_SYNC_FLUSH`,
//! brotli's and zstd's flush), as HAProxy flushes at each forwarded block: what the
//! server sent reaches the client at once, so a streamed response (server-sent events,
//! LLM tokens) stays live.
//! gzip, deflate and raw-deflate run on rampart's own fast encoder (`comp::fast`, on
//! libslz's idea) at `tune.comp.maxlevel 1` (the default), where HAProxy built with
//! libslz compresses; at higher levels, on flate2 (zlib-rs), as HAProxy built with zlib.
//! HAProxy counterpart: the `comp_algo` callbacks of src/compression.c (`add_data`,
//! `flush`, `finish`), on libslz or zlib; rampart uses its own encoder or flate2 on
//! zlib-rs, brotli and zstd.

use std::io::Write;

use rampart_cfg::model::CompAlgo;

use super::fast::{FastDeflate, Wrap, GZIP_HEADER};

/// A compressor for one response body.
pub enum Encoder {
    Identity,
    /// gzip, deflate (zlib) and raw-deflate at level 1 (and 0 when the limits lower
    /// it): rampart's own encoder.
    Fast(Box<FastDeflate>),
    /// gzip, deflate (zlib) and raw-deflate at levels 2..=9: one zlib deflate stream,
    /// whose level may move.
    Flate(Box<Deflater>),
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
        let wrap = match algo {
            CompAlgo::Gzip => Wrap::Gzip,
            CompAlgo::Deflate => Wrap::Zlib,
            CompAlgo::RawDeflate => Wrap::Raw,
            _ => return Encoder::new_zlib(algo, level),
        };
        if level > 1 {
            return Encoder::new_zlib(algo, level);
        }
        Some(Encoder::Fast(Box::new(FastDeflate::new(wrap, level))))
    }

    /// [`Encoder::new`], with zlib (flate2) for gzip, deflate and raw-deflate at any
    /// level.
    pub fn new_zlib(algo: CompAlgo, level: u32) -> Option<Encoder> {
        let z = flate2::Compression::new(level.min(9));
        Some(match algo {
            CompAlgo::Identity => Encoder::Identity,
            CompAlgo::Gzip => Encoder::Flate(Box::new(Deflater::new(z, Wrap::Gzip))),
            CompAlgo::Deflate => Encoder::Flate(Box::new(Deflater::new(z, Wrap::Zlib))),
            CompAlgo::RawDeflate => Encoder::Flate(Box::new(Deflater::new(z, Wrap::Raw))),
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
            Encoder::Fast(e) => {
                e.push(data, out);
                Ok(())
            }
            Encoder::Flate(d) => d.push(data, out),
            Encoder::Brotli(e) => write_flush(&mut **e, data).map(|()| out.append(e.get_mut())),
            Encoder::Zstd(e) => write_flush(e, data).map(|()| out.append(e.get_mut())),
        }
    }

    /// Ends the stream (trailer, checksum); appends the last bytes to `out`.
    pub fn finish(self, out: &mut Vec<u8>) -> std::io::Result<()> {
        let rest = match self {
            Encoder::Identity => Vec::new(),
            Encoder::Fast(mut e) => {
                e.finish(out);
                return Ok(());
            }
            Encoder::Flate(mut d) => return d.finish(out),
            Encoder::Brotli(e) => e.into_inner(),
            Encoder::Zstd(e) => e.finish()?,
        };
        out.extend_from_slice(&rest);
        Ok(())
    }

    /// Moves the level to `level` (0: stored blocks) from the next data on, between
    /// two flushes; `false` when the algorithm keeps its level (identity, br, zstd).
    pub fn set_level(&mut self, level: u32) -> bool {
        match self {
            Encoder::Fast(e) => {
                e.set_level(level);
                true
            }
            Encoder::Flate(d) => d.c.set_level(flate2::Compression::new(level.min(9))).is_ok(),
            _ => false,
        }
    }

    /// The memory counted against `maxzlibmem` (`ZlibMemUsage`): what rampart's fast
    /// encoder holds now; for a zlib stream what zlib allocates at its defaults, as
    /// HAProxy's zlib builds count it. Brotli and zstd are not zlib: not counted.
    pub fn mem(&self) -> u64 {
        match self {
            Encoder::Fast(e) => e.mem(),
            Encoder::Flate(_) => super::limit::DEFLATE_CTX_MEM,
            _ => 0,
        }
    }

    /// Whether the level moves with the limits (gzip, deflate, raw-deflate).
    pub fn has_levels(&self) -> bool {
        matches!(self, Encoder::Fast(_) | Encoder::Flate(_))
    }
}

/// A deflate stream on flate2's `Compress` (zlib-rs), so that its level can move
/// between blocks as HAProxy's `deflateParams()` calls move it.
pub struct Deflater {
    c: flate2::Compress,
    wrap: Wrap,
    /// gzip: the CRC-32 and size of the data so far.
    crc: flate2::Crc,
    header_sent: bool,
}

impl Deflater {
    fn new(level: flate2::Compression, wrap: Wrap) -> Deflater {
        let c = flate2::Compress::new(level, wrap == Wrap::Zlib);
        Deflater { c, wrap, crc: flate2::Crc::new(), header_sent: false }
    }

    fn header(&mut self, out: &mut Vec<u8>) {
        if !self.header_sent && self.wrap == Wrap::Gzip {
            out.extend_from_slice(&GZIP_HEADER);
        }
        self.header_sent = true;
    }

    /// Compresses `data` with a sync flush.
    fn push(&mut self, data: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
        self.header(out);
        if self.wrap == Wrap::Gzip {
            self.crc.update(data);
        }
        self.run(data, flate2::FlushCompress::Sync, out)
    }

    /// Ends the stream, with gzip's trailer.
    fn finish(&mut self, out: &mut Vec<u8>) -> std::io::Result<()> {
        self.header(out);
        self.run(&[], flate2::FlushCompress::Finish, out)?;
        if self.wrap == Wrap::Gzip {
            out.extend_from_slice(&self.crc.sum().to_le_bytes());
            out.extend_from_slice(&self.crc.amount().to_le_bytes());
        }
        Ok(())
    }

    /// Feeds `input` with `flush` until it is consumed and flushed (the stream ended,
    /// for `Finish`).
    fn run(&mut self, mut input: &[u8], flush: flate2::FlushCompress, out: &mut Vec<u8>) -> std::io::Result<()> {
        loop {
            out.reserve(input.len() / 2 + 256);
            let before = self.c.total_in();
            let status = self.c.compress_vec(input, out, flush).map_err(std::io::Error::other)?;
            input = &input[(self.c.total_in() - before) as usize..];
            let room_left = out.len() < out.capacity();
            let done = match flush {
                flate2::FlushCompress::Finish => status == flate2::Status::StreamEnd,
                _ => input.is_empty() && room_left,
            };
            if done {
                return Ok(());
            }
        }
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
        for level in [1, 6] {
            roundtrip_at(algo, level, &decode);
        }
    }

    fn roundtrip_at(algo: CompAlgo, level: u32, decode: impl Fn(&[u8]) -> Vec<u8>) {
        let mut e = Encoder::new(algo, level).unwrap();
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

    #[test]
    fn level_one_takes_the_fast_encoder_and_higher_levels_zlib() {
        for algo in [CompAlgo::Gzip, CompAlgo::Deflate, CompAlgo::RawDeflate] {
            assert!(matches!(Encoder::new(algo, 1), Some(Encoder::Fast(_))));
            assert!(matches!(Encoder::new(algo, 2), Some(Encoder::Flate(_))));
            assert!(Encoder::new(algo, 1).unwrap().has_levels());
        }
    }
}
