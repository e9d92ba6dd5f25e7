//! Tests of the expression compiler and evaluator, with a few test-only converters
//! (the real ones live in `conv/`). Messages were checked against haproxy 2.6.12
//! (`haproxy -c` on `http-request set-header X %[<expr>]`).

use std::borrow::Cow;

use super::ctx::SampleCtx;
use super::expr::{compile_prefix, compile_words, CompileCx, ExprError, Place, Site};
use super::kw::{Arg, ArgSpec, ArgT, ConvKw};
use super::testutil::*;
use super::types::{Sample, SmpType};

fn conv_upper<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    match smp {
        Sample::Str(s) => Some(Sample::Str(Cow::Owned(s.to_ascii_uppercase()))),
        _ => None,
    }
}

fn conv_len<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    match smp {
        Sample::Str(s) => Some(Sample::Sint(s.len() as i64)),
        _ => None,
    }
}

/// Appends its arguments (integer, then optional string) as text.
fn conv_args<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let Sample::Str(s) = smp else { return None };
    let mut v = s.into_owned();
    for a in args {
        match a {
            Arg::Sint(i) => v.extend_from_slice(format!("[{i}]").as_bytes()),
            Arg::Str(b) => v.extend_from_slice(&[b"[", &b[..], b"]"].concat()),
            Arg::Ipv4(m) => v.extend_from_slice(format!("[{m}]").as_bytes()),
            Arg::Ipv6(m) => v.extend_from_slice(format!("[{m}]").as_bytes()),
            Arg::Regex(r) => v.extend_from_slice(format!("[/{}/]", r.as_str()).as_bytes()),
            Arg::Proxy(p) => v.extend_from_slice(format!("[px{p}]").as_bytes()),
            Arg::Server(p, s) => v.extend_from_slice(format!("[px{p}/srv{s}]").as_bytes()),
            _ => {}
        }
    }
    Some(Sample::Str(Cow::Owned(v)))
}

fn conv_fail<'a>(_: &'a [Arg], _: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    None
}

pub(super) const CONVERTERS: &[ConvKw] = &[
    ConvKw::new("t-upper", ArgSpec::NONE, SmpType::Str, SmpType::Str, conv_upper),
    ConvKw::new("t-len", ArgSpec::NONE, SmpType::Str, SmpType::Sint, conv_len),
    ConvKw::new("t-args", ArgSpec::new(&[ArgT::Sint, ArgT::Str], 1), SmpType::Str, SmpType::Str, conv_args),
    ConvKw::new("t-regsub", ArgSpec::new(&[ArgT::Regex, ArgT::Str], 2), SmpType::Str, SmpType::Str, conv_args),
    ConvKw::new("t-mask", ArgSpec::new(&[ArgT::Msk4, ArgT::Msk6], 1), SmpType::Addr, SmpType::Str, conv_fail),
    ConvKw::new("t-ip", ArgSpec::NONE, SmpType::Ipv4, SmpType::Ipv4, |_, s, _| Some(s)),
    ConvKw::new("t-be", ArgSpec::new(&[ArgT::Backend], 1), SmpType::Str, SmpType::Str, conv_args),
    ConvKw::new("t-srv", ArgSpec::new(&[ArgT::Server], 1), SmpType::Str, SmpType::Str, conv_args),
    ConvKw::new("t-fail", ArgSpec::NONE, SmpType::Any, SmpType::Any, conv_fail),
    ConvKw::new("t-time", ArgSpec::new(&[ArgT::Time, ArgT::Size], 1), SmpType::Str, SmpType::Str, conv_args),
];

/// The message of a failed compile in frontend `fe`.
fn err(text: &str) -> String {
    let cfg = config(CFG);
    compile_in(&cfg, 0, text).map(|_| ()).unwrap_err().to_string()
}

