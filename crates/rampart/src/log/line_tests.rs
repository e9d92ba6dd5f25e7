//! Log line tests: the variables only a log line answers, rendered from a
//! [`StreamLog`], and HAProxy 2.6's default formats. Expected texts were taken from
//! haproxy 2.6.12 lines for the same exchanges (see tests/logging.rs for the live
//! comparison).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::format::{LfMode, LogFormat};
use super::{Cause, Phase, StreamLog};
use crate::sample::ctx::{ConnInfo, SampleCtx};
use crate::sample::expr::{CompileCx, Place, Site};
use crate::sample::testutil::*;
use rampart_cfg::model::{CLF_HTTP_LOG_FORMAT, HTTPS_LOG_FORMAT, HTTP_LOG_FORMAT, TCP_LOG_FORMAT};

/// 2009-02-06 12:14:14.655 UTC
fn date() -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(1_233_922_454_655)
}

/// A served request: head in 2 ms, connected 1 ms later in 5, response head 12 ms
/// later, the end 5 ms after.
fn served() -> StreamLog {
    let t0 = Instant::now();
    let ms = |n| Some(t0 + Duration::from_millis(n));
    let mut l = StreamLog::default();
    l.begin((date(), t0), (date(), t0), 0);
    l.head_done = ms(2);
    l.connect_start = ms(3);
    l.connected = ms(8);
    l.res_head = ms(20);
    l.end = ms(25);
    l.bytes_out = 2750;
    l.bytes_in = 120;
    l.status = Some(200);
    l.req_line.extend_from_slice(b"GET /index.html?a=1 HTTP/1.1");
    l
}

fn render_with(fmt: &str, l: &StreamLog, caps: &[Option<Vec<u8>>]) -> Result<String, String> {
    render_on(fmt, l, caps, None)
}

