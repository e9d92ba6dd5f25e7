//! Loading of the PEM files a configuration names: a certificate chain with its private
//! key (in the same file, or in `<file>.key` beside it), a CA file, a CRL file.
//! Errors are worded as HAProxy's alerts and name the file.
//! HAProxy counterpart: ssl_ckch.c (`ssl_sock_load_files_into_ckch()`,
//! `ssl_store_load_locations_file()`).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::{PemObject, SectionKind};
use rustls_pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer};

/// Why a PEM file could not be used. The `Display` text is HAProxy's alert wording (the
/// caller adds the `parsing [file:line]` prefix).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PemError {
    /// The certificate file cannot be read (missing, unreadable).
    #[error("unable to stat SSL certificate from file '{path}' : {why}.")]
    Stat { path: String, why: String },
    /// The file holds no certificate, or a damaged one.
    #[error("unable to load certificate from file '{path}'.")]
    NoCert { path: String },
    /// Neither the certificate file nor `<file>.key` holds a private key.
    #[error("No Private Key found in '{path}.key'.")]
    NoKey { path: String },
    /// The private key is not the one of the first certificate.
    #[error("inconsistencies between private key and certificate loaded '{path}'.")]
    Mismatch { path: String },
    /// The key's algorithm is one the crypto provider cannot sign with.
    #[error("unable to load SSL private key from file '{path}'.")]
    BadKey { path: String },
    /// The `<file>.ocsp` beside a certificate is no usable OCSP response.
    #[error("'{path}.ocsp' : {why}.")]
    Ocsp { path: String, why: &'static str },
    /// A `ca-file` or `crl-file` cannot be read or holds nothing usable.
    #[error("Couldn't open the ca-file '{path}' ({why}).")]
    Store { path: String, why: String },
}

/// A certificate chain (leaf first) and its private key, as read from one `crt` entry.
#[derive(Debug)]
pub struct CertKey {
    /// The file the chain came from, as the configuration wrote it.
    pub path: String,
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

impl CertKey {
    /// Checks that the key matches the leaf certificate and can sign with `provider`,
    /// and returns what a rustls resolver serves.
    pub fn certified(&self, provider: &CryptoProvider) -> Result<Arc<CertifiedKey>, PemError> {
        let signer = provider
            .key_provider
            .load_private_key(self.key.clone_key())
            .map_err(|_| PemError::BadKey { path: self.path.clone() })?;
        let ck = CertifiedKey::new(self.chain.clone(), signer);
        match ck.keys_match() {
            Ok(()) => Ok(Arc::new(ck)),
            // the key type does not say its public key: nothing to compare
            Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => Ok(Arc::new(ck)),
            // COMPAT: rustls cannot read X.509 v1 certificates to compare their key;
            // OpenSSL can, and so does this second look (HAProxy's reg-tests use some).
            Err(_) if same_public_key(&self.chain[0], ck.key.public_key().as_deref()) => Ok(Arc::new(ck)),
            Err(_) => Err(PemError::Mismatch { path: self.path.clone() }),
        }
    }
}

/// Whether the certificate `cert` carries the public key of `spki` (the key bits,
/// whatever the encoding of the algorithm's parameters).
fn same_public_key(cert: &CertificateDer<'_>, spki: Option<&[u8]>) -> bool {
    use x509_parser::prelude::FromDer;
    let Some(spki) = spki else { return false };
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(cert) else { return false };
    let Ok((_, key)) = x509_parser::x509::SubjectPublicKeyInfo::from_der(spki) else { return false };
    cert.public_key().subject_public_key.data == key.subject_public_key.data
}

/// The text of an OS error as strerror(3) gives it (no "(os error N)" suffix).
fn strerror(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => nix::errno::Errno::from_raw(code).desc().to_string(),
        None => e.to_string(),
    }
}

/// Every PEM section of `data`, or `None` when the data is not well-formed PEM.
fn sections(data: &[u8]) -> Option<Vec<(SectionKind, Vec<u8>)>> {
    <(SectionKind, Vec<u8>)>::pem_slice_iter(data).collect::<Result<Vec<_>, _>>().ok()
}

/// The first private key among `secs` (PKCS#8, PKCS#1 RSA or SEC1 EC).
fn first_key(secs: &mut Vec<(SectionKind, Vec<u8>)>) -> Option<PrivateKeyDer<'static>> {
    let i = secs.iter().position(|(k, _)| {
        matches!(k, SectionKind::PrivateKey | SectionKind::RsaPrivateKey | SectionKind::EcPrivateKey)
    })?;
    // `remove`, not `swap_remove`: the certificates keep their order (leaf first)
    let (kind, der) = secs.remove(i);
    Some(match kind {
        SectionKind::RsaPrivateKey => PrivateKeyDer::Pkcs1(der.into()),
        SectionKind::EcPrivateKey => PrivateKeyDer::Sec1(der.into()),
        _ => PrivateKeyDer::Pkcs8(der.into()),
    })
}

