//! Tests of the HTTP and payload fetches over literal messages. Expected values were
//! checked against haproxy 2.6.12 (`http-request return lf-string` echoing them).

use std::borrow::Cow;

use crate::http::MsgHead;
use crate::proxy::Runtime;
use crate::sample::ctx::{ConnInfo, Dir, SampleCtx};
use crate::sample::testutil::*;
use crate::sample::Sample;
use rampart_cfg::Config;

const REQ: &[u8] = b"GET /a/b?p=1&p=2&q=3 HTTP/1.1\r\n\
Host: ex.com\r\n\
x: a, b\r\n\
x: c\r\n\
Cookie: a=1; b=2, a=3\r\n\
Cookie: c=4;a=5\r\n\
n: 12abc\r\n\
ip: 10.0.0.1:80\r\n\
ip: garbage\r\n\r\n";

const RES: &[u8] = b"HTTP/1.1 302 Found\r\n\
Location: /x\r\n\
Set-Cookie: SRV=s1; Path=/; HttpOnly\r\n\
Set-Cookie: lang=en\r\n\
Cache-Control: no-cache, private\r\n\r\n";

struct Fx {
    cfg: Config,
    rt: Runtime,
    conn: ConnInfo,
    req: MsgHead,
    res: MsgHead,
}

impl Fx {
    fn new() -> Fx {
        let cfg = config(CFG);
        let rt = runtime(&cfg);
        Fx { cfg, rt, conn: conn(), req: req_head(REQ), res: res_head(RES) }
    }

    fn ctx(&self) -> SampleCtx<'_> {
        SampleCtx {
            req: Some(self.req.view(REQ)),
            res: Some(self.res.view(RES)),
            req_line: b"GET /a/b?p=1&p=2&q=3 HTTP/1.1",
            ..SampleCtx::new(&self.rt, &self.conn, 0)
        }
    }

    /// The sample value of `text` (last header, first parameter ...).
    fn v(&self, text: &str) -> Option<Sample<'static>> {
        let e = compile_in(&self.cfg, 0, text).unwrap_or_else(|e| panic!("{text}: {e}"));
        e.eval(&self.ctx()).map(Sample::into_owned)
    }

    /// Every value of `text`, as an ACL sees them.
    fn each(&self, text: &str) -> Vec<Sample<'static>> {
        all(&compile_in(&self.cfg, 0, text).unwrap(), &self.ctx())
    }
}

fn i(n: i64) -> Option<Sample<'static>> {
    Some(Sample::Sint(n))
}

fn st(t: &str) -> Option<Sample<'static>> {
    Some(s(t))
}

#[test]
fn header_occurrences() {
    let f = Fx::new();
    assert_eq!(f.v("req.hdr(x)"), st("c"));
    assert_eq!(f.v("req.hdr(X,-1)"), st("c"));
    assert_eq!(f.v("req.hdr(x,-2)"), st("b"));
    assert_eq!(f.v("req.hdr(x,-3)"), st("a"));
    assert_eq!(f.v("req.hdr(x,-4)"), None);
    assert_eq!(f.v("req.hdr(x,1)"), st("a"));
    assert_eq!(f.v("req.hdr(x,3)"), st("c"));
    assert_eq!(f.v("req.hdr(x,4)"), None);
    assert_eq!(f.v("hdr(x,2)"), st("b"));
    assert_eq!(f.v("req.fhdr(x)"), st("c"));
    assert_eq!(f.v("req.fhdr(x,1)"), st("a, b"));
    assert_eq!(f.v("req.hdr(nope)"), None);
    assert_eq!(f.v("req.hdr"), None);
    assert_eq!(f.each("req.hdr(x)"), [s("a"), s("b"), s("c")]);
    assert_eq!(f.each("req.hdr(x,2)"), [s("b")]);
    assert_eq!(f.each("req.fhdr(x)"), [s("a, b"), s("c")]);
    // An empty name matches every header.
    assert_eq!(f.each("req.fhdr()").len(), 8);
    assert_eq!(
        compile_in(&f.cfg, 0, "req.hdr(x,-11)").unwrap_err().to_string(),
        "invalid args in fetch method 'req.hdr' : header occurrence must be >= -10"
    );
}

