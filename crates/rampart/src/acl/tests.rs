//! ACL lines and conditions, compiled from words and evaluated on constant fetches;
//! messages are HAProxy 2.6.12's (`haproxy -c` on the same lines).

use std::rc::Rc;

use super::*;
use crate::proxy::Runtime;
use crate::sample::ctx::ConnInfo;
use crate::sample::expr::Site;

const CFG: &str = "\
defaults
  mode http
  timeout client 1s
  timeout server 1s
  timeout connect 1s
frontend fe
  bind 127.0.0.1:18001
";

struct Fx {
    cfg: rampart_cfg::Config,
    rt: Runtime,
    conn: ConnInfo,
    pats: Rc<PatRefs>,
}

impl Fx {
    fn new() -> Fx {
        let ctx = rampart_cfg::LexCtx { env: &|_| None, version: "2.6.12", features: &[] };
        let cfg = rampart_cfg::parse_str("t.cfg", CFG, &ctx).config.unwrap();
        let rt = crate::build::build(&cfg, 100, 1).unwrap();
        let conn = ConnInfo::new(Some("192.168.1.10:40000".parse().unwrap()), -1);
        Fx { cfg, rt, conn, pats: Rc::new(PatRefs::without_dns()) }
    }

    fn cx(&self) -> CompileCx<'_> {
        let mut cx = CompileCx::new(&self.cfg, 0, Site::Acl);
        cx.pats = self.pats.clone();
        cx
    }

    fn ctx(&self) -> SampleCtx<'_> {
        SampleCtx::new(&self.rt, &self.conn, 0)
    }

    /// Compiles `acl` lines given as text ("name words...").
    fn acls(&self, lines: &[&str]) -> Result<AclSet, Vec<String>> {
        let owned: Vec<(String, Vec<String>)> = lines
            .iter()
            .map(|l| {
                let mut w = l.split_whitespace().map(str::to_owned);
                (w.next().unwrap(), w.collect())
            })
            .collect();
        let refs: Vec<(&str, &[String])> = owned.iter().map(|(n, w)| (n.as_str(), w.as_slice())).collect();
        compile_acls(&refs, &mut self.cx())
    }

    fn cond(&self, set: &AclSet, text: &str) -> Result<Cond, String> {
        let mut w = text.split_whitespace().map(str::to_owned);
        let negate = match w.next().as_deref() {
            Some("if") => false,
            Some("unless") => true,
            other => panic!("bad test condition {other:?}"),
        };
        compile_cond(&w.collect::<Vec<_>>(), negate, set, &mut self.cx())
    }

    /// Whether `cond` holds with `acls` defined.
    fn holds(&self, acls: &[&str], cond: &str) -> bool {
        let set = self.acls(acls).unwrap();
        self.cond(&set, cond).unwrap().eval(&self.ctx())
    }

    fn acl_err(&self, line: &str) -> String {
        let e = self.acls(&[line]).unwrap_err();
        assert_eq!(e.len(), 1);
        e[0].clone()
    }

    fn cond_err(&self, acls: &[&str], cond: &str) -> String {
        let set = self.acls(acls).unwrap();
        self.cond(&set, cond).unwrap_err()
    }
}

#[test]
fn constants_and_methods() {
    let f = Fx::new();
    assert!(f.holds(&["t always_true"], "if t"));
    assert!(!f.holds(&["t always_false"], "if t"));
    assert!(f.holds(&["s str(foo) bar foo"], "if s"));
    assert!(!f.holds(&["s str(foo) FOO"], "if s"));
    assert!(f.holds(&["s str(foo) -i FOO"], "if s"));
    assert!(f.holds(&["s str(/api/v1) -m beg /api"], "if s"));
    assert!(f.holds(&["s str(www.example.com) -m dom example.com"], "if s"));
    assert!(!f.holds(&["s str(myexample.com) -m dom example.com"], "if s"));
    assert!(f.holds(&["s str(/ADMIN/x) -m reg -i ^/admin"], "if s"));
    assert!(f.holds(&["s str(abc) -m len 3"], "if s"));
    assert!(f.holds(&["s str(x) -m found"], "if s"));
    assert!(f.holds(&["s ipv4(10.1.2.3) 10.0.0.0/8"], "if s"));
    assert!(!f.holds(&["s ipv4(11.1.2.3) 10.0.0.0/8"], "if s"));
    assert!(f.holds(&["s str(10.1.2.3) -m ip 10.0.0.0/8"], "if s"));
    assert!(f.holds(&["s bin(16030100) -m bin 16030100"], "if s"));
    assert!(f.holds(&["s int(1) -m bool"], "if s"));
    assert!(!f.holds(&["s int(0) -m bool"], "if s"));
}

