use super::*;
use rustls::client::danger::ServerCertVerifier;
use rustls_pki_types::{ServerName, UnixTime};

/// A CA (PEM with its key, signing with `alg`) and a default certificate (key `leaf`)
/// written in a fresh directory; returns the CA path, the CA DER and the default
/// certificate as a bind serves it.
fn setup(
    tag: &str,
    alg: &'static SignatureAlgorithm,
    leaf: &'static SignatureAlgorithm,
) -> (std::path::PathBuf, CertificateDer<'static>, Arc<CertifiedKey>) {
    let dir = std::env::temp_dir().join(format!("rampart-gencert-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_key = KeyPair::generate_for(alg).unwrap();
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.distinguished_name = DistinguishedName::new();
    p.distinguished_name.push(DnType::CountryName, DnValue::PrintableString("FR".try_into().unwrap()));
    p.distinguished_name.push(DnType::CommonName, "Test CA");
    p.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
    let ca = p.self_signed(&ca_key).unwrap();
    let ca_path = dir.join("ca.pem");
    std::fs::write(&ca_path, format!("{}{}", ca.pem(), ca_key.serialize_pem())).unwrap();
    let leaf_key = KeyPair::generate_for(leaf).unwrap();
    let cert = CertificateParams::new(vec!["default.test".to_string()]).unwrap().self_signed(&leaf_key).unwrap();
    let provider = rustls::crypto::aws_lc_rs::default_provider();
    let pk = rustls_pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
    let signer = provider.key_provider.load_private_key(pk).unwrap();
    (ca_path, ca.der().clone(), Arc::new(CertifiedKey::new(vec![cert.der().clone()], signer)))
}

fn verifier(ca: &CertificateDer<'static>) -> Arc<rustls::client::WebPkiServerVerifier> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.clone()).unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider).build().unwrap()
}

fn provider() -> CryptoProvider {
    rustls::crypto::aws_lc_rs::default_provider()
}

#[test]
fn a_certificate_for_the_name_signed_by_the_ca_with_the_default_key() {
    for (tag, alg, leaf, sig) in [
        ("ec", &rcgen::PKCS_ECDSA_P256_SHA256, &rcgen::PKCS_ECDSA_P384_SHA384, "ecdsa-with-SHA256"),
        ("rsa", &rcgen::PKCS_RSA_SHA256, &rcgen::PKCS_ECDSA_P256_SHA256, "sha256WithRSAEncryption"),
        ("p384", &rcgen::PKCS_ECDSA_P384_SHA384, &rcgen::PKCS_ECDSA_P256_SHA256, "ecdsa-with-SHA256"),
    ] {
        let (path, ca, default) = setup(tag, alg, leaf);
        let gen = CertGen::load(&path, &provider(), 10).unwrap();
        let got = gen.certificate("Www.Example.COM.", &default).unwrap();
        assert_eq!(got.cert.len(), 2, "{tag}");
        assert_eq!(got.cert[1], ca, "{tag}: the CA follows the leaf");
        assert!(Arc::ptr_eq(&got.key, &default.key), "{tag}: the default certificate's key signs");
        let (_, leaf_cert) = x509_parser::parse_x509_certificate(&got.cert[0]).unwrap();
        let (_, default_cert) = x509_parser::parse_x509_certificate(&default.cert[0]).unwrap();
        assert_eq!(leaf_cert.public_key().raw, default_cert.public_key().raw, "{tag}");
        assert_eq!(leaf_cert.subject().to_string(), "C=FR, CN=Test CA, CN=www.example.com", "{tag}");
        assert_eq!(leaf_cert.issuer().to_string(), "C=FR, CN=Test CA", "{tag}");
        assert_eq!(leaf_cert.serial.to_string(), "1", "{tag}");
        let sig_name = x509_parser::objects::oid2sn(
            &leaf_cert.signature_algorithm.algorithm,
            x509_parser::objects::oid_registry(),
        )
        .unwrap();
        assert_eq!(sig_name, sig, "{tag}");
        // a client trusting the CA accepts it for the name
        let name = ServerName::try_from("www.example.com").unwrap();
        verifier(&ca).verify_server_cert(&got.cert[0], &got.cert[1..], &name, &[], UnixTime::now()).unwrap();
        let other = ServerName::try_from("other.example.com").unwrap();
        assert!(verifier(&ca).verify_server_cert(&got.cert[0], &[], &other, &[], UnixTime::now()).is_err());
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }
}

#[test]
fn generated_certificates_are_cached_least_recently_used_first_out() {
    let (path, _, default) = setup("cache", &rcgen::PKCS_ECDSA_P256_SHA256, &rcgen::PKCS_ECDSA_P256_SHA256);
    let gen = CertGen::load(&path, &provider(), 2).unwrap();
    let a = gen.certificate("a.test", &default).unwrap();
    assert!(Arc::ptr_eq(&a, &gen.certificate("A.test", &default).unwrap()));
    let b = gen.certificate("b.test", &default).unwrap();
    assert!(Arc::ptr_eq(&a, &gen.certificate("a.test", &default).unwrap()));
    // c pushes b out (a was used last)
    gen.certificate("c.test", &default).unwrap();
    assert!(Arc::ptr_eq(&a, &gen.certificate("a.test", &default).unwrap()));
    let b2 = gen.certificate("b.test", &default).unwrap();
    assert!(!Arc::ptr_eq(&b, &b2));
    let (_, c) = x509_parser::parse_x509_certificate(&b2.cert[0]).unwrap();
    assert_eq!(c.serial.to_string(), "4", "each generated certificate has the next serial");
    // no cache: a new certificate each time
    let gen = CertGen::load(&path, &provider(), 0).unwrap();
    let x = gen.certificate("x.test", &default).unwrap();
    assert!(!Arc::ptr_eq(&x, &gen.certificate("x.test", &default).unwrap()));
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

#[test]
fn names_that_are_no_dns_name_get_nothing() {
    let (path, _, default) = setup("names", &rcgen::PKCS_ECDSA_P256_SHA256, &rcgen::PKCS_ECDSA_P256_SHA256);
    let gen = CertGen::load(&path, &provider(), 10).unwrap();
    for bad in ["", ".", "a,DNS:evil.test", "a b", "x:y", "é.test", &"a".repeat(254)] {
        assert!(gen.certificate(bad, &default).is_none(), "{bad}");
    }
    // a name too long for a CN is only in the subject alternative name
    let long = format!("{}.test", "a".repeat(70));
    let got = gen.certificate(&long, &default).unwrap();
    let (_, c) = x509_parser::parse_x509_certificate(&got.cert[0]).unwrap();
    assert_eq!(c.subject().to_string(), "C=FR, CN=Test CA");
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

#[test]
fn ca_file_errors() {
    let missing = std::path::Path::new("/nonexistent/ca.pem");
    let e = CertGen::load(missing, &provider(), 10).unwrap_err();
    assert!(e.starts_with("Failed to read CA certificate file '/nonexistent/ca.pem'."), "{e}");
}
