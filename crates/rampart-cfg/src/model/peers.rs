//! `peers` sections: the nodes a stick table is replicated to, the local node's
//! listening address, and the tables declared in the section.
//!
//! HAProxy counterparts: `struct peers`, `struct peer` (include/haproxy/peers-t.h),
//! `cfg_parse_peers()` (src/cfgparse.c).

use std::net::SocketAddr;

use super::{BindSsl, ListenAddr, LogTarget, ServerTls, StickTableDef};
use crate::span::Span;

/// One `peers <name>` section.
#[derive(Debug, Clone)]
pub struct Peers {
    pub name: String,
    /// `disabled` (and not `enabled` after it): the section replicates nothing.
    pub disabled: bool,
    /// Its `peer` and `server` lines in file order, the local node's included.
    pub peers: Vec<Peer>,
    /// Index in [`Peers::peers`] of the local node (named after `-L`, `localpeer` or
    /// the host name). A section without one is removed at load (HAProxy warns).
    pub local: Option<usize>,
    /// Where the local node listens: its `peer` line's address, or the `bind` line's.
    pub bind: Option<PeersBind>,
    /// The tables declared by `table` lines (`<section>/<name>` elsewhere).
    pub tables: Vec<PeersTable>,
    /// Its `log` lines: where HAProxy 2.6 sends the section's operational messages (the
    /// `Paused proxy <local>.` and `Resumed ...` of SIGTTOU/SIGTTIN); no traffic is
    /// logged there.
    pub logs: Vec<LogTarget>,
    pub span: Span,
}

/// A `peer <name> <addr>` or `server <name> [<addr>]` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    pub name: String,
    /// `None`: a `server` line without an address (the local node with a `bind` line).
    pub addr: Option<SocketAddr>,
    /// The TLS options of the line over the section's `default-server` ones: how this
    /// node connects to a remote node (`ssl`, `crt`, `ca-file`, `verify` ...).
    pub tls: ServerTls,
    pub span: Span,
}

/// The local node's listening address.
#[derive(Debug, Clone)]
pub struct PeersBind {
    pub addr: ListenAddr,
    /// `backlog` of the `bind` or `default-bind` line.
    pub backlog: Option<u32>,
    /// The TLS options of the `bind` line over the `default-bind` ones (`ssl crt ...`:
    /// remote nodes connect over TLS).
    pub ssl: BindSsl,
    pub span: Span,
}

/// A `table <name> type ... size ...` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeersTable {
    /// The name in the section (what the peers protocol sends).
    pub name: String,
    pub def: StickTableDef,
}

impl Peers {
    /// The full name of table `t` (`<section>/<table>`), as rules and the CLI name it.
    pub fn table_id(&self, t: &PeersTable) -> String {
        format!("{}/{}", self.name, t.name)
    }
}
