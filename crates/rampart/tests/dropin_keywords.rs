//! Proxy options, server and bind options and global keywords real configurations carry
//! (issue 28's drop-in sweep), each run through rampart and haproxy 2.6 on the same
//! configuration and compared on what a client or a server sees:
//! `option http-ignore-probes` (no 400/408 and no log line for a connection that sent
//! nothing), `option disable-h2-upgrade` (the HTTP/2 preface is a bad HTTP/1 request),
//! `option nolinger` (the proxy's side of a closed connection is reset, it lingers in no
//! TCP state), `option prefer-last-server` (a kept-alive client goes back to its server
//! while that server is usable).

mod http_common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use http_common::*;
use rampart_testkit::{stats_command, HttpBackend, RawClient, Running};

/// Sends `data` (then shuts the write side if `shut`) and reads until the proxy closes:
/// what came back, then `<EOF>` or `<RST>` (or `<TIMEOUT>`).
fn talk(addr: SocketAddr, data: &[u8], shut: bool) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    if !data.is_empty() {
        s.write_all(data).unwrap();
    }
    if shut {
        s.shutdown(std::net::Shutdown::Write).unwrap();
    }
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        match s.read(&mut chunk) {
            Ok(0) => break "<EOF>",
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break "<RST>",
            Err(_) => break "<TIMEOUT>",
        }
    };
    format!("{}{end}", String::from_utf8_lossy(&got))
}

const PROBES_CFG: &str = "\
global\n  nbthread 1\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
  timeout http-request 300ms\n  option httplog\n  log stdout format raw local0\n\
frontend probes\n  bind fd@${probes}\n  option http-ignore-probes\n\
  http-request return status 200 content-type text/plain string ok\n\
frontend plain\n  bind fd@${plain}\n\
  http-request return status 200 content-type text/plain string ok\n";

#[test]
fn http_ignore_probes_answers_and_logs_nothing_to_a_silent_connection() {
    for bin in binaries("http_ignore_probes_answers_and_logs_nothing_to_a_silent_connection") {
        let who = name(&bin);
        let proxy = start_with(&bin, PROBES_CFG, &["probes", "plain"], &[]);
        let (probes, plain) = (proxy.addr("probes"), proxy.addr("plain"));
        // closed at once, and timed out (`timeout http-request`) without a byte
        assert_eq!(talk(probes, b"", true), "<EOF>", "{who}");
        assert_eq!(talk(probes, b"", false), "<EOF>", "{who}");
        // a partial request is no probe: it still gets its 408
        assert!(talk(probes, b"GET / HT", false).starts_with("HTTP/1.1 408 "), "{who}");
        // a real request is served
        assert!(
            talk(probes, b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n", false).starts_with("HTTP/1.1 200 ")
        );
        // without the option: 400 and 408
        assert!(talk(plain, b"", true).starts_with("HTTP/1.1 400 "), "{who}");
        assert!(talk(plain, b"", false).starts_with("HTTP/1.1 408 "), "{who}");
        assert!(proxy.wait_output("plain plain/<NOSRV> ", Duration::from_secs(3)), "{who}: {}", proxy.output());
        std::thread::sleep(Duration::from_millis(300));
        let out = proxy.output();
        let lines: Vec<&str> = out.lines().filter(|l| l.contains(" probes probes/")).collect();
        // only the partial request and the served one are logged
        assert_eq!(lines.len(), 2, "{who}: {out}");
        assert!(lines.iter().any(|l| l.contains(" 408 ")) && lines.iter().any(|l| l.contains(" 200 ")), "{who}: {out}");
        assert_eq!(out.lines().filter(|l| l.contains(" plain plain/<NOSRV> ")).count(), 2, "{who}: {out}");
    }
}

const H2_CFG: &str = "\
global\n  nbthread 1\n\
defaults\n  mode http\n  timeout client 2s\n  timeout server 2s\n  timeout connect 1s\n\
frontend noupg\n  bind fd@${noupg}\n  option disable-h2-upgrade\n\
  http-request return status 200 content-type text/plain string ok\n\
frontend upg\n  bind fd@${upg}\n\
  http-request return status 200 content-type text/plain string ok\n";

const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

#[test]
fn disable_h2_upgrade_takes_the_preface_for_a_bad_request() {
    for bin in binaries("disable_h2_upgrade_takes_the_preface_for_a_bad_request") {
        let who = name(&bin);
        let proxy = start_with(&bin, H2_CFG, &["noupg", "upg"], &[]);
        let got = talk(proxy.addr("noupg"), H2_PREFACE, false);
        assert!(got.starts_with("HTTP/1.1 400 Bad request\r\n"), "{who}: {got}");
        // HTTP/1 still works there
        let ok = talk(proxy.addr("noupg"), b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n", false);
        assert!(ok.starts_with("HTTP/1.1 200 "), "{who}: {ok}");
        // without the option the same bytes start HTTP/2: the server's SETTINGS frame
        let mut c = TcpStream::connect(proxy.addr("upg")).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        c.write_all(H2_PREFACE).unwrap();
        let mut frame = [0u8; 9];
        c.read_exact(&mut frame).unwrap();
        assert_eq!(frame[3], 4, "{who}: a SETTINGS frame first, got {frame:?}");
    }
}

/// The TCP states (`/proc/net/tcp*`, hex) of the sockets from local port `local` to
/// remote port `remote` on loopback.
fn tcp_states(local: u16, remote: u16) -> Vec<String> {
    let mut out = Vec::new();
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let port = |a: &str| a.rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
            if f.len() > 3 && port(f[1]) == Some(local) && port(f[2]) == Some(remote) {
                out.push(f[3].to_owned());
            }
        }
    }
    out
}

