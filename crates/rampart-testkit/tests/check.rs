//! `check()` / `Proxy::check()` (`-c` runs) against the installed haproxy.

use rampart_testkit::{check, require_haproxy, Proxy};

#[test]
fn bad_config_exits_1_with_diagnostics() {
    let haproxy = require_haproxy!();
    let out = check(&haproxy, "frontend fe1\n  bind 127.0.0.1:8080\n  bogus on\n");
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stdout, "");
    let diags = out.diagnostics();
    assert_eq!(
        diags[0],
        "[ALERT]    (PID) : config : parsing [test.cfg:3] : unknown keyword 'bogus' in 'frontend' section"
    );
    assert!(diags.last().is_some_and(|l| l.ends_with("Fatal errors found in configuration.")), "{diags:?}");
}

#[test]
fn good_config_with_listener_exits_0() {
    let haproxy = require_haproxy!();
    let cfg = "defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n\
               frontend fe1\n  bind fd@${fe1}\n  default_backend be1\nbackend be1\n  server s1 ${s1_addr}:${s1_port}\n";
    let out =
        Proxy::new(&haproxy).listener("fe1").backend("s1", "127.0.0.1:9".parse().unwrap()).config(cfg).check().unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.trim(), "Configuration file is valid");
    assert!(out.diagnostics().is_empty(), "{out:?}");
}

#[test]
fn warnings_are_reported_but_do_not_fail() {
    let haproxy = require_haproxy!();
    // No timeouts: haproxy warns about missing client/server/connect timeouts.
    let out = check(&haproxy, "frontend fe1\n  mode http\n  bind 127.0.0.1:8080\n");
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.diagnostics().iter().any(|l| l.starts_with("[WARNING]  (PID) : config : missing timeouts")), "{out:?}");
}
