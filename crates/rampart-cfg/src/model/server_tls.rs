//! TLS towards servers: the `ssl`-family options of `server` / `default-server` lines and
//! the `ssl-default-server-*` / `ssl-server-verify` globals, as written. The daemon's
//! `tls::client` turns them into one rustls client configuration per server.
//! HAProxy counterparts: `struct server`'s `ssl_ctx` part (include/haproxy/server-t.h),
//! `srv_parse_*()` of src/cfgparse-ssl.c, `global_ssl` (include/haproxy/ssl_sock-t.h).

use super::{ExprSrc, TlsVersion};

// `TlsVersion` is defined with the `bind` settings (`model::ssl`); what servers need more:
impl TlsVersion {
    /// Every version, oldest first.
    pub const ALL: [TlsVersion; 5] =
        [TlsVersion::SslV3, TlsVersion::TlsV10, TlsVersion::TlsV11, TlsVersion::TlsV12, TlsVersion::TlsV13];

    /// The suffix of the `no-*` / `force-*` option naming this version (`tlsv12`).
    pub fn option_suffix(self) -> &'static str {
        match self {
            TlsVersion::SslV3 => "sslv3",
            TlsVersion::TlsV10 => "tlsv10",
            TlsVersion::TlsV11 => "tlsv11",
            TlsVersion::TlsV12 => "tlsv12",
            TlsVersion::TlsV13 => "tlsv13",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// Which protocol versions a side may use: `ssl-min-ver`, `ssl-max-ver`, `no-<ver>`,
/// `force-<ver>` (HAProxy's `methodVersions` flags and min/max).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TlsVersions {
    pub min: Option<TlsVersion>,
    pub max: Option<TlsVersion>,
    /// `force-<ver>`: only that version.
    pub force: Option<TlsVersion>,
    /// `no-<ver>` options, one bit per [`TlsVersion`].
    no: u8,
}

impl TlsVersions {
    pub fn disable(&mut self, v: TlsVersion) {
        self.no |= v.bit();
    }

    pub fn is_disabled(&self, v: TlsVersion) -> bool {
        self.no & v.bit() != 0
    }

    /// Whether any of min, max, force or `no-*` was given.
    pub fn is_set(&self) -> bool {
        self.min.is_some() || self.max.is_some() || self.force.is_some() || self.no != 0
    }

