//! SPOE through the binary: a `filter spoe` engine whose agent is reached over a
//! `backend`, its answers visible to the client as variables (`http-request return`
//! renders them in headers). Each scenario runs through rampart and, when installed,
//! through haproxy 2.6 with the same configuration and the same agent, and the headers
//! the client sees must be the same.
//!
//! Agents: haproxyspoa (PyPI, a third-party pure-Python SPOA; `.ci/run` installs it) for
//! the answering agent; agents written here for the failures (one that never answers a
//! NOTIFY, one that answers garbage). Without python3 and haproxyspoa the tests that
//! need it are skipped with a note, or fail when `RAMPART_REQUIRE_HAPROXY=1` (CI).

mod http_common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use rampart_proto::spoe::{next_frame, AgentHello, FrameType, MAX_FRAME_SIZE};
use rampart_testkit::{haproxy_or_skip, haproxy_required, Response};

/// The answering agent: haproxyspoa's server with two handlers.
const AGENT_PY: &str = r#"
import sys, asyncio
from haproxyspoa.spoa_server import SpoaServer
from haproxyspoa.payloads.ack import AckPayload, ActionVarScope

agent = SpoaServer()

@agent.handler("check-client-ip")
async def check_ip(ip, **kw):
    return AckPayload().set_var(ActionVarScope.SESSION, "ip_score", 42).set_txn_var("seen", str(ip) + "|" + str(kw.get("host")))

@agent.handler("grp-msg")
async def grp(path, **kw):
    return AckPayload().set_txn_var("grp", "group:" + str(path))

async def main():
    server = await asyncio.start_server(agent.handle_connection, host="127.0.0.1", port=0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()

asyncio.run(main())
"#;

/// A running Python agent, killed when dropped.
struct PyAgent {
    child: Child,
    addr: SocketAddr,
}

impl Drop for PyAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the haproxyspoa agent; `None` (skipped, or a failure in CI) without it.
fn py_agent(test: &str, dir: &http_common::Files) -> Option<PyAgent> {
    py_agent_running(test, dir, AGENT_PY)
}

/// Starts `script`, a haproxyspoa agent printing its port.
fn py_agent_running(test: &str, dir: &http_common::Files, script: &str) -> Option<PyAgent> {
    let ok = Command::new("python3").args(["-c", "import haproxyspoa"]).status().is_ok_and(|s| s.success());
    if !ok {
        assert!(!haproxy_required(), "{test}: python3 with haproxyspoa is missing (pip install haproxyspoa)");
        eprintln!("SKIPPED {test}: python3 with haproxyspoa is missing (pip install haproxyspoa)");
        return None;
    }
    let script = dir.write("agent.py", script);
    let mut child = Command::new("python3")
        .arg(script)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("agent port");
    let port: u16 = line.trim().parse().expect("the agent prints its port");
    Some(PyAgent { child, addr: SocketAddr::from(([127, 0, 0, 1], port)) })
}

/// What an agent written here does with a NOTIFY.
#[derive(Clone, Copy)]
enum Misbehave {
    /// Reads it and never answers (the connection stays open).
    Stall,
    /// Answers bytes that are no SPOP frame.
    Garbage,
}

/// Starts an agent that greets properly, then misbehaves on every NOTIFY.
fn bad_agent(how: Misbehave) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            std::thread::spawn(move || serve_badly(conn, how));
        }
    });
    addr
}

fn serve_badly(mut conn: TcpStream, how: Misbehave) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        while let Ok(Some((f, n))) = next_frame(&buf, MAX_FRAME_SIZE) {
            let mut out = Vec::new();
            match (f.ty, how) {
                (FrameType::HaproxyHello, _) => {
                    let hello = AgentHello { version: "2.0", max_frame_size: MAX_FRAME_SIZE, capabilities: "" };
                    hello.encode(&mut out).unwrap();
                }
                (FrameType::Notify, Misbehave::Garbage) => out.extend_from_slice(b"\x00\x00\x00\x06garbage!"),
                _ => {}
            }
            buf.drain(..n);
            if conn.write_all(&out).is_err() {
                return;
            }
        }
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

const SPOE_CONF: &str = "\
[iprep]
spoe-agent iprep-agent
    messages check-client-ip
    groups g1
    option var-prefix iprep
    option set-on-error err
    option set-process-time ptime
    option continue-on-error
    option pipelining
    timeout hello 2s
    timeout idle 2m
    timeout processing 300ms
    use-backend agents
spoe-message check-client-ip
    args ip=src host=req.hdr(host)
    event on-frontend-http-request
spoe-message grp-msg
    args path=path
spoe-group g1
    messages grp-msg
";

