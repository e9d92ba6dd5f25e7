//! SPOE NOTIFY fragmentation through the binary (`option send-frag-payload`, on by
//! default): a NOTIFY larger than the max-frame-size goes to an agent that announced
//! `fragmentation` as a NOTIFY frame without FIN then UNSET frames, the last with FIN,
//! cut where HAProxy 2.6 cuts; an agent without the capability, `no option
//! send-frag-payload` and an agent's fragmented ACK (HAProxy 2.6 never takes them) end
//! in `set-on-error`. Each scenario runs through haproxy 2.6 with the same agent when it
//! is installed: the client's answers and the frames the agent saw must be the same.
//!
//! The agent is written here: it reassembles the fragments of each NOTIFY and answers
//! with the length and a checksum of the `big` argument and the `n` argument.

#![allow(clippy::disallowed_types)] // the test agent's threads, not the request path

mod http_common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rampart_proto::spoe::frame::{decode_notify, encode_ack};
use rampart_proto::spoe::{
    begin_frame, end_frame, next_frame, Action, AgentHello, Data, FrameType, HaproxyHello, VarScope, MAX_FRAME_SIZE,
};
use rampart_testkit::{haproxy_or_skip, Running};

/// What the agent saw of one NOTIFY: each frame's (type, FIN, payload length).
type Frames = Vec<(FrameType, bool, usize)>;

#[derive(Clone, Copy)]
struct AgentConf {
    caps: &'static str,
    /// Sends each ACK in two fragments.
    frag_ack: bool,
}

struct Agent {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Frames>>>,
}

impl Agent {
    fn take(&self) -> Vec<Frames> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

fn agent(conf: AgentConf) -> Agent {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Arc<Mutex<Vec<Frames>>> = Arc::default();
    let s = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let s = s.clone();
            std::thread::spawn(move || serve(conn, conf, &s));
        }
    });
    Agent { addr, seen }
}