/// A request with `connection: close` whose response the proxy answers itself: the
/// client reads it, does not close, and the states the proxy's side of the connection
/// is left in are returned (`05`: FIN_WAIT2; none when it was reset).
fn proxy_side_after_close(addr: SocketAddr) -> (String, Vec<String>) {
    let mut c = RawClient::connect(addr).expect("connect");
    c.send("GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").unwrap();
    let got = show(&read_all(&mut c));
    std::thread::sleep(Duration::from_millis(200));
    let client_port = c.local_addr().unwrap().port();
    (got, tcp_states(addr.port(), client_port))
}

/// A one-connection HTTP server answering one keep-alive response per request, that
/// reports how each connection ended on its side: `EOF` (FIN) or `RST`.
fn closing_server() -> (SocketAddr, std::sync::mpsc::Receiver<&'static str>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let tx = tx.clone();
            std::thread::spawn(move || {
                s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let mut buf = [0u8; 4096];
                let end = loop {
                    match s.read(&mut buf) {
                        Ok(0) => break "EOF",
                        Ok(_) => {
                            let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break "RST",
                        Err(_) => break "TIMEOUT",
                    }
                };
                let _ = tx.send(end);
            });
        }
    });
    (addr, rx)
}

const NOLINGER_CFG: &str = "\
global\n  nbthread 1\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n  option httpclose\n\
frontend fe_nolinger\n  bind fd@${fe_nolinger}\n  option nolinger\n\
  http-request return status 200 content-type text/plain string ok\n\
frontend fe_plain\n  bind fd@${fe_plain}\n\
  http-request return status 200 content-type text/plain string ok\n\
listen be_nolinger\n  bind fd@${be_nolinger}\n  option nolinger\n  server s1 ${s1_addr}:${s1_port}\n\
listen be_plain\n  bind fd@${be_plain}\n  server s2 ${s2_addr}:${s2_port}\n";

