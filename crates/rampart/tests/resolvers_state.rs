//! Servers that follow DNS, against Debian's dnsmasq started by each story
//! (`rampart_testkit::Dnsmasq`) and side by side with haproxy 2.6 (each binary runs the
//! same story; the stories are compared):
//! `server-state-file` bringing back the record targets, ports and addresses of a
//! `server-template` filled from SRV records while the nameserver is silent; a server
//! preferring IPv6 reached over `::1` from an AAAA record; `do-resolve` reusing, within
//! `hold valid`, the answer a server following the same name got (no query sent), while
//! a name no server follows is asked each time, as HAProxy does.

mod dns_common;

use std::net::{Ipv4Addr, Ipv6Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dns_common::{cli, dnsmasq, state_rows, tiny_http, RAMPART};
use rampart_testkit::{eventually, http_get, Dnsmasq, Proxy, RawClient};

/// (srv_fqdn, srv_port, srv_addr, op_state, admin_state) of each row, sorted: what
/// a slot holds, whichever slot holds it.
fn holdings(rows: &[Vec<String>]) -> Vec<(String, String, String, String, String)> {
    let mut v: Vec<_> =
        rows.iter().map(|f| (f[17].clone(), f[18].clone(), f[4].clone(), f[5].clone(), f[6].clone())).collect();
    v.sort();
    v
}

/// The binaries a story runs on: rampart, and haproxy when installed (or required).
fn binaries(test: &str) -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from(RAMPART)];
    out.extend(rampart_testkit::haproxy_or_skip(test));
    out
}

fn scratch(name: &str, binary: &Path) -> PathBuf {
    let tag = binary.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    std::env::temp_dir().join(format!("{name}-{}-{tag}", std::process::id()))
}

// === server-state-file and SRV slots ===

/// What one binary showed: the slots as saved, as restored with the nameserver silent,
/// the servers that answered then, and the slots once the nameserver answers again.
#[derive(Debug)]
struct SrvStory {
    saved: Vec<Vec<String>>,
    restored: Vec<Vec<String>>,
    answered: Vec<String>,
    after_dns: Vec<Vec<String>>,
}

fn srv_story(binary: &Path, dns: &Dnsmasq) -> SrvStory {
    // two servers on two addresses (`prevent-dup-ip` is the default)
    let (s1, s2) = (TcpListener::bind("127.0.0.1:0").expect("bind"), TcpListener::bind("127.0.0.2:0").expect("bind"));
    let (p1, p2) = (s1.local_addr().expect("addr").port(), s2.local_addr().expect("addr").port());
    tiny_http(s1, "s1");
    tiny_http(s2, "s2");
    let srv = "_http._tcp.web.test";
    dns.set_a("a.web.test", &[Ipv4Addr::LOCALHOST]);
    dns.set_a("b.web.test", &[Ipv4Addr::new(127, 0, 0, 2)]);
    dns.set_srv(srv, &[(0, 10, p1, "a.web.test"), (0, 10, p2, "b.web.test")]);
    let file = scratch("srv-state", binary);
    let _ = std::fs::remove_file(&file);
    let cfg = format!(
        "global\n stats socket ${{testdir}}/admin.sock level admin\n server-state-file {}\n\
         resolvers dns\n nameserver ns1 {}\n timeout resolve 100ms\n timeout retry 100ms\n hold valid 200ms\n\
         defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n\
         load-server-state-from-file global\n\
         frontend fe1\n bind fd@${{fe1}}\n default_backend be\n\
         backend be\n server-template web 3 {srv} resolvers dns resolve-prefer ipv4 init-addr last,none\n",
        file.display(),
        dns.addr()
    );
    let start = || Proxy::new(binary).listener("fe1").config(&cfg).start().expect("starts");
    // the first run resolves the records and saves its state, as before a reload
    let saved = {
        let p = start();
        eventually!(state_rows(&p).iter().filter(|f| f[17] != "-").count() == 2, "{:?}", state_rows(&p));
        let text = cli(&p, "show servers state\n");
        std::fs::write(&file, text.trim_end_matches('\n').to_owned() + "\n").expect("state file");
        state_rows(&p)
    };
    // the second starts with the nameserver silent
    dns.pause();
    let p = start();
    let restored = state_rows(&p);
    let mut answered: Vec<String> =
        (0..6).map(|_| String::from_utf8_lossy(&http_get(p.addr("fe1"), "/").body).into_owned()).collect();
    answered.sort();
    answered.dedup();
    // then it answers again: the slots keep their targets
    let asked = dns.queries_for(srv);
    dns.resume();
    eventually!(dns.queries_for(srv) >= asked + 3);
    std::thread::sleep(Duration::from_millis(300));
    let after_dns = state_rows(&p);
    let _ = std::fs::remove_file(&file);
    SrvStory { saved, restored, answered, after_dns }
}