#[test]
fn header_counts_values_and_addresses() {
    let f = Fx::new();
    assert_eq!(f.v("req.hdr_cnt(x)"), i(3));
    assert_eq!(f.v("req.fhdr_cnt(x)"), i(2));
    assert_eq!(f.v("hdr_cnt(nope)"), i(0));
    assert_eq!(f.v("req.hdr_cnt"), i(10));
    assert_eq!(f.v("req.hdr_val(n)"), i(12));
    assert_eq!(f.v("req.hdr_val(x)"), i(0));
    // The last `ip` value is no address: no sample, as HAProxy.
    assert_eq!(f.v("req.hdr_ip(ip)"), None);
    assert_eq!(f.v("req.hdr_ip(ip,1)"), Some(Sample::Ipv4("10.0.0.1".parse().unwrap())));
    assert_eq!(f.each("req.hdr_ip(ip)"), [Sample::Ipv4("10.0.0.1".parse().unwrap())]);
    assert_eq!(f.v("res.hdr_cnt(cache-control)"), i(2));
    assert_eq!(f.v("res.hdr(cache-control)"), st("private"));
    assert_eq!(f.v("shdr(location)"), st("/x"));
}

#[test]
fn header_ip_forms() {
    use super::http_hdr::hdr_ip;
    assert_eq!(hdr_ip(b"1.2.3.4"), Some(Sample::Ipv4("1.2.3.4".parse().unwrap())));
    assert_eq!(hdr_ip(b"1.2.3.4:65535"), Some(Sample::Ipv4("1.2.3.4".parse().unwrap())));
    assert_eq!(hdr_ip(b"1.2.3.4:65536"), None);
    assert_eq!(hdr_ip(b"1.2.3.4:"), None);
    assert_eq!(hdr_ip(b"2001:db8::1"), Some(Sample::Ipv6("2001:db8::1".parse().unwrap())));
    assert_eq!(hdr_ip(b"[2001:db8::1]"), None);
    assert_eq!(hdr_ip(b""), None);
}

#[test]
fn header_names_and_block() {
    let f = Fx::new();
    assert_eq!(f.v("req.hdr_names"), st("host,x,x,cookie,cookie,n,ip,ip"));
    assert_eq!(f.v("res.hdr_names(;)"), st("location;set-cookie;set-cookie;cache-control"));
    let Some(Sample::Str(b)) = f.v("res.hdrs") else { panic!() };
    assert_eq!(
        &b[..],
        b"location: /x\r\nset-cookie: SRV=s1; Path=/; HttpOnly\r\nset-cookie: lang=en\r\n\
          cache-control: no-cache, private\r\n\r\n"
    );
}

#[test]
fn request_cookies() {
    let f = Fx::new();
    assert_eq!(f.v("req.cook(a)"), st("5"));
    assert_eq!(f.v("req.cook"), st("1"));
    assert_eq!(f.v("req.cook(c)"), st("4"));
    assert_eq!(f.v("req.cook(zz)"), None);
    assert_eq!(f.v("req.cook_cnt(a)"), i(3));
    assert_eq!(f.v("req.cook_cnt"), i(5));
    assert_eq!(f.v("req.cook_val(a)"), i(5));
    assert_eq!(f.v("cook(b)"), st("2"));
    assert_eq!(f.v("cookie(b)"), st("2"));
    assert_eq!(f.each("req.cook(a)"), [s("1"), s("3"), s("5")]);
}

#[test]
fn response_cookies() {
    let f = Fx::new();
    let mut ctx = f.ctx();
    ctx.dir = Dir::Response;
    let v = |t: &str| compile_in(&f.cfg, 0, t).unwrap().eval(&ctx).map(Sample::into_owned);
    assert_eq!(v("res.cook(SRV)"), st("s1"));
    assert_eq!(v("scook(lang)"), st("en"));
    // `Set-Cookie` carries one cookie: attributes are not cookies.
    assert_eq!(v("res.cook(Path)"), None);
    assert_eq!(v("res.cook_cnt(SRV)"), i(1));
    // HAProxy 2.6 counts `Path` too without a name (its walk resumes after the first
    // pair), but never finds it by name.
    assert_eq!(v("res.cook_cnt"), i(3));
    assert_eq!(v("res.cook_cnt(Path)"), i(0));
    assert_eq!(v("res.cook"), st("s1"));
    assert_eq!(v("cookie(lang)"), st("en"));
}

