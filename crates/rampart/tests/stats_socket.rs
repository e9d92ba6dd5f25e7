//! The runtime API on `stats socket`, driven with `socat` as operators script it: real
//! traffic first, then the counters `show stat` and `show info` report; levels, prompt
//! mode, a TCP socket, the unix socket's mode. Then rampart against haproxy: the field
//! names and order of `show info`, the `show stat` header and the shape of its rows.
//! Finally Debian's prometheus-haproxy-exporter reading rampart's CSV on the socket, and
//! `promtool check metrics` on what it exports (skipped, visibly, when not installed).
//!
//! Set `RAMPART_TEST_BINARY=/usr/sbin/haproxy` to check the first group against HAProxy.

mod netutil;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rampart_testkit::{haproxy_or_skip, http_get, HttpBackend, Proxy, Running};

const CFG: &str = "global\n  stats socket ${testdir}/admin.sock mode 600 level admin\n\
                     stats socket ${testdir}/user.sock level user\n  stats timeout 5s\n\
                   defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
                   frontend fe1\n  bind fd@${fe1}\n  http-request deny if { path /deny }\n  default_backend be1\n\
                   backend be1\n  server s1 ${s1_addr}:${s1_port}\n  server s2 ${s1_addr}:${s1_port} disabled\n";

/// Starts the proxy and waits until its admin socket answers (haproxy may bind it a
/// little after the startup window on a loaded machine).
fn start(binary: &Path, cfg: &str, s1: &HttpBackend) -> Running {
    let proxy =
        Proxy::new(binary).listener("fe1").backend("s1", s1.addr()).config(cfg).start().expect("the proxy starts");
    let admin = proxy.dir().join("admin.sock");
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if std::os::unix::net::UnixStream::connect(&admin).is_ok() {
            CLI_CONNS.with(|c| c.set(c.get() + 1));
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    proxy
}

thread_local! {
    /// Connections this test made to a stats socket (HAProxy counts them in `CumConns`).
    static CLI_CONNS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// What the socket at `addr` (a path, or `tcp:host:port`) answers to `input`.
fn socat(addr: &str, input: &str) -> String {
    let target = if addr.starts_with("tcp:") { addr.to_owned() } else { format!("unix-connect:{addr}") };
    let mut child = Command::new("socat")
        .args(["-t", "5", "stdio", &target])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("socat runs (apt-get install socat)");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write to socat");
    CLI_CONNS.with(|c| c.set(c.get() + 1));
    let out = child.wait_with_output().expect("socat ends");
    if !out.stderr.is_empty() {
        eprintln!("socat {target}: {}", String::from_utf8_lossy(&out.stderr));
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A loopback port nothing listens on now (for a listener the child binds itself).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}

fn sock(proxy: &Running, name: &str) -> String {
    proxy.dir().join(name).display().to_string()
}

/// `show stat` as rows keyed by `pxname/svname`, each a map from column to value.
fn stat(proxy: &Running) -> HashMap<String, HashMap<String, String>> {
    let out = socat(&sock(proxy, "admin.sock"), "show stat\n");
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().expect("a header").trim_start_matches("# ").split(',').collect();
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            let row: HashMap<String, String> =
                header.iter().zip(&cells).map(|(h, c)| ((*h).to_owned(), (*c).to_owned())).collect();
            (format!("{}/{}", cells[0], cells[1]), row)
        })
        .collect()
}

/// `show info` as a map.
fn info(proxy: &Running) -> HashMap<String, String> {
    let out = socat(&sock(proxy, "admin.sock"), "show info\n");
    out.lines().filter_map(|l| l.split_once(": ")).map(|(k, v)| (k.to_owned(), v.to_owned())).collect()
}

fn get(row: &HashMap<String, String>, col: &str) -> String {
    row.get(col).cloned().unwrap_or_else(|| panic!("no column {col}"))
}

#[test]
fn show_stat_counts_the_traffic_by_frontend_backend_and_server() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&netutil::binary(), CFG, &s1);
    for _ in 0..3 {
        assert_eq!(http_get(proxy.addr("fe1"), "/").status, 200);
    }
    assert_eq!(http_get(proxy.addr("fe1"), "/deny").status, 403);
    // the last exchange is counted once the client has its response: wait for it
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut rows = stat(&proxy);
    while get(&rows["fe1/FRONTEND"], "req_tot") != "4" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        rows = stat(&proxy);
    }
    let fe = &rows["fe1/FRONTEND"];
    assert_eq!(get(fe, "req_tot"), "4");
    assert_eq!(get(fe, "hrsp_2xx"), "3");
    assert_eq!(get(fe, "hrsp_4xx"), "1");
    assert_eq!(get(fe, "hrsp_5xx"), "0");
    assert_eq!(get(fe, "dreq"), "1");
    assert_eq!(get(fe, "stot"), "4");
    assert_eq!(get(fe, "status"), "OPEN");
    assert_eq!(get(fe, "mode"), "http");
    let be = &rows["be1/BACKEND"];
    assert_eq!(get(be, "req_tot"), "3");
    assert_eq!(get(be, "hrsp_2xx"), "3");
    assert_eq!(get(be, "hrsp_4xx"), "0");
    assert_eq!(get(be, "stot"), "3");
    assert_eq!((get(be, "status").as_str(), get(be, "act").as_str(), get(be, "weight").as_str()), ("UP", "1", "1"));
    let srv = &rows["be1/s1"];
    assert_eq!(get(srv, "hrsp_2xx"), "3");
    assert_eq!((get(srv, "lbtot").as_str(), get(be, "lbtot").as_str()), ("3", "3"));
    assert_eq!(get(srv, "status"), "no check");
    assert_eq!(get(srv, "addr"), s1.addr().to_string());
    assert!(get(srv, "stot").parse::<u64>().unwrap() >= 1);
    assert_eq!(get(&rows["be1/s2"], "status"), "MAINT");
    // bytes: every request went through the frontend, three through the backend and s1
    let n = |row: &HashMap<String, String>, col: &str| get(row, col).parse::<u64>().expect(col);
    assert!(n(srv, "bin") >= 3 * 16 && n(srv, "bout") >= 3 * 17, "{srv:?}");
    assert_eq!((n(be, "bin"), n(be, "bout")), (n(srv, "bin"), n(srv, "bout")));
    assert!(n(fe, "bin") > n(be, "bin") && n(fe, "bout") > n(be, "bout"), "the 403 counts in the frontend only");
    assert_eq!((n(srv, "qcur"), n(srv, "qmax"), n(be, "qcur"), n(be, "qmax")), (0, 0, 0, 0));
    // each request to s1 took a new or a reused server connection
    assert_eq!(n(srv, "connect") + n(srv, "reuse"), 3, "{srv:?}");
    assert!(n(srv, "connect") >= 1);
    assert_eq!((n(be, "connect"), n(be, "reuse")), (n(srv, "connect"), n(srv, "reuse")));
    let info = info(&proxy);
    // the CLI connections count too, `show info`'s own included
    let cli_conns = CLI_CONNS.with(std::cell::Cell::get);
    assert_eq!(info["CumReq"], (4 + cli_conns).to_string());
    assert_eq!(info["CumConns"], (4 + cli_conns).to_string());
    assert_eq!(info["Pid"], proxy.pid().to_string());
}

