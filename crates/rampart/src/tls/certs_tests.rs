//! Unit tests of `tls::certs`: the transaction and its replies.

use rampart_cfg::model::{BindSsl, GlobalSsl};
use rustls::SignatureScheme;

use super::*;

/// A certificate for `name` (serial `serial`) with its key, as one PEM text.
fn pem_for(name: &str, serial: u64) -> (String, String) {
    let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut p = rcgen::CertificateParams::new(vec![name.to_string()]).unwrap();
    p.serial_number = Some(serial.into());
    p.distinguished_name.push(rcgen::DnType::CommonName, name);
    let c = p.self_signed(&kp).unwrap();
    (c.pem(), kp.serialize_pem())
}

/// Certs over one bind serving `a.pem` (for a.test), the default, and `b.pem`.
fn setup(dir: &std::path::Path) -> (Certs, Arc<BindTls>, String, String) {
    let a = dir.join("a.pem").display().to_string();
    let b = dir.join("b.pem").display().to_string();
    let (c, k) = pem_for("a.test", 1);
    std::fs::write(&a, format!("{c}{k}")).unwrap();
    let (c, k) = pem_for("b.test", 2);
    std::fs::write(&b, format!("{c}{k}")).unwrap();
    let ssl = BindSsl { enabled: true, crts: vec![a.clone().into(), b.clone().into()], ..Default::default() };
    let (tls, _) = super::super::bind::build(&ssl, &GlobalSsl::default()).expect("built");
    let tls = Arc::new(tls);
    (Certs::new(vec![tls.clone()], Vec::new()), tls, a, b)
}

const ALL: &[SignatureScheme] = &[SignatureScheme::ECDSA_NISTP256_SHA256, SignatureScheme::RSA_PSS_SHA256];

