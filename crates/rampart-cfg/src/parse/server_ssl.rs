//! The TLS options of `server` / `default-server` lines and the `ssl-default-server-*`
//! / `ssl-server-verify` globals. Files (`ca-file`, `crt`, `crl-file`) are only named
//! here: the daemon loads them (`tls::client`) and reports what is wrong with them.
//! HAProxy counterparts: the `srv_parse_*()` keyword parsers and
//! `ssl_parse_global_*()` of src/cfgparse-ssl.c.

use crate::model::{ExprSrc, ServerTls, SslServerDefaults};
use crate::span::Span;

use super::{arg, Parser};

/// Applies `word` if it is a TLS option; `None` when it is not one. `Err` is HAProxy's
/// message (the caller adds the `'server b/s' : ` prefix and the final period).
pub(super) fn apply_tls_option(word: &str, value: &str, t: &mut ServerTls, span: &Span) -> Option<Result<(), String>> {
    match apply(word, value, t, span) {
        Ok(false) => None,
        Ok(true) => Some(Ok(())),
        Err(e) => Some(Err(e)),
    }
}

/// [`apply_tls_option`] on settings shared with others (a server's, from its
/// `default-server`): copied first if `word` is a TLS option, else left shared.
pub(super) fn apply_shared_tls_option(
    word: &str,
    value: &str,
    t: &mut std::sync::Arc<ServerTls>,
    span: &Span,
) -> Option<Result<(), String>> {
    // whether `word` is one: applied to a scratch copy of the defaults (not a TLS
    // option: `Ok(false)`, whatever the value)
    if apply(word, value, &mut ServerTls::default(), span) == Ok(false) {
        return None;
    }
    apply_tls_option(word, value, std::sync::Arc::make_mut(t), span)
}

/// [`apply_tls_option`]: `Ok(false)` when `word` is not a TLS option.
fn apply(word: &str, value: &str, t: &mut ServerTls, span: &Span) -> Result<bool, String> {
    let missing = |what: &str| format!("'{word}' : missing {what}");
    const ALPN: &str = "the comma-delimited ALPN protocol suite";
    match word {
        "ssl" => {
            t.ssl = true;
            t.no_ssl = false;
            t.ssl_ctx = true;
        }
        "no-ssl" => {
            t.ssl = false;
            t.no_ssl = true;
        }
        "verify" => {
            t.verify = Some(match value {
                "" => return Err(missing("verify method")),
                "none" => false,
                "required" => true,
                _ => {
                    return Err(format!(
                        "'{word}' : unknown verify method '{value}', only 'none' and 'required' are supported"
                    ))
                }
            })
        }
        "verifyhost" => set_str(&mut t.verifyhost, value).map_err(|()| missing("hostname to verify against"))?,
        "ca-file" => set_str(&mut t.ca_file, value).map_err(|()| missing("CAfile path"))?,
        "crl-file" => set_str(&mut t.crl_file, value).map_err(|()| missing("CRLfile path"))?,
        "crt" => set_str(&mut t.crt, value).map_err(|()| missing("certificate file path"))?,
        "ciphers" => set_str(&mut t.ciphers, value).map_err(|()| missing("cipher suite"))?,
        "ciphersuites" => set_str(&mut t.ciphersuites, value).map_err(|()| missing("cipher suite"))?,
        "check-sni" => set_str(&mut t.check_sni, value).map_err(|()| missing("SNI"))?,
        "sni" if value.is_empty() => return Err(missing("sni expression")),
        "sni" => t.sni = Some(ExprSrc { text: value.to_owned(), span: span.clone() }),
        "alpn" => t.alpn = Some(alpn(value).map_err(|()| missing(ALPN))?),
        "check-alpn" => t.check_alpn = Some(alpn(value).map_err(|()| missing(ALPN))?),
        "ssl-reuse" => t.reuse = true,
        "no-ssl-reuse" => t.reuse = false,
        "tls-tickets" => t.tickets = true,
        "no-tls-tickets" => t.tickets = false,
        "check-ssl" => t.check_ssl = true,
        "no-check-ssl" => t.check_ssl = false,
        _ => return t.versions.apply(word, value),
    }
    Ok(true)
}

