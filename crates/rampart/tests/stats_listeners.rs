//! `option socket-stats`: a `show stat` row per listener (type 3, HAProxy's "socket"
//! rows, named `sock-<n>` or by `bind ... name`) with its own connection and byte
//! counters, next to the FRONTEND row; compared with haproxy on the same configuration.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rampart_testkit::{haproxy_or_skip, Proxy, Running};

const CFG: &str = "global\n  stats socket ${testdir}/admin.sock level admin\n\
                   defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
                   option socket-stats\n\
                   frontend fe\n  bind fd@${a}\n  bind fd@${b} name named\n\
                     http-request return status 200 content-type text/plain string ok\n\
                   frontend quiet\n  no option socket-stats\n  bind fd@${c}\n\
                     http-request return status 200\n";

fn start(binary: &Path) -> Running {
    let proxy = Proxy::new(binary).listener("a").listener("b").listener("c").config(CFG).start().expect("starts");
    let admin = proxy.dir().join("admin.sock");
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && std::os::unix::net::UnixStream::connect(&admin).is_err() {
        std::thread::sleep(Duration::from_millis(20));
    }
    proxy
}

fn cli(proxy: &Running, cmd: &str) -> String {
    let target = format!("unix-connect:{}", proxy.dir().join("admin.sock").display());
    let mut child = Command::new("socat")
        .args(["-t", "5", "stdio", &target])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("socat runs");
    child.stdin.take().expect("stdin").write_all(format!("{cmd}\n").as_bytes()).expect("write");
    String::from_utf8_lossy(&child.wait_with_output().expect("socat ends").stdout).into_owned()
}

/// One request on its own connection; the bytes of the answer.
fn request(proxy: &Running, listener: &str) -> usize {
    let mut c = std::net::TcpStream::connect(proxy.addr(listener)).expect("connect");
    c.write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").expect("send");
    let mut got = Vec::new();
    c.read_to_end(&mut got).expect("read");
    assert!(got.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&got));
    got.len()
}

/// `show stat` rows keyed by `pxname/svname`.
fn stat(proxy: &Running) -> HashMap<String, HashMap<String, String>> {
    let out = cli(proxy, "show stat");
    let mut lines = out.lines();
    let header: Vec<String> =
        lines.next().expect("header").trim_start_matches("# ").split(',').map(str::to_owned).collect();
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let row: HashMap<String, String> = header.iter().cloned().zip(l.split(',').map(str::to_owned)).collect();
            (format!("{}/{}", row["pxname"], row["svname"]), row)
        })
        .collect()
}

/// The listener rows of `show stat typed`, values left out: `L.<iid>.<sid>.<pos>.<name>.1:<tags>`.
fn listener_shape(proxy: &Running) -> Vec<String> {
    let out = cli(proxy, "show stat typed");
    out.lines().filter(|l| l.starts_with("L.")).map(|l| l.rsplit_once(':').expect("typed line").0.to_owned()).collect()
}

/// What one run saw: `show stat` rows by `proxy/name` (field -> value), the listener
/// rows' shape, the bytes of the two answers on listener `a`, and its address.
type Seen = (HashMap<String, HashMap<String, String>>, Vec<String>, usize, String);

fn run(binary: &Path) -> Seen {
    let proxy = start(binary);
    let answer = request(&proxy, "a") + request(&proxy, "a");
    request(&proxy, "c");
    std::thread::sleep(Duration::from_millis(100));
    let addr = proxy.addr("a").to_string();
    (stat(&proxy), listener_shape(&proxy), answer, addr)
}

#[test]
fn each_listener_has_its_own_row_and_counters() {
    let (rows, _, answer, addr) = run(Path::new(env!("CARGO_BIN_EXE_rampart")));
    let li = &rows["fe/sock-1"];
    for (col, want) in [
        ("type", "3"),
        ("sid", "1"),
        ("stot", "2"),
        ("scur", "0"),
        ("smax", "1"),
        ("slim", "0"),
        ("status", "OPEN"),
        ("mode", "http"),
        ("dcon", "0"),
        ("addr", addr.as_str()),
    ] {
        assert_eq!(li[col], want, "{col} of fe/sock-1: {li:?}");
    }
    assert_eq!(li["bout"], answer.to_string(), "the bytes both answers took");
    assert!(li["bin"].parse::<u64>().expect("bin") > 0);
    let named = &rows["fe/named"];
    assert_eq!((named["sid"].as_str(), named["stot"].as_str(), named["bout"].as_str()), ("2", "0", "0"));
    assert_eq!(rows["fe/FRONTEND"]["stot"], "2");
    // `no option socket-stats`: the frontend row alone
    assert!(!rows.keys().any(|k| k.starts_with("quiet/") && k != "quiet/FRONTEND"), "{:?}", rows.keys());
}

#[test]
fn listener_rows_have_haproxys_fields_and_values() {
    let Some(haproxy) = haproxy_or_skip("listener_rows_have_haproxys_fields_and_values") else { return };
    let (ours, our_shape, _, _) = run(Path::new(env!("CARGO_BIN_EXE_rampart")));
    let (theirs, their_shape, _, _) = run(&haproxy);
    for key in ["fe/sock-1", "fe/named"] {
        // not `smax`: on a loaded machine haproxy may accept the second connection
        // before it has closed the first (2 where rampart says 1 in one run); the test
        // above asserts rampart's value
        for col in ["type", "sid", "stot", "scur", "slim", "status", "mode", "dcon", "dses", "iid"] {
            assert_eq!(ours[key][col], theirs[key][col], "{key} {col}");
        }
    }
    // the bytes (each its own answer's): all of the frontend's went through sock-1
    for rows in [&ours, &theirs] {
        assert_eq!(rows["fe/sock-1"]["bout"], rows["fe/FRONTEND"]["bout"]);
        assert_eq!(rows["fe/sock-1"]["bin"], rows["fe/FRONTEND"]["bin"]);
    }
    let mut keys: Vec<_> = ours.keys().collect();
    let mut their_keys: Vec<_> = theirs.keys().collect();
    keys.sort();
    their_keys.sort();
    assert_eq!(keys, their_keys, "the same rows");
    // every field rampart fills is one haproxy fills, at the same position with the
    // same tags; the counters rampart does not keep per listener are empty (documented)
    let missing: Vec<_> = their_shape.iter().filter(|f| !our_shape.contains(f)).map(|f| f.split('.').nth(4)).collect();
    assert!(our_shape.iter().all(|f| their_shape.contains(f)), "ours: {our_shape:?}\ntheirs: {their_shape:?}");
    let per_listener = ["dreq", "dresp", "ereq", "wrew", "eint"];
    assert_eq!(missing.len(), 2 * per_listener.len(), "{missing:?}");
    assert!(missing.iter().all(|m| m.is_some_and(|m| per_listener.contains(&m))), "{missing:?}");
}
