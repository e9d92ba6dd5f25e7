//! HTTP Basic authentication through the binary: a `userlist` with an insecure and a
//! bcrypt password, `http-request auth` guarded by `http_auth`, and an
//! `http_auth_group` ACL, in a frontend, a backend and a `listen` section. The 401
//! page and every answer are haproxy 2.6.12's (`RAMPART_TEST_BINARY=/usr/sbin/haproxy`
//! runs this file against it).

mod http_common;

use http_common::*;
use rampart_testkit::{HttpBackend, RawClient, Reply, Running};

/// `mkpasswd -m bcrypt -R 10 x`.
const BOB_HASH: &str = "$2b$10$D0NUnEJYAJxKfqVk.08AduOWH1qBPmnlJHBHDz7qKHZe4hicie/NS";

const PAGE_401: &str = "HTTP/1.1 401 Unauthorized\r\ncontent-length: 112\r\ncache-control: no-cache\r\n\
content-type: text/html\r\nwww-authenticate: Basic realm=\"Private\"\r\n\r\n\
<html><body><h1>401 Unauthorized</h1>\nYou need a valid user and password to access this content.\n</body></html>\n";

fn userlist() -> String {
    format!(
        "userlist L\n  group ops users bob\n  user alice insecure-password secret\n  user bob password {BOB_HASH}\n"
    )
}

/// The guard, then an answer naming the user and whether the `ops` ACL matched.
const RULES: &str = "  acl ok http_auth(L)\n  acl ops http_auth_group(L) ops\n  \
http-request auth realm Private unless ok\n  \
http-request return status 200 content-type text/plain lf-string \"user=%[http_auth_user] ops\" if ops\n  \
http-request return status 200 content-type text/plain lf-string \"user=%[http_auth_user]\"\n";

fn b64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn get(c: &mut RawClient, cred: Option<&str>) -> (u16, Vec<u8>, Option<String>) {
    let auth = cred.map(|c| format!("Authorization: Basic {}\r\n", b64(c))).unwrap_or_default();
    c.send(format!("GET / HTTP/1.1\r\nHost: t\r\n{auth}\r\n")).unwrap();
    let r = c.read_response().unwrap();
    (r.status, r.body, r.headers.get("www-authenticate").map(str::to_owned))
}

fn check_guard(proxy: &Running) {
    let mut c = client(proxy);
    c.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    let raw = c.read_until("</html>\n").unwrap();
    assert_eq!(show(&raw), PAGE_401, "no credentials: haproxy's 401 page");
    let denied = (401, Some("Basic realm=\"Private\"".to_owned()));
    for bad in ["alice:Secret", "bob:wrong", "nobody:", "alice"] {
        let (status, _, www) = get(&mut c, Some(bad));
        assert_eq!((status, www), denied, "{bad}");
    }
    assert_eq!(get(&mut c, Some("alice:secret")), (200, b"user=alice".to_vec(), None));
    for _ in 0..3 {
        // Keep-alive: the bcrypt check is paid once, then answered from the cache.
        assert_eq!(get(&mut c, Some("bob:x")), (200, b"user=bob ops".to_vec(), None));
    }
}

#[test]
fn auth_in_a_frontend() {
    let cfg = format!("{PREAMBLE}{}frontend fe1\n  bind fd@${{fe1}}\n{RULES}", userlist());
    check_guard(&start(&cfg, &[]));
}

#[test]
fn auth_in_a_listen_section() {
    let cfg = listen_cfg(&userlist(), RULES, &[]);
    check_guard(&start(&cfg, &[]));
}

#[test]
fn auth_in_a_backend_then_forwarded() {
    let s1 = HttpBackend::builder("s1").respond(|_| Reply::ok().body("from s1")).start();
    let cfg = format!(
        "{PREAMBLE}{}frontend fe1\n  bind fd@${{fe1}}\n  default_backend be\n\
         backend be\n  acl ok http_auth(L)\n  http-request auth realm Private unless ok\n  \
         server s1 ${{s1_addr}}:${{s1_port}}\n",
        userlist()
    );
    let proxy = start(&cfg, &[("s1", s1.addr())]);
    let mut c = client(&proxy);
    assert_eq!(get(&mut c, None).0, 401);
    assert_eq!(get(&mut c, Some("bob:x")), (200, b"from s1".to_vec(), None));
    let seen = s1.requests();
    let fwd = seen.last().expect("the server got the request");
    assert_eq!(fwd.headers.get("authorization"), Some(format!("Basic {}", b64("bob:x")).as_str()), "forwarded as is");
}
