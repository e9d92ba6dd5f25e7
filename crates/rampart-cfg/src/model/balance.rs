//! `balance` and `hash-type`: how a backend picks its server.

use std::time::Duration;

/// `balance`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Balance {
    #[default]
    RoundRobin,
    StaticRr,
    LeastConn,
    First,
    Source,
    /// `uri [whole] [len N] [depth N] [path-only]` (0: no limit).
    Uri {
        whole: bool,
        path_only: bool,
        len: u32,
        depth: u32,
    },
    /// `url_param <name> [check_post]`.
    UrlParam {
        name: String,
        check_post: bool,
    },
    /// `hdr(<name>) [use_domain_only]`.
    Hdr {
        name: String,
        use_domain_only: bool,
    },
    /// `random[(<draws>)]` (2 draws by default).
    Random {
        draws: u32,
    },
    /// `rdp-cookie[(<name>)]`: the value of the RDP cookie `<name>` (`mstshash` by
    /// default) in a TCP stream's first bytes.
    RdpCookie {
        name: String,
    },
    /// `hash <expr>`: the expression text, compiled by the runtime.
    Hash {
        expr: String,
    },
    /// `peak-ewma [decay <time>]` (rampart extension; decay 10s by default).
    PeakEwma {
        decay: Duration,
    },
    /// `prefix-affinity [<expr>] [len <n>]` (rampart extension): the first `len` bytes
    /// of the sample (`req.body` and 256 by default) on a consistent ring with bounded
    /// load.
    PrefixAffinity {
        expr: String,
        len: u32,
    },
}

impl Balance {
    /// The algorithm's name as HAProxy's stats report it (`algo` column).
    pub fn name(&self) -> &'static str {
        match self {
            Balance::RoundRobin => "roundrobin",
            Balance::StaticRr => "static-rr",
            Balance::LeastConn => "leastconn",
            Balance::First => "first",
            Balance::Source => "source",
            Balance::Uri { .. } => "uri",
            Balance::UrlParam { .. } => "url_param",
            Balance::Hdr { .. } => "hdr",
            Balance::Random { .. } => "random",
            Balance::RdpCookie { .. } => "rdp-cookie",
            Balance::Hash { .. } => "hash",
            Balance::PeakEwma { .. } => "peak-ewma",
            Balance::PrefixAffinity { .. } => "prefix-affinity",
        }
    }

    /// Whether the algorithm hashes a key (`hash-type` applies).
    pub fn is_hash(&self) -> bool {
        matches!(
            self,
            Balance::Source
                | Balance::Uri { .. }
                | Balance::UrlParam { .. }
                | Balance::Hdr { .. }
                | Balance::RdpCookie { .. }
                | Balance::Hash { .. }
        )
    }
}

/// The function of `hash-type <method> <function>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HashFunc {
    #[default]
    Sdbm,
    Djb2,
    Wt6,
    Crc32,
}

/// `hash-type`: map-based sdbm by default; `consistent` alone adds `avalanche`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HashType {
    pub consistent: bool,
    pub func: HashFunc,
    pub avalanche: bool,
}