/// The serial of the certificate `tls` serves to `sni` now.
fn served(tls: &BindTls, sni: Option<&str>) -> Vec<u8> {
    let ck = tls.store.load().choose(sni, ALL).unwrap();
    let (_, c) = x509_parser::parse_x509_certificate(&ck.cert[0]).unwrap();
    c.raw_serial().to_vec()
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("rampart-certs-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn set_then_commit_swaps_the_certificate_for_new_handshakes() {
    let dir = tmp("commit");
    let (certs, tls, a, b) = setup(&dir);
    assert_eq!(certs.show(None), format!("# filename\n{a}\n{b}\n"));
    assert_eq!(served(&tls, Some("b.test")), [2]);
    let before = tls.store.load_full();
    let (c, k) = pem_for("c.test", 7);
    assert_eq!(certs.set(Some(&b), Some(&format!("{c}{k}"))), format!("Transaction created for certificate {b}!\n"));
    assert_eq!(certs.set(Some(&b), Some(&format!("{c}{k}"))), format!("Transaction updated for certificate {b}!\n"));
    assert_eq!(certs.show(None), format!("# transaction\n*{b}\n# filename\n{a}\n{b}\n"));
    let pending = certs.show(Some(&format!("*{b}")));
    assert!(pending.starts_with(&format!("Filename: *{b}\nStatus: Unused\nSerial: 07\n")), "{pending}");
    assert!(
        pending.contains("\nSubject Alternative Name: DNS:c.test\nAlgorithm: EC256\nSHA1 FingerPrint: "),
        "{pending}"
    );
    assert!(pending.ends_with("\nSubject: /CN=c.test\nIssuer: /CN=c.test\nOCSP Response Key: \n"), "{pending}");
    // nothing changes before the commit
    assert_eq!(served(&tls, Some("b.test")), [2]);
    assert_eq!(certs.commit(Some(&b)), format!("Committing {b}.\nSuccess!\n"));
    assert_eq!(served(&tls, Some("c.test")), [7]);
    assert!(!tls.store.load().serves(Some("b.test")), "the old names are gone");
    assert_eq!(served(&tls, Some("a.test")), [1]);
    assert!(certs.show(Some(&b)).starts_with(&format!("Filename: {b}\nStatus: Used\nSerial: 07\n")));
    // a handshake that loaded the store before keeps the old certificate
    let old = before.choose(Some("b.test"), ALL).unwrap();
    let (_, old) = x509_parser::parse_x509_certificate(&old.cert[0]).unwrap();
    assert_eq!(old.raw_serial(), [2]);
    assert_eq!(certs.show(None), format!("# filename\n{a}\n{b}\n"));
    assert_eq!(certs.commit(Some(&b)), format!("No ongoing transaction! !\nCan't commit {b}!\n"));
    // replacing the default certificate changes what a client without SNI gets
    let (c, k) = pem_for("d.test", 9);
    certs.set(Some(&a), Some(&format!("{c}{k}")));
    certs.commit(Some(&a));
    assert_eq!(served(&tls, None), [9]);
}

#[test]
fn transactions_refuse_other_files_bad_payloads_and_mismatched_keys() {
    let dir = tmp("refuse");
    let (certs, tls, a, b) = setup(&dir);
    let usage = "'set ssl cert expects a filename and a certificate as a payload\n";
    assert_eq!(certs.set(Some(&a), None), usage);
    assert_eq!(certs.set(None, Some("x")), usage);
    assert_eq!(certs.commit(None), "'commit ssl cert expects a filename\n");
    assert_eq!(certs.abort(None), "'abort ssl cert' expects a filename\n");
    assert_eq!(certs.abort(Some(&a)), "No ongoing transaction!\n");
    assert_eq!(
        certs.set(Some("/nosuch.pem"), Some("x")),
        "Can't replace a certificate which is not referenced by the configuration!\nCan't update /nosuch.pem!\n"
    );
    assert_eq!(
        certs.set(Some(&a), Some("garbage")),
        format!("unable to load certificate from file '{a}'.\nCan't load the payload\nCan't update {a}!\n")
    );
    assert_eq!(certs.show(Some("*x")), "Can't display the certificate: Not found or the certificate is a bundle!\n");
    // a certificate without its key: accepted in the transaction, refused at commit
    let (c, _) = pem_for("e.test", 3);
    assert_eq!(certs.set(Some(&a), Some(&c)), format!("Transaction created for certificate {a}!\n"));
    assert_eq!(
        certs.set(Some(&b), Some(&c)),
        format!("The ongoing transaction is about '{a}' but you are trying to set '{b}'\nCan't update {b}!\n")
    );
    assert_eq!(
        certs.commit(Some(&b)),
        format!("The ongoing transaction is about '{a}' but you are trying to set '{b}'\nCan't commit {b}!\n")
    );
    assert_eq!(
        certs.abort(Some(&b)),
        format!("The ongoing transaction is about '{a}' but you are trying to abort a transaction for '{b}'\n")
    );
    assert_eq!(
        certs.commit(Some(&a)),
        format!("The transaction must contain at least a certificate and a private key!\nCan't commit {a}!\n")
    );
    // a key that is not the certificate's
    let (_, other_key) = pem_for("f.test", 4);
    certs.set(Some(&a), Some(&format!("{c}{other_key}")));
    assert_eq!(
        certs.commit(Some(&a)),
        format!("inconsistencies between private key and certificate loaded '{a}'.\nCan't commit {a}!\n")
    );
    assert_eq!(certs.abort(Some(&a)), format!("Transaction aborted for certificate '{a}'!\n"));
    assert_eq!(certs.show(None), format!("# filename\n{a}\n{b}\n"));
    assert_eq!(served(&tls, Some("a.test")), [1]);
}

#[test]
fn show_prints_the_certificate_as_haproxy_does() {
    let t = "/tmp/haproxy-2.6/reg-tests/ssl";
    if !std::path::Path::new(t).exists() {
        return;
    }
    let ck = pem::load_cert_key(std::path::Path::new(&format!("{t}/common.pem"))).unwrap();
    let out = details("common.pem", "Used", &ck.chain, None);
    assert!(out.starts_with("Filename: common.pem\nStatus: Used\nSerial: 02\nnotBefore: Jan 17 23:02:38 2016 GMT\nnotAfter: Jan 16 23:02:38 2018 GMT\nSubject Alternative Name: DNS:commonName:copy\nAlgorithm: RSA2048\nSHA1 FingerPrint: 2195C9F0FD58470313013FC27C1B9CF9864BD1C6\nSubject: /C=FR/ST=Ile-de-France/L=Neuilly-sur-Seine/O=TOAD Consulting/OU=eParapher Team/CN=www.test1.com/emailAddress=arnault.michel@toad-consulting.fr\nIssuer: /C=FR/ST=Ile-de-France/L=Paris/O=ozon.io/CN=Ozon Test CA/emailAddress=support@ozon.io\nChain Subject: /C=FR/ST=Some-State/O=Internet Widgits Pty Ltd\n"), "{out}");
    let ck = pem::load_cert_key(std::path::Path::new(&format!("{t}/ecdsa.pem"))).unwrap();
    let out = details("e.pem", "Unused", &ck.chain, None);
    // no SAN: the line is there, empty, as HAProxy prints it
    let c1 = pem::load_cert_key(std::path::Path::new(&format!("{t}/client1.pem"))).unwrap();
    assert!(details("c.pem", "Used", &c1.chain, None).contains("GMT\nSubject Alternative Name: \nAlgorithm: RSA4096\n"));
    assert_eq!(out, "Filename: e.pem\nStatus: Unused\nSerial: 6038257B288B25229B496CE55373D3081FCF3D82\nnotBefore: Dec 19 09:31:12 2019 GMT\nnotAfter: Jan 18 09:31:12 2020 GMT\nSubject Alternative Name: DNS:localhost\nAlgorithm: EC384\nSHA1 FingerPrint: A490D069DBAFBEE66DE434BEC34030ADE8BCCBF1\nSubject: /CN=localhost\nIssuer: /CN=localhost\nOCSP Response Key: \n");
}

#[test]
fn new_fills_and_del_removes_an_unused_store() {
    let dir = tmp("newdel");
    let (certs, tls, a, b) = setup(&dir);
    assert_eq!(certs.new_cert(None), "'new ssl cert' expects a filename\n");
    assert_eq!(certs.del_cert(None), "'del ssl cert' expects a certificate name\n");
    assert_eq!(certs.new_cert(Some(&a)), format!("Certificate '{a}' already exists!\n"));
    assert_eq!(certs.new_cert(Some("/n.pem")), "New empty certificate store '/n.pem'!\n");
    assert_eq!(certs.new_cert(Some("/n.pem")), "Certificate '/n.pem' already exists!\n");
    // in byte order, as HAProxy lists them
    assert_eq!(certs.show(None), format!("# filename\n/n.pem\n{a}\n{b}\n"));
    assert_eq!(certs.show(Some("/n.pem")), "Filename: /n.pem\nStatus: Empty\nOCSP Response Key: \n");
    let (c, k) = pem_for("n.test", 5);
    assert_eq!(certs.set(Some("/n.pem"), Some(&format!("{c}{k}"))), "Transaction created for certificate /n.pem!\n");
    assert_eq!(
        certs.del_cert(Some("/n.pem")),
        "Can't remove the certificate: ongoing transaction for the certificate '/n.pem'\n"
    );
    // no bind uses it: no dot
    assert_eq!(certs.commit(Some("/n.pem")), "Committing /n.pem\nSuccess!\n");
    assert!(certs.show(Some("/n.pem")).starts_with("Filename: /n.pem\nStatus: Unused\nSerial: 05\n"));
    assert!(!tls.store.load().serves(Some("n.test")));
    assert_eq!(
        certs.del_cert(Some(&a)),
        format!("Can't remove the certificate: certificate '{a}' in use, can't be deleted!\n\n")
    );
    assert_eq!(certs.del_cert(Some("/n.pem")), "Certificate '/n.pem' deleted!\n");
    assert_eq!(certs.del_cert(Some("/n.pem")), "Can't remove the certificate: certificate '/n.pem' doesn't exist!\n\n");
    assert_eq!(certs.show(None), format!("# filename\n{a}\n{b}\n"));
}

#[test]
fn a_server_crt_is_listed_shown_and_replaced_by_commit() {
    let dir = tmp("server");
    let path = dir.join("client.pem").display().to_string();
    let (c, k) = pem_for("client.test", 3);
    std::fs::write(&path, format!("{c}{k}")).unwrap();
    let provider = rustls::crypto::aws_lc_rs::default_provider();
    let key = pem::load_cert_key(std::path::Path::new(&path)).unwrap().certified(&provider).unwrap();
    let crt = Arc::new(ServerCrt::new(path.clone(), key, 8));
    let certs = Certs::new(Vec::new(), vec![crt.clone()]);
    assert_eq!(certs.show(None), format!("# filename\n{path}\n"));
    assert!(certs.show(Some(&path)).starts_with(&format!("Filename: {path}\nStatus: Used\nSerial: 03\n")));
    let (c, k) = pem_for("client.test", 9);
    assert_eq!(
        certs.set(Some(&path), Some(&format!("{c}{k}"))),
        format!("Transaction created for certificate {path}!\n")
    );
    assert_eq!(crt.generation(), 0, "nothing changes before the commit");
    assert_eq!(certs.commit(Some(&path)), format!("Committing {path}.\nSuccess!\n"));
    assert_eq!(crt.generation(), 1);
    let current = crt.current();
    let (_, now) = x509_parser::parse_x509_certificate(&current.cert[0]).unwrap();
    assert_eq!(now.raw_serial(), [9]);
    assert!(certs.show(Some(&path)).contains("Serial: 09\n"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn key_and_crt_parts_with_del_ext() {
    let dir = tmp("noext");
    let (crt, key) = (dir.join("s.crt"), dir.join("s.key"));
    let (c, k) = pem_for("s.test", 1);
    std::fs::write(&crt, c).unwrap();
    std::fs::write(&key, k).unwrap();
    let ssl = BindSsl { enabled: true, crts: vec![crt.clone()], ..Default::default() };
    let g = GlobalSsl { extra_files_noext: true, ..Default::default() };
    let (tls, _) = super::super::bind::build(&ssl, &g).expect("s.key is read beside s.crt");
    let tls = Arc::new(tls);
    let certs = Certs::new(vec![tls.clone()], Vec::new());
    let (crt, base) = (crt.display().to_string(), dir.join("s").display().to_string());
    let (c2, k2) = pem_for("t.test", 2);
    // the certificate alone, then its key under `<name>.key`: one transaction
    assert_eq!(certs.set(Some(&crt), Some(&c2)), format!("Transaction created for certificate {crt}!\n"));
    // COMPAT: HAProxy keeps the old key in the transaction (and would report the
    // mismatch); rampart has none until `<name>.key` is set
    assert_eq!(
        certs.commit(Some(&crt)),
        format!("The transaction must contain at least a certificate and a private key!\nCan't commit {crt}!\n")
    );
    assert_eq!(
        certs.set(Some(&format!("{base}.key")), Some(&k2)),
        format!("Transaction updated for certificate {crt}!\n")
    );
    assert_eq!(
        certs.set(Some(&format!("{base}.key")), Some(&c2)),
        format!("No Private Key found in '{base}.key'.\nCan't load the payload\nCan't update {base}.key!\n")
    );
    assert_eq!(certs.commit(Some(&crt)), format!("Committing {crt}.\nSuccess!\n"));
    assert_eq!(served(&tls, Some("t.test")), [2]);
    // a key alone for a certificate being served keeps its certificates
    let (_, k3) = pem_for("u.test", 3);
    assert_eq!(
        certs.set(Some(&format!("{base}.key")), Some(&k3)),
        format!("Transaction created for certificate {crt}!\n")
    );
    assert!(certs.show(Some(&format!("*{crt}"))).contains("\nSerial: 02\n"));
    assert_eq!(
        certs.set(Some("/other.key"), Some(&k3)),
        format!(
            "The ongoing transaction is about '{crt}' but you are trying to set '/other'\nCan't update /other.key!\n"
        )
    );
}
