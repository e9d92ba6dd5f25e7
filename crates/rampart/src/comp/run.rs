//! One response being compressed: its compressor, its level as the limits move it,
//! and the counting HAProxy does for it (`comp_in`, `comp_out`, `comp_byp`,
//! `comp_rsp` of the frontend and the backend, the process's compression rates).
//! HAProxy counterpart: `comp_http_payload()` and `comp_http_end()`
//! (src/flt_http_comp.c), the level moves of `deflate_flush_or_finish()`
//! (src/compression.c).

use std::sync::Arc;

use rampart_cfg::model::CompAlgo;

use super::encoder::Encoder;
use super::limit::{Level, Limits};
use crate::counters::stats::CompStats;

/// A response being compressed.
pub struct Compressing {
    enc: Encoder,
    level: Level,
    limits: Arc<Limits>,
    /// The frontend's and the backend's counters (the backend's: `None` without one).
    stats: [Option<Arc<CompStats>>; 2],
    /// Memory counted against `maxzlibmem` (what the compressor holds, as of its last
    /// block), given back on drop.
    mem: u64,
}

impl std::fmt::Debug for Compressing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressing").field("level", &self.level.cur).finish()
    }
}

impl Compressing {
    /// Starts compressing with `algo` at `level` (`tune.comp.maxlevel`); `None` when
    /// `maxzlibmem` leaves no room for the compressor as it starts or the library
    /// fails. (The rate and CPU limits are checked before, on the response head:
    /// [`Limits::allows_new`].) What it holds later (the fast encoder's window filling)
    /// is counted as it grows, never refused: a response is not cut half way.
    pub fn start(
        algo: CompAlgo,
        level: u32,
        limits: &Arc<Limits>,
        stats: [Option<Arc<CompStats>>; 2],
    ) -> Option<Compressing> {
        let enc = Encoder::new(algo, level)?;
        let mem = enc.mem();
        if !limits.reserve(mem) {
            return None;
        }
        // identity compresses nothing: its bytes count as bypassed, as HAProxy's
        let level = Level::new(if algo == CompAlgo::Identity { 0 } else { level });
        Some(Compressing { enc, level, limits: limits.clone(), stats, mem })
    }

    /// Compresses `data` (flushed) into `out`, counts it, then moves the level.
    pub fn push(&mut self, data: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
        let before = out.len();
        self.enc.push(data, out)?;
        self.recount();
        self.adjust();
        self.count(data.len() as u64, (out.len() - before) as u64);
        Ok(())
    }

    /// Ends the stream into `out`; the response counts as compressed (`comp_rsp`).
    pub fn finish(mut self, out: &mut Vec<u8>) -> std::io::Result<()> {
        let before = out.len();
        let enc = std::mem::replace(&mut self.enc, Encoder::Identity);
        enc.finish(out)?;
        self.count(0, (out.len() - before) as u64);
        for s in self.stats.iter().flatten() {
            s.responses.inc();
        }
        Ok(())
    }

    /// After a block: counts what the compressor holds now.
    fn recount(&mut self) {
        let now = self.enc.mem();
        if now != self.mem {
            self.limits.resize(self.mem, now);
            self.mem = now;
        }
    }

    /// After a block: one level lower while the limits are exceeded, one higher
    /// otherwise (gzip and deflate; brotli and zstd keep theirs).
    fn adjust(&mut self) {
        if !self.enc.has_levels() {
            return;
        }
        let mut next = self.level;
        if next.adjust(self.limits.over()) && self.enc.set_level(next.cur) {
            self.level = next;
        }
    }

    /// Counts `input` bytes that gave `output`: compressed, or bypassed at level 0.
    fn count(&self, input: u64, output: u64) {
        let compressed = self.level.cur > 0;
        if compressed {
            self.limits.count(input, output);
        }
        for s in self.stats.iter().flatten() {
            if compressed {
                s.bytes_in.add(input);
                s.bytes_out.add(output);
            } else {
                s.bypassed.add(input);
            }
        }
    }
}

