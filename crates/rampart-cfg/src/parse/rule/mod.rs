//! Rule lines: `http-request`, `http-response`, `http-after-response`, `tcp-request`,
//! `tcp-response`, and the proxy keyword `redirect`. This file holds what they share: the
//! word cursor, the error kinds, conditions, sample-expression extent, variable names and
//! the rule-order warnings.
//!
//! HAProxy counterparts: `parse_http_req_cond()` & co (src/http_rules.c), the action
//! parsers of src/http_act.c, src/tcp_act.c, src/vars.c, src/stream.c, src/queue.c,
//! `tcp_parse_tcp_req()` (src/tcp_rules.c), `warnif_misplaced_*()`
//! (src/cfgparse-listen.c).
//!
//! - `http`: the three HTTP rule lists (dispatch, conditions, warnings)
//! - `http_act`: the HTTP actions' arguments
//! - `reply`: the reply arguments of `deny`, `tarpit`, `return` and `http-error`
//! - `redirect`: `redirect` (action and proxy keyword)
//! - `tcp`: `tcp-request` and `tcp-response`
//! - `vars`: `set-var(...)` names and conditions, `set-log-level`
//! - `sockopt`: `set-mark`, `set-tos` and HAProxy 3.x's `set-fc-mark`, `set-fc-tos`

mod http;
mod http_act;
mod redirect;
mod reply;
mod sockopt;
mod tcp;
#[cfg(test)]
mod tests;
pub(crate) mod vars;

pub(crate) use http::{parse_http_after_response, parse_http_request, parse_http_response};
pub(crate) use http_act::declare_capture;
pub(crate) use redirect::parse_redirect_keyword;
pub(crate) use reply::parse_reply;
pub(crate) use tcp::{parse_tcp_request, parse_tcp_response};
pub use vars::parse_var_name;

use crate::kw;
use crate::model::{Condition, ExprSrc, FmtSrc, RegexSrc};
use crate::span::Span;

use super::arg;
use super::ctx::Ctx;

/// Why an action's arguments were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ActErr {
    /// HAProxy's message for the arguments; the caller adds the rule's context.
    Invalid(String),
    /// Valid for HAProxy, not implemented by rampart: "'<what>' is not supported yet".
    NotYet(String),
}

pub(crate) type ActResult<T> = Result<T, ActErr>;

pub(crate) fn invalid<T>(msg: impl Into<String>) -> ActResult<T> {
    Err(ActErr::Invalid(msg.into()))
}

/// A cursor over the words of a rule line. HAProxy pads its argument array with empty
/// words, so reading past the end gives "".
pub(crate) struct Args<'w> {
    pub words: &'w [String],
    /// Index of the next word to read.
    pub at: usize,
    /// The line's span, for the text objects built from its words.
    pub span: &'w Span,
    /// Set by `redirect`, which reads its own `if`/`unless` (HAProxy's
    /// `http_parse_redirect_rule()` does).
    pub cond: Option<Option<Condition>>,
}

impl<'w> Args<'w> {
    pub fn new(words: &'w [String], at: usize, span: &'w Span) -> Self {
        Args { words, at, span, cond: None }
    }

    /// The word at the cursor plus `n`, or "".
    pub fn peek(&self, n: usize) -> &'w str {
        arg(self.words, self.at + n)
    }

    /// The word at the cursor, moving past it.
    pub fn next(&mut self) -> &'w str {
        let w = self.peek(0);
        self.at += 1;
        w
    }

    /// `true` when the word at the cursor plus `n` is missing, `if` or `unless`.
    pub fn ends_at(&self, n: usize) -> bool {
        matches!(self.peek(n), "" | "if" | "unless")
    }

    pub fn fmt(&self, text: &str) -> FmtSrc {
        FmtSrc { text: text.to_owned(), span: self.span.clone() }
    }

    pub fn regex(&self, text: &str) -> RegexSrc {
        RegexSrc { text: text.to_owned(), span: self.span.clone() }
    }

    /// A sample expression starting at the cursor: its first word, then every following
    /// word that starts with a converter name, as HAProxy's `sample_parse_expr()` reads
    /// them. An empty first word is HAProxy's "missing fetch method".
    pub fn expr(&mut self) -> ActResult<ExprSrc> {
        let first = self.next();
        if first.is_empty() {
            return invalid("missing fetch method");
        }
        let mut text = first.to_owned();
        while kw::starts_with_converter(self.peek(0)) {
            text.push(',');
            text.push_str(self.next());
        }
        Ok(ExprSrc { text, span: self.span.clone() })
    }

    /// A sample expression of exactly one word (actions that only step over one word).
    pub fn expr_word(&mut self) -> ActResult<ExprSrc> {
        let first = self.next();
        if first.is_empty() {
            return invalid("missing fetch method");
        }
        Ok(ExprSrc { text: first.to_owned(), span: self.span.clone() })
    }

    /// The optional `if|unless <cond>` at the cursor; `Err` carries the word found instead.
    pub fn condition(&self) -> Result<Option<Condition>, &'w str> {
        parse_condition(self.words, self.at, self.span)
    }
}

