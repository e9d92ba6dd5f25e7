//! Servers that follow DNS, end to end against a real DNS server started by each test
//! (Debian's dnsmasq, `rampart_testkit::Dnsmasq`): a `server-template` filled from SRV
//! records growing and shrinking with traffic following, A and AAAA changes followed
//! within `hold valid`, a server whose name does not resolve starting in maintenance
//! (`init-addr none`) and leaving it once it resolves, DNS over TCP, `set server fqdn`,
//! `show resolvers`, `do-resolve`, the Lua HTTP client's resolver. (The answers a real
//! server never gives, spoiled on purpose, are `resolvers_diff`'s, on the testkit's
//! scripted server.)

mod dns_common;

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use dns_common::{dnsmasq, mute_nameserver, same_port_pair, state_rows, tiny_http, RAMPART};
use rampart_testkit::{eventually, http_get, HttpBackend, Proxy, Running};

const LOCAL: Ipv4Addr = Ipv4Addr::LOCALHOST;

/// `hold valid` of the tests' section: a change must be followed well within it.
const HOLD_VALID: Duration = Duration::from_secs(2);

/// The configuration head: an admin socket, a resolvers section asking `dns` often.
fn head(dns: SocketAddr, tcp: bool) -> String {
    let proto = if tcp { "tcp@" } else { "" };
    format!(
        "global\n stats socket ${{testdir}}/admin.sock level admin\n\
         defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n\
         resolvers dns\n nameserver ns1 {proto}{dns}\n timeout resolve 50ms\n timeout retry 200ms\n\
         hold valid {}ms\n hold nx 100ms\n hold obsolete 0s\n",
        HOLD_VALID.as_millis()
    )
}

fn start(config: &str) -> Running {
    Proxy::new(RAMPART).listener("fe1").config(config).start().expect("proxy starts")
}

/// The answer to `cmd`, without the empty line that ends every answer.
fn cli(proxy: &Running, cmd: &str) -> String {
    let out = dns_common::cli(proxy, cmd);
    out.strip_suffix('\n').map(str::to_owned).unwrap_or(out)
}

/// `(name, addr, admin state, port)` of each server of `show servers state`.
fn servers(proxy: &Running) -> Vec<(String, String, u32, u16)> {
    state_rows(proxy)
        .into_iter()
        .map(|f| (f[3].clone(), f[4].clone(), f[6].parse().unwrap_or(99), f[18].parse().unwrap_or(0)))
        .collect()
}

/// The bodies of `n` requests.
fn bodies(proxy: &Running, n: usize) -> Vec<String> {
    (0..n).map(|_| String::from_utf8_lossy(&http_get(proxy.addr("fe1"), "/").body).into_owned()).collect()
}

fn sorted_unique(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v.dedup();
    v
}

/// Waits until `cond`, and tells how long that took: less than `hold valid`, or fails.
fn within_hold_valid(what: &str, cond: impl Fn() -> bool) -> Duration {
    let t = Instant::now();
    while !cond() {
        assert!(t.elapsed() < HOLD_VALID, "{what}: not followed within hold valid ({HOLD_VALID:?})");
        std::thread::sleep(Duration::from_millis(5));
    }
    t.elapsed()
}