#[test]
fn levels_prompt_and_several_commands_per_line() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&netutil::binary(), CFG, &s1);
    let user = sock(&proxy, "user.sock");
    assert_eq!(socat(&user, "show env\n"), "Permission denied\n\n");
    assert_eq!(socat(&user, "show cli level\n"), "user\n\n");
    let admin = sock(&proxy, "admin.sock");
    assert_eq!(socat(&admin, "show backend; show cli level\n"), "# name\nbe1\n\nadmin\n\n");
    assert_eq!(
        socat(&admin, "prompt\nshow backend\nuser\nshow cli level\nquit\n"),
        "\n> # name\nbe1\n\n> \n> user\n\n> "
    );
    let state = socat(&admin, "show servers state be1\n");
    assert!(state.starts_with("1\n# be_id be_name srv_id srv_name srv_addr "), "{state}");
    assert!(state.contains(" be1 1 s1 127.0.0.1 2 0 1 1 "), "{state}");
    assert_eq!(socat(&admin, "show servers state nope\n"), "Can't find backend.\n\n");
    assert_eq!(socat(&admin, "set timeout cli\n"), "Expects an integer value.\n\n");
    let mode = std::fs::metadata(&admin).map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777);
    assert_eq!(mode.ok(), Some(0o600));
}

#[test]
fn a_tcp_stats_socket_serves_too() {
    let s1 = HttpBackend::start("s1");
    let port = free_port();
    let cfg =
        CFG.replace("level user\n", &format!("level user\n  stats socket ipv4@127.0.0.1:{port} level operator\n"));
    let proxy = start(&netutil::binary(), &cfg, &s1);
    let out = socat(&format!("tcp:127.0.0.1:{port}"), "show cli level\n");
    assert_eq!(out, "operator\n\n");
    drop(proxy);
}

// === against haproxy ===

/// Columns rampart fills wherever haproxy does.
const FILLED: &[&str] = &["qcur", "qmax", "bin", "bout", "stot", "status", "connect", "reuse", "dresp"];

/// A `show stat` row: `pxname/svname` and which of its columns are filled.
type RowShape = (String, Vec<bool>);

