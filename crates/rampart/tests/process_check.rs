//! `-c` on TCP-mode configurations: the exit code (0 valid, 1 errors, 2 no listener)
//! and what is printed on stdout, for every keyword the TCP, listener and process tests
//! use, each case also run through haproxy when it is installed. HAProxy counterpart:
//! haproxy.c (MODE_CHECK), cfgparse*.c.

mod netutil;

use rampart_testkit::{check, haproxy_or_skip, CheckOutput};

/// `(name, expected exit code, configuration)`.
const CASES: &[(&str, i32, &str)] = &[
    (
        "tcp listen",
        0,
        "defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind 127.0.0.1:8001\n  server s1 127.0.0.1:9001\n",
    ),
    (
        "every keyword the tcp tests use",
        0,
        "global\n  maxconn 100\n  nbthread 2\n  hard-stop-after 5s\n  user nobody\n  gid 65534\n\
         defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         timeout client-fin 1s\n  timeout server-fin 1s\n  timeout tunnel 1h\n  timeout queue 2s\n  retries 3\n\
         frontend fe\n  bind 127.0.0.1:8001\n  bind *:8002\n  bind :8003,127.0.0.1:8004\n  bind 127.0.0.1:8010-8012\n\
         bind ipv4@:8005\n  bind [::1]:8006\n  bind :::8007\n  bind ipv6@::1:8008\n  bind unix@/tmp/fe.sock\n\
         bind /tmp/fe2.sock\n  maxconn 10\n  default_backend be\n\
         backend be\n  balance roundrobin\n  server s1 127.0.0.1:9001 weight 3 maxconn 1\n  server s2 127.0.0.1:9002\n",
    ),
    (
        "backend only: no listener",
        2,
        "defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         backend be\n  server s1 127.0.0.1:9001\n",
    ),
    (
        "unknown keyword",
        1,
        "defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind 127.0.0.1:8001\n  tiemout client 1s\n  server s1 127.0.0.1:9001\n",
    ),
    (
        "bad bind address",
        1,
        "defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind 999.0.0.1:8001\n  server s1 127.0.0.1:9001\n",
    ),
    (
        "bad port range",
        1,
        "defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind 127.0.0.1:8003-8001\n  server s1 127.0.0.1:9001\n",
    ),
    (
        "bad timeout",
        1,
        "defaults\n  mode tcp\n  timeout client 5parsecs\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind 127.0.0.1:8001\n  server s1 127.0.0.1:9001\n",
    ),
    (
        "unknown user",
        1,
        "global\n  user no-such-user-r4mp\n\
         defaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind 127.0.0.1:8001\n  server s1 127.0.0.1:9001\n",
    ),
    (
        "missing timeouts: a warning only",
        0,
        "defaults\n  mode tcp\n\
         listen fe1\n  bind 127.0.0.1:8001\n  server s1 127.0.0.1:9001\n",
    ),
    (
        "http frontend to a tcp backend",
        1,
        "defaults\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         frontend fe\n  mode http\n  bind 127.0.0.1:8001\n  default_backend be\n\
         backend be\n  mode tcp\n  server s1 127.0.0.1:9001\n",
    ),
    ("named defaults also used implicitly: an alert that does not fail", 0, NAMED_DEFAULTS_MIXED),
];

const NAMED_DEFAULTS_MIXED: &str =
    "defaults d1\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
     frontend fe from d1\n  bind 127.0.0.1:8001\n  default_backend be\n\
     backend be\n  server s1 127.0.0.1:9001\n";

