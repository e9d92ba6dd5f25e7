//! HTTP/2 floods and bad peers through the binary (issue 21 §5): for each flood a raw
//! HTTP/2 client sends it while another, well-behaved client is served; the flood
//! ends with the RFC 9113 error the proxy answers (GOAWAY ENHANCE_YOUR_CALM once the
//! connection's glitches reach the threshold), the proxy's memory stays bounded, and
//! the other client is served during and after. `fc_glitches` and
//! `tune.h2.fe.glitches-threshold` are compared with HAProxy 3.2 (when
//! `/usr/local/bin/haproxy-3.2` is installed), frames on closed streams with haproxy
//! 2.6 (`RAMPART_REQUIRE_HAPROXY=1` makes its absence a failure).

mod http2_client;
mod http_common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http2_client::{body_of, field, Event, H2Client};
use http_common::{binary, PREAMBLE};
use rampart_proto::h2::frame::{
    encode_data, encode_headers, encode_ping, encode_priority, encode_rst_stream, encode_settings,
    encode_window_update, PREFACE,
};
use rampart_proto::h2::hpack::{Encoder, Flags};
use rampart_proto::h2::{next_frame, ErrorCode, Frame, Priority, Setting, SettingId};
use rampart_testkit::{haproxy_or_skip, Proxy, Running};

const WAIT: Duration = Duration::from_secs(5);
/// How much the proxy's resident memory may grow during a flood.
const RSS_GROWTH_MAX_KB: u64 = 48 * 1024;
/// Frames a control-frame flood sends: past the default glitch threshold (1000
/// glitches, one per 100 frames of overhead).
const CONTROL_FLOOD: usize = 120_000;

/// A frontend answering every request itself with the connection's glitches;
/// `/hold` waits for a request body (a stream that stays open).
fn config(global: &str) -> String {
    format!(
        "global\n  nbthread 1\n{global}defaults\n  mode http\n  timeout client 10s\n  timeout server 5s\n  \
         timeout connect 1s\n\
         frontend fe1\n  bind fd@${{fe1}} proto h2\n  \
         http-request wait-for-body time 8s if {{ path /hold }}\n  \
         http-request return status 200 content-type text/plain lf-string \"g=%[fc_glitches]\"\n"
    )
}

fn start(bin: &Path, cfg: &str) -> Running {
    Proxy::new(bin).listener("fe1").config(cfg).start().expect("the proxy starts")
}

/// The resident memory of process `pid`, in KiB.
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the proxy runs");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A HEADERS frame of a request (a fresh encoder: literal fields only).
fn request(id: u32, method: &str, path: &str, end_stream: bool) -> Vec<u8> {
    let fields = [(":method", method), (":scheme", "http"), (":path", path), (":authority", "t.test")];
    let mut block = Vec::new();
    Encoder::new().encode(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes(), Flags::NONE)), &mut block);
    let mut out = Vec::new();
    encode_headers(&mut out, id, &block, end_stream, 16384);
    out
}

/// A well-behaved client's GET on a new connection: its status and body.
fn normal_get(addr: SocketAddr) -> (Option<String>, Vec<u8>) {
    let mut c = H2Client::connect(addr);
    c.get(1, "/normal");
    let events = c.until_end(1, WAIT);
    let status = events.iter().find_map(|e| match e {
        Event::Headers { id: 1, fields, .. } => field(fields, ":status").map(str::to_owned),
        _ => None,
    });
    (status, body_of(&events, 1))
}

/// What a flood received.
#[derive(Debug, Default)]
struct Outcome {
    /// The GOAWAY's code, if one came.
    goaway: Option<ErrorCode>,
    /// RST_STREAM frames received: (stream, code).
    resets: Vec<(u32, ErrorCode)>,
    /// `:status` of the responses received.
    statuses: Vec<u16>,
    /// The highest resident memory seen during the flood, and before it (KiB).
    rss_max: u64,
    rss_before: u64,
}

