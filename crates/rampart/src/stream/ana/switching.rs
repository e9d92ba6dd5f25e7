//! Backend switching: the backend a request goes to (`use_backend` rules, else
//! `default_backend`, else the proxy itself for a `listen`).
//! HAProxy counterpart: `process_switching_rules()` (src/stream.c).

use crate::stream::Stream;

/// The backend of this stream; `None` when the frontend has none (503).
pub fn run(s: &mut Stream<'_>) -> Option<usize> {
    s.rt.proxies[s.fe].fe.backend
}
