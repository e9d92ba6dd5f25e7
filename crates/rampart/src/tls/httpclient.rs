//! The TLS side of Lua's `core.httpclient()` for `https` URLs: HAProxy 2.6's
//! `<HTTPSCLIENT>` server, `verify required` against `httpclient.ssl.ca-file`
//! (default `@system-ca`) unless `httpclient.ssl.verify none`, the URL's host as the
//! SNI and as the name the certificate must carry.
//! HAProxy counterpart: `httpclient_precheck()` and `httpclient_parse_global_*()`
//! (src/http_client.c).

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

use super::verifier::{server_chain, ServerChain};

/// The file `@system-ca` reads: `SSL_CERT_FILE` when set, else the system bundle
/// (COMPAT: HAProxy reads OpenSSL's default certificate directory; Debian's bundle
/// holds the same certificates).
fn system_ca() -> String {
    std::env::var("SSL_CERT_FILE").unwrap_or_else(|_| "/etc/ssl/certs/ca-certificates.crt".to_owned())
}

/// The client configuration of the HTTP client's TLS connections (`verify`: HAProxy's
/// default `required`); `Err`: the CA file does not load, HAProxy's message.
pub fn config(verify: bool, ca_file: Option<&str>) -> Result<Arc<ClientConfig>, String> {
    if !verify {
        return super::client::verify_none_config().map_err(|e| e.to_string());
    }
    let ca = ca_file.unwrap_or("@system-ca");
    let path = if ca == "@system-ca" { system_ca() } else { ca.to_owned() };
    let fail = || format!("cannot initialize SSL verify with 'ca-file \"{ca}\"'.");
    let certs = super::pem::load_ca_file(Path::new(&path)).map_err(|_| fail())?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let chain = server_chain(&certs, None, &provider).map_err(|_| fail())?;
    let cfg = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Verify(chain)))
        .with_no_client_auth();
    Ok(Arc::new(cfg))
}

/// `verify required`: the chain against the CA file and the SNI (the URL's host) as
/// the certificate's name, as HAProxy checks a server without `verifyhost`.
#[derive(Debug)]
struct Verify(ServerChain);

impl ServerCertVerifier for Verify {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.0.verify(end_entity, intermediates, server_name, ocsp, now, false)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.signature(message, cert, dss, false)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.signature(message, cert, dss, true)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.schemes()
    }
}
