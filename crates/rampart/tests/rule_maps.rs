//! `http-request` / `http-response` rules that change pattern files (`add-acl(<file>)`,
//! `del-acl`, `set-map`, `del-map`): a blocklist one request builds and the next one is
//! checked against, a map of colours set and wiped by requests and by a response rule,
//! keys and values from log-format strings; the same requests through HAProxy 2.6, then
//! `show acl` / `show map` of the files compared. Four threads, a new connection per
//! request: the changes are seen on every thread from the next request.

use std::path::PathBuf;
use std::time::Duration;

use rampart_testkit::{haproxy_or_skip, socat, HttpBackend, Proxy, RawClient, Reply, Running};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

const CFG: &str = "global\n  stats socket ${testdir}/admin.sock level admin\n  nbthread 4\n\
                   defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 2s\n\
                   frontend fe\n  bind fd@${fe}\n  \
                   acl blocked req.hdr(x-client) -f M/block.acl\n  \
                   http-request deny deny_status 403 if blocked\n  \
                   http-request add-acl(M/block.acl) %[req.hdr(x-client)] if { path /ban }\n  \
                   http-request del-acl(M/block.acl) %[url_param(c)] if { path_beg /unban }\n  \
                   http-request set-map(M/color.map) %[req.hdr(x-client)] %[url_param(c)]-%[method] if { path_beg /paint }\n  \
                   http-request del-map(M/color.map) %[req.hdr(x-client)] if { path /wipe }\n  \
                   http-request set-map(M/nowhere.map) k v\n  \
                   http-request set-header X-Color %[req.hdr(x-client),map(M/color.map,none)]\n  \
                   http-request return status 200 content-type text/plain lf-string done if { path /ban } || { path_beg /unban }\n  \
                   http-response set-map(M/color.map) last-%[res.hdr(x-who)] %[status] if { res.hdr(x-who) -m found }\n  \
                   http-response add-acl(M/block.acl) %[res.hdr(x-ban)] if { res.hdr(x-ban) -m found }\n  \
                   default_backend be\n\
                   backend be\n  server s1 ${s1_addr}:${s1_port}\n";

/// The pattern files, in a directory of their own per run.
struct Files(PathBuf);

