//! Cryptographic digests of a binary sample: `sha1`, `sha2`, `digest`, `hmac`.
//! HAProxy counterparts: src/sample.c (`sample_conv_sha1`), src/ssl_sample.c
//! (`sample_conv_sha2`, `sample_conv_crypto_digest`, `sample_conv_crypto_hmac`),
//! where the algorithms come from OpenSSL; here from the RustCrypto crates.
//!
//! `digest` and `hmac` take OpenSSL's digest names, matched without case and with the
//! aliases OpenSSL 3 knows (`sha256`, `SHA2-256`, `sha-256`, `RSA-SHA256`, its OID
//! ...). Names OpenSSL knows but rampart does not implement are refused as "not
//! supported yet"; `md4` and `whirlpool`, which HAProxy accepts but can never compute
//! (OpenSSL's legacy provider is not loaded), give an absent sample as there.

use hmac::digest::common::BlockSizeUser;
use hmac::digest::{Digest, KeyInit, Mac};
use hmac::SimpleHmac;

use super::{arg_bytes, arg_sint, bytes_of, new_bin, var_arg, var_bytes};
use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{Arg, ArgList, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};

/// A digest algorithm, stored as `Arg::Sint(Algo as i64)` once checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algo {
    Md5,
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512,
    Sha512_224,
    Sha512_256,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    /// Known to OpenSSL but unavailable at run time (legacy provider): always fails.
    Unavailable,
}

const ALGOS: [Algo; 13] = [
    Algo::Md5,
    Algo::Sha1,
    Algo::Sha224,
    Algo::Sha256,
    Algo::Sha384,
    Algo::Sha512,
    Algo::Sha512_224,
    Algo::Sha512_256,
    Algo::Sha3_224,
    Algo::Sha3_256,
    Algo::Sha3_384,
    Algo::Sha3_512,
    Algo::Unavailable,
];

/// OpenSSL 3 digest names and aliases (lower case) for each algorithm.
const NAMES: &[(&str, Algo)] = &[
    ("md5", Algo::Md5),
    ("rsa-md5", Algo::Md5),
    ("md5withrsaencryption", Algo::Md5),
    ("ssl3-md5", Algo::Md5),
    ("1.2.840.113549.2.5", Algo::Md5),
    ("sha1", Algo::Sha1),
    ("sha-1", Algo::Sha1),
    ("ssl3-sha1", Algo::Sha1),
    ("rsa-sha1", Algo::Sha1),
    ("rsa-sha1-2", Algo::Sha1),
    ("sha1withrsaencryption", Algo::Sha1),
    ("1.3.14.3.2.26", Algo::Sha1),
    ("sha224", Algo::Sha224),
    ("sha-224", Algo::Sha224),
    ("sha2-224", Algo::Sha224),
    ("rsa-sha224", Algo::Sha224),
    ("sha224withrsaencryption", Algo::Sha224),
    ("2.16.840.1.101.3.4.2.4", Algo::Sha224),
    ("sha256", Algo::Sha256),
    ("sha-256", Algo::Sha256),
    ("sha2-256", Algo::Sha256),
    ("rsa-sha256", Algo::Sha256),
    ("sha256withrsaencryption", Algo::Sha256),
    ("2.16.840.1.101.3.4.2.1", Algo::Sha256),
    ("sha384", Algo::Sha384),
    ("sha-384", Algo::Sha384),
    ("sha2-384", Algo::Sha384),
    ("rsa-sha384", Algo::Sha384),
    ("sha384withrsaencryption", Algo::Sha384),
    ("2.16.840.1.101.3.4.2.2", Algo::Sha384),
    ("sha512", Algo::Sha512),
    ("sha-512", Algo::Sha512),
    ("sha2-512", Algo::Sha512),
    ("rsa-sha512", Algo::Sha512),
    ("sha512withrsaencryption", Algo::Sha512),
    ("2.16.840.1.101.3.4.2.3", Algo::Sha512),
    ("sha512-224", Algo::Sha512_224),
    ("sha-512/224", Algo::Sha512_224),
    ("sha2-512/224", Algo::Sha512_224),
    ("rsa-sha512/224", Algo::Sha512_224),
    ("sha512-224withrsaencryption", Algo::Sha512_224),
    ("2.16.840.1.101.3.4.2.5", Algo::Sha512_224),
    ("sha512-256", Algo::Sha512_256),
    ("sha-512/256", Algo::Sha512_256),
    ("sha2-512/256", Algo::Sha512_256),
    ("rsa-sha512/256", Algo::Sha512_256),
    ("sha512-256withrsaencryption", Algo::Sha512_256),
    ("2.16.840.1.101.3.4.2.6", Algo::Sha512_256),
    ("sha3-224", Algo::Sha3_224),
    ("rsa-sha3-224", Algo::Sha3_224),
    ("id-rsassa-pkcs1-v1_5-with-sha3-224", Algo::Sha3_224),
    ("2.16.840.1.101.3.4.2.7", Algo::Sha3_224),
    ("sha3-256", Algo::Sha3_256),
    ("rsa-sha3-256", Algo::Sha3_256),
    ("id-rsassa-pkcs1-v1_5-with-sha3-256", Algo::Sha3_256),
    ("2.16.840.1.101.3.4.2.8", Algo::Sha3_256),
    ("sha3-384", Algo::Sha3_384),
    ("rsa-sha3-384", Algo::Sha3_384),
    ("id-rsassa-pkcs1-v1_5-with-sha3-384", Algo::Sha3_384),
    ("2.16.840.1.101.3.4.2.9", Algo::Sha3_384),
    ("sha3-512", Algo::Sha3_512),
    ("rsa-sha3-512", Algo::Sha3_512),
    ("id-rsassa-pkcs1-v1_5-with-sha3-512", Algo::Sha3_512),
    ("2.16.840.1.101.3.4.2.10", Algo::Sha3_512),
    ("md4", Algo::Unavailable),
    ("rsa-md4", Algo::Unavailable),
    ("md4withrsaencryption", Algo::Unavailable),
    ("whirlpool", Algo::Unavailable),
];

