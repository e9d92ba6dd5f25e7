//! FastCGI towards servers (`fcgi-app`, `use-fcgi-app`, `server ... proto fcgi`) end to
//! end with a real application server: Debian's PHP-FPM (`php-fpm8.2`, package
//! `php-fpm`), started by each test on a loopback port with a generated pool, serving
//! PHP scripts written to a scratch document root. The same requests also go through
//! haproxy 2.6 with the same configuration and the same PHP-FPM, and the client must
//! get the same thing from both.
//!
//! Without php-fpm a test prints a `SKIPPED ...` line; under `RAMPART_REQUIRE_HAPROXY=1`
//! (`.ci/run` sets it and installs php-fpm) it fails.

mod http_common;

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use http_common::{binary, Files, PREAMBLE};
use rampart_testkit::{Proxy, RawClient, Response, Running};

/// PHP-FPM's binary, as Debian 12 installs it.
fn php_fpm_or_skip(test: &str) -> Option<PathBuf> {
    let found = ["/usr/sbin/php-fpm8.2", "/usr/sbin/php-fpm"].iter().map(PathBuf::from).find(|p| p.is_file());
    if found.is_none() {
        assert!(
            !rampart_testkit::haproxy_required(),
            "{test}: php-fpm is missing (apt-get install php-fpm), and RAMPART_REQUIRE_HAPROXY makes that a failure"
        );
        let line = format!("SKIPPED {test}: php-fpm is not installed (apt-get install php-fpm)\n");
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
    found
}

/// The scripts of the document root.
const SCRIPTS: &[(&str, &str)] = &[
    ("index.php", "<?php\nheader('Content-Type: text/plain');\necho \"hello from php\\n\";\n"),
    (
        "echo.php",
        "<?php\nheader('Content-Type: text/plain');\necho 'method=', $_SERVER['REQUEST_METHOD'], \"\\n\";\n\
         echo 'length=', $_SERVER['CONTENT_LENGTH'] ?? '-', \"\\n\";\necho 'type=', $_SERVER['CONTENT_TYPE'] ?? '-', \"\\n\";\n\
         echo file_get_contents('php://input');\n",
    ),
    (
        "info.php",
        "<?php\nheader('Content-Type: text/plain');\n\
         foreach (['SCRIPT_NAME', 'PATH_INFO', 'QUERY_STRING', 'REQUEST_URI', 'SCRIPT_FILENAME', 'DOCUMENT_ROOT', \
         'GATEWAY_INTERFACE', 'SERVER_PROTOCOL', 'REQUEST_METHOD', 'REMOTE_ADDR', 'HTTP_X_TEST', 'HTTP_X_MY_HDR', \
         'HTTP_AUTHORIZATION', 'HTTPS', 'REMOTE_USER', 'AUTH_TYPE', 'APP_MODE'] as $k) {\n  echo $k, '=', $_SERVER[$k] ?? '-', \"\\n\";\n}\n\
         echo 'a=', $_GET['a'] ?? '-', \"\\n\";\n",
    ),
    ("missing.php", "<?php\nhttp_response_code(404);\necho \"nothing here\\n\";\n"),
    ("moved.php", "<?php\nheader('Location: /index.php');\n"),
    ("pid.php", "<?php\necho getmypid();\n"),
    ("stderr.php", "<?php\nerror_log('stderr line from php');\necho \"logged\\n\";\n"),
    (
        "stream.php",
        "<?php\nheader('Content-Type: text/plain');\nfor ($i = 0; $i < 3; $i++) {\n  echo str_repeat(\"line $i \", 2000), \"\\n\";\n  flush();\n  usleep(50000);\n}\n",
    ),
];

/// A PHP-FPM master with one static pool on a loopback port, stopped on drop.
struct Fpm {
    child: Child,
    addr: SocketAddr,
    docroot: String,
    _files: Files,
}

impl Fpm {
    fn start(bin: &Path) -> Fpm {
        let files = Files::new("fpm");
        let log = files.write("fpm.log", "");
        let docroot = Path::new(&log).parent().expect("a scratch directory").join("www");
        std::fs::create_dir_all(&docroot).expect("create the document root");
        for (name, text) in SCRIPTS {
            std::fs::write(docroot.join(name), text).expect("write a script");
        }
        let docroot = docroot.display().to_string();
        let port = free_port();
        let conf = format!(
            "[global]\nerror_log = {log}\ndaemonize = no\n\n[www]\nlisten = 127.0.0.1:{port}\npm = static\n\
             pm.max_children = 6\nclear_env = no\ncatch_workers_output = yes\nsecurity.limit_extensions = .php\n"
        );
        let conf_path = files.write("fpm.conf", conf);
        let mut cmd = Command::new(bin);
        cmd.args(["-F", "-n", "-y", &conf_path, "-p", &docroot]).stdout(Stdio::null()).stderr(Stdio::null());
        // running as root (containers, CI) needs the explicit permission
        if is_root() {
            cmd.arg("-R");
        }
        let child = cmd.spawn().expect("php-fpm starts");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(
                Instant::now() < deadline,
                "php-fpm does not listen: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Fpm { child, addr, docroot, _files: files }
    }
}

impl Drop for Fpm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(1) == Some("0")))
        .unwrap_or_default()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A configuration sending every request to the PHP-FPM at `${php}`. A PHP-FPM child
