//! The `http_auth*` fetches and the `http_auth_group` ACL on literal requests. Every
//! expected value was observed on haproxy 2.6.12 with the same userlist, the same
//! `Authorization` header (sent by curl) and
//! `http-request return lf-string "t=%[http_auth_type] u=%[http_auth_user] p=%[http_auth_pass] a=%[http_auth(L)] g=%[http_auth_group(L)]"`
//! plus `set-var` rules on the ACLs.

use std::rc::Rc;

use rampart_cfg::model::AclDef;
use rampart_cfg::{Config, Span};

use super::auth_header;
use crate::acl::{compile_acl_defs, compile_condition, PatRefs};
use crate::proxy::Runtime;
use crate::sample::ctx::ConnInfo;
use crate::sample::expr::{self, CompileCx, Site};
use crate::sample::testutil::{config, conn, req_head, runtime, CFG};
use crate::sample::{Sample, SampleCtx};

/// `mkpasswd -m md5crypt -S rampart1 hunter2`.
const BOB_HASH: &str = "$1$rampart1$bNShj/o/Z/P3QcGSFaYZT0";

fn cfg_text() -> String {
    format!(
        "{CFG}userlist L\n  group G1 users alice\n  group G2\n  group G3\n  \
         user alice insecure-password secret groups G2\n  user bob password {BOB_HASH} groups G3\n  user carol\n"
    )
}

struct Fx {
    cfg: Config,
    rt: Runtime,
    conn: ConnInfo,
}

/// What the fetches answer for one request, as HAProxy's lf-string prints them
/// (absent: empty).
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    t: String,
    u: String,
    p: String,
    a: String,
    g: String,
}

fn seen(t: &str, u: &str, p: &str, a: &str, g: &str) -> Seen {
    let s = |x: &str| x.to_owned();
    Seen { t: s(t), u: s(u), p: s(p), a: s(a), g: s(g) }
}

impl Fx {
    fn new() -> Fx {
        let cfg = config(&cfg_text());
        let rt = runtime(&cfg);
        Fx { cfg, rt, conn: conn() }
    }

    fn with_req<R>(&self, auth: Option<&str>, f: impl FnOnce(&SampleCtx<'_>) -> R) -> R {
        let hdr = auth.map(|a| format!("Authorization: {a}\r\n")).unwrap_or_default();
        let buf = format!("GET / HTTP/1.1\r\nHost: x\r\n{hdr}\r\n").into_bytes();
        let head = req_head(&buf);
        let ctx = SampleCtx { req: Some(head.view(&buf)), ..SampleCtx::new(&self.rt, &self.conn, 0) };
        f(&ctx)
    }

    fn text(&self, expr_text: &str, ctx: &SampleCtx<'_>) -> String {
        let mut cx = CompileCx::new(&self.cfg, 0, Site::HttpReq);
        let e = expr::compile(expr_text, &mut cx).unwrap_or_else(|e| panic!("{expr_text}: {e}"));
        match e.eval(ctx) {
            None => String::new(),
            Some(Sample::Bool(b)) => u8::from(b).to_string(),
            Some(Sample::Str(s)) => String::from_utf8_lossy(&s).into_owned(),
            Some(other) => panic!("{expr_text}: {other:?}"),
        }
    }

    fn seen(&self, auth: &str) -> Seen {
        self.with_req(Some(auth), |ctx| Seen {
            t: self.text("http_auth_type", ctx),
            u: self.text("http_auth_user", ctx),
            p: self.text("http_auth_pass", ctx),
            a: self.text("http_auth(L)", ctx),
            g: self.text("http_auth_group(L)", ctx),
        })
    }

    /// Whether condition `cond` holds with the ACL lines `acls` for header `auth`.
    fn acl(&self, acls: &[&str], cond: &str, auth: &str) -> Result<bool, String> {
        let mut cx = CompileCx::new(&self.cfg, 0, Site::Acl);
        cx.pats = Rc::new(PatRefs::without_dns());
        let file: std::sync::Arc<str> = "t.cfg".into();
        let defs: Vec<AclDef> = acls
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let mut w = l.split_whitespace().map(str::to_owned);
                AclDef { name: w.next().unwrap(), words: w.collect(), span: Span::new(file.clone(), i as u32 + 1) }
            })
            .collect();
        let (set, errs) = compile_acl_defs(&defs, &mut cx);
        if let Some((_, e)) = errs.first() {
            return Err(e.clone());
        }
        let c = rampart_cfg::model::Condition {
            negate: false,
            words: cond.split_whitespace().map(str::to_owned).collect(),
            span: Span::new(file, 100),
        };
        let cond = compile_condition(&c, &defs, &set, &mut cx)?;
        Ok(self.with_req(Some(auth), |ctx| cond.eval(ctx)))
    }
}

