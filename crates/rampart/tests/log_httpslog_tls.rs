//! `option httpslog` on TLS connections, rampart against haproxy: a TLS frontend and
//! a plain one log to a UDP syslog receiver owned by the test, and an in-process
//! rustls client makes requests with a chosen version, a single cipher suite (so
//! that both proxies must pick it), with or without an SNI, fresh or resuming its
//! session. The TLS fields of each line (`fc_err/ssl_fc_err/ssl_c_err/ssl_c_ca_err/
//! ssl_fc_is_resumed ssl_fc_sni/%sslv/%sslc`) and `%ft` must be haproxy 2.6.12's,
//! which the expectations below were taken from. Without haproxy the rampart lines
//! are still checked against those expectations, after a visible skip line;
//! `RAMPART_REQUIRE_HAPROXY=1` makes that a failure.

mod test_pki;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rampart_testkit::{Differential, HttpBackend, Normalize, Normalizer, Proxy, Reply, Running};
use rustls::crypto::aws_lc_rs::{self, cipher_suite as cs};
use rustls::SupportedCipherSuite;
use rustls_pki_types::ServerName;

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");
const SNI: &str = "www.logtls.test";

/// A CA and a server certificate for [`SNI`] and 127.0.0.1 (`site.pem`).
struct Pki {
    dir: PathBuf,
    ca: rcgen::Certificate,
}

impl Pki {
    fn new() -> Pki {
        let dir = test_pki::fresh_dir("log-httpslog-tls");
        let (ca, ca_key) = test_pki::ca("Rampart Test CA");
        std::fs::write(dir.join("site.pem"), test_pki::leaf_pem(&[SNI, "127.0.0.1"], &ca, &ca_key)).unwrap();
        Pki { dir, ca }
    }

    /// A client offering only `version` and `suite`, with its own session store.
    fn client(&self, suite: SupportedCipherSuite) -> Arc<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.ca.der().clone()).unwrap();
        let provider = rustls::crypto::CryptoProvider { cipher_suites: vec![suite], ..aws_lc_rs::default_provider() };
        let version = match suite {
            SupportedCipherSuite::Tls12(_) => &rustls::version::TLS12,
            SupportedCipherSuite::Tls13(_) => &rustls::version::TLS13,
        };
        let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
            .with_protocol_versions(&[version])
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        Arc::new(cfg)
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One `Connection: close` request over TLS to `addr` for `name` (an IP sends no SNI);
/// whether the client saw its session resumed.
fn tls_get(cfg: &Arc<rustls::ClientConfig>, addr: SocketAddr, name: &str) -> bool {
    let tcp = TcpStream::connect(addr).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let server = ServerName::try_from(name.to_string()).unwrap();
    let conn = rustls::ClientConnection::new(cfg.clone(), server).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    tls.write_all(format!("GET /t HTTP/1.1\r\nHost: {name}\r\nConnection: close\r\n\r\n").as_bytes())
        .expect("request written");
    // to the end: the session tickets come with the answer
    let mut answer = Vec::new();
    let _ = tls.read_to_end(&mut answer);
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&answer));
    tls.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed)
}

fn plain_get(addr: SocketAddr) {
    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(b"GET /t HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n").unwrap();
    let mut sink = Vec::new();
    let _ = c.read_to_end(&mut sink);
}

/// The next syslog line, waiting up to 5 s.
fn next_line(rx: &UdpSocket) -> Option<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut buf = [0u8; 65536];
    while Instant::now() < deadline {
        if let Ok(n) = rx.recv(&mut buf) {
            return Some(String::from_utf8_lossy(&buf[..n]).trim_end().to_owned());
        }
    }
    None
}

/// What a run saw: per request, whether the client resumed, and the line logged.
#[derive(Debug, Clone, PartialEq)]
struct Lines(Vec<(bool, String)>);

impl Normalize for Lines {
    fn normalize(&mut self, _: &Normalizer) {}
}

/// The client connections of the scenario: (suite, name to connect to, requests on
/// one client, which resume after the first).
fn clients() -> Vec<(SupportedCipherSuite, &'static str, usize)> {
    vec![
        (cs::TLS13_AES_128_GCM_SHA256, SNI, 2),
        (cs::TLS13_CHACHA20_POLY1305_SHA256, "127.0.0.1", 1),
        (cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, SNI, 2),
        (cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, "127.0.0.1", 1),
    ]
}

/// The lines each binary must write for [`clients`], then the plain request: `%ft`
/// and the two TLS fields (haproxy 2.6.12's).
const EXPECTED: &[(&str, &str, &str)] = &[
    ("tls~", "0/0000000000000000/0/0/0", "www.logtls.test/TLSv1.3/TLS_AES_128_GCM_SHA256"),
    ("tls~", "0/0000000000000000/0/0/1", "www.logtls.test/TLSv1.3/TLS_AES_128_GCM_SHA256"),
    ("tls~", "0/0000000000000000/0/0/0", "-/TLSv1.3/TLS_CHACHA20_POLY1305_SHA256"),
    ("tls~", "0/0000000000000000/0/0/0", "www.logtls.test/TLSv1.2/ECDHE-ECDSA-AES128-GCM-SHA256"),
    ("tls~", "0/0000000000000000/0/0/1", "www.logtls.test/TLSv1.2/ECDHE-ECDSA-AES128-GCM-SHA256"),
    ("tls~", "0/0000000000000000/0/0/0", "-/TLSv1.2/ECDHE-ECDSA-CHACHA20-POLY1305"),
    ("plain", "0/-/-/-/0", "-/-/-"),
];

