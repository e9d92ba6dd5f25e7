//! Fetches of the TLS connection to the server (`server ... ssl`): `ssl_bc` and the
//! `ssl_bc_*` family, and the server's certificate (`ssl_s_*`), read from what the
//! handshake negotiated ([`crate::tls::types::TlsInfo`]), in response rules and log formats.
//! HAProxy counterpart: the `ssl_bc*` and `ssl_s_*` keywords of src/ssl_sample.c.
//!
//! Not yet: `ssl_bc_client_random`, `ssl_bc_server_random`, `ssl_bc_session_id`,
//! `ssl_bc_session_key`, `ssl_bc_unique_id`, `ssl_bc_err`, `ssl_bc_err_str` (rustls
//! does not expose them); `ssl_bc_npn` (rustls has no NPN). They stay unknown fetches.

use std::borrow::Cow;

use crate::sample::ctx::SampleCtx;

use crate::sample::kw::{uses, Arg, ArgSpec, ArgT, FetchKw};
use crate::sample::types::{Sample, SmpType};
use crate::tls::types::TlsInfo;

use super::ssl_cert::{self, Field};
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

/// `ssl_bc_is_resumed`: false without a TLS server connection too (a plain one, or none
/// yet), as HAProxy answers for `ssl_fc_is_resumed` and this one alike.
fn fetch_ssl_bc_is_resumed<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit(Sample::Bool(tls(ctx).is_some_and(|t| t.resumed)));
}

// === the server's certificate (ssl_s_*) ===

/// The server's leaf certificate, DER.
fn leaf<'a>(ctx: &SampleCtx<'a>) -> Option<&'a [u8]> {
    tls(ctx)?.peer_certs.first().map(|c| c.as_ref())
}

/// A fetch of one field of the server's certificate.
macro_rules! cert_fetch {
    ($name:ident, $field:ident) => {
        fn $name<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
            ssl_cert::emit_field(Field::$field, leaf(ctx), args, emit)
        }
    };
}

cert_fetch!(fetch_ssl_s_der, Der);
cert_fetch!(fetch_ssl_s_sha1, Sha1);
cert_fetch!(fetch_ssl_s_serial, Serial);
cert_fetch!(fetch_ssl_s_notafter, NotAfter);
cert_fetch!(fetch_ssl_s_notbefore, NotBefore);
cert_fetch!(fetch_ssl_s_s_dn, SubjectDn);
cert_fetch!(fetch_ssl_s_i_dn, IssuerDn);
cert_fetch!(fetch_ssl_s_version, Version);
cert_fetch!(fetch_ssl_s_sig_alg, SigAlg);
cert_fetch!(fetch_ssl_s_key_alg, KeyAlg);

/// `ssl_s_chain_der`: the certificates the server sent, DER, one after the other.
fn fetch_ssl_s_chain_der<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = tls(ctx).filter(|t| !t.peer_certs.is_empty()) {
        emit(Sample::Bin(Cow::Owned(t.peer_certs.iter().flat_map(|c| c.iter().copied()).collect())));
    }
}

/// OpenSSL's name of a signature or key algorithm OID (`OBJ_nid2sn()`), else the OID.
pub fn openssl_oid_name(oid: &str) -> String {
    let name = match oid {
        "1.2.840.113549.1.1.1" => "rsaEncryption",
        "1.2.840.113549.1.1.5" => "RSA-SHA1",
        "1.2.840.113549.1.1.10" => "RSASSA-PSS",
        "1.2.840.113549.1.1.11" => "RSA-SHA256",
        "1.2.840.113549.1.1.12" => "RSA-SHA384",
        "1.2.840.113549.1.1.13" => "RSA-SHA512",
        "1.2.840.10045.2.1" => "id-ecPublicKey",
        "1.2.840.10045.4.1" => "ecdsa-with-SHA1",
        "1.2.840.10045.4.3.2" => "ecdsa-with-SHA256",
        "1.2.840.10045.4.3.3" => "ecdsa-with-SHA384",
        "1.2.840.10045.4.3.4" => "ecdsa-with-SHA512",
        "1.3.101.112" => "ED25519",
        "1.3.101.113" => "ED448",
        _ => oid,
    };
    name.to_owned()
}