fn set_str(slot: &mut Option<String>, value: &str) -> Result<(), ()> {
    if value.is_empty() {
        return Err(());
    }
    *slot = Some(value.to_owned());
    Ok(())
}

/// A comma-separated ALPN list (HAProxy refuses an empty one, and empty or over-long
/// names inside it).
fn alpn(value: &str) -> Result<Vec<String>, ()> {
    if value.is_empty() {
        return Err(());
    }
    Ok(value.split(',').map(str::to_owned).collect())
}

/// `ssl-default-server-ciphers`, `-ciphersuites`, `-options` and `ssl-server-verify`.
pub(super) fn parse_global_ssl_server(p: &mut Parser, words: &[String], span: &Span) {
    let word = words[0].as_str();
    let value = arg(words, 1);
    let d = &mut p.global.ssl_server;
    let err = match word {
        "ssl-server-verify" => match value {
            "none" => {
                d.verify_none = true;
                None
            }
            "required" => {
                d.verify_none = false;
                None
            }
            _ => Some("'ssl-server-verify' expects 'none' or 'required' as argument.".to_owned()),
        },
        "ssl-default-server-ciphers" | "ssl-default-server-ciphersuites" => {
            let slot = if word == "ssl-default-server-ciphers" { &mut d.ciphers } else { &mut d.ciphersuites };
            set_str(slot, value)
                .err()
                .map(|()| format!("global statement '{word}' expects a cipher suite as an argument."))
        }
        _ => default_server_options(d, &words[1..]).err(),
    };
    if let Some(msg) = err {
        p.alert(span, msg);
    }
}