/// `show info` field names, the `show stat` header, and each row's shape, from `binary`.
fn shape(binary: &Path) -> (Vec<String>, String, Vec<RowShape>) {
    let s1 = HttpBackend::start("s1");
    // a TCP proxy too: some columns are HTTP-only
    let cfg = format!("{CFG}listen tcp1\n  mode tcp\n  bind fd@${{fe2}}\n  server t1 ${{s1_addr}}:${{s1_port}}\n");
    let proxy = Proxy::new(binary)
        .listener("fe1")
        .listener("fe2")
        .backend("s1", s1.addr())
        .config(&cfg)
        .start()
        .expect("the proxy starts");
    let admin = proxy.dir().join("admin.sock");
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::os::unix::net::UnixStream::connect(&admin).is_err() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    http_get(proxy.addr("fe1"), "/");
    http_get(proxy.addr("fe2"), "/");
    let info = socat(&sock(&proxy, "admin.sock"), "show info\n");
    let names = info.lines().filter_map(|l| l.split_once(':')).map(|(k, _)| k.to_owned()).collect();
    let stat = socat(&sock(&proxy, "admin.sock"), "show stat\n");
    let mut lines = stat.lines();
    let header = lines.next().unwrap_or_default().to_owned();
    let rows = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (format!("{}/{}", cells[0], cells[1]), cells.iter().map(|c| !c.is_empty()).collect())
        })
        .collect();
    (names, header, rows)
}

#[test]
fn show_info_and_show_stat_have_haproxys_fields_in_its_order() {
    let Some(haproxy) = haproxy_or_skip("show_info_and_show_stat_have_haproxys_fields_in_its_order") else { return };
    let (h_info, h_header, h_rows) = shape(&haproxy);
    let (r_info, r_header, r_rows) = shape(Path::new(env!("CARGO_BIN_EXE_rampart")));
    assert_eq!(r_info, h_info);
    assert_eq!(r_header, h_header);
    let names = |rows: &[RowShape]| rows.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&r_rows), names(&h_rows));
    let cols: Vec<&str> = h_header.trim_start_matches("# ").split(',').collect();
    for ((name, r), (_, h)) in r_rows.iter().zip(&h_rows) {
        assert_eq!(r.len(), h.len(), "{name}: column count");
        // rampart leaves empty what it does not measure, and never fills a column
        // haproxy leaves empty for that kind of row
        let extra: Vec<&str> = (0..r.len()).filter(|&i| r[i] && !h[i]).map(|i| cols[i]).collect();
        assert!(extra.is_empty(), "{name}: columns filled by rampart only: {extra:?}");
        // and fills these wherever haproxy does
        let missing: Vec<&str> =
            (0..r.len()).filter(|&i| h[i] && !r[i] && FILLED.contains(&cols[i])).map(|i| cols[i]).collect();
        assert!(missing.is_empty(), "{name}: columns haproxy fills and rampart does not: {missing:?}");
    }
}

// === prometheus-haproxy-exporter ===

fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(tool)).find(|p| p.exists())
}

#[test]
fn prometheus_haproxy_exporter_reads_the_socket() {
    let (Some(exporter), Some(promtool)) = (which("prometheus-haproxy-exporter"), which("promtool")) else {
        println!("SKIPPED: prometheus-haproxy-exporter or promtool is not installed");
        return;
    };
    let s1 = HttpBackend::start("s1");
    let proxy = start(&netutil::binary(), CFG, &s1);
    http_get(proxy.addr("fe1"), "/");
    let port = free_port();
    let mut child = Command::new(exporter)
        .arg(format!("--haproxy.scrape-uri=unix:{}", sock(&proxy, "admin.sock")))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the exporter starts");
    let deadline = Instant::now() + Duration::from_secs(10);
    let metrics = loop {
        let body = rampart_testkit::RawClient::connect(format!("127.0.0.1:{port}").parse().unwrap())
            .and_then(|mut c| c.get("/metrics"))
            .map(|r| r.body_str())
            .unwrap_or_default();
        if body.contains("haproxy_up") || Instant::now() > deadline {
            break body;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = child.kill();
    let stderr = child.wait_with_output().map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_default();
    assert!(metrics.contains("haproxy_up 1"), "exporter output:\n{metrics}\nstderr:\n{stderr}");
    assert!(metrics.contains("haproxy_server_up{backend=\"be1\",server=\"s1\"}"), "{metrics}");
    assert!(metrics.contains("haproxy_frontend_http_responses_total{code=\"2xx\",frontend=\"fe1\"} 1"), "{metrics}");
    let mut check = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool runs");
    check.stdin.take().expect("stdin").write_all(metrics.as_bytes()).expect("write to promtool");
    let out = check.wait_with_output().expect("promtool ends");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "promtool check metrics failed:\n{text}");
    assert!(!text.contains("error"), "{text}");
}

#[test]
fn show_stat_counts_errors_and_retries() {
    let s1 = HttpBackend::start("s1");
    let dead = rampart_testkit::closed_port();
    let cfg = format!(
        "global\n  stats socket ${{testdir}}/admin.sock level admin\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n  retries 2\n\
         frontend fe1\n  bind fd@${{fe1}}\n  use_backend dead if {{ path /dead }}\n  default_backend be1\n\
         backend be1\n  server s1 ${{s1_addr}}:${{s1_port}}\n\
         backend dead\n  server d1 {dead}\n"
    );
    let proxy = start(&netutil::binary(), &cfg, &s1);
    assert_eq!(http_get(proxy.addr("fe1"), "/dead").status, 503);
    let mut c = rampart_testkit::RawClient::connect(proxy.addr("fe1")).expect("connect");
    c.send("GARBAGE\r\n\r\n").expect("send");
    assert_eq!(c.read_response().expect("a 400").status, 400);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut rows = stat(&proxy);
    while get(&rows["fe1/FRONTEND"], "ereq") != "1" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        rows = stat(&proxy);
    }
    let fe = &rows["fe1/FRONTEND"];
    assert_eq!((get(fe, "ereq").as_str(), get(fe, "hrsp_4xx").as_str(), get(fe, "hrsp_5xx").as_str()), ("1", "1", "1"));
    let (be, d1) = (&rows["dead/BACKEND"], &rows["dead/d1"]);
    assert_eq!((get(be, "econ").as_str(), get(be, "wretr").as_str(), get(be, "hrsp_5xx").as_str()), ("1", "2", "1"));
    assert_eq!((get(d1, "econ").as_str(), get(d1, "wretr").as_str()), ("1", "2"));
    assert_eq!(get(be, "eresp"), "0");
}

