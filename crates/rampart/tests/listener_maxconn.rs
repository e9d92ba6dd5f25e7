//! `maxconn` at the global and frontend levels: at the limit, the next connection is
//! not accepted (it waits in the kernel's backlog, unserved) and is served as soon as
//! one connection ends; the proxy keeps serving afterwards.
//! HAProxy counterpart: listener.c (listener_accept, limit_listener, resume_listener).

mod netutil;

use std::io::Write;
use std::time::Duration;

use netutil::{echo_session, probe_echo, proxy, read_exact_within, tcp_defaults, Probe};
use rampart_testkit::{Running, TcpEchoBackend};

fn start(echo: &TcpEchoBackend, global: &str, listen_extra: &str) -> Running {
    proxy()
        .listener("fe1")
        .backend("s1", echo.addr())
        .config(&format!(
            "global\n{global}{}listen fe1\n  bind fd@${{fe1}}\n{listen_extra}  server s1 ${{s1_addr}}:${{s1_port}}\n",
            tcp_defaults("")
        ))
        .start()
        .expect("proxy starts")
}

/// Two sessions open at the limit of 2: a third is held, then served when one ends.
fn third_waits_for_a_free_slot(proxy: &Running, echo: &TcpEchoBackend) {
    let addr = proxy.addr("fe1");
    let first = echo_session(addr);
    let _second = echo_session(addr);

    let mut third = netutil::connect(addr, Duration::from_secs(5)).unwrap();
    third.write_all(b"third\n").unwrap();
    assert!(
        read_exact_within(&mut third, 6, Duration::from_millis(400)).is_err(),
        "a third connection was served beyond maxconn 2"
    );
    assert_eq!(echo.connections().len(), 2, "the server sees only two sessions");

    drop(first);
    assert_eq!(read_exact_within(&mut third, 6, Duration::from_secs(3)).unwrap(), b"third\n");
    drop(third);
    drop(_second);
    // Every slot is released: the proxy goes on serving, one at a time or two at once.
    for _ in 0..3 {
        assert_eq!(probe_echo(addr, Duration::from_secs(3)), Probe::Echoed);
    }
    let a = echo_session(addr);
    let b = echo_session(addr);
    drop((a, b));
}

#[test]
fn global_maxconn_holds_the_next_connection_until_one_ends() {
    let echo = TcpEchoBackend::start();
    let proxy = start(&echo, "  maxconn 2\n", "");
    third_waits_for_a_free_slot(&proxy, &echo);
}

#[test]
fn frontend_maxconn_holds_the_next_connection_until_one_ends() {
    let echo = TcpEchoBackend::start();
    let proxy = start(&echo, "  maxconn 100\n", "  maxconn 2\n");
    third_waits_for_a_free_slot(&proxy, &echo);
}

#[test]
fn frontend_maxconn_leaves_other_frontends_alone() {
    let echo = TcpEchoBackend::start();
    let proxy = proxy()
        .listener("fe1")
        .listener("fe2")
        .backend("s1", echo.addr())
        .config(&format!(
            "{}listen fe1\n  bind fd@${{fe1}}\n  maxconn 1\n  server s1 ${{s1_addr}}:${{s1_port}}\n\
             listen fe2\n  bind fd@${{fe2}}\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
            tcp_defaults("")
        ))
        .start()
        .unwrap();
    let _held = echo_session(proxy.addr("fe1"));
    assert_eq!(probe_echo(proxy.addr("fe1"), Duration::from_millis(300)), Probe::Held);
    assert_eq!(probe_echo(proxy.addr("fe2"), Duration::from_secs(3)), Probe::Echoed);
}

#[test]
fn global_maxconn_holds_across_threads() {
    // Two threads, each with its own accept loop on a bound port: the limit is global.
    let echo = TcpEchoBackend::start();
    let port = netutil::free_port();
    let _proxy = proxy()
        .backend("s1", echo.addr())
        .config(&format!(
            "global\n  maxconn 2\n  nbthread 2\n{}listen fe1\n  bind 127.0.0.1:{port}\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
            tcp_defaults("")
        ))
        .start()
        .unwrap();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let first = echo_session(addr);
    let _second = echo_session(addr);
    // Two more (the backlog follows maxconn: a few more would not even connect).
    let mut held: Vec<_> = (0..2)
        .map(|i| {
            let mut s = netutil::connect(addr, Duration::from_secs(5)).unwrap();
            s.write_all(format!("held{i}\n").as_bytes()).unwrap();
            s
        })
        .collect();
    for s in &mut held {
        assert!(read_exact_within(s, 6, Duration::from_millis(150)).is_err(), "served beyond maxconn 2");
    }
    assert_eq!(echo.connections().len(), 2);
    drop(first);
    drop(_second);
    for (i, s) in held.iter_mut().enumerate() {
        let want = format!("held{i}\n");
        assert_eq!(read_exact_within(s, 6, Duration::from_secs(3)).unwrap(), want.as_bytes());
        // Each held connection is served in turn once the one before it is closed.
        let _ = s.shutdown(std::net::Shutdown::Both);
    }
}
