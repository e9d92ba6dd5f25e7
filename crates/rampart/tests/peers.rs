//! The peers protocol through the binary: two rampart nodes replicate a stick table
//! both ways (a proxy's table and a `peers` section's), a rampart node and an HAProxy
//! 2.6 node replicate both ways (differential: fails without haproxy under
//! `RAMPART_REQUIRE_HAPROXY=1`), a peer sending garbage or a huge message is
//! disconnected and counted while the process keeps serving, and bad `peers` sections
//! are refused with HAProxy's messages. The links also run over TLS (`bind ... ssl
//! crt`, `default-server ssl`), between rampart nodes and with HAProxy.

mod http_common;
mod test_pki;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use http_common::RAMPART;
use rampart_testkit::{eventually, haproxy_or_skip, http_get, stats_command, HttpBackend, Proxy, Running};

/// A node `name` of section `p`: an admin socket, a frontend counting each URL in
/// `table` (a request increments `gpc0` and `http_req_rate`), the table, and the
/// section with the other node at `${other_addr}`.
fn node_cfg(name: &str, other: &str, table_in_section: bool) -> String {
    let store = "store server_id,gpc0,conn_cur,conn_rate(50000),http_req_rate(10s),bytes_in_cnt";
    let (backend, table_line, table) = if table_in_section {
        (String::new(), format!("  table stkt type string len 40 size 10k expire 60s {store}\n"), "p/stkt")
    } else {
        (
            format!("backend stkt\n  stick-table type string size 10k expire 60s {store} peers p\n"),
            String::new(),
            "stkt",
        )
    };
    format!(
        "global\n  stats socket ${{testdir}}/admin.sock level admin\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         {backend}\
         peers p\n  bind fd@${{peer}}\n  server {name}\n  server {other} ${{other_addr}}:${{other_port}}\n{table_line}\
         frontend fe1\n  bind fd@${{fe1}}\n  http-request track-sc0 url table {table}\n\
         \x20 http-request sc-inc-gpc0(0)\n  http-request return status 200\n"
    )
}

/// [`node_cfg`] with the section's links over TLS: the node listens with `pem`'s
/// certificate and connects to the other with `ssl verify none` (as HAProxy's
/// `peers/tls_basic_sync` reg-test), presenting the same certificate.
fn tls_node_cfg(name: &str, other: &str, table_in_section: bool, pem: &Path) -> String {
    let pem = pem.display();
    node_cfg(name, other, table_in_section).replace(
        "  bind fd@${peer}\n",
        &format!("  bind fd@${{peer}} ssl crt {pem}\n  default-server ssl crt {pem} verify none\n"),
    )
}

/// Starts two nodes `A` (binary `a`) and `B` (binary `b`), each knowing the other's
/// peers address.
fn pair(a: &Path, b: &Path, table_in_section: bool) -> (Running, Running) {
    pair_with(a, b, |me, other| node_cfg(me, other, table_in_section))
}

/// [`pair`] with the configuration `cfg(me, other)` gives each node.
fn pair_with(a: &Path, b: &Path, cfg: impl Fn(&str, &str) -> String) -> (Running, Running) {
    let pa = Proxy::new(a).listener("fe1").listener("peer").arg("-L").arg("A");
    let pb = Proxy::new(b).listener("fe1").listener("peer").arg("-L").arg("B");
    let (addr_a, addr_b) = (pa.listener_addr("peer").unwrap(), pb.listener_addr("peer").unwrap());
    let ra = pa.backend("other", addr_b).config(&cfg("A", "B")).start().expect("A starts");
    let rb = pb.backend("other", addr_a).config(&cfg("B", "A")).start().expect("B starts");
    (ra, rb)
}

/// A certificate and key for the peers' TLS links, and the CA that signed it.
fn peers_pem(tag: &str) -> (std::path::PathBuf, rcgen::Certificate) {
    let dir = test_pki::fresh_dir(tag);
    let (ca, ca_key) = test_pki::ca("peers test CA");
    let pem = dir.join("peer.pem");
    std::fs::write(&pem, test_pki::leaf_pem(&["peer.test"], &ca, &ca_key)).unwrap();
    (pem, ca)
}

