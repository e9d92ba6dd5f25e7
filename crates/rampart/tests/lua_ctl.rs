//! Lua scripts controlling the process through the binary: `Proxy:pause()`,
//! `resume()`, `stop()` on a frontend's listeners, `Server:shut_sess()` and
//! `Proxy:shut_bcksess()` cutting the connections in use, and the message a script
//! catches with `pcall`/`xpcall` from a native function. A control service answers
//! each call; the tests read what clients of the controlled proxies get. The
//! `*_same_as_haproxy` tests run the same script and steps through haproxy 2.6.

mod http_common;

use std::path::PathBuf;
use std::time::Duration;

use http_common::RAMPART;
use rampart_testkit::{RawBackend, RawClient, Running, Step, TcpEchoBackend};

const SCRIPT: &str = r#"
local function answer(applet, body)
  applet:set_status(200)
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end

-- /<proxy>/<method>: calls the method on the proxy
core.register_service("px", "http", function(applet)
  local parts = core.tokenize(applet.path, "/", true)
  local px = core.proxies[parts[1]]
  px[parts[2]](px)
  answer(applet, parts[2] .. "\n")
end)

-- /cut/<backend>/<server>: cuts the server's connections
core.register_service("cut", "http", function(applet)
  local parts = core.tokenize(applet.path, "/", true)
  core.backends[parts[2]].servers[parts[3]]:shut_sess()
  answer(applet, "cut\n")
end)

