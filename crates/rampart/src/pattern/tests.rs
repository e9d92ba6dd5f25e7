//! Pattern sets per method, on sample values. Expected results were checked against
//! HAProxy 2.6.12 (`-m <method>` ACLs on a header, and map converters).

use std::net::{Ipv4Addr, Ipv6Addr};

use rampart_proto::http::Method;

use super::*;

fn set(method: MatchMethod, icase: bool, pats: &[&str]) -> PatternSet {
    PatternSet::build(method, PatFlags { icase, no_dns: true }, pats, false).unwrap()
}

fn s(b: &str) -> Sample<'_> {
    Sample::str(b.as_bytes())
}

fn hit(p: &PatternSet, smp: &Sample<'_>) -> Option<u32> {
    let any = p.matches(smp);
    let found = p.lookup(smp).map(|h| h.0);
    assert_eq!(any, found.is_some() || p.method() == MatchMethod::Found || p.method() == MatchMethod::Bool);
    found
}

#[test]
fn method_names_and_types() {
    for name in ["found", "bool", "int", "ip", "bin", "len", "str", "beg", "sub", "dir", "dom", "end", "reg", "regm"] {
        assert_eq!(MatchMethod::from_name(name).unwrap().name(), name);
    }
    assert_eq!(MatchMethod::from_name("meth"), None);
    assert_eq!(MatchMethod::from_name("STR"), None);
    assert_eq!(MatchMethod::default_for(SmpType::Str), Some(MatchMethod::Str));
    assert_eq!(MatchMethod::default_for(SmpType::Sint), Some(MatchMethod::Int));
    assert_eq!(MatchMethod::default_for(SmpType::Bool), Some(MatchMethod::Bool));
    assert_eq!(MatchMethod::default_for(SmpType::Ipv4), Some(MatchMethod::Ip));
    assert_eq!(MatchMethod::default_for(SmpType::Addr), Some(MatchMethod::Ip));
    assert_eq!(MatchMethod::default_for(SmpType::Bin), None);
    assert_eq!(MatchMethod::default_for(SmpType::Meth), None);
    assert_eq!(MatchMethod::Len.expect(), SmpType::Str);
    assert_eq!(MatchMethod::Ip.expect(), SmpType::Addr);
    assert!(MatchMethod::Len.takes_operators() && !MatchMethod::Str.takes_operators());
}

#[test]
fn found_and_bool() {
    let f = set(MatchMethod::Found, false, &["ignored"]);
    assert!(f.matches(&s("")));
    let b = set(MatchMethod::Bool, false, &[]);
    assert!(b.matches(&Sample::Sint(2)));
    assert!(!b.matches(&Sample::Sint(0)));
    assert!(b.matches(&Sample::Bool(true)));
    // A string is read as an integer: "10" is true, "abc" is 0.
    assert!(b.matches(&s("10")));
    assert!(!b.matches(&s("abc")));
    assert!(!b.matches(&s("")));
}

#[test]
fn str_exact() {
    let p = set(MatchMethod::Str, false, &["foo", "bar", "foo"]);
    assert_eq!(hit(&p, &s("foo")), Some(0));
    assert_eq!(hit(&p, &s("FOO")), None);
    assert_eq!(hit(&p, &s("fo")), None);
    let i = set(MatchMethod::Str, true, &["FOO"]);
    assert_eq!(hit(&i, &s("foo")), Some(0));
    assert_eq!(hit(&i, &s("FoO")), Some(0));
    // Other types are matched through their text.
    let n = set(MatchMethod::Str, false, &["42", "10.0.0.1", "GET", "1"]);
    assert_eq!(hit(&n, &Sample::Sint(42)), Some(0));
    assert_eq!(hit(&n, &Sample::Ipv4(Ipv4Addr::new(10, 0, 0, 1))), Some(1));
    assert_eq!(hit(&n, &Sample::Meth(Method::Get, b"GET"[..].into())), Some(2));
    assert_eq!(hit(&n, &Sample::Bool(true)), Some(3));
}

#[test]
fn bin_exact() {
    let p = set(MatchMethod::Bin, false, &["16030100", "ff"]);
    assert_eq!(hit(&p, &Sample::Bin(b"\x16\x03\x01\x00"[..].into())), Some(0));
    assert_eq!(hit(&p, &Sample::Bin(b"\xff"[..].into())), Some(1));
    assert_eq!(hit(&p, &Sample::Bin(b"\xfe"[..].into())), None);
    let e = PatternSet::build(MatchMethod::Bin, PatFlags::default(), &["abc"], false).unwrap_err();
    assert_eq!(e, (0, "an even number of hex digit is expected".to_owned()));
    let e = PatternSet::build(MatchMethod::Bin, PatFlags::default(), &["00", "zz"], false).unwrap_err();
    assert_eq!(e, (1, "an hex digit is expected (found 'z')".to_owned()));
}

