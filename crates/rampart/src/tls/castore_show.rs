//! What `show ssl ca-file <file>` and `show ssl crl-file <file>` print of a file's
//! certificates and CRLs, in OpenSSL's wording as HAProxy 2.6 prints it.
//! HAProxy counterpart: ssl_ckch.c (`show_cafile_detail()`, `show_crl_detail()`).

use x509_parser::certificate::X509Certificate;
use x509_parser::revocation_list::CertificateRevocationList;

use super::castore::Contents;
use super::certs::{algorithm, cert_sans, dn, hex_upper, openssl_time};

/// The details of `c` shown as `name` (`*<file>` for a transaction) with `status`;
/// `index` (from 1) shows one certificate or CRL only.
pub fn details(name: &str, status: &str, c: &Contents, index: Option<usize>) -> String {
    let header = format!("Filename: {name}\nStatus: {status}\n");
    let wanted = |i: usize| index.is_none_or(|n| n == i + 1);
    match c {
        // HAProxy prints nothing for a CA file with no certificate to show
        Contents::Ca(cas) => {
            let shown: Vec<String> = cas
                .iter()
                .enumerate()
                .filter(|(i, _)| wanted(*i))
                .filter_map(|(i, der)| {
                    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
                    Some(format!(" \nCertificate #{}:\n{}", i + 1, ca_cert(&cert, der)))
                })
                .collect();
            if shown.is_empty() {
                return String::new();
            }
            header + &shown.concat()
        }
        Contents::Crl(crls) if crls.is_empty() => format!("Filename: {name}\nStatus: Empty\n"),
        Contents::Crl(crls) => {
            let mut out = header;
            for (i, der) in crls.iter().enumerate().filter(|(i, _)| wanted(*i)) {
                if let Ok((_, crl)) = x509_parser::parse_x509_crl(der) {
                    out.push_str(&format!(" \nCertificate Revocation List #{}:\n{}", i + 1, crl_text(&crl)));
                }
            }
            out
        }
    }
}

/// One CA certificate of `show ssl ca-file`.
fn ca_cert(c: &X509Certificate<'_>, der: &[u8]) -> String {
    use sha1::Digest;
    format!(
        "Serial: {}\nnotBefore: {}\nnotAfter: {}\nSubject Alternative Name: {}\nAlgorithm: {}\n\
         SHA1 FingerPrint: {}\nSubject: {}\nIssuer: {}\n",
        hex_upper(c.raw_serial()),
        openssl_time(&c.validity().not_before),
        openssl_time(&c.validity().not_after),
        cert_sans(c).join(", "),
        algorithm(c),
        hex_upper(&sha1::Sha1::digest(der)),
        dn(c.subject()),
        dn(c.issuer()),
    )
}

/// One CRL of `show ssl crl-file`, as OpenSSL's `X509_CRL_print` lays it out.
fn crl_text(crl: &CertificateRevocationList<'_>) -> String {
    let version = crl.version().map_or(1, |v| v.0 + 1);
    let mut out = format!(
        "Version {version}\nSignature Algorithm: {}\nIssuer: {}\nLast Update: {}\n",
        signature_name(&crl.signature_algorithm.algorithm.to_id_string()),
        dn(crl.issuer()),
        openssl_time(&crl.last_update()),
    );
    match crl.next_update() {
        Some(t) => out.push_str(&format!("Next Update: {}\n", openssl_time(&t))),
        None => out.push_str("Next Update: NONE\n"),
    }
    let revoked: Vec<_> = crl.iter_revoked_certificates().collect();
    if revoked.is_empty() {
        out.push_str("No Revoked Certificates.\n");
        return out;
    }
    out.push_str("Revoked Certificates:\n");
    for r in revoked {
        out.push_str(&format!(
            "    Serial Number: {}\n        Revocation Date: {}\n",
            hex_upper(r.raw_serial()),
            openssl_time(&r.revocation_date)
        ));
    }
    out
}

/// OpenSSL's long name of a signature algorithm OID (`sha256WithRSAEncryption`); the
/// dotted OID when it is not one of the usual ones.
fn signature_name(oid: &str) -> String {
    const NAMES: &[(&str, &str)] = &[
        ("1.2.840.113549.1.1.4", "md5WithRSAEncryption"),
        ("1.2.840.113549.1.1.5", "sha1WithRSAEncryption"),
        ("1.2.840.113549.1.1.10", "rsassaPss"),
        ("1.2.840.113549.1.1.11", "sha256WithRSAEncryption"),
        ("1.2.840.113549.1.1.12", "sha384WithRSAEncryption"),
        ("1.2.840.113549.1.1.13", "sha512WithRSAEncryption"),
        ("1.2.840.113549.1.1.14", "sha224WithRSAEncryption"),
        ("1.2.840.10045.4.1", "ecdsa-with-SHA1"),
        ("1.2.840.10045.4.3.2", "ecdsa-with-SHA256"),
        ("1.2.840.10045.4.3.3", "ecdsa-with-SHA384"),
        ("1.2.840.10045.4.3.4", "ecdsa-with-SHA512"),
        ("1.3.101.112", "ED25519"),
        ("1.3.101.113", "ED448"),
    ];
    NAMES.iter().find(|(o, _)| *o == oid).map_or_else(|| oid.to_owned(), |(_, n)| (*n).to_owned())
}
