//! Configuration diagnostics, printed the way HAProxy prints them (src/errors.c):
//!
//! ```text
//! [ALERT]    (4121) : config : parsing [rampart.cfg:42] : unknown keyword 'balanse' in 'backend' section; did you mean 'balance' maybe ?
//!   hint: ...
//! ```
//! Keyword parsers return a message without location; the section dispatcher attaches the
//! [`Span`]. Parsing goes on after an error so that every problem is reported at once.

use std::fmt::Write as _;

use crate::span::Span;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `.diag` (only shown with `-dD` in HAProxy; kept for completeness).
    Diag,
    Notice,
    Warning,
    /// Printed as an alert but does not fail the load: HAProxy's `ha_alert()` with
    /// only `ERR_WARN` set (a named `defaults` used both explicitly and implicitly).
    /// Unlike a warning, it does not count for "Warnings were found." nor `-dW`.
    SoftAlert,
    Alert,
}

impl Level {
    /// The bracketed tag padded as HAProxy pads it (`[ALERT]    `, `[WARNING]  `, `[NOTICE]   `).
    pub fn tag(self) -> &'static str {
        match self {
            Level::Diag => "[DIAG]     ",
            Level::Notice => "[NOTICE]   ",
            Level::Warning => "[WARNING]  ",
            Level::SoftAlert | Level::Alert => "[ALERT]    ",
        }
    }
}

/// One message about the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    pub level: Level,
    pub span: Option<Span>,
    pub message: String,
    /// Extra lines printed as `  hint: ...` under the message.
    pub hints: Vec<String>,
    /// `true` for `.notice/.warning/.alert/.diag` directives, which HAProxy prints as
    /// `parsing [file:line]: 'text'.` (no space before the colon).
    pub directive: bool,
}

impl Diag {
    pub fn alert(span: Option<Span>, message: impl Into<String>) -> Self {
        Diag { level: Level::Alert, span, message: message.into(), hints: Vec::new(), directive: false }
    }
    pub fn warning(span: Option<Span>, message: impl Into<String>) -> Self {
        Diag { level: Level::Warning, span, message: message.into(), hints: Vec::new(), directive: false }
    }
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// Renders the diagnostic, one or more lines each ending in `\n`.
    pub fn render(&self, pid: u32) -> String {
        let mut out = String::new();
        let _ = write!(out, "{}({}) : config : ", self.level.tag(), pid);
        match (&self.span, self.directive) {
            (Some(span), true) => {
                let _ = write!(out, "parsing [{span}]: '{}'.", self.message);
            }
            (Some(span), false) => {
                let _ = write!(out, "parsing [{span}] : {}", self.message);
            }
            (None, _) => out.push_str(&self.message),
        }
        out.push('\n');
        for hint in &self.hints {
            let _ = writeln!(out, "  hint: {hint}");
        }
        out
    }
}

/// Collected diagnostics of one load.
#[derive(Debug, Clone, Default)]
pub struct Diags {
    pub list: Vec<Diag>,
}

impl Diags {
    pub fn push(&mut self, d: Diag) {
        self.list.push(d);
    }
    pub fn alert(&mut self, span: &Span, message: impl Into<String>) {
        self.push(Diag::alert(Some(span.clone()), message));
    }
    pub fn warning(&mut self, span: &Span, message: impl Into<String>) {
        self.push(Diag::warning(Some(span.clone()), message));
    }
    pub fn has_alerts(&self) -> bool {
        self.list.iter().any(|d| d.level == Level::Alert)
    }
}

/// HAProxy's message for a word past what a keyword takes.
pub(crate) fn too_many_args(what: &str, extra: &str) -> String {
    format!("'{what}' cannot handle unexpected argument '{extra}'.")
}
