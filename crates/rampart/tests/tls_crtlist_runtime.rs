//! Runtime crt-list changes through the real binary: `add ssl crt-list` makes a new
//! SNI served from the next handshake, `del ssl crt-list` takes it back to the default
//! certificate; a crt-list line's options (`alpn`) apply to the handshakes it serves.
//! Certificates are generated with rcgen; the TLS client is rustls.

mod http_common;
mod test_pki;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use http_common::binary;
use rampart_testkit::{HttpBackend, Proxy, Reply};

/// A CA and the certificates it signs, in a directory of their own.
struct Pki {
    dir: PathBuf,
    ca: rcgen::Certificate,
    ca_key: rcgen::KeyPair,
}

impl Pki {
    fn new(name: &str) -> Pki {
        let dir = test_pki::fresh_dir(&format!("tls-crtlist-{name}"));
        let (ca, ca_key) = test_pki::ca("Rampart Test CA");
        Pki { dir, ca, ca_key }
    }

    /// A certificate for `name` (serial `serial`) and its key, as one PEM text.
    fn pem(&self, name: &str, serial: u64) -> String {
        let kp = test_pki::key();
        let mut p = rcgen::CertificateParams::new(vec![name.to_string()]).unwrap();
        p.distinguished_name.push(rcgen::DnType::CommonName, name);
        p.serial_number = Some(serial.into());
        let c = p.signed_by(&kp, &self.ca, &self.ca_key).unwrap();
        format!("{}{}", c.pem(), kp.serialize_pem())
    }

    /// Writes the certificate for `name` to `<dir>/<file>`; its path.
    fn write(&self, file: &str, name: &str, serial: u64) -> String {
        let p = self.dir.join(file);
        std::fs::write(&p, self.pem(name, serial)).unwrap();
        p.display().to_string()
    }

    /// A client trusting the CA, offering `alpn`, without resumption (a resumed
    /// session reports the certificate of the session it resumes).
    fn client(&self, alpn: &[&str]) -> Arc<rustls::ClientConfig> {
        let mut cfg = test_pki::client_config(&self.ca, None);
        cfg.alpn_protocols = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
        Arc::new(cfg)
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

/// A handshake with `addr` for `sni`: the served certificate's CN and the protocol
/// ALPN chose; `None` when the handshake fails (the client cannot verify the
/// certificate for that name, or strict-sni refuses it).
async fn hello(cfg: &Arc<rustls::ClientConfig>, addr: std::net::SocketAddr, sni: &str) -> Option<(String, String)> {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = rustls_pki_types::ServerName::try_from(sni.to_string()).unwrap();
    let tls = tokio_rustls::TlsConnector::from(cfg.clone()).connect(name, tcp).await.ok()?;
    let conn = tls.get_ref().1;
    let leaf = conn.peer_certificates()?[0].clone();
    let (_, c) = x509_parser::parse_x509_certificate(&leaf).unwrap();
    let cn = c.subject().iter_common_name().next()?.as_str().ok()?.to_string();
    let alpn = conn.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned()).unwrap_or_default();
    Some((cn, alpn))
}

/// A proxy whose TLS bind reads `<dir>/sites.lst` with `crt-base <dir>`.
fn start(pki: &Pki, list: &str) -> (rampart_testkit::Running, HttpBackend) {
    std::fs::write(pki.dir.join("sites.lst"), list).unwrap();
    let s1 = HttpBackend::builder("s1").respond(|_| Reply::ok().body("ok")).start();
    let cfg = format!(
        "global\n  stats socket ${{testdir}}/admin.sock level admin\n  crt-base {}\n\
         defaults\n  mode http\n  timeout client 10s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind fd@${{fe1}} ssl crt-list sites.lst\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        pki.dir.display()
    );
    let proxy =
        Proxy::new(binary()).listener("fe1").backend("s1", s1.addr()).config(&cfg).start().expect("the proxy starts");
    (proxy, s1)
}

#[test]
fn an_added_line_serves_its_sni_at_once_and_a_deleted_one_gives_the_default_back() {
    let pki = Pki::new("adddel");
    pki.write("default.pem", "default.test", 1);
    let (proxy, _s1) = start(&pki, "default.pem\n");
    let sock = proxy.dir().join("admin.sock");
    let addr = proxy.addr("fe1");
    let list = pki.dir.join("sites.lst").display().to_string();
    let new = pki.dir.join("new.pem").display().to_string();
    let client = pki.client(&[]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        // before: new.test gets the default certificate, which the client refuses
        assert_eq!(hello(&client, addr, "default.test").await.unwrap().0, "default.test");
        assert_eq!(hello(&client, addr, "new.test").await, None);
        // a certificate that exists only in memory, then a line for it
        assert_eq!(cli(&sock, &format!("new ssl cert {new}\n")), format!("New empty certificate store '{new}'!\n\n"));
        let set = cli(&sock, &format!("set ssl cert {new} <<\n{}\n", pki.pem("new.test", 2)));
        assert_eq!(set, format!("Transaction created for certificate {new}!\n\n"));
        assert_eq!(cli(&sock, &format!("commit ssl cert {new}\n")), format!("Committing {new}\nSuccess!\n\n"));
        let added = cli(&sock, &format!("add ssl crt-list {list} <<\n{new} new.test\n\n"));
        assert_eq!(added, format!("Inserting certificate '{new}' in crt-list '{list}'.\nSuccess!\n\n"));
        assert_eq!(hello(&client, addr, "new.test").await.unwrap().0, "new.test", "served with no reload");
        assert_eq!(hello(&client, addr, "default.test").await.unwrap().0, "default.test");
        assert_eq!(
            cli(&sock, &format!("show ssl crt-list -n {list}\n")),
            format!("# {list}\n{}:1\n{new}:2 new.test\n\n", pki.dir.join("default.pem").display())
        );
        assert!(cli(&sock, &format!("show ssl cert {new}\n")).contains("\nStatus: Used\n"));
        assert_eq!(
            cli(&sock, &format!("del ssl cert {new}\n")),
            format!("Can't remove the certificate: certificate '{new}' in use, can't be deleted!\n\n\n")
        );
        assert_eq!(
            cli(&sock, &format!("del ssl crt-list {list} {new}\n")),
            format!("Entry '{new}' deleted in crtlist '{list}'!\n\n")
        );
        assert_eq!(hello(&client, addr, "new.test").await, None, "the default certificate again");
        assert!(cli(&sock, &format!("show ssl cert {new}\n")).contains("\nStatus: Unused\n"));
        assert_eq!(cli(&sock, &format!("del ssl cert {new}\n")), format!("Certificate '{new}' deleted!\n\n"));
    });
}

