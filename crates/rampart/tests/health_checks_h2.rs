//! HTTP health checks over HTTP/2 through the real binary: a server's `proto h2`
//! inherited by `option httpchk`, `check-proto h2` on an HTTP/1 server line, `http-check
//! connect proto h2`; a frame-level HTTP/2 server (`h2_server`) records each check's
//! request and answers with the status the test sets. The server goes DOWN and comes
//! back UP as haproxy 2.6 has it: the same `show stat` columns, the same request
//! fields, the same log lines, for the same events.

mod h2_server;
mod http_common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use h2_server::{Answer, H2Server};
use http_common::binary;
use rampart_testkit::{haproxy_or_skip, patience, socat, Proxy, Running};

const DEFAULTS: &str = "global\n stats socket ${testdir}/admin.sock level admin\n\
    defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n";

/// An HTTP/2 server answering every request with the status in `status`.
fn server(status: &Arc<AtomicU16>) -> H2Server {
    let st = status.clone();
    H2Server::start(100, move |_| {
        let code = st.load(Ordering::SeqCst);
        Answer { status: code, body: vec![b"ok".to_vec()], ..Answer::default() }.field("content-length", "2")
    })
}

fn start(bin: &Path, srv: &H2Server, body: &str) -> Running {
    Proxy::new(bin)
        .listener("fe1")
        .backend("s1", srv.addr())
        .config(&format!("{DEFAULTS}{body}"))
        .start()
        .expect("the proxy starts")
}

/// The `show stat` row of `be/srv` as a column -> value map (`None` while the socket
/// does not answer yet).
fn stat_row(sock: &Path, row: &str) -> Option<HashMap<String, String>> {
    let out = socat(sock, "show stat\n");
    let mut lines = out.lines();
    let header: Vec<String> = lines.next()?.trim_start_matches("# ").split(',').map(str::to_owned).collect();
    let line = lines.find(|l| l.starts_with(&format!("{},", row.replace('/', ","))))?;
    Some(header.into_iter().zip(line.split(',').map(str::to_owned)).collect())
}

/// Whether the check columns of a `show stat` row have settled: no check is running
/// (haproxy shows the last result with a `* ` prefix while the next check runs, and
/// its code as 0 then) and an HTTP status result has its code.
fn settled(r: &HashMap<String, String>) -> bool {
    let (Some(st), Some(code)) = (r.get("check_status"), r.get("check_code")) else { return false };
    // L7RSP, L7TOUT ... carry no code
    let coded = matches!(st.as_str(), "L7OK" | "L7OKC" | "L7STS");
    !st.starts_with("* ") && (!coded || !(code.is_empty() || code == "0"))
}

