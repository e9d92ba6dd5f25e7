//! The `bind` address forms, each checked by a client going through it to an echo
//! server: `ip:port`, `*:port` and `:port`, `ipv4@`, IPv6 (`[::1]:port`, `::1:port`,
//! `:::port` which also takes IPv4), `unix@/path` and `/path`, port ranges and comma
//! lists. And a bind that fails (port in use): HAProxy's alerts, exit status 1.
//! HAProxy counterpart: str2sa_range (tools.c), sock_inet.c, sock_unix.c, protocol.c.

mod netutil;

use std::io::{Read, Write};
use std::net::{Ipv6Addr, SocketAddr, TcpListener};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use netutil::{free_port, probe_echo, proxy, tcp_defaults, Probe};
use rampart_testkit::{Running, TcpEchoBackend};

const WAIT: Duration = Duration::from_secs(3);

/// Starts a TCP `listen fe1` with `bind_lines` (each a whole `bind ...` line) in front
/// of an echo server.
fn start(echo: &TcpEchoBackend, bind_lines: &str) -> Running {
    proxy()
        .backend("s1", echo.addr())
        .config(&format!("{}listen fe1\n{bind_lines}  server s1 ${{s1_addr}}:${{s1_port}}\n", tcp_defaults("")))
        .start()
        .expect("proxy starts")
}

fn v4(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

fn v6(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv6Addr::LOCALHOST, port))
}

/// Whether this machine has IPv6 on loopback.
fn ipv6_available() -> bool {
    let ok = TcpListener::bind("[::1]:0").is_ok();
    if !ok {
        eprintln!("SKIPPED: no IPv6 on loopback");
    }
    ok
}

/// `n` consecutive ports free right now.
fn free_port_range(n: u16) -> u16 {
    let seed = std::process::id() as u16;
    for attempt in 0..200u16 {
        let base = 20_000 + (seed.wrapping_mul(7).wrapping_add(attempt.wrapping_mul(97))) % 30_000;
        let held: Vec<_> = (0..n).filter_map(|i| TcpListener::bind(v4(base + i)).ok()).collect();
        if held.len() == n as usize {
            return base;
        }
    }
    panic!("no {n} consecutive free ports");
}

#[test]
fn ipv4_address_and_port() {
    let echo = TcpEchoBackend::start();
    let port = free_port();
    let _p = start(&echo, &format!("  bind 127.0.0.1:{port}\n"));
    assert_eq!(probe_echo(v4(port), WAIT), Probe::Echoed);
}

#[test]
fn any_address_forms() {
    let echo = TcpEchoBackend::start();
    let (star, empty, prefixed) = (free_port(), free_port(), free_port());
    let _p = start(&echo, &format!("  bind *:{star}\n  bind :{empty}\n  bind ipv4@:{prefixed}\n"));
    for port in [star, empty, prefixed] {
        assert_eq!(probe_echo(v4(port), WAIT), Probe::Echoed, "port {port}");
    }
}

#[test]
fn ipv6_loopback_forms() {
    if !ipv6_available() {
        return;
    }
    let echo = TcpEchoBackend::start();
    let (bracketed, bare, prefixed) = (free_port(), free_port(), free_port());
    let _p = start(&echo, &format!("  bind [::1]:{bracketed}\n  bind ::1:{bare}\n  bind ipv6@::1:{prefixed}\n"));
    for port in [bracketed, bare, prefixed] {
        assert_eq!(probe_echo(v6(port), WAIT), Probe::Echoed, "[::1]:{port}");
    }
    // Bound to ::1 only: the IPv4 loopback is not served.
    assert_eq!(probe_echo(v4(bare), WAIT), Probe::Refused);
}

#[test]
fn ipv6_any_address_also_takes_ipv4() {
    if !ipv6_available() {
        return;
    }
    let echo = TcpEchoBackend::start();
    let port = free_port();
    let _p = start(&echo, &format!("  bind :::{port}\n"));
    assert_eq!(probe_echo(v6(port), WAIT), Probe::Echoed);
    // Like HAProxy without `v6only`, the IPv6 wildcard socket accepts IPv4 too.
    assert_eq!(probe_echo(v4(port), WAIT), Probe::Echoed);
}