/// Sends `setup` then `flood` on a new connection (a writer thread), reads what the
/// proxy answers until GOAWAY or the close, and meanwhile has a normal client served
/// once a third of the flood is written. Checks memory as it goes.
fn flood(proxy: &Running, setup: Vec<u8>, flood: Vec<u8>) -> Outcome {
    let addr = proxy.addr("fe1");
    let pid = proxy.pid();
    let mut out = Outcome { rss_before: rss_kb(pid), ..Outcome::default() };
    let mut sock = TcpStream::connect(addr).unwrap();
    let mut first = PREFACE.to_vec();
    encode_settings(&mut first, &[]);
    first.extend_from_slice(&setup);
    sock.write_all(&first).unwrap();
    let written = Arc::new(AtomicUsize::new(0));
    let total = flood.len();
    let writer = {
        let (mut sock, written) = (sock.try_clone().unwrap(), written.clone());
        std::thread::spawn(move || {
            for chunk in flood.chunks(16 * 1024) {
                if sock.write_all(chunk).is_err() {
                    return; // the proxy closed: what matters is what it answered
                }
                written.fetch_add(chunk.len(), Ordering::Relaxed);
            }
        })
    };
    sock.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut buf, mut chunk, mut served_during) = (Vec::new(), vec![0u8; 64 * 1024], false);
    let mut dec = rampart_proto::h2::hpack::Decoder::new(4096);
    while Instant::now() < deadline && out.goaway.is_none() {
        if !served_during && written.load(Ordering::Relaxed) >= total / 3 {
            served_during = true;
            let (status, _) = normal_get(addr);
            assert_eq!(status.as_deref(), Some("200"), "another client is served during the flood");
        }
        out.rss_max = out.rss_max.max(rss_kb(pid));
        match sock.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => continue,
            Err(_) => break,
        }
        let mut used = 0;
        while let Ok(Some((frame, n))) = next_frame(&buf[used..], 1 << 24) {
            used += n;
            match frame {
                Frame::GoAway { error, .. } => out.goaway = Some(error),
                Frame::RstStream { stream_id, error } => out.resets.push((stream_id, error)),
                Frame::Headers { fragment, .. } => {
                    let _ = dec.decode::<rampart_proto::h2::hpack::HpackError, _>(fragment, |n, v, _| {
                        if n == b":status" {
                            out.statuses.push(std::str::from_utf8(v).unwrap().parse().unwrap());
                        }
                        Ok(())
                    });
                }
                _ => {}
            }
        }
        buf.drain(..used);
    }
    drop(sock);
    writer.join().unwrap();
    out.rss_max = out.rss_max.max(rss_kb(pid));
    assert!(
        out.rss_max < out.rss_before + RSS_GROWTH_MAX_KB,
        "memory stays bounded: {} KiB before, {} KiB at most",
        out.rss_before,
        out.rss_max
    );
    let (status, _) = normal_get(addr);
    assert_eq!(status.as_deref(), Some("200"), "another client is served after the flood");
    out
}

fn repeat(unit: &[u8], n: usize) -> Vec<u8> {
    unit.repeat(n)
}

#[test]
fn rapid_reset_ends_with_enhance_your_calm() {
    // CVE-2023-44487: streams opened and reset at once, forever
    let proxy = start(&binary(), &config(""));
    let mut unit = Vec::new();
    for i in 0..3000u32 {
        let id = 1 + 2 * i;
        unit.extend_from_slice(&request(id, "GET", "/reset", true));
        encode_rst_stream(&mut unit, id, ErrorCode::Cancel);
    }
    let out = flood(&proxy, Vec::new(), unit);
    assert_eq!(out.goaway, Some(ErrorCode::EnhanceYourCalm), "{out:?}");
}

