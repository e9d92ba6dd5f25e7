//! The resolvers against HAProxy 2.6 with the same DNS answers: one `resolvers` section
//! per kind of answer (valid, CNAME, NXDOMAIN, REFUSED, SERVFAIL, no record, truncated,
//! another question, another id, oversized, silence), then the nameservers' counters
//! (`show stat domain resolvers`, `show resolvers`) and which servers are up with which
//! addresses (`show servers state`), including a `server-template` filled from SRV
//! records; the `addr` column of `show stat` and `show servers state` of template slots
//! filled, free, and freed when their record leaves; an address change followed.
//! The kinds of answer are the testkit's scripted server's (`rampart_testkit::DnsServer`):
//! a real DNS server does not spoil its answers on purpose (another id or question,
//! truncated, oversized) nor stays silent for one name only. The other stories run
//! against Debian's dnsmasq (`rampart_testkit::Dnsmasq`).

mod dns_common;

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

use dns_common::{cli, dnsmasq, same_port_pair, tiny_http, RAMPART};
use rampart_testkit::{haproxy_or_skip, DnsFlaw, DnsServer, HttpBackend, Proxy, Running};

/// The kinds of answer, each asked by its own section (`r_<kind>`) for `<kind>.test`.
const KINDS: [&str; 12] = [
    "valid",
    "cname",
    "cnamenone",
    "nx",
    "refused",
    "servfail",
    "empty",
    "tc",
    "wrongname",
    "wrongid",
    "big",
    "silent",
];

/// Kinds answered at once: every counter is compared. The others end in timeouts, whose
/// retries are timed differently: only which counters move is compared.
const PROMPT: [&str; 9] = ["valid", "cname", "cnamenone", "nx", "refused", "servfail", "empty", "tc", "wrongname"];

/// Counters HAProxy 2.6 declares but never increments; rampart counts them (COMPAT).
const NEVER_IN_26: [&str; 2] = ["cname", "timeout"];

fn zone(dns: &DnsServer, srv_ports: [u16; 2]) {
    let local = Ipv4Addr::LOCALHOST;
    for kind in KINDS {
        dns.set_a(&format!("{kind}.test"), &[local]);
    }
    dns.set_a("cname.test", &[]);
    dns.set_cname("cname.test", "valid.test");
    dns.set_a("cnamenone.test", &[]);
    dns.set_cname("cnamenone.test", "nothing.test");
    dns.set_nx("nx.test", true);
    dns.set_rcode("refused.test", Some(5));
    dns.set_rcode("servfail.test", Some(2));
    dns.set_a("empty.test", &[]);
    dns.set_flaw("tc.test", Some(DnsFlaw::Truncated));
    dns.set_flaw("wrongname.test", Some(DnsFlaw::WrongName));
    dns.set_flaw("wrongid.test", Some(DnsFlaw::WrongId));
    dns.set_flaw("big.test", Some(DnsFlaw::Oversized));
    dns.set_silent("silent.test", true);
    dns.set_a("a.test", &[Ipv4Addr::new(127, 0, 0, 1)]);
    dns.set_a("b.test", &[Ipv4Addr::new(127, 0, 0, 2)]);
    dns.set_srv("_http._tcp.web.test", &[(0, 10, srv_ports[0], "a.test"), (0, 300, srv_ports[1], "b.test")], true);
}

fn config(dns: &DnsServer) -> String {
    let mut cfg = String::from(
        "global\n stats socket ${testdir}/admin.sock level admin\n\
         defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n",
    );
    let section = |name: &str| {
        format!(
            "resolvers {name}\n nameserver ns1 {}\n timeout resolve 30s\n timeout retry 300ms\n\
             resolve_retries 2\n hold valid 30s\n hold nx 30s\n hold other 30s\n hold refused 30s\n\
             hold timeout 30s\n hold obsolete 30s\n",
            dns.addr()
        )
    };
    for kind in KINDS {
        cfg.push_str(&section(&format!("r_{kind}")));
    }
    cfg.push_str(&section("r_srv"));
    cfg.push_str("listen fe1\n bind fd@${fe1}\n");
    for kind in KINDS {
        cfg.push_str(&format!(" server {kind} {kind}.test:80 resolvers r_{kind} init-addr none\n"));
    }
    cfg.push_str("backend tpl\n server-template web 3 _http._tcp.web.test resolvers r_srv init-addr none\n");
    cfg
}

