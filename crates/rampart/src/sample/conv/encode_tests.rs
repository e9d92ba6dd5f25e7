//! Expected values come from haproxy 2.6.12 (`str(...)` or `bin(<hex>)` then the
//! converter, through `lf-string`; "absent" is an ACL `-m found` that did not match).

use super::super::testing::{bin, bytes, check, i, int, run, s, st, text};
use crate::sample::kw::Arg;
use crate::sample::types::Sample;

fn unhex(h: &str) -> Vec<u8> {
    (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap()).collect()
}

fn on_bin(name: &str, args: Vec<Arg>, hex_in: &str) -> Option<String> {
    let input = unhex(hex_in);
    text(name, args, bin(&input))
}

#[test]
fn base64_encode() {
    assert_eq!(text("base64", vec![], st("abc")).as_deref(), Some("YWJj"));
    assert_eq!(text("base64", vec![], st("ab")).as_deref(), Some("YWI="));
    assert_eq!(text("base64", vec![], st("a")).as_deref(), Some("YQ=="));
    assert_eq!(text("base64", vec![], st("")).as_deref(), Some(""));
    assert_eq!(text("ub64enc", vec![], st("abc")).as_deref(), Some("YWJj"));
    assert_eq!(text("ub64enc", vec![], st("ab")).as_deref(), Some("YWI"));
    assert_eq!(text("ub64enc", vec![], st("a")).as_deref(), Some("YQ"));
    assert_eq!(on_bin("ub64enc", vec![], "fbffbf").as_deref(), Some("-_-_"));
    assert_eq!(on_bin("base64", vec![], "fbffbf").as_deref(), Some("+/+/"));
}

#[test]
fn base64_decode() {
    let dec = |name: &str, v: &str| bytes(run(name, vec![], st(v)));
    assert_eq!(dec("b64dec", "YWJj").as_deref(), Some(&b"abc"[..]));
    assert_eq!(dec("b64dec", "YWI=").as_deref(), Some(&b"ab"[..]));
    assert_eq!(dec("b64dec", "YQ==").as_deref(), Some(&b"a"[..]));
    assert_eq!(dec("b64dec", "YR==").as_deref(), Some(&b"a"[..]));
    assert_eq!(dec("b64dec", "YWJjYQ==").as_deref(), Some(&b"abca"[..]));
    assert_eq!(dec("b64dec", "").as_deref(), Some(&b""[..]));
    for bad in ["YQ=", "YQ", "====", "Y-_a", "YW Jj"] {
        assert_eq!(dec("b64dec", bad), None, "{bad}");
    }
    assert_eq!(dec("ub64dec", "YQ").as_deref(), Some(&b"a"[..]));
    assert_eq!(dec("ub64dec", "YWI").as_deref(), Some(&b"ab"[..]));
    assert_eq!(dec("ub64dec", "YR").as_deref(), Some(&b"a"[..]));
    assert_eq!(dec("ub64dec", "-_-_").as_deref(), Some(&[0xfb, 0xff, 0xbf][..]));
    for bad in ["Y", "+/+/"] {
        assert_eq!(dec("ub64dec", bad), None, "{bad}");
    }
    assert!(matches!(run("b64dec", vec![], st("YWJj")), Some(Sample::Bin(_))));
}

#[test]
fn hex_and_hex2i() {
    assert_eq!(text("hex", vec![], st("abc")).as_deref(), Some("616263"));
    assert_eq!(on_bin("hex", vec![], "00ff10").as_deref(), Some("00FF10"));
    assert_eq!(int("hex2i", vec![], st("1a")), Some(26));
    assert_eq!(int("hex2i", vec![], st("FF")), Some(255));
    assert_eq!(int("hex2i", vec![], st("abc")), Some(2748));
    assert_eq!(int("hex2i", vec![], st("")), Some(0));
    assert_eq!(int("hex2i", vec![], st("ffffffffffffffffff")), Some(-1));
    assert_eq!(int("hex2i", vec![], st("zz")), None);
    assert_eq!(int("hex2i", vec![], st("-1")), None);
}

#[test]
fn be2dec() {
    let x = "01020304050607";
    assert_eq!(on_bin("be2dec", vec![s(":"), i(2)], x).as_deref(), Some("258:772:1286:7"));
    assert_eq!(on_bin("be2dec", vec![s("-"), i(2), i(1)], x).as_deref(), Some("258-772-1286"));
    assert_eq!(on_bin("be2dec", vec![s(""), i(2), i(1)], x).as_deref(), Some("2587721286"));
    assert_eq!(on_bin("be2dec", vec![s("."), i(1)], "7f000001").as_deref(), Some("127.0.0.1"));
    assert_eq!(on_bin("be2dec", vec![s("."), i(8)], "ffffffffffffffff").as_deref(), Some("18446744073709551615"));
    assert_eq!(on_bin("be2dec", vec![s(":"), i(4), i(1)], "0102").as_deref(), Some(""));
    assert_eq!(on_bin("be2dec", vec![s(":"), i(2)], "").as_deref(), Some(""));
    assert_eq!(check("be2dec", vec![s(":")]).unwrap_err(), "chunk_size out of [1..8] range (0)");
    assert_eq!(check("be2dec", vec![s(":"), i(9)]).unwrap_err(), "chunk_size out of [1..8] range (9)");
    assert_eq!(check("be2dec", vec![s(":"), i(2), i(2)]).unwrap_err(), "Unsupported truncate value (2)");
}

