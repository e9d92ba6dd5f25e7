//! OpenSSL cipher strings (`ciphers`, `ciphersuites`, `ssl-default-*-ciphers`) mapped
//! to the suites rustls provides. Configurations carry Mozilla's strings, which name
//! suites rustls does not have (DHE, CBC): those are left out with one warning naming
//! them, and a string naming none rustls has falls back to rustls' defaults.
//! HAProxy counterpart: `SSL_CTX_set_cipher_list()` / `SSL_CTX_set_ciphersuites()`
//! calls in src/ssl_sock.c (OpenSSL parses the strings there).

use rustls::{CipherSuite, SupportedCipherSuite};

/// OpenSSL's names of the suites rustls has (TLSv1.2 `ciphers`, then TLSv1.3
/// `ciphersuites`).
const NAMES: &[(&str, CipherSuite)] = &[
    ("ECDHE-ECDSA-AES128-GCM-SHA256", CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256),
    ("ECDHE-RSA-AES128-GCM-SHA256", CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256),
    ("ECDHE-ECDSA-AES256-GCM-SHA384", CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384),
    ("ECDHE-RSA-AES256-GCM-SHA384", CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384),
    ("ECDHE-ECDSA-CHACHA20-POLY1305", CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256),
    ("ECDHE-RSA-CHACHA20-POLY1305", CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256),
    ("TLS_AES_128_GCM_SHA256", CipherSuite::TLS13_AES_128_GCM_SHA256),
    ("TLS_AES_256_GCM_SHA384", CipherSuite::TLS13_AES_256_GCM_SHA384),
    ("TLS_CHACHA20_POLY1305_SHA256", CipherSuite::TLS13_CHACHA20_POLY1305_SHA256),
];

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

/// The OpenSSL name of a rustls suite.
pub fn openssl_name(s: CipherSuite) -> Option<&'static str> {
    NAMES.iter().find(|(_, c)| *c == s).map(|(n, _)| *n)
}

/// Keeps, among `all` (a provider's suites, in its order of preference), those the
/// strings name; a `None` string keeps every suite of its TLS version.
pub fn select(all: &[SupportedCipherSuite], tls12: Option<&str>, tls13: Option<&str>) -> Picked {
    let mut unknown = Vec::new();
    let mut fallback = (false, false);
    let mut wanted = |s: Option<&str>, v13: bool, fb: &mut bool| -> Option<Vec<CipherSuite>> {
        let s = s?;
        let mut out = Vec::new();
        for item in s.split([':', ',', ' ']).filter(|i| !i.is_empty()) {
            // `!x`, `-x`, `+x`, `@STRENGTH`: OpenSSL's ordering and exclusion modifiers
            if item.starts_with(['!', '-', '+', '@']) {
                continue;
            }
            match NAMES.iter().find(|(n, c)| *n == item && is_tls13(*c) == v13) {
                Some((_, c)) => out.push(*c),
                None => unknown.push(item.to_owned()),
            }
        }
        *fb = out.is_empty();
        (!out.is_empty()).then_some(out)
    };
    let w12 = wanted(tls12, false, &mut fallback.0);
    let w13 = wanted(tls13, true, &mut fallback.1);
    let keep = |s: &SupportedCipherSuite| {
        let c = s.suite();
        let list = if is_tls13(c) { &w13 } else { &w12 };
        list.as_ref().is_none_or(|l| l.contains(&c))
    };
    Picked { suites: all.iter().filter(|s| keep(s)).copied().collect(), unknown, fallback }
}

fn is_tls13(c: CipherSuite) -> bool {
    matches!(
        c,
        CipherSuite::TLS13_AES_128_GCM_SHA256
            | CipherSuite::TLS13_AES_256_GCM_SHA384
            | CipherSuite::TLS13_CHACHA20_POLY1305_SHA256
    )
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
}