/// Renders `fmt` for a client at 10.0.1.2:33317, over TLS with `tls`.
fn render_on(
    fmt: &str,
    l: &StreamLog,
    caps: &[Option<Vec<u8>>],
    tls: Option<crate::tls::TlsInfo>,
) -> Result<String, String> {
    let cfg = config(CFG);
    let rt = runtime(&cfg);
    let mut cx = CompileCx::new(&cfg, 0, Site::Log);
    let lf = LogFormat::compile(fmt, &mut cx, LfMode::Log, &[Place::FeLogEnd]).map_err(|e| e.msg)?;
    let mut conn = ConnInfo::new(Some("10.0.1.2:33317".parse().unwrap()), -1);
    if let Some(t) = tls {
        conn.set_tls(t);
    }
    let ctx = SampleCtx {
        be: Some(1),
        srv: Some(0),
        status: l.status,
        req_caps: caps,
        log: Some(l),
        ..SampleCtx::new(&rt, &conn, 0)
    };
    let mut out = Vec::new();
    lf.render(&ctx, &mut out);
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn render(fmt: &str, l: &StreamLog) -> String {
    render_with(fmt, l, &[]).unwrap_or_else(|e| panic!("{fmt}: {e}"))
}

fn utc() -> bool {
    super::date::at(1_233_922_454, true).offset == 0
}

#[test]
fn handshake_time_counts_for_a_first_request_only() {
    // a first request whose connection spent 7 ms in its handshakes (the mux sets
    // its accept that long before the request's start)
    let t0 = Instant::now();
    let ms = |n| Some(t0 + Duration::from_millis(n));
    let mut l = StreamLog::default();
    l.begin((date(), t0), (date(), t0 + Duration::from_millis(7)), 0);
    l.head_done = ms(9);
    l.end = ms(12);
    l.status = Some(200);
    assert_eq!(render("%Th/%Ti/%TR/%Tq/%Tt", &l), "7/0/2/9/12");
    // a later request of the same connection: its accept is the previous end, 30 ms
    // of idle time before its start
    let mut l = StreamLog::default();
    l.begin((date(), t0), (date(), t0 + Duration::from_millis(30)), 30);
    l.head_done = ms(31);
    l.end = ms(33);
    l.status = Some(200);
    assert_eq!(render("%Th/%Ti/%TR/%Tq/%Tt", &l), "0/30/1/31/33");
}

#[test]
fn timers_sizes_and_termination_state() {
    let l = served();
    assert_eq!(render("%Th/%Ti/%TR/%Tq/%Tw/%Tc/%Tr/%Td/%Ta/%Tt/%Tu", &l), "0/0/2/2/0/5/12/6/25/25/25");
    assert_eq!(render("%ST %B %U %CC %CS %ts %tsc %rc %sq/%bq", &l), "200 2750 120 - - -- ---- 0 0/0");
    assert_eq!(render("%{+X}B", &l), "0ABE");
    let mut denied = StreamLog::default();
    denied.begin((date(), Instant::now()), (date(), Instant::now()), 0);
    denied.head_done = Some(Instant::now());
    denied.end = denied.head_done;
    denied.end_by(Cause::Proxy, Phase::Request);
    denied.status = Some(403);
    assert_eq!(render("%TR/%Tw/%Tc/%Tr %ST %ts %tsc", &denied), "0/-1/-1/-1 403 PR PR--");
}

#[test]
fn termination_codes_of_each_cause_and_phase() {
    for (cause, phase, code) in [
        (Cause::ClientAbort, Phase::Data, "CD"),
        (Cause::ClientTimeout, Phase::Request, "cR"),
        (Cause::ServerAbort, Phase::Connect, "SC"),
        (Cause::ServerTimeout, Phase::Headers, "sH"),
        (Cause::ServerTimeout, Phase::Connect, "sC"),
        (Cause::Proxy, Phase::Tarpit, "PT"),
        (Cause::Local, Phase::Request, "LR"),
        (Cause::Proxy, Phase::Headers, "PH"),
        (Cause::Internal, Phase::Request, "IR"),
        (Cause::ClientAbort, Phase::Queue, "CQ"),
        (Cause::Resource, Phase::Last, "RL"),
        (Cause::Down, Phase::Data, "DD"),
        (Cause::Killed, Phase::Data, "KD"),
    ] {
        let mut l = served();
        l.end_by(cause, phase);
        assert_eq!(render("%ts", &l), code);
        assert_eq!(render("%tsc", &l), format!("{code}--"));
    }
}

#[test]
fn dates() {
    if !utc() {
        return; // the expected texts are in UTC
    }
    let l = served();
    assert_eq!(render("%t|%tr", &l), "06/Feb/2009:12:14:14.655|06/Feb/2009:12:14:14.655");
    assert_eq!(
        render("%T|%trg|%trl|%Tl", &l),
        "06/Feb/2009:12:14:14 +0000|06/Feb/2009:12:14:14 +0000|06/Feb/2009:12:14:14 +0000|06/Feb/2009:12:14:14 +0000"
    );
    assert_eq!(render("%Ts %ms %{+X}Ts", &l), "1233922454 655 498C2996");
}

#[test]
fn request_parts_come_from_the_captured_line() {
    let l = served();
    assert_eq!(
        render("%{+Q}r|%HM|%HU|%HP|%HPO|%HQ|%HV", &l),
        "\"GET /index.html?a=1 HTTP/1.1\"|GET|/index.html?a=1|/index.html|/index.html|?a=1|HTTP/1.1"
    );
    let mut bad = served();
    bad.req_line.clear();
    assert_eq!(render("%{+Q}r %HM", &bad), "\"<BADREQ>\" <BADREQ>");
    // a client cannot forge a line: control characters and quotes are #XX-encoded
    let mut evil = served();
    evil.req_line.clear();
    evil.req_line.extend_from_slice(b"GET /a\"b\x1b[31m HTTP/1.1");
    assert_eq!(render("%{+Q}r", &evil), "\"GET /a#22b#1B[31m HTTP/1.1\"");
}

#[test]
fn captured_headers_are_escaped() {
    let l = served();
    let caps = [Some(b"a\x07b|c".to_vec()), None];
    assert_eq!(render_with("%hr %hrl", &l, &caps).unwrap(), "{a#07b#7Cc|} a#07b#7Cc -");
}

#[test]
fn haproxys_default_formats() {
    if !utc() {
        return;
    }
    let l = served();
    let caps = [Some(b"1wt.eu".to_vec())];
    assert_eq!(
        render_with(HTTP_LOG_FORMAT, &l, &caps).unwrap(),
        "10.0.1.2:33317 [06/Feb/2009:12:14:14.655] fe be/s1 2/0/5/12/25 200 2750 - - ---- 0/0/0/0/0 0/0 {1wt.eu} \
         \"GET /index.html?a=1 HTTP/1.1\""
    );
    assert_eq!(
        render(TCP_LOG_FORMAT, &l),
        "10.0.1.2:33317 [06/Feb/2009:12:14:14.655] fe be/s1 0/5/25 2750 -- 0/0/0/0/0 0/0"
    );
    assert_eq!(
        render(CLF_HTTP_LOG_FORMAT, &l),
        "10.0.1.2 - - [06/Feb/2009:12:14:14 +0000] \"GET /index.html?a=1 HTTP/1.1\" 200 2750 \"\" \"\" 33317 655 \
         \"fe\" \"be\" \"s1\" 2 0 5 12 25 ---- 0 0 0 0 0 0 0 \"\" \"\" "
    );
}

/// A resumed TLS 1.2 session with an SNI, as rustls reports it.
fn tls12() -> crate::tls::TlsInfo {
    crate::tls::TlsInfo {
        sni: Some("1wt.eu".into()),
        version: "TLSv1.2",
        cipher: "ECDHE-ECDSA-AES128-GCM-SHA256",
        bits: 128,
        alpn: None,
        resumed: true,
        peer_certs: Vec::new(),
        local_cert: None,
        verify: Default::default(),
    }
}

#[test]
fn httpslog_format_on_tls_and_plain_connections() {
    if !utc() {
        return;
    }
    let fmt = super::setup::httpslog_format(HTTPS_LOG_FORMAT);
    let l = served();
    let head = "10.0.1.2:33317 [06/Feb/2009:12:14:14.655] fe be/s1 2/0/5/12/25 200 2750 - - ---- 0/0/0/0/0 0/0 \
                \"GET /index.html?a=1 HTTP/1.1\"";
    // haproxy 2.6.12: `ssl_fc_err,hex` is the 8-byte integer in hex; `%ft` gets its `~`
    let tls = render_on(&fmt, &l, &[], Some(tls12())).unwrap();
    assert_eq!(
        tls,
        format!(
            "{} 0/0000000000000000/0/0/1 1wt.eu/TLSv1.2/ECDHE-ECDSA-AES128-GCM-SHA256",
            head.replacen(" fe ", " fe~ ", 1)
        )
    );
    // a plain connection: exactly what haproxy 2.6.12 writes there
    assert_eq!(render(&fmt, &l), format!("{head} 0/-/-/-/0 -/-/-"));
    // without an SNI, with a verification error let through
    let mut t = tls12();
    t.sni = None;
    t.resumed = false;
    t.verify.crt_err = 10;
    let tls = render_on(&fmt, &l, &[], Some(t)).unwrap();
    assert!(tls.ends_with(" 0/0000000000000000/10/0/0 -/TLSv1.2/ECDHE-ECDSA-AES128-GCM-SHA256"), "{tls}");
}

#[test]
fn log_only_variables_are_refused_in_rules_and_unknown_ones_everywhere() {
    let cfg = config(CFG);
    let mut cx = CompileCx::new(&cfg, 0, Site::HttpReq);
    let e = LogFormat::compile("%B", &mut cx, LfMode::Http, &[]).unwrap_err();
    assert_eq!(e.msg, "'%B' is not supported yet in this context");
    let e = render_with("%Tx", &served(), &[]).unwrap_err();
    assert!(e.starts_with("no such format variable 'Tx'"), "{e}");
}

#[test]
fn json_encoding_of_named_nodes() {
    let l = served();
    let caps = [Some(b"a\"b".to_vec()), None];
    // each value as HAProxy 3.2 types it (compared live in tests/haproxy3_syntax.rs)
    assert_eq!(
        render_with(
            "%{+json}o %(client_ip)ci %(client_port)cp %(backend)b/%s %(status)ST %(bytes)B %(term)tsc \
             %(request)r %(host)hr %(list)hrl %(cookie)CC %(sample)[str(x\\ty)] %(timers){+Q}Tc %(n)[int(-3)] \
             %(b)[bool(1)] %(st:str)ST %(sb:bool)[str(0)] %(si:sint)[str(12)] %(:sint)[str(5)] %(date)t",
            &l,
            &caps
        )
        .unwrap(),
        r#"{"client_ip": "10.0.1.2", "client_port": 33317, "backend": "be", "status": 200, "bytes": 2750, "term": "----", "request": "GET /index.html?a=1 HTTP/1.1", "host": "{a#22b|}", "list": ["a#22b", "-"], "cookie": "", "sample": "x\ty", "timers": 5, "n": -3, "b": true, "st": "200", "sb": false, "si": 12, "date": "06/Feb/2009:12:14:14.655"}"#
            .replace("06/Feb/2009:12:14:14.655", &local_date())
            // HAProxy escapes `"` and `\` only: the tab stays a tab
            .replace(r"x\ty", "x\ty")
    );
    // without an encoding, names are accepted and ignored
    assert_eq!(render("%(status)ST %(b)B", &l), "200 2750");
    // single nodes encoded in a plain line
    assert_eq!(render("%ci %{+json}ci %{+json}CC %{+cbor}b", &l), "10.0.1.2 \"10.0.1.2\" \"\" 626265");
}

#[test]
fn cbor_encoding_of_named_nodes() {
    let l = served();
    let caps = [Some(b"a\"b".to_vec())];
    let got = render_with(
        "%{+cbor}o %(ip)ci %(st)ST %(neg)[int(-500)] %(r)r %(hrl)hrl %(cc)CC %(b)[bool(0)] %(q){+Q}b text",
        &l,
        &caps,
    )
    .unwrap();
    let want = [
        "BF", // map
        "626970",
        "6831302E302E312E32", // "ip": "10.0.1.2"
        "62737418C8",         // "st": 200
        "636E65673901F3",     // "neg": -500
        "6172",
        "7F",
        "781C",
        &hex(b"GET /index.html?a=1 HTTP/1.1"),
        "FF", // "r": chunked text
        "6368726C",
        "9F7F",
        "6161",
        "63233232",
        "6162",
        "FFFF", // "hrl": [("a", "#22", "b")]
        "626363",
        "F6", // "cc": null
        "6162",
        "F4", // "b": false
        "6171",
        "\"626265\"", // +Q: raw quotes, as HAProxy
        "FF",
    ]
    .concat();
    assert_eq!(got, want);
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|c| format!("{c:02X}")).collect()
}

