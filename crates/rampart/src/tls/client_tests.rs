use super::*;
use crate::sample::testutil::config;

/// A fresh directory with a CA certificate (`ca.pem`) and a client certificate signed
/// by it (`client.pem`, chain and key).
fn fixtures(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rampart-tls-client-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let ca_key = rcgen::KeyPair::generate().expect("key");
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca.self_signed(&ca_key).expect("ca");
    std::fs::write(dir.join("ca.pem"), ca.pem()).expect("write");
    let key = rcgen::KeyPair::generate().expect("key");
    let leaf = rcgen::CertificateParams::new(vec!["client.test".to_owned()]).expect("params");
    let leaf = leaf.signed_by(&key, &ca, &ca_key).expect("leaf");
    std::fs::write(dir.join("client.pem"), format!("{}{}", leaf.pem(), key.serialize_pem())).expect("write");
    dir
}

fn built(text: &str) -> (Option<ServerTlsRt>, Vec<String>, Vec<String>) {
    let cfg = config(text);
    let px = cfg.proxies.iter().position(|p| !p.servers.is_empty()).expect("a backend");
    let (mut alerts, mut warnings) = (Vec::new(), Vec::new());
    let addr = "127.0.0.1:443".parse().expect("addr");
    let rt = build(&cfg, px, &cfg.proxies[px].servers[0], addr, false, &mut alerts, &mut warnings);
    let msgs = |d: Vec<Diag>| d.into_iter().map(|d| d.message).collect();
    (rt, msgs(alerts), msgs(warnings))
}

#[test]
fn verify_by_default_needs_a_ca_file() {
    let (rt, alerts, _) = built("backend b\n server s 127.0.0.1:443 ssl\n");
    assert!(rt.is_none());
    assert_eq!(alerts.len(), 1);
    assert!(
        alerts[0].starts_with("'server b/s' : verify is enabled by default but no CA file specified."),
        "{alerts:?}"
    );
    // `ssl-server-verify none` or `verify none` lift it
    let (rt, alerts, _) = built("global\n ssl-server-verify none\nbackend b\n server s 127.0.0.1:443 ssl\n");
    assert!(rt.is_some_and(|r| r.traffic().is_some() && r.check.is_some()), "{alerts:?}");
    let (rt, _, _) = built("backend b\n server s 127.0.0.1:443 ssl verify none check\n");
    assert!(rt.is_some_and(|r| r.traffic().is_some() && r.check.is_some()));
    // neither ssl nor check-ssl: nothing to build
    let (rt, alerts, _) = built("backend b\n server s 127.0.0.1:443 verify required\n");
    assert!(rt.is_none() && alerts.is_empty());
}

#[test]
fn missing_files_are_named_as_haproxy_does() {
    let (_, alerts, _) = built("backend b\n server s 127.0.0.1:443 ssl ca-file /nonexistent/ca.pem\n");
    assert_eq!(
        alerts,
        [
            "'server b/s' : Couldn't open the ca-file '/nonexistent/ca.pem' (No such file or directory).",
            "'ca-file' : unable to load /nonexistent/ca.pem."
        ]
    );
    let (_, alerts, _) = built("backend b\n server s 127.0.0.1:443 ssl verify none crt /nonexistent/c.pem\n");
    assert_eq!(
        alerts,
        ["'server b/s' : unable to stat SSL certificate from file '/nonexistent/c.pem' : No such file or directory."]
    );
}

