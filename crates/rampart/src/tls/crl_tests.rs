use super::*;
use crate::tls::testpki::{self, Leaf};

/// 2030-01-01, Unix seconds.
const NOW: i64 = 1_893_456_000;

fn parsed<'a>(der: &'a CertificateDer<'_>) -> X509Certificate<'a> {
    X509Certificate::from_der(der.as_ref()).expect("parses").1
}

#[test]
fn v2_crl_from_rcgen_revokes_its_serials() {
    let ca = testpki::ca("CA");
    let set = CrlSet::load(vec![testpki::v2_crl(&ca, &[7, 300])], &[ca.der()]).expect("loads");
    assert!(set.crls[0].verified);
    assert!(set.crls[0].revokes(&[7]) && set.crls[0].revokes(&[0, 7]) && set.crls[0].revokes(&[1, 44]));
    assert!(!set.crls[0].revokes(&[8]));
    let revoked = testpki::leaf(&ca, "r", Leaf { serial: 7, ..Leaf::default() });
    let good = testpki::leaf(&ca, "g", Leaf::default());
    let ca_cert = ca.der();
    assert_eq!(set.check(&parsed(&revoked), Some(&parsed(&ca_cert)), NOW), [code::CERT_REVOKED]);
    assert!(set.check(&parsed(&good), Some(&parsed(&ca_cert)), NOW).is_empty());
}

#[test]
fn v1_crl_without_version_is_parsed_and_verified() {
    let ca = testpki::ca("CA");
    let der = testpki::v1_crl(&ca, &[7], "200101000000Z", "491231000000Z");
    let parsed_crl = CertificateRevocationList::from_der(der.as_ref()).expect("parses").1;
    assert_eq!(parsed_crl.version(), None, "a v1 CRL has no version field");
    let set = CrlSet::load(vec![der], &[ca.der()]).expect("loads");
    assert!(set.crls[0].verified && set.crls[0].revokes(&[7]));
    assert_eq!(set.crls[0].this_update, 1_577_836_800);
    // no revoked entry at all
    let empty = testpki::v1_crl(&ca, &[], "200101000000Z", "491231000000Z");
    let set = CrlSet::load(vec![empty], &[ca.der()]).expect("loads");
    assert!(!set.crls[0].revokes(&[7]));
}

#[test]
fn a_crl_whose_signature_does_not_verify_is_refused() {
    let ca = testpki::ca("CA");
    let impostor = testpki::ca("CA");
    let der = testpki::v1_crl(&impostor, &[7], "200101000000Z", "491231000000Z");
    let e = CrlSet::load(vec![der], &[ca.der()]).unwrap_err();
    assert_eq!(e, "the CRL signature does not verify with its issuer's key");
    let e = CrlSet::load(vec![CertificateRevocationListDer::from(vec![0x30, 0x03, 1, 2, 3])], &[]).unwrap_err();
    assert!(!e.is_empty());
}

#[test]
fn a_crl_of_a_ca_outside_the_store_is_checked_against_the_chain() {
    let root = testpki::ca("Root");
    let inter = testpki::intermediate(&root, "Inter", true);
    let set = CrlSet::load(vec![testpki::v2_crl(&inter, &[7])], &[root.der()]).expect("loads");
    assert!(!set.crls[0].verified);
    let leaf = testpki::leaf(&inter, "l", Leaf { serial: 7, ..Leaf::default() });
    let (inter_der, root_der) = (inter.der(), root.der());
    assert_eq!(set.check(&parsed(&leaf), Some(&parsed(&inter_der)), NOW), [code::CERT_REVOKED]);
    assert_eq!(
        set.check(&parsed(&leaf), Some(&parsed(&root_der)), NOW),
        [code::CRL_SIGNATURE_FAILURE, code::CERT_REVOKED]
    );
    assert_eq!(set.check(&parsed(&leaf), None, NOW), [code::UNABLE_TO_GET_CRL_ISSUER, code::CERT_REVOKED]);
    // the root has no CRL of its own issuer
    assert_eq!(set.check(&parsed(&root_der), Some(&parsed(&root_der)), NOW), [code::UNABLE_TO_GET_CRL]);
}

#[test]
fn crl_validity_dates_are_checked() {
    let ca = testpki::ca("CA");
    let ca_der = ca.der();
    let leaf = testpki::leaf(&ca, "l", Leaf { serial: 7, ..Leaf::default() });
    let old = testpki::v1_crl(&ca, &[7], "100101000000Z", "110101000000Z");
    let set = CrlSet::load(vec![old], &[ca.der()]).expect("loads");
    assert_eq!(set.check(&parsed(&leaf), Some(&parsed(&ca_der)), NOW), [code::CRL_HAS_EXPIRED, code::CERT_REVOKED]);
    let future = testpki::v1_crl(&ca, &[], "400101000000Z", "450101000000Z");
    let set = CrlSet::load(vec![future], &[ca.der()]).expect("loads");
    assert_eq!(set.check(&parsed(&leaf), Some(&parsed(&ca_der)), NOW), [code::CRL_NOT_YET_VALID]);
}

/// HAProxy's reg-test CRLs: v1, one SHA-1 signed (skipped without the tests).
#[test]
fn haproxy_reg_test_crls() {
    let dir = std::path::Path::new("/tmp/haproxy-2.6/reg-tests/ssl");
    if !dir.is_dir() {
        eprintln!("SKIPPED: {} is absent", dir.display());
        return;
    }
    let cas = crate::tls::pem::load_ca_file(&dir.join("ca-auth.crt")).expect("CA");
    let crls = crate::tls::pem::load_crl_file(&dir.join("crl-auth.pem")).expect("CRL");
    let set = CrlSet::load(crls, &cas).expect("the v1 SHA-1 CRL loads");
    assert!(set.crls[0].verified, "signature checked with ca-auth.crt");
    assert!(set.crls[0].revokes(&[3]) && !set.crls[0].revokes(&[2]));
    // the same CRL against an unrelated CA: not its issuer, kept unverified
    let other = crate::tls::pem::load_ca_file(&dir.join("set_cafile_rootCA.crt")).unwrap_or_default();
    assert!(CrlSet::load(crate::tls::pem::load_crl_file(&dir.join("crl-auth.pem")).expect("CRL"), &other).is_ok());
}
