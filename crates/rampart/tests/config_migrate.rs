//! `rampart --migrate`: a configuration written for HAProxy 1.8 (`reqadd`, `reqrep`,
//! `rspdel`, `contimeout`, `option forceclose`, `listen name addr` ...) rewritten with
//! 2.6 keywords. The migrated file loads in haproxy 2.6 and in rampart, and through the
//! real binary each replacement does what HAProxy 1.8's documentation says the legacy
//! keyword did, seen from the client and from the server.

mod http_common;
mod netutil;

use std::process::Command;

use http_common::binary;
use rampart_testkit::{haproxy_or_skip, HttpBackend, Proxy, RawClient, Reply};

/// A 1.8 configuration; `${fe1}`, `${s1_addr}`, `${s1_port}` are the testkit's.
const LEGACY: &str = r"global
    nbthread 1
    nbproc 1
defaults
    mode http
    contimeout 1s
    clitimeout 5s
    srvtimeout 5s
    option http-use-htx
listen web
    bind fd@${fe1}
    option forceclose
    # a header added, one removed, a value rewritten, a path rewritten
    reqadd X-Proto:\ https
    reqdel ^X-Secret:.*
    reqrep ^X-Env:\ (.*)-old X-Env:\ \1-new
    reqirep ^([^\ :]*)\ /legacy/(.*) \1\ /modern/\2
    reqideny ^User-Agent:\ .*badbot
    rspadd X-Served-By:\ rampart\ 100%
    rspdel ^Server:.*
    rsprep ^X-Version:\ 1\.(.*) X-Version:\ 2.\1
    server s1 ${s1_addr}:${s1_port}
";

/// Runs `rampart --migrate` on `text`: (stdout, stderr, success).
fn migrate(text: &str) -> (String, String, bool) {
    let dir = std::env::temp_dir().join(format!("rampart-migrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("legacy.cfg");
    std::fs::write(&file, text).unwrap();
    let out = Command::new(binary()).arg("--migrate").arg(&file).output().expect("rampart runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// `bin -c` on `text`: (success, output).
fn check(bin: &std::path::Path, text: &str, name: &str) -> (bool, String) {
    let dir = std::env::temp_dir().join(format!("rampart-migrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let out = Command::new(bin).arg("-c").arg("-f").arg(&file).output().expect("runs");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn the_legacy_file_is_refused_with_hints_by_rampart_as_by_haproxy() {
    let concrete = LEGACY
        .replace("fd@${fe1}", &format!("127.0.0.1:{}", netutil::free_port()))
        .replace("${s1_addr}:${s1_port}", "127.0.0.1:1");
    let (ok, out) = check(&binary(), &concrete, "legacy-check.cfg");
    assert!(!ok, "{out}");
    assert!(out.contains("hint: replace with: http-request add-header X-Proto https"), "{out}");
    assert!(out.contains("hint: replace with: timeout connect 1s"), "{out}");
    if let Some(haproxy) = haproxy_or_skip("the_legacy_file_is_refused_with_hints_by_rampart_as_by_haproxy") {
        let (ok, out) = check(&haproxy, &concrete, "legacy-check-haproxy.cfg");
        assert!(!ok, "haproxy 2.6 refuses the 1.8 keywords too: {out}");
    }
}

#[test]
fn the_migrated_file_loads_in_haproxy_and_rampart() {
    let (text, err, ok) =
        migrate(&format!("{LEGACY}listen old 127.0.0.1:{}\n    server s2 127.0.0.1:1\n", netutil::free_port()));
    assert!(ok, "{err}");
    assert!(!err.contains("by hand"), "everything here has a translation: {err}");
    assert!(text.contains("listen old\n  bind 127.0.0.1:"), "{text}");
    let concrete = text
        .replace("fd@${fe1}", &format!("127.0.0.1:{}", netutil::free_port()))
        .replace("${s1_addr}:${s1_port}", "127.0.0.1:1");
    let (ok, out) = check(&binary(), &concrete, "migrated-rampart.cfg");
    assert!(ok, "rampart: {out}\n{concrete}");
    if let Some(haproxy) = haproxy_or_skip("the_migrated_file_loads_in_haproxy_and_rampart") {
        let (ok, out) = check(&haproxy, &concrete, "migrated-haproxy.cfg");
        assert!(ok, "haproxy: {out}\n{concrete}");
    }
}

#[test]
fn the_migrated_rules_do_what_the_legacy_keywords_did() {
    let (migrated, err, ok) = migrate(LEGACY);
    assert!(ok, "{err}");
    let s1 = HttpBackend::builder("s1")
        .respond(|req| {
            let seen = format!(
                "path={} proto={} secret={} env={}",
                req.path,
                req.headers.get("x-proto").unwrap_or("-"),
                req.headers.get("x-secret").unwrap_or("-"),
                req.headers.get("x-env").unwrap_or("-")
            );
            Reply::ok().header("Server", "Apache/1.3").header("X-Version", "1.8.3").body(seen)
        })
        .start();
    let proxy =
        Proxy::new(binary()).listener("fe1").backend("s1", s1.addr()).config(&migrated).start().expect("starts");

    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    c.send("GET /legacy/a?b=1 HTTP/1.1\r\nHost: x\r\nX-Secret: s3cr3t\r\nX-Env: prod-old\r\n\r\n").unwrap();
    let res = c.read_response().unwrap();
    assert_eq!(res.status, 200);
    // reqadd, reqdel, reqrep on a header, reqirep on the request line (the method kept)
    assert_eq!(String::from_utf8_lossy(&res.body), "path=/modern/a?b=1 proto=https secret=- env=prod-new");
    // rspadd (a literal '%'), rspdel, rsprep
    assert_eq!(res.headers.get("x-served-by"), Some("rampart 100%"));
    assert_eq!(res.headers.get("server"), None);
    assert_eq!(res.headers.get("x-version"), Some("2.8.3"));
    // option forceclose became option httpclose: the connection closes after the response
    assert_eq!(res.headers.get("connection"), Some("close"));

    // reqideny: case-insensitive, 403
    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    c.send("GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: Mozilla BadBot/2\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().status, 403);
    assert_eq!(s1.wait_requests(1).len(), 1, "the denied request never reached the server");
}
