//! Certificate verifiers built from CA and CRL contents (DER), the one place where a
//! bind's client verifier and a server's chain check are made: at startup from the
//! `ca-file` / `ca-verify-file` / `crl-file` files, and again when `commit ssl ca-file`
//! or `commit ssl crl-file` changes one of them ([`super::castore`]). A bind swaps its
//! whole rustls configuration ([`super::bind::BindTls::set_verifier`]); a server swaps
//! the chain check inside its [`SwapChain`]. Handshakes already under way keep the
//! verifier they started with.
//! HAProxy counterpart: `ssl_set_verify_locations_file()`, `ssl_sock_load_ca()` and
//! the `X509_STORE` swap of `commit ssl ca-file` (ssl_ckch.c).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use rampart_cfg::model::IgnoreErr;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::server::WebPkiClientVerifier;
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::{CertificateDer, CertificateRevocationListDer, ServerName, UnixTime};

use super::chain::{self, CaStore, Purpose};
use super::crl::CrlSet;
use super::server_crt::Sessions;
use super::verify::{revocation_errors, ClientVerify};

/// A CA certificate, DER.
pub type CaDer = CertificateDer<'static>;
/// A CRL, DER.
pub type CrlDer = CertificateRevocationListDer<'static>;

/// The CA store names a bind verifies client certificates with (paths as
/// `show ssl ca-file` lists them), and how strictly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCaFiles {
    /// `ca-file`: trusted, and named to the client in the certificate request.
    pub ca_file: Option<String>,
    /// `ca-verify-file`: trusted, not named.
    pub ca_verify_file: Option<String>,
    /// `crl-file`.
    pub crl_file: Option<String>,
    /// `verify optional`: a client without a certificate is let in.
    pub optional: bool,
    /// `crt-ignore-err`, `ca-ignore-err`.
    pub crt_ignore: Option<IgnoreErr>,
    pub ca_ignore: Option<IgnoreErr>,
}

impl ClientCaFiles {
    /// Whether the verifier reads store entry `path`.
    pub fn uses(&self, path: &str) -> bool {
        [&self.ca_file, &self.ca_verify_file, &self.crl_file].into_iter().any(|f| f.as_deref() == Some(path))
    }
}

/// Why a verifier cannot be built: its CRLs, or its CAs (the reason).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    Crl(String),
    Ca(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Crl(e) | BuildError::Ca(e) => f.write_str(e),
        }
    }
}

/// A roots store of `cas`; `Err` is rustls' reason for the first one refused.
pub fn roots(cas: &[CaDer]) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    for c in cas {
        roots.add(c.clone()).map_err(|e| e.to_string())?;
    }
    Ok(roots)
}

/// The CRLs of a `crl-file` checked against `cas`; `None` without a `crl-file`.
fn crl_set(crls: Option<&[CrlDer]>, cas: &[CaDer]) -> Result<Option<CrlSet>, BuildError> {
    crls.map(|c| CrlSet::load(c.to_vec(), cas)).transpose().map_err(BuildError::Crl)
}

