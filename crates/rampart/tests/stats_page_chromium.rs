//! The statistics page in a real browser: Debian's headless `chromium`, driven over the
//! DevTools protocol on a pipe (`--remote-debugging-pipe`), loads the page, reads its
//! tables, ticks a server's checkbox in the backend's admin form, picks "Set state to
//! MAINT" and presses Apply, as a user would. The browser posts the form, follows the
//! 303 and shows the outcome banner; the test then checks with `show stat` on the stats
//! socket that the server went to maintenance. Skipped, visibly, without chromium
//! (`apt-get install chromium`). `RAMPART_UPDATE_SCREENSHOT=1` writes the browser's
//! screenshot of the page to docs/stats-page.png.
//!
//! Set `RAMPART_TEST_BINARY=/usr/sbin/haproxy` to run it against HAProxy (whose page
//! has other classes: the table checks are rampart's, the form and the outcome are not).

mod netutil;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use base64::Engine as _;
use rampart_testkit::{HttpBackend, Proxy, Running};

const CFG: &str = "global\n  stats socket ${testdir}/admin.sock level admin\n\
                   defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
                   frontend fe1\n  bind fd@${fe1}\n  stats uri /stats\n  stats show-legends\n\
                   stats admin if { src 127.0.0.1 }\n  default_backend be1\n\
                   backend be1\n  server s1 ${s1_addr}:${s1_port}\n  server s2 ${s1_addr}:${s1_port}\n";

fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(tool)).find(|p| p.exists())
}

/// A headless chromium and its DevTools pipe: requests written to fd 3, answers and
/// events read from fd 4, each message ended by a NUL byte.
struct Browser {
    child: Child,
    to: std::fs::File,
    from: Receiver<String>,
    next_id: u64,
    session: Option<String>,
}

impl Browser {
    fn start(chromium: &Path, dir: &Path) -> Browser {
        let (input, output) = (dir.join("cdp-in"), dir.join("cdp-out"));
        for fifo in [&input, &output] {
            let ok = Command::new("mkfifo").arg(fifo).status().is_ok_and(|s| s.success());
            assert!(ok, "mkfifo {}", fifo.display());
        }
        let profile = dir.join("profile");
        // the shell gives the fifos to chromium as fds 3 and 4
        let child = Command::new("sh")
            .arg("-c")
            .arg(
                "exec \"$0\" --headless --no-sandbox --disable-gpu --no-first-run --remote-debugging-pipe \
                  --window-size=1200,700 --user-data-dir=\"$1\" about:blank 3<\"$2\" 4>\"$3\"",
            )
            .args([chromium, &profile, &input, &output])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium starts");
        let to = std::fs::OpenOptions::new().write(true).open(&input).expect("open the request pipe");
        let from_file = std::fs::File::open(&output).expect("open the answer pipe");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(from_file);
            let mut msg = Vec::new();
            while reader.read_until(0, &mut msg).is_ok_and(|n| n > 0) {
                msg.pop_if(|c| *c == 0);
                if tx.send(String::from_utf8_lossy(&msg).into_owned()).is_err() {
                    break;
                }
                msg.clear();
            }
        });
        Browser { child, to, from: rx, next_id: 0, session: None }
    }

    /// Sends `method` with `params` (a JSON object) and waits for its answer.
    fn call(&mut self, method: &str, params: &str) -> String {
        self.next_id += 1;
        let id = self.next_id;
        let session = self.session.as_ref().map(|s| format!(",\"sessionId\":\"{s}\"")).unwrap_or_default();
        let msg = format!("{{\"id\":{id},\"method\":\"{method}\",\"params\":{params}{session}}}\0");
        self.to.write_all(msg.as_bytes()).expect("write to chromium");
        let deadline = Instant::now() + Duration::from_secs(20);
        let prefix = format!("{{\"id\":{id},");
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let answer = self.from.recv_timeout(left).unwrap_or_else(|_| panic!("no answer to {method}"));
            if answer.starts_with(&prefix) {
                assert!(!answer.contains("\"error\":"), "{method}: {answer}");
                return answer;
            }
        }
    }

    /// Opens a tab on `url` and talks to it from now on.
    fn open(&mut self, url: &str) {
        let created = self.call("Target.createTarget", &format!("{{\"url\":\"{url}\"}}"));
        let target = string_field(&created, "targetId").expect("a target id");
        let attached = self.call("Target.attachToTarget", &format!("{{\"targetId\":\"{target}\",\"flatten\":true}}"));
        self.session = Some(string_field(&attached, "sessionId").expect("a session id"));
    }

    /// The value of a JavaScript expression that yields a string without quotes or
    /// backslashes.
    fn eval(&mut self, expr: &str) -> String {
        let params = format!("{{\"expression\":\"{}\",\"returnByValue\":true}}", expr.replace('"', "\\\""));
        let answer = self.call("Runtime.evaluate", &params);
        string_field(&answer, "value").unwrap_or_default()
    }

    /// Evaluates `expr` until it yields `want` (the page may still be loading).
    fn wait_for(&mut self, expr: &str, want: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let got = self.eval(expr);
            if want(&got) || Instant::now() > deadline {
                return got;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn screenshot(&mut self) -> Vec<u8> {
        let answer = self.call("Page.captureScreenshot", "{\"format\":\"png\"}");
        let data = string_field(&answer, "data").expect("image data");
        base64::engine::general_purpose::STANDARD.decode(data).expect("base64 image")
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The string value of `"name":"..."` in a JSON message (values without escapes).
fn string_field(json: &str, name: &str) -> Option<String> {
    let key = format!("\"{name}\":\"");
    let start = json.find(&key)? + key.len();
    let len = json[start..].find('"')?;
    Some(json[start..start + len].to_owned())
}

/// `show stat` rows as (pxname, svname, status).
fn show_stat(proxy: &Running) -> Vec<(String, String, String)> {
    let mut sock = std::os::unix::net::UnixStream::connect(proxy.dir().join("admin.sock")).expect("stats socket");
    sock.write_all(b"show stat\n").expect("send");
    let mut out = String::new();
    let _ = sock.read_to_string(&mut out);
    out.lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_owned(), f[1].to_owned(), f.get(17).copied().unwrap_or_default().to_owned())
        })
        .collect()
}

