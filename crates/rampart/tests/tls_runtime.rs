//! Runtime certificate replacement through the real binary: `set ssl cert` with a
//! payload and `commit ssl cert` on the `stats socket`; new handshakes get the new
//! certificate while a connection opened before keeps working on the old one.
//! Certificates are generated with rcgen; the TLS client is rustls.

mod http_common;
mod test_pki;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use http_common::binary;
use rampart_testkit::{HttpBackend, Proxy, Reply};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A CA, and certificates for `a.test` it signs (CN `cn`, serial `serial`).
struct Pki {
    dir: PathBuf,
    ca: rcgen::Certificate,
    ca_key: rcgen::KeyPair,
}

impl Pki {
    fn new() -> Pki {
        let dir = test_pki::fresh_dir("tls-runtime");
        let (ca, ca_key) = test_pki::ca("Rampart Test CA");
        Pki { dir, ca, ca_key }
    }

    /// A certificate and its key as one PEM text.
    fn pem(&self, cn: &str, serial: u64) -> String {
        let kp = test_pki::key();
        let mut p = rcgen::CertificateParams::new(vec!["a.test".to_string()]).unwrap();
        p.distinguished_name.push(rcgen::DnType::CommonName, cn);
        p.serial_number = Some(serial.into());
        let c = p.signed_by(&kp, &self.ca, &self.ca_key).unwrap();
        format!("{}{}", c.pem(), kp.serialize_pem())
    }

    fn client_config(&self) -> Arc<rustls::ClientConfig> {
        Arc::new(test_pki::client_config(&self.ca, None))
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What the stats socket at `path` answers to `input`.
fn cli(path: &Path, input: &str) -> String {
    rampart_testkit::stats_command(path, input)
}

type Tls = tokio_rustls::client::TlsStream<tokio::net::TcpStream>;

/// A TLS connection to `addr` for `a.test`, and the serial of the certificate served.
async fn connect(cfg: &Arc<rustls::ClientConfig>, addr: std::net::SocketAddr) -> (Tls, Vec<u8>) {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = rustls_pki_types::ServerName::try_from("a.test").unwrap();
    let tls = tokio_rustls::TlsConnector::from(cfg.clone()).connect(name, tcp).await.expect("handshake");
    let leaf = tls.get_ref().1.peer_certificates().unwrap()[0].clone();
    let (_, c) = x509_parser::parse_x509_certificate(&leaf).unwrap();
    let serial = c.raw_serial().to_vec();
    (tls, serial)
}

/// One keep-alive request on `tls`; the response's status line.
async fn get(tls: &mut Tls) -> String {
    tls.write_all(b"GET /p HTTP/1.1\r\nHost: a.test\r\n\r\n").await.unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    // the backend answers "ok" with a content-length: read until the body is in
    while !buf.ends_with(b"ok") {
        let n = tokio::time::timeout(Duration::from_secs(5), tls.read(&mut chunk)).await.unwrap().unwrap();
        assert!(n > 0, "connection closed: {}", String::from_utf8_lossy(&buf));
        buf.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&buf).lines().next().unwrap_or("").to_string()
}

#[test]
fn a_committed_certificate_serves_new_handshakes_and_open_connections_keep_working() {
    let pki = Pki::new();
    let crt = pki.dir.join("site.pem");
    std::fs::write(&crt, pki.pem("old", 0x11)).unwrap();
    let s1 = HttpBackend::builder("s1").respond(|_| Reply::ok().body("ok")).start();
    let cfg = format!(
        "global\n  nbthread 2\n  stats socket ${{testdir}}/admin.sock level admin\n\
         defaults\n  mode http\n  timeout client 10s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind fd@${{fe1}} ssl crt {}\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        crt.display()
    );
    let proxy =
        Proxy::new(binary()).listener("fe1").backend("s1", s1.addr()).config(&cfg).start().expect("the proxy starts");
    let sock = proxy.dir().join("admin.sock");
    let addr = proxy.addr("fe1");
    let client = pki.client_config();
    let path = crt.display().to_string();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (mut before, serial) = connect(&client, addr).await;
        assert_eq!(serial, [0x11]);
        assert_eq!(get(&mut before).await, "HTTP/1.1 200 OK");
        assert_eq!(cli(&sock, "show ssl cert\n"), format!("# filename\n{path}\n\n"));
        let shown = cli(&sock, &format!("show ssl cert {path}\n"));
        assert!(shown.starts_with(&format!("Filename: {path}\nStatus: Used\nSerial: 11\n")), "{shown}");
        let set = cli(&sock, &format!("set ssl cert {path} <<\n{}\n", pki.pem("new", 0x22)));
        assert_eq!(set, format!("Transaction created for certificate {path}!\n\n"));
        // not committed yet: still the old one
        assert_eq!(connect(&client, addr).await.1, [0x11]);
        assert_eq!(cli(&sock, "show ssl cert\n"), format!("# transaction\n*{path}\n# filename\n{path}\n\n"));
        assert_eq!(cli(&sock, &format!("commit ssl cert {path}\n")), format!("Committing {path}.\nSuccess!\n\n"));
        let (mut after, serial) = connect(&client, addr).await;
        assert_eq!(serial, [0x22], "a new handshake gets the new certificate");
        assert_eq!(get(&mut after).await, "HTTP/1.1 200 OK");
        // the connection opened before goes on, on its own certificate
        assert_eq!(get(&mut before).await, "HTTP/1.1 200 OK");
        let old = before.get_ref().1.peer_certificates().unwrap()[0].clone();
        assert_eq!(x509_parser::parse_x509_certificate(&old).unwrap().1.raw_serial(), [0x11]);
        let shown = cli(&sock, &format!("show ssl cert {path}\n"));
        assert!(shown.contains("\nSerial: 22\n") && shown.contains("\nSubject: /CN=new\n"), "{shown}");
        // a transaction aborted changes nothing
        cli(&sock, &format!("set ssl cert {path} <<\n{}\n", pki.pem("third", 0x33)));
        assert_eq!(
            cli(&sock, &format!("abort ssl cert {path}\n")),
            format!("Transaction aborted for certificate '{path}'!\n\n")
        );
        assert_eq!(connect(&client, addr).await.1, [0x22]);
    });
}

