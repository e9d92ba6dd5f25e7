//! The rules language through the binary: `http-request`, `http-response` and
//! `http-after-response` actions, conditions with named and anonymous ACLs,
//! `use_backend` and `use-server`, each rule placed in a frontend, in a backend and in
//! a `listen` section, since HAProxy runs them at all three places.
//!
//! The expected bytes are HAProxy 2.6's: `RAMPART_TEST_BINARY=/usr/sbin/haproxy
//! cargo test --release -p rampart --test http_rules` runs this file against haproxy.

mod http_common;

use http_common::{client, show, start, PREAMBLE};
use rampart_testkit::{HttpBackend, Reply, Running};

/// Where the rules under test are written.
#[derive(Debug, Clone, Copy)]
enum Place {
    Frontend,
    Backend,
    Listen,
}

const PLACES: [Place; 3] = [Place::Frontend, Place::Backend, Place::Listen];

/// A configuration with `rules` in the section `place` says, its listener `fe1` and one
/// server `s1`.
fn cfg(place: Place, rules: &str) -> String {
    let server = "  server s1 ${s1_addr}:${s1_port}\n";
    match place {
        Place::Frontend => {
            format!("{PREAMBLE}frontend fe1\n  bind fd@${{fe1}}\n{rules}  default_backend be1\nbackend be1\n{server}")
        }
        Place::Backend => {
            format!("{PREAMBLE}frontend fe1\n  bind fd@${{fe1}}\n  default_backend be1\nbackend be1\n{rules}{server}")
        }
        Place::Listen => format!("{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n{rules}{server}"),
    }
}

/// Starts the proxy with `rules` at `place` in front of `s1`.
fn proxy(place: Place, rules: &str, s1: &HttpBackend) -> Running {
    start(&cfg(place, rules), &[("s1", s1.addr())])
}

/// Sends one request and returns the raw response.
fn exchange(p: &Running, request: &str) -> String {
    let mut c = client(p);
    c.send(request).unwrap();
    show(&c.read_response().unwrap().raw)
}

fn get(p: &Running, path: &str) -> String {
    exchange(p, &format!("GET {path} HTTP/1.1\r\nHost: h\r\n\r\n"))
}

#[test]
fn header_rewrites_reach_the_server() {
    for place in PLACES {
        let s1 = HttpBackend::start("s1");
        let rules = "  http-request set-header X-Set %[path],%[method]\n\
                     \x20 http-request add-header X-Add a\n\
                     \x20 http-request add-header X-Add b\n\
                     \x20 http-request del-header X-Del\n\
                     \x20 http-request del-header x-pre -m beg\n\
                     \x20 http-request replace-header X-Rep ^(.*)-old$ \\1-new\n\
                     \x20 http-request replace-value X-Val ^v(.)$ w\\1\n";
        let p = proxy(place, rules, &s1);
        let resp = exchange(
            &p,
            "GET /a HTTP/1.1\r\nHost: h\r\nX-Set: 0\r\nX-Del: 1\r\nX-Pre-1: 1\r\nX-Prefix: 2\r\n\
             X-Rep: abc-old\r\nX-Val: v1, x, v2\r\n\r\n",
        );
        assert!(resp.starts_with("HTTP/1.1 200"), "{place:?}: {resp}");
        assert_eq!(
            s1.wait_requests(1)[0].raw_head_str(),
            "GET /a HTTP/1.1\r\nhost: h\r\nx-rep: abc-new\r\nx-val: w1, x,w2\r\nx-set: /a,GET\r\n\
             x-add: a\r\nx-add: b\r\n\r\n",
            "{place:?}"
        );
    }
}