#[test]
fn server_template_slots_come_back_from_the_state_file_as_haproxy() {
    let test = "server_template_slots_come_back_from_the_state_file_as_haproxy";
    let Some(dns) = dnsmasq(test) else { return };
    let stories: Vec<SrvStory> = binaries(test).iter().map(|b| srv_story(b, &dns)).collect();
    for st in &stories {
        // each slot holding a target comes back with it, its port and its address, up,
        // though the nameserver is silent; the empty slot stays in maintenance
        let held = |rows: &[Vec<String>]| -> Vec<(String, String, String)> {
            holdings(rows).into_iter().map(|(f, p, a, _, _)| (f, p, a)).collect()
        };
        assert_eq!(held(&st.restored), held(&st.saved), "{st:#?}");
        let by_slot = |rows: &[Vec<String>]| -> Vec<(String, String)> {
            rows.iter().map(|f| (f[3].clone(), f[17].clone())).collect()
        };
        assert_eq!(by_slot(&st.restored), by_slot(&st.saved), "{st:#?}");
        assert_eq!(by_slot(&st.after_dns), by_slot(&st.saved), "the slots keep their targets: {st:#?}");
        assert_eq!(st.answered, ["s1", "s2"], "{st:#?}");
        let h = holdings(&st.restored);
        assert_eq!(h.iter().filter(|r| r.3 == "2" && r.4 == "0").count(), 2, "{h:?}");
        assert!(h.iter().any(|r| r.0 == "-" && r.2 == "-" && r.4 == "32"), "{h:?}");
    }
    if let [r, h] = &stories[..] {
        // each run had its own servers: their ports differ
        let portless = |rows: &[Vec<String>]| -> Vec<(String, String, String, String)> {
            holdings(rows).into_iter().map(|(f, _, a, o, ad)| (f, a, o, ad)).collect()
        };
        assert_eq!(portless(&r.restored), portless(&h.restored), "rampart then haproxy");
        assert_eq!(portless(&r.after_dns), portless(&h.after_dns), "rampart then haproxy");
    }
}

// === AAAA ===

/// The body a client got and the server's address, once the server resolved.
fn aaaa_story(binary: &Path, dns: &Dnsmasq) -> (String, String) {
    let six = TcpListener::bind("[::1]:0").expect("IPv6 loopback");
    let port = six.local_addr().expect("addr").port();
    tiny_http(six, "over ::1");
    // both families: the preferred one is taken
    dns.set_aaaa("v6.test", &[Ipv6Addr::LOCALHOST]);
    dns.set_a("v6.test", &[Ipv4Addr::new(127, 0, 0, 2)]);
    let cfg = format!(
        "global\n stats socket ${{testdir}}/admin.sock level admin\n\
         resolvers dns\n nameserver ns1 {}\n timeout resolve 100ms\n timeout retry 100ms\n hold valid 200ms\n\
         defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n\
         listen fe1\n bind fd@${{fe1}}\n server s1 v6.test:{port} resolvers dns resolve-prefer ipv6 init-addr none\n",
        dns.addr()
    );
    let p = Proxy::new(binary).listener("fe1").config(&cfg).start().expect("starts");
    eventually!(state_rows(&p)[0][6] == "0", "{:?}", state_rows(&p));
    let body = String::from_utf8_lossy(&http_get(p.addr("fe1"), "/").body).into_owned();
    (body, state_rows(&p)[0][4].clone())
}

