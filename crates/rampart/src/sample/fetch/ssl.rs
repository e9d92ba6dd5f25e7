//! Fetches of the client connection's TLS layer: `ssl_fc*` (what the handshake
//! negotiated) and `ssl_c_*` (the client's certificate). They read the
//! [`crate::tls::types::TlsInfo`] the session keeps after the handshake.
//! HAProxy counterpart: the front-side fetches of src/ssl_sample.c.
//!
//! `ssl_f_*` read the certificate the listener served ([`crate::tls::types::LocalCert`]).
//!
//! Not yet (rejected as unknown): `ssl_c_s_dn`/`ssl_c_i_dn` formats other than OpenSSL's one-line form, and the
//! `ssl_fc_*` fetches of client hello captures.

use std::borrow::Cow;

use x509_parser::x509::X509Name;

use crate::sample::ctx::SampleCtx;
use crate::sample::kw::{uses, Arg, ArgSpec, ArgT, FetchKw};
use crate::sample::types::{Sample, SmpType};
use crate::tls::types::TlsInfo;

use super::ssl_cert::{self, Field};
use super::Emit;

fn tls<'a>(ctx: &SampleCtx<'a>) -> Option<&'a TlsInfo> {
    ctx.conn.tls()
}

fn str_sample(s: &str) -> Sample<'_> {
    Sample::Str(Cow::Borrowed(s.as_bytes()))
}

/// `ssl_fc`: whether the connection came over TLS.
fn fetch_ssl_fc<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit(Sample::Bool(tls(ctx).is_some()));
}

/// `ssl_fc_has_sni`: whether the client sent a server name; false on a plain
/// connection, as HAProxy (no TLS object, no name).
fn fetch_ssl_fc_has_sni<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit(Sample::Bool(tls(ctx).is_some_and(|t| t.sni.is_some())));
}

fn fetch_ssl_fc_sni<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(sni) = tls(ctx).and_then(|t| t.sni.as_deref()) {
        emit(str_sample(sni));
    }
}

/// The client connection's TLS version as HAProxy names it (`TLSv1.3`); `None` on a
/// plain connection. `ssl_fc_protocol` and the log-format's `%sslv`.
pub(crate) fn fc_protocol<'a>(ctx: &SampleCtx<'a>) -> Option<&'a str> {
    tls(ctx).map(|t| t.version)
}

/// The client connection's cipher suite as OpenSSL names it
/// (`ECDHE-ECDSA-AES128-GCM-SHA256`, `TLS_AES_256_GCM_SHA384`); `None` on a plain
/// connection. `ssl_fc_cipher` and the log-format's `%sslc`.
pub(crate) fn fc_cipher<'a>(ctx: &SampleCtx<'a>) -> Option<&'a str> {
    tls(ctx).map(|t| t.cipher).filter(|c| !c.is_empty())
}

fn fetch_ssl_fc_protocol<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(v) = fc_protocol(ctx) {
        emit(str_sample(v));
    }
}

fn fetch_ssl_fc_cipher<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(c) = fc_cipher(ctx) {
        emit(str_sample(c));
    }
}

fn fetch_ssl_fc_use_keysize<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = tls(ctx) {
        emit(Sample::Sint(i64::from(t.bits)));
    }
}

fn fetch_ssl_fc_alpn<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(a) = tls(ctx).and_then(|t| t.alpn.as_deref()) {
        emit(Sample::Str(Cow::Borrowed(a)));
    }
}

/// `ssl_fc_is_resumed`: false on a plain connection too (HAProxy answers there, unlike
/// the other `ssl_fc_*` fetches).
fn fetch_ssl_fc_is_resumed<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit(Sample::Bool(tls(ctx).is_some_and(|t| t.resumed)));
}

/// `ssl_fc_has_crt` / `ssl_c_used`: whether the client presented a certificate.
fn fetch_ssl_fc_has_crt<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = tls(ctx) {
        emit(Sample::Bool(!t.peer_certs.is_empty()));
    }
}

/// `ssl_fc_err`: 0 on every TLS connection, since a connection that reaches rules
/// completed its handshake.
fn fetch_no_error<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if tls(ctx).is_some() {
        emit(Sample::Sint(0));
    }
}