/// What one binary shows once the answers are in.
struct Seen {
    /// Section -> counter -> value, from `show stat domain resolvers`.
    counters: BTreeMap<String, BTreeMap<String, u64>>,
    /// `(backend, server, address, op state, admin state, port)` per server, the
    /// template's slots sorted (which slot takes which record is not compared).
    servers: Vec<(String, String, String, String, String, String)>,
    /// `show resolvers r_valid`, `show stat domain resolvers` of a section's header line.
    show_valid: String,
    csv_header: String,
    /// The first lines of the typed and JSON forms (values and all).
    typed_valid: String,
    json_head: String,
}

fn observe(binary: PathBuf) -> Seen {
    let dns = DnsServer::start();
    let (b1, b2) = (HttpBackend::start("b1"), HttpBackend::start("b2"));
    zone(&dns, [b1.addr().port(), b2.addr().port()]);
    let proxy = Proxy::new(binary).listener("fe1").config(&config(&dns)).start().expect("proxy starts");
    // every answer (and the silent ones' retries) in
    std::thread::sleep(Duration::from_millis(2500));
    let csv = cli(&proxy, "show stat domain resolvers\n");
    let mut lines = csv.lines();
    let csv_header = lines.next().unwrap_or_default().to_owned();
    let names: Vec<&str> = csv_header.trim_start_matches("# ").split(',').collect();
    let mut counters = BTreeMap::new();
    for line in lines.filter(|l| l.contains(",r_")) {
        let cells: Vec<&str> = line.split(',').collect();
        let row = names.iter().zip(&cells).skip(2).filter(|(n, _)| !n.is_empty());
        counters.insert(cells[1].to_owned(), row.map(|(n, v)| ((*n).to_owned(), v.parse().unwrap_or(0))).collect());
    }
    let state = cli(&proxy, "show servers state\n");
    let mut servers: Vec<_> = state
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains(' '))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let name = if f[3].starts_with("web") { "web".to_owned() } else { f[3].to_owned() };
            // the backends' ports differ between the runs: named
            let port = match f[18].parse::<u16>() {
                Ok(p) if p == b1.addr().port() => "b1".to_owned(),
                Ok(p) if p == b2.addr().port() => "b2".to_owned(),
                _ => f[18].to_owned(),
            };
            (f[1].to_owned(), name, f[4].to_owned(), f[5].to_owned(), f[6].to_owned(), port)
        })
        .collect();
    servers.sort();
    let typed = cli(&proxy, "show stat domain resolvers typed desc\n");
    let valid_at = typed.find("N.1.pid:CGP:str:r_valid").expect("r_valid in typed");
    let start = typed[..valid_at].rfind("N.0.id").unwrap_or(0);
    let typed_valid = typed[start..].lines().take(17).collect::<Vec<_>>().join("\n");
    let json = cli(&proxy, "show stat domain resolvers json\n");
    Seen {
        counters,
        servers,
        show_valid: cli(&proxy, "show resolvers r_valid\n"),
        csv_header,
        typed_valid,
        json_head: json.chars().take(600).collect(),
    }
}

#[test]
fn resolver_counters_and_servers_as_haproxy() {
    let Some(haproxy) = haproxy_or_skip("resolver_counters_and_servers_as_haproxy") else { return };
    let ours = observe(RAMPART.into());
    let theirs = observe(haproxy);
    assert_eq!(ours.csv_header, theirs.csv_header);
    assert_eq!(ours.show_valid, theirs.show_valid);
    assert_eq!(ours.typed_valid, theirs.typed_valid);
    assert_eq!(ours.json_head, theirs.json_head);
    assert_eq!(ours.servers, theirs.servers);
    let mut differ = Vec::new();
    for kind in KINDS {
        let section = format!("r_{kind}");
        let (o, t) = (&ours.counters[&section], &theirs.counters[&section]);
        for (name, &theirs_v) in t {
            let ours_v = o[name];
            let same = if NEVER_IN_26.contains(&name.as_str()) {
                theirs_v == 0
            } else if PROMPT.contains(&kind) {
                ours_v == theirs_v
            } else {
                (ours_v > 0) == (theirs_v > 0)
            };
            if !same {
                differ.push(format!("{section} {name}: ours {ours_v}, haproxy {theirs_v}"));
            }
        }
    }
    assert!(differ.is_empty(), "{differ:#?}");
    // what rampart counts beyond 2.6
    assert_eq!(ours.counters["r_cname"]["cname"], 1, "{:?}", ours.counters["r_cname"]);
    assert!(ours.counters["r_silent"]["timeout"] > 0, "{:?}", ours.counters["r_silent"]);
}

