//! Expected values come from haproxy 2.6.12 (`lf-string "%[str(...),conv(...)]"` on
//! a loopback listener; "absent" is an ACL `-m found` that did not match).

use super::super::testing::{bin, borrows, check, i, int, run, s, st, text};
use crate::sample::types::Sample;

#[test]
fn lower_upper_ascii_only() {
    assert_eq!(text("lower", vec![], st("AbC-é")).as_deref(), Some("abc-é"));
    assert_eq!(text("upper", vec![], st("AbC-é")).as_deref(), Some("ABC-é"));
    assert_eq!(text("upper", vec![], st("")).as_deref(), Some(""));
}

#[test]
fn lower_borrows_when_unchanged() {
    assert!(borrows("lower", vec![], st("abc")));
    assert!(!borrows("lower", vec![], st("aBc")));
}

#[test]
fn length_counts_bytes() {
    assert_eq!(int("length", vec![], st("abcdef")), Some(6));
    assert_eq!(int("length", vec![], st("")), Some(0));
    assert_eq!(int("length", vec![], st("é")), Some(2));
}

fn bytes(args: Vec<crate::sample::kw::Arg>, input: &str) -> Option<String> {
    let out = run("bytes", args, bin(input.as_bytes()))?;
    assert!(matches!(out, Sample::Bin(_)));
    super::super::testing::bytes(Some(out)).map(|b| String::from_utf8(b).unwrap())
}

#[test]
fn bytes_offsets_and_lengths() {
    assert_eq!(bytes(vec![i(2)], "abcdef").as_deref(), Some("cdef"));
    assert_eq!(bytes(vec![i(2), i(3)], "abcdef").as_deref(), Some("cde"));
    assert_eq!(bytes(vec![i(6)], "abcdef").as_deref(), Some(""));
    assert_eq!(bytes(vec![i(10)], "abcdef").as_deref(), Some(""));
    assert_eq!(bytes(vec![i(2), i(0)], "abcdef").as_deref(), Some(""));
    assert_eq!(bytes(vec![i(2), i(100)], "abcdef").as_deref(), Some("cdef"));
    // negative values compare as unsigned
    assert_eq!(bytes(vec![i(-1)], "abcdef").as_deref(), Some(""));
    assert_eq!(bytes(vec![i(2), i(-1)], "abcdef").as_deref(), Some("cdef"));
    assert_eq!(bytes(vec![i(0), i(-1)], "abcdef").as_deref(), Some("abcdef"));
}

#[test]
fn bytes_borrows_its_input() {
    assert!(borrows("bytes", vec![i(1), i(2)], bin(b"abcd")));
    assert!(borrows("field", vec![i(2), s("_")], st("a_b_c")));
    assert!(borrows("word", vec![i(-1), s("_")], st("a_b_c")));
    assert!(borrows("ltrim", vec![s(" ")], st("  a")));
    assert!(borrows("rtrim", vec![s(" ")], st("a  ")));
    assert!(borrows("cut_crlf", vec![], st("a\r\n")));
}

fn field(args: Vec<crate::sample::kw::Arg>, input: &str) -> Option<String> {
    text("field", args, st(input))
}

#[test]
fn field_positive_and_negative() {
    let x = "f1_f2_f3__f5";
    assert_eq!(field(vec![i(5), s("_")], x).as_deref(), Some("f5"));
    assert_eq!(field(vec![i(2), s("_"), i(0)], x).as_deref(), Some("f2_f3__f5"));
    assert_eq!(field(vec![i(2), s("_"), i(2)], x).as_deref(), Some("f2_f3"));
    assert_eq!(field(vec![i(-2), s("_"), i(3)], x).as_deref(), Some("f2_f3_"));
    assert_eq!(field(vec![i(-3), s("_"), i(0)], x).as_deref(), Some("f1_f2_f3"));
    assert_eq!(field(vec![i(4), s("_")], x).as_deref(), Some(""));
    assert_eq!(field(vec![i(-5), s("_")], x).as_deref(), Some("f1"));
    assert_eq!(field(vec![i(-1), s("_")], x).as_deref(), Some("f5"));
    assert_eq!(field(vec![i(1), s("_"), i(-1)], x).as_deref(), Some("f1_f2_f3__f5"));
    assert_eq!(field(vec![i(2), s("_"), i(10)], x).as_deref(), Some("f2_f3__f5"));
    assert_eq!(field(vec![i(-2), s("_"), i(10)], x).as_deref(), Some("f1_f2_f3_"));
    assert_eq!(field(vec![i(1), s("_")], "abc").as_deref(), Some("abc"));
    assert_eq!(field(vec![i(1), s("_")], "").as_deref(), Some(""));
    assert_eq!(field(vec![i(-1), s("_")], "").as_deref(), Some(""));
    assert_eq!(field(vec![i(2), s(",;")], "a,b;c").as_deref(), Some("b"));
}