/// The frontend: the engine, a group sent for `/grp...`, every variable in a header.
fn haproxy_cfg(spoe: &str) -> String {
    format!(
        "{}frontend fe1\n  bind fd@${{fe1}}\n  filter spoe engine iprep config {spoe}\n  \
         http-request send-spoe-group iprep g1 if {{ path_beg /grp }}\n  \
         http-request set-var(txn.has_ptime) str(yes) if {{ var(txn.iprep.ptime) -m found }}\n  \
         http-request return status 200 hdr X-Score \"%[var(sess.iprep.ip_score)]\" hdr X-Seen \"%[var(txn.iprep.seen)]\" \
         hdr X-Grp \"%[var(txn.iprep.grp)]\" hdr X-Err \"%[var(txn.iprep.err)]\" hdr X-Has-Ptime \"%[var(txn.has_ptime)]\"\n\
         backend agents\n  mode tcp\n  server a1 ${{agent_addr}}:${{agent_port}}\n",
        http_common::PREAMBLE
    )
}

/// The headers the rules set, from each of `paths` requested in turn on one connection.
fn run(binary: &std::path::Path, cfg: &str, agent: SocketAddr, paths: &[&str]) -> Vec<Vec<(String, String)>> {
    let proxy = http_common::start_binary(binary, cfg, &[("agent", agent)]);
    let mut c = http_common::client(&proxy);
    c.set_read_timeout(Duration::from_secs(5)).unwrap();
    paths.iter().map(|p| vars_seen(&c.get(p).expect("a response"))).collect()
}

fn vars_seen(r: &Response) -> Vec<(String, String)> {
    assert_eq!(r.status, 200);
    ["x-score", "x-seen", "x-grp", "x-err", "x-has-ptime"]
        .iter()
        .map(|h| (h.to_string(), r.headers.get(h).unwrap_or("").to_owned()))
        .collect()
}

fn header<'a>(seen: &'a [(String, String)], name: &str) -> &'a str {
    seen.iter().find(|(n, _)| n == name).map_or("", |(_, v)| v.as_str())
}

/// Runs the scenario through rampart, then through haproxy when there is one, and
/// checks both saw the same. Returns rampart's view.
fn both(test: &str, cfg: &str, agent: SocketAddr, paths: &[&str]) -> Vec<Vec<(String, String)>> {
    let ours = run(&http_common::binary(), cfg, agent, paths);
    if let Some(haproxy) = haproxy_or_skip(test) {
        let theirs = run(&haproxy, cfg, agent, paths);
        assert_eq!(ours, theirs, "{test}: rampart (left) and haproxy (right) differ");
    }
    ours
}

#[test]
fn agent_answers_become_variables_on_event_and_group() {
    let dir = http_common::Files::new("spoe-vars");
    let Some(agent) = py_agent("agent_answers_become_variables_on_event_and_group", &dir) else { return };
    let cfg = haproxy_cfg(&dir.write("spoe.conf", SPOE_CONF));
    let seen = both("agent_answers_become_variables_on_event_and_group", &cfg, agent.addr, &["/a", "/grp/x", "/b"]);
    // the event's message ran for each request, on one reused agent connection
    for s in &seen {
        assert_eq!(header(s, "x-score"), "42", "{s:?}");
        assert_eq!(header(s, "x-seen"), "127.0.0.1|rampart.test", "{s:?}");
        assert_eq!(header(s, "x-err"), "", "{s:?}");
        assert_eq!(header(s, "x-has-ptime"), "yes", "{s:?}");
    }
    // only `/grp...` sends the group, whose answer is its own variable
    assert_eq!(header(&seen[0], "x-grp"), "");
    assert_eq!(header(&seen[1], "x-grp"), "group:/grp/x");
    assert_eq!(header(&seen[2], "x-grp"), "");
}

#[test]
fn set_on_error_reports_a_stalling_agent_and_the_stream_goes_on() {
    let dir = http_common::Files::new("spoe-stall");
    let cfg = haproxy_cfg(&dir.write("spoe.conf", SPOE_CONF));
    let agent = bad_agent(Misbehave::Stall);
    let started = std::time::Instant::now();
    let seen = both("set_on_error_reports_a_stalling_agent_and_the_stream_goes_on", &cfg, agent, &["/a", "/grp"]);
    // `timeout processing` (300ms) ended each wait: error 1, nothing else set
    for s in &seen {
        assert_eq!((header(s, "x-err"), header(s, "x-score"), header(s, "x-has-ptime")), ("1", "", "yes"), "{s:?}");
    }
    assert!(started.elapsed() >= Duration::from_millis(600), "each request waited for the agent");
}