#[test]
fn control_frame_floods_end_with_enhance_your_calm() {
    let proxy = start(&binary(), &config(""));
    let mut ping = Vec::new();
    encode_ping(&mut ping, [1; 8]);
    let mut settings = Vec::new();
    encode_settings(&mut settings, &[Setting { id: SettingId::EnablePush, value: 0 }]);
    let mut priority = Vec::new();
    encode_priority(&mut priority, 3, Priority { exclusive: false, dependency: 0, weight: 16 });
    let mut window = Vec::new();
    encode_window_update(&mut window, 0, 1);
    for (name, unit) in [("PING", ping), ("SETTINGS", settings), ("PRIORITY", priority), ("WINDOW_UPDATE", window)] {
        let out = flood(&proxy, Vec::new(), repeat(&unit, CONTROL_FLOOD));
        assert_eq!(out.goaway, Some(ErrorCode::EnhanceYourCalm), "{name} flood: {out:?}");
    }
}

#[test]
fn empty_data_flood_ends_with_enhance_your_calm() {
    let proxy = start(&binary(), &config(""));
    let mut empty = Vec::new();
    encode_data(&mut empty, 1, b"", false);
    let out = flood(&proxy, request(1, "POST", "/hold", false), repeat(&empty, CONTROL_FLOOD));
    assert_eq!(out.goaway, Some(ErrorCode::EnhanceYourCalm), "{out:?}");
}

#[test]
fn continuation_flood_ends_with_enhance_your_calm() {
    // a header block that never ends, in empty CONTINUATION frames (no memory grows,
    // only the frame count)
    let proxy = start(&binary(), &config(""));
    let mut setup = request(1, "GET", "/", true);
    setup[4] &= !0x4; // no END_HEADERS
    let cont = [0u8, 0, 0, 0x9, 0, 0, 0, 0, 1]; // CONTINUATION, stream 1, no flag
    let out = flood(&proxy, setup, repeat(&cont, 100_000));
    assert_eq!(out.goaway, Some(ErrorCode::EnhanceYourCalm), "{out:?}");
    // and in large ones: the block is capped
    let mut setup = request(1, "GET", "/", true);
    setup[4] &= !0x4;
    let mut big = vec![0u8, 0x40, 0, 0x9, 0, 0, 0, 0, 1]; // 16 KiB CONTINUATION
    big.resize(9 + 16384, b'a');
    let out = flood(&proxy, setup, repeat(&big, 64));
    assert_eq!(out.goaway, Some(ErrorCode::EnhanceYourCalm), "{out:?}");
}

#[test]
fn streams_past_the_limit_are_refused_then_the_connection_ends() {
    let proxy = start(&binary(), &config("  tune.h2.max-concurrent-streams 10\n"));
    let mut setup = Vec::new();
    for i in 0..10u32 {
        setup.extend_from_slice(&request(1 + 2 * i, "POST", "/hold", false));
    }
    let mut unit = Vec::new();
    for i in 10..1500u32 {
        unit.extend_from_slice(&request(1 + 2 * i, "GET", "/", true));
    }
    let out = flood(&proxy, setup, unit);
    assert!(out.resets.iter().take(10).all(|r| r.1 == ErrorCode::RefusedStream), "{:?}", &out.resets[..10]);
    assert_eq!(out.resets.first().map(|r| r.0), Some(21), "the 11th stream is the first refused");
    assert_eq!(out.goaway, Some(ErrorCode::EnhanceYourCalm), "{:?}", out.goaway);
}

#[test]
fn frames_on_closed_streams_are_reset_then_the_connection_ends() {
    let proxy = start(&binary(), &config(""));
    let mut data = Vec::new();
    encode_data(&mut data, 1, b"late", false);
    // DATA keeps coming on a stream the client ended (half-closed, then closed)
    let out = flood(&proxy, request(1, "GET", "/", true), repeat(&data, 5000));
    assert!(!out.resets.is_empty());
    assert!(out.resets.iter().all(|r| *r == (1, ErrorCode::StreamClosed)), "{:?}", &out.resets[..3]);
    assert_eq!(out.goaway, Some(ErrorCode::EnhanceYourCalm));
}

