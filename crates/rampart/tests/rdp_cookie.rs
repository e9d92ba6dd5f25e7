//! RDP cookies in TCP mode through the real binary: a fake Remote Desktop client sends
//! the X.224 Connection Request (TPKT and X.224 headers, `Cookie: mstshash=<user>` or
//! `Cookie: msts=<ip>.<port>.0000`, an RDP negotiation request), and each server answers
//! with its name. `balance rdp-cookie` keeps a user on one server and falls back to
//! round robin without a cookie; `persist rdp-cookie` sends a broker's cookie to the
//! server it names; `req.rdp_cookie`/`rdp_cookie_cnt` and the `RDP_COOKIE` ACL in
//! content rules. Each scenario runs the same way through haproxy 2.6.

mod http_common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use http_common::{binary, start_binary};
use rampart_testkit::{haproxy_or_skip, RawBackend, Running, Step};

const NAMES: [&str; 4] = ["s1", "s2", "s3", "s4"];

/// The RDP negotiation request that ends the Connection Request (TLS asked for).
const NEG_REQ: &[u8] = b"\x01\x00\x08\x00\x03\x00\x00\x00";

/// The X.224 Connection Request of a client, with `line` (e.g. `Cookie: mstshash=a`,
/// without the CRLF; empty: no cookie line).
fn connection_request(line: &str) -> Vec<u8> {
    let mut body = Vec::new();
    if !line.is_empty() {
        body.extend_from_slice(line.as_bytes());
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(NEG_REQ);
    let total = 4 + 7 + body.len();
    let mut v = vec![0x03, 0x00, (total >> 8) as u8, total as u8];
    // length indicator, CR TPDU, dst-ref, src-ref, class 0
    v.extend_from_slice(&[6 + body.len() as u8, 0xe0, 0, 0, 0, 0, 0]);
    v.extend_from_slice(&body);
    v
}

/// The `msts` value a connection broker writes for `addr` (IPv4).
fn msts(addr: SocketAddr) -> String {
    let SocketAddr::V4(a) = addr else { panic!("an IPv4 server") };
    format!("{}.{}.0000", u32::from_le_bytes(a.ip().octets()), a.port().swap_bytes())
}

struct Setup {
    proxy: Running,
    servers: Vec<RawBackend>,
}

/// `listen fe1` in TCP mode with `lines` and four servers that each answer the
/// Connection Request with their name.
fn start(bin: impl Into<std::path::PathBuf>, lines: &str, server_opts: &[(&str, &str)]) -> Setup {
    let servers: Vec<RawBackend> =
        NAMES.iter().map(|n| RawBackend::start(vec![Step::expect_until(NEG_REQ), Step::send(n)])).collect();
    let mut cfg = format!(
        "global\n  nbthread 1\ndefaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind fd@${{fe1}}\n{lines}"
    );
    for n in NAMES {
        let opt = server_opts.iter().find(|(s, _)| *s == n).map_or("", |(_, o)| o);
        cfg.push_str(&format!("  server {n} ${{{n}_addr}}:${{{n}_port}} {opt}\n"));
    }
    let addrs: Vec<(&str, SocketAddr)> = NAMES.iter().copied().zip(servers.iter().map(RawBackend::addr)).collect();
    Setup { proxy: start_binary(bin, &cfg, &addrs), servers }
}

impl Setup {
    fn addr_of(&self, name: &str) -> SocketAddr {
        self.servers[NAMES.iter().position(|n| *n == name).unwrap()].addr()
    }

    /// Who answered a client sending `req` in two parts (`split` bytes, a pause, the
    /// rest); `closed` when the proxy closed without an answer.
    fn who_split(&self, req: &[u8], split: usize) -> String {
        let mut c = TcpStream::connect(self.proxy.addr("fe1")).expect("connect");
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(&req[..split]).unwrap();
        if split < req.len() {
            std::thread::sleep(Duration::from_millis(150));
            c.write_all(&req[split..]).unwrap();
        }
        let mut got = Vec::new();
        let _ = c.read_to_end(&mut got);
        if got.is_empty() {
            "closed".into()
        } else {
            String::from_utf8_lossy(&got).into_owned()
        }
    }

    fn who(&self, line: &str) -> String {
        let req = connection_request(line);
        self.who_split(&req, req.len())
    }

    /// Every server got exactly the Connection Requests sent, whole.
    fn assert_forwarded_whole(&self) {
        for (n, s) in NAMES.iter().zip(&self.servers) {
            for c in s.connections() {
                assert!(c.received.ends_with(NEG_REQ) && c.received[0] == 0x03, "{n} got {c:?}");
                let len = usize::from(c.received[2]) << 8 | usize::from(c.received[3]);
                assert_eq!(c.received.len(), len, "{n} got {c:?}");
            }
        }
    }
}

const BALANCE: &str =
    "  tcp-request inspect-delay 5s\n  tcp-request content accept if RDP_COOKIE\n  balance rdp-cookie\n";

/// Who served each user, twice over, then connections without a cookie.
fn balance_scenario(bin: impl Into<std::path::PathBuf>) -> Vec<String> {
    let s = start(bin, BALANCE, &[]);
    let users: Vec<String> = (0..12).map(|i| format!("Cookie: mstshash=user{i}")).collect();
    let mut out: Vec<String> = users.iter().map(|u| s.who(u)).collect();
    out.extend(users.iter().map(|u| s.who(u)));
    // the cookie line split across two reads: the rule waits for the rest
    let whole = connection_request("Cookie: mstshash=user3");
    out.push(s.who_split(&whole, 20));
    // no cookie line: the ACL says so at once, round robin decides
    out.extend((0..4).map(|_| s.who("")));
    s.assert_forwarded_whole();
    out
}

#[test]
fn balance_rdp_cookie_keeps_a_user_on_one_server() {
    let got = balance_scenario(binary());
    let (first, second) = (&got[..12], &got[12..24]);
    assert_eq!(first, second, "each user back on the same server");
    assert!(first.iter().all(|n| NAMES.contains(&n.as_str())), "{got:?}");
    let mut spread: Vec<&String> = first.iter().collect();
    spread.sort();
    spread.dedup();
    assert!(spread.len() >= 3, "12 users spread over the servers: {first:?}");
    assert_eq!(got[24], got[3], "a cookie in two parts hashes as in one");
    let mut rr = got[25..].to_vec();
    rr.sort();
    assert_eq!(rr, NAMES, "no cookie: round robin over the four servers");
    if let Some(haproxy) = haproxy_or_skip("balance_rdp_cookie_keeps_a_user_on_one_server") {
        let theirs = balance_scenario(haproxy);
        // the same hash: the same server for each user; round robin may start elsewhere
        assert_eq!(got[..25], theirs[..25], "haproxy 2.6 sends each user to the same server");
        let mut rr_theirs = theirs[25..].to_vec();
        rr_theirs.sort();
        assert_eq!(rr_theirs, NAMES);
    }
}

#[test]
fn balance_rdp_cookie_with_a_named_cookie_and_consistent_hashing() {
    let lines = BALANCE.replace("balance rdp-cookie", "balance rdp-cookie(user)\n  hash-type consistent");
    let scenario = |bin: std::path::PathBuf| -> Vec<String> {
        let s = start(bin, &lines, &[]);
        let mut out: Vec<String> = (0..10).map(|i| s.who(&format!("Cookie: USER=u{i}"))).collect();
        out.extend((0..10).map(|i| s.who(&format!("Cookie: user=u{i}"))));
        out
    };
    let got = scenario(binary());
    assert_eq!(got[..10], got[10..], "the cookie name compares without case");
    if let Some(haproxy) = haproxy_or_skip("balance_rdp_cookie_with_a_named_cookie_and_consistent_hashing") {
        assert_eq!(got, scenario(haproxy));
    }
}

const PERSIST: &str =
    "  tcp-request inspect-delay 5s\n  tcp-request content accept if RDP_COOKIE\n  persist rdp-cookie\n";

/// Where broker cookies naming s3, then an unknown server, then a malformed value go
/// (`extra` after the `persist` lines; server options in `opts`).
fn persist_scenario(bin: impl Into<std::path::PathBuf>, extra: &str, opts: &[(&str, &str)]) -> Vec<String> {
    let s = start(bin, &format!("{PERSIST}{extra}"), opts);
    let s3 = format!("Cookie: msts={}", msts(s.addr_of("s3")));
    let mut out: Vec<String> = (0..4).map(|_| s.who(&s3)).collect();
    // an address no server has, then a value that is no address: round robin
    out.extend((0..4).map(|_| s.who("Cookie: msts=16777343.1.0000")));
    out.extend((0..4).map(|_| s.who("Cookie: msts=alice")));
    s.assert_forwarded_whole();
    out
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

#[test]
fn persist_rdp_cookie_sends_a_broker_cookie_to_its_server() {
    let got = persist_scenario(binary(), "", &[]);
    assert_eq!(got[..4], ["s3", "s3", "s3", "s3"], "{got:?}");
    assert_eq!(sorted(&got[4..8]), NAMES, "an unknown address: round robin");
    assert_eq!(sorted(&got[8..]), NAMES, "a value that is no address: round robin");
    if let Some(haproxy) = haproxy_or_skip("persist_rdp_cookie_sends_a_broker_cookie_to_its_server") {
        let theirs = persist_scenario(haproxy, "", &[]);
        assert_eq!(got[..4], theirs[..4]);
        assert_eq!(sorted(&theirs[4..8]), NAMES);
    }
}

#[test]
fn persist_rdp_cookie_skips_a_server_in_maintenance_unless_option_persist() {
    let scenario = |bin: std::path::PathBuf, extra: &str| persist_scenario(bin, extra, &[("s3", "disabled")]);
    let got = scenario(binary(), "");
    assert!(got[..4].iter().all(|n| n != "s3" && NAMES.contains(&n.as_str())), "{got:?}");
    let forced = scenario(binary(), "  option persist\n");
    assert_eq!(forced[..4], ["s3", "s3", "s3", "s3"], "option persist: {forced:?}");
    if let Some(haproxy) = haproxy_or_skip("persist_rdp_cookie_skips_a_server_in_maintenance_unless_option_persist") {
        assert!(scenario(haproxy.clone(), "")[..4].iter().all(|n| n != "s3"));
        assert_eq!(scenario(haproxy, "  option persist\n")[..4], forced[..4]);
    }
}

/// `use-server` on the fetches, and a content rule that rejects one user.
fn fetch_scenario(bin: impl Into<std::path::PathBuf>) -> Vec<String> {
    let lines = "  tcp-request inspect-delay 5s\n\
                 \x20 tcp-request content reject if { req.rdp_cookie(mstshash) -m str mallory }\n\
                 \x20 tcp-request content accept if { req_rdp_cookie_cnt(mstshash) gt 0 } || { rdp_cookie_cnt eq 0 }\n\
                 \x20 use-server s2 if { rdp_cookie(mstshash) -m beg b }\n\
                 \x20 use-server s4 if { req.rdp_cookie -m str carol }\n\
                 \x20 use-server s1 if !{ req.rdp_cookie_cnt gt 0 }\n";
    let s = start(bin, lines, &[]);
    let mut out: Vec<String> =
        ["bob", "bill", "carol", "mallory"].iter().map(|u| s.who(&format!("Cookie: mstshash={u}"))).collect();
    out.push(s.who(""));
    out
}

#[test]
fn rdp_cookie_fetches_in_content_rules() {
    let got = fetch_scenario(binary());
    assert_eq!(got, ["s2", "s2", "s4", "closed", "s1"]);
    if let Some(haproxy) = haproxy_or_skip("rdp_cookie_fetches_in_content_rules") {
        assert_eq!(fetch_scenario(haproxy), got);
    }
}