fn cli(p: &Running, command: &str) -> String {
    stats_command(&p.dir().join("admin.sock"), &format!("{command}\n"))
}

/// The entry of `key` in `show table` (`key=... use=0 exp=... data`), data only.
fn entry(p: &Running, table: &str, key: &str) -> Option<String> {
    let out = cli(p, &format!("show table {table}"));
    let line = out.lines().find(|l| l.contains(&format!(" key={key} ")))?;
    let data = line.split_once(" exp=")?.1.split_once(' ')?.1;
    Some(data.to_string())
}

fn get(p: &Running, path: &str, times: usize) {
    for _ in 0..times {
        assert_eq!(http_get(p.addr("fe1"), path).status, 200);
    }
}

/// The counters of an entry that was counted `n` times on one node, as both show them.
fn counted(n: u32) -> String {
    format!("server_id=0 gpc0={n} conn_rate(50000)={n} conn_cur=0 http_req_rate(10000)={n} bytes_in_cnt=")
}

fn both_ways(a: &Running, b: &Running, table: &str) {
    get(a, "/from-a", 1);
    get(b, "/from-b", 2);
    for (p, key, n) in [(b, "/from-a", 1), (a, "/from-b", 2), (a, "/from-a", 1), (b, "/from-b", 2)] {
        eventually!(entry(p, table, key).is_some_and(|d| d.starts_with(&counted(n))));
    }
    // the bytes counted where the requests came in arrive as they were
    assert_eq!(entry(a, table, "/from-b"), entry(b, table, "/from-b"));
    // an update after the first one is pushed too
    get(a, "/from-b", 1);
    eventually!(entry(b, table, "/from-b").is_some_and(|d| d.starts_with("server_id=0 gpc0=3 ")));
}

#[test]
fn two_rampart_nodes_replicate_both_ways() {
    let (a, b) = pair(Path::new(RAMPART), Path::new(RAMPART), false);
    both_ways(&a, &b, "stkt");
    let peers = cli(&a, "show peers");
    assert!(peers.contains("id=B(remote,active) "), "{peers}");
    assert!(peers.contains("last_status=ESTA"), "{peers}");
    assert!(peers.contains("id=A(local,inactive)"), "{peers}");
}

#[test]
fn tables_of_peers_sections_replicate() {
    let (a, b) = pair(Path::new(RAMPART), Path::new(RAMPART), true);
    both_ways(&a, &b, "p/stkt");
}

#[test]
fn a_node_that_connects_later_learns_everything() {
    let pa = Proxy::new(RAMPART).listener("fe1").listener("peer").arg("-L").arg("A");
    let pb = Proxy::new(RAMPART).listener("fe1").listener("peer").arg("-L").arg("B");
    let (addr_a, addr_b) = (pa.listener_addr("peer").unwrap(), pb.listener_addr("peer").unwrap());
    let a = pa.backend("other", addr_b).config(&node_cfg("A", "B", false)).start().unwrap();
    get(&a, "/early", 3);
    let b = pb.backend("other", addr_a).config(&node_cfg("B", "A", false)).start().unwrap();
    eventually!(entry(&b, "stkt", "/early").is_some_and(|d| d.starts_with(&counted(3))));
}

#[test]
fn rampart_and_haproxy_replicate_both_ways() {
    let Some(haproxy) = haproxy_or_skip("rampart_and_haproxy_replicate_both_ways") else { return };
    let (a, b) = pair(Path::new(RAMPART), &haproxy, false);
    both_ways(&a, &b, "stkt");
    let (b2, a2) = pair(&haproxy, Path::new(RAMPART), true);
    both_ways(&a2, &b2, "p/stkt");
    // haproxy saw no protocol error from us
    assert!(cli(&b, "show peers").contains("proto_err=0 "), "{}", cli(&b, "show peers"));
}

