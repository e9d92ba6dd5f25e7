//! The TLS options in brackets on a crt-list line (`[alpn h2 verify optional ...]`):
//! parsed as HAProxy's `ssl_bind_kws` parse them, kept to build the line's own rustls
//! configuration and echoed by `show ssl crt-list` in HAProxy's order.
//! HAProxy counterpart: cfgparse-ssl.c (`ssl_bind_kws`), ssl_crtlist.c
//! (`dump_crtlist_sslconf()`).

use std::path::{Path, PathBuf};

use rampart_cfg::model::{BindSsl, TlsVersion, Verify};

use super::crtlist::Ctx;

/// The keywords a crt-list line accepts in brackets, and whether each takes a value.
const LINE_KEYWORDS: &[(&str, bool)] = &[
    ("allow-0rtt", false),
    ("alpn", true),
    ("ca-file", true),
    ("ca-verify-file", true),
    ("ciphers", true),
    ("ciphersuites", true),
    ("crl-file", true),
    ("curves", true),
    ("ecdhe", true),
    ("no-ca-names", false),
    ("npn", true),
    ("ssl-min-ver", true),
    ("ssl-max-ver", true),
    ("verify", true),
];

/// The options of one crt-list line (each `None`/`false` when not written).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineOptions {
    pub npn: Option<String>,
    pub alpn: Option<String>,
    pub verify: Option<Verify>,
    pub no_ca_names: bool,
    pub allow_0rtt: bool,
    /// `ca-base` applied, as HAProxy keeps (and echoes) it.
    pub ca_file: Option<PathBuf>,
    pub ca_verify_file: Option<PathBuf>,
    pub crl_file: Option<PathBuf>,
    pub ciphers: Option<String>,
    pub ciphersuites: Option<String>,
    pub curves: Option<String>,
    pub ecdhe: Option<String>,
    pub min_ver: Option<TlsVersion>,
    pub max_ver: Option<TlsVersion>,
}

fn version(v: &str) -> Result<TlsVersion, String> {
    TlsVersion::parse(v).ok_or_else(|| format!("'{v}' : unknown ssl/tls version"))
}

impl LineOptions {
    /// Whether `kw` is an option of a crt-list line (`Some(takes a value)`).
    pub fn takes_value(kw: &str) -> Option<bool> {
        LINE_KEYWORDS.iter().find(|(k, _)| *k == kw).map(|(_, v)| *v)
    }

    /// Sets option `kw` (one of [`LINE_KEYWORDS`]) to `value`; `Err` is HAProxy's
    /// message.
    pub fn set(&mut self, kw: &str, value: Option<&str>, ctx: &Ctx<'_>) -> Result<(), String> {
        let v = || value.unwrap_or("").to_owned();
        let file = |crl: bool| -> Result<PathBuf, String> {
            let p = match ctx.ca_base {
                Some(b) if !v().starts_with('/') => b.join(v()),
                _ => PathBuf::from(v()),
            };
            if (ctx.usable)(&p, crl) {
                Ok(p)
            } else {
                Err(format!("'{kw}' : unable to load {}", p.display()))
            }
        };
        match kw {
            "allow-0rtt" => self.allow_0rtt = true,
            "no-ca-names" => self.no_ca_names = true,
            "alpn" => self.alpn = Some(v()),
            "npn" => self.npn = Some(v()),
            "ca-file" => self.ca_file = Some(file(false)?),
            "ca-verify-file" => self.ca_verify_file = Some(file(false)?),
            "crl-file" => self.crl_file = Some(file(true)?),
            "ciphers" => self.ciphers = Some(v()),
            "ciphersuites" => self.ciphersuites = Some(v()),
            "curves" => self.curves = Some(v()),
            "ecdhe" => self.ecdhe = Some(v()),
            "ssl-min-ver" => self.min_ver = Some(version(&v())?),
            "ssl-max-ver" => self.max_ver = Some(version(&v())?),
            "verify" => {
                self.verify = Some(match v().as_str() {
                    "none" => Verify::None,
                    "optional" => Verify::Optional,
                    "required" => Verify::Required,
                    other => {
                        return Err(format!(
                            "'verify' : unknown verify method '{other}', only 'none', 'optional', and 'required' \
                             are supported"
                        ))
                    }
                })
            }
            _ => return Err(format!("unknown ssl keyword {kw}")),
        }
        Ok(())
    }