/// A header block that inserts one 4 KiB field in the dynamic table, then refers to
/// it `refs` times: a few bytes on the wire, `refs` × 4 KiB decoded.
fn header_list_bomb(id: u32, refs: usize) -> Vec<u8> {
    let mut block = Vec::new();
    let fields = [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "t.test")];
    let mut enc = Encoder::new();
    enc.encode(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes(), Flags::NONE)), &mut block);
    // literal with incremental indexing, new name "x-bomb", 4000-byte value
    block.push(0x40);
    block.push(6);
    block.extend_from_slice(b"x-bomb");
    block.extend_from_slice(&[0x7f, 0xa1, 0x1e]); // 4000 = 127 + 3873 (0xf21 as 7-bit groups)
    block.extend(std::iter::repeat_n(b'b', 4000));
    // indexed: dynamic entry 62
    block.extend(std::iter::repeat_n(0x80 | 62, refs));
    let mut out = Vec::new();
    encode_headers(&mut out, id, &block, true, 1 << 20);
    out
}

/// The answer to a header-list bomb (10 000 references to a 4 KB field: 40 MB once
/// decoded), the growth of the proxy's memory meanwhile (KiB).
fn header_list_bomb_answer(bin: &Path, cfg: &str) -> (Vec<Event>, u64) {
    let proxy = start(bin, cfg);
    let mut c = H2Client::connect(proxy.addr("fe1"));
    let before = rss_kb(proxy.pid());
    c.send(&header_list_bomb(1, 10_000));
    let events = c.until_end(1, WAIT);
    let grown = rss_kb(proxy.pid()).saturating_sub(before);
    assert_eq!(normal_get(proxy.addr("fe1")).0.as_deref(), Some("200"), "another client is served");
    (events, grown)
}

#[test]
fn hpack_bombs_are_refused_within_bounds() {
    let cfg = format!(
        "{PREAMBLE}frontend fe1\n  bind fd@${{fe1}} proto h2\n  http-request return status 200 content-type \
         text/plain string ok\n"
    );
    let (ours, grown) = header_list_bomb_answer(&binary(), &cfg);
    assert_eq!(ours, [Event::Reset { id: 1, code: ErrorCode::ProtocolError }]);
    assert!(grown < RSS_GROWTH_MAX_KB, "{grown} KiB");
    let proxy = start(&binary(), &cfg);
    // the table: a size update past our SETTINGS_HEADER_TABLE_SIZE (4096)
    let mut c = H2Client::connect(proxy.addr("fe1"));
    let mut block = vec![0x3f, 0xe1, 0xff, 0x03]; // dynamic table size update to 65536
    Encoder::new().encode([(&b":method"[..], &b"GET"[..], Flags::NONE)], &mut block);
    let mut frame = Vec::new();
    encode_headers(&mut frame, 1, &block, true, 16384);
    c.send(&frame);
    let events = c.until_end(1, WAIT);
    assert!(events.iter().any(|e| matches!(e, Event::GoAway { code: ErrorCode::CompressionError, .. })), "{events:?}");
    assert_eq!(normal_get(proxy.addr("fe1")).0.as_deref(), Some("200"));
    // haproxy 2.6 ends the whole connection (its decoder cannot go on); rampart
    // decodes the block to its end and refuses the stream only (RFC 9113 §8.2.3
    // allows either; see docs/COMPATIBILITY.md)
    let Some(haproxy) = haproxy_or_skip("hpack_bombs_are_refused_within_bounds") else { return };
    let theirs = header_list_bomb_answer(&haproxy, &cfg).0;
    assert!(theirs.contains(&Event::GoAway { last_id: 0, code: ErrorCode::CompressionError }), "{theirs:?}");
}

/// HAProxy 3.2 beside 2.6, or `None` after saying the comparison is skipped.
fn haproxy32_or_skip(test: &str) -> Option<PathBuf> {
    let path = PathBuf::from("/usr/local/bin/haproxy-3.2");
    if Command::new(&path).arg("-v").output().is_ok_and(|o| o.status.success()) {
        return Some(path);
    }
    eprintln!("SKIPPED {test} against HAProxy 3.2: {} is not installed", path.display());
    None
}

