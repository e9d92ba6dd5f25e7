//! Syslog over TLS: a `ring` section's `server ... ssl` and a `log-forward` section's
//! `bind ... ssl crt`. First HAProxy's reg-test ssl/log_forward_ssl.vtc chain in one
//! process (frontend -> UDP log-forward -> ring -> TLS -> log-forward bind ssl -> the
//! test's UDP receiver), which must keep the pid of the proxy that logged, and the
//! same through haproxy when it is installed. Then a ring's TLS server against a TLS
//! listener of the test (rustls): the handshake verifies the certificate with
//! `verify required ca-file`, the framed line arrives exactly, and a listener whose
//! certificate another CA signed gets no line. Last, a `log-forward` `bind ... ssl crt
//! ... verify required ca-file`: a client with a certificate of that CA is relayed,
//! one without is not.

mod test_pki;

use std::io::Read;
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rampart_testkit::{haproxy_or_skip, Proxy};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// A port nobody uses right now (the proxy binds it next).
fn free_port(udp: bool) -> u16 {
    if udp {
        UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    } else {
        TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    }
}

/// A CA, and a certificate for 127.0.0.1 it signed, with its key (DER both).
struct Site {
    ca: rcgen::Certificate,
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
}

fn site(cn: &str) -> Site {
    let (ca, ca_key) = test_pki::ca(cn);
    let key = test_pki::key();
    let mut p = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
    p.distinguished_name.push(rcgen::DnType::CommonName, "127.0.0.1");
    let cert = p.signed_by(&key, &ca, &ca_key).unwrap();
    Site { ca, cert, key }
}

/// HAProxy's reg-test chain with TLS between the ring and `syslog2local`.
fn vtc_chain(binary: &Path, dir: &Path) -> String {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let (udp, tcp) = (free_port(true), free_port(false));
    let be = rampart_testkit::HttpBackend::start("s1");
    let pem = dir.join("common.pem");
    let cfg = format!(
        "global\n  insecure-fork-wanted\n\
         defaults\n  mode http\n  option httplog\n  timeout connect 5s\n  timeout client 5s\n  timeout server 5s\n\
         frontend fe1\n  bind fd@${{fe1}}\n  log 127.0.0.1:{udp} local0\n  default_backend be\n\
         backend be\n  server app1 ${{s1_addr}}:${{s1_port}}\n\
         ring myring\n  description \"My local buffer\"\n  format rfc5424\n  maxlen 1200\n  size 32764\n\
         \x20 timeout connect 5s\n  timeout server 10s\n  server mysyslogsrv 127.0.0.1:{tcp} ssl verify none\n\
         log-forward syslog2tcp\n  dgram-bind 127.0.0.1:{udp}\n  log ring@myring local0\n\
         log-forward syslog2local\n  bind 127.0.0.1:{tcp} ssl crt {}\n  log {} local0\n",
        pem.display(),
        rx.local_addr().unwrap()
    );
    let proxy =
        Proxy::new(binary).listener("fe1").backend("s1", be.addr()).config(&cfg).start().expect("the proxy starts");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 4096];
    loop {
        // (the ring's connection and handshake to syslog2local may take a moment)
        rampart_testkit::http_get(proxy.addr("fe1"), "/client_c1");
        if let Ok(n) = rx.recv(&mut buf) {
            let line = String::from_utf8_lossy(&buf[..n]).into_owned();
            let pid = proxy.pid();
            let tagged = format!("[{pid}]: ");
            let at = line.find(&tagged).unwrap_or_else(|| panic!("no [{pid}]: in {line:?}"));
            assert!(at > 0 && !b":[ ".contains(&line.as_bytes()[at - 1]), "{line:?}");
            assert!(line.trim_end().ends_with("\"GET /client_c1 HTTP/1.1\""), "{line:?}");
            drop(proxy);
            return line.replace(&pid.to_string(), "PID");
        }
        assert!(Instant::now() < deadline, "nothing came through the TLS chain");
    }
}

