//! Responses rules build: `deny`, `tarpit`, `return` and `auth` replies, and
//! redirects. Each is written into the stream's built-response head, so that
//! `http-after-response` rules and the front mux treat it like any response.
//! HAProxy counterpart: `http_reply_to_htx()` (src/http_htx.c),
//! `http_apply_redirect_rule()` (src/http_ana.c), `http_reply_401()`.

use std::borrow::Cow;

use super::http::{Env, Exec};
use crate::errors::ErrorPages;
use crate::errors::StreamError;
use crate::http::{reason, MsgHead, ReplyTpl, Synth};
use crate::log::format::LogFormat;

/// A reply of `deny`, `tarpit`, `return`, `auth` or `http-error`.
#[derive(Debug)]
pub enum Reply {
    /// Fully known at startup (literal payload and headers, or an error file).
    Static(ReplyTpl),
    /// Headers or body given as log-formats, rendered per stream.
    Dynamic(DynReply),
    /// The error page of this status: the proxy's `errorfile`, else HAProxy's.
    Default(u16),
    /// `auth`: the 401 page with this `WWW-Authenticate` value.
    Auth(Box<[u8]>),
    /// An `errorfile` sent as it is, then the connection closes; empty: it closes
    /// without a response.
    Raw(Box<[u8]>),
}

/// A reply with log-format parts. The head is written as HAProxy writes it: the
/// `hdr` headers, then `content-length`, then `content-type`.
#[derive(Debug)]
pub struct DynReply {
    pub status: u16,
    pub headers: Vec<(Box<[u8]>, LogFormat)>,
    pub content_type: Option<Box<[u8]>>,
    /// `None`: no body (and no `content-length` for 204/304).
    pub body: Option<LogFormat>,
}

impl Reply {
    /// Writes the reply into the built-response slot.
    pub fn build<'rt>(&'rt self, x: &mut Exec<'_, 'rt>, ctx: &Env<'_>) {
        match self {
            Reply::Static(tpl) => *x.reply = Some(tpl.instantiate(x.out)),
            Reply::Default(status) => build_default(x, ctx, *status),
            Reply::Dynamic(d) => d.build(x, ctx),
            Reply::Raw(bytes) => *x.reply = Some(Synth::raw(bytes)),
            Reply::Auth(challenge) => {
                // `option http-use-proxy-header`: a proxied request is asked with a 407
                let proxied = crate::sample::fetch::auth::proxied(ctx.rt, ctx.fe, x.msg.view(x.buf));
                let (status, name): (u16, &[u8]) =
                    if proxied { (407, b"proxy-authenticate") } else { (401, b"www-authenticate") };
                build_default(x, ctx, status);
                if x.reply.as_ref().is_some_and(|r| !r.raw) {
                    let _ = x.out.add_header(name, challenge);
                }
            }
        }
    }
}

/// Writes the answer of the proxy for `status` into the built-response slot: the
/// `http-error` reply or `errorfile` of the proxy holding the rule, else the
/// frontend's, else HAProxy's page. A status without a page of its own gets the 500
/// one, as HAProxy does.
pub fn build_default<'rt>(x: &mut Exec<'_, 'rt>, ctx: &Env<'_>, status: u16) {
    let code = if crate::errors::KNOWN_CODES.contains(&status) { status } else { 500 };
    if let Some(r) = http_error(x.pages, code) {
        r.build(x, ctx);
        return;
    }
    *x.reply = Some(match default_page(x.pages, code) {
        StreamError::Page(tpl) => tpl.instantiate(x.out),
        StreamError::Raw(bytes) => Synth::raw(bytes),
        // an empty `errorfile`: the connection closes without a response
        StreamError::Nothing => Synth::raw(&[]),
    });
}

/// Where a proxy's default replies come from: its `http-error status <code>` replies
/// and its error pages (`errorfile`, `errorfiles`, HAProxy's).
#[derive(Debug, Clone, Copy)]
pub struct Pages<'a> {
    pub http_errors: &'a [(u16, Reply)],
    pub errors: &'a ErrorPages,
}