#[test]
fn stats_domain_refusals_as_haproxy() {
    let Some(haproxy) = haproxy_or_skip("stats_domain_refusals_as_haproxy") else { return };
    let Some(dns) = dnsmasq("stats_domain_refusals_as_haproxy") else { return };
    let answers = |binary: PathBuf| {
        let cfg = format!(
            "global\n stats socket ${{testdir}}/admin.sock level admin\n\
             resolvers r1\n nameserver a {}\n nameserver b tcp@{}\n\
             defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n\
             listen fe1\n bind fd@${{fe1}}\n server s1 127.0.0.1:1\n",
            dns.addr(),
            dns.addr()
        );
        let proxy = Proxy::new(binary).listener("fe1").config(&cfg).start().expect("proxy starts");
        ["show stat domain\n", "show stat domain dns\n", "show stat domain resolvers\n"].map(|c| {
            cli(&proxy, c).lines().filter(|l| !l.contains(",default,") && !l.is_empty()).collect::<Vec<_>>().join("\n")
        })
    };
    let ours = answers(RAMPART.into());
    assert_eq!(ours[0], "Invalid statistics domain.");
    assert!(ours[2].contains("\na,r1,0,0,"), "{}", ours[2]);
    assert_eq!(ours, answers(haproxy));
}

/// `(name, status, addr)` of the servers of `show stat` in backend `be`, and
/// `(name, addr, admin state, port)` of `show servers state be`, the template's slots
/// sorted by what they hold (which slot takes which record is not compared); the
/// backends' ports named after them.
type Slots = (Vec<(String, String, String)>, Vec<(String, String, String, String)>);

fn slots(proxy: &Running, be: &str, ports: &[(u16, &str)]) -> Slots {
    let name = |p: &str| {
        let port = p.parse::<u16>().ok();
        ports.iter().find(|(n, _)| Some(*n) == port).map_or(p.to_owned(), |(_, s)| (*s).to_owned())
    };
    let slot = |s: &str| if s.starts_with("web") { "web".to_owned() } else { s.to_owned() };
    let csv = cli(proxy, "show stat\n");
    let mut stat: Vec<_> = csv
        .lines()
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|c| c.len() > 73 && c[0] == be && c[1] != "FRONTEND" && c[1] != "BACKEND")
        .map(|c| {
            let addr = c[73].rsplit_once(':').map_or(c[73].to_owned(), |(ip, p)| format!("{ip}:{}", name(p)));
            (slot(c[1]), c[17].to_owned(), addr)
        })
        .collect();
    stat.sort();
    let mut state: Vec<_> = cli(proxy, &format!("show servers state {be}\n"))
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains(' '))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (slot(f[3]), f[4].to_owned(), f[6].to_owned(), name(f[18]))
        })
        .collect();
    state.sort();
    (stat, state)
}