#[test]
fn server_template_follows_srv_records() {
    let Some(dns) = dnsmasq("server_template_follows_srv_records") else { return };
    let backends: Vec<HttpBackend> = (1..=5).map(|i| HttpBackend::start(&format!("b{i}"))).collect();
    let targets = ["a.test", "b.test", "c.test", "d.test", "e.test"];
    let record = |i: usize| (0u16, 10u16, backends[i].addr().port(), targets[i]);
    for t in targets {
        dns.set_a(t, &[LOCAL]);
    }
    let srv = "_http._tcp.web.test";
    dns.set_srv(srv, &[record(0), record(1)]);
    let proxy = start(&format!(
        "{}listen fe1\n bind fd@${{fe1}}\n balance roundrobin\n\
         server-template web 5 {srv} resolvers dns init-addr none\n",
        head(dns.addr(), false)
    ));
    // two slots filled (address from the additional records), three in maintenance
    // a slot a record filled has its name set at run time (HAProxy's 0x40, HMAINT)
    eventually!(servers(&proxy).iter().filter(|s| s.2 == 0x40).count() == 2, "{:?}", servers(&proxy));
    let st = servers(&proxy);
    assert_eq!(st.iter().map(|s| s.2).collect::<Vec<_>>(), [0x40, 0x40, 0x20, 0x20, 0x20], "{st:?}");
    // which slot takes which record follows the answer's order (dnsmasq's own)
    let mut held: Vec<(&str, u16)> = st[..2].iter().map(|s| (s.1.as_str(), s.3)).collect();
    held.sort();
    let mut want = [("127.0.0.1", backends[0].addr().port()), ("127.0.0.1", backends[1].addr().port())];
    want.sort();
    assert_eq!(held, want, "{st:?}");
    assert_eq!(sorted_unique(bodies(&proxy, 6)), ["b1", "b2"]);

    // grows to five: every slot serves
    dns.set_srv(srv, &(0..5).map(record).collect::<Vec<_>>());
    eventually!(servers(&proxy).iter().all(|s| s.2 == 0x40), "{:?}", servers(&proxy));
    assert_eq!(sorted_unique(bodies(&proxy, 10)), ["b1", "b2", "b3", "b4", "b5"]);

    // shrinks to one whose target is a CNAME of c.test: dnsmasq gives no additional
    // record for it, so the target is resolved on its own
    dns.set_cname("alias.test", "c.test");
    dns.set_srv(srv, &[(0, 10, backends[2].addr().port(), "alias.test")]);
    eventually!(servers(&proxy).iter().filter(|s| s.2 == 0x60).count() == 4, "{:?}", servers(&proxy));
    assert_eq!(sorted_unique(bodies(&proxy, 4)), ["b3"]);
    let out = proxy.output();
    assert!(out.contains("is going DOWN for maintenance (entry removed from SRV record)"), "{out}");
    let show = cli(&proxy, "show servers state fe1\n");
    assert!(show.contains(" alias.test ") && show.contains(" _http._tcp.web.test "), "{show}");
    let res = cli(&proxy, "show resolvers dns\n");
    assert!(!res.contains("  cname:       0\n"), "the CNAME was followed: {res}");
}

#[test]
fn address_change_is_followed_within_hold_valid() {
    let Some(dns) = dnsmasq("address_change_is_followed_within_hold_valid") else { return };
    let (a, b, port) = same_port_pair();
    tiny_http(a, "one");
    tiny_http(b, "two");
    dns.set_a("app.test", &[LOCAL]);
    let proxy = start(&format!(
        "{}listen fe1\n bind fd@${{fe1}}\n server app app.test:{port} resolvers dns resolve-prefer ipv4 init-addr none\n",
        head(dns.addr(), false)
    ));
    eventually!(bodies(&proxy, 1) == ["one"]);
    // served by the DNS server from here on
    dns.set_a("app.test", &[Ipv4Addr::new(127, 0, 0, 2)]);
    within_hold_valid("127.0.0.1 -> 127.0.0.2", || bodies(&proxy, 1) == ["two"]);
    let out = proxy.output();
    assert!(out.contains("fe1/app changed its IP from 127.0.0.1 to 127.0.0.2 by dns/ns1."), "{out}");
    let res = cli(&proxy, "show resolvers dns\n");
    assert!(res.starts_with("Resolvers section dns\n nameserver ns1:\n  sent:        "), "{res}");
    assert!(!res.contains("  valid:       0\n"), "{res}");
    assert_eq!(cli(&proxy, "show resolvers nope\n"), "Can't find that resolvers section\n");
}

/// Listeners on `[::1]` and 127.0.0.2 on one port, or `None` without IPv6 loopback.
fn v6_v4_pair() -> Option<(TcpListener, TcpListener, u16)> {
    for _ in 0..100 {
        let six = TcpListener::bind("[::1]:0").ok()?;
        let port = six.local_addr().expect("addr").port();
        if let Ok(four) = TcpListener::bind(SocketAddr::from(([127, 0, 0, 2], port))) {
            return Some((six, four, port));
        }
    }
    None
}

