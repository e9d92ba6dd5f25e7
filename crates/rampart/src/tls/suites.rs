//! OpenSSL cipher strings (`ciphers`, `ciphersuites`, `ssl-default-*-ciphers`) and
//! group names (`curves`) mapped to what rustls provides, for both sides (`bind` and
//! `server`), and the OpenSSL names the `ssl_fc_cipher`/`ssl_bc_cipher` fetches give. Configurations carry Mozilla's strings, which name
//! suites rustls does not have (DHE, CBC): those are left out with one warning naming
//! them, and a string naming none rustls has falls back to rustls' defaults.
//! HAProxy counterpart: `SSL_CTX_set_cipher_list()` / `SSL_CTX_set_ciphersuites()`
//! calls in src/ssl_sock.c (OpenSSL parses the strings there).

use rampart_cfg::model::TlsVersion;
use rustls::crypto::{aws_lc_rs, SupportedKxGroup};
use rustls::{CipherSuite, SupportedCipherSuite};

/// OpenSSL's TLSv1.2 suite names (`ciphers`) and rustls' suites for them.
pub const TLS12: &[(&str, SupportedCipherSuite)] = &[
    ("ECDHE-ECDSA-AES128-GCM-SHA256", aws_lc_rs::cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256),
    ("ECDHE-RSA-AES128-GCM-SHA256", aws_lc_rs::cipher_suite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256),
    ("ECDHE-ECDSA-AES256-GCM-SHA384", aws_lc_rs::cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384),
    ("ECDHE-RSA-AES256-GCM-SHA384", aws_lc_rs::cipher_suite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384),
    ("ECDHE-ECDSA-CHACHA20-POLY1305", aws_lc_rs::cipher_suite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256),
    ("ECDHE-RSA-CHACHA20-POLY1305", aws_lc_rs::cipher_suite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256),
];

/// OpenSSL's TLSv1.3 suite names (`ciphersuites`) and rustls' suites for them.
pub const TLS13: &[(&str, SupportedCipherSuite)] = &[
    ("TLS_AES_128_GCM_SHA256", aws_lc_rs::cipher_suite::TLS13_AES_128_GCM_SHA256),
    ("TLS_AES_256_GCM_SHA384", aws_lc_rs::cipher_suite::TLS13_AES_256_GCM_SHA384),
    ("TLS_CHACHA20_POLY1305_SHA256", aws_lc_rs::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256),
];

/// OpenSSL's group names (`curves`) and rustls' groups.
pub const GROUPS: &[(&str, &dyn SupportedKxGroup)] = &[
    ("X25519", aws_lc_rs::kx_group::X25519),
    ("x25519", aws_lc_rs::kx_group::X25519),
    ("P-256", aws_lc_rs::kx_group::SECP256R1),
    ("prime256v1", aws_lc_rs::kx_group::SECP256R1),
    ("secp256r1", aws_lc_rs::kx_group::SECP256R1),
    ("P-384", aws_lc_rs::kx_group::SECP384R1),
    ("secp384r1", aws_lc_rs::kx_group::SECP384R1),
];

/// Maps a colon-separated OpenSSL list onto `table`, in the list's order. Returns the
/// items found and the names rustls cannot provide (OpenSSL's operators `!x`, `-x`,
/// `+x`, `@x` are not names and are skipped).
pub fn map_names<T: Copy>(list: &str, table: &[(&str, T)]) -> (Vec<T>, Vec<String>) {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for name in list.split([':', ',', ' ']).filter(|n| !n.is_empty()) {
        if name.starts_with(['!', '-', '+', '@']) {
            continue;
        }
        match table.iter().find(|(n, _)| *n == name) {
            Some((_, v)) => found.push(*v),
            None => missing.push(name.to_string()),
        }
    }
    (found, missing)
}

/// The rustls versions, newest first, that `allowed` lets through (HAProxy's
/// `no-*`/`ssl-min-ver`/`ssl-max-ver`/`force-*` rule, decided by the caller).
pub fn protocol_versions(allowed: impl Fn(TlsVersion) -> bool) -> Vec<&'static rustls::SupportedProtocolVersion> {
    let mut out = Vec::new();
    if allowed(TlsVersion::TlsV13) {
        out.push(&rustls::version::TLS13);
    }
    if allowed(TlsVersion::TlsV12) {
        out.push(&rustls::version::TLS12);
    }
    out
}

/// The suites chosen for one configuration, and what could not be.
#[derive(Debug)]
pub struct Picked {
    pub suites: Vec<SupportedCipherSuite>,
    /// Names in the strings that rustls does not provide (aliases such as `HIGH` too).
    pub unknown: Vec<String>,
    /// The (TLSv1.2, TLSv1.3) string named no suite rustls has: its defaults are used.
    pub fallback: (bool, bool),
}

impl Picked {
    /// The warning to print, if anything was left out.
    pub fn warning(&self) -> Option<String> {
        if self.unknown.is_empty() {
            return None;
        }
        let used: Vec<&str> = self.suites.iter().filter_map(|s| openssl_name(s.suite())).collect();
        let fallback = if self.fallback.0 || self.fallback.1 { " (rustls' defaults)" } else { "" };
        Some(format!(
            "ciphers not available in rampart (rustls) are ignored: {}; using{fallback}: {}.",
            self.unknown.join(", "),
            used.join(":")
        ))
    }
}

