//! Lua scripts that wait (sleep, talk to a TCP server over `core.tcp()`) where the
//! stream or the CLI session must wait with them without holding the thread: an
//! `http-response` action, `tcp-request content` and `tcp-response content` actions
//! of a TCP proxy (within their inspect delay), a command of the stats socket (`core.register_cli`) that also reads
//! what the client sends after it; and a request whose lines end with a bare LF
//! answered by a Lua service. `*_same_as_haproxy` run the same script through haproxy
//! 2.6 and compare what the clients and the servers saw.

mod http_common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use http_common::{client, start_binary, PREAMBLE, RAMPART};
use rampart_testkit::{HttpBackend, Proxy, RawBackend, RawClient, Running, Step};

/// Writes `code` to a script file of its own and returns its path.
fn script(name: &str, code: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rampart-lua-yield-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.lua"));
    std::fs::write(&path, code).unwrap();
    path
}

fn preamble(path: &Path) -> String {
    PREAMBLE.replacen("global\n", &format!("global\n  lua-load {}\n", path.display()), 1)
}

// === http-response ===

/// A response action that sleeps, then tells a TCP server the response's status and
/// passes its answer on to the client as a header.
const RES_ASK: &str = r#"
core.register_action("res_ask", { "http-res" }, function(txn, addr)
  core.msleep(50)
  local s = core.tcp()
  s:settimeout(3)
  local ok = s:connect(addr)
  if ok ~= 1 then
    txn.http:res_set_header("x-answer", "no connection")
    return
  end
  s:send("STATUS " .. txn.sf:status() .. "\r\n")
  local line = s:receive("*l")
  local rest = s:receive("*a")
  s:close()
  txn.http:res_set_header("x-answer", tostring(line) .. "|" .. tostring(rest))
end, 1)
"#;

/// The status, the `x-answer` header and the body the client got, and what the TCP
/// server was told.
fn res_ask_run(binary: PathBuf) -> (u16, Option<String>, String, Vec<String>) {
    let path = script("res_ask", RES_ASK);
    let s1 = HttpBackend::start("s1");
    let auth = RawBackend::start(vec![Step::expect_until("\r\n"), Step::send("OK seen\r\ntail")]);
    let cfg = format!(
        "{}frontend fe1\n  bind fd@${{fe1}}\n  http-response lua.res_ask ${{auth_addr}}:${{auth_port}}\n\
         \x20 default_backend be1\nbackend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        preamble(&path)
    );
    let p = start_binary(binary, &cfg, &[("s1", s1.addr()), ("auth", auth.addr())]);
    let mut c = client(&p);
    c.send("GET /doc HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    let r = c.read_response().unwrap();
    let asked = auth.wait_finished(1).iter().map(|c| c.received_str()).collect();
    (r.status, r.headers.get("x-answer").map(str::to_owned), String::from_utf8_lossy(&r.body).into_owned(), asked)
}

#[test]
fn a_response_action_sleeps_and_asks_a_tcp_server() {
    let (status, answer, body, asked) = res_ask_run(PathBuf::from(RAMPART));
    assert_eq!(status, 200);
    assert_eq!(answer.as_deref(), Some("OK seen|tail"));
    assert!(body.contains("s1"), "{body}");
    assert_eq!(asked, ["STATUS 200\r\n"]);
}

#[test]
fn a_response_action_with_a_socket_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    let ours = res_ask_run(PathBuf::from(RAMPART));
    let theirs = res_ask_run(haproxy);
    assert_eq!(ours, theirs, "rampart (left) and haproxy (right)");
}

