//! JSON Web Token converters: `jwt_header_query` and `jwt_payload_query` (a part of
//! the token, base64url-decoded, or a `json_query` on it) and `jwt_verify` (the
//! signature of a JWS in compact serialization, with an HMAC secret or a public key
//! file read at startup). The cryptography is aws-lc-rs', which rustls already uses.
//! HAProxy counterpart: src/jwt.c, `sample_conv_jwt_*` in src/sample.c.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwap;
use aws_lc_rs::{hmac, signature};

use super::encode::ub64_decode;
use super::json_query::conv_json_query;
use super::{arg_bytes, bytes_of, var_arg, var_bytes};
use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{Arg, ArgList, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};

/// What `jwt_verify` answers (HAProxy's `enum jwt_vrfy_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i64)]
enum Verdict {
    Ok = 1,
    Failed = 0,
    UnknownAlg = -1,
    UnmanagedAlg = -2,
    InvalidToken = -3,
    UnknownKey = -5,
}

/// The algorithms of RFC 7518 §3.1 for a JWS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Alg {
    None,
    Hs(Sha),
    Rs(Sha),
    Es(Sha),
    /// RSASSA-PSS: refused, as by HAProxy 2.6.
    Ps,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sha {
    S256,
    S384,
    S512,
}

impl Alg {
    /// The algorithm named `name` (`HS256` ... `none`), `None` when unknown.
    fn parse(name: &[u8]) -> Option<Alg> {
        if name == b"none" {
            return Some(Alg::None);
        }
        let (family, bits) = name.split_at_checked(2)?;
        let sha = match bits {
            b"256" => Sha::S256,
            b"384" => Sha::S384,
            b"512" => Sha::S512,
            _ => return None,
        };
        Some(match family {
            b"HS" => Alg::Hs(sha),
            b"RS" => Alg::Rs(sha),
            b"ES" => Alg::Es(sha),
            b"PS" => Alg::Ps,
            _ => return None,
        })
    }
}

// === the public keys ===

/// Public keys (SubjectPublicKeyInfo DER) by the path they were read from.
type KeyMap = HashMap<Box<[u8]>, Arc<[u8]>>;

/// The public keys `jwt_verify` may use, by the path they were read from: every file
/// named as a literal key argument is read while the configuration is compiled
/// (before `chroot`), so that verifying never touches the disk. A key named only
/// through a variable must match one of these paths. Process-wide, as in HAProxy; read
/// without a lock.
fn keys() -> &'static ArcSwap<KeyMap> {
    static KEYS: OnceLock<ArcSwap<KeyMap>> = OnceLock::new();
    KEYS.get_or_init(ArcSwap::default)
}

/// Reads the public key (a PEM `PUBLIC KEY`) of file `path` into [`keys`], once; a
/// file that cannot be read leaves the key unknown (`jwt_verify` then answers -5),
/// as in HAProxy.
fn load_key(path: &[u8]) {
    use rustls_pki_types::pem::PemObject;
    if keys().load().contains_key(path) {
        return;
    }
    let Ok(name) = std::str::from_utf8(path) else { return };
    let Ok(der) = rustls_pki_types::SubjectPublicKeyInfoDer::from_pem_file(name) else { return };
    let der: Arc<[u8]> = Arc::from(der.as_ref());
    keys().rcu(|m| {
        let mut m = HashMap::clone(m);
        m.insert(path.into(), der.clone());
        m
    });
}

// === checks ===

/// `jwt_verify(<alg>,<key>)`: each argument is a variable name or a string; a string
/// algorithm must be one HAProxy 2.6 manages, a string key names a public key file,
/// read now.
fn check_jwt_verify(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    for i in 0..2 {
        if let Some(var) = var_arg(arg_bytes(args, i)) {
            args[i] = var;
        }
    }
    if let Some(Arg::Str(name)) = args.first() {
        match Alg::parse(name) {
            None => return Err(format!("unknown JWT algorithm: {}", String::from_utf8_lossy(name))),
            Some(Alg::Ps) => return Err("RSASSA-PSS JWS signing not managed yet".into()),
            Some(_) => {}
        }
    }
    if let Some(Arg::Str(path)) = args.get(1) {
        load_key(path);
    }
    Ok(())
}

/// `jwt_header_query([<json_path>],[<output_type>])` and `jwt_payload_query`: the
/// output type may only be `int`, compiled as `json_query` expects it.
fn check_jwt_query(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    match args.get(1) {
        Some(Arg::Str(t)) if t.is_empty() => args.truncate(1),
        Some(Arg::Str(t)) if **t == *b"int" => args[1] = Arg::Sint(1),
        Some(Arg::Str(_)) => return Err("output_type only supports \"int\" as argument".into()),
        _ => {}
    }
    Ok(())
}

// === converters ===

/// Part `n` of a token (0: the JOSE header, 1: the claims), decoded; then, with a
/// path, what `json_query` finds in it.
fn member_query<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>, n: usize) -> Option<Sample<'a>> {
    let token = bytes_of(smp)?;
    let part = token.split(|&c| c == b'.').nth(n)?;
    let decoded = ub64_decode(part)?;
    if arg_bytes(args, 0).is_empty() {
        return Some(Sample::Str(decoded.into()));
    }
    conv_json_query(args, Sample::Bin(decoded.into()), ctx).map(Sample::into_owned)
}

