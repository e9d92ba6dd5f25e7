use super::*;

/// Servers `s1` (index 0, up), `s2` (index 1, down), `s3` (index 2, up).
fn lookup(id: &[u8]) -> Lookup {
    match id {
        b"s1" => Lookup::Up(0),
        b"s2" => Lookup::Down,
        b"s3" => Lookup::Up(2),
        _ => Lookup::None,
    }
}

fn persist(prefix: bool, strip: bool) -> ReqPersist<'static> {
    ReqPersist {
        name: b"SRV",
        prefix,
        strip,
        assigned: false,
        state: CkReq::None,
        srv: None,
        maxidle: 0,
        maxlife: 0,
        now: 0,
        dates: Dates::default(),
    }
}

/// Runs the request walk; returns the edit, the new value, the state and the server.
fn req(hdr: &str, prefix: bool, strip: bool) -> (Edit, String, CkReq, Option<usize>) {
    let mut v = hdr.as_bytes().to_vec();
    let mut p = persist(prefix, strip);
    let e = client_side(&mut v, Some(&mut p), None, &mut lookup);
    (e, String::from_utf8(v).unwrap(), p.state, p.srv)
}

#[test]
fn request_cookie_chooses_the_server() {
    assert_eq!(req("SRV=s1", false, false), (Edit::Keep, "SRV=s1".into(), CkReq::Valid, Some(0)));
    assert_eq!(req("a=1; SRV=s3; b=2", false, false), (Edit::Keep, "a=1; SRV=s3; b=2".into(), CkReq::Valid, Some(2)));
    assert_eq!(req("SRV=s2", false, false).2, CkReq::Down);
    assert_eq!(req("SRV=nope", false, false).2, CkReq::Invalid);
    assert_eq!(req("SRV=", false, false).2, CkReq::Invalid, "an empty value names nobody");
    assert_eq!(req("a=1", false, false).2, CkReq::None);
    assert_eq!(req("SRVX=s1; XSRV=s1", false, false).2, CkReq::None, "the name matches whole");
    // the date part of a dated cookie is not the server's
    assert_eq!(req("SRV=s1|abcde", false, false).3, Some(0));
    // a second cookie once the server is chosen leaves it valid (checked on haproxy);
    // a down one stays D; an invalid one is judged again
    assert_eq!(req("SRV=s1; SRV=s3", false, false), (Edit::Keep, "SRV=s1; SRV=s3".into(), CkReq::Valid, Some(0)));
    assert_eq!(req("SRV=s2; SRV=nope", false, false).2, CkReq::Down);
    assert_eq!(req("SRV=nope; SRV=s3", false, false).2, CkReq::Valid);
}

#[test]
fn a_rule_chose_already() {
    let mut v = b"SRV=s1".to_vec();
    let mut p = ReqPersist { assigned: true, ..persist(false, false) };
    client_side(&mut v, Some(&mut p), None, &mut lookup);
    assert_eq!((p.state, p.srv), (CkReq::Unused, None));
}

#[test]
fn insert_indirect_removes_the_cookie() {
    assert_eq!(req("SRV=s1", false, true), (Edit::Remove, String::new(), CkReq::Valid, Some(0)));
    assert_eq!(req("SRV=s1; a=1", false, true).1, "a=1");
    assert_eq!(req("a=1; SRV=s1", false, true).1, "a=1");
    assert_eq!(req("a=1; SRV=s1; b=2", false, true).1, "a=1; b=2");
    assert_eq!(req("a=1;SRV=s1;b=2", false, true).1, "a=1; b=2", "one space comes back, as HAProxy writes it");
    assert_eq!(req("a=1 ;  SRV=s1 ;  b=2", false, true).1, "a=1; b=2");
    assert_eq!(req("a=1, SRV=s1, b=2", false, true).1, "a=1, b=2");
    assert_eq!(req("SRV=bad; a=1", false, true).0, Edit::Changed, "an invalid cookie goes too");
    // an attribute goes with its cookie
    assert_eq!(req("SRV=s1; $Path=/; a=1", false, true).1, "a=1");
    assert_eq!(req("a=1; SRV=s1; flag; b=2", false, true).1, "a=1; flag; b=2");
}

#[test]
fn prefix_mode_strips_the_server_part() {
    assert_eq!(req("SRV=s1~abc", true, false), (Edit::Changed, "SRV=abc".into(), CkReq::Valid, Some(0)));
    assert_eq!(req("x=1; SRV=s3~a~b; y=2", true, false).1, "x=1; SRV=a~b; y=2");
    assert_eq!(req("SRV=abc", true, false), (Edit::Keep, "SRV=abc".into(), CkReq::Invalid, None));
    assert_eq!(req("SRV=~abc", true, false).1, "SRV=abc");
}

