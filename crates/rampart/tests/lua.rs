//! Lua scripting through the binary: scripts written for the tests in the style users
//! write them (a header-setting action, a CORS preflight service, a fetch and a
//! converter used in rules, a task that updates a map), and how failures end: a
//! runtime error, a script that does not compile, a runaway loop next to other
//! connections. `same_as_haproxy` runs one script through haproxy too and compares.

mod http_common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use http_common::{client, start, start_binary, PREAMBLE, RAMPART};
use rampart_testkit::{HttpBackend, RawClient, Response, Running};

/// Writes `code` to a script file of its own and returns its path.
fn script(name: &str, code: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rampart-lua-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.lua"));
    std::fs::write(&path, code).unwrap();
    path
}

/// `global` with `lua-load <path>` and `extra` global lines, then the usual preamble.
fn cfg(path: &Path, extra_global: &str, frontend: &str) -> String {
    let preamble = PREAMBLE.replacen("global\n", &format!("global\n  lua-load {}\n{extra_global}", path.display()), 1);
    format!("{preamble}frontend fe1\n  bind fd@${{fe1}}\n{frontend}  default_backend be1\nbackend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n")
}

fn send(p: &Running, req: &str) -> Response {
    let mut c = client(p);
    c.send(req).unwrap();
    c.read_response().unwrap()
}

fn get(p: &Running, path: &str) -> Response {
    send(p, &format!("GET {path} HTTP/1.1\r\nHost: h\r\n\r\n"))
}

const SCRIPT: &str = r#"
core.register_action("tag", { "http-req" }, function(txn, value)
  txn.http:req_set_header("x-tag", value .. ":" .. txn.sf:path())
  txn.http:req_del_header("x-drop")
  txn:set_var("txn.tagged", "yes")
end, 1)

core.register_action("stamp", { "http-res" }, function(txn)
  txn.http:res_add_header("x-stamp", txn:get_var("txn.tagged") or "no")
end)

core.register_service("cors", "http", function(applet)
  local origin = applet.headers["origin"] and applet.headers["origin"][0] or "*"
  applet:set_status(204)
  applet:add_header("access-control-allow-origin", origin)
  applet:add_header("access-control-allow-methods", "GET, POST, OPTIONS")
  applet:add_header("access-control-max-age", "3600")
  applet:start_response()
end)

core.register_service("challenge", "http", function(applet)
  core.msleep(20)
  local body = "<html>prove it: " .. applet.path .. "?" .. applet.qs .. "</html>"
  applet:set_status(403, "Challenge")
  applet:add_header("content-type", "text/html")
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end)

core.register_fetches("double", function(txn, n) return (tonumber(n) or 0) * 2 end)
core.register_converters("shout", function(v) return string.upper(v) .. "!" end)

core.register_action("boom", { "http-req" }, function(txn) error("kaboom") end)
core.register_service("broken", "http", function(applet) local x = nil; return x.field end)
"#;

const RULES: &str = "  http-request use-service lua.cors if METH_OPTIONS\n\
                     \x20 http-request use-service lua.challenge if { path_beg /challenge }\n\
                     \x20 http-request use-service lua.broken if { path /broken }\n\
                     \x20 http-request lua.boom if { path /boom }\n\
                     \x20 http-request lua.tag blue\n\
                     \x20 http-request set-header x-double %[lua.double(21)]\n\
                     \x20 http-request set-header x-shout %[req.hdr(host),lua.shout]\n\
                     \x20 http-request deny deny_status 429 if { req.hdr(x-name),lua.shout -m str EVIL! }\n\
                     \x20 http-response lua.stamp\n";

fn start_script(binary: PathBuf, s1: &HttpBackend) -> Running {
    let path = script("main", SCRIPT);
    start_binary(binary, &cfg(&path, "", RULES), &[("s1", s1.addr())])
}

#[test]
fn an_action_sets_headers_the_server_sees_and_a_response_action_reads_its_variable() {
    let s1 = HttpBackend::start("s1");
    let p = start_script(PathBuf::from(RAMPART), &s1);
    let r = send(&p, "GET /a/b?c=1 HTTP/1.1\r\nHost: h\r\nX-Drop: 1\r\n\r\n");
    assert_eq!(r.status, 200, "{}", p.output());
    assert_eq!(r.headers.get("x-stamp"), Some("yes"));
    let req = &s1.wait_requests(1)[0];
    assert_eq!(req.headers.get("x-tag"), Some("blue:/a/b"));
    assert_eq!(req.headers.get("x-drop"), None);
}