/// Digests OpenSSL has that rampart does not compute yet.
const NOT_YET: &[&str] = &[
    "blake2b512",
    "blake2s256",
    "ripemd160",
    "ripemd",
    "rmd160",
    "rsa-ripemd160",
    "ripemd160withrsa",
    "sm3",
    "rsa-sm3",
    "shake128",
    "shake256",
    "md5-sha1",
];

/// Resolves an OpenSSL digest name (HAProxy's `check_crypto_digest`).
fn parse_algo(name: &[u8]) -> Result<Algo, String> {
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    if let Some(&(_, a)) = NAMES.iter().find(|(n, _)| *n == lower) {
        return Ok(a);
    }
    if NOT_YET.contains(&lower.as_str()) {
        return Err(format!("digest algorithm '{}' is not supported yet", String::from_utf8_lossy(name)));
    }
    Err("algorithm must be a valid OpenSSL message digest name.".into())
}

fn algo_arg(args: &[Arg]) -> Option<Algo> {
    ALGOS.get(usize::try_from(arg_sint(args, 0)?).ok()?).copied()
}

fn hash<D: Digest>(data: &[u8]) -> Vec<u8> {
    D::digest(data).to_vec()
}

fn compute(algo: Algo, data: &[u8]) -> Option<Vec<u8>> {
    Some(match algo {
        Algo::Md5 => hash::<md5::Md5>(data),
        Algo::Sha1 => hash::<sha1::Sha1>(data),
        Algo::Sha224 => hash::<sha2::Sha224>(data),
        Algo::Sha256 => hash::<sha2::Sha256>(data),
        Algo::Sha384 => hash::<sha2::Sha384>(data),
        Algo::Sha512 => hash::<sha2::Sha512>(data),
        Algo::Sha512_224 => hash::<sha2::Sha512_224>(data),
        Algo::Sha512_256 => hash::<sha2::Sha512_256>(data),
        Algo::Sha3_224 => hash::<sha3::Sha3_224>(data),
        Algo::Sha3_256 => hash::<sha3::Sha3_256>(data),
        Algo::Sha3_384 => hash::<sha3::Sha3_384>(data),
        Algo::Sha3_512 => hash::<sha3::Sha3_512>(data),
        Algo::Unavailable => return None,
    })
}

fn mac<D: Digest + BlockSizeUser + Clone>(key: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    let mut m = <SimpleHmac<D> as KeyInit>::new_from_slice(key).ok()?;
    Mac::update(&mut m, data);
    Some(m.finalize().into_bytes().to_vec())
}

fn compute_hmac(algo: Algo, key: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    match algo {
        Algo::Md5 => mac::<md5::Md5>(key, data),
        Algo::Sha1 => mac::<sha1::Sha1>(key, data),
        Algo::Sha224 => mac::<sha2::Sha224>(key, data),
        Algo::Sha256 => mac::<sha2::Sha256>(key, data),
        Algo::Sha384 => mac::<sha2::Sha384>(key, data),
        Algo::Sha512 => mac::<sha2::Sha512>(key, data),
        Algo::Sha512_224 => mac::<sha2::Sha512_224>(key, data),
        Algo::Sha512_256 => mac::<sha2::Sha512_256>(key, data),
        Algo::Sha3_224 => mac::<sha3::Sha3_224>(key, data),
        Algo::Sha3_256 => mac::<sha3::Sha3_256>(key, data),
        Algo::Sha3_384 => mac::<sha3::Sha3_384>(key, data),
        Algo::Sha3_512 => mac::<sha3::Sha3_512>(key, data),
        Algo::Unavailable => None,
    }
}