#[test]
fn beg_longest_unless_icase() {
    // Map semantics checked with haproxy's map_beg: longest prefix wins.
    let p = set(MatchMethod::Beg, false, &["/api", "/api/v1", "/", "/API/v2"]);
    assert_eq!(hit(&p, &s("/api/v1/x")), Some(1));
    assert_eq!(hit(&p, &s("/api/v2")), Some(0));
    assert_eq!(hit(&p, &s("/API/v2/x")), Some(3));
    assert_eq!(hit(&p, &s("/img")), Some(2));
    assert_eq!(hit(&p, &s("api")), None);
    let i = set(MatchMethod::Beg, true, &["/api", "/API/V1"]);
    assert_eq!(hit(&i, &s("/Api/v1/x")), Some(0));
}

#[test]
fn end_first_in_order() {
    let p = set(MatchMethod::End, false, &[".jpg", "g"]);
    assert_eq!(hit(&p, &s("a.jpg")), Some(0));
    assert_eq!(hit(&p, &s("a.png")), Some(1));
    assert_eq!(hit(&p, &s("a.JPG")), None);
    let i = set(MatchMethod::End, true, &[".JPG"]);
    assert_eq!(hit(&i, &s("a.jpg")), Some(0));
}

#[test]
fn sub_first_in_order() {
    // haproxy's map_sub on "xabcdx" with lines "cd", "abc" returns the first line's.
    let p = set(MatchMethod::Sub, false, &["cd", "abc"]);
    assert_eq!(hit(&p, &s("xabcdx")), Some(0));
    assert_eq!(hit(&p, &s("abc")), Some(1));
    assert_eq!(hit(&p, &s("ABC")), None);
    assert_eq!(hit(&set(MatchMethod::Sub, true, &["ABC"]), &s("xabcx")), Some(0));
}

#[test]
fn dir_and_dom() {
    let dir = set(MatchMethod::Dir, false, &["/img/", "a/b"]);
    assert_eq!(hit(&dir, &s("/a/img/x")), Some(0));
    assert_eq!(hit(&dir, &s("/img")), Some(0));
    assert_eq!(hit(&dir, &s("/x/a/b/c")), Some(1));
    assert_eq!(hit(&dir, &s("/imgs/x")), None);
    let dom = set(MatchMethod::Dom, false, &["example.com"]);
    assert_eq!(hit(&dom, &s("www.example.com")), Some(0));
    assert_eq!(hit(&dom, &s("example.coms")), None);
    assert_eq!(hit(&dom, &s("myexample.com")), None);
    assert_eq!(hit(&set(MatchMethod::Dom, false, &[".example.com."]), &s("www.example.com")), Some(0));
    assert_eq!(hit(&set(MatchMethod::Dom, false, &["..."]), &s("www.example.com")), None);
}

#[test]
fn reg_and_icase() {
    // `-i` makes the regex case-insensitive (haproxy: `-m reg -i ^/ADMIN` matches /admin).
    let i = set(MatchMethod::Reg, true, &["^/ADMIN"]);
    assert_eq!(hit(&i, &s("/admin/x")), Some(0));
    let c = set(MatchMethod::Reg, false, &["^/ADMIN"]);
    assert_eq!(hit(&c, &s("/admin/x")), None);
    assert_eq!(hit(&c, &s("/ADMIN")), Some(0));
    let e = PatternSet::build(MatchMethod::Reg, PatFlags::default(), &["ok", "("], false).unwrap_err();
    assert_eq!(e.0, 1);
    assert!(e.1.starts_with("regex '(' is invalid"), "{}", e.1);
    let m = set(MatchMethod::Regm, false, &["^/(a)", "^/(b)"]);
    let (n, re) = m.lookup(&s("/b/x")).unwrap();
    assert_eq!(n, 1);
    assert!(re.unwrap().is_match(b"/b"));
}

