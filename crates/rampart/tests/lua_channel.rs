//! Lua's Channel class writing and waiting in TCP content actions (`txn.req`,
//! `txn.res`: `set`, `append`, `prepend`, `insert`, `remove`, `forward`, `send`,
//! `get`, `getline`, and `data`/`line` waiting for more data), through the binary:
//! scripts change what the server and the client receive, and report what the
//! methods returned through `txn.res:send()`. The `*_same_as_haproxy` tests run the
//! same scripts through haproxy 2.6 and compare what the client and the server saw.

mod http_common;

use std::path::PathBuf;
use std::time::Duration;

use http_common::RAMPART;
use rampart_testkit::{RawBackend, RawClient, Step};

const SCRIPT: &str = r#"
local function clean(s) return (string.gsub(tostring(s), "\n", "~")) end

-- edits the request in hand, reports what each method returned to the client
core.register_action("edit", { "tcp-req" }, function(txn)
  local r = txn.req
  local out = {}
  local function note(k, v) out[#out + 1] = k .. "=" .. clean(v) end
  note("set", r:set("HELLO", 0, 5))
  note("append", r:append("!"))
  note("prepend", r:prepend(">"))
  note("insert", r:insert("[x]", 6))
  note("remove", r:remove(-3, 1))
  note("io", r:input() .. "/" .. r:output())
  note("fwd", r:forward(2))
  note("io", r:input() .. "/" .. r:output())
  note("send", r:send("<S>"))
  note("io", r:input() .. "/" .. r:output())
  note("data", r:data())
  note("line", r:line(3))
  note("empty", r:set("", 0, 0))
  local ok, e = pcall(r.set, r, "x", 99)
  note("range", tostring(ok) .. ":" .. tostring(string.find(tostring(e), "offset out of range.", 1, true) ~= nil))
  ok, e = pcall(r.remove, r, 0, 99)
  note("len", tostring(ok) .. ":" .. tostring(string.find(tostring(e), "length out of range.", 1, true) ~= nil))
  ok, e = pcall(r.append, r)
  note("args", tostring(ok) .. ":" .. tostring(string.find(tostring(e), "'append' needs 2 arguments", 1, true) ~= nil))
  note("big", r:append(string.rep("z", 20000)))
  txn.res:send(table.concat(out, ";") .. "\n")
end)

-- waits for a whole line, then for 4 bytes past it, then takes the line away
core.register_action("wait", { "tcp-req" }, function(txn)
  local r = txn.req
  local l = r:line(0, -1)
  local d = r:data(0, #l + 4)
  local g = r:getline()
  txn.res:send("line=" .. clean(l) .. ";data=" .. clean(d) .. ";getline=" .. clean(g) .. ";in=" .. r:input() .. "\n")
end)

-- forwards 6 bytes, waiting for them to arrive, then upper-cases what follows
core.register_action("fwd", { "tcp-req" }, function(txn)
  local r = txn.req
  local n = r:forward(6)
  local rest = r:data(0, 3)
  r:set(string.upper(rest), 0, 3)
  txn.res:send("fwd=" .. n .. ";rest=" .. clean(rest) .. "\n")
end)

-- rewrites the server's first line
core.register_action("res", { "tcp-res" }, function(txn)
  local r = txn.res
  local l = r:line(0, -1)
  r:remove(0, #l)
  r:send("got:" .. string.lower(l))
  r:append("+")
  r:prepend("(" .. r:input() .. ")")
end)
"#;

/// Writes the script to a file of its own (the tests run at once).
fn script_file() -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("rampart-lua-channel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("script-{n}.lua"));
    std::fs::write(&path, SCRIPT).unwrap();
    path
}

/// A TCP proxy whose content rules run `rules`, to a server answering `reply` once
/// it received `until`.
fn start(binary: PathBuf, rules: &str, until: &str, reply: &str) -> (rampart_testkit::Running, RawBackend) {
    let server = RawBackend::start(vec![Step::expect_until(until), Step::send(reply)]);
    let cfg = format!(
        "global\n  nbthread 1\n  lua-load {}\n\
         defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
         listen fe1\n  bind fd@${{fe1}}\n{rules}\
         \x20 server s1 ${{s1_addr}}:${{s1_port}}\n",
        script_file().display()
    );
    let p = rampart_testkit::Proxy::new(binary)
        .listener("fe1")
        .backend("s1", server.addr())
        .config(&cfg)
        .start()
        .expect("the proxy starts");
    (p, server)
}

/// Sends `parts` 150 ms apart, then reads until `end`; returns what the client and the
/// server received.
fn exchange(p: &rampart_testkit::Running, server: &RawBackend, parts: &[&str], end: &str) -> (String, String) {
    let mut c = RawClient::connect(p.addr("fe1")).unwrap();
    c.set_read_timeout(Duration::from_secs(5)).unwrap();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(150));
        }
        c.send(part).unwrap();
    }
    let got = c.read_until(end).unwrap_or_default();
    let conns = server.wait_finished(1);
    (String::from_utf8_lossy(&got).into_owned(), conns.first().map(|c| c.received_str()).unwrap_or_default())
}

