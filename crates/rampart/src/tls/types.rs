//! What a TLS handshake negotiated, as the `ssl_fc*`, `ssl_c_*` and `ssl_bc*` fetches
//! read it: plain records kept apart from the TLS code so that the rules language can
//! read them from below it (`sample` sits below `tls`, which compiles `sni`
//! expressions). Filled by `TlsInfo::of` and the listener (`tls::stream`, `session`).

use rustls_pki_types::CertificateDer;

/// What a front-side handshake negotiated, kept with the connection for the
/// `ssl_fc*` and `ssl_c_*` fetches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsInfo {
    /// The SNI the client sent.
    pub sni: Option<Box<str>>,
    /// `TLSv1.2` or `TLSv1.3`.
    pub version: &'static str,
    /// The cipher suite as OpenSSL names it (`ssl_fc_cipher`).
    pub cipher: &'static str,
    /// The secret bits of the cipher (`ssl_fc_use_keysize`).
    pub bits: u32,
    /// The protocol ALPN chose.
    pub alpn: Option<Box<[u8]>>,
    /// Whether the session was resumed (ticket or cache).
    pub resumed: bool,
    /// The client's certificate chain, leaf first (empty without one).
    pub peer_certs: Vec<CertificateDer<'static>>,
    /// The certificate this side served (`ssl_f_*`); set by the listener.
    pub local_cert: Option<LocalCert>,
    /// The client certificate's verification errors (`ssl_c_verify`, `ssl_c_err`,
    /// `ssl_c_ca_err`); set by the listener.
    pub verify: VerifyOutcome,
}

/// The certificate and key a listener chose for a handshake, shared with its store
/// (no copy per handshake).
#[derive(Debug, Clone)]
pub struct LocalCert(pub std::sync::Arc<rustls::sign::CertifiedKey>);

impl LocalCert {
    /// The leaf certificate, DER.
    pub fn leaf(&self) -> Option<&[u8]> {
        self.0.cert.first().map(|c| c.as_ref())
    }
}

impl PartialEq for LocalCert {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for LocalCert {}

/// What a client certificate's verification reported, as the `ssl_c_*` error
/// fetches read it (all 0 without a certificate or without errors).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerifyOutcome {
    /// The last error (`ssl_c_verify`, OpenSSL's `SSL_get_verify_result()`).
    pub result: i32,
    /// The first error on the peer's own certificate (`ssl_c_err`).
    pub crt_err: i32,
    /// The first error on a CA of the chain (`ssl_c_ca_err`) and its depth
    /// (`ssl_c_ca_err_depth`).
    pub ca_err: i32,
    pub ca_err_depth: i32,
}

/// The count of TLS connections `maxsslconn` bounds (`tls::limit`).
#[derive(Debug, Default)]
pub struct SslCount {
    pub cur: std::sync::atomic::AtomicU32,
    pub cum: std::sync::atomic::AtomicU64,
}

/// One TLS connection counted in an [`SslCount`], until dropped.
#[derive(Debug)]
pub struct SslSlot(pub std::sync::Arc<SslCount>);

impl Drop for SslSlot {
    fn drop(&mut self) {
        self.0.cur.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}