/// HAProxy 2.6 prints `[ALERT]` for a named `defaults` used both by `from` and
/// implicitly (cfgparse-listen.c, `ERR_WARN` only), and the configuration stays valid
/// without "Warnings were found.".
#[test]
fn named_defaults_used_implicitly_is_a_non_fatal_alert() {
    let out = check(netutil::binary(), NAMED_DEFAULTS_MIXED);
    assert_eq!((out.code, out.stdout.as_str()), (0, "Configuration file is valid\n"), "{}", show(&out));
    let alert = out.stderr.lines().find(|l| l.starts_with("[ALERT]")).unwrap_or_default();
    assert!(
        alert.contains(":9] : defaults section 'd1' (declared at ") && alert.contains("implicitly used here"),
        "{}",
        show(&out)
    );
}

fn show(out: &CheckOutput) -> String {
    format!("exit {}\nstdout: {}\nstderr: {}", out.code, out.stdout, out.stderr)
}

#[test]
fn check_exit_codes() {
    for (name, code, cfg) in CASES {
        let ours = check(netutil::binary(), cfg);
        assert_eq!(ours.code, *code, "{name}\n{}", show(&ours));
    }
}

#[test]
fn check_answers_like_haproxy() {
    let Some(haproxy) = haproxy_or_skip("check_answers_like_haproxy") else { return };
    for (name, _, cfg) in CASES {
        let ours = check(netutil::binary(), cfg);
        let theirs = check(&haproxy, cfg);
        assert_eq!(ours.code, theirs.code, "{name}\nrampart {}\nhaproxy {}", show(&ours), show(&theirs));
        assert_eq!(ours.stdout, theirs.stdout, "{name}\nrampart {}\nhaproxy {}", show(&ours), show(&theirs));
    }
}

/// One `-c` run lists every refusal of a file, each with its line: several options of
/// one `bind` or `server` line, `cluster-secret`, invalid `stats socket` options, and
/// what only the runtime refuses (`http-request set-priority-class`, checks of `unix@` servers) even though parsing
/// already failed.
#[test]
fn one_check_run_reports_every_refusal() {
    if rampart_testkit::testing_another_binary() {
        eprintln!("note: rampart-specific messages, skipped against another binary");
        return;
    }
    let cfg = "global\n  cluster-secret abc\n  stats socket /tmp/rampart-every.sock level bogus\n\
               defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n\
               frontend fe\n  bind 127.0.0.1:18080 accept-netscaler-cip 1 tfo\n  tcp-request content set-priority-class int(1)\n  default_backend be\n\
               backend be\n  server s1 unix@/tmp/rampart-every-s.sock check\n  server s2 127.0.0.1:1 tcp-ut 5s weight 999\n";
    let out = check(netutil::binary(), cfg);
    assert_eq!(out.code, 1, "{}", show(&out));
    let alerts: Vec<String> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("[ALERT]"))
        .map(|l| l.split_once(" : config : ").map_or(l, |(_, m)| m).replace(".cfg:", ".cfg#"))
        .map(|l| {
            l.split_once("parsing [").map_or(l.clone(), |(_, m)| m.split_once('#').map_or(m, |(_, n)| n).to_string())
        })
        .collect();
    assert_eq!(
        alerts,
        [
            "2] : 'cluster-secret' is not supported yet",
            "3] : 'stats socket' : ''level' only supports 'user', 'operator', and 'admin' (got 'bogus')'",
            "10] : 'bind 127.0.0.1:18080' in section 'frontend' : 'accept-netscaler-cip' is not supported yet",
            "15] : 'server be/s2' : 'tcp-ut' is not supported yet",
            "15] : 'server be/s2' : weight of server s2 is not within 0 and 256 (999)..",
            "11] : 'tcp-request content set-priority-class' is not supported yet (TCP streams carry no queue priority yet)",
            "14] : health checks of unix socket servers are not supported yet",
            "Error(s) found in configuration file : test.cfg",
            "Fatal errors found in configuration.",
        ],
        "{}",
        show(&out)
    );
}