#[test]
fn set_maxconn_changes_the_limits_show_stat_and_show_info_report() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&netutil::binary(), CFG, &s1);
    let admin = sock(&proxy, "admin.sock");
    assert_eq!(socat(&sock(&proxy, "user.sock"), "set maxconn global 5\n"), "Permission denied\n\n");
    assert_eq!(socat(&admin, "set maxconn global 5; set maxconn frontend fe1 7\n"), "\n\n");
    assert_eq!(info(&proxy)["Maxconn"], "5");
    assert_eq!(get(&stat(&proxy)["fe1/FRONTEND"], "slim"), "7");
    assert_eq!(socat(&admin, "set maxconn frontend be1 5\n"), "No such frontend.\n\n");
    assert_eq!(socat(&admin, "set maxconn frontend fe1\n"), "Integer value expected.\n\n");
    assert_eq!(socat(&admin, "set maxconn global 999999999\n"), "Value out of range.\n\n");
    assert_eq!(http_get(proxy.addr("fe1"), "/").status, 200);
}

// === the statistics page ===

const PAGE_CFG: &str = "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
                        listen st\n  bind fd@${fe1}\n  stats enable\n  stats uri /st\n  stats refresh 5s\n\
                        stats auth admin:pw\n  stats realm Rlm\n  server s1 ${s1_addr}:${s1_port}\n";

fn page_get(proxy: &Running, method: &str, target: &str, auth: bool) -> rampart_testkit::Response {
    let mut c = rampart_testkit::RawClient::connect(proxy.addr("fe1")).expect("connect");
    // "admin:pw"
    let creds = if auth { "Authorization: Basic YWRtaW46cHc=\r\n" } else { "" };
    c.send(format!("{method} {target} HTTP/1.1\r\nHost: a\r\n{creds}Content-Length: 0\r\n\r\n")).expect("send");
    c.read_response().expect("a response")
}

