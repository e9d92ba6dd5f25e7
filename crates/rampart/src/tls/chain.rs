//! A peer's certificate chain examined as OpenSSL does, to report its errors with
//! OpenSSL's codes (`ssl_c_verify`, `ssl_c_err`, `ssl_c_ca_err`, `crt-ignore-err`,
//! `ca-ignore-err` name them) and to accept what webpki cannot read (X.509 v1
//! certificates, SHA-1 signed CRLs): the chain is built by issuer name from the
//! peer's certificates and the CA file, then checked in OpenSSL's order (chain
//! building, CA and purpose extensions, revocation, then signatures and validity
//! from the root down), every error recorded with its depth.
//! HAProxy counterpart: OpenSSL's `X509_verify_cert()` as `ssl_sock_bind_verifycbk()`
//! sees it (each error passed to the callback, which may ignore it).
//!
//! Not here: the rustls verifiers that use it (`tls::verify`), CRL parsing (`tls::crl`).

use aws_lc_rs::signature::{self as sig, VerificationAlgorithm};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::{CertificateError, DigitallySignedStruct};
use rustls_pki_types::CertificateDer;
use x509_parser::prelude::{FromDer, X509Certificate, X509Version};
use x509_parser::x509::{AlgorithmIdentifier, SubjectPublicKeyInfo};

use super::crl::CrlSet;
pub use super::types::VerifyOutcome;

/// OpenSSL's verification error codes (`X509_V_ERR_*`) rampart reports.
pub mod code {
    pub const OK: i32 = 0;
    pub const UNSPECIFIED: i32 = 1;
    pub const UNABLE_TO_GET_ISSUER_CERT: i32 = 2;
    pub const UNABLE_TO_GET_CRL: i32 = 3;
    pub const CERT_SIGNATURE_FAILURE: i32 = 7;
    pub const CRL_SIGNATURE_FAILURE: i32 = 8;
    pub const CERT_NOT_YET_VALID: i32 = 9;
    pub const CERT_HAS_EXPIRED: i32 = 10;
    pub const CRL_NOT_YET_VALID: i32 = 11;
    pub const CRL_HAS_EXPIRED: i32 = 12;
    pub const DEPTH_ZERO_SELF_SIGNED_CERT: i32 = 18;
    pub const SELF_SIGNED_CERT_IN_CHAIN: i32 = 19;
    pub const UNABLE_TO_GET_ISSUER_CERT_LOCALLY: i32 = 20;
    pub const UNABLE_TO_VERIFY_LEAF_SIGNATURE: i32 = 21;
    pub const CERT_CHAIN_TOO_LONG: i32 = 22;
    pub const CERT_REVOKED: i32 = 23;
    pub const INVALID_CA: i32 = 24;
    pub const INVALID_PURPOSE: i32 = 26;
    pub const UNABLE_TO_GET_CRL_ISSUER: i32 = 33;
}

/// One verification error: the depth of the certificate (0: the peer's own) and
/// OpenSSL's code.
pub type ChainError = (usize, i32);

/// OpenSSL's default maximum chain depth (`verify_depth` 100 would be HAProxy's
/// `ca-verify-depth`; OpenSSL stops building at this many certificates).
const MAX_CHAIN: usize = 100;

/// What the peer's certificate is checked for (its extended key usage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A client certificate (`bind ... verify`).
    Client,
    /// A server certificate (`server ... verify required`).
    Server,
}

impl VerifyOutcome {
    /// The outcome of the errors a verification recorded (in order).
    pub fn of(errs: &[ChainError]) -> Self {
        let mut out = VerifyOutcome { result: errs.last().map_or(code::OK, |e| e.1), ..Default::default() };
        if let Some((_, c)) = errs.iter().find(|e| e.0 == 0) {
            out.crt_err = *c;
        }
        if let Some((d, c)) = errs.iter().find(|e| e.0 > 0) {
            out.ca_err = *c;
            out.ca_err_depth = i32::try_from(*d).unwrap_or(i32::MAX);
        }
        out
    }
}