#[test]
fn aaaa_change_is_followed_within_hold_valid() {
    let Some(dns) = dnsmasq("aaaa_change_is_followed_within_hold_valid") else { return };
    let (six, four, port) = v6_v4_pair().expect("IPv6 loopback");
    tiny_http(six, "six");
    tiny_http(four, "four");
    dns.set_aaaa("v6.test", &[Ipv6Addr::LOCALHOST]);
    dns.set_a("v6.test", &[Ipv4Addr::new(127, 0, 0, 2)]);
    let proxy = start(&format!(
        "{}listen fe1\n bind fd@${{fe1}}\n server s1 v6.test:{port} resolvers dns resolve-prefer ipv6 init-addr none\n",
        head(dns.addr(), false)
    ));
    // both families: the preferred one
    eventually!(bodies(&proxy, 1) == ["six"]);
    assert_eq!(servers(&proxy)[0].1, "::1");
    // the AAAA record goes: the A record's address
    dns.set_aaaa("v6.test", &[]);
    within_hold_valid("::1 -> 127.0.0.2", || bodies(&proxy, 1) == ["four"]);
    // and comes back
    dns.set_aaaa("v6.test", &[Ipv6Addr::LOCALHOST]);
    within_hold_valid("127.0.0.2 -> ::1", || bodies(&proxy, 1) == ["six"]);
    let out = proxy.output();
    assert!(out.contains("fe1/s1 changed its IP from ::1 to 127.0.0.2 by dns/ns1."), "{out}");
}

#[test]
fn unresolved_server_starts_in_maintenance_until_it_resolves() {
    let Some(dns) = dnsmasq("unresolved_server_starts_in_maintenance_until_it_resolves") else { return };
    let s1 = HttpBackend::start("s1");
    // no record: NXDOMAIN
    let proxy = start(&format!(
        "{}listen fe1\n bind fd@${{fe1}}\n server s1 late.test:{} resolvers dns init-addr none\n",
        head(dns.addr(), false),
        s1.addr().port()
    ));
    let st = servers(&proxy);
    assert_eq!((st[0].1.as_str(), st[0].2), ("-", 0x20), "{st:?}");
    assert!(cli(&proxy, "show stat\n").contains(",MAINT (resolution),"));
    assert_eq!(http_get(proxy.addr("fe1"), "/").status, 503);
    eventually!(
        !cli(&proxy, "show resolvers dns\n").contains("  nx:          0\n") && dns.queries_for("late.test") > 0
    );
    dns.set_a("late.test", &[LOCAL]);
    eventually!(bodies(&proxy, 1) == ["s1"]);
    assert!(proxy.wait_output("Server fe1/s1 ('late.test') is UP/READY (resolves again).", rampart_testkit::patience()));
    // the name stops resolving: after `hold nx`, back to maintenance
    dns.remove("late.test");
    eventually!(servers(&proxy)[0].2 == 0x20);
    assert!(proxy.output().contains("Server fe1/s1 is going DOWN for maintenance (DNS NX status)."));
}

#[test]
fn dns_over_tcp_and_set_server_fqdn() {
    let Some(dns) = dnsmasq("dns_over_tcp_and_set_server_fqdn") else { return };
    let s1 = HttpBackend::start("s1");
    dns.set_a("first.test", &[LOCAL]);
    let proxy = start(&format!(
        "{}listen fe1\n bind fd@${{fe1}}\n server s1 first.test:{} resolvers dns init-addr none\n\
         server s2 127.0.0.1:1\n backend b\n server s 127.0.0.1:80\n",
        head(dns.addr(), true),
        s1.addr().port()
    ));
    eventually!(servers(&proxy)[0].2 == 0);
    assert_eq!(bodies(&proxy, 1), ["s1"]);
    assert!(dns.queries_for("first.test") > 0);
    assert_eq!(
        cli(&proxy, "set server b/s fqdn x.test\n"),
        "set server <b>/<s> fqdn failed because no resolution is configured.\n"
    );
    // second.test has no record: NXDOMAIN
    assert_eq!(
        cli(&proxy, "set server fe1/s1 fqdn second.test\n"),
        "fe1/s1 changed its FQDN from first.test to second.test by 'stats socket command'\n"
    );
    // in maintenance for want of an address, its name set at run time (0x20 | 0x40)
    eventually!(servers(&proxy)[0].2 == 0x60, "{:?}", servers(&proxy));
    let show = cli(&proxy, "show servers state fe1\n");
    assert!(show.contains(" second.test "), "{show}");
    assert_eq!(
        cli(&proxy, "set server fe1/s2 addr 127.0.0.3 port 81\n"),
        "IP changed from '127.0.0.1' to '127.0.0.3', port changed from '1' to '81' by 'stats socket command'\n"
    );
    let st = servers(&proxy);
    assert_eq!((st[1].1.as_str(), st[1].3), ("127.0.0.3", 81));
}