/// serves one connection at a time, and each test request comes on a new client
/// connection: `http-reuse always` keeps the connections to the pool few.
fn config(docroot: &str, app_lines: &str) -> String {
    format!(
        "{PREAMBLE}listen fe1\n  bind fd@${{fe1}}\n  use-fcgi-app php\n  http-reuse always\n  server s1 ${{php_addr}}:${{php_port}} proto fcgi\n\
         fcgi-app php\n  docroot {docroot}\n  index index.php\n  path-info ^(/.+\\.php)(/.*)?$\n{app_lines}"
    )
}

fn start(bin: impl Into<PathBuf>, cfg: &str, fpm: &Fpm) -> Running {
    Proxy::new(bin).listener("fe1").backend("php", fpm.addr).config(cfg).start().expect("the proxy starts")
}

/// Sends `req` on a new connection and reads one response.
fn ask(proxy: &Running, req: &str) -> Response {
    let mut c = RawClient::connect(proxy.addr("fe1")).expect("connect");
    c.send(req.as_bytes()).expect("send");
    let method = req.split(' ').next().unwrap_or("GET");
    c.read_response_for(method).expect("a response")
}

/// What the client got, without what differs by nature (dates, the server software).
fn seen(r: &Response) -> String {
    let mut out = format!("{} {}\n", r.status, r.reason);
    for (n, v) in r.headers.iter() {
        if !n.eq_ignore_ascii_case("date") && !n.eq_ignore_ascii_case("x-powered-by") {
            out.push_str(&format!("{}: {v}\n", n.to_ascii_lowercase()));
        }
    }
    out.push_str(&format!("framing: {:?}\n\n", r.framing));
    out.push_str(&String::from_utf8_lossy(&r.body));
    out
}

const GET_PAGE: &str = "GET /index.php HTTP/1.1\r\nHost: site\r\n\r\n";
const GET_DIR: &str = "GET / HTTP/1.1\r\nHost: site\r\n\r\n";
const POST: &str =
    "POST /echo.php HTTP/1.1\r\nHost: site\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world";
const POST_CHUNKED: &str = "POST /echo.php HTTP/1.1\r\nHost: site\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
const PATH_INFO: &str =
    "GET /info.php/extra/path?a=1&b=2 HTTP/1.1\r\nHost: site\r\nX-Test: yes\r\nX-My_Hdr: on\r\nAuthorization: Basic eDp5\r\n\r\n";
