//! TLS keywords: the `bind` options (`ssl`, `crt`, `ca-file`, `verify` ...) and the
//! `global` ones (`ssl-default-bind-*`, `ca-base`, `crt-base`, `tune.ssl.*`).
//! HAProxy counterpart: cfgparse-ssl.c.

use std::path::PathBuf;
use std::time::Duration;

use crate::model::{BindSsl, IgnoreErr, SslOptions, TlsVersion, Verify};
use crate::span::Span;

use super::{arg, Parser};

/// Whether `name` is a TLS option of `bind` (handled by [`apply_bind_ssl`]).
pub(super) fn is_bind_ssl_option(name: &str) -> bool {
    matches!(
        name,
        "ssl"
            | "crt"
            | "default-crt"
            | "crt-list"
            | "ca-file"
            | "crl-file"
            | "ca-verify-file"
            | "ca-ignore-err"
            | "crt-ignore-err"
            | "verify"
            | "alpn"
            | "npn"
            | "ciphers"
            | "ciphersuites"
            | "curves"
            | "ecdhe"
            | "generate-certificates"
            | "ca-sign-file"
            | "strict-sni"
            | "tls-ticket-keys"
    ) || option_flag(name).is_some()
        || name == "ssl-min-ver"
        || name == "ssl-max-ver"
}

/// The flags shared with `ssl-default-bind-options`.
fn option_flag(name: &str) -> Option<fn(&mut SslOptions)> {
    Some(match name {
        "no-sslv3" => |o| o.no_versions.push(TlsVersion::SslV3),
        "no-tlsv10" => |o| o.no_versions.push(TlsVersion::TlsV10),
        "no-tlsv11" => |o| o.no_versions.push(TlsVersion::TlsV11),
        "no-tlsv12" => |o| o.no_versions.push(TlsVersion::TlsV12),
        "no-tlsv13" => |o| o.no_versions.push(TlsVersion::TlsV13),
        "force-sslv3" => |o| o.force = Some(TlsVersion::SslV3),
        "force-tlsv10" => |o| o.force = Some(TlsVersion::TlsV10),
        "force-tlsv11" => |o| o.force = Some(TlsVersion::TlsV11),
        "force-tlsv12" => |o| o.force = Some(TlsVersion::TlsV12),
        "force-tlsv13" => |o| o.force = Some(TlsVersion::TlsV13),
        "no-tls-tickets" => |o| o.no_tls_tickets = true,
        "prefer-client-ciphers" => |o| o.prefer_client_ciphers = true,
        _ => return None,
    })
}

fn version(v: &str) -> Result<TlsVersion, String> {
    TlsVersion::parse(v).ok_or_else(|| format!("'{v}' : unknown ssl/tls version"))
}

/// The value of `ca-ignore-err` / `crt-ignore-err`: `all` or ids 1..94, each read as
/// C's `atoi` reads it (HAProxy's parser): `x` is 0, out of range.
fn ignore_err(name: &str, value: Option<&String>) -> Result<IgnoreErr, String> {
    let Some(list) = value else {
        return Err(format!("'{name}' : missing error IDs list"));
    };
    if list == "all" {
        return Ok(IgnoreErr::All);
    }
    let mut ids = Vec::new();
    for item in list.split(',') {
        let digits = item.trim_start().bytes().take_while(u8::is_ascii_digit).count();
        let id: u64 = item.trim_start()[..digits].parse().unwrap_or(0);
        match u8::try_from(id) {
            Ok(id @ 1..=94) => ids.push(id),
            _ => return Err(format!("'{name}' : ID '{id}' out of range (1..94) in error IDs list '{list}'")),
        }
    }
    Ok(IgnoreErr::Ids(ids))
}

