//! `crt-store [<name>]` sections (HAProxy 3.x): `crt-base`, `key-base` and
//! `load crt <file> [key <file>] [alias <name>]`; and the `bind ... crt @<store>/<name>`
//! references to them, resolved when the `bind` line is read (a store is declared
//! before its users, as in HAProxy). Messages are HAProxy 3.2's.
//! HAProxy counterpart: src/ssl_ckch.c (`cfg_parse_crtstore()`, `crtstore_parse_load()`).

use std::path::{Path, PathBuf};

use crate::model::{BindSsl, CrtLoad, CrtStore, GlobalSsl};
use crate::span::Span;

use super::{arg, not_yet, Parser};

/// Opens a `crt-store [<name>]` section; returns its index.
pub(super) fn open_crt_store(p: &mut Parser, words: &[String], span: &Span) -> Option<usize> {
    let name = arg(words, 1);
    if let Some(extra) = words.get(2) {
        p.alert(span, format!("'crt-store' cannot handle unexpected argument '{extra}'."));
        return None;
    }
    let stores = &mut p.global.ssl.crt_stores;
    stores.push(CrtStore { name: (!name.is_empty()).then(|| name.to_owned()), ..Default::default() });
    Some(stores.len() - 1)
}

/// A line of `crt-store` section `idx`.
pub(super) fn parse_crt_store_line(p: &mut Parser, idx: usize, words: &[String], span: &Span) {
    let store = &mut p.global.ssl.crt_stores[idx];
    let res = match words[0].as_str() {
        "crt-base" | "key-base" => base(store, words),
        "load" => load(store, words, span),
        other => Err(format!("unknown keyword '{other}' in 'crt-store' section")),
    };
    if let Err(msg) = res {
        p.alert(span, msg);
    }
}

fn base(store: &mut CrtStore, words: &[String]) -> Result<(), String> {
    let kw = words[0].as_str();
    let dir = arg(words, 1);
    if dir.is_empty() {
        return Err(format!("'{kw}' : missing directory name."));
    }
    let slot = if kw == "crt-base" { &mut store.crt_base } else { &mut store.key_base };
    *slot = Some(PathBuf::from(dir));
    Ok(())
}

/// `load crt <file> [key <file>] [alias <name>]` (the OCSP, issuer and SCT options are
/// refused as not supported yet).
fn load(store: &mut CrtStore, words: &[String], span: &Span) -> Result<(), String> {
    let ctx = format!("parsing [{}:{}] : 'load", span.file, span.line);
    let (mut crt, mut key, mut alias) = (None, None, None);
    let mut i = 1;
    while i < words.len() {
        let (opt, value) = (words[i].as_str(), arg(words, i + 1));
        let slot = match opt {
            "crt" => &mut crt,
            "key" => &mut key,
            "alias" => &mut alias,
            "ocsp" | "issuer" | "sctl" | "ocsp-update" => return Err(not_yet(&format!("crt-store load {opt}"))),
            other => return Err(format!("{ctx} {other}' in section 'crt-store': unknown keyword '{other}'.")),
        };
        if value.is_empty() {
            return Err(format!("{ctx} {opt}' in section 'crt-store': '{opt}' expects an argument."));
        }
        *slot = Some(value.to_owned());
        i += 2;
    }
    let Some(written) = crt else {
        return Err(format!("{ctx}' in section 'crt-store': mandatory 'crt' parameter not found."));
    };
    let crt = based(store.crt_base.as_deref(), &written);
    let key = key.map(|k| based(store.key_base.as_deref(), &k));
    store.loads.push(CrtLoad { written, crt, key, alias });
    Ok(())
}

fn based(base: Option<&Path>, file: &str) -> PathBuf {
    match base {
        Some(b) if !file.starts_with('/') => b.join(file),
        _ => PathBuf::from(file),
    }
}

/// Replaces the `crt` references of a `bind` line to `crt-store` entries by their
/// files (keeping each explicit key file); `Err` is HAProxy's message for one that
/// names nothing.
pub(super) fn resolve_bind_crts(ssl: &mut BindSsl, g: &GlobalSsl) -> Result<(), String> {
    for crt in &mut ssl.crts {
        let text = crt.to_string_lossy().into_owned();
        match g.crt_store_entry(&text) {
            Some(entry) => {
                *crt = entry.crt.clone();
                if let Some(key) = &entry.key {
                    ssl.crt_keys.push((entry.crt.clone(), key.clone()));
                }
            }
            None if text.starts_with('@') => {
                return Err(format!("unable to stat SSL certificate from file '{text}' : No such file or directory."))
            }
            None => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{alerts, parse_ok};
    use std::path::PathBuf;

    const STORES: &str = "crt-store web\n crt-base /etc/ssl/web\n key-base /etc/ssl/keys\n \
        load crt site.pem key site.key alias site\n load crt other.pem\ncrt-store\n load crt /c/x.pem key /k/x.key\n";

    #[test]
    fn binds_name_store_entries() {
        let cfg = parse_ok(&format!(
            "{STORES}frontend f\n bind :443 ssl crt @web/site crt @web/other.pem\n bind :444 ssl crt /c/x.pem\n"
        ));
        let ssl = cfg.proxies[0].binds[0].ssl.as_ref().unwrap();
        assert_eq!(ssl.crts, [PathBuf::from("/etc/ssl/web/site.pem"), PathBuf::from("/etc/ssl/web/other.pem")]);
        assert_eq!(ssl.crt_keys, [(PathBuf::from("/etc/ssl/web/site.pem"), PathBuf::from("/etc/ssl/keys/site.key"))]);
        let ssl = cfg.proxies[0].binds[1].ssl.as_ref().unwrap();
        assert_eq!(ssl.crt_keys, [(PathBuf::from("/c/x.pem"), PathBuf::from("/k/x.key"))]);
    }

    #[test]
    fn messages_are_haproxy_32s() {
        let one = |text: &str| alerts(&format!("{STORES}{text}")).join("\n");
        assert_eq!(
            one("frontend f\n bind :443 ssl crt @web/site.pem\n"),
            "'bind :443' in section 'frontend' : unable to stat SSL certificate from file '@web/site.pem' : \
             No such file or directory."
        );
        assert_eq!(one("crt-store s\n bogus 1\n"), "unknown keyword 'bogus' in 'crt-store' section");
        assert_eq!(
            one("crt-store s\n load key k\n"),
            "parsing [t.cfg:9] : 'load' in section 'crt-store': mandatory 'crt' parameter not found."
        );
        assert_eq!(
            one("crt-store s\n load crt c foo bar\n"),
            "parsing [t.cfg:9] : 'load foo' in section 'crt-store': unknown keyword 'foo'."
        );
        assert_eq!(one("crt-store s\n load crt c ocsp o\n"), "'crt-store load ocsp' is not supported yet");
    }
}