fn b64(s: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn basic(cred: &str) -> String {
    format!("Basic {}", b64(cred.as_bytes()))
}

#[test]
fn credentials_checked_against_the_userlist() {
    let f = Fx::new();
    assert_eq!(f.seen(&basic("alice:secret")), seen("Basic", "alice", "secret", "1", "alice"));
    assert_eq!(f.seen(&basic("alice:wrong")), seen("Basic", "alice", "wrong", "0", ""));
    assert_eq!(f.seen(&basic("bob:hunter2")), seen("Basic", "bob", "hunter2", "1", "bob"));
    assert_eq!(f.seen(&basic("bob:hunter2x")), seen("Basic", "bob", "hunter2x", "0", ""));
    assert_eq!(f.seen(&basic("nobody:x")), seen("Basic", "nobody", "x", "0", ""));
    assert_eq!(f.seen(&basic(":")), seen("Basic", "", "", "0", ""));
    assert_eq!(f.seen(&basic("alice:secret:x")), seen("Basic", "alice", "secret:x", "0", ""));
    // COMPAT: HAProxy 2.6.12 crashes here (user without password); rampart refuses.
    assert_eq!(f.seen(&basic("carol:")), seen("Basic", "carol", "", "0", ""));
    f.with_req(None, |ctx| {
        assert_eq!(f.text("http_auth_type", ctx), "");
        assert_eq!(f.text("http_auth(L)", ctx), "", "absent, not false, without credentials");
    });
}

#[test]
fn scheme_is_a_prefix_compared_without_case() {
    let f = Fx::new();
    let alice = b64(b"alice:secret");
    for scheme in ["basic", "BASI", "B", "Bas  "] {
        assert_eq!(f.seen(&format!("{scheme} {alice}")), seen("Basic", "alice", "secret", "1", "alice"), "{scheme}");
    }
    for token in ["Bearer abc", "Be abc", "bEaReR abc"] {
        assert_eq!(f.seen(token), seen("Bearer", "", "", "", ""), "{token}");
    }
    let none = seen("", "", "", "", "");
    for h in ["Digest abc", "Basicx abc", "Basic", "Basic\tYWxpY2U6c2VjcmV0", " "] {
        assert_eq!(f.seen(h), none, "{h:?}");
    }
}

#[test]
fn basic_credentials_must_decode() {
    let f = Fx::new();
    let none = seen("", "", "", "", "");
    for data in [
        "bm9jb2xvbg==",         // "nocolon"
        "YWxpY2U6c2VjcmV0=",    // bad length
        "YWxpY2U6c2VjcmV",      // bad length
        "YWxp Y2U6c2VjcmV0",    // space inside
        "Ym9iOnB3==",           // too much padding
        "YWwAaWNlOnNlY3JldA==", // "al\0ice:secret": no ':' before the NUL
    ] {
        assert_eq!(f.seen(&format!("Basic {data}")), none, "{data}");
    }
    // "alice:sec\0ret": the password ends at the NUL.
    assert_eq!(f.seen("Basic YWxpY2U6c2VjAHJldA=="), seen("Basic", "alice", "sec", "0", ""));
    // Padding may be left out when not needed.
    assert_eq!(f.seen("Basic YWxpY2U6c2VjcmV0"), seen("Basic", "alice", "secret", "1", "alice"));
}

#[test]
fn first_comma_separated_value_is_read() {
    let f = Fx::new();
    let two = format!("{}, {}", basic("alice:secret"), basic("bob:hunter2"));
    assert_eq!(f.seen(&two), seen("Basic", "alice", "secret", "1", "alice"));
}

#[test]
fn long_credentials_decode_on_the_heap() {
    let f = Fx::new();
    let pw = "p".repeat(600);
    assert_eq!(f.seen(&basic(&format!("alice:{pw}"))).p, pw);
}

#[test]
fn bearer_tokens() {
    let f = Fx::new();
    f.with_req(Some("Bearer   tok.en"), |ctx| {
        assert_eq!(f.text("http_auth_bearer", ctx), "tok.en");
        assert_eq!(f.text("http_auth_bearer(x-token)", ctx), "", "absent header: empty string");
        assert_eq!(f.text("http_auth_bearer(authorization)", ctx), "tok.en");
    });
    f.with_req(Some("Be tok"), |ctx| {
        assert_eq!(f.text("http_auth_bearer", ctx), "tok", "prefix of Bearer through Authorization");
        assert_eq!(f.text("http_auth_bearer(authorization)", ctx), "", "the whole word with a header name");
    });
    f.with_req(Some(&basic("a:b")), |ctx| assert_eq!(f.text("http_auth_bearer", ctx), ""));
}

#[test]
fn auth_header_is_parsed_once_per_call() {
    let buf = b"GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Basic   YTpi\r\n\r\n";
    let head = req_head(buf);
    let h = auth_header(head.view(buf)).unwrap();
    assert_eq!(h.data, b"YTpi");
}

#[test]
fn http_auth_group_acl() {
    let f = Fx::new();
    let alice = basic("alice:secret");
    let bob = basic("bob:hunter2");
    let yes = |acls: &[&str], auth: &str| f.acl(acls, "g", auth).unwrap();
    assert!(yes(&["g http_auth_group(L) G1 G2"], &alice), "alice is in G1 (group users) and G2 (user groups)");
    assert!(yes(&["g http_auth_group(L) G1"], &alice));
    assert!(!yes(&["g http_auth_group(L) G1 G2"], &bob), "bob is only in G3");
    assert!(yes(&["g http_auth_group(L) G3"], &bob));
    assert!(!yes(&["g http_auth_group(L) G3"], &basic("bob:wrong")), "wrong password: no match");
    assert!(!yes(&["g http_auth_group(L) G1"], "Bearer x"));
    assert!(f.acl(&["a http_auth(L)"], "a", &bob).unwrap());
    assert!(!f.acl(&["a http_auth(L)"], "a", &basic("bob:x")).unwrap());
    assert!(f.acl(&[], "{ http_auth_group(L) G3 }", &bob).unwrap(), "anonymous ACL");
    assert!(f.acl(&["g http_auth_group(L) -m str bob"], "g", &bob).unwrap(), "-m str matches the user name");
}

#[test]
fn http_auth_group_acl_errors() {
    let f = Fx::new();
    let err = |acls: &[&str]| f.acl(acls, "g", "").unwrap_err();
    assert_eq!(err(&["g http_auth_group(L) G9"]), "proxy fe: acl g http_auth_group(): invalid group 'G9'.");
    assert_eq!(err(&["g http_auth_group(L)"]), "proxy fe: acl g http_auth_group(): no groups specified.");
    assert_eq!(
        err(&["g http_auth_group(NOPE) G1"]),
        "error detected while parsing ACL 'g' : ACL keyword 'http_auth_group' : unable to find userlist 'NOPE' referenced in arg 1 of ACL keyword \
         'http_auth_group' in proxy 'fe'."
    );
    assert_eq!(
        f.acl(&[], "{ http_auth_group(L) G7 }", "").unwrap_err(),
        "proxy fe: acl  http_auth_group(): invalid group 'G7'."
    );
}

#[test]
fn userlist_argument_errors() {
    let f = Fx::new();
    let mut cx = CompileCx::new(&f.cfg, 0, Site::HttpReq);
    let e = expr::compile("http_auth(NOPE)", &mut cx).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unable to find userlist 'NOPE' referenced in arg 1 of sample fetch keyword 'http_auth' in http-request \
         expression in proxy 'fe'"
    );
    // As HAProxy 2.6.12 for `http_auth` and `http_auth()` alike.
    for text in ["http_auth", "http_auth()"] {
        let e = expr::compile(text, &mut cx).unwrap_err();
        assert_eq!(
            e.to_string(),
            "missing userlist name in arg 1 of sample fetch keyword 'http_auth' in http-request expression in proxy 'fe'"
        );
    }
}
