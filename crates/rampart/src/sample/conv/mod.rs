//! Converter keywords, one file per family, each ending with its `KEYWORDS` table.
//! HAProxy counterparts: src/sample.c (generic converters), src/http_conv.c,
//! src/map.c (map converters), src/vars.c (`set-var`).

use super::kw::ConvKw;

/// Every converter table, searched in order.
pub const ALL: &[&[ConvKw]] = &[super::vars::CONVERTERS, crate::acl::map::KEYWORDS];

/// The converter named `name`.
pub fn find(name: &str) -> Option<&'static ConvKw> {
    all().find(|k| k.name == name)
}

/// Every converter name, for did-you-mean suggestions.
pub fn names() -> impl Iterator<Item = &'static str> {
    all().map(|k| k.name)
}

fn all() -> impl Iterator<Item = &'static ConvKw> {
    ALL.iter().flat_map(|t| t.iter()).chain(TEST_ONLY.iter())
}

/// Converters the expression tests use whatever the tables hold.
#[cfg(test)]
const TEST_ONLY: &[ConvKw] = super::expr_tests::CONVERTERS;
#[cfg(not(test))]
const TEST_ONLY: &[ConvKw] = &[];
