//! HTTP compression (`compression algo|type|offload`), the `filter` lines of a proxy and
//! the `cache` sections its `cache-use` / `cache-store` rules and `filter cache` lines
//! name.
//!
//! HAProxy counterparts: `struct comp` (include/haproxy/compression-t.h), `struct
//! flt_conf` (filters-t.h), `struct cache` (src/cache.c); configuration.txt §4.2
//! `compression`, §6 (cache), §9 (filters).

use crate::span::Span;

/// An algorithm of `compression algo`. HAProxy 2.6 knows the first four; `br` and
/// `zstd` are rampart's own (docs/COMPATIBILITY.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompAlgo {
    /// No change to the data (debugging); no `Accept-Encoding` is needed.
    Identity,
    Gzip,
    /// The zlib format (`Content-Encoding: deflate`).
    Deflate,
    /// Deflate without the zlib wrapper, also announced as `deflate`.
    RawDeflate,
    /// Brotli (`br`, RFC 7932). Beyond HAProxy.
    Brotli,
    /// Zstandard (`zstd`, RFC 8878). Beyond HAProxy.
    Zstd,
}

impl CompAlgo {
    /// Every algorithm, in the order `-vv` lists them.
    pub const ALL: [CompAlgo; 6] =
        [CompAlgo::Identity, CompAlgo::Deflate, CompAlgo::RawDeflate, CompAlgo::Gzip, CompAlgo::Brotli, CompAlgo::Zstd];

    /// The algorithm a `compression algo` word names.
    pub fn from_cfg(word: &str) -> Option<CompAlgo> {
        CompAlgo::ALL.into_iter().find(|a| a.cfg_name() == word)
    }

    /// Its name in the configuration (and `res.comp_algo`).
    pub fn cfg_name(self) -> &'static str {
        match self {
            CompAlgo::Identity => "identity",
            CompAlgo::Gzip => "gzip",
            CompAlgo::Deflate => "deflate",
            CompAlgo::RawDeflate => "raw-deflate",
            CompAlgo::Brotli => "br",
            CompAlgo::Zstd => "zstd",
        }
    }

    /// The content-coding token clients name it by (`Accept-Encoding`,
    /// `Content-Encoding`).
    pub fn token(self) -> &'static str {
        match self {
            CompAlgo::Identity => "identity",
            CompAlgo::Gzip => "gzip",
            CompAlgo::Deflate | CompAlgo::RawDeflate => "deflate",
            CompAlgo::Brotli => "br",
            CompAlgo::Zstd => "zstd",
        }
    }
}

/// The `compression` lines of a proxy (or `defaults` section).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Compression {
    /// `compression algo`, in the order HAProxy keeps them: each line's words are
    /// pushed in front of the list (HAProxy's `comp_append_algo()` prepends), which
    /// decides which one `*` and equal q-values pick.
    pub algos: Vec<CompAlgo>,
    /// `compression type`: the content types to compress (prefixes, case-insensitive);
    /// empty: every type.
    pub types: Vec<String>,
    /// `compression offload`: remove `Accept-Encoding` from requests that will be
    /// compressed.
    pub offload: bool,
}

/// Options of `filter trace`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceFilter {
    /// `name <name>`: the prefix of its messages.
    pub name: Option<String>,
    /// `quiet`: no message.
    pub quiet: bool,
    /// `random-forwarding`: forward data in random amounts (tests the streaming).
    pub random_forwarding: bool,
    /// `hexdump`: dump the data forwarded.
    pub hexdump: bool,
}

/// A `filter` line of a proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterKind {
    /// `filter compression`.
    Compression,
    /// `filter cache <name>`: the cache (index into [`super::Config::caches`], filled
    /// by the cross-reference check).
    Cache { name: String, index: usize },
    /// `filter trace [name <name>] [random-forwarding] [hexdump]`.
    Trace(TraceFilter),
    /// `filter spoe [engine <name>] config <file>`.
    Spoe(Box<super::SpoeFilter>),
}

/// A `filter` line with where it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterDecl {
    pub kind: FilterKind,
    /// Declared by a `cache-use` / `cache-store` rule or by `compression` lines, not by
    /// a `filter` line.
    pub implicit: bool,
    pub span: Span,
}

/// A `cache <name>` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheSection {
    pub name: String,
    /// `total-max-size <megabytes>`, in bytes (mandatory, 1..=4095 MB).
    pub total_max_size: u64,
    /// `max-object-size <bytes>` (0: not set, a 256th of the total).
    pub max_object_size: u64,
    /// `max-age <seconds>` (default 60).
    pub max_age: u32,
    /// `process-vary on|off` (default off).
    pub process_vary: bool,
    /// `max-secondary-entries <number>` (default 10).
    pub max_secondary_entries: u32,
    pub span: Span,
}

impl CacheSection {
    /// The largest object stored: `max-object-size`, else a 256th of the cache.
    pub fn object_limit(&self) -> u64 {
        if self.max_object_size > 0 {
            self.max_object_size
        } else {
            self.total_max_size / 256
        }
    }
}