#[test]
fn nolinger_resets_the_proxy_side_of_closed_connections() {
    for bin in binaries("nolinger_resets_the_proxy_side_of_closed_connections") {
        let who = name(&bin);
        let (s1, ends1) = closing_server();
        let (s2, ends2) = closing_server();
        let listeners = ["fe_nolinger", "fe_plain", "be_nolinger", "be_plain"];
        let proxy = start_with(&bin, NOLINGER_CFG, &listeners, &[("s1", s1), ("s2", s2)]);
        // client side: the proxy closed first; without nolinger its socket waits in
        // FIN_WAIT2 for the client's FIN, with it the socket is gone (reset)
        let (got, states) = proxy_side_after_close(proxy.addr("fe_nolinger"));
        assert!(got.starts_with("HTTP/1.1 200 ") && got.ends_with("ok"), "{who}: {got}");
        assert_eq!(states, Vec::<String>::new(), "{who}: the proxy's side is reset");
        let (got, states) = proxy_side_after_close(proxy.addr("fe_plain"));
        assert!(got.starts_with("HTTP/1.1 200 "), "{who}: {got}");
        assert_eq!(states, ["05"], "{who}: FIN_WAIT2 without the option");
        // server side: `option httpclose` closes the server connection after the
        // response; the server sees a reset with nolinger. Without it rampart closes
        // with a FIN (haproxy 2.6 resets there too: not compared)
        let is_rampart = bin == binary();
        for (listener, ends, want) in [("be_nolinger", &ends1, "RST"), ("be_plain", &ends2, "EOF")] {
            let mut c = RawClient::connect(proxy.addr(listener)).unwrap();
            c.send("GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
            assert_eq!(c.read_response().unwrap().status, 200, "{who}");
            let end = ends.recv_timeout(Duration::from_secs(5));
            if is_rampart || want == "RST" {
                assert_eq!(end, Ok(want), "{who}: {listener}");
            }
        }
    }
}

const PREFER_LAST_CFG: &str = "\
global\n  nbthread 1\n  stats socket ${testdir}/admin.sock level admin\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
listen fe1\n  bind fd@${fe1}\n  balance roundrobin\n  http-reuse never\n  option prefer-last-server\n\
  server s1 ${s1_addr}:${s1_port}\n  server s2 ${s2_addr}:${s2_port}\n";

/// The server that answered each of `n` requests sent on the client connection `c`.
fn servers_of(c: &mut RawClient, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            c.send("GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
            String::from_utf8_lossy(&c.read_response().unwrap().body).into_owned()
        })
        .collect()
}

#[test]
fn prefer_last_server_keeps_a_client_on_its_server_while_usable() {
    for bin in binaries("prefer_last_server_keeps_a_client_on_its_server_while_usable") {
        let who = name(&bin);
        let (s1, s2) = (HttpBackend::start("s1"), HttpBackend::start("s2"));
        let proxy: Running = start_binary(&bin, PREFER_LAST_CFG, &[("s1", s1.addr()), ("s2", s2.addr())]);
        let mut c = client(&proxy);
        let first = servers_of(&mut c, 3);
        assert!(first.iter().all(|s| *s == first[0]), "{who}: {first:?}");
        // a second client starts on the other server (roundrobin), and stays there
        let mut d = client(&proxy);
        let second = servers_of(&mut d, 2);
        assert!(second.iter().all(|s| *s != first[0]), "{who}: {second:?}");
        // once its server is in maintenance, the first client goes to the other one
        let sock = proxy.dir().join("admin.sock");
        let _ = stats_command(&sock, &format!("disable server fe1/{}\n", first[0]));
        let after = servers_of(&mut c, 2);
        assert!(after.iter().all(|s| *s != first[0]), "{who}: {after:?}");
    }
}

const BIND_ID_CFG: &str = "\
global\n  nbthread 1\n\
defaults\n  mode http\n  timeout client 2s\n  timeout server 2s\n  timeout connect 1s\n\
frontend fe\n  bind fd@${a}\n  bind fd@${b} id 7\n  bind fd@${c}\n  bind fd@${d} id 3\n  bind fd@${e}\n\
  http-request return status 200 content-type text/plain lf-string \"%[so_id]\"\n";