    /// Applies one version option (`no-tlsv10`, `force-tlsv12`, `ssl-min-ver`,
    /// `ssl-max-ver`); `false` when `word` is none of them. `Err` is HAProxy's message
    /// for a bad version name.
    pub fn apply(&mut self, word: &str, value: &str) -> Result<bool, String> {
        if let Some(v) = word.strip_prefix("no-").and_then(version_of_suffix) {
            self.disable(v);
        } else if let Some(v) = word.strip_prefix("force-").and_then(version_of_suffix) {
            self.force = Some(v);
        } else if word == "ssl-min-ver" || word == "ssl-max-ver" {
            if value.is_empty() {
                return Err(format!("'{word}' : missing the ssl/tls version"));
            }
            let v = TlsVersion::parse(value).ok_or_else(|| format!("'{value}' : unknown ssl/tls version"))?;
            if word == "ssl-min-ver" {
                self.min = Some(v);
            } else {
                self.max = Some(v);
            }
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    /// The server's own settings when it has any, else the global defaults (HAProxy
    /// takes the global `ssl-default-server-options` methods only for a server that
    /// set none).
    pub fn or(self, global: TlsVersions) -> TlsVersions {
        if self.is_set() {
            self
        } else {
            global
        }
    }
}

fn version_of_suffix(s: &str) -> Option<TlsVersion> {
    TlsVersion::ALL.into_iter().find(|v| v.option_suffix() == s)
}

/// TLS settings of one `server` line (after `default-server` inheritance).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerTls {
    /// `ssl` / `no-ssl`: traffic to the server is TLS.
    pub ssl: bool,
    /// `no-ssl` was the last word about it (HAProxy's `use_ssl` -1, `srv_use_ssl` in
    /// `show servers state`).
    pub no_ssl: bool,
    /// `ssl` was given here or inherited from `default-server` (even if `no-ssl`
    /// follows): the server has TLS settings, and `set server ... ssl on` may use them.
    pub ssl_ctx: bool,
    /// `verify required` (true) / `verify none` (false); `None`: the global
    /// `ssl-server-verify` (required by default).
    pub verify: Option<bool>,
    /// `no-verifyhost` is `Some("")`; `verifyhost <name>`: the name the certificate must carry.
    pub verifyhost: Option<String>,
    pub ca_file: Option<String>,
    pub crl_file: Option<String>,
    /// `crt`: the client certificate (chain and key) presented to the server.
    pub crt: Option<String>,
    /// `sni <expr>`: evaluated per connection (on the stream that connects).
    pub sni: Option<ExprSrc>,
    /// `alpn`: protocols offered, in order.
    pub alpn: Option<Vec<String>>,
    pub versions: TlsVersions,
    /// `ciphers` (TLSv1.2 and below, OpenSSL spelling).
    pub ciphers: Option<String>,
    /// `ciphersuites` (TLSv1.3, OpenSSL spelling).
    pub ciphersuites: Option<String>,
    /// `ssl-reuse` (default) / `no-ssl-reuse`: TLS session resumption.
    pub reuse: bool,
    /// `tls-tickets` (default) / `no-tls-tickets`.
    pub tickets: bool,
    /// `check-ssl` / `no-check-ssl`: health checks use TLS even without `ssl`.
    pub check_ssl: bool,
    /// `check-sni <name>`.
    pub check_sni: Option<String>,
    /// `check-alpn <protos>`.
    pub check_alpn: Option<Vec<String>>,
}

impl Default for ServerTls {
    fn default() -> Self {
        ServerTls {
            ssl: false,
            no_ssl: false,
            ssl_ctx: false,
            verify: None,
            verifyhost: None,
            ca_file: None,
            crl_file: None,
            crt: None,
            sni: None,
            alpn: None,
            versions: TlsVersions::default(),
            ciphers: None,
            ciphersuites: None,
            reuse: true,
            tickets: true,
            check_ssl: false,
            check_sni: None,
            check_alpn: None,
        }
    }
}

impl ServerTls {
    /// Whether health checks of this server speak TLS (`check-ssl`, or `ssl` on the
    /// server with checks on its own address and port).
    pub fn checks_use_tls(&self) -> bool {
        self.ssl || self.check_ssl
    }
}

/// The `ssl-default-server-*` and `ssl-server-verify` globals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SslServerDefaults {
    pub ciphers: Option<String>,
    pub ciphersuites: Option<String>,
    /// `ssl-default-server-options`: versions.
    pub versions: TlsVersions,
    /// `ssl-default-server-options no-tls-tickets`.
    pub no_tls_tickets: bool,
    /// `ssl-server-verify none`: servers without `verify` are not verified.
    pub verify_none: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_options() {
        let mut v = TlsVersions::default();
        assert!(!v.is_set());
        assert_eq!(v.apply("no-tlsv10", ""), Ok(true));
        assert_eq!(v.apply("force-tlsv12", ""), Ok(true));
        assert_eq!(v.apply("ssl-min-ver", "TLSv1.2"), Ok(true));
        assert_eq!(v.apply("weight", "1"), Ok(false));
        assert_eq!(v.apply("no-tlsv99", ""), Ok(false));
        assert!(v.is_disabled(TlsVersion::TlsV10) && !v.is_disabled(TlsVersion::TlsV11));
        assert_eq!((v.min, v.force), (Some(TlsVersion::TlsV12), Some(TlsVersion::TlsV12)));
        assert_eq!(v.apply("ssl-max-ver", "TLSv9"), Err("'TLSv9' : unknown ssl/tls version".into()));
        assert_eq!(v.apply("ssl-max-ver", ""), Err("'ssl-max-ver' : missing the ssl/tls version".into()));
        let global = TlsVersions { max: Some(TlsVersion::TlsV12), ..Default::default() };
        assert_eq!(TlsVersions::default().or(global), global);
        assert_eq!(v.or(global), v);
    }
}