/// The aws-lc-rs algorithm for a signature algorithm OID and the signer's key (the
/// curve of an EC key). SHA-1 RSA is kept for CRLs and old CAs, as OpenSSL does.
fn algorithm(sig_oid: &str, key: &SubjectPublicKeyInfo<'_>) -> Option<&'static dyn VerificationAlgorithm> {
    let curve = || key.algorithm.parameters.as_ref().and_then(|p| p.as_oid().ok()).map(|o| o.to_id_string());
    let p256 = "1.2.840.10045.3.1.7";
    Some(match sig_oid {
        "1.2.840.113549.1.1.5" => &sig::RSA_PKCS1_2048_8192_SHA1_FOR_LEGACY_USE_ONLY,
        "1.2.840.113549.1.1.11" => &sig::RSA_PKCS1_2048_8192_SHA256,
        "1.2.840.113549.1.1.12" => &sig::RSA_PKCS1_2048_8192_SHA384,
        "1.2.840.113549.1.1.13" => &sig::RSA_PKCS1_2048_8192_SHA512,
        "1.2.840.10045.4.3.2" if curve().as_deref() == Some(p256) => &sig::ECDSA_P256_SHA256_ASN1,
        "1.2.840.10045.4.3.2" => &sig::ECDSA_P384_SHA256_ASN1,
        "1.2.840.10045.4.3.3" if curve().as_deref() == Some(p256) => &sig::ECDSA_P256_SHA384_ASN1,
        "1.2.840.10045.4.3.3" => &sig::ECDSA_P384_SHA384_ASN1,
        "1.3.101.112" => &sig::ED25519,
        _ => return None,
    })
}

/// Whether `signature` over `signed` (a TBS certificate or CRL) by algorithm `alg`
/// verifies with `key`.
/// COMPAT: RSA-PSS signed certificates and CRLs are not checked (always fail).
pub fn verify_signed(
    signed: &[u8],
    alg: &AlgorithmIdentifier<'_>,
    signature: &[u8],
    key: &SubjectPublicKeyInfo<'_>,
) -> bool {
    let Some(alg) = algorithm(&alg.algorithm.to_id_string(), key) else { return false };
    sig::UnparsedPublicKey::new(alg, &key.subject_public_key.data[..]).verify(signed, signature).is_ok()
}

fn self_signed(c: &X509Certificate<'_>) -> bool {
    c.subject().as_raw() == c.issuer().as_raw()
}

fn signed_by(c: &X509Certificate<'_>, issuer: &X509Certificate<'_>) -> bool {
    verify_signed(c.tbs_certificate.as_ref(), &c.signature_algorithm, &c.signature_value.data, issuer.public_key())
}

/// Whether `c` may issue certificates, as OpenSSL's `check_ca()` sees it: its basic
/// constraints, else a v1 self-signed root, else a key usage extension.
fn is_ca(c: &X509Certificate<'_>) -> bool {
    match c.basic_constraints() {
        Ok(Some(bc)) => bc.value.ca,
        _ => (c.version() == X509Version::V1 && self_signed(c)) || matches!(c.key_usage(), Ok(Some(_))),
    }
}

/// Whether the extended key usage of the peer's certificate allows `purpose`.
fn purpose_ok(c: &X509Certificate<'_>, purpose: Purpose) -> bool {
    match c.extended_key_usage() {
        Ok(Some(eku)) => {
            let e = eku.value;
            e.any || if purpose == Purpose::Client { e.client_auth } else { e.server_auth }
        }
        Ok(None) => true,
        Err(_) => false,
    }
}

/// The trusted CAs (`ca-file`), indexed by subject: a handshake parses only the CAs
/// its chain names.
// PERF: a CA file is often a whole system bundle (some 150 CAs); parsing them all for
// each handshake would cost more than the verification itself.
#[derive(Debug, Clone, Default)]
pub struct CaStore {
    cas: Vec<(Vec<u8>, CertificateDer<'static>)>,
}

impl CaStore {
    /// The store of `cas` (those x509-parser cannot read are left out).
    pub fn new(cas: &[CertificateDer<'static>]) -> Self {
        let cas = cas
            .iter()
            .filter_map(|d| {
                let (_, c) = X509Certificate::from_der(d.as_ref()).ok()?;
                Some((c.subject().as_raw().to_vec(), d.clone()))
            })
            .collect();
        CaStore { cas }
    }

    /// The CAs whose subject is `name` (a DN, DER).
    fn named<'s>(&'s self, name: &'s [u8]) -> impl Iterator<Item = &'s CertificateDer<'static>> + 's {
        self.cas.iter().filter(move |(s, _)| s.as_slice() == name).map(|(_, d)| d)
    }

    /// The CAs of the store a chain from `certs` can reach by issuer names, parsed,
    /// with their DER.
    fn reachable<'a>(&'a self, certs: &[&X509Certificate<'a>]) -> Vec<(&'a [u8], X509Certificate<'a>)> {
        let mut out: Vec<(&'a [u8], X509Certificate<'a>)> = Vec::new();
        let mut wanted: Vec<&'a [u8]> = certs.iter().map(|c| c.tbs_certificate.issuer.as_raw()).collect();
        while let Some(name) = wanted.pop() {
            for der in self.named(name) {
                if out.iter().any(|(d, _)| *d == der.as_ref()) {
                    continue;
                }
                if let Ok((_, c)) = X509Certificate::from_der(der.as_ref()) {
                    wanted.push(c.tbs_certificate.issuer.as_raw());
                    out.push((der.as_ref(), c));
                }
            }
        }
        out
    }
}

/// The errors of the chain `peer` (leaf first, then what the peer sent) against the
/// trusted `cas` and the `crls` at time `now` (Unix seconds), in the order OpenSSL
/// reports them. `None` when the peer's own certificate cannot be parsed.
pub fn analyse(
    peer: &[CertificateDer<'_>],
    cas: &CaStore,
    crls: Option<&CrlSet>,
    purpose: Purpose,
    now: i64,
) -> Option<Vec<ChainError>> {
    let (_, leaf) = X509Certificate::from_der(peer.first()?.as_ref()).ok()?;
    let sent: Vec<X509Certificate<'_>> =
        peer[1..].iter().filter_map(|d| X509Certificate::from_der(d.as_ref()).ok().map(|(_, c)| c)).collect();
    let named: Vec<&X509Certificate<'_>> = std::iter::once(&leaf).chain(&sent).collect();
    let store = cas.reachable(&named);
    let mut errs = Vec::new();
    let (chain, trusted) = build(&leaf, peer[0].as_ref(), &sent, &store, &mut errs);
    for (i, c) in chain.iter().enumerate().skip(1) {
        if !is_ca(c) {
            errs.push((i, code::INVALID_CA));
        }
    }
    if !purpose_ok(&leaf, purpose) {
        errs.push((0, code::INVALID_PURPOSE));
    }
    if let Some(crls) = crls.filter(|c| !c.is_empty()) {
        for (i, c) in chain.iter().enumerate() {
            let issuer = chain.get(i + 1).copied().or_else(|| self_signed(c).then_some(*c));
            errs.extend(crls.check(c, issuer, now).into_iter().map(|code| (i, code)));
        }
    }
    signatures_and_times(&chain, trusted, now, &mut errs);
    Some(errs)
}

/// Builds the chain from `leaf` by issuer name: a CA of the store first, else one the
/// peer sent. Records why it stops short of a trusted self-signed root; says whether
/// it ends on one.
fn build<'c, 'a>(
    leaf: &'c X509Certificate<'a>,
    leaf_der: &[u8],
    sent: &'c [X509Certificate<'a>],
    store: &'c [(&[u8], X509Certificate<'a>)],
    errs: &mut Vec<ChainError>,
) -> (Vec<&'c X509Certificate<'a>>, bool) {
    let mut chain = vec![leaf];
    let mut in_store = store.iter().any(|(d, _)| *d == leaf_der);
    loop {
        let cur = chain[chain.len() - 1];
        let depth = chain.len() - 1;
        if self_signed(cur) {
            if in_store {
                return (chain, true);
            }
            errs.push((
                depth,
                if depth == 0 { code::DEPTH_ZERO_SELF_SIGNED_CERT } else { code::SELF_SIGNED_CERT_IN_CHAIN },
            ));
            return (chain, false);
        }
        if chain.len() >= MAX_CHAIN {
            errs.push((depth, code::CERT_CHAIN_TOO_LONG));
            return (chain, false);
        }
        let issued = |c: &X509Certificate<'_>| c.subject().as_raw() == cur.issuer().as_raw();
        let pick = |cands: &mut dyn Iterator<Item = &'c X509Certificate<'a>>| {
            let all: Vec<_> = cands.filter(|c| issued(c) && !chain.iter().any(|x| std::ptr::eq(*x, *c))).collect();
            all.iter().copied().find(|c| signed_by(cur, c)).or(all.first().copied())
        };
        if let Some(ca) = pick(&mut store.iter().map(|(_, c)| c)) {
            chain.push(ca);
            in_store = true;
            continue;
        }
        if !in_store {
            if let Some(c) = pick(&mut sent.iter()) {
                chain.push(c);
                continue;
            }
        }
        errs.push((
            depth,
            if in_store { code::UNABLE_TO_GET_ISSUER_CERT } else { code::UNABLE_TO_GET_ISSUER_CERT_LOCALLY },
        ));
        return (chain, false);
    }
}

/// OpenSSL's `internal_verify()`: from the top of the chain down, each certificate's
/// signature by the one above (not a self-signed root's own) and its validity dates.
fn signatures_and_times(chain: &[&X509Certificate<'_>], trusted: bool, now: i64, errs: &mut Vec<ChainError>) {
    let top = chain.len() - 1;
    let start = if trusted || self_signed(chain[top]) {
        top
    } else if top == 0 {
        errs.push((0, code::UNABLE_TO_VERIFY_LEAF_SIGNATURE));
        return;
    } else {
        top - 1
    };
    for i in (0..=start).rev() {
        let c = chain[i];
        if i < top && !signed_by(c, chain[i + 1]) {
            errs.push((i, code::CERT_SIGNATURE_FAILURE));
        }
        let v = c.validity();
        if v.not_before.timestamp() > now {
            errs.push((i, code::CERT_NOT_YET_VALID));
        }
        if v.not_after.timestamp() < now {
            errs.push((i, code::CERT_HAS_EXPIRED));
        }
    }
}

/// Whether one of the peer's certificates is not X.509 v3 (which webpki refuses, and
/// only [`analyse`] judges).
pub fn has_pre_v3(peer: &[CertificateDer<'_>]) -> bool {
    peer.iter().any(|d| X509Certificate::from_der(d.as_ref()).is_ok_and(|(_, c)| c.version() != X509Version::V3))
}

/// The rustls error a handshake fails with for OpenSSL's `code` (its alert).
pub fn rustls_error(code: i32) -> rustls::Error {
    use rustls::CertRevocationListError as Crl;
    match code {
        code::CERT_REVOKED => CertificateError::Revoked.into(),
        code::CERT_HAS_EXPIRED => CertificateError::Expired.into(),
        code::CERT_NOT_YET_VALID => CertificateError::NotValidYet.into(),
        code::CERT_SIGNATURE_FAILURE => CertificateError::BadSignature.into(),
        code::CRL_SIGNATURE_FAILURE => rustls::Error::InvalidCertRevocationList(Crl::BadSignature),
        code::CRL_HAS_EXPIRED => CertificateError::ExpiredRevocationList.into(),
        code::UNABLE_TO_GET_CRL | code::UNABLE_TO_GET_CRL_ISSUER | code::CRL_NOT_YET_VALID => {
            CertificateError::UnknownRevocationStatus.into()
        }
        code::INVALID_CA | code::INVALID_PURPOSE => CertificateError::InvalidPurpose.into(),
        code::UNSPECIFIED => CertificateError::BadEncoding.into(),
        _ => CertificateError::UnknownIssuer.into(),
    }
}

/// OpenSSL's code for a webpki verification error (one it found that [`analyse`]
/// did not).
pub fn code_of(e: &rustls::Error) -> i32 {
    let rustls::Error::InvalidCertificate(e) = e else { return code::UNSPECIFIED };
    match e {
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => code::CERT_HAS_EXPIRED,
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => code::CERT_NOT_YET_VALID,
        CertificateError::UnknownIssuer => code::UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
        CertificateError::BadSignature => code::CERT_SIGNATURE_FAILURE,
        CertificateError::Revoked => code::CERT_REVOKED,
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => code::INVALID_PURPOSE,
        _ => code::UNSPECIFIED,
    }
}

/// The contents of the first element of a DER SEQUENCE (the AlgorithmIdentifier of
/// a SubjectPublicKeyInfo): `(first element's contents)`.
fn first_inner_contents(der: &[u8]) -> Option<&[u8]> {
    let (_, outer) = tlv(der)?;
    tlv(outer).map(|(_, c)| c)
}

/// One DER element: its tag and contents.
fn tlv(der: &[u8]) -> Option<(u8, &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&len0, rest) = rest.split_first()?;
    let (len, rest) = if len0 < 0x80 {
        (usize::from(len0), rest)
    } else {
        let n = usize::from(len0 & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        (rest[..n].iter().fold(0usize, |a, &b| (a << 8) | usize::from(b)), &rest[n..])
    };
    rest.get(..len).map(|c| (tag, c))
}

/// Checks a handshake signature (CertificateVerify, ServerKeyExchange) with the key of
/// a certificate webpki cannot read (X.509 v1): the algorithms rustls maps `dss`'s
/// scheme to, the one for the key's type.
pub fn verify_handshake_signature(
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    algs: &WebPkiSupportedAlgorithms,
    tls13: bool,
) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
    let (_, c) = X509Certificate::from_der(cert.as_ref()).map_err(|_| CertificateError::BadEncoding)?;
    let spki = c.public_key();
    if tls13 {
        let der = rustls_pki_types::SubjectPublicKeyInfoDer::from(spki.raw);
        return rustls::crypto::verify_tls13_signature_with_raw_key(message, &der, dss, algs);
    }
    let key_alg = first_inner_contents(spki.raw).ok_or(CertificateError::BadEncoding)?;
    let cands: &[&dyn rustls_pki_types::SignatureVerificationAlgorithm] =
        algs.mapping.iter().find(|(s, _)| *s == dss.scheme).map_or(&[], |(_, a)| a);
    match cands.iter().find(|a| a.public_key_alg_id().as_ref() == key_alg) {
        Some(alg) => alg
            .verify_signature(&spki.subject_public_key.data, message, dss.signature())
            .map(|()| rustls::client::danger::HandshakeSignatureValid::assertion())
            .map_err(|_| CertificateError::BadSignature.into()),
        None => Err(rustls::Error::PeerIncompatible(rustls::PeerIncompatible::NoSignatureSchemesInCommon)),
    }
}

/// webpki's verdict on a handshake signature, unless it refused a certificate it
/// cannot read (X.509 v1, which OpenSSL takes): then [`verify_handshake_signature`]'s.
pub fn signature_or_pre_v3(
    webpki: Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error>,
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    algs: &WebPkiSupportedAlgorithms,
    tls13: bool,
) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
    match webpki {
        Err(_) if has_pre_v3(std::slice::from_ref(cert)) => verify_handshake_signature(message, cert, dss, algs, tls13),
        other => other,
    }
}

#[cfg(test)]
#[path = "chain_tests.rs"]
mod tests;
