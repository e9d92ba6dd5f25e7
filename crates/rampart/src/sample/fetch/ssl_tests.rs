//! Unit tests of the `ssl_fc*` / `ssl_c_*` fetches, on a connection whose TLS
//! information is set by hand (a client certificate generated with rcgen).

use crate::sample::ctx::{ConnInfo, SampleCtx};
use crate::sample::testutil::*;
use crate::sample::Sample;
use crate::tls::TlsInfo;

const CFG: &str = "defaults\n  mode http\nfrontend fe\n  bind 127.0.0.1:18443\n  default_backend be\nbackend be\n";

fn client_cert() -> Vec<u8> {
    let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    p.distinguished_name.push(rcgen::DnType::CountryName, "FR");
    p.distinguished_name.push(rcgen::DnType::OrganizationName, "Rampart Test");
    p.distinguished_name.push(rcgen::DnType::CommonName, "client one");
    p.serial_number = Some(rcgen::SerialNumber::from_slice(&[0x01, 0x02, 0x03]));
    p.not_after = rcgen::date_time_ymd(2031, 4, 5);
    p.self_signed(&kp).unwrap().der().to_vec()
}

fn info(cert: Option<Vec<u8>>) -> TlsInfo {
    TlsInfo {
        sni: Some("www.a.test".into()),
        version: "TLSv1.3",
        cipher: "TLS_AES_128_GCM_SHA256",
        bits: 128,
        alpn: Some(b"http/1.1".to_vec().into()),
        resumed: false,
        peer_certs: cert.into_iter().map(Into::into).collect(),
        local_cert: None,
        verify: Default::default(),
    }
}

fn fetch(tls: Option<TlsInfo>, text: &str) -> Option<Sample<'static>> {
    let cfg = config(CFG);
    let rt = runtime(&cfg);
    let mut c = ConnInfo::new(None, -1);
    if let Some(t) = tls {
        c.set_tls(t);
    }
    let ctx = SampleCtx::new(&rt, &c, 0);
    compile_in(&cfg, 0, text).unwrap().eval(&ctx).map(Sample::into_owned)
}

#[test]
fn plain_connection() {
    assert_eq!(fetch(None, "ssl_fc"), Some(Sample::Bool(false)));
    assert_eq!(fetch(None, "ssl_fc_sni"), None);
    assert_eq!(fetch(None, "ssl_fc_has_sni"), Some(Sample::Bool(false)));
    assert_eq!(fetch(None, "ssl_c_used"), None);
    assert_eq!(fetch(None, "ssl_fc_protocol"), None);
    assert_eq!(fetch(None, "ssl_fc_cipher"), None);
    // HAProxy 2.6 answers false here (`ssl_sock_get_ssl_object()` is NULL), which
    // `option httpslog` shows as `0` on a plain connection
    assert_eq!(fetch(None, "ssl_fc_is_resumed"), Some(Sample::Bool(false)));
}

#[test]
fn negotiated_values() {
    let t = || Some(info(None));
    assert_eq!(fetch(t(), "ssl_fc"), Some(Sample::Bool(true)));
    assert_eq!(fetch(t(), "ssl_fc_sni"), Some(s("www.a.test")));
    assert_eq!(fetch(t(), "ssl_fc_protocol"), Some(s("TLSv1.3")));
    assert_eq!(fetch(t(), "ssl_fc_cipher"), Some(s("TLS_AES_128_GCM_SHA256")));
    assert_eq!(fetch(t(), "ssl_fc_use_keysize"), Some(Sample::Sint(128)));
    assert_eq!(fetch(t(), "ssl_fc_alpn"), Some(s("http/1.1")));
    assert_eq!(fetch(t(), "ssl_fc_is_resumed"), Some(Sample::Bool(false)));
    assert_eq!(fetch(t(), "ssl_fc_has_crt"), Some(Sample::Bool(false)));
    assert_eq!(fetch(t(), "ssl_c_used"), Some(Sample::Bool(false)));
    for kw in ["ssl_c_verify", "ssl_c_err", "ssl_c_ca_err", "ssl_c_ca_err_depth", "ssl_fc_err"] {
        assert_eq!(fetch(t(), kw), Some(Sample::Sint(0)), "{kw}");
        assert_eq!(fetch(None, kw), None, "{kw} on a plain connection");
    }
    assert_eq!(fetch(t(), "ssl_c_s_dn"), None);
}

