//! Shared by the resolver tests (`resolvers`, `resolvers_diff`, `resolvers_state`): a
//! one-line HTTP server, two listeners on one port (127.0.0.1 and 127.0.0.2, for an
//! address that moves), the admin socket's answers, `show servers state` rows, and
//! Debian's dnsmasq started for a test.
//!
//! Each test file includes this module and uses part of it.
#![allow(dead_code)] // each test file uses a different subset

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};

use rampart_testkit::{stats_command, Dnsmasq, Running};

/// The binary under test.
pub const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// Debian's dnsmasq for `test`, or `None` (the test returns) when it is not installed.
pub fn dnsmasq(test: &str) -> Option<Dnsmasq> {
    Dnsmasq::start_or_skip(test)
}

/// An HTTP server on `listener` answering `body`, the connection closed after each.
pub fn tiny_http(listener: TcpListener, body: &'static str) {
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let reply = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
            let _ = conn.write_all(reply.as_bytes());
        }
    });
}

/// Two listeners on one port, on 127.0.0.1 and 127.0.0.2.
pub fn same_port_pair() -> (TcpListener, TcpListener, u16) {
    loop {
        let a = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = a.local_addr().expect("addr").port();
        if let Ok(b) = TcpListener::bind(SocketAddr::from(([127, 0, 0, 2], port))) {
            return (a, b, port);
        }
    }
}

/// The answer to `cmd` on the proxy's `admin.sock`.
pub fn cli(proxy: &Running, cmd: &str) -> String {
    stats_command(&proxy.dir().join("admin.sock"), cmd)
}

/// The server lines of `show servers state`, split into fields, the time since the
/// last change (field 9) masked.
pub fn state_rows(proxy: &Running) -> Vec<Vec<String>> {
    cli(proxy, "show servers state\n")
        .lines()
        .filter(|l| !l.starts_with('#') && l.split(' ').count() > 20)
        .map(|l| {
            let mut f: Vec<String> = l.split(' ').map(str::to_owned).collect();
            f[9] = "t".to_owned();
            f
        })
        .collect()
}

/// A nameserver that never answers: a bound socket nobody reads (kept while held).
pub fn mute_nameserver() -> std::net::UdpSocket {
    std::net::UdpSocket::bind("127.0.0.1:0").expect("bind")
}