fn edit_run(binary: PathBuf) -> (String, String) {
    let rules = "  tcp-request inspect-delay 3s\n  tcp-request content lua.edit if { req.len ge 12 }\n";
    let (p, server) = start(binary, rules, "word\n", "pong\n");
    exchange(&p, &server, &["hello world\n"], "pong\n")
}

#[test]
fn a_tcp_action_rewrites_the_request() {
    let (client, server) = edit_run(PathBuf::from(RAMPART));
    assert_eq!(
        client,
        "set=5;append=1;prepend=1;insert=3;remove=1;io=16/0;fwd=2;io=14/2;send=3;io=14/5;data=HELL[x]O word~;\
         line=L[x]O word~;empty=0;range=false:true;len=false:true;args=false:true;big=-1\npong\n"
    );
    // (`append` copies in front of the input, as HAProxy 2.6 does)
    assert_eq!(server, ">!<S>HELL[x]O word\n");
}

#[test]
fn request_rewrites_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(edit_run(PathBuf::from(RAMPART)), edit_run(haproxy), "rampart (left) and haproxy (right)");
}

fn wait_run(binary: PathBuf) -> (String, String) {
    let rules = "  tcp-request inspect-delay 3s\n  tcp-request content lua.wait\n";
    let (p, server) = start(binary, rules, "g", "pong\n");
    exchange(&p, &server, &["ab", "c\nde", "fg"], "pong\n")
}

#[test]
fn channel_reads_wait_for_the_data_they_ask_for() {
    let (client, server) = wait_run(PathBuf::from(RAMPART));
    assert_eq!(client, "line=abc~;data=abc~defg;getline=abc~;in=4\npong\n");
    assert_eq!(server, "defg");
}

#[test]
fn waiting_reads_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(wait_run(PathBuf::from(RAMPART)), wait_run(haproxy), "rampart (left) and haproxy (right)");
}

fn forward_run(binary: PathBuf) -> (String, String) {
    let rules = "  tcp-request inspect-delay 3s\n  tcp-request content lua.fwd\n";
    let (p, server) = start(binary, rules, "XYZ", "pong\n");
    exchange(&p, &server, &["abc", "defxyz"], "pong\n")
}

#[test]
fn forward_waits_for_the_bytes_it_forwards() {
    let (client, server) = forward_run(PathBuf::from(RAMPART));
    assert_eq!(client, "fwd=6;rest=xyz\npong\n");
    assert_eq!(server, "abcdefXYZ");
}

#[test]
fn forwarding_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(forward_run(PathBuf::from(RAMPART)), forward_run(haproxy), "rampart (left) and haproxy (right)");
}

fn response_run(binary: PathBuf) -> (String, String) {
    let rules = "  tcp-response inspect-delay 3s\n  tcp-response content lua.res\n";
    let (p, server) = start(binary, rules, "\n", "HELLO\nrest");
    exchange(&p, &server, &["ping\n"], "rest")
}

#[test]
fn a_tcp_response_action_rewrites_the_response() {
    let (client, server) = response_run(PathBuf::from(RAMPART));
    // (`append` copies in front of the input, as HAProxy 2.6 does)
    assert_eq!(client, "got:hello\n(5)+rest");
    assert_eq!(server, "ping\n");
}

#[test]
fn response_rewrites_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(response_run(PathBuf::from(RAMPART)), response_run(haproxy), "rampart (left) and haproxy (right)");
}
