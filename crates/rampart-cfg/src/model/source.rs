//! Configuration text kept as written, with its line, for the daemon's engines to compile:
//! sample expressions ([`ExprSrc`]), log-format strings ([`FmtSrc`]), regexes
//! ([`RegexSrc`]) and `if`/`unless` conditions ([`Condition`]). Used by the rules (`rules`)
//! and by the replies and redirects (`reply`).

use crate::span::Span;

/// A sample expression as written, e.g. `req.hdr(host),lower`. When the configuration
/// spreads converters over several words (`req.hdr(host) lower`, which HAProxy accepts),
/// the words are joined with `,`, which HAProxy reads the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprSrc {
    pub text: String,
    pub span: Span,
}

/// A log-format string as written (`%[src]:%{+Q}r ...`), compiled by the daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FmtSrc {
    pub text: String,
    pub span: Span,
}

/// A regular expression as written (HAProxy's PCRE syntax), compiled by the daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegexSrc {
    pub text: String,
    pub span: Span,
}

/// An `if`/`unless` condition, held as words until the ACL engine compiles it. The words
/// may be empty (`... if` alone), which HAProxy accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// `true` for `unless`.
    pub negate: bool,
    pub words: Vec<String>,
    pub span: Span,
}
