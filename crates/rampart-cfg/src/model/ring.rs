//! `ring` sections: named in-memory buffers of log lines, each optionally forwarded to
//! TCP syslog servers. HAProxy counterpart: `struct sink` and its forward proxy
//! (include/haproxy/sink-t.h), filled by `cfg_parse_ring()` (src/sink.c).

use std::net::SocketAddr;
use std::time::Duration;

use super::ServerTls;
use crate::span::Span;

/// A ring's size when the section gives none (HAProxy's `BUFSIZE`), which is also
/// the smallest `size` accepted and the default `maxlen`.
pub const RING_DEFAULT_SIZE: usize = 16384;

/// The names HAProxy reserves for its built-in sinks: a ring may not take them.
pub const BUILTIN_SINKS: &[&str] = &["stdout", "stderr", "buf0"];

/// One `ring <name>` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ring {
    pub name: String,
    /// `description`; the name when absent (as `show events` lists it).
    pub description: String,
    /// `format`: the syslog header written before each line (a `log` `format` word;
    /// `raw` by default).
    pub format: String,
    /// `maxlen`: lines are cut to this many bytes, header included (at most `size`).
    pub maxlen: usize,
    /// `size`: the buffer's bytes.
    pub size: usize,
    /// `timeout connect`; `None`: wait as long as the system does.
    pub timeout_connect: Option<Duration>,
    /// `timeout server`: how long a write to a server may wait; `None`: forever.
    pub timeout_server: Option<Duration>,
    /// `server` lines: where the lines are forwarded, in file order.
    pub servers: Vec<RingServer>,
    pub span: Span,
}

/// How lines are framed on a ring server's TCP connection (`log-proto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogProto {
    /// Each line followed by a line feed (HAProxy 2.6's default).
    #[default]
    Legacy,
    /// RFC 6587 octet counting: `<length> <line>`.
    OctetCount,
}

/// `server <name> <addr> [log-proto ...] [send-proxy|send-proxy-v2] [ssl ...]` in a `ring` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingServer {
    pub name: String,
    pub addr: SocketAddr,
    pub log_proto: LogProto,
    /// `send-proxy` (1) or `send-proxy-v2` (2): a PROXY header opens each connection;
    /// 0: none.
    pub send_proxy: u8,
    /// The TLS options of the line (`ssl`, `verify`, `ca-file`, `crt`, ...); the
    /// traffic is TLS when `tls.ssl`.
    pub tls: ServerTls,
    pub span: Span,
}