/// Loads a `crt` file: its certificates (leaf first, then the chain) and the private key
/// from the same file or, when it has none, from `<path>.key`.
///
/// COMPAT: as HAProxy, an expired certificate loads (clients decide what to do with it).
pub fn load_cert_key(path: &Path) -> Result<CertKey, PemError> {
    load_cert_key_ext(path, false)
}

/// [`load_cert_key`]; with `noext` (`ssl-load-extra-del-ext`) the key of `<name>.crt`
/// is read from `<name>.key`.
pub fn load_cert_key_ext(path: &Path, noext: bool) -> Result<CertKey, PemError> {
    let name = path.display().to_string();
    let data = fs::read(path).map_err(|e| PemError::Stat { path: name.clone(), why: strerror(&e) })?;
    let key = key_path(path, noext);
    let ck = load_cert_key_from(&name, &data, || fs::read(&key).ok());
    ck.map_err(|e| match e {
        PemError::NoKey { .. } => PemError::NoKey { path: key.display().to_string().trim_end_matches(".key").into() },
        e => e,
    })
}

/// A certificate file whose key, when it holds none, is in file `key` (a `crt-store`
/// entry's `load crt <file> key <file>`).
pub fn load_cert_key_with(path: &Path, key: &Path) -> Result<CertKey, PemError> {
    let name = path.display().to_string();
    let data = fs::read(path).map_err(|e| PemError::Stat { path: name.clone(), why: strerror(&e) })?;
    load_cert_key_from(&name, &data, || fs::read(key).ok()).map_err(|e| match e {
        PemError::NoKey { .. } => PemError::NoKey { path: key.display().to_string() },
        e => e,
    })
}

/// Where HAProxy looks for the key of a certificate file that holds none: `<path>.key`,
/// or with `noext` (`ssl-load-extra-del-ext`) `<name>.key` for a `<name>.crt`.
pub fn key_path(path: &Path, noext: bool) -> PathBuf {
    let text = path.as_os_str().to_string_lossy();
    let base = match text.strip_suffix(".crt") {
        Some(b) if noext => b,
        _ => &text,
    };
    PathBuf::from(format!("{base}.key"))
}

/// [`load_cert_key`] on bytes already read (`name` is the file named in errors;
/// `side_key` reads the `.key` file when needed). Also used by the runtime API, whose
/// payloads come from the stats socket.
pub fn load_cert_key_from(
    name: &str,
    data: &[u8],
    side_key: impl FnOnce() -> Option<Vec<u8>>,
) -> Result<CertKey, PemError> {
    let (chain, key) = load_payload(name, data)?;
    let key = match key {
        Some(k) => k,
        None => side_key()
            .and_then(|d| sections(&d))
            .and_then(|mut s| first_key(&mut s))
            .ok_or_else(|| PemError::NoKey { path: name.to_string() })?,
    };
    Ok(CertKey { path: name.to_string(), chain, key })
}

/// The certificates (leaf first) and the private key, if any, of PEM text `data`
/// (a `crt` file, or a `set ssl cert` payload); `name` is the file named in errors.
pub fn load_payload(
    name: &str,
    data: &[u8],
) -> Result<(Vec<CertificateDer<'static>>, Option<PrivateKeyDer<'static>>), PemError> {
    let no_cert = || PemError::NoCert { path: name.to_string() };
    let mut secs = sections(data).ok_or_else(no_cert)?;
    let key = first_key(&mut secs);
    let chain: Vec<CertificateDer<'static>> =
        secs.into_iter().filter(|(k, _)| *k == SectionKind::Certificate).map(|(_, d)| d.into()).collect();
    match chain.first() {
        Some(leaf) if x509_parser::parse_x509_certificate(leaf).is_ok() => Ok((chain, key)),
        _ => Err(no_cert()),
    }
}

/// Reads a whole store file (`ca-file`, `crl-file`): its sections, or the alert.
fn load_store(path: &Path) -> Result<Vec<(SectionKind, Vec<u8>)>, PemError> {
    let name = path.display().to_string();
    let data = fs::read(path).map_err(|e| PemError::Store { path: name.clone(), why: strerror(&e) })?;
    let empty = || PemError::Store { path: name.clone(), why: "no certificate or crl found".into() };
    let secs = sections(&data).ok_or_else(empty)?;
    if !secs.iter().any(|(k, _)| matches!(k, SectionKind::Certificate | SectionKind::Crl)) {
        return Err(empty());
    }
    Ok(secs)
}