#[test]
fn be2hex() {
    let x = "01020304050607";
    assert_eq!(on_bin("be2hex", vec![], x).as_deref(), Some("01020304050607"));
    assert_eq!(on_bin("be2hex", vec![s("")], x).as_deref(), Some("01020304050607"));
    assert_eq!(on_bin("be2hex", vec![s(":"), i(2)], x).as_deref(), Some("0102:0304:0506:07"));
    assert_eq!(on_bin("be2hex", vec![s("--"), i(2), i(1)], x).as_deref(), Some("0102--0304--0506"));
    assert_eq!(on_bin("be2hex", vec![s(""), i(3), i(1)], "0102030405060708").as_deref(), Some("010203040506"));
    assert_eq!(on_bin("be2hex", vec![s(""), i(3)], "0102030405060708").as_deref(), Some("0102030405060708"));
    assert_eq!(on_bin("be2hex", vec![s(":"), i(4), i(1)], "0102").as_deref(), Some(""));
    assert_eq!(check("be2hex", vec![s(":")]).unwrap_err(), "chunk_size needs to be positive (0)");
    assert_eq!(check("be2hex", vec![s(""), i(0), i(1)]).unwrap_err(), "chunk_size needs to be positive (0)");
    assert_eq!(check("be2hex", vec![s(""), i(2), i(3)]).unwrap_err(), "Unsupported truncate value (3)");
}

#[test]
fn htonl() {
    let h = |v: i64| bytes(run("htonl", vec![], Sample::Sint(v))).unwrap();
    assert_eq!(h(1), [0, 0, 0, 1]);
    assert_eq!(h(-1), [0xff; 4]);
    assert_eq!(h(4294967297), [0, 0, 0, 1]);
}

fn json(mode: &str, hex_in: &str) -> Option<String> {
    on_bin("json", vec![s(mode)], hex_in)
}

#[test]
fn json_ascii() {
    assert_eq!(text("json", vec![s("")], st("a\"b\\c/d")).as_deref(), Some("a\\\"b\\\\c\\/d"));
    assert_eq!(json("", "01").as_deref(), Some("\\u0001"));
    assert_eq!(json("", "7f").as_deref(), Some("\\u007f"));
    assert_eq!(json("", "80ff").as_deref(), Some("\\u0080\\u00ff"));
    assert_eq!(json("", "080c0d0a09").as_deref(), Some("\\b\\f\\r\\n\\t"));
    assert_eq!(json("ascii", "c3a9").as_deref(), Some("\\u00c3\\u00a9"));
    assert_eq!(json("", "00").as_deref(), Some("\\u0000"));
}

#[test]
fn json_utf8_modes() {
    let mixed = "c3a9e282acf09f9880"; // é € and an emoji above U+FFFF
    assert_eq!(json("utf8", "c3a9").as_deref(), Some("\\u00e9"));
    assert_eq!(json("utf8", mixed), None);
    assert_eq!(json("utf8s", mixed).as_deref(), Some("\\u00e9\\u20ac"));
    assert_eq!(json("utf8p", mixed), None);
    assert_eq!(json("utf8ps", mixed).as_deref(), Some("\\u00e9\\u20ac"));
    // bad byte
    assert_eq!(json("utf8", "61ff62"), None);
    assert_eq!(json("utf8s", "61ff62").as_deref(), Some("ab"));
    assert_eq!(json("utf8p", "61ff62"), None);
    assert_eq!(json("utf8ps", "61ff62").as_deref(), Some("ab"));
    // overlong '/'
    assert_eq!(json("utf8", "61c0af62"), None);
    assert_eq!(json("utf8s", "61c0af62").as_deref(), Some("ab"));
    assert_eq!(json("utf8p", "61c0af62").as_deref(), Some("a\\/b"));
    assert_eq!(json("utf8ps", "61c0af62").as_deref(), Some("a\\/b"));
    assert_eq!(json("utf8p", "61e08080").as_deref(), Some("a\\u0000"));
    assert_eq!(json("utf8", "61e08080"), None);
    // surrogate, U+FFFF: invalid range
    assert_eq!(json("utf8", "61eda08062"), None);
    assert_eq!(json("utf8p", "61eda08062"), None);
    assert_eq!(json("utf8ps", "61eda08062").as_deref(), Some("ab"));
    assert_eq!(json("utf8", "61efbfbf"), None);
    // truncated and stray sequences
    assert_eq!(json("utf8s", "61c362").as_deref(), Some("ab"));
    assert_eq!(json("utf8s", "61c3").as_deref(), Some("a"));
    assert_eq!(json("utf8ps", "61e282").as_deref(), Some("a"));
    assert_eq!(json("utf8s", "6180").as_deref(), Some("a"));
    assert_eq!(json("utf8s", "61f48fbfbf").as_deref(), Some("a"));
    assert_eq!(json("utf8", "61f4908080"), None);
    assert_eq!(json("utf8ps", "61f8888080").as_deref(), Some("a"));
}

#[test]
fn json_check() {
    let msg = "Unexpected input code type. Allowed value are 'ascii', 'utf8', 'utf8s', 'utf8p' and 'utf8ps'";
    assert_eq!(check("json", vec![s("foo")]).unwrap_err(), msg);
    assert!(check("json", vec![]).is_ok());
}