/// Applies one TLS option of a `bind` line; `Err` is HAProxy's message after the
/// line's context.
pub(super) fn apply_bind_ssl(ssl: &mut BindSsl, name: &str, value: Option<&String>) -> Result<(), String> {
    let need = || value.cloned().ok_or_else(|| format!("'{name}' : missing value"));
    match name {
        "ssl" => ssl.enabled = true,
        "crt" => ssl.crts.push(PathBuf::from(need()?)),
        // HAProxy 3.x: the first certificate loaded is the default one
        "default-crt" => {
            ssl.crts.insert(ssl.default_crts, PathBuf::from(need()?));
            ssl.default_crts += 1;
        }
        "crt-list" => ssl.crt_lists.push(PathBuf::from(need()?)),
        "ca-file" => ssl.ca_file = Some(PathBuf::from(need()?)),
        "crl-file" => ssl.crl_file = Some(PathBuf::from(need()?)),
        "ca-verify-file" => ssl.ca_verify_file = Some(PathBuf::from(need()?)),
        "ca-ignore-err" => ssl.ca_ignore_err = Some(ignore_err(name, value)?),
        "crt-ignore-err" => ssl.crt_ignore_err = Some(ignore_err(name, value)?),
        "verify" => {
            ssl.verify = Some(match value.map(String::as_str) {
                Some("none") => Verify::None,
                Some("optional") => Verify::Optional,
                Some("required") => Verify::Required,
                other => {
                    return Err(format!(
                        "'verify' : unknown verify method '{}', only 'none', 'optional', and 'required' are supported",
                        other.unwrap_or("")
                    ))
                }
            })
        }
        "alpn" => ssl.alpn = Some(need()?.split(',').filter(|p| !p.is_empty()).map(str::to_string).collect()),
        "npn" => return Err("'npn' is not supported (rustls has no NPN; use 'alpn')".into()),
        "ciphers" => ssl.ciphers = Some(need()?),
        "ciphersuites" => ssl.ciphersuites = Some(need()?),
        "curves" => ssl.curves = Some(need()?),
        "ecdhe" => ssl.ecdhe = Some(need()?),
        "generate-certificates" => ssl.generate_certificates = true,
        "ca-sign-file" => ssl.ca_sign_file = Some(PathBuf::from(need()?)),
        "strict-sni" => ssl.strict_sni = true,
        "tls-ticket-keys" => match value.filter(|v| !v.is_empty()) {
            Some(file) => ssl.tls_ticket_keys = Some(file.clone()),
            None => return Err(format!("'{name}' : missing TLS ticket keys file path")),
        },
        "ssl-min-ver" => ssl.options.min_ver = Some(version(&need()?)?),
        "ssl-max-ver" => ssl.options.max_ver = Some(version(&need()?)?),
        other => match option_flag(other) {
            Some(set) => set(&mut ssl.options),
            None => return Err(super::not_yet(other)),
        },
    }
    Ok(())
}

/// `global` TLS keywords; `true` when `words[0]` was one of them.
pub(super) fn parse_global_ssl(p: &mut Parser, words: &[String], span: &Span) -> bool {
    let kw = words[0].as_str();
    let value = arg(words, 1);
    let missing = |p: &mut Parser| p.alert(span, format!("'{kw}' expects an argument."));
    match kw {
        "ssl-default-bind-ciphers"
        | "ssl-default-bind-ciphersuites"
        | "ssl-default-bind-curves"
        | "ca-base"
        | "crt-base" => {
            if value.is_empty() {
                missing(p);
                return true;
            }
            let g = &mut p.global.ssl;
            match kw {
                "ssl-default-bind-ciphers" => g.default_bind_ciphers = Some(value.into()),
                "ssl-default-bind-ciphersuites" => g.default_bind_ciphersuites = Some(value.into()),
                "ssl-default-bind-curves" => g.default_bind_curves = Some(value.into()),
                "ca-base" => g.ca_base = Some(value.into()),
                _ => g.crt_base = Some(value.into()),
            }
        }
        "ssl-default-bind-options" => parse_default_options(p, words, span),
        "ssl-load-extra-del-ext" => p.global.ssl.extra_files_noext = true,
        "tune.ssl.cachesize" => match value.parse::<usize>() {
            Ok(n) => p.global.ssl.cachesize = Some(n),
            Err(_) => p.alert(span, format!("'{kw}' expects an integer argument.")),
        },
        "tune.ssl.maxrecord" => match value.parse::<usize>() {
            Ok(n) => p.global.ssl.maxrecord = (n > 0).then_some(n),
            Err(_) => p.alert(span, format!("'{kw}' expects an integer argument.")),
        },
        "tune.ssl.lifetime" => match super::value::parse_time_ms(value) {
            Ok(t) if t.trailing.is_none() && !value.is_empty() => {
                p.global.ssl.lifetime = Some(Duration::from_millis(u64::from(t.ms)));
                // TODO(#11): rustls' ticketer offers no lifetime setting
                p.warning(
                    span,
                    format!("'{kw}' is not applied yet: TLS session tickets stay valid for rustls' fixed 6 hours."),
                );
            }
            _ => p.alert(span, format!("'{kw}' expects a timeout argument.")),
        },
        "tune.ssl.ssl-ctx-cache-size" => match value.parse::<usize>() {
            Ok(n) => p.global.ssl.ctx_cache_size = Some(n),
            Err(_) => p.alert(span, format!("'{kw}' expects an integer argument.")),
        },
        // the capture buffer only serves the ssl_fc_cipherlist_* fetches, not provided.
        "tune.ssl.capture-buffer-size" => {
            if value.parse::<u32>().is_err() {
                p.alert(span, format!("'{kw}' expects an integer argument."));
            }
        }
        "tune.ssl.default-dh-param" => {
            if value.parse::<u32>().is_err() {
                p.alert(span, format!("'{kw}' expects an integer argument."));
            } else {
                dh_warning(p, span);
            }
        }
        "ssl-dh-param-file" => {
            if value.is_empty() {
                missing(p);
            } else if !is_dh_params_file(value) {
                p.alert(span, format!("'{kw}': unable to load DH parameters from file <{value}>."));
            } else {
                dh_warning(p, span);
            }
        }
        _ => return false,
    }
    true
}

