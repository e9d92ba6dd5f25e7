//! Arbitrary text as a sample expression and as a log-format string: the compilers
//! must never panic, and what compiles is evaluated against a fixed HTTP request and
//! a TLS-looking payload (no panic either).

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rampart::http::MsgHead;
use rampart::log::{LfMode, LogFormat};
use rampart::proxy::Runtime;
use rampart::sample::ctx::{ConnInfo, SampleCtx};
use rampart::sample::expr::{compile, CompileCx, Site};
use rampart_cfg::{Config, LexCtx};
use rampart_proto::h1;

const CFG: &str = "defaults\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n\
frontend fe\n bind 127.0.0.1:1\n default_backend be\nbackend be\n server s1 127.0.0.1:2\n";

const REQ: &[u8] = b"GET /a/b?p=1&q=2 HTTP/1.1\r\nHost: ex.com\r\nCookie: a=1; b=\"x,y\"\r\nX: 1, 2\r\n\r\n";

fn fixture() -> &'static (Config, Runtime, MsgHead) {
    static F: OnceLock<(Config, Runtime, MsgHead)> = OnceLock::new();
    F.get_or_init(|| {
        let ctx = LexCtx { env: &|_| None, version: "2.6.12", features: &[] };
        let cfg = rampart_cfg::parse_str("fuzz.cfg", CFG, &ctx).config.expect("fixture config");
        let rt = rampart::build::build(&cfg, 10, 1).expect("fixture runtime");
        let mut h = h1::Head::default();
        assert_eq!(h1::parse_request(REQ, 4096, &mut h), Ok(true));
        let head = MsgHead {
            version: h.version,
            method: h.method,
            method_raw: h.method_raw,
            uri: h.uri,
            headers: h.headers,
            arena_max: 1024,
            ..MsgHead::default()
        };
        (cfg, rt, head)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // `env(...)` reads the environment and `hostname` the system: harmless.
    let (cfg, rt, head) = fixture();
    let conn = ConnInfo::new(Some("10.0.0.1:1234".parse().unwrap()), -1);
    let payload = [0x16u8, 3, 1, 0, 5, 1, 0, 0, 1, 0];
    let ctx = SampleCtx { req: Some(head.view(REQ)), payload: Some(&payload), ..SampleCtx::new(rt, &conn, 0) };
    let mut cx = CompileCx::new(cfg, 1, Site::HttpReq);
    if let Ok(e) = compile(text, &mut cx) {
        let _ = e.eval(&ctx);
        e.each(&ctx, &mut |_| true);
    }
    if let Ok(lf) = LogFormat::compile(text, &mut cx, LfMode::Http, &[]) {
        let mut out = Vec::new();
        lf.render(&ctx, &mut out);
    }
});
