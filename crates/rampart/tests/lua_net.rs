//! Lua scripts that talk to the network through the binary: `core.tcp()` sockets from
//! an action (an auth-request style lookup on a small TCP server whose answer becomes a
//! request header), from a service, on a socket that times out, next to other
//! connections on the same thread; `core.httpclient()` from a service and a task.
//! `*_same_as_haproxy` run the same script through haproxy 2.6 and compare what the
//! client and the servers saw.

mod http_common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use http_common::{client, start_binary, PREAMBLE, RAMPART};
use rampart_testkit::{HttpBackend, Proxy, RawBackend, RawClient, Reply, Response, Running, Step};

/// Writes `code` to a script file of its own and returns its path.
fn script(name: &str, code: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rampart-lua-net-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.lua"));
    std::fs::write(&path, code).unwrap();
    path
}

/// `global` with `lua-load <path>`, then the usual preamble, `fe1` with `rules`, and
/// `be1` with server `s1`.
fn cfg(path: &Path, rules: &str) -> String {
    let preamble = PREAMBLE.replacen("global\n", &format!("global\n  lua-load {}\n", path.display()), 1);
    format!(
        "{preamble}frontend fe1\n  bind fd@${{fe1}}\n{rules}  default_backend be1\n\
         backend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    )
}

fn get(p: &Running, path: &str) -> Response {
    let mut c = client(p);
    c.send(format!("GET {path} HTTP/1.1\r\nHost: h\r\n\r\n")).unwrap();
    c.read_response().unwrap()
}

/// An action that asks a TCP server about the request (a line out, a line, four
/// bytes and the rest up to the close back) and passes the answer on as a header.
const ASK: &str = r#"
core.register_action("ask", { "http-req" }, function(txn, addr)
  local s = core.tcp()
  s:settimeout(3)
  local ok, err = s:connect(addr)
  if ok ~= 1 then
    txn.http:req_set_header("x-answer", "no connection: " .. tostring(err))
    return
  end
  local peer = s:getpeername()
  local sent = s:send("ASK " .. txn.sf:path() .. "\r\n")
  local line = s:receive("*l")
  local four = s:receive(4)
  local rest = s:receive("*a")
  local after, why = s:receive("*l")
  s:close()
  txn.http:req_set_header("x-answer", table.concat({ line, four, rest, tostring(after), tostring(why) }, "|"))
  txn.http:req_set_header("x-sent", tostring(sent))
  txn.http:req_set_header("x-peer", tostring(peer == addr))
end, 1)
"#;

fn ask_server() -> RawBackend {
    RawBackend::start(vec![Step::expect_until("\r\n"), Step::send("ALLOW user=bob\r\nabcdEFGH")])
}

/// What the client, the HTTP server and the TCP server saw for one request.
fn ask_run(binary: PathBuf) -> (u16, Vec<Option<String>>, Vec<String>) {
    let path = script("ask", ASK);
    let s1 = HttpBackend::start("s1");
    let auth = ask_server();
    let rules = "  http-request lua.ask ${auth_addr}:${auth_port}\n";
    let p = start_binary(binary, &cfg(&path, rules), &[("s1", s1.addr()), ("auth", auth.addr())]);
    let status = get(&p, "/doc/1").status;
    let req = &s1.wait_requests(1)[0];
    let seen = ["x-answer", "x-sent", "x-peer"].iter().map(|h| req.headers.get(h).map(str::to_owned)).collect();
    let asked = auth.wait_finished(1).iter().map(|c| c.received_str()).collect();
    (status, seen, asked)
}

#[test]
fn an_action_asks_a_tcp_server_and_sets_a_header_from_its_answer() {
    let (status, seen, asked) = ask_run(PathBuf::from(RAMPART));
    assert_eq!(status, 200);
    assert_eq!(
        seen,
        [Some("ALLOW user=bob|abcd|EFGH|nil|connection closed.".to_owned()), Some("12".into()), Some("true".into())]
    );
    assert_eq!(asked, ["ASK /doc/1\r\n"]);
}

#[test]
fn a_socket_action_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    let ours = ask_run(PathBuf::from(RAMPART));
    let theirs = ask_run(haproxy);
    assert_eq!(ours, theirs, "rampart (left) and haproxy (right)");
}