#[test]
fn set_on_error_reports_an_agent_answering_garbage() {
    let dir = http_common::Files::new("spoe-garbage");
    let cfg = haproxy_cfg(&dir.write("spoe.conf", SPOE_CONF));
    let agent = bad_agent(Misbehave::Garbage);
    let seen = both("set_on_error_reports_an_agent_answering_garbage", &cfg, agent, &["/a"]);
    // HAProxy keeps the frame for another agent connection, so the stream waits until
    // `timeout processing`: error 1 (timeout)
    assert_eq!((header(&seen[0], "x-err"), header(&seen[0], "x-score")), ("1", ""), "{seen:?}");
    assert_eq!(header(&seen[0], "x-has-ptime"), "yes", "{seen:?}");
    // `no option async` too (checked against haproxy 2.6.12)
    let sync = haproxy_cfg(&dir.write("sync.conf", SPOE_CONF.replace("option pipelining", "no option async")));
    let seen = both("set_on_error_reports_an_agent_answering_garbage (no async)", &sync, agent, &["/a"]);
    assert_eq!(header(&seen[0], "x-err"), "1", "{seen:?}");
}

#[test]
fn an_unreachable_agent_is_an_error_not_a_failure() {
    let dir = http_common::Files::new("spoe-refused");
    let cfg = haproxy_cfg(&dir.write("spoe.conf", SPOE_CONF));
    let refused = rampart_testkit::closed_port();
    let seen = both("an_unreachable_agent_is_an_error_not_a_failure", &cfg, refused, &["/a", "/b"]);
    for s in &seen {
        assert_eq!((header(s, "x-err"), header(s, "x-score")), ("1", ""), "{s:?}");
    }
}

#[test]
fn concurrent_streams_each_get_their_answer() {
    let dir = http_common::Files::new("spoe-pipelining");
    let Some(agent) = py_agent("concurrent_streams_each_get_their_answer", &dir) else { return };
    let cfg = haproxy_cfg(&dir.write("spoe.conf", SPOE_CONF));
    let proxy = http_common::start_binary(http_common::binary(), &cfg, &[("agent", agent.addr)]);
    let addr = proxy.addr("fe1");
    let workers: Vec<_> = (0..8)
        .map(|i| {
            std::thread::spawn(move || {
                let mut c = rampart_testkit::RawClient::connect(addr).unwrap();
                c.set_read_timeout(Duration::from_secs(5)).unwrap();
                (0..5).map(|j| vars_seen(&c.get(&format!("/grp/{i}/{j}")).unwrap())).collect::<Vec<_>>()
            })
        })
        .collect();
    for (i, w) in workers.into_iter().enumerate() {
        for (j, s) in w.join().unwrap().iter().enumerate() {
            assert_eq!(header(s, "x-score"), "42", "{s:?}");
            assert_eq!(header(s, "x-grp"), format!("group:/grp/{i}/{j}"), "{s:?}");
        }
    }
}