#[test]
fn the_stats_page_asks_for_credentials_and_exports_csv_and_html() {
    let s1 = HttpBackend::start("s1");
    let proxy = Proxy::new(netutil::binary())
        .listener("fe1")
        .backend("s1", s1.addr())
        .config(PAGE_CFG)
        .start()
        .expect("the proxy starts");
    let r = page_get(&proxy, "GET", "/st", false);
    assert_eq!(r.status, 401);
    assert_eq!(r.headers.get("www-authenticate"), Some("Basic realm=\"Rlm\""));
    // the 401 is counted once its exchange ended: ask until it shows
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut asked = 1;
    let (r, rows, header) = loop {
        let r = page_get(&proxy, "GET", "/st;csv", true);
        asked += 1;
        let csv = r.body_str();
        let header: Vec<String> =
            csv.lines().next().unwrap_or_default().trim_start_matches("# ").split(',').map(String::from).collect();
        let rows: Vec<Vec<String>> = csv.lines().skip(1).map(|l| l.split(',').map(String::from).collect()).collect();
        let col = header.iter().position(|h| h == "hrsp_4xx").expect("hrsp_4xx");
        if rows.first().is_some_and(|f| f[col] == "1") || Instant::now() > deadline {
            break (r, rows, header);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(r.status, 200);
    assert_eq!(r.headers.get("content-type"), Some("text/plain"));
    assert_eq!(r.headers.get("cache-control"), Some("no-cache"));
    assert_eq!(r.headers.get("refresh"), Some("5"));
    let names: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(names, ["FRONTEND", "s1", "BACKEND"], "{rows:?}");
    let col = |name: &str| header.iter().position(|h| h == name).expect("column");
    // every request went through the page, the last one included
    assert_eq!(rows[0][col("intercepted")], asked.to_string(), "{rows:?}");
    assert_eq!(rows[0][col("hrsp_4xx")], "1", "{rows:?}");
    let r = page_get(&proxy, "GET", "/st;csv;norefresh", true);
    assert_eq!(r.headers.get("refresh"), None);
    let r = page_get(&proxy, "GET", "/st", true);
    assert_eq!((r.status, r.headers.get("content-type")), (200, Some("text/html")));
    assert!(r.body_str().contains("s1"), "{}", r.body_str());
    let r = page_get(&proxy, "POST", "/st", true);
    assert_eq!((r.status, r.headers.get("location")), (303, Some("/st;st=DENY")));
    // other paths go to the servers
    assert_eq!(page_get(&proxy, "GET", "/other", true).body_str(), "s1");
}

/// `stats show-modules`: an "Extra modules" column group, one column per statistics
/// module (ssl, h2, h1) whose cell lists the module's counters in a tooltip, on the
/// rows the module counts (frontends and backends for h1/h2; servers have ssl only).
#[test]
fn stats_show_modules_adds_the_module_columns_to_the_page() {
    let s1 = HttpBackend::start("s1");
    let cfg = PAGE_CFG.replace("stats realm Rlm\n", "stats realm Rlm\n  stats show-modules\n");
    let proxy =
        Proxy::new(netutil::binary()).listener("fe1").backend("s1", s1.addr()).config(&cfg).start().expect("starts");
    let html = page_get(&proxy, "GET", "/st", true).body_str();
    assert!(html.contains("<th colspan=\"3\">Extra modules</th>"), "{html}");
    assert!(html.contains("<th>ssl</th><th>h2</th><th>h1</th></tr>"), "{html}");
    let fe_row = html.lines().find(|l| l.starts_with("<tr class=\"frontend")).expect("a frontend row");
    assert!(
        fe_row.contains("<u>h1<div class=\"tips\"><table class=\"det\"><tr><th>h1_open_connections</th><td>"),
        "{fe_row}"
    );
    assert!(fe_row.contains("<tr><th>h2_headers_rcvd</th><td>0</td></tr>"), "{fe_row}");
    let srv_row = html.lines().find(|l| l.starts_with("<tr class=\"server")).expect("a server row");
    assert!(srv_row.contains("<u>ssl<div") && srv_row.ends_with("<td></td><td></td></tr>"), "{srv_row}");
    // without the keyword, no such column
    let plain =
        Proxy::new(netutil::binary()).listener("fe1").backend("s1", s1.addr()).config(PAGE_CFG).start().unwrap();
    assert!(!page_get(&plain, "GET", "/st", true).body_str().contains("Extra modules"));
}

// === prometheus-exporter service ===

const PROM_CFG: &str = "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
                        frontend fe1\n  bind fd@${fe1}\n\
                        http-request use-service prometheus-exporter if { path /metrics }\n  default_backend be1\n\
                        backend be1\n  server s1 ${s1_addr}:${s1_port}\n  server s2 ${s1_addr}:${s1_port} disabled\n";

/// The `/metrics` text of `binary` after one request through the proxy.
fn scrape(binary: &Path) -> String {
    let s1 = HttpBackend::start("s1");
    let proxy = Proxy::new(binary).listener("fe1").backend("s1", s1.addr()).config(PROM_CFG).start().expect("starts");
    assert_eq!(http_get(proxy.addr("fe1"), "/").status, 200);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = http_get(proxy.addr("fe1"), "/metrics");
        assert_eq!(r.headers.get("content-type"), Some("text/plain; version=0.0.4"));
        let text = r.body_str();
        let counted = "haproxy_backend_http_responses_total{proxy=\"be1\",code=\"2xx\"} 1";
        if text.lines().any(|l| l == counted) || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `name type` of every metric of an exposition text.
fn metric_types(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .map(|(n, t)| (n.to_owned(), t.to_owned()))
        .collect()
}

#[test]
fn the_prometheus_service_exports_haproxys_metric_names() {
    let text = scrape(Path::new(env!("CARGO_BIN_EXE_rampart")));
    // (the scrapes count on the frontend too)
    for prefix in [
        "haproxy_frontend_http_responses_total{proxy=\"fe1\",code=\"2xx\"} ",
        "haproxy_frontend_intercepted_requests_total{proxy=\"fe1\"} ",
    ] {
        assert!(text.lines().any(|l| l.starts_with(prefix)), "missing {prefix:?} in\n{text}");
    }
    for line in [
        "haproxy_backend_http_responses_total{proxy=\"be1\",code=\"2xx\"} 1",
        "haproxy_server_status{proxy=\"be1\",server=\"s1\",state=\"UP\"} 1",
        "haproxy_server_status{proxy=\"be1\",server=\"s2\",state=\"MAINT\"} 1",
        // the latency histograms (a rampart extension) of the one request to be1/s1
        "# TYPE haproxy_backend_total_time_seconds histogram",
        "haproxy_backend_total_time_seconds_count{proxy=\"be1\"} 1",
        "haproxy_backend_total_time_seconds_bucket{proxy=\"be1\",le=\"+Inf\"} 1",
        "haproxy_server_response_time_seconds_count{proxy=\"be1\",server=\"s1\"} 1",
        "haproxy_server_connect_time_seconds_count{proxy=\"be1\",server=\"s1\"} 1",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
    }
    // a server without a sample has no histogram series yet (s2 is in maintenance)
    assert!(!text.contains("_seconds_count{proxy=\"be1\",server=\"s2\"}"), "{text}");
    if let Some(promtool) = which("promtool") {
        let mut check = Command::new(promtool)
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("promtool runs");
        check.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("write");
        let out = check.wait_with_output().expect("promtool ends");
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        // the one lint finding is HAProxy's own name (a counter without `_total`)
        let known = "haproxy_process_failed_resolutions counter metrics should have \"_total\" suffix";
        let problems: Vec<&str> = said.lines().filter(|l| !l.trim().is_empty() && *l != known).collect();
        assert!(problems.is_empty(), "promtool check metrics:\n{said}");
    } else {
        println!("SKIPPED promtool check: promtool is not installed");
    }
    let Some(haproxy) = haproxy_or_skip("the_prometheus_service_exports_haproxys_metric_names") else { return };
    let theirs = metric_types(&scrape(&haproxy));
    let ours: Vec<_> = metric_types(&text).into_iter().filter(|(_, ty)| ty != "histogram").collect();
    let unknown: Vec<_> = ours.iter().filter(|m| !theirs.contains(m)).collect();
    assert!(unknown.is_empty(), "metrics (or types) haproxy does not export: {unknown:?}");
    // ours come in haproxy's order
    let order: Vec<usize> = ours.iter().filter_map(|m| theirs.iter().position(|t| t == m)).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "order differs: {ours:?}");
}

#[test]
fn rates_and_their_maxima_follow_the_traffic() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&netutil::binary(), CFG, &s1);
    // the rates are known once a second passed; then a burst of requests (split
    // between two sampled seconds at worst: one of them saw 3)
    std::thread::sleep(Duration::from_millis(1100));
    for _ in 0..5 {
        assert_eq!(http_get(proxy.addr("fe1"), "/").status, 200);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut rows = stat(&proxy);
    while rows["fe1/FRONTEND"].get("req_rate_max").is_none_or(|v| v.parse::<u64>().unwrap_or(0) < 3)
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(100));
        rows = stat(&proxy);
    }
    let fe = &rows["fe1/FRONTEND"];
    assert!(get(fe, "req_rate_max").parse::<u64>().unwrap() > 2, "{fe:?}");
    assert!(get(fe, "rate_max").parse::<u64>().unwrap() > 2, "{fe:?}");
    assert!(get(fe, "conn_rate_max").parse::<u64>().unwrap() > 2, "{fe:?}");
    assert!(get(&rows["be1/BACKEND"], "rate_max").parse::<u64>().unwrap() > 2);
    let info = info(&proxy);
    assert!(info["MaxConnRate"].parse::<u64>().unwrap() > 2, "{info:?}");
}

