//! TLS termination through the real binary (`bind ... ssl`), with real clients: Debian's
//! `curl` and `openssl s_client`. Certificates are generated with rcgen for each test:
//! a CA, server certificates for several names, a client certificate.
//! Covers SNI selection (exact, wildcard, default), ALPN, client certificate
//! verification, `strict-sni`, the `ssl_*` fetches as the server sees them through
//! `set-header`, `redirect scheme https unless { ssl_fc }`, and the startup alerts for
//! bad PEM files. A differential test loads the same PEMs with Mozilla's settings in
//! haproxy and rampart (`-c`).

mod http_common;
mod test_pki;

use std::path::{Path, PathBuf};
use std::process::Command;

use http_common::{binary, PREAMBLE};
use rampart_testkit::{HttpBackend, Proxy, Reply, Running};

/// A CA and what it signed, written as PEM files in a directory of their own.
struct Pki {
    dir: PathBuf,
    ca: rcgen::Certificate,
    ca_key: rcgen::KeyPair,
}

impl Pki {
    fn new(test: &str) -> Pki {
        let dir = test_pki::fresh_dir(&format!("tls-{test}"));
        let (ca, ca_key) = test_pki::ca("Rampart Test CA");
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        Pki { dir, ca, ca_key }
    }

    /// Writes `<file>` holding a certificate for `names` (CN: the first) and its key.
    fn server(&self, file: &str, names: &[&str]) -> PathBuf {
        let path = self.dir.join(file);
        std::fs::write(&path, test_pki::leaf_pem(names, &self.ca, &self.ca_key)).unwrap();
        path
    }

    /// Writes a client certificate (`client.crt`, `client.key`) with CN `cn`.
    fn client(&self, cn: &str) -> (PathBuf, PathBuf) {
        let kp = test_pki::key();
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        p.distinguished_name.push(rcgen::DnType::CommonName, cn);
        let c = p.signed_by(&kp, &self.ca, &self.ca_key).unwrap();
        let (crt, key) = (self.dir.join("client.crt"), self.dir.join("client.key"));
        std::fs::write(&crt, c.pem()).unwrap();
        std::fs::write(&key, kp.serialize_pem()).unwrap();
        (crt, key)
    }

    fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A backend answering with the request head it received.
fn echo_head() -> HttpBackend {
    HttpBackend::builder("s1").respond(|req| Reply::ok().body(req.raw_head_str())).start()
}

fn start(cfg: &str, backend: &HttpBackend, listeners: &[&str]) -> Running {
    let mut p = Proxy::new(binary()).backend("s1", backend.addr());
    for l in listeners {
        p = p.listener(l);
    }
    p.config(cfg).start().expect("the proxy starts")
}

/// `curl https://<host>:<port>/` resolving `host` to the listener; its status, stdout
/// and stderr.
fn curl(proxy: &Running, listener: &str, host: &str, extra: &[&str]) -> (bool, String, String) {
    let addr = proxy.addr(listener);
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10", "--resolve"])
        .arg(format!("{host}:{}:{}", addr.port(), addr.ip()))
        .args(extra)
        .arg(format!("https://{host}:{}/p", addr.port()))
        .output()
        .expect("curl runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn curl_installed() -> bool {
    Command::new("curl").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// The subject CN of the certificate `openssl s_client` receives for `sni`.
fn served_cn(proxy: &Running, listener: &str, sni: &str) -> Option<String> {
    let addr = proxy.addr(listener);
    let out = Command::new("openssl")
        .args(["s_client", "-connect", &addr.to_string(), "-servername", sni])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("subject="))?;
    line.rsplit("CN = ").next().or_else(|| line.rsplit("CN=").next()).map(str::to_string)
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| l.strip_prefix(&format!("{name}: ")))
}

#[test]
fn sni_selects_the_certificate_and_fetches_reach_the_server() {
    if !curl_installed() {
        eprintln!("SKIPPED: curl is not installed");
        return;
    }
    let pki = Pki::new("sni");
    let default = pki.server("default.pem", &["default.test"]);
    let a = pki.server("a.pem", &["a.test"]);
    let wild = pki.server("wild.pem", &["*.wild.test"]);
    let s1 = echo_head();
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}} ssl crt {} crt {} crt {} alpn h2,http/1.1\n  \
         http-request set-header X-Forwarded-Proto https if {{ ssl_fc }}\n  \
         http-request set-header X-SNI %[ssl_fc_sni]\n  \
         http-request set-header X-Has-SNI %[ssl_fc_has_sni]\n  \
         http-request set-header X-Proto %[ssl_fc_protocol]\n  \
         http-request set-header X-Alpn %[ssl_fc_alpn]\n  \
         http-request set-header X-Client-Cert %[ssl_c_used]\n  \
         tcp-request session set-var(sess.sni) ssl_fc_sni\n  \
         http-request set-header X-Sess-SNI %[var(sess.sni)]\n  \
         server s1 ${{s1_addr}}:${{s1_port}}\n",
        default.display(),
        a.display(),
        wild.display()
    );
    let proxy = start(&cfg, &s1, &["fe1"]);
    let ca = pki.ca();
    let ca = ca.to_str().unwrap();
    // curl verifies the name: it succeeds only with the right certificate
    for host in ["a.test", "x.wild.test", "default.test"] {
        let (ok, body, err) = curl(&proxy, "fe1", host, &["--cacert", ca]);
        assert!(ok, "{host}: {err}");
        assert_eq!(header(&body, "x-forwarded-proto"), Some("https"), "{body}");
        assert_eq!(header(&body, "x-sni"), Some(host));
        assert_eq!(header(&body, "x-has-sni"), Some("1"));
        assert_eq!(header(&body, "x-sess-sni"), Some(host), "session rules run after the handshake");
        assert_eq!(header(&body, "x-proto"), Some("TLSv1.3"));
        assert_eq!(header(&body, "x-alpn"), Some("h2"), "curl prefers h2");
        assert_eq!(header(&body, "x-client-cert"), Some("0"));
    }
    // a client offering only h2 gets it
    let addr = proxy.addr("fe1").to_string();
    let out = Command::new("openssl")
        .args(["s_client", "-connect", &addr, "-servername", "a.test", "-alpn", "h2"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ALPN protocol: h2") && text.contains("CN = a.test"), "{text}");
    // TLS 1.2 too
    let (ok, body, err) = curl(&proxy, "fe1", "a.test", &["--cacert", ca, "--tls-max", "1.2"]);
    assert!(ok, "{err}");
    assert_eq!(header(&body, "x-proto"), Some("TLSv1.2"));
    // an unknown name gets the first certificate; a wildcard covers one label only
    assert_eq!(served_cn(&proxy, "fe1", "unknown.test").as_deref(), Some("default.test"));
    assert_eq!(served_cn(&proxy, "fe1", "a.b.wild.test").as_deref(), Some("default.test"));
    assert_eq!(served_cn(&proxy, "fe1", "b.wild.test").as_deref(), Some("*.wild.test"));
}

#[test]
fn crt_list_filters_choose_the_certificate() {
    let pki = Pki::new("crtlist");
    pki.server("default.pem", &["default.test"]);
    pki.server("wild.pem", &["*.w.test"]);
    pki.server("named.pem", &["named.test"]);
    // relative paths resolve under crt-base; the filters replace the certificate's names
    std::fs::write(
        pki.dir.join("list.lst"),
        "default.pem\nwild.pem *.w.test !hidden.w.test\nnamed.pem alias.test # comment\n",
    )
    .unwrap();
    let s1 = echo_head();
    let cfg = format!(
        "global\n  nbthread 1\n  crt-base {}\ndefaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  \
         timeout connect 1s\nlisten fe1\n  bind fd@${{fe1}} ssl crt-list list.lst\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        pki.dir.display()
    );
    let proxy = start(&cfg, &s1, &["fe1"]);
    assert_eq!(served_cn(&proxy, "fe1", "a.w.test").as_deref(), Some("*.w.test"));
    assert_eq!(served_cn(&proxy, "fe1", "hidden.w.test").as_deref(), Some("default.test"));
    assert_eq!(served_cn(&proxy, "fe1", "alias.test").as_deref(), Some("named.test"));
    assert_eq!(served_cn(&proxy, "fe1", "named.test").as_deref(), Some("default.test"), "filters replace the names");
    // an option the line cannot honour: an alert naming the file and line
    std::fs::write(pki.dir.join("bad.lst"), "default.pem\nnamed.pem [foo] x.test\n").unwrap();
    let bad = pki.dir.join("bad.lst").display().to_string();
    let out = rampart_testkit::check(
        binary(),
        &format!("defaults\n  mode http\nfrontend f\n  bind 127.0.0.1:8443 ssl crt-list {bad}\n"),
    );
    assert!(out.stderr.contains(&format!("'crt-list' : parsing [{bad}:2]: unknown ssl keyword foo")), "{}", out.stderr);
}

#[test]
fn redirect_to_https_unless_ssl_fc() {
    if !curl_installed() {
        return;
    }
    let pki = Pki::new("redirect");
    let crt = pki.server("www.pem", &["www.test"]);
    let s1 = echo_head();
    let cfg = format!(
        "{PREAMBLE}frontend fe\n  bind fd@${{fe1}}\n  bind fd@${{fe2}} ssl crt {}\n  \
         http-request redirect scheme https unless {{ ssl_fc }}\n  default_backend be\n\
         backend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        crt.display()
    );
    let proxy = start(&cfg, &s1, &["fe1", "fe2"]);
    let plain = proxy.addr("fe1");
    let out = Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", "-H", "Host: www.test"])
        .arg(format!("http://{plain}/x"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "302 https://www.test/x");
    let (ok, body, err) = curl(&proxy, "fe2", "www.test", &["--cacert", pki.ca().to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(body.starts_with("GET /p HTTP/1.1"), "{body}");
}

#[test]
fn client_certificates_required_and_optional() {
    if !curl_installed() {
        return;
    }
    let pki = Pki::new("verify");
    let crt = pki.server("srv.pem", &["srv.test"]);
    let (ccrt, ckey) = pki.client("client one");
    let s1 = echo_head();
    let cfg = format!(
        "{PREAMBLE}frontend fe\n  bind fd@${{fe1}} ssl crt {crt} ca-file {ca} verify required\n  \
         bind fd@${{fe2}} ssl crt {crt} ca-file {ca} verify optional\n  \
         http-request set-header X-Used %[ssl_c_used]\n  \
         http-request set-header X-DN %[ssl_c_s_dn]\n  \
         http-request set-header X-CN %[ssl_c_s_dn(CN)]\n  \
         http-request set-header X-Issuer %[ssl_c_i_dn(CN)]\n  \
         http-request set-header X-Verify %[ssl_c_verify]\n  default_backend be\n\
         backend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        crt = crt.display(),
        ca = pki.ca().display()
    );
    let proxy = start(&cfg, &s1, &["fe1", "fe2"]);
    let ca = pki.ca();
    let ca = ca.to_str().unwrap();
    let with_cert = ["--cacert", ca, "--cert", ccrt.to_str().unwrap(), "--key", ckey.to_str().unwrap()];
    // required: no certificate, no connection
    let (ok, _, _) = curl(&proxy, "fe1", "srv.test", &["--cacert", ca]);
    assert!(!ok, "a client without certificate must fail");
    let (ok, body, err) = curl(&proxy, "fe1", "srv.test", &with_cert);
    assert!(ok, "{err}");
    assert_eq!(header(&body, "x-used"), Some("1"));
    assert_eq!(header(&body, "x-cn"), Some("client one"));
    assert_eq!(header(&body, "x-dn"), Some("/CN=client one"));
    assert_eq!(header(&body, "x-issuer"), Some("Rampart Test CA"));
    assert_eq!(header(&body, "x-verify"), Some("0"));
    // optional: served either way
    let (ok, body, err) = curl(&proxy, "fe2", "srv.test", &["--cacert", ca]);
    assert!(ok, "{err}");
    assert_eq!(header(&body, "x-used"), Some("0"));
    let (ok, body, err) = curl(&proxy, "fe2", "srv.test", &with_cert);
    assert!(ok, "{err}");
    assert_eq!(header(&body, "x-used"), Some("1"));
}

/// Large bodies both ways (the copy path: a TLS side cannot splice) and keep-alive.
#[test]
fn large_bodies_and_keep_alive_over_tls() {
    if !curl_installed() {
        return;
    }
    let pki = Pki::new("bodies");
    let crt = pki.server("b.pem", &["b.test"]);
    let s1 = HttpBackend::builder("s1")
        .respond(|req| Reply::ok().body(format!("{}:{}", req.body.len(), "x".repeat(req.body.len()))))
        .start();
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}} ssl crt {}\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        crt.display()
    );
    let proxy = start(&cfg, &s1, &["fe1"]);
    let body = pki.dir.join("body.bin");
    std::fs::write(&body, vec![b'a'; 3_000_000]).unwrap();
    let data = format!("@{}", body.display());
    let ca = pki.ca();
    let ca = ca.to_str().unwrap();
    let (ok, out, err) = curl(&proxy, "fe1", "b.test", &["--cacert", ca, "--data-binary", &data]);
    assert!(ok, "{err}");
    assert_eq!(out.len(), "3000000:".len() + 3_000_000);
    assert!(out.starts_with("3000000:xxx"));
    // two requests on one connection
    let addr = proxy.addr("fe1");
    let url = format!("https://b.test:{}/", addr.port());
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10", "--cacert", ca, "--resolve"])
        .arg(format!("b.test:{}:{}", addr.port(), addr.ip()))
        .args(["-w", "%{num_connects}\n", &url, &url])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0:1\n0:0\n", "{}", String::from_utf8_lossy(&out.stderr));
}

/// A failed handshake is logged with HAProxy's words (`session_kill_embryonic()`).
#[test]
fn failed_handshakes_are_logged() {
    let pki = Pki::new("log");
    let crt = pki.server("l.pem", &["l.test"]);
    let s1 = echo_head();
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  log stdout format raw local0\n  option httplog\n  bind fd@${{fe1}} name tls1 ssl crt {} strict-sni\n  \
         server s1 ${{s1_addr}}:${{s1_port}}\n",
        crt.display()
    );
    let proxy = start(&cfg, &s1, &["fe1"]);
    let _ = served_cn(&proxy, "fe1", "unknown.test");
    let want = "fe1/tls1: SSL handshake failure";
    assert!(proxy.wait_output(want, std::time::Duration::from_secs(5)), "{}", proxy.output());
    let out = proxy.output();
    let line = out.lines().find(|l| l.contains(want)).unwrap_or_default();
    assert!(line.starts_with("127.0.0.1:") && line.contains(" ["), "{line}");
    // plain bytes on a TLS listener: a handshake failure too
    let mut c = std::net::TcpStream::connect(proxy.addr("fe1")).unwrap();
    std::io::Write::write_all(&mut c, b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let mut buf = Vec::new();
    let _ = std::io::Read::read_to_end(&mut c, &mut buf);
    assert!(!buf.starts_with(b"HTTP/"), "no HTTP answer on a TLS listener");
}

#[test]
fn strict_sni_refuses_unknown_names() {
    if !curl_installed() {
        return;
    }
    let pki = Pki::new("strict");
    let crt = pki.server("s.pem", &["known.test"]);
    let s1 = echo_head();
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}} ssl crt {} strict-sni\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        crt.display()
    );
    let proxy = start(&cfg, &s1, &["fe1"]);
    let ca = pki.ca();
    let (ok, _, err) = curl(&proxy, "fe1", "known.test", &["--cacert", ca.to_str().unwrap()]);
    assert!(ok, "{err}");
    let (ok, _, _) = curl(&proxy, "fe1", "other.test", &["-k"]);
    assert!(!ok, "strict-sni: no certificate for other.test");
}