#[test]
fn a_fetch_and_a_converter_work_in_rules() {
    let s1 = HttpBackend::start("s1");
    let p = start_script(PathBuf::from(RAMPART), &s1);
    assert_eq!(get(&p, "/").status, 200);
    let req = &s1.wait_requests(1)[0];
    assert_eq!(req.headers.get("x-double"), Some("42"));
    assert_eq!(req.headers.get("x-shout"), Some("H!"));
    let r = send(&p, "GET / HTTP/1.1\r\nHost: h\r\nX-Name: evil\r\n\r\n");
    assert_eq!(r.status, 429);
}

#[test]
fn a_cors_preflight_is_answered_by_the_service_and_other_requests_pass() {
    let s1 = HttpBackend::start("s1");
    let p = start_script(PathBuf::from(RAMPART), &s1);
    let r = send(&p, "OPTIONS /api HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\n\r\n");
    assert_eq!(r.status, 204);
    assert_eq!(r.headers.get("access-control-allow-origin"), Some("https://app.example"));
    assert_eq!(r.headers.get("access-control-allow-methods"), Some("GET, POST, OPTIONS"));
    assert!(s1.requests().is_empty(), "the preflight never reaches the server");
    assert_eq!(get(&p, "/api").status, 200);
}

#[test]
fn a_service_that_sleeps_answers_a_challenge_page() {
    let s1 = HttpBackend::start("s1");
    let p = start_script(PathBuf::from(RAMPART), &s1);
    let r = get(&p, "/challenge/x?y=1");
    assert_eq!((r.status, r.reason.as_str()), (403, "Challenge"));
    assert_eq!(r.body_str(), "<html>prove it: /challenge/x?y=1</html>");
}

#[test]
fn a_runtime_error_is_logged_an_action_goes_on_and_a_service_answers_500() {
    let s1 = HttpBackend::start("s1");
    let p = start_script(PathBuf::from(RAMPART), &s1);
    // as HAProxy: the failed action is logged and the rules go on
    assert_eq!(get(&p, "/boom").status, 200);
    assert!(
        p.wait_output("Lua function 'boom': [state-id 0] runtime error: ", Duration::from_secs(5)),
        "{}",
        p.output()
    );
    assert!(p.output().contains("kaboom"), "{}", p.output());
    assert_eq!(get(&p, "/broken").status, 500);
    assert!(p.wait_output("Lua applet http 'broken': ", Duration::from_secs(5)), "{}", p.output());
    // the process keeps serving
    assert_eq!(get(&p, "/").status, 200);
}

#[test]
fn a_script_that_does_not_compile_fails_startup_with_haproxys_message() {
    let path = script("syntax", "core.register_action(\"x\", { \"http-req\" }, function(txn) end\n");
    let out = rampart_testkit::check(RAMPART, &format!("global\n  lua-load {}\n", path.display()));
    assert_ne!(out.code, 0);
    let want =
        format!("error in Lua file '{0}': {0}:2: ')' expected (to close '(' at line 1) near <eof>", path.display());
    assert!(out.stderr.contains(&want), "{}", out.stderr);

    let path = script("raises", "error('boom')\n");
    let out = rampart_testkit::check(RAMPART, &format!("global\n  lua-load {}\n", path.display()));
    assert!(out.stderr.contains(&format!("Lua runtime error: {}:1: boom", path.display())), "{}", out.stderr);

    let out = rampart_testkit::check(RAMPART, "global\n  lua-load /nonexistent/x.lua\n");
    assert!(
        out.stderr.contains("error in Lua file '/nonexistent/x.lua': cannot open /nonexistent/x.lua"),
        "{}",
        out.stderr
    );
}

