//! TLS settings of `bind` lines and of the `global` section (`ssl-default-bind-*`,
//! `ca-base`, `crt-base`, `tune.ssl.*`). The daemon's `tls` module builds rustls
//! configurations from them. HAProxy counterpart: `struct ssl_bind_conf`, cfgparse-ssl.c.

use std::path::PathBuf;
use std::time::Duration;

/// A TLS protocol version as `ssl-min-ver`/`ssl-max-ver` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    SslV3,
    TlsV10,
    TlsV11,
    TlsV12,
    TlsV13,
}

impl TlsVersion {
    /// The version named `s` (`SSLv3`, `TLSv1.0` ... `TLSv1.3`).
    pub fn parse(s: &str) -> Option<TlsVersion> {
        Some(match s {
            "SSLv3" => TlsVersion::SslV3,
            "TLSv1.0" => TlsVersion::TlsV10,
            "TLSv1.1" => TlsVersion::TlsV11,
            "TLSv1.2" => TlsVersion::TlsV12,
            "TLSv1.3" => TlsVersion::TlsV13,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            TlsVersion::SslV3 => "SSLv3",
            TlsVersion::TlsV10 => "TLSv1.0",
            TlsVersion::TlsV11 => "TLSv1.1",
            TlsVersion::TlsV12 => "TLSv1.2",
            TlsVersion::TlsV13 => "TLSv1.3",
        }
    }
}

/// `verify none|optional|required`: whether a client certificate is asked and needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verify {
    #[default]
    None,
    Optional,
    Required,
}

/// Version bounds and flags set by options shared between `bind` lines and
/// `ssl-default-bind-options`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SslOptions {
    pub min_ver: Option<TlsVersion>,
    pub max_ver: Option<TlsVersion>,
    /// `no-sslv3`, `no-tlsv10` ... : versions switched off.
    pub no_versions: Vec<TlsVersion>,
    /// `force-tlsv12` ...: the only version.
    pub force: Option<TlsVersion>,
    pub no_tls_tickets: bool,
    pub prefer_client_ciphers: bool,
}

/// The TLS part of one `bind` line.
#[derive(Debug, Clone, Default)]
pub struct BindSsl {
    /// `ssl`: the listener terminates TLS (the other settings are kept without it).
    pub enabled: bool,
    /// `crt` files or directories, as written (relative ones resolve against `crt-base`);
    /// the `default-crt` ones (HAProxy 3.x) first.
    pub crts: Vec<PathBuf>,
    /// How many of `crts` come from `default-crt`.
    pub default_crts: usize,
    /// `crt-list` files, as written (relative ones resolve against `crt-base`).
    pub crt_lists: Vec<PathBuf>,
    pub ca_file: Option<PathBuf>,
    pub crl_file: Option<PathBuf>,
    /// `ca-verify-file`: CAs that verify client certificates without being named to
    /// the client in the certificate request.
    pub ca_verify_file: Option<PathBuf>,
    /// `ca-ignore-err` (errors in the client's CA chain) and `crt-ignore-err` (errors
    /// of its certificate): OpenSSL's verification error ids to tolerate.
    pub ca_ignore_err: Option<IgnoreErr>,
    pub crt_ignore_err: Option<IgnoreErr>,
    pub verify: Option<Verify>,
    /// `alpn`: protocol names in preference order.
    pub alpn: Option<Vec<String>>,
    pub ciphers: Option<String>,
    pub ciphersuites: Option<String>,
    pub curves: Option<String>,
    /// `ecdhe`: the named curve(s) for ECDHE when `curves` is not set.
    pub ecdhe: Option<String>,
    /// `generate-certificates`: mint a certificate for an SNI no certificate serves,
    /// signed by `ca-sign-file`.
    pub generate_certificates: bool,
    /// `ca-sign-file`: the CA (certificate and key) that signs generated certificates.
    pub ca_sign_file: Option<PathBuf>,
    pub strict_sni: bool,
    /// `tls-ticket-keys`: the file of TLS session ticket keys, as written (binds
    /// naming the same file share its keys; the daemon reads it).
    pub tls_ticket_keys: Option<String>,
    pub options: SslOptions,
    /// The key files of `crt` entries taken from a `crt-store` (`load ... key <file>`):
    /// (the certificate file as in `crts`, its key file).
    pub crt_keys: Vec<(PathBuf, PathBuf)>,
}