#[test]
fn two_rampart_nodes_replicate_over_tls() {
    let (pem, ca) = peers_pem("peers-tls");
    let (a, b) = pair_with(Path::new(RAMPART), Path::new(RAMPART), |me, other| tls_node_cfg(me, other, false, &pem));
    both_ways(&a, &b, "stkt");
    assert!(cli(&a, "show peers").contains("last_status=ESTA"), "{}", cli(&a, "show peers"));
    // the listener speaks TLS only: a hello in clear gets no answer but the close ...
    let addr = a.addr("peer");
    let mut clear = TcpStream::connect(addr).unwrap();
    clear.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    clear.write_all(b"HAProxyS 2.1\nA\nB 1234 1\n").unwrap();
    assert!(!until_closed(&mut clear).starts_with(b"200"));
    // ... and the same hello over TLS is welcome
    let cfg = std::sync::Arc::new(test_pki::client_config(&ca, None));
    let conn = rustls::ClientConnection::new(cfg, "peer.test".try_into().unwrap()).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, TcpStream::connect(addr).unwrap());
    tls.sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    tls.write_all(b"HAProxyS 2.1\nA\nB 1234 1\n").unwrap();
    let mut status = [0u8; 4];
    tls.read_exact(&mut status).unwrap();
    assert_eq!(&status, b"200\n");
}

#[test]
fn rampart_and_haproxy_replicate_over_tls() {
    let Some(haproxy) = haproxy_or_skip("rampart_and_haproxy_replicate_over_tls") else { return };
    let (pem, _) = peers_pem("peers-tls-diff");
    let (a, b) = pair_with(Path::new(RAMPART), &haproxy, |me, other| tls_node_cfg(me, other, false, &pem));
    both_ways(&a, &b, "stkt");
    let (b2, a2) = pair_with(&haproxy, Path::new(RAMPART), |me, other| tls_node_cfg(me, other, true, &pem));
    both_ways(&a2, &b2, "p/stkt");
    assert!(cli(&b, "show peers").contains("proto_err=0 "), "{}", cli(&b, "show peers"));
}

/// The shape of `show peers`: its section and node lines with their field names (values
/// left out), and whether each node is local or remote.
fn peers_shape(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with("0x") || l.starts_with("  0x") || l.trim_start().starts_with("reconnect="))
        .map(|l| {
            let words = l.split_whitespace().map(|w| match w.split_once('=') {
                Some(("id", v)) if v.contains('(') => format!("id=({}", v.split_once('(').map_or("", |x| x.1)),
                Some((k, _)) => format!("{k}="),
                None if w.starts_with("0x") => "0x".into(),
                None if w.starts_with('[') => "[date]".into(),
                None => w.to_string(),
            });
            words.collect::<Vec<_>>().join(" ")
        })
        .collect()
}

#[test]
fn show_peers_is_shaped_as_haproxys() {
    let Some(haproxy) = haproxy_or_skip("show_peers_is_shaped_as_haproxys") else { return };
    let (a, b) = pair(Path::new(RAMPART), &haproxy, false);
    get(&a, "/x", 1);
    eventually!(entry(&b, "stkt", "/x").is_some());
    // each side's view of the other, and of itself
    let ours = peers_shape(&cli(&a, "show peers"));
    let theirs = peers_shape(&cli(&b, "show peers"));
    assert_eq!(ours.len(), 5, "{ours:?}");
    assert_eq!(ours, theirs);
}

/// A raw peer `B` connecting to node `A`: the handshake, then whatever the test sends.
fn raw_peer(a: &Running, addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"HAProxyS 2.1\nA\nB 1234 1\n").unwrap();
    let mut status = [0u8; 4];
    s.read_exact(&mut status).unwrap();
    assert_eq!(&status, b"200\n", "{}", cli(a, "show peers"));
    s
}

