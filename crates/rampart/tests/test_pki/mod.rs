//! Shared by the TLS black-box tests: a directory of their own for each test's PEM
//! files, and the certificates made with rcgen that most of them start from (ECDSA
//! P-256 keys, as HAProxy's reg-tests mostly use).
//!
//! Each test file includes this module and uses part of it.
#![allow(dead_code)] // each test file uses a different subset

use std::path::PathBuf;

/// An empty directory for one test's files, `<tmp>/rampart-<tag>-<pid>`: what an
/// earlier run of the same process id left is removed first.
pub fn fresh_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rampart-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A new ECDSA P-256 key pair.
pub fn key() -> rcgen::KeyPair {
    rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap()
}

/// A self-signed CA certificate with common name `cn`, and its key.
pub fn ca(cn: &str) -> (rcgen::Certificate, rcgen::KeyPair) {
    let k = key();
    let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    p.distinguished_name.push(rcgen::DnType::CommonName, cn);
    p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    (p.self_signed(&k).unwrap(), k)
}

/// A certificate for `names` (the first one is also its common name) signed by `ca`,
/// followed by its key: one PEM file's contents, as `crt` reads them.
pub fn leaf_pem(names: &[&str], ca: &rcgen::Certificate, ca_key: &rcgen::KeyPair) -> String {
    let k = key();
    let mut p = rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    if let Some(cn) = names.first() {
        p.distinguished_name.push(rcgen::DnType::CommonName, *cn);
    }
    let c = p.signed_by(&k, ca, ca_key).unwrap();
    format!("{}{}", c.pem(), k.serialize_pem())
}

/// A rustls client trusting `ca`, presenting `auth` (a certificate and its key) when
/// given, without session resumption: a resumed session reports the certificate of
/// the session it resumes, which would hide what the server serves now.
pub fn client_config(
    ca: &rcgen::Certificate,
    auth: Option<(&rcgen::Certificate, &rcgen::KeyPair)>,
) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der().clone()).unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let mut cfg = match auth {
        Some((cert, kp)) => {
            let key = rustls::pki_types::PrivateKeyDer::try_from(kp.serialize_der()).unwrap();
            builder.with_client_auth_cert(vec![cert.der().clone()], key).unwrap()
        }
        None => builder.with_no_client_auth(),
    };
    cfg.resumption = rustls::client::Resumption::disabled();
    cfg
}