#[test]
fn a_socket_that_waits_leaves_the_thread_to_other_connections_and_times_out() {
    let path = script(
        "slow",
        r#"
core.register_action("slow", { "http-req" }, function(txn, addr)
  local s = core.tcp()
  s:settimeout(0.5)
  local t0 = core.now()
  local ok = s:connect(addr)
  local got, err = s:receive("*l")
  local t1 = core.now()
  local ms = (t1.sec - t0.sec) * 1000 + (t1.usec - t0.usec) // 1000
  txn.http:req_set_header("x-got", tostring(ok) .. "|" .. tostring(got) .. "|" .. tostring(err))
  txn.http:req_set_header("x-waited-ms", ms)
end, 1)
core.register_action("refused", { "http-req" }, function(txn, addr)
  local ok, err = core.tcp():connect(addr)
  txn.http:req_set_header("x-got", tostring(ok) .. "|" .. tostring(err))
end, 1)
"#,
    );
    let s1 = HttpBackend::start("s1");
    // accepts, reads, never answers
    let mute = RawBackend::start(vec![Step::sleep_ms(3000)]);
    let closed = rampart_testkit::closed_port();
    let rules = "  http-request lua.slow ${mute_addr}:${mute_port} if { path /slow }\n\
                 \x20 http-request lua.refused ${closed_addr}:${closed_port} if { path /refused }\n";
    let p = start_binary(RAMPART, &cfg(&path, rules), &[("s1", s1.addr()), ("mute", mute.addr()), ("closed", closed)]);
    let mut slow = RawClient::connect(p.addr("fe1")).unwrap();
    slow.send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    assert_eq!(get(&p, "/other").status, 200);
    assert!(t.elapsed() < Duration::from_millis(400), "served in {:?}", t.elapsed());
    assert_eq!(slow.read_response().unwrap().status, 200);
    assert_eq!(get(&p, "/refused").status, 200);
    let reqs = s1.wait_requests(3);
    let got = |path: &str| reqs.iter().find(|r| r.path == path).and_then(|r| r.headers.get("x-got").map(str::to_owned));
    assert_eq!(got("/slow").as_deref(), Some("1|nil|connection closed."));
    assert_eq!(got("/refused").as_deref(), Some("nil|Can't connect"));
    let waited: u64 = reqs.iter().find_map(|r| r.headers.get("x-waited-ms")).unwrap().parse().unwrap();
    assert!((450..2000).contains(&waited), "waited {waited} ms");
}