#[test]
fn blanks_around_the_equal_sign_go() {
    assert_eq!(req("a = 1; SRV =s1", false, false), (Edit::Changed, "a=1; SRV=s1".into(), CkReq::Valid, Some(0)));
    assert_eq!(req(r#"SRV="s;1"; b=2"#, false, false).2, CkReq::Invalid, "quotes hold delimiters");
}

#[test]
fn capture_takes_the_first_matching_prefix() {
    let mut out = Vec::new();
    let mut c = Capture { name: b"SES", len: 10, out: &mut out, done: false };
    let mut v = b"a=1; SESSION = 0123456789abc; SES=2".to_vec();
    let e = client_side(&mut v, None, Some(&mut c), &mut lookup);
    assert!(c.done);
    assert_eq!(e, Edit::Changed);
    assert_eq!(out, b"SESSION=01");
    let mut out = Vec::new();
    let mut c = Capture { name: b"SES", len: 63, out: &mut out, done: false };
    client_side(&mut b"SE=1; ses=2".to_vec(), None, Some(&mut c), &mut lookup);
    assert!(!c.done && out.is_empty(), "case matters, and the name must be whole");
}

fn res(hdr: &str, p: ResPersist<'_>) -> (Edit, String, CkRes) {
    let mut v = hdr.as_bytes().to_vec();
    let mut st = CkRes::None;
    let e = server_side(&mut v, Some(p), None, &mut st);
    (e, String::from_utf8(v).unwrap(), st)
}

const PASSIVE: ResPersist<'static> = ResPersist { name: b"SRV", preserve: false, delete: false, rewrite: None };

#[test]
fn server_cookie_is_deleted_rewritten_or_prefixed() {
    assert_eq!(res("SRV=app; path=/", PASSIVE), (Edit::Keep, "SRV=app; path=/".into(), CkRes::Passive));
    assert_eq!(res("other=1", PASSIVE).2, CkRes::None);
    let del = ResPersist { delete: true, ..PASSIVE };
    assert_eq!(res("SRV=app; path=/", del), (Edit::Remove, "SRV=app; path=/".into(), CkRes::Deleted));
    let kept = ResPersist { preserve: true, ..del };
    assert_eq!(res("SRV=app", kept).2, CkRes::Passive);
    let rw = ResPersist { rewrite: Some((b"s1", false)), ..PASSIVE };
    assert_eq!(res("SRV=app; Path=/x", rw), (Edit::Changed, "SRV=s1; Path=/x".into(), CkRes::Rewritten));
    assert_eq!(res("SRV = app", rw).1, "SRV=s1");
    let pfx = ResPersist { rewrite: Some((b"s1", true)), ..PASSIVE };
    assert_eq!(res("SRV=app; HttpOnly", pfx), (Edit::Changed, "SRV=s1~app; HttpOnly".into(), CkRes::Rewritten));
    assert_eq!(res("SRV", pfx).0, Edit::Keep, "not name=value");
}

#[test]
fn server_cookie_capture() {
    let mut out = Vec::new();
    let mut c = Capture { name: b"SRV", len: 5, out: &mut out, done: false };
    let mut st = CkRes::None;
    server_side(&mut b"SRVID=abcdef; path=/".to_vec(), None, Some(&mut c), &mut st);
    assert_eq!((out.as_slice(), st), (&b"SRVID"[..], CkRes::None));
}

fn ck(line: &str) -> CookiePersist {
    let ctx = rampart_cfg::LexCtx { env: &|_| None, version: "2.6.12", features: &[] };
    let cfg = rampart_cfg::parse_str("t.cfg", &format!("backend b\n mode http\n {line}\n"), &ctx);
    cfg.config.unwrap().proxies[0].cookie.clone().unwrap()
}

#[test]
fn inserted_cookie_bytes() {
    let mut out = Vec::new();
    inserted_value(&mut out, &ck("cookie SRV insert"), Some(b"s1"), 0, 0);
    assert_eq!(out, b"SRV=s1; path=/");
    inserted_value(
        &mut out,
        &ck("cookie SRV insert indirect nocache httponly secure domain a.b domain c.d attr SameSite=Lax attr x"),
        Some(b"s1"),
        0,
        0,
    );
    assert_eq!(out, b"SRV=s1; path=/; domain=a.b; domain=c.d; HttpOnly; Secure; SameSite=Lax; x");
    inserted_value(&mut out, &ck("cookie SRV insert"), None, 0, 0);
    assert_eq!(out, b"SRV=; Expires=Thu, 01-Jan-1970 00:00:01 GMT; path=/");
}

#[test]
fn cacheability() {
    use rampart_proto::http::Method;
    let check = |meth: Method, status: u16, hdrs: &str| {
        let buf = format!("HTTP/1.1 {status} X\r\n{hdrs}\r\n");
        let m = crate::sample::testutil::res_head(buf.as_bytes());
        cacheable(Some(meth), m.view(buf.as_bytes()))
    };
    assert!(!check(Method::Get, 200, ""), "no expiry nor validator");
    assert!(check(Method::Get, 200, "Cache-Control: max-age=60\r\n"));
    assert!(check(Method::Head, 404, "Expires: x\r\n"));
    assert!(check(Method::Get, 200, "ETag: \"1\"\r\n"));
    assert!(check(Method::Get, 200, "Last-Modified: x\r\n"));
    assert!(!check(Method::Post, 200, "ETag: 1\r\n"));
    assert!(check(Method::Post, 200, "Cache-Control: public, max-age=5\r\n"), "public wins over the method");
    assert!(!check(Method::Get, 302, "ETag: 1\r\n"));
    assert!(!check(Method::Get, 200, "Cache-Control: max-age=60, private\r\n"));
    assert!(!check(Method::Get, 200, "Pragma: no-cache\r\nETag: 1\r\n"));
}

#[test]
fn base64_dates() {
    let mut out = Vec::new();
    s30_to_b64(&mut out, 1);
    s30_to_b64(&mut out, (1 << 30) - 1);
    assert_eq!(out, b"AAAAB/////");
    assert_eq!(b64_to_s30(b"AAAAB"), Some(1));
    assert_eq!(b64_to_s30(b"/////"), Some((1 << 30) - 1));
    assert_eq!(b64_to_s30(b"AAAAA"), None, "0 is no date");
    assert_eq!(b64_to_s30(b"AAA=B"), None);
}

/// The request walk with `maxidle`/`maxlife` at date `now`.
fn dated(hdr: &str, maxidle: u32, maxlife: u32, now: i64) -> (CkReq, Option<usize>, Dates) {
    let mut v = hdr.as_bytes().to_vec();
    let mut p = ReqPersist { maxidle, maxlife, now, ..persist(false, false) };
    client_side(&mut v, Some(&mut p), None, &mut lookup);
    (p.state, p.srv, p.dates)
}

fn b64(v: u32) -> String {
    let mut out = Vec::new();
    s30_to_b64(&mut out, v);
    String::from_utf8(out).unwrap()
}

#[test]
fn dated_cookies_expire() {
    let now = 1_700_000_000i64;
    let q = |t: i64| b64((t >> 2) as u32);
    // seen 20 s ago, maxidle 30 s: valid; 40 s ago: expired
    let recent = format!("SRV=s1|{}", q(now - 20));
    assert_eq!(dated(&recent, 30, 0, now).0, CkReq::Valid);
    assert_eq!(dated(&recent, 30, 0, now).2.last, ((now - 20) >> 2 << 2) as u32);
    assert_eq!(dated(&format!("SRV=s1|{}", q(now - 40)), 30, 0, now), (CkReq::Expired, None, Dates::default()));
    // dated more than a day ahead: expired too
    assert_eq!(dated(&format!("SRV=s1|{}", q(now + 90_000)), 30, 0, now).0, CkReq::Expired);
    // without maxidle, the date is read but not judged
    assert_eq!(dated(&format!("SRV=s1|{}", q(now - 40)), 0, 0, now).0, CkReq::Valid);
    // first issued 2 h ago, maxlife 1 h: old
    let old = format!("SRV=s1|{}|{}", q(now), q(now - 7200));
    assert_eq!(dated(&old, 30, 3600, now).0, CkReq::Old);
    let young = format!("SRV=s1|{}|{}", q(now), q(now - 60));
    let (st, srv, d) = dated(&young, 30, 3600, now);
    assert_eq!((st, srv, d.first), (CkReq::Valid, Some(0), ((now - 60) >> 2 << 2) as u32));
}

#[test]
fn inserted_cookie_dates() {
    let mut out = Vec::new();
    let now = 1_700_000_001i64;
    inserted_value(&mut out, &ck("cookie SRV insert maxidle 30m"), Some(b"s1"), now, 0);
    assert_eq!(out, format!("SRV=s1|{}; path=/", b64(((now + 3) >> 2) as u32)).as_bytes());
    inserted_value(&mut out, &ck("cookie SRV insert maxlife 1d"), Some(b"s1"), now, 1_600_000_000);
    let (l, f) = (b64(((now + 3) >> 2) as u32), b64(1_600_000_000 >> 2));
    assert_eq!(out, format!("SRV=s1|{l}|{f}; path=/").as_bytes());
}
