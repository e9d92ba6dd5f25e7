//! Map converters on map files; expected values checked against HAProxy 2.6.12's
//! converters on the same files.

use std::net::Ipv4Addr;
use std::rc::Rc;
use std::sync::Arc;

use super::*;
use crate::pattern::PatRefs;
use crate::sample::expr::Site;

struct Files(std::path::PathBuf);

impl Files {
    fn new(tag: &str) -> Files {
        let d = std::env::temp_dir().join(format!("rampart-map-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Files(d)
    }

    fn put(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_owned()
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn kw(name: &str) -> &'static ConvKw {
    KEYWORDS.iter().find(|k| k.name == name).unwrap()
}

/// Compiles converter `name` on `path` with an optional default, as the expression
/// compiler would.
fn load(pats: &Rc<PatRefs>, name: &str, path: &str, default: Option<Arg>) -> Result<Vec<Arg>, String> {
    let cfg = rampart_cfg::Config::default();
    let mut cx = CompileCx::new(&cfg, 0, Site::Cfg);
    cx.pats = pats.clone();
    let mut args = ArgList(vec![Arg::Str(path.as_bytes().into())]);
    args.extend(default);
    (kw(name).check.unwrap())(&mut args, &mut cx)?;
    Ok(args.0)
}

fn run<'a>(args: &'a [Arg], smp: Sample<'a>) -> Option<Sample<'a>> {
    apply(map_of(&args[0]).unwrap(), args.get(1), smp)
}

fn s(t: &str) -> Sample<'_> {
    Sample::str(t.as_bytes())
}

fn text(smp: Option<Sample<'_>>) -> Option<String> {
    match smp? {
        Sample::Str(b) => Some(String::from_utf8(b.into_owned()).unwrap()),
        other => panic!("not a string: {other:?}"),
    }
}

#[test]
fn table_names_methods_and_types() {
    assert_eq!(KEYWORDS.len(), 29);
    assert_eq!(method_of("map"), Some(MatchMethod::Str));
    assert_eq!(method_of("map_beg_int"), Some(MatchMethod::Beg));
    assert_eq!(method_of("map_ip_ip"), Some(MatchMethod::Ip));
    assert_eq!(method_of("map_regm"), Some(MatchMethod::Regm));
    assert_eq!(method_of("mapx"), None);
    assert_eq!(kw("map_str_int").out, SmpType::Sint);
    assert_eq!(kw("map_str_int").args.types, [ArgT::Map, ArgT::Sint]);
    assert_eq!(kw("map_int").input, SmpType::Sint);
    assert_eq!(kw("map_ip_int").input, SmpType::Addr);
    assert_eq!(kw("map_end_ip").out, SmpType::Addr);
    for k in KEYWORDS {
        assert!(method_of(k.name).is_some(), "{}", k.name);
        assert_eq!(k.args.mandatory, 1);
        assert!(k.check.is_some());
    }
}

#[test]
fn str_beg_sub_and_defaults() {
    let f = Files::new("str");
    let pats = Rc::new(PatRefs::default());
    let m1 = f.put("m1.map", "# comment\n/api      api\n/api/v1   v1\n/         root\n/API/v2   upper\n");
    let beg = load(&pats, "map_beg", &m1, Some(Arg::Str(b"none"[..].into()))).unwrap();
    assert_eq!(text(run(&beg, s("/api/v1/x"))).as_deref(), Some("v1"));
    assert_eq!(text(run(&beg, s("/api/v2"))).as_deref(), Some("api"));
    assert_eq!(text(run(&beg, s("/API/v2/x"))).as_deref(), Some("upper"));
    assert_eq!(text(run(&beg, s("x"))).as_deref(), Some("none"));
    let exact = load(&pats, "map", &m1, None).unwrap();
    assert_eq!(text(run(&exact, s("/api"))).as_deref(), Some("api"));
    assert_eq!(run(&exact, s("/api/")), None);
    let sub = f.put("sub.map", "cd  first\nabc second\n");
    let sub = load(&pats, "map_sub", &sub, Some(Arg::Str(b"none"[..].into()))).unwrap();
    assert_eq!(text(run(&sub, s("xabcdx"))).as_deref(), Some("first"));
    assert_eq!(text(run(&sub, s("abc"))).as_deref(), Some("second"));
}

#[test]
fn dom_dir_end_reg_int_ip() {
    let f = Files::new("kinds");
    let pats = Rc::new(PatRefs::default());
    let dom = f.put("dom.map", "example.com ex\nexample.org org\n");
    let a = load(&pats, "map_dom", &dom, None).unwrap();
    assert_eq!(text(run(&a, s("www.example.com:80"))).as_deref(), Some("ex"));
    assert_eq!(run(&a, s("myexample.com")), None);
    let a = load(&pats, "map_dir", &dom, None).unwrap();
    assert_eq!(text(run(&a, s("/x/example.org/y"))).as_deref(), Some("org"));
    let end = f.put("end.map", ".jpg img\n.png img2\n");
    let a = load(&pats, "map_end", &end, None).unwrap();
    assert_eq!(text(run(&a, s("/a.png"))).as_deref(), Some("img2"));
    let reg = f.put("reg.map", "^/a/ A\n^/a B\n");
    let a = load(&pats, "map_reg", &reg, None).unwrap();
    assert_eq!(text(run(&a, s("/a/x"))).as_deref(), Some("A"));
    assert_eq!(text(run(&a, s("/ab"))).as_deref(), Some("B"));
    let int = f.put("int.map", "10 ten\n20:30 range\n");
    let a = load(&pats, "map_int", &int, None).unwrap();
    assert_eq!(text(run(&a, Sample::Sint(25))).as_deref(), Some("range"));
    assert_eq!(run(&a, Sample::Sint(11)), None);
    let ip = f.put("ip.map", "10.0.0.0/8 wide\n10.1.0.0/16 narrow\n::1 six\n");
    let a = load(&pats, "map_ip", &ip, None).unwrap();
    assert_eq!(text(run(&a, Sample::Ipv4(Ipv4Addr::new(10, 1, 2, 3)))).as_deref(), Some("narrow"));
    assert_eq!(text(run(&a, Sample::Ipv4(Ipv4Addr::new(10, 2, 2, 3)))).as_deref(), Some("wide"));
    assert_eq!(text(run(&a, Sample::Ipv6("::ffff:10.1.0.1".parse().unwrap()))).as_deref(), Some("narrow"));
    assert_eq!(text(run(&a, Sample::Ipv6("::1".parse().unwrap()))).as_deref(), Some("six"));
}

#[test]
fn output_types_and_value_errors() {
    let f = Files::new("out");
    let pats = Rc::new(PatRefs::default());
    let ints = f.put("int.map", "cd 5\nabc -3\nfoo\n");
    let a = load(&pats, "map_str_int", &ints, Some(Arg::Sint(7))).unwrap();
    assert_eq!(run(&a, s("abc")), Some(Sample::Sint(-3)));
    // An empty value is 0 (haproxy: map_str_int on "foo" gives 0).
    assert_eq!(run(&a, s("foo")), Some(Sample::Sint(0)));
    assert_eq!(run(&a, s("zz")), Some(Sample::Sint(7)));
    let words = f.put("words.map", "cd  first\nabc second\n");
    assert_eq!(
        load(&pats, "map_str_int", &words, None).unwrap_err(),
        format!("unable to parse 'first' at line 1 of file '{words}'")
    );
    let ips = f.put("ips.map", "a 10.0.0.1\nb ::1\n");
    let a = load(&pats, "map_str_ip", &ips, Some(Arg::Str(b"192.168.0.1"[..].into()))).unwrap();
    assert_eq!(run(&a, s("a")), Some(Sample::Ipv4(Ipv4Addr::new(10, 0, 0, 1))));
    assert_eq!(run(&a, s("b")), Some(Sample::Ipv6("::1".parse().unwrap())));
    assert_eq!(run(&a, s("c")), Some(Sample::Ipv4(Ipv4Addr::new(192, 168, 0, 1))));
    assert_eq!(
        load(&pats, "map_str_ip", &ips, Some(Arg::Str(b"nope"[..].into()))).unwrap_err(),
        "map: cannot parse default ip <nope>."
    );
    assert_eq!(
        load(&pats, "map", "/nonexistent.map", None).unwrap_err(),
        "failed to open pattern file </nonexistent.map>"
    );
}

#[test]
fn regm_back_references() {
    let f = Files::new("regm");
    let pats = Rc::new(PatRefs::default());
    let m = f.put("regm.map", "^/img/([a-z]+)/(.*)$ /static/\\2?size=\\1\n^/(.*)$ /app/\\1\n");
    let a = load(&pats, "map_regm", &m, None).unwrap();
    assert_eq!(text(run(&a, s("/img/big/a.png"))).as_deref(), Some("/static/a.png?size=big"));
    assert_eq!(text(run(&a, s("/x"))).as_deref(), Some("/app/x"));
    assert_eq!(run(&a, s("x")), None);
}

#[test]
fn one_file_shared_by_converters_and_updated_live() {
    let f = Files::new("shared");
    let pats = Rc::new(PatRefs::default());
    let m = f.put("m.map", "a 1\n");
    let s1 = load(&pats, "map_str", &m, None).unwrap();
    let s2 = load(&pats, "map_str", &m, None).unwrap();
    let i1 = load(&pats, "map_str_int", &m, None).unwrap();
    let (v1, v2) = (map_of(&s1[0]).unwrap(), map_of(&s2[0]).unwrap());
    assert!(std::ptr::eq(v1, v2));
    assert!(Arc::ptr_eq(&v1.src, &map_of(&i1[0]).unwrap().src));
    // A value one view cannot read refuses the update for all (all or nothing).
    assert!(v1.src.add("b", Some("two")).is_err());
    assert_eq!(run(&s1, s("b")), None);
    v1.src.add("b", Some("2")).unwrap();
    assert_eq!(text(run(&s1, s("b"))).as_deref(), Some("2"));
    assert_eq!(run(&i1, s("b")), Some(Sample::Sint(2)));
    assert_eq!(v1.src.set("a", "5"), Ok(true));
    assert_eq!(run(&i1, s("a")), Some(Sample::Sint(5)));
    // Two-column files cannot serve as one-column pattern files.
    assert!(pats.file(&m, false).is_err());
}
