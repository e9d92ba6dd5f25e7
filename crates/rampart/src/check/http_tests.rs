//! HTTP check requests as HAProxy writes them, and `http-check expect` evaluation on
//! responses.

use super::*;
use crate::check::rules::{Expect, Msg, StatusCode};
use crate::sample::expr::{CompileCx, Place, Site};
use crate::sample::testutil::{config, runtime, CFG};

fn with_ctx<R>(f: impl FnOnce(&SampleCtx<'_>, &mut CompileCx<'_>) -> R) -> R {
    let cfg = config(CFG);
    let rt = runtime(&cfg);
    let conn = crate::sample::ctx::ConnInfo::new(None, -1);
    let mut ctx = SampleCtx::new(&rt, &conn, 1);
    ctx.be = Some(1);
    ctx.srv = Some(0);
    let mut cx = CompileCx::new(&cfg, 1, Site::TcpCheck);
    f(&ctx, &mut cx)
}

fn request(s: HttpSend, state: Option<&str>) -> String {
    with_ctx(|ctx, cx| {
        let mut lf = |t: &str, _: &str| {
            LogFormat::compile(t, cx, crate::log::format::LfMode::Raw, &[Place::BeChkRul]).map_err(|e| e.msg)
        };
        let req = HttpReq::compile(&s, &mut lf).expect("compiles");
        String::from_utf8(req.render(ctx, state)).expect("utf-8")
    })
}

fn send(meth: Option<&str>, uri: Option<&str>, ver: Option<&str>) -> HttpSend {
    HttpSend {
        meth: meth.map(str::to_owned),
        uri: uri.map(str::to_owned),
        ver: ver.map(str::to_owned),
        ..HttpSend::default()
    }
}

#[test]
fn requests_as_haproxy_writes_them() {
    // captured from haproxy 2.6.12
    assert_eq!(request(HttpSend::default(), None), "OPTIONS / HTTP/1.0\r\n\r\n");
    assert_eq!(request(send(Some("POST"), Some("/p"), None), None), "POST /p HTTP/1.0\r\ncontent-length: 0\r\n\r\n");
    assert_eq!(
        request(send(Some("DELETE"), Some("/d"), Some("HTTP/1.1")), None),
        "DELETE /d HTTP/1.1\r\nconnection: close\r\n\r\n"
    );
    let mut s = send(Some("PUT"), Some("/x"), Some("HTTP/1.1"));
    s.hdrs = vec![("X-Empty".into(), "%[var(check.nope)]".into()), ("X-A".into(), "a".into())];
    s.body = Some("hello".into());
    assert_eq!(
        request(s, Some("UP 1/3; name=b/s")),
        "PUT /x HTTP/1.1\r\nx-a: a\r\nx-haproxy-server-state: UP 1/3; name=b/s\r\ncontent-length: 5\r\n\
         connection: close\r\n\r\nhello"
    );
    let mut s = send(Some("GET"), Some("/y"), Some("HTTP/1.0"));
    s.hdrs = vec![("Connection".into(), "keep-alive".into())];
    assert_eq!(request(s, None), "GET /y HTTP/1.0\r\nconnection: keep-alive\r\n\r\n");
    let mut s = send(Some("GET"), Some("/z"), Some("HTTP/1.1"));
    s.hdrs = vec![("Connection".into(), "upgrade".into())];
    assert_eq!(request(s, None), "GET /z HTTP/1.1\r\nconnection: upgrade\r\n\r\n");
}

#[test]
fn log_format_parts() {
    let mut s = send(Some("GET"), Some("/%[be_name]/%[srv_name]"), None);
    s.uri_lf = true;
    s.body = Some("on %[be_name]".into());
    s.body_lf = true;
    s.hdrs = vec![("x-srv".into(), "s=%[srv_name]".into())];
    assert_eq!(request(s, None), "GET /be/s1 HTTP/1.0\r\nx-srv: s=s1\r\ncontent-length: 5\r\n\r\non be");
    // a format rendering nothing: the URI is "/"
    let mut s = send(None, Some("%[var(check.none)]"), None);
    s.uri_lf = true;
    assert_eq!(request(s, None), "OPTIONS / HTTP/1.0\r\n\r\n");
    assert!(is_v11("HTTP/1.1") && is_v11("HTTP/2") && is_v11("HTTP/1.2") && !is_v11("HTTP/1.0"));
}

fn expect(inverse: bool, matcher: Matcher) -> Expect {
    Expect {
        inverse,
        matcher,
        min_recv: None,
        ok_status: None,
        err_status: None,
        tout_status: None,
        on_success: Msg::Default,
        on_error: Msg::Default,
        status_code: StatusCode::None,
    }
}

/// Evaluates `e` on `resp`, complete or not (`last`).
fn eval(e: &Expect, resp: &[u8], last: bool) -> Verdict {
    with_ctx(|ctx, _| {
        let mut msg = MsgHead::default();
        let Resp::Ready { body, complete } = parse_response(resp, Method::Get, last, &mut msg) else {
            panic!("not a response")
        };
        let view = MsgView { head: &msg, buf: resp };
        eval_expect(e, &Seen { msg: view, body: &body, last: last || complete, ctx })
    })
}

const RESP: &[u8] = b"HTTP/1.1 202 Accepted\r\nx-test1: true, next value\r\n\
x-test2: true, begin-value, value-end, value-sub-string, value-reg-123ABC\r\nX-Begin-Test: 1\r\n\
x-hdr-name: x-test1\r\ncontent-length: 5\r\n\r\nhello";

fn re(p: &str, icase: bool) -> regex::bytes::Regex {
    crate::pattern::reg::compile(p, icase).expect("regex")
}

