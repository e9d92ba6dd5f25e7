//! Lua's Proxy, Server and Listener classes (`core.proxies`, `core.frontends`,
//! `core.backends`), `core.parse_addr`/`match_addr`/`tokenize`, and the TXN methods
//! `set_tos`, `set_mark`, `set_priority_*` and `txn.http:*_rep_*`, through the binary:
//! a script's services print what the API gives and change servers, the test reads
//! the answers and what the servers received; `*_same_as_haproxy` runs the same
//! script through haproxy 2.6 and compares.

mod http_common;

use std::path::PathBuf;
use std::time::Duration;

use http_common::RAMPART;
use rampart_testkit::{HttpBackend, RawClient, Running};

const SCRIPT: &str = r##"
local function sorted_keys(t)
  local k = {}
  for n in pairs(t) do k[#k + 1] = n end
  table.sort(k)
  return table.concat(k, ",")
end

local function answer(applet, lines)
  local body = table.concat(lines, "\n") .. "\n"
  applet:set_status(200)
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end

local STAT_KEYS = { "pxname", "svname", "status", "weight", "act", "bck", "type", "iid", "sid", "mode" }
-- (haproxy's frontend and listener rows carry over weight, act and bck from the
-- previous get_stats() call: they are left out)
local FE_KEYS = { "pxname", "svname", "status", "type", "iid", "sid", "mode" }

local function stats(out, label, st, keys)
  for _, k in ipairs(keys or STAT_KEYS) do
    if st[k] ~= nil then out[#out + 1] = label .. "." .. k .. "=" .. tostring(st[k]) end
  end
end

core.register_service("info", "http", function(applet)
  local out = {}
  out[#out + 1] = "proxies=" .. sorted_keys(core.proxies)
  out[#out + 1] = "frontends=" .. sorted_keys(core.frontends)
  out[#out + 1] = "backends=" .. sorted_keys(core.backends)
  for _, n in ipairs({ "fe1", "be1", "lst" }) do
    local px = core.proxies[n]
    out[#out + 1] = n .. "=" .. px.name .. "," .. px.uuid .. "," .. px:get_cap() .. "," .. px:get_mode()
      .. ",servers:" .. sorted_keys(px.servers) .. ",listeners:" .. sorted_keys(px.listeners)
  end
  local be = core.backends["be1"]
  for _, n in ipairs({ "s1", "s2", "s3" }) do
    local s = be.servers[n]
    out[#out + 1] = n .. "=" .. s.name .. "," .. s.puid .. "," .. s:get_addr() .. ",w" .. s:get_weight()
      .. ",m" .. s:get_maxconn() .. ",d" .. tostring(s:is_draining())
    stats(out, n, s:get_stats())
  end
  stats(out, "be1", be:get_stats())
  stats(out, "fe1", core.frontends["fe1"]:get_stats(), FE_KEYS)
  stats(out, "main", core.frontends["fe1"].listeners["main"]:get_stats(), FE_KEYS)
  answer(applet, out)
end)

-- /act/<server>/<method>[/<arg>[/<arg>]]: runs the method, prints what it returned
core.register_service("act", "http", function(applet)
  local parts = core.tokenize(applet.path, "/", true)
  local s = core.backends["be1"].servers[parts[2]]
  local r = s[parts[3]](s, table.unpack(parts, 4))
  answer(applet, { parts[3] .. "=" .. tostring(r) })
end)

core.register_service("addr", "http", function(applet)
  local out = {}
  local a = core.parse_addr("192.168.0.0/16")
  local tests = { "192.168.1.7", "192.169.1.7", "10.0.0.1/255.0.0.0", "::1", "2001:db8::1/32", "x.y", "1.2.3.4/33" }
  for _, t in ipairs(tests) do
    local b = core.parse_addr(t)
    out[#out + 1] = t .. "=" .. tostring(b ~= nil) .. "," .. tostring(core.match_addr(a, b))
  end
  out[#out + 1] = "v6=" .. tostring(core.match_addr(core.parse_addr("2001:db8::/32"), core.parse_addr("2001:db8::1")))
  out[#out + 1] = "nil=" .. tostring(core.match_addr(a, nil))
  for _, t in ipairs({ { "a,b;;c", ",;" }, { "a,b;;c", ",;", true }, { "", "," }, { ",x,", "," }, { "abc", "" },
                       { ",x,", ",", false } }) do
    local toks = core.tokenize(table.unpack(t))
    out[#out + 1] = "tok[" .. t[1] .. "|" .. t[2] .. "|" .. tostring(t[3]) .. "]=" .. table.concat(toks, "|") .. "#" .. #toks
  end
  out[#out + 1] = "tok.nil=" .. tostring(pcall(core.tokenize, "a", ",", nil))
  answer(applet, out)
end)

core.register_action("rewrite", { "http-req" }, function(txn)
  txn.http:req_rep_header("x-a", "^(.*)-old$", "\\1-new")
  txn.http:req_rep_value("x-b", "^v([0-9])$", "w\\1")
  txn:set_tos(8)
  txn:set_priority_class(5)
  txn:set_priority_offset(100)
end)

core.register_action("res_rewrite", { "http-res" }, function(txn)
  txn.http:res_rep_header("x-served", "^(.*)$", "<\\1>")
  txn.http:res_rep_value("x-list", "^b$", "B")
end)
"##;

/// The configuration, the same for both binaries.
fn config(script: &std::path::Path) -> String {
    format!(
        "global\n  nbthread 1\n  lua-load {}\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
         frontend fe1\n  bind fd@${{fe1}} name main\n  option socket-stats\n\
         \x20 http-request use-service lua.info if {{ path /info }}\n\
         \x20 http-request use-service lua.addr if {{ path /addr }}\n\
         \x20 http-request use-service lua.act if {{ path_beg /act/ }}\n\
         \x20 http-request set-var(txn.rw) int(1) if {{ path /rw }}\n\
         \x20 http-request lua.rewrite if {{ var(txn.rw) -m found }}\n\
         \x20 http-response set-header x-list \"a, b ,c\" if {{ var(txn.rw) -m found }}\n\
         \x20 http-response set-header x-served yes if {{ var(txn.rw) -m found }}\n\
         \x20 http-response lua.res_rewrite if {{ var(txn.rw) -m found }}\n\
         \x20 default_backend be1\n\
         backend be1\n  balance roundrobin\n\
         \x20 server s1 ${{s1_addr}}:${{s1_port}}\n\
         \x20 server s2 ${{s2_addr}}:${{s2_port}} weight 3 maxconn 10 check inter 1h\n\
         \x20 server s3 ${{s3_addr}}:${{s3_port}} backup\n\
         listen lst\n  mode tcp\n  bind fd@${{lst}}\n  server t1 ${{s1_addr}}:${{s1_port}}\n",
        script.display()
    )
}

/// Writes `code` to a file of its own (the tests run at once: never one rewritten
/// while another proxy reads it).
fn script_file(code: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("rampart-lua-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("script-{n}.lua"));
    std::fs::write(&path, code).unwrap();
    path
}

fn script() -> PathBuf {
    script_file(SCRIPT)
}

struct Setup {
    p: Running,
    servers: [HttpBackend; 3],
}

fn start(binary: PathBuf) -> Setup {
    let servers = [HttpBackend::start("s1"), HttpBackend::start("s2"), HttpBackend::start("s3")];
    let p = rampart_testkit::Proxy::new(binary)
        .listener("fe1")
        .listener("lst")
        .backend("s1", servers[0].addr())
        .backend("s2", servers[1].addr())
        .backend("s3", servers[2].addr())
        .config(&config(&script()))
        .start()
        .expect("the proxy starts");
    Setup { p, servers }
}

fn get(s: &Setup, path: &str, headers: &str) -> (u16, String, Vec<(String, String)>) {
    let mut c = RawClient::connect(s.p.addr("fe1")).unwrap();
    c.set_read_timeout(Duration::from_secs(5)).unwrap();
    c.send(format!("GET {path} HTTP/1.1\r\nHost: h\r\n{headers}\r\n")).unwrap();
    let r = c.read_response().unwrap();
    let hdrs = r.headers.0.iter().map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned())).collect();
    (r.status, r.body_str(), hdrs)
}

/// The body with the servers' ports written `PORTn` (they differ between runs).
fn body(s: &Setup, path: &str) -> String {
    let (status, mut b, _) = get(s, path, "");
    assert_eq!(status, 200, "{path}: {b}\n{}", s.p.output());
    for (i, srv) in s.servers.iter().enumerate() {
        b = b.replace(&srv.addr().port().to_string(), &format!("PORT{}", i + 1));
    }
    b
}

fn lines(b: &str) -> Vec<String> {
    b.lines().map(str::to_owned).collect()
}

/// Reads the tables, then changes servers through the methods and reads them again.
fn proxy_run(binary: PathBuf) -> Vec<String> {
    let s = start(binary);
    let mut seen = lines(&body(&s, "/info"));
    for act in [
        "/act/s1/set_weight/5",
        "/act/s1/set_weight/300",
        "/act/s1/set_weight/x",
        "/act/s1/get_weight",
        "/act/s2/set_maxconn/7",
        "/act/s2/set_maxconn/7x",
        "/act/s2/get_maxconn",
        "/act/s1/set_drain",
        "/act/s1/is_draining",
        "/act/s2/check_force_down",
        "/act/s3/set_maint",
        "/act/s2/check_force_nolb",
    ] {
        seen.extend(lines(&body(&s, act)));
    }
    let after: Vec<_> = lines(&body(&s, "/info")).into_iter().filter(|l| l.contains(".status=")).collect();
    seen.extend(after);
    for act in [
        "/act/s1/set_ready",
        "/act/s2/check_force_up",
        "/act/s3/set_ready",
        "/act/s2/check_disable",
        "/act/s2/check_enable",
        "/act/s1/set_addr/127.0.0.1/1",
        "/act/s1/get_addr",
        "/act/s1/set_addr/999.1.1.1",
        "/act/s1/shut_sess",
    ] {
        seen.extend(lines(&body(&s, act)));
    }
    let after: Vec<_> = lines(&body(&s, "/info")).into_iter().filter(|l| l.contains(".status=")).collect();
    seen.extend(after);
    seen
}

#[test]
fn scripts_read_proxies_servers_and_listeners_and_change_servers() {
    let seen = proxy_run(PathBuf::from(RAMPART));
    let has = |l: &str| seen.iter().any(|s| s == l);
    for l in [
        "proxies=be1,fe1,lst",
        "frontends=fe1,lst",
        "backends=be1,lst",
        "be1=be1,2,backend,http,servers:s1,s2,s3,listeners:",
        "fe1=fe1,1,frontend,http,servers:,listeners:main",
        "lst=lst,3,proxy,tcp,servers:t1,listeners:sock-1",
        "s1=s1,1,127.0.0.1:PORT1,w1,m0,d0",
        "s2=s2,2,127.0.0.1:PORT2,w3,m10,d0",
        "s1.svname=s1",
        "s1.status=no check",
        "s2.weight=3",
        "s3.bck=1",
        "be1.weight=4",
        "be1.act=2",
        "main.type=3",
        "be1.svname=BACKEND",
        "fe1.svname=FRONTEND",
        "main.svname=main",
        "set_weight=nil",
        "set_weight=Absolute weight can only be between 0 and 256 inclusive.",
        "set_weight=Empty weight string empty or preceded by garbage",
        "get_weight=5",
        "set_maxconn=nil",
        "set_maxconn=Trailing garbage in maxconn string",
        "get_maxconn=7",
        "is_draining=1",
        "s1.status=DRAIN",
        "s2.status=NOLB",
        "s3.status=MAINT",
        "set_addr=no need to change the addr, port changed from 'PORT1' to '1' by 'Lua script'",
        "get_addr=127.0.0.1:1",
        "set_addr=Invalid addr '999.1.1.1' by 'Lua script'",
    ] {
        assert!(has(l), "missing {l:?} in:\n{}", seen.join("\n"));
    }
    // after set_ready / check_force_up: back to UP
    let last: Vec<_> = seen.iter().rev().take(6).map(String::as_str).collect();
    for l in ["s1.status=no check", "s2.status=UP", "s3.status=no check", "be1.status=UP"] {
        assert!(last.contains(&l), "{l}: {last:?}");
    }
}

#[test]
fn proxies_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(proxy_run(PathBuf::from(RAMPART)), proxy_run(haproxy), "rampart (left) and haproxy (right)");
}

#[test]
fn a_server_a_script_puts_in_maintenance_gets_no_traffic() {
    let s = start(PathBuf::from(RAMPART));
    assert_eq!(body(&s, "/act/s1/set_maint"), "set_maint=nil\n");
    assert_eq!(body(&s, "/act/s2/set_drain"), "set_drain=nil\n");
    for _ in 0..4 {
        let (status, b, _) = get(&s, "/x", "");
        // s1 in maintenance, s2 draining: the backup serves
        assert_eq!((status, b.as_str()), (200, "s3"));
    }
    assert_eq!(body(&s, "/act/s2/set_ready"), "set_ready=nil\n");
    let (_, b, _) = get(&s, "/x", "");
    assert_eq!(b, "s2");
    assert_eq!(s.servers[0].requests().len(), 0);
}

fn addr_run(binary: PathBuf) -> String {
    let s = start(binary);
    body(&s, "/addr")
}

#[test]
fn addresses_match_and_strings_split_as_haproxy_does() {
    let b = addr_run(PathBuf::from(RAMPART));
    for l in [
        "192.168.1.7=true,true",
        "192.169.1.7=true,false",
        "10.0.0.1/255.0.0.0=true,false",
        "::1=true,false",
        "x.y=false,false",
        "1.2.3.4/33=false,false",
        "v6=true",
        "nil=false",
        "tok[a,b;;c|,;|nil]=a|b||c#4",
        "tok[a,b;;c|,;|true]=a|b|c#3",
        "tok[|,|nil]=#1",
        "tok[,x,|,|nil]=|x|#3",
        "tok[abc||nil]=abc#1",
        "tok[,x,|,|false]=|x|#3",
        "tok.nil=false",
    ] {
        assert!(b.lines().any(|x| x == l), "missing {l:?} in:\n{b}");
    }
}

#[test]
fn addresses_and_tokens_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(addr_run(PathBuf::from(RAMPART)), addr_run(haproxy), "rampart (left) and haproxy (right)");
}

/// What the server saw of the rewritten request headers and what the client saw of
/// the rewritten response headers.
fn rewrite_run(binary: PathBuf) -> (Vec<Option<String>>, Vec<Option<String>>, bool) {
    let s = start(binary);
    let (status, _, hdrs) = get(&s, "/rw", "X-A: keep-old\r\nX-A: other\r\nX-B: v1, x, v2\r\n");
    assert_eq!(status, 200, "{}", s.p.output());
    let req = s.servers.iter().flat_map(|b| b.requests()).next().expect("a server got the request");
    let seen_req = vec![Some(req.headers.get_all("x-a").join("|")), Some(req.headers.get_all("x-b").join("|"))];
    let h = |n: &str| hdrs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    // set_tos, set_priority_*: no error (their effect is not visible to the client)
    std::thread::sleep(Duration::from_millis(200));
    let failed = s.p.output().contains("Lua function");
    (seen_req, vec![h("x-served"), h("x-list")], failed)
}

#[test]
fn rep_header_and_rep_value_rewrite_both_messages() {
    let (req, res, failed) = rewrite_run(PathBuf::from(RAMPART));
    assert!(!failed, "a Lua call failed");
    assert_eq!(req, vec![Some("keep-new|other".to_owned()), Some("w1, x,w2".to_owned())]);
    assert_eq!(res, vec![Some("<yes>".to_owned()), Some("a,B,c".to_owned())]);
}

#[test]
fn rewrites_are_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(rewrite_run(PathBuf::from(RAMPART)), rewrite_run(haproxy), "rampart (left) and haproxy (right)");
}

// === txn.req / txn.res in TCP content actions ===

const CHANNEL_SCRIPT: &str = r#"
core.register_action("peek", { "tcp-req" }, function(txn)
  local r = txn.req
  local parts = {
    "dup=" .. r:dup(), "data=" .. r:data(2, 3), "tail=" .. r:data(-5), "line=" .. r:line(),
    "line2=" .. r:line(6), "in=" .. r:input(), "out=" .. r:output(), "resp=" .. tostring(r:is_resp()),
    "recv=" .. tostring(r:may_recv()), "full=" .. tostring(r:is_full()),
    "res.resp=" .. tostring(txn.res:is_resp()), "res.in=" .. txn.res:input(),
  }
  local ok, e = pcall(r.data, r, 99)
  parts[#parts + 1] = "range=" .. tostring(ok) .. ":" .. tostring(string.find(tostring(e), "offset out of range.", 1, true) ~= nil)
  txn:set_var("txn.peek", (string.gsub(table.concat(parts, ";"), "\n", "~")))
  txn:set_tos(16)
  txn:set_mark(1)
end)

core.register_service("report", "tcp", function(applet)
  applet:send(applet:get_var("txn.peek") .. "\n")
end)
"#;

fn channel_run(binary: PathBuf) -> String {
    let path = script_file(CHANNEL_SCRIPT);
    let cfg = format!(
        "global\n  nbthread 1\n  lua-load {}\n\
         defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
         listen fe1\n  bind fd@${{fe1}}\n  tcp-request inspect-delay 3s\n\
         \x20 tcp-request content lua.peek if {{ req.len ge 11 }}\n\
         \x20 tcp-request content use-service lua.report if {{ var(txn.peek) -m found }}\n",
        path.display()
    );
    let p = rampart_testkit::Proxy::new(binary).listener("fe1").config(&cfg).start().expect("the proxy starts");
    let mut c = RawClient::connect(p.addr("fe1")).unwrap();
    c.set_read_timeout(Duration::from_secs(5)).unwrap();
    c.send("hello\nworld").unwrap();
    let line = c.read_until("\n").unwrap();
    String::from_utf8_lossy(&line).into_owned()
}

#[test]
fn a_tcp_action_reads_the_request_channel() {
    let seen = channel_run(PathBuf::from(RAMPART));
    assert_eq!(
        seen,
        "dup=hello~world;data=llo;tail=world;line=hello~;line2=world;in=11;out=0;resp=false;recv=true;\
         full=false;res.resp=true;res.in=0;range=false:true\n"
    );
}

#[test]
fn the_request_channel_is_the_same_as_haproxy() {
    let haproxy = rampart_testkit::require_haproxy!();
    assert_eq!(channel_run(PathBuf::from(RAMPART)), channel_run(haproxy), "rampart (left) and haproxy (right)");
}
