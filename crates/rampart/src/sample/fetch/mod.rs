//! Fetch keywords, one file per family, each ending with its `KEYWORDS` table.
//! HAProxy counterparts: src/tcp_sample.c, src/http_fetch.c, src/payload.c, src/sample.c.
//!
//! - `internal`: constants, `env`, `date`, `rand`, `var` and other internal state

pub mod internal;

use super::kw::FetchKw;

/// Every fetch table, searched in order.
pub const ALL: &[&[FetchKw]] = &[internal::KEYWORDS, super::vars::FETCHES];

/// The fetch named `name`.
pub fn find(name: &str) -> Option<&'static FetchKw> {
    ALL.iter().flat_map(|t| t.iter()).find(|k| k.name == name)
}

/// Every fetch name, for did-you-mean suggestions.
pub fn names() -> impl Iterator<Item = &'static str> {
    ALL.iter().flat_map(|t| t.iter()).map(|k| k.name)
}
