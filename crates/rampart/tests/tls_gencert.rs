//! Certificates the binary makes or staples, seen by a rustls client: with
//! `generate-certificates` and `ca-sign-file`, a client naming a server no certificate
//! serves gets one for that name, signed by the CA (and the same one again from the
//! cache); `ecdhe` restricts the key exchange group; `<crt>.ocsp` beside a certificate
//! is stapled, and `set ssl ocsp-response` replaces it for new handshakes.
// a test client's recording verifier: no request path here
#![allow(clippy::disallowed_types)]

mod http_common;
mod test_pki;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use http_common::binary;
use rampart_testkit::{HttpBackend, Proxy, Reply, Running};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::{DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

/// A CA (written with its key in `ca.pem`) and a default certificate `default.pem` for
/// `default.test` it signs.
struct Pki {
    dir: PathBuf,
    ca: rcgen::Certificate,
}

impl Pki {
    fn new(test: &str) -> Pki {
        let dir = test_pki::fresh_dir(&format!("tls-gencert-{test}"));
        let ca_key = test_pki::key();
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        p.distinguished_name.push(rcgen::DnType::CommonName, "Gen CA");
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        p.key_usages = vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::DigitalSignature];
        let ca = p.self_signed(&ca_key).unwrap();
        std::fs::write(dir.join("ca.pem"), format!("{}{}", ca.pem(), ca_key.serialize_pem())).unwrap();
        std::fs::write(dir.join("default.pem"), test_pki::leaf_pem(&["default.test"], &ca, &ca_key)).unwrap();
        Pki { dir, ca }
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The CA's verifier, keeping the OCSP response the server stapled.
#[derive(Debug)]
struct Recording {
    inner: Arc<WebPkiServerVerifier>,
    ocsp: Mutex<Vec<u8>>,
}

impl ServerCertVerifier for Recording {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        *self.ocsp.lock().unwrap() = ocsp.to_vec();
        self.inner.verify_server_cert(end_entity, intermediates, name, ocsp, now)
    }

    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(m, c, d)
    }

    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(m, c, d)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// A client trusting the CA, with the key exchange groups `groups` (rustls' defaults
/// when empty); its verifier keeps the stapled response.
fn client(
    pki: &Pki,
    groups: &[&'static dyn rustls::crypto::SupportedKxGroup],
) -> (Arc<rustls::ClientConfig>, Arc<Recording>) {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.ca.der().clone()).unwrap();
    let mut provider = rustls::crypto::aws_lc_rs::default_provider();
    if !groups.is_empty() {
        provider.kx_groups = groups.to_vec();
    }
    let provider = Arc::new(provider);
    let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone()).build().unwrap();
    let rec = Arc::new(Recording { inner, ocsp: Mutex::new(Vec::new()) });
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(rec.clone())
        .with_no_client_auth();
    cfg.resumption = rustls::client::Resumption::disabled();
    (Arc::new(cfg), rec)
}

/// A handshake for `sni` with `proxy`'s listener `fe`: the certificates served and the
/// key exchange group, or the handshake error.
fn handshake(
    cfg: &Arc<rustls::ClientConfig>,
    proxy: &Running,
    sni: &str,
) -> Result<(Vec<CertificateDer<'static>>, Option<rustls::NamedGroup>), String> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let addr = proxy.addr("fe");
    rt.block_on(async {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let name = ServerName::try_from(sni.to_string()).unwrap();
        let tls = tokio_rustls::TlsConnector::from(cfg.clone()).connect(name, tcp).await.map_err(|e| e.to_string())?;
        let conn = tls.get_ref().1;
        let group = conn.negotiated_key_exchange_group().map(|g| g.name());
        Ok((conn.peer_certificates().unwrap_or_default().to_vec(), group))
    })
}

fn subject_and_issuer(der: &[u8]) -> (String, String) {
    let (_, c) = x509_parser::parse_x509_certificate(der).unwrap();
    (c.subject().to_string(), c.issuer().to_string())
}

fn start(bind: &str, extra_global: &str) -> (Running, HttpBackend) {
    let s1 = HttpBackend::builder("s1").respond(|_| Reply::ok().body("ok")).start();
    let cfg = format!(
        "global\n  nbthread 1\n{extra_global}defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  \
         timeout connect 1s\nlisten fe\n  bind fd@${{fe}} {bind}\n  server s1 ${{s1_addr}}:${{s1_port}}\n"
    );
    let proxy = Proxy::new(binary()).backend("s1", s1.addr()).listener("fe").config(&cfg).start().expect("starts");
    (proxy, s1)
}

