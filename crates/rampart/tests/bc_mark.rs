//! HAProxy 3.x's `set-bc-mark` / `set-bc-tos` (`http-request`, `tcp-request content`):
//! the netfilter mark and TOS of the server connection, set before it connects, and part
//! of the idle-connection reuse key (a connection opened with one mark is never reused
//! for a stream asking another). The server's view: which connection each request came
//! on; the socket's options read with `ss` on the proxy's side of that connection
//! (`fwmark:` needs CAP_NET_ADMIN, tests run as root; the accepted side cannot see the
//! sender's TOS with getsockopt, Linux reports the listener's own).
//! The same configuration runs through HAProxy 3.2 when `haproxy-3.2` is installed.
#![allow(clippy::disallowed_types)] // a test server's threads, not the request path

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rampart_testkit::Proxy;

/// A keep-alive HTTP/1.1 server that answers every request with the number of the
/// connection it came on, and keeps each connection's peer address.
struct Server {
    addr: SocketAddr,
    peers: Arc<Mutex<Vec<SocketAddr>>>,
}

impl Server {
    fn start() -> Server {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr");
        let peers = Arc::new(Mutex::new(Vec::new()));
        let p = peers.clone();
        std::thread::spawn(move || {
            for c in l.incoming().flatten() {
                let n = {
                    let mut v = p.lock().unwrap();
                    v.push(c.peer_addr().expect("peer"));
                    v.len()
                };
                std::thread::spawn(move || serve(c, n));
            }
        });
        Server { addr, peers }
    }
}

fn serve(c: TcpStream, n: usize) {
    let mut r = BufReader::new(c.try_clone().expect("clone"));
    let mut w = c;
    loop {
        let mut line = String::new();
        loop {
            line.clear();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
        }
        let body = n.to_string();
        let _ = write!(w, "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}", body.len());
    }
}

const CFG: &str = "global\n  nbthread 1\n\
                   defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
                   frontend fe\n  bind fd@${fe}\n\
                     http-request set-bc-mark req.hdr(x-mark) if { req.hdr(x-mark) -m found }\n\
                     http-request set-bc-tos 0x20 if { path /tos }\n  default_backend be\n\
                   backend be\n  http-reuse always\n  server s1 ${s1_addr}:${s1_port}\n";

/// One request on a new client connection; the number of the server connection that
/// carried it.
fn get(fe: SocketAddr, path: &str, mark: Option<u32>) -> usize {
    let mut c = TcpStream::connect(fe).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mark = mark.map(|m| format!("x-mark: {m}\r\n")).unwrap_or_default();
    write!(c, "GET {path} HTTP/1.1\r\nhost: x\r\n{mark}connection: close\r\n\r\n").unwrap();
    let mut out = String::new();
    let _ = c.read_to_string(&mut out);
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    out.rsplit("\r\n\r\n").next().and_then(|b| b.parse().ok()).unwrap_or_else(|| panic!("{out}"))
}

/// `ss`'s view of the proxy's socket of the server connection from `peer` to `server`:
/// its `fwmark:` and `tos:` words.
fn socket_opts(peer: SocketAddr, server: SocketAddr) -> (Option<String>, Option<String>) {
    let ss = |extra: &[&str]| {
        let filter = ["src", &peer.to_string(), "dst", &server.to_string()];
        let out = Command::new("ss").args(["-tH"]).args(extra).args(filter).output().expect("ss runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let word = |text: &str, key: &str| text.split_whitespace().find(|w| w.starts_with(key)).map(str::to_owned);
    (word(&ss(&["-e"]), "fwmark:"), word(&ss(&["-i", "--tos"]), "tos:"))
}

/// What one run saw: the connection each request came on, and the (mark, TOS) of each
/// server connection.
type Seen = (Vec<usize>, Vec<(Option<String>, Option<String>)>);

fn run(binary: &Path) -> Seen {
    let server = Server::start();
    let proxy = Proxy::new(binary).listener("fe").backend("s1", server.addr).config(CFG).start().expect("starts");
    let fe = proxy.addr("fe");
    let conns = vec![
        get(fe, "/tos", Some(42)),
        get(fe, "/tos", Some(42)),
        get(fe, "/", Some(7)),
        get(fe, "/", None),
        get(fe, "/", Some(7)),
        get(fe, "/", None),
    ];
    let peers = server.peers.lock().unwrap().clone();
    let opts = peers.iter().map(|p| socket_opts(*p, server.addr)).collect();
    (conns, opts)
}

#[test]
fn the_server_connection_gets_the_mark_and_tos_and_is_reused_only_with_them() {
    let (conns, opts) = run(Path::new(env!("CARGO_BIN_EXE_rampart")));
    // the same mark and TOS reuse the idle connection; another mark, or none, opens one
    assert_eq!(conns, [1, 1, 2, 3, 2, 3], "server connection of each request");
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(opts, [(s("fwmark:0x2a"), s("tos:0x20")), (s("fwmark:0x7"), s("tos:0")), (None, s("tos:0"))]);
}

#[test]
fn set_bc_mark_and_tos_as_haproxy_3_2_does() {
    let path =
        std::env::var_os("HAPROXY_32").map_or_else(|| PathBuf::from("/usr/local/bin/haproxy-3.2"), PathBuf::from);
    if !Command::new(&path).arg("-v").output().is_ok_and(|o| o.status.success()) {
        eprintln!("SKIPPED set_bc_mark_and_tos_as_haproxy_3_2_does: {} is not installed", path.display());
        return;
    }
    let (theirs, their_opts) = run(&path);
    let (ours, our_opts) = run(Path::new(env!("CARGO_BIN_EXE_rampart")));
    // the marked connections: opened with the mark and TOS, reused for the same ones
    // (HAProxy 3.2 then keeps fewer idle connections: [1, 1, 2, 3, 4, 5]; rampart
    // reuses its idle ones, each for the mark it was opened with)
    assert_eq!(theirs[..4], ours[..4], "{theirs:?} {ours:?}");
    // (HAProxy 3.2 may have closed its idle connections by the time `ss` looks)
    assert_eq!(their_opts[..1], our_opts[..1], "{their_opts:?} {our_opts:?}");
}

#[test]
fn set_bc_actions_are_refused_where_haproxy_3_2_refuses_them() {
    for (rule, word) in [
        ("http-response set-bc-mark 1", "set-bc-mark"),
        ("tcp-request connection set-bc-tos 1", "set-bc-tos"),
        ("http-request set-bc-mark", "set-bc-mark"),
    ] {
        let cfg = format!("defaults\n  mode http\nfrontend fe\n  bind 127.0.0.1:0\n  {rule}\n");
        let dir = std::env::temp_dir().join(format!("bc-mark-{}-{}", std::process::id(), word.len() + rule.len()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("t.cfg");
        std::fs::write(&file, &cfg).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_rampart")).arg("-c").arg("-f").arg(&file).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(word), "{rule}: {err}");
    }
}
