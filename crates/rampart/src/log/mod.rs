//! Logging. For now only the log-format language (`format`): strings compiled once
//! into segments and rendered per stream, which header rewrites, redirects, replies,
//! variables and dynamic backends use. The log lines, syslog sinks and termination
//! states come with the logging issue. HAProxy counterpart: src/log.c.

pub mod format;
#[cfg(test)]
mod format_tests;

pub use format::{LfError, LfMode, LogFormat};
