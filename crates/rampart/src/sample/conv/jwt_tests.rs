//! Tokens and keys in `jwt_keys/` were made with openssl (see its README); the
//! answers for broken tokens follow HAProxy 2.6's table of `jwt_verify` values.

use super::super::testing::{check, int, run, s, st, text};
use super::*;

fn keys_dir() -> String {
    format!("{}/src/sample/conv/jwt_keys", env!("CARGO_MANIFEST_DIR"))
}

/// `(alg, token)` of each line of `tokens.txt`.
fn tokens() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(format!("{}/tokens.txt", keys_dir())).expect("tokens.txt");
    text.lines().filter_map(|l| l.split_once(' ')).map(|(a, t)| (a.to_string(), t.to_string())).collect()
}

/// The key argument for `alg`: the secret, or the path of its public key.
fn key_for(alg: &str) -> String {
    match &alg[..2] {
        "HS" => format!("hmac key {}", alg.to_ascii_lowercase()),
        "RS" => format!("{}/rsa-public.pem", keys_dir()),
        _ => format!("{}/{}-public.pem", keys_dir(), alg.to_ascii_lowercase()),
    }
}

fn verify_with(alg: &str, key: &str, token: &str) -> Option<i64> {
    int("jwt_verify", vec![s(alg), s(key)], st(token))
}

#[test]
fn every_algorithm_verifies_its_token_and_refuses_a_tampered_one() {
    let all = tokens();
    assert_eq!(all.len(), 9);
    for (alg, token) in &all {
        let key = key_for(alg);
        assert_eq!(verify_with(alg, &key, token), Some(1), "{alg}");
        // one byte of the claims changed
        let mut bad = token.clone().into_bytes();
        let at = token.find('.').unwrap() + 3;
        bad[at] = if bad[at] == b'A' { b'B' } else { b'A' };
        assert_eq!(verify_with(alg, &key, std::str::from_utf8(&bad).unwrap()), Some(0), "{alg} tampered");
    }
}

#[test]
fn a_key_of_another_family_or_size_fails_verification() {
    let all = tokens();
    let (_, rs256) = all.iter().find(|(a, _)| a == "RS256").unwrap();
    let (_, es256) = all.iter().find(|(a, _)| a == "ES256").unwrap();
    assert_eq!(verify_with("RS256", &key_for("ES256"), rs256), Some(0));
    assert_eq!(verify_with("ES256", &key_for("ES384"), es256), Some(0));
    assert_eq!(verify_with("HS256", "wrong secret", &all.iter().find(|(a, _)| a == "HS256").unwrap().1), Some(0));
}

#[test]
fn broken_tokens_and_unknown_keys_get_haproxys_error_values() {
    let all = tokens();
    let (_, es256) = all.iter().find(|(a, _)| a == "ES256").unwrap();
    // a file never named in the configuration
    assert_eq!(verify_with("RS256", "/nonexistent/key.pem", es256), Some(-5));
    // an odd-length ECDSA signature
    // 86 characters hold the 64 bytes of the signature: one more gives 65
    let odd = format!("{}A", es256);
    assert_eq!(verify_with("ES256", &key_for("ES256"), &odd), Some(-3));
    assert_eq!(verify_with("HS256", "k", "a.b"), Some(-3));
    assert_eq!(verify_with("HS256", "k", "a.b."), Some(-3));
    assert_eq!(verify_with("HS256", "k", "a.b.c.d"), Some(-3));
    assert_eq!(verify_with("HS256", "k", "a.b.!!"), Some(-3));
    assert_eq!(verify_with("none", "k", "a.b."), Some(1));
    assert_eq!(verify_with("none", "k", "a.b"), Some(1));
    assert_eq!(verify_with("none", "k", "a.b.c"), Some(0));
}

#[test]
fn the_algorithm_is_checked_when_written_and_read_from_a_variable_when_named() {
    assert_eq!(check("jwt_verify", vec![s("XS256"), s("k")]).unwrap_err(), "unknown JWT algorithm: XS256");
    assert_eq!(check("jwt_verify", vec![s("PS256"), s("k")]).unwrap_err(), "RSASSA-PSS JWS signing not managed yet");
    let args = check("jwt_verify", vec![s("txn.v"), s("k")]).unwrap();
    assert!(matches!(args[0], Arg::Var(_)));
    assert!(matches!(args[1], Arg::Str(_)));
    // `txn.v` holds `abz`, not an algorithm
    assert_eq!(int("jwt_verify", vec![s("txn.v"), s("k")], st("a.b.c")), Some(-1));
    // an unset variable: no result
    assert_eq!(run("jwt_verify", vec![s("txn.nosuch"), s("k")], st("a.b.c")), None);
}

#[test]
fn header_and_payload_parts_are_decoded_and_queried() {
    let (_, token) = tokens().into_iter().find(|(a, _)| a == "HS256").unwrap();
    assert_eq!(text("jwt_header_query", vec![], st(&token)).as_deref(), Some(r#"{"alg":"HS256","typ":"JWT"}"#));
    assert_eq!(text("jwt_header_query", vec![s("$.alg")], st(&token)).as_deref(), Some("HS256"));
    assert_eq!(text("jwt_payload_query", vec![s("$.name")], st(&token)).as_deref(), Some("John Doe"));
    assert_eq!(run("jwt_payload_query", vec![s("$.iat"), s("int")], st(&token)), Some(Sample::Sint(1516239022)));
    assert_eq!(
        check("jwt_payload_query", vec![s("$.iat"), s("str")]).unwrap_err(),
        "output_type only supports \"int\" as argument"
    );
    // no second part; a part that is not base64url
    assert_eq!(text("jwt_payload_query", vec![], st("eyJhIjoxfQ")), None);
    assert_eq!(text("jwt_header_query", vec![], st("a*b.c")), None);
}