/// Loads the certificates of a `ca-file` (CRLs in the same file are skipped).
pub fn load_ca_file(path: &Path) -> Result<Vec<CertificateDer<'static>>, PemError> {
    let secs = load_store(path)?;
    let certs: Vec<_> =
        secs.into_iter().filter(|(k, _)| *k == SectionKind::Certificate).map(|(_, d)| d.into()).collect();
    if certs.is_empty() {
        return Err(PemError::Store { path: path.display().to_string(), why: "no certificate or crl found".into() });
    }
    Ok(certs)
}

/// The CA certificates and the CRLs of a CLI payload (`set ssl ca-file`, `set ssl
/// crl-file`), in their order; `None` when the text is not PEM.
pub fn store_payload(
    data: &[u8],
) -> Option<(Vec<CertificateDer<'static>>, Vec<CertificateRevocationListDer<'static>>)> {
    let mut certs = Vec::new();
    let mut crls = Vec::new();
    for (kind, der) in sections(data)? {
        match kind {
            SectionKind::Certificate => certs.push(der.into()),
            SectionKind::Crl => crls.push(der.into()),
            _ => {}
        }
    }
    Some((certs, crls))
}

/// Loads the CRLs of a `crl-file`.
pub fn load_crl_file(path: &Path) -> Result<Vec<CertificateRevocationListDer<'static>>, PemError> {
    let secs = load_store(path)?;
    let crls: Vec<_> = secs.into_iter().filter(|(k, _)| *k == SectionKind::Crl).map(|(_, d)| d.into()).collect();
    if crls.is_empty() {
        return Err(PemError::Store { path: path.display().to_string(), why: "no certificate or crl found".into() });
    }
    Ok(crls)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HAProxy's reg-test files: the key before the chain (common.pem), and an X.509 v1
    /// certificate (client1.pem).
    #[test]
    fn keys_match_as_openssl_compares_them() {
        let provider = rustls::crypto::aws_lc_rs::default_provider();
        for f in ["common.pem", "client1.pem"] {
            let path = Path::new("/tmp/haproxy-2.6/reg-tests/ssl").join(f);
            if !path.exists() {
                continue;
            }
            let ck = load_cert_key(&path).expect("loads");
            assert!(ck.certified(&provider).is_ok(), "{f}");
        }
        // another certificate's key is still refused
        let (a, b) = (gen("a.test", &rcgen::PKCS_ECDSA_P256_SHA256), gen("b.test", &rcgen::PKCS_ECDSA_P256_SHA256));
        let mixed = format!("{}{}", a.0, b.1);
        let ck = load_cert_key_from("mixed.pem", mixed.as_bytes(), || None).expect("loads");
        assert_eq!(ck.certified(&provider).err(), Some(PemError::Mismatch { path: "mixed.pem".into() }));
    }

    fn gen(name: &str, alg: &'static rcgen::SignatureAlgorithm) -> (String, String) {
        let kp = rcgen::KeyPair::generate_for(alg).unwrap();
        let cert = rcgen::CertificateParams::new(vec![name.to_string()]).unwrap().self_signed(&kp).unwrap();
        (cert.pem(), kp.serialize_pem())
    }

    fn provider() -> CryptoProvider {
        rustls::crypto::aws_lc_rs::default_provider()
    }

    #[test]
    fn chain_and_key_in_one_file() {
        let (c, k) = gen("a.test", &rcgen::PKCS_ECDSA_P256_SHA256);
        let ck = load_cert_key_from("x.pem", format!("{c}{k}").as_bytes(), || None).unwrap();
        assert_eq!(ck.chain.len(), 1);
        assert!(matches!(ck.key, PrivateKeyDer::Pkcs8(_)));
        assert!(ck.certified(&provider()).is_ok());
        // key first, then the certificate: same result
        let ck = load_cert_key_from("x.pem", format!("{k}{c}").as_bytes(), || None).unwrap();
        assert_eq!(ck.chain.len(), 1);
    }

    #[test]
    fn key_first_then_leaf_then_chain_keeps_the_chain_order() {
        let (leaf, k) = gen("leaf.test", &rcgen::PKCS_ECDSA_P256_SHA256);
        let (ca, _) = gen("ca.test", &rcgen::PKCS_ECDSA_P256_SHA256);
        let ck = load_cert_key_from("c.pem", format!("{k}{leaf}{ca}").as_bytes(), || None).unwrap();
        assert_eq!(ck.chain.len(), 2);
        // the SAN, then the CN rcgen puts by default
        assert_eq!(crate::tls::sni::cert_names(&ck.chain[0]), ["leaf.test", "rcgen self signed cert"]);
        assert!(ck.certified(&provider()).is_ok());
    }

    #[test]
    fn key_beside_the_certificate() {
        let dir = std::env::temp_dir().join(format!("rampart-pem-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (c, k) = gen("b.test", &rcgen::PKCS_ECDSA_P256_SHA256);
        let p = dir.join("b.pem");
        fs::write(&p, &c).unwrap();
        assert_eq!(load_cert_key(&p).unwrap_err(), PemError::NoKey { path: p.display().to_string() });
        assert_eq!(
            load_cert_key(&p).unwrap_err().to_string(),
            format!("No Private Key found in '{}.key'.", p.display())
        );
        fs::write(key_path(&p, false), &k).unwrap();
        let ck = load_cert_key(&p).unwrap();
        assert!(ck.certified(&provider()).is_ok());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn del_ext_reads_the_key_of_a_crt_without_its_extension() {
        let dir = std::env::temp_dir().join(format!("rampart-pem-noext-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (c, k) = gen("n.test", &rcgen::PKCS_ECDSA_P256_SHA256);
        let p = dir.join("n.crt");
        fs::write(&p, &c).unwrap();
        assert_eq!(key_path(&p, true), dir.join("n.key"));
        assert_eq!(key_path(&p, false), dir.join("n.crt.key"));
        assert_eq!(key_path(&dir.join("n.pem"), true), dir.join("n.pem.key"));
        assert_eq!(
            load_cert_key_ext(&p, true).unwrap_err().to_string(),
            format!("No Private Key found in '{}'.", dir.join("n.key").display())
        );
        fs::write(dir.join("n.key"), &k).unwrap();
        assert!(load_cert_key_ext(&p, true).unwrap().certified(&provider()).is_ok());
        assert!(matches!(load_cert_key_ext(&p, false), Err(PemError::NoKey { .. })));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_file_is_named_with_strerror() {
        let e = load_cert_key(Path::new("/nonexistent/x.pem")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unable to stat SSL certificate from file '/nonexistent/x.pem' : No such file or directory."
        );
    }

    #[test]
    fn garbage_truncated_and_empty_files_hold_no_certificate() {
        let (c, k) = gen("a.test", &rcgen::PKCS_ECDSA_P256_SHA256);
        let full = format!("{c}{k}");
        // a truncated file ends inside the certificate section
        for data in [b"garbage\n".as_slice(), b"", &full.as_bytes()[..100], k.as_bytes()] {
            let e = load_cert_key_from("g.pem", data, || Some(k.clone().into_bytes())).unwrap_err();
            assert_eq!(e.to_string(), "unable to load certificate from file 'g.pem'.");
        }
        // well-formed PEM around a damaged certificate
        let bad = format!("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n{k}");
        let e = load_cert_key_from("g.pem", bad.as_bytes(), || None).unwrap_err();
        assert_eq!(e, PemError::NoCert { path: "g.pem".into() });
    }

    #[test]
    fn key_of_another_certificate_is_refused() {
        let (c, _) = gen("a.test", &rcgen::PKCS_ECDSA_P256_SHA256);
        for alg in [&rcgen::PKCS_ECDSA_P256_SHA256, &rcgen::PKCS_ECDSA_P384_SHA384, &rcgen::PKCS_ED25519] {
            let (_, k2) = gen("b.test", alg);
            let ck = load_cert_key_from("m.pem", format!("{c}{k2}").as_bytes(), || None).unwrap();
            let e = ck.certified(&provider()).unwrap_err();
            assert_eq!(e.to_string(), "inconsistencies between private key and certificate loaded 'm.pem'.");
        }
    }

    #[test]
    fn ca_and_crl_files() {
        let dir = std::env::temp_dir().join(format!("rampart-pem-ca-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (c1, _) = gen("ca1", &rcgen::PKCS_ECDSA_P256_SHA256);
        let (c2, _) = gen("ca2", &rcgen::PKCS_ECDSA_P256_SHA256);
        let ca = dir.join("ca.pem");
        fs::write(&ca, format!("{c1}{c2}")).unwrap();
        assert_eq!(load_ca_file(&ca).unwrap().len(), 2);
        let junk = dir.join("junk.pem");
        fs::write(&junk, "junk\n").unwrap();
        assert_eq!(
            load_ca_file(&junk).unwrap_err().to_string(),
            format!("Couldn't open the ca-file '{}' (no certificate or crl found).", junk.display())
        );
        assert_eq!(
            load_ca_file(&dir.join("none.pem")).unwrap_err().to_string(),
            format!("Couldn't open the ca-file '{}' (No such file or directory).", dir.join("none.pem").display())
        );
        // a CA file holds no CRL
        assert!(load_crl_file(&ca).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