#[test]
fn verification_errors_come_from_the_outcome() {
    let verify = crate::tls::chain::VerifyOutcome { result: 23, crt_err: 10, ca_err: 3, ca_err_depth: 1 };
    let t = || Some(TlsInfo { verify, ..info(None) });
    assert_eq!(fetch(t(), "ssl_c_verify"), Some(Sample::Sint(23)));
    assert_eq!(fetch(t(), "ssl_c_err"), Some(Sample::Sint(10)));
    assert_eq!(fetch(t(), "ssl_c_ca_err"), Some(Sample::Sint(3)));
    assert_eq!(fetch(t(), "ssl_c_ca_err_depth"), Some(Sample::Sint(1)));
    assert_eq!(fetch(t(), "ssl_fc_err"), Some(Sample::Sint(0)));
}

#[test]
fn client_certificate_fields() {
    let der = client_cert();
    let t = || Some(info(Some(der.clone())));
    assert_eq!(fetch(t(), "ssl_c_used"), Some(Sample::Bool(true)));
    // in the certificate's order (rcgen writes the CN first)
    assert_eq!(fetch(t(), "ssl_c_s_dn"), Some(s("/CN=client one/C=FR/O=Rampart Test")));
    assert_eq!(fetch(t(), "ssl_c_i_dn"), Some(s("/CN=client one/C=FR/O=Rampart Test")));
    assert_eq!(fetch(t(), "ssl_c_s_dn(CN)"), Some(s("client one")));
    assert_eq!(fetch(t(), "ssl_c_s_dn(O,1)"), Some(s("Rampart Test")));
    assert_eq!(fetch(t(), "ssl_c_s_dn(OU)"), None);
    assert_eq!(fetch(t(), "ssl_c_serial,hex"), Some(s("010203")));
    assert_eq!(fetch(t(), "ssl_c_notafter"), Some(s("310405000000Z")));
    assert_eq!(fetch(t(), "ssl_c_der"), Some(Sample::Bin(der.clone().into())));
    use sha1::Digest;
    let sha = hex_upper(&sha1::Sha1::digest(&der));
    assert_eq!(fetch(t(), "ssl_c_sha1,hex"), Some(s(&sha)));
}

