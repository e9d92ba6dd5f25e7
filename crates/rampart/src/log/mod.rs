//! Logging. For now only the log-format language (`format`): strings compiled once
//! into segments and rendered per stream, which header rewrites, redirects, replies,
//! variables and dynamic backends use. The log lines, syslog sinks and termination
//! states come with the logging issue. HAProxy counterpart: src/log.c.
//!
//! - `format`: log-format strings, compiled and rendered
//! - `unique_id`: the stream's `unique-id-format` id, rendered on first use

pub mod format;
#[cfg(test)]
mod format_tests;
pub mod unique_id;

pub use format::{LfError, LfMode, LogFormat};
pub use unique_id::UniqueId;
