//! Logging: the log-format language (`format`: strings compiled once into segments
//! and rendered per stream, which header rewrites, redirects, replies, variables and
//! dynamic backends use too), the log targets (`target`) and how lines reach them
//! without blocking (`sink`), the dates (`date`), what a stream measures for its line
//! and the line itself (`stream_log`, `vars`), the per-proxy settings built at startup
//! (`setup`), and operational messages to the `global` logs ([`send_global`]).
//! HAProxy counterpart: src/log.c.
//!
//! - `format`: log-format strings, compiled and rendered
//! - `encode`: `%{+json}` and `%{+cbor}` values (HAProxy 3.x's encodings, an extension of 2.6)
//! - `target`: a `log` line resolved (address, facility, levels, len, format, sample)
//! - `sink`: sockets and the stdout/stderr writer, syslog headers, `DroppedLogs`
//! - `ring`: ring buffers (`ring` sections, `buf0`), `log ring@`, `show events`
//! - `ring_fwd`: each ring server's forwarder (TCP syslog, octet counting or LF)
//! - `batch`: a worker thread's datagram lines, sent with one `sendmmsg` per loop turn
//! - `date`: log dates, computed once per second per thread
//! - `stream_log`: [`StreamLog`] (timers, sizes, termination state) and [`emit`]
//! - `vars`: the `%` variables only a log line answers
//! - `setup`: the frontends' [`ProxyLog`] and the `global` loggers, built at startup
//! - `forward`: `log-forward` sections, syslog relays (UDP and TCP receivers)

pub mod batch;
pub mod date;
pub mod encode;
pub mod format;
#[cfg(test)]
mod format_tests;
pub mod forward;
#[cfg(test)]
mod line_tests;
pub mod ring;
pub mod ring_fwd;
pub mod setup;
pub mod sink;
pub mod stream_log;
pub mod target;
pub mod types;
pub mod vars;

pub use crate::sample::unique_id::{self, UniqueId};
pub use format::{LfError, LfMode, LogFormat};
pub use setup::{send_global, set_global};
pub use sink::dropped_logs;
pub use stream_log::{emit, Cause, LevelSet, Phase, ProxyLog, StreamLog};
pub use target::level;
