//! Fetches of the PROXY protocol header a connection started with (`accept-proxy`,
//! `tcp-request connection expect-proxy`).
//! HAProxy counterpart: `smp_fetch_fc_rcvd_proxy()`, `smp_fetch_fc_pp_authority()`,
//! `smp_fetch_fc_pp_unique_id()` in src/connection.c; `fc_pp_tlv` comes from HAProxy
//! 2.9 (an addition to 2.6's set, taking a TLV number or name).
//!
//! The addresses a header carries are what `src`/`dst` return (`sample::ctx::ConnInfo`);
//! `fc_src`/`fc_dst` keep the socket's (`fetch::conn`).

use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{uses, Arg, ArgList, ArgSpec, ArgT, FetchKw};
use crate::sample::types::{Sample, SmpType};
use rampart_proto::pp::tlv;

use super::Emit;

/// `fc_rcvd_proxy`: whether the connection came with a PROXY header.
fn fetch_fc_rcvd_proxy<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit(Sample::Bool(ctx.conn.proxy_header().is_some()));
}

fn emit_tlv<'a>(ctx: &SampleCtx<'a>, kind: u8, emit: Emit<'_, 'a>) {
    if let Some(v) = ctx.conn.proxy_header().and_then(|h| h.tlv(kind)) {
        emit(Sample::str(v));
    }
}

/// `fc_pp_authority`: the AUTHORITY TLV (v2).
fn fetch_fc_pp_authority<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit_tlv(ctx, tlv::AUTHORITY, emit);
}

/// `fc_pp_unique_id`: the UNIQUE_ID TLV (v2).
fn fetch_fc_pp_unique_id<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit_tlv(ctx, tlv::UNIQUE_ID, emit);
}

/// `fc_pp_tlv(<id>)`: the first TLV of that type; the argument was turned into its
/// number by [`check_tlv_id`].
fn fetch_fc_pp_tlv<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(kind) = args.first().and_then(Arg::as_sint).and_then(|k| u8::try_from(k).ok()) {
        emit_tlv(ctx, kind, emit);
    }
}

/// The TLV names HAProxy 2.9 accepts for `fc_pp_tlv`.
const TLV_NAMES: &[(&str, u8)] = &[
    ("ALPN", tlv::ALPN),
    ("AUTHORITY", tlv::AUTHORITY),
    ("CRC32C", tlv::CRC32C),
    ("NOOP", tlv::NOOP),
    ("UNIQUE_ID", tlv::UNIQUE_ID),
    ("SSL", tlv::SSL),
    ("SSL_VERSION", tlv::SSL_VERSION),
    ("SSL_CN", tlv::SSL_CN),
    ("SSL_CIPHER", tlv::SSL_CIPHER),
    ("SSL_SIG_ALG", tlv::SSL_SIG_ALG),
    ("SSL_KEY_ALG", tlv::SSL_KEY_ALG),
    ("NETNS", tlv::NETNS),
];

/// Turns `fc_pp_tlv`'s argument (a name, a decimal or `0x` hexadecimal number up to
/// 255) into the TLV number, once at startup.
fn check_tlv_id(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let Some(raw) = args.0.first().and_then(Arg::as_bytes) else {
        return Err("missing TLV ID or name".into());
    };
    let text = String::from_utf8_lossy(raw).into_owned();
    let named = TLV_NAMES.iter().find(|(n, _)| *n == text).map(|(_, k)| *k);
    let num = || match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u8::from_str_radix(hex, 16).ok(),
        None => text.parse::<u8>().ok(),
    };
    let kind = named.or_else(num).ok_or_else(|| format!("invalid TLV ID or name '{text}'"))?;
    args.0[0] = Arg::Sint(i64::from(kind));
    Ok(())
}