#[test]
fn bad_spoe_files_stop_startup_with_their_line() {
    let dir = http_common::Files::new("spoe-bad");
    let spoe = dir.write("spoe.conf", "[iprep]\nspoe-agent a\n  use-backend agents\n  option force-set-var\n");
    let cfg = dir.write(
        "h.cfg",
        haproxy_cfg(&spoe)
            .replace("fd@${fe1}", "127.0.0.1:65001")
            .replace("${agent_addr}:${agent_port}", "127.0.0.1:1"),
    );
    let out = Command::new(http_common::binary()).args(["-c", "-f", &cfg]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains(&format!("parsing [{spoe}:4] : 'option force-set-var' is not supported yet")), "{err}");
    // HAProxy's reg-test spoe/wrong_init: `filter spoe` without a file
    let cfg2 = dir.write("h2.cfg", "frontend f\n  bind 127.0.0.1:0\n  filter spoe\n");
    let out = Command::new(http_common::binary()).args(["-c", "-f", &cfg2]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing config file"));
    // an event rampart does not send on yet
    let later = SPOE_CONF.replace("on-frontend-http-request", "on-http-response");
    let spoe = dir.write("later.conf", later);
    let cfg = dir.write(
        "h3.cfg",
        haproxy_cfg(&spoe)
            .replace("fd@${fe1}", "127.0.0.1:65001")
            .replace("${agent_addr}:${agent_port}", "127.0.0.1:1"),
    );
    let out = Command::new(http_common::binary()).args(["-c", "-f", &cfg]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("'event on-http-response' is not supported yet"), "{err}");
}

/// haproxyspoa's server made to announce `pipelining,async` and to run the handlers
/// of the frames of a connection at once: `/p/N` answers after (4 - N) tenths of a
/// second, so the frames are answered in the reverse order; `most` is the most frames
/// the agent had in hand at once.
const PIPELINED_PY: &str = r#"
import asyncio
from haproxyspoa.spoa_server import SpoaServer, SpoaConnection
from haproxyspoa.payloads.ack import AckPayload
from haproxyspoa.payloads.agent_hello import AgentHelloPayload, AgentCapabilities
from haproxyspoa.spoa_frame import Frame, AgentHelloFrame

agent = SpoaServer()
state = {"inflight": 0, "max": 0}

@agent.handler("slow-echo")
async def slow_echo(path, **kw):
    state["inflight"] += 1
    state["max"] = max(state["max"], state["inflight"])
    n = int(str(path).rsplit("/", 1)[1])
    await asyncio.sleep(0.1 * (4 - n))
    state["inflight"] -= 1
    return AckPayload().set_txn_var("echo", str(path)).set_txn_var("most", state["max"])

class Pipelined(SpoaConnection):
    async def handle_hello_handshake(self, frame):
        caps = AgentCapabilities().support_pipelining().support_async()
        hello = AgentHelloFrame(payload=AgentHelloPayload(capabilities=caps),
                                stream_id=frame.headers.stream_id, frame_id=frame.headers.frame_id)
        await hello.write_frame(self.writer)

async def handle(reader, writer):
    conn = Pipelined(writer, agent.handlers)
    await conn.handle_hello_handshake(await Frame.read_frame(reader))
    tasks = set()
    while True:
        frame = await Frame.read_frame(reader)
        if frame.headers.is_haproxy_disconnect():
            return
        if frame.headers.is_haproxy_notify():
            t = asyncio.create_task(conn.handle_haproxy_notify(frame))
            tasks.add(t)
            t.add_done_callback(tasks.discard)

async def main():
    server = await asyncio.start_server(handle, host="127.0.0.1", port=0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()

asyncio.run(main())
"#;

const PIPELINED_CONF: &str = "\
[e]
spoe-agent a
    messages slow-echo
    option var-prefix pfx
    option set-on-error err
    maxconnrate 1
    timeout hello 2s
    timeout idle 30s
    timeout processing 3s
    use-backend agents
spoe-message slow-echo
    args path=path
    event on-frontend-http-request
";

/// Four clients at once through `binary`: (path, echo, err) of each, and the most
/// frames the agent had in hand at once.
fn four_at_once(binary: &std::path::Path, cfg: &str, agent: SocketAddr) -> (Vec<(String, String, String)>, i64) {
    let proxy = http_common::start_binary(binary, cfg, &[("agent", agent)]);
    let addr = proxy.addr("fe1");
    let workers: Vec<_> = (0..4)
        .map(|i| {
            std::thread::spawn(move || {
                let mut c = rampart_testkit::RawClient::connect(addr).unwrap();
                c.set_read_timeout(Duration::from_secs(5)).unwrap();
                let path = format!("/p/{i}");
                let r = c.get(&path).unwrap();
                let h = |n: &str| r.headers.get(n).unwrap_or("").to_owned();
                ((path, h("x-echo"), h("x-err")), h("x-most").parse::<i64>().unwrap_or(0))
            })
        })
        .collect();
    let got: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    let most = got.iter().map(|g| g.1).max().unwrap_or(0);
    (got.into_iter().map(|g| g.0).collect(), most)
}

#[test]
fn a_pipelining_haproxyspoa_agent_answers_frames_in_flight_on_one_connection() {
    let test = "a_pipelining_haproxyspoa_agent_answers_frames_in_flight_on_one_connection";
    let dir = http_common::Files::new("spoe-pypipe");
    let Some(agent) = py_agent_running(test, &dir, PIPELINED_PY) else { return };
    let spoe = dir.write("spoe.conf", PIPELINED_CONF);
    let cfg = format!(
        "{}frontend fe1\n  bind fd@${{fe1}}\n  filter spoe engine e config {spoe}\n  \
         http-request return status 200 hdr X-Echo \"%[var(txn.pfx.echo)]\" hdr X-Err \"%[var(txn.pfx.err)]\" \
         hdr X-Most \"%[var(txn.pfx.most)]\"\n\
         backend agents\n  mode tcp\n  server a1 ${{agent_addr}}:${{agent_port}}\n",
        http_common::PREAMBLE
    );
    let (ours, most) = four_at_once(&http_common::binary(), &cfg, agent.addr);
    for (path, echo, err) in &ours {
        assert_eq!((echo, err.as_str()), (path, ""), "{ours:?}");
    }
    // one connection (maxconnrate 1), the agent held several frames of it at once
    assert!(most >= 2, "the agent never had two frames at once: {most}");
    if let Some(haproxy) = haproxy_or_skip(test) {
        let (theirs, _) = four_at_once(&haproxy, &cfg, agent.addr);
        assert_eq!(ours, theirs, "{test}: rampart (left) and haproxy (right) differ");
    }
}
