//! The differential runner, with haproxy standing in for both binaries (rampart does not
//! proxy yet): identical runs must compare equal once normalized, and a real difference
//! must be reported.

use std::cell::Cell;
use std::io::ErrorKind;

use rampart_testkit::{haproxy_path, Differential, HttpBackend, RawClient, Reply, Response, Seen};

const CFG: &str = "\
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 1s
listen fe1
  bind fd@${fe1}
  http-response set-header X-Port ${fe1_port}
  server s1 ${s1_addr}:${s1_port}
";

fn get_twice(proxy: &rampart_testkit::Running) -> Vec<Result<Response, ErrorKind>> {
    let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
    (0..2).map(|i| c.get(&format!("/{i}")).map_err(|e| e.kind())).collect()
}

#[test]
fn identical_runs_compare_equal_after_normalizing() {
    let Some(haproxy) = haproxy_path() else { return eprintln!("note: haproxy not installed, skipped") };
    // X-Port carries the listener port, which differs between the two runs.
    let diff = Differential::new(&haproxy)
        .listener("fe1")
        .backend("s1", || HttpBackend::builder("s1").reply(Reply::ok().header("Date", "now").body("x")).start())
        .config(CFG)
        .ignore_header("x-port");
    let cmp = diff.run(get_twice).expect("haproxy is installed");
    cmp.assert_same();

    let responses: Vec<Response> = cmp.haproxy.client.iter().map(|r| r.clone().unwrap()).collect();
    assert_eq!(responses.len(), 2);
    assert!(!responses[0].headers.contains("x-port"), "ignored headers are removed");
    assert_eq!(responses[0].headers.get("date"), Some("now"), "other headers are kept");
    assert!(!String::from_utf8_lossy(&responses[0].raw).contains("x-port"));
    let Seen::Http(requests) = &cmp.rampart.servers[0].1 else { panic!("an HttpBackend sees HTTP") };
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].peer.port(), 0, "peer ports are normalized");
}

#[test]
fn a_difference_is_reported() {
    let Some(haproxy) = haproxy_path() else { return eprintln!("note: haproxy not installed, skipped") };
    // Each run gets a fresh backend; the second one answers differently.
    let runs = Cell::new(0);
    let diff =
        Differential::new(&haproxy).listener("fe1").config(CFG).ignore_header("x-port").backend("s1", move || {
            runs.set(runs.get() + 1);
            HttpBackend::builder("s1").reply(Reply::ok().body(format!("run {}", runs.get()))).start()
        });
    let cmp = diff.run(get_twice).expect("haproxy is installed");
    assert!(!cmp.same_client());
    assert!(cmp.same_servers(), "both backends saw the same requests");
    let panic = std::panic::catch_unwind(|| cmp.assert_same()).expect_err("assert_same must fail");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.starts_with("differential: client views differ"), "{message}");
    assert!(message.contains("b\"run 1\"") && message.contains("b\"run 2\""), "{message}");
}

#[test]
fn check_runs_both_binaries() {
    let Some(haproxy) = haproxy_path() else { return eprintln!("note: haproxy not installed, skipped") };
    let diff = Differential::new(&haproxy).config("frontend fe1\n  bind 127.0.0.1:8080\n  nonsense\n");
    let (reference, tested) = diff.check().expect("haproxy is installed");
    assert_eq!((reference.code, tested.code), (1, 1));
    assert_eq!(reference.diagnostics(), tested.diagnostics());
}
