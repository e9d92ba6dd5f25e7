//! Where a configuration object came from: file and line, for diagnostics.

use std::fmt;
use std::sync::Arc;

/// A file name and a 1-based line number. Cheap to clone (the name is shared).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Span {
    pub file: Arc<str>,
    pub line: u32,
}

impl Span {
    pub fn new(file: Arc<str>, line: u32) -> Self {
        Span { file, line }
    }
}

impl fmt::Display for Span {
    /// `file:line`, as inside HAProxy's `parsing [file:line]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}