// === sha1, sha2 ===

fn conv_sha1<'a>(_: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    Some(new_bin(hash::<sha1::Sha1>(&bytes_of(smp)?)))
}

/// `sha2([<bits>])`: 224, 256 (the default), 384 or 512.
fn check_sha2(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    match args.first() {
        None | Some(Arg::Sint(224 | 256 | 384 | 512)) => Ok(()),
        Some(Arg::Sint(n)) => Err(format!("Unsupported number of bits: '{n}'")),
        Some(_) => Err("Invalid type".into()),
    }
}

fn conv_sha2<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let algo = match arg_sint(args, 0).unwrap_or(256) {
        224 => Algo::Sha224,
        256 => Algo::Sha256,
        384 => Algo::Sha384,
        512 => Algo::Sha512,
        _ => return None,
    };
    Some(new_bin(compute(algo, &bytes_of(smp)?)?))
}

// === digest, hmac ===

/// The algorithm name becomes `Arg::Sint(<algo>)`.
fn check_digest(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let algo = parse_algo(arg_bytes(args, 0))?;
    let pos = ALGOS.iter().position(|&a| a == algo).unwrap_or(0);
    match args.first_mut() {
        Some(a) => *a = Arg::Sint(pos as i64),
        None => args.push(Arg::Sint(pos as i64)),
    }
    Ok(())
}

fn conv_digest<'a>(args: &'a [Arg], smp: Sample<'a>, _: &SampleCtx<'a>) -> Option<Sample<'a>> {
    Some(new_bin(compute(algo_arg(args)?, &bytes_of(smp)?)?))
}

const KEY_ERR: &str =
    "failed to parse key : argument needs to be base64 encoded, and can either be a string or a variable";

/// `hmac(<algorithm>,<key>)`: the key is a variable name (whose value is base64
/// decoded at run time) or a base64 constant decoded now; empty is an empty key.
fn check_hmac(args: &mut ArgList, cx: &mut CompileCx<'_>) -> Result<(), String> {
    check_digest(args, cx)?;
    let key = arg_bytes(args, 1).to_vec();
    if key.is_empty() {
        return Ok(());
    }
    let resolved = match var_arg(&key) {
        Some(var) => var,
        None if matches!(key.len() % 4, 0) => Arg::Str(super::encode::b64_decode(&key).ok_or(KEY_ERR)?.into()),
        None => return Err(KEY_ERR.into()),
    };
    args[1] = resolved;
    Ok(())
}

fn conv_hmac<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let algo = algo_arg(args)?;
    let data = bytes_of(smp)?;
    let out = match args.get(1) {
        Some(Arg::Str(key)) => compute_hmac(algo, key, &data)?,
        Some(var) => {
            let key = super::encode::b64_decode(&var_bytes(var, ctx, false)?)?;
            compute_hmac(algo, &key, &data)?
        }
        None => compute_hmac(algo, b"", &data)?,
    };
    Some(new_bin(out))
}

use ArgT::{Sint as SINT, Str as STR};
use SmpType::Bin;

pub const KEYWORDS: &[ConvKw] = &[
    ConvKw::new("sha1", ArgSpec::NONE, Bin, Bin, conv_sha1),
    ConvKw::new("sha2", ArgSpec::new(&[SINT], 0), Bin, Bin, conv_sha2).check(check_sha2),
    ConvKw::new("digest", ArgSpec::new(&[STR], 1), Bin, Bin, conv_digest).check(check_digest),
    ConvKw::new("hmac", ArgSpec::new(&[STR, STR], 2), Bin, Bin, conv_hmac).check(check_hmac),
];

#[cfg(test)]
mod tests {
    //! Expected values from haproxy 2.6.12: `str(abc),<conv>,hex` through `lf-string`.
    use super::super::testing::{bytes, check, i, run, s, st};
    use crate::sample::kw::Arg;

    fn hex(name: &str, args: Vec<Arg>, input: &str) -> Option<String> {
        let b = bytes(run(name, args, st(input)))?;
        Some(b.iter().map(|c| format!("{c:02X}")).collect())
    }

    const SHA256_ABC: &str = "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD";

