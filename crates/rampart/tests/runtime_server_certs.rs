//! A server's certificate and CA file across `del server` and `add server`, through
//! the stats socket of the real binary, compared answer by answer with HAProxy 2.6
//! (HAProxy's reg-test `ssl/dynamic_server_ssl` is the model): once the last server
//! presenting a `crt` is deleted, the certificate store is unused (`show ssl cert`:
//! `Status: Unused`; a commit names no user), and a server added later presents what
//! the store holds then (the committed certificate, not the file on disk), and
//! verifies with a CA file created at run time (`new ssl ca-file`). Also
//! `set server ... ssl on|off` closing the idle connections made before.

mod test_pki;

use std::path::PathBuf;

use rampart_testkit::{haproxy_or_skip, http_get, stats_command, Proxy, Running};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// The files both runs share: a CA, two client certificates it signs (`client1`,
/// `client2`), the TLS frontend's certificate.
struct Files {
    dir: PathBuf,
    client2: String,
    ca: String,
}

impl Files {
    /// `tag`: the test's own directory (the tests of the file run in parallel).
    fn new(tag: &str) -> Files {
        let dir = test_pki::fresh_dir(&format!("runtime-server-certs-{tag}"));
        let (ca, ca_key) = test_pki::ca("server certs CA");
        std::fs::write(dir.join("ca.crt"), ca.pem()).unwrap();
        std::fs::write(dir.join("site.pem"), test_pki::leaf_pem(&["localhost"], &ca, &ca_key)).unwrap();
        std::fs::write(dir.join("client1.pem"), test_pki::leaf_pem(&["client1"], &ca, &ca_key)).unwrap();
        let client2 = test_pki::leaf_pem(&["client2"], &ca, &ca_key);
        Files { dir, client2, ca: ca.pem() }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Servers that present `client1.pem` to a TLS frontend of the same process, which
/// answers with the common name of the certificate it was shown.
fn config(f: &Files) -> String {
    let (crt, ca, site) = (f.path("client1.pem"), f.path("ca.crt"), f.path("site.pem"));
    format!(
        "global\n  stats socket ${{testdir}}/admin.sock level admin\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 2s\n\
         frontend fe\n  bind fd@${{fe}}\n  default_backend test\n\
         backend test\n\
         \x20 server s1 ${{testdir}}/tls.sock ssl verify none crt {crt}\n\
         \x20 server s2 ${{testdir}}/tls.sock ssl verify none crt {crt}\n\
         \x20 server v1 ${{testdir}}/tls.sock ssl verify required ca-file {ca} crt {crt} sni str(localhost)\n\
         listen tls\n  bind ${{testdir}}/tls.sock ssl crt {site} ca-file {ca} verify optional\n\
         \x20 http-request return status 200 content-type text/plain lf-string \"cn=%[ssl_c_s_dn(CN)]\"\n"
    )
}

fn cli(proxy: &Running, input: &str) -> String {
    stats_command(&proxy.dir().join("admin.sock"), input)
}

/// What a request through `fe` gets: the status and the body.
fn get(proxy: &Running) -> String {
    let r = http_get(proxy.addr("fe"), "/");
    format!("{} {}", r.status, String::from_utf8_lossy(&r.body))
}

/// The `Status:` line of `show ssl cert <file>`.
fn cert_status(proxy: &Running, file: &str) -> String {
    let out = cli(proxy, &format!("show ssl cert {file}\n"));
    out.lines().find(|l| l.starts_with("Status:")).unwrap_or(&out).to_owned()
}

/// The story on `binary`: each command with its answer, the test directory and the
/// socket's directory written as `{dir}` and `{sock}`.
fn story(binary: impl Into<PathBuf>, f: &Files) -> Vec<String> {
    let proxy = Proxy::new(binary).listener("fe").config(&config(f)).start().expect("the proxy starts");
    let crt = f.path("client1.pem");
    let sock = proxy.dir().join("tls.sock").display().to_string();
    let mut out = Vec::new();
    let mut note = |what: &str, answer: String| {
        let clean = |s: &str| s.replace(&sock, "{sock}").replace(&f.dir.display().to_string(), "{dir}");
        out.push(format!("{} => {}", clean(what), clean(&answer)));
    };
    note("GET", get(&proxy));
    note("status", cert_status(&proxy, &crt));
    for cmd in ["disable server test/s1", "disable server test/s2", "del server test/s1", "del server test/s2"] {
        note(cmd, cli(&proxy, &format!("{cmd}\n")));
    }
    note("status while v1 presents it", cert_status(&proxy, &crt));
    let ca = f.path("ca.crt");
    note("del ssl ca-file (v1 uses it)", cli(&proxy, &format!("del ssl ca-file {ca}\n")));
    for cmd in ["disable server test/v1", "del server test/v1"] {
        note(cmd, cli(&proxy, &format!("{cmd}\n")));
    }
    note("status after the last del", cert_status(&proxy, &crt));
    note("set", cli(&proxy, &format!("set ssl cert {crt} <<\n{}\n", f.client2)));
    note("commit without users", cli(&proxy, &format!("commit ssl cert {crt}\n")));
    note("status after commit", cert_status(&proxy, &crt));
    let add = format!("add server test/s1 {sock} ssl verify none crt {crt}");
    note(&add, cli(&proxy, &format!("{add}\n")));
    note("status after add", cert_status(&proxy, &crt));
    note("enable", cli(&proxy, "enable server test/s1\n"));
    note("GET: the committed certificate", get(&proxy));
    note("set again", cli(&proxy, &format!("set ssl cert {crt} <<\n{}\n", f.client2)));
    note("commit with the added user", cli(&proxy, &format!("commit ssl cert {crt}\n")));
    // a CA file that only the runtime store knows, for a server added after it
    note("new", cli(&proxy, "new ssl ca-file rt_ca.crt\n"));
    note("set ca", cli(&proxy, &format!("set ssl ca-file rt_ca.crt <<\n{}\n", f.ca)));
    note("commit ca", cli(&proxy, "commit ssl ca-file rt_ca.crt\n"));
    let add = format!("add server test/v2 {sock} ssl verify required ca-file rt_ca.crt crt {crt} sni str(localhost)");
    note(&add, cli(&proxy, &format!("{add}\n")));
    for cmd in ["disable server test/s1", "enable server test/v2"] {
        note(cmd, cli(&proxy, &format!("{cmd}\n")));
    }
    note("GET through the server verifying with rt_ca.crt", get(&proxy));
    note("del ca while v2 uses it", cli(&proxy, "del ssl ca-file rt_ca.crt\n"));
    for cmd in ["disable server test/v2", "del server test/v2", "del ssl ca-file rt_ca.crt"] {
        note(cmd, cli(&proxy, &format!("{cmd}\n")));
    }
    out
}

#[test]
fn deleted_servers_free_their_certificate_and_added_ones_take_the_store_as_haproxy() {
    let f = Files::new("story");
    let ours = story(RAMPART, &f);
    // what HAProxy's reg-test checks, on rampart alone
    let at = |what: &str| ours.iter().find(|l| l.starts_with(what)).cloned().unwrap_or_default();
    assert_eq!(at("GET =>"), "GET => 200 cn=client1");
    assert_eq!(at("status after the last del"), "status after the last del => Status: Unused");
    assert_eq!(at("commit without users"), "commit without users => Committing {dir}/client1.pem\nSuccess!\n\n");
    assert_eq!(at("status after add"), "status after add => Status: Used");
    assert_eq!(at("GET: the committed"), "GET: the committed certificate => 200 cn=client2");
    assert_eq!(
        at("GET through the server verifying"),
        "GET through the server verifying with rt_ca.crt => 200 cn=client2"
    );
    let Some(haproxy) =
        haproxy_or_skip("deleted_servers_free_their_certificate_and_added_ones_take_the_store_as_haproxy")
    else {
        return;
    };
    assert_eq!(ours, story(haproxy, &f));
}

/// The connections the TLS frontend `tls` has open (`scur` of `show stat`): the
/// server connections of `test` it serves, idle ones included.
fn open_tls_conns(proxy: &Running) -> usize {
    let out = cli(proxy, "show stat\n");
    let header: Vec<&str> = out.lines().next().unwrap_or("").trim_start_matches("# ").split(',').collect();
    let scur = header.iter().position(|h| *h == "scur").expect("an scur column");
    out.lines()
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|f| f.first() == Some(&"tls") && f.get(1) == Some(&"FRONTEND"))
        .and_then(|f| f.get(scur)?.parse().ok())
        .unwrap_or(usize::MAX)
}

#[test]
fn set_server_ssl_closes_the_idle_connections_at_once() {
    let f = Files::new("idle");
    let proxy = Proxy::new(RAMPART).listener("fe").config(&config(&f)).start().expect("the proxy starts");
    for s in ["s2", "v1"] {
        cli(&proxy, &format!("disable server test/{s}\n"));
    }
    assert_eq!(get(&proxy), "200 cn=client1");
    // the server connection stays idle in the pool: the TLS frontend keeps it open
    assert_eq!(open_tls_conns(&proxy), 1, "one idle connection after a keep-alive exchange");
    assert_eq!(cli(&proxy, "set server test/s1 ssl on\n"), "server ssl setting updated.\n\n");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while open_tls_conns(&proxy) != 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // well before the 5 s idle purge
    assert_eq!(open_tls_conns(&proxy), 0, "the idle connection was closed by the change");
    assert_eq!(get(&proxy), "200 cn=client1", "a new connection serves the next request");
}