#[test]
fn a_server_preferring_ipv6_is_reached_over_its_aaaa_record() {
    let test = "a_server_preferring_ipv6_is_reached_over_its_aaaa_record";
    let Some(dns) = dnsmasq(test) else { return };
    let stories: Vec<_> = binaries(test).iter().map(|b| aaaa_story(b, &dns)).collect();
    assert_eq!(stories[0], ("over ::1".to_owned(), "::1".to_owned()));
    if let [r, h] = &stories[..] {
        assert_eq!(r, h, "rampart then haproxy");
    }
}

// === do-resolve and the answers servers keep ===

/// For `a.test` (a server follows it) and `b.test` (none does): the addresses two
/// requests each got, and the queries each name cost during them.
fn do_resolve_story(binary: &Path, dns: &Dnsmasq) -> (Vec<String>, usize, usize) {
    dns.set_a("a.test", &[Ipv4Addr::new(10, 0, 0, 1)]);
    dns.set_a("b.test", &[Ipv4Addr::new(10, 0, 0, 2)]);
    let cfg = format!(
        "global\n stats socket ${{testdir}}/admin.sock level admin\n\
         resolvers dns\n nameserver ns1 {}\n timeout resolve 30s\n timeout retry 200ms\n hold valid 30s\n\
         defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n\
         frontend fe1\n bind fd@${{fe1}}\n\
         http-request do-resolve(txn.ip,dns,ipv4) req.hdr(x-name)\n\
         http-request return status 200 content-type text/plain lf-string \"ip=%[var(txn.ip)]\"\n\
         backend be\n server s1 a.test:80 resolvers dns resolve-prefer ipv4 init-addr none\n",
        dns.addr()
    );
    let p = Proxy::new(binary).listener("fe1").config(&cfg).start().expect("starts");
    // the server's own resolution
    eventually!(state_rows(&p)[0][4] == "10.0.0.1", "{:?}", state_rows(&p));
    let ask = |name: &str| {
        let mut c = RawClient::connect(p.addr("fe1")).expect("connects");
        c.send(format!("GET / HTTP/1.1\r\nhost: x\r\nx-name: {name}\r\n\r\n")).expect("sends");
        String::from_utf8_lossy(&c.read_response().expect("response").body).into_owned()
    };
    let t = Instant::now();
    let (a0, b0) = (dns.queries_for("a.test"), dns.queries_for("b.test"));
    let ips = vec![ask("a.test"), ask("a.test"), ask("b.test"), ask("b.test")];
    let (a, b) = (dns.queries_for("a.test") - a0, dns.queries_for("b.test") - b0);
    assert!(t.elapsed() < Duration::from_secs(20), "well within `hold valid` and `timeout resolve`");
    (ips, a, b)
}

#[test]
fn do_resolve_reuses_the_answer_a_server_keeps_as_haproxy() {
    let test = "do_resolve_reuses_the_answer_a_server_keeps_as_haproxy";
    let Some(dns) = dnsmasq(test) else { return };
    let stories: Vec<_> = binaries(test).iter().map(|b| do_resolve_story(b, &dns)).collect();
    let ips: Vec<String> = ["10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.2"].iter().map(|i| format!("ip={i}")).collect();
    // a.test: answered from the server's resolution, no query; b.test: asked each time
    assert_eq!(stories[0], (ips, 0, 2));
    if let [r, h] = &stories[..] {
        assert_eq!(r, h, "rampart then haproxy");
    }
}