#[test]
fn a_waiting_response_action_leaves_the_thread_to_other_connections() {
    let path = script(
        "res_slow",
        r#"
core.register_action("res_slow", { "http-res" }, function(txn)
  core.msleep(800)
  txn.http:res_set_header("x-slept", "yes")
end, 0)
"#,
    );
    let s1 = HttpBackend::start("s1");
    let cfg = format!(
        "{}frontend fe1\n  bind fd@${{fe1}}\n  http-request set-var(txn.slow) bool(true) if {{ path /slow }}\n\
         \x20 http-response lua.res_slow if {{ var(txn.slow) -m bool }}\n\
         \x20 default_backend be1\nbackend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        preamble(&path)
    );
    let p = start_binary(RAMPART, &cfg, &[("s1", s1.addr())]);
    let mut slow = client(&p);
    slow.send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    let mut other = client(&p);
    other.send("GET /other HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    let r = other.read_response().unwrap();
    assert_eq!((r.status, r.headers.get("x-slept")), (200, None));
    assert!(t.elapsed() < Duration::from_millis(400), "served in {:?}", t.elapsed());
    let r = slow.read_response().unwrap();
    assert_eq!((r.status, r.headers.get("x-slept")), (200, Some("yes")));
}

// === tcp-request content in a TCP proxy ===

/// A content action that asks a TCP server whether the client may go on: the answer
/// lands in `txn.verdict`, which the next rule reads.
const TCP_CHECK: &str = r#"
core.register_action("check", { "tcp-req" }, function(txn, addr)
  core.msleep(20)
  local s = core.tcp()
  s:settimeout(3)
  if s:connect(addr) ~= 1 then return end
  s:send("CHECK " .. txn.sf:req_len() .. "\r\n")
  local line = s:receive("*l")
  s:close()
  txn:set_var("txn.verdict", line)
end, 1)
"#;

/// What the client got back, what the server and the checking server received, for
/// a checking server answering `answer`.
fn tcp_check_run(binary: PathBuf, answer: &str) -> (String, Vec<String>, Vec<String>) {
    let path = script("tcp_check", TCP_CHECK);
    let server = RawBackend::start(vec![Step::expect_until("hello"), Step::send("world")]);
    let auth = RawBackend::start(vec![Step::expect_until("\r\n"), Step::send(format!("{answer}\r\n"))]);
    let cfg = format!(
        "{}frontend fe1\n  mode tcp\n  bind fd@${{fe1}}\n  tcp-request inspect-delay 3s\n\
         \x20 tcp-request content lua.check ${{auth_addr}}:${{auth_port}} if {{ req.len ge 5 }}\n\
         \x20 tcp-request content reject if {{ var(txn.verdict) -m str DENY }}\n\
         \x20 default_backend be1\nbackend be1\n  mode tcp\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        preamble(&path)
    );
    let p = start_binary(binary, &cfg, &[("s1", server.addr()), ("auth", auth.addr())]);
    let mut c = client(&p);
    c.send("hello").unwrap();
    let got = match answer {
        // the server answers, then closes after its last step
        "ALLOW" => c.read_until("world").unwrap_or_default(),
        _ => c.read_to_end().unwrap_or_default(),
    };
    drop(c);
    let checked = auth.wait_finished(1).iter().map(|c| c.received_str()).collect();
    let served = if answer == "ALLOW" {
        server.wait_finished(1).iter().map(|c| c.received_str()).collect()
    } else {
        std::thread::sleep(Duration::from_millis(200));
        Vec::new()
    };
    (String::from_utf8_lossy(&got).into_owned(), checked, served)
}

#[test]
fn a_tcp_content_action_asks_a_tcp_server_before_the_connection_goes_on() {
    let (got, checked, served) = tcp_check_run(PathBuf::from(RAMPART), "ALLOW");
    assert_eq!(got, "world");
    assert_eq!(checked, ["CHECK 5\r\n"]);
    assert_eq!(served, ["hello"]);
    let (got, checked, served) = tcp_check_run(PathBuf::from(RAMPART), "DENY");
    assert_eq!(got, "");
    assert_eq!(checked, ["CHECK 5\r\n"]);
    assert!(served.is_empty());
}

#[test]
fn a_tcp_content_action_with_a_socket_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    for answer in ["ALLOW", "DENY"] {
        let ours = tcp_check_run(PathBuf::from(RAMPART), answer);
        let theirs = tcp_check_run(haproxy.clone(), answer);
        assert_eq!(ours, theirs, "{answer}: rampart (left) and haproxy (right)");
    }
}

// === tcp-response content in a TCP proxy ===

/// A response content action that tells a TCP server how much the server sent and
/// puts its answer in `txn.verdict`, which the next rule reads.
const TCP_RES_CHECK: &str = r#"
core.register_action("res_check", { "tcp-res" }, function(txn, addr)
  core.msleep(20)
  local s = core.tcp()
  s:settimeout(3)
  if s:connect(addr) ~= 1 then return end
  s:send("RES " .. txn.sf:res_len() .. "\r\n")
  local line = s:receive("*l")
  s:close()
  txn:set_var("txn.verdict", line)
end, 1)
"#;

