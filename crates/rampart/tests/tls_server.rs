//! TLS towards servers end to end: rampart proxies plain HTTP from the client to a TLS
//! test server (rustls, certificates made by rcgen) and the test asserts what that
//! server saw: SNI, ALPN, the client certificate, resumed handshakes, how many TLS
//! connections carried the requests. A wrong CA gives 503 and a DOWN check with
//! HAProxy's Layer6 status; the same server lines are accepted or refused as
//! `haproxy -c` does.

// The test server is test infrastructure, never on the request path: a std mutex is fine.
#![allow(clippy::disallowed_types)]

mod test_pki;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rampart_testkit::{check, haproxy_or_skip, patience, Proxy, RawClient, Running};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{HandshakeKind, RootCertStore, ServerConfig, ServerConnection, StreamOwned};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

const DEFAULTS: &str = "defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 2s\n";

// === fixtures ===

/// A CA and what it signed, written as PEM files in a directory of their own.
struct Pki {
    dir: PathBuf,
    ca: rcgen::Certificate,
    ca_key: rcgen::KeyPair,
}

impl Pki {
    fn new(tag: &str) -> Pki {
        let dir = test_pki::fresh_dir(&format!("tls-server-{tag}"));
        let (ca, ca_key) = test_pki::ca(&format!("test CA {tag}"));
        std::fs::write(dir.join("ca.pem"), ca.pem()).expect("write");
        Pki { dir, ca, ca_key }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// A leaf for `names`, written as `<file>` (chain then key); returns it for rustls.
    fn leaf(&self, names: &[&str], file: &str) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
        let key = rcgen::KeyPair::generate().expect("key");
        let params =
            rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).expect("params");
        let cert = params.signed_by(&key, &self.ca, &self.ca_key).expect("leaf");
        std::fs::write(self.path(file), format!("{}{}", cert.pem(), key.serialize_pem())).expect("write");
        let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        (vec![cert.der().clone()], der)
    }

    fn roots(&self) -> RootCertStore {
        let mut roots = RootCertStore::empty();
        roots.add(self.ca.der().clone()).expect("root");
        roots
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

// === the TLS test server ===

/// What the TLS server saw of one request.
#[derive(Debug, Clone)]
struct Seen {
    /// Which TLS connection (in accept order) carried it.
    conn: usize,
    sni: Option<String>,
    alpn: Option<String>,
    resumed: bool,
    client_cert: bool,
    head: String,
}

/// A TLS HTTP/1.1 server answering `200 ok` to every request, keeping connections
/// open, and recording what it saw.
struct TlsBackend {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl TlsBackend {
    fn start(config: ServerConfig) -> TlsBackend {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (config, log) = (Arc::new(config), seen.clone());
        std::thread::spawn(move || {
            for (id, tcp) in listener.incoming().enumerate() {
                let Ok(tcp) = tcp else { continue };
                let (config, log) = (config.clone(), log.clone());
                std::thread::spawn(move || serve(id, tcp, config, &log));
            }
        });
        TlsBackend { addr, seen }
    }

    /// The same on a unix socket at `path`.
    fn start_unix(config: ServerConfig, path: &Path) -> TlsBackend {
        let listener = std::os::unix::net::UnixListener::bind(path).expect("bind");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (config, log) = (Arc::new(config), seen.clone());
        std::thread::spawn(move || {
            for (id, sock) in listener.incoming().enumerate() {
                let Ok(sock) = sock else { continue };
                let (config, log) = (config.clone(), log.clone());
                std::thread::spawn(move || serve(id, sock, config, &log));
            }
        });
        TlsBackend { addr: "0.0.0.0:0".parse().expect("addr"), seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("lock").clone()
    }

    /// The `n` first requests, waiting for them.
    fn wait(&self, n: usize) -> Vec<Seen> {
        let deadline = Instant::now() + patience();
        loop {
            let seen = self.seen();
            if seen.len() >= n || Instant::now() > deadline {
                return seen;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn serve<T: Read + Write>(id: usize, tcp: T, config: Arc<ServerConfig>, log: &Mutex<Vec<Seen>>) {
    let Ok(conn) = ServerConnection::new(config) else { return };
    let mut tls = StreamOwned::new(conn, tcp);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            match tls.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end + 4]).into_owned();
        buf.drain(..end + 4);
        let c = &tls.conn;
        log.lock().expect("lock").push(Seen {
            conn: id,
            sni: c.server_name().map(str::to_owned),
            alpn: c.alpn_protocol().map(|a| String::from_utf8_lossy(a).into_owned()),
            resumed: c.handshake_kind() == Some(HandshakeKind::Resumed),
            client_cert: c.peer_certificates().is_some_and(|p| !p.is_empty()),
            head,
        });
        if tls.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").is_err() {
            return;
        }
    }
}

/// A server certificate for `srv.test` from `pki`; ALPN `http/1.1`; a client
/// certificate signed by `client_ca` is required when given.
fn server_config(pki: &Pki, client_ca: Option<&Pki>) -> ServerConfig {
    let (chain, key) = pki.leaf(&["srv.test"], "srv.pem");
    let builder = ServerConfig::builder();
    let builder = match client_ca {
        Some(ca) => builder
            .with_client_cert_verifier(WebPkiClientVerifier::builder(Arc::new(ca.roots())).build().expect("verifier")),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(chain, key).expect("server config");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

// === helpers ===

fn start(body: &str, server: SocketAddr) -> Running {
    Proxy::new(RAMPART)
        .listener("fe1")
        .backend("s1", server)
        .config(&format!("{DEFAULTS}{body}"))
        .start()
        .expect("proxy starts")
}

/// One request on a new client connection; its status and body.
fn get(proxy: &Running, host: &str) -> (u16, Vec<u8>) {
    let mut c = RawClient::connect(proxy.addr("fe1")).expect("connect");
    c.send(format!("GET /x HTTP/1.1\r\nHost: {host}\r\n\r\n")).expect("send");
    let r = c.read_response().expect("response");
    (r.status, r.body)
}

fn ca(pki: &Pki) -> String {
    pki.path("ca.pem").display().to_string()
}

// === tests ===

#[test]
fn verified_tls_with_sni_and_alpn() {
    let pki = Pki::new("verified");
    let srv = TlsBackend::start(server_config(&pki, None));
    let proxy = start(
        &format!(
            "listen fe1\n bind fd@${{fe1}}\n http-reuse never\n \
             server s1 ${{s1_addr}}:${{s1_port}} ssl verify required ca-file {} sni req.hdr(host) alpn http/1.1\n",
            ca(&pki)
        ),
        srv.addr,
    );
    assert_eq!(get(&proxy, "srv.test"), (200, b"ok".to_vec()));
    let seen = srv.wait(1);
    assert_eq!(seen[0].sni.as_deref(), Some("srv.test"));
    assert_eq!(seen[0].alpn.as_deref(), Some("http/1.1"));
    assert!(seen[0].head.starts_with("GET /x HTTP/1.1\r\n"), "{}", seen[0].head);
    assert!(seen[0].head.contains("host: srv.test\r\n"), "{}", seen[0].head);
    // the certificate does not name other.test: the SNI is checked, as in HAProxy
    assert_eq!(get(&proxy, "other.test").0, 503);
    assert_eq!(srv.seen().len(), 1);
}

#[test]
fn without_sni_only_the_chain_is_checked() {
    let pki = Pki::new("nosni");
    let srv = TlsBackend::start(server_config(&pki, None));
    let proxy = start(
        &format!("listen fe1\n bind fd@${{fe1}}\n server s1 ${{s1_addr}}:${{s1_port}} ssl ca-file {}\n", ca(&pki)),
        srv.addr,
    );
    assert_eq!(get(&proxy, "anything").0, 200);
    let seen = srv.wait(1);
    assert_eq!((seen[0].sni.as_deref(), seen[0].alpn.as_deref()), (None, None));
}

#[test]
fn wrong_ca_gives_503_and_a_layer6_check_failure() {
    let (pki, other) = (Pki::new("wrong"), Pki::new("wrong-other"));
    let srv = TlsBackend::start(server_config(&pki, None));
    let proxy = start(
        &format!(
            "global\n stats socket ${{testdir}}/admin.sock level admin\n\
             listen fe1\n bind fd@${{fe1}}\n retries 1\n option httpchk GET /\n \
             server s1 ${{s1_addr}}:${{s1_port}} ssl verify required ca-file {} check inter 1s fall 1\n",
            ca(&other)
        ),
        srv.addr,
    );
    assert!(proxy.wait_output("Layer6 invalid response", patience() * 2), "no Layer6 failure in:\n{}", proxy.output());
    assert!(proxy.output().contains("info: \"SSL handshake failure\""), "{}", proxy.output());
    // the check's log line may come a moment before the stats see its result
    let deadline = std::time::Instant::now() + patience();
    let row = loop {
        let row = stat_row(&proxy.dir().join("admin.sock"), "fe1,s1");
        if row["status"] == "DOWN" || std::time::Instant::now() > deadline {
            break row;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!((row["status"].as_str(), row["check_status"].as_str()), ("DOWN", "L6RSP"));
    // with the server DOWN, the request finds no server
    assert_eq!(get(&proxy, "srv.test").0, 503);
    assert!(srv.seen().is_empty());
}

#[test]
fn wrong_ca_on_traffic_is_a_connection_failure() {
    let (pki, other) = (Pki::new("wrong-traffic"), Pki::new("wrong-traffic-other"));
    let srv = TlsBackend::start(server_config(&pki, None));
    let proxy = start(
        &format!(
            "listen fe1\n bind fd@${{fe1}}\n retries 1\n timeout connect 200ms\n \
             server s1 ${{s1_addr}}:${{s1_port}} ssl verify required ca-file {}\n",
            ca(&other)
        ),
        srv.addr,
    );
    assert_eq!(get(&proxy, "srv.test").0, 503);
    assert!(srv.seen().is_empty());
}

#[test]
fn tls_checks_pass_with_layer6_or_layer7() {
    let pki = Pki::new("checks");
    let srv = TlsBackend::start(server_config(&pki, None));
    let proxy = start(
        &format!(
            "global\n stats socket ${{testdir}}/admin.sock level admin\n\
             listen fe1\n bind fd@${{fe1}}\n \
             server s1 ${{s1_addr}}:${{s1_port}} ssl verify none check inter 500ms\n\
             backend b7\n option httpchk GET /health\n \
             server s1 ${{s1_addr}}:${{s1_port}} check-ssl verify required ca-file {} check-sni srv.test check inter 500ms\n",
            ca(&pki)
        ),
        srv.addr,
    );
    let admin = proxy.dir().join("admin.sock");
    let deadline = Instant::now() + patience();
    loop {
        let (l6, l7) = (stat_row(&admin, "fe1,s1"), stat_row(&admin, "b7,s1"));
        if l6["check_status"] == "L6OK" && l7["check_status"] == "L7OK" {
            break;
        }
        assert!(Instant::now() < deadline, "checks: {} {}", l6["check_status"], l7["check_status"]);
        std::thread::sleep(Duration::from_millis(50));
    }
    let health = srv.seen().into_iter().find(|s| s.head.starts_with("GET /health")).expect("an HTTP check");
    assert_eq!(health.sni.as_deref(), Some("srv.test"));
}

#[test]
fn verify_none_accepts_any_certificate() {
    let (pki, other) = (Pki::new("none"), Pki::new("none-other"));
    let srv = TlsBackend::start(server_config(&pki, None));
    let proxy = start(
        &format!(
            "listen fe1\n bind fd@${{fe1}}\n server s1 ${{s1_addr}}:${{s1_port}} ssl verify none ca-file {}\n",
            ca(&other)
        ),
        srv.addr,
    );
    assert_eq!(get(&proxy, "srv.test"), (200, b"ok".to_vec()));
}

#[test]
fn tcp_mode_forwards_through_tls() {
    let pki = Pki::new("tcp");
    let srv = TlsBackend::start(server_config(&pki, None));
    let proxy = start(
        &format!(
            "listen fe1\n mode tcp\n bind fd@${{fe1}}\n server s1 ${{s1_addr}}:${{s1_port}} ssl ca-file {} sni str(srv.test)\n",
            ca(&pki)
        ),
        srv.addr,
    );
    let mut c = RawClient::connect(proxy.addr("fe1")).expect("connect");
    c.send("GET /tcp HTTP/1.1\r\nHost: x\r\n\r\n").expect("send");
    let r = c.read_response().expect("response");
    assert_eq!((r.status, r.body.as_slice()), (200, &b"ok"[..]));
    let seen = srv.wait(1);
    assert_eq!(
        (seen[0].head.as_str(), seen[0].sni.as_deref()),
        ("GET /tcp HTTP/1.1\r\nHost: x\r\n\r\n", Some("srv.test"))
    );
}

#[test]
fn unix_socket_server_over_tls() {
    let pki = Pki::new("unix");
    let path = pki.path("srv.sock");
    let srv = TlsBackend::start_unix(server_config(&pki, None), &path);
    let proxy = start(
        &format!(
            "listen fe1\n bind fd@${{fe1}}\n server s1 {} ssl ca-file {} sni str(srv.test)\n",
            path.display(),
            ca(&pki)
        ),
        srv.addr,
    );
    assert_eq!(get(&proxy, "x"), (200, b"ok".to_vec()));
    assert_eq!(srv.wait(1)[0].sni.as_deref(), Some("srv.test"));
}

#[test]
fn each_server_announces_its_own_sni() {
    let pki = Pki::new("snis");
    let srv = TlsBackend::start(server_config(&pki, None));
    let proxy = start(
        "listen fe1\n bind fd@${fe1}\n balance roundrobin\n http-reuse never\n \
         server a ${s1_addr}:${s1_port} ssl verify none sni str(a.test)\n \
         server b ${s1_addr}:${s1_port} ssl verify none sni str(b.test)\n \
         server c ${s1_addr}:${s1_port} ssl verify none\n",
        srv.addr,
    );
    for _ in 0..3 {
        assert_eq!(get(&proxy, "x").0, 200);
    }
    let mut snis: Vec<Option<String>> = srv.wait(3).into_iter().map(|s| s.sni).collect();
    snis.sort();
    assert_eq!(snis, [None, Some("a.test".to_owned()), Some("b.test".to_owned())]);
}

#[test]
fn client_certificate_is_presented() {
    let (pki, clients) = (Pki::new("mtls"), Pki::new("mtls-clients"));
    clients.leaf(&["rampart.test"], "client.pem");
    let srv = TlsBackend::start(server_config(&pki, Some(&clients)));
    let crt = clients.path("client.pem").display().to_string();
    let proxy = start(
        &format!(
            "listen fe1\n bind fd@${{fe1}}\n http-reuse never\n use_backend b2 if {{ path_beg /nocert }}\n \
             server s1 ${{s1_addr}}:${{s1_port}} ssl ca-file {ca} crt {crt}\n\
             backend b2\n server s2 ${{s1_addr}}:${{s1_port}} ssl ca-file {ca}\n",
            ca = ca(&pki)
        ),
        srv.addr,
    );
    assert_eq!(get(&proxy, "srv.test").0, 200);
    assert!(srv.wait(1)[0].client_cert);
    // the server requires one: without it the server refuses the handshake. Under
    // TLSv1.3 the client's side of the handshake is over before the server judges its
    // certificate (as with OpenSSL), so the refusal arrives instead of the response: 502.
    let mut c = RawClient::connect(proxy.addr("fe1")).expect("connect");
    c.send("GET /nocert HTTP/1.1\r\nHost: x\r\n\r\n").expect("send");
    assert_eq!(c.read_response().expect("response").status, 502);
    assert_eq!(srv.seen().len(), 1);
}

#[test]
fn sessions_resume_unless_no_ssl_reuse() {
    let pki = Pki::new("resume");
    let srv = TlsBackend::start(server_config(&pki, None));
    let proxy = start(
        &format!(
            "listen fe1\n bind fd@${{fe1}}\n http-reuse never\n use_backend b2 if {{ path_beg /noreuse }}\n \
             http-after-response set-header x-bc \"%[ssl_bc] %[ssl_bc_protocol] %[ssl_bc_is_resumed] %[ssl_bc_alpn]\"\n \
             server s1 ${{s1_addr}}:${{s1_port}} ssl ca-file {ca} alpn http/1.1\n\
             backend b2\n http-reuse never\n server s2 ${{s1_addr}}:${{s1_port}} ssl ca-file {ca} no-ssl-reuse\n",
            ca = ca(&pki)
        ),
        srv.addr,
    );
    let mut bc = Vec::new();
    for _ in 0..3 {
        let mut c = RawClient::connect(proxy.addr("fe1")).expect("connect");
        c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n").expect("send");
        let r = c.read_response().expect("response");
        assert_eq!(r.status, 200);
        bc.push(r.headers.get("x-bc").unwrap_or_default().to_owned());
    }
    // what the handshakes negotiated, as the ssl_bc* fetches see it
    assert_eq!(bc, ["1 TLSv1.3 0 http/1.1", "1 TLSv1.3 1 http/1.1", "1 TLSv1.3 1 http/1.1"]);
    let seen = srv.wait(3);
    let conns: Vec<_> = seen.iter().map(|s| s.conn).collect();
    assert_eq!(conns, [0, 1, 2], "http-reuse never: one connection per request");
    assert_eq!(seen.iter().map(|s| s.resumed).collect::<Vec<_>>(), [false, true, true]);
    for _ in 0..2 {
        let mut c = RawClient::connect(proxy.addr("fe1")).expect("connect");
        c.send("GET /noreuse HTTP/1.1\r\nHost: x\r\n\r\n").expect("send");
        assert_eq!(c.read_response().expect("response").status, 200);
    }
    let seen = srv.wait(5);
    assert_eq!(seen[3..].iter().map(|s| s.resumed).collect::<Vec<_>>(), [false, false]);
}

#[test]
fn idle_tls_connections_are_reused() {
    let pki = Pki::new("pool");
    let srv = TlsBackend::start(server_config(&pki, None));
    let proxy = start(
        &format!(
            "global\n nbthread 1\nlisten fe1\n bind fd@${{fe1}}\n http-reuse always\n \
             server s1 ${{s1_addr}}:${{s1_port}} ssl ca-file {} sni req.hdr(host)\n",
            ca(&pki)
        ),
        srv.addr,
    );
    for host in ["srv.test", "srv.test", "srv.test"] {
        assert_eq!(get(&proxy, host).0, 200);
        // the connection is parked just after the response leaves: let it get there
        // (idle connections are per thread: one thread here)
        std::thread::sleep(Duration::from_millis(50));
    }
    let seen = srv.wait(3);
    assert_eq!(seen.iter().map(|s| s.conn).collect::<Vec<_>>(), [0, 0, 0], "one TLS connection for all");
    // another SNI needs a connection of its own (this certificate does not name it)
    assert_eq!(get(&proxy, "other.test").0, 503);
}

#[test]
fn idle_tls_connections_move_between_threads() {
    // clients land on either thread; the TLS connection (socket and session) is taken
    // over by the thread that needs it
    let pki = Pki::new("pool-threads");
    let srv = TlsBackend::start(server_config(&pki, None));
    let proxy = start(
        &format!(
            "global\n nbthread 2\nlisten fe1\n bind fd@${{fe1}}\n http-reuse always\n \
             server s1 ${{s1_addr}}:${{s1_port}} ssl ca-file {} sni req.hdr(host)\n",
            ca(&pki)
        ),
        srv.addr,
    );
    for _ in 0..20 {
        assert_eq!(get(&proxy, "srv.test").0, 200);
        std::thread::sleep(Duration::from_millis(5));
    }
    let seen = srv.wait(20);
    assert_eq!(seen.iter().map(|s| s.conn).collect::<Vec<_>>(), [0; 20], "one TLS connection for all");
}

#[test]
fn server_lines_accepted_and_refused_as_haproxy() {
    let pki = Pki::new("diff");
    let ca = ca(&pki);
    let cases = [
        "backend b\n server s 127.0.0.1:443 ssl\n".to_owned(),
        "backend b\n server s 127.0.0.1:443 ssl ca-file /nonexistent/ca.pem\n".to_owned(),
        "backend b\n server s 127.0.0.1:443 ssl verify maybe\n".to_owned(),
        "backend b\n server s 127.0.0.1:443 ssl verify none ssl-min-ver TLSv1.3 ssl-max-ver TLSv1.2\n".to_owned(),
        format!("backend b\n server s 127.0.0.1:443 ssl verify required ca-file {ca} sni str(x) alpn http/1.1\n"),
        "global\n ssl-server-verify none\nbackend b\n server s 127.0.0.1:443 ssl no-ssl-reuse no-tls-tickets\n"
            .to_owned(),
        "global\n ssl-default-server-options no-sslv3 bogus\n".to_owned(),
    ];
    let haproxy = haproxy_or_skip("server_lines_accepted_and_refused_as_haproxy");
    for case in &cases {
        let text = format!("{DEFAULTS}{case}");
        let ours = check(RAMPART, &text);
        let Some(haproxy) = &haproxy else { continue };
        let theirs = check(haproxy, &text);
        assert_eq!(ours.code == 0, theirs.code == 0, "{case}\nrampart: {}\nhaproxy: {}", ours.stderr, theirs.stderr);
        let alerts = |o: &rampart_testkit::CheckOutput| {
            o.diagnostics().into_iter().filter(|l| l.starts_with("[ALERT]") && l.contains("'server b/s'")).count()
        };
        assert_eq!(alerts(&ours), alerts(&theirs), "{case}\nrampart: {}\nhaproxy: {}", ours.stderr, theirs.stderr);
    }
    let ours = check(RAMPART, &format!("{DEFAULTS}{}", cases[0]));
    assert!(
        ours.stderr.contains("'server b/s' : verify is enabled by default but no CA file specified."),
        "{}",
        ours.stderr
    );
}

// === stats ===

fn stat_row(sock: &Path, row: &str) -> std::collections::HashMap<String, String> {
    use std::os::unix::net::UnixStream;
    let mut s = UnixStream::connect(sock).expect("stats socket");
    s.write_all(b"show stat\n").expect("write");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read");
    let mut lines = out.lines();
    let header: Vec<String> =
        lines.next().expect("header").trim_start_matches("# ").split(',').map(str::to_owned).collect();
    let line = lines.find(|l| l.starts_with(&format!("{row},"))).unwrap_or_else(|| panic!("no {row} in {out}"));
    header.into_iter().zip(line.split(',').map(str::to_owned)).collect()
}
