//! ACL keywords, predefined ACLs and conditions on real HTTP requests through the
//! fetches; expected results checked against HAProxy 2.6.12 with the same lines.

use std::rc::Rc;

use rampart_cfg::model::{AclDef, Condition};
use rampart_cfg::Span;

use super::*;
use crate::sample::expr::Site;
use crate::sample::testutil::{config, conn, req_head, runtime, CFG};

/// Evaluates `cond` (words after `if`) with `acls` ("name words...") on request `req`.
fn check(acls: &[&str], cond: &str, req: &str) -> Result<bool, String> {
    let cfg = config(CFG);
    let rt = runtime(&cfg);
    let c = conn();
    let mut cx = CompileCx::new(&cfg, 0, Site::Acl);
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
    let condition = Condition {
        negate: false,
        words: cond.split_whitespace().map(str::to_owned).collect(),
        span: Span::new(file, 100),
    };
    let cond = compile_condition(&condition, &defs, &set, &mut cx)?;
    let buf = req.replace('\n', "\r\n").into_bytes();
    let head = req_head(&buf);
    let mut ctx = SampleCtx::new(&rt, &c, 0);
    ctx.req = Some(head.view(&buf));
    Ok(cond.eval(&ctx))
}

fn yes(acls: &[&str], cond: &str, req: &str) -> bool {
    check(acls, cond, req).unwrap_or_else(|e| panic!("{acls:?} {cond}: {e}"))
}

const GET: &str = "GET /api/v1/Users?id=7 HTTP/1.1\nHost: www.Example.com:8080\nX-Fwd: 10.1.2.3\nX-Fwd: 192.168.0.9\nCookie: sid=abc; lang=fr\n\n";

#[test]
fn path_and_url_keywords() {
    assert!(yes(&["a path_beg /api/"], "a", GET));
    assert!(!yes(&["a path_beg /API/"], "a", GET));
    assert!(yes(&["a path_beg -i /API/"], "a", GET));
    assert!(yes(&["a path_end /Users"], "a", GET));
    assert!(yes(&["a path_sub v1/U"], "a", GET));
    assert!(yes(&["a path_dir v1"], "a", GET));
    assert!(!yes(&["a path_dir v"], "a", GET));
    assert!(yes(&["a path_reg ^/api/v[0-9]+/"], "a", GET));
    assert!(yes(&["a path_len 13"], "a", GET));
    assert!(yes(&["a path_len gt 5"], "a", GET));
    assert!(yes(&["a path /api/v1/Users"], "a", GET));
    assert!(yes(&["a url_beg /api/v1/Users?id="], "a", GET));
    assert!(yes(&["a url_end id=7"], "a", GET));
    assert!(yes(&["a urlp(id) 7"], "a", GET));
    assert!(yes(&["a urlp_val(id) gt 6"], "a", GET));
    // A converter after an ACL keyword drops its method: `path_beg,lower` is exact.
    assert!(!yes(&["a path_beg,lower /api/"], "a", GET));
    assert!(yes(&["a path_beg,lower /api/v1/users"], "a", GET));
}

#[test]
fn header_keywords_and_fetch_criteria() {
    assert!(yes(&["a hdr(host) www.Example.com:8080"], "a", GET));
    assert!(yes(&["a hdr_dom(host) -i example.com"], "a", GET));
    assert!(!yes(&["a hdr_dom(host) example.com"], "a", GET));
    assert!(yes(&["a hdr_beg(host) -i www."], "a", GET));
    assert!(yes(&["a hdr_end(host) :8080"], "a", GET));
    // Each occurrence of a header is tried.
    assert!(yes(&["a hdr(x-fwd) 192.168.0.9"], "a", GET));
    assert!(yes(&["a hdr_ip(x-fwd) 192.168.0.0/16"], "a", GET));
    assert!(yes(&["a hdr_cnt(x-fwd) 2"], "a", GET));
    assert!(yes(&["a req.hdr(host),lower -m dom example.com"], "a", GET));
    assert_eq!(
        check(&["a req.hdr(host),lower,map_dom(/nonexistent) x"], "a", GET).unwrap_err(),
        "error detected while parsing ACL 'a' : invalid args in converter 'map_dom' : failed to open pattern file </nonexistent> in ACL expression 'req.hdr(host),lower,map_dom(/nonexistent)'."
    );
    assert!(yes(&["a cook(sid) abc"], "a", GET));
    assert!(yes(&["a req.cook(lang) -m str fr"], "a", GET));
    assert!(!yes(&["a hdr(x-absent) -m found"], "a", GET));
    assert!(yes(&["a hdr(host) -m found"], "a", GET));
    // Without patterns nothing matches (haproxy warns).
    assert!(!yes(&["a hdr(host)"], "a", GET));
}

#[test]
fn method_src_and_version() {
    assert!(yes(&["a method GET"], "a", GET));
    assert!(!yes(&["a method POST"], "a", GET));
    assert!(yes(&["a method PURGE"], "a", "PURGE / HTTP/1.1\nHost: x\n\n"));
    assert!(yes(&["a method -i purge"], "a", "PURGE / HTTP/1.1\nHost: x\n\n"));
    assert!(!yes(&["a method purge"], "a", "PURGE / HTTP/1.1\nHost: x\n\n"));
    assert!(yes(&["a src 192.168.1.0/24"], "a", GET));
    assert!(!yes(&["a src 10.0.0.0/8 ::1"], "a", GET));
    assert!(yes(&["a src_port gt 1024"], "a", GET));
    assert!(yes(&["a req_ver 1.1"], "a", GET));
}

#[test]
fn predefined_on_requests() {
    assert!(!yes(&[], "LOCALHOST", GET));
    assert!(yes(&[], "METH_GET", GET));
    assert!(yes(&[], "METH_GET", "HEAD / HTTP/1.1\nHost: x\n\n"));
    assert!(!yes(&[], "METH_GET", "POST / HTTP/1.1\nHost: x\nContent-Length: 0\n\n"));
    assert!(yes(&[], "METH_POST", "POST / HTTP/1.1\nHost: x\nContent-Length: 0\n\n"));
    assert!(yes(&[], "METH_OPTIONS", "OPTIONS * HTTP/1.1\nHost: x\n\n"));
    assert!(yes(&[], "HTTP_URL_STAR", "OPTIONS * HTTP/1.1\nHost: x\n\n"));
    assert!(yes(&[], "HTTP_1.1", GET));
    assert!(!yes(&[], "HTTP_1.0", GET));
    assert!(yes(&[], "HTTP_1.0", "GET / HTTP/1.0\n\n"));
    assert!(!yes(&[], "HTTP_2.0", GET));
    assert!(yes(&[], "HTTP", GET));
    assert!(yes(&[], "HTTP_URL_SLASH", GET));
    assert!(!yes(&[], "HTTP_URL_ABS", GET));
    assert!(yes(&[], "HTTP_URL_ABS", "GET http://x/ HTTP/1.1\nHost: x\n\n"));
    assert!(!yes(&[], "HTTP_CONTENT", GET));
    assert!(yes(&[], "HTTP_CONTENT", "POST / HTTP/1.1\nHost: x\nContent-Length: 5\n\n"));
    assert!(yes(&[], "METH_PUT or METH_DELETE or METH_CONNECT or METH_TRACE or METH_HEAD or !METH_GET or TRUE", GET));
}

#[test]
fn conditions_see_acls_declared_above() {
    let c = check(&["a path_beg /api"], "b", GET).unwrap_err();
    assert_eq!(c, "no such ACL : 'b'");
    assert!(yes(&["a path_beg /x", "b always_true", "a path_beg /api"], "a b", GET));
}