/// The value of a constant expression.
fn val(text: &str) -> Option<Sample<'static>> {
    let cfg = config(CFG);
    let rt = runtime(&cfg);
    let c = conn();
    let e = compile_in(&cfg, 0, text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let ctx = SampleCtx::new(&rt, &c, 0);
    e.eval(&ctx).map(Sample::into_owned)
}

#[test]
fn haproxy_messages_for_fetches() {
    assert_eq!(err(""), "missing fetch method");
    assert_eq!(err("(a)"), "missing fetch method");
    assert_eq!(err("req.hdrr(host)"), "unknown fetch method 'req.hdrr'");
    assert_eq!(err("int"), "fetch method 'int' : expected type 'integer' at position 1, but got nothing");
    assert_eq!(err("int()"), "fetch method 'int' : expected type 'integer' at position 1, but got nothing");
    assert_eq!(err("int(12a)"), "fetch method 'int' : failed to parse '12a' as type 'integer' at position 1");
    assert_eq!(err("str(a,b)"), "fetch method 'str' : expected ')' before ',b)'");
    assert_eq!(err("str(a\"b)"), "fetch method 'str' : expected ')'");
    assert_eq!(err("always_true(1)"), "fetch method 'always_true' : expected ')' before '1)'");
    assert_eq!(err("str(a)b"), "missing comma after fetch keyword 'str'");
    assert_eq!(err("int(1"), "fetch method 'int' : expected ')'");
    assert_eq!(
        err("var(foo)"),
        "invalid args in fetch method 'var' : invalid variable name 'foo'. A variable name must be start by \
         its scope. The scope can be 'proc', 'sess', 'txn', 'req', 'res' or 'check'"
    );
    assert_eq!(err("var(txn.a-b)"), "invalid args in fetch method 'var' : invalid syntax at char '-b'");
    assert_eq!(err("bool(yes)"), "invalid args in fetch method 'bool' : Expects 'true', 'false', '0' or '1'");
    assert_eq!(err("bin(abc)"), "invalid args in fetch method 'bin' : an even number of hex digit is expected");
    assert_eq!(err("bin(zz)"), "invalid args in fetch method 'bin' : an hex digit is expected (found 'z')");
    assert_eq!(err("meth(G(T)"), "invalid args in fetch method 'meth' : expects valid method.");
    assert_eq!(err("meth(\"G T\")"), "invalid args in fetch method 'meth' : expects valid method.");
    assert_eq!(err("date(0,h)"), "invalid args in fetch method 'date' : expects 's', 'ms' or 'us', got 'h'");
    assert_eq!(
        err("ipv4(1.2.3)"),
        "fetch method 'ipv4' : failed to parse '1.2.3' as type 'IPv4 address' at position 1"
    );
}

#[test]
fn haproxy_messages_for_converters() {
    assert_eq!(err("str(a),lowerr"), "unknown converter 'lowerr'");
    assert_eq!(err("str(a),t-upper(1)"), "invalid arg 1 in converter 't-upper' : expected ')' before '1)'");
    assert_eq!(err("str(a),t-upper()x"), "missing comma after converter 't-upper'");
    assert_eq!(
        err("str(a),t-regsub"),
        "invalid arg 2 in converter 't-regsub' : missing arguments (got 1/2), type 'string' expected"
    );
    assert_eq!(err("str(a),t-args(1,2,3,4)"), "invalid arg 2 in converter 't-args' : expected ')' before ',3,4)'");
    assert_eq!(
        err("str(a),t-args(x)"),
        "invalid arg 1 in converter 't-args' : failed to parse 'x' as type 'integer' at position 1"
    );
    assert_eq!(
        err("str(a),t-mask(abc)"),
        "invalid arg 1 in converter 't-mask' : failed to parse 'abc' as type 'IPv4 mask' at position 1"
    );
    assert_eq!(
        err("str(a),t-mask(24,abc)"),
        "invalid arg 2 in converter 't-mask' : failed to parse 'abc' as type 'IPv6 mask' at position 2"
    );
    assert_eq!(
        err("str(a),t-mask(33)"),
        "invalid arg 1 in converter 't-mask' : failed to parse '33' as type 'IPv4 mask' at position 1"
    );
    assert_eq!(err("always_true,t-ip"), "converter 't-ip' cannot be applied");
    assert_eq!(err("str(x),set-var(foo)"), "invalid args in converter 'set-var' : invalid variable name 'foo'. A variable name must be start by its scope. The scope can be 'proc', 'sess', 'txn', 'req', 'res' or 'check'");
    assert_eq!(err("str(x),set-var(txn.a,ifbig)"), "invalid args in converter 'set-var' : unknown condition \"ifbig\"");
    assert_eq!(
        err("str(a),t-time(1x)"),
        "invalid arg 1 in converter 't-time' : failed to parse '1x' as type 'delay' at position 1"
    );
    assert_eq!(
        err("str(a),t-time(1s,2q)"),
        "invalid arg 2 in converter 't-time' : failed to parse '2q' as type 'size' at position 2"
    );
}