/// Reads until the node closes; what it sent.
fn until_closed(s: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

fn single(name: &str) -> Proxy {
    Proxy::new(RAMPART).listener("fe1").listener("peer").arg("-L").arg(name)
}

#[test]
fn a_peer_sending_garbage_or_huge_messages_is_disconnected_and_counted() {
    // B's address is a closed port: only B's own connections to A matter
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let px = single("A");
    let addr = px.listener_addr("peer").unwrap();
    let a = px.backend("other", closed).config(&node_cfg("A", "B", false)).start().unwrap();
    // a reserved message class: a protocol error message, then the end
    let mut s = raw_peer(&a, addr);
    s.write_all(&[255, 0]).unwrap();
    let got = until_closed(&mut s);
    assert!(got.ends_with(&[1, 0]), "{got:?}");
    // a body longer than the limit: a size-limit error
    let mut s = raw_peer(&a, addr);
    s.write_all(&[10, 0x80, 0xf0, 0xff, 0x7f]).unwrap();
    let got = until_closed(&mut s);
    assert!(got.ends_with(&[1, 1]), "{got:?}");
    // a definition of a table the node does not have is ignored (as HAProxy), an
    // update after it too, and the session goes on
    let mut s = raw_peer(&a, addr);
    let mut msg = Vec::new();
    rampart_proto::peers::table::encode_define(
        1,
        b"nope",
        &rampart_proto::peers::table::Shape {
            key_type: 6,
            key_len: 32,
            data: 0,
            expire: Some(0),
            params: [Default::default(); 25],
        },
        &mut msg,
    );
    rampart_proto::peers::table::encode_update(
        Some(1),
        None,
        rampart_proto::peers::KeyKind::String { size: 32 },
        b"/x",
        &[],
        &mut msg,
    );
    rampart_proto::peers::encode_control(rampart_proto::peers::Control::Heartbeat, &mut msg);
    s.write_all(&msg).unwrap();
    eventually!(cli(&a, "show peers").contains("rx_hbt=1 "));
    drop(s);
    // a wrong hello is refused with its status
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"HAProxyS 2.1\nA\nZ 1 1\n").unwrap();
    assert_eq!(until_closed(&mut s), b"504\n");
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!(until_closed(&mut s), b"501\n");
    let peers = cli(&a, "show peers");
    assert!(peers.contains(" proto_err=1 "), "{peers}");
    assert!(cli(&a, "show table stkt").contains("used:0"));
    // the process still serves
    get(&a, "/still", 1);
    assert!(entry(&a, "stkt", "/still").is_some());
}

/// HAProxy's `-c` messages for bad `peers` sections.
const BAD: &[(&str, &str)] = &[
    (
        "peers p\n  peer A 127.0.0.1:10000\n  bind :10001\n",
        "[ALERT]    (PID) : config : parsing [test.cfg:3] : mixing \"peer\" and \"bind\" line is forbidden",
    ),
    (
        "peers p\n  bind :10001\n  bind :10002\n  server A\n",
        "[ALERT]    (PID) : config : parsing [test.cfg:3] : One listener per \"peers\" section is authorized but \
         another is already configured at [test.cfg:2].",
    ),
    (
        "peers p\n  peer A 127.0.0.1:10000\n  peer A 127.0.0.1:10001\n",
        "[ALERT]    (PID) : config : parsing [test.cfg:3] : 'peer A' : local peer name already referenced at test.cfg:2. A",
    ),
    (
        "peers p\n  peer A 127.0.0.1:10000\n  shards 3\n",
        "[ALERT]    (PID) : config : parsing [test.cfg:3] : unknown keyword 'shards' in 'peers' section",
    ),
    ("peers p\n  peer A 127.0.0.1:10000\n  table t type ip\n", "[ALERT]    (PID) : config : parsing [test.cfg:3] : table: missing size."),
    (
        "peers p\n  peer A 127.0.0.1:10000\npeers p\n  peer A 127.0.0.1:10001\n",
        "[ALERT]    (PID) : config : Parsing [test.cfg:3]: peers section 'p' has the same name as another peers section declared at test.cfg:1.",
    ),
    (
        "defaults\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\nbackend b\n  stick-table type ip size 1k peers nope\n",
        "[ALERT]    (PID) : config : Proxy 'b': unable to find sync peers 'nope'.",
    ),
    ("peers p q\n", "[ALERT]    (PID) : config : parsing [test.cfg:1] : 'peers' cannot handle unexpected argument 'q'."),
];