/// Reads an optional `if|unless <words...>` starting at `at`. `Err` carries the word
/// found instead of `if`/`unless`.
pub(crate) fn parse_condition<'w>(words: &'w [String], at: usize, span: &Span) -> Result<Option<Condition>, &'w str> {
    match arg(words, at) {
        "" => Ok(None),
        "if" | "unless" => {
            Ok(Some(Condition { negate: words[at] == "unless", words: words[at + 1..].to_vec(), span: span.clone() }))
        }
        other => Err(other),
    }
}

// === rule order ===

/// The rule lists HAProxy evaluates in a fixed order whatever the order of the lines,
/// from first evaluated to last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Stage {
    TcpConnection,
    TcpSession,
    TcpContent,
    MonitorFail,
    HttpRequest,
    Redirect,
    UseBackend,
    UseServer,
}

impl Stage {
    /// How HAProxy names the list in its warning: "placed after a '...' rule".
    fn label(self) -> &'static str {
        match self {
            Stage::TcpConnection => "tcp-request connection",
            Stage::TcpSession => "tcp-request session",
            Stage::TcpContent => "tcp-request content",
            Stage::MonitorFail => "monitor fail",
            Stage::HttpRequest => "http-request",
            Stage::Redirect => "redirect",
            Stage::UseBackend => "use_backend",
            Stage::UseServer => "use-server",
        }
    }

    fn has_rules(self, cx: &Ctx<'_>) -> bool {
        let px = &cx.pb.px;
        match self {
            Stage::TcpConnection => !px.rules.tcp_request_connection.is_empty(),
            Stage::TcpSession => !px.rules.tcp_request_session.is_empty(),
            Stage::TcpContent => !px.rules.tcp_request_content.is_empty(),
            Stage::MonitorFail => !px.monitor_fail.is_empty(),
            Stage::HttpRequest => !px.rules.http_request.is_empty(),
            Stage::Redirect => !px.redirects.is_empty(),
            Stage::UseBackend => !px.use_backends.is_empty(),
            Stage::UseServer => !px.use_servers.is_empty(),
        }
    }
}

/// HAProxy's `warnif_misplaced_*()`: warns when a rule of stage `me` (written `what`,
/// e.g. "tcp-request") comes after a rule of a later stage of the same section, naming
/// the first such stage. rampart adds a hint saying how to make the order explicit.
pub(crate) fn warn_misplaced(cx: &mut Ctx<'_>, me: Stage, what: &str) {
    const LATER: [Stage; 7] = [
        Stage::TcpSession,
        Stage::TcpContent,
        Stage::MonitorFail,
        Stage::HttpRequest,
        Stage::Redirect,
        Stage::UseBackend,
        Stage::UseServer,
    ];
    let Some(later) = LATER.into_iter().filter(|s| *s > me).find(|s| s.has_rules(cx)) else { return };
    let label = later.label();
    let article = if label.starts_with('h') { "an" } else { "a" };
    let msg = format!("a '{what}' rule placed after {article} '{label}' rule will still be processed before.");
    let hint = format!("move this '{what}' line above the '{label}' rules to make the order explicit.");
    cx.diags.push(crate::diag::Diag::warning(Some(cx.span.clone()), msg).with_hint(hint));
}
