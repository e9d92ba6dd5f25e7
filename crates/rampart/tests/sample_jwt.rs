//! The JWT converters through the real binary: `jwt_header_query` picks the algorithm
//! of a bearer token, `jwt_verify` checks it with the secret or the public key file the
//! configuration names (keys and tokens made with openssl, in
//! `src/sample/conv/jwt_keys`). Run against haproxy 2.6 too when installed: both must
//! answer the same for good, tampered and broken tokens.

mod http_common;

use http_common::{start, RAMPART};
use rampart_testkit::{Differential, HttpBackend, RawClient, Reply, Running};

fn keys_dir() -> String {
    format!("{}/src/sample/conv/jwt_keys", env!("CARGO_MANIFEST_DIR"))
}

fn tokens() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(format!("{}/tokens.txt", keys_dir())).expect("tokens.txt");
    text.lines().filter_map(|l| l.split_once(' ')).map(|(a, t)| (a.into(), t.into())).collect()
}

/// A `listen` answering, for the bearer token of the request, the algorithm of its
/// header, a claim, and what `jwt_verify` says with the key of that algorithm.
fn cfg() -> String {
    let dir = keys_dir();
    let mut verify = String::new();
    for (alg, key) in [
        ("HS256", "hmac key hs256".to_string()),
        ("HS384", "hmac key hs384".into()),
        ("HS512", "hmac key hs512".into()),
        ("RS256", format!("{dir}/rsa-public.pem")),
        ("RS384", format!("{dir}/rsa-public.pem")),
        ("RS512", format!("{dir}/rsa-public.pem")),
        ("ES256", format!("{dir}/es256-public.pem")),
        ("ES384", format!("{dir}/es384-public.pem")),
        ("ES512", format!("{dir}/es512-public.pem")),
    ] {
        verify.push_str(&format!(
            "  http-request set-var(txn.v) var(txn.bearer),jwt_verify(txn.alg,\"{key}\") if {{ var(txn.alg) -m str {alg} }}\n"
        ));
    }
    format!(
        "global\n  nbthread 1\ndefaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         listen fe1\n  bind fd@${{fe1}}\n\
         http-request set-var(txn.bearer) http_auth_bearer\n\
         http-request set-var(txn.alg) var(txn.bearer),jwt_header_query('$.alg')\n\
         http-request set-var(txn.iat) var(txn.bearer),jwt_payload_query('$.iat','int')\n\
         {verify}\
         http-request set-var(txn.u) var(txn.bearer),jwt_verify(txn.alg,\"unknown.pem\")\n\
         http-request return status 200 content-type text/plain lf-string \"%[var(txn.alg)]|%[var(txn.iat)]|%[var(txn.v)]|%[var(txn.u)]\"\n\
         server s1 ${{s1_addr}}:${{s1_port}}\n"
    )
}

/// The answer for each token sent as a bearer.
fn answers(proxy: &Running, tokens: &[String]) -> Vec<String> {
    tokens
        .iter()
        .map(|t| {
            let mut c = RawClient::connect(proxy.addr("fe1")).unwrap();
            c.send(format!("GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer {t}\r\n\r\n")).unwrap();
            c.read_response().unwrap().body_str()
        })
        .collect()
}

fn server() -> HttpBackend {
    HttpBackend::builder("s1").respond(|_| Reply::ok()).start()
}

#[test]
fn tokens_verify_as_in_haproxy() {
    let mut sent: Vec<String> = Vec::new();
    for (_, t) in tokens() {
        // the token, then the same with one byte of its claims changed
        let mut bad = t.clone().into_bytes();
        let at = t.find('.').unwrap() + 3;
        bad[at] = if bad[at] == b'A' { b'B' } else { b'A' };
        sent.push(t);
        sent.push(String::from_utf8(bad).unwrap());
    }
    // broken ones: a missing signature, a signature that is not base64url
    let hs = tokens().into_iter().find(|(a, _)| a == "HS256").unwrap().1;
    let (head_claims, _) = hs.rsplit_once('.').unwrap();
    sent.push(format!("{head_claims}."));
    sent.push(format!("{head_claims}.!!"));
    let cfg = cfg();
    let d = Differential::new(RAMPART).listener("fe1").backend("s1", server).config(&cfg);
    let got = match d.run(|p| answers(p, &sent)) {
        Some(cmp) => {
            cmp.assert_same();
            cmp.rampart.client
        }
        None => {
            let s1 = server();
            answers(&start(&cfg, &[("s1", s1.addr())]), &sent)
        }
    };
    for (i, (alg, _)) in tokens().iter().enumerate() {
        assert_eq!(got[2 * i], format!("{alg}|1516239022|1|{}", if alg.starts_with("HS") { "0" } else { "-5" }));
        assert!(got[2 * i + 1].starts_with(&format!("{alg}|")) && got[2 * i + 1].contains("|0|"), "{}", got[2 * i + 1]);
    }
    assert_eq!(got[got.len() - 2], "HS256|1516239022|-3|-3");
    assert_eq!(got[got.len() - 1], "HS256|1516239022|-3|-3");
}