/// A service that calls an HTTP server with `core.httpclient()` and shows what came
/// back.
const RELAY: &str = r#"
core.register_service("relay", "http", function(applet)
  local port = applet.headers["x-port"][0]
  local hc = core.httpclient()
  local r = hc:post{ url = "http://127.0.0.1:" .. port .. "/in?x=1", body = "payload",
                     headers = { ["X-Who"] = { "lua" } } }
  local g = hc:get{ url = "http://127.0.0.1:" .. port .. "/again" }
  local names = {}
  for n, _ in pairs(r.headers) do names[#names + 1] = n end
  table.sort(names)
  local body = table.concat({ r.status, r.reason, r.headers["x-from"][0], r.headers["x-from"][1],
                              table.concat(names, ","), r.body, g.status, g.body }, "|")
  applet:set_status(200)
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end)
"#;

#[test]
fn a_service_calls_an_http_server_with_the_httpclient() {
    let path = script("relay", RELAY);
    let s1 = HttpBackend::start("s1");
    let api = HttpBackend::builder("api")
        .respond(|r| {
            Reply::new(201).reason("Made").header("x-from", "a").header("x-from", "b").body(format!("got {}", r.path))
        })
        .start();
    let p = start_binary(RAMPART, &cfg(&path, "  http-request use-service lua.relay\n"), &[("s1", s1.addr())]);
    let mut c = client(&p);
    c.send(format!("GET / HTTP/1.1\r\nHost: h\r\nX-Port: {}\r\n\r\n", api.addr().port())).unwrap();
    let r = c.read_response().unwrap();
    assert_eq!(r.status, 200, "{}", p.output());
    assert_eq!(r.body_str(), "201|Made|a|b|content-length,x-from|got /in?x=1|201|got /again");
    let reqs = api.wait_requests(2);
    assert_eq!((reqs[0].method.as_str(), reqs[0].path.as_str()), ("POST", "/in?x=1"));
    assert_eq!(reqs[0].body, b"payload");
    assert_eq!(reqs[0].headers.get("x-who"), Some("lua"));
    assert_eq!(reqs[0].headers.get("host"), Some(format!("127.0.0.1:{}", api.addr().port()).as_str()));
    assert_eq!(reqs[0].headers.get("user-agent"), Some("HAProxy"));
    assert_eq!(reqs[0].headers.get("accept"), Some("*/*"));
    assert_eq!((reqs[1].method.as_str(), reqs[1].path.as_str()), ("GET", "/again"));
    assert!(s1.requests().is_empty());
}

// === tcp services ===

/// A small SMTP-like server as a `tcp` service (in the style of HAProxy's
/// `mailers/healthcheckmail` test), and one that fails half-way.
const SMTP: &str = r#"
local function expect(applet, what)
  local line = applet:getline()
  if string.sub(line, 1, #what) ~= what then
    applet:send("500 expected " .. what .. " got [" .. line .. "]\r\n")
    applet:set_var("txn.result", "ERROR " .. what)
    return false
  end
  return true
end

core.register_service("smtp", "tcp", function(applet)
  applet:send("220 Welcome\r\n")
  if not expect(applet, "HELO") then return end
  applet:set_priv("helo seen")
  applet:send("250 OK\r\n")
  if not expect(applet, "DATA") then return end
  applet:send("354 go\r\n")
  local lines = 0
  while true do
    local l = applet:getline()
    if l == ".\r\n" or l == "" then break end
    lines = lines + 1
  end
  local four = applet:receive(4)
  applet:send("250 " .. lines .. " lines, then [" .. four .. "] " .. tostring(applet:get_priv()) .. "\r\n")
  if not expect(applet, "QUIT") then return end
  applet:set_var("txn.result", "SUCCESS")
  applet:set_var("txn.from", applet.f:src())
  applet:send("221 bye " .. tostring(applet:get_var("txn.result")) .. "\r\n")
end)

core.register_service("bad", "tcp", function(applet)
  applet:send("before\r\n")
  error("broken")
end)
"#;

/// `mode tcp` listeners `fe1` (the smtp service) and `fe2` (the failing one), logging
/// to stderr with the variables and sizes.
fn tcp_service_cfg(path: &Path) -> String {
    let preamble = PREAMBLE.replacen("global\n", &format!("global\n  lua-load {}\n", path.display()), 1);
    format!(
        "{preamble}listen fe1\n  mode tcp\n  bind fd@${{fe1}}\n  log stderr format raw daemon\n\
         \x20 log-format \"SMTP %b/%s %U %B %ts %[var(txn.result)] %[var(txn.from)]\"\n\
         \x20 tcp-request content use-service lua.smtp\n\
         frontend fe2\n  mode tcp\n  bind fd@${{fe2}}\n  log stderr format raw daemon\n\
         \x20 log-format \"BAD %f/%s %U %B %ts\"\n\
         \x20 tcp-request inspect-delay 1s\n  tcp-request content use-service lua.bad\n"
    )
}

/// What a client of the smtp and bad services saw (each exchange, the end), the two
/// log lines, and the start of the error message.
fn smtp_run(binary: PathBuf) -> (Vec<String>, String, String, String) {
    let path = script("smtp", SMTP);
    let p = Proxy::new(binary).listener("fe1").listener("fe2").config(&tcp_service_cfg(&path)).start().unwrap();
    let mut c = RawClient::connect(p.addr("fe1")).unwrap();
    let mut seen = Vec::new();
    let line = |c: &mut RawClient| String::from_utf8_lossy(&c.read_until("\r\n").unwrap()).into_owned();
    seen.push(line(&mut c));
    c.send("HELO me\r\n").unwrap();
    seen.push(line(&mut c));
    // the body in pieces, with the four bytes after it in the same segment
    c.send("DATA\r\n").unwrap();
    seen.push(line(&mut c));
    c.send("Subject: x\r\n\r\nbody").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    c.send(" line\r\n.\r\nWXYZ").unwrap();
    seen.push(line(&mut c));
    c.send("QUIT\r\n").unwrap();
    // the service returned: the rest, then the end (the client has not closed)
    seen.push(String::from_utf8_lossy(&c.read_to_end().unwrap()).into_owned());
    drop(c);
    let mut bad = RawClient::connect(p.addr("fe2")).unwrap();
    seen.push(String::from_utf8_lossy(&bad.read_to_end().unwrap()).into_owned());
    drop(bad);
    assert!(p.wait_output("BAD ", Duration::from_secs(5)), "{}", p.output());
    assert!(p.wait_output("SMTP ", Duration::from_secs(5)), "{}", p.output());
    let out = p.output();
    let log = |tag: &str| out.lines().find(|l| l.starts_with(tag)).unwrap_or_default().to_owned();
    let err = out
        .lines()
        .find_map(|l| l.find("Lua applet tcp").map(|i| l[i..].split(" from ").next().unwrap_or("").to_owned()))
        .unwrap_or_default();
    (seen, log("SMTP "), log("BAD "), err)
}

#[test]
fn a_tcp_service_talks_smtp_and_its_log_line_has_its_variables() {
    let (seen, smtp, bad, err) = smtp_run(PathBuf::from(RAMPART));
    assert_eq!(
        seen,
        [
            "220 Welcome\r\n",
            "250 OK\r\n",
            "354 go\r\n",
            // (HAProxy 2.6 keeps no private value for an AppletTCP of a TCP stream)
            "250 3 lines, then [WXYZ] nil\r\n",
            "221 bye SUCCESS\r\n",
            "before\r\n"
        ]
    );
    assert_eq!(smtp, "SMTP fe1/<lua.smtp> 53 76 -- SUCCESS 127.0.0.1");
    assert_eq!(bad, "BAD fe2/<lua.bad> 0 8 --");
    let path = script("smtp", SMTP);
    assert_eq!(err, format!("Lua applet tcp '<lua.bad>': [state-id 0] runtime error: {}:35: broken.", path.display()));
}

#[test]
fn a_tcp_service_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    let ours = smtp_run(PathBuf::from(RAMPART));
    let theirs = smtp_run(haproxy);
    // (haproxy's message goes on with a traceback after " from ")
    let theirs = (theirs.0, theirs.1, theirs.2, theirs.3.trim_end_matches('.').to_owned() + ".");
    assert_eq!(ours, theirs, "rampart (left) and haproxy (right)");
}

#[test]
fn tcp_services_are_refused_where_haproxy_refuses_them() {
    let path = script(
        "kinds",
        "core.register_service('t', 'tcp', function(a) end)\ncore.register_service('h', 'http', function(a) end)\n",
    );
    let cfg = |mode: &str, rule: &str| {
        format!("global\n  lua-load {}\nlisten x\n  mode {mode}\n  bind 127.0.0.1:1\n  {rule}\n", path.display())
    };
    let cases = [
        ("tcp", "tcp-request content use-service lua.nope", "'content' unknown service name."),
        ("http", "tcp-request content use-service lua.t", "Lua TCP services cannot be used on HTTP proxies"),
        ("tcp", "tcp-request content use-service lua.h", "HTTP applets are forbidden from 'tcp-request' rulesets"),
        (
            "tcp",
            "tcp-request content use-service prometheus-exporter",
            "Prometheus exporter service only available on 'http-request' rulesets",
        ),
        (
            "tcp",
            "tcp-request content use-service lua.t foo",
            "'tcp-request content use-service' only accepts 'if' or 'unless', in proxy 'x' (got 'foo')",
        ),
    ];
    for (mode, rule, want) in cases {
        let out = rampart_testkit::check(RAMPART, &cfg(mode, rule));
        assert_ne!(out.code, 0, "{rule}");
        assert!(out.stderr.contains(want), "{rule}: {}", out.stderr);
    }
    assert_eq!(rampart_testkit::check(RAMPART, &cfg("tcp", "tcp-request content use-service lua.t")).code, 0);
}

// === an auth-request over the HTTP client ===

/// An auth-request action in the style of the public ones: it asks an HTTP server
/// about the request's token with `core.httpclient()`, keeps the status in a
/// variable the rules deny on, and passes the user it names on to the server.
const AUTH: &str = r#"
core.register_action("auth", { "http-req" }, function(txn, addr)
  local token = txn.sf:req_hdr("x-token") or ""
  local r = core.httpclient():get{ url = "http://" .. addr .. "/check" .. txn.sf:path(),
                                   headers = { ["x-token"] = { token } }, timeout = 3000 }
  txn:set_var("txn.auth", r.status)
  if r.status == 200 and r.headers["x-user"] then
    txn.http:req_set_header("x-user", r.headers["x-user"][0])
  end
end, 1)
"#;

/// What the auth server got: request line, `x-token`, `user-agent`.
type Asked = (String, Option<String>, Option<String>);

/// What the clients, the server and the auth server saw for a good token, a bad one
/// and none.
fn auth_run(binary: PathBuf) -> (Vec<u16>, Vec<Option<String>>, Vec<Asked>) {
    let path = script("auth", AUTH);
    let s1 = HttpBackend::start("s1");
    let auth = HttpBackend::builder("auth")
        .respond(|r| match r.headers.get("x-token") {
            Some("good") => Reply::new(200).header("x-user", "bob").body("ok"),
            _ => Reply::new(401).body("no"),
        })
        .start();
    let rules = "  http-request lua.auth ${auth_addr}:${auth_port}\n\
                 \x20 http-request deny deny_status 403 unless { var(txn.auth) -m int 200 }\n";
    let p = start_binary(binary, &cfg(&path, rules), &[("s1", s1.addr()), ("auth", auth.addr())]);
    let statuses = ["X-Token: good\r\n", "X-Token: bad\r\n", ""]
        .iter()
        .map(|h| {
            let mut c = client(&p);
            c.send(format!("GET /doc/1 HTTP/1.1\r\nHost: h\r\n{h}\r\n")).unwrap();
            c.read_response().unwrap().status
        })
        .collect();
    let users = s1.requests().iter().map(|r| r.headers.get("x-user").map(str::to_owned)).collect();
    let asked = auth
        .wait_requests(3)
        .iter()
        .map(|r| {
            let h = |n: &str| r.headers.get(n).map(str::to_owned);
            (format!("{} {}", r.method, r.path), h("x-token"), h("user-agent"))
        })
        .collect();
    (statuses, users, asked)
}

#[test]
fn an_auth_request_over_the_httpclient_lets_good_tokens_in() {
    let (statuses, users, asked) = auth_run(PathBuf::from(RAMPART));
    assert_eq!(statuses, [200, 403, 403]);
    assert_eq!(users, [Some("bob".to_owned())]);
    let ask = |t: &str| ("GET /check/doc/1".to_owned(), Some(t.to_owned()), Some("HAProxy".to_owned()));
    assert_eq!(asked, [ask("good"), ask("bad"), ask("")]);
}

#[test]
fn an_auth_request_over_the_httpclient_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    let ours = auth_run(PathBuf::from(RAMPART));
    assert_eq!(ours, auth_run(haproxy), "rampart (left) and haproxy (right)");
}