const DN_ARGS: ArgSpec = ArgSpec::new(&[ArgT::Str, ArgT::Sint], 0);

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("ssl_bc", ArgSpec::NONE, SmpType::Bool, fetch_ssl_bc).uses(L5SRV),
    FetchKw::new("ssl_bc_alg_keysize", ArgSpec::NONE, SmpType::Sint, fetch_ssl_bc_keysize).uses(L5SRV),
    FetchKw::new("ssl_bc_alpn", ArgSpec::NONE, SmpType::Str, fetch_ssl_bc_alpn).uses(L5SRV),
    FetchKw::new("ssl_bc_cipher", ArgSpec::NONE, SmpType::Str, fetch_ssl_bc_cipher).uses(L5SRV),
    FetchKw::new("ssl_bc_is_resumed", ArgSpec::NONE, SmpType::Bool, fetch_ssl_bc_is_resumed).uses(L5SRV),
    FetchKw::new("ssl_bc_protocol", ArgSpec::NONE, SmpType::Str, fetch_ssl_bc_protocol).uses(L5SRV),
    FetchKw::new("ssl_bc_use_keysize", ArgSpec::NONE, SmpType::Sint, fetch_ssl_bc_keysize).uses(L5SRV),
    FetchKw::new("ssl_s_chain_der", ArgSpec::NONE, SmpType::Bin, fetch_ssl_s_chain_der).uses(L5SRV),
    FetchKw::new("ssl_s_der", ArgSpec::NONE, SmpType::Bin, fetch_ssl_s_der).uses(L5SRV),
    FetchKw::new("ssl_s_i_dn", DN_ARGS, SmpType::Str, fetch_ssl_s_i_dn).uses(L5SRV),
    FetchKw::new("ssl_s_key_alg", ArgSpec::NONE, SmpType::Str, fetch_ssl_s_key_alg).uses(L5SRV),
    FetchKw::new("ssl_s_notafter", ArgSpec::NONE, SmpType::Str, fetch_ssl_s_notafter).uses(L5SRV),
    FetchKw::new("ssl_s_notbefore", ArgSpec::NONE, SmpType::Str, fetch_ssl_s_notbefore).uses(L5SRV),
    FetchKw::new("ssl_s_s_dn", DN_ARGS, SmpType::Str, fetch_ssl_s_s_dn).uses(L5SRV),
    FetchKw::new("ssl_s_serial", ArgSpec::NONE, SmpType::Bin, fetch_ssl_s_serial).uses(L5SRV),
    FetchKw::new("ssl_s_sha1", ArgSpec::NONE, SmpType::Bin, fetch_ssl_s_sha1).uses(L5SRV),
    FetchKw::new("ssl_s_sig_alg", ArgSpec::NONE, SmpType::Str, fetch_ssl_s_sig_alg).uses(L5SRV),
    FetchKw::new("ssl_s_version", ArgSpec::NONE, SmpType::Sint, fetch_ssl_s_version).uses(L5SRV),
];

#[cfg(test)]
mod tests {
    use crate::sample::ctx::SampleCtx;
    use crate::sample::testutil::*;
    use crate::sample::Sample;
    use crate::tls::types::TlsInfo;

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
            local_cert: None,
            verify: Default::default(),
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
        assert_eq!(v(&plain, "ssl_bc_is_resumed"), Some(Sample::Bool(false)));
        // no server yet
        let none = SampleCtx::new(&rt, &c, 0);
        assert_eq!(v(&none, "ssl_bc"), None);
        assert_eq!(v(&none, "ssl_bc_is_resumed"), Some(Sample::Bool(false)));
    }

    #[test]
    fn server_certificate_fetches() {
        let cfg = config(CFG);
        let rt = runtime(&cfg);
        let c = conn();
        let v = |ctx: &SampleCtx<'_>, t: &str| compile_in(&cfg, 1, t).unwrap().eval(ctx).map(Sample::into_owned);
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("key");
        let mut params = rcgen::CertificateParams::new(vec!["srv.test".to_owned()]).expect("params");
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(rcgen::DnType::CountryName, "FR");
        params.distinguished_name.push(rcgen::DnType::CommonName, "srv.test");
        let email = rcgen::DnType::CustomDnType(vec![1, 2, 840, 113549, 1, 9, 1]);
        params.distinguished_name.push(email, rcgen::DnValue::Ia5String("a@b.test".try_into().expect("ia5")));
        params.serial_number = Some(rcgen::SerialNumber::from(vec![2]));
        params.not_before = rcgen::date_time_ymd(2016, 1, 17);
        params.not_after = rcgen::date_time_ymd(2018, 1, 16);
        let cert = params.self_signed(&key).expect("cert");
        let der = cert.der().to_vec();
        let info = TlsInfo {
            sni: None,
            version: "TLSv1.3",
            cipher: "TLS_AES_128_GCM_SHA256",
            bits: 128,
            alpn: None,
            resumed: false,
            peer_certs: vec![cert.der().clone(), cert.der().clone()],
            local_cert: None,
            verify: Default::default(),
        };
        let ctx = SampleCtx { be: Some(1), srv: Some(0), back_tls: Some(&info), ..SampleCtx::new(&rt, &c, 0) };
        // OpenSSL's attribute names (emailAddress, not x509-parser's Email)
        assert_eq!(v(&ctx, "ssl_s_s_dn"), Some(Sample::str(b"/C=FR/CN=srv.test/emailAddress=a@b.test")));
        assert_eq!(v(&ctx, "ssl_s_i_dn(CN)"), Some(Sample::str(b"srv.test")));
        assert_eq!(v(&ctx, "ssl_s_serial,hex"), Some(Sample::str(b"02")));
        assert_eq!(v(&ctx, "ssl_s_notbefore"), Some(Sample::str(b"160117000000Z")));
        assert_eq!(v(&ctx, "ssl_s_notafter"), Some(Sample::str(b"180116000000Z")));
        assert_eq!(v(&ctx, "ssl_s_version"), Some(Sample::Sint(3)));
        assert_eq!(v(&ctx, "ssl_s_sig_alg"), Some(Sample::str(b"ecdsa-with-SHA256")));
        assert_eq!(v(&ctx, "ssl_s_key_alg"), Some(Sample::str(b"id-ecPublicKey")));
        assert_eq!(v(&ctx, "ssl_s_der"), Some(Sample::Bin(der.clone().into())));
        assert_eq!(v(&ctx, "ssl_s_chain_der"), Some(Sample::Bin([der.clone(), der].concat().into())));
        assert!(matches!(v(&ctx, "ssl_s_sha1"), Some(Sample::Bin(b)) if b.len() == 20));
    }
}
