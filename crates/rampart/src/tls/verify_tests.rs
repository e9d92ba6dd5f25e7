use super::*;
use crate::tls::testpki::{self, Leaf};
use rustls::server::WebPkiClientVerifier;
use rustls::{CertificateError, RootCertStore};

fn verifier(ca: &testpki::Ca, crls: Option<CrlSet>, crt: Option<IgnoreErr>, ca_ign: Option<IgnoreErr>) -> ClientVerify {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut roots = RootCertStore::empty();
    roots.add(ca.der()).expect("root");
    let inner = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone()).build().expect("builds");
    ClientVerify {
        inner,
        cas: CaStore::new(&[ca.der()]),
        crls,
        crt_ignore: crt,
        ca_ignore: ca_ign,
        algs: provider.signature_verification_algorithms,
    }
}

fn crl(ca: &testpki::Ca, serials: &[u64]) -> Option<CrlSet> {
    Some(CrlSet::load(vec![testpki::v2_crl(ca, serials)], &[ca.der()]).expect("CRL"))
}

#[test]
fn a_revoked_certificate_fails_unless_its_error_is_ignored() {
    let ca = testpki::ca("CA");
    let revoked = testpki::leaf(&ca, "r", Leaf { serial: 7, ..Leaf::default() });
    let good = testpki::leaf(&ca, "g", Leaf::default());
    let v = verifier(&ca, crl(&ca, &[7]), None, None);
    let now = UnixTime::now();
    assert_eq!(v.verify_client_cert(&revoked, &[], now).unwrap_err(), CertificateError::Revoked.into());
    assert!(v.verify_client_cert(&good, &[], now).is_ok());
    assert_eq!(
        v.outcome(std::slice::from_ref(&revoked)),
        VerifyOutcome::default(),
        "nothing ignored: nothing to report"
    );
    let v = verifier(&ca, crl(&ca, &[7]), Some(IgnoreErr::All), None);
    assert!(v.verify_client_cert(&revoked, &[], now).is_ok());
    assert_eq!(
        v.outcome(std::slice::from_ref(&revoked)),
        VerifyOutcome { result: 23, crt_err: 23, ca_err: 0, ca_err_depth: 0 }
    );
    assert_eq!(v.outcome(&[good]), VerifyOutcome::default());
    assert_eq!(v.outcome(&[]), VerifyOutcome::default());
    // a list: only the errors it names
    let v = verifier(&ca, crl(&ca, &[7]), Some(IgnoreErr::Ids(vec![10, 23])), None);
    assert!(v.verify_client_cert(&revoked, &[], now).is_ok());
    let v = verifier(&ca, crl(&ca, &[7]), Some(IgnoreErr::Ids(vec![10])), None);
    assert!(v.verify_client_cert(&revoked, &[], now).is_err());
}

#[test]
fn webpki_errors_keep_openssl_codes() {
    let ca = testpki::ca("CA");
    let expired = testpki::leaf(&ca, "e", Leaf { years: (2010, 2011), ..Leaf::default() });
    let v = verifier(&ca, None, Some(IgnoreErr::All), None);
    assert_eq!(v.errors(std::slice::from_ref(&expired), UnixTime::now()), [(0, code::CERT_HAS_EXPIRED)]);
    let v = verifier(&ca, None, None, None);
    assert_eq!(v.verify_client_cert(&expired, &[], UnixTime::now()).unwrap_err(), CertificateError::Expired.into());
}