#[test]
fn field_out_of_range_is_absent() {
    let x = "f1_f2_f3__f5";
    assert_eq!(field(vec![i(6), s("_")], x), None);
    assert_eq!(field(vec![i(-6), s("_")], x), None);
    assert_eq!(field(vec![i(2), s("_")], "abc"), None);
}

#[test]
fn field_and_word_checks() {
    for kw in ["field", "word"] {
        assert_eq!(check(kw, vec![i(0), s("_")]).unwrap_err(), "Unexpected value 0 for index");
        assert_eq!(check(kw, vec![i(1), s("")]).unwrap_err(), "Empty separators list");
        assert!(check(kw, vec![i(-1), s("_"), i(3)]).is_ok());
    }
}

fn word(args: Vec<crate::sample::kw::Arg>, input: &str) -> Option<String> {
    text("word", args, st(input))
}

#[test]
fn word_positive_and_negative() {
    let x = "f1_f2_f3__f5";
    assert_eq!(word(vec![i(4), s("_")], x).as_deref(), Some("f5"));
    assert_eq!(word(vec![i(2), s("_"), i(0)], x).as_deref(), Some("f2_f3__f5"));
    assert_eq!(word(vec![i(3), s("_"), i(2)], x).as_deref(), Some("f3__f5"));
    assert_eq!(word(vec![i(-2), s("_"), i(3)], x).as_deref(), Some("f1_f2_f3"));
    assert_eq!(word(vec![i(-3), s("_"), i(0)], x).as_deref(), Some("f1_f2"));
    let y = "/f1/f2/f3/f4/";
    assert_eq!(word(vec![i(1), s("/")], "/f1/f2/f3/f4").as_deref(), Some("f1"));
    assert_eq!(word(vec![i(-1), s("/")], y).as_deref(), Some("f4"));
    assert_eq!(word(vec![i(2), s("/"), i(10)], y).as_deref(), Some("f2/f3/f4/"));
    assert_eq!(word(vec![i(-2), s("/"), i(10)], y).as_deref(), Some("/f1/f2/f3"));
    assert_eq!(word(vec![i(1), s("/"), i(-1)], y).as_deref(), Some("f1/f2/f3/f4/"));
}

#[test]
fn word_out_of_range_is_empty() {
    assert_eq!(word(vec![i(5), s("/")], "/f1/f2/f3/f4/").as_deref(), Some(""));
    assert_eq!(word(vec![i(-5), s("/")], "/f1/f2/f3/f4/").as_deref(), Some(""));
    assert_eq!(word(vec![i(1), s("/")], "//").as_deref(), Some(""));
    assert_eq!(word(vec![i(1), s("/")], "").as_deref(), Some(""));
}

#[test]
fn trims() {
    assert_eq!(text("ltrim", vec![s(" ")], st("  abc  ")).as_deref(), Some("abc  "));
    assert_eq!(text("rtrim", vec![s(" ")], st("  abc  ")).as_deref(), Some("  abc"));
    assert_eq!(text("ltrim", vec![s("xy")], st("xyxabcxy")).as_deref(), Some("abcxy"));
    assert_eq!(text("rtrim", vec![s("xy")], st("xyxabcxy")).as_deref(), Some("xyxabc"));
    assert_eq!(text("ltrim", vec![s("x")], st("xxx")).as_deref(), Some(""));
    assert_eq!(text("rtrim", vec![s("x")], st("xxx")).as_deref(), Some(""));
    assert_eq!(text("ltrim", vec![s("")], st("abc")).as_deref(), Some("abc"));
}

#[test]
fn cut_crlf_cuts_at_first_cr_or_lf() {
    assert_eq!(text("cut_crlf", vec![], st("a b")).as_deref(), Some("a b"));
    assert_eq!(text("cut_crlf", vec![], st("ab\r\nc")).as_deref(), Some("ab"));
    assert_eq!(text("cut_crlf", vec![], st("a\n")).as_deref(), Some("a"));
    assert_eq!(text("cut_crlf", vec![], st("\rx")).as_deref(), Some(""));
}

