//! The health-check rule language end to end (issue 28 item 2), through the real binary
//! and, when it is installed, through haproxy 2.6 with the same configuration: an HTTP
//! check of two requests on two connections carried by check variables, header and body
//! expects; `tcp-check` rules over TLS (`connect ssl sni alpn`, `connect default` over
//! `check-ssl`); `option ssl-hello-chk`; and the rule options rampart refuses at startup.
//! Each test asserts the exact bytes the servers received and the check results as
//! `show stat` reports them (`check_status`, `check_code`, `last_chk`).

// Test servers on std threads, off the request path: std mutexes are fine.
#![allow(clippy::disallowed_types)]

mod test_pki;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rampart_testkit::{check, haproxy_or_skip, patience, stats_command, Proxy, RawBackend, Running, Step};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

const HEAD: &str = "global\n stats socket ${testdir}/admin.sock level admin\n\
                    defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 2s\n";

fn start(binary: &str, servers: &[(&str, SocketAddr)], body: &str) -> Running {
    let mut p = Proxy::new(binary).config(&format!("{HEAD}{body}"));
    for (name, addr) in servers {
        p = p.backend(name, *addr);
    }
    p.start().expect("proxy starts")
}

/// What `show stat` says of one server's last check.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Checked {
    status: String,
    check_status: String,
    check_code: String,
    last_chk: String,
}

/// The check results of `rows` (`be/srv`) once each server had a check that decided
/// its state (`rise 1 fall 1`): UP with a passing status, or DOWN.
fn settled(proxy: &Running, rows: &[&str]) -> Vec<Checked> {
    let sock = proxy.dir().join("admin.sock");
    let deadline = Instant::now() + patience() * 2;
    loop {
        let now: Vec<Checked> = rows.iter().map(|r| stat(&sock, r)).collect();
        let done = now.iter().all(|c| {
            let passed = c.check_status.ends_with("OK") || c.check_status == "L7OKC";
            (c.status == "UP" && passed) || (c.status == "DOWN" && !passed && c.check_status != "INI")
        });
        if done {
            return now;
        }
        assert!(Instant::now() < deadline, "checks did not settle: {now:#?}\n{}", proxy.output());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One server's row of `show stat`.
fn stat(sock: &Path, row: &str) -> Checked {
    let out = stats_command(sock, "show stat\n");
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().expect("header").trim_start_matches("# ").split(',').collect();
    let prefix = format!("{},", row.replace('/', ","));
    let line = lines.find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("no row {row} in {out}"));
    let values: Vec<&str> = line.split(',').collect();
    let col = |name: &str| {
        let i = header.iter().position(|h| *h == name).expect("column");
        // "* L7OK" while the next check runs
        values[i].trim_start_matches("* ").to_owned()
    };
    Checked {
        status: col("status"),
        check_status: col("check_status"),
        check_code: col("check_code"),
        last_chk: col("last_chk"),
    }
}

fn checked(status: &str, check_status: &str, check_code: &str, last_chk: &str) -> Checked {
    Checked {
        status: status.into(),
        check_status: check_status.into(),
        check_code: check_code.into(),
        last_chk: last_chk.into(),
    }
}

/// What the first connection to `be` received.
fn first_received(be: &RawBackend) -> String {
    be.wait_finished(1)[0].received_str()
}

// === HTTP checks of several steps ===

const HTTP_SEQUENCE: &str = "backend seq\n option httpchk\n\
     http-check connect\n http-check set-var(check.path) str(/one)\n\
     http-check send meth GET uri-lf %[var(check.path)] ver HTTP/1.1 hdr x-srv %[srv_name]\n\
     http-check expect status 200\n http-check expect hdr name x-next value -m beg /t\n\
     http-check set-var(check.next) res.hdr(x-next)\n\
     http-check connect port ${b_port}\n\
     http-check send meth POST uri-lf %[var(check.next)] body-lf \"from %[be_name]\"\n\
     http-check expect status 201\n http-check expect string created\n\
     server srv ${a_addr}:${a_port} check inter 300ms rise 1 fall 1\n\
     backend hdr\n option httpchk GET /h\n\
     http-check expect fhdr name -m sub -nex value-lf -m str \"%[str(/t)]wo\"\n\
     http-check expect hdr name x-missing comment \"needs x-missing\"\n\
     server srv ${c_addr}:${c_port} check inter 300ms rise 1 fall 1\n";

/// What the servers received and what `show stat` says, for [`HTTP_SEQUENCE`].
fn run_http_sequence(binary: &str) -> (Vec<String>, Vec<Checked>) {
    let head = |status: &str, extra: &str| format!("HTTP/1.1 {status}\r\n{extra}content-length: 0\r\n\r\n");
    let a = RawBackend::start(vec![Step::expect_head(), Step::send(head("200 OK", "x-next: /two\r\n"))]);
    let b = RawBackend::start(vec![
        Step::expect_until("from seq"),
        Step::send("HTTP/1.1 201 Created\r\ncontent-length: 7\r\n\r\ncreated"),
    ]);
    let c = RawBackend::start(vec![Step::expect_head(), Step::send(head("200 Fine", "x-next: /two\r\n"))]);
    let proxy = start(binary, &[("a", a.addr()), ("b", b.addr()), ("c", c.addr())], HTTP_SEQUENCE);
    let results = settled(&proxy, &["seq/srv", "hdr/srv"]);
    (vec![first_received(&a), first_received(&b), first_received(&c)], results)
}

#[test]
fn http_check_of_two_requests_with_variables_and_header_expects() {
    let (received, results) = run_http_sequence(RAMPART);
    assert_eq!(
        received,
        [
            "GET /one HTTP/1.1\r\nx-srv: srv\r\nconnection: close\r\n\r\n",
            "POST /two HTTP/1.0\r\ncontent-length: 8\r\n\r\nfrom seq",
            "GET /h HTTP/1.0\r\n\r\n",
        ]
    );
    assert_eq!(
        results,
        [checked("UP", "L7OK", "201", ""), checked("DOWN", "L7STS", "200", "Fine comment: needs x-missing")]
    );
    let Some(haproxy) = haproxy_or_skip("http_check_of_two_requests_with_variables_and_header_expects") else {
        return;
    };
    assert_eq!(run_http_sequence(haproxy.to_str().expect("utf-8 path")), (received, results));
}

// === TLS: tcp-check rules over TLS, ssl-hello-chk ===

/// What a TLS server saw on one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TlsSeen {
    sni: Option<String>,
    alpn: Option<String>,
    head: String,
}

