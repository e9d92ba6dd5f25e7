//! Fetch keywords, one file per family, each ending with its `KEYWORDS` table.
//! HAProxy counterparts: src/tcp_sample.c, src/http_fetch.c, src/payload.c, src/sample.c.

use super::kw::FetchKw;

/// Every fetch table, searched in order.
pub const ALL: &[&[FetchKw]] = &[];

/// The fetch named `name`.
pub fn find(name: &str) -> Option<&'static FetchKw> {
    ALL.iter().flat_map(|t| t.iter()).find(|k| k.name == name)
}