    /// The options as `show ssl crt-list` prints them between the brackets, in
    /// HAProxy's order (not the order written). `ca-verify-file` is not printed, as in
    /// HAProxy 2.6.
    ///
    /// COMPAT: HAProxy 2.6 ends the `npn` and `alpn` values with a NUL byte; rampart
    /// prints none.
    pub fn echo(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut val = |kw: &str, v: Option<&str>| {
            if let Some(v) = v {
                parts.push(format!("{kw} {v}"));
            }
        };
        val("npn", self.npn.as_deref());
        val("alpn", self.alpn.as_deref());
        val(
            "verify",
            self.verify.map(|v| match v {
                Verify::None => "none",
                Verify::Optional => "optional",
                Verify::Required => "required",
            }),
        );
        if self.no_ca_names {
            parts.push("no-ca-names".into());
        }
        if self.allow_0rtt {
            parts.push("allow-0rtt".into());
        }
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        for (kw, v) in [
            ("ca-file", path(&self.ca_file)),
            ("crl-file", path(&self.crl_file)),
            ("ciphers", self.ciphers.clone()),
            ("ciphersuites", self.ciphersuites.clone()),
            ("curves", self.curves.clone()),
            ("ecdhe", self.ecdhe.clone()),
            ("ssl-min-ver", self.min_ver.map(|v| v.name().to_owned())),
            ("ssl-max-ver", self.max_ver.map(|v| v.name().to_owned())),
        ] {
            if let Some(v) = v {
                parts.push(format!("{kw} {v}"));
            }
        }
        parts.join(" ")
    }

    /// The bind's TLS settings with this line's over them (HAProxy: the line's
    /// `ssl_bind_conf` wins over the bind's), and what rustls cannot do of them (each
    /// a warning text).
    pub fn merged(&self, bind: &BindSsl) -> (BindSsl, Vec<String>) {
        let mut ssl = bind.clone();
        let mut not_done = Vec::new();
        if let Some(v) = self.verify {
            ssl.verify = Some(v);
        }
        if let Some(a) = &self.alpn {
            ssl.alpn = Some(a.split(',').filter(|p| !p.is_empty()).map(str::to_string).collect());
        }
        let set_path = |dst: &mut Option<PathBuf>, src: &Option<PathBuf>| {
            if let Some(p) = src {
                *dst = Some(p.clone());
            }
        };
        set_path(&mut ssl.ca_file, &self.ca_file);
        set_path(&mut ssl.ca_verify_file, &self.ca_verify_file);
        set_path(&mut ssl.crl_file, &self.crl_file);
        for (dst, src) in [
            (&mut ssl.ciphers, &self.ciphers),
            (&mut ssl.ciphersuites, &self.ciphersuites),
            (&mut ssl.curves, self.curves.as_ref().map_or(&self.ecdhe, |_| &self.curves)),
        ] {
            if let Some(s) = src {
                *dst = Some(s.clone());
            }
        }
        match self.min_ver {
            Some(v) if v < TlsVersion::TlsV12 => not_done.push(format!(
                "'ssl-min-ver {}' (rustls speaks TLSv1.2 and TLSv1.3 only; TLSv1.2 is the minimum)",
                v.name()
            )),
            Some(v) => ssl.options.min_ver = Some(v),
            None => {}
        }
        if let Some(v) = self.max_ver {
            ssl.options.max_ver = Some(v);
        }
        if self.allow_0rtt {
            not_done.push("'allow-0rtt' (no TLS early data)".into());
        }
        if self.npn.is_some() {
            not_done.push("'npn' (rustls has no NPN)".into());
        }
        (ssl, not_done)
    }

    /// Whether any option needs a configuration of its own (other than the bind's).
    pub fn changes_config(&self) -> bool {
        *self != LineOptions::default()
    }

    /// The CA and CRL files the options name: `(path, is a CRL)`.
    pub fn files(&self) -> impl Iterator<Item = (&Path, bool)> {
        [(&self.ca_file, false), (&self.ca_verify_file, false), (&self.crl_file, true)]
            .into_iter()
            .filter_map(|(p, crl)| p.as_deref().map(|p| (p, crl)))
    }
}
