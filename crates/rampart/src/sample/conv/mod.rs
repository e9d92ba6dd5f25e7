//! Converter keywords, one file per family, each ending with its `KEYWORDS` table.
//! HAProxy counterparts: src/sample.c (generic converters), src/http_conv.c,
//! src/map.c (map converters), src/vars.c (`set-var`).

use super::kw::ConvKw;

/// Every converter table, searched in order.
pub const ALL: &[&[ConvKw]] = &[crate::acl::map::KEYWORDS];

/// The converter named `name`.
pub fn find(name: &str) -> Option<&'static ConvKw> {
    ALL.iter().flat_map(|t| t.iter()).find(|k| k.name == name)
}