/// Glitches both count (DATA on a closed stream, a WINDOW_UPDATE of 0), then a
/// request: the RST_STREAM codes and the `fc_glitches` it reads; with a threshold
/// of 3, the third glitch ends the connection.
fn glitch_story(bin: &Path, global: &str) -> (Vec<Event>, Vec<Event>) {
    let proxy = start(bin, &config(global));
    let mut c = H2Client::connect(proxy.addr("fe1"));
    c.get(1, "/");
    let mut events = c.until_end(1, WAIT);
    let mut frames = Vec::new();
    encode_data(&mut frames, 1, b"late", false);
    c.send(&frames);
    events.extend(c.until_end(1, WAIT));
    let mut frames = request(3, "POST", "/hold", false);
    encode_window_update(&mut frames, 3, 0);
    c.send(&frames);
    events.extend(c.until_end(3, WAIT));
    c.get(5, "/");
    events.extend(c.until_end(5, WAIT));
    // a second connection: three glitches (SETTINGS_INITIAL_WINDOW_SIZE reduced after
    // the first SETTINGS; HAProxy 3.2 does not end the connection on its threshold
    // for every kind of glitch, it does for this one)
    let mut c = H2Client::connect(proxy.addr("fe1"));
    let mut frames = Vec::new();
    for size in [60_000, 50_000, 40_000] {
        encode_settings(&mut frames, &[Setting { id: SettingId::InitialWindowSize, value: size }]);
    }
    c.send(&frames);
    let mut second = Vec::new();
    loop {
        let ev = c.next(WAIT);
        let end = matches!(ev, Event::GoAway { .. } | Event::Closed | Event::Timeout);
        second.push(ev);
        if end {
            break;
        }
    }
    (events, second)
}

fn resets_and_bodies(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Reset { id, code } => Some(format!("rst {id} {code:?}")),
            Event::Data { id, data, .. } if !data.is_empty() => {
                Some(format!("data {id} {}", String::from_utf8_lossy(data)))
            }
            Event::GoAway { code, .. } => Some(format!("goaway {code:?}")),
            _ => None,
        })
        .collect()
}

#[test]
fn fc_glitches_and_the_threshold_match_haproxy_3_2() {
    let global = "  tune.h2.fe.glitches-threshold 3\n";
    let (first, second) = glitch_story(&binary(), global);
    let ours = (resets_and_bodies(&first), resets_and_bodies(&second));
    assert_eq!(
        ours.0,
        ["data 1 g=0", "rst 1 StreamClosed", "rst 3 ProtocolError", "data 5 g=2"],
        "DATA on a closed stream, a WINDOW_UPDATE of 0: two glitches"
    );
    assert_eq!(ours.1.last().map(String::as_str), Some("goaway EnhanceYourCalm"), "{:?}", ours.1);
    let Some(haproxy32) = haproxy32_or_skip("fc_glitches_and_the_threshold_match_haproxy_3_2") else { return };
    let (first, second) = glitch_story(&haproxy32, global);
    let theirs = (resets_and_bodies(&first), resets_and_bodies(&second));
    assert_eq!(ours, theirs, "rampart, then HAProxy 3.2");
}

