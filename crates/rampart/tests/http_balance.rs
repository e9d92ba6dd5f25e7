//! Server selection through the real binary: weighted round robin over several
//! servers, `backup` servers used only when no active server is usable, and `disabled`
//! servers skipped. Every backend answers with its name, so the client sees who served.

mod http_common;

use http_common::{binary, PREAMBLE};
use rampart_testkit::{http_get, HttpBackend, Proxy, RawClient, Running};

/// Starts a proxy with `backend be` holding `server_lines` (written with `${name_addr}`
/// placeholders) over backends named `names`.
fn balanced(server_lines: &str, names: &[&str]) -> (Running, Vec<HttpBackend>) {
    let backends: Vec<HttpBackend> = names.iter().map(|n| HttpBackend::start(n)).collect();
    let cfg = format!("{PREAMBLE}frontend fe1\n  bind fd@${{fe1}}\n  default_backend be\nbackend be\n{server_lines}");
    let mut proxy = Proxy::new(binary()).listener("fe1").config(&cfg);
    for (name, be) in names.iter().zip(&backends) {
        proxy = proxy.backend(name, be.addr());
    }
    (proxy.start().unwrap(), backends)
}

/// Who served each of `n` requests, each on its own connection.
fn served_by(proxy: &Running, n: usize) -> Vec<String> {
    (0..n).map(|_| http_get(proxy.addr("fe1"), "/").body_str()).collect()
}

fn count(names: &[String], name: &str) -> usize {
    names.iter().filter(|n| *n == name).count()
}

#[test]
fn round_robin_takes_turns() {
    let servers = "  balance roundrobin\n  server s1 ${s1_addr}:${s1_port}\n  server s2 ${s2_addr}:${s2_port}\n  server s3 ${s3_addr}:${s3_port}\n";
    let (proxy, _backends) = balanced(servers, &["s1", "s2", "s3"]);
    assert_eq!(served_by(&proxy, 6), ["s1", "s2", "s3", "s1", "s2", "s3"]);
}

#[test]
fn round_robin_applies_to_each_request_of_a_kept_alive_connection() {
    let servers = "  server s1 ${s1_addr}:${s1_port}\n  server s2 ${s2_addr}:${s2_port}\n";
    let (proxy, backends) = balanced(servers, &["s1", "s2"]);
    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    let got: Vec<String> = (0..4).map(|_| c.get("/").unwrap().body_str()).collect();
    assert_eq!(got, ["s1", "s2", "s1", "s2"]);
    // Each server connection carried two requests.
    for be in &backends {
        let seen = be.wait_requests(2);
        assert_eq!(seen.iter().map(|r| (r.conn, r.seq)).collect::<Vec<_>>(), [(1, 1), (1, 2)], "{}", be.name());
    }
}

#[test]
fn weights_share_the_requests() {
    let servers = "  balance roundrobin\n  server s1 ${s1_addr}:${s1_port} weight 1\n  \
                   server s2 ${s2_addr}:${s2_port} weight 2\n  server s3 ${s3_addr}:${s3_port} weight 3\n";
    let (proxy, _backends) = balanced(servers, &["s1", "s2", "s3"]);
    // Two full cycles of 1 + 2 + 3.
    let got = served_by(&proxy, 12);
    assert_eq!((count(&got, "s1"), count(&got, "s2"), count(&got, "s3")), (2, 4, 6), "{got:?}");
    // Spread, not grouped: s3 never serves more than twice in a row.
    assert!(!got.windows(3).any(|w| w.iter().all(|n| n == "s3")), "{got:?}");
}

#[test]
fn weight_zero_gets_nothing() {
    let servers = "  server s1 ${s1_addr}:${s1_port} weight 0\n  server s2 ${s2_addr}:${s2_port}\n";
    let (proxy, _backends) = balanced(servers, &["s1", "s2"]);
    assert_eq!(served_by(&proxy, 4), ["s2"; 4]);
}

#[test]
fn backup_is_unused_while_an_active_server_is_usable() {
    let servers = "  server s1 ${s1_addr}:${s1_port}\n  server b1 ${b1_addr}:${b1_port} backup\n";
    let (proxy, backends) = balanced(servers, &["s1", "b1"]);
    assert_eq!(served_by(&proxy, 4), ["s1"; 4]);
    assert_eq!(backends[1].connections(), 0);
}

#[test]
fn first_backup_takes_over_when_actives_are_disabled() {
    // Without `option allbackups`, only the first usable backup serves.
    let servers = "  server s1 ${s1_addr}:${s1_port} disabled\n  server b1 ${b1_addr}:${b1_port} backup\n  \
                   server b2 ${b2_addr}:${b2_port} backup\n";
    let (proxy, backends) = balanced(servers, &["s1", "b1", "b2"]);
    assert_eq!(served_by(&proxy, 4), ["b1"; 4]);
    assert_eq!((backends[0].connections(), backends[2].connections()), (0, 0));
}

#[test]
fn disabled_servers_are_skipped() {
    let servers = "  server s1 ${s1_addr}:${s1_port}\n  server s2 ${s2_addr}:${s2_port} disabled\n  \
                   server s3 ${s3_addr}:${s3_port}\n";
    let (proxy, backends) = balanced(servers, &["s1", "s2", "s3"]);
    let got = served_by(&proxy, 4);
    assert_eq!((count(&got, "s1"), count(&got, "s3")), (2, 2), "{got:?}");
    assert_eq!(backends[1].connections(), 0);
}

#[test]
fn no_usable_server_gives_503() {
    let servers = "  server s1 ${s1_addr}:${s1_port} disabled\n";
    let (proxy, backends) = balanced(servers, &["s1"]);
    let resp = http_get(proxy.addr("fe1"), "/");
    assert_eq!(resp.status, 503);
    assert_eq!(backends[0].connections(), 0);
}