/// `ca-ignore-err` / `crt-ignore-err`: `all`, or a comma-separated list of OpenSSL's
/// verification error ids (1..94 in HAProxy 2.6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IgnoreErr {
    All,
    Ids(Vec<u8>),
}

/// TLS settings of the `global` section.
#[derive(Debug, Clone, Default)]
pub struct GlobalSsl {
    pub default_bind_ciphers: Option<String>,
    pub default_bind_ciphersuites: Option<String>,
    pub default_bind_curves: Option<String>,
    pub default_bind_options: SslOptions,
    pub ca_base: Option<PathBuf>,
    pub crt_base: Option<PathBuf>,
    /// `tune.ssl.cachesize` (sessions kept for resumption; HAProxy's default 20000).
    pub cachesize: Option<usize>,
    /// `tune.ssl.maxrecord`: the most plaintext bytes a TLS record the process sends
    /// to a client carries (`None` or 0: no limit below TLS's 16 kB).
    pub maxrecord: Option<usize>,
    /// `tune.ssl.lifetime` (how long a cached session or ticket stays valid).
    pub lifetime: Option<Duration>,
    /// `tune.ssl.ssl-ctx-cache-size` (generated certificates kept; HAProxy's default 1000).
    pub ctx_cache_size: Option<usize>,
    /// The warning about ignored DH parameters was given (once per configuration).
    pub dh_warned: bool,
    /// `ssl-load-extra-del-ext`: the files beside a `<name>.crt` certificate are
    /// `<name>.key` (not `<name>.crt.key`).
    pub extra_files_noext: bool,
    /// The `crt-store` sections (HAProxy 3.x) read so far, in order.
    pub crt_stores: Vec<CrtStore>,
}

/// A `crt-store [<name>]` section (HAProxy 3.x): certificates loaded once, named by
/// `bind ... crt @<name>/<alias>` (or, in an unnamed store, by their alias or file).
#[derive(Debug, Clone, Default)]
pub struct CrtStore {
    pub name: Option<String>,
    /// `crt-base <dir>`: what relative `crt` files of the store's `load` lines start from.
    pub crt_base: Option<PathBuf>,
    /// `key-base <dir>`: likewise for `key` files.
    pub key_base: Option<PathBuf>,
    pub loads: Vec<CrtLoad>,
}

/// `load crt <file> [key <file>] [alias <name>]`, with the store's bases applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrtLoad {
    /// The `crt` file as written (what an alias-less reference names).
    pub written: String,
    pub crt: PathBuf,
    pub key: Option<PathBuf>,
    pub alias: Option<String>,
}

impl GlobalSsl {
    /// The `load` line `reference` names: `@<store>/<alias or crt>`, or in an unnamed
    /// store the alias or crt alone. As HAProxy 3.x: a store entry with an alias is
    /// named by its alias only.
    pub fn crt_store_entry(&self, reference: &str) -> Option<&CrtLoad> {
        let (store, name) = match reference.strip_prefix('@') {
            Some(rest) => {
                let (store, name) = rest.split_once('/')?;
                (Some(store), name)
            }
            None => (None, reference),
        };
        let named = |l: &&CrtLoad| l.alias.as_deref().unwrap_or(&l.written) == name;
        self.crt_stores.iter().rev().filter(|s| s.name.as_deref() == store).find_map(|s| s.loads.iter().find(named))
    }
}
