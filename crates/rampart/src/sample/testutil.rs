//! Test fixtures: a configuration, its runtime, and message heads parsed from literal
//! bytes, to build [`SampleCtx`]s in the sample tests.

#![allow(dead_code, reason = "fixtures shared by the sample test modules; not all use every one")]

use crate::http::MsgHead;
use crate::proxy::Runtime;
use rampart_cfg::{Config, LexCtx};
use rampart_proto::h1;

use super::ctx::{ConnInfo, SampleCtx};
use super::expr::{self, CompileCx, Expr, ExprError, Site};
use super::Sample;

/// A frontend `fe` (index 0) using backend `be` (index 1, servers `s1`, `s2`
/// disabled), and a `listen` `li` (index 2).
pub const CFG: &str = "\
defaults
  mode http
  timeout client 1s
  timeout server 1s
  timeout connect 1s
frontend fe
  bind 127.0.0.1:18001
  default_backend be
backend be
  server s1 127.0.0.1:18002
  server s2 127.0.0.1:18003 disabled
listen li
  bind 127.0.0.1:18004
  server s3 127.0.0.1:18005
";

pub fn config(text: &str) -> Config {
    let ctx = LexCtx { env: &|_| None, version: "2.6.12", features: &[] };
    let loaded = rampart_cfg::parse_str("test.cfg", text, &ctx);
    loaded.config.unwrap_or_else(|| panic!("bad test config: {:?}", loaded.diags))
}

pub fn runtime(cfg: &Config) -> Runtime {
    crate::build::build(cfg, 100, 1).unwrap_or_else(|e| panic!("runtime: {e:?}"))
}

/// Compiles `text` in frontend `fe` of [`CFG`]-like `cfg`.
pub fn compile_in(cfg: &Config, px: usize, text: &str) -> Result<Expr, ExprError> {
    let mut cx = CompileCx::new(cfg, px, Site::HttpReq);
    expr::compile(text, &mut cx)
}

/// Parses a request head (`\r\n\r\n` included) from `buf`.
pub fn req_head(buf: &[u8]) -> MsgHead {
    let mut h = h1::Head::default();
    assert_eq!(h1::parse_request(buf, buf.len() + 1, &mut h), Ok(true), "test request does not parse");
    msg_head(h)
}

/// Parses a response head from `buf`.
pub fn res_head(buf: &[u8]) -> MsgHead {
    let mut h = h1::Head::default();
    let r = h1::parse_response(buf, buf.len() + 1, crate::http::Method::Get, &mut h);
    assert_eq!(r, Ok(true), "test response does not parse");
    msg_head(h)
}

fn msg_head(h: h1::Head) -> MsgHead {
    MsgHead {
        version: h.version,
        method: h.method,
        method_raw: h.method_raw,
        uri: h.uri,
        uri_cut: h.uri_cut,
        status: h.status,
        reason: h.reason,
        headers: h.headers,
        arena_max: 1024,
        ..MsgHead::default()
    }
}

/// A connection from 192.168.1.10:40000 (no socket: `dst` is absent).
pub fn conn() -> ConnInfo {
    ConnInfo::new(Some("192.168.1.10:40000".parse().unwrap()), -1)
}

/// Every value of `e` in `ctx`, owned.
pub fn all(e: &Expr, ctx: &SampleCtx<'_>) -> Vec<Sample<'static>> {
    let mut v = Vec::new();
    e.each(ctx, &mut |s| {
        v.push(s.into_owned());
        true
    });
    v
}

/// A string sample.
pub fn s(text: &str) -> Sample<'static> {
    Sample::Str(std::borrow::Cow::Owned(text.as_bytes().to_vec()))
}