/// `ssl_c_verify`: the last verification error of the client's certificate
/// (OpenSSL's code; 0 without a certificate or an error). Only an error
/// `crt-ignore-err` / `ca-ignore-err` let through reaches rules.
fn fetch_ssl_c_verify<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = tls(ctx) {
        emit(Sample::Sint(i64::from(t.verify.result)));
    }
}

/// `ssl_c_err`: the first error on the client's own certificate.
fn fetch_ssl_c_err<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = tls(ctx) {
        emit(Sample::Sint(i64::from(t.verify.crt_err)));
    }
}

/// `ssl_c_ca_err`: the first error on a CA of the client's chain.
fn fetch_ssl_c_ca_err<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = tls(ctx) {
        emit(Sample::Sint(i64::from(t.verify.ca_err)));
    }
}

/// `ssl_c_ca_err_depth`: the depth of that CA (0 without an error).
fn fetch_ssl_c_ca_err_depth<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = tls(ctx) {
        emit(Sample::Sint(i64::from(t.verify.ca_err_depth)));
    }
}

/// The client's leaf certificate, DER.
fn leaf<'a>(ctx: &SampleCtx<'a>) -> Option<&'a [u8]> {
    tls(ctx)?.peer_certs.first().map(|c| c.as_ref())
}

/// A certificate time as HAProxy gives it (`ssl_sock_get_time()`): `YYMMDDhhmmssZ`,
/// a UTCTime as encoded, a GeneralizedTime of the 2000s without its century (the
/// reg-test certificates encode 2050 that way); `None` for another century.
pub(super) fn asn1_time(t: &x509_parser::time::ASN1Time) -> Option<String> {
    let d = t.to_datetime();
    let (y, m, day) = (d.year(), u8::from(d.month()), d.day());
    let (h, mi, s) = (d.hour(), d.minute(), d.second());
    if t.is_generalizedtime() && !(2000..2100).contains(&y) {
        return None;
    }
    Some(format!("{:02}{m:02}{day:02}{h:02}{mi:02}{s:02}Z", y.rem_euclid(100)))
}

/// OpenSSL's short name of a DN attribute, else its dotted OID.
fn attr_name(oid: &x509_parser::der_parser::Oid<'_>) -> String {
    // x509-parser's abbreviations that differ from OpenSSL's short names
    match oid.to_id_string().as_str() {
        "1.2.840.113549.1.9.1" => return "emailAddress".to_owned(),
        "2.5.4.5" => return "serialNumber".to_owned(),
        "0.9.2342.19200300.100.1.25" => return "DC".to_owned(),
        "0.9.2342.19200300.100.1.1" => return "UID".to_owned(),
        _ => {}
    }
    match x509_parser::objects::oid2abbrev(oid, x509_parser::objects::oid_registry()) {
        Ok(n) => n.to_string(),
        Err(_) => oid.to_id_string(),
    }
}

/// A DN (`ssl_c_s_dn`, `ssl_c_i_dn`): without arguments, OpenSSL's one-line form
/// `/C=FR/O=Org/CN=name`; with `entry[,occ]` (the entry's name in any case), that
/// entry's value: its `occ`-th occurrence, from the end when negative; the first one
/// by default (HAProxy's `ssl_sock_get_dn_entry()` with position 1).
pub(crate) fn dn(name: &X509Name<'_>, args: &[Arg]) -> Option<String> {
    let attrs: Vec<(String, String)> = name
        .iter_attributes()
        .map(|a| (attr_name(a.attr_type()), a.as_str().map(str::to_string).unwrap_or_default()))
        .collect();
    let Some(Arg::Str(entry)) = args.first() else {
        return Some(attrs.iter().map(|(k, v)| format!("/{k}={v}")).collect());
    };
    let occ = match args.get(1) {
        Some(Arg::Sint(n)) => *n,
        _ => 0,
    };
    let matching: Vec<&String> =
        attrs.iter().filter(|(k, _)| k.as_bytes().eq_ignore_ascii_case(&entry[..])).map(|(_, v)| v).collect();
    let picked = match occ {
        0 => matching.first(),
        n if n > 0 => matching.get(usize::try_from(n - 1).ok()?),
        n => matching.len().checked_sub(usize::try_from(-n).ok()?).and_then(|i| matching.get(i)),
    };
    picked.map(|s| s.to_string())
}

