//! Compiling check rules: HAProxy's implicit rules, step numbers, comments, where an
//! expect resumes, and the rules refused at startup.

use super::*;
use crate::check::TcpChk;
use crate::sample::testutil::config;

/// The compiled rules of the first backend of `text` (after a `defaults` with
/// timeouts), or the alerts.
fn compiled(text: &str) -> Result<Vec<Rule>, Vec<String>> {
    let cfg = config(&format!("defaults\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n{text}"));
    let mut cx = CompileCx::new(&cfg, 0, crate::sample::expr::Site::TcpCheck);
    let chk = TcpChk::compile(&cfg.proxies[0].options.health, &mut cx)
        .map_err(|d| d.into_iter().map(|d| d.message).collect::<Vec<_>>())?;
    Ok(chk.into_rules())
}

/// One letter per rule (`C` implicit connect, `c` connect, `s` send, `e` expect, `x`
/// custom, `v` variable), with its step.
fn shape(rules: &[Rule]) -> Vec<String> {
    rules
        .iter()
        .map(|r| {
            let k = match &r.action {
                Action::Connect(c) if c.implicit => 'C',
                Action::Connect(_) => 'c',
                Action::Send(_) => 's',
                Action::Expect(_) => 'e',
                Action::Custom(_) => 'x',
                Action::SetVar { .. } | Action::UnsetVar(_) => 'v',
            };
            format!("{k}{}", r.step)
        })
        .collect()
}

#[test]
fn http_checks_get_an_implicit_connect_and_expect() {
    let r = compiled("backend b\n option httpchk GET /\n").unwrap();
    assert_eq!(shape(&r), ["C0", "s1", "e2"]);
    let Action::Expect(e) = &r[2].action else { panic!("expect") };
    assert!(matches!(&e.matcher, Matcher::Status(c) if c == &[(200, 399)]));
    // an explicit expect: no implicit one
    let r = compiled("backend b\n option httpchk\n http-check expect status 200\n").unwrap();
    assert_eq!(shape(&r), ["C0", "s1", "e1"]);
}

#[test]
fn the_option_request_moves_after_a_first_connect() {
    let r = compiled("backend b\n option httpchk GET /a\n http-check connect port 8080\n").unwrap();
    assert_eq!(shape(&r), ["c1", "s2", "e3"]);
    let Action::Connect(c) = &r[0].action else { panic!("connect") };
    assert_eq!((c.port, c.implicit, c.default), (Some(8080), false, false));
    // several requests, each after its connect; steps numbered as HAProxy's parser does
    let r = compiled(
        "backend b\n option httpchk\n http-check connect port 8080\n http-check send uri /a\n\
         http-check expect status 200\n http-check connect port 8081\n http-check send uri /b\n",
    )
    .unwrap();
    assert_eq!(shape(&r), ["c1", "s1", "e2", "c3", "s4", "e5"]);
}

#[test]
fn tcp_check_steps_count_comments_and_start_with_a_connect() {
    let r = compiled(
        "backend b\n option tcp-check\n tcp-check comment hello\n tcp-check send x\n tcp-check expect string y\n\
         tcp-check set-var(check.a) int(1)\n tcp-check expect string z\n",
    )
    .unwrap();
    assert_eq!(shape(&r), ["C0", "s2", "e3", "v4", "e5"]);
    assert_eq!(r[1].comment.as_deref(), Some("hello"));
    assert_eq!(r[2].comment, None, "a comment names the rules of one kind after it");
    let r = compiled("backend b\n option tcp-check\n tcp-check set-var(check.a) int(1)\n tcp-check connect\n").unwrap();
    assert_eq!(shape(&r), ["v1", "c2"], "variable actions may come before the first connect");
    let r = compiled(
        "backend b\n option tcp-check\n tcp-check comment c\n tcp-check expect string a\n tcp-check expect string b\n",
    )
    .unwrap();
    assert_eq!((r[1].comment.as_deref(), r[2].comment.as_deref()), (Some("c"), Some("c")));
}

