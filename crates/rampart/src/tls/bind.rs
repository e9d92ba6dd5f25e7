//! The rustls server configuration of one `bind ... ssl` line: certificates (loaded in
//! parallel), versions, cipher suites and groups mapped from OpenSSL's names, client
//! certificate verification, ALPN, session cache and tickets.
//! HAProxy counterpart: `ssl_sock_prepare_ctx()`, `ssl_sock_prepare_bind_conf()`
//! (ssl_sock.c).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwap;
use rampart_cfg::model::{BindSsl, GlobalSsl, SslOptions, TlsVersion, Verify};
use rustls::crypto::{aws_lc_rs, CryptoProvider, SupportedKxGroup};
use rustls::server::{ClientHello, ServerSessionMemoryCache, WebPkiClientVerifier};
use rustls::{RootCertStore, ServerConfig, SupportedCipherSuite};

use super::chain::CaStore;
use super::crl::CrlSet;
use super::pem::{self, PemError};
use super::sni::{cert_names, Entry, SniResolver, SniStore};
use super::suites::{self, map_names};
use super::verify::ClientVerify;

/// What a TLS listener needs per handshake.
#[derive(Debug)]
pub struct BindTls {
    pub config: Arc<ServerConfig>,
    /// `config` without ALPN, for a client whose protocols `alpn` does not list.
    no_alpn: Arc<ServerConfig>,
    /// The certificates, replaced whole by `commit ssl cert` (see [`super::certs`]).
    pub store: Arc<ArcSwap<SniStore>>,
    pub strict_sni: bool,
    /// The client certificate verifier (`verify optional|required`), asked again after
    /// the handshake for what `ssl_c_verify` and the other error fetches report.
    pub client_verify: Option<Arc<ClientVerify>>,
}

impl BindTls {
    /// The configuration for a client hello, or why it is refused (`strict-sni`
    /// without a certificate for the name).
    pub fn choose(&self, hello: &ClientHello<'_>) -> Result<Arc<ServerConfig>, &'static str> {
        if self.strict_sni && !self.store.load().serves(hello.server_name()) {
            return Err("no certificate for the SNI with strict-sni");
        }
        // COMPAT: as HAProxy (OpenSSL's NOACK), no common protocol means no ALPN, not
        // the handshake failure rustls would answer.
        if let Some(mut theirs) = hello.alpn() {
            let ours = &self.config.alpn_protocols;
            if !ours.is_empty() && !theirs.any(|p| ours.iter().any(|o| o.as_slice() == p)) {
                return Ok(self.no_alpn.clone());
            }
        }
        Ok(self.config.clone())
    }
}

/// Default size of the session cache (HAProxy's `tune.ssl.cachesize`).
const CACHE_SIZE: usize = 20_000;

/// OpenSSL's names of cipher suites and rustls' suites for them.
type SuiteNames = [(&'static str, SupportedCipherSuite)];

/// The cipher suites of a bind: `ciphers` (TLS 1.2) and `ciphersuites` (TLS 1.3),
/// each from the bind or else the global default; rustls' defaults for a list not set
/// or naming nothing rustls has. Unknown names become one warning.
fn suites(ssl: &BindSsl, g: &GlobalSsl, warnings: &mut Vec<String>) -> Vec<SupportedCipherSuite> {
    let mut out = Vec::new();
    let defaults = aws_lc_rs::DEFAULT_CIPHER_SUITES;
    let lists: [(Option<&String>, &SuiteNames, bool, &str); 2] = [
        (ssl.ciphersuites.as_ref().or(g.default_bind_ciphersuites.as_ref()), suites::TLS13, true, "ciphersuites"),
        (ssl.ciphers.as_ref().or(g.default_bind_ciphers.as_ref()), suites::TLS12, false, "ciphers"),
    ];
    for (list, table, tls13, what) in lists {
        let of_version = defaults.iter().copied().filter(|s| matches!(s, SupportedCipherSuite::Tls13(_)) == tls13);
        let Some(list) = list else {
            out.extend(of_version);
            continue;
        };
        let (found, missing) = map_names(list, table);
        if found.is_empty() {
            warnings
                .push(format!("'{what}' names no cipher rustls provides ('{list}'); using rustls' defaults instead."));
            out.extend(of_version);
        } else {
            if !missing.is_empty() {
                warnings.push(format!(
                    "'{what}': {} not provided by rustls, ignored; using {}.",
                    missing.join(", "),
                    table.iter().filter(|(_, s)| found.contains(s)).map(|(n, _)| *n).collect::<Vec<_>>().join(":")
                ));
            }
            out.extend(found);
        }
    }
    out
}

/// The key exchange groups from `curves` (or the global default).
fn groups(ssl: &BindSsl, g: &GlobalSsl, warnings: &mut Vec<String>) -> Vec<&'static dyn SupportedKxGroup> {
    let Some(list) = ssl.curves.as_ref().or(g.default_bind_curves.as_ref()) else {
        return aws_lc_rs::DEFAULT_KX_GROUPS.to_vec();
    };
    let (found, missing) = map_names(list, suites::GROUPS);
    if !missing.is_empty() {
        warnings.push(format!(
            "'curves': {} not provided by rustls, ignored{}.",
            missing.join(", "),
            if found.is_empty() { "; using rustls' default groups" } else { "" }
        ));
    }
    if found.is_empty() {
        aws_lc_rs::DEFAULT_KX_GROUPS.to_vec()
    } else {
        found
    }
}

/// The protocol versions allowed by the bind's options merged over the defaults.
fn versions(bind: &SslOptions, g: &SslOptions) -> Result<Vec<&'static rustls::SupportedProtocolVersion>, String> {
    let force = bind.force.or(g.force);
    let min = bind.min_ver.or(g.min_ver);
    let max = bind.max_ver.or(g.max_ver);
    if let Some(v) = [force, min].into_iter().flatten().find(|v| *v < TlsVersion::TlsV12) {
        return Err(format!(
            "'{}' is not supported: rustls speaks TLSv1.2 and TLSv1.3 only (use 'ssl-min-ver TLSv1.2').",
            v.name()
        ));
    }
    let allowed = |v: TlsVersion| {
        force.is_none_or(|f| f == v)
            && min.is_none_or(|m| v >= m)
            && max.is_none_or(|m| v <= m)
            && !bind.no_versions.contains(&v)
            && !g.no_versions.contains(&v)
    };
    let out = suites::protocol_versions(allowed);
    if out.is_empty() {
        return Err("no TLS version left that rustls speaks (TLSv1.2, TLSv1.3).".into());
    }
    Ok(out)
}

/// `base` joined to a relative `path` (`crt-base`, `ca-base`).
pub(super) fn based(base: Option<&PathBuf>, path: &Path) -> PathBuf {
    match base {
        Some(b) if path.is_relative() => b.join(path),
        _ => path.to_path_buf(),
    }
}

/// The certificate files a `crt` names: the file, or every file of a directory
/// except keys and the extra files HAProxy reads beside certificates.
fn crt_files(path: &Path) -> Result<Vec<PathBuf>, PemError> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let rd =
        std::fs::read_dir(path).map_err(|e| PemError::Stat { path: path.display().to_string(), why: e.to_string() })?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| {
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            !matches!(ext, "key" | "ocsp" | "issuer" | "sctl" | "dh")
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Loads `files` on up to `threads` threads; results in the files' order.
pub fn load_parallel(
    files: &[PathBuf],
    provider: &CryptoProvider,
    threads: usize,
) -> Vec<Result<(Entry, Vec<String>), PemError>> {
    let load = |p: &PathBuf| {
        let ck = pem::load_cert_key(p)?;
        let key = ck.certified(provider)?;
        let names = cert_names(&ck.chain[0]);
        Ok((Entry { key, path: ck.path, excluded: Vec::new(), filtered: false }, names))
    };
    let threads = threads.clamp(1, files.len().max(1));
    if threads == 1 {
        return files.iter().map(load).collect();
    }
    let chunk = files.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> =
            files.chunks(chunk).map(|c| s.spawn(move || c.iter().map(load).collect::<Vec<_>>())).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    })
}