/// COMPAT: rustls has no DHE cipher suite, so DH parameters (`ssl-dh-param-file`,
/// `tune.ssl.default-dh-param`) have nothing to apply to: accepted with one warning
/// per configuration, at the first line using them.
fn dh_warning(p: &mut Parser, span: &Span) {
    if !p.global.ssl.dh_warned {
        p.global.ssl.dh_warned = true;
        p.warning(span, "DH parameters are ignored: rustls has no DHE cipher suite (ECDHE key exchange only).");
    }
}

/// Whether `path` reads as a PEM file holding DH parameters (what HAProxy checks at
/// load time).
fn is_dh_params_file(path: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.contains("-----BEGIN DH PARAMETERS-----"))
}

/// `ssl-default-bind-options <opt>...`.
fn parse_default_options(p: &mut Parser, words: &[String], span: &Span) {
    let kw = &words[0];
    let mut opts = std::mem::take(&mut p.global.ssl.default_bind_options);
    let mut i = 1;
    while let Some(w) = words.get(i).filter(|w| !w.is_empty()) {
        let res = match w.as_str() {
            "ssl-min-ver" | "ssl-max-ver" => {
                i += 1;
                version(arg(words, i)).map(|v| {
                    if w == "ssl-min-ver" {
                        opts.min_ver = Some(v)
                    } else {
                        opts.max_ver = Some(v)
                    }
                })
            }
            other => match option_flag(other) {
                Some(set) => {
                    set(&mut opts);
                    Ok(())
                }
                None => Err(format!("unknown option '{other}'")),
            },
        };
        if let Err(e) = res {
            p.alert(span, format!("{e} on global statement '{kw}'."));
        }
        i += 1;
    }
    p.global.ssl.default_bind_options = opts;
}

#[cfg(test)]
mod tests {
    use crate::model::{IgnoreErr, TlsVersion, Verify};
    use crate::parse::tests::{alerts, parse_ok};

