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
use rustls::server::{ClientHello, ProducesTickets, ServerSessionMemoryCache};
use rustls::sign::CertifiedKey;
use rustls::{ServerConfig, SupportedCipherSuite};

use super::castore::Contents;
use super::crtlist::{CrtLine, Ctx, LineOptions};
use super::gencert::CertGen;
use super::pem::{self, PemError};
use super::sni::{cert_names, Entry, Origin, SniResolver, SniStore};
use super::suites::{self, map_names};
use super::ticket_keys::{KeyFileTicketer, KeyFiles, TicketKeys};
use super::verifier::{BuildError, CaDer, ClientCaFiles};
use super::verify::ClientVerify;

/// What a TLS listener needs per handshake.
#[derive(Debug)]
pub struct BindTls {
    /// The rustls configurations, replaced whole when the client verifier changes
    /// (`commit ssl ca-file`, [`BindTls::set_verifier`]).
    configs: ArcSwap<Configs>,
    /// The certificates, replaced whole by `commit ssl cert` (see [`super::certs`])
    /// and by `add/del ssl crt-list` (see [`super::crtlists`]).
    pub store: Arc<ArcSwap<SniStore>>,
    /// The certificate selection rustls runs (the store, and `generate-certificates`).
    pub resolver: Arc<SniResolver>,
    pub strict_sni: bool,
    /// The CA and CRL files client certificates are verified with (`verify`).
    pub ca_files: Option<ClientCaFiles>,
    versions: Vec<&'static rustls::SupportedProtocolVersion>,
    /// The bind's TLS settings and the global ones, for the configurations of the
    /// crt-list lines `add ssl crt-list` adds.
    pub ssl: BindSsl,
    pub global: GlobalSsl,
    /// The crt-lists this bind reads, as loaded.
    pub lists: Vec<ListUse>,
    /// Where the bind is, for the runtime API's messages.
    pub origin: BindOrigin,
    /// `tls-ticket-keys`: the key file's keys, shared with the other binds naming it.
    pub ticket_keys: Option<Arc<TicketKeys>>,
    /// What seals and opens the session tickets of every configuration of the bind
    /// (crt-list lines included); `None` with `no-tls-tickets`.
    ticketer: Option<Arc<dyn ProducesTickets>>,
}

/// A crt-list file as a bind loaded it.
#[derive(Debug, Clone)]
pub struct ListUse {
    /// The file, `crt-base` applied (the name the runtime API takes).
    pub name: String,
    pub lines: Vec<CrtLine>,
    /// The number of lines of the file.
    pub line_count: usize,
    /// A `crt <directory>`: one line per file, no options nor filters.
    pub directory: bool,
}

/// The proxy and the line of a `bind`, as HAProxy names them in runtime messages.
#[derive(Debug, Clone, Default)]
pub struct BindOrigin {
    pub proxy: String,
    /// The bind's address as written.
    pub addr: String,
    pub file: String,
    pub line: u32,
}

/// The rustls configurations of a bind, or of a crt-list line with options of its own:
/// its configuration, the same without ALPN (for a client whose protocols `alpn` does
/// not list), and the client certificate verifier, asked again after the handshake for
/// what `ssl_c_verify` and the other error fetches report.
#[derive(Debug)]
pub struct Configs {
    pub config: Arc<ServerConfig>,
    pub no_alpn: Arc<ServerConfig>,
    pub client_verify: Option<Arc<ClientVerify>>,
}

impl Configs {
    fn new(config: ServerConfig, client_verify: Option<Arc<ClientVerify>>) -> Configs {
        let mut no_alpn = config.clone();
        no_alpn.alpn_protocols.clear();
        Configs { config: Arc::new(config), no_alpn: Arc::new(no_alpn), client_verify }
    }
}