/// Builds the TLS side of one `bind` line. `Ok` carries the warnings to print once;
/// `Err` the alerts (each already worded for the line's context prefix).
pub fn build(ssl: &BindSsl, g: &GlobalSsl) -> Result<(BindTls, Vec<String>), Vec<String>> {
    let mut alerts = Vec::new();
    let mut warnings = Vec::new();
    let base = aws_lc_rs::default_provider();
    let provider = CryptoProvider {
        cipher_suites: suites(ssl, g, &mut warnings),
        kx_groups: groups(ssl, g, &mut warnings),
        ..base
    };
    let versions = versions(&ssl.options, &g.default_bind_options).unwrap_or_else(|e| {
        alerts.push(e);
        vec![&rustls::version::TLS13]
    });
    let mut files = Vec::new();
    for crt in &ssl.crts {
        match crt_files(&based(g.crt_base.as_ref(), crt)) {
            Ok(f) => files.extend(f),
            Err(e) => alerts.push(e.to_string()),
        }
    }
    let mut lines = Vec::new();
    for list in &ssl.crt_lists {
        match super::crtlist::load(&based(g.crt_base.as_ref(), list), g.crt_base.as_deref()) {
            Ok(l) => lines.extend(l),
            Err(e) => alerts.push(format!("'crt-list' : {e}")),
        }
    }
    let listed: Vec<PathBuf> = lines.iter().map(|l| l.crt.clone()).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut store = SniStore::default();
    for r in load_parallel(&files, &provider, threads) {
        match r {
            Ok((entry, names)) => store.add(entry, &names),
            Err(e) => alerts.push(e.to_string()),
        }
    }
    for (r, line) in load_parallel(&listed, &provider, threads).into_iter().zip(lines) {
        match r {
            Ok((mut entry, names)) => {
                entry.excluded = line.excluded;
                entry.filtered = !line.filters.is_empty();
                store.add(entry, if line.filters.is_empty() { &names } else { &line.filters });
            }
            Err(e) => alerts.push(format!("'crt-list' : {e}")),
        }
    }
    if store.is_empty() && alerts.is_empty() {
        alerts.push("no certificate configured for this 'ssl' bind (use 'crt' or 'crt-list').".into());
    }
    let verifier = client_verifier(ssl, g, &provider).unwrap_or_else(|e| {
        alerts.push(e);
        None
    });
    if !alerts.is_empty() {
        return Err(alerts);
    }
    let store = Arc::new(ArcSwap::from_pointee(store));
    let provider = Arc::new(provider);
    let builder = match ServerConfig::builder_with_provider(provider).with_protocol_versions(&versions) {
        Ok(b) => b,
        Err(e) => return Err(vec![format!("unusable TLS settings: {e}.")]),
    };
    let builder = match verifier.clone() {
        Some(v) => builder.with_client_cert_verifier(v),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_cert_resolver(Arc::new(SniResolver(store.clone())));
    config.ignore_client_order = !(ssl.options.prefer_client_ciphers || g.default_bind_options.prefer_client_ciphers);
    config.alpn_protocols = alpn(ssl, &mut warnings);
    config.session_storage = ServerSessionMemoryCache::new(g.cachesize.unwrap_or(CACHE_SIZE).max(1));
    if ssl.options.no_tls_tickets || g.default_bind_options.no_tls_tickets {
        config.send_tls13_tickets = 0;
    } else if let Ok(t) = aws_lc_rs::Ticketer::new() {
        config.ticketer = t;
    }
    let mut no_alpn = config.clone();
    no_alpn.alpn_protocols.clear();
    let tls = BindTls {
        config: Arc::new(config),
        no_alpn: Arc::new(no_alpn),
        store,
        strict_sni: ssl.strict_sni,
        client_verify: verifier,
    };
    Ok((tls, warnings))
}

/// The client certificate verifier `verify` and `ca-file` ask for: webpki's over
/// the CA files, wrapped in [`ClientVerify`] for the `crl-file` (v1 and v2 CRLs),
/// X.509 v1 certificates and `crt-ignore-err` / `ca-ignore-err`.
fn client_verifier(
    ssl: &BindSsl,
    g: &GlobalSsl,
    provider: &CryptoProvider,
) -> Result<Option<Arc<ClientVerify>>, String> {
    let verify = ssl.verify.unwrap_or_default();
    if verify == Verify::None {
        return Ok(None);
    }
    if ssl.ca_file.is_none() && ssl.ca_verify_file.is_none() {
        return Err("verify is enabled but no CA file specified.".into());
    }
    // `ca-file` CAs are named to the client in the certificate request,
    // `ca-verify-file` ones only verify
    let mut roots = RootCertStore::empty();
    let mut cas = Vec::new();
    let mut hints = Vec::new();
    for (kw, file) in [("ca-file", &ssl.ca_file), ("ca-verify-file", &ssl.ca_verify_file)] {
        let Some(ca) = file else { continue };
        let ca = based(g.ca_base.as_ref(), ca);
        for c in pem::load_ca_file(&ca).map_err(|e| format!("{e} '{kw}' : unable to load {}", ca.display()))? {
            roots.add(c.clone()).map_err(|e| format!("'{kw}' : unable to load {} ({e})", ca.display()))?;
            cas.push(c);
        }
        if kw == "ca-file" {
            hints = roots.subjects();
        }
    }
    let crls = match &ssl.crl_file {
        None => None,
        Some(crl) => {
            let crl = based(g.ca_base.as_ref(), crl);
            let ders =
                pem::load_crl_file(&crl).map_err(|e| format!("{e} 'crl-file' : unable to load {}", crl.display()))?;
            Some(
                CrlSet::load(ders, &cas)
                    .map_err(|e| format!("'crl-file' : unable to load {} ({e}).", crl.display()))?,
            )
        }
    };
    let mut b = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), Arc::new(provider.clone()))
        .clear_root_hint_subjects()
        .add_root_hint_subjects(hints);
    if verify == Verify::Optional {
        b = b.allow_unauthenticated();
    }
    let inner = b.build().map_err(|e| format!("'ca-file' : unusable ({e})"))?;
    Ok(Some(Arc::new(ClientVerify {
        inner,
        cas: CaStore::new(&cas),
        crls,
        crt_ignore: ssl.crt_ignore_err.clone(),
        ca_ignore: ssl.ca_ignore_err.clone(),
        algs: provider.signature_verification_algorithms,
    })))
}

/// The protocols `alpn` offers that rampart serves (HTTP/1.x); the others (`h2`) are
/// dropped with one warning.
fn alpn(ssl: &BindSsl, warnings: &mut Vec<String>) -> Vec<Vec<u8>> {
    let Some(list) = &ssl.alpn else { return Vec::new() };
    let (kept, dropped): (Vec<&String>, Vec<&String>) = list.iter().partition(|p| p.starts_with("http/1."));
    if !dropped.is_empty() {
        warnings.push(format!(
            "'alpn': {} not served by rampart (HTTP/1 only), not offered.",
            dropped.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    kept.into_iter().map(|p| p.as_bytes().to_vec()).collect()
}

#[cfg(test)]
#[path = "bind_tests.rs"]
mod tests;
