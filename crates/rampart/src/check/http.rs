//! HTTP checks: the request of a `send` rule (`option httpchk`, `http-check send`),
//! rendered as HAProxy's H1 mux writes it, and the evaluation of an `http-check
//! expect` rule on the response read so far (status, status regex, headers, body).
//! Pure functions: the engine (`tcpcheck`) reads, writes and gives the sample context.
//! HAProxy counterparts: the `TCPCHK_SEND_HTTP` case of `tcpcheck_eval_send()`,
//! `tcpcheck_eval_expect_http()` (src/tcpcheck.c).

use rampart_cfg::model::{HdrMeth, HttpSend};
use rampart_proto::h1::{self, Framing, Head};
use rampart_proto::http::Method;

use super::rules::{Expect, HdrPat, HdrRule, Matcher};
use super::status::CheckStatus;
use crate::http::{MsgHead, MsgView};
use crate::log::format::LogFormat;
use crate::sample::SampleCtx;

/// A part of the request: fixed, or a log-format string rendered per check.
#[derive(Debug)]
enum Part {
    Text(Vec<u8>),
    Lf(LogFormat),
}

impl Part {
    fn render(&self, ctx: &SampleCtx<'_>, out: &mut Vec<u8>) {
        match self {
            Part::Text(t) => out.extend_from_slice(t),
            Part::Lf(f) => f.render(ctx, out),
        }
    }
}

/// The request of a `send` rule, compiled.
#[derive(Debug)]
pub(super) struct HttpReq {
    meth: String,
    method: Method,
    uri: Option<Part>,
    ver: String,
    /// Names lowercased; values are log-format strings (as in HAProxy).
    hdrs: Vec<(String, Part)>,
    body: Option<Part>,
}

impl HttpReq {
    /// Compiles a request; `lf` compiles a log-format string (its error is the
    /// rule's).
    pub fn compile(
        s: &HttpSend,
        lf: &mut dyn FnMut(&str, &str) -> Result<LogFormat, String>,
    ) -> Result<HttpReq, String> {
        let meth = s.meth.clone().unwrap_or_else(|| "OPTIONS".into());
        let mut part = |text: &Option<String>, is_lf: bool, what: &str| -> Result<Option<Part>, String> {
            Ok(match text {
                None => None,
                Some(t) if is_lf => Some(Part::Lf(lf(t, what)?)),
                Some(t) => Some(Part::Text(rampart_cfg::lexer::raw_bytes(t.as_bytes()).into_owned())),
            })
        };
        let uri = part(&s.uri, s.uri_lf, "send")?;
        let body = part(&s.body, s.body_lf, "send")?;
        let hdrs = s
            .hdrs
            .iter()
            .map(|(n, v)| Ok((n.to_ascii_lowercase(), Part::Lf(lf(v, "send")?))))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(HttpReq {
            method: Method::from_bytes(meth.as_bytes()),
            meth,
            uri,
            ver: s.ver.clone().unwrap_or_else(|| "HTTP/1.0".into()),
            hdrs,
            body,
        })
    }

    /// The method, for reading the response (no body after a HEAD).
    pub fn method(&self) -> Method {
        self.method
    }

    /// The request bytes: the request line, the configured headers (those rendering
    /// empty are left out), `x-haproxy-server-state` with `send-state`,
    /// `content-length` with a body or a method other than GET/HEAD/OPTIONS/DELETE,
    /// and `connection: close` in HTTP/1.1 unless a `connection` header was given.
    pub fn render(&self, ctx: &SampleCtx<'_>, state: Option<&str>) -> Vec<u8> {
        self.render_as(ctx, state, &self.ver)
    }

    /// The request for an HTTP/2 connection (`check::h2` translates it): as
    /// [`HttpReq::render`], in HTTP/1.0 so that an HTTP/1.1 request line without a
    /// `host` header still reads (HTTP/2 then sends no `:authority`).
    pub fn render_for_h2(&self, ctx: &SampleCtx<'_>, state: Option<&str>) -> Vec<u8> {
        self.render_as(ctx, state, "HTTP/1.0")
    }