#[test]
fn ca_file_client_cert_alpn_and_resumption() {
    let dir = fixtures("ok");
    let (ca, crt) = (dir.join("ca.pem"), dir.join("client.pem"));
    let text = format!(
        "defaults\n mode http\nbackend b\n server s 127.0.0.1:443 ssl ca-file {} crt {} alpn h2,http/1.1 \
         no-ssl-reuse check check-alpn http/1.0\n",
        ca.display(),
        crt.display()
    );
    let (rt, alerts, warnings) = built(&text);
    assert!(alerts.is_empty(), "{alerts:?}");
    assert!(warnings.is_empty(), "{warnings:?}");
    let rt = rt.expect("built");
    let traffic = rt.traffic().expect("traffic");
    assert_eq!(traffic.alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
    assert!(rt.offers_h2());
    assert!(traffic.client_auth_cert_resolver.has_certs());
    let check = rt.check.as_ref().expect("check");
    assert_eq!(check.alpn_protocols, [b"http/1.0".to_vec()]);
    assert!(!Arc::ptr_eq(traffic, check));
    assert_eq!(rt.name_for(None), ServerName::IpAddress(std::net::IpAddr::from([127, 0, 0, 1]).into()));
    assert_eq!(rt.name_for(Some("")), rt.addr_name);
    assert_eq!(rt.name_for(Some("a.test")), ServerName::try_from("a.test").expect("name"));
    // checks speak HTTP/1: without `check-alpn` they offer the server's list but `h2`
    let text = text.replace(" check-alpn http/1.0", "");
    let rt = built(&text).0.expect("built");
    assert_eq!(rt.check.as_ref().expect("check").alpn_protocols, [b"http/1.1".to_vec()]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn websocket_alpn_follows_ws() {
    let ws = |opts: &str| {
        let rt = built(&format!("backend b\n server s 127.0.0.1:443 ssl verify none {opts}\n")).0.expect("built");
        rt.ws_traffic.as_ref().map(|c| c.alpn_protocols.clone())
    };
    let (h1, h2) = (Some(vec![b"http/1.1".to_vec()]), Some(vec![b"h2".to_vec()]));
    assert_eq!(ws("alpn h2,http/1.1"), h1);
    assert_eq!(ws("alpn h2,http/1.1 ws auto"), h1);
    assert_eq!(ws("alpn h2"), None);
    assert_eq!(ws("alpn h2 ws h1"), h1);
    assert_eq!(ws("alpn h2,http/1.1 ws h2"), h2);
    assert_eq!(ws("ws h2"), None);
    assert_eq!(ws(""), None);
}

#[test]
fn version_rules() {
    let v = |text: &str| {
        let mut t = TlsVersions::default();
        let mut words = text.split_whitespace().peekable();
        while let Some(w) = words.next() {
            let value = if w.starts_with("ssl-m") { words.next().unwrap_or("") } else { "" };
            t.apply(w, value).expect("option");
        }
        versions(t).map(|v| v.iter().map(|x| format!("{:?}", x.version)).collect::<Vec<_>>())
    };
    assert_eq!(v(""), Ok(vec!["TLSv1_3".to_owned(), "TLSv1_2".to_owned()]));
    assert_eq!(v("no-tlsv13"), Ok(vec!["TLSv1_2".to_owned()]));
    assert_eq!(v("force-tlsv13"), Ok(vec!["TLSv1_3".to_owned()]));
    assert_eq!(v("ssl-min-ver TLSv1.3 ssl-max-ver TLSv1.2"), Err("all SSL/TLS versions are disabled".to_owned()));
    assert_eq!(
        v("no-sslv3 no-tlsv10 no-tlsv11 no-tlsv12 no-tlsv13"),
        Err("all SSL/TLS versions are disabled".to_owned())
    );
    assert!(v("ssl-min-ver TLSv1.0").is_err_and(|e| e.starts_with("'ssl-min-ver TLSv1.0' is not supported")));
    assert!(v("force-tlsv11").is_err_and(|e| e.starts_with("'force-tlsv11' is not supported")));
    let (_, alerts, _) =
        built("backend b\n server z2 127.0.0.1:443 ssl verify none ssl-min-ver TLSv1.3 ssl-max-ver TLSv1.2\n");
    assert_eq!(alerts, ["'server b/z2' : proxy 'b': all SSL/TLS versions are disabled for server 'z2'."]);
    // the global options apply to a server that sets none
    let cfg = config(
        "global\n ssl-default-server-options ssl-min-ver TLSv1.3\nbackend b\n server s 127.0.0.1:443 ssl verify none\n",
    );
    let own = cfg.proxies[0].servers[0].tls.versions;
    let picked = versions(own.or(cfg.global.ssl_server.versions)).expect("versions");
    assert_eq!(picked.iter().map(|x| x.version).collect::<Vec<_>>(), [rustls::ProtocolVersion::TLSv1_3]);
}

#[test]
fn sni_expression() {
    let (rt, alerts, _) =
        built("defaults\n mode http\nbackend b\n server s 127.0.0.1:443 ssl verify none sni req.hdr(host)\n");
    assert!(alerts.is_empty() && rt.is_some_and(|r| r.sni.is_some()));
    let (_, alerts, _) = built("backend b\n server s 127.0.0.1:443 ssl verify none sni bogus_fetch(1)\n");
    assert_eq!(
        alerts,
        ["'server b/s' : error detected while parsing sni expression : unknown fetch method 'bogus_fetch'"]
    );
    // servers sharing an expression share its value (one evaluation per stream)
    let cfg = config(
        "backend b\n server s 127.0.0.1:443 ssl verify none sni str(a)\n server t 127.0.0.1:443 ssl verify none sni str(b)\n \
         server u 127.0.0.1:443 ssl verify none sni str(a)\n",
    );
    let slots: Vec<usize> = (0..3)
        .map(|i| {
            let srv = &cfg.proxies[0].servers[i];
            build(&cfg, 0, srv, "127.0.0.1:443".parse().expect("addr"), false, &mut Vec::new(), &mut Vec::new())
                .expect("built")
                .sni_slot
        })
        .collect();
    assert_eq!(slots, [0, 1, 0]);
}

#[test]
fn cipher_warning_names_the_server() {
    let (rt, alerts, warnings) =
        built("backend b\n server s 127.0.0.1:443 ssl verify none ciphers ECDHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES128-GCM-SHA256\n");
    assert!(rt.is_some() && alerts.is_empty());
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].starts_with(
            "'server b/s' : ciphers not available in rampart (rustls) are ignored: DHE-RSA-AES128-GCM-SHA256;"
        ),
        "{warnings:?}"
    );
}

fn ring_built(text: &str) -> Result<Option<Arc<ClientConfig>>, Vec<String>> {
    let cfg = config(text);
    let s = &cfg.rings[0].servers[0];
    ring_server(&cfg, &s.tls, "'server r/s' : ")
}

#[test]
fn ring_servers_get_a_client_configuration_with_the_server_line_checks() {
    let dir = fixtures("ring");
    let ring = |opts: &str| format!("ring r\n  server s 127.0.0.1:6514 {opts}\n");
    assert!(ring_built(&ring("")).expect("plain").is_none());
    let c = ring_built(&ring("ssl verify none alpn a,b")).expect("built").expect("tls");
    assert_eq!(c.alpn_protocols, [b"a".to_vec(), b"b".to_vec()]);
    let c = ring_built(&ring(&format!("ssl ca-file {0}/ca.pem crt {0}/client.pem", dir.display())))
        .expect("built")
        .expect("tls");
    assert!(c.client_auth_cert_resolver.has_certs());
    assert!(c.alpn_protocols.is_empty());
    let err = ring_built(&ring("ssl")).expect_err("no CA");
    assert!(err[0].starts_with("'server r/s' : verify is enabled by default but no CA file specified."), "{err:?}");
    let err = ring_built(&ring("ssl verify none crt /nonexistent/x.pem")).expect_err("no crt");
    assert!(err[0].starts_with("'server r/s' : ") && err[0].contains("/nonexistent/x.pem"), "{err:?}");
    let err = ring_built(&ring("ssl verify none ssl-max-ver TLSv1.1")).expect_err("old version");
    assert!(err[0].starts_with("'server r/s' : "), "{err:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