-- what the StickTable class gives of the table the ctl frontend tracks clients in
core.register_service("stk", "http", function(applet)
  local t = core.backends["st"].stktable
  local out = {}
  local i = t:info()
  out[#out + 1] = "info=" .. i.type .. "," .. i.length .. "," .. i.size .. "," .. i.used .. ","
    .. tostring(i.nopurge) .. "," .. i.expire
  local d = {}
  for k, v in pairs(i.data) do d[#d + 1] = k .. ":" .. v end
  table.sort(d)
  out[#out + 1] = "data=" .. table.concat(d, ",")
  local function row(e)
    local f = {}
    for k, v in pairs(e) do if k ~= "expire" then f[#f + 1] = k .. ":" .. tostring(v) end end
    table.sort(f)
    return table.concat(f, ",")
  end
  local e = t:lookup("127.0.0.1")
  out[#out + 1] = "lookup=" .. row(e) .. ";exp=" .. tostring(e.expire > 0 and e.expire <= 60000)
  out[#out + 1] = "missing=" .. tostring(t:lookup("10.9.9.9")) .. "," .. tostring(t:lookup("not an ip"))
  local filters = { "none", { { "gpc0", "gt", 1 } }, { { "gpc0", "gt", 5 } }, { { "nope", "eq", 1 } },
                    { { "gpc0", "xx", 1 } }, { 1 }, "bad" }
  for _, f in ipairs(filters) do
    local r, err
    if f == "none" then r, err = t:dump() else r, err = t:dump(f) end
    local keys = {}
    for k, v in pairs(r or {}) do keys[#keys + 1] = k .. "{" .. row(v) .. "}" end
    table.sort(keys)
    out[#out + 1] = "dump=" .. table.concat(keys, ";") .. "|" .. tostring(err)
  end
  out[#out + 1] = "none=" .. tostring(core.proxies["ctl"].stktable)
  answer(applet, table.concat(out, "\n") .. "\n")
end)

-- what pcall and xpcall give of errors raised by native functions
core.register_service("errors", "http", function(applet)
  local out = {}
  local function note(ok, e)
    out[#out + 1] = tostring(ok) .. "|" .. type(e) .. "|" .. (type(e) == "table" and "{}" or tostring(e))
  end
  note(pcall(core.set_map, "/no/such/map", "k", "v"))
  note(pcall(core.del_acl, "/no/such/acl", "k"))
  note(pcall(core.tokenize, "a,b", ","))
  note(xpcall(core.add_acl, function(e) return "handled:" .. tostring(e) end, "/no/such/acl", "k"))
  note(pcall(error, "plain"))
  note(pcall(error, { 1 }))
  answer(applet, table.concat(out, "\n") .. "\n")
end)
"#;

fn script_file() -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("rampart-lua-ctl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("script-{n}.lua"));
    std::fs::write(&path, SCRIPT).unwrap();
    path
}

/// A control frontend (`ctl`) and the TCP proxies `proxies` (configuration text).
fn start(binary: PathBuf, proxies: &str, backends: &[(&str, std::net::SocketAddr)], listeners: &[&str]) -> Running {
    let cfg = format!(
        "global\n  nbthread 1\n  lua-load {}\n\
         defaults\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
         backend st\n  stick-table type ip size 100 expire 60s store gpc0,conn_cnt,http_req_rate(10s)\n\
         frontend ctl\n  mode http\n  bind fd@${{ctl}}\n\
         \x20 http-request track-sc0 src table st if {{ path /hit }}\n\
         \x20 http-request sc-inc-gpc0(0) if {{ path /hit }}\n\
         \x20 http-request return status 200 if {{ path /hit }}\n\
         \x20 http-request use-service lua.stk if {{ path /stk }}\n\
         \x20 http-request use-service lua.errors if {{ path /errors }}\n\
         \x20 http-request use-service lua.cut if {{ path_beg /cut/ }}\n\
         \x20 http-request use-service lua.px\n\
         {proxies}",
        script_file().display()
    );
    let mut p = rampart_testkit::Proxy::new(binary).listener("ctl");
    for l in listeners {
        p = p.listener(l);
    }
    for (name, addr) in backends {
        p = p.backend(name, *addr);
    }
    p.config(&cfg).start().expect("the proxy starts")
}

fn ctl(p: &Running, path: &str) -> String {
    let mut c = RawClient::connect(p.addr("ctl")).unwrap();
    c.set_read_timeout(Duration::from_secs(5)).unwrap();
    c.send(format!("GET {path} HTTP/1.1\r\nHost: h\r\n\r\n")).unwrap();
    let r = c.read_response().unwrap();
    assert_eq!(r.status, 200, "{path}: {}\n{}", r.body_str(), p.output());
    r.body_str()
}

/// Sends `line` on a new connection to `l`, returns what came back within `wait`
/// (`refused` when the connection is).
fn try_echo(p: &Running, l: &str, line: &str, wait: Duration) -> (Option<RawClient>, String) {
    let Ok(mut c) = RawClient::connect(p.addr(l)) else { return (None, "refused".to_owned()) };
    c.set_read_timeout(wait).unwrap();
    let _ = c.send(line);
    let got = c.read_until("\n").map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    (Some(c), got)
}

fn pause_run(binary: PathBuf) -> Vec<String> {
    let echo = TcpEchoBackend::start();
    let proxies = "listen fe2\n  mode tcp\n  bind fd@${fe2}\n  server s1 ${s1_addr}:${s1_port}\n";
    let p = start(binary, proxies, &[("s1", echo.addr())], &["fe2"]);
    let short = Duration::from_millis(700);
    let mut seen = Vec::new();
    seen.push(try_echo(&p, "fe2", "a\n", short).1);
    seen.push(ctl(&p, "/fe2/pause"));
    // the socket is adopted (`fd@`): paused, it is no longer served, the connection
    // waits in its backlog until the frontend resumes
    let (waiting, got) = try_echo(&p, "fe2", "b\n", short);
    seen.push(format!("paused:{got}"));
    seen.push(ctl(&p, "/fe2/resume"));
    let mut waiting = waiting.expect("the paused frontend's socket takes connections in its backlog");
    waiting.set_read_timeout(Duration::from_secs(5)).unwrap();
    seen.push(format!("resumed:{}", String::from_utf8_lossy(&waiting.read_until("\n").unwrap_or_default())));
    seen.push(try_echo(&p, "fe2", "c\n", short).1);
    seen.push(ctl(&p, "/fe2/stop"));
    // (the listening socket closes once the accept loop sees the change)
    std::thread::sleep(Duration::from_millis(300));
    seen.push(format!("stopped:{}", try_echo(&p, "fe2", "d\n", short).1));
    seen.push(ctl(&p, "/fe2/resume"));
    seen.push(format!("after:{}", try_echo(&p, "fe2", "e\n", short).1));
    seen
}

#[test]
fn a_script_pauses_resumes_and_stops_a_frontend() {
    let seen = pause_run(PathBuf::from(RAMPART));
    assert_eq!(
        seen,
        [
            "a\n",
            "pause\n",
            "paused:",
            "resume\n",
            "resumed:b\n",
            "c\n",
            "stop\n",
            "stopped:refused",
            "resume\n",
            "after:refused"
        ]
    );
}

#[test]
fn pause_resume_and_stop_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(pause_run(PathBuf::from(RAMPART)), pause_run(haproxy), "rampart (left) and haproxy (right)");
}

/// Whether the connection `c` is closed within 3 s.
fn closed(c: &mut RawClient) -> bool {
    c.is_closed_within(Duration::from_secs(3))
}

fn cut_run(binary: PathBuf) -> Vec<String> {
    let server = RawBackend::start(vec![Step::expect_until("\n"), Step::send("hi\n"), Step::ReadToEnd]);
    let proxies = "listen fe2\n  mode tcp\n  bind fd@${fe2}\n  server s1 ${s1_addr}:${s1_port}\n\
                   listen fe3\n  mode tcp\n  bind fd@${fe3}\n  server act 127.0.0.1:9 disabled\n\
                   \x20 server bck ${s1_addr}:${s1_port} backup\n";
    let p = start(binary, proxies, &[("s1", server.addr())], &["fe2", "fe3"]);
    let mut seen = Vec::new();
    // (rampart keeps a server's connections from a script's first cut on: this one
    // finds none)
    seen.push(ctl(&p, "/cut/fe2/s1"));
    let (a, got) = try_echo(&p, "fe2", "x\n", Duration::from_secs(5));
    seen.push(got);
    let (b, got) = try_echo(&p, "fe3", "y\n", Duration::from_secs(5));
    seen.push(got);
    let (mut a, mut b) = (a.expect("fe2 accepts"), b.expect("fe3 accepts"));
    seen.push(ctl(&p, "/cut/fe2/s1"));
    seen.push(format!("fe2 closed: {}", closed(&mut a)));
    seen.push(format!("fe3 closed: {}", closed(&mut b)));
    seen.push(ctl(&p, "/fe3/shut_bcksess"));
    seen.push(format!("fe3 closed: {}", closed(&mut b)));
    seen
}

#[test]
fn scripts_cut_the_connections_of_a_server_and_of_backup_servers() {
    let seen = cut_run(PathBuf::from(RAMPART));
    assert_eq!(
        seen,
        [
            "cut\n",
            "hi\n",
            "hi\n",
            "cut\n",
            "fe2 closed: true",
            "fe3 closed: false",
            "shut_bcksess\n",
            "fe3 closed: true"
        ]
    );
}

#[test]
fn cuts_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(cut_run(PathBuf::from(RAMPART)), cut_run(haproxy), "rampart (left) and haproxy (right)");
}

fn errors_run(binary: PathBuf) -> String {
    let p = start(binary, "", &[], &[]);
    ctl(&p, "/errors")
}

#[test]
fn pcall_gives_the_message_of_a_native_error() {
    assert_eq!(
        errors_run(PathBuf::from(RAMPART)),
        "false|string|'set_map': unknown map file '/no/such/map'\n\
         false|string|'del_acl': unknown acl file '/no/such/acl'\n\
         true|table|{}\n\
         false|string|handled:'add_acl': unknown acl file '/no/such/acl'\n\
         false|string|plain\n\
         false|table|{}\n"
    );
}

#[test]
fn caught_errors_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(errors_run(PathBuf::from(RAMPART)), errors_run(haproxy), "rampart (left) and haproxy (right)");
}

fn stk_run(binary: PathBuf) -> String {
    let p = start(binary, "", &[], &[]);
    ctl(&p, "/hit");
    ctl(&p, "/hit");
    ctl(&p, "/stk")
}

#[test]
fn scripts_read_a_stick_table() {
    assert_eq!(
        stk_run(PathBuf::from(RAMPART)),
        "info=ip,4,100,1,false,60000\n\
         data=conn_cnt:-1,gpc0:-1,http_req_rate:10000\n\
         lookup=conn_cnt:2,gpc0:2,http_req_rate:2,use:0;exp=true\n\
         missing=nil,nil\n\
         dump=127.0.0.1{conn_cnt:2,gpc0:2,http_req_rate:2}|nil\n\
         dump=127.0.0.1{conn_cnt:2,gpc0:2,http_req_rate:2}|nil\n\
         dump=|nil\n\
         dump=|Filter table data column not present in stick table (entry #1)\n\
         dump=|Unknown operator in filter table (entry #1)\n\
         dump=|Filter table entry must be a triplet: {\"data_col\", \"op\", val} (entry #1)\n\
         dump=|filter table expected\n\
         none=nil\n"
    );
}

#[test]
fn stick_tables_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(stk_run(PathBuf::from(RAMPART)), stk_run(haproxy), "rampart (left) and haproxy (right)");
}