#[test]
fn tcp_frontend_over_tls() {
    if !curl_installed() {
        return;
    }
    let pki = Pki::new("tcp");
    let crt = pki.server("t.pem", &["tcp.test"]);
    let s1 = echo_head();
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  mode tcp\n  bind fd@${{fe1}} ssl crt {}\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        crt.display()
    );
    let proxy = start(&cfg, &s1, &["fe1"]);
    let (ok, body, err) = curl(&proxy, "fe1", "tcp.test", &["--cacert", pki.ca().to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(body.starts_with("GET /p HTTP/1.1"), "{body}");
}

/// Runs `-c` on a configuration with one `bind ... ssl crt <file>`; its stderr.
fn check_crt(bin: &Path, crt: &str, extra: &str) -> (i32, String) {
    let cfg = format!(
        "global\n  log stderr local0\n{extra}defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  \
         timeout connect 1s\nfrontend f\n  bind 127.0.0.1:8443 ssl crt {crt}\n"
    );
    let out = rampart_testkit::check(bin, &cfg);
    (out.code, out.stderr)
}

#[test]
fn bad_pem_files_are_alerts_naming_the_file() {
    let pki = Pki::new("bad");
    let dir = &pki.dir;
    std::fs::write(dir.join("garbage.pem"), "garbage\n").unwrap();
    let good = pki.server("good.pem", &["g.test"]);
    let text = std::fs::read_to_string(&good).unwrap();
    let cert_only = &text[..text.find("-----BEGIN PRIVATE KEY-----").unwrap()];
    std::fs::write(dir.join("nokey.pem"), cert_only).unwrap();
    let other = pki.server("other.pem", &["o.test"]);
    let other_text = std::fs::read_to_string(&other).unwrap();
    let other_key = &other_text[other_text.find("-----BEGIN PRIVATE KEY-----").unwrap()..];
    std::fs::write(dir.join("mismatch.pem"), format!("{cert_only}{other_key}")).unwrap();
    let p = |f: &str| dir.join(f).display().to_string();
    let cases = [
        (
            p("missing.pem"),
            format!("unable to stat SSL certificate from file '{}' : No such file or directory.", p("missing.pem")),
        ),
        (p("garbage.pem"), format!("unable to load certificate from file '{}'.", p("garbage.pem"))),
        (p("nokey.pem"), format!("No Private Key found in '{}.key'.", p("nokey.pem"))),
        (
            p("mismatch.pem"),
            format!("inconsistencies between private key and certificate loaded '{}'.", p("mismatch.pem")),
        ),
    ];
    let haproxy = rampart_testkit::haproxy_path();
    for (file, want) in &cases {
        let (code, err) = check_crt(&binary(), file, "");
        assert_ne!(code, 0, "{file}");
        assert!(err.contains(&format!("'bind 127.0.0.1:8443' in section 'frontend' : {want}")), "{file}: {err}");
        if let Some(h) = &haproxy {
            let (code, herr) = check_crt(h, file, "");
            assert_ne!(code, 0);
            assert!(herr.contains(want.as_str()), "haproxy words it so too: {herr}");
        }
    }
    let (code, err) = check_crt(&binary(), &good.display().to_string(), "");
    assert_eq!(code, 0, "{err}");
}

#[test]
fn mozilla_settings_load_in_haproxy_and_rampart() {
    let Some(haproxy) = rampart_testkit::haproxy_or_skip("mozilla_settings_load_in_haproxy_and_rampart") else {
        return;
    };
    let pki = Pki::new("mozilla");
    let crt = pki.server("m.pem", &["m.test"]).display().to_string();
    let intermediate = "  ssl-default-bind-ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:\
ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:\
DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305\n  \
ssl-default-bind-ciphersuites TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256\n  \
ssl-default-bind-options prefer-client-ciphers no-sslv3 no-tlsv10 no-tlsv11 no-tls-tickets\n  \
tune.ssl.default-dh-param 2048\n";
    let modern = "  ssl-default-bind-ciphersuites TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256\n  \
ssl-default-bind-options prefer-client-ciphers no-sslv3 no-tlsv10 no-tlsv11 no-tlsv12 no-tls-tickets\n";
    for settings in [intermediate, modern] {
        let (code, err) = check_crt(&haproxy, &crt, settings);
        assert_eq!(code, 0, "haproxy: {err}");
        let (code, err) = check_crt(&binary(), &crt, settings);
        assert_eq!(code, 0, "rampart: {err}");
    }
    // rampart names the DHE suites it cannot provide, once
    let (_, err) = check_crt(&binary(), &crt, intermediate);
    assert_eq!(err.matches("not provided by rustls").count(), 1, "{err}");
    assert!(err.contains("'ciphers': DHE-RSA-AES128-GCM-SHA256, DHE-RSA-AES256-GCM-SHA384"), "{err}");
}

/// One HTTP/1.0 request (the proxy closes after the response) through `openssl
/// s_client`, saving its session to `sess_out` or resuming `sess_in`. Whether the
/// handshake resumed, and what came back.
fn s_client_request(addr: &str, version: &str, sess: (&str, &Path)) -> (bool, String) {
    use std::io::Write;
    let mut child = Command::new("openssl")
        .args(["s_client", "-ign_eof", "-connect", addr, "-servername", "a.test", version, sess.0])
        .arg(sess.1)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("openssl runs");
    // `-ign_eof`: s_client goes on after its input ends, until the proxy has answered
    // and closed (the session tickets come with the answer)
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"GET / HTTP/1.0\r\nHost: a.test\r\n\r\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (text.lines().any(|l| l.starts_with("Reused,")), text)
}

#[test]
fn sessions_resume_after_a_connection_close_exchange() {
    let pki = Pki::new("resume");
    let a = pki.server("a.pem", &["a.test"]);
    let s1 = echo_head();
    let cfg = format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}} ssl crt {}\n  \
         http-request set-header X-Resumed %[ssl_fc_is_resumed]\n  \
         server s1 ${{s1_addr}}:${{s1_port}}\n",
        a.display()
    );
    let proxy = start(&cfg, &s1, &["fe1"]);
    let addr = proxy.addr("fe1").to_string();
    for version in ["-tls1_2", "-tls1_3"] {
        let sess = pki.dir.join(format!("sess{version}.pem"));
        let (resumed, text) = s_client_request(&addr, version, ("-sess_out", &sess));
        assert!(!resumed && text.contains("x-resumed: 0"), "{version}: {text}");
        // the proxy ended the first connection with close_notify, so OpenSSL kept the
        // session, and the proxy takes it back
        let (resumed, text) = s_client_request(&addr, version, ("-sess_in", &sess));
        assert!(resumed, "{version}: the second handshake resumes: {text}");
        assert!(text.contains("x-resumed: 1"), "{version}: {text}");
    }
}
