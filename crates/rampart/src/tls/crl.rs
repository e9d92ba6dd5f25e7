//! Certificate revocation lists of a `crl-file`: parsed with x509-parser (X.509 v1
//! CRLs, without extensions, as `openssl ca` writes them by default, and v2 ones),
//! their signature checked with the issuing CA's key, then looked up by the issuer
//! and the serial of a certificate.
//! HAProxy counterpart: the CRLs ssl_sock.c loads into OpenSSL's `X509_STORE`
//! (`ssl_set_verify_locations_file()`), checked by OpenSSL with
//! `X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL`.
//!
//! Not here: building the chain and reporting OpenSSL's error codes (`tls::chain`).

use rustls_pki_types::{CertificateDer, CertificateRevocationListDer};
use x509_parser::prelude::{FromDer, X509Certificate};
use x509_parser::revocation_list::CertificateRevocationList;

use super::chain::{self, code};

/// One CRL, kept in the fields revocation checks read.
#[derive(Debug, Clone)]
pub struct Crl {
    /// The issuer's DN, DER (compared with a certificate's issuer).
    issuer: Vec<u8>,
    /// `thisUpdate`, Unix seconds.
    this_update: i64,
    /// `nextUpdate`, Unix seconds, when present.
    next_update: Option<i64>,
    /// The revoked serial numbers, big-endian without leading zeros, sorted.
    revoked: Vec<Vec<u8>>,
    /// The whole CRL, DER, to check its signature with a CA met only in a chain.
    der: CertificateRevocationListDer<'static>,
    /// Whether its signature was checked when loaded (its issuer was in the CA file).
    verified: bool,
}

/// A serial number without its leading zero bytes.
fn serial_key(raw: &[u8]) -> &[u8] {
    let start = raw.iter().position(|&b| b != 0).unwrap_or(raw.len());
    &raw[start..]
}

impl Crl {
    /// Parses one CRL (v1 or v2) and checks its signature with the CA of `cas` that
    /// issued it; a CRL of a CA not in `cas` is checked when a chain shows its issuer.
    pub fn parse(der: CertificateRevocationListDer<'static>, cas: &[CertificateDer<'_>]) -> Result<Crl, String> {
        let (_, crl) = CertificateRevocationList::from_der(der.as_ref()).map_err(|e| format!("{e}"))?;
        let issuer = crl.issuer().as_raw().to_vec();
        let mut revoked: Vec<Vec<u8>> =
            crl.iter_revoked_certificates().map(|r| serial_key(r.raw_serial()).to_vec()).collect();
        revoked.sort_unstable();
        let mut verified = false;
        let mut signer_found = false;
        for ca in cas {
            let Ok((_, ca)) = X509Certificate::from_der(ca.as_ref()) else { continue };
            if ca.subject().as_raw() != issuer.as_slice() {
                continue;
            }
            signer_found = true;
            if verify_crl(&crl, &ca) {
                verified = true;
                break;
            }
        }
        if signer_found && !verified {
            return Err("the CRL signature does not verify with its issuer's key".into());
        }
        Ok(Crl {
            issuer,
            this_update: crl.last_update().timestamp(),
            next_update: crl.next_update().map(|t| t.timestamp()),
            revoked,
            der,
            verified,
        })
    }

    /// Whether `raw_serial` (a certificate's serial number) is listed.
    pub fn revokes(&self, raw_serial: &[u8]) -> bool {
        self.revoked.binary_search_by(|s| s.as_slice().cmp(serial_key(raw_serial))).is_ok()
    }
}

/// Whether the signature of `crl` verifies with the key of `ca`.
fn verify_crl(crl: &CertificateRevocationList<'_>, ca: &X509Certificate<'_>) -> bool {
    chain::verify_signed(
        crl.tbs_cert_list.as_ref(),
        &crl.signature_algorithm,
        &crl.signature_value.data,
        ca.public_key(),
    )
}

/// The CRLs of a bind or a server.
#[derive(Debug, Clone, Default)]
pub struct CrlSet {
    crls: Vec<Crl>,
}

impl CrlSet {
    /// The CRLs of `ders` (one `crl-file`), each checked against `cas`; the error
    /// says why one cannot be used.
    pub fn load(ders: Vec<CertificateRevocationListDer<'static>>, cas: &[CertificateDer<'_>]) -> Result<Self, String> {
        let crls = ders.into_iter().map(|d| Crl::parse(d, cas)).collect::<Result<Vec<_>, _>>()?;
        Ok(CrlSet { crls })
    }

    pub fn is_empty(&self) -> bool {
        self.crls.is_empty()
    }

    /// The revocation errors of `cert`, issued by `issuer` (itself when self-signed;
    /// `None` when the chain does not show it), at time `now` (Unix seconds), in
    /// OpenSSL's order: no CRL (3), unverifiable (33) or bad signature (8), not yet
    /// valid (11) or expired (12), then revoked (23).
    pub fn check(&self, cert: &X509Certificate<'_>, issuer: Option<&X509Certificate<'_>>, now: i64) -> Vec<i32> {
        let name = cert.issuer().as_raw();
        let Some(crl) = self.crls.iter().find(|c| c.issuer == name) else {
            return vec![code::UNABLE_TO_GET_CRL];
        };
        let mut errs = Vec::new();
        if !crl.verified {
            match issuer {
                None => errs.push(code::UNABLE_TO_GET_CRL_ISSUER),
                Some(ca) => {
                    let ok = CertificateRevocationList::from_der(crl.der.as_ref())
                        .is_ok_and(|(_, parsed)| verify_crl(&parsed, ca));
                    if !ok {
                        errs.push(code::CRL_SIGNATURE_FAILURE);
                    }
                }
            }
        }
        if crl.this_update > now {
            errs.push(code::CRL_NOT_YET_VALID);
        }
        if crl.next_update.is_some_and(|n| n < now) {
            errs.push(code::CRL_HAS_EXPIRED);
        }
        if crl.revokes(cert.raw_serial()) {
            errs.push(code::CERT_REVOKED);
        }
        errs
    }
}

#[cfg(test)]
#[path = "crl_tests.rs"]
mod tests;