const MISSING: &str = "GET /missing.php HTTP/1.1\r\nHost: site\r\n\r\n";
const MOVED: &str = "GET /moved.php HTTP/1.1\r\nHost: site\r\n\r\n";
const STREAM: &str = "GET /stream.php HTTP/1.1\r\nHost: site\r\n\r\n";
const HEAD: &str = "HEAD /index.php HTTP/1.1\r\nHost: site\r\n\r\n";

#[test]
fn php_pages_post_bodies_and_path_info() {
    let Some(bin) = php_fpm_or_skip("php_pages_post_bodies_and_path_info") else { return };
    let fpm = Fpm::start(&bin);
    let proxy = start(binary(), &config(&fpm.docroot, ""), &fpm);

    let r = ask(&proxy, GET_PAGE);
    assert_eq!((r.status, r.body_str().as_str()), (200, "hello from php\n"), "{}", seen(&r));
    assert_eq!(r.headers.get("content-type"), Some("text/plain;charset=UTF-8"));
    assert!(r.headers.contains("date"), "a Date header is added: {}", seen(&r));
    assert!(!r.headers.contains("status"));

    let r = ask(&proxy, GET_DIR);
    assert_eq!(r.body_str(), "hello from php\n", "the index serves the directory");

    let r = ask(&proxy, POST);
    assert_eq!(r.body_str(), "method=POST\nlength=11\ntype=text/plain\nhello world");
    let r = ask(&proxy, POST_CHUNKED);
    assert_eq!(r.body_str(), "method=POST\nlength=11\ntype=text/plain\nhello world");

    let r = ask(&proxy, PATH_INFO);
    let body = r.body_str();
    for line in [
        "SCRIPT_NAME=/info.php",
        "PATH_INFO=/extra/path",
        "QUERY_STRING=a=1&b=2",
        "REQUEST_URI=/info.php/extra/path?a=1&b=2",
        "GATEWAY_INTERFACE=CGI/1.1",
        "SERVER_PROTOCOL=HTTP/1.1",
        "REMOTE_ADDR=127.0.0.1",
        "HTTP_X_TEST=yes",
        // a name with `_` is deleted by default for FastCGI backends
        "HTTP_X_MY_HDR=-",
        // hidden unless `pass-header`
        "HTTP_AUTHORIZATION=-",
        "a=1",
        // HAProxy's built-in `set-param REMOTE_USER %[http_auth_user]` and AUTH_TYPE
        "REMOTE_USER=x",
        "AUTH_TYPE=Basic",
    ] {
        assert!(body.lines().any(|l| l == line), "{line} missing in:\n{body}");
    }
    assert!(body.contains(&format!("SCRIPT_FILENAME={}/info.php\n", fpm.docroot)), "{body}");

    let r = ask(&proxy, MISSING);
    assert_eq!((r.status, r.body_str().as_str()), (404, "nothing here\n"));
    let r = ask(&proxy, MOVED);
    assert_eq!((r.status, r.headers.get("location")), (302, Some("/index.php")));

    // a response that streams is chunked towards the client, and arrives whole
    let r = ask(&proxy, STREAM);
    assert_eq!(r.status, 200);
    assert_eq!(r.body.len(), 3 * (7 * 2000 + 1), "{}", r.raw_head_str());
    assert_eq!(r.headers.get("transfer-encoding"), Some("chunked"));
}

#[test]
fn connections_are_kept_and_pass_header_passes() {
    let Some(bin) = php_fpm_or_skip("connections_are_kept_and_pass_header_passes") else { return };
    let fpm = Fpm::start(&bin);
    let proxy = start(binary(), &config(&fpm.docroot, "  pass-header Authorization\n"), &fpm);
    // several requests on one client connection go to the same PHP-FPM child: the
    // connection to it was kept (`option keep-conn`, the default)
    let mut c = RawClient::connect(proxy.addr("fe1")).expect("connect");
    let mut pids = Vec::new();
    for _ in 0..4 {
        c.send(b"GET /pid.php HTTP/1.1\r\nHost: site\r\n\r\n").unwrap();
        let r = c.read_response().unwrap();
        assert_eq!(r.status, 200);
        pids.push(r.body_str());
    }
    assert!(pids.iter().all(|p| *p == pids[0] && !p.is_empty()), "{pids:?}");
    let r = ask(&proxy, PATH_INFO);
    assert!(r.body_str().contains("HTTP_AUTHORIZATION=Basic eDp5\n"), "{}", r.body_str());
}