/// The OpenSSL name of a rustls suite (`ssl_fc_cipher`, `ssl_bc_cipher`).
pub fn openssl_name(s: CipherSuite) -> Option<&'static str> {
    TLS12.iter().chain(TLS13).find(|(_, c)| c.suite() == s).map(|(n, _)| *n)
}

/// The secret bits of a rustls suite (`ssl_fc_use_keysize`): all are AEADs, whose
/// key is 128 bits for AES-128 and 256 bits for AES-256 and CHACHA20.
pub fn key_bits(s: CipherSuite) -> u32 {
    match openssl_name(s) {
        Some(n) if n.contains("AES128") || n.contains("AES_128") => 128,
        Some(_) => 256,
        None => 0,
    }
}

/// Keeps, among `all` (a provider's suites, in its order of preference), those the
/// strings name; a `None` string keeps every suite of its TLS version.
pub fn select(all: &[SupportedCipherSuite], tls12: Option<&str>, tls13: Option<&str>) -> Picked {
    let mut unknown = Vec::new();
    let mut fallback = (false, false);
    let mut wanted = |s: Option<&str>, table: &[(&str, SupportedCipherSuite)], fb: &mut bool| {
        let (found, missing) = map_names(s?, table);
        unknown.extend(missing);
        *fb = found.is_empty();
        (!found.is_empty()).then(|| found.iter().map(|f| f.suite()).collect::<Vec<CipherSuite>>())
    };
    let w12 = wanted(tls12, TLS12, &mut fallback.0);
    let w13 = wanted(tls13, TLS13, &mut fallback.1);
    let keep = |s: &SupportedCipherSuite| {
        let list = if matches!(s, SupportedCipherSuite::Tls13(_)) { &w13 } else { &w12 };
        list.as_ref().is_none_or(|l| l.contains(&s.suite()))
    };
    Picked { suites: all.iter().filter(|s| keep(s)).copied().collect(), unknown, fallback }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mozilla's intermediate `ssl-default-*-ciphers` (2024).
    const MOZ_INTERMEDIATE: &str = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:\
        ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:\
        ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305";

    fn all() -> Vec<SupportedCipherSuite> {
        rustls::crypto::aws_lc_rs::default_provider().cipher_suites
    }

    #[test]
    fn mozilla_intermediate_keeps_the_ecdhe_suites() {
        let p = select(&all(), Some(MOZ_INTERMEDIATE), None);
        assert_eq!(p.unknown, ["DHE-RSA-AES128-GCM-SHA256", "DHE-RSA-AES256-GCM-SHA384", "DHE-RSA-CHACHA20-POLY1305"]);
        assert_eq!(p.suites.len(), 9, "6 TLSv1.2 + the 3 TLSv1.3 defaults");
        let w = p.warning().expect("warning");
        assert!(
            w.starts_with("ciphers not available in rampart (rustls) are ignored: DHE-RSA-AES128-GCM-SHA256"),
            "{w}"
        );
    }

    #[test]
    fn restricts_and_falls_back() {
        let p = select(&all(), Some("ECDHE-RSA-AES256-GCM-SHA384"), Some("TLS_AES_128_GCM_SHA256"));
        let names: Vec<_> = p.suites.iter().filter_map(|s| openssl_name(s.suite())).collect();
        assert_eq!(names, ["TLS_AES_128_GCM_SHA256", "ECDHE-RSA-AES256-GCM-SHA384"]);
        assert!(p.warning().is_none());
        let p = select(&all(), Some("HIGH:!aNULL:!MD5"), None);
        assert_eq!((p.unknown.as_slice(), p.fallback), (&["HIGH".to_owned()][..], (true, false)));
        assert_eq!(p.suites.len(), all().len());
        assert!(p.warning().expect("warning").contains("(rustls' defaults)"));
        // a TLSv1.3 name in `ciphers` is not one of its suites
        let p = select(&all(), Some("TLS_AES_128_GCM_SHA256"), None);
        assert_eq!(p.unknown, ["TLS_AES_128_GCM_SHA256"]);
    }

    #[test]
    fn names_and_key_sizes() {
        let n = |c| (openssl_name(c), key_bits(c));
        assert_eq!(n(CipherSuite::TLS13_AES_128_GCM_SHA256), (Some("TLS_AES_128_GCM_SHA256"), 128));
        assert_eq!(n(CipherSuite::TLS13_CHACHA20_POLY1305_SHA256), (Some("TLS_CHACHA20_POLY1305_SHA256"), 256));
        assert_eq!(n(CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256), (Some("ECDHE-RSA-AES128-GCM-SHA256"), 128));
        assert_eq!(
            n(CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384),
            (Some("ECDHE-ECDSA-AES256-GCM-SHA384"), 256)
        );
        assert_eq!(n(CipherSuite::TLS_RSA_WITH_AES_128_CBC_SHA), (None, 0));
        // every suite the provider offers has a name
        assert!(all().iter().all(|s| openssl_name(s.suite()).is_some()));
    }

    #[test]
    fn versions_newest_first() {
        assert_eq!(protocol_versions(|_| true), [&rustls::version::TLS13, &rustls::version::TLS12]);
        assert_eq!(protocol_versions(|v| v == TlsVersion::TlsV12), [&rustls::version::TLS12]);
        assert!(protocol_versions(|_| false).is_empty());
    }
}