#[test]
fn ca_errors_need_ca_ignore_err() {
    // the CRL covers the client but not its CA (no CRL issued by the root's issuer)
    let ca = testpki::ca("CA");
    let other = testpki::ca("Other");
    let crls = Some(
        CrlSet::load(vec![testpki::v2_crl(&ca, &[]), testpki::v2_crl(&other, &[])], &[ca.der(), other.der()])
            .expect("CRLs"),
    );
    let leaf = testpki::leaf(&other, "c", Leaf::default());
    let v = verifier(&ca, crls.clone(), Some(IgnoreErr::All), None);
    let errs = v.errors(std::slice::from_ref(&leaf), UnixTime::now());
    assert_eq!(errs[0], (0, code::UNABLE_TO_GET_ISSUER_CERT_LOCALLY));
    assert!(v.verify_client_cert(&leaf, &[], UnixTime::now()).is_ok(), "depth 0 only: crt-ignore-err");
    // a root with no CRL: depth 1 error
    let inter = testpki::intermediate(&ca, "Inter", true);
    let crls = Some(CrlSet::load(vec![testpki::v2_crl(&inter, &[])], &[ca.der()]).expect("CRL"));
    let leaf = testpki::leaf(&inter, "c", Leaf::default());
    let v = verifier(&ca, crls.clone(), Some(IgnoreErr::All), None);
    assert_eq!(v.errors(&[leaf.clone(), inter.der()], UnixTime::now()), [(1, code::UNABLE_TO_GET_CRL), (2, 3)]);
    assert!(v.verify_client_cert(&leaf, &[inter.der()], UnixTime::now()).is_err());
    let v = verifier(&ca, crls, None, Some(IgnoreErr::Ids(vec![3])));
    assert!(v.verify_client_cert(&leaf, &[inter.der()], UnixTime::now()).is_ok());
    assert_eq!(v.outcome(&[leaf, inter.der()]), VerifyOutcome { result: 3, crt_err: 0, ca_err: 3, ca_err_depth: 1 });
}

#[test]
fn x509_v1_client_certificates_pass_through_tls_chain() {
    let ca = testpki::ca("CA");
    let (v1, _) = testpki::v1_leaf(&ca, "old", 7);
    let v = verifier(&ca, None, None, None);
    assert!(v.verify_client_cert(&v1, &[], UnixTime::now()).is_ok(), "webpki alone refuses v1");
    let v = verifier(&ca, crl(&ca, &[7]), None, None);
    assert_eq!(v.verify_client_cert(&v1, &[], UnixTime::now()).unwrap_err(), CertificateError::Revoked.into());
}

#[test]
fn server_side_revocation_errors() {
    let ca = testpki::ca("CA");
    let revoked = testpki::leaf(&ca, "r", Leaf { serial: 7, ..Leaf::default() });
    let crls = crl(&ca, &[7]).expect("CRL");
    assert_eq!(
        revocation_errors(&[revoked], &CaStore::new(&[ca.der()]), &crls, Purpose::Server, UnixTime::now()),
        [(0, 23)]
    );
    let expired = testpki::leaf(&ca, "e", Leaf { years: (2010, 2011), ..Leaf::default() });
    assert!(
        revocation_errors(&[expired], &CaStore::new(&[ca.der()]), &crls, Purpose::Server, UnixTime::now()).is_empty(),
        "only revocation errors: webpki judged the rest"
    );
}

#[test]
fn a_refusal_on_a_ca_is_told_to_the_handshake_once() {
    let root = testpki::ca("Root");
    let inter = testpki::intermediate(&root, "Inter", true);
    // a CRL for the client (from Inter) but none for Inter itself (from Root)
    let crls = Some(CrlSet::load(vec![testpki::v2_crl(&inter, &[7])], &[root.der()]).expect("CRL"));
    let v = verifier(&root, crls, Some(IgnoreErr::All), None);
    let good = testpki::leaf(&inter, "c", Leaf::default());
    assert!(v.verify_client_cert(&good, &[inter.der()], UnixTime::now()).is_err());
    assert!(take_ca_refusal(), "refused for depth 1 (no CRL of Root for Inter)");
    assert!(!take_ca_refusal(), "read once");
    let v = verifier(&root, None, None, None);
    let expired = testpki::leaf(&inter, "c", Leaf { years: (2010, 2011), ..Leaf::default() });
    assert!(v.verify_client_cert(&expired, &[inter.der()], UnixTime::now()).is_err());
    assert!(!take_ca_refusal(), "refused for the client's own certificate");
}