impl Files {
    fn new(tag: &str) -> Files {
        let dir = std::env::temp_dir().join(format!("rampart-rule-maps-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory for the maps");
        std::fs::write(dir.join("block.acl"), "mallory\n").unwrap();
        std::fs::write(dir.join("color.map"), "bob blue\n").unwrap();
        Files(dir)
    }

    fn expand(&self, text: &str) -> String {
        text.replace("M/", &format!("{}/", self.0.display()))
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One request on a new connection: `METHOD path` from client `who`; the status and
/// the colour the server saw.
fn request(proxy: &Running, s1: &HttpBackend, method: &str, path: &str, who: &str) -> String {
    let mut c = RawClient::connect(proxy.addr("fe")).expect("connect");
    c.set_read_timeout(Duration::from_secs(5)).unwrap();
    let before = s1.requests().len();
    c.send(format!("{method} {path} HTTP/1.1\r\nHost: h\r\nX-Client: {who}\r\nConnection: close\r\n\r\n")).unwrap();
    let res = c.read_response().expect("a response");
    let color = match s1.requests().len() > before {
        true => s1.requests().pop().and_then(|r| r.headers.get("x-color").map(str::to_owned)),
        false => None,
    };
    format!("{method} {path} as {who}: {} color={}", res.status, color.as_deref().unwrap_or("-"))
}

/// The story through `binary`: each request's outcome, then `show acl` and `show map`
/// of the two files (entry identifiers left out).
fn story(binary: PathBuf) -> Vec<String> {
    let files = Files::new(if binary.ends_with("haproxy") { "h" } else { "r" });
    let s1 = HttpBackend::builder("s1")
        .respond(|req| match req.path.as_str() {
            "/ban-eve" => Reply::ok().header("x-ban", "eve"),
            "/last" => Reply::new(201).header("x-who", "dave"),
            _ => Reply::ok(),
        })
        .start();
    let proxy = Proxy::new(binary)
        .listener("fe")
        .backend("s1", s1.addr())
        .config(&files.expand(CFG))
        .start()
        .expect("the proxy starts");
    let mut out = Vec::new();
    let steps: &[(&str, &str, &str)] = &[
        ("GET", "/", "alice"),
        ("GET", "/", "mallory"),
        ("GET", "/ban", "alice"),
        ("GET", "/", "alice"),
        ("GET", "/", "alice"),
        ("GET", "/ban", "alice"),
        ("GET", "/unban?c=alice", "admin"),
        ("GET", "/", "alice"),
        ("GET", "/unban?c=alice", "admin"),
        ("GET", "/", "bob"),
        ("POST", "/paint?c=red", "bob"),
        ("GET", "/", "bob"),
        ("GET", "/paint?c=green", "carol"),
        ("GET", "/", "carol"),
        ("GET", "/paint?c=pink", "carol"),
        ("GET", "/", "carol"),
        ("GET", "/wipe", "bob"),
        ("GET", "/", "bob"),
        ("GET", "/last", "dave"),
        ("GET", "/", "last-dave"),
        ("GET", "/ban-eve", "zed"),
        ("GET", "/", "eve"),
    ];
    for (method, path, who) in steps {
        // a few times each, so that every thread serves some
        for _ in 0..3 {
            out.push(request(&proxy, &s1, method, path, who));
        }
    }
    for cmd in ["show acl M/block.acl", "show map M/color.map", "show map"] {
        let answer = socat(&proxy.dir().join("admin.sock"), &format!("{}\n", files.expand(cmd)));
        let text: Vec<String> = answer
            .lines()
            .filter(|l| !l.contains("file 'httpclient'"))
            .map(|l| match l.split_once(' ') {
                Some((id, rest)) if id.starts_with("0x") => rest.to_owned(),
                _ => l.to_owned(),
            })
            .map(|l| l.replace(&format!("{}/", files.0.display()), "M/"))
            .collect();
        out.push(format!("> {cmd}\n{}", text.join("\n")));
    }
    out
}

#[test]
fn rules_build_a_blocklist_and_a_map_the_next_requests_see() {
    let ours = story(RAMPART.into());
    for line in [
        "GET / as mallory: 403",
        "GET / as alice: 403",
        "GET /ban as alice: 403",
        "GET / as bob: 200 color=red-POST",
        "GET / as carol: 200 color=pink-GET",
        "GET / as last-dave: 200 color=201",
        "GET / as eve: 403",
    ] {
        assert!(ours.iter().any(|o| o.starts_with(line)), "{line}\n{ours:#?}");
    }
    assert!(ours.iter().any(|o| o == "GET / as alice: 200 color=none"), "{ours:#?}");
    let acl = ours.iter().find(|o| o.starts_with("> show acl")).unwrap();
    assert_eq!(acl, "> show acl M/block.acl\nmallory\neve\n", "{ours:#?}");
    let Some(haproxy) = haproxy_or_skip("rules_build_a_blocklist_and_a_map_the_next_requests_see") else { return };
    let theirs = story(haproxy);
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o, t);
    }
    assert_eq!(ours.len(), theirs.len());
}

/// HAProxy 2.6 has these actions in `http-request` and `http-response` only: the other
/// lists refuse them with their lists of expected actions, and a missing argument is
/// refused with HAProxy's message; `haproxy -c` says the same.
#[test]
fn the_actions_are_refused_where_haproxy_refuses_them() {
    let cases = [
        ("frontend f\n  mode tcp\n  bind 127.0.0.1:8999\n  tcp-request content set-map(/m) a b\n", "'tcp-request content' expects 'accept', 'reject', "),
        ("frontend f\n  mode tcp\n  bind 127.0.0.1:8999\n  tcp-request connection add-acl(/m) a\n", "'tcp-request connection' expects 'accept', 'reject', "),
        ("frontend f\n  mode http\n  bind 127.0.0.1:8999\n  http-after-response del-acl(/m) a\n", "'http-after-response' expects 'ot-group', 'add-header', "),
        (
            "frontend f\n  mode http\n  bind 127.0.0.1:8999\n  http-request set-map(/m) a\n",
            "error detected in frontend 'f' while parsing 'http-request set-map(/m)' rule : expects exactly 2 arguments.",
        ),
        (
            "frontend f\n  mode http\n  bind 127.0.0.1:8999\n  http-response add-acl(/m)\n",
            "error detected in frontend 'f' while parsing 'http-response add-acl(/m)' rule : expects exactly 1 arguments.",
        ),
        (
            "frontend f\n  mode http\n  bind 127.0.0.1:8999\n  http-request set-map(/m) %[src] %[nope]\n",
            "while parsing 'http-request set-map(/m)' rule : failed to parse sample expression <nope]> : unknown fetch method 'nope'.",
        ),
    ];
    let haproxy = haproxy_or_skip("the_actions_are_refused_where_haproxy_refuses_them");
    for (cfg, msg) in cases {
        let cfg = format!("defaults\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n{cfg}");
        let mut binaries = vec![PathBuf::from(RAMPART)];
        binaries.extend(haproxy.clone());
        for b in binaries {
            let out = rampart_testkit::check(&b, &cfg);
            assert_ne!(out.code, 0, "{}: {cfg}\n{}", b.display(), out.stderr);
            assert!(out.stderr.contains(msg), "{}: {msg}\n{}", b.display(), out.stderr);
        }
    }
}