#[test]
fn an_expect_resumes_at_the_first_inverted_expect_before_it() {
    let r = compiled(
        "backend b\n option tcp-check\n tcp-check send x\n tcp-check expect ! string err\n\
         tcp-check expect string ok\n tcp-check expect string more\n",
    )
    .unwrap();
    assert_eq!(r.iter().map(|r| r.head).collect::<Vec<_>>(), [0, 1, 2, 2, 2]);
}

#[test]
fn protocol_checks_and_plain_checks() {
    assert_eq!(shape(&compiled("backend b\n server s 127.0.0.1:80 check\n").unwrap()), ["C0"]);
    assert_eq!(shape(&compiled("backend b\n option redis-check\n").unwrap()), ["C0", "s1", "e2"]);
    assert_eq!(shape(&compiled("backend b\n option ssl-hello-chk\n").unwrap()), ["C0", "s1", "e2"]);
    assert_eq!(shape(&compiled("backend b\n option smtpchk\n").unwrap()), ["c1", "e2", "e3", "s4", "e5", "s6", "e7"]);
    assert_eq!(shape(&compiled("backend b\n option mysql-check user u\n").unwrap()), ["c1", "s2", "x3", "x4"]);
    assert_eq!(shape(&compiled("backend b\n option pgsql-check user u\n").unwrap()), ["c1", "s2", "e3", "e4"]);
    assert_eq!(shape(&compiled("backend b\n option ldap-check\n").unwrap()), ["C0", "s1", "e2", "x3"]);
    assert_eq!(shape(&compiled("backend b\n option spop-check\n").unwrap()), ["C0", "s1", "x2"]);
}

#[test]
fn rules_that_do_not_compile_are_alerts() {
    let e = compiled("backend b\n option httpchk\n http-check expect rstring (\n").unwrap_err();
    assert!(e[0].starts_with("'http-check expect' : regex '(' is invalid"), "{e:?}");
    let e = compiled("backend b\n option tcp-check\n tcp-check send-lf %[nope]\n").unwrap_err();
    assert!(e[0].starts_with("'tcp-check send-lf' : '%[nope]' invalid log-format string ("), "{e:?}");
    let e = compiled("backend b\n option tcp-check\n tcp-check set-var(check.x) nope\n").unwrap_err();
    assert!(e[0].starts_with("'tcp-check set-var' : "), "{e:?}");
    let e = compiled("backend b\n option tcp-check\n tcp-check connect addr example.com\n").unwrap_err();
    assert_eq!(e, ["'tcp-check connect addr example.com' (only an IP address) is not supported yet"]);
}

#[test]
fn ssl_hello_is_haproxys_client_hello() {
    let h = crate::check::proto::ssl_client_hello(0x6000_0000);
    assert_eq!(h.len(), 126);
    assert_eq!(&h[..11], b"\x16\x03\x00\x00\x79\x01\x00\x00\x75\x03\x00");
    assert_eq!(&h[11..15], b"\x60\x00\x00\x00");
    assert_eq!(&h[15..43], b"HAPROXYSSLCHK\nHAPROXYSSLCHK\n");
    assert_eq!(&h[43..47], b"\x00\x00\x4e\x00");
    assert_eq!(&h[122..], b"\x00\x3a\x01\x00");
}

#[test]
fn connect_addresses() {
    assert_eq!(connect_addr("10.0.0.1"), Some(("10.0.0.1".parse().unwrap(), None)));
    assert_eq!(connect_addr("10.0.0.1:81"), Some(("10.0.0.1".parse().unwrap(), Some(81))));
    assert_eq!(connect_addr("ipv6@[::1]:82"), Some(("::1".parse().unwrap(), Some(82))));
    assert_eq!(connect_addr("host:80"), None);
}