#[test]
fn integer_operators() {
    let f = Fx::new();
    for (line, want) in [
        ("i int(5) 5", true),
        ("i int(5) 010", false),
        ("i int(10) 010", true),
        ("i int(5) gt 4", true),
        ("i int(5) gt 5", false),
        ("i int(5) ge 5", true),
        ("i int(5) lt 5", false),
        ("i int(5) le 5", true),
        ("i int(5) eq 6 5", true),
        ("i int(5) 1:10", true),
        ("i int(5) 6:", false),
        ("i int(5) :4", false),
        ("i int(5) -- -5", true),
        ("i int(-5) -- -5", true),
        ("i int(5) gt 9 1:5", true),
        ("i str(abc) -m len gt 2", true),
    ] {
        assert_eq!(f.holds(&[line], "if i"), want, "{line}");
    }
}

#[test]
fn acl_errors_as_haproxy() {
    let f = Fx::new();
    assert_eq!(
        f.acl_err("a3 nosuch"),
        "error detected while parsing ACL 'a3' : unknown fetch method 'nosuch' in ACL expression 'nosuch'."
    );
    assert_eq!(
        f.acl_err("a str(x) -m foo x"),
        "error detected while parsing ACL 'a' : unknown matching method 'foo' when parsing ACL expression."
    );
    assert_eq!(
        f.acl_err("a str(x) -z x"),
        "error detected while parsing ACL 'a' : '-z' is not a valid ACL option. Please use '--' before any pattern beginning with a '-'."
    );
    assert_eq!(
        f.acl_err("a int(1) -1"),
        "error detected while parsing ACL 'a' : '-1' is not a valid ACL option. Please use '--' before any pattern beginning with a '-'."
    );
    assert_eq!(
        f.acl_err("a int(1) gt x"),
        "error detected while parsing ACL 'a' : 'x' is neither a number nor a supported operator."
    );
    assert_eq!(f.acl_err("a int(1) (foo)"), "error detected while parsing ACL 'a' : '(foo)' is not a number.");
    assert_eq!(
        f.acl_err("a ipv4(1.2.3.4) 1.2.3.4/33"),
        "error detected while parsing ACL 'a' : '1.2.3.4/33' is not a valid IPv4 or IPv6 address."
    );
    assert_eq!(
        f.acl_err("a always_true -m ip 12"),
        "error detected while parsing ACL 'a' : matching method 'ip' cannot be used with fetch keyword 'always_true'."
    );
    assert_eq!(
        f.acl_err("a bin(00) 00"),
        "error detected while parsing ACL 'a' : matching method must be specified first (using '-m') when using a sample fetch of this type ('bin')."
    );
    assert_eq!(
        f.acl_err("a str(x) -u x foo"),
        "error detected while parsing ACL 'a' : the argument of -u must be an integer."
    );
    assert_eq!(
        f.acl_err("a str(x) -f /nonexistent"),
        "error detected while parsing ACL 'a' : failed to open pattern file </nonexistent>."
    );
    assert!(f
        .acl_err("a str(x) -m reg (")
        .starts_with("error detected while parsing ACL 'a' : regex '(' is invalid (error="));
    assert_eq!(f.acl_err("bad!name str(x) x"), "character '!' is not permitted in acl name 'bad!name'.");
    assert_eq!(
        f.acl_err("OR str(x) x"),
        "acl name 'OR' will never match. 'or' is used to express a logical disjunction within a condition."
    );
    assert_eq!(
        f.acl_err("a http_auth_group(x) g"),
        "error detected while parsing ACL 'a' : ACL keyword 'http_auth_group' : unable to find userlist 'x' \
         referenced in arg 1 of ACL keyword 'http_auth_group' in proxy 'fe'."
    );
    // -u ids are unique per configuration.
    let e = f.acls(&["a str(x) -u 7 x", "b str(x) -u 7 x"]).unwrap_err();
    assert_eq!(e, ["error detected while parsing ACL 'b' : the id is already used."]);
    // `-m` after `-f`.
    let dir = std::env::temp_dir().join(format!("rampart-acl-m-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("l.lst");
    std::fs::write(&p, "x\n").unwrap();
    let line = format!("a str(x) -m str -f {} -m beg", p.display());
    assert_eq!(
        f.acl_err(&line),
        "error detected while parsing ACL 'a' : '-m' must only be specified before patterns and files in parsing ACL expression."
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn warnings_as_haproxy() {
    let f = Fx::new();
    let set =
        f.acls(&["a str(x)", "b always_true", "c str(x) -- ", "d always_true (2)"]).unwrap_or_else(|e| panic!("{e:?}"));
    let w = set.take_warnings();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[0].starts_with(
        "parsing acl keyword 'str(x)' :\n  no pattern to match against were provided, so this ACL will never match."
    ));
    assert!(w[1].starts_with(
        "parsing acl 'd' :\n  matching 'always_true' for pattern '(2)' is likely a mistake and probably\n"
    ));
    assert!(set.take_warnings().is_empty());
}

#[test]
fn pattern_files() {
    let f = Fx::new();
    let dir = std::env::temp_dir().join(format!("rampart-acl-f-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lst = dir.join("hosts.lst");
    std::fs::write(&lst, "# hosts\nwww.example.com\n\n  api.example.com\nbad\n").unwrap();
    let map = dir.join("hosts.map");
    std::fs::write(&map, "www.example.com be1\n").unwrap();
    let (l, m) = (lst.display(), map.display());
    assert!(f.holds(&[&format!("h str(api.example.com) -f {l}")], "if h"));
    assert!(!f.holds(&[&format!("h str(API.example.com) -f {l}")], "if h"));
    // -i applies to the files after it only.
    assert!(f.holds(&[&format!("h str(API.example.com) -i -f {l}")], "if h"));
    assert!(!f.holds(&[&format!("h str(API.example.com) -f {l} -i")], "if h"));
    // Inline patterns and files together.
    assert!(f.holds(&[&format!("h str(other) -f {l} other")], "if h"));
    // -M reads a map's keys.
    assert!(f.holds(&[&format!("h str(www.example.com) -M -f {m}")], "if h"));
    assert_eq!(
        f.acl_err(&format!("h int(1) -f {l}")),
        format!("error detected while parsing ACL 'h' : 'www.example.com' is not a number at line 2 of file '{l}'.")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn same_name_lines_are_ored() {
    let f = Fx::new();
    assert!(f.holds(&["a str(x) y", "a str(x) x"], "if a"));
    assert!(!f.holds(&["a str(x) y", "a str(x) z"], "if a"));
}

#[test]
fn condition_operators() {
    let f = Fx::new();
    let acls = ["t always_true", "f always_false"];
    for (cond, want) in [
        ("if t", true),
        ("if f", false),
        ("if t t", true),
        ("if t f", false),
        ("if f or t", true),
        ("if f OR t", true),
        ("if f || t", true),
        ("if f || f", false),
        ("if !f", true),
        ("if ! f", true),
        ("if !!t", true),
        ("if ! !t", true),
        ("if t !t or !f t", true),
        ("if t !t or f", false),
        ("unless t", false),
        ("unless f", true),
        ("if", false),
        ("unless", true),
        ("if t or", true),
        ("if !", false),
        ("if { always_true }", true),
        ("if { int(5) gt 3 } t", true),
        ("if !{ int(5) gt 3 }", false),
        ("if { str(a) b } or { str(a) a }", true),
        ("if TRUE", true),
        ("if FALSE or !TRUE", false),
    ] {
        assert_eq!(f.holds(&acls, cond), want, "{cond}");
    }
}

#[test]
fn condition_errors_as_haproxy() {
    let f = Fx::new();
    let acls = ["t always_true"];
    assert_eq!(f.cond_err(&acls, "if nosuch"), "no such ACL : 'nosuch'");
    assert_eq!(f.cond_err(&acls, "if { str(x) x"), "missing closing '}' in condition");
    assert_eq!(f.cond_err(&acls, "if }"), "no such ACL : '}'");
    assert_eq!(
        f.cond_err(&acls, "if { nosuchkw foo }"),
        "unknown fetch method 'nosuchkw' in ACL expression 'nosuchkw'"
    );
    assert_eq!(f.cond_err(&acls, "if meth_get"), "no such ACL : 'meth_get'");
}

#[test]
fn visibility_and_overrides() {
    let f = Fx::new();
    let set = f.acls(&["a always_true", "b always_false", "a always_false"]).unwrap();
    let w = |t: &str| t.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    // Written after the first line only: `b` is not declared yet.
    assert_eq!(cond::compile_cond_at(&w("b"), false, &set, 1, &mut f.cx()).unwrap_err(), "no such ACL : 'b'");
    // `a` is, with all its lines (the third one too).
    let c = cond::compile_cond_at(&w("a"), false, &set, 1, &mut f.cx()).unwrap();
    assert_eq!(c.suites[0][0].acl.exprs.len(), 2);
    assert!(c.eval(&f.ctx()));
    // A proxy ACL named like a predefined one wins.
    assert!(!f.holds(&["TRUE always_false"], "if TRUE"));
    // Predefined ACLs are compiled once per set.
    let set = f.acls(&[]).unwrap();
    let c1 = f.cond(&set, "if TRUE").unwrap();
    let c2 = f.cond(&set, "if TRUE").unwrap();
    assert!(Arc::ptr_eq(&c1.suites[0][0].acl, &c2.suites[0][0].acl));
}

#[test]
fn empty_word_ends_patterns_and_conditions() {
    let f = Fx::new();
    let words: Vec<String> = ["str(a)", "", "a"].iter().map(|s| (*s).to_owned()).collect();
    let set = compile_acls(&[("x", words.as_slice())], &mut f.cx()).unwrap();
    assert!(!f.cond(&set, "if x").unwrap().eval(&f.ctx()));
    let c = compile_cond(&["x".to_owned(), String::new(), "nosuch".to_owned()], false, &set, &mut f.cx()).unwrap();
    assert_eq!(c.suites.len(), 1);
}

#[test]
fn map_converter_in_an_acl_criterion() {
    let f = Fx::new();
    let dir = std::env::temp_dir().join(format!("rampart-acl-map-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let m = dir.join("r.map");
    std::fs::write(&m, "/api api_be\n/ static_be\n").unwrap();
    let m = m.display();
    assert!(f.holds(&[&format!("r str(/api/x),map_beg({m}) api_be")], "if r"));
    assert!(f.holds(&[&format!("r str(/x),map_beg({m},none) static_be")], "if r"));
    assert!(f.holds(&[&format!("r str(x),map_beg({m},none) none")], "if r"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every predefined ACL compiles once its fetch exists (fetches still being written
/// give HAProxy's unknown-fetch message), and `TRUE`/`FALSE` evaluate.
#[test]
fn predefined_acls() {
    let f = Fx::new();
    let set = f.acls(&[]).unwrap();
    for p in kw::PREDEFINED {
        let fetch = p.words[0].split('(').next().unwrap();
        let fetch = kw::find(fetch).map_or(fetch, |k| k.fetch);
        match f.cond(&set, &format!("if {}", p.name)) {
            Ok(c) => {
                assert!(crate::sample::fetch::find(fetch).is_some(), "{}", p.name);
                assert_eq!(c.suites[0][0].acl.name, p.name);
            }
            Err(e) => {
                assert!(crate::sample::fetch::find(fetch).is_none(), "{}: {e}", p.name);
                assert!(e.contains(&format!("'{fetch}' is not supported yet")), "{}: {e}", p.name);
            }
        }
    }
    assert!(f.cond(&set, "if TRUE").unwrap().eval(&f.ctx()));
    assert!(!f.cond(&set, "if FALSE").unwrap().eval(&f.ctx()));
    assert!(f.cond(&set, "unless FALSE").unwrap().eval(&f.ctx()));
    // WAIT_END: a miss (even negated) until the inspection is final, then true
    let waiting = SampleCtx { final_data: false, ..f.ctx() };
    for text in ["if WAIT_END", "unless WAIT_END"] {
        assert_eq!(f.cond(&set, text).unwrap().test(&waiting), super::Test::Miss, "{text}");
    }
    assert!(f.cond(&set, "if WAIT_END").unwrap().eval(&f.ctx()));
    assert!(!f.cond(&set, "unless WAIT_END").unwrap().eval(&f.ctx()));
}

/// A cheap stand-in for the `acl_cond` fuzz target: random lines over a vocabulary
/// of criteria, options, operators, patterns and condition words compile or fail with
/// a message, never panic.
#[test]
fn random_lines_never_panic() {
    const VOCAB: &[&str] = &[
        "str(x)",
        "int(5)",
        "always_true",
        "bin(00)",
        "ipv4(1.2.3.4)",
        "-i",
        "-n",
        "-m",
        "-f",
        "-M",
        "-u",
        "--",
        "str",
        "beg",
        "reg",
        "ip",
        "int",
        "len",
        "found",
        "bool",
        "dom",
        "gt",
        "le",
        "eq",
        "1:3",
        ":",
        "-",
        "(",
        "{",
        "}",
        "!",
        "!!",
        "or",
        "||",
        "a",
        "b",
        "TRUE",
        "x",
        "10.0.0.0/8",
        "::1/200",
        "[",
        "(?=x)",
        "a*+",
        "",
    ];
    let f = Fx::new();
    let mut r: u64 = 0x2545_f491_4f6c_dd1d;
    let mut pick = |n: usize| {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        (r % n as u64) as usize
    };
    for _ in 0..3000 {
        let n = pick(6);
        let words: Vec<String> = (0..n).map(|_| VOCAB[pick(VOCAB.len())].to_owned()).collect();
        let name = ["a", "b", "or", "x!"][pick(4)];
        let (set, errs) = compile_acl_lines(&[(name, words.as_slice())], &mut f.cx());
        assert!(errs.iter().all(|(i, e)| *i == 0 && !e.is_empty()));
        let cond: Vec<String> = (0..pick(6)).map(|_| VOCAB[pick(VOCAB.len())].to_owned()).collect();
        match compile_cond(&cond, pick(2) == 0, &set, &mut f.cx()) {
            Ok(c) => {
                let _ = c.eval(&f.ctx());
            }
            Err(e) => assert!(!e.is_empty()),
        }
    }
}
