//! Certificate verifiers built from CA and CRL contents (DER), the one place where a
//! bind's client verifier and a server's chain verifier are made: at startup from the
//! `ca-file` / `ca-verify-file` / `crl-file` files, and again when `commit ssl ca-file`
//! or `commit ssl crl-file` changes one of them ([`super::castore`]). A bind swaps its
//! whole rustls configuration ([`super::bind::BindTls::set_verifier`]); a server swaps
//! the chain verifier inside its [`SwapVerifier`]. Handshakes already under way keep
//! the verifier they started with.
//! HAProxy counterpart: `ssl_set_verify_locations_file()`, `ssl_sock_load_ca()` and
//! the `X509_STORE` swap of `commit ssl ca-file` (ssl_ckch.c).

use std::sync::Arc;

use arc_swap::ArcSwap;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::server::danger::ClientCertVerifier;
use rustls::server::WebPkiClientVerifier;
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::{CertificateDer, CertificateRevocationListDer, ServerName, UnixTime};

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
}

impl ClientCaFiles {
    /// Whether the verifier reads store entry `path`.
    pub fn uses(&self, path: &str) -> bool {
        [&self.ca_file, &self.ca_verify_file, &self.crl_file].into_iter().any(|f| f.as_deref() == Some(path))
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

/// The client certificate verifier of a bind: `hinted` CAs (`ca-file`, named in the
/// certificate request) and `verify_only` ones (`ca-verify-file`) both trusted, the
/// `crls` checked. `Err` is rustls' reason.
pub fn client_verifier(
    hinted: &[CaDer],
    verify_only: &[CaDer],
    crls: &[CrlDer],
    optional: bool,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ClientCertVerifier>, String> {
    let all: Vec<CaDer> = hinted.iter().chain(verify_only).cloned().collect();
    let hints = roots(hinted)?.subjects();
    let mut b = WebPkiClientVerifier::builder_with_provider(Arc::new(roots(&all)?), provider.clone())
        .clear_root_hint_subjects()
        .add_root_hint_subjects(hints);
    if !crls.is_empty() {
        b = b.with_crls(crls.iter().cloned());
    }
    if optional {
        b = b.allow_unauthenticated();
    }
    b.build().map(|v| v as Arc<dyn ClientCertVerifier>).map_err(|e| e.to_string())
}

/// The chain verifier of a server (`ca-file`, `crl-file`); the name check is the
/// caller's. `Err` is rustls' reason.
pub fn server_verifier(
    cas: &[CaDer],
    crls: &[CrlDer],
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ServerCertVerifier>, String> {
    let mut b = WebPkiServerVerifier::builder_with_provider(Arc::new(roots(cas)?), provider.clone());
    if !crls.is_empty() {
        b = b.with_crls(crls.iter().cloned());
    }
    b.build().map(|v| v as Arc<dyn ServerCertVerifier>).map_err(|e| e.to_string())
}

/// A server's chain verifier that `commit ssl ca-file` / `crl-file` can replace:
/// every check reads the current one (no lock).
#[derive(Debug)]
pub struct SwapVerifier {
    /// The CA store names it was built from.
    pub ca_file: String,
    pub crl_file: Option<String>,
    pub provider: Arc<CryptoProvider>,
    current: ArcSwap<Arc<dyn ServerCertVerifier>>,
}

impl SwapVerifier {
    pub fn new(
        ca_file: String,
        crl_file: Option<String>,
        provider: Arc<CryptoProvider>,
        v: Arc<dyn ServerCertVerifier>,
    ) -> SwapVerifier {
        SwapVerifier { ca_file, crl_file, provider, current: ArcSwap::from_pointee(v) }
    }

    /// Whether the verifier reads store entry `path`.
    pub fn uses(&self, path: &str) -> bool {
        self.ca_file == path || self.crl_file.as_deref() == Some(path)
    }

    /// New connections verify with `v` from now on.
    pub fn set(&self, v: Arc<dyn ServerCertVerifier>) {
        self.current.store(Arc::new(v));
    }
}

impl ServerCertVerifier for SwapVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.current.load().verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.current.load().verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.current.load().verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.current.load().supported_verify_schemes()
    }
}