#[test]
fn rules_naming_what_no_script_registered_fail_startup() {
    let path = script("empty", "core.register_action('a', { 'http-res' }, function() end)\n");
    let cfg = format!("global\n  lua-load {}\nfrontend f\n  mode http\n  bind 127.0.0.1:1\n", path.display());
    let out = rampart_testkit::check(RAMPART, &format!("{cfg}  http-request lua.nope\n"));
    assert!(out.stderr.contains("Lua action 'nope' is not registered"), "{}", out.stderr);
    let out = rampart_testkit::check(RAMPART, &format!("{cfg}  http-request lua.a\n"));
    assert!(out.stderr.contains("Lua action 'a' is not registered for 'http-req'"), "{}", out.stderr);
    let out = rampart_testkit::check(RAMPART, &format!("{cfg}  http-request use-service lua.nope\n"));
    assert!(out.stderr.contains("'lua.nope' unknown service name"), "{}", out.stderr);
    let out = rampart_testkit::check(RAMPART, &format!("{cfg}  tcp-request content lua.a\n"));
    assert!(out.stderr.contains("Lua action 'a' is not registered for 'tcp-req'"), "{}", out.stderr);
    let out = rampart_testkit::check(RAMPART, &format!("{cfg}  tcp-request connection lua.a\n"));
    // as HAProxy 2.6: Lua actions are content actions (tests/lua_shared.rs)
    assert!(out.stderr.contains("'tcp-request connection' expects 'accept', 'reject'"), "{}", out.stderr);
}

#[test]
fn api_functions_not_there_yet_say_so() {
    let path = script(
        "missing",
        "core.register_action('sock', { 'http-req' }, function(txn) core.set_nice(1) end)\n\
         core.register_action('be', { 'http-req' }, function(txn) core.event_sub({ 'SERVER_ADD' }, print) end)\n",
    );
    let s1 = HttpBackend::start("s1");
    let rules = "  http-request lua.sock if { path /sock }\n  http-request lua.be if { path /be }\n";
    let p = start(&cfg(&path, "", rules), &[("s1", s1.addr())]);
    assert_eq!(get(&p, "/sock").status, 200);
    assert_eq!(get(&p, "/be").status, 200);
    assert!(p.wait_output("core.set_nice is not supported yet by rampart", Duration::from_secs(5)), "{}", p.output());
    assert!(p.wait_output("core.event_sub is not supported yet by rampart", Duration::from_secs(5)), "{}", p.output());
}

/// A task that sets a map entry every 50 ms (`on-1`, `on-2` ...), which a rule
/// answers: the distinct answers the client saw within 5 s, up to three.
fn task_map_run(binary: PathBuf) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("rampart-lua-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let map = dir.join("flags.map");
    std::fs::write(&map, "/feature off\n").unwrap();
    let path = script(
        "task",
        &format!(
            "core.register_task(function()\n\
             \x20 local n = 0\n\
             \x20 while true do\n\
             \x20   n = n + 1\n\
             \x20   core.set_map('{}', '/feature', 'on-' .. n)\n\
             \x20   core.msleep(50)\n\
             \x20 end\n\
             end)\n",
            map.display()
        ),
    );
    let s1 = HttpBackend::start("s1");
    let rules =
        format!("  http-request return status 200 content-type text/plain lf-string %[path,map({})]\n", map.display());
    let p = start_binary(binary, &cfg(&path, "", &rules), &[("s1", s1.addr())]);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        let body = get(&p, "/feature").body_str();
        if !seen.contains(&body) {
            seen.push(body);
        }
        if seen.len() >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    seen
}

/// Whether the answers went from the file's value (or the task's first) through
/// the task's growing numbers.
fn task_map_ok(seen: &[String]) -> bool {
    let n = |b: &str| b.strip_prefix("on-").and_then(|n| n.parse::<u64>().ok());
    let nums: Vec<u64> = seen.iter().filter_map(|b| n(b)).collect();
    seen.len() >= 3
        && nums.len() >= 2
        && nums.windows(2).all(|w| w[0] < w[1])
        && seen.iter().skip(1).all(|b| n(b).is_some())
}

#[test]
fn a_task_updates_a_map_the_rules_read() {
    let seen = task_map_run(PathBuf::from(RAMPART));
    assert!(task_map_ok(&seen), "{seen:?}");
}

