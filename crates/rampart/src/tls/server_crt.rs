//! The certificate a server line presents (`server ... crt <file>`), replaceable at
//! run time by `set ssl cert` + `commit ssl cert` as a bind's certificate is: new
//! connections to the server present the committed one, and the server's TLS sessions
//! are forgotten so that none resumes with the old identity.
//! HAProxy counterpart: the server side of `ckch_inst` (ssl_ckch.c,
//! `ckch_inst_new_load_srv_store()`), which also resets the server's session cache.
//!
//! Not here: the rest of the server's TLS configuration (`tls::client`), the CLI
//! commands (`tls::certs`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use rustls::client::{ClientSessionMemoryCache, ClientSessionStore, ResolvesClientCert};
use rustls::sign::CertifiedKey;
use rustls::{NamedGroup, SignatureScheme};
use rustls_pki_types::ServerName;

/// A server's `crt`, shared by its traffic and check configurations.
#[derive(Debug)]
pub struct ServerCrt {
    /// The file as the configuration names it (`show ssl cert` lists it).
    pub path: String,
    key: ArcSwap<CertifiedKey>,
    /// Incremented by each replacement: a connection opened before presented an older
    /// certificate and is not reused (see [`ServerCrt::generation`]).
    generation: AtomicU64,
    /// The server's TLS sessions, forgotten when the certificate changes.
    pub(super) sessions: Arc<Sessions>,
}

impl ServerCrt {
    pub fn new(path: String, key: Arc<CertifiedKey>, cache: usize) -> Self {
        Self::with_sessions(path, key, Arc::new(Sessions::new(cache)))
    }

    /// With the session cache the server's other TLS settings share (its CA and CRL
    /// files empty it too).
    pub fn with_sessions(path: String, key: Arc<CertifiedKey>, sessions: Arc<Sessions>) -> Self {
        ServerCrt { path, key: ArcSwap::new(key), generation: AtomicU64::new(0), sessions }
    }

    /// Which certificate is presented now: a connection remembers it when it opens,
    /// and is reused only while it is still the current one (as HAProxy opens a new
    /// connection, with the new certificate, for the next client after a commit).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The certificate presented now.
    pub fn current(&self) -> Arc<CertifiedKey> {
        self.key.load_full()
    }

    /// Presents `key` from the next connection on, without resuming older sessions.
    pub fn replace(&self, key: Arc<CertifiedKey>) {
        self.key.store(key);
        self.sessions.clear();
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

/// HAProxy sends its certificate whatever CAs the server names.
impl ResolvesClientCert for ServerCrt {
    fn resolve(&self, _: &[&[u8]], _: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }

    fn has_certs(&self) -> bool {
        true
    }
}

/// rustls' in-memory session cache, replaced whole to forget every session.
// PERF: one atomic load per session lookup, on new server connections only.
#[derive(Debug)]
pub struct Sessions {
    cache: ArcSwap<ClientSessionMemoryCache>,
    size: usize,
}

impl Sessions {
    pub fn new(size: usize) -> Self {
        Sessions { cache: ArcSwap::from_pointee(ClientSessionMemoryCache::new(size)), size }
    }

    /// Forgets every session.
    pub fn clear(&self) {
        self.cache.store(Arc::new(ClientSessionMemoryCache::new(self.size)));
    }
}

impl ClientSessionStore for Sessions {
    fn set_kx_hint(&self, server_name: ServerName<'static>, group: NamedGroup) {
        self.cache.load().set_kx_hint(server_name, group);
    }

    fn kx_hint(&self, server_name: &ServerName<'_>) -> Option<NamedGroup> {
        self.cache.load().kx_hint(server_name)
    }

    fn set_tls12_session(&self, server_name: ServerName<'static>, value: rustls::client::Tls12ClientSessionValue) {
        self.cache.load().set_tls12_session(server_name, value);
    }

    fn tls12_session(&self, server_name: &ServerName<'_>) -> Option<rustls::client::Tls12ClientSessionValue> {
        self.cache.load().tls12_session(server_name)
    }

    fn remove_tls12_session(&self, server_name: &ServerName<'static>) {
        self.cache.load().remove_tls12_session(server_name);
    }

    fn insert_tls13_ticket(&self, server_name: ServerName<'static>, value: rustls::client::Tls13ClientSessionValue) {
        self.cache.load().insert_tls13_ticket(server_name, value);
    }

    fn take_tls13_ticket(&self, server_name: &ServerName<'static>) -> Option<rustls::client::Tls13ClientSessionValue> {
        self.cache.load().take_tls13_ticket(server_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(cn: &str) -> Arc<CertifiedKey> {
        let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let c = rcgen::CertificateParams::new(vec![cn.to_owned()]).unwrap().self_signed(&kp).unwrap();
        let der = rustls_pki_types::PrivateKeyDer::try_from(kp.serialize_der()).unwrap();
        let signer = rustls::crypto::aws_lc_rs::sign::any_supported_type(&der).unwrap();
        Arc::new(CertifiedKey::new(vec![c.der().clone()], signer))
    }

    #[test]
    fn replace_presents_the_new_certificate_and_forgets_sessions() {
        let (old, new) = (key("old.test"), key("new.test"));
        let crt = ServerCrt::new("c.pem".into(), old.clone(), 4);
        let resolved = crt.resolve(&[], &[]).expect("always a certificate");
        assert!(Arc::ptr_eq(&resolved, &old) && crt.has_certs());
        let name = ServerName::try_from("srv.test").unwrap();
        crt.sessions.set_kx_hint(name.clone(), NamedGroup::X25519);
        assert_eq!(crt.sessions.kx_hint(&name), Some(NamedGroup::X25519));
        crt.replace(new.clone());
        assert!(Arc::ptr_eq(&crt.resolve(&[], &[]).unwrap(), &new));
        assert_eq!(crt.generation(), 1);
        assert_eq!(crt.sessions.kx_hint(&name), None, "the cache was replaced");
    }
}
