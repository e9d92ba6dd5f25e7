//! Global keywords about the sockets the proxy creates, through the binary and against
//! haproxy 2.6: `tune.rcvbuf.client|server` and `tune.sndbuf.client|server` (the buffer
//! sizes the kernel reports for the accepted and the server connection, read with
//! `ss -m`), and `unix-bind` (the path, mode and owner of a unix `bind` socket file, and
//! that it serves). HAProxy counterparts: `session_accept_fd()` (src/session.c),
//! `tcp_connect_server()` (src/proto_tcp.c), `sock_unix_bind_receiver()` (src/sock_unix.c).

mod netutil;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use netutil::{free_port, ManualServer, Scratch};
use rampart_testkit::Proxy;

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// What one run showed: (rcvbuf, sndbuf) of the proxy's client socket and server socket as
/// the kernel reports them (doubled from what was asked), and the unix socket file's mode,
/// uid and gid, and whether a connection to it reached the server.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    client: (u64, u64),
    server: (u64, u64),
    unix: (u32, u32, u32),
    unix_serves: bool,
}

/// `rb` and `tb` of the socket `src` -> `dst` from `ss -tnm`.
fn skmem(src: SocketAddr, dst: SocketAddr) -> (u64, u64) {
    let out = std::process::Command::new("ss")
        .args(["-tnmH", "src", &src.to_string(), "dst", &dst.to_string()])
        .output()
        .expect("ss runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let mem = text.split("skmem:(").nth(1).unwrap_or_else(|| panic!("no socket {src} -> {dst} in: {text}"));
    let field = |name: &str| -> u64 {
        mem.split([',', ')'])
            .find_map(|f| f.strip_prefix(name).and_then(|v| v.parse().ok()))
            .unwrap_or_else(|| panic!("no {name} in {mem}"))
    };
    (field("rb"), field("tb"))
}

fn run(binary: &Path, name: &str) -> Seen {
    let dir = Scratch::new(name);
    let server = ManualServer::start();
    let port = free_port();
    let cfg = format!(
        "global\n  tune.rcvbuf.client 32768\n  tune.sndbuf.client 40960\n  tune.rcvbuf.server 49152\n  \
         tune.sndbuf.server 57344\n  unix-bind prefix {dir}/ mode 640 uid 1 gid 2\n\
         defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe\n  bind 127.0.0.1:{port}\n  bind unix@fe.sock\n  server s1 {srv}\n",
        dir = dir.path().display(),
        srv = server.addr(),
    );
    let _p = Proxy::new(binary).config(&cfg).start().expect("proxy starts");
    let fe = SocketAddr::from(([127, 0, 0, 1], port));
    let client = TcpStream::connect(fe).expect("connect");
    let back = server.accept();
    let (client_sock, back_sock) = (client.local_addr().unwrap(), back.peer_addr().unwrap());
    let seen_client = skmem(fe, client_sock);
    let seen_server = skmem(back_sock, server.addr());
    drop((client, back));
    let sock = dir.path().join("fe.sock");
    let meta = std::fs::metadata(&sock).expect("the socket file is at prefix + path");
    let mut ux = std::os::unix::net::UnixStream::connect(&sock).expect("connect to the unix bind");
    ux.write_all(b"ping").unwrap();
    let mut via_unix = server.accept();
    via_unix.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut got = [0u8; 4];
    let unix_serves = std::io::Read::read_exact(&mut via_unix, &mut got).is_ok() && &got == b"ping";
    Seen { client: seen_client, server: seen_server, unix: (meta.mode() & 0o7777, meta.uid(), meta.gid()), unix_serves }
}

#[test]
fn socket_buffers_and_unix_bind_as_haproxy() {
    let rampart = run(Path::new(RAMPART), "sockets-rampart");
    // Linux doubles the sizes it is given.
    let want = Seen { client: (65536, 81920), server: (98304, 114688), unix: (0o640, 1, 2), unix_serves: true };
    assert_eq!(rampart, want);
    let Some(haproxy) = rampart_testkit::haproxy_or_skip("socket_buffers_and_unix_bind_as_haproxy") else {
        return;
    };
    assert_eq!(run(&haproxy, "sockets-haproxy"), want, "haproxy");
}
