//! `bind ... tls-ticket-keys <file>` through the real binary: two rampart processes
//! reading the same key file resume each other's sessions (TLSv1.2 and TLSv1.3,
//! `openssl s_client -sess_out` on one, `-sess_in` on the other, `ssl_fc_is_resumed`
//! as the server sees it); with another key file they do not. Then the runtime API
//! (`show tls-keys`, `set ssl tls-key`: a key pushed on both processes rotates them
//! together) and the startup alerts for bad key files, compared with haproxy's.

mod http_common;
mod test_pki;

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use http_common::{binary, PREAMBLE};
use rampart_testkit::{HttpBackend, Proxy, Reply, Running};

/// A certificate for `a.test` and key files, in a directory of their own.
struct Files {
    dir: PathBuf,
}

impl Files {
    fn new(test: &str) -> Files {
        let dir = test_pki::fresh_dir(&format!("tk-{test}"));
        let kp = test_pki::key();
        let c = rcgen::CertificateParams::new(vec!["a.test".to_string()]).unwrap().self_signed(&kp).unwrap();
        std::fs::write(dir.join("site.pem"), format!("{}{}", c.pem(), kp.serialize_pem())).unwrap();
        Files { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// Writes key file `name` with `n` random keys of `len` bytes; its path and keys.
    fn keys(&self, name: &str, n: usize, len: usize) -> (String, Vec<String>) {
        let keys: Vec<String> = (0..n).map(|_| random_key(len)).collect();
        let path = self.path(name);
        std::fs::write(&path, keys.iter().map(|k| format!("{k}\n")).collect::<String>()).unwrap();
        (path, keys)
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn random_key(len: usize) -> String {
    let mut bytes = vec![0u8; len];
    aws_lc_rs::rand::fill(&mut bytes).unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A rampart serving `a.test` with the keys of `keys`, telling the backend whether
/// the handshake resumed; a stats socket.
fn start(files: &Files, keys: &str, backend: &HttpBackend) -> Running {
    let cfg = format!(
        "{}listen fe1\n  bind fd@${{fe1}} ssl crt {} tls-ticket-keys {keys}\n  \
         http-request set-header X-Resumed %[ssl_fc_is_resumed]\n  \
         server s1 ${{s1_addr}}:${{s1_port}}\n",
        PREAMBLE.replacen("global\n", "global\n  stats socket ${testdir}/admin.sock level admin\n", 1),
        files.path("site.pem")
    );
    Proxy::new(binary()).backend("s1", backend.addr()).listener("fe1").config(&cfg).start().expect("the proxy starts")
}

/// One HTTP/1.0 request through `openssl s_client` (`version`), saving its session
/// to or resuming it from `sess`; whether the handshake resumed, and the response.
fn s_client(proxy: &Running, version: &str, sess: (&str, &Path)) -> (bool, String) {
    use std::io::Write;
    let addr = proxy.addr("fe1").to_string();
    let mut child = Command::new("openssl")
        .args(["s_client", "-ign_eof", "-connect", &addr, "-servername", "a.test", version, sess.0])
        .arg(sess.1)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("openssl runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"GET / HTTP/1.0\r\nHost: a.test\r\n\r\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let resumed = text.lines().any(|l| l.starts_with("Reused,"));
    (resumed, text)
}

/// Whether a session made on `a` resumes on `b`, for each TLS version.
fn resumes_across(files: &Files, a: &Running, b: &Running, tag: &str) -> Vec<bool> {
    let mut out = Vec::new();
    for version in ["-tls1_2", "-tls1_3"] {
        let sess = files.dir.join(format!("sess-{tag}{version}.pem"));
        let (resumed, text) = s_client(a, version, ("-sess_out", &sess));
        assert!(!resumed && text.contains("x-resumed: 0"), "{version}: {text}");
        let (resumed, text) = s_client(b, version, ("-sess_in", &sess));
        assert_eq!(text.contains("x-resumed: 1"), resumed, "{version}: {text}");
        out.push(resumed);
    }
    out
}

fn echo_head() -> HttpBackend {
    HttpBackend::builder("s1").respond(|req| Reply::ok().body(req.raw_head_str())).start()
}

fn cli(proxy: &Running, input: &str) -> String {
    rampart_testkit::stats_command(&proxy.dir().join("admin.sock"), input)
}

#[test]
fn two_processes_with_one_key_file_resume_each_others_sessions() {
    let files = Files::new("resume");
    let (shared, _) = files.keys("shared.key", 4, 48);
    let (other, _) = files.keys("other.key", 3, 48);
    let s1 = echo_head();
    let a = start(&files, &shared, &s1);
    let b = start(&files, &shared, &s1);
    let c = start(&files, &other, &s1);
    assert_eq!(resumes_across(&files, &a, &b, "ab"), [true, true], "TLSv1.2, TLSv1.3: same keys");
    assert_eq!(resumes_across(&files, &b, &a, "ba"), [true, true]);
    assert_eq!(resumes_across(&files, &a, &c, "ac"), [false, false], "other keys");
}

#[test]
fn set_ssl_tls_key_rotates_the_keys_of_a_file() {
    let files = Files::new("cli");
    let (shared, keys) = files.keys("shared.key", 3, 80);
    let s1 = echo_head();
    let a = start(&files, &shared, &s1);
    let b = start(&files, &shared, &s1);
    assert_eq!(cli(&a, "show tls-keys\n"), format!("# id (file)\n0 ({shared})\n\n"));
    let dump = format!("# id secret\n# 0 ({shared})\n0.0 {}\n0.1 {}\n0.2 {}\n\n", keys[0], keys[1], keys[2]);
    assert_eq!(cli(&a, "show tls-keys #0\n"), dump);
    assert_eq!(cli(&a, &format!("show tls-keys {shared}\n")), dump);
    assert_eq!(cli(&a, "show tls-keys *\n"), dump);
    assert_eq!(cli(&a, "show tls-keys #1\n"), "'show tls-keys' unable to locate referenced filename\n\n");
    assert_eq!(
        cli(&a, &format!("set ssl tls-key #0 {}\n", random_key(48))),
        "'set ssl tls-key' received a key of wrong size.\n\n"
    );
    // a session sealed with the penultimate key, before the rotation
    let sess = files.dir.join("sess.pem");
    assert!(!s_client(&a, "-tls1_2", ("-sess_out", &sess)).0);
    // the same new key on both processes: they still resume each other's sessions,
    // old ones included
    let new = random_key(80);
    assert_eq!(cli(&a, &format!("set ssl tls-key #0 {new}\n")), "TLS ticket key updated!\n\n");
    assert_eq!(cli(&b, &format!("set ssl tls-key {shared} {new}\n")), "TLS ticket key updated!\n\n");
    assert_eq!(
        cli(&b, "show tls-keys #0\n"),
        format!("# id secret\n# 0 ({shared})\n0.0 {}\n0.1 {}\n0.2 {new}\n\n", keys[1], keys[2])
    );
    assert!(s_client(&b, "-tls1_2", ("-sess_in", &sess)).0, "the old penultimate key still opens");
    assert_eq!(resumes_across(&files, &a, &b, "rotated"), [true, true]);
    // two more keys on a only: the first session's key is gone there
    for _ in 0..2 {
        assert_eq!(cli(&a, &format!("set ssl tls-key #0 {}\n", random_key(80))), "TLS ticket key updated!\n\n");
    }
    assert!(!s_client(&a, "-tls1_2", ("-sess_in", &sess)).0);
}

/// `-c` on a bind with the key file `keys`: the exit code and stderr.
fn check(bin: &Path, files: &Files, keys: &str) -> (i32, String) {
    let cfg = format!(
        "global\n  log stderr local0\ndefaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  \
         timeout connect 1s\nfrontend f\n  bind 127.0.0.1:8443 ssl crt {} tls-ticket-keys {keys}\n",
        files.path("site.pem")
    );
    let out = rampart_testkit::check(bin, &cfg);
    (out.code, out.stderr)
}

#[test]
fn bad_key_files_are_alerts_as_haproxy_words_them() {
    let files = Files::new("bad");
    let good: String = (0..2).map(|_| random_key(48) + "\n").collect();
    let write = |name: &str, text: &str| {
        std::fs::write(files.path(name), text).unwrap();
        files.path(name)
    };
    let cases = [
        (files.path("missing.key"), "unable to load ssl tickets keys file".to_string()),
        (write("few.key", &good), "please supply at least 3 keys in the tls-tickets-file".into()),
        (write("b64.key", &format!("{good}not*base64!\n")), "unable to decode base64 key on line 3".into()),
        (write("short.key", &format!("{good}{}\n", random_key(32))), "wrong sized key on line 3".into()),
        (write("mixed.key", &format!("{good}{}\n", random_key(80))), "wrong sized key on line 3".into()),
        (write("empty.key", &format!("{}\n\n{good}", random_key(48))), "wrong sized key on line 2".into()),
    ];
    let haproxy = rampart_testkit::haproxy_path();
    for (file, why) in &cases {
        let want = format!("'bind 127.0.0.1:8443' in section 'frontend' : '{file}' : {why}");
        let (code, err) = check(&binary(), &files, file);
        assert_ne!(code, 0, "{file}");
        assert!(err.contains(&want), "{file}: {err}");
        if let Some(h) = &haproxy {
            let (code, herr) = check(h, &files, file);
            assert_ne!(code, 0);
            assert!(herr.contains(&want), "haproxy words it so too: {herr}");
        }
    }
    let (ok, _) = files.keys("ok.key", 3, 48);
    let (code, err) = check(&binary(), &files, &ok);
    assert_eq!(code, 0, "{err}");
}

/// The same configuration in haproxy and rampart: two key files on three binds, the
/// tls-keys commands answered alike, byte for byte (at level user, as HAProxy 2.6
/// allows them).
#[test]
fn tls_keys_commands_answer_as_haproxy_does() {
    let Some(haproxy) = rampart_testkit::haproxy_or_skip("tls_keys_commands_answer_as_haproxy_does") else {
        return;
    };
    let files = Files::new("diff");
    let (a, _) = files.keys("a.key", 4, 48);
    let (b, _) = files.keys("b.key", 3, 80);
    let site = files.path("site.pem");
    let cfg = format!(
        "{}listen fe1\n  bind fd@${{fe1}} ssl crt {site} tls-ticket-keys {a}\n  \
         bind fd@${{fe2}} ssl crt {site} tls-ticket-keys {b}\n  \
         bind fd@${{fe3}} ssl crt {site} tls-ticket-keys {a}\n  \
         server s1 ${{s1_addr}}:${{s1_port}}\n",
        PREAMBLE.replacen("global\n", "global\n  stats socket ${testdir}/admin.sock level user\n", 1),
    );
    let new48 = random_key(48);
    let commands = [
        "show tls-keys".to_string(),
        "show tls-keys *".into(),
        "show tls-keys #1".into(),
        format!("show tls-keys {b}"),
        "show tls-keys #".into(),
        "show tls-keys #2".into(),
        "show tls-keys nope".into(),
        "set ssl tls-key".into(),
        "set ssl tls-key #1".into(),
        "set ssl tls-key #7 YWJj".into(),
        "set ssl tls-key #1 abc".into(),
        "set ssl tls-key #1 YWJj".into(),
        format!("set ssl tls-key #0 {new48}"),
        format!("set ssl tls-key {a} {new48}"),
        "show tls-keys *".into(),
    ];
    let s1 = echo_head();
    let answers = |bin: &Path| -> Vec<String> {
        let proxy = Proxy::new(bin)
            .backend("s1", s1.addr())
            .listener("fe1")
            .listener("fe2")
            .listener("fe3")
            .config(&cfg)
            .start()
            .expect("the proxy starts");
        commands.iter().map(|c| cli(&proxy, &format!("{c}\n"))).collect()
    };
    let (theirs, ours) = (answers(&haproxy), answers(&binary()));
    assert_eq!(ours[0], format!("# id (file)\n0 ({b})\n1 ({a})\n\n"));
    assert!(ours[14].ends_with(&format!("1.2 {new48}\n\n")), "{}", ours[14]);
    for ((c, h), r) in commands.iter().zip(&theirs).zip(&ours) {
        assert_eq!(r, h, "{c}");
    }
}

/// A bind without `ssl` reads its key file too, and each bind naming a bad file is
/// refused: the same alert lines as haproxy's.
#[test]
fn every_bind_naming_a_bad_file_is_refused() {
    let files = Files::new("plain");
    let (few, _) = files.keys("few.key", 2, 48);
    let cfg = format!(
        "defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\nfrontend f\n  \
         bind 127.0.0.1:8443 tls-ticket-keys {few}\n  bind 127.0.0.1:8444 ssl crt {} tls-ticket-keys {few}\n",
        files.path("site.pem")
    );
    let alerts = |bin: &Path| -> Vec<String> {
        let out = rampart_testkit::check(bin, &cfg);
        assert_ne!(out.code, 0);
        // without the pid
        out.stderr.lines().filter(|l| l.contains("parsing [")).map(|l| l[l.find(" : ").unwrap()..].to_owned()).collect()
    };
    let ours = alerts(&binary());
    let why = format!("'{few}' : please supply at least 3 keys in the tls-tickets-file");
    assert_eq!(ours.len(), 2, "{ours:?}");
    assert!(ours[0].ends_with(&format!(":7] : 'bind 127.0.0.1:8443' in section 'frontend' : {why}")), "{ours:?}");
    assert!(ours[1].ends_with(&format!(":8] : 'bind 127.0.0.1:8444' in section 'frontend' : {why}")), "{ours:?}");
    if let Some(h) = rampart_testkit::haproxy_path() {
        assert_eq!(ours, alerts(&h));
    }
}