impl BindTls {
    /// The configuration for a client hello and the client certificate verifier it
    /// verifies with (for the error fetches), or why it is refused (`strict-sni`
    /// without a certificate for the name): the one of the crt-list line whose
    /// certificate the hello gets, else the bind's.
    pub fn choose(&self, hello: &ClientHello<'_>) -> Result<Chosen, &'static str> {
        let store = self.store.load();
        // a generated certificate serves any SNI (HAProxy generates before strict-sni)
        let generated = self.resolver.gen.is_some() && hello.server_name().is_some();
        if self.strict_sni && !generated && !store.serves(hello.server_name()) {
            return Err("no certificate for the SNI with strict-sni");
        }
        let bind = self.configs.load();
        let line = store.choose_entry(hello.server_name(), hello.signature_schemes()).and_then(|e| e.tls.as_ref());
        let configs = line.unwrap_or(&bind);
        // COMPAT: as HAProxy (OpenSSL's NOACK), no common protocol means no ALPN, not
        // the handshake failure rustls would answer.
        if let Some(mut theirs) = hello.alpn() {
            let ours = &configs.config.alpn_protocols;
            if !ours.is_empty() && !theirs.any(|p| ours.iter().any(|o| o.as_slice() == p)) {
                return Ok((configs.no_alpn.clone(), configs.client_verify.clone()));
            }
        }
        Ok((configs.config.clone(), configs.client_verify.clone()))
    }

    /// The configuration new handshakes start from (ALPN included).
    pub fn config(&self) -> Arc<ServerConfig> {
        self.configs.load().config.clone()
    }

    /// New handshakes verify client certificates with `verifier`; everything else of
    /// the configuration (certificates, session cache, tickets, ALPN) is kept.
    pub fn set_verifier(&self, verifier: Arc<ClientVerify>) -> Result<(), String> {
        let old = self.config();
        let mut new = ServerConfig::builder_with_provider(old.crypto_provider().clone())
            .with_protocol_versions(&self.versions)
            .map_err(|e| e.to_string())?
            .with_client_cert_verifier(verifier.clone())
            .with_cert_resolver(old.cert_resolver.clone());
        new.ignore_client_order = old.ignore_client_order;
        new.alpn_protocols = old.alpn_protocols.clone();
        new.session_storage = old.session_storage.clone();
        new.max_fragment_size = old.max_fragment_size;
        new.send_tls13_tickets = old.send_tls13_tickets;
        new.ticketer = old.ticketer.clone();
        self.configs.store(Arc::new(Configs::new(new, Some(verifier))));
        Ok(())
    }

    /// Whether the configuration of a crt-list line with `options` verifies client
    /// certificates with CA or CRL file `path`, named by the line or by the bind.
    pub fn line_uses(&self, options: &LineOptions, path: &str) -> bool {
        if !options.changes_config() {
            return false;
        }
        let (merged, _) = options.merged(&self.ssl);
        ca_files(&merged, &self.global).is_some_and(|f| f.uses(path))
    }

    /// The configurations for a crt-list line's `options` over this bind's settings
    /// (`None` when they change nothing), with what rustls cannot do of them; the CA
    /// and CRL files are read from `files` (the runtime store), else from disk.
    pub fn line_configs(&self, options: Option<&LineOptions>, files: FileLookup<'_>) -> LineConfigs {
        line_configs(&self.ssl, &self.global, &self.resolver, self.ticketer.as_ref(), options, files)
    }
}

/// The rustls configuration of a handshake and its client certificate verifier.
pub type Chosen = (Arc<ServerConfig>, Option<Arc<ClientVerify>>);

/// The configurations of a crt-list line (`None`: the bind's) and the warnings of
/// what rustls cannot do of its options, or the alerts.
pub type LineConfigs = Result<(Option<Arc<Configs>>, Vec<String>), Vec<String>>;

/// The contents of a CA or CRL file by name, when the runtime store has it (`None`:
/// read the file from disk). HAProxy counterpart: the cafile tree
/// (`ssl_store_get_cafile_entry()`).
pub type FileLookup<'a> = &'a dyn Fn(&str) -> Option<Contents>;

/// The lookup of the configuration: every CA and CRL file is read from disk.
pub fn on_disk(_: &str) -> Option<Contents> {
    None
}

/// See [`BindTls::line_configs`].
fn line_configs(
    ssl: &BindSsl,
    g: &GlobalSsl,
    resolver: &Arc<SniResolver>,
    ticketer: Option<&Arc<dyn ProducesTickets>>,
    options: Option<&LineOptions>,
    files: FileLookup<'_>,
) -> LineConfigs {
    let Some(o) = options.filter(|o| o.changes_config()) else { return Ok((None, Vec::new())) };
    let (merged, not_done) = o.merged(ssl);
    let mut warnings = Vec::new();
    let (c, _) = server_config(&merged, g, resolver, ticketer, o.no_ca_names, files, &mut warnings)?;
    warnings.extend(not_done);
    // items of one sentence each caller ends
    let warnings = warnings.into_iter().map(|w| w.trim_end_matches('.').to_owned()).collect();
    Ok((Some(Arc::new(c)), warnings))
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

/// The key exchange groups from `curves` (or the global default), else from `ecdhe`
/// (HAProxy applies `ecdhe` only without a curves list), else rustls' defaults (X25519
/// first, as OpenSSL's). An `ecdhe` naming no group rustls has is an alert.
fn groups(
    ssl: &BindSsl,
    g: &GlobalSsl,
    warnings: &mut Vec<String>,
    alerts: &mut Vec<String>,
) -> Vec<&'static dyn SupportedKxGroup> {
    let curves = ssl.curves.as_ref().or(g.default_bind_curves.as_ref());
    if let (None, Some(ecdhe)) = (curves, &ssl.ecdhe) {
        let (found, missing) = map_names(ecdhe, suites::GROUPS);
        if found.is_empty() || !missing.is_empty() {
            alerts.push(format!("unable to set elliptic named curve to '{ecdhe}'."));
        }
        return found;
    }
    let Some(list) = curves else {
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

/// Loads `files` (and the OCSP response beside each, stapled) on up to `threads`
/// threads; results in the files' order. `noext`: `ssl-load-extra-del-ext`.
pub fn load_parallel(
    files: &[PathBuf],
    keys: &[(PathBuf, PathBuf)],
    provider: &CryptoProvider,
    threads: usize,
    noext: bool,
) -> Vec<Result<(Entry, Vec<String>), PemError>> {
    let load = |p: &PathBuf| {
        let ck = match keys.iter().find(|(c, _)| c == p) {
            // a `crt-store` entry's own key file (`load crt ... key ...`)
            Some((_, key)) => pem::load_cert_key_with(p, key)?,
            None => pem::load_cert_key_ext(p, noext)?,
        };
        let mut key = ck.certified(provider)?;
        if let Some(der) = super::ocsp::load_beside(&ck.path) {
            super::ocsp::parse(&der).map_err(|why| PemError::Ocsp { path: ck.path.clone(), why })?;
            key = Arc::new(CertifiedKey { ocsp: Some(der), ..(*key).clone() });
        }
        let names = cert_names(&ck.chain[0]);
        Ok((Entry::new(key, ck.path), names))
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

/// Whether a CA or CRL file named by a crt-list line loads (at startup).
fn loads(path: &Path, crl: bool) -> bool {
    if crl {
        pem::load_crl_file(path).is_ok()
    } else {
        pem::load_ca_file(path).is_ok()
    }
}

/// Reads the crt-lists of a bind.
fn read_lists(ssl: &BindSsl, g: &GlobalSsl, alerts: &mut Vec<String>) -> Vec<ListUse> {
    let ctx = Ctx { crt_base: g.crt_base.as_deref(), ca_base: g.ca_base.as_deref(), usable: &loads };
    let mut out = Vec::new();
    for list in &ssl.crt_lists {
        let path = based(g.crt_base.as_ref(), list);
        match super::crtlist::load(&path, &ctx) {
            Ok((lines, line_count)) => {
                out.push(ListUse { name: path.display().to_string(), lines, line_count, directory: false })
            }
            Err(e) => alerts.push(format!("'crt-list' : {e}")),
        }
    }
    out
}

/// Builds the TLS side of one `bind` line, reading its `tls-ticket-keys` file if it
/// names one. `Ok` carries the warnings to print once; `Err` the alerts (each already
/// worded for the line's context prefix).
pub fn build(ssl: &BindSsl, g: &GlobalSsl) -> Result<(BindTls, Vec<String>), Vec<String>> {
    build_keyed(ssl, g, &mut KeyFiles::default())
}

/// [`build`], with the `tls-ticket-keys` file shared with the other binds of
/// `key_files` that name it.
pub fn build_keyed(
    ssl: &BindSsl,
    g: &GlobalSsl,
    key_files: &mut KeyFiles,
) -> Result<(BindTls, Vec<String>), Vec<String>> {
    let mut alerts = Vec::new();
    let ticket_keys = ssl.tls_ticket_keys.as_deref().and_then(|f| key_files.get(f).map_err(|e| alerts.push(e)).ok());
    let mut warnings = Vec::new();
    let provider = aws_lc_rs::default_provider();
    let mut files = Vec::new();
    // a `crt <directory>` is a crt-list for the runtime API, as in HAProxy
    let mut lists = Vec::new();
    for crt in &ssl.crts {
        let path = based(g.crt_base.as_ref(), crt);
        match crt_files(&path) {
            Ok(f) if path.is_dir() => {
                let name = path.display().to_string().trim_end_matches('/').to_owned();
                let lines = f.iter().map(|p| CrtLine { crt: p.clone(), line: 0, options: None, filters: Vec::new() });
                lists.push(ListUse { name: name.clone(), lines: lines.collect(), line_count: 0, directory: true });
                files.extend(f.into_iter().map(|p| (p, Some(Arc::<str>::from(name.as_str())))));
            }
            Ok(f) => files.extend(f.into_iter().map(|p| (p, None))),
            Err(e) => alerts.push(e.to_string()),
        }
    }
    lists.extend(read_lists(ssl, g, &mut alerts));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let noext = g.extra_files_noext;
    let mut store = SniStore::default();
    let paths: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
    let keys: Vec<(PathBuf, PathBuf)> =
        ssl.crt_keys.iter().map(|(c, k)| (based(g.crt_base.as_ref(), c), k.clone())).collect();
    for (r, (_, dir)) in load_parallel(&paths, &keys, &provider, threads, noext).into_iter().zip(&files) {
        match r {
            Ok((mut entry, names)) => {
                entry.origin =
                    dir.as_ref().map(|d| Origin { list: d.clone(), line: 0, crt: entry.path.as_str().into() });
                store.add(entry, &names)
            }
            Err(e) => alerts.push(e.to_string()),
        }
    }
    let mut lined = Vec::new();
    for list in lists.iter().filter(|l| !l.directory) {
        let listed: Vec<PathBuf> = list.lines.iter().map(|l| l.crt.clone()).collect();
        let name: Arc<str> = Arc::from(list.name.as_str());
        for (r, line) in load_parallel(&listed, &[], &provider, threads, noext).into_iter().zip(&list.lines) {
            match r {
                Ok((entry, names)) => lined.push((entry, names, line, name.clone())),
                Err(e) => alerts.push(format!("'crt-list' : {e}")),
            }
        }
    }
    if store.is_empty() && lined.is_empty() && alerts.is_empty() {
        alerts.push("no certificate configured for this 'ssl' bind (use 'crt' or 'crt-list').".into());
    }
    if !alerts.is_empty() {
        return Err(alerts);
    }
    let gen = cert_gen(ssl, g, &provider).map_err(|e| vec![e])?;
    let shared = Arc::new(ArcSwap::from_pointee(SniStore::default()));
    let resolver = Arc::new(SniResolver { store: shared.clone(), gen });
    let ticketer = ticketer(ssl, g, ticket_keys.as_ref());
    let (base, versions) = server_config(ssl, g, &resolver, ticketer.as_ref(), false, &on_disk, &mut warnings)?;
    // the crt-list lines, each with the configuration of its options
    let mut not_done: Vec<String> = Vec::new();
    for (mut entry, names, line, list) in lined {
        let (tls, nd) = line_configs(ssl, g, &resolver, ticketer.as_ref(), line.options.as_ref(), &on_disk)?;
        for w in nd {
            if !not_done.contains(&w) {
                not_done.push(w);
            }
        }
        entry.excluded = line.excluded();
        let filters = line.names();
        entry.filtered = !filters.is_empty();
        entry.origin = Some(Origin { list, line: line.line, crt: entry.path.as_str().into() });
        entry.tls = tls;
        store.add(entry, if filters.is_empty() { &names } else { &filters });
    }
    shared.store(Arc::new(store));
    if !not_done.is_empty() {
        warnings.push(format!("crt-list line options accepted but not applied: {}.", not_done.join(", ")));
    }
    let tls = BindTls {
        configs: ArcSwap::from_pointee(base),
        store: shared,
        resolver,
        strict_sni: ssl.strict_sni,
        ca_files: ca_files(ssl, g),
        versions,
        ssl: ssl.clone(),
        global: g.clone(),
        lists,
        origin: BindOrigin::default(),
        ticket_keys,
        ticketer,
    };
    Ok((tls, warnings))
}

/// The ticketer of a bind: none with `no-tls-tickets`, the keys of its
/// `tls-ticket-keys` file, else rustls' own (random keys rotated every 6 hours).
fn ticketer(ssl: &BindSsl, g: &GlobalSsl, keys: Option<&Arc<TicketKeys>>) -> Option<Arc<dyn ProducesTickets>> {
    if ssl.options.no_tls_tickets || g.default_bind_options.no_tls_tickets {
        return None;
    }
    match keys {
        Some(k) => Some(Arc::new(KeyFileTicketer { keys: k.clone() })),
        None => aws_lc_rs::Ticketer::new().ok(),
    }
}

/// The rustls configurations for TLS settings `ssl` choosing certificates with
/// `resolver` and sealing tickets with `ticketer` (`None`: no tickets), and the
/// protocol versions; `no_ca_names`: the certificate request names no CA; `files`:
/// where the CA and CRL files are read first.
fn server_config(
    ssl: &BindSsl,
    g: &GlobalSsl,
    resolver: &Arc<SniResolver>,
    ticketer: Option<&Arc<dyn ProducesTickets>>,
    no_ca_names: bool,
    files: FileLookup<'_>,
    warnings: &mut Vec<String>,
) -> Result<(Configs, Vec<&'static rustls::SupportedProtocolVersion>), Vec<String>> {
    let mut alerts = Vec::new();
    let base = aws_lc_rs::default_provider();
    let provider = CryptoProvider {
        cipher_suites: suites(ssl, g, warnings),
        kx_groups: groups(ssl, g, warnings, &mut alerts),
        ..base
    };
    let versions = versions(&ssl.options, &g.default_bind_options).unwrap_or_else(|e| {
        alerts.push(e);
        vec![&rustls::version::TLS13]
    });
    let verifier = client_verifier(ssl, g, &provider, no_ca_names, files).unwrap_or_else(|e| {
        alerts.push(e);
        None
    });
    if !alerts.is_empty() {
        return Err(alerts);
    }
    let provider = Arc::new(provider);
    let builder = match ServerConfig::builder_with_provider(provider).with_protocol_versions(&versions) {
        Ok(b) => b,
        Err(e) => return Err(vec![format!("unusable TLS settings: {e}.")]),
    };
    let builder = match verifier.clone() {
        Some(v) => builder.with_client_cert_verifier(v),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_cert_resolver(resolver.clone());
    config.ignore_client_order = !(ssl.options.prefer_client_ciphers || g.default_bind_options.prefer_client_ciphers);
    config.alpn_protocols = alpn(ssl, warnings);
    config.session_storage = ServerSessionMemoryCache::new(g.cachesize.unwrap_or(CACHE_SIZE).max(1));
    config.max_fragment_size = g.maxrecord.and_then(record_size);
    match ticketer {
        Some(t) => config.ticketer = t.clone(),
        None => config.send_tls13_tickets = 0,
    }
    Ok((Configs::new(config, verifier), versions))
}

/// The rustls record size (plaintext plus its 5-byte header) for `tune.ssl.maxrecord
/// <n>` plaintext bytes: `None` (TLS's 16 kB) when `n` reaches that anyway.
// COMPAT: HAProxy (ssl_sock_from_buf) stops limiting a stream it sees streaming; here
// every record of the connection is limited. rustls' smallest record carries 27 bytes.
fn record_size(n: usize) -> Option<usize> {
    const HEADER: usize = 5;
    const MAX_PLAIN: usize = 16384;
    (n < MAX_PLAIN).then(|| (n + HEADER).max(32))
}

/// The certificate generator of `generate-certificates` (`ca-sign-file` is needed).
fn cert_gen(ssl: &BindSsl, g: &GlobalSsl, provider: &CryptoProvider) -> Result<Option<Arc<CertGen>>, String> {
    if !ssl.generate_certificates {
        return Ok(None);
    }
    let Some(ca) = &ssl.ca_sign_file else {
        return Err("cannot enable certificate generation, no CA certificate File configured.".into());
    };
    let ca = based(g.ca_base.as_ref(), ca);
    let size = g.ctx_cache_size.unwrap_or(super::gencert::CACHE_SIZE);
    CertGen::load(&ca, provider, size).map(|c| Some(Arc::new(c)))
}

/// The CA store names of a bind that verifies client certificates.
fn ca_files(ssl: &BindSsl, g: &GlobalSsl) -> Option<ClientCaFiles> {
    let verify = ssl.verify.unwrap_or_default();
    let name = |f: &Option<PathBuf>| f.as_ref().map(|f| based(g.ca_base.as_ref(), f).display().to_string());
    (verify != Verify::None).then(|| ClientCaFiles {
        ca_file: name(&ssl.ca_file),
        ca_verify_file: name(&ssl.ca_verify_file),
        crl_file: name(&ssl.crl_file),
        optional: verify == Verify::Optional,
        crt_ignore: ssl.crt_ignore_err.clone(),
        ca_ignore: ssl.ca_ignore_err.clone(),
    })
}

/// The client certificate verifier `verify` and `ca-file` ask for: webpki's over
/// the CA files, wrapped in [`ClientVerify`] for the `crl-file` (v1 and v2 CRLs),
/// X.509 v1 certificates and `crt-ignore-err` / `ca-ignore-err`. Each file is the
/// contents `lookup` gives for its name, else read from disk.
fn client_verifier(
    ssl: &BindSsl,
    g: &GlobalSsl,
    provider: &CryptoProvider,
    no_ca_names: bool,
    lookup: FileLookup<'_>,
) -> Result<Option<Arc<ClientVerify>>, String> {
    let Some(files) = ca_files(ssl, g) else { return Ok(None) };
    if files.ca_file.is_none() && files.ca_verify_file.is_none() {
        return Err("verify is enabled but no CA file specified.".into());
    }
    // `ca-file` CAs are named to the client in the certificate request,
    // `ca-verify-file` ones only verify
    let mut cas: [Vec<CaDer>; 2] = Default::default();
    for (i, (kw, file)) in
        [("ca-file", &files.ca_file), ("ca-verify-file", &files.ca_verify_file)].into_iter().enumerate()
    {
        let Some(ca) = file else { continue };
        cas[i] = match lookup(ca) {
            Some(Contents::Ca(stored)) => stored,
            _ => pem::load_ca_file(Path::new(ca)).map_err(|e| format!("{e} '{kw}' : unable to load {ca}"))?,
        };
    }
    if no_ca_names {
        // every CA only verifies: the certificate request names none
        let hinted = std::mem::take(&mut cas[0]);
        cas[1].splice(0..0, hinted);
    }
    let crl = files.crl_file.as_deref();
    let crls = crl
        .map(|crl| match lookup(crl) {
            Some(Contents::Crl(stored)) => Ok(stored),
            _ => pem::load_crl_file(Path::new(crl)).map_err(|e| format!("{e} 'crl-file' : unable to load {crl}")),
        })
        .transpose()?;
    let provider = Arc::new(provider.clone());
    super::verifier::client_verifier(&cas[0], &cas[1], crls.as_deref(), &files, &provider).map(Some).map_err(
        |e| match e {
            BuildError::Crl(e) => format!("'crl-file' : unable to load {} ({e}).", crl.unwrap_or_default()),
            BuildError::Ca(e) => format!("'ca-file' : unusable ({e})"),
        },
    )
}

/// The protocols `alpn` offers that rampart serves (`h2`, HTTP/1.x); the others are
/// dropped with one warning.
fn alpn(ssl: &BindSsl, warnings: &mut Vec<String>) -> Vec<Vec<u8>> {
    let Some(list) = &ssl.alpn else { return Vec::new() };
    let (kept, dropped): (Vec<&String>, Vec<&String>) =
        list.iter().partition(|p| *p == "h2" || p.starts_with("http/1."));
    if !dropped.is_empty() {
        warnings.push(format!(
            "'alpn': {} not served by rampart (HTTP/1 and h2 only), not offered.",
            dropped.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    kept.into_iter().map(|p| p.as_bytes().to_vec()).collect()
}

#[cfg(test)]
#[path = "bind_tests.rs"]
mod tests;