/// The header of a chained line, the date and program name masked.
fn chain_header(line: &str) -> String {
    let mut words: Vec<String> = line.split(' ').take(7).map(str::to_owned).collect();
    words[1] = "DATE".into();
    words[2] = words[2].split_once('[').map_or(words[2].clone(), |(_, pid)| format!("PROG[{pid}"));
    words.join(" ")
}

#[test]
fn the_tls_reg_test_chain_keeps_the_pid_of_the_proxy_that_logged() {
    let dir = test_pki::fresh_dir("log-tls-chain");
    let (ca, ca_key) = test_pki::ca("Rampart Log CA");
    std::fs::write(dir.join("common.pem"), test_pki::leaf_pem(&["127.0.0.1"], &ca, &ca_key)).unwrap();
    let line = vtc_chain(Path::new(RAMPART), &dir);
    assert_eq!(chain_header(&line), "<134>1 DATE PROG[PID]: - - - -", "{line:?}");
    if let Some(haproxy) = haproxy_or_skip("log_tls::the_tls_reg_test_chain_keeps_the_pid_of_the_proxy_that_logged") {
        let theirs = vtc_chain(&haproxy, &dir);
        assert_eq!(chain_header(&line), chain_header(&theirs), "{theirs:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A TLS syslog listener of the test: the plaintext of each accepted connection goes
/// to the channel, chunk by chunk.
fn tls_listener(site: &Site) -> (SocketAddr, Receiver<Vec<u8>>) {
    let key = rustls::pki_types::PrivateKeyDer::try_from(site.key.serialize_der()).unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![site.cert.der().clone()], key)
        .unwrap();
    let cfg = Arc::new(cfg);
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(conn) = conn else { return };
            let (cfg, tx) = (cfg.clone(), tx.clone());
            std::thread::spawn(move || {
                let Ok(tls) = rustls::ServerConnection::new(cfg) else { return };
                let mut s = rustls::StreamOwned::new(tls, conn);
                let mut buf = [0u8; 4096];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, rx)
}

/// A relay whose UDP `dgram-bind` writes to a ring with `server` (`opts` after it).
fn ring_relay(server: SocketAddr, opts: &str, dir: &Path) -> (rampart_testkit::Running, SocketAddr) {
    let udp: SocketAddr = format!("127.0.0.1:{}", free_port(true)).parse().unwrap();
    let cfg = format!(
        "global\n  ca-base {}\n\
         ring r\n  timeout connect 2s\n  timeout server 2s\n  server s {server} log-proto octet-count {opts}\n\
         log-forward in\n  dgram-bind {udp}\n  log ring@r local0\n",
        dir.display()
    );
    (Proxy::new(RAMPART).config(&cfg).start().expect("the relay starts"), udp)
}

/// What arrives within `wait`, concatenated.
fn gather(rx: &Receiver<Vec<u8>>, want: usize, wait: Duration) -> Vec<u8> {
    let deadline = Instant::now() + wait;
    let mut got = Vec::new();
    while got.len() < want {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => got.extend(chunk),
            Err(_) => break,
        }
    }
    got
}

fn write_ca(dir: &Path, site: &Site) -> PathBuf {
    let path = dir.join("ca.pem");
    std::fs::write(&path, site.ca.pem()).unwrap();
    path
}

#[test]
fn a_ring_tls_server_gets_the_framed_line_over_a_verified_handshake() {
    let dir = test_pki::fresh_dir("log-tls-ring");
    let good = site("Rampart Ring CA");
    write_ca(&dir, &good);
    let (addr, rx) = tls_listener(&good);
    let (proxy, udp) = ring_relay(addr, "ssl verify required ca-file ca.pem", &dir);
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    tx.send_to(b"<14>1 - h t 1 - - first line", udp).unwrap();
    // octet counting, the ring's `raw` format: the message alone
    assert_eq!(String::from_utf8_lossy(&gather(&rx, 12, Duration::from_secs(10))), "10 first line");
    tx.send_to(b"<14>1 - h t 1 - - second", udp).unwrap();
    assert_eq!(String::from_utf8_lossy(&gather(&rx, 8, Duration::from_secs(5))), "6 second");
    drop(proxy);

    // the listener's certificate is signed by a CA the ring does not trust: no line
    let other = site("Another CA");
    let (addr, rx) = tls_listener(&other);
    let (proxy, udp) = ring_relay(addr, "ssl verify required ca-file ca.pem", &dir);
    tx.send_to(b"<14>1 - h t 1 - - secret", udp).unwrap();
    assert_eq!(gather(&rx, 1, Duration::from_secs(3)), b"", "no plaintext past a refused certificate");
    drop(proxy);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_ring_tls_server_verified_without_a_ca_file_is_refused_at_startup() {
    let cfg = "ring r\n  timeout connect 2s\n  timeout server 2s\n  server s 127.0.0.1:1 ssl\n";
    let out = rampart_testkit::check(Path::new(RAMPART), cfg);
    assert!(
        out.stderr.contains("'server r/s' : verify is enabled by default but no CA file specified."),
        "{}",
        out.stderr
    );
}

/// Connects to `addr`, waiting for the proxy to listen there: the relay binds its own
/// port (not one inherited from the test), maybe after the startup window has passed.
fn connect_when_listening(addr: SocketAddr) -> std::net::TcpStream {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match std::net::TcpStream::connect(addr) {
            Ok(tcp) => return tcp,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused && std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("connecting to {addr}: {e}"),
        }
    }
}

/// Sends `msg` LF-terminated over a TLS connection to `addr`, as `client` says.
fn send_tls(addr: SocketAddr, client: rustls::ClientConfig, msg: &[u8]) {
    use std::io::Write as _;
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let conn = rustls::ClientConnection::new(Arc::new(client), name).unwrap();
    let tcp = connect_when_listening(addr);
    tcp.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut s = rustls::StreamOwned::new(conn, tcp);
    let _ = s.write_all(msg).and_then(|()| s.write_all(b"\n")).and_then(|()| s.flush());
    // (the server's verdict on a client certificate comes after the client's flight)
    let mut buf = [0u8; 64];
    let _ = s.read(&mut buf);
}

#[test]
fn a_log_forward_tls_bind_relays_what_verified_clients_send() {
    let dir = test_pki::fresh_dir("log-tls-bind");
    let (ca, ca_key) = test_pki::ca("Rampart Syslog CA");
    std::fs::write(dir.join("site.pem"), test_pki::leaf_pem(&["127.0.0.1"], &ca, &ca_key)).unwrap();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    let client_key = test_pki::key();
    let client = rcgen::CertificateParams::new(vec!["client.test".to_owned()])
        .unwrap()
        .signed_by(&client_key, &ca, &ca_key)
        .unwrap();
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let tcp: SocketAddr = format!("127.0.0.1:{}", free_port(false)).parse().unwrap();
    let cfg = format!(
        "log-forward in\n  bind {tcp} ssl crt {0}/site.pem verify required ca-file {0}/ca.pem\n  \
         timeout client 5s\n  log {1} local3\n",
        dir.display(),
        rx.local_addr().unwrap()
    );
    let proxy = Proxy::new(RAMPART).config(&cfg).start().expect("the relay starts");
    let mut buf = [0u8; 512];
    send_tls(tcp, test_pki::client_config(&ca, Some((&client, &client_key))), b"<14>1 - h t 1 - - with cert");
    let n = rx.recv(&mut buf).expect("the verified client's line");
    assert_eq!(&buf[..n], b"<14>1 - h t 1 - - with cert\n");
    send_tls(tcp, test_pki::client_config(&ca, None), b"<14>1 - h t 1 - - without cert");
    assert!(rx.recv(&mut buf).is_err(), "a client without certificate is refused");
    drop(proxy);
    let _ = std::fs::remove_dir_all(&dir);
}