#[test]
fn do_resolve_fills_a_variable_without_blocking() {
    let Some(dns) = dnsmasq("do_resolve_fills_a_variable_without_blocking") else { return };
    dns.set_a("api.test", &[Ipv4Addr::new(10, 1, 2, 3)]);
    let mute = mute_nameserver();
    let proxy = start(&format!(
        "global\n nbthread 1\n{}resolvers mute\n nameserver m {}\n timeout retry 100ms\n resolve_retries 2\n\
         frontend fe1\n bind fd@${{fe1}}\n\
         http-request do-resolve(txn.ip,mute,ipv4) req.hdr(x-name) if {{ req.hdr(x-mute) -m found }}\n\
         http-request do-resolve(txn.ip,dns,ipv4) req.hdr(x-name) unless {{ req.hdr(x-mute) -m found }}\n\
         http-request return status 200 content-type text/plain lf-string \"ip=%[var(txn.ip)]\"\n",
        head(dns.addr(), false),
        mute.local_addr().expect("addr")
    ));
    let ask = |name: &str, extra: &str| {
        let mut c = rampart_testkit::RawClient::connect(proxy.addr("fe1")).expect("connect");
        c.send(format!("GET / HTTP/1.1\r\nhost: x\r\nx-name: {name}\r\n{extra}\r\n")).expect("send");
        String::from_utf8_lossy(&c.read_response().expect("response").body).into_owned()
    };
    assert_eq!(ask("api.test", ""), "ip=10.1.2.3");
    assert!(dns.queries_for("api.test") > 0);
    // no record: NXDOMAIN, nothing set
    assert_eq!(ask("gone.test", ""), "ip=");
    // a silent nameserver delays this stream only: another one is served meanwhile
    let slow = std::thread::spawn({
        let addr = proxy.addr("fe1");
        move || {
            let mut c = rampart_testkit::RawClient::connect(addr).expect("connect");
            c.send("GET / HTTP/1.1\r\nhost: x\r\nx-name: slow.test\r\nx-mute: 1\r\n\r\n").expect("send");
            String::from_utf8_lossy(&c.read_response().expect("response").body).into_owned()
        }
    });
    std::thread::sleep(Duration::from_millis(50));
    let t = Instant::now();
    assert_eq!(ask("api.test", ""), "ip=10.1.2.3");
    assert!(t.elapsed() < Duration::from_millis(150), "{:?}", t.elapsed());
    assert_eq!(slow.join().expect("slow client"), "ip=");
}

/// What `tcp-request content do-resolve` gives, on `binary`: for each name the backend
/// the resolved address chose (`good` when it is 10.1.2.3, else `bad`), with an inspect
/// delay (the answer is awaited), then without one (the rules run on final data: the
/// action cannot wait and sets nothing, as HAProxy's `ACT_OPT_FINAL`).
fn tcp_do_resolve_story(binary: &std::path::Path) -> Option<Vec<String>> {
    let dns = dnsmasq("tcp_content_do_resolve_waits_within_the_inspect_delay")?;
    dns.set_a("api.test", &[Ipv4Addr::new(10, 1, 2, 3)]);
    // gone.test, nowhere.test: no record, NXDOMAIN
    let (good, bad) = (HttpBackend::start("good"), HttpBackend::start("bad"));
    let cfg = format!(
        "{}frontend fe1\n mode tcp\n bind fd@${{fe1}}\n tcp-request inspect-delay 2s\n\
         tcp-request content do-resolve(sess.ip,dns,ipv4) req.payload(0,0),word(2,' '),regsub(^/,)\n\
         tcp-request content accept if {{ req.len gt 0 }}\n\
         use_backend good if {{ var(sess.ip) -m ip 10.1.2.3 }}\n default_backend bad\n\
         frontend fe2\n mode tcp\n bind fd@${{fe2}}\n\
         tcp-request content do-resolve(sess.ip,dns,ipv4) str(api.test)\n\
         use_backend good if {{ var(sess.ip) -m ip 10.1.2.3 }}\n default_backend bad\n\
         frontend fe3\n mode tcp\n bind fd@${{fe3}}\n tcp-request inspect-delay 2s\n\
         tcp-request content do-resolve(sess.ip,dns,ipv4) str(api.test)\n\
         use_backend good if {{ var(sess.ip) -m ip 10.1.2.3 }}\n default_backend bad\n\
         backend good\n mode tcp\n server s {}\nbackend bad\n mode tcp\n server s {}\n",
        head(dns.addr(), false).replace(" mode http\n", " mode tcp\n"),
        good.addr(),
        bad.addr()
    );
    let proxy =
        Proxy::new(binary).listener("fe1").listener("fe2").listener("fe3").config(&cfg).start().expect("proxy starts");
    let ask = |fe: &str, name: &str| {
        let mut c = rampart_testkit::RawClient::connect(proxy.addr(fe)).expect("connect");
        c.send(format!("GET /{name} HTTP/1.1\r\nhost: x\r\n\r\n")).expect("send");
        let body = c.read_response().map(|r| String::from_utf8_lossy(&r.body).into_owned());
        format!("{fe} {name} => {}", body.unwrap_or_else(|e| format!("{:?}", e.kind())))
    };
    Some(vec![
        ask("fe1", "api.test"),
        ask("fe1", "gone.test"),
        ask("fe1", "nowhere.test"),
        ask("fe2", "api.test"),
        ask("fe3", "api.test"),
    ])
}