/// What the client got back and what the checking server received, for a checking
/// server answering `answer`.
fn tcp_res_check_run(binary: PathBuf, answer: &str) -> (String, Vec<String>) {
    let path = script("tcp_res_check", TCP_RES_CHECK);
    let server = RawBackend::start(vec![Step::expect_until("hello"), Step::send("world"), Step::sleep_ms(1000)]);
    let auth = RawBackend::start(vec![Step::expect_until("\r\n"), Step::send(format!("{answer}\r\n"))]);
    let cfg = format!(
        "{}frontend fe1\n  mode tcp\n  bind fd@${{fe1}}\n  default_backend be1\n\
         backend be1\n  mode tcp\n  tcp-response inspect-delay 3s\n\
         \x20 tcp-response content lua.res_check ${{auth_addr}}:${{auth_port}} if {{ res.len ge 5 }}\n\
         \x20 tcp-response content reject if {{ var(txn.verdict) -m str DENY }}\n\
         \x20 server s1 ${{s1_addr}}:${{s1_port}}\n",
        preamble(&path)
    );
    let p = start_binary(binary, &cfg, &[("s1", server.addr()), ("auth", auth.addr())]);
    let mut c = client(&p);
    c.send("hello").unwrap();
    let got = match answer {
        "ALLOW" => c.read_until("world").unwrap_or_default(),
        _ => c.read_to_end().unwrap_or_default(),
    };
    drop(c);
    let checked = auth.wait_finished(1).iter().map(|c| c.received_str()).collect();
    (String::from_utf8_lossy(&got).into_owned(), checked)
}

#[test]
fn a_tcp_response_action_asks_a_tcp_server_before_the_response_goes_on() {
    assert_eq!(tcp_res_check_run(PathBuf::from(RAMPART), "ALLOW"), ("world".to_owned(), vec!["RES 5\r\n".to_owned()]));
    assert_eq!(tcp_res_check_run(PathBuf::from(RAMPART), "DENY"), (String::new(), vec!["RES 5\r\n".to_owned()]));
}

#[test]
fn a_tcp_response_action_with_a_socket_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    for answer in ["ALLOW", "DENY"] {
        let ours = tcp_res_check_run(PathBuf::from(RAMPART), answer);
        let theirs = tcp_res_check_run(haproxy.clone(), answer);
        assert_eq!(ours, theirs, "{answer}: rampart (left) and haproxy (right)");
    }
}

/// Without an inspect delay the inspection is final at once: the script cannot wait
/// (HAProxy 2.6's `ACT_OPT_FINAL`), its sleep ends it with HAProxy's message and the
/// rules go on. What the client got, and whether the message was logged.
fn tcp_final_run(binary: PathBuf) -> (Vec<u8>, bool) {
    let path = script(
        "tcp_final",
        r#"
core.register_action("nap", { "tcp-req" }, function(txn)
  txn:set_var("txn.before", "1")
  core.msleep(20)
  txn:set_var("txn.after", "1")
end, 0)
"#,
    );
    let server = RawBackend::start(vec![Step::expect_until("hello"), Step::send("world")]);
    let cfg = format!(
        "{}frontend fe1\n  mode tcp\n  bind fd@${{fe1}}\n  tcp-request content lua.nap\n\
         \x20 tcp-request content reject if {{ var(txn.after) -m found }}\n\
         \x20 tcp-request content reject unless {{ var(txn.before) -m found }}\n\
         \x20 default_backend be1\nbackend be1\n  mode tcp\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        preamble(&path)
    );
    let p = start_binary(binary, &cfg, &[("s1", server.addr())]);
    let mut c = client(&p);
    c.send("hello").unwrap();
    let got = c.read_until("world").unwrap_or_default();
    let msg = "Lua function 'nap': aborting Lua processing on expired timeout.";
    (got, p.wait_output(msg, Duration::from_secs(5)))
}

#[test]
fn a_tcp_content_action_cannot_wait_on_final_data() {
    assert_eq!(tcp_final_run(PathBuf::from(RAMPART)), (b"world".to_vec(), true));
}

#[test]
fn a_tcp_content_action_on_final_data_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(tcp_final_run(PathBuf::from(RAMPART)), tcp_final_run(haproxy), "rampart (left) and haproxy (right)");
}

// === CLI commands ===

const CLI: &str = r#"
core.register_cli({"ask"}, "ask a server", function(applet, _, addr)
  core.msleep(30)
  core.yield()
  local s = core.tcp()
  s:settimeout(3)
  local ok = s:connect(addr)
  s:send("CLI\r\n")
  local line = s:receive("*l")
  s:close()
  applet:send("connect " .. tostring(ok) .. ", server said " .. tostring(line) .. "\n")
  local more = applet:getline()
  applet:send("client said " .. tostring(more))
end)
core.register_cli({"nap"}, "sleep a while", function(applet, _, ms)
  core.msleep(tonumber(ms))
  applet:send("rested\n")
end)
"#;

