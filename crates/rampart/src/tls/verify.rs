//! Client certificate verification of a `bind ... verify optional|required` line:
//! webpki's verifier (built without CRLs) first, then `tls::chain` for what webpki
//! cannot judge (revocation by v1 or v2 CRLs of the `crl-file`, X.509 v1
//! certificates) and for OpenSSL's error codes, so that `crt-ignore-err` and
//! `ca-ignore-err` can let listed errors through and the `ssl_c_verify`, `ssl_c_err`,
//! `ssl_c_ca_err` fetches report them.
//! HAProxy counterpart: `ssl_sock_bind_verifycbk()` (ssl_sock.c).
//!
//! Not here: the server side (`tls::client` wraps its own verifier with
//! [`revocation_errors`]).

use std::cell::Cell;
use std::sync::Arc;

use rampart_cfg::model::IgnoreErr;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};
use rustls_pki_types::{CertificateDer, UnixTime};

use super::chain::{self, code, CaStore, ChainError, Purpose, VerifyOutcome};
use super::crl::CrlSet;

/// The client certificate verifier of one bind.
#[derive(Debug)]
pub struct ClientVerify {
    /// webpki's verifier over the CA files, without CRLs.
    pub(super) inner: Arc<dyn ClientCertVerifier>,
    /// The trusted CAs (`ca-file`, `ca-verify-file`), DER.
    pub(super) cas: CaStore,
    /// The CRLs of `crl-file`.
    pub(super) crls: Option<CrlSet>,
    /// `crt-ignore-err`: errors on the client's own certificate let through.
    pub(super) crt_ignore: Option<IgnoreErr>,
    /// `ca-ignore-err`: errors on the CAs of its chain let through.
    pub(super) ca_ignore: Option<IgnoreErr>,
    /// The handshake signature algorithms (for certificates webpki cannot read).
    pub(super) algs: WebPkiSupportedAlgorithms,
}

thread_local! {
    /// Set when the last client certificate refused on this thread was refused for an
    /// error on a CA of its chain (depth > 0), for the log's words ([`take_ca_refusal`]).
    static CA_REFUSAL: Cell<bool> = const { Cell::new(false) };
}

/// Whether the handshake that just failed on this thread refused its client for an
/// error on a CA (HAProxy logs `SSL client CA chain cannot be verified`); clears it.
/// Read right after `process_new_packets`, within which the verifier runs: no other
/// handshake can run on the thread in between.
pub fn take_ca_refusal() -> bool {
    CA_REFUSAL.with(|r| r.replace(false))
}

/// Whether `list` names OpenSSL's error `code`.
fn ignores(list: Option<&IgnoreErr>, code: i32) -> bool {
    match list {
        None => false,
        Some(IgnoreErr::All) => true,
        Some(IgnoreErr::Ids(ids)) => u8::try_from(code).is_ok_and(|c| ids.contains(&c)),
    }
}

/// Whether OpenSSL reports `code` while checking revocation.
fn is_revocation(code: i32) -> bool {
    matches!(
        code,
        code::UNABLE_TO_GET_CRL
            | code::UNABLE_TO_GET_CRL_ISSUER
            | code::CRL_SIGNATURE_FAILURE
            | code::CRL_NOT_YET_VALID
            | code::CRL_HAS_EXPIRED
            | code::CERT_REVOKED
    )
}

fn unix(now: UnixTime) -> i64 {
    i64::try_from(now.as_secs()).unwrap_or(i64::MAX)
}

/// The peer's chain, leaf first.
fn chain_of<'a>(end_entity: &CertificateDer<'a>, intermediates: &[CertificateDer<'a>]) -> Vec<CertificateDer<'a>> {
    std::iter::once(end_entity.clone()).chain(intermediates.iter().cloned()).collect()
}

/// The revocation errors of a chain webpki accepted (`crl-file` checked against the
/// chain built from `cas`).
pub fn revocation_errors(
    peer: &[CertificateDer<'_>],
    cas: &CaStore,
    crls: &CrlSet,
    purpose: Purpose,
    now: UnixTime,
) -> Vec<ChainError> {
    chain::analyse(peer, cas, Some(crls), purpose, unix(now))
        .map(|e| e.into_iter().filter(|(_, c)| is_revocation(*c)).collect())
        .unwrap_or_else(|| vec![(0, code::UNSPECIFIED)])
}

impl ClientVerify {
    /// The errors of the client's chain, in OpenSSL's order (empty: verified).
    pub fn errors(&self, peer: &[CertificateDer<'_>], now: UnixTime) -> Vec<ChainError> {
        let Some((end_entity, intermediates)) = peer.split_first() else { return Vec::new() };
        let webpki = self.inner.verify_client_cert(end_entity, intermediates, now);
        match (webpki, &self.crls) {
            (Ok(_), None) => Vec::new(),
            (Ok(_), Some(crls)) => revocation_errors(peer, &self.cas, crls, Purpose::Client, now),
            (Err(e), crls) => match chain::analyse(peer, &self.cas, crls.as_ref(), Purpose::Client, unix(now)) {
                Some(errs) if !errs.is_empty() => errs,
                // COMPAT: webpki refuses X.509 v1 certificates, which OpenSSL verifies;
                // their chain is judged by `tls::chain` alone
                Some(_) if chain::has_pre_v3(peer) => Vec::new(),
                _ => vec![(0, chain::code_of(&e))],
            },
        }
    }

    /// The first error neither `crt-ignore-err` (depth 0) nor `ca-ignore-err` lets
    /// through.
    fn refusal(&self, errs: &[ChainError]) -> Option<ChainError> {
        errs.iter()
            .find(|(depth, c)| {
                !ignores(if *depth == 0 { self.crt_ignore.as_ref() } else { self.ca_ignore.as_ref() }, *c)
            })
            .copied()
    }

    /// What `ssl_c_verify` and the other error fetches report for a connection whose
    /// handshake completed with the certificates `peer`: errors can only have been
    /// let through by `crt-ignore-err`/`ca-ignore-err`, so without them there is
    /// nothing to compute again.
    pub fn outcome(&self, peer: &[CertificateDer<'_>]) -> VerifyOutcome {
        if peer.is_empty() || (self.crt_ignore.is_none() && self.ca_ignore.is_none()) {
            return VerifyOutcome::default();
        }
        VerifyOutcome::of(&self.errors(peer, UnixTime::now()))
    }

    /// Checks a handshake signature with webpki, else (a v1 certificate) with the
    /// certificate's key read by x509-parser.
    fn signature(
        &self,
        webpki: Result<HandshakeSignatureValid, rustls::Error>,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
        tls13: bool,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        chain::signature_or_pre_v3(webpki, message, cert, dss, &self.algs, tls13)
    }
}

impl ClientCertVerifier for ClientVerify {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let errs = self.errors(&chain_of(end_entity, intermediates), now);
        let refusal = self.refusal(&errs);
        CA_REFUSAL.with(|r| r.set(refusal.is_some_and(|(depth, _)| depth > 0)));
        match refusal {
            Some((_, c)) => Err(chain::rustls_error(c)),
            None => Ok(ClientCertVerified::assertion()),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.signature(self.inner.verify_tls12_signature(message, cert, dss), message, cert, dss, false)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.signature(self.inner.verify_tls13_signature(message, cert, dss), message, cert, dss, true)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