/// The check columns of `be/srv` once its `status` column reads `want` and its check
/// columns have settled (see [`settled`]): sampling a proxy mid-check would compare a
/// transitional state.
fn wait_status(proxy: &Running, row: &str, want: &str) -> Vec<String> {
    let sock = proxy.dir().join("admin.sock");
    let deadline = Instant::now() + patience() * 2;
    loop {
        let r = stat_row(&sock, row).unwrap_or_default();
        if r.get("status").is_some_and(|s| s == want) && settled(&r) {
            let cols = ["status", "check_status", "check_code", "check_desc", "last_chk", "chkdown"];
            return cols.iter().map(|c| format!("{c}={}", r[*c])).collect();
        }
        assert!(Instant::now() < deadline, "{row} never {want}: {r:?}\n{}", proxy.output());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The fields of the last request the server got, as `name=value`.
fn last_request(srv: &H2Server) -> Vec<String> {
    let seen = srv.wait_requests(1);
    let last = seen.last().expect("a check reached the server");
    last.fields.iter().map(|(n, v)| format!("{n}={v}")).collect()
}

/// Up, then down on 503, then up again: the check columns at each step, the last
/// request's fields, and the check log lines.
fn up_down_up(bin: &Path, server_line: &str, backend: &str) -> (Vec<Vec<String>>, Vec<String>, Vec<String>) {
    let status = Arc::new(AtomicU16::new(200));
    let srv = server(&status);
    let cfg = format!(
        "frontend fe1\n bind fd@${{fe1}}\n default_backend b\n\
         backend b\n{backend} server s1 ${{s1_addr}}:${{s1_port}} {server_line} check inter 100ms rise 1 fall 1\n"
    );
    let proxy = start(bin, &srv, &cfg);
    let mut steps = vec![wait_status(&proxy, "b/s1", "UP")];
    let fields = last_request(&srv);
    status.store(503, Ordering::SeqCst);
    steps.push(wait_status(&proxy, "b/s1", "DOWN"));
    status.store(200, Ordering::SeqCst);
    steps.push(wait_status(&proxy, "b/s1", "UP"));
    let logs = proxy
        .output()
        .lines()
        .filter(|l| l.contains("Server b/s1"))
        .map(|l| l.split(") : ").last().unwrap_or(l).split(", check duration").next().unwrap_or(l).to_owned())
        .collect();
    (steps, fields, logs)
}

const HTTPCHK: &str = " option httpchk GET /health HTTP/1.1\n http-check send hdr host h.test hdr x-check yes\n";

#[test]
fn a_servers_proto_h2_is_inherited_by_its_http_checks() {
    let (steps, fields, logs) = up_down_up(&binary(), "proto h2", HTTPCHK);
    assert_eq!(steps[1][..3], ["status=DOWN", "check_status=L7STS", "check_code=503"], "{steps:?}");
    assert_eq!(steps[2][..3], ["status=UP", "check_status=L7OK", "check_code=200"], "{steps:?}");
    // as haproxy 2.6: the Host of an origin-form request as a `host` field
    assert_eq!(fields[..4], [":method=GET", ":scheme=https", ":path=/health", "host=h.test"], "{fields:?}");
    assert!(fields.contains(&"x-check=yes".to_owned()), "{fields:?}");
    assert!(!fields.iter().any(|f| f.starts_with("connection=") || f.starts_with(":authority=")), "{fields:?}");
    assert!(logs.iter().any(|l| l.contains("is DOWN")), "{logs:?}");
}

#[test]
fn check_proto_h2_and_connect_proto_h2_speak_http2_to_the_server() {
    let (steps, fields, _) = up_down_up(&binary(), "check-proto h2", HTTPCHK);
    assert_eq!(steps[1][..3], ["status=DOWN", "check_status=L7STS", "check_code=503"], "{steps:?}");
    assert_eq!(fields[0], ":method=GET");
    // an HTTP/1.1 request line without a host (reg-test checks/http-check.vtc): no
    // `:authority`
    let (steps, fields, _) = up_down_up(&binary(), "check-proto h2", " option httpchk GET /status HTTP/1.1\n");
    assert_eq!(steps[0][..3], ["status=UP", "check_status=L7OK", "check_code=200"], "{steps:?}");
    assert_eq!(fields, [":method=GET", ":scheme=https", ":path=/status"]);
    let rules = " option httpchk\n http-check connect proto h2\n http-check send meth HEAD uri /x\n \
                 http-check expect status 200\n";
    let (steps, fields, _) = up_down_up(&binary(), "", rules);
    assert_eq!(steps[0][..3], ["status=UP", "check_status=L7OK", "check_code=200"], "{steps:?}");
    assert_eq!(fields[..3], [":method=HEAD", ":scheme=https", ":path=/x"], "{fields:?}");
}

/// Without `check-proto` nor `proto h2`, an HTTP check speaks HTTP/1: the HTTP/2
/// server refuses it and the server stays DOWN (as in haproxy).
#[test]
fn an_http1_check_against_an_http2_server_fails() {
    let status = Arc::new(AtomicU16::new(200));
    let srv = server(&status);
    let cfg = format!("frontend fe1\n bind fd@${{fe1}}\n default_backend b\nbackend b\n{HTTPCHK} server s1 ${{s1_addr}}:${{s1_port}} check inter 100ms rise 1 fall 1\n");
    let proxy = start(&binary(), &srv, &cfg);
    let cols = wait_status(&proxy, "b/s1", "DOWN");
    assert!(cols[1].starts_with("check_status=L7"), "{cols:?}");
}

#[test]
fn an_incompatible_check_proto_is_refused_at_startup() {
    let srv = server(&Arc::new(AtomicU16::new(200)));
    for body in [
        "backend b\n option httpchk\n server s1 ${s1_addr}:${s1_port} check check-proto none\n",
        "backend b\n server s1 ${s1_addr}:${s1_port} check check-proto h2\n",
    ] {
        let err = Proxy::new(binary())
            .backend("s1", srv.addr())
            .config(&format!("{DEFAULTS}{body}"))
            .start()
            .err()
            .expect("refused");
        let text = format!("{err:?}");
        assert!(
            text.contains("backend 'b': server 's1' uses an incompatible MUX protocol for the selected check type"),
            "{text}"
        );
    }
}

/// Request fields in sorted order.
fn sorted(fields: &[String]) -> Vec<String> {
    let mut out = fields.to_vec();
    out.sort();
    out
}

/// The same events through haproxy 2.6 and rampart: the same check columns at each
/// step, the same request fields, the same state lines.
#[test]
fn http2_checks_match_haproxy() {
    let Some(haproxy) = haproxy_or_skip("http2_checks_match_haproxy") else { return };
    let bare = " option httpchk GET /status HTTP/1.1\n";
    for (line, rules) in [("proto h2", HTTPCHK), ("check-proto h2", HTTPCHK), ("check-proto h2", bare)] {
        let ours = up_down_up(&binary(), line, rules);
        let theirs = up_down_up(&haproxy, line, rules);
        assert_eq!(ours.0, theirs.0, "check columns with {line}");
        // both send the Host of the origin-form request as a `host` field, and
        // `:scheme https` on cleartext
        assert_eq!(sorted(&ours.1), sorted(&theirs.1), "request fields with {line}");
        assert!(theirs.1.contains(&":scheme=https".to_owned()) && ours.1.contains(&":scheme=https".to_owned()));
        assert_eq!(ours.2, theirs.2, "state lines with {line}");
    }
}

/// What [`wait_status`] waits for: a row sampled mid-check is not settled.
#[test]
fn a_row_sampled_mid_check_is_not_settled() {
    let row = |st: &str, code: &str| -> HashMap<String, String> {
        [("check_status", st), ("check_code", code)].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    assert!(!settled(&row("* L7OK", "0")));
    assert!(!settled(&row("* L7OK", "200")));
    assert!(!settled(&row("L7OK", "0")));
    assert!(!settled(&row("L7STS", "")));
    assert!(settled(&row("L7OK", "200")));
    assert!(settled(&row("L7STS", "503")));
    assert!(settled(&row("L4CON", "")));
    assert!(settled(&row("L7RSP", "")));
    assert!(!settled(&HashMap::new()));
}
