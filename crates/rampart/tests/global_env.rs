//! `setenv`, `presetenv`, `unsetenv` and `resetenv` in `global`, through the binary: the
//! lines after them expand the new values (a quoted `"${NAME}"`, a `bind` address) and
//! the running process reads them with `env()`. The expectations are HAProxy 2.6.12's
//! (`RAMPART_TEST_BINARY=/usr/sbin/haproxy` runs the file against it).
//! HAProxy counterpart: the same keywords in src/cfgparse-global.c.

mod netutil;

use std::net::SocketAddr;

use rampart_testkit::http_get;

fn answer(extra_env: &[(&str, &str)], global: &str) -> String {
    let port = netutil::free_port();
    let mut proxy = netutil::proxy();
    for (k, v) in extra_env {
        proxy = proxy.env(k, v);
    }
    let cfg = format!(
        "global\n  setenv RP_PORT {port}\n{global}\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         frontend fe\n  bind 127.0.0.1:$RP_PORT\n\
         \x20 http-request return status 200 content-type text/plain lf-string \
         \"new=%[env(RP_NEW)] pre=%[env(RP_PRE)] drop=%[env(RP_DROP)] keep=%[env(RP_KEEP)] \
         path=%[env(PATH),length] q=${{RP_NEW}}\"\n"
    );
    let _p = proxy.config(&cfg).start().expect("proxy starts");
    let resp = http_get(SocketAddr::from(([127, 0, 0, 1], port)), "/");
    assert_eq!(resp.status, 200);
    String::from_utf8(resp.body).unwrap()
}

#[test]
fn setenv_presetenv_unsetenv() {
    let env = [("RP_PRE", "outer"), ("RP_DROP", "gone"), ("RP_KEEP", "kept")];
    let global =
        "  setenv RP_NEW \"a b\"\n  presetenv RP_PRE inner\n  presetenv RP_KEEP2 x\n  unsetenv RP_DROP RP_NONE\n";
    let body = answer(&env, global);
    let path_len = std::env::var("PATH").map_or(0, |p| p.len());
    assert_eq!(body, format!("new=a b pre=outer drop= keep=kept path={path_len} q=a b"));
}

#[test]
fn resetenv_keeps_only_the_names_given() {
    let env = [("RP_PRE", "outer"), ("RP_DROP", "gone"), ("RP_KEEP", "kept")];
    let global = "  resetenv RP_KEEP RP_PORT\n  setenv RP_NEW n\n  presetenv RP_PRE inner\n";
    let body = answer(&env, global);
    assert_eq!(body, "new=n pre=inner drop= keep=kept path= q=n");
}