#[test]
fn cookie_walk_quirks() {
    use super::http_hdr::cookies;
    let get = |hdr: &'static str, name: &str, list: bool| {
        let mut v = Vec::new();
        cookies(hdr.as_bytes(), name.as_bytes(), list, &mut |x| {
            v.push(String::from_utf8_lossy(x).into_owned());
            true
        });
        v
    };
    assert_eq!(get(" a = 1 ;b=\"x;y\"; $Path=/; c", "", true), ["1", "\"x;y\""]);
    assert_eq!(get("a=1;a=2", "a", true), ["1", "2"]);
    // A name followed by `=` and nothing is not found (HAProxy's bound).
    assert_eq!(get("a=", "a", true), Vec::<String>::new());
    assert_eq!(get("x=1, a=2", "a", true), ["2"]);
    assert_eq!(get("x=1, a=2", "a", false), Vec::<String>::new());
}

#[test]
fn target_fetches() {
    let f = Fx::new();
    assert_eq!(f.v("method"), Some(Sample::Meth(crate::http::Method::Get, Cow::Owned(b"GET".to_vec()))));
    assert_eq!(f.v("path"), st("/a/b"));
    assert_eq!(f.v("pathq"), st("/a/b?p=1&p=2&q=3"));
    assert_eq!(f.v("url"), st("/a/b?p=1&p=2&q=3"));
    assert_eq!(f.v("query"), st("p=1&p=2&q=3"));
    assert_eq!(f.v("base"), st("ex.com/a/b"));
    assert_eq!(f.v("baseq"), st("ex.com/a/b?p=1&p=2&q=3"));
    assert_eq!(f.v("base32"), i(3_058_019_441));
    assert_eq!(f.v("url_param(p)"), st("1"));
    assert_eq!(f.v("urlp(q)"), st("3"));
    assert_eq!(f.v("urlp_val(q)"), i(3));
    assert_eq!(f.v("url_param"), st("1"));
    assert_eq!(f.v("url_param(z)"), None);
    assert_eq!(f.each("url_param(p)"), [s("1"), s("2")]);
    assert_eq!(f.each("url_param"), [s("1"), s("2"), s("3")]);
    assert_eq!(f.v("req.ver"), st("1.1"));
    assert_eq!(f.v("capture.req.ver"), st("HTTP/1.1"));
    assert_eq!(f.v("capture.req.method"), st("GET"));
    assert_eq!(f.v("capture.req.uri"), st("/a/b?p=1&p=2&q=3"));
    assert_eq!(f.v("status"), i(302));
    assert_eq!(f.v("res.ver"), st("1.1"));
    assert_eq!(f.v("http_first_req"), Some(Sample::Bool(true)));
    // `http-after-response` on a reply rampart built: no request view, still HTTP
    let res_only = SampleCtx { req: None, ..f.ctx() };
    let first = compile_in(&f.cfg, 0, "http_first_req").unwrap().eval(&res_only).map(Sample::into_owned);
    assert_eq!(first, Some(Sample::Bool(true)));
    let Some(Sample::Bin(b)) = f.v("base32+src") else { panic!() };
    assert_eq!(&b[..], &[0xb6, 0x45, 0xac, 0x71, 192, 168, 1, 10]);
}