    #[test]
    fn sha1_and_sha2() {
        assert_eq!(hex("sha1", vec![], "abc").unwrap(), "A9993E364706816ABA3E25717850C26C9CD0D89D");
        assert_eq!(hex("sha2", vec![], "abc").unwrap(), SHA256_ABC);
        assert_eq!(
            hex("sha2", vec![i(224)], "abc").unwrap(),
            "23097D223405D8228642A477BDA255B32AADBCE4BDA0B3F7E36C9DA7"
        );
        assert_eq!(
            hex("sha2", vec![i(384)], "abc").unwrap(),
            "CB00753F45A35E8BB5A03D699AC65007272C32AB0EDED1631A8B605A43FF5BED8086072BA1E7CC2358BAECA134C825A7"
        );
        assert_eq!(hex("sha2", vec![i(512)], "abc").unwrap().len(), 128);
        assert_eq!(check("sha2", vec![i(123)]).unwrap_err(), "Unsupported number of bits: '123'");
        assert_eq!(check("sha2", vec![i(0)]).unwrap_err(), "Unsupported number of bits: '0'");
    }

    #[test]
    fn digest_names_and_aliases() {
        assert_eq!(hex("digest", vec![s("md5")], "abc").unwrap(), "900150983CD24FB0D6963F7D28E17F72");
        for name in ["sha256", "SHA256", "sha-256", "SHA2-256", "rsa-sha256", "2.16.840.1.101.3.4.2.1"] {
            assert_eq!(hex("digest", vec![s(name)], "abc").unwrap(), SHA256_ABC, "{name}");
        }
        assert_eq!(
            hex("digest", vec![s("sha512-256")], "abc").unwrap(),
            "53048E2681941EF99B2E29B76B4C7DABE4C2D0C634FC6D46E0E2F13107E7AF23"
        );
        assert_eq!(
            hex("digest", vec![s("sha2-512/224")], "abc").unwrap(),
            "4634270F707B6A54DAAE7530460842E20E37ED265CEEE9A43E8924AA"
        );
        assert_eq!(
            hex("digest", vec![s("sha3-256")], "abc").unwrap(),
            "3A985DA74FE225B2045C172D6BD390BD855F086E3E9D525B46BFE24511431532"
        );
        assert_eq!(
            hex("digest", vec![s("sha3-224")], "abc").unwrap(),
            "E642824C3F8CF24AD09234EE7D3C766FC9A3A5168D0C94AD73B46FDF"
        );
    }

    #[test]
    fn digest_bad_names() {
        let msg = "algorithm must be a valid OpenSSL message digest name.";
        for name in ["foo", "", "sha512/256", "keccak-256", "id-sha256"] {
            assert_eq!(check("digest", vec![s(name)]).unwrap_err(), msg, "{name}");
        }
        assert_eq!(
            check("digest", vec![s("blake2b512")]).unwrap_err(),
            "digest algorithm 'blake2b512' is not supported yet"
        );
        // accepted by haproxy, never computed (OpenSSL legacy provider)
        assert_eq!(hex("digest", vec![s("md4")], "abc"), None);
    }

    #[test]
    fn hmac_keys() {
        assert_eq!(
            hex("hmac", vec![s("sha256"), s("a2V5")], "abc").unwrap(),
            "9C196E32DC0175F86F4B1CB89289D6619DE6BEE699E4C378E68309ED97A1A6AB"
        );
        assert_eq!(
            hex("hmac", vec![s("sha256"), s("")], "abc").unwrap(),
            "FD7ADB152C05EF80DCCF50A1FA4C05D5A3EC6DA95575FC312AE7C5D091836351"
        );
        assert_eq!(hex("hmac", vec![s("md5"), s("a2V5")], "abc").unwrap(), "D2FE98063F876B03193AFB49B4979591");
        // a variable key is base64-decoded at run time
        let with_var = hex("hmac", vec![s("sha256"), s("txn.k")], "abc");
        assert_eq!(with_var.as_deref(), Some("9C196E32DC0175F86F4B1CB89289D6619DE6BEE699E4C378E68309ED97A1A6AB"));
        assert_eq!(hex("hmac", vec![s("sha256"), s("txn.v")], "abc"), None);
        assert_eq!(hex("hmac", vec![s("sha256"), s("txn.nope")], "abc"), None);
        let bad = "failed to parse key : argument needs to be base64 encoded, and can either be a string or a variable";
        assert_eq!(check("hmac", vec![s("sha256"), s("a2V")]).unwrap_err(), bad);
        assert_eq!(check("hmac", vec![s("sha256"), s("a2V!")]).unwrap_err(), bad);
        assert_eq!(
            check("hmac", vec![s("foo"), s("a2V5")]).unwrap_err(),
            "algorithm must be a valid OpenSSL message digest name."
        );
    }
}
