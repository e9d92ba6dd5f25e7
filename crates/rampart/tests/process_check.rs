//! `-c` on TCP-mode configurations: the exit code (0 valid, 1 errors, 2 no listener)
//! and what is printed on stdout, for every keyword the TCP, listener and process tests
//! use, each case also run through haproxy when it is installed. HAProxy counterpart:
//! haproxy.c (MODE_CHECK), cfgparse*.c.

mod netutil;

use rampart_testkit::{check, haproxy_path, CheckOutput};

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
];

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
    let Some(haproxy) = haproxy_path() else {
        eprintln!("SKIPPED: haproxy is not installed");
        return;
    };
    for (name, _, cfg) in CASES {
        let ours = check(netutil::binary(), cfg);
        let theirs = check(&haproxy, cfg);
        assert_eq!(ours.code, theirs.code, "{name}\nrampart {}\nhaproxy {}", show(&ours), show(&theirs));
        assert_eq!(ours.stdout, theirs.stdout, "{name}\nrampart {}\nhaproxy {}", show(&ours), show(&theirs));
    }
}