#[test]
fn host_only_and_port_only() {
    assert_eq!(text("host_only", vec![], st("Host.COM:8080")).as_deref(), Some("host.com"));
    assert_eq!(text("host_only", vec![], st("[::1]:80")).as_deref(), Some("[::1]"));
    assert_eq!(text("host_only", vec![], st("[::1]")).as_deref(), Some("[::1]"));
    assert_eq!(text("host_only", vec![], st("host:")).as_deref(), Some("host"));
    assert_eq!(int("port_only", vec![], st("Host.COM:8080")), Some(8080));
    assert_eq!(int("port_only", vec![], st("[::1]:80")), Some(80));
    assert_eq!(int("port_only", vec![], st("[::1]")), Some(0));
    assert_eq!(int("port_only", vec![], st("host:")), Some(0));
    assert_eq!(int("port_only", vec![], st("host")), Some(0));
    assert_eq!(int("port_only", vec![], st("")), Some(0));
    // no digit validation, 32-bit wrap-around, as haproxy
    assert_eq!(int("port_only", vec![], st("host:99999999999")), Some(1215752191));
    assert_eq!(int("port_only", vec![], st("host:12ab")), Some(1740));
}

#[test]
fn iif_picks_an_argument() {
    assert!(borrows("iif", vec![s("yes"), s("no")], Sample::Bool(true)));
    assert_eq!(text("iif", vec![s("yes"), s("no")], Sample::Bool(true)).as_deref(), Some("yes"));
    assert_eq!(text("iif", vec![s("yes"), s("no")], Sample::Bool(false)).as_deref(), Some("no"));
    assert_eq!(text("iif", vec![s("yes"), s("no")], Sample::Sint(5)).as_deref(), Some("yes"));
}

fn re(p: &str) -> crate::sample::kw::Arg {
    crate::sample::kw::Arg::Regex(std::sync::Arc::new(regex::bytes::Regex::new(p).unwrap()))
}

fn regsub(p: &str, sub: &str, flags: Option<&str>, input: &str) -> Option<String> {
    let mut args = vec![re(p), s(sub)];
    args.extend(flags.map(s));
    text("regsub", args, st(input))
}

#[test]
fn regsub_first_and_global() {
    assert_eq!(regsub("/+", "/", Some("g"), "///a///b/c/").as_deref(), Some("/a/b/c/"));
    assert_eq!(regsub("/+", "/", None, "///a///b/c/").as_deref(), Some("/a///b/c/"));
    assert_eq!(regsub("b", "X", Some("gi"), "abcABC").as_deref(), Some("aXcAXC"));
    assert_eq!(regsub("b", "X", Some("i"), "abcABC").as_deref(), Some("aXcABC"));
    assert_eq!(regsub("^a", "X", Some("g"), "aaa").as_deref(), Some("Xaa"));
    assert_eq!(regsub("nomatch", "X", Some("g"), "abc").as_deref(), Some("abc"));
}

#[test]
fn regsub_empty_matches_as_haproxy() {
    assert_eq!(regsub("x*", "-", Some("g"), "abc").as_deref(), Some("-a-b-c-"));
    assert_eq!(regsub("x*", "-", None, "abc").as_deref(), Some("-abc"));
    assert_eq!(regsub("x*", "-", Some("g"), "").as_deref(), Some("-"));
    assert_eq!(regsub("^$", "empty", None, "").as_deref(), Some("empty"));
    assert_eq!(regsub("b|$", "X", Some("g"), "abcabc").as_deref(), Some("aXcaXcXX"));
}

#[test]
fn regsub_backreferences_and_escapes() {
    assert_eq!(regsub("(foo|bar)([0-9]+)?", "\\2\\1", Some("g"), "foo123bar").as_deref(), Some("123foobar"));
    assert_eq!(regsub("b", "[\\0]", None, "abc").as_deref(), Some("a[b]c"));
    assert_eq!(regsub("(b)", "[\\1\\2\\9]", None, "abc").as_deref(), Some("a[b]c"));
    assert_eq!(regsub("b", "a\\\\b", None, "abc").as_deref(), Some("aa\\bc"));
    assert_eq!(regsub("b", "\\x41\\x7a", None, "abc").as_deref(), Some("aAzc"));
    // a cut escape ends the replacement
    assert_eq!(regsub("b", "X\\", None, "abc").as_deref(), Some("aXc"));
}

#[test]
fn regsub_flag_check() {
    let err = check("regsub", vec![re("b"), s("X"), s("x")]).unwrap_err();
    assert_eq!(err, "invalid regex flag 'x', only 'i' and 'g' are supported");
}