    #[test]
    fn bind_ssl_options() {
        let cfg = parse_ok(
            "frontend f\n bind :443 ssl crt a.pem crt /b/ ca-file ca.pem verify optional crl-file crl.pem \
             alpn h2,http/1.1 ssl-min-ver TLSv1.2 no-tls-tickets strict-sni ciphers ECDHE-RSA-AES128-GCM-SHA256 \
             curves X25519:P-256 prefer-client-ciphers no-tlsv11\n bind :80\n",
        );
        let b = &cfg.proxies[0].binds;
        let s = b[0].ssl.as_deref().unwrap();
        assert!(s.enabled && s.strict_sni);
        assert_eq!(s.crts, [std::path::PathBuf::from("a.pem"), "/b/".into()]);
        assert_eq!(s.ca_file.as_deref(), Some(std::path::Path::new("ca.pem")));
        assert_eq!(s.verify, Some(Verify::Optional));
        assert_eq!(s.alpn.as_deref(), Some(&["h2".to_string(), "http/1.1".to_string()][..]));
        assert_eq!(s.options.min_ver, Some(TlsVersion::TlsV12));
        assert!(s.options.no_tls_tickets && s.options.prefer_client_ciphers);
        assert_eq!(s.options.no_versions, [TlsVersion::TlsV11]);
        assert_eq!(s.curves.as_deref(), Some("X25519:P-256"));
        assert!(b[1].ssl.is_none());
    }

    #[test]
    fn bind_ssl_errors_as_haproxy_words_them() {
        assert_eq!(
            alerts("frontend f\n bind :443 ssl crt a.pem ssl-min-ver TLSv1.9 verify maybe npn h2\n"),
            [
                "'bind :443' in section 'frontend' : 'TLSv1.9' : unknown ssl/tls version",
                "'bind :443' in section 'frontend' : 'verify' : unknown verify method 'maybe', only 'none', \
                 'optional', and 'required' are supported",
                "'bind :443' in section 'frontend' : 'npn' is not supported (rustls has no NPN; use 'alpn')",
            ]
        );
        assert_eq!(
            alerts("frontend f\n bind :443 ssl crt a.pem allow-0rtt\n"),
            ["'bind :443' in section 'frontend' : 'allow-0rtt' is not supported yet"]
        );
    }

    #[test]
    fn tls_ticket_keys_names_a_file() {
        let cfg = parse_ok("frontend f\n bind :443 ssl crt a.pem tls-ticket-keys /etc/keys\n bind :80\n");
        let s = cfg.proxies[0].binds[0].ssl.as_deref().unwrap();
        assert_eq!(s.tls_ticket_keys.as_deref(), Some("/etc/keys"));
        assert_eq!(
            alerts("frontend f\n bind :443 ssl crt a.pem tls-ticket-keys ''\n"),
            ["'bind :443' in section 'frontend' : 'tls-ticket-keys' : missing TLS ticket keys file path"]
        );
    }

    #[test]
    fn ignore_err_and_ca_verify_file() {
        let cfg = parse_ok(
            "frontend f\n bind :443 ssl crt a.pem ca-file ca.pem ca-verify-file root.pem verify required \
             crt-ignore-err all ca-ignore-err 10,23\n",
        );
        let s = cfg.proxies[0].binds[0].ssl.as_deref().unwrap();
        assert_eq!(s.ca_verify_file.as_deref(), Some(std::path::Path::new("root.pem")));
        assert_eq!(s.crt_ignore_err, Some(IgnoreErr::All));
        assert_eq!(s.ca_ignore_err, Some(IgnoreErr::Ids(vec![10, 23])));
        assert_eq!(
            alerts("frontend f\n bind :443 ssl crt a.pem crt-ignore-err foo ca-ignore-err 10,95\n"),
            [
                "'bind :443' in section 'frontend' : 'crt-ignore-err' : ID '0' out of range (1..94) in error IDs \
                 list 'foo'",
                "'bind :443' in section 'frontend' : 'ca-ignore-err' : ID '95' out of range (1..94) in error IDs \
                 list '10,95'",
            ]
        );
    }