#[test]
fn clear_counters_resets_maxima_or_everything() {
    let s1 = HttpBackend::start("s1");
    let proxy = start(&netutil::binary(), CFG, &s1);
    for _ in 0..2 {
        assert_eq!(http_get(proxy.addr("fe1"), "/").status, 200);
    }
    let admin = sock(&proxy, "admin.sock");
    assert_eq!(socat(&sock(&proxy, "user.sock"), "clear counters\n"), "Permission denied\n\n");
    let deadline = Instant::now() + Duration::from_secs(5);
    while get(&stat(&proxy)["be1/s1"], "hrsp_2xx") != "2" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(socat(&admin, "clear counters\n"), "\n");
    let rows = stat(&proxy);
    assert_eq!(get(&rows["fe1/FRONTEND"], "smax"), "0");
    assert_eq!(get(&rows["fe1/FRONTEND"], "req_tot"), "2");
    assert_eq!(socat(&admin, "clear counters all\n"), "\n");
    let rows = stat(&proxy);
    for (row, col) in
        [("fe1/FRONTEND", "req_tot"), ("fe1/FRONTEND", "hrsp_2xx"), ("be1/BACKEND", "stot"), ("be1/s1", "hrsp_2xx")]
    {
        assert_eq!(get(&rows[row], col), "0", "{row} {col}");
    }
    assert_eq!(http_get(proxy.addr("fe1"), "/").status, 200);
}