/// `ssl-default-server-options <opt>...`: the version options and `no-tls-tickets`.
fn default_server_options(d: &mut SslServerDefaults, opts: &[String]) -> Result<(), String> {
    const STMT: &str = "on global statement 'ssl-default-server-options'";
    let mut i = 0;
    while let Some(opt) = opts.get(i) {
        let value = opts.get(i + 1).map_or("", String::as_str);
        i += 1;
        if opt == "no-tls-tickets" {
            d.no_tls_tickets = true;
            continue;
        }
        match d.versions.apply(opt, value) {
            Ok(true) => i += usize::from(opt.starts_with("ssl-m")),
            Ok(false) => return Err(format!("unknown option '{opt}' {STMT}.")),
            Err(_) if value.is_empty() => return Err(format!("'{opt}' : missing the ssl/tls version {STMT}.")),
            Err(_) => return Err(format!("'{value}' : unknown ssl/tls version {STMT}.")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::model::TlsVersion;
    use crate::parse::tests::{alerts, parse_ok};

    #[test]
    fn server_tls_options_and_inheritance() {
        let cfg = parse_ok(
            "backend b\n default-server ssl verify required ca-file /ca.pem alpn h2,http/1.1 no-ssl-reuse\n \
             server s1 127.0.0.1:1 sni req.hdr(host) crt /c.pem ssl-min-ver TLSv1.2 no-tlsv13 ciphers ECDHE-RSA-AES128-GCM-SHA256\n \
             server s2 127.0.0.1:2 no-ssl verify none ssl-reuse no-tls-tickets check-ssl check-sni x.example check-alpn http/1.0\n",
        );
        let (a, b) = (&cfg.proxies[0].servers[0].tls, &cfg.proxies[0].servers[1].tls);
        assert!(a.ssl && !b.ssl);
        assert_eq!((a.verify, b.verify), (Some(true), Some(false)));
        assert_eq!((a.ca_file.as_deref(), b.ca_file.as_deref()), (Some("/ca.pem"), Some("/ca.pem")));
        assert_eq!(a.alpn.as_deref(), Some(&["h2".to_owned(), "http/1.1".to_owned()][..]));
        assert_eq!(a.sni.as_ref().map(|e| (e.text.as_str(), e.span.line)), Some(("req.hdr(host)", 3)));
        assert_eq!(a.crt.as_deref(), Some("/c.pem"));
        assert_eq!(a.versions.min, Some(TlsVersion::TlsV12));
        assert!(a.versions.is_disabled(TlsVersion::TlsV13) && !b.versions.is_set());
        assert_eq!(a.ciphers.as_deref(), Some("ECDHE-RSA-AES128-GCM-SHA256"));
        assert!(!a.reuse && b.reuse && a.tickets && !b.tickets);
        assert!(!a.check_ssl && b.check_ssl && b.checks_use_tls());
        assert_eq!(b.check_sni.as_deref(), Some("x.example"));
        assert_eq!(b.check_alpn.as_deref(), Some(&["http/1.0".to_owned()][..]));
    }

    #[test]
    fn server_tls_errors_as_haproxy() {
        let a = |opts: &str| alerts(&format!("backend b\n server s 127.0.0.1:80 {opts}\n"));
        assert_eq!(
            a("ssl verify bogus"),
            ["'server b/s' : 'verify' : unknown verify method 'bogus', only 'none' and 'required' are supported."]
        );
        assert_eq!(a("verify"), ["'server b/s' : 'verify' : missing verify method."]);
        assert_eq!(a("ssl-min-ver TLSv9"), ["'server b/s' : 'TLSv9' : unknown ssl/tls version."]);
        assert_eq!(a("ssl-max-ver"), ["'server b/s' : 'ssl-max-ver' : missing the ssl/tls version."]);
        assert_eq!(a("sni"), ["'server b/s' : 'sni' : missing sni expression."]);
        assert_eq!(a("alpn"), ["'server b/s' : 'alpn' : missing the comma-delimited ALPN protocol suite."]);
        assert_eq!(a("ca-file"), ["'server b/s' : 'ca-file' : missing CAfile path."]);
        assert_eq!(a("crl-file"), ["'server b/s' : 'crl-file' : missing CRLfile path."]);
        assert_eq!(a("crt"), ["'server b/s' : 'crt' : missing certificate file path."]);
        assert_eq!(a("ciphers"), ["'server b/s' : 'ciphers' : missing cipher suite."]);
        assert_eq!(a("ciphersuites"), ["'server b/s' : 'ciphersuites' : missing cipher suite."]);
        assert_eq!(a("check-sni"), ["'server b/s' : 'check-sni' : missing SNI."]);
        assert_eq!(a("verifyhost"), ["'server b/s' : 'verifyhost' : missing hostname to verify against."]);
        assert_eq!(a("npn http/1.1"), ["'server b/s' : 'npn' is not supported yet"]);
    }

    #[test]
    fn global_ssl_server_defaults() {
        let cfg = parse_ok(
            "global\n ssl-server-verify none\n ssl-default-server-ciphers ECDHE+AESGCM\n \
             ssl-default-server-ciphersuites TLS_AES_128_GCM_SHA256\n \
             ssl-default-server-options no-sslv3 no-tlsv10 ssl-min-ver TLSv1.2 no-tls-tickets\n",
        );
        let d = &cfg.global.ssl_server;
        assert!(d.verify_none && d.no_tls_tickets);
        assert_eq!(d.ciphers.as_deref(), Some("ECDHE+AESGCM"));
        assert_eq!(d.ciphersuites.as_deref(), Some("TLS_AES_128_GCM_SHA256"));
        assert_eq!(d.versions.min, Some(TlsVersion::TlsV12));
        assert!(d.versions.is_disabled(TlsVersion::SslV3) && d.versions.is_disabled(TlsVersion::TlsV10));
        let g = |line: &str| alerts(&format!("global\n {line}\n"));
        assert_eq!(
            g("ssl-default-server-options no-sslv3 bogus"),
            ["unknown option 'bogus' on global statement 'ssl-default-server-options'."]
        );
        assert_eq!(
            g("ssl-default-server-options ssl-min-ver TLSv9"),
            ["'TLSv9' : unknown ssl/tls version on global statement 'ssl-default-server-options'."]
        );
        assert_eq!(g("ssl-server-verify maybe"), ["'ssl-server-verify' expects 'none' or 'required' as argument."]);
        assert_eq!(
            g("ssl-default-server-ciphers"),
            ["global statement 'ssl-default-server-ciphers' expects a cipher suite as an argument."]
        );
    }
}
