//! Test certificates and CRLs: rcgen for X.509 v3 certificates and v2 CRLs, DER built
//! by hand (signed with aws-lc-rs) for what rcgen does not write: v1 CRLs (as
//! `openssl ca` writes them without extensions) and v1 certificates.

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_ASN1_SIGNING};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, SerialNumber, PKCS_ECDSA_P256_SHA256};
use rustls_pki_types::{CertificateDer, CertificateRevocationListDer};
use x509_parser::prelude::{FromDer, X509Certificate};

/// A CA: its certificate and key.
pub struct Ca {
    pub cert: rcgen::Certificate,
    pub key: KeyPair,
}

impl Ca {
    pub fn der(&self) -> CertificateDer<'static> {
        self.cert.der().clone()
    }

    /// The CA's subject DN, DER.
    fn subject(&self) -> Vec<u8> {
        let (_, c) = X509Certificate::from_der(self.cert.der().as_ref()).expect("CA parses");
        c.subject().as_raw().to_vec()
    }

    /// Signs `tbs` with the CA's key (ECDSA P-256 SHA-256).
    fn sign(&self, tbs: &[u8]) -> Vec<u8> {
        let kp = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &self.key.serialize_der()).expect("key");
        kp.sign(&SystemRandom::new(), tbs).expect("signs").as_ref().to_vec()
    }
}

fn key() -> KeyPair {
    KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key")
}

/// A self-signed CA named `cn`.
pub fn ca(cn: &str) -> Ca {
    let key = key();
    let mut p = CertificateParams::new(Vec::<String>::new()).expect("params");
    p.distinguished_name.push(DnType::CommonName, cn);
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    Ca { cert: p.self_signed(&key).expect("CA"), key }
}

/// An intermediate CA named `cn` signed by `by` (`ca: false` gives a certificate
/// that may not issue others).
pub fn intermediate(by: &Ca, cn: &str, ca: bool) -> Ca {
    let key = key();
    let mut p = CertificateParams::new(Vec::<String>::new()).expect("params");
    p.distinguished_name.push(DnType::CommonName, cn);
    p.is_ca = if ca { IsCa::Ca(BasicConstraints::Unconstrained) } else { IsCa::ExplicitNoCa };
    Ca { cert: p.signed_by(&key, &by.cert, &by.key).expect("intermediate"), key }
}

/// What a leaf certificate differs by.
#[derive(Clone, Copy)]
pub struct Leaf {
    pub serial: u64,
    /// Validity years (from January 1st): not before, not after.
    pub years: (i32, i32),
    /// Extended key usage: server authentication only.
    pub server_only: bool,
}

impl Default for Leaf {
    fn default() -> Self {
        Leaf { serial: 8, years: (2020, 2090), server_only: false }
    }
}

/// A v3 leaf certificate named `cn` signed by `by`.
pub fn leaf(by: &Ca, cn: &str, l: Leaf) -> CertificateDer<'static> {
    let mut p = CertificateParams::new(Vec::<String>::new()).expect("params");
    p.distinguished_name.push(DnType::CommonName, cn);
    p.serial_number = Some(SerialNumber::from(l.serial));
    p.not_before = rcgen::date_time_ymd(l.years.0, 1, 1);
    p.not_after = rcgen::date_time_ymd(l.years.1, 1, 1);
    if l.server_only {
        p.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    }
    p.signed_by(&key(), &by.cert, &by.key).expect("leaf").der().clone()
}

/// A v2 CRL of `by` (rcgen) revoking `serials`, valid from 2020 to 2090.
pub fn v2_crl(by: &Ca, serials: &[u64]) -> CertificateRevocationListDer<'static> {
    let params = rcgen::CertificateRevocationListParams {
        this_update: rcgen::date_time_ymd(2020, 1, 1),
        next_update: rcgen::date_time_ymd(2090, 1, 1),
        crl_number: SerialNumber::from(1u64),
        issuing_distribution_point: None,
        revoked_certs: serials
            .iter()
            .map(|s| rcgen::RevokedCertParams {
                serial_number: SerialNumber::from(*s),
                revocation_time: rcgen::date_time_ymd(2021, 1, 1),
                reason_code: None,
                invalidity_date: None,
            })
            .collect(),
        key_identifier_method: rcgen::KeyIdMethod::Sha256,
    };
    params.signed_by(&by.cert, &by.key).expect("CRL").der().clone()
}

/// A DER element.
pub fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let n = content.len();
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes: Vec<u8> = n.to_be_bytes().into_iter().skip_while(|b| *b == 0).collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(content);
    out
}

/// A small positive INTEGER.
fn integer(n: u64) -> Vec<u8> {
    let mut bytes: Vec<u8> = n.to_be_bytes().into_iter().skip_while(|b| *b == 0).collect();
    if bytes.first().is_none_or(|b| b & 0x80 != 0) {
        bytes.insert(0, 0);
    }
    der(0x02, &bytes)
}

/// ecdsa-with-SHA256's AlgorithmIdentifier.
fn ecdsa_sha256() -> Vec<u8> {
    der(0x30, &der(0x06, &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]))
}

/// A UTCTime (`YYMMDDhhmmssZ`).
fn utc(s: &str) -> Vec<u8> {
    der(0x17, s.as_bytes())
}

/// `tbs`, its algorithm and its signature by `by`, as a SEQUENCE.
fn signed(by: &Ca, tbs: Vec<u8>) -> Vec<u8> {
    let mut sig = vec![0];
    sig.extend(by.sign(&tbs));
    der(0x30, &[tbs, ecdsa_sha256(), der(0x03, &sig)].concat())
}

/// A v1 CRL (no version field, no extensions) of `by` revoking `serials`, valid
/// between the UTCTimes `this` and `next`.
pub fn v1_crl(by: &Ca, serials: &[u64], this: &str, next: &str) -> CertificateRevocationListDer<'static> {
    let entries: Vec<u8> =
        serials.iter().flat_map(|s| der(0x30, &[integer(*s), utc("210101000000Z")].concat())).collect();
    let mut tbs = [ecdsa_sha256(), by.subject(), utc(this), utc(next)].concat();
    if !entries.is_empty() {
        tbs.extend(der(0x30, &entries));
    }
    signed(by, der(0x30, &tbs)).into()
}

/// A v1 certificate (no version field, no extensions) named `cn` with `serial`,
/// signed by `by`, and its key.
pub fn v1_leaf(by: &Ca, cn: &str, serial: u64) -> (CertificateDer<'static>, KeyPair) {
    let k = key();
    // Name: SEQUENCE { SET { SEQUENCE { OID CN, UTF8String } } }
    let cn = der(0x30, &der(0x31, &der(0x30, &[der(0x06, &[0x55, 0x04, 0x03]), der(0x0c, cn.as_bytes())].concat())));
    let validity = der(0x30, &[utc("200101000000Z"), utc("491231000000Z")].concat());
    let tbs = [integer(serial), ecdsa_sha256(), by.subject(), validity, cn, k.public_key_der()].concat();
    (signed(by, der(0x30, &tbs)).into(), k)
}