fn serve(mut conn: TcpStream, conf: AgentConf, seen: &Mutex<Vec<Frames>>) {
    let (mut buf, mut chunk) = (Vec::new(), [0u8; 4096]);
    let (mut frames, mut joined): (Frames, Vec<u8>) = (Vec::new(), Vec::new());
    loop {
        while let Ok(Some((f, n))) = next_frame(&buf, MAX_FRAME_SIZE) {
            match f.ty {
                FrameType::HaproxyHello => {
                    let h = HaproxyHello::decode(f.payload).unwrap();
                    let mut out = Vec::new();
                    let hello =
                        AgentHello { version: "2.0", max_frame_size: h.max_frame_size, capabilities: conf.caps };
                    hello.encode(&mut out).unwrap();
                    let _ = conn.write_all(&out);
                }
                FrameType::Notify | FrameType::Unset => {
                    frames.push((f.ty, f.is_fin(), f.payload.len()));
                    joined.extend_from_slice(f.payload);
                    if f.is_fin() {
                        let out = answer(&joined, (f.stream_id, f.frame_id), conf.frag_ack);
                        seen.lock().unwrap().push(std::mem::take(&mut frames));
                        joined.clear();
                        let _ = conn.write_all(&out);
                    }
                }
                _ => return,
            }
            buf.drain(..n);
        }
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// The ACK of a reassembled NOTIFY payload: `len` and `sum` of the `big` argument,
/// `n` as received; in two fragments with `frag`.
fn answer(payload: &[u8], ids: (u64, u64), frag: bool) -> Vec<u8> {
    let msgs = decode_notify(payload).expect("a reassembled NOTIFY");
    let arg = |name: &[u8]| msgs.iter().flat_map(|m| m.1.iter()).find(|a| a.0 == name).map(|a| a.1);
    let big = match arg(b"big") {
        Some(Data::Str(b)) => b.to_vec(),
        _ => Vec::new(),
    };
    let n = match arg(b"n") {
        Some(Data::Int64(v)) => v,
        _ => -1,
    };
    let sum: i64 = big.iter().enumerate().map(|(i, &b)| (i as i64 + 1) * i64::from(b)).sum();
    let set = |name: &'static [u8], v: i64| Action::SetVar { scope: VarScope::Txn, name, value: Data::Int64(v) };
    let mut out = Vec::new();
    encode_ack(&mut out, ids.0, ids.1, &[set(b"len", big.len() as i64), set(b"sum", sum), set(b"n", n)]).unwrap();
    if !frag {
        return out;
    }
    // the same payload in an ACK frame without FIN, then an UNSET frame with FIN
    let body = next_frame(&out, MAX_FRAME_SIZE).unwrap().unwrap().0.payload.to_vec();
    let mut frags = Vec::new();
    let half = body.len() / 2;
    for (ty, flags, part) in [(FrameType::Ack, 0, &body[..half]), (FrameType::Unset, 1, &body[half..])] {
        let at = begin_frame(&mut frags, ty, flags, ids.0, ids.1);
        frags.extend_from_slice(part);
        end_frame(&mut frags, at, MAX_FRAME_SIZE).unwrap();
    }
    frags
}

/// The SPOE file: `big` (header X-Big), `n` and the path, with `extra` agent lines.
fn spoe_conf(extra: &str) -> String {
    format!(
        "[e]\nspoe-agent a\n  messages m\n  option var-prefix pfx\n  option set-on-error err\n{extra}\
         \x20 max-frame-size 256\n  timeout hello 2s\n  timeout idle 30s\n  timeout processing 1s\n  use-backend agents\n\
         spoe-message m\n  args big=req.hdr(x-big) n=int(300) path=path\n  event on-frontend-http-request\n"
    )
}

fn cfg(spoe: &str) -> String {
    format!(
        "global\n  nbthread 1\n\
         defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         frontend fe1\n  bind fd@${{fe1}}\n  filter spoe engine e config {spoe}\n  \
         http-request return status 200 hdr X-Len \"%[var(txn.pfx.len)]\" hdr X-Sum \"%[var(txn.pfx.sum)]\" \
         hdr X-N \"%[var(txn.pfx.n)]\" hdr X-Err \"%[var(txn.pfx.err)]\"\n\
         backend agents\n  mode tcp\n  server a1 ${{agent_addr}}:${{agent_port}}\n"
    )
}

/// The X-Big value of `n` bytes.
fn big(n: usize) -> String {
    (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect()
}

/// One request with an X-Big of `n` bytes: (X-Len, X-Sum, X-N, X-Err).
fn ask(proxy: &Running, n: usize) -> [String; 4] {
    let mut c = http_common::client(proxy);
    c.set_read_timeout(Duration::from_secs(5)).unwrap();
    c.send(format!("GET /f HTTP/1.1\r\nHost: t\r\nX-Big: {}\r\n\r\n", big(n))).unwrap();
    let r = c.read_response().expect("a response");
    assert_eq!(r.status, 200);
    ["x-len", "x-sum", "x-n", "x-err"].map(|h| r.headers.get(h).unwrap_or("").to_owned())
}

/// What the agent answers for an X-Big of `n` bytes.
fn expected(n: usize) -> [String; 4] {
    let sum: i64 = big(n).bytes().enumerate().map(|(i, b)| (i as i64 + 1) * i64::from(b)).sum();
    [n.to_string(), sum.to_string(), "300".into(), String::new()]
}

/// Runs `scenario` through rampart then, when installed, haproxy with the same agent:
/// both must give the same answers and the agent must see the same frames.
fn both<T: PartialEq + std::fmt::Debug>(
    test: &str,
    cfg: &str,
    agent: &Agent,
    scenario: impl Fn(&Running) -> T,
) -> (T, Vec<Frames>) {
    let proxy = http_common::start_binary(http_common::binary(), cfg, &[("agent", agent.addr)]);
    let ours = scenario(&proxy);
    drop(proxy);
    let seen = agent.take();
    if let Some(haproxy) = haproxy_or_skip(test) {
        let proxy = http_common::start_binary(&haproxy, cfg, &[("agent", agent.addr)]);
        let theirs = scenario(&proxy);
        drop(proxy);
        assert_eq!(ours, theirs, "{test}: rampart (left) and haproxy (right) differ");
        assert_eq!(seen, agent.take(), "{test}: the agent saw other frames from rampart (left) than haproxy (right)");
    }
    (ours, seen)
}

const SIZES: [usize; 8] = [10, 150, 193, 194, 195, 230, 500, 1200];

#[test]
fn large_notify_frames_are_fragmented_for_an_agent_that_takes_them() {
    let dir = http_common::Files::new("spoe-frag");
    for caps in ["fragmentation", "pipelining,async,fragmentation"] {
        let agent = agent(AgentConf { caps, frag_ack: false });
        let cfg = cfg(&dir.write("spoe.conf", spoe_conf("")));
        let (answers, seen) =
            both("large_notify_frames_are_fragmented_for_an_agent_that_takes_them", &cfg, &agent, |p| {
                SIZES.iter().map(|&n| ask(p, n)).collect::<Vec<_>>()
            });
        for (n, got) in SIZES.iter().zip(&answers) {
            assert_eq!(*got, expected(*n), "{caps}: X-Big of {n} bytes");
        }
        assert_eq!(seen.len(), SIZES.len(), "{seen:?}");
        for (n, frames) in SIZES.iter().zip(&seen) {
            // 256 - 32 bytes of payload per frame at most
            assert!(frames.iter().all(|f| f.2 <= 224), "{n}: {frames:?}");
            let total: usize = frames.iter().map(|f| f.2).sum();
            let many = total > 224;
            assert_eq!(frames.len() > 1, many, "{n}: {frames:?}");
            assert_eq!(frames[0].0, FrameType::Notify, "{n}: {frames:?}");
            assert!(frames[1..].iter().all(|f| f.0 == FrameType::Unset), "{n}: {frames:?}");
            let fins: Vec<bool> = frames.iter().map(|f| f.1).collect();
            assert_eq!(fins.iter().filter(|f| **f).count(), 1, "{n}: {frames:?}");
            assert!(fins[fins.len() - 1], "{n}: {frames:?}");
        }
        // 1200 bytes of value: six frames
        assert_eq!(seen[SIZES.len() - 1].len(), 6, "{seen:?}");
    }
}

#[test]
fn without_the_agent_capability_or_the_option_large_frames_fail() {
    let dir = http_common::Files::new("spoe-nofrag");
    // an agent that does not announce `fragmentation`
    let agent = agent(AgentConf { caps: "pipelining", frag_ack: false });
    let cfg1 = cfg(&dir.write("spoe.conf", spoe_conf("")));
    let (answers, seen) = both("without_the_agent_capability_or_the_option_large_frames_fail", &cfg1, &agent, |p| {
        [ask(p, 10), ask(p, 600)]
    });
    assert_eq!(answers[0], expected(10));
    assert_eq!(answers[1][..3], ["", "", ""], "{answers:?}");
    assert_ne!(answers[1][3], "", "{answers:?}");
    assert_eq!(seen.len(), 1, "{seen:?}");
    // `no option send-frag-payload`: too big (3), whatever the agent announces
    let agent = self::agent(AgentConf { caps: "fragmentation", frag_ack: false });
    let cfg2 = cfg(&dir.write("nofrag.conf", spoe_conf("  no option send-frag-payload\n")));
    let (answers, seen) =
        both("without_the_agent_capability_or_the_option_large_frames_fail (no option)", &cfg2, &agent, |p| {
            [ask(p, 10), ask(p, 600)]
        });
    assert_eq!(answers[0], expected(10));
    assert_eq!(answers[1], ["", "", "", "3"].map(String::from), "{answers:?}");
    assert_eq!(seen.len(), 1, "{seen:?}");
}

#[test]
fn a_fragmented_ack_is_refused() {
    let dir = http_common::Files::new("spoe-fragack");
    let agent = agent(AgentConf { caps: "pipelining,fragmentation", frag_ack: true });
    let cfg = cfg(&dir.write("spoe.conf", spoe_conf("")));
    let (answers, _) = both("a_fragmented_ack_is_refused", &cfg, &agent, |p| ask(p, 10));
    // rampart's DISCONNECT (status 10) is not answered: the agent closes, and the
    // frame fails at once with 256 + 1 (I/O), as with haproxy 2.6
    assert_eq!(answers, ["", "", "", "257"].map(String::from), "{answers:?}");
}