fn scenario(pki: &Pki, rx: &UdpSocket, proxy: &Running) -> Lines {
    rx.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let mut buf = [0u8; 65536];
    while rx.recv(&mut buf).is_ok() {}
    let mut out = Vec::new();
    for (suite, name, n) in clients() {
        let cfg = pki.client(suite);
        for _ in 0..n {
            let resumed = tls_get(&cfg, proxy.addr("tls"), name);
            out.push((resumed, next_line(rx).unwrap_or_default()));
        }
    }
    plain_get(proxy.addr("plain"));
    out.push((false, next_line(rx).unwrap_or_default()));
    Lines(out)
}

fn config(pki: &Pki, syslog: SocketAddr) -> String {
    format!(
        "global\n  log {syslog} local0\n  log-tag px\n\
         defaults\n  mode http\n  log global\n  option httpslog\n\
         \x20 timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         frontend tls\n  bind fd@${{tls}} ssl crt {}\n  default_backend be\n\
         frontend plain\n  bind fd@${{plain}}\n  default_backend be\n\
         backend be\n  server s1 ${{s1_addr}}:${{s1_port}}\n",
        pki.dir.join("site.pem").display()
    )
}

fn backend() -> HttpBackend {
    HttpBackend::builder("s1").respond(|_| Reply::ok().body("hello")).start()
}

/// `%ft`, and the two TLS fields at the end of an httpslog line.
fn tls_fields(line: &str) -> (String, String, String) {
    let body = line.split_once("]: ").map_or(line, |(_, b)| b);
    let words: Vec<&str> = body.split(' ').collect();
    let at = |i: usize| words.get(i).copied().unwrap_or_default().to_owned();
    (at(2), at(words.len().saturating_sub(2)), at(words.len().saturating_sub(1)))
}

/// A whole line with what legitimately differs between two runs masked: the syslog
/// date and pid, the client port, the accept date, the timers (their sign stays) and
/// the connection counts.
fn masked(line: &str) -> String {
    let body = line.split_once("]: ").map_or(line, |(_, b)| b);
    let words = body.split(' ').enumerate().map(|(i, w)| match i {
        0 => w.rsplit_once(':').map_or(w.to_owned(), |(ip, _)| format!("{ip}:*")),
        1 => "[date]".to_owned(),
        4 => w.split('/').map(|t| if t.starts_with('-') { t } else { "n" }).collect::<Vec<_>>().join("/"),
        10 => "n/n/n/n/".to_owned() + w.rsplit('/').next().unwrap_or_default(),
        _ => w.to_owned(),
    });
    words.collect::<Vec<_>>().join(" ")
}

/// Checks one binary's lines against [`EXPECTED`].
fn check(who: &str, lines: &Lines) {
    assert_eq!(lines.0.len(), EXPECTED.len(), "{who}: {lines:#?}");
    for (i, ((resumed, line), (ft, errs, names))) in lines.0.iter().zip(EXPECTED).enumerate() {
        assert_eq!(tls_fields(line), (ft.to_string(), errs.to_string(), names.to_string()), "{who} line {i}: {line}");
        assert_eq!(*resumed, errs.ends_with("/1"), "{who} line {i}: what the client saw: {line}");
        assert!(line.contains(" 200 ") && line.contains(" \"GET /t HTTP/1.1\" "), "{who} line {i}: {line}");
    }
}

#[test]
fn httpslog_tls_fields_match_haproxy() {
    let pki = Pki::new();
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let cfg = config(&pki, rx.local_addr().unwrap());
    let diff = Differential::new(RAMPART).listener("tls").listener("plain").backend("s1", backend).config(&cfg);
    let Some(cmp) = diff.run(|proxy| scenario(&pki, &rx, proxy)) else {
        // no haproxy: rampart's lines are still held to haproxy's recorded ones
        eprintln!("note: checking rampart's lines against haproxy 2.6.12's recorded fields only");
        let s1 = backend();
        let proxy = Proxy::new(RAMPART)
            .listener("tls")
            .listener("plain")
            .backend("s1", s1.addr())
            .config(&cfg)
            .start()
            .unwrap();
        check("rampart", &scenario(&pki, &rx, &proxy));
        return;
    };
    check("haproxy", &cmp.haproxy.client);
    check("rampart", &cmp.rampart.client);
    let fields = |l: &Lines| l.0.iter().map(|(r, line)| (*r, tls_fields(line))).collect::<Vec<_>>();
    assert_eq!(fields(&cmp.rampart.client), fields(&cmp.haproxy.client));
    // and the rest of the lines too
    let whole = |l: &Lines| l.0.iter().map(|(_, line)| masked(line)).collect::<Vec<_>>();
    assert_eq!(whole(&cmp.rampart.client), whole(&cmp.haproxy.client));
}