#[test]
fn a_lines_options_apply_to_the_handshakes_it_serves() {
    let pki = Pki::new("options");
    pki.write("a.pem", "a.test", 1);
    pki.write("b.pem", "b.test", 2);
    let (proxy, _s1) = start(&pki, "a.pem\nb.pem [alpn http/1.1 ssl-min-ver SSLv3 allow-0rtt] b.test\n");
    // what rustls cannot do is named once at startup
    let warning = "crt-list line options accepted but not applied: 'ssl-min-ver SSLv3' (rustls speaks TLSv1.2 and \
                   TLSv1.3 only; TLSv1.2 is the minimum), 'allow-0rtt' (no TLS early data).";
    assert!(proxy.wait_output(warning, Duration::from_secs(5)), "{}", proxy.output());
    let sock = proxy.dir().join("admin.sock");
    let addr = proxy.addr("fe1");
    let list = pki.dir.join("sites.lst").display().to_string();
    let client = pki.client(&["h2", "http/1.1"]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        assert_eq!(hello(&client, addr, "b.test").await, Some(("b.test".into(), "http/1.1".into())));
        // the bind itself offers no ALPN
        assert_eq!(hello(&client, addr, "a.test").await, Some(("a.test".into(), String::new())));
        assert!(cli(&sock, &format!("show ssl crt-list {list}\n"))
            .contains("b.pem [alpn http/1.1 allow-0rtt ssl-min-ver SSLv3] b.test\n"));
        // a line added at runtime with options gets its own configuration too
        let c = pki.dir.join("c.pem").display().to_string();
        cli(&sock, &format!("new ssl cert {c}\n"));
        cli(&sock, &format!("set ssl cert {c} <<\n{}\n", pki.pem("c.test", 3)));
        cli(&sock, &format!("commit ssl cert {c}\n"));
        let added = cli(&sock, &format!("add ssl crt-list {list} <<\n{c} [alpn http/1.1] c.test\n\n"));
        assert!(added.ends_with("Success!\n\n"), "{added}");
        assert_eq!(hello(&client, addr, "c.test").await, Some(("c.test".into(), "http/1.1".into())));
    });
}

#[test]
fn a_lines_verify_and_ca_file_ask_a_client_certificate_for_its_names_only() {
    let pki = Pki::new("verify");
    pki.write("a.pem", "a.test", 1);
    pki.write("v.pem", "v.test", 2);
    let ca = pki.dir.join("ca.crt");
    std::fs::write(&ca, pki.ca.pem()).unwrap();
    let list = format!("a.pem\nv.pem [verify required ca-file {}] v.test\n", ca.display());
    let (proxy, _s1) = start(&pki, &list);
    let addr = proxy.addr("fe1");
    let client = pki.client(&[]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        assert_eq!(hello(&client, addr, "a.test").await.unwrap().0, "a.test");
        // TLS 1.3: the client learns of the refusal when it reads, so send and read
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let name = rustls_pki_types::ServerName::try_from("v.test").unwrap();
        let refused = match tokio_rustls::TlsConnector::from(client.clone()).connect(name, tcp).await {
            Err(_) => true,
            Ok(mut tls) => {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let _ = tls.write_all(b"GET / HTTP/1.1\r\nHost: v.test\r\n\r\n").await;
                let mut buf = [0u8; 64];
                !matches!(
                    tokio::time::timeout(Duration::from_secs(5), tls.read(&mut buf)).await,
                    Ok(Ok(n)) if n > 0
                )
            }
        };
        assert!(refused, "v.test requires a client certificate");
        // with a certificate the CA signed, v.test is served
        let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        p.distinguished_name.push(rcgen::DnType::CommonName, "client");
        let cert = p.signed_by(&kp, &pki.ca, &pki.ca_key).unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(pki.ca.der().clone()).unwrap();
        let key = rustls_pki_types::PrivateKeyDer::Pkcs8(kp.serialize_der().into());
        let with_cert =
            rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(roots)
                .with_client_auth_cert(vec![cert.der().clone()], key)
                .unwrap();
        assert_eq!(hello(&Arc::new(with_cert), addr, "v.test").await.unwrap().0, "v.test");
    });
}