    fn render_as(&self, ctx: &SampleCtx<'_>, state: Option<&str>, ver: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(self.meth.as_bytes());
        out.push(b' ');
        let uri_at = out.len();
        if let Some(u) = &self.uri {
            u.render(ctx, &mut out);
        }
        if out.len() == uri_at {
            out.push(b'/');
        }
        out.push(b' ');
        out.extend_from_slice(ver.as_bytes());
        out.extend_from_slice(b"\r\n");
        let mut conn_hdr = false;
        let mut value = Vec::new();
        for (name, v) in &self.hdrs {
            value.clear();
            v.render(ctx, &mut value);
            if value.is_empty() {
                continue;
            }
            conn_hdr |= name == "connection";
            header(&mut out, name.as_bytes(), &value);
        }
        if let Some(s) = state {
            header(&mut out, b"x-haproxy-server-state", s.as_bytes());
        }
        let mut body = Vec::new();
        if let Some(b) = &self.body {
            b.render(ctx, &mut body);
        }
        let bodyless = matches!(self.method, Method::Options | Method::Get | Method::Head | Method::Delete);
        if !bodyless || !body.is_empty() {
            header(&mut out, b"content-length", body.len().to_string().as_bytes());
        }
        if is_v11(ver) && !conn_hdr {
            header(&mut out, b"connection", b"close");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&body);
        out
    }
}

fn header(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// HAProxy's test for an HTTP/1.1 request line: `HTTP/2`, or `HTTP/x.y` from 1.1 on.
fn is_v11(ver: &str) -> bool {
    let v = ver.as_bytes();
    match v.len() {
        6 => v[5] == b'2',
        8 => v[5] > b'1' || (v[5] == b'1' && v[7] >= b'1'),
        _ => false,
    }
}

// === the response ===

/// The response read so far.
#[derive(Debug)]
pub(super) enum Resp {
    /// The head is not complete yet.
    Incomplete,
    /// Not an HTTP response.
    Invalid,
    /// The head, and the body data read so far (`complete`: the whole message).
    Ready { body: Vec<u8>, complete: bool },
}

/// Parses `buf` into `msg` (the head); `method` is the request's; `last`: no more
/// bytes will come.
pub(super) fn parse_response(buf: &[u8], method: Method, last: bool, msg: &mut MsgHead) -> Resp {
    let mut head = Head::default();
    // the caller bounds the buffer: the head may take all of it
    match h1::parse_response(buf, buf.len() + 1, method, &mut head) {
        Ok(true) => {}
        Ok(false) => return Resp::Incomplete,
        Err(_) => return Resp::Invalid,
    }
    crate::h1::msg::fill(msg, &head);
    let (body, complete) = body(&buf[head.len..], head.framing, last);
    Resp::Ready { body, complete }
}

/// What an HTTP expect rule made of the response.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Pass,
    /// More bytes are needed.
    Wait,
    /// The rule failed: status and `info` before the rule's own message and comment.
    Fail(CheckStatus, String),
}

/// Where an HTTP expect looks.
pub(super) struct Seen<'a, 'c> {
    pub msg: MsgView<'a>,
    pub body: &'a [u8],
    /// No more bytes will come (closed, buffer full, or the whole message read).
    pub last: bool,
    pub ctx: &'a SampleCtx<'c>,
}

/// Evaluates HTTP expect rule `e` on a response whose head is known.
pub(super) fn eval_expect(e: &Expect, r: &Seen<'_, '_>) -> Verdict {
    let reason = || String::from_utf8_lossy(r.msg.reason()).into_owned();
    let fail_sts = |desc: String| Verdict::Fail(e.err_status.unwrap_or(CheckStatus::L7Sts), desc);
    let matched = match &e.matcher {
        Matcher::Status(ranges) => ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&r.msg.head.status)),
        Matcher::Rstatus(re) => re.is_match(r.msg.head.status.to_string().as_bytes()),
        Matcher::Header(h) => match header_match(h, r) {
            Ok(m) => m,
            Err(desc) => return Verdict::Fail(CheckStatus::L7Rsp, desc.into()),
        },
        _ => return body_expect(e, r),
    };
    if matched != e.inverse {
        Verdict::Pass
    } else {
        fail_sts(if matches!(e.on_error, super::rules::Msg::Lf(_)) { String::new() } else { reason() })
    }
}