/// The frontend's own certificate (`ssl_f_*`), DER.
fn local<'a>(ctx: &SampleCtx<'a>) -> Option<&'a [u8]> {
    tls(ctx)?.local_cert.as_ref()?.leaf()
}

/// `ssl_c_chain_der`: the certificates the client sent after its own, DER, one after
/// the other.
fn fetch_ssl_c_chain_der<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = tls(ctx).filter(|t| t.peer_certs.len() > 1) {
        emit(Sample::Bin(Cow::Owned(t.peer_certs[1..].iter().flat_map(|c| c.iter().copied()).collect())));
    }
}

/// A fetch of one field of the client's (`c`) or the frontend's (`f`) certificate.
macro_rules! cert_fetch {
    ($name:ident, c, $field:ident) => {
        fn $name<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
            ssl_cert::emit_field(Field::$field, leaf(ctx), args, emit)
        }
    };
    ($name:ident, f, $field:ident) => {
        fn $name<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
            ssl_cert::emit_field(Field::$field, local(ctx), args, emit)
        }
    };
}

cert_fetch!(fetch_ssl_c_der, c, Der);
cert_fetch!(fetch_ssl_c_sha1, c, Sha1);
cert_fetch!(fetch_ssl_c_serial, c, Serial);
cert_fetch!(fetch_ssl_c_notafter, c, NotAfter);
cert_fetch!(fetch_ssl_c_notbefore, c, NotBefore);
cert_fetch!(fetch_ssl_c_s_dn, c, SubjectDn);
cert_fetch!(fetch_ssl_c_i_dn, c, IssuerDn);
cert_fetch!(fetch_ssl_c_version, c, Version);
cert_fetch!(fetch_ssl_c_sig_alg, c, SigAlg);
cert_fetch!(fetch_ssl_c_key_alg, c, KeyAlg);
cert_fetch!(fetch_ssl_f_der, f, Der);
cert_fetch!(fetch_ssl_f_sha1, f, Sha1);
cert_fetch!(fetch_ssl_f_serial, f, Serial);
cert_fetch!(fetch_ssl_f_notafter, f, NotAfter);
cert_fetch!(fetch_ssl_f_notbefore, f, NotBefore);
cert_fetch!(fetch_ssl_f_s_dn, f, SubjectDn);
cert_fetch!(fetch_ssl_f_i_dn, f, IssuerDn);
cert_fetch!(fetch_ssl_f_version, f, Version);
cert_fetch!(fetch_ssl_f_sig_alg, f, SigAlg);
cert_fetch!(fetch_ssl_f_key_alg, f, KeyAlg);