/// `option get-values` and `option mpxs-conns` with PHP-FPM, which answers GET_VALUES
/// with `FCGI_MPXS_CONNS=0`: rampart asks on each new connection and sends one request
/// at a time on it; concurrent clients are all served (PHP-FPM would not answer a second
/// request multiplexed on a connection it serves), as through haproxy 2.6.
#[test]
fn get_values_with_php_fpm_which_does_not_multiplex() {
    let Some(bin) = php_fpm_or_skip("get_values_with_php_fpm_which_does_not_multiplex") else { return };
    let fpm = Fpm::start(&bin);
    let cfg = config(&fpm.docroot, "  option get-values\n  option mpxs-conns\n  option max-reqs 8\n");
    let ours = start(binary(), &cfg, &fpm);
    let addr = ours.addr("fe1");
    let clients: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                (0..10)
                    .map(|_| {
                        let mut c = RawClient::connect(addr).expect("connect");
                        c.send(POST.as_bytes()).expect("send");
                        let r = c.read_response().expect("a response");
                        (r.status, r.body_str())
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for c in clients {
        for (status, body) in c.join().unwrap() {
            assert_eq!(status, 200, "{body}");
            assert!(body.ends_with("hello world"), "{body}");
        }
    }
    let Some(haproxy) = rampart_testkit::haproxy_or_skip("fastcgi get_values_with_php_fpm") else { return };
    let theirs = start(haproxy, &cfg, &fpm);
    for req in [GET_PAGE, POST, PATH_INFO] {
        assert_eq!(seen(&ask(&ours, req)), seen(&ask(&theirs, req)), "request:\n{req}");
    }
}

#[test]
fn set_param_sets_a_parameter() {
    let Some(bin) = php_fpm_or_skip("set_param_sets_a_parameter") else { return };
    let fpm = Fpm::start(&bin);
    let app =
        "  set-param APP_MODE %[req.hdr(x-mode)] if { req.hdr(x-mode) -m found }\n  set-param SCRIPT_NAME /info.php\n";
    let proxy = start(binary(), &config(&fpm.docroot, app), &fpm);
    let r = ask(&proxy, "GET /whatever HTTP/1.1\r\nHost: site\r\nX-Mode: blue\r\n\r\n");
    let body = r.body_str();
    assert!(body.contains("APP_MODE=blue\n"), "{body}");
    assert!(body.contains("SCRIPT_NAME=/info.php\n"), "{body}");
    let r = ask(&proxy, "GET /whatever HTTP/1.1\r\nHost: site\r\n\r\n");
    assert!(r.body_str().contains("APP_MODE=-\n"), "{}", r.body_str());
}

#[test]
fn a_dead_application_is_a_502() {
    let Some(bin) = php_fpm_or_skip("a_dead_application_is_a_502") else { return };
    let fpm = Fpm::start(&bin);
    // an application that answers garbage: 502
    let junk = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let junk_addr = junk.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in junk.incoming().take(1) {
            let mut s = s.unwrap();
            let mut buf = [0u8; 4096];
            let _ = std::io::Read::read(&mut s, &mut buf);
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\n\r\nnot fastcgi");
        }
    });
    let cfg = config(&fpm.docroot, "");
    let proxy = Proxy::new(binary()).listener("fe1").backend("php", junk_addr).config(&cfg).start().unwrap();
    let r = ask(&proxy, GET_PAGE);
    assert_eq!(r.status, 502, "{}", seen(&r));
}

