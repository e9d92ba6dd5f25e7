//! The production start-up order, through the real binary run as root: `chroot` to a
//! directory holding nothing but a log socket, `user`/`group`, and every file the configuration names readable by
//! root only (certificate, CA file, ticket keys, errorfile, map). HAProxy reads them all,
//! binds, then creates the pidfile, chroots and drops privileges (`main()` in haproxy.c);
//! rampart must too, in the foreground and as a daemon (`-D`). A `log` target to a unix
//! socket is looked up inside the chroot once serving, as HAProxy sends each line to its
//! path (a socket at the same path outside gets nothing), and its dates are in the
//! local time zone (`TZ`, whose zone file is outside the chroot). Each scenario runs
//! through rampart then, when installed, haproxy: both must serve the same.
//!
//! Skipped, with a `SKIPPED` line, unless the tests run as root (CI does).

mod netutil;
mod test_pki;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::unistd::{Group, User};
use rampart_testkit::strict::{self, Parsed};
use rampart_testkit::{spawn_guarded, HttpBackend, Proxy};

const WAIT: Duration = Duration::from_secs(5);

/// The time zone the proxies run with.
const TZ: &str = "Europe/Paris";

/// The errorfile `be_down`'s 503 is answered with.
const PAGE_503: &str =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\nmaintenance\n";

/// Whether the tests run as root; if not, says so on the process's stderr (visible
/// in a normal `cargo test` run, as the testkit's own skips).
fn running_as_root(test: &str) -> bool {
    let root = nix::unistd::geteuid().is_root();
    if !root {
        let line = format!("SKIPPED {test}: needs root to chroot and change user\n");
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
    root
}

/// The files of one test: a directory of root-only files (mode 0600), and a directory
/// to chroot to (empty but for the log socket).
struct Site {
    files: PathBuf,
    root: PathBuf,
    ca: rcgen::Certificate,
}

impl Site {
    fn new(tag: &str) -> Site {
        let files = test_pki::fresh_dir(&format!("chroot-files-{tag}"));
        let root = test_pki::fresh_dir(&format!("chroot-root-{tag}"));
        let (ca, ca_key) = test_pki::ca("Rampart Test CA");
        let keys: Vec<String> =
            (1..=3u8).map(|i| base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [i; 48])).collect();
        for (name, text) in [
            ("ca.pem", ca.pem()),
            ("site.pem", test_pki::leaf_pem(&["app.test"], &ca, &ca_key)),
            ("tickets.key", keys.join("\n") + "\n"),
            ("503.http", PAGE_503.to_owned()),
            ("hosts.map", "app.test be_app\n".to_owned()),
        ] {
            let path = files.join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        Site { files, root, ca }
    }

    fn file(&self, name: &str) -> String {
        self.files.join(name).display().to_string()
    }

    /// The configuration: `bind` is the start of the bind line, `server` the address
    /// of `be_app`'s server.
    fn config(&self, bind: &str, server: &str) -> String {
        let nobody = User::from_name("nobody").unwrap().expect("user nobody");
        let group = Group::from_gid(nobody.gid).unwrap().expect("nobody's group");
        format!(
            "global\n  nbthread 1\n  chroot {root}\n  user nobody\n  group {group}\n\
             defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n  \
             errorfile 503 {page}\n\
             frontend fe1\n  {bind} ssl crt {crt} ca-file {ca} verify optional tls-ticket-keys {keys}\n  \
             log {log} local0\n  log-format \"%ST %b %[date,ltime(%z)] %Tl\"\n  \
             use_backend %[req.hdr(host),lower,map({map},be_down)]\n\
             backend be_app\n  server s1 {server}\n\
             backend be_down\n",
            root = self.root.display(),
            group = group.name,
            page = self.file("503.http"),
            crt = self.file("site.pem"),
            ca = self.file("ca.pem"),
            keys = self.file("tickets.key"),
            map = self.file("hosts.map"),
            log = self.file("log.sock"),
        )
    }

    /// The unix datagram sockets at the path of the `log` target: inside the chroot
    /// (where the lines must go), and outside it. Both writable by nobody.
    fn log_sockets(&self) -> (UnixDatagram, UnixDatagram) {
        let outside = self.files.join("log.sock");
        let inside = self.root.join(outside.strip_prefix("/").unwrap());
        std::fs::create_dir_all(inside.parent().unwrap()).unwrap();
        let bind = |path: &Path| {
            let _ = std::fs::remove_file(path);
            let sock = UnixDatagram::bind(path).unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666)).unwrap();
            sock.set_read_timeout(Some(WAIT)).unwrap();
            sock
        };
        (bind(&inside), bind(&outside))
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.files);
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// What a client and the log sockets saw: the status and body for `app.test` (mapped to
/// `be_app`) and for `other.test` (not in the map: `be_down`, no server, the 503
/// errorfile), then the request log lines without their syslog header, inside the
/// chroot and outside.
#[derive(Debug, PartialEq, Eq)]
struct Served {
    app: (u16, String),
    down: (u16, String),
    logs: Vec<String>,
    logs_outside: Vec<String>,
}