#[test]
fn the_empty_converter_after_a_comma_is_unknown_in_log_formats() {
    let cfg = config(CFG);
    let mut cx = CompileCx::new(&cfg, 0, Site::Log);
    let e = compile_prefix("str(a),]", &mut cx).map(|_| ()).unwrap_err();
    assert_eq!(e.to_string(), "unknown converter ''");
    assert_eq!(e.hint(), None);
}

#[test]
fn unknown_keywords_get_a_suggestion() {
    let cfg = config(CFG);
    let e = compile_in(&cfg, 0, "strr(a)").unwrap_err();
    assert_eq!(e, ExprError::UnknownFetch { name: "strr".into(), suggestion: Some("str") });
    assert_eq!(e.hint().as_deref(), Some("did you mean 'str' ?"));
    let e = compile_in(&cfg, 0, "str(a),t-uper").unwrap_err();
    assert_eq!(e.hint().as_deref(), Some("did you mean 't-upper' ?"));
    let e = compile_in(&cfg, 0, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzz").unwrap_err();
    assert_eq!(e.hint(), None);
}

#[test]
fn names_resolve_with_haproxy_messages() {
    assert_eq!(
        err("str(a),t-be(nope)"),
        "unable to find backend 'nope' referenced in arg 1 of conversion keyword 't-be' for sample fetch \
         keyword 'str' in http-request expression in proxy 'fe'"
    );
    assert_eq!(
        err("str(a),t-be"),
        "proxy 'fe', referenced in arg 1 of conversion keyword 't-be' for sample fetch keyword 'str' in \
         http-request expression in proxy 'fe', has not backend capability"
    );
    assert_eq!(
        err("str(a),t-srv(foo)"),
        "unable to find server 'foo' in proxy 'fe', referenced in arg 1 of conversion keyword 't-srv' for \
         sample fetch keyword 'str' in http-request expression in proxy 'fe'"
    );
    assert_eq!(
        err("str(a),t-srv(be/nope)"),
        "unable to find server 'nope' in proxy 'be', referenced in arg 1 of conversion keyword 't-srv' for \
         sample fetch keyword 'str' in http-request expression in proxy 'fe'"
    );
    assert_eq!(
        err("str(a),t-srv(nope/s1)"),
        "unable to find proxy 'nope' referenced in arg 1 of conversion keyword 't-srv' for sample fetch \
         keyword 'str' in http-request expression in proxy 'fe'"
    );
    let re = err("str(a),t-regsub(a(,b)");
    assert!(re.starts_with("error in regex 'a(' in arg 1 of conversion keyword 't-regsub' for sample fetch keyword 'str' in http-request expression in proxy 'fe' : regex 'a(' is invalid ("), "{re}");
    let cfg = config(CFG);
    assert!(compile_in(&cfg, 0, "str(a),t-be(nope)").unwrap_err().is_resolve());
    assert_eq!(val("str(a),t-be(be)"), Some(s("a[px1]")));
    assert_eq!(val("str(a),t-srv(be/s2)"), Some(s("a[px1/srv1]")));
    let e = compile_in(&cfg, 2, "str(a),t-srv(s3),t-be").unwrap();
    let rt = runtime(&cfg);
    let c = conn();
    assert_eq!(e.eval(&SampleCtx::new(&rt, &c, 2)).map(Sample::into_owned), Some(s("a[px2/srv0][px2]")));
}

#[test]
fn arguments_unquote_like_haproxy() {
    assert_eq!(val("str(\"a,b)\")"), Some(s("a,b)")));
    assert_eq!(val("str('a,\"b')"), Some(s("a,\"b")));
    assert_eq!(val(r"str('a\tb')"), Some(s(r"a\tb")));
    assert_eq!(val(r"str(a\tb)"), Some(s("a\tb")));
    assert_eq!(val(r"str(a\ b)"), Some(s("a b")));
    assert_eq!(err(r"str(a\ b\,c)"), "fetch method 'str' : expected ')' before ',c)'");
    assert_eq!(val(r#"str(a\"b)"#), Some(s("a\"b")));
    assert_eq!(val(r"str(a\x\\y\r\n)"), Some(s("a\\x\\y\r\n")));
    assert_eq!(val(r"str(ab\)"), Some(s(r"ab\")));
    assert_eq!(val("str()"), Some(s("")));
    assert_eq!(val("str"), Some(s("")));
    assert_eq!(val("str(a),t-args(-3)"), Some(s("a[-3]")));
    assert_eq!(val("str(a),t-args(+3,)"), Some(s("a[3][]")));
    assert_eq!(val("str(a),t-args(3,x y)"), Some(s("a[3][x y]")));
    assert_eq!(val("str(a),t-mask(255.255.0.0)"), None);
    assert_eq!(val("str(a),t-time(1s,2k)"), Some(s("a[1000][2048]")));
    assert_eq!(val("str(a),t-time(10us)"), Some(s("a[1]")));
}

#[test]
fn casts_run_between_converters() {
    assert_eq!(val("int(42),t-len"), Some(Sample::Sint(2)));
    assert_eq!(val("str(abc),t-upper,t-len"), Some(Sample::Sint(3)));
    assert_eq!(val("str(abc),t-len,t-upper"), Some(s("3")));
    assert_eq!(val("ipv4(10.1.2.3),t-len"), Some(Sample::Sint(8)));
    assert_eq!(val("str(10.1.2.3),t-ip"), Some(Sample::Ipv4("10.1.2.3".parse().unwrap())));
    assert_eq!(val("str(nope),t-ip"), None);
    assert_eq!(val("str(a),t-fail"), None);
    assert_eq!(val("meth(GET),t-upper"), Some(s("GET")));
    assert_eq!(val("bin(414200),t-upper"), Some(s("AB")));
    assert_eq!(val("bool(true),t-upper"), Some(s("1")));
    assert_eq!(val("str(a),,t-upper"), Some(s("A")));
}

#[test]
fn output_types_follow_the_chain() {
    let cfg = config(CFG);
    assert_eq!(compile_in(&cfg, 0, "str(a)").unwrap().out_type(), SmpType::Str);
    assert_eq!(compile_in(&cfg, 0, "str(a),t-len").unwrap().out_type(), SmpType::Sint);
    assert_eq!(compile_in(&cfg, 0, "var(txn.x)").unwrap().out_type(), SmpType::Any);
    assert_eq!(compile_in(&cfg, 0, "var(txn.x),t-ip").unwrap().out_type(), SmpType::Ipv4);
}

#[test]
fn prefixes_and_word_lists() {
    let cfg = config(CFG);
    let mut cx = CompileCx::new(&cfg, 0, Site::Log);
    let (e, n) = compile_prefix("str(a),t-upper] tail", &mut cx).unwrap();
    assert_eq!((e.convs.len(), n), (1, 14));
    let (_, n) = compile_prefix("str(a)x", &mut cx).unwrap();
    assert_eq!(n, 6);
    let (_, n) = compile_prefix("str(a),", &mut cx).unwrap();
    assert_eq!(n, 7);
    let mut idx = 1;
    let e = compile_words(&["set-var(x)", "str(a),", "t-upper", "if", "TRUE"], &mut idx, &mut cx).unwrap();
    assert_eq!((e.convs.len(), idx), (1, 3));
    let mut idx = 0;
    let e = compile_words(&["str(a)", "t-upper", "t-len"], &mut idx, &mut cx).unwrap();
    assert_eq!((e.convs.len(), idx), (2, 3));
    let mut idx = 0;
    let e = compile_words(&["str(a)", "unless"], &mut idx, &mut cx).unwrap();
    assert_eq!((e.convs.len(), idx), (0, 1));
    // a HAProxy converter rampart lacks, as its own word, is not taken for the next word
    let mut idx = 0;
    let e = compile_words(&["str(a)", "table_idle(t)"], &mut idx, &mut cx).unwrap_err();
    assert_eq!(e.to_string(), "'table_idle' is not supported yet");
}

#[test]
fn haproxy_keywords_rampart_lacks_are_not_supported_yet() {
    assert_eq!(err("src_updt_conn_cnt"), "'src_updt_conn_cnt' is not supported yet");
    assert_eq!(err("distcc_body(x)"), "'distcc_body' is not supported yet");
    assert_eq!(err("str(a),ungrpc(1)"), "'ungrpc' is not supported yet");
    assert_eq!(err("str(a),table_expire(t)"), "'table_expire' is not supported yet");
    // words HAProxy does not know either keep its message
    assert_eq!(err("sc9_conn_cur"), "unknown fetch method 'sc9_conn_cur'");
}

#[test]
fn places_refuse_data_that_does_not_exist_there() {
    let cfg = config(CFG);
    let e = compile_in(&cfg, 0, "str(a)").unwrap();
    assert!(e.valid_at(Place::FeConAcc) && e.valid_at(Place::CfgParser));
    let e = compile_in(&cfg, 0, "stopping").unwrap();
    assert_eq!(e.check_place(Place::CfgParser), Err("internal state".into()));
    assert!(e.valid_at(Place::FeLogEnd));
}

#[test]
fn proc_variables_are_noted_for_declaration() {
    let cfg = config(CFG);
    let mut cx = CompileCx::new(&cfg, 0, Site::HttpReq);
    super::expr::compile("var(proc.a),set-var(proc.b),set-var(txn.c)", &mut cx).unwrap();
    let names: Vec<&str> = cx.proc_vars.iter().map(|v| &*v.name).collect();
    assert_eq!(names, ["proc.a", "proc.b"]);
}

#[test]
fn constants() {
    assert_eq!(val("always_true"), Some(Sample::Bool(true)));
    assert_eq!(val("always_false"), Some(Sample::Bool(false)));
    assert_eq!(val("int(-5)"), Some(Sample::Sint(-5)));
    assert_eq!(val("bool(TRUE)"), Some(Sample::Bool(true)));
    assert_eq!(val("bool(0)"), Some(Sample::Bool(false)));
    assert_eq!(val("ipv4(127.0.0.1)"), Some(Sample::Ipv4("127.0.0.1".parse().unwrap())));
    assert_eq!(val("ipv6(::1)"), Some(Sample::Ipv6("::1".parse().unwrap())));
    assert_eq!(val("bin(00ff41)"), Some(Sample::Bin(Cow::Owned(vec![0, 255, 0x41]))));
    assert_eq!(val("meth(PUT)"), Some(Sample::Meth(crate::http::Method::Put, Cow::Owned(b"PUT".to_vec()))));
    assert_eq!(val("meth(PURGE)"), Some(Sample::Meth(crate::http::Method::Other, Cow::Owned(b"PURGE".to_vec()))));
    assert_eq!(val("nbproc"), Some(Sample::Sint(1)));
    assert_eq!(val("stopping"), Some(Sample::Bool(false)));
}

#[test]
fn env_date_and_rand() {
    std::env::set_var("RAMPART_SAMPLE_TEST", "v1");
    assert_eq!(val("env(RAMPART_SAMPLE_TEST)"), Some(s("v1")));
    assert_eq!(val("env(RAMPART_SAMPLE_NOPE)"), None);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let Some(Sample::Sint(d)) = val("date") else { panic!() };
    assert!((now..now + 2).contains(&d));
    let Some(Sample::Sint(d)) = val("date(3600)") else { panic!() };
    assert!((now + 3600..now + 3602).contains(&d));
    let Some(Sample::Sint(d)) = val("date(0,ms)") else { panic!() };
    assert!((now * 1000..(now + 2) * 1000).contains(&d));
    let Some(Sample::Sint(d)) = val("date(-1,us)") else { panic!() };
    assert!((now * 1_000_000 - 1..(now + 2) * 1_000_000).contains(&d));
    for _ in 0..100 {
        let Some(Sample::Sint(r)) = val("rand(10)") else { panic!() };
        assert!((0..10).contains(&r));
    }
    let Some(Sample::Sint(r)) = val("rand") else { panic!() };
    assert!((0..1 << 32).contains(&r));
}

/// A cheap stand-in for the `sample_expr` fuzz target when cargo-fuzz is absent:
/// random texts built from keyword fragments and delimiters compile (or not) and
/// evaluate without panicking.
#[test]
fn random_texts_never_panic() {
    use crate::log::{LfMode, LogFormat};
    use crate::sample::fetch::internal::random32;
    const PIECES: &[&str] = &[
        "req.hdr",
        "req.cook",
        "url_param",
        "path",
        "base32",
        "src",
        "int",
        "str",
        "bin",
        "var",
        "set-var",
        "txn.x",
        "proc.y",
        "req.payload_lv",
        "req.ssl_sni",
        "t-args",
        "t-regsub",
        "t-srv",
        "date",
        "(",
        ")",
        ",",
        "\"",
        "'",
        "\\",
        " ",
        "-",
        "1",
        "-11",
        "99999999999999999999",
        "%",
        "%[",
        "]",
        "%{+Q}",
        "{",
        "}",
        "é",
        "\0",
        "be/s1",
        "a(",
        "*",
        "+",
        "ms",
        ":",
        ".",
        "t-time",
        "meth",
        "ipv6",
        "::1",
    ];
    let cfg = config(CFG);
    let rt = runtime(&cfg);
    let c = conn();
    let buf = b"GET /a?p=1 HTTP/1.1\r\nHost: h\r\nCookie: a=1\r\nX: 1, 2\r\n\r\n";
    let head = req_head(buf);
    let payload = [0x16u8, 3, 1, 0, 60, 1, 0, 0, 56, 3, 3];
    let ctx = SampleCtx { req: Some(head.view(buf)), payload: Some(&payload), ..SampleCtx::new(&rt, &c, 0) };
    for _ in 0..600 {
        let n = 1 + random32() as usize % 8;
        let text: String = (0..n).map(|_| PIECES[random32() as usize % PIECES.len()]).collect();
        let mut cx = CompileCx::new(&cfg, 1, Site::HttpReq);
        if let Ok(e) = super::expr::compile(&text, &mut cx) {
            let _ = e.eval(&ctx);
            e.each(&ctx, &mut |_| true);
        }
        if let Ok(lf) = LogFormat::compile(&text, &mut cx, LfMode::Log, &[]) {
            lf.render(&ctx, &mut Vec::new());
        }
    }
}

#[test]
fn compiled_forms_are_shared_across_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<super::expr::Expr>();
    shared::<crate::log::LogFormat>();
    shared::<super::vars::ProcVars>();
}