#[test]
fn request_line_rewrites_reach_the_server() {
    let cases = [
        ("http-request set-path /new", "/old?q=1", "GET /new?q=1 HTTP/1.1"),
        ("http-request set-pathq /p?x=2", "/old?q=1", "GET /p?x=2 HTTP/1.1"),
        ("http-request set-query a=%[path]", "/o", "GET /o?a=/o HTTP/1.1"),
        ("http-request set-uri /u%[query]", "/o?k", "GET /uk HTTP/1.1"),
        ("http-request set-method PUT", "/o", "PUT /o HTTP/1.1"),
        ("http-request replace-path ^/api/(.*)$ /v2/\\1", "/api/x?y", "GET /v2/x?y HTTP/1.1"),
        ("http-request replace-pathq ^/a\\?(.*)$ /b?\\1&c", "/a?z", "GET /b?z&c HTTP/1.1"),
        ("http-request replace-uri ^/(.)(.*)$ /\\2\\1", "/abc", "GET /bca HTTP/1.1"),
    ];
    for place in PLACES {
        for (rule, path, line) in cases {
            let s1 = HttpBackend::start("s1");
            let p = proxy(place, &format!("  {rule}\n"), &s1);
            assert!(get(&p, path).starts_with("HTTP/1.1 200"), "{place:?} {rule}");
            let head = s1.wait_requests(1)[0].raw_head_str();
            assert!(head.starts_with(&format!("{line}\r\n")), "{place:?} {rule}: {head}");
        }
    }
}

#[test]
fn deny_return_and_redirect_answer_without_the_server() {
    let cases = [
        (
            "http-request deny if { path /d }",
            "/d",
            "HTTP/1.1 403 Forbidden\r\ncontent-length: 93\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n\r\n\
             <html><body><h1>403 Forbidden</h1>\nRequest forbidden by administrative rules.\n</body></html>\n",
        ),
        (
            "http-request deny deny_status 429 content-type text/plain string slow-down if { path /d }",
            "/d",
            "HTTP/1.1 429 Too Many Requests\r\ncontent-length: 9\r\ncontent-type: text/plain\r\n\r\nslow-down",
        ),
        (
            "http-request return status 201 content-type text/plain lf-string \"hi %[path]\" hdr X-M %[method] if { path_beg /r }",
            "/r1",
            "HTTP/1.1 201 Created\r\nx-m: GET\r\ncontent-length: 6\r\ncontent-type: text/plain\r\n\r\nhi /r1",
        ),
        (
            "http-request redirect prefix /pre drop-query append-slash if { path_beg /x }",
            "/x/a?q",
            "HTTP/1.1 302 Found\r\ncontent-length: 0\r\nlocation: /pre/x/a/\r\ncache-control: no-cache\r\n\r\n",
        ),
        (
            "http-request redirect location /%[query] code 301 set-cookie S=1 if { path /l }",
            "/l?target",
            "HTTP/1.1 301 Moved Permanently\r\ncontent-length: 0\r\nlocation: /target\r\nset-cookie: S=1; path=/;\r\n\r\n",
        ),
        (
            "http-request auth realm Zone if { path /auth }",
            "/auth",
            "HTTP/1.1 401 Unauthorized\r\ncontent-length: 112\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n\
             www-authenticate: Basic realm=\"Zone\"\r\n\r\n<html><body><h1>401 Unauthorized</h1>\n\
             You need a valid user and password to access this content.\n</body></html>\n",
        ),
    ];
    for place in PLACES {
        for (rule, path, expected) in cases {
            let s1 = HttpBackend::start("s1");
            let p = proxy(place, &format!("  {rule}\n"), &s1);
            assert_eq!(get(&p, path), expected, "{place:?} {rule}");
            assert!(s1.requests().is_empty(), "{place:?} {rule}: the server saw the request");
        }
    }
}

#[test]
fn the_first_final_rule_wins_and_allow_stops_the_list() {
    let s1 = HttpBackend::start("s1");
    let rules = "  http-request allow if { path /ok }\n\
                 \x20 http-request return status 200 content-type text/plain string first if { path_beg /r }\n\
                 \x20 http-request return status 200 content-type text/plain string second\n";
    let p = proxy(Place::Listen, rules, &s1);
    assert!(get(&p, "/r").ends_with("\r\n\r\nfirst"));
    assert!(get(&p, "/other").ends_with("\r\n\r\nsecond"));
    // `allow` ends the rules: the request reaches the server.
    assert!(get(&p, "/ok").starts_with("HTTP/1.1 200 OK\r\ncontent-length"));
    assert_eq!(s1.wait_requests(1).len(), 1);
}

