//! Unit tests of `tls::bind`.

use rampart_cfg::model::{BindSsl, GlobalSsl, SslOptions, TlsVersion, Verify};
use rustls::server::danger::ClientCertVerifier;
use rustls::SupportedCipherSuite;

use super::*;

const MOZ_INTERMEDIATE: &str = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:\
ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:\
ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305";

fn names(s: &[SupportedCipherSuite]) -> Vec<String> {
    s.iter().map(|s| format!("{:?}", s.suite())).collect()
}

#[test]
fn mozilla_intermediate_ciphers_map_and_warn_once() {
    let g = GlobalSsl {
        default_bind_ciphers: Some(MOZ_INTERMEDIATE.into()),
        default_bind_ciphersuites: Some("TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384".into()),
        ..Default::default()
    };
    let mut w = Vec::new();
    let s = suites(&BindSsl::default(), &g, &mut w);
    assert_eq!(
        names(&s),
        [
            "TLS13_AES_128_GCM_SHA256",
            "TLS13_AES_256_GCM_SHA384",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        ]
    );
    assert_eq!(w.len(), 1);
    assert!(w[0].starts_with("'ciphers': DHE-RSA-AES128-GCM-SHA256, DHE-RSA-AES256-GCM-SHA384, DHE-RSA-CHACHA20-POLY1305 not provided by rustls"), "{w:?}");
}

#[test]
fn bind_ciphers_override_the_default_and_keywords_fall_back() {
    let g = GlobalSsl { default_bind_ciphers: Some(MOZ_INTERMEDIATE.into()), ..Default::default() };
    let ssl = BindSsl { ciphers: Some("HIGH:!aNULL:!MD5".into()), ..Default::default() };
    let mut w = Vec::new();
    let s = suites(&ssl, &g, &mut w);
    assert_eq!(s.len(), aws_lc_rs::DEFAULT_CIPHER_SUITES.len());
    assert_eq!(w, ["'ciphers' names no cipher rustls provides ('HIGH:!aNULL:!MD5'); using rustls' defaults instead."]);
}

#[test]
fn curves_map_openssl_names() {
    let ssl = BindSsl { curves: Some("X25519:prime256v1:secp521r1".into()), ..Default::default() };
    let mut w = Vec::new();
    let mut a = Vec::new();
    let gr = groups(&ssl, &GlobalSsl::default(), &mut w, &mut a);
    let n: Vec<_> = gr.iter().map(|g| format!("{:?}", g.name())).collect();
    assert_eq!(n, ["X25519", "secp256r1"]);
    assert_eq!(w, ["'curves': secp521r1 not provided by rustls, ignored."]);
    assert!(a.is_empty());
}

#[test]
fn ecdhe_applies_without_a_curves_list() {
    let names = |ssl: &BindSsl, g: &GlobalSsl| {
        let (mut w, mut a) = (Vec::new(), Vec::new());
        let gr = groups(ssl, g, &mut w, &mut a);
        (gr.iter().map(|g| format!("{:?}", g.name())).collect::<Vec<_>>(), a)
    };
    let ssl = BindSsl { ecdhe: Some("secp384r1".into()), ..Default::default() };
    assert_eq!(names(&ssl, &GlobalSsl::default()), (vec!["secp384r1".to_string()], vec![]));
    // a curves list (the bind's or the global default) wins over ecdhe, as in HAProxy
    let g = GlobalSsl { default_bind_curves: Some("X25519".into()), ..Default::default() };
    assert_eq!(names(&ssl, &g).0, ["X25519"]);
    let both = BindSsl { curves: Some("P-256".into()), ..ssl.clone() };
    assert_eq!(names(&both, &GlobalSsl::default()).0, ["secp256r1"]);
    let bad = BindSsl { ecdhe: Some("foo".into()), ..Default::default() };
    assert_eq!(names(&bad, &GlobalSsl::default()).1, ["unable to set elliptic named curve to 'foo'."]);
    // without either, rustls' defaults: X25519 first (OpenSSL's first too)
    let dflt = names(&BindSsl::default(), &GlobalSsl::default()).0;
    assert!(dflt.contains(&"X25519".to_string()) && dflt.contains(&"secp256r1".to_string()));
}

#[test]
fn versions_from_options() {
    let none = SslOptions::default();
    assert_eq!(versions(&none, &none).unwrap().len(), 2);
    let modern = SslOptions {
        no_versions: vec![TlsVersion::SslV3, TlsVersion::TlsV10, TlsVersion::TlsV11, TlsVersion::TlsV12],
        ..Default::default()
    };
    assert_eq!(versions(&none, &modern).unwrap(), [&rustls::version::TLS13]);
    let max12 = SslOptions { max_ver: Some(TlsVersion::TlsV12), ..Default::default() };
    assert_eq!(versions(&max12, &none).unwrap(), [&rustls::version::TLS12]);
    let old = SslOptions { min_ver: Some(TlsVersion::TlsV10), ..Default::default() };
    assert_eq!(
        versions(&old, &none).unwrap_err(),
        "'TLSv1.0' is not supported: rustls speaks TLSv1.2 and TLSv1.3 only (use 'ssl-min-ver TLSv1.2')."
    );
    assert!(versions(&max12, &modern).is_err());
}