#[test]
fn bind_id_numbers_listeners_as_haproxy() {
    let mut seen = Vec::new();
    for bin in binaries("bind_id_numbers_listeners_as_haproxy") {
        let proxy = rampart_testkit::Proxy::new(&bin)
            .listener("a")
            .listener("b")
            .listener("c")
            .listener("d")
            .listener("e")
            .config(BIND_ID_CFG)
            .start()
            .expect("start");
        let ids: Vec<String> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|l| {
                let got = talk(proxy.addr(l), b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n", false);
                got.split("\r\n\r\n").nth(1).unwrap_or_default().trim_end_matches("<EOF>").to_owned()
            })
            .collect();
        seen.push(ids);
    }
    // numbered ones keep theirs; the others take the first free number from their
    // position on (the third listener skips 3, taken by the fourth; the fifth starts
    // after the number the third took)
    assert_eq!(seen[0], ["1", "7", "4", "3", "6"]);
    if let Some(theirs) = seen.get(1) {
        assert_eq!(&seen[0], theirs, "rampart vs haproxy");
    }
}

#[test]
fn bind_id_refusals_name_the_conflict() {
    for (opts, want) in [
        ("  bind 127.0.0.1:1 id 4\n  bind 127.0.0.1:2 id 4\n", "'id' : custom id 4 already used at "),
        ("  bind 127.0.0.1:1,127.0.0.1:2 id 4\n", "'id' can only be used with a single socket"),
        ("  bind 127.0.0.1:1 id 0\n", "'id' : custom id has to be > 0"),
        ("  bind 127.0.0.1:1 id x\n", "'id' : expects an integer argument, found 'x'"),
        ("  bind 127.0.0.1:1 maxconn -1\n", "'maxconn' : invalid value -1, must be >= 0"),
        ("  bind 127.0.0.1:1 nice 2000\n", "'nice' : invalid value 2000, allowed range is -1024..1024"),
        ("  bind 127.0.0.1:1 interface\n", "'interface' : missing interface name"),
    ] {
        let cfg = format!("defaults\n  mode http\nfrontend fe\n{opts}");
        for bin in binaries("bind_id_refusals_name_the_conflict") {
            let out = rampart_testkit::check(&bin, &cfg);
            assert_ne!(out.code, 0, "{}: {cfg}", name(&bin));
            if bin == binary() {
                assert!(out.stderr.contains(want), "{cfg}\n{}", out.stderr);
            }
        }
    }
}

const BIND_MAXCONN_CFG: &str = "\
global\n  nbthread 2\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
frontend fe\n  bind fd@${fe1} maxconn 1\n\
  http-request return status 200 content-type text/plain string ok\n";