/// `capture.req.*` read the request line as the client sent it, whatever rules did to
/// the request since (checked against haproxy 2.6.12 with `set-path`/`set-method`).
#[test]
fn captures_read_the_request_line_as_received() {
    let f = Fx::new();
    let v = |line: &'static [u8], text: &str| {
        let ctx = SampleCtx { req_line: line, ..f.ctx() };
        compile_in(&f.cfg, 0, text).unwrap().eval(&ctx).map(Sample::into_owned)
    };
    let abs = b"GET http://example.com/abs/p?q=2 HTTP/1.1";
    assert_eq!(v(abs, "capture.req.uri"), st("/abs/p?q=2"));
    assert_eq!(v(abs, "capture.req.method"), st("GET"));
    assert_eq!(v(b"GET http://example.com HTTP/1.1", "capture.req.uri"), None);
    assert_eq!(v(b"OPTIONS * HTTP/1.0", "capture.req.uri"), None);
    assert_eq!(v(b"OPTIONS * HTTP/1.0", "capture.req.method"), st("OPTIONS"));
    assert_eq!(v(b"CONNECT h:443 HTTP/1.1", "capture.req.uri"), None);
    // the frontend keeps no line: nothing to read
    assert_eq!(v(b"", "capture.req.uri"), None);
    assert_eq!(v(b"", "capture.req.method"), None);
    // response rules: no request head, the transaction's version
    let res_only = SampleCtx { req: None, txn_ver: Some(crate::http::Version::Http10), ..f.ctx() };
    let ver = compile_in(&f.cfg, 0, "capture.req.ver").unwrap().eval(&res_only).map(Sample::into_owned);
    assert_eq!(ver, st("HTTP/1.0"));
}

#[test]
fn base32_without_path_query_or_host() {
    let buf = b"GET / HTTP/1.1\r\nHost: 127.0.0.1:18101\r\n\r\n";
    let f = Fx::new();
    let head = req_head(buf);
    let ctx = SampleCtx { req: Some(head.view(buf)), ..SampleCtx::new(&f.rt, &f.conn, 0) };
    let v = |t: &str| compile_in(&f.cfg, 0, t).unwrap().eval(&ctx).map(Sample::into_owned);
    assert_eq!(v("base32"), i(308_474_999));
    assert_eq!(v("base"), st("127.0.0.1:18101/"));
    assert_eq!(v("query"), None);
    let buf = b"GET http://10.1.2.3:8080/p?x=1;y=2 HTTP/1.0\r\n\r\n";
    let head = req_head(buf);
    let ctx = SampleCtx { req: Some(head.view(buf)), ..SampleCtx::new(&f.rt, &f.conn, 0) };
    let v = |t: &str| compile_in(&f.cfg, 0, t).unwrap().eval(&ctx).map(Sample::into_owned);
    assert_eq!(v("path"), st("/p"));
    assert_eq!(v("base"), st("/p"));
    assert_eq!(v("url_ip"), Some(Sample::Ipv4("10.1.2.3".parse().unwrap())));
    assert_eq!(v("url_port"), i(8080));
    assert_eq!(v("url_param(y)"), st("2"));
    assert_eq!(v("req.ver"), st("1.0"));
    let buf = b"CONNECT h.example:8443 HTTP/1.1\r\nHost: h.example:8443\r\n\r\n";
    let head = req_head(buf);
    let ctx = SampleCtx { req: Some(head.view(buf)), ..SampleCtx::new(&f.rt, &f.conn, 0) };
    let v = |t: &str| compile_in(&f.cfg, 0, t).unwrap().eval(&ctx).map(Sample::into_owned);
    assert_eq!(v("path"), None);
    assert_eq!(v("url_ip"), None);
    assert_eq!(v("base"), st("h.example:8443"));
}