#[test]
fn many_handshakes_during_swaps_all_succeed() {
    let pki = Pki::new();
    let crt = pki.dir.join("load.pem");
    std::fs::write(&crt, pki.pem("c0", 1)).unwrap();
    let s1 = HttpBackend::builder("s1").respond(|_| Reply::ok().body("ok")).start();
    let cfg = format!(
        "global\n  nbthread 2\n  stats socket ${{testdir}}/admin.sock level admin\n\
         defaults\n  mode http\n  timeout client 10s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind fd@${{fe1}} ssl crt {}\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        crt.display()
    );
    let proxy =
        Proxy::new(binary()).listener("fe1").backend("s1", s1.addr()).config(&cfg).start().expect("the proxy starts");
    let sock = proxy.dir().join("admin.sock");
    let addr = proxy.addr("fe1");
    let client = pki.client_config();
    let path = crt.display().to_string();
    let pems: Vec<String> = (2..7).map(|i| pki.pem(&format!("c{i}"), i)).collect();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut clients = Vec::new();
        for _ in 0..4 {
            let (client, stop) = (client.clone(), stop.clone());
            clients.push(tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let (mut tls, _) = connect(&client, addr).await;
                    assert_eq!(get(&mut tls).await, "HTTP/1.1 200 OK");
                    n += 1;
                }
                n
            }));
        }
        for pem in &pems {
            let sock = sock.clone();
            let (path, pem) = (path.clone(), pem.clone());
            let out = tokio::task::spawn_blocking(move || {
                cli(&sock, &format!("set ssl cert {path} <<\n{pem}\n"))
                    + &cli(&sock, &format!("commit ssl cert {path}\n"))
            })
            .await
            .unwrap();
            assert!(out.ends_with("Success!\n\n"), "{out}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut total = 0;
        for c in clients {
            total += c.await.expect("no failed handshake or request");
        }
        assert!(total > 10, "{total} handshakes");
        assert_eq!(connect(&client, addr).await.1, [6]);
    });
}