/// A TLS server (certificate for `srv.test`, ALPN `http/1.1`) answering `200 OK` to one
/// request per connection, recording what each connection carried.
struct TlsBackend {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<TlsSeen>>>,
}

impl TlsBackend {
    fn start(tag: &str) -> TlsBackend {
        let (ca, ca_key) = test_pki::ca(&format!("check rules CA {tag}"));
        let key = test_pki::key();
        let params = rcgen::CertificateParams::new(vec!["srv.test".to_owned()]).expect("params");
        let chain = vec![params.signed_by(&key, &ca, &ca_key).expect("leaf").der().clone()];
        let key = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).expect("key");
        let mut config =
            rustls::ServerConfig::builder().with_no_client_auth().with_single_cert(chain, key).expect("config");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for tcp in listener.incoming().flatten() {
                let (config, log) = (config.clone(), log.clone());
                std::thread::spawn(move || serve_tls(tcp, config, &log));
            }
        });
        TlsBackend { addr, seen }
    }

    /// The connections that carried a request, SNI aside, in arrival order.
    fn seen(&self) -> Vec<TlsSeen> {
        self.seen.lock().expect("lock").clone()
    }
}

fn serve_tls(tcp: std::net::TcpStream, config: Arc<rustls::ServerConfig>, log: &Mutex<Vec<TlsSeen>>) {
    let Ok(conn) = rustls::ServerConnection::new(config) else { return };
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match tls.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let c = &tls.conn;
    log.lock().expect("lock").push(TlsSeen {
        sni: c.server_name().map(str::to_owned),
        alpn: c.alpn_protocol().map(|a| String::from_utf8_lossy(a).into_owned()),
        head: String::from_utf8_lossy(&buf).into_owned(),
    });
    let _ = tls.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
    tls.conn.send_close_notify();
    let _ = tls.flush();
}

const TLS_RULES: &str = "backend rules\n option tcp-check\n\
     tcp-check connect ssl sni rule.test alpn http/1.1\n\
     tcp-check send \"GET /rule HTTP/1.0\\r\\n\\r\\n\"\n tcp-check expect string \"200 OK\"\n\
     server srv ${tls_addr}:${tls_port} check inter 300ms rise 1 fall 1 verify none\n\
     backend default\n option tcp-check\n tcp-check connect default\n\
     tcp-check send-lf \"GET /%[be_name] HTTP/1.0\\r\\n\\r\\n\"\n tcp-check expect rstring ^HTTP/1\\.1\\ 200\n\
     server srv ${tls_addr}:${tls_port} check check-ssl check-sni default.test inter 300ms rise 1 fall 1 verify none\n\
     backend hello\n option ssl-hello-chk\n\
     server srv ${tls_addr}:${tls_port} check inter 300ms rise 1 fall 1\n\
     backend plain\n option ssl-hello-chk\n\
     server srv ${plain_addr}:${plain_port} check inter 300ms rise 1 fall 1\n\
     backend notls\n option tcp-check\n tcp-check connect ssl\n\
     server srv ${plain_addr}:${plain_port} check inter 300ms rise 1 fall 1 verify none\n";

