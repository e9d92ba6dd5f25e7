//! Client certificate revocation through the real binary: `bind ... verify required
//! crl-file` refuses a revoked client certificate with the `certificate_revoked` alert;
//! `verify optional crt-ignore-err all` lets it through and `ssl_c_verify` /
//! `ssl_c_err` report it (23, OpenSSL's X509_V_ERR_CERT_REVOKED); a CRL that its CA
//! did not sign is refused at startup; a server whose certificate is revoked is not
//! connected to (`server ... verify required crl-file`: 503). Clients are Debian's
//! `curl`; certificates and the CRL come from rcgen. Passes against haproxy 2.6 too (`RAMPART_TEST_BINARY`),
//! except the wording of the startup alert.

mod http_common;
mod test_pki;

use std::path::PathBuf;
use std::process::Command;

use http_common::{binary, PREAMBLE};
use rampart_testkit::{HttpBackend, Proxy, Reply, Running};

/// A CA, a server certificate, client certificates and a CRL, as PEM files.
struct Pki {
    dir: PathBuf,
    ca: rcgen::Certificate,
    ca_key: rcgen::KeyPair,
}

use test_pki::key;

impl Pki {
    fn new(test: &str) -> Pki {
        let dir = test_pki::fresh_dir(&format!("tls-crl-{test}"));
        let (ca, ca_key) = test_pki::ca("Rampart CRL Test CA");
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        Pki { dir, ca, ca_key }
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }

    /// `srv.pem`: the listener's certificate and key.
    fn server(&self) -> String {
        let k = key();
        let c = rcgen::CertificateParams::new(vec!["srv.test".to_owned()])
            .unwrap()
            .signed_by(&k, &self.ca, &self.ca_key)
            .unwrap();
        std::fs::write(self.dir.join("srv.pem"), format!("{}{}", c.pem(), k.serialize_pem())).unwrap();
        self.path("srv.pem")
    }

    /// `<file>`: a server certificate for `srv.test` with `serial`, and its key.
    fn server_serial(&self, file: &str, serial: u64) -> String {
        let k = key();
        let mut p = rcgen::CertificateParams::new(vec!["srv.test".to_owned()]).unwrap();
        p.serial_number = Some(rcgen::SerialNumber::from(serial));
        let c = p.signed_by(&k, &self.ca, &self.ca_key).unwrap();
        std::fs::write(self.dir.join(file), format!("{}{}", c.pem(), k.serialize_pem())).unwrap();
        self.path(file)
    }

    /// `<name>.crt` and `<name>.key`: a client certificate with `serial`, valid until
    /// `until` (a year).
    fn client(&self, name: &str, serial: u64, until: i32) -> (String, String) {
        let k = key();
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        p.distinguished_name.push(rcgen::DnType::CommonName, name);
        p.serial_number = Some(rcgen::SerialNumber::from(serial));
        p.not_before = rcgen::date_time_ymd(2020, 1, 1);
        p.not_after = rcgen::date_time_ymd(until, 1, 1);
        let c = p.signed_by(&k, &self.ca, &self.ca_key).unwrap();
        std::fs::write(self.dir.join(format!("{name}.crt")), c.pem()).unwrap();
        std::fs::write(self.dir.join(format!("{name}.key")), k.serialize_pem()).unwrap();
        (self.path(&format!("{name}.crt")), self.path(&format!("{name}.key")))
    }