#[test]
fn an_unknown_sni_gets_a_certificate_for_it_signed_by_the_ca() {
    let pki = Pki::new("gen");
    // strict-sni does not refuse a name a certificate is generated for (as HAProxy)
    let bind = format!(
        "ssl crt {} generate-certificates ca-sign-file {} strict-sni",
        pki.path("default.pem"),
        pki.path("ca.pem")
    );
    let (proxy, _s1) = start(&bind, "  tune.ssl.ssl-ctx-cache-size 10\n");
    let (cfg, _) = client(&pki, &[]);
    // the client verifies the chain and the name: the handshake succeeding says it all
    let (certs, _) = handshake(&cfg, &proxy, "unknown.example").expect("a certificate for the name");
    assert_eq!(subject_and_issuer(&certs[0]), ("CN=Gen CA, CN=unknown.example".to_string(), "CN=Gen CA".to_string()));
    assert_eq!(certs[1], *pki.ca.der(), "the CA follows the generated certificate");
    // cached: the same certificate for the same name
    let (again, _) = handshake(&cfg, &proxy, "unknown.example").unwrap();
    assert_eq!(again[0], certs[0]);
    let (other, _) = handshake(&cfg, &proxy, "other.example").unwrap();
    assert_ne!(other[0], certs[0]);
    // a name a certificate serves gets that certificate
    let (served, _) = handshake(&cfg, &proxy, "default.test").unwrap();
    assert_eq!(subject_and_issuer(&served[0]).0, "CN=default.test");
}

#[test]
fn ecdhe_restricts_the_key_exchange() {
    let pki = Pki::new("ecdhe");
    let (proxy, _s1) = start(&format!("ssl crt {} ecdhe secp384r1", pki.path("default.pem")), "");
    let (cfg, _) = client(&pki, &[]);
    let (_, group) = handshake(&cfg, &proxy, "default.test").unwrap();
    assert_eq!(group, Some(rustls::NamedGroup::secp384r1));
    let (x25519_only, _) = client(&pki, &[rustls::crypto::aws_lc_rs::kx_group::X25519]);
    assert!(handshake(&x25519_only, &proxy, "default.test").is_err());
}

/// A DER element with `tag` around `parts`.
fn el(tag: u8, parts: &[&[u8]]) -> Vec<u8> {
    let body: Vec<u8> = parts.concat();
    let mut out = vec![tag];
    match body.len() {
        n if n < 0x80 => out.push(n as u8),
        n => out.extend([0x81, n as u8]),
    }
    out.extend(body);
    out
}

/// A successful basic OCSP response for serial `serial`, `good` or revoked.
fn ocsp_response(serial: u8, good: bool) -> Vec<u8> {
    let sha1: &[u8] = &[0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a];
    let id = el(0x30, &[&el(0x30, &[sha1, &[5, 0]]), &el(4, &[&[1; 20]]), &el(4, &[&[2; 20]]), &el(2, &[&[serial]])]);
    let status = if good { vec![0x80, 0] } else { el(0xa1, &[&el(0x18, &[b"20210610085736Z"])]) };
    let single = el(0x30, &[&id, &status, &el(0x18, &[b"20210610085504Z"])]);
    let name = el(0x30, &[&el(0x31, &[&el(0x30, &[&[6, 3, 0x55, 4, 3], &el(0x0c, &[b"ocsp"])])])]);
    let tbs = el(0x30, &[&el(0xa1, &[&name]), &el(0x18, &[b"20210610085545Z"]), &el(0x30, &[&single])]);
    let basic = el(0x30, &[&tbs, &el(0x30, &[&[6, 3, 0x2b, 0x65, 0x70]]), &el(3, &[&[0, 1]])]);
    let bytes = el(0x30, &[&[6, 9, 0x2b, 6, 1, 5, 5, 7, 0x30, 1, 1], &el(4, &[&basic])]);
    el(0x30, &[&[0x0a, 1, 0], &el(0xa0, &[&bytes])])
}

/// What the stats socket at `path` answers to `input`.
fn cli(path: &Path, input: &str) -> String {
    rampart_testkit::stats_command(path, input)
}

#[test]
fn the_ocsp_file_beside_a_certificate_is_stapled_and_replaced_at_runtime() {
    use base64::Engine as _;
    let pki = Pki::new("ocsp");
    let good = ocsp_response(0x42, true);
    std::fs::write(pki.dir.join("default.pem.ocsp"), &good).unwrap();
    let sock = pki.dir.join("admin.sock");
    let (proxy, _s1) = start(
        &format!("ssl crt {}", pki.path("default.pem")),
        &format!("  stats socket {} level admin\n", sock.display()),
    );
    let (cfg, rec) = client(&pki, &[]);
    handshake(&cfg, &proxy, "default.test").unwrap();
    assert_eq!(*rec.ocsp.lock().unwrap(), good, "the response is stapled");
    let list = cli(&sock, "show ssl ocsp-response\n");
    assert!(list.starts_with("# Certificate IDs\nCertificate ID key : 303a300906052b0e03021a0500"), "{list}");
    assert!(list.contains("   Serial Number: 42\n"), "{list}");
    let revoked = ocsp_response(0x42, false);
    let b64 = base64::engine::general_purpose::STANDARD.encode(&revoked);
    assert_eq!(cli(&sock, &format!("set ssl ocsp-response {b64}\n")).trim_end(), "OCSP Response updated!");
    handshake(&cfg, &proxy, "default.test").unwrap();
    assert_eq!(*rec.ocsp.lock().unwrap(), revoked, "the new response is stapled to new handshakes");
}