impl Drop for Compressing {
    fn drop(&mut self) {
        self.limits.release(self.mem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats() -> Arc<CompStats> {
        crate::counters::stats::ProxyStats::new(&mut crate::counters::CounterSlab::new(1), false).fe_comp.clone()
    }

    #[test]
    fn counts_compressed_and_bypassed_bytes() {
        let limits = Arc::new(Limits::new(0, 0, 0));
        let st = stats();
        let mut c = Compressing::start(CompAlgo::Gzip, 1, &limits, [Some(st.clone()), None]).unwrap();
        let mut out = Vec::new();
        c.push(&[b'a'; 10_000], &mut out).unwrap();
        c.finish(&mut out).unwrap();
        assert_eq!(st.bytes_in.get(), 10_000);
        assert_eq!(st.bytes_out.get(), out.len() as u64);
        assert_eq!((st.bypassed.get(), st.responses.get()), (0, 1));
        assert!(limits.bps_in() >= 10_000);

        let mut id = Compressing::start(CompAlgo::Identity, 1, &limits, [Some(st.clone()), None]).unwrap();
        id.push(b"hello", &mut Vec::new()).unwrap();
        id.finish(&mut Vec::new()).unwrap();
        assert_eq!((st.bypassed.get(), st.responses.get()), (5, 2));
    }

    #[test]
    fn the_rate_limit_refuses_new_ones_and_lowers_running_ones() {
        let limits = Arc::new(Limits::new(1024, 0, 0));
        let st = stats();
        let mut c = Compressing::start(CompAlgo::Gzip, 1, &limits, [Some(st.clone()), None]).unwrap();
        let mut out = Vec::new();
        // incompressible-ish data: the output rate goes over the limit at once
        let data: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        // as HAProxy: the level moves on the rate before the block is counted, so the
        // first block is compressed and the next one, over the limit, bypassed
        c.push(&data, &mut out).unwrap();
        assert_eq!(c.level.cur, 1);
        assert_eq!(st.bytes_in.get(), data.len() as u64);
        c.push(b"more", &mut out).unwrap();
        assert_eq!(c.level.cur, 0, "level lowered after the second block");
        assert_eq!(st.bypassed.get(), 4);
        c.finish(&mut out).unwrap();
        let mut back = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&out[..]), &mut back).unwrap();
        assert_eq!(&back[..data.len()], &data[..]);
        assert_eq!(&back[data.len()..], b"more");
        assert!(!limits.allows_new());
    }

    #[test]
    fn maxzlibmem_counts_what_the_contexts_hold() {
        // a fast (level 1) context starts with its hash table, without window
        let unlimited = Arc::new(Limits::new(0, 0, 0));
        let fresh = Compressing::start(CompAlgo::Gzip, 1, &unlimited, [None, None]).unwrap().mem;
        assert!((64 * 1024..65 * 1024).contains(&fresh), "{fresh}");
        assert_eq!(unlimited.mem_used(), 0, "given back on drop");

        let limits = Arc::new(Limits::new(0, 0, 2 * fresh));
        let mut a = Compressing::start(CompAlgo::Deflate, 1, &limits, [None, None]).unwrap();
        let b = Compressing::start(CompAlgo::Gzip, 1, &limits, [None, None]).unwrap();
        assert_eq!(limits.mem_used(), 2 * fresh);
        assert!(Compressing::start(CompAlgo::Gzip, 1, &limits, [None, None]).is_none(), "no room");
        drop(b);
        // the window is counted as it fills, past the limit (a response is not cut)
        a.push(&[b'x'; 40_000], &mut Vec::new()).unwrap();
        assert!(a.mem >= fresh + 40_000, "{}", a.mem);
        assert_eq!(limits.mem_used(), a.mem);
        assert!(Compressing::start(CompAlgo::Gzip, 1, &limits, [None, None]).is_none());
        drop(a);
        assert_eq!(limits.mem_used(), 0);
        // a zlib context (levels above 1) counts what zlib allocates
        let z = Compressing::start(CompAlgo::Gzip, 6, &unlimited, [None, None]).unwrap();
        assert_eq!(unlimited.mem_used(), crate::comp::limit::DEFLATE_CTX_MEM);
        drop(z);
        // brotli and zstd are not zlib
        let br = Compressing::start(CompAlgo::Brotli, 1, &limits, [None, None]).unwrap();
        assert_eq!(limits.mem_used(), 0);
        drop(br);
    }
}