/// The body rules: `string`, `rstring`, `string-lf`.
fn body_expect(e: &Expect, r: &Seen<'_, '_>) -> Verdict {
    let status = e.err_status.unwrap_or(CheckStatus::L7Rsp);
    let own_msg = matches!(e.on_error, super::rules::Msg::Lf(_));
    let desc = |d: &str| if own_msg { String::new() } else { d.to_owned() };
    if r.body.is_empty() {
        if !r.last {
            return Verdict::Wait;
        }
        return Verdict::Fail(status, desc("HTTP content check could not find a response body"));
    }
    let mut rendered = Vec::new();
    if let Matcher::BodyLf(f) = &e.matcher {
        f.render(r.ctx, &mut rendered);
        if rendered.is_empty() {
            return Verdict::Fail(CheckStatus::L7Rsp, "log-format string evaluated to an empty string".into());
        }
    }
    let need = match &e.matcher {
        Matcher::Body(s) => s.len(),
        Matcher::BodyLf(_) => rendered.len(),
        _ => 0,
    };
    if !r.last && (r.body.len() < need || e.min_recv.is_some_and(|m| m > 0 && r.body.len() < m)) {
        return Verdict::Wait;
    }
    let matched = match &e.matcher {
        Matcher::Body(s) => memchr::memmem::find(r.body, s).is_some(),
        Matcher::BodyLf(_) => memchr::memmem::find(r.body, &rendered).is_some(),
        Matcher::Rbody(re) => re.is_match(r.body),
        _ => false,
    };
    // without min-recv, a mismatch waits for more of the body
    if !matched && !r.last && e.min_recv.is_none() {
        return Verdict::Wait;
    }
    if matched != e.inverse {
        return Verdict::Pass;
    }
    let text = if e.inverse { "HTTP check matched unwanted content" } else { "HTTP content check did not match" };
    Verdict::Fail(status, desc(text))
}

/// Whether a header matches `h`; `Err` when a log-format pattern renders empty.
fn header_match(h: &HdrRule, r: &Seen<'_, '_>) -> Result<bool, &'static str> {
    const EMPTY: &str = "log-format string evaluated to an empty string";
    let render = |p: &HdrPat| -> Result<Option<(HdrMeth, Vec<u8>)>, &'static str> {
        Ok(match p {
            HdrPat::Text(how, t) => Some((*how, t.clone())),
            HdrPat::Lf(how, f) => {
                let mut out = Vec::new();
                f.render(r.ctx, &mut out);
                if out.is_empty() {
                    return Err(EMPTY);
                }
                Some((*how, out))
            }
            HdrPat::Reg(_) => None,
        })
    };
    let name = render(&h.name)?;
    let value = h.value.as_ref().map(|v| render(v).map(|x| (v, x))).transpose()?;
    for (_, n, v) in r.msg.headers() {
        let name_ok = match (&h.name, &name) {
            (HdrPat::Reg(re), _) => re.is_match(n),
            (_, Some((how, pat))) => text_match(*how, &n.to_ascii_lowercase(), &pat.to_ascii_lowercase()),
            _ => false,
        };
        if !name_ok {
            continue;
        }
        let Some((vp, vtext)) = &value else { return Ok(true) };
        let mut values: Box<dyn Iterator<Item = &[u8]>> =
            if h.full { Box::new(std::iter::once(v)) } else { Box::new(crate::http::uri::comma_items(v)) };
        let hit = values.any(|x| match (vp, vtext) {
            (HdrPat::Reg(re), _) => re.is_match(x),
            (_, Some((how, pat))) => text_match(*how, x, pat),
            _ => false,
        });
        if hit {
            return Ok(true);
        }
    }
    Ok(false)
}

fn text_match(how: HdrMeth, s: &[u8], pat: &[u8]) -> bool {
    match how {
        HdrMeth::Str => s == pat,
        HdrMeth::Beg => s.starts_with(pat),
        HdrMeth::End => s.ends_with(pat),
        HdrMeth::Sub => memchr::memmem::find(s, pat).is_some(),
        HdrMeth::Reg => false,
    }
}

/// The body data in `rest` and whether the message is complete.
fn body(rest: &[u8], framing: Framing, last: bool) -> (Vec<u8>, bool) {
    match framing {
        Framing::None => (Vec::new(), true),
        Framing::Length(n) => {
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            (rest[..rest.len().min(n)].to_vec(), rest.len() >= n)
        }
        Framing::Chunked => match dechunk(rest) {
            Some(b) => (b, true),
            None => (dechunk_partial(rest), false),
        },
        Framing::UntilClose => (rest.to_vec(), last),
    }
}

/// The data of a complete chunked body (`None` while the last chunk is missing).
fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = memchr::memmem::find(rest, b"\r\n")?;
        let size_text = std::str::from_utf8(&rest[..eol]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        if rest.len() < size + 2 {
            return None;
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

/// What a truncated chunked body holds so far.
fn dechunk_partial(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = memchr::memmem::find(rest, b"\r\n") {
        let size = std::str::from_utf8(&rest[..eol])
            .ok()
            .and_then(|t| usize::from_str_radix(t.split(';').next().unwrap_or("").trim(), 16).ok());
        let Some(size) = size.filter(|&s| s > 0) else { break };
        rest = &rest[eol + 2..];
        let take = size.min(rest.len());
        out.extend_from_slice(&rest[..take]);
        rest = &rest[take..];
        rest = rest.strip_prefix(b"\r\n").unwrap_or(rest);
    }
    out
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
