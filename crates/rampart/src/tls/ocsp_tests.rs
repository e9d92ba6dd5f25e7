use super::*;

/// A DER element with `tag` around `parts`.
fn el(tag: u8, parts: &[&[u8]]) -> Vec<u8> {
    let body: Vec<u8> = parts.concat();
    let mut out = vec![tag];
    match body.len() {
        n if n < 0x80 => out.push(n as u8),
        n if n < 0x100 => out.extend([0x81, n as u8]),
        n => out.extend([0x82, (n >> 8) as u8, n as u8]),
    }
    out.extend(body);
    out
}

fn seq(parts: &[&[u8]]) -> Vec<u8> {
    el(0x30, parts)
}

const SHA1: &[u8] = &[0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a];
const SHA256_RSA: &[u8] = &[0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b];

/// The CertID of serial `serial` (SHA-1 hashes of 0x11.. and 0x22..).
fn cert_id(serial: &[u8]) -> Vec<u8> {
    seq(&[&seq(&[SHA1, &[0x05, 0x00]]), &el(0x04, &[&[0x11; 20]]), &el(0x04, &[&[0x22; 20]]), &el(0x02, &[serial])])
}

/// A successful basic response for `cert_id` with status `status` (an encoded
/// CertStatus), responder CN=ocsp.test.
fn response(id: &[u8], status: &[u8]) -> Vec<u8> {
    let cn = seq(&[&[0x06, 0x03, 0x55, 0x04, 0x03], &el(0x0c, &[b"ocsp.test"])]);
    let c = seq(&[&[0x06, 0x03, 0x55, 0x04, 0x06], &el(0x13, &[b"FR"])]);
    let name = seq(&[&el(0x31, &[&c]), &el(0x31, &[&cn])]);
    let single = seq(&[id, status, &el(0x18, &[b"20210610085504Z"]), &el(0xa0, &[&el(0x18, &[b"20350217085504Z"])])]);
    let tbs = seq(&[&el(0xa1, &[&name]), &el(0x18, &[b"20210610085545Z"]), &seq(&[&single])]);
    let basic = seq(&[&tbs, &seq(&[SHA256_RSA, &[0x05, 0x00]]), &el(0x03, &[&[0x00, 0xab, 0xcd]])]);
    let bytes = seq(&[&[0x06, 0x09, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01, 0x01], &el(0x04, &[&basic])]);
    seq(&[&[0x0a, 0x01, 0x00], &el(0xa0, &[&bytes])])
}

const GOOD: &[u8] = &[0x80, 0x00];

#[test]
fn a_good_response_reads_as_openssl_prints_it() {
    let id = cert_id(&[0x10, 0x0f]);
    let info = parse(&response(&id, GOOD)).unwrap();
    assert_eq!(info.cert_id, id);
    assert!(hex_lower(&info.cert_id).starts_with("303b300906052b0e03021a05000414"));
    assert_eq!(info.status, CertStatus::Good);
    assert_eq!(
        info.render(),
        "OCSP Response Data:\n    OCSP Response Status: successful (0x0)\n    Response Type: Basic OCSP Response\n    \
         Version: 1 (0x0)\n    Responder Id: C = FR, CN = ocsp.test\n    Produced At: Jun 10 08:55:45 2021 GMT\n    \
         Responses:\n    Certificate ID:\n      Hash Algorithm: sha1\n      Issuer Name Hash: \
         1111111111111111111111111111111111111111\n      Issuer Key Hash: 2222222222222222222222222222222222222222\n      \
         Serial Number: 100F\n    Cert Status: good\n    This Update: Jun 10 08:55:04 2021 GMT\n    \
         Next Update: Feb 17 08:55:04 2035 GMT\n    Signature Algorithm: sha256WithRSAEncryption\n"
    );
    assert_eq!(
        info.id_lines(),
        " Certificate ID:\n   Issuer Name Hash: 1111111111111111111111111111111111111111\n   \
         Issuer Key Hash: 2222222222222222222222222222222222222222\n   Serial Number: 100F\n"
    );
}

#[test]
fn revoked_and_unknown_statuses() {
    let id = cert_id(&[0x01]);
    let revoked = el(0xa1, &[&el(0x18, &[b"20210610085736Z"])]);
    let info = parse(&response(&id, &revoked)).unwrap();
    assert_eq!(info.status, CertStatus::Revoked("Jun 10 08:57:36 2021 GMT".into()));
    assert!(info.render().contains("    Cert Status: revoked\n    Revocation Time: Jun 10 08:57:36 2021 GMT\n"));
    let info = parse(&response(&id, &[0x82, 0x00])).unwrap();
    assert!(info.render().contains("    Cert Status: unknown\n"));
}

#[test]
fn what_is_no_usable_response() {
    assert_eq!(parse(b"").unwrap_err(), "Error parsing OCSP response");
    assert_eq!(parse(&[0x30, 0x05, 0x0a]).unwrap_err(), "Error parsing OCSP response");
    // tryLater (3), no response bytes
    assert_eq!(parse(&seq(&[&[0x0a, 0x01, 0x03]])).unwrap_err(), "OCSP response status not successful");
    let mut good = response(&cert_id(&[1]), GOOD);
    good.truncate(good.len() - 2);
    assert!(parse(&good).is_err());
}

#[test]
fn base64_payloads() {
    use base64::Engine as _;
    let der = response(&cert_id(&[1]), GOOD);
    let b64 = base64::engine::general_purpose::STANDARD.encode(&der);
    let wrapped = format!("{}\n{}\r\n", &b64[..40], &b64[40..]);
    assert_eq!(decode_base64(&wrapped).unwrap(), der);
    assert_eq!(decode_base64("!!").unwrap_err(), "received invalid base64 encoded response.");
    assert_eq!(decode_base64("AAAA").unwrap_err(), "Error parsing OCSP response");
}