fn check_first(binary: &Path, cfg: &str) -> String {
    let out = Proxy::new(binary).arg("-L").arg("A").config(cfg).check().expect("runs");
    assert_ne!(out.code, 0, "{cfg}");
    out.diagnostics().into_iter().next().unwrap_or_default()
}

#[test]
fn bad_peers_sections_are_refused_as_haproxy_does() {
    for (cfg, msg) in BAD {
        assert_eq!(check_first(Path::new(RAMPART), cfg), *msg, "{cfg}");
    }
    let out = Proxy::new(RAMPART).arg("-L").arg("A").config("peers p\n  peer B 127.0.0.1:1\n").check().unwrap();
    assert!(
        out.diagnostics().contains(
            &"[WARNING]  (PID) : config : Removing incomplete section 'peers p' (no peer named 'A').".to_string()
        ),
        "{out:?}"
    );
    let Some(haproxy) = haproxy_or_skip("bad_peers_sections_are_refused_as_haproxy_does") else { return };
    for (cfg, msg) in BAD {
        assert_eq!(check_first(&haproxy, cfg), *msg, "haproxy: {cfg}");
    }
}

/// A node whose backend sticks on the `x-key` header into a replicated table storing
/// `server_id` and `server_key` (the strings the peers' dictionary caches carry).
fn dict_cfg(name: &str, other: &str) -> String {
    format!(
        "global\n  stats socket ${{testdir}}/admin.sock level admin\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         backend bk\n  balance roundrobin\n\
         \x20 stick-table type string len 16 size 1k expire 60s store server_id,server_key peers p\n\
         \x20 stick on req.hdr(x-key)\n  server s1 ${{s1_addr}}:${{s1_port}}\n  server s2 ${{s1_addr}}:${{s1_port}}\n\
         peers p\n  bind fd@${{peer}}\n  server {name}\n  server {other} ${{other_addr}}:${{other_port}}\n\
         frontend fe1\n  bind fd@${{fe1}}\n  default_backend bk\n"
    )
}

/// A request through `p` carrying `x-key: key`.
fn keyed(p: &Running, key: &str) {
    let mut c = rampart_testkit::RawClient::connect(p.addr("fe1")).unwrap();
    c.send(format!("GET / HTTP/1.1\r\nHost: t\r\nx-key: {key}\r\nConnection: close\r\n\r\n")).unwrap();
    assert_eq!(c.read_response().unwrap().status, 200);
}

/// What `show peers dict` says of the caches: each node's name and state, and its
/// dictionary lines (addresses, timers and counters left out).
fn dict_view(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let t = l.trim_start();
            if l.starts_with("  0x") {
                return t.split_whitespace().nth(1).map(str::to_owned);
            }
            let slots = t.starts_with(|c: char| c.is_ascii_digit()) && t.contains(" -> ");
            (slots || t.ends_with("dictionary cache:")).then(|| l.to_owned())
        })
        .collect()
}

/// Node `A` (`a`) and node `B` (haproxy) each store entries sticking to `s1` and `s2`
/// (`A` two, `B` one), which replicate; what `show peers dict` shows on each.
fn dict_session(a: &Path, haproxy: &Path) -> (Vec<String>, Vec<String>) {
    let s1 = HttpBackend::start("s1");
    let pa = Proxy::new(a).listener("fe1").listener("peer").arg("-L").arg("A").backend("s1", s1.addr());
    let pb = Proxy::new(haproxy).listener("fe1").listener("peer").arg("-L").arg("B").backend("s1", s1.addr());
    let (addr_a, addr_b) = (pa.listener_addr("peer").unwrap(), pb.listener_addr("peer").unwrap());
    let ra = pa.backend("other", addr_b).config(&dict_cfg("A", "B")).start().expect("A starts");
    let rb = pb.backend("other", addr_a).config(&dict_cfg("B", "A")).start().expect("B starts");
    eventually!(cli(&ra, "show peers").contains("last_status=ESTA"));
    keyed(&ra, "a1");
    keyed(&ra, "a2");
    keyed(&rb, "b1");
    for (p, key) in [(&rb, "a1"), (&rb, "a2"), (&ra, "b1")] {
        eventually!(cli(p, "show table bk").contains(&format!("key={key} ")));
    }
    (dict_view(&cli(&ra, "show peers dict")), dict_view(&cli(&rb, "show peers dict p")))
}