/// `GET /` over TLS (SNI `app.test`, verified against the CA) with `Host: host`, read
/// until the close: the status and the body.
fn https_get(addr: SocketAddr, ca: &rcgen::Certificate, host: &str) -> (u16, String) {
    let cfg = Arc::new(test_pki::client_config(ca, None));
    let name = rustls_pki_types::ServerName::try_from("app.test").unwrap();
    let conn = rustls::ClientConnection::new(cfg, name).unwrap();
    let tcp = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect to {addr}: {e} (is the proxy gone?)"));
    tcp.set_read_timeout(Some(WAIT)).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    tls.write_all(format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes()).unwrap();
    let mut got = Vec::new();
    // a close without close_notify ends the read with an error: what came before counts
    let _ = tls.read_to_end(&mut got);
    match strict::response(&got, "GET", true) {
        Parsed::Complete(m) => (m.first.parse().unwrap_or(0), String::from_utf8_lossy(&m.body).into_owned()),
        other => panic!("{host}: {other:?} in {:?}", String::from_utf8_lossy(&got)),
    }
}

/// The log lines of the two requests, waiting up to `wait` for them, as `<status>
/// <backend> <zone of ltime> <zone of the log date>`, a zone being `Paris` for the
/// offsets of Europe/Paris; other lines (a proxy starting) are skipped.
fn request_logs(sock: &UnixDatagram, wait: Duration) -> Vec<String> {
    sock.set_read_timeout(Some(wait)).unwrap();
    let mut lines = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + wait;
    while lines.len() < 2 && Instant::now() < deadline {
        let Ok(n) = sock.recv(&mut buf) else { break };
        let line = String::from_utf8_lossy(&buf[..n]).into_owned();
        let msg = line.split_once("]: ").map_or(line.as_str(), |(_, m)| m).trim_end();
        let words: Vec<&str> = msg.split(' ').collect();
        if msg.starts_with(|c: char| c.is_ascii_digit()) && words.len() == 5 {
            let zone = |offset: &str| if matches!(offset, "+0100" | "+0200") { "Paris" } else { offset }.to_owned();
            lines.push(format!("{} {} {} {}", words[0], words[1], zone(words[2]), zone(words[4])));
        } else if msg.starts_with(|c: char| c.is_ascii_digit()) {
            lines.push(msg.to_owned());
        }
    }
    lines
}

fn serve(site: &Site, addr: SocketAddr, (inside, outside): &(UnixDatagram, UnixDatagram)) -> Served {
    let app = https_get(addr, &site.ca, "app.test");
    let down = https_get(addr, &site.ca, "other.test");
    let logs = request_logs(inside, WAIT);
    // they came inside: whatever else was sent went by now
    let logs_outside = request_logs(outside, Duration::from_millis(100));
    Served { app, down, logs, logs_outside }
}

fn expected() -> Served {
    Served {
        app: (200, "s1".into()),
        down: (503, "maintenance\n".into()),
        logs: vec!["200 be_app Paris Paris".into(), "503 be_down Paris Paris".into()],
        logs_outside: Vec::new(),
    }
}