#[test]
fn generalized_times() {
    assert_eq!(time(b"20350208085504Z"), "Feb  8 08:55:04 2035 GMT");
    assert_eq!(time(b"garbage"), "garbage");
    assert_eq!(time(b"20351308085504Z"), "20351308085504Z");
}

/// A bind serving `a.pem` (a.test) with `a.pem.ocsp` beside it holding `ocsp`.
fn bind_with_ocsp(
    tag: &str,
    ocsp: &[u8],
) -> Result<(super::super::certs::Certs, Arc<super::super::bind::BindTls>, String), Vec<String>> {
    use rampart_cfg::model::{BindSsl, GlobalSsl};
    let dir = std::env::temp_dir().join(format!("rampart-ocsp-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("a.pem").display().to_string();
    let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let cert = rcgen::CertificateParams::new(vec!["a.test".to_string()]).unwrap().self_signed(&kp).unwrap();
    std::fs::write(&a, format!("{}{}", cert.pem(), kp.serialize_pem())).unwrap();
    std::fs::write(format!("{a}.ocsp"), ocsp).unwrap();
    let ssl = BindSsl { enabled: true, crts: vec![a.clone().into()], ..Default::default() };
    let (tls, _) = super::super::bind::build(&ssl, &GlobalSsl::default())?;
    let tls = Arc::new(tls);
    Ok((super::super::certs::Certs::new(vec![tls.clone()], Vec::new()), tls, a))
}

fn stapled(tls: &super::super::bind::BindTls) -> Option<Vec<u8>> {
    tls.store.load().choose(Some("a.test"), &[rustls::SignatureScheme::ECDSA_NISTP256_SHA256])?.ocsp.clone()
}

#[test]
fn the_response_beside_a_certificate_is_stapled_and_managed_on_the_cli() {
    use base64::Engine as _;
    let id = cert_id(&[0x10, 0x0f]);
    let key = hex_lower(&id);
    let good = response(&id, GOOD);
    let revoked = response(&id, &el(0xa1, &[&el(0x18, &[b"20210610085736Z"])]));
    let (certs, tls, a) = bind_with_ocsp("cli", &good).unwrap();
    assert_eq!(stapled(&tls).as_deref(), Some(&good[..]));
    let list = certs.show_ocsp(None);
    assert!(list.starts_with(&format!("# Certificate IDs\nCertificate ID key : {key}\n Certificate ID:\n")), "{list}");
    assert!(certs.show_ocsp(Some(&key)).contains("Cert Status: good"));
    assert_eq!(certs.show_ocsp(Some("00")), "Certificate ID does not match any certificate.\n");
    assert!(certs.show(Some(&a)).contains(&format!("OCSP Response Key: {key}\n")));
    assert!(certs.show(Some(&format!("{a}.ocsp"))).contains("Cert Status: good"));

    // set ssl ocsp-response: served from the next handshake on
    let b64 = |d: &[u8]| base64::engine::general_purpose::STANDARD.encode(d);
    assert_eq!(certs.set_ocsp(Some(&b64(&revoked))), "OCSP Response updated!\n");
    assert_eq!(stapled(&tls).as_deref(), Some(&revoked[..]));
    assert!(certs.show_ocsp(Some(&key)).contains("Cert Status: revoked"));
    let other = response(&cert_id(&[0x42]), GOOD);
    assert_eq!(
        certs.set_ocsp(Some(&b64(&other))),
        "OCSP single response: Certificate ID does not match any certificate or issuer.\n"
    );
    assert_eq!(certs.set_ocsp(None), "'set ssl ocsp-response' expects response in base64 encoding.\n");
    assert_eq!(certs.set_ocsp(Some("AAAA")), "Unable to parse OCSP response.\n");

    // set ssl cert <file>.ocsp: in the transaction until it is committed
    let ocsp_path = format!("{a}.ocsp");
    assert_eq!(certs.set(Some(&ocsp_path), Some(&b64(&good))), format!("Transaction created for certificate {a}!\n"));
    assert!(certs.show(Some(&format!("*{a}.ocsp"))).contains("Cert Status: good"));
    assert!(certs.show_ocsp(Some(&key)).contains("Cert Status: revoked"));
    assert_eq!(certs.commit(Some(&a)), format!("Committing {a}.\nSuccess!\n"));
    assert!(certs.show_ocsp(Some(&key)).contains("Cert Status: good"));
    assert_eq!(stapled(&tls).as_deref(), Some(&good[..]));
    // a new certificate keeps the response unless the transaction replaces it
    let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let cert = rcgen::CertificateParams::new(vec!["a.test".to_string()]).unwrap().self_signed(&kp).unwrap();
    let pem = format!("{}{}", cert.pem(), kp.serialize_pem());
    assert_eq!(certs.set(Some(&a), Some(&pem)), format!("Transaction created for certificate {a}!\n"));
    assert_eq!(certs.commit(Some(&a)), format!("Committing {a}.\nSuccess!\n"));
    assert_eq!(stapled(&tls).as_deref(), Some(&good[..]));
    std::fs::remove_dir_all(std::path::Path::new(&a).parent().unwrap()).ok();
}

#[test]
fn an_unusable_response_file_is_an_alert() {
    let err = bind_with_ocsp("bad", b"not der").unwrap_err();
    assert_eq!(err.len(), 1);
    assert!(err[0].ends_with(".pem.ocsp' : Error parsing OCSP response."), "{}", err[0]);
}
