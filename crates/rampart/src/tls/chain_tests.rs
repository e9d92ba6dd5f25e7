use super::*;
use crate::tls::testpki::{self, Leaf};

/// 2030-01-01, Unix seconds.
const NOW: i64 = 1_893_456_000;

fn errs(peer: &[CertificateDer<'_>], cas: &[CertificateDer<'static>], crls: Option<&CrlSet>) -> Vec<ChainError> {
    analyse(peer, &CaStore::new(cas), crls, Purpose::Client, NOW).expect("the leaf parses")
}

#[test]
fn a_valid_chain_has_no_error() {
    let ca = testpki::ca("CA");
    let leaf = testpki::leaf(&ca, "c", Leaf::default());
    assert!(errs(std::slice::from_ref(&leaf), &[ca.der()], None).is_empty());
    // the CA sent along by the client changes nothing
    assert!(errs(&[leaf, ca.der()], &[ca.der()], None).is_empty());
}

#[test]
fn validity_dates_give_codes_9_and_10() {
    let ca = testpki::ca("CA");
    let expired = testpki::leaf(&ca, "c", Leaf { years: (2010, 2011), ..Leaf::default() });
    assert_eq!(errs(&[expired], &[ca.der()], None), [(0, code::CERT_HAS_EXPIRED)]);
    let early = testpki::leaf(&ca, "c", Leaf { years: (2040, 2050), ..Leaf::default() });
    assert_eq!(errs(&[early], &[ca.der()], None), [(0, code::CERT_NOT_YET_VALID)]);
}

#[test]
fn unknown_issuer_and_self_signed() {
    let ca = testpki::ca("CA");
    let other = testpki::ca("Other");
    let leaf = testpki::leaf(&other, "c", Leaf::default());
    assert_eq!(
        errs(&[leaf], &[ca.der()], None),
        [(0, code::UNABLE_TO_GET_ISSUER_CERT_LOCALLY), (0, code::UNABLE_TO_VERIFY_LEAF_SIGNATURE)]
    );
    assert_eq!(errs(&[other.der()], &[ca.der()], None)[0], (0, code::DEPTH_ZERO_SELF_SIGNED_CERT));
    // a self-signed certificate that is in the CA file is trusted
    assert!(errs(&[ca.der()], &[ca.der()], None).is_empty());
}

#[test]
fn a_forged_signature_gives_code_7() {
    let ca = testpki::ca("CA");
    let impostor = testpki::ca("CA");
    let leaf = testpki::leaf(&impostor, "c", Leaf::default());
    assert_eq!(errs(&[leaf], &[ca.der()], None), [(0, code::CERT_SIGNATURE_FAILURE)]);
}

#[test]
fn intermediates_sent_by_the_peer_and_their_ca_flag() {
    let root = testpki::ca("Root");
    let inter = testpki::intermediate(&root, "Inter", true);
    let leaf = testpki::leaf(&inter, "c", Leaf::default());
    assert!(errs(&[leaf.clone(), inter.der()], &[root.der()], None).is_empty());
    let not_ca = testpki::intermediate(&root, "NotCA", false);
    let leaf = testpki::leaf(&not_ca, "c", Leaf::default());
    assert_eq!(errs(&[leaf, not_ca.der()], &[root.der()], None), [(1, code::INVALID_CA)]);
}

#[test]
fn a_server_only_certificate_is_no_client_certificate() {
    let ca = testpki::ca("CA");
    let leaf = testpki::leaf(&ca, "c", Leaf { server_only: true, ..Leaf::default() });
    assert_eq!(errs(std::slice::from_ref(&leaf), &[ca.der()], None), [(0, code::INVALID_PURPOSE)]);
    assert_eq!(analyse(&[leaf], &CaStore::new(&[ca.der()]), None, Purpose::Server, NOW), Some(vec![]));
}

#[test]
fn revocation_comes_before_validity_as_in_openssl() {
    let ca = testpki::ca("CA");
    let crls = CrlSet::load(vec![testpki::v2_crl(&ca, &[7])], &[ca.der()]).expect("CRL");
    let revoked = testpki::leaf(&ca, "c", Leaf { serial: 7, ..Leaf::default() });
    assert_eq!(errs(&[revoked], &[ca.der()], Some(&crls)), [(0, code::CERT_REVOKED)]);
    let both = testpki::leaf(&ca, "c", Leaf { serial: 7, years: (2010, 2011), ..Leaf::default() });
    let e = errs(&[both], &[ca.der()], Some(&crls));
    assert_eq!(e, [(0, code::CERT_REVOKED), (0, code::CERT_HAS_EXPIRED)]);
    assert_eq!(
        VerifyOutcome::of(&e),
        VerifyOutcome { result: code::CERT_HAS_EXPIRED, crt_err: code::CERT_REVOKED, ca_err: 0, ca_err_depth: 0 }
    );
}

