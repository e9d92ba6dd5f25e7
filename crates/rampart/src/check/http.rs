//! HTTP checks (`option httpchk`): the request, built once at startup, and the
//! evaluation of the response against the `http-check expect` rules.
//! HAProxy counterparts: `tcpcheck_eval_send()` for HTTP requests,
//! `tcpcheck_eval_expect_http()`, `httpchk_build_status_header()` (src/tcpcheck.c,
//! src/check.c).

use rampart_cfg::model::{HealthCheck, HttpCheck, HttpExpectMatch};
use rampart_proto::h1::{self, Framing, Head};
use rampart_proto::http::Method;
use regex::bytes::Regex;

use super::status::CheckStatus;

/// The outcome of one check: status, HTTP code (0 when none) and `info` text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub status: CheckStatus,
    pub code: u16,
    pub desc: String,
}

impl Outcome {
    pub fn new(status: CheckStatus, desc: impl Into<String>) -> Outcome {
        Outcome { status, code: 0, desc: desc.into() }
    }
}

/// An `http-check expect` rule, compiled.
#[derive(Debug)]
struct Expect {
    inverse: bool,
    matcher: Matcher,
    comment: Option<String>,
}

#[derive(Debug)]
enum Matcher {
    Status(Vec<(u16, u16)>),
    Rstatus(Regex),
    String(Vec<u8>),
    Rstring(Regex),
}

/// The HTTP check of a backend, compiled.
#[derive(Debug)]
pub struct HttpChk {
    /// Request line and configured headers.
    head: Vec<u8>,
    /// Framing headers, the final CRLF and the body.
    tail: Vec<u8>,
    expects: Vec<Expect>,
    pub disable_on_404: bool,
    pub send_state: bool,
}

impl HttpChk {
    /// Compiles the HTTP check of a backend; `Err` names a regex that does not compile.
    pub fn compile(hc: &HealthCheck) -> Result<Option<HttpChk>, String> {
        if !hc.httpchk {
            return Ok(None);
        }
        let default = HttpCheck::default();
        let http = hc.http.as_ref().unwrap_or(&default);
        let expects = http.expects.iter().map(compile_expect).collect::<Result<Vec<_>, _>>()?;
        let (head, tail) = render_request(http);
        Ok(Some(HttpChk { head, tail, expects, disable_on_404: hc.disable_on_404, send_state: hc.send_state }))
    }

    /// The request bytes; `state` is the `X-Haproxy-Server-State` value with
    /// `send-state`.
    pub fn request(&self, state: Option<&str>) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.head.len() + self.tail.len() + 128);
        out.extend_from_slice(&self.head);
        if let Some(s) = state {
            out.extend_from_slice(b"x-haproxy-server-state: ");
            out.extend_from_slice(s.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(&self.tail);
        out
    }

    /// Evaluates the response read so far. `None`: more bytes are needed (`last` is
    /// false and the message is not complete). `running` is whether the server is not
    /// DOWN (a 404 with `disable-on-404` only counts then).
    pub fn evaluate(&self, buf: &[u8], last: bool, running: bool) -> Option<Outcome> {
        let mut head = Head::default();
        // the caller bounds the buffer: the head may take all of it
        match h1::parse_response(buf, buf.len() + 1, Method::Get, &mut head) {
            Ok(true) => {}
            Ok(false) if last => return Some(Outcome::new(CheckStatus::L7Rsp, "")),
            Ok(false) => return None,
            Err(_) => return Some(Outcome::new(CheckStatus::L7Rsp, "")),
        }
        let body = body(&buf[head.len..], head.framing, last)?;
        let code = head.status;
        let reason = String::from_utf8_lossy(head.reason.get(buf)).into_owned();
        if self.disable_on_404 && running && code == 404 {
            return Some(Outcome { status: CheckStatus::L7OkC, code, desc: String::new() });
        }
        let status_line = code.to_string();
        if self.expects.is_empty() {
            if (200..400).contains(&code) {
                return Some(Outcome { status: CheckStatus::L7Ok, code, desc: String::new() });
            }
            return Some(Outcome { status: CheckStatus::L7Sts, code, desc: reason });
        }
        for e in &self.expects {
            let (matched, fail_status, desc) = match &e.matcher {
                Matcher::Status(ranges) => {
                    (ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&code)), CheckStatus::L7Sts, reason.clone())
                }
                Matcher::Rstatus(re) => (re.is_match(status_line.as_bytes()), CheckStatus::L7Sts, reason.clone()),
                Matcher::String(_) | Matcher::Rstring(_) if body.is_empty() => {
                    let mut d = "HTTP content check could not find a response body".to_owned();
                    append_comment(&mut d, e);
                    return Some(Outcome { status: CheckStatus::L7Rsp, code, desc: d });
                }
                Matcher::String(s) => (memchr::memmem::find(&body, s).is_some(), CheckStatus::L7Rsp, body_desc(e)),
                Matcher::Rstring(re) => (re.is_match(&body), CheckStatus::L7Rsp, body_desc(e)),
            };
            if matched == e.inverse {
                let mut desc = desc;
                append_comment(&mut desc, e);
                return Some(Outcome { status: fail_status, code, desc });
            }
        }
        Some(Outcome { status: CheckStatus::L7Ok, code, desc: String::new() })
    }
}