#[test]
fn show_peers_dict_lists_the_caches_as_haproxy() {
    let Some(haproxy) = haproxy_or_skip("show_peers_dict_lists_the_caches_as_haproxy") else { return };
    let (ours_a, ours_b) = dict_session(Path::new(RAMPART), &haproxy);
    // what A sent (s1 then s2) and what it received from B (s1)
    let tx = ours_a.iter().position(|l| l.ends_with("TX dictionary cache:")).expect("a TX cache");
    assert_eq!(ours_a[tx + 1].trim(), "0 -> s1    1 -> s2", "{ours_a:#?}");
    assert!(ours_a.iter().any(|l| l.trim().starts_with("0 -> s1    1 -> -    2 -> -")), "{ours_a:#?}");
    let (theirs_a, theirs_b) = dict_session(&haproxy, &haproxy);
    assert_eq!(ours_a, theirs_a, "node A: rampart (left), haproxy (right)");
    assert_eq!(ours_b, theirs_b, "node B (haproxy) with rampart (left) and with haproxy (right) as A");
}

/// A node whose `peers` section logs to `syslog` and tries to reach a node that never
/// answers: the datagrams received after SIGTTOU and SIGTTIN (priority and message, the
/// date and process id left out), and whether stderr had the two warnings.
fn peers_log_session(binary: &Path) -> (Vec<String>, bool) {
    let syslog = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    syslog.set_read_timeout(Some(Duration::from_millis(1500))).unwrap();
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let cfg = format!(
        "global\n  stats socket ${{testdir}}/admin.sock level admin\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         peers p\n  log {} local0\n  bind fd@${{peer}}\n  server A\n  server B {dead}\n\
         \x20 table t type ip size 1k store gpc0\n\
         frontend fe1\n  bind fd@${{fe1}}\n  http-request return status 200\n",
        syslog.local_addr().unwrap()
    );
    let p =
        Proxy::new(binary).listener("fe1").listener("peer").arg("-L").arg("A").config(&cfg).start().expect("starts");
    get(&p, "/", 1);
    std::thread::sleep(Duration::from_millis(300));
    p.signal(rampart_testkit::Signal::SIGTTOU).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    p.signal(rampart_testkit::Signal::SIGTTIN).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    while let Ok(n) = syslog.recv(&mut buf) {
        let line = String::from_utf8_lossy(&buf[..n]).trim_end().to_string();
        let prio = line.split_once('>').map_or("", |x| x.0);
        let msg = line.split_once("]: ").map_or(line.as_str(), |x| x.1);
        got.push(format!("{prio}> {msg}"));
    }
    let pid = p.pid();
    let warned = ["Paused", "Resumed"]
        .iter()
        .all(|w| p.wait_output(&format!("[WARNING]  ({pid}) : {w} proxy A.\n"), Duration::from_secs(2)));
    (got, warned)
}

#[test]
fn a_peers_section_logs_what_haproxy_logs_there() {
    let ours = peers_log_session(Path::new(RAMPART));
    assert_eq!(ours, (vec!["<132> Paused proxy A.".to_string(), "<132> Resumed proxy A.".to_string()], true));
    let Some(haproxy) = haproxy_or_skip("a_peers_section_logs_what_haproxy_logs_there") else { return };
    let theirs = peers_log_session(&haproxy);
    assert_eq!(ours, theirs, "rampart (left), haproxy (right)");
}