fn hdr(full: bool, name: HdrPat, value: Option<HdrPat>) -> Matcher {
    Matcher::Header(HdrRule { full, name, value })
}

fn t(how: HdrMeth, s: &str) -> HdrPat {
    HdrPat::Text(how, s.as_bytes().to_vec())
}

#[test]
fn status_and_header_rules() {
    assert_eq!(eval(&expect(false, Matcher::Status(vec![(200, 399)])), RESP, false), Verdict::Pass);
    assert_eq!(
        eval(&expect(false, Matcher::Status(vec![(200, 201)])), RESP, false),
        Verdict::Fail(CheckStatus::L7Sts, "Accepted".into())
    );
    assert_eq!(
        eval(&expect(true, Matcher::Rstatus(re("^2", false))), RESP, false),
        Verdict::Fail(CheckStatus::L7Sts, "Accepted".into())
    );
    let pass = |m: Matcher| eval(&expect(false, m), RESP, false) == Verdict::Pass;
    assert!(pass(hdr(false, t(HdrMeth::Str, "X-Test1"), None)), "names match without case");
    assert!(pass(hdr(false, t(HdrMeth::Beg, "x-begin-"), None)));
    assert!(pass(hdr(false, t(HdrMeth::End, "-name"), None)));
    assert!(pass(hdr(false, t(HdrMeth::Sub, "-hdr-"), None)));
    assert!(pass(hdr(false, HdrPat::Reg(re("^[a-z]+-Begin-[a-z]+$", true)), None)));
    assert!(!pass(hdr(false, t(HdrMeth::Str, "x-none"), None)));
    // values: split at commas with `hdr`, whole with `fhdr`
    assert!(pass(hdr(false, t(HdrMeth::Str, "x-test2"), Some(t(HdrMeth::Str, "true")))));
    assert!(!pass(hdr(true, t(HdrMeth::Str, "x-test2"), Some(t(HdrMeth::Str, "true")))));
    assert!(pass(hdr(true, t(HdrMeth::Str, "x-test1"), Some(t(HdrMeth::Str, "true, next value")))));
    assert!(pass(hdr(false, t(HdrMeth::Beg, "x-test"), Some(t(HdrMeth::End, "-end")))));
    assert!(pass(hdr(false, t(HdrMeth::Beg, "x-test"), Some(HdrPat::Reg(re("^value-reg-[A-Z0-9]+$", false))))));
    assert!(!pass(hdr(false, t(HdrMeth::Str, "x-test2"), Some(t(HdrMeth::Str, "TRUE")))), "values keep their case");
}

#[test]
fn body_rules() {
    let body = |m: Matcher| expect(false, m);
    assert_eq!(eval(&body(Matcher::Body(b"ell".to_vec())), RESP, false), Verdict::Pass);
    assert_eq!(
        eval(&body(Matcher::Body(b"nope".to_vec())), RESP, false),
        Verdict::Fail(CheckStatus::L7Rsp, "HTTP content check did not match".into())
    );
    assert_eq!(
        eval(&expect(true, Matcher::Rbody(re("^he", false))), RESP, false),
        Verdict::Fail(CheckStatus::L7Rsp, "HTTP check matched unwanted content".into())
    );
    // the body is not all there: wait, unless nothing more will come
    let partial = b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhel";
    assert_eq!(eval(&body(Matcher::Body(b"hello".to_vec())), partial, false), Verdict::Wait);
    assert_eq!(
        eval(&body(Matcher::Body(b"hello".to_vec())), partial, true),
        Verdict::Fail(CheckStatus::L7Rsp, "HTTP content check did not match".into())
    );
    let mut min = body(Matcher::Body(b"he".to_vec()));
    min.min_recv = Some(2);
    assert_eq!(eval(&min, partial, false), Verdict::Pass);
    let empty = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
    assert_eq!(
        eval(&body(Matcher::Body(b"x".to_vec())), empty, false),
        Verdict::Fail(CheckStatus::L7Rsp, "HTTP content check could not find a response body".into())
    );
    let mut own = body(Matcher::Body(b"x".to_vec()));
    own.err_status = Some(CheckStatus::L7OkC);
    assert_eq!(eval(&own, RESP, false), Verdict::Fail(CheckStatus::L7OkC, "HTTP content check did not match".into()));
}

#[test]
fn responses_and_bodies() {
    let mut msg = MsgHead::default();
    assert!(matches!(parse_response(b"HTTP/1.1 200 OK\r\nContent-", Method::Get, false, &mut msg), Resp::Incomplete));
    assert!(matches!(parse_response(b"hello\r\n\r\n", Method::Get, true, &mut msg), Resp::Invalid));
    let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n";
    let Resp::Ready { body, complete } = parse_response(chunked, Method::Get, false, &mut msg) else { panic!() };
    assert_eq!((body.as_slice(), complete), (&b"hello"[..], true));
    let Resp::Ready { body, complete } = parse_response(&chunked[..59], Method::Get, false, &mut msg) else { panic!() };
    assert_eq!((body.as_slice(), complete), (&b"hell"[..], false), "cut inside the second chunk");
    let close = b"HTTP/1.0 200 OK\r\n\r\nsay hello";
    let Resp::Ready { complete, .. } = parse_response(close, Method::Get, false, &mut msg) else { panic!() };
    assert!(!complete, "until the close");
    // no body after a HEAD request
    let head = b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n";
    let Resp::Ready { body, complete } = parse_response(head, Method::Head, false, &mut msg) else { panic!() };
    assert!(body.is_empty() && complete);
}