#[test]
fn chromium_shows_the_page_and_its_form_puts_a_server_in_maintenance() {
    let Some(chromium) = which("chromium") else {
        println!("SKIPPED: chromium is not installed (apt-get install chromium)");
        return;
    };
    let s1 = HttpBackend::start("s1");
    let proxy = Proxy::new(netutil::binary())
        .listener("fe1")
        .backend("s1", s1.addr())
        .config(CFG)
        .start()
        .expect("the proxy starts");
    let mut browser = Browser::start(&chromium, proxy.dir());
    browser.open(&format!("http://{}/stats", proxy.addr("fe1")));
    browser.call("Page.enable", "{}");
    let names = browser.wait_for(
        "document.readyState == 'complete' ? Array.from(document.querySelectorAll('td.name')).map(e => e.textContent).join(',') : ''",
        |v| v.contains("Backend"),
    );
    // fe1 has its frontend row; be1 its servers and its backend row
    assert_eq!(names, "Frontend,s1,s2,Backend");
    let heads = browser.eval("Array.from(document.querySelectorAll('tr.titles th')).map(e => e.textContent).join(' ')");
    assert!(heads.contains("Cur Max Limit") && heads.contains("2xx"), "{heads}");
    let forms = browser.eval("String(document.querySelectorAll('form').length)");
    assert_eq!(forms, "1", "only the backend's table is a form");

    // tick s2, choose MAINT, press Apply: the browser posts the form itself
    let clicked = browser.eval(
        "(() => { const f = document.querySelector('form'); \
          f.querySelector('input[name=s][value=s2]').click(); \
          f.querySelector('select[name=action]').value = 'maint'; \
          f.querySelector('input[type=submit]').click(); return 'clicked'; })()",
    );
    assert_eq!(clicked, "clicked");
    let url = browser.wait_for("document.readyState == 'complete' ? location.href : ''", |u| u.contains(";st="));
    assert!(url.ends_with("/stats;st=DONE"), "{url}");
    let banner = browser.wait_for("(document.querySelector('div.banner') || {}).textContent || ''", |b| !b.is_empty());
    assert!(banner.contains("Action processed successfully."), "{banner}");
    let s2_class = browser.eval("Array.from(document.querySelectorAll('tr.server'))[1].className");
    assert_eq!(s2_class, "server maint");

    let rows = show_stat(&proxy);
    let status = |sv: &str| rows.iter().find(|r| r.0 == "be1" && r.1 == sv).map(|r| r.2.clone());
    assert_eq!(status("s2").as_deref(), Some("MAINT"), "{rows:?}");
    assert_eq!(status("s1").as_deref(), Some("no check"), "{rows:?}");

    let png = browser.screenshot();
    assert!(png.starts_with(b"\x89PNG"), "a PNG image");
    if std::env::var_os("RAMPART_UPDATE_SCREENSHOT").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/stats-page.png");
        std::fs::write(docs, &png).expect("write docs/stats-page.png");
    }
}