/// Process `pid` runs as nobody, chrooted to `root`.
fn assert_confined(pid: u32, root: &Path, what: &str) {
    let nobody = User::from_name("nobody").unwrap().expect("user nobody");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let uid = status.lines().find_map(|l| l.strip_prefix("Uid:")).unwrap();
    let uid: Vec<u32> = uid.split_whitespace().map(|v| v.parse().unwrap()).collect();
    assert_eq!(uid, [nobody.uid.as_raw(); 4], "{what}: {status}");
    let seen = std::fs::read_link(format!("/proc/{pid}/root")).unwrap();
    assert_eq!(seen, root.canonicalize().unwrap(), "{what}: its root directory");
}

/// Runs the foreground scenario with `binary`; what it served.
fn foreground(binary: &Path, tag: &str) -> Served {
    let site = Site::new(tag);
    let logs = site.log_sockets();
    let s1 = HttpBackend::start("s1");
    let proxy = Proxy::new(binary)
        .listener("fe1")
        .backend("s1", s1.addr())
        .env("TZ", TZ)
        .config(&site.config("bind fd@${fe1}", "${s1_addr}:${s1_port}"))
        .start()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", binary.display()));
    let served = serve(&site, proxy.addr("fe1"), &logs);
    assert_confined(proxy.pid(), &site.root, &binary.display().to_string());
    served
}

#[test]
fn root_only_files_are_read_before_chroot_and_user() {
    if !running_as_root("process_chroot::root_only_files_are_read_before_chroot_and_user") {
        return;
    }
    let rampart = netutil::binary();
    let served = foreground(&rampart, "fg-rampart");
    assert_eq!(served, expected());
    if let Some(haproxy) =
        rampart_testkit::haproxy_or_skip("process_chroot::root_only_files_are_read_before_chroot_and_user")
    {
        assert_eq!(foreground(&haproxy, "fg-haproxy"), served, "haproxy serves otherwise");
    }
}

// === daemon ===

/// A daemon started by a test, killed on drop.
struct Daemon(i32);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.0), nix::sys::signal::Signal::SIGKILL);
        netutil::wait_pid_gone(self.0, WAIT);
    }
}

/// Runs the daemon scenario (`-D -p <pidfile>`) with `binary`; what it served.
fn daemon(binary: &Path, tag: &str) -> Served {
    let site = Site::new(tag);
    let logs = site.log_sockets();
    let s1 = HttpBackend::start("s1");
    let port = netutil::free_port();
    let scratch = netutil::Scratch::new(&format!("chroot-{tag}"));
    scratch.file("d.cfg", &site.config(&format!("bind 127.0.0.1:{port}"), &s1.addr().to_string()));
    let mut cmd = Command::new(binary);
    cmd.args(["-D", "-p", "d.pid", "-f", "d.cfg"]).current_dir(scratch.path()).env("TZ", TZ);
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let out = spawn_guarded(&mut cmd).and_then(|c| c.wait_with_output()).expect("run the binary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}: {stderr}", binary.display());
    let pid = std::fs::read_to_string(scratch.path().join("d.pid")).unwrap();
    let daemon = Daemon(pid.trim_end().parse().unwrap_or_else(|_| panic!("pidfile holds {pid:?}")));
    let served = serve(&site, SocketAddr::from(([127, 0, 0, 1], port)), &logs);
    assert_confined(daemon.0 as u32, &site.root, &binary.display().to_string());
    served
}

#[test]
fn a_daemon_reads_root_only_files_before_chroot_and_user() {
    if !running_as_root("process_chroot::a_daemon_reads_root_only_files_before_chroot_and_user") {
        return;
    }
    let rampart = netutil::binary();
    let served = daemon(&rampart, "d-rampart");
    assert_eq!(served, expected());
    if let Some(haproxy) =
        rampart_testkit::haproxy_or_skip("process_chroot::a_daemon_reads_root_only_files_before_chroot_and_user")
    {
        assert_eq!(daemon(&haproxy, "d-haproxy"), served, "haproxy serves otherwise");
    }
}
