//! "Glitches" of an HTTP/2 client connection, as HAProxy 3.x counts them: events that
//! are not always protocol errors but that a well-behaved client seldom causes (a
//! stream reset before its response, a frame on a closed stream, a stream past the
//! limit, a header block cut into many small CONTINUATION frames ...). Past the
//! threshold the connection ends with GOAWAY ENHANCE_YOUR_CALM. `fc_glitches` reads
//! the count. HAProxy counterpart: `h2c_report_glitch()` in mux_h2.c (3.0 and later).
//!
//! Beside HAProxy's events, rampart counts floods of frames that carry no request
//! (SETTINGS, PING, PRIORITY, small WINDOW_UPDATE, empty DATA): each is "overhead",
//! a new stream pays some back, and every [`OVERHEAD_PER_GLITCH`] frames of overhead
//! count one glitch.
//!
//! PERF: a frame costs at most an integer increment here; the shared count that
//! `fc_glitches` reads is written only when a glitch happens.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use rampart_proto::h2::ErrorCode;

/// The threshold without `tune.h2.fe.glitches-threshold` (HAProxy: none). A rapid
/// reset (CVE-2023-44487) costs a glitch per stream: a connection gets this many
/// streams reset before their response, then GOAWAY ENHANCE_YOUR_CALM, so an attacker
/// must open a new connection (a new handshake) for every thousand streams, as it
/// would pipeline HTTP/1 requests. A browser cancels a few streams per page.
pub const DEFAULT_THRESHOLD: u32 = 1000;

/// Frames of overhead (control frames, empty DATA) that count one glitch.
pub const OVERHEAD_PER_GLITCH: u32 = 100;

/// Overhead a new stream pays back (a browser sends a few PRIORITY and WINDOW_UPDATE
/// frames per request).
pub const OVERHEAD_PAID_PER_STREAM: u32 = 20;

/// A WINDOW_UPDATE smaller than this is overhead (clients credit what they read in
/// batches; a flood credits a byte at a time).
pub const SMALL_WINDOW_UPDATE: u32 = 1024;

/// The glitches of one connection.
#[derive(Debug)]
pub struct Glitches {
    count: u32,
    /// 0: no limit (`tune.h2.fe.glitches-threshold 0`, as in HAProxy).
    threshold: u32,
    /// Overhead frames since the last glitch they counted, less what streams paid.
    overhead: u32,
    /// What `fc_glitches` reads (the connection's streams hold it too).
    shared: Arc<AtomicU32>,
}

impl Glitches {
    /// `configured`: `tune.h2.fe.glitches-threshold`, `None` when not set.
    pub fn new(configured: Option<u32>, shared: Arc<AtomicU32>) -> Glitches {
        Glitches { count: 0, threshold: configured.unwrap_or(DEFAULT_THRESHOLD), overhead: 0, shared }
    }

    /// The glitches so far.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Counts `n` glitches; `Err(ENHANCE_YOUR_CALM)` once the threshold is reached
    /// (the connection then ends).
    pub fn report(&mut self, n: u32) -> Result<(), ErrorCode> {
        self.count = self.count.saturating_add(n);
        self.shared.store(self.count, Ordering::Relaxed);
        if self.threshold != 0 && self.count >= self.threshold {
            return Err(ErrorCode::EnhanceYourCalm);
        }
        Ok(())
    }

    /// A frame that carries no request (a control frame, an empty DATA).
    pub fn overhead(&mut self) -> Result<(), ErrorCode> {
        self.overhead += 1;
        if self.overhead >= OVERHEAD_PER_GLITCH {
            self.overhead = 0;
            return self.report(1);
        }
        Ok(())
    }

    /// A new stream: it pays back some overhead.
    pub fn stream_opened(&mut self) {
        self.overhead = self.overhead.saturating_sub(OVERHEAD_PAID_PER_STREAM);
    }

    /// A header block of `frames` frames and `len` bytes so far: more than 4 frames
    /// of less than 1 KiB each on average is a glitch per 16 frames (HAProxy counts
    /// the same once the block is whole); called for each CONTINUATION frame.
    pub fn continuation(&mut self, frames: u32, len: usize) -> Result<(), ErrorCode> {
        if frames > 4 && frames as usize > len / 1024 && frames.is_multiple_of(16) {
            return self.report(1);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glitches(threshold: Option<u32>) -> (Glitches, Arc<AtomicU32>) {
        let shared = Arc::new(AtomicU32::new(0));
        (Glitches::new(threshold, shared.clone()), shared)
    }

    #[test]
    fn the_threshold_ends_the_connection_and_the_count_is_shared() {
        let (mut g, shared) = glitches(Some(3));
        assert_eq!(g.report(1), Ok(()));
        assert_eq!(g.report(1), Ok(()));
        assert_eq!(shared.load(Ordering::Relaxed), 2);
        assert_eq!(g.report(1), Err(ErrorCode::EnhanceYourCalm));
        assert_eq!(g.count(), 3);
        assert_eq!(shared.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn without_the_keyword_the_builtin_bound_applies_and_zero_means_no_limit() {
        let (mut g, _) = glitches(None);
        for _ in 1..DEFAULT_THRESHOLD {
            assert_eq!(g.report(1), Ok(()));
        }
        assert_eq!(g.report(1), Err(ErrorCode::EnhanceYourCalm));
        let (mut g, _) = glitches(Some(0));
        assert_eq!(g.report(1_000_000), Ok(()));
        assert_eq!(g.count(), 1_000_000);
    }

    #[test]
    fn overhead_counts_a_glitch_per_hundred_frames_and_streams_pay_it_back() {
        let (mut g, _) = glitches(Some(2));
        for _ in 0..OVERHEAD_PER_GLITCH - 1 {
            g.overhead().unwrap();
        }
        assert_eq!(g.count(), 0);
        g.overhead().unwrap();
        assert_eq!(g.count(), 1);
        // a browser: a few control frames per request never adds up
        for _ in 0..10_000 {
            for _ in 0..OVERHEAD_PAID_PER_STREAM {
                g.overhead().unwrap();
            }
            g.stream_opened();
        }
        assert_eq!(g.count(), 1);
        for _ in 0..OVERHEAD_PER_GLITCH - 1 {
            g.overhead().unwrap();
        }
        assert_eq!(g.overhead(), Err(ErrorCode::EnhanceYourCalm));
    }

    #[test]
    fn continuation_frames_count_as_haproxy_counts_them() {
        let (mut g, _) = glitches(None);
        // large fragments: never
        for frames in 1..=64 {
            g.continuation(frames, frames as usize * 16384).unwrap();
        }
        assert_eq!(g.count(), 0);
        // 1-byte fragments: one glitch every 16 frames
        for frames in 1..=160 {
            g.continuation(frames, frames as usize).unwrap();
        }
        assert_eq!(g.count(), 10);
    }
}