/// HAProxy 3.2 beside 2.6 (`HAPROXY_32` names another path), or `None` after saying the
/// comparison is skipped (not a CI dependency, as in `haproxy3_syntax.rs`).
fn haproxy32_or_skip(test: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("HAPROXY_32")
        .map_or_else(|| std::path::PathBuf::from("/usr/local/bin/haproxy-3.2"), std::path::PathBuf::from);
    if std::process::Command::new(&path).arg("-v").output().is_ok_and(|o| o.status.success()) {
        return Some(path);
    }
    eprintln!("SKIPPED {test} against HAProxy 3.2: {} is not installed", path.display());
    None
}

/// Node `A` replicates `clust` and writes what it learns there to its own `local`
/// (`write-to`); node `B` (haproxy 2.6, which has no `write-to`) sets entries of its
/// `clust`. A's `local` entries (data only), once learned.
fn write_to_session(a: &Path, haproxy: &Path) -> Vec<String> {
    let store = "store server_id,gpt0,gpc0";
    let cfg = |me: &str, other: &str, write_to: &str| {
        format!(
            "global\n  stats socket ${{testdir}}/admin.sock level admin\n\
             defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
             backend clust\n  stick-table type string len 16 size 1k expire 60s {store},http_req_cnt peers p{write_to}\n\
             backend local\n  stick-table type string len 16 size 1k expire 60s {store}\n\
             peers p\n  bind fd@${{peer}}\n  server {me}\n  server {other} ${{other_addr}}:${{other_port}}\n\
             frontend fe1\n  bind fd@${{fe1}}\n  http-request return status 200\n"
        )
    };
    let pa = Proxy::new(a).listener("fe1").listener("peer").arg("-L").arg("A");
    let pb = Proxy::new(haproxy).listener("fe1").listener("peer").arg("-L").arg("B");
    let (addr_a, addr_b) = (pa.listener_addr("peer").unwrap(), pb.listener_addr("peer").unwrap());
    let ra = pa.backend("other", addr_b).config(&cfg("A", "B", " write-to local")).start().expect("A starts");
    let rb = pb.backend("other", addr_a).config(&cfg("B", "A", "")).start().expect("B starts");
    eventually!(cli(&ra, "show peers").contains("last_status=ESTA"));
    // k2 is in A's copy already: its counter stays A's own
    cli(&ra, "set table local key k2 data.gpc0 3 data.gpt0 1");
    cli(&rb, "set table clust key k1 data.server_id 2 data.gpt0 7 data.gpc0 5 data.http_req_cnt 4");
    cli(&rb, "set table clust key k2 data.gpt0 8 data.gpc0 9");
    eventually!(entry(&ra, "clust", "k2").is_some_and(|d| d.contains("gpc0=9")));
    eventually!(entry(&ra, "local", "k2").is_some_and(|d| d.contains("gpt0=8")));
    let mut out: Vec<String> = ["k1", "k2"].iter().filter_map(|k| entry(&ra, "local", k)).collect();
    out.extend(["k1", "k2"].iter().filter_map(|k| entry(&ra, "clust", k)));
    out
}

#[test]
fn write_to_copies_what_peers_teach_as_haproxy_3() {
    let Some(haproxy) = haproxy_or_skip("write_to_copies_what_peers_teach_as_haproxy_3") else { return };
    let ours = write_to_session(Path::new(RAMPART), &haproxy);
    assert_eq!(
        ours[..2],
        ["server_id=2 gpt0=7 gpc0=0".to_string(), "server_id=0 gpt0=8 gpc0=3".to_string()],
        "{ours:#?}"
    );
    let Some(newer) = haproxy32_or_skip("write_to_copies_what_peers_teach_as_haproxy_3") else { return };
    // (3.2's `show table` adds the entry's shard first)
    let theirs: Vec<String> = write_to_session(&newer, &haproxy)
        .into_iter()
        .map(|d| d.split_once(' ').filter(|(s, _)| s.starts_with("shard=")).map_or(d.clone(), |(_, r)| r.to_owned()))
        .collect();
    assert_eq!(ours, theirs, "node A: rampart (left), haproxy 3.2 (right)");
}
