//! `resolvers` sections and what servers ask of them (`resolvers`, `resolve-prefer`,
//! `resolve-net`, `resolve-opts`, `init-addr`).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use crate::span::Span;

/// The name of the section HAProxy 2.6 makes from `/etc/resolv.conf` when the
/// configuration has none of that name.
pub const DEFAULT_RESOLVERS: &str = "default";

/// A `resolvers <name>` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolvers {
    pub name: String,
    pub nameservers: Vec<Nameserver>,
    /// `accepted_payload_size` (512 by default; above 512 the queries carry EDNS0).
    pub accepted_payload_size: u16,
    /// `resolve_retries`: queries sent before a resolution fails (3).
    pub resolve_retries: u32,
    /// `timeout resolve`: how often resolutions are considered (1s).
    pub timeout_resolve: Duration,
    /// `timeout retry`: how long to wait for an answer before sending again (1s).
    pub timeout_retry: Duration,
    pub hold: Hold,
    /// The section 2.6 makes by itself from `/etc/resolv.conf` (`default`).
    pub implicit: bool,
    pub span: Span,
}

impl Resolvers {
    /// A section with HAProxy's defaults.
    pub fn new(name: &str, span: Span) -> Resolvers {
        let s30 = Duration::from_secs(30);
        Resolvers {
            name: name.to_owned(),
            nameservers: Vec::new(),
            accepted_payload_size: 512,
            resolve_retries: 3,
            timeout_resolve: Duration::from_secs(1),
            timeout_retry: Duration::from_secs(1),
            hold: Hold {
                nx: s30,
                other: s30,
                refused: s30,
                timeout: s30,
                valid: Duration::from_secs(10),
                obsolete: Duration::ZERO,
            },
            implicit: false,
            span,
        }
    }
}

/// `hold <status> <period>`: how long the last valid answer is kept after each kind of
/// failure (`valid`: how long a valid answer is trusted before asking again;
/// `obsolete`: how long an SRV entry missing from answers is kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hold {
    pub nx: Duration,
    pub other: Duration,
    pub refused: Duration,
    pub timeout: Duration,
    pub valid: Duration,
    pub obsolete: Duration,
}

/// `nameserver <name> <addr>:<port>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nameserver {
    pub name: String,
    pub addr: SocketAddr,
    /// `tcp@`: DNS over TCP (RFC 7766), else UDP.
    pub tcp: bool,
    /// Where it was declared (`/etc/resolv.conf` lines for `parse-resolv-conf`).
    pub file: String,
    pub line: usize,
}

/// One `init-addr` method, tried in order at startup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitAddr {
    /// `last`: the address a `server-state-file` kept.
    Last,
    /// `libc`: the system resolver.
    Libc,
    /// `none`: start without address, in maintenance until a resolution gives one.
    None,
    /// A fixed address.
    Ip(IpAddr),
}

/// A network of `resolve-net`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Net {
    pub addr: IpAddr,
    pub prefix: u8,
}

impl Net {
    /// Whether `ip` is inside (same family only).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.prefix)).unwrap_or(0);
                u32::from(n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(self.prefix)).unwrap_or(0);
                u128::from(n) & mask == u128::from(a) & mask
            }
            _ => false,
        }
    }
}

/// How a server follows DNS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerResolve {
    /// `resolvers <name>`: the section that keeps resolving the server's name at run
    /// time (none: resolved once at startup).
    pub resolvers: Option<String>,
    /// `resolve-prefer ipv4|ipv6` (HAProxy's default: ipv6).
    pub prefer_v6: bool,
    /// `resolve-net`: preferred networks, in order.
    pub nets: Vec<Net>,
    /// `resolve-opts allow-dup-ip` (else an address another server of the backend has
    /// is skipped).
    pub allow_dup_ip: bool,
    /// `resolve-opts ignore-weight`: SRV weights leave the server's weight alone.
    pub ignore_weight: bool,
    /// `init-addr` as written (empty: the default, `last,libc`, plus `none` with
    /// `resolvers`).
    pub init_addr: Vec<InitAddr>,
}

impl Default for ServerResolve {
    fn default() -> Self {
        ServerResolve {
            resolvers: None,
            prefer_v6: true,
            nets: Vec::new(),
            allow_dup_ip: false,
            ignore_weight: false,
            init_addr: Vec::new(),
        }
    }
}

/// A server's DNS name, when its address is one: what it resolves at startup and, with
/// `resolvers`, at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerFqdn {
    /// The name as written, without a final dot; one starting with `_` is an SRV
    /// request (`_http._tcp.web.example`) whose records give the servers of a
    /// `server-template` their names, ports and weights.
    pub name: String,
    /// The address failed to resolve at startup and `init-addr` allowed it: the server
    /// starts in maintenance (HAProxy's `SRV_ADMF_RMAINT`) until a resolution gives it
    /// an address.
    pub unresolved: bool,
    /// `server-template <prefix> <n>`: the server's number in its template (its name is
    /// the prefix then this number).
    pub template: Option<u32>,
}

impl ServerFqdn {
    /// An SRV request rather than a host name.
    pub fn is_srv(&self) -> bool {
        self.name.starts_with('_')
    }
}
