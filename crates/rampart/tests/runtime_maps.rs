//! Maps and ACL pattern files changed at run time through the stats socket (`show map`,
//! `get map`, `add`/`set`/`del`/`clear`/`prepare`/`commit map|acl`): every answer
//! compared with HAProxy 2.6's for the same configuration and the same commands, and
//! the traffic that shows a change is seen by the next request (a `map_beg` route, a
//! header set from a map, an ACL `-f` file that denies).

use std::path::PathBuf;

use rampart_testkit::{haproxy_or_skip, http_get, socat, HttpBackend, Proxy, Running};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// The pattern files, in a directory both proxies read (their descriptions in `show
/// map` name the paths, so both runs must see the same ones).
struct Files(PathBuf);

impl Files {
    fn new(tag: &str) -> Files {
        let dir = std::env::temp_dir().join(format!("rampart-runtime-maps-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory for the maps");
        std::fs::write(dir.join("hdr.map"), "/k1 v1\n/k2 v2\n# comment\n/k3\n").unwrap();
        std::fs::write(dir.join("routes.map"), "/b/ be_b\n").unwrap();
        std::fs::write(dir.join("len.map"), "/k1 1\n/k2 22\n").unwrap();
        std::fs::write(dir.join("deny.acl"), "/deny\n/x\n").unwrap();
        Files(dir)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }

    /// `text` with `M/` standing for the directory.
    fn expand(&self, text: &str) -> String {
        text.replace("M/", &format!("{}/", self.0.display()))
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const CFG: &str = "global\n  stats socket ${testdir}/admin.sock level admin\n  \
                   stats socket ${testdir}/user.sock level user\n  nbthread 4\n\
                   defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 2s\n\
                   frontend fe\n  bind fd@${fe}\n  \
                   acl denied path -f M/deny.acl\n  \
                   acl api path_beg /api /v2\n  \
                   http-request deny if denied\n  \
                   http-request return status 200 content-type text/plain string api if api\n  \
                   http-request set-header X-Map %[path,map(M/hdr.map,none)]\n  \
                   http-request set-header X-Len %[path,map_str_int(M/len.map,0)]\n  \
                   http-request set-header X-Route %[path,map_beg(M/routes.map,be_a)]\n  \
                   use_backend %[req.hdr(x-route)]\n\
                   backend be_a\n  server s1 ${s1_addr}:${s1_port}\n\
                   backend be_b\n  server s2 ${s2_addr}:${s2_port}\n";

fn start(binary: PathBuf, files: &Files, s1: &HttpBackend, s2: &HttpBackend) -> Running {
    Proxy::new(binary)
        .listener("fe")
        .backend("s1", s1.addr())
        .backend("s2", s2.addr())
        .config(&files.expand(CFG))
        .start()
        .expect("the proxy starts")
}

fn cli(proxy: &Running, sock: &str, cmd: &str) -> String {
    socat(&proxy.dir().join(sock), &format!("{cmd}\n"))
}

/// The commands of the differential story. `{N}` stands for the identifier of the
/// N-th entry the last `show` printed (HAProxy prints addresses there).
const STORY: &[&str] = &[
    "show map",
    "show acl",
    "show map M/hdr.map",
    "show acl M/deny.acl",
    "show acl #0",
    "show acl #2",
    "get map M/hdr.map /k1",
    "get map M/hdr.map /k3",
    "get map M/routes.map /b/x",
    "get map M/len.map /k2",
    "get map M/len.map /nope",
    "get acl M/deny.acl /deny",
    "get acl #2 /api/v",
    "get acl #2 /nope",
    "get map #2 /api",
    "add map M/hdr.map /k9 v9",
    "add acl M/deny.acl /blocked",
    "add acl M/hdr.map /x",
    "add map M/len.map /k5 notanint",
    "add map M/len.map /k5 5",
    "add acl #2 /new",
    "show acl #2",
    "show map",
    "set map M/hdr.map /k1 changed",
    "set map M/hdr.map /nope x",
    "set map M/len.map /k1 zz",
    "show map M/len.map",
    "show map M/hdr.map",
    "set map M/hdr.map #{0} byid",
    "set map M/hdr.map #0xzz byid",
    "del map M/hdr.map #{1}",
    "del map M/hdr.map /nope",
    "del map M/hdr.map /k9",
    "del acl M/hdr.map /k1",
    "del acl #2 /new",
    "del map #9999 x",
    "show map M/hdr.map",
    "get map M/hdr.map /k1",
    "prepare map M/hdr.map",
    "prepare map M/hdr.map",
    "add map @1 M/hdr.map /n1 new1",
    "add map @1 M/hdr.map /k1 next1",
    "add map @5 M/hdr.map /n1 x",
    "show map @1 M/hdr.map",
    "get map M/hdr.map /n1",
    "show map",
    "commit map @3 M/hdr.map",
    "commit map @1 M/hdr.map",
    "show map M/hdr.map",
    "get map M/hdr.map /n1",
    "get map M/hdr.map /k1",
    "show map",
    "add map @2 M/hdr.map /n2 new2",
    "clear map @2 M/hdr.map",
    "show map @2 M/hdr.map",
    "clear acl #2",
    "show acl",
    "commit map M/hdr.map",
    "commit map @2",
    "clear map",
    "get map",
    "get acl #2",
    "get map nope x",
    "add map",
    "add map M/hdr.map /only",
    "add acl #2",
    "set map M/hdr.map /k1",
    "del map",
    "del acl #2",
    "show map nope",
    "show acl nope",
    "show map #0",
    "prepare acl #2",
    "prepare map #0",
    "add map M/hdr.map <<\n/p1 pv1\n/p2\tpv2 with spaces\n",
    "show map M/hdr.map",
];

/// Runs the story on `binary`: each answer, entry identifiers numbered in the order
/// they first appear, HAProxy's internal `httpclient` ACLs left out.
fn story(binary: PathBuf) -> Vec<String> {
    let files = Files::new(if binary.ends_with("haproxy") { "h" } else { "r" });
    let (s1, s2) = (HttpBackend::start("s1"), HttpBackend::start("s2"));
    let proxy = start(binary, &files, &s1, &s2);
    let mut seen: Vec<String> = Vec::new();
    let mut last: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for template in STORY {
        let mut cmd = files.expand(template);
        for (i, id) in last.iter().enumerate() {
            cmd = cmd.replace(&format!("{{{i}}}"), id);
        }
        let answer = cli(&proxy, "admin.sock", &cmd);
        let ids: Vec<String> = answer
            .lines()
            .filter_map(|l| l.split(' ').next().filter(|w| w.starts_with("0x")).map(str::to_owned))
            .collect();
        if !ids.is_empty() {
            last = ids;
        }
        let mut text = String::new();
        for line in answer.lines().filter(|l| !l.contains("file 'httpclient'")) {
            let line = match line.split_once(' ') {
                Some((id, rest)) if id.starts_with("0x") => {
                    let n = seen.iter().position(|s| s == id).unwrap_or_else(|| {
                        seen.push(id.to_owned());
                        seen.len() - 1
                    });
                    format!("<entry {n}> {rest}")
                }
                _ => line.to_owned(),
            };
            text.push_str(&line.replace(&files.path(""), "M/"));
            text.push('\n');
        }
        out.push(format!("> {template}\n{text}"));
    }
    // the commands need no particular level (HAProxy 2.6 checks none)
    for cmd in ["add map M/hdr.map /u1 user", "show map M/hdr.map", "del map M/hdr.map /u1"] {
        let answer = cli(&proxy, "user.sock", &files.expand(cmd));
        out.push(format!("user> {cmd}\n{}", answer.lines().filter(|l| !l.starts_with("0x")).count()));
    }
    out
}

#[test]
fn map_and_acl_commands_answer_as_haproxy() {
    let ours = story(RAMPART.into());
    let expected = [
        ("> show map M/hdr.map", "<entry 0> /k1 v1\n<entry 1> /k2 v2\n<entry 2> /k3 \n\n"),
        ("> add acl M/hdr.map /x", "This ACL is shared with a map containing samples."),
        ("> commit map @3 M/hdr.map", "Version number out of range.\n"),
        ("> get map M/hdr.map /n1", "type=str, case=sensitive, found=yes, idx=tree, key=\"/n1\", value=\"new1\""),
    ];
    for (cmd, answer) in expected {
        assert!(ours.iter().any(|o| o.starts_with(cmd) && o.contains(answer)), "{cmd}: {answer}\n{ours:#?}");
    }
    let Some(haproxy) = haproxy_or_skip("map_and_acl_commands_answer_as_haproxy") else { return };
    let theirs = story(haproxy);
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o, t);
    }
    assert_eq!(ours.len(), theirs.len());
}

/// What the servers saw of a request to `path`: status, which server, and the headers
/// the maps set.
fn request(proxy: &Running, s1: &HttpBackend, s2: &HttpBackend, path: &str) -> String {
    let before = (s1.requests().len(), s2.requests().len());
    let res = http_get(proxy.addr("fe"), path);
    let server = if s1.requests().len() > before.0 {
        s1.requests().pop()
    } else if s2.requests().len() > before.1 {
        s2.requests().pop()
    } else {
        None
    };
    match server {
        Some(r) => format!(
            "{} {} map={} len={}",
            res.status,
            if s1.requests().len() > before.0 { "s1" } else { "s2" },
            r.headers.get("x-map").unwrap_or("-"),
            r.headers.get("x-len").unwrap_or("-"),
        ),
        None => format!("{}", res.status),
    }
}

/// Requests around each change; several of each, so that every thread serves some.
fn traffic(binary: PathBuf) -> Vec<String> {
    let files = Files::new(if binary.ends_with("haproxy") { "th" } else { "tr" });
    let (s1, s2) = (HttpBackend::start("s1"), HttpBackend::start("s2"));
    let proxy = start(binary, &files, &s1, &s2);
    let mut out = Vec::new();
    let mut step = |label: &str, cmd: Option<&str>, path: &str| {
        if let Some(cmd) = cmd {
            let answer = cli(&proxy, "admin.sock", &files.expand(cmd));
            let expected = if cmd.starts_with("prepare") { "New version created: 1" } else { "" };
            assert_eq!(answer.trim(), expected, "{cmd}");
        }
        for _ in 0..6 {
            out.push(format!("{label} {path}: {}", request(&proxy, &s1, &s2, path)));
        }
    };
    step("start", None, "/k1");
    step("start", None, "/blocked");
    step("set map", Some("set map M/hdr.map /k1 updated"), "/k1");
    step("add acl", Some("add acl M/deny.acl /blocked"), "/blocked");
    step("del acl", Some("del acl M/deny.acl /blocked"), "/blocked");
    step("route", Some("add map M/routes.map /k be_b"), "/k1");
    step("int", Some("set map M/len.map /k1 42"), "/k1");
    step("clear", Some("clear map M/routes.map"), "/k1");
    step("prepare", Some("prepare map M/hdr.map"), "/k1");
    step("unseen", Some("add map @1 M/hdr.map /k1 v-next"), "/k1");
    step("commit", Some("commit map @1 M/hdr.map"), "/k1");
    step("gone", None, "/k2");
    out.dedup();
    out
}

#[test]
fn changes_are_seen_by_the_next_request_on_every_thread() {
    let ours = traffic(RAMPART.into());
    assert_eq!(
        ours,
        [
            "start /k1: 200 s1 map=v1 len=1",
            "start /blocked: 200 s1 map=none len=0",
            "set map /k1: 200 s1 map=updated len=1",
            "add acl /blocked: 403",
            "del acl /blocked: 200 s1 map=none len=0",
            "route /k1: 200 s2 map=updated len=1",
            "int /k1: 200 s2 map=updated len=42",
            "clear /k1: 200 s1 map=updated len=42",
            "prepare /k1: 200 s1 map=updated len=42",
            "unseen /k1: 200 s1 map=updated len=42",
            "commit /k1: 200 s1 map=v-next len=42",
            "gone /k2: 200 s1 map=none len=22",
        ]
    );
    let Some(haproxy) = haproxy_or_skip("changes_are_seen_by_the_next_request_on_every_thread") else { return };
    assert_eq!(ours, traffic(haproxy));
}
