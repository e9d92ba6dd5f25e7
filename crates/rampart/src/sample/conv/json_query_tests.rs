//! Expected values come from haproxy 2.6.12: each JSON text was sent as a request body
//! to `http-request set-var(txn.r) req.body,json_query(...)` and the variable read
//! back with `lf-string "%[var(txn.r),concat('[',,']')]"` (absent: no variable set;
//! booleans print as 1/0).

use super::super::testing::{agree, borrows, check, fuzz_inputs, run, s, st, text, Case};
use super::*;

fn json(b: &[u8]) -> Sample<'_> {
    Sample::Str(Cow::Borrowed(b))
}

#[test]
fn values_agree_with_haproxy() {
    agree(JSON_EXPRS, JSON_CASES, json);
}

#[test]
fn the_reg_test_queries() {
    // converter/json_query.vtc: `json_query('$.my\\.key')` reaches the converter as
    // `$.my\.key`, a key with a dot
    assert_eq!(text("json_query", vec![s("$.my\\.key")], st(r#"{"my.key":"myvalue"}"#)).as_deref(), Some("myvalue"));
    assert_eq!(text("json_query", vec![s("$.my\\.key")], st(r#"{"my":{"key":1}}"#)), None);
    assert_eq!(
        text("json_query", vec![s("$.iss")], st(r#"{"iss":"kubernetes.io/serviceaccount"}"#)).as_deref(),
        Some("kubernetes.io/serviceaccount")
    );
    assert_eq!(run("json_query", vec![s("$.integer"), s("int")], st(r#"{"integer":-4}"#)), Some(Sample::Sint(-4)));
    assert_eq!(
        run("json_query", vec![s("$.boolean-false")], st(r#"{"boolean-false":false}"#)),
        Some(Sample::Bool(false))
    );
}

#[test]
fn strings_without_escapes_are_borrowed() {
    assert!(borrows("json_query", vec![s("$.a")], st(r#"{"a":"plain"}"#)));
    assert!(!borrows("json_query", vec![s("$.a")], st(r#"{"a":"t\tab"}"#)));
}

#[test]
fn strings_must_fit_a_buffer() {
    // haproxy decodes into a tune.bufsize chunk, which keeps a byte for its NUL
    let cap = crate::sample::testutil::runtime(&crate::sample::testutil::config(crate::sample::testutil::CFG)).bufsize;
    for (n, fits) in [(cap - 1, true), (cap, false)] {
        for esc in ["", "\\n"] {
            // either way `n` bytes once decoded
            let pad = if esc.is_empty() { n } else { n - 1 };
            let body = format!(r#"{{"a":"{esc}{}"}}"#, "x".repeat(pad));
            let got = run("json_query", vec![s("$.a")], st(&body));
            assert_eq!(got.is_some(), fits, "{n} bytes, escape {esc:?}");
        }
    }
}

#[test]
fn arguments_as_haproxy_checks_them() {
    assert!(matches!(check("json_query", vec![s("$.a"), s("int")]).unwrap()[..], [_, Arg::Sint(1)]));
    assert_eq!(check("json_query", vec![s("$.a"), s("")]).unwrap().len(), 1);
    // as haproxy 2.6.12 words them (`-c` on `req.body,json_query(...)`)
    assert_eq!(check("json_query", vec![s("")]).unwrap_err(), "json_path must not be empty");
    assert_eq!(check("json_query", vec![]).unwrap_err(), "json_path must not be empty");
    assert_eq!(
        check("json_query", vec![s("$.a"), s("str")]).unwrap_err(),
        "output_type only supports \"int\" as argument"
    );
    assert_eq!(
        check("json_query", vec![s("$.a"), s("INT")]).unwrap_err(),
        "output_type only supports \"int\" as argument"
    );
}

#[test]
fn printf_g() {
    let cases: &[(f64, &str)] = &[
        (4.5, "4.5"),
        (0.0, "0"),
        (-0.0, "-0"),
        (100000.0, "100000"),
        (999999.0, "999999"),
        (999999.5, "1e+06"),
        (1234567.0, "1.23457e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (0.000123456789, "0.000123457"),
        (1e100, "1e+100"),
        (-2.5e-300, "-2.5e-300"),
        (123.456, "123.456"),
        (1.5, "1.5"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
        (f64::NAN, "nan"),
        (-f64::NAN, "-nan"),
    ];
    for &(d, want) in cases {
        assert_eq!(fmt_g(d), want, "{d:e}");
    }
}

#[test]
fn strtoll_base_0() {
    for (s, want) in [
        (&b"42,"[..], 42),
        (b"-42}", -42),
        (b"012", 10),
        (b"08", 0),
        (b"0x1f", 31),
        (b"-0X10", -16),
        (b"0x", 0),
        (b"0xg", 0),
        (b"4.5", 4),
        (b"1e5", 1),
        (b"-", 0),
        (b"9223372036854775807", i64::MAX),
        (b"9223372036854775808", i64::MAX),
        (b"-9223372036854775808", i64::MIN),
        (b"-99999999999999999999", i64::MIN),
    ] {
        assert_eq!(strtoll(s), want, "{}", String::from_utf8_lossy(s));
    }
}

#[test]
fn unescaping() {
    let u = |s: &str| unescape(s.as_bytes(), 1000).map(|v| String::from_utf8_lossy(&v).into_owned());
    assert_eq!(u(r#"a\"b\\c\/"#), None, "\\/ is not supported");
    assert_eq!(u(r#"a\"b\\c"#).as_deref(), Some("a\"b\\c"));
    assert_eq!(u(r"\b\f\n\r\t").as_deref(), Some("\u{8}\u{c}\n\r\t"));
    assert_eq!(u(r"\u0041\u007a").as_deref(), Some("Az"));
    assert_eq!(u(r"\u0141"), None);
    // a cut \u escape is an unknown escape
    assert_eq!(u(r"\u004"), None);
    // no hex check: 'g' reads as 'g' - 'W' = 16, and the first digit's bits shift out
    assert_eq!(unescape(br"\u00gg", 10), Some(vec![0x10]));
    assert_eq!(unescape(b"abc", 3), None);
    assert_eq!(unescape(b"abc", 4), Some(b"abc".to_vec()));
}

#[test]
fn random_and_cut_inputs_never_panic() {
    let seeds: Vec<&[u8]> = JSON_CASES.iter().map(|(b, _)| *b).collect();
    let paths: &[&[u8]] = &[b"$", b"$.a", b"$.a.b", b"$.a[1]", b"$[2]", b"$.a[0].c", b"$[", b"$.\\", b"$.a[", b"$.a[1"];
    let mut found = 0;
    for input in fuzz_inputs(&seeds, b"{}[]\":,.\\-0123456789eu", 40, 2000) {
        for path in paths {
            if let Some((_, start, len)) = json_scan::find(&input, path) {
                assert!(start + len <= input.len());
                found += 1;
            }
        }
        let _ = run("json_query", vec![s("$.a"), s("int")], json(&input));
        let _ = run("json_query", vec![s("$.a")], json(&input));
    }
    assert!(found > 1000, "{found}");
}

const JSON_EXPRS: &[(&str, &[&str])] = &[
    ("json_query", &["$.a"]),
    ("json_query", &["$.a", "int"]),
    ("json_query", &["$"]),
    ("json_query", &["$.a.b"]),
    ("json_query", &["$.a[1]"]),
    ("json_query", &["$.a[0]"]),
    ("json_query", &["$[2]"]),
    ("json_query", &["$.a[1].c"]),
    ("json_query", &["$.b"]),
    ("json_query", &["$a"]),
    ("json_query", &["a"]),
    ("json_query", &["$.a.b.c"]),
    ("json_query", &["$.a.b", "int"]),
    ("json_query", &["$[1]", "int"]),
    ("json_query", &["$.k e y"]),
    ("json_query", &["$.a[12]"]),
];

const JSON_CASES: &[Case] = &[
    (b"{\"a\":4.5}", &[(0, b"4.5"), (1, b"4")]),
    (b"{\"a\":-4}", &[(0, b"-4"), (1, b"-4")]),
    (b"{\"a\":4}", &[(0, b"4"), (1, b"4")]),
    (b"{\"a\":0}", &[(0, b"0"), (1, b"0")]),
    (b"{\"a\":-0}", &[(0, b"-0"), (1, b"0")]),
    (b"{\"a\":-0.0}", &[(0, b"-0"), (1, b"0")]),
    (b"{\"a\":012}", &[(0, b"12"), (1, b"10")]),
    (b"{\"a\":0x1F}", &[(0, b"0"), (1, b"31")]),
    (b"{\"a\":08}", &[(0, b"8"), (1, b"0")]),
    (b"{\"a\":1e3}", &[(0, b"1000"), (1, b"1")]),
    (b"{\"a\":1E+2}", &[(0, b"100"), (1, b"1")]),
    (b"{\"a\":2.5e-3}", &[(0, b"0.0025"), (1, b"2")]),
    (b"{\"a\":1e-7}", &[(0, b"1e-07"), (1, b"1")]),
    (b"{\"a\":123456}", &[(0, b"123456"), (1, b"123456")]),
    (b"{\"a\":1234567}", &[(0, b"1.23457e+06"), (1, b"1234567")]),
    (b"{\"a\":999999.5}", &[(0, b"1e+06"), (1, b"999999")]),
    (b"{\"a\":0.0001}", &[(0, b"0.0001"), (1, b"0")]),
    (b"{\"a\":0.00001234}", &[(0, b"1.234e-05"), (1, b"0")]),
    (b"{\"a\":9007199254740991}", &[(0, b"9.0072e+15"), (1, b"9007199254740991")]),
    (b"{\"a\":9007199254740992}", &[(0, b"9.0072e+15")]),
    (b"{\"a\":-9007199254740991}", &[(0, b"-9.0072e+15"), (1, b"-9007199254740991")]),
    (b"{\"a\":-9007199254740992}", &[(0, b"-9.0072e+15")]),
    (b"{\"a\":99999999999999999999}", &[(0, b"1e+20")]),
    (b"{\"a\":-99999999999999999999}", &[(0, b"-1e+20")]),
    (b"{\"a\":1.}", &[(0, b"1"), (1, b"1")]),
    (b"{\"a\":.5}", &[]),
    (b"{\"a\":-}", &[(0, b"0"), (1, b"0")]),
    (b"{\"a\":-.5}", &[(0, b"-0.5"), (1, b"0")]),
    (b"{\"a\":1e}", &[(0, b"1"), (1, b"1")]),
    (b"{\"a\":1e400}", &[(0, b"inf"), (1, b"1")]),
    (b"{\"a\":0e999}", &[(0, b"-nan"), (1, b"0")]),
    (b"{\"a\":1.5e-400}", &[(0, b"0"), (1, b"1")]),
    (b"{\"a\":3.14159265358979}", &[(0, b"3.14159"), (1, b"3")]),
    (b"{\"a\":100000}", &[(0, b"100000"), (1, b"100000")]),
    (b"{\"a\":1000000}", &[(0, b"1e+06"), (1, b"1000000")]),
    (b"{\"a\":0.1}", &[(0, b"0.1"), (1, b"0")]),
    (b"{\"a\":1e5}", &[(0, b"100000"), (1, b"1")]),
    (b"{\"a\":12345.678}", &[(0, b"12345.7"), (1, b"12345")]),
    (b"{\"a\":\"plain\"}", &[(0, b"plain"), (1, b"plain")]),
    (b"{\"a\":\"\"}", &[(0, b""), (1, b"")]),
    (b"{\"a\":\"q\\\"x\"}", &[(0, b"q\"x"), (1, b"q\"x")]),
    (b"{\"a\":\"b\\\\s\"}", &[(0, b"b\\s"), (1, b"b\\s")]),
    // (haproxy's log-format printed the CR and LF as %0D and %0A)
    (b"{\"a\":\"t\\tn\\nr\\r\"}", &[(0, b"t\x09n\nr\r"), (1, b"t\x09n\nr\r")]),
    (b"{\"a\":\"\\u0041\\u00e9\"}", &[(0, b"A\xe9"), (1, b"A\xe9")]),
    (b"{\"a\":\"\\u0101\"}", &[]),
    (b"{\"a\":\"\\u00zz\"}", &[(0, b"3"), (1, b"3")]),
    (b"{\"a\":\"\\/\"}", &[]),
    (b"{\"a\":\"\\x\"}", &[]),
    (b"{\"a\":\"\\u00\"}", &[]),
    (b"{\"a\":\"caf\xc3\xa9\"}", &[(0, b"caf\xc3\xa9"), (1, b"caf\xc3\xa9")]),
    (b"{\"a\":true}", &[(0, b"1"), (1, b"1")]),
    (b"{\"a\":false}", &[(0, b"0"), (1, b"0")]),
    (b"{\"a\":null}", &[]),
    (b"{\"a\":tru}", &[]),
    (b"{\"a\":nul}", &[]),
    (b"{\"a\":[1,2,3]}", &[(4, b"2"), (5, b"1")]),
    (b"{\"a\":{\"b\":1}}", &[(3, b"1"), (12, b"1")]),
    (b"{\"a\":{\"b\":\"x\",\"c\":2}}", &[(3, b"x"), (12, b"x")]),
    (b"{\"a\":{\"c\":2,\"b\":\"y\"}}", &[(3, b"y"), (12, b"y")]),
    (b"{\"a\":{\"b\":{\"c\":7}}}", &[(11, b"7")]),
    (b"{\"a\":[{\"c\":1},{\"c\":2}]}", &[(7, b"2")]),
    (b"{\"a\":[10,{\"c\":\"x\"}]}", &[(5, b"10"), (7, b"x")]),
    (b"{\"a\":[[1,2],[3,4]]}", &[]),
    (b"{\"a\":[1,[2,3],4]}", &[(5, b"1")]),
    (b"{\"a\":[]}", &[]),
    (b"{\"a\":{}}", &[]),
    (b"{\"a\" : 5 , \"b\" : 6 }", &[(0, b"5"), (1, b"5"), (8, b"6")]),
    (b" {\x0a\"a\"\x09:\x0d7\x0a}", &[(0, b"7"), (1, b"7")]),
    (b"{\"b\":1,\"a\":2}", &[(0, b"2"), (1, b"2"), (8, b"1")]),
    (b"{\"a\":1,\"a\":2}", &[(0, b"1"), (1, b"1")]),
    (b"{\"x\":{\"a\":1},\"a\":2}", &[(0, b"2"), (1, b"2")]),
    (b"{\"a\":1,,}", &[(0, b"1"), (1, b"1")]),
    (b"{\"a\":1,}", &[(0, b"1"), (1, b"1")]),
    (b"[1,2,3,]", &[(6, b"3"), (13, b"2")]),
    (b"{\"b\":1,}", &[(8, b"1")]),
    (b"{\"a\" 1}", &[]),
    (b"{\"a\":1", &[(0, b"1"), (1, b"1")]),
    (b"{\"a\":\"x", &[]),
    (b"{a:1}", &[]),
    (b"", &[]),
    (b"   ", &[]),
    (b"x", &[]),
    (b"[1,2,3]", &[(6, b"3"), (13, b"2")]),
    (b"[1,[2],3]", &[(6, b"3")]),
    (b"[\"x\",\"y\",\"z\"]", &[(6, b"z"), (13, b"y")]),
    (b"[{\"a\":1},{\"a\":2}]", &[]),
    (b"7\x0a", &[(2, b"7")]),
    (b"\"top\"", &[(2, b"top")]),
    (b"true", &[(2, b"1")]),
    (b"null", &[]),
    (b"{\"a\":1}garbage", &[(0, b"1"), (1, b"1")]),
    (b"{\"a\":[1,2,3,4,5,6,7,8,9,10,11,12,13]}", &[(4, b"2"), (5, b"1"), (15, b"13")]),
    (b"{\"k e y\":3}", &[(14, b"3")]),
    (b"{\"a\":[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}", &[]),
    (b"{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}", &[]),
    (b"{\"a\":1,\"b\":[[[[[[[[[[[[[[[[[[[[[[[[[}", &[(0, b"1"), (1, b"1")]),
    (b"{\"a\\\"b\":1,\"a\":2}", &[(0, b"2"), (1, b"2")]),
    (b"{\"a\":\"x\x00y\"}", &[]),
    (b"{\"\xff\":1,\"a\":2}", &[(0, b"2"), (1, b"2")]),
    (b"{\"a\":[1,2],\"b\":3}", &[(4, b"2"), (5, b"1"), (8, b"3")]),
    (b"[0,1,2]", &[(6, b"2"), (13, b"1")]),
    (b"{\"a\":{\"b\":1},\"a\":{\"b\":2}}", &[(3, b"1"), (12, b"1")]),
];
