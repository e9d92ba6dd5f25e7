//! One X.509 field of a certificate, as the certificate fetches give it: the
//! frontend's own certificate (`ssl_f_*`) and the newer client ones (`ssl_c_sig_alg`,
//! `ssl_c_key_alg`, `ssl_c_version`). HAProxy counterpart: `smp_fetch_ssl_x_*()` in
//! src/ssl_sample.c.

use std::borrow::Cow;

use crate::sample::kw::Arg;
use crate::sample::types::Sample;

use super::Emit;

/// Which field a fetch reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    Der,
    Sha1,
    Serial,
    NotAfter,
    NotBefore,
    SubjectDn,
    IssuerDn,
    /// The X.509 version, 1 to 3.
    Version,
    /// OpenSSL's short name of the signature algorithm (`RSA-SHA256`).
    SigAlg,
    /// OpenSSL's name of the public key algorithm (`rsaEncryption`).
    KeyAlg,
}

/// Emits `field` of the certificate `der` (nothing without one, or for a DER that
/// does not parse).
pub(super) fn emit_field<'a>(field: Field, der: Option<&'a [u8]>, args: &'a [Arg], emit: Emit<'_, 'a>) {
    use sha1::Digest;
    let Some(der) = der else { return };
    let text = |s: String| Sample::Str(Cow::Owned(s.into_bytes()));
    let raw = match field {
        Field::Der => Some(Sample::Bin(Cow::Borrowed(der))),
        Field::Sha1 => Some(Sample::Bin(Cow::Owned(sha1::Sha1::digest(der).to_vec()))),
        _ => None,
    };
    if let Some(s) = raw {
        emit(s);
        return;
    }
    let Ok((_, c)) = x509_parser::parse_x509_certificate(der) else { return };
    let sample = match field {
        Field::Der | Field::Sha1 => return,
        Field::Serial => Sample::Bin(Cow::Owned(c.tbs_certificate.raw_serial().to_vec())),
        Field::NotAfter => match super::ssl::asn1_time(&c.validity().not_after) {
            Some(s) => text(s),
            None => return,
        },
        Field::NotBefore => match super::ssl::asn1_time(&c.validity().not_before) {
            Some(s) => text(s),
            None => return,
        },
        Field::SubjectDn => match super::ssl::dn(c.subject(), args) {
            Some(s) => text(s),
            None => return,
        },
        Field::IssuerDn => match super::ssl::dn(c.issuer(), args) {
            Some(s) => text(s),
            None => return,
        },
        Field::Version => Sample::Sint(i64::from(c.version().0) + 1),
        Field::SigAlg => text(super::ssl_bc::openssl_oid_name(&c.signature_algorithm.algorithm.to_id_string())),
        Field::KeyAlg => text(super::ssl_bc::openssl_oid_name(&c.public_key().algorithm.algorithm.to_id_string())),
    };
    emit(sample);
}