/// A three-slot template filled by two SRV records, then by one (the other's slot
/// freed after `hold obsolete`), beside a server whose name never resolves.
fn template_story(binary: PathBuf) -> Option<(Slots, Slots)> {
    let dns = dnsmasq("free_template_slots_show_no_address_as_haproxy")?;
    let (b1, b2) = (HttpBackend::start("b1"), HttpBackend::start("b2"));
    let ports = [(b1.addr().port(), "b1"), (b2.addr().port(), "b2")];
    dns.set_a("a.test", &[Ipv4Addr::new(127, 0, 0, 1)]);
    dns.set_a("b.test", &[Ipv4Addr::new(127, 0, 0, 2)]);
    // nx.test: no record, NXDOMAIN
    let srv = "_http._tcp.web.test";
    dns.set_srv(srv, &[(0, 10, ports[0].0, "a.test"), (0, 10, ports[1].0, "b.test")]);
    let cfg = format!(
        "global\n stats socket ${{testdir}}/admin.sock level admin\n\
         resolvers r1\n nameserver ns1 {}\n timeout resolve 200ms\n timeout retry 200ms\n\
         hold valid 1s\n hold nx 1s\n hold obsolete 1s\n\
         defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n\
         listen fe1\n bind fd@${{fe1}}\n\
         server-template web 3 {srv} resolvers r1 init-addr none\n\
         server never nx.test:8080 resolvers r1 init-addr none\n",
        dns.addr()
    );
    let proxy = Proxy::new(binary).listener("fe1").config(&cfg).start().expect("proxy starts");
    std::thread::sleep(Duration::from_millis(1500));
    let two = slots(&proxy, "fe1", &ports);
    dns.set_srv(srv, &[(0, 10, ports[0].0, "a.test")]);
    // past `hold obsolete` and a few resolutions
    std::thread::sleep(Duration::from_millis(3000));
    Some((two, slots(&proxy, "fe1", &ports)))
}

#[test]
fn free_template_slots_show_no_address_as_haproxy() {
    let Some(haproxy) = haproxy_or_skip("free_template_slots_show_no_address_as_haproxy") else { return };
    let Some(ours) = template_story(RAMPART.into()) else { return };
    // the test means something: two slots held, one free; then one held
    let addrs = |s: &Slots| s.0.iter().map(|r| r.2.clone()).collect::<Vec<_>>();
    assert_eq!(addrs(&ours.0), ["", "", "127.0.0.1:b1", "127.0.0.2:b2"], "{ours:#?}");
    assert_eq!(addrs(&ours.1), ["", "", "", "127.0.0.1:b1"], "{ours:#?}");
    let theirs = template_story(haproxy).expect("dnsmasq");
    assert_eq!(ours, theirs);
}

/// What a client gets before and after `app.test` moves from 127.0.0.1 to 127.0.0.2,
/// with `hold valid` far longer than the test waits: each waited for (`eventually!`).
fn change_story(binary: PathBuf) -> Option<Vec<String>> {
    let dns = dnsmasq("servers_are_resolved_every_timeout_resolve_not_every_hold_valid_as_haproxy")?;
    let (a, b, port) = same_port_pair();
    tiny_http(a, "one");
    tiny_http(b, "two");
    dns.set_a("app.test", &[Ipv4Addr::LOCALHOST]);
    let cfg = format!(
        "resolvers r1\n nameserver ns1 {}\n timeout resolve 100ms\n timeout retry 100ms\n hold valid 60s\n\
         defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n\
         listen fe1\n bind fd@${{fe1}}\n server app app.test:{port} resolvers r1 resolve-prefer ipv4 init-addr none\n",
        dns.addr()
    );
    let proxy = Proxy::new(binary).listener("fe1").config(&cfg).start().expect("proxy starts");
    let body = || String::from_utf8_lossy(&rampart_testkit::http_get(proxy.addr("fe1"), "/").body).into_owned();
    rampart_testkit::eventually!(body() == "one");
    dns.set_a("app.test", &[Ipv4Addr::new(127, 0, 0, 2)]);
    // within the test's patience (5 s), far less than `hold valid`
    rampart_testkit::eventually!(body() == "two");
    Some(vec![body()])
}

#[test]
fn servers_are_resolved_every_timeout_resolve_not_every_hold_valid_as_haproxy() {
    let Some(ours) = change_story(RAMPART.into()) else { return };
    assert_eq!(ours, ["two"]);
    let Some(haproxy) = haproxy_or_skip("servers_are_resolved_every_timeout_resolve_not_every_hold_valid_as_haproxy")
    else {
        return;
    };
    assert_eq!(change_story(haproxy).expect("dnsmasq"), ["two"]);
}
