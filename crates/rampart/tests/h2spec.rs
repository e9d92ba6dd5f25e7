//! h2spec (HTTP/2 conformance, github.com/summerwind/h2spec, built by
//! `scripts/h2spec/build-h2spec.sh`) against the binary: cleartext prior knowledge on a
//! `proto h2` bind and on a plain HTTP bind (the preface detected), and TLS with ALPN
//! `h2`, each also in strict mode (`-S`); the counts are those docs/COMPATIBILITY.md
//! gives. h2spec is `$RAMPART_H2SPEC`, else `h2spec` on `PATH`; without it the test is
//! skipped, or fails when `RAMPART_REQUIRE_H2SPEC=1` (CI).

mod http2_client;
mod http_common;
mod test_pki;

use std::path::PathBuf;
use std::process::Command;

use http_common::{binary, PREAMBLE};
use rampart_testkit::Proxy;

/// The h2spec binary, or `None` (the test is skipped) when it is not installed.
fn h2spec() -> Option<PathBuf> {
    let path = std::env::var_os("RAMPART_H2SPEC").map(PathBuf::from).or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).map(|d| d.join("h2spec")).find(|p| p.is_file())
    });
    if path.is_none() {
        let required = std::env::var_os("RAMPART_REQUIRE_H2SPEC").is_some_and(|v| v == "1");
        assert!(!required, "h2spec is not installed (scripts/h2spec/build-h2spec.sh) and RAMPART_REQUIRE_H2SPEC=1");
        eprintln!("SKIPPED h2spec: not installed (scripts/h2spec/build-h2spec.sh, or set RAMPART_H2SPEC)");
    }
    path
}

/// h2spec's summary line (`146 tests, 145 passed, 1 skipped, 0 failed`) and the ids of
/// the failed cases.
fn run(h2spec: &PathBuf, args: &[&str], port: u16) -> (String, Vec<String>) {
    let out = Command::new(h2spec)
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-o", "2"])
        .args(args)
        .output()
        .expect("h2spec runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let summary = text.lines().rev().find(|l| l.contains(" tests, ")).unwrap_or_default().trim().to_owned();
    // after "Failures:", each failed case as `× 2: ...` under its section (`3.5. ...`)
    let (mut section, mut failed) = (String::new(), Vec::new());
    for line in text.split_once("Failures:").map_or("", |(_, f)| f).lines().map(str::trim) {
        if let Some(case) = line.strip_prefix("× ").and_then(|l| l.split_once(':')).map(|(n, _)| n) {
            failed.push(format!("{section}/{case}"));
        } else if let Some((num, _)) =
            line.split_once(". ").filter(|(n, _)| n.chars().all(|c| c.is_ascii_digit() || c == '.'))
        {
            section = num.to_owned();
        }
    }
    (summary, failed)
}

#[test]
fn h2spec_passes_over_cleartext_and_tls() {
    let Some(h2spec) = h2spec() else { return };
    let dir = test_pki::fresh_dir("h2spec");
    let (ca, ca_key) = test_pki::ca("Rampart h2spec CA");
    let crt = dir.join("a.pem");
    std::fs::write(&crt, test_pki::leaf_pem(&["a.test"], &ca, &ca_key)).unwrap();
    let cfg = format!(
        "{PREAMBLE}frontend fe\n  bind fd@${{h2c}} proto h2\n  bind fd@${{plain}}\n  \
         bind fd@${{tls}} ssl crt {} alpn h2,http/1.1\n  \
         http-request return status 200 content-type text/plain string ok\n",
        crt.display()
    );
    let proxy = Proxy::new(binary())
        .listener("h2c")
        .listener("plain")
        .listener("tls")
        .config(&cfg)
        .start()
        .expect("the proxy starts");
    let port = |name| proxy.addr(name).port();
    // (listener, h2spec arguments, summary, failed cases)
    let cases: [(&str, &[&str], &str, &[&str]); 5] = [
        ("h2c", &[], "146 tests, 145 passed, 1 skipped, 0 failed", &[]),
        ("h2c", &["-S"], "147 tests, 146 passed, 1 skipped, 0 failed", &[]),
        ("tls", &["-t", "-k"], "146 tests, 145 passed, 1 skipped, 0 failed", &[]),
        ("tls", &["-t", "-k", "-S"], "147 tests, 146 passed, 1 skipped, 0 failed", &[]),
        // as haproxy 2.6: an invalid preface on a bind that also serves HTTP/1 is
        // answered as HTTP/1 (a 400), not with a GOAWAY
        ("plain", &[], "146 tests, 144 passed, 1 skipped, 1 failed", &["3.5/2"]),
    ];
    for (listener, args, summary, failed) in cases {
        let (got, got_failed) = run(&h2spec, args, port(listener));
        let got_failed: Vec<&str> = got_failed.iter().map(String::as_str).collect();
        assert_eq!((got.as_str(), got_failed.as_slice()), (summary, failed), "h2spec {args:?} on {listener}");
    }
    assert!(!proxy.output().contains("panicked"), "{}", proxy.output());
}

/// A frame that is a stream error from its header alone (a PRIORITY frame of 6 bytes,
/// RFC 9113 §6.3) whose payload comes in a later read: the stream is reset once the
/// frame is whole, the connection goes on (the server once panicked, skipping past
/// the bytes it had).
#[test]
fn a_stream_error_frame_split_across_reads_is_skipped_whole() {
    use rampart_proto::h2::ErrorCode;
    let cfg = format!(
        "{PREAMBLE}frontend fe\n  bind fd@${{h2c}} proto h2\n  \
         http-request return status 200 content-type text/plain string ok\n"
    );
    let proxy = Proxy::new(binary()).listener("h2c").config(&cfg).start().expect("the proxy starts");
    let mut c = http2_client::H2Client::connect(proxy.addr("h2c"));
    // PRIORITY, length 6, stream 1: the header and 2 payload bytes, then the rest
    c.send(&[0, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
    std::thread::sleep(std::time::Duration::from_millis(200));
    c.send(&[0, 0, 0, 0]);
    let wait = std::time::Duration::from_secs(5);
    c.get(3, "/");
    let events = c.until_end(3, wait);
    assert_eq!(http2_client::body_of(&events, 3), b"ok", "the connection goes on: {events:?}");
    let bad = |e: &http2_client::Event| {
        matches!(e, http2_client::Event::GoAway { .. } | http2_client::Event::Reset { id: 3, .. })
    };
    assert!(!events.iter().any(bad), "{events:?}");
    let reset = http2_client::Event::Reset { id: 1, code: ErrorCode::FrameSizeError };
    assert!(events.contains(&reset), "stream 1 is reset: {events:?}");
    assert!(!proxy.output().contains("panicked"), "{}", proxy.output());
}
