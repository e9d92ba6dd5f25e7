//! Responses rampart builds itself and the sections they draw on: HTTP replies
//! (`deny`, `tarpit`, `return`, `http-error`), redirects, `http-errors` sections, and
//! `userlist` sections for `http-request auth`.
//!
//! HAProxy counterparts: `struct http_reply` (include/haproxy/http_htx-t.h),
//! `struct redirect_rule` (include/haproxy/http_ana-t.h), `struct http_errors`,
//! `struct userlist` (include/haproxy/auth-t.h).

use super::source::{Condition, FmtSrc};
use crate::span::Span;

/// An HTTP response described by the reply arguments (`status`, `content-type`,
/// `default-errorfiles`, `errorfile`, `errorfiles`, `string`, `lf-string`, `file`,
/// `lf-file`, `hdr`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpReply {
    /// 200..=599.
    pub status: u16,
    /// Kept only with a non-empty `Raw` or a `LogFormat` body (HAProxy drops it, with a
    /// warning, otherwise).
    pub content_type: Option<String>,
    /// `hdr <name> <fmt>` in order; never `content-length`, `transfer-encoding` or
    /// `content-type` (ignored with a warning), and empty with an error-file body.
    pub headers: Vec<(String, FmtSrc)>,
    pub body: ReplyBody,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyBody {
    /// Neither payload nor error file: a response with no body.
    Empty,
    /// `default-errorfiles` (and `deny`/`tarpit` without reply arguments): the proxy's
    /// error page for the status, or HAProxy's built-in one.
    DefaultErrorfile,
    /// `errorfile <file>`, or an `errorfiles <section>` page resolved after parsing: a
    /// complete raw HTTP/1 response, already checked.
    Errorfile(Vec<u8>),
    /// `errorfiles <section>` before resolution. A loaded configuration never holds it:
    /// the parser turns it into `Errorfile` or, when the section lacks the status (a
    /// warning), `DefaultErrorfile`.
    Errorfiles(String),
    /// `string <str>` or `file <path>` (read at parse time).
    Raw(Vec<u8>),
    /// `lf-string <fmt>` or `lf-file <path>` (the file's text).
    LogFormat(FmtSrc),
}

/// What a redirect builds its `Location` from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `location <loc>`: the whole location.
    Location,
    /// `prefix <pfx>`: prepended to the request URI.
    Prefix,
    /// `scheme <sch>`: replaces the scheme of the request.
    Scheme,
}

/// The destination of a redirect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedirectTarget {
    /// The proxy keyword `redirect` takes its destination literally.
    Literal(String),
    /// The `redirect` action reads it as a log-format string.
    Format(FmtSrc),
}

/// `redirect location|prefix|scheme <dst> [code <c>] [drop-query] [append-slash]
/// [ignore-empty] [set-cookie <c>] [clear-cookie <c>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub kind: RedirectKind,
    pub target: RedirectTarget,
    /// 301, 302 (default), 303, 307 or 308.
    pub code: u16,
    pub drop_query: bool,
    pub append_slash: bool,
    /// `ignore-empty`: no redirect when the destination evaluates empty (the rule is
    /// then not final).
    pub ignore_empty: bool,
    /// The `Set-Cookie` value to add, already completed as HAProxy does
    /// (`NAME=value; path=/;` or, for `clear-cookie`, `NAME; path=/; Max-Age=0;`).
    pub cookie: Option<String>,
}

/// A proxy-level `redirect ... [if|unless <cond>]` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedirectRule {
    pub redirect: Redirect,
    pub cond: Option<Condition>,
    pub span: Span,
}

/// An `http-errors <name>` section: `errorfile <code> <file>` lines, checked and loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpErrors {
    pub name: String,
    /// One page per status, the last `errorfile` for a status winning.
    pub pages: Vec<(u16, Vec<u8>)>,
    pub span: Span,
}

/// A `userlist <name>` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Userlist {
    pub name: String,
    pub groups: Vec<Group>,
    pub users: Vec<User>,
    pub span: Span,
}

/// `group <name> [users <user>,...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub name: String,
    /// The `users` list, each name checked to be a user of the same section.
    pub users: Vec<String>,
    pub span: Span,
}

/// `user <name> [password <crypt>|insecure-password <pw>] [groups <group>,...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub password: Option<Password>,
    /// The `groups` list, each name checked to be a group of the same section.
    pub groups: Vec<String>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Password {
    /// `password`: a crypt(3) hash (`$1$`, `$5$`, `$6$`, `$2b$`, `$y$`, DES...).
    Crypt(String),
    /// `insecure-password`: the clear text.
    Insecure(String),
}