/// The client certificate verifier of a bind: `hinted` CAs (`ca-file`, named in the
/// certificate request) and `verify_only` ones (`ca-verify-file`) both trusted, the
/// `crls` (`None`: no `crl-file`) checked, `files`' policy (`verify optional`,
/// `crt-ignore-err`, `ca-ignore-err`) applied.
pub fn client_verifier(
    hinted: &[CaDer],
    verify_only: &[CaDer],
    crls: Option<&[CrlDer]>,
    files: &ClientCaFiles,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<ClientVerify>, BuildError> {
    // webpki takes X.509 v1 trust anchors: a CA it refuses is unusable
    let mut roots = RootCertStore::empty();
    for c in hinted {
        roots.add(c.clone()).map_err(|e| BuildError::Ca(e.to_string()))?;
    }
    let hints = roots.subjects();
    for c in verify_only {
        roots.add(c.clone()).map_err(|e| BuildError::Ca(e.to_string()))?;
    }
    let cas: Vec<CaDer> = hinted.iter().chain(verify_only).cloned().collect();
    let crls = crl_set(crls, &cas)?;
    let mut b = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .clear_root_hint_subjects()
        .add_root_hint_subjects(hints);
    if files.optional {
        b = b.allow_unauthenticated();
    }
    let inner = b.build().map_err(|e| BuildError::Ca(e.to_string()))?;
    Ok(Arc::new(ClientVerify {
        inner,
        cas: CaStore::new(&cas),
        crls,
        crt_ignore: files.crt_ignore.clone(),
        ca_ignore: files.ca_ignore.clone(),
        algs: provider.signature_verification_algorithms,
    }))
}

/// The chain check of a server line (`ca-file`, `crl-file`): webpki's, then the
/// revocation by the CRLs (v1 or v2) through [`revocation_errors`]; a chain with an
/// X.509 v1 certificate (which webpki refuses) is judged by [`chain::analyse`].
#[derive(Debug)]
pub struct ServerChain {
    inner: Arc<WebPkiServerVerifier>,
    /// The trusted CAs.
    cas: CaStore,
    /// The CRLs of `crl-file`.
    crls: Option<CrlSet>,
    /// The handshake signature algorithms (for certificates webpki cannot read).
    algs: WebPkiSupportedAlgorithms,
}

impl ServerChain {
    /// Checks the chain and the `name`; `name_optional`: a name mismatch is no error
    /// (HAProxy checks no name without SNI or `verifyhost`).
    pub fn verify(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
        name_optional: bool,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let peer: Vec<CertificateDer<'_>> =
            std::iter::once(end_entity.clone()).chain(intermediates.iter().cloned()).collect();
        let verified = match self.inner.verify_server_cert(end_entity, intermediates, name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if name_optional => Ok(ServerCertVerified::assertion()),
            Err(_) if chain::has_pre_v3(&peer) => return self.verify_pre_v3(&peer, name, now, name_optional),
            other => other,
        }?;
        let Some(crls) = &self.crls else { return Ok(verified) };
        match revocation_errors(&peer, &self.cas, crls, Purpose::Server, now).first() {
            Some((_, c)) => Err(chain::rustls_error(*c)),
            None => Ok(verified),
        }
    }

    /// A chain webpki cannot read: OpenSSL's checks, then the name against the
    /// subject's common name (a v1 certificate has no alternative names).
    fn verify_pre_v3(
        &self,
        peer: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        now: UnixTime,
        name_optional: bool,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let now = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
        let errs = chain::analyse(peer, &self.cas, self.crls.as_ref(), Purpose::Server, now)
            .ok_or(CertificateError::BadEncoding)?;
        if let Some((_, c)) = errs.first() {
            return Err(chain::rustls_error(*c));
        }
        if name_optional || common_name_is(&peer[0], name) {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(CertificateError::NotValidForName.into())
        }
    }

    /// Checks a handshake signature with webpki, else (a v1 certificate) with the
    /// certificate's key.
    pub fn signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
        tls13: bool,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let webpki = if tls13 {
            self.inner.verify_tls13_signature(message, cert, dss)
        } else {
            self.inner.verify_tls12_signature(message, cert, dss)
        };
        chain::signature_or_pre_v3(webpki, message, cert, dss, &self.algs, tls13)
    }

    /// The signature schemes webpki verifies.
    pub fn schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// Whether the common name of certificate `der` is the DNS `name`.
fn common_name_is(der: &CertificateDer<'_>, name: &ServerName<'_>) -> bool {
    let ServerName::DnsName(dns) = name else { return false };
    let Ok((_, c)) = x509_parser::parse_x509_certificate(der) else { return false };
    let cn = c.subject().iter_common_name().next().and_then(|cn| cn.as_str().ok());
    cn.is_some_and(|cn| cn.eq_ignore_ascii_case(dns.as_ref()))
}

/// The chain check of a server line from its CA file's certificates and its CRL
/// file's CRLs (`None`: no `crl-file`).
pub fn server_chain(
    cas: &[CaDer],
    crls: Option<&[CrlDer]>,
    provider: &Arc<CryptoProvider>,
) -> Result<ServerChain, BuildError> {
    // COMPAT: a CA webpki cannot read (X.509 v1) still verifies through `tls::chain`
    let mut roots = RootCertStore::empty();
    for c in cas {
        let _ = roots.add(c.clone());
    }
    let crls = crl_set(crls, cas)?;
    let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| BuildError::Ca(e.to_string()))?;
    Ok(ServerChain { inner, cas: CaStore::new(cas), crls, algs: provider.signature_verification_algorithms })
}

/// A server's chain check that `commit ssl ca-file` / `crl-file` can replace: every
/// connection reads the current one (no lock). The TLS sessions kept for resumption
/// go with it: a resumed session skips the check, so a new check forgets them.
#[derive(Debug)]
pub struct SwapChain {
    /// The CA store names it was built from.
    pub ca_file: String,
    pub crl_file: Option<String>,
    pub provider: Arc<CryptoProvider>,
    current: ArcSwap<ServerChain>,
    sessions: Arc<Sessions>,
    /// Counts the replacements: an idle connection verified under an older check is
    /// not reused ([`SwapChain::epoch`]).
    epoch: AtomicU64,
}

impl SwapChain {
    /// `sessions`: the server's session cache, emptied by [`SwapChain::set`].
    pub fn new(
        ca_file: String,
        crl_file: Option<String>,
        provider: Arc<CryptoProvider>,
        c: ServerChain,
        sessions: Arc<Sessions>,
    ) -> SwapChain {
        SwapChain { ca_file, crl_file, provider, current: ArcSwap::from_pointee(c), sessions, epoch: AtomicU64::new(0) }
    }

    /// Whether the check reads store entry `path`.
    pub fn uses(&self, path: &str) -> bool {
        self.ca_file == path || self.crl_file.as_deref() == Some(path)
    }

    /// The check new connections use.
    pub fn current(&self) -> arc_swap::Guard<Arc<ServerChain>> {
        self.current.load()
    }

    /// New connections check with `c` from now on; none resumes a session, nor reuses
    /// an idle connection, the old check accepted.
    pub fn set(&self, c: ServerChain) {
        self.current.store(Arc::new(c));
        self.sessions.clear();
        self.epoch.fetch_add(1, Ordering::Relaxed);
    }

    /// How many times the check was replaced: a connection made under another count
    /// was verified by an older check.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Relaxed)
    }
}