#[test]
fn tcp_content_do_resolve_waits_within_the_inspect_delay() {
    let Some(story) = tcp_do_resolve_story(std::path::Path::new(RAMPART)) else { return };
    assert_eq!(
        story,
        [
            "fe1 api.test => good",
            "fe1 gone.test => bad",
            "fe1 nowhere.test => bad",
            "fe2 api.test => bad",
            "fe3 api.test => good"
        ]
    );
    // haproxy 2.6.12 answers the name read from the payload (fe1) now good, now bad
    // from one run to the next: only the fixed names are compared
    if let Some(haproxy) = rampart_testkit::haproxy_or_skip("tcp_content_do_resolve_waits_within_the_inspect_delay") {
        assert_eq!(story[3..], tcp_do_resolve_story(&haproxy).expect("dnsmasq")[3..]);
    }
}

#[test]
fn do_resolve_is_refused_in_connection_and_session_rules_as_haproxy() {
    let cfg = |set: &str, res: &str| {
        format!(
            "resolvers dns\n nameserver a 127.0.0.1:53\ndefaults\n mode tcp\n timeout client 1s\n\
             timeout server 1s\n timeout connect 1s\nfrontend f\n bind 127.0.0.1:1\n\
             tcp-request {set} do-resolve(sess.ip,{res},ipv4) str(a.test)\n"
        )
    };
    let alerts = |binary: &std::path::Path, c: &str| {
        let out = rampart_testkit::check(binary, c);
        let text = format!("{}{}", out.stdout, out.stderr);
        let lines: Vec<String> = text
            .lines()
            .filter(|l| l.contains("ALERT") && !l.contains("Error(s) found") && !l.contains("Fatal errors"))
            .map(|l| l.rsplit(" : ").next().unwrap_or(l).to_owned())
            .collect();
        (out.code != 0, lines)
    };
    let cases = [cfg("connection", "dns"), cfg("session", "dns"), cfg("content", "nope")];
    let ours: Vec<_> = cases.iter().map(|c| alerts(std::path::Path::new(RAMPART), c)).collect();
    assert!(ours[0].1[0].starts_with("'tcp-request connection' expects 'accept', 'reject'"), "{ours:?}");
    assert!(ours[0].1[0].ends_with("(got 'do-resolve(sess.ip,dns,ipv4)')."), "{ours:?}");
    assert_eq!(ours[2].1, ["Proxy 'f': Can't find resolvers section 'nope' for do-resolve action."]);
    assert!(ours.iter().all(|o| o.0), "{ours:?}");
    let ok = alerts(std::path::Path::new(RAMPART), &cfg("content", "dns"));
    assert_eq!(ok, (false, vec![]));
    if let Some(haproxy) = rampart_testkit::haproxy_or_skip("do_resolve_is_refused_in_connection_and_session_rules") {
        let theirs: Vec<_> = cases.iter().map(|c| alerts(&haproxy, c)).collect();
        assert_eq!(ours, theirs);
    }
}

/// A Lua service asking `http://<x-name>:<x-port>/x` with `core.httpclient()`.
const HC_SCRIPT: &str = r#"
core.register_service("hc", "http", function(applet)
  local url = "http://" .. applet.headers["x-name"][0] .. ":" .. applet.headers["x-port"][0] .. "/x"
  local r = core.httpclient():get{ url = url, timeout = 2000 }
  local body = tostring(r.status) .. " " .. tostring(r.body)
  applet:set_status(200)
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end)
"#;