const L5: u32 = uses::L5CLI;
const DN_ARGS: ArgSpec = ArgSpec::new(&[ArgT::Str, ArgT::Sint], 0);

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("ssl_fc", ArgSpec::NONE, SmpType::Bool, fetch_ssl_fc).uses(L5),
    FetchKw::new("ssl_fc_sni", ArgSpec::NONE, SmpType::Str, fetch_ssl_fc_sni).uses(L5),
    FetchKw::new("ssl_fc_has_sni", ArgSpec::NONE, SmpType::Bool, fetch_ssl_fc_has_sni).uses(L5),
    FetchKw::new("ssl_fc_protocol", ArgSpec::NONE, SmpType::Str, fetch_ssl_fc_protocol).uses(L5),
    FetchKw::new("ssl_fc_cipher", ArgSpec::NONE, SmpType::Str, fetch_ssl_fc_cipher).uses(L5),
    FetchKw::new("ssl_fc_use_keysize", ArgSpec::NONE, SmpType::Sint, fetch_ssl_fc_use_keysize).uses(L5),
    FetchKw::new("ssl_fc_alpn", ArgSpec::NONE, SmpType::Str, fetch_ssl_fc_alpn).uses(L5),
    FetchKw::new("ssl_fc_is_resumed", ArgSpec::NONE, SmpType::Bool, fetch_ssl_fc_is_resumed).uses(L5),
    FetchKw::new("ssl_fc_has_crt", ArgSpec::NONE, SmpType::Bool, fetch_ssl_fc_has_crt).uses(L5),
    FetchKw::new("ssl_c_used", ArgSpec::NONE, SmpType::Bool, fetch_ssl_fc_has_crt).uses(L5),
    FetchKw::new("ssl_c_verify", ArgSpec::NONE, SmpType::Sint, fetch_ssl_c_verify).uses(L5),
    FetchKw::new("ssl_c_err", ArgSpec::NONE, SmpType::Sint, fetch_ssl_c_err).uses(L5),
    FetchKw::new("ssl_c_ca_err", ArgSpec::NONE, SmpType::Sint, fetch_ssl_c_ca_err).uses(L5),
    FetchKw::new("ssl_c_ca_err_depth", ArgSpec::NONE, SmpType::Sint, fetch_ssl_c_ca_err_depth).uses(L5),
    FetchKw::new("ssl_fc_err", ArgSpec::NONE, SmpType::Sint, fetch_no_error).uses(L5),
    FetchKw::new("ssl_c_s_dn", DN_ARGS, SmpType::Str, fetch_ssl_c_s_dn).uses(L5),
    FetchKw::new("ssl_c_i_dn", DN_ARGS, SmpType::Str, fetch_ssl_c_i_dn).uses(L5),
    FetchKw::new("ssl_c_serial", ArgSpec::NONE, SmpType::Bin, fetch_ssl_c_serial).uses(L5),
    FetchKw::new("ssl_c_sha1", ArgSpec::NONE, SmpType::Bin, fetch_ssl_c_sha1).uses(L5),
    FetchKw::new("ssl_c_notafter", ArgSpec::NONE, SmpType::Str, fetch_ssl_c_notafter).uses(L5),
    FetchKw::new("ssl_c_notbefore", ArgSpec::NONE, SmpType::Str, fetch_ssl_c_notbefore).uses(L5),
    FetchKw::new("ssl_c_der", ArgSpec::NONE, SmpType::Bin, fetch_ssl_c_der).uses(L5),
    FetchKw::new("ssl_c_chain_der", ArgSpec::NONE, SmpType::Bin, fetch_ssl_c_chain_der).uses(L5),
    FetchKw::new("ssl_c_version", ArgSpec::NONE, SmpType::Sint, fetch_ssl_c_version).uses(L5),
    FetchKw::new("ssl_c_sig_alg", ArgSpec::NONE, SmpType::Str, fetch_ssl_c_sig_alg).uses(L5),
    FetchKw::new("ssl_c_key_alg", ArgSpec::NONE, SmpType::Str, fetch_ssl_c_key_alg).uses(L5),
    FetchKw::new("ssl_f_der", ArgSpec::NONE, SmpType::Bin, fetch_ssl_f_der).uses(L5),
    FetchKw::new("ssl_f_sha1", ArgSpec::NONE, SmpType::Bin, fetch_ssl_f_sha1).uses(L5),
    FetchKw::new("ssl_f_serial", ArgSpec::NONE, SmpType::Bin, fetch_ssl_f_serial).uses(L5),
    FetchKw::new("ssl_f_notafter", ArgSpec::NONE, SmpType::Str, fetch_ssl_f_notafter).uses(L5),
    FetchKw::new("ssl_f_notbefore", ArgSpec::NONE, SmpType::Str, fetch_ssl_f_notbefore).uses(L5),
    FetchKw::new("ssl_f_s_dn", DN_ARGS, SmpType::Str, fetch_ssl_f_s_dn).uses(L5),
    FetchKw::new("ssl_f_i_dn", DN_ARGS, SmpType::Str, fetch_ssl_f_i_dn).uses(L5),
    FetchKw::new("ssl_f_version", ArgSpec::NONE, SmpType::Sint, fetch_ssl_f_version).uses(L5),
    FetchKw::new("ssl_f_sig_alg", ArgSpec::NONE, SmpType::Str, fetch_ssl_f_sig_alg).uses(L5),
    FetchKw::new("ssl_f_key_alg", ArgSpec::NONE, SmpType::Str, fetch_ssl_f_key_alg).uses(L5),
];

#[cfg(test)]
#[path = "ssl_tests.rs"]
mod tests;