#[test]
fn int_values_ranges_and_strings() {
    let p = set(MatchMethod::Int, false, &["010", ":5", "20:30"]);
    assert_eq!(hit(&p, &Sample::Sint(10)), Some(0));
    assert_eq!(hit(&p, &Sample::Sint(-3)), Some(1));
    assert_eq!(hit(&p, &Sample::Sint(25)), Some(2));
    assert_eq!(hit(&p, &Sample::Sint(6)), None);
    // Strings are read as HAProxy does: leading digits, else 0.
    assert_eq!(hit(&p, &s("10.1.1.1")), Some(0));
    assert_eq!(hit(&p, &s("www.example.com")), Some(1));
    assert_eq!(hit(&p, &s("")), None);
    assert_eq!(hit(&p, &Sample::Bool(true)), Some(1));
    assert_eq!(hit(&p, &Sample::Ipv6(Ipv6Addr::LOCALHOST)), None);
    let e = PatternSet::build(MatchMethod::Int, PatFlags::default(), &["1", "x"], false).unwrap_err();
    assert_eq!(e, (1, "'x' is not a number".to_owned()));
}

#[test]
fn len_of_strings() {
    let p = set(MatchMethod::Len, false, &["3", "10:"]);
    assert_eq!(hit(&p, &s("abc")), Some(0));
    assert_eq!(hit(&p, &s("abcd")), None);
    assert_eq!(hit(&p, &s("0123456789")), Some(1));
    assert_eq!(hit(&p, &Sample::Sint(100)), Some(0));
}

#[test]
fn versions() {
    let p = set(MatchMethod::Ver, false, &["3.1", "3.3:"]);
    assert_eq!(hit(&p, &Sample::Sint(3 << 16 | 1)), Some(0));
    assert_eq!(hit(&p, &Sample::Sint(3 << 16 | 2)), None);
    assert_eq!(hit(&p, &Sample::Sint(4 << 16)), Some(1));
}

#[test]
fn ip_networks_and_mapped() {
    let p = set(MatchMethod::Ip, false, &["192.168.0.0/16", "::ffff:10.0.0.0/104", "2001:db8::/32"]);
    assert_eq!(hit(&p, &s("::ffff:192.168.1.1")), Some(0));
    assert_eq!(hit(&p, &s("10.1.1.1")), Some(1));
    assert_eq!(hit(&p, &Sample::Ipv4(Ipv4Addr::new(192, 168, 9, 9))), Some(0));
    assert_eq!(hit(&p, &Sample::Ipv6("2001:db8::5".parse().unwrap())), Some(2));
    assert_eq!(hit(&p, &Sample::Ipv4(Ipv4Addr::new(8, 8, 8, 8))), None);
    assert_eq!(hit(&p, &s("not an address")), None);
    // An integer is an IPv4 address.
    assert_eq!(hit(&p, &Sample::Sint(0xc0a8_0101)), Some(0));
    let e = PatternSet::build(MatchMethod::Ip, PatFlags::default(), &["1.2.3.4/33"], false).unwrap_err();
    assert_eq!(e, (0, "'1.2.3.4/33' is not a valid IPv4 or IPv6 address".to_owned()));
    // Host names resolve only when allowed and without -n.
    assert!(PatternSet::build(MatchMethod::Ip, PatFlags::default(), &["localhost"], true).is_ok());
    assert!(PatternSet::build(MatchMethod::Ip, PatFlags { icase: false, no_dns: true }, &["localhost"], true).is_err());
}

#[test]
fn http_methods() {
    let p = set(MatchMethod::Meth, false, &["GET", "HEAD", "PATCH", "purge"]);
    let m = |m: Method, b: &'static [u8]| Sample::Meth(m, b.into());
    assert_eq!(hit(&p, &m(Method::Get, b"GET")), Some(0));
    assert_eq!(hit(&p, &m(Method::Head, b"")), Some(1));
    assert_eq!(hit(&p, &m(Method::Patch, b"PATCH")), Some(2));
    assert_eq!(hit(&p, &m(Method::Other, b"purge")), Some(3));
    assert_eq!(hit(&p, &m(Method::Other, b"PURGE")), None);
    assert_eq!(hit(&p, &m(Method::Post, b"POST")), None);
    assert_eq!(hit(&p, &s("GET")), Some(0));
    // -i only applies to methods HAProxy does not know.
    let i = set(MatchMethod::Meth, true, &["get", "purge"]);
    assert_eq!(hit(&i, &m(Method::Get, b"GET")), None);
    assert_eq!(hit(&i, &m(Method::Other, b"PURGE")), Some(1));
    assert_eq!(hit(&i, &m(Method::Other, b"get")), Some(0));
}

#[test]
fn empty_sets_match_nothing() {
    for m in [
        MatchMethod::Str,
        MatchMethod::Beg,
        MatchMethod::End,
        MatchMethod::Sub,
        MatchMethod::Reg,
        MatchMethod::Int,
        MatchMethod::Ip,
    ] {
        let p = set(m, false, &[]);
        assert!(p.is_empty());
        assert!(!p.matches(&s("x")), "{m:?}");
    }
}