/// Features kept but not done yet (logs, the runtime API) are named by one warning
/// each, at the first line using them, however many lines use them; health checks run
/// and warn about nothing.
#[test]
fn kept_features_warn_once_each() {
    if rampart_testkit::testing_another_binary() {
        eprintln!("note: rampart-specific messages, skipped against another binary");
        return;
    }
    let cfg = "global\n  log 127.0.0.1 local0\n  stats socket /tmp/rampart-warn.sock mode 600 level admin\n\
               defaults\n  mode tcp\n  log global\n  option tcplog\n  timeout client 1s\n  timeout server 1s\n\
               timeout connect 1s\n  timeout check 1s\n\
               listen fe\n  bind 127.0.0.1:18081 name a\n  bind 127.0.0.1:18082 name b\n\
               server s1 127.0.0.1:1 check inter 1s\n  server s2 127.0.0.1:2 check\n";
    let out = check(netutil::binary(), cfg);
    assert_eq!(out.code, 0, "{}", show(&out));
    let warnings: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("[WARNING]")).collect();
    let count = |what: &str| warnings.iter().filter(|l| l.contains(what)).count();
    assert_eq!(count("health checks"), 0, "{}", show(&out));
    // logs are sent since issue 7: no warning about them
    assert_eq!(count("logs are not sent yet"), 0, "{}", show(&out));
    assert_eq!(warnings.len(), 0, "{warnings:?}");
    assert_eq!(out.stdout, "Configuration file is valid\n");
}

/// A fetch or converter HAProxy 2.6 has and rampart lacks is refused as not supported
/// yet, naming it (docs/COMPATIBILITY.md, "Sample fetches" lists them); a word HAProxy
/// does not know either keeps HAProxy's "unknown fetch method".
#[test]
fn haproxy_fetches_rampart_lacks_are_named() {
    if rampart_testkit::testing_another_binary() {
        eprintln!("note: rampart-specific messages, skipped against another binary");
        return;
    }
    let cfg = "defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n\
               frontend fe\n  bind 127.0.0.1:18083\n\
               \x20 http-request deny if { req.hdr(x),aes_gcm_dec(128,a,b,c) -m found }\n\
               \x20 http-request set-header x %[src,debug]\n\
               \x20 http-request set-header y %[nosuch_fetch]\n  default_backend be\n\
               backend be\n  server s1 127.0.0.1:1\n";
    let out = check(netutil::binary(), cfg);
    assert_eq!(out.code, 1, "{}", show(&out));
    let alerts: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("[ALERT]")).collect();
    assert!(
        alerts.iter().any(|l| l.contains(":8] : ") && l.contains("'aes_gcm_dec' is not supported yet")),
        "{}",
        show(&out)
    );
    assert!(
        alerts.iter().any(|l| l.contains(":9] : ") && l.contains("'debug' is not supported yet")),
        "{}",
        show(&out)
    );
    assert!(
        alerts.iter().any(|l| l.contains(":10] : ") && l.contains("unknown fetch method 'nosuch_fetch'")),
        "{}",
        show(&out)
    );
}

/// A server argument without its backend in a named `defaults` section's rule is
/// refused, the message naming the `defaults` section as the expression's proxy, as
/// HAProxy 2.6 does (reg-test `startup/default_rules`, case h15).
#[test]
fn a_server_argument_in_named_defaults_must_name_its_backend() {
    let cfg = "defaults invalid\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n  \
               http-request set-header x-test \"%[srv_conn(www)]\"\n\
               backend be from invalid\n  server www 127.0.0.1:80\n";
    let msg = "backend name must be set in arg 1 of sample fetch keyword 'srv_conn' in http-request expression in \
               proxy 'invalid'.";
    let mut binaries = vec![netutil::binary()];
    binaries.extend(haproxy_or_skip("a_server_argument_in_named_defaults_must_name_its_backend"));
    for b in binaries {
        let out = check(b, cfg);
        assert_ne!(out.code, 0, "{}", show(&out));
        assert!(out.stderr.contains(msg), "{}", show(&out));
    }
}