#[test]
fn v6only_and_v4v6_choose_whether_the_ipv6_wildcard_takes_ipv4() {
    if !ipv6_available() {
        return;
    }
    let echo = TcpEchoBackend::start();
    let (only, both, both_then_only) = (free_port(), free_port(), free_port());
    let _p = start(
        &echo,
        &format!("  bind :::{only} v6only\n  bind :::{both} v4v6\n  bind :::{both_then_only} v4v6 v6only\n"),
    );
    for port in [only, both, both_then_only] {
        assert_eq!(probe_echo(v6(port), WAIT), Probe::Echoed, "[::1]:{port}");
    }
    assert_eq!(probe_echo(v4(only), WAIT), Probe::Refused, "v6only takes no IPv4");
    assert_eq!(probe_echo(v4(both), WAIT), Probe::Echoed, "v4v6 takes IPv4 too");
    assert_eq!(probe_echo(v4(both_then_only), WAIT), Probe::Refused, "v6only wins over v4v6");
}

/// The backlog of the socket listening on 127.0.0.1:`port`, as `ss` shows it (the
/// Send-Q of a listening socket); `None` without `ss`.
fn listen_backlog(port: u16) -> Option<u32> {
    let out = std::process::Command::new("ss").args(["-Hltn", &format!("sport = :{port}")]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().next()?.split_whitespace().nth(2)?.parse().ok()
}

#[test]
fn backlog_sets_the_listen_queue_of_the_bind_or_the_frontend() {
    let echo = TcpEchoBackend::start();
    let (small, default, proxy_wide) = (free_port(), free_port(), free_port());
    let _p = proxy()
        .backend("s1", echo.addr())
        .config(&format!(
            "{}listen fe1\n  maxconn 300\n  bind 127.0.0.1:{small} backlog 7\n  bind 127.0.0.1:{default}\n  \
             server s1 ${{s1_addr}}:${{s1_port}}\n\
             listen fe2\n  maxconn 300\n  backlog 50\n  bind 127.0.0.1:{proxy_wide}\n  \
             server s1 ${{s1_addr}}:${{s1_port}}\n",
            tcp_defaults("")
        ))
        .start()
        .expect("proxy starts");
    assert_eq!(probe_echo(v4(small), WAIT), Probe::Echoed);
    let Some(got) = listen_backlog(small) else {
        eprintln!("SKIPPED: no ss to read the backlog");
        return;
    };
    assert_eq!(got, 7);
    // Without the option, the frontend's `backlog`, else its maxconn.
    assert_eq!(listen_backlog(default), Some(300));
    assert_eq!(listen_backlog(proxy_wide), Some(50));
}

#[test]
fn unix_socket_forms() {
    let echo = TcpEchoBackend::start();
    let proxy = start(&echo, "  bind unix@${testdir}/prefixed.sock\n  bind ${testdir}/bare.sock\n");
    for name in ["prefixed.sock", "bare.sock"] {
        let path = proxy.dir().join(name);
        let mut client = UnixStream::connect(&path).unwrap_or_else(|e| panic!("connect {}: {e}", path.display()));
        client.set_read_timeout(Some(WAIT)).unwrap();
        client.write_all(b"over unix\n").unwrap();
        client.shutdown(std::net::Shutdown::Write).unwrap();
        let mut back = Vec::new();
        client.read_to_end(&mut back).unwrap();
        assert_eq!(back, b"over unix\n", "{name}");
    }
    let conns = echo.wait_finished(2);
    assert!(conns.iter().all(|c| c.received == b"over unix\n"));
}

#[test]
fn stale_unix_socket_file_is_replaced() {
    let echo = TcpEchoBackend::start();
    let dir = netutil::Scratch::new("stale-sock");
    let path = dir.path().join("fe.sock");
    // A socket file nobody listens on any more, as a crashed process leaves it.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let _p = start(&echo, &format!("  bind unix@{}\n", path.display()));
    let mut client = UnixStream::connect(&path).unwrap();
    client.write_all(b"x").unwrap();
    let mut one = [0u8; 1];
    client.read_exact(&mut one).unwrap();
    assert_eq!(&one, b"x");
}

#[test]
fn port_range_binds_every_port() {
    let echo = TcpEchoBackend::start();
    let base = free_port_range(3);
    let _p = start(&echo, &format!("  bind 127.0.0.1:{base}-{}\n", base + 2));
    for port in base..base + 3 {
        assert_eq!(probe_echo(v4(port), WAIT), Probe::Echoed, "port {port}");
    }
}

#[test]
fn comma_list_binds_every_address() {
    let echo = TcpEchoBackend::start();
    let (a, b, c) = (free_port(), free_port(), free_port());
    let _p = start(&echo, &format!("  bind 127.0.0.1:{a},127.0.0.1:{b},:{c}\n"));
    for port in [a, b, c] {
        assert_eq!(probe_echo(v4(port), WAIT), Probe::Echoed, "port {port}");
    }
}

#[test]
fn port_in_use_is_an_alert_and_exit_1() {
    // A plain listener (no SO_REUSEPORT) holds the port.
    let holder = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port();
    let free = free_port();
    let err = proxy()
        .config(&format!(
            "{}frontend fe\n  bind 127.0.0.1:{free}\n  bind 127.0.0.1:{port}\n  default_backend be\n\
             backend be\n  server s1 127.0.0.1:1\n",
            tcp_defaults("")
        ))
        .start()
        .err()
        .expect("the proxy must not start");
    let rampart_testkit::StartError::Exited { status, output, .. } = err else { panic!("{err}") };
    assert_eq!(status.code(), Some(1), "{output}");
    let alerts: Vec<&str> = output.lines().filter(|l| l.starts_with("[ALERT]")).collect();
    let program = if netutil::testing_haproxy() { "haproxy" } else { "rampart" };
    assert_eq!(alerts.len(), 2, "{output}");
    assert!(
        alerts[0].ends_with(&format!(
            " : Binding [test.cfg:8] for frontend fe: cannot bind socket (Address already in use) for [127.0.0.1:{port}]"
        )),
        "{output}"
    );
    assert!(
        alerts[1].ends_with(&format!("{program}.main()] Some protocols failed to start their listeners! Exiting.")),
        "{output}"
    );
}

#[test]
fn every_failed_bind_is_reported() {
    let holder = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port();
    let err = proxy()
        .config(&format!(
            "{}listen fe1\n  bind 127.0.0.1:{port}\n  bind unix@/nonexistent-r4mp/fe.sock\n  server s1 127.0.0.1:1\n",
            tcp_defaults("")
        ))
        .start()
        .err()
        .expect("the proxy must not start");
    let rampart_testkit::StartError::Exited { status, output, .. } = err else { panic!("{err}") };
    assert_eq!(status.code(), Some(1));
    let mut alerts: Vec<String> = output
        .lines()
        .filter(|l| l.starts_with("[ALERT]") && l.contains("Binding ["))
        .map(|l| l.split_once(" : ").map_or(l, |(_, m)| m).to_owned())
        .collect();
    // HAProxy reports per protocol, rampart in configuration order: compare as sets.
    alerts.sort();
    assert_eq!(
        alerts,
        [
            format!("Binding [test.cfg:7] for proxy fe1: cannot bind socket (Address already in use) for [127.0.0.1:{port}]"),
            "Binding [test.cfg:8] for proxy fe1: cannot bind UNIX socket (No such file or directory) [/nonexistent-r4mp/fe.sock]".to_owned(),
        ],
        "{output}"
    );
}

/// `bind` addresses expand `$VAR` and `${VAR}` whether quoted or not, each piece of a
/// comma list on its own, as HAProxy's `str2sa_range()` does; an address that expands
/// to nothing is HAProxy's alert.
#[test]
fn environment_variables_in_bind_addresses() {
    let echo = TcpEchoBackend::start();
    let (a, b, c) = (free_port(), free_port(), free_port());
    let _p = proxy()
        .backend("s1", echo.addr())
        .env("RP_ADDR", format!("127.0.0.1:{a}"))
        .env("RP_IP", "127.0.0.1")
        .env("RP_PORT_B", b.to_string())
        .env("RP_PORT_C", c.to_string())
        .config(&format!(
            "{}listen fe1\n  bind ${{RP_ADDR}}\n  bind \"${{RP_IP}}\":$RP_PORT_B,${{RP_IP}}:${{RP_PORT_C}}\n  \
             server s1 ${{s1_addr}}:${{s1_port}}\n",
            tcp_defaults("")
        ))
        .start()
        .expect("proxy starts");
    for port in [a, b, c] {
        assert_eq!(probe_echo(v4(port), WAIT), Probe::Echoed, "port {port}");
    }
    let out = rampart_testkit::check(
        netutil::binary(),
        &format!("{}listen fe1\n  bind ${{RP_SURELY_UNSET}}\n  server s1 127.0.0.1:1\n", tcp_defaults("")),
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("'${RP_SURELY_UNSET}' resolves to an empty address (environment variable missing?)"),
        "{}",
        out.stderr
    );
}