#[test]
fn every_certificate_of_the_chain_needs_a_crl() {
    // HAProxy sets X509_V_FLAG_CRL_CHECK_ALL: the root needs a CRL of its issuer too
    let ca = testpki::ca("CA");
    let other = testpki::ca("Other");
    let crls = CrlSet::load(vec![testpki::v2_crl(&other, &[7])], &[other.der()]).expect("CRL");
    let leaf = testpki::leaf(&ca, "c", Leaf::default());
    let e = errs(&[leaf], &[ca.der()], Some(&crls));
    assert_eq!(e, [(0, code::UNABLE_TO_GET_CRL), (1, code::UNABLE_TO_GET_CRL)]);
    assert_eq!(
        VerifyOutcome::of(&e),
        VerifyOutcome { result: 3, crt_err: 3, ca_err: 3, ca_err_depth: 1 },
        "as haproxy 2.6 reports it for the same setup"
    );
}

#[test]
fn x509_v1_certificates_are_verified() {
    let ca = testpki::ca("CA");
    let (v1, _) = testpki::v1_leaf(&ca, "old", 7);
    assert!(has_pre_v3(std::slice::from_ref(&v1)));
    assert!(!has_pre_v3(&[ca.der()]));
    assert!(errs(std::slice::from_ref(&v1), &[ca.der()], None).is_empty());
    let crls =
        CrlSet::load(vec![testpki::v1_crl(&ca, &[7], "200101000000Z", "491231000000Z")], &[ca.der()]).expect("CRL");
    assert_eq!(errs(&[v1], &[ca.der()], Some(&crls)), [(0, code::CERT_REVOKED)]);
}

#[test]
fn an_unparsable_leaf_is_no_chain() {
    let ca = testpki::ca("CA");
    assert_eq!(
        analyse(&[CertificateDer::from(vec![1, 2, 3])], &CaStore::new(&[ca.der()]), None, Purpose::Client, NOW),
        None
    );
    assert_eq!(analyse(&[], &CaStore::new(&[ca.der()]), None, Purpose::Client, NOW), None);
}

#[test]
fn codes_map_to_rustls_alerts_and_back() {
    assert_eq!(rustls_error(code::CERT_REVOKED), CertificateError::Revoked.into());
    assert_eq!(rustls_error(code::CERT_HAS_EXPIRED), CertificateError::Expired.into());
    assert_eq!(rustls_error(code::UNABLE_TO_GET_ISSUER_CERT_LOCALLY), CertificateError::UnknownIssuer.into());
    assert_eq!(rustls_error(code::UNABLE_TO_GET_CRL), CertificateError::UnknownRevocationStatus.into());
    assert_eq!(code_of(&CertificateError::Expired.into()), code::CERT_HAS_EXPIRED);
    assert_eq!(code_of(&CertificateError::UnknownIssuer.into()), code::UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
    assert_eq!(code_of(&rustls::Error::NoCertificatesPresented), code::UNSPECIFIED);
}

#[test]
fn der_elements_with_long_lengths() {
    let long = testpki::der(0x04, &[7; 300]);
    assert_eq!(tlv(&long), Some((0x04, &[7u8; 300][..])));
    assert_eq!(tlv(&long[..100]), None, "truncated");
    let spki = testpki::der(0x30, &[testpki::der(0x30, &[6, 1, 42]), testpki::der(0x03, &[0, 1])].concat());
    assert_eq!(first_inner_contents(&spki), Some(&[6u8, 1, 42][..]));
}

#[test]
fn only_the_cas_a_chain_names_are_parsed() {
    let root = testpki::ca("Root");
    let inter = testpki::intermediate(&root, "Inter", true);
    let others: Vec<_> = (0..5).map(|i| testpki::ca(&format!("Other {i}")).der()).collect();
    let all: Vec<_> = others.iter().cloned().chain([inter.der(), root.der()]).collect();
    let store = CaStore::new(&all);
    let leaf = testpki::leaf(&inter, "c", Leaf::default());
    let (_, parsed) = X509Certificate::from_der(leaf.as_ref()).unwrap();
    let reached: Vec<&[u8]> = store.reachable(&[&parsed]).into_iter().map(|(d, _)| d).collect();
    // the intermediate (in the store too), then its root: not the 5 others
    assert_eq!(reached, [inter.der().as_ref(), root.der().as_ref()]);
    assert!(errs(&[leaf], &all, None).is_empty());
}