/// The `http-error status <code>` reply that answers `code` for a stream whose
/// replies come from `pages` (the first proxy with an `errorfile` or an `http-error`
/// for the code decides), if it is one.
pub fn http_error(pages: [Pages<'_>; 2], code: u16) -> Option<&Reply> {
    for px in pages {
        if let Some((_, r)) = px.http_errors.iter().find(|(c, _)| *c == code) {
            return Some(r);
        }
        if px.errors.is_custom(code) {
            return None;
        }
    }
    None
}

/// The page for `code`: the proxy's `errorfile`, else the frontend's, else HAProxy's.
fn default_page(pages: [Pages<'_>; 2], code: u16) -> StreamError<'_> {
    let custom = pages.iter().find(|p| p.errors.is_custom(code)).copied().unwrap_or(pages[0]);
    custom.errors.stream(code)
}

/// Starts a built head: `HTTP/1.1 <status> <reason>`, no header yet.
pub fn start_head(out: &mut MsgHead, status: u16, reason: &str) {
    out.reset();
    out.built = true;
    out.version = crate::http::Version::Http11;
    let _ = out.set_status(status, reason.as_bytes());
}

/// The reason phrase of a redirect: HAProxy writes these itself, in RFC 9110's words
/// (not its `http_get_reason` table, which says `302 Moved Temporarily`).
fn redirect_reason(code: u16) -> &'static str {
    match code {
        301 => "Moved Permanently",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        _ => "Found",
    }
}

impl DynReply {
    fn build(&self, x: &mut Exec<'_, '_>, ctx: &Env<'_>) {
        start_head(x.out, self.status, reason(self.status));
        for (name, fmt) in &self.headers {
            super::http::render(fmt, x, ctx);
            // as HAProxy (`http_reply_to_htx()`), a `hdr` whose value renders empty is left out
            if !x.scratch.is_empty() {
                let _ = x.out.add_header(name, x.scratch);
            }
        }
        let mut body = Vec::new();
        if let Some(fmt) = &self.body {
            // A reply built on a response: the server's response is gone by then, as in
            // HAProxy (its status or headers are absent).
            fmt.render(&ctx.bare_or(x.msg, x.buf, x.st), &mut body);
        }
        if self.body.is_some() || !matches!(self.status, 204 | 304) {
            let _ = x.out.add_header(b"content-length", body.len().to_string().as_bytes());
        }
        if let Some(ct) = &self.content_type {
            let _ = x.out.add_header(b"content-type", ct);
        }
        *x.reply = Some(Synth::built(Cow::Owned(body)));
    }
}

/// Where a redirect takes its `Location` from.
#[derive(Debug)]
pub enum RedirectTo {
    /// `location <fmt>`.
    Location(LogFormat),
    /// `prefix <fmt>`: prepended to the request's path.
    Prefix(LogFormat),
    /// `scheme <fmt>`: `<scheme>://<host><path>`.
    Scheme(LogFormat),
}

/// A compiled redirect (action or proxy rule).
#[derive(Debug)]
pub struct Redirect {
    pub to: RedirectTo,
    pub code: u16,
    pub drop_query: bool,
    pub append_slash: bool,
    pub ignore_empty: bool,
    /// The `Set-Cookie` value, already complete.
    pub cookie: Option<Box<[u8]>>,
}

impl Redirect {
    /// Builds the redirect; `false` when `ignore-empty` applies (no redirect).
    pub fn build<'rt>(&'rt self, x: &mut Exec<'_, 'rt>, ctx: &Env<'_>) -> bool {
        let mut location = Vec::with_capacity(128);
        match &self.to {
            RedirectTo::Location(fmt) => {
                fmt.render(&ctx.ctx(x.msg, x.buf, x.st), &mut location);
                if location.is_empty() && self.ignore_empty {
                    return false;
                }
            }
            RedirectTo::Prefix(fmt) => {
                fmt.render(&ctx.ctx(x.msg, x.buf, x.st), &mut location);
                if location.is_empty() && self.ignore_empty {
                    return false;
                }
                // As HAProxy, a prefix of "/" alone adds nothing.
                if location == b"/" {
                    location.clear();
                }
                self.push_path(x.msg.view(x.buf).uri(), &mut location);
            }
            RedirectTo::Scheme(fmt) => {
                fmt.render(&ctx.ctx(x.msg, x.buf, x.st), &mut location);
                if location.is_empty() && self.ignore_empty {
                    return false;
                }
                let view = x.msg.view(x.buf);
                location.extend_from_slice(b"://");
                location.extend_from_slice(view.first(b"host").unwrap_or_default());
                self.push_path(view.uri(), &mut location);
            }
        }
        start_head(x.out, self.code, redirect_reason(self.code));
        let _ = x.out.add_header(b"content-length", b"0");
        let _ = x.out.add_header(b"location", &location);
        if matches!(self.code, 302 | 303 | 307) {
            let _ = x.out.add_header(b"cache-control", b"no-cache");
        }
        if let Some(cookie) = &self.cookie {
            let _ = x.out.add_header(b"set-cookie", cookie);
        }
        // As HAProxy (`http_apply_redirect_rule`), a request with a body gets its
        // redirect on a connection that then closes: the body is not waited for.
        let close = ctx.dir == crate::sample::ctx::Dir::Request && x.msg.body != crate::http::BodyLen::None;
        *x.reply = Some(Synth { close, ..Synth::built(Cow::Borrowed(&[])) });
        true
    }

    /// Appends the request's path (and query unless `drop-query`), with a final `/`
    /// under `append-slash`.
    fn push_path(&self, uri: &[u8], out: &mut Vec<u8>) {
        let t = crate::http::uri::split(uri);
        let path = if t.pathq.is_empty() && !t.scheme.is_empty() { &b"/"[..] } else { t.path };
        out.extend_from_slice(path);
        if self.append_slash && !path.ends_with(b"/") {
            out.push(b'/');
        }
        if let (false, Some(q)) = (self.drop_query, t.query) {
            out.push(b'?');
            out.extend_from_slice(q);
        }
    }
}
