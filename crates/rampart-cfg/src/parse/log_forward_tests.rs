use std::time::Duration;

use crate::model::ListenAddr;
use crate::parse::tests::{alerts, parse, parse_ok};

/// The configuration of HAProxy's reg-test log/log_forward.vtc, but its `ring@` target.
const VTC: &str = "log-forward syslog2tcp\n  dgram-bind 127.0.0.1:1514\n  log 127.0.0.1:9 local0\n\
                   log-forward syslog2local\n  bind 127.0.0.1:2514\n  log 127.0.0.1:9 local0\n";

#[test]
fn sections_as_the_reg_test_writes_them() {
    let cfg = parse_ok(VTC);
    let [a, b] = &cfg.log_forwards[..] else { panic!("{:?}", cfg.log_forwards) };
    assert_eq!(a.name, "syslog2tcp");
    assert_eq!(a.dgram_binds[0].addrs, ["127.0.0.1:1514".parse().unwrap()]);
    assert!(a.binds.is_empty());
    assert_eq!(a.logs[0].args, ["127.0.0.1:9", "local0"]);
    assert_eq!(b.binds[0].addrs, [ListenAddr::Inet("127.0.0.1:2514".parse().unwrap())]);
    assert_eq!((b.maxconn, b.backlog, b.timeout_client), (10, 0, None), "HAProxy's defaults");
    assert!(cfg.proxies.is_empty());
}

#[test]
fn every_keyword_of_the_section() {
    let cfg = parse_ok(
        "global\n log 127.0.0.1:9 local1\nlog-forward lf\n dgram-bind udp@127.0.0.1:1514,ipv4@127.0.0.1:1515 name u\n\
         \x20dgram-bind udp6@[::1]:1516\n bind 127.0.0.1:2514 name t backlog 5 tfo tcp-ut 2s\n maxconn 3\n backlog 7\n\
         \x20timeout client 1500ms\n log global\n log 127.0.0.1:9 len 2048 format rfc5424 local0 info\n no log\n\
         \x20log 127.0.0.1:10 local2\n",
    );
    let lf = &cfg.log_forwards[0];
    assert_eq!(lf.dgram_binds[0].addrs.len(), 2);
    assert_eq!(lf.dgram_binds[0].name.as_deref(), Some("u"));
    assert_eq!(lf.dgram_binds[1].addrs, ["[::1]:1516".parse().unwrap()]);
    let b = &lf.binds[0];
    assert_eq!((b.name.as_deref(), b.backlog, b.tfo, b.tcp_ut), (Some("t"), Some(5), true, Some(2000)));
    assert_eq!((lf.maxconn, lf.backlog), (3, 7));
    assert_eq!(lf.timeout_client, Some(Duration::from_millis(1500)));
    assert_eq!(lf.logs.len(), 1, "'no log' forgot the lines before it");
    assert_eq!(lf.logs[0].args, ["127.0.0.1:10", "local2"]);
    assert_eq!(parse_ok("log-forward a\n bind :1\n log global\n").log_forwards[0].logs[0].args, ["global"]);
}

#[test]
fn header_errors_worded_as_haproxy() {
    assert_eq!(alerts("log-forward\n"), ["missing name for ip-forward section."]);
    assert_eq!(alerts("log-forward a b\n"), ["'log-forward' cannot handle unexpected argument 'b'."]);
    assert_eq!(alerts("log-forward a/b\n"), ["character '/' is not permitted in 'log-forward' name 'a/b'."]);
    let all = |text: &str| -> Vec<String> { parse(text).1.list.into_iter().map(|d| d.message).collect() };
    assert!(all("frontend a\n bind :8000\nlog-forward a\n bind :1\n").contains(
        &"Parsing [t.cfg:3]: log forward section 'a' has the same name as frontend 'a' declared at t.cfg:1.".into()
    ));
    assert!(all("log-forward a\n bind :1\nlog-forward a\n bind :2\n").contains(
        &"Parsing [t.cfg:3]: log-forward section 'a' has the same name as another log-forward section declared at \
          t.cfg:1."
            .into()
    ));
    let (_, diags) = parse("log-forward x\n log 127.0.0.1:9 local0\n");
    let msgs: Vec<&str> = diags.list.iter().map(|d| d.message.as_str()).collect();
    assert!(
        msgs.contains(&"frontend 'x' has no 'bind' directive. Please declare it as a backend if this was intended."),
        "{msgs:?}"
    );
}