/// What the HTTP client gets for `api.test` (resolved by the test's DNS server to
/// 127.0.0.1 only: the system's resolver knows nothing of it), on `binary`.
fn httpclient_story(binary: &std::path::Path) -> Option<(String, bool)> {
    let dns = dnsmasq("the_lua_httpclient_resolves_through_its_resolvers_section")?;
    dns.set_a("api.test", &[LOCAL]);
    let api = HttpBackend::start("api");
    let dir = std::env::temp_dir().join(format!("rampart-resolvers-hc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let script = dir.join("hc.lua");
    std::fs::write(&script, HC_SCRIPT).expect("script");
    let cfg = head(dns.addr(), false).replace(
        "global\n",
        &format!(
            "global\n lua-load {}\n httpclient.resolvers.id dns\n httpclient.resolvers.prefer ipv4\n",
            script.display()
        ),
    );
    let cfg = format!("{cfg}frontend fe1\n bind fd@${{fe1}}\n http-request use-service lua.hc\n");
    let proxy = Proxy::new(binary).listener("fe1").config(&cfg).start().expect("proxy starts");
    let before = dns.queries_for("api.test");
    let mut c = rampart_testkit::RawClient::connect(proxy.addr("fe1")).expect("connect");
    c.send(format!("GET / HTTP/1.1\r\nhost: x\r\nx-name: api.test\r\nx-port: {}\r\n\r\n", api.addr().port()))
        .expect("send");
    let body = String::from_utf8_lossy(&c.read_response().expect("response").body).into_owned();
    Some((body, dns.queries_for("api.test") > before))
}

#[test]
fn the_lua_httpclient_resolves_through_its_resolvers_section() {
    let Some(ours) = httpclient_story(std::path::Path::new(RAMPART)) else { return };
    assert_eq!(ours, ("200 api".to_owned(), true));
    if let Some(haproxy) = rampart_testkit::haproxy_or_skip("the_lua_httpclient_resolves_through_its_resolvers_section")
    {
        assert_eq!(ours, httpclient_story(&haproxy).expect("dnsmasq"));
    }
}

#[test]
fn httpclient_resolvers_settings_are_checked_as_haproxy() {
    let alerts = |binary: &std::path::Path, global: &str| {
        let cfg = format!(
            "global\n{global}\nresolvers dns\n nameserver a 127.0.0.1:53\ndefaults\n mode http\n timeout client 1s\n\
             timeout server 1s\n timeout connect 1s\nlisten f\n bind 127.0.0.1:1\n server s 127.0.0.1:1\n"
        );
        let out = rampart_testkit::check(binary, &cfg);
        let text = format!("{}{}", out.stdout, out.stderr);
        let lines: Vec<String> = text
            .lines()
            .filter(|l| l.contains("ALERT") && !l.contains("Error(s) found") && !l.contains("Fatal errors"))
            .filter(|l| !l.ends_with(": (null)"))
            .map(|l| l.rsplit(" : ").next().unwrap_or(l).to_owned())
            .collect();
        (out.code != 0, lines)
    };
    let cases = [
        " httpclient.resolvers.id nope",
        " httpclient.resolvers.id a b",
        " httpclient.resolvers.prefer ipv5",
        " httpclient.resolvers.id dns\n httpclient.resolvers.prefer ipv6",
    ];
    let ours: Vec<_> = cases.iter().map(|g| alerts(std::path::Path::new(RAMPART), g)).collect();
    assert_eq!(
        ours,
        [
            (true, vec!["Proxy '<HTTPCLIENT>': Can't find resolvers section 'nope' for do-resolve action.".to_owned()]),
            (true, vec!["'httpclient.resolvers.id' cannot handle unexpected argument 'b'.".to_owned()]),
            (true, vec!["'httpclient.resolvers.prefer' expects 'ipv4' or 'ipv6' as argument.".to_owned()]),
            (false, vec![]),
        ]
    );
    if let Some(haproxy) = rampart_testkit::haproxy_or_skip("httpclient_resolvers_settings_are_checked_as_haproxy") {
        let theirs: Vec<_> = cases.iter().map(|g| alerts(&haproxy, g)).collect();
        assert_eq!(ours, theirs);
    }
}