/// A CLI session on the stats socket at `sock`: sends `input`, reads to the end.
fn cli(sock: &Path, input: &str) -> String {
    use std::io::{Read, Write};
    let mut c = std::os::unix::net::UnixStream::connect(sock).expect("the stats socket");
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(input.as_bytes()).unwrap();
    let mut out = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n @ 1..) = c.read(&mut chunk) {
        out.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn start_cli(binary: PathBuf, extra: &[(&str, std::net::SocketAddr)]) -> (Running, PathBuf) {
    let path = script("cli", CLI);
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let sock = std::env::temp_dir().join(format!("rampart-lua-yield-{}-{run}.sock", std::process::id()));
    let _ = std::fs::remove_file(&sock);
    let s1 = HttpBackend::start("s1");
    let pre =
        preamble(&path).replacen("global\n", &format!("global\n  stats socket {} level admin\n", sock.display()), 1);
    let cfg = format!(
        "{pre}frontend fe1\n  bind fd@${{fe1}}\n  default_backend be1\nbackend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let mut proxy = Proxy::new(binary).listener("fe1").backend("s1", s1.addr());
    for (name, addr) in extra {
        proxy = proxy.backend(name, *addr);
    }
    let p = proxy.config(&cfg).start().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::os::unix::net::UnixStream::connect(&sock).is_err() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::mem::forget(s1);
    (p, sock)
}

/// What the CLI answered to `ask` and what the server it asked received.
fn cli_ask_run(binary: PathBuf) -> (String, Vec<String>) {
    let auth = RawBackend::start(vec![Step::expect_until("\r\n"), Step::send("pong\r\n")]);
    let (_p, sock) = start_cli(binary, &[]);
    let answer = cli(&sock, &format!("ask {}\nfrom the client\n", auth.addr()));
    let asked = auth.wait_finished(1).iter().map(|c| c.received_str()).collect();
    (answer, asked)
}

#[test]
fn a_cli_command_sleeps_asks_a_server_and_reads_the_client() {
    let (answer, asked) = cli_ask_run(PathBuf::from(RAMPART));
    assert_eq!(answer, "connect 1, server said pong\nclient said from the client\n\n");
    assert_eq!(asked, ["CLI\r\n"]);
}

#[test]
fn a_waiting_cli_command_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    let ours = cli_ask_run(PathBuf::from(RAMPART));
    let theirs = cli_ask_run(haproxy);
    assert_eq!(ours, theirs, "rampart (left) and haproxy (right)");
}

#[test]
fn a_sleeping_cli_command_leaves_the_other_sessions_served() {
    let (p, sock) = start_cli(PathBuf::from(RAMPART), &[]);
    let slow_sock = sock.clone();
    let slow = std::thread::spawn(move || cli(&slow_sock, "nap 1000\n"));
    std::thread::sleep(Duration::from_millis(150));
    let t = Instant::now();
    assert_eq!(cli(&sock, "nap 0\n"), "rested\n\n");
    assert!(t.elapsed() < Duration::from_millis(500), "answered in {:?}", t.elapsed());
    // and the proxy serves meanwhile
    let mut c = client(&p);
    c.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
    assert_eq!(slow.join().unwrap(), "rested\n\n");
}

// === bare LF line endings (reg-test lua/close_wait_lf) ===

/// A request whose lines end with a bare LF reaches a Lua service (which answers
/// nothing: a 500, as HAProxy's applet answers), as in haproxy 2.6.
fn bare_lf_run(binary: PathBuf) -> (u16, u16) {
    let path = script("donothing", "core.register_service(\"donothing\", \"http\", function(applet) end)\n");
    let cfg =
        format!("{}frontend fe1\n  bind fd@${{fe1}}\n  http-request use-service lua.donothing\n", preamble(&path));
    let p = start_binary(binary, &cfg, &[]);
    let mut c = RawClient::connect(p.addr("fe1")).unwrap();
    c.send("GET / HTTP/1.1\nHost: h\nX-A: 1\n\n").unwrap();
    let lf = c.read_response().unwrap().status;
    let mut c = RawClient::connect(p.addr("fe1")).unwrap();
    c.send("GET / HTTP/1.0\n\n").unwrap();
    (lf, c.read_response().unwrap().status)
}

#[test]
fn bare_lf_requests_reach_a_lua_service_as_in_haproxy() {
    assert_eq!(bare_lf_run(PathBuf::from(RAMPART)), (500, 500));
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(bare_lf_run(haproxy), (500, 500));
}