fn body_desc(e: &Expect) -> String {
    if e.inverse {
        "HTTP check matched unwanted content".into()
    } else {
        "HTTP content check did not match".into()
    }
}

fn append_comment(desc: &mut String, e: &Expect) {
    if let Some(c) = &e.comment {
        desc.push_str(" comment: ");
        desc.push_str(c);
    }
}

fn compile_expect(e: &rampart_cfg::model::HttpExpect) -> Result<Expect, String> {
    let re = |p: &str| Regex::new(p).map_err(|err| format!("'http-check expect' : regex '{p}' : {err}"));
    let matcher = match &e.matcher {
        HttpExpectMatch::Status(r) => Matcher::Status(r.clone()),
        HttpExpectMatch::Rstatus(p) => Matcher::Rstatus(re(p)?),
        HttpExpectMatch::String(s) => Matcher::String(s.as_bytes().to_vec()),
        HttpExpectMatch::Rstring(p) => Matcher::Rstring(re(p)?),
    };
    Ok(Expect { inverse: e.inverse, matcher, comment: e.comment.clone() })
}

/// The request as HAProxy's H1 mux writes it: header names lowercased, a
/// `content-length` with a body (or 0 for other methods than GET/HEAD/OPTIONS in
/// HTTP/1.1), `connection: close` in HTTP/1.1.
fn render_request(http: &HttpCheck) -> (Vec<u8>, Vec<u8>) {
    let mut head = format!("{} {} {}\r\n", http.meth, http.uri, http.ver).into_bytes();
    for (name, value) in &http.hdrs {
        head.extend_from_slice(name.to_ascii_lowercase().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    let v11 = http.ver.eq_ignore_ascii_case("HTTP/1.1");
    let no_body_method = ["GET", "HEAD", "OPTIONS"].iter().any(|m| http.meth.eq_ignore_ascii_case(m));
    let mut tail = Vec::new();
    if !http.body.is_empty() || (v11 && !no_body_method) {
        tail.extend_from_slice(format!("content-length: {}\r\n", http.body.len()).as_bytes());
    }
    if v11 && !http.hdrs.iter().any(|(n, _)| n.eq_ignore_ascii_case("connection")) {
        tail.extend_from_slice(b"connection: close\r\n");
    }
    tail.extend_from_slice(b"\r\n");
    tail.extend_from_slice(http.body.as_bytes());
    (head, tail)
}

/// The body of the response, once complete (or `last`): `None` to wait for more.
fn body(rest: &[u8], framing: Framing, last: bool) -> Option<Vec<u8>> {
    match framing {
        Framing::None => Some(Vec::new()),
        Framing::Length(n) => {
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            if rest.len() >= n || last {
                Some(rest[..rest.len().min(n)].to_vec())
            } else {
                None
            }
        }
        Framing::Chunked => match dechunk(rest) {
            Some(b) => Some(b),
            None if last => Some(dechunk_partial(rest)),
            None => None,
        },
        Framing::UntilClose => last.then(|| rest.to_vec()),
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

/// What a truncated chunked body holds, for a check that has to conclude anyway.
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
mod tests {
    use super::*;
    use rampart_cfg::model::HttpExpect;

    fn chk(expects: Vec<HttpExpect>, disable_on_404: bool) -> HttpChk {
        let http = HttpCheck { expects, ..Default::default() };
        let hc = HealthCheck { httpchk: true, http: Some(http), disable_on_404, ..Default::default() };
        HttpChk::compile(&hc).expect("compiles").expect("http")
    }

    fn exp(inverse: bool, matcher: HttpExpectMatch, comment: Option<&str>) -> HttpExpect {
        HttpExpect { inverse, matcher, comment: comment.map(str::to_owned) }
    }

    const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    const E500: &[u8] = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n";

    #[test]
    fn requests_as_haproxy_writes_them() {
        let r = |http: HttpCheck| {
            let hc = HealthCheck { httpchk: true, http: Some(http), ..Default::default() };
            String::from_utf8(HttpChk::compile(&hc).unwrap().unwrap().request(None)).unwrap()
        };
        assert_eq!(r(HttpCheck::default()), "OPTIONS / HTTP/1.0\r\n\r\n");
        let http = HttpCheck {
            meth: "GET".into(),
            uri: "/health".into(),
            ver: "HTTP/1.1".into(),
            hdrs: vec![("Host".into(), "www".into())],
            ..Default::default()
        };
        assert_eq!(r(http), "GET /health HTTP/1.1\r\nhost: www\r\nconnection: close\r\n\r\n");
        let http = HttpCheck {
            meth: "GET".into(),
            uri: "/h".into(),
            hdrs: vec![("Host".into(), "foo".into())],
            body: "abc".into(),
            ..Default::default()
        };
        assert_eq!(r(http), "GET /h HTTP/1.0\r\nhost: foo\r\ncontent-length: 3\r\n\r\nabc");
        let http = HttpCheck { meth: "POST".into(), uri: "/x".into(), ver: "HTTP/1.1".into(), ..Default::default() };
        let hc = HealthCheck { httpchk: true, http: Some(http), ..Default::default() };
        let req = HttpChk::compile(&hc).unwrap().unwrap().request(Some("UP; name=b/s"));
        assert_eq!(
            String::from_utf8(req).unwrap(),
            "POST /x HTTP/1.1\r\nx-haproxy-server-state: UP; name=b/s\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        );
    }

    #[test]
    fn default_expect_is_2xx_or_3xx() {
        let c = chk(vec![], false);
        assert_eq!(
            c.evaluate(OK, false, true).unwrap(),
            Outcome { status: CheckStatus::L7Ok, code: 200, desc: "".into() }
        );
        let o = c.evaluate(b"HTTP/1.0 302 Found\r\n\r\n", true, true).unwrap();
        assert_eq!((o.status, o.code), (CheckStatus::L7Ok, 302));
        let o = c.evaluate(E500, false, true).unwrap();
        assert_eq!((o.status, o.code, o.desc.as_str()), (CheckStatus::L7Sts, 500, "Internal Server Error"));
    }

    #[test]
    fn incomplete_garbage_and_empty_responses() {
        let c = chk(vec![], false);
        assert_eq!(c.evaluate(b"HTTP/1.1 200 OK\r\nContent-", false, true), None);
        assert_eq!(c.evaluate(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", false, true), None);
        assert_eq!(c.evaluate(b"hello\r\n\r\n", true, true).unwrap(), Outcome::new(CheckStatus::L7Rsp, ""));
        assert_eq!(c.evaluate(b"", true, true).unwrap(), Outcome::new(CheckStatus::L7Rsp, ""));
    }

    #[test]
    fn status_and_body_matchers() {
        let st = |r: &[(u16, u16)]| HttpExpectMatch::Status(r.to_vec());
        let c = chk(vec![exp(false, st(&[(200, 299)]), None)], false);
        assert_eq!(c.evaluate(OK, false, true).unwrap().status, CheckStatus::L7Ok);
        assert_eq!(c.evaluate(E500, false, true).unwrap().status, CheckStatus::L7Sts);
        let c = chk(vec![exp(true, st(&[(500, 599)]), None)], false);
        assert_eq!(c.evaluate(E500, false, true).unwrap().status, CheckStatus::L7Sts);
        let c = chk(vec![exp(false, HttpExpectMatch::Rstatus("^2".into()), None)], false);
        assert_eq!(c.evaluate(OK, false, true).unwrap().status, CheckStatus::L7Ok);
        let c = chk(vec![exp(false, HttpExpectMatch::String("ok".into()), None)], false);
        assert_eq!(c.evaluate(OK, false, true).unwrap().status, CheckStatus::L7Ok);
        let nope = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnope";
        assert_eq!(
            c.evaluate(nope, false, true).unwrap(),
            Outcome { status: CheckStatus::L7Rsp, code: 200, desc: "HTTP content check did not match".into() }
        );
        assert_eq!(c.evaluate(E500, false, true).unwrap().desc, "HTTP content check could not find a response body");
        let c = chk(vec![exp(true, HttpExpectMatch::Rstring("^no".into()), None)], false);
        assert_eq!(c.evaluate(nope, false, true).unwrap().desc, "HTTP check matched unwanted content");
        assert_eq!(c.evaluate(OK, false, true).unwrap().status, CheckStatus::L7Ok);
        let c = chk(vec![exp(false, st(&[(201, 201)]), Some("my check"))], false);
        assert_eq!(c.evaluate(OK, false, true).unwrap().desc, "OK comment: my check");
    }

    #[test]
    fn chunked_and_until_close_bodies() {
        let c = chk(vec![exp(false, HttpExpectMatch::String("hello".into()), None)], false);
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n";
        assert_eq!(c.evaluate(chunked, false, true).unwrap().status, CheckStatus::L7Ok);
        assert_eq!(c.evaluate(&chunked[..60], false, true), None);
        let close = b"HTTP/1.0 200 OK\r\n\r\nsay hello";
        assert_eq!(c.evaluate(close, false, true), None);
        assert_eq!(c.evaluate(close, true, true).unwrap().status, CheckStatus::L7Ok);
    }

    #[test]
    fn disable_on_404_only_while_running() {
        let c = chk(vec![], true);
        let nf = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(
            c.evaluate(nf, false, true).unwrap(),
            Outcome { status: CheckStatus::L7OkC, code: 404, desc: "".into() }
        );
        assert_eq!(c.evaluate(nf, false, false).unwrap().status, CheckStatus::L7Sts);
    }

    #[test]
    fn bad_regex_is_refused() {
        let http =
            HttpCheck { expects: vec![exp(false, HttpExpectMatch::Rstring("(".into()), None)], ..Default::default() };
        let hc = HealthCheck { httpchk: true, http: Some(http), ..Default::default() };
        assert!(HttpChk::compile(&hc).unwrap_err().starts_with("'http-check expect' : regex '(' : "));
    }
}