#[test]
fn bind_maxconn_keeps_the_next_connection_waiting() {
    for bin in binaries("bind_maxconn_keeps_the_next_connection_waiting") {
        let who = name(&bin);
        let proxy = start_binary(&bin, BIND_MAXCONN_CFG, &[]);
        let mut first = client(&proxy);
        first.send("GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        assert_eq!(first.read_response().unwrap().status, 200, "{who}");
        // the second connection waits in the backlog while the first stays open
        let mut second = client(&proxy);
        second.send("GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").unwrap();
        second.set_read_timeout(Duration::from_millis(600)).unwrap();
        assert!(second.read_response().is_err(), "{who}: served past the listener's maxconn");
        drop(first);
        second.set_read_timeout(Duration::from_secs(3)).unwrap();
        assert_eq!(second.read_response().unwrap().status, 200, "{who}: served once the first closed");
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn bind_interface_and_transparent_set_the_listening_socket() {
    // as root (the test runs as root in CI); HAProxy binds the same way
    for bin in binaries("bind_interface_and_transparent_set_the_listening_socket") {
        let who = name(&bin);
        let port = free_port();
        let cfg = format!(
            "global\n  nbthread 1\ndefaults\n  mode http\n  timeout client 2s\n  timeout server 2s\n  timeout connect 1s\n\
             frontend fe\n  bind 127.0.0.1:{port} interface lo transparent\n\
             http-request return status 200 content-type text/plain string ok\n"
        );
        let _proxy = start_binary(&bin, &cfg, &[]);
        let got = talk(
            SocketAddr::from(([127, 0, 0, 1], port)),
            b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
            false,
        );
        assert!(got.starts_with("HTTP/1.1 200 "), "{who}: {got}");
    }
    // an interface that does not exist: rampart refuses to start (HAProxy warns and
    // listens on every interface)
    let port = free_port();
    let err = rampart_testkit::Proxy::new(binary())
        .config(&format!(
            "defaults\n  mode http\n  timeout client 2s\n  timeout server 2s\n  timeout connect 1s\n\
             frontend fe\n  bind 127.0.0.1:{port} interface nosuchif0\n\
             http-request return status 200 content-type text/plain string ok\n"
        ))
        .start()
        .err()
        .expect("must not start");
    let rampart_testkit::StartError::Exited { output, .. } = err else { panic!("{err}") };
    assert!(
        output.contains(&format!("cannot bind receiver to device 'nosuchif0' (No such device) for [127.0.0.1:{port}]")),
        "{output}"
    );
}

#[test]
fn bind_nice_is_accepted_with_a_warning() {
    let cfg = "defaults\n  mode http\n  timeout client 2s\n  timeout server 2s\n  timeout connect 1s\n\
               frontend fe\n  bind 127.0.0.1:1 nice 100\n  http-request return status 200\n";
    for bin in binaries("bind_nice_is_accepted_with_a_warning") {
        let out = rampart_testkit::check(&bin, cfg);
        assert_eq!(out.code, 0, "{}: {}", name(&bin), out.stderr);
        if bin == binary() {
            assert!(out.stderr.contains("'nice' is accepted but has no effect in rampart ("), "{}", out.stderr);
        }
    }
}

const SERVER_OPTS_CFG: &str = "\
global\n  nbthread 1\n\
defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
listen fe1\n  bind fd@${fe1}\n  balance roundrobin\n  default-server backup tfo\n\
  server s1 ${s1_addr}:${s1_port} no-backup\n  server s2 ${s2_addr}:${s2_port}\n\
  server s3 ${s3_addr}:${s3_port} no-backup no-tfo\n";

#[test]
fn no_backup_and_tfo_on_servers_as_haproxy() {
    for bin in binaries("no_backup_and_tfo_on_servers_as_haproxy") {
        let who = name(&bin);
        let (s1, s2, s3) = (HttpBackend::start("s1"), HttpBackend::start("s2"), HttpBackend::start("s3"));
        let proxy = start_binary(&bin, SERVER_OPTS_CFG, &[("s1", s1.addr()), ("s2", s2.addr()), ("s3", s3.addr())]);
        let mut c = client(&proxy);
        let mut got = servers_of(&mut c, 4);
        got.sort();
        // s2 stays a backup (of default-server); s1 and s3 are active
        assert_eq!(got, ["s1", "s1", "s3", "s3"], "{who}");
        assert!(s2.requests().is_empty(), "{who}");
    }
}

const HTTP_LENS_CFG: &str = "\
global\n  nbthread 1\n  tune.http.logurilen 12\n  tune.http.cookielen 5\n\
defaults\n  mode http\n  timeout client 2s\n  timeout server 2s\n  timeout connect 1s\n\
listen fe\n  bind fd@${fe}\n  log stdout format raw local0\n  capture cookie sid len 32\n\
  log-format \"uri=%r cc=%CC\"\n  server s1 ${s1_addr}:${s1_port}\n";

#[test]
fn tune_http_logurilen_and_cookielen_cut_what_logs_keep() {
    for bin in binaries("tune_http_logurilen_and_cookielen_cut_what_logs_keep") {
        let who = name(&bin);
        let s1 = HttpBackend::start("s1");
        let proxy = start_with(&bin, HTTP_LENS_CFG, &["fe"], &[("s1", s1.addr())]);
        let got = talk(
            proxy.addr("fe"),
            b"GET /abcdefghijklmnop HTTP/1.1\r\nhost: x\r\ncookie: sid=abcdefgh\r\nconnection: close\r\n\r\n",
            false,
        );
        assert!(got.starts_with("HTTP/1.1 200 "), "{who}: {got}");
        assert!(proxy.wait_output("uri=", Duration::from_secs(3)), "{who}: {}", proxy.output());
        let out = proxy.output();
        let line = out.lines().find(|l| l.contains("uri=")).unwrap_or_default().to_owned();
        assert!(line.ends_with("uri=GET /abcdefg cc=sid=a"), "{who}: {out}");
        // the capture's own length is cut to the global one, with HAProxy's warning
        let cfg = HTTP_LENS_CFG.replace("fd@${fe}", "127.0.0.1:1").replace("${s1_addr}:${s1_port}", "127.0.0.1:2");
        let check = rampart_testkit::check(&bin, &cfg);
        assert!(
            check.stderr.contains("truncating capture length to 5 bytes for proxy 'fe'."),
            "{who}: {}",
            check.stderr
        );
    }
}

const PROXY_HDR_CFG: &str = "\
global\n  nbthread 1\n\
userlist ul\n  user bob insecure-password secret\n\
defaults\n  mode http\n  timeout client 2s\n  timeout server 2s\n  timeout connect 1s\n\
frontend fe\n  bind fd@${fe}\n  option http-use-proxy-header\n\
  http-request auth realm r unless { http_auth(ul) }\n\
  http-request return status 200 content-type text/plain lf-string \"user=%[http_auth_user]\"\n";

/// Status, `www-authenticate`, `proxy-authenticate` and body of the answer to `req`.
fn auth_answer(addr: SocketAddr, req: &str) -> (u16, String, String, String) {
    let mut c = RawClient::connect(addr).expect("connect");
    c.send(req).unwrap();
    let r = c.read_response().unwrap();
    let h = |n: &str| r.headers.get_all(n).join("|");
    (r.status, h("www-authenticate"), h("proxy-authenticate"), String::from_utf8_lossy(&r.body).into_owned())
}

#[test]
fn http_use_proxy_header_asks_proxied_requests_with_a_407() {
    const BOB: &str = "Basic Ym9iOnNlY3JldA==";
    let reqs = [
        "GET http://x/ HTTP/1.1\r\nhost: x\r\n\r\n".to_owned(),
        format!("GET http://x/ HTTP/1.1\r\nhost: x\r\nproxy-authorization: {BOB}\r\n\r\n"),
        format!("GET http://x/ HTTP/1.1\r\nhost: x\r\nauthorization: {BOB}\r\n\r\n"),
        "GET / HTTP/1.1\r\nhost: x\r\n\r\n".to_owned(),
        format!("GET / HTTP/1.1\r\nhost: x\r\nauthorization: {BOB}\r\n\r\n"),
        format!("GET / HTTP/1.1\r\nhost: x\r\nproxy-authorization: {BOB}\r\n\r\n"),
    ];
    let mut seen = Vec::new();
    for bin in binaries("http_use_proxy_header_asks_proxied_requests_with_a_407") {
        let proxy = start_with(&bin, PROXY_HDR_CFG, &["fe"], &[]);
        seen.push(reqs.iter().map(|r| auth_answer(proxy.addr("fe"), r)).collect::<Vec<_>>());
    }
    let ours = &seen[0];
    let challenge = "Basic realm=\"r\"".to_owned();
    assert_eq!((ours[0].0, ours[0].2.clone(), ours[0].1.clone()), (407, challenge.clone(), String::new()));
    assert_eq!((ours[1].0, ours[1].3.as_str()), (200, "user=bob"));
    assert_eq!(ours[2].0, 407, "a proxied request's Authorization is not read");
    assert_eq!((ours[3].0, ours[3].1.clone(), ours[3].2.clone()), (401, challenge, String::new()));
    assert_eq!((ours[4].0, ours[4].3.as_str()), (200, "user=bob"));
    assert_eq!(ours[5].0, 401, "an origin request's Proxy-Authorization is not read");
    if let Some(theirs) = seen.get(1) {
        assert_eq!(ours, theirs, "rampart vs haproxy");
    }
}
