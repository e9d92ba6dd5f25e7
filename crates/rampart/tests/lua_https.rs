//! `core.httpclient()` over `https`, through the binary: a service calls a TLS
//! listener of the same configuration (a certificate for `localhost` signed by a test
//! CA), verified against `httpclient.ssl.ca-file` with the URL's host as the SNI and
//! the name checked, or not verified (`httpclient.ssl.verify none`); a CA file that
//! does not load fails startup. `https_calls_are_the_same_as_haproxy` compares with
//! haproxy 2.6.

mod http_common;
mod test_pki;

use std::path::{Path, PathBuf};

use http_common::{start_with, RAMPART};
use rampart_testkit::{Proxy, RawClient, Running};

const SCRIPT: &str = r#"
core.register_service("call", "http", function(applet)
  local port = applet.headers["x-port"][0]
  local name = applet.headers["x-name"][0]
  local r = core.httpclient():get{ url = "https://" .. name .. ":" .. port .. "/x", dst = "127.0.0.1:" .. port }
  local body = r.status .. "|" .. (r.body or "")
  applet:set_status(200)
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end)
"#;

/// The CA file and the listener's certificate (for `localhost`), in a fresh directory
/// of the test's own (`tag`).
fn pki(tag: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = test_pki::fresh_dir(&format!("lua-https-{tag}"));
    let (ca, ca_key) = test_pki::ca("Lua Test CA");
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let crt = dir.join("localhost.pem");
    std::fs::write(&crt, test_pki::leaf_pem(&["localhost"], &ca, &ca_key)).unwrap();
    let script = dir.join("call.lua");
    std::fs::write(&script, SCRIPT).unwrap();
    (dir, ca_file, crt)
}

fn cfg(dir: &Path, crt: &Path, globals: &str) -> String {
    format!(
        "global\n  lua-load {}\n{globals}defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
         frontend fe1\n  bind fd@${{fe1}}\n  http-request use-service lua.call\n\
         frontend tls\n  bind fd@${{tls}} ssl crt {}\n\
         \x20 http-request return status 200 content-type text/plain lf-string \"sni=%[ssl_fc_sni] path=%[path]\"\n",
        dir.join("call.lua").display(),
        crt.display()
    )
}

/// What the service got calling the TLS listener by `name`.
fn call(p: &Running, name: &str) -> String {
    let mut c = RawClient::connect(p.addr("fe1")).unwrap();
    let port = p.addr("tls").port();
    c.send(format!("GET / HTTP/1.1\r\nHost: h\r\nX-Port: {port}\r\nX-Name: {name}\r\n\r\n")).unwrap();
    let r = c.read_response().unwrap();
    assert_eq!(r.status, 200, "{}", p.output());
    r.body_str()
}

#[test]
fn the_httpclient_verifies_the_server_against_its_ca_file() {
    let (dir, ca, crt) = pki("t1");
    let globals = format!("  httpclient.ssl.ca-file {}\n", ca.display());
    let p = start_with(Path::new(RAMPART), &cfg(&dir, &crt, &globals), &["fe1", "tls"], &[]);
    assert_eq!(call(&p, "localhost"), "200|sni=localhost path=/x");
    // a name the certificate does not carry: the handshake fails, no response
    assert_eq!(call(&p, "other.example"), "0|");
}

#[test]
fn verify_none_accepts_any_certificate() {
    let (dir, _, crt) = pki("t2");
    let p = start_with(Path::new(RAMPART), &cfg(&dir, &crt, "  httpclient.ssl.verify none\n"), &["fe1", "tls"], &[]);
    assert_eq!(call(&p, "other.example"), "200|sni=other.example path=/x");
}

#[test]
fn a_ca_file_that_does_not_load_fails_startup() {
    let (dir, _, crt) = pki("t3");
    let missing = dir.join("missing.pem");
    let globals = format!("  httpclient.ssl.ca-file {}\n", missing.display());
    let out = Proxy::new(RAMPART)
        .listener("fe1")
        .listener("tls")
        .config(&cfg(&dir, &crt, &globals))
        .check()
        .expect("the check runs");
    assert_ne!(out.code, 0, "{}", out.stderr);
    let want = format!(
        "httpclient: cannot initialize: cannot initialize SSL verify with 'ca-file \"{}\"'.",
        missing.display()
    );
    assert!(out.stderr.contains(&want), "{}", out.stderr);
}

#[test]
fn https_calls_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    let (dir, ca, crt) = pki("t4");
    let mut seen = Vec::new();
    for bin in [PathBuf::from(RAMPART), haproxy] {
        let verified = format!("  httpclient.ssl.ca-file {}\n", ca.display());
        let p = start_with(&bin, &cfg(&dir, &crt, &verified), &["fe1", "tls"], &[]);
        let good = call(&p, "localhost");
        drop(p);
        let p = start_with(&bin, &cfg(&dir, &crt, "  httpclient.ssl.verify none\n"), &["fe1", "tls"], &[]);
        let any = call(&p, "other.example");
        seen.push((good, any));
    }
    assert_eq!(seen[0], seen[1], "rampart (left) and haproxy (right)");
}