    /// `crl.pem`: a CRL of `signer` (the CA when `None`) revoking `serials`.
    fn crl(&self, serials: &[u64], signer: Option<(&rcgen::Certificate, &rcgen::KeyPair)>) -> String {
        let (ca, key) = signer.unwrap_or((&self.ca, &self.ca_key));
        let crl = rcgen::CertificateRevocationListParams {
            this_update: rcgen::date_time_ymd(2020, 1, 1),
            next_update: rcgen::date_time_ymd(2090, 1, 1),
            crl_number: rcgen::SerialNumber::from(1u64),
            issuing_distribution_point: None,
            revoked_certs: serials
                .iter()
                .map(|s| rcgen::RevokedCertParams {
                    serial_number: rcgen::SerialNumber::from(*s),
                    revocation_time: rcgen::date_time_ymd(2021, 1, 1),
                    reason_code: None,
                    invalidity_date: None,
                })
                .collect(),
            key_identifier_method: rcgen::KeyIdMethod::Sha256,
        }
        .signed_by(ca, key)
        .unwrap();
        std::fs::write(self.dir.join("crl.pem"), crl.pem().unwrap()).unwrap();
        self.path("crl.pem")
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn curl_installed() -> bool {
    Command::new("curl").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// `curl` to `listener` presenting `cert`: success, stdout, stderr.
fn curl(proxy: &Running, listener: &str, ca: &str, cert: &(String, String)) -> (bool, String, String) {
    let addr = proxy.addr(listener);
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10", "--resolve"])
        .arg(format!("srv.test:{}:{}", addr.port(), addr.ip()))
        .args(["--cacert", ca, "--cert", &cert.0, "--key", &cert.1])
        .arg(format!("https://srv.test:{}/p", addr.port()))
        .output()
        .expect("curl runs");
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (out.status.success(), text(out.stdout), text(out.stderr))
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| l.strip_prefix(&format!("{name}: ")))
}

#[test]
fn a_revoked_client_certificate_is_refused_or_reported() {
    if !curl_installed() {
        eprintln!("SKIPPED: curl is not installed");
        return;
    }
    let pki = Pki::new("revoked");
    let (srv, ca, crl) = (pki.server(), pki.path("ca.pem"), pki.crl(&[7], None));
    let good = pki.client("good", 8, 2090);
    let revoked = pki.client("revoked", 7, 2090);
    let expired_revoked = pki.client("old", 7, 2021);
    let s1 = HttpBackend::builder("s1").respond(|req| Reply::ok().body(req.raw_head_str())).start();
    let cfg = format!(
        "{PREAMBLE}frontend fe\n  \
         bind fd@${{fe1}} ssl crt {srv} ca-file {ca} verify required crl-file {crl}\n  \
         bind fd@${{fe2}} ssl crt {srv} ca-file {ca} verify optional crt-ignore-err all crl-file {crl}\n  \
         http-request set-header X-Verify %[ssl_c_verify]\n  \
         http-request set-header X-Err %[ssl_c_err]\n  \
         http-request set-header X-CA-Err %[ssl_c_ca_err]\n  default_backend be\n\
         backend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let proxy = Proxy::new(binary())
        .backend("s1", s1.addr())
        .listener("fe1")
        .listener("fe2")
        .config(&cfg)
        .start()
        .expect("the proxy starts");

    // verify required: the good certificate passes, the revoked one gets the alert
    let (ok, body, err) = curl(&proxy, "fe1", &ca, &good);
    assert!(ok, "{err}");
    assert_eq!(header(&body, "x-verify"), Some("0"));
    let (ok, _, err) = curl(&proxy, "fe1", &ca, &revoked);
    assert!(!ok, "a revoked certificate must fail the handshake");
    assert!(err.contains("certificate revoked"), "the alert names the revocation: {err}");

    // crt-ignore-err all: served, and the error reported
    let (ok, body, err) = curl(&proxy, "fe2", &ca, &revoked);
    assert!(ok, "{err}");
    assert_eq!(header(&body, "x-verify"), Some("23"));
    assert_eq!(header(&body, "x-err"), Some("23"));
    assert_eq!(header(&body, "x-ca-err"), Some("0"));
    let (ok, body, err) = curl(&proxy, "fe2", &ca, &good);
    assert!(ok, "{err}");
    assert_eq!(header(&body, "x-verify"), Some("0"));
    // revoked and expired: OpenSSL checks revocation first, the last error is reported
    let (ok, body, err) = curl(&proxy, "fe2", &ca, &expired_revoked);
    assert!(ok, "{err}");
    assert_eq!(header(&body, "x-verify"), Some("10"));
    assert_eq!(header(&body, "x-err"), Some("23"));
}

/// `server ... verify required crl-file`: a server whose certificate is revoked is not
/// connected to (503); rampart itself serves TLS on unix sockets, as in the reg-tests.
#[test]
fn a_revoked_server_certificate_fails_the_connection() {
    if !curl_installed() {
        eprintln!("SKIPPED: curl is not installed");
        return;
    }
    let pki = Pki::new("server");
    let (ca, crl) = (pki.path("ca.pem"), pki.crl(&[7], None));
    let (good, revoked) = (pki.server_serial("good.pem", 8), pki.server_serial("revoked.pem", 7));
    let (good_sock, revoked_sock) = (pki.path("good.sock"), pki.path("revoked.sock"));
    let cfg = format!(
        "{PREAMBLE}frontend fe\n  bind fd@${{fe1}}\n  use_backend good if {{ path /good }}\n  default_backend revoked\n\
         backend good\n  server s1 {good_sock} ssl verify required ca-file {ca} crl-file {crl}\n\
         backend revoked\n  server s1 {revoked_sock} ssl verify required ca-file {ca} crl-file {crl}\n\
         listen tls_good\n  bind {good_sock} ssl crt {good}\n  http-request return status 200\n\
         listen tls_revoked\n  bind {revoked_sock} ssl crt {revoked}\n  http-request return status 200\n"
    );
    let proxy = Proxy::new(binary()).listener("fe1").config(&cfg).start().expect("the proxy starts");
    let status = |path: &str| {
        let addr = proxy.addr("fe1");
        let out = Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10"])
            .arg(format!("http://{addr}{path}"))
            .output()
            .expect("curl runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(status("/good"), "200");
    assert_eq!(status("/revoked"), "503", "the revoked server certificate fails the handshake");
}

#[test]
fn a_crl_its_ca_did_not_sign_is_refused_at_startup() {
    rampart_only!();
    let pki = Pki::new("forged");
    let (impostor, impostor_key) = test_pki::ca("Rampart CRL Test CA");
    let (srv, ca, crl) = (pki.server(), pki.path("ca.pem"), pki.crl(&[7], Some((&impostor, &impostor_key))));
    let cfg_path = pki.dir.join("h.cfg");
    std::fs::write(
        &cfg_path,
        format!(
            "{PREAMBLE}frontend fe\n  bind 127.0.0.1:8443 ssl crt {srv} ca-file {ca} verify required crl-file {crl}\n"
        ),
    )
    .unwrap();
    let out = Command::new(binary()).arg("-c").arg("-f").arg(&cfg_path).output().expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "'crl-file' : unable to load {crl} (the CRL signature does not verify with its issuer's key)."
        )),
        "{err}"
    );
}