const L4: u32 = uses::L4CLI;

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("fc_rcvd_proxy", ArgSpec::NONE, SmpType::Bool, fetch_fc_rcvd_proxy).uses(L4),
    FetchKw::new("fc_pp_authority", ArgSpec::NONE, SmpType::Str, fetch_fc_pp_authority).uses(L4),
    FetchKw::new("fc_pp_unique_id", ArgSpec::NONE, SmpType::Str, fetch_fc_pp_unique_id).uses(L4),
    FetchKw::new("fc_pp_tlv", ArgSpec::new(&[ArgT::Str], 1), SmpType::Str, fetch_fc_pp_tlv)
        .uses(L4)
        .check(check_tlv_id),
];

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rampart_proto::pp::{decode, encode_v2, tlv, Decoded};

    use crate::sample::ctx::{ConnExt, ConnInfo, SampleCtx};
    use crate::sample::testutil::*;
    use crate::sample::Sample;

    fn conn_with_header() -> ConnInfo {
        let mut out = Vec::new();
        let addrs = Some(("192.0.2.7:4000".parse().unwrap(), "198.51.100.1:443".parse().unwrap()));
        encode_v2(&mut out, addrs, &[(tlv::AUTHORITY, b"example.org"), (tlv::UNIQUE_ID, b"id-1"), (0xE2, b"x")], true);
        let Decoded::Done(h, _) = decode(&out) else { panic!("header") };
        let mut c = ConnInfo::new(Some("127.0.0.1:1".parse().unwrap()), -1);
        c.set_proxy_header(h);
        c
    }

    fn eval(conn: &ConnInfo, expr: &str) -> Option<Sample<'static>> {
        let cfg = config(CFG);
        let rt = runtime(&cfg);
        let ctx = SampleCtx::new(&rt, conn, 0);
        compile_in(&cfg, 0, expr).unwrap().eval(&ctx).map(Sample::into_owned)
    }

    #[test]
    fn fetches_read_the_header() {
        let c = conn_with_header();
        assert_eq!(eval(&c, "fc_rcvd_proxy"), Some(Sample::Bool(true)));
        assert_eq!(eval(&c, "fc_pp_authority"), Some(s("example.org")));
        assert_eq!(eval(&c, "fc_pp_unique_id"), Some(s("id-1")));
        assert_eq!(eval(&c, "fc_pp_tlv(0xE2)"), Some(s("x")));
        assert_eq!(eval(&c, "fc_pp_tlv(226)"), Some(s("x")));
        assert_eq!(eval(&c, "fc_pp_tlv(AUTHORITY)"), Some(s("example.org")));
        assert_eq!(eval(&c, "fc_pp_tlv(ALPN)"), None);
        // the header's addresses replace the connection's for src/dst
        assert_eq!(eval(&c, "src"), Some(Sample::Ipv4("192.0.2.7".parse().unwrap())));
        assert_eq!(eval(&c, "src_port"), Some(Sample::Sint(4000)));
        assert_eq!(eval(&c, "dst"), Some(Sample::Ipv4("198.51.100.1".parse().unwrap())));
        assert_eq!(eval(&c, "dst_port"), Some(Sample::Sint(443)));
        // fc_src reads the socket itself (none here: fd -1)
        assert_eq!(eval(&c, "fc_src"), None);
    }

    #[test]
    fn without_a_header() {
        let c = ConnInfo::new(Some("127.0.0.1:1".parse().unwrap()), -1);
        assert_eq!(eval(&c, "fc_rcvd_proxy"), Some(Sample::Bool(false)));
        assert_eq!(eval(&c, "fc_pp_authority"), None);
        assert_eq!(eval(&c, "fc_pp_tlv(1)"), None);
        assert_eq!(eval(&c, "fc_src"), Some(Sample::Ipv4("127.0.0.1".parse().unwrap())));
        let mut c2 = c.clone();
        c2.ext = Some(Arc::new(ConnExt::default()));
        assert_eq!(eval(&c2, "fc_rcvd_proxy"), Some(Sample::Bool(false)));
    }

    #[test]
    fn connection_rules_pin_fc_src_and_fc_dst() {
        // as reg-test connection/cli_src_dst: `tcp-request connection set-src` then a
        // PROXY header: fc_src keeps the rule's address, src is the header's
        let mut c = ConnInfo::new(Some("10.1.0.1:1".parse().unwrap()), -1);
        c.set_dst("10.1.0.2:2".parse().unwrap());
        c.pin_fc();
        let mut out = Vec::new();
        encode_v2(&mut out, Some(("192.168.0.1:3".parse().unwrap(), "192.168.0.2:4".parse().unwrap())), &[], false);
        let Decoded::Done(h, _) = decode(&out) else { panic!("header") };
        c.set_proxy_header(h);
        assert_eq!(eval(&c, "fc_src"), Some(Sample::Ipv4("10.1.0.1".parse().unwrap())));
        assert_eq!(eval(&c, "fc_dst"), Some(Sample::Ipv4("10.1.0.2".parse().unwrap())));
        assert_eq!(eval(&c, "src"), Some(Sample::Ipv4("192.168.0.1".parse().unwrap())));
        assert_eq!(eval(&c, "dst"), Some(Sample::Ipv4("192.168.0.2".parse().unwrap())));
    }

    #[test]
    fn bad_tlv_ids_are_refused_at_startup() {
        let cfg = config(CFG);
        for bad in ["fc_pp_tlv(256)", "fc_pp_tlv(0xZZ)", "fc_pp_tlv(alpn)", "fc_pp_tlv"] {
            assert!(compile_in(&cfg, 0, bad).is_err(), "{bad}");
        }
    }
}