#[test]
fn line_errors_worded_as_haproxy() {
    let one = |line: &str| alerts(&format!("log-forward x\n {line}\n"));
    assert_eq!(
        one("dgram-bind 127.0.0.1:1514 foo"),
        ["unknown keyword 'foo' in 'log-forward' section; did you mean 'tfo' maybe ?"]
    );
    assert_eq!(one("dgram-bind 127.0.0.1:1514 name"), ["'name' : missing name"]);
    assert_eq!(one("dgram-bind foo:1"), ["'dgram-bind foo:1' : invalid address: 'foo' in 'foo:1'"]);
    assert_eq!(one("dgram-bind 127.0.0.1"), ["'dgram-bind 127.0.0.1' : missing port specification in '127.0.0.1'"]);
    assert_eq!(
        one("bind 127.0.0.1:2515 bogus"),
        ["'bind 127.0.0.1:2515' in section 'log-forward': unknown keyword 'bogus'."]
    );
    assert_eq!(one("bind 127.0.0.1"), ["'bind' : missing port specification in '127.0.0.1'"]);
    assert_eq!(one("log"), ["log : expects <address> and <facility> or global as arguments"]);
    assert_eq!(one("log 127.0.0.1 local9"), ["log : unknown log facility 'local9'"]);
    assert_eq!(one("maxconn"), ["'maxconn' expects an integer argument."]);
    assert_eq!(one("backlog"), ["'backlog' expects an integer argument."]);
    assert_eq!(one("maxconn 10 20"), ["'maxconn' cannot handle unexpected argument '20'."]);
    assert_eq!(one("timeout server 1s"), ["unknown keyword 'timeout server' in log-forward section."]);
    assert_eq!(one("timeout client"), ["missing timeout client value."]);
    assert_eq!(one("timeout client 1x"), ["timeout : unexpected character 'x' in 'timeout client'"]);
    assert_eq!(one("frobnicate"), ["unknown keyword 'frobnicate' in log-forward section."]);
}

#[test]
fn tls_bind_lines_keep_their_tls_options() {
    let cfg = parse_ok(
        "log-forward x\n bind 127.0.0.1:2514 ssl crt a.pem verify required ca-file ca.pem ssl-min-ver TLSv1.3\n \
         bind 127.0.0.1:2515\n",
    );
    let binds = &cfg.log_forwards[0].binds;
    let ssl = binds[0].ssl.as_deref().expect("ssl");
    assert!(ssl.enabled);
    assert_eq!(ssl.crts, [std::path::PathBuf::from("a.pem")]);
    assert_eq!(ssl.ca_file, Some(std::path::PathBuf::from("ca.pem")));
    assert!(binds[1].ssl.as_deref().is_none_or(|s| !s.enabled));
}

#[test]
fn what_rampart_does_not_do_yet_is_refused() {
    let one = |line: &str| alerts(&format!("log-forward x\n {line}\n"));
    assert_eq!(
        one("bind 127.0.0.1:2514 accept-proxy"),
        ["'bind 127.0.0.1:2514' in section 'log-forward' : 'accept-proxy' is not supported yet"]
    );
    assert_eq!(
        one("bind 127.0.0.1:2514 ssl crt a.pem generate-certificates"),
        ["'bind 127.0.0.1:2514' in section 'log-forward' : 'generate-certificates' is not supported yet"]
    );
    assert_eq!(
        one("bind 127.0.0.1:2514 ssl crt a.pem alpn h2"),
        ["'bind 127.0.0.1:2514' in section 'log-forward' : 'alpn' is not supported yet"]
    );
    assert_eq!(
        one("bind unix@/tmp/x.sock"),
        ["'bind unix@/tmp/x.sock' in section 'log-forward' : 'unix@' addresses are not supported yet"]
    );
    assert_eq!(
        one("dgram-bind 127.0.0.1:1514 interface lo"),
        ["'dgram-bind 127.0.0.1:1514' : 'interface' is not supported yet"]
    );
    assert_eq!(one("dgram-bind uxdg@/tmp/x"), ["'dgram-bind uxdg@/tmp/x' : 'uxdg@' addresses are not supported yet"]);
    assert_eq!(one("dgram-bind fd@3"), ["'dgram-bind fd@3' : 'fd@' addresses are not supported yet"]);
    assert_eq!(one("log ring@buf local0").len(), 0, "the target is resolved by the daemon");
}