#[test]
fn a_task_updating_a_map_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    let ours = task_map_run(PathBuf::from(RAMPART));
    let theirs = task_map_run(haproxy);
    assert_eq!((task_map_ok(&ours), ours.len()), (task_map_ok(&theirs), theirs.len()), "{ours:?} {theirs:?}");
}

#[test]
fn a_runaway_loop_leaves_the_thread_to_other_connections_and_times_out() {
    let path = script("spin", "core.register_action('spin', { 'http-req' }, function(txn) while true do end end)\n");
    let s1 = HttpBackend::start("s1");
    let rules = "  http-request lua.spin if { path /spin }\n";
    // one thread: the loop and the other connections share it
    let p = start(&cfg(&path, "  tune.lua.session-timeout 1500ms\n", rules), &[("s1", s1.addr())]);
    let started = Instant::now();
    let mut spinning = RawClient::connect(p.addr("fe1")).unwrap();
    spinning.send("GET /spin HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..5 {
        let t = Instant::now();
        assert_eq!(get(&p, "/other").status, 200);
        assert!(t.elapsed() < Duration::from_millis(500), "served in {:?}", t.elapsed());
    }
    // past the timeout the script is stopped, logged, and the rules go on
    let r = spinning.read_response().unwrap();
    assert_eq!(r.status, 200);
    assert!(started.elapsed() >= Duration::from_millis(1400), "{:?}", started.elapsed());
    assert!(
        p.wait_output("Lua function 'spin': [state-id 0] runtime error: execution timeout.", Duration::from_secs(5))
    );
}

#[test]
fn a_memory_bomb_fails_within_maxmem_and_the_process_keeps_serving() {
    let path = script(
        "bomb",
        "core.register_action('bomb', { 'http-req' }, function(txn)\n\
         \x20 local t = {}\n\
         \x20 for i = 1, 100000000 do t[i] = string.rep('x', 1024) .. i end\n\
         end)\n",
    );
    let s1 = HttpBackend::start("s1");
    let rules = "  http-request lua.bomb if { path /bomb }\n";
    let p = start(&cfg(&path, "  tune.lua.maxmem 16\n", rules), &[("s1", s1.addr())]);
    assert_eq!(get(&p, "/bomb").status, 200);
    assert!(p.wait_output("Lua function 'bomb': out of memory error.", Duration::from_secs(10)), "{}", p.output());
    assert_eq!(get(&p, "/").status, 200);
}

/// What the comparison keeps of a response.
fn seen(r: &Response) -> (u16, Vec<(String, String)>, String) {
    let keep = ["x-stamp", "access-control-allow-origin", "access-control-allow-methods", "content-type"];
    let headers = r.headers.iter().filter(|(n, _)| keep.contains(&n.to_ascii_lowercase().as_str()));
    // HAProxy keeps an applet's headers in a Lua table: their order is not kept
    let mut headers: Vec<_> = headers.map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned())).collect();
    headers.sort();
    (r.status, headers, r.body_str())
}

#[test]
fn same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    let requests = [
        "GET /a?b=1 HTTP/1.1\r\nHost: h\r\nX-Drop: 1\r\n\r\n",
        "OPTIONS /api HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\n\r\n",
        "GET /challenge/x?y=1 HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /boom HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /broken HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX-Name: evil\r\n\r\n",
    ];
    let mut results = Vec::new();
    for binary in [PathBuf::from(RAMPART), haproxy] {
        let s1 = HttpBackend::start("s1");
        let p = start_script(binary, &s1);
        let responses: Vec<_> = requests.iter().map(|r| seen(&send(&p, r))).collect();
        let server: Vec<_> = s1
            .requests()
            .iter()
            .map(|r| (r.headers.get("x-tag").map(str::to_owned), r.headers.get("x-double").map(str::to_owned)))
            .collect();
        results.push((responses, server));
    }
    assert_eq!(results[0], results[1], "rampart (left) and haproxy (right)");
}

