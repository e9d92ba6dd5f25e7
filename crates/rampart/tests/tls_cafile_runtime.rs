//! Runtime CA file replacement through the real binary: `set ssl ca-file` with a
//! payload and `commit ssl ca-file` on the `stats socket`, without a restart. A bind
//! refuses a client certificate of a CA it does not know until the CA is committed
//! into its `ca-file`; a server line refuses a server certificate the same way. A
//! crt-list line added at run time verifies with a CA file created at run time
//! (`new ssl ca-file`), which cannot be deleted while the line uses it.
//! Certificates are generated with rcgen; the TLS client is rustls.

mod http_common;
mod test_pki;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use http_common::binary;
use rampart_testkit::{HttpBackend, Proxy, Reply};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Two CAs, and certificates they sign, as files in a directory.
struct Pki {
    dir: PathBuf,
    cas: Vec<(rcgen::Certificate, rcgen::KeyPair)>,
}

impl Pki {
    /// `tag`: the test's own directory (the tests of the file run in parallel).
    fn new(tag: &str) -> Pki {
        let dir = test_pki::fresh_dir(&format!("tls-cafile-{tag}"));
        Pki { dir, cas: vec![test_pki::ca("CA1"), test_pki::ca("CA2")] }
    }

    /// A file of the directory with `text`; its path.
    fn write(&self, name: &str, text: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    /// A certificate for `name` signed by CA `ca` (0 or 1), and its key.
    fn leaf(&self, ca: usize, name: &str) -> (rcgen::Certificate, rcgen::KeyPair) {
        let kp = test_pki::key();
        let mut p = rcgen::CertificateParams::new(vec![name.to_string()]).unwrap();
        p.distinguished_name.push(rcgen::DnType::CommonName, name);
        let (c, k) = &self.cas[ca];
        (p.signed_by(&kp, c, k).unwrap(), kp)
    }

    /// A client trusting CA1 that presents a certificate of CA `ca`.
    fn client(&self, ca: usize) -> Arc<rustls::ClientConfig> {
        let (cert, kp) = self.leaf(ca, "client");
        Arc::new(test_pki::client_config(&self.cas[0].0, Some((&cert, &kp))))
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

/// One request over TLS to `addr` with `client`: the status line, or why the
/// handshake or the exchange failed.
async fn tls_get(client: &Arc<rustls::ClientConfig>, addr: std::net::SocketAddr) -> Result<String, String> {
    tls_get_sni(client, addr, "a.test").await
}

/// [`tls_get`] announcing `sni`.
async fn tls_get_sni(
    client: &Arc<rustls::ClientConfig>,
    addr: std::net::SocketAddr,
    sni: &str,
) -> Result<String, String> {
    let tcp = tokio::net::TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let name = rustls_pki_types::ServerName::try_from(sni.to_owned()).unwrap();
    let mut tls =
        tokio_rustls::TlsConnector::from(client.clone()).connect(name, tcp).await.map_err(|e| e.to_string())?;
    // TLS 1.3: a refused client certificate shows on the first read, not in the handshake
    tls.write_all(b"GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n").await.map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(2).any(|w| w == b"\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(5), tls.read(&mut chunk))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("closed before a response".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(String::from_utf8_lossy(&buf).lines().next().unwrap_or("").to_string())
}

/// One request in clear to `addr`: the status line.
async fn clear_get(addr: std::net::SocketAddr) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n").await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut buf)).await.unwrap().unwrap();
    String::from_utf8_lossy(&buf).lines().next().unwrap_or("").to_string()
}

#[test]
fn committed_ca_files_verify_new_handshakes_of_binds_and_servers_without_restart() {
    let pki = Pki::new("commit");
    let (site, site_key) = pki.leaf(0, "a.test");
    let site = pki.write("site.pem", &format!("{}{}", site.pem(), site_key.serialize_pem()));
    let bind_ca = pki.write("bind-ca.crt", &pki.cas[0].0.pem());
    // the server line trusts CA2 only: the TLS frontend's certificate (CA1) is refused
    let srv_ca = pki.write("srv-ca.crt", &pki.cas[1].0.pem());
    let (mtls, mtls_key) = pki.leaf(0, "proxy-client");
    let mtls = pki.write("mtls.pem", &format!("{}{}", mtls.pem(), mtls_key.serialize_pem()));
    let s1 = HttpBackend::builder("s1").respond(|_| Reply::ok().body("ok")).start();
    let cfg = format!(
        "global\n  stats socket ${{testdir}}/admin.sock level admin\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n  retries 0\n\
         listen tls\n  bind fd@${{tls}} ssl crt {site} ca-file {bind_ca} verify required\n\
         \x20 bind ${{testdir}}/tls.sock ssl crt {site} ca-file {bind_ca} verify required\n\
         \x20 server s1 ${{s1_addr}}:${{s1_port}}\n\
         listen clear\n  bind fd@${{clear}}\n\
         \x20 server t1 ${{testdir}}/tls.sock ssl crt {mtls} ca-file {srv_ca} verify required sni str(a.test)\n"
    );
    let proxy = Proxy::new(binary())
        .listener("tls")
        .listener("clear")
        .backend("s1", s1.addr())
        .config(&cfg)
        .start()
        .expect("the proxy starts");
    let sock = proxy.dir().join("admin.sock");
    let (tls, clear) = (proxy.addr("tls"), proxy.addr("clear"));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (by_ca1, by_ca2) = (pki.client(0), pki.client(1));
        assert_eq!(tls_get(&by_ca1, tls).await.as_deref(), Ok("HTTP/1.1 200 OK"));
        assert!(tls_get(&by_ca2, tls).await.is_err(), "a client certificate of CA2 is refused");
        assert_eq!(
            cli(&sock, "show ssl ca-file\n"),
            format!("# filename\n{bind_ca} - 1 certificate(s)\n{srv_ca} - 1 certificate(s)\n\n")
        );

        // the bind: CA1 and CA2 from now on
        let both = format!("{}{}", pki.cas[0].0.pem(), pki.cas[1].0.pem());
        assert_eq!(
            cli(&sock, &format!("set ssl ca-file {bind_ca} <<\n{both}\n")),
            format!("transaction created for CA {bind_ca}!\n\n")
        );
        assert!(tls_get(&by_ca2, tls).await.is_err(), "not committed yet");
        let committed = cli(&sock, &format!("commit ssl ca-file {bind_ca}\n"));
        assert_eq!(committed, format!("Committing {bind_ca}..\nSuccess!\n\n"), "two binds use it");
        assert_eq!(tls_get(&by_ca2, tls).await.as_deref(), Ok("HTTP/1.1 200 OK"), "accepted without restart");
        assert_eq!(tls_get(&by_ca1, tls).await.as_deref(), Ok("HTTP/1.1 200 OK"));
        assert!(cli(&sock, "show ssl ca-file\n").contains(&format!("\n{bind_ca} - 2 certificate(s)\n")));

        // the server line: its CA file gets CA1, which signs the frontend's certificate
        assert_eq!(clear_get(clear).await, "HTTP/1.1 503 Service Unavailable");
        cli(&sock, &format!("set ssl ca-file {srv_ca} <<\n{}\n", pki.cas[0].0.pem()));
        assert_eq!(
            cli(&sock, &format!("commit ssl ca-file {srv_ca}\n")),
            format!("Committing {srv_ca}.\nSuccess!\n\n")
        );
        assert_eq!(clear_get(clear).await, "HTTP/1.1 200 OK");
        // and back: neither the idle connection nor the TLS session verified with CA1
        // is used after the commit
        cli(&sock, &format!("set ssl ca-file {srv_ca} <<\n{}\n", pki.cas[1].0.pem()));
        cli(&sock, &format!("commit ssl ca-file {srv_ca}\n"));
        assert_eq!(clear_get(clear).await, "HTTP/1.1 503 Service Unavailable");
    });
}

#[test]
fn a_crt_list_line_added_at_run_time_verifies_with_a_ca_file_created_at_run_time() {
    let pki = Pki::new("line");
    let pem = |name: &str| {
        let (c, k) = pki.leaf(0, name);
        format!("{}{}", c.pem(), k.serialize_pem())
    };
    let site = pki.write("site.pem", &pem("a.test"));
    let list = pki.write("l.lst", &format!("{site}\n"));
    let b = pki.dir.join("b.pem").display().to_string();
    let bind_ca = pki.write("bind-ca.crt", &pki.cas[0].0.pem());
    let s1 = HttpBackend::builder("s1").respond(|_| Reply::ok().body("ok")).start();
    let cfg = format!(
        "global\n  stats socket ${{testdir}}/admin.sock level admin\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen tls\n  bind fd@${{tls}} ssl strict-sni crt-list {list} ca-file {bind_ca} verify required\n\
         \x20 server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let proxy =
        Proxy::new(binary()).listener("tls").backend("s1", s1.addr()).config(&cfg).start().expect("the proxy starts");
    let sock = proxy.dir().join("admin.sock");
    let tls = proxy.addr("tls");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (by_ca1, by_ca2) = (pki.client(0), pki.client(1));
        assert_eq!(tls_get_sni(&by_ca1, tls, "a.test").await.as_deref(), Ok("HTTP/1.1 200 OK"));
        assert!(tls_get_sni(&by_ca1, tls, "b.test").await.is_err(), "strict-sni: no b.test yet");

        // a CA file that exists only in the runtime store, holding CA2
        assert_eq!(cli(&sock, "new ssl ca-file new_cafile.crt\n"), "New CA file created 'new_cafile.crt'!\n\n");
        let set = cli(&sock, &format!("set ssl ca-file new_cafile.crt <<\n{}\n", pki.cas[1].0.pem()));
        assert_eq!(set, "transaction created for CA new_cafile.crt!\n\n");
        assert_eq!(cli(&sock, "commit ssl ca-file new_cafile.crt\n"), "Committing new_cafile.crt\nSuccess!\n\n");
        // and a certificate store for b.test
        cli(&sock, &format!("new ssl cert {b}\n"));
        cli(&sock, &format!("set ssl cert {b} <<\n{}\n", pem("b.test")));
        assert!(cli(&sock, &format!("commit ssl cert {b}\n")).contains("Success!"));

        let add = cli(&sock, &format!("add ssl crt-list {list} <<\n{b} [ca-file new_cafile.crt] b.test\n\n"));
        assert_eq!(add, format!("Inserting certificate '{b}' in crt-list '{list}'.\nSuccess!\n\n"));
        assert_eq!(
            tls_get_sni(&by_ca2, tls, "b.test").await.as_deref(),
            Ok("HTTP/1.1 200 OK"),
            "the line verifies with the runtime CA file"
        );
        assert!(tls_get_sni(&by_ca1, tls, "b.test").await.is_err(), "the line's ca-file replaces the bind's");
        assert!(tls_get_sni(&by_ca2, tls, "a.test").await.is_err(), "the bind still trusts CA1 only");
        assert_eq!(
            cli(&sock, "del ssl ca-file new_cafile.crt\n"),
            "Can't remove the CA file: CA file 'new_cafile.crt' in use, can't be deleted!\n\n\n"
        );

        assert_eq!(
            cli(&sock, &format!("del ssl crt-list {list} {b}\n")),
            format!("Entry '{b}' deleted in crtlist '{list}'!\n\n")
        );
        assert_eq!(cli(&sock, "del ssl ca-file new_cafile.crt\n"), "CA file 'new_cafile.crt' deleted!\n\n");
        assert!(!cli(&sock, "show ssl ca-file\n").contains("new_cafile.crt"));
        assert!(tls_get_sni(&by_ca2, tls, "b.test").await.is_err(), "strict-sni: b.test is gone");
    });
}