/// A FastCGI record as an application writes it (no padding).
fn record(kind: u8, content: &[u8]) -> Vec<u8> {
    let len = (content.len() as u16).to_be_bytes();
    let mut out = vec![1, kind, 0, 1, len[0], len[1], 0, 0];
    out.extend_from_slice(content);
    out
}

/// A one-shot FastCGI application answering `answer` to the first request, then
/// closing the connection.
fn fake_application(answer: Vec<u8>) -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let mut buf = [0u8; 8192];
            let _ = std::io::Read::read(&mut s, &mut buf);
            let _ = s.write_all(&answer);
        }
    });
    addr
}

#[test]
fn an_application_closing_mid_response_cuts_it() {
    let mut answer = record(7, b"a warning on stderr");
    answer.extend(record(6, b"Content-Type: text/plain\r\n\r\npartial body"));
    let addr = fake_application(answer);
    let cfg = config("/srv", "");
    let proxy = Proxy::new(binary()).listener("fe1").backend("php", addr).config(&cfg).start().unwrap();
    let mut c = RawClient::connect(proxy.addr("fe1")).expect("connect");
    c.send(GET_PAGE.as_bytes()).unwrap();
    let got = String::from_utf8_lossy(&c.read_to_end().expect("the proxy closes")).into_owned();
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    assert!(got.contains("partial body") && !got.contains("a warning"), "{got}");
    assert!(!got.ends_with("0\r\n\r\n"), "the chunked body must not end cleanly: {got}");
}

#[test]
fn a_malformed_record_is_a_502() {
    // version 2 records
    let mut answer = record(6, b"Status: 200\r\n\r\n");
    answer[0] = 2;
    let addr = fake_application(answer);
    let proxy = Proxy::new(binary()).listener("fe1").backend("php", addr).config(&config("/srv", "")).start().unwrap();
    assert_eq!(ask(&proxy, GET_PAGE).status, 502);
    // a CGI head with a bad status
    let addr = fake_application(record(6, b"Status: abc\r\n\r\n"));
    let proxy = Proxy::new(binary()).listener("fe1").backend("php", addr).config(&config("/srv", "")).start().unwrap();
    assert_eq!(ask(&proxy, GET_PAGE).status, 502);
}

#[test]
fn startup_checks() {
    let bad = |cfg: &str, msg: &str| {
        let out = rampart_testkit::check(binary(), cfg);
        assert_ne!(out.code, 0, "{cfg}");
        assert!(out.stderr.contains(msg), "{msg} not in {}", out.stderr);
    };
    let base = format!("{PREAMBLE}backend b\n  use-fcgi-app php\n  server s1 127.0.0.1:9000 proto fcgi\n");
    bad(&format!("{base}fcgi-app php\n  index index.php\n"), "fcgi-app 'php': no docroot configured.");
    bad(
        &format!("{base}fcgi-app php\n  docroot /srv\n  log-stderr 127.0.0.1:514\n"),
        "log-stderr : expects <address> and <facility> or global as arguments",
    );
    bad(&format!("{base}fcgi-app other\n  docroot /srv\n"), "unable to find FastCGI application 'php'");
    bad(
        &format!("{PREAMBLE}backend b\n  server s1 127.0.0.1:9000 proto fcgi\n"),
        "FCGI server 's1' has no FCGI app configured.",
    );
}

#[test]
fn same_as_haproxy() {
    let Some(bin) = php_fpm_or_skip("fastcgi same_as_haproxy") else { return };
    let Some(haproxy) = rampart_testkit::haproxy_or_skip("fastcgi same_as_haproxy") else { return };
    let fpm = Fpm::start(&bin);
    let cfg = config(&fpm.docroot, "");
    let ours = start(binary(), &cfg, &fpm);
    let theirs = start(haproxy, &cfg, &fpm);
    for req in [GET_PAGE, GET_DIR, POST, POST_CHUNKED, PATH_INFO, MISSING, MOVED, STREAM, HEAD] {
        let (a, b) = (ask(&ours, req), ask(&theirs, req));
        assert_eq!(seen(&a), seen(&b), "request:\n{req}");
    }
}