#[test]
fn many_cli_clients_during_traffic_all_get_their_answers() {
    use std::io::Read;
    let s1 = HttpBackend::start("s1");
    let proxy = start(&netutil::binary(), CFG, &s1);
    let admin = proxy.dir().join("admin.sock");
    let fe = proxy.addr("fe1");
    let traffic = std::thread::spawn(move || (0..50).all(|_| http_get(fe, "/").status == 200));
    let clients: Vec<_> = (0..20)
        .map(|_| {
            let admin = admin.clone();
            std::thread::spawn(move || {
                (0..5).all(|_| {
                    let mut c = std::os::unix::net::UnixStream::connect(&admin).expect("connect");
                    c.write_all(b"show stat\n").expect("send");
                    let mut out = String::new();
                    c.read_to_string(&mut out).is_ok() && out.starts_with("# pxname,") && out.ends_with(",\n\n")
                })
            })
        })
        .collect();
    assert!(clients.into_iter().all(|c| c.join().unwrap_or(false)), "a CLI client got no full answer");
    assert!(traffic.join().unwrap_or(false), "traffic failed while the CLI was busy");
}

/// `show errors` after one malformed request, with the dates, the client port and
/// HAProxy's three lines of H1 parser flags (which rampart leaves out) removed.
fn show_errors(binary: &Path) -> String {
    show_errors_after(binary, CFG, "GET /a b HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", 400)
}

