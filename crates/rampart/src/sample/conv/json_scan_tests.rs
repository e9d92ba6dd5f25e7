use super::*;

#[test]
fn strtod_as_mjson() {
    for (s, d, n) in [
        (&b"4.5,"[..], 4.5, 3),
        (b"-4}", -4.0, 2),
        (b"1e3", 1000.0, 3),
        (b"1E+2", 100.0, 4),
        (b"2.5e-3", 0.0025, 6),
        (b"-.5", -0.5, 3),
        (b"012", 12.0, 3),
        // read but not a number: length 0
        (b"1.", 1.0, 0),
        (b"-", 0.0, 0),
        (b"x", 0.0, 0),
        (b"", 0.0, 0),
        // an exponent without digits is taken
        (b"1e", 1.0, 2),
        (b"1e-+5", 0.00001, 5),
    ] {
        assert_eq!(strtod(s), (d, n), "{}", String::from_utf8_lossy(s));
    }
    assert_eq!(strtod(b"1e400").0, f64::INFINITY);
    assert!(strtod(b"0e999").0.is_nan());
    // the exponent wraps as a C int: 4294967297 is 1
    assert_eq!(strtod(b"3e4294967297"), (30.0, 12));
}

/// The tokens of a scan of `s`, and whether it went through.
fn tokens(s: &[u8]) -> (Vec<(Tok, String)>, bool) {
    let mut out = Vec::new();
    let ok = scan(s, &mut |t, off, len| {
        out.push((t, String::from_utf8_lossy(&s[off..off + len]).into_owned()));
        false
    });
    (out, ok.is_ok())
}

#[test]
fn scan_tokens() {
    let (t, ok) = tokens(br#" {"a" : [1, -2.5e1, "x\"y"], "b":{}} trailing"#);
    assert!(ok);
    let want = [
        (Tok::Open(b'{'), "{"),
        (Tok::Key, "\"a\""),
        (Tok::Colon, ":"),
        (Tok::Open(b'['), "["),
        (Tok::Num, "1"),
        (Tok::Comma, ","),
        (Tok::Num, "-2.5e1"),
        (Tok::Comma, ","),
        (Tok::Str, "\"x\\\"y\""),
        (Tok::Close(b']'), "]"),
        (Tok::Comma, ","),
        (Tok::Key, "\"b\""),
        (Tok::Colon, ":"),
        (Tok::Open(b'{'), "{"),
        (Tok::Close(b'}'), "}"),
        (Tok::Close(b'}'), "}"),
    ];
    let got: Vec<(Tok, &str)> = t.iter().map(|(k, s)| (*k, s.as_str())).collect();
    assert_eq!(got, want);
}

#[test]
fn scan_accepts_and_refuses_as_mjson() {
    assert!(tokens(b"[1,2,]").1, "trailing comma in an array");
    assert!(tokens(br#"{"a":1,}"#).1, "trailing comma in an object");
    assert!(tokens(b"7").1);
    assert!(tokens(b"true").1);
    assert!(!tokens(b"tru").1);
    assert!(!tokens(br#"{"a":1"#).1, "cut");
    assert!(!tokens(b"{]").1);
    assert!(!tokens(b"[}").1);
    assert!(!tokens(br#"{"a" 1}"#).1);
    assert!(!tokens(br#"{"a":.5}"#).1);
    assert!(!tokens(b"\"a\x00b\"").1, "NUL in a string");
    // a number mjson cannot read is reported empty, then fails
    let (t, ok) = tokens(b"[1.]");
    assert!(!ok);
    assert_eq!(t.last(), Some(&(Tok::Num, String::new())));
    // 20 levels, not 21
    let deep = |n: usize| [b"[".repeat(n), b"1".to_vec(), b"]".repeat(n)].concat();
    assert!(tokens(&deep(20)).1);
    assert!(!tokens(&deep(21)).1);
}

#[test]
fn find_follows_the_path() {
    let f = |s: &str, p: &str| find(s.as_bytes(), p.as_bytes()).map(|(t, o, l)| (t, s[o..o + l].to_owned()));
    let doc = r#"{"a":{"b":[10,{"c":"x"},[1,2]]},"d":true,"e.f":1}"#;
    assert_eq!(f(doc, "$.a.b[0]"), Some((Tok::Num, "10".into())));
    assert_eq!(f(doc, "$.a.b[1].c"), Some((Tok::Str, "\"x\"".into())));
    assert_eq!(f(doc, "$.a.b[2]"), Some((Tok::Open(b'['), "[1,2]".into())));
    assert_eq!(f(doc, "$.a"), Some((Tok::Open(b'{'), r#"{"b":[10,{"c":"x"},[1,2]]}"#.into())));
    assert_eq!(f(doc, "$.d"), Some((Tok::True, "true".into())));
    assert_eq!(f(doc, "$.e\\.f"), Some((Tok::Num, "1".into())));
    assert_eq!(f(doc, "$.e.f"), None);
    assert_eq!(f(doc, "$.x"), None);
    assert_eq!(f(doc, "a"), None, "a path starts with $");
    // as haproxy 2.6.12 (request bodies through `json_query`): an index that is no
    // number reads as 0, bracketed names are not supported, a cut path still matches
    assert_eq!(f("[5,6]", "$[a]"), Some((Tok::Num, "5".into())));
    assert_eq!(f("[5,6]", "$['a']"), None);
    assert_eq!(f(r#"{"a":1}"#, "$['a']"), None);
    assert_eq!(f(r#"{"a":[7,8]}"#, "$.a[1"), Some((Tok::Num, "8".into())));
    assert_eq!(f(r#"{"a":[7,8]}"#, "$.a["), Some((Tok::Num, "7".into())));
    assert_eq!(f(r#"{"":3}"#, "$."), Some((Tok::Num, "3".into())));
    assert_eq!(f(r#"{"a":1}"#, "$..a"), None);
    // found before the input goes wrong
    assert_eq!(f(r#"{"a":1,,}"#, "$.a"), Some((Tok::Num, "1".into())));
    // a NUL ends the path
    assert_eq!(f(r#"{"a":1}"#, "$.a\0.b"), Some((Tok::Num, "1".into())));
}