#[test]
fn bodies_captures_and_ids() {
    let buf = b"POST /f HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n";
    let f = Fx::new();
    let mut head = req_head(buf);
    head.body = crate::http::BodyLen::Known(10);
    let caps = [Some(b"h".to_vec()), None];
    let uid = crate::log::UniqueId::preset(b"ID-1");
    let ctx = SampleCtx {
        req: Some(head.view(buf)),
        req_body: Some(b"a=1&b"),
        req_caps: &caps,
        unique_id: Some(&uid),
        first_req: false,
        ..SampleCtx::new(&f.rt, &f.conn, 0)
    };
    let v = |t: &str| compile_in(&f.cfg, 0, t).unwrap().eval(&ctx).map(Sample::into_owned);
    assert_eq!(v("req.body"), Some(Sample::Bin(Cow::Owned(b"a=1&b".to_vec()))));
    assert_eq!(v("req.body_len"), i(5));
    assert_eq!(v("req.body_param(a)"), Some(Sample::Bin(Cow::Owned(b"1".to_vec()))));
    assert_eq!(v("req.body_param(b)"), None);
    assert_eq!(v("req.body_param"), Some(Sample::Bin(Cow::Owned(b"1".to_vec()))));
    assert_eq!(v("req.body_size"), i(10));
    assert_eq!(v("capture.req.hdr(0)"), st("h"));
    assert_eq!(v("capture.req.hdr(1)"), None);
    assert_eq!(v("capture.req.hdr(7)"), None);
    assert_eq!(v("unique-id"), st("ID-1"));
    assert_eq!(v("http_first_req"), Some(Sample::Bool(false)));
    assert_eq!(v("req.proto_http"), Some(Sample::Bool(true)));
    assert_eq!(v("status"), None);
}

/// A TCP context over `payload`.
fn tcp<'a>(f: &'a Fx, payload: &'a [u8]) -> SampleCtx<'a> {
    SampleCtx { payload: Some(payload), ..SampleCtx::new(&f.rt, &f.conn, 0) }
}

#[test]
fn payload_fetches() {
    let f = Fx::new();
    let data = b"\x00\x03abcdef";
    let ctx = tcp(&f, data);
    let v = |t: &str| compile_in(&f.cfg, 0, t).unwrap().eval(&ctx).map(Sample::into_owned);
    let bin = |b: &[u8]| Some(Sample::Bin(Cow::Owned(b.to_vec())));
    assert_eq!(v("req.len"), i(8));
    assert_eq!(v("req.payload(2,3)"), bin(b"abc"));
    assert_eq!(v("req.payload(2,0)"), bin(b"abcdef"));
    assert!(ctx.may_change.replace(false));
    assert_eq!(v("req.payload(6,3)"), None);
    assert!(ctx.may_change.replace(false));
    assert_eq!(v("req.payload_lv(0,2)"), bin(b"abc"));
    assert_eq!(v("req.payload_lv(0,2,+1)"), bin(b"bcd"));
    assert_eq!(v("req.payload_lv(0,2,4)"), bin(b"cde"));
    assert_eq!(v("res.len"), None);
    assert_eq!(v("req.proto_http"), None);
    assert_eq!(
        compile_in(&f.cfg, 0, "req.payload_lv(0,0)").unwrap_err().to_string(),
        "invalid args in fetch method 'req.payload_lv' : payload length must be > 0"
    );
    assert_eq!(
        compile_in(&f.cfg, 0, "req.payload_lv(0,1,x)").unwrap_err().to_string(),
        "invalid args in fetch method 'req.payload_lv' : payload offset2 is not a number"
    );
    let http = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    assert_eq!(compile_in(&f.cfg, 0, "req.proto_http").unwrap().eval(&tcp(&f, http)), Some(Sample::Bool(true)));
    let partial = tcp(&f, b"GET / HTTP/1.1\r\nHo");
    assert_eq!(compile_in(&f.cfg, 0, "req.proto_http").unwrap().eval(&partial), None);
    assert!(partial.may_change.get());
}