#[test]
fn an_action_that_sleeps_gives_the_thread_to_other_connections() {
    let path = script(
        "nap",
        "core.register_action('nap', { 'http-req' }, function(txn)\n\
         \x20 local t0 = core.now()\n\
         \x20 core.msleep(600)\n\
         \x20 core.yield()\n\
         \x20 local t1 = core.now()\n\
         \x20 txn.http:req_set_header('x-slept-ms', (t1.sec - t0.sec) * 1000 + (t1.usec - t0.usec) // 1000)\n\
         end)\n",
    );
    let s1 = HttpBackend::start("s1");
    let p = start(&cfg(&path, "", "  http-request lua.nap if { path /nap }\n"), &[("s1", s1.addr())]);
    let mut napping = RawClient::connect(p.addr("fe1")).unwrap();
    napping.send("GET /nap HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    assert_eq!(get(&p, "/other").status, 200);
    assert!(t.elapsed() < Duration::from_millis(400), "served in {:?}", t.elapsed());
    assert_eq!(napping.read_response().unwrap().status, 200);
    let slept = s1.wait_requests(2).iter().find_map(|r| r.headers.get("x-slept-ms").map(str::to_owned)).unwrap();
    assert!(slept.parse::<u64>().unwrap() >= 590, "{slept}");
}

#[test]
fn a_service_reads_the_buffered_request_body() {
    let path = script(
        "echo",
        "core.register_service('echo', 'http', function(applet)\n\
         \x20 local first = applet:getline()\n\
         \x20 local rest = applet:receive()\n\
         \x20 applet:set_status(200)\n\
         \x20 applet:start_response()\n\
         \x20 applet:send('first=' .. first .. 'rest=' .. rest .. ' length=' .. applet.length)\n\
         end)\n",
    );
    let s1 = HttpBackend::start("s1");
    let rules = "  option http-buffer-request\n  http-request use-service lua.echo\n";
    let p = start(&cfg(&path, "", rules), &[("s1", s1.addr())]);
    let r = send(&p, "POST /e HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nab\ncdefgh\n");
    assert_eq!(r.status, 200);
    assert_eq!(r.body_str(), "first=ab\nrest=cdefgh\n length=10");
}

#[test]
fn a_tcp_content_action_sets_a_variable_later_rules_read() {
    let path = script(
        "tcp",
        "core.register_action('mark', { 'tcp-req' }, function(txn, who)\n\
         \x20 txn:set_var('txn.who', who .. '-' .. txn.sf:dst_port())\n\
         end, 1)\n",
    );
    let s1 = rampart_testkit::TcpEchoBackend::start();
    let cfg = format!(
        "global\n  lua-load {}\n  nbthread 1\ndefaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind fd@${{fe1}}\n  tcp-request content lua.mark lua\n\
         \x20 tcp-request content reject if {{ var(txn.who) -m beg lua- }}\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        path.display()
    );
    let p = start(&cfg, &[("s1", s1.addr())]);
    let mut c = client(&p);
    c.send("hello").unwrap();
    assert!(c.is_closed_within(Duration::from_secs(2)), "rejected by the rule that reads the variable");
    assert!(!p.output().contains("Lua function"), "{}", p.output());
}

/// Per request: its path and the `x-map`, `x-re` and `x-exec` headers the server saw.
type MapSeen = (String, Option<String>, Option<String>, Option<String>);

/// What the server saw of a script that looks requests up in map files with the
/// `Map` class and matches them with the `Regex` class.
fn map_and_regex_run(binary: PathBuf) -> Vec<MapSeen> {
    // a directory per binary: the comparison with haproxy runs beside the rampart-only
    // test, and rewriting the maps under the other's proxy made its lookups fail
    let name = binary.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = std::env::temp_dir().join(format!("rampart-lua-tests-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let hosts = dir.join("hosts.map");
    std::fs::write(&hosts, "# host to team\nshop.example   team-shop\nblog.example team blog  \n").unwrap();
    let prefixes = dir.join("prefixes.map");
    std::fs::write(&prefixes, "/api/ api\n/api/v2/ api-v2\n/ root\n").unwrap();
    let code = format!(
        r#"
local hosts = Map.new("{}", Map._str)
local prefixes = Map.new("{}", Map._beg)
local ok, re = Regex.new("^/u/([a-z]+)/([0-9]+)$", true)
local bad, why = Regex.new("(", true)
core.register_action("route", {{ "http-req" }}, function(txn)
  local host = txn.sf:req_hdr("host")
  txn.http:req_set_header("x-map", tostring(hosts:lookup(host)) .. "|" .. hosts:slookup("nope") .. "|" ..
                                   tostring(prefixes:lookup(txn.sf:path())))
  local m, caps = re:match(txn.sf:path())
  txn.http:req_set_header("x-re", tostring(ok) .. "|" .. tostring(m) .. "|" .. table.concat(caps, ","))
  txn.http:req_set_header("x-exec", tostring(re:exec("/U/ABC/1")) .. "|" .. tostring(bad) .. "|" .. type(why))
end)
"#,
        hosts.display(),
        prefixes.display()
    );
    let path = dir.join("maps.lua");
    std::fs::write(&path, code).unwrap();
    let s1 = HttpBackend::start("s1");
    let p = start_binary(binary, &cfg(&path, "", "  http-request lua.route\n"), &[("s1", s1.addr())]);
    let asks = [("shop.example", "/api/v2/x"), ("blog.example", "/u/ann/42"), ("other", "/u/Ann/42")];
    for (host, path) in asks {
        let mut c = client(&p);
        c.send(format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n")).unwrap();
        assert_eq!(c.read_response().unwrap().status, 200);
    }
    let h = |r: &rampart_testkit::Request, n: &str| r.headers.get(n).map(str::to_owned);
    s1.wait_requests(3).iter().map(|r| (r.path.clone(), h(r, "x-map"), h(r, "x-re"), h(r, "x-exec"))).collect()
}

#[test]
fn map_and_regex_classes_look_up_and_match_as_the_rules_do() {
    let seen = map_and_regex_run(PathBuf::from(RAMPART));
    let row = |p: &str, m: &str, r: &str| {
        (p.to_owned(), Some(m.to_owned()), Some(r.to_owned()), Some("false|false|string".to_owned()))
    };
    assert_eq!(
        seen,
        [
            row("/api/v2/x", "team-shop||api-v2", "true|false|"),
            row("/u/ann/42", "team blog||root", "true|true|/u/ann/42,ann,42"),
            row("/u/Ann/42", "nil||root", "true|false|"),
        ]
    );
}

#[test]
fn map_and_regex_classes_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(
        map_and_regex_run(PathBuf::from(RAMPART)),
        map_and_regex_run(haproxy),
        "rampart (left) and haproxy (right)"
    );
}

// === CLI commands ===

const CLI: &str = r#"
core.register_cli({"hello", "world"}, "say hello to the world", function(applet, ...)
  local args = {...}
  applet:send("hello " .. #args .. ":" .. table.concat(args, ",") .. "\n")
  applet:send("txn.x=" .. tostring(core.get_info().Name) .. "\n")
end)
core.register_cli({"boom"}, "fails on purpose", function(applet)
  applet:send("partial\n")
  error("bad")
end)
"#;

/// One command's answer on the stats socket at `sock`.
fn cli(sock: &Path, cmd: &str) -> String {
    use std::io::{Read, Write};
    let mut c = std::os::unix::net::UnixStream::connect(sock).expect("the stats socket");
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(format!("{cmd}\n").as_bytes()).unwrap();
    // (haproxy may reset the connection once it answered: keep what came before)
    let mut out = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n @ 1..) = c.read(&mut chunk) {
        out.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What the CLI answered to the script's commands, the help lines around them, and
/// the start of the error message.
fn cli_run(binary: PathBuf) -> (Vec<String>, Vec<String>, String) {
    let path = script("cli", CLI);
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let sock = std::env::temp_dir().join(format!("rampart-lua-cli-{}-{run}.sock", std::process::id()));
    let _ = std::fs::remove_file(&sock);
    let s1 = HttpBackend::start("s1");
    let extra = format!("  stats socket {} level admin\n", sock.display());
    let p = rampart_testkit::Proxy::new(binary)
        .listener("fe1")
        .backend("s1", s1.addr())
        .config(&cfg(&path, &extra, ""))
        .start()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::os::unix::net::UnixStream::connect(&sock).is_err() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let answers = ["hello world a b", "boom", "hello", "help hello"].iter().map(|c| cli(&sock, c)).collect();
    let help = cli(&sock, "help");
    let lua_lines = help.lines().filter(|l| !l.contains(':')).map(str::to_owned).collect();
    assert!(p.wait_output("Lua cli", Duration::from_secs(5)), "{}", p.output());
    let out = p.output();
    let err = out
        .lines()
        .find_map(|l| {
            l.find("Lua cli").map(|i| l[i..].split(" from ").next().unwrap_or("").trim_end_matches('.').to_owned())
        })
        .unwrap_or_default();
    (answers, lua_lines, err)
}

#[test]
fn a_cli_command_answers_on_the_stats_socket_and_is_listed_in_help() {
    let (answers, help, err) = cli_run(PathBuf::from(RAMPART));
    assert_eq!(answers[0], "hello 4:hello,world,a,b\ntxn.x=HAProxy\n\n");
    assert_eq!(answers[1], "partial\n\n");
    assert!(
        answers[2].starts_with(
            "Unknown command, but maybe one of the following ones is a better match:\n  say hello to the world\n  help"
        ),
        "{}",
        answers[2]
    );
    assert!(
        answers[3].starts_with("The following commands are valid at this level:\n  say hello to the world\n  help"),
        "{}",
        answers[3]
    );
    assert_eq!(help, ["  fails on purpose", "  say hello to the world", ""]);
    let path = script("cli", CLI);
    assert_eq!(err, format!("Lua cli '<lua.cli.boom>': [state-id 0] runtime error: {}:9: bad", path.display()));
}

#[test]
fn cli_commands_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    let ours = cli_run(PathBuf::from(RAMPART));
    let theirs = cli_run(haproxy);
    assert_eq!(ours, theirs, "rampart (left) and haproxy (right)");
}

#[test]
fn actions_add_and_delete_acl_entries_and_map_entries() {
    let dir = std::env::temp_dir().join(format!("rampart-lua-acl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (acl, map) = (dir.join("block.acl"), dir.join("color.map"));
    std::fs::write(&acl, "mallory\n").unwrap();
    std::fs::write(&map, "").unwrap();
    let path = script(
        "acl",
        &format!(
            "core.register_action('ban', {{ 'http-req' }}, function(txn)\n\
             \x20 core.add_acl('{a}', txn.sf:req_hdr('x-client'))\n\
             \x20 core.set_map('{m}', txn.sf:req_hdr('x-client'), 'banned')\n\
             end)\n\
             core.register_action('unban', {{ 'http-req' }}, function(txn)\n\
             \x20 core.del_acl('{a}', txn.sf:url_param('c'))\n\
             \x20 core.del_map('{m}', txn.sf:url_param('c'))\n\
             end)\n\
             core.register_action('nope', {{ 'http-req' }}, function(txn) core.add_acl('/no/such.acl', 'x') end)\n",
            a = acl.display(),
            m = map.display()
        ),
    );
    let s1 = HttpBackend::start("s1");
    let rules = format!(
        "  acl blocked req.hdr(x-client) -f {a}\n  http-request deny if blocked\n\
         \x20 http-request lua.ban if {{ path /ban }}\n  http-request lua.unban if {{ path_beg /unban }}\n\
         \x20 http-request lua.nope if {{ path /nope }}\n\
         \x20 http-request return status 200 content-type text/plain lf-string %[req.hdr(x-client),map({m},none)]\n",
        a = acl.display(),
        m = map.display()
    );
    let p = start(&cfg(&path, "", &rules), &[("s1", s1.addr())]);
    let as_client = |path: &str, who: &str| {
        send(&p, &format!("GET {path} HTTP/1.1\r\nHost: h\r\nX-Client: {who}\r\nConnection: close\r\n\r\n"))
    };
    assert_eq!(as_client("/", "mallory").status, 403);
    assert_eq!(as_client("/", "alice").body_str(), "none");
    assert_eq!(as_client("/ban", "alice").body_str(), "banned");
    assert_eq!(as_client("/", "alice").status, 403);
    assert_eq!(as_client("/unban?c=alice", "admin").body_str(), "none");
    assert_eq!(as_client("/", "alice").body_str(), "none");
    // HAProxy 2.6's message for a file no ACL loads
    as_client("/nope", "x");
    assert!(p.wait_output("'add_acl': unknown acl file '/no/such.acl'", Duration::from_secs(5)), "{}", p.output());
    let _ = std::fs::remove_dir_all(&dir);
}