/// A syslog receiver on a loopback UDP port: its address, and each datagram as text.
fn syslog_receiver() -> (std::net::UdpSocket, String) {
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let addr = sock.local_addr().unwrap().to_string();
    (sock, addr)
}

/// The datagrams `sock` received within a while (`wanted` of them at most).
fn datagrams(sock: &std::net::UdpSocket, wanted: usize) -> Vec<String> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut buf = [0u8; 4096];
    while got.len() < wanted && Instant::now() < deadline {
        if let Ok(n) = sock.recv(&mut buf) {
            got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    }
    got
}

/// A syslog line without its date: `<pri>`, then from the tag on (`php[pid]: msg`
/// with the pid dropped).
fn without_date(line: &str) -> String {
    let pri_end = line.find('>').map_or(0, |i| i + 1);
    let tag = line.find(" php[").map_or(pri_end, |i| i + 1);
    let rest = &line[tag..];
    let msg = rest.find("]: ").map_or(rest, |i| &rest[i + 3..]);
    format!("{} php: {msg}", &line[..pri_end])
}

#[test]
fn log_stderr_sends_stderr_records_to_the_log_target() {
    // an application writing a STDERR record before its response
    let run = |bin: PathBuf| {
        let (sock, syslog) = syslog_receiver();
        let mut answer = record(7, b"a warning on stderr\n");
        answer.extend(record(6, b"Content-Type: text/plain\r\n\r\nbody"));
        answer.extend(record(3, &[0, 0, 0, 0, 0, 0, 0, 0]));
        let addr = fake_application(answer);
        let cfg = config("/srv", &format!("  log-stderr {syslog} local0\n"));
        let proxy = Proxy::new(bin).listener("fe1").backend("php", addr).config(&cfg).start().unwrap();
        let r = ask(&proxy, GET_PAGE);
        (
            r.status,
            String::from_utf8_lossy(&r.body).into_owned(),
            datagrams(&sock, 1).iter().map(|l| without_date(l)).collect::<Vec<_>>(),
        )
    };
    let ours = run(binary());
    // level err (3) of facility local0 (16): <131>, tagged with the application's name
    assert_eq!(ours, (200, "body".to_owned(), vec!["<131> php: a warning on stderr\n".to_owned()]));
    if let Some(haproxy) = rampart_testkit::haproxy_or_skip("log_stderr_sends_stderr_records_to_the_log_target") {
        assert_eq!(ours, run(haproxy), "rampart (left) and haproxy (right) differ");
    }
}

#[test]
fn log_stderr_with_php_fpm() {
    let Some(bin) = php_fpm_or_skip("fastcgi log_stderr_with_php_fpm") else { return };
    let fpm = Fpm::start(&bin);
    let run = |proxy_bin: PathBuf| {
        let (sock, syslog) = syslog_receiver();
        let cfg = config(&fpm.docroot, &format!("  log-stderr {syslog} len 1024 local0 info\n"));
        let proxy = start(proxy_bin, &cfg, &fpm);
        let r = ask(&proxy, "GET /stderr.php HTTP/1.1\r\nHost: site\r\n\r\n");
        (seen(&r), datagrams(&sock, 1).iter().map(|l| without_date(l)).collect::<Vec<_>>())
    };
    let (page, lines) = run(binary());
    assert!(page.ends_with("logged\n"), "{page}");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with("<131> php: ") && lines[0].contains("stderr line from php"), "{lines:?}");
    if let Some(haproxy) = rampart_testkit::haproxy_or_skip("fastcgi log_stderr_with_php_fpm") {
        assert_eq!((page, lines), run(haproxy), "rampart (left) and haproxy (right) differ");
    }
}