#[test]
fn tls_client_hello_fetches() {
    let f = Fx::new();
    let hello = super::tls_hello::tests::client_hello("api.example.com");
    let ctx = tcp(&f, &hello);
    let v = |t: &str| compile_in(&f.cfg, 0, t).unwrap().eval(&ctx).map(Sample::into_owned);
    assert_eq!(v("req.ssl_sni"), st("api.example.com"));
    assert_eq!(v("req_ssl_sni"), st("api.example.com"));
    assert_eq!(v("req.ssl_hello_type"), i(1));
    assert_eq!(v("req_ssl_hello_type"), i(1));
    // HAProxy's encoding: major << 16 | minor (what `req.ssl_ver 3.3` compares to).
    assert_eq!(v("req.ssl_ver"), i(0x0003_0003));
    assert_eq!(v("req.ssl_alpn"), st("h2"));
    assert_eq!(all(&compile_in(&f.cfg, 0, "req.ssl_alpn").unwrap(), &ctx), [s("h2"), s("http/1.1")]);
    assert_eq!(v("req.ssl_ec_ext"), Some(Sample::Bool(true)));
    assert_eq!(v("req.ssl_st_ext"), i(1));
    let short = tcp(&f, &hello[..20]);
    assert_eq!(compile_in(&f.cfg, 0, "req.ssl_sni").unwrap().eval(&short), None);
    assert!(short.may_change.get());
    let plain = tcp(&f, b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(compile_in(&f.cfg, 0, "req.ssl_sni").unwrap().eval(&plain), None);
    assert!(!plain.may_change.get());
}

#[test]
fn wait_end_is_true_only_once_the_data_is_final() {
    let f = Fx::new();
    let e = compile_in(&f.cfg, 0, "wait_end").unwrap();
    let waiting = SampleCtx { final_data: false, ..tcp(&f, b"abc") };
    assert_eq!(e.eval(&waiting), None);
    assert!(waiting.may_change.get(), "not yet: the rules wait");
    let done = tcp(&f, b"abc");
    assert_eq!(e.eval(&done), Some(Sample::Bool(true)));
    assert!(!done.may_change.get());
    // anywhere but content inspection, the data is final (HTTP rules, logs)
    assert_eq!(f.v("wait_end"), Some(Sample::Bool(true)));
}

#[test]
fn last_rule_file_and_line_name_the_rule_noted_in_the_stream() {
    use crate::action::RuleAt;
    let mut f = Fx::new();
    f.rt.rule_files = vec!["/etc/a.cfg".into(), "/etc/b.cfg".into()].into_boxed_slice();
    assert_eq!((f.v("last_rule_file"), f.v("last_rule_line")), (None, None), "no rule yet");
    let ctx = SampleCtx { last_rule: Some(RuleAt { file: 1, line: 42 }), ..f.ctx() };
    let v = |t: &str| compile_in(&f.cfg, 0, t).unwrap().eval(&ctx).map(Sample::into_owned);
    assert_eq!(v("last_rule_file"), st("/etc/b.cfg"));
    assert_eq!(v("last_rule_line"), i(42));
}

/// `req.len`/`res.len` on HTTP streams: HAProxy 2.6's HTX size (reg-test
/// sample_fetches/cond_set_var: this request is 67 there), the held body included.
#[test]
fn req_len_in_http_is_haproxys_message_size() {
    let cfg = config(CFG);
    let rt = runtime(&cfg);
    let c = conn();
    const RAW: &[u8] = b"GET /converter HTTP/1.1\r\nX-Cust: foobar\r\nHost: 127.0.0.1\r\n\r\n";
    let req = req_head(RAW);
    let ctx = SampleCtx { req: Some(req.view(RAW)), ..SampleCtx::new(&rt, &c, 0) };
    let eval = |ctx: &SampleCtx<'_>, t: &str| compile_in(&cfg, 0, t).unwrap().eval(ctx).map(Sample::into_owned);
    assert_eq!(eval(&ctx, "req.len"), i(67));
    let with_body = SampleCtx { req_body: Some(b"abc"), ..ctx };
    assert_eq!(eval(&with_body, "req.len"), i(70));
    // 20 + "HTTP/1.1" + "302" + "Found" + headers + 1
    let f = Fx::new();
    let res_ctx = SampleCtx { dir: crate::sample::ctx::Dir::Response, ..f.ctx() };
    let hdrs: usize = [("Location", "/x"), ("Set-Cookie", "SRV=s1; Path=/; HttpOnly"), ("Set-Cookie", "lang=en")]
        .iter()
        .chain(&[("Cache-Control", "no-cache, private")])
        .map(|(n, v)| n.len() + v.len())
        .sum();
    assert_eq!(eval(&res_ctx, "res.len"), i((20 + 8 + 3 + 5 + hdrs + 1) as i64));
}