/// What the TLS server saw (sorted by path), what the plain server received first
/// (the ClientHello of `ssl-hello-chk`) and what `show stat` says, for [`TLS_RULES`].
fn run_tls_rules(binary: &str, tag: &str) -> (Vec<TlsSeen>, Vec<u8>, Vec<Checked>) {
    let tls = TlsBackend::start(tag);
    let plain = RawBackend::start(vec![Step::ExpectBytes(5), Step::send("HTTP/1.1 400 Bad Request\r\n\r\n")]);
    let proxy = start(binary, &[("tls", tls.addr), ("plain", plain.addr())], TLS_RULES);
    let rows = ["rules/srv", "default/srv", "hello/srv", "plain/srv", "notls/srv"];
    let results = settled(&proxy, &rows);
    let mut seen = tls.seen();
    seen.sort_by(|a, b| a.head.cmp(&b.head));
    seen.dedup();
    (seen, sslv3_hello(&plain), results)
}

/// The first SSLv3 record the plain server received (`connect ssl` sends a TLS 1.x
/// one there too).
fn sslv3_hello(plain: &RawBackend) -> Vec<u8> {
    let deadline = Instant::now() + patience();
    loop {
        let conns = plain.connections();
        if let Some(c) = conns.into_iter().find(|c| c.finished && c.received.starts_with(b"\x16\x03\x00")) {
            return c.received;
        }
        assert!(Instant::now() < deadline, "no SSLv3 ClientHello received");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn tcp_check_rules_over_tls_and_ssl_hello_chk() {
    let (seen, hello, results) = run_tls_rules(RAMPART, "rampart");
    let tls = |sni: &str, path: &str| TlsSeen {
        sni: Some(sni.into()),
        alpn: Some("http/1.1".into()),
        head: format!("GET /{path} HTTP/1.0\r\n\r\n"),
    };
    // `connect default` over `check-ssl` offers the server's ALPN: none here
    let default = TlsSeen { alpn: None, ..tls("default.test", "default") };
    assert_eq!(seen, [default, tls("rule.test", "rule")]);
    // HAProxy's SSLv3 ClientHello: a 0x79-byte handshake record, the time, its random
    assert_eq!(hello.len(), 126);
    assert_eq!(&hello[..11], b"\x16\x03\x00\x00\x79\x01\x00\x00\x75\x03\x00");
    assert_eq!(&hello[15..43], b"HAPROXYSSLCHK\nHAPROXYSSLCHK\n");
    let notls = &results[4];
    assert_eq!((notls.status.as_str(), notls.check_status.as_str()), ("DOWN", "L6RSP"));
    assert!(notls.last_chk.ends_with(" at step 1 of tcp-check (connect)"), "{notls:?}");
    assert_eq!(
        results[..4],
        [
            checked("UP", "L7OK", "0", "(tcp-check)"),
            checked("UP", "L7OK", "0", "(tcp-check)"),
            checked("UP", "L6OK", "", ""),
            checked("DOWN", "L6RSP", "", ""),
        ]
    );
    let Some(haproxy) = haproxy_or_skip("tcp_check_rules_over_tls_and_ssl_hello_chk") else { return };
    let (h_seen, h_hello, h_results) = run_tls_rules(haproxy.to_str().expect("utf-8 path"), "haproxy");
    assert_eq!(h_seen, seen);
    assert_eq!((&h_hello[..11], &h_hello[15..]), (&hello[..11], &hello[15..]), "all but the time");
    // the TLS libraries word a handshake with a plain server differently
    assert_eq!(h_results[..4], results[..4]);
    assert_eq!((h_results[4].status.as_str(), h_results[4].check_status.as_str()), ("DOWN", "L6RSP"));
}

// === what rampart refuses at startup ===

#[test]
fn rule_options_rampart_lacks_are_refused_at_startup() {
    let cases = [
        ("option tcp-check\n tcp-check expect custom", "'tcp-check expect custom' is not supported yet"),
        (
            "option tcp-check\n tcp-check connect addr localhost",
            "'tcp-check connect addr localhost' (only an IP address) is not supported yet",
        ),
    ];
    let cfg = |rules: &str| {
        format!(
            "defaults\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n\
             frontend fe\n bind 127.0.0.1:65000\n default_backend b\n\
             backend b\n {rules}\n server s 127.0.0.1:80 check\n"
        )
    };
    let accepted = "option httpchk\n http-check connect proto h1 alpn http/1.1 addr 127.0.0.1:81";
    let out = check(RAMPART, &cfg(accepted));
    assert_eq!(out.code, 0, "the control is refused:\n{}", out.stderr);
    for (rules, alert) in cases {
        let out = check(RAMPART, &cfg(rules));
        assert_ne!(out.code, 0, "{rules}: accepted");
        assert!(out.stderr.contains(alert), "{rules}: no {alert:?} in:\n{}", out.stderr);
    }
}
