pub const KEYWORDS: &[crate::sample::kw::ConvKw] = &[];