/// `show errors` (as [`show_errors`]) after `request` got a `status` answer.
fn show_errors_after(binary: &Path, cfg: &str, request: &str, status: u16) -> String {
    let s1 = HttpBackend::start("s1");
    let proxy = start(binary, cfg, &s1);
    let mut c = rampart_testkit::RawClient::connect(proxy.addr("fe1")).expect("connect");
    c.send(request).expect("send");
    assert_eq!(c.read_response().expect("a response").status, status);
    let out = socat(&sock(&proxy, "admin.sock"), "show errors\n");
    out.lines()
        .filter(|l| !l.starts_with("  H1 "))
        .map(|l| {
            let l = match (l.find('['), l.find(']')) {
                (Some(a), Some(b)) if a < b => format!("{}[date]{}", &l[..a], &l[b + 1..]),
                _ => l.to_owned(),
            };
            match l.find("src 127.0.0.1:") {
                Some(i) => format!("{}src 127.0.0.1:port", &l[..i]),
                None => l,
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn show_errors_dumps_the_last_invalid_request_as_haproxy_does() {
    let ours = show_errors(Path::new(env!("CARGO_BIN_EXE_rampart")));
    assert!(ours.contains("frontend fe1 (#2): invalid request"), "{ours}");
    assert!(ours.contains("  00019  Host: x\\r\\n"), "{ours}");
    let Some(haproxy) = haproxy_or_skip("show_errors_dumps_the_last_invalid_request_as_haproxy_does") else { return };
    assert_eq!(ours, show_errors(&haproxy));
}

/// With `option accept-invalid-http-request`, a request with a space in a header name is
/// served, and still listed by `show errors` at the byte let through, as haproxy 2.6.
#[test]
fn show_errors_lists_a_request_accept_invalid_let_through() {
    let cfg = CFG.replace("frontend fe1\n", "frontend fe1\n  option accept-invalid-http-request\n");
    let req = "GET /a HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n";
    let ours = show_errors_after(Path::new(env!("CARGO_BIN_EXE_rampart")), &cfg, req, 200);
    assert!(ours.contains("frontend fe1 (#2): invalid request"), "{ours}");
    assert!(ours.contains("at position 29"), "{ours}");
    let Some(haproxy) = haproxy_or_skip("show_errors_lists_a_request_accept_invalid_let_through") else { return };
    assert_eq!(ours, show_errors_after(&haproxy, &cfg, req, 200));
}

#[test]
fn denied_responses_count_in_the_frontend_backend_and_server() {
    let cfg = CFG.replace(
        "  http-request deny if { path /deny }\n",
        "  http-request set-var(txn.d) bool(1) if { path /rdeny }\n  http-response deny if { var(txn.d) -m bool }\n",
    );
    let s1 = HttpBackend::start("s1");
    let proxy = start(&netutil::binary(), &cfg, &s1);
    assert_eq!(http_get(proxy.addr("fe1"), "/").status, 200);
    assert_eq!(http_get(proxy.addr("fe1"), "/rdeny").status, 502);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut rows = stat(&proxy);
    while get(&rows["fe1/FRONTEND"], "req_tot") != "2" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        rows = stat(&proxy);
    }
    for row in ["fe1/FRONTEND", "be1/BACKEND", "be1/s1"] {
        assert_eq!(get(&rows[row], "dresp"), "1", "{row}: {:?}", rows[row]);
    }
    assert_eq!(get(&rows["be1/s2"], "dresp"), "0");
}

/// `get var` reads the `proc.` variables the global `set-var` lines and the rules set;
/// `set var` (experimental mode only) changes them from an expression or a format, and
/// the rules see the new value. Answers are HAProxy 2.6.12's (reg-test sample_fetches/vars).
#[test]
fn get_var_and_set_var_reach_the_proc_variables() {
    let cfg = "global\n  stats socket ${testdir}/admin.sock mode 600 level admin\n\
               \x20 set-var proc.n int(12)\n  set-var proc.s str(\"a b\")\n\
               defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
               frontend fe1\n  bind fd@${fe1}\n  http-request set-var(proc.n) var(proc.n),add(1)\n\
               \x20 http-request return status 200 hdr x-var \"n=%[var(proc.n)] s=%[var(proc.s)]\"\n";
    let s1 = HttpBackend::start("s1");
    let proxy = start(&netutil::binary(), cfg, &s1);
    let admin = sock(&proxy, "admin.sock");
    assert_eq!(socat(&admin, "get var proc.n\n"), "proc.n: type=sint value=<12>\n");
    assert_eq!(socat(&admin, "get var proc.s\n"), "proc.s: type=str value=<a b>\n");
    assert_eq!(socat(&admin, "get var proc.none\n"), "Variable not found.\n\n");
    assert_eq!(socat(&admin, "get var txn.n\n"), "Variable not found.\n\n");
    assert_eq!(socat(&admin, "get var\n"), "Missing process-wide variable identifier.\n\n");
    let addr = proxy.addr("fe1");
    let resp = http_get(addr, "/");
    assert_eq!(resp.headers.get("x-var"), Some("n=13 s=a b"));
    assert_eq!(socat(&admin, "get var proc.n\n"), "proc.n: type=sint value=<13>\n");
    assert_eq!(socat(&admin, "set var proc.s str(x)\n"), "This command is restricted to experimental mode only.\n\n");
    assert_eq!(
        socat(
            &admin,
            "experimental-mode on; set var proc.s str(updating); set var proc.s fmt %[var(proc.s),regsub(ing,ed)]\n"
        ),
        "\n\n\n"
    );
    assert_eq!(socat(&admin, "experimental-mode on; set var proc.n expr int(40)\n"), "\n\n");
    assert_eq!(
        socat(&admin, "experimental-mode on; set var txn.x int(1)\n"),
        "\n'set var': cannot set variable 'txn.x', only scope 'proc' is permitted here.\n"
    );
    let resp = http_get(addr, "/");
    assert_eq!(resp.headers.get("x-var"), Some("n=41 s=updated"));
}

/// `pxname/svname iid sid` of every `show stat` row of `binary` running `cfg`.
fn ids(binary: &Path, cfg: &str, s1: &HttpBackend) -> Vec<String> {
    let proxy = start(binary, cfg, s1);
    let out = socat(&sock(&proxy, "admin.sock"), "show stat\n");
    let mut rows: Vec<String> = out
        .lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            format!("{}/{} {} {}", c[0], c[1], c[27], c[28])
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn explicit_ids_number_proxies_and_servers_as_haproxy() {
    // custom ids on some proxies and servers; the others take the first free number
    // from a counter that moves past every item (the stats socket's GLOBAL proxy first)
    let cfg = "global\n  stats socket ${testdir}/admin.sock mode 600 level admin\n\
               defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
               frontend fe1\n  id 3\n  bind fd@${fe1}\n  default_backend be1\n\
               backend be1\n  server s1 ${s1_addr}:${s1_port}\n  server s2 ${s1_addr}:${s1_port} id 1\n  server s3 ${s1_addr}:${s1_port}\n\
               backend be2\n  id 2\n  server s1 ${s1_addr}:${s1_port}\n\
               backend be3\n";
    let s1 = HttpBackend::start("s1");
    let rampart = ids(Path::new(env!("CARGO_BIN_EXE_rampart")), cfg, &s1);
    let expected = [
        "be1/BACKEND 4 0",
        "be1/s1 4 2",
        "be1/s2 4 1",
        "be1/s3 4 4",
        "be2/BACKEND 2 0",
        "be2/s1 2 1",
        "be3/BACKEND 6 0",
        "fe1/FRONTEND 3 0",
    ];
    assert_eq!(rampart, expected);
    if let Some(haproxy) = haproxy_or_skip("explicit_ids_number_proxies_and_servers_as_haproxy") {
        assert_eq!(ids(&haproxy, cfg, &s1), rampart);
    }
}
