//! Unit tests of `tls::castore`: the transactions, their replies, and the verifiers a
//! commit swaps in (checked with in-memory handshakes).

use rampart_cfg::model::{BindSsl, GlobalSsl, Verify};
use rustls_pki_types::{ServerName, UnixTime};

use super::*;

/// Two CAs, a bind certificate and client certificates, as PEM files in a directory.
pub(super) struct Pki {
    dir: std::path::PathBuf,
    pub(super) cas: Vec<(rcgen::Certificate, rcgen::KeyPair)>,
}

impl Pki {
    pub(super) fn new(name: &str) -> Pki {
        let dir = std::env::temp_dir().join(format!("rampart-castore-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cas: Vec<_> = ["CA1", "CA2"]
            .iter()
            .map(|cn| {
                let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
                let mut p = rcgen::CertificateParams::new(Vec::new()).unwrap();
                p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
                p.distinguished_name.push(rcgen::DnType::CommonName, *cn);
                (p.self_signed(&kp).unwrap(), kp)
            })
            .collect();
        let pki = Pki { dir, cas };
        for (i, (c, _)) in pki.cas.iter().enumerate() {
            std::fs::write(pki.path(&format!("ca{}.crt", i + 1)), c.pem()).unwrap();
        }
        pki
    }

    pub(super) fn path(&self, f: &str) -> String {
        self.dir.join(f).display().to_string()
    }

    /// A certificate for `name` signed by CA `ca` (0 or 1), serial `serial`, with its key.
    pub(super) fn leaf(
        &self,
        ca: usize,
        name: &str,
        serial: u64,
    ) -> (rustls_pki_types::CertificateDer<'static>, rcgen::KeyPair) {
        let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut p = rcgen::CertificateParams::new(vec![name.to_string()]).unwrap();
        p.serial_number = Some(serial.into());
        p.distinguished_name.push(rcgen::DnType::CommonName, name);
        let (ca_cert, ca_key) = &self.cas[ca];
        (p.signed_by(&kp, ca_cert, ca_key).unwrap().der().clone(), kp)
    }

    /// A CRL of CA `ca` revoking `serials`, PEM.
    pub(super) fn crl(&self, ca: usize, serials: &[u64]) -> String {
        let (ca_cert, ca_key) = &self.cas[ca];
        let revoked_certs = serials
            .iter()
            .map(|s| rcgen::RevokedCertParams {
                serial_number: (*s).into(),
                revocation_time: rcgen::date_time_ymd(2024, 1, 1),
                reason_code: None,
                invalidity_date: None,
            })
            .collect();
        let params = rcgen::CertificateRevocationListParams {
            this_update: rcgen::date_time_ymd(2024, 1, 1),
            next_update: rcgen::date_time_ymd(2099, 1, 1),
            crl_number: 1u64.into(),
            issuing_distribution_point: None,
            revoked_certs,
            key_identifier_method: rcgen::KeyIdMethod::Sha256,
        };
        params.signed_by(ca_cert, ca_key).unwrap().pem().unwrap()
    }

    /// A bind serving `a.test` that requires a client certificate of `ca_file`
    /// (and checks `crl_file`).
    fn bind(&self, ca_file: &str, crl_file: Option<&str>) -> Arc<BindTls> {
        let (cert, kp) = self.leaf(0, "a.test", 1);
        let crt = self.path("site.pem");
        let pem = format!("{}{}", pem_of("CERTIFICATE", &cert), kp.serialize_pem());
        std::fs::write(&crt, pem).unwrap();
        let ssl = BindSsl {
            enabled: true,
            crts: vec![crt.into()],
            verify: Some(Verify::Required),
            ca_file: Some(self.path(ca_file).into()),
            crl_file: crl_file.map(|f| self.path(f).into()),
            ..Default::default()
        };
        Arc::new(super::super::bind::build(&ssl, &GlobalSsl::default()).expect("the bind builds").0)
    }

    /// A client configuration presenting a certificate of CA `ca` with serial `serial`.
    pub(super) fn client(&self, ca: usize, serial: u64) -> Arc<rustls::ClientConfig> {
        let (cert, kp) = self.leaf(ca, "client", serial);
        let key = rustls_pki_types::PrivateKeyDer::try_from(kp.serialize_der()).unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.cas[0].0.der().clone()).unwrap();
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let cfg = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_client_auth_cert(vec![cert], key)
            .unwrap();
        Arc::new(cfg)
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub(super) fn pem_of(label: &str, der: &[u8]) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = b64.as_bytes().chunks(64).map(|c| std::str::from_utf8(c).unwrap()).collect();
    format!("-----BEGIN {label}-----\n{}\n-----END {label}-----\n", lines.join("\n"))
}

/// Runs a handshake in memory between `client` and the bind's current configuration.
fn handshake(tls: &BindTls, client: Arc<rustls::ClientConfig>) -> Result<(), rustls::Error> {
    let name = ServerName::try_from("a.test").unwrap();
    let mut c = rustls::ClientConnection::new(client, name)?;
    let mut s = rustls::ServerConnection::new(tls.config())?;
    for _ in 0..10 {
        let mut buf = Vec::new();
        while c.wants_write() {
            c.write_tls(&mut buf).unwrap();
        }
        let mut rd = &buf[..];
        while !rd.is_empty() {
            s.read_tls(&mut rd).unwrap();
        }
        s.process_new_packets()?;
        let mut buf = Vec::new();
        while s.wants_write() {
            s.write_tls(&mut buf).unwrap();
        }
        let mut rd = &buf[..];
        while !rd.is_empty() {
            c.read_tls(&mut rd).unwrap();
        }
        c.process_new_packets()?;
        if !c.is_handshaking() && !s.is_handshaking() {
            return Ok(());
        }
    }
    Err(rustls::Error::General("the handshake did not finish".into()))
}

#[test]
fn a_committed_ca_file_verifies_new_handshakes() {
    let pki = Pki::new("commit");
    let tls = pki.bind("ca1.crt", None);
    let store = CaStore::new(vec![tls.clone()], Vec::new());
    let (ca1, ca2) = (pki.path("ca1.crt"), pki.path("ca2.crt"));
    assert_eq!(store.show(Kind::Ca, None, &()), format!("# filename\n{ca1} - 1 certificate(s)\n"));
    assert_eq!(store.show(Kind::Crl, None, &()), "# filename\n");
    assert!(handshake(&tls, pki.client(0, 10)).is_ok());
    assert!(handshake(&tls, pki.client(1, 11)).is_err(), "CA2 is not trusted yet");
    let both = format!("{}{}", pki.cas[0].0.pem(), pki.cas[1].0.pem());
    assert_eq!(store.set(Kind::Ca, Some(&ca1), Some(&both)), format!("transaction created for CA {ca1}!\n"));
    assert_eq!(
        store.show(Kind::Ca, None, &()),
        format!("# transaction\n*{ca1} - 2 certificate(s)\n# filename\n{ca1} - 1 certificate(s)\n")
    );
    assert!(handshake(&tls, pki.client(1, 11)).is_err(), "not committed yet");
    let before = tls.config();
    assert_eq!(store.commit(Kind::Ca, Some(&ca1), &()), format!("Committing {ca1}.\nSuccess!\n"));
    assert!(handshake(&tls, pki.client(1, 11)).is_ok(), "CA2 is trusted now");
    assert!(handshake(&tls, pki.client(0, 12)).is_ok());
    assert_eq!(store.show(Kind::Ca, None, &()), format!("# filename\n{ca1} - 2 certificate(s)\n"));
    assert_eq!(store.contents(&ca1).map(|c| c.cas().len()), Some(2));
    // the configuration a handshake already started with is not changed
    assert!(!Arc::ptr_eq(&before, &tls.config()));
    assert_eq!(before.alpn_protocols, tls.config().alpn_protocols);
    // a file no bind uses
    assert_eq!(
        store.set(Kind::Ca, Some(&ca2), Some(&both)),
        format!("Can't replace a CA file which is not referenced by the configuration!\nCan't update {ca2}!\n")
    );
}

#[test]
fn a_committed_crl_file_revokes_for_new_handshakes() {
    let pki = Pki::new("crl");
    std::fs::write(pki.path("ca2.crl"), pki.crl(1, &[])).unwrap();
    let tls = pki.bind("ca2.crt", Some("ca2.crl"));
    let store = CaStore::new(vec![tls.clone()], Vec::new());
    let crl = pki.path("ca2.crl");
    assert_eq!(store.show(Kind::Crl, None, &()), format!("# filename\n{crl}\n"));
    assert!(handshake(&tls, pki.client(1, 0x42)).is_ok());
    let revoking = pki.crl(1, &[0x42]);
    assert_eq!(store.set(Kind::Crl, Some(&crl), Some(&revoking)), format!("transaction created for CRL {crl}!\n"));
    let shown = store.show(Kind::Crl, Some(&format!("*{crl}")), &());
    assert!(shown.starts_with(&format!("Filename: *{crl}\nStatus: Unused\n \nCertificate Revocation List #1:\nVersion 2\nSignature Algorithm: ecdsa-with-SHA256\nIssuer: /CN=CA2\nLast Update: Jan  1 00:00:00 2024 GMT\nNext Update: Jan  1 00:00:00 2099 GMT\nRevoked Certificates:\n    Serial Number: 42\n        Revocation Date: Jan  1 00:00:00 2024 GMT\n")), "{shown}");
    assert!(handshake(&tls, pki.client(1, 0x42)).is_ok(), "not committed yet");
    assert_eq!(store.commit(Kind::Crl, Some(&crl), &()), format!("Committing {crl}.\nSuccess!\n"));
    assert!(handshake(&tls, pki.client(1, 0x42)).is_err(), "revoked");
    assert!(handshake(&tls, pki.client(1, 0x43)).is_ok(), "another serial");
    let shown = store.show(Kind::Crl, Some(&crl), &());
    assert!(shown.starts_with(&format!("Filename: {crl}\nStatus: Used\n")), "{shown}");
    assert_eq!(
        store.del_file(Kind::Crl, Some(&crl), &()),
        format!("Can't remove the CRL file: CRL file '{crl}' in use, can't be deleted!\n\n")
    );
}

#[test]
fn a_server_chain_verifier_follows_its_ca_file() {
    let pki = Pki::new("server");
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let ca1 = pki.path("ca1.crt");
    let cas = pem::load_ca_file(std::path::Path::new(&ca1)).unwrap();
    let v = verifier::server_chain(&cas, None, &provider).unwrap();
    let chain =
        Arc::new(SwapChain::new(ca1.clone(), None, provider, v, Arc::new(super::super::server_crt::Sessions::new(4))));
    let store = CaStore::new(Vec::new(), vec![chain.clone()]);
    let (leaf, _) = pki.leaf(1, "srv.test", 5);
    let name = ServerName::try_from("srv.test").unwrap();
    let check = || chain.current().verify(&leaf, &[], &name, &[], UnixTime::now(), false);
    assert!(check().is_err(), "signed by CA2");
    assert_eq!(chain.epoch(), 0);
    store.set(Kind::Ca, Some(&ca1), Some(&pki.cas[1].0.pem()));
    assert_eq!(chain.epoch(), 0, "not committed yet");
    assert_eq!(store.commit(Kind::Ca, Some(&ca1), &()), format!("Committing {ca1}.\nSuccess!\n"));
    assert!(check().is_ok());
    assert_eq!(chain.epoch(), 1, "idle connections verified before are not reused");
}

#[test]
fn transaction_replies_are_haproxys() {
    let pki = Pki::new("replies");
    let tls = pki.bind("ca1.crt", None);
    let store = CaStore::new(vec![tls], Vec::new());
    let ca1 = pki.path("ca1.crt");
    let pem = pki.cas[1].0.pem();
    assert_eq!(store.set(Kind::Ca, Some(&ca1), None), "'set ssl ca-file expects a filename and CAs as a payload\n");
    assert_eq!(store.set(Kind::Crl, None, None), "'set ssl crl-file expects a filename and CRLs as a payload\n");
    assert_eq!(store.set(Kind::Ca, Some(&ca1), Some("xx\n")), format!("Invalid payload\nCan't update {ca1}!\n"));
    assert_eq!(store.commit(Kind::Ca, None, &()), "'commit ssl ca-file expects a filename\n");
    assert_eq!(store.commit(Kind::Ca, Some(&ca1), &()), format!("No ongoing transaction! !\nCan't commit {ca1}!\n"));
    assert_eq!(store.abort(Kind::Crl, None), "'abort ssl crl-file' expects a filename\n");
    assert_eq!(store.abort(Kind::Ca, Some("x")), "No ongoing transaction!\n");
    assert_eq!(store.new_file(Kind::Ca, Some("new.crt")), "New CA file created 'new.crt'!\n");
    assert_eq!(store.new_file(Kind::Ca, Some("new.crt")), "CA file 'new.crt' already exists!\n");
    assert_eq!(store.new_file(Kind::Crl, None), "'new ssl crl-file' expects a filename\n");
    assert_eq!(store.show(Kind::Ca, Some("new.crt"), &()), "", "HAProxy prints nothing of an empty CA file");
    assert_eq!(store.set(Kind::Ca, Some("new.crt"), Some(&pem)), "transaction created for CA new.crt!\n");
    assert_eq!(store.set(Kind::Ca, Some("new.crt"), Some(&pem)), "transaction updated for CA new.crt!\n");
    assert_eq!(
        store.set(Kind::Ca, Some(&ca1), Some(&pem)),
        format!("The ongoing transaction is about 'new.crt' but you are trying to set '{ca1}'\nCan't update {ca1}!\n")
    );
    assert_eq!(
        store.commit(Kind::Ca, Some(&ca1), &()),
        format!("The ongoing transaction is about 'new.crt' but you are trying to set '{ca1}'\nCan't commit {ca1}!\n")
    );
    assert_eq!(
        store.abort(Kind::Ca, Some(&ca1)),
        format!("The ongoing transaction is about 'new.crt' but you are trying to abort a transaction for '{ca1}'\n")
    );
    assert_eq!(
        store.del_file(Kind::Ca, Some("new.crt"), &()),
        "Can't remove the CA file: ongoing transaction for the CA file 'new.crt'\n"
    );
    // the CRL transaction is another one
    assert_eq!(store.abort(Kind::Crl, Some("new.crt")), "No ongoing transaction!\n");
    assert_eq!(store.commit(Kind::Ca, Some("new.crt"), &()), "Committing new.crt\nSuccess!\n", "no user: no dot");
    let shown = store.show(Kind::Ca, Some("new.crt"), &());
    assert!(shown.starts_with("Filename: new.crt\nStatus: Unused\n \nCertificate #1:\nSerial: "), "{shown}");
    assert!(shown.contains("\nSubject Alternative Name: \nAlgorithm: EC256\nSHA1 FingerPrint: "), "{shown}");
    assert!(shown.ends_with("\nSubject: /CN=CA2\nIssuer: /CN=CA2\n"), "{shown}");
    assert_eq!(store.show(Kind::Ca, Some("new.crt:1"), &()), shown);
    assert_eq!(store.show(Kind::Ca, Some("new.crt:2"), &()), "");
    assert_eq!(store.show(Kind::Ca, Some("new.crt:0"), &()), "wrong CA index after colons in 'new.crt:0'!\n");
    assert_eq!(store.show(Kind::Crl, Some("new.crt"), &()), "Can't display the CRL file : Not found!\n");
    assert_eq!(store.show(Kind::Ca, Some("*new.crt"), &()), "Can't display the CA file : Not found!\n");
    assert_eq!(store.set(Kind::Ca, Some("new.crt"), Some(&pem)), "transaction created for CA new.crt!\n");
    assert_eq!(store.abort(Kind::Ca, Some("new.crt")), "Transaction aborted for certificate 'new.crt'!\n");
    assert_eq!(
        store.del_file(Kind::Ca, Some(&ca1), &()),
        format!("Can't remove the CA file: CA file '{ca1}' in use, can't be deleted!\n\n")
    );
    assert_eq!(
        store.del_file(Kind::Crl, Some("nope"), &()),
        "Can't remove the CRL file: CRL file 'nope' doesn't exist!\n\n"
    );
    assert_eq!(store.del_file(Kind::Ca, None, &()), "'del ssl ca-file' expects a CA file name\n");
    assert_eq!(store.del_file(Kind::Ca, Some("new.crt"), &()), "CA file 'new.crt' deleted!\n");
    assert_eq!(store.show(Kind::Ca, None, &()), format!("# filename\n{ca1} - 1 certificate(s)\n"));
    assert_eq!(store.new_file(Kind::Crl, Some("n.crl")), "New CRL file created 'n.crl'!\n");
    assert_eq!(store.show(Kind::Crl, Some("n.crl"), &()), "Filename: n.crl\nStatus: Empty\n");
    assert_eq!(store.new_file(Kind::Ca, Some("n.crl")), "CA file 'n.crl' already exists!\n");
}

/// HAProxy's own reg-test files, when present: X.509 v1 CRLs shown as OpenSSL does.
#[test]
fn reg_test_crl_is_shown_as_openssl_prints_it() {
    let path = std::path::Path::new("/tmp/haproxy-2.6/reg-tests/ssl/interCA2_crl.pem");
    let Ok(text) = std::fs::read_to_string(path) else { return };
    let (_, crls) = pem::store_payload(text.as_bytes()).unwrap();
    let shown = show::details("x", "Used", &Contents::Crl(crls), Some(1));
    assert_eq!(
        shown,
        "Filename: x\nStatus: Used\n \nCertificate Revocation List #1:\nVersion 1\n\
         Signature Algorithm: sha256WithRSAEncryption\nIssuer: /C=FR/O=HAProxy Technologies/CN=Intermediate CA2\n\
         Last Update: Apr 23 14:45:39 2021 GMT\nNext Update: Sep  8 14:45:39 2048 GMT\nRevoked Certificates:\n    \
         Serial Number: 1008\n        Revocation Date: Apr 23 14:45:36 2021 GMT\n"
    );
}

/// HAProxy's own reg-test files, when present: a v1 server certificate revoked by a
/// v1 CRL is refused by a server line's chain check.
#[test]
fn reg_test_server_certificate_is_revoked_by_its_crl() {
    let dir = std::path::Path::new("/tmp/haproxy-2.6/reg-tests/ssl");
    let Ok(server) = std::fs::read(dir.join("set_cafile_server.pem")) else { return };
    let (leaf, _) = pem::load_payload("server", &server).unwrap();
    let mut cas = pem::load_ca_file(&dir.join("set_cafile_interCA2.crt")).unwrap();
    cas.extend(pem::load_ca_file(&dir.join("set_cafile_rootCA.crt")).unwrap());
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let name = ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into());
    let empty = pem::load_crl_file(&dir.join("interCA2_crl_empty.pem")).unwrap();
    let chain = verifier::server_chain(&cas, Some(&empty), &provider).unwrap();
    assert!(chain.verify(&leaf[0], &leaf[1..], &name, &[], UnixTime::now(), true).is_ok());
    let revoking = pem::load_crl_file(&dir.join("interCA2_crl.pem")).unwrap();
    let chain = verifier::server_chain(&cas, Some(&revoking), &provider).unwrap();
    assert!(chain.verify(&leaf[0], &leaf[1..], &name, &[], UnixTime::now(), true).is_err());
}

/// The reg-test's sequence on a server line: the CA file gets its root, then the CRL
/// file a CRL revoking the server's certificate.
#[test]
fn reg_test_server_crl_commit_revokes() {
    let dir = std::path::Path::new("/tmp/haproxy-2.6/reg-tests/ssl");
    let Ok(server) = std::fs::read(dir.join("set_cafile_server.pem")) else { return };
    let (leaf, _) = pem::load_payload("server", &server).unwrap();
    let path = |f: &str| dir.join(f).display().to_string();
    let (ca, crl) = (path("set_cafile_interCA2.crt"), path("interCA2_crl_empty.pem"));
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let cas = pem::load_ca_file(std::path::Path::new(&ca)).unwrap();
    let crls = pem::load_crl_file(std::path::Path::new(&crl)).unwrap();
    let v = verifier::server_chain(&cas, Some(&crls), &provider).unwrap();
    let chain = Arc::new(SwapChain::new(
        ca.clone(),
        Some(crl.clone()),
        provider,
        v,
        Arc::new(super::super::server_crt::Sessions::new(4)),
    ));
    let store = CaStore::new(Vec::new(), vec![chain.clone()]);
    let name = ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into());
    let check = || chain.current().verify(&leaf[0], &leaf[1..], &name, &[], UnixTime::now(), true);
    assert!(check().is_err(), "no root yet");
    let text = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let both = text("set_cafile_interCA2.crt") + &text("set_cafile_rootCA.crt");
    store.set(Kind::Ca, Some(&ca), Some(&both));
    assert_eq!(store.commit(Kind::Ca, Some(&ca), &()), format!("Committing {ca}.\nSuccess!\n"));
    assert!(check().is_ok());
    store.set(Kind::Crl, Some(&crl), Some(&text("interCA2_crl.pem")));
    assert_eq!(store.commit(Kind::Crl, Some(&crl), &()), format!("Committing {crl}.\nSuccess!\n"));
    assert!(check().is_err(), "revoked");
}
