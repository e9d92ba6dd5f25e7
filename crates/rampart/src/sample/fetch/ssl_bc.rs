//! Fetches of the TLS connection to the server (`server ... ssl`): `ssl_bc` and the
//! `ssl_bc_*` family, read from what the handshake negotiated
//! ([`crate::tls::TlsInfo`]), in response rules and log formats.
//! HAProxy counterpart: the `ssl_bc*` keywords of src/ssl_sample.c.
//!
//! Not yet: `ssl_bc_client_random`, `ssl_bc_server_random`, `ssl_bc_session_id`,
//! `ssl_bc_session_key`, `ssl_bc_unique_id`, `ssl_bc_err`, `ssl_bc_err_str` (rustls
//! does not expose them); `ssl_bc_npn` (rustls has no NPN). They stay unknown fetches.

use std::borrow::Cow;

use crate::sample::ctx::SampleCtx;
use crate::sample::kw::{uses, Arg, ArgSpec, FetchKw};
use crate::sample::types::{Sample, SmpType};
use crate::tls::TlsInfo;

use super::Emit;

/// Where HAProxy declares the `ssl_bc*` fetches usable: once the server connection is up.
const L5SRV: u32 = uses::L5SRV;

fn tls<'a>(ctx: &SampleCtx<'a>) -> Option<&'a TlsInfo> {
    ctx.back_tls
}

/// `ssl_bc`: whether the server connection is TLS (nothing before one is chosen).
fn fetch_ssl_bc<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if ctx.srv.is_some() {
        emit(Sample::Bool(ctx.back_tls.is_some()));
    }
}

fn fetch_ssl_bc_protocol<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = tls(ctx).filter(|t| !t.version.is_empty()) {
        emit(Sample::Str(Cow::Borrowed(t.version.as_bytes())));
    }
}

fn fetch_ssl_bc_cipher<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = tls(ctx).filter(|t| !t.cipher.is_empty()) {
        emit(Sample::Str(Cow::Borrowed(t.cipher.as_bytes())));
    }
}

/// `ssl_bc_alg_keysize` and `ssl_bc_use_keysize`: the same with rustls' AEAD suites.
fn fetch_ssl_bc_keysize<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = tls(ctx).filter(|t| t.bits > 0) {
        emit(Sample::Sint(i64::from(t.bits)));
    }
}

fn fetch_ssl_bc_alpn<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(a) = tls(ctx).and_then(|t| t.alpn.as_deref()) {
        emit(Sample::Str(Cow::Borrowed(a)));
    }
}

fn fetch_ssl_bc_is_resumed<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = tls(ctx) {
        emit(Sample::Bool(t.resumed));
    }
}

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("ssl_bc", ArgSpec::NONE, SmpType::Bool, fetch_ssl_bc).uses(L5SRV),
    FetchKw::new("ssl_bc_alg_keysize", ArgSpec::NONE, SmpType::Sint, fetch_ssl_bc_keysize).uses(L5SRV),
    FetchKw::new("ssl_bc_alpn", ArgSpec::NONE, SmpType::Str, fetch_ssl_bc_alpn).uses(L5SRV),
    FetchKw::new("ssl_bc_cipher", ArgSpec::NONE, SmpType::Str, fetch_ssl_bc_cipher).uses(L5SRV),
    FetchKw::new("ssl_bc_is_resumed", ArgSpec::NONE, SmpType::Bool, fetch_ssl_bc_is_resumed).uses(L5SRV),
    FetchKw::new("ssl_bc_protocol", ArgSpec::NONE, SmpType::Str, fetch_ssl_bc_protocol).uses(L5SRV),
    FetchKw::new("ssl_bc_use_keysize", ArgSpec::NONE, SmpType::Sint, fetch_ssl_bc_keysize).uses(L5SRV),
];

#[cfg(test)]
mod tests {
    use crate::sample::ctx::SampleCtx;
    use crate::sample::testutil::*;
    use crate::sample::Sample;
    use crate::tls::TlsInfo;

    #[test]
    fn back_tls_fetches() {
        let cfg = config(CFG);
        let rt = runtime(&cfg);
        let c = conn();
        let v = |ctx: &SampleCtx<'_>, t: &str| compile_in(&cfg, 1, t).unwrap().eval(ctx).map(Sample::into_owned);
        let info = TlsInfo {
            sni: None,
            version: "TLSv1.3",
            cipher: "TLS_AES_256_GCM_SHA384",
            bits: 256,
            alpn: Some(Box::from(&b"http/1.1"[..])),
            resumed: true,
            peer_certs: Vec::new(),
        };
        let ctx = SampleCtx { be: Some(1), srv: Some(0), back_tls: Some(&info), ..SampleCtx::new(&rt, &c, 0) };
        assert_eq!(v(&ctx, "ssl_bc"), Some(Sample::Bool(true)));
        assert_eq!(v(&ctx, "ssl_bc_protocol"), Some(Sample::str(b"TLSv1.3")));
        assert_eq!(v(&ctx, "ssl_bc_cipher"), Some(Sample::str(b"TLS_AES_256_GCM_SHA384")));
        assert_eq!(v(&ctx, "ssl_bc_alg_keysize"), Some(Sample::Sint(256)));
        assert_eq!(v(&ctx, "ssl_bc_use_keysize"), Some(Sample::Sint(256)));
        assert_eq!(v(&ctx, "ssl_bc_alpn"), Some(Sample::str(b"http/1.1")));
        assert_eq!(v(&ctx, "ssl_bc_is_resumed"), Some(Sample::Bool(true)));
        // a plain server connection
        let plain = SampleCtx { be: Some(1), srv: Some(0), ..SampleCtx::new(&rt, &c, 0) };
        assert_eq!(v(&plain, "ssl_bc"), Some(Sample::Bool(false)));
        assert_eq!(v(&plain, "ssl_bc_protocol"), None);
        assert_eq!(v(&plain, "ssl_bc_is_resumed"), None);
        // no server yet
        let none = SampleCtx::new(&rt, &c, 0);
        assert_eq!(v(&none, "ssl_bc"), None);
    }
}