#[test]
fn conditions_combine_named_and_anonymous_acls() {
    let s1 = HttpBackend::start("s1");
    let rules = "  acl api path_beg /api\n\
                 \x20 acl api path_beg /v2\n\
                 \x20 acl admin hdr(x-role) -i admin\n\
                 \x20 http-request return status 200 content-type text/plain string api-admin if api admin\n\
                 \x20 http-request return status 200 content-type text/plain string api-or-get if api || METH_POST\n\
                 \x20 http-request return status 200 content-type text/plain string not-api unless api { method GET }\n";
    let p = proxy(Place::Frontend, rules, &s1);
    let body = |req: &str| exchange(&p, req).rsplit("\r\n\r\n").next().unwrap().to_owned();
    assert_eq!(body("GET /api/x HTTP/1.1\r\nHost: h\r\nX-Role: ADMIN\r\n\r\n"), "api-admin");
    assert_eq!(body("GET /v2/x HTTP/1.1\r\nHost: h\r\n\r\n"), "api-or-get");
    assert_eq!(body("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"), "api-or-get");
    assert_eq!(body("DELETE /x HTTP/1.1\r\nHost: h\r\n\r\n"), "not-api");
}

#[test]
fn variables_carry_values_between_rules_and_requests() {
    for place in PLACES {
        let s1 = HttpBackend::start("s1");
        let rules = "  http-request set-var(txn.host) req.hdr(host),lower\n\
                     \x20 http-request set-var-fmt(txn.both) %[var(txn.host)]-%[path]\n\
                     \x20 http-request set-var(sess.first) path if !{ var(sess.first) -m found }\n\
                     \x20 http-request set-header X-Both %[var(txn.both)]\n\
                     \x20 http-request set-header X-First %[var(sess.first)]\n\
                     \x20 http-request unset-var(txn.host)\n\
                     \x20 http-request set-header X-Host %[var(txn.host)]\n";
        let p = proxy(place, rules, &s1);
        let mut c = client(&p);
        c.send("GET /one HTTP/1.1\r\nHost: EXAMPLE\r\n\r\n").unwrap();
        c.read_response().unwrap();
        c.send("GET /two HTTP/1.1\r\nHost: example\r\n\r\n").unwrap();
        c.read_response().unwrap();
        let reqs = s1.wait_requests(2);
        let seen: Vec<_> = reqs.iter().map(|r| r.raw_head_str()).collect();
        assert!(seen[0].contains("x-both: example-/one\r\nx-first: /one\r\nx-host: \r\n"), "{place:?}: {}", seen[0]);
        // `sess.` variables live as long as the client connection.
        assert!(seen[1].contains("x-both: example-/two\r\nx-first: /one\r\n"), "{place:?}: {}", seen[1]);
    }
}

#[test]
fn response_rules_rewrite_and_replace_the_servers_answer() {
    for place in PLACES {
        let s1 = HttpBackend::builder("s1")
            .reply(Reply::ok().header("Server", "app/1.0").header("X-Up", "v").body("body"))
            .start();
        let rules = "  http-response set-status 203\n\
                     \x20 http-response del-header Server\n\
                     \x20 http-response set-header X-Copy %[res.hdr(x-up)]-%[status]\n\
                     \x20 http-after-response add-header X-After 1\n";
        let p = proxy(place, rules, &s1);
        assert_eq!(
            get(&p, "/"),
            "HTTP/1.1 203 Non-Authoritative Information\r\nx-up: v\r\ncontent-length: 4\r\nx-copy: v-203\r\n\
             x-after: 1\r\n\r\nbody",
            "{place:?}"
        );
    }
}