#[test]
fn alpn_serves_h2_and_drops_others_with_a_warning() {
    let ssl = BindSsl { alpn: Some(vec!["h3".into(), "h2".into(), "http/1.1".into()]), ..Default::default() };
    let mut w = Vec::new();
    assert_eq!(alpn(&ssl, &mut w), [b"h2".to_vec(), b"http/1.1".to_vec()]);
    assert_eq!(w, ["'alpn': h3 not served by rampart (HTTP/1 and h2 only), not offered."]);
}

#[test]
fn build_loads_a_directory_and_checks_verify() {
    let dir = std::env::temp_dir().join(format!("rampart-bind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for n in ["a.test", "b.test"] {
        let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let c = rcgen::CertificateParams::new(vec![n.to_string()]).unwrap().self_signed(&kp).unwrap();
        std::fs::write(dir.join(format!("{n}.pem")), c.pem()).unwrap();
        std::fs::write(dir.join(format!("{n}.pem.key")), kp.serialize_pem()).unwrap();
    }
    let g = GlobalSsl { crt_base: Some(dir.clone()), ..Default::default() };
    let ssl = BindSsl { enabled: true, crts: vec![".".into()], strict_sni: true, ..Default::default() };
    let (tls, w) = build(&ssl, &g).unwrap();
    assert!(w.is_empty());
    assert_eq!(tls.store.load().len(), 2);
    assert!(tls.store.load().serves(Some("b.test")));

    let bad = BindSsl { verify: Some(Verify::Required), ..ssl.clone() };
    assert_eq!(build(&bad, &g).unwrap_err(), ["verify is enabled but no CA file specified."]);
    let missing = BindSsl { crts: vec!["nope.pem".into()], ..ssl };
    assert_eq!(
        build(&missing, &g).unwrap_err(),
        [format!(
            "unable to stat SSL certificate from file '{}' : No such file or directory.",
            dir.join("nope.pem").display()
        )]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Startup measurement, not a check: generates `RAMPART_CERTS` (default 10 000) ECDSA
/// certificates in a directory and prints how long `build` takes to load them all
/// (`bind ... ssl crt <dir>`), on every core. Run it with
/// `cargo test --release -p rampart --lib tls::bind::tests::load_many -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement: run by hand"]
fn load_many_certificates() {
    let n: usize = std::env::var("RAMPART_CERTS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let dir = std::env::temp_dir().join(format!("rampart-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    std::thread::scope(|s| {
        for t in 0..threads {
            let dir = &dir;
            s.spawn(move || {
                for i in (t..n).step_by(threads) {
                    let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
                    let name = format!("host{i}.example.com");
                    let c = rcgen::CertificateParams::new(vec![name]).unwrap().self_signed(&kp).unwrap();
                    std::fs::write(dir.join(format!("{i:05}.pem")), format!("{}{}", c.pem(), kp.serialize_pem()))
                        .unwrap();
                }
            });
        }
    });
    let ssl = BindSsl { enabled: true, crts: vec![dir.clone()], ..Default::default() };
    let start = std::time::Instant::now();
    let (tls, _) = build(&ssl, &GlobalSsl::default()).unwrap();
    let took = start.elapsed();
    assert_eq!(tls.store.load().len(), n);
    println!("loaded {n} certificates in {took:?} on {threads} threads");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ca_verify_file_verifies_without_being_named() {
    let dir = std::env::temp_dir().join(format!("rampart-bind-ca-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for n in ["named", "silent"] {
        let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut p = rcgen::CertificateParams::new(Vec::new()).unwrap();
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        p.distinguished_name.push(rcgen::DnType::CommonName, n);
        std::fs::write(dir.join(format!("{n}.crt")), p.self_signed(&kp).unwrap().pem()).unwrap();
    }
    let g = GlobalSsl { ca_base: Some(dir.clone()), ..Default::default() };
    let provider = rustls::crypto::aws_lc_rs::default_provider();
    let both = BindSsl {
        verify: Some(Verify::Required),
        ca_file: Some("named.crt".into()),
        ca_verify_file: Some("silent.crt".into()),
        ..Default::default()
    };
    let v = client_verifier(&both, &g, &provider, false, &on_disk).unwrap().expect("a verifier");
    assert_eq!(v.root_hint_subjects().len(), 1, "only the ca-file CA is named");
    // a crt-list line's `no-ca-names`
    let v = client_verifier(&both, &g, &provider, true, &on_disk).unwrap().expect("a verifier");
    assert!(v.root_hint_subjects().is_empty());
    let only = BindSsl { ca_file: None, ..both.clone() };
    let v = client_verifier(&only, &g, &provider, false, &on_disk).unwrap().expect("a verifier");
    assert!(v.root_hint_subjects().is_empty());
    let missing = BindSsl { ca_verify_file: Some("nope.crt".into()), ..only };
    assert!(client_verifier(&missing, &g, &provider, false, &on_disk)
        .unwrap_err()
        .contains("'ca-verify-file' : unable to load"));
    std::fs::remove_dir_all(&dir).unwrap();
}
