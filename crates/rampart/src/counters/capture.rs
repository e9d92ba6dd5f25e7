//! The last invalid request each frontend refused, as `show errors` dumps it (the
//! capture itself is `stats::errors::capture`).

use std::net::SocketAddr;
use std::sync::atomic::AtomicU32;
use std::sync::Arc;
use std::time::SystemTime;

use arc_swap::ArcSwapOption;

/// The most bytes of a refused message kept (HAProxy keeps a buffer's worth).
pub const KEEP: usize = 16384;

/// One refused request.
#[derive(Debug)]
pub struct Capture {
    pub when: SystemTime,
    pub src: Option<SocketAddr>,
    /// The event number (all proxies, from 0).
    pub event: u32,
    /// Where the parser stopped, from the start of `bytes`.
    pub at: usize,
    pub bytes: Vec<u8>,
    /// `tune.bufsize`: the buffer the message was read into.
    pub bufsize: usize,
}

/// A frontend's last refused request (replaced whole: no lock).
#[derive(Debug, Default)]
pub struct LastError(pub ArcSwapOption<Capture>);

impl LastError {
    pub fn get(&self) -> Option<Arc<Capture>> {
        self.0.load_full()
    }
}

/// Events captured so far, all proxies (`Total events captured`).
#[derive(Debug, Default)]
pub struct Events(pub AtomicU32);