#[test]
fn data_on_a_closed_stream_is_reset_as_haproxy_2_6_resets_it() {
    let answer = |bin: &Path, cfg: &str| {
        let proxy = start(bin, cfg);
        let mut c = H2Client::connect(proxy.addr("fe1"));
        c.get(1, "/");
        let mut events = c.until_end(1, WAIT);
        c.data(1, b"late", false);
        c.get(3, "/");
        events.extend(c.until_end(3, WAIT));
        events
            .iter()
            .filter_map(|e| match e {
                Event::Reset { id, code } => Some(format!("rst {id} {code:?}")),
                Event::Headers { id, fields, .. } => Some(format!("{id} {}", field(fields, ":status").unwrap_or("-"))),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    // 2.6 has no fc_glitches: a plain answer
    let cfg = format!(
        "{PREAMBLE}frontend fe1\n  bind fd@${{fe1}} proto h2\n  http-request return status 200 content-type \
         text/plain string ok\n"
    );
    let ours = answer(&binary(), &cfg);
    assert_eq!(ours, ["1 200", "rst 1 StreamClosed", "3 200"]);
    let Some(haproxy) = haproxy_or_skip("data_on_a_closed_stream_is_reset_as_haproxy_2_6_resets_it") else { return };
    assert_eq!(ours, answer(&haproxy, &cfg), "rampart, then haproxy 2.6");
}

/// The frontend's `h2_*` fields of `show stat` after a connection that had a stream
/// answered, DATA on that closed stream (RST_STREAM STREAM_CLOSED), then a
/// WINDOW_UPDATE of 0 on the connection (GOAWAY PROTOCOL_ERROR).
fn h2_stats_after_errors(bin: &Path) -> Vec<(String, String)> {
    let cfg = "global\n  nbthread 1\n  stats socket ${testdir}/admin.sock level admin\ndefaults\n  mode http\n  \
         timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         frontend fe1\n  bind fd@${fe1} proto h2\n  http-request return status 200 content-type text/plain \
         string ok\n";
    let proxy = start(bin, cfg);
    let mut c = H2Client::connect(proxy.addr("fe1"));
    c.get(1, "/");
    c.until_end(1, WAIT);
    c.data(1, b"late", false);
    assert!(matches!(c.next(WAIT), Event::Reset { id: 1, code: ErrorCode::StreamClosed }));
    let mut wu = Vec::new();
    encode_window_update(&mut wu, 0, 0);
    c.send(&wu);
    assert!(matches!(c.next(WAIT), Event::GoAway { code: ErrorCode::ProtocolError, .. }));
    assert_eq!(c.next(WAIT), Event::Closed);
    // the connection lingers a while after an error (500 ms)
    std::thread::sleep(Duration::from_millis(1000));
    let out = cli(&proxy, "show stat");
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap().trim_start_matches("# ").split(',').collect();
    let row = lines.find(|l| l.starts_with("fe1,FRONTEND,")).expect("the frontend's row");
    header
        .iter()
        .zip(row.split(','))
        .filter(|(name, _)| name.starts_with("h2_"))
        .map(|(n, v)| ((*n).to_owned(), v.to_owned()))
        .collect()
}

fn cli(p: &Running, cmd: &str) -> String {
    let path = p.dir().join("admin.sock");
    let deadline = Instant::now() + WAIT;
    let mut s = loop {
        match std::os::unix::net::UnixStream::connect(&path) {
            Ok(s) => break s,
            Err(e) if Instant::now() > deadline => panic!("stats socket: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    s.write_all(format!("{cmd}\n").as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn the_frontend_h2_counters_match_haproxy_2_6() {
    let ours = h2_stats_after_errors(&binary());
    let get = |name: &str| ours.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    assert_eq!(get("h2_headers_rcvd"), Some("1"), "{ours:?}");
    // DATA counts on an open stream only, as in HAProxy
    assert_eq!(get("h2_data_rcvd"), Some("0"));
    assert_eq!(get("h2_backend_total_streams"), Some("1"), "HAProxy's name, the frontend's streams");
    assert_eq!(get("h2_backend_open_streams"), Some("0"));
    assert_eq!(get("h2_detected_strm_protocol_errors"), Some("0"), "STREAM_CLOSED is not one");
    assert_eq!(get("h2_rst_stream_resp"), Some("1"));
    assert_eq!(get("h2_goaway_resp"), Some("1"));
    assert_eq!(get("h2_detected_conn_protocol_errors"), Some("1"));
    assert_eq!(get("h2_open_connections"), Some("0"));
    assert_eq!(get("h2_total_connections"), Some("1"));
    let Some(haproxy) = haproxy_or_skip("the_frontend_h2_counters_match_haproxy_2_6") else { return };
    assert_eq!(ours, h2_stats_after_errors(&haproxy), "rampart, then haproxy 2.6");
}