/// `%t` of [`date`] in the local zone (the tests may run in any).
fn local_date() -> String {
    let mut out = Vec::new();
    super::date::clf(&mut out, 1_233_922_454, true, Some(655), false);
    String::from_utf8(out).unwrap()
}

#[test]
fn logasap_marks_the_totals() {
    let mut l = served();
    l.asap = true;
    l.bytes_out = 114;
    assert_eq!(render("%Tr/%Ta %Tt %B %U", &l), "12/+25 +25 +114 120");
}

#[test]
fn backend_source_address() {
    let mut l = served();
    assert_eq!(render("%bi:%bp", &l), "-:-");
    l.back_src = Some("127.0.0.1:40000".parse().unwrap());
    assert_eq!(render("%bi:%bp", &l), "127.0.0.1:40000");
}

#[test]
fn node_names_and_types_are_checked_as_haproxy_32_does() {
    let l = served();
    let e = render_with("%{+json}o %(a:int)ST", &l, &[]).unwrap_err();
    assert_eq!(
        e,
        "unexpected output type 'int' at position 14 line : '%{+json}o %(a:int)ST'. Supported types are: str, sint, bool, raw"
    );
    let e = render_with("%{+json}o %(a.b)ST", &l, &[]).unwrap_err();
    assert_eq!(e, "invalid character in custom name near '.' at position 13 line : '%{+json}o %(a.b)ST'");
    assert_eq!(render_with("%{+cbor,+bin}o %(a)ST", &l, &[]).unwrap_err(), "'+bin' is not supported yet");
    // the first encoding set stays; a later `%o` without one leaves the line plain
    assert_eq!(render_with("%{+json,+cbor}o %(a)ST", &l, &[]).unwrap(), r#"{"a": 200}"#);
    assert_eq!(render_with("%{+json}o %(a)ST %{-json}o %(b)b", &l, &[]).unwrap(), "200 be");
}