#[test]
fn a_response_deny_replaces_the_answer_and_after_response_rules_see_built_replies() {
    let s1 = HttpBackend::builder("s1").reply(Reply::ok().header("X-Secret", "1").body("secret")).start();
    let rules = "  http-response deny if { res.hdr(x-secret) -m found }\n\
                 \x20 http-after-response set-header X-After %[status]\n\
                 \x20 http-request deny deny_status 404 if { path /missing }\n";
    let p = proxy(Place::Listen, rules, &s1);
    assert_eq!(
        get(&p, "/"),
        "HTTP/1.1 502 Bad Gateway\r\ncontent-length: 107\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n\
         x-after: 502\r\n\r\n<html><body><h1>502 Bad Gateway</h1>\n\
         The server returned an invalid or incomplete response.\n</body></html>\n"
    );
    let missing = get(&p, "/missing");
    assert!(missing.starts_with("HTTP/1.1 404 Not Found\r\n"), "{missing}");
    assert!(missing.contains("\r\nx-after: 404\r\n"), "{missing}");
}

#[test]
fn use_backend_rules_choose_by_condition_and_by_name() {
    let (a, b, d) = (HttpBackend::start("a"), HttpBackend::start("b"), HttpBackend::start("d"));
    let cfg = format!(
        "{PREAMBLE}frontend fe1\n  bind fd@${{fe1}}\n  use_backend be_a if {{ path_beg /a }}\n\
         \x20 use_backend be_%[req.hdr(x-be)] if {{ req.hdr(x-be) -m found }}\n  default_backend be_d\n\
         backend be_a\n  server a ${{a_addr}}:${{a_port}}\nbackend be_b\n  server b ${{b_addr}}:${{b_port}}\n\
         backend be_d\n  server d ${{d_addr}}:${{d_port}}\n"
    );
    let p = start(&cfg, &[("a", a.addr()), ("b", b.addr()), ("d", d.addr())]);
    get(&p, "/a/1");
    exchange(&p, "GET /x HTTP/1.1\r\nHost: h\r\nX-Be: b\r\n\r\n");
    // a name that is no backend falls back to the default one
    exchange(&p, "GET /y HTTP/1.1\r\nHost: h\r\nX-Be: nope\r\n\r\n");
    get(&p, "/z");
    assert_eq!(a.wait_requests(1).len(), 1);
    assert_eq!(b.wait_requests(1).len(), 1);
    assert_eq!(d.wait_requests(2).len(), 2);
}

#[test]
fn use_server_picks_the_named_server() {
    let (s1, s2) = (HttpBackend::start("s1"), HttpBackend::start("s2"));
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  use-server s2 if {{ path_beg /two }}\n\
         \x20 server s1 ${{s1_addr}}:${{s1_port}}\n  server s2 ${{s2_addr}}:${{s2_port}}\n"
    );
    let p = start(&cfg, &[("s1", s1.addr()), ("s2", s2.addr())]);
    for _ in 0..3 {
        get(&p, "/two");
    }
    assert_eq!(s2.wait_requests(3).len(), 3);
    assert!(s1.requests().is_empty());
}

#[test]
fn defaults_rules_run_before_the_proxys_own() {
    let s1 = HttpBackend::start("s1");
    let cfg = format!(
        "{PREAMBLE}defaults d\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         \x20 http-request set-header X-Order defaults\nfrontend fe1 from d\n  bind fd@${{fe1}}\n\
         \x20 http-request add-header X-Order frontend\n  default_backend be1\n\
         defaults\n  mode http\n  timeout server 5s\n  timeout connect 1s\n\
         backend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let p = start(&cfg, &[("s1", s1.addr())]);
    get(&p, "/");
    let head = s1.wait_requests(1)[0].raw_head_str();
    assert!(head.ends_with("x-order: defaults\r\nx-order: frontend\r\n\r\n"), "{head}");
}

#[test]
fn global_set_var_gives_proc_variables_their_startup_value() {
    let s1 = HttpBackend::start("s1");
    let rules = "  http-request return status 200 content-type text/plain lf-string %[var(proc.c)]\n";
    let cfg = cfg(Place::Listen, rules).replacen(
        "  nbthread 1\n",
        "  nbthread 1\n  set-var proc.a int(12)\n  set-var proc.b var(proc.missing,60),div(proc.a)\n\
         \x20 set-var-fmt proc.c \"%[var(proc.a)]-%[var(proc.b)]\"\n",
        1,
    );
    let p = start(&cfg, &[("s1", s1.addr())]);
    assert!(get(&p, "/").ends_with("\r\n\r\n12-5"));
}
