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
         frontend ctl\n  mode http\n  bind fd@${{ctl}}\n\
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