fn conv_jwt_header_query<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    member_query(args, smp, ctx, 0)
}

fn conv_jwt_payload_query<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    member_query(args, smp, ctx, 1)
}

/// An argument of `jwt_verify`: the string itself, or the variable's value as a
/// string (`None` when it is not set).
fn str_or_var(arg: &Arg, ctx: &SampleCtx<'_>) -> Option<Vec<u8>> {
    match arg {
        Arg::Str(s) => Some(s.to_vec()),
        var => var_bytes(var, ctx, false),
    }
}

/// `jwt_verify(<alg>,<key>)`: 1 when the token's signature is good, 0 when not, a
/// negative value when it cannot be checked (HAProxy's table of return values).
fn conv_jwt_verify<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let alg = str_or_var(args.first()?, ctx)?;
    let key = str_or_var(args.get(1)?, ctx)?;
    let token = bytes_of(smp)?;
    Some(Sample::Sint(verify(&token, &alg, &key) as i64))
}

/// Verifies the JWS `token` with algorithm `alg` and `key` (a secret, or the path of
/// a public key read at startup).
fn verify(token: &[u8], alg: &[u8], key: &[u8]) -> Verdict {
    let Some(alg) = Alg::parse(alg) else { return Verdict::UnknownAlg };
    let parts: Vec<&[u8]> = token.split(|&c| c == b'.').collect();
    let signed_len = match parts.as_slice() {
        [h, c, _] => h.len() + 1 + c.len(),
        // `none` may leave the signature out, dot included
        [h, c] if alg == Alg::None => h.len() + 1 + c.len(),
        _ => return Verdict::InvalidToken,
    };
    let sig = parts.get(2).copied().unwrap_or_default();
    if alg == Alg::None {
        return if sig.is_empty() { Verdict::Ok } else { Verdict::Failed };
    }
    if sig.is_empty() {
        return Verdict::InvalidToken;
    }
    let Some(sig) = ub64_decode(sig) else { return Verdict::InvalidToken };
    let signed = &token[..signed_len];
    match alg {
        Alg::Hs(sha) => verdict(hmac_ok(sha, key, signed, &sig)),
        Alg::Rs(sha) | Alg::Es(sha) => {
            let Some(der) = keys().load().get(key).cloned() else { return Verdict::UnknownKey };
            if matches!(alg, Alg::Es(_)) && sig.len() % 2 == 1 {
                return Verdict::InvalidToken;
            }
            let algorithm: &'static dyn signature::VerificationAlgorithm = match (alg, sha) {
                (Alg::Rs(_), Sha::S256) => &signature::RSA_PKCS1_2048_8192_SHA256,
                (Alg::Rs(_), Sha::S384) => &signature::RSA_PKCS1_2048_8192_SHA384,
                (Alg::Rs(_), Sha::S512) => &signature::RSA_PKCS1_2048_8192_SHA512,
                (_, Sha::S256) => &signature::ECDSA_P256_SHA256_FIXED,
                (_, Sha::S384) => &signature::ECDSA_P384_SHA384_FIXED,
                (_, Sha::S512) => &signature::ECDSA_P521_SHA512_FIXED,
            };
            verdict(signature::UnparsedPublicKey::new(algorithm, &*der).verify(signed, &sig).is_ok())
        }
        Alg::Ps => Verdict::UnmanagedAlg,
        Alg::None => unreachable!("handled above"),
    }
}

fn verdict(ok: bool) -> Verdict {
    if ok {
        Verdict::Ok
    } else {
        Verdict::Failed
    }
}

/// Whether `sig` is the HMAC of `signed` with `secret` (compared in constant time).
fn hmac_ok(sha: Sha, secret: &[u8], signed: &[u8], sig: &[u8]) -> bool {
    let alg = match sha {
        Sha::S256 => hmac::HMAC_SHA256,
        Sha::S384 => hmac::HMAC_SHA384,
        Sha::S512 => hmac::HMAC_SHA512,
    };
    hmac::verify(&hmac::Key::new(alg, secret), signed, sig).is_ok()
}

const STR2: ArgSpec = ArgSpec::new(&[ArgT::Str, ArgT::Str], 0);

pub const KEYWORDS: &[ConvKw] = &[
    ConvKw::new("jwt_header_query", STR2, SmpType::Bin, SmpType::Any, conv_jwt_header_query).check(check_jwt_query),
    ConvKw::new("jwt_payload_query", STR2, SmpType::Bin, SmpType::Any, conv_jwt_payload_query).check(check_jwt_query),
    ConvKw::new("jwt_verify", ArgSpec::new(&[ArgT::Str, ArgT::Str], 2), SmpType::Bin, SmpType::Sint, conv_jwt_verify)
        .check(check_jwt_verify),
];

#[cfg(test)]
#[path = "jwt_tests.rs"]
mod tests;