fn hex_upper(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

/// A frontend certificate (RSA-less: ECDSA P-256) as the listener would serve it.
fn served(der: &[u8]) -> crate::tls::LocalCert {
    let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let key = rustls_pki_types::PrivateKeyDer::Pkcs8(kp.serialize_der().into());
    let signer = rustls::crypto::aws_lc_rs::sign::any_supported_type(&key).unwrap();
    let ck = rustls::sign::CertifiedKey::new(vec![der.to_vec().into()], signer);
    crate::tls::LocalCert(std::sync::Arc::new(ck))
}

#[test]
fn frontend_certificate_fields() {
    let der = client_cert();
    let t = || Some(TlsInfo { local_cert: Some(served(&der)), ..info(None) });
    assert_eq!(fetch(t(), "ssl_f_der"), Some(Sample::Bin(der.clone().into())));
    use sha1::Digest;
    assert_eq!(fetch(t(), "ssl_f_sha1,hex"), Some(s(&hex_upper(&sha1::Sha1::digest(&der)))));
    assert_eq!(fetch(t(), "ssl_f_serial,hex"), Some(s("010203")));
    assert_eq!(fetch(t(), "ssl_f_notafter"), Some(s("310405000000Z")));
    assert_eq!(fetch(t(), "ssl_f_s_dn"), Some(s("/CN=client one/C=FR/O=Rampart Test")));
    assert_eq!(fetch(t(), "ssl_f_i_dn(CN)"), Some(s("client one")));
    assert_eq!(fetch(t(), "ssl_f_version"), Some(Sample::Sint(3)));
    assert_eq!(fetch(t(), "ssl_f_sig_alg"), Some(s("ecdsa-with-SHA256")));
    assert_eq!(fetch(t(), "ssl_f_key_alg"), Some(s("id-ecPublicKey")));
    // not served by this listener (or a plain connection): no value
    assert_eq!(fetch(Some(info(None)), "ssl_f_der"), None);
    assert_eq!(fetch(None, "ssl_f_sha1"), None);
}

#[test]
fn client_certificate_algorithms_and_chain() {
    let (leaf, ca) = (client_cert(), client_cert());
    let t = || Some(TlsInfo { peer_certs: vec![leaf.clone().into(), ca.clone().into()], ..info(None) });
    assert_eq!(fetch(t(), "ssl_c_version"), Some(Sample::Sint(3)));
    assert_eq!(fetch(t(), "ssl_c_sig_alg"), Some(s("ecdsa-with-SHA256")));
    assert_eq!(fetch(t(), "ssl_c_key_alg"), Some(s("id-ecPublicKey")));
    assert_eq!(fetch(t(), "ssl_c_chain_der"), Some(Sample::Bin(ca.clone().into())));
    assert_eq!(fetch(Some(info(Some(leaf.clone()))), "ssl_c_chain_der"), None, "no chain beyond the leaf");
    assert_eq!(fetch(Some(info(None)), "ssl_c_sig_alg"), None);
}

#[test]
fn certificate_times_as_haproxy_gives_them() {
    use x509_parser::prelude::FromDer;
    let time = |tag: u8, s: &str| {
        let der = [&[tag, s.len() as u8][..], s.as_bytes()].concat();
        let (_, t) = x509_parser::time::ASN1Time::from_der(&der).expect("a time");
        super::super::ssl::asn1_time(&t)
    };
    assert_eq!(time(0x17, "200428185942Z").as_deref(), Some("200428185942Z"), "UTCTime");
    // GeneralizedTime of the 2000s: without the century (HAProxy's reg-test client1.pem)
    assert_eq!(time(0x18, "20500421185942Z").as_deref(), Some("500421185942Z"));
    assert_eq!(time(0x18, "21500421185942Z"), None, "another century: no sample");
}

#[test]
fn dn_entries_by_occurrence_first_by_default() {
    let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    p.distinguished_name = rcgen::DistinguishedName::new();
    p.distinguished_name.push(rcgen::DnType::CommonName, "first");
    p.distinguished_name.push(rcgen::DnType::OrganizationName, "org");
    p.distinguished_name.push(rcgen::DnType::CustomDnType(vec![2, 5, 4, 3]), "second");
    let c = p.self_signed(&kp).unwrap();
    let (_, cert) = x509_parser::parse_x509_certificate(c.der()).unwrap();
    let name = cert.subject();
    let entry = |e: &str, occ: Option<i64>| {
        let mut args = vec![crate::sample::kw::Arg::Str(e.as_bytes().to_vec().into())];
        args.extend(occ.map(crate::sample::kw::Arg::Sint));
        super::dn(name, &args)
    };
    assert_eq!(super::dn(name, &[]).as_deref(), Some("/CN=first/O=org/CN=second"));
    assert_eq!(entry("CN", None).as_deref(), Some("first"));
    assert_eq!(entry("cn", None).as_deref(), Some("first"), "the entry name in any case");
    assert_eq!(entry("CN", Some(2)).as_deref(), Some("second"));
    assert_eq!(entry("CN", Some(-1)).as_deref(), Some("second"));
    assert_eq!(entry("CN", Some(-2)).as_deref(), Some("first"));
    assert_eq!(entry("CN", Some(3)), None);
}

#[test]
fn has_sni_says_whether_the_client_sent_a_name() {
    assert_eq!(fetch(Some(info(None)), "ssl_fc_has_sni"), Some(Sample::Bool(true)));
    let nameless = TlsInfo { sni: None, ..info(None) };
    assert_eq!(fetch(Some(nameless), "ssl_fc_has_sni"), Some(Sample::Bool(false)));
}