    #[test]
    fn global_ssl_keywords() {
        let cfg = parse_ok(
            "global\n ssl-default-bind-ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256\n \
             ssl-default-bind-ciphersuites TLS_AES_128_GCM_SHA256\n ssl-default-bind-curves X25519\n \
             ssl-default-bind-options prefer-client-ciphers no-sslv3 no-tlsv10 no-tlsv11 no-tls-tickets\n \
             ssl-default-bind-options ssl-min-ver TLSv1.2\n crt-base /etc/certs\n ca-base /etc/ca\n \
             tune.ssl.default-dh-param 2048\n tune.ssl.cachesize 1000\n tune.ssl.lifetime 5m\n \
             ssl-load-extra-del-ext\n",
        );
        let g = &cfg.global.ssl;
        assert!(g.extra_files_noext);
        assert_eq!(g.default_bind_ciphersuites.as_deref(), Some("TLS_AES_128_GCM_SHA256"));
        assert_eq!(g.default_bind_options.min_ver, Some(TlsVersion::TlsV12));
        assert_eq!(g.default_bind_options.no_versions, [TlsVersion::SslV3, TlsVersion::TlsV10, TlsVersion::TlsV11]);
        assert!(g.default_bind_options.no_tls_tickets && g.default_bind_options.prefer_client_ciphers);
        assert_eq!(g.crt_base.as_deref(), Some(std::path::Path::new("/etc/certs")));
        assert_eq!(g.cachesize, Some(1000));
        assert_eq!(g.lifetime, Some(std::time::Duration::from_secs(300)));
        assert_eq!(
            alerts("global\n ssl-default-bind-options foo\n ssl-default-bind-options ssl-min-ver TLSv1.9\n"),
            [
                "unknown option 'foo' on global statement 'ssl-default-bind-options'.",
                "'TLSv1.9' : unknown ssl/tls version on global statement 'ssl-default-bind-options'."
            ]
        );
    }

    #[test]
    fn generate_certificates_and_ecdhe() {
        let cfg = parse_ok(
            "global\n tune.ssl.ssl-ctx-cache-size 10\nfrontend f\n bind :443 ssl crt a.pem generate-certificates \
             ca-sign-file ca.pem ecdhe secp384r1\n bind :444 ssl crt a.pem\n",
        );
        let s = cfg.proxies[0].binds[0].ssl.as_deref().unwrap();
        assert!(s.generate_certificates);
        assert_eq!(s.ca_sign_file.as_deref(), Some(std::path::Path::new("ca.pem")));
        assert_eq!(s.ecdhe.as_deref(), Some("secp384r1"));
        let s = cfg.proxies[0].binds[1].ssl.as_deref().unwrap();
        assert!(!s.generate_certificates && s.ca_sign_file.is_none() && s.ecdhe.is_none());
        assert_eq!(cfg.global.ssl.ctx_cache_size, Some(10));
        assert_eq!(
            alerts("global\n tune.ssl.ssl-ctx-cache-size x\nfrontend f\n bind :443 ssl crt a.pem ca-sign-pass x\n"),
            [
                "'tune.ssl.ssl-ctx-cache-size' expects an integer argument.",
                "'bind :443' in section 'frontend' : 'ca-sign-pass' is not supported yet",
            ]
        );
    }

    #[test]
    fn a_session_lifetime_is_parsed_and_warned_about() {
        let w = crate::parse::tests::warnings("global\n tune.ssl.lifetime 10m\n");
        assert!(w.iter().any(|m| m.contains("'tune.ssl.lifetime' is not applied yet")), "{w:?}");
        assert_eq!(alerts("global\n tune.ssl.lifetime x\n"), ["'tune.ssl.lifetime' expects a timeout argument."]);
    }

    #[test]
    fn dh_parameters_warn_once() {
        let dir = std::env::temp_dir().join(format!("rampart-dh-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dh = dir.join("p.dh");
        std::fs::write(&dh, "-----BEGIN DH PARAMETERS-----\nMAA=\n-----END DH PARAMETERS-----\n").unwrap();
        let text = format!("global\n tune.ssl.default-dh-param 2048\n ssl-dh-param-file {}\n", dh.display());
        let w = crate::parse::tests::warnings(&text);
        let dh_warnings: Vec<&String> = w.iter().filter(|m| m.contains("DH parameters")).collect();
        assert_eq!(
            dh_warnings,
            ["DH parameters are ignored: rustls has no DHE cipher suite (ECDHE key exchange only)."]
        );
        assert!(alerts(&text).is_empty());
        assert_eq!(
            alerts("global\n ssl-dh-param-file /nonexistent.dh\n ssl-dh-param-file\n tune.ssl.default-dh-param x\n"),
            [
                "'ssl-dh-param-file': unable to load DH parameters from file </nonexistent.dh>.",
                "'ssl-dh-param-file' expects an argument.",
                "'tune.ssl.default-dh-param' expects an integer argument.",
            ]
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
